/*
 * daemon/events.c: the record's fields, the ring's wrap-around and its
 * oldest-first iteration, the log line, and followers, including those that
 * remove followers, add followers or add events while being notified.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "names.h"

#include "../../daemon/events.h"
#include "log.h"
#include "uuid.h"

#define GiB	(1ull << 30)

static const uint8_t uuid1[GF_UUID_LEN] = {
	0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
};

static int
setup(void **state)
{
	struct events *ev = test_malloc(sizeof(*ev));

	log_init("gpufracd", LOG_LVL_ERROR, 0);
	assert_int_equal(events_init(ev, 4), 0);
	*state = ev;
	return 0;
}

static int
teardown(void **state)
{
	events_free(*state);
	test_free(*state);
	return 0;
}

/* Add an event whose bytes number it; the rest is filler. */
static void
add_n(struct events *ev, uint64_t n)
{
	events_add(ev, 1000 + n, GF_EV_GRANT, 7, "g", uuid1, n, "n %llu",
	    (unsigned long long)n);
}

static void
test_fields(void **state)
{
	struct events *ev = *state;
	const struct gf_event *e;
	uint64_t cur = 0;
	char longname[100];

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_null(events_next(ev, &cur));
	events_add(ev, 1234, GF_EV_DENY, 42, "trainer", uuid1, 3 * GiB,
	    "device full,\n%s", "2.0GiB free");
	events_add(ev, 1235, GF_EV_KILL, 43, NULL, NULL, 0, NULL);
	events_add(ev, 1236, GF_EV_WAIT, 44, longname, uuid1, 1, "%s",
	    longname);
	assert_int_equal(events_count(ev), 3);

	e = events_next(ev, &cur);
	assert_non_null(e);
	assert_int_equal(e->time_ms, 1234);
	assert_int_equal(e->kind, GF_EV_DENY);
	assert_int_equal(e->pid, 42);
	assert_string_equal(e->group, "trainer");
	assert_memory_equal(e->uuid, uuid1, GF_UUID_LEN);
	assert_int_equal(e->bytes, 3 * GiB);
	assert_string_equal(e->reason, "device full, 2.0GiB free");

	e = events_next(ev, &cur);
	assert_int_equal(e->kind, GF_EV_KILL);
	assert_string_equal(e->group, "");
	assert_string_equal(e->reason, "");
	assert_true(uuid_is_zero(e->uuid));

	e = events_next(ev, &cur);
	assert_int_equal(strlen(e->group), GF_GROUP_LEN - 1);
	assert_int_equal(strlen(e->reason), GF_REASON_LEN - 1);
	assert_null(events_next(ev, &cur));
	assert_int_equal(cur, 3);
}

/* Capacity 4: after 10 events, 6..9 remain, oldest first. */
static void
test_wrap(void **state)
{
	struct events *ev = *state;
	const struct gf_event *e;
	uint64_t cur = 0, n;

	for (n = 0; n < 10; n++)
		add_n(ev, n);
	assert_int_equal(events_count(ev), 4);
	for (n = 6; n < 10; n++) {
		e = events_next(ev, &cur);
		assert_non_null(e);
		assert_int_equal(e->bytes, n);
		assert_int_equal(e->time_ms, 1000 + n);
	}
	assert_null(events_next(ev, &cur));

	/* A reader that fell behind skips what was dropped, repeats nothing. */
	cur = 0;
	assert_int_equal(events_next(ev, &cur)->bytes, 6);
	add_n(ev, 10);
	add_n(ev, 11);
	add_n(ev, 12);
	for (n = 9; n <= 12; n++)
		assert_int_equal(events_next(ev, &cur)->bytes, n);
	assert_null(events_next(ev, &cur));
	/* and one that is current sees just the new one */
	add_n(ev, 13);
	assert_int_equal(events_next(ev, &cur)->bytes, 13);
	assert_null(events_next(ev, &cur));
}

/* Exactly at capacity, and one past it. */
static void
test_wrap_edges(void **state)
{
	struct events *ev = *state;
	uint64_t cur = 0, n;

	for (n = 0; n < 4; n++)
		add_n(ev, n);
	assert_int_equal(events_count(ev), 4);
	for (n = 0; n < 4; n++)
		assert_int_equal(events_next(ev, &cur)->bytes, n);
	assert_null(events_next(ev, &cur));
	add_n(ev, 4);
	cur = 0;
	for (n = 1; n < 5; n++)
		assert_int_equal(events_next(ev, &cur)->bytes, n);
	assert_null(events_next(ev, &cur));
}

