/*
 * Resolution by (name, CUDA version, flags) as cuGetProcAddress does it.
 * The simulated driver resolves its own entry points with it, and the shim
 * finds its hooks with it: one mechanism, so both agree with each other.
 */
#ifndef GF_COMMON_PROCADDR_H
#define GF_COMMON_PROCADDR_H

#include <stddef.h>
#include <stdint.h>

/*
 * One ABI of one entry point: the base name as cuGetProcAddress takes it
 * ("cuMemAlloc"), the CUDA version that introduced this ABI (3020 for
 * cuMemAlloc_v2), whether it is the per-thread-default-stream variant
 * (_ptds/_ptsz), the exported symbol ("cuMemAlloc_v2") and a function.
 * A table is sorted by name, then version, then ptds.
 */
struct procaddr {
	const char	*name;
	int		version;
	int		ptds;
	const char	*symbol;
	void		*fn;
};

enum {
	PROCADDR_FOUND = 0,		/* CU_GET_PROC_ADDRESS_SUCCESS */
	PROCADDR_NOT_FOUND = 1,		/* ..._SYMBOL_NOT_FOUND */
	PROCADDR_VERSION_LOW = 2,	/* ..._VERSION_NOT_SUFFICIENT */
};

/*
 * The entry for name that a caller built against CUDA `version` gets: the
 * newest ABI not newer than version; with CU_GET_PROC_ADDRESS_PER_THREAD_
 * DEFAULT_STREAM (2) in flags its per-thread variant where one exists.
 * Returns the entry, or NULL with *status saying why.
 */
const struct procaddr *procaddr_find(const struct procaddr *tab, size_t n,
	    const char *name, int version, uint64_t flags, int *status);

/* The entry whose exported symbol is `symbol`, or NULL. */
const struct procaddr *procaddr_by_symbol(const struct procaddr *tab,
	    size_t n, const char *symbol);

/* 0 when tab is sorted as procaddr_find requires (for tests). */
int	procaddr_check_sorted(const struct procaddr *tab, size_t n);

#endif
