/*
 * Processes holding the simulated driver's arrays, VMM and pool memory
 * (tests/simcuda/array.c, vmm.c, pool.c), linked against it: one killed
 * holding all three gives them back, a forked child (refused by the
 * driver) can neither free nor touch its copies of them, nor does it keep
 * copies of the memory files the driver's thread was still closing. sim_arrays_linked, sim_vmm_linked and sim_pools_linked check
 * each kind. Prints one line per failed check and exits 1 if any failed,
 * else 0.
 *
 *   sim_mem_linked            run every check (uses $SIMCUDA_STATE, or a
 *                             private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_mem_linked free DEV   print the free bytes of device DEV
 *   sim_mem_linked hold WHAT  hold memory of device 0, print "ready", wait
 *                             to be killed. WHAT: pool (8 MiB cached by
 *                             the default pool), vmm (a released 64 MiB
 *                             allocation, still mapped), array (a 1000x1000
 *                             float array, 4 MiB), all (the three)
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "machine.h"
#include "memcheck.h"

/* Hold memory of each kind named; "ready" on stdout; wait to be killed. */
static int
hold(const char *what)
{
	CUDA_ARRAY_DESCRIPTOR d = { .Width = 1000, .Height = 1000,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	int all = strcmp(what, "all") == 0;
	CUmemoryPool pool;
	CUdeviceptr a, va;
	CUcontext c;
	CUarray arr;
	cuuint64_t v = UINT64_MAX;

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS)
		return 1;
	if ((all || strcmp(what, "pool") == 0) &&
	    (cuDeviceGetDefaultMemPool(&pool, 0) != CUDA_SUCCESS ||
	    cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v) !=
	    CUDA_SUCCESS || cuMemAllocAsync(&a, 8 * MiB, NULL) != CUDA_SUCCESS ||
	    cuMemFreeAsync(a, NULL) != CUDA_SUCCESS ||
	    cuStreamSynchronize(NULL) != CUDA_SUCCESS))
		return 1;
	if ((all || strcmp(what, "vmm") == 0) &&
	    (cuMemCreate(&h, 64 * MiB, &p, 0) != CUDA_SUCCESS ||
	    cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0) != CUDA_SUCCESS ||
	    cuMemMap(va, 64 * MiB, 0, h, 0) != CUDA_SUCCESS ||
	    cuMemRelease(h) != CUDA_SUCCESS))
		return 1;
	if ((all || strcmp(what, "array") == 0) &&
	    cuArrayCreate_v2(&arr, &d) != CUDA_SUCCESS)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* A process killed holding pool, VMM and array memory loses it all. */
static void
check_killed(void)
{
	char *argv[] = { program_invocation_short_name, "hold", "all", NULL };
	uint64_t before = free_bytes();
	int out = -1;
	pid_t pid;

	pid = spawn(argv, NULL, NULL, &out);
	CHECK(read_char(out) == 'r', "the holding child failed");
	CHECK(before - free_bytes() == 76 * MiB, "the child holds %llu",
	    (unsigned long long)(before - free_bytes()));
	kill(pid, SIGKILL);
	CHECK(wait_free(before), "a killed child kept %llu",
	    (unsigned long long)(before - free_bytes()));
	CHECK(wait_status(pid) == 128 + SIGKILL, "the child was not killed");
	close(out);
}

/*
 * A child forked after cuInit may not use the driver (the real one refuses
 * it, NOT_INITIALIZED): its copies of pools, mappings and arrays are not
 * its memory, and its attempts to free them, or to init, change nothing of
 * the parent's, nor does its exit.
 */
