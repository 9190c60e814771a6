/*
 * The simulated NVML, libnvidia-ml.so.1: the devices, their memory and the
 * processes holding it, read from the simulator's shared state (state.c),
 * so that it sees every simcuda process of the same SIMCUDA_STATE. Like the
 * real NVML it numbers every device in PCI order whatever
 * CUDA_VISIBLE_DEVICES says. The ABI is in nvml_abi.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "nvml_abi.h"
#include "sim.h"
#include "uuid.h"

/* The branch that brings CUDA 12.8 (SIM_DRIVER_VERSION): R570. */
#define NVML_SIM_DRIVER		"570.00"
#define NVML_SIM_NVML		"12.570.00"	/* API version 12 */
/* An H100 SXM5: device id 0x2330, NVIDIA's vendor id 0x10de. */
#define NVML_SIM_PCI_DEVICE	0x233010deu
#define NVML_SIM_PCI_SUBSYSTEM	0x16c110deu
#define NVML_SIM_NO_INSTANCE	0xffffffffu	/* not a MIG instance */

/* A handle points at one of these: the device's physical index is its
 * place in devices[]. */
struct nvmlDevice_st {
	unsigned int	index;
};

static struct nvmlDevice_st devices[SIM_MAX_DEVICES];
static unsigned ndevices;		/* set once, before init_count rises */
static int attached;			/* to the machine: ndevices is set */
static unsigned init_count;		/* nvmlInit* minus nvmlShutdown */
static pthread_mutex_t init_mutex = PTHREAD_MUTEX_INITIALIZER;

/*
 * Fork: the lock is held across fork() so that no thread the child lacks
 * holds its copy; the child keeps the count (its memory is a copy of the
 * parent's, and the machine stays attached). Released in the child, not
 * made anew (memfree.c's memfree_fork_child says why).
 */
static void
init_fork_prepare(void)
{
	pthread_mutex_lock(&init_mutex);
}

static void
init_fork_done(void)
{
	pthread_mutex_unlock(&init_mutex);
}

__attribute__((constructor)) static void
init_fork_setup(void)
{
	pthread_atfork(init_fork_prepare, init_fork_done, init_fork_done);
}

/* What nvmlErrorString says: the real library's wording. */
static const char *const error_strings[] = {
	[NVML_SUCCESS] = "Success",
	[NVML_ERROR_UNINITIALIZED] = "Uninitialized",
	[NVML_ERROR_INVALID_ARGUMENT] = "Invalid Argument",
	[NVML_ERROR_NOT_SUPPORTED] = "Not Supported",
	[NVML_ERROR_NO_PERMISSION] = "Insufficient Permissions",
	[NVML_ERROR_ALREADY_INITIALIZED] = "Already Initialized",
	[NVML_ERROR_NOT_FOUND] = "Not Found",
	[NVML_ERROR_INSUFFICIENT_SIZE] = "Insufficient Size",
	[NVML_ERROR_INSUFFICIENT_POWER] = "Insufficient External Power",
	[NVML_ERROR_DRIVER_NOT_LOADED] = "Driver Not Loaded",
	[NVML_ERROR_TIMEOUT] = "Timeout",
	[NVML_ERROR_IRQ_ISSUE] = "Interrupt Request Issue",
	[NVML_ERROR_LIBRARY_NOT_FOUND] = "NVML Shared Library Not Found",
	[NVML_ERROR_FUNCTION_NOT_FOUND] = "Function Not Found",
	[NVML_ERROR_CORRUPTED_INFOROM] = "Corrupted infoROM",
	[NVML_ERROR_GPU_IS_LOST] = "GPU is lost",
	[NVML_ERROR_RESET_REQUIRED] = "GPU requires restart",
	[NVML_ERROR_OPERATING_SYSTEM] =
	    "The operating system has blocked the request.",
	[NVML_ERROR_LIB_RM_VERSION_MISMATCH] =
	    "RM has detected an NVML/RM version mismatch.",
	[NVML_ERROR_IN_USE] = "In use by another client",
	[NVML_ERROR_MEMORY] = "Insufficient Memory",
	[NVML_ERROR_NO_DATA] = "No data",
	[NVML_ERROR_VGPU_ECC_NOT_SUPPORTED] =
	    "The requested vgpu operation is not available on target device, "
	    "because ECC is enabled",
	[NVML_ERROR_INSUFFICIENT_RESOURCES] = "Ran out of critical resources",
	[NVML_ERROR_FREQ_NOT_SUPPORTED] = "Frequency not supported",
	[NVML_ERROR_ARGUMENT_VERSION_MISMATCH] =
	    "The provided version is invalid/unsupported",
	[NVML_ERROR_DEPRECATED] = "Deprecated",
	[NVML_ERROR_NOT_READY] = "Not Ready",
	[NVML_ERROR_GPU_NOT_FOUND] = "No supported GPUs were found",
	[NVML_ERROR_INVALID_STATE] = "Invalid State",
};

