/*
 * Checks of the simulated driver itself (tests/simcuda), linked against it:
 * memory, copies, contexts, streams, pointer attributes, cuGetProcAddress,
 * and capacity shared across processes. Prints one line per failed check
 * and exits 1 if any failed, else 0.
 *
 *   sim_check_linked          run every check (uses $SIMCUDA_STATE, or a
 *                             private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_check_linked list     print "ORDINAL NAME UUID TOTAL" per device, or
 *                             the cuInit error name (for CUDA_VISIBLE_DEVICES)
 *   sim_check_linked take BYTES SECONDS
 *                             allocate on device 0, print "ok" or the error
 *                             name, hold it SECONDS, exit
 * The other modes are the children the checks start.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "lookup.h"
#include "machine.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

static void
check_before_init(void)
{
	CUdeviceptr p;
	void *fn = NULL;
	int n, v = 0;

	EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT(cuMemAlloc_v2(&p, 1), CUDA_ERROR_NOT_INITIALIZED);
	OK(cuDriverGetVersion(&v));
	CHECK(v == 12080 || v == 13000, "driver version %d", v);
	/* libcudart finds cuInit this way, before initialising. */
	OK(cuGetProcAddress_v2("cuInit", &fn, 12000, 0, NULL));
	CHECK(fn == (void *)cuInit, "cuInit by name");
	EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	OK(cuInit(0));
	OK(cuInit(0));
}

static void
check_devices(void)
{
	CUuuid u1, u2;
	char name[64], bus[32];
	size_t total;
	int n = 0, v, major, minor;
	CUdevice d;

	OK(cuDeviceGetCount(&n));
	CHECK(n == 2, "device count %d", n);
	OK(cuDeviceGet(&d, 1));
	CHECK(d == 1, "cuDeviceGet(1) = %d", d);
	EXPECT(cuDeviceGet(&d, 2), CUDA_ERROR_INVALID_DEVICE);
	OK(cuDeviceGetName(name, sizeof(name), 0));
	CHECK(strcmp(name, "simcuda device 0") == 0, "name '%s'", name);
	OK(cuDeviceTotalMem_v2(&total, 1));
	CHECK(total == 2 * GiB, "total %zu", total);
	OK(cuDeviceGetUuid(&u1, 0));
	OK(cuDeviceGetUuid_v2(&u2, 0));
	CHECK(memcmp(&u1, &u2, sizeof(u1)) == 0, "uuid v1 != v2");
	OK(cuDeviceGetUuid(&u2, 1));
	CHECK(memcmp(&u1, &u2, sizeof(u1)) != 0, "two devices, one uuid");
	OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
	CHECK(v == 32, "warp size %d", v);
	OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0));
	CHECK(v == 1, "unified addressing %d", v);
	OK(cuDeviceComputeCapability(&major, &minor, 0));
	CHECK(major == 9 && minor == 0, "compute capability %d.%d", major,
	    minor);
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7),
	    CUDA_ERROR_INVALID_DEVICE);
	OK(cuDeviceGetPCIBusId(bus, sizeof(bus), 1));
	CHECK(strcmp(bus, "0000:02:00.0") == 0, "bus id '%s'", bus);
}

static void
check_no_context(void)
{
	CUcontext c = (CUcontext)1;
	CUdeviceptr p;
	size_t fr, total;

	OK(cuCtxGetCurrent(&c));
	CHECK(c == NULL, "a current context before any was made");
	EXPECT(cuMemAlloc_v2(&p, 1), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuMemGetInfo_v2(&fr, &total), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuCtxPopCurrent_v2(&c), CUDA_ERROR_INVALID_CONTEXT);
}

