/*
 * Inside host swap: a swap operation and how one is started, shared by
 * the mechanism (swap.c), the copy engine's moves (swap_move.c), the
 * answers owed (swap_ask.c), the host memory (swap_host.c) and the
 * decisions (swap_pick.c). Not for other modules: they use swap.h.
 */
#ifndef GF_DAEMON_SWAP_OP_H
#define GF_DAEMON_SWAP_OP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "ckpt.h"
#include "gpufrac/proto.h"

struct arbiter;
struct conn;
struct ledger_client;

/* A swap asked for or under way. */
struct swap_op {
	TAILQ_ENTRY(swap_op) entry;
	struct ckpt_job	 job;
	struct arbiter	*a;
	struct ledger_client *lc;	/* NULL once it has left */
	int		 dir;		/* GF_SWAP_OUT or GF_SWAP_IN */
	int		 preempt;	/* a preemption's: lc->preempting */
	int		 by_hand;	/* an admin's */
	unsigned	 tries;		/* a preemption's, skipped as busy */
	uint64_t	 not_before_ms;	/* not tried again before (monotonic) */
	char		 cause[64];	/* "for pid 42", for the event */
	uint32_t	 engine;	/* GF_ENGINE_* */
	uint32_t	 id;		/* the page's swapped mark and MOVE's
					   id: nonzero, below
					   GF_SWAPPED_COMMITTED */
	int64_t		 deadline;	/* the copy engine's: the timer that
					   gives up on MOVED (or ends a move
					   that could not be asked), or 0 */
	uint64_t	 late_ms;	/* given up after this long, or 0 */
	/* the copy engine's answer (MOVED) */
	uint64_t	 moved;
	uint64_t	 pinned;	/* of the host memory, pinned anew */
	uint64_t	 stayed[GF_MOVED_DEVICES];
	uint32_t	 nstayed;
	char		 what[GF_MOVED_WHAT_LEN];
};

/* An answer owed: OK once lc is where dir says, or (admin) an ERROR. */
struct swap_ask {
	TAILQ_ENTRY(swap_ask) entry;
	struct conn	*c;
	uint32_t	 seq;
	struct ledger_client *lc;
	int		 dir;
	int		 admin;		/* SWAP_REQ: also told of failure */
	int		 unseen;	/* GF_SWAPIN_UNSEEN */
};

/* Free op (taken out of every list by the caller). */
void	swap_op_free(struct arbiter *a, struct swap_op *op);

/*
 * A new op moving lc in direction dir (GF_SWAP_*), by lc's group's engine,
 * for the cause named; the caller owns it (swap_op_free). NULL: no memory
 * (said).
 */
struct swap_op *swap_op_new(struct arbiter *a, struct ledger_client *lc,
	    int dir, const char *cause);

/* The engine of lc's group (GF_ENGINE_*). */
uint32_t swap_engine_of(const struct arbiter *a,
	    const struct ledger_client *lc);

/* Look again in ms: a restore that failed, a busy victim of preemption. */
void	swap_retry_arm(struct arbiter *a, uint64_t ms);

/*
 * Swap op's process out now, unless it must be skipped: then an event
 * says why, it is not tried again this round, and -1. op is taken over
 * either way.
 */
int	swap_start_out(struct arbiter *a, struct swap_op *op);
/* Bring op's process back now: its memory fits (the caller checked). */
void	swap_start_in(struct arbiter *a, struct swap_op *op);
/* Swap lc in or out now; the event names the pid it is done "why". */
int	swap_start(struct arbiter *a, struct ledger_client *lc, int dir,
	    const char *why, uint32_t pid);

/*
 * lc is now where dir says (ok), or could not get there: answer who
 * asked for that (msg: why not).
 */
void	swap_asks_settle(struct arbiter *a, struct ledger_client *lc, int dir,
	    int ok, const char *msg);

/* The checkpoint engine's end of a swap, and the copy engine's. */
void	swap_done(void *arg, struct ckpt_job *j);
/* Set lc's page's swapped mark to v, waking its shim when marked out. */
void	swap_mark(struct ledger_client *lc, uint32_t v);
/* lc's state (GF_STATE_*) as its swap and waits say. */
void	swap_set_state(struct ledger_client *lc);
/* "2.31 GB/s" for bytes in us, into buf. */
const char *swap_rate_format(uint64_t bytes, uint64_t us, char *buf,
	    size_t len);

/* The copy engine (swap_move.c): ask op's shim to move its memory. */
void	swap_move_send(struct arbiter *a, struct swap_op *op);
/* The copy engine moved op's process out: charge what moved to host. */
void	swap_ended_out_copy(struct arbiter *a, struct swap_op *op);
/*
 * lc, taken as in, is out all the same where its page says so: a move in
 * taken as done past its deadline failed after (swap_page.c). Then it is
 * taken as out again (an event says why), to come back anew, and 1.
 */
int	swap_page_recheck(struct arbiter *a, struct ledger_client *lc);

/* The answers owed (swap_ask.c): q forgotten, its counts undone. */
void	swap_ask_drop(struct arbiter *a, struct swap_ask *q);
/* Answer q: OK, or an ERROR saying msg. */
void	swap_ask_reply(struct swap_ask *q, int ok, const char *msg);
/* Owe c an answer to seq once lc is where dir says; NULL: no memory. */
struct swap_ask *swap_ask_add(struct arbiter *a, struct conn *c,
	    uint32_t seq, struct ledger_client *lc, int dir, int admin);

/* Why lc's memory cannot be swapped by its engine (static), or NULL. */
const char *swap_unmovable(const struct arbiter *a,
	    const struct ledger_client *lc);

/* All lc holds, on the device or out. */
uint64_t swap_footprint(const struct arbiter *a,
	    const struct ledger_client *lc);

/* lc's connection, or NULL (gone). */
struct conn *swap_conn_of(struct arbiter *a, const struct ledger_client *lc);

/* What host swap would hold on host once lc is out. */
uint64_t swap_host_after(const struct arbiter *a,
	    const struct ledger_client *lc);
/*
 * Ask the processes that keep pinned host memory while in, but lc, for
 * need bytes of it back, largest first: what is on its way back (asked
 * before included), or 0 when that cannot make the room (none asked).
 */
uint64_t swap_host_reclaim(struct arbiter *a, const struct ledger_client *lc,
	    uint64_t need);
/* lc came back in by copy: what it keeps is given back after swap_keep. */
void	swap_host_came_in(struct arbiter *a, struct ledger_client *lc);
/* MOVED for a GF_SWAP_DROP: lc gave its kept host memory back. */
void	swap_host_dropped(struct arbiter *a, struct ledger_client *lc,
	    const struct gf_moved *m);

/* Whether NVML shows the room lc brings back free (without NVML: 1). */
int	swap_driver_room(const struct arbiter *a,
	    const struct ledger_client *lc);

/*
 * Whether lc, which asks to come back, fits the device, once the unused
 * leases that stand in its way are taken back.
 */
int	swap_fits_back(struct arbiter *a, struct ledger_client *lc);
/*
 * Why lc does not fit back, into buf: " (device D: ...)" of the first of
 * its devices short of room, in NVML's eyes or the ledger's; "" if none.
 * Returns buf.
 */
const char *swap_short_say(const struct arbiter *a,
	    const struct ledger_client *lc, char *buf, size_t len);
/*
 * Whether lc, taken as out at HELLO, has re-registered all it said it
 * would (swap_device_open); once it has, or came back in, always.
 */
int	swap_registered(const struct arbiter *a, struct ledger_client *lc);

#endif
