/*
 * Counters and the wait histogram as text. Every family is written, with
 * its HELP and TYPE, even before its first sample, so that a dashboard
 * finds each name from the start.
 */
#include <stddef.h>
#include <stdint.h>

#include "metrics_counts.h"
#include "metrics_render_counts.h"
#include "metrics_text.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* A kind of decision: its count and, where it moves memory, its bytes. */
static const struct {
	uint32_t	 kind;
	const char	*name;
	const char	*help;
	const char	*bytes_name;	/* NULL: none */
	const char	*bytes_help;
} event_counters[] = {
	{ GF_EV_GRANT, "gpufrac_grants_total",
	  "Requests the daemon granted at once.",
	  "gpufrac_granted_bytes_total", "Bytes granted at once." },
	{ GF_EV_DENY, "gpufrac_denies_total",
	  "Requests refused at once (CUDA_ERROR_OUT_OF_MEMORY).",
	  "gpufrac_denied_bytes_total", "Bytes refused at once." },
	{ GF_EV_WAIT, "gpufrac_waits_total",
	  "Requests queued to wait for memory.", NULL, NULL },
	{ GF_EV_WAKE, "gpufrac_wakes_total",
	  "Waiting requests granted when memory came back.", NULL, NULL },
	{ GF_EV_TIMEOUT, "gpufrac_wait_timeouts_total",
	  "Waiting requests refused when their wait_timeout passed.",
	  NULL, NULL },
	{ GF_EV_PREEMPT, "gpufrac_preemptions_total",
	  "Processes of the group preempted (SIGTERM, or swapped out).",
	  "gpufrac_preempted_bytes_total",
	  "Device memory the preempted processes held." },
	{ GF_EV_KILL, "gpufrac_kills_total",
	  "Preempted processes of the group sent SIGKILL after kill_grace.",
	  NULL, NULL },
	{ GF_EV_SWAP_SKIP, "gpufrac_swap_skips_total",
	  "Processes of the group a swap passed over, and why (events).",
	  NULL, NULL },
	{ GF_EV_FALLBACK, "gpufrac_swap_fallbacks_total",
	  "Swaps that could not be done: waited or killed instead.",
	  NULL, NULL },
	{ GF_EV_LEND, "gpufrac_lends_total",
	  "Grants that borrowed other groups' unused guarantees.",
	  "gpufrac_lent_bytes_total",
	  "Bytes the group borrowed from unused guarantees." },
	{ GF_EV_RECLAIM, "gpufrac_reclaims_total",
	  "Times the group took its lent guarantee back.",
	  "gpufrac_reclaimed_bytes_total", "Bytes taken back." },
	{ GF_EV_RELEASED, "gpufrac_releases_total",
	  "Departed processes whose memory the driver gave back.",
	  "gpufrac_released_bytes_total",
	  "Bytes the driver gave back after they departed." },
	{ GF_EV_DRIVER_KEPT, "gpufrac_driver_kept_total",
	  "Departed processes whose memory the driver had not given back "
	  "within release_timeout.", "gpufrac_driver_kept_bytes_total",
	  "Bytes uncharged all the same." },
	{ GF_EV_DRIVER_OOM, "gpufrac_driver_oom_total",
	  "Granted requests the driver refused, resolved as collisions.",
	  "gpufrac_driver_oom_bytes_total", "Bytes the driver refused." },
	{ GF_EV_CTX_END, "gpufrac_context_ends_total",
	  "Contexts destroyed or reset with allocations still in them.",
	  "gpufrac_context_end_bytes_total",
	  "Bytes their ends gave back." },
	{ GF_EV_REFUSED, "gpufrac_refusals_total",
	  "Clients' words refused (a charge past their limits that NVML "
	  "does not show them holding): their connections closed.",
	  "gpufrac_refused_bytes_total", "Bytes they asked to be charged." },
	{ GF_EV_PAST_LIMIT, "gpufrac_past_limit_total",
	  "Charges believed past a client's limits because NVML shows it "
	  "holding them (a re-registration after a limit was lowered).",
	  NULL, NULL },
	{ GF_EV_UNSHIMMED, "gpufrac_unshimmed_total",
	  "Processes first seen holding device memory without the shim.",
	  "gpufrac_unshimmed_seen_bytes_total",
	  "Bytes they held when first seen." },
	{ GF_EV_UNSHIMMED_KILL, "gpufrac_unshimmed_kills_total",
	  "Processes without the shim killed for passing their limits.",
	  "gpufrac_unshimmed_kill_bytes_total", "Bytes they held." },
	{ GF_EV_REGROUPED, "gpufrac_regrouped_total",
	  "Processes moved to another group, their uid, gid or cgroup "
	  "having changed.",
	  "gpufrac_regrouped_bytes_total", "Bytes they took with them." },
	{ GF_EV_UNRECORDED, "gpufrac_unrecorded_total",
	  "Processes an earlier daemon's record of whose grants was not "
	  "believed (torn, changed, another layout).", NULL, NULL },
};

