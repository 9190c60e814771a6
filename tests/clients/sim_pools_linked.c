/*
 * Checks of the simulated driver's stream-ordered pools
 * (tests/simcuda/pool.c), linked against it: how the default pool and
 * created ones grow, cache and release, seen from this process and from
 * another one of the same SIMCUDA_STATE, their attributes and errors.
 * Prints one line per failed check and exits 1 if any failed, else 0.
 *
 *   sim_pools_linked           run every check (uses $SIMCUDA_STATE, or a
 *                              private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_pools_linked free DEV  print the free bytes of device DEV
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "child.h"
#include "lookup.h"
#include "machine.h"
#include "memcheck.h"

static const struct lookup_want lookups[] = {
	{ "cuMemAllocAsync", 12000, 0, (void *)cuMemAllocAsync },
	{ "cuMemAllocAsync", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemAllocAsync_ptsz },
	{ "cuMemFreeAsync", 11020,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemFreeAsync_ptsz },
	{ "cuMemAllocFromPoolAsync", 12080, 0,
	    (void *)cuMemAllocFromPoolAsync },
	{ "cuMemPoolTrimTo", 11020, 0, (void *)cuMemPoolTrimTo },
	{ "cuDeviceGetDefaultMemPool", 12000, 0,
	    (void *)cuDeviceGetDefaultMemPool },
	/* Too new for the version asked for. */
	{ "cuMemAllocAsync", 11010, 0, NULL },
};

static const CUdevice_attribute supported[] = {
	CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
};

static void
check_pool_lookups(void)
{
	CUdriverProcAddressQueryResult st;
	CUresult rc;
	void *fn;
	int v;

	check_lookups(lookups, sizeof(lookups) / sizeof(lookups[0]));
	/* 13.0 additions are not a 12.8 driver's. */
	rc = cuGetProcAddress_v2("cuMemGetDefaultMemPool", &fn, 13000, 0, &st);
	CHECK(rc == CUDA_ERROR_NOT_FOUND, "cuMemGetDefaultMemPool: %s",
	    err_name(rc));
	check_supported(supported, sizeof(supported) / sizeof(supported[0]));
	OK(cuDeviceGetAttribute(&v,
	    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0));
	CHECK(v == 0, "IPC pools are not simulated, yet %d", v);
}

static cuuint64_t
pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0xdeadbeef;

	OK(cuMemPoolGetAttribute(pool, attr, &v));
	return v;
}

#define RESERVED(p)	pool_attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
#define USED(p)		pool_attr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)

/*
 * Growth: a 2 MiB chunk for 1 MiB, which holds 512 KiB more; 3 MiB, a
 * chunk of its own. Then freed: cached, still charged, until a
 * synchronisation.
 */
static void
check_pool_growth(CUstream s, CUmemoryPool def, uint64_t before)
{
	CUmemoryPool got = NULL;
	CUdeviceptr a, b, c;

	OK(cuMemAllocAsync(&a, 1 * MiB, s));
	CHECK(peer_free(0) == before - 2 * MiB, "a pool grew by %llu",
	    (unsigned long long)(before - peer_free(0)));
	CHECK(RESERVED(def) == 2 * MiB && USED(def) == 1 * MiB,
	    "reserved %llu used %llu", (unsigned long long)RESERVED(def),
	    (unsigned long long)USED(def));
	OK(cuMemAllocAsync_ptsz(&b, 512 * 1024, NULL));
	CHECK(free_bytes() == before - 2 * MiB, "no room in the chunk?");
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
	    b + 100));
	CHECK(got == def, "MEMPOOL_HANDLE");
	OK(cuMemsetD32Async(b, 0x01020304, 128 * 1024, s));
	/* 3 MiB: a chunk of its own, rounded up to 4 MiB. */
	OK(cuMemAllocAsync(&c, 3 * MiB, s));
	CHECK(RESERVED(def) == 6 * MiB && peer_free(0) == before - 6 * MiB,
	    "reserved %llu", (unsigned long long)RESERVED(def));

	EXPECT(cuMemFreeAsync(b + 512, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(a, s));
	EXPECT(cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync_ptsz(c, NULL));
	CHECK(USED(def) == 512 * 1024 && RESERVED(def) == 6 * MiB,
	    "after frees: used %llu reserved %llu",
	    (unsigned long long)USED(def), (unsigned long long)RESERVED(def));
	CHECK(peer_free(0) == before - 6 * MiB, "freed pool memory was "
	    "released before a synchronisation");
	OK(cuMemAllocAsync(&c, 3 * MiB, s));	/* from the cache */
	CHECK(RESERVED(def) == 6 * MiB, "the cache was not reused");
	OK(cuMemFreeAsync(c, s));
	OK(cuStreamQuery(s));			/* not a synchronisation */
	CHECK(RESERVED(def) == 6 * MiB, "released by cuStreamQuery");
	/* Threshold 0: a synchronisation releases every unused chunk; the
	 * first chunk still holds b. */
	OK(cuStreamSynchronize(s));
	CHECK(RESERVED(def) == 2 * MiB, "after a sync: reserved %llu",
	    (unsigned long long)RESERVED(def));
	CHECK(peer_free(0) == before - 2 * MiB, "a sync released %llu",
	    (unsigned long long)(before - peer_free(0)));
	/* cuMemFree takes pool memory without a synchronisation. */
	OK(cuMemFree_v2(b));
	CHECK(RESERVED(def) == 2 * MiB && USED(def) == 0, "cuMemFree of pool "
	    "memory: reserved %llu", (unsigned long long)RESERVED(def));
	OK(cuCtxSynchronize());
	CHECK(RESERVED(def) == 0 && free_bytes() == before,
	    "cuCtxSynchronize released %llu", (unsigned long long)(before -
	    free_bytes()));
}

