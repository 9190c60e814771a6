/*
 * gpufracctl's own JSON (status --json, ps --json) against the look the
 * checks compared (soak_json.c).
 */
#ifndef GF_SOAK_JSON_H
#define GF_SOAK_JSON_H

#include <stddef.h>

#include "soak_look.h"

/* 0 when they agree; -1 with why (one line) when they do not, or when
 * gpufracctl failed. */
int	json_agrees(const struct soak *s, const struct look *l, char *why,
	    size_t len);

#endif
