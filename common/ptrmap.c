/*
 * Open-addressing u64 -> pointer map with linear probing and backward-shift
 * deletion; grows at 70% load.
 */
#include <errno.h>
#include <stdlib.h>

#include "ptrmap.h"

static size_t
slot_of(uint64_t key, size_t cap)
{
	/* Device pointers are aligned: mix the high bits in (splitmix64). */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebull;
	key ^= key >> 31;
	return (size_t)key & (cap - 1);
}

void
ptrmap_init(struct ptrmap *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->cap = 0;
	m->len = 0;
}

void
ptrmap_free(struct ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	ptrmap_init(m);
}

static void
insert_new(struct ptrmap *m, uint64_t key, void *val)
{
	size_t i = slot_of(key, m->cap);

	while (m->vals[i] != NULL)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
}

static int
grow(struct ptrmap *m)
{
	struct ptrmap old = *m;
	size_t cap = old.cap ? old.cap * 2 : 64;
	size_t i;

	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	if (m->keys == NULL || m->vals == NULL) {
		free(m->keys);
		free(m->vals);
		*m = old;
		errno = ENOMEM;
		return -1;
	}
	m->cap = cap;
	m->len = 0;
	for (i = 0; i < old.cap; i++)
		if (old.vals[i] != NULL)
			insert_new(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
	return 0;
}

static size_t
find(const struct ptrmap *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return SIZE_MAX;
	for (i = slot_of(key, m->cap); m->vals[i] != NULL;
	    i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return i;
	return SIZE_MAX;
}

int
ptrmap_put(struct ptrmap *m, uint64_t key, void *val)
{
	size_t i = find(m, key);

	if (i != SIZE_MAX) {
		m->vals[i] = val;
		return 0;
	}
	if ((m->len + 1) * 10 > m->cap * 7 && grow(m) < 0)
		return -1;
	insert_new(m, key, val);
	return 0;
}

void *
ptrmap_get(const struct ptrmap *m, uint64_t key)
{
	size_t i = find(m, key);

	return i == SIZE_MAX ? NULL : m->vals[i];
}

void *
ptrmap_del(struct ptrmap *m, uint64_t key)
{
	size_t i = find(m, key), j, mask = m->cap - 1;
	void *val;

	if (i == SIZE_MAX)
		return NULL;
	val = m->vals[i];
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & mask; m->vals[j] != NULL; j = (j + 1) & mask) {
		size_t home = slot_of(m->keys[j], m->cap);

		/* Move j to i unless its home lies cyclically in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->vals[i] = NULL;
	m->len--;
	return val;
}

void *
ptrmap_next(const struct ptrmap *m, size_t *pos, uint64_t *key)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;

		if (m->vals[i] != NULL) {
			if (key)
				*key = m->keys[i];
			return m->vals[i];
		}
	}
	return NULL;
}
