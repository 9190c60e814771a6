/*
 * A cuMemFree on one thread while another thread's cuCtxDestroy is inside
 * the driver (tests/integration/books.sh):
 *   ctx_end_free_linked fail|end [hold]
 * 4 MiB is allocated in device 0's primary context (fail: which
 * cuCtxDestroy refuses to destroy) or in a context made for it (end:
 * destroyed); then thread A destroys that context, held inside the
 * simulated driver (private_table.h), and meanwhile thread B frees the
 * allocation. The hold lasts until B's free has returned or B sleeps in
 * it (waiting for the destroy, as the shim makes it). Prints, in order:
 *   info free=N total=N   before the allocation
 *   alloc ok
 *   destroy ok | destroy err=CODE   A's (fail: CUDA_ERROR_INVALID_CONTEXT)
 *   free ok | free err=CODE   B's (after the context ended: an error)
 *   info free=N total=N   after both, in the primary context
 *   holding               with hold, then waits for SIGUSR1
 * (err=CODE in place of ok when a call fails). Exit status 0, or 2 on a
 * usage or set-up error.
 */
#include <cuda.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../simcuda/private_table.h"
#include "report.h"

#define WAIT_MS		10000	/* for a step that must come */

static CUcontext ctx;
static CUdeviceptr ptr;
static CUresult destroy_r, free_r;
static int free_done;		/* atomic: B's free returned */
static pid_t free_tid;		/* atomic: B's thread, once it runs */

static void
die(const char *what)
{
	fprintf(stderr, "ctx_end_free_linked: %s\n", what);
	exit(2);
}

static void *
destroy_thread(void *arg)
{
	(void)arg;
	destroy_r = cuCtxDestroy(ctx);
	return NULL;
}

static void *
free_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&free_tid, gettid(), __ATOMIC_RELEASE);
	free_r = cuCtxSetCurrent(ctx);
	if (free_r == CUDA_SUCCESS)
		free_r = cuMemFree(ptr);
	__atomic_store_n(&free_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether thread tid of this process is asleep (waiting on a lock). */
static int
asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int s = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	/* "tid (comm) S ...": the state follows the last ')'. */
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		s = p[1] == ' ' && p[2] == 'S';
	fclose(f);
	return s;
}

/* Poll until fn() or WAIT_MS have passed: 1 if it came. */
static int
wait_for(int (*fn)(void))
{
	int ms;

	for (ms = 0; ms < WAIT_MS; ms++) {
		if (fn())
			return 1;
		poll(NULL, 0, 1);
	}
	return 0;
}

static const struct simcuda_private_table *table;

static int
destroy_held(void)
{
	return table->ctx_end_held() > 0;
}

static int
free_over_or_waiting(void)
{
	pid_t tid = __atomic_load_n(&free_tid, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&free_done, __ATOMIC_ACQUIRE) ||
	    (tid != 0 && asleep(tid));
}

static void
race(void)
{
	pthread_t a, b;

	table->ctx_end_hold(1);
	if (pthread_create(&a, NULL, destroy_thread, NULL) != 0)
		die("cannot start a thread");
	if (!wait_for(destroy_held))
		die("the destroy never reached the driver");
	if (pthread_create(&b, NULL, free_thread, NULL) != 0)
		die("cannot start a thread");
	if (!wait_for(free_over_or_waiting))
		die("the free neither returned nor waited");
	table->ctx_end_hold(0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

int
main(int argc, char *argv[])
{
	static const CUuuid id = SIMCUDA_PRIVATE_TABLE_ID;
	CUcontext primary;
	sigset_t set;
	int sig;
	CUresult r;

	if ((argc != 2 && argc != 3) || (argc == 3 &&
	    strcmp(argv[2], "hold") != 0) || (strcmp(argv[1], "fail") != 0 &&
	    strcmp(argv[1], "end") != 0))
		die("usage: ctx_end_free_linked fail|end [hold]");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) != CUDA_SUCCESS ||
	    cuGetExportTable((const void **)&table, &id) != CUDA_SUCCESS ||
	    table->size < sizeof(*table))
		die("no simulated driver");
	if (cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(primary) != CUDA_SUCCESS)
		die("cannot use device 0's primary context");
	report_meminfo();
	ctx = primary;
	if (strcmp(argv[1], "end") == 0 && cuCtxCreate(&ctx, NULL, 0, 0) !=
	    CUDA_SUCCESS)
		die("cannot make a context");
	r = cuMemAlloc(&ptr, 4 << 20);
	report("alloc", r);
	if (r != CUDA_SUCCESS)
		return 0;
	race();
	report("destroy", destroy_r);
	report("free", free_r);
	if (cuCtxSetCurrent(primary) != CUDA_SUCCESS)
		die("cannot use device 0's primary context again");
	report_meminfo();
	if (argc == 3) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("holding\n");
		sigwait(&set, &sig);
	}
	return 0;
}
