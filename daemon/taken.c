/*
 * A group's memory in the order it was taken: the layers of a process
 * seen at the looks, and who holds what lies past the limit. taken.h
 * says why.
 */
#include <stdlib.h>

#include "taken.h"

static int
when_cmp(struct taken_when a, struct taken_when b)
{
	if (a.ms != b.ms)
		return a.ms < b.ms ? -1 : 1;
	if (a.seq != b.seq)
		return a.seq < b.seq ? -1 : 1;
	return 0;
}

int
taken_layers_fit(struct taken_layers *t, uint64_t total,
    struct taken_when when)
{
	struct taken_layer *v;
	uint64_t have = 0, drop;
	size_t i;

	for (i = 0; i < t->n; i++)
		have += t->v[i].bytes;
	while (have > total && t->n > 0) {
		drop = have - total;
		if (drop > t->v[t->n - 1].bytes)
			drop = t->v[t->n - 1].bytes;
		t->v[t->n - 1].bytes -= drop;
		have -= drop;
		if (t->v[t->n - 1].bytes == 0)
			t->n--;
	}
	if (have >= total)
		return 0;
	if (t->n == t->cap) {
		if ((v = realloc(t->v, (t->cap ? t->cap * 2 : 4) *
		    sizeof(*v))) == NULL) {
			if (t->n == 0)
				return -1;
			t->v[t->n - 1].bytes += total - have;
			return -1;
		}
		t->v = v;
		t->cap = t->cap ? t->cap * 2 : 4;
	}
	t->v[t->n++] = (struct taken_layer){ when, total - have };
	return 0;
}

void
taken_layers_free(struct taken_layers *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static int
piece_cmp(const void *x, const void *y)
{
	const struct taken_piece *a = x, *b = y;

	return when_cmp(a->when, b->when);
}

size_t
taken_past(struct taken_piece *p, size_t n, uint64_t limit,
    const void **owners)
{
	uint64_t end = 0;
	size_t i, k, first, no = 0;

	qsort(p, n, sizeof(*p), piece_cmp);
	/* The first piece whose end lies past the limit; all after it too. */
	for (first = 0; first < n; first++) {
		end += p[first].bytes;
		if (end > limit && p[first].bytes > 0)
			break;
	}
	for (i = n; i-- > first;) {
		if (p[i].bytes == 0)
			continue;
		for (k = 0; k < no && owners[k] != p[i].owner; k++)
			;
		if (k == no)
			owners[no++] = p[i].owner;
	}
	return no;
}
