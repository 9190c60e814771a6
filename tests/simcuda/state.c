/*
 * Device memory accounting shared by every process of one simulated
 * machine: capacity and use per physical device, and what each process
 * holds, so that a process that dies, even by SIGKILL, loses its memory;
 * and each process's checkpoint state, the gate its driver calls pass
 * and the checkpoint operations other processes apply to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sim.h"

#define STATE_MAGIC	0x53494d43u	/* "SIMC" */
#define STATE_PROCS	4096		/* processes holding memory at once */

struct state_proc {
	int32_t		pid;		/* 0: free slot */
	uint32_t	pad;
	uint64_t	start;		/* /proc/PID/stat field 22, which tells
					 * a reused pid apart */
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
};

static struct state_shared *shm;
static int self_slot = -1;
static struct state_proc *self_proc;	/* the gate's: atomics */
static __thread int gate_depth;		/* driver calls on this thread */

/* Start time and liveness of pid; -1 if it is gone or a zombie. */
static int
proc_start(pid_t pid, uint64_t *start)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* Field 2 is "(comm)" and comm may hold spaces: count after ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return -1;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return -1;		/* exited: its device memory is gone */
	for (field = 3; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (errno != 0 || end == p)
		return -1;
	return 0;
}

static int
proc_alive(const struct state_proc *sp)
{
	uint64_t start;

	return proc_start(sp->pid, &start) == 0 && start == sp->start;
}

/* Take slot out of sh's holders; whether others still hold it. */
static int
share_unhold(struct state_share *sh, int slot)
{
	int i, left = 0;

	for (i = 0; i < SHARE_HOLDERS; i++) {
		if (sh->holder[i] == slot + 1)
			sh->holder[i] = 0;
		else if (sh->holder[i] != 0)
			left = 1;
	}
	return left;
}

static int
share_held(const struct state_share *sh, int slot)
{
	int i;

	for (i = 0; i < SHARE_HOLDERS; i++)
		if (sh->holder[i] == slot + 1)
			return 1;
	return 0;
}

/*
 * Slot lets go of sh. The owner's charge leaves its slot: returned if no
 * one else holds sh, else orphaned. A dead owner's may have been parked
 * by a checkpoint; an orphan is back on the device.
 */
static void
share_leave(struct state_share *sh, int slot)
{
	struct state_proc *sp = &shm->procs[slot];
	int d = sh->phys, left = share_unhold(sh, slot);

	if (sh->owner == slot + 1) {
		if (sp->used[d] >= sh->bytes) {
			sp->used[d] -= sh->bytes;
			if (!left)
				shm->used[d] -= sh->bytes;
		} else if (sp->parked[d] >= sh->bytes) {
			sp->parked[d] -= sh->bytes;
			if (left)
				shm->used[d] += sh->bytes;
		}
		sh->owner = 0;
	} else if (!left && sh->owner == 0)
		shm->used[d] -= sh->bytes;
	if (!left)
		memset(sh, 0, sizeof(*sh));
}

static void
slot_clear(struct state_proc *sp)
{
	unsigned d;
	int i, slot = (int)(sp - shm->procs);

	for (i = 0; i < STATE_SHARES; i++)
		if (shm->shares[i].ino != 0 && share_held(&shm->shares[i], slot))
			share_leave(&shm->shares[i], slot);
	for (d = 0; d < SIM_MAX_DEVICES; d++)
		shm->used[d] -= sp->used[d];
	/* The futex words may be in use by the slot's own threads. */
	__atomic_store_n(&sp->locked, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sp->inflight, 0, __ATOMIC_SEQ_CST);
	sp->pid = 0;
	sp->start = 0;
	sp->ckstate = CK_RUNNING;
	sp->locker = 0;
	sp->locker_start = 0;
	memset(sp->used, 0, sizeof(sp->used));
	memset(sp->parked, 0, sizeof(sp->parked));
}

/*
 * Return the memory of processes that have died. Done whenever someone
 * reads the use or would be refused memory, not on every charge: that is
 * when it can be observed, and it keeps a fitting allocation cheap.
 */
static void
state_reap(void)
{
	int i;

	for (i = 0; i < (int)shm->nslots; i++) {
		struct state_proc *sp = &shm->procs[i];

		if (sp->pid != 0 && i != self_slot && !proc_alive(sp))
			slot_clear(sp);
	}
}

/* After a holder died mid-update, the per-process table is the truth. */
static void
state_repair(void)
{
	unsigned d;
	int i;

	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		shm->used[d] = 0;
		for (i = 0; i < (int)shm->nslots; i++)
			shm->used[d] += shm->procs[i].used[d];
	}
	for (i = 0; i < STATE_SHARES; i++)
		if (shm->shares[i].ino != 0 && shm->shares[i].owner == 0)
			shm->used[shm->shares[i].phys] += shm->shares[i].bytes;
}

