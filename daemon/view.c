/*
 * What each client is shown of its devices (DEVICE_INFO), and telling it
 * again when that moves: on a new limit at once, on the others' charges
 * when they move enough to matter, on anything within VIEW_PERIOD_MS.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "control.h"
#include "event.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "overhead.h"
#include "units.h"
#include "view.h"

/* Unused leases per device and per group and device, as one look saw them. */
struct view_spares {
	uint64_t	*dev;		/* [ndevices] */
	uint64_t	*group;		/* [ngroups * ndevices] */
};

static void	view_arm(struct arbiter *a);

static uint64_t
view_min(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

/*
 * Every client's unused leases, summed once for a look at all of them.
 * Without memory, none are counted: leases count as held, and what is
 * shown free is less than it could be, never more.
 */
static void
view_spares_sum(const struct arbiter *a, struct view_spares *s)
{
	const struct ledger *l = &a->ledger;
	const struct ledger_client *lc;
	size_t d, cells = l->ngroups * l->ndevices;
	uint64_t n;

	/* One more each: calloc of 0 may say NULL. */
	s->dev = calloc(l->ndevices + 1, sizeof(*s->dev));
	s->group = calloc(cells + 1, sizeof(*s->group));
	if (s->dev == NULL || s->group == NULL) {
		free(s->dev);
		free(s->group);
		s->dev = s->group = NULL;
		return;
	}
	TAILQ_FOREACH(lc, &l->clients, entry)
		for (d = 0; d < l->ndevices; d++) {
			n = lease_unused(lc, d);
			s->dev[d] += n;
			s->group[lc->group * l->ndevices + d] += n;
		}
}

static void
view_spares_free(struct view_spares *s)
{
	free(s->dev);
	free(s->group);
}

/* What the others hold of what lc may be shown on dev. */
static uint64_t
view_taken(const struct arbiter *a, const struct ledger_client *lc,
    size_t dev, const struct view_spares *s)
{
	const struct ledger *l = &a->ledger;
	struct ledger_spare sp;
	uint64_t most, reach;

	memset(&sp, 0, sizeof(sp));
	sp.own = lease_unused(lc, dev);
	if (s == NULL) {
		sp.group = leases_unused(l, lc->group, dev);
		sp.device = leases_unused(l, SIZE_MAX, dev);
	} else if (s->dev != NULL) {
		sp.group = s->group[lc->group * l->ndevices + dev];
		sp.device = s->dev[dev];
	}
	/* The pages move as we read them: no part above its whole. */
	sp.group = sp.group > sp.own ? sp.group : sp.own;
	sp.device = sp.device > sp.group ? sp.device : sp.group;
	most = view_min(lc->usage[dev].limit, l->devices[dev].capacity);
	reach = ledger_reach(l, lc, dev, &sp);
	return most > reach ? most - reach : 0;
}

/*
 * DEVICE_INFO of lc on dev, s the leases (NULL: sum them here). Its use
 * and its group's are of what is allocated: a lease not drawn from yet
 * is there for the taking.
 */
static void
view_fill(struct arbiter *a, struct ledger_client *lc, size_t dev,
    const struct view_spares *s, struct gf_device_info *info)
{
	const struct ledger_share *sh = &a->ledger.groups[lc->group].share[dev];
	struct ledger_usage *u = &lc->usage[dev];

	memset(info, 0, sizeof(*info));
	memcpy(info->uuid, a->ledger.devices[dev].uuid, GF_UUID_LEN);
	info->limit = u->limit;
	info->capacity = a->ledger.devices[dev].capacity;
	info->used = u->used - lease_unused(lc, dev);
	info->overhead = overhead_of(lc, dev);
	if (a->ledger.groups[lc->group].pol.per_process) {
		info->group_limit = info->limit;
		info->group_used = info->used;
	} else {
		info->group_limit = sh->limit;
		info->group_used = sh->used - leases_unused(&a->ledger,
		    lc->group, dev);
	}
	info->taken = view_taken(a, lc, dev, s);
	u->limit_sent = info->limit;
	u->capacity_sent = info->capacity;
	u->overhead_sent = info->overhead;
	u->taken_sent = info->taken;
}

void
view_info(struct arbiter *a, struct ledger_client *lc, size_t dev,
    struct gf_device_info *info)
{
	view_fill(a, lc, dev, NULL, info);
	view_arm(a);
}

/* Whether taken moved from what was told by more than slack allows. */
static int
view_stale(const struct ledger_usage *u, uint64_t capacity, uint64_t taken,
    int exact)
{
	uint64_t moved = taken > u->taken_sent ? taken - u->taken_sent :
	    u->taken_sent - taken;

	if (exact)
		return moved != 0;
	return moved > view_min(u->limit, capacity) / VIEW_SLACK;
}

/* Tell c of every open device it sees otherwise than it was told. */
static int
view_tell(struct arbiter *a, struct conn *c, const struct view_spares *s,
    int exact)
{
	const struct ledger_device *d;
	struct gf_device_info info;
	struct ledger_usage *u;
	char lbuf[32], cbuf[32], obuf[32];
	int limits;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++) {
		u = &c->client->usage[i];
		d = &a->ledger.devices[i];
		if (!u->opened)
			continue;
		limits = u->limit != u->limit_sent ||
		    d->capacity != u->capacity_sent ||
		    overhead_of(c->client, i) != u->overhead_sent;
		if (!limits && !view_stale(u, d->capacity,
		    view_taken(a, c->client, i, s), exact))
			continue;
		view_fill(a, c->client, i, s, &info);
		if (limits)
			log_info("pid %u: device %u: limit %s, capacity %s, "
			    "context %s", c->pid, d->index, size_format(u->limit,
			    lbuf, sizeof(lbuf)), size_format(d->capacity, cbuf,
			    sizeof(cbuf)), size_format(info.overhead, obuf,
			    sizeof(obuf)));
		else
			log_debug("pid %u: device %u: others hold %s of its "
			    "view", c->pid, d->index, size_format(info.taken,
			    lbuf, sizeof(lbuf)));
		if (conn_send(c, GF_MSG_DEVICE_INFO, 0, &info) < 0)
			return -1;
	}
	return 0;
}

