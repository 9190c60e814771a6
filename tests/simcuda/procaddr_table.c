/*
 * cuGetProcAddress(_v2) and cuGetExportTable: the simulator's own entry
 * points by base name, CUDA version and per-thread-stream flag, from one
 * sorted table (common/procaddr.h).
 */
#include <string.h>

#include "sim.h"	/* first: it says which cuda.h ABIs it builds */
#include "private_table.h"
#include "procaddr.h"

#define PA(name, version, fn)	{ name, version, 0, #fn, (void *)fn }
#define PT(name, version, fn)	{ name, version, 1, #fn, (void *)fn }

/*
 * Sorted by name (strcmp), version, ptds; checked at cuInit. Versions are
 * those in which the real driver introduced each ABI (cudaTypedefs.h
 * names them PFN_<name>_v<version>). The 32-bit-pointer ABIs of CUDA 2.x
 * are not simulated: a caller that old gets VERSION_NOT_SUFFICIENT.
 */
static const struct procaddr table[] = {
	PA("cuArray3DCreate", 3020, cuArray3DCreate_v2),
	PA("cuArray3DGetDescriptor", 3020, cuArray3DGetDescriptor_v2),
	PA("cuArrayCreate", 3020, cuArrayCreate_v2),
	PA("cuArrayDestroy", 2000, cuArrayDestroy),
	PA("cuArrayGetDescriptor", 3020, cuArrayGetDescriptor_v2),
	PA("cuArrayGetMemoryRequirements", 11060, cuArrayGetMemoryRequirements),
	PA("cuCheckpointProcessCheckpoint", 12080, cuCheckpointProcessCheckpoint),
	PA("cuCheckpointProcessGetRestoreThreadId", 12080,
	    cuCheckpointProcessGetRestoreThreadId),
	PA("cuCheckpointProcessGetState", 12080, cuCheckpointProcessGetState),
	PA("cuCheckpointProcessLock", 12080, cuCheckpointProcessLock),
	PA("cuCheckpointProcessRestore", 12080, cuCheckpointProcessRestore),
	PA("cuCheckpointProcessUnlock", 12080, cuCheckpointProcessUnlock),
	PA("cuCtxCreate", 2000, cuCtxCreate),
	PA("cuCtxCreate", 3020, cuCtxCreate_v2),
	PA("cuCtxCreate", 11040, cuCtxCreate_v3),
	PA("cuCtxCreate", 12050, cuCtxCreate_v4),
	PA("cuCtxDestroy", 2000, cuCtxDestroy),
	PA("cuCtxDestroy", 4000, cuCtxDestroy_v2),
	PA("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
	PA("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
	PA("cuCtxGetDevice", 2000, cuCtxGetDevice),
	PA("cuCtxGetFlags", 7000, cuCtxGetFlags),
	PA("cuCtxGetId", 12000, cuCtxGetId),
	PA("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange),
	PA("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
	PA("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
	PA("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
	PA("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
	PA("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
	PA("cuCtxSynchronize", 2000, cuCtxSynchronize),
	PA("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
	PA("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
	PA("cuDeviceGet", 2000, cuDeviceGet),
	PA("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
	PA("cuDeviceGetCount", 2000, cuDeviceGetCount),
	PA("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
	PA("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
	PA("cuDeviceGetName", 2000, cuDeviceGetName),
	PA("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
	PA("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
	PA("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
	PA("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
	PA("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
	PA("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	PA("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
	PA("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
	PA("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
	PA("cuDevicePrimaryCtxSetFlags", 7000, cuDevicePrimaryCtxSetFlags),
	PA("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
	PA("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool),
	PA("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	PA("cuDriverGetVersion", 2020, cuDriverGetVersion),
	PA("cuEventCreate", 2000, cuEventCreate),
	PA("cuEventDestroy", 2000, cuEventDestroy),
	PA("cuEventDestroy", 4000, cuEventDestroy_v2),
	PA("cuEventElapsedTime", 2000, cuEventElapsedTime),
	PA("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
	PA("cuEventQuery", 2000, cuEventQuery),
	PA("cuEventRecord", 2000, cuEventRecord),
	PT("cuEventRecord", 7000, cuEventRecord_ptsz),
	PA("cuEventSynchronize", 2000, cuEventSynchronize),
	PA("cuGetErrorName", 6000, cuGetErrorName),
	PA("cuGetErrorString", 6000, cuGetErrorString),
	PA("cuGetExportTable", 3000, cuGetExportTable),
	PA("cuGetProcAddress", 11030, cuGetProcAddress),
	PA("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	PA("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode),
	PA("cuGraphCreate", 10000, cuGraphCreate),
	PA("cuGraphDestroy", 10000, cuGraphDestroy),
	PA("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
	PA("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
	PA("cuGraphLaunch", 10000, cuGraphLaunch),
	PT("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
	PA("cuInit", 2000, cuInit),
	PA("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
	PA("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
	PA("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
	PA("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
	PA("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
	PT("cuLaunchHostFunc", 10000, cuLaunchHostFunc_ptsz),
	PA("cuMemAddressFree", 10020, cuMemAddressFree),
	PA("cuMemAddressReserve", 10020, cuMemAddressReserve),
	PA("cuMemAlloc", 3020, cuMemAlloc_v2),
	PA("cuMemAllocAsync", 11020, cuMemAllocAsync),
	PT("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
	PA("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
	PT("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
	PA("cuMemAllocHost", 3020, cuMemAllocHost_v2),
	PA("cuMemAllocManaged", 6000, cuMemAllocManaged),
	PA("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
	PA("cuMemCreate", 10020, cuMemCreate),
	PA("cuMemExportToShareableHandle", 10020,
	    cuMemExportToShareableHandle),
	PA("cuMemFree", 3020, cuMemFree_v2),
	PA("cuMemFreeAsync", 11020, cuMemFreeAsync),
	PT("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
	PA("cuMemFreeHost", 2000, cuMemFreeHost),
	PA("cuMemGetAccess", 10020, cuMemGetAccess),
	PA("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
	PA("cuMemGetAllocationGranularity", 10020,
	    cuMemGetAllocationGranularity),
	PA("cuMemGetAllocationPropertiesFromHandle", 10020,
	    cuMemGetAllocationPropertiesFromHandle),
	PA("cuMemGetInfo", 3020, cuMemGetInfo_v2),
	PA("cuMemHostAlloc", 2020, cuMemHostAlloc),
	PA("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
	PA("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
	PA("cuMemHostRegister", 4000, cuMemHostRegister),
	PA("cuMemHostRegister", 6050, cuMemHostRegister_v2),
	PA("cuMemHostUnregister", 4000, cuMemHostUnregister),
	PA("cuMemImportFromShareableHandle", 10020,
	    cuMemImportFromShareableHandle),
	PA("cuMemMap", 10020, cuMemMap),
	PA("cuMemMapArrayAsync", 11010, cuMemMapArrayAsync),
	PT("cuMemMapArrayAsync", 11010, cuMemMapArrayAsync_ptsz),
	PA("cuMemPoolCreate", 11020, cuMemPoolCreate),
	PA("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
	PA("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
	PA("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
	PA("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
	PA("cuMemRelease", 10020, cuMemRelease),
	PA("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
	PA("cuMemSetAccess", 10020, cuMemSetAccess),
	PA("cuMemUnmap", 10020, cuMemUnmap),
	PA("cuMemcpy", 4000, cuMemcpy),
	PT("cuMemcpy", 7000, cuMemcpy_ptds),
	PA("cuMemcpyAsync", 4000, cuMemcpyAsync),
	PT("cuMemcpyAsync", 7000, cuMemcpyAsync_ptsz),
	PA("cuMemcpyAtoH", 3020, cuMemcpyAtoH_v2),
	PT("cuMemcpyAtoH", 7000, cuMemcpyAtoH_v2_ptds),
	PA("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
	PT("cuMemcpyDtoD", 7000, cuMemcpyDtoD_v2_ptds),
	PA("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
	PT("cuMemcpyDtoDAsync", 7000, cuMemcpyDtoDAsync_v2_ptsz),
	PA("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
	PT("cuMemcpyDtoH", 7000, cuMemcpyDtoH_v2_ptds),
	PA("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
	PT("cuMemcpyDtoHAsync", 7000, cuMemcpyDtoHAsync_v2_ptsz),
	PA("cuMemcpyHtoA", 3020, cuMemcpyHtoA_v2),
	PT("cuMemcpyHtoA", 7000, cuMemcpyHtoA_v2_ptds),
	PA("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
	PT("cuMemcpyHtoD", 7000, cuMemcpyHtoD_v2_ptds),
	PA("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
	PT("cuMemcpyHtoDAsync", 7000, cuMemcpyHtoDAsync_v2_ptsz),
	PA("cuMemsetD16", 3020, cuMemsetD16_v2),
	PT("cuMemsetD16", 7000, cuMemsetD16_v2_ptds),
	PA("cuMemsetD16Async", 3020, cuMemsetD16Async),
	PT("cuMemsetD16Async", 7000, cuMemsetD16Async_ptsz),
	PA("cuMemsetD32", 3020, cuMemsetD32_v2),
	PT("cuMemsetD32", 7000, cuMemsetD32_v2_ptds),
	PA("cuMemsetD32Async", 3020, cuMemsetD32Async),
	PT("cuMemsetD32Async", 7000, cuMemsetD32Async_ptsz),
	PA("cuMemsetD8", 3020, cuMemsetD8_v2),
	PT("cuMemsetD8", 7000, cuMemsetD8_v2_ptds),
	PA("cuMemsetD8Async", 3020, cuMemsetD8Async),
	PT("cuMemsetD8Async", 7000, cuMemsetD8Async_ptsz),
	PA("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
	PA("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
	PA("cuMipmappedArrayGetMemoryRequirements", 11060,
	    cuMipmappedArrayGetMemoryRequirements),
	PA("cuMulticastBindMem", 12010, cuMulticastBindMem),
	PA("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
	PA("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
	PA("cuStreamAddCallback", 5000, cuStreamAddCallback),
	PT("cuStreamAddCallback", 7000, cuStreamAddCallback_ptsz),
	PA("cuStreamCreate", 2000, cuStreamCreate),
	PA("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
	PA("cuStreamDestroy", 2000, cuStreamDestroy),
	PA("cuStreamDestroy", 4000, cuStreamDestroy_v2),
	PA("cuStreamGetFlags", 5050, cuStreamGetFlags),
	PT("cuStreamGetFlags", 7000, cuStreamGetFlags_ptsz),
	PA("cuStreamGetPriority", 5050, cuStreamGetPriority),
	PT("cuStreamGetPriority", 7000, cuStreamGetPriority_ptsz),
	PA("cuStreamQuery", 2000, cuStreamQuery),
	PT("cuStreamQuery", 7000, cuStreamQuery_ptsz),
	PA("cuStreamSynchronize", 2000, cuStreamSynchronize),
	PT("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
	PA("cuStreamWaitEvent", 3020, cuStreamWaitEvent),
	PT("cuStreamWaitEvent", 7000, cuStreamWaitEvent_ptsz),
};

#define TABLE_LEN	(sizeof(table) / sizeof(table[0]))

int
procaddr_table_check(void)
{
	return procaddr_check_sorted(table, TABLE_LEN);
}

/* Works before cuInit: that is how libcudart finds cuInit. */
CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	const struct procaddr *e;
	int status;

	if (symbol == NULL || pfn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	/*
	 * A cudaVersion newer than the driver gets the newest ABI there is,
	 * as callers built with newer headers expect on a driver that is
	 * minor-version compatible.
	 */
	if ((flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	e = procaddr_find(table, TABLE_LEN, symbol, cudaVersion, flags,
	    &status);
	if (e != NULL && checkpoint_hidden(symbol)) {
		e = NULL;
		status = PROCADDR_NOT_FOUND;
	}
	if (symbolStatus != NULL)
		*symbolStatus = status == PROCADDR_FOUND ?
		    CU_GET_PROC_ADDRESS_SUCCESS : status == PROCADDR_VERSION_LOW ?
		    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
		    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (e == NULL)
		return CUDA_ERROR_NOT_FOUND;
	*pfn = e->fn;
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

static CUresult
private_call(void (*fn)(void *), void *arg)
{
	SIM_GATE();
	if (fn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	fn(arg);
	return CUDA_SUCCESS;
}

static const struct procaddr *
private_entry_points(size_t *n)
{
	*n = TABLE_LEN;
	return table;
}

static const struct simcuda_private_table private_table = {
	sizeof(private_table), private_call, private_entry_points,
	hold_ctx_end, hold_ctx_end_held, pointer_queries
};

/*
 * The private tables libcudart needs are not simulated; the one of
 * private_table.h stands for them.
 */
CUresult
cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	static const CUuuid private_id = SIMCUDA_PRIVATE_TABLE_ID;

	if (ppExportTable == NULL || pExportTableId == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(pExportTableId, &private_id, sizeof(private_id)) == 0) {
		*ppExportTable = &private_table;
		return CUDA_SUCCESS;
	}
	*ppExportTable = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}
