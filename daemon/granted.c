/*
 * What the daemon granted each process whose connection it lost, kept
 * while the process lives for its next connection to be held to
 * (granted.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arbiter.h"
#include "granted.h"
#include "grantfile.h"
#include "grantrec.h"
#include "ledger.h"
#include "log.h"
#include "overhead.h"
#include "pidfd.h"
#include "swap.h"

static struct granted *
granted_find(struct arbiter *a, uint32_t pid, uint64_t start_ms)
{
	size_t i;

	for (i = 0; i < a->ngranted; i++)
		if (a->granted[i].pid == pid &&
		    a->granted[i].start_ms == start_ms)
			return &a->granted[i];
	return NULL;
}

static void
granted_drop(struct arbiter *a, struct granted *g)
{
	grantrec_forget(a, g->slot);
	free(g->bytes);
	*g = a->granted[--a->ngranted];
}

/*
 * What lc holds on dev by grant: all of its charge but its context (its
 * whole lease: the process draws from it while it is away), and what an
 * earlier connection was granted that lc has not re-registered yet (lost
 * again while it registers, its grant is still whole).
 */
uint64_t
granted_owed(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_usage *u = &lc->usage[dev];
	uint64_t all = u->used + u->host, ctx = overhead_of(lc, dev);

	if (all < u->used)
		all = UINT64_MAX;
	all = all > ctx ? all - ctx : 0;
	return all + u->granted < all ? UINT64_MAX : all + u->granted;
}

int
granted_out_by_copy(const struct ledger_client *lc)
{
	return lc->page_out || lc->taken_in || (lc->swap != SWAP_NONE &&
	    lc->swap_engine == GF_ENGINE_COPY);
}

static int
granted_push(struct arbiter *a, struct granted g)
{
	struct granted *v;

	if ((v = realloc(a->granted, (a->ngranted + 1) * sizeof(*v))) ==
	    NULL)
		return -1;
	a->granted = v;
	a->granted[a->ngranted++] = g;
	return 0;
}

uint64_t
granted_context(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_usage *u = &lc->usage[dev];

	if (u->context_known & GRANT_CONTEXT_KNOWN)
		return u->context_known;
	return u->opened ? overhead_of(lc, dev) | GRANT_CONTEXT_KNOWN : 0;
}

/* Per device n grants then n contexts, in one block (g->bytes). */
static uint64_t *
granted_block(size_t n)
{
	return calloc(n ? 2 * n : 1, sizeof(uint64_t));
}

/*
 * lc's record in the grants' file becomes g's: what a daemon killed now
 * leaves is what this one keeps (lc, departing, is recorded no more).
 */
static void
granted_slot_take(struct arbiter *a, struct granted *g,
    struct ledger_client *lc)
{
	grantrec_put(a, lc);	/* its last word, g's figures */
	if (lc->grant_slot == 0)
		return;
	grantrec_forget(a, g->slot);
	g->slot = lc->grant_slot;
	lc->grant_slot = 0;
}

/* g's figures become lc's: what it holds by grant, and where. */
static void
granted_fill(struct arbiter *a, struct granted *g,
    const struct ledger_client *lc)
{
	size_t dev;

	for (dev = 0; dev < a->ledger.ndevices; dev++) {
		g->bytes[dev] = granted_owed(lc, dev);
		g->context[dev] = granted_context(lc, dev);
	}
	g->regrant_only = lc->regrant_only;
	g->out_by_copy = granted_out_by_copy(lc);
}

void
granted_keep(struct arbiter *a, struct ledger_client *lc, uint64_t start_ms)
{
	struct granted *g;
	size_t n = a->ledger.ndevices;
	uint64_t *bytes;

	if (start_ms == 0)
		return;		/* it cannot be known again */
	if (lc->refused) {
		/*
		 * Its word was refused: its memory is an unshimmed one's. It
		 * was granted nothing, to its next connection and to the next
		 * daemon too (its record says so: one with no record would be
		 * weighed, granted.h).
		 */
		if ((g = granted_find(a, lc->pid, start_ms)) != NULL)
			granted_drop(a, g);
		if ((bytes = granted_block(n)) == NULL ||
		    granted_push(a, (struct granted){ lc->pid, start_ms, bytes,
		    bytes + n, 1, 0, 0, 1 }) < 0) {
			free(bytes);
			grantrec_forget(a, lc->grant_slot);
			lc->grant_slot = 0;
			return;
		}
		granted_slot_take(a, &a->granted[a->ngranted - 1], lc);
		return;
	}
	if ((bytes = granted_block(n)) == NULL) {
		log_warnx("no memory to keep what pid %u was granted: its "
		    "re-registration will be refused", lc->pid);
		return;
	}
	if ((g = granted_find(a, lc->pid, start_ms)) != NULL) {
		free(g->bytes);
		g->bytes = bytes;
		g->context = bytes + n;
	} else if (granted_push(a, (struct granted){ lc->pid, start_ms, bytes,
	    bytes + n, 0, 0, 0, 0 }) < 0) {
		log_warnx("no memory to keep what pid %u was granted: its "
		    "re-registration will be refused", lc->pid);
		free(bytes);
		return;
	} else
		g = &a->granted[a->ngranted - 1];
	granted_fill(a, g, lc);
	granted_slot_take(a, g, lc);
}

