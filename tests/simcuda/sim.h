/*
 * The simulated CUDA driver's internal interface: what its files share.
 * Nothing here is exported (libcuda.map exports cu* only). Unless a
 * comment says otherwise, functions that touch process-local tables expect
 * the caller to hold sim_lock().
 */
#ifndef SIMCUDA_SIM_H
#define SIMCUDA_SIM_H

/* Lets cuda.h declare the old and the versioned ABIs side by side. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * A 12.8 driver: 13.0 added cuCtxGetDevice_v2 and cuCtxSynchronize_v2 with
 * extra arguments, and clients that probe "<name>_v2" by dlsym (numba
 * 0.56) then call them with too few; the real 13.0 driver breaks them too.
 */
#define SIM_DRIVER_VERSION	12080
#define SIM_MAX_DEVICES		16
/*
 * Device allocations are charged in whole 512-byte granules: the real
 * driver's smallest allocation alignment (its true granularity is coarser
 * and size-dependent, which no client may rely on).
 */
#define SIM_GRANULE		512

/* init.c */
CUresult	sim_ready(void);	/* CUDA_ERROR_NOT_INITIALIZED before cuInit */
/* The prologue of a query: sim_ready(), then CUDA_ERROR_INVALID_VALUE when
 * out, where the answer goes, is NULL. */
CUresult	sim_ready_out(const void *out);
void		sim_lock(void);		/* the process-local lock */
void		sim_unlock(void);
uint64_t	sim_context_bytes(void);

/* state.c: device memory accounting shared by processes */
int		state_attach(const char *name, unsigned ndev, const uint64_t *cap);
unsigned	state_ndev(void);
uint64_t	state_capacity(int phys);
int		state_charge(int phys, uint64_t bytes);	/* 0, or -1: no room */
void		state_uncharge(int phys, uint64_t bytes);
void		state_meminfo(int phys, uint64_t *used, uint64_t *total);
/*
 * memlimits.c: the driver's memory limits per cgroup (r615), for the
 * simulated NVML. meminfo_self: state_meminfo as this process sees it,
 * under its nearest limited cgroup's hard limit (cuMemGetInfo). set:
 * soft and hard on phys for the cgroup directory path (soft 0 and hard
 * UINT64_MAX clear it); get: them and what the cgroup's processes hold.
 * 0, or -ENOENT (no such directory; get: never limited), -EINVAL, -ENOSPC
 * (too many limited cgroups), -EIO. Each takes the lock itself.
 */
void		state_meminfo_self(int phys, uint64_t *used, uint64_t *total);
int		limits_set(int phys, const char *path, uint64_t soft,
		    uint64_t hard);
int		limits_get(int phys, const char *path, uint64_t *soft,
		    uint64_t *hard, uint64_t *used);
void		state_forget(void);
void		state_join(void);	/* at cuInit: take this process's slot */
/*
 * share.c: VMM allocations shared between processes (vmm.c), by the
 * device and inode of their memfd. open: the caller, which has charged
 * bytes on phys, exports them; the charge now stays until every holder
 * has let go (or died). join: the caller, not charged, holds them too.
 * Both return the share's index; open -1 when the table is full, join -1
 * when dev/ino is no exported allocation and -2 when it is full. leave:
 * the caller lets go. Each takes the lock itself.
 */
int		state_share_open(uint64_t dev, uint64_t ino, int phys,
		    uint64_t bytes);
int		state_share_join(uint64_t dev, uint64_t ino, int *phys,
		    uint64_t *bytes);
void		state_share_leave(int share);
/*
 * The live processes holding memory on phys (contexts included), for the
 * simulated NVML: the first max of them into pids[] and bytes[]. Returns
 * how many there are, which may exceed max, or -1. Takes the lock itself.
 */
int		state_procs(int phys, pid_t *pids, uint64_t *bytes, int max);