static int
state_lock(void)
{
	int r = pthread_mutex_lock(&shm->lock);

	if (r == EOWNERDEAD) {
		state_repair();
		r = pthread_mutex_consistent(&shm->lock);
	}
	if (r != 0) {
		errno = r;
		log_warn("cannot lock the simulated devices");
		return -1;
	}
	return 0;
}

static void
state_unlock(void)
{
	pthread_mutex_unlock(&shm->lock);
}

/* This process's slot, taken on first use; -1 if the table is full. */
static int
self_get(void)
{
	pid_t pid = getpid();
	uint64_t start;
	int i, pass;

	if (self_slot >= 0)
		return self_slot;
	if (proc_start(pid, &start) < 0) {
		log_warnx("cannot read the start time of pid %d", (int)pid);
		return -1;
	}
	/* Our pid's memory, if any, belongs to an earlier process or to this
	 * one before it called exec(): either way it is gone. */
	for (i = 0; i < (int)shm->nslots; i++)
		if (shm->procs[i].pid == pid)
			slot_clear(&shm->procs[i]);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < STATE_PROCS; i++) {
			struct state_proc *sp = &shm->procs[i];

			if (sp->pid != 0)
				continue;
			sp->pid = pid;
			sp->start = start;
			if ((uint32_t)i >= shm->nslots)
				shm->nslots = (uint32_t)i + 1;
			return self_slot = i;
		}
		state_reap();
	}
	log_warnx("more than %d processes hold simulated device memory",
	    STATE_PROCS);
	return -1;
}

static void
shared_init(struct state_shared *s, unsigned ndev, const uint64_t *cap)
{
	pthread_mutexattr_t attr;
	unsigned d;

	memset(s, 0, sizeof(*s));
	s->magic = STATE_MAGIC;
	s->size = sizeof(*s);
	s->ndev = ndev;
	for (d = 0; d < ndev; d++)
		s->capacity[d] = cap[d];
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
}

static struct state_shared *
shared_private(unsigned ndev, const uint64_t *cap)
{
	/* Shared, not private: a forked child uses the same devices. */
	struct state_shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED) {
		log_warn("cannot map the simulated devices");
		return NULL;
	}
	shared_init(s, ndev, cap);
	return s;
}

static struct state_shared *
shared_open(const char *name, unsigned ndev, const uint64_t *cap)
{
	struct state_shared *s = NULL;
	char path[NAME_MAX];
	struct stat st;
	int fd;

	if (strchr(name, '/') != NULL || (size_t)snprintf(path, sizeof(path),
	    "/simcuda-%s", name) >= sizeof(path)) {
		log_warnx("bad SIMCUDA_STATE '%s'", name);
		return NULL;
	}
	if ((fd = shm_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0) {
		log_warn("cannot open '/dev/shm%s'", path);
		return NULL;
	}
	if (flock(fd, LOCK_EX) < 0) {
		log_warn("cannot lock '/dev/shm%s'", path);
		goto out_close;
	}
	if (fstat(fd, &st) < 0) {
		log_warn("cannot stat '/dev/shm%s'", path);
		goto out_unlock;
	}
	if (st.st_size == 0) {
		(void)fchmod(fd, 0666);	/* every user may use the GPU */
		if (ftruncate(fd, sizeof(*s)) < 0) {
			log_warn("cannot size '/dev/shm%s'", path);
			goto out_unlock;
		}
	} else if ((size_t)st.st_size != sizeof(*s))
		goto out_foreign;
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		log_warn("cannot map '/dev/shm%s'", path);
		s = NULL;
		goto out_unlock;
	}
	if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
		shared_init(s, ndev, cap);
	else if (s->magic != STATE_MAGIC || s->size != sizeof(*s)) {
		munmap(s, sizeof(*s));
		s = NULL;
		goto out_foreign;
	}
	goto out_unlock;
out_foreign:
	log_warnx("'/dev/shm%s' was made by another simcuda build: delete it",
	    path);
out_unlock:
	/* Explicitly: the mapping keeps the file open, and the lock with it. */
	flock(fd, LOCK_UN);
out_close:
	close(fd);
	return s;
}

static void
config_compare(const char *name, unsigned ndev, const uint64_t *cap)
{
	unsigned d;

	if (ndev == shm->ndev) {
		for (d = 0; d < ndev && cap[d] == shm->capacity[d]; d++)
			;
		if (d == ndev)
			return;
	}
	log_warnx("SIMCUDA_DEVICES differs from the devices of state '%s': "
	    "using those", name);
}

