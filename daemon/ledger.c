/*
 * The ledger's arithmetic: limits of clients and groups, reserves,
 * commits, rollbacks, releases and the return of a departed client's
 * charge, all clamped at zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_int.h"
#include "log.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

/* a - b, or 0 and a log line if b > a: a broken invariant must not wrap. */
static uint64_t
sub_clamped(uint64_t a, uint64_t b, const char *what, uint32_t pid)
{
	if (b <= a)
		return a - b;
	log_errx("ledger: %s of pid %u would go below zero "
	    "(%llu - %llu); clamped at 0", what, pid,
	    (unsigned long long)a, (unsigned long long)b);
	return 0;
}

static struct ledger_share *
share_of(struct ledger *l, const struct ledger_client *c, size_t dev)
{
	return &l->groups[c->group].share[dev];
}

/* The share of dev whose limit bounds c's group's too, or NULL. */
static struct ledger_share *
bound_of(const struct ledger *l, const struct ledger_client *c, size_t dev)
{
	size_t b = l->groups[c->group].bound;

	return b != 0 ? &l->groups[b].share[dev] : NULL;
}

/* What a shared limit holds: its clients', and the bounded groups'. */
static uint64_t
share_held(const struct ledger_share *sh)
{
	return add_saturated(add_saturated(sh->used, sh->host), sh->nested);
}

/* Tell the watcher that c's charges changed (gone: it is dropped). */
static void
watched(struct ledger *l, struct ledger_client *c, int gone)
{
	if (l->watch != NULL)
		l->watch(l->watch_arg, c, gone);
}

/* Charge n more to c on dev, or return n of its charge: to the host
 * tallies while c is swapped out. */
static void
charge(struct ledger *l, struct ledger_client *c, size_t dev, uint64_t n)
{
	struct ledger_share *sh = share_of(l, c, dev), *bs;

	if ((bs = bound_of(l, c, dev)) != NULL)
		bs->nested = add_saturated(bs->nested, n);
	if (c->on_host) {
		c->usage[dev].host = add_saturated(c->usage[dev].host, n);
		sh->host = add_saturated(sh->host, n);
		l->devices[dev].host = add_saturated(l->devices[dev].host, n);
		return;
	}
	c->usage[dev].used = add_saturated(c->usage[dev].used, n);
	sh->used = add_saturated(sh->used, n);
	l->devices[dev].used = add_saturated(l->devices[dev].used, n);
}

static void
discharge(struct ledger *l, struct ledger_client *c, size_t dev, uint64_t n)
{
	struct ledger_share *sh = share_of(l, c, dev), *bs;

	if ((bs = bound_of(l, c, dev)) != NULL)
		bs->nested = sub_clamped(bs->nested, n, "bound charge", c->pid);
	if (c->on_host) {
		c->usage[dev].host = sub_clamped(c->usage[dev].host, n,
		    "host charge", c->pid);
		sh->host = sub_clamped(sh->host, n, "group host charge",
		    c->pid);
		l->devices[dev].host = sub_clamped(l->devices[dev].host, n,
		    "device host charge", c->pid);
		return;
	}
	c->usage[dev].used = sub_clamped(c->usage[dev].used, n,
	    "charge", c->pid);
	sh->used = sub_clamped(sh->used, n, "group charge", c->pid);
	l->devices[dev].used = sub_clamped(l->devices[dev].used, n,
	    "device charge", c->pid);
}