static void
check_fork(CUstream s)
{
	CUDA_ARRAY_DESCRIPTOR d = { .Width = 64, .Height = 64,
	    .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	unsigned char b[2] = { 0 };
	CUdeviceptr a, va;
	uint64_t held;
	CUarray arr;
	pid_t pid;

	OK(cuMemAllocAsync(&a, 4096, s));
	OK(cuMemsetD8_v2(a, 0x11, 1));
	OK(cuMemCreate(&h, 2 * MiB, &p, 0));
	va = must_reserve(2 * MiB);
	OK(cuMemMap(va, 2 * MiB, 0, h, 0));
	set_access(va, 2 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0x22, 1));
	OK(cuArrayCreate_v2(&arr, &d));
	held = free_bytes();
	fflush(stdout);
	if ((pid = fork()) == 0) {
		int bad = cuMemFreeAsync(a, s) != CUDA_ERROR_NOT_INITIALIZED;

		bad |= cuMemUnmap(va, 2 * MiB) != CUDA_ERROR_NOT_INITIALIZED;
		bad |= cuMemRelease(h) != CUDA_ERROR_NOT_INITIALIZED;
		bad |= cuArrayDestroy(arr) != CUDA_ERROR_NOT_INITIALIZED;
		bad |= cuInit(0) != CUDA_ERROR_NOT_INITIALIZED;
		bad |= cuMemsetD8_v2(a, 0x33, 1) != CUDA_ERROR_NOT_INITIALIZED;
		_exit(bad);
	}
	CHECK(wait_status(pid) == 0, "a forked child was not refused");
	CHECK(free_bytes() == held, "a forked child changed the charge");
	OK(cuMemcpyDtoH_v2(&b[0], a, 1));
	OK(cuMemcpyDtoH_v2(&b[1], va, 1));
	CHECK(b[0] == 0x11 && b[1] == 0x22, "contents after fork");
	OK(cuMemFreeAsync(a, s));
	OK(cuStreamSynchronize(s));
	unmap_release(va, 2 * MiB, h);
	OK(cuArrayDestroy(arr));
}

/* How many of the simulator's VMM memory files this process has open. */
static int
vmm_files_open(void)
{
	char link[64];
	struct dirent *e;
	ssize_t n;
	int count = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if ((n = readlinkat(dirfd(d), e->d_name, link,
		    sizeof(link) - 1)) < 0)
			continue;
		link[n] = '\0';
		count += strncmp(link, "/memfd:simcuda-vmm", 18) == 0;
	}
	closedir(d);
	return count;
}

/* Poll, for up to 10 s, until this process has want VMM files open. */
static int
wait_vmm_files(int want)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (vmm_files_open() == want)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	return 0;
}

/* A VMM allocation of size bytes, written through (its pages made). */
static CUmemGenericAllocationHandle
vmm_filled(size_t size)
{
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;

	OK(cuMemCreate(&h, size, &p, 0));
	va = must_reserve(size);
	OK(cuMemMap(va, size, 0, h, 0));
	set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0x33, size));
	OK(cuMemUnmap(va, size));
	OK(cuMemAddressFree(va, size));
	return h;
}

/*
 * Released memory's files are closed by the driver's thread (memfree.c),
 * a list at a time. A child forked while it closes one list (big, and
 * slow to free) holds no copy of those it has not reached: nothing would
 * close them while the child lives.
 */
static void
check_fork_while_closing(void)
{
	CUmemGenericAllocationHandle first = vmm_filled(128 * MiB),
	    big = vmm_filled(128 * MiB), small = vmm_filled(2 * MiB);
	pid_t pid;

	CHECK(vmm_files_open() == 3, "%d VMM files open, not 3",
	    vmm_files_open());
	OK(cuMemRelease(first));
	/* The thread closes it: the next two wait, and go as one list. */
	CHECK(wait_vmm_files(2), "the first released file stayed open");
	OK(cuMemRelease(big));
	OK(cuMemRelease(small));
	/* It closes big (it left the table first), small not yet. */
	CHECK(wait_vmm_files(1), "the next list was not taken");
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(vmm_files_open() != 0);
	CHECK(wait_status(pid) == 0, "a child forked while released memory "
	    "was closed kept a copy of its file");
	CHECK(wait_vmm_files(0), "released memory's files stayed open");
}

static void
check_processes(CUstream s)
{
	check_killed();
	check_fork(s);
	check_fork_while_closing();
}

int
main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	return mem_main(argc, argv, "simmem", check_processes);
}
