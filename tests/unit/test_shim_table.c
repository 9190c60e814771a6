/*
 * Unit tests of shim/hooks_table.c: the one table through which
 * cuGetProcAddress (procaddr_find) and dlsym (procaddr_by_symbol) reach the
 * shim's hooks. The hooks themselves are stubs here.
 */
/* As the shim is built (Makefile): deprecated entry points are hooked too. */
#define CUDA_ENABLE_DEPRECATED
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the table here. */
#include "../../shim/hooks_table.c"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))
#define PTDS		CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define LEGACY		CU_GET_PROC_ADDRESS_LEGACY_STREAM

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	(void)dptr, (void)bytesize;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
    size_t Height, unsigned int ElementSizeBytes)
{
	(void)dptr, (void)pPitch, (void)WidthInBytes, (void)Height;
	(void)ElementSizeBytes;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	(void)dptr, (void)bytesize, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	(void)dptr;
	return CUDA_SUCCESS;
}

CUresult
cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	(void)free_bytes, (void)total_bytes;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	(void)bytes, (void)dev;
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	(void)symbol, (void)pfn, (void)cudaVersion, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	(void)symbol, (void)pfn, (void)cudaVersion, (void)flags;
	(void)symbolStatus;
	return CUDA_SUCCESS;
}

CUresult
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	(void)pHandle, (void)pAllocateArray;
	return CUDA_SUCCESS;
}

CUresult
cuArray3DCreate_v2(CUarray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	(void)pHandle, (void)pAllocateArray;
	return CUDA_SUCCESS;
}

CUresult
cuArrayDestroy(CUarray hArray)
{
	(void)hArray;
	return CUDA_SUCCESS;
}

CUresult
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
    unsigned int numMipmapLevels)
{
	(void)pHandle, (void)pMipmappedArrayDesc, (void)numMipmapLevels;
	return CUDA_SUCCESS;
}

CUresult
cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	(void)hMipmappedArray;
	return CUDA_SUCCESS;
}

/* The context ends (hooks_ctx.c), by context and by device. */
#define CTX_STUB(name, type)						\
CUresult								\
name(type arg)								\
{									\
	(void)arg;							\
	return CUDA_SUCCESS;						\
}
CTX_STUB(cuCtxDestroy, CUcontext)
CTX_STUB(cuCtxDestroy_v2, CUcontext)
CTX_STUB(cuDevicePrimaryCtxReset, CUdevice)
CTX_STUB(cuDevicePrimaryCtxReset_v2, CUdevice)
CTX_STUB(cuDevicePrimaryCtxRelease, CUdevice)
CTX_STUB(cuDevicePrimaryCtxRelease_v2, CUdevice)

/* A primary context's retain, counted (hooks_ctx.c). */
CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	(void)pctx, (void)dev;
	return CUDA_SUCCESS;
}

/* The address range of an allocation backed for the copy engine. */
CUresult
cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	(void)pbase, (void)psize, (void)dptr;
	return CUDA_SUCCESS;
}

/* Pointer attributes of backed memory (hooks_ptr.c). */
CUresult
cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
    CUdeviceptr ptr)
{
	(void)data, (void)attribute, (void)ptr;
	return CUDA_SUCCESS;
}

CUresult
cuPointerGetAttributes(unsigned int numAttributes,
    CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
	(void)numAttributes, (void)attributes, (void)data, (void)ptr;
	return CUDA_SUCCESS;
}

CUresult
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	(void)handle, (void)size, (void)prop, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	(void)handle;
	return CUDA_SUCCESS;
}

CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	(void)handle, (void)addr;
	return CUDA_SUCCESS;
}

CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	(void)ptr, (void)size, (void)offset, (void)handle, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	(void)ptr, (void)size;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	(void)dptr, (void)bytesize, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	(void)dptr, (void)bytesize, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
    CUmemoryPool pool, CUstream hStream)
{
	(void)dptr, (void)bytesize, (void)pool, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
    CUmemoryPool pool, CUstream hStream)
{
	(void)dptr, (void)bytesize, (void)pool, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	(void)pool, (void)minBytesToKeep;
	return CUDA_SUCCESS;
}

CUresult
cuMemPoolDestroy(CUmemoryPool pool)
{
	(void)pool;
	return CUDA_SUCCESS;
}

CUresult
cuMemExportToShareableHandle(void *shareableHandle,
    CUmemGenericAllocationHandle handle, CUmemAllocationHandleType handleType,
    unsigned long long flags)
{
	(void)shareableHandle, (void)handle, (void)handleType, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
    CUmemGenericAllocationHandle handle)
{
	(void)prop, (void)handle;
	return CUDA_SUCCESS;
}

