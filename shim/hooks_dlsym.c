/*
 * dlsym interposition (DESIGN.md §3, path 2, as numba and TensorFlow use it):
 * a hooked driver symbol the real dlsym finds comes back as the shim's hook;
 * every other lookup goes to glibc unchanged.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "dlsym.h"
#include "hooks.h"
#include "shim.h"

/*
 * Where the exported dlsym sends a call (it jumps there with the caller's
 * arguments and return address): a name in the hook table, on any handle
 * but RTLD_NEXT, to the shim's lookup that returns the hook when the real
 * dlsym finds the name; anything else to the real dlsym. NULL: no dlsym.
 * Called only from the entry below.
 */
dlsym_fn	dlsym_route(void *handle, const char *name);

/*
 * A hooked driver symbol: NULL for any other name, and for a newer ABI the
 * table lists only to leave unhooked. Most lookups are not for the driver
 * (and a sanitizer's start-up never is): two bytes decide.
 */
SHIM_NO_SANITIZE static const struct procaddr *
dlsym_hook_of(const char *name)
{
	const struct procaddr *e;

	if (name == NULL)
		return NULL;
	if (name[0] == 'n' && name[1] == 'v')
		e = procaddr_by_symbol(nvml_hooks, nvml_hooks_len, name);
	else if (name[0] == 'c' && name[1] == 'u')
		e = procaddr_by_symbol(hooks_table, hooks_table_len, name);
	else
		return NULL;
	return e != NULL && e->fn != NULL ? e : NULL;
}

/* A hooked name: the real lookup, then the hook if the real one found it. */
static void *
dlsym_hooked(void *handle, const char *name)
{
	dlsym_fn real = dlsym_real_get();
	void *p = real != NULL ? real(handle, name) : NULL;

	return p != NULL ? dlsym_hook_of(name)->fn : NULL;
}

/*
 * Where a dlsym call goes: a hooked name on any handle but RTLD_NEXT to
 * dlsym_hooked, everything else to the real dlsym.
 */
SHIM_NO_SANITIZE __attribute__((used)) dlsym_fn
dlsym_route(void *handle, const char *name)
{
	if (handle != RTLD_NEXT && dlsym_hook_of(name) != NULL)
		return dlsym_hooked;
	return dlsym_real_get();
}

/*
 * The exported entry. glibc finds the caller of dlsym from its return
 * address: it resolves RTLD_NEXT ("after the object that called me"), picks
 * the namespace and names the caller in dlerror() with it. Calling the real
 * dlsym from a C function would make the shim the caller, and an
 * interposer loaded after the shim would get its own symbol back from
 * RTLD_NEXT (endless recursion). So on x86_64 the entry is a few
 * instructions that ask dlsym_route where to go and jump there with the
 * caller's return address untouched. Elsewhere a C entry relies on the
 * compiler's tail call (-O2).
 */
#if defined(__x86_64__)
#if defined(__CET__)
#define DLSYM_ENDBR	"	endbr64\n"
#else
#define DLSYM_ENDBR
#endif
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl	gf_dlsym_new\n"
	"	.globl	gf_dlsym_old\n"
	"	.type	gf_dlsym_new, @function\n"
	"	.type	gf_dlsym_old, @function\n"
	"gf_dlsym_new:\n"
	"gf_dlsym_old:\n"
	"	.cfi_startproc\n"
	DLSYM_ENDBR
	"	pushq	%rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq	%rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq	$8, %rsp\n"		/* 16-byte aligned call */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	dlsym_route\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq	%rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq	%rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq	%rax, %rax\n"
	"	jz	1f\n"
	"	jmp	*%rax\n"
	"1:	ret\n"				/* no real dlsym: NULL */
	"	.cfi_endproc\n"
	"	.size	gf_dlsym_new, .-gf_dlsym_new\n"
	"	.size	gf_dlsym_old, .-gf_dlsym_old\n"
);
#else
void	*gf_dlsym_old(void *handle, const char *name) SHIM_EXPORT;

void *
gf_dlsym_old(void *handle, const char *name)
{
	dlsym_fn fn = dlsym_route(handle, name);

	return fn != NULL ? fn(handle, name) : NULL;
}

void	*gf_dlsym_new(void *handle, const char *name)
	    __attribute__((alias("gf_dlsym_old"))) SHIM_EXPORT;
#endif

/* The version nodes are defined in libgpufrac.map. */
__asm__(".symver gf_dlsym_new, dlsym@@" DLSYM_NEW_VERSION);
__asm__(".symver gf_dlsym_old, dlsym@" DLSYM_OLD_VERSION);
