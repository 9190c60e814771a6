/*
 * Checks of the simulated driver's CUDA graphs (tests/simcuda/graph.c),
 * linked against it: memset nodes record their memory and pattern when
 * added, an executable graph replays them at each launch, and a launch
 * over memory that is gone, or that the device may no longer write, fails
 * as a real GPU's would. VMM memory unmapped and mapped again at the same
 * addresses with access, as the copy engine's swap does, replays.
 * Prints one line per failed check and exits 1 if any failed, else 0.
 *
 *   sim_graph_linked          run every check (uses $SIMCUDA_STATE, or a
 *                             private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_graph_linked free DEV print the free bytes of device DEV
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "child.h"
#include "lookup.h"
#include "machine.h"
#include "memcheck.h"

#define SPAN	(16 * 1024)	/* bytes read back from an allocation */

static const struct lookup_want lookups[] = {
	{ "cuGraphCreate", 10000, 0, (void *)cuGraphCreate },
	{ "cuGraphAddMemsetNode", 10000, 0, (void *)cuGraphAddMemsetNode },
	{ "cuGraphInstantiateWithFlags", 11040, 0,
	    (void *)cuGraphInstantiateWithFlags },
	{ "cuGraphLaunch", 10000, 0, (void *)cuGraphLaunch },
	{ "cuGraphLaunch", 10000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuGraphLaunch_ptsz },
	{ "cuGraphExecDestroy", 10000, 0, (void *)cuGraphExecDestroy },
	{ "cuGraphDestroy", 10000, 0, (void *)cuGraphDestroy },
	/* Too new for the version asked for. */
	{ "cuGraphInstantiateWithFlags", 11030, 0, NULL },
	{ "cuGraphCreate", 9020, 0, NULL },
};

/* Two rows of 256 words, 8 KiB apart, from 4 KiB into p. */
static CUDA_MEMSET_NODE_PARAMS
rows(CUdeviceptr p, unsigned value)
{
	CUDA_MEMSET_NODE_PARAMS m;

	memset(&m, 0, sizeof(m));
	m.dst = p + 4096;
	m.pitch = 8192;
	m.value = value;
	m.elementSize = 4;
	m.width = 256;
	m.height = 2;
	return m;
}

/* Whether p's first SPAN bytes are rows(p, value) over zeros. */
static int
landed(CUdeviceptr p, unsigned value)
{
	unsigned char got[SPAN], want[SPAN];
	size_t j;

	memset(want, 0, sizeof(want));
	for (j = 0; j < 1024; j += 4) {
		memcpy(want + 4096 + j, &value, 4);
		memcpy(want + 4096 + 8192 + j, &value, 4);
	}
	return cuMemcpyDtoH_v2(got, p, SPAN) == CUDA_SUCCESS &&
	    memcmp(got, want, SPAN) == 0;
}

/* A graph of one node over p, instantiated; the graph itself destroyed. */
static CUgraphExec
one_node(CUdeviceptr p, unsigned value, CUcontext ctx)
{
	CUDA_MEMSET_NODE_PARAMS m = rows(p, value);
	CUgraphExec e = NULL;
	CUgraphNode n;
	CUgraph g;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphDestroy(g));
	return e;
}

