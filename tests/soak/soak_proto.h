/*
 * What the soak's driver (soak) and its clients (soak_client) share: the
 * page of slots in which each client keeps its counters and, when it has
 * settled, what it holds; the one-byte commands on its stdin and answers
 * on its stdout; and the seeded random numbers both draw.
 */
#ifndef GF_SOAK_PROTO_H
#define GF_SOAK_PROTO_H

#include <stdint.h>

#define SOAK_MAX_DEV	4		/* devices a client may use */
#define SOAK_MAX_SLOTS	256		/* clients alive at once */
#define SOAK_SLOT_FD	3		/* where a client finds the page */

/* The driver's commands, one byte on the client's stdin. */
#define SOAK_CMD_PAUSE	'p'	/* finish the call in progress, settle */
#define SOAK_CMD_RESUME	'r'	/* carry on */
#define SOAK_CMD_QUIT	'q'	/* free everything, say bye, exit 0 */

/* The client's answers, one byte on its stdout. */
#define SOAK_SAY_READY	'R'	/* set up: contexts made, devices opened */
#define SOAK_SAY_SETTLED 'S'	/* paused: its slot's truth is current */
#define SOAK_SAY_BYE	'B'	/* freed everything */

/* The ways a client takes device memory, each the shim interposes. */
enum {
	SOAK_MEM,	/* cuMemAlloc */
	SOAK_PITCH,	/* cuMemAllocPitch */
	SOAK_MANAGED,	/* cuMemAllocManaged */
	SOAK_POOL,	/* cuMemAllocAsync, cuMemAllocFromPoolAsync */
	SOAK_VMM,	/* cuMemCreate + cuMemMap */
	SOAK_ARRAY,	/* cuArrayCreate, cuArray3DCreate, mipmapped */
	/* Uses of memory held, which take none (soak_uses.c): */
	SOAK_IPC,	/* cuIpcGetMemHandle of a cuMemAlloc allocation */
	SOAK_GRAPH,	/* a graph's memset node on one, launched */
	SOAK_KINDS
};

/* What a client is doing, in its slot: one of these, or'ed with a kind. */
#define SOAK_CALL_ALLOC		0x100
#define SOAK_CALL_FREE		0x200
#define SOAK_CALL_VERIFY	0x300
#define SOAK_CALL_POOL		0x400
#define SOAK_CALL_QUIT		0x500

/*
 * One client's slot, written by the client only (atomic stores: single
 * writer), read by the driver at any time. charged[] and driver[] are
 * what the client holds after its last call, published under truth_seq
 * (odd while they change); pauses counts the PAUSEs it has settled at.
 */
struct soak_slot {
	uint32_t	pid;
	uint32_t	zero;
	uint64_t	ops;		/* driver calls that allocate or free */
	uint64_t	kind_ops[SOAK_KINDS];	/* of them, by kind */
	uint64_t	denied;		/* allocations refused (no memory) */
	uint64_t	waits;		/* allocations that waited >= 100 ms */
	uint64_t	stuck;		/* waited past the bound, not swapped */
	uint64_t	wait_max_ms;	/* the longest not swapped out */
	uint64_t	swapped_calls;	/* calls that found it swapped out */
	uint64_t	errors;		/* calls that failed unexpectedly */
	uint64_t	corrupt;	/* data read back wrong */
	/* The call in progress, for a stuck client's diagnosis. */
	uint32_t	call;		/* SOAK_CALL_* | kind, 0: none */
	uint32_t	truth_seq;
	uint64_t	call_ms;	/* since when (CLOCK_MONOTONIC) */
	uint64_t	pauses;
	/*
	 * Per device ordinal, what the shim charges for its allocations
	 * (gpufrac's accounting rules, libgpufrac(7)), and what the driver
	 * holds for it (granules, chunks, contexts).
	 */
	uint64_t	charged[SOAK_MAX_DEV];
	uint64_t	driver[SOAK_MAX_DEV];
};

/* splitmix64: every random choice of a run follows from its seed. */
static inline uint64_t
soak_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t
soak_between(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + soak_rand(state) % (hi - lo + 1);
}

/* Whether an event of probability pct percent happens. */
static inline int
soak_chance(uint64_t *state, unsigned pct)
{
	return soak_rand(state) % 100 < pct;
}

#endif