/* c joins or leaves its group's tallies (sign +1 or -1). */
static void
group_tally(struct ledger *l, const struct ledger_client *c, int sign)
{
	struct ledger_group *g = &l->groups[c->group];
	struct ledger_share *bs;
	uint64_t held;
	size_t i;

	g->nmembers += (uint32_t)sign;
	for (i = 0; i < l->ndevices; i++) {
		struct ledger_share *sh = &g->share[i];

		held = add_saturated(c->usage[i].used, c->usage[i].host);
		if ((bs = bound_of(l, c, i)) != NULL)
			bs->nested = sign > 0 ? add_saturated(bs->nested,
			    held) : sub_clamped(bs->nested, held,
			    "bound charge", c->pid);
		if (sign > 0) {
			sh->used = add_saturated(sh->used, c->usage[i].used);
			sh->host = add_saturated(sh->host, c->usage[i].host);
			sh->nclients += c->usage[i].opened ? 1 : 0;
			continue;
		}
		sh->used = sub_clamped(sh->used, c->usage[i].used,
		    "group charge", c->pid);
		sh->host = sub_clamped(sh->host, c->usage[i].host,
		    "group host charge", c->pid);
		if (c->usage[i].opened && sh->nclients > 0)
			sh->nclients--;
	}
}

static void
groups_free(struct ledger_group *groups, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(groups[i].share);
	free(groups);
}

/* n groups with pols, their shares zero for ndevices; NULL on ENOMEM. */
static struct ledger_group *
groups_new(const struct group_policy *pols, size_t n, size_t ndevices)
{
	struct ledger_group *groups = calloc(n, sizeof(*groups));
	size_t i;

	if (groups == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		groups[i].pol = pols[i];
		groups[i].share = calloc(ndevices ? ndevices : 1,
		    sizeof(*groups[i].share));
		if (groups[i].share == NULL) {
			groups_free(groups, n);
			return NULL;
		}
	}
	return groups;
}

int
ledger_init(struct ledger *l)
{
	struct group_policy def;

	memset(l, 0, sizeof(*l));
	TAILQ_INIT(&l->clients);
	memset(&def, 0, sizeof(def));
	proto_strlcpy(def.name, LEDGER_GROUP_DEFAULT, sizeof(def.name));
	def.per_process = 1;
	def.limit_kind = GF_LIMIT_PERCENT;
	def.limit_value = 10000;
	def.guarantee_kind = GF_LIMIT_BYTES;
	def.resolver = GF_RESOLVER_FAIL;
	def.on_preempt = GF_PREEMPT_KILL;
	def.kill_grace_ms = POLICY_KILL_GRACE_MS;
	if ((l->groups = groups_new(&def, 1, 0)) == NULL)
		return -1;
	l->ngroups = 1;
	return 0;
}

void
ledger_free(struct ledger *l)
{
	struct ledger_client *c;

	while ((c = TAILQ_FIRST(&l->clients)) != NULL)
		ledger_client_drop(l, c);
	groups_free(l->groups, l->ngroups);
	l->groups = NULL;
	l->ngroups = 0;
	free(l->devices);
	l->devices = NULL;
	l->ndevices = 0;
}

/* Room in every group for one more device's share. */
static int
shares_grow(struct ledger *l)
{
	struct ledger_share *sh;
	size_t i;

	for (i = 0; i < l->ngroups; i++) {
		sh = realloc(l->groups[i].share, (l->ndevices + 1) *
		    sizeof(*sh));
		if (sh == NULL)
			return -1;
		memset(&sh[l->ndevices], 0, sizeof(*sh));
		l->groups[i].share = sh;
	}
	return 0;
}

/* A group's limit and guarantee on dev, from its policy. */
static void
share_resolve(struct ledger *l, struct ledger_group *g, size_t dev)
{
	uint64_t cap = l->devices[dev].capacity;

	g->share[dev].limit = limit_resolve(g->pol.limit_kind,
	    g->pol.limit_value, cap);
	g->share[dev].guarantee = limit_resolve(g->pol.guarantee_kind,
	    g->pol.guarantee_value, cap);
}

/*
 * Every group's limit and guarantee on dev; a bounded group's guarantee
 * out of what its bound's has left, in the groups' order (ledger.h).
 */
static void
shares_resolve(struct ledger *l, size_t dev)
{
	struct ledger_share *sh, *bs;
	size_t i;

	for (i = 0; i < l->ngroups; i++)
		share_resolve(l, &l->groups[i], dev);
	for (i = 0; i < l->ngroups; i++) {
		if (l->groups[i].bound == 0)
			continue;
		sh = &l->groups[i].share[dev];
		bs = &l->groups[l->groups[i].bound].share[dev];
		if (sh->guarantee > bs->guarantee)
			sh->guarantee = bs->guarantee;
		bs->guarantee -= sh->guarantee;
	}
}

