/*
 * daemon/ledger.c: limit resolution, reserves within and beyond the limit,
 * collisions, commits, leases, rollbacks, releases, a departing client,
 * that nothing ever wraps below zero, and host swap moving charges to
 * host and back. Groups, guarantees and lending: test_daemon_ledger_groups.c.
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
test_devices(void **state)
{
	struct fixture *f = *state;
	uint8_t other[GF_UUID_LEN];

	assert_int_equal(ledger_device_find(&f->l, f->uuid[1]), 1);
	memset(other, 0x77, sizeof(other));
	assert_int_equal(ledger_device_find(&f->l, other), -1);
	assert_string_equal(f->l.devices[0].name, "Big");
	assert_int_equal(f->l.devices[0].capacity, 16 * GiB);
	ledger_set_reserve(&f->l, 0, 2 * GiB);
	assert_int_equal(f->l.devices[0].reserve, 2 * GiB);
	assert_int_equal(f->l.devices[0].capacity, 14 * GiB);
	/* Clamped: callers validate, the ledger never wraps. */
	ledger_set_reserve(&f->l, 1, 9 * GiB);
	assert_int_equal(f->l.devices[1].capacity, 0);
	/* No device joins once clients exist. */
	assert_non_null(ledger_client_new(&f->l, 1, 0, 0, NULL));
	assert_int_equal(ledger_device_add(&f->l, other, 2, "x", GiB), -1);
}

static void
test_limit_resolution(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;

	/* Default 100%: no request gets the whole shareable capacity. */
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_NONE, 0), 16 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_BYTES, 4 * GiB),
	    4 * GiB);
	assert_int_equal(ledger_limit(l, 0, 1, GF_LIMIT_PERCENT, 2500), 2 * GiB);
	/* Asking for more than the default gets the default. */
	ledger_set_default_limit(l, GF_LIMIT_PERCENT, 5000);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_NONE, 0), 8 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_PERCENT, 10000),
	    8 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_BYTES, 12 * GiB),
	    8 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_BYTES, 3 * GiB),
	    3 * GiB);
	/* A byte default is the same on every device ... */
	ledger_set_default_limit(l, GF_LIMIT_BYTES, 6 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_NONE, 0), 6 * GiB);
	assert_int_equal(ledger_limit(l, 0, 1, GF_LIMIT_PERCENT, 10000),
	    6 * GiB);
	assert_int_equal(ledger_limit(l, 0, 1, GF_LIMIT_PERCENT, 5000), 4 * GiB);
	/* ... a percentage is of the capacity, after the reserve. */
	ledger_set_default_limit(l, GF_LIMIT_PERCENT, 10000);
	ledger_set_reserve(l, 0, 4 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_PERCENT, 5000), 6 * GiB);
	assert_int_equal(ledger_limit(l, 0, 0, GF_LIMIT_NONE, 0), 12 * GiB);
}

static void
test_open_and_reconfigure(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 42, 1000, 100,
	    "/user.slice");

	assert_non_null(c);
	assert_int_equal(c->group, 0);
	assert_string_equal(l->groups[0].pol.name, "default");
	assert_int_equal(l->groups[0].nmembers, 1);
	assert_string_equal(c->cgroup, "/user.slice");
	assert_int_equal(c->state, GF_STATE_RUNNING);
	assert_int_equal(l->groups[0].share[0].guarantee, 0);
	ledger_open(l, c, 0, GF_LIMIT_PERCENT, 5000);
	assert_int_equal(c->usage[0].limit, 8 * GiB);
	assert_int_equal(l->devices[0].nclients, 1);
	/* Opening again replaces the request, and counts once. */
	ledger_open(l, c, 0, GF_LIMIT_BYTES, GiB);
	assert_int_equal(c->usage[0].limit, GiB);
	assert_int_equal(l->devices[0].nclients, 1);
	/* A reload recomputes limits of clients already there. */
	ledger_open(l, c, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(c->usage[1].limit, 8 * GiB);
	ledger_set_default_limit(l, GF_LIMIT_PERCENT, 2500);
	assert_int_equal(c->usage[1].limit, 2 * GiB);
	assert_int_equal(c->usage[0].limit, GiB);
	ledger_set_reserve(l, 1, 4 * GiB);
	assert_int_equal(c->usage[1].limit, GiB);
}