/* What a counter of a row reads. */
enum { COUNT_EVENTS, COUNT_BYTES, COUNT_MS };

static uint64_t
row_value(const struct metrics_group_counts *g, uint32_t kind, int what)
{
	switch (what) {
	case COUNT_EVENTS:
		return g->events[kind];
	case COUNT_BYTES:
		return g->bytes[kind];
	default:
		return g->duration_ms[kind];
	}
}

/* One family per group row: name{group} of kind. */
static void
per_group(struct metrics_text *t, const struct metrics_counts *mc,
    const char *name, const char *help, uint32_t kind, int what)
{
	struct metrics_label lb;
	size_t i;

	metrics_text_family(t, name, "counter", help);
	for (i = 0; i < mc->ngroups; i++) {
		lb = (struct metrics_label){ "group", mc->groups[i].name };
		metrics_text_u64(t, name, &lb, 1,
		    row_value(&mc->groups[i], kind, what));
	}
}

/* The swaps, by direction: out and in are one family each time. */
static void
swaps(struct metrics_text *t, const struct metrics_counts *mc,
    const char *name, const char *help, int what)
{
	static const struct {
		uint32_t	 kind;
		const char	*dir;
	} dirs[] = { { GF_EV_SWAP_OUT, "out" }, { GF_EV_SWAP_IN, "in" } };
	struct metrics_label lb[2];
	uint64_t v;
	size_t i, j;

	metrics_text_family(t, name, "counter", help);
	for (i = 0; i < mc->ngroups; i++)
		for (j = 0; j < NITEMS(dirs); j++) {
			lb[0] = (struct metrics_label){ "group",
			    mc->groups[i].name };
			lb[1] = (struct metrics_label){ "direction",
			    dirs[j].dir };
			v = row_value(&mc->groups[i], dirs[j].kind, what);
			if (what == COUNT_MS)
				metrics_text_ms(t, name, lb, 2, v);
			else
				metrics_text_u64(t, name, lb, 2, v);
		}
}

static void
wait_histogram(struct metrics_text *t, const struct metrics_counts *mc)
{
	struct metrics_label lb[2];
	char le[32];
	size_t i, b;

	metrics_text_family(t, "gpufrac_wait_seconds", "histogram",
	    "How long requests waited for memory, to a wake-up or timeout.");
	for (i = 0; i < mc->ngroups; i++) {
		const struct metrics_group_counts *g = &mc->groups[i];

		lb[0] = (struct metrics_label){ "group", g->name };
		lb[1] = (struct metrics_label){ "le", le };
		for (b = 0; b < METRICS_WAIT_BUCKETS; b++) {
			metrics_seconds_format(metrics_wait_bounds_ms[b], le,
			    sizeof(le));
			metrics_text_u64(t, "gpufrac_wait_seconds_bucket", lb,
			    2, g->wait_le[b]);
		}
		lb[1].value = "+Inf";
		metrics_text_u64(t, "gpufrac_wait_seconds_bucket", lb, 2,
		    g->wait_count);
		metrics_text_ms(t, "gpufrac_wait_seconds_sum", lb, 1,
		    g->wait_sum_ms);
		metrics_text_u64(t, "gpufrac_wait_seconds_count", lb, 1,
		    g->wait_count);
	}
}

