/*
 * Prometheus metrics: the arbiter's part. The counters follow the decision
 * log from the start (metrics_counts.h); the HTTP server (metrics_http.h)
 * runs while [daemon] metrics_listen is set, and a reload that changes or
 * removes it moves or stops it. Each scrape is rendered from the ledger
 * (metrics_render.h) on the event loop's thread.
 */
#ifndef GF_DAEMON_METRICS_H
#define GF_DAEMON_METRICS_H

#include <stdint.h>

#include "metrics_counts.h"

struct arbiter;
struct metrics_http;

struct metrics {
	struct metrics_counts counts;
	struct metrics_http *http;	/* serving, or NULL */
	int		 following;	/* counts follow a->events */
	uint64_t	 start_wall_ms;	/* the daemon's start, wall clock */
};

/*
 * At start, after the configuration is in force: follow the decision log
 * and, if metrics_listen is set, serve. Returns 0, or -1 after logging why
 * (the server could not start: the daemon does not either).
 */
int	metrics_start(struct arbiter *a);

/*
 * After a reload put a new configuration in force (counted as applied;
 * arbiter_reload counts those it refuses): serve where
 * metrics_listen now says. Where it changed, the old server stops first;
 * if the new address cannot be had, the old one is taken again (when it
 * can be) and the configuration says so. Never fails the reload: a
 * warning is logged.
 */
void	metrics_reload(struct arbiter *a);

/* Stop serving and following; free the counters. */
void	metrics_stop(struct arbiter *a);

#endif
