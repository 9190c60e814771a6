/*
 * The live allocation table, lock-free: one open-addressing hash table of
 * slots keyed by device pointer (linear probing), grown by moving to a
 * larger one while it stays in use, and per-thread records that hold each
 * thread's share of the per-device sums.
 *
 * Slots. A slot's key is set once (0 -> ptr, by CAS) and stays while the
 * table lives, so a key has one slot and no probe run is ever broken. What
 * the slot holds is its state word: a sequence number and FREE (nothing:
 * never used, or removed), BUSY (an add is writing it), LIVE, or MOVED
 * (look in the next table). Every change of state bumps the sequence, so
 * a CAS on the state, or reading it again unchanged, proves that the size
 * and kind read in between belong together (a seqlock). A lookup or remove
 * that meets BUSY takes the entry as not there yet; an add that meets it
 * takes its own entry as replaced by the other's.
 *
 * Growth. The keys of removed entries stay, so a table fills with keys even
 * when few are live. Past TAB_GROW keys the adding thread builds the next
 * table, sized for what is live (never smaller), under a mutex: one grower
 * at a time. It closes the old table's key count (no new key goes there
 * after), then moves each slot: a LIVE one is copied, then CASed to MOVED
 * (copied again if it changed meanwhile); a FREE one is CASed to MOVED.
 * Operations carry on throughout, following MOVED slots to the new table;
 * only an add that finds no room waits for the grower. The new table keeps
 * room for every key of the old one until the move is done.
 *
 * Reclamation. A thread announces each operation in its record, with the
 * epoch it read, by an atomic exchange: a full barrier before it reads the
 * current table. A table retired at epoch E is unmapped once no record
 * shows an operation that began before E.
 *
 * Sums. A thread adds to and takes from its own record's sums (one writer:
 * plain loads and stores, no locked instruction); a device's bytes are the
 * sum over all records, modulo 2^64. Records outlive their threads and are
 * taken over by new ones. A thread that cannot have a record (out of
 * memory) uses the spare one, under a mutex.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_table.h"
#include "log.h"
#include "shim.h"

#define SLOT_FREE	0
#define SLOT_BUSY	1
#define SLOT_LIVE	2
#define SLOT_MOVED	3
#define SLOT_STATE(st)		((unsigned)((st) & 3))
/* The state word after st: the next sequence number, in state s. */
#define SLOT_NEXT(st, s)	((((st) & ~3ull) + 4) | (s))

#define TAB_STATIC_BITS	11	/* the first table: 2048 slots, static */
#define TAB_GROW(cap)	((cap) / 8 * 5)	/* keys past which it grows */
#define TAB_FULL(cap)	((cap) / 8 * 7)	/* keys an add may not pass */
#define TAB_CLOSED	(1ull << 63)	/* in keys: moving, no new key */
#define RECLAIM_TRIES	100	/* yields to wait for a retired table */
#define TAB_HUGE	(2u << 20)	/* tables this big ask for huge pages */

struct alloc_slot {
	uint64_t	key;		/* 0 until set, then for good */
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
	uint64_t	 keys __attribute__((aligned(64))); /* slots keyed */
};

struct alloc_thread {
	uint64_t	 active;	/* epoch << 1 | 1 in an operation */
	uint64_t	 used[SHIM_MAX_DEVICES]; /* added less removed */
	struct alloc_thread *next;	/* every record: never freed */
	int		 taken;		/* by a live thread */
} __attribute__((aligned(64)));

static struct alloc_slot tab_static_slots[1 << TAB_STATIC_BITS]
    __attribute__((aligned(64)));
static struct alloc_tab tab_static = {
	.slots = tab_static_slots,
	.mask = (1 << TAB_STATIC_BITS) - 1,
	.shift = 64 - TAB_STATIC_BITS,
};
static struct alloc_tab *tab_cur = &tab_static;
static uint64_t tab_epoch;
static struct alloc_tab *tab_retired;	/* mapped ones; grow lock */
static struct alloc_tab *tab_spare;	/* for the next move; grow lock */
static pthread_mutex_t tab_grow_lock = PTHREAD_MUTEX_INITIALIZER;

