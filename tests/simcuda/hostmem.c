/*
 * Page-locked host memory: allocated by the driver (cuMemAllocHost,
 * cuMemHostAlloc) or registered (cuMemHostRegister). With unified
 * addressing its device pointer is its host address; it costs no device
 * memory. Pinning takes bytes/SIMCUDA_PIN_GBPS, as locking pages does on
 * the real driver (issue 21: ~2.3 GB/s on an H200's host).
 */
#include <stdlib.h>
#include <unistd.h>

#include "sim.h"

#define HOSTALLOC_FLAGS	(CU_MEMHOSTALLOC_PORTABLE | \
	CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)
#define REGISTER_FLAGS	(CU_MEMHOSTREGISTER_PORTABLE | \
	CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY | \
	CU_MEMHOSTREGISTER_READ_ONLY)

/* Record [base, base + size) as kind; the lock is held. */
static struct sim_alloc *
host_record(void *base, size_t size, size_t maplen, int kind,
    unsigned flags, struct CUctx_st *ctx)
{
	struct sim_alloc *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->base = (uint64_t)(uintptr_t)base;
	a->size = size;
	a->kind = kind;
	a->phys = -1;
	a->flags = flags;
	a->ctx = ctx;
	a->id = alloc_next_id();
	a->maplen = maplen;
	if (alloc_insert(a) < 0) {
		free(a);
		return NULL;
	}
	return a;
}

/*
 * Pinned pages are resident: with a pinning rate they are faulted in
 * within its time (bus.c's max rule), so that a copy into them later pays
 * for the bus only, not for this machine's page faults (make bench-swap).
 * Unset, they stay lazy, as before: no time and no memory until used.
 */
static void
host_populate(void *p, size_t n)
{
	volatile unsigned char *c = p;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off;

	if (bus_pin_rate == 0)
		return;
	for (off = 0; off < n; off += page)
		c[off] = 0;	/* the contents are undefined anyway */
}

static CUresult
host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
	struct CUctx_st *ctx;
	struct timespec start;
	size_t maplen;
	void *p;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (pp == NULL || bytesize == 0 || (flags & ~HOSTALLOC_FLAGS) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	bus_start(&start);
	/* Pinning works in pages. */
	if ((p = backing_alloc(bytesize, (size_t)sysconf(_SC_PAGESIZE),
	    &maplen)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if (host_record(p, bytesize, maplen, SIM_MEM_HOST, flags, ctx) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	if (r != CUDA_SUCCESS) {
		backing_free(p, maplen);
		return r;
	}
	host_populate(p, bytesize);
	bus_move(&start, bytesize, bus_pin_rate);
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	SIM_GATE();
	return host_alloc(pp, bytesize, 0);
}

CUresult
cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	SIM_GATE();
	return host_alloc(pp, bytesize, Flags);
}

CUresult
cuMemFreeHost(void *p)
{
	SIM_GATE();
	return alloc_free((uint64_t)(uintptr_t)p, SIM_MEM_HOST,
	    CUDA_ERROR_INVALID_VALUE);
}

/* Pinned memory containing p, or NULL; the lock is held. */
static struct sim_alloc *
host_find(const void *p)
{
	struct sim_alloc *a = alloc_find((uint64_t)(uintptr_t)p);

	return a != NULL && (a->kind & (SIM_MEM_HOST | SIM_MEM_REGISTERED)) ?
	    a : NULL;
}

/*
 * With unified addressing every pinned range is mapped whatever its flags,
 * and the device sees it at its host address.
 */
CUresult
cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	SIM_GATE();
	CUresult r = sim_ready_out(pdptr);

	if (r != CUDA_SUCCESS)
		return r;
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (host_find(p) == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pdptr = (CUdeviceptr)(uintptr_t)p;
	sim_unlock();
	return r;
}

CUresult
cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	SIM_GATE();
	struct sim_alloc *a;
	CUresult r = sim_ready_out(pFlags);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((a = host_find(p)) == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pFlags = a->flags;
	sim_unlock();
	return r;
}

static CUresult
host_register(void *p, size_t bytesize, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct timespec start;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (p == NULL || bytesize == 0 || (Flags & ~REGISTER_FLAGS) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	bus_start(&start);
	sim_lock();
	/* Fails when any byte of the range is already known. */
	if (host_record(p, bytesize, 0, SIM_MEM_REGISTERED, Flags,
	    ctx) == NULL)
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	sim_unlock();
	if (r == CUDA_SUCCESS)
		bus_move(&start, bytesize, bus_pin_rate);
	return r;
}

CUresult
cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	SIM_GATE();
	return host_register(p, bytesize, Flags);
}

CUresult
cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	SIM_GATE();
	return host_register(p, bytesize, Flags);
}

CUresult
cuMemHostUnregister(void *p)
{
	SIM_GATE();
	return alloc_free((uint64_t)(uintptr_t)p, SIM_MEM_REGISTERED,
	    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}