void
granted_follow(struct arbiter *a, struct ledger_client *lc)
{
	struct granted *g;

	/* Without the shim, it holds what NVML shows, not what it was granted. */
	if (lc->start_ms == 0 || lc->unshim != NULL || (g = granted_find(a,
	    lc->pid, lc->start_ms)) == NULL || g->nothing)
		return;
	granted_fill(a, g, lc);
	grantrec_put_kept(a, lc, g->slot);
}

int
granted_add(struct arbiter *a, const struct grant_rec *r)
{
	size_t n = a->ledger.ndevices;
	uint64_t *bytes;

	if ((bytes = granted_block(n)) == NULL)
		return -1;
	memcpy(bytes, r->granted, n * sizeof(*bytes));
	memcpy(bytes + n, r->context, n * sizeof(*bytes));
	if (granted_push(a, (struct granted){ r->pid, r->start_ms, bytes,
	    bytes + n, !(r->flags & GRANT_WORD), (r->flags & GRANT_BY_COPY) != 0,
	    r->slot + 1, (r->flags & GRANT_NOTHING) != 0 }) < 0) {
		free(bytes);
		return -1;
	}
	return 0;
}

void
granted_take(struct arbiter *a, struct ledger_client *lc, uint64_t start_ms)
{
	static uint64_t self_ms;
	struct granted *g;
	size_t dev;

	if (self_ms == 0)
		self_ms = pidfd_start_ms((uint32_t)getpid());
	if (start_ms != 0 && (g = granted_find(a, lc->pid, start_ms)) !=
	    NULL) {
		for (dev = 0; dev < a->ledger.ndevices; dev++) {
			lc->usage[dev].granted = g->bytes[dev];
			lc->usage[dev].context_known = g->context[dev];
		}
		lc->regrant_only = g->regrant_only;
		lc->page_out = g->out_by_copy;
		/* Its record is this connection's now, written below. */
		lc->grant_slot = g->slot;
		g->slot = 0;
		granted_drop(a, g);
		grantrec_put(a, lc);
		return;
	}
	/*
	 * Older than this daemon, without a record: it never asked the
	 * earlier daemon for anything (granted.h), and its word is weighed;
	 * its page too, if the records could not be read.
	 */
	lc->regrant_only = start_ms == 0 || self_ms == 0 ||
	    start_ms >= self_ms;
	lc->page_out = !lc->regrant_only && !grantrec_unrecorded(a, lc);
}

int
granted_holds(struct arbiter *a, const struct ledger_client *lc, size_t dev,
    uint64_t bytes)
{
	const struct granted *g;
	uint64_t ctx = overhead_of(lc, dev);

	if (lc->start_ms == 0 ||
	    (g = granted_find(a, lc->pid, lc->start_ms)) == NULL ||
	    g->nothing)
		return 0;
	return bytes <= g->bytes[dev] || bytes - g->bytes[dev] <= ctx;
}

int
granted_kept(struct arbiter *a, uint32_t pid, uint64_t start_ms)
{
	return granted_find(a, pid, start_ms) != NULL;
}

void
granted_prune(struct arbiter *a)
{
	size_t i = 0;

	while (i < a->ngranted)
		if (pidfd_start_ms(a->granted[i].pid) !=
		    a->granted[i].start_ms)
			granted_drop(a, &a->granted[i]);
		else
			i++;
}

void
granted_free(struct arbiter *a)
{
	while (a->ngranted > 0)
		granted_drop(a, &a->granted[0]);
	free(a->granted);
	a->granted = NULL;
}