/*
 * gate.c: the gate every driver call of a process passes (DESIGN.md §4
 * host swap): SIM_GATE() first in an entry point counts the call in
 * flight until it returns, and waits first while another process holds
 * the process locked (cuCheckpointProcessLock). Calls made during a call
 * (a host callback's) are part of it. Not gated: cuInit,
 * cuDriverGetVersion, cuGetErrorName, cuGetErrorString, cuGetProcAddress,
 * cuGetExportTable and the cuCheckpointProcess* calls, which act on other
 * processes.
 */
void		*gate_enter(void);
void		gate_leave(void **entered);

/* helper.c: the driver's own thread, started by cuInit if asked for. */
void		helper_start(void);

/*
 * memfree.c: a memory file closed (its pages freed) by a thread of the
 * driver's own, not the caller; fd is taken over. Called with the lock
 * held (the fork handlers take the two locks in that order).
 */
void		memfree_later(int fd);
void		memfree_fork_prepare(void);
void		memfree_fork_parent(void);
void		memfree_fork_child(void);
#define SIM_GATE() \
	void *sim_gate_ __attribute__((cleanup(gate_leave), unused)) = \
	    gate_enter()

/*
 * ckstate.c: the checkpoint operations on the initialised process pid,
 * for checkpoint.c: CUDA_ERROR_INVALID_VALUE if there is none,
 * CUDA_ERROR_ILLEGAL_STATE if it is in the wrong state.
 */
CUresult	state_ck_lock(pid_t pid, unsigned timeout_ms);
CUresult	state_ck_held(pid_t pid, uint64_t *bytes);	/* if LOCKED */
CUresult	state_ck_checkpoint(pid_t pid);
CUresult	state_ck_restore(pid_t pid, uint64_t *bytes);	/* charged */
CUresult	state_ck_unlock(pid_t pid);
CUresult	state_ck_state(pid_t pid, CUprocessState *state);
int		state_ck_known(pid_t pid);

/* device.c */
CUresult	device_init(void);
int		device_phys(CUdevice dev);	/* physical index, or -1 */
CUdevice	device_ordinal(int phys);	/* its ordinal here, or -1 */
/* SIMCUDA_DEVICES and SIMCUDA_STATE, without CUDA_VISIBLE_DEVICES (for
 * the simulated NVML): state_attach(); 0 or -1. */
int		device_attach(void);
/* Identity by physical index, as cuDeviceGetName, cuDeviceGetUuid (in
 * nvidia-smi's notation) and cuDeviceGetPCIBusId give it. */
void		device_name(int phys, char *buf, size_t size);
void		device_uuid_string(int phys, char *buf, size_t size);
unsigned	device_pci_bus(int phys);	/* domain 0, device 0 */
/* The prologue of a call on dev: sim_ready(), then
 * CUDA_ERROR_INVALID_DEVICE for an ordinal this process does not see. */
CUresult	device_check(CUdevice dev);

/* context.c */
struct CUctx_st {
	CUdevice	ordinal;
	int		phys;
	unsigned	flags;
	int		primary;	/* the device's primary context */
	int		refcount;	/* primary: outstanding retains */
	int		active;		/* holds its overhead charge */
	int		destroyed;	/* not primary: cuCtxDestroy was called */
	int		usable;		/* atomic: what ctx_current needs, read
					   without the lock (ctx_publish) */
	unsigned long long id;
	struct CUctx_st	*next;		/* every context made, for handle checks */
};
/* The calling thread's usable current context; takes the lock itself. */
CUresult	ctx_current(struct CUctx_st **out);
/* Whether ctx is a live context handle; the lock is held. */
int		ctx_live(CUcontext ctx);
void		ctx_forget(void);

/* pointer.c: cuPointerGetAttribute(s) calls made so far (private_table.h) */
unsigned long	pointer_queries(void);

/* hold.c: cuCtxDestroy held for a test (private_table.h) */
void		hold_ctx_end(int on);
int		hold_ctx_end_held(void);
void		hold_ctx_end_wait(void);	/* in it, before it acts */

/* alloc.c: the process's live allocations. Kinds are bits: a set of
 * kinds is their OR. */
