/*
 * CUDA graphs, as far as memset nodes go (issue 21: a graph replayed
 * across a host swap). A node records its device pointer, value, element
 * size, width, height and pitch when it is added, as the real driver's
 * do; an executable graph copies its graph's nodes when instantiated and
 * a launch performs them, in the order they were added (an order that
 * respects every dependency, which must exist first). Memory that is no
 * longer there, or no longer writable by the node's device, at launch is
 * CUDA_ERROR_ILLEGAL_ADDRESS, the fault a kernel of the real driver's
 * memset takes.
 */
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "sim.h"

#define KEY(h)	((uint64_t)(uintptr_t)(h))

/* cuGraphInstantiateWithFlags: every flag of cuda.h 12.8. */
#define GRAPH_FLAGS	(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | \
	    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | \
	    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | \
	    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

struct CUgraphNode_st {
	CUDA_MEMSET_NODE_PARAMS	 p;
	struct CUctx_st		*ctx;
	struct CUgraph_st	*graph;
};

struct CUgraph_st {
	struct CUgraphNode_st	**nodes;	/* each its own: handles */
	size_t			  n;
};

struct CUgraphExec_st {
	struct CUgraphNode_st	*nodes;		/* copies */
	size_t			 n;
};

static struct ptrmap graphs, execs;	/* live handles */

static void
graph_free(struct CUgraph_st *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

static void
exec_free(struct CUgraphExec_st *e)
{
	free(e->nodes);
	free(e);
}

/* Add h to m; on failure h is freed with fn. Takes the lock itself. */
static CUresult
graph_handle_add(struct ptrmap *m, void *h, void (*fn)(void *))
{
	int rc;

	sim_lock();
	rc = ptrmap_put(m, KEY(h), h);
	sim_unlock();
	if (rc < 0) {
		fn(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static void
graph_free_any(void *g)
{
	graph_free(g);
}

static void
exec_free_any(void *e)
{
	exec_free(e);
}

CUresult
cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	SIM_GATE();
	struct CUgraph_st *g;
	CUresult r = sim_ready_out(phGraph);

	if (r != CUDA_SUCCESS)
		return r;
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = graph_handle_add(&graphs, g, graph_free_any)) == CUDA_SUCCESS)
		*phGraph = g;
	return r;
}

/* Whether the parameters make sense at all, whatever the memory. */
static int
memset_params_ok(const CUDA_MEMSET_NODE_PARAMS *p)
{
	size_t row;

	if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
		return 0;
	if (p->width == 0 || p->height == 0 || p->dst % p->elementSize != 0 ||
	    __builtin_mul_overflow(p->width, (size_t)p->elementSize, &row))
		return 0;
	return p->height == 1 || p->pitch >= row;
}

/* Whether every dependency is a node of g (the lock is held). */
static int
deps_ok(const struct CUgraph_st *g, const CUgraphNode *deps, size_t n)
{
	size_t i, j;

	if (n != 0 && deps == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < g->n && g->nodes[j] != deps[i]; j++)
			;
		if (j == g->n)
			return 0;
	}
	return 1;
}

/* Take node into g (the lock is held); 0, or -1 out of memory. */
static int
graph_take(struct CUgraph_st *g, struct CUgraphNode_st *node)
{
	struct CUgraphNode_st **nn;

	if ((nn = realloc(g->nodes, (g->n + 1) * sizeof(*nn))) == NULL)
		return -1;
	g->nodes = nn;
	g->nodes[g->n++] = node;
	return 0;
}

