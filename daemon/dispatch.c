/*
 * Message handling: which messages a connection may send in which state,
 * the shim's conversation against the ledger, collisions handed to the
 * resolvers, memory returned handed to the wait queue, the streamed
 * replies to queries and the events followed, admin commands, and limit
 * updates pushed to clients after a reload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "adminctl.h"
#include "arbiter.h"
#include "control.h"
#include "depart.h"
#include "dispatch.h"
#include "event.h"
#include "groups.h"
#include "ledger.h"
#include "lease.h"
#include "log.h"
#include "overhead.h"
#include "proto.h"
#include "resolve.h"
#include "swap.h"
#include "units.h"
#include "uuid.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

#define CUDA_ERROR_OUT_OF_MEMORY	2	/* cuda.h's CUresult */

/* In which states of its connection a message is valid. */
enum {
	ANY,		/* queries: before or after HELLO */
	FRESH,		/* only before HELLO */
	CLIENT,		/* only after HELLO */
};

typedef int	handler_fn(struct arbiter *, struct conn *,
		    const struct gf_msg *, char *, size_t);

/*
 * A shim of another protocol version asks again twice a second: a refusal
 * is a warning at most once a minute, a debug line otherwise.
 */
static void
hello_refused_log(uint32_t pid, unsigned version)
{
	static uint64_t quiet_until;
	static unsigned quieted;
	uint64_t now = event_now_ms();

	if (quiet_until != 0 && now < quiet_until) {
		quieted++;
		log_debug("refused pid %u: protocol %u", pid, version);
		return;
	}
	log_warnx("refused pid %u: it speaks protocol %u, gpufracd %s speaks "
	    "%u%s", pid, version, GPUFRAC_VERSION, GF_PROTO_VERSION,
	    quieted ? " (with others refused since the last warning)" : "");
	quiet_until = now + 60000;
	quieted = 0;
}

/*
 * A HELLO of a protocol version not spoken here: the ERROR that says so
 * (include/gpufrac/proto.h, Versions), then the connection closes.
 */
static int
hello_refuse(struct conn *c, const struct gf_msg *m, char *why,
    size_t whylen)
{
	char msg[GF_ERRMSG_LEN];

	snprintf(msg, sizeof(msg), "gpufracd %s speaks protocol %u only: use "
	    "the libgpufrac.so installed with it", GPUFRAC_VERSION,
	    GF_PROTO_VERSION);
	if (conn_reply_error(c, m->hdr.seq, GF_ERR_VERSION, msg, why,
	    whylen) < 0)
		return -1;
	hello_refused_log(c->pid, m->hdr.version);
	control_close_later(c, NULL);
	return 0;
}

