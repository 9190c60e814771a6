/*
 * What the soak prints at its end: a table with a row per check (at a
 * quiet point: settled, some swapped out, back in; at the end: all
 * gone), a table of what happened, and as the last line one JSON
 * object: clients, ops, kills, restarts (restarts_quiet of them at quiet
 * points, the records compared), reloads, swaps, lost_bytes,
 * ledger_vs_driver_bytes, daemon_crashes, then the rest (the honest
 * soak's counts of the daemon's decisions are 0 in a chaos soak, which
 * does not follow them).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl_table.h"
#include "soak.h"
#include "units.h"

static const char *const kind_names[SOAK_KINDS] = {
	[SOAK_MEM] = "mem", [SOAK_PITCH] = "pitch", [SOAK_MANAGED] = "managed",
	[SOAK_POOL] = "pool", [SOAK_VMM] = "vmm", [SOAK_ARRAY] = "array",
	[SOAK_IPC] = "ipc", [SOAK_GRAPH] = "graph",
};

static void
points_print(const struct soak *s)
{
	static const struct ctl_column cols[] = {
		{ "AT", 1 }, { "CHECK", 0 }, { "CLIENTS", 1 }, { "SWAPPED", 1 },
		{ "USED", 1 }, { "LEASED", 1 }, { "HOST", 1 }, { "DRIVER", 1 },
		{ "LOST", 1 }, { "VS DRIVER", 1 }, { "LOOKS", 1 },
		{ "RESULT", 0 },
	};
	char c[12][32];
	const char *cells[12];
	const struct soak_point *p;
	struct ctl_table t;
	size_t i;
	int k;

	ctl_table_init(&t, cols, 12);
	for (i = 0; i < s->npoints; i++) {
		p = &s->points[i];
		snprintf(c[0], sizeof(c[0]), "%.1fs", (double)p->at_ms / 1000);
		snprintf(c[1], sizeof(c[1]), "%s", p->what ? p->what : "");
		snprintf(c[2], sizeof(c[2]), "%u", p->clients);
		snprintf(c[3], sizeof(c[3]), "%u", p->swapped);
		size_format(p->used, c[4], sizeof(c[4]));
		size_format(p->leased, c[5], sizeof(c[5]));
		size_format(p->host, c[6], sizeof(c[6]));
		size_format(p->driver, c[7], sizeof(c[7]));
		snprintf(c[8], sizeof(c[8]), "%" PRIu64, p->lost);
		snprintf(c[9], sizeof(c[9]), "%" PRIu64, p->vs_driver);
		snprintf(c[10], sizeof(c[10]), "%u", p->attempts);
		snprintf(c[11], sizeof(c[11]), "%s", p->ok ? "ok" : "FAIL");
		for (k = 0; k < 12; k++)
			cells[k] = c[k];
		ctl_table_add(&t, cells, 12);
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	if (s->points_dropped > 0)
		printf("(and %zu checks more)\n", s->points_dropped);
}

static void
row(struct ctl_table *t, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
row(struct ctl_table *t, const char *what, const char *fmt, ...)
{
	char v[160];
	const char *cells[2] = { what, v };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	ctl_table_add(t, cells, 2);
}

static void
counts_print(const struct soak *s)
{
	static const struct ctl_column cols[] = { { "WHAT", 0 }, { "", 0 } };
	const struct soak_counts *n = &s->n;
	char kinds[160];
	size_t len = 0;
	struct ctl_table t;
	int k;

	for (k = 0; k < SOAK_KINDS; k++)
		len += (size_t)snprintf(kinds + len, sizeof(kinds) - len,
		    "%s%s %" PRIu64, k ? ", " : "", kind_names[k],
		    n->kind_ops[k]);
	ctl_table_init(&t, cols, 2);
	row(&t, "client processes", "%" PRIu64 " (%u at a time)", n->spawned,
	    s->nclients);
	row(&t, "allocations and frees", "%" PRIu64 " (%s)", n->ops, kinds);
	row(&t, "refused", "%" PRIu64 " (out of memory)", n->denied);
	row(&t, "waited 100 ms or more", "%" PRIu64 ", the longest %" PRIu64
	    " ms (a waiter may wait %u ms)", n->waits, n->wait_max_ms,
	    s->wait_bound_ms);
	row(&t, "stuck", "%" PRIu64 " waiters, %" PRIu64 " clients", n->stuck,
	    n->stuck_clients);
	row(&t, "calls that found it swapped", "%" PRIu64, n->swapped_calls);
	row(&t, "clients killed", "%" PRIu64 " by the soak, %" PRIu64
	    " by gpufracd (reclaim)", n->kills, n->died_by_daemon);
	row(&t, "daemon restarts", "%" PRIu64 " SIGTERM, %" PRIu64 " SIGKILL "
	    "(%" PRIu64 " at quiet points, records compared)",
	    n->restarts_term, n->restarts_kill, n->restarts_quiet);
	row(&t, "reloads", "%" PRIu64 " SIGHUP, %" PRIu64 " gpufracctl (%"
	    PRIu64 " not done)", n->reloads_hup, n->reloads_ctl,
	    n->reloads_refused);
	row(&t, "swaps", "%" PRIu64 " out, %" PRIu64 " in (%" PRIu64
	    " refused)", n->swaps_out, n->swaps_in, n->swaps_refused);
	row(&t, "quiet points", "%" PRIu64 " (%" PRIu64 " failed)",
	    n->quiet_points, n->check_failures);
	row(&t, "daemon crashes", "%" PRIu64, n->daemon_crashes);
	row(&t, "client errors", "%" PRIu64 " failed calls, %" PRIu64
	    " data read back wrong, %" PRIu64 " crashes", n->errors,
	    n->corrupt, n->client_crashes);
	row(&t, "ledger warnings", "%" PRIu64, n->ledger_warnings);
	if (s->honest)
		row(&t, "gpufracd's decisions", "%" PRIu64 " denied, %" PRIu64
		    " refused, %" PRIu64 " past a limit, %" PRIu64
		    " driver out-of-memory, %" PRIu64 " connections closed",
		    n->daemon_denies, n->refusals, n->past_limits,
		    n->driver_ooms, n->disconnections);
	row(&t, "sanitizer reports", "%" PRIu64, n->san_reports);
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

void
report_print(const struct soak *s, uint64_t wall_ms)
{
	const struct soak_counts *n = &s->n;

	printf("\nsoak: seed %" PRIu64 ", %u s of %s in %.1f s\n\n", s->seed,
	    s->seconds, s->honest ? "honest work" : "chaos",
	    (double)wall_ms / 1000);
	points_print(s);
	putchar('\n');
	counts_print(s);
	printf("\nsoak: %s\n", s->failures ? "FAILED" : "ok");
	printf("{\"clients\":%u,\"ops\":%" PRIu64 ",\"kills\":%" PRIu64
	    ",\"restarts\":%" PRIu64 ",\"restarts_quiet\":%" PRIu64
	    ",\"reloads\":%" PRIu64 ",\"swaps\":%"
	    PRIu64 ",\"lost_bytes\":%" PRIu64 ",\"ledger_vs_driver_bytes\":%"
	    PRIu64 ",\"daemon_crashes\":%" PRIu64 ",\"seed\":%" PRIu64
	    ",\"seconds\":%u,\"processes\":%" PRIu64 ",\"stuck_waiters\":%"
	    PRIu64 ",\"quiet_points\":%" PRIu64 ",\"sanitizer_reports\":%"
	    PRIu64 ",\"mode\":\"%s\",\"denied\":%" PRIu64
	    ",\"ledger_denied\":%" PRIu64 ",\"refusals\":%" PRIu64
	    ",\"past_limit\":%" PRIu64 ",\"driver_oom\":%" PRIu64
	    ",\"disconnections\":%" PRIu64 ",\"failures\":%u}\n",
	    s->nclients, n->ops, n->kills,
	    n->restarts_term + n->restarts_kill, n->restarts_quiet,
	    n->reloads_hup +
	    n->reloads_ctl, n->swaps_out + n->swaps_in, n->lost_bytes,
	    n->ledger_vs_driver, n->daemon_crashes, s->seed, s->seconds,
	    n->spawned, n->stuck, n->quiet_points, n->san_reports,
	    s->honest ? "honest" : "chaos", n->denied, n->daemon_denies,
	    n->refusals, n->past_limits, n->driver_ooms, n->disconnections,
	    s->failures);
	fflush(stdout);
}
