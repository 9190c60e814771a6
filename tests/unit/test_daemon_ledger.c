/*
 * daemon/ledger.c: limit resolution, reserves within and beyond the limit,
 * collisions, commits, rollbacks, releases, a departing client, that
 * nothing ever wraps below zero; groups: a limit shared by their clients,
 * a client's own request, client_may_raise, regrouping, and the check that
 * guarantees fit a device; host swap moving charges to host and back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/ledger.h"
#include "log.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

struct fixture {
	struct ledger	l;
	uint8_t		uuid[2][GF_UUID_LEN];
};

/* Two devices: 16Gi (ordinal 0) and 8Gi (ordinal 1). */
static int
setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof(*f));
	int i;

	assert_int_equal(ledger_init(&f->l), 0);
	for (i = 0; i < 2; i++) {
		memset(f->uuid[i], 0x10 + i, GF_UUID_LEN);
		assert_int_equal(ledger_device_add(&f->l, f->uuid[i],
		    (uint32_t)i, i ? "Small" : "Big", i ? 8 * GiB : 16 * GiB),
		    i);
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	ledger_free(&f->l);
	test_free(f);
	return 0;
}

/* used == pending + lease + allocations for c; devices and groups agree
 * with clients. */
static void
assert_invariants(const struct ledger *l)
{
	const struct ledger_client *c;
	uint64_t dev_used[2] = { 0, 0 }, dev_host[2] = { 0, 0 };
	uint64_t grp_used[8][2], grp_host[8][2];
	uint32_t grp_members[8], grp_open[8][2];
	size_t i, g;

	memset(grp_used, 0, sizeof(grp_used));
	memset(grp_host, 0, sizeof(grp_host));
	memset(grp_members, 0, sizeof(grp_members));
	memset(grp_open, 0, sizeof(grp_open));
	assert_true(l->ngroups <= 8);
	TAILQ_FOREACH(c, &l->clients, entry) {
		grp_members[c->group]++;
		for (i = 0; i < l->ndevices; i++) {
			grp_used[c->group][i] += c->usage[i].used;
			grp_host[c->group][i] += c->usage[i].host;
			grp_open[c->group][i] += c->usage[i].opened ? 1 : 0;
		}
	}
	for (g = 0; g < l->ngroups; g++) {
		assert_int_equal(l->groups[g].nmembers, grp_members[g]);
		for (i = 0; i < l->ndevices; i++) {
			assert_int_equal(l->groups[g].share[i].used,
			    grp_used[g][i]);
			assert_int_equal(l->groups[g].share[i].host,
			    grp_host[g][i]);
			assert_int_equal(l->groups[g].share[i].nclients,
			    grp_open[g][i]);
		}
	}

	TAILQ_FOREACH(c, &l->clients, entry) {
		uint64_t allocs[2] = { 0, 0 };
		struct ledger_alloc *a;
		size_t pos = 0;

		while ((a = ptrmap_next(&c->allocs, &pos, NULL)) != NULL)
			allocs[a->device] += a->size;
		for (i = 0; i < l->ndevices; i++) {
			assert_int_equal(c->usage[i].used + c->usage[i].host,
			    c->usage[i].pending + c->usage[i].lease +
			    allocs[i]);
			/* out: nothing on the device, in: nothing on host */
			assert_int_equal(c->on_host ? c->usage[i].used :
			    c->usage[i].host, 0);
			dev_used[i] += c->usage[i].used;
			dev_host[i] += c->usage[i].host;
		}
	}
	for (i = 0; i < l->ndevices; i++) {
		assert_int_equal(l->devices[i].used, dev_used[i]);
		assert_int_equal(l->devices[i].host, dev_host[i]);
	}
}

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

/* Groups: "default" (per process, 100%) and the ones given. */
static struct group_policy
policy(const char *name, uint32_t kind, uint64_t value)
{
	struct group_policy p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.limit_kind = kind;
	p.limit_value = value;
	p.guarantee_kind = GF_LIMIT_BYTES;
	p.on_preempt = GF_PREEMPT_KILL;
	return p;
}

/* group_of for ledger_groups_set: the client's uid is its group. */
static size_t
group_by_uid(const struct ledger_client *c, void *arg)
{
	(void)arg;
	return c->uid;
}

