/*
 * The shim's conversation with the daemon (DESIGN.md §3): HELLO, devices
 * opened, RESERVE answered against the ledger (collisions handed to the
 * resolvers), COMMIT, ROLLBACK and FREE, leases given back and restored,
 * a swapped-out process asking back in; and what the daemon tells a
 * client unasked (its limits after a reload) or does when its connection
 * closes.
 */
#include <stdio.h>
#include <string.h>

#include "arbiter.h"
#include "control.h"
#include "conversation.h"
#include "decision.h"
#include "depart.h"
#include "dispatch.h"
#include "driver.h"
#include "event.h"
#include "expect.h"
#include "granted.h"
#include "grantrec.h"
#include "groups.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "overhead.h"
#include "pidfd.h"
#include "proto.h"
#include "resolve.h"
#include "swap.h"
#include "trust.h"
#include "unshimmed.h"
#include "uuid.h"
#include "view.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

#define CUDA_ERROR_OUT_OF_MEMORY	2	/* cuda.h's CUresult */

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

/*
 * c's process said HELLO while an earlier connection of its own is still
 * open, or closed but not yet seen to close (a shim whose reply timed
 * out, a liar opening two): one process is one client, so the earlier
 * one closes first, as if lost, and what it was granted passes to c
 * (granted.h). Else the process would be charged twice, its old record
 * kept beside the new one until it exits, or believed twice.
 */
