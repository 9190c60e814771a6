/*
 * NVML hooks (issue 5): nvidia-smi and other management clients inside a
 * limited process or container see the same view as cuMemGetInfo (DESIGN.md
 * §3, client.h): the total is the process's limit, free what it may take
 * of it, never more than the device really has free, and used the rest.
 * Its process listings keep the group's processes only (the process
 * itself in the default group). NVML is the program's: its real
 * functions are found in the copy it loaded; the hooks are reached by the
 * exported names and by dlsym (pynvml), not by cuGetProcAddress.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "client.h"
#include "dlsym.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "peers.h"
#include "real.h"
#include "uuid.h"

#define NVML_SONAME		"libnvidia-ml.so.1"
#define NVML_SUCCESS		0
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_UUID_LEN		96	/* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define NVML_PEERS_MAX		1024	/* group members a listing keeps */

/* The NVML API Reference's nvmlMemory_t and nvmlMemory_v2_t. */
struct nvml_memory {
	unsigned long long total, free, used;
};

struct nvml_memory_v2 {
	unsigned int	version;
	unsigned long long total, reserved, free, used;
};

/* nvmlProcessInfo_t (v2, v3) and the first version's. */
struct nvml_process_info {
	unsigned int	pid;
	unsigned long long usedGpuMemory;
	unsigned int	gpuInstanceId, computeInstanceId;
};

struct nvml_process_info_v1 {
	unsigned int	pid;
	unsigned long long usedGpuMemory;
};

typedef int nvml_info_fn(void *, struct nvml_memory *);
typedef int nvml_procs_fn(void *, unsigned int *, void *);
typedef int nvml_info_v2_fn(void *, struct nvml_memory_v2 *);
typedef int nvml_uuid_fn(void *, char *, unsigned int);

/* The program's NVML function name, or NULL. */
static void *
nvml_real(const char *name)
{
	void *(*sym)(void *, const char *) = dlsym_real_get();
	void *h = dlopen(NVML_SONAME, RTLD_NOW | RTLD_NOLOAD);
	void *fn = h != NULL && sym != NULL ? sym(h, name) : NULL;

	if (h != NULL)
		dlclose(h);
	return fn;
}

/*
 * Narrow *total, *free, *used of device (as NVML gave them) to the view;
 * left alone where the device is not accounted.
 */
static void
nvml_view(void *device, unsigned long long *total, unsigned long long *free,
    unsigned long long *used)
{
	nvml_uuid_fn *get_uuid = (nvml_uuid_fn *)nvml_real(
	    "nvmlDeviceGetUUID");
	char buf[NVML_UUID_LEN];
	uint8_t uuid[GF_UUID_LEN];
	struct client_view v;
	uint64_t f;

	if (get_uuid == NULL || get_uuid(device, buf, sizeof(buf)) !=
	    NVML_SUCCESS || uuid_parse(buf, uuid) < 0 ||
	    client_view_uuid(uuid, *total, &v) < 0)
		return;
	/* As cuMemGetInfo: never more free than the device has; used is the
	 * rest, so that total = used + free still holds. */
	f = v.free < v.total ? v.free : v.total;
	*free = f < *free ? f : *free;
	*total = v.total;
	*used = v.total - *free;
}

SHIM_EXPORT int	nvmlDeviceGetMemoryInfo(void *device,
		    struct nvml_memory *memory);
SHIM_EXPORT int	nvmlDeviceGetMemoryInfo_v2(void *device,
		    struct nvml_memory_v2 *memory);
SHIM_EXPORT int	nvmlDeviceGetComputeRunningProcesses_v3(void *device,
		    unsigned int *count, struct nvml_process_info *infos);
SHIM_EXPORT int	nvmlDeviceGetComputeRunningProcesses_v2(void *device,
		    unsigned int *count, struct nvml_process_info *infos);
SHIM_EXPORT int	nvmlDeviceGetComputeRunningProcesses(void *device,
		    unsigned int *count, struct nvml_process_info_v1 *infos);

/* The real query answered r: narrow what it says, within the hook guard. */
static int
nvml_answer(int r, void *device, unsigned long long *total,
    unsigned long long *free, unsigned long long *used)
{
	if (r == NVML_SUCCESS && hook_enter()) {
		nvml_view(device, total, free, used);
		hook_leave();
	}
	return r;
}

int
nvmlDeviceGetMemoryInfo(void *device, struct nvml_memory *memory)
{
	nvml_info_fn *real = (nvml_info_fn *)nvml_real(
	    "nvmlDeviceGetMemoryInfo");

	if (real == NULL)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (memory == NULL)
		return real(device, memory);
	return nvml_answer(real(device, memory), device, &memory->total,
	    &memory->free, &memory->used);
}

