/*
 * gates: every entry point of the (simulated) driver that cuGetProcAddress
 * finds, asked for again through whatever interposes it: prints
 * "driver NAME VERSION[ ptds]" for each that comes back as a function of
 * the driver's own object (not hooked, not gated), then "entry points N".
 * Run with libgpufrac.so preloaded (tests/integration/gates.sh). Exit
 * status 0, or 2 when the driver's list cannot be had.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../simcuda/private_table.h"
#include "procaddr.h"

int
main(void)
{
	static const CUuuid id = SIMCUDA_PRIVATE_TABLE_ID;
	const struct simcuda_private_table *t;
	const struct procaddr *e;
	Dl_info own, where;
	void *fn;
	size_t i, n;

	if (cuGetExportTable((const void **)&t, &id) != CUDA_SUCCESS ||
	    t->size < sizeof(*t)) {
		fprintf(stderr, "gates: no private table to list the driver's "
		    "entry points\n");
		return 2;
	}
	/* The driver's object: where its private table lives. */
	if (dladdr(t, &own) == 0) {
		fprintf(stderr, "gates: cannot tell where the driver is\n");
		return 2;
	}
	e = t->entry_points(&n);
	for (i = 0; i < n; i++) {
		fn = NULL;
		if (cuGetProcAddress_v2(e[i].name, &fn, e[i].version,
		    e[i].ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM :
		    CU_GET_PROC_ADDRESS_DEFAULT, NULL) != CUDA_SUCCESS)
			printf("unresolved %s %d\n", e[i].name, e[i].version);
		else if (dladdr(fn, &where) != 0 &&
		    where.dli_fbase == own.dli_fbase)
			printf("driver %s %d%s\n", e[i].name, e[i].version,
			    e[i].ptds ? " ptds" : "");
	}
	printf("entry points %zu\n", n);
	return 0;
}
