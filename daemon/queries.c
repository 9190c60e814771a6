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
	r.swap_engine = g->pol.swap_engine;
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
		r.swap_engine = pol->swap_engine;
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
	st.swap_host_used = swap_host_used(a);
	st.swap_host_kept = swap_host_kept(a);
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
		memlimits_status(a, i, &ds);
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

/* The driver's walls, read back from it (issue 38 E). */
static int
on_walls_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	struct gf_wall w;
	struct gf_end end;
	size_t i;

	for (i = 0; memlimits_wall(a, i, &w); i++)
		if (conn_reply(c, GF_MSG_WALL, m->hdr.seq, &w, why,
		    whylen) < 0)
			return -1;
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)i;
	return conn_reply(c, GF_MSG_WALL_END, m->hdr.seq, &end, why, whylen);
}

/* One CLIENT record: of device dev, or (dev < 0) of no device. */
static int
ps_record(const struct arbiter *a, struct conn *c, uint32_t seq,
    const struct ledger_client *lc, uint32_t record, int dev, char *why,
    size_t whylen)
{
	const struct ledger_group *g = &a->ledger.groups[lc->group];
	struct gf_client r;

	memset(&r, 0, sizeof(r));
	r.pid = lc->pid;
	r.record = record;
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
	uint32_t count = 0, record = 0;
	size_t i;

	/* Each client a record number of its own: one row per process. */
	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		uint32_t opened = 0;

		record++;
		for (i = 0; i < a->ledger.ndevices; i++) {
			if (!lc->usage[i].opened)
				continue;
			if (ps_record(a, c, m->hdr.seq, lc, record, (int)i,
			    why, whylen) < 0)
				return -1;
			opened++;
		}
		if (opened == 0 && ps_record(a, c, m->hdr.seq, lc, record, -1,
		    why, whylen) < 0)
			return -1;
		count += opened ? opened : 1;
	}
	memset(&end, 0, sizeof(end));
	end.count = count;
	return conn_reply(c, GF_MSG_CLIENT_END, m->hdr.seq, &end, why, whylen);
}

/*
 * A listing of allocations, taken at once and sent a page at a time as
 * the peer reads (conn_pull): a process may hold a million, and no turn
 * of the event loop makes more than a page. They go in no order (the
 * ptrmap's); gpufracctl sorts them.
 */
#define ALLOCS_PAGE	4096

struct alloc_rec {
	uint64_t	ptr;
	uint64_t	size;
	uint64_t	time_ms;
	uint32_t	kind;
	uint32_t	device;
};

struct allocs_list {
	const struct arbiter *a;
	uint32_t	 seq;
	size_t		 n;		/* records taken */
	size_t		 next;		/* the first not sent yet */
	struct alloc_rec v[];
};

/*
 * Every live allocation of every client with pid, taken now (malloc'd;
 * the caller frees it). NULL on ENOMEM.
 */
static struct allocs_list *
allocs_collect(const struct arbiter *a, uint32_t pid, uint32_t seq,
    size_t *bytes)
{
	const struct ledger_client *lc = NULL;
	const struct ledger_alloc *al;
	struct allocs_list *l;
	size_t total = 0, pos;

	while ((lc = ledger_client_find(&a->ledger, pid, lc)) != NULL)
		total += lc->allocs.len;
	*bytes = sizeof(*l) + total * sizeof(l->v[0]);
	if ((l = malloc(*bytes)) == NULL)
		return NULL;
	l->a = a;
	l->seq = seq;
	l->n = l->next = 0;
	while ((lc = ledger_client_find(&a->ledger, pid, lc)) != NULL)
		for (pos = 0; (al = ptrmap_next(&lc->allocs, &pos, NULL)) &&
		    l->n < total; l->n++) {
			l->v[l->n].ptr = al->ptr;
			l->v[l->n].size = al->size;
			l->v[l->n].time_ms = al->time_ms;
			l->v[l->n].kind = al->kind;
			l->v[l->n].device = (uint32_t)al->device;
		}
	return l;
}

/* conn_pull's: the next page of ALLOC records, then ALLOC_END. */
static int
allocs_page(struct conn *c, void *arg)
{
	struct allocs_list *l = arg;
	const struct alloc_rec *v;
	uint64_t now = event_now_ms();
	struct gf_alloc r;
	struct gf_end end;
	size_t stop = l->next + ALLOCS_PAGE < l->n ? l->next + ALLOCS_PAGE :
	    l->n;

	for (; l->next < stop; l->next++) {
		v = &l->v[l->next];
		memset(&r, 0, sizeof(r));
		memcpy(r.uuid, l->a->ledger.devices[v->device].uuid,
		    GF_UUID_LEN);
		r.ptr = v->ptr;
		r.size = v->size;
		r.age_ms = now >= v->time_ms ? now - v->time_ms : 0;
		r.kind = v->kind;
		if (conn_send(c, GF_MSG_ALLOC, l->seq, &r) < 0)
			return -1;
	}
	if (l->next < l->n)
		return 1;
	memset(&end, 0, sizeof(end));
	end.count = (uint32_t)l->n;
	return conn_send(c, GF_MSG_ALLOC_END, l->seq, &end) < 0 ? -1 : 0;
}

