/*
 * daemon/config_group.c and groups.c: [group] sections (their keys, and
 * [daemon]'s values for those unset), a zero guarantee however written,
 * and which group a process is in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config_fixture.h"
#include "log.h"
#include "../../daemon/groups.h"

static void
test_good_groups(void **state)
{
	const struct group_policy *t, *i;
	struct config c;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "good.conf", 0, &e), 0);
	assert_int_equal(c.ngroups, 2);
	t = &c.groups[0].pol;
	assert_string_equal(t->name, "trainer");
	assert_string_equal(c.groups[0].where, FIX "good.conf:20");
	assert_int_equal(c.groups[0].nrules, 2);
	assert_int_equal(c.groups[0].rules[0].kind, MATCH_CONTAINER);
	assert_string_equal(c.groups[0].rules[0].arg, "3f2a9c");
	assert_int_equal(c.groups[0].rules[1].kind, MATCH_CGROUP);
	assert_int_equal(t->per_process, 0);
	assert_int_equal(t->limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(t->limit_value, 5000);
	assert_int_equal(t->guarantee_kind, GF_LIMIT_BYTES);
	assert_int_equal(t->guarantee_value, 4ull << 30);
	assert_string_equal(c.groups[0].guarantee_where, FIX "good.conf:23");
	assert_int_equal(t->priority, 10);
	assert_int_equal(t->resolver, GF_RESOLVER_FAIL);
	assert_int_equal(t->wait_timeout_ms, 60000);
	assert_int_equal(t->on_preempt, GF_PREEMPT_NONE);
	assert_int_equal(t->kill_grace_ms, 30000);
	assert_int_equal(t->client_may_raise, 1);
	/* Unset keys: [daemon]'s values, or the built-in defaults. */
	i = &c.groups[1].pol;
	assert_string_equal(i->name, "infer");
	assert_int_equal(c.groups[1].nrules, 3);
	assert_int_equal(c.groups[1].rules[2].kind, MATCH_POD);
	assert_int_equal(i->limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(i->limit_value, 5000);	/* default_limit */
	assert_int_equal(i->guarantee_value, 0);
	assert_int_equal(i->priority, -5);
	assert_int_equal(i->wait_timeout_ms, 1500);	/* wait_timeout */
	assert_int_equal(i->on_preempt, GF_PREEMPT_KILL);
	assert_int_equal(i->kill_grace_ms, 10000);
	assert_int_equal(i->client_may_raise, 0);
	config_free(&c);
}

/* groups.c: the table and the first section that matches. */
static void
test_groups_match(void **state)
{
	struct group_policy pols[3];
	struct config c, rt;
	struct groups gs;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "good.conf", 0, &e), 0);
	config_init(&rt);
	assert_int_equal(groups_build(&gs, &c, &rt, 0), 0);
	assert_int_equal(groups_count(&gs), 3);
	groups_policies(&gs, pols);
	assert_string_equal(pols[0].name, "default");
	assert_int_equal(pols[0].per_process, 1);
	assert_int_equal(pols[0].limit_value, 5000);
	assert_int_equal(pols[0].wait_timeout_ms, 1500);
	assert_int_equal(pols[0].client_may_raise, 1);
	assert_string_equal(pols[1].name, "trainer");
	assert_string_equal(pols[2].name, "infer");
	/* Any rule of a section; the first section wins. */
	assert_int_equal(groups_match(&gs, "/docker/3f2a9c0000000000000000000000"
	    "000000000000000000000000000000000000", 1000, 1000), 1);
	assert_int_equal(groups_match(&gs, "/gpu-jobs/train/x/y", 5, 5), 1);
	assert_int_equal(groups_match(&gs, "/gpu-jobs/infer", 1000, 5), 2);
	assert_int_equal(groups_match(&gs, "/", 5, 1000), 2);
	assert_int_equal(groups_match(&gs, "/kubepods/pod6f1e8c3a-2b4d-4e5f-"
	    "9a1b-0c2d3e4f5a6b/x", 5, 5), 2);
	assert_int_equal(groups_match(&gs, "/user.slice", 5, 5), 0);
	assert_int_equal(groups_match(&gs, NULL, 5, 5), 0);
	groups_free(&gs);
	config_free(&c);
}

/*
 * A zero guarantee, however written, is no guarantee (a limit of zero is
 * refused: test_bad_values); every spelling gives the same.
 */
static void
test_zero_guarantee(void **state)
{
	static const char *const zeros[] = { "0", "0Gi", "0%", "0.0%" };
	char path[64], text[256];
	struct config c;
	struct errs e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
		snprintf(text, sizeof(text), "[jobs]\nmax_guarantee = %s\n"
		    "[group g]\nmatch = uid:1\nguarantee = %s\n", zeros[i],
		    zeros[i]);
		temp_conf(path, sizeof(path), text);
		print_message("%s\n", zeros[i]);
		assert_int_equal(load(&c, path, 0, &e), 0);
		assert_int_equal(c.jobs.max_guarantee_kind, GF_LIMIT_BYTES);
		assert_int_equal(c.jobs.max_guarantee_value, 0);
		assert_int_equal(c.ngroups, 1);
		assert_int_equal(c.groups[0].pol.guarantee_kind,
		    GF_LIMIT_BYTES);
		assert_int_equal(c.groups[0].pol.guarantee_value, 0);
		config_free(&c);
		unlink(path);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_groups),
		cmocka_unit_test(test_groups_match),
		cmocka_unit_test(test_zero_guarantee),
	};

	log_init("test", LOG_LVL_ERROR, 0);	/* warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
