/*
 * Unit tests of shim/alloc_table.c and alloc_tab.c, the lock-free table
 * of live allocations: entries and per-device sums, walks that read only
 * the slots keyed, growth to 200,000
 * entries and churn that must not grow it, threads that come and go, the
 * fork hooks, and a stress of STRESS_THREADS threads adding, looking up
 * and removing keys of their own and keys they share, while the table
 * grows and moves under them, checked exactly at the end. Run under
 * SANITIZE=thread too.
 */
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

/*
 * The Makefile links unit tests with common/ only: build the table here,
 * with its pause points (alloc_table_int.h) live: test_pause.
 */
static void	test_pause(int);
#define TABLE_PAUSE(point)	test_pause(point)
#include "../../shim/alloc_table.c"
#include "../../shim/alloc_tab.c"

#define NDEV		4		/* devices the entries are spread over */
#define STRESS_THREADS	8
#define STRESS_OPS	60000		/* per thread */
#define STRESS_OWN	2000		/* live keys of its own, at most */
#define STRESS_SHARED	512		/* keys every thread removes and adds */
#define STRESS_CLASH	64		/* keys every thread adds over */
#define STRESS_HELD	8		/* shared keys a thread holds at once */
#define GROW_KEYS	200000
#define CHURN_KEYS	300000

/*
 * What an entry says is derived from its key and a 32-bit generation, so
 * that any entry read can be checked whole: no field from another add.
 * Sizes stay below 2^40, their sums far from 2^63.
 */
struct want {
	uint64_t	size;
	uint32_t	kind;
	int		dev;
	unsigned	flags;
};

static uint64_t
key_hash(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> 40;	/* 24 bits */
}

static struct want
want_of(uint64_t key, uint32_t gen)
{
	uint64_t h = key_hash(key);
	struct want w;

	w.size = (uint64_t)(gen & 0xffff) << 24 | h;
	w.kind = gen;
	w.dev = (int)((h + gen) % NDEV);
	w.flags = (unsigned)((h ^ gen ^ gen >> 16) & 0xffff);
	return w;
}

/* The generation of e if it is an entry of key, else -1. */
static int64_t
entry_gen(uint64_t key, const struct alloc_entry *e)
{
	struct want w = want_of(key, e->kind);

	if (w.size != e->size || w.dev != e->dev || w.flags != e->flags)
		return -1;
	return e->kind;
}

static int
add_gen(uint64_t key, uint32_t gen)
{
	struct want w = want_of(key, gen);

	return alloc_table_add(key, w.size, w.kind, w.dev, w.flags, NULL);
}

struct sums {
	uint64_t	 used[NDEV];
	size_t		 n;
};

static int
sums_add(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	struct sums *s = arg;

	(void)ptr;
	if (e->dev < 0 || e->dev >= NDEV)
		return -1;
	s->used[e->dev] += e->size;
	s->n++;
	return 0;
}

/* The table as a walk sees it: entries, and bytes per device. */
static struct sums
table_sums(void)
{
	struct sums s;

	memset(&s, 0, sizeof(s));
	assert_int_equal(alloc_table_walk(sums_add, &s), 0);
	return s;
}

/* The sums agree with the entries, and there are n of them. */
static void
table_check(size_t n)
{
	struct sums s = table_sums();
	int dev;

	assert_int_equal(s.n, n);
	for (dev = 0; dev < NDEV; dev++)
		assert_int_equal(alloc_table_used(dev), s.used[dev]);
}

/*
 * Pauses: a thread that set pause_at stops there once, says so in
 * pause_arrived and waits for pause_go; the others pass. The slots walks
 * read are counted in walked.
 */
#define NPAUSE	2
static __thread int pause_at = -1;
static sem_t pause_arrived[NPAUSE], pause_go[NPAUSE];
static uint64_t walked;

static void
test_pause(int point)
{
	if (point == TP_WALKED)
		__atomic_add_fetch(&walked, 1, __ATOMIC_RELAXED);
	if (point != pause_at)
		return;
	pause_at = -1;
	sem_post(&pause_arrived[point]);
	while (sem_wait(&pause_go[point]) != 0)
		;
}

static void
pause_wait(int point)
{
	while (sem_wait(&pause_arrived[point]) != 0)
		;
}

