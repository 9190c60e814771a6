/*
 * Inside soak_client: one tenant's state, shared by its loop
 * (soak_client.c) and the ways it takes and gives back device memory
 * (soak_kinds.c). Single-threaded but for the swap watcher, which touches
 * only the atomics of soak_client.c.
 */
#ifndef GF_SOAK_CLIENT_H
#define GF_SOAK_CLIENT_H

#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include <stddef.h>
#include <stdint.h>

#include "soak_proto.h"

/* What is left of a VMM allocation: its mapping, its handle, or both. */
#define VMM_MAPPED	1
#define VMM_HANDLE	2

/* An allocation's pattern, written at its start (kind_verify reads it). */
#define TAG_BYTES	16

/* Pools per device: the device's default pool, and one made here. */
#define POOL_DEFAULT	0
#define POOL_MADE	1

/* One allocation the tenant holds. */
struct held {
	int		kind;		/* SOAK_* */
	int		dev;		/* device ordinal */
	int		sub;		/* ARRAY: 0 2D, 1 3D, 2 mipmap chain;
					   VMM: VMM_* left; POOL: POOL_* */
	CUdeviceptr	ptr;		/* memory, or a VMM mapping's address */
	CUarray		array;
	CUmipmappedArray mipmap;
	CUmemGenericAllocationHandle vmm;
	uint64_t	size;		/* VMM: the mapping's length */
	uint64_t	charged;	/* what the shim charges (pool: 0,
					   the pool's reserve is charged) */
	uint64_t	driver;		/* what the driver holds for it */
	uint32_t	tag;		/* its data's pattern */
};

struct tenant {
	uint64_t	rng;
	struct soak_slot *slot;
	unsigned	devmask;	/* the ordinals it uses */
	CUcontext	ctx[SOAK_MAX_DEV];
	unsigned	kinds;		/* 1 << SOAK_* it may use */
	uint64_t	min_size, max_size;	/* of one allocation */
	uint64_t	max_hold;	/* per device, it frees more above */
	uint64_t	ctx_bytes;	/* SIMCUDA_CONTEXT_BYTES */
	struct held	*held;
	size_t		nheld, cap;
	uint64_t	charged[SOAK_MAX_DEV];	/* sums over held */
	uint64_t	driver[SOAK_MAX_DEV];
	CUmemoryPool	pool[SOAK_MAX_DEV][2];	/* NULL: none yet */
	uint64_t	reserve[SOAK_MAX_DEV][2];	/* as last read */
	unsigned	pool_out[SOAK_MAX_DEV][2];	/* allocations out */
	uint32_t	next_tag;
};

/* soak_kinds.c */
/*
 * Take memory of kind on dev (its context current), of a size drawn for
 * the tenant. Returns the driver's answer; the allocation is held on
 * success.
 */
CUresult kind_alloc(struct tenant *t, int kind, int dev);
/* Give back held[i] (a VMM allocation may take two calls). */
CUresult kind_free(struct tenant *t, size_t i);
/* Read back the pattern of a random allocation: 0, or -1 if it changed. */
int	kind_verify(struct tenant *t, CUresult *r);
/* Synchronise (pools give back what they cache), trim a pool, or destroy
 * the pool made on dev once it has nothing out. */
CUresult pool_sync(struct tenant *t, int dev);
CUresult pool_trim(struct tenant *t, int dev);
CUresult pool_drop(struct tenant *t, int dev);
/* Read every pool's reserve again: a synchronisation frees across them. */
void	pools_read(struct tenant *t);
/* What it holds per device: charged and held by the driver. */
void	kinds_truth(const struct tenant *t, uint64_t *charged,
	    uint64_t *driver);
/* Give back everything; the first failure, or CUDA_SUCCESS. */
CUresult kinds_free_all(struct tenant *t);

/* soak_uses.c: use a cuMemAlloc allocation held on dev by way of kind
 * (SOAK_IPC, SOAK_GRAPH), which takes no memory. The driver's answer. */
CUresult use_held(struct tenant *t, int kind, int dev);

/* soak_client.c: make dev's context current (exits if it cannot). */
void	tenant_use(struct tenant *t, int dev);
/* Count one call of kind and what became of it. */
void	tenant_count(struct tenant *t, int kind, CUresult r, const char *what);

#endif