int
state_attach(const char *name, unsigned ndev, const uint64_t *cap)
{
	if (shm != NULL)	/* again after fork: same machine */
		return 0;
	if (name == NULL || *name == '\0')
		shm = shared_private(ndev, cap);
	else if ((shm = shared_open(name, ndev, cap)) != NULL)
		config_compare(name, ndev, cap);
	return shm != NULL ? 0 : -1;
}

unsigned
state_ndev(void)
{
	return shm->ndev;
}

uint64_t
state_capacity(int phys)
{
	return shm->capacity[phys];
}

static int
fits(int phys, uint64_t bytes)
{
	return shm->used[phys] <= shm->capacity[phys] &&
	    bytes <= shm->capacity[phys] - shm->used[phys];
}

int
state_charge(int phys, uint64_t bytes)
{
	int slot, r = -1;

	if (state_lock() < 0)
		return -1;
	if ((slot = self_get()) < 0)
		goto out;
	if (!fits(phys, bytes))
		state_reap();
	if (!fits(phys, bytes))
		goto out;
	shm->used[phys] += bytes;
	shm->procs[slot].used[phys] += bytes;
	r = 0;
out:
	state_unlock();
	return r;
}

void
state_uncharge(int phys, uint64_t bytes)
{
	if (self_slot < 0 || state_lock() < 0)
		return;
	shm->used[phys] -= bytes;
	shm->procs[self_slot].used[phys] -= bytes;
	state_unlock();
}

void
state_meminfo(int phys, uint64_t *used, uint64_t *total)
{
	*total = shm->capacity[phys];
	*used = *total;		/* if the lock fails, say nothing is free */
	if (state_lock() < 0)
		return;
	state_reap();
	*used = shm->used[phys];
	state_unlock();
}

int
state_procs(int phys, pid_t *pids, uint64_t *bytes, int max)
{
	int i, n = 0;

	if (state_lock() < 0)
		return -1;
	state_reap();
	for (i = 0; i < (int)shm->nslots; i++) {
		const struct state_proc *sp = &shm->procs[i];

		if (sp->pid == 0 || sp->used[phys] == 0)
			continue;
		if (n < max) {
			pids[n] = sp->pid;
			bytes[n] = sp->used[phys];
		}
		n++;
	}
	state_unlock();
	return n;
}

/* In a forked child: the slot is the parent's. */
void
state_forget(void)
{
	self_slot = -1;
	__atomic_store_n(&self_proc, NULL, __ATOMIC_RELEASE);
}

/* A process that exits returns its memory at once, as the real one does. */
__attribute__((destructor)) static void
state_exit(void)
{
	if (shm == NULL || self_slot < 0 || state_lock() < 0)
		return;
	if (shm->procs[self_slot].pid == getpid())
		slot_clear(&shm->procs[self_slot]);
	self_slot = -1;
	__atomic_store_n(&self_proc, NULL, __ATOMIC_RELEASE);
	state_unlock();
}

static struct state_share *
share_find(uint64_t dev, uint64_t ino)
{
	int i;

	for (i = 0; i < STATE_SHARES; i++)
		if (shm->shares[i].ino == ino && shm->shares[i].dev == dev)
			return &shm->shares[i];
	return NULL;
}

int
state_share_open(uint64_t dev, uint64_t ino, int phys, uint64_t bytes)
{
	struct state_share *sh;
	int slot, r = -1;

	if (ino == 0 || state_lock() < 0)
		return -1;
	if ((slot = self_get()) < 0)
		goto out;
	/* A record of this inode is a dead holder's, of a memfd since
	 * closed and its inode number reused. */
	if (share_find(dev, ino) != NULL)
		state_reap();
	if (share_find(dev, ino) != NULL || (sh = share_find(0, 0)) == NULL)
		goto out;
	sh->dev = dev;
	sh->ino = ino;
	sh->bytes = bytes;
	sh->phys = phys;
	sh->owner = slot + 1;
	sh->holder[0] = slot + 1;
	r = (int)(sh - shm->shares);
out:
	state_unlock();
	return r;
}

int
state_share_join(uint64_t dev, uint64_t ino, int *phys, uint64_t *bytes)
{
	struct state_share *sh;
	int slot, i, r = -1;

	if (ino == 0 || state_lock() < 0)
		return -2;
	if ((slot = self_get()) < 0) {
		r = -2;
		goto out;
	}
	if ((sh = share_find(dev, ino)) == NULL)
		goto out;
	r = -2;
	for (i = 0; i < SHARE_HOLDERS && !share_held(sh, slot); i++)
		if (sh->holder[i] == 0)
			sh->holder[i] = slot + 1;
	if (!share_held(sh, slot))
		goto out;
	*phys = sh->phys;
	*bytes = sh->bytes;
	r = (int)(sh - shm->shares);
out:
	state_unlock();
	return r;
}

