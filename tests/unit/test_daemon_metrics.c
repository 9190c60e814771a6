/*
 * daemon/metrics_*.c: metrics_listen's parser and its listener, the text
 * format (escaping, seconds), the counters the decision log feeds (per
 * group, the waits timed and matched, the full table pruned then folded
 * into "(other)"), and the rendered text of a small ledger and of the
 * counters.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../daemon/arbiter.h"
#include "../../daemon/metrics_addr.h"
#include "../../daemon/metrics_counts.h"
#include "../../daemon/metrics_render.h"
#include "../../daemon/metrics_render_counts.h"
#include "../../daemon/metrics_text.h"
#include "log.h"
#include "proto.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

static const uint8_t uuid1[GF_UUID_LEN] = {
	0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
};
#define UUID1	"GPU-12345678-9abc-def0-0123-456789abcdef"

/* --- metrics_listen ----------------------------------------------------- */

static void
bad(const char *s, const char *want)
{
	char why[METRICS_ADDR_ERR_LEN];

	assert_int_equal(metrics_addr_parse(s, NULL, why, sizeof(why)), -1);
	assert_string_equal(why, want);
}

static void
test_addr_parse(void **state)
{
	struct metrics_addr a;
	struct sockaddr_in *sin = (struct sockaddr_in *)&a.ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a.ss;
	char why[METRICS_ADDR_ERR_LEN];

	(void)state;
	assert_int_equal(metrics_addr_parse("127.0.0.1:9477", &a, why,
	    sizeof(why)), 0);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 9477);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(a.len, sizeof(*sin));
	assert_int_equal(metrics_addr_parse("[::1]:65535", &a, why,
	    sizeof(why)), 0);
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 65535);
	assert_int_equal(sin6->sin6_addr.s6_addr[15], 1);
	assert_int_equal(metrics_addr_parse("0.0.0.0:1", NULL, why,
	    sizeof(why)), 0);

	bad("", "expected address:port, e.g. 127.0.0.1:9477");
	bad(":9477", "expected address:port, e.g. 127.0.0.1:9477");
	bad("host:9477", "'host' is not a numeric IPv4 address");
	bad("1.2.3:9477", "'1.2.3' is not a numeric IPv4 address");
	bad("127.0.0.1:", "the port must be 1 to 65535");
	bad("127.0.0.1:0", "the port must be 1 to 65535");
	bad("127.0.0.1:+80", "the port must be 1 to 65535");
	bad("127.0.0.1:80x", "the port must be 1 to 65535");
	bad("127.0.0.1:65536", "the port must be 1 to 65535");
	bad("::1:80", "an IPv6 address goes in brackets, e.g. [::1]:9477");
	bad("[::1]", "expected [IPv6 address]:port");
	bad("[::1]80", "expected [IPv6 address]:port");
	bad("[::g]:80", "'::g' is not a numeric IPv6 address");
	bad("[127.0.0.1]:80", "'127.0.0.1' is not a numeric IPv6 address");
	bad("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0]:80",
	    "'0000:0000:0000:0000:0000:0000:0000:0000:0000:0' is not a numeric "
	    "IPv6 address");
	bad("1111111111111111111111111111111111111111111111111111111111:1",
	    "'1111111111111111111111111111111111111111111111111111111111' is "
	    "not a numeric IPv4 address");
	bad("111111111111111111111111111111111111111111111111111111111111111:1",
	    "longer than 63 bytes");
}

