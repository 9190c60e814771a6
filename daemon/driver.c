/*
 * The driver's look: NVML's figures per device against the ledger, for
 * foreign memory, departed processes' memory on its way back, a shortfall
 * the driver reported, and (overhead.c) context memory. driver.h says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <unistd.h>

#include "arbiter.h"
#include "decision.h"
#include "depart.h"
#include "driver.h"
#include "event.h"
#include "glance.h"
#include "identity.h"
#include "jitter.h"
#include "lease.h"
#include "memlimits.h"
#include "ledger.h"
#include "log.h"
#include "nvml.h"
#include "overhead.h"
#include "pidfd.h"
#include "resolve.h"
#include "units.h"
#include "unshimmed.h"

static void	driver_arm(struct arbiter *a, uint64_t ms);

/* Whether NVML has answered a look yet: listing processes may fail. */
static int driver_seen;

int
driver_follows(void)
{
	return nvml_ready() && driver_seen;
}

uint64_t
driver_releasing(const struct ledger *l, size_t dev)
{
	const struct ledger_client *lc;
	uint64_t n = 0;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (lc->state == GF_STATE_RELEASING)
			n += lc->usage[dev].used;
	return n;
}

/* How many times pid is in procs[0..n). */
static int
listed(const struct nvml_proc *procs, long n, uint32_t pid)
{
	long i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += procs[i].pid == pid;
	return k;
}

/* What NVML lists in procs[0..n), added up. */
static uint64_t
listed_bytes(const struct nvml_proc *procs, long n)
{
	uint64_t all = 0;
	long i;

	for (i = 0; i < n; i++)
		all += procs[i].bytes;
	return all;
}

/* Whether a client of pid (an old one's departure, or who has the pid
   now) opened dev. */
static int
opened_by(const struct ledger *l, uint32_t pid, size_t dev)
{
	const struct ledger_client *lc;

	for (lc = ledger_client_find(l, pid, NULL); lc != NULL;
	    lc = ledger_client_find(l, pid, lc))
		if (lc->usage[dev].opened)
			return 1;
	return 0;
}

/*
 * Keep in dd->strangers what NVML lists on dev for processes that are
 * neither clients that opened dev (unshimmed ones are, unshimmed.h) nor
 * the daemon itself (procs is taken over), and return how much that is.
 */
static uint64_t
strangers_keep(const struct ledger *l, size_t dev, struct driver_dev *dd,
    struct nvml_proc *procs, long n)
{
	uint64_t foreign = 0;
	long i, k = 0;

	for (i = 0; i < n; i++) {
		/* A client's on a device it has not opened (its context
		   before its first allocation there) is nobody's yet. */
		if (procs[i].pid == (uint32_t)getpid() ||
		    opened_by(l, procs[i].pid, dev))
			continue;
		foreign += procs[i].bytes;
		procs[k++] = procs[i];
	}
	free(dd->strangers);
	dd->strangers = procs;
	dd->nstrangers = k;
	return foreign;
}

void
driver_client_new(struct arbiter *a, uint32_t pid)
{
	struct driver_dev *dd;
	size_t dev;
	long i;

	if (a->driver == NULL)
		return;		/* no look yet (driver_init): nothing foreign */
	for (dev = 0; dev < a->ledger.ndevices; dev++) {
		dd = &a->driver[dev];
		for (i = 0; i < dd->nstrangers; i++)
			if (dd->strangers[i].pid == pid)
				break;
		if (i == dd->nstrangers)
			continue;
		dd->foreign -= dd->strangers[i].bytes;
		a->ledger.devices[dev].foreign -= dd->strangers[i].bytes;
		dd->strangers[i] = dd->strangers[--dd->nstrangers];
	}
}

/*
 * The exited processes that held memory on dev: each one NVML still lists
 * holds it; the others share what NVML lists for nobody beyond the
 * device's usual (excess), newest first, since the driver gives back the
 * oldest first. One that accounts for little of its own (a sixteenth) is
 * back. d->held is set for those still holding. Returns what excess they
 * do not account for.
 */