static void
check_alloc(void)
{
	CUdeviceptr p, q, base = 0;
	uint64_t before = free_bytes();
	size_t size = 0;

	EXPECT(cuMemAlloc_v2(&p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAlloc_v2(NULL, 1), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAlloc_v2(&p, 1000));
	CHECK(p % 512 == 0, "pointer %#llx not 512-aligned", p);
	/* 1000 bytes are charged as two 512-byte granules. */
	CHECK(before - free_bytes() == 1024, "charged %llu",
	    (unsigned long long)(before - free_bytes()));
	OK(cuMemGetAddressRange_v2(&base, &size, p + 999));
	CHECK(base == p && size == 1000, "range %#llx+%zu", base, size);
	EXPECT(cuMemGetAddressRange_v2(&base, &size, p + 1000),
	    CUDA_ERROR_NOT_FOUND);
	EXPECT(cuMemFree_v2(p + 8), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemFree_v2(0x1000), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAlloc_v2(&q, 3000));
	CHECK(q != p, "two allocations at one address");
	OK(cuMemFree_v2(p));
	EXPECT(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFree_v2(q));
	CHECK(free_bytes() == before, "memory not returned");
}

static void
check_oom(void)
{
	CUdeviceptr p, q;
	uint64_t before = free_bytes();

	EXPECT(cuMemAlloc_v2(&p, 5 * GiB), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(cuMemAlloc_v2(&p, SIZE_MAX), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(free_bytes() == before, "a failed allocation was charged");
	OK(cuMemAlloc_v2(&p, 3 * GiB));
	EXPECT(cuMemAlloc_v2(&q, 2 * GiB), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemAlloc_v2(&q, before - 3 * GiB));
	CHECK(free_bytes() == 0, "free %llu on a full device",
	    (unsigned long long)free_bytes());
	EXPECT(cuMemAlloc_v2(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFree_v2(p));
	OK(cuMemFree_v2(q));
	CHECK(free_bytes() == before, "memory not returned");
}

static void
check_copy(void)
{
	unsigned char in[4096], out[4096];
	uint16_t h16[8];
	uint32_t h32[8];
	CUdeviceptr p, q;
	CUstream s;
	int i;

	for (i = 0; i < (int)sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	OK(cuMemAlloc_v2(&p, sizeof(in)));
	OK(cuMemAlloc_v2(&q, sizeof(in)));
	OK(cuMemcpyHtoD_v2(p, in, sizeof(in)));
	OK(cuMemcpyDtoD_v2(q, p, sizeof(in)));
	memset(out, 0, sizeof(out));
	OK(cuMemcpyDtoH_v2(out, q, sizeof(out)));
	CHECK(memcmp(in, out, sizeof(in)) == 0, "bytes changed in a copy");
	EXPECT(cuMemcpyHtoD_v2(p + 1, in, sizeof(in)), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoH_v2(out, 0x1000, 1), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemcpyHtoD_v2(p, in, 0));

	OK(cuMemsetD8_v2(p, 0xab, 4096));
	OK(cuMemsetD16_v2(p + 2, 0x1234, 8));
	OK(cuMemsetD32_v2(p + 64, 0xdeadbeef, 8));
	EXPECT(cuMemsetD32_v2(p + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD16_v2(p + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD32_v2(p, 0, 1025), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemcpyDtoH_v2(out, p, sizeof(out)));
	memcpy(h16, out + 2, sizeof(h16));
	memcpy(h32, out + 64, sizeof(h32));
	CHECK(out[0] == 0xab && out[1] == 0xab && out[18] == 0xab &&
	    out[4095] == 0xab, "memset D8");
	CHECK(h16[0] == 0x1234 && h16[7] == 0x1234, "memset D16");
	CHECK(h32[0] == 0xdeadbeef && h32[7] == 0xdeadbeef, "memset D32");

	/* The stream forms, the per-thread forms and unified cuMemcpy. */
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuMemsetD8Async(q, 1, 4096, s));
	OK(cuMemcpyHtoDAsync_v2(q, in, 100, s));
	OK(cuMemcpyDtoDAsync_v2_ptsz(p, q, 4096, NULL));
	OK(cuMemcpyDtoHAsync_v2(out, p, 4096, CU_STREAM_PER_THREAD));
	OK(cuStreamSynchronize(s));
	CHECK(memcmp(out, in, 100) == 0 && out[100] == 1 && out[4095] == 1,
	    "async copies");
	OK(cuMemcpy_ptds((CUdeviceptr)(uintptr_t)out, p + 4000, 96));
	CHECK(out[0] == 1, "cuMemcpy to host");
	OK(cuMemcpyHtoD_v2_ptds(p, in, 16));
	OK(cuMemcpyAsync(q, p, 16, CU_STREAM_LEGACY));
	OK(cuMemcpyDtoH_v2(out, q, 16));
	CHECK(memcmp(out, in, 16) == 0, "ptds and generic copies");
	OK(cuStreamDestroy_v2(s));
	EXPECT(cuMemcpyHtoDAsync_v2(q, in, 1, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	OK(cuMemFree_v2(p));
	OK(cuMemFree_v2(q));
}

static void
check_pitch_managed(void)
{
	CUdeviceptr p, m;
	uint64_t before = free_bytes();
	unsigned int type = 0, managed = 9;
	size_t pitch = 0;
	void *host = NULL;

	EXPECT(cuMemAllocPitch_v2(&p, &pitch, 1000, 10, 3),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocPitch_v2(&p, &pitch, 0, 10, 4),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAllocPitch_v2(&p, &pitch, 1000, 10, 4));
	CHECK(pitch == 1024, "pitch %zu", pitch);
	CHECK(before - free_bytes() == 10240, "pitch charged %llu",
	    (unsigned long long)(before - free_bytes()));
	OK(cuMemFree_v2(p));

	EXPECT(cuMemAllocManaged(&m, 4096, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
	CHECK(before - free_bytes() == 4096, "managed memory not charged");
	OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
	CHECK(managed == 1, "IS_MANAGED %u", managed);
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "managed memory type %u", type);
	OK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, m));
	CHECK(host == (void *)(uintptr_t)m, "managed host pointer");
	((unsigned char *)host)[100] = 42;	/* the host may touch it */
	OK(cuMemsetD8_v2(m, 7, 1));
	CHECK(((unsigned char *)host)[0] == 7 &&
	    ((unsigned char *)host)[100] == 42, "managed memory contents");
	OK(cuMemFree_v2(m));
	CHECK(free_bytes() == before, "memory not returned");
}

static void
check_attributes(CUcontext ctx)
{
	CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	unsigned int type = 9, managed = 9, ipc = 9;
	CUipcMemHandle handle;
	CUdeviceptr p, dp = 0, start = 0;
	CUcontext c = NULL;
	size_t size = 0;
	void *host, *data[3];
	int ordinal = -1;
	char buf[64];

	OK(cuMemAlloc_v2(&p, 10000));
	OK(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p + 5));
	CHECK(c == ctx, "CONTEXT");
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "MEMORY_TYPE %u", type);
	OK(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
	    p + 16));
	CHECK(dp == p + 16, "DEVICE_POINTER");
	EXPECT(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER,
	    p), CUDA_ERROR_INVALID_VALUE);
	OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
	CHECK(managed == 0, "IS_MANAGED %u", managed);
	OK(cuPointerGetAttribute(&ipc,
	    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p));
	CHECK(ipc == 1, "IS_LEGACY_CUDA_IPC_CAPABLE %u", ipc);
	/* Capable, but legacy IPC is not simulated: as without IPC. */
	EXPECT(cuIpcGetMemHandle(&handle, p), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuIpcGetMemHandle(&handle, (CUdeviceptr)(uintptr_t)buf),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    p));
	CHECK(ordinal == 0, "DEVICE_ORDINAL %d", ordinal);
	OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	    p + 9999));
	OK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	    p + 9999));
	CHECK(start == p && size == 10000, "RANGE %#llx+%zu", start, size);
	EXPECT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    (CUdeviceptr)(uintptr_t)buf), CUDA_ERROR_INVALID_VALUE);
	/* The plural form reads unknown memory as zeros. */
	data[0] = &type;
	data[1] = &c;
	data[2] = &size;
	OK(cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)buf));
	CHECK(type == 0 && c == NULL && size == 0, "attributes of host memory");
	OK(cuMemFree_v2(p));
}