/* A client's version as it is logged and shown: no control characters. */
static void
version_keep(char dst[GF_VERSION_LEN], const char *src)
{
	size_t i;

	proto_strlcpy(dst, src, GF_VERSION_LEN);
	for (i = 0; dst[i] != '\0'; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
}

static int
on_hello(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_hello *h = &m->u.hello;
	struct gf_hello_ok ok;

	if (m->hdr.version != GF_PROTO_VERSION)
		return hello_refuse(c, m, why, whylen);
	if (h->resolver != GF_UNSET && h->resolver > GF_RESOLVER_SWAP) {
		snprintf(why, whylen, "bad resolver %u in HELLO", h->resolver);
		return -1;
	}
	/*
	 * The same process again, its old connection closed: it re-registers
	 * every live allocation, so its old charge goes now, not at its exit.
	 */
	if (depart_cancel(a, c->pid) > 0)
		resolve_serve(a);
	/* Requests for priority, resolver and timeout: none is granted yet. */
	c->client = ledger_client_new(&a->ledger, c->pid, c->uid, c->gid,
	    c->cgroup);
	if (c->client == NULL) {
		snprintf(why, whylen, "out of memory for a new client");
		return -1;
	}
	ledger_client_group(&a->ledger, c->client, groups_match(&a->groups,
	    c->cgroup, c->uid, c->gid));
	version_keep(c->client->version, h->version);
	log_info("client pid %u (uid %u, libgpufrac %s) connected, cgroup "
	    "'%s', group '%s'", c->pid, c->uid, c->client->version[0] ?
	    c->client->version : "unknown", c->cgroup,
	    a->ledger.groups[c->client->group].pol.name);
	swap_hello(a, c->client, c->rx_fd);
	c->rx_fd = -1;
	memset(&ok, 0, sizeof(ok));
	ok.pid = c->pid;
	return conn_reply(c, GF_MSG_HELLO_OK, m->hdr.seq, &ok, why, whylen);
}

/* The unused part of the leases on dev of group's clients (SIZE_MAX: all). */
static uint64_t
leased_unused(const struct ledger *l, size_t group, size_t dev)
{
	const struct ledger_client *lc;
	uint64_t n = 0;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (group == SIZE_MAX || lc->group == group)
			n += lease_unused(lc, dev);
	return n;
}

/*
 * What a client is told of dev: DEVICE_INFO, now its last word. Its use
 * and its group's are of what is allocated: a lease not drawn from yet
 * is there for the taking.
 */
static void
device_info(const struct arbiter *a, struct ledger_client *lc, size_t dev,
    struct gf_device_info *info)
{
	const struct ledger_share *sh = &a->ledger.groups[lc->group].share[dev];

	memset(info, 0, sizeof(*info));
	memcpy(info->uuid, a->ledger.devices[dev].uuid, GF_UUID_LEN);
	info->limit = lc->usage[dev].limit;
	info->capacity = a->ledger.devices[dev].capacity;
	info->used = lc->usage[dev].used - lease_unused(lc, dev);
	info->overhead = overhead_of(lc, dev);
	if (a->ledger.groups[lc->group].pol.per_process) {
		info->group_limit = info->limit;
		info->group_used = info->used;
	} else {
		info->group_limit = sh->limit;
		info->group_used = sh->used - leased_unused(&a->ledger,
		    lc->group, dev);
	}
	lc->usage[dev].limit_sent = info->limit;
	lc->usage[dev].capacity_sent = info->capacity;
	lc->usage[dev].overhead_sent = info->overhead;
}

static int
on_device_open(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_device_open *o = &m->u.device_open;
	struct gf_device_info info;
	char ubuf[UUID_STR_LEN], msg[GF_ERRMSG_LEN];
	int dev;

	if (o->limit_kind > GF_LIMIT_PERCENT || (o->limit_kind ==
	    GF_LIMIT_PERCENT && (o->limit_value == 0 ||
	    o->limit_value > 10000))) {
		snprintf(why, whylen, "bad limit (kind %u, value %llu) in "
		    "DEVICE_OPEN", o->limit_kind,
		    (unsigned long long)o->limit_value);
		return -1;
	}
	uuid_format(o->uuid, ubuf, sizeof(ubuf));
	if ((dev = ledger_device_find(&a->ledger, o->uuid)) < 0) {
		log_debug("pid %u opens unknown device %s", c->pid, ubuf);
		snprintf(msg, sizeof(msg), "no device %s", ubuf);
		return conn_reply_error(c, m->hdr.seq, GF_ERR_UNKNOWN_DEVICE, msg,
		    why, whylen);
	}
	ledger_open(&a->ledger, c->client, (size_t)dev, o->limit_kind,
	    o->limit_value);
	lease_open(a, c->client, (size_t)dev, o->ordinal);
	/* Its context is there already: charged before it reserves. */
	overhead_client(a, c->client, (size_t)dev);
	device_info(a, c->client, (size_t)dev, &info);
	log_debug("pid %u opens %s as ordinal %u: limit %llu", c->pid, ubuf,
	    o->ordinal, (unsigned long long)info.limit);
	return conn_reply(c, GF_MSG_DEVICE_INFO, m->hdr.seq, &info, why, whylen);
}

/* Deny a RESERVE for its limits or device, with an event. */
static int
reserve_deny(struct arbiter *a, struct conn *c, uint32_t seq, int dev,
    uint64_t size, uint32_t reason, const char *evreason, char *why,
    size_t whylen)
{
	struct gf_deny deny;

	arbiter_event(a, GF_EV_DENY, c->client, dev, size, "%s", evreason);
	memset(&deny, 0, sizeof(deny));
	deny.cuda_error = CUDA_ERROR_OUT_OF_MEMORY;
	deny.reason = reason;
	if (dev >= 0) {
		deny.used = c->client->usage[dev].used;
		deny.limit = c->client->usage[dev].limit;
	}
	log_debug("pid %u: reserve of %llu bytes denied (%s)", c->pid,
	    (unsigned long long)size, evreason);
	return conn_reply(c, GF_MSG_DENY, seq, &deny, why, whylen);
}

/* Whether size fits lc on dev now, behind any waiter of higher priority. */
static int
reserve_admit(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t size)
{
	int rc = ledger_admit(&a->ledger, lc, dev, size);

	/*
	 * What is free now may be owed to a waiter of higher priority;
	 * not what the group is guaranteed, which no waiter could take.
	 */
	if (rc == LEDGER_GRANT &&
	    !ledger_within_guarantee(&a->ledger, lc, dev, size) &&
	    resolve_queued_above(a, dev,
	    a->ledger.groups[lc->group].pol.priority))
		rc = LEDGER_COLLISION;
	return rc;
}

static int
on_reserve(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_reserve *r = &m->u.reserve;
	struct ledger_client *lc = c->client;
	struct gf_grant grant;
	uint64_t lent;
	int dev, rc;

	if (r->flags & ~GF_RESERVE_LEASE) {
		snprintf(why, whylen, "unknown flags 0x%x in RESERVE",
		    r->flags);
		return -1;
	}
	if ((dev = ledger_device_find(&a->ledger, r->uuid)) < 0)
		return reserve_deny(a, c, m->hdr.seq, -1, r->size,
		    GF_DENY_UNKNOWN_DEVICE, "unknown device", why, whylen);
	/* Asking for a lease again: what is left of the old one comes back. */
	if (r->flags & GF_RESERVE_LEASE)
		(void)lease_take(a, lc, (size_t)dev);
	rc = reserve_admit(a, lc, (size_t)dev, r->size);
	/* Unused leases never stand in the way of a request. */
	if (rc != LEDGER_GRANT && rc != LEDGER_NOT_OPEN &&
	    lease_reclaim(a, lc, (size_t)dev, rc) > 0)
		rc = reserve_admit(a, lc, (size_t)dev, r->size);
	/* Only while lending may a grant borrow: no sum to take otherwise. */
	lent = a->ledger.lend ? ledger_lent(&a->ledger, (size_t)dev) : 0;
	if (rc == LEDGER_GRANT)
		rc = ledger_reserve(&a->ledger, lc, (size_t)dev, r->size);
	switch (rc) {
	case LEDGER_GRANT:
		arbiter_event(a, GF_EV_GRANT, lc, dev, r->size, "fits");
		memset(&grant, 0, sizeof(grant));
		if (r->flags & GF_RESERVE_LEASE)
			grant.lease = lease_grant(a, lc, (size_t)dev);
		resolve_lent(a, lc, (size_t)dev, lent);
		grant.used = lc->usage[dev].used;
		grant.limit = lc->usage[dev].limit;
		return conn_reply(c, GF_MSG_GRANT, m->hdr.seq, &grant, why,
		    whylen);
	case LEDGER_LIMIT:
		return reserve_deny(a, c, m->hdr.seq, dev, r->size,
		    GF_DENY_LIMIT, "own limit", why, whylen);
	case LEDGER_GROUP_LIMIT:
		return resolve_group_limit(a, c, m->hdr.seq, (size_t)dev,
		    r->size, why, whylen);
	case LEDGER_COLLISION:
		return resolve_collision(a, c, m->hdr.seq, (size_t)dev,
		    r->size, why, whylen);
	default:
		return reserve_deny(a, c, m->hdr.seq, dev, r->size,
		    GF_DENY_UNKNOWN_DEVICE, "device not open", why, whylen);
	}
}

static int
on_commit(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_commit *cm = &m->u.commit;
	char ubuf[UUID_STR_LEN];
	int dev;

	/* The context records are the daemon's to set, not the client's. */
	if (overhead_key_is(cm->ptr)) {
		snprintf(why, whylen, "COMMIT of 0x%llx, a record the daemon "
		    "keeps", (unsigned long long)cm->ptr);
		return -1;
	}
	dev = ledger_device_find(&a->ledger, cm->uuid);
	if (dev >= 0 && c->client->usage[dev].opened) {
		/* ENOMEM is logged by the ledger; the charge stands. */
		(void)ledger_commit(&a->ledger, c->client, (size_t)dev,
		    cm->ptr, cm->reserved, cm->size, cm->kind, event_now_ms());
		if (cm->size < cm->reserved)
			resolve_serve(a);
		return 0;
	}
	log_warnx("pid %u commits 0x%llx on %s, which it has not opened; "
	    "ignored", c->pid, (unsigned long long)cm->ptr,
	    uuid_format(cm->uuid, ubuf, sizeof(ubuf)));
	return 0;
}

static int
on_rollback(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_rollback *rb = &m->u.rollback;
	char ubuf[UUID_STR_LEN];
	int dev;

	(void)why;
	(void)whylen;
	dev = ledger_device_find(&a->ledger, rb->uuid);
	if (dev < 0 || ledger_rollback(&a->ledger, c->client, (size_t)dev,
	    rb->size) < 0)
		log_warnx("pid %u rolls back a reserve on %s, which it has "
		    "not opened; ignored", c->pid,
		    uuid_format(rb->uuid, ubuf, sizeof(ubuf)));
	else
		resolve_serve(a);
	return 0;
}

static int
on_free(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	if (overhead_key_is(m->u.free.ptr)) {
		snprintf(why, whylen, "FREE of 0x%llx, a record the daemon "
		    "keeps", (unsigned long long)m->u.free.ptr);
		return -1;
	}
	if (ledger_release(&a->ledger, c->client, m->u.free.ptr) < 0)
		log_debug("pid %u frees 0x%llx, which it never committed; "
		    "ignored", c->pid, (unsigned long long)m->u.free.ptr);
	else
		resolve_serve(a);
	return 0;
}

/* The device a LEASE_RETURN or LEASE_RESTORE names, opened; or -1. */
static int
lease_device(struct arbiter *a, struct conn *c, const struct gf_msg *m)
{
	char ubuf[UUID_STR_LEN];
	int dev = ledger_device_find(&a->ledger, m->u.lease.uuid);

	if (dev >= 0 && c->client->usage[dev].opened)
		return dev;
	log_warnx("pid %u sends %s for %s, which it has not opened; ignored",
	    c->pid, proto_type_name(m->hdr.type),
	    uuid_format(m->u.lease.uuid, ubuf, sizeof(ubuf)));
	return -1;
}

static int
on_lease_return(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	int dev;

	(void)why;
	(void)whylen;
	if ((dev = lease_device(a, c, m)) < 0)
		return 0;
	if (ledger_lease_shrink(&a->ledger, c->client, (size_t)dev,
	    m->u.lease.size) > 0)
		resolve_serve(a);
	return 0;
}

static int
on_lease_restore(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	int dev;

	if ((dev = lease_device(a, c, m)) < 0)
		return 0;
	if (lease_restore(a, c->client, (size_t)dev, m->u.lease.size) < 0) {
		snprintf(why, whylen, "LEASE_RESTORE of a lease it holds");
		return -1;
	}
	return 0;
}

/* One GROUP_STATUS: of group g on device dev, or (dev < 0) of none. */
static int
group_record(const struct ledger *l, struct conn *c, uint32_t seq,
    const struct ledger_group *g, int dev, uint64_t borrowed, char *why,
    size_t whylen)
{
	struct gf_group_status r;

	memset(&r, 0, sizeof(r));
	proto_strlcpy(r.name, g->pol.name, sizeof(r.name));
	r.priority = g->pol.priority;
	r.resolver = g->pol.resolver;
	r.on_preempt = g->pol.on_preempt;
	r.runtime = g->pol.runtime ? 1 : 0;
	if (dev >= 0) {
		memcpy(r.uuid, l->devices[dev].uuid, GF_UUID_LEN);
		r.limit = g->share[dev].limit;
		r.guarantee = g->share[dev].guarantee;
		r.used = g->share[dev].used;
		r.nclients = g->share[dev].nclients;
		r.borrowed = borrowed;
	} else
		r.nclients = g->nmembers;
	return conn_reply(c, GF_MSG_GROUP_STATUS, seq, &r, why, whylen);
}

/*
 * Every group on every device, members or not; without devices, one
 * record per group (no uuid) so that the groups still show.
 */
static int
status_groups(const struct ledger *l, struct conn *c, uint32_t seq,
    char *why, size_t whylen)
{
	uint64_t *borrowed = calloc(l->ngroups * (l->ndevices ? l->ndevices :
	    1), sizeof(*borrowed));
	struct gf_end end;
	uint32_t count = 0;
	size_t i, d;
	int rc = 0;

	if (borrowed == NULL) {
		snprintf(why, whylen, "out of memory for a status");
		return -1;
	}
	for (d = 0; d < l->ndevices; d++)
		ledger_borrowed(l, d, &borrowed[d * l->ngroups]);
	for (i = 0; i < l->ngroups && rc == 0; i++) {
		for (d = 0; d < l->ndevices && rc == 0; d++, count++)
			rc = group_record(l, c, seq, &l->groups[i], (int)d,
			    borrowed[d * l->ngroups + i], why, whylen);
		if (l->ndevices == 0 && rc == 0)
			rc = group_record(l, c, seq, &l->groups[i], -1, 0,
			    why, whylen);
		count += l->ndevices == 0;
	}
	free(borrowed);
	if (rc < 0)
		return -1;
	memset(&end, 0, sizeof(end));
	end.count = count;
	return conn_reply(c, GF_MSG_GROUP_END, seq, &end, why, whylen);
}

static int
on_status_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct ledger *l = &a->ledger;
	struct gf_device_status ds;
	struct gf_status st;
	struct gf_end end;
	size_t i;

	memset(&st, 0, sizeof(st));
	proto_strlcpy(st.version, GPUFRAC_VERSION, sizeof(st.version));
	st.pid = (uint32_t)getpid();
	st.nclients = (uint32_t)l->nclients;
	st.ndevices = (uint32_t)l->ndevices;
	st.uptime_ms = event_now_ms() - a->start_ms;
	st.swap_available = (uint32_t)a->swap.available;
	proto_strlcpy(st.swap_reason, a->swap.reason, sizeof(st.swap_reason));
	if (conn_reply(c, GF_MSG_STATUS, m->hdr.seq, &st, why, whylen) < 0)
		return -1;
	for (i = 0; i < l->ndevices; i++) {
		const struct ledger_device *d = &l->devices[i];

		memset(&ds, 0, sizeof(ds));
		memcpy(ds.uuid, d->uuid, GF_UUID_LEN);
		proto_strlcpy(ds.name, d->name, sizeof(ds.name));
		ds.index = d->index;
		ds.total = d->total;
		ds.reserve = d->reserve;
		ds.capacity = d->capacity;
		ds.used = d->used;
		ds.host = d->host;
		ds.leased = leased_unused(l, SIZE_MAX, i);
		ds.nclients = d->nclients;
		ds.lent = ledger_lent(l, i);
		if (conn_reply(c, GF_MSG_DEVICE_STATUS, m->hdr.seq, &ds, why,
		    whylen) < 0)
			return -1;
	}
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)l->ndevices;
	if (conn_reply(c, GF_MSG_DEVICE_END, m->hdr.seq, &end, why, whylen) < 0)
		return -1;
	return status_groups(l, c, m->hdr.seq, why, whylen);
}