void
state_share_leave(int share)
{
	struct state_share *sh;

	if (self_slot < 0 || share < 0 || share >= STATE_SHARES ||
	    state_lock() < 0)
		return;
	sh = &shm->shares[share];
	if (sh->ino != 0 && share_held(sh, self_slot))
		share_leave(sh, self_slot);
	state_unlock();
}

/*
 * Join the table at cuInit, so that the checkpoint operations find every
 * initialised process, even one that holds no memory yet.
 */
void
state_join(void)
{
	int slot;

	if (shm == NULL || state_lock() < 0)
		return;
	if ((slot = self_get()) >= 0)
		__atomic_store_n(&self_proc, &shm->procs[slot], __ATOMIC_RELEASE);
	state_unlock();
}

static long
futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	/* Not FUTEX_PRIVATE_FLAG: the words are shared between processes. */
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* A call of this process leaves; the last one out wakes a waiting Lock. */
static void
gate_out(struct state_proc *sp)
{
	if (__atomic_sub_fetch(&sp->inflight, 1, __ATOMIC_SEQ_CST) == 0 &&
	    __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST))
		futex(&sp->inflight, FUTEX_WAKE, INT_MAX, NULL);
}

/*
 * The increment of inflight and the load of locked pair with Lock's store
 * of locked and load of inflight (all sequentially consistent): either
 * Lock sees the call in flight and waits for it, or the call sees the
 * lock and waits for Unlock.
 */
void *
gate_enter(void)
{
	struct state_proc *sp;
	uint32_t v;

	if (gate_depth++ > 0)	/* made by a driver call: part of it */
		return NULL;
	if ((sp = __atomic_load_n(&self_proc, __ATOMIC_ACQUIRE)) == NULL)
		return NULL;
	for (;;) {
		__atomic_add_fetch(&sp->inflight, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST))
			return sp;
		gate_out(sp);
		while ((v = __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST)))
			futex(&sp->locked, FUTEX_WAIT, v, NULL);
	}
}

void
gate_leave(void **entered)
{
	gate_depth--;
	/* After fork the child's slot is another one, or none. */
	if (*entered != NULL &&
	    *entered == __atomic_load_n(&self_proc, __ATOMIC_ACQUIRE))
		gate_out(*entered);
}

/* The slot of live process pid, with the lock held; NULL if none. */
static struct state_proc *
proc_find(pid_t pid)
{
	int i;

	for (i = 0; i < (int)shm->nslots; i++) {
		struct state_proc *sp = &shm->procs[i];

		if (sp->pid != pid)
			continue;
		if (i == self_slot || proc_alive(sp))
			return sp;
		slot_clear(sp);
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

	if (shm == NULL || state_lock() < 0)
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
	int r;

	if (proc_start(getpid(), &self_start) < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if ((sp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (sp->ckstate != CK_RUNNING) {
		state_unlock();
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	start = sp->start;
	sp->ckstate = CK_LOCKING;
	sp->locker = getpid();
	sp->locker_start = self_start;
	__atomic_store_n(&sp->locked, 1, __ATOMIC_SEQ_CST);
	state_unlock();

	r = ck_drain(sp, pid, start, timeout_ms);

	if (state_lock() < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if (sp->pid != pid || sp->start != start || sp->ckstate != CK_LOCKING ||
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
	CUresult r = CUDA_SUCCESS;

	if ((sp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (sp->ckstate == CK_LOCKED)
		ck_unlock(sp);
	else
		r = CUDA_ERROR_ILLEGAL_STATE;
	state_unlock();
	return r;
}

/* Give the process's device memory back to the machine, and remember it. */
CUresult
state_ck_checkpoint(pid_t pid)
{
	struct state_proc *sp;
	unsigned d;

	if ((sp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (sp->ckstate != CK_LOCKED) {
		state_unlock();
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		sp->parked[d] = sp->used[d];
		shm->used[d] -= sp->used[d];
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

	for (d = 0; d < shm->ndev; d++)
		if (sp->parked[d] != 0 && !fits((int)d, sp->parked[d]))
			return 0;
	return 1;
}

/* Charge the remembered memory again, on every device or on none. */
CUresult
state_ck_restore(pid_t pid)
{
	struct state_proc *sp;
	unsigned d;

	if ((sp = ck_find(pid)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (sp->ckstate != CK_CHECKPOINTED) {
		state_unlock();
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	if (!ck_fits(sp))
		state_reap();
	if (!ck_fits(sp)) {
		state_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		shm->used[d] += sp->parked[d];
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

