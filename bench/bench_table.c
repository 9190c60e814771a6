/*
 * The shim's allocation table (shim/alloc_table.o, linked as the shim
 * builds it) under load: add/remove pairs with N allocations live, oldest
 * removed first, one thread and several; 1,000 to 1,000,000 live, where
 * an operation should cost the same. An operation is one add or one
 * remove.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "../shim/alloc_table.h"
#include "bench.h"
#include "harness.h"
#include "gpufrac/proto.h"

#define TABLE_REPS	5
#define TABLE_PAIRS	200000		/* per repetition, over all threads */
#define TABLE_THREADS	2
#define TABLE_BASE	0x7f0000000000ull	/* device pointers, 4 KiB apart */

/* One thread's share: its own keys, a FIFO of them live. */
struct table_run {
	uint64_t	*ring;		/* the live keys, oldest at head */
	size_t		 live, head;
	uint64_t	 next;		/* the next key to add */
	long		 pairs;
	int		 failed;
	double		 ns;		/* per operation, last repetition */
	pthread_t	 thread;
};

static int
table_fill(struct table_run *t, size_t live, uint64_t first)
{
	size_t i;

	if ((t->ring = calloc(live, sizeof(*t->ring))) == NULL)
		return -1;
	t->live = live;
	t->head = 0;
	t->next = first;
	for (i = 0; i < live; i++) {
		t->ring[i] = t->next;
		t->next += 4096;
		if (alloc_table_add(t->ring[i], BENCH_SIZE, GF_KIND_MEM, 0, 0, NULL) < 0)
			return -1;
	}
	return 0;
}

static void
table_empty(struct table_run *t)
{
	struct alloc_entry e;
	size_t i;

	for (i = 0; i < t->live; i++)
		(void)alloc_table_remove(t->ring[i], &e);
	free(t->ring);
	t->ring = NULL;
}

static void *
table_pairs(void *arg)
{
	struct table_run *t = arg;
	struct alloc_entry e;
	uint64_t t0 = harness_now_ns();
	long i;

	for (i = 0; i < t->pairs; i++) {
		if (alloc_table_add(t->next, BENCH_SIZE, GF_KIND_MEM, 0, 0, NULL) < 0 ||
		    alloc_table_remove(t->ring[t->head], &e) != 1)
			t->failed = 1;
		t->ring[t->head] = t->next;
		t->next += 4096;
		t->head = (t->head + 1) % t->live;
	}
	t->ns = (double)(harness_now_ns() - t0) / (double)(2 * t->pairs);
	return NULL;
}

/*
 * live allocations split over nthreads; per-operation ns as each thread
 * sees it (the mean over threads), median over repetitions; NAN on failure.
 */
static double
table_run(size_t live, int nthreads)
{
	struct table_run t[TABLE_THREADS];
	double ns[TABLE_REPS];
	int i, rep, started, failed = 0;

	for (i = 0; i < nthreads; i++) {
		t[i] = (struct table_run){ .pairs = TABLE_PAIRS / nthreads };
		failed |= table_fill(&t[i], live / (size_t)nthreads,
		    TABLE_BASE + ((uint64_t)i << 36)) < 0;
	}
	for (rep = 0; rep < TABLE_REPS && !failed; rep++) {
		ns[rep] = 0;
		for (started = 0; started < nthreads; started++)
			if (pthread_create(&t[started].thread, NULL,
			    table_pairs, &t[started]) != 0) {
				failed = 1;
				break;
			}
		for (i = 0; i < started; i++) {
			pthread_join(t[i].thread, NULL);
			failed |= t[i].failed;
			ns[rep] += t[i].ns / nthreads;
		}
	}
	for (i = 0; i < nthreads; i++)
		table_empty(&t[i]);
	return failed ? NAN : stats_median(ns, TABLE_REPS);
}

void
table_measure(struct results *r)
{
	r->table_ns_1k = table_run(1000, 1);
	r->table_ns_100k = table_run(100000, 1);
	r->table_ns_1m = table_run(1000000, 1);
	r->table_threads = TABLE_THREADS;
	r->table_ns_100k_mt = table_run(100000, TABLE_THREADS);
}
