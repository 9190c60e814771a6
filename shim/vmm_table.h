/*
 * What the shim knows of the virtual memory API (cuMemCreate and friends):
 * which physical allocations it charged, how many handles and mappings
 * keep each alive, and which handle each mapping maps. The driver frees a
 * physical allocation only once it is released and unmapped (CUDA Driver
 * API, "Virtual Memory Management"): so does the charge. Thread-safe.
 */
#ifndef GF_SHIM_VMM_TABLE_H
#define GF_SHIM_VMM_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* The allocation table's key of a charged handle: tagged, never an address. */
#define VMM_KEY_TAG	(1ull << 62)
#define VMM_KEY(h)	((uint64_t)(h) | VMM_KEY_TAG)

/* A charged handle was created. 0, or -1 (out of memory). */
int	vmm_created(uint64_t handle);
/* Another reference to it (cuMemRetainAllocationHandle); unknown: ignored. */
void	vmm_retained(uint64_t handle);
/*
 * A reference is about to be released: 1 if that frees the physical
 * memory (no reference or mapping left; the handle is then forgotten), 0
 * otherwise or when the handle is not charged.
 */
int	vmm_release(uint64_t handle);
/* It was mapped at ptr, size bytes. 0, or -1 (out of memory). */
int	vmm_mapped(uint64_t ptr, uint64_t size, uint64_t handle);
/*
 * The mappings in [ptr, ptr + size) are about to go: the charged handles
 * this leaves with neither reference nor mapping go in freed[] (room for
 * max), and are forgotten. Returns how many.
 */
size_t	vmm_unmap(uint64_t ptr, uint64_t size, uint64_t *freed, size_t max);
/*
 * The charged mapping at ptr: 1 with its size and handle, else 0 (not
 * mapped there, or by a handle not charged).
 */
int	vmm_map_at(uint64_t ptr, uint64_t *size, uint64_t *handle);
/* After fork: the child's mappings are its parent's copy; forget them. */
void	vmm_fork_child(void);

#endif