static void *
paused_add(void *arg)
{
	pause_at = TP_COUNTED;
	return (void *)(intptr_t)add_gen((uint64_t)(uintptr_t)arg, 1);
}

static void *
paused_move(void *arg)
{
	(void)arg;
	pause_at = TP_CLOSED;
	pthread_mutex_lock(&tab_grow_lock);
	(void)tab_move(tab_cur);
	pthread_mutex_unlock(&tab_grow_lock);
	return NULL;
}

/*
 * Issue 26: an add counts its key (A), a move closes the table (M), a
 * second add finds the same empty slot (B) and, being late, seals it and
 * goes on in the next table; then A writes its key. A sealed slot must not
 * take it: a search for B's key that reaches it must go on in the next
 * table, not stop at the empty slot beyond, while the move is under way.
 */
static void
test_seal_race(void **state)
{
	uint64_t k1 = 0x7f0000100000ull, k2 = k1;
	struct alloc_entry e;
	pthread_t a, m;
	void *ra;
	int found, i;

	(void)state;
	for (i = 0; i < NPAUSE; i++) {
		sem_init(&pause_arrived[i], 0, 0);
		sem_init(&pause_go[i], 0, 0);
	}
	do
		k2 += 0x1000;
	while (slot_home(tab_cur, k2) != slot_home(tab_cur, k1));
	assert_int_equal(pthread_create(&a, NULL, paused_add,
	    (void *)(uintptr_t)k1), 0);
	pause_wait(TP_COUNTED);
	assert_int_equal(pthread_create(&m, NULL, paused_move, NULL), 0);
	pause_wait(TP_CLOSED);
	assert_int_equal(add_gen(k2, 2), 0);
	sem_post(&pause_go[TP_COUNTED]);
	assert_int_equal(pthread_join(a, &ra), 0);
	assert_int_equal((intptr_t)ra, 0);
	/* The move has not moved a slot yet; it goes on before any assert. */
	found = alloc_table_remove(k2, &e);
	sem_post(&pause_go[TP_CLOSED]);
	assert_int_equal(pthread_join(m, NULL), 0);
	assert_int_equal(found, 1);
	assert_int_equal(entry_gen(k2, &e), 2);
	assert_int_equal(alloc_table_get(k2, &e), 0);
	assert_int_equal(alloc_table_remove(k1, &e), 1);
	assert_int_equal(entry_gen(k1, &e), 1);
	table_check(0);
}

static int
table_empty(void **state)
{
	(void)state;
	return table_sums().n == 0 ? 0 : -1;
}

static void
test_basic(void **state)
{
	struct alloc_entry e;

	(void)state;
	table_check(0);
	assert_int_equal(alloc_table_add(0x7f0000001000ull, 4096, 1, 0, 0,
	    NULL), 0);
	assert_int_equal(alloc_table_add(0x7f0000002000ull, 8192, 2, 1,
	    ALLOC_LEASED, NULL), 0);
	assert_int_equal(alloc_table_used(0), 4096);
	assert_int_equal(alloc_table_used(1), 8192);
	assert_int_equal(alloc_table_get(0x7f0000002000ull, &e), 1);
	assert_int_equal(e.size, 8192);
	assert_int_equal(e.kind, 2);
	assert_int_equal(e.dev, 1);
	assert_int_equal(e.flags, ALLOC_LEASED);
	assert_int_equal(alloc_table_get(0x7f0000003000ull, &e), 0);
	table_check(2);

	/* Freed behind the shim's back: the new entry replaces it. */
	assert_int_equal(alloc_table_add(0x7f0000001000ull, 512, 3, 2, 0, &e),
	    1);
	assert_int_equal(e.size, 4096);
	assert_int_equal(e.dev, 0);
	assert_int_equal(alloc_table_used(0), 0);
	assert_int_equal(alloc_table_used(2), 512);
	table_check(2);

	assert_int_equal(alloc_table_remove(0x7f0000001000ull, &e), 1);
	assert_int_equal(e.size, 512);
	assert_int_equal(e.dev, 2);
	assert_int_equal(alloc_table_remove(0x7f0000001000ull, &e), 0);
	assert_int_equal(alloc_table_remove(0x7f0000002000ull, &e), 1);
	assert_int_equal(e.flags, ALLOC_LEASED);
	table_check(0);

	/* Refused: no pointer, no such device. */
	assert_int_equal(alloc_table_add(0, 1, 1, 0, 0, NULL), -1);
	assert_int_equal(alloc_table_add(0x1000, 1, 1, -1, 0, NULL), -1);
	assert_int_equal(alloc_table_add(0x1000, 1, 1, SHIM_MAX_DEVICES, 0,
	    NULL), -1);
	assert_int_equal(alloc_table_remove(0, &e), 0);
	assert_int_equal(alloc_table_used(-1), 0);
	assert_int_equal(alloc_table_used(SHIM_MAX_DEVICES), 0);
	table_check(0);
}

