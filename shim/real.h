/*
 * The real driver's entry points, resolved once at start, and the call
 * that says so when the driver lacks one.
 */
#ifndef GF_SHIM_REAL_H
#define GF_SHIM_REAL_H

#include <cuda.h>

#include "shim.h"

/*
 * Pointers into libcuda.so.1, found with the real dlsym on its handle (never
 * RTLD_NEXT: numba loads the driver RTLD_LOCAL). A member is NULL when the
 * driver lacks the symbol. Fields are named after the driver's symbols,
 * except where cuda.h makes that name a macro (noted).
 */
struct real_driver {
	CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*cuMemAllocPitch_v2)(CUdeviceptr *, size_t *, size_t,
		    size_t, unsigned int);
	CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*cuMemFree_v2)(CUdeviceptr);
	CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
	CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
	/* "cuGetProcAddress", the 4-argument one of CUDA 11.3 */
	CUresult (*cuGetProcAddress_v1)(const char *, void **, int,
		    cuuint64_t);
	CUresult (*cuGetProcAddress_v2)(const char *, void **, int,
		    cuuint64_t, CUdriverProcAddressQueryResult *);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuMemGetAddressRange_v2)(CUdeviceptr *, size_t *,
		    CUdeviceptr);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
	CUresult (*cuDeviceGetUuid_v2)(CUuuid *, CUdevice);
	/* "cuDeviceGetUuid", for drivers older than 11.4 */
	CUresult (*cuDeviceGetUuid_v1)(CUuuid *, CUdevice);
	CUresult (*cuArrayCreate_v2)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
	CUresult (*cuArray3DCreate_v2)(CUarray *,
		    const CUDA_ARRAY3D_DESCRIPTOR *);
	CUresult (*cuArrayDestroy)(CUarray);
	CUresult (*cuMipmappedArrayCreate)(CUmipmappedArray *,
		    const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int);
	CUresult (*cuMipmappedArrayDestroy)(CUmipmappedArray);
	CUresult (*cuArrayGetMemoryRequirements)(
		    CUDA_ARRAY_MEMORY_REQUIREMENTS *, CUarray, CUdevice);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t,
		    const CUmemAllocationProp *, unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	CUresult (*cuMemRetainAllocationHandle)(
		    CUmemGenericAllocationHandle *, void *);
	CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t,
		    CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
	CUresult (*cuMemExportToShareableHandle)(void *,
		    CUmemGenericAllocationHandle, CUmemAllocationHandleType,
		    unsigned long long);
	CUresult (*cuMemGetAllocationPropertiesFromHandle)(
		    CUmemAllocationProp *, CUmemGenericAllocationHandle);
	CUresult (*cuMemMapArrayAsync)(CUarrayMapInfo *, unsigned int,
		    CUstream);
	CUresult (*cuMemMapArrayAsync_ptsz)(CUarrayMapInfo *, unsigned int,
		    CUstream);
	CUresult (*cuMulticastBindMem)(CUmemGenericAllocationHandle, size_t,
		    CUmemGenericAllocationHandle, size_t, size_t,
		    unsigned long long);
	CUresult (*cuMemPoolGetAttribute)(CUmemoryPool, CUmemPool_attribute,
		    void *);
	CUresult (*cuDeviceGetMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemAllocAsync_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t,
		    CUmemoryPool, CUstream);
	CUresult (*cuMemAllocFromPoolAsync_ptsz)(CUdeviceptr *, size_t,
		    CUmemoryPool, CUstream);
	CUresult (*cuMemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
	CUresult (*cuMemPoolDestroy)(CUmemoryPool);
	CUresult (*cuMemPoolTrimTo)(CUmemoryPool, size_t);
	CUresult (*cuMipmappedArrayGetMemoryRequirements)(
		    CUDA_ARRAY_MEMORY_REQUIREMENTS *, CUmipmappedArray,
		    CUdevice);
	/* "cuCtxDestroy", "cuDevicePrimaryCtxReset", "...Release": v1 ABIs */
	CUresult (*cuCtxDestroy_v1)(CUcontext);
	CUresult (*cuCtxDestroy_v2)(CUcontext);
	CUresult (*cuDevicePrimaryCtxReset_v1)(CUdevice);
	CUresult (*cuDevicePrimaryCtxReset_v2)(CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease_v1)(CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuPointerGetAttribute)(void *, CUpointer_attribute,
		    CUdeviceptr);
	CUresult (*cuPointerGetAttributes)(unsigned int,
		    CUpointer_attribute *, void **, CUdeviceptr);
	/* one per gated pass-through of hooks_list.h, named as it exports */
#define GATE_ABI(name, version, ptds, symbol, flag, params, args) \
	CUresult (*symbol) params;
#include "hooks_list.h"
};

/* Filled by real_load() at start; read-only afterwards. */
extern struct real_driver real_cu;

/*
 * Call real_cu.fn, or when the driver has no such function return
 * CUDA_ERROR_NOT_INITIALIZED (said once on stderr).
 */
#define REAL_CALL(fn, ...)						\
	(real_cu.fn != NULL ? real_cu.fn(__VA_ARGS__) : real_missing(#fn))

CUresult real_missing(const char *name);

/*
 * Find the driver (libcuda.so.1, as the program loaded it or would) with
 * glibc's dlsym, and fill real_cu; once, at start (init.c). -1: no driver,
 * said on stderr.
 */
int	real_load(void);

#endif