enum {
	SIM_MEM_DEVICE = 1,	/* cuMemAlloc, cuMemAllocPitch */
	SIM_MEM_MANAGED = 2,	/* cuMemAllocManaged */
	SIM_MEM_HOST = 4,	/* cuMemAllocHost, cuMemHostAlloc */
	SIM_MEM_REGISTERED = 8,	/* cuMemHostRegister: caller's memory */
	SIM_MEM_POOL = 16,	/* cuMemAllocAsync: part of a pool's chunk */
	SIM_MEM_VMM = 32,	/* cuMemMap: a mapping of a cuMemCreate handle */
};

struct sim_alloc {
	uint64_t	base;
	size_t		size;		/* as requested: what range queries say */
	uint64_t	charged;	/* device bytes charged, 0 for host memory */
	int		kind;		/* SIM_MEM_* */
	int		phys;		/* device charged, or -1 */
	unsigned	flags;		/* host alloc/register or attach flags */
	struct CUctx_st	*ctx;
	unsigned long long id;		/* CU_POINTER_ATTRIBUTE_BUFFER_ID */
	size_t		maplen;		/* mmap length, 0 if from aligned_alloc */
	void		*owner;		/* POOL: its CUmemoryPool; VMM: its
					 * struct vmm_map (vmm.c) */
};

/* Backing memory aligned to align (like cuMemAlloc's, not zeroed); NULL
 * when out of memory. */
void		*backing_alloc(size_t bytes, size_t align, size_t *maplen);
void		backing_free(void *p, size_t maplen);

/* Take ownership of a; 0, or -1 when its range overlaps a live one. */
int		alloc_insert(struct sim_alloc *a);
struct sim_alloc *alloc_at(uint64_t base);	/* by base address */
struct sim_alloc *alloc_find(uint64_t addr);	/* containing addr */
/* One allocation overlapping [addr, addr + size), or NULL. */
struct sim_alloc *alloc_find_range(uint64_t addr, uint64_t size);
/* Unlink, uncharge and free a with its backing memory; pool memory goes
 * back to its pool, a VMM mapping's memory is vmm.c's. */
void		alloc_destroy(struct sim_alloc *a);
/*
 * The free calls: destroy the allocation based at base if its kind is one
 * of kinds, else return bad. Checks sim_ready() and takes the lock itself.
 */
CUresult	alloc_free(uint64_t base, int kinds, CUresult bad);
void		alloc_release_ctx(struct CUctx_st *ctx);
unsigned long long alloc_next_id(void);
void		alloc_forget(void);

/*
 * handle.c: streams and events, objects that begin with struct sim_handle,
 * live while their address is a key of their ptrmap. Unless a comment
 * says otherwise the lock is held.
 */
struct ptrmap;
struct sim_handle {
	struct CUctx_st	*ctx;		/* made in it, goes with it */
};
/* Add h, filled in; on failure h is freed. Takes the lock itself. */
CUresult	handle_add(struct ptrmap *m, void *h);
int		handle_live(const struct ptrmap *m, const void *h);
/* Free h if live, else CUDA_ERROR_INVALID_HANDLE; checks sim_ready() and
 * takes the lock itself. */
CUresult	handle_destroy(struct ptrmap *m, void *h);
void		handle_release_ctx(struct ptrmap *m, struct CUctx_st *ctx);
void		handle_forget(struct ptrmap *m);	/* forked child */

/* stream.c, event.c */
CUresult	stream_check(CUstream s);	/* CUDA_ERROR_INVALID_HANDLE */
/* The stream a _ptsz entry point runs on: s, or for NULL the per-thread
 * default stream. */
CUstream	stream_ptsz(CUstream s);
void		stream_release_ctx(struct CUctx_st *ctx);
void		stream_forget(void);
CUresult	event_check(CUevent e);		/* CUDA_ERROR_INVALID_HANDLE */
void		event_release_ctx(struct CUctx_st *ctx);
void		event_forget(void);

