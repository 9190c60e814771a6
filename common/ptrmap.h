/*
 * A hash map from a 64-bit key (a device pointer) to a pointer value, with
 * open addressing and backward-shift deletion: no tombstones, so lookups
 * stay short however many allocations come and go. Not thread-safe; the
 * owner locks.
 */
#ifndef GF_COMMON_PTRMAP_H
#define GF_COMMON_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

struct ptrmap {
	uint64_t	*keys;
	void		**vals;		/* NULL marks an empty slot */
	size_t		cap;		/* power of two, or 0 */
	size_t		len;
};

void	ptrmap_init(struct ptrmap *m);
/* Frees the table, not the values. */
void	ptrmap_free(struct ptrmap *m);

/* Insert or replace; val must not be NULL. Returns 0, or -1 (ENOMEM). */
int	ptrmap_put(struct ptrmap *m, uint64_t key, void *val);
/* The value for key, or NULL. */
void	*ptrmap_get(const struct ptrmap *m, uint64_t key);
/* Remove key; returns its value, or NULL if it was absent. */
void	*ptrmap_del(struct ptrmap *m, uint64_t key);

/*
 * Iterate: start with *pos = 0; returns the next value and its key, or NULL
 * at the end. The map must not change during the walk.
 */
void	*ptrmap_next(const struct ptrmap *m, size_t *pos, uint64_t *key);

#endif
