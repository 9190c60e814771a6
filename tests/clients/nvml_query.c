/*
 * A scriptable NVML client for integration tests, linked against the
 * simulated libnvidia-ml.so.1 (and not libcuda). It runs its arguments as
 * commands, printing one line each:
 *   api            check the API's contract (errors before nvmlInit, the
 *                  init count, bad arguments and handles, unknown UUID and
 *                  bus id, buffer sizes, struct versions): "api ok", or
 *                  "FAIL ..." lines and "api failed"; first, before any
 *                  other command initialises NVML
 *   init FLAGS     nvmlInitWithFlags(FLAGS): "init ok" or "init err=CODE"
 *                  (the other commands call nvmlInit_v2 unless it was)
 *   count          "count N"
 *   dev N          "dev N UUID BUSID NAME" for NVML index N
 *   mem N          "mem N total=T used=U free=F" (the v1 and v2 queries
 *                  must agree)
 *   procs N        "procs N PID=BYTES ..." by pid: the compute processes,
 *                  fetched with the INSUFFICIENT_SIZE protocol, checked
 *                  against the _v2 and v1 calls
 *   uuid UUID      "uuid N", the index of the device, or "uuid err=CODE"
 *   pid            "pid N": this process
 *   limset N DIR SOFT HARD   nvmlDeviceSetMemoryLimits_v1 on NVML index N
 *                  for the cgroup directory DIR (HARD "max": ULLONG_MAX),
 *                  looked up by dlsym as a daemon would: "limset ok",
 *                  "limset err=CODE", or "limset absent" (no such function)
 *   limget N DIR   nvmlDeviceGetMemoryLimits_v1: "limget soft=S hard=H
 *                  used=U", "limget err=CODE" or "limget absent"
 *   cuda ORD SIZE  in this process, through a dlopen'ed libcuda.so.1:
 *                  cuMemAlloc SIZE on CUDA ordinal ORD ("cuda ok" or
 *                  "cuda err=CODE")
 * Exit status: 0; 1 when a check failed; 2 on a usage or set-up error.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../simcuda/nvml_abi.h"
#include "failures.h"
#include "units.h"

#define NO_INSTANCE	0xffffffffu

#define EXPECT(call, want) do {						\
	nvmlReturn_t r_ = (call);					\
	CHECK(r_ == (want), "%s: got %d (%s), want %d", #call, (int)r_,	\
	    nvmlErrorString(r_), (int)(want));				\
} while (0)

#define OK(call)	EXPECT(call, NVML_SUCCESS)

static void
die(const char *what)
{
	fprintf(stderr, "nvml_query: %s\n", what);
	exit(2);
}

static uint64_t
size_arg(const char *s)
{
	uint64_t v;

	if (s == NULL || size_parse(s, &v) < 0)
		die("bad number");
	return v;
}

static unsigned
index_arg(const char *s)
{
	uint64_t v = size_arg(s);

	if (v >= 1024)
		die("bad index");
	return (unsigned)v;
}

static nvmlDevice_t
handle(unsigned index)
{
	nvmlDevice_t h;

	if (nvmlDeviceGetHandleByIndex_v2(index, &h) != NVML_SUCCESS)
		die("no such device");
	return h;
}

static void
check_uninitialized(void)
{
	unsigned n;
	nvmlDevice_t h;
	nvmlMemory_t m;
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int v = 0;

	EXPECT(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(0, &h), NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-"
	    "000000000000", &h), NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlSystemGetDriverVersion(buf, sizeof(buf)),
	    NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlDeviceGetMemoryInfo(NULL, &m), NVML_ERROR_UNINITIALIZED);
	/* The reference lists no UNINITIALIZED for this one. */
	OK(nvmlSystemGetCudaDriverVersion(&v));
	CHECK(v == 12080, "CUDA driver version %d", v);
	CHECK(strcmp(nvmlErrorString(NVML_ERROR_UNINITIALIZED),
	    "Uninitialized") == 0, "'%s'",
	    nvmlErrorString(NVML_ERROR_UNINITIALIZED));
	CHECK(strcmp(nvmlErrorString((nvmlReturn_t)12345), "Unknown Error") ==
	    0, "'%s'", nvmlErrorString((nvmlReturn_t)12345));
}

