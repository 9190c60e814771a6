/*
 * The names of the protocol's enumerations as users see them: in the
 * configuration, in gpufracctl's output and in the daemon's log. One table
 * each, shared by the daemon and the CLI.
 */
#ifndef GF_COMMON_NAMES_H
#define GF_COMMON_NAMES_H

#include <stdint.h>

/* A value's name ("waiting", "pitch", "preempt"), or "unknown". */
const char *name_state(uint32_t state);		/* GF_STATE_* */
const char *name_kind(uint32_t kind);		/* GF_KIND_* */
const char *name_resolver(uint32_t resolver);	/* GF_RESOLVER_* */
const char *name_on_preempt(uint32_t action);	/* GF_PREEMPT_* */
const char *name_event(uint32_t kind);		/* GF_EV_* */

/* The value named s, or -1. */
int	name_resolver_parse(const char *s);
int	name_on_preempt_parse(const char *s);

#endif
