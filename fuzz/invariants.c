/*
 * What must hold whenever the daemon is idle, read from its public
 * structs (of its code only two read-only questions are asked:
 * ledger_device_find, resolve_waiter_state): the ledger's invariants as
 * ledger.h states them, in exact arithmetic (a sum that saturated is a
 * broken invariant too), the counts beside them, limits and capacities
 * against what the input was allowed to charge past them, the wait queue
 * against the connections, no lost wake-up, and host swap's bookkeeping.
 * A violation is a finding.
 */
#include <stdlib.h>
#include <string.h>

#include "../daemon/resolve.h"
#include "../daemon/swap.h"
#include "../daemon/waitq.h"
#include "fuzz.h"
#include "proto.h"

typedef unsigned __int128 u128;

#define U64_END		((u128)1 << 64)

/* More than any limit admits: a pending reserve this big wrapped. */
#define HUGE_BYTES	(1ull << 62)

/* The sums over clients of one device or group share. */
struct tally {
	u128		 used;
	u128		 host;
	uint32_t	 nclients;	/* opened */
};

/* v in decimal, into buf (40 bytes hold any). */
static const char *
u128_format(u128 v, char *buf)
{
	char *p = buf + 39;

	*p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v != 0);
	return p;
}

/*
 * What a client's records, reserves and lease add up to on each device
 * (sum[dev]), exactly.
 */
static void
client_sums(const struct ledger *l, const struct ledger_client *c,
    u128 *sum)
{
	const struct ledger_alloc *al;
	size_t d, pos = 0;

	for (d = 0; d < l->ndevices; d++)
		sum[d] = (u128)c->usage[d].pending + c->usage[d].lease;
	while ((al = ptrmap_next(&c->allocs, &pos, NULL)) != NULL)
		if (al->device < l->ndevices)
			sum[al->device] += al->size;
}

/* Each client's charge on each device is what its records add up to. */
static void
check_client(const struct ledger *l, const struct ledger_client *c)
{
	const struct ledger_alloc *al;
	u128 sum[FZ_MAXDEV];
	char buf[40];
	size_t d, pos = 0;
	uint64_t key;

	while ((al = ptrmap_next(&c->allocs, &pos, &key)) != NULL)
		if (al->ptr != key || al->device >= l->ndevices)
			fz_fail("pid %u: record 0x%llx is kept as 0x%llx on "
			    "device %u", c->pid, (unsigned long long)al->ptr,
			    (unsigned long long)key, al->device);
	client_sums(l, c, sum);
	for (d = 0; d < l->ndevices; d++) {
		const struct ledger_usage *u = &c->usage[d];

		if ((u128)u->used + u->host != sum[d])
			fz_fail("pid %u device %zu: used %llu + host %llu, but "
			    "pending %llu + lease %llu + records make %s",
			    c->pid, d, (unsigned long long)u->used,
			    (unsigned long long)u->host,
			    (unsigned long long)u->pending,
			    (unsigned long long)u->lease,
			    u128_format(sum[d], buf));
		if (c->on_host ? u->used != 0 : u->host != 0)
			fz_fail("pid %u device %zu: %s, yet used %llu host "
			    "%llu", c->pid, d, c->on_host ? "swapped out" :
			    "on the device", (unsigned long long)u->used,
			    (unsigned long long)u->host);
		if (!u->opened && (u->used != 0 || u->host != 0))
			fz_fail("pid %u: charged on device %zu, never opened",
			    c->pid, d);
		if (u->pending >= HUGE_BYTES)
			fz_fail("pid %u device %zu: pending %llu: wrapped "
			    "below zero?", c->pid, d,
			    (unsigned long long)u->pending);
	}
}