/* Each init needs its shutdown; the last one ends the session. */
static void
check_init_count(void)
{
	unsigned n;

	OK(nvmlInit_v2());
	OK(nvmlInit());
	OK(nvmlInitWithFlags(0));
	OK(nvmlShutdown());
	OK(nvmlShutdown());
	OK(nvmlDeviceGetCount_v2(&n));
	OK(nvmlShutdown());
	EXPECT(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	EXPECT(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

static void
check_system(void)
{
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int v = 0;

	OK(nvmlSystemGetDriverVersion(buf, sizeof(buf)));
	CHECK(strncmp(buf, "570.", 4) == 0, "driver version '%s'", buf);
	EXPECT(nvmlSystemGetDriverVersion(buf, 4),
	    NVML_ERROR_INSUFFICIENT_SIZE);
	EXPECT(nvmlSystemGetDriverVersion(NULL, 80),
	    NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlSystemGetNVMLVersion(buf, sizeof(buf)));
	CHECK(strncmp(buf, "12.570.", 7) == 0, "NVML version '%s'", buf);
	OK(nvmlSystemGetCudaDriverVersion_v2(&v));
	CHECK(v == 12080, "CUDA driver version %d", v);
	EXPECT(nvmlSystemGetCudaDriverVersion(NULL),
	    NVML_ERROR_INVALID_ARGUMENT);
}

/* Index, UUID and bus id lead to the same handle, by every entry point. */
static void
check_identity(unsigned i)
{
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], want[64];
	nvmlDevice_t h, h2;
	nvmlPciInfo_t pci;
	unsigned index = 99;

	OK(nvmlDeviceGetHandleByIndex_v2(i, &h));
	OK(nvmlDeviceGetHandleByIndex(i, &h2));
	CHECK(h == h2, "old and v2 handles of %u differ", i);
	OK(nvmlDeviceGetIndex(h, &index));
	CHECK(index == i, "index %u of device %u", index, i);
	OK(nvmlDeviceGetName(h, name, sizeof(name)));
	snprintf(want, sizeof(want), "simcuda device %u", i);
	CHECK(strcmp(name, want) == 0, "name '%s'", name);
	EXPECT(nvmlDeviceGetName(h, name, 5), NVML_ERROR_INSUFFICIENT_SIZE);
	OK(nvmlDeviceGetUUID(h, uuid, NVML_DEVICE_UUID_BUFFER_SIZE));
	CHECK(strlen(uuid) == 40 && strncmp(uuid, "GPU-", 4) == 0,
	    "uuid '%s'", uuid);
	EXPECT(nvmlDeviceGetUUID(h, name, 40), NVML_ERROR_INSUFFICIENT_SIZE);
	OK(nvmlDeviceGetHandleByUUID(uuid, &h2));
	CHECK(h == h2, "by UUID, device %u", i);
	OK(nvmlDeviceGetPciInfo_v3(h, &pci));
	CHECK(pci.domain == 0 && pci.bus == i + 1 && pci.device == 0 &&
	    (pci.pciDeviceId & 0xffff) == 0x10de, "PCI %x:%x:%x id %x",
	    pci.domain, pci.bus, pci.device, pci.pciDeviceId);
	snprintf(want, sizeof(want), "00000000:%02X:00.0", i + 1);
	CHECK(strcmp(pci.busId, want) == 0, "bus id '%s'", pci.busId);
	h2 = NULL;
	OK(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &h2));
	CHECK(h == h2, "by bus id '%s'", pci.busId);
	h2 = NULL;
	OK(nvmlDeviceGetHandleByPciBusId(pci.busIdLegacy, &h2));
	CHECK(h == h2, "by legacy bus id '%s'", pci.busIdLegacy);
	snprintf(want, sizeof(want), "%x:0.0", i + 1);
	h2 = NULL;
	OK(nvmlDeviceGetHandleByPciBusId_v2(want, &h2));
	CHECK(h == h2, "by short bus id '%s'", want);
}

static void
check_bad_arguments(unsigned n)
{
	struct { unsigned x[4]; } not_a_device;
	nvmlDevice_t h, bad = (nvmlDevice_t)&not_a_device;
	nvmlMemory_t m;
	unsigned count = 0, index;
	char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];

	EXPECT(nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(n, &h),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(0, NULL),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetIndex(bad, &index), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetIndex(NULL, &index), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetMemoryInfo(bad, &m), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetComputeRunningProcesses_v3(bad, &count, NULL),
	    NVML_ERROR_INVALID_ARGUMENT);
	h = handle(0);
	EXPECT(nvmlDeviceGetIndex((nvmlDevice_t)((char *)h + 1), &index),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetIndex(h, NULL), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetUUID(h, NULL, sizeof(uuid)),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetMemoryInfo(h, NULL), NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetComputeRunningProcesses_v3(h, NULL, NULL),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-"
	    "000000000000", &h), NVML_ERROR_NOT_FOUND);
	EXPECT(nvmlDeviceGetHandleByUUID("GPU-", &h), NVML_ERROR_NOT_FOUND);
	EXPECT(nvmlDeviceGetHandleByUUID(NULL, &h),
	    NVML_ERROR_INVALID_ARGUMENT);
	EXPECT(nvmlDeviceGetHandleByPciBusId_v2("0000:7f:00.0", &h),
	    NVML_ERROR_NOT_FOUND);
	EXPECT(nvmlDeviceGetHandleByPciBusId_v2("bus one", &h),
	    NVML_ERROR_INVALID_ARGUMENT);
}

