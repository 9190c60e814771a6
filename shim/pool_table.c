/*
 * The pools' records (pool_table.h): a map from pool to record under one
 * lock. What a record is charged is shim/pool.c's business.
 */
#include <pthread.h>
#include <stdlib.h>

#include "pool_table.h"
#include "ptrmap.h"

int pool_live;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap pool_map;		/* pool -> struct pool_rec */

void
pool_table_lock(void)
{
	pthread_mutex_lock(&pool_lock);
}

int
pool_table_trylock(void)
{
	return pthread_mutex_trylock(&pool_lock);
}

void
pool_table_unlock(void)
{
	pthread_mutex_unlock(&pool_lock);
}

struct pool_rec *
pool_table_get(CUmemoryPool pool)
{
	return ptrmap_get(&pool_map, (uint64_t)(uintptr_t)pool);
}

struct pool_rec *
pool_table_add(CUmemoryPool pool, int dev)
{
	struct pool_rec *r = pool_table_get(pool);

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

int
pool_table_del(CUmemoryPool pool, struct pool_rec *out)
{
	struct pool_rec *r = ptrmap_del(&pool_map, (uint64_t)(uintptr_t)pool);

	if (r == NULL)
		return 0;
	*out = *r;
	free(r);
	return 1;
}

struct pool_rec *
pool_table_next(size_t *pos, CUmemoryPool *pool)
{
	struct pool_rec *r;
	uint64_t key;

	if ((r = ptrmap_next(&pool_map, pos, &key)) != NULL)
		*pool = (CUmemoryPool)(uintptr_t)key;
	return r;
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
