/*
 * A scriptable CUDA program for integration tests. It reaches the driver's
 * memory functions by the path named with -p, as real programs do:
 *   linked     calls the versioned symbols it was linked against
 *   dlsym      dlsym() on a dlopen'ed libcuda handle (numba, TF's stub)
 *   dlsym-old  the same through dlsym@GLIBC_2.2.5 (binaries built before 2.34)
 *   procaddr   cuGetProcAddress_v2 (libcudart >= 12, PyTorch)
 *   procaddr1  the 4-argument cuGetProcAddress (libcudart 11.3 .. 11.8)
 *   procaddr-self  cuGetProcAddress_v2 asked for "cuGetProcAddress" first
 * then runs its arguments as commands, printing one line each:
 *   dev N            make device N's primary context current (default 0)
 *   alloc SIZE       cuMemAlloc            -> "alloc ok" | "alloc err=CODE"
 *   pitch W H        cuMemAllocPitch       -> "pitch ok PITCH" | "pitch err=CODE"
 *   managed SIZE     cuMemAllocManaged     -> "managed ok" | "managed err=CODE"
 *   free             cuMemFree of the newest allocation -> "free ok|err=CODE"
 *   freeall          frees every allocation
 *   info             cuMemGetInfo          -> "info free=N total=N"
 *   total            cuDeviceTotalMem      -> "total N"
 *   verify           write a pattern into each allocation, read it back
 *   fill             write each allocation's own pattern (its first 4 KiB)
 *   check            read them back: "check ok" | "check differs" | "check err=CODE"
 *   sync             cuCtxSynchronize      -> "sync ok" | "sync err=CODE"
 *   busy             inside cuLaunchHostFunc (a driver call gpufrac hooks)
 *                    print "holding", then wait for SIGUSR1
 *   busy-unhooked    the same inside cuStreamAddCallback, which it does not
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
 *   async SIZE       cuMemAllocAsync on the null stream -> "async ok" | ...
 *   freeasync        cuMemFreeAsync of the newest async allocation
 *   threshold SIZE   the current pool's release threshold
 *   trim SIZE        cuMemPoolTrimTo the current pool
 *   many N SIZE      cuMemAlloc SIZE up to N times, kept, stopping at the
 *                    first failure: "many K" | "many K err=CODE" (K made)
 *   repeat N SIZE    N pairs of cuMemAlloc SIZE and its cuMemFree:
 *                    "repeat ok" | "repeat err=CODE"
 *   fork CMD         run one command in a forked child, then wait for it
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
#include <unistd.h>

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

static void *
via_procaddr(procaddr2_fn gpa, procaddr1_fn gpa1, const char *name)
{
	CUdriverProcAddressQueryResult st;
	void *p = NULL;
	CUresult r;

	r = gpa ? gpa(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st) :
	    gpa1(name, &p, 11030, CU_GET_PROC_ADDRESS_DEFAULT);
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
	if (strcmp(path, "procaddr") == 0)
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

static void
use_device(int ordinal)
{
	CUdevice dev;
	CUcontext ctx;

	if (cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		die("cannot make the device's context current");
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

static void
pattern(size_t i, unsigned char *buf, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		buf[j] = (unsigned char)(i * 131 + j * 7 + 1);
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
	printf("check ok\n");
}

/* Say "holding" and wait for SIGUSR1: the "hold" command. */
static void
hold(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	printf("holding\n");
	fflush(stdout);
	sigwait(&usr1, &sig);
}

static void
hold_fn(void *arg)
{
	(void)arg;
	hold();
}

static void CUDA_CB
hold_cb(CUstream s, CUresult status, void *arg)
{
	(void)s;
	(void)status;
	hold();
	(void)arg;
}

static CUarray arrays[64];
static CUmipmappedArray mipmaps[64];
static int narrays, nmipmaps;

