/*
 * gpufracctl's human output: the tables of status, ps, allocs and events,
 * and the names and figures that the JSON output shares with them.
 */
#ifndef GF_CTL_PRINT_H
#define GF_CTL_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl_query.h"
#include "ctl_table.h"

/* The device table (with each device's guarantees), then the groups. */
void	ctl_print_status(FILE *fp, const struct ctl_status *st);
/* Its first lines: the daemon's release, pid, uptime, clients, host swap. */
void	ctl_print_daemon(FILE *fp, const struct ctl_status *st);
/* clients sorted by pid, as ctl_query_ps returns them */
void	ctl_print_ps(FILE *fp, const struct gf_client *clients, size_t n);
void	ctl_print_allocs(FILE *fp, const struct gf_alloc *allocs, size_t n);
void	ctl_print_events(FILE *fp, const struct gf_event *events, size_t n);

/*
 * The events table row by row, for following: rows added with
 * ctl_print_event are printed by ctl_table_flush. With follow, columns
 * start as wide as their usual content, so that streamed rows line up.
 * The table is the caller's to ctl_table_free.
 */
void	ctl_print_events_init(struct ctl_table *t, int follow);
void	ctl_print_event(struct ctl_table *t, const struct gf_event *ev);

/* The sum of the guarantees of the groups on device uuid. */
uint64_t ctl_status_guaranteed(const struct ctl_status *st,
	    const uint8_t uuid[GF_UUID_LEN]);
/* An age or an uptime, short: "250ms", "1.2s", "3m4s", "2h5m", "3d4h". */
char	*ctl_duration_format(uint64_t ms, char *buf, size_t size);
/* A ps row's IDLE ("-": never) and VERSION ("-": not sent) columns. */
void	ctl_client_idle_version(const struct gf_client *c, char *idle,
	    size_t idlelen, char *version, size_t versionlen);
/* limit - used, or 0 when used is over the limit. */
uint64_t ctl_free_bytes(uint64_t limit, uint64_t used);
/* What a device has free: its capacity less the charges and foreign memory. */
uint64_t ctl_device_free(const struct gf_device_status *dev);

/*
 * Copy the string in s (at most len bytes, NUL-terminated or not) into buf
 * with control characters replaced by '?', so that nothing the daemon sends
 * can drive the terminal. Returns buf.
 */
char	*ctl_printable(const char *s, size_t len, char *buf, size_t size);

/* Columns a UTF-8 string takes: its bytes less continuation bytes. */
size_t	ctl_text_width(const char *s);

#endif