static void
check_tally(const char *what, size_t dev, const struct tally *t,
    uint64_t used, uint64_t host, uint32_t nclients)
{
	char ubuf[40], hbuf[40];

	if (t->used != used || t->host != host || t->nclients != nclients)
		fz_fail("%s on device %zu: used %llu host %llu clients %u, its "
		    "clients add up to %s, %s, %u", what, dev,
		    (unsigned long long)used, (unsigned long long)host,
		    nclients, u128_format(t->used, ubuf),
		    u128_format(t->host, hbuf), t->nclients);
}

/* Devices and group shares hold the sums of their clients. */
static void
check_sums(const struct ledger *l)
{
	struct tally dev[FZ_MAXDEV], share[FZ_MAXDEV];
	const struct ledger_client *c;
	size_t d, g, n;
	uint32_t members;

	memset(dev, 0, sizeof(dev));
	n = 0;
	TAILQ_FOREACH(c, &l->clients, entry) {
		n++;
		if (c->group >= l->ngroups)
			fz_fail("pid %u is in group %zu of %zu", c->pid,
			    c->group, l->ngroups);
		check_client(l, c);
		for (d = 0; d < l->ndevices; d++) {
			dev[d].used += c->usage[d].used;
			dev[d].host += c->usage[d].host;
			dev[d].nclients += c->usage[d].opened ? 1 : 0;
		}
	}
	if (n != l->nclients)
		fz_fail("the ledger counts %zu clients and lists %zu",
		    l->nclients, n);
	for (d = 0; d < l->ndevices; d++)
		check_tally("the device", d, &dev[d], l->devices[d].used,
		    l->devices[d].host, l->devices[d].nclients);
	for (g = 0; g < l->ngroups; g++) {
		memset(share, 0, sizeof(share));
		members = 0;
		TAILQ_FOREACH(c, &l->clients, entry) {
			if (c->group != g)
				continue;
			members++;
			for (d = 0; d < l->ndevices; d++) {
				share[d].used += c->usage[d].used;
				share[d].host += c->usage[d].host;
				share[d].nclients += c->usage[d].opened ? 1 : 0;
			}
		}
		if (members != l->groups[g].nmembers)
			fz_fail("group '%s' counts %u members and has %u",
			    l->groups[g].pol.name, l->groups[g].nmembers,
			    members);
		for (d = 0; d < l->ndevices; d++)
			check_tally(l->groups[g].pol.name, d, &share[d],
			    l->groups[g].share[d].used,
			    l->groups[g].share[d].host,
			    l->groups[g].share[d].nclients);
	}
}

/* The connection of client lc, or NULL. */
static const struct conn *
conn_of(const struct arbiter *a, const struct ledger_client *lc, int *n)
{
	const struct conn *c, *found = NULL;

	*n = 0;
	TAILQ_FOREACH(c, &a->control.conns, entry)
		if (c->client == lc) {
			found = c;
			(*n)++;
		}
	return found;
}

/*
 * Each client has one connection, or none and departs; each waiter is a
 * connection's with a client, and each client's count of waiters is
 * right.
 */
static void
check_conns(const struct arbiter *a)
{
	const struct ledger_client *lc;
	const struct waitq_waiter *w;
	const struct conn *c;
	uint32_t waiters;
	size_t d;
	int n;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		c = conn_of(a, lc, &n);
		/* A process without the shim has none, and stays. */
		if (n > 1 || (c == NULL) != (lc->departing != 0 ||
		    lc->unshim != NULL))
			fz_fail("pid %u: %d connections, departing %d",
			    lc->pid, n, lc->departing);
		waiters = 0;
		for (d = 0; d < a->ledger.ndevices; d++)
			for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
			    w = waitq_next(&a->waitq, d, w))
				if (c != NULL && w->owner == c)
					waiters++;
		if (waiters != lc->nwaiting)
			fz_fail("pid %u counts %u requests waiting, the queue "
			    "holds %u", lc->pid, lc->nwaiting, waiters);
	}
	for (d = 0; d < a->ledger.ndevices; d++)
		for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
		    w = waitq_next(&a->waitq, d, w)) {
			TAILQ_FOREACH(c, &a->control.conns, entry)
				if (w->owner == c)
					break;
			if (c == NULL || c->client == NULL || w->dev != d)
				fz_fail("a waiter on device %zu of no client",
				    d);
		}
}

