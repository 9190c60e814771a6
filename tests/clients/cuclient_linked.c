/*
 * A scriptable CUDA program for integration tests. It reaches the driver's
 * memory functions by the path named with -p, as real programs do:
 *   linked     calls the versioned symbols it was linked against
 *   dlsym      dlsym() on a dlopen'ed libcuda handle (numba, TF's stub)
 *   dlsym-old  the same through dlsym@GLIBC_2.2.5 (binaries built before 2.34)
 *   procaddr   cuGetProcAddress_v2 (libcudart >= 12, PyTorch)
 *   procaddr1  the 4-argument cuGetProcAddress (libcudart 11.3 .. 11.8)
 *   procaddr-self  cuGetProcAddress_v2 asked for "cuGetProcAddress" first
 *   procaddr-ptds  cuGetProcAddress_v2 with the per-thread default stream
 *              flag (libcudart of a program built with nvcc
 *              --default-stream per-thread asks every name so)
 * then runs its arguments as commands, printing one line each:
 *   dev N            make device N's primary context current (default 0)
 *   alloc SIZE       cuMemAlloc            -> "alloc ok" | "alloc err=CODE"
 *   pitch W H        cuMemAllocPitch       -> "pitch ok PITCH" | "pitch err=CODE"
 *   managed SIZE     cuMemAllocManaged     -> "managed ok" | "managed err=CODE"
 *   free             cuMemFree of the newest allocation -> "free ok|err=CODE"
 *   freeall          frees every allocation
 *   info             cuMemGetInfo          -> "info free=N total=N"
 *   total            cuDeviceTotalMem      -> "total N"
 *   waitinfo SIZE    cuMemGetInfo until free is SIZE or more, for up to
 *                    10 s (what the daemon tells unasked comes in its
 *                    own time) -> "info free=N total=N", the last seen
 *   allocfree        cuMemAlloc of what cuMemGetInfo says is free, kept
 *                    -> "allocfree ok N" | "allocfree err=CODE N"
 *   nvml             NVML's memory of device 0 (a dlopen'ed
 *                    libnvidia-ml.so.1, as pynvml) -> "nvml free=N total=N"
 *   verify           write a pattern into each allocation, read it back
 *   fill             write each allocation's own pattern (its first 4 KiB),
 *                    and each VMM mapping's
 *   check            read them back: "check ok" | "check differs" | "check err=CODE"
 *   peercopy         the first allocation's pattern copied by the current
 *                    context (dev N: maybe another device's) into the
 *                    newest: "peercopy ok" | "... differs" | "... err=CODE"
 *   sync             cuCtxSynchronize      -> "sync ok" | "sync err=CODE"
 *   graph            a CUDA graph of one 2D memset node per allocation of
 *                    16 KiB or more (each depending on the one before): two
 *                    rows of 1 KiB, at 4 KiB and 12 KiB into it, set to a
 *                    value of its own; the bytes from 4 KiB to 16 KiB are
 *                    zeroed first, the graph instantiated
 *                    -> "graph ok NODES" | "graph err=CODE"
 *   launch           launch it and read back those 12 KiB of each
 *                    -> "launch ok" | "launch err=CODE" | "launch differs"
 *   attrs            what the driver says of the newest allocation, at its
 *                    base and in its middle, must be what was asked for:
 *                    cuPointerGetAttribute(s) RANGE_START_ADDR, RANGE_SIZE,
 *                    MAPPING_SIZE, CONTEXT (the current one), IPC and
 *                    GPUDirect RDMA capable (1),
 *                    cuMemGetAddressRange, and no handle from
 *                    cuMemRetainAllocationHandle -> "attrs ok" |
 *                    "attrs differs: WHAT got N want N" | "attrs err=CODE"
 *   busy             inside cuLaunchHostFunc (a driver call gpufrac hooks)
 *                    print "holding", then wait for SIGUSR1
 *   reset            cuDevicePrimaryCtxReset_v2 of the current device, whose
 *                    allocations and arrays it frees (forgotten here)
 *                    -> "reset ok" | "reset err=CODE"
 *   release          cuDevicePrimaryCtxRelease_v2 of the current device as
 *                    often as dev retained it: its last release frees the
 *                    allocations and arrays (forgotten here)
 *                    -> "release ok" | "release err=CODE"
 *   release1         one cuDevicePrimaryCtxRelease_v2 of the current
 *                    device: the last of dev's retains frees as release
 *                    does -> "release1 ok" | "release1 err=CODE"
 *   queries          how many cuPointerGetAttribute(s) calls the process
 *                    has made, as the simulated driver counts them (its
 *                    private table) -> "queries N" | "queries err=CODE"
 *   ctx              cuCtxCreate on the current device: the new context is
 *                    current -> "ctx ok" | "ctx err=CODE"
 *   ctxdestroy       cuCtxDestroy of the newest one, with what was made
 *                    since it was created -> "ctxdestroy ok" | "... err=CODE"
 *   sigalloc N SIZE  inside cuLaunchHostFunc, raise SIGALRM, whose handler
 *                    tries N cuMemAlloc of SIZE, keeping them (a handler
 *                    that interrupts a hooked call): "sigalloc K" |
 *                    "sigalloc K err=CODE" (K made, CODE of the last refused)
 *   busy-unhooked    the same inside a call of the simulated driver's
 *                    private export table, which no shim can know
 *   unhooked         a call of that table that returns at once:
 *                    "unhooked ok" | "unhooked err=CODE"
 *   array W H        cuArrayCreate, one float channel -> "array ok" | "array err=CODE"
 *   mipmap W H N     cuMipmappedArrayCreate, N levels -> "mipmap ok" | ...
 *   freearrays       destroy every array and mipmap chain -> "freearrays ok"
 *   vmm SIZE         cuMemCreate on the current device, reserve an address
 *                    range, map it read-write -> "vmm ok" | "vmm err=CODE"
 *   vmmrelease       cuMemRelease the newest handle (its mapping stays)
 *   vmmunmap         cuMemUnmap the newest mapping, then free its range
 *   vmmshare SIZE    as vmm, exportable; exported as a POSIX descriptor:
 *                    "vmmshare ok /proc/PID/fd/FD" | "vmmshare err=CODE"
 *   vmmimport PATH   open PATH, import it, map it: "vmmimport ok" | ...
 *   ipcget FILE      cuIpcGetMemHandle of the newest allocation, written
 *                    to FILE in hex -> "ipcget ok" | "ipcget err=CODE"
 *   ipcopen FILE SIZE  cuIpcOpenMemHandle of FILE's handle, kept as an
 *                    allocation of SIZE (fill, check) -> "ipcopen ok" | ...
 *   ipcclose         cuIpcCloseMemHandle of the newest opened
 *   seed N           fill and check use pattern N (default 0) from now
 *   setuid UID       setresuid(UID, UID, UID) -> "setuid ok" | "setuid err"
 *   segment N SIZE   as PyTorch's expandable segments: reserve N * SIZE,
 *                    cuMemCreate N chunks of SIZE, map each whole at
 *                    consecutive addresses, then set access to the range
 *                    -> "segment ok" | "segment err=CODE"
 *   segfree          as PyTorch gives a segment back: unmap each chunk of
 *                    the newest segment, release its handles, free the range
 *   vmmtwice SIZE    cuMemCreate, mapped at two ranges -> "vmmtwice ok" | ...
 *   vmmprops         cuMemGetAllocationPropertiesFromHandle of each handle:
 *                    "vmmprops ok" (pinned, on its device) | "... err=CODE"
 *   vmmretain        cuMemRetainAllocationHandle of each mapping, the same
 *                    handle as made, then released: "vmmretain ok" |
 *                    "vmmretain differs" | "vmmretain err=CODE"
 *   vmmfreeall       unmap every mapping, release every handle, free every
 *                    range -> "vmmfreeall ok" | "vmmfreeall err=CODE"
 *   vmmarray         cuMemMapArrayAsync of the newest handle (one entry:
 *                    its whole, onto no array, on the current device and
 *                    the null stream) -> "vmmarray ok" | "vmmarray err=CODE"
 *   vmmarraypt       the same by cuMemMapArrayAsync_ptsz
 *   vmmbind          cuMulticastBindMem of the newest handle, whole, to
 *                    multicast object 0 -> "vmmbind ok" | "vmmbind err=CODE"
 *   async SIZE       cuMemAllocAsync on the null stream -> "async ok" | ...
 *   freeasync        cuMemFreeAsync of the newest async allocation
 *   threshold SIZE   the current pool's release threshold
 *   trim SIZE        cuMemPoolTrimTo the current pool
 *   many N SIZE      cuMemAlloc SIZE up to N times, kept, stopping at the
 *                    first failure: "many K" | "many K err=CODE" (K made)
 *   repeat N SIZE    N pairs of cuMemAlloc SIZE and its cuMemFree:
 *                    "repeat ok" | "repeat err=CODE"
 *   fork CMD         run one command in a child forked now (after cuInit,
 *                    as a data loader's worker is), then wait for it:
 *                    the driver refuses the child (CUDA_ERROR_NOT_INITIALIZED)
 *   init             cuInit again          -> "init ok" | "init err=CODE"
 *   asyncfill N      on a stream of the current context's own, N copies
 *                    of 1 MiB from pinned host memory to a device buffer
 *                    of their own, then the first allocation's pattern
 *                    (fill's, its first 4 KiB), never synchronised:
 *                    "asyncfill ok" | "asyncfill err=CODE"
 *   child            fork: the child prints "child PID" and runs the
 *                    commands that follow (refused by the driver, as
 *                    fork's); this one waits for it, then exits
 *   launch           first only: fork before cuInit, as a launcher does;
 *                    the child prints "child PID", starts CUDA and runs
 *                    the commands that follow; this one, which never uses
 *                    CUDA, waits for it, then exits
 *   hold             print "holding", then wait for SIGUSR1
 * Sizes use gpufrac's notation (512Mi, 1Gi). Exit status: 0, or 2 on a
 * usage or set-up error.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../simcuda/private_table.h"
#include "hold.h"
#include "report.h"
#include "units.h"

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t,
    unsigned int);
typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*info_fn)(size_t *, size_t *);
typedef CUresult (*total_fn)(size_t *, CUdevice);
typedef CUresult (*procaddr2_fn)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*procaddr1_fn)(const char *, void **, int, cuuint64_t);

/* dlsym as binaries linked against glibc < 2.34 reference it. */
extern void *dlsym_old(void *, const char *);
__asm__(".symver dlsym_old, dlsym@GLIBC_2.2.5");

