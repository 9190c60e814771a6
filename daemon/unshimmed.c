/*
 * Processes that hold device memory without the shim: taken in from
 * NVML's list, charged as overhead.c measures them, killed where their
 * group says so, handed to depart.c as they exit. unshimmed.h says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arbiter.h"
#include "decision.h"
#include "depart.h"
#include "event.h"
#include "expect.h"
#include "granted.h"
#include "grantrec.h"
#include "groups.h"
#include "identity.h"
#include "ledger.h"
#include "log.h"
#include "nvml.h"
#include "overhead.h"
#include "pidfd.h"
#include "procid.h"
#include "resolve.h"
#include "swap.h"
#include "units.h"
#include "unshimmed.h"
#include "unshimmed_int.h"

/* Orders pieces seen at one look (taken.h): they came in this order. */
static uint64_t unshim_seq;

/* lc's record's memory: its layers, then itself. */
static void
unshim_forget(struct ledger_client *lc)
{
	size_t dev;

	if (lc->unshim->layers != NULL)
		for (dev = 0; dev < lc->unshim->a->ledger.ndevices; dev++)
			taken_layers_free(&lc->unshim->layers[dev]);
	free(lc->unshim->layers);
	free(lc->unshim);
	lc->unshim = NULL;
}

/*
 * lc is done with here: stop watching its pidfd and give it, with lc, to
 * depart.c, which keeps the charge until the driver has it back or, when
 * nothing is charged, drops lc at once.
 */
static void
unshim_end(struct arbiter *a, struct ledger_client *lc)
{
	int pidfd = lc->pidfd;

	event_set(a->loop, pidfd, 0, NULL, NULL);
	unshim_forget(lc);
	(void)depart_begin(a, lc, pidfd);
}

/* Return lc's charges (NVML no longer shows them; or it connected). */
static void
unshim_uncharge(struct arbiter *a, struct ledger_client *lc)
{
	size_t dev;

	for (dev = 0; dev < a->ledger.ndevices; dev++)
		(void)ledger_release(&a->ledger, lc, OVERHEAD_KEY(dev));
}

/* Its pidfd is readable: the process has exited. */
static void
unshim_exited(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct unshim *u = arg;
	struct arbiter *a = u->a;

	(void)loop;
	(void)fd;
	(void)mask;
	log_info("pid %u, without the shim, exited", u->lc->pid);
	unshim_end(a, u->lc);
	resolve_serve(a);
}

/* Record lc's `unshimmed` event: bytes on dev, why /proc says. */
static void
unshim_say(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t bytes)
{
	char sbuf[32];

	lc->unshim->said = 1;
	grantrec_put(a, lc);	/* granted nothing, should the daemon go */
	log_info("pid %u (uid %u) holds %s on device %zu without the shim "
	    "(%s), cgroup '%s', group '%s'", lc->pid, lc->uid,
	    size_format(bytes, sbuf, sizeof(sbuf)), dev, lc->unshim->why,
	    lc->cgroup, a->ledger.groups[lc->group].pol.name);
	decision_event(a, GF_EV_UNSHIMMED, lc, (int)dev, bytes, "%s; uid %u",
	    lc->unshim->why, lc->uid);
}

/*
 * Take in pid, listed with bytes on dev at at_ms; NULL if it cannot be.
 * Counted in its group at once; judged at once too, unless the daemon
 * has reason to expect it to connect (expect.h): then its event and its
 * judgement wait for its grace to end.
 */
int
unshimmed_judged(const struct ledger_client *lc)
{
	return lc->unshim != NULL && lc->unshim->said;
}

static struct ledger_client *
unshim_new(struct arbiter *a, uint32_t pid, size_t dev, uint64_t bytes,
    uint64_t at_ms)
{
	struct ledger_client *lc;
	struct procid id;
	struct unshim *u;
	char wbuf[160];

	if (procid_read(pid, at_ms, a->conf.socket, &id) < 0)
		return NULL;	/* foreign, as before: gone, unreadable */
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (u->layers = calloc(a->ledger.ndevices, sizeof(*u->layers))) ==
	    NULL || (lc = ledger_client_new(&a->ledger, pid, id.uid, id.gid,
	    id.cgroup)) == NULL) {
		log_warnx("no memory to count pid %u, without the shim", pid);
		if (u != NULL)
			free(u->layers);
		free(u);
		free(id.cgroup);
		close(id.pidfd);
		return NULL;
	}
	free(id.cgroup);
	u->a = a;
	u->lc = lc;
	u->grace_until = expect_until(a, pid, id.start_ms);
	snprintf(u->why, sizeof(u->why), "%s", procid_why(&id, wbuf,
	    sizeof(wbuf)));
	lc->unshim = u;
	lc->pidfd = id.pidfd;
	lc->start_ms = id.start_ms;
	lc->state = GF_STATE_UNSHIMMED;
	ledger_client_group(&a->ledger, lc, groups_match(&a->groups,
	    lc->cgroup, lc->uid, lc->gid));
	if (event_set(a->loop, lc->pidfd, EVENT_READ, unshim_exited, u) < 0)
		log_warn("cannot watch pid %u for its exit: it goes when "
		    "NVML no longer lists it", pid);
	if (event_now_ms() >= u->grace_until)
		unshim_say(a, lc, dev, bytes);
	else
		log_info("pid %u (uid %u) holds memory on device %zu, not "
		    "connected: counted in group '%s', given %llu ms to "
		    "connect", pid, lc->uid, dev,
		    a->ledger.groups[lc->group].pol.name, (unsigned long long)
		    (u->grace_until - event_now_ms()));
	return lc;
}