static int
walk_stop(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	int *n = arg;

	(void)ptr, (void)e;
	return ++*n == 3 ? 42 : 0;
}

static void
test_walk_stops(void **state)
{
	struct alloc_entry e;
	uint64_t i;
	int n = 0;

	(void)state;
	for (i = 1; i <= 10; i++)
		assert_int_equal(add_gen(i << 12, i), 0);
	assert_int_equal(alloc_table_walk(walk_stop, &n), 42);
	assert_int_equal(n, 3);
	for (i = 1; i <= 10; i++)
		assert_int_equal(alloc_table_remove(i << 12, &e), 1);
}

/* Slots a walk of the table reads (table_sums). */
static uint64_t
walk_reads(size_t live)
{
	uint64_t before = __atomic_load_n(&walked, __ATOMIC_RELAXED);

	assert_int_equal(table_sums().n, live);
	return __atomic_load_n(&walked, __ATOMIC_RELAXED) - before;
}

/*
 * A walk reads the slots keyed since the table was made, not the whole
 * table: a context's end walks it, and should cost what the program
 * holds, nothing when it holds nothing.
 */
static void
test_walk_keyed(void **state)
{
	struct alloc_entry e;
	uint64_t base, i;

	(void)state;
	base = walk_reads(0);
	for (i = 1; i <= 10; i++)
		assert_int_equal(add_gen(0x7d0000000000ull + (i << 12), i), 0);
	assert_int_equal(walk_reads(10), base + 10);
	/* The keys of removed entries stay until the table moves. */
	for (i = 1; i <= 5; i++)
		assert_int_equal(alloc_table_remove(0x7d0000000000ull +
		    (i << 12), &e), 1);
	assert_int_equal(walk_reads(5), base + 10);
	/* An address the driver hands out again keys nothing new. */
	assert_int_equal(add_gen(0x7d0000000000ull + (1 << 12), 11), 0);
	assert_int_equal(walk_reads(6), base + 10);
	for (i = 1; i <= 10; i++)
		assert_int_equal(alloc_table_remove(0x7d0000000000ull +
		    (i << 12), &e), i == 1 || i > 5);
	/* Moved with nothing live: a walk reads no slot at all. */
	pthread_mutex_lock(&tab_grow_lock);
	assert_int_equal(tab_move(tab_cur), 0);
	pthread_mutex_unlock(&tab_grow_lock);
	assert_int_equal(walk_reads(0), 0);
	for (i = 1; i <= 3; i++)
		assert_int_equal(add_gen(0x7d0000000000ull + (i << 12), i), 0);
	assert_int_equal(walk_reads(3), 3);
	for (i = 1; i <= 3; i++)
		assert_int_equal(alloc_table_remove(0x7d0000000000ull +
		    (i << 12), &e), 1);
}

