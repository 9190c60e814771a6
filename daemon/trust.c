/*
 * A client's word where it changes what the others get (trust.h): a
 * charge it asks for without a RESERVE the ledger admitted, bounded by
 * its limits, else by what NVML shows its process holding.
 */
#include <stdio.h>
#include <stdlib.h>

#include "activity.h"
#include "arbiter.h"
#include "decision.h"
#include "gpufrac/activity.h"
#include "gpufrac/proto.h"
#include "event.h"
#include "ledger.h"
#include "nvml.h"
#include "overhead.h"
#include "trust.h"
#include "units.h"

/* NVML's figure is looked at again when older than this. */
#define TRUST_NVML_MS	100

uint64_t
trust_commit_extra(const struct ledger_client *lc, size_t dev,
    const struct gf_commit *cm)
{
	const struct ledger_alloc *old = ptrmap_get(&lc->allocs, cm->ptr);
	uint64_t base, pending = lc->usage[dev].pending;

	/* What it says it had reserved, no more than it has. */
	base = cm->reserved < pending ? cm->reserved : pending;
	/* A record replaced on the same device: its bytes are freed first. */
	if (old != NULL && old->device == dev)
		base = base + old->size < base ? UINT64_MAX : base + old->size;
	return cm->size > base ? cm->size - base : 0;
}

/*
 * What NVML shows lc's process holding on dev, looked at again when the
 * last look is older than TRUST_NVML_MS or when fresh is set; UINT64_MAX
 * when NVML cannot say (none, no list, the process out to host).
 */
static uint64_t
nvml_holding(struct ledger_client *lc, size_t dev, int fresh)
{
	struct ledger_usage *u = &lc->usage[dev];
	struct nvml_proc *procs;
	uint64_t now = event_now_ms();
	long n;

	if (!nvml_ready() || lc->on_host)
		return UINT64_MAX;
	if (u->nvml_ms != 0 && !fresh && now - u->nvml_ms < TRUST_NVML_MS)
		return u->nvml_bytes;
	if ((n = nvml_procs(dev, &procs)) < 0)
		return UINT64_MAX;
	u->nvml_bytes = proc_bytes(procs, n, lc->pid);
	u->nvml_ms = now != 0 ? now : 1;
	free(procs);
	return u->nvml_bytes;
}

/*
 * What lc's allocations on dev hold, as the ledger counts them: its
 * charge less its context record (the daemon's own measure of NVML's
 * figure), its lease (charged ahead, held by the driver only as far as
 * it is drawn) and its reserves not yet committed (the driver may not
 * have them yet).
 */
static uint64_t
allocated(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_usage *u = &lc->usage[dev];
	uint64_t own = add_saturated(add_saturated(overhead_of(lc, dev),
	    u->lease), u->pending);

	return u->used > own ? u->used - own : 0;
}

/* Whether NVML shows lc holding extra more than its allocations on dev. */
static int
nvml_shows(struct ledger_client *lc, size_t dev, uint64_t extra,
    uint64_t *nvml)
{
	uint64_t have = allocated(lc, dev);

	*nvml = nvml_holding(lc, dev, 0);
	if (*nvml != UINT64_MAX && have + extra >= have &&
	    have + extra > *nvml)
		/* It may have allocated since the last look. */
		*nvml = nvml_holding(lc, dev, 1);
	return *nvml != UINT64_MAX && have + extra >= have &&
	    have + extra <= *nvml;
}

static const char *
admit_name(int rc)
{
	switch (rc) {
	case LEDGER_LIMIT:
		return "its limit";
	case LEDGER_GROUP_LIMIT:
		return "its group's limit";
	default:
		return "what the device has free";
	}
}

/* Believed past its limits: said once per connection and device. */
static void
past_limit(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t extra, int rc, const char *what, uint64_t nvml)
{
	char b1[16];

	if (lc->usage[dev].past_said)
		return;
	lc->usage[dev].past_said = 1;
	if (nvml == UINT64_MAX)
		decision_event(a, GF_EV_PAST_LIMIT, lc, (int)dev, extra, "%s "
		    "past %s believed: uid %u is out to host, within its own "
		    "limit", what, admit_name(rc), lc->uid);
	else
		decision_event(a, GF_EV_PAST_LIMIT, lc, (int)dev, extra, "%s "
		    "past %s believed: NVML shows uid %u holding %s", what,
		    admit_name(rc), lc->uid, size_format(nvml, b1,
		    sizeof(b1)));
}

/*
 * What an earlier connection of lc's process was granted on dev covers
 * *extra first, whatever its limits now (a limit lowered meanwhile
 * refuses its next allocations, as `gpufracctl limit` does). Returns
 * what is left uncovered.
 */
