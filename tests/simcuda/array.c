/*
 * CUDA arrays and mipmapped arrays: opaque handles with a descriptor,
 * charged to their context's device in the size the driver lays them out
 * in, and destroyed with their context.
 *
 * The layout charged (README.md): block-linear, as on the real GPU. Each
 * row of a level is padded to a 512-byte pitch, a 2D or 3D level's rows to
 * a multiple of 8 (a GOB's height), block-compressed formats count 4x4
 * blocks; the levels are summed and the whole rounded up to a 2 MiB page.
 * cuArrayGetMemoryRequirements reports exactly that (alignment 2 MiB), but
 * as documented only for CUDA_ARRAY3D_DEFERRED_MAPPING arrays, which have
 * no memory of their own and are not charged.
 */
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "sim.h"

#define ARRAY_PITCH	512u		/* row pitch alignment */
#define ARRAY_ROWS	8u		/* rows of a 2D/3D level, a multiple of */
#define ARRAY_PAGE	(2u << 20)	/* arrays take whole 2 MiB pages */

#define ARRAY_FLAGS	(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | \
	CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER | \
	CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT | \
	CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)

/* A mipmapped array is an array with levels; its handle a distinct type. */
struct CUarray_st {
	struct CUctx_st	*ctx;
	CUDA_ARRAY3D_DESCRIPTOR desc;
	unsigned	levels;
	unsigned	elem;		/* bytes per element or per 4x4 block */
	int		block;		/* block-compressed format */
	int		phys;
	uint64_t	bytes;		/* the layout's size */
	uint64_t	charged;	/* bytes, or 0 when deferred */
	void		*backing;	/* plain arrays: for cuMemcpyHtoA/AtoH */
	size_t		maplen;
};

struct CUmipmappedArray_st {
	struct CUarray_st a;
};

static struct ptrmap arrays, mipmaps;	/* live handles */

#define KEY(h)	((uint64_t)(uintptr_t)(h))

/*
 * Bytes per element (per 4x4 block if *block) of format with nch
 * channels. The planar video formats are not simulated.
 */
static CUresult
format_size(CUarray_format f, unsigned nch, unsigned *elem, int *block)
{
	unsigned one = 0, want = 0;	/* want: the format's fixed channels */

	*block = 0;
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
		one = 1; break;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		one = 2; break;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		one = 4; break;
	case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1:
		*elem = 1; want = 1; break;
	case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2:
	case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1:
		*elem = 2; want = f == CU_AD_FORMAT_UNORM_INT8X2 ||
		    f == CU_AD_FORMAT_SNORM_INT8X2 ? 2 : 1; break;
	case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4:
	case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2:
		*elem = 4; want = f == CU_AD_FORMAT_UNORM_INT8X4 ||
		    f == CU_AD_FORMAT_SNORM_INT8X4 ? 4 : 2; break;
	case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4:
		*elem = 8; want = 4; break;
	case CU_AD_FORMAT_UNORM_INT_101010_2:
		*elem = 4; want = 4; break;
	case CU_AD_FORMAT_BC1_UNORM: case CU_AD_FORMAT_BC1_UNORM_SRGB:
		*elem = 8; want = 4; *block = 1; break;
	case CU_AD_FORMAT_BC4_UNORM: case CU_AD_FORMAT_BC4_SNORM:
		*elem = 8; want = 1; *block = 1; break;
	case CU_AD_FORMAT_BC2_UNORM: case CU_AD_FORMAT_BC2_UNORM_SRGB:
	case CU_AD_FORMAT_BC3_UNORM: case CU_AD_FORMAT_BC3_UNORM_SRGB:
	case CU_AD_FORMAT_BC7_UNORM: case CU_AD_FORMAT_BC7_UNORM_SRGB:
		*elem = 16; want = 4; *block = 1; break;
	case CU_AD_FORMAT_BC5_UNORM: case CU_AD_FORMAT_BC5_SNORM:
		*elem = 16; want = 2; *block = 1; break;
	case CU_AD_FORMAT_BC6H_UF16: case CU_AD_FORMAT_BC6H_SF16:
		*elem = 16; want = 3; *block = 1; break;
	case CU_AD_FORMAT_NV12: case CU_AD_FORMAT_P010: case CU_AD_FORMAT_P016:
	case CU_AD_FORMAT_NV16: case CU_AD_FORMAT_P210: case CU_AD_FORMAT_P216:
	case CU_AD_FORMAT_YUY2: case CU_AD_FORMAT_Y210: case CU_AD_FORMAT_Y216:
	case CU_AD_FORMAT_AYUV: case CU_AD_FORMAT_Y410: case CU_AD_FORMAT_Y416:
	case CU_AD_FORMAT_Y444_PLANAR8: case CU_AD_FORMAT_Y444_PLANAR10:
	case CU_AD_FORMAT_YUV444_8bit_SemiPlanar:
	case CU_AD_FORMAT_YUV444_16bit_SemiPlanar:
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (one != 0) {
		if (nch != 1 && nch != 2 && nch != 4)
			return CUDA_ERROR_INVALID_VALUE;
		*elem = one * nch;
		return CUDA_SUCCESS;
	}
	return nch == want ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/*
 * The extents cuArray3DCreate accepts (its table; the limits of an
 * H100, which cuDeviceGetAttribute does not report).
 */
static int
extent_ok(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	size_t w = d->Width, h = d->Height, z = d->Depth;
	unsigned f = d->Flags;

	if (w == 0)
		return 0;
	if ((f & CUDA_ARRAY3D_TEXTURE_GATHER) && (h == 0 || z != 0 ||
	    (f & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP))))
		return 0;
	if (f & CUDA_ARRAY3D_CUBEMAP) {
		if (w != h || w > 32768)
			return 0;
		return (f & CUDA_ARRAY3D_LAYERED) ?
		    z != 0 && z % 6 == 0 && z <= 2046 : z == 6;
	}
	if (f & CUDA_ARRAY3D_LAYERED)
		return z >= 1 && z <= 2048 && w <= 32768 && h <= 32768;
	if (z != 0)
		return h != 0 && w <= 16384 && h <= 16384 && z <= 16384;
	if (f & CUDA_ARRAY3D_TEXTURE_GATHER)
		return w <= 32768 && h <= 32768;
	return w <= 131072 && h <= 65536;
}

