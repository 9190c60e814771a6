/*
 * What the daemon granted each process whose connection it lost, kept
 * while the process lives for its next connection to be held to
 * (granted.h).
 */
#include <stdlib.h>
#include <unistd.h>

#include "arbiter.h"
#include "granted.h"
#include "ledger.h"
#include "log.h"
#include "overhead.h"
#include "pidfd.h"

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
	free(g->bytes);
	*g = a->granted[--a->ngranted];
}

/*
 * What lc holds on dev by grant: all of its charge but its context (its
 * whole lease: the process draws from it while it is away), and what an
 * earlier connection was granted that lc has not re-registered yet (lost
 * again while it registers, its grant is still whole).
 */
static uint64_t
grant_of(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_usage *u = &lc->usage[dev];
	uint64_t all = u->used + u->host, ctx = overhead_of(lc, dev);

	if (all < u->used)
		all = UINT64_MAX;
	all = all > ctx ? all - ctx : 0;
	return all + u->granted < all ? UINT64_MAX : all + u->granted;
}

void
granted_keep(struct arbiter *a, const struct ledger_client *lc,
    uint64_t start_ms)
{
	struct granted *g, *v;
	size_t dev, n = a->ledger.ndevices;
	uint64_t *bytes;

	if (start_ms == 0)
		return;		/* it cannot be known again */
	if (lc->refused) {
		/* Its word was refused: its memory is an unshimmed one's. */
		if ((g = granted_find(a, lc->pid, start_ms)) != NULL)
			granted_drop(a, g);
		return;
	}
	if ((bytes = calloc(n, sizeof(*bytes))) == NULL) {
		log_warnx("no memory to keep what pid %u was granted: its "
		    "re-registration will be refused", lc->pid);
		return;
	}
	for (dev = 0; dev < n; dev++)
		bytes[dev] = grant_of(lc, dev);
	if ((g = granted_find(a, lc->pid, start_ms)) != NULL) {
		free(g->bytes);
		g->bytes = bytes;
		g->regrant_only = lc->regrant_only;
		return;
	}
	if ((v = realloc(a->granted, (a->ngranted + 1) * sizeof(*v))) ==
	    NULL) {
		log_warnx("no memory to keep what pid %u was granted: its "
		    "re-registration will be refused", lc->pid);
		free(bytes);
		return;
	}
	a->granted = v;
	a->granted[a->ngranted++] = (struct granted){ lc->pid, start_ms,
	    bytes, lc->regrant_only };
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
		for (dev = 0; dev < a->ledger.ndevices; dev++)
			lc->usage[dev].granted = g->bytes[dev];
		lc->regrant_only = g->regrant_only;
		granted_drop(a, g);
		return;
	}
	/* An earlier daemon's client: nothing here says what it had. */
	lc->regrant_only = start_ms == 0 || self_ms == 0 ||
	    start_ms >= self_ms;
}

int
granted_holds(struct arbiter *a, const struct ledger_client *lc, size_t dev,
    uint64_t bytes)
{
	const struct granted *g;
	uint64_t ctx = overhead_of(lc, dev);

	if (lc->start_ms == 0 ||
	    (g = granted_find(a, lc->pid, lc->start_ms)) == NULL)
		return 0;
	return bytes <= g->bytes[dev] || bytes - g->bytes[dev] <= ctx;
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
