/*
 * Host swap (DESIGN.md §4, issue 4): which processes go out to host memory
 * and when they come back, driven through the checkpoint engine (ckpt.h).
 *
 * One swap runs at a time. What to do next (swap_pump) is, in order: swaps
 * asked for explicitly (an admin's, a preemption's), processes that asked
 * to come back (SWAP_IN: highest priority, then longest out, making room
 * by the swap rules if need be), room for a waiting request of the swap
 * resolver, and last, with nobody waiting, bringing back on its own the
 * process longest out whose memory fits again.
 *
 * A victim is swapped out only after the activity page handshake
 * (include/gpufrac/activity.h) finds none of its threads in the driver;
 * one that is busy, holds memory the API cannot move (managed, IPC), or
 * whose lock times out is skipped until the collision that wanted it is
 * over, with an event saying why. Without the checkpoint API the swap
 * resolver behaves as wait and on_preempt = swap as kill, each decision
 * an event.
 */
#ifndef GF_DAEMON_SWAP_H
#define GF_DAEMON_SWAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "ckpt.h"
#include "gpufrac/proto.h"

#define SWAP_LOCK_TIMEOUT_MS	1000	/* a process busier than this in
					   the driver is skipped */
#define SWAP_RETRY_MS		1000	/* after a failed restore */
#define SWAP_BUSY_RETRY_MS	200	/* a busy victim of preemption is */
#define SWAP_BUSY_TRIES		50	/* tried again, this many times */
/*
 * The copy engine's deadline for MOVED: swap_move_timeout, plus the
 * bytes at this floor rate (bytes per ms: 1 GB/s), far below any bus; a
 * shim that has not answered by then is given up on (swap_move.c).
 */
#define SWAP_MOVE_FLOOR_BPMS	1000000ull

struct arbiter;
struct conn;
struct ledger_client;

/* A client's swap state (ledger_client.swap). */
enum {
	SWAP_NONE = 0,		/* on the device */
	SWAP_GOING_OUT,
	SWAP_OUT,		/* in host memory, the driver locked */
	SWAP_COMING_IN,
};

struct swap_op;
struct swap_ask;

struct swap {
	struct ckpt	 engine;
	int		 ckpt_ok;	/* the checkpoint engine runs */
	int		 available;	/* it, or the copy engine, is there */
	char		 reason[GF_REASON_LEN];	/* why not; "" if available */
	struct swap_op	*running;		/* the one under way */
	TAILQ_HEAD(, swap_op) todo;		/* asked for explicitly */
	TAILQ_HEAD(, swap_ask) asks;		/* answers owed */
	uint32_t	 nout;			/* clients out or going */
	uint32_t	 last_id;		/* the last swap_op.id given */
	int64_t		 retry_timer;
	int64_t		 idle_timer;	/* a candidate becomes idle enough */
	int64_t		 keep_timer;	/* kept host memory is due back */
	uint64_t	 keep_due_ms;	/* when it fires */
	uint64_t	 idle_in_ms;	/* the soonest one does, or 0 */
	int		 pumping;
	uint64_t	 moved_ignored;	/* MOVEDs no move asked for */
	uint64_t	 moved_said_ms;	/* the last of them logged */
	uint32_t	 moved_unsaid;	/* since, not logged */
};

/* After the devices are known: start the engine if the driver can swap. */
void	swap_init(struct arbiter *a);
/* Shutdown: bring back every process still out (on this thread), free. */
void	swap_free(struct arbiter *a);

/*
 * HELLO of lc with its activity page descriptor actfd (-1: none; taken
 * over either way). A process the driver has locked or checkpointed (a
 * previous daemon swapped it out) is taken as swapped out.
 */
void	swap_hello(struct arbiter *a, struct ledger_client *lc, int actfd);
/*
 * lc opened a device: taken as swapped out at HELLO, it is not brought
 * back unasked until what its page says it re-registers is charged.
 */
void	swap_device_open(struct ledger_client *lc);

/* The resolver `swap` for c's RESERVE that collided; as resolve_collision. */
int	swap_collision(struct arbiter *a, struct conn *c, uint32_t seq,
	    size_t dev, uint64_t size, char *why, size_t whylen);

/*
 * Preempt victim lc (on_preempt = swap) for requester rq: queue its
 * swap-out. Returns 0, or -1 when swap is unavailable (the fallback event
 * is recorded; the caller kills).
 */
int	swap_preempt(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    const struct ledger_client *rq);

/*
 * SWAP_IN from c (reason GF_SWAPIN_*: the swap-in event says it), and an
 * admin's SWAP_REQ; as dispatch handlers.
 */
int	swap_on_swap_in(struct arbiter *a, struct conn *c, uint32_t seq,
	    uint32_t reason, char *why, size_t whylen);
int	swap_on_request(struct arbiter *a, struct conn *c, uint32_t seq,
	    const struct gf_swap_req *r, char *why, size_t whylen);
/* MOVED from c: the copy engine's swap of c's process is done. */
int	swap_on_moved(struct arbiter *a, struct conn *c,
	    const struct gf_moved *m, char *why, size_t whylen);

/* Start the next swap, if any is due (see above). */
void	swap_pump(struct arbiter *a);

/*
 * Host memory host swap holds (swap_host.c): swapped out, and kept pinned
 * by the copy engine's shims for their next move out (the second alone).
 */
uint64_t swap_host_used(const struct arbiter *a);
uint64_t swap_host_kept(const struct arbiter *a);
/* The configuration changed: swap_keep is counted anew. */
void	swap_host_reconf(struct arbiter *a);

/* c is closing: its questions go unanswered. */
void	swap_conn_gone(struct arbiter *a, struct conn *c);
/* lc leaves the ledger: its page is unmapped, its swap forgotten. */
void	swap_client_gone(struct arbiter *a, struct ledger_client *lc);

#endif