static void
test_reserve(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);

	/* Not opened: nothing charged. */
	assert_int_equal(ledger_reserve(l, c, 0, MiB), LEDGER_NOT_OPEN);
	ledger_open(l, c, 0, GF_LIMIT_BYTES, 4 * GiB);
	/* Within the limit. */
	assert_int_equal(ledger_reserve(l, c, 0, 3 * GiB), LEDGER_GRANT);
	assert_int_equal(c->usage[0].used, 3 * GiB);
	assert_int_equal(c->usage[0].pending, 3 * GiB);
	assert_int_equal(l->devices[0].used, 3 * GiB);
	/* Up to the limit exactly. */
	assert_int_equal(ledger_reserve(l, c, 0, GiB), LEDGER_GRANT);
	/* One byte beyond the limit: denied, nothing charged. */
	assert_int_equal(ledger_reserve(l, c, 0, 1), LEDGER_LIMIT);
	assert_int_equal(c->usage[0].used, 4 * GiB);
	assert_int_equal(l->devices[0].used, 4 * GiB);
	/* A size that would overflow 64 bits is beyond any limit. */
	assert_int_equal(ledger_reserve(l, c, 0, UINT64_MAX), LEDGER_LIMIT);
	assert_invariants(l);
}

static void
test_collision(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *a = ledger_client_new(l, 1, 0, 0, NULL);
	struct ledger_client *b = ledger_client_new(l, 2, 0, 0, NULL);

	ledger_open(l, a, 1, GF_LIMIT_BYTES, 6 * GiB);
	ledger_open(l, b, 1, GF_LIMIT_BYTES, 6 * GiB);
	assert_int_equal(ledger_reserve(l, a, 1, 6 * GiB), LEDGER_GRANT);
	/* Within b's own limit, but the 8Gi device holds only 2Gi more. */
	assert_int_equal(ledger_reserve(l, b, 1, 3 * GiB), LEDGER_COLLISION);
	assert_int_equal(b->usage[1].used, 0);
	assert_int_equal(l->devices[1].used, 6 * GiB);
	assert_int_equal(ledger_reserve(l, b, 1, 2 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reserve(l, b, 1, 1), LEDGER_COLLISION);
	/* The limit is checked first. */
	assert_int_equal(ledger_reserve(l, b, 1, 5 * GiB), LEDGER_LIMIT);
	/* The reserve shrinks what can be shared. */
	ledger_rollback(l, a, 1, 6 * GiB);
	ledger_set_reserve(l, 1, 4 * GiB);
	assert_int_equal(ledger_reserve(l, a, 1, 2 * GiB + 1),
	    LEDGER_COLLISION);
	assert_int_equal(ledger_reserve(l, a, 1, 2 * GiB), LEDGER_GRANT);
	assert_invariants(l);
}

static void
test_commit(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);
	struct ledger_alloc *a;

	ledger_open(l, c, 0, GF_LIMIT_NONE, 0);
	/* reserved == size. */
	assert_int_equal(ledger_reserve(l, c, 0, 100 * MiB), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 100 * MiB, 100 * MiB,
	    GF_KIND_MEM, 5), 0);
	assert_int_equal(c->usage[0].used, 100 * MiB);
	assert_int_equal(c->usage[0].pending, 0);
	a = ptrmap_get(&c->allocs, 0x1000);
	assert_non_null(a);
	assert_int_equal(a->size, 100 * MiB);
	assert_int_equal(a->kind, GF_KIND_MEM);
	assert_int_equal(a->device, 0);
	assert_int_equal(a->time_ms, 5);
	/* reserved < size (pitch rounding): the difference is charged. */
	assert_int_equal(ledger_reserve(l, c, 0, 1000), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, c, 0, 0x2000, 1000, 1024,
	    GF_KIND_PITCH, 6), 0);
	assert_int_equal(c->usage[0].used, 100 * MiB + 1024);
	/* reserved > size: the difference is returned. */
	assert_int_equal(ledger_reserve(l, c, 0, 4096), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, c, 0, 0x3000, 4096, 512,
	    GF_KIND_MANAGED, 7), 0);
	assert_int_equal(c->usage[0].used, 100 * MiB + 1024 + 512);
	assert_int_equal(l->devices[0].used, 100 * MiB + 1024 + 512);
	/* reserved == 0: re-registration, charged beyond any limit. */
	ledger_open(l, c, 1, GF_LIMIT_BYTES, GiB);
	assert_int_equal(ledger_commit(l, c, 1, 0x4000, 0, 3 * GiB,
	    GF_KIND_MEM, 8), 0);
	assert_int_equal(c->usage[1].used, 3 * GiB);
	assert_int_equal(l->devices[1].used, 3 * GiB);
	assert_int_equal(ledger_reserve(l, c, 1, 1), LEDGER_LIMIT);
	/* Not opened: refused, nothing changes. */
	{
		struct ledger_client *d = ledger_client_new(l, 2, 0, 0, NULL);

		assert_int_equal(ledger_commit(l, d, 0, 0x5000, 0, MiB,
		    GF_KIND_MEM, 9), -1);
		assert_int_equal(d->usage[0].used, 0);
		assert_int_equal(ledger_rollback(l, d, 0, MiB), -1);
	}
	assert_int_equal(c->allocs.len, 4);
	assert_invariants(l);
}

