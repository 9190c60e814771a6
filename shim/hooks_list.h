/*
 * Every driver ABI the shim hooks, in the one order the hook table needs
 * (name, then version, then per-thread variant): the table, the exports'
 * prototypes, the real pointers and the gated hooks are generated from it.
 *
 * An X-macro list: no include guard. Define what the includer needs; the
 * rest expand to nothing and all are undefined at the end.
 *   HOOK_ABI(name, version, ptds, symbol)  a hook written by hand
 *	(hooks_mem.c, hooks_array.c, hooks_vmm.c, hooks_vmm_bind.c,
 *	hooks_pool.c, hooks_ctx.c, hooks_ptr.c, hooks_procaddr.c);
 *	HOOK(name, version, symbol) is one without a per-thread variant,
 *	HOOK_PT one and its variant
 *   GATE_ABI(name, version, ptds, symbol, flag, params, args)  a gated
 *	pass-through (hooks_gate.c): it waits to be swapped in, calls the
 *	driver, and on success notes activity flag flag (GF_ACT_*) unless 0;
 *	GATE_SYNC_FLAG instead marks a synchronisation, after which pools
 *	are looked at again (pool.h)
 *   GATE_CTX_ABI(name, version, symbol, params, args)  a gated call that
 *	makes a context (*pctx, its first argument), which the copy engine
 *	synchronises before a move (vback_ctx_made); as GATE_ABI with flag
 *	GATE_CTX_FLAG for every includer but hooks_gate.c
 *   GATE_OWN_ABI(name, version, symbol, real, params, args)  the same for
 *	a function the shim calls itself: its pointer real_cu.real is
 *	declared in real.h by hand, not generated
 *   IPC_ABI(name, version, symbol, flag, params, args)  legacy IPC: a
 *	gated pass-through as GATE_ABI for every includer but hooks_gate.c,
 *	whose hooks hooks_ipc.c writes by hand (the copy engine's memory
 *	has IPC handles of the shim's own, vback_ipc.h)
 *   NEWER(name, version, symbol)  a newer ABI that is not hooked: the
 *	driver's answer to cuGetProcAddress stands, where the hook of an
 *	older ABI of the same name would otherwise replace it
 * Every entry point of the driver that may wait on a swapped-out process
 * is hooked or gated: one left out would wait in the driver's checkpoint
 * lock, unseen, for ever if no one swaps the process in (test
 * tests/integration/gates.sh). Left out: cuInit, cuDriverGetVersion,
 * cuGetErrorName and cuGetErrorString, which touch no device;
 * cuGetExportTable, whose private tables gpufrac cannot know; and the
 * cuCheckpointProcess* calls, which act on other processes.
 * Versions are those in which the driver introduced each ABI (cudaTypedefs.h
 * names them PFN_<name>_v<version>[_ptds|_ptsz]). The 32-bit ABIs of
 * CUDA < 3.2 are not listed: an old caller gets the driver's own function.
 */
#include <cuda.h>

/* cuda.h makes these names macros for newer ABIs; here they are symbols. */
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuDeviceGetUuid
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuGetProcAddress
#undef cuIpcOpenMemHandle
#undef cuMemHostRegister
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync
#undef cuStreamDestroy

#ifndef HOOK_ABI
#define HOOK_ABI(name, version, ptds, symbol)
#endif
#ifndef GATE_ABI
#define GATE_ABI(name, version, ptds, symbol, flag, params, args)
#endif
#ifndef GATE_OWN_ABI
#define GATE_OWN_ABI(name, version, symbol, real, params, args)
#endif
#ifndef NEWER
#define NEWER(name, version, symbol)
#endif
#ifndef GATE_CTX_ABI
#define GATE_CTX_ABI(name, version, symbol, params, args) \
	GATE_ABI(name, version, 0, symbol, GATE_CTX_FLAG, params, args)
#endif
#ifndef IPC_ABI
#define IPC_ABI(name, version, symbol, flag, params, args) \
	GATE_ABI(name, version, 0, symbol, flag, params, args)
#endif

#define HOOK(name, version, symbol)	HOOK_ABI(name, version, 0, symbol)
#define HOOK_PT(name, version, symbol, pt_version, pt_symbol) \
	HOOK_ABI(name, version, 0, symbol) \
	HOOK_ABI(name, pt_version, 1, pt_symbol)

