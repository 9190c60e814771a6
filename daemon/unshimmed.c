/*
 * Processes that hold device memory without the shim: taken in from
 * NVML's list, charged as overhead.c measures them, killed where their
 * group says so, handed to depart.c as they exit. unshimmed.h says why.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "arbiter.h"
#include "depart.h"
#include "event.h"
#include "groups.h"
#include "ledger.h"
#include "log.h"
#include "nvml.h"
#include "overhead.h"
#include "pidfd.h"
#include "procid.h"
#include "resolve.h"
#include "units.h"
#include "unshimmed.h"

/* What the daemon keeps of an unshimmed process besides its client. */
struct unshim {
	struct arbiter	*a;
	struct ledger_client *lc;
};

/* A process with this daemon's shim that has not connected yet. */
struct unshim_wait {
	uint32_t	 pid;
	uint64_t	 seen_ms;	/* first seen (monotonic) */
	int		 listed;	/* by the current look */
};

/*
 * Whether pid, with this daemon's shim loaded and not connected, has had
 * its UNSHIMMED_GRACE_MS since it was first seen so; it is noted now if
 * new (no memory to note it: at once).
 */
static int
grace_over(struct arbiter *a, uint32_t pid)
{
	struct unshim_wait *w;
	uint64_t now = event_now_ms();
	size_t i;

	for (i = 0; i < a->nunshim_wait; i++)
		if (a->unshim_wait[i].pid == pid) {
			a->unshim_wait[i].listed = 1;
			return now - a->unshim_wait[i].seen_ms >=
			    UNSHIMMED_GRACE_MS;
		}
	if ((w = realloc(a->unshim_wait, (a->nunshim_wait + 1) *
	    sizeof(*w))) == NULL)
		return 1;
	a->unshim_wait = w;
	w[a->nunshim_wait++] = (struct unshim_wait){ pid, now, 1 };
	return 0;
}

/* Forget the waiting processes the look did not list (gone, connected). */
static void
grace_prune(struct arbiter *a)
{
	size_t i, k = 0;

	for (i = 0; i < a->nunshim_wait; i++)
		if (a->unshim_wait[i].listed) {
			a->unshim_wait[i].listed = 0;
			a->unshim_wait[k++] = a->unshim_wait[i];
		}
	a->nunshim_wait = k;
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
	free(lc->unshim);
	lc->unshim = NULL;
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

/* Take in pid, listed with bytes on dev at at_ms; NULL if it cannot be. */
static struct ledger_client *
unshim_new(struct arbiter *a, uint32_t pid, size_t dev, uint64_t bytes,
    uint64_t at_ms)
{
	struct ledger_client *lc;
	struct procid id;
	struct unshim *u;
	char wbuf[160], sbuf[32];
	const char *why;

	if (procid_read(pid, at_ms, a->conf.socket, &id) < 0)
		return NULL;	/* foreign, as before: another namespace's */
	if (id.why == PROCID_NOT_CONNECTED && !grace_over(a, pid)) {
		free(id.cgroup);
		close(id.pidfd);
		return NULL;	/* foreign, until it has had its time */
	}
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (lc = ledger_client_new(&a->ledger, pid, id.uid, id.gid,
	    id.cgroup)) == NULL) {
		log_warnx("no memory to count pid %u, without the shim", pid);
		free(u);
		free(id.cgroup);
		close(id.pidfd);
		return NULL;
	}
	free(id.cgroup);
	u->a = a;
	u->lc = lc;
	lc->unshim = u;
	lc->pidfd = id.pidfd;
	lc->state = GF_STATE_UNSHIMMED;
	ledger_client_group(&a->ledger, lc, groups_match(&a->groups,
	    lc->cgroup, lc->uid, lc->gid));
	if (event_set(a->loop, lc->pidfd, EVENT_READ, unshim_exited, u) < 0)
		log_warn("cannot watch pid %u for its exit: it goes when "
		    "NVML no longer lists it", pid);
	why = procid_why(&id, wbuf, sizeof(wbuf));
	log_info("pid %u (uid %u) holds %s on device %zu without the shim "
	    "(%s), cgroup '%s', group '%s'", pid, lc->uid, size_format(bytes,
	    sbuf, sizeof(sbuf)), dev, why, lc->cgroup,
	    a->ledger.groups[lc->group].pol.name);
	arbiter_event(a, GF_EV_UNSHIMMED, lc, (int)dev, bytes, "%s; uid %u",
	    why, lc->uid);
	return lc;
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
		lc = ledger_client_find(&a->ledger, procs[i].pid, NULL);
		if (lc == NULL)
			lc = unshim_new(a, procs[i].pid, dev, procs[i].bytes,
			    at_ms);
		if (lc == NULL || lc->unshim == NULL ||
		    lc->usage[dev].opened)
			continue;
		/* Charged at once by overhead_reconcile, as a context. */
		ledger_open(&a->ledger, lc, dev, GF_LIMIT_NONE, 0);
	}
}