static void
test_commit_same_ptr_twice(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 0, GiB, GF_KIND_MEM,
	    1), 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 0, 2 * GiB,
	    GF_KIND_MEM, 2), 0);
	assert_int_equal(c->usage[0].used, 2 * GiB);
	assert_int_equal(c->allocs.len, 1);
	assert_invariants(l);
}

/*
 * The managed allocations a client holds are counted (swap.c: the
 * checkpoint API cannot move them) through commits, replacements and
 * releases alike.
 */
static void
test_managed_count(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 0, MiB,
	    GF_KIND_MANAGED, 1), 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x2000, 0, MiB, GF_KIND_MEM,
	    1), 0);
	assert_int_equal(c->nmanaged, 1);
	/* The same pointer again, of another kind: no longer managed. */
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 0, MiB, GF_KIND_MEM,
	    2), 0);
	assert_int_equal(c->nmanaged, 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x3000, 0, MiB,
	    GF_KIND_MANAGED, 3), 0);
	assert_int_equal(ledger_release(l, c, 0x2000), 0);
	assert_int_equal(c->nmanaged, 1);
	assert_int_equal(ledger_release(l, c, 0x3000), 0);
	assert_int_equal(ledger_release(l, c, 0x3000), -1);
	assert_int_equal(c->nmanaged, 0);
	assert_invariants(l);
}

/*
 * Swapped out, a client's charge is host bytes: the device's room is
 * free for others, its limits still count it, what it frees meanwhile
 * comes off the host bytes, and it comes back only when it fits.
 */
static void
test_swap(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);
	struct ledger_client *o = ledger_client_new(l, 2, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_BYTES, 8 * GiB);
	ledger_open(l, o, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x1000, 0, 4 * GiB,
	    GF_KIND_MEM, 1), 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x2000, 0, 2 * GiB,
	    GF_KIND_MEM, 1), 0);
	ledger_swap_out(l, c);
	assert_true(c->on_host);
	assert_int_equal(c->usage[0].used, 0);
	assert_int_equal(c->usage[0].host, 6 * GiB);
	assert_int_equal(l->devices[0].used, 0);
	assert_int_equal(l->devices[0].host, 6 * GiB);
	assert_int_equal(l->groups[0].share[0].host, 6 * GiB);
	assert_int_equal(ledger_available(l, 0, 0), 16 * GiB);
	assert_invariants(l);
	/* Out, it still may not pass its own limit. */
	assert_int_equal(ledger_admit(l, c, 0, 3 * GiB), LEDGER_LIMIT);
	/* Others take the room; it no longer fits. */
	assert_int_equal(ledger_reserve(l, o, 0, 12 * GiB), LEDGER_GRANT);
	assert_false(ledger_swap_in_fits(l, c));
	/* A free while out returns host bytes. */
	assert_int_equal(ledger_release(l, c, 0x2000), 0);
	assert_int_equal(c->usage[0].host, 4 * GiB);
	assert_int_equal(l->devices[0].host, 4 * GiB);
	assert_true(ledger_swap_in_fits(l, c));
	assert_invariants(l);
	ledger_swap_in(l, c);
	assert_false(c->on_host);
	assert_int_equal(c->usage[0].used, 4 * GiB);
	assert_int_equal(l->devices[0].used, 16 * GiB);
	assert_int_equal(l->devices[0].host, 0);
	assert_invariants(l);
	/* A client that leaves while out returns its host bytes. */
	ledger_swap_out(l, c);
	ledger_client_drop(l, c);
	assert_int_equal(l->devices[0].host, 0);
	assert_int_equal(l->groups[0].share[0].host, 0);
	assert_invariants(l);
}

