/*
 * The daemon client: the process's one connection to gpufracd, the
 * accounting that rests on it (reserve, commit, roll back, free), the
 * per-device view a program is shown, local enforcement while no daemon
 * has let the process in (once one has, a request waits for it to come
 * back instead: client_rejoin.c), reconnection and fork safety.
 *
 * Thread-safe. Requests from several threads share the connection: replies
 * are matched by seq, and no lock is held while a thread waits for its
 * reply, so a reservation the daemon queues (WAIT) holds back only the
 * thread that asked. Every reply comes within 5 s (a queued reservation:
 * within the wait the daemon announced, plus 5 s) or the daemon is taken
 * to be unreachable. What the daemon says unasked (a new limit) is applied
 * as it arrives. Device ordinals are as this process sees them.
 */
#ifndef GF_SHIM_CLIENT_H
#define GF_SHIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cuda.h>

#include "gpufrac/proto.h"

/* One reservation between client_reserve and its commit or rollback. */
struct client_ticket {
	int		dev;		/* -1: not accounted, nothing to settle */
	uint32_t	kind;		/* GF_KIND_* */
	uint64_t	size;		/* bytes reserved */
	unsigned	gen;		/* connection of its RESERVE; 0: local */
	unsigned	refusals;	/* times the driver refused it */
};

/*
 * What a program is shown of one device, on every path (cuMemGetInfo,
 * cuDeviceTotalMem, NVML): the total is its limit, no more than the
 * device's shareable bytes; free is the least of what its limit, its
 * group's shared limit and the device (memory gpufrac does not know
 * included) leave it, its lease's unused part counted free, as the daemon
 * last said (view.h: at most VIEW_PERIOD_MS stale). Callers keep free
 * within what the driver says is free.
 */
struct client_view {
	uint64_t	total;
	uint64_t	free;		/* what one allocation may take now */
};

/* Once, before any other call (init.c). Contacts no one. */
void	client_init(void);

/*
 * fork(2), run by init.c's handlers: prepare takes the client's locks
 * (the rejoin lock aside: a restore under way is the parent's), parent
 * lets them go; in the child, a new client, the parent's connection is
 * closed (never shut down, which would cut the parent off) and the client
 * starts afresh, connecting on its first CUDA use.
 */
void	client_fork_prepare(void);
void	client_fork_parent(void);
void	client_fork_child(void);

/*
 * Charge size bytes of kind on device dev before the driver allocates them.
 * The first call of the process connects to the daemon. May block while
 * the daemon queues the request, or while a lost daemon is waited for
 * (GPUFRAC_REJOIN_TIMEOUT at most). Returns
 * CUDA_SUCCESS with *t to settle (t->dev < 0: the memory is not accounted,
 * e.g. the device has no UUID), or the CUresult to return instead of
 * calling the driver (CUDA_ERROR_OUT_OF_MEMORY when denied).
 */
CUresult client_reserve(int dev, uint64_t size, uint32_t kind,
	    struct client_ticket *t);

/*
 * The driver took more for *t than t->size (a pool grown by a larger
 * chunk, a pitch wider than the row): reserve the more bytes too, before
 * the commit, so that no charge goes uncovered (DESIGN.md section 4,
 * "Every byte is someone's"). On success *t covers both (t->dev < 0
 * before: *t is the new reservation); otherwise *t stands and the caller
 * gives the memory back and rolls *t back.
 */
CUresult client_reserve_more(struct client_ticket *t, int dev, uint64_t more,
	    uint32_t kind);

/*
 * The same, for memory the driver has just refused although it was granted
 * (drawn from a lease): a collision whatever the daemon's ledger says.
 */
CUresult client_reserve_refused(int dev, uint64_t size, uint32_t kind,
	    struct client_ticket *t);

/*
 * The driver allocated ptr, really holding size bytes: record and commit it.
 * Returns 0, or -1 when it cannot be recorded (out of memory): the caller
 * frees ptr and rolls back.
 */
int	client_commit(const struct client_ticket *t, uint64_t ptr,
	    uint64_t size);

/*
 * The table had an entry old at ptr, freed behind the shim's back (by a
 * context's end), that an allocation drawn from a lease replaced: give
 * its memory back, to its lease or to the daemon.
 */
struct alloc_entry;
void	client_stale(uint64_t ptr, const struct alloc_entry *old);

/*
 * The allocations recorded under keys[0..n) all go with one driver call
 * (a context's end): they leave the table first, so that none of their
 * addresses can be handed out and recorded again meanwhile; then end(arg)
 * is called, with the free lock held (see client_free): 1 when they are
 * gone, and each is given back (to its lease, or to the daemon in FREE);
 * 0 when they stay, and each is recorded again. Returns the bytes given
 * back, and their number in *count.
 */
uint64_t client_end_keys(const uint64_t *keys, size_t n, int (*end)(void *),
	    void *arg, size_t *count);

