/*
 * daemon/ledger.c, bounds: the job groups of one user held together to
 * the limit of the [group] that bounds them (ledger_groups_bound), their
 * guarantees shared out of its guarantee; an honest job within the bound
 * beside its siblings is not refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ledger_fixture.h"
#include "log.h"

/*
 * Groups: 1 "users" (3 GiB, guarantee 2 GiB), 2 and 3 two jobs of that
 * user (2 GiB and guarantee 1536 MiB each) bounded by it, 4 "other"
 * (unbounded, 8 GiB). Client i has uid i, and so is in group i.
 */
static void
user_with_two_jobs(struct ledger *l, struct ledger_client **c)
{
	struct group_policy pols[4] = {
		policy("users", GF_LIMIT_BYTES, 3 * GiB),
		policy("job-a", GF_LIMIT_BYTES, 2 * GiB),
		policy("job-b", GF_LIMIT_BYTES, 2 * GiB),
		policy("other", GF_LIMIT_BYTES, 8 * GiB),
	};
	size_t bound[5] = { 0, 0, 1, 1, 0 };
	uint32_t i;

	pols[0].guarantee_value = 2 * GiB;
	pols[1].guarantee_value = pols[2].guarantee_value = 1536 * MiB;
	for (i = 1; i <= 4; i++) {
		c[i] = ledger_client_new(l, i, i, i, NULL);
		assert_non_null(c[i]);
	}
	set_groups(l, pols, 4);
	ledger_groups_bound(l, bound);
	for (i = 1; i <= 4; i++)
		ledger_open(l, c[i], 0, GF_LIMIT_NONE, 0);
}

static void
test_jobs_together(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c[5];

	user_with_two_jobs(l, c);
	/* Each job alone may take its own limit... */
	assert_int_equal(ledger_reserve(l, c[2], 0, 2 * GiB), LEDGER_GRANT);
	/* ...but the two together no more than their user's [group]. */
	assert_int_equal(ledger_admit(l, c[3], 0, 2 * GiB),
	    LEDGER_GROUP_LIMIT);
	assert_int_equal(ledger_headroom(l, c[3], 0), GiB);
	/* honest: within the bound beside its sibling */
	assert_int_equal(ledger_reserve(l, c[3], 0, GiB), LEDGER_GRANT);
	assert_int_equal(l->groups[1].share[0].nested, 3 * GiB);
	/* The user's plain processes count against the same limit. */
	assert_int_equal(ledger_admit(l, c[1], 0, 1), LEDGER_GROUP_LIMIT);
	/* An unbounded group is not held by it. */
	assert_int_equal(ledger_reserve(l, c[4], 0, 4 * GiB), LEDGER_GRANT);
	/* What a job returns, its sibling or its user may take. */
	assert_int_equal(ledger_rollback(l, c[2], 0, GiB), 0);
	assert_int_equal(ledger_reserve(l, c[1], 0, GiB), LEDGER_GRANT);
	assert_invariants(l);
	/* Swapped out, a job's memory still counts under its bound. */
	ledger_swap_out(l, c[3]);
	assert_int_equal(l->groups[1].share[0].nested, 2 * GiB);
	assert_int_equal(ledger_admit(l, c[1], 0, 1), LEDGER_GROUP_LIMIT);
	ledger_swap_in(l, c[3]);
	/* A job's process that leaves takes its memory out of the bound. */
	ledger_client_drop(l, c[2]);
	assert_int_equal(l->groups[1].share[0].nested, GiB);
	assert_invariants(l);
}

static void
test_reach_under_bound(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c[5];
	struct ledger_spare sp;

	user_with_two_jobs(l, c);
	memset(&sp, 0, sizeof(sp));
	assert_int_equal(ledger_reach(l, c[3], 0, &sp), 2 * GiB);
	assert_int_equal(ledger_reserve(l, c[2], 0, 2 * GiB), LEDGER_GRANT);
	/* What a job is shown it may reach counts its sibling's memory. */
	assert_int_equal(ledger_reach(l, c[3], 0, &sp), GiB);
	assert_int_equal(ledger_reach(l, c[1], 0, &sp), GiB);
}

static void
test_regroup_under_bound(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c[5];

	user_with_two_jobs(l, c);
	assert_int_equal(ledger_reserve(l, c[2], 0, 2 * GiB), LEDGER_GRANT);
	/* A process moved out of a job takes its memory with it. */
	ledger_client_group(l, c[2], 4);
	assert_int_equal(l->groups[1].share[0].nested, 0);
	assert_invariants(l);
	ledger_client_group(l, c[2], 3);
	assert_int_equal(l->groups[1].share[0].nested, 2 * GiB);
	assert_invariants(l);
	assert_int_equal(ledger_admit(l, c[1], 0, 3 * GiB),
	    LEDGER_GROUP_LIMIT);
	/* Bounds dropped: the jobs no longer count under the [group]. */
	ledger_groups_bound(l, NULL);
	assert_int_equal(l->groups[1].share[0].nested, 0);
	assert_int_equal(ledger_admit(l, c[1], 0, 3 * GiB), LEDGER_GRANT);
	assert_invariants(l);
}

static void
test_guarantees_shared_out(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c[5];

	user_with_two_jobs(l, c);
	/* The first job keeps its 1.5 GiB, the second what is left. */
	assert_int_equal(l->groups[2].share[0].guarantee, 1536 * MiB);
	assert_int_equal(l->groups[3].share[0].guarantee, 512 * MiB);
	assert_int_equal(l->groups[1].share[0].guarantee, 0);
	/* together no more than their user's: what others cannot take */
	assert_int_equal(ledger_available(l, 4, 0), 14 * GiB);
	/* on the other device too, percent or bytes alike */
	assert_int_equal(l->groups[3].share[1].guarantee, 512 * MiB);
}

static void
test_bounds_refused(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c[5];
	/* 1 itself, 2 out of range, 3 none, 4 3 */
	size_t bound[5] = { 0, 1, 9, 0, 3 };

	user_with_two_jobs(l, c);
	ledger_groups_bound(l, bound);
	assert_int_equal(l->groups[1].bound, 0);
	assert_int_equal(l->groups[2].bound, 0);
	assert_int_equal(l->groups[3].bound, 0);
	assert_int_equal(l->groups[4].bound, 3);
	bound[1] = 0;
	bound[3] = 1;		/* no chains: 4's bound is bounded now */
	ledger_groups_bound(l, bound);
	assert_int_equal(l->groups[3].bound, 1);
	assert_int_equal(l->groups[4].bound, 0);
	assert_invariants(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_jobs_together, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reach_under_bound, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_regroup_under_bound,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarantees_shared_out,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_refused, setup,
		    teardown),
	};

	log_init("test", -1, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
