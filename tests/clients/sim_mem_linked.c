/*
 * Checks of the simulated driver's arrays, virtual memory management and
 * stream-ordered pools (tests/simcuda/array.c, vmm.c, pool.c), linked
 * against it: what each charges to the device, seen from this process and
 * from another one of the same SIMCUDA_STATE, and what a process that
 * dies gives back. Prints one line per failed check and exits 1 if any
 * failed, else 0.
 *
 *   sim_mem_linked            run every check (uses $SIMCUDA_STATE, or a
 *                             private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_mem_linked free DEV   print the free bytes of device DEV
 *   sim_mem_linked hold WHAT  hold memory of device 0, print "ready", wait
 *                             to be killed. WHAT: pool (8 MiB cached by
 *                             the default pool), vmm (a released 64 MiB
 *                             allocation, still mapped), array (a 1000x1000
 *                             float array, 4 MiB), all (the three)
 * The other modes are the children the checks start.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "child.h"

#define MiB	(1ull << 20)
#define GiB	(1ull << 30)
#define FD_HANDLE	CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR

/* One character from a child, or 0 at its end. */
static char
read_char(int fd)
{
	char c = 0;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/* The free bytes of device dev as another process of the state sees them. */
static uint64_t
peer_free(int dev)
{
	char arg[16], buf[64];
	char *argv[] = { "sim_mem_linked", "free", arg, NULL };
	ssize_t n, got = 0;
	int fd = -1;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%d", dev);
	pid = spawn(argv, NULL, NULL, &fd);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	    (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	CHECK(wait_status(pid) == 0, "the free child failed: '%s'", buf);
	return strtoull(buf, NULL, 10);
}

static CUdeviceptr
must_reserve(size_t size)
{
	CUdeviceptr va = 0;

	OK(cuMemAddressReserve(&va, size, 0, 0, 0));
	return va;
}

static void
set_access(CUdeviceptr va, size_t size, int dev, CUmemAccess_flags flags)
{
	CUmemAccessDesc d = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
		.flags = flags,
	};

	OK(cuMemSetAccess(va, size, &d, 1));
}

static CUmemAllocationProp
prop_of(int dev, unsigned handle_types)
{
	CUmemAllocationProp p = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = (CUmemAllocationHandleType)handle_types,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
	};

	return p;
}

static void
check_procaddr(void)
{
	static const struct {
		const char	*name;
		int		version;
		cuuint64_t	flags;
		void		*want;
	} found[] = {
		{ "cuMemAllocAsync", 12000, 0, (void *)cuMemAllocAsync },
		{ "cuMemAllocAsync", 12000,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    (void *)cuMemAllocAsync_ptsz },
		{ "cuMemFreeAsync", 11020,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    (void *)cuMemFreeAsync_ptsz },
		{ "cuMemAllocFromPoolAsync", 12080, 0,
		    (void *)cuMemAllocFromPoolAsync },
		{ "cuMemPoolTrimTo", 11020, 0, (void *)cuMemPoolTrimTo },
		{ "cuDeviceGetDefaultMemPool", 12000, 0,
		    (void *)cuDeviceGetDefaultMemPool },
		{ "cuMemCreate", 10020, 0, (void *)cuMemCreate },
		{ "cuMemRetainAllocationHandle", 12000, 0,
		    (void *)cuMemRetainAllocationHandle },
		{ "cuMemImportFromShareableHandle", 12000, 0,
		    (void *)cuMemImportFromShareableHandle },
		{ "cuArrayCreate", 12000, 0, (void *)cuArrayCreate_v2 },
		{ "cuArray3DGetDescriptor", 3020, 0,
		    (void *)cuArray3DGetDescriptor_v2 },
		{ "cuArrayDestroy", 2000, 0, (void *)cuArrayDestroy },
		{ "cuMipmappedArrayCreate", 5000, 0,
		    (void *)cuMipmappedArrayCreate },
		{ "cuMipmappedArrayGetMemoryRequirements", 11060, 0,
		    (void *)cuMipmappedArrayGetMemoryRequirements },
		{ "cuMemcpyHtoA", 12000,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    (void *)cuMemcpyHtoA_v2_ptds },
	};
	static const struct {
		const char	*name;
		int		version;
	} too_new[] = {
		{ "cuMemAllocAsync", 11010 },
		{ "cuMemCreate", 10010 },
		{ "cuMemRetainAllocationHandle", 10020 },
		{ "cuArrayGetMemoryRequirements", 11050 },
		{ "cuArrayCreate", 3010 },	/* 32-bit ABI: not simulated */
	};
	CUdriverProcAddressQueryResult st;
	void *fn;
	CUresult rc;
	size_t i;

	for (i = 0; i < sizeof(found) / sizeof(found[0]); i++) {
		fn = NULL;
		rc = cuGetProcAddress_v2(found[i].name, &fn, found[i].version,
		    found[i].flags, &st);
		CHECK(rc == CUDA_SUCCESS && fn == found[i].want,
		    "%s@%d: %s", found[i].name, found[i].version, err_name(rc));
	}
	for (i = 0; i < sizeof(too_new) / sizeof(too_new[0]); i++) {
		rc = cuGetProcAddress_v2(too_new[i].name, &fn,
		    too_new[i].version, 0, &st);
		CHECK(rc == CUDA_ERROR_NOT_FOUND &&
		    st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
		    "%s@%d: %s", too_new[i].name, too_new[i].version,
		    err_name(rc));
	}
	/* 13.0 additions are not a 12.8 driver's. */
	rc = cuGetProcAddress_v2("cuMemGetDefaultMemPool", &fn, 13000, 0, &st);
	CHECK(rc == CUDA_ERROR_NOT_FOUND, "cuMemGetDefaultMemPool: %s",
	    err_name(rc));
}