const char *
nvmlErrorString(nvmlReturn_t result)
{
	if ((unsigned)result < sizeof(error_strings) / sizeof(error_strings[0])
	    && error_strings[result] != NULL)
		return error_strings[result];
	return "Unknown Error";
}

/*
 * Initialisation is counted: each nvmlInit* needs its nvmlShutdown. The
 * first that succeeds reads SIMCUDA_DEVICES and SIMCUDA_STATE; the machine
 * stays attached after the last shutdown, as the simulated driver's does.
 */
static nvmlReturn_t
nvml_init(unsigned int flags)
{
	nvmlReturn_t r = NVML_SUCCESS;
	unsigned d;

	pthread_mutex_lock(&init_mutex);
	if (!attached) {
		log_init("simnvml", LOG_LVL_WARN, 0);
		if (device_attach() < 0)
			r = NVML_ERROR_UNKNOWN;
		else {
			ndevices = state_ndev();
			for (d = 0; d < ndevices; d++)
				devices[d].index = d;
			attached = 1;
		}
	}
	if (r == NVML_SUCCESS && ndevices == 0 &&
	    !(flags & NVML_INIT_FLAG_NO_GPUS))
		r = NVML_ERROR_GPU_NOT_FOUND;
	if (r == NVML_SUCCESS)
		__atomic_store_n(&init_count, init_count + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&init_mutex);
	return r;
}

/* Since NVML 5.319 nvmlInit_v2 does not initialise every GPU at once, and
 * nvmlInit did; here there is nothing to initialise either way. */
nvmlReturn_t
nvmlInit_v2(void)
{
	return nvml_init(0);
}

nvmlReturn_t
nvmlInit(void)
{
	return nvml_init(0);
}

/* NVML_INIT_FLAG_NO_GPUS: no device is not an error. NO_ATTACH changes
 * nothing: there is nothing to attach. */
nvmlReturn_t
nvmlInitWithFlags(unsigned int flags)
{
	return nvml_init(flags);
}

nvmlReturn_t
nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&init_mutex);
	if (init_count == 0)
		r = NVML_ERROR_UNINITIALIZED;
	else
		__atomic_store_n(&init_count, init_count - 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&init_mutex);
	return r;
}

/* The prologue of a query: NVML_ERROR_UNINITIALIZED before nvmlInit, then
 * NVML_ERROR_INVALID_ARGUMENT when out, where the answer goes, is NULL. */
