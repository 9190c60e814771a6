/*
 * cuMemcpy* and cuMemset*, with their Async and per-thread-default-stream
 * (_ptds/_ptsz) forms. Work runs on the calling thread before the call
 * returns, which is one valid schedule of any stream; with SIMCUDA_ASYNC,
 * a copy on a stream the program made runs later, on its own (async.c).
 */
#include <string.h>

#include "sim.h"

enum {
	SIDE_HOST,	/* pageable host memory: any address */
	SIDE_DEVICE,	/* must lie inside one allocation */
	SIDE_ANY,	/* unified addressing decides (cuMemcpy) */
};

/*
 * Whether [p, p + n) is a valid side of a copy by device phys, which
 * writes it if write; the lock is held. VMM memory must be accessible to
 * phys (cuMemSetAccess), and a range may run across mappings that lie
 * end to end, as a range of virtual addresses does.
 */
static int
side_ok(uint64_t p, size_t n, int side, int phys, int write)
{
	struct sim_alloc *a;
	size_t left;

	if (p == 0)
		return 0;
	if (side == SIDE_HOST)
		return 1;
	if ((a = alloc_find(p)) == NULL)
		return side == SIDE_ANY;	/* unknown: host memory */
	for (;;) {
		if (a->kind == SIM_MEM_VMM && vmm_access(a, phys) < (write ?
		    CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
		    CU_MEM_ACCESS_FLAGS_PROT_READ))
			return 0;
		left = a->size - (p - a->base);
		if (n <= left)
			return 1;
		if (a->kind != SIM_MEM_VMM)
			return 0;
		n -= left;
		p += left;
		if ((a = alloc_find(p)) == NULL || a->kind != SIM_MEM_VMM)
			return 0;
	}
}

/* Where p lies: pinned host memory, device memory, or neither (-1). */
static int
side_where(uint64_t p)
{
	struct sim_alloc *a = alloc_find(p);

	if (a == NULL || (a->kind & SIM_MEM_MANAGED))
		return -1;
	return (a->kind & (SIM_MEM_HOST | SIM_MEM_REGISTERED)) ? SIDE_HOST :
	    SIDE_DEVICE;
}

/*
 * Whether a copy crosses the bus between pinned host memory and the
 * device, which takes bytes/SIMCUDA_COPY_GBPS (bus.c), the memmove that
 * stands for it included; the lock is held.
 * Pageable memory goes through the driver's staging buffers at a rate
 * that is not modelled.
 */
static int
side_bus(uint64_t dst, uint64_t src)
{
	int d = side_where(dst), s = side_where(src);

	return (d == SIDE_HOST && s == SIDE_DEVICE) ||
	    (d == SIDE_DEVICE && s == SIDE_HOST);
}

/*
 * The sync forms name the stream they run on: CU_STREAM_LEGACY, or
 * CU_STREAM_PER_THREAD for the _ptds entry points.
 */
static CUresult
copy_run(uint64_t dst, int dst_side, uint64_t src, int src_side, size_t n,
    CUstream stream)
{
	struct CUctx_st *ctx;
	struct timespec start;
	CUresult r = ctx_current(&ctx);
	int bus = 0;

	if (r != CUDA_SUCCESS)
		return r;
	bus_start(&start);
	sim_lock();
	if ((r = stream_check(stream)) == CUDA_SUCCESS && n != 0 &&
	    (!side_ok(dst, n, dst_side, ctx->phys, 1) ||
	    !side_ok(src, n, src_side, ctx->phys, 0)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && n != 0 && (bus_copy_rate != 0 ||
	    bus_fail_nth != 0))
		bus = side_bus(dst, src);
	sim_unlock();
	/* Nothing moves; the driver names no cause (SIMCUDA_FAIL_BUS_COPY). */
	if (bus && bus_copy_fails())
		return CUDA_ERROR_UNKNOWN;
	if (r == CUDA_SUCCESS && n != 0 && async_stream(stream))
		return async_copy(stream, ctx, dst, dst_side, src, src_side, n,
		    bus);
	if (r == CUDA_SUCCESS && n != 0)
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	if (bus)
		bus_move(&start, n, bus_copy_rate);
	return r;
}

int
copy_now(uint64_t dst, int dst_side, uint64_t src, int src_side, size_t n,
    int phys)
{
	int ok;

	/* Under the lock: the memory may not go while it is written. */
	sim_lock();
	if ((ok = side_ok(dst, n, dst_side, phys, 1) &&
	    side_ok(src, n, src_side, phys, 0)))
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	sim_unlock();
	return ok;
}

/* n elements of size bytes each; dst aligned to size. */
static CUresult
set_run(uint64_t dst, unsigned value, unsigned size, size_t n,
    CUstream stream)
{
	struct CUctx_st *ctx;
	unsigned char *p = (unsigned char *)(uintptr_t)dst;
	size_t i, bytes;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (dst % size != 0 || __builtin_mul_overflow(n, (size_t)size, &bytes))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((r = stream_check(stream)) == CUDA_SUCCESS && n != 0 &&
	    !side_ok(dst, bytes, SIDE_DEVICE, ctx->phys, 1))
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	if (r != CUDA_SUCCESS)
		return r;
	if (size == 1) {
		memset(p, (int)value, n);
		return CUDA_SUCCESS;
	}
	for (i = 0; i < n; i++)
		memcpy(p + i * size, &value, size);	/* little-endian */
	return CUDA_SUCCESS;
}

int
set_2d_ok(int phys, uint64_t dst, size_t pitch, unsigned size, size_t width,
    size_t height)
{
	size_t row, i;

	if (__builtin_mul_overflow(width, (size_t)size, &row))
		return 0;
	for (i = 0; i < height; i++)
		if (dst + i * pitch < dst || !side_ok(dst + i * pitch, row,
		    SIDE_DEVICE, phys, 1))
			return 0;
	return 1;
}

void
set_2d_write(uint64_t dst, size_t pitch, unsigned value, unsigned size,
    size_t width, size_t height)
{
	unsigned char *p;
	size_t i, j;

	for (i = 0; i < height; i++) {
		p = (unsigned char *)(uintptr_t)(dst + i * pitch);
		for (j = 0; j < width; j++)
			memcpy(p + j * size, &value, size);	/* little-endian */
	}
}

#define H(p)	((uint64_t)(uintptr_t)(p))
#define LEGACY	CU_STREAM_LEGACY
#define PERTHR	CU_STREAM_PER_THREAD

CUresult
cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dst, SIDE_ANY, src, SIDE_ANY, ByteCount, LEGACY);
}