/* The client of s's connection, or NULL. */
static const struct ledger_client *
client_of(const struct fz_slot *s)
{
	const struct conn *c;

	TAILQ_FOREACH(c, &fz.a.control.conns, entry)
		if (c->fd == s->dfd)
			return c->client;
	return NULL;
}

/* Bytes charged to s's client on dev whatever the limits. */
static void
note_excess(struct fz_slot *s, size_t dev, uint64_t bytes)
{
	if (dev >= FZ_MAXDEV)
		return;
	if (__builtin_add_overflow(fz.excess[dev], bytes, &fz.excess[dev]))
		fz.excess[dev] = UINT64_MAX;
	if (__builtin_add_overflow(s->excess[dev], bytes, &s->excess[dev]))
		s->excess[dev] = UINT64_MAX;
}

/*
 * A packet s sends: what it may charge whatever the limits, as the
 * protocol allows (a COMMIT beyond what was reserved, re-registrations
 * among them; LEASE_RESTORE), and whether it may lower a limit under what
 * is held (DEVICE_OPEN again, an admin's command).
 */
void
fz_note_sent(struct fz_slot *s, const void *pkt, size_t len)
{
	const struct ledger_client *lc = s->fd >= 0 ? client_of(s) : NULL;
	uint64_t taken;
	struct gf_msg m;
	int dev;

	if (len < sizeof(m.hdr) || len > sizeof(m))
		return;
	/* Packets before it not read yet: the client's state is older. */
	if (s->sent > 0)
		lc = NULL;
	memset(&m, 0, sizeof(m));
	memcpy(&m, pkt, len);
	switch (m.hdr.type) {
	case GF_MSG_LEASE_RESTORE:
		dev = ledger_device_find(&fz.a.ledger, m.u.lease.uuid);
		if (dev >= 0)
			note_excess(s, (size_t)dev, m.u.lease.size);
		break;
	case GF_MSG_COMMIT:
		dev = ledger_device_find(&fz.a.ledger, m.u.commit.uuid);
		if (dev < 0)
			break;
		taken = lc != NULL ? lc->usage[dev].pending : 0;
		taken = taken < m.u.commit.reserved ? taken :
		    m.u.commit.reserved;
		if (m.u.commit.size > taken)
			note_excess(s, (size_t)dev, m.u.commit.size - taken);
		break;
	case GF_MSG_DEVICE_OPEN:
		dev = ledger_device_find(&fz.a.ledger, m.u.device_open.uuid);
		if (dev >= 0 && (lc == NULL || lc->usage[dev].opened))
			fz.relimited = "a device opened again";
		break;
	case GF_MSG_LIMIT_REQ:
	case GF_MSG_GROUP_SET:
	case GF_MSG_GROUP_RM:
	case GF_MSG_RELOAD_REQ:
		fz.relimited = "an admin's command";
		break;
	}
}

/* The slot of lc's connection, or NULL. */
static const struct fz_slot *
slot_of_client(const struct arbiter *a, const struct ledger_client *lc)
{
	const struct conn *c;
	size_t i;

	TAILQ_FOREACH(c, &a->control.conns, entry)
		if (c->client == lc)
			for (i = 0; i < FZ_NSLOTS; i++)
				if (fz.slots[i].fd >= 0 &&
				    fz.slots[i].dfd == c->fd)
					return &fz.slots[i];
	return NULL;
}

static int
beyond(uint64_t held, uint64_t most, uint64_t excess)
{
	return held > most && held - most > excess;
}

/*
 * No device holds more than its capacity, nor a client more than its
 * limit, beyond what the input made the daemon charge whatever the
 * limits, unless the configuration or the limits changed.
 */
