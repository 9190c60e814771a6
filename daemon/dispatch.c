/*
 * Message handling: which messages a connection may send in which state,
 * the shim's conversation against the ledger, collisions handed to the
 * resolver, and the streamed replies to queries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arbiter.h"
#include "control.h"
#include "dispatch.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "proto.h"
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

/* Queue a reply; on failure say why the connection must go. */
static int
reply(struct conn *c, uint16_t type, uint32_t seq, const void *payload,
    char *why, size_t whylen)
{
	if (conn_send(c, type, seq, payload) == 0)
		return 0;
	snprintf(why, whylen, "%s", c->err);
	return -1;
}

static int
reply_error(struct conn *c, uint32_t seq, uint32_t code, const char *msg,
    char *why, size_t whylen)
{
	struct gf_error e;

	memset(&e, 0, sizeof(e));
	e.code = code;
	proto_strlcpy(e.msg, msg, sizeof(e.msg));
	return reply(c, GF_MSG_ERROR, seq, &e, why, whylen);
}

static int
on_hello(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_hello *h = &m->u.hello;
	struct gf_hello_ok ok;

	if (h->resolver != GF_UNSET && h->resolver > GF_RESOLVER_SWAP) {
		snprintf(why, whylen, "bad resolver %u in HELLO", h->resolver);
		return -1;
	}
	/* Requests for priority, resolver and timeout: none is granted yet. */
	c->client = ledger_client_new(&a->ledger, c->pid, c->uid, c->gid,
	    c->cgroup);
	if (c->client == NULL) {
		snprintf(why, whylen, "out of memory for a new client");
		return -1;
	}
	log_info("client pid %u (uid %u) connected, cgroup '%s'", c->pid,
	    c->uid, c->cgroup);
	memset(&ok, 0, sizeof(ok));
	ok.pid = c->pid;
	return reply(c, GF_MSG_HELLO_OK, m->hdr.seq, &ok, why, whylen);
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
		return reply_error(c, m->hdr.seq, GF_ERR_UNKNOWN_DEVICE, msg,
		    why, whylen);
	}
	ledger_open(&a->ledger, c->client, (size_t)dev, o->limit_kind,
	    o->limit_value);
	memset(&info, 0, sizeof(info));
	memcpy(info.uuid, o->uuid, GF_UUID_LEN);
	info.limit = c->client->usage[dev].limit;
	info.capacity = a->ledger.devices[dev].capacity;
	info.used = c->client->usage[dev].used;
	log_debug("pid %u opens %s as ordinal %u: limit %llu", c->pid, ubuf,
	    o->ordinal, (unsigned long long)info.limit);
	return reply(c, GF_MSG_DEVICE_INFO, m->hdr.seq, &info, why, whylen);
}

/*
 * A request within the client's limit that does not fit the device. Only
 * the fail resolver exists so far: the configuration refuses the others.
 */
static uint32_t
collision_resolve(struct arbiter *a, struct conn *c, size_t dev,
    uint64_t size)
{
	(void)a;
	(void)c;
	(void)dev;
	(void)size;
	return GF_DENY_DEVICE_FULL;
}

static int
on_reserve(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_reserve *r = &m->u.reserve;
	struct ledger_usage *u = NULL;
	struct gf_grant grant;
	struct gf_deny deny;
	int dev, rc;

	memset(&deny, 0, sizeof(deny));
	deny.cuda_error = CUDA_ERROR_OUT_OF_MEMORY;
	if ((dev = ledger_device_find(&a->ledger, r->uuid)) < 0)
		rc = LEDGER_NOT_OPEN;
	else {
		u = &c->client->usage[dev];
		rc = ledger_reserve(&a->ledger, c->client, (size_t)dev,
		    r->size);
	}
	switch (rc) {
	case LEDGER_GRANT:
		memset(&grant, 0, sizeof(grant));
		grant.used = u->used;
		grant.limit = u->limit;
		return reply(c, GF_MSG_GRANT, m->hdr.seq, &grant, why,
		    whylen);
	case LEDGER_LIMIT:
		deny.reason = GF_DENY_LIMIT;
		break;
	case LEDGER_COLLISION:
		deny.reason = collision_resolve(a, c, (size_t)dev, r->size);
		break;
	default:
		deny.reason = GF_DENY_UNKNOWN_DEVICE;
		break;
	}
	if (u != NULL) {
		deny.used = u->used;
		deny.limit = u->limit;
	}
	log_debug("pid %u: reserve of %llu bytes denied (reason %u)", c->pid,
	    (unsigned long long)r->size, deny.reason);
	return reply(c, GF_MSG_DENY, m->hdr.seq, &deny, why, whylen);
}

