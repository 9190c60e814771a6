/*
 * Stream-ordered memory pools (cuMemAllocAsync and friends): what each
 * pool this process allocates from holds of the device, its reserve, as
 * last charged. A pool keeps freed memory cached and gives it back only at
 * a synchronisation (down to its release threshold), a trim or its
 * destruction (CUDA Driver API, "Stream Ordered Memory Allocator"), so the
 * reserve, not the allocations, is what the device has lent: that is what
 * is charged, one record per pool. Thread-safe.
 */
#ifndef GF_SHIM_POOL_TABLE_H
#define GF_SHIM_POOL_TABLE_H

#include <stdint.h>

#include <cuda.h>

/* The allocation table's key of a pool's record: tagged, never an address. */
#define POOL_KEY_TAG	(1ull << 61)
#define POOL_KEY(p)	((uint64_t)(uintptr_t)(p) | POOL_KEY_TAG)

/* Nonzero once a pool is charged: synchronisations look at the pools. */
extern int pool_live;

/* Charge every known pool's reserve as it is now. */
void	pool_settle_all(void);

/* After a successful synchronisation: cheap when no pool is charged. */
static inline void
pool_synced(void)
{
	if (__atomic_load_n(&pool_live, __ATOMIC_RELAXED))
		pool_settle_all();
}

/*
 * Allocate size bytes with alloc(arg) from pool, a pool of device dev,
 * charging its growth: with room cached in the pool, nothing is asked;
 * otherwise the growth (in POOL_CHUNK steps) is reserved first and denied
 * as cuMemAlloc would be. Returns alloc's result, or the denial.
 */
CUresult pool_alloc(CUmemoryPool pool, int dev, uint64_t size,
	    CUresult (*alloc)(void *), void *arg);

/* Charge pool's reserve as it is now (after a trim). */
void	pool_settle(CUmemoryPool pool);

/* Destroy pool with destroy(arg): its charge goes with it. */
CUresult pool_destroy(CUmemoryPool pool, CUresult (*destroy)(void *),
	    void *arg);

/* In a fork child: the pools are the parent's. */
void	pool_fork_child(void);

#endif
