/*
 * cuGetProcAddress hooks (DESIGN.md §3, path 3: libcudart, PyTorch, NCCL):
 * the driver answers, then the hook table replaces the answer where it has
 * a hook for the same (name, version, flags). All else stays as answered.
 */
#include "hooks.h"
#include "hooks_enter.h"
#include "real.h"

/*
 * Replace the driver's answer by a hook for the same ABI, if there is one;
 * an entry without a function (a newer ABI, not hooked) leaves it alone.
 */
static void
hooks_substitute(const char *symbol, void **pfn, int version,
    cuuint64_t flags)
{
	const struct procaddr *e;
	int status;

	if (symbol == NULL || pfn == NULL || *pfn == NULL)
		return;
	e = procaddr_find(hooks_table, hooks_table_len, symbol, version,
	    flags, &status);
	if (e != NULL && e->fn != NULL)
		*pfn = e->fn;
}

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuGetProcAddress_v1, symbol, pfn, cudaVersion,
		    flags);
	r = REAL_CALL(cuGetProcAddress_v1, symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS)
		hooks_substitute(symbol, pfn, cudaVersion, flags);
	hook_leave();
	return r;
}

CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuGetProcAddress_v2, symbol, pfn, cudaVersion,
		    flags, symbolStatus);
	r = REAL_CALL(cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags,
	    symbolStatus);
	if (r == CUDA_SUCCESS)
		hooks_substitute(symbol, pfn, cudaVersion, flags);
	hook_leave();
	return r;
}
