/*
 * Departing clients: a pidfd per process whose connection closed before
 * it exited, watched in the event loop; once the process has exited its
 * charge is returned, or, where the driver's look can tell (driver.c),
 * kept as releasing until the driver has the memory back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arbiter.h"
#include "decision.h"
#include "depart.h"
#include "driver.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "pidfd.h"
#include "resolve.h"
#include "swap.h"
#include "units.h"

/* Return lc's whole charge, end its preemption, and free it. */
static void
client_gone(struct arbiter *a, struct ledger_client *lc)
{
	resolve_client_gone(a, lc);
	swap_client_gone(a, lc);
	ledger_client_drop(&a->ledger, lc);
}

static void
depart_end(struct arbiter *a, struct depart *d)
{
	if (d->pidfd >= 0) {
		event_set(a->loop, d->pidfd, 0, NULL, NULL);
		close(d->pidfd);
	}
	TAILQ_REMOVE(&a->departs, d, entry);
	client_gone(a, d->lc);
	free(d);
}

/* Whether lc holds anything on a device (not out to host). */
static int
holds_device(const struct ledger *l, const struct ledger_client *lc)
{
	size_t i;

	for (i = 0; i < l->ndevices; i++)
		if (lc->usage[i].used > 0)
			return 1;
	return 0;
}

/*
 * d's process has exited: return its charge now, or keep it as releasing
 * until the driver's look sees the memory back. 1: kept.
 */
static int
depart_exited(struct arbiter *a, struct depart *d)
{
	char sbuf[32];

	if (d->pidfd >= 0) {
		event_set(a->loop, d->pidfd, 0, NULL, NULL);
		close(d->pidfd);
		d->pidfd = -1;
	}
	d->lc->pidfd = -1;	/* nobody is left to signal */
	if (!driver_follows() || !holds_device(&a->ledger, d->lc)) {
		log_info("client pid %u exited; %s returned", d->lc->pid,
		    size_format(ledger_client_used(&a->ledger, d->lc), sbuf,
		    sizeof(sbuf)));
		depart_end(a, d);
		return 0;
	}
	d->exit_ms = event_now_ms();
	d->lc->state = GF_STATE_RELEASING;
	log_info("client pid %u exited; its %s stay charged until the "
	    "driver has them back", d->lc->pid,
	    size_format(ledger_client_used(&a->ledger, d->lc), sbuf,
	    sizeof(sbuf)));
	driver_look_soon(a);
	return 1;
}

void
depart_done(struct arbiter *a, struct depart *d, int kept)
{
	struct ledger_client *lc = d->lc;
	unsigned long long ms = event_now_ms() - d->exit_ms;
	size_t i;

	/* One event per device, as the charges were made. */
	for (i = 0; i < a->ledger.ndevices; i++) {
		if (lc->usage[i].used == 0)
			continue;
		if (kept)
			decision_event(a, GF_EV_DRIVER_KEPT, lc, (int)i,
			    lc->usage[i].used, "the driver had not given it "
			    "back %llu ms after the process exited: uncharged "
			    "all the same", ms);
		else
			decision_event(a, GF_EV_RELEASED, lc, (int)i,
			    lc->usage[i].used, "memory came back %llu ms after "
			    "the process exited", ms);
	}
	depart_end(a, d);
}

/* The pidfd is readable: the process has exited. */
static void
depart_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct depart *d = arg;
	struct arbiter *a = d->a;

	(void)loop;
	(void)fd;
	(void)mask;
	if (depart_exited(a, d) == 0)
		resolve_serve(a);
}

int
depart_begin(struct arbiter *a, struct ledger_client *lc, int pidfd)
{
	struct depart *d;

	if (a->stopping || lc->pid == 0 || pidfd < 0 ||
	    ledger_client_used(&a->ledger, lc) == 0)
		goto out_drop;
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		log_warnx("no memory to wait for pid %u to exit; returning "
		    "its charge now", lc->pid);
		goto out_drop;
	}
	d->a = a;
	d->lc = lc;
	d->pidfd = pidfd;
	lc->departing = 1;
	TAILQ_INSERT_TAIL(&a->departs, d, entry);
	if (pidfd_exited(pidfd))
		return depart_exited(a, d);
	/* A pidfd turns readable when its process has exited. */
	if (event_set(a->loop, pidfd, EVENT_READ, depart_event, d) < 0) {
		log_warn("cannot watch pid %u for its exit; returning its "
		    "charge now", lc->pid);
		TAILQ_REMOVE(&a->departs, d, entry);
		free(d);
		goto out_drop;
	}
	return 1;

out_drop:
	if (pidfd >= 0)
		close(pidfd);
	lc->pidfd = -1;
	client_gone(a, lc);
	return 0;
}

int
depart_cancel(struct arbiter *a, uint32_t pid)
{
	struct depart *d, *next;
	int n = 0;

	for (d = TAILQ_FIRST(&a->departs); d != NULL; d = next) {
		next = TAILQ_NEXT(d, entry);
		if (d->lc->pid != pid || pidfd_exited(d->pidfd))
			continue;
		log_debug("pid %u is back: its old charge is dropped", pid);
		depart_end(a, d);
		n++;
	}
	return n;
}

void
depart_free(struct arbiter *a)
{
	struct depart *d;

	while ((d = TAILQ_FIRST(&a->departs)) != NULL)
		depart_end(a, d);
}
