/*
 * A fork while another thread is anywhere inside the simulated driver
 * (tests/simcuda) leaves the child a driver of its own that works: for
 * each lock that a run of VMM calls, an async copy and NVML's init takes
 * on the program's thread, in turn, that thread is held just after taking
 * it while the main thread forks; then the same for each lock the
 * driver's own threads (the stream's, memfree's) take during a run. The
 * child, forked after cuInit, may not use the driver, as on a real one:
 * its cuInit, VMM calls and async copy must be refused
 * (CUDA_ERROR_NOT_INITIALIZED), never stuck, and its nvmlInit, which
 * NVML allows it, must finish.
 *
 * Linked with the simulator's objects and -Wl,--wrap on pthread's lock
 * and wait (the Makefile): the seam that holds a thread inside the lock
 * it took, and lets it go as soon as the forking thread would wait (a
 * fork handler taking that lock, or any other), so that a driver whose
 * handlers take every lock forks on, and one that leaves a lock out
 * forks a child whose copy of it is held by a thread it does not have.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../simcuda/nvml_abi.h"

#define VMM_SIZE	(2u << 20)	/* the simulator's granularity */
#define COPY_SIZE	4096
#define POLL_NS		1000000		/* bounded polls: 1 ms at a time */
#define BOUND_MS	30000		/* for anything here (sanitizers) */
#define LOCKS_MAX	1000		/* a run takes fewer */
#define LOCKS_MIN	10		/* the program's thread more: else the
					 * seam is broken */

/*
 * The seam's states. ARMED: the thread that takes the lock named is held
 * (HELD). While the forker would wait, it lets that thread STEP to its
 * next lock or unlock, where it is held again, and looks again: so that
 * at the fork it is at a point of its own, never inside malloc (the sanitizers' allocators
 * of gcc 12 are not fork-safe: a child would wait on their lock for
 * ever). GO: forked, it runs on.
 */
enum { HOLD_OFF, HOLD_ARMED, HOLD_HELD, HOLD_STEP, HOLD_GO };
/* Whose locks are counted: the run's thread's, or the driver's threads'
 * (each counts its own: their timing is theirs). */
enum { ROLE_RUN, ROLE_DRIVER };

static int hold_state;		/* HOLD_*, atomic */
static int hold_role;		/* hold a thread of this role ... */
static long hold_at;		/* ... when it takes its lock no. ... */
static long hold_gen;		/* ... counted from this run's start */
static int hold_overran;	/* a held thread was never let go */
static pthread_t forker;	/* never held; lets the held one go */
static pthread_t held;		/* the thread held, once HELD: atomic */
static __thread int in_run;	/* this thread is the run's */
static __thread long my_gen, my_taken;

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_unlock(pthread_mutex_t *m);
int __real_pthread_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_unlock(pthread_mutex_t *m);
int __wrap_pthread_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m);

static int
is_forker(void)
{
	return pthread_equal(pthread_self(), forker);
}

