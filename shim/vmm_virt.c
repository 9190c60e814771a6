/*
 * Virtual handles (vmm_virt.h): the program's handles by id, the driver's
 * handles back to them, and the program's allocations mapped once whole
 * given to the copy engine to move (vback_int.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "real.h"
#include "vback.h"
#include "vback_int.h"
#include "vmm_table.h"
#include "vmm_virt.h"

#define VMM_VIRT_DEVICES	64	/* devices whose access a move keeps */

struct vmm_virt {
	uint64_t	id;		/* the program's: VMM_VIRT_TAG | n */
	CUmemGenericAllocationHandle real;	/* the driver's; 0 while out */
	uint64_t	size;
	CUmemAllocationProp prop;	/* as the program made it */
	uint64_t	refs;		/* the program's */
	uint64_t	maps;
	int		pinned;		/* vmm_virt_pin: it stays */
	struct vback	*v;		/* moved with the others (vback_lock) */
	uint8_t		access[VMM_VIRT_DEVICES];	/* CUmemAccess_flags
							   by ordinal, kept
							   while out */
};

static pthread_mutex_t virt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap virt_ids;		/* id -> struct vmm_virt */
static struct ptrmap virt_reals;	/* the driver's handle -> the same */
static uint64_t virt_next = 1;
size_t vmm_virt_count;

/*
 * Ids are counted, never reused: a released handle the program uses again
 * is refused, not taken for a newer one (the driver's may be: issue 21).
 */
uint64_t
vmm_virt_new(CUmemGenericAllocationHandle real, uint64_t size,
    const CUmemAllocationProp *prop)
{
	struct vmm_virt *x;
	uint64_t id = 0;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return 0;
	x->real = real;
	x->size = size;
	x->prop = *prop;
	x->refs = 1;
	pthread_mutex_lock(&virt_lock);
	x->id = VMM_VIRT_TAG | virt_next++;
	if (ptrmap_put(&virt_ids, x->id, x) == 0) {
		if (ptrmap_put(&virt_reals, real, x) == 0) {
			id = x->id;
			vmm_virt_count++;
		} else
			(void)ptrmap_del(&virt_ids, x->id);
	}
	pthread_mutex_unlock(&virt_lock);
	if (id == 0)
		free(x);
	return id;
}

CUmemGenericAllocationHandle
vmm_virt_real(uint64_t h)
{
	struct vmm_virt *x;
	CUmemGenericAllocationHandle real = 0;

	if (!vmm_virt_is(h))
		return h;
	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_get(&virt_ids, h)) != NULL)
		real = x->real;
	pthread_mutex_unlock(&virt_lock);
	return real;
}

int
vmm_virt_unref(uint64_t h)
{
	struct vmm_virt *x;
	int r = -1;

	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_get(&virt_ids, h)) != NULL && x->refs > 0) {
		x->refs--;
		r = 0;
	}
	pthread_mutex_unlock(&virt_lock);
	return r;
}

uint64_t
vmm_virt_retained(CUmemGenericAllocationHandle real)
{
	struct vmm_virt *x;
	uint64_t id = 0;

	if (__atomic_load_n(&vmm_virt_count, __ATOMIC_RELAXED) == 0)
		return real;
	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_get(&virt_reals, real)) != NULL) {
		x->refs++;
		id = x->id;
	}
	pthread_mutex_unlock(&virt_lock);
	if (id == 0)
		return real;
	/* The driver keeps one reference of the shim's, counted once. */
	(void)REAL_CALL(cuMemRelease, real);
	return id;
}

/* Give v back to the shim's own (vback_lock held). */
static void
virt_unmove(struct vmm_virt *x)
{
	struct vback *v = x->v;

	if (v == NULL)
		return;
	(void)ptrmap_del(&vback_map, v->ptr);
	__atomic_sub_fetch(&vback_count, 1, __ATOMIC_RELAXED);
	vback_host_put(v);
	free(v);
	x->v = NULL;
}

/*
 * Whether an allocation mapped whole at ptr in the current context can
 * move: the copies run in that context, which must be on its device.
 */
static struct vback *
virt_vback(const struct vmm_virt *x, uint64_t ptr)
{
	struct vback *v;
	CUcontext ctx;
	CUdevice dev;

	if (REAL_CALL(cuCtxGetCurrent, &ctx) != CUDA_SUCCESS || ctx == NULL ||
	    REAL_CALL(cuCtxGetDevice, &dev) != CUDA_SUCCESS ||
	    dev != x->prop.location.id || (v = calloc(1, sizeof(*v))) == NULL)
		return NULL;
	v->ptr = ptr;
	v->size = x->size;
	v->held = x->size;
	v->dev = dev;
	v->ctx = ctx;
	return v;
}

void
vmm_virt_mapped(uint64_t h, uint64_t ptr, uint64_t size, uint64_t offset)
{
	struct vmm_virt *x;
	struct vback *v = NULL;

	pthread_mutex_lock(&vback_lock);
	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_get(&virt_ids, h)) == NULL)
		goto out;
	if (x->maps++ == 0 && !x->pinned && offset == 0 && size == x->size &&
	    (v = virt_vback(x, ptr)) != NULL) {
		v->h = x->real;
		v->prog = x;
		if (ptrmap_put(&vback_map, ptr, v) < 0) {
			free(v);
			goto out;
		}
		__atomic_add_fetch(&vback_count, 1, __ATOMIC_RELAXED);
		x->v = v;
	} else
		virt_unmove(x);	/* mapped twice: one copy would miss */
out:
	pthread_mutex_unlock(&virt_lock);
	pthread_mutex_unlock(&vback_lock);
}