/* What the logger writes to stderr while fn runs, into buf. */
static void
capture(void (*fn)(struct events *), struct events *ev, char *buf,
    size_t size)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(tmp), STDERR_FILENO), STDERR_FILENO);
	fn(ev);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, size - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

static void
add_for_log(struct events *ev)
{
	events_add(ev, 1, GF_EV_GRANT, 123, "trainer", uuid1, GiB, NULL);
	events_add(ev, 2, GF_EV_TIMEOUT, 124, "", NULL, 1536, "waited %us",
	    30u);
	events_add(ev, 3, 99, 1, "x", NULL, 0, NULL);
}

static void
test_log_line(void **state)
{
	struct events *ev = *state;
	char buf[1024];

	/* A grant, every allocation's, only at debug level. */
	log_setlevel(LOG_LVL_DEBUG);
	capture(add_for_log, ev, buf, sizeof(buf));
	assert_string_equal(buf,
	    "gpufracd: grant pid 123 group trainer "
	    "GPU-12345678-9abc-def0-0123-456789abcdef 1.0GiB\n"
	    "gpufracd: timeout pid 124 group - - 1.5KiB: waited 30s\n"
	    "gpufracd: unknown pid 1 group x - 0B\n");
	log_setlevel(LOG_LVL_INFO);
	capture(add_for_log, ev, buf, sizeof(buf));
	log_setlevel(LOG_LVL_ERROR);
	assert_string_equal(buf,
	    "gpufracd: timeout pid 124 group - - 1.5KiB: waited 30s\n"
	    "gpufracd: unknown pid 1 group x - 0B\n");

	/* Below info level nothing is written, but the events are kept. */
	capture(add_for_log, ev, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(events_count(ev), 4);	/* the ring holds 4 */
}

static void
test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(name_event(GF_EV_GRANT), "grant");
	assert_string_equal(name_event(GF_EV_DENY), "deny");
	assert_string_equal(name_event(GF_EV_WAIT), "wait");
	assert_string_equal(name_event(GF_EV_WAKE), "wake");
	assert_string_equal(name_event(GF_EV_TIMEOUT), "timeout");
	assert_string_equal(name_event(GF_EV_PREEMPT), "preempt");
	assert_string_equal(name_event(GF_EV_KILL), "kill");
	assert_string_equal(name_event(0), "unknown");
	assert_string_equal(name_event(UINT32_MAX), "unknown");
}

