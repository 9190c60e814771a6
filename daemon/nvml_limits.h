/*
 * The driver's own memory limits per cgroup (NVML, driver r615 and
 * later), where the driver has them: the Machine part of memlimits.h.
 */
#ifndef GF_DAEMON_NVML_LIMITS_H
#define GF_DAEMON_NVML_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define NVML_LIMITS_CLEAR	UINT64_MAX	/* hard, with soft 0 */

/*
 * Whether limits can be set on device dev (nvml.h's index): 1, or 0 with
 * why in why (whylen bytes): no NVML, no such function (a driver before
 * r615), the device unknown to NVML, MIG, not root.
 */
int	nvml_limits_usable(size_t dev, char *why, size_t whylen);

/*
 * Set soft and hard on device dev for the cgroup directory dir (a full
 * path); soft 0 and hard NVML_LIMITS_CLEAR clear them. 0, or -1 with
 * NVML's word in why.
 */
int	nvml_limits_set(size_t dev, const char *dir, uint64_t soft,
	    uint64_t hard, char *why, size_t whylen);

/*
 * The limits the driver holds on device dev for the cgroup directory dir,
 * and what the cgroup uses there: 0, or -1 with NVML's word in why (a
 * directory never limited, or cleared: "Not Found").
 */
int	nvml_limits_get(size_t dev, const char *dir, uint64_t *soft,
	    uint64_t *hard, uint64_t *used, char *why, size_t whylen);

#endif
