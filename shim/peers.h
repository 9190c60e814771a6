/*
 * The processes of this process's group on a device, asked of the daemon
 * (PS_REQ) on a connection of their own, for NVML's process listings: a
 * management query is rare and must not disturb the shared connection.
 */
#ifndef GF_SHIM_PEERS_H
#define GF_SHIM_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

/*
 * Up to max pids of the processes in this process's group that use the
 * device with uuid, this process included (in the default group, whose
 * limits are each process's own, only this process). Returns how many,
 * or -1 when the daemon cannot say (the listing is then left whole).
 */
long	peers_of_group(const uint8_t uuid[GF_UUID_LEN], uint32_t *pids,
	    size_t max);

#endif
