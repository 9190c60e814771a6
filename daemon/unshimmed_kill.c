/*
 * Which processes without the shim are killed, under unshimmed = kill:
 * those past their own limit, and in a group past its shared limit those
 * whose memory came last past it, newest first (taken.h). Never one in
 * its grace (expect.h), nor root's in the group "default".
 */
#include <signal.h>
#include <stdlib.h>

#include "arbiter.h"
#include "decision.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "pidfd.h"
#include "taken.h"
#include "units.h"
#include "unshimmed_int.h"

/*
 * Whether lc may be killed: its group says kill, its grace is over, and
 * it is not root's in "default" (system processes the configuration
 * does not name).
 */
static int
killable(const struct arbiter *a, const struct ledger_client *lc)
{
	const struct group_policy *pol = &a->ledger.groups[lc->group].pol;

	if (lc->unshim == NULL || lc->preempting ||
	    pol->unshimmed != POLICY_UNSHIMMED_KILL ||
	    event_now_ms() < lc->unshim->grace_until)
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
	decision_event(a, GF_EV_UNSHIMMED_KILL, lc, (int)dev,
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

/* Room for one more piece in *p (*n of *cap): 0, or -1 (ENOMEM). */
static int
piece_room(struct taken_piece **p, size_t n, size_t *cap)
{
	struct taken_piece *v;

	if (n < *cap)
		return 0;
	if ((v = realloc(*p, (*cap ? *cap * 2 : 16) * sizeof(*v))) == NULL)
		return -1;
	*p = v;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

/*
 * lc's charge on dev as pieces taken: an unshimmed process's layers; a
 * client's allocations as committed, and what else it is charged (a
 * lease, a reservation) as its lease was last given.
 */
static int
pieces_of(const struct ledger_client *lc, size_t dev,
    struct taken_piece **p, size_t *n, size_t *cap)
{
	const struct ledger_alloc *al;
	const struct taken_layers *t;
	uint64_t key, rest = lc->usage[dev].used;
	size_t pos = 0, i;

	if (lc->unshim != NULL) {
		t = &lc->unshim->layers[dev];
		for (i = 0; i < t->n; i++) {
			if (piece_room(p, *n, cap) < 0)
				return -1;
			(*p)[(*n)++] = (struct taken_piece){ t->v[i].when,
			    t->v[i].bytes, lc };
		}
		return 0;
	}
	while ((al = ptrmap_next(&lc->allocs, &pos, &key)) != NULL) {
		if (al->device != dev || al->size == 0)
			continue;
		if (piece_room(p, *n, cap) < 0)
			return -1;
		(*p)[(*n)++] = (struct taken_piece){ { al->time_ms, 0 },
		    al->size, lc };
		rest -= al->size < rest ? al->size : rest;
	}
	if (rest == 0)
		return 0;
	if (piece_room(p, *n, cap) < 0)
		return -1;
	(*p)[(*n)++] = (struct taken_piece){
	    { lc->usage[dev].lease_grant_ms, 0 }, rest, lc };
	return 0;
}

/*
 * The owners of g's memory on dev that lies past limit, newest first,
 * into *owners (malloc'd, the caller's). Returns how many, or -1.
 */
static long
past_limit(struct arbiter *a, size_t g, size_t dev, uint64_t limit,
    const void ***owners)
{
	struct taken_piece *p = NULL;
	struct ledger_client *lc;
	size_t n = 0, cap = 0;
	long no = -1;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->group == g && !lc->preempting &&
		    lc->usage[dev].used > 0 &&
		    pieces_of(lc, dev, &p, &n, &cap) < 0)
			goto out;
	if ((*owners = calloc(n ? n : 1, sizeof(**owners))) != NULL)
		no = (long)taken_past(p, n, limit, *owners);
out:
	if (no < 0)
		log_warnx("no memory to order group '%s''s memory: none of "
		    "it killed at this look", a->ledger.groups[g].pol.name);
	free(p);
	return no;
}

/* In group g past its shared limit on dev: the newest excess goes. */
static void
enforce_group(struct arbiter *a, size_t g, size_t dev)
{
	struct ledger *l = &a->ledger;
	uint64_t held, limit = l->groups[g].share[dev].limit;
	const void **owners = NULL;
	struct ledger_client *lc;
	long i, n;

	if ((held = group_holding(l, g, dev)) <= limit ||
	    (n = past_limit(a, g, dev, limit, &owners)) < 0)
		return;
	/* One that cannot be signalled ends it: the next look again. */
	for (i = 0; i < n && held > limit; i++) {
		lc = (struct ledger_client *)owners[i];
		if (!killable(a, lc))
			continue;
		if (unshim_kill(a, lc, dev, "its group", held, limit) < 0)
			break;
		held = group_holding(l, g, dev);
	}
	free(owners);
}

/* Kill on dev those past their own limit, then their group's. */
static void
enforce_dev(struct arbiter *a, size_t dev)
{
	struct ledger *l = &a->ledger;
	struct ledger_client *lc;
	size_t g;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (killable(a, lc) &&
		    lc->usage[dev].used > lc->usage[dev].limit)
			(void)unshim_kill(a, lc, dev, "the process",
			    lc->usage[dev].used, lc->usage[dev].limit);
	for (g = 0; g < l->ngroups; g++)
		if (!l->groups[g].pol.per_process)
			enforce_group(a, g, dev);
}

void
unshimmed_enforce(struct arbiter *a)
{
	size_t dev;

	for (dev = 0; dev < a->ledger.ndevices; dev++)
		enforce_dev(a, dev);
}