/* 200,000 live: every one there, whatever the table moved through. */
static void
test_grow(void **state)
{
	struct alloc_entry e;
	uint64_t i, key, want[NDEV] = { 0 };

	(void)state;
	for (i = 0; i < GROW_KEYS; i++) {
		key = 0x7e0000000000ull + i * 512;
		assert_int_equal(add_gen(key, i), 0);
		want[want_of(key, i).dev] += want_of(key, i).size;
	}
	for (i = 0; i < NDEV; i++)
		assert_int_equal(alloc_table_used((int)i), want[i]);
	table_check(GROW_KEYS);
	for (i = 0; i < GROW_KEYS; i++) {
		key = 0x7e0000000000ull + i * 512;
		assert_int_equal(alloc_table_get(key, &e), 1);
		assert_int_equal(entry_gen(key, &e), (int64_t)i);
	}
	for (i = 0; i < GROW_KEYS; i += 2)
		assert_int_equal(alloc_table_remove(0x7e0000000000ull + i * 512,
		    &e), 1);
	table_check(GROW_KEYS / 2);
	for (i = 0; i < GROW_KEYS; i++)
		assert_int_equal(alloc_table_remove(0x7e0000000000ull + i * 512,
		    &e), (int)(i & 1));
	table_check(0);
	/* Alone: every table it left is unmapped by now. */
	assert_null(tab_retired);
}

/*
 * New addresses all the time, few live: the keys of removed entries are
 * dropped when the table moves, and it does not grow.
 */
static void
test_churn(void **state)
{
	uint64_t cap = tab_cur->mask + 1, i, key;
	struct alloc_entry e;

	(void)state;
	for (i = 0; i < CHURN_KEYS; i++) {
		key = 0x7d0000000000ull + i * 4096;
		assert_int_equal(add_gen(key, i), 0);
		if (i >= 100)
			assert_int_equal(alloc_table_remove(key - 100 * 4096,
			    &e), 1);
	}
	table_check(100);
	assert_int_equal(tab_cur->mask + 1, cap);
	for (i = CHURN_KEYS - 100; i < CHURN_KEYS; i++)
		assert_int_equal(alloc_table_remove(0x7d0000000000ull +
		    i * 4096, &e), 1);
	table_check(0);
	assert_null(tab_retired);
}

static void *
thread_adds(void *arg)
{
	uint64_t *base = arg, i;

	for (i = 0; i < 100; i++)
		if (alloc_table_add(*base + i * 4096, 1000, 1, 1, 0, NULL) < 0)
			return arg;
	return NULL;
}

static void *
thread_removes(void *arg)
{
	uint64_t *base = arg, i;
	struct alloc_entry e;

	for (i = 0; i < 100; i++)
		if (alloc_table_remove(*base + i * 4096, &e) != 1)
			return arg;
	return NULL;
}

static size_t
thread_records(void)
{
	struct alloc_thread *r;
	size_t n = 0;

	for (r = thread_all; r != NULL; r = r->next)
		n++;
	return n;
}

/*
 * What a thread added stays counted after it exits, and its record is
 * taken by the threads that come after.
 */
static void
test_thread_exit(void **state)
{
	uint64_t base = 0x7c0000000000ull;
	pthread_t t;
	size_t records;
	void *r;
	int i;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, thread_adds, &base), 0);
	pthread_join(t, &r);
	assert_null(r);
	assert_int_equal(alloc_table_used(1), 100 * 1000);
	assert_int_equal(pthread_create(&t, NULL, thread_removes, &base), 0);
	pthread_join(t, &r);
	assert_null(r);
	assert_int_equal(alloc_table_used(1), 0);
	records = thread_records();
	for (i = 0; i < 20; i++) {
		assert_int_equal(pthread_create(&t, NULL, thread_adds, &base),
		    0);
		pthread_join(t, &r);
		assert_null(r);
		assert_int_equal(pthread_create(&t, NULL, thread_removes,
		    &base), 0);
		pthread_join(t, &r);
		assert_null(r);
	}
	assert_int_equal(thread_records(), records);
	table_check(0);
}

/* ---- the stress ------------------------------------------------------ */

struct stress_shared {
	uint64_t	 key[STRESS_SHARED];
	uint32_t	 gen[STRESS_SHARED];	/* written by its holder */
	uint64_t	 clash[STRESS_CLASH];
	pthread_barrier_t start;
};

struct stress {
	struct stress_shared *sh;
	int		 id;
	uint64_t	 rng;
	uint64_t	 own[STRESS_OWN];	/* live keys of its own */
	uint32_t	 own_gen[STRESS_OWN];
	size_t		 nown;
	uint64_t	 next;			/* its next new key */
	size_t		 held[STRESS_HELD];	/* shared keys taken out */
	size_t		 nheld;
	uint32_t	 gen;
	char		 why[160];		/* the first failure */
	pthread_t	 thread;
};

