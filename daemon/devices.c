/*
 * Asking the CUDA driver which devices exist: cuInit, cuDeviceGetCount and
 * the per-device queries. Only device attributes are read; no context is
 * ever created, so the daemon holds no GPU memory.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "devices.h"
#include "log.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

/* The checkpoint API (cuCheckpointProcessLock ...) appeared in CUDA 12.8. */
#define CHECKPOINT_CUDA_VERSION	12080

typedef CUresult (*cu_init_fn)(unsigned int);
typedef CUresult (*cu_device_get_count_fn)(int *);
typedef CUresult (*cu_device_get_fn)(CUdevice *, int);
typedef CUresult (*cu_device_get_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_device_get_uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*cu_device_total_mem_fn)(size_t *, CUdevice);
typedef CUresult (*cu_get_error_name_fn)(CUresult, const char **);
typedef CUresult (*cu_get_proc_address_v2_fn)(const char *, void **, int,
    cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*cu_get_proc_address_fn)(const char *, void **, int,
    cuuint64_t);

struct driver {
	void			*handle;
	cu_init_fn		 init;
	cu_device_get_count_fn	 device_get_count;
	cu_device_get_fn	 device_get;
	cu_device_get_name_fn	 device_get_name;
	cu_device_get_uuid_fn	 device_get_uuid;
	cu_device_total_mem_fn	 device_total_mem;
	cu_get_error_name_fn	 get_error_name;	/* optional */
	cu_get_proc_address_v2_fn get_proc_address_v2;	/* optional */
	cu_get_proc_address_fn	 get_proc_address;	/* optional */
};

/* The first of the names the library exports, or NULL. */
static void *
sym(void *handle, const char *name, const char *fallback)
{
	void *p = dlsym(handle, name);

	if (p == NULL && fallback != NULL)
		p = dlsym(handle, fallback);
	return p;
}

static struct driver the_driver;	/* stays loaded: swap calls it */

static const char *
error_name(const struct driver *drv, CUresult r)
{
	static char buf[32];
	const char *s = NULL;

	if (drv->get_error_name && drv->get_error_name(r, &s) == CUDA_SUCCESS &&
	    s != NULL)
		return s;
	snprintf(buf, sizeof(buf), "error %d", (int)r);
	return buf;
}

