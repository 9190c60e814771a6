/*
 * The allocation table's inside, shared by its two files and nothing else:
 * alloc_table.c (entries, threads' records, adding and removing) and
 * alloc_tab.c (the tables: made, moved, retired, walked, and after fork).
 * alloc_table.c's opening comment says how it all works.
 */
#ifndef GF_SHIM_ALLOC_TABLE_INT_H
#define GF_SHIM_ALLOC_TABLE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "alloc_table.h"
#include "shim.h"

#define SLOT_FREE	0
#define SLOT_BUSY	1
#define SLOT_LIVE	2
#define SLOT_MOVED	3
#define SLOT_STATE(st)		((unsigned)((st) & 3))
/*
 * The key of a slot sealed while it was empty: it never takes a key, and
 * every search that reaches it goes on in the next table. No allocation
 * key is all ones (addresses and handles are aligned).
 */
#define SLOT_SEALED		(~0ull)
/* The state word after st: the next sequence number, in state s. */
#define SLOT_NEXT(st, s)	((((st) & ~3ull) + 4) | (s))

#define TAB_STATIC_BITS	11	/* the first table: 2048 slots, static */
#define TAB_MAX_BITS	31	/* a slot's number + 1 fits in keyed[] */
#define TAB_GROW(cap)	((cap) / 8 * 5)	/* keys past which it grows */
#define TAB_FULL(cap)	((cap) / 8 * 7)	/* keys an add may not pass */
#define TAB_CLOSED	(1ull << 63)	/* in keys: moving, no new count */
#define RECLAIM_TRIES	100	/* yields to wait for a retired table */
#define TAB_HUGE	(2u << 20)	/* tables this big ask for huge pages */

/*
 * A point of an operation that the unit test watches: empty in the
 * library; the test defines it to stop a thread where another thread's
 * step decides the outcome, or to count the slots a walk reads
 * (tests/unit/test_shim_alloc_table.c).
 */
#ifndef TABLE_PAUSE
#define TABLE_PAUSE(point)	((void)0)
#endif
#define TP_COUNTED	0	/* an add counted its key, not yet keyed */
#define TP_CLOSED	1	/* a move closed the table, moved nothing */
#define TP_WALKED	2	/* a walk read a slot */

struct alloc_slot {
	uint64_t	key;		/* 0 until keyed or sealed, then for good */
	uint64_t	state;		/* sequence << 2 | SLOT_* */
	uint64_t	size;
	uint64_t	meta;		/* kind | dev << 32 | flags << 48 */
};

struct alloc_tab {
	struct alloc_slot *slots;
	uint64_t	 mask;		/* slots - 1 (slots a power of two) */
	unsigned	 shift;		/* 64 - log2(slots) */
	size_t		 bytes;		/* mapped, with this header */
	struct alloc_tab *next;		/* where its entries went */
	uint64_t	 reserve;	/* slots kept for a move into it */
	struct alloc_tab *retired;	/* the next on the retired list */
	uint64_t	 epoch;		/* when it was retired */
	/*
	 * The keyed slots' numbers + 1, in the order they were keyed (0:
	 * being written), so that a walk reads those and not the empty
	 * ones: nkeyed of them, never more than the slots.
	 */
	uint32_t	*keyed;
	uint64_t	 keys __attribute__((aligned(64))); /* slots keyed */
	uint64_t	 nkeyed;	/* keyed[] taken */
};

struct alloc_thread {
	uint64_t	 active;	/* epoch << 1 | 1 in an operation */
	uint64_t	 used[SHIM_MAX_DEVICES]; /* added less removed */
	struct alloc_thread *next;	/* every record: never freed */
	int		 taken;		/* by a live thread */
} __attribute__((aligned(64)));

extern struct alloc_tab *tab_cur;	/* where operations begin */
extern uint64_t tab_epoch;		/* one more for each table retired */
extern struct alloc_thread *thread_all;	/* every record: never freed */
extern struct alloc_thread thread_spare;	/* for a thread without one */
extern pthread_mutex_t thread_spare_lock;
extern __thread struct alloc_thread *thread_self SHIM_TLS;

/* Fibonacci hashing: device pointers are aligned, the top bits mix. */
static inline uint64_t
slot_home(const struct alloc_tab *t, uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> t->shift;
}

/* slot i of t, just keyed, is listed in keyed[] (walked from there). */
static inline void
slot_keyed(struct alloc_tab *t, uint64_t i)
{
	uint64_t n = __atomic_fetch_add(&t->nkeyed, 1, __ATOMIC_RELAXED);

	__atomic_store_n(&t->keyed[n], (uint32_t)(i + 1), __ATOMIC_RELEASE);
}

/* slot_claim past the end of key's run (alloc_table.c). */
struct alloc_slot *slot_claim_empty(struct alloc_tab *t, uint64_t i,
	    uint64_t key, int mover, int *grow);

/*
 * key's slot in t for an add: found, or claimed (its key 0 -> key), or a
 * sealed one (MOVED) that sends the add on to t->next. NULL if t has no
 * room for another key. The grower (mover) always has room: the table
 * keeps it (reserve). *grow is set when the claim took t past TAB_GROW.
 */
static inline struct alloc_slot *
slot_claim(struct alloc_tab *t, uint64_t key, int mover, int *grow)
{
	uint64_t i = slot_home(t, key), k;
	struct alloc_slot *s;

	for (;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if ((k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE)) == key)
			return s;
		if (k == 0 || k == SLOT_SEALED)
			return slot_claim_empty(t, i, key, mover, grow);
	}
}

/* The sealed slot s is MOVED: whoever sees it sealed makes sure of it. */
static inline void
slot_sealed(struct alloc_slot *s)
{
	uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

	while (SLOT_STATE(st) == SLOT_FREE &&
	    !__atomic_compare_exchange_n(&s->state, &st,
	    SLOT_NEXT(st, SLOT_MOVED), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

/* Seal the empty slot s: 1 done (and MOVED), 0 it was keyed first. */
static inline int
slot_seal(struct alloc_slot *s)
{
	uint64_t k = 0;

	if (!__atomic_compare_exchange_n(&s->key, &k, SLOT_SEALED, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && k != SLOT_SEALED)
		return 0;
	slot_sealed(s);
	return 1;
}

/* What s holds: its state, and in *e its entry if LIVE (alloc_table.c). */
unsigned slot_read(struct alloc_slot *s, struct alloc_entry *e);

/*
 * Grow t if it is still the current table (alloc_tab.c). For an add with
 * no room: wait for the lock, and grow t if it still has none. Else past
 * TAB_GROW: leave it to whoever holds the lock. 0, or -1 if out of memory.
 */
int	tab_grow(struct alloc_tab *t, int wait);

#endif
