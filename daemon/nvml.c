/*
 * Reading NVML: nvmlInit_v2, a handle per device by UUID, and
 * nvmlDeviceGetComputeRunningProcesses_v3 with its INSUFFICIENT_SIZE
 * protocol, and nvmlDeviceGetMemoryInfo (NVML API Reference, "Device
 * Queries"). The types are written
 * here (the CUDA toolkit's nvml.h is not always installed); the layout is
 * the documented one.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nvml.h"
#include "uuid.h"

#define NVML_SUCCESS			0
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_TRIES			4	/* the list may grow meanwhile */

typedef struct nvml_device *nvml_device_t;

/* nvmlMemory_t (version 1): used is total - free, reserved included. */
struct nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/* nvmlProcessInfo_t (_v2), what the _v3 query fills: 24 bytes. */
struct nvml_process_info {
	unsigned int	pid;
	unsigned long long usedGpuMemory;
	unsigned int	gpuInstanceId;
	unsigned int	computeInstanceId;
};

static struct {
	void		*handle;
	int		(*init)(void);
	int		(*shutdown)(void);
	int		(*by_uuid)(const char *, nvml_device_t *);
	int		(*procs)(nvml_device_t, unsigned int *,
			    struct nvml_process_info *);
	int		(*memory)(nvml_device_t, struct nvml_memory *);
	nvml_device_t	*devs;		/* NULL where a device is not found */
	size_t		 ndevs;
} nv;

int
nvml_ready(void)
{
	return nv.handle != NULL;
}

static int
nvml_syms(void)
{
	*(void **)&nv.init = dlsym(nv.handle, "nvmlInit_v2");
	*(void **)&nv.shutdown = dlsym(nv.handle, "nvmlShutdown");
	*(void **)&nv.by_uuid = dlsym(nv.handle, "nvmlDeviceGetHandleByUUID");
	*(void **)&nv.procs = dlsym(nv.handle,
	    "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&nv.memory = dlsym(nv.handle, "nvmlDeviceGetMemoryInfo");
	return nv.init && nv.shutdown && nv.by_uuid && nv.procs &&
	    nv.memory ? 0 : -1;
}

int
nvml_open(const char *lib, const uint8_t (*uuids)[GF_UUID_LEN], size_t n)
{
	char ubuf[UUID_STR_LEN];
	size_t i;
	int r;

	if ((nv.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_info("cannot load '%s' (%s): context memory is not "
		    "charged", lib, dlerror());
		return -1;
	}
	if (nvml_syms() < 0 || (r = nv.init()) != NVML_SUCCESS) {
		log_warnx("'%s' is not a usable NVML: context memory is not "
		    "charged", lib);
		goto out_close;
	}
	if (n > 0 && (nv.devs = calloc(n, sizeof(*nv.devs))) == NULL) {
		nv.shutdown();
		goto out_close;
	}
	nv.ndevs = n;
	for (i = 0; i < n; i++)
		if (nv.by_uuid(uuid_format(uuids[i], ubuf, sizeof(ubuf)),
		    &nv.devs[i]) != NVML_SUCCESS) {
			log_warnx("NVML does not know device %s: its context "
			    "memory is not charged", ubuf);
			nv.devs[i] = NULL;
		}
	return 0;

out_close:
	dlclose(nv.handle);
	nv.handle = NULL;
	return -1;
}

long
nvml_procs(size_t i, struct nvml_proc **procs)
{
	struct nvml_process_info *info = NULL, *more;
	unsigned int count = 0, k;
	int r = NVML_ERROR_INSUFFICIENT_SIZE, tries;

	*procs = NULL;
	if (!nvml_ready() || i >= nv.ndevs || nv.devs[i] == NULL)
		return -1;
	for (tries = 0; tries < NVML_TRIES &&
	    r == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
		r = nv.procs(nv.devs[i], &count, info);
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
		count += 8;	/* room for processes starting meanwhile */
		if ((more = realloc(info, count * sizeof(*info))) == NULL)
			break;
		info = more;
	}
	if (r != NVML_SUCCESS || (count > 0 && (*procs = calloc(count,
	    sizeof(**procs))) == NULL)) {
		free(info);
		log_debug("NVML cannot list the processes on device %zu: "
		    "error %d", i, r);
		return -1;
	}
	for (k = 0; k < count; k++) {
		(*procs)[k].pid = info[k].pid;
		/* NVML_VALUE_NOT_AVAILABLE: unknown, taken as nothing. */
		(*procs)[k].bytes = info[k].usedGpuMemory == ~0ull ? 0 :
		    info[k].usedGpuMemory;
	}
	free(info);
	return count;
}

int
nvml_used(size_t i, uint64_t *used)
{
	struct nvml_memory m;
	int r;

	if (!nvml_ready() || i >= nv.ndevs || nv.devs[i] == NULL)
		return -1;
	if ((r = nv.memory(nv.devs[i], &m)) != NVML_SUCCESS) {
		log_debug("NVML cannot say the memory of device %zu: error %d",
		    i, r);
		return -1;
	}
	*used = m.total > m.free ? m.total - m.free : 0;
	return 0;
}

void *
nvml_symbol(const char *name)
{
	return nvml_ready() ? dlsym(nv.handle, name) : NULL;
}

void *
nvml_device(size_t i)
{
	return nvml_ready() && i < nv.ndevs ? (void *)nv.devs[i] : NULL;
}

void
nvml_close(void)
{
	if (!nvml_ready())
		return;
	nv.shutdown();
	dlclose(nv.handle);
	free(nv.devs);
	memset(&nv, 0, sizeof(nv));
}