int
ledger_device_add(struct ledger *l, const uint8_t uuid[GF_UUID_LEN],
    uint32_t index, const char *name, uint64_t total)
{
	struct ledger_device *d;

	if (l->nclients > 0) {
		errno = EBUSY;
		return -1;
	}
	if (shares_grow(l) < 0)
		return -1;
	d = realloc(l->devices, (l->ndevices + 1) * sizeof(*d));
	if (d == NULL)
		return -1;
	l->devices = d;
	d = &l->devices[l->ndevices];
	memset(d, 0, sizeof(*d));
	memcpy(d->uuid, uuid, GF_UUID_LEN);
	proto_strlcpy(d->name, name, sizeof(d->name));
	d->index = index;
	d->total = total;
	d->capacity = total;
	l->ndevices++;
	shares_resolve(l, l->ndevices - 1);
	return (int)l->ndevices - 1;
}

int
ledger_device_find(const struct ledger *l, const uint8_t uuid[GF_UUID_LEN])
{
	size_t i;

	for (i = 0; i < l->ndevices; i++)
		if (memcmp(l->devices[i].uuid, uuid, GF_UUID_LEN) == 0)
			return (int)i;
	return -1;
}

uint64_t
ledger_limit(const struct ledger *l, size_t group, size_t dev, uint32_t kind,
    uint64_t value)
{
	const struct ledger_group *g = &l->groups[group];
	uint64_t cap = l->devices[dev].capacity;
	uint64_t glimit = limit_resolve(g->pol.limit_kind, g->pol.limit_value,
	    cap);
	uint64_t req, most;

	if (kind == GF_LIMIT_NONE)
		return glimit;
	req = limit_resolve(kind, value, cap);
	most = g->pol.client_may_raise ? cap : glimit;
	return req < most ? req : most;
}

int
ledger_client_limit(struct ledger *l, struct ledger_client *c, size_t dev,
    uint32_t kind, uint64_t value, uint64_t *allowed)
{
	struct ledger_usage *u = &c->usage[dev];
	uint64_t want = limit_resolve(kind, value, l->devices[dev].capacity);

	*allowed = ledger_limit(l, c->group, dev, GF_LIMIT_BYTES, UINT64_MAX);
	if (!u->opened || want > *allowed)
		return -1;
	u->req_kind = kind;
	u->req_value = value;
	u->limit = want;
	return 0;
}

/* Recompute the effective limit of c on every device it opened. */
static void
client_limits_update(struct ledger *l, struct ledger_client *c)
{
	size_t i;

	for (i = 0; i < l->ndevices; i++) {
		struct ledger_usage *u = &c->usage[i];

		if (u->opened)
			u->limit = ledger_limit(l, c->group, i, u->req_kind,
			    u->req_value);
	}
}

/* Recompute every group's share and every client's limit on dev. */
static void
limits_update(struct ledger *l, size_t dev)
{
	struct ledger_client *c;

	shares_resolve(l, dev);
	TAILQ_FOREACH(c, &l->clients, entry) {
		struct ledger_usage *u = &c->usage[dev];

		if (u->opened)
			u->limit = ledger_limit(l, c->group, dev, u->req_kind,
			    u->req_value);
	}
}

void
ledger_set_reserve(struct ledger *l, size_t dev, uint64_t reserve)
{
	struct ledger_device *d = &l->devices[dev];

	d->reserve = reserve < d->total ? reserve : d->total;
	d->capacity = d->total - d->reserve;
	limits_update(l, dev);
}

void
ledger_set_default_limit(struct ledger *l, uint32_t kind, uint64_t value)
{
	size_t i;

	l->groups[0].pol.limit_kind = kind;
	l->groups[0].pol.limit_value = value;
	for (i = 0; i < l->ndevices; i++)
		limits_update(l, i);
}

