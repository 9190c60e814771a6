/*
 * The copy engine in the process (vback.h): plain allocations backed by
 * the driver's virtual memory management, freed and looked up. Moving
 * their contents is vback_move.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_table.h"
#include "log.h"
#include "ptrmap.h"
#include "real.h"
#include "vback.h"
#include "vback_int.h"

#define VBACK_DEVICES	63	/* reached peer to peer: a mask's bits */

pthread_mutex_t vback_lock = PTHREAD_MUTEX_INITIALIZER;
struct ptrmap vback_map;
int vback_is_out;
size_t vback_count;		/* in the map: 0 spares a free the lock */
static uint64_t vback_gran;		/* the granularity; 0: not known */
static int vback_plain;			/* the driver refused the flags */
static uint8_t vback_rdma[VBACK_DEVICES];	/* 1 GPUDirect RDMA, 2 not */

/*
 * Whether dev's VMM memory can be GPUDirect RDMA capable (asked once):
 * a cuMemAlloc is where the device supports it, and NICs (NCCL over
 * InfiniBand, nvidia-peermem) register backed memory only if it is.
 */
static int
vback_rdma_ok(int dev)
{
	uint8_t v = __atomic_load_n(&vback_rdma[dev], __ATOMIC_RELAXED);
	int on = 0;

	if (v == 0) {
		if (REAL_CALL(cuDeviceGetAttribute, &on,
		    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
		    dev) != CUDA_SUCCESS)
			on = 0;
		v = on ? 1 : 2;
		__atomic_store_n(&vback_rdma[dev], v, __ATOMIC_RELAXED);
	}
	return v == 1;
}

static CUmemAllocationProp
vback_prop(int dev)
{
	CUmemAllocationProp p;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	if (!__atomic_load_n(&vback_plain, __ATOMIC_RELAXED)) {
		/* Exportable, for legacy IPC of backed memory (vback_ipc.c). */
		p.requestedHandleTypes =
		    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
		p.allocFlags.gpuDirectRDMACapable = (unsigned char)
		    vback_rdma_ok(dev);
	}
	return p;
}