/* One CLIENT record: of device dev, or (dev < 0) of no device. */
static int
ps_record(const struct arbiter *a, struct conn *c, uint32_t seq,
    const struct ledger_client *lc, int dev, char *why, size_t whylen)
{
	const struct ledger_group *g = &a->ledger.groups[lc->group];
	struct gf_client r;

	memset(&r, 0, sizeof(r));
	r.pid = lc->pid;
	r.uid = lc->uid;
	r.gid = lc->gid;
	r.state = lc->state;
	r.priority = g->pol.priority;
	proto_strlcpy(r.group, g->pol.name, sizeof(r.group));
	if (dev >= 0) {
		memcpy(r.uuid, a->ledger.devices[dev].uuid, GF_UUID_LEN);
		r.used = lc->usage[dev].used;
		r.host = lc->usage[dev].host;
		r.leased = lease_unused(lc, (size_t)dev);
		r.limit = lc->usage[dev].limit;
		r.guarantee = g->share[dev].guarantee;
	}
	r.idle_ms = activity_idle_ms(lc);
	proto_strlcpy(r.version, lc->version, sizeof(r.version));
	return conn_reply(c, GF_MSG_CLIENT, seq, &r, why, whylen);
}

static int
on_ps_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct ledger_client *lc;
	struct gf_end end;
	uint32_t count = 0;
	size_t i;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		uint32_t opened = 0;

		for (i = 0; i < a->ledger.ndevices; i++) {
			if (!lc->usage[i].opened)
				continue;
			if (ps_record(a, c, m->hdr.seq, lc, (int)i, why,
			    whylen) < 0)
				return -1;
			opened++;
		}
		if (opened == 0 && ps_record(a, c, m->hdr.seq, lc, -1, why,
		    whylen) < 0)
			return -1;
		count += opened ? opened : 1;
	}
	memset(&end, 0, sizeof(end));
	end.count = count;
	return conn_reply(c, GF_MSG_CLIENT_END, m->hdr.seq, &end, why, whylen);
}