/* array W H, mipmap W H LEVELS: returns the words used. */
static int
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
		return 3;
	}
	if (nmipmaps == 64)
		die("too many mipmaps");
	r = cuMipmappedArrayCreate(&mipmaps[nmipmaps], &d,
	    (unsigned)size_arg(argv[3]));
	nmipmaps += r == CUDA_SUCCESS;
	report("mipmap", r);
	return 4;
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

static struct {
	CUmemGenericAllocationHandle h;
	CUdeviceptr	va;
	size_t		size;
} vmms[64];
static int nvmms, nreleased;

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
	if (r == CUDA_SUCCESS)
		vmms[nvmms++].size = size;
	return r;
}

/* The current device, with room for one more vmm allocation. */
static CUdevice
vmm_device(void)
{
	CUdevice dev;

	if (nvmms == 64)
		die("too many vmm allocations");
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		die("no current device");
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

/* async, freeasync, threshold, trim; returns the words used. */
static int
pool_cmd(char **argv)
{
	cuuint64_t v;
	CUresult r;

	if (strcmp(argv[0], "freeasync") == 0) {
		if (nasyncs == 0)
			die("nothing to free");
		report("freeasync", cuMemFreeAsync(asyncs[--nasyncs], NULL));
		return 1;
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
	return 2;
}

/* many and repeat; returns the words used. */
static int
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
	return 3;
}

/* How many words a command takes, itself included. */
static int
arity(const char *cmd)
{
	if (strcmp(cmd, "pitch") == 0 || strcmp(cmd, "array") == 0)
		return 3;
	if (strcmp(cmd, "mipmap") == 0)
		return 4;
	if (strcmp(cmd, "many") == 0 || strcmp(cmd, "repeat") == 0)
		return 3;
	if (strcmp(cmd, "alloc") == 0 || strcmp(cmd, "managed") == 0 ||
	    strcmp(cmd, "vmm") == 0 || strcmp(cmd, "async") == 0 ||
	    strcmp(cmd, "threshold") == 0 || strcmp(cmd, "trim") == 0 ||
	    strcmp(cmd, "dev") == 0)
		return 2;
	return 1;
}

/* Run the command at argv[0]; returns how many arguments it used. */
static int
run(char **argv)
{
	const char *cmd = argv[0];
	CUdeviceptr p;
	size_t a, b, pitch;
	CUresult r;

	if (strcmp(cmd, "dev") == 0 && argv[1]) {
		use_device((int)size_arg(argv[1]));
		return 2;
	}
	if (strcmp(cmd, "alloc") == 0 || strcmp(cmd, "managed") == 0) {
		a = size_arg(argv[1]);
		r = cmd[0] == 'a' ? api.alloc(&p, a) :
		    api.managed(&p, a, CU_MEM_ATTACH_GLOBAL);
		if (r == CUDA_SUCCESS)
			remember(p, a);
		report(cmd, r);
		return 2;
	}
	if (strcmp(cmd, "many") == 0 || strcmp(cmd, "repeat") == 0)
		return series_cmd(argv);
	if (strcmp(cmd, "pitch") == 0) {
		a = size_arg(argv[1]);
		b = size_arg(argv[2]);
		r = api.pitch(&p, &pitch, a, b, 4);
		if (r == CUDA_SUCCESS) {
			remember(p, pitch * b);
			printf("pitch ok %zu\n", pitch);
		} else
			printf("pitch err=%d\n", (int)r);
		return 3;
	}
	if (strcmp(cmd, "free") == 0) {
		if (nmems == 0)
			die("nothing to free");
		report("free", api.free(mems[--nmems].ptr));
		return 1;
	}
	if (strcmp(cmd, "freeall") == 0) {
		r = CUDA_SUCCESS;
		while (nmems > 0 && r == CUDA_SUCCESS)
			r = api.free(mems[--nmems].ptr);
		report("freeall", r);
		return 1;
	}
	if (strcmp(cmd, "info") == 0) {
		r = api.info(&a, &b);
		if (r == CUDA_SUCCESS)
			printf("info free=%zu total=%zu\n", a, b);
		else
			printf("info err=%d\n", (int)r);
		return 1;
	}
	if (strcmp(cmd, "total") == 0) {
		CUdevice dev;

		if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
			die("no current device");
		r = api.total(&a, dev);
		if (r == CUDA_SUCCESS)
			printf("total %zu\n", a);
		else
			printf("total err=%d\n", (int)r);
		return 1;
	}
	if (strcmp(cmd, "verify") == 0) {
		printf("verify %s\n", verify() == 0 ? "ok" : "failed");
		return 1;
	}
	if (strcmp(cmd, "hold") == 0) {
		hold();
		return 1;
	}
	if (strcmp(cmd, "fill") == 0 || strcmp(cmd, "check") == 0) {
		if (cmd[0] == 'f')
			fill();
		else
			check();
		return 1;
	}
	if ((strcmp(cmd, "array") == 0 && argv[1] && argv[2]) ||
	    (strcmp(cmd, "mipmap") == 0 && argv[1] && argv[2] && argv[3]))
		return make_array(argv);
	if (strcmp(cmd, "async") == 0 || strcmp(cmd, "freeasync") == 0 ||
	    strcmp(cmd, "threshold") == 0 || strcmp(cmd, "trim") == 0)
		return pool_cmd(argv);
	if ((strcmp(cmd, "vmm") == 0 || strcmp(cmd, "vmmshare") == 0) &&
	    argv[1]) {
		vmm_make(size_arg(argv[1]), cmd[3] == 's');
		return 2;
	}
	if (strcmp(cmd, "vmmimport") == 0 && argv[1]) {
		vmm_import(argv[1]);
		return 2;
	}
	if (strcmp(cmd, "vmmrelease") == 0) {
		if (nreleased >= nvmms)
			die("no handle to release");
		report("vmmrelease", cuMemRelease(vmms[nvmms - 1 - nreleased++].h));
		return 1;
	}
	if (strcmp(cmd, "vmmunmap") == 0) {
		if (nvmms == 0)
			die("no mapping");
		nvmms--;
		nreleased -= nreleased > 0;
		r = cuMemUnmap(vmms[nvmms].va, vmms[nvmms].size);
		if (r == CUDA_SUCCESS)
			r = cuMemAddressFree(vmms[nvmms].va, vmms[nvmms].size);
		report("vmmunmap", r);
		return 1;
	}
	if (strcmp(cmd, "freearrays") == 0) {
		free_arrays();
		return 1;
	}
	if (strcmp(cmd, "sync") == 0) {
		report("sync", cuCtxSynchronize());
		return 1;
	}
	if (strcmp(cmd, "busy") == 0) {
		report("busy", cuLaunchHostFunc(NULL, hold_fn, NULL));
		return 1;
	}
	if (strcmp(cmd, "busy-unhooked") == 0) {
		report("busy-unhooked", cuStreamAddCallback(NULL, hold_cb, NULL,
		    0));
		return 1;
	}
	if (strcmp(cmd, "fork") == 0 && argv[1]) {
		pid_t pid;
		int status;

		fflush(stdout);
		if ((pid = fork()) < 0)
			die("fork failed");
		if (pid == 0) {
			/* CUDA does not let a child use its parent's context:
			 * it starts its own. */
			if (cuInit(0) != CUDA_SUCCESS)
				die("cuInit failed in the child");
			use_device(0);
			run(argv + 1);
			fflush(stdout);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		return 1 + arity(argv[1]);
	}
	die("unknown command");
	return 0;
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
	if (cuInit(0) != CUDA_SUCCESS)
		die("cuInit failed");
	api_resolve(path);
	use_device(0);
	while (i < argc)
		i += run(argv + i);
	return 0;
}