/*
 * pool.c: pool_put gives the pool allocation a back to its pool (from
 * alloc_destroy, the lock held); pool_sync is a synchronisation
 * (cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize), at which
 * pools release memory down to their threshold; it takes the lock.
 */
void		pool_put(struct sim_alloc *a);
void		pool_sync(void);
void		pool_forget(void);

/*
 * vmm.c: the CUmemAccess_flags device phys has on the VMM mapping a
 * (SIM_MEM_VMM); the lock is held.
 */
unsigned	vmm_access(const struct sim_alloc *a, int phys);
/* Whether a is a VMM mapping of memory made GPUDirect RDMA capable. */
int		vmm_rdma(const struct sim_alloc *a);
void		vmm_forget(void);

/* array.c: arrays and mipmapped arrays go with their context. */
void		array_release_ctx(struct CUctx_st *ctx);	/* lock held */
void		array_forget(void);

/*
 * copy.c, for graph.c's memset nodes: whether height rows of width
 * elements of size bytes, pitch apart from dst, are device memory that
 * device phys may write (the lock is held); then write them with value.
 */
int		set_2d_ok(int phys, uint64_t dst, size_t pitch, unsigned size,
		    size_t width, size_t height);
void		set_2d_write(uint64_t dst, size_t pitch, unsigned value,
		    unsigned size, size_t width, size_t height);

/* graph.c: a forked child's graphs are its parent's. */
void		graph_forget(void);

/* checkpoint.c: SIMCUDA_NO_CHECKPOINT hides the cuCheckpoint* calls. */
int		checkpoint_hidden(const char *symbol);

/*
 * bus.c: the rates, in bytes/s (0: no time at all), read at cuInit: the
 * checkpoint API's (SIMCUDA_CKPT_GBPS; restores at SIMCUDA_CKPT_IN_GBPS
 * where set), pinned host<->device copies'
 * (SIMCUDA_COPY_GBPS) and pinning host memory (SIMCUDA_PIN_GBPS).
 * bus_start notes when a call's work begins, before the simulator does
 * it; bus_move then blocks until bytes at rate have taken their time
 * since then, so a call takes the longer of its work and the model's.
 * bus_fail_nth (SIMCUDA_FAIL_BUS_COPY, 0: none) is the copy across the
 * bus that fails; bus_copy_fails counts one and says if it is that one.
 */
extern uint64_t	bus_ckpt_rate;
extern uint64_t	bus_ckpt_in_rate;
extern uint64_t	bus_copy_rate;
extern uint64_t	bus_pin_rate;
extern uint64_t	bus_fail_nth;
int		bus_copy_fails(void);
void		bus_rate_parse(void);
void		bus_start(struct timespec *start);
void		bus_move(const struct timespec *start, uint64_t bytes,
		    uint64_t rate);

/*
 * async.c: SIMCUDA_ASYNC. async_stream: whether work on s runs later;
 * async_copy queues a copy checked already (copy.c's sides); async_sync
 * and async_sync_ctx wait for a stream's or a context's, returning a
 * fault met meanwhile; async_busy: work is queued on s. copy_now (copy.c)
 * does one copy if its memory is still there: 1, else 0.
 */
extern int	async_on;
void		async_parse(void);
int		async_stream(CUstream s);
CUresult	async_copy(CUstream s, struct CUctx_st *ctx, uint64_t dst,
		    int dst_side, uint64_t src, int src_side, size_t n, int bus);
CUresult	async_sync(CUstream s);
CUresult	async_sync_ctx(struct CUctx_st *ctx);
int		async_busy(CUstream s);
/* Fork (init.c's handlers, after sim_lock): the child has no queues. */
void		async_fork_prepare(void);
void		async_fork_parent(void);
void		async_fork_child(void);
int		copy_now(uint64_t dst, int dst_side, uint64_t src,
		    int src_side, size_t n, int phys);

/* procaddr_table.c */
int		procaddr_table_check(void);

#endif