/* A gated ABI; the same with its per-thread variant (_ptds or _ptsz). */
#define GATE(name, version, symbol, params, args) \
	GATE_ABI(name, version, 0, symbol, 0, params, args)
#define GATE_PT(name, version, symbol, pt_version, pt_symbol, params, args) \
	GATE_ABI(name, version, 0, symbol, 0, params, args) \
	GATE_ABI(name, pt_version, 1, pt_symbol, 0, params, args)
/* A synchronisation: pools may have given memory back (pool.h). */
#define GATE_SYNC(name, version, symbol, params, args) \
	GATE_ABI(name, version, 0, symbol, GATE_SYNC_FLAG, params, args)
#define GATE_SYNC_PT(name, version, symbol, pt_version, pt_symbol, params, \
    args) \
	GATE_ABI(name, version, 0, symbol, GATE_SYNC_FLAG, params, args) \
	GATE_ABI(name, pt_version, 1, pt_symbol, GATE_SYNC_FLAG, params, args)
/* A context made: the copy engine knows it (vback_ctx_made). */
#define GATE_CTX(name, version, symbol, params, args) \
	GATE_CTX_ABI(name, version, symbol, params, args)
/* A gated ABI whose real pointer the shim keeps for its own calls. */
#define GATE_OWN(name, version, symbol, real, params, args) \
	GATE_OWN_ABI(name, version, symbol, real, params, args)
/* IPC memory cannot be checkpointed: the daemon must not swap us out. */
#define GATE_IPC(name, version, symbol, params, args) \
	IPC_ABI(name, version, symbol, GF_ACT_IPC, params, args)

/* Parameter lists shared by several entries. */
#define P_LAUNCH	CUfunction f, unsigned int gridDimX, \
	unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, \
	unsigned int blockDimY, unsigned int blockDimZ, \
	unsigned int sharedMemBytes, CUstream hStream, void **kernelParams
#define A_LAUNCH	f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, \
	blockDimZ, sharedMemBytes, hStream, kernelParams
#define P_BATCH		CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, \
	size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, \
	size_t numAttrs
#define A_BATCH		dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs
#define P_PEER		CUdeviceptr dstDevice, CUcontext dstContext, \
	CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount
#define A_PEER		dstDevice, dstContext, srcDevice, srcContext, ByteCount
#define P_SET2D(type, v) \
	CUdeviceptr dstDevice, size_t dstPitch, type v, size_t Width, \
	size_t Height
#define A_SET2D(v)	dstDevice, dstPitch, v, Width, Height

HOOK("cuArray3DCreate", 3020, cuArray3DCreate_v2)
GATE("cuArray3DGetDescriptor", 3020, cuArray3DGetDescriptor_v2,
    (CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray),
    (pArrayDescriptor, hArray))
HOOK("cuArrayCreate", 3020, cuArrayCreate_v2)
HOOK("cuArrayDestroy", 2000, cuArrayDestroy)
GATE("cuArrayGetDescriptor", 3020, cuArrayGetDescriptor_v2,
    (CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray),
    (pArrayDescriptor, hArray))
GATE_OWN("cuArrayGetMemoryRequirements", 11060, cuArrayGetMemoryRequirements,
    cuArrayGetMemoryRequirements,
    (CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements, CUarray array,
    CUdevice device), (memoryRequirements, array, device))
/* cuCtxCreate of CUDA < 3.2 takes 32-bit pointers: not hooked. */
GATE_CTX("cuCtxCreate", 3020, cuCtxCreate_v2,
    (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev))
GATE_CTX("cuCtxCreate", 11040, cuCtxCreate_v3,
    (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
    unsigned int flags, CUdevice dev), (pctx, paramsArray, numParams, flags,
    dev))
GATE_CTX("cuCtxCreate", 12050, cuCtxCreate_v4,
    (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
    CUdevice dev), (pctx, ctxCreateParams, flags, dev))
HOOK("cuCtxDestroy", 2000, cuCtxDestroy)
HOOK("cuCtxDestroy", 4000, cuCtxDestroy_v2)
GATE("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion,
    (CUcontext ctx, unsigned int *version), (ctx, version))
GATE("cuCtxGetCurrent", 4000, cuCtxGetCurrent, (CUcontext *pctx), (pctx))
GATE_OWN("cuCtxGetDevice", 2000, cuCtxGetDevice, cuCtxGetDevice,
    (CUdevice *device), (device))
