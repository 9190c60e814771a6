/*
 * Array hooks (issue 5): CUDA arrays and mipmapped arrays hold device
 * memory of a size the driver chooses (padded rows, alignment). Reserve
 * what the driver says such an array needs, create it, commit; destroying
 * it returns the charge.
 *
 * The driver answers cuArrayGetMemoryRequirements only for arrays made
 * with CUDA_ARRAY3D_DEFERRED_MAPPING (CUDA Driver API, "Array
 * management"), which hold no memory: the size is asked of such a twin
 * of the same descriptor, made and destroyed at once. Without it (a
 * driver before 11.6, a format it refuses deferred) the size is the
 * elements' bytes, twice that for a mipmap chain.
 */
#include <stdint.h>

#include "activity.h"
#include "client.h"
#include "ctx_table.h"
#include "gpufrac/proto.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "mem.h"
#include "real.h"

/* Array handles are host pointers: tagged, a key never meets an address. */
#define ARRAY_KEY_TAG	(1ull << 63)

/* One creation: an array from a 2D or 3D descriptor, or a mipmap chain. */
struct array_call {
	CUDA_ARRAY3D_DESCRIPTOR desc;	/* as 3D, whatever was passed */
	unsigned	 levels;	/* 0: an array, else a mipmap chain */
	const CUDA_ARRAY_DESCRIPTOR *d2; /* the caller's, for cuArrayCreate */
	CUarray		*array;
	CUmipmappedArray *mipmap;
};

static uint64_t
format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	default:
		return 4;	/* 32-bit and packed formats: an upper bound */
	}
}

static uint64_t
array_estimate(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
	uint64_t n = mem_mul(d->Width, d->Height ? d->Height : 1);

	n = mem_mul(n, d->Depth ? d->Depth : 1);
	n = mem_mul(n, mem_mul(d->NumChannels, format_bytes(d->Format)));
	return levels > 1 ? mem_mul(n, 2) : n;
}

/* What the driver needs for c on dev, asked of a deferred twin; 0 if not. */
static uint64_t
array_required(const struct array_call *c, int dev)
{
	CUDA_ARRAY3D_DESCRIPTOR twin = c->desc;
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUmipmappedArray m;
	CUarray a;
	CUresult r;

	twin.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
	if (c->levels == 0) {
		if (real_cu.cuArrayGetMemoryRequirements == NULL ||
		    REAL_CALL(cuArray3DCreate_v2, &a, &twin) != CUDA_SUCCESS)
			return 0;
		r = real_cu.cuArrayGetMemoryRequirements(&req, a, dev);
		REAL_CALL(cuArrayDestroy, a);
	} else {
		if (real_cu.cuMipmappedArrayGetMemoryRequirements == NULL ||
		    REAL_CALL(cuMipmappedArrayCreate, &m, &twin, c->levels) !=
		    CUDA_SUCCESS)
			return 0;
		r = real_cu.cuMipmappedArrayGetMemoryRequirements(&req, m, dev);
		REAL_CALL(cuMipmappedArrayDestroy, m);
	}
	return r == CUDA_SUCCESS ? req.size : 0;
}

static CUresult
array_make(const struct array_call *c)
{
	if (c->levels != 0)
		return REAL_CALL(cuMipmappedArrayCreate, c->mipmap, &c->desc,
		    c->levels);
	if (c->d2 != NULL)
		return REAL_CALL(cuArrayCreate_v2, c->array, c->d2);
	return REAL_CALL(cuArray3DCreate_v2, c->array, &c->desc);
}

static uint64_t
array_key(const struct array_call *c)
{
	return (c->levels != 0 ? (uint64_t)(uintptr_t)*c->mipmap :
	    (uint64_t)(uintptr_t)*c->array) | ARRAY_KEY_TAG;
}

static void
array_unmake(const struct array_call *c)
{
	if (c->levels != 0)
		REAL_CALL(cuMipmappedArrayDestroy, *c->mipmap);
	else
		REAL_CALL(cuArrayDestroy, *c->array);
}