/* A port the kernel had free a moment ago. */
static in_port_t
free_port(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

static void
test_addr_listen(void **state)
{
	char name[32], err[METRICS_ADDR_ERR_LEN], want[128];
	struct metrics_addr a;
	int fd, fd2;

	(void)state;
	snprintf(name, sizeof(name), "127.0.0.1:%u", (unsigned)free_port());
	assert_int_equal(metrics_addr_parse(name, &a, err, sizeof(err)), 0);
	fd = metrics_addr_listen(&a, name, err, sizeof(err));
	assert_true(fd >= 0);
	/* The second one finds the first there, and says where. */
	fd2 = metrics_addr_listen(&a, name, err, sizeof(err));
	assert_int_equal(fd2, -1);
	snprintf(want, sizeof(want), "cannot listen on '%s' for metrics: %s",
	    name, strerror(EADDRINUSE));
	assert_string_equal(err, want);
	close(fd);
}

/* --- the text format ---------------------------------------------------- */

static void
test_text(void **state)
{
	struct metrics_label lb[2] = {
		{ "name", "a \"b\"\\c\nd" }, { "le", "+Inf" },
	};
	struct metrics_text t;
	char s[32], *text;
	size_t len;

	(void)state;
	metrics_text_init(&t);
	metrics_text_family(&t, "x_total", "counter", "Things.");
	metrics_text_u64(&t, "x_total", NULL, 0, UINT64_MAX);
	metrics_text_u64(&t, "x_total", lb, 2, 7);
	metrics_text_ms(&t, "y_seconds", lb + 1, 1, 1500);
	text = metrics_text_take(&t, &len);
	assert_non_null(text);
	assert_string_equal(text,
	    "# HELP x_total Things.\n"
	    "# TYPE x_total counter\n"
	    "x_total 18446744073709551615\n"
	    "x_total{name=\"a \\\"b\\\"\\\\c\\nd\",le=\"+Inf\"} 7\n"
	    "y_seconds{le=\"+Inf\"} 1.5\n");
	assert_int_equal(len, strlen(text));
	free(text);
	metrics_text_free(&t);	/* empty after take: nothing to free */

	assert_string_equal(metrics_seconds_format(0, s, sizeof(s)), "0");
	assert_string_equal(metrics_seconds_format(1, s, sizeof(s)), "0.001");
	assert_string_equal(metrics_seconds_format(10, s, sizeof(s)), "0.01");
	assert_string_equal(metrics_seconds_format(500, s, sizeof(s)), "0.5");
	assert_string_equal(metrics_seconds_format(1000, s, sizeof(s)), "1");
	assert_string_equal(metrics_seconds_format(61234, s, sizeof(s)),
	    "61.234");
	assert_string_equal(metrics_seconds_format(300000, s, sizeof(s)),
	    "300");
}

/* --- the counters ------------------------------------------------------- */

static struct gf_event
ev(uint32_t kind, uint32_t pid, const char *group, uint64_t bytes)
{
	struct gf_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.pid = pid;
	proto_strlcpy(e.group, group, sizeof(e.group));
	memcpy(e.uuid, uuid1, sizeof(e.uuid));
	e.bytes = bytes;
	return e;
}

static void
count(struct metrics_counts *mc, uint32_t kind, uint32_t pid,
    const char *group, uint64_t bytes, uint64_t now)
{
	struct gf_event e = ev(kind, pid, group, bytes);

	metrics_counts_event(mc, &e, now);
}

static void
test_counts(void **state)
{
	const struct metrics_group_counts *a, *b;
	struct metrics_counts mc;
	struct gf_event e;

	(void)state;
	metrics_counts_init(&mc, NULL, NULL);
	count(&mc, GF_EV_GRANT, 1, "a", GiB, 0);
	count(&mc, GF_EV_GRANT, 2, "a", MiB, 0);
	count(&mc, GF_EV_DENY, 3, "b", 2 * GiB, 0);
	e = ev(GF_EV_SWAP_OUT, 3, "b", GiB);
	e.duration_ms = 120;
	metrics_counts_event(&mc, &e, 0);
	e = ev(999, 3, "b", GiB);	/* a kind from a later release */
	metrics_counts_event(&mc, &e, 0);
	assert_int_equal(mc.events, 5);
	assert_int_equal(mc.ngroups, 2);
	a = metrics_counts_group(&mc, "a");
	b = metrics_counts_group(&mc, "b");
	assert_non_null(a);
	assert_non_null(b);
	assert_null(metrics_counts_group(&mc, "c"));
	assert_int_equal(a->events[GF_EV_GRANT], 2);
	assert_int_equal(a->bytes[GF_EV_GRANT], GiB + MiB);
	assert_int_equal(a->events[GF_EV_DENY], 0);
	assert_int_equal(b->events[GF_EV_DENY], 1);
	assert_int_equal(b->bytes[GF_EV_DENY], 2 * GiB);
	assert_int_equal(b->events[GF_EV_SWAP_OUT], 1);
	assert_int_equal(b->duration_ms[GF_EV_SWAP_OUT], 120);
	metrics_counts_free(&mc);
}

static void
test_waits(void **state)
{
	const struct metrics_group_counts *g;
	struct metrics_counts mc;
	struct gf_event e;

	(void)state;
	metrics_counts_init(&mc, NULL, NULL);
	/* Two waits of pid 1 alike, one of pid 2, one of pid 1 elsewhere. */
	count(&mc, GF_EV_WAIT, 1, "g", GiB, 100);
	count(&mc, GF_EV_WAIT, 1, "g", GiB, 200);
	count(&mc, GF_EV_WAIT, 2, "g", GiB, 300);
	e = ev(GF_EV_WAIT, 1, "g", GiB);
	e.uuid[0] ^= 1;
	metrics_counts_event(&mc, &e, 400);
	assert_int_equal(mc.nwaits, 4);
	/* The oldest of the alike ends first: 250 ms. */
	count(&mc, GF_EV_WAKE, 1, "g", GiB, 350);
	g = metrics_counts_group(&mc, "g");
	assert_int_equal(g->wait_count, 1);
	assert_int_equal(g->wait_sum_ms, 250);
	assert_int_equal(g->wait_le[4], 0);	/* 0.1 s */
	assert_int_equal(g->wait_le[5], 1);	/* 0.5 s */
	assert_int_equal(g->wait_le[METRICS_WAIT_BUCKETS - 1], 1);
	/* A timeout ends one too: the other alike, 5 s later. */
	count(&mc, GF_EV_TIMEOUT, 1, "g", GiB, 5200);
	assert_int_equal(g->wait_count, 2);
	assert_int_equal(g->wait_sum_ms, 250 + 5000);
	assert_int_equal(g->wait_le[6], 1);	/* 1 s */
	assert_int_equal(g->wait_le[7], 2);	/* 5 s */
	/* A wake-up of another size, or with nothing left, times nothing. */
	count(&mc, GF_EV_WAKE, 2, "g", MiB, 6000);
	count(&mc, GF_EV_WAKE, 1, "g", GiB, 6000);
	assert_int_equal(g->wait_count, 2);
	assert_int_equal(mc.nwaits, 2);
	/* A deny is no end of a wait (a new request may be refused). */
	count(&mc, GF_EV_DENY, 2, "g", GiB, 6000);
	assert_int_equal(mc.nwaits, 2);
	assert_int_equal(g->events[GF_EV_WAIT], 4);
	assert_int_equal(g->events[GF_EV_WAKE], 3);
	metrics_counts_free(&mc);
}

static void
test_waits_bounded(void **state)
{
	struct metrics_counts mc;
	uint32_t i;

	(void)state;
	metrics_counts_init(&mc, NULL, NULL);
	for (i = 0; i < METRICS_WAITS_MAX + 10; i++)
		count(&mc, GF_EV_WAIT, i, "g", GiB, i);
	assert_int_equal(mc.nwaits, METRICS_WAITS_MAX);
	/* The oldest went first: pid 0 is no longer timed, pid 10 is. */
	count(&mc, GF_EV_WAKE, 0, "g", GiB, 100000);
	assert_int_equal(metrics_counts_group(&mc, "g")->wait_count, 0);
	count(&mc, GF_EV_WAKE, 10, "g", GiB, 100000);
	assert_int_equal(metrics_counts_group(&mc, "g")->wait_count, 1);
	assert_int_equal(metrics_counts_group(&mc, "g")->wait_sum_ms,
	    100000 - 10);
	metrics_counts_free(&mc);
}

/* Groups whose name ends in an even digit are gone. */
static int
odd_alive(const char *name, void *arg)
{
	size_t n = strlen(name);

	(*(int *)arg)++;
	return n == 0 || (name[n - 1] - '0') % 2 != 0;
}

static void
test_groups_full(void **state)
{
	struct metrics_counts mc;
	char name[GF_GROUP_LEN];
	int asked = 0, i;

	(void)state;
	/* Without a callback: the last row is "(other)". */
	metrics_counts_init(&mc, NULL, NULL);
	for (i = 0; i < METRICS_GROUPS_MAX + 5; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		count(&mc, GF_EV_GRANT, 1, name, 1, 0);
	}
	assert_int_equal(mc.ngroups, METRICS_GROUPS_MAX);
	assert_string_equal(mc.groups[METRICS_GROUPS_MAX - 1].name,
	    METRICS_GROUP_OTHER);
	assert_int_equal(mc.groups[METRICS_GROUPS_MAX - 1].events[GF_EV_GRANT],
	    6);
	/* A group with a row still counts there. */
	count(&mc, GF_EV_GRANT, 1, "g0", 1, 0);
	assert_int_equal(metrics_counts_group(&mc, "g0")->events[GF_EV_GRANT],
	    2);
	metrics_counts_free(&mc);

	/* With one: the rows of groups gone make room, "(other)" stays. */
	metrics_counts_init(&mc, odd_alive, &asked);
	for (i = 0; i < METRICS_GROUPS_MAX + 5; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		count(&mc, GF_EV_GRANT, 1, name, 1, 0);
	}
	assert_true(asked > 0);
	assert_null(metrics_counts_group(&mc, "g0"));
	assert_null(metrics_counts_group(&mc, METRICS_GROUP_OTHER));
	assert_non_null(metrics_counts_group(&mc, "g1"));
	assert_non_null(metrics_counts_group(&mc, "g255"));
	assert_non_null(metrics_counts_group(&mc, "g260"));
	assert_int_equal(mc.ngroups, 127 + 6);
	metrics_counts_free(&mc);
}

/* --- rendering ---------------------------------------------------------- */

static void
has_line(const char *text, const char *line)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "\n%s\n", line);
	if (strstr(text, buf) == NULL)
		fail_msg("no line '%s' in:\n%s", line, text);
}

