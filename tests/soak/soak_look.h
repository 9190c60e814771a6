/*
 * One look at the daemon's ledger and the driver's state, for the checks
 * (soak_look.c). Device ordinals are the driver's with every device
 * visible, which is the daemon's index and NVML's.
 */
#ifndef GF_SOAK_LOOK_H
#define GF_SOAK_LOOK_H

#include <stdint.h>

#include "ctl_query.h"
#include "gpufrac/proto.h"
#include "nvml_abi.h"
#include "soak.h"
#include "uuid.h"

struct look {
	struct ctl_status st;		/* gpufracctl status */
	struct gf_client *ps;		/* gpufracctl ps: a row per process
					   and device */
	size_t		nps;
	/* per slot and ordinal: the client's "context" records */
	uint64_t	context[SOAK_MAX_SLOTS][SOAK_MAX_DEV];
	/* the driver's, per ordinal */
	char		uuid[SOAK_MAX_DEV][NVML_DEVICE_UUID_BUFFER_SIZE];
	uint64_t	drv_used[SOAK_MAX_DEV];
	nvmlProcessInfo_t *procs[SOAK_MAX_DEV];
	unsigned	nprocs[SOAK_MAX_DEV];
	/* gpufracctl events: swaps in the last LOOK_SWAPS_MS, the last one */
	unsigned	recent_swaps;
	uint32_t	swap_pid;
	char		swap_reason[GF_REASON_LEN];
};

#define LOOK_SWAPS_MS	2000

/* Take a look; 0, or -1 when the daemon or the driver cannot say (said
 * for the driver only: the daemon may be starting). Free it either way. */
int	look_take(const struct soak *s, struct look *l);
void	look_free(struct look *l);

/* The daemon's device of ordinal ord, or NULL. */
const struct gf_device_status *look_device(const struct look *l, int ord);
/* The daemon's row for pid on device ord, or NULL. */
const struct gf_client *look_client(const struct look *l, pid_t pid,
	    int ord);
/* What the driver says pid holds on device ord. */
uint64_t look_driver_proc(const struct look *l, pid_t pid, int ord);

#endif