static int
alloc_compare(const void *x, const void *y)
{
	const struct ledger_alloc *a = *(const struct ledger_alloc *const *)x;
	const struct ledger_alloc *b = *(const struct ledger_alloc *const *)y;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

/*
 * Every live allocation of every client with pid, sorted by device and
 * address, into *v (malloc'd; NULL when there are none). -1 on ENOMEM.
 */
static int
allocs_collect(const struct ledger *l, uint32_t pid,
    const struct ledger_alloc ***v, size_t *n)
{
	const struct ledger_client *lc = NULL;
	struct ledger_alloc *al;
	size_t total = 0, pos;

	while ((lc = ledger_client_find(l, pid, lc)) != NULL)
		total += lc->allocs.len;
	*v = NULL;
	*n = 0;
	if (total == 0)
		return 0;
	if ((*v = malloc(total * sizeof(**v))) == NULL)
		return -1;
	while ((lc = ledger_client_find(l, pid, lc)) != NULL)
		for (pos = 0; (al = ptrmap_next(&lc->allocs, &pos, NULL)); )
			(*v)[(*n)++] = al;
	qsort(*v, *n, sizeof(**v), alloc_compare);
	return 0;
}

static int
on_allocs_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	uint32_t pid = m->u.allocs_req.pid;
	const struct ledger_alloc **v;
	uint64_t now = event_now_ms();
	char msg[GF_ERRMSG_LEN];
	struct gf_alloc r;
	struct gf_end end;
	size_t i, n;
	int rc = 0;

	if (ledger_client_find(&a->ledger, pid, NULL) == NULL) {
		snprintf(msg, sizeof(msg), "no client with pid %u", pid);
		return conn_reply_error(c, m->hdr.seq, GF_ERR_NO_SUCH_PID, msg,
		    why, whylen);
	}
	if (allocs_collect(&a->ledger, pid, &v, &n) < 0) {
		snprintf(why, whylen, "out of memory listing the allocations "
		    "of pid %u", pid);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		memset(&r, 0, sizeof(r));
		memcpy(r.uuid, a->ledger.devices[v[i]->device].uuid,
		    GF_UUID_LEN);
		r.ptr = v[i]->ptr;
		r.size = v[i]->size;
		r.age_ms = now >= v[i]->time_ms ? now - v[i]->time_ms : 0;
		r.kind = v[i]->kind;
		rc = conn_reply(c, GF_MSG_ALLOC, m->hdr.seq, &r, why, whylen);
	}
	free(v);
	if (rc < 0)
		return -1;
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)n;
	return conn_reply(c, GF_MSG_ALLOC_END, m->hdr.seq, &end, why, whylen);
}

