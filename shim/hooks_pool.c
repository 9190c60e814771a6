/*
 * Stream-ordered allocation hooks (issue 5): an allocation from a pool
 * charges what the pool grows by (pool.h); a trim, a
 * synchronisation or the pool's destruction charges what it gives back.
 * cuMemFreeAsync only returns memory to the pool: a gated pass-through.
 */
#include <stdint.h>

#include "activity.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "mem.h"
#include "pool.h"
#include "real.h"

typedef CUresult async_fn(CUdeviceptr *, size_t, CUstream);
typedef CUresult from_fn(CUdeviceptr *, size_t, CUmemoryPool, CUstream);

/*
 * One allocation call, whichever of the four entry points it came by: the
 * real_cu field to call, read only once hook_enter has resolved them.
 */
struct pool_call {
	async_fn	*const *fn;
	from_fn		*const *from_fn;
	CUdeviceptr	*dptr;
	size_t		 size;
	CUmemoryPool	 pool;
	CUstream	 stream;
};

static CUresult
pool_call_run(void *arg)
{
	const struct pool_call *c = arg;

	if (c->from_fn != NULL && *c->from_fn != NULL)
		return (*c->from_fn)(c->dptr, c->size, c->pool, c->stream);
	if (c->fn != NULL && *c->fn != NULL)
		return (*c->fn)(c->dptr, c->size, c->stream);
	return real_missing(c->fn != NULL ? "cuMemAllocAsync" :
	    "cuMemAllocFromPoolAsync");
}

/*
 * A growth the daemon would not cover: the allocation freed in its
 * stream's order, and waited for, so that the pool has it back to trim.
 * A per-thread variant's stream is the per-thread one's.
 */
static void
pool_call_undo(void *arg)
{
	const struct pool_call *c = arg;
	int ptsz = c->fn == &real_cu.cuMemAllocAsync_ptsz ||
	    c->from_fn == &real_cu.cuMemAllocFromPoolAsync_ptsz;

	if (ptsz && REAL_CALL(cuMemFreeAsync_ptsz, *c->dptr, c->stream) ==
	    CUDA_SUCCESS)
		(void)REAL_CALL(cuStreamSynchronize_ptsz, c->stream);
	else if (!ptsz && REAL_CALL(cuMemFreeAsync, *c->dptr, c->stream) ==
	    CUDA_SUCCESS)
		(void)REAL_CALL(cuStreamSynchronize, c->stream);
}

/* c->pool NULL: the current device's current pool. */
static CUresult
pool_hooked(struct pool_call *c)
{
	const struct pool_request q = { pool_call_run, pool_call_undo, c };
	struct gf_activity *act;
	CUresult r;
	int dev;

	act = activity_enter();
	dev = mem_device();
	if (c->pool == NULL && dev >= 0 &&
	    REAL_CALL(cuDeviceGetMemPool, &c->pool, dev) != CUDA_SUCCESS)
		c->pool = NULL;
	/* No device or no pool: the driver says why, nothing to charge. */
	if (c->dptr == NULL || c->size == 0 || dev < 0 || c->pool == NULL)
		r = pool_call_run(c);
	else
		r = pool_alloc(c->pool, dev, c->size, &q);
	activity_leave(act);
	hook_leave();
	return r;
}

static CUresult
pool_async(async_fn *const *fn, CUdeviceptr *dptr, size_t size,
    CUstream stream)
{
	struct pool_call c = { fn, NULL, dptr, size, NULL, stream };

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    pool_call_run(&c);
	return pool_hooked(&c);
}

static CUresult
pool_from(from_fn *const *fn, CUdeviceptr *dptr, size_t size,
    CUmemoryPool pool, CUstream stream)
{
	struct pool_call c = { NULL, fn, dptr, size, pool, stream };

	/* The driver refuses a NULL pool by itself. */
	if (pool == NULL)
		return pool_call_run(&c);
	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    pool_call_run(&c);
	return pool_hooked(&c);
}

CUresult
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return pool_async(&real_cu.cuMemAllocAsync, dptr, bytesize, hStream);
}

CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return pool_async(&real_cu.cuMemAllocAsync_ptsz, dptr, bytesize,
	    hStream);
}

CUresult
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
    CUmemoryPool pool, CUstream hStream)
{
	return pool_from(&real_cu.cuMemAllocFromPoolAsync, dptr, bytesize,
	    pool, hStream);
}

CUresult
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
    CUmemoryPool pool, CUstream hStream)
{
	return pool_from(&real_cu.cuMemAllocFromPoolAsync_ptsz, dptr,
	    bytesize, pool, hStream);
}

CUresult
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemPoolTrimTo, pool, minBytesToKeep);
	act = activity_enter();
	r = REAL_CALL(cuMemPoolTrimTo, pool, minBytesToKeep);
	if (r == CUDA_SUCCESS)
		pool_settle(pool);
	activity_leave(act);
	hook_leave();
	return r;
}

static CUresult
pool_destroy_run(void *arg)
{
	return REAL_CALL(cuMemPoolDestroy, (CUmemoryPool)arg);
}

CUresult
cuMemPoolDestroy(CUmemoryPool pool)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemPoolDestroy, pool);
	act = activity_enter();
	r = pool_destroy(pool, pool_destroy_run, pool);
	activity_leave(act);
	hook_leave();
	return r;
}
