/*
 * The fixture of the daemon/ledger.c tests (test_daemon_ledger.c,
 * test_daemon_ledger_groups.c): a ledger of two devices, the invariants
 * every state of it keeps, and groups made from policies. Include after
 * cmocka.h.
 */
#ifndef GF_TEST_LEDGER_FIXTURE_H
#define GF_TEST_LEDGER_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../daemon/ledger.h"

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
	uint64_t grp_used[8][2], grp_host[8][2], grp_nested[8][2];
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
	/* what each bound holds of the groups it bounds */
	memset(grp_nested, 0, sizeof(grp_nested));
	for (g = 0; g < l->ngroups; g++)
		for (i = 0; l->groups[g].bound != 0 && i < l->ndevices; i++)
			grp_nested[l->groups[g].bound][i] +=
			    grp_used[g][i] + grp_host[g][i];
	for (g = 0; g < l->ngroups; g++) {
		assert_int_equal(l->groups[g].nmembers, grp_members[g]);
		for (i = 0; i < l->ndevices; i++) {
			assert_int_equal(l->groups[g].share[i].used,
			    grp_used[g][i]);
			assert_int_equal(l->groups[g].share[i].host,
			    grp_host[g][i]);
			assert_int_equal(l->groups[g].share[i].nclients,
			    grp_open[g][i]);
			assert_int_equal(l->groups[g].share[i].nested,
			    grp_nested[g][i]);
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

#endif