/* The memory must be device memory that ctx's device may write now. */
CUresult
cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
	SIM_GATE();
	struct CUgraphNode_st *node;
	CUresult r = sim_ready_out(phGraphNode);

	if (r != CUDA_SUCCESS)
		return r;
	if (memsetParams == NULL || !memset_params_ok(memsetParams))
		return CUDA_ERROR_INVALID_VALUE;
	if ((node = calloc(1, sizeof(*node))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	node->p = *memsetParams;
	node->ctx = ctx;
	node->graph = hGraph;
	sim_lock();
	if (!ptrmap_get(&graphs, KEY(hGraph)) ||
	    !deps_ok(hGraph, dependencies, numDependencies))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!ctx_live(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (!set_2d_ok(ctx->phys, node->p.dst, node->p.pitch,
	    node->p.elementSize, node->p.width, node->p.height))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (graph_take(hGraph, node) < 0)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	if (r != CUDA_SUCCESS)
		free(node);
	else
		*phGraphNode = node;
	return r;
}

CUresult
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
    unsigned long long flags)
{
	SIM_GATE();
	struct CUgraphExec_st *e;
	size_t i;
	CUresult r = sim_ready_out(phGraphExec);

	if (r != CUDA_SUCCESS)
		return r;
	if ((flags & ~(unsigned long long)GRAPH_FLAGS) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if (!ptrmap_get(&graphs, KEY(hGraph)))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (hGraph->n != 0 &&
	    (e->nodes = calloc(hGraph->n, sizeof(*e->nodes))) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	for (i = 0; r == CUDA_SUCCESS && i < hGraph->n; i++)
		e->nodes[e->n++] = *hGraph->nodes[i];
	sim_unlock();
	if (r != CUDA_SUCCESS) {
		exec_free(e);
		return r;
	}
	if ((r = graph_handle_add(&execs, e, exec_free_any)) == CUDA_SUCCESS)
		*phGraphExec = e;
	return r;
}

/* Each node's memory checked, then written, in the order added. */
static CUresult
graph_launch(CUgraphExec e, CUstream s)
{
	const CUDA_MEMSET_NODE_PARAMS *p;
	CUresult r = sim_ready();
	size_t i;

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (!ptrmap_get(&execs, KEY(e)))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = stream_check(s);
	for (i = 0; r == CUDA_SUCCESS && i < e->n; i++) {
		p = &e->nodes[i].p;
		if (!ctx_live(e->nodes[i].ctx))
			r = CUDA_ERROR_INVALID_CONTEXT;
		else if (!set_2d_ok(e->nodes[i].ctx->phys, p->dst, p->pitch,
		    p->elementSize, p->width, p->height))
			r = CUDA_ERROR_ILLEGAL_ADDRESS;
	}
	sim_unlock();
	for (i = 0; r == CUDA_SUCCESS && i < e->n; i++) {
		p = &e->nodes[i].p;
		set_2d_write(p->dst, p->pitch, p->value, p->elementSize,
		    p->width, p->height);
	}
	return r;
}

CUresult
cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	SIM_GATE();
	return graph_launch(hGraphExec, hStream);
}

CUresult
cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	SIM_GATE();
	return graph_launch(hGraphExec, stream_ptsz(hStream));
}

/* Free the live handle h of m with fn, else CUDA_ERROR_INVALID_VALUE. */
static CUresult
graph_destroy(struct ptrmap *m, void *h, void (*fn)(void *))
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (h != NULL && ptrmap_get(m, KEY(h)) != NULL)
		fn(ptrmap_del(m, KEY(h)));
	else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/* An executable graph lives on without the graph it was made from. */
CUresult
cuGraphDestroy(CUgraph hGraph)
{
	SIM_GATE();
	return graph_destroy(&graphs, hGraph, graph_free_any);
}

CUresult
cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	SIM_GATE();
	return graph_destroy(&execs, hGraphExec, exec_free_any);
}

/* In a forked child the graphs are copies of the parent's: gone. */
void
graph_forget(void)
{
	void *h;
	size_t pos = 0;

	while ((h = ptrmap_next(&graphs, &pos, NULL)) != NULL)
		graph_free(h);
	ptrmap_free(&graphs);
	pos = 0;
	while ((h = ptrmap_next(&execs, &pos, NULL)) != NULL)
		exec_free(h);
	ptrmap_free(&execs);
}
