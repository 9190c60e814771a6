/*
 * daemon/victims.c: who the preempt resolver takes memory from. Priority
 * order, equal priority spared, guarantees and on_preempt = none protect,
 * all or nothing, largest excess first, several processes of one group,
 * preemptions already under way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/victims.h"
#include "gpufrac/proto.h"

#define GiB	(1ull << 30)
#define MAXC	16

/* A group's settings and its processes' charges; used is their sum. */
struct group {
	uint32_t	 id;
	int32_t		 prio;
	uint64_t	 guarantee;
	uint32_t	 on_preempt;
	uint64_t	 releasing;
	size_t		 nprocs;
	uint64_t	 charges[4];
	uint64_t	 pids[4];
	int		 preempting[4];
};

struct run {
	struct victim_cand	 cand[MAXC];
	size_t			 ncand;
	const struct victim_cand *chosen[MAXC];
	struct victims_result	 res;
	size_t			 n;
};

static void
build(struct run *r, const struct group *g, size_t ngroups)
{
	size_t i, j;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < ngroups; i++) {
		uint64_t used = 0;

		for (j = 0; j < g[i].nprocs; j++)
			used += g[i].charges[j];
		for (j = 0; j < g[i].nprocs; j++) {
			struct victim_cand *c = &r->cand[r->ncand++];

			c->id = g[i].pids[j];
			c->group = g[i].id;
			c->priority = g[i].prio;
			c->on_preempt = g[i].on_preempt;
			c->preempting = g[i].preempting[j];
			c->charge = g[i].charges[j];
			c->group_used = used;
			c->group_guarantee = g[i].guarantee;
			c->group_releasing = g[i].releasing;
		}
	}
}

static size_t
pick(struct run *r, int32_t prio, uint64_t need)
{
	size_t i;

	/* Poison the result: victims_select must set every field. */
	memset(&r->res, 0xa5, sizeof(r->res));
	r->n = victims_select(prio, need, r->cand, r->ncand, r->chosen,
	    &r->res);
	assert_int_equal(r->n, r->res.nchosen);
	if (r->n == 0) {
		assert_int_equal(r->res.freed, 0);
		assert_int_equal(r->res.released, 0);
	} else {
		assert_true(r->res.freed >= need);
		assert_true(r->res.available >= r->res.freed);
		assert_true(r->res.released >= r->res.freed);
	}
	for (i = 0; i < r->n; i++)
		assert_true(r->chosen[i] >= r->cand &&
		    r->chosen[i] < r->cand + r->ncand);
	return r->n;
}

static void
assert_ids(const struct run *r, const uint64_t *ids, size_t n)
{
	size_t i;

	assert_int_equal(r->n, n);
	for (i = 0; i < n; i++)
		assert_int_equal(r->chosen[i]->id, ids[i]);
}

/* Lowest priority first, whatever the excess. */
static void
test_priority_order(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 5, .nprocs = 1, .charges = { 8 * GiB },
		    .pids = { 100 } },
		{ .id = 2, .prio = -5, .nprocs = 1, .charges = { 2 * GiB },
		    .pids = { 200 } },
		{ .id = 3, .prio = 0, .nprocs = 1, .charges = { 4 * GiB },
		    .pids = { 300 } },
	};
	static const uint64_t one[] = { 200 }, three[] = { 200, 300, 100 };
	struct run r;

	(void)state;
	build(&r, g, 3);
	assert_int_equal(pick(&r, 10, GiB), 1);
	assert_ids(&r, one, 1);
	assert_int_equal(r.res.freed, 2 * GiB);
	assert_int_equal(pick(&r, 10, 14 * GiB), 3);
	assert_ids(&r, three, 3);
	assert_int_equal(r.res.freed, 14 * GiB);
	assert_int_equal(r.res.released, 14 * GiB);
	assert_int_equal(r.res.available, 14 * GiB);
	/* A requester of priority 0 only reaches group 2. */
	assert_int_equal(pick(&r, 0, 2 * GiB), 1);
	assert_ids(&r, one, 1);
}

