/*
 * The wait queue: per device a list in rank order with a sorted table of
 * priority levels (where each level ends), and one deadline heap for all.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waitq.h"

#define HEAP_NONE	SIZE_MAX

TAILQ_HEAD(waitq_list, waitq_waiter);

/* A priority level on a device: its last waiter, where the next one goes. */
struct waitq_level {
	int32_t		 priority;
	struct waitq_waiter *last;
};

struct waitq_dev {
	struct waitq_list list;		/* rank order; dead ones until swept */
	struct waitq_level *levels;	/* by priority, descending */
	size_t		 nlevels;
	size_t		 levelcap;
	size_t		 count;		/* live waiters */
};

void
waitq_init(struct waitq *q, waitq_rearm_fn *rearm, void *rearm_arg)
{
	memset(q, 0, sizeof(*q));
	q->next_arrival = 1;
	q->rearm = rearm;
	q->rearm_arg = rearm_arg;
}

void
waitq_free(struct waitq *q)
{
	struct waitq_waiter *w;
	size_t i;

	for (i = 0; i < q->ndevs; i++) {
		struct waitq_dev *d = q->devs[i];

		if (d == NULL)
			continue;
		while ((w = TAILQ_FIRST(&d->list)) != NULL) {
			TAILQ_REMOVE(&d->list, w, entry);
			free(w);
		}
		free(d->levels);
		free(d);
	}
	free(q->devs);
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

/* The deadline heap: earliest deadline on top, ties by arrival. */

static int
heap_less(const struct waitq_waiter *a, const struct waitq_waiter *b)
{
	if (a->deadline_ms != b->deadline_ms)
		return a->deadline_ms < b->deadline_ms;
	return a->arrival < b->arrival;
}

static void
heap_set(struct waitq *q, size_t i, struct waitq_waiter *w)
{
	q->heap[i] = w;
	w->heap_idx = i;
}

static void
heap_up(struct waitq *q, size_t i)
{
	struct waitq_waiter *w = q->heap[i];

	while (i > 0 && heap_less(w, q->heap[(i - 1) / 2])) {
		heap_set(q, i, q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(q, i, w);
}

static void
heap_down(struct waitq *q, size_t i)
{
	struct waitq_waiter *w = q->heap[i];
	size_t c;

	while ((c = 2 * i + 1) < q->nheap) {
		if (c + 1 < q->nheap && heap_less(q->heap[c + 1], q->heap[c]))
			c++;
		if (!heap_less(q->heap[c], w))
			break;
		heap_set(q, i, q->heap[c]);
		i = c;
	}
	heap_set(q, i, w);
}

static int
heap_reserve(struct waitq *q)
{
	struct waitq_waiter **h;
	size_t cap;

	if (q->nheap < q->heapcap)
		return 0;
	cap = q->heapcap ? 2 * q->heapcap : 16;
	if (cap > SIZE_MAX / sizeof(*h) ||
	    (h = realloc(q->heap, cap * sizeof(*h))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	q->heap = h;
	q->heapcap = cap;
	return 0;
}

/* Room was reserved by heap_reserve. */
static void
heap_push(struct waitq *q, struct waitq_waiter *w)
{
	heap_set(q, q->nheap++, w);
	heap_up(q, w->heap_idx);
}

static void
heap_remove(struct waitq *q, struct waitq_waiter *w)
{
	size_t i = w->heap_idx;
	struct waitq_waiter *last;

	if (i == HEAP_NONE)
		return;
	w->heap_idx = HEAP_NONE;
	last = q->heap[--q->nheap];
	if (i == q->nheap)
		return;
	heap_set(q, i, last);
	heap_up(q, i);
	heap_down(q, last->heap_idx);
}

/* Priority levels of a device. */

/* The index of priority's level, or where it would go; *found says which. */
static size_t
level_find(const struct waitq_dev *d, int32_t priority, int *found)
{
	size_t lo = 0, hi = d->nlevels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->levels[mid].priority == priority) {
			*found = 1;
			return mid;
		}
		if (d->levels[mid].priority > priority)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static int
level_reserve(struct waitq_dev *d)
{
	struct waitq_level *l;
	size_t cap;

	if (d->nlevels < d->levelcap)
		return 0;
	cap = d->levelcap ? 2 * d->levelcap : 4;
	if (cap > SIZE_MAX / sizeof(*l) ||
	    (l = realloc(d->levels, cap * sizeof(*l))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	d->levels = l;
	d->levelcap = cap;
	return 0;
}

/* dev's queue, created on first use; NULL with errno set. */
static struct waitq_dev *
dev_get(struct waitq *q, size_t dev)
{
	struct waitq_dev **devs, *d;
	size_t n;

	if (dev >= WAITQ_DEV_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (dev >= q->ndevs) {
		n = dev + 1;
		if ((devs = realloc(q->devs, n * sizeof(*devs))) == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		memset(devs + q->ndevs, 0, (n - q->ndevs) * sizeof(*devs));
		q->devs = devs;
		q->ndevs = n;
	}
	if ((d = q->devs[dev]) == NULL) {
		if ((d = calloc(1, sizeof(*d))) == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		TAILQ_INIT(&d->list);
		q->devs[dev] = d;
	}
	return d;
}

static struct waitq_dev *
dev_peek(const struct waitq *q, size_t dev)
{
	return dev < q->ndevs ? q->devs[dev] : NULL;
}

/* Link w at the end of its priority level; room for a level is reserved. */
static void
dev_link(struct waitq_dev *d, struct waitq_waiter *w)
{
	int found;
	size_t i = level_find(d, w->priority, &found);

	if (!found) {
		if (i == 0)
			TAILQ_INSERT_HEAD(&d->list, w, entry);
		else
			TAILQ_INSERT_AFTER(&d->list, d->levels[i - 1].last, w,
			    entry);
		memmove(d->levels + i + 1, d->levels + i,
		    (d->nlevels - i) * sizeof(*d->levels));
		d->levels[i].priority = w->priority;
		d->nlevels++;
	} else
		TAILQ_INSERT_AFTER(&d->list, d->levels[i].last, w, entry);
	d->levels[i].last = w;
}

/* Unlink w from its device's list, keeping the level table right. */
static void
dev_unlink(struct waitq_dev *d, struct waitq_waiter *w)
{
	struct waitq_waiter *prev = TAILQ_PREV(w, waitq_list, entry);
	int found;
	size_t i = level_find(d, w->priority, &found);

	if (found && d->levels[i].last == w) {
		if (prev != NULL && prev->priority == w->priority)
			d->levels[i].last = prev;
		else {
			memmove(d->levels + i, d->levels + i + 1,
			    (d->nlevels - i - 1) * sizeof(*d->levels));
			d->nlevels--;
		}
	}
	TAILQ_REMOVE(&d->list, w, entry);
}

/*
 * w leaves the queue: no longer counted nor offered, but it stays linked
 * (a walk may stand on it) until finish() frees it.
 */
static void
waiter_kill(struct waitq *q, struct waitq_waiter *w)
{
	if (w->dead)
		return;
	w->dead = 1;
	heap_remove(q, w);
	q->devs[w->dev]->count--;
	q->count--;
	w->next_dead = q->dead;
	q->dead = w;
}

/* End of a public call: outside any walk, free the dead and tell rearm. */
static void
finish(struct waitq *q, int force)
{
	struct waitq_waiter *w;
	uint64_t next;

	if (q->busy > 0)
		return;
	while ((w = q->dead) != NULL) {
		q->dead = w->next_dead;
		dev_unlink(q->devs[w->dev], w);
		free(w);
	}
	next = waitq_next_deadline(q);
	if (q->rearm != NULL && (force || next != q->armed))
		q->rearm(q->rearm_arg, next);
	q->armed = next;
}

struct waitq_waiter *
waitq_add(struct waitq *q, void *owner, uint32_t seq, size_t dev,
    uint64_t bytes, int32_t priority, uint64_t deadline_ms)
{
	struct waitq_waiter *w;
	struct waitq_dev *d;
	int found;

	/* Take every resource first: a failure must leave q as it was. */
	if ((d = dev_get(q, dev)) == NULL)
		return NULL;
	(void)level_find(d, priority, &found);
	if ((!found && level_reserve(d) < 0) ||
	    (deadline_ms != 0 && heap_reserve(q) < 0))
		return NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	w->owner = owner;
	w->seq = seq;
	w->dev = dev;
	w->bytes = bytes;
	w->priority = priority;
	w->deadline_ms = deadline_ms;
	w->arrival = q->next_arrival++;
	w->heap_idx = HEAP_NONE;
	dev_link(d, w);
	if (deadline_ms != 0)
		heap_push(q, w);
	d->count++;
	q->count++;
	finish(q, 0);
	return w;
}

void
waitq_cancel(struct waitq *q, struct waitq_waiter *w)
{
	waiter_kill(q, w);
	finish(q, 0);
}

size_t
waitq_remove_owner(struct waitq *q, const void *owner)
{
	struct waitq_waiter *w;
	size_t i, n = 0;

	for (i = 0; i < q->ndevs; i++) {
		if (q->devs[i] == NULL)
			continue;
		TAILQ_FOREACH(w, &q->devs[i]->list, entry)
			if (!w->dead && w->owner == owner) {
				waiter_kill(q, w);
				n++;
			}
	}
	finish(q, 0);
	return n;
}

size_t
waitq_serve(struct waitq *q, size_t dev, waitq_fits_fn *fits,
    waitq_done_fn *grant, void *arg)
{
	struct waitq_dev *d = dev_peek(q, dev);
	struct waitq_waiter *w;
	int32_t barrier = 0;
	int blocked = 0;
	size_t n = 0;

	if (d == NULL)
		return 0;
	q->busy++;
	/* w stays linked while the callbacks run, so its successor is sound. */
	for (w = TAILQ_FIRST(&d->list); w != NULL;
	    w = TAILQ_NEXT(w, entry)) {
		if (w->dead)
			continue;
		if (blocked && w->priority < barrier)
			break;
		switch (fits(arg, w)) {
		case WAITQ_FITS:
			break;
		case WAITQ_WAITS:
			if (!blocked) {
				blocked = 1;
				barrier = w->priority;
			}
			continue;
		default:
			continue;
		}
		waiter_kill(q, w);
		grant(arg, w);
		n++;
	}
	q->busy--;
	finish(q, 0);
	return n;
}

size_t
waitq_expire(struct waitq *q, uint64_t now_ms, waitq_done_fn *expire,
    void *arg)
{
	struct waitq_waiter *w;
	size_t n = 0;

	q->busy++;
	while (q->nheap > 0 && (w = q->heap[0])->deadline_ms <= now_ms) {
		waiter_kill(q, w);
		expire(arg, w);
		n++;
	}
	q->busy--;
	finish(q, 1);
	return n;
}

uint64_t
waitq_next_deadline(const struct waitq *q)
{
	return q->nheap > 0 ? q->heap[0]->deadline_ms : 0;
}

size_t
waitq_count(const struct waitq *q)
{
	return q->count;
}

size_t
waitq_count_dev(const struct waitq *q, size_t dev)
{
	const struct waitq_dev *d = dev_peek(q, dev);

	return d != NULL ? d->count : 0;
}

const struct waitq_waiter *
waitq_next(const struct waitq *q, size_t dev, const struct waitq_waiter *after)
{
	const struct waitq_dev *d = dev_peek(q, dev);
	const struct waitq_waiter *w;

	if (d == NULL)
		return NULL;
	w = after != NULL ? TAILQ_NEXT(after, entry) : TAILQ_FIRST(&d->list);
	while (w != NULL && w->dead)
		w = TAILQ_NEXT(w, entry);
	return w;
}
