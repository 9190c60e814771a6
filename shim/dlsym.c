/*
 * glibc's own dlsym, which the shim calls to find the driver (the name
 * dlsym is the shim's hook, hooks_dlsym.c): found with dlvsym, once.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "dlsym.h"
#include "log.h"
#include "shim.h"

static dlsym_fn dlsym_real;
static __thread int dlsym_resolving SHIM_TLS;

SHIM_NO_SANITIZE dlsym_fn
dlsym_real_get(void)
{
	static int said;
	dlsym_fn fn = __atomic_load_n(&dlsym_real, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		return fn;
	/*
	 * dlvsym is not interposed, but it might allocate, and a malloc
	 * interposer might call dlsym: the guard stops that loop.
	 */
	if (dlsym_resolving)
		return NULL;
	dlsym_resolving = 1;
	*(void **)&fn = dlvsym(RTLD_NEXT, "dlsym", DLSYM_NEW_VERSION);
	if (fn == NULL)
		*(void **)&fn = dlvsym(RTLD_NEXT, "dlsym", DLSYM_OLD_VERSION);
	dlsym_resolving = 0;
	if (fn == NULL) {
		if (shim_once(&said))
			log_errx("cannot find the real dlsym: %s", dlerror());
		return NULL;
	}
	__atomic_store_n(&dlsym_real, fn, __ATOMIC_RELEASE);
	return fn;
}