static struct {
	alloc_fn	alloc;
	pitch_fn	pitch;
	managed_fn	managed;
	free_fn		free;
	info_fn		info;
	total_fn	total;
} api;

struct mem {
	CUdeviceptr	ptr;
	size_t		size;
};

static struct mem mems[4096];
static int nmems;

static struct {
	CUmemGenericAllocationHandle h;
	CUdeviceptr	va;
	size_t		size;
	int		pat;		/* its pattern for fill and check */
	int		seg;		/* its segment, or 0 */
	int		owns;		/* a reference to h to release */
	CUdeviceptr	rbase;		/* a range to free, or 0 */
	size_t		rsize;
} vmms[64];
static int nvmms, nreleased, nsegs, npats = 1000;

static void
die(const char *what)
{
	fprintf(stderr, "cuclient: %s\n", what);
	exit(2);
}

static void *
via_dlsym(void *(*sym)(void *, const char *), const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *p;

	if (h == NULL)
		die(dlerror());
	if ((p = sym(h, name)) == NULL)
		die(name);
	return p;
}

static cuuint64_t procaddr_flags = CU_GET_PROC_ADDRESS_DEFAULT;

static void *
via_procaddr(procaddr2_fn gpa, procaddr1_fn gpa1, const char *name)
{
	CUdriverProcAddressQueryResult st;
	void *p = NULL;
	CUresult r;

	r = gpa ? gpa(name, &p, 12000, procaddr_flags, &st) :
	    gpa1(name, &p, 11030, procaddr_flags);
	if (r != CUDA_SUCCESS || p == NULL)
		die(name);
	return p;
}

static void
api_resolve(const char *path)
{
	static const char *const names[] = { "cuMemAlloc", "cuMemAllocPitch",
	    "cuMemAllocManaged", "cuMemFree", "cuMemGetInfo",
	    "cuDeviceTotalMem" };
	static const char *const symbols[] = { "cuMemAlloc_v2",
	    "cuMemAllocPitch_v2", "cuMemAllocManaged", "cuMemFree_v2",
	    "cuMemGetInfo_v2", "cuDeviceTotalMem_v2" };
	void **slots[] = { (void **)&api.alloc, (void **)&api.pitch,
	    (void **)&api.managed, (void **)&api.free, (void **)&api.info,
	    (void **)&api.total };
	procaddr2_fn gpa = NULL;
	procaddr1_fn gpa1 = NULL;
	size_t i;

	if (strcmp(path, "linked") == 0) {
		api.alloc = cuMemAlloc_v2;
		api.pitch = cuMemAllocPitch_v2;
		api.managed = cuMemAllocManaged;
		api.free = cuMemFree_v2;
		api.info = cuMemGetInfo_v2;
		api.total = cuDeviceTotalMem_v2;
		return;
	}
	if (strcmp(path, "procaddr-ptds") == 0)
		procaddr_flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	if (strcmp(path, "procaddr") == 0 ||
	    strcmp(path, "procaddr-ptds") == 0)
		gpa = cuGetProcAddress_v2;
	else if (strcmp(path, "procaddr-self") == 0)
		gpa = via_procaddr(cuGetProcAddress_v2, NULL,
		    "cuGetProcAddress");
	else if (strcmp(path, "procaddr1") == 0)
		gpa1 = via_dlsym(dlsym, "cuGetProcAddress");
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		if (gpa || gpa1)
			*slots[i] = via_procaddr(gpa, gpa1, names[i]);
		else if (strcmp(path, "dlsym") == 0)
			*slots[i] = via_dlsym(dlsym, symbols[i]);
		else if (strcmp(path, "dlsym-old") == 0)
			*slots[i] = via_dlsym(dlsym_old, symbols[i]);
		else
			die("unknown path");
	}
}

static int retains[64];		/* of each device's primary context */
static CUdevice cur_dev;	/* the one dev made current last */