int
ledger_groups_set(struct ledger *l, const struct group_policy *pols,
    size_t n, ledger_group_fn *group_of, void *arg)
{
	struct ledger_group *groups = groups_new(pols, n, l->ndevices);
	struct ledger_client *c;
	size_t i;

	if (groups == NULL)
		return -1;
	groups_free(l->groups, l->ngroups);
	l->groups = groups;
	l->ngroups = n;
	TAILQ_FOREACH(c, &l->clients, entry) {
		c->group = group_of(c, arg);
		if (c->group >= n)
			c->group = 0;
		group_tally(l, c, +1);
	}
	for (i = 0; i < l->ndevices; i++)
		limits_update(l, i);
	return 0;
}

/* Whether bound[g] may bound g (ledger_groups_bound). */
static int
bound_valid(const struct ledger *l, const size_t *bound, size_t g)
{
	size_t b = bound[g];

	return b != 0 && b != g && b < l->ngroups && bound[b] == 0 &&
	    !l->groups[b].pol.per_process;
}

void
ledger_groups_bound(struct ledger *l, const size_t *bound)
{
	struct ledger_share *sh, *bs;
	size_t g, d;

	for (g = 0; g < l->ngroups; g++) {
		l->groups[g].bound = bound != NULL &&
		    bound_valid(l, bound, g) ? bound[g] : 0;
		for (d = 0; d < l->ndevices; d++)
			l->groups[g].share[d].nested = 0;
	}
	for (g = 0; g < l->ngroups; g++)
		for (d = 0; l->groups[g].bound != 0 && d < l->ndevices; d++) {
			sh = &l->groups[g].share[d];
			bs = &l->groups[l->groups[g].bound].share[d];
			bs->nested = add_saturated(bs->nested,
			    add_saturated(sh->used, sh->host));
		}
	for (d = 0; d < l->ndevices; d++)
		limits_update(l, d);
}

int
ledger_guarantees_fit(const struct ledger_device *d, uint64_t capacity,
    const struct group_policy *pols, size_t n, char *msg, size_t msglen)
{
	char ubuf[UUID_STR_LEN], list[512], sbuf[32], cbuf[32];
	uint64_t sum = 0, g;
	size_t i, len;

	list[0] = '\0';
	for (i = 0; i < n; i++) {
		g = limit_resolve(pols[i].guarantee_kind,
		    pols[i].guarantee_value, capacity);
		if (g == 0)
			continue;
		sum = add_saturated(sum, g);
		len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s %s",
		    len ? ", " : "", pols[i].name,
		    size_format(g, sbuf, sizeof(sbuf)));
	}
	if (sum <= capacity)
		return 0;
	snprintf(msg, msglen, "guarantees on %s (device %u) add up to %s, "
	    "more than its %s shareable capacity: %s",
	    uuid_format(d->uuid, ubuf, sizeof(ubuf)), d->index,
	    size_format(sum, sbuf, sizeof(sbuf)),
	    size_format(capacity, cbuf, sizeof(cbuf)), list);
	return -1;
}

struct ledger_client *
ledger_client_new(struct ledger *l, uint32_t pid, uint32_t uid, uint32_t gid,
    const char *cgroup)
{
	struct ledger_client *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->usage = calloc(l->ndevices ? l->ndevices : 1, sizeof(*c->usage));
	c->cgroup = strdup(cgroup ? cgroup : "");
	if (c->usage == NULL || c->cgroup == NULL) {
		free(c->usage);
		free(c->cgroup);
		free(c);
		return NULL;
	}
	c->pid = pid;
	c->pidfd = -1;
	c->uid = uid;
	c->gid = gid;
	c->state = GF_STATE_RUNNING;
	c->group = 0;
	l->groups[0].nmembers++;
	ptrmap_init(&c->allocs);
	TAILQ_INSERT_TAIL(&l->clients, c, entry);
	l->nclients++;
	return c;
}

