/*
 * The hook table: one entry per hooked ABI, sorted by name, then version,
 * then per-thread variant (tests/unit/test_shim_table.c checks the order).
 * Older ABIs of the same names (the 32-bit v1 cuMemAlloc of CUDA < 3.2) are
 * not listed, so an old caller gets the driver's own function.
 */
#include "hooks.h"

#define HOOK(name, version, symbol) \
	{ name, version, 0, #symbol, (void *)symbol }

const struct procaddr hooks_table[] = {
	HOOK("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	HOOK("cuGetProcAddress", 11030, cuGetProcAddress),
	HOOK("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	HOOK("cuMemAlloc", 3020, cuMemAlloc_v2),
	HOOK("cuMemAllocManaged", 6000, cuMemAllocManaged),
	HOOK("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
	HOOK("cuMemFree", 3020, cuMemFree_v2),
	HOOK("cuMemGetInfo", 3020, cuMemGetInfo_v2),
};

const size_t hooks_table_len = sizeof(hooks_table) / sizeof(hooks_table[0]);
