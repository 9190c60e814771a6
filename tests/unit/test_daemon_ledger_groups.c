/*
 * daemon/ledger.c, groups: a limit shared by their clients, a client's own
 * request, client_may_raise, an administrator's limit, regrouping; and
 * guarantees: the check that they fit a device, what they hold back from
 * other groups, and lending them to borrowers.
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

static void
test_group_shared_limit(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_BYTES, 6 * GiB);
	struct ledger_client *a, *b, *solo, *solo2;

	set_groups(l, &team, 1);
	a = ledger_client_new(l, 1, 0, 0, NULL);
	b = ledger_client_new(l, 2, 0, 0, NULL);
	solo = ledger_client_new(l, 3, 0, 0, NULL);
	ledger_client_group(l, a, 1);
	ledger_client_group(l, b, 1);
	assert_int_equal(l->groups[1].nmembers, 2);
	assert_int_equal(l->groups[0].nmembers, 1);
	ledger_open(l, a, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, b, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, solo, 0, GF_LIMIT_NONE, 0);
	/* Each may use the whole group limit, but not both together. */
	assert_int_equal(a->usage[0].limit, 6 * GiB);
	assert_int_equal(b->usage[0].limit, 6 * GiB);
	assert_int_equal(l->groups[1].share[0].limit, 6 * GiB);
	assert_int_equal(ledger_reserve(l, a, 0, 4 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reserve(l, b, 0, 2 * GiB), LEDGER_GRANT);
	assert_int_equal(l->groups[1].share[0].used, 6 * GiB);
	assert_int_equal(ledger_reserve(l, b, 0, 1), LEDGER_GROUP_LIMIT);
	assert_int_equal(ledger_reserve(l, a, 0, MiB), LEDGER_GROUP_LIMIT);
	assert_int_equal(b->usage[0].used, 2 * GiB);
	/* The limit is per device: the other device is free. */
	ledger_open(l, b, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, b, 1, 6 * GiB), LEDGER_GRANT);
	/* "default"'s limit is each process's own, not shared. */
	ledger_set_default_limit(l, GF_LIMIT_PERCENT, 2500);
	assert_int_equal(solo->usage[0].limit, 4 * GiB);
	assert_int_equal(ledger_reserve(l, solo, 0, 4 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reserve(l, solo, 0, 1), LEDGER_LIMIT);
	solo2 = ledger_client_new(l, 4, 0, 0, NULL);
	ledger_open(l, solo2, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, solo2, 0, 4 * GiB), LEDGER_GRANT);
	/* Within every limit, beyond the device: a collision. */
	assert_int_equal(ledger_reserve(l, solo2, 1, GiB), LEDGER_NOT_OPEN);
	ledger_open(l, solo2, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, solo2, 1, GiB), LEDGER_GRANT);
	ledger_open(l, solo, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, solo, 1, 2 * GiB),
	    LEDGER_COLLISION);
	/* What one returns, another may take. */
	assert_int_equal(ledger_rollback(l, a, 0, 4 * GiB), 0);
	assert_int_equal(l->groups[1].share[0].used, 2 * GiB);
	assert_int_equal(ledger_reserve(l, b, 0, 4 * GiB), LEDGER_GRANT);
	assert_invariants(l);
	/* A departing client's charge leaves its group's too. */
	ledger_client_drop(l, b);
	assert_int_equal(l->groups[1].share[0].used, 0);
	assert_int_equal(l->groups[1].share[1].used, 0);
	assert_int_equal(l->groups[1].nmembers, 1);
	assert_invariants(l);
}

/* Groups "default" and team; *a and *b, uids 1 and 2, in team. */
static void
team_of_two(struct ledger *l, struct group_policy *team,
    struct ledger_client **a, struct ledger_client **b)
{
	set_groups(l, team, 1);
	*a = ledger_client_new(l, 1, 0, 0, NULL);
	*b = ledger_client_new(l, 2, 0, 0, NULL);
	ledger_client_group(l, *a, 1);
	ledger_client_group(l, *b, 1);
}

/*
 * What a client is shown it may hold (issue 25): its group's limit less
 * what the others hold, the device's room plus its own; the unused leases
 * it is told of count as free; what it holds itself does not move it.
 */