static uint64_t
stress_rand(struct stress *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static void
stress_fail(struct stress *s, const char *what, uint64_t key)
{
	if (s->why[0] == '\0')
		snprintf(s->why, sizeof(s->why), "thread %d: %s, key 0x%llx",
		    s->id, what, (unsigned long long)key);
}

/* Its own keys: a model it alone changes says exactly what to expect. */
static void
stress_own(struct stress *s, uint64_t r)
{
	struct alloc_entry e;
	size_t i;
	uint64_t key;

	if (s->nown == 0 || (r % 3 == 0 && s->nown < STRESS_OWN)) {
		key = s->next;
		s->next += 512;
		if (add_gen(key, ++s->gen) < 0)
			stress_fail(s, "add failed", key);
		else {
			s->own[s->nown] = key;
			s->own_gen[s->nown++] = s->gen;
		}
		return;
	}
	i = (size_t)(r >> 8) % s->nown;
	key = s->own[i];
	if (r % 3 == 1) {
		if (alloc_table_get(key, &e) != 1)
			stress_fail(s, "own key not found", key);
		else if (entry_gen(key, &e) != (int64_t)s->own_gen[i])
			stress_fail(s, "own key has a wrong entry", key);
		else if (alloc_table_get(s->next, &e) != 0)
			stress_fail(s, "a key never added is found", s->next);
		return;
	}
	if (alloc_table_remove(key, &e) != 1)
		stress_fail(s, "own key not removed", key);
	else if (entry_gen(key, &e) != (int64_t)s->own_gen[i])
		stress_fail(s, "own key removed a wrong entry", key);
	else if (alloc_table_remove(key, &e) != 0)
		stress_fail(s, "own key removed twice", key);
	s->own[i] = s->own[--s->nown];
	s->own_gen[i] = s->own_gen[s->nown];
}

/*
 * Shared keys: whoever removes one holds it until it adds it back; the
 * others look it up meanwhile and find a whole entry, or nothing.
 */
static void
stress_shared(struct stress *s, uint64_t r)
{
	struct stress_shared *sh = s->sh;
	struct alloc_entry e;
	size_t i = (size_t)(r >> 8) % STRESS_SHARED;
	uint64_t key = sh->key[i];
	int64_t gen;

	if (s->nheld == STRESS_HELD || (s->nheld > 0 && r % 4 == 0)) {
		i = s->held[--s->nheld];
		sh->gen[i] = (uint32_t)s->id << 28 | ++s->gen;
		if (add_gen(sh->key[i], sh->gen[i]) < 0)
			stress_fail(s, "shared key not added back",
			    sh->key[i]);
		return;
	}
	if (r % 4 == 1) {
		if (alloc_table_get(key, &e) == 1 && entry_gen(key, &e) < 0)
			stress_fail(s, "shared key has a torn entry", key);
		return;
	}
	if (alloc_table_remove(key, &e) != 1)
		return;		/* someone else holds it */
	if ((gen = entry_gen(key, &e)) < 0 || gen != (int64_t)sh->gen[i])
		stress_fail(s, "shared key removed a wrong entry", key);
	s->held[s->nheld++] = i;
}

/*
 * Keys every thread adds over at once: each add replaces the entry there
 * (not found while it does), and one whole entry each is left.
 */
static void
stress_clash(struct stress *s, uint64_t r)
{
	uint64_t key = s->sh->clash[(r >> 8) % STRESS_CLASH];
	struct alloc_entry e;

	if (add_gen(key, (uint32_t)s->id << 28 | ++s->gen) < 0)
		stress_fail(s, "clash key not added", key);
	if (alloc_table_get(key, &e) == 1 && entry_gen(key, &e) < 0)
		stress_fail(s, "clash key torn", key);
}

static void *
stress_run(void *arg)
{
	struct stress *s = arg;
	uint64_t r;
	int i;

	pthread_barrier_wait(&s->sh->start);
	for (i = 0; i < STRESS_OPS && s->why[0] == '\0'; i++) {
		r = stress_rand(s);
		switch (r % 8) {
		case 0: case 1: case 2: case 3:
			stress_own(s, r >> 3);
			break;
		case 4: case 5: case 6:
			stress_shared(s, r >> 3);
			break;
		default:
			stress_clash(s, r >> 3);
			break;
		}
	}
	while (s->nheld > 0)
		stress_shared(s, 0);	/* every shared key back */
	return NULL;
}

/* What the walk shows: every entry, sorted by key after. */
struct seen {
	uint64_t	 key;
	int64_t		 gen;
};

struct stress_check {
	struct seen	*v;
	size_t		 n, cap;
	uint64_t	 used[NDEV];
};

static int
stress_walk(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	struct stress_check *c = arg;

	if (c->n == c->cap || e->dev < 0 || e->dev >= NDEV)
		return -1;
	c->v[c->n].key = ptr;
	c->v[c->n++].gen = entry_gen(ptr, e);
	c->used[e->dev] += e->size;
	return 0;
}

static int
seen_cmp(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* key's generation as the walk saw it; -2 if it did not. */
static int64_t
seen_gen(const struct stress_check *c, uint64_t key)
{
	struct seen k = { key, 0 }, *f;

	f = bsearch(&k, c->v, c->n, sizeof(*c->v), seen_cmp);
	return f == NULL ? -2 : f->gen;
}

/*
 * The table after the stress: exactly the entries expected, each once
 * and whole, and the sums theirs.
 */
static void
stress_check(struct stress *s, const struct stress_shared *sh, size_t want)
{
	struct stress_check c;
	size_t i;
	int t;

	memset(&c, 0, sizeof(c));
	c.cap = want + 1;
	assert_non_null(c.v = calloc(c.cap, sizeof(*c.v)));
	assert_int_equal(alloc_table_walk(stress_walk, &c), 0);
	assert_int_equal(c.n, want);
	qsort(c.v, c.n, sizeof(*c.v), seen_cmp);
	for (i = 1; i < c.n; i++)
		if (c.v[i].key == c.v[i - 1].key)
			fail_msg("0x%llx is in the table twice",
			    (unsigned long long)c.v[i].key);
	for (i = 0; i < STRESS_SHARED; i++)
		assert_int_equal(seen_gen(&c, sh->key[i]), (int64_t)sh->gen[i]);
	for (i = 0; i < STRESS_CLASH; i++)
		assert_true(seen_gen(&c, sh->clash[i]) >= 0);
	for (t = 0; t < STRESS_THREADS; t++)
		for (i = 0; i < s[t].nown; i++)
			assert_int_equal(seen_gen(&c, s[t].own[i]),
			    (int64_t)s[t].own_gen[i]);
	for (i = 0; i < NDEV; i++)
		assert_int_equal(alloc_table_used((int)i), c.used[i]);
	free(c.v);
}

static void
test_stress(void **state)
{
	static struct stress s[STRESS_THREADS];
	static struct stress_shared sh;
	struct alloc_entry e;
	size_t i, want = STRESS_SHARED + STRESS_CLASH;
	int t;

	(void)state;
	table_check(0);
	memset(&sh, 0, sizeof(sh));
	for (i = 0; i < STRESS_SHARED; i++) {
		sh.key[i] = 0x7b0000000000ull + i * 4096;
		assert_int_equal(add_gen(sh.key[i], 0), 0);
	}
	for (i = 0; i < STRESS_CLASH; i++)
		sh.clash[i] = 0x7a0000000000ull + i * 2048;
	assert_int_equal(pthread_barrier_init(&sh.start, NULL,
	    STRESS_THREADS), 0);
	for (t = 0; t < STRESS_THREADS; t++) {
		memset(&s[t], 0, sizeof(s[t]));
		s[t].sh = &sh;
		s[t].id = t;
		s[t].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
		s[t].next = (uint64_t)(t + 1) << 40;
		assert_int_equal(pthread_create(&s[t].thread, NULL, stress_run,
		    &s[t]), 0);
	}
	for (t = 0; t < STRESS_THREADS; t++)
		pthread_join(s[t].thread, NULL);
	pthread_barrier_destroy(&sh.start);
	for (t = 0; t < STRESS_THREADS; t++) {
		if (s[t].why[0] != '\0')
			fail_msg("%s", s[t].why);
		want += s[t].nown;
	}

	stress_check(s, &sh, want);

	for (i = 0; i < STRESS_SHARED; i++)
		assert_int_equal(alloc_table_remove(sh.key[i], &e), 1);
	for (i = 0; i < STRESS_CLASH; i++)
		assert_int_equal(alloc_table_remove(sh.clash[i], &e), 1);
	for (t = 0; t < STRESS_THREADS; t++)
		for (i = 0; i < s[t].nown; i++)
			assert_int_equal(alloc_table_remove(s[t].own[i], &e),
			    1);
	table_check(0);
}

/* ---- fork ------------------------------------------------------------ */

struct busy {
	uint64_t	 base;
	int		 stop;
	int		 failed;
	pthread_t	 thread;
};

/* Adds and removes of its own keys until told to stop; all gone after. */
static void *
busy_run(void *arg)
{
	struct busy *b = arg;
	struct alloc_entry e;
	uint64_t i, j;

	for (i = 0; !__atomic_load_n(&b->stop, __ATOMIC_RELAXED); i++)
		if (add_gen(b->base + i * 512, i) < 0 ||
		    (i >= 10 && alloc_table_remove(b->base + (i - 10) * 512,
		    &e) != 1))
			b->failed = 1;
	for (j = i > 10 ? i - 10 : 0; j < i; j++)
		if (alloc_table_remove(b->base + j * 512, &e) != 1)
			b->failed = 1;
	return NULL;
}

/* The child, alone: an empty table that works, growth included. */
static int
fork_child_check(void)
{
	struct alloc_entry e;
	uint64_t i;

	alloc_table_fork_child();
	if (table_sums().n != 0 || alloc_table_used(0) != 0 ||
	    alloc_table_get(0x790000000000ull, &e) != 0)
		return 1;
	for (i = 0; i < 5000; i++)
		if (add_gen(0x780000000000ull + i * 512, i) < 0)
			return 2;
	if (table_sums().n != 5000)
		return 3;
	for (i = 0; i < 5000; i++)
		if (alloc_table_remove(0x780000000000ull + i * 512, &e) != 1)
			return 4;
	return alloc_table_used(0) == 0 ? 0 : 5;
}

/*
 * fork(2) while threads add and remove: the child starts empty, the
 * parent keeps what it has.
 */
static void
test_fork(void **state)
{
	struct busy b[4];
	struct alloc_entry e;
	uint64_t i;
	int t, status;
	pid_t pid;

	(void)state;
	for (i = 0; i < 3000; i++)
		assert_int_equal(add_gen(0x790000000000ull + i * 512, i), 0);
	for (t = 0; t < 4; t++) {
		memset(&b[t], 0, sizeof(b[t]));
		b[t].base = (uint64_t)(t + 1) << 36;
		assert_int_equal(pthread_create(&b[t].thread, NULL, busy_run,
		    &b[t]), 0);
	}
	usleep(20000);
	alloc_table_fork_prepare();
	if ((pid = fork()) == 0)
		_exit(fork_child_check());
	alloc_table_fork_parent();
	assert_true(pid > 0);
	usleep(20000);
	for (t = 0; t < 4; t++)
		__atomic_store_n(&b[t].stop, 1, __ATOMIC_RELAXED);
	for (t = 0; t < 4; t++) {
		pthread_join(b[t].thread, NULL);
		assert_int_equal(b[t].failed, 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	table_check(3000);
	for (i = 0; i < 3000; i++) {
		assert_int_equal(alloc_table_remove(0x790000000000ull + i * 512,
		    &e), 1);
		assert_int_equal(entry_gen(0x790000000000ull + i * 512, &e),
		    (int64_t)i);
	}
	table_check(0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_basic, table_empty),
		cmocka_unit_test_teardown(test_walk_stops, table_empty),
		cmocka_unit_test_teardown(test_walk_keyed, table_empty),
		cmocka_unit_test_teardown(test_seal_race, table_empty),
		cmocka_unit_test_teardown(test_stress, table_empty),
		cmocka_unit_test_teardown(test_grow, table_empty),
		cmocka_unit_test_teardown(test_churn, table_empty),
		cmocka_unit_test_teardown(test_thread_exit, table_empty),
		cmocka_unit_test_teardown(test_fork, table_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