void
vmm_virt_unmapping(uint64_t ptr, uint64_t size)
{
	uint64_t at = ptr, end = ptr + size, len, h;
	struct vmm_virt *x;

	if (__atomic_load_n(&vmm_virt_count, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&vback_lock);
	pthread_mutex_lock(&virt_lock);
	/* Whole mappings, back to back, as vmm_unmap walks them. */
	while (at < end && vmm_map_at(at, &len, &h) && len != 0) {
		if (vmm_virt_is(h) && (x = ptrmap_get(&virt_ids, h)) != NULL) {
			if (x->maps > 0)
				x->maps--;
			if (x->v != NULL && x->v->ptr == at)
				virt_unmove(x);
		}
		at += len;
	}
	pthread_mutex_unlock(&virt_lock);
	pthread_mutex_unlock(&vback_lock);
}

void
vmm_virt_pin(uint64_t h)
{
	struct vmm_virt *x;

	pthread_mutex_lock(&vback_lock);
	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_get(&virt_ids, h)) != NULL) {
		x->pinned = 1;
		virt_unmove(x);
	}
	pthread_mutex_unlock(&virt_lock);
	pthread_mutex_unlock(&vback_lock);
}

CUmemGenericAllocationHandle
vmm_virt_drop(uint64_t h)
{
	struct vmm_virt *x;
	CUmemGenericAllocationHandle real = 0;

	pthread_mutex_lock(&vback_lock);
	pthread_mutex_lock(&virt_lock);
	if ((x = ptrmap_del(&virt_ids, h)) != NULL) {
		if (ptrmap_get(&virt_reals, x->real) == x)
			(void)ptrmap_del(&virt_reals, x->real);
		virt_unmove(x);
		real = x->real;
		vmm_virt_count--;
	}
	pthread_mutex_unlock(&virt_lock);
	pthread_mutex_unlock(&vback_lock);
	free(x);
	return real;
}

int
vmm_virt_moves(uint64_t key)
{
	struct vmm_virt *x;
	int r;

	if ((key & VMM_KEY_TAG) == 0 || !vmm_virt_is(key))
		return 0;
	pthread_mutex_lock(&virt_lock);
	x = ptrmap_get(&virt_ids, key & ~VMM_KEY_TAG);
	r = x != NULL && x->v != NULL;
	pthread_mutex_unlock(&virt_lock);
	return r;
}

/*
 * Out (the move thread, vback_lock held, before the driver's memory
 * goes): the access each device had, to be given again; the driver's
 * handle is about to be released, and its value may come back for
 * another allocation.
 */
void
vmm_virt_out(struct vback *v)
{
	struct vmm_virt *x = v->prog;
	unsigned long long flags;
	CUmemLocation loc;
	int d, n = 0;

	(void)REAL_CALL(cuDeviceGetCount, &n);
	memset(&loc, 0, sizeof(loc));
	loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
	for (d = 0; d < n && d < VMM_VIRT_DEVICES; d++) {
		loc.id = d;
		if (REAL_CALL(cuMemGetAccess, &flags, &loc, v->ptr) !=
		    CUDA_SUCCESS)
			flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
		x->access[d] = (uint8_t)flags;
	}
	pthread_mutex_lock(&virt_lock);
	if (ptrmap_get(&virt_reals, x->real) == x)
		(void)ptrmap_del(&virt_reals, x->real);
	x->real = 0;
	pthread_mutex_unlock(&virt_lock);
}

/* The access kept at the move out, given again. */
static CUresult
virt_access(const struct vback *v)
{
	const struct vmm_virt *x = v->prog;
	CUmemAccessDesc acc[VMM_VIRT_DEVICES];
	size_t n = 0;
	int d;

	memset(acc, 0, sizeof(acc));
	for (d = 0; d < VMM_VIRT_DEVICES; d++) {
		if (x->access[d] == CU_MEM_ACCESS_FLAGS_PROT_NONE)
			continue;
		acc[n].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		acc[n].location.id = d;
		acc[n++].flags = (CUmemAccess_flags)x->access[d];
	}
	if (n == 0)
		return CUDA_SUCCESS;
	return REAL_CALL(cuMemSetAccess, v->ptr, v->held, acc, n);
}

/*
 * In (vback_map_new for the program's): new memory as the program made
 * it, at its address, with the access it had; its handle now names it.
 */
CUresult
vmm_virt_map_new(struct vback *v)
{
	struct vmm_virt *x = v->prog;
	CUresult r;

	if ((r = real_cu.cuMemCreate(&v->h, v->held, &x->prop, 0)) !=
	    CUDA_SUCCESS)
		return r;
	if ((r = real_cu.cuMemMap(v->ptr, v->held, 0, v->h, 0)) !=
	    CUDA_SUCCESS)
		goto out_release;
	if ((r = virt_access(v)) != CUDA_SUCCESS)
		goto out_unmap;
	pthread_mutex_lock(&virt_lock);
	if (x->real != 0 && ptrmap_get(&virt_reals, x->real) == x)
		(void)ptrmap_del(&virt_reals, x->real);
	x->real = v->h;
	/* Unfound, a retained handle is the driver's: it still works. */
	(void)ptrmap_put(&virt_reals, v->h, x);
	pthread_mutex_unlock(&virt_lock);
	return CUDA_SUCCESS;
out_unmap:
	(void)real_cu.cuMemUnmap(v->ptr, v->held);
out_release:
	(void)real_cu.cuMemRelease(v->h);
	v->h = 0;
	return r;
}

/*
 * The child's memory is a copy of the parent's and CUDA does not carry
 * over a fork: the handles are kept as they were, the lock made anew.
 */
void
vmm_virt_fork_child(void)
{
	pthread_mutex_init(&virt_lock, NULL);
}