static void
test_rollback(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_reserve(l, c, 0, GiB), LEDGER_GRANT);
	assert_int_equal(ledger_reserve(l, c, 0, 2 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_rollback(l, c, 0, GiB), 0);
	assert_int_equal(c->usage[0].used, 2 * GiB);
	assert_int_equal(c->usage[0].pending, 2 * GiB);
	assert_int_equal(l->devices[0].used, 2 * GiB);
	assert_int_equal(ledger_rollback(l, c, 0, 2 * GiB), 0);
	assert_int_equal(c->usage[0].used, 0);
	assert_int_equal(l->devices[0].used, 0);
	assert_invariants(l);
}

static void
test_release(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, c, 1, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_commit(l, c, 0, 0xa000, 0, GiB, GF_KIND_MEM,
	    1), 0);
	assert_int_equal(ledger_commit(l, c, 1, 0xb000, 0, 2 * GiB,
	    GF_KIND_MEM, 1), 0);
	/* A known pointer returns its charge to its own device. */
	assert_int_equal(ledger_release(l, c, 0xb000), 0);
	assert_int_equal(c->usage[1].used, 0);
	assert_int_equal(l->devices[1].used, 0);
	assert_int_equal(c->usage[0].used, GiB);
	/* Freed twice, or never known: ignored, nothing changes. */
	assert_int_equal(ledger_release(l, c, 0xb000), -1);
	assert_int_equal(ledger_release(l, c, 0xdead), -1);
	assert_int_equal(c->usage[0].used, GiB);
	assert_int_equal(l->devices[0].used, GiB);
	assert_invariants(l);
}

static void
test_client_drop(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *a = ledger_client_new(l, 10, 0, 0, NULL);
	struct ledger_client *b = ledger_client_new(l, 11, 0, 0, NULL);
	int i;

	ledger_open(l, a, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, a, 1, GF_LIMIT_NONE, 0);
	ledger_open(l, b, 0, GF_LIMIT_NONE, 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(ledger_commit(l, a, (size_t)(i & 1),
		    0x100000ull * (uint64_t)(i + 1), 0, MiB, GF_KIND_MEM, 0),
		    0);
	assert_int_equal(ledger_reserve(l, a, 0, GiB), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, b, 0, 0x1, 0, 3 * GiB, GF_KIND_MEM,
	    0), 0);
	assert_int_equal(ledger_client_used(l, a), 1000 * MiB + GiB);
	assert_int_equal(l->devices[0].nclients, 2);
	assert_int_equal(ledger_client_find(l, 11, NULL), b);
	assert_null(ledger_client_find(l, 11, b));
	assert_invariants(l);
	/* Allocations and a pending reserve: all back at once. */
	ledger_client_drop(l, a);
	assert_int_equal(l->nclients, 1);
	assert_int_equal(l->devices[0].used, 3 * GiB);
	assert_int_equal(l->devices[1].used, 0);
	assert_int_equal(l->devices[0].nclients, 1);
	assert_int_equal(l->devices[1].nclients, 0);
	assert_null(ledger_client_find(l, 10, NULL));
	ledger_client_drop(l, b);
	assert_int_equal(l->devices[0].used, 0);
	assert_int_equal(l->nclients, 0);
}

static void
test_no_underflow(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct ledger_client *c = ledger_client_new(l, 1, 0, 0, NULL);
	struct ledger_client *d = ledger_client_new(l, 2, 0, 0, NULL);

	ledger_open(l, c, 0, GF_LIMIT_BYTES, 2 * GiB);
	ledger_open(l, d, 0, GF_LIMIT_NONE, 0);
	assert_int_equal(ledger_commit(l, d, 0, 0x9, 0, 4 * GiB, GF_KIND_MEM,
	    0), 0);
	/* Rolling back more than was reserved returns only the reserve. */
	assert_int_equal(ledger_reserve(l, c, 0, GiB), LEDGER_GRANT);
	assert_int_equal(ledger_rollback(l, c, 0, 10 * GiB), 0);
	assert_int_equal(c->usage[0].used, 0);
	assert_int_equal(l->devices[0].used, 4 * GiB);
	/* A rollback with nothing reserved changes nothing. */
	assert_int_equal(ledger_rollback(l, c, 0, GiB), 0);
	assert_int_equal(c->usage[0].used, 0);
	/* Committing more than was reserved: only the reserve is taken. */
	assert_int_equal(ledger_reserve(l, c, 0, MiB), LEDGER_GRANT);
	assert_int_equal(ledger_commit(l, c, 0, 0x10, GiB, MiB, GF_KIND_MEM,
	    0), 0);
	assert_int_equal(c->usage[0].used, MiB);
	assert_int_equal(c->usage[0].pending, 0);
	assert_int_equal(l->devices[0].used, 4 * GiB + MiB);
	assert_invariants(l);
	/* A broken invariant is clamped, never wrapped. */
	l->devices[0].used = 0;
	assert_int_equal(ledger_release(l, c, 0x10), 0);
	assert_int_equal(l->devices[0].used, 0);
	assert_int_equal(c->usage[0].used, 0);
	ledger_client_drop(l, d);
	assert_int_equal(l->devices[0].used, 0);
	/* Sizes near 2^64 saturate. */
	assert_int_equal(ledger_commit(l, c, 0, 0x20, 0, UINT64_MAX,
	    GF_KIND_MEM, 0), 0);
	assert_int_equal(ledger_commit(l, c, 0, 0x30, 0, UINT64_MAX,
	    GF_KIND_MEM, 0), 0);
	assert_int_equal(c->usage[0].used, UINT64_MAX);
	assert_int_equal(ledger_reserve(l, c, 0, 1), LEDGER_LIMIT);
}

