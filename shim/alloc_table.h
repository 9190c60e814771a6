/*
 * The live allocation table: every device allocation this process holds
 * through the shim, ptr -> {size, kind, device}, and the per-device sums.
 * It is the truth the shim re-registers with a restarted daemon and the
 * "used" a program is shown. Thread-safe, and lock-free where the fast
 * path goes (DESIGN.md §7): adding, looking up and removing take no lock
 * and allocate nothing, but for a thread's first call and the add that
 * makes the table grow (one that finds it full waits for the growth).
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

/*
 * Record an allocation; ptr must not be 0. One still recorded at ptr was
 * freed behind the shim's back and is replaced (a lookup of ptr meanwhile
 * may find neither): its entry is copied to *old (unless old is NULL),
 * for the caller to settle. Returns 0; 1 when it replaced one; -1 when
 * out of memory (or ptr is 0, or dev out of range).
 */
int	alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev,
	    unsigned flags, struct alloc_entry *old);

/* Forget ptr; 1 with its entry copied to *out, or 0 if it is not here. */
int	alloc_table_remove(uint64_t ptr, struct alloc_entry *out);

/* 1 with ptr's entry copied to *out, or 0 if it is not here. */
int	alloc_table_get(uint64_t ptr, struct alloc_entry *out);

/*
 * Bytes live on device dev: exact once the threads adding and removing
 * have returned; while they run, a sum they are changing.
 */
uint64_t alloc_table_used(int dev);

/*
 * Call fn for every allocation (fn must not call back into the table);
 * stops at the first non-zero return and returns it. The table does not
 * grow meanwhile: an allocation there throughout is seen once, one added
 * or removed during the walk may or may not be. It reads the keys the
 * table has taken since it was made (those of live entries, and of removed
 * ones until the table moves), not the whole table: none at first.
 */
int	alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
	    void *arg), void *arg);

/*
 * fork(2): prepare stops the table from growing, parent lets it again,
 * child empties it (the child does not own its parent's device memory).
 */
void	alloc_table_fork_prepare(void);
void	alloc_table_fork_parent(void);
void	alloc_table_fork_child(void);

#endif
