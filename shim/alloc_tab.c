/*
 * The allocation table's tables (alloc_table_int.h): the first one static,
 * the next ones mapped, each made for what is live, moved into while in
 * use, retired and unmapped once no operation can be in it; walked under
 * the grow lock; and forgotten in a forked child.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_table_int.h"

static struct alloc_slot tab_static_slots[1 << TAB_STATIC_BITS]
    __attribute__((aligned(64)));
static uint32_t tab_static_keyed[1 << TAB_STATIC_BITS];
static struct alloc_tab tab_static = {
	.slots = tab_static_slots,
	.keyed = tab_static_keyed,
	.mask = (1 << TAB_STATIC_BITS) - 1,
	.shift = 64 - TAB_STATIC_BITS,
};
struct alloc_tab *tab_cur = &tab_static;
uint64_t tab_epoch;
static struct alloc_tab *tab_retired;	/* mapped ones; grow lock */
static struct alloc_tab *tab_spare;	/* for the next move; grow lock */
static pthread_mutex_t tab_grow_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A new, empty table of 2^bits slots; NULL if out of memory. Grow lock
 * held. The spare one if it has that size: a table whose entries come
 * and go at new addresses moves between two of the same size, and pages
 * in use are cleared faster than new ones are faulted in.
 */
static struct alloc_tab *
tab_new(unsigned bits)
{
	size_t bytes = sizeof(struct alloc_tab) + ((size_t)1 << bits) *
	    (sizeof(struct alloc_slot) + sizeof(uint32_t));
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
	t->keyed = (uint32_t *)(t->slots + ((size_t)1 << bits));
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
		/* Empty: sealed, unless an add keys it first. */
		if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == 0 &&
		    slot_seal(s))
			return;
		switch (SLOT_STATE(st)) {
		case SLOT_MOVED:
			return;		/* sealed by an add */
		case SLOT_BUSY:
			sched_yield();	/* an add is writing it */
			continue;
		case SLOT_FREE:
			/* Keyed: an add that finds it MOVED goes on in n. */
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
	while (bits < TAB_MAX_BITS && ((uint64_t)1 << bits) < 4 * live)
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
	TABLE_PAUSE(TP_CLOSED);
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

/* A move into t that kept the room may have ended meanwhile: look again. */
int
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

int
alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
    void *arg), void *arg)
{
	struct alloc_entry e;
	struct alloc_slot *s;
	struct alloc_tab *t;
	uint64_t i, n;
	uint32_t k;
	int r = 0;

	/* Nothing moves while the grow lock is held, nor is unmapped. */
	pthread_mutex_lock(&tab_grow_lock);
	t = __atomic_load_n(&tab_cur, __ATOMIC_ACQUIRE);
	/*
	 * The keyed slots only: a walk costs what the table has held since
	 * it was made, not its size (each context's end walks it). A 0 is
	 * a slot being listed: its add is under way, nothing is there yet.
	 */
	n = __atomic_load_n(&t->nkeyed, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && r == 0; i++) {
		if ((k = __atomic_load_n(&t->keyed[i], __ATOMIC_ACQUIRE)) == 0)
			continue;
		s = &t->slots[k - 1];
		TABLE_PAUSE(TP_WALKED);
		if (slot_read(s, &e) == SLOT_LIVE)
			r = fn(__atomic_load_n(&s->key, __ATOMIC_RELAXED), &e,
			    arg);
	}
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
	memset(tab_static_keyed, 0, sizeof(tab_static_keyed));
	tab_static.next = NULL;
	tab_static.keys = 0;
	tab_static.nkeyed = 0;
	tab_cur = &tab_static;
	for (r = thread_all; r != NULL; r = r->next) {
		r->active = 0;
		memset(r->used, 0, sizeof(r->used));
		r->taken = r == thread_self;
	}
	pthread_mutex_unlock(&thread_spare_lock);
	pthread_mutex_unlock(&tab_grow_lock);
}
