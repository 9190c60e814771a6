/*
 * The pools' charge (pool.h): each record's reserve told to the daemon,
 * growth reserved before it is committed. The table's lock is held across
 * a growth's reservation, the driver's allocation and the commit, so that
 * two threads never read the same growth as theirs.
 */
#include "client.h"
#include "gpufrac/proto.h"
#include "pool.h"
#include "real.h"

/* The growth reserved before the driver grows a pool, rounded up to this. */
#define POOL_CHUNK	(2ull << 20)

static uint64_t
pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0;

	if (REAL_CALL(cuMemPoolGetAttribute, pool, attr, &v) != CUDA_SUCCESS)
		return 0;
	return v;
}

static uint64_t
pool_reserved(CUmemoryPool pool)
{
	return pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
}

/*
 * Give back what pool caches beyond its charge: down to the charge, then,
 * if the driver kept other chunks than the newest, down to what is in
 * use. Locked.
 */
static void
pool_trim_back(CUmemoryPool pool, const struct pool_rec *r)
{
	(void)REAL_CALL(cuMemPoolTrimTo, pool, (size_t)r->charged);
	if (pool_reserved(pool) > r->charged)
		(void)REAL_CALL(cuMemPoolTrimTo, pool, 0);
}

/*
 * Charge r what pool reserves now: less at once; more only once reserved
 * (memory taken by calls the shim does not see, if any), else what the
 * pool caches is given back first. Locked.
 */
static void
pool_recharge(CUmemoryPool pool, struct pool_rec *r)
{
	uint64_t now = pool_reserved(pool);
	struct client_ticket t;

	if (now > r->charged) {
		if (client_reserve(r->dev, now - r->charged, GF_KIND_POOL,
		    &t) == CUDA_SUCCESS) {
			if (client_commit(&t, POOL_KEY(pool), now) == 0) {
				r->charged = now;
				return;
			}
			client_rollback(&t);
		}
		pool_trim_back(pool, r);
		now = pool_reserved(pool);
	}
	if (now == r->charged)
		return;
	/* What it still holds past its charge is held: told as it stands. */
	client_recharge(POOL_KEY(pool), r->dev, GF_KIND_POOL, now);
	r->charged = now;
}

/* Every pool's charge as it is now (after a synchronisation). Locked. */
static void
pool_recharge_all(void)
{
	CUmemoryPool pool;
	struct pool_rec *r;
	size_t pos = 0;

	while ((r = pool_table_next(&pos, &pool)) != NULL)
		pool_recharge(pool, r);
}

/*
 * The driver grew pool (its reserve now) past what t covers of r's
 * charge: ask for the rest. 0, or -1 when denied (*res says how). Locked.
 */
static int
pool_cover(struct pool_rec *r, uint64_t now, struct client_ticket *t,
    CUresult *res)
{
	uint64_t need = now > r->charged ? now - r->charged : 0;
	uint64_t have = t->dev >= 0 ? t->size : 0;

	if (need <= have)
		return 0;
	*res = client_reserve_more(t, r->dev, need - have, GF_KIND_POOL);
	return *res == CUDA_SUCCESS ? 0 : -1;
}

CUresult
pool_alloc(CUmemoryPool pool, int dev, uint64_t size,
    const struct pool_request *q)
{
	uint64_t reserved, used;
	struct client_ticket t;
	struct pool_rec *r;
	CUresult res;

	pool_table_lock();
	if ((r = pool_table_add(pool, dev)) == NULL) {
		pool_table_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	reserved = pool_reserved(pool);
	used = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
	t.dev = -1;
	/* No room cached: the driver grows the pool by a chunk of its own. */
	if ((reserved < used || reserved - used < size) &&
	    (res = client_reserve(dev, (size + POOL_CHUNK - 1) &
	    ~(POOL_CHUNK - 1), GF_KIND_POOL, &t)) != CUDA_SUCCESS) {
		pool_table_unlock();
		return res;
	}
	res = q->alloc(q->arg);
	reserved = pool_reserved(pool);
	if (res != CUDA_SUCCESS)
		goto out_settle;
	if (pool_cover(r, reserved, &t, &res) < 0)
		goto out_undo;
	if (t.dev >= 0 && reserved != r->charged &&
	    client_commit(&t, POOL_KEY(pool), reserved) == 0) {
		r->charged = reserved;
		goto out_unlock;
	}
out_settle:
	client_rollback(&t);
	pool_recharge(pool, r);
out_unlock:
	pool_table_unlock();
	return res;
out_undo:
	q->undo(q->arg);
	pool_trim_back(pool, r);
	client_rollback(&t);
	/* undo synchronised: every pool may have given memory back. */
	pool_recharge_all();
	goto out_unlock;
}

void
pool_settle(CUmemoryPool pool)
{
	struct pool_rec *r;

	pool_table_lock();
	if ((r = pool_table_get(pool)) != NULL)
		pool_recharge(pool, r);
	pool_table_unlock();
}

void
pool_settle_all(void)
{
	/*
	 * An allocation holds the lock while the daemon may queue it, and
	 * memory this synchronisation released may be what it waits for:
	 * never wait behind it. It settles the pool itself when it is done.
	 */
	if (pool_table_trylock() != 0)
		return;
	pool_recharge_all();
	pool_table_unlock();
}

CUresult
pool_destroy(CUmemoryPool pool, CUresult (*destroy)(void *), void *arg)
{
	struct pool_rec r;
	CUresult res;

	pool_table_lock();
	res = destroy(arg);
	/* What it still lends the driver frees as it empties. */
	if (res == CUDA_SUCCESS && pool_table_del(pool, &r) && r.charged != 0)
		client_recharge(POOL_KEY(pool), r.dev, GF_KIND_POOL, 0);
	pool_table_unlock();
	return res;
}