static uint64_t
departed_on(struct arbiter *a, size_t dev, const struct nvml_proc *procs,
    long n, uint64_t excess, int *any)
{
	struct depart *d;
	uint64_t held, unused, take;

	*any = 0;
	TAILQ_FOREACH_REVERSE(d, &a->departs, departs, entry) {
		if (d->pidfd >= 0 || d->lc->usage[dev].used == 0)
			continue;
		*any = 1;
		/*
		 * Listed under its pid: its own, unless another process has
		 * that pid now; then only a second entry is, since
		 * a pid names one live process.
		 */
		if (listed(procs, n, d->lc->pid) >
		    identity_pid_reused(d->lc)) {
			d->held = 1;
			continue;
		}
		/* A lease's unused part is charged, the driver holds none. */
		held = d->lc->usage[dev].used;
		unused = lease_unused(d->lc, dev);
		held = held > unused ? held - unused : 0;
		take = held < excess ? held : excess;
		excess -= take;
		if (take > held / 16)
			d->held = 1;
	}
	return excess;
}

/* dev's figures from NVML; 1 if it said, *serve set if memory came back. */
static int
look_dev(struct arbiter *a, size_t dev, int *serve, int *changed)
{
	struct ledger_device *ld = &a->ledger.devices[dev];
	struct driver_dev *dd = &a->driver[dev];
	struct nvml_proc *procs;
	uint64_t used, again, all, foreign, unlisted, excess;
	uint64_t at = pidfd_boot_ms();
	long n;
	int any;

	/*
	 * The list and the device's figure are two queries: memory taken or
	 * given back between them would read as held by nobody (and made
	 * the usual, or taken for a departed process's). Only a look whose
	 * figure held still across the list is believed.
	 */
	if (nvml_used(dev, &used) < 0 || (n = nvml_procs(dev, &procs)) < 0)
		return 0;
	if (nvml_used(dev, &again) < 0 || again != used) {
		free(procs);
		return 0;
	}
	unshimmed_see(a, dev, procs, n, at);
	*changed |= overhead_reconcile(a, dev, procs, n, serve);
	all = listed_bytes(procs, n);
	unlisted = used > all ? used - all : 0;
	excess = departed_on(a, dev, procs, n, unlisted > dd->unlisted ?
	    unlisted - dd->unlisted : 0, &any);
	foreign = strangers_keep(&a->ledger, dev, dd, procs, n);
	/*
	 * With nobody on the way out, what nobody holds is the usual: at
	 * once when it is less, only after DRIVER_SETTLE_LOOKS looks when it
	 * is more, for a process that just died may be gone from NVML's list
	 * before its connection is seen to close. Till then it is foreign.
	 */
	if (!any) {
		if (unlisted <= dd->unlisted ||
		    ++dd->rising >= DRIVER_SETTLE_LOOKS) {
			dd->unlisted = unlisted;
			dd->rising = 0;
		}
		excess = unlisted > dd->unlisted ? unlisted - dd->unlisted : 0;
	} else
		dd->rising = 0;
	foreign += dd->unlisted + excess;
	if (dd->shortfall > 0 && used < dd->shortfall_used)
		dd->shortfall = 0;
	if (foreign + dd->shortfall < ld->foreign)
		*serve = 1;
	if (foreign != dd->foreign)
		log_debug("device %zu: %llu bytes foreign", dev,
		    (unsigned long long)foreign);
	dd->foreign = foreign;
	ld->foreign = foreign + dd->shortfall;
	dd->looked_used = used;
	dd->looked = 1;
	driver_seen = 1;
	return 1;
}

/*
 * Exited processes no device holds memory of any more are done; so is one
 * that has waited past release_timeout. Returns how many.
 */
static int
departs_settle(struct arbiter *a, int looked)
{
	struct depart *d, *next;
	uint64_t now = event_now_ms();
	int n = 0;

	for (d = TAILQ_FIRST(&a->departs); d != NULL; d = next) {
		next = TAILQ_NEXT(d, entry);
		if (d->pidfd >= 0)
			continue;
		if (looked && !d->held)
			depart_done(a, d, 0);
		else if (now - d->exit_ms >= a->conf.release_timeout_ms)
			depart_done(a, d, 1);
		else
			continue;
		n++;
	}
	return n;
}

