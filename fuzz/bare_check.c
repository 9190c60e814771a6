/*
 * Issue 38's invariants over the processes without connections
 * (bare.c):
 *
 *   - no process within its limits is killed: when the daemon SIGKILLs
 *     one for its memory (not a preemption's victim, whose SIGTERM came
 *     first), it holds more than its own limit on some device, or some
 *     of its memory lies past its group's limit when the group's memory
 *     is laid end to end in the order the looks saw it come
 *     (daemon/taken.h). Pieces seen at one look are taken as the victim's
 *     last, and a group with shimmed clients' charges on a device is not
 *     judged there: either way a kill is only called wrong when it
 *     surely is.
 *   - no listed byte is FOREIGN once its process is known: a live
 *     process the last look saw holding what NVML says now is none of
 *     the daemon's strangers,
 *   - and the ledger says what NVML does: its record (its pidfd this
 *     life's) is charged what NVML lists, device by device.
 */
#include <stdio.h>

#include "../daemon/driver.h"
#include "../daemon/nvml.h"
#include "../daemon/ledger.h"
#include "../daemon/policy.h"
#include "../daemon/unshimmed_int.h"
#include "bare.h"
#include "fuzz.h"

/* lc's process is b, in its present life. */
static int
is_life(const struct ledger_client *lc, const struct fz_bare *b)
{
	return lc->unshim != NULL && lc->pid == b->pid &&
	    fz_bare_of_pidfd(lc->pidfd) == b;
}

/* What lc's process is, if one of ours, alive and not killed. */
static const struct fz_bare *
live_bare(const struct ledger_client *lc)
{
	const struct fz_bare *b = fz_bare_of_pid(lc->pid);

	return b != NULL && !b->killed && !lc->preempting && is_life(lc, b) ?
	    b : NULL;
}

/* What the group's live bare processes had on dev by ms, as seen. */
static uint64_t
group_by(const struct arbiter *a, size_t g, size_t dev, uint64_t ms)
{
	const struct ledger_client *lc;
	const struct fz_bare *b;
	uint64_t sum = 0;
	size_t i;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		if (lc->group != g || (b = live_bare(lc)) == NULL)
			continue;
		for (i = 0; i < b->layers[dev].n; i++)
			if (b->layers[dev].v[i].ms <= ms)
				sum += b->layers[dev].v[i].bytes;
	}
	return sum;
}

/* Whether the group's charge on dev is all its live bare processes'. */
static int
only_bare(const struct arbiter *a, size_t g, size_t dev)
{
	const struct ledger_client *lc;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->group == g && !lc->preempting &&
		    lc->usage[dev].used > 0 && live_bare(lc) == NULL)
			return 0;
	return 1;
}

/* b (lc) surely held within its limits on dev. */
static int
within_on(const struct arbiter *a, const struct ledger_client *lc,
    const struct fz_bare *b, size_t dev)
{
	const struct ledger_group *g = &a->ledger.groups[lc->group];
	uint64_t limit = g->share[dev].limit;
	size_t i;

	if (b->seen[dev] > lc->usage[dev].limit)
		return 0;
	if (b->seen[dev] == 0 || g->pol.per_process)
		return 1;
	if (!only_bare(a, lc->group, dev))
		return 0;
	for (i = 0; i < b->layers[dev].n; i++)
		if (group_by(a, lc->group, dev, b->layers[dev].v[i].ms) >
		    limit)
			return 0;
	return 1;
}

void
fz_bare_kill_check(const struct arbiter *a, struct fz_bare *b, int pidfd)
{
	const struct ledger_client *lc;
	size_t dev;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->pidfd == pidfd && is_life(lc, b))
			break;
	/* A victim of preemption (SIGTERM first), or not unshimmed. */
	if (lc == NULL || lc->preempting || b->killed)
		return;
	for (dev = 0; dev < a->ledger.ndevices; dev++)
		if (!within_on(a, lc, b, dev))
			return;
	fz_fail("pid %u (uid %u), without the shim, is killed within its "
	    "limits", b->pid, b->uid);
}

/* What every record of b's pid is charged on dev: an old life's too. */
static uint64_t
pid_charged(const struct arbiter *a, const struct fz_bare *b, size_t dev)
{
	const struct ledger_client *lc;
	uint64_t sum = 0;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->pid == b->pid)
			sum += lc->usage[dev].used;
	return sum;
}

/* b, alive and as the last look saw it on dev, is lc's (NULL: none). */
static void
check_known(const struct arbiter *a, const struct fz_bare *b,
    const struct ledger_client *lc, size_t dev)
{
	const struct driver_dev *dd = &a->driver[dev];
	unsigned long long got;
	long k;

	for (k = 0; k < dd->nstrangers; k++)
		if (dd->strangers[k].pid == b->pid)
			fz_fail("pid %u's %llu bytes on device %zu are "
			    "foreign, its process known", b->pid,
			    (unsigned long long)dd->strangers[k].bytes, dev);
	if (lc == NULL)
		fz_fail("pid %u holds %llu bytes on device %zu, and the daemon "
		    "has no record of it", b->pid,
		    (unsigned long long)b->nvml[dev], dev);
	if ((got = pid_charged(a, b, dev)) != b->nvml[dev])
		fz_fail("pid %u is charged %llu bytes on device %zu, NVML "
		    "lists %llu", b->pid, got, dev,
		    (unsigned long long)b->nvml[dev]);
}

void
fz_bare_check(const struct arbiter *a)
{
	const struct ledger_client *lc;
	const struct fz_bare *b;
	size_t i, dev;

	if (a->driver == NULL || !fz.nvml)
		return;
	for (i = 0; i < FZ_NBARE; i++) {
		b = &fz.bare[i];
		if (!b->alive || b->killed || b->seen_ino != b->ino)
			continue;
		TAILQ_FOREACH(lc, &a->ledger.clients, entry)
			if (is_life(lc, b))
				break;
		for (dev = 0; dev < a->ledger.ndevices; dev++)
			if (b->nvml[dev] > 0 && b->seen[dev] == b->nvml[dev])
				check_known(a, b, lc, dev);
	}
}