static void
use_device(int ordinal)
{
	CUdevice dev;
	CUcontext ctx;

	if (ordinal < 0 || ordinal >= 64 ||
	    cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make the device's context current");
	retains[ordinal]++;
	cur_dev = dev;
}

static size_t
size_arg(const char *s)
{
	uint64_t v;

	if (s == NULL || size_parse(s, &v) < 0)
		die("bad size");
	return (size_t)v;
}

static void
remember(CUdeviceptr p, size_t size)
{
	if (nmems == (int)(sizeof(mems) / sizeof(mems[0])))
		die("too many allocations");
	mems[nmems].ptr = p;
	mems[nmems++].size = size;
}

static int
verify(void)
{
	size_t i, j;

	for (i = 0; i < (size_t)nmems; i++) {
		size_t n = mems[i].size < 4096 ? mems[i].size : 4096;
		unsigned char out[4096], in[4096];

		for (j = 0; j < n; j++)
			out[j] = (unsigned char)(i * 31 + j);
		if (cuMemcpyHtoD_v2(mems[i].ptr, out, n) != CUDA_SUCCESS ||
		    cuMemcpyDtoH_v2(in, mems[i].ptr, n) != CUDA_SUCCESS ||
		    memcmp(in, out, n) != 0)
			return -1;
	}
	return 0;
}

static unsigned seed;

static void
pattern(size_t i, unsigned char *buf, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		buf[j] = (unsigned char)(i * 131 + j * 7 + 1 + seed * 29);
}

static void
fill(void)
{
	unsigned char out[4096];
	size_t i, n;
	CUresult r = CUDA_SUCCESS;

	for (i = 0; i < (size_t)nmems && r == CUDA_SUCCESS; i++) {
		n = mems[i].size < sizeof(out) ? mems[i].size : sizeof(out);
		pattern(i, out, n);
		r = cuMemcpyHtoD_v2(mems[i].ptr, out, n);
	}
	for (i = 0; i < (size_t)nvmms && r == CUDA_SUCCESS; i++) {
		pattern((size_t)vmms[i].pat, out, sizeof(out));
		r = cuMemcpyHtoD_v2(vmms[i].va, out, sizeof(out));
	}
	report("fill", r);
}

static void
check(void)
{
	unsigned char want[4096], got[4096];
	size_t i, n;
	CUresult r;

	for (i = 0; i < (size_t)nmems; i++) {
		n = mems[i].size < sizeof(want) ? mems[i].size : sizeof(want);
		pattern(i, want, n);
		if ((r = cuMemcpyDtoH_v2(got, mems[i].ptr, n)) != CUDA_SUCCESS) {
			report("check", r);
			return;
		}
		if (memcmp(got, want, n) != 0) {
			printf("check differs\n");
			return;
		}
	}
	for (i = 0; i < (size_t)nvmms; i++) {
		pattern((size_t)vmms[i].pat, want, sizeof(want));
		if ((r = cuMemcpyDtoH_v2(got, vmms[i].va, sizeof(got))) !=
		    CUDA_SUCCESS) {
			report("check", r);
			return;
		}
		if (memcmp(got, want, sizeof(want)) != 0) {
			printf("check differs\n");
			return;
		}
	}
	printf("check ok\n");
}

/*
 * "peercopy": the first allocation's first 4 KiB (fill's pattern) copied
 * into the newest by the current context, whose device may be another.
 */
static void
peercopy(void)
{
	unsigned char want[4096], got[4096];
	size_t n;
	CUresult r;

	if (nmems < 2) {
		printf("peercopy err=%d\n", CUDA_ERROR_INVALID_VALUE);
		return;
	}
	n = mems[0].size < sizeof(want) ? mems[0].size : sizeof(want);
	if (mems[nmems - 1].size < n)
		n = mems[nmems - 1].size;
	pattern(0, want, n);
	/* Cleared first: what a copy before left is no answer. */
	if ((r = cuMemsetD8_v2(mems[nmems - 1].ptr, 0, n)) != CUDA_SUCCESS ||
	    (r = cuMemcpyDtoD_v2(mems[nmems - 1].ptr, mems[0].ptr, n)) !=
	    CUDA_SUCCESS || (r = cuMemcpyDtoH_v2(got, mems[nmems - 1].ptr,
	    n)) != CUDA_SUCCESS) {
		report("peercopy", r);
		return;
	}
	printf("peercopy %s\n", memcmp(got, want, n) == 0 ? "ok" : "differs");
}


static void
hold_fn(void *arg)
{
	(void)arg;
	hold();
}

static CUarray arrays[64];
static CUmipmappedArray mipmaps[64];
static int narrays, nmipmaps;

/* array W H, mipmap W H LEVELS. */
static void
make_array(char **argv)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult r;

	memset(&d, 0, sizeof(d));
	d.Width = size_arg(argv[1]);
	d.Height = size_arg(argv[2]);
	d.Format = CU_AD_FORMAT_FLOAT;
	d.NumChannels = 1;
	if (argv[0][0] == 'a') {
		CUDA_ARRAY_DESCRIPTOR d2 = { d.Width, d.Height, d.Format, 1 };

		if (narrays == 64)
			die("too many arrays");
		r = cuArrayCreate_v2(&arrays[narrays], &d2);
		narrays += r == CUDA_SUCCESS;
		report("array", r);
		return;
	}
	if (nmipmaps == 64)
		die("too many mipmaps");
	r = cuMipmappedArrayCreate(&mipmaps[nmipmaps], &d,
	    (unsigned)size_arg(argv[3]));
	nmipmaps += r == CUDA_SUCCESS;
	report("mipmap", r);
}

static void
free_arrays(void)
{
	CUresult r = CUDA_SUCCESS;

	while (narrays > 0 && r == CUDA_SUCCESS)
		r = cuArrayDestroy(arrays[--narrays]);
	while (nmipmaps > 0 && r == CUDA_SUCCESS)
		r = cuMipmappedArrayDestroy(mipmaps[--nmipmaps]);
	report("freearrays", r);
}


/* Reserve a range for vmms[nvmms].h of size, map it, allow access. */
static CUresult
vmm_map_new(size_t size, CUdevice dev)
{
	CUmemAccessDesc acc;
	CUresult r;

	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = cuMemAddressReserve(&vmms[nvmms].va, size, 0, 0, 0)) ==
	    CUDA_SUCCESS &&
	    (r = cuMemMap(vmms[nvmms].va, size, 0, vmms[nvmms].h, 0)) ==
	    CUDA_SUCCESS)
		r = cuMemSetAccess(vmms[nvmms].va, size, &acc, 1);
	if (r == CUDA_SUCCESS) {
		vmms[nvmms].size = size;
		vmms[nvmms].pat = npats++;
		vmms[nvmms].seg = 0;
		vmms[nvmms].owns = 1;
		vmms[nvmms].rbase = vmms[nvmms].va;
		vmms[nvmms++].rsize = size;
	}
	return r;
}

/* The current device, with room for one more vmm allocation. */
static CUdevice
vmm_device(void)
{
	CUdevice dev;

	if (nvmms == 64)
		die("too many vmm allocations");
	/* A forked child's driver knows no context: the program's choice. */
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		dev = cur_dev;
	return dev;
}