static void
check_attributes(void)
{
	static const CUdevice_attribute yes[] = {
		CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
		CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
		CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
		CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED,
	};
	size_t i;
	int v;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		v = 0;
		OK(cuDeviceGetAttribute(&v, yes[i], 0));
		CHECK(v == 1, "attribute %d is %d", (int)yes[i], v);
	}
	OK(cuDeviceGetAttribute(&v,
	    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0));
	CHECK(v == 0, "IPC pools are not simulated, yet %d", v);
}

/* The charge of a non-deferred array is what a deferred one requires. */
static void
check_array_charge(const CUDA_ARRAY3D_DESCRIPTOR *d, size_t want)
{
	CUDA_ARRAY3D_DESCRIPTOR dd = *d;
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	uint64_t before = free_bytes();
	CUarray a, deferred;

	dd.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
	OK(cuArray3DCreate_v2(&deferred, &dd));
	CHECK(free_bytes() == before, "a deferred array was charged");
	memset(&req, 0xff, sizeof(req));
	OK(cuArrayGetMemoryRequirements(&req, deferred, 0));
	CHECK(req.size == want && req.alignment == 2 * MiB &&
	    req.reserved[0] == 0, "requirements %zu align %zu, want %zu",
	    req.size, req.alignment, want);
	OK(cuArray3DCreate_v2(&a, d));
	CHECK(peer_free(0) == before - req.size,
	    "an array charged %llu, it requires %zu",
	    (unsigned long long)(before - peer_free(0)), req.size);
	/* As documented: only deferred-mapping arrays say. */
	EXPECT(cuArrayGetMemoryRequirements(&req, a, 0),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuArrayDestroy(a));
	OK(cuArrayDestroy(deferred));
	CHECK(free_bytes() == before, "array memory not returned");
}