/* Equal priority is never preempted: not the own group, not a peer. */
static void
test_equal_priority(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 3, .nprocs = 1, .charges = { 8 * GiB },
		    .pids = { 100 } },
		{ .id = 2, .prio = 3, .nprocs = 1, .charges = { 8 * GiB },
		    .pids = { 200 } },
	};
	struct run r;

	(void)state;
	build(&r, g, 2);
	assert_int_equal(pick(&r, 3, GiB), 0);
	assert_int_equal(r.res.available, 0);
	assert_int_equal(pick(&r, 4, GiB), 1);
	assert_int_equal(pick(&r, 2, GiB), 0);
}

/* Only memory above the guarantee counts; a group at it is spared. */
static void
test_guarantee(void **state)
{
	static const struct group g[] = {
		/* at its guarantee: never chosen */
		{ .id = 1, .prio = 0, .guarantee = 4 * GiB, .nprocs = 1,
		    .charges = { 4 * GiB }, .pids = { 100 } },
		/* 6Gi above it, but only 2Gi counts */
		{ .id = 2, .prio = 1, .guarantee = 6 * GiB, .nprocs = 1,
		    .charges = { 8 * GiB }, .pids = { 200 } },
		/* below it */
		{ .id = 3, .prio = 0, .guarantee = 8 * GiB, .nprocs = 1,
		    .charges = { 1 * GiB }, .pids = { 300 } },
	};
	static const uint64_t two[] = { 200 };
	struct run r;

	(void)state;
	build(&r, g, 3);
	assert_int_equal(pick(&r, 10, 2 * GiB), 1);
	assert_ids(&r, two, 1);
	assert_int_equal(r.res.freed, 2 * GiB);
	assert_int_equal(r.res.released, 8 * GiB);
	/* 3Gi would take guaranteed memory: nobody. */
	assert_int_equal(pick(&r, 10, 3 * GiB), 0);
	assert_int_equal(r.res.available, 2 * GiB);
}

/* on_preempt = none protects the whole group; swap and kill do not. */
static void
test_none_protects(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 0, .on_preempt = GF_PREEMPT_NONE,
		    .nprocs = 1, .charges = { 16 * GiB }, .pids = { 100 } },
		{ .id = 2, .prio = 1, .on_preempt = GF_PREEMPT_KILL,
		    .nprocs = 1, .charges = { 2 * GiB }, .pids = { 200 } },
		{ .id = 3, .prio = 2, .on_preempt = GF_PREEMPT_SWAP,
		    .nprocs = 1, .charges = { 2 * GiB }, .pids = { 300 } },
	};
	static const uint64_t want[] = { 200, 300 };
	struct run r;

	(void)state;
	build(&r, g, 3);
	assert_int_equal(pick(&r, 10, 4 * GiB), 2);
	assert_ids(&r, want, 2);
	assert_int_equal(pick(&r, 10, 5 * GiB), 0);
	assert_int_equal(r.res.available, 4 * GiB);
}

/* All or nothing, and a need of 0 takes nobody. */
static void
test_insufficient(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 0, .guarantee = GiB, .nprocs = 2,
		    .charges = { 2 * GiB, 2 * GiB }, .pids = { 100, 101 } },
		{ .id = 2, .prio = 0, .nprocs = 1, .charges = { GiB },
		    .pids = { 200 } },
	};
	struct run r;

	(void)state;
	build(&r, g, 2);
	assert_int_equal(pick(&r, 1, 4 * GiB + 1), 0);
	assert_int_equal(r.res.available, 4 * GiB);
	assert_int_equal(pick(&r, 1, 4 * GiB), 3);
	assert_int_equal(pick(&r, 1, 0), 0);
	assert_int_equal(victims_select(1, GiB, NULL, 0, NULL, &r.res), 0);
	assert_int_equal(r.res.available, 0);
}

/* Among equal priorities, the group with the largest excess goes first. */
static void
test_largest_excess(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 0, .guarantee = 0, .nprocs = 1,
		    .charges = { 3 * GiB }, .pids = { 100 } },
		/* the largest charge, but only 2Gi of excess */
		{ .id = 2, .prio = 0, .guarantee = 8 * GiB, .nprocs = 1,
		    .charges = { 10 * GiB }, .pids = { 200 } },
		{ .id = 3, .prio = 0, .guarantee = 0, .nprocs = 1,
		    .charges = { 5 * GiB }, .pids = { 300 } },
		/* ties with group 3 on excess: the group id decides */
		{ .id = 4, .prio = 0, .guarantee = 0, .nprocs = 1,
		    .charges = { 5 * GiB }, .pids = { 400 } },
	};
	static const uint64_t want[] = { 300, 400, 100, 200 };
	struct run r;

	(void)state;
	build(&r, g, 4);
	assert_int_equal(pick(&r, 1, GiB), 1);
	assert_ids(&r, want, 1);
	assert_int_equal(pick(&r, 1, 15 * GiB), 4);
	assert_ids(&r, want, 4);
	assert_int_equal(r.res.freed, 15 * GiB);
	assert_int_equal(r.res.released, 23 * GiB);
}