/* vmm SIZE, vmmshare SIZE. */
static void
vmm_make(size_t size, int share)
{
	CUdevice dev = vmm_device();
	CUmemAllocationProp p;
	CUresult r;
	int fd;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	if (share)
		p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	if ((r = cuMemCreate(&vmms[nvmms].h, size, &p, 0)) == CUDA_SUCCESS)
		r = vmm_map_new(size, dev);
	if (r != CUDA_SUCCESS || !share) {
		report(share ? "vmmshare" : "vmm", r);
		return;
	}
	r = cuMemExportToShareableHandle(&fd, vmms[nvmms - 1].h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	if (r == CUDA_SUCCESS)
		printf("vmmshare ok /proc/%d/fd/%d\n", (int)getpid(), fd);
	else
		report("vmmshare", r);
}

/* vmmimport PATH: the exporter's memory, mapped here. */
static void
vmm_import(const char *path)
{
	CUdevice dev = vmm_device();
	struct stat st;
	CUresult r;
	int fd;

	if ((fd = open(path, O_RDWR)) < 0 || fstat(fd, &st) < 0)
		die("cannot open the exported descriptor");
	r = cuMemImportFromShareableHandle(&vmms[nvmms].h,
	    (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	close(fd);
	if (r == CUDA_SUCCESS)
		r = vmm_map_new((size_t)st.st_size, dev);
	report("vmmimport", r);
}

/* A device's pinned allocation properties. */
static CUmemAllocationProp
vmm_prop(CUdevice dev)
{
	CUmemAllocationProp p;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	return p;
}

/* segment N SIZE: what PyTorch's expandable segments do. */
static void
cmd_segment(char **argv)
{
	size_t n = size_arg(argv[1]), size = size_arg(argv[2]), i;
	CUdevice dev = vmm_device();
	CUmemAllocationProp p = vmm_prop(dev);
	CUmemAccessDesc acc;
	CUdeviceptr base;
	CUresult r;

	if (n == 0 || nvmms + n > 64)
		die("segment: bad count");
	if ((r = cuMemAddressReserve(&base, n * size, 0, 0, 0)) !=
	    CUDA_SUCCESS) {
		report("segment", r);
		return;
	}
	nsegs++;
	for (i = 0; i < n && r == CUDA_SUCCESS; i++) {
		if ((r = cuMemCreate(&vmms[nvmms].h, size, &p, 0)) !=
		    CUDA_SUCCESS)
			break;
		vmms[nvmms].va = base + i * size;
		if ((r = cuMemMap(vmms[nvmms].va, size, 0, vmms[nvmms].h, 0)) !=
		    CUDA_SUCCESS)
			break;
		vmms[nvmms].size = size;
		vmms[nvmms].pat = npats++;
		vmms[nvmms].seg = nsegs;
		vmms[nvmms].owns = 1;
		vmms[nvmms].rbase = i == 0 ? base : 0;
		vmms[nvmms++].rsize = i == 0 ? n * size : 0;
	}
	memset(&acc, 0, sizeof(acc));
	acc.location = p.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (r == CUDA_SUCCESS)
		r = cuMemSetAccess(base, n * size, &acc, 1);
	report("segment", r);
}

/* vmmtwice SIZE: one handle, two mappings (the second owns nothing). */
static void
cmd_vmmtwice(char **argv)
{
	size_t size = size_arg(argv[1]);
	CUdevice dev = vmm_device();
	CUmemAllocationProp p = vmm_prop(dev);
	CUresult r;

	if ((r = cuMemCreate(&vmms[nvmms].h, size, &p, 0)) == CUDA_SUCCESS &&
	    (r = vmm_map_new(size, dev)) == CUDA_SUCCESS) {
		vmms[nvmms].h = vmms[nvmms - 1].h;
		if ((r = vmm_map_new(size, dev)) == CUDA_SUCCESS) {
			vmms[nvmms - 1].owns = 0;
			vmms[nvmms - 1].pat = vmms[nvmms - 2].pat;
		}
	}
	report("vmmtwice", r);
}

/* Unmap the mappings of segment seg (-1: all), release, free ranges. */
static CUresult
vmm_free_where(int seg)
{
	CUresult r = CUDA_SUCCESS;
	int i, k;

	for (i = 0; i < nvmms && r == CUDA_SUCCESS; i++)
		if (seg < 0 || vmms[i].seg == seg)
			r = cuMemUnmap(vmms[i].va, vmms[i].size);
	for (i = 0; i < nvmms && r == CUDA_SUCCESS; i++)
		if ((seg < 0 || vmms[i].seg == seg) && vmms[i].owns)
			r = cuMemRelease(vmms[i].h);
	for (i = 0; i < nvmms && r == CUDA_SUCCESS; i++)
		if ((seg < 0 || vmms[i].seg == seg) && vmms[i].rsize != 0)
			r = cuMemAddressFree(vmms[i].rbase, vmms[i].rsize);
	if (r != CUDA_SUCCESS)
		return r;
	for (i = k = 0; i < nvmms; i++)
		if (seg >= 0 && vmms[i].seg != seg)
			vmms[k++] = vmms[i];
	nvmms = k;
	nreleased = 0;
	return r;
}

static void
cmd_segfree(void)
{
	int i, seg = 0;

	for (i = 0; i < nvmms; i++)
		if (vmms[i].seg > seg)
			seg = vmms[i].seg;
	if (seg == 0)
		die("no segment");
	report("segfree", vmm_free_where(seg));
}

static void
cmd_vmmfreeall(void)
{
	report("vmmfreeall", vmm_free_where(-1));
}

static void
cmd_vmmprops(void)
{
	CUmemAllocationProp p;
	CUdevice dev;
	CUresult r = CUDA_SUCCESS;
	int i;

	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		die("no current device");
	for (i = 0; i < nvmms && r == CUDA_SUCCESS; i++)
		if ((r = cuMemGetAllocationPropertiesFromHandle(&p,
		    vmms[i].h)) == CUDA_SUCCESS &&
		    (p.type != CU_MEM_ALLOCATION_TYPE_PINNED ||
		    p.location.id != dev))
			r = CUDA_ERROR_INVALID_VALUE;
	report("vmmprops", r);
}

static void
cmd_vmmretain(void)
{
	CUmemGenericAllocationHandle h;
	CUresult r = CUDA_SUCCESS;
	int i;

	for (i = 0; i < nvmms && r == CUDA_SUCCESS; i++) {
		if ((r = cuMemRetainAllocationHandle(&h,
		    (void *)(uintptr_t)vmms[i].va)) != CUDA_SUCCESS)
			break;
		if (h != vmms[i].h) {
			printf("vmmretain differs\n");
			return;
		}
		r = cuMemRelease(h);
	}
	report("vmmretain", r);
}

/*
 * vmmarray, vmmarraypt, vmmbind: the newest handle given to the driver to
 * bind (the simulated one binds nothing, but checks the handle).
 */
static void
cmd_vmmbind(char **argv)
{
	CUarrayMapInfo m;
	CUdevice dev;
	CUresult r;

	if (nvmms == 0)
		die("no handle to bind");
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		die("no current device");
	if (strcmp(argv[0], "vmmbind") == 0) {
		report(argv[0], cuMulticastBindMem(0, 0, vmms[nvmms - 1].h, 0,
		    vmms[nvmms - 1].size, 0));
		return;
	}
	memset(&m, 0, sizeof(m));
	m.resourceType = CU_RESOURCE_TYPE_ARRAY;
	m.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL;
	m.subresource.miptail.size = vmms[nvmms - 1].size;
	m.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	m.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
	m.memHandle.memHandle = vmms[nvmms - 1].h;
	m.deviceBitMask = 1u << dev;
	if (strcmp(argv[0], "vmmarray") == 0)
		r = cuMemMapArrayAsync(&m, 1, NULL);
	else
		r = cuMemMapArrayAsync_ptsz(&m, 1, NULL);
	report(argv[0], r);
}

static CUdeviceptr asyncs[256];
static int nasyncs;

static CUmemoryPool
current_pool(void)
{
	CUmemoryPool pool;
	CUdevice dev;

	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
	    cuDeviceGetMemPool(&pool, dev) != CUDA_SUCCESS)
		die("no current pool");
	return pool;
}

/* async, freeasync, threshold, trim. */
static void
pool_cmd(char **argv)
{
	cuuint64_t v;
	CUresult r;

	if (strcmp(argv[0], "freeasync") == 0) {
		if (nasyncs == 0)
			die("nothing to free");
		report("freeasync", cuMemFreeAsync(asyncs[--nasyncs], NULL));
		return;
	}
	if (argv[1] == NULL)
		die("missing size");
	v = size_arg(argv[1]);
	if (strcmp(argv[0], "async") == 0) {
		if (nasyncs == 256)
			die("too many async allocations");
		r = cuMemAllocAsync(&asyncs[nasyncs], v, NULL);
		nasyncs += r == CUDA_SUCCESS;
		report("async", r);
	} else if (strcmp(argv[0], "threshold") == 0)
		report("threshold", cuMemPoolSetAttribute(current_pool(),
		    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	else
		report("trim", cuMemPoolTrimTo(current_pool(), v));
}

/* many and repeat. */
static void
series_cmd(char **argv)
{
	size_t n, size, i;
	CUdeviceptr p;
	CUresult r = CUDA_SUCCESS;

	if (argv[1] == NULL || argv[2] == NULL)
		die("missing count or size");
	n = size_arg(argv[1]);
	size = size_arg(argv[2]);
	for (i = 0; i < n && r == CUDA_SUCCESS; i++) {
		if ((r = api.alloc(&p, size)) != CUDA_SUCCESS)
			break;
		if (argv[0][0] == 'm')
			remember(p, size);
		else
			r = api.free(p);
	}
	if (argv[0][0] == 'r')
		report("repeat", r);
	else if (r == CUDA_SUCCESS)
		printf("many %zu\n", i);
	else
		printf("many %zu err=%d\n", i, (int)r);
}

static void
cmd_dev(char **argv)
{
	use_device((int)size_arg(argv[1]));
}

/* alloc SIZE, managed SIZE. */
static void
cmd_alloc(char **argv)
{
	size_t size = size_arg(argv[1]);
	CUdeviceptr p;
	CUresult r;

	r = argv[0][0] == 'a' ? api.alloc(&p, size) :
	    api.managed(&p, size, CU_MEM_ATTACH_GLOBAL);
	if (r == CUDA_SUCCESS)
		remember(p, size);
	report(argv[0], r);
}

static void
cmd_pitch(char **argv)
{
	size_t w = size_arg(argv[1]), h = size_arg(argv[2]), pitch;
	CUdeviceptr p;
	CUresult r;

	r = api.pitch(&p, &pitch, w, h, 4);
	if (r == CUDA_SUCCESS) {
		remember(p, pitch * h);
		printf("pitch ok %zu\n", pitch);
	} else
		printf("pitch err=%d\n", (int)r);
}

static void
cmd_free(void)
{
	if (nmems == 0)
		die("nothing to free");
	report("free", api.free(mems[--nmems].ptr));
}

static void
cmd_freeall(void)
{
	CUresult r = CUDA_SUCCESS;

	while (nmems > 0 && r == CUDA_SUCCESS)
		r = api.free(mems[--nmems].ptr);
	report("freeall", r);
}

static void
cmd_info(void)
{
	size_t fr = 0, total = 0;
	CUresult r = api.info(&fr, &total);

	report_info(r, fr, total);
}

/* waitinfo SIZE: poll, 10 ms apart, for a bounded time. */
static void
cmd_waitinfo(char **argv)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	size_t want = size_arg(argv[1]), fr = 0, total = 0;
	CUresult r = CUDA_SUCCESS;
	int i;

	for (i = 0; i < 1000; i++) {
		if ((r = api.info(&fr, &total)) != CUDA_SUCCESS || fr >= want)
			break;
		nanosleep(&ts, NULL);
	}
	report_info(r, fr, total);
}

static void
cmd_allocfree(void)
{
	size_t fr, total;
	CUdeviceptr p;
	CUresult r;

	if (api.info(&fr, &total) != CUDA_SUCCESS)
		die("cuMemGetInfo failed");
	if ((r = api.alloc(&p, fr)) == CUDA_SUCCESS) {
		remember(p, fr);
		printf("allocfree ok %zu\n", fr);
	} else
		printf("allocfree err=%d %zu\n", (int)r, fr);
}

/* The NVML API Reference's nvmlMemory_t. */
struct nvml_memory {
	unsigned long long total, free, used;
};

static void
cmd_nvml(void)
{
	int (*init)(void), (*get)(unsigned int, void **);
	int (*mem)(void *, struct nvml_memory *);
	struct nvml_memory m;
	void *h, *dev;

	if ((h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL)
		die(dlerror());
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&get = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&mem = dlsym(h, "nvmlDeviceGetMemoryInfo");
	if (init == NULL || get == NULL || mem == NULL)
		die("no NVML memory query");
	if (init() != 0 || get(0, &dev) != 0 || mem(dev, &m) != 0)
		die("NVML's memory query failed");
	printf("nvml free=%llu total=%llu\n", m.free, m.total);
}

static void
cmd_total(void)
{
	CUdevice dev;
	size_t total;
	CUresult r;

	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		die("no current device");
	r = api.total(&total, dev);
	if (r == CUDA_SUCCESS)
		printf("total %zu\n", total);
	else
		printf("total err=%d\n", (int)r);
}

static void
cmd_verify(void)
{
	printf("verify %s\n", verify() == 0 ? "ok" : "failed");
}

/* vmm SIZE, vmmshare SIZE. */
static void
cmd_vmm(char **argv)
{
	vmm_make(size_arg(argv[1]), argv[0][3] == 's');
}

static void
cmd_vmmimport(char **argv)
{
	vmm_import(argv[1]);
}

static void
cmd_seed(char **argv)
{
	seed = (unsigned)size_arg(argv[1]);
}

/* setuid UID: setresuid(UID, UID, UID), who it is changed (issue 39). */
static void
cmd_setuid(char **argv)
{
	uid_t uid = (uid_t)size_arg(argv[1]);

	printf("setuid %s\n", setresuid(uid, uid, uid) == 0 ? "ok" : "err");
}

/* asyncfill N: work queued ahead of a write, left running (issue 33). */
static void
cmd_asyncfill(char **argv)
{
	size_t n = size_arg(argv[1]), i, len;
	void *bulk = NULL, *pat = NULL;
	CUdeviceptr buf;
	CUstream s;
	CUresult r;

	if (nmems == 0)
		die("asyncfill needs an allocation");
	len = mems[0].size < 4096 ? mems[0].size : 4096;
	if ((r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
	    (r = cuMemAlloc_v2(&buf, 1 << 20)) != CUDA_SUCCESS ||
	    (r = cuMemHostAlloc(&bulk, 1 << 20, 0)) != CUDA_SUCCESS ||
	    (r = cuMemHostAlloc(&pat, 4096, 0)) != CUDA_SUCCESS)
		goto out;
	pattern(0, pat, len);
	for (i = 0; i < n && r == CUDA_SUCCESS; i++)
		r = cuMemcpyHtoDAsync_v2(buf, bulk, 1 << 20, s);
	if (r == CUDA_SUCCESS)
		r = cuMemcpyHtoDAsync_v2(mems[0].ptr, pat, len, s);
out:
	report("asyncfill", r);
}

/* ipcget FILE: the handle in hex, whole once FILE exists. */
static void
cmd_ipcget(char **argv)
{
	CUipcMemHandle h;
	char tmp[4096];
	CUresult r;
	FILE *f;
	size_t i;

	if (nmems == 0)
		die("ipcget: no allocation");
	if ((r = cuIpcGetMemHandle(&h, mems[nmems - 1].ptr)) != CUDA_SUCCESS) {
		report("ipcget", r);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	if ((f = fopen(tmp, "w")) == NULL)
		die("ipcget: cannot write the handle");
	for (i = 0; i < sizeof(h.reserved); i++)
		fprintf(f, "%02x", (unsigned char)h.reserved[i]);
	if (fclose(f) != 0 || rename(tmp, argv[1]) < 0)
		die("ipcget: cannot write the handle");
	printf("ipcget ok\n");
}

static CUdeviceptr opened[64];
static int nopened;

/* ipcopen FILE SIZE */
static void
cmd_ipcopen(char **argv)
{
	CUipcMemHandle h;
	CUdeviceptr p;
	unsigned x;
	CUresult r;
	FILE *f;
	size_t i;

	if ((f = fopen(argv[1], "r")) == NULL)
		die("ipcopen: cannot read the handle");
	for (i = 0; i < sizeof(h.reserved); i++) {
		if (fscanf(f, "%2x", &x) != 1)
			die("ipcopen: bad handle");
		h.reserved[i] = (char)x;
	}
	fclose(f);
	if (nopened == (int)(sizeof(opened) / sizeof(opened[0])))
		die("too many opened");
	r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
	if (r == CUDA_SUCCESS) {
		opened[nopened++] = p;
		remember(p, size_arg(argv[2]));
	}
	report("ipcopen", r);
}

/* ipcclose: the newest opened, which is no allocation of ours now. */
static void
cmd_ipcclose(void)
{
	CUdeviceptr p;
	int i;

	if (nopened == 0)
		die("ipcclose: nothing opened");
	p = opened[--nopened];
	for (i = 0; i < nmems && mems[i].ptr != p; i++)
		;
	if (i < nmems)
		mems[i] = mems[--nmems];
	report("ipcclose", cuIpcCloseMemHandle(p));
}

static void
cmd_vmmrelease(void)
{
	if (nreleased >= nvmms)
		die("no handle to release");
	report("vmmrelease", cuMemRelease(vmms[nvmms - 1 - nreleased++].h));
}

static void
cmd_vmmunmap(void)
{
	CUresult r;

	if (nvmms == 0)
		die("no mapping");
	nvmms--;
	nreleased -= nreleased > 0;
	r = cuMemUnmap(vmms[nvmms].va, vmms[nvmms].size);
	if (r == CUDA_SUCCESS)
		r = cuMemAddressFree(vmms[nvmms].va, vmms[nvmms].size);
	report("vmmunmap", r);
}

/* attrs: one answer compared, or the first difference said. */
static int
attrs_same(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return 1;
	printf("attrs differs: %s got %llu want %llu\n", what,
	    (unsigned long long)got, (unsigned long long)want);
	return 0;
}

/* attrs at p, inside the newest allocation m. */
static int
attrs_at(const struct mem *m, CUdeviceptr p, CUcontext cur)
{
	CUpointer_attribute which[] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	    CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
	    CU_POINTER_ATTRIBUTE_CONTEXT,
	    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE };
	CUdeviceptr start = 0, start2 = 0, base = 0;
	size_t size = 0, size2 = 0, map = 0, map2 = 0, range = 0;
	CUcontext ctx = NULL, ctx2 = NULL;
	unsigned int ipc = 0, ipc2 = 0, rdma = 0;
	void *data[] = { &start2, &size2, &map2, &ctx2, &ipc2 };
	CUmemGenericAllocationHandle h;
	CUresult r;

	if ((r = cuPointerGetAttribute(&start,
	    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p)) != CUDA_SUCCESS ||
	    (r = cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	    p)) != CUDA_SUCCESS ||
	    (r = cuPointerGetAttribute(&map, CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
	    p)) != CUDA_SUCCESS ||
	    (r = cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT,
	    p)) != CUDA_SUCCESS ||
	    (r = cuPointerGetAttribute(&ipc,
	    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p)) !=
	    CUDA_SUCCESS ||
	    (r = cuPointerGetAttribute(&rdma,
	    CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p)) !=
	    CUDA_SUCCESS ||
	    (r = cuPointerGetAttributes(5, which, data, p)) != CUDA_SUCCESS ||
	    (r = cuMemGetAddressRange_v2(&base, &range, p)) != CUDA_SUCCESS) {
		report("attrs", r);
		return 0;
	}
	/* A cuMemAlloc has no handle of virtual memory management. */
	if ((r = cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)p)) !=
	    CUDA_ERROR_INVALID_VALUE) {
		printf("attrs differs: cuMemRetainAllocationHandle %d\n",
		    (int)r);
		return 0;
	}
	return attrs_same("RANGE_START_ADDR", start, m->ptr) &&
	    attrs_same("RANGE_SIZE", size, m->size) &&
	    attrs_same("MAPPING_SIZE", map, m->size) &&
	    attrs_same("CONTEXT", (uintptr_t)ctx, (uintptr_t)cur) &&
	    attrs_same("IS_LEGACY_CUDA_IPC_CAPABLE", ipc, 1) &&
	    attrs_same("IS_LEGACY_CUDA_IPC_CAPABLE (of several)", ipc2, 1) &&
	    attrs_same("IS_GPU_DIRECT_RDMA_CAPABLE", rdma, 1) &&
	    attrs_same("RANGE_START_ADDR (of several)", start2, m->ptr) &&
	    attrs_same("RANGE_SIZE (of several)", size2, m->size) &&
	    attrs_same("MAPPING_SIZE (of several)", map2, m->size) &&
	    attrs_same("CONTEXT (of several)", (uintptr_t)ctx2,
	    (uintptr_t)cur) &&
	    attrs_same("cuMemGetAddressRange base", base, m->ptr) &&
	    attrs_same("cuMemGetAddressRange size", range, m->size);
}

static void
cmd_attrs(void)
{
	const struct mem *m;
	CUcontext cur;

	if (nmems == 0)
		die("no allocation");
	m = &mems[nmems - 1];
	if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
		die("no current context");
	if (attrs_at(m, m->ptr, cur) && attrs_at(m, m->ptr + m->size / 2, cur))
		printf("attrs ok\n");
}

/* graph and launch: the nodes' rows, what is between them, the value. */
#define GRAPH_FROM	4096		/* into the allocation */
#define GRAPH_SPAN	12288		/* zeroed, then two rows set */
#define GRAPH_PITCH	8192
#define GRAPH_ROW	1024		/* bytes */
static CUgraphExec graph_exec;

static unsigned
graph_value(size_t i)
{
	return 0xa5000000u | (unsigned)i;
}

static void
cmd_graph(void)
{
	CUDA_MEMSET_NODE_PARAMS p;
	CUgraphNode node = NULL, prev = NULL;
	CUcontext ctx;
	CUgraph g;
	CUresult r;
	size_t i, n = 0;

	if ((r = cuCtxGetCurrent(&ctx)) != CUDA_SUCCESS ||
	    (r = cuGraphCreate(&g, 0)) != CUDA_SUCCESS) {
		report("graph", r);
		return;
	}
	for (i = 0; i < (size_t)nmems && r == CUDA_SUCCESS; i++) {
		if (mems[i].size < GRAPH_FROM + GRAPH_SPAN)
			continue;
		memset(&p, 0, sizeof(p));
		p.dst = mems[i].ptr + GRAPH_FROM;
		p.pitch = GRAPH_PITCH;
		p.value = graph_value(i);
		p.elementSize = 4;
		p.width = GRAPH_ROW / 4;
		p.height = 2;
		if ((r = cuMemsetD8_v2(p.dst, 0, GRAPH_SPAN)) == CUDA_SUCCESS &&
		    (r = cuGraphAddMemsetNode(&node, g, prev ? &prev : NULL,
		    prev ? 1 : 0, &p, ctx)) == CUDA_SUCCESS) {
			prev = node;
			n++;
		}
	}
	if (r == CUDA_SUCCESS)
		r = cuGraphInstantiateWithFlags(&graph_exec, g, 0);
	/* The executable graph lives on without it. */
	(void)cuGraphDestroy(g);
	if (r == CUDA_SUCCESS)
		printf("graph ok %zu\n", n);
	else
		report("graph", r);
}

/* Whether allocation i's 12 KiB hold what the graph's launch set. */
static int
graph_landed(size_t i)
{
	unsigned char got[GRAPH_SPAN], want[GRAPH_SPAN];
	unsigned v = graph_value(i);
	size_t j;

	memset(want, 0, sizeof(want));
	for (j = 0; j < GRAPH_ROW; j += 4) {
		memcpy(want + j, &v, 4);
		memcpy(want + GRAPH_PITCH + j, &v, 4);
	}
	return cuMemcpyDtoH_v2(got, mems[i].ptr + GRAPH_FROM, GRAPH_SPAN) ==
	    CUDA_SUCCESS && memcmp(got, want, GRAPH_SPAN) == 0;
}

static void
cmd_launch(void)
{
	CUresult r;
	size_t i;

	if (graph_exec == NULL)
		die("no graph");
	if ((r = cuGraphLaunch(graph_exec, NULL)) != CUDA_SUCCESS ||
	    (r = cuStreamSynchronize(NULL)) != CUDA_SUCCESS) {
		report("launch", r);
		return;
	}
	for (i = 0; i < (size_t)nmems; i++)
		if (mems[i].size >= GRAPH_FROM + GRAPH_SPAN && !graph_landed(i)) {
			printf("launch differs\n");
			return;
		}
	printf("launch ok\n");
}

static void
cmd_sync(void)
{
	report("sync", cuCtxSynchronize());
}

static void
cmd_busy(void)
{
	report("busy", cuLaunchHostFunc(NULL, hold_fn, NULL));
}

/* ctx and ctxdestroy: the contexts made, what was made before each. */
static CUcontext ctxs[16];
static int nctxs, ctx_mems[16], ctx_arrays[16], ctx_mipmaps[16];

static void
cmd_reset(void)
{
	CUdevice dev;
	CUresult r;

	if ((r = cuCtxGetDevice(&dev)) == CUDA_SUCCESS &&
	    (r = cuDevicePrimaryCtxReset_v2(dev)) == CUDA_SUCCESS)
		nmems = narrays = nmipmaps = 0;
	report("reset", r);
}

static void
cmd_release(void)
{
	CUdevice dev;
	CUresult r;

	if ((r = cuCtxGetDevice(&dev)) != CUDA_SUCCESS || dev < 0 || dev >= 64) {
		report("release", r);
		return;
	}
	while (retains[dev] > 0 &&
	    (r = cuDevicePrimaryCtxRelease_v2(dev)) == CUDA_SUCCESS)
		retains[dev]--;
	if (r == CUDA_SUCCESS)
		nmems = narrays = nmipmaps = 0;
	report("release", r);
}

static void
cmd_release1(void)
{
	CUdevice dev;
	CUresult r;

	if ((r = cuCtxGetDevice(&dev)) == CUDA_SUCCESS && dev >= 0 &&
	    dev < 64 && (r = cuDevicePrimaryCtxRelease_v2(dev)) ==
	    CUDA_SUCCESS && --retains[dev] <= 0) {
		retains[dev] = 0;
		nmems = narrays = nmipmaps = 0;
	}
	report("release1", r);
}

static void
cmd_ctx(void)
{
	CUdevice dev;
	CUresult r;

	if (nctxs == (int)(sizeof(ctxs) / sizeof(ctxs[0])))
		die("too many contexts");
	if ((r = cuCtxGetDevice(&dev)) == CUDA_SUCCESS &&
	    (r = cuCtxCreate_v2(&ctxs[nctxs], 0, dev)) == CUDA_SUCCESS) {
		ctx_mems[nctxs] = nmems;
		ctx_arrays[nctxs] = narrays;
		ctx_mipmaps[nctxs++] = nmipmaps;
	}
	report("ctx", r);
}

static void
cmd_ctxdestroy(void)
{
	CUresult r;

	if (nctxs == 0)
		die("no context to destroy");
	if ((r = cuCtxDestroy_v2(ctxs[nctxs - 1])) == CUDA_SUCCESS) {
		nctxs--;
		nmems = ctx_mems[nctxs];
		narrays = ctx_arrays[nctxs];
		nmipmaps = ctx_mipmaps[nctxs];
	}
	report("ctxdestroy", r);
}

/* sigalloc: what the handler is to do, and what it did. */
static size_t sig_n, sig_size, sig_made;
static CUresult sig_last = CUDA_SUCCESS;

static void
sig_alloc(int sig)
{
	CUdeviceptr p;
	CUresult r;
	size_t i;

	(void)sig;
	for (i = 0; i < sig_n; i++)
		if ((r = api.alloc(&p, sig_size)) == CUDA_SUCCESS) {
			remember(p, sig_size);
			sig_made++;
		} else
			sig_last = r;
}

static void
sig_raise_fn(void *arg)
{
	(void)arg;
	raise(SIGALRM);
}

static void
cmd_sigalloc(char **argv)
{
	struct sigaction sa;
	CUresult r;

	sig_n = size_arg(argv[1]);
	sig_size = size_arg(argv[2]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_alloc;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		die("sigaction failed");
	/* raise() returns once the handler has run: inside the hook. */
	if ((r = cuLaunchHostFunc(NULL, sig_raise_fn, NULL)) != CUDA_SUCCESS)
		die("cuLaunchHostFunc failed");
	if (sig_last == CUDA_SUCCESS)
		printf("sigalloc %zu\n", sig_made);
	else
		printf("sigalloc %zu err=%d\n", sig_made, (int)sig_last);
}

/* The simulated driver's private table (private_table.h). */
static CUresult
private_table(const struct simcuda_private_table **t)
{
	static const CUuuid id = SIMCUDA_PRIVATE_TABLE_ID;

	return cuGetExportTable((const void **)t, &id);
}

/* fn inside a call of the private table, which no shim sees. */
static CUresult
private_call(void (*fn)(void *))
{
	const struct simcuda_private_table *t;
	CUresult r;

	r = private_table(&t);
	if (r == CUDA_SUCCESS)
		r = t->call(fn, NULL);
	return r;
}

static void
cmd_queries(void)
{
	const struct simcuda_private_table *t;
	CUresult r;

	if ((r = private_table(&t)) == CUDA_SUCCESS)
		printf("queries %lu\n", t->pointer_queries());
	else
		report("queries", r);
}

static void
cmd_busy_unhooked(void)
{
	report("busy-unhooked", private_call(hold_fn));
}

static void
nothing(void *arg)
{
	(void)arg;
}

static void
cmd_unhooked(void)
{
	report("unhooked", private_call(nothing));
}

static int	run(char **);

/*
 * fork: 0 in the child, in the parent the child's pid. The child makes no
 * cuInit of its own here: forked after its parent's, the real driver
 * refuses it whatever it calls, as tests/simcuda does.
 */
static pid_t
fork_now(void)
{
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) < 0)
		die("fork failed");
	return pid;
}

