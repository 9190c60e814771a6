/*
 * Context overhead: NVML's per-process usage reconciled with the ledger,
 * the "context" records it sets, and the timer that does it again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "activity.h"
#include "arbiter.h"
#include "driver.h"
#include "event.h"
#include "gpufrac/activity.h"
#include "grantfile.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "nvml.h"
#include "overhead.h"
#include "resolve.h"
#include "swap.h"

/* Its allocations re-registered within this of opening a device. */
#define OVERHEAD_REREG_MS	2000

uint64_t
proc_bytes(const struct nvml_proc *procs, long n, uint32_t pid)
{
	long i;

	for (i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return procs[i].bytes;
	return 0;
}

uint64_t
overhead_of(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_alloc *al = ptrmap_get(&lc->allocs,
	    OVERHEAD_KEY(dev));

	return al != NULL ? al->size : 0;
}

/* Set lc's record on dev to want: -1 if it shrank, 1 if it grew, or 0. */
static int
record_set(struct ledger *l, struct ledger_client *lc, size_t dev,
    uint64_t want)
{
	uint64_t have = overhead_of(lc, dev);
	struct gf_lease_slot *s = activity_slot(lc, dev);

	if (s != NULL)
		__atomic_store_n(&s->context, want | GF_CONTEXT_MEASURED,
		    __ATOMIC_RELAXED);
	if (want == have)
		return 0;
	if (want == 0)
		(void)ledger_release(l, lc, OVERHEAD_KEY(dev));
	else
		(void)ledger_commit(l, lc, dev, OVERHEAD_KEY(dev), 0, want,
		    GF_KIND_CONTEXT, event_now_ms());
	return want < have ? -1 : 1;
}

/*
 * Whether lc, which opened dev saying its allocations there held
 * rereg_held (its page's held), is still re-registering them: NVML counts
 * them already, and a look between its open and their charges would take
 * them for its context, and charge them twice. Bounded by rereg_until: a
 * page that says more than it registers keeps its own record as it was
 * a second or two, no longer.
 */
static int
registering(struct ledger_usage *u, uint64_t other)
{
	if (u->rereg_until == 0)
		return 0;
	if (other >= u->rereg_held || event_now_ms() >= u->rereg_until) {
		u->rereg_until = 0;
		return 0;
	}
	return 1;
}

/*
 * What NVML says lc holds on dev beyond its other charges. When it is
 * out to host, on its way or leaving, or re-registering what it holds,
 * NVML's figure says nothing of its context: UINT64_MAX, leave the record
 * as it is.
 */
static uint64_t
measured(struct ledger_client *lc, size_t dev, uint64_t nvml_bytes)
{
	struct ledger_usage *u = &lc->usage[dev];
	uint64_t other = u->used - overhead_of(lc, dev);
	uint64_t unused = lease_unused(lc, dev);

	if (!u->opened || lc->on_host || lc->swap != SWAP_NONE ||
	    lc->departing || registering(u, other))
		return UINT64_MAX;
	/* A lease's unused part is charged, and the driver holds none of it. */
	other = other > unused ? other - unused : 0;
	return nvml_bytes > other ? nvml_bytes - other : 0;
}

/*
 * The measure an earlier daemon (or connection) left in lc's page for
 * dev, or UINT64_MAX: when lc opens dev, before it re-registers its
 * allocations, NVML cannot tell them from its context (nor sees anything
 * of a process out to host). The page is the client's to write: no more
 * than the device holds is believed.
 */
static uint64_t
remembered(const struct ledger *l, const struct ledger_client *lc,
    size_t dev)
{
	const struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t n;

	if (s == NULL || overhead_of(lc, dev) != 0 ||
	    !((n = __atomic_load_n(&s->context, __ATOMIC_RELAXED)) &
	    GF_CONTEXT_MEASURED))
		return UINT64_MAX;
	n &= ~GF_CONTEXT_MEASURED;
	return n < l->devices[dev].capacity ? n : l->devices[dev].capacity;
}

int
overhead_reconcile(struct arbiter *a, size_t dev, const struct nvml_proc *procs,
    long n, int *shrank)
{
	struct ledger_client *lc;
	uint64_t want;
	int changed = 0, r;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		want = measured(lc, dev, proc_bytes(procs, n, lc->pid));
		if (want == UINT64_MAX)
			continue;
		r = record_set(&a->ledger, lc, dev, want);
		changed |= r != 0;
		*shrank |= r < 0;
	}
	return changed;
}

