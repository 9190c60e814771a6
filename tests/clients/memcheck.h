/*
 * For the checks of the simulated driver's arrays, VMM and pools
 * (sim_arrays_linked, sim_vmm_linked, sim_pools_linked, sim_mem_linked):
 * the free bytes another process of the machine sees, VMM shorthands,
 * and their main. Include after check.h, child.h and machine.h.
 */
#ifndef GF_TEST_MEMCHECK_H
#define GF_TEST_MEMCHECK_H

#include <cuda.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB	(1ull << 20)
#define GiB	(1ull << 30)

/* One character from a child, or 0 at its end. */
static inline char
read_char(int fd)
{
	char c = 0;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/* The "free DEV" mode: print the free bytes of device DEV. */
static int
print_free(const char *dev)
{
	CUcontext c;
	size_t fr = 0, total = 0;

	if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c,
	    (CUdevice)strtol(dev, NULL, 10)) != CUDA_SUCCESS ||
	    cuCtxPushCurrent_v2(c) != CUDA_SUCCESS ||
	    cuMemGetInfo_v2(&fr, &total) != CUDA_SUCCESS)
		return 1;
	printf("%zu\n", fr);
	return 0;
}

/* The free bytes of device dev as another process of the state sees them. */
static inline uint64_t
peer_free(int dev)
{
	char arg[16], buf[64];
	char *argv[] = { program_invocation_short_name, "free", arg, NULL };
	ssize_t n, got = 0;
	int fd = -1;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%d", dev);
	pid = spawn(argv, NULL, NULL, &fd);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	    (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	CHECK(wait_status(pid) == 0, "the free child failed: '%s'", buf);
	return strtoull(buf, NULL, 10);
}

/* Each of the n attributes is 1 on device 0. */
static inline void
check_supported(const CUdevice_attribute *yes, size_t n)
{
	size_t i;
	int v;

	for (i = 0; i < n; i++) {
		v = 0;
		OK(cuDeviceGetAttribute(&v, yes[i], 0));
		CHECK(v == 1, "attribute %d is %d", (int)yes[i], v);
	}
}

static inline CUdeviceptr
must_reserve(size_t size)
{
	CUdeviceptr va = 0;

	OK(cuMemAddressReserve(&va, size, 0, 0, 0));
	return va;
}

static inline void
set_access(CUdeviceptr va, size_t size, int dev, CUmemAccess_flags flags)
{
	CUmemAccessDesc d = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
		.flags = flags,
	};

	OK(cuMemSetAccess(va, size, &d, 1));
}

static inline CUmemAllocationProp
prop_of(int dev, unsigned handle_types)
{
	CUmemAllocationProp p = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = (CUmemAllocationHandleType)handle_types,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
	};

	return p;
}

static inline void
unmap_release(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
	OK(cuMemUnmap(va, size));
	OK(cuMemRelease(h));
	OK(cuMemAddressFree(va, size));
}

/*
 * The main of these programs, after their own children's modes: "free
 * DEV" prints the free bytes of device DEV; without arguments, checks(s)
 * runs on a fresh machine of two devices (4Gi, 2Gi; see machine.h) with
 * device 0's primary context current and s a stream of it, and must
 * leave the device as it found it. Prints one line per failed check and
 * returns 1 if any failed, else 0.
 */
static int
mem_main(int argc, char **argv, const char *prefix, void (*checks)(CUstream))
{
	CUcontext primary;
	CUstream s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "free") == 0)
		return print_free(argv[2]);
	/* A fresh, named machine: the children must share it. */
	machine_start(prefix, "4Gi,2Gi");
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&primary, 0));
	OK(cuCtxPushCurrent_v2(primary));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	checks(s);
	OK(cuStreamDestroy_v2(s));
	CHECK(free_bytes() == 4 * GiB, "memory left: %llu",
	    (unsigned long long)(4 * GiB - free_bytes()));
	return machine_end();
}

#endif