CUresult
cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	(void)mapInfoList, (void)count, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	(void)mapInfoList, (void)count, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult
cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
    CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
    unsigned long long flags)
{
	(void)mcHandle, (void)mcOffset, (void)memHandle, (void)memOffset;
	(void)size, (void)flags;
	return CUDA_SUCCESS;
}

/* The gated pass-throughs: one stub each, from the same list. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GATE_ABI(name, version, ptds, symbol, flag, params, args) \
	CUresult symbol params { return CUDA_SUCCESS; }
#define GATE_OWN_ABI(name, version, symbol, real, params, args) \
	CUresult symbol params { return CUDA_SUCCESS; }
#include "../../shim/hooks_list.h"
#pragma GCC diagnostic pop

struct find_case {
	const char	*name;
	int		version;
	uint64_t	flags;
	void		*want;		/* NULL: no hook, the driver's answer stands */
	int		status;
};

static void
test_sorted(void **state)
{
	(void)state;
	assert_int_equal(procaddr_check_sorted(hooks_table, hooks_table_len),
	    0);
	/*
	 * 38 hand-written hooks (cuMemMapArrayAsync, its _ptsz and
	 * cuMulticastBindMem the latest), 178 gated ones, 1 newer ABI left
	 * alone
	 */
	assert_int_equal(hooks_table_len, 217);
}

/* Each exported symbol is in the table once, so dlsym finds its own. */
static void
test_symbols_unique(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < hooks_table_len; i++)
		if (procaddr_by_symbol(hooks_table, hooks_table_len,
		    hooks_table[i].symbol) != &hooks_table[i])
			fail_msg("%s is in the table twice",
			    hooks_table[i].symbol);
}

static void
find_check(const struct find_case *c)
{
	const struct procaddr *e;
	int status = -1;

	e = procaddr_find(hooks_table, hooks_table_len, c->name, c->version,
	    c->flags, &status);
	if ((e ? e->fn : NULL) != c->want || status != c->status)
		fail_msg("(%s, %d, %llu): got %s (status %d), want %s "
		    "(status %d)", c->name, c->version,
		    (unsigned long long)c->flags, e ? e->symbol : "no hook",
		    status, c->want ? "a hook" : "no hook", c->status);
}

