/*
 * The process's live allocations, device and host: a hash by base address
 * for frees, and a tree ordered by range so that a pointer anywhere inside
 * an allocation finds it. Also the host memory that backs them.
 */
#include <search.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "ptrmap.h"
#include "sim.h"

/* Large blocks are mapped lazily: a 12Gi "device" costs nothing untouched. */
#define BACKING_MMAP_MIN	(1u << 20)

static struct ptrmap by_base;
static void *by_range;			/* tsearch tree of struct sim_alloc */
static unsigned long long alloc_last_id;

void *
backing_alloc(size_t bytes, size_t align, size_t *maplen)
{
	void *p;

	if (bytes >= BACKING_MMAP_MIN) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		*maplen = bytes;
		return p == MAP_FAILED ? NULL : p;
	}
	*maplen = 0;
	bytes = (bytes + align - 1) / align * align;
	return aligned_alloc(align, bytes);
}

void
backing_free(void *p, size_t maplen)
{
	if (maplen != 0)
		munmap(p, maplen);
	else
		free(p);
}

/* Overlapping ranges compare equal: a lookup key is a 1-byte range. */
static int
range_cmp(const void *a, const void *b)
{
	const struct sim_alloc *x = a, *y = b;

	if (x->base + x->size <= y->base)
		return -1;
	if (y->base + y->size <= x->base)
		return 1;
	return 0;
}

unsigned long long
alloc_next_id(void)
{
	return ++alloc_last_id;
}

/*
 * A registered range that a new allocation overlaps was freed by its owner
 * without cuMemHostUnregister (and the heap reused it): it is dropped.
 */
int
alloc_insert(struct sim_alloc *a)
{
	struct sim_alloc *old;
	void *node;

	while ((node = tsearch(a, &by_range, range_cmp)) != NULL &&
	    (old = *(struct sim_alloc **)node) != a) {
		if (a->kind == SIM_MEM_REGISTERED ||
		    old->kind != SIM_MEM_REGISTERED)
			return -1;
		alloc_destroy(old);
	}
	if (node == NULL)
		return -1;
	if (ptrmap_put(&by_base, a->base, a) < 0) {
		tdelete(a, &by_range, range_cmp);
		return -1;
	}
	return 0;
}

struct sim_alloc *
alloc_at(uint64_t base)
{
	return ptrmap_get(&by_base, base);
}

struct sim_alloc *
alloc_find(uint64_t addr)
{
	return alloc_find_range(addr, 1);
}

struct sim_alloc *
alloc_find_range(uint64_t addr, uint64_t size)
{
	struct sim_alloc key = { .base = addr, .size = (size_t)size };
	void *node = tfind(&key, &by_range, range_cmp);

	return node != NULL ? *(struct sim_alloc **)node : NULL;
}

/* Whose memory a is: its own backing, or someone else's. */
static int
alloc_owns_backing(const struct sim_alloc *a)
{
	return (a->kind & (SIM_MEM_REGISTERED | SIM_MEM_POOL |
	    SIM_MEM_VMM)) == 0;
}

void
alloc_destroy(struct sim_alloc *a)
{
	ptrmap_del(&by_base, a->base);
	tdelete(a, &by_range, range_cmp);
	if (a->charged != 0)
		state_uncharge(a->phys, a->charged);
	if (alloc_owns_backing(a))
		backing_free((void *)(uintptr_t)a->base, a->maplen);
	else if (a->kind == SIM_MEM_POOL)
		pool_put(a);
	free(a);
}

CUresult
alloc_free(uint64_t base, int kinds, CUresult bad)
{
	struct sim_alloc *a;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((a = alloc_at(base)) == NULL || (a->kind & kinds) == 0)
		r = bad;
	else
		alloc_destroy(a);
	sim_unlock();
	return r;
}

/* Everything made in ctx; collected first since the map may not change
 * while it is walked. Pools and VMM mappings are the process's, not the
 * context's. */
void
alloc_release_ctx(struct CUctx_st *ctx)
{
	struct sim_alloc *a, **doomed;
	size_t pos = 0, n = 0, i;

	if (by_base.len == 0)
		return;
	if ((doomed = calloc(by_base.len, sizeof(*doomed))) == NULL)
		return;		/* keeps them: better than losing track */
	while ((a = ptrmap_next(&by_base, &pos, NULL)) != NULL)
		if (a->ctx == ctx &&
		    (a->kind & (SIM_MEM_POOL | SIM_MEM_VMM)) == 0)
			doomed[n++] = a;
	for (i = 0; i < n; i++)
		alloc_destroy(doomed[i]);
	free(doomed);
}

static void
alloc_drop(void *p)
{
	struct sim_alloc *a = p;

	if (alloc_owns_backing(a))
		backing_free((void *)(uintptr_t)a->base, a->maplen);
	free(a);
}

/* In a forked child: the copies are ours to free, the charges the parent's. */
void
alloc_forget(void)
{
	tdestroy(by_range, alloc_drop);
	by_range = NULL;
	ptrmap_free(&by_base);
}