/*
 * lc, whose connection closed, is alive and NVML lists it holding
 * memory: holding no more than the daemon granted it (granted.h), its
 * kept charge stands; more, once its grace is over (expect.h), it is a
 * process without the shim like any other, and its kept grants
 * (depart.h) give way to what NVML shows it holding. Returns its new
 * record, or lc.
 */
static struct ledger_client *
departed_alive(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t bytes, uint64_t at_ms)
{
	uint32_t pid = lc->pid;
	struct ledger_client *n;

	if (lc->on_host || lc->swap != SWAP_NONE || lc->preempting ||
	    lc->pidfd < 0 || pidfd_exited(lc->pidfd) ||
	    granted_holds(a, lc, dev, bytes) ||
	    event_now_ms() < expect_until(a, pid, pidfd_start_ms(pid)))
		return lc;
	if ((n = unshim_new(a, pid, dev, bytes, at_ms)) == NULL)
		return lc;
	/* Its departure, dropped: the new record stands in its place. */
	(void)depart_cancel(a, pid);
	return n;
}

void
unshimmed_see(struct arbiter *a, size_t dev, const struct nvml_proc *procs,
    long n, uint64_t at_ms)
{
	struct ledger_client *lc, *next;
	long i;

	/* At start, before the configuration is applied (driver_init): which
	   group, and which socket is this daemon's, are not known yet. */
	if (a->groups.conf == NULL)
		return;
	/* Exited since the loop last turned: not to be measured as gone. */
	for (lc = TAILQ_FIRST(&a->ledger.clients); lc != NULL; lc = next) {
		next = TAILQ_NEXT(lc, entry);
		if (lc->unshim != NULL && pidfd_exited(lc->pidfd))
			unshim_end(a, lc);
	}
	for (i = 0; i < n; i++) {
		if (procs[i].bytes == 0 || procs[i].pid == (uint32_t)getpid())
			continue;
		/* A departed process's record is not who has its pid now. */
		lc = identity_holder(a, procs[i].pid);
		if (lc == NULL)
			lc = unshim_new(a, procs[i].pid, dev, procs[i].bytes,
			    at_ms);
		else if (lc->departing)
			lc = departed_alive(a, lc, dev, procs[i].bytes, at_ms);
		if (lc == NULL || lc->unshim == NULL ||
		    lc->usage[dev].opened)
			continue;
		/* Charged at once by overhead_reconcile, as a context. */
		ledger_open(&a->ledger, lc, dev, GF_LIMIT_NONE, 0);
	}
}

/*
 * After a look: lc's memory on each device as layers taken (taken.h),
 * and its event once its grace is over.
 */
static void
unshim_layers(struct arbiter *a, struct ledger_client *lc, uint64_t now)
{
	struct unshim *u = lc->unshim;
	size_t dev;

	for (dev = 0; dev < a->ledger.ndevices; dev++) {
		if (taken_layers_fit(&u->layers[dev], lc->usage[dev].used,
		    (struct taken_when){ now, ++unshim_seq }) < 0)
			log_warnx("no memory to note when pid %u took its "
			    "memory: taken as older", lc->pid);
		if (!u->said && now >= u->grace_until &&
		    lc->usage[dev].used > 0)
			unshim_say(a, lc, dev, lc->usage[dev].used);
	}
}

int
unshimmed_settle(struct arbiter *a)
{
	struct ledger_client *lc, *next;
	uint64_t now = event_now_ms();
	int back = 0;

	for (lc = TAILQ_FIRST(&a->ledger.clients); lc != NULL; lc = next) {
		next = TAILQ_NEXT(lc, entry);
		if (lc->unshim == NULL ||
		    ledger_client_used(&a->ledger, lc) > 0)
			continue;
		/* Alive and holding nothing: it freed what it held. */
		unshim_end(a, lc);
		back = 1;
	}
	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->unshim != NULL)
			unshim_layers(a, lc, now);
	expect_prune(a);
	granted_prune(a);
	unshimmed_enforce(a);
	return back;
}

int
unshimmed_hello(struct arbiter *a, uint32_t pid)
{
	struct ledger_client *lc;

	for (lc = ledger_client_find(&a->ledger, pid, NULL); lc != NULL;
	    lc = ledger_client_find(&a->ledger, pid, lc))
		if (lc->unshim != NULL && !pidfd_exited(lc->pidfd))
			break;
	if (lc == NULL)
		return 0;
	log_debug("pid %u, counted without the shim, connected", pid);
	unshim_uncharge(a, lc);
	unshim_end(a, lc);
	return 1;
}

void
unshimmed_free(struct arbiter *a)
{
	struct ledger_client *lc, *next;

	for (lc = TAILQ_FIRST(&a->ledger.clients); lc != NULL; lc = next) {
		next = TAILQ_NEXT(lc, entry);
		if (lc->unshim == NULL)
			continue;
		unshim_uncharge(a, lc);
		unshim_end(a, lc);
	}
	expect_free(a);
}
