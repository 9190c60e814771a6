/*
 * What a scrape returns: the daemon's figures in Prometheus's text format,
 * read from the same places as gpufracctl's STATUS and PS answers
 * (dispatch.c), so both always agree: per device, per group and device,
 * per process and device, and the counters (metrics_counts.h). README.md
 * ("Monitoring") lists every metric.
 */
#ifndef GF_DAEMON_METRICS_RENDER_H
#define GF_DAEMON_METRICS_RENDER_H

#include <stddef.h>

struct arbiter;

/*
 * The text now (malloc'd: the caller frees it), its length in *len; NULL
 * if memory ran out. Reads a; call it on the event loop's thread.
 */
char	*metrics_render(const struct arbiter *a, size_t *len);

#endif