static void
test_render_counts(void **state)
{
	struct metrics_counts mc;
	struct metrics_text t;
	char *text;
	size_t len;

	(void)state;
	metrics_counts_init(&mc, NULL, NULL);
	mc.connections = 3;
	mc.reload_failures = 1;
	mc.reload_failed = 1;
	count(&mc, GF_EV_GRANT, 1, "g", GiB, 0);
	count(&mc, GF_EV_WAIT, 1, "g", MiB, 0);
	count(&mc, GF_EV_WAKE, 1, "g", MiB, 20);
	count(&mc, GF_EV_SWAP_IN, 1, "g", GiB, 0);
	metrics_text_init(&t);
	metrics_render_counts(&t, &mc);
	text = metrics_text_take(&t, &len);
	assert_non_null(text);
	has_line(text, "gpufrac_connections_total 3");
	has_line(text, "gpufrac_reloads_total{result=\"refused\"} 1");
	has_line(text, "gpufrac_config_last_reload_successful 0");
	has_line(text, "gpufrac_events_total 4");
	has_line(text, "# TYPE gpufrac_grants_total counter");
	has_line(text, "gpufrac_grants_total{group=\"g\"} 1");
	has_line(text, "gpufrac_granted_bytes_total{group=\"g\"} 1073741824");
	has_line(text, "gpufrac_denies_total{group=\"g\"} 0");
	has_line(text, "gpufrac_swaps_total{group=\"g\",direction=\"in\"} 1");
	has_line(text, "gpufrac_swaps_total{group=\"g\",direction=\"out\"} 0");
	has_line(text, "gpufrac_swapped_bytes_total{group=\"g\",direction=\"in\"} 1073741824");
	has_line(text, "# TYPE gpufrac_wait_seconds histogram");
	has_line(text, "gpufrac_wait_seconds_bucket{group=\"g\",le=\"0.01\"} 0");
	has_line(text, "gpufrac_wait_seconds_bucket{group=\"g\",le=\"0.05\"} 1");
	has_line(text, "gpufrac_wait_seconds_bucket{group=\"g\",le=\"300\"} 1");
	has_line(text, "gpufrac_wait_seconds_bucket{group=\"g\",le=\"+Inf\"} 1");
	has_line(text, "gpufrac_wait_seconds_sum{group=\"g\"} 0.02");
	has_line(text, "gpufrac_wait_seconds_count{group=\"g\"} 1");
	free(text);
	metrics_counts_free(&mc);
}