/* The high watermarks of check_pool_growth; only they may be reset. */
static void
check_pool_watermarks(CUmemoryPool def)
{
	cuuint64_t v;

	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 6 * MiB &&
	    pool_attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) ==
	    4 * MiB + 512 * 1024, "high watermarks");
	v = 0;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0, "reset");
	v = 1;
	EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
	    &v), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
	    &v), CUDA_ERROR_INVALID_VALUE);
}

/* A high threshold keeps the cache across synchronisations. */
static void
check_pool_threshold(CUstream s, CUmemoryPool def, uint64_t before)
{
	CUdeviceptr a, b, c, d;
	cuuint64_t v = UINT64_MAX;
	CUevent e;

	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuMemAllocAsync(&a, 8 * MiB, s));
	OK(cuMemAllocAsync(&d, 2 * MiB, s));
	OK(cuMemFreeAsync(a, s));
	OK(cuMemFreeAsync(d, s));
	OK(cuEventCreate(&e, 0));
	OK(cuEventRecord(e, s));
	OK(cuEventSynchronize(e));
	OK(cuStreamSynchronize(s));
	OK(cuCtxSynchronize());
	CHECK(RESERVED(def) == 10 * MiB && peer_free(0) == before - 10 * MiB,
	    "a high threshold kept %llu", (unsigned long long)RESERVED(def));
	/* TrimTo keeps at least what it is told: the 8 MiB chunk goes. */
	OK(cuMemPoolTrimTo(def, 1 * MiB));
	CHECK(RESERVED(def) == 2 * MiB, "trimmed to %llu",
	    (unsigned long long)RESERVED(def));
	OK(cuMemPoolTrimTo(def, 0));
	CHECK(RESERVED(def) == 0 && peer_free(0) == before,
	    "trimmed to 0: %llu", (unsigned long long)RESERVED(def));
	/* A threshold between: a sync keeps the pool at it or above. */
	v = 3 * MiB;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuMemAllocAsync(&a, 2 * MiB, s));
	OK(cuMemAllocAsync(&b, 2 * MiB, s));
	OK(cuMemAllocAsync(&c, 2 * MiB, s));
	OK(cuMemFreeAsync(a, s));
	OK(cuMemFreeAsync(b, s));
	OK(cuMemFreeAsync(c, s));
	OK(cuStreamSynchronize(s));
	CHECK(RESERVED(def) == 4 * MiB, "threshold 3 MiB kept %llu",
	    (unsigned long long)RESERVED(def));
	v = 0;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuStreamSynchronize(s));
	CHECK(free_bytes() == before, "pool memory not returned");
	OK(cuEventDestroy_v2(e));
}