static int
on_swap_in(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	return swap_on_swap_in(a, c, m->hdr.seq, why, whylen);
}

/* A follower's new event; a connection that cannot take it goes. */
static void
follow_event(void *arg, const struct gf_event *e)
{
	struct conn *c = arg;

	if (c->close_timer > 0)
		return;
	if (conn_send(c, GF_MSG_EVENT, c->follow_seq, e) < 0)
		control_close_later(c, c->err);
}

static int
on_events_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_event *e;
	struct gf_end end;
	uint64_t cursor = 0;
	uint32_t count = 0;

	if (m->u.events_req.follow > 1) {
		snprintf(why, whylen, "bad follow %u in EVENTS_REQ",
		    m->u.events_req.follow);
		return -1;
	}
	while ((e = events_next(&a->events, &cursor)) != NULL) {
		if (conn_reply(c, GF_MSG_EVENT, m->hdr.seq, e, why, whylen) < 0)
			return -1;
		count++;
	}
	memset(&end, 0, sizeof(end));
	end.count = count;
	if (conn_reply(c, GF_MSG_EVENT_END, m->hdr.seq, &end, why, whylen) < 0)
		return -1;
	if (!m->u.events_req.follow)
		return 0;
	if (c->following)
		(void)events_unfollow(&a->events, follow_event, c);
	if (events_follow(&a->events, follow_event, c) < 0) {
		snprintf(why, whylen, "out of memory for a follower");
		return -1;
	}
	c->following = 1;
	c->follow_seq = m->hdr.seq;
	log_debug("pid %u follows the events", c->pid);
	return 0;
}