/* A daemon's state, enough to render: one device, two groups, a client. */
static void
arbiter_small(struct arbiter *a)
{
	struct group_policy pols[2];
	struct ledger_client *c;

	memset(a, 0, sizeof(*a));
	assert_int_equal(ledger_init(&a->ledger), 0);
	assert_int_equal(ledger_device_add(&a->ledger, uuid1, 3,
	    "sim \"dev\"", 8 * GiB), 0);
	memset(pols, 0, sizeof(pols));
	pols[0] = a->ledger.groups[0].pol;
	proto_strlcpy(pols[1].name, "train", sizeof(pols[1].name));
	pols[1].limit_kind = GF_LIMIT_BYTES;
	pols[1].limit_value = 4 * GiB;
	pols[1].guarantee_kind = GF_LIMIT_BYTES;
	pols[1].guarantee_value = GiB;
	pols[1].on_preempt = GF_PREEMPT_KILL;
	assert_int_equal(ledger_groups_set(&a->ledger, pols, 2, NULL, NULL),
	    0);
	c = ledger_client_new(&a->ledger, 4242, 0, 0, NULL);
	assert_non_null(c);
	ledger_client_group(&a->ledger, c, 1);
	ledger_open(&a->ledger, c, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(&a->ledger, c, 0, 512 * MiB),
	    LEDGER_GRANT);
	assert_int_equal(ledger_commit(&a->ledger, c, 0, 0x1000, 512 * MiB,
	    512 * MiB, GF_KIND_MEM, 0), 0);
	a->metrics.start_wall_ms = 1700000000123ull;
}

