/*
 * The queries anyone may make, before or after HELLO: STATUS (devices and
 * groups), PS (clients), ALLOCS (one process's allocations) and EVENTS
 * (the decision log, and following it), each a stream of records and an
 * END.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "arbiter.h"
#include "control.h"
#include "dispatch.h"
#include "driver.h"
#include "event.h"
#include "events.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "proto.h"
#include "queries.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

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

/* The set-aside run-time groups (arbiter.h): one record each, no device. */
static int
status_aside(const struct config *aside, struct conn *c, uint32_t seq,
    char *why, size_t whylen)
{
	struct gf_group_status r;
	size_t i;

	for (i = 0; i < aside->ngroups; i++) {
		const struct group_policy *pol = &aside->groups[i].pol;

		memset(&r, 0, sizeof(r));
		proto_strlcpy(r.name, pol->name, sizeof(r.name));
		r.priority = pol->priority;
		r.resolver = pol->resolver;
		r.on_preempt = pol->on_preempt;
		r.runtime = GF_GROUP_ASIDE;
		if (conn_reply(c, GF_MSG_GROUP_STATUS, seq, &r, why,
		    whylen) < 0)
			return -1;
	}
	return 0;
}

/*
 * Every group on every device, members or not; without devices, one
 * record per group (no uuid) so that the groups still show; then the
 * groups set aside.
 */
static int
status_groups(const struct ledger *l, const struct config *aside,
    struct conn *c, uint32_t seq, char *why, size_t whylen)
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
	if (rc < 0 || status_aside(aside, c, seq, why, whylen) < 0)
		return -1;
	memset(&end, 0, sizeof(end));
	end.count = count + (uint32_t)aside->ngroups;
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
	st.swap_engine = a->conf.swap_engine;
	st.swap_host_limit = a->conf.swap_host_limit;
	for (i = 0; i < l->ndevices; i++)
		st.swap_host_used += l->devices[i].host;
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
		ds.leased = leases_unused(l, SIZE_MAX, i);
		ds.nclients = d->nclients;
		ds.lent = ledger_lent(l, i);
		ds.foreign = d->foreign;
		ds.releasing = driver_releasing(l, i);
		if (conn_reply(c, GF_MSG_DEVICE_STATUS, m->hdr.seq, &ds, why,
		    whylen) < 0)
			return -1;
	}
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)l->ndevices;
	if (conn_reply(c, GF_MSG_DEVICE_END, m->hdr.seq, &end, why, whylen) < 0)
		return -1;
	return status_groups(l, &a->aside, c, m->hdr.seq, why, whylen);
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

void
queries_conn_gone(struct arbiter *a, struct conn *c)
{
	if (c->following)
		(void)events_unfollow(&a->events, follow_event, c);
	c->following = 0;
}

static const struct dispatch_handler handlers[] = {
	{ GF_MSG_STATUS_REQ, DISPATCH_ANY, on_status_req },
	{ GF_MSG_PS_REQ, DISPATCH_ANY, on_ps_req },
	{ GF_MSG_ALLOCS_REQ, DISPATCH_ANY, on_allocs_req },
	{ GF_MSG_EVENTS_REQ, DISPATCH_ANY, on_events_req },
};

int
queries_register(struct dispatch *d)
{
	return dispatch_add(d, handlers, sizeof(handlers) / sizeof(handlers[0]));
}