/*
 * Look at every client; exact: tell any move of taken. One that cannot
 * be told is closed at the end of the round, not now: a handler may be
 * looking on behalf of that very connection (a RESERVE the driver
 * refused has the driver looked at, driver_refused) and use it after.
 */
static void
view_look(struct arbiter *a, struct conn *self, int exact)
{
	struct view_spares s;
	struct conn *c;

	view_spares_sum(a, &s);
	TAILQ_FOREACH(c, &a->control.conns, entry) {
		if (c->client == NULL || c->close_timer > 0 ||
		    view_tell(a, c, &s, exact) == 0 || c == self)
			continue;
		control_close_later(c, c->err);
	}
	view_spares_free(&s);
}

void
view_notify(struct arbiter *a, struct conn *self)
{
	view_look(a, self, 0);
}

static void
view_soon_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	(void)loop;
	a->view_soon_timer = 0;
	view_look(a, NULL, 0);
}

void
view_moved(struct arbiter *a)
{
	if (a->view_soon_timer > 0 || a->stopping || a->loop == NULL)
		return;
	if ((a->view_soon_timer = event_timer_add(a->loop, 0, view_soon_fire,
	    a)) < 0) {
		/* The periodic look tells it, a little later. */
		a->view_soon_timer = 0;
		view_arm(a);
	}
}

static void
view_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	(void)loop;
	a->view_timer = 0;
	view_look(a, NULL, 1);
	if (a->ledger.nclients > 0)
		view_arm(a);
}

/* The periodic look, while there are clients to look at. */
static void
view_arm(struct arbiter *a)
{
	static int said;

	if (a->view_timer > 0 || a->stopping || a->loop == NULL)
		return;
	a->view_timer = event_timer_add(a->loop, VIEW_PERIOD_MS, view_fire, a);
	if (a->view_timer < 0) {
		if (!said++)
			log_warnx("cannot arm the view timer: what clients "
			    "are shown free moves with big changes only");
		a->view_timer = 0;
	}
}

void
view_free(struct arbiter *a)
{
	if (a->view_timer > 0)
		event_timer_cancel(a->loop, a->view_timer);
	if (a->view_soon_timer > 0)
		event_timer_cancel(a->loop, a->view_soon_timer);
	a->view_timer = a->view_soon_timer = 0;
}
