/*
 * The activity page: one page of memory a client process shares with
 * gpufracd, so that the daemon knows when the process last used the GPU
 * and the process knows it has been swapped out, with no message per
 * driver call (DESIGN.md §4, host swap).
 *
 * The shim creates it (memfd, GF_ACTIVITY_SIZE bytes, sealed against
 * shrinking and growing so the daemon may map it safely) and passes it
 * with HELLO as SCM_RIGHTS; both map it shared. Fields are naturally
 * aligned and accessed with atomic operations only.
 *
 * The swap handshake (a Dekker pair, all sequentially consistent):
 *   shim, at every hooked driver call: inflight += 1, then load swapped;
 *     if swapped, inflight -= 1 and ask for SWAP_IN before calling the
 *     driver; else call the driver, then inflight -= 1.
 *   daemon, before it locks the process: store swapped = 1, then load
 *     inflight; if nonzero the process is busy in the driver: store
 *     swapped = 0 and leave it alone.
 * So no thread of a swapped-out process ever enters the driver through a
 * hook: either it sees the flag, or the daemon sees the thread.
 *
 * The mark is any nonzero value: the daemon stores the swap's id (below
 * GF_SWAPPED_COMMITTED), which the copy engine's MOVE carries too. The
 * copy engine gives the device its memory back only once it has turned
 * the mark from its MOVE's id to id | GF_SWAPPED_COMMITTED (compare and
 * swap); a daemon that gives up waiting for MOVED turns it from the id to
 * 0 the same way. One of the two wins: either the memory never left and
 * the process runs on, or it left and the daemon takes it as out. The
 * mark keeps GF_SWAPPED_COMMITTED for as long as the memory is out.
 *
 * Back in, the same (issue 33): the daemon marks id | COMMITTED with its
 * MOVE's id; the copy engine maps device memory again only once it has
 * turned that to id | COMMITTED | GF_SWAPPED_IN, and clears the mark
 * itself when its memory is back (or turns it back to id | COMMITTED if
 * the move failed); a daemon that gives up turns id | COMMITTED into
 * COMMITTED alone (out, no move asked). A shim with no daemon to ask
 * brings its memory back under the same rule. A mark with IN is the
 * shim's alone to clear: a daemon that takes the move as done past its
 * deadline leaves it, and the program's calls wait at the gate for the
 * copy engine, not the daemon, until the last byte is back; should that
 * move fail, the mark is back at id | COMMITTED, and the daemon takes
 * the process as out again (never clearing the mark) and moves it in anew.
 *
 * So the page says where the copy engine's memory is, whichever side
 * died: a new daemon reads it at HELLO (no COMMITTED: in, a mark not
 * committed taken back; COMMITTED: out; IN too: coming in, in).
 *
 * Leases (the fast path, DESIGN.md §2): lease[d] is the process's lease on
 * its device ordinal d, memory the daemon has charged to it in advance so
 * that cuMemAlloc and cuMemFree inside it cost no system call and no
 * message. avail holds the bytes of the lease not allocated, and
 * GF_LEASE_CLOSED while the daemon wants every byte back as it is freed:
 *   shim, allocating n: compare-and-swap avail to avail - n, only if it is
 *     open and holds n; freeing n drawn from it: to avail + n, only if it
 *     is open; closed, it subtracts n from total and sends LEASE_RETURN.
 *   daemon, granting g: total += g, then avail = (avail & ~CLOSED) + g;
 *     taking the unused part back: exchange avail for CLOSED, then
 *     total -= what it held.
 * total is the lease's size as the daemon charges it; a restarted daemon
 * is told it (LEASE_RESTORE). draws changes with every allocation drawn
 * (a relaxed increment, lost updates allowed): the daemon takes back a
 * lease it has not seen drawn from for a while.
 *
 * Context memory (what the process holds that no hooked call allocated) is
 * measured with NVML, which shows nothing of a process swapped out, nor
 * tells it from the allocations a process re-registers: the daemon keeps
 * its last measure in the page, where a restarted daemon finds it. A
 * process no daemon measured yet (it started while none ran) says in
 * held, before it opens the device, what the allocations it is about to
 * register hold, which NVML counts already.
 */
#ifndef GPUFRAC_ACTIVITY_H
#define GPUFRAC_ACTIVITY_H

#include <stdint.h>

#define GF_ACTIVITY_MAGIC	0x67664163u	/* "cAfg" */
#define GF_ACTIVITY_VERSION	3
#define GF_ACTIVITY_SIZE	4096

#define GF_ACTIVITY_DEVICES	32	/* lease slots: device ordinals */
#define GF_LEASE_CLOSED		(1ull << 63)
#define GF_CONTEXT_MEASURED	(1ull << 63)	/* context: 0 bytes is a measure */

/* flags, set by the shim: memory the checkpoint API cannot move. */
#define GF_ACT_IPC		0x1u	/* exported or imported IPC memory */
#define GF_ACT_COPY		0x2u	/* it can move its own memory (MOVE) */

/* swapped: the copy engine is past the point of no return (see above). */
#define GF_SWAPPED_COMMITTED	0x80000000u
/* swapped: the copy engine is past the point of no return coming in. */
#define GF_SWAPPED_IN		0x40000000u
#define GF_SWAPPED_ID		0x3fffffffu	/* the id's bits */

struct gf_activity {
	uint32_t	magic;		/* GF_ACTIVITY_MAGIC (shim) */
	uint32_t	version;	/* GF_ACTIVITY_VERSION (shim) */
	uint64_t	calls;		/* shim: hooked driver calls, mod 2^64
					   (a lost increment does no harm):
					   the daemon notes when it moves;
					   0: none yet */
	uint32_t	inflight;	/* shim: threads between the swap check
					   and the driver's return */
	uint32_t	flags;		/* shim: GF_ACT_* */
	uint32_t	swapped;	/* daemon: nonzero (a swap's id) while
					   the process is being or has been
					   swapped out */
	uint32_t	engine;		/* daemon: GF_ENGINE_* of its group
					   (proto.h); the shim backs plain
					   allocations for the copy engine
					   while it says GF_ENGINE_COPY */
	uint8_t		pad[32];	/* the leases on lines of their own */
	struct gf_lease_slot {
		uint64_t	avail;	/* unallocated bytes | GF_LEASE_CLOSED */
		uint64_t	total;	/* the lease's size */
		uint64_t	draws;	/* shim: allocations drawn, mod 2^64 */
		uint64_t	context; /* daemon: its last measure of the
					    process's context memory on the
					    device | GF_CONTEXT_MEASURED, or
					    0 (see below) */
		uint64_t	held;	/* shim: what its allocations on the
					   device held when it last
					   registered them (see below) */
		uint64_t	pad[3];
	} lease[GF_ACTIVITY_DEVICES];
};

_Static_assert(sizeof(struct gf_lease_slot) == 64, "gf_lease_slot layout");
_Static_assert(sizeof(struct gf_activity) == 64 + 64 * GF_ACTIVITY_DEVICES,
    "gf_activity layout");
_Static_assert(sizeof(struct gf_activity) <= GF_ACTIVITY_SIZE,
    "gf_activity fits its page");

#endif
