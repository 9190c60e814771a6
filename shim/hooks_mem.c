/*
 * The memory hooks (DESIGN.md §2): reserve, allocate, then commit or roll
 * back; free, then report it. cuMemGetInfo and cuDeviceTotalMem show the
 * process its own share of the device.
 */
#include <stdint.h>

#include "activity.h"
#include "client.h"
#include "gpufrac/proto.h"
#include "alloc_table.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "lease.h"
#include "log.h"
#include "mem.h"
#include "real.h"
#include "vback.h"

#define MEM_PITCH_ALIGN	512	/* what a pitch is reserved as, at least */

/*
 * How many devices the process sees, learnt with the first context. With
 * one, every context is on it, and the lease's fast path need not ask.
 */
#define MEM_DEVICES_UNKNOWN	0
#define MEM_DEVICES_ONE		1
#define MEM_DEVICES_MANY	2
static int mem_devices;

uint64_t
mem_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

int
mem_device(void)
{
	static int said;
	CUdevice dev;
	int n;

	if (real_cu.cuCtxGetDevice == NULL) {
		if (shim_once(&said))
			log_errx("the driver has no cuCtxGetDevice; memory is "
			    "not accounted");
		return -1;
	}
	if (real_cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return -1;	/* no context: the driver call fails anyway */
	if (__atomic_load_n(&mem_devices, __ATOMIC_RELAXED) ==
	    MEM_DEVICES_UNKNOWN && real_cu.cuDeviceGetCount != NULL &&
	    real_cu.cuDeviceGetCount(&n) == CUDA_SUCCESS)
		__atomic_store_n(&mem_devices, n == 1 ? MEM_DEVICES_ONE :
		    MEM_DEVICES_MANY, __ATOMIC_RELAXED);
	return dev;
}

/*
 * The device a lease is drawn on. With one device there is no need to ask
 * the driver: without a context the allocation fails and the draw goes
 * back.
 */
static inline int
mem_lease_device(void)
{
	if (__atomic_load_n(&mem_devices, __ATOMIC_RELAXED) == MEM_DEVICES_ONE)
		return 0;
	return mem_device();
}

/* mem_reserve for device dev (-1: not accounted). */
static CUresult
mem_reserve_on(int dev, uint64_t size, uint32_t kind, struct client_ticket *t)
{
	if (dev < 0) {
		t->dev = -1;
		return CUDA_SUCCESS;
	}
	return client_reserve(dev, size, kind, t);
}

CUresult
mem_reserve(uint64_t size, uint32_t kind, struct client_ticket *t)
{
	return mem_reserve_on(mem_device(), size, kind, t);
}

/*
 * After the driver answered r: commit ptr (size bytes), or roll back.
 * The driver may have taken more than was reserved (a pitch it chose, a
 * backed allocation rounded up): the rest is reserved before the commit.
 */
static CUresult
mem_settle(CUresult r, struct client_ticket *t, CUdeviceptr ptr,
    uint64_t size)
{
	if (r != CUDA_SUCCESS) {
		client_rollback(t);
		return r;
	}
	if (t->dev >= 0 && size > t->size && (r = client_reserve_more(t,
	    t->dev, size - t->size, t->kind)) != CUDA_SUCCESS)
		goto out_free;
	if (client_commit(t, ptr, size) == 0)
		return CUDA_SUCCESS;
	/* Memory the shim cannot record would be charged for ever. */
	r = CUDA_ERROR_OUT_OF_MEMORY;
out_free:
	vback_free(ptr);
	client_rollback(t);
	return r;
}

/*
 * The driver's allocation of size bytes: backed for the copy engine when
 * held is not 0 (vback.h), else the driver's own.
 */
static inline __attribute__((always_inline)) CUresult
mem_driver_alloc(CUdeviceptr *dptr, size_t size, uint64_t held, int dev)
{
	if (held != 0)
		return vback_alloc(dptr, size, held, dev);
	return REAL_CALL(cuMemAlloc_v2, dptr, size);
}

/*
 * The fast path: n bytes (held, or size) already drawn from dev's lease.
 * Recorded as such, the allocation is never told to the daemon; its free
 * gives the bytes back to the lease.
 */
static inline __attribute__((always_inline)) CUresult
mem_alloc_leased(CUdeviceptr *dptr, size_t size, uint64_t held, int dev)
{
	uint64_t n = held ? held : size;
	CUresult r = mem_driver_alloc(dptr, size, held, dev);
	struct alloc_entry old;
	int added;

	if (r == CUDA_SUCCESS && (added = alloc_table_add(*dptr, n,
	    GF_KIND_MEM, dev, ALLOC_LEASED, &old)) >= 0) {
		if (__builtin_expect(added, 0))
			client_stale(*dptr, &old);
		return CUDA_SUCCESS;
	}
	if (r == CUDA_SUCCESS) {
		/* Memory the shim cannot record would be charged for ever. */
		vback_free(*dptr);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	client_lease_give(dev, n);
	return r;
}

/*
 * cuMemAlloc: from the lease when it has room, else reserved. A driver
 * out-of-memory on either is asked again as a collision (issue 20). With
 * the copy engine, what it holds is rounded up to the granularity; the
 * process's first allocation learns of the engine only once reserved.
 * Inlined twice (mem_alloc), so that without the engine (backed 0) the
 * fast path does not carry the engine's sums.
 */
static inline __attribute__((always_inline)) CUresult
mem_alloc_as(CUdeviceptr *dptr, size_t size, int backed)
{
	struct client_ticket t;
	uint64_t held;
	CUresult r;
	int dev;

	dev = mem_lease_device();
	held = backed ? vback_size(dev, size) : 0;
	if (dev >= 0 && lease_draw(dev, held ? held : size)) {
		if ((r = mem_alloc_leased(dptr, size, held, dev)) !=
		    CUDA_ERROR_OUT_OF_MEMORY)
			return r;
		r = client_reserve_refused(dev, held ? held : size,
		    GF_KIND_MEM, &t);
	} else
		r = mem_reserve(held ? held : size, GF_KIND_MEM, &t);
	if (r != CUDA_SUCCESS)
		return r;
	if (held == 0 && vback_engine())
		held = vback_size(t.dev, size);
	CLIENT_DRIVER_CALL(r, &t, mem_driver_alloc(dptr, size, held, t.dev));
	return mem_settle(r, &t, r == CUDA_SUCCESS ? *dptr : 0,
	    held ? held : size);
}

static CUresult
mem_alloc(CUdeviceptr *dptr, size_t size)
{
	if (__builtin_expect(vback_engine(), 0))
		return mem_alloc_as(dptr, size, 1);
	return mem_alloc_as(dptr, size, 0);
}

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuMemAlloc_v2, dptr, bytesize);
	act = activity_enter();
	/* Nothing to charge: the driver rejects these by itself. */
	if (dptr == NULL || bytesize == 0)
		r = REAL_CALL(cuMemAlloc_v2, dptr, bytesize);
	else
		r = mem_alloc(dptr, bytesize);
	activity_leave(act);
	hook_leave();
	return r;
}