void
ledger_client_group(struct ledger *l, struct ledger_client *c, size_t group)
{
	if (group >= l->ngroups || group == c->group)
		return;
	group_tally(l, c, -1);
	c->group = group;
	group_tally(l, c, +1);
	client_limits_update(l, c);
}

void
ledger_client_drop(struct ledger *l, struct ledger_client *c)
{
	struct ledger_alloc *a;
	size_t i, pos = 0;

	watched(l, c, 1);
	group_tally(l, c, -1);
	for (i = 0; i < l->ndevices; i++) {
		struct ledger_device *d = &l->devices[i];

		d->used = sub_clamped(d->used, c->usage[i].used,
		    "device charge", c->pid);
		d->host = sub_clamped(d->host, c->usage[i].host,
		    "device host charge", c->pid);
		if (c->usage[i].opened)
			d->nclients = d->nclients ? d->nclients - 1 : 0;
	}
	while ((a = ptrmap_next(&c->allocs, &pos, NULL)) != NULL)
		free(a);
	ptrmap_free(&c->allocs);
	TAILQ_REMOVE(&l->clients, c, entry);
	l->nclients--;
	free(c->usage);
	free(c->cgroup);
	free(c);
}

struct ledger_client *
ledger_client_find(const struct ledger *l, uint32_t pid,
    const struct ledger_client *after)
{
	struct ledger_client *c;

	c = after ? TAILQ_NEXT(after, entry) : TAILQ_FIRST(&l->clients);
	for (; c != NULL; c = TAILQ_NEXT(c, entry))
		if (c->pid == pid)
			return c;
	return NULL;
}

uint64_t
ledger_client_used(const struct ledger *l, const struct ledger_client *c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < l->ndevices; i++)
		sum = add_saturated(sum, c->usage[i].used);
	return sum;
}

void
ledger_open(struct ledger *l, struct ledger_client *c, size_t dev,
    uint32_t kind, uint64_t value)
{
	struct ledger_usage *u = &c->usage[dev];

	if (!u->opened) {
		u->opened = 1;
		l->devices[dev].nclients++;
		share_of(l, c, dev)->nclients++;
	}
	u->req_kind = kind;
	u->req_value = value;
	u->limit = ledger_limit(l, c->group, dev, kind, value);
}

/* Whether c's requests on dev are held to its group's shared limit. */
static int
group_limit_applies(const struct ledger *l, const struct ledger_client *c,
    size_t dev)
{
	const struct group_policy *pol = &l->groups[c->group].pol;

	return !pol->per_process && !(pol->client_may_raise &&
	    c->usage[dev].req_kind != GF_LIMIT_NONE);
}

/* Whether size more than held passes limit. */
static int
past(uint64_t held, uint64_t size, uint64_t limit)
{
	uint64_t after;

	return __builtin_add_overflow(held, size, &after) || after > limit;
}

/* What a shared limit leaves once held is counted. */
static uint64_t
room_under(uint64_t limit, uint64_t held)
{
	return limit > held ? limit - held : 0;
}

int
ledger_admit(const struct ledger *l, const struct ledger_client *c,
    size_t dev, uint64_t size)
{
	const struct ledger_usage *u = &c->usage[dev];
	const struct ledger_share *sh;

	if (!u->opened)
		return LEDGER_NOT_OPEN;
	/* Limits hold what a process has, on the device or swapped out. */
	if (past(add_saturated(u->used, u->host), size, u->limit))
		return LEDGER_LIMIT;
	sh = &l->groups[c->group].share[dev];
	if (group_limit_applies(l, c, dev) &&
	    past(share_held(sh), size, sh->limit))
		return LEDGER_GROUP_LIMIT;
	/* A job's group with the others of its user's [group] (ledger.h). */
	if ((sh = bound_of(l, c, dev)) != NULL &&
	    past(share_held(sh), size, sh->limit))
		return LEDGER_GROUP_LIMIT;
	if (size > ledger_available(l, c->group, dev))
		return LEDGER_COLLISION;
	return LEDGER_GRANT;
}