static void
test_reach(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_BYTES, 6 * GiB);
	struct ledger_spare none = { 0, 0, 0 }, sp_a = { GiB, GiB, GiB };
	struct ledger_spare sp_b = { 0, GiB, GiB };
	struct ledger_client *a, *b, *solo;

	set_groups(l, &team, 1);
	a = ledger_client_new(l, 1, 0, 0, NULL);
	b = ledger_client_new(l, 2, 0, 0, NULL);
	solo = ledger_client_new(l, 3, 0, 0, NULL);
	ledger_client_group(l, a, 1);
	ledger_client_group(l, b, 1);
	assert_int_equal(ledger_reach(l, b, 0, &none), 0);	/* not open */
	ledger_open(l, a, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, b, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, solo, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reach(l, b, 0, &none), 6 * GiB);
	/* a holds 4 GiB and a lease of 1 GiB it has not drawn from. */
	assert_int_equal(ledger_reserve(l, a, 0, 4 * GiB), LEDGER_GRANT);
	ledger_lease_grow(l, a, 0, GiB);
	assert_int_equal(ledger_reach(l, b, 0, &sp_b), 2 * GiB);
	assert_int_equal(ledger_reach(l, b, 0, &none), GiB);
	assert_int_equal(ledger_reach(l, a, 0, &sp_a), 6 * GiB);
	/* b's own charge leaves its reach as it was. */
	assert_int_equal(ledger_reserve(l, b, 0, GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reach(l, b, 0, &sp_b), 2 * GiB);
	/* The device: 16 GiB less 5 allocated, less memory nobody charged. */
	assert_int_equal(ledger_reach(l, solo, 0, &sp_b), 11 * GiB);
	l->devices[0].foreign = 3 * GiB;
	assert_int_equal(ledger_reach(l, solo, 0, &sp_b), 8 * GiB);
	l->devices[0].foreign = 0;
	assert_invariants(l);
}

static void
test_group_own_request(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_PERCENT, 5000);
	struct ledger_client *a, *b;

	team_of_two(l, &team, &a, &b);
	/* A request narrows a client's own share ... */
	ledger_open(l, a, 0, GF_LIMIT_BYTES, 2 * GiB);
	assert_int_equal(a->usage[0].limit, 2 * GiB);
	assert_int_equal(ledger_reserve(l, a, 0, 2 * GiB + 1), LEDGER_LIMIT);
	/* ... and never widens it beyond the group's. */
	ledger_open(l, b, 0, GF_LIMIT_BYTES, 12 * GiB);
	assert_int_equal(b->usage[0].limit, 8 * GiB);
	ledger_open(l, b, 1, GF_LIMIT_PERCENT, 10000);
	assert_int_equal(b->usage[1].limit, 4 * GiB);
	/* The group's limit still holds the narrowed one back. */
	assert_int_equal(ledger_reserve(l, b, 0, 7 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reserve(l, a, 0, 2 * GiB),
	    LEDGER_GROUP_LIMIT);
	assert_int_equal(ledger_reserve(l, a, 0, GiB), LEDGER_GRANT);
	assert_invariants(l);
}

static void
test_group_may_raise(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_BYTES, 4 * GiB);
	struct ledger_client *raiser, *plain;

	team.client_may_raise = 1;
	team_of_two(l, &team, &raiser, &plain);
	/* Its request is its limit, above the group's, up to the device. */
	ledger_open(l, raiser, 0, GF_LIMIT_BYTES, 10 * GiB);
	assert_int_equal(raiser->usage[0].limit, 10 * GiB);
	ledger_open(l, raiser, 1, GF_LIMIT_BYTES, 100 * GiB);
	assert_int_equal(raiser->usage[1].limit, 8 * GiB);
	ledger_open(l, raiser, 1, GF_LIMIT_PERCENT, 7500);
	assert_int_equal(raiser->usage[1].limit, 6 * GiB);
	/* The group's limit does not hold its requests back ... */
	assert_int_equal(ledger_reserve(l, raiser, 0, 8 * GiB), LEDGER_GRANT);
	/* ... but its charge counts in the group's use. */
	assert_int_equal(l->groups[1].share[0].used, 8 * GiB);
	/* A client that asks for nothing gets the group's limit, shared. */
	ledger_open(l, plain, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(plain->usage[0].limit, 4 * GiB);
	assert_int_equal(ledger_reserve(l, plain, 0, MiB),
	    LEDGER_GROUP_LIMIT);
	assert_int_equal(ledger_reserve(l, plain, 1, MiB), LEDGER_NOT_OPEN);
	ledger_open(l, plain, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, plain, 1, 4 * GiB), LEDGER_GRANT);
	assert_invariants(l);
	/* The default group may allow it too ([daemon] client_may_raise). */
	l->groups[0].pol.client_may_raise = 1;
	ledger_set_default_limit(l, GF_LIMIT_PERCENT, 2500);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_BYTES, 12 * GiB),
	    12 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_NONE, 0), 4 * GiB);
}

