/*
 * The live allocation table, lock-free: one open-addressing hash table of
 * slots keyed by device pointer (linear probing), grown by moving to a
 * larger one while it stays in use, and per-thread records that hold each
 * thread's share of the per-device sums.
 *
 * Slots. A slot's key word is set once, by CAS from 0: to a key, or to
 * SLOT_SEALED by a move; it stays while the table lives, so a key has one
 * slot and no probe run is ever broken. A sealed slot never holds a key:
 * a search that reaches it goes on in the next table. Each slot keyed is
 * listed in the table's keyed[] as it is, so that a walk reads those and
 * not the empty ones (alloc_table_walk). What the slot holds is its state
 * word: a sequence number and FREE (nothing: never used, or removed),
 * BUSY (an add is writing it), LIVE, or MOVED (look in the next table).
 * Every change of state bumps the sequence, so a CAS on the state, or
 * reading it again unchanged, proves that the size and kind read in
 * between belong together (a seqlock). A lookup or remove
 * that meets BUSY takes the entry as not there yet; an add that meets it
 * takes its own entry as replaced by the other's.
 *
 * Growth. The keys of removed entries stay, so a table fills with keys even
 * when few are live. Past TAB_GROW keys the adding thread builds the next
 * table, sized for what is live (never smaller), under a mutex: one grower
 * at a time. It closes the old table's key count, and reserves room in the
 * new table for every key counted before: an add that counts its key after
 * does not key a slot but seals it. Then it moves each slot: an empty one
 * is sealed, unless an add keys it first; a keyed LIVE one is copied, then
 * CASed to MOVED (copied again if it changed meanwhile); a keyed FREE one
 * is CASed to MOVED.
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
#include <stdlib.h>
#include <string.h>

#include "alloc_table_int.h"
#include "log.h"

struct alloc_thread thread_spare;
pthread_mutex_t thread_spare_lock = PTHREAD_MUTEX_INITIALIZER;
struct alloc_thread *thread_all = &thread_spare;
__thread struct alloc_thread *thread_self SHIM_TLS;
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

/*
 * key's slot in t; or NULL, with *next set if the search goes on in
 * t->next (the run ends at a sealed slot: t is being moved). Every table
 * has empty slots (TAB_FULL), so the search ends.
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
		if (k == 0 || k == SLOT_SEALED)
			break;
	}
	/*
	 * The end of key's run: key is in no slot beyond. Not sealed: no
	 * add of key has passed it either (it seals the run's end first).
	 */
	*next = k == SLOT_SEALED;
	return NULL;
}

/*
 * slot_claim at the end of key's run, slot i: keyed with key, or sealed
 * and MOVED. One CAS of the key word decides which, so a sealed slot never
 * takes a key and a keyed one is always moved. The count comes first: a
 * key counted before the table is closed has room in the next one (the
 * move reserves it), one counted after is not written here.
 */
struct alloc_slot * __attribute__((noinline))
slot_claim_empty(struct alloc_tab *t, uint64_t i, uint64_t key, int mover,
    int *grow)
{
	struct alloc_slot *s;
	uint64_t k, keys;

	for (;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
again:
		if (k == key)
			return s;
		if (k == SLOT_SEALED) {
			slot_sealed(s);
			return s;
		}
		if (k != 0)
			continue;
		keys = __atomic_add_fetch(&t->keys, 1, __ATOMIC_ACQ_REL);
		TABLE_PAUSE(TP_COUNTED);
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
			slot_keyed(t, i);
			*grow = keys > TAB_GROW(t->mask + 1);
			return s;
		} else
			__atomic_sub_fetch(&t->keys, 1, __ATOMIC_RELAXED);
		/* Keyed or sealed meanwhile: look at it again. */
		k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		goto again;
	}
}

/*
 * What s holds: its state, and in *e its entry if SLOT_LIVE. The second
 * read of the state is a read-modify-write, ordered after the entry's
 * loads as slot_take's CAS is: they were not of an add that came after.
 */
unsigned
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
table_add(uint64_t ptr, uint64_t size, uint64_t meta, unsigned dev,
    struct alloc_entry *oldp)
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
	if (stale) {
		log_debug("allocation 0x%llx replaces a stale entry",
		    (unsigned long long)ptr);
		if (oldp != NULL)
			*oldp = old;
	}
	if (grow)
		(void)tab_grow(t, 0);
	return stale;
}

/*
 * The common case first: ptr's slot, found or claimed, is empty (an
 * address the driver hands out again, or a new one), in a table that is
 * not growing.
 */
int
alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev,
    unsigned flags, struct alloc_entry *old)
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
	return table_add(ptr, size, meta, (unsigned)dev, old);
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
