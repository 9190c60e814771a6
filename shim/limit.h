/*
 * GPUFRAC_MEMORY_LIMIT: the limit a process asks for on each device it sees.
 * Depends only on common/ so that its unit test can build it alone.
 */
#ifndef GF_SHIM_LIMIT_H
#define GF_SHIM_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "shim.h"

/* What one device is asked for: kind GF_LIMIT_NONE means nothing. */
struct limit_one {
	uint32_t	kind;		/* GF_LIMIT_* */
	uint64_t	value;		/* bytes, or hundredths of a percent */
};

struct limit_request {
	struct limit_one dev[SHIM_MAX_DEVICES];	/* by ordinal in this process */
};

/*
 * Parse s into *req. s is a size ("512Mi", "2GiB", "1.5G", "1073741824")
 * or a percentage ("50%") for every device, or a list "0=2Gi,1=4Gi" of
 * ordinals this process sees (devices not listed: no request). NULL or ""
 * asks for nothing. Returns 0, or -1 with *req cleared (no request) and a
 * one-line reason in why.
 */
int	limit_request_parse(const char *s, struct limit_request *req,
	    char *why, size_t whylen);

/*
 * What a process whose GPUFRAC_MEMORY_LIMIT is bad asks for: 0 bytes on
 * every device. Its allocations are refused, by the daemon (which shows
 * the limit of 0 in `gpufracctl ps`) or, with no daemon, by the shim: a
 * typo stops the job at its first allocation instead of giving it the
 * whole of what its group may hold.
 */
void	limit_request_refuse(struct limit_request *req);

#endif