/*
 * The context the daemon recorded for lc on dev before it opened it (its
 * earlier connection's, or daemon's: granted_context), or UINT64_MAX.
 * Used once: from then on lc's own record says it.
 */
static uint64_t
known(struct ledger_client *lc, size_t dev)
{
	uint64_t k = lc->usage[dev].context_known;

	lc->usage[dev].context_known = 0;
	return (k & GRANT_CONTEXT_KNOWN) ? k & ~GRANT_CONTEXT_KNOWN :
	    UINT64_MAX;
}

/*
 * What lc says its allocations on dev held when it opened it, before it
 * registers them: NVML counts them already (the page's held).
 */
static uint64_t
held(const struct ledger_client *lc, size_t dev)
{
	const struct gf_lease_slot *s = activity_slot(lc, dev);

	return s != NULL ? __atomic_load_n(&s->held, __ATOMIC_RELAXED) : 0;
}

void
overhead_client(struct arbiter *a, struct ledger_client *lc, size_t dev)
{
	uint64_t want, h, nv = UINT64_MAX, k = known(lc, dev);
	struct nvml_proc *procs;
	long n;

	if (!nvml_ready())
		return;
	if ((n = nvml_procs(dev, &procs)) >= 0) {
		nv = proc_bytes(procs, n, lc->pid);
		free(procs);
	}
	if ((want = k) != UINT64_MAX)
		;	/* the daemon's own word, not the page's */
	else if ((want = remembered(&a->ledger, lc, dev)) != UINT64_MAX) {
		/*
		 * The page is the client's to write (issue 32): no more than
		 * NVML shows it holding; out to host, where NVML shows
		 * nothing of it, no more than its limit.
		 */
		if (lc->on_host && want > lc->usage[dev].limit)
			want = lc->usage[dev].limit;
		else if (!lc->on_host && nv != UINT64_MAX && want > nv)
			want = nv;
	} else if (nv != UINT64_MAX) {
		want = measured(lc, dev, nv);
		/* Its own word: at worst it undercounts itself a second. */
		if (want != UINT64_MAX)
			want = want > (h = held(lc, dev)) ? want - h : 0;
	}
	if (want != UINT64_MAX)
		(void)record_set(&a->ledger, lc, dev, want);
	/*
	 * The looks leave its record alone until they are charged: once a
	 * connection and device (opened again, the page's word would keep
	 * its context from ever being measured).
	 */
	if (lc->usage[dev].rereg_held == 0 && (h = held(lc, dev)) > 0) {
		lc->usage[dev].rereg_held = h;
		lc->usage[dev].rereg_until = event_now_ms() + OVERHEAD_REREG_MS;
	}
}

void
overhead_fresh(struct arbiter *a, struct ledger_client *lc)
{
	struct nvml_proc *procs;
	uint64_t want;
	size_t dev;
	long n;

	if (!nvml_ready())
		return;
	for (dev = 0; dev < a->ledger.ndevices; dev++) {
		if (!lc->usage[dev].opened || (n = nvml_procs(dev, &procs)) < 0)
			continue;
		want = measured(lc, dev, proc_bytes(procs, n, lc->pid));
		free(procs);
		if (want != UINT64_MAX)
			(void)record_set(&a->ledger, lc, dev, want);
	}
}

void
overhead_init(struct arbiter *a)
{
	uint8_t (*uuids)[GF_UUID_LEN];
	size_t i, n = a->ledger.ndevices;

	if (n == 0 || (uuids = calloc(n, sizeof(*uuids))) == NULL)
		return;
	for (i = 0; i < n; i++)
		memcpy(uuids[i], a->ledger.devices[i].uuid, GF_UUID_LEN);
	if (nvml_open(NVML_LIB, (const uint8_t (*)[GF_UUID_LEN])uuids, n) ==
	    0)
		log_info("context memory measured with NVML at each look, "
		    "with foreign memory and departed processes'");
	free(uuids);
}

void
overhead_free(struct arbiter *a)
{
	(void)a;
	nvml_close();
}
