/*
 * gpufracctl's human output: the tables of status, ps and allocs, and the
 * names and formats that the JSON output shares with them.
 */
#ifndef GF_CTL_PRINT_H
#define GF_CTL_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl_query.h"

void	ctl_print_status(FILE *fp, const struct ctl_status *st);
/* clients sorted by pid, as ctl_query_ps returns them */
void	ctl_print_ps(FILE *fp, const struct gf_client *clients, size_t n);
void	ctl_print_allocs(FILE *fp, const struct gf_alloc *allocs, size_t n);

/* "running", "waiting", "swapped", or "unknown". */
const char *ctl_state_name(uint32_t state);
/* "mem", "pitch", "managed", or "unknown". */
const char *ctl_kind_name(uint32_t kind);

/*
 * Copy the string in s (at most len bytes, NUL-terminated or not) into buf
 * with control characters replaced by '?', so that nothing the daemon sends
 * can drive the terminal. Returns buf.
 */
char	*ctl_printable(const char *s, size_t len, char *buf, size_t size);

/* Columns a UTF-8 string takes: its bytes less continuation bytes. */
size_t	ctl_text_width(const char *s);

#endif