/* Whether memory is on its way back: the look comes sooner. */
static int
pending(const struct arbiter *a)
{
	const struct depart *d;
	size_t i;

	TAILQ_FOREACH(d, &a->departs, entry)
		if (d->pidfd < 0)
			return 1;
	for (i = 0; a->driver != NULL && i < a->ledger.ndevices; i++)
		if (a->driver[i].shortfall > 0)
			return 1;
	return 0;
}

/* Look at every device now; serve the waiters if memory came back. */
static void
look(struct arbiter *a)
{
	struct depart *d;
	int serve = 0, changed = 0, looked = 1;
	size_t i;

	if (a->driver == NULL)
		return;		/* not started */
	TAILQ_FOREACH(d, &a->departs, entry)
		d->held = 0;
	/* Who each process is, read again before it is counted or judged. */
	changed |= identity_refresh_all(a) > 0;
	for (i = 0; i < a->ledger.ndevices; i++) {
		if (look_dev(a, i, &serve, &changed))
			continue;
		/* Unseen: nothing departs on a guess; without NVML at all,
		 * no shortfall stays either. */
		looked = 0;
		if (!nvml_ready() && a->driver[i].shortfall > 0) {
			a->ledger.devices[i].foreign = a->driver[i].foreign;
			a->driver[i].shortfall = 0;
			serve = 1;
		}
	}
	serve |= unshimmed_settle(a);
	serve |= departs_settle(a, looked) > 0;
	memlimits_check(a);	/* a wall the driver lost is set again */
	/* What the look found is charged now: the glances' new base. */
	for (i = 0; i < a->ledger.ndevices; i++)
		if (a->driver[i].looked) {
			glance_base(a, i, a->driver[i].looked_used);
			a->driver[i].looked = 0;
		}
	if (changed)
		a->tell_limits(a, NULL);
	if (serve)
		resolve_serve(a);
}

static void
driver_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	(void)loop;
	a->driver_timer = 0;
	look(a);
	driver_arm(a, jitter_ms(pending(a) ? DRIVER_FAST_MS : DRIVER_PERIOD_MS));
}

/* The next look in ms, unless one comes sooner already. */
static void
driver_arm(struct arbiter *a, uint64_t ms)
{
	uint64_t when = event_now_ms() + ms;

	if (a->stopping || (!nvml_ready() && !pending(a)))
		return;
	if (a->driver_timer > 0) {
		if (a->driver_when <= when)
			return;
		event_timer_cancel(a->loop, a->driver_timer);
	}
	a->driver_when = when;
	a->driver_timer = event_timer_add(a->loop, ms, driver_fire, a);
	if (a->driver_timer < 0)
		a->driver_timer = 0;
}

void
driver_look_soon(struct arbiter *a)
{
	driver_arm(a, 0);
}

void
driver_refused(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t size)
{
	struct driver_dev *dd;
	uint64_t avail, used = 0;

	if (a->driver == NULL)
		return;		/* not started */
	dd = &a->driver[dev];
	look(a);
	avail = ledger_available(&a->ledger, lc->group, dev);
	decision_event(a, GF_EV_DRIVER_OOM, lc, (int)dev, size, "the driver "
	    "refused it with %llu bytes free in the ledger",
	    (unsigned long long)avail);
	if (size > avail)
		return;
	/* It has less than size free: at least this much more is held. */
	dd->shortfall += avail - size + 1;
	dd->shortfall_used = nvml_used(dev, &used) == 0 ? used : 0;
	a->ledger.devices[dev].foreign += avail - size + 1;
	driver_arm(a, DRIVER_FAST_MS);
}

int
driver_init(struct arbiter *a)
{
	size_t n = a->ledger.ndevices ? a->ledger.ndevices : 1;

	a->driver_timer = 0;
	if ((a->driver = calloc(n, sizeof(*a->driver))) == NULL) {
		log_warnx("no memory for the driver's figures");
		return -1;
	}
	if (nvml_ready())
		look(a);
	driver_arm(a, jitter_ms(DRIVER_PERIOD_MS));
	glance_init(a);
	return 0;
}

void
driver_free(struct arbiter *a)
{
	size_t i;

	glance_free(a);
	if (a->driver_timer > 0)
		event_timer_cancel(a->loop, a->driver_timer);
	a->driver_timer = 0;
	for (i = 0; a->driver != NULL && i < a->ledger.ndevices; i++)
		free(a->driver[i].strangers);
	free(a->driver);
	a->driver = NULL;
}
