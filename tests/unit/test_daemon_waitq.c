/*
 * daemon/waitq.c: rank order, serving under the priority barrier, removal
 * of an owner's waiters, deadlines and the rearm hook, callbacks that change
 * the queue under a walk, and that a failed allocation leaves the queue
 * untouched. The randomized check against a plain model is in
 * test_daemon_waitq_random.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/waitq.h"
#include "waitq_check.h"

#define GiB	(1ull << 30)

/*
 * Allocation failure on demand: this program replaces malloc and friends
 * (glibc allows it) and fails the allocation fail_after counts down to.
 * Not under a sanitizer, which owns malloc itself.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NO_FAIL_INJECT	1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(NO_FAIL_INJECT)
#define FAIL_INJECT	1
void	*__libc_malloc(size_t);
void	*__libc_calloc(size_t, size_t);
void	*__libc_realloc(void *, size_t);
void	 __libc_free(void *);

static int fail_after = -1;	/* -1: never; n: the n+1th allocation fails */

static int
alloc_fails(void)
{
	if (fail_after < 0)
		return 0;
	return fail_after-- == 0;
}

void *
malloc(size_t n)
{
	return alloc_fails() ? NULL : __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

void *
realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __libc_realloc(p, n);
}

void
free(void *p)
{
	__libc_free(p);
}
#endif

/* What the callbacks saw, and a device with `avail` bytes free. */
struct probe {
	struct waitq	*q;
	uint64_t	 avail;
	uint32_t	 granted[64];	/* seqs, in order */
	size_t		 ngranted;
	uint32_t	 expired[64];
	size_t		 nexpired;
	size_t		 nfits;
	uint64_t	 rearmed[64];
	size_t		 nrearmed;
	/* re-entry */
	uint32_t	 held;			/* this seq is WAITQ_HELD */
	void		*remove_owner;		/* on the first grant */
	struct waitq_waiter *cancel;		/* on the first grant */
	int		 add_on_grant;
};

static int
fits_avail(void *arg, const struct waitq_waiter *w)
{
	struct probe *p = arg;

	p->nfits++;
	if (p->held != 0 && w->seq == p->held)
		return WAITQ_HELD;
	return w->bytes <= p->avail ? WAITQ_FITS : WAITQ_WAITS;
}

static void
grant_take(void *arg, const struct waitq_waiter *w)
{
	struct probe *p = arg;

	assert_true(w->dead);
	assert_true(w->bytes <= p->avail);
	p->avail -= w->bytes;
	p->granted[p->ngranted++] = w->seq;
	if (p->remove_owner != NULL) {
		waitq_remove_owner(p->q, p->remove_owner);
		p->remove_owner = NULL;
	}
	if (p->cancel != NULL) {
		waitq_cancel(p->q, p->cancel);
		waitq_cancel(p->q, p->cancel);		/* twice: harmless */
		p->cancel = NULL;
	}
	if (p->add_on_grant) {
		p->add_on_grant = 0;
		assert_non_null(waitq_add(p->q, NULL, 900, w->dev, 1, 100,
		    0));
	}
}

static void
expire_note(void *arg, const struct waitq_waiter *w)
{
	struct probe *p = arg;

	assert_true(w->dead);
	p->expired[p->nexpired++] = w->seq;
}

static void
rearm_note(void *arg, uint64_t deadline)
{
	struct probe *p = arg;

	p->rearmed[p->nrearmed++] = deadline;
}

static void
add(struct waitq *q, void *owner, uint32_t seq, size_t dev, uint64_t bytes,
    int32_t prio, uint64_t deadline)
{
	struct waitq_waiter *w = waitq_add(q, owner, seq, dev, bytes, prio,
	    deadline);

	assert_non_null(w);
	assert_int_equal(w->seq, seq);
	assert_invariants(q);
}

