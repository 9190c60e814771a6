/*
 * The soak client's uses of memory it holds that take none, but go
 * through the shim all the same (its gates, libgpufrac(7)): a legacy IPC
 * handle asked for a cuMemAlloc allocation, and a graph whose memset node
 * writes one past its pattern, launched and destroyed. The simulated
 * driver has no legacy IPC of its own (tests/simcuda/README.md): it
 * answers CUDA_ERROR_NOT_SUPPORTED, as a real driver does where IPC is
 * unsupported, unless the copy engine makes the handle.
 */
#include <string.h>

#include "soak_client.h"

/* How many bytes a memset node writes, at most. */
#define GRAPH_BYTES	4096

/* A cuMemAlloc allocation held on dev, at random; NULL when none. */
static const struct held *
held_plain(struct tenant *t, int dev)
{
	size_t i, n = t->nheld, at;

	if (n == 0)
		return NULL;
	at = (size_t)(soak_rand(&t->rng) % n);
	for (i = 0; i < n; i++) {
		const struct held *h = &t->held[(at + i) % n];

		if (h->kind == SOAK_MEM && h->dev == dev &&
		    h->size > TAG_BYTES)
			return h;
	}
	return NULL;
}

static CUresult
use_ipc(const struct held *h)
{
	CUipcMemHandle handle;
	CUresult r = cuIpcGetMemHandle(&handle, h->ptr);

	return r == CUDA_ERROR_NOT_SUPPORTED ? CUDA_SUCCESS : r;
}

/* Past the pattern, so that kind_verify still finds it. */
static CUresult
use_graph(const struct held *h, CUcontext ctx)
{
	CUDA_MEMSET_NODE_PARAMS p;
	CUgraphExec exec;
	CUgraphNode node;
	CUgraph g;
	CUresult r, r1;

	if ((r = cuGraphCreate(&g, 0)) != CUDA_SUCCESS)
		return r;
	memset(&p, 0, sizeof(p));
	p.dst = h->ptr + TAG_BYTES;
	p.elementSize = 1;
	p.width = h->size - TAG_BYTES < GRAPH_BYTES ?
	    (size_t)(h->size - TAG_BYTES) : GRAPH_BYTES;
	p.height = 1;
	p.pitch = p.width;
	p.value = 0x5a;
	if ((r = cuGraphAddMemsetNode(&node, g, NULL, 0, &p, ctx)) ==
	    CUDA_SUCCESS &&
	    (r = cuGraphInstantiateWithFlags(&exec, g, 0)) == CUDA_SUCCESS) {
		if ((r = cuGraphLaunch(exec, NULL)) == CUDA_SUCCESS)
			r = cuStreamSynchronize(NULL);
		if ((r1 = cuGraphExecDestroy(exec)) != CUDA_SUCCESS &&
		    r == CUDA_SUCCESS)
			r = r1;
	}
	if ((r1 = cuGraphDestroy(g)) != CUDA_SUCCESS && r == CUDA_SUCCESS)
		r = r1;
	return r;
}

CUresult
use_held(struct tenant *t, int kind, int dev)
{
	const struct held *h = held_plain(t, dev);
	CUresult r;

	if (h == NULL)
		return CUDA_SUCCESS;	/* nothing to use: counted all the same */
	if (kind == SOAK_IPC)
		return use_ipc(h);
	r = use_graph(h, t->ctx[dev]);
	pools_read(t);		/* the synchronisation gave pools' memory back */
	return r;
}