/* The granularity, asked once (NVIDIA GPUs all say 2 MiB); 0: none. */
static uint64_t
vback_granule(int dev)
{
	CUmemAllocationProp p = vback_prop(dev);
	uint64_t g = __atomic_load_n(&vback_gran, __ATOMIC_RELAXED);
	size_t n;

	if (g != 0)
		return g;
	if (real_cu.cuMemGetAllocationGranularity == NULL ||
	    real_cu.cuMemCreate == NULL || real_cu.cuMemMap == NULL ||
	    real_cu.cuMemGetAllocationGranularity(&n, &p,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || n == 0)
		return 0;
	__atomic_store_n(&vback_gran, (uint64_t)n, __ATOMIC_RELAXED);
	return n;
}

uint64_t
vback_size(int dev, uint64_t size)
{
	uint64_t g;

	if (dev < 0 || dev >= VBACK_DEVICES || !vback_engine() ||
	    (g = vback_granule(dev)) == 0 ||
	    size < g || size > UINT64_MAX - g)
		return 0;
	return (size + g - 1) / g * g;
}

/*
 * The devices that reach dev's memory peer to peer, as a mask (asked once
 * per device). The driver's own allocations are reached by a peer once it
 * enables peer access; a backed one only by a device granted access to its
 * mapping: granted to them all ahead, so that peer access behaves as on
 * the bare driver.
 */
static uint64_t
vback_peers(int dev)
{
	static uint64_t known[VBACK_DEVICES];	/* bit 63: asked */
	uint64_t m;
	int n = 0, i, can;

	if (dev >= VBACK_DEVICES)
		return 0;
	if ((m = __atomic_load_n(&known[dev], __ATOMIC_RELAXED)) != 0)
		return m & ~(1ull << 63);
	m = 1ull << 63;
	if (REAL_CALL(cuDeviceGetCount, &n) != CUDA_SUCCESS)
		n = 0;
	for (i = 0; i < n && i < VBACK_DEVICES; i++)
		if (i != dev && REAL_CALL(cuDeviceCanAccessPeer, &can, i,
		    dev) == CUDA_SUCCESS && can)
			m |= 1ull << i;
	__atomic_store_n(&known[dev], m, __ATOMIC_RELAXED);
	return m & ~(1ull << 63);
}

/* Read-write access for dev and its peers, in acc[]; how many. */
static unsigned
vback_access(int dev, CUmemAccessDesc acc[VBACK_DEVICES])
{
	uint64_t peers = vback_peers(dev);
	unsigned n = 0;
	int i;

	memset(acc, 0, VBACK_DEVICES * sizeof(*acc));
	for (i = 0; i < VBACK_DEVICES; i++)
		if (i == dev || (peers & (1ull << i))) {
			acc[n].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
			acc[n].location.id = i;
			acc[n++].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		}
	return n;
}

CUresult
vback_map_new(struct vback *v)
{
	CUmemAllocationProp p = vback_prop(v->dev);
	CUmemAccessDesc acc[VBACK_DEVICES];
	CUresult r;

	r = real_cu.cuMemCreate(&v->h, v->held, &p, 0);
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY &&
	    p.requestedHandleTypes != 0) {
		/*
		 * No descriptors or RDMA here: backed memory has no IPC (nor
		 * RDMA) then.
		 */
		p.requestedHandleTypes = 0;
		p.allocFlags.gpuDirectRDMACapable = 0;
		if ((r = real_cu.cuMemCreate(&v->h, v->held, &p, 0)) ==
		    CUDA_SUCCESS)
			__atomic_store_n(&vback_plain, 1, __ATOMIC_RELAXED);
	}
	if (r != CUDA_SUCCESS)
		return r;
	if ((r = real_cu.cuMemMap(v->ptr, v->held, 0, v->h, 0)) !=
	    CUDA_SUCCESS)
		goto out_release;
	if ((r = REAL_CALL(cuMemSetAccess, v->ptr, v->held, acc,
	    vback_access(v->dev, acc))) == CUDA_SUCCESS)
		return CUDA_SUCCESS;
	(void)real_cu.cuMemUnmap(v->ptr, v->held);
out_release:
	(void)real_cu.cuMemRelease(v->h);
	v->h = 0;
	return r;
}

CUresult
vback_alloc(CUdeviceptr *dptr, uint64_t size, uint64_t held, int dev)
{
	struct vback *v;
	CUdeviceptr va;
	CUresult r;

	if ((v = calloc(1, sizeof(*v))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = REAL_CALL(cuCtxGetCurrent, &v->ctx)) != CUDA_SUCCESS)
		goto out_free;
	if ((r = REAL_CALL(cuMemAddressReserve, &va, held, 0, 0, 0)) !=
	    CUDA_SUCCESS)
		goto out_free;
	v->ptr = va;
	v->size = size;
	v->held = held;
	v->dev = dev;
	if ((r = vback_map_new(v)) != CUDA_SUCCESS)
		goto out_va;
	pthread_mutex_lock(&vback_lock);
	if (ptrmap_put(&vback_map, va, v) < 0) {
		pthread_mutex_unlock(&vback_lock);
		(void)real_cu.cuMemUnmap(va, held);
		(void)real_cu.cuMemRelease(v->h);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out_va;
	}
	__atomic_add_fetch(&vback_count, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&vback_lock);
	*dptr = va;
	return CUDA_SUCCESS;
out_va:
	(void)REAL_CALL(cuMemAddressFree, va, held);
out_free:
	free(v);
	return r;
}

