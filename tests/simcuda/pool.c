/*
 * Stream-ordered allocation: memory pools (each device's default pool and
 * cuMemPoolCreate's) and cuMemAllocAsync/cuMemFreeAsync. The pool is what
 * is charged to the device: it reserves device memory in chunks, serves
 * allocations from them first fit, keeps what is freed, and gives whole
 * unused chunks back only at a synchronisation (down to its release
 * threshold), on cuMemPoolTrimTo and when destroyed.
 *
 * Chunks (README.md): a request of up to 2 MiB takes a new 2 MiB chunk
 * when none has room, a larger one a chunk of its size rounded up to
 * 2 MiB; what is left of a chunk serves later requests. Allocations are
 * 512-byte granules of their chunk. Work runs when issued, so the stream
 * order is always kept and a free is complete when it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define POOL_CHUNK	(2u << 20)
#define REUSE_FIRST	CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES

struct pool_chunk {
	uint64_t	base, size;
	uint64_t	used;		/* granules of its allocations */
	size_t		maplen;
	struct pool_chunk *next;
};

struct CUmemPoolHandle_st {
	int		phys;
	int		is_default;
	int		destroyed;	/* goes with its last allocation */
	CUmemPoolProps	props;
	uint64_t	threshold;	/* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
	int		reuse[3];	/* CU_MEMPOOL_ATTR_REUSE_*, stored */
	uint64_t	reserved, reserved_high, used, used_high;
	struct pool_chunk *chunks;	/* oldest first */
	struct CUmemPoolHandle_st *next;
};

/* Every pool with a handle or memory; the lock covers all of this. */
static struct CUmemPoolHandle_st *pools;
static struct CUmemPoolHandle_st *defaults[SIM_MAX_DEVICES];
static struct CUmemPoolHandle_st *current[SIM_MAX_DEVICES]; /* or default */

static uint64_t
round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

/* A handle the caller may use: made, and not destroyed. */
static struct CUmemPoolHandle_st *
pool_live(CUmemoryPool h)
{
	struct CUmemPoolHandle_st *p;

	for (p = pools; p != NULL; p = p->next)
		if (p == h)
			return p->destroyed ? NULL : p;
	return NULL;
}

static struct CUmemPoolHandle_st *
pool_new(int phys, const CUmemPoolProps *props)
{
	struct CUmemPoolHandle_st *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->phys = phys;
	p->props = *props;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
	p->next = pools;
	pools = p;
	return p;
}

/* Device phys's default pool, made on first use; NULL if out of memory. */
static struct CUmemPoolHandle_st *
pool_default(int phys)
{
	CUmemPoolProps props = {
		.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
		.handleTypes = CU_MEM_HANDLE_TYPE_NONE,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE,
		    .id = device_ordinal(phys) },
	};

	if (defaults[phys] == NULL &&
	    (defaults[phys] = pool_new(phys, &props)) != NULL)
		defaults[phys]->is_default = 1;
	return defaults[phys];
}

static void
pool_free(struct CUmemPoolHandle_st *p)
{
	struct CUmemPoolHandle_st **pp;

	for (pp = &pools; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p);
}

/*
 * Give unused chunks back to the device while at least keep bytes stay
 * reserved (cuMemPoolTrimTo's guarantee, which the release threshold
 * shares).
 */
static void
pool_trim(struct CUmemPoolHandle_st *p, uint64_t keep)
{
	struct pool_chunk **cp = &p->chunks, *c;

	while ((c = *cp) != NULL) {
		if (c->used != 0 || p->reserved - c->size < keep) {
			cp = &c->next;
			continue;
		}
		*cp = c->next;
		p->reserved -= c->size;
		state_uncharge(p->phys, c->size);
		backing_free((void *)(uintptr_t)c->base, c->maplen);
		free(c);
	}
}

void
pool_sync(void)
{
	struct CUmemPoolHandle_st *p;

	sim_lock();
	for (p = pools; p != NULL; p = p->next)
		if (p->reserved > p->threshold)
			pool_trim(p, p->threshold);
	sim_unlock();
}

/* First fit for n bytes of granules in c; 0 if it has no room. */
static uint64_t
chunk_fit(const struct pool_chunk *c, uint64_t n)
{
	uint64_t at = c->base, end = c->base + c->size;
	struct sim_alloc *a;

	if (c->size - c->used < n)
		return 0;
	while (at <= end && n <= end - at) {
		if ((a = alloc_find_range(at, n)) == NULL)
			return at;
		/* Nothing that starts before a's end fits. */
		at = round_up(a->base + a->size, SIM_GRANULE);
	}
	return 0;
}