/* The seqs of dev's waiters in rank order. */
static size_t
order(const struct waitq *q, size_t dev, uint32_t *seqs, size_t max)
{
	const struct waitq_waiter *w;
	size_t n = 0;

	for (w = waitq_next(q, dev, NULL); w != NULL && n < max;
	    w = waitq_next(q, dev, w))
		seqs[n++] = w->seq;
	return n;
}

static void
test_rank_order(void **state)
{
	static const uint32_t want[] = { 4, 7, 2, 5, 1, 3, 6 };
	struct waitq q;
	uint32_t got[16];
	char owner;

	(void)state;
	waitq_init(&q, NULL, NULL);
	assert_null(waitq_next(&q, 0, NULL));
	add(&q, &owner, 1, 0, GiB, 0, 0);
	add(&q, &owner, 2, 0, GiB, 5, 0);
	add(&q, &owner, 3, 0, GiB, -3, 0);
	add(&q, &owner, 4, 0, GiB, 10, 0);
	add(&q, &owner, 5, 0, GiB, 5, 0);
	add(&q, &owner, 6, 0, GiB, -3, 0);
	add(&q, &owner, 7, 0, GiB, 10, 0);
	add(&q, &owner, 8, 1, GiB, 99, 0);	/* another device */
	assert_int_equal(order(&q, 0, got, 16), 7);
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(order(&q, 1, got, 16), 1);
	assert_int_equal(got[0], 8);
	assert_int_equal(waitq_count(&q), 8);
	assert_int_equal(waitq_count_dev(&q, 0), 7);
	assert_int_equal(waitq_count_dev(&q, 5), 0);
	assert_null(waitq_next(&q, 5, NULL));
	waitq_free(&q);
}

/* Everything fits: all granted, in rank order; other devices untouched. */
static void
test_serve_all(void **state)
{
	static const uint32_t want[] = { 3, 1, 4, 2 };
	struct probe p = { .avail = 100 * GiB };
	struct waitq q;

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	add(&q, NULL, 1, 0, GiB, 1, 0);
	add(&q, NULL, 2, 0, GiB, 0, 0);
	add(&q, NULL, 3, 0, GiB, 2, 0);
	add(&q, NULL, 4, 0, GiB, 1, 0);
	add(&q, NULL, 5, 1, GiB, 1, 0);
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 4);
	assert_int_equal(p.ngranted, 4);
	assert_memory_equal(p.granted, want, sizeof(want));
	assert_int_equal(waitq_count(&q), 1);
	assert_int_equal(waitq_count_dev(&q, 1), 1);
	assert_int_equal(waitq_serve(&q, 7, fits_avail, grant_take, &p), 0);
	assert_invariants(&q);
	waitq_free(&q);
}

/*
 * The barrier: a 6Gi waiter of priority 5 does not fit 3Gi. A later 2Gi of
 * the same priority is served past it; nothing of priority 1 is, though it
 * would fit, and the walk stops there. Once 6Gi is free, the big one goes
 * first, then the low ones as far as memory lasts.
 */
static void
test_serve_barrier(void **state)
{
	struct probe p = { .avail = 3 * GiB };
	struct waitq q;
	uint32_t got[8];

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	add(&q, NULL, 1, 0, 6 * GiB, 5, 0);
	add(&q, NULL, 2, 0, 1 * GiB, 1, 0);
	add(&q, NULL, 3, 0, 2 * GiB, 5, 0);
	add(&q, NULL, 4, 0, 1 * GiB, 1, 0);
	add(&q, NULL, 5, 0, 1 * GiB, 9, 0);

	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 2);
	assert_int_equal(p.granted[0], 5);
	assert_int_equal(p.granted[1], 3);
	assert_int_equal(p.avail, 0);
	/* 5, 1, 3 asked; the walk stopped at 2 (priority 1) without asking. */
	assert_int_equal(p.nfits, 3);
	assert_int_equal(order(&q, 0, got, 8), 3);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 2);
	assert_int_equal(got[2], 4);

	/* 5Gi free: still short of 6Gi, so the 1Gi ones stay behind it. */
	p.avail = 5 * GiB;
	p.ngranted = 0;
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 0);

	p.avail = 7 * GiB;
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 2);
	assert_int_equal(p.granted[0], 1);
	assert_int_equal(p.granted[1], 2);
	assert_int_equal(p.avail, 0);
	assert_int_equal(waitq_count(&q), 1);
	assert_invariants(&q);
	waitq_free(&q);
}

