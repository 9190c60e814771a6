/*
 * A program that allocates and frees in a loop, for the tests that cut
 * its connection to gpufracd meanwhile (reconnect_churn.sh):
 *   churn_linked KIND SIZE ROUNDS
 * KIND is mem (cuMemAlloc), managed (cuMemAllocManaged), async
 * (cuMemAllocAsync from the device's pool, synchronised at each turn so
 * that the pool gives its memory back), vmm (cuMemCreate) or array
 * (cuArrayCreate, SIZE bytes of one float channel, 1024 wide).
 * On device 0 it keeps one allocation of KIND and SIZE, prints "holding"
 * and waits for SIGUSR1; then ROUNDS times: prints "churning R" and,
 * until SIGUSR1, takes up to DEPTH allocations of KIND and SIZE and
 * gives them all back, again and again, one every half millisecond or
 * so; at SIGUSR1 it gives back what
 * it holds of them, prints "rested R N" (N allocations made) or
 * "rested R N err=CODE" (CODE: the last refusal, with how many), then
 * "holding", and waits for SIGUSR1 again. Exit status 0; 2 on a usage
 * or set-up error.
 */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hold.h"
#include "units.h"

#define DEPTH		4
#define ARRAY_WIDTH	1024
#define PACE_NS		500000	/* between turns: a load, not a hog of the
				   test's CPUs; still hundreds of turns
				   while a connection is down */

enum kind { MEM, MANAGED, ASYNC, VMM, ARRAY };

static enum kind kind;
static size_t size;

static void
die(const char *what)
{
	fprintf(stderr, "churn: %s\n", what);
	exit(2);
}

/* One allocation of kind and size; its handle in *h. */
static CUresult
take(uint64_t *h)
{
	CUDA_ARRAY_DESCRIPTOR d = { ARRAY_WIDTH,
	    size / (ARRAY_WIDTH * sizeof(float)), CU_AD_FORMAT_FLOAT, 1 };
	CUmemAllocationProp p;
	CUdeviceptr ptr = 0;
	CUresult r;

	switch (kind) {
	case MEM:
		r = cuMemAlloc(&ptr, size);
		break;
	case MANAGED:
		r = cuMemAllocManaged(&ptr, size, CU_MEM_ATTACH_GLOBAL);
		break;
	case ASYNC:
		r = cuMemAllocAsync(&ptr, size, NULL);
		break;
	case VMM:
		memset(&p, 0, sizeof(p));
		p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		return cuMemCreate((CUmemGenericAllocationHandle *)h, size, &p,
		    0);
	default:
		return cuArrayCreate((CUarray *)h, &d);
	}
	*h = ptr;
	return r;
}

static CUresult
give(uint64_t h)
{
	switch (kind) {
	case MEM:
	case MANAGED:
		return cuMemFree((CUdeviceptr)h);
	case ASYNC:
		return cuMemFreeAsync((CUdeviceptr)h, NULL);
	case VMM:
		return cuMemRelease((CUmemGenericAllocationHandle)h);
	default:
		return cuArrayDestroy((CUarray)(uintptr_t)h);
	}
}

/* Give back the n held in hs; a pool's memory goes back to the driver. */
static void
give_all(uint64_t *hs, int n)
{
	while (n > 0)
		if (give(hs[--n]) != CUDA_SUCCESS)
			die("a free failed");
	if (kind == ASYNC && cuStreamSynchronize(NULL) != CUDA_SUCCESS)
		die("cannot synchronise");
}

/* SIGUSR1 came within PACE_NS. */
static int
usr1_came(void)
{
	static const struct timespec pace = { 0, PACE_NS };
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	return sigtimedwait(&usr1, NULL, &pace) == SIGUSR1;
}

/* One round: churn until SIGUSR1, then say how it went. */
static void
churn(unsigned round)
{
	uint64_t hs[DEPTH];
	unsigned long made = 0, refused = 0;
	CUresult r, last = CUDA_SUCCESS;
	int n = 0;

	printf("churning %u\n", round);
	fflush(stdout);
	while (!usr1_came()) {
		if (n == DEPTH) {
			give_all(hs, n);
			n = 0;
		}
		if ((r = take(&hs[n])) == CUDA_SUCCESS) {
			n++;
			made++;
		} else {
			last = r;
			refused++;
		}
	}
	give_all(hs, n);
	if (refused == 0)
		printf("rested %u %lu\n", round, made);
	else
		printf("rested %u %lu err=%d %lu\n", round, made, (int)last,
		    refused);
}

static enum kind
kind_arg(const char *s)
{
	static const char *const names[] = { "mem", "managed", "async", "vmm",
	    "array" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return (enum kind)i;
	die("unknown kind");
	return MEM;
}

int
main(int argc, char **argv)
{
	uint64_t v, base, rounds, i;
	sigset_t usr1;
	CUcontext ctx;
	CUdevice dev;

	if (argc != 4)
		die("usage: churn_linked KIND SIZE ROUNDS");
	kind = kind_arg(argv[1]);
	if (size_parse(argv[2], &v) < 0 || v == 0 ||
	    size_parse(argv[3], &rounds) < 0)
		die("bad size or rounds");
	size = (size_t)v;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make device 0's context current");
	if (take(&base) != CUDA_SUCCESS)
		die("cannot take the first allocation");
	hold();
	for (i = 1; i <= rounds; i++) {
		churn((unsigned)i);
		hold();
	}
	return 0;
}