/* Reserve a new chunk for a request of n bytes; NULL when it cannot. */
static struct pool_chunk *
pool_grow(struct CUmemPoolHandle_st *p, uint64_t n)
{
	uint64_t size = n <= POOL_CHUNK ? POOL_CHUNK : round_up(n, POOL_CHUNK);
	struct pool_chunk *c, **cp;
	void *base;

	if (size < n || size > SIZE_MAX || (p->props.maxSize != 0 &&
	    (size > p->props.maxSize || p->reserved > p->props.maxSize - size)))
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (state_charge(p->phys, size) < 0)
		goto out_free;
	if ((base = backing_alloc((size_t)size, SIM_GRANULE, &c->maplen)) ==
	    NULL)
		goto out_uncharge;
	c->base = (uint64_t)(uintptr_t)base;
	c->size = size;
	for (cp = &p->chunks; *cp != NULL; cp = &(*cp)->next)
		;
	*cp = c;
	p->reserved += size;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
	return c;
out_uncharge:
	state_uncharge(p->phys, size);
out_free:
	free(c);
	return NULL;
}

/* Serve bytes from p, growing it if no chunk has room. */
static CUresult
pool_alloc(struct CUmemPoolHandle_st *p, size_t bytes, struct CUctx_st *ctx,
    CUdeviceptr *dptr)
{
	struct pool_chunk *c;
	struct sim_alloc *a;
	uint64_t n, at = 0;

	if (bytes > UINT64_MAX - SIM_GRANULE)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n = round_up(bytes, SIM_GRANULE);
	for (c = p->chunks; c != NULL && (at = chunk_fit(c, n)) == 0;
	    c = c->next)
		;
	if (c == NULL) {
		if ((c = pool_grow(p, n)) == NULL)
			return CUDA_ERROR_OUT_OF_MEMORY;
		at = c->base;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->base = at;
	a->size = bytes;
	a->kind = SIM_MEM_POOL;
	a->phys = p->phys;
	a->ctx = ctx;
	a->id = alloc_next_id();
	a->owner = p;
	if (alloc_insert(a) < 0) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->used += n;
	p->used += n;
	if (p->used > p->used_high)
		p->used_high = p->used;
	*dptr = at;
	return CUDA_SUCCESS;
}

/* From alloc_destroy, the lock held: a's granules are p's again. */
void
pool_put(struct sim_alloc *a)
{
	struct CUmemPoolHandle_st *p = a->owner;
	uint64_t n = round_up(a->size, SIM_GRANULE);
	struct pool_chunk *c;

	for (c = p->chunks; c != NULL; c = c->next)
		if (a->base >= c->base && a->base - c->base < c->size) {
			c->used -= n;
			break;
		}
	p->used -= n;
	if (p->destroyed) {
		pool_trim(p, 0);
		if (p->chunks == NULL)
			pool_free(p);
	}
}

/*
 * The stream's context decides the device, as its device decides the
 * pool; the default streams need a current context.
 */
static CUresult
alloc_async(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
    int from_pool, CUstream s)
{
	struct CUmemPoolHandle_st *p;
	struct CUctx_st *ctx = NULL;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if ((s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) &&
	    (r = ctx_current(&ctx)) != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((r = stream_check(s)) != CUDA_SUCCESS)
		goto out;
	if (ctx == NULL)
		ctx = ((struct sim_handle *)s)->ctx;
	if (from_pool)
		p = pool_live(pool);
	else if ((p = current[ctx->phys]) == NULL)
		p = pool_default(ctx->phys);
	if (p == NULL)
		r = from_pool ? CUDA_ERROR_INVALID_VALUE :
		    CUDA_ERROR_OUT_OF_MEMORY;
	else
		r = pool_alloc(p, bytesize, ctx, dptr);
out:
	sim_unlock();
	return r;
}

CUresult
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	SIM_GATE();
	return alloc_async(dptr, bytesize, NULL, 0, hStream);
}

CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	SIM_GATE();
	return alloc_async(dptr, bytesize, NULL, 0, stream_ptsz(hStream));
}

CUresult
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
    CUstream hStream)
{
	SIM_GATE();
	return alloc_async(dptr, bytesize, pool, 1, hStream);
}

CUresult
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
    CUmemoryPool pool, CUstream hStream)
{
	SIM_GATE();
	return alloc_async(dptr, bytesize, pool, 1, stream_ptsz(hStream));
}

/*
 * Only pool memory; it goes back to its pool, which keeps it until a
 * synchronisation. (cuMemFree takes pool memory too, without one.)
 */
static CUresult
free_async(CUdeviceptr dptr, CUstream s)
{
	struct CUctx_st *ctx;
	struct sim_alloc *a;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if ((s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) &&
	    (r = ctx_current(&ctx)) != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((r = stream_check(s)) == CUDA_SUCCESS) {
		if ((a = alloc_at(dptr)) != NULL && a->kind == SIM_MEM_POOL)
			alloc_destroy(a);
		else
			r = CUDA_ERROR_INVALID_VALUE;
	}
	sim_unlock();
	return r;
}

CUresult
cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	SIM_GATE();
	return free_async(dptr, hStream);
}