uint64_t
ledger_headroom(const struct ledger *l, const struct ledger_client *c,
    size_t dev)
{
	const struct ledger_usage *u = &c->usage[dev];
	const struct ledger_share *sh = &l->groups[c->group].share[dev];
	uint64_t room, r;

	if (!u->opened)
		return 0;
	room = room_under(u->limit, add_saturated(u->used, u->host));
	if (group_limit_applies(l, c, dev)) {
		r = room_under(sh->limit, share_held(sh));
		room = r < room ? r : room;
	}
	if ((sh = bound_of(l, c, dev)) != NULL) {
		r = room_under(sh->limit, share_held(sh));
		room = r < room ? r : room;
	}
	r = ledger_available_as(l, c->group, dev, 0, 0);
	return r < room ? r : room;
}

/*
 * What a shared limit leaves c, which holds own of it: the limit less
 * what the others under it hold, unused leases (spare) counted free.
 */
static uint64_t
shared_reach(const struct ledger_share *sh, uint64_t spare, uint64_t own)
{
	uint64_t held = share_held(sh);

	held = held > spare ? held - spare : 0;
	held = held > own ? held - own : 0;	/* the others' */
	return room_under(sh->limit, held);
}

uint64_t
ledger_reach(const struct ledger *l, const struct ledger_client *c,
    size_t dev, const struct ledger_spare *sp)
{
	const struct ledger_usage *u = &c->usage[dev];
	const struct ledger_share *sh = &l->groups[c->group].share[dev];
	uint64_t own, held, reach, r;

	if (!u->opened)
		return 0;
	/* What c has allocated, on the device or swapped out. */
	held = add_saturated(u->used, u->host);
	own = held > sp->own ? held - sp->own : 0;
	reach = u->limit;
	if (group_limit_applies(l, c, dev)) {
		r = shared_reach(sh, sp->group, own);
		reach = r < reach ? r : reach;
	}
	/* Its group's unused leases are all of the bound's that count. */
	if ((sh = bound_of(l, c, dev)) != NULL) {
		r = shared_reach(sh, sp->group, own);
		reach = r < reach ? r : reach;
	}
	/* On the device, what c holds there is its own to count. */
	own = u->used > sp->own ? u->used - sp->own : 0;
	r = add_saturated(ledger_available_as(l, c->group, dev,
	    ledger_borrows(l, c->group), sp->device), own);
	return r < reach ? r : reach;
}

void
ledger_lease_grow(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t n)
{
	c->usage[dev].lease = add_saturated(c->usage[dev].lease, n);
	charge(l, c, dev, n);
	watched(l, c, 0);
}

uint64_t
ledger_lease_shrink(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t n)
{
	struct ledger_usage *u = &c->usage[dev];

	if (n > u->lease)
		n = u->lease;
	u->lease -= n;
	discharge(l, c, dev, n);
	watched(l, c, 0);
	return n;
}

int
ledger_countable(const struct ledger *l, size_t dev, uint64_t n)
{
	const struct ledger_device *d = &l->devices[dev];

	/* used + host cannot overflow: every charge asked first. */
	return n <= UINT64_MAX - (d->used + d->host);
}

int
ledger_holdable(const struct ledger *l, const struct ledger_client *c,
    size_t dev, uint64_t n)
{
	uint64_t total = l->devices[dev].total, used = c->usage[dev].used;

	return used <= total && n <= total - used;
}

int
ledger_reserve(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t size)
{
	int rc = ledger_admit(l, c, dev, size);

	if (rc != LEDGER_GRANT)
		return rc;
	c->usage[dev].pending += size;
	charge(l, c, dev, size);
	watched(l, c, 0);
	return LEDGER_GRANT;
}

/* Take up to n from the client's pending reserves on dev; what was taken. */
static uint64_t
pending_take(struct ledger_client *c, size_t dev, uint64_t n,
    const char *what)
{
	struct ledger_usage *u = &c->usage[dev];

	if (n > u->pending) {
		log_warnx("ledger: pid %u %s %llu bytes but has only %llu "
		    "reserved; using %llu", c->pid, what,
		    (unsigned long long)n, (unsigned long long)u->pending,
		    (unsigned long long)u->pending);
		n = u->pending;
	}
	u->pending -= n;
	return n;
}

