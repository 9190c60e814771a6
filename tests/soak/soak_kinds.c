/*
 * The soak client's ways of taking device memory, one per allocation kind
 * the shim interposes, each with what gpufrac charges for it
 * (libgpufrac(7), README "What the shim interposes") and what the
 * simulated driver holds for it (tests/simcuda/README.md): the size asked
 * (rounded up to 512-byte granules by the driver), pitch x height, what a
 * deferred twin says an array needs, a VMM allocation until it is both
 * released and unmapped, a pool's reserve rather than its allocations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak_client.h"

#define GRANULE		512ull		/* simcuda's SIM_GRANULE */
#define VMM_GRAIN	(2ull << 20)	/* its VMM granularity */

static uint64_t
granules(uint64_t n)
{
	return (n + GRANULE - 1) / GRANULE * GRANULE;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A new entry at the end of held[], zeroed; exits when memory runs out. */
static struct held *
held_new(struct tenant *t)
{
	struct held *h;

	if (t->nheld == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		if ((h = realloc(t->held, t->cap * sizeof(*h))) == NULL) {
			fprintf(stderr, "soak_client: out of memory\n");
			exit(2);
		}
		t->held = h;
	}
	h = &t->held[t->nheld];
	memset(h, 0, sizeof(*h));
	return h;
}

/* The entry held_new gave is now held: count it. */
static void
held_keep(struct tenant *t, struct held *h)
{
	t->charged[h->dev] += h->charged;
	t->driver[h->dev] += h->driver;
	t->nheld++;
}

static void
held_drop(struct tenant *t, size_t i)
{
	struct held *h = &t->held[i];

	t->charged[h->dev] -= h->charged;
	t->driver[h->dev] -= h->driver;
	t->held[i] = t->held[--t->nheld];
}

/* Log-uniform between the tenant's smallest and largest size. */
static uint64_t
size_draw(struct tenant *t)
{
	unsigned lo = 63 - (unsigned)__builtin_clzll(t->min_size);
	unsigned hi = 63 - (unsigned)__builtin_clzll(t->max_size);
	uint64_t base = 1ull << soak_between(&t->rng, lo,
	    hi > lo ? hi - 1 : lo);

	return min_u64(base + soak_rand(&t->rng) % base, t->max_size);
}

static void
tag_bytes(uint32_t tag, unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)((tag * 2654435761u) >> (i % 4 * 8)) +
		    (unsigned char)i;
}

static CUresult
tag_write(struct held *h)
{
	unsigned char b[TAG_BYTES];
	size_t n = (size_t)min_u64(h->size, TAG_BYTES);

	tag_bytes(h->tag, b, n);
	return cuMemcpyHtoD_v2(h->ptr, b, n);
}

/* cuMemAlloc, cuMemAllocManaged, cuMemAllocPitch. */
static CUresult
plain_alloc(struct tenant *t, int kind, int dev)
{
	struct held *h = held_new(t);
	uint64_t size = size_draw(t), width;
	size_t pitch = 0;
	CUresult r;

	if (kind == SOAK_PITCH) {
		width = soak_between(&t->rng, 1, min_u64(size, 65536));
		r = cuMemAllocPitch_v2(&h->ptr, &pitch, (size_t)width,
		    (size_t)(size / width), 4u << soak_between(&t->rng, 0, 2));
		size = (uint64_t)pitch * (size / width);
	} else if (kind == SOAK_MANAGED)
		r = cuMemAllocManaged(&h->ptr, (size_t)size,
		    CU_MEM_ATTACH_GLOBAL);
	else
		r = cuMemAlloc_v2(&h->ptr, (size_t)size);
	if (r != CUDA_SUCCESS)
		return r;
	h->kind = kind;
	h->dev = dev;
	h->size = size;
	h->charged = size;
	h->driver = granules(size);
	h->tag = ++t->next_tag;
	held_keep(t, h);
	return tag_write(h);
}

