/*
 * Victim selection for the preempt resolver: which processes to swap out or
 * kill so that a request fits one device. A pure function over what the
 * caller copied out of the ledger; no allocation, no I/O, no clock.
 *
 * Candidates are processes on the device, each carrying its group's
 * aggregates (the same values in every process of a group). The rules
 * (DESIGN.md §4, issue 3):
 *
 *  - Only groups of strictly lower priority than the requester are touched;
 *    equal priority (the requester's own group included) never is.
 *  - A group whose on_preempt is GF_PREEMPT_NONE is never touched.
 *  - Only memory above a group's guarantee counts. A group's excess is
 *    group_used - group_releasing - group_guarantee (0 when negative): what
 *    it holds above its guarantee once the preemptions already under way
 *    have finished. A process is chosen only while its group still has
 *    excess left, and choosing it counts min(charge, excess left) as freed;
 *    the group's excess left drops by that much. A process is swapped or
 *    killed whole, so its group may end up below its guarantee in fact; the
 *    part of the charge within the guarantee is not counted, because it
 *    stays the group's (the ledger keeps unused guarantees back from
 *    others) and the requester cannot use it.
 *  - A process already being preempted is never chosen again; the bytes it
 *    is releasing belong in its group's group_releasing.
 *  - Order: groups by priority, lowest first, then by excess, largest
 *    first, then by group id; within a group, processes by charge, largest
 *    first (fewest processes disturbed), then by id. A group is used up
 *    before the next one is touched. Selection stops as soon as the counted
 *    bytes cover need.
 *  - All or nothing: if everything that may be taken cannot cover need,
 *    nobody is chosen (the request then behaves as with the fail resolver).
 *
 * need is what the request lacks beyond what is free now. Memory that
 * preemptions under way will release is not subtracted from it: those
 * releases were chosen for earlier requests, which count on them.
 */
#ifndef GF_DAEMON_VICTIMS_H
#define GF_DAEMON_VICTIMS_H

#include <stddef.h>
#include <stdint.h>

struct victim_cand {
	uint64_t	id;		/* the caller's: a pid */
	size_t		group;		/* the caller's group id: an index */
	int32_t		priority;	/* the group's */
	uint32_t	on_preempt;	/* the group's GF_PREEMPT_* */
	int		preempting;	/* already being preempted */
	uint64_t	charge;		/* this process's charge on the device */
	/* the group's on the device, the same in all of its processes */
	uint64_t	group_used;	/* charges of all its processes */
	uint64_t	group_guarantee;
	uint64_t	group_releasing; /* being released by preemptions
					    already under way */
};

struct victims_result {
	size_t		nchosen;	/* entries of chosen[] filled */
	uint64_t	freed;		/* counted toward need: >= need, or 0 */
	uint64_t	released;	/* the chosen's whole charges */
	uint64_t	available;	/* all that could be counted, chosen or
					   not: < need when nobody was chosen
					   for want of memory */
};

/*
 * Choose victims among cand[0..ncand) for a request of priority that lacks
 * need bytes. chosen must have room for ncand pointers: it is used as
 * scratch and returns the victims (pointers into cand) in the order to
 * preempt them, res->nchosen of them. Returns res->nchosen; 0 when need is
 * 0 or cannot be covered (see res->available).
 */
size_t	victims_select(int32_t priority, uint64_t need,
	    const struct victim_cand *cand, size_t ncand,
	    const struct victim_cand **chosen, struct victims_result *res);

/*
 * The swap resolver's choice (issue 4): one process at a time, the least
 * recently active first. A candidate may be taken when the caller marked
 * it eligible (not the requester, on the device and idle enough to try,
 * movable, not skipped), its group's priority is not above the
 * requester's, it holds something on the device, and taking all of it
 * leaves its group at or above its guarantee (charge <= group excess).
 * Ties: the larger charge, then the smaller id.
 */
struct swap_cand {
	uint64_t	id;		/* the caller's: a pid */
	int		eligible;
	int32_t		priority;	/* its group's */
	uint64_t	idle_ms;	/* since its last GPU use */
	uint64_t	charge;		/* on the device */
	uint64_t	group_used;	/* its group's, on the device */
	uint64_t	group_guarantee;
	size_t		group;		/* the caller's group id: an index */
};

/* The index in cand of the next one to swap out, or -1 if none may be. */
long	victims_swap_pick(int32_t priority, const struct swap_cand *cand,
	    size_t ncand);

/*
 * Whether swapping out, one after another as victims_swap_pick chooses
 * them, could free need bytes: each one taken lowers its group's use for
 * the rest. A request that even this cannot serve must not have anybody
 * swapped out for it: it would be swapped back in as it fits again, and
 * out again, for ever. cand is scratch: its eligible and group_used
 * fields are changed.
 */
int	victims_swap_covers(int32_t priority, struct swap_cand *cand,
	    size_t ncand, uint64_t need);

#endif