static void
check_pool_default(CUstream s)
{
	CUmemoryPool def, cur;
	uint64_t before = free_bytes();
	CUdeviceptr a;

	OK(cuDeviceGetDefaultMemPool(&def, 0));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(def == cur, "the current pool is not the default one");
	EXPECT(cuDeviceGetDefaultMemPool(&def, 7), CUDA_ERROR_INVALID_DEVICE);
	CHECK(RESERVED(def) == 0 && USED(def) == 0, "a new pool holds memory");
	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0,
	    "default release threshold");
	check_pool_growth(s, def, before);
	check_pool_watermarks(def);
	check_pool_threshold(s, def, before);

	/* Growth that does not fit; and cuMemFreeAsync is for pool memory. */
	EXPECT(cuMemAllocAsync(&a, 5 * GiB, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(cuMemAllocAsync(&a, 0, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(free_bytes() == before && RESERVED(def) == 0,
	    "a failed growth was charged");
	OK(cuMemAlloc_v2(&a, 1 * MiB));
	EXPECT(cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFree_v2(a));
}

/* A pool of device 1, allocated from on a stream of device 0. */
static void
check_pool_other_device(CUstream s, CUmemPoolProps props, CUdeviceptr *a,
    uint64_t before1)
{
	CUmemoryPool pool1;
	CUdeviceptr c;
	cuuint64_t v;
	int ord = -1;

	props.location.id = 1;
	OK(cuMemPoolCreate(&pool1, &props));
	EXPECT(cuDeviceSetMemPool(0, pool1), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAllocFromPoolAsync(&c, 3 * MiB, pool1, s));
	OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, c));
	CHECK(ord == 1, "device of pool memory %d", ord);
	CHECK(peer_free(1) == before1 - 4 * MiB, "device 1 pool: %llu",
	    (unsigned long long)(before1 - peer_free(1)));
	OK(cuMemPoolDestroy(pool1));	/* c outstanding: kept */
	CHECK(peer_free(1) == before1 - 4 * MiB, "destroyed with memory out");
	EXPECT(cuMemPoolGetAttribute(pool1,
	    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocFromPoolAsync(a, 1, pool1, s),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(c, s));	/* the last one: the pool goes */
	CHECK(peer_free(1) == before1, "destroyed pool kept %llu",
	    (unsigned long long)(before1 - peer_free(1)));

	/* A maximum size. */
	props.location.id = 0;
	props.maxSize = 4 * MiB;
	OK(cuMemPoolCreate(&pool1, &props));
	OK(cuMemAllocFromPoolAsync(&c, 3 * MiB, pool1, s));
	EXPECT(cuMemAllocFromPoolAsync(a, 2 * MiB, pool1, s),
	    CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFreeAsync(c, s));
	OK(cuMemPoolDestroy(pool1));
}

/* A created pool: refused properties, then 100 bytes of it at *a. */
static CUmemoryPool
pool_create(CUstream s, CUmemPoolProps *props, CUdeviceptr *a,
    uint64_t before)
{
	unsigned char in[256], out[256];
	CUmemoryPool pool, got = NULL;
	size_t i;

	props->location.id = 9;
	EXPECT(cuMemPoolCreate(&pool, props), CUDA_ERROR_INVALID_VALUE);
	props->location.id = 0;
	props->allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
	EXPECT(cuMemPoolCreate(&pool, props), CUDA_ERROR_INVALID_VALUE);
	props->allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props->handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT(cuMemPoolCreate(&pool, props), CUDA_ERROR_NOT_SUPPORTED);
	props->handleTypes = CU_MEM_HANDLE_TYPE_NONE;
	OK(cuMemPoolCreate(&pool, props));
	CHECK(free_bytes() == before && RESERVED(pool) == 0,
	    "a new pool was charged");

	OK(cuMemAllocFromPoolAsync(a, 100, pool, s));
	CHECK(peer_free(0) == before - 2 * MiB, "created pool grew by %llu",
	    (unsigned long long)(before - peer_free(0)));
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
	    *a));
	CHECK(got == pool, "MEMPOOL_HANDLE of a created pool");
	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(255 - i);
	OK(cuMemcpyHtoDAsync_v2(*a, in, 100, s));
	OK(cuMemcpyDtoH_v2(out, *a, 100));
	CHECK(memcmp(in, out, 100) == 0, "pool memory contents");
	EXPECT(cuMemcpyHtoD_v2(*a, in, 101), CUDA_ERROR_INVALID_VALUE);
	return pool;
}

static void
check_pool_created(CUstream s)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
	    .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemoryPool pool, def, cur, got = NULL;
	uint64_t before = free_bytes(), before1 = peer_free(1);
	CUdeviceptr a, b;

	OK(cuDeviceGetDefaultMemPool(&def, 0));
	pool = pool_create(s, &props, &a, before);

	/* The device's current pool serves cuMemAllocAsync. */
	OK(cuDeviceSetMemPool(0, pool));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(cur == pool, "cuDeviceSetMemPool");
	OK(cuMemAllocAsync(&b, 4096, s));
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b));
	CHECK(got == pool && RESERVED(def) == 0, "not from the current pool");

	check_pool_other_device(s, props, &a, before1);

	/* Destroying the current pool puts the default back. */
	EXPECT(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(b, s));
	OK(cuMemPoolDestroy(pool));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(cur == def, "a destroyed pool is still current");
	CHECK(peer_free(0) == before - 2 * MiB, "destroyed pool released a "
	    "chunk in use");
	OK(cuMemFreeAsync(a, s));
	CHECK(free_bytes() == before, "destroyed pool kept %llu",
	    (unsigned long long)(before - free_bytes()));
	EXPECT(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemPoolTrimTo(pool, 0), CUDA_ERROR_INVALID_VALUE);
}

/* Without a context the default streams have no device. */
static void
check_pool_no_context(void)
{
	CUcontext top = NULL;
	CUdeviceptr a;

	OK(cuCtxPopCurrent_v2(&top));
	EXPECT(cuMemAllocAsync(&a, 1, NULL), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuMemFreeAsync(0x1000, NULL), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxPushCurrent_v2(top));
}

static void
check_pools(CUstream s)
{
	check_pool_lookups();
	check_pool_default(s);
	check_pool_created(s);
	check_pool_no_context();
}

int
main(int argc, char **argv)
{
	return mem_main(argc, argv, "simpools", check_pools);
}