/* A descriptor of about the tenant's size: 2D, 3D or a mipmap chain. */
static void
array_desc(struct tenant *t, int sub, CUDA_ARRAY3D_DESCRIPTOR *d,
    unsigned *levels)
{
	static const CUarray_format fmt[] = { CU_AD_FORMAT_UNSIGNED_INT8,
	    CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT };
	static const unsigned fmt_bytes[] = { 1, 2, 4 };
	unsigned f = (unsigned)soak_between(&t->rng, 0, 2);
	uint64_t elems, w;

	memset(d, 0, sizeof(*d));
	d->Format = fmt[f];
	d->NumChannels = 1u << soak_between(&t->rng, 0, 2);
	elems = size_draw(t) / (fmt_bytes[f] * d->NumChannels) + 1;
	w = soak_between(&t->rng, 1, min_u64(elems, 8192));
	d->Width = (size_t)w;
	d->Height = (size_t)min_u64(elems / w, 8192);
	if (sub == 1 && d->Height > 1) {
		d->Depth = (size_t)soak_between(&t->rng, 1, 8);
		d->Height = d->Height / d->Depth + 1;
	}
	*levels = 0;
	if (sub == 2) {
		/* No more levels than the chain of the largest extent has. */
		w = d->Width > d->Height ? d->Width : d->Height;
		*levels = (unsigned)soak_between(&t->rng, 1,
		    min_u64(4, (uint64_t)(64 - __builtin_clzll(w))));
	}
}

/* What the driver says an array of d needs, asked of a deferred twin. */
static CUresult
array_needs(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, int dev,
    uint64_t *size)
{
	CUDA_ARRAY3D_DESCRIPTOR twin = *d;
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUmipmappedArray m;
	CUarray a;
	CUresult r;

	twin.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
	if (levels == 0) {
		if ((r = cuArray3DCreate_v2(&a, &twin)) != CUDA_SUCCESS)
			return r;
		r = cuArrayGetMemoryRequirements(&req, a, dev);
		(void)cuArrayDestroy(a);
	} else {
		if ((r = cuMipmappedArrayCreate(&m, &twin, levels)) !=
		    CUDA_SUCCESS)
			return r;
		r = cuMipmappedArrayGetMemoryRequirements(&req, m, dev);
		(void)cuMipmappedArrayDestroy(m);
	}
	*size = req.size;
	return r;
}

/* cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate. */
static CUresult
array_alloc(struct tenant *t, int dev)
{
	struct held *h = held_new(t);
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUDA_ARRAY_DESCRIPTOR d2;
	unsigned levels;
	CUresult r;

	h->sub = (int)soak_between(&t->rng, 0, 2);
	array_desc(t, h->sub, &d, &levels);
	if ((r = array_needs(&d, levels, dev, &h->size)) != CUDA_SUCCESS) {
		tenant_count(t, SOAK_ARRAY, r, "deferred array twin");
		return CUDA_SUCCESS;	/* counted: nothing was asked */
	}
	if (h->sub == 0) {
		memset(&d2, 0, sizeof(d2));
		d2.Width = d.Width;
		d2.Height = d.Height;
		d2.Format = d.Format;
		d2.NumChannels = d.NumChannels;
		r = cuArrayCreate_v2(&h->array, &d2);
	} else if (h->sub == 1)
		r = cuArray3DCreate_v2(&h->array, &d);
	else
		r = cuMipmappedArrayCreate(&h->mipmap, &d, levels);
	if (r != CUDA_SUCCESS)
		return r;
	h->kind = SOAK_ARRAY;
	h->dev = dev;
	h->charged = h->driver = h->size;
	held_keep(t, h);
	return CUDA_SUCCESS;
}

/* cuMemCreate, then an address range mapped read-write on dev. */
static CUresult
vmm_alloc(struct tenant *t, int dev)
{
	struct held *h = held_new(t);
	CUmemAllocationProp p;
	CUmemAccessDesc acc;
	CUresult r;

	h->size = VMM_GRAIN * soak_between(&t->rng, 1,
	    t->max_size / VMM_GRAIN > 16 ? 16 : t->max_size / VMM_GRAIN + 1);
	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	if ((r = cuMemCreate(&h->vmm, (size_t)h->size, &p, 0)) != CUDA_SUCCESS)
		return r;
	h->kind = SOAK_VMM;
	h->dev = dev;
	h->sub = VMM_HANDLE;
	h->charged = h->driver = h->size;
	held_keep(t, h);
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = cuMemAddressReserve(&h->ptr, (size_t)h->size, 0, 0, 0)) !=
	    CUDA_SUCCESS)
		return r;
	if ((r = cuMemMap(h->ptr, (size_t)h->size, 0, h->vmm, 0)) !=
	    CUDA_SUCCESS) {
		(void)cuMemAddressFree(h->ptr, (size_t)h->size);
		return r;
	}
	h->sub |= VMM_MAPPED;
	return cuMemSetAccess(h->ptr, (size_t)h->size, &acc, 1);
}