static void
check_graph_errors(CUcontext ctx)
{
	CUDA_MEMSET_NODE_PARAMS m;
	CUgraphNode n, other;
	CUgraph g, g2;
	CUgraphExec e;
	static uint32_t pageable[1024];
	CUdeviceptr p;

	OK(cuMemAlloc_v2(&p, 1 * MiB));
	EXPECT(cuGraphCreate(&g, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuGraphCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphCreate(&g2, 0));
	m = rows(p, 1);
	m.elementSize = 3;
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	m = rows(p, 1);
	m.pitch = 512;		/* less than a row */
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	m = rows(p + 2, 1);	/* not aligned to its element */
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	m = rows(p + 1 * MiB - 8192, 1);	/* past the end */
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	m = rows((CUdeviceptr)(uintptr_t)pageable - 4096, 1);	/* the host's */
	m.height = 1;
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	m = rows(p, 1);
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, NULL),
	    CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuGraphAddMemsetNode(&n, NULL, NULL, 0, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuGraphAddMemsetNode(&n, g, NULL, 0, NULL, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	/* A dependency must be a node of the same graph. */
	OK(cuGraphAddMemsetNode(&other, g2, NULL, 0, &m, ctx));
	EXPECT(cuGraphAddMemsetNode(&n, g, &other, 1, &m, ctx),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuGraphInstantiateWithFlags(&e, g, 1ull << 40),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphDestroy(g2));
	EXPECT(cuGraphDestroy(g2), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphInstantiateWithFlags(&e, g, 0));	/* empty: fine */
	OK(cuGraphLaunch(e, NULL));
	EXPECT(cuGraphLaunch(e, (CUstream)&e), CUDA_ERROR_INVALID_HANDLE);
	OK(cuGraphExecDestroy(e));
	EXPECT(cuGraphExecDestroy(e), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphDestroy(g));
	OK(cuMemFree_v2(p));
}

/* Nodes replay at each launch, in order; freed memory fails the launch. */
static void
check_graph_replay(CUcontext ctx, CUstream s)
{
	CUDA_MEMSET_NODE_PARAMS m;
	CUgraphNode a, b;
	CUgraphExec e;
	CUgraph g;
	CUdeviceptr p;

	OK(cuMemAlloc_v2(&p, 1 * MiB));
	OK(cuMemsetD8_v2(p, 0, SPAN));
	OK(cuGraphCreate(&g, 0));
	m = rows(p, 0x11111111);
	OK(cuGraphAddMemsetNode(&a, g, NULL, 0, &m, ctx));
	m = rows(p, 0x22222222);	/* after a: its value stays */
	OK(cuGraphAddMemsetNode(&b, g, &a, 1, &m, ctx));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	/* Changing the graph after instantiation changes no launch. */
	m = rows(p, 0x33333333);
	OK(cuGraphAddMemsetNode(&a, g, &b, 1, &m, ctx));
	OK(cuGraphDestroy(g));
	CHECK(landed(p, 0), "the graph ran before its launch");
	OK(cuGraphLaunch(e, s));
	OK(cuStreamSynchronize(s));
	CHECK(landed(p, 0x22222222), "nodes not replayed in order");
	OK(cuMemsetD8_v2(p, 0, SPAN));
	OK(cuGraphLaunch_ptsz(e, NULL));
	CHECK(landed(p, 0x22222222), "not replayed at a second launch");
	OK(cuMemFree_v2(p));
	EXPECT(cuGraphLaunch(e, s), CUDA_ERROR_ILLEGAL_ADDRESS);
	OK(cuGraphExecDestroy(e));
}

/*
 * VMM memory unmapped and mapped again at the same addresses, as the copy
 * engine swaps it: the launch fails while nothing, or nothing writable,
 * is mapped there, and replays once it is.
 */
static void
check_graph_vmm(CUcontext ctx)
{
	CUmemAllocationProp prop = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	CUgraphExec e;
	CUdeviceptr va = must_reserve(2 * MiB);

	OK(cuMemCreate(&h, 2 * MiB, &prop, 0));
	OK(cuMemMap(va, 2 * MiB, 0, h, 0));
	set_access(va, 2 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0, SPAN));
	e = one_node(va, 0x44444444, ctx);
	OK(cuGraphLaunch(e, NULL));
	CHECK(landed(va, 0x44444444), "not replayed on VMM memory");
	OK(cuMemUnmap(va, 2 * MiB));
	OK(cuMemRelease(h));
	EXPECT(cuGraphLaunch(e, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
	OK(cuMemCreate(&h, 2 * MiB, &prop, 0));
	OK(cuMemMap(va, 2 * MiB, 0, h, 0));
	EXPECT(cuGraphLaunch(e, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
	set_access(va, 2 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
	EXPECT(cuGraphLaunch(e, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
	set_access(va, 2 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuGraphLaunch(e, NULL));
	CHECK(landed(va, 0x44444444), "not replayed on memory mapped again");
	OK(cuGraphExecDestroy(e));
	unmap_release(va, 2 * MiB, h);
}

static void
checks(CUstream s)
{
	CUcontext ctx;

	OK(cuCtxGetCurrent(&ctx));
	check_lookups(lookups, sizeof(lookups) / sizeof(lookups[0]));
	check_graph_errors(ctx);
	check_graph_replay(ctx, s);
	check_graph_vmm(ctx);
}

int
main(int argc, char **argv)
{
	return mem_main(argc, argv, "simgraph", checks);
}