static void
check_arrays(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 1000, .Height = 1000,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 2048, .Height = 0,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 }, g2;
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUDA_ARRAY3D_DESCRIPTOR g3;
	CUmipmappedArray m, md;
	uint64_t before = free_bytes();
	unsigned char in[8192], out[8192];
	CUcontext c;
	CUarray a;
	size_t i;

	/* Rows of 4000 bytes padded to 4096, 1000 rows: 4096000, a 4 MiB
	 * page-multiple; not 1000 * 1000 * 4. */
	check_array_charge(&d3, 4 * MiB);
	/* A 3D array: rows 64 * 16 = 1024 bytes, 64 rows, 64 slices. */
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 64, .Height = 64, .Depth = 64,
	    .Format = CU_AD_FORMAT_UNSIGNED_INT32, .NumChannels = 4 };
	check_array_charge(&d3, 4 * MiB);
	/* A cubemap of 1000^2 RGBA8 faces: 6 * 4096000, in 12 pages. */
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 1000, .Height = 1000,
	    .Depth = 6, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 4,
	    .Flags = CUDA_ARRAY3D_CUBEMAP };
	check_array_charge(&d3, 24 * MiB);
	/* BC1: 4x4 blocks of 8 bytes; 4096 / 4 * 8 = 8192-byte rows, 1024. */
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 4096, .Height = 4096,
	    .Format = CU_AD_FORMAT_BC1_UNORM, .NumChannels = 4 };
	check_array_charge(&d3, 8 * MiB);

	/* A 1D array: 8 KiB of floats in one 2 MiB page; its bytes copy. */
	OK(cuArrayCreate_v2(&a, &d2));
	CHECK(before - free_bytes() == 2 * MiB, "1D array charged %llu",
	    (unsigned long long)(before - free_bytes()));
	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 13 + 1);
	OK(cuMemcpyHtoA_v2(a, 0, in, sizeof(in)));
	memset(out, 0, sizeof(out));
	OK(cuMemcpyAtoH_v2(out, a, 0, sizeof(out)));
	CHECK(memcmp(in, out, sizeof(in)) == 0, "array contents");
	OK(cuMemcpyAtoH_v2_ptds(out, a, 4096, 16));
	CHECK(memcmp(in + 4096, out, 16) == 0, "array contents at 4096");
	EXPECT(cuMemcpyHtoA_v2(a, 8000, in, 200), CUDA_ERROR_INVALID_VALUE);
	OK(cuArrayGetDescriptor_v2(&g2, a));
	CHECK(g2.Width == 2048 && g2.Height == 0 &&
	    g2.Format == CU_AD_FORMAT_FLOAT && g2.NumChannels == 1,
	    "2D descriptor");
	OK(cuArray3DGetDescriptor_v2(&g3, a));
	CHECK(g3.Width == 2048 && g3.Height == 0 && g3.Depth == 0 &&
	    g3.Flags == 0, "3D descriptor of a 1D array");
	OK(cuArrayDestroy(a));
	EXPECT(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuArrayGetDescriptor_v2(&g2, a), CUDA_ERROR_INVALID_HANDLE);

	/* A 3D array has no 2D descriptor. */
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 16, .Height = 16, .Depth = 16,
	    .Format = CU_AD_FORMAT_HALF, .NumChannels = 2 };
	OK(cuArray3DCreate_v2(&a, &d3));
	EXPECT(cuArrayGetDescriptor_v2(&g2, a), CUDA_ERROR_INVALID_VALUE);
	OK(cuArray3DGetDescriptor_v2(&g3, a));
	CHECK(g3.Depth == 16 && g3.NumChannels == 2, "3D descriptor");
	OK(cuArrayDestroy(a));

	/* Bad descriptors. */
	d2.NumChannels = 3;
	EXPECT(cuArrayCreate_v2(&a, &d2), CUDA_ERROR_INVALID_VALUE);
	d2.NumChannels = 1;
	d2.Width = 0;
	EXPECT(cuArrayCreate_v2(&a, &d2), CUDA_ERROR_INVALID_VALUE);
	d2 = (CUDA_ARRAY_DESCRIPTOR){ .Width = 8, .Height = 8,
	    .Format = (CUarray_format)0x77, .NumChannels = 1 };
	EXPECT(cuArrayCreate_v2(&a, &d2), CUDA_ERROR_INVALID_VALUE);
	d2.Format = CU_AD_FORMAT_NV12;
	EXPECT(cuArrayCreate_v2(&a, &d2), CUDA_ERROR_NOT_SUPPORTED);
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 64, .Height = 64,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1, .Flags = 0x4000 };
	EXPECT(cuArray3DCreate_v2(&a, &d3), CUDA_ERROR_INVALID_VALUE);
	d3.Flags = CUDA_ARRAY3D_SPARSE;
	EXPECT(cuArray3DCreate_v2(&a, &d3), CUDA_ERROR_NOT_SUPPORTED);
	d3.Flags = CUDA_ARRAY3D_CUBEMAP;	/* Depth must be 6 */
	EXPECT(cuArray3DCreate_v2(&a, &d3), CUDA_ERROR_INVALID_VALUE);
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 16384, .Height = 16384,
	    .Depth = 16384, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
	EXPECT(cuArray3DCreate_v2(&a, &d3), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(free_bytes() == before, "a failed array was charged");

	/* Mipmaps: the levels of 1024^2 floats sum to 5644288 bytes (the
	 * smallest levels padded to 512 x 8), rounded up to 6 MiB. */
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 1024, .Height = 1024,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
	    .Flags = CUDA_ARRAY3D_DEFERRED_MAPPING };
	EXPECT(cuMipmappedArrayCreate(&md, &d3, 12), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMipmappedArrayCreate(&md, &d3, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuMipmappedArrayCreate(&md, &d3, 11));
	OK(cuMipmappedArrayGetMemoryRequirements(&req, md, 0));
	CHECK(req.size == 6 * MiB, "mipmap requirement %zu", req.size);
	EXPECT(cuMipmappedArrayGetMemoryRequirements(&req, md, 9),
	    CUDA_ERROR_INVALID_DEVICE);
	d3.Flags = 0;
	OK(cuMipmappedArrayCreate(&m, &d3, 11));
	CHECK(peer_free(0) == before - 6 * MiB, "mipmap charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	EXPECT(cuMipmappedArrayGetMemoryRequirements(&req, m, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuArrayDestroy((CUarray)m), CUDA_ERROR_INVALID_HANDLE);
	OK(cuMipmappedArrayDestroy(m));
	OK(cuMipmappedArrayDestroy(md));
	EXPECT(cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
	CHECK(free_bytes() == before, "mipmap memory not returned");

	/* Arrays go with their context. */
	OK(cuCtxCreate_v2(&c, 0, 0));
	d2 = (CUDA_ARRAY_DESCRIPTOR){ .Width = 1024, .Height = 1024,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
	OK(cuArrayCreate_v2(&a, &d2));
	CHECK(before - free_bytes() == 16 * MiB, "array in a context %llu",
	    (unsigned long long)(before - free_bytes()));
	OK(cuCtxDestroy_v2(c));
	CHECK(free_bytes() == before, "a destroyed context kept its array");
	EXPECT(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
}

static void
check_vmm_errors(void)
{
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	size_t g = 0;

	OK(cuMemGetAllocationGranularity(&g, &p,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(g == 2 * MiB, "minimum granularity %zu", g);
	g = 0;
	OK(cuMemGetAllocationGranularity(&g, &p,
	    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	CHECK(g == 2 * MiB, "recommended granularity %zu", g);
	EXPECT(cuMemGetAllocationGranularity(&g, &p,
	    (CUmemAllocationGranularity_flags)7), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemGetAllocationGranularity(&g, NULL,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
	p.location.id = 5;
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_INVALID_DEVICE);
	p = prop_of(0, 0);
	EXPECT(cuMemCreate(&h, 3 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 0, &p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 6 * GiB, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
	p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
	p = prop_of(0, CU_MEM_HANDLE_TYPE_FABRIC);
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuMemRelease(12345), CUDA_ERROR_INVALID_VALUE);
}

static void
check_vmm(void)
{
	CUmemAllocationProp p = prop_of(0, 0), got;
	CUmemGenericAllocationHandle h, h2;
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	uint64_t before = free_bytes();
	unsigned long long access = 9;
	unsigned char in[4096], out[8192];
	CUdeviceptr va, base = 0;
	size_t size = 0;
	unsigned type = 0;
	int ord = -1;
	size_t i;

	/* Created: charged at once, to the byte. */
	OK(cuMemCreate(&h, 64 * MiB, &p, 0));
	CHECK(peer_free(0) == before - 64 * MiB, "cuMemCreate charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	OK(cuMemGetAllocationPropertiesFromHandle(&got, h));
	CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	    got.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	    got.location.id == 0, "properties");

	/* Reserved, mapped twice (the second mapping at +64 MiB) and made
	 * accessible: nothing more. */
	EXPECT(cuMemAddressReserve(&va, 1000, 0, 0, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressReserve(&va, 2 * MiB, 3 * MiB, 0, 0),
	    CUDA_ERROR_INVALID_VALUE);
	va = must_reserve(128 * MiB);
	CHECK(va % (2 * MiB) == 0, "reservation %#llx not aligned", va);
	CHECK(free_bytes() == before - 64 * MiB, "a reservation was charged");
	EXPECT(cuMemMap(va + 4096, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 128 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 2 * MiB, 2 * MiB + 4096, h, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va + 96 * MiB, 64 * MiB, 0, h, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* past the reservation */
	OK(cuMemMap(va, 64 * MiB, 0, h, 0));
	EXPECT(cuMemMap(va + 62 * MiB, 2 * MiB, 0, h, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* already mapped */
	OK(cuMemMap(va + 64 * MiB, 64 * MiB, 0, h, 0));
	CHECK(free_bytes() == before - 64 * MiB, "a mapping was charged");

	/* No access before cuMemSetAccess. */
	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 5);
	EXPECT(cuMemcpyHtoD_v2(va, in, sizeof(in)), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemGetAccess(&access, &loc, va));
	CHECK(access == CU_MEM_ACCESS_FLAGS_PROT_NONE, "access %llu", access);
	EXPECT(cuMemSetAccess(va, 32 * MiB, &(CUmemAccessDesc){ .location =
	    loc, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE }, 1),
	    CUDA_ERROR_INVALID_VALUE);	/* part of a mapping */
	set_access(va, 64 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	set_access(va + 64 * MiB, 64 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
	CHECK(free_bytes() == before - 64 * MiB, "cuMemSetAccess charged");
	OK(cuMemGetAccess(&access, &loc, va + 100));
	CHECK(access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "access %llu",
	    access);

	/* Bytes written through one mapping are the other's. */
	OK(cuMemcpyHtoD_v2(va + 1 * MiB, in, sizeof(in)));
	memset(out, 0, sizeof(out));
	OK(cuMemcpyDtoH_v2(out, va + 65 * MiB, sizeof(in)));
	CHECK(memcmp(in, out, sizeof(in)) == 0, "the mappings differ");
	EXPECT(cuMemcpyHtoD_v2(va + 65 * MiB, in, 1),
	    CUDA_ERROR_INVALID_VALUE);	/* read-only */
	OK(cuMemsetD8_v2(va + 64 * MiB - 4096, 0x3c, 4096));
	/* One copy across both mappings, end to end. */
	OK(cuMemcpyDtoH_v2(out, va + 64 * MiB - 4096, sizeof(out)));
	CHECK(out[0] == 0x3c && out[4095] == 0x3c && out[4096] == 0,
	    "copy across mappings");
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    va + 10));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "memory type %u", type);
	OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    va + 10));
	CHECK(ord == 0, "device ordinal %d", ord);
	OK(cuMemGetAddressRange_v2(&base, &size, va + 70 * MiB));
	CHECK(base == va + 64 * MiB && size == 64 * MiB, "range %#llx+%zu",
	    base, size);

	/* A retained handle is the same handle and needs its release. */
	OK(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)(va + 5)));
	CHECK(h2 == h, "retained another handle");
	OK(cuMemRelease(h2));

	/* Released while mapped: still charged; the last unmap frees it. */
	OK(cuMemRelease(h));
	EXPECT(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(peer_free(0) == before - 64 * MiB,
	    "released while mapped: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	OK(cuMemcpyDtoH_v2(out, va + 1 * MiB, 16));
	CHECK(memcmp(in, out, 16) == 0, "released memory changed");
	EXPECT(cuMemUnmap(va, 32 * MiB), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressFree(va, 128 * MiB), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemUnmap(va, 64 * MiB));
	CHECK(peer_free(0) == before - 64 * MiB, "one mapping left: %llu",
	    (unsigned long long)(before - peer_free(0)));
	EXPECT(cuMemcpyDtoH_v2(out, va, 16), CUDA_ERROR_INVALID_VALUE);
	/* Retaining through the remaining mapping brings the handle back. */
	OK(cuMemRetainAllocationHandle(&h2,
	    (void *)(uintptr_t)(va + 65 * MiB)));
	CHECK(h2 == h, "retained another handle");
	OK(cuMemUnmap(va + 64 * MiB, 64 * MiB));
	CHECK(peer_free(0) == before - 64 * MiB, "unmapped but retained");
	OK(cuMemRelease(h2));
	CHECK(peer_free(0) == before, "unmapped and released: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	EXPECT(cuMemAddressFree(va, 64 * MiB), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAddressFree(va, 128 * MiB));
	EXPECT(cuMemAddressFree(va, 128 * MiB), CUDA_ERROR_INVALID_VALUE);

	/* Unmapping two mappings at once; a hint is taken when free. */
	OK(cuMemCreate(&h, 4 * MiB, &p, 0));
	va = must_reserve(8 * MiB);
	OK(cuMemAddressFree(va, 8 * MiB));
	OK(cuMemAddressReserve(&base, 8 * MiB, 0, va, 0));
	CHECK(base == va, "the free hint %#llx was not taken: %#llx", va,
	    base);
	OK(cuMemMap(va, 4 * MiB, 0, h, 0));
	OK(cuMemMap(va + 4 * MiB, 4 * MiB, 0, h, 0));
	OK(cuMemRelease(h));
	OK(cuMemUnmap(va, 8 * MiB));
	CHECK(free_bytes() == before, "memory kept after unmapping");
	OK(cuMemAddressFree(va, 8 * MiB));
}

/* Send fd over the socket sock (SCM_RIGHTS). */
static int
send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int
recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1 || (cm = CMSG_FIRSTHDR(&msg)) == NULL ||
	    cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Import fd, map it at a new reservation readable and writable. */
static CUdeviceptr
import_map(int fd, size_t size, CUmemGenericAllocationHandle *h)
{
	CUdeviceptr va;

	OK(cuMemImportFromShareableHandle(h, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	va = must_reserve(size);
	OK(cuMemMap(va, size, 0, *h, 0));
	set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	return va;
}

static void
unmap_release(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
	OK(cuMemUnmap(va, size));
	OK(cuMemRelease(h));
	OK(cuMemAddressFree(va, size));
}

/*
 * This process exports, a child imports: the child is not charged, and
 * the memory stays charged while the child holds it after this process
 * let go. Then a child exports and is killed while this process holds
 * the memory: it stays charged until this process lets go.
 */
static void
check_vmm_shared(void)
{
	CUmemAllocationProp p = prop_of(0, FD_HANDLE);
	CUmemAllocationProp plain = prop_of(0, 0);
	CUmemGenericAllocationHandle h, h2;
	uint64_t before = free_bytes(), charged;
	char fdarg[16];
	char *imp[] = { "sim_mem_linked", "import", fdarg, NULL };
	char *exp[] = { "sim_mem_linked", "export", fdarg, NULL };
	unsigned char b[4] = { 0 };
	CUdeviceptr va, va2;
	int fd = -1, fd2, in, out, sv[2];
	pid_t pid;

	OK(cuMemCreate(&h, 2 * MiB, &plain, 0));
	EXPECT(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* not requested at creation */
	OK(cuMemRelease(h));
	EXPECT(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)0,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_ERROR_INVALID_VALUE);

	OK(cuMemCreate(&h, 32 * MiB, &p, 0));
	va = must_reserve(32 * MiB);
	OK(cuMemMap(va, 32 * MiB, 0, h, 0));
	set_access(va, 32 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0x5a, 4096));
	OK(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	charged = free_bytes();
	CHECK(before - charged == 32 * MiB, "exported: charged %llu",
	    (unsigned long long)(before - charged));

	/* Imported here too: another handle, no charge; the last of the two
	 * handles of this process returns it. */
	OK(cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	CHECK(free_bytes() == charged, "importing here charged again");

	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	pid = spawn(imp, NULL, &in, &out);
	CHECK(read_char(out) == 'i', "the importing child failed");
	CHECK(peer_free(0) == charged, "the importer was charged: %llu",
	    (unsigned long long)(charged - peer_free(0)));
	OK(cuMemcpyDtoH_v2(b, va + 4096, sizeof(b)));
	CHECK(b[0] == 0xa5 && b[3] == 0xa5, "the importer's bytes: %#x", b[0]);
	close(fd);
	unmap_release(va, 32 * MiB, h);
	OK(cuMemRelease(h2));
	CHECK(free_bytes() == charged, "freed while another process holds it");
	CHECK(write(in, "r", 1) == 1 && read_char(out) == 'r',
	    "the importing child did not let go");
	CHECK(free_bytes() == before, "not freed by its last holder: %llu",
	    (unsigned long long)(before - free_bytes()));
	close(in);
	close(out);
	CHECK(wait_status(pid) == 0, "the importing child failed");

	/* The exporter killed while this process holds what it exported. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		CHECK(0, "socketpair");
		return;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
	pid = spawn(exp, NULL, NULL, &out);
	close(sv[1]);
	fd2 = recv_fd(sv[0]);
	close(sv[0]);
	CHECK(fd2 >= 0 && read_char(out) == 'e', "the exporting child failed");
	charged = free_bytes();	/* its 16 MiB and the 32 exported */
	CHECK(before - charged == 48 * MiB, "exporter holds %llu",
	    (unsigned long long)(before - charged));
	va2 = import_map(fd2, 32 * MiB, &h);
	close(fd2);
	CHECK(free_bytes() == charged, "importing charged");
	OK(cuMemcpyDtoH_v2(b, va2, sizeof(b)));
	CHECK(b[0] == 0x77, "the exporter's bytes: %#x", b[0]);
	kill(pid, SIGKILL);
	CHECK(wait_free(before - 32 * MiB), "killed exporter: charged %llu",
	    (unsigned long long)(before - free_bytes()));
	CHECK(wait_status(pid) == 128 + SIGKILL, "the exporter was not killed");
	close(out);
	CHECK(peer_free(0) == before - 32 * MiB, "held memory of a dead "
	    "exporter: charged %llu", (unsigned long long)(before -
	    peer_free(0)));
	OK(cuMemcpyDtoH_v2(b, va2, sizeof(b)));
	CHECK(b[0] == 0x77, "memory of a dead exporter changed");
	unmap_release(va2, 32 * MiB, h);
	CHECK(peer_free(0) == before, "its last holder let go: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
}

/* Child: import fd, write 0xa5 at 4096, say "i"; on "r" let go, say "r". */
static int
child_import(const char *fdarg)
{
	CUmemGenericAllocationHandle h;
	uint64_t before;
	unsigned char b[4];
	CUdeviceptr va;
	CUcontext c;
	int fd = (int)strtol(fdarg, NULL, 10);

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&c, 0));
	OK(cuCtxPushCurrent_v2(c));
	before = free_bytes();
	va = import_map(fd, 32 * MiB, &h);
	close(fd);
	CHECK(free_bytes() == before, "import charged the importer");
	OK(cuMemcpyDtoH_v2(b, va, sizeof(b)));
	CHECK(b[0] == 0x5a && b[3] == 0x5a, "exported bytes %#x", b[0]);
	OK(cuMemsetD8_v2(va + 4096, 0xa5, 4));
	if (write(STDOUT_FILENO, "i", 1) != 1 || read_char(STDIN_FILENO) != 'r')
		return 1;
	unmap_release(va, 32 * MiB, h);
	if (write(STDOUT_FILENO, "r", 1) != 1)
		return 1;
	read_char(STDIN_FILENO);
	return failures != 0;
}

/* Child: hold 16 MiB and 32 MiB exported (0x77), send the fd, wait. */
static int
child_export(const char *sockarg)
{
	CUmemAllocationProp p = prop_of(0, FD_HANDLE);
	CUmemGenericAllocationHandle h;
	CUdeviceptr d, va;
	CUcontext c;
	int fd, sock = (int)strtol(sockarg, NULL, 10);

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS || cuMemAlloc_v2(&d, 16 * MiB) != CUDA_SUCCESS ||
	    cuMemCreate(&h, 32 * MiB, &p, 0) != CUDA_SUCCESS ||
	    cuMemAddressReserve(&va, 32 * MiB, 0, 0, 0) != CUDA_SUCCESS ||
	    cuMemMap(va, 32 * MiB, 0, h, 0) != CUDA_SUCCESS)
		return 1;
	set_access(va, 32 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	if (cuMemsetD8_v2(va, 0x77, 4096) != CUDA_SUCCESS ||
	    cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS ||
	    send_fd(sock, fd) < 0 || write(STDOUT_FILENO, "e", 1) != 1)
		return 1;
	for (;;)
		pause();
}

static cuuint64_t
pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0xdeadbeef;

	OK(cuMemPoolGetAttribute(pool, attr, &v));
	return v;
}

#define RESERVED(p)	pool_attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
#define USED(p)		pool_attr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)

static void
check_pool_default(CUstream s)
{
	CUmemoryPool def, cur, got = NULL;
	CUdeviceptr a, b, c, d;
	uint64_t before = free_bytes();
	cuuint64_t v;
	CUevent e;

	OK(cuDeviceGetDefaultMemPool(&def, 0));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(def == cur, "the current pool is not the default one");
	EXPECT(cuDeviceGetDefaultMemPool(&def, 7), CUDA_ERROR_INVALID_DEVICE);
	CHECK(RESERVED(def) == 0 && USED(def) == 0, "a new pool holds memory");
	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0,
	    "default release threshold");

	/* Growth: a 2 MiB chunk for 1 MiB, which holds 512 KiB more. */
	OK(cuMemAllocAsync(&a, 1 * MiB, s));
	CHECK(peer_free(0) == before - 2 * MiB, "a pool grew by %llu",
	    (unsigned long long)(before - peer_free(0)));
	CHECK(RESERVED(def) == 2 * MiB && USED(def) == 1 * MiB,
	    "reserved %llu used %llu", (unsigned long long)RESERVED(def),
	    (unsigned long long)USED(def));
	OK(cuMemAllocAsync_ptsz(&b, 512 * 1024, NULL));
	CHECK(free_bytes() == before - 2 * MiB, "no room in the chunk?");
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
	    b + 100));
	CHECK(got == def, "MEMPOOL_HANDLE");
	OK(cuMemsetD32Async(b, 0x01020304, 128 * 1024, s));
	/* 3 MiB: a chunk of its own, rounded up to 4 MiB. */
	OK(cuMemAllocAsync(&c, 3 * MiB, s));
	CHECK(RESERVED(def) == 6 * MiB && peer_free(0) == before - 6 * MiB,
	    "reserved %llu", (unsigned long long)RESERVED(def));

	/* Freed: cached, still charged, until a synchronisation. */
	EXPECT(cuMemFreeAsync(b + 512, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(a, s));
	EXPECT(cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync_ptsz(c, NULL));
	CHECK(USED(def) == 512 * 1024 && RESERVED(def) == 6 * MiB,
	    "after frees: used %llu reserved %llu",
	    (unsigned long long)USED(def), (unsigned long long)RESERVED(def));
	CHECK(peer_free(0) == before - 6 * MiB, "freed pool memory was "
	    "released before a synchronisation");
	OK(cuMemAllocAsync(&c, 3 * MiB, s));	/* from the cache */
	CHECK(RESERVED(def) == 6 * MiB, "the cache was not reused");
	OK(cuMemFreeAsync(c, s));
	OK(cuStreamQuery(s));			/* not a synchronisation */
	CHECK(RESERVED(def) == 6 * MiB, "released by cuStreamQuery");
	/* Threshold 0: a synchronisation releases every unused chunk; the
	 * first chunk still holds b. */
	OK(cuStreamSynchronize(s));
	CHECK(RESERVED(def) == 2 * MiB, "after a sync: reserved %llu",
	    (unsigned long long)RESERVED(def));
	CHECK(peer_free(0) == before - 2 * MiB, "a sync released %llu",
	    (unsigned long long)(before - peer_free(0)));
	/* cuMemFree takes pool memory without a synchronisation. */
	OK(cuMemFree_v2(b));
	CHECK(RESERVED(def) == 2 * MiB && USED(def) == 0, "cuMemFree of pool "
	    "memory: reserved %llu", (unsigned long long)RESERVED(def));
	OK(cuCtxSynchronize());
	CHECK(RESERVED(def) == 0 && free_bytes() == before,
	    "cuCtxSynchronize released %llu", (unsigned long long)(before -
	    free_bytes()));
	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 6 * MiB &&
	    pool_attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) ==
	    4 * MiB + 512 * 1024, "high watermarks");
	v = 0;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	CHECK(pool_attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0, "reset");
	v = 1;
	EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
	    &v), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
	    &v), CUDA_ERROR_INVALID_VALUE);

	/* A high threshold keeps the cache across synchronisations. */
	v = UINT64_MAX;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuMemAllocAsync(&a, 8 * MiB, s));
	OK(cuMemAllocAsync(&d, 2 * MiB, s));
	OK(cuMemFreeAsync(a, s));
	OK(cuMemFreeAsync(d, s));
	OK(cuEventCreate(&e, 0));
	OK(cuEventRecord(e, s));
	OK(cuEventSynchronize(e));
	OK(cuStreamSynchronize(s));
	OK(cuCtxSynchronize());
	CHECK(RESERVED(def) == 10 * MiB && peer_free(0) == before - 10 * MiB,
	    "a high threshold kept %llu", (unsigned long long)RESERVED(def));
	/* TrimTo keeps at least what it is told: the 8 MiB chunk goes. */
	OK(cuMemPoolTrimTo(def, 1 * MiB));
	CHECK(RESERVED(def) == 2 * MiB, "trimmed to %llu",
	    (unsigned long long)RESERVED(def));
	OK(cuMemPoolTrimTo(def, 0));
	CHECK(RESERVED(def) == 0 && peer_free(0) == before,
	    "trimmed to 0: %llu", (unsigned long long)RESERVED(def));
	/* A threshold between: a sync keeps the pool at it or above. */
	v = 3 * MiB;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuMemAllocAsync(&a, 2 * MiB, s));
	OK(cuMemAllocAsync(&b, 2 * MiB, s));
	OK(cuMemAllocAsync(&c, 2 * MiB, s));
	OK(cuMemFreeAsync(a, s));
	OK(cuMemFreeAsync(b, s));
	OK(cuMemFreeAsync(c, s));
	OK(cuStreamSynchronize(s));
	CHECK(RESERVED(def) == 4 * MiB, "threshold 3 MiB kept %llu",
	    (unsigned long long)RESERVED(def));
	v = 0;
	OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	OK(cuStreamSynchronize(s));
	CHECK(free_bytes() == before, "pool memory not returned");
	OK(cuEventDestroy_v2(e));

	/* Growth that does not fit; and cuMemFreeAsync is for pool memory. */
	EXPECT(cuMemAllocAsync(&a, 5 * GiB, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(cuMemAllocAsync(&a, 0, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(free_bytes() == before && RESERVED(def) == 0,
	    "a failed growth was charged");
	OK(cuMemAlloc_v2(&a, 1 * MiB));
	EXPECT(cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFree_v2(a));
}

static void
check_pool_created(CUstream s)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
	    .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemoryPool pool, pool1, def, cur, got = NULL;
	uint64_t before = free_bytes(), before1 = peer_free(1);
	unsigned char in[256], out[256];
	CUdeviceptr a, b, c;
	cuuint64_t v;
	int ord = -1;
	size_t i;

	OK(cuDeviceGetDefaultMemPool(&def, 0));
	props.location.id = 9;
	EXPECT(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
	props.location.id = 0;
	props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
	EXPECT(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT(cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_SUPPORTED);
	props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
	OK(cuMemPoolCreate(&pool, &props));
	CHECK(free_bytes() == before && RESERVED(pool) == 0,
	    "a new pool was charged");

	OK(cuMemAllocFromPoolAsync(&a, 100, pool, s));
	CHECK(peer_free(0) == before - 2 * MiB, "created pool grew by %llu",
	    (unsigned long long)(before - peer_free(0)));
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
	CHECK(got == pool, "MEMPOOL_HANDLE of a created pool");
	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(255 - i);
	OK(cuMemcpyHtoDAsync_v2(a, in, 100, s));
	OK(cuMemcpyDtoH_v2(out, a, 100));
	CHECK(memcmp(in, out, 100) == 0, "pool memory contents");
	EXPECT(cuMemcpyHtoD_v2(a, in, 101), CUDA_ERROR_INVALID_VALUE);

	/* The device's current pool serves cuMemAllocAsync. */
	OK(cuDeviceSetMemPool(0, pool));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(cur == pool, "cuDeviceSetMemPool");
	OK(cuMemAllocAsync(&b, 4096, s));
	OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b));
	CHECK(got == pool && RESERVED(def) == 0, "not from the current pool");

	/* A pool of device 1, allocated from on a stream of device 0. */
	props.location.id = 1;
	OK(cuMemPoolCreate(&pool1, &props));
	EXPECT(cuDeviceSetMemPool(0, pool1), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAllocFromPoolAsync(&c, 3 * MiB, pool1, s));
	OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, c));
	CHECK(ord == 1, "device of pool memory %d", ord);
	CHECK(peer_free(1) == before1 - 4 * MiB, "device 1 pool: %llu",
	    (unsigned long long)(before1 - peer_free(1)));
	OK(cuMemPoolDestroy(pool1));	/* c outstanding: kept */
	CHECK(peer_free(1) == before1 - 4 * MiB, "destroyed with memory out");
	EXPECT(cuMemPoolGetAttribute(pool1,
	    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocFromPoolAsync(&a, 1, pool1, s),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(c, s));	/* the last one: the pool goes */
	CHECK(peer_free(1) == before1, "destroyed pool kept %llu",
	    (unsigned long long)(before1 - peer_free(1)));

	/* A maximum size. */
	props.location.id = 0;
	props.maxSize = 4 * MiB;
	OK(cuMemPoolCreate(&pool1, &props));
	OK(cuMemAllocFromPoolAsync(&c, 3 * MiB, pool1, s));
	EXPECT(cuMemAllocFromPoolAsync(&a, 2 * MiB, pool1, s),
	    CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFreeAsync(c, s));
	OK(cuMemPoolDestroy(pool1));

	/* Destroying the current pool puts the default back. */
	EXPECT(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(b, s));
	OK(cuMemPoolDestroy(pool));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(cur == def, "a destroyed pool is still current");
	CHECK(peer_free(0) == before - 2 * MiB, "destroyed pool released a "
	    "chunk in use");
	OK(cuMemFreeAsync(a, s));
	CHECK(free_bytes() == before, "destroyed pool kept %llu",
	    (unsigned long long)(before - free_bytes()));
	EXPECT(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemPoolTrimTo(pool, 0), CUDA_ERROR_INVALID_VALUE);
}

/* Without a context the default streams have no device. */
static void
check_pool_no_context(void)
{
	CUcontext top = NULL;
	CUdeviceptr a;

	OK(cuCtxPopCurrent_v2(&top));
	EXPECT(cuMemAllocAsync(&a, 1, NULL), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuMemFreeAsync(0x1000, NULL), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxPushCurrent_v2(top));
}

/* Hold memory of each kind named; "ready" on stdout; wait to be killed. */
static int
hold(const char *what)
{
	CUDA_ARRAY_DESCRIPTOR d = { .Width = 1000, .Height = 1000,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	int all = strcmp(what, "all") == 0;
	CUmemoryPool pool;
	CUdeviceptr a, va;
	CUcontext c;
	CUarray arr;
	cuuint64_t v = UINT64_MAX;

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS)
		return 1;
	if ((all || strcmp(what, "pool") == 0) &&
	    (cuDeviceGetDefaultMemPool(&pool, 0) != CUDA_SUCCESS ||
	    cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v) !=
	    CUDA_SUCCESS || cuMemAllocAsync(&a, 8 * MiB, NULL) != CUDA_SUCCESS ||
	    cuMemFreeAsync(a, NULL) != CUDA_SUCCESS ||
	    cuStreamSynchronize(NULL) != CUDA_SUCCESS))
		return 1;
	if ((all || strcmp(what, "vmm") == 0) &&
	    (cuMemCreate(&h, 64 * MiB, &p, 0) != CUDA_SUCCESS ||
	    cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0) != CUDA_SUCCESS ||
	    cuMemMap(va, 64 * MiB, 0, h, 0) != CUDA_SUCCESS ||
	    cuMemRelease(h) != CUDA_SUCCESS))
		return 1;
	if ((all || strcmp(what, "array") == 0) &&
	    cuArrayCreate_v2(&arr, &d) != CUDA_SUCCESS)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* A process killed holding pool, VMM and array memory loses it all. */
static void
check_killed(void)
{
	char *argv[] = { "sim_mem_linked", "hold", "all", NULL };
	uint64_t before = free_bytes();
	int out = -1;
	pid_t pid;

	pid = spawn(argv, NULL, NULL, &out);
	CHECK(read_char(out) == 'r', "the holding child failed");
	CHECK(before - free_bytes() == 76 * MiB, "the child holds %llu",
	    (unsigned long long)(before - free_bytes()));
	kill(pid, SIGKILL);
	CHECK(wait_free(before), "a killed child kept %llu",
	    (unsigned long long)(before - free_bytes()));
	CHECK(wait_status(pid) == 128 + SIGKILL, "the child was not killed");
	close(out);
}

/*
 * A forked child starts afresh (cuInit again) and its copies of pools,
 * mappings and arrays are not its memory; the parent's stay intact.
 */
static void
check_fork(CUstream s)
{
	CUDA_ARRAY_DESCRIPTOR d = { .Width = 64, .Height = 64,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	unsigned char b[2] = { 0 };
	CUdeviceptr a, va;
	uint64_t held;
	CUarray arr;
	pid_t pid;

	OK(cuMemAllocAsync(&a, 4096, s));
	OK(cuMemsetD8_v2(a, 0x11, 1));
	OK(cuMemCreate(&h, 2 * MiB, &p, 0));
	va = must_reserve(2 * MiB);
	OK(cuMemMap(va, 2 * MiB, 0, h, 0));
	set_access(va, 2 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0x22, 1));
	OK(cuArrayCreate_v2(&arr, &d));
	held = free_bytes();
	fflush(stdout);
	if ((pid = fork()) == 0) {
		CUcontext c;
		CUdeviceptr q;
		int bad = cuInit(0) != CUDA_SUCCESS;

		bad |= cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS;
		bad |= cuCtxPushCurrent_v2(c) != CUDA_SUCCESS;
		bad |= free_bytes() != held;
		bad |= cuMemAllocAsync(&q, 1 * MiB, NULL) != CUDA_SUCCESS;
		bad |= cuMemFreeAsync(q, NULL) != CUDA_SUCCESS;
		bad |= cuCtxSynchronize() != CUDA_SUCCESS;
		bad |= cuMemRelease(h) != CUDA_ERROR_INVALID_VALUE;
		_exit(bad);
	}
	CHECK(wait_status(pid) == 0, "a forked child could not start afresh");
	CHECK(free_bytes() == held, "a forked child changed the charge");
	OK(cuMemcpyDtoH_v2(&b[0], a, 1));
	OK(cuMemcpyDtoH_v2(&b[1], va, 1));
	CHECK(b[0] == 0x11 && b[1] == 0x22, "contents after fork");
	OK(cuMemFreeAsync(a, s));
	OK(cuStreamSynchronize(s));
	unmap_release(va, 2 * MiB, h);
	OK(cuArrayDestroy(arr));
}

static int
print_free(const char *dev)
{
	CUcontext c;
	size_t fr = 0, total = 0;

	if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c,
	    (CUdevice)strtol(dev, NULL, 10)) != CUDA_SUCCESS ||
	    cuCtxPushCurrent_v2(c) != CUDA_SUCCESS ||
	    cuMemGetInfo_v2(&fr, &total) != CUDA_SUCCESS)
		return 1;
	printf("%zu\n", fr);
	return 0;
}

int
main(int argc, char **argv)
{
	static char state[128];
	const char *name = getenv("SIMCUDA_STATE");
	char path[160];
	CUcontext primary;
	CUstream s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "free") == 0)
		return print_free(argv[2]);
	if (argc > 2 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc > 2 && strcmp(argv[1], "import") == 0)
		return child_import(argv[2]);
	if (argc > 2 && strcmp(argv[1], "export") == 0)
		return child_export(argv[2]);

	/* A fresh, named machine: the children must share it. */
	if (name == NULL || *name == '\0') {
		snprintf(state, sizeof(state), "simmem-%d", (int)getpid());
		name = state;
		setenv("SIMCUDA_STATE", name, 1);
	}
	snprintf(path, sizeof(path), "/dev/shm/simcuda-%s", name);
	unlink(path);
	setenv("SIMCUDA_DEVICES", "4Gi,2Gi", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("SIMCUDA_CONTEXT_BYTES");

	OK(cuInit(0));
	check_procaddr();
	check_attributes();
	OK(cuDevicePrimaryCtxRetain(&primary, 0));
	OK(cuCtxPushCurrent_v2(primary));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	check_arrays();
	check_vmm_errors();
	check_vmm();
	check_vmm_shared();
	check_pool_default(s);
	check_pool_created(s);
	check_pool_no_context();
	check_killed();
	check_fork(s);
	OK(cuStreamDestroy_v2(s));
	CHECK(free_bytes() == 4 * GiB, "memory left: %llu",
	    (unsigned long long)(4 * GiB - free_bytes()));
	OK(cuDevicePrimaryCtxRelease_v2(0));
	unlink(path);
	if (failures != 0)
		printf("%d check(s) failed\n", failures);
	return failures != 0;
}
