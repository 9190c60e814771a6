/*
 * The copy engine's inside, shared by its two files and nothing else:
 * vback.c (allocations backed, freed, looked up) and vback_move.c (their
 * contents moved to pinned host memory and back), and vmm_virt.c, which
 * gives it the program's own VMM allocations to move. vback.h says how.
 */
#ifndef GF_SHIM_VBACK_INT_H
#define GF_SHIM_VBACK_INT_H

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <cuda.h>

#include "ptrmap.h"

struct vback {
	uint64_t	ptr;
	uint64_t	size;		/* asked for */
	uint64_t	held;		/* mapped: size rounded up */
	int		dev;
	CUcontext	ctx;		/* current when it was made */
	CUmemGenericAllocationHandle h;	/* 0 while out */
	void		*host;		/* pinned: its contents while out,
					   kept for the next move out while
					   in (vback_host.c), or NULL */
	uint64_t	hostlen;	/* host's size, size or more */
	CUcontext	hostctx;	/* the context host was had in */
	/* Exported for legacy IPC (vback_ipc.c): another process may map
	 * h, so it must stay on the device. ipc_fd: h as a POSIX
	 * descriptor, kept open for importers, valid while exported. */
	int		exported;
	int		ipc_fd;
	uint64_t	ipc_nonce;	/* this export's, in its handles;
					   0 from just before ipc_fd closes */
	struct vmm_virt	*prog;		/* the program's own, mapped once
					   whole (vmm_virt.h), or NULL */
};

extern pthread_mutex_t vback_lock;	/* the map, and a move */
extern struct ptrmap vback_map;		/* ptr -> struct vback */
extern int vback_is_out;		/* contents on the host */

/* Make and map v->h at v->ptr; on failure nothing is left. */
CUresult vback_map_new(struct vback *v);

/*
 * vback_map_new for the program's own (vmm_virt.c): new memory made as
 * the program made it, given the access it had, named by the program's
 * handle; vmm_virt_out keeps that access before its memory goes.
 */
void	vmm_virt_out(struct vback *v);
CUresult vmm_virt_map_new(struct vback *v);

/*
 * Pinned host memory for the moves (vback_host.c), vback_lock held for
 * each: had once and kept, since pinning runs ~25 times slower than the
 * bus (an H200: 12 GiB took 5 s to pin, 0.23 s to copy).
 */
CUresult vback_host_get(struct vback *v, uint64_t *pinned); /* reused or new */
void	vback_host_put(struct vback *v);	/* v->host to the spares */
void	vback_host_trim(void);			/* free the spares */
void	vback_host_drop(struct vback **all, size_t n);	/* free all */
uint64_t vback_host_kept(struct vback **all, size_t n);	/* held now */
void	vback_host_ctx_gone(CUcontext ctx);	/* its memory is gone */

/*
 * Synchronise every context the program made (vback_ctx_made), whatever
 * it owns; one that fails (gone, or faulted) is not the move's to fail
 * for (lock held).
 */
void	vback_ctxs_sync(void);

/* fork(2), in the child: each file's state forgotten (vback_fork_child). */
void	vback_move_fork_child(void);
void	vback_host_fork_child(void);
void	vback_ipc_fork_child(void);

/*
 * Whether v may not move: another process may map its memory (exported
 * by cuIpcGetMemHandle), so a move would part the two. Set under
 * vback_lock, never cleared while v lives: a move holding the lock reads
 * it once.
 */
static inline int
vback_exported(const struct vback *v)
{
	return __atomic_load_n(&v->exported, __ATOMIC_ACQUIRE);
}

/* Close what v's export keeps open (vback_free). */
static inline void
vback_ipc_forget(struct vback *v)
{
	if (v->exported) {
		/* A handle read from now on is stale (vback_ipc_fetch). */
		__atomic_store_n(&v->ipc_nonce, 0, __ATOMIC_SEQ_CST);
		(void)close(v->ipc_fd);
	}
}

#endif