int
nvmlDeviceGetMemoryInfo_v2(void *device, struct nvml_memory_v2 *memory)
{
	nvml_info_v2_fn *real = (nvml_info_v2_fn *)nvml_real(
	    "nvmlDeviceGetMemoryInfo_v2");
	int r;

	if (real == NULL)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (memory == NULL)
		return real(device, memory);
	r = nvml_answer(real(device, memory), device, &memory->total,
	    &memory->free, &memory->used);
	if (r == NVML_SUCCESS)
		memory->reserved = 0;	/* within the view: none held back */
	return r;
}

/*
 * The process listings: NVML's list of device, reduced in place to the
 * processes of this process's group (entries of size bytes, the pid
 * first, as in every version of nvmlProcessInfo_t).
 */
static void
nvml_own(void *device, unsigned int *count, void *infos, size_t size)
{
	nvml_uuid_fn *get_uuid = (nvml_uuid_fn *)nvml_real(
	    "nvmlDeviceGetUUID");
	uint32_t pids[NVML_PEERS_MAX], pid;
	uint8_t uuid[GF_UUID_LEN];
	char buf[NVML_UUID_LEN];
	struct client_view v;
	unsigned int i, k = 0;
	long n, j;

	/* The view first: it makes us a client whose group the daemon knows. */
	if (get_uuid == NULL || get_uuid(device, buf, sizeof(buf)) !=
	    NVML_SUCCESS || uuid_parse(buf, uuid) < 0 ||
	    client_view_uuid(uuid, 0, &v) < 0 ||
	    (n = peers_of_group(uuid, pids, NVML_PEERS_MAX)) < 0)
		return;
	for (i = 0; i < *count; i++) {
		memcpy(&pid, (char *)infos + i * size, sizeof(pid));
		for (j = 0; j < n && pids[j] != pid; j++)
			;
		if (j == n)
			continue;
		if (k != i)
			memcpy((char *)infos + k * size,
			    (char *)infos + i * size, size);
		k++;
	}
	*count = k;
}

/* One listing call: the real one, then NVML's answer reduced. */
static int
nvml_procs(const char *name, void *device, unsigned int *count,
    void *infos, size_t size)
{
	nvml_procs_fn *real = (nvml_procs_fn *)nvml_real(name);
	int r;

	if (real == NULL)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	r = real(device, count, infos);
	if (r == NVML_SUCCESS && count != NULL && infos != NULL &&
	    hook_enter()) {
		nvml_own(device, count, infos, size);
		hook_leave();
	}
	return r;
}

int
nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned int *count,
    struct nvml_process_info *infos)
{
	return nvml_procs("nvmlDeviceGetComputeRunningProcesses_v3", device,
	    count, infos, sizeof(*infos));
}

int
nvmlDeviceGetComputeRunningProcesses_v2(void *device, unsigned int *count,
    struct nvml_process_info *infos)
{
	return nvml_procs("nvmlDeviceGetComputeRunningProcesses_v2", device,
	    count, infos, sizeof(*infos));
}

int
nvmlDeviceGetComputeRunningProcesses(void *device, unsigned int *count,
    struct nvml_process_info_v1 *infos)
{
	return nvml_procs("nvmlDeviceGetComputeRunningProcesses", device,
	    count, infos, sizeof(*infos));
}

/* For dlsym (pynvml), which looks them up by symbol. */
const struct procaddr nvml_hooks[] = {
	{ "nvmlDeviceGetComputeRunningProcesses", 0, 0,
	    "nvmlDeviceGetComputeRunningProcesses",
	    (void *)nvmlDeviceGetComputeRunningProcesses },
	{ "nvmlDeviceGetComputeRunningProcesses_v2", 0, 0,
	    "nvmlDeviceGetComputeRunningProcesses_v2",
	    (void *)nvmlDeviceGetComputeRunningProcesses_v2 },
	{ "nvmlDeviceGetComputeRunningProcesses_v3", 0, 0,
	    "nvmlDeviceGetComputeRunningProcesses_v3",
	    (void *)nvmlDeviceGetComputeRunningProcesses_v3 },
	{ "nvmlDeviceGetMemoryInfo", 0, 0, "nvmlDeviceGetMemoryInfo",
	    (void *)nvmlDeviceGetMemoryInfo },
	{ "nvmlDeviceGetMemoryInfo_v2", 0, 0, "nvmlDeviceGetMemoryInfo_v2",
	    (void *)nvmlDeviceGetMemoryInfo_v2 },
};

const size_t nvml_hooks_len = sizeof(nvml_hooks) / sizeof(nvml_hooks[0]);