/* Levels a full mipmap chain of d has: 1 + log2 of its largest extent. */
static unsigned
levels_max(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	size_t m = d->Width;
	unsigned n = 1;

	if (d->Height > m)
		m = d->Height;
	if (!(d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) &&
	    d->Depth > m)
		m = d->Depth;
	while (m >>= 1)
		n++;
	return n;
}

static uint64_t
round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

/* The bytes of the layout (top of the file) of a; 0 on overflow. */
static uint64_t
layout_bytes(const struct CUarray_st *a)
{
	const CUDA_ARRAY3D_DESCRIPTOR *d = &a->desc;
	int sliced = (d->Flags & (CUDA_ARRAY3D_LAYERED |
	    CUDA_ARRAY3D_CUBEMAP)) != 0;
	uint64_t total = 0, w, h, z, level;
	unsigned l;

	for (l = 0; l < a->levels; l++) {
		w = d->Width >> l ? d->Width >> l : 1;
		h = d->Height == 0 ? 1 : d->Height >> l ? d->Height >> l : 1;
		z = d->Depth == 0 ? 1 : sliced ? d->Depth :
		    d->Depth >> l ? d->Depth >> l : 1;
		if (a->block) {
			w = (w + 3) / 4;
			h = d->Height == 0 ? 1 : (h + 3) / 4;
		}
		if (d->Height != 0)
			h = round_up(h, ARRAY_ROWS);
		/* Extents are at most 2^17 and elements 16 bytes: no overflow
		 * but in the product of the three. */
		if (__builtin_mul_overflow(round_up(w * a->elem, ARRAY_PITCH),
		    h, &level) || __builtin_mul_overflow(level, z, &level) ||
		    __builtin_add_overflow(total, level, &total))
			return 0;
	}
	if (total > UINT64_MAX - ARRAY_PAGE)
		return 0;
	return round_up(total, ARRAY_PAGE);
}