static void
hello_replaces(struct arbiter *a, struct conn *c)
{
	struct conn *v;

again:
	TAILQ_FOREACH(v, &a->control.conns, entry)
		if (v != c && v->client != NULL && v->pid == c->pid) {
			/*
			 * Its record is charged until it closes: now. (Were
			 * it an exited process's, its pid another's now, its
			 * closing would keep its memory as releasing all the
			 * same: depart.h.)
			 */
			control_close(v, "its process connected again");
			goto again;
		}
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
	hello_replaces(a, c);
	/*
	 * The same process again, its old connection closed: it re-registers
	 * every live allocation, so its old charge goes now, not at its exit.
	 */
	if (depart_cancel(a, c->pid) + unshimmed_hello(a, c->pid) > 0)
		resolve_serve(a);
	/* What NVML showed it holding was foreign until now: no longer. */
	driver_client_new(a, c->pid);
	/* Requests for priority, resolver and timeout: none is granted yet. */
	c->client = ledger_client_new(&a->ledger, c->pid, c->uid, c->gid,
	    c->cgroup);
	if (c->client == NULL) {
		snprintf(why, whylen, "out of memory for a new client");
		return -1;
	}
	c->client->pidfd = c->pidfd;
	/* Read with its pidfd held, alive: the pid is still its own. */
	if (c->pidfd >= 0 && (c->client->start_ms = pidfd_start_ms(c->pid)) &&
	    pidfd_exited(c->pidfd))
		c->client->start_ms = 0;
	granted_take(a, c->client, c->client->start_ms);
	ledger_client_group(&a->ledger, c->client, groups_match(&a->groups,
	    c->cgroup, c->uid, c->gid));
	/* Recorded, granted nothing or more: a daemon started after this
	   one holds it to that (grantrec.h). */
	grantrec_put(a, c->client);
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
	swap_device_open(c->client);
	/* Its context is there already: charged before it reserves, and
	   no longer foreign (driver.c). */
	driver_client_new(a, c->pid);
	overhead_client(a, c->client, (size_t)dev);
	view_info(a, c->client, (size_t)dev, &info);
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

	decision_event(a, GF_EV_DENY, c->client, dev, size, "%s", evreason);
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

	if (r->flags & ~(GF_RESERVE_LEASE | GF_RESERVE_DRIVER_OOM)) {
		snprintf(why, whylen, "unknown flags 0x%x in RESERVE",
		    r->flags);
		return -1;
	}
	if ((dev = ledger_device_find(&a->ledger, r->uuid)) < 0)
		return reserve_deny(a, c, m->hdr.seq, -1, r->size,
		    GF_DENY_UNKNOWN_DEVICE, "unknown device", why, whylen);
	/* Asking for a lease again: what is left of the old one comes back. */
	/* Its registration, if any, is over: no lease is restored now. */
	lc->reserved_once = 1;
	if (r->flags & GF_RESERVE_LEASE)
		(void)lease_take(a, lc, (size_t)dev);
	/* Refused by the driver once: the ledger learns what it has. */
	if ((r->flags & GF_RESERVE_DRIVER_OOM) && lc->usage[dev].opened)
		driver_refused(a, lc, (size_t)dev, r->size);
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
		decision_event(a, GF_EV_GRANT, lc, dev, r->size, "fits");
		memset(&grant, 0, sizeof(grant));
		if (r->flags & GF_RESERVE_LEASE)
			grant.lease = lease_grant(a, lc, (size_t)dev);
		resolve_lent(a, lc, (size_t)dev, lent);
		view_moved(a);
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
	uint64_t extra;
	int dev;

	/* The context records are the daemon's to set, not the client's. */
	if (overhead_key_is(cm->ptr)) {
		snprintf(why, whylen, "COMMIT of 0x%llx, a record the daemon "
		    "keeps", (unsigned long long)cm->ptr);
		return -1;
	}
	dev = ledger_device_find(&a->ledger, cm->uuid);
	if (dev < 0 || !c->client->usage[dev].opened) {
		log_warnx("pid %u commits 0x%llx on %s, which it has not "
		    "opened; ignored", c->pid, (unsigned long long)cm->ptr,
		    uuid_format(cm->uuid, ubuf, sizeof(ubuf)));
		return 0;
	}
	if (!ledger_countable(&a->ledger, (size_t)dev, cm->size)) {
		snprintf(why, whylen, "COMMIT of %llu bytes, more than the "
		    "ledger can count", (unsigned long long)cm->size);
		return -1;
	}
	/* What it adds to its charge beyond its reserve, on its word. */
	extra = trust_commit_extra(c->client, (size_t)dev, cm);
	if (!ledger_holdable(&a->ledger, c->client, (size_t)dev, extra)) {
		snprintf(why, whylen, "COMMIT of %llu bytes, more than device "
		    "%u could hold with what it holds", (unsigned long long)
		    cm->size, a->ledger.devices[dev].index);
		return -1;
	}
	if (trust_charge(a, c->client, (size_t)dev, extra, "COMMIT", why,
	    whylen) < 0)
		return -1;
	/* ENOMEM is logged by the ledger; the charge stands. */
	(void)ledger_commit(&a->ledger, c->client, (size_t)dev, cm->ptr,
	    cm->reserved, cm->size, cm->kind, event_now_ms());
	if (cm->size < cm->reserved)
		resolve_serve(a);
	if (cm->size != cm->reserved)
		view_moved(a);
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
	else {
		resolve_serve(a);
		view_moved(a);
	}
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
	else {
		resolve_serve(a);
		view_moved(a);
	}
	return 0;
}

/* For the decision log: what a context's end gave back (its FREEs came). */
static int
on_ctx_end(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_ctx_end *e = &m->u.ctx_end;
	int dev = ledger_device_find(&a->ledger, e->uuid);

	(void)why;
	(void)whylen;
	if (dev < 0 || !c->client->usage[dev].opened) {
		log_debug("pid %u: CTX_END for a device it has not opened; "
		    "ignored", c->pid);
		return 0;
	}
	decision_event(a, GF_EV_CTX_END, c->client, dev, e->bytes, "a context "
	    "ended: %u allocation%s given back", e->count,
	    e->count == 1 ? "" : "s");
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
	    m->u.lease.size) > 0) {
		resolve_serve(a);
		view_moved(a);
	}
	return 0;
}

