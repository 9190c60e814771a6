/*
 * The driver as a worker sees it: libcuda.so.1 opened with dlopen and its
 * functions found with dlsym, as numba does, so that a preloaded shim hands
 * out its hooks (DESIGN.md §3, path 2) and a bare run gets the driver's own.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "bench.h"
#include "log.h"

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);

static void *
cuda_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (p == NULL)
		log_warnx("libcuda.so.1 has no '%s'", name);
	return p;
}

int
cuda_open(struct cuda_api *api)
{
	device_get_fn device_get;
	retain_fn retain;
	init_fn init;
	CUdevice dev;
	void *h;

	if ((h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_warnx("cannot load libcuda.so.1: %s", dlerror());
		return -1;
	}
	*(void **)&init = cuda_sym(h, "cuInit");
	*(void **)&device_get = cuda_sym(h, "cuDeviceGet");
	*(void **)&retain = cuda_sym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&api->set_current = cuda_sym(h, "cuCtxSetCurrent");
	*(void **)&api->alloc = cuda_sym(h, "cuMemAlloc_v2");
	*(void **)&api->free = cuda_sym(h, "cuMemFree_v2");
	if (init == NULL || device_get == NULL || retain == NULL ||
	    api->set_current == NULL || api->alloc == NULL ||
	    api->free == NULL)
		return -1;
	if (init(0) != CUDA_SUCCESS || device_get(&dev, 0) != CUDA_SUCCESS ||
	    retain(&api->ctx, dev) != CUDA_SUCCESS ||
	    api->set_current(api->ctx) != CUDA_SUCCESS) {
		log_warnx("cannot make device 0's context current");
		return -1;
	}
	return 0;
}

int
cuda_thread(const struct cuda_api *api)
{
	if (api->set_current(api->ctx) != CUDA_SUCCESS) {
		log_warnx("cannot make device 0's context current on a thread");
		return -1;
	}
	return 0;
}