/* The driver call failed: return the reservation. */
void	client_rollback(const struct client_ticket *t);

/*
 * The driver refused (out of memory) what the daemon granted in *t: the
 * ledger did not know what the driver holds. Return it and ask again as a
 * collision (GF_RESERVE_DRIVER_OOM), which the daemon resolves as the
 * group's resolver says. Returns 1 when granted again (*t renewed: call
 * the driver again), 0 when not (*t is settled: t->dev < 0) or when the
 * reservation was not the daemon's, or refused CLIENT_REFUSALS_MAX times
 * already (*t stands: the caller rolls it back).
 */
int	client_driver_refused(struct client_ticket *t);

/*
 * Call the driver with call, again while it says out of memory and the
 * daemon grants the request in *t again (client_driver_refused).
 */
#define CLIENT_DRIVER_CALL(r, t, call) do {				\
	(r) = (call);							\
} while ((r) == CUDA_ERROR_OUT_OF_MEMORY && client_driver_refused(t))

/*
 * Free ptr with real_free and, when it succeeds and ptr is in the table,
 * tell the daemon (or give it back to the lease it was drawn from). A
 * commit of the same address, which the driver may hand out again once
 * real_free returns, waits until the FREE is sent. Returns real_free's
 * result.
 */
CUresult client_free(CUdeviceptr ptr, CUresult (*real_free)(CUdeviceptr));

/*
 * Memory drawn from dev's lease (shim/lease.h) was freed, or its
 * allocation failed: give size back to the lease, or to the daemon if
 * the lease is closed.
 */
void	client_lease_give(int dev, uint64_t size);

/*
 * The same for memory known by another handle (an array): release it with
 * real_release(arg) and forget the allocation recorded under key.
 */
CUresult client_release(uint64_t key, CUresult (*real_release)(void *),
	    void *arg);
/*
 * The same view of the device with this UUID, for a management query
 * (NVML): the device need not be one the process uses through CUDA.
 * Returns 0, or -1 when the daemon has not said (the driver's own numbers
 * stand).
 */
int	client_view_uuid(const uint8_t uuid[GF_UUID_LEN], uint64_t real_total,
	    struct client_view *v);

/*
 * Memory recorded under key on device dev (a pool's reserve) is now size
 * bytes, shrunk by the driver without a request of ours: record it and
 * tell the daemon (0: it is gone). Uncovered by any reservation, growth
 * sent this way is judged by the daemon as a re-registration is (trust.h):
 * growth is reserved first (client_reserve, client_commit).
 */
void	client_recharge(uint64_t key, int dev, uint32_t kind, uint64_t size);

/* The same for n keys (0 or more) that one driver call releases. */
CUresult client_release_keys(const uint64_t *keys, size_t n,
	    CUresult (*real_release)(void *), void *arg);

/*
 * The process is about to make a context, whose memory NVML will list
 * at once: connect and say HELLO first if it has not tried yet (lazy
 * registration ends with the first context, not the first allocation).
 */
void	client_context_coming(void);

/*
 * The view of device dev, whose driver total is real_total (connecting and
 * opening the device first if need be). Returns 0, or -1 when the device is
 * not accounted and the driver's own numbers stand.
 */
int	client_view(int dev, uint64_t real_total, struct client_view *v);

/*
 * The daemon has swapped this process out (activity.h): ask it for
 * swap-in (reason GF_SWAPIN_*: a hooked call, or a thread the stall
 * thread saw wait in the driver unseen) and wait for the answer; without a daemon, wait a moment for
 * the watcher to rejoin one. The caller checks the flag again.
 */
void	client_swap_in(uint32_t reason);

/*
 * After client_swap_in, the flag still set: 1 to ask again; 0 when no
 * daemon is there and the driver does not hold us locked (the mark is
 * stale and is cleared).
 */
int	client_swap_pending(void);

/*
 * What the client asks of the layer above it, which moves the process's
 * memory (the copy engine, shim/vback.h, shim/README): the client only
 * carries the daemon's word to it, and never calls up otherwise.
 *   move     MOVE came (client lock held): queue it, answer with MOVED
 *            (client_moved) later
 *   restore  no daemon is there and the page says the memory is out
 *            (activity.h): bring it back here; 0, or -1 (it stays out)
 */
struct client_mover {
	void	(*move)(uint32_t direction, uint32_t id);
	int	(*restore)(void);
};

/* Set once at start, before any connection (init.c). */
void	client_mover_set(const struct client_mover *m);

/* Send MOVED m, if connected; locked, unless the caller holds the lock. */
void	client_moved(const struct gf_moved *m, int locked);

/*
 * A thread of the shim's own that waits in the driver on purpose while
 * the process is out (the copy engine's move thread, tid; 0: none): the
 * stall thread never takes it for one stuck there.
 */
void	client_stall_spare(pid_t tid);

#endif