/* Reserve, create, commit; within hook_enter/activity_enter. */
static CUresult
array_create(const struct array_call *c)
{
	struct client_ticket t;
	CUcontext ctx;
	uint64_t size;
	int dev = mem_device();
	CUresult r;

	if (dev < 0)
		return array_make(c);	/* no context: the driver says why */
	if ((size = array_required(c, dev)) == 0)
		size = array_estimate(&c->desc, c->levels);
	if ((r = mem_reserve(size, GF_KIND_ARRAY, &t)) != CUDA_SUCCESS)
		return r;
	CLIENT_DRIVER_CALL(r, &t, array_make(c));
	if (r != CUDA_SUCCESS) {
		client_rollback(&t);
		return r;
	}
	/* Its context, for when that ends (hooks_ctx.c); none: no record. */
	if (real_cu.cuCtxGetCurrent == NULL ||
	    real_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS ||
	    ctx_array_made(array_key(c), ctx) == 0) {
		if (client_commit(&t, array_key(c), size) == 0)
			return CUDA_SUCCESS;
		ctx_array_gone(array_key(c));
	}
	/* Memory the shim cannot record would be charged for ever. */
	array_unmake(c);
	client_rollback(&t);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult
array_hook(struct array_call *c)
{
	struct gf_activity *g;
	CUresult r;

	g = activity_enter();
	r = array_create(c);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	struct array_call c = { .d2 = pAllocateArray, .array = pHandle };

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuArrayCreate_v2, pHandle,
		    pAllocateArray);
	if (pHandle == NULL || pAllocateArray == NULL) {
		hook_leave();
		return REAL_CALL(cuArrayCreate_v2, pHandle, pAllocateArray);
	}
	c.desc.Width = pAllocateArray->Width;
	c.desc.Height = pAllocateArray->Height;
	c.desc.Format = pAllocateArray->Format;
	c.desc.NumChannels = pAllocateArray->NumChannels;
	return array_hook(&c);
}

CUresult
cuArray3DCreate_v2(CUarray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	struct array_call c = { .array = pHandle };

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuArray3DCreate_v2, pHandle,
		    pAllocateArray);
	/* Deferred arrays hold no memory until mapped (not accounted). */
	if (pHandle == NULL || pAllocateArray == NULL ||
	    (pAllocateArray->Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) {
		hook_leave();
		return REAL_CALL(cuArray3DCreate_v2, pHandle, pAllocateArray);
	}
	c.desc = *pAllocateArray;
	return array_hook(&c);
}

CUresult
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
    unsigned int numMipmapLevels)
{
	struct array_call c = { .mipmap = pHandle, .levels = numMipmapLevels };

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuMipmappedArrayCreate, pHandle,
		    pMipmappedArrayDesc, numMipmapLevels);
	if (pHandle == NULL || pMipmappedArrayDesc == NULL ||
	    numMipmapLevels == 0 ||
	    (pMipmappedArrayDesc->Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) {
		hook_leave();
		return REAL_CALL(cuMipmappedArrayCreate, pHandle,
		    pMipmappedArrayDesc, numMipmapLevels);
	}
	c.desc = *pMipmappedArrayDesc;
	return array_hook(&c);
}

static CUresult
array_destroy_run(void *arg)
{
	return REAL_CALL(cuArrayDestroy, (CUarray)arg);
}

static CUresult
mipmap_destroy_run(void *arg)
{
	return REAL_CALL(cuMipmappedArrayDestroy, (CUmipmappedArray)arg);
}

/* Destroy through run(handle) and return the charge recorded for it. */
static CUresult
array_release(void *handle, CUresult (*run)(void *))
{
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return run(handle);
	g = activity_enter();
	r = client_release((uint64_t)(uintptr_t)handle | ARRAY_KEY_TAG, run,
	    handle);
	if (r == CUDA_SUCCESS)
		ctx_array_gone((uint64_t)(uintptr_t)handle | ARRAY_KEY_TAG);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuArrayDestroy(CUarray hArray)
{
	return array_release(hArray, array_destroy_run);
}

CUresult
cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	return array_release(hMipmappedArray, mipmap_destroy_run);
}