/*
 * Several processes of one group: largest charge first, each counted up
 * to the excess left, and none once the group reaches its guarantee.
 */
static void
test_one_group(void **state)
{
	static const struct group g[] = {
		{ .id = 7, .prio = 0, .guarantee = 6 * GiB, .nprocs = 4,
		    .charges = { 1 * GiB, 4 * GiB, 2 * GiB, 3 * GiB },
		    .pids = { 10, 11, 12, 13 } },
	};
	static const uint64_t want[] = { 11 };
	struct run r;

	(void)state;
	build(&r, g, 1);
	/* excess 4Gi: pid 11 (4Gi) covers it; nobody else is taken */
	assert_int_equal(pick(&r, 1, 3 * GiB), 1);
	assert_ids(&r, want, 1);
	assert_int_equal(pick(&r, 1, 4 * GiB), 1);
	assert_int_equal(r.res.freed, 4 * GiB);
	assert_int_equal(r.res.available, 4 * GiB);
	assert_int_equal(pick(&r, 1, 4 * GiB + 1), 0);
}

/* The excess left is what the first victim leaves. */
static void
test_one_group_partial(void **state)
{
	static const struct group g[] = {
		{ .id = 7, .prio = 0, .guarantee = 5 * GiB, .nprocs = 3,
		    .charges = { 3 * GiB, 3 * GiB, 2 * GiB },
		    .pids = { 12, 10, 11 } },
	};
	static const uint64_t want[] = { 10, 12 };
	struct run r;

	(void)state;
	build(&r, g, 1);
	/* excess 3Gi; equal charges go by id */
	assert_int_equal(pick(&r, 1, 3 * GiB), 1);
	assert_ids(&r, want, 1);
	assert_int_equal(pick(&r, 1, 3 * GiB + 1), 0);

	/* guarantee 2Gi: excess 6Gi = 3 (pid 10) + 3 (pid 12) */
	r.cand[0].group_guarantee = r.cand[1].group_guarantee =
	    r.cand[2].group_guarantee = 2 * GiB;
	assert_int_equal(pick(&r, 1, 5 * GiB), 2);
	assert_ids(&r, want, 2);
	assert_int_equal(r.res.freed, 6 * GiB);
	assert_int_equal(r.res.released, 6 * GiB);
}

/*
 * A preemption under way: the process being preempted is not chosen again
 * and its release is no longer the group's excess.
 */
static void
test_under_way(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 0, .guarantee = 2 * GiB, .nprocs = 2,
		    .charges = { 4 * GiB, 3 * GiB }, .pids = { 100, 101 },
		    .preempting = { 1, 0 }, .releasing = 4 * GiB },
		{ .id = 2, .prio = 1, .nprocs = 1, .charges = { 2 * GiB },
		    .pids = { 200 } },
	};
	static const uint64_t want[] = { 101, 200 };
	struct run r;

	(void)state;
	build(&r, g, 2);
	/* group 1 keeps 3Gi after the release: 1Gi of excess, pid 101 */
	assert_int_equal(pick(&r, 5, GiB), 1);
	assert_ids(&r, want, 1);
	assert_int_equal(r.res.freed, GiB);
	assert_int_equal(r.res.released, 3 * GiB);
	assert_int_equal(pick(&r, 5, 3 * GiB), 2);
	assert_ids(&r, want, 2);
	assert_int_equal(pick(&r, 5, 3 * GiB + 1), 0);
	assert_int_equal(r.res.available, 3 * GiB);
}

