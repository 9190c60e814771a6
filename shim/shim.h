/*
 * What every file of the shim shares: the export attribute, the bound on
 * device ordinals, the TLS model of per-thread state, and "say it once".
 */
#ifndef GF_SHIM_H
#define GF_SHIM_H

/* Hidden by default (-fvisibility=hidden); hooks are exported explicitly. */
#define SHIM_EXPORT	__attribute__((visibility("default")))

/*
 * Initial-exec TLS: no __tls_get_addr call, so no allocation on a thread's
 * first access (a malloc interposer calling dlsym must not come back here).
 */
#define SHIM_TLS	__attribute__((tls_model("initial-exec")))

/*
 * For code that runs inside a sanitizer runtime's own start-up (it resolves
 * its interceptors with dlsym(RTLD_NEXT, ...) before it can track anything):
 * dlsym's entry path must not be instrumented. Only matters in SANITIZE
 * builds.
 */
#define SHIM_NO_SANITIZE \
	__attribute__((no_sanitize("address", "thread", "undefined")))

/* Device ordinals the shim accounts for: 0 .. SHIM_MAX_DEVICES - 1. */
#define SHIM_MAX_DEVICES	64

/* 1 the first time it is called with *flag == 0, from any thread. */
static inline int
shim_once(int *flag)
{
	return __atomic_exchange_n(flag, 1, __ATOMIC_RELAXED) == 0;
}

#endif
