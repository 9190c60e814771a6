/*
 * The copy engine's inside, shared by its two files and nothing else:
 * vback.c (allocations backed, freed, looked up) and vback_move.c (their
 * contents moved to pinned host memory and back). vback.h says how.
 */
#ifndef GF_SHIM_VBACK_INT_H
#define GF_SHIM_VBACK_INT_H

#include <pthread.h>
#include <stdint.h>

#include <cuda.h>

#include "ptrmap.h"

struct vback {
	uint64_t	ptr;
	uint64_t	size;		/* asked for */
	uint64_t	held;		/* mapped: size rounded up */
	int		dev;
	CUcontext	ctx;		/* current when it was made */
	CUmemGenericAllocationHandle h;	/* 0 while out */
	void		*host;		/* its contents while out, or NULL */
};

extern pthread_mutex_t vback_lock;	/* the map, and a move */
extern struct ptrmap vback_map;		/* ptr -> struct vback */
extern int vback_is_out;		/* contents on the host */

/* Make and map v->h at v->ptr; on failure nothing is left. */
CUresult vback_map_new(struct vback *v);

#endif
