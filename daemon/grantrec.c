/*
 * Each client's grants recorded as the ledger changes, and an earlier
 * daemon's read back at start (grantrec.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "event.h"
#include "events.h"
#include "granted.h"
#include "grantrec.h"
#include "ledger.h"
#include "log.h"
#include "pidfd.h"
#include "statefile.h"
#include "unshimmed.h"

#define GRANTREC_ALIVE_MS	1000	/* the file says the daemon lives */

/*
 * Whether lc is one whose grants are recorded, known by its start: a
 * shim's, and one judged to hold memory without it (granted nothing,
 * the record says so), unless its lost connection's grants are kept
 * (they are its record). One still in its grace is not judged yet: an
 * honest process may be between two connections. A departing one's
 * are kept (granted_keep), its record with them.
 */
static int
recorded(struct arbiter *a, const struct ledger_client *lc)
{
	if (lc->start_ms == 0 || lc->departing)
		return 0;
	return lc->unshim == NULL || (unshimmed_judged(lc) &&
	    !granted_kept(a, lc->pid, lc->start_ms));
}

static uint32_t
rec_flags(const struct ledger_client *lc)
{
	if (lc->unshim != NULL || lc->refused)
		return GRANT_NOTHING;
	return (lc->regrant_only ? 0 : GRANT_WORD) |
	    (lc->on_host ? GRANT_OUT : 0) |
	    (granted_out_by_copy(lc) ? GRANT_BY_COPY : 0);
}

/* lc's figures into slot (+ 1): its own record, or its kept grants'. */
static void
rec_write(struct arbiter *a, struct ledger_client *lc, uint32_t slot)
{
	struct grants *g = &a->grants;
	struct grant_rec r;
	size_t dev;

	r.flags = rec_flags(lc);
	for (dev = 0; dev < a->ledger.ndevices; dev++) {
		if (r.flags & GRANT_NOTHING) {
			g->granted[dev] = g->lease[dev] = g->context[dev] = 0;
			continue;
		}
		g->granted[dev] = granted_owed(lc, dev);
		g->lease[dev] = lc->usage[dev].lease;
		g->context[dev] = granted_context(lc, dev);
	}
	r.pid = lc->pid;
	r.start_ms = lc->start_ms;
	r.granted = g->granted;
	r.lease = g->lease;
	r.context = g->context;
	grantfile_put(&g->file, slot - 1, &r);
}

void
grantrec_put(struct arbiter *a, struct ledger_client *lc)
{
	struct grants *g = &a->grants;
	uint32_t slot;

	/* Its record is its kept grants' (granted_keep): they follow it. */
	if (lc->departing) {
		granted_follow(a, lc);
		return;
	}
	if (g->file.fd < 0 || !recorded(a, lc))
		return;
	if (lc->grant_slot == 0) {
		if ((slot = grantfile_slot(&g->file)) == UINT32_MAX)
			return;
		lc->grant_slot = slot + 1;
	}
	rec_write(a, lc, lc->grant_slot);
}

void
grantrec_put_kept(struct arbiter *a, struct ledger_client *lc, uint32_t slot)
{
	if (a->grants.file.fd >= 0 && slot != 0)
		rec_write(a, lc, slot);
}

void
grantrec_forget(struct arbiter *a, uint32_t slot)
{
	/* Stopping, the records stay: the processes outlive the daemon. */
	if (slot != 0 && !a->stopping)
		grantfile_release(&a->grants.file, slot - 1);
}

void
grantrec_watch(void *arg, struct ledger_client *lc, int gone)
{
	struct arbiter *a = arg;

	if (!gone) {
		grantrec_put(a, lc);
		return;
	}
	grantrec_forget(a, lc->grant_slot);
	lc->grant_slot = 0;
}

int
grantrec_unrecorded(struct arbiter *a, const struct ledger_client *lc)
{
	const char *why = a->grants.why;

	/*
	 * Its start time is counted in clock ticks: one begun a few ms
	 * after a stop may read as before it.
	 */
	if (a->grants.whole && lc->start_ms + pidfd_start_grain_ms() >
	    a->grants.alive_ms)
		why = "it started when no daemon ran";
	else if (a->grants.whole)
		why = "it never registered with the earlier daemon";
	events_add(&a->events, events_wall_ms(), GF_EV_UNRECORDED, lc->pid,
	    NULL, NULL, 0, "no record of what pid %u was granted (%s): its "
	    "word is weighed as an earlier daemon's client's", lc->pid, why);
	return a->grants.whole;
}