static uint64_t
regrant(struct ledger_client *lc, size_t dev, uint64_t *extra)
{
	uint64_t *g = &lc->usage[dev].granted;
	uint64_t covered = *extra < *g ? *extra : *g;

	*g -= covered;
	*extra -= covered;
	return *extra;
}

int
trust_charge(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t extra, const char *what, char *why, size_t whylen)
{
	struct ledger *l = &a->ledger;
	uint64_t nvml = UINT64_MAX;
	char b1[16], b2[16];
	int rc;

	if (regrant(lc, dev, &extra) == 0)
		return 0;
	if (lc->regrant_only) {
		snprintf(why, whylen, "%s of %s past what it was granted",
		    what, size_format(extra, b1, sizeof(b1)));
		trust_refuse(a, lc, dev, extra, why);
		return -1;
	}
	rc = ledger_admit(l, lc, dev, extra);
	if (rc == LEDGER_GRANT)
		return 0;
	if (nvml_shows(lc, dev, extra, &nvml)) {
		if (rc != LEDGER_COLLISION)
			past_limit(a, lc, dev, extra, rc, what, nvml);
		return 0;
	}
	/*
	 * Where NVML cannot say, its limits bound its word: within them, a
	 * full device is no reason to doubt what it holds.
	 */
	if (nvml == UINT64_MAX && rc == LEDGER_COLLISION &&
	    ledger_holdable(l, lc, dev, extra))
		return 0;
	/*
	 * Out to host, it holds nothing on the device, and NVML shows
	 * nothing of what it holds there: its own limit bounds its word.
	 * Past its group's (its group-mates registered first, a limit
	 * lowered while the daemon was away), it is said, and the group's
	 * others are held to the limit until it is under it again;
	 * refused, a process swapped out would be refused at every
	 * reconnection, never to come back (trust_out.sh).
	 */
	if (lc->on_host && rc == LEDGER_GROUP_LIMIT) {
		past_limit(a, lc, dev, extra, rc, what, UINT64_MAX);
		return 0;
	}
	if (nvml == UINT64_MAX)
		snprintf(why, whylen, "%s of %s past %s", what,
		    size_format(extra, b1, sizeof(b1)), admit_name(rc));
	else
		snprintf(why, whylen, "%s of %s past %s, more than NVML shows "
		    "it holding (%s)", what,
		    size_format(extra, b1, sizeof(b1)), admit_name(rc),
		    size_format(nvml, b2, sizeof(b2)));
	trust_refuse(a, lc, dev, extra, why);
	return -1;
}

void
trust_refuse(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t bytes, const char *why)
{
	lc->refused = 1;
	decision_event(a, GF_EV_REFUSED, lc, (int)dev, bytes, "refused pid %u "
	    "(uid %u): %s; connection closed", lc->pid, lc->uid, why);
}

int
trust_lease(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t size, char *why, size_t whylen)
{
	const struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t rest = size, unused = 0, drawn;
	int rc;

	/*
	 * What its process was granted covers it first, so that nothing
	 * re-registered after it finds that grant still there: within it,
	 * the lease is believed, and lent again as it was where its limits
	 * still allow (an earlier daemon's record holds its lease whole;
	 * a device the others filled as they re-registered first is no
	 * reason); past them, lowered meanwhile, what it has not drawn
	 * comes back, as `gpufracctl limit` refuses its next allocations.
	 */
	if (regrant(lc, dev, &rest) == 0) {
		rc = ledger_admit(&a->ledger, lc, dev, size);
		return rc == LEDGER_GRANT || rc == LEDGER_COLLISION;
	}
	/* The page is its to write: no more than the lease is undrawn. */
	if (s != NULL)
		unused = __atomic_load_n(&s->avail, __ATOMIC_SEQ_CST) &
		    ~GF_LEASE_CLOSED;
	if (unused > size)
		unused = size;
	/*
	 * Past it, what it has not drawn is lent again within its limits,
	 * a grant made now; what it has drawn, of a process of this
	 * daemon's time, never.
	 */
	if ((!lc->regrant_only || rest <= unused) &&
	    ledger_admit(&a->ledger, lc, dev, rest) == LEDGER_GRANT)
		return 1;
	/*
	 * Past its limits (a limit lowered while the daemon was away, its
	 * group's others registered first) or its grant: what it has not
	 * drawn is not lent again; what it has drawn beyond the grant is
	 * believed as a COMMIT is.
	 */
	drawn = size - unused;
	drawn = drawn > size - rest ? drawn - (size - rest) : 0;
	if (trust_charge(a, lc, dev, drawn, "LEASE_RESTORE", why,
	    whylen) < 0)
		return -1;
	return 0;
}