static void
set_groups(struct ledger *l, struct group_policy *extra, size_t n)
{
	struct group_policy pols[8];
	size_t i;

	pols[0] = policy("default", GF_LIMIT_PERCENT, 10000);
	pols[0].per_process = 1;
	for (i = 0; i < n; i++)
		pols[i + 1] = extra[i];
	assert_int_equal(ledger_groups_set(l, pols, n + 1, group_by_uid,
	    NULL), 0);
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

static void
test_group_own_request(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy team = policy("team", GF_LIMIT_PERCENT, 5000);
	struct ledger_client *a, *b;

	set_groups(l, &team, 1);
	a = ledger_client_new(l, 1, 0, 0, NULL);
	b = ledger_client_new(l, 2, 0, 0, NULL);
	ledger_client_group(l, a, 1);
	ledger_client_group(l, b, 1);
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
	set_groups(l, &team, 1);
	raiser = ledger_client_new(l, 1, 0, 0, NULL);
	plain = ledger_client_new(l, 2, 0, 0, NULL);
	ledger_client_group(l, raiser, 1);
	ledger_client_group(l, plain, 1);
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
 * Lending: a borrower (on_preempt kill or swap) may take unused
 * guarantees, a group with on_preempt none may not; what is lent is held
 * by the borrowers, lowest priority first; leases never borrow; the owner
 * is within its guarantee or not.
 */
static void
test_lending(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = &f->l;
	struct group_policy g[3] = {
		policy("owner", GF_LIMIT_PERCENT, 10000),
		policy("batch", GF_LIMIT_PERCENT, 10000),
		policy("keep", GF_LIMIT_PERCENT, 10000),
	};
	struct ledger_client *o, *b, *k, *d;
	uint64_t borrowed[4];

	g[0].guarantee_value = 6 * GiB;
	g[1].priority = -1;
	g[2].on_preempt = GF_PREEMPT_NONE;
	set_groups(l, g, 3);
	o = ledger_client_new(l, 10, 1, 1, NULL);
	b = ledger_client_new(l, 11, 2, 2, NULL);
	k = ledger_client_new(l, 12, 3, 3, NULL);
	d = ledger_client_new(l, 13, 0, 0, NULL);	/* default: kill */
	ledger_client_group(l, o, 1);
	ledger_client_group(l, b, 2);
	ledger_client_group(l, k, 3);
	ledger_open(l, o, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, b, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, k, 0, GF_LIMIT_NONE, 0);
	ledger_open(l, d, 0, GF_LIMIT_NONE, 0);
	/* Off: every guarantee held back, as before. */
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
	assert_int_equal(ledger_headroom(l, b, 0), 10 * GiB);
	assert_lending(l, 0, 0);

	/* batch takes 12: 2 of the owner's 6 are lent to it. */
	assert_int_equal(ledger_reserve(l, b, 0, 12 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, 2 * GiB);
	ledger_borrowed(l, 0, borrowed);
	assert_int_equal(borrowed[2], 2 * GiB);
	/* keep gets nothing: 4 left, all of them the owner's. */
	assert_int_equal(ledger_admit(l, k, 0, 1), LEDGER_COLLISION);
	/* default (priority 0) borrows 3 more of them. */
	assert_int_equal(ledger_reserve(l, d, 0, 3 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, 5 * GiB);
	ledger_borrowed(l, 0, borrowed);
	/* batch (priority -1) would give back first: it holds 5 of them. */
	assert_int_equal(borrowed[2], 5 * GiB);
	assert_int_equal(borrowed[0], 0);
	/* The owner: 6 within its guarantee, 1 free for it now. */
	assert_true(ledger_within_guarantee(l, o, 0, 6 * GiB));
	assert_false(ledger_within_guarantee(l, o, 0, 6 * GiB + 1));
	assert_false(ledger_within_guarantee(l, b, 0, 1));
	assert_int_equal(ledger_available(l, 1, 0), GiB);
	assert_int_equal(ledger_admit(l, o, 0, 2 * GiB), LEDGER_COLLISION);
	/* As the borrowers give back, the owner's use takes the lent part. */
	assert_int_equal(ledger_rollback(l, b, 0, 4 * GiB), 0);
	assert_lending(l, 0, GiB);
	assert_int_equal(ledger_reserve(l, o, 0, 5 * GiB), LEDGER_GRANT);
	assert_lending(l, 0, GiB);	/* its sixth is still lent */
	assert_true(ledger_within_guarantee(l, o, 0, GiB));
	assert_false(ledger_within_guarantee(l, o, 0, 2 * GiB));
	/* Off again (a reload): nothing more is lent; what is, stays. */
	l->lend = 0;
	assert_int_equal(ledger_lent(l, 0), GiB);
	assert_int_equal(ledger_available(l, 2, 0), 0);
	assert_true(ledger_within_guarantee(l, o, 0, GiB));
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
		cmocka_unit_test_setup_teardown(test_commit_same_ptr_twice,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_drop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_group_shared_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_group_own_request, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_group_may_raise, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_groups_set, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_available_with_guarantees,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarantees_fit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_underflow, setup,
		    teardown),
	};

	/* Clamps and odd commits are logged as errors: expected here. */
	log_init("test", -1, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
