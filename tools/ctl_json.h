/*
 * gpufracctl --json: one line of JSON per query, in the stable shapes of
 * DESIGN.md section 5 and gpufracctl(1); events as JSON Lines, one object
 * per event.
 */
#ifndef GF_CTL_JSON_H
#define GF_CTL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl_query.h"

void	ctl_json_status(FILE *fp, const struct ctl_status *st);
/* clients sorted by pid, as ctl_query_ps returns them */
void	ctl_json_ps(FILE *fp, const struct gf_client *clients, size_t n);
void	ctl_json_allocs(FILE *fp, uint32_t pid, const struct gf_alloc *allocs,
	    size_t n);
/* One line, one object. */
void	ctl_json_event(FILE *fp, const struct gf_event *ev);
/* What reload says on success. */
void	ctl_json_reload(FILE *fp);

/*
 * A JSON string literal for the (at most len bytes of) s: quotes,
 * backslashes and control characters escaped, invalid UTF-8 as U+FFFD.
 */
void	ctl_json_string(FILE *fp, const char *s, size_t len);

/* The answer to `swap out|in pid`: {"pid":N,"swapped":"out"}. */
void	ctl_json_swap(FILE *fp, uint32_t pid, int out);

#endif