/*
 * Whether lc may be killed: its group says kill, and it is not root's in
 * "default" (system processes the configuration does not name).
 */
static int
killable(const struct arbiter *a, const struct ledger_client *lc)
{
	const struct group_policy *pol = &a->ledger.groups[lc->group].pol;

	if (lc->unshim == NULL || lc->preempting ||
	    pol->unshimmed != POLICY_UNSHIMMED_KILL)
		return 0;
	return lc->group != 0 || lc->uid != 0;
}

/* SIGKILL lc through its pidfd for holding used against limit on dev:
   0, or -1 when it cannot be signalled (logged). */
static int
unshim_kill(struct arbiter *a, struct ledger_client *lc, size_t dev,
    const char *whose, uint64_t used, uint64_t limit)
{
	char ubuf[32], lbuf[32];

	if (pidfd_signal(lc->pidfd, lc->pid, SIGKILL) < 0) {
		log_warn("cannot send SIGKILL to pid %u", lc->pid);
		return -1;
	}
	lc->preempting = 1;	/* its charge is on its way back */
	size_format(used, ubuf, sizeof(ubuf));
	size_format(limit, lbuf, sizeof(lbuf));
	log_info("pid %u, without the shim, killed: %s holds %s, limit %s",
	    lc->pid, whose, ubuf, lbuf);
	arbiter_event(a, GF_EV_UNSHIMMED_KILL, lc, (int)dev,
	    lc->usage[dev].used, "SIGKILL: %s holds %s, past its limit %s",
	    whose, ubuf, lbuf);
	return 0;
}

/* What group g holds on dev less what its killed processes still hold. */
static uint64_t
group_holding(const struct ledger *l, size_t g, size_t dev)
{
	const struct ledger_client *lc;
	uint64_t n = l->groups[g].share[dev].used;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (lc->group == g && lc->preempting)
			n -= lc->usage[dev].used < n ? lc->usage[dev].used : n;
	return n;
}

/* The largest killable unshimmed process of g on dev, or NULL. */
static struct ledger_client *
largest(struct arbiter *a, size_t g, size_t dev)
{
	struct ledger_client *lc, *best = NULL;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->group == g && lc->usage[dev].used > 0 &&
		    killable(a, lc) && (best == NULL ||
		    lc->usage[dev].used > best->usage[dev].used))
			best = lc;
	return best;
}

/*
 * Kill on dev the unshimmed processes past their own limit, then, in a
 * group whose limit is shared, the largest while the group is past it.
 */
static void
enforce_dev(struct arbiter *a, size_t dev)
{
	struct ledger *l = &a->ledger;
	struct ledger_client *lc;
	uint64_t held, limit;
	size_t g;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (killable(a, lc) &&
		    lc->usage[dev].used > lc->usage[dev].limit)
			(void)unshim_kill(a, lc, dev, "the process",
			    lc->usage[dev].used, lc->usage[dev].limit);
	for (g = 0; g < l->ngroups; g++) {
		if (l->groups[g].pol.per_process)
			continue;
		limit = l->groups[g].share[dev].limit;
		/* One that cannot be signalled ends it: the next look again. */
		while ((held = group_holding(l, g, dev)) > limit &&
		    (lc = largest(a, g, dev)) != NULL &&
		    unshim_kill(a, lc, dev, "its group", held, limit) == 0)
			;
	}
}

int
unshimmed_settle(struct arbiter *a)
{
	struct ledger_client *lc, *next;
	int back = 0;
	size_t dev;

	for (lc = TAILQ_FIRST(&a->ledger.clients); lc != NULL; lc = next) {
		next = TAILQ_NEXT(lc, entry);
		if (lc->unshim == NULL ||
		    ledger_client_used(&a->ledger, lc) > 0)
			continue;
		/* Alive and holding nothing: it freed what it held. */
		unshim_end(a, lc);
		back = 1;
	}
	grace_prune(a);
	for (dev = 0; dev < a->ledger.ndevices; dev++)
		enforce_dev(a, dev);
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
	free(a->unshim_wait);
	a->unshim_wait = NULL;
	a->nunshim_wait = 0;
}