/*
 * A lease is charged like an allocation: headroom says how much one may
 * be given (limit, group limit, device), shrinking returns no more than
 * is leased, and limits count it.
 */
static void
test_lease(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_BYTES, 5 * GiB);
	struct ledger_client *a, *b, *c;

	set_groups(l, &team, 1);
	a = ledger_client_new(l, 1, 0, 0, NULL);
	b = ledger_client_new(l, 2, 0, 0, NULL);
	c = ledger_client_new(l, 3, 0, 0, NULL);
	ledger_client_group(l, b, 1);
	ledger_client_group(l, c, 1);
	assert_int_equal(ledger_headroom(l, a, 1), 0);	/* not open */
	ledger_open(l, a, 1, GF_LIMIT_BYTES, 4 * GiB);
	ledger_open(l, b, 1, GF_LIMIT_NONE, 0);
	ledger_open(l, c, 1, GF_LIMIT_NONE, 0);
	/* Its own limit. */
	assert_int_equal(ledger_reserve(l, a, 1, GiB), LEDGER_GRANT);
	assert_int_equal(ledger_headroom(l, a, 1), 3 * GiB);
	ledger_lease_grow(l, a, 1, 2 * GiB);
	assert_int_equal(a->usage[1].used, 3 * GiB);
	assert_int_equal(ledger_headroom(l, a, 1), GiB);
	assert_int_equal(ledger_reserve(l, a, 1, GiB + 1), LEDGER_LIMIT);
	/* The group's limit, shared by b and c. */
	assert_int_equal(ledger_reserve(l, b, 1, 2 * GiB), LEDGER_GRANT);
	assert_int_equal(ledger_headroom(l, c, 1), 3 * GiB);
	/* The device: 8Gi less a's 3Gi and b's 2Gi. */
	ledger_lease_grow(l, b, 1, GiB);
	assert_int_equal(ledger_headroom(l, c, 1), 2 * GiB);
	ledger_lease_grow(l, a, 1, GiB);
	assert_int_equal(ledger_headroom(l, c, 1), GiB);
	assert_int_equal(ledger_headroom(l, a, 1), 0);
	assert_invariants(l);
	/* Returned, never more than is leased. */
	assert_int_equal(ledger_lease_shrink(l, a, 1, GiB), GiB);
	assert_int_equal(ledger_lease_shrink(l, a, 1, 5 * GiB), 2 * GiB);
	assert_int_equal(a->usage[1].lease, 0);
	assert_int_equal(a->usage[1].used, GiB);
	assert_int_equal(ledger_lease_shrink(l, a, 1, MiB), 0);
	assert_int_equal(l->devices[1].used, 4 * GiB);
	assert_invariants(l);
	/* A swapped-out client's lease is host memory, as the rest. */
	ledger_swap_out(l, b);
	assert_int_equal(ledger_lease_shrink(l, b, 1, GiB), GiB);
	assert_int_equal(b->usage[1].host, 2 * GiB);
	assert_invariants(l);
	/* A departing client's lease goes with it. */
	ledger_lease_grow(l, c, 1, GiB);
	ledger_client_drop(l, c);
	assert_int_equal(l->devices[1].used, GiB);
	assert_invariants(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_resolution, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_open_and_reconfigure,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reserve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collision, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_managed_count,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_same_ptr_twice,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_drop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_underflow, setup,
		    teardown),
	};

	/* Clamps and odd commits are logged as errors: expected here. */
	log_init("test", -1, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
