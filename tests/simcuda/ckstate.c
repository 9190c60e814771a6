/*
 * The checkpoint operations one process applies to another (checkpoint.c)
 * on its slot of the segment: Lock waits for its calls in flight to
 * return, Checkpoint parks its device memory, Restore charges it again.
 */
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "segment.h"

/*
 * The slot of live process pid, with the lock held; NULL if none. Pid 0
 * is no process: free slots and dead processes' releasing memory.
 */
static struct state_proc *
proc_find(pid_t pid)
{
	int i;

	if (pid <= 0)
		return NULL;
	for (i = 0; i < (int)state_shm->nslots; i++) {
		struct state_proc *sp = &state_shm->procs[i];

		if (sp->pid == 0 || slot_pid(sp) != pid)
			continue;
		if (i == state_self_slot || proc_alive(sp))
			return sp;
		slot_die(sp);
		return NULL;
	}
	return NULL;
}

static void
ck_unlock(struct state_proc *sp)
{
	sp->ckstate = CK_RUNNING;
	sp->locker = 0;
	__atomic_store_n(&sp->locked, 0, __ATOMIC_SEQ_CST);
	futex(&sp->locked, FUTEX_WAKE, INT_MAX, NULL);
}

/*
 * The slot of pid, locked, after undoing the half-done Lock of a caller
 * that died waiting; NULL (and unlocked) if pid is not an initialised
 * process of this machine.
 */
static struct state_proc *
ck_find(pid_t pid)
{
	struct state_proc *sp;
	uint64_t start;

	if (state_shm == NULL || state_lock() < 0)
		return NULL;
	if ((sp = proc_find(pid)) == NULL) {
		state_unlock();
		return NULL;
	}
	if (sp->ckstate == CK_LOCKING && (proc_start(sp->locker, &start) < 0 ||
	    start != sp->locker_start))
		ck_unlock(sp);
	return sp;
}

/*
 * The slot of pid, locked, in *spp if pid is in state want: CUDA_SUCCESS;
 * else, unlocked, CUDA_ERROR_INVALID_VALUE (no such process, as ck_find)
 * or CUDA_ERROR_ILLEGAL_STATE.
 */
