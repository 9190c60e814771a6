/*
 * The ledger's arithmetic: limits, reserves, commits, rollbacks, releases
 * and the return of a departed client's charge, all clamped at zero.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "log.h"
#include "proto.h"
#include "units.h"

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

static uint64_t
add_saturated(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Charge n more to c on dev, or return n of its charge. */
static void
charge(struct ledger *l, struct ledger_client *c, size_t dev, uint64_t n)
{
	c->usage[dev].used = add_saturated(c->usage[dev].used, n);
	l->devices[dev].used = add_saturated(l->devices[dev].used, n);
}

static void
discharge(struct ledger *l, struct ledger_client *c, size_t dev, uint64_t n)
{
	c->usage[dev].used = sub_clamped(c->usage[dev].used, n,
	    "charge", c->pid);
	l->devices[dev].used = sub_clamped(l->devices[dev].used, n,
	    "device charge", c->pid);
}

void
ledger_init(struct ledger *l)
{
	memset(l, 0, sizeof(*l));
	l->default_kind = GF_LIMIT_PERCENT;
	l->default_value = 10000;
	TAILQ_INIT(&l->clients);
}

void
ledger_free(struct ledger *l)
{
	struct ledger_client *c;

	while ((c = TAILQ_FIRST(&l->clients)) != NULL)
		ledger_client_drop(l, c);
	free(l->devices);
	l->devices = NULL;
	l->ndevices = 0;
}

int
ledger_device_add(struct ledger *l, const uint8_t uuid[GF_UUID_LEN],
    uint32_t index, const char *name, uint64_t total, uint32_t swap_support)
{
	struct ledger_device *d;

	if (l->nclients > 0) {
		errno = EBUSY;
		return -1;
	}
	d = realloc(l->devices, (l->ndevices + 1) * sizeof(*d));
	if (d == NULL)
		return -1;
	l->devices = d;
	d = &l->devices[l->ndevices];
	memset(d, 0, sizeof(*d));
	memcpy(d->uuid, uuid, GF_UUID_LEN);
	proto_strlcpy(d->name, name, sizeof(d->name));
	d->index = index;
	d->swap_support = swap_support;
	d->total = total;
	d->capacity = total;
	return (int)l->ndevices++;
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
ledger_limit(const struct ledger *l, size_t dev, uint32_t kind,
    uint64_t value)
{
	uint64_t cap = l->devices[dev].capacity;
	uint64_t def = limit_resolve(l->default_kind, l->default_value, cap);
	uint64_t req;

	if (kind == GF_LIMIT_NONE)
		return def;
	req = limit_resolve(kind, value, cap);
	return req < def ? req : def;
}

/* Recompute the effective limit of every client that opened dev. */
static void
limits_update(struct ledger *l, size_t dev)
{
	struct ledger_client *c;

	TAILQ_FOREACH(c, &l->clients, entry) {
		struct ledger_usage *u = &c->usage[dev];

		if (u->opened)
			u->limit = ledger_limit(l, dev, u->req_kind,
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

	l->default_kind = kind;
	l->default_value = value;
	for (i = 0; i < l->ndevices; i++)
		limits_update(l, i);
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
	c->uid = uid;
	c->gid = gid;
	c->state = GF_STATE_RUNNING;
	proto_strlcpy(c->group, LEDGER_GROUP_DEFAULT, sizeof(c->group));
	ptrmap_init(&c->allocs);
	TAILQ_INSERT_TAIL(&l->clients, c, entry);
	l->nclients++;
	return c;
}

void
ledger_client_drop(struct ledger *l, struct ledger_client *c)
{
	struct ledger_alloc *a;
	size_t i, pos = 0;

	for (i = 0; i < l->ndevices; i++) {
		struct ledger_device *d = &l->devices[i];

		d->used = sub_clamped(d->used, c->usage[i].used,
		    "device charge", c->pid);
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
	}
	u->req_kind = kind;
	u->req_value = value;
	u->limit = ledger_limit(l, dev, kind, value);
}

int
ledger_reserve(struct ledger *l, struct ledger_client *c, size_t dev,
    uint64_t size)
{
	struct ledger_usage *u = &c->usage[dev];
	struct ledger_device *d = &l->devices[dev];
	uint64_t after;

	if (!u->opened)
		return LEDGER_NOT_OPEN;
	if (__builtin_add_overflow(u->used, size, &after) || after > u->limit)
		return LEDGER_LIMIT;
	if (__builtin_add_overflow(d->used, size, &after) ||
	    after > d->capacity)
		return LEDGER_COLLISION;
	u->pending += size;
	charge(l, c, dev, size);
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
	if (ptrmap_get(&c->allocs, ptr) != NULL) {
		log_warnx("ledger: pid %u commits 0x%llx twice; replacing "
		    "the old record", c->pid, (unsigned long long)ptr);
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
	return 0;

out_nomem:
	log_errx("ledger: no memory to record 0x%llx of pid %u; its charge "
	    "stays until the client leaves", (unsigned long long)ptr, c->pid);
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
	return 0;
}

int
ledger_release(struct ledger *l, struct ledger_client *c, uint64_t ptr)
{
	struct ledger_alloc *a = ptrmap_del(&c->allocs, ptr);

	if (a == NULL)
		return -1;
	discharge(l, c, a->device, a->size);
	free(a);
	return 0;
}