GATE("cuCtxGetFlags", 7000, cuCtxGetFlags, (unsigned int *flags), (flags))
GATE("cuCtxGetId", 12000, cuCtxGetId,
    (CUcontext ctx, unsigned long long *ctxId), (ctx, ctxId))
GATE("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange,
    (int *leastPriority, int *greatestPriority), (leastPriority,
    greatestPriority))
GATE("cuCtxPopCurrent", 2000, cuCtxPopCurrent, (CUcontext *pctx), (pctx))
GATE("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2, (CUcontext *pctx), (pctx))
GATE("cuCtxPushCurrent", 2000, cuCtxPushCurrent, (CUcontext ctx), (ctx))
GATE("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2, (CUcontext ctx), (ctx))
GATE("cuCtxSetCurrent", 4000, cuCtxSetCurrent, (CUcontext ctx), (ctx))
GATE_SYNC("cuCtxSynchronize", 2000, cuCtxSynchronize, (void), ())
/* CUDA 13's takes a context (cuCtxSynchronize_v2): not hooked. */
NEWER("cuCtxSynchronize", 13000, cuCtxSynchronize_v2)
GATE_OWN("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer,
    cuDeviceCanAccessPeer, (int *canAccessPeer, CUdevice dev,
    CUdevice peerDev), (canAccessPeer, dev, peerDev))
GATE("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability,
    (int *major, int *minor, CUdevice dev), (major, minor, dev))
GATE("cuDeviceGet", 2000, cuDeviceGet,
    (CUdevice *device, int ordinal), (device, ordinal))
GATE("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute,
    (int *pi, CUdevice_attribute attrib, CUdevice dev), (pi, attrib, dev))
GATE_OWN("cuDeviceGetCount", 2000, cuDeviceGetCount, cuDeviceGetCount,
    (int *count), (count))
GATE("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool,
    (CUmemoryPool *pool_out, CUdevice dev), (pool_out, dev))
GATE_OWN("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool, cuDeviceGetMemPool,
    (CUmemoryPool *pool, CUdevice dev), (pool, dev))
GATE("cuDeviceGetName", 2000, cuDeviceGetName,
    (char *name, int len, CUdevice dev), (name, len, dev))
GATE("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId,
    (char *pciBusId, int len, CUdevice dev), (pciBusId, len, dev))
GATE_OWN("cuDeviceGetUuid", 9020, cuDeviceGetUuid, cuDeviceGetUuid_v1,
    (CUuuid *uuid, CUdevice dev), (uuid, dev))
GATE_OWN("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2, cuDeviceGetUuid_v2,
    (CUuuid *uuid, CUdevice dev), (uuid, dev))
GATE("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState,
    (CUdevice dev, unsigned int *flags, int *active), (dev, flags, active))
HOOK("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease)
HOOK("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2)
HOOK("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset)
HOOK("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2)
HOOK("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain)
GATE("cuDevicePrimaryCtxSetFlags", 7000, cuDevicePrimaryCtxSetFlags,
    (CUdevice dev, unsigned int flags), (dev, flags))
GATE("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2,
    (CUdevice dev, unsigned int flags), (dev, flags))
GATE("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool,
    (CUdevice dev, CUmemoryPool pool), (dev, pool))
HOOK("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2)
GATE("cuEventCreate", 2000, cuEventCreate,
    (CUevent *phEvent, unsigned int Flags), (phEvent, Flags))
GATE("cuEventDestroy", 2000, cuEventDestroy, (CUevent hEvent), (hEvent))
GATE("cuEventDestroy", 4000, cuEventDestroy_v2, (CUevent hEvent), (hEvent))
GATE("cuEventElapsedTime", 2000, cuEventElapsedTime,
    (float *pMilliseconds, CUevent hStart, CUevent hEnd), (pMilliseconds,
    hStart, hEnd))
GATE("cuEventElapsedTime", 12080, cuEventElapsedTime_v2,
    (float *pMilliseconds, CUevent hStart, CUevent hEnd), (pMilliseconds,
    hStart, hEnd))
GATE("cuEventQuery", 2000, cuEventQuery, (CUevent hEvent), (hEvent))
GATE_PT("cuEventRecord", 2000, cuEventRecord, 7000, cuEventRecord_ptsz,
    (CUevent hEvent, CUstream hStream), (hEvent, hStream))
GATE_SYNC("cuEventSynchronize", 2000, cuEventSynchronize,
    (CUevent hEvent), (hEvent))
HOOK("cuGetProcAddress", 11030, cuGetProcAddress)
HOOK("cuGetProcAddress", 12000, cuGetProcAddress_v2)
GATE("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode,
    (CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx),
    (phGraphNode, hGraph, dependencies, numDependencies, memsetParams, ctx))
GATE("cuGraphCreate", 10000, cuGraphCreate,
    (CUgraph *phGraph, unsigned int flags), (phGraph, flags))
GATE("cuGraphDestroy", 10000, cuGraphDestroy, (CUgraph hGraph), (hGraph))
GATE("cuGraphExecDestroy", 10000, cuGraphExecDestroy,
    (CUgraphExec hGraphExec), (hGraphExec))
GATE("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags,
    (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags),
    (phGraphExec, hGraph, flags))
GATE_PT("cuGraphLaunch", 10000, cuGraphLaunch, 10000, cuGraphLaunch_ptsz,
    (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))
IPC_ABI("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle, 0,
    (CUdeviceptr dptr), (dptr))
GATE_IPC("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle,
    (CUipcMemHandle *pHandle, CUdeviceptr dptr), (pHandle, dptr))
GATE_IPC("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle,
    (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags),
    (pdptr, handle, Flags))
GATE_IPC("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2,
    (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags),
    (pdptr, handle, Flags))
GATE_PT("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel,
    9000, cuLaunchCooperativeKernel_ptsz, (P_LAUNCH), (A_LAUNCH))
GATE_PT("cuLaunchHostFunc", 10000, cuLaunchHostFunc,
    10000, cuLaunchHostFunc_ptsz,
    (CUstream hStream, CUhostFn fn, void *userData), (hStream, fn, userData))
GATE_PT("cuLaunchKernel", 4000, cuLaunchKernel, 7000, cuLaunchKernel_ptsz,
    (P_LAUNCH, void **extra), (A_LAUNCH, extra))
GATE_PT("cuLaunchKernelEx", 11060, cuLaunchKernelEx,
    11060, cuLaunchKernelEx_ptsz,
    (const CUlaunchConfig *config, CUfunction f, void **kernelParams,
    void **extra), (config, f, kernelParams, extra))
GATE("cuMemAddressFree", 10020, cuMemAddressFree,
    (CUdeviceptr ptr, size_t size), (ptr, size))
GATE("cuMemAddressReserve", 10020, cuMemAddressReserve,
    (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
    unsigned long long flags), (ptr, size, alignment, addr, flags))
HOOK("cuMemAlloc", 3020, cuMemAlloc_v2)
HOOK_PT("cuMemAllocAsync", 11020, cuMemAllocAsync, 11020,
    cuMemAllocAsync_ptsz)
HOOK_PT("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync, 11020,
    cuMemAllocFromPoolAsync_ptsz)
GATE("cuMemAllocHost", 3020, cuMemAllocHost_v2,
    (void **pp, size_t bytesize), (pp, bytesize))
HOOK("cuMemAllocManaged", 6000, cuMemAllocManaged)
HOOK("cuMemAllocPitch", 3020, cuMemAllocPitch_v2)
HOOK("cuMemCreate", 10020, cuMemCreate)
HOOK("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle)
HOOK("cuMemFree", 3020, cuMemFree_v2)
/* Back to its pool, not to the device: the pool's charge stays. */
GATE_PT("cuMemFreeAsync", 11020, cuMemFreeAsync, 11020, cuMemFreeAsync_ptsz,
    (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))
GATE("cuMemFreeHost", 2000, cuMemFreeHost, (void *p), (p))
GATE("cuMemGetAccess", 10020, cuMemGetAccess,
    (unsigned long long *flags, const CUmemLocation *location,
    CUdeviceptr ptr), (flags, location, ptr))
HOOK("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2)
GATE("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity,
    (size_t *granularity, const CUmemAllocationProp *prop,
    CUmemAllocationGranularity_flags option), (granularity, prop, option))
HOOK("cuMemGetAllocationPropertiesFromHandle", 10020,
    cuMemGetAllocationPropertiesFromHandle)
HOOK("cuMemGetInfo", 3020, cuMemGetInfo_v2)
GATE("cuMemHostAlloc", 2020, cuMemHostAlloc,
    (void **pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags))
GATE("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2,
    (CUdeviceptr *pdptr, void *p, unsigned int Flags), (pdptr, p, Flags))
GATE("cuMemHostGetFlags", 2030, cuMemHostGetFlags,
    (unsigned int *pFlags, void *p), (pFlags, p))
GATE("cuMemHostRegister", 4000, cuMemHostRegister,
    (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags))
GATE("cuMemHostRegister", 6050, cuMemHostRegister_v2,
    (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags))
GATE("cuMemHostUnregister", 4000, cuMemHostUnregister, (void *p), (p))
GATE("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle,
    (CUmemGenericAllocationHandle *handle, void *osHandle,
    CUmemAllocationHandleType shHandleType), (handle, osHandle, shHandleType))
HOOK("cuMemMap", 10020, cuMemMap)
HOOK_PT("cuMemMapArrayAsync", 11010, cuMemMapArrayAsync, 11010,
    cuMemMapArrayAsync_ptsz)
GATE_OWN("cuMemPoolCreate", 11020, cuMemPoolCreate, cuMemPoolCreate,
    (CUmemoryPool *pool, const CUmemPoolProps *poolProps), (pool, poolProps))
HOOK("cuMemPoolDestroy", 11020, cuMemPoolDestroy)
GATE_OWN("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute,
    cuMemPoolGetAttribute,
    (CUmemoryPool pool, CUmemPool_attribute attr, void *value), (pool, attr,
    value))
GATE("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute,
    (CUmemoryPool pool, CUmemPool_attribute attr, void *value), (pool, attr,
    value))
HOOK("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo)
HOOK("cuMemRelease", 10020, cuMemRelease)
HOOK("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle)
GATE("cuMemSetAccess", 10020, cuMemSetAccess,
    (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),
    (ptr, size, desc, count))
HOOK("cuMemUnmap", 10020, cuMemUnmap)
GATE_PT("cuMemcpy", 4000, cuMemcpy, 7000, cuMemcpy_ptds,
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
    (dst, src, ByteCount))
GATE_PT("cuMemcpy2D", 3020, cuMemcpy2D_v2, 7000, cuMemcpy2D_v2_ptds,
    (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATE_PT("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2,
    7000, cuMemcpy2DAsync_v2_ptsz,
    (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream))
GATE_PT("cuMemcpy2DUnaligned", 3020, cuMemcpy2DUnaligned_v2,
    7000, cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATE_PT("cuMemcpy3D", 3020, cuMemcpy3D_v2, 7000, cuMemcpy3D_v2_ptds,
    (const CUDA_MEMCPY3D *pCopy), (pCopy))
GATE_PT("cuMemcpy3DAsync", 3020, cuMemcpy3DAsync_v2,
    7000, cuMemcpy3DAsync_v2_ptsz,
    (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream))
/* CUDA 12.8's batch copies report a failing index; 13.0's do not. */
GATE_PT("cuMemcpy3DBatchAsync", 12080, cuMemcpy3DBatchAsync,
    12080, cuMemcpy3DBatchAsync_ptsz,
    (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
    unsigned long long flags, CUstream hStream),
    (numOps, opList, failIdx, flags, hStream))
GATE_PT("cuMemcpy3DBatchAsync", 13000, cuMemcpy3DBatchAsync_v2,
    13000, cuMemcpy3DBatchAsync_v2_ptsz,
    (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
    CUstream hStream), (numOps, opList, flags, hStream))
GATE_PT("cuMemcpy3DPeer", 4000, cuMemcpy3DPeer, 7000, cuMemcpy3DPeer_ptds,
    (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy))
GATE_PT("cuMemcpy3DPeerAsync", 4000, cuMemcpy3DPeerAsync,
    7000, cuMemcpy3DPeerAsync_ptsz,
    (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream))
GATE_PT("cuMemcpyAsync", 4000, cuMemcpyAsync, 7000, cuMemcpyAsync_ptsz,
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
    (dst, src, ByteCount, hStream))
GATE_PT("cuMemcpyAtoA", 3020, cuMemcpyAtoA_v2, 7000, cuMemcpyAtoA_v2_ptds,
    (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
    size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
GATE_PT("cuMemcpyAtoD", 3020, cuMemcpyAtoD_v2, 7000, cuMemcpyAtoD_v2_ptds,
    (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
    size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount))
GATE_PT("cuMemcpyAtoH", 3020, cuMemcpyAtoH_v2, 7000, cuMemcpyAtoH_v2_ptds,
    (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
    (dstHost, srcArray, srcOffset, ByteCount))
GATE_PT("cuMemcpyAtoHAsync", 3020, cuMemcpyAtoHAsync_v2,
    7000, cuMemcpyAtoHAsync_v2_ptsz,
    (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
    CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream))
GATE_PT("cuMemcpyBatchAsync", 12080, cuMemcpyBatchAsync,
    12080, cuMemcpyBatchAsync_ptsz,
    (P_BATCH, size_t *failIdx, CUstream hStream), (A_BATCH, failIdx, hStream))
GATE_PT("cuMemcpyBatchAsync", 13000, cuMemcpyBatchAsync_v2,
    13000, cuMemcpyBatchAsync_v2_ptsz,
    (P_BATCH, CUstream hStream), (A_BATCH, hStream))
GATE_PT("cuMemcpyDtoA", 3020, cuMemcpyDtoA_v2, 7000, cuMemcpyDtoA_v2_ptds,
    (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
    size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount))
GATE_PT("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, 7000, cuMemcpyDtoD_v2_ptds,
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
    (dstDevice, srcDevice, ByteCount))
GATE_PT("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2,
    7000, cuMemcpyDtoDAsync_v2_ptsz,
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream))
GATE_PT("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, 7000, cuMemcpyDtoH_v2_ptds,
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
    (dstHost, srcDevice, ByteCount))
GATE_PT("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2,
    7000, cuMemcpyDtoHAsync_v2_ptsz,
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))
GATE_PT("cuMemcpyHtoA", 3020, cuMemcpyHtoA_v2, 7000, cuMemcpyHtoA_v2_ptds,
    (CUarray dstArray, size_t dstOffset, const void *srcHost,
    size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount))
GATE_PT("cuMemcpyHtoAAsync", 3020, cuMemcpyHtoAAsync_v2,
    7000, cuMemcpyHtoAAsync_v2_ptsz,
    (CUarray dstArray, size_t dstOffset, const void *srcHost,
    size_t ByteCount, CUstream hStream),
    (dstArray, dstOffset, srcHost, ByteCount, hStream))
GATE_PT("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, 7000, cuMemcpyHtoD_v2_ptds,
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
    (dstDevice, srcHost, ByteCount))
GATE_PT("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2,
    7000, cuMemcpyHtoDAsync_v2_ptsz,
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
    CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))
GATE_PT("cuMemcpyPeer", 4000, cuMemcpyPeer, 7000, cuMemcpyPeer_ptds,
    (P_PEER), (A_PEER))
GATE_PT("cuMemcpyPeerAsync", 4000, cuMemcpyPeerAsync,
    7000, cuMemcpyPeerAsync_ptsz,
    (P_PEER, CUstream hStream), (A_PEER, hStream))
GATE_PT("cuMemsetD16", 3020, cuMemsetD16_v2, 7000, cuMemsetD16_v2_ptds,
    (CUdeviceptr dstDevice, unsigned short us, size_t N),
    (dstDevice, us, N))
GATE_PT("cuMemsetD16Async", 3020, cuMemsetD16Async,
    7000, cuMemsetD16Async_ptsz,
    (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream),
    (dstDevice, us, N, hStream))
GATE_PT("cuMemsetD2D16", 3020, cuMemsetD2D16_v2, 7000, cuMemsetD2D16_v2_ptds,
    (P_SET2D(unsigned short, us)), (A_SET2D(us)))
GATE_PT("cuMemsetD2D16Async", 3020, cuMemsetD2D16Async,
    7000, cuMemsetD2D16Async_ptsz,
    (P_SET2D(unsigned short, us), CUstream hStream), (A_SET2D(us), hStream))
GATE_PT("cuMemsetD2D32", 3020, cuMemsetD2D32_v2, 7000, cuMemsetD2D32_v2_ptds,
    (P_SET2D(unsigned int, ui)), (A_SET2D(ui)))
GATE_PT("cuMemsetD2D32Async", 3020, cuMemsetD2D32Async,
    7000, cuMemsetD2D32Async_ptsz,
    (P_SET2D(unsigned int, ui), CUstream hStream), (A_SET2D(ui), hStream))
GATE_PT("cuMemsetD2D8", 3020, cuMemsetD2D8_v2, 7000, cuMemsetD2D8_v2_ptds,
    (P_SET2D(unsigned char, uc)), (A_SET2D(uc)))
GATE_PT("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async,
    7000, cuMemsetD2D8Async_ptsz,
    (P_SET2D(unsigned char, uc), CUstream hStream), (A_SET2D(uc), hStream))
GATE_PT("cuMemsetD32", 3020, cuMemsetD32_v2, 7000, cuMemsetD32_v2_ptds,
    (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N))
GATE_PT("cuMemsetD32Async", 3020, cuMemsetD32Async,
    7000, cuMemsetD32Async_ptsz,
    (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream),
    (dstDevice, ui, N, hStream))
GATE_PT("cuMemsetD8", 3020, cuMemsetD8_v2, 7000, cuMemsetD8_v2_ptds,
    (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N))
GATE_PT("cuMemsetD8Async", 3020, cuMemsetD8Async,
    7000, cuMemsetD8Async_ptsz,
    (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),
    (dstDevice, uc, N, hStream))
HOOK("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate)
HOOK("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy)
GATE_OWN("cuMipmappedArrayGetMemoryRequirements", 11060,
    cuMipmappedArrayGetMemoryRequirements,
    cuMipmappedArrayGetMemoryRequirements,
    (CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
    CUmipmappedArray mipmap, CUdevice device), (memoryRequirements, mipmap,
    device))
HOOK("cuMulticastBindMem", 12010, cuMulticastBindMem)
HOOK("cuPointerGetAttribute", 4000, cuPointerGetAttribute)
HOOK("cuPointerGetAttributes", 7000, cuPointerGetAttributes)
GATE_PT("cuStreamAddCallback", 5000, cuStreamAddCallback,
    7000, cuStreamAddCallback_ptsz,
    (CUstream hStream, CUstreamCallback callback, void *userData,
    unsigned int flags), (hStream, callback, userData, flags))
GATE("cuStreamCreate", 2000, cuStreamCreate,
    (CUstream *phStream, unsigned int Flags), (phStream, Flags))
GATE("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority,
    (CUstream *phStream, unsigned int flags, int priority), (phStream, flags,
    priority))
GATE("cuStreamDestroy", 2000, cuStreamDestroy, (CUstream hStream), (hStream))
GATE("cuStreamDestroy", 4000, cuStreamDestroy_v2,
    (CUstream hStream), (hStream))
GATE_PT("cuStreamGetFlags", 5050, cuStreamGetFlags, 7000, cuStreamGetFlags_ptsz,
    (CUstream hStream, unsigned int *flags), (hStream, flags))
GATE_PT("cuStreamGetPriority", 5050, cuStreamGetPriority, 7000, cuStreamGetPriority_ptsz,
    (CUstream hStream, int *priority), (hStream, priority))
GATE_PT("cuStreamQuery", 2000, cuStreamQuery, 7000, cuStreamQuery_ptsz,
    (CUstream hStream), (hStream))
GATE_SYNC_PT("cuStreamSynchronize", 2000, cuStreamSynchronize,
    7000, cuStreamSynchronize_ptsz, (CUstream hStream), (hStream))
GATE_PT("cuStreamWaitEvent", 3020, cuStreamWaitEvent, 7000, cuStreamWaitEvent_ptsz,
    (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent,
    Flags))

#undef P_LAUNCH
#undef A_LAUNCH
#undef P_BATCH
#undef A_BATCH
#undef P_PEER
#undef A_PEER
#undef P_SET2D
#undef A_SET2D
#undef GATE
#undef GATE_PT
#undef GATE_IPC
#undef GATE_SYNC
#undef GATE_SYNC_PT
#undef GATE_OWN
#undef GATE_OWN_ABI
#undef GATE_CTX
#undef GATE_CTX_ABI
#undef HOOK
#undef HOOK_PT
#undef HOOK_ABI
#undef GATE_ABI
#undef IPC_ABI
#undef NEWER
