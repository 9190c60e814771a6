/*
 * Checks of the simulated driver's checkpoint API (cuCheckpointProcess*),
 * linked against it: a controller locks, checkpoints, restores and unlocks
 * a target process it starts. Prints one line per failed check and exits
 * 1 if any failed, else 0.
 *
 *   sim_checkpoint_linked          run every check (needs SIMCUDA_STATE
 *                                  and SIMCUDA_DEVICES=64Mi)
 *   sim_checkpoint_linked absent   the checks for SIMCUDA_NO_CHECKPOINT=1
 *   sim_checkpoint_linked rate     the time Checkpoint and Restore take
 *                                  at SIMCUDA_CKPT_GBPS=0.1 (set here)
 *   sim_checkpoint_linked ratein   the time Restore takes at
 *                                  SIMCUDA_CKPT_IN_GBPS=0.1 alone
 *   sim_checkpoint_linked copyrate the time copies between pinned host
 *                                  memory and the device take at
 *                                  SIMCUDA_COPY_GBPS=0.1 (set here)
 *   sim_checkpoint_linked pinrate  the time pinning host memory takes at
 *                                  SIMCUDA_PIN_GBPS=0.1 (set here)
 *   sim_checkpoint_linked target   the target: commands on stdin, one
 *                                  answer line per command on stdout
 *   sim_checkpoint_linked locker PID  lock PID and exit, leaving it locked
 */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MiB		(1ull << 20)
#define CAPACITY	(64 * MiB)	/* SIMCUDA_DEVICES */
#define TARGET_BYTES	(40 * MiB)	/* what the target holds */

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static long long
now_ms(void)
{
	return now_us() / 1000;
}