static int
hold_move(int from, int to)
{
	return __atomic_compare_exchange_n(&hold_state, &from, to, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void
let_go(void)
{
	hold_move(HOLD_HELD, HOLD_STEP);
}

static void
sleep_poll(void)
{
	const struct timespec t = { 0, POLL_NS };

	nanosleep(&t, NULL);
}

/* Wait while HELD. */
static void
hold_here(void)
{
	long i;

	for (i = 0; i < BOUND_MS; i++) {
		if (__atomic_load_n(&hold_state, __ATOMIC_SEQ_CST) != HOLD_HELD)
			return;
		sleep_poll();
	}
	__atomic_store_n(&hold_overran, 1, __ATOMIC_SEQ_CST);
	hold_move(HOLD_HELD, HOLD_GO);
}

/* The held thread, let go a step, is held again. */
static void
step_done(void)
{
	if (!is_forker() && pthread_equal(pthread_self(),
	    __atomic_load_n(&held, __ATOMIC_SEQ_CST)) &&
	    hold_move(HOLD_STEP, HOLD_HELD))
		hold_here();
}

/* The thread that took the lock hold_* names is held. */
static void
maybe_hold(void)
{
	long gen = __atomic_load_n(&hold_gen, __ATOMIC_SEQ_CST);

	if (__atomic_load_n(&hold_state, __ATOMIC_SEQ_CST) != HOLD_ARMED) {
		step_done();
		return;
	}
	if (my_gen != gen) {
		my_gen = gen;
		my_taken = 0;
	}
	if (++my_taken != __atomic_load_n(&hold_at, __ATOMIC_SEQ_CST) ||
	    (in_run ? ROLE_RUN : ROLE_DRIVER) !=
	    __atomic_load_n(&hold_role, __ATOMIC_SEQ_CST))
		return;
	/* Named after: a thread that does not win must not rename it. A
	 * step the forker allows meanwhile ends at the next lock. */
	if (hold_move(HOLD_ARMED, HOLD_HELD)) {
		__atomic_store_n(&held, pthread_self(), __ATOMIC_SEQ_CST);
		hold_here();
	}
}

/* The forker never waits on a lock: it lets the held thread step on
 * until the lock is free. */
int
__wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	if (is_forker()) {
		while ((r = pthread_mutex_trylock(m)) == EBUSY) {
			let_go();
			sleep_poll();
		}
		return r;
	}
	r = __real_pthread_mutex_lock(m);
	if (r == 0 || r == EOWNERDEAD)
		maybe_hold();
	return r;
}

int
__wrap_pthread_mutex_unlock(pthread_mutex_t *m)
{
	int r = __real_pthread_mutex_unlock(m);

	step_done();
	return r;
}

/*
 * Nor on a condition: it wakes at once, as POSIX allows (its caller
 * checks again), having let the held thread step on, so that what it
 * waits for comes with no thread running free while it forks.
 */
int
__wrap_pthread_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m)
{
	if (!is_forker())
		return __real_pthread_cond_wait(cv, m);
	let_go();
	__real_pthread_mutex_unlock(m);
	sleep_poll();
	return __wrap_pthread_mutex_lock(m);
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	    (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* pid's exit status, or -1 if it was not done within the bound (killed). */
static int
wait_bounded(pid_t pid)
{
	struct timespec t0;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < BOUND_MS) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
			    WTERMSIG(status);
		sleep_poll();
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static CUmemAllocationProp
vmm_prop(void)
{
	CUmemAllocationProp p;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	return p;
}

/* Two VMM allocations made and released: the second reuses the first's
 * record (vmm.c's spare list). 0, or the step that failed. */
static int
vmm_twice(void)
{
	CUmemAllocationProp p = vmm_prop();
	CUmemGenericAllocationHandle h;
	int i;

	for (i = 0; i < 2; i++) {
		if (cuMemCreate(&h, VMM_SIZE, &p, 0) != CUDA_SUCCESS)
			return 1;
		if (cuMemRelease(h) != CUDA_SUCCESS)
			return 2;
	}
	return 0;
}

/* A copy on s run by its thread (SIMCUDA_ASYNC=1), waited for. */
static int
async_copy(CUdeviceptr dev, CUstream s, unsigned char *host)
{
	unsigned char back[COPY_SIZE];

	if (cuMemcpyHtoDAsync_v2(dev, host, COPY_SIZE, s) != CUDA_SUCCESS)
		return 3;
	if (cuStreamSynchronize(s) != CUDA_SUCCESS)
		return 4;
	if (cuCtxSynchronize() != CUDA_SUCCESS)
		return 5;
	if (cuMemcpyDtoH_v2(back, dev, COPY_SIZE) != CUDA_SUCCESS ||
	    memcmp(back, host, COPY_SIZE) != 0)
		return 6;
	return 0;
}

static int
nvml_once(void)
{
	if (nvmlInit_v2() != NVML_SUCCESS || nvmlShutdown() != NVML_SUCCESS)
		return 7;
	return 0;
}

/* What the held thread does, in the parent's context, on its stream. */
struct run {
	CUcontext	ctx;
	CUstream	s;
	CUdeviceptr	dev;
	unsigned char	host[COPY_SIZE];
	int		failed, done;
};

static void *
run_main(void *arg)
{
	struct run *r = arg;
	int f;

	in_run = 1;
	if (cuCtxSetCurrent(r->ctx) != CUDA_SUCCESS)
		f = 8;
	else if ((f = vmm_twice()) == 0 && (f = async_copy(r->dev, r->s,
	    r->host)) == 0)
		f = nvml_once();
	r->failed = f;
	step_done();	/* not exiting (malloc, free) while forked */
	__atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * In the forked child: the driver refuses it (it was forked after its
 * parent's cuInit), each call at once; NVML serves it. 0, or the step that
 * failed.
 */
static int
child_refused(void)
{
	CUmemAllocationProp p = vmm_prop();
	CUmemGenericAllocationHandle h;
	unsigned char host[COPY_SIZE];
	CUdeviceptr dev;
	CUcontext c;
	CUstream s;

	memset(host, 0x5a, sizeof(host));
	if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED)
		return 9;
	if (cuDevicePrimaryCtxRetain(&c, 0) != CUDA_ERROR_NOT_INITIALIZED)
		return 10;
	if (cuMemCreate(&h, VMM_SIZE, &p, 0) != CUDA_ERROR_NOT_INITIALIZED)
		return 1;
	if (cuMemAlloc_v2(&dev, COPY_SIZE) != CUDA_ERROR_NOT_INITIALIZED ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) !=
	    CUDA_ERROR_NOT_INITIALIZED)
		return 11;
	if (cuMemcpyHtoD_v2(0, host, COPY_SIZE) != CUDA_ERROR_NOT_INITIALIZED)
		return 3;
	if (cuCtxSynchronize() != CUDA_ERROR_NOT_INITIALIZED)
		return 5;
	return nvml_once();
}

/*
 * Run r once with the thread of role that takes its lock no. k held, and
 * fork while it is. 0: forked, the child was fine; 1: none took as many.
 */
static int
fork_holding(struct run *r, int role, long k)
{
	struct timespec t0;
	pthread_t t;
	int st;
	pid_t pid;

	__atomic_add_fetch(&hold_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hold_role, role, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hold_at, k, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->done, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&held, (pthread_t)0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hold_state, HOLD_ARMED, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(&t, NULL, run_main, r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(&hold_state, __ATOMIC_SEQ_CST) != HOLD_HELD &&
	    !__atomic_load_n(&r->done, __ATOMIC_SEQ_CST) &&
	    ms_since(&t0) < BOUND_MS)
		sleep_poll();
	/* Disarmed unless a thread is held now: none can be from here on. */
	if (hold_move(HOLD_ARMED, HOLD_OFF)) {
		pthread_join(t, NULL);
		assert_int_equal(r->failed, 0);
		return 1;
	}
	if ((pid = fork()) == 0) {
		__atomic_store_n(&hold_state, HOLD_OFF, __ATOMIC_SEQ_CST);
		_exit(child_refused());
	}
	assert_true(pid > 0);
	__atomic_store_n(&hold_state, HOLD_GO, __ATOMIC_SEQ_CST);
	st = wait_bounded(pid);
	pthread_join(t, NULL);
	__atomic_store_n(&hold_state, HOLD_OFF, __ATOMIC_SEQ_CST);
	if (st < 0)
		fail_msg("a child forked while %s thread held its lock no. "
		    "%ld was stuck in its own driver calls", role == ROLE_RUN ?
		    "the program's" : "a driver's", k);
	if (st != 0)
		fail_msg("a child forked while %s thread held its lock no. "
		    "%ld exited %d (the step that failed, or 128 + a "
		    "signal)", role == ROLE_RUN ?
		    "the program's" : "a driver's", k, st);
	assert_false(__atomic_load_n(&hold_overran, __ATOMIC_SEQ_CST));
	assert_int_equal(r->failed, 0);
	return 0;
}

static void
fork_inside_every_lock(void **state)
{
	static struct run r;
	CUdevice d;
	long k;

	(void)state;
	setenv("SIMCUDA_DEVICES", "1Gi", 1);
	setenv("SIMCUDA_ASYNC", "1", 1);
	unsetenv("SIMCUDA_STATE");
	unsetenv("CUDA_VISIBLE_DEVICES");
	forker = pthread_self();
	memset(r.host, 0xa5, sizeof(r.host));
	assert_int_equal(cuInit(0), CUDA_SUCCESS);
	assert_int_equal(cuDeviceGet(&d, 0), CUDA_SUCCESS);
	assert_int_equal(cuDevicePrimaryCtxRetain(&r.ctx, d), CUDA_SUCCESS);
	assert_int_equal(cuCtxSetCurrent(r.ctx), CUDA_SUCCESS);
	assert_int_equal(cuMemAlloc_v2(&r.dev, COPY_SIZE), CUDA_SUCCESS);
	assert_int_equal(cuStreamCreate(&r.s, CU_STREAM_NON_BLOCKING),
	    CUDA_SUCCESS);
	/* Once unheld (no lock no. 0): the driver's threads are started. */
	assert_int_equal(fork_holding(&r, ROLE_RUN, 0), 1);
	for (k = 1; k < LOCKS_MAX && fork_holding(&r, ROLE_RUN, k) == 0; k++)
		;
	if (k <= LOCKS_MIN)
		fail_msg("a run took only %ld locks", k - 1);
	/* The stream's thread takes two per copy at least. */
	for (k = 1; k < LOCKS_MAX && fork_holding(&r, ROLE_DRIVER, k) == 0;
	    k++)
		;
	if (k <= 2)
		fail_msg("the driver's threads took only %ld locks", k - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fork_inside_every_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