static void
test_init(void **state)
{
	struct events ev;
	uint64_t t0, t1;

	(void)state;
	errno = 0;
	assert_int_equal(events_init(&ev, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(events_init(&ev, EVENTS_CAPACITY), 0);
	assert_int_equal(events_count(&ev), 0);
	events_free(&ev);
	t0 = events_wall_ms();
	t1 = events_wall_ms();
	assert_true(t0 > 1600000000000ull && t1 >= t0);	/* after 2020 */
}

/*
 * Followers. Each one records the bytes of what it saw; its action runs on
 * the event whose bytes equal `at`.
 */
enum { ACT_NONE, ACT_UNFOLLOW, ACT_FOLLOW, ACT_ADD };

struct follower {
	struct events	*ev;
	uint64_t	 seen[32];
	size_t		 nseen;
	uint64_t	 at;
	int		 act;
	struct follower	*target;	/* of ACT_UNFOLLOW and ACT_FOLLOW */
};

static void
on_event(void *arg, const struct gf_event *e)
{
	struct follower *f = arg;

	f->seen[f->nseen++] = e->bytes;
	if (e->bytes != f->at)
		return;
	switch (f->act) {
	case ACT_UNFOLLOW:
		assert_int_equal(events_unfollow(f->ev, on_event, f->target),
		    1);
		break;
	case ACT_FOLLOW:
		assert_int_equal(events_follow(f->ev, on_event, f->target),
		    0);
		break;
	case ACT_ADD:
		add_n(f->ev, 100 + e->bytes);
		break;
	}
}

static void
assert_seen(const struct follower *f, const uint64_t *want, size_t n)
{
	size_t i;

	assert_int_equal(f->nseen, n);
	for (i = 0; i < n; i++)
		assert_int_equal(f->seen[i], want[i]);
}

static void
test_follow(void **state)
{
	struct events *ev = *state;
	struct follower a = { .ev = ev }, b = { .ev = ev };
	static const uint64_t wa[] = { 1, 2, 3 }, wb[] = { 2 };

	add_n(ev, 0);		/* before anyone follows */
	assert_int_equal(events_follow(ev, on_event, &a), 0);
	add_n(ev, 1);
	assert_int_equal(events_follow(ev, on_event, &b), 0);
	add_n(ev, 2);
	assert_int_equal(events_unfollow(ev, on_event, &b), 1);
	assert_int_equal(events_unfollow(ev, on_event, &b), 0);
	/* (fn, arg) is the key: another fn with a's arg is someone else */
	assert_int_equal(events_unfollow(ev, NULL, &a), 0);
	add_n(ev, 3);
	assert_seen(&a, wa, 3);
	assert_seen(&b, wb, 1);
	assert_int_equal(events_unfollow(ev, on_event, &a), 1);
	assert_int_equal(ev->nfollowers, 0);
}

/*
 * Removal while notifying: a removes b (after it) on event 1, so b misses
 * event 1; c removes itself on event 1 and is not called again; d, added
 * by a on event 2, starts with event 3.
 */
static void
test_follow_changes(void **state)
{
	struct events *ev = *state;
	struct follower a = { .ev = ev }, b = { .ev = ev }, c = { .ev = ev },
	    d = { .ev = ev };
	static const uint64_t wa[] = { 0, 1, 2, 3 }, wb[] = { 0 },
	    wc[] = { 0, 1 }, wd[] = { 3 };

	a.act = ACT_UNFOLLOW;
	a.at = 1;
	a.target = &b;
	c.act = ACT_UNFOLLOW;
	c.at = 1;
	c.target = &c;
	assert_int_equal(events_follow(ev, on_event, &a), 0);
	assert_int_equal(events_follow(ev, on_event, &c), 0);
	assert_int_equal(events_follow(ev, on_event, &b), 0);
	add_n(ev, 0);
	add_n(ev, 1);
	assert_int_equal(ev->nfollowers, 1);	/* swept after the round */
	a.act = ACT_FOLLOW;
	a.at = 2;
	a.target = &d;
	add_n(ev, 2);
	add_n(ev, 3);
	assert_seen(&a, wa, 4);
	assert_seen(&b, wb, 1);
	assert_seen(&c, wc, 2);
	assert_seen(&d, wd, 1);
}

/*
 * A follower that adds an event: every follower sees the events in the
 * order added, the new one after the one being delivered.
 */
static void
test_follow_adds(void **state)
{
	struct events *ev = *state;
	struct follower a = { .ev = ev }, b = { .ev = ev };
	static const uint64_t want[] = { 1, 101, 2 };
	uint64_t cur = 0;

	a.act = ACT_ADD;
	a.at = 1;
	assert_int_equal(events_follow(ev, on_event, &a), 0);
	assert_int_equal(events_follow(ev, on_event, &b), 0);
	add_n(ev, 1);
	add_n(ev, 2);
	assert_seen(&a, want, 3);
	assert_seen(&b, want, 3);
	assert_int_equal(events_next(ev, &cur)->bytes, 1);
	assert_int_equal(events_next(ev, &cur)->bytes, 101);
	assert_int_equal(events_next(ev, &cur)->bytes, 2);
}

/* Many followers: the array grows during a notification. */
static void
test_follow_grow(void **state)
{
	struct events *ev = *state;
	struct follower f[20];
	size_t i;

	memset(f, 0, sizeof(f));
	for (i = 0; i < 20; i++) {
		f[i].ev = ev;
		f[i].at = UINT64_MAX;
	}
	/* 0..7 fill the first allocation; 0 adds 8 on event 5, growing it. */
	f[0].act = ACT_FOLLOW;
	f[0].at = 5;
	f[0].target = &f[8];
	for (i = 0; i < 8; i++)
		assert_int_equal(events_follow(ev, on_event, &f[i]), 0);
	assert_int_equal(ev->followcap, 8);
	add_n(ev, 5);
	assert_true(ev->followcap > 8);
	for (i = 9; i < 20; i++)
		assert_int_equal(events_follow(ev, on_event, &f[i]), 0);
	add_n(ev, 6);
	for (i = 0; i < 8; i++)
		assert_int_equal(f[i].nseen, 2);
	for (i = 8; i < 20; i++) {
		assert_int_equal(f[i].nseen, 1);
		assert_int_equal(f[i].seen[0], 6);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap_edges, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_log_line, setup,
		    teardown),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_init),
		cmocka_unit_test_setup_teardown(test_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follow_changes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_follow_adds, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_follow_grow, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
