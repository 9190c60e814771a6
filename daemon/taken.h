/*
 * A group's memory in the order it was taken (issue 38, C): the one who
 * went over is the one who goes. Each piece of a group's charge carries
 * when it was taken: a grant when it was granted, an unshimmed process's
 * memory from the look that first saw it, its growth from the look that
 * saw it grow (taken_layers keeps those). Laid end to end in that order,
 * the pieces that end past the group's limit are the excess, and their
 * owners are the ones to kill, newest first; an owner whose pieces all
 * fit under the limit is never one of them. Pure: no clock, no I/O.
 */
#ifndef GF_DAEMON_TAKEN_H
#define GF_DAEMON_TAKEN_H

#include <stddef.h>
#include <stdint.h>

/* When memory was taken: ms (monotonic), then seq within one ms. */
struct taken_when {
	uint64_t	 ms;
	uint64_t	 seq;
};

/* One piece of a group's charge on a device. */
struct taken_piece {
	struct taken_when when;
	uint64_t	 bytes;
	const void	*owner;		/* the caller's: whose it is */
};

/* A process's memory seen at the looks, oldest first (its growth). */
struct taken_layer {
	struct taken_when when;
	uint64_t	 bytes;
};

struct taken_layers {
	struct taken_layer *v;		/* malloc'd, taken_layers_free's */
	size_t		 n, cap;
};

/*
 * The process now holds total: a rise is a new layer taken at when; a
 * fall takes from the newest layers first (what came last went first).
 * Returns 0, or -1 (ENOMEM: the rise is added to the newest layer, which
 * at worst makes it look older than it is).
 */
int	taken_layers_fit(struct taken_layers *t, uint64_t total,
	    struct taken_when when);
void	taken_layers_free(struct taken_layers *t);

/*
 * Sort p[0..n) in the order taken and write to owners[] (room for n)
 * the distinct owners of the pieces that end past limit, newest first.
 * Returns how many.
 */
size_t	taken_past(struct taken_piece *p, size_t n, uint64_t limit,
	    const void **owners);

#endif