static void
check_host_memory(void)
{
	uint64_t before = free_bytes();
	unsigned int type = 0, flags = 0;
	CUdeviceptr dp = 0;
	char *buf;
	void *h, *hb;

	OK(cuMemAllocHost_v2(&h, 100000));
	OK(cuMemHostAlloc(&hb, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
	buf = hb;
	memset(buf, 0, 4096);
	EXPECT(cuMemHostAlloc(&h, 1, 0x80), CUDA_ERROR_INVALID_VALUE);
	CHECK(free_bytes() == before, "host memory charged to the device");
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    (CUdeviceptr)(uintptr_t)h + 10));
	CHECK(type == CU_MEMORYTYPE_HOST, "pinned MEMORY_TYPE %u", type);
	OK(cuMemHostGetDevicePointer_v2(&dp, buf + 8, 0));
	CHECK(dp == (CUdeviceptr)(uintptr_t)(buf + 8), "device pointer");
	OK(cuMemHostGetFlags(&flags, buf));
	CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP, "host flags %u", flags);
	OK(cuMemsetD8_v2(dp, 5, 8));
	CHECK(buf[7] == 0 && buf[8] == 5 && buf[15] == 5 && buf[16] == 0,
	    "memset of mapped memory");
	EXPECT(cuMemFree_v2((CUdeviceptr)(uintptr_t)h), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeHost(h));
	OK(cuMemFreeHost(buf));
	EXPECT(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);

	buf = malloc(8192);
	OK(cuMemHostRegister_v2(buf, 8192, 0));
	EXPECT(cuMemHostRegister_v2(buf + 4096, 100, 0),
	    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    (CUdeviceptr)(uintptr_t)buf + 8000));
	CHECK(type == CU_MEMORYTYPE_HOST, "registered MEMORY_TYPE %u", type);
	EXPECT(cuMemHostUnregister(buf + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	OK(cuMemHostUnregister(buf));
	EXPECT(cuMemHostUnregister(buf), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	free(buf);
}

static void
check_events(void)
{
	CUevent a, b, nt;
	CUstream s;
	float ms = -1;
	int prio = 1;

	OK(cuStreamCreateWithPriority(&s, 0, -100));
	OK(cuStreamGetPriority(s, &prio));
	CHECK(prio == -5, "priority clamped to %d", prio);
	EXPECT(cuStreamCreate(&s, 7), CUDA_ERROR_INVALID_VALUE);
	OK(cuEventCreate(&a, 0));
	OK(cuEventCreate(&b, CU_EVENT_BLOCKING_SYNC));
	OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	EXPECT(cuEventCreate(&nt, CU_EVENT_INTERPROCESS),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuEventElapsedTime_v2(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventRecord(a, s));
	OK(cuEventRecord_ptsz(b, NULL));
	OK(cuEventRecord(nt, NULL));
	OK(cuStreamWaitEvent(s, b, 0));
	OK(cuEventQuery(b));
	OK(cuEventSynchronize(b));
	OK(cuStreamQuery(s));
	OK(cuEventElapsedTime(&ms, a, b));
	CHECK(ms >= 0, "elapsed %f ms", ms);
	EXPECT(cuEventElapsedTime(&ms, a, nt), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventDestroy_v2(nt));
	EXPECT(cuEventQuery(nt), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuStreamWaitEvent(s, nt, 0), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventDestroy_v2(a));
	OK(cuEventDestroy_v2(b));
	OK(cuStreamDestroy_v2(s));
	EXPECT(cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
}

/* One lookup: the function found, or NULL with *rc and *st set. */
static void *
lookup(const char *name, int version, cuuint64_t flags, CUresult *rc,
    CUdriverProcAddressQueryResult *st)
{
	void *fn = (void *)1;

	*rc = cuGetProcAddress_v2(name, &fn, version, flags, st);
	return fn;
}

/* What cuGetProcAddress_v2 finds, by version and flags, and what not. */
static const struct lookup_want lookups[] = {
	{ "cuMemAlloc", 12000, 0, (void *)cuMemAlloc_v2 },
	{ "cuMemAlloc", 3020, 0, (void *)cuMemAlloc_v2 },
	{ "cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
	    (void *)cuMemcpyHtoD_v2 },
	{ "cuMemcpyHtoD", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemcpyHtoD_v2_ptds },
	{ "cuMemcpyHtoD", 6050,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemcpyHtoD_v2 },
	{ "cuMemsetD8Async", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemsetD8Async_ptsz },
	{ "cuStreamSynchronize", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuStreamSynchronize_ptsz },
	{ "cuMemAllocManaged", 12000, 0, (void *)cuMemAllocManaged },
	{ "cuCtxCreate", 3000, 0, (void *)cuCtxCreate },
	{ "cuCtxCreate", 11020, 0, (void *)cuCtxCreate_v2 },
	{ "cuCtxCreate", 11040, 0, (void *)cuCtxCreate_v3 },
	{ "cuCtxCreate", 12080, 0, (void *)cuCtxCreate_v4 },
	{ "cuCtxDestroy", 12000, 0, (void *)cuCtxDestroy_v2 },
	{ "cuDevicePrimaryCtxRelease", 10020, 0,
	    (void *)cuDevicePrimaryCtxRelease },
	{ "cuDevicePrimaryCtxRelease", 11000, 0,
	    (void *)cuDevicePrimaryCtxRelease_v2 },
	{ "cuEventElapsedTime", 12000, 0, (void *)cuEventElapsedTime },
	{ "cuEventElapsedTime", 12080, 0, (void *)cuEventElapsedTime_v2 },
	{ "cuGetProcAddress", 11030, 0, (void *)cuGetProcAddress },
	{ "cuGetProcAddress", 12000, 0, (void *)cuGetProcAddress_v2 },
	/* A newer caller gets the newest ABI there is. */
	{ "cuMemGetInfo", 13000, 0, (void *)cuMemGetInfo_v2 },
	/* Too new for the version asked for. */
	{ "cuMemAllocManaged", 5050, 0, NULL },
};

static void
check_procaddr(void)
{
	CUdriverProcAddressQueryResult st;
	void *legacy, *ptds, *fn = NULL;
	CUresult rc;

	check_lookups(lookups, sizeof(lookups) / sizeof(lookups[0]));
	legacy = lookup("cuMemsetD32", 12000, 0, &rc, &st);
	ptds = lookup("cuMemsetD32", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &rc, &st);
	CHECK(legacy != ptds && legacy != NULL && ptds != NULL,
	    "per-thread entry point not distinct");

	fn = lookup("cuNoSuchFunction", 12000, 0, &rc, &st);
	CHECK(rc == CUDA_ERROR_NOT_FOUND && fn == NULL &&
	    st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	    "unknown: %s, status %d", err_name(rc), (int)st);
	fn = lookup("cuMemAlloc_v2", 12000, 0, &rc, &st);
	CHECK(rc == CUDA_ERROR_NOT_FOUND && fn == NULL,
	    "a versioned name is no base name");
	fn = lookup("cuMemAlloc", 12000, 4, &rc, &st);
	CHECK(rc == CUDA_ERROR_INVALID_VALUE, "bad flags: %s", err_name(rc));
	EXPECT(cuGetProcAddress_v2(NULL, &fn, 12000, 0, NULL),
	    CUDA_ERROR_INVALID_VALUE);

	OK(cuGetProcAddress("cuMemFree", &fn, 11030, 0));
	CHECK(fn == (void *)cuMemFree_v2, "v1 lookup");
	EXPECT(cuGetProcAddress("cuNoSuchFunction", &fn, 11030, 0),
	    CUDA_ERROR_NOT_FOUND);
	EXPECT(cuGetExportTable((const void **)&fn, &(CUuuid){ { 0 } }),
	    CUDA_ERROR_NOT_SUPPORTED);
}

static void
check_errors(void)
{
	const char *s = "x";

	OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
	CHECK(strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY") == 0, "name '%s'", s);
	OK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
	CHECK(strcmp(s, "out of memory") == 0, "string '%s'", s);
	EXPECT(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	CHECK(s == NULL, "name of an unknown code");
}

struct thread_arg {
	CUcontext	ctx;
	CUresult	fresh;		/* a new thread has no context */
	CUresult	destroyed;	/* using ctx after it was destroyed */
	pthread_barrier_t made, gone;
};

static void *
thread_main(void *p)
{
	struct thread_arg *t = p;
	CUdeviceptr d;

	t->fresh = cuMemAlloc_v2(&d, 1);
	cuCtxPushCurrent_v2(t->ctx);
	pthread_barrier_wait(&t->made);
	pthread_barrier_wait(&t->gone);
	t->destroyed = cuMemAlloc_v2(&d, 1);
	return NULL;
}

/*
 * A context of device 1 made, current per thread, destroyed with its
 * memory. Returns the free bytes of device 1 with no memory held.
 */
static uint64_t
check_own_context(CUcontext primary)
{
	struct thread_arg t;
	CUcontext c, top = NULL;
	CUdeviceptr p;
	uint64_t before;
	pthread_t th;
	CUdevice dev = -1;

	/* A context of its own on device 1, pushed over the primary one. */
	EXPECT(cuCtxCreate_v2(&c, 0x3, 1), CUDA_ERROR_INVALID_VALUE);
	OK(cuCtxCreate_v4(&c, NULL, 0, 1));
	OK(cuCtxGetDevice(&dev));
	CHECK(dev == 1, "device of the new context %d", dev);
	before = free_bytes();
	OK(cuMemAlloc_v2(&p, 1 * GiB));
	OK(cuCtxPopCurrent_v2(&top));
	CHECK(top == c, "popped another context");
	OK(cuCtxGetCurrent(&top));
	CHECK(top == primary, "the primary context is not back on top");
	OK(cuCtxPushCurrent_v2(c));
	EXPECT(cuCtxDestroy_v2(primary), CUDA_ERROR_INVALID_CONTEXT);

	/* Contexts are current per thread; destroying one frees its memory. */
	t.ctx = c;
	pthread_barrier_init(&t.made, NULL, 2);
	pthread_barrier_init(&t.gone, NULL, 2);
	pthread_create(&th, NULL, thread_main, &t);
	pthread_barrier_wait(&t.made);
	OK(cuCtxDestroy_v2(c));
	pthread_barrier_wait(&t.gone);
	pthread_join(th, NULL);
	CHECK(t.fresh == CUDA_ERROR_INVALID_CONTEXT, "new thread: %s",
	    err_name(t.fresh));
	CHECK(t.destroyed == CUDA_ERROR_CONTEXT_IS_DESTROYED,
	    "destroyed elsewhere: %s", err_name(t.destroyed));
	OK(cuCtxGetCurrent(&top));
	CHECK(top == primary, "cuCtxDestroy did not pop");
	EXPECT(cuCtxDestroy_v2(c), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxCreate_v2(&c, 0, 1));
	CHECK(free_bytes() == before, "a destroyed context kept its memory");
	OK(cuCtxDestroy_v2(c));
	return before;
}

/* Primary contexts: counted retains, the last release frees. */
static void
check_primary_context(uint64_t before)
{
	CUcontext c, c2;
	CUdeviceptr p;
	unsigned int flags = 9;
	int active = 9;

	OK(cuDevicePrimaryCtxRetain(&c, 1));
	OK(cuDevicePrimaryCtxRetain(&c2, 1));
	CHECK(c == c2, "two primary contexts for one device");
	EXPECT(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_YIELD),
	    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
	OK(cuDevicePrimaryCtxSetFlags_v2(1, CU_CTX_SCHED_YIELD));
	OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
	CHECK(flags == CU_CTX_SCHED_YIELD && active == 1, "state %u %d", flags,
	    active);
	OK(cuCtxPushCurrent_v2(c));
	OK(cuMemAlloc_v2(&p, 1 * GiB));
	OK(cuDevicePrimaryCtxRelease_v2(1));
	CHECK(free_bytes() == before - 1 * GiB, "released while retained");
	OK(cuDevicePrimaryCtxRelease_v2(1));
	EXPECT(cuDevicePrimaryCtxRelease_v2(1), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
	CHECK(active == 0, "active after the last release");
	EXPECT(cuMemAlloc_v2(&p, 1), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxPopCurrent_v2(NULL));
	OK(cuDevicePrimaryCtxRetain(&c, 1));
	OK(cuCtxPushCurrent_v2(c));
	CHECK(free_bytes() == before, "the last release kept the memory");
	OK(cuCtxPopCurrent_v2(NULL));
	OK(cuDevicePrimaryCtxRelease_v2(1));
}

/*
 * In a child forked after its parent's cuInit: the real driver (since
 * CUDA 8) answers its cuInit, for good, and every call that needs
 * initialisation with CUDA_ERROR_NOT_INITIALIZED (triton-lang/triton PR
 * 10443); so in its own children (down to depth 0). What needs no
 * initialisation still works. 0, or the step that failed.
 */
static int
forked_refused(int depth)
{
	CUdeviceptr q;
	CUcontext ctx;
	size_t fr, total;
	int n, st;
	pid_t pid;

	if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED)
		return 1;
	if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED)
		return 2;
	if (cuDeviceGetCount(&n) != CUDA_ERROR_NOT_INITIALIZED)
		return 3;
	if (cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_ERROR_NOT_INITIALIZED)
		return 4;
	if (cuMemAlloc_v2(&q, 1) != CUDA_ERROR_NOT_INITIALIZED)
		return 5;
	if (cuMemGetInfo_v2(&fr, &total) != CUDA_ERROR_NOT_INITIALIZED)
		return 6;
	if (cuDriverGetVersion(&n) != CUDA_SUCCESS)
		return 7;
	if (depth == 0)
		return 0;
	if ((pid = fork()) == 0)
		_exit(forked_refused(depth - 1));
	return (st = wait_status(pid)) == 0 ? 0 : 10 + st;
}

/*
 * Child "prefork", the parent holding 3Gi of device 0 (4Gi): forks before
 * its cuInit, as a launcher does; the child, a fresh process, takes
 * 256Mi as itself, and so does this one after it.
 */
static int
child_prefork(void)
{
	CUdeviceptr p;
	CUcontext c;
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		OK(cuInit(0));
		OK(cuCtxCreate_v2(&c, 0, 0));
		CHECK(free_bytes() == 1 * GiB, "prefork child: free %llu",
		    (unsigned long long)free_bytes());
		OK(cuMemAlloc_v2(&p, 256 * MiB));
		CHECK(free_bytes() == 768 * MiB, "prefork child: free %llu",
		    (unsigned long long)free_bytes());
		_exit(failures != 0);
	}
	CHECK(wait_status(pid) == 0, "the child forked before cuInit failed");
	OK(cuInit(0));
	OK(cuCtxCreate_v2(&c, 0, 0));
	CHECK(wait_free(1 * GiB), "the prefork child kept its memory");
	OK(cuMemAlloc_v2(&p, 256 * MiB));
	return failures != 0;
}

static void
check_processes(void)
{
	char *sees[] = { "sim_check_linked", "sees", NULL };
	char *hold[] = { "sim_check_linked", "hold", NULL };
	char *ctxb[] = { "sim_check_linked", "ctxbytes", NULL };
	char *prefork[] = { "sim_check_linked", "prefork", NULL };
	CUdeviceptr p;
	char c = 0;
	pid_t pid;
	int fd = -1, st;

	/* 3Gi of the 4Gi device here; a child sees 1Gi left. */
	OK(cuMemAlloc_v2(&p, 3 * GiB));
	CHECK(wait_status(spawn(sees, NULL, NULL, NULL)) == 0,
	    "the child did not see this process's memory");

	/* A child holding 512Mi, killed: its memory comes back. */
	pid = spawn(hold, NULL, NULL, &fd);
	CHECK(read(fd, &c, 1) == 1 && c == 'h', "the holding child failed");
	CHECK(free_bytes() == 512 * MiB, "free %llu with a child holding",
	    (unsigned long long)free_bytes());
	kill(pid, SIGKILL);
	CHECK(wait_free(1 * GiB), "a killed child kept its memory (zombie)");
	CHECK(wait_status(pid) == 128 + SIGKILL, "the child was not killed");
	close(fd);
	CHECK(free_bytes() == 1 * GiB, "a killed child kept its memory");

	/* A child forked after cuInit may not use the driver, nor its own
	 * children; one forked before, or one that execs, may. */
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(forked_refused(1));
	CHECK((st = wait_status(pid)) == 0, "a child forked after cuInit "
	    "was not refused: step %d", st);
	CHECK(wait_status(spawn(prefork, NULL, NULL, NULL)) == 0,
	    "a child forked before cuInit could not use the driver");
	CHECK(free_bytes() == 1 * GiB, "an exited child kept its memory");
	OK(cuMemFree_v2(p));

	CHECK(wait_status(spawn(ctxb, "SIMCUDA_CONTEXT_BYTES=256Mi",
	    NULL, NULL)) == 0, "context overhead");
}

/*
 * SIMCUDA_RELEASE_DELAY_MS, set for the children only: the memory of one
 * that is killed, exits or calls exec stays held, and not allocatable,
 * until the delay after its death was noticed has passed. 2000 ms leaves
 * the checks made right after the noticing call (which finds the memory
 * held, whatever the load) ample time; the memory must then come back
 * within wait_free's bound.
 */
static void
check_release_delay(void)
{
	char *hold[] = { "sim_check_linked", "hold", NULL };
	char *take[] = { "sim_check_linked", "take", "536870912", "0", NULL };
	char *exec[] = { "sim_check_linked", "exec", NULL };
	const char *delay = "SIMCUDA_RELEASE_DELAY_MS=2000";
	uint64_t all = free_bytes();
	CUdeviceptr p;
	char c = 0;
	pid_t pid;
	int fd = -1;

	pid = spawn(hold, delay, NULL, &fd);
	CHECK(read(fd, &c, 1) == 1 && c == 'h', "the holding child failed");
	close(fd);
	kill(pid, SIGKILL);
	CHECK(wait_status(pid) == 128 + SIGKILL, "the child was not killed");
	CHECK(free_bytes() == all - 512 * MiB,
	    "a killed child's memory came back at once: free %llu",
	    (unsigned long long)free_bytes());
	EXPECT(cuMemAlloc_v2(&p, all - 256 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(wait_free(all), "a killed child's memory never came back");
	OK(cuMemAlloc_v2(&p, all - 256 * MiB));
	OK(cuMemFree_v2(p));

	pid = spawn(take, delay, NULL, &fd);
	CHECK(read(fd, &c, 1) == 1 && c == 'o', "the taking child failed");
	close(fd);
	CHECK(wait_status(pid) == 0, "the taking child did not exit");
	CHECK(free_bytes() == all - 512 * MiB,
	    "an exited child's memory came back at once: free %llu",
	    (unsigned long long)free_bytes());
	CHECK(wait_free(all), "an exited child's memory never came back");

	CHECK(wait_status(spawn(exec, delay, NULL, NULL)) == 0,
	    "a child that called exec");
	CHECK(wait_free(all), "memory held before exec never came back");
}

/* Child: take 512Mi, then become "execed" by exec. */
static int
child_exec(void)
{
	char *argv[] = { "sim_check_linked", "execed", NULL };
	CUdeviceptr p;
	CUcontext c;

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS || cuMemAlloc_v2(&p, 512 * MiB) != CUDA_SUCCESS)
		return 1;
	fflush(stdout);
	execv("/proc/self/exe", argv);
	return 1;
}

/*
 * Child, after exec with a release delay: what it held before exec is
 * gone with its old image, but only after the delay; it works meanwhile.
 */
static int
child_execed(void)
{
	size_t fr = 0, total = 0;
	CUdeviceptr p;
	CUcontext c;

	OK(cuInit(0));
	OK(cuCtxCreate_v2(&c, 0, 0));
	OK(cuMemGetInfo_v2(&fr, &total));
	CHECK(fr == total - 512 * MiB, "after exec: free %zu", fr);
	EXPECT(cuMemAlloc_v2(&p, total - 256 * MiB),
	    CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemAlloc_v2(&p, 256 * MiB));
	OK(cuMemFree_v2(p));
	CHECK(wait_free(total), "after exec: the old image's memory stays");
	OK(cuMemAlloc_v2(&p, total - 256 * MiB));
	return failures != 0;
}

/* Child: the parent holds 3Gi of device 0 (4Gi). */
static int
child_sees(void)
{
	CUdeviceptr p;
	CUcontext c;

	OK(cuInit(0));
	OK(cuCtxCreate_v2(&c, 0, 0));
	CHECK(free_bytes() == 1 * GiB, "child: free %llu",
	    (unsigned long long)free_bytes());
	EXPECT(cuMemAlloc_v2(&p, 2 * GiB), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemAlloc_v2(&p, 512 * MiB));
	return failures != 0;
}

/* Child: take 512Mi, say so, wait to be killed. */
static int
child_hold(void)
{
	CUdeviceptr p;
	CUcontext c;

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS || cuMemAlloc_v2(&p, 512 * MiB) != CUDA_SUCCESS)
		return 1;
	if (write(STDOUT_FILENO, "h", 1) != 1)
		return 1;
	for (;;)
		pause();
}

/* Child, SIMCUDA_CONTEXT_BYTES=256Mi: each live context costs 256Mi. */
static int
child_ctxbytes(void)
{
	CUcontext prim, prim2, c;
	uint64_t cap = 2 * GiB;

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&prim, 1));
	OK(cuDevicePrimaryCtxRetain(&prim2, 1));
	OK(cuCtxPushCurrent_v2(prim));
	CHECK(free_bytes() == cap - 256 * MiB, "primary context: free %llu",
	    (unsigned long long)free_bytes());
	OK(cuCtxCreate_v2(&c, 0, 1));
	CHECK(free_bytes() == cap - 512 * MiB, "two contexts: free %llu",
	    (unsigned long long)free_bytes());
	OK(cuCtxDestroy_v2(c));
	OK(cuDevicePrimaryCtxRelease_v2(1));
	CHECK(free_bytes() == cap - 256 * MiB, "still retained: free %llu",
	    (unsigned long long)free_bytes());
	OK(cuDevicePrimaryCtxReset_v2(1));
	OK(cuCtxCreate_v2(&c, 0, 1));	/* the reset one is not charged */
	CHECK(free_bytes() == cap - 256 * MiB, "after reset: free %llu",
	    (unsigned long long)free_bytes());
	OK(cuCtxDestroy_v2(c));
	OK(cuDevicePrimaryCtxRelease_v2(1));
	return failures != 0;
}

/* One line per device the process sees, or why it sees none. */
static int
list_devices(void)
{
	char name[64], uuid[64], *u = uuid;
	CUresult r = cuInit(0);
	size_t total;
	CUuuid id;
	int n, d, i;

	if (r != CUDA_SUCCESS) {
		printf("%s\n", err_name(r));
		return 0;
	}
	cuDeviceGetCount(&n);
	for (d = 0; d < n; d++) {
		cuDeviceGetName(name, sizeof(name), d);
		cuDeviceGetUuid_v2(&id, d);
		cuDeviceTotalMem_v2(&total, d);
		u = uuid + sprintf(uuid, "GPU-");
		for (i = 0; i < 16; i++)
			u += sprintf(u, "%s%02x", i == 4 || i == 6 || i == 8 ||
			    i == 10 ? "-" : "", (unsigned char)id.bytes[i]);
		printf("%d %s %s %zu\n", d, name, uuid, total);
	}
	return 0;
}

static int
take(const char *bytes, const char *seconds)
{
	unsigned long long n = strtoull(bytes, NULL, 10);
	CUdeviceptr p;
	CUcontext c;
	CUresult r;

	if ((r = cuInit(0)) == CUDA_SUCCESS &&
	    (r = cuCtxCreate_v2(&c, 0, 0)) == CUDA_SUCCESS)
		r = cuMemAlloc_v2(&p, n);
	printf("%s\n", r == CUDA_SUCCESS ? "ok" : err_name(r));
	sleep((unsigned)strtoul(seconds, NULL, 10));
	return 0;
}

int
main(int argc, char **argv)
{
	CUcontext primary;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "list") == 0)
		return list_devices();
	if (argc > 3 && strcmp(argv[1], "take") == 0)
		return take(argv[2], argv[3]);
	if (argc > 1 && strcmp(argv[1], "sees") == 0)
		return child_sees();
	if (argc > 1 && strcmp(argv[1], "hold") == 0)
		return child_hold();
	if (argc > 1 && strcmp(argv[1], "ctxbytes") == 0)
		return child_ctxbytes();
	if (argc > 1 && strcmp(argv[1], "prefork") == 0)
		return child_prefork();
	if (argc > 1 && strcmp(argv[1], "exec") == 0)
		return child_exec();
	if (argc > 1 && strcmp(argv[1], "execed") == 0)
		return child_execed();

	/* A fresh, named machine: the children must share it. */
	machine_start("simcheck", "4Gi,2Gi");
	check_before_init();
	check_devices();
	check_no_context();
	OK(cuDevicePrimaryCtxRetain(&primary, 0));
	OK(cuCtxPushCurrent_v2(primary));
	check_alloc();
	check_oom();
	check_copy();
	check_pitch_managed();
	check_attributes(primary);
	check_host_memory();
	check_events();
	check_procaddr();
	check_errors();
	check_primary_context(check_own_context(primary));
	check_processes();
	check_release_delay();
	return machine_end();
}
