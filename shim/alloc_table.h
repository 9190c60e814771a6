/*
 * The live allocation table: every device allocation this process holds
 * through the shim, ptr -> {size, kind, device}, and the per-device sums.
 * It is the truth the shim re-registers with a restarted daemon and the
 * "used" a program is shown. Thread-safe (its own mutex).
 */
#ifndef GF_SHIM_ALLOC_TABLE_H
#define GF_SHIM_ALLOC_TABLE_H

#include <stdint.h>

#define ALLOC_LEASED	0x1	/* drawn from the device's lease: the daemon
				   never heard of it */

struct alloc_entry {
	uint64_t	size;		/* bytes the allocation really holds */
	uint32_t	kind;		/* GF_KIND_* */
	int16_t		dev;		/* device ordinal in this process */
	uint16_t	flags;		/* ALLOC_* */
};

/* Record an allocation. Returns 0, or -1 when out of memory. */
int	alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev,
	    unsigned flags);

/* Forget ptr; 1 with its entry copied to *out, or 0 if it is not here. */
int	alloc_table_remove(uint64_t ptr, struct alloc_entry *out);

/* Bytes live on device dev. */
uint64_t alloc_table_used(int dev);

/*
 * Call fn for every allocation, with the table locked (fn must not call
 * back into the table); stops at the first non-zero return and returns it.
 */
int	alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
	    void *arg), void *arg);

/*
 * fork(2): prepare locks the table, parent unlocks it, child empties it
 * (the child does not own its parent's device memory).
 */
void	alloc_table_fork_prepare(void);
void	alloc_table_fork_parent(void);
void	alloc_table_fork_child(void);

#endif
