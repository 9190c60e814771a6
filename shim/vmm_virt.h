/*
 * Virtual handles (issue 21): while the copy engine is on, cuMemCreate of
 * charged device memory gives the program a handle of the shim's, which
 * names the driver's handle of the moment. A move releases the driver's
 * memory, and with it the driver's handle, whose value the driver may
 * hand out again; the program's handle stays the same, and stays its own.
 * Such an allocation mapped once, whole, is moved as the shim's own
 * (vback_int.h: struct vback's prog); one mapped otherwise, or pinned
 * (vmm_virt_pin), stays on the device.
 *
 * The driver holds one reference of the shim's per virtual handle, and
 * its mappings: the program's retains and releases are counted here, and
 * the driver's handle is released once no reference nor mapping is left
 * (vmm_table.h says when). Thread-safe; the lock is taken after
 * vback_lock, never before.
 */
#ifndef GF_SHIM_VMM_VIRT_H
#define GF_SHIM_VMM_VIRT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* A virtual handle: no address in user space has bit 63 set. */
#define VMM_VIRT_TAG	(1ull << 63)

/* Virtual handles alive now: 0 spares an unmap the walk. */
extern size_t vmm_virt_count;

static inline int
vmm_virt_is(uint64_t h)
{
	return (h & VMM_VIRT_TAG) != 0;
}

/*
 * A virtual handle for the driver's real, size bytes made with prop; 0 when
 * none can be had (out of memory): the program then gets real.
 */
uint64_t vmm_virt_new(CUmemGenericAllocationHandle real, uint64_t size,
	    const CUmemAllocationProp *prop);

/*
 * The driver's handle for h: h itself when it is not virtual, 0 when it
 * is one that is gone (the caller answers CUDA_ERROR_INVALID_VALUE).
 */
CUmemGenericAllocationHandle vmm_virt_real(uint64_t h);

/* The program releases a reference to h: 0, or -1 when it holds none. */
int	vmm_virt_unref(uint64_t h);

/*
 * The driver answered cuMemRetainAllocationHandle with real: the virtual
 * handle it stands for (the driver's extra reference dropped, counted
 * here instead), or real when it is not the shim's.
 */
uint64_t vmm_virt_retained(CUmemGenericAllocationHandle real);

/* The driver mapped h at ptr, size bytes of it from offset. */
void	vmm_virt_mapped(uint64_t h, uint64_t ptr, uint64_t size,
	    uint64_t offset);

/* The mappings in [ptr, ptr + size) are about to go. */
void	vmm_virt_unmapping(uint64_t ptr, uint64_t size);

/*
 * h is pinned to the device from now on: exported to another process, or
 * bound by the driver where the shim does not follow (a sparse array's
 * tiles, a multicast object), it is never moved again, mapped or not.
 */
void	vmm_virt_pin(uint64_t h);

/*
 * h's memory is to be freed (no reference nor mapping is left): h is
 * forgotten. Returns the driver's handle, for the caller to release.
 */
CUmemGenericAllocationHandle vmm_virt_drop(uint64_t h);

/*
 * Whether the allocation table's key (VMM_KEY of vmm_table.h) names a
 * virtual handle that moves with the others (vback_lock held).
 */
int	vmm_virt_moves(uint64_t key);

/* After fork: the parent's handles are not the child's. */
void	vmm_virt_fork_child(void);

#endif
