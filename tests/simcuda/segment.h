/*
 * The segment every process of one simulated machine maps: its layout and
 * what state.c, which owns it, gives the files that work on it (share.c:
 * exported VMM allocations; gate.c: the gate driver calls pass; ckstate.c:
 * the checkpoint operations). The rest of the simulator uses sim.h.
 */
#ifndef SIMCUDA_SEGMENT_H
#define SIMCUDA_SEGMENT_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

#define STATE_PROCS	4096		/* processes holding memory at once */
#define STATE_CG_DEPTH	16		/* a process's cgroup and ancestors */

struct state_proc {
	int32_t		pid;		/* 0: free slot, or releasing; as its
					 * own pid namespace numbers it */
	uint32_t	release_ms;	/* SIMCUDA_RELEASE_DELAY_MS, its own */
	uint64_t	pidns;		/* that namespace (/proc/self/ns/pid's
					 * inode) */
	uint64_t	start;		/* /proc/PID/stat field 22, which tells
					 * a reused pid apart */
	/* A dead process's memory, held for no pid until this time
	 * (CLOCK_MONOTONIC, ns); 0: not releasing. */
	uint64_t	release_at;
	uint64_t	used[SIM_MAX_DEVICES];
	/* Checkpoint (DESIGN.md §4 host swap): ckstate and locker change
	 * under the lock; locked and inflight are futex words, read and
	 * written with atomics. */
	uint32_t	ckstate;	/* CK_* */
	uint32_t	locked;		/* non-zero: the process's calls wait */
	uint32_t	inflight;	/* its driver calls in progress */
	int32_t		locker;		/* pid of the Lock in progress */
	uint64_t	locker_start;
	uint64_t	parked[SIM_MAX_DEVICES];	/* what Checkpoint released */
	/* Its cgroup v2 directory's inode, then each ancestor's as far as
	 * the process sees them, 0 after the last (memlimits.c): what
	 * driver memory limits it is under. Set at cuInit. */
	uint64_t	cg[STATE_CG_DEPTH];
};

#define STATE_SHARES	256		/* exported VMM allocations at once */
#define SHARE_HOLDERS	16		/* processes holding one at once */

/*
 * A VMM allocation exported to other processes (vmm.c), known by the
 * memfd inode that backs it. Its bytes stay charged while any process
 * holds it: to its creator's slot while the creator holds it, then to no
 * slot ("orphaned", in used[] only) until the last holder lets go or
 * dies, as the real driver frees it only then. Slots are kept plus one,
 * so that zero is none.
 */
struct state_share {
	uint64_t	dev, ino;	/* ino 0: a free record */
	uint64_t	bytes;
	int32_t		phys;
	int32_t		owner;		/* slot + 1 charged, or 0: orphaned */
	int32_t		holder[SHARE_HOLDERS];	/* slot + 1, or 0 */
};

#define STATE_LIMITS	256		/* cgroups limited at once, all devices */
#define STATE_LIMIT_PATH 1024

/*
 * A driver memory limit (nvmlDeviceSetMemoryLimits_v1, memlimits.c): on
 * device phys, for the cgroup whose directory is path (as the setter
 * named it) and inode ino. ino 0: a free record.
 */
struct state_limit {
	uint64_t	ino;
	int32_t		phys;
	int32_t		pad;
	uint64_t	soft, hard;
	char		path[STATE_LIMIT_PATH];
};

/* LOCKING: a Lock is waiting for the calls in flight; reads as RUNNING. */
enum { CK_RUNNING, CK_LOCKING, CK_LOCKED, CK_CHECKPOINTED };

/*
 * The segment. Whoever finds it uninitialised (ready == 0) initialises it
 * under an flock on the segment, so processes starting at once agree, and
 * a creator that dies half-way leaves it for the next one to redo.
 */
struct state_shared {
	uint32_t	magic;
	uint32_t	size;		/* sizeof(struct state_shared) */
	uint32_t	ready;
	uint32_t	ndev;
	uint32_t	nslots;		/* procs[] used so far: scans stop there */
	uint32_t	pad;
	uint64_t	capacity[SIM_MAX_DEVICES];
	uint64_t	used[SIM_MAX_DEVICES];	/* sum of procs[].used and of
						 * orphaned shares */
	pthread_mutex_t	lock;		/* process-shared and robust */
	struct state_proc procs[STATE_PROCS];
	struct state_share shares[STATE_SHARES];
	struct state_limit limits[STATE_LIMITS];
};

extern struct state_shared *state_shm;	/* NULL before state_attach */
extern int state_self_slot;		/* this process's procs[], or -1 */
/* The same slot for the gate, from cuInit on (state_join); NULL before
 * and in a forked child. Read and written with atomics. */
extern struct state_proc *state_self_proc;

/* state.c: the lock, the slots, and the memory of dead processes. */
int		state_lock(void);	/* 0, or -1 (logged) */
void		state_unlock(void);
/* This process's slot, taken on first use; -1 if the table is full. */
int		state_self_get(void);
/* Start time and liveness of pid; -1 if it is gone or a zombie. */
int		proc_start(pid_t pid, uint64_t *start);
int		proc_alive(const struct state_proc *sp);
pid_t		slot_pid(const struct state_proc *sp);
void		slot_clear(struct state_proc *sp);	/* its memory is back */
/* Its process is gone: slot_clear() now, or, with a release delay, hold
 * its memory for no pid until the delay has passed. */
void		slot_die(struct state_proc *sp);
/* slot_die() every dead process, slot_clear() every release that is due. */
void		state_reap(void);
int		state_fits(int phys, uint64_t bytes);	/* room on phys now */

/*
 * memlimits.c: whether bytes more on phys keep the process of slot sp
 * within the hard limit of every limited cgroup it is in (the lock is
 * held), and its cgroup chain, read at cuInit (takes no lock).
 */
int		limits_fit(int phys, const struct state_proc *sp,
		    uint64_t bytes);
void		limits_chain(uint64_t *cg);

/* share.c: for slot_clear and the repair after a holder died. */
void		share_drop_slot(int slot);	/* lets go of all it holds */
void		share_repair(void);	/* orphaned shares back in used[] */

static inline long
futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	/* Not FUTEX_PRIVATE_FLAG: the words are shared between processes. */
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

#endif