/* A process with nothing on the device is never a victim. */
/* The swap resolver's pick: least recently active, within the rules. */
static void
test_swap_pick(void **state)
{
	struct swap_cand c[] = {
		/* id, eligible, prio, idle, charge, group used, guar., group */
		{ 1, 1, 0, 500, 1 << 20, 4 << 20, 0, 1 },
		{ 2, 1, 0, 900, 1 << 20, 4 << 20, 0, 1 },	/* most idle */
		{ 3, 0, 0, 9000, 1 << 20, 4 << 20, 0, 1 },	/* not eligible */
		{ 4, 1, 5, 8000, 1 << 20, 4 << 20, 0, 1 },	/* higher priority */
		{ 5, 1, 0, 7000, 3 << 20, 4 << 20, 2 << 20, 1 }, /* guarantee */
		{ 6, 1, 0, 6000, 0, 4 << 20, 0, 1 },	/* nothing held */
	};

	(void)state;
	assert_int_equal(victims_swap_pick(0, c, 6), 1);
	/* Taking 5 whole would leave its group 1 MiB, under 2 MiB. */
	c[4].charge = 2 << 20;
	assert_int_equal(victims_swap_pick(0, c, 6), 4);
	/* A requester of priority 5 may take priority 5. */
	assert_int_equal(victims_swap_pick(5, c, 6), 3);
	/* Ties: the larger charge, then the smaller id. */
	c[0].idle_ms = c[1].idle_ms = 1;
	c[3].eligible = c[4].eligible = 0;
	c[0].charge = 2 << 20;
	assert_int_equal(victims_swap_pick(0, c, 6), 0);
	c[0].charge = 1 << 20;
	assert_int_equal(victims_swap_pick(0, c, 6), 0);
	/* Nobody left. */
	c[0].eligible = c[1].eligible = 0;
	assert_int_equal(victims_swap_pick(0, c, 6), -1);
	assert_int_equal(victims_swap_pick(0, c, 0), -1);
}

/*
 * Whether swapping out could ever make room: one after another, each
 * lowering its group's use, so that a guarantee stops the group's next.
 */
static void
test_swap_covers(void **state)
{
	/* id, eligible, prio, idle, charge, group used, guar., group */
	const struct swap_cand c0[] = {
		{ 1, 1, 0, 500, 1 << 20, 3 << 20, 1 << 20, 1 },
		{ 2, 1, 0, 900, 1 << 20, 3 << 20, 1 << 20, 1 },
		{ 3, 1, 0, 700, 1 << 20, 3 << 20, 1 << 20, 1 },
		{ 4, 1, 0, 100, 2 << 20, 2 << 20, 0, 2 },
		{ 5, 0, 0, 9000, 8 << 20, 8 << 20, 0, 2 },	/* busy */
	};
	struct swap_cand c[5];

	(void)state;
	/* Group 1 may give two of its three (its guarantee keeps one). */
	memcpy(c, c0, sizeof(c));
	assert_true(victims_swap_covers(0, c, 5, 4 << 20));
	assert_int_equal(c[0].eligible + c[1].eligible + c[2].eligible, 1);
	memcpy(c, c0, sizeof(c));
	assert_false(victims_swap_covers(0, c, 5, (4 << 20) + 1));
	/* Not those of a higher priority than the requester's. */
	memcpy(c, c0, sizeof(c));
	c[3].priority = 1;
	assert_false(victims_swap_covers(0, c, 5, 3 << 20));
	memcpy(c, c0, sizeof(c));
	assert_true(victims_swap_covers(0, c, 5, 0));
	assert_false(victims_swap_covers(0, c, 0, 1));
}

static void
test_zero_charge(void **state)
{
	static const struct group g[] = {
		{ .id = 1, .prio = 0, .nprocs = 2, .charges = { 0, GiB },
		    .pids = { 100, 101 } },
	};
	static const uint64_t want[] = { 101 };
	struct run r;

	(void)state;
	build(&r, g, 1);
	assert_int_equal(pick(&r, 1, GiB), 1);
	assert_ids(&r, want, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_order),
		cmocka_unit_test(test_equal_priority),
		cmocka_unit_test(test_guarantee),
		cmocka_unit_test(test_none_protects),
		cmocka_unit_test(test_insufficient),
		cmocka_unit_test(test_largest_excess),
		cmocka_unit_test(test_one_group),
		cmocka_unit_test(test_one_group_partial),
		cmocka_unit_test(test_under_way),
		cmocka_unit_test(test_zero_charge),
		cmocka_unit_test(test_swap_pick),
		cmocka_unit_test(test_swap_covers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