static int
driver_load(struct driver *drv, const char *lib)
{
	const char *missing = NULL;

	memset(drv, 0, sizeof(*drv));
	if ((drv->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_warnx("cannot load the CUDA driver '%s': %s", lib,
		    dlerror());
		return -1;
	}
	/* *(void **)& is POSIX's own idiom for dlsym into a function pointer. */
	*(void **)&drv->init = sym(drv->handle, "cuInit", NULL);
	*(void **)&drv->device_get_count = sym(drv->handle, "cuDeviceGetCount",
	    NULL);
	*(void **)&drv->device_get = sym(drv->handle, "cuDeviceGet", NULL);
	*(void **)&drv->device_get_name = sym(drv->handle, "cuDeviceGetName",
	    NULL);
	*(void **)&drv->device_get_uuid = sym(drv->handle,
	    "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
	*(void **)&drv->device_total_mem = sym(drv->handle,
	    "cuDeviceTotalMem_v2", NULL);
	*(void **)&drv->get_error_name = sym(drv->handle, "cuGetErrorName",
	    NULL);
	*(void **)&drv->get_proc_address_v2 = sym(drv->handle,
	    "cuGetProcAddress_v2", NULL);
	*(void **)&drv->get_proc_address = sym(drv->handle,
	    "cuGetProcAddress", NULL);
	if (drv->init == NULL)
		missing = "cuInit";
	else if (drv->device_get_count == NULL)
		missing = "cuDeviceGetCount";
	else if (drv->device_get == NULL)
		missing = "cuDeviceGet";
	else if (drv->device_get_name == NULL)
		missing = "cuDeviceGetName";
	else if (drv->device_get_uuid == NULL)
		missing = "cuDeviceGetUuid";
	else if (drv->device_total_mem == NULL)
		missing = "cuDeviceTotalMem_v2";
	if (missing != NULL) {
		log_warnx("the CUDA driver '%s' lacks '%s'", lib, missing);
		dlclose(drv->handle);
		drv->handle = NULL;
		return -1;
	}
	return 0;
}

/* The driver's function name of the checkpoint API's ABI, or NULL. */
static void *
checkpoint_fn(const struct driver *d, const char *name)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;
	CUresult r;

	if (d->get_proc_address_v2 != NULL)
		r = d->get_proc_address_v2(name, &fn, CHECKPOINT_CUDA_VERSION,
		    CU_GET_PROC_ADDRESS_DEFAULT, &status);
	else if (d->get_proc_address != NULL)
		r = d->get_proc_address(name, &fn, CHECKPOINT_CUDA_VERSION,
		    CU_GET_PROC_ADDRESS_DEFAULT);
	else
		return NULL;
	return r == CUDA_SUCCESS ? fn : NULL;
}

/* The whole checkpoint API, or none of it. */
static uint32_t
swap_probe(const struct driver *d, struct ckpt_api *api)
{
	memset(api, 0, sizeof(*api));
	*(void **)&api->lock = checkpoint_fn(d, "cuCheckpointProcessLock");
	*(void **)&api->checkpoint = checkpoint_fn(d,
	    "cuCheckpointProcessCheckpoint");
	*(void **)&api->restore = checkpoint_fn(d, "cuCheckpointProcessRestore");
	*(void **)&api->unlock = checkpoint_fn(d, "cuCheckpointProcessUnlock");
	*(void **)&api->get_state = checkpoint_fn(d,
	    "cuCheckpointProcessGetState");
	if (api->lock && api->checkpoint && api->restore && api->unlock &&
	    api->get_state)
		return 1;
	memset(api, 0, sizeof(*api));
	return 0;
}

static struct ckpt_api checkpoint_api;

void
devices_checkpoint_api(struct ckpt_api *api)
{
	*api = checkpoint_api;
}

const char *
devices_error_name(int r)
{
	return error_name(&the_driver, (CUresult)r);
}

/* Fill d for ordinal i; -1 (logged) when the driver will not say. */
static int
device_query(const struct driver *drv, int i, struct device_desc *d)
{
	char name[256];
	CUdevice dev;
	CUuuid uuid;
	size_t total;
	CUresult r;
	const char *what;

	if ((r = drv->device_get(&dev, i)) != CUDA_SUCCESS)
		what = "cuDeviceGet";
	else if ((r = drv->device_get_uuid(&uuid, dev)) != CUDA_SUCCESS)
		what = "cuDeviceGetUuid";
	else if ((r = drv->device_total_mem(&total, dev)) != CUDA_SUCCESS)
		what = "cuDeviceTotalMem";
	else if ((r = drv->device_get_name(name, sizeof(name), dev)) !=
	    CUDA_SUCCESS)
		what = "cuDeviceGetName";
	else {
		memset(d, 0, sizeof(*d));
		memcpy(d->uuid, uuid.bytes, GF_UUID_LEN);
		name[sizeof(name) - 1] = '\0';
		proto_strlcpy(d->name, name, sizeof(d->name));
		d->index = (uint32_t)i;
		d->total = total;
		return 0;
	}
	log_warnx("cannot query device %d: %s failed: %s; skipping it", i,
	    what, error_name(drv, r));
	return -1;
}

int
devices_discover(const char *lib, struct device_desc **devs)
{
	char ubuf[UUID_STR_LEN], sbuf[32];
	int count = 0, i, n = 0;
	uint32_t swap;
	CUresult r;

	*devs = NULL;
	/* The daemon accounts for every device, by nvidia-smi's index. */
	unsetenv("CUDA_VISIBLE_DEVICES");
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	if (the_driver.handle == NULL && driver_load(&the_driver, lib) < 0)
		goto out_none;
	if ((r = the_driver.init(0)) != CUDA_SUCCESS) {
		log_warnx("the CUDA driver did not initialise: cuInit: %s",
		    error_name(&the_driver, r));
		goto out_none;
	}
	if ((r = the_driver.device_get_count(&count)) != CUDA_SUCCESS) {
		log_warnx("the CUDA driver cannot count its devices: %s",
		    error_name(&the_driver, r));
		goto out_none;
	}
	if (count <= 0)
		goto out_none;
	if ((*devs = calloc((size_t)count, sizeof(**devs))) == NULL)
		return -1;
	for (i = 0; i < count; i++)
		if (device_query(&the_driver, i, &(*devs)[n]) == 0)
			n++;
	if (n == 0)
		goto out_none;
	swap = swap_probe(&the_driver, &checkpoint_api);
	for (i = 0; i < n; i++)
		log_info("device %u: %s '%s', %s%s", (*devs)[i].index,
		    uuid_format((*devs)[i].uuid, ubuf, sizeof(ubuf)),
		    (*devs)[i].name,
		    size_format((*devs)[i].total, sbuf, sizeof(sbuf)),
		    swap ? ", driver has the checkpoint API" : "");
	return n;

out_none:
	free(*devs);
	*devs = NULL;
	log_warnx("no CUDA devices found: running with none; clients will "
	    "be told their devices are unknown");
	return 0;
}
