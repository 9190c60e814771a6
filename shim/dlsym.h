/*
 * glibc's dlsym (dlsym.c): both its versions are interposed (hooks_dlsym.c),
 * and the real one is reached through dlvsym.
 */
#ifndef GF_SHIM_DLSYM_H
#define GF_SHIM_DLSYM_H

/*
 * glibc 2.34 moved dlsym from libdl into libc under a new version; programs
 * linked before that still ask for the old one. Both are interposed.
 */
#if defined(__x86_64__)
#define DLSYM_OLD_VERSION	"GLIBC_2.2.5"
#elif defined(__aarch64__)
#define DLSYM_OLD_VERSION	"GLIBC_2.17"
#else
#error "add this architecture's first glibc symbol version"
#endif
#define DLSYM_NEW_VERSION	"GLIBC_2.34"

/*
 * glibc's own dlsym, found on first use (no initialisation needed, safe to
 * call from anywhere); NULL only if glibc has none. The shim itself must
 * call this, never dlsym: that name is the hook.
 */
typedef void *(*dlsym_fn)(void *, const char *);

dlsym_fn	dlsym_real_get(void);

#endif