/* Check, charge (unless deferred) and record a new array in map. */
static CUresult
array_make(struct ptrmap *map, struct CUarray_st *a,
    const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
	struct CUctx_st *ctx;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if ((d->Flags & ~(unsigned)ARRAY_FLAGS) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (d->Flags & CUDA_ARRAY3D_SPARSE)
		return CUDA_ERROR_NOT_SUPPORTED;	/* not simulated */
	if ((r = format_size(d->Format, d->NumChannels, &a->elem,
	    &a->block)) != CUDA_SUCCESS)
		return r;
	if (!extent_ok(d) || levels == 0 || levels > levels_max(d))
		return CUDA_ERROR_INVALID_VALUE;
	a->ctx = ctx;
	a->desc = *d;
	a->levels = levels;
	a->phys = ctx->phys;
	if ((a->bytes = layout_bytes(a)) == 0 || a->bytes > SIZE_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (!(d->Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) {
		if (state_charge(a->phys, a->bytes) < 0)
			goto out_unlock;
		a->charged = a->bytes;
		if (map == &arrays && (a->backing = backing_alloc(
		    (size_t)a->bytes, ARRAY_PITCH, &a->maplen)) == NULL)
			goto out_uncharge;
	}
	if (ptrmap_put(map, KEY(a), a) < 0)
		goto out_backing;
	sim_unlock();
	return CUDA_SUCCESS;
out_backing:
	if (a->backing != NULL)
		backing_free(a->backing, a->maplen);
out_uncharge:
	if (a->charged != 0)
		state_uncharge(a->phys, a->charged);
out_unlock:
	sim_unlock();
	return r;
}

/* The lock is held. */
static void
array_free(struct ptrmap *map, struct CUarray_st *a)
{
	ptrmap_del(map, KEY(a));
	if (a->charged != 0)
		state_uncharge(a->phys, a->charged);
	if (a->backing != NULL)
		backing_free(a->backing, a->maplen);
	free(a);
}

/* A 2D descriptor as cuArray3DCreate sees it. */
static CUDA_ARRAY3D_DESCRIPTOR
desc_3d(const CUDA_ARRAY_DESCRIPTOR *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = {
		.Width = d->Width, .Height = d->Height, .Depth = 0,
		.Format = d->Format, .NumChannels = d->NumChannels, .Flags = 0,
	};

	return d3;
}

static CUresult
array_create(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct CUarray_st *a;
	CUresult r;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = array_make(&arrays, a, d, 1)) != CUDA_SUCCESS) {
		free(a);
		return r;
	}
	*pHandle = a;
	return CUDA_SUCCESS;
}

CUresult
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	SIM_GATE();
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (pHandle == NULL || pAllocateArray == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	d = desc_3d(pAllocateArray);
	return array_create(pHandle, &d);
}

CUresult
cuArray3DCreate_v2(CUarray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	SIM_GATE();
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (pHandle == NULL || pAllocateArray == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	return array_create(pHandle, pAllocateArray);
}

CUresult
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
    unsigned int numMipmapLevels)
{
	SIM_GATE();
	struct CUmipmappedArray_st *m;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (pHandle == NULL || pMipmappedArrayDesc == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = array_make(&mipmaps, &m->a, pMipmappedArrayDesc,
	    numMipmapLevels)) != CUDA_SUCCESS) {
		free(m);
		return r;
	}
	*pHandle = m;
	return CUDA_SUCCESS;
}

/* No current context is needed: the handle names its context. */
static CUresult
array_destroy(struct ptrmap *map, const void *h)
{
	struct CUarray_st *a;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (h != NULL && (a = ptrmap_get(map, KEY(h))) != NULL)
		array_free(map, a);
	else
		r = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return r;
}

CUresult
cuArrayDestroy(CUarray hArray)
{
	SIM_GATE();
	return array_destroy(&arrays, hArray);
}

CUresult
cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	SIM_GATE();
	return array_destroy(&mipmaps, hMipmappedArray);
}

/* A copy of the live array h of map, or CUDA_ERROR_INVALID_HANDLE. */
static CUresult
array_get(struct ptrmap *map, const void *h, const void *out,
    struct CUarray_st *copy)
{
	struct CUarray_st *a;
	CUresult r = sim_ready_out(out);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (h != NULL && (a = ptrmap_get(map, KEY(h))) != NULL)
		*copy = *a;
	else
		r = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return r;
}

/* A 3D or layered array has no 2D descriptor. */
CUresult
cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor,
    CUarray hArray)
{
	SIM_GATE();
	struct CUarray_st a;
	CUresult r = array_get(&arrays, hArray, pArrayDescriptor, &a);

	if (r != CUDA_SUCCESS)
		return r;
	if (a.desc.Depth != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pArrayDescriptor->Width = a.desc.Width;
	pArrayDescriptor->Height = a.desc.Height;
	pArrayDescriptor->Format = a.desc.Format;
	pArrayDescriptor->NumChannels = a.desc.NumChannels;
	return CUDA_SUCCESS;
}

CUresult
cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor,
    CUarray hArray)
{
	SIM_GATE();
	struct CUarray_st a;
	CUresult r = array_get(&arrays, hArray, pArrayDescriptor, &a);

	if (r == CUDA_SUCCESS)
		*pArrayDescriptor = a.desc;
	return r;
}