/* An administrator's limit replaces the request, within the group's. */
static void
test_client_limit(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_BYTES, 6 * GiB);
	struct ledger_client *c;
	uint64_t allowed;

	set_groups(l, &team, 1);
	c = ledger_client_new(l, 1, 1, 0, NULL);	/* uid 1: group 1 */
	ledger_client_group(l, c, 1);
	assert_int_equal(ledger_client_limit(l, c, 0, GF_LIMIT_BYTES, GiB,
	    &allowed), -1);			/* not opened */
	ledger_open(l, c, 0, GF_LIMIT_BYTES, 2 * GiB);
	assert_int_equal(ledger_reserve(l, c, 0, GiB), LEDGER_GRANT);
	/* Raised above what the process asked for, up to the group's. */
	assert_int_equal(ledger_client_limit(l, c, 0, GF_LIMIT_BYTES,
	    5 * GiB, &allowed), 0);
	assert_int_equal(c->usage[0].limit, 5 * GiB);
	assert_int_equal(allowed, 6 * GiB);
	assert_int_equal(ledger_client_limit(l, c, 0, GF_LIMIT_BYTES,
	    7 * GiB, &allowed), -1);
	assert_int_equal(c->usage[0].limit, 5 * GiB);
	/* A share is of the device's capacity. */
	assert_int_equal(ledger_client_limit(l, c, 0, GF_LIMIT_PERCENT, 2500,
	    &allowed), 0);
	assert_int_equal(c->usage[0].limit, 4 * GiB);
	/* Below what it holds: nothing taken, the next request refused. */
	assert_int_equal(ledger_client_limit(l, c, 0, GF_LIMIT_BYTES,
	    GiB / 2, &allowed), 0);
	assert_int_equal(c->usage[0].used, GiB);
	assert_int_equal(ledger_reserve(l, c, 0, 1), LEDGER_LIMIT);
	/* The group's limit shrinking later still holds it. */
	team.limit_value = GiB / 4;
	set_groups(l, &team, 1);
	assert_int_equal(c->usage[0].limit, GiB / 4);
	assert_invariants(l);
}

/* What is lent: used + unused guarantees beyond capacity, held by whom. */
static void
assert_lending(const struct ledger *l, size_t dev, uint64_t lent)
{
	uint64_t borrowed[8], sum = 0, unused = 0;
	size_t i;

	assert_true(l->ngroups <= 8);
	for (i = 0; i < l->ngroups; i++) {
		const struct ledger_share *sh = &l->groups[i].share[dev];

		if (sh->guarantee > sh->used)
			unused += sh->guarantee - sh->used;
	}
	assert_int_equal(ledger_lent(l, dev), lent);
	assert_int_equal(l->devices[dev].used + unused >
	    l->devices[dev].capacity ? l->devices[dev].used + unused -
	    l->devices[dev].capacity : 0, lent);
	ledger_borrowed(l, dev, borrowed);
	for (i = 0; i < l->ngroups; i++) {
		sum += borrowed[i];
		/* only borrowers, and never more than above their own */
		if (!ledger_borrows(l, i))
			assert_int_equal(borrowed[i], 0);
		else
			assert_true(borrowed[i] <= (l->groups[i].share[dev].used >
			    l->groups[i].share[dev].guarantee ?
			    l->groups[i].share[dev].used -
			    l->groups[i].share[dev].guarantee : 0));
	}
	assert_int_equal(sum, lent);
}

