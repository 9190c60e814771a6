/*
 * Device memory accounting shared by every process of one simulated
 * machine: the segment (segment.h) that holds capacity and use per
 * physical device and what each process holds, so that a process that
 * dies, even by SIGKILL, loses its memory (SIMCUDA_RELEASE_DELAY_MS
 * after its death is noticed). Its exported VMM allocations are
 * share.c's; the gate and the checkpoint state, gate.c's and ckstate.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "segment.h"
#include "units.h"

#define STATE_MAGIC	0x53494d43u	/* "SIMC" */
#define RELEASE_MAX_MS	86400000u	/* a day */

struct state_shared *state_shm;
int state_self_slot = -1;
struct state_proc *state_self_proc;
static uint32_t release_ms;	/* SIMCUDA_RELEASE_DELAY_MS */

int
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

/* The initial pid namespace's inode (PROC_PID_INIT_INO, linux/proc_ns.h). */
#define PIDNS_INIT	0xEFFFFFFCu

/* This process's pid namespace, 0 if it cannot be told. */
static uint64_t
pidns_self(void)
{
	static uint64_t ns;
	struct stat st;

	if (ns == 0 && stat("/proc/self/ns/pid", &st) == 0)
		ns = (uint64_t)st.st_ino;
	return ns;
}

/* The last pid of /proc/PID/status's NSpid line: as its own namespace has it. */
static pid_t
nspid_of(pid_t pid)
{
	char path[64], buf[2048], *p, *q;
	ssize_t n;
	long v = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nNSpid:")) == NULL)
		return 0;
	for (p += 7; *p != '\n' && *p != '\0'; p = q) {
		errno = 0;
		v = strtol(p, &q, 10);
		if (q == p || errno != 0)
			break;
	}
	return (pid_t)v;
}

/*
 * What this process calls the process of slot sp, whose pid its own pid
 * namespace gave: the same pid in the same namespace; else, from the
 * initial namespace (as the real driver and NVML see every process, and
 * the daemon does), the process of that start time whose innermost pid it
 * is (remembered per slot); 0 when it cannot be seen from here.
 */
pid_t
slot_pid(const struct state_proc *sp)
{
	static struct { int32_t pid; uint64_t start; pid_t here; }
	    seen[STATE_PROCS];
	size_t i = (size_t)(sp - state_shm->procs);
	uint64_t start;
	struct dirent *e;
	pid_t here = 0;
	DIR *d;

	if (sp->pid == 0 || sp->pidns == 0 || sp->pidns == pidns_self())
		return sp->pid;
	if (pidns_self() != PIDNS_INIT || i >= STATE_PROCS)
		return 0;
	if (seen[i].pid == sp->pid && seen[i].start == sp->start &&
	    proc_start(seen[i].here, &start) == 0 && start == sp->start)
		return seen[i].here;
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (here == 0 && (e = readdir(d)) != NULL) {
		char *end;
		long p = strtol(e->d_name, &end, 10);

		if (end != e->d_name && *end == '\0' && p > 0 &&
		    p <= INT32_MAX && proc_start((pid_t)p, &start) == 0 &&
		    start == sp->start && nspid_of((pid_t)p) == sp->pid)
			here = (pid_t)p;
	}
	closedir(d);
	seen[i].pid = sp->pid;
	seen[i].start = sp->start;
	seen[i].here = here;
	return here;
}