int
dispatch_conn_closing(struct arbiter *a, struct conn *c)
{
	int kept = 0;

	if (c->following)
		(void)events_unfollow(&a->events, follow_event, c);
	c->following = 0;
	resolve_conn_gone(a, c);
	if (c->client != NULL)
		kept = depart_begin(a, c->client);
	c->client = NULL;
	return kept;
}

struct handler {
	uint16_t	 type;
	int		 state;		/* ANY, FRESH or CLIENT */
	handler_fn	*fn;
};

static const struct handler handlers[] = {
	{ GF_MSG_HELLO, FRESH, on_hello },
	{ GF_MSG_DEVICE_OPEN, CLIENT, on_device_open },
	{ GF_MSG_RESERVE, CLIENT, on_reserve },
	{ GF_MSG_COMMIT, CLIENT, on_commit },
	{ GF_MSG_ROLLBACK, CLIENT, on_rollback },
	{ GF_MSG_FREE, CLIENT, on_free },
	{ GF_MSG_SWAP_IN, CLIENT, on_swap_in },
	{ GF_MSG_LEASE_RETURN, CLIENT, on_lease_return },
	{ GF_MSG_LEASE_RESTORE, CLIENT, on_lease_restore },
	{ GF_MSG_STATUS_REQ, ANY, on_status_req },
	{ GF_MSG_PS_REQ, ANY, on_ps_req },
	{ GF_MSG_ALLOCS_REQ, ANY, on_allocs_req },
	{ GF_MSG_EVENTS_REQ, ANY, on_events_req },
	{ GF_MSG_RELOAD_REQ, ANY, adminctl_reload },
	{ GF_MSG_SWAP_REQ, ANY, adminctl_swap },
	{ GF_MSG_GROUP_RULE, ANY, adminctl_group_rule },
	{ GF_MSG_GROUP_SET, ANY, adminctl_group_set },
	{ GF_MSG_GROUP_RM, ANY, adminctl_group_rm },
	{ GF_MSG_LIMIT_REQ, ANY, adminctl_limit },
};

