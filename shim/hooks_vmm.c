/*
 * Virtual memory hooks (issue 5): cuMemCreate charges the physical
 * allocation on the device its properties name; the charge is returned
 * when the driver frees it, once every handle is released and every
 * mapping unmapped (vmm_table.h). Reserving address space, mapping and
 * setting access charge nothing; an imported handle is the exporter's
 * memory and is not charged to the importer. With the copy engine on, the
 * program holds virtual handles (vmm_virt.h), which every hook that takes
 * a handle turns into the driver's.
 */
#include <stdint.h>

#include "activity.h"
#include "client.h"
#include "gpufrac/proto.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "real.h"
#include "vback.h"
#include "vmm_table.h"
#include "vmm_virt.h"

#define VMM_FREED_MAX	64	/* handles one cuMemUnmap may free */

/*
 * The driver's handle for h: h itself unless virtual (one test of a bit),
 * 0 for a virtual handle that is gone, refused as the driver refuses a
 * released one. Asked after activity_enter: while the process is out,
 * its memory has no driver's handle.
 */
static inline CUmemGenericAllocationHandle
vmm_real(CUmemGenericAllocationHandle h)
{
	return __builtin_expect(vmm_virt_is(h), 0) ? vmm_virt_real(h) : h;
}

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
	CUmemGenericAllocationHandle real;
	struct client_ticket t;
	int dev = vmm_device(prop);
	uint64_t id;
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
	/* Charged under the handle the program holds, across moves too. */
	real = *handle;
	if (vback_engine() && (id = vmm_virt_new(real, size, prop)) != 0)
		*handle = id;
	if (vmm_created(*handle) == 0 &&
	    client_commit(&t, VMM_KEY(*handle), size) == 0)
		return CUDA_SUCCESS;
	/* Memory the shim cannot record would be charged for ever. */
	(void)vmm_release(*handle);
	if (vmm_virt_is(*handle))
		(void)vmm_virt_drop(*handle);
	REAL_CALL(cuMemRelease, real);
	*handle = real;
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

/* The driver's handle goes with the program's last reference. */
static CUresult
release_virt_run(void *arg)
{
	return REAL_CALL(cuMemRelease,
	    vmm_virt_drop(*(CUmemGenericAllocationHandle *)arg));
}

/* A virtual handle: the driver is told only when the memory goes. */
static CUresult
release_virt(CUmemGenericAllocationHandle handle)
{
	if (vmm_virt_unref(handle) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vmm_release(handle))
		return CUDA_SUCCESS;	/* still mapped */
	return client_release(VMM_KEY(handle), release_virt_run, &handle);
}

CUresult
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemRelease, vmm_real(handle));
	g = activity_enter();
	if (vmm_virt_is(handle))
		r = release_virt(handle);
	else if (vmm_release(handle))
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
	} else if (r == CUDA_SUCCESS && handle != NULL) {
		*handle = vmm_virt_retained(*handle);
		vmm_retained(*handle);
	}
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	CUmemGenericAllocationHandle real;
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemMap, ptr, size, offset, vmm_real(handle),
		    flags);
	g = activity_enter();
	if ((real = vmm_real(handle)) == 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = REAL_CALL(cuMemMap, ptr, size, offset, real, flags);
	/* Untracked, a mapping would let the charge go while it is used. */
	if (r == CUDA_SUCCESS && vmm_mapped(ptr, size, handle) < 0) {
		REAL_CALL(cuMemUnmap, ptr, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (r == CUDA_SUCCESS && vmm_virt_is(handle))
		vmm_virt_mapped(handle, ptr, size, offset);
	activity_leave(g);
	hook_leave();
	return r;
}

struct unmap_call {
	CUdeviceptr	 ptr;
	size_t		 size;
	const uint64_t	*virt;		/* virtual handles freed with it */
	size_t		 nvirt;
};

static CUresult
unmap_run(void *arg)
{
	const struct unmap_call *u = arg;
	CUmemGenericAllocationHandle real;
	CUresult r;
	size_t i;

	r = REAL_CALL(cuMemUnmap, u->ptr, u->size);
	for (i = 0; i < u->nvirt; i++)
		if ((real = vmm_virt_drop(u->virt[i])) != 0 &&
		    r == CUDA_SUCCESS)
			(void)REAL_CALL(cuMemRelease, real);
	return r;
}

CUresult
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	uint64_t freed[VMM_FREED_MAX], virt[VMM_FREED_MAX];
	struct unmap_call u = { ptr, size, virt, 0 };
	struct gf_activity *g;
	size_t i, n;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemUnmap, ptr, size);
	g = activity_enter();
	vmm_virt_unmapping(ptr, size);
	n = vmm_unmap(ptr, size, freed, VMM_FREED_MAX);
	for (i = 0; i < n; i++) {
		if (vmm_virt_is(freed[i]))
			virt[u.nvirt++] = freed[i];
		freed[i] = VMM_KEY(freed[i]);
	}
	r = client_release_keys(freed, n, unmap_run, &u);
	activity_leave(g);
	hook_leave();
	return r;
}

/* The memory leaves this process: it cannot move (issue 21). */
CUresult
cuMemExportToShareableHandle(void *shareableHandle,
    CUmemGenericAllocationHandle handle, CUmemAllocationHandleType handleType,
    unsigned long long flags)
{
	CUmemGenericAllocationHandle real;
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemExportToShareableHandle, shareableHandle,
		    vmm_real(handle), handleType, flags);
	g = activity_enter();
	if ((real = vmm_real(handle)) == 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = REAL_CALL(cuMemExportToShareableHandle, shareableHandle,
		    real, handleType, flags);
	if (r == CUDA_SUCCESS && vmm_virt_is(handle))
		vmm_virt_pin(handle);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
    CUmemGenericAllocationHandle handle)
{
	CUmemGenericAllocationHandle real;
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMemGetAllocationPropertiesFromHandle, prop,
		    vmm_real(handle));
	g = activity_enter();
	if ((real = vmm_real(handle)) == 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = REAL_CALL(cuMemGetAllocationPropertiesFromHandle, prop,
		    real);
	activity_leave(g);
	hook_leave();
	return r;
}