/* The ABI of today's callers (CUDA 12 and 13) gets the hook. */
static void
test_find_current(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 13000, 0, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemAlloc", 3020, 0, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemAllocPitch", 12080, 0, (void *)cuMemAllocPitch_v2, 0 },
		{ "cuMemAllocManaged", 12000, 0, (void *)cuMemAllocManaged, 0 },
		{ "cuMemAllocManaged", 6000, 0, (void *)cuMemAllocManaged, 0 },
		{ "cuMemFree", 12000, 0, (void *)cuMemFree_v2, 0 },
		{ "cuMemGetInfo", 12000, 0, (void *)cuMemGetInfo_v2, 0 },
		{ "cuDeviceTotalMem", 11000, 0, (void *)cuDeviceTotalMem_v2, 0 },
		{ "cuMemAlloc", 12000, LEGACY, (void *)cuMemAlloc_v2, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* A caller built against an older CUDA gets the driver's older ABI. */
static void
test_find_old_version(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 3010, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAlloc", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAllocPitch", 3000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemFree", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemGetInfo", 3000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuDeviceTotalMem", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAllocManaged", 5050, 0, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/*
 * The per-thread-default-stream flag: allocation and query entry points
 * have no _ptds/_ptsz variant, so a per-thread caller gets the same hook.
 */
static void
test_find_ptds(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 12000, PTDS, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemFree", 12000, PTDS, (void *)cuMemFree_v2, 0 },
		{ "cuMemGetInfo", 12000, PTDS | LEGACY, (void *)cuMemGetInfo_v2,
		  0 },
		{ "cuMemAlloc", 3000, PTDS, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

struct gate_case {
	const char	*name;
	int		version;
	uint64_t	flags;
	const char	*want;		/* entry's symbol; NULL: no entry */
	int		hooked;		/* 0: the entry marks an unhooked ABI */
	int		status;
};

/*
 * Launches, copies, sets and synchronisation: the ABI asked for, its
 * per-thread variant (_ptds, _ptsz) only where the caller asked for one.
 */
static void
test_find_gated(void **state)
{
	static const struct gate_case cases[] = {
		{ "cuMemcpyHtoD", 12000, PTDS, "cuMemcpyHtoD_v2_ptds", 1, 0 },
		{ "cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2", 1, 0 },
		{ "cuMemcpyHtoD", 12000, LEGACY, "cuMemcpyHtoD_v2", 1, 0 },
		{ "cuMemcpyHtoD", 7000, PTDS, "cuMemcpyHtoD_v2_ptds", 1, 0 },
		{ "cuMemcpyHtoD", 6050, PTDS, "cuMemcpyHtoD_v2", 1, 0 },
		{ "cuMemcpyHtoD", 3010, 0, NULL, 0, PROCADDR_VERSION_LOW },
		{ "cuMemcpyHtoDAsync", 12000, PTDS, "cuMemcpyHtoDAsync_v2_ptsz",
		  1, 0 },
		{ "cuMemcpy", 12000, PTDS, "cuMemcpy_ptds", 1, 0 },
		{ "cuMemcpy3DPeerAsync", 12000, 0, "cuMemcpy3DPeerAsync", 1, 0 },
		{ "cuMemsetD2D8Async", 12000, PTDS, "cuMemsetD2D8Async_ptsz", 1,
		  0 },
		{ "cuMemsetD32", 11000, 0, "cuMemsetD32_v2", 1, 0 },
		{ "cuLaunchKernel", 12000, 0, "cuLaunchKernel", 1, 0 },
		{ "cuLaunchKernel", 12000, PTDS, "cuLaunchKernel_ptsz", 1, 0 },
		{ "cuLaunchKernelEx", 11060, PTDS, "cuLaunchKernelEx_ptsz", 1, 0 },
		{ "cuLaunchKernelEx", 11050, 0, NULL, 0, PROCADDR_VERSION_LOW },
		{ "cuLaunchHostFunc", 12000, PTDS, "cuLaunchHostFunc_ptsz", 1, 0 },
		{ "cuGraphLaunch", 12000, 0, "cuGraphLaunch", 1, 0 },
		{ "cuStreamSynchronize", 12000, PTDS, "cuStreamSynchronize_ptsz",
		  1, 0 },
		{ "cuEventSynchronize", 13000, PTDS, "cuEventSynchronize", 1, 0 },
		{ "cuMemcpyBatchAsync", 12080, 0, "cuMemcpyBatchAsync", 1, 0 },
		{ "cuMemcpyBatchAsync", 12090, PTDS, "cuMemcpyBatchAsync_ptsz", 1,
		  0 },
		{ "cuMemcpyBatchAsync", 13000, PTDS, "cuMemcpyBatchAsync_v2_ptsz",
		  1, 0 },
		{ "cuIpcGetMemHandle", 12000, 0, "cuIpcGetMemHandle", 1, 0 },
		{ "cuIpcOpenMemHandle", 10020, 0, "cuIpcOpenMemHandle", 1, 0 },
		{ "cuIpcOpenMemHandle", 12000, 0, "cuIpcOpenMemHandle_v2", 1, 0 },
		/* CUDA 13's takes a context: the driver's answer stands */
		{ "cuCtxSynchronize", 12000, 0, "cuCtxSynchronize", 1, 0 },
		{ "cuCtxSynchronize", 12090, PTDS, "cuCtxSynchronize", 1, 0 },
		{ "cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2", 0, 0 },
		{ "cuCtxSynchronize", 13010, PTDS, "cuCtxSynchronize_v2", 0, 0 },
	};
	const struct procaddr *e;
	size_t i;
	int status;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		const struct gate_case *c = &cases[i];

		status = -1;
		e = procaddr_find(hooks_table, hooks_table_len, c->name,
		    c->version, c->flags, &status);
		if ((e == NULL) != (c->want == NULL) || status != c->status ||
		    (e != NULL && (strcmp(e->symbol, c->want) != 0 ||
		    (e->fn != NULL) != c->hooked)))
			fail_msg("(%s, %d, %llu): got %s%s (status %d), want %s "
			    "(status %d)", c->name, c->version,
			    (unsigned long long)c->flags,
			    e ? e->symbol : "no entry",
			    e && e->fn == NULL ? " unhooked" : "", status,
			    c->want ? c->want : "no entry", c->status);
	}
}

/* Names the shim does not hook are the driver's business. */
static void
test_find_unknown(void **state)
{
	static const struct find_case cases[] = {
		{ "cuGetExportTable", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemPrefetchAsync", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuInit", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAlloc_v2", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAllo", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAllocX", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "zzz", 12000, 0, NULL, PROCADDR_NOT_FOUND },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* Asked for itself, cuGetProcAddress answers with the matching hook. */
static void
test_find_getprocaddress(void **state)
{
	static const struct find_case cases[] = {
		{ "cuGetProcAddress", 13000, 0, (void *)cuGetProcAddress_v2, 0 },
		{ "cuGetProcAddress", 12000, 0, (void *)cuGetProcAddress_v2, 0 },
		{ "cuGetProcAddress", 12000, PTDS, (void *)cuGetProcAddress_v2,
		  0 },
		{ "cuGetProcAddress", 11080, 0, (void *)cuGetProcAddress, 0 },
		{ "cuGetProcAddress", 11030, 0, (void *)cuGetProcAddress, 0 },
		{ "cuGetProcAddress", 11020, 0, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* The dlsym path: exported driver symbol names, and nothing else. */
static void
test_by_symbol(void **state)
{
	static const struct {
		const char	*symbol;
		void		*want;
	} cases[] = {
		{ "cuMemAlloc_v2", (void *)cuMemAlloc_v2 },
		{ "cuMemAllocPitch_v2", (void *)cuMemAllocPitch_v2 },
		{ "cuMemAllocManaged", (void *)cuMemAllocManaged },
		{ "cuMemFree_v2", (void *)cuMemFree_v2 },
		{ "cuMemGetInfo_v2", (void *)cuMemGetInfo_v2 },
		{ "cuDeviceTotalMem_v2", (void *)cuDeviceTotalMem_v2 },
		{ "cuGetProcAddress", (void *)cuGetProcAddress },
		{ "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2 },
		{ "cuMemcpyHtoD_v2", (void *)cuMemcpyHtoD_v2 },
		{ "cuMemcpyHtoD_v2_ptds", (void *)cuMemcpyHtoD_v2_ptds },
		{ "cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz },
		{ "cuCtxSynchronize", (void *)cuCtxSynchronize },
		{ "cuIpcOpenMemHandle", (void *)cuIpcOpenMemHandle },
		{ "cuMemMapArrayAsync", (void *)cuMemMapArrayAsync },
		{ "cuMemMapArrayAsync_ptsz", (void *)cuMemMapArrayAsync_ptsz },
		{ "cuMulticastBindMem", (void *)cuMulticastBindMem },
		/* listed, but only to be left to the driver */
		{ "cuCtxSynchronize_v2", NULL },
		{ "cuMemcpyHtoD", NULL },
		/* the legacy 32-bit ABIs keep the plain names */
		{ "cuMemAlloc", NULL },
		{ "cuMemFree", NULL },
		{ "cuMemGetInfo", NULL },
		{ "cuDeviceTotalMem", NULL },
		{ "cuMemAllocPitch", NULL },
		{ "cuMemAlloc_v2_ptds", NULL },
		{ "cuInit", NULL },
		{ "dlsym", NULL },
	};
	const struct procaddr *e;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		e = procaddr_by_symbol(hooks_table, hooks_table_len,
		    cases[i].symbol);
		if ((e ? e->fn : NULL) != cases[i].want)
			fail_msg("procaddr_by_symbol(\"%s\") = %s",
			    cases[i].symbol, e ? e->symbol : "nothing");
	}
}

/*
 * Every hook is exported by the version script, once; a newer ABI that is
 * not hooked is not exported.
 */
static void
test_exported(void **state)
{
	char line[256], want[128];
	size_t i, found;
	FILE *f;

	(void)state;
	if ((f = fopen("shim/libgpufrac.map", "r")) == NULL)
		skip();		/* not run from the top of the tree */
	for (i = 0; i < hooks_table_len; i++) {
		snprintf(want, sizeof(want), "%s;", hooks_table[i].symbol);
		found = 0;
		rewind(f);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, want) != NULL &&
			    strspn(line, " \t") == (size_t)(strstr(line, want) -
			    line))
				found++;
		if (found != (hooks_table[i].fn != NULL ? 1 : 0))
			fail_msg("%s is listed %zu times in "
			    "shim/libgpufrac.map", hooks_table[i].symbol, found);
	}
	fclose(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_symbols_unique),
		cmocka_unit_test(test_find_current),
		cmocka_unit_test(test_find_old_version),
		cmocka_unit_test(test_find_ptds),
		cmocka_unit_test(test_find_gated),
		cmocka_unit_test(test_find_unknown),
		cmocka_unit_test(test_find_getprocaddress),
		cmocka_unit_test(test_by_symbol),
		cmocka_unit_test(test_exported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