static nvmlReturn_t
nvml_ready_out(const void *out)
{
	if (__atomic_load_n(&init_count, __ATOMIC_ACQUIRE) == 0)
		return NVML_ERROR_UNINITIALIZED;
	return out != NULL ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* The prologue of a device query: nvml_ready_out(), then the handle,
 * which must be one of devices[]; its physical index in *phys. */
static nvmlReturn_t
device_get(nvmlDevice_t device, const void *out, int *phys)
{
	nvmlReturn_t r = nvml_ready_out(out);
	uintptr_t off = (uintptr_t)device - (uintptr_t)devices;

	if (r != NVML_SUCCESS)
		return r;
	if ((uintptr_t)device < (uintptr_t)devices ||
	    off % sizeof(devices[0]) != 0 ||
	    off / sizeof(devices[0]) >= ndevices)
		return NVML_ERROR_INVALID_ARGUMENT;
	*phys = (int)(off / sizeof(devices[0]));
	return NVML_SUCCESS;
}

/* A string answer: NVML_ERROR_INSUFFICIENT_SIZE unless it fits whole. */
static nvmlReturn_t
string_out(const char *s, char *buf, unsigned int length)
{
	size_t n = strlen(s) + 1;

	if (n > length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	nvmlReturn_t r = nvml_ready_out(version);

	return r != NVML_SUCCESS ? r :
	    string_out(NVML_SIM_DRIVER, version, length);
}

nvmlReturn_t
nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	nvmlReturn_t r = nvml_ready_out(version);

	return r != NVML_SUCCESS ? r :
	    string_out(NVML_SIM_NVML, version, length);
}

/* The reference lists no NVML_ERROR_UNINITIALIZED for these two: they
 * answer before nvmlInit. */
nvmlReturn_t
nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	if (cudaDriverVersion == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = SIM_DRIVER_VERSION;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* v1 counted only the devices the caller may use; all of them here. */
nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	nvmlReturn_t r = nvml_ready_out(deviceCount);

	if (r == NVML_SUCCESS)
		*deviceCount = ndevices;
	return r;
}

nvmlReturn_t
nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	nvmlReturn_t r = nvml_ready_out(device);

	if (r != NVML_SUCCESS)
		return r;
	if (index >= ndevices)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devices[index];
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

/* The whole UUID, in either case: NVML takes no prefix. */
nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	uint8_t want[GF_UUID_LEN], have[GF_UUID_LEN];
	char s[UUID_STR_LEN];
	nvmlReturn_t r = nvml_ready_out(device);
	unsigned d;

	if (r != NVML_SUCCESS)
		return r;
	if (uuid == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (uuid_parse(uuid, want) < 0)
		return NVML_ERROR_NOT_FOUND;
	for (d = 0; d < ndevices; d++) {
		device_uuid_string((int)d, s, sizeof(s));
		if (uuid_parse(s, have) == 0 &&
		    memcmp(want, have, sizeof(want)) == 0) {
			*device = &devices[d];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/*
 * A PCI bus id as the reference accepts it, in hex: domain:bus:device.
 * function, domain:bus:device or bus:device.function. 0, or -1.
 */
static int
pci_parse(const char *s, unsigned *domain, unsigned *bus, unsigned *dev,
    unsigned *fn)
{
	int end = -1;

	*domain = *fn = 0;
	if (sscanf(s, "%x:%x:%x.%x%n", domain, bus, dev, fn, &end) == 4 &&
	    s[end] == '\0')
		return 0;
	end = -1;
	*domain = *fn = 0;
	if (sscanf(s, "%x:%x.%x%n", bus, dev, fn, &end) == 3 && s[end] == '\0')
		return 0;
	end = -1;
	*domain = *fn = 0;
	if (sscanf(s, "%x:%x:%x%n", domain, bus, dev, &end) == 3 &&
	    s[end] == '\0')
		return 0;
	return -1;
}

nvmlReturn_t
nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	nvmlReturn_t r = nvml_ready_out(device);
	unsigned domain, bus, dev, fn, d;

	if (r != NVML_SUCCESS)
		return r;
	if (pciBusId == NULL || pci_parse(pciBusId, &domain, &bus, &dev,
	    &fn) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (d = 0; d < ndevices; d++)
		if (domain == 0 && bus == device_pci_bus((int)d) && dev == 0 &&
		    fn == 0) {
			*device = &devices[d];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t
nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

nvmlReturn_t
nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	int phys;
	nvmlReturn_t r = device_get(device, index, &phys);

	if (r == NVML_SUCCESS)
		*index = (unsigned int)phys;
	return r;
}

nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	char s[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	int phys;
	nvmlReturn_t r = device_get(device, name, &phys);

	if (r != NVML_SUCCESS)
		return r;
	device_name(phys, s, sizeof(s));
	return string_out(s, name, length);
}

/* The UUID cuDeviceGetUuid gives, in nvidia-smi's notation. */
nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	char s[UUID_STR_LEN];
	int phys;
	nvmlReturn_t r = device_get(device, uuid, &phys);

	if (r != NVML_SUCCESS)
		return r;
	device_uuid_string(phys, s, sizeof(s));
	return string_out(s, uuid, length);
}

nvmlReturn_t
nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	int phys;
	nvmlReturn_t r = device_get(device, pci, &phys);

	if (r != NVML_SUCCESS)
		return r;
	memset(pci, 0, sizeof(*pci));
	pci->bus = device_pci_bus(phys);
	pci->pciDeviceId = NVML_SIM_PCI_DEVICE;
	pci->pciSubSystemId = NVML_SIM_PCI_SUBSYSTEM;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy),
	    NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, pci->domain, pci->bus,
	    pci->device);
	snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT,
	    pci->domain, pci->bus, pci->device);
	return NVML_SUCCESS;
}