/*
 * The clients of the lending tests, each open on device 0: o of "owner"
 * (a 6Gi guarantee), b of "batch" (priority -1), k of "keep" (on_preempt
 * none) and d of "default" (on_preempt kill).
 */
struct lenders {
	struct ledger_client *o, *b, *k, *d;
};

static void
lenders_make(struct ledger *l, struct lenders *c)
{
	struct group_policy g[3] = {
		policy("owner", GF_LIMIT_PERCENT, 10000),
		policy("batch", GF_LIMIT_PERCENT, 10000),
		policy("keep", GF_LIMIT_PERCENT, 10000),
	};

	g[0].guarantee_value = 6 * GiB;
	g[1].priority = -1;
	g[2].on_preempt = GF_PREEMPT_NONE;
	set_groups(l, g, 3);
	c->o = ledger_client_new(l, 10, 1, 1, NULL);
	c->b = ledger_client_new(l, 11, 2, 2, NULL);
	c->k = ledger_client_new(l, 12, 3, 3, NULL);
	c->d = ledger_client_new(l, 13, 0, 0, NULL);	/* default: kill */
	ledger_client_group(l, c->o, 1);
	ledger_client_group(l, c->b, 2);
	ledger_client_group(l, c->k, 3);
	ledger_open(l, c->o, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c->b, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c->k, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c->d, 0, GF_LIMIT_NONE, 0);
}

/*
 * Lending off, every guarantee is held back; on, a borrower (on_preempt
 * kill or swap) may take unused guarantees, a group with on_preempt none
 * may not; leases never borrow.
 */
static void
test_lending_switch(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct lenders c;

	lenders_make(l, &c);
	assert_int_equal(ledger_borrows(l, 2), 0);
	assert_int_equal(ledger_available(l, 2, 0), 10 * GiB);
	assert_int_equal(ledger_available_ever(l, 2, 0), 10 * GiB);
	l->lend = 1;
	assert_int_equal(ledger_borrows(l, 0), 1);
	assert_int_equal(ledger_borrows(l, 2), 1);
	assert_int_equal(ledger_borrows(l, 3), 0);
	assert_int_equal(ledger_available(l, 2, 0), 16 * GiB);
	assert_int_equal(ledger_available_ever(l, 2, 0), 16 * GiB);
	assert_int_equal(ledger_available(l, 3, 0), 10 * GiB);
	assert_int_equal(ledger_available_ever(l, 3, 0), 10 * GiB);
	/* A lease is no reason to borrow. */
	assert_int_equal(ledger_headroom(l, c.b, 0), 10 * GiB);
	assert_lending(l, 0, 0);
	assert_invariants(l);
}

/*
 * What is lent is held by the borrowers, lowest priority first; the owner
 * is within its guarantee or not; lending switched off keeps what is lent.
 */
