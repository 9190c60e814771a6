/*
 * For the daemon/waitq.c tests (test_daemon_waitq.c,
 * test_daemon_waitq_random.c): the invariants every state of a queue
 * keeps. Include after cmocka.h.
 */
#ifndef GF_TEST_WAITQ_CHECK_H
#define GF_TEST_WAITQ_CHECK_H

#include <stddef.h>

#include "../../daemon/waitq.h"

/* Heap order and back-pointers, counts, and rank order on every device. */
static void
assert_invariants(const struct waitq *q)
{
	size_t i, dev, total = 0, inheap = 0;

	for (i = 0; i < q->nheap; i++) {
		assert_int_equal(q->heap[i]->heap_idx, i);
		assert_false(q->heap[i]->dead);
		if (i > 0) {
			const struct waitq_waiter *up = q->heap[(i - 1) / 2];

			assert_true(up->deadline_ms < q->heap[i]->deadline_ms ||
			    (up->deadline_ms == q->heap[i]->deadline_ms &&
			    up->arrival < q->heap[i]->arrival));
		}
	}
	for (dev = 0; dev < q->ndevs; dev++) {
		const struct waitq_waiter *w, *prev = NULL;
		size_t n = 0;

		for (w = waitq_next(q, dev, NULL); w != NULL;
		    w = waitq_next(q, dev, w)) {
			assert_int_equal(w->dev, dev);
			if (prev != NULL)
				assert_true(prev->priority > w->priority ||
				    (prev->priority == w->priority &&
				    prev->arrival < w->arrival));
			if (w->deadline_ms != 0)
				inheap++;
			prev = w;
			n++;
		}
		assert_int_equal(waitq_count_dev(q, dev), n);
		total += n;
	}
	assert_int_equal(waitq_count(q), total);
	assert_int_equal(q->nheap, inheap);
}

#endif