/*
 * A waiter held by its group's limit, not by the device, sets no barrier:
 * lower priorities are served past it; once it fits it goes first.
 */
static void
test_serve_held(void **state)
{
	struct probe p = { .avail = 2 * GiB, .held = 1 };
	struct waitq q;

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	add(&q, NULL, 1, 0, 1 * GiB, 9, 0);
	add(&q, NULL, 2, 0, 1 * GiB, 1, 0);
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 1);
	assert_int_equal(p.granted[0], 2);
	assert_int_equal(waitq_count(&q), 1);
	/* The same waiter waiting for the device would have held 2 back. */
	add(&q, NULL, 3, 0, 1 * GiB, 1, 0);
	p.held = 0;
	p.avail = GiB / 2;
	p.ngranted = 0;
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 0);
	p.avail = 2 * GiB;
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 2);
	assert_int_equal(p.granted[0], 1);
	assert_int_equal(p.granted[1], 3);
	assert_invariants(&q);
	waitq_free(&q);
}

/* Equal priorities: first come first served as long as memory lasts. */
static void
test_serve_fifo(void **state)
{
	struct probe p = { .avail = 2 * GiB };
	struct waitq q;
	uint32_t i;

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	for (i = 1; i <= 4; i++)
		add(&q, NULL, i, 0, GiB, 0, 0);
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 2);
	assert_int_equal(p.granted[0], 1);
	assert_int_equal(p.granted[1], 2);
	/* A newcomer queues behind those already waiting. */
	add(&q, NULL, 5, 0, GiB, 0, 0);
	p.avail = 3 * GiB;
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 3);
	assert_int_equal(p.granted[2], 3);
	assert_int_equal(p.granted[3], 4);
	assert_int_equal(p.granted[4], 5);
	assert_int_equal(waitq_count(&q), 0);
	assert_invariants(&q);
	waitq_free(&q);
}

static void
test_remove_owner(void **state)
{
	struct waitq q;
	char a, b;
	uint32_t got[8];

	(void)state;
	waitq_init(&q, NULL, NULL);
	add(&q, &a, 1, 0, GiB, 1, 500);
	add(&q, &b, 2, 0, GiB, 1, 400);
	add(&q, &a, 3, 1, GiB, 3, 300);
	add(&q, &a, 4, 0, GiB, 1, 0);
	add(&q, &b, 5, 1, GiB, 0, 0);
	assert_int_equal(waitq_next_deadline(&q), 300);
	assert_int_equal(waitq_remove_owner(&q, &a), 3);
	assert_invariants(&q);
	assert_int_equal(waitq_remove_owner(&q, &a), 0);
	assert_int_equal(waitq_count(&q), 2);
	assert_int_equal(waitq_next_deadline(&q), 400);
	assert_int_equal(order(&q, 0, got, 8), 1);
	assert_int_equal(got[0], 2);
	assert_int_equal(order(&q, 1, got, 8), 1);
	assert_int_equal(got[0], 5);
	assert_int_equal(waitq_remove_owner(&q, &b), 2);
	assert_int_equal(waitq_next_deadline(&q), 0);
	assert_invariants(&q);
	waitq_free(&q);
}

/*
 * Deadlines: expire takes those due, earliest first (ties by arrival);
 * rearm hears of each change of the earliest deadline, and always after
 * an expire.
 */