/* One line from fd, unbuffered (the rest stays in the pipe); -1 at EOF. */
static int
line_read(int fd, char *buf, size_t len)
{
	size_t n = 0;
	char c;

	while (read(fd, &c, 1) == 1) {
		if (c == '\n') {
			buf[n] = '\0';
			return 0;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	return -1;
}

static void
line_write(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
line_write(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) != n)
		_exit(3);
}

/* --- the target ---------------------------------------------------- */

static unsigned char *pattern;

/* Inside cuLaunchHostFunc: a driver call that lasts until "release". */
static void
hold_fn(void *arg)
{
	char buf[64];

	(void)arg;
	line_write(1, "holding\n");
	if (line_read(0, buf, sizeof(buf)) < 0 || strcmp(buf, "release") != 0)
		_exit(4);
}

static int
target(void)
{
	CUcontext ctx;
	CUdeviceptr d;
	unsigned char *back;
	char cmd[64] = "";
	size_t i;

	if (cuInit(0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuMemAlloc(&d, TARGET_BYTES) != CUDA_SUCCESS)
		return 2;
	pattern = malloc(TARGET_BYTES);
	back = malloc(TARGET_BYTES);
	if (pattern == NULL || back == NULL)
		return 2;
	for (i = 0; i < TARGET_BYTES; i++)
		pattern[i] = (unsigned char)(i * 7 + (i >> 12));
	if (cuMemcpyHtoD(d, pattern, TARGET_BYTES) != CUDA_SUCCESS)
		return 2;
	line_write(1, "ready %llx\n", (unsigned long long)d);
	while (line_read(0, cmd, sizeof(cmd)) == 0) {
		if (strcmp(cmd, "check") == 0) {
			CUresult r = cuMemcpyDtoH(back, d, TARGET_BYTES);

			line_write(1, "check %d %s %llx\n", (int)r,
			    memcmp(back, pattern, TARGET_BYTES) == 0 ?
			    "same" : "differs", (unsigned long long)d);
		} else if (strcmp(cmd, "sync") == 0)
			line_write(1, "sync %d\n", (int)cuCtxSynchronize());
		else if (strcmp(cmd, "hold") == 0)
			line_write(1, "hold %d\n",
			    (int)cuLaunchHostFunc(NULL, hold_fn, NULL));
		else if (strcmp(cmd, "exit") == 0)
			break;
	}
	free(back);
	free(pattern);
	return cuMemFree(d) == CUDA_SUCCESS && strcmp(cmd, "exit") == 0 ?
	    0 : 2;
}

/* --- the controller ------------------------------------------------ */

struct child {
	pid_t	pid;
	int	in;	/* its stdin */
	int	out;	/* its stdout */
};

static int
child_start(struct child *c)
{
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -1;
	if ((c->pid = fork()) < 0)
		return -1;
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl("/proc/self/exe", "sim_checkpoint_linked", "target",
		    (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	c->out = from[0];
	return 0;
}

/* Whether the child has written something within ms milliseconds. */
static int
child_said(const struct child *c, int ms)
{
	struct pollfd p = { .fd = c->out, .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

/* Its next line, waiting at most 10 s (a hang is a failure, not a hang). */
static int
child_line(const struct child *c, char *buf, size_t len)
{
	if (!child_said(c, 10000))
		return -1;
	return line_read(c->out, buf, len);
}

/* The syscall thread tid of pid is in ("running" is not a number): -1. */
static long
syscall_of(pid_t pid, pid_t tid)
{
	char path[64], buf[256], *end;
	long nr;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
	    (int)tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	nr = strtol(buf, &end, 10);
	return end == buf ? -1 : nr;
}

/* Wait (10 s at most) until thread tid of pid sleeps on a futex. */
static int
wait_futex(pid_t pid, pid_t tid)
{
	long long deadline = now_ms() + 10000;
	struct timespec ms = { 0, 1000000 };

	while (syscall_of(pid, tid) != SYS_futex) {
		if (now_ms() > deadline)
			return -1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

static uint64_t
free_bytes(void)
{
	size_t fr = 0, total = 0;

	if (cuMemGetInfo(&fr, &total) != CUDA_SUCCESS)
		return 0;
	return fr;
}

static CUprocessState
state_of(pid_t pid)
{
	CUprocessState s = (CUprocessState)-1;

	if (cuCheckpointProcessGetState(pid, &s) != CUDA_SUCCESS)
		return (CUprocessState)-1;
	return s;
}

struct lock_call {
	pid_t		pid;
	unsigned	timeout_ms;
	pid_t		tid;		/* the thread making the call */
	CUresult	r;
};

static void *
lock_thread(void *arg)
{
	struct lock_call *l = arg;
	CUcheckpointLockArgs a = { .timeoutMs = l->timeout_ms };

	__atomic_store_n(&l->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	l->r = cuCheckpointProcessLock(l->pid, &a);
	return NULL;
}

/* Errors that need no target, or the wrong one. */
static void
check_args(pid_t pid)
{
	CUcheckpointLockArgs la = { 0 };
	CUcheckpointRestoreArgs ra = { 0 };
	CUcheckpointUnlockArgs ua = { 0 };
	CUcheckpointGpuPair pair = { 0 };
	CUprocessState s;
	int tid = 0;
	void *fn = NULL;
	CUdriverProcAddressQueryResult qr;

	EXPECT(cuCheckpointProcessGetState(pid, NULL),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuCheckpointProcessGetRestoreThreadId(pid, NULL),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuCheckpointProcessGetRestoreThreadId(pid, &tid));
	CHECK(tid == pid, "restore thread %d, want the pid %d", tid, pid);
	/* Not a CUDA process: the shell that started us; and no process. */
	EXPECT(cuCheckpointProcessGetState(getppid(), &s),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuCheckpointProcessLock(0x3ffffff0, NULL),
	    CUDA_ERROR_INVALID_VALUE);
	la.reserved0 = 1;
	EXPECT(cuCheckpointProcessLock(pid, &la), CUDA_ERROR_INVALID_VALUE);
	la.reserved0 = 0;
	la.reserved1[6] = 1;
	EXPECT(cuCheckpointProcessLock(pid, &la), CUDA_ERROR_INVALID_VALUE);
	ua.reserved[3] = 1;
	EXPECT(cuCheckpointProcessUnlock(pid, &ua), CUDA_ERROR_INVALID_VALUE);
	ra.gpuPairsCount = 1;
	EXPECT(cuCheckpointProcessRestore(pid, &ra), CUDA_ERROR_INVALID_VALUE);
	ra.gpuPairs = &pair;
	EXPECT(cuCheckpointProcessRestore(pid, &ra), CUDA_ERROR_NOT_SUPPORTED);
	/* Wrong states while RUNNING. */
	CHECK(state_of(pid) == CU_PROCESS_STATE_RUNNING, "not running");
	EXPECT(cuCheckpointProcessUnlock(pid, NULL), CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(cuCheckpointProcessCheckpoint(pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(cuCheckpointProcessRestore(pid, NULL), CUDA_ERROR_ILLEGAL_STATE);
	OK(cuGetProcAddress_v2("cuCheckpointProcessLock", &fn, 12080, 0, &qr));
	CHECK(fn == (void *)cuCheckpointProcessLock, "wrong function");
	EXPECT(cuGetProcAddress_v2("cuCheckpointProcessLock", &fn, 12000, 0,
	    &qr), CUDA_ERROR_NOT_FOUND);
	CHECK(qr == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "status %d",
	    (int)qr);
}

/* Lock, Checkpoint, Restore (refused, then not), Unlock; the target's
 * call made while locked waits for Unlock. */
static void
check_cycle(const struct child *c, uint64_t dptr)
{
	CUdeviceptr other;
	uint64_t before, during;
	unsigned long long got = 0;
	char line[128], same[16];
	int rc = -1;

	before = free_bytes();
	CHECK(before == CAPACITY - TARGET_BYTES, "free %llu before",
	    (unsigned long long)before);
	EXPECT(cuMemAlloc(&other, TARGET_BYTES), CUDA_ERROR_OUT_OF_MEMORY);

	OK(cuCheckpointProcessLock(c->pid, NULL));
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_LOCKED, "not locked");
	EXPECT(cuCheckpointProcessLock(c->pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(cuCheckpointProcessRestore(c->pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);

	/* The target's next call blocks in the gate, asleep on a futex. */
	line_write(c->in, "check\n");
	CHECK(wait_futex(c->pid, c->pid) == 0, "target never blocked");
	CHECK(!child_said(c, 50), "target's call returned while locked");

	OK(cuCheckpointProcessCheckpoint(c->pid, NULL));
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_CHECKPOINTED,
	    "not checkpointed");
	EXPECT(cuCheckpointProcessCheckpoint(c->pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(cuCheckpointProcessUnlock(c->pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(cuCheckpointProcessLock(c->pid, NULL),
	    CUDA_ERROR_ILLEGAL_STATE);
	during = free_bytes();
	CHECK(during == CAPACITY, "free %llu while checkpointed",
	    (unsigned long long)during);

	/* Its memory is taken: Restore is refused and changes nothing. */
	OK(cuMemAlloc(&other, TARGET_BYTES));
	EXPECT(cuCheckpointProcessRestore(c->pid, NULL),
	    CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_CHECKPOINTED,
	    "not checkpointed after a failed restore");
	CHECK(free_bytes() == CAPACITY - TARGET_BYTES, "free after refusal");
	OK(cuMemFree(other));
	OK(cuCheckpointProcessRestore(c->pid, NULL));
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_LOCKED,
	    "not locked after restore");
	CHECK(free_bytes() == before, "free %llu after restore",
	    (unsigned long long)free_bytes());
	CHECK(!child_said(c, 0), "target's call returned before unlock");

	OK(cuCheckpointProcessUnlock(c->pid, NULL));
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_RUNNING, "not running");
	if (child_line(c, line, sizeof(line)) == 0)
		sscanf(line, "check %d %15s %llx", &rc, same, &got);
	CHECK(rc == 0 && strcmp(same, "same") == 0 && got == dptr,
	    "after unlock the target says '%s', want 'check 0 same %llx'",
	    line, (unsigned long long)dptr);
}

/* A call in flight: Lock times out, leaves the target running; without a
 * timeout, Lock waits until the call returns. */
static void
check_inflight(const struct child *c)
{
	struct lock_call l = { .pid = c->pid, .timeout_ms = 200 };
	pthread_t t;
	long long t0;
	char line[128];

	line_write(c->in, "hold\n");
	CHECK(child_line(c, line, sizeof(line)) == 0 &&
	    strcmp(line, "holding") == 0, "target not holding: '%s'", line);
	t0 = now_ms();
	EXPECT(cuCheckpointProcessLock(c->pid,
	    &(CUcheckpointLockArgs){ .timeoutMs = 200 }), CUDA_ERROR_NOT_READY);
	CHECK(now_ms() - t0 >= 190, "lock gave up after %lld ms",
	    now_ms() - t0);
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_RUNNING,
	    "not running after a timed-out lock");

	l.timeout_ms = 0;
	pthread_create(&t, NULL, lock_thread, &l);
	while (__atomic_load_n(&l.tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	CHECK(wait_futex(getpid(), l.tid) == 0, "lock never waited");
	line_write(c->in, "release\n");
	pthread_join(t, NULL);
	EXPECT(l.r, CUDA_SUCCESS);
	CHECK(child_line(c, line, sizeof(line)) == 0 &&
	    strcmp(line, "hold 0") == 0, "held call: '%s'", line);
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_LOCKED, "not locked");
	OK(cuCheckpointProcessUnlock(c->pid, NULL));
	line_write(c->in, "sync\n");
	CHECK(child_line(c, line, sizeof(line)) == 0 &&
	    strcmp(line, "sync 0") == 0, "sync: '%s'", line);
}

/*
 * A controller that dies holding the lock leaves the target locked. It is
 * a process of its own (exec): a child merely forked after this one's
 * cuInit may not use the driver, its checkpoint calls included.
 */
static void
check_locker_dies(const struct child *c)
{
	char target[16];
	pid_t pid;
	int status = -1;

	if ((pid = fork()) == 0)
		_exit(cuCheckpointProcessLock(c->pid, NULL) ==
		    CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
	waitpid(pid, &status, 0);
	CHECK(status == 0, "a child forked after cuInit was not refused");
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_RUNNING,
	    "locked by a refused child");
	snprintf(target, sizeof(target), "%d", (int)c->pid);
	if ((pid = fork()) == 0) {
		execl("/proc/self/exe", "sim_checkpoint_linked", "locker",
		    target, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	CHECK(status == 0, "locker could not lock");
	CHECK(state_of(c->pid) == CU_PROCESS_STATE_LOCKED,
	    "not locked after its locker died");
	OK(cuCheckpointProcessUnlock(c->pid, NULL));
}

/* The locker: lock pid, then exit holding the lock. */
static int
locker(const char *pid)
{
	char *end;
	long n = strtol(pid, &end, 10);

	if (end == pid || *end != '\0' || n <= 0 || n > INT32_MAX) {
		fprintf(stderr, "sim_checkpoint_linked: bad pid '%s'\n", pid);
		return 2;
	}
	return cuInit(0) == CUDA_SUCCESS &&
	    cuCheckpointProcessLock((int)n, NULL) == CUDA_SUCCESS ? 0 : 1;
}

/* A target killed while checkpointed owes nothing and is forgotten. */
static void
check_target_dies(const struct child *c)
{
	int status;

	OK(cuCheckpointProcessLock(c->pid, NULL));
	OK(cuCheckpointProcessCheckpoint(c->pid, NULL));
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	CHECK(free_bytes() == CAPACITY, "free %llu after the target died",
	    (unsigned long long)free_bytes());
	EXPECT(cuCheckpointProcessRestore(c->pid, NULL),
	    CUDA_ERROR_INVALID_VALUE);
	CHECK(state_of(c->pid) == (CUprocessState)-1, "dead pid has a state");
}

static int
controller(void)
{
	CUcontext ctx;
	struct child c;
	unsigned long long dptr = 0;
	char line[128];
	int status;

	signal(SIGPIPE, SIG_IGN);
	EXPECT(cuCheckpointProcessGetState(getpid(),
	    &(CUprocessState){ 0 }), CUDA_ERROR_NOT_INITIALIZED);
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	if (child_start(&c) < 0 || child_line(&c, line, sizeof(line)) ||
	    sscanf(line, "ready %llx", &dptr) != 1) {
		printf("FAIL cannot start the target\n");
		return 1;
	}
	check_args(c.pid);
	check_cycle(&c, dptr);
	check_inflight(&c);
	check_locker_dies(&c);
	line_write(c.in, "check\n");
	CHECK(child_line(&c, line, sizeof(line)) == 0 &&
	    strncmp(line, "check 0 same", 12) == 0, "check: '%s'", line);
	check_target_dies(&c);

	/* A second target, ended by itself. */
	if (child_start(&c) < 0 || child_line(&c, line, sizeof(line))) {
		printf("FAIL cannot start the second target\n");
		return 1;
	}
	line_write(c.in, "exit\n");
	waitpid(c.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target exit");
	CHECK(free_bytes() == CAPACITY, "free after exit");
	return failures != 0;
}

struct freed_watch {
	CUcontext	ctx;
	long long	at;		/* now_us() when first seen free, or 0 */
};

/* When another thread of the caller first sees the device free. */
static void *
freed_thread(void *arg)
{
	struct freed_watch *w = arg;
	long long deadline = now_ms() + 10000;
	struct timespec ms = { 0, 1000000 };

	if (cuCtxSetCurrent(w->ctx) != CUDA_SUCCESS)
		return NULL;
	while (now_ms() < deadline) {
		if (free_bytes() == CAPACITY) {
			w->at = now_us();
			break;
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/*
 * SIMCUDA_CKPT_GBPS=0.1: Checkpoint and Restore of the target's 40 MiB
 * take at least 40 MiB / 10^8 B/s, and Checkpoint gives the memory back
 * only at its end. Lower bounds only: a loaded machine may take longer.
 * in_only: SIMCUDA_CKPT_IN_GBPS=0.1 alone, which Restore alone follows.
 */
static int
rate(int in_only)
{
	const long long want_us = TARGET_BYTES * 1000000LL / 100000000;
	struct freed_watch w = { 0 };
	long long t0, took;
	CUcontext ctx;
	struct child c;
	pthread_t t;
	char line[128];
	int status;

	setenv(in_only ? "SIMCUDA_CKPT_IN_GBPS" : "SIMCUDA_CKPT_GBPS", "0.1",
	    1);
	signal(SIGPIPE, SIG_IGN);
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	if (child_start(&c) < 0 || child_line(&c, line, sizeof(line))) {
		printf("FAIL cannot start the target\n");
		return 1;
	}
	OK(cuCheckpointProcessLock(c.pid, NULL));
	w.ctx = ctx;
	t0 = now_us();
	pthread_create(&t, NULL, freed_thread, &w);
	OK(cuCheckpointProcessCheckpoint(c.pid, NULL));
	took = now_us() - t0;
	pthread_join(t, NULL);
	CHECK(in_only || took >= want_us, "checkpoint took %lld us, want at "
	    "least %lld", took, want_us);
	CHECK(w.at != 0, "the memory never came back");
	CHECK(in_only || w.at - t0 >= want_us, "memory free %lld us after "
	    "the checkpoint began, want at least %lld", w.at - t0, want_us);
	t0 = now_us();
	OK(cuCheckpointProcessRestore(c.pid, NULL));
	took = now_us() - t0;
	CHECK(took >= want_us, "restore took %lld us, want at least %lld",
	    took, want_us);
	CHECK(free_bytes() == CAPACITY - TARGET_BYTES, "free %llu after restore",
	    (unsigned long long)free_bytes());
	OK(cuCheckpointProcessUnlock(c.pid, NULL));
	line_write(c.in, "exit\n");
	waitpid(c.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target exit");
	return failures != 0;
}

/* SIMCUDA_NO_CHECKPOINT=1: a driver without the API. */
static int
absent(void)
{
	CUdriverProcAddressQueryResult qr;
	CUprocessState s;
	void *fn = (void *)1;

	OK(cuInit(0));
	EXPECT(cuGetProcAddress_v2("cuCheckpointProcessLock", &fn, 12080, 0,
	    &qr), CUDA_ERROR_NOT_FOUND);
	CHECK(fn == NULL && qr == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	    "found it");
	EXPECT(cuGetProcAddress_v2("cuCheckpointProcessGetState", &fn, 12080,
	    0, &qr), CUDA_ERROR_NOT_FOUND);
	EXPECT(cuCheckpointProcessGetState(getpid(), &s),
	    CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuCheckpointProcessLock(getpid(), NULL),
	    CUDA_ERROR_NOT_SUPPORTED);
	OK(cuGetProcAddress_v2("cuMemAlloc", &fn, 12080, 0, &qr));
	return failures != 0;
}

/*
 * SIMCUDA_COPY_GBPS: a copy between pinned host memory and the device, in
 * either direction, takes at least bytes/rate; the bytes arrive.
 */
static int
copyrate(void)
{
	const size_t n = 8 * MiB;
	const long long want_us = n * 1000000LL / 100000000;
	CUdeviceptr d;
	CUcontext ctx;
	long long t0, took;
	unsigned char *h;

	setenv("SIMCUDA_COPY_GBPS", "0.1", 1);
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	OK(cuMemAlloc(&d, n));
	OK(cuMemHostAlloc((void **)&h, n, 0));
	memset(h, 0x5a, n);
	t0 = now_us();
	OK(cuMemcpyHtoD(d, h, n));
	took = now_us() - t0;
	CHECK(took >= want_us, "HtoD took %lld us, want at least %lld", took,
	    want_us);
	memset(h, 0, n);
	t0 = now_us();
	OK(cuMemcpyDtoHAsync(h, d, n, NULL));
	took = now_us() - t0;
	CHECK(took >= want_us, "DtoH took %lld us, want at least %lld", took,
	    want_us);
	CHECK(h[0] == 0x5a && h[n - 1] == 0x5a, "the bytes did not arrive");
	OK(cuMemFreeHost(h));
	OK(cuMemFree(d));
	return failures != 0;
}

/* Whether every page of [p, p + n) is resident; p is page-aligned. */
static int
resident(void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i, pages;
	unsigned char *vec;
	int all = 1;

	pages = (n + page - 1) / page;
	if ((vec = malloc(pages)) == NULL || mincore(p, n, vec) < 0) {
		free(vec);
		return 0;
	}
	for (i = 0; i < pages; i++)
		all &= vec[i] & 1;
	free(vec);
	return all;
}

/*
 * SIMCUDA_PIN_GBPS: cuMemHostAlloc, cuMemAllocHost and cuMemHostRegister
 * take at least bytes/rate, and the driver's pinned pages are resident
 * when they return. Lower bounds only.
 */
static int
pinrate(void)
{
	const size_t n = 8 * MiB;
	const long long want_us = n * 1000000LL / 100000000;
	unsigned int flags;
	CUcontext ctx;
	long long t0, took;
	void *h, *m;

	setenv("SIMCUDA_PIN_GBPS", "0.1", 1);
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	t0 = now_us();
	OK(cuMemHostAlloc(&h, n, CU_MEMHOSTALLOC_PORTABLE));
	took = now_us() - t0;
	CHECK(took >= want_us, "cuMemHostAlloc took %lld us, want at least "
	    "%lld", took, want_us);
	CHECK(resident(h, n), "cuMemHostAlloc's pages are not resident");
	OK(cuMemHostGetFlags(&flags, h));
	OK(cuMemFreeHost(h));
	t0 = now_us();
	OK(cuMemAllocHost(&h, n));
	took = now_us() - t0;
	CHECK(took >= want_us, "cuMemAllocHost took %lld us, want at least "
	    "%lld", took, want_us);
	OK(cuMemFreeHost(h));
	if ((m = aligned_alloc(4096, n)) == NULL) {
		printf("FAIL cannot allocate %zu bytes\n", n);
		return 1;
	}
	t0 = now_us();
	OK(cuMemHostRegister(m, n, 0));
	took = now_us() - t0;
	CHECK(took >= want_us, "cuMemHostRegister took %lld us, want at "
	    "least %lld", took, want_us);
	OK(cuMemHostGetFlags(&flags, m));
	OK(cuMemHostUnregister(m));
	free(m);
	return failures != 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pinrate") == 0)
		return pinrate();
	if (argc > 1 && strcmp(argv[1], "copyrate") == 0)
		return copyrate();
	if (argc > 1 && strcmp(argv[1], "target") == 0)
		return target();
	if (argc > 2 && strcmp(argv[1], "locker") == 0)
		return locker(argv[2]);
	if (argc > 1 && strcmp(argv[1], "absent") == 0)
		return absent();
	if (argc > 1 && strcmp(argv[1], "rate") == 0)
		return rate(0);
	if (argc > 1 && strcmp(argv[1], "ratein") == 0)
		return rate(1);
	return controller();
}
