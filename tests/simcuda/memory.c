/*
 * Device memory: cuMemAlloc, cuMemAllocPitch, cuMemAllocManaged, cuMemFree,
 * cuMemGetInfo and cuMemGetAddressRange. Each allocation is real host
 * memory, charged to the current context's device in the shared state.
 */
#include <stdlib.h>

#include "sim.h"

/* Rounded up to the granule; 0 if that overflows (no device is so big). */
static uint64_t
granules(uint64_t bytes)
{
	if (bytes > UINT64_MAX - (SIM_GRANULE - 1))
		return 0;
	return (bytes + SIM_GRANULE - 1) / SIM_GRANULE * SIM_GRANULE;
}

/* Charge, back and record an allocation of `charge` bytes. */
static CUresult
mem_alloc(CUdeviceptr *dptr, size_t size, uint64_t charge, int kind,
    unsigned flags, struct CUctx_st *ctx)
{
	struct sim_alloc *a;
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
	void *p;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if (charge == 0 || charge > SIZE_MAX ||
	    state_charge(ctx->phys, charge) < 0)
		goto out_free;
	if ((p = backing_alloc((size_t)charge, SIM_GRANULE, &a->maplen)) == NULL)
		goto out_uncharge;
	a->base = (uint64_t)(uintptr_t)p;
	a->size = size;
	a->charged = charge;
	a->kind = kind;
	a->phys = ctx->phys;
	a->flags = flags;
	a->ctx = ctx;
	a->id = alloc_next_id();
	if (alloc_insert(a) < 0)
		goto out_backing;
	sim_unlock();
	*dptr = a->base;
	return CUDA_SUCCESS;
out_backing:
	backing_free(p, a->maplen);
out_uncharge:
	state_uncharge(ctx->phys, charge);
out_free:
	sim_unlock();
	free(a);
	return r;
}

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return mem_alloc(dptr, bytesize, granules(bytesize), SIM_MEM_DEVICE, 0,
	    ctx);
}

/* Rows are padded to the granule, the pitch alignment of current GPUs. */
CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
    size_t Height, unsigned int ElementSizeBytes)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	uint64_t pitch, total;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 ||
	    Height == 0 || (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
	    ElementSizeBytes != 16) || WidthInBytes > 2147483647u)
		return CUDA_ERROR_INVALID_VALUE;
	pitch = granules(WidthInBytes);
	if (__builtin_mul_overflow(pitch, (uint64_t)Height, &total))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = mem_alloc(dptr, (size_t)total, total, SIM_MEM_DEVICE, 0,
	    ctx)) == CUDA_SUCCESS)
		*pPitch = (size_t)pitch;
	return r;
}

/*
 * Managed memory is charged to the device in full when allocated: there
 * are no page faults to tell when it would move there, and charging the
 * worst case keeps it visible to capacity checks.
 */
CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL &&
	    flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	return mem_alloc(dptr, bytesize, granules(bytesize), SIM_MEM_MANAGED,
	    flags, ctx);
}

/*
 * Only the base of a live device, managed or pool allocation may be
 * freed. No current context is needed: the address names its context
 * (numba frees after popping every context, which the real driver
 * accepts). Pool memory goes back to its pool without a synchronisation,
 * as documented, so the pool keeps it (pool.c).
 */
CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	SIM_GATE();
	return alloc_free(dptr, SIM_MEM_DEVICE | SIM_MEM_MANAGED | SIM_MEM_POOL,
	    CUDA_ERROR_INVALID_VALUE);
}

CUresult
cuMemGetInfo_v2(size_t *free, size_t *total)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	uint64_t used, cap;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (free == NULL || total == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	state_meminfo_self(ctx->phys, &used, &cap);
	*total = (size_t)cap;
	*free = (size_t)(used < cap ? cap - used : 0);
	return CUDA_SUCCESS;
}

/* Any memory the driver allocated; registered host memory is the caller's. */
CUresult
cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	struct sim_alloc *a;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	a = alloc_find(dptr);
	if (a == NULL || a->kind == SIM_MEM_REGISTERED)
		r = CUDA_ERROR_NOT_FOUND;
	else {
		if (pbase != NULL)
			*pbase = a->base;
		if (psize != NULL)
			*psize = a->size;
	}
	sim_unlock();
	return r;
}