static void
check_limits(const struct arbiter *a)
{
	const struct ledger_client *lc;
	const struct ledger_usage *u;
	const struct fz_slot *s;
	uint64_t excess;
	size_t i;

	for (i = 0; i < a->ledger.ndevices && !fz.recapacitied; i++)
		if (beyond(a->ledger.devices[i].used,
		    a->ledger.devices[i].capacity, fz.excess[i]))
			fz_fail("device %zu holds %llu bytes: its capacity "
			    "%llu and %llu charged whatever the limits are "
			    "less", i, (unsigned long long)
			    a->ledger.devices[i].used, (unsigned long long)
			    a->ledger.devices[i].capacity,
			    (unsigned long long)fz.excess[i]);
	if (fz.relimited != NULL)
		return;
	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		if ((s = slot_of_client(a, lc)) == NULL)
			continue;
		for (i = 0; i < a->ledger.ndevices; i++) {
			u = &lc->usage[i];
			/* Its context memory too, charged as NVML said. */
			if (__builtin_add_overflow(s->excess[i],
			    s->proc->nvml_max[i], &excess))
				excess = UINT64_MAX;
			if (u->opened && beyond(u->used + u->host, u->limit,
			    excess))
				fz_fail("pid %u holds %llu bytes on device %zu: "
				    "its limit %llu and %llu charged whatever "
				    "the limits are less", lc->pid,
				    (unsigned long long)(u->used + u->host), i,
				    (unsigned long long)u->limit,
				    (unsigned long long)excess);
		}
	}
}

/*
 * No lost wake-up: once the daemon is idle, no waiter that its serving
 * walk would grant (waitq.h: rank order, the first waiter that waits for
 * the device a barrier to lower priorities) still waits. Memory that came
 * back was handed on by the free itself.
 */
static void
check_wakeups(const struct arbiter *a)
{
	const struct waitq_waiter *w;
	int32_t barrier = 0;
	int blocked;
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++) {
		blocked = 0;
		for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
		    w = waitq_next(&a->waitq, d, w)) {
			if (blocked && w->priority < barrier)
				break;
			switch (resolve_waiter_state(a, w)) {
			case WAITQ_FITS:
				fz_fail("a request of %llu bytes on device %zu "
				    "fits, yet waits", (unsigned long long)
				    w->bytes, d);
			case WAITQ_WAITS:
				if (!blocked)
					barrier = w->priority;
				blocked = 1;
				break;
			}
		}
	}
}

/* Host swap: what is out is on the host, and counted. */
static void
check_swap(const struct arbiter *a)
{
	const struct ledger_client *lc;
	uint32_t out = 0;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		out += lc->swap != SWAP_NONE;
		if (lc->on_host != (lc->swap == SWAP_OUT))
			fz_fail("pid %u: swap state %d, on host %d", lc->pid,
			    lc->swap, lc->on_host);
	}
	if (out != a->swap.nout)
		fz_fail("swap counts %u processes out, %u are", a->swap.nout,
		    out);
}

void
fz_check(const struct arbiter *a)
{
	if (a->ledger.ndevices > FZ_MAXDEV)
		fz_fail("%zu devices", a->ledger.ndevices);
	check_sums(&a->ledger);
	check_conns(a);
	check_limits(a);
	check_wakeups(a);
	check_swap(a);
}

/* After every process has exited: nothing held, nobody known. */
void
fz_check_empty(const struct arbiter *a)
{
	size_t d;

	if (a->ledger.nclients != 0 || !TAILQ_EMPTY(&a->control.conns) ||
	    !TAILQ_EMPTY(&a->departs))
		fz_fail("every process has exited, yet %zu clients remain",
		    a->ledger.nclients);
	for (d = 0; d < a->ledger.ndevices; d++)
		if (a->ledger.devices[d].used != 0 ||
		    a->ledger.devices[d].host != 0 ||
		    waitq_count_dev(&a->waitq, d) != 0)
			fz_fail("every process has exited, yet device %zu "
			    "holds %llu", d,
			    (unsigned long long)a->ledger.devices[d].used);
}
