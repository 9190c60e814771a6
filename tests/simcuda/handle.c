/*
 * Stream and event handles: each a live object, made in a context, for as
 * long as its address is a key of its ptrmap. What streams and events have
 * in common: adding, checking, destroying, and going with their context.
 */
#include <stdlib.h>

#include "ptrmap.h"
#include "sim.h"

#define KEY(h)	((uint64_t)(uintptr_t)(h))

CUresult
handle_add(struct ptrmap *m, void *h)
{
	int rc;

	sim_lock();
	rc = ptrmap_put(m, KEY(h), h);
	sim_unlock();
	if (rc < 0) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

int
handle_live(const struct ptrmap *m, const void *h)
{
	return h != NULL && ptrmap_get(m, KEY(h)) != NULL;
}

CUresult
handle_destroy(struct ptrmap *m, void *h)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (handle_live(m, h))
		free(ptrmap_del(m, KEY(h)));
	else
		r = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return r;
}

void
handle_release_ctx(struct ptrmap *m, struct CUctx_st *ctx)
{
	struct sim_handle *h;
	size_t pos = 0;

	/* A delete moves entries about: walk again from the start. */
	while ((h = ptrmap_next(m, &pos, NULL)) != NULL)
		if (h->ctx == ctx) {
			free(ptrmap_del(m, KEY(h)));
			pos = 0;
		}
}

/* In a forked child the objects are copies that only this process holds. */
void
handle_forget(struct ptrmap *m)
{
	void *h;
	size_t pos = 0;

	while ((h = ptrmap_next(m, &pos, NULL)) != NULL)
		free(h);
	ptrmap_free(m);
}