static int
on_allocs_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	uint32_t pid = m->u.allocs_req.pid;
	struct allocs_list *l;
	char msg[GF_ERRMSG_LEN];
	size_t bytes;
	int r;

	if (ledger_client_find(&a->ledger, pid, NULL) == NULL) {
		snprintf(msg, sizeof(msg), "no client with pid %u", pid);
		return conn_reply_error(c, m->hdr.seq, GF_ERR_NO_SUCH_PID, msg,
		    why, whylen);
	}
	if (c->pull != NULL) {
		snprintf(why, whylen, "ALLOCS_REQ while a listing is under way");
		return -1;
	}
	if ((l = allocs_collect(a, pid, m->hdr.seq, &bytes)) == NULL) {
		snprintf(why, whylen, "out of memory listing the allocations "
		    "of pid %u", pid);
		return -1;
	}
	/* A short listing goes at once. */
	if ((r = allocs_page(c, l)) <= 0) {
		free(l);
		if (r < 0)
			snprintf(why, whylen, "%s", c->err);
		return r;
	}
	if (conn_pull(c, allocs_page, l, free, bytes) < 0) {
		free(l);
		snprintf(msg, sizeof(msg), "the allocations of pid %u (%zu "
		    "bytes to list) do not fit output_queue_limit now", pid,
		    bytes);
		return conn_reply_error(c, m->hdr.seq, GF_ERR_STATE, msg, why,
		    whylen);
	}
	return 0;
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

/* The decision log sent a page at a time, as the allocations are. */
#define EVENTS_PAGE	256

struct events_list {
	struct arbiter	*a;
	uint32_t	 seq;
	uint32_t	 count;		/* sent */
	uint64_t	 cursor;	/* events_next's */
	int		 follow;	/* then follow the new ones */
};

/*
 * conn_pull's: the next page of EVENT records (the ring's cursor skips
 * what was overwritten meanwhile, never repeats), then EVENT_END, and
 * from then on the new ones when asked.
 */
static int
events_page(struct conn *c, void *arg)
{
	struct events_list *l = arg;
	const struct gf_event *e;
	struct gf_end end;
	int i;

	for (i = 0; i < EVENTS_PAGE; i++) {
		if ((e = events_next(&l->a->events, &l->cursor)) == NULL)
			break;
		if (conn_send(c, GF_MSG_EVENT, l->seq, e) < 0)
			return -1;
		l->count++;
	}
	if (i == EVENTS_PAGE)
		return 1;
	memset(&end, 0, sizeof(end));
	end.count = l->count;
	if (conn_send(c, GF_MSG_EVENT_END, l->seq, &end) < 0)
		return -1;
	if (!l->follow)
		return 0;
	if (c->following)
		(void)events_unfollow(&l->a->events, follow_event, c);
	if (events_follow(&l->a->events, follow_event, c) < 0) {
		snprintf(c->err, sizeof(c->err), "out of memory for a "
		    "follower");
		return -1;
	}
	c->following = 1;
	c->follow_seq = l->seq;
	log_debug("pid %u follows the events", c->pid);
	return 0;
}

static int
on_events_req(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	struct events_list *l;
	int r;

	if (m->u.events_req.follow > 1) {
		snprintf(why, whylen, "bad follow %u in EVENTS_REQ",
		    m->u.events_req.follow);
		return -1;
	}
	if (c->pull != NULL) {
		snprintf(why, whylen, "EVENTS_REQ while a listing is under way");
		return -1;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(why, whylen, "out of memory listing the events");
		return -1;
	}
	l->a = a;
	l->seq = m->hdr.seq;
	l->follow = m->u.events_req.follow;
	if ((r = events_page(c, l)) > 0 &&
	    (r = conn_pull(c, events_page, l, free, sizeof(*l))) == 0)
		return 0;
	free(l);
	if (r < 0)
		snprintf(why, whylen, "%s", c->err);
	return r;
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
	{ GF_MSG_WALLS_REQ, DISPATCH_ANY, on_walls_req },
	{ GF_MSG_PS_REQ, DISPATCH_ANY, on_ps_req },
	{ GF_MSG_ALLOCS_REQ, DISPATCH_ANY, on_allocs_req },
	{ GF_MSG_EVENTS_REQ, DISPATCH_ANY, on_events_req },
};

int
queries_register(struct dispatch *d)
{
	return dispatch_add(d, handlers, sizeof(handlers) / sizeof(handlers[0]));
}
