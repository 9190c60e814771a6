/*
 * The simulated driver's one private export table (cuGetExportTable), as
 * the real driver has them for libcudart: entry points a program reaches
 * without a name, which no interposer can know or gate. The tests use it
 * for "a driver call gpufrac does not see", to list every entry point
 * cuGetProcAddress finds (each of which the shim must hook or gate), and
 * to hold cuCtxDestroy inside the driver (hold.c), and to count the
 * pointer queries a program (and the shim in it) made.
 */
#ifndef SIMCUDA_PRIVATE_TABLE_H
#define SIMCUDA_PRIVATE_TABLE_H

#include <stddef.h>
#include <cuda.h>

/* Its id; the real driver's tables have ids of their own. */
#define SIMCUDA_PRIVATE_TABLE_ID { { \
	's', 'i', 'm', 'c', 'u', 'd', 'a', '-', \
	'p', 'r', 'i', 'v', 'a', 't', 'e', 0 } }

struct procaddr;

struct simcuda_private_table {
	size_t		size;		/* of this struct, as cudart's start */
	/* fn(arg) inside a driver call: gated as every other one is */
	CUresult	(*call)(void (*fn)(void *), void *arg);
	/* the driver's table of entry points (common/procaddr.h), *n long */
	const struct procaddr *(*entry_points)(size_t *n);
	/*
	 * hold(1): from now until hold(0), cuCtxDestroy waits inside the
	 * driver before it acts; held() is how many wait there now
	 */
	void		(*ctx_end_hold)(int on);
	int		(*ctx_end_held)(void);
	/* cuPointerGetAttribute(s) calls the process has made so far */
	unsigned long	(*pointer_queries)(void);
};

#endif
