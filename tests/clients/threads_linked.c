/*
 * Two threads allocating at once, for the shim's wait handling
 * (tests/integration/shim_wait.sh):
 *   threads_linked BIG SMALL
 * Thread A allocates BIG, which a daemon may hold back (WAIT). At the first
 * SIGUSR1, thread B allocates and frees SMALL; once B is done and A's
 * allocation has returned, A frees it, the program prints what
 * cuMemGetInfo says and "holding", and at the second SIGUSR1 prints
 * cuMemGetInfo again and exits. Each step prints one line:
 *   A allocating, B alloc ok, B free ok, B done, A alloc ok, A free ok,
 *   info free=N total=N, holding, info free=N total=N
 * (err=CODE in place of ok when a call fails). Exit status 0, or 2 on a
 * usage or set-up error.
 */
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "units.h"

static CUcontext ctx;
static size_t big, small;

static void
die(const char *what)
{
	fprintf(stderr, "threads_linked: %s\n", what);
	exit(2);
}

static void
await_usr1(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigwait(&usr1, &sig);
}

static void *
thread_a(void *arg)
{
	CUdeviceptr *p = arg;
	CUresult r;

	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make the context current in A");
	printf("A allocating\n");
	r = cuMemAlloc(p, big);
	if (r != CUDA_SUCCESS)
		*p = 0;
	report("A alloc", r);
	return NULL;
}

static void *
thread_b(void *arg)
{
	CUdeviceptr p;
	CUresult r;

	(void)arg;
	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make the context current in B");
	r = cuMemAlloc(&p, small);
	report("B alloc", r);
	if (r == CUDA_SUCCESS)
		report("B free", cuMemFree(p));
	return NULL;
}

static size_t
size_arg(const char *s)
{
	uint64_t v;

	if (size_parse(s, &v) < 0)
		die("bad size");
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	CUdeviceptr pa;
	pthread_t a, b;
	sigset_t usr1;
	CUdevice dev;

	if (argc != 3)
		die("usage: threads_linked BIG SMALL");
	big = size_arg(argv[1]);
	small = size_arg(argv[2]);
	/* Blocked in every thread: taken by sigwait only. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make the device's context current");

	if (pthread_create(&a, NULL, thread_a, &pa) != 0)
		die("cannot start thread A");
	await_usr1();
	if (pthread_create(&b, NULL, thread_b, NULL) != 0)
		die("cannot start thread B");
	pthread_join(b, NULL);
	printf("B done\n");
	pthread_join(a, NULL);
	if (pa != 0)
		report("A free", cuMemFree(pa));
	report_meminfo();
	printf("holding\n");
	await_usr1();
	report_meminfo();
	return 0;
}