static int
on_lease_restore(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	int dev, lent;

	if ((dev = lease_device(a, c, m)) < 0)
		return 0;
	/*
	 * A shim restores its lease as it registers with a new daemon,
	 * before it asks for anything; and no daemon lends more.
	 */
	if (c->client->reserved_once || m->u.lease.size > LEASE_MAX) {
		snprintf(why, whylen, "LEASE_RESTORE of %llu bytes %s",
		    (unsigned long long)m->u.lease.size,
		    c->client->reserved_once ? "after its registration" :
		    "past the largest lease");
		trust_refuse(a, c->client, (size_t)dev, m->u.lease.size, why);
		return -1;
	}
	if (!ledger_countable(&a->ledger, (size_t)dev, m->u.lease.size)) {
		snprintf(why, whylen, "LEASE_RESTORE of %llu bytes, more than "
		    "the ledger can count",
		    (unsigned long long)m->u.lease.size);
		return -1;
	}
	if (!ledger_holdable(&a->ledger, c->client, (size_t)dev,
	    m->u.lease.size)) {
		snprintf(why, whylen, "LEASE_RESTORE of %llu bytes, more than "
		    "device %u could hold with what it holds",
		    (unsigned long long)m->u.lease.size,
		    a->ledger.devices[dev].index);
		return -1;
	}
	if ((lent = trust_lease(a, c->client, (size_t)dev, m->u.lease.size,
	    why, whylen)) < 0)
		return -1;
	if (lease_restore(a, c->client, (size_t)dev, m->u.lease.size) < 0) {
		snprintf(why, whylen, "LEASE_RESTORE of a lease it holds");
		return -1;
	}
	/* Past its limits: closed at once, what it had not drawn back. */
	if (!lent && lease_take(a, c->client, (size_t)dev) > 0) {
		resolve_serve(a);
		view_moved(a);
	}
	return 0;
}

static int
on_swap_in(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	return swap_on_swap_in(a, c, m->hdr.seq, m->u.swap_in.reason, why,
	    whylen);
}

static int
on_moved(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	return swap_on_moved(a, c, &m->u.moved, why, whylen);
}

int
conversation_closing(struct arbiter *a, struct conn *c)
{
	uint64_t start_ms;
	int kept = 0;

	resolve_conn_gone(a, c);
	if (c->client != NULL) {
		/* Lost, and alive: it may be back (expect.h); not to a
		   daemon that is stopping, whose expectations are freed. */
		if (!a->stopping && c->pidfd >= 0 && !pidfd_exited(c->pidfd)) {
			start_ms = pidfd_start_ms(c->pid);
			expect_lost(a, c->pid, start_ms);
			granted_keep(a, c->client, start_ms);
		}
		/* Its process, watched from now on by the departure. */
		kept = depart_begin(a, c->client, c->pidfd);
		c->pidfd = -1;
	}
	c->client = NULL;
	return kept;
}

static const struct dispatch_handler handlers[] = {
	{ GF_MSG_HELLO, DISPATCH_FRESH, on_hello },
	{ GF_MSG_DEVICE_OPEN, DISPATCH_CLIENT, on_device_open },
	{ GF_MSG_RESERVE, DISPATCH_CLIENT, on_reserve },
	{ GF_MSG_COMMIT, DISPATCH_CLIENT, on_commit },
	{ GF_MSG_ROLLBACK, DISPATCH_CLIENT, on_rollback },
	{ GF_MSG_FREE, DISPATCH_CLIENT, on_free },
	{ GF_MSG_SWAP_IN, DISPATCH_CLIENT, on_swap_in },
	{ GF_MSG_LEASE_RETURN, DISPATCH_CLIENT, on_lease_return },
	{ GF_MSG_LEASE_RESTORE, DISPATCH_CLIENT, on_lease_restore },
	{ GF_MSG_CTX_END, DISPATCH_CLIENT, on_ctx_end },
	{ GF_MSG_MOVED, DISPATCH_CLIENT, on_moved },
};

int
conversation_register(struct dispatch *d)
{
	return dispatch_add(d, handlers, sizeof(handlers) / sizeof(handlers[0]));
}