static struct alloc_thread thread_spare;
static pthread_mutex_t thread_spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc_thread *thread_all = &thread_spare;
static __thread struct alloc_thread *thread_self SHIM_TLS;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static int thread_key_ok;

/* ---- threads' records ------------------------------------------------ */

/* At a thread's exit: its record, sums and all, is free to be taken. */
static void
thread_release(void *arg)
{
	struct alloc_thread *r = arg;

	thread_self = NULL;
	__atomic_store_n(&r->taken, 0, __ATOMIC_RELEASE);
}

static void
thread_key_make(void)
{
	thread_key_ok = pthread_key_create(&thread_key, thread_release) == 0;
}

/* The calling thread's record, one left by a thread gone or a new one. */
static struct alloc_thread *
thread_register(void)
{
	struct alloc_thread *r;
	void *p;

	pthread_once(&thread_once, thread_key_make);
	for (r = __atomic_load_n(&thread_all, __ATOMIC_ACQUIRE); r != NULL;
	    r = r->next)
		if (r != &thread_spare &&
		    !__atomic_load_n(&r->taken, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&r->taken, 1, __ATOMIC_ACQUIRE))
			goto out;
	if (posix_memalign(&p, 64, sizeof(*r)) != 0)
		return NULL;
	r = memset(p, 0, sizeof(*r));
	r->taken = 1;
	r->next = __atomic_load_n(&thread_all, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&thread_all, &r->next, r, 1,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
out:
	/* Without it the record stays taken after the thread: only that. */
	if (thread_key_ok)
		(void)pthread_setspecific(thread_key, r);
	thread_self = r;
	return r;
}

/*
 * A thread's first operation: its record, or the spare one (locked until
 * op_end) when there is no memory for one.
 */
static struct alloc_thread * __attribute__((noinline))
op_first(void)
{
	struct alloc_thread *r;

	if ((r = thread_register()) == NULL) {
		pthread_mutex_lock(&thread_spare_lock);
		r = &thread_spare;
	}
	return r;
}

/* Begin an operation: the calling thread's record, marked busy. */
static inline struct alloc_thread *
op_begin(void)
{
	struct alloc_thread *r = thread_self;

	if (__builtin_expect(r == NULL, 0))
		r = op_first();
	/* An exchange, not a store: no table is read before it is seen. */
	(void)__atomic_exchange_n(&r->active, __atomic_load_n(&tab_epoch,
	    __ATOMIC_ACQUIRE) << 1 | 1, __ATOMIC_SEQ_CST);
	return r;
}

static inline void
op_end(struct alloc_thread *r)
{
	__atomic_store_n(&r->active, 0, __ATOMIC_RELEASE);
	if (__builtin_expect(r == &thread_spare, 0))
		pthread_mutex_unlock(&thread_spare_lock);
}

/* The current table, once op_begin has announced the operation. */
static inline struct alloc_tab *
op_table(void)
{
	return __atomic_load_n(&tab_cur, __ATOMIC_SEQ_CST);
}

/* Add n (mod 2^64) to r's bytes on dev: r's thread is its only writer. */
static inline void
op_count(struct alloc_thread *r, unsigned dev, uint64_t n)
{
	__atomic_store_n(&r->used[dev], __atomic_load_n(&r->used[dev],
	    __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* ---- slots ----------------------------------------------------------- */

static uint64_t
meta_pack(uint32_t kind, int dev, unsigned flags)
{
	return kind | (uint64_t)(uint16_t)dev << 32 |
	    (uint64_t)(uint16_t)flags << 48;
}

static void
entry_unpack(uint64_t size, uint64_t meta, struct alloc_entry *e)
{
	e->size = size;
	e->kind = (uint32_t)meta;
	e->dev = (int16_t)(meta >> 32);
	e->flags = (uint16_t)(meta >> 48);
}

/* Fibonacci hashing: device pointers are aligned, the top bits mix. */
static inline uint64_t
slot_home(const struct alloc_tab *t, uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> t->shift;
}

/*
 * key's slot in t; or NULL, with *next set if the search goes on in
 * t->next (t is being moved, and key had no slot in it). Every table has
 * empty slots (TAB_FULL), so the search ends.
 */
static inline struct alloc_slot *
slot_find(const struct alloc_tab *t, uint64_t key, int *next)
{
	uint64_t i = slot_home(t, key), k;
	struct alloc_slot *s;

	for (;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if ((k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE)) == key)
			return s;
		if (k == 0)
			break;
	}
	/* The end of key's run: key is in no slot beyond. */
	*next = SLOT_STATE(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) ==
	    SLOT_MOVED;
	return NULL;
}

/* Mark the empty slot s MOVED unless an add keys it first: 1 if MOVED. */
static int
slot_seal(struct alloc_slot *s)
{
	uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

	for (;;) {
		if (SLOT_STATE(st) == SLOT_MOVED)
			return 1;
		if (SLOT_STATE(st) != SLOT_FREE ||
		    __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) != 0)
			return 0;
		if (__atomic_compare_exchange_n(&s->state, &st,
		    SLOT_NEXT(st, SLOT_MOVED), 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			return 1;
	}
}

/* slot_claim past the end of key's run: from i, its first empty slot. */
static struct alloc_slot * __attribute__((noinline))
slot_claim_empty(struct alloc_tab *t, uint64_t i, uint64_t key, int mover,
    int *grow)
{
	struct alloc_slot *s;
	uint64_t k, keys;

	for (;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if ((k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE)) == key)
			return s;
		if (k != 0)
			continue;
		if (SLOT_STATE(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) ==
		    SLOT_MOVED)
			return s;
		keys = __atomic_add_fetch(&t->keys, 1, __ATOMIC_ACQ_REL);
		if (keys & TAB_CLOSED) {
			/* Being moved: key goes to the next table. */
			__atomic_sub_fetch(&t->keys, 1, __ATOMIC_RELAXED);
			if (slot_seal(s))
				return s;
		} else if (!mover && keys + __atomic_load_n(&t->reserve,
		    __ATOMIC_ACQUIRE) > TAB_FULL(t->mask + 1)) {
			__atomic_sub_fetch(&t->keys, 1, __ATOMIC_RELAXED);
			return NULL;
		} else if (__atomic_compare_exchange_n(&s->key, &k, key, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			*grow = keys > TAB_GROW(t->mask + 1);
			return s;
		} else
			__atomic_sub_fetch(&t->keys, 1, __ATOMIC_RELAXED);
		/* Keyed meanwhile, perhaps with key itself. */
		if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == key)
			return s;
	}
}

/*
 * key's slot in t for an add: found, or claimed (its key 0 -> key), or an
 * empty MOVED slot that sends the add on to t->next. NULL if t has no room
 * for another key. The grower (mover) always has room: the table keeps it
 * (reserve). *grow is set when the claim took t past TAB_GROW.
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
		if (k == 0)
			return slot_claim_empty(t, i, key, mover, grow);
	}
}

/*
 * What s holds: its state, and in *e its entry if SLOT_LIVE. The second
 * read of the state is a read-modify-write, ordered after the entry's
 * loads as slot_take's CAS is: they were not of an add that came after.
 */
static unsigned
slot_read(struct alloc_slot *s, struct alloc_entry *e)
{
	uint64_t st, size, meta;

	do {
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (SLOT_STATE(st) != SLOT_LIVE)
			return SLOT_STATE(st);
		size = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
		meta = __atomic_load_n(&s->meta, __ATOMIC_RELAXED);
	} while (__atomic_fetch_add(&s->state, 0, __ATOMIC_ACQ_REL) != st);
	entry_unpack(size, meta, e);
	return SLOT_LIVE;
}

/*
 * Empty the LIVE slot s, in state st, for r's thread: 1 with its entry in
 * *e, or 0 if s changed meanwhile.
 */
static inline int
slot_take(struct alloc_thread *r, struct alloc_slot *s, uint64_t st,
    struct alloc_entry *e)
{
	uint64_t size = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
	uint64_t meta = __atomic_load_n(&s->meta, __ATOMIC_RELAXED);

	/* Release: the loads above come before; the CAS proves them. */
	if (!__atomic_compare_exchange_n(&s->state, &st,
	    SLOT_NEXT(st, SLOT_FREE), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	entry_unpack(size, meta, e);
	op_count(r, (uint16_t)e->dev, -size);
	return 1;
}

/* ---- tables ---------------------------------------------------------- */

/*
 * A new, empty table of 2^bits slots; NULL if out of memory. Grow lock
 * held. The spare one if it has that size: a table whose entries come
 * and go at new addresses moves between two of the same size, and pages
 * in use are cleared faster than new ones are faulted in.
 */
static struct alloc_tab *
tab_new(unsigned bits)
{
	size_t bytes = sizeof(struct alloc_tab) +
	    ((size_t)1 << bits) * sizeof(struct alloc_slot);
	struct alloc_tab *t = tab_spare;

	tab_spare = NULL;
	if (t != NULL && t->bytes == bytes)
		memset(t, 0, bytes);
	else {
		if (t != NULL)
			munmap(t, t->bytes);
		/* Mapped, not from the program's heap. */
		t = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED)
			return NULL;
		/* Probes land anywhere: fewer TLB misses and faults. */
		if (bytes >= TAB_HUGE)
			(void)madvise(t, bytes, MADV_HUGEPAGE);
	}
	t->slots = (struct alloc_slot *)(t + 1);
	t->mask = ((uint64_t)1 << bits) - 1;
	t->shift = 64 - bits;
	t->bytes = bytes;
	/* No new key until the move says how much room it needs. */
	t->reserve = t->mask + 1;
	return t;
}

/* Done with t, retired and quiet: the spare if the size is current's. */
static void
tab_free(struct alloc_tab *t)
{
	if (t == &tab_static)
		return;
	if (tab_spare == NULL && t->mask == tab_cur->mask)
		tab_spare = t;
	else
		munmap(t, t->bytes);
}

/* Copy s to n and mark it MOVED; grow lock held. */
static void
slot_move(struct alloc_slot *s, struct alloc_tab *n)
{
	struct alloc_slot *d;
	uint64_t st, dst;
	int grow;

	for (;;) {
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		switch (SLOT_STATE(st)) {
		case SLOT_MOVED:
			return;		/* sealed by an add */
		case SLOT_BUSY:
			sched_yield();	/* an add is writing it */
			continue;
		case SLOT_FREE:
			if (__atomic_compare_exchange_n(&s->state, &st,
			    SLOT_NEXT(st, SLOT_MOVED), 0, __ATOMIC_ACQ_REL,
			    __ATOMIC_RELAXED))
				return;
			continue;
		}
		/*
		 * Never NULL: n keeps room for every key of t (reserve).
		 * Nobody looks for this key in n before s is MOVED: d is
		 * the mover's to write, and to empty again if s changed.
		 */
		d = slot_claim(n, __atomic_load_n(&s->key, __ATOMIC_RELAXED),
		    1, &grow);
		dst = __atomic_load_n(&d->state, __ATOMIC_RELAXED);
		__atomic_store_n(&d->size, __atomic_load_n(&s->size,
		    __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		__atomic_store_n(&d->meta, __atomic_load_n(&s->meta,
		    __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		dst = SLOT_NEXT(dst, SLOT_LIVE);
		__atomic_store_n(&d->state, dst, __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(&s->state, &st,
		    SLOT_NEXT(st, SLOT_MOVED), 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_RELAXED))
			return;
		__atomic_store_n(&d->state, SLOT_NEXT(dst, SLOT_FREE),
		    __ATOMIC_RELEASE);
	}
}

/* No operation that began before epoch e still running? */
static int
tab_quiet(uint64_t e)
{
	struct alloc_thread *r;
	uint64_t a;

	for (r = __atomic_load_n(&thread_all, __ATOMIC_ACQUIRE); r != NULL;
	    r = r->next) {
		a = __atomic_load_n(&r->active, __ATOMIC_SEQ_CST);
		if ((a & 1) && a >> 1 < e)
			return 0;
	}
	return 1;
}

/* Unmap the retired tables that no operation can be in; grow lock held. */
static void
tab_reclaim(void)
{
	struct alloc_tab **tp, *t;

	for (tp = &tab_retired; (t = *tp) != NULL; )
		if (tab_quiet(t->epoch)) {
			*tp = t->retired;
			tab_free(t);
		} else
			tp = &t->retired;
}

/*
 * The new table's size: at least four slots for each live entry, so that
 * 3/8 of its slots take new keys before it moves again (a move costs two
 * passes over the old table: O(1) for each new key), and never smaller.
 */
static unsigned
tab_bits(const struct alloc_tab *t)
{
	unsigned bits = 64 - t->shift;
	uint64_t live = 0, i;

	for (i = 0; i <= t->mask; i++)
		live += SLOT_STATE(__atomic_load_n(&t->slots[i].state,
		    __ATOMIC_RELAXED)) != SLOT_FREE;
	while (bits < 48 && ((uint64_t)1 << bits) < 4 * live)
		bits++;
	return bits;
}

/* Move t, the current table, to a new one; grow lock held. 0 or -1. */
static int
tab_move(struct alloc_tab *t)
{
	struct alloc_tab *n;
	uint64_t i, keys;
	int tries;

	if ((n = tab_new(tab_bits(t))) == NULL)
		return -1;
	__atomic_store_n(&t->next, n, __ATOMIC_RELEASE);
	/* Closed after next is set: an add that sees it finds next. */
	keys = __atomic_fetch_or(&t->keys, TAB_CLOSED, __ATOMIC_ACQ_REL);
	__atomic_store_n(&n->reserve, keys, __ATOMIC_RELEASE);
	for (i = 0; i <= t->mask; i++)
		slot_move(&t->slots[i], n);
	__atomic_store_n(&n->reserve, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&tab_cur, n, __ATOMIC_SEQ_CST);
	t->epoch = __atomic_add_fetch(&tab_epoch, 1, __ATOMIC_SEQ_CST);
	if (t != &tab_static) {
		t->retired = tab_retired;
		tab_retired = t;
	}
	/* Operations in t end within instructions: wait a little for them. */
	for (tries = 0; tab_retired != NULL && tries < RECLAIM_TRIES;
	    tries++) {
		tab_reclaim();
		if (tab_retired != NULL)
			sched_yield();
	}
	return 0;
}

/* No room in t for another key (slot_claim's test)? */
static int
tab_full(struct alloc_tab *t)
{
	return __atomic_load_n(&t->keys, __ATOMIC_RELAXED) + 1 +
	    __atomic_load_n(&t->reserve, __ATOMIC_RELAXED) >
	    TAB_FULL(t->mask + 1);
}

/*
 * Grow t if it is still the current table. For an add with no room: wait
 * for the lock, and grow t if it still has none (a move into it that kept
 * the room may have ended meanwhile). Else past TAB_GROW: leave it to
 * whoever holds the lock. 0, or -1 if out of memory.
 */
static int
tab_grow(struct alloc_tab *t, int wait)
{
	int r = 0;

	if (wait)
		pthread_mutex_lock(&tab_grow_lock);
	else if (pthread_mutex_trylock(&tab_grow_lock) != 0)
		return 0;
	if (__atomic_load_n(&tab_cur, __ATOMIC_RELAXED) == t &&
	    (!wait || tab_full(t)))
		r = tab_move(t);
	pthread_mutex_unlock(&tab_grow_lock);
	return r;
}

/* ---- adding and removing -------------------------------------------- */

/* Fill the slot s, made BUSY from st, and make it LIVE. */
static inline void
slot_fill(struct alloc_thread *r, struct alloc_slot *s, uint64_t st,
    uint64_t size, uint64_t meta, unsigned dev)
{
	__atomic_store_n(&s->size, size, __ATOMIC_RELAXED);
	__atomic_store_n(&s->meta, meta, __ATOMIC_RELAXED);
	/* Counted before it can be removed: the records sum to 0 or more. */
	op_count(r, dev, size);
	__atomic_store_n(&s->state, SLOT_NEXT(st, SLOT_LIVE),
	    __ATOMIC_RELEASE);
}

/* alloc_table_add, every case: a new key, a full or growing table. */
static int __attribute__((noinline))
table_add(uint64_t ptr, uint64_t size, uint64_t meta, unsigned dev)
{
	struct alloc_thread *r = op_begin();
	struct alloc_tab *t = op_table();
	struct alloc_entry old;
	struct alloc_slot *s;
	uint64_t st;
	int grow, stale = 0;

	for (;;) {
		grow = 0;
		if ((s = slot_claim(t, ptr, 0, &grow)) == NULL) {
			/* No room: wait for it, outside the operation. */
			op_end(r);
			if (tab_grow(t, 1) < 0)
				return -1;
			r = op_begin();
			t = op_table();
			continue;
		}
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		switch (SLOT_STATE(st)) {
		case SLOT_MOVED:
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
			continue;
		case SLOT_BUSY:
			/* Another add of ptr writing: this one went first. */
			goto out;
		case SLOT_LIVE:
			/* Still here: it was freed behind the shim's back. */
			stale |= slot_take(r, s, st, &old);
			continue;
		}
		if (__atomic_compare_exchange_n(&s->state, &st,
		    SLOT_NEXT(st, SLOT_BUSY), 0, __ATOMIC_ACQUIRE,
		    __ATOMIC_RELAXED)) {
			slot_fill(r, s, SLOT_NEXT(st, SLOT_BUSY), size, meta,
			    dev);
			break;
		}
	}
out:
	op_end(r);
	if (stale)
		log_debug("allocation 0x%llx replaces a stale entry",
		    (unsigned long long)ptr);
	if (grow)
		(void)tab_grow(t, 0);
	return 0;
}

/*
 * The common case first: ptr's slot, found or claimed, is empty (an
 * address the driver hands out again, or a new one), in a table that is
 * not growing.
 */
int
alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev,
    unsigned flags)
{
	uint64_t meta = meta_pack(kind, dev, flags), st;
	struct alloc_thread *r;
	struct alloc_slot *s;
	struct alloc_tab *t;
	int grow = 0;

	if (ptr == 0 || dev < 0 || dev >= SHIM_MAX_DEVICES)
		return -1;
	r = op_begin();
	t = op_table();
	if ((s = slot_claim(t, ptr, 0, &grow)) != NULL) {
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (SLOT_STATE(st) == SLOT_FREE &&
		    __atomic_compare_exchange_n(&s->state, &st,
		    SLOT_NEXT(st, SLOT_BUSY), 0, __ATOMIC_ACQUIRE,
		    __ATOMIC_RELAXED)) {
			slot_fill(r, s, SLOT_NEXT(st, SLOT_BUSY), size, meta,
			    (unsigned)dev);
			op_end(r);
			if (__builtin_expect(grow, 0))
				(void)tab_grow(t, 0);
			return 0;
		}
	}
	op_end(r);
	return table_add(ptr, size, meta, (unsigned)dev);
}

/* alloc_table_remove, every case; in r's operation. */
static int __attribute__((noinline))
table_remove(struct alloc_thread *r, struct alloc_tab *t, uint64_t ptr,
    struct alloc_entry *out)
{
	struct alloc_slot *s;
	uint64_t st;
	int next;

	for (;;) {
		if ((s = slot_find(t, ptr, &next)) == NULL) {
			if (!next)
				return 0;
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
			continue;
		}
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (SLOT_STATE(st) == SLOT_MOVED)
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
		else if (SLOT_STATE(st) != SLOT_LIVE)
			return 0;
		else if (slot_take(r, s, st, out))
			return 1;
	}
}

/* The common case first: ptr's slot LIVE, in a table not growing. */
int
alloc_table_remove(uint64_t ptr, struct alloc_entry *out)
{
	struct alloc_thread *r = op_begin();
	struct alloc_tab *t = op_table();
	struct alloc_slot *s;
	uint64_t st;
	int found, next;

	if ((s = slot_find(t, ptr, &next)) != NULL &&
	    SLOT_STATE(st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) ==
	    SLOT_LIVE && slot_take(r, s, st, out))
		found = 1;
	else
		found = table_remove(r, t, ptr, out);
	op_end(r);
	return found;
}

/* ---- the rest of the interface --------------------------------------- */

int
alloc_table_get(uint64_t ptr, struct alloc_entry *out)
{
	struct alloc_thread *r = op_begin();
	struct alloc_tab *t = op_table();
	struct alloc_slot *s;
	unsigned st;
	int next;

	for (;;) {
		if ((s = slot_find(t, ptr, &next)) == NULL) {
			st = SLOT_FREE;
			if (!next)
				break;
		} else if ((st = slot_read(s, out)) != SLOT_MOVED)
			break;
		t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	}
	op_end(r);
	return st == SLOT_LIVE;
}

uint64_t
alloc_table_used(int dev)
{
	struct alloc_thread *r;
	uint64_t u = 0;

	if (dev < 0 || dev >= SHIM_MAX_DEVICES)
		return 0;
	for (r = __atomic_load_n(&thread_all, __ATOMIC_ACQUIRE); r != NULL;
	    r = r->next)
		u += __atomic_load_n(&r->used[dev], __ATOMIC_RELAXED);
	/* Below 0 while a free is counted and its allocation not yet. */
	return (int64_t)u < 0 ? 0 : u;
}

int
alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
    void *arg), void *arg)
{
	struct alloc_entry e;
	struct alloc_tab *t;
	uint64_t i;
	int r = 0;

	/* Nothing moves while the grow lock is held, nor is unmapped. */
	pthread_mutex_lock(&tab_grow_lock);
	t = __atomic_load_n(&tab_cur, __ATOMIC_ACQUIRE);
	for (i = 0; i <= t->mask && r == 0; i++)
		if (slot_read(&t->slots[i], &e) == SLOT_LIVE)
			r = fn(__atomic_load_n(&t->slots[i].key,
			    __ATOMIC_RELAXED), &e, arg);
	pthread_mutex_unlock(&tab_grow_lock);
	return r;
}

void
alloc_table_fork_prepare(void)
{
	pthread_mutex_lock(&tab_grow_lock);
	pthread_mutex_lock(&thread_spare_lock);
}

void
alloc_table_fork_parent(void)
{
	pthread_mutex_unlock(&thread_spare_lock);
	pthread_mutex_unlock(&tab_grow_lock);
}

/*
 * Alone in the child: the parent's tables are unmapped, not walked (no
 * copy of their pages is made), the threads that had records are gone.
 */
void
alloc_table_fork_child(void)
{
	struct alloc_thread *r;
	struct alloc_tab *t;

	if (tab_cur != &tab_static)
		munmap(tab_cur, tab_cur->bytes);
	while ((t = tab_retired) != NULL) {
		tab_retired = t->retired;
		munmap(t, t->bytes);
	}
	if (tab_spare != NULL)
		munmap(tab_spare, tab_spare->bytes);
	tab_spare = NULL;
	memset(tab_static_slots, 0, sizeof(tab_static_slots));
	tab_static.next = NULL;
	tab_static.keys = 0;
	tab_cur = &tab_static;
	for (r = thread_all; r != NULL; r = r->next) {
		r->active = 0;
		memset(r->used, 0, sizeof(r->used));
		r->taken = r == thread_self;
	}
	pthread_mutex_unlock(&thread_spare_lock);
	pthread_mutex_unlock(&tab_grow_lock);
}
