/*
 * Pointer attributes (cuPointerGetAttribute, cuPointerGetAttributes): what
 * the driver knows of an address inside any of its allocations.
 */
#include <string.h>

#include "sim.h"

static int
is_device(const struct sim_alloc *a)
{
	return (a->kind & (SIM_MEM_DEVICE | SIM_MEM_MANAGED | SIM_MEM_POOL |
	    SIM_MEM_VMM)) != 0;
}

/*
 * The ordinal of a's device. VMM memory has no context; a pool's may be
 * another device's than the allocating context's.
 */
static int
ordinal_of(const struct sim_alloc *a)
{
	return a->ctx != NULL && (a->phys < 0 || a->ctx->phys == a->phys) ?
	    a->ctx->ordinal : device_ordinal(a->phys);
}

/*
 * One attribute of the allocation a holding ptr. Booleans are written as
 * unsigned int, as the real driver writes them. CUDA_ERROR_INVALID_VALUE
 * for an attribute this kind of memory does not have.
 */
static CUresult
attribute_get(void *data, CUpointer_attribute attr, const struct sim_alloc *a,
    CUdeviceptr ptr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = a->ctx;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = is_device(a) ? CU_MEMORYTYPE_DEVICE :
		    CU_MEMORYTYPE_HOST;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (a->kind & (SIM_MEM_DEVICE | SIM_MEM_POOL | SIM_MEM_VMM))
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)ptr;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		/* cuMemAlloc memory only: VMM and pools are not (ipc.c). */
		*(unsigned int *)data = a->kind == SIM_MEM_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		/* cuMemAlloc memory; VMM memory made so (vmm.c). */
		*(unsigned int *)data = a->kind == SIM_MEM_DEVICE || vmm_rdma(a);
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		*(unsigned int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		*(unsigned long long *)data = a->id;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = a->kind == SIM_MEM_MANAGED;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = ordinal_of(a);
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		*(CUdeviceptr *)data = a->base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		*(size_t *)data = a->size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		*(unsigned int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(CUmemoryPool *)data = a->kind == SIM_MEM_POOL ? a->owner :
		    NULL;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

static unsigned long queries;	/* atomic: the calls below, made so far */

unsigned long
pointer_queries(void)
{
	return __atomic_load_n(&queries, __ATOMIC_RELAXED);
}

CUresult
cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
    CUdeviceptr ptr)
{
	SIM_GATE();
	struct sim_alloc *a;
	CUresult r = sim_ready_out(data);

	__atomic_add_fetch(&queries, 1, __ATOMIC_RELAXED);
	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	a = alloc_find(ptr);
	r = a != NULL ? attribute_get(data, attribute, a, ptr) :
	    CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/* Size of what attribute_get writes, to clear it for unknown memory. */
static size_t
attribute_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		return sizeof(size_t);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		return sizeof(unsigned long long);
	default:
		return sizeof(unsigned int);
	}
}

/*
 * Unlike the singular form, memory the driver does not know is no error:
 * its attributes read as zero (MEMORY_TYPE 0, CONTEXT NULL, ...).
 */
CUresult
cuPointerGetAttributes(unsigned int numAttributes,
    CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
	SIM_GATE();
	struct sim_alloc *a;
	unsigned int i;
	CUresult r = sim_ready();

	__atomic_add_fetch(&queries, 1, __ATOMIC_RELAXED);
	if (r != CUDA_SUCCESS)
		return r;
	if (attributes == NULL || data == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = alloc_find(ptr);
	for (i = 0; i < numAttributes && r == CUDA_SUCCESS; i++) {
		if (data[i] == NULL)
			r = CUDA_ERROR_INVALID_VALUE;
		else if (a == NULL || attribute_get(data[i], attributes[i], a,
		    ptr) != CUDA_SUCCESS)
			memset(data[i], 0, attribute_size(attributes[i]));
	}
	sim_unlock();
	return r;
}
