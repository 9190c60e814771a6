/*
 * The shim's dlsym: both glibc versions of the symbol are interposed, and
 * the real one is reached through dlvsym.
 */
#ifndef GF_SHIM_DLSYM_H
#define GF_SHIM_DLSYM_H

/*
 * glibc's own dlsym, found on first use (no initialisation needed, safe to
 * call from anywhere); NULL only if glibc has none. The shim itself must
 * call this, never dlsym: that name is the hook.
 */
void	*(*dlsym_real_get(void))(void *, const char *);

/*
 * Where the exported dlsym sends a call (it jumps there with the caller's
 * arguments and return address): a name in the hook table, on any handle
 * but RTLD_NEXT, to the shim's lookup that returns the hook when the real
 * dlsym finds the name; anything else to the real dlsym. NULL: no dlsym.
 */
void	*(*dlsym_route(void *handle, const char *name))(void *, const char *);

#endif