static void
test_render(void **state)
{
	static struct arbiter a;
	char *text;
	size_t len;

	(void)state;
	arbiter_small(&a);
	text = metrics_render(&a, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	has_line(text, "gpufrac_start_time_seconds 1700000000.123");
	has_line(text, "gpufrac_processes{state=\"running\"} 1");
	has_line(text, "gpufrac_device_capacity_bytes{uuid=\"" UUID1
	    "\",index=\"3\"} 8589934592");
	has_line(text, "gpufrac_device_used_bytes{uuid=\"" UUID1
	    "\",index=\"3\"} 536870912");
	has_line(text, "gpufrac_device_guaranteed_bytes{uuid=\"" UUID1
	    "\",index=\"3\"} 1073741824");
	has_line(text, "gpufrac_device_info{uuid=\"" UUID1
	    "\",index=\"3\",name=\"sim \\\"dev\\\"\"} 1");
	has_line(text, "gpufrac_group_limit_bytes{group=\"train\",uuid=\""
	    UUID1 "\"} 4294967296");
	has_line(text, "gpufrac_group_used_bytes{group=\"train\",uuid=\""
	    UUID1 "\"} 536870912");
	has_line(text, "gpufrac_group_used_bytes{group=\"default\",uuid=\""
	    UUID1 "\"} 0");
	has_line(text, "gpufrac_group_clients{group=\"train\",uuid=\""
	    UUID1 "\"} 1");
	has_line(text, "gpufrac_process_used_bytes{pid=\"4242\","
	    "group=\"train\",uuid=\"" UUID1 "\"} 536870912");
	has_line(text, "gpufrac_process_limit_bytes{pid=\"4242\","
	    "group=\"train\",uuid=\"" UUID1 "\"} 4294967296");
	has_line(text, "gpufrac_process_state{pid=\"4242\",group=\"train\","
	    "state=\"running\"} 1");
	has_line(text, "gpufrac_process_state{pid=\"4242\",group=\"train\","
	    "state=\"swapped\"} 0");
	/* No activity page: how idle it is, nobody knows. */
	assert_null(strstr(text, "gpufrac_process_idle_seconds{"));
	free(text);
	ledger_free(&a.ledger);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_addr_listen),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_waits_bounded),
		cmocka_unit_test(test_groups_full),
		cmocka_unit_test(test_render_counts),
		cmocka_unit_test(test_render),
	};

	log_init("gpufracd", LOG_LVL_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
