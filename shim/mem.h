/*
 * What the hooks that take device memory share (hooks_mem.c): the device a
 * call charges and the reservation made before the driver call.
 */
#ifndef GF_SHIM_MEM_H
#define GF_SHIM_MEM_H

#include <stdint.h>

#include <cuda.h>

#include "client.h"

/* a * b, or UINT64_MAX when that overflows. */
uint64_t mem_mul(uint64_t a, uint64_t b);

/* The device a call charges: the current context's; -1 if there is none. */
int	mem_device(void);

/* Reserve for the current device; t->dev < 0: nothing to account. */
CUresult mem_reserve(uint64_t size, uint32_t kind, struct client_ticket *t);

#endif
