/*
 * The pools' records and their charge: one lock over the table, held
 * across a growth's reservation, the driver's allocation and the commit,
 * so that two threads never read the same growth as theirs.
 */
#include <pthread.h>
#include <stdlib.h>

#include "client.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "pool_table.h"
#include "ptrmap.h"
#include "real.h"
#include "shim.h"

/* The growth reserved before the driver grows a pool, rounded up to this. */
#define POOL_CHUNK	(2ull << 20)

struct pool_rec {
	int		dev;
	uint64_t	charged;	/* its reserve, as last charged */
};

int pool_live;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap pool_map;		/* pool -> struct pool_rec */

static uint64_t
pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0;

	if (REAL_CALL(cuMemPoolGetAttribute, pool, attr, &v) != CUDA_SUCCESS)
		return 0;
	return v;
}

/* The record of pool, made if need be; NULL when out of memory. Locked. */
static struct pool_rec *
pool_rec(CUmemoryPool pool, int dev)
{
	struct pool_rec *r = ptrmap_get(&pool_map, (uint64_t)(uintptr_t)pool);

	if (r != NULL)
		return r;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->dev = dev;
	if (ptrmap_put(&pool_map, (uint64_t)(uintptr_t)pool, r) < 0) {
		free(r);
		return NULL;
	}
	__atomic_store_n(&pool_live, 1, __ATOMIC_RELAXED);
	return r;
}

/* Charge r what pool reserves now. Locked. */
static void
pool_recharge(CUmemoryPool pool, struct pool_rec *r)
{
	uint64_t now = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);

	if (now == r->charged)
		return;
	client_recharge(POOL_KEY(pool), r->dev, GF_KIND_POOL, now);
	r->charged = now;
}

CUresult
pool_alloc(CUmemoryPool pool, int dev, uint64_t size,
    CUresult (*alloc)(void *), void *arg)
{
	uint64_t reserved, used, grow;
	struct client_ticket t;
	struct pool_rec *r;
	CUresult res;

	pthread_mutex_lock(&pool_lock);
	if ((r = pool_rec(pool, dev)) == NULL) {
		pthread_mutex_unlock(&pool_lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	reserved = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
	used = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
	t.dev = -1;
	if (reserved < used || reserved - used < size) {
		grow = size - (reserved > used ? reserved - used : 0);
		grow = (grow + POOL_CHUNK - 1) & ~(POOL_CHUNK - 1);
		if ((res = client_reserve(dev, grow, GF_KIND_POOL, &t)) !=
		    CUDA_SUCCESS) {
			pthread_mutex_unlock(&pool_lock);
			return res;
		}
	}
	res = alloc(arg);
	reserved = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
	if (res == CUDA_SUCCESS && t.dev >= 0 && reserved != r->charged &&
	    client_commit(&t, POOL_KEY(pool), reserved) == 0)
		r->charged = reserved;
	else {
		client_rollback(&t);
		pool_recharge(pool, r);
	}
	pthread_mutex_unlock(&pool_lock);
	return res;
}

void
pool_settle(CUmemoryPool pool)
{
	struct pool_rec *r;

	pthread_mutex_lock(&pool_lock);
	if ((r = ptrmap_get(&pool_map, (uint64_t)(uintptr_t)pool)) != NULL)
		pool_recharge(pool, r);
	pthread_mutex_unlock(&pool_lock);
}

void
pool_settle_all(void)
{
	struct pool_rec *r;
	uint64_t key;
	size_t pos = 0;

	/*
	 * An allocation holds the lock while the daemon may queue it, and
	 * memory this synchronisation released may be what it waits for:
	 * never wait behind it. It settles the pool itself when it is done.
	 */
	if (pthread_mutex_trylock(&pool_lock) != 0)
		return;
	while ((r = ptrmap_next(&pool_map, &pos, &key)) != NULL)
		pool_recharge((CUmemoryPool)(uintptr_t)key, r);
	pthread_mutex_unlock(&pool_lock);
}

CUresult
pool_destroy(CUmemoryPool pool, CUresult (*destroy)(void *), void *arg)
{
	struct pool_rec *r;
	CUresult res;

	pthread_mutex_lock(&pool_lock);
	res = destroy(arg);
	if (res == CUDA_SUCCESS && (r = ptrmap_del(&pool_map,
	    (uint64_t)(uintptr_t)pool)) != NULL) {
		/* What it still lends the driver frees as it empties. */
		if (r->charged != 0)
			client_recharge(POOL_KEY(pool), r->dev, GF_KIND_POOL,
			    0);
		free(r);
	}
	pthread_mutex_unlock(&pool_lock);
	return res;
}

void
pool_fork_child(void)
{
	struct pool_rec *r;
	size_t pos = 0;

	pthread_mutex_init(&pool_lock, NULL);
	while ((r = ptrmap_next(&pool_map, &pos, NULL)) != NULL)
		free(r);
	ptrmap_free(&pool_map);
	ptrmap_init(&pool_map);
	pool_live = 0;
}