/* fork CMD: the command CMD in a forked child, which this one waits for. */
static void
cmd_fork(char **argv)
{
	pid_t pid;
	int status;

	if ((pid = fork_now()) == 0) {
		run(argv + 1);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
}

static int in_child;	/* cmd_child's: leave as cmd_fork's child does */

/* The child goes on with the commands that follow; this one waits, exits. */
static void
child_goes_on(pid_t pid)
{
	int status;

	/* A forked one keeps the parent's pointers, as a program's child
	 * does: what it may do with them is the driver's to say. */
	if (pid == 0) {
		in_child = 1;
		printf("child %d\n", (int)getpid());
		return;
	}
	waitpid(pid, &status, 0);
	exit(0);
}

/* child: the commands that follow run in a forked child. */
static void
cmd_child(void)
{
	child_goes_on(fork_now());
}

static void
cmd_init(void)
{
	report("init", cuInit(0));
}

/*
 * The commands: the words each takes, itself included, and how many of
 * its arguments must be there for it to be known at all (the others say
 * what is missing themselves).
 */
static const struct command {
	const char	*name;
	int		 words;
	int		 need;
	void		(*run)(char **argv);
	void		(*run_alone)(void);	/* one that takes none */
} commands[] = {
	{ "dev",		2, 1, cmd_dev, NULL },
	{ "alloc",		2, 0, cmd_alloc, NULL },
	{ "managed",		2, 0, cmd_alloc, NULL },
	{ "pitch",		3, 0, cmd_pitch, NULL },
	{ "many",		3, 0, series_cmd, NULL },
	{ "repeat",		3, 0, series_cmd, NULL },
	{ "free",		1, 0, NULL, cmd_free },
	{ "freeall",		1, 0, NULL, cmd_freeall },
	{ "info",		1, 0, NULL, cmd_info },
	{ "total",		1, 0, NULL, cmd_total },
	{ "waitinfo",		2, 1, cmd_waitinfo, NULL },
	{ "allocfree",		1, 0, NULL, cmd_allocfree },
	{ "nvml",		1, 0, NULL, cmd_nvml },
	{ "verify",		1, 0, NULL, cmd_verify },
	{ "hold",		1, 0, NULL, hold },
	{ "fill",		1, 0, NULL, fill },
	{ "check",		1, 0, NULL, check },
	{ "peercopy",		1, 0, NULL, peercopy },
	{ "array",		3, 2, make_array, NULL },
	{ "mipmap",		4, 3, make_array, NULL },
	{ "freearrays",		1, 0, NULL, free_arrays },
	{ "async",		2, 0, pool_cmd, NULL },
	{ "freeasync",		1, 0, pool_cmd, NULL },
	{ "threshold",		2, 0, pool_cmd, NULL },
	{ "trim",		2, 0, pool_cmd, NULL },
	{ "vmm",		2, 1, cmd_vmm, NULL },
	{ "vmmshare",		2, 1, cmd_vmm, NULL },
	{ "vmmimport",		2, 1, cmd_vmmimport, NULL },
	{ "vmmrelease",		1, 0, NULL, cmd_vmmrelease },
	{ "ipcget",		2, 1, cmd_ipcget, NULL },
	{ "ipcopen",		3, 2, cmd_ipcopen, NULL },
	{ "ipcclose",		1, 0, NULL, cmd_ipcclose },
	{ "seed",		2, 1, cmd_seed, NULL },
	{ "setuid",		2, 1, cmd_setuid, NULL },
	{ "vmmunmap",		1, 0, NULL, cmd_vmmunmap },
	{ "segment",		3, 2, cmd_segment, NULL },
	{ "segfree",		1, 0, NULL, cmd_segfree },
	{ "vmmtwice",		2, 1, cmd_vmmtwice, NULL },
	{ "vmmprops",		1, 0, NULL, cmd_vmmprops },
	{ "vmmretain",		1, 0, NULL, cmd_vmmretain },
	{ "vmmfreeall",		1, 0, NULL, cmd_vmmfreeall },
	{ "vmmarray",		1, 0, cmd_vmmbind, NULL },
	{ "vmmarraypt",		1, 0, cmd_vmmbind, NULL },
	{ "vmmbind",		1, 0, cmd_vmmbind, NULL },
	{ "sync",		1, 0, NULL, cmd_sync },
	{ "attrs",		1, 0, NULL, cmd_attrs },
	{ "graph",		1, 0, NULL, cmd_graph },
	{ "launch",		1, 0, NULL, cmd_launch },
	{ "busy",		1, 0, NULL, cmd_busy },
	{ "busy-unhooked",	1, 0, NULL, cmd_busy_unhooked },
	{ "unhooked",		1, 0, NULL, cmd_unhooked },
	{ "sigalloc",		3, 2, cmd_sigalloc, NULL },
	{ "reset",		1, 0, NULL, cmd_reset },
	{ "release",		1, 0, NULL, cmd_release },
	{ "release1",		1, 0, NULL, cmd_release1 },
	{ "queries",		1, 0, NULL, cmd_queries },
	{ "ctx",		1, 0, NULL, cmd_ctx },
	{ "ctxdestroy",		1, 0, NULL, cmd_ctxdestroy },
	{ "fork",		1, 1, cmd_fork, NULL },
	{ "child",		1, 0, NULL, cmd_child },
	{ "init",		1, 0, NULL, cmd_init },
	{ "asyncfill",		2, 1, cmd_asyncfill, NULL },
};

static const struct command *
command_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* How many words the command named cmd takes, itself included. */
static int
words_of(const char *cmd)
{
	const struct command *c = command_find(cmd);

	return c != NULL ? c->words : 1;
}

/* Run the command at argv[0]; returns how many words it used. */
static int
run(char **argv)
{
	const struct command *c = command_find(argv[0]);
	int i;

	for (i = 1; c != NULL && i <= c->need; i++)
		if (argv[i] == NULL)
			c = NULL;
	if (c == NULL)
		die("unknown command");
	if (c->run != NULL)
		c->run(argv);
	else
		c->run_alone();
	if (c->run == cmd_fork)		/* and the command the child ran */
		return c->words + words_of(argv[1]);
	return c->words;
}

int
main(int argc, char **argv)
{
	const char *path = "linked";
	sigset_t usr1;
	int i = 1;

	/* "hold" waits for SIGUSR1: keep it pending until then. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "-p") == 0) {
		path = argv[2];
		i = 3;
	}
	if (i < argc && strcmp(argv[i], "launch") == 0) {
		child_goes_on(fork_now());
		i++;
	}
	if (cuInit(0) != CUDA_SUCCESS)
		die("cuInit failed");
	api_resolve(path);
	use_device(0);
	while (i < argc)
		i += run(argv + i);
	if (in_child) {
		fflush(stdout);
		_exit(0);
	}
	return 0;
}
