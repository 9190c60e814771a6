/*
 * What the pools are charged (pool_table.h keeps their records): the
 * growth of a pool reserved with the daemon before the driver grows it,
 * and asked for again when the driver grew it by more; what a trim, a
 * synchronisation or the pool's destruction gives back. No honest path
 * sends a charge that no reservation covers (DESIGN.md section 4).
 * Thread-safe.
 */
#ifndef GF_SHIM_POOL_H
#define GF_SHIM_POOL_H

#include <stdint.h>

#include <cuda.h>

#include "pool_table.h"

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
 * One allocation from a pool, as the hook makes it: alloc(arg) allocates;
 * undo(arg) frees what alloc allocated and returns once the pool has it
 * back (a growth the daemon would not cover).
 */
struct pool_request {
	CUresult	(*alloc)(void *);
	void		(*undo)(void *);
	void		*arg;
};

/*
 * Allocate size bytes from pool, a pool of device dev, charging its
 * growth: with room cached in the pool, nothing is asked; otherwise the
 * growth (in POOL_CHUNK steps) is reserved first and denied as cuMemAlloc
 * would be. When the driver grew the pool by more than was reserved, the
 * rest is asked for before the commit; denied, the allocation is undone
 * and the pool trimmed back. Returns alloc's result, or the denial.
 */
CUresult pool_alloc(CUmemoryPool pool, int dev, uint64_t size,
	    const struct pool_request *q);

/* Charge pool's reserve as it is now (after a trim). */
void	pool_settle(CUmemoryPool pool);

/* Destroy pool with destroy(arg): its charge goes with it. */
CUresult pool_destroy(CUmemoryPool pool, CUresult (*destroy)(void *),
	    void *arg);

#endif
