/*
 * common/ctlreq.c: a group's settings from the words users write, and the
 * rules that match a cgroup and everything below it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctlreq.h"

static void
test_options(void **state)
{
	struct ctlreq_group g;
	char err[256];

	(void)state;
	assert_int_equal(ctlreq_group_init(&g, "web", err, sizeof(err)), 0);
	assert_int_equal(g.set.limit_kind, GF_LIMIT_NONE);
	assert_int_equal(g.set.resolver, GF_UNSET);
	assert_int_equal(g.set.wait_timeout_ms, GF_UNSET);
	assert_int_equal(ctlreq_group_option(&g, "limit", "1.5Gi", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.limit_kind, GF_LIMIT_BYTES);
	assert_int_equal(g.set.limit_value, 3ull << 29);
	assert_int_equal(ctlreq_group_option(&g, "guarantee", "25%", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.guarantee_kind, GF_LIMIT_PERCENT);
	assert_int_equal(g.set.guarantee_value, 2500);
	/* A zero guarantee, however written, is none. */
	assert_int_equal(ctlreq_group_option(&g, "guarantee", "0%", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.guarantee_kind, GF_LIMIT_BYTES);
	assert_int_equal(g.set.guarantee_value, 0);
	assert_int_equal(ctlreq_group_option(&g, "guarantee", "25%", err,
	    sizeof(err)), 0);
	assert_int_equal(ctlreq_group_option(&g, "priority", "-7", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.priority_set, 1);
	assert_int_equal(g.set.priority, -7);
	assert_int_equal(ctlreq_group_option(&g, "resolver", "swap", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.resolver, GF_RESOLVER_SWAP);
	assert_int_equal(ctlreq_group_option(&g, "on_preempt", "none", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.on_preempt, GF_PREEMPT_NONE);
	assert_int_equal(ctlreq_group_option(&g, "wait_timeout", "1.5s", err,
	    sizeof(err)), 0);
	assert_int_equal(g.set.wait_timeout_ms, 1500);
	assert_int_equal(ctlreq_group_option(&g, "match", "uid:1", err,
	    sizeof(err)), 0);
	assert_int_equal(g.nrules, 1);
	assert_int_equal(g.set.nrules, 1);
	assert_string_equal(g.rules[0].rule, "uid:1");
}

static void
option_fails(const char *key, const char *value, const char *want)
{
	struct ctlreq_group g;
	char err[256];

	assert_int_equal(ctlreq_group_init(&g, "x", err, sizeof(err)), 0);
	assert_int_equal(ctlreq_group_option(&g, key, value, err,
	    sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void
test_bad_options(void **state)
{
	struct ctlreq_group g;
	char err[256], long_name[64];
	int i;

	(void)state;
	option_fails("limit", "4GB", "bad limit '4GB' (expected a size such "
	    "as 8Gi or a share such as 50%)");
	option_fails("limit", "0", "bad limit '0' (a limit must be "
	    "positive)");
	option_fails("limit", "0%", "bad limit '0%' (a limit must be "
	    "positive)");
	option_fails("limit", "0Gi", "bad limit '0Gi' (a limit must be "
	    "positive)");
	option_fails("guarantee", "-1", "bad guarantee '-1' (expected a size "
	    "such as 8Gi or a share such as 50%)");
	option_fails("priority", "high", "bad priority 'high' (expected an "
	    "integer)");
	option_fails("priority", "99999999999", "bad priority '99999999999' "
	    "(expected an integer)");
	option_fails("resolver", "later", "bad resolver 'later' (expected "
	    "fail, wait, preempt or swap)");
	option_fails("on_preempt", "stop", "bad on_preempt 'stop' (expected "
	    "swap, kill or none)");
	option_fails("wait_timeout", "soon", "bad wait_timeout 'soon' "
	    "(expected a duration such as 30s)");
	option_fails("colour", "red", "unknown group setting 'colour'");
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(ctlreq_group_init(&g, long_name, err, sizeof(err)),
	    -1);
	assert_int_equal(ctlreq_group_init(&g, "", err, sizeof(err)), -1);
	assert_int_equal(ctlreq_group_init(&g, "x", err, sizeof(err)), 0);
	for (i = 0; i < GF_GROUP_RULES_MAX; i++)
		assert_int_equal(ctlreq_group_option(&g, "match", "uid:1", err,
		    sizeof(err)), 0);
	assert_int_equal(ctlreq_group_option(&g, "match", "uid:1", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "too many match rules for group 'x' (at "
	    "most 16)");
}

static void
test_cgroup_rules(void **state)
{
	struct ctlreq_group g;
	char err[256], path[300];

	(void)state;
	assert_int_equal(ctlreq_group_init(&g, "c", err, sizeof(err)), 0);
	assert_int_equal(g.set.flags, 0);
	assert_int_equal(ctlreq_group_cgroup(&g, "/machine.slice/libpod-"
	    "ab[1]*?.scope", err, sizeof(err)), 0);
	assert_int_equal(g.nrules, 2);
	assert_int_equal(g.set.flags, GF_GROUP_TRANSIENT);
	assert_string_equal(g.rules[0].rule, "cgroup:/machine.slice/libpod-"
	    "ab\\[1\\]\\*\\?.scope");
	assert_string_equal(g.rules[1].rule, "cgroup:/machine.slice/libpod-"
	    "ab\\[1\\]\\*\\?.scope/*");
	/* The root holds every process: never a group's cgroup. */
	assert_int_equal(ctlreq_group_cgroup(&g, "/", err, sizeof(err)), -1);
	assert_int_equal(ctlreq_group_cgroup(&g, "//", err, sizeof(err)), -1);
	assert_int_equal(ctlreq_group_cgroup(&g, "", err, sizeof(err)), -1);
	assert_int_equal(ctlreq_group_cgroup(&g, "relative", err,
	    sizeof(err)), -1);
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(ctlreq_group_cgroup(&g, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	assert_int_equal(g.nrules, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_cgroup_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
