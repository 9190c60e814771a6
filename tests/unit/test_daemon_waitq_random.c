/*
 * daemon/waitq.c, randomized: adds, cancels, serves and expires over three
 * devices, checked against a plain array model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/waitq.h"
#include "waitq_check.h"

/* A deterministic generator for the randomized test. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Random adds, cancels, serves and expires over three devices, checked
 * against a plain array model: the same waiters, in the same rank order,
 * the same earliest deadline, the same grants.
 */
struct model {
	struct waitq_waiter *w;
	uint32_t	 seq;
	size_t		 dev;
	uint64_t	 bytes;
	int32_t		 prio;
	uint64_t	 arrival;
	uint64_t	 deadline;
	int		 live;
};

static struct model models[2000];
static size_t nmodels;

static int
model_cmp(const void *pa, const void *pb)
{
	const struct model *a = pa, *b = pb;

	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

struct served {
	uint64_t	 avail;
	uint32_t	 seqs[2000];
	size_t		 n;
};

static int
fits_random(void *arg, const struct waitq_waiter *w)
{
	return w->bytes <= ((struct served *)arg)->avail;
}

static void
grant_random(void *arg, const struct waitq_waiter *w)
{
	struct served *s = arg;

	s->avail -= w->bytes;
	s->seqs[s->n++] = w->seq;
}

static void
expire_random(void *arg, const struct waitq_waiter *w)
{
	struct served *s = arg;

	s->seqs[s->n++] = w->seq;
}

static struct model *
model_find(uint32_t seq)
{
	size_t i;

	for (i = 0; i < nmodels; i++)
		if (models[i].seq == seq)
			return &models[i];
	return NULL;
}

/* What serve must grant on dev with avail bytes, by the barrier rule. */
static size_t
model_serve(size_t dev, uint64_t avail, uint32_t *seqs)
{
	struct model sorted[2000];
	size_t i, n = 0, k = 0;
	int blocked = 0;
	int32_t barrier = 0;

	for (i = 0; i < nmodels; i++)
		if (models[i].live && models[i].dev == dev)
			sorted[n++] = models[i];
	qsort(sorted, n, sizeof(*sorted), model_cmp);
	for (i = 0; i < n; i++) {
		if (blocked && sorted[i].prio < barrier)
			break;
		if (sorted[i].bytes > avail) {
			if (!blocked) {
				blocked = 1;
				barrier = sorted[i].prio;
			}
			continue;
		}
		avail -= sorted[i].bytes;
		seqs[k++] = sorted[i].seq;
	}
	return k;
}

static void
model_check(const struct waitq *q)
{
	struct model sorted[2000];
	uint64_t earliest = 0;
	size_t dev, i, n;
	const struct waitq_waiter *w;

	for (i = 0; i < nmodels; i++)
		if (models[i].live && models[i].deadline != 0 &&
		    (earliest == 0 || models[i].deadline < earliest))
			earliest = models[i].deadline;
	assert_int_equal(waitq_next_deadline(q), earliest);
	for (dev = 0; dev < 3; dev++) {
		for (i = n = 0; i < nmodels; i++)
			if (models[i].live && models[i].dev == dev)
				sorted[n++] = models[i];
		qsort(sorted, n, sizeof(*sorted), model_cmp);
		for (i = 0, w = waitq_next(q, dev, NULL); i < n;
		    i++, w = waitq_next(q, dev, w)) {
			assert_non_null(w);
			assert_int_equal(w->seq, sorted[i].seq);
		}
		assert_null(w);
	}
	assert_invariants(q);
}

/* One run: the queue, what a serve or an expire gave, the clock. */
struct run {
	struct waitq	 q;
	struct served	*s;
	uint64_t	 seed, now;
	uint32_t	 seq;
};

static void
random_add(struct run *r)
{
	struct model *m = &models[nmodels++];

	m->seq = ++r->seq;
	m->dev = rnd(&r->seed) % 3;
	m->bytes = 1 + rnd(&r->seed) % 8;
	m->prio = (int32_t)(rnd(&r->seed) % 5) - 2;
	m->deadline = rnd(&r->seed) % 3 ? r->now + 1 +
	    rnd(&r->seed) % 200 : 0;
	m->w = waitq_add(&r->q, NULL, m->seq, m->dev, m->bytes, m->prio,
	    m->deadline);
	assert_non_null(m->w);
	m->arrival = m->w->arrival;
	m->live = 1;
}

static void
random_cancel(struct run *r)
{
	struct model *m = &models[rnd(&r->seed) % nmodels];

	if (m->live) {
		waitq_cancel(&r->q, m->w);
		m->live = 0;
	}
}

static void
random_serve(struct run *r)
{
	uint32_t want[2000];
	size_t dev = rnd(&r->seed) % 3, i, n;

	r->s->avail = rnd(&r->seed) % 12;
	r->s->n = 0;
	n = model_serve(dev, r->s->avail, want);
	assert_int_equal(waitq_serve(&r->q, dev, fits_random, grant_random,
	    r->s), n);
	assert_int_equal(r->s->n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(r->s->seqs[i], want[i]);
		model_find(want[i])->live = 0;
	}
}

static void
random_expire(struct run *r)
{
	struct model *m;
	size_t i;

	r->s->n = 0;
	waitq_expire(&r->q, r->now, expire_random, r->s);
	for (i = 0; i < r->s->n; i++) {
		m = model_find(r->s->seqs[i]);
		assert_true(m->live);
		assert_true(m->deadline != 0 && m->deadline <= r->now);
		m->live = 0;
	}
	for (i = 0; i < nmodels; i++)
		assert_false(models[i].live && models[i].deadline != 0 &&
		    models[i].deadline <= r->now);
}

static void
test_random(void **state)
{
	struct run r = { .seed = 0x9e3779b97f4a7c15ull };
	uint64_t pick;
	size_t step;

	(void)state;
	r.s = test_malloc(sizeof(*r.s));
	waitq_init(&r.q, NULL, NULL);
	nmodels = 0;
	for (step = 0; step < 3000; step++) {
		pick = rnd(&r.seed) % 100;
		r.now += rnd(&r.seed) % 5;
		if (pick < 50 && nmodels < 2000)
			random_add(&r);
		else if (pick < 65 && nmodels > 0)
			random_cancel(&r);
		else if (pick < 90)
			random_serve(&r);
		else
			random_expire(&r);
		model_check(&r.q);
	}
	waitq_free(&r.q);
	test_free(r.s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