/* Capacity, and what every process holds, contexts included: what
 * cuMemGetInfo reports. Nothing is reserved for the driver. */
static nvmlReturn_t
memory_get(nvmlDevice_t device, const void *out, uint64_t *total,
    uint64_t *used)
{
	int phys;
	nvmlReturn_t r = device_get(device, out, &phys);

	if (r != NVML_SUCCESS)
		return r;
	state_meminfo(phys, used, total);
	if (*used > *total)
		*used = *total;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	uint64_t total, used;
	nvmlReturn_t r = memory_get(device, memory, &total, &used);

	if (r != NVML_SUCCESS)
		return r;
	memory->total = total;
	memory->used = used;
	memory->free = total - used;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	uint64_t total, used;
	nvmlReturn_t r = memory_get(device, memory, &total, &used);

	if (r != NVML_SUCCESS)
		return r;
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memory->total = total;
	memory->reserved = 0;
	memory->used = used;
	memory->free = total - used;
	return NVML_SUCCESS;
}

enum procs_kind {
	PROCS_COMPUTE_V1,	/* nvmlProcessInfo_v1_t */
	PROCS_COMPUTE_V2,	/* nvmlProcessInfo_v2_t, also _v3's */
	PROCS_GRAPHICS,		/* none: nothing draws */
};

/* The processes holding memory on phys: *n of them, in *pids and *bytes
 * (the caller frees them), or -1 when out of memory. */
static int
procs_read(int phys, pid_t **pids, uint64_t **bytes, int *n)
{
	int want = state_procs(phys, NULL, NULL, 0);

	for (;;) {
		if (want < 0)
			return -1;
		*pids = calloc((size_t)want + 1, sizeof(**pids));
		*bytes = calloc((size_t)want + 1, sizeof(**bytes));
		if (*pids == NULL || *bytes == NULL) {
			free(*pids);
			free(*bytes);
			return -1;
		}
		*n = state_procs(phys, *pids, *bytes, want);
		if (*n <= want)
			return 0;
		free(*pids);	/* more came meanwhile */
		free(*bytes);
		want = *n;
	}
}

/*
 * nvmlDeviceGet*RunningProcesses: *infoCount says how many entries infos
 * has room for (infos may be NULL when it is 0). When there are more
 * processes, *infoCount says how many with NVML_ERROR_INSUFFICIENT_SIZE;
 * otherwise the entries are filled and *infoCount says how many.
 */
static nvmlReturn_t
procs_get(nvmlDevice_t device, unsigned int *infoCount, void *infos,
    enum procs_kind kind)
{
	nvmlProcessInfo_v1_t *v1 = infos;
	nvmlProcessInfo_v2_t *v2 = infos;
	pid_t *pids = NULL;
	uint64_t *bytes = NULL;
	int phys, n = 0, i;
	nvmlReturn_t r = device_get(device, infoCount, &phys);

	if (r != NVML_SUCCESS)
		return r;
	if (*infoCount > 0 && infos == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (kind != PROCS_GRAPHICS && procs_read(phys, &pids, &bytes, &n) < 0)
		return NVML_ERROR_MEMORY;
	if ((unsigned)n > *infoCount) {
		*infoCount = (unsigned)n;
		r = NVML_ERROR_INSUFFICIENT_SIZE;
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		if (kind == PROCS_COMPUTE_V1) {
			v1[i].pid = (unsigned int)pids[i];
			v1[i].usedGpuMemory = bytes[i];
		} else {
			v2[i].pid = (unsigned int)pids[i];
			v2[i].usedGpuMemory = bytes[i];
			v2[i].gpuInstanceId = NVML_SIM_NO_INSTANCE;
			v2[i].computeInstanceId = NVML_SIM_NO_INSTANCE;
		}
	}
	*infoCount = (unsigned)n;
out_free:
	free(pids);
	free(bytes);
	return r;
}

nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_COMPUTE_V2);
}

nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_COMPUTE_V2);
}

nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_COMPUTE_V1);
}

nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_GRAPHICS);
}

nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_GRAPHICS);
}

nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
    unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)
{
	return procs_get(device, infoCount, infos, PROCS_GRAPHICS);
}

