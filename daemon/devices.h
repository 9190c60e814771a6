/*
 * Device discovery: what GPUs the machine has, asked of the CUDA driver
 * itself (dlopen, never linked), with every device visible and without
 * creating a context.
 */
#ifndef GF_DAEMON_DEVICES_H
#define GF_DAEMON_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define DEVICES_LIBCUDA		"libcuda.so.1"

struct device_desc {
	uint8_t		uuid[GF_UUID_LEN];
	char		name[GF_NAME_LEN];
	uint32_t	index;		/* driver ordinal, PCI bus order */
	uint64_t	total;		/* bytes */
};

/*
 * Load the driver library lib (DEVICES_LIBCUDA), initialise it and list its
 * devices into *devs (malloc'd, the caller's to free; NULL when none).
 * Its checkpoint API is looked up too (devices_checkpoint_api). A driver
 * that cannot be loaded or initialised, or has no devices, is logged and
 * gives 0 devices. Unsets CUDA_VISIBLE_DEVICES and sets CUDA_DEVICE_ORDER
 * in this process so that every device is seen in nvidia-smi's order.
 * Returns the number of devices, or -1 on ENOMEM. The library stays
 * loaded.
 */
int	devices_discover(const char *lib, struct device_desc **devs);

struct ckpt_api;

/*
 * The driver's checkpoint API as devices_discover found it (all NULL if
 * the driver lacks any of it, or before discovery).
 */
void	devices_checkpoint_api(struct ckpt_api *api);

/* The driver's name for r ("CUDA_ERROR_NOT_READY"), or "error N". */
const char *devices_error_name(int r);

#endif
