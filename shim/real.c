/*
 * The real driver: libcuda.so.1 found once, at start (init.c), with the
 * real dlsym, and its entry points read into real_cu.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "dlsym.h"
#include "log.h"
#include "real.h"
#include "shim.h"

#define REAL_LIBCUDA	"libcuda.so.1"

struct real_driver real_cu;

#define SYM(field, name)	{ name, offsetof(struct real_driver, field) }

static const struct {
	const char	*name;
	size_t		off;
} real_syms[] = {
	SYM(cuMemAlloc_v2, "cuMemAlloc_v2"),
	SYM(cuMemAllocPitch_v2, "cuMemAllocPitch_v2"),
	SYM(cuMemAllocManaged, "cuMemAllocManaged"),
	SYM(cuMemFree_v2, "cuMemFree_v2"),
	SYM(cuMemGetInfo_v2, "cuMemGetInfo_v2"),
	SYM(cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2"),
	SYM(cuGetProcAddress_v1, "cuGetProcAddress"),
	SYM(cuGetProcAddress_v2, "cuGetProcAddress_v2"),
	SYM(cuCtxGetDevice, "cuCtxGetDevice"),
	SYM(cuMemGetAddressRange_v2, "cuMemGetAddressRange_v2"),
	SYM(cuDeviceGetCount, "cuDeviceGetCount"),
	SYM(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
	SYM(cuDeviceGetUuid_v2, "cuDeviceGetUuid_v2"),
	SYM(cuDeviceGetUuid_v1, "cuDeviceGetUuid"),
	SYM(cuArrayCreate_v2, "cuArrayCreate_v2"),
	SYM(cuArray3DCreate_v2, "cuArray3DCreate_v2"),
	SYM(cuArrayDestroy, "cuArrayDestroy"),
	SYM(cuMipmappedArrayCreate, "cuMipmappedArrayCreate"),
	SYM(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy"),
	SYM(cuArrayGetMemoryRequirements, "cuArrayGetMemoryRequirements"),
	SYM(cuMemCreate, "cuMemCreate"),
	SYM(cuMemPoolGetAttribute, "cuMemPoolGetAttribute"),
	SYM(cuDeviceGetMemPool, "cuDeviceGetMemPool"),
	SYM(cuMemAllocAsync, "cuMemAllocAsync"),
	SYM(cuMemAllocAsync_ptsz, "cuMemAllocAsync_ptsz"),
	SYM(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync"),
	SYM(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync_ptsz"),
	SYM(cuMemPoolCreate, "cuMemPoolCreate"),
	SYM(cuMemPoolDestroy, "cuMemPoolDestroy"),
	SYM(cuMemPoolTrimTo, "cuMemPoolTrimTo"),
	SYM(cuMemRelease, "cuMemRelease"),
	SYM(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle"),
	SYM(cuMemMap, "cuMemMap"),
	SYM(cuMemUnmap, "cuMemUnmap"),
	SYM(cuMemExportToShareableHandle, "cuMemExportToShareableHandle"),
	SYM(cuMemGetAllocationPropertiesFromHandle,
	    "cuMemGetAllocationPropertiesFromHandle"),
	SYM(cuMemMapArrayAsync, "cuMemMapArrayAsync"),
	SYM(cuMemMapArrayAsync_ptsz, "cuMemMapArrayAsync_ptsz"),
	SYM(cuMulticastBindMem, "cuMulticastBindMem"),
	SYM(cuMipmappedArrayGetMemoryRequirements,
	    "cuMipmappedArrayGetMemoryRequirements"),
	SYM(cuCtxDestroy_v1, "cuCtxDestroy"),
	SYM(cuCtxDestroy_v2, "cuCtxDestroy_v2"),
	SYM(cuDevicePrimaryCtxReset_v1, "cuDevicePrimaryCtxReset"),
	SYM(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset_v2"),
	SYM(cuDevicePrimaryCtxRelease_v1, "cuDevicePrimaryCtxRelease"),
	SYM(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2"),
	SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	SYM(cuPointerGetAttribute, "cuPointerGetAttribute"),
	SYM(cuPointerGetAttributes, "cuPointerGetAttributes"),
#define GATE_ABI(name, version, ptds, symbol, flag, params, args) \
	SYM(symbol, #symbol),
#include "hooks_list.h"
};

/*
 * The driver the program uses: already loaded (by soname, whatever path it
 * came from), else loaded now as the program would have.
 */
static void *
real_open(void)
{
	void *h = dlopen(REAL_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);

	if (h == NULL)
		h = dlopen(REAL_LIBCUDA, RTLD_NOW);
	if (h == NULL)
		log_errx("cannot load %s: %s; passing CUDA calls through",
		    REAL_LIBCUDA, dlerror());
	return h;
}

int
real_load(void)
{
	void *(*sym)(void *, const char *) = dlsym_real_get();
	void *h;
	size_t i;

	if (sym == NULL || (h = real_open()) == NULL)
		return -1;
	for (i = 0; i < sizeof(real_syms) / sizeof(real_syms[0]); i++) {
		void *fn = sym(h, real_syms[i].name);

		if (fn == NULL)
			log_debug("%s has no %s", REAL_LIBCUDA,
			    real_syms[i].name);
		*(void **)((char *)&real_cu + real_syms[i].off) = fn;
	}
	return 0;
}

CUresult
real_missing(const char *name)
{
	static int said;

	if (shim_once(&said))
		log_errx("%s is not available from %s; returning "
		    "CUDA_ERROR_NOT_INITIALIZED", name, REAL_LIBCUDA);
	return CUDA_ERROR_NOT_INITIALIZED;
}
