/*
 * Virtual memory hooks (issue 5): cuMemCreate charges the physical
 * allocation on the device its properties name; the charge is returned
 * when the driver frees it, once every handle is released and every
 * mapping unmapped (vmm_table.h). Reserving address space, mapping and
 * setting access charge nothing; an imported handle is the exporter's
 * memory and is not charged to the importer.
 */
#include <stdint.h>

#include "activity.h"
#include "client.h"
#include "gpufrac/proto.h"
#include "hooks.h"
#include "real.h"
#include "vback.h"
#include "vmm_table.h"

#define VMM_FREED_MAX	64	/* handles one cuMemUnmap may free */

/* The device of a device allocation, as this process numbers them; -1. */
static int
vmm_device(const CUmemAllocationProp *prop)
{
	if (prop == NULL || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return -1;	/* host memory: no device charge */
	return prop->location.id;
}

static CUresult
vmm_create(CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct client_ticket t;
	int dev = vmm_device(prop);
	CUresult r;

	if (handle == NULL || size == 0 || dev < 0)
		return REAL_CALL(cuMemCreate, handle, size, prop, flags);
	if ((r = client_reserve(dev, size, GF_KIND_VMM, &t)) != CUDA_SUCCESS)
		return r;
	CLIENT_DRIVER_CALL(r, &t, REAL_CALL(cuMemCreate, handle, size, prop,
	    flags));
	if (r != CUDA_SUCCESS) {
		client_rollback(&t);
		return r;
	}
	if (t.dev < 0)
		return CUDA_SUCCESS;	/* not accounted: nothing to track */
	if (vmm_created(*handle) == 0 &&
	    client_commit(&t, VMM_KEY(*handle), size) == 0)
		return CUDA_SUCCESS;
	/* Memory the shim cannot record would be charged for ever. */
	(void)vmm_release(*handle);
	REAL_CALL(cuMemRelease, *handle);
	client_rollback(&t);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return hook_refused() ? CUDA_ERROR_OUT_OF_MEMORY :
		    REAL_CALL(cuMemCreate, handle, size, prop,
		    flags);
	g = activity_enter();
	r = vmm_create(handle, size, prop, flags);
	activity_leave(g);
	hook_leave();
	return r;
}

static CUresult
release_run(void *arg)
{
	return REAL_CALL(cuMemRelease, *(CUmemGenericAllocationHandle *)arg);
}

CUresult
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemRelease, handle);
	g = activity_enter();
	if (vmm_release(handle))
		r = client_release(VMM_KEY(handle), release_run, &handle);
	else
		r = REAL_CALL(cuMemRelease, handle);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct gf_activity *g;
	uint64_t size;
	CUcontext ctx;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemRetainAllocationHandle, handle, addr);
	g = activity_enter();
	r = REAL_CALL(cuMemRetainAllocationHandle, handle, addr);
	if (r == CUDA_SUCCESS && handle != NULL &&
	    vback_holding((CUdeviceptr)(uintptr_t)addr, &size, &ctx)) {
		/*
		 * Memory the copy engine backs is a cuMemAlloc to the program,
		 * which has no handle (NCCL asks this to tell VMM memory from
		 * the rest); one held would keep it on the device when out.
		 */
		(void)REAL_CALL(cuMemRelease, *handle);
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (r == CUDA_SUCCESS && handle != NULL)
		vmm_retained(*handle);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemMap, ptr, size, offset, handle, flags);
	g = activity_enter();
	r = REAL_CALL(cuMemMap, ptr, size, offset, handle, flags);
	/* Untracked, a mapping would let the charge go while it is used. */
	if (r == CUDA_SUCCESS && vmm_mapped(ptr, size, handle) < 0) {
		REAL_CALL(cuMemUnmap, ptr, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	activity_leave(g);
	hook_leave();
	return r;
}

struct unmap_call {
	CUdeviceptr	 ptr;
	size_t		 size;
};

static CUresult
unmap_run(void *arg)
{
	const struct unmap_call *u = arg;

	return REAL_CALL(cuMemUnmap, u->ptr, u->size);
}

CUresult
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct unmap_call u = { ptr, size };
	uint64_t freed[VMM_FREED_MAX];
	struct gf_activity *g;
	size_t i, n;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemUnmap, ptr, size);
	g = activity_enter();
	n = vmm_unmap(ptr, size, freed, VMM_FREED_MAX);
	for (i = 0; i < n; i++)
		freed[i] = VMM_KEY(freed[i]);
	r = client_release_keys(freed, n, unmap_run, &u);
	activity_leave(g);
	hook_leave();
	return r;
}
