/*
 * The copy engine's pinned host memory (vback_int.h). Pinning is what
 * made the first copy engine slow on a real GPU: cuMemHostAlloc of a
 * 12 GiB tenant took 5 s on an H200 whose bus copied it in 0.23 s. So a
 * move out pins each allocation's buffer once, and the buffers stay with
 * their allocations after the move in, for the next move out; the daemon
 * counts them against swap_host_limit (MOVED's kept) and asks for them
 * back (MOVE GF_SWAP_DROP) when a swap needs the room. The buffer of an
 * allocation the program frees waits among the spares for the next move
 * out, which takes one big enough or pins anew, and frees those left.
 * Buffers are portable: any context's copies use them at bus speed.
 */
#include <stdlib.h>

#include "real.h"
#include "vback_int.h"

struct vback_spare {
	void		*host;
	uint64_t	 len;
	CUcontext	 ctx;
};

static struct vback_spare *spares;
static size_t nspares, spares_cap;

/* Free host, had in ctx (current for the call, as the driver wants). */
static void
host_free(void *host, CUcontext ctx)
{
	CUcontext cur = NULL;

	(void)REAL_CALL(cuCtxGetCurrent, &cur);
	if (ctx != cur)
		(void)REAL_CALL(cuCtxSetCurrent, ctx);
	(void)REAL_CALL(cuMemFreeHost, host);
	if (ctx != cur)
		(void)REAL_CALL(cuCtxSetCurrent, cur);
}

CUresult
vback_host_get(struct vback *v, uint64_t *pinned)
{
	size_t i, best = nspares;
	CUresult r;

	if (v->host != NULL)
		return CUDA_SUCCESS;
	for (i = 0; i < nspares; i++)
		if (spares[i].len >= v->size && (best == nspares ||
		    spares[i].len < spares[best].len))
			best = i;
	if (best < nspares) {
		v->host = spares[best].host;
		v->hostlen = spares[best].len;
		v->hostctx = spares[best].ctx;
		spares[best] = spares[--nspares];
		return CUDA_SUCCESS;
	}
	/* Pinned memory is had in a context: the allocation's own. */
	if ((r = REAL_CALL(cuCtxSetCurrent, v->ctx)) != CUDA_SUCCESS ||
	    (r = REAL_CALL(cuMemHostAlloc, &v->host, v->size,
	    CU_MEMHOSTALLOC_PORTABLE)) != CUDA_SUCCESS) {
		v->host = NULL;
		return r;
	}
	v->hostlen = v->size;
	v->hostctx = v->ctx;
	*pinned += v->size;
	return CUDA_SUCCESS;
}

void
vback_host_put(struct vback *v)
{
	struct vback_spare *n;

	if (v->host == NULL)
		return;
	if (nspares == spares_cap) {
		n = realloc(spares, (spares_cap * 2 + 4) * sizeof(*n));
		if (n == NULL) {
			host_free(v->host, v->hostctx);
			v->host = NULL;
			return;
		}
		spares = n;
		spares_cap = spares_cap * 2 + 4;
	}
	spares[nspares].host = v->host;
	spares[nspares].len = v->hostlen;
	spares[nspares].ctx = v->hostctx;
	nspares++;
	v->host = NULL;
}

void
vback_host_trim(void)
{
	while (nspares > 0) {
		nspares--;
		host_free(spares[nspares].host, spares[nspares].ctx);
	}
}

void
vback_host_drop(struct vback **all, size_t n)
{
	size_t i;

	vback_host_trim();
	for (i = 0; i < n; i++)
		if (all[i]->host != NULL && all[i]->h != 0) {
			host_free(all[i]->host, all[i]->hostctx);
			all[i]->host = NULL;
		}
}

uint64_t
vback_host_kept(struct vback **all, size_t n)
{
	uint64_t kept = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (all[i]->host != NULL)
			kept += all[i]->hostlen;
	for (i = 0; i < nspares; i++)
		kept += spares[i].len;
	return kept;
}

/*
 * A destroyed context took the pinned memory had in it: forget it, so
 * that nothing is copied to it nor freed twice.
 */
void
vback_host_ctx_gone(CUcontext ctx)
{
	struct vback *v;
	uint64_t key;
	size_t i = 0, pos = 0;

	while (i < nspares)
		if (spares[i].ctx == ctx)
			spares[i] = spares[--nspares];
		else
			i++;
	while ((v = ptrmap_next(&vback_map, &pos, &key)) != NULL)
		if (v->host != NULL && v->hostctx == ctx)
			v->host = NULL;
}

/* The pages are the child's copies, pinned by nobody: not freed as such. */
void
vback_host_fork_child(void)
{
	free(spares);
	spares = NULL;
	nspares = spares_cap = 0;
}