static CUresult
ck_find_in(pid_t pid, uint32_t want, struct state_proc **spp)
{
	if ((*spp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if ((*spp)->ckstate != want) {
		state_unlock();
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	return CUDA_SUCCESS;
}

static int
ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000LL +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Wait, without the lock, until the calls of process pid (started at
 * start) in flight have returned: 0; -1 at the timeout (0: none), or
 * 1 if the process is gone. Sleeps on the futex in slices of at most
 * 100 ms so that a process killed inside a call is noticed.
 */
static int
ck_drain(struct state_proc *sp, pid_t pid, uint64_t start,
    unsigned timeout_ms)
{
	struct timespec deadline, slice;
	uint64_t now_start;
	uint32_t n;
	int left;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	while ((n = __atomic_load_n(&sp->inflight, __ATOMIC_SEQ_CST)) != 0) {
		if (proc_start(pid, &now_start) < 0 || now_start != start)
			return 1;
		left = timeout_ms == 0 ? 100 : ms_left(&deadline);
		if (left == 0)
			return -1;
		if (left > 100)
			left = 100;
		slice.tv_sec = 0;
		slice.tv_nsec = (long)left * 1000000;
		futex(&sp->inflight, FUTEX_WAIT, n, &slice);
	}
	return 0;
}

CUresult
state_ck_lock(pid_t pid, unsigned timeout_ms)
{
	struct state_proc *sp;
	uint64_t start, self_start;
	CUresult found;
	int r;

	if (proc_start(getpid(), &self_start) < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if ((found = ck_find_in(pid, CK_RUNNING, &sp)) != CUDA_SUCCESS)
		return found;
	start = sp->start;
	sp->ckstate = CK_LOCKING;
	sp->locker = getpid();
	sp->locker_start = self_start;
	__atomic_store_n(&sp->locked, 1, __ATOMIC_SEQ_CST);
	state_unlock();

	r = ck_drain(sp, pid, start, timeout_ms);

	if (state_lock() < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if (slot_pid(sp) != pid || sp->start != start ||
	    sp->ckstate != CK_LOCKING ||
	    sp->locker != getpid()) {
		state_unlock();		/* it died, and its slot went */
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (r == 0) {
		sp->ckstate = CK_LOCKED;
		sp->locker = 0;
	} else
		ck_unlock(sp);
	state_unlock();
	/* The documented codes have no TIMEOUT; NOT_READY is the one that
	 * fits ("not completed yet"). */
	return r == 0 ? CUDA_SUCCESS : r < 0 ? CUDA_ERROR_NOT_READY :
	    CUDA_ERROR_INVALID_VALUE;
}

CUresult
state_ck_unlock(pid_t pid)
{
	struct state_proc *sp;
	CUresult r;

	if ((r = ck_find_in(pid, CK_LOCKED, &sp)) != CUDA_SUCCESS)
		return r;
	ck_unlock(sp);
	state_unlock();
	return CUDA_SUCCESS;
}

/* What the locked process holds on its devices: what Checkpoint moves. */
CUresult
state_ck_held(pid_t pid, uint64_t *bytes)
{
	struct state_proc *sp;
	unsigned d;
	CUresult r;

	if ((r = ck_find_in(pid, CK_LOCKED, &sp)) != CUDA_SUCCESS)
		return r;
	*bytes = 0;
	for (d = 0; d < SIM_MAX_DEVICES; d++)
		*bytes += sp->used[d];
	state_unlock();
	return CUDA_SUCCESS;
}

/* Give the process's device memory back to the machine, and remember it. */
CUresult
state_ck_checkpoint(pid_t pid)
{
	struct state_proc *sp;
	unsigned d;
	CUresult r;

	if ((r = ck_find_in(pid, CK_LOCKED, &sp)) != CUDA_SUCCESS)
		return r;
	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		sp->parked[d] = sp->used[d];
		state_shm->used[d] -= sp->used[d];
		sp->used[d] = 0;
	}
	sp->ckstate = CK_CHECKPOINTED;
	state_unlock();
	return CUDA_SUCCESS;
}

static int
ck_fits(const struct state_proc *sp)
{
	unsigned d;

	for (d = 0; d < state_shm->ndev; d++)
		if (sp->parked[d] != 0 && !state_fits((int)d, sp->parked[d]))
			return 0;
	return 1;
}

/* Charge the remembered memory again, on every device or on none; *bytes
 * is how much. */
CUresult
state_ck_restore(pid_t pid, uint64_t *bytes)
{
	struct state_proc *sp;
	unsigned d;
	CUresult r;

	if ((r = ck_find_in(pid, CK_CHECKPOINTED, &sp)) != CUDA_SUCCESS)
		return r;
	if (!ck_fits(sp))
		state_reap();
	if (!ck_fits(sp)) {
		state_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*bytes = 0;
	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		*bytes += sp->parked[d];
		state_shm->used[d] += sp->parked[d];
		sp->used[d] = sp->parked[d];
		sp->parked[d] = 0;
	}
	sp->ckstate = CK_LOCKED;
	state_unlock();
	return CUDA_SUCCESS;
}

CUresult
state_ck_state(pid_t pid, CUprocessState *state)
{
	static const CUprocessState map[] = {
		[CK_RUNNING] = CU_PROCESS_STATE_RUNNING,
		[CK_LOCKING] = CU_PROCESS_STATE_RUNNING,
		[CK_LOCKED] = CU_PROCESS_STATE_LOCKED,
		[CK_CHECKPOINTED] = CU_PROCESS_STATE_CHECKPOINTED,
	};
	struct state_proc *sp;

	if ((sp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*state = map[sp->ckstate];
	state_unlock();
	return CUDA_SUCCESS;
}

/* Whether pid is an initialised process of this machine. */
int
state_ck_known(pid_t pid)
{
	if (ck_find(pid) == NULL)
		return 0;
	state_unlock();
	return 1;
}
