/*
 * Stream-ordered memory pools (cuMemAllocAsync and friends): the record
 * of each pool this process allocates from, its device and its reserve
 * as last charged. A pool keeps freed memory cached and gives it back
 * only at a synchronisation (down to its release threshold), a trim or
 * its destruction (CUDA Driver API, "Stream Ordered Memory Allocator"),
 * so its reserve, not its allocations, is what the device has lent: that
 * is what is charged, one record per pool (shim/pool.h charges it).
 * The records are read and changed under the table's lock.
 */
#ifndef GF_SHIM_POOL_TABLE_H
#define GF_SHIM_POOL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* The allocation table's key of a pool's record: tagged, never an address. */
#define POOL_KEY_TAG	(1ull << 61)
#define POOL_KEY(p)	((uint64_t)(uintptr_t)(p) | POOL_KEY_TAG)

struct pool_rec {
	int		dev;
	uint64_t	charged;	/* its reserve, as last charged */
};

/* Nonzero once a pool has a record: synchronisations look at the pools. */
extern int pool_live;

/*
 * The table's lock, held by whoever reads or changes a record, and for as
 * long as a record's charge is in question (shim/pool.c: across a
 * growth's reservation, the driver's allocation and the commit).
 * pool_table_trylock: 0 when taken.
 */
void	pool_table_lock(void);
int	pool_table_trylock(void);
void	pool_table_unlock(void);

/* The record of pool; NULL when it has none. Locked. */
struct pool_rec *pool_table_get(CUmemoryPool pool);

/* The same, made for device dev if need be; NULL when out of memory. */
struct pool_rec *pool_table_add(CUmemoryPool pool, int dev);

/* Forget pool's record: 1 with it in *out, 0 when it had none. Locked. */
int	pool_table_del(CUmemoryPool pool, struct pool_rec *out);

/*
 * The records in turn: start with *pos 0; NULL after the last. The pool
 * goes in *pool. Locked, and the table unchanged meanwhile.
 */
struct pool_rec *pool_table_next(size_t *pos, CUmemoryPool *pool);

/* In a fork child: the pools are the parent's. */
void	pool_fork_child(void);

#endif