static void
test_lending_borrowers(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	uint64_t borrowed[4];
	struct lenders c;

	lenders_make(l, &c);
	l->lend = 1;
	/* batch takes 12: 2 of the owner's 6 are lent to it. */
	assert_int_equal(ledger_reserve(l, c.b, 0, 12 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, 2 * GiB);
	ledger_borrowed(l, 0, borrowed);
	assert_int_equal(borrowed[2], 2 * GiB);
	/* keep gets nothing: 4 left, all of them the owner's. */
	assert_int_equal(ledger_admit(l, c.k, 0, 1), LEDGER_COLLISION);
	/* default (priority 0) borrows 3 more of them. */
	assert_int_equal(ledger_reserve(l, c.d, 0, 3 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, 5 * GiB);
	ledger_borrowed(l, 0, borrowed);
	/* batch (priority -1) would give back first: it holds 5 of them. */
	assert_int_equal(borrowed[2], 5 * GiB);
	assert_int_equal(borrowed[0], 0);
	/* The owner: 6 within its guarantee, 1 free for it now. */
	assert_true(ledger_within_guarantee(l, c.o, 0, 6 * GiB));
	assert_false(ledger_within_guarantee(l, c.o, 0, 6 * GiB + 1));
	assert_false(ledger_within_guarantee(l, c.b, 0, 1));
	assert_int_equal(ledger_available(l, 1, 0), GiB);
	assert_int_equal(ledger_admit(l, c.o, 0, 2 * GiB), LEDGER_COLLISION);
	/* As the borrowers give back, the owner's use takes the lent part. */
	assert_int_equal(ledger_rollback(l, c.b, 0, 4 * GiB), 0);
	assert_lending(l, 0, GiB);
	assert_int_equal(ledger_reserve(l, c.o, 0, 5 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, GiB);	/* its sixth is still lent */
	assert_true(ledger_within_guarantee(l, c.o, 0, GiB));
	assert_false(ledger_within_guarantee(l, c.o, 0, 2 * GiB));
	/* Off again (a reload): nothing more is lent; what is, stays. */
	l->lend = 0;
	assert_int_equal(ledger_lent(l, 0), GiB);
	assert_int_equal(ledger_available(l, 2, 0), 0);
	assert_true(ledger_within_guarantee(l, c.o, 0, GiB));
	assert_invariants(l);
}

static void
test_groups_set(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy g[2] = {
		policy("a", GF_LIMIT_BYTES, 2 * GiB),
		policy("b", GF_LIMIT_PERCENT, 2500),
	};
	struct ledger_client *c1 = ledger_client_new(l, 1, 1, 0, NULL);
	struct ledger_client *c2 = ledger_client_new(l, 2, 2, 0, NULL);
	struct ledger_client *c9 = ledger_client_new(l, 3, 9, 0, NULL);

	ledger_open(l, c1, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c2, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c2, 1, GF_LIMIT_BYTES, GiB);
	ledger_open(l, c9, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, c1, 0, 3 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, c2, 1, 0x1, 0, 512 * MiB,
	    GF_KIND_MEM, 0), 0);
	c1->usage[0].limit_sent = c1->usage[0].limit;
	/* uid 1 -> "a", 2 -> "b", 9 is out of range -> "default". */
	set_groups(l, g, 2);
	assert_int_equal(c1->group, 1);
	assert_int_equal(c2->group, 2);
	assert_int_equal(c9->group, 0);
	assert_string_equal(l->groups[c2->group].pol.name, "b");
	/* Limits recomputed; a client above its new one keeps its charge. */
	assert_int_equal(c1->usage[0].limit, 2 * GiB);
	assert_int_equal(c1->usage[0].limit_sent, 16 * GiB);
	assert_int_equal(c1->usage[0].used, 3 * GiB);
	assert_int_equal(ledger_reserve(l, c1, 0, 1), LEDGER_LIMIT);
	assert_int_equal(c2->usage[0].limit, 4 * GiB);
	assert_int_equal(c2->usage[1].limit, GiB);
	assert_int_equal(l->groups[1].share[0].used, 3 * GiB);
	assert_int_equal(l->groups[2].share[1].used, 512 * MiB);
	assert_int_equal(l->groups[2].share[0].nclients, 1);
	assert_int_equal(l->groups[2].share[1].nclients, 1);
	assert_int_equal(l->groups[2].share[1].limit, 2 * GiB);
	assert_invariants(l);
	/* A reserve changes the shares resolved from percentages. */
	ledger_set_reserve(l, 0, 8 * GiB);
	assert_int_equal(l->groups[2].share[0].limit, 2 * GiB);
	assert_int_equal(c2->usage[0].limit, 2 * GiB);
	/* Moving a client moves its charge. */
	ledger_client_group(l, c1, 2);
	assert_int_equal(l->groups[1].share[0].used, 0);
	assert_int_equal(l->groups[2].share[0].used, 3 * GiB);
	assert_int_equal(c1->usage[0].limit, 2 * GiB);
	assert_invariants(l);
}

static void
test_guarantees_fit(void **state)
{
	struct fixture *f = *state;
	struct group_policy g[3] = {
		policy("default", GF_LIMIT_PERCENT, 10000),
		policy("trainer", GF_LIMIT_PERCENT, 10000),
		policy("infer", GF_LIMIT_PERCENT, 10000),
	};
	char msg[512];

	g[1].guarantee_value = 8 * GiB;
	g[2].guarantee_value = 4 * GiB;
	msg[0] = '\0';
	assert_int_equal(ledger_guarantees_fit(&f->l.devices[0], 12 * GiB, g,
	    3, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(ledger_guarantees_fit(&f->l.devices[0], 10 * GiB, g,
	    3, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "guarantees on "
	    "GPU-10101010-1010-1010-1010-101010101010 (device 0) add up to "
	    "12.0GiB, more than its 10.0GiB shareable capacity: "
	    "trainer 8.0GiB, infer 4.0GiB");
	/* Shares are of the capacity given (after the new reserve). */
	g[2].guarantee_kind = GF_LIMIT_PERCENT;
	g[2].guarantee_value = 5000;
	assert_int_equal(ledger_guarantees_fit(&f->l.devices[1], 16 * GiB, g,
	    3, msg, sizeof(msg)), 0);
	assert_int_equal(ledger_guarantees_fit(&f->l.devices[1], 15 * GiB, g,
	    3, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "guarantees on "
	    "GPU-11111111-1111-1111-1111-111111111111 (device 1) add up to "
	    "15.5GiB, more than its 15.0GiB shareable capacity: "
	    "trainer 8.0GiB, infer 7.5GiB");
}

/*
 * A guarantee is capacity reserved for its group: what a group may take is
 * the capacity less everybody's use less the other groups' unused
 * guarantees; its own guarantee does not hold it back.
 */
static void
test_available_with_guarantees(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy g[2] = {
		policy("trainer", GF_LIMIT_PERCENT, 10000),
		policy("infer", GF_LIMIT_PERCENT, 10000),
	};
	struct ledger_client *a, *b, *d;

	g[0].guarantee_value = 6 * GiB;
	g[1].guarantee_value = 4 * GiB;
	set_groups(l, g, 2);
	a = ledger_client_new(l, 10, 1, 1, NULL);	/* trainer */
	b = ledger_client_new(l, 11, 2, 2, NULL);	/* infer */
	d = ledger_client_new(l, 12, 0, 0, NULL);	/* default */
	ledger_client_group(l, a, 1);
	ledger_client_group(l, b, 2);
	ledger_open(l, a, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, b, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, d, 0, GF_LIMIT_NONE, 0);
	/* 16Gi: nothing used; 6 + 4 held for the groups that own them. */
	assert_int_equal(ledger_available(l, 0, 0), 6 * GiB);
	assert_int_equal(ledger_available(l, 1, 0), 12 * GiB);
	assert_int_equal(ledger_available(l, 2, 0), 10 * GiB);
	assert_int_equal(ledger_available_ever(l, 0, 0), 6 * GiB);
	assert_int_equal(ledger_available_ever(l, 1, 0), 12 * GiB);
	/* trainer uses 2 of its 6: 4 still held back from the others. */
	assert_int_equal(ledger_reserve(l, a, 0, 2 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_available(l, 0, 0), 6 * GiB);
	assert_int_equal(ledger_available(l, 1, 0), 10 * GiB);
	assert_int_equal(ledger_available(l, 2, 0), 10 * GiB);
	/* default may take 6, not 6 and a byte. */
	assert_int_equal(ledger_admit(l, d, 0, 6 * GiB + 1), LEDGER_COLLISION);
	assert_int_equal(ledger_reserve(l, d, 0, 6 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_available(l, 0, 0), 0);
	/* infer still gets its guarantee, trainer the rest of its own. */
	assert_int_equal(ledger_available(l, 2, 0), 4 * GiB);
	assert_int_equal(ledger_available(l, 1, 0), 4 * GiB);
	assert_int_equal(ledger_admit(l, b, 0, 4 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_admit(l, a, 0, 4 * GiB + 1), LEDGER_COLLISION);
	assert_int_equal(ledger_reserve(l, a, 0, 4 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_available(l, 2, 0), 4 * GiB);
	assert_int_equal(ledger_available(l, 0, 0), 0);
	/* Held back beyond capacity clamps at 0, never wraps. */
	assert_int_equal(ledger_commit(l, d, 0, 0x10, 0, 4 * GiB, GF_KIND_MEM,
	    0), 0);
	assert_int_equal(ledger_available(l, 1, 0), 0);
	assert_int_equal(ledger_available(l, 0, 0), 0);
	assert_invariants(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_group_shared_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_own_request, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_group_may_raise, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lending_switch, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lending_borrowers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_client_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_groups_set, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_available_with_guarantees,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarantees_fit, setup,
		    teardown),
	};

	log_init("test", -1, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