CUresult
vback_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
    size_t height, unsigned elem, int dev, uint64_t *held)
{
	CUdeviceptr probe;
	uint64_t size;
	CUresult r;

	if (dev < 0 || !vback_engine()) {
		r = REAL_CALL(cuMemAllocPitch_v2, dptr, pitch, width, height,
		    elem);
		*held = r == CUDA_SUCCESS ? *pitch * (uint64_t)height : 0;
		return r;
	}
	/* The driver's pitch, from a one-row allocation of its own. */
	if ((r = REAL_CALL(cuMemAllocPitch_v2, &probe, pitch, width, 1,
	    elem)) != CUDA_SUCCESS)
		return r;
	(void)REAL_CALL(cuMemFree_v2, probe);
	size = *pitch * (uint64_t)height;
	if (height != 0 && size / height != *pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((*held = vback_size(dev, size)) != 0)
		return vback_alloc(dptr, size, *held, dev);
	r = REAL_CALL(cuMemAllocPitch_v2, dptr, pitch, width, height, elem);
	*held = r == CUDA_SUCCESS ? *pitch * (uint64_t)height : 0;
	return r;
}

int
vback_drop(CUdeviceptr p)
{
	struct vback *v;

	if (__atomic_load_n(&vback_count, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&vback_lock);
	/* The program's own VMM memory is not cuMemFree's: the driver says. */
	if ((v = ptrmap_get(&vback_map, p)) != NULL && v->prog != NULL)
		v = NULL;
	if (v != NULL) {
		(void)ptrmap_del(&vback_map, p);
		__atomic_sub_fetch(&vback_count, 1, __ATOMIC_RELAXED);
		/* Unpinning is slow too: kept for the next move out. */
		vback_host_put(v);
	}
	pthread_mutex_unlock(&vback_lock);
	if (v == NULL)
		return 0;
	if (v->h != 0) {
		(void)real_cu.cuMemUnmap(v->ptr, v->held);
		(void)real_cu.cuMemRelease(v->h);
	}
	vback_ipc_forget(v);
	(void)REAL_CALL(cuMemAddressFree, v->ptr, v->held);
	free(v);
	return 1;
}

CUresult
vback_free(CUdeviceptr p)
{
	if (vback_drop(p))
		return CUDA_SUCCESS;
	return REAL_CALL(cuMemFree_v2, p);
}

int
vback_shown(CUdeviceptr base, uint64_t *size, CUcontext *ctx)
{
	struct vback *v;

	if (__atomic_load_n(&vback_count, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&vback_lock);
	/* The program's own VMM memory is shown as the driver shows it. */
	if ((v = ptrmap_get(&vback_map, base)) != NULL && v->prog != NULL)
		v = NULL;
	if (v != NULL) {
		*size = v->size;
		*ctx = v->ctx;
	}
	pthread_mutex_unlock(&vback_lock);
	return v != NULL;
}

int
vback_holding(CUdeviceptr p, uint64_t *size, CUcontext *ctx)
{
	CUdeviceptr base;

	if (__atomic_load_n(&vback_count, __ATOMIC_RELAXED) == 0 ||
	    REAL_CALL(cuPointerGetAttribute, &base,
	    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) != CUDA_SUCCESS)
		return 0;
	return vback_shown(base, size, ctx);
}

int
vback_ctx_list(CUcontext ctx, uint64_t **keys, size_t *n, size_t *cap)
{
	struct vback *v;
	size_t pos = 0;
	uint64_t key;
	int r = 0;

	if (__atomic_load_n(&vback_count, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&vback_lock);
	while (r == 0 && (v = ptrmap_next(&vback_map, &pos, &key)) != NULL)
		if (v->ctx == ctx && v->prog == NULL)
			r = ctx_keys_push(keys, n, cap, key);
	pthread_mutex_unlock(&vback_lock);
	return r;
}

/* The contexts the program made (vback_ctx_made), vback_lock held. */
static CUcontext *vback_ctxs;
static size_t vback_nctxs, vback_ctxs_cap;

void
vback_ctx_made(CUcontext ctx)
{
	CUcontext *n;
	size_t i;

	pthread_mutex_lock(&vback_lock);
	for (i = 0; i < vback_nctxs && vback_ctxs[i] != ctx; i++)
		;
	if (i == vback_nctxs && ctx != NULL) {
		if (vback_nctxs == vback_ctxs_cap && (n = realloc(vback_ctxs,
		    (vback_ctxs_cap * 2 + 4) * sizeof(*n))) != NULL) {
			vback_ctxs = n;
			vback_ctxs_cap = vback_ctxs_cap * 2 + 4;
		}
		if (vback_nctxs < vback_ctxs_cap)
			vback_ctxs[vback_nctxs++] = ctx;
	}
	pthread_mutex_unlock(&vback_lock);
}

void
vback_ctxs_sync(void)
{
	CUcontext cur = NULL;
	size_t i;

	(void)REAL_CALL(cuCtxGetCurrent, &cur);
	for (i = 0; i < vback_nctxs; i++)
		if (REAL_CALL(cuCtxSetCurrent, vback_ctxs[i]) == CUDA_SUCCESS)
			(void)REAL_CALL(cuCtxSynchronize);
	(void)REAL_CALL(cuCtxSetCurrent, cur);
}

/* ctx has ended: not to be synchronised again (lock held). */
static void
vback_ctx_forget(CUcontext ctx)
{
	size_t i;

	for (i = 0; i < vback_nctxs; i++)
		if (vback_ctxs[i] == ctx) {
			vback_ctxs[i] = vback_ctxs[--vback_nctxs];
			return;
		}
}

void
vback_ctx_ending(void)
{
	pthread_mutex_lock(&vback_lock);
}

/*
 * The program's own VMM memory outlives the context current at its
 * cuMemMap (it is the process's): it moves by its device's primary
 * context from now on, retained once and kept (issue 33). NULL, and its
 * moves fail, if that cannot be had.
 */
static void
vback_ctx_reassign(CUcontext ctx)
{
	static CUcontext primary[VBACK_DEVICES];
	struct vback *v;
	size_t pos = 0;
	uint64_t key;

	while ((v = ptrmap_next(&vback_map, &pos, &key)) != NULL) {
		if (v->ctx != ctx || v->prog == NULL)
			continue;
		if (v->dev >= 0 && v->dev < VBACK_DEVICES &&
		    primary[v->dev] == NULL &&
		    REAL_CALL(cuDevicePrimaryCtxRetain, &primary[v->dev],
		    v->dev) != CUDA_SUCCESS)
			primary[v->dev] = NULL;
		v->ctx = v->dev >= 0 && v->dev < VBACK_DEVICES ?
		    primary[v->dev] : NULL;
	}
}

void
vback_ctx_gone(CUcontext ctx, int gone)
{
	if (gone) {
		vback_host_ctx_gone(ctx);
		vback_ctx_reassign(ctx);
		vback_ctx_forget(ctx);
	}
	pthread_mutex_unlock(&vback_lock);
}

void
vback_fork_prepare(void)
{
	pthread_mutex_lock(&vback_lock);
}

void
vback_fork_parent(void)
{
	pthread_mutex_unlock(&vback_lock);
}

/*
 * The child's driver starts uninitialised: its parent's mappings, pinned
 * memory and move thread are not its own. What it backed is forgotten
 * (the program's own VMM memory stays vmm_virt.c's), what was exported
 * closed.
 */
void
vback_fork_child(void)
{
	struct vback *v;
	size_t pos = 0;
	uint64_t key;

	while ((v = ptrmap_next(&vback_map, &pos, &key)) != NULL)
		if (v->prog == NULL) {
			vback_ipc_forget(v);
			free(v);
		}
	ptrmap_free(&vback_map);
	ptrmap_init(&vback_map);
	vback_count = 0;
	vback_is_out = 0;
	vback_nctxs = 0;	/* the parent's contexts */
	vback_host_fork_child();
	vback_move_fork_child();
	vback_ipc_fork_child();
	pthread_mutex_init(&vback_lock, NULL);
}

int
vback_ipc_capable(void)
{
	return !__atomic_load_n(&vback_plain, __ATOMIC_RELAXED);
}

int
vback_out(void)
{
	return __atomic_load_n(&vback_is_out, __ATOMIC_ACQUIRE);
}