static int
on_commit(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_commit *cm = &m->u.commit;
	char ubuf[UUID_STR_LEN];
	int dev;

	(void)why;
	(void)whylen;
	dev = ledger_device_find(&a->ledger, cm->uuid);
	if (dev >= 0 && c->client->usage[dev].opened) {
		/* ENOMEM is logged by the ledger; the charge stands. */
		(void)ledger_commit(&a->ledger, c->client, (size_t)dev,
		    cm->ptr, cm->reserved, cm->size, cm->kind, event_now_ms());
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
	return 0;
}

static int
on_free(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	if (ledger_release(&a->ledger, c->client, m->u.free.ptr) < 0)
		log_debug("pid %u frees 0x%llx, which it never committed; "
		    "ignored", c->pid, (unsigned long long)m->u.free.ptr);
	return 0;
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
	if (reply(c, GF_MSG_STATUS, m->hdr.seq, &st, why, whylen) < 0)
		return -1;
	for (i = 0; i < l->ndevices; i++) {
		const struct ledger_device *d = &l->devices[i];

		memset(&ds, 0, sizeof(ds));
		memcpy(ds.uuid, d->uuid, GF_UUID_LEN);
		proto_strlcpy(ds.name, d->name, sizeof(ds.name));
		ds.index = d->index;
		ds.swap_support = d->swap_support;
		ds.total = d->total;
		ds.reserve = d->reserve;
		ds.capacity = d->capacity;
		ds.used = d->used;
		ds.nclients = d->nclients;
		if (reply(c, GF_MSG_DEVICE_STATUS, m->hdr.seq, &ds, why,
		    whylen) < 0)
			return -1;
	}
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)l->ndevices;
	return reply(c, GF_MSG_DEVICE_END, m->hdr.seq, &end, why, whylen);
}

/* One CLIENT record: of device dev, or (dev < 0) of no device. */
static int
ps_record(const struct arbiter *a, struct conn *c, uint32_t seq,
    const struct ledger_client *lc, int dev, char *why, size_t whylen)
{
	struct gf_client r;

	memset(&r, 0, sizeof(r));
	r.pid = lc->pid;
	r.uid = lc->uid;
	r.gid = lc->gid;
	r.state = lc->state;
	proto_strlcpy(r.group, lc->group, sizeof(r.group));
	r.guarantee = lc->guarantee;
	if (dev >= 0) {
		memcpy(r.uuid, a->ledger.devices[dev].uuid, GF_UUID_LEN);
		r.used = lc->usage[dev].used;
		r.limit = lc->usage[dev].limit;
	}
	return reply(c, GF_MSG_CLIENT, seq, &r, why, whylen);
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
	return reply(c, GF_MSG_CLIENT_END, m->hdr.seq, &end, why, whylen);
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
		return reply_error(c, m->hdr.seq, GF_ERR_NO_SUCH_PID, msg,
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
		rc = reply(c, GF_MSG_ALLOC, m->hdr.seq, &r, why, whylen);
	}
	free(v);
	if (rc < 0)
		return -1;
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)n;
	return reply(c, GF_MSG_ALLOC_END, m->hdr.seq, &end, why, whylen);
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
	{ GF_MSG_STATUS_REQ, ANY, on_status_req },
	{ GF_MSG_PS_REQ, ANY, on_ps_req },
	{ GF_MSG_ALLOCS_REQ, ANY, on_allocs_req },
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
	(void)reply_error(c, m->hdr.seq, GF_ERR_STATE, reason, why, whylen);
	snprintf(why, whylen, "%s", reason);
	return -1;
}
