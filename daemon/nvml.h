/*
 * The NVIDIA management library, read-only: which processes hold how much
 * memory on each device, as the driver counts it (contexts included). It
 * is dlopen'ed, never linked; without it the daemon does without.
 */
#ifndef GF_DAEMON_NVML_H
#define GF_DAEMON_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define NVML_LIB	"libnvidia-ml.so.1"

struct nvml_proc {
	uint32_t	pid;
	uint64_t	bytes;
};

/*
 * Load lib and find each of the n devices by UUID (uuids[i]). Returns 0,
 * or -1 after logging once why NVML cannot be used.
 */
int	nvml_open(const char *lib, const uint8_t (*uuids)[GF_UUID_LEN],
	    size_t n);

/* Whether nvml_open succeeded. */
int	nvml_ready(void);

/*
 * The processes on device i with their bytes, in *procs (malloc'd, the
 * caller's; NULL when none). Returns how many, or -1 (logged) when NVML
 * cannot say.
 */
long	nvml_procs(size_t i, struct nvml_proc **procs);

/*
 * What the driver holds on device i, by everyone, in *used (NVML's total
 * less its free). Returns 0, or -1 when NVML cannot say.
 */
int	nvml_used(size_t i, uint64_t *used);

/*
 * For the other NVML calls (nvml_limits.c): a function of the library by
 * name, and device i's handle (an nvmlDevice_t). NULL when there is none;
 * valid until nvml_close.
 */
void	*nvml_symbol(const char *name);
void	*nvml_device(size_t i);

/* Shut it down (at exit). */
void	nvml_close(void);

#endif