int
ledger_commit(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t ptr, uint64_t reserved, uint64_t size, uint32_t kind,
    uint64_t now_ms)
{
	struct ledger_alloc *a;

	if (!c->usage[dev].opened) {
		errno = EINVAL;
		return -1;
	}
	discharge(l, c, dev, pending_take(c, dev, reserved, "commits"));
	if ((a = ptrmap_get(&c->allocs, ptr)) != NULL) {
		/* A pool's or context's record is meant to change. */
		if (a->kind != kind || (kind != GF_KIND_POOL &&
		    kind != GF_KIND_CONTEXT))
			log_warnx("ledger: pid %u commits 0x%llx twice; "
			    "replacing the old record", c->pid,
			    (unsigned long long)ptr);
		ledger_release(l, c, ptr);
	}
	charge(l, c, dev, size);
	if ((a = malloc(sizeof(*a))) == NULL)
		goto out_nomem;
	a->ptr = ptr;
	a->size = size;
	a->time_ms = now_ms;
	a->kind = kind;
	a->device = (uint32_t)dev;
	if (ptrmap_put(&c->allocs, ptr, a) < 0) {
		free(a);
		goto out_nomem;
	}
	c->nmanaged += kind == GF_KIND_MANAGED;
	watched(l, c, 0);
	return 0;

out_nomem:
	log_errx("ledger: no memory to record 0x%llx of pid %u; its charge "
	    "stays until the client leaves", (unsigned long long)ptr, c->pid);
	watched(l, c, 0);
	errno = ENOMEM;
	return -1;
}

int
ledger_rollback(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t size)
{
	if (!c->usage[dev].opened) {
		errno = EINVAL;
		return -1;
	}
	discharge(l, c, dev, pending_take(c, dev, size, "rolls back"));
	watched(l, c, 0);
	return 0;
}

int
ledger_release(struct ledger *l, struct ledger_client *c, uint64_t ptr)
{
	struct ledger_alloc *a = ptrmap_del(&c->allocs, ptr);

	if (a == NULL)
		return -1;
	discharge(l, c, a->device, a->size);
	c->nmanaged -= a->kind == GF_KIND_MANAGED;
	free(a);
	watched(l, c, 0);
	return 0;
}

/* Move c's charges between the device and host tallies. */
static void
swap_move(struct ledger *l, struct ledger_client *c, int to_host)
{
	size_t i;
	uint64_t n;

	for (i = 0; i < l->ndevices; i++) {
		n = to_host ? c->usage[i].used : c->usage[i].host;
		discharge(l, c, i, n);
		c->on_host = to_host;
		charge(l, c, i, n);
		c->on_host = !to_host;
	}
	c->on_host = to_host;
	watched(l, c, 0);
}

void
ledger_swap_out(struct ledger *l, struct ledger_client *c)
{
	if (!c->on_host)
		swap_move(l, c, 1);
}

void
ledger_swap_out_keep(struct ledger *l, struct ledger_client *c,
    const uint64_t *keep)
{
	size_t i;
	uint64_t n;

	if (c->on_host)
		return;
	for (i = 0; i < l->ndevices; i++) {
		n = c->usage[i].used > keep[i] ? c->usage[i].used - keep[i] : 0;
		discharge(l, c, i, n);
		c->on_host = 1;
		charge(l, c, i, n);
		c->on_host = 0;
	}
	c->on_host = 1;
	watched(l, c, 0);
}

void
ledger_swap_in(struct ledger *l, struct ledger_client *c)
{
	if (c->on_host)
		swap_move(l, c, 0);
}

int
ledger_swap_in_fits(const struct ledger *l, const struct ledger_client *c)
{
	size_t i;

	for (i = 0; i < l->ndevices; i++)
		if (c->usage[i].host > ledger_available(l, c->group, i))
			return 0;
	return 1;
}