int
proc_alive(const struct state_proc *sp)
{
	uint64_t start;
	pid_t pid;

	/* In another namespace, unseen from here: not ours to declare dead. */
	if (sp->pidns != 0 && sp->pidns != pidns_self() &&
	    pidns_self() != PIDNS_INIT)
		return 1;
	pid = slot_pid(sp);
	return pid != 0 && proc_start(pid, &start) == 0 && start == sp->start;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Forget the slot's process: no pid, no checkpoint state, no lock. */
static void
slot_unpid(struct state_proc *sp)
{
	/* The futex words may be in use by the slot's own threads. */
	__atomic_store_n(&sp->locked, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sp->inflight, 0, __ATOMIC_SEQ_CST);
	sp->pid = 0;
	sp->pidns = 0;
	sp->start = 0;
	sp->ckstate = CK_RUNNING;
	sp->locker = 0;
	sp->locker_start = 0;
	memset(sp->parked, 0, sizeof(sp->parked));
}

void
slot_clear(struct state_proc *sp)
{
	unsigned d;

	share_drop_slot((int)(sp - state_shm->procs));
	for (d = 0; d < SIM_MAX_DEVICES; d++)
		state_shm->used[d] -= sp->used[d];
	slot_unpid(sp);
	sp->release_ms = 0;
	sp->release_at = 0;
	memset(sp->used, 0, sizeof(sp->used));
	memset(sp->cg, 0, sizeof(sp->cg));
}

/*
 * On a real GPU a dead process's memory comes back some time after it is
 * gone (issue 20). The slot holds it meanwhile for no pid, so that NVML
 * lists no one for it and a new process of the same pid is not taken for
 * it. Exported VMM memory follows its own rules (share.c); what letting
 * go of it gives back to the device is held here too. A dead checkpointed
 * process held nothing on the devices: it owes nothing.
 */
void
slot_die(struct state_proc *sp)
{
	uint64_t before[SIM_MAX_DEVICES];
	unsigned d;

	if (sp->release_ms == 0) {
		slot_clear(sp);
		return;
	}
	memcpy(before, state_shm->used, sizeof(before));
	share_drop_slot((int)(sp - state_shm->procs));
	for (d = 0; d < SIM_MAX_DEVICES; d++) {
		int64_t freed = (int64_t)(before[d] - state_shm->used[d]);

		if (freed > 0) {
			sp->used[d] += (uint64_t)freed;
			state_shm->used[d] += (uint64_t)freed;
		}
	}
	slot_unpid(sp);
	sp->release_at = now_ns() + (uint64_t)sp->release_ms * 1000000u;
}

/*
 * Return the memory of processes that have died, once their delay has
 * passed. Done whenever someone reads the use or would be refused memory,
 * not on every charge: that is when it can be observed, and it keeps a
 * fitting allocation cheap. So a death is noticed lazily, and the delay
 * counts from then.
 */
void
state_reap(void)
{
	uint64_t now = 0;
	int i;

	for (i = 0; i < (int)state_shm->nslots; i++) {
		struct state_proc *sp = &state_shm->procs[i];

		if (sp->pid != 0) {
			if (i != state_self_slot && !proc_alive(sp))
				slot_die(sp);
			continue;
		}
		if (sp->release_at == 0)
			continue;
		if (now == 0)
			now = now_ns();
		if (now >= sp->release_at)
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
		state_shm->used[d] = 0;
		for (i = 0; i < (int)state_shm->nslots; i++)
			state_shm->used[d] += state_shm->procs[i].used[d];
	}
	share_repair();
}

int
state_lock(void)
{
	int r = pthread_mutex_lock(&state_shm->lock);

	if (r == EOWNERDEAD) {
		state_repair();
		r = pthread_mutex_consistent(&state_shm->lock);
	}
	if (r != 0) {
		errno = r;
		log_warn("cannot lock the simulated devices");
		return -1;
	}
	return 0;
}

void
state_unlock(void)
{
	pthread_mutex_unlock(&state_shm->lock);
}

int
state_self_get(void)
{
	pid_t pid = getpid();
	uint64_t start;
	int i, pass;

	if (state_self_slot >= 0)
		return state_self_slot;
	if (proc_start(pid, &start) < 0) {
		log_warnx("cannot read the start time of pid %d", (int)pid);
		return -1;
	}
	/* Our pid's memory, if any, belongs to an earlier process or to this
	 * one before it called exec(): either way it is gone. */
	for (i = 0; i < (int)state_shm->nslots; i++)
		if (state_shm->procs[i].pid == pid &&
		    state_shm->procs[i].pidns == pidns_self())
			slot_die(&state_shm->procs[i]);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < STATE_PROCS; i++) {
			struct state_proc *sp = &state_shm->procs[i];

			if (sp->pid != 0 || sp->release_at != 0)
				continue;
			sp->pid = pid;
			sp->pidns = pidns_self();
			sp->start = start;
			sp->release_ms = release_ms;
			if ((uint32_t)i >= state_shm->nslots)
				state_shm->nslots = (uint32_t)i + 1;
			return state_self_slot = i;
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

	if (ndev == state_shm->ndev) {
		for (d = 0; d < ndev && cap[d] == state_shm->capacity[d]; d++)
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
	if (state_shm != NULL)	/* again after fork: same machine */
		return 0;
	if (name == NULL || *name == '\0')
		state_shm = shared_private(ndev, cap);
	else if ((state_shm = shared_open(name, ndev, cap)) != NULL)
		config_compare(name, ndev, cap);
	return state_shm != NULL ? 0 : -1;
}

unsigned
state_ndev(void)
{
	return state_shm->ndev;
}

uint64_t
state_capacity(int phys)
{
	return state_shm->capacity[phys];
}

int
state_fits(int phys, uint64_t bytes)
{
	return state_shm->used[phys] <= state_shm->capacity[phys] &&
	    bytes <= state_shm->capacity[phys] - state_shm->used[phys];
}

int
state_charge(int phys, uint64_t bytes)
{
	int slot, r = -1;

	if (state_lock() < 0)
		return -1;
	if ((slot = state_self_get()) < 0)
		goto out;
	/* The device's room, and the driver's walls (memlimits.c). */
	if (!state_fits(phys, bytes) ||
	    !limits_fit(phys, &state_shm->procs[slot], bytes))
		state_reap();
	if (!state_fits(phys, bytes) ||
	    !limits_fit(phys, &state_shm->procs[slot], bytes))
		goto out;
	state_shm->used[phys] += bytes;
	state_shm->procs[slot].used[phys] += bytes;
	r = 0;
out:
	state_unlock();
	return r;
}

void
state_uncharge(int phys, uint64_t bytes)
{
	if (state_self_slot < 0 || state_lock() < 0)
		return;
	state_shm->used[phys] -= bytes;
	state_shm->procs[state_self_slot].used[phys] -= bytes;
	state_unlock();
}

void
state_meminfo(int phys, uint64_t *used, uint64_t *total)
{
	*total = state_shm->capacity[phys];
	*used = *total;		/* if the lock fails, say nothing is free */
	if (state_lock() < 0)
		return;
	state_reap();
	*used = state_shm->used[phys];
	state_unlock();
}

int
state_procs(int phys, pid_t *pids, uint64_t *bytes, int max)
{
	int i, n = 0;

	if (state_lock() < 0)
		return -1;
	state_reap();
	for (i = 0; i < (int)state_shm->nslots; i++) {
		const struct state_proc *sp = &state_shm->procs[i];

		if (sp->pid == 0 || sp->used[phys] == 0)
			continue;
		if (n < max) {
			/* As the real NVML: the pid the initial namespace
			 * gives it, where this process can tell. */
			pids[n] = slot_pid(sp) != 0 ? slot_pid(sp) : sp->pid;
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
	state_self_slot = -1;
	__atomic_store_n(&state_self_proc, NULL, __ATOMIC_RELEASE);
}

/*
 * A process that exits returns its memory at once; with a release delay
 * its death is left to be noticed, as a kill's is, and the delay counts
 * from then.
 */
__attribute__((destructor)) static void
state_exit(void)
{
	struct state_proc *sp;

	if (state_shm == NULL || state_self_slot < 0 || state_lock() < 0)
		return;
	sp = &state_shm->procs[state_self_slot];
	if (sp->pid == getpid() && sp->release_ms == 0)
		slot_clear(sp);
	state_self_slot = -1;
	__atomic_store_n(&state_self_proc, NULL, __ATOMIC_RELEASE);
	state_unlock();
}

/* SIMCUDA_RELEASE_DELAY_MS, milliseconds: a bad value is 0, said once. */
static void
release_parse(void)
{
	const char *s = getenv("SIMCUDA_RELEASE_DELAY_MS");
	uint64_t ms = 0;

	if (s != NULL && decimal_parse(s, RELEASE_MAX_MS, &ms) < 0) {
		log_warnx("bad SIMCUDA_RELEASE_DELAY_MS '%s': using 0", s);
		ms = 0;
	}
	release_ms = (uint32_t)ms;
}

/*
 * Join the table at cuInit, so that the checkpoint operations find every
 * initialised process, even one that holds no memory yet, with the cgroups
 * it is in, for the driver's memory limits (memlimits.c).
 */
void
state_join(void)
{
	uint64_t cg[STATE_CG_DEPTH];
	int slot;

	release_parse();
	limits_chain(cg);
	if (state_shm == NULL || state_lock() < 0)
		return;
	if ((slot = state_self_get()) >= 0) {
		memcpy(state_shm->procs[slot].cg, cg, sizeof(cg));
		__atomic_store_n(&state_self_proc, &state_shm->procs[slot],
		    __ATOMIC_RELEASE);
	}
	state_unlock();
}
