/*
 * A restart at a quiet point (issue 40): every client settled, the daemon
 * killed (SIGKILL) and started again. Each live running client's record
 * once it has re-registered (ps: per device what it holds, its lease,
 * host bytes and state, row_same) equals its record before the kill: the
 * new daemon held each to what the old one had granted, read back from
 * its grants' file, and believed all of it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "soak_look.h"

#define RESTART_MS	15000	/* for every shim to re-register */
#define RETRY_US	50000

/*
 * Whose records are compared: a live client of the fleet's, running. One
 * out to host may come back in as it fits, its lease's undrawn part
 * hidden in its host bytes: the quiet point's own checks hold it to its
 * count (grants_restart.sh compares one out, exactly).
 */
static int
compared(const struct soak *s, const struct gf_client *c)
{
	return c->state == GF_STATE_RUNNING &&
	    fleet_find(s, (pid_t)c->pid) >= 0;
}

static const struct gf_client *
row_of(const struct look *l, const struct gf_client *c)
{
	size_t i;

	for (i = 0; i < l->nps; i++)
		if (l->ps[i].pid == c->pid &&
		    memcmp(l->ps[i].uuid, c->uuid, GF_UUID_LEN) == 0)
			return &l->ps[i];
	return NULL;
}

/*
 * Whether a, after the restart, is b: what it holds (used less its
 * lease's undrawn part), its host bytes and state; its lease no larger
 * (an idle one is taken back within seconds, by either daemon:
 * grants_restart.sh compares leases exactly, with lease_idle 1h).
 */
static int
row_same(const struct gf_client *a, const struct gf_client *b)
{
	uint64_t held_a = a->used - a->leased, held_b = b->used - b->leased;

	return a->leased <= b->leased && held_a == held_b &&
	    a->host == b->host && a->state == b->state;
}

/* Whether every row of before is in after, the same; else why not. */
static int
rows_same(const struct soak *s, const struct look *before,
    const struct look *after, char *why, size_t len)
{
	const struct gf_client *b, *a;
	size_t i;

	for (i = 0; i < before->nps; i++) {
		b = &before->ps[i];
		if (!compared(s, b))
			continue;
		if ((a = row_of(after, b)) == NULL) {
			snprintf(why, len, "pid %u: no record after the restart",
			    b->pid);
			return 0;
		}
		if (!row_same(a, b)) {
			snprintf(why, len, "pid %u: used %llu leased %llu host "
			    "%llu state %u before the kill, %llu %llu %llu %u "
			    "after", b->pid, (unsigned long long)b->used,
			    (unsigned long long)b->leased,
			    (unsigned long long)b->host, b->state,
			    (unsigned long long)a->used,
			    (unsigned long long)a->leased,
			    (unsigned long long)a->host, a->state);
			return 0;
		}
	}
	return 1;
}

int
restart_check(struct soak *s)
{
	uint64_t deadline;
	struct look before, after;
	char why[240] = "gpufracd could not be asked";
	int same = 0;

	if (look_take(s, &before) < 0) {
		look_free(&before);
		soak_fail(s, "restart at a quiet point: gpufracd could not be "
		    "asked before the kill");
		return -1;
	}
	daemon_stop(s, SIGKILL);
	s->n.restarts_kill++;
	s->n.restarts_quiet++;
	if (daemon_start(s) < 0) {
		look_free(&before);
		soak_fail(s, "restart at a quiet point: gpufracd did not start");
		return -1;
	}
	deadline = soak_now_ms() + RESTART_MS;
	while (!same && soak_now_ms() < deadline) {
		soak_reap(s);
		fleet_listen(s);
		if (look_take(s, &after) == 0)
			same = rows_same(s, &before, &after, why, sizeof(why));
		look_free(&after);
		if (!same)
			harness_sleep_us(RETRY_US);
	}
	look_free(&before);
	if (!same) {
		s->n.check_failures++;
		soak_fail(s, "restart at a quiet point: a record differs after "
		    "%d ms: %s", RESTART_MS, why);
		return -1;
	}
	return 0;
}