void
pools_read(struct tenant *t)
{
	cuuint64_t v;
	int d, w;

	for (d = 0; d < SOAK_MAX_DEV; d++)
		for (w = 0; w < 2; w++) {
			if (t->pool[d][w] == NULL)
				continue;
			v = 0;
			if (cuMemPoolGetAttribute(t->pool[d][w],
			    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) !=
			    CUDA_SUCCESS)
				tenant_count(t, SOAK_POOL, CUDA_ERROR_UNKNOWN,
				    "pool reserve");
			t->charged[d] += v - t->reserve[d][w];
			t->driver[d] += v - t->reserve[d][w];
			t->reserve[d][w] = v;
		}
}

/* The pool to allocate from on dev: its default one, or one made here. */
static CUresult
pool_pick(struct tenant *t, int dev, int *which)
{
	CUmemPoolProps props;

	*which = (int)soak_between(&t->rng, POOL_DEFAULT, POOL_MADE);
	if (t->pool[dev][*which] != NULL)
		return CUDA_SUCCESS;
	if (*which == POOL_DEFAULT)
		return cuDeviceGetDefaultMemPool(&t->pool[dev][POOL_DEFAULT],
		    dev);
	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev;
	return cuMemPoolCreate(&t->pool[dev][POOL_MADE], &props);
}

/* cuMemAllocAsync (the default pool), cuMemAllocFromPoolAsync (ours). */
static CUresult
pool_alloc(struct tenant *t, int dev)
{
	struct held *h = held_new(t);
	int which;
	CUresult r;

	if ((r = pool_pick(t, dev, &which)) != CUDA_SUCCESS)
		return r;
	h->size = size_draw(t) / 8 + 1;
	if (which == POOL_DEFAULT)
		r = cuMemAllocAsync(&h->ptr, (size_t)h->size, NULL);
	else
		r = cuMemAllocFromPoolAsync(&h->ptr, (size_t)h->size,
		    t->pool[dev][POOL_MADE], NULL);
	if (r == CUDA_SUCCESS) {
		h->kind = SOAK_POOL;
		h->dev = dev;
		h->sub = which;
		t->pool_out[dev][which]++;
		held_keep(t, h);
	}
	pools_read(t);
	return r;
}

CUresult
kind_alloc(struct tenant *t, int kind, int dev)
{
	switch (kind) {
	case SOAK_ARRAY:
		return array_alloc(t, dev);
	case SOAK_VMM:
		return vmm_alloc(t, dev);
	case SOAK_POOL:
		return pool_alloc(t, dev);
	case SOAK_IPC:
	case SOAK_GRAPH:
		return use_held(t, kind, dev);
	default:
		return plain_alloc(t, kind, dev);
	}
}

/* One step of giving back a VMM allocation: unmap, release, or both. */
static CUresult
vmm_free(struct tenant *t, size_t i)
{
	struct held *h = &t->held[i];
	int step = h->sub == (VMM_MAPPED | VMM_HANDLE) ?
	    (int)soak_between(&t->rng, 1, 3) : h->sub;
	CUresult r;

	if (step & VMM_MAPPED) {
		if ((r = cuMemUnmap(h->ptr, (size_t)h->size)) != CUDA_SUCCESS ||
		    (r = cuMemAddressFree(h->ptr, (size_t)h->size)) !=
		    CUDA_SUCCESS)
			return r;
		h->sub &= ~VMM_MAPPED;
	}
	if (step & VMM_HANDLE) {
		if ((r = cuMemRelease(h->vmm)) != CUDA_SUCCESS)
			return r;
		h->sub &= ~VMM_HANDLE;
	}
	if (h->sub == 0)
		held_drop(t, i);
	return CUDA_SUCCESS;
}