/*
 * What the driver would use for a, on any device: as documented, only
 * for deferred-mapping arrays (CUDA_ERROR_INVALID_VALUE otherwise).
 */
static CUresult
requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, struct ptrmap *map,
    const void *h, CUdevice device)
{
	struct CUarray_st a;
	CUresult r = array_get(map, h, req, &a);

	if (r == CUDA_ERROR_INVALID_HANDLE)
		return CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS || (r = device_check(device)) != CUDA_SUCCESS)
		return r;
	if (!(a.desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING))
		return CUDA_ERROR_INVALID_VALUE;
	memset(req, 0, sizeof(*req));
	req->size = (size_t)a.bytes;
	req->alignment = ARRAY_PAGE;
	return CUDA_SUCCESS;
}

CUresult
cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
    CUarray array, CUdevice device)
{
	SIM_GATE();
	return requirements(memoryRequirements, &arrays, array, device);
}

CUresult
cuMipmappedArrayGetMemoryRequirements(
    CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
    CUmipmappedArray mipmap, CUdevice device)
{
	SIM_GATE();
	return requirements(memoryRequirements, &mipmaps, mipmap, device);
}

/*
 * cuMemcpyHtoA/AtoH: bytes [off, off + n) of a 1D array, which the
 * documentation limits them to. Synchronous: the lock covers the copy.
 */
static CUresult
array_copy(CUarray h, size_t off, void *host, size_t n, int to_array,
    CUstream stream)
{
	struct CUctx_st *ctx;
	struct CUarray_st *a;
	unsigned char *p;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((r = stream_check(stream)) != CUDA_SUCCESS)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (h == NULL || (a = ptrmap_get(&arrays, KEY(h))) == NULL ||
	    host == NULL || a->backing == NULL || a->desc.Height != 0 ||
	    a->desc.Depth != 0 || a->block || off > a->desc.Width * a->elem ||
	    n > a->desc.Width * a->elem - off)
		goto out;
	p = (unsigned char *)a->backing + off;
	if (to_array)
		memmove(p, host, n);
	else
		memmove(host, p, n);
	r = CUDA_SUCCESS;
out:
	sim_unlock();
	return r;
}

CUresult
cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost,
    size_t ByteCount)
{
	SIM_GATE();
	return array_copy(dstArray, dstOffset, (void *)(uintptr_t)srcHost,
	    ByteCount, 1, CU_STREAM_LEGACY);
}

CUresult
cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void *srcHost,
    size_t ByteCount)
{
	SIM_GATE();
	return array_copy(dstArray, dstOffset, (void *)(uintptr_t)srcHost,
	    ByteCount, 1, CU_STREAM_PER_THREAD);
}

CUresult
cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset,
    size_t ByteCount)
{
	SIM_GATE();
	return array_copy(srcArray, srcOffset, dstHost, ByteCount, 0,
	    CU_STREAM_LEGACY);
}

CUresult
cuMemcpyAtoH_v2_ptds(void *dstHost, CUarray srcArray, size_t srcOffset,
    size_t ByteCount)
{
	SIM_GATE();
	return array_copy(srcArray, srcOffset, dstHost, ByteCount, 0,
	    CU_STREAM_PER_THREAD);
}

/* A delete moves entries about: walk again from the start. */
static void
release_ctx(struct ptrmap *map, struct CUctx_st *ctx)
{
	struct CUarray_st *a;
	size_t pos = 0;

	while ((a = ptrmap_next(map, &pos, NULL)) != NULL)
		if (a->ctx == ctx) {
			array_free(map, a);
			pos = 0;
		}
}

void
array_release_ctx(struct CUctx_st *ctx)
{
	release_ctx(&arrays, ctx);
	release_ctx(&mipmaps, ctx);
}

/* In a forked child: copies only this process holds, charged to the
 * parent. */
static void
forget(struct ptrmap *map)
{
	struct CUarray_st *a;
	size_t pos = 0;

	while ((a = ptrmap_next(map, &pos, NULL)) != NULL) {
		if (a->backing != NULL)
			backing_free(a->backing, a->maplen);
		free(a);
	}
	ptrmap_free(map);
}

void
array_forget(void)
{
	forget(&arrays);
	forget(&mipmaps);
}