/*
 * Memory partitioning by cgroup (driver r615): only with
 * SIMCUDA_MEMLIMITS=1, as in a driver that has it; otherwise dlsym finds
 * neither function, as in a driver before r615. The symbols are GNU
 * indirect functions whose resolvers, run when they are looked up, give
 * NULL without it. Setting needs root, reading does not (NVIDIA's MPS
 * memory partitioning guide); the limits are memlimits.c's.
 */
static nvmlReturn_t
limits_error(int r)
{
	switch (r) {
	case 0:
		return NVML_SUCCESS;
	case -ENOENT:
		return NVML_ERROR_NOT_FOUND;
	case -EINVAL:
		return NVML_ERROR_INVALID_ARGUMENT;
	case -ENOSPC:
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	default:
		return NVML_ERROR_UNKNOWN;
	}
}

/* SIMCUDA_MIG=1: NVML says every device is in MIG mode, and nothing
 * else of MIG is simulated. */
static int
mig_on(void)
{
	const char *s = getenv("SIMCUDA_MIG");

	return s != NULL && strcmp(s, "1") == 0;
}

/* An H100 can be partitioned: NVML_SUCCESS, disabled unless SIMCUDA_MIG. */
nvmlReturn_t
nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
    unsigned int *pendingMode)
{
	int phys;
	nvmlReturn_t r = device_get(device, currentMode, &phys);

	if (r != NVML_SUCCESS)
		return r;
	if (pendingMode == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	*currentMode = *pendingMode = mig_on() ? NVML_DEVICE_MIG_ENABLE :
	    NVML_DEVICE_MIG_DISABLE;
	return NVML_SUCCESS;
}

/* The prologue of both: device_get(), then the cgroup named. */
static nvmlReturn_t
limits_prologue(nvmlDevice_t device, const void *limits,
    const char *const *nameSpace, int *phys)
{
	nvmlReturn_t r = device_get(device, limits, phys);

	if (r == NVML_SUCCESS && *nameSpace == NULL)
		r = NVML_ERROR_INVALID_ARGUMENT;
	return r;
}

static nvmlReturn_t
limits_set_v1(nvmlDevice_t device, nvmlSetMemoryLimits_v1_t *limits)
{
	int phys;
	nvmlReturn_t r = limits_prologue(device, limits,
	    limits != NULL ? &limits->nameSpace : NULL, &phys);

	if (r != NVML_SUCCESS)
		return r;
	if (mig_on())		/* MIG is refused */
		return NVML_ERROR_NOT_SUPPORTED;
	if (geteuid() != 0)
		return NVML_ERROR_NO_PERMISSION;
	return limits_error(limits_set(phys, limits->nameSpace,
	    limits->softLimit, limits->hardLimit));
}

static nvmlReturn_t
limits_get_v1(nvmlDevice_t device, nvmlGetMemoryLimits_v1_t *limits)
{
	uint64_t soft, hard, used;
	int phys;
	nvmlReturn_t r = limits_prologue(device, limits,
	    limits != NULL ? &limits->nameSpace : NULL, &phys);

	if (r != NVML_SUCCESS)
		return r;
	if ((r = limits_error(limits_get(phys, limits->nameSpace, &soft,
	    &hard, &used))) == NVML_SUCCESS) {
		limits->softLimit = soft;
		limits->hardLimit = hard;
		limits->currentUsed = used;
	}
	return r;
}

typedef nvmlReturn_t (*limits_set_fn)(nvmlDevice_t,
    nvmlSetMemoryLimits_v1_t *);
typedef nvmlReturn_t (*limits_get_fn)(nvmlDevice_t,
    nvmlGetMemoryLimits_v1_t *);

static int
limits_present(void)
{
	const char *s = getenv("SIMCUDA_MEMLIMITS");

	return s != NULL && strcmp(s, "1") == 0;
}

static limits_set_fn
limits_set_resolve(void)
{
	return limits_present() ? limits_set_v1 : NULL;
}

static limits_get_fn
limits_get_resolve(void)
{
	return limits_present() ? limits_get_v1 : NULL;
}

nvmlReturn_t nvmlDeviceSetMemoryLimits_v1(nvmlDevice_t,
    nvmlSetMemoryLimits_v1_t *) __attribute__((ifunc("limits_set_resolve")));
nvmlReturn_t nvmlDeviceGetMemoryLimits_v1(nvmlDevice_t,
    nvmlGetMemoryLimits_v1_t *) __attribute__((ifunc("limits_get_resolve")));