CUresult
kind_free(struct tenant *t, size_t i)
{
	struct held *h = &t->held[i];
	int kind = h->kind;
	CUresult r;

	tenant_use(t, h->dev);
	switch (kind) {
	case SOAK_VMM:
		return vmm_free(t, i);
	case SOAK_ARRAY:
		r = h->sub == 2 ? cuMipmappedArrayDestroy(h->mipmap) :
		    cuArrayDestroy(h->array);
		break;
	case SOAK_POOL:
		r = cuMemFreeAsync(h->ptr, NULL);
		if (r == CUDA_SUCCESS)
			t->pool_out[h->dev][h->sub]--;
		break;
	default:
		r = cuMemFree_v2(h->ptr);
	}
	if (r == CUDA_SUCCESS) {
		held_drop(t, i);	/* h is another entry now */
		if (kind == SOAK_POOL)
			pools_read(t);
	}
	return r;
}

int
kind_verify(struct tenant *t, CUresult *r)
{
	unsigned char want[TAG_BYTES], got[TAG_BYTES];
	struct held *h;
	size_t i, n;

	*r = CUDA_SUCCESS;
	if (t->nheld == 0)
		return 0;
	h = &t->held[soak_rand(&t->rng) % t->nheld];
	if (h->kind != SOAK_MEM && h->kind != SOAK_PITCH &&
	    h->kind != SOAK_MANAGED)
		return 0;
	n = (size_t)min_u64(h->size, TAG_BYTES);
	tag_bytes(h->tag, want, n);
	tenant_use(t, h->dev);
	if ((*r = cuMemcpyDtoH_v2(got, h->ptr, n)) != CUDA_SUCCESS)
		return 0;
	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			return -1;
	return 0;
}

CUresult
pool_sync(struct tenant *t, int dev)
{
	CUresult r;

	tenant_use(t, dev);
	r = soak_chance(&t->rng, 50) ? cuCtxSynchronize() :
	    cuStreamSynchronize(NULL);
	pools_read(t);
	return r;
}

CUresult
pool_trim(struct tenant *t, int dev)
{
	int w = (int)soak_between(&t->rng, POOL_DEFAULT, POOL_MADE);
	CUresult r;

	if (t->pool[dev][w] == NULL)
		return CUDA_SUCCESS;
	r = cuMemPoolTrimTo(t->pool[dev][w],
	    (size_t)soak_between(&t->rng, 0, 4) << 20);
	pools_read(t);
	return r;
}

/*
 * Only a pool with nothing out: one destroyed with allocations out gives
 * its chunks back as they empty, after the shim stopped charging them.
 */
CUresult
pool_drop(struct tenant *t, int dev)
{
	CUresult r;

	if (t->pool[dev][POOL_MADE] == NULL || t->pool_out[dev][POOL_MADE] != 0)
		return CUDA_SUCCESS;
	if ((r = cuMemPoolDestroy(t->pool[dev][POOL_MADE])) != CUDA_SUCCESS)
		return r;
	t->charged[dev] -= t->reserve[dev][POOL_MADE];
	t->driver[dev] -= t->reserve[dev][POOL_MADE];
	t->reserve[dev][POOL_MADE] = 0;
	t->pool[dev][POOL_MADE] = NULL;
	return CUDA_SUCCESS;
}

void
kinds_truth(const struct tenant *t, uint64_t *charged, uint64_t *driver)
{
	int d;

	for (d = 0; d < SOAK_MAX_DEV; d++) {
		charged[d] = t->charged[d];
		driver[d] = t->driver[d];
		if (t->devmask & (1u << d))
			driver[d] += t->ctx_bytes;
	}
}

CUresult
kinds_free_all(struct tenant *t)
{
	CUresult r = CUDA_SUCCESS, r1;
	int d;

	while (t->nheld > 0 && r == CUDA_SUCCESS)
		r = kind_free(t, t->nheld - 1);
	for (d = 0; d < SOAK_MAX_DEV && r == CUDA_SUCCESS; d++) {
		if (!(t->devmask & (1u << d)))
			continue;
		if ((r1 = pool_drop(t, d)) == CUDA_SUCCESS)
			r1 = pool_sync(t, d);
		r = r1;
	}
	return r;
}