int
dispatch_msg(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const char *name = proto_type_name(m->hdr.type);
	const struct handler *h = NULL;
	char reason[GF_ERRMSG_LEN];
	size_t i;

	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].type == m->hdr.type)
			h = &handlers[i];
	if (h == NULL) {
		snprintf(why, whylen, "it sent %s, which only the daemon "
		    "sends", name);
		return -1;
	}
	if (h->state == FRESH && c->client != NULL)
		snprintf(reason, sizeof(reason), "%s twice", name);
	else if (h->state == CLIENT && c->client == NULL)
		snprintf(reason, sizeof(reason), "%s before HELLO", name);
	else
		return h->fn(a, c, m, why, whylen);
	/* Say why before hanging up; the close that follows is what counts. */
	(void)conn_reply_error(c, m->hdr.seq, GF_ERR_STATE, reason, why, whylen);
	snprintf(why, whylen, "%s", reason);
	return -1;
}

/*
 * Tell c of every open device whose limit (or shareable capacity, which
 * bounds what cuMemGetInfo shows) changed since it was told.
 */
static int
notify_one(struct arbiter *a, struct conn *c)
{
	struct gf_device_info info;
	struct ledger_usage *u;
	char lbuf[32], cbuf[32], obuf[32];
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++) {
		u = &c->client->usage[i];
		if (!u->opened || (u->limit == u->limit_sent &&
		    a->ledger.devices[i].capacity == u->capacity_sent &&
		    overhead_of(c->client, i) == u->overhead_sent))
			continue;
		log_info("pid %u: device %u: limit %s, capacity %s, context "
		    "%s", c->pid, a->ledger.devices[i].index,
		    size_format(u->limit, lbuf, sizeof(lbuf)),
		    size_format(a->ledger.devices[i].capacity, cbuf,
		    sizeof(cbuf)), size_format(overhead_of(c->client, i), obuf,
		    sizeof(obuf)));
		device_info(a, c->client, i, &info);
		if (conn_send(c, GF_MSG_DEVICE_INFO, 0, &info) < 0)
			return -1;
	}
	return 0;
}

void
dispatch_limits_notify(struct arbiter *a, struct conn *self)
{
	struct conn *c, *next;

	for (c = TAILQ_FIRST(&a->control.conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->client == NULL || notify_one(a, c) == 0 || c == self)
			continue;
		control_close(c, c->err);
	}
}
