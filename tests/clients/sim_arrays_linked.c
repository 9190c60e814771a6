/*
 * Checks of the simulated driver's arrays and mipmapped arrays
 * (tests/simcuda/array.c), linked against it: what each charges to the
 * device, seen from this process and from another one of the same
 * SIMCUDA_STATE, their contents, descriptors and errors. Prints one line
 * per failed check and exits 1 if any failed, else 0.
 *
 *   sim_arrays_linked           run every check (uses $SIMCUDA_STATE, or a
 *                               private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_arrays_linked free DEV  print the free bytes of device DEV
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

static const struct lookup_want lookups[] = {
	{ "cuArrayCreate", 12000, 0, (void *)cuArrayCreate_v2 },
	{ "cuArray3DGetDescriptor", 3020, 0,
	    (void *)cuArray3DGetDescriptor_v2 },
	{ "cuArrayDestroy", 2000, 0, (void *)cuArrayDestroy },
	{ "cuMipmappedArrayCreate", 5000, 0, (void *)cuMipmappedArrayCreate },
	{ "cuMipmappedArrayGetMemoryRequirements", 11060, 0,
	    (void *)cuMipmappedArrayGetMemoryRequirements },
	{ "cuMemcpyHtoA", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    (void *)cuMemcpyHtoA_v2_ptds },
	/* Too new for the version asked for. */
	{ "cuArrayGetMemoryRequirements", 11050, 0, NULL },
	{ "cuArrayCreate", 3010, 0, NULL },	/* 32-bit ABI: not simulated */
};

static const CUdevice_attribute supported[] = {
	CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED,
};

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
check_array_charges(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 1000, .Height = 1000,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };

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
}

/* A 1D array: 8 KiB of floats in one 2 MiB page; its bytes copy. */
static void
check_array_1d(uint64_t before)
{
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 2048, .Height = 0,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 }, g2;
	CUDA_ARRAY3D_DESCRIPTOR g3;
	unsigned char in[8192], out[8192];
	CUarray a;
	size_t i;

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
}

/* A 3D array has no 2D descriptor; bad descriptors cost nothing. */
static void
check_array_bad(uint64_t before)
{
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 2048, .Height = 0,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 }, g2;
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 16, .Height = 16, .Depth = 16,
	    .Format = CU_AD_FORMAT_HALF, .NumChannels = 2 }, g3;
	CUarray a;

	OK(cuArray3DCreate_v2(&a, &d3));
	EXPECT(cuArrayGetDescriptor_v2(&g2, a), CUDA_ERROR_INVALID_VALUE);
	OK(cuArray3DGetDescriptor_v2(&g3, a));
	CHECK(g3.Depth == 16 && g3.NumChannels == 2, "3D descriptor");
	OK(cuArrayDestroy(a));

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
}

/*
 * Mipmaps: the levels of 1024^2 floats sum to 5644288 bytes (the smallest
 * levels padded to 512 x 8), rounded up to 6 MiB.
 */
static void
check_mipmaps(uint64_t before)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 1024, .Height = 1024,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
	    .Flags = CUDA_ARRAY3D_DEFERRED_MAPPING };
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUmipmappedArray m, md;

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
}

/* Arrays go with their context. */
static void
check_array_context(uint64_t before)
{
	CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 1024, .Height = 1024,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
	CUcontext c;
	CUarray a;

	OK(cuCtxCreate_v2(&c, 0, 0));
	OK(cuArrayCreate_v2(&a, &d2));
	CHECK(before - free_bytes() == 16 * MiB, "array in a context %llu",
	    (unsigned long long)(before - free_bytes()));
	OK(cuCtxDestroy_v2(c));
	CHECK(free_bytes() == before, "a destroyed context kept its array");
	EXPECT(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
}

static void
check_arrays(CUstream s)
{
	uint64_t before = free_bytes();

	(void)s;
	check_lookups(lookups, sizeof(lookups) / sizeof(lookups[0]));
	check_supported(supported, sizeof(supported) / sizeof(supported[0]));
	check_array_charges();
	check_array_1d(before);
	check_array_bad(before);
	check_mipmaps(before);
	check_array_context(before);
}

int
main(int argc, char **argv)
{
	return mem_main(argc, argv, "simarrays", check_arrays);
}
