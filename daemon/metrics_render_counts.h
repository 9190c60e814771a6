/*
 * The counters (metrics_counts.h) in Prometheus's text format: the daemon's
 * own (connections, protocol errors, reloads) and, per group, one counter
 * per kind of decision, the swaps by direction, and the wait histogram.
 * Pure: reads only the counts.
 */
#ifndef GF_DAEMON_METRICS_RENDER_COUNTS_H
#define GF_DAEMON_METRICS_RENDER_COUNTS_H

struct metrics_counts;
struct metrics_text;

void	metrics_render_counts(struct metrics_text *t,
	    const struct metrics_counts *mc);

#endif
