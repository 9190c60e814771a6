/*
 * The copy engine's side in the process (swap_engine = copy, issue 21):
 * plain allocations (cuMemAlloc, cuMemAllocPitch) of at least one granule
 * of the driver's virtual memory management are backed by it -- an
 * address range reserved, physical memory created and mapped there -- so
 * that the process can move them to pinned host memory at bus speed,
 * give the device its memory back, and later map new memory at the same
 * addresses and copy them back. Smaller allocations, and every other kind,
 * stay as the driver made them, on the device, counted.
 *
 * A move is asked for by the daemon (MOVE), which has marked the process
 * swapped out first, so that its hooked calls wait at their gates; the
 * move runs on a thread of its own and is answered with MOVED.
 */
#ifndef GF_SHIM_VBACK_H
#define GF_SHIM_VBACK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "activity.h"
#include "gpufrac/activity.h"
#include "gpufrac/proto.h"
#include "real.h"

/*
 * fork(2), run by init.c's handlers: prepare waits for a move under way
 * (it holds vback_lock); the child, a new client that owns none of its
 * parent's device memory, starts the engine afresh.
 */
void	vback_fork_prepare(void);
void	vback_fork_parent(void);
void	vback_fork_child(void);

/* Allocations backed now (vback.c's): 0 spares a free the lookup. */
extern size_t vback_count;

/*
 * Whether the daemon swaps this process with the copy engine: inline, a
 * load, as the hooks' fast path asks it of every allocation.
 */
static inline int
vback_engine(void)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);

	return __atomic_load_n(&p->engine, __ATOMIC_RELAXED) ==
	    GF_ENGINE_COPY;
}

/*
 * What an allocation of size bytes on device ordinal dev holds once
 * backed for the copy engine (size rounded up to the granularity), or 0
 * when it is not to be: the daemon does not use the copy engine for this
 * process, or size is below one granule.
 */
uint64_t vback_size(int dev, uint64_t size);

/*
 * Back an allocation of size bytes (held: vback_size's answer) on dev in
 * the current context. Returns the driver's answer; on success *dptr.
 */
CUresult vback_alloc(CUdeviceptr *dptr, uint64_t size, uint64_t held,
	    int dev);

/*
 * cuMemAllocPitch for the copy engine: the driver's pitch (asked of it),
 * backed when pitch * Height is one granule or more. *held is what the
 * allocation holds.
 */
CUresult vback_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
	    size_t height, unsigned elem, int dev, uint64_t *held);

/* Free p, backed or the driver's own (the real_free of client_free). */
CUresult vback_free(CUdeviceptr p);

/*
 * Free p if it is backed: 1, else 0 (and the driver is not asked). For
 * an ended context, whose own allocations the driver freed but not the
 * backed ones: VMM memory belongs to no context.
 */
int	vback_drop(CUdeviceptr p);

/* The real free for client_free: vback_free only while any is backed. */
static inline CUresult
(*vback_free_fn(void))(CUdeviceptr)
{
	return __atomic_load_n(&vback_count, __ATOMIC_RELAXED) != 0 ?
	    vback_free : real_cu.cuMemFree_v2;
}

/*
 * A backed allocation starting at base: 1 with the size the program
 * asked for in *size (the mapping is rounded up) and the context current
 * when it was made, which the driver does not know of VMM memory (its
 * CU_POINTER_ATTRIBUTE_CONTEXT is NULL) and would know of a cuMemAlloc;
 * else 0.
 */
int	vback_shown(CUdeviceptr base, uint64_t *size, CUcontext *ctx);

/*
 * vback_shown for the allocation holding p, its start or inside it (one
 * mapping each: the driver's range of p starts where it does).
 */
int	vback_holding(CUdeviceptr p, uint64_t *size, CUcontext *ctx);

/*
 * Append the addresses of the allocations backed in ctx to *keys, as
 * ctx_array_list does (ctx_table.h). 0, or -1 (no memory).
 */
int	vback_ctx_list(CUcontext ctx, uint64_t **keys, size_t *n,
	    size_t *cap);

/*
 * A context is about to end (vback_ctx_ending), then has (gone) or not:
 * the engine's lock is held from before the driver's call until after,
 * so that no move, nor a GF_SWAP_DROP, frees pinned memory the driver
 * freed with the context (a double free, issue 33). Gone, the engine
 * forgets what it kept there (vback_host.c) and moves the program's own
 * VMM memory made in it by its device's primary context.
 */
void	vback_ctx_ending(void);
void	vback_ctx_gone(CUcontext ctx, int gone);

/*
 * The program made (or retained) ctx: a move out synchronises it, with
 * every other context the program made, before it copies, for work
 * queued there may write backed memory (a peer copy, issue 33).
 */
void	vback_ctx_made(CUcontext ctx);

/*
 * Whether backed memory has legacy IPC (vback_ipc.h): its memory is made
 * exportable as a POSIX descriptor, unless the driver refused that.
 */
int	vback_ipc_capable(void);

/*
 * MOVE id from the daemon (watcher thread, client lock held): queue it.
 * A move out gives the device's memory back only if the daemon still
 * waits for it then (activity.h, GF_SWAPPED_COMMITTED).
 */
void	vback_request(uint32_t direction, uint32_t id);

/*
 * Whether the process's memory is out; and, with no daemon to ask, bring
 * it back here (0, or -1: it stays out).
 */
int	vback_out(void);
int	vback_restore(void);

#endif