static void
test_expire(void **state)
{
	struct probe p = { 0 };
	struct waitq q;
	struct waitq_waiter *w;

	(void)state;
	waitq_init(&q, rearm_note, &p);
	p.q = &q;
	add(&q, NULL, 1, 0, GiB, 0, 0);		/* no deadline */
	assert_int_equal(p.nrearmed, 0);
	add(&q, NULL, 2, 0, GiB, 0, 300);
	add(&q, NULL, 3, 1, GiB, 9, 100);
	add(&q, NULL, 4, 0, GiB, 0, 200);	/* not the earliest */
	add(&q, NULL, 5, 0, GiB, 0, 100);	/* ties with 3 */
	assert_int_equal(p.nrearmed, 2);
	assert_int_equal(p.rearmed[0], 300);
	assert_int_equal(p.rearmed[1], 100);
	assert_int_equal(waitq_next_deadline(&q), 100);

	assert_int_equal(waitq_expire(&q, 99, expire_note, &p), 0);
	assert_int_equal(p.nrearmed, 3);	/* forced, unchanged */
	assert_int_equal(p.rearmed[2], 100);

	assert_int_equal(waitq_expire(&q, 200, expire_note, &p), 3);
	assert_int_equal(p.expired[0], 3);
	assert_int_equal(p.expired[1], 5);
	assert_int_equal(p.expired[2], 4);
	assert_int_equal(p.rearmed[p.nrearmed - 1], 300);
	assert_int_equal(waitq_count(&q), 2);
	assert_invariants(&q);

	/* Cancelling the last one with a deadline disarms. */
	w = (struct waitq_waiter *)waitq_next(&q, 0, waitq_next(&q, 0, NULL));
	assert_int_equal(w->seq, 2);
	waitq_cancel(&q, w);
	assert_int_equal(p.rearmed[p.nrearmed - 1], 0);
	assert_int_equal(waitq_next_deadline(&q), 0);
	assert_int_equal(waitq_expire(&q, UINT64_MAX, expire_note, &p), 0);
	assert_int_equal(waitq_count(&q), 1);
	assert_invariants(&q);
	waitq_free(&q);
}

/* A granted waiter leaves the deadline heap: rearm moves on. */
static void
test_serve_disarms(void **state)
{
	struct probe p = { .avail = GiB };
	struct waitq q;

	(void)state;
	waitq_init(&q, rearm_note, &p);
	p.q = &q;
	add(&q, NULL, 1, 0, GiB, 0, 100);
	add(&q, NULL, 2, 0, 2 * GiB, 0, 200);
	assert_int_equal(waitq_serve(&q, 0, fits_avail, grant_take, &p), 1);
	assert_int_equal(p.rearmed[p.nrearmed - 1], 200);
	assert_int_equal(waitq_next_deadline(&q), 200);
	assert_invariants(&q);
	waitq_free(&q);
}

/*
 * Callbacks that change the queue under the walk: the first grant drops
 * another owner's waiters (one of them next in line), cancels a later
 * waiter, and queues a new one; none of the removed is offered again.
 */
static void
test_reentry(void **state)
{
	struct probe p = { .avail = 100 * GiB };
	struct waitq q;
	struct waitq_waiter *late;
	char a, b;
	size_t i;

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	add(&q, &a, 1, 0, GiB, 5, 0);
	add(&q, &b, 2, 0, GiB, 5, 10);
	add(&q, &b, 3, 1, GiB, 5, 20);
	add(&q, &a, 4, 0, GiB, 4, 30);
	late = waitq_add(&q, &a, 5, 0, GiB, 3, 40);
	assert_non_null(late);
	add(&q, &a, 6, 0, GiB, 2, 0);
	p.remove_owner = &b;
	p.cancel = late;
	p.add_on_grant = 1;
	waitq_serve(&q, 0, fits_avail, grant_take, &p);
	for (i = 0; i < p.ngranted; i++)
		assert_true(p.granted[i] != 2 && p.granted[i] != 5);
	assert_int_equal(p.granted[0], 1);
	assert_int_equal(p.granted[1], 4);
	assert_int_equal(p.granted[2], 6);
	/* 900 (priority 100) was linked ahead of the walk: it is left. */
	assert_int_equal(p.ngranted, 3);
	assert_int_equal(waitq_count(&q), 1);
	assert_int_equal(waitq_next(&q, 0, NULL)->seq, 900);
	assert_int_equal(waitq_count_dev(&q, 1), 0);
	assert_int_equal(waitq_next_deadline(&q), 0);
	assert_invariants(&q);
	waitq_free(&q);
}