/*
 * The driver picks the pitch, so the reservation is a lower bound (the row
 * rounded up to 512 bytes) and the commit says what was really taken.
 */
CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
    size_t Height, unsigned int ElementSizeBytes)
{
	struct gf_activity *act;
	struct client_ticket t;
	uint64_t row, held = 0;
	CUresult r;

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuMemAllocPitch_v2, dptr, pPitch,
		    WidthInBytes, Height, ElementSizeBytes);
	act = activity_enter();
	row = WidthInBytes > UINT64_MAX - (MEM_PITCH_ALIGN - 1) ? UINT64_MAX :
	    (WidthInBytes + MEM_PITCH_ALIGN - 1) & ~(uint64_t)(MEM_PITCH_ALIGN - 1);
	if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0)
		r = REAL_CALL(cuMemAllocPitch_v2, dptr, pPitch, WidthInBytes,
		    Height, ElementSizeBytes);
	else if ((r = mem_reserve(mem_mul(row, Height), GF_KIND_PITCH, &t)) ==
	    CUDA_SUCCESS) {
		CLIENT_DRIVER_CALL(r, &t, vback_alloc_pitch(dptr, pPitch,
		    WidthInBytes, Height, ElementSizeBytes, t.dev, &held));
		r = mem_settle(r, &t, r == CUDA_SUCCESS ? *dptr : 0, held);
	}
	activity_leave(act);
	hook_leave();
	return r;
}

CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	struct gf_activity *act;
	struct client_ticket t;
	CUresult r;

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuMemAllocManaged, dptr, bytesize,
		    flags);
	act = activity_enter();
	if (dptr == NULL || bytesize == 0)
		r = REAL_CALL(cuMemAllocManaged, dptr, bytesize, flags);
	else if ((r = mem_reserve(bytesize, GF_KIND_MANAGED, &t)) ==
	    CUDA_SUCCESS) {
		r = REAL_CALL(cuMemAllocManaged, dptr, bytesize, flags);
		r = mem_settle(r, &t, r == CUDA_SUCCESS ? *dptr : 0,
		    bytesize);
	}
	activity_leave(act);
	hook_leave();
	return r;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemFree_v2, dptr);
	act = activity_enter();
	if (dptr == 0 || real_cu.cuMemFree_v2 == NULL)
		r = REAL_CALL(cuMemFree_v2, dptr);
	else
		r = client_free(dptr, vback_free_fn());
	activity_leave(act);
	hook_leave();
	return r;
}

/*
 * An allocation backed for the copy engine is a mapping rounded up to the
 * granularity: the program is shown the size it asked for, as the bare
 * driver would show it.
 */
CUresult
cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	struct gf_activity *act;
	CUdeviceptr base = 0;
	CUcontext ctx;
	uint64_t size;
	size_t n = 0;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemGetAddressRange_v2, pbase, psize, dptr);
	act = activity_enter();
	r = REAL_CALL(cuMemGetAddressRange_v2, &base, &n, dptr);
	if (r == CUDA_SUCCESS && vback_shown(base, &size, &ctx))
		n = size;
	if (r == CUDA_SUCCESS && pbase != NULL)
		*pbase = base;
	if (r == CUDA_SUCCESS && psize != NULL)
		*psize = n;
	activity_leave(act);
	hook_leave();
	return r;
}

/*
 * The view (client.h), free kept within what the driver has free
 * (DESIGN.md §3) and within total, which a capacity below the limit could
 * otherwise break.
 */
static void
mem_view_apply(const struct client_view *v, size_t *free_bytes,
    size_t *total_bytes)
{
	uint64_t avail = v->free;

	if (avail > *free_bytes)
		avail = *free_bytes;
	if (avail > v->total)
		avail = v->total;
	*free_bytes = avail;
	*total_bytes = v->total;
}

CUresult
cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	struct gf_activity *act;
	struct client_view v;
	CUresult r;
	int dev;

	if (!hook_enter())
		return REAL_CALL(cuMemGetInfo_v2, free_bytes, total_bytes);
	act = activity_enter();
	r = REAL_CALL(cuMemGetInfo_v2, free_bytes, total_bytes);
	if (r == CUDA_SUCCESS && free_bytes != NULL && total_bytes != NULL &&
	    (dev = mem_device()) >= 0 && client_view(dev, *total_bytes, &v) == 0)
		mem_view_apply(&v, free_bytes, total_bytes);
	activity_leave(act);
	hook_leave();
	return r;
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	struct gf_activity *act;
	struct client_view v;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuDeviceTotalMem_v2, bytes, dev);
	act = activity_enter();
	r = REAL_CALL(cuDeviceTotalMem_v2, bytes, dev);
	if (r == CUDA_SUCCESS && bytes != NULL &&
	    client_view(dev, *bytes, &v) == 0)
		*bytes = v.total;
	activity_leave(act);
	hook_leave();
	return r;
}