/* The counts that are no events. */
static void
daemon_counts(struct metrics_text *t, const struct metrics_counts *mc)
{
	struct metrics_label lb;

	metrics_text_family(t, "gpufrac_events_total", "counter",
	    "Decisions logged (gpufracctl events).");
	metrics_text_u64(t, "gpufrac_events_total", NULL, 0, mc->events);
	metrics_text_family(t, "gpufrac_connections_total", "counter",
	    "Connections accepted on the control socket.");
	metrics_text_u64(t, "gpufrac_connections_total", NULL, 0,
	    mc->connections);
	metrics_text_family(t, "gpufrac_protocol_errors_total", "counter",
	    "Connections closed for a bad or unexpected message, or a "
	    "failed send or receive.");
	metrics_text_u64(t, "gpufrac_protocol_errors_total", NULL, 0,
	    mc->protocol_errors);
	metrics_text_family(t, "gpufrac_connections_refused_total", "counter",
	    "Connections refused or closed for a limit.");
	lb = (struct metrics_label){ "limit", "max_connections_per_uid" };
	metrics_text_u64(t, "gpufrac_connections_refused_total", &lb, 1,
	    mc->conns_refused);
	lb = (struct metrics_label){ "limit", "output_queue_limit" };
	metrics_text_u64(t, "gpufrac_connections_refused_total", &lb, 1,
	    mc->conns_dropped);
	metrics_text_family(t, "gpufrac_moved_ignored_total", "counter",
	    "MOVED messages that answered no move the daemon asked for "
	    "(issue 32): ignored.");
	metrics_text_u64(t, "gpufrac_moved_ignored_total", NULL, 0,
	    mc->moved_ignored);
	metrics_text_family(t, "gpufrac_output_queued_bytes", "gauge",
	    "Replies queued for connections that have not read them yet, "
	    "and long replies under way (output_queue_limit).");
	metrics_text_u64(t, "gpufrac_output_queued_bytes", NULL, 0,
	    mc->outq_bytes);
	metrics_text_family(t, "gpufrac_reloads_total", "counter",
	    "Configuration reloads, applied or refused (the old one kept).");
	lb = (struct metrics_label){ "result", "applied" };
	metrics_text_u64(t, "gpufrac_reloads_total", &lb, 1, mc->reloads);
	lb = (struct metrics_label){ "result", "refused" };
	metrics_text_u64(t, "gpufrac_reloads_total", &lb, 1,
	    mc->reload_failures);
	metrics_text_family(t, "gpufrac_config_last_reload_successful",
	    "gauge", "0 if the last reload was refused, else 1.");
	metrics_text_u64(t, "gpufrac_config_last_reload_successful", NULL, 0,
	    !mc->reload_failed);
}

void
metrics_render_counts(struct metrics_text *t, const struct metrics_counts *mc)
{
	size_t i;

	daemon_counts(t, mc);
	for (i = 0; i < NITEMS(event_counters); i++) {
		per_group(t, mc, event_counters[i].name,
		    event_counters[i].help, event_counters[i].kind,
		    COUNT_EVENTS);
		if (event_counters[i].bytes_name != NULL)
			per_group(t, mc, event_counters[i].bytes_name,
			    event_counters[i].bytes_help,
			    event_counters[i].kind, COUNT_BYTES);
	}
	swaps(t, mc, "gpufrac_swaps_total",
	    "Processes swapped out to host memory, or back in.", COUNT_EVENTS);
	swaps(t, mc, "gpufrac_swapped_bytes_total",
	    "Bytes moved to host memory, or back.", COUNT_BYTES);
	swaps(t, mc, "gpufrac_swap_seconds_total",
	    "Time the swaps took.", COUNT_MS);
	wait_histogram(t, mc);
}