/* An expire callback that removes an owner whose waiter is due next. */
static void
expire_drop_b(void *arg, const struct waitq_waiter *w)
{
	struct probe *p = arg;

	expire_note(arg, w);
	waitq_remove_owner(p->q, p->remove_owner);
}

static void
test_expire_reentry(void **state)
{
	struct probe p = { 0 };
	struct waitq q;
	char a, b;

	(void)state;
	waitq_init(&q, NULL, NULL);
	p.q = &q;
	p.remove_owner = &b;
	add(&q, &a, 1, 0, GiB, 0, 10);
	add(&q, &b, 2, 0, GiB, 0, 20);
	add(&q, &a, 3, 0, GiB, 0, 30);
	add(&q, &a, 4, 0, GiB, 0, 90);
	assert_int_equal(waitq_expire(&q, 50, expire_drop_b, &p), 2);
	assert_int_equal(p.expired[0], 1);
	assert_int_equal(p.expired[1], 3);
	assert_int_equal(waitq_count(&q), 1);
	assert_int_equal(waitq_next_deadline(&q), 90);
	assert_invariants(&q);
	waitq_free(&q);
}

static void
test_bad_device(void **state)
{
	struct waitq q;

	(void)state;
	waitq_init(&q, NULL, NULL);
	errno = 0;
	assert_null(waitq_add(&q, NULL, 1, WAITQ_DEV_MAX, GiB, 0, 0));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(waitq_count(&q), 0);
	waitq_free(&q);
}

/*
 * Every allocation waitq_add makes fails in turn: each failure returns NULL
 * with ENOMEM and leaves the queue as it was; the retry then succeeds.
 */
static void
test_enomem(void **state)
{
#ifdef FAIL_INJECT
	struct waitq q;
	struct waitq_waiter *w;
	uint32_t seq, before[64], after[64];
	size_t nb, na;
	int k, failures = 0;

	(void)state;
	waitq_init(&q, NULL, NULL);
	for (seq = 1; seq <= 40; seq++) {
		size_t dev = seq % 3 == 0 ? seq / 3 : 0;	/* new devices */
		int32_t prio = (int32_t)(seq % 7);		/* new levels */
		uint64_t dl = seq % 2 ? 1000 + seq : 0;		/* heap */

		for (k = 0;; k++) {
			nb = order(&q, dev, before, 64);
			fail_after = k;
			errno = 0;
			w = waitq_add(&q, NULL, seq, dev, GiB, prio, dl);
			fail_after = -1;
			if (w != NULL)
				break;
			assert_int_equal(errno, ENOMEM);
			failures++;
			na = order(&q, dev, after, 64);
			assert_int_equal(na, nb);
			assert_memory_equal(after, before, nb * sizeof(*after));
			assert_int_equal(waitq_count(&q), seq - 1);
			assert_invariants(&q);
		}
		assert_invariants(&q);
	}
	assert_true(failures > 40);	/* more than the waiter itself failed */
	waitq_free(&q);
#else
	(void)state;
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_order),
		cmocka_unit_test(test_serve_all),
		cmocka_unit_test(test_serve_barrier),
		cmocka_unit_test(test_serve_held),
		cmocka_unit_test(test_serve_fifo),
		cmocka_unit_test(test_remove_owner),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_serve_disarms),
		cmocka_unit_test(test_reentry),
		cmocka_unit_test(test_expire_reentry),
		cmocka_unit_test(test_bad_device),
		cmocka_unit_test(test_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
