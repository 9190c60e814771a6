/*
 * The shim's hooks: the driver entry points it exports under the driver's
 * own versioned names, and the one sorted table through which
 * cuGetProcAddress and dlsym find them.
 */
#ifndef GF_SHIM_HOOKS_H
#define GF_SHIM_HOOKS_H

#include <stddef.h>

#include <cuda.h>

#include "procaddr.h"
#include "shim.h"

/*
 * CUDA 13's cuda.h makes cuGetProcAddress a macro for the 5-argument
 * cuGetProcAddress_v2; the 4-argument CUDA 11.3 ABI keeps the plain name.
 */
#undef cuGetProcAddress

SHIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
SHIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
		    size_t WidthInBytes, size_t Height,
		    unsigned int ElementSizeBytes);
SHIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
		    unsigned int flags);
SHIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr);
SHIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase,
		    size_t *psize, CUdeviceptr dptr);
SHIM_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
SHIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
SHIM_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle,
		    const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
SHIM_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle,
		    const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
SHIM_EXPORT CUresult cuArrayDestroy(CUarray hArray);
SHIM_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
		    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
		    unsigned int numMipmapLevels);
SHIM_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray);
SHIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle,
		    size_t size, const CUmemAllocationProp *prop,
		    unsigned long long flags);
SHIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
SHIM_EXPORT CUresult cuMemRetainAllocationHandle(
		    CUmemGenericAllocationHandle *handle, void *addr);
SHIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		    CUmemGenericAllocationHandle handle,
		    unsigned long long flags);
SHIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
SHIM_EXPORT CUresult cuMemExportToShareableHandle(void *shareableHandle,
		    CUmemGenericAllocationHandle handle,
		    CUmemAllocationHandleType handleType,
		    unsigned long long flags);
SHIM_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(
		    CUmemAllocationProp *prop,
		    CUmemGenericAllocationHandle handle);
SHIM_EXPORT CUresult cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList,
		    unsigned int count, CUstream hStream);
SHIM_EXPORT CUresult cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList,
		    unsigned int count, CUstream hStream);
SHIM_EXPORT CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle,
		    size_t mcOffset, CUmemGenericAllocationHandle memHandle,
		    size_t memOffset, size_t size, unsigned long long flags);
SHIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize,
		    CUstream hStream);
SHIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
		    CUstream hStream);
SHIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr,
		    size_t bytesize, CUmemoryPool pool, CUstream hStream);
SHIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr,
		    size_t bytesize, CUmemoryPool pool, CUstream hStream);
SHIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
SHIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool);
SHIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
		    int cudaVersion, cuuint64_t flags);
SHIM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
		    int cudaVersion, cuuint64_t flags,
		    CUdriverProcAddressQueryResult *symbolStatus);
SHIM_EXPORT CUresult cuPointerGetAttribute(void *data,
		    CUpointer_attribute attribute, CUdeviceptr ptr);
SHIM_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
		    CUpointer_attribute *attributes, void **data,
		    CUdeviceptr ptr);

/* Context ends (hooks_ctx.c); after hooks_list.h, cuda.h's macros gone. */
#include "hooks_list.h"
SHIM_EXPORT CUresult cuCtxDestroy(CUcontext ctx);
SHIM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx);
SHIM_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev);
SHIM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
SHIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
SHIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
SHIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);

/* The gated pass-throughs (hooks_gate.c), as hooks_list.h lists them. */
#define GATE_ABI(name, version, ptds, symbol, flag, params, args) \
	SHIM_EXPORT CUresult symbol params;
#define GATE_OWN_ABI(name, version, symbol, real, params, args) \
	SHIM_EXPORT CUresult symbol params;
#include "hooks_list.h"

/* The flag of a gated synchronisation (hooks_list.h): not a GF_ACT_*. */
#define GATE_SYNC_FLAG	0x80000000u
/* The flag of a gated call that makes a context, its first argument. */
#define GATE_CTX_FLAG	0x40000000u

/*
 * Every hook, by (name, CUDA version of its ABI, per-thread variant), sorted
 * as procaddr_find requires; the symbol field is its exported name, which
 * the dlsym path looks up with procaddr_by_symbol. An entry whose fn is
 * NULL is a newer ABI that is not hooked (symbol: the driver's name for
 * it): both paths must leave the driver's function in place.
 */
extern const struct procaddr hooks_table[];
extern const size_t hooks_table_len;

/* The NVML hooks (hooks_nvml.c), for dlsym only. */
extern const struct procaddr nvml_hooks[];
extern const size_t nvml_hooks_len;

#endif