CUresult
cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dst, SIDE_ANY, src, SIDE_ANY, ByteCount, PERTHR);
}

CUresult
cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
    CUstream hStream)
{
	SIM_GATE();
	return copy_run(dst, SIDE_ANY, src, SIDE_ANY, ByteCount, hStream);
}

CUresult
cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
    CUstream hStream)
{
	SIM_GATE();
	return copy_run(dst, SIDE_ANY, src, SIDE_ANY, ByteCount,
	    stream_ptsz(hStream));
}

CUresult
cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, H(srcHost), SIDE_HOST,
	    ByteCount, LEGACY);
}

CUresult
cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
    size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, H(srcHost), SIDE_HOST,
	    ByteCount, PERTHR);
}

CUresult
cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
    size_t ByteCount, CUstream hStream)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, H(srcHost), SIDE_HOST,
	    ByteCount, hStream);
}

CUresult
cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
    size_t ByteCount, CUstream hStream)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, H(srcHost), SIDE_HOST,
	    ByteCount, stream_ptsz(hStream));
}

CUresult
cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	SIM_GATE();
	return copy_run(H(dstHost), SIDE_HOST, srcDevice, SIDE_DEVICE,
	    ByteCount, LEGACY);
}

CUresult
cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	SIM_GATE();
	return copy_run(H(dstHost), SIDE_HOST, srcDevice, SIDE_DEVICE,
	    ByteCount, PERTHR);
}

CUresult
cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
    CUstream hStream)
{
	SIM_GATE();
	return copy_run(H(dstHost), SIDE_HOST, srcDevice, SIDE_DEVICE,
	    ByteCount, hStream);
}

CUresult
cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
    size_t ByteCount, CUstream hStream)
{
	SIM_GATE();
	return copy_run(H(dstHost), SIDE_HOST, srcDevice, SIDE_DEVICE,
	    ByteCount, stream_ptsz(hStream));
}

CUresult
cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
    size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE,
	    ByteCount, LEGACY);
}

CUresult
cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
    size_t ByteCount)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE,
	    ByteCount, PERTHR);
}

CUresult
cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
    size_t ByteCount, CUstream hStream)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE,
	    ByteCount, hStream);
}

CUresult
cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
    size_t ByteCount, CUstream hStream)
{
	SIM_GATE();
	return copy_run(dstDevice, SIDE_DEVICE, srcDevice, SIDE_DEVICE,
	    ByteCount, stream_ptsz(hStream));
}

CUresult
cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, uc, 1, N, LEGACY);
}

CUresult
cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, uc, 1, N, PERTHR);
}

CUresult
cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, us, 2, N, LEGACY);
}

CUresult
cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, us, 2, N, PERTHR);
}

CUresult
cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, ui, 4, N, LEGACY);
}

CUresult
cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	SIM_GATE();
	return set_run(dstDevice, ui, 4, N, PERTHR);
}

CUresult
cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, uc, 1, N, hStream);
}

CUresult
cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, uc, 1, N, stream_ptsz(hStream));
}

CUresult
cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, us, 2, N, hStream);
}

CUresult
cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, us, 2, N, stream_ptsz(hStream));
}

CUresult
cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, ui, 4, N, hStream);
}

CUresult
cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
    CUstream hStream)
{
	SIM_GATE();
	return set_run(dstDevice, ui, 4, N, stream_ptsz(hStream));
}