/* Every second: the daemon lives (grantfile_alive). */
static void
alive_tick(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	grantfile_alive(&a->grants.file, pidfd_boot_ms());
	a->grants.alive_timer = event_timer_add(loop, GRANTREC_ALIVE_MS,
	    alive_tick, a);
	if (a->grants.alive_timer < 0)
		a->grants.alive_timer = 0;
}

/* ---- start -------------------------------------------------------------- */

/* A record read: what its process was granted, if it still lives
 * (slot UINT32_MAX, no file: forgetting it is nothing). */
static void
rec_take(struct arbiter *a, const struct grant_rec *r)
{
	if (pidfd_start_ms(r->pid) != r->start_ms || granted_add(a, r) < 0)
		grantrec_forget(a, r->slot + 1);
}

/* Records that could not be read: each said. */
static void
lost_say(struct arbiter *a, const struct grant_read *rd)
{
	size_t i;

	for (i = 0; i < rd->nlost; i++) {
		log_warnx("the grants' record of pid %u is not believed: %s",
		    rd->lost[i].pid, rd->lost[i].why);
		events_add(&a->events, events_wall_ms(), GF_EV_UNRECORDED,
		    rd->lost[i].pid, NULL, NULL, 0, "the record of what pid "
		    "%u was granted is not believed: %s", rd->lost[i].pid,
		    rd->lost[i].why);
	}
	if (rd->nlost > 0)
		snprintf(a->grants.why, sizeof(a->grants.why), "%zu record%s "
		    "of the grants' file not believed", rd->nlost,
		    rd->nlost > 1 ? "s" : "");
}

int
grantrec_start(struct arbiter *a)
{
	struct grants *g = &a->grants;
	size_t i, n = a->ledger.ndevices;
	uint8_t (*uuids)[GF_UUID_LEN], boot[GF_UUID_LEN];
	struct grant_read rd;
	char path[PATH_MAX], err[PATH_MAX + 64];

	g->file.fd = -1;
	g->granted = calloc(n ? n : 1, sizeof(*g->granted));
	g->lease = calloc(n ? n : 1, sizeof(*g->lease));
	g->context = calloc(n ? n : 1, sizeof(*g->context));
	uuids = calloc(n ? n : 1, sizeof(*uuids));
	if (g->granted == NULL || g->lease == NULL || g->context == NULL ||
	    uuids == NULL) {
		free(uuids);
		log_warnx("no memory to read what the earlier daemon granted");
		return -1;
	}
	for (i = 0; i < n; i++)
		memcpy(uuids[i], a->ledger.devices[i].uuid, GF_UUID_LEN);
	if (statefile_path(&a->conf, GRANTS_FILE, path, sizeof(path)) < 0) {
		log_warnx("the state directory's path is too long for '%s': "
		    "grants are not recorded", GRANTS_FILE);
		snprintf(g->why, sizeof(g->why), "no grants' file");
		free(uuids);
		return 0;
	}
	if (pidfd_boot_id(boot) < 0)
		log_warnx("cannot read this boot's identity: what an earlier "
		    "daemon granted is not believed");
	if (grantfile_open(&g->file, path, boot, (const uint8_t (*)[GF_UUID_LEN])
	    uuids, n, &rd, err, sizeof(err)) < 0)
		log_warnx("%s: grants are not recorded", err);
	free(uuids);
	g->whole = rd.whole && rd.nlost == 0;
	g->alive_ms = rd.alive_ms;
	snprintf(g->why, sizeof(g->why), "%s", rd.why);
	/* Said now, whoever connects: the new file has taken its place. */
	if (rd.left && !rd.whole)
		log_warnx("%s: what the earlier daemon granted is not believed",
		    rd.why);
	lost_say(a, &rd);
	for (i = 0; i < rd.nrecs; i++)
		rec_take(a, &rd.recs[i]);
	if (rd.nrecs > 0)
		log_info("read what the earlier daemon granted: %zu records, "
		    "%zu of living processes", rd.nrecs, a->ngranted);
	grant_read_free(&rd);
	a->ledger.watch = grantrec_watch;
	a->ledger.watch_arg = a;
	alive_tick(a->loop, a);
	return 0;
}

void
grantrec_free(struct arbiter *a)
{
	a->ledger.watch = NULL;
	if (a->grants.alive_timer > 0)
		event_timer_cancel(a->loop, a->grants.alive_timer);
	a->grants.alive_timer = 0;
	grantfile_alive(&a->grants.file, pidfd_boot_ms());
	grantfile_close(&a->grants.file);
	free(a->grants.granted);
	free(a->grants.lease);
	free(a->grants.context);
	a->grants.granted = a->grants.lease = a->grants.context = NULL;
}
