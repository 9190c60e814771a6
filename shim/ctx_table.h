/*
 * Which context each accounted array was made in: the driver destroys a
 * context's arrays with it (cuda.h, cuCtxDestroy), and no query of an
 * array says its context. Thread-safe; on no fast path.
 */
#ifndef GF_SHIM_CTX_TABLE_H
#define GF_SHIM_CTX_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* The array recorded under key was made in ctx. 0, or -1 (no memory). */
int	ctx_array_made(uint64_t key, CUcontext ctx);
/* It is destroyed. */
void	ctx_array_gone(uint64_t key);
/*
 * Append the keys of ctx's arrays to *keys (n of them, room for *cap;
 * grown with realloc, the caller frees it). 0, or -1 (no memory).
 */
int	ctx_array_list(CUcontext ctx, uint64_t **keys, size_t *n, size_t *cap);
/* ctx has ended: forget its arrays. */
void	ctx_array_forget(CUcontext ctx);
/* In a fork child: the arrays are the parent's. */
void	ctx_array_fork_child(void);

/* Append key to *keys, as ctx_array_list does. 0, or -1 (no memory). */
int	ctx_keys_push(uint64_t **keys, size_t *n, size_t *cap, uint64_t key);

#endif