CUresult
cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	SIM_GATE();
	return free_async(dptr, stream_ptsz(hStream));
}

CUresult
cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	SIM_GATE();
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (pool_out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((*pool_out = pool_default(device_phys(dev))) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return r;
}

CUresult
cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	SIM_GATE();
	int phys;
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (pool == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	phys = device_phys(dev);
	sim_lock();
	if ((*pool = current[phys]) == NULL &&
	    (*pool = pool_default(phys)) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return r;
}

/* The pool must be the device's own. */
CUresult
cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	SIM_GATE();
	struct CUmemPoolHandle_st *p;
	int phys;
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	phys = device_phys(dev);
	sim_lock();
	if ((p = pool_live(pool)) != NULL && p->phys == phys)
		current[phys] = p;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/*
 * Device pools only: host pools (CUDA 12.2) and IPC pools
 * (cuMemPoolExportToShareableHandle) are not simulated; the device says
 * so with CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES 0.
 */
static CUresult
props_check(const CUmemPoolProps *props, int *phys)
{
	size_t i;

	if (props == NULL || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->win32SecurityAttributes != NULL)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(props->reserved); i++)
		if (props->reserved[i] != 0)
			return CUDA_ERROR_INVALID_VALUE;
	if (props->location.type == CU_MEM_LOCATION_TYPE_HOST ||
	    props->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    (*phys = device_phys(props->location.id)) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

/* A new pool reserves nothing until its first allocation. */
CUresult
cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	SIM_GATE();
	struct CUmemPoolHandle_st *p;
	int phys;
	CUresult r = sim_ready_out(pool);

	if (r != CUDA_SUCCESS ||
	    (r = props_check(poolProps, &phys)) != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((p = pool_new(phys, poolProps)) != NULL)
		*pool = p;
	else
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return r;
}

/*
 * Unused chunks go at once; the rest with the last allocation of each.
 * A device whose current pool it was is back on its default pool.
 */
CUresult
cuMemPoolDestroy(CUmemoryPool pool)
{
	SIM_GATE();
	struct CUmemPoolHandle_st *p;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((p = pool_live(pool)) == NULL || p->is_default) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (current[p->phys] == p)
		current[p->phys] = NULL;
	p->destroyed = 1;
	pool_trim(p, 0);
	if (p->chunks == NULL)
		pool_free(p);
out:
	sim_unlock();
	return r;
}

CUresult
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	SIM_GATE();
	struct CUmemPoolHandle_st *p;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((p = pool_live(pool)) != NULL)
		pool_trim(p, minBytesToKeep);
	else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/* The high watermarks may only be reset, to the current value. */
static CUresult
attr_set(struct CUmemPoolHandle_st *p, CUmemPool_attribute attr,
    void *value)
{
	cuuint64_t v;

	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - REUSE_FIRST] = *(const int *)value != 0;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		memcpy(&p->threshold, value, sizeof(p->threshold));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		memcpy(&v, value, sizeof(v));
		if (v != 0)
			return CUDA_ERROR_INVALID_VALUE;
		if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
			p->reserved_high = p->reserved;
		else
			p->used_high = p->used;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult
attr_get(struct CUmemPoolHandle_st *p, CUmemPool_attribute attr,
    void *value)
{
	cuuint64_t v;

	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->reuse[attr - REUSE_FIRST];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		v = p->threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		v = p->reserved;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		v = p->reserved_high;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		v = p->used;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		v = p->used_high;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	memcpy(value, &v, sizeof(v));
	return CUDA_SUCCESS;
}

/* attr_get or attr_set on a live pool, for the two entry points. */
static CUresult
pool_attr_call(CUmemoryPool pool, CUmemPool_attribute attr, void *value,
    CUresult (*fn)(struct CUmemPoolHandle_st *, CUmemPool_attribute,
    void *))
{
	struct CUmemPoolHandle_st *p;
	CUresult r = sim_ready_out(value);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	r = (p = pool_live(pool)) != NULL ? fn(p, attr, value) :
	    CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

CUresult
cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
    void *value)
{
	SIM_GATE();
	return pool_attr_call(pool, attr, value, attr_set);
}

CUresult
cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
    void *value)
{
	SIM_GATE();
	return pool_attr_call(pool, attr, value, attr_get);
}

/*
 * In a forked child: the chunks are private copies; the charges are the
 * parent's. The allocations in them go with alloc_forget().
 */
void
pool_forget(void)
{
	struct CUmemPoolHandle_st *p, *next;
	struct pool_chunk *c, *cn;

	for (p = pools; p != NULL; p = next) {
		next = p->next;
		for (c = p->chunks; c != NULL; c = cn) {
			cn = c->next;
			backing_free((void *)(uintptr_t)c->base, c->maplen);
			free(c);
		}
		free(p);
	}
	pools = NULL;
	memset(defaults, 0, sizeof(defaults));
	memset(current, 0, sizeof(current));
}