/* nvmlMemory_v2_t must say which version it is. */
static void
check_memory_versions(void)
{
	nvmlDevice_t h = handle(0);
	nvmlMemory_v2_t m2;
	nvmlMemory_t m;

	CHECK(nvmlMemory_v2 == 0x02000028, "nvmlMemory_v2 %#x",
	    nvmlMemory_v2);
	memset(&m2, 0, sizeof(m2));
	EXPECT(nvmlDeviceGetMemoryInfo_v2(h, &m2),
	    NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	m2.version = (nvmlMemory_v2 & 0xffffffu) | 3u << 24;
	EXPECT(nvmlDeviceGetMemoryInfo_v2(h, &m2),
	    NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	m2.version = nvmlMemory_v2;
	m2.reserved = 42;
	OK(nvmlDeviceGetMemoryInfo_v2(h, &m2));
	OK(nvmlDeviceGetMemoryInfo(h, &m));
	CHECK(m2.version == nvmlMemory_v2 && m2.reserved == 0 &&
	    m2.total == m.total && m2.total == m2.free + m2.used,
	    "v2 total %llu reserved %llu free %llu used %llu", m2.total,
	    m2.reserved, m2.free, m2.used);
}

/* Nothing draws: no graphics process, whatever the buffer. */
static void
check_graphics(unsigned i)
{
	nvmlDevice_t h = handle(i);
	nvmlProcessInfo_t p3[2];
	nvmlProcessInfo_v1_t p1[2];
	unsigned count = 0;

	OK(nvmlDeviceGetGraphicsRunningProcesses_v3(h, &count, NULL));
	CHECK(count == 0, "graphics count %u", count);
	count = 2;
	OK(nvmlDeviceGetGraphicsRunningProcesses_v3(h, &count, p3));
	CHECK(count == 0, "graphics count %u", count);
	count = 2;
	OK(nvmlDeviceGetGraphicsRunningProcesses_v2(h, &count, p3));
	CHECK(count == 0, "graphics count %u", count);
	count = 2;
	OK(nvmlDeviceGetGraphicsRunningProcesses(h, &count, p1));
	CHECK(count == 0, "graphics count %u", count);
	count = 1;
	EXPECT(nvmlDeviceGetGraphicsRunningProcesses_v3(h, &count, NULL),
	    NVML_ERROR_INVALID_ARGUMENT);
}

static void
cmd_api(void)
{
	unsigned n = 0, i;

	check_uninitialized();
	check_init_count();
	OK(nvmlInit_v2());
	check_system();
	OK(nvmlDeviceGetCount_v2(&n));
	OK(nvmlDeviceGetCount(&i));
	CHECK(n > 0 && i == n, "device counts %u and %u", n, i);
	for (i = 0; i < n; i++) {
		check_identity(i);
		check_graphics(i);
	}
	if (n > 0) {
		check_bad_arguments(n);
		check_memory_versions();
	}
	OK(nvmlShutdown());
	printf("api %s\n", failures ? "failed" : "ok");
}

static void
cmd_dev(unsigned i)
{
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	nvmlDevice_t h = handle(i);
	nvmlPciInfo_t pci;

	OK(nvmlDeviceGetUUID(h, uuid, sizeof(uuid)));
	OK(nvmlDeviceGetName(h, name, sizeof(name)));
	OK(nvmlDeviceGetPciInfo_v3(h, &pci));
	printf("dev %u %s %s %s\n", i, uuid, pci.busId, name);
}

static void
cmd_mem(unsigned i)
{
	nvmlDevice_t h = handle(i);
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	nvmlMemory_t m;

	OK(nvmlDeviceGetMemoryInfo(h, &m));
	OK(nvmlDeviceGetMemoryInfo_v2(h, &m2));
	CHECK(m.total == m2.total && m.used == m2.used && m.free == m2.free,
	    "v1 %llu/%llu/%llu, v2 %llu/%llu/%llu", m.total, m.used, m.free,
	    m2.total, m2.used, m2.free);
	CHECK(m.total == m.used + m.free, "total %llu used %llu free %llu",
	    m.total, m.used, m.free);
	printf("mem %u total=%llu used=%llu free=%llu\n", i, m.total, m.used,
	    m.free);
}

static int
by_pid(const void *a, const void *b)
{
	const nvmlProcessInfo_t *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * The protocol: ask with no room, get INSUFFICIENT_SIZE and the count
 * (SUCCESS and 0 when there is none); too little room, the same; enough,
 * the list. The processes must stay put meanwhile.
 */
static unsigned
procs_fetch(nvmlDevice_t h, nvmlProcessInfo_t *p, unsigned room)
{
	unsigned n = 0, count;
	nvmlReturn_t r = nvmlDeviceGetComputeRunningProcesses_v3(h, &n, NULL);

	CHECK(r == (n > 0 ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS),
	    "with no room: %d, count %u", (int)r, n);
	if (n + 2 > room)
		die("too many processes");
	if (n > 1) {
		count = n - 1;
		EXPECT(nvmlDeviceGetComputeRunningProcesses_v3(h, &count, p),
		    NVML_ERROR_INSUFFICIENT_SIZE);
		CHECK(count == n, "too little room: count %u, want %u", count,
		    n);
	}
	count = n + 2;
	OK(nvmlDeviceGetComputeRunningProcesses_v3(h, &count, p));
	CHECK(count == n, "count %u, want %u", count, n);
	return count;
}

static void
cmd_procs(unsigned i)
{
	nvmlDevice_t h = handle(i);
	nvmlProcessInfo_t p[64];
	nvmlProcessInfo_v2_t p2[64];
	nvmlProcessInfo_v1_t p1[64];
	unsigned n = procs_fetch(h, p, 64), n2 = 64, n1 = 64, j, k;

	OK(nvmlDeviceGetComputeRunningProcesses_v2(h, &n2, p2));
	OK(nvmlDeviceGetComputeRunningProcesses(h, &n1, p1));
	CHECK(n1 == n && n2 == n, "counts v3 %u, v2 %u, v1 %u", n, n2, n1);
	for (j = 0; j < n && j < n1 && j < n2; j++) {
		CHECK(p[j].gpuInstanceId == NO_INSTANCE &&
		    p[j].computeInstanceId == NO_INSTANCE,
		    "pid %u: instance %u/%u", p[j].pid, p[j].gpuInstanceId,
		    p[j].computeInstanceId);
		CHECK(p2[j].pid == p[j].pid && p1[j].pid == p[j].pid &&
		    p2[j].usedGpuMemory == p[j].usedGpuMemory &&
		    p1[j].usedGpuMemory == p[j].usedGpuMemory,
		    "entry %u differs between versions", j);
	}
	qsort(p, n, sizeof(p[0]), by_pid);
	printf("procs %u", i);
	for (k = 0; k < n; k++)
		printf(" %u=%llu", p[k].pid, p[k].usedGpuMemory);
	printf("\n");
}

static void
cmd_uuid(const char *s)
{
	nvmlDevice_t h;
	unsigned index;
	nvmlReturn_t r = nvmlDeviceGetHandleByUUID(s, &h);

	if (r == NVML_SUCCESS)
		r = nvmlDeviceGetIndex(h, &index);
	if (r == NVML_SUCCESS)
		printf("uuid %u\n", index);
	else
		printf("uuid err=%d\n", (int)r);
}

/* The simulated driver in this same process, as a framework would load
 * it: it and NVML must see the same machine. */
static void
cmd_cuda(int ordinal, size_t size)
{
	CUresult (*init)(unsigned int);
	CUresult (*get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUdevice d;
	CUcontext c;
	CUdeviceptr p;
	CUresult r;

	if (lib == NULL)
		die(dlerror());
	*(void **)&init = dlsym(lib, "cuInit");
	*(void **)&get = dlsym(lib, "cuDeviceGet");
	*(void **)&retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
	*(void **)&set = dlsym(lib, "cuCtxSetCurrent");
	*(void **)&alloc = dlsym(lib, "cuMemAlloc_v2");
	if (!init || !get || !retain || !set || !alloc)
		die("libcuda.so.1 lacks a driver call");
	if ((r = init(0)) == CUDA_SUCCESS &&
	    (r = get(&d, ordinal)) == CUDA_SUCCESS &&
	    (r = retain(&c, d)) == CUDA_SUCCESS &&
	    (r = set(c)) == CUDA_SUCCESS)
		r = alloc(&p, size);
	if (r == CUDA_SUCCESS)
		printf("cuda ok\n");
	else
		printf("cuda err=%d\n", (int)r);
	/* The memory stays until exit; so does the library. */
}

/* The driver's memory limits of a cgroup (r615): by dlsym, for a driver
 * without them has neither function. */
static void
cmd_limits(char **argv)
{
	nvmlReturn_t (*set)(nvmlDevice_t, nvmlSetMemoryLimits_v1_t *);
	nvmlReturn_t (*get)(nvmlDevice_t, nvmlGetMemoryLimits_v1_t *);
	nvmlDevice_t h = handle(index_arg(argv[1]));
	const char *cmd = argv[0];
	nvmlReturn_t r;

	*(void **)&set = dlsym(RTLD_DEFAULT, "nvmlDeviceSetMemoryLimits_v1");
	*(void **)&get = dlsym(RTLD_DEFAULT, "nvmlDeviceGetMemoryLimits_v1");
	if (argv[2] == NULL || (cmd[3] == 's' && argv[3] == NULL))
		die("limset needs N DIR SOFT HARD, limget N DIR");
	if ((cmd[3] == 's' ? (void *)set : (void *)get) == NULL) {
		printf("%s absent\n", cmd);
		return;
	}
	if (cmd[3] == 's') {
		nvmlSetMemoryLimits_v1_t l = { .nameSpace = argv[2] };

		l.softLimit = size_arg(argv[3]);
		l.hardLimit = argv[4] != NULL && strcmp(argv[4], "max") == 0 ?
		    ~0ull : size_arg(argv[4]);
		if ((r = set(h, &l)) == NVML_SUCCESS)
			printf("limset ok\n");
		else
			printf("limset err=%d\n", (int)r);
	} else {
		nvmlGetMemoryLimits_v1_t l = { .nameSpace = argv[2] };

		if ((r = get(h, &l)) == NVML_SUCCESS)
			printf("limget soft=%llu hard=%llu used=%llu\n",
			    l.softLimit, l.hardLimit, l.currentUsed);
		else
			printf("limget err=%d\n", (int)r);
	}
}

static int initialised;

static void
need_init(void)
{
	if (!initialised && nvmlInit_v2() != NVML_SUCCESS)
		die("nvmlInit_v2 failed");
	initialised = 1;
}

/* Run the command at argv[0]; returns how many arguments it used. */
static int
run(char **argv)
{
	const char *cmd = argv[0];

	if (strcmp(cmd, "api") == 0) {
		cmd_api();
		return 1;
	}
	if (strcmp(cmd, "pid") == 0) {
		printf("pid %d\n", (int)getpid());
		return 1;
	}
	if (strcmp(cmd, "cuda") == 0) {
		if (argv[1] == NULL)
			die("cuda needs an ordinal and a size");
		cmd_cuda((int)index_arg(argv[1]), (size_t)size_arg(argv[2]));
		return 3;
	}
	if (strcmp(cmd, "init") == 0) {
		nvmlReturn_t r = nvmlInitWithFlags(index_arg(argv[1]));

		if (r == NVML_SUCCESS) {
			initialised = 1;
			printf("init ok\n");
		} else
			printf("init err=%d\n", (int)r);
		return 2;
	}
	need_init();
	if (strcmp(cmd, "count") == 0) {
		unsigned n = 0;

		OK(nvmlDeviceGetCount_v2(&n));
		printf("count %u\n", n);
		return 1;
	}
	if (strcmp(cmd, "uuid") == 0 && argv[1]) {
		cmd_uuid(argv[1]);
		return 2;
	}
	if (strcmp(cmd, "dev") == 0 || strcmp(cmd, "mem") == 0 ||
	    strcmp(cmd, "procs") == 0) {
		unsigned i = index_arg(argv[1]);

		if (cmd[0] == 'd')
			cmd_dev(i);
		else if (cmd[0] == 'm')
			cmd_mem(i);
		else
			cmd_procs(i);
		return 2;
	}
	if (strcmp(cmd, "limset") == 0 || strcmp(cmd, "limget") == 0) {
		cmd_limits((char **)argv);
		return cmd[3] == 's' ? 5 : 3;
	}
	die("unknown command");
	return 0;
}

int
main(int argc, char **argv)
{
	int i = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: nvml_query command ...\n");
		return 2;
	}
	while (i < argc)
		i += run(argv + i);
	fflush(stdout);
	return failures ? 1 : 0;
}
