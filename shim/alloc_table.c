/*
 * The live allocation table: a ptrmap from device pointer to entry, entries
 * recycled through a free list (no malloc per allocation once warm), and
 * the bytes live per device.
 */
#include <pthread.h>
#include <stdlib.h>

#include "alloc_table.h"
#include "log.h"
#include "ptrmap.h"
#include "shim.h"

#define ALLOC_CHUNK	256	/* entries allocated at once */

/* A table entry; next links it on the free list while unused. */
struct alloc_slot {
	struct alloc_entry	e;
	struct alloc_slot	*next;
};

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap alloc_map;		/* ptr -> struct alloc_slot */
static struct alloc_slot *alloc_free;
static uint64_t alloc_used[SHIM_MAX_DEVICES];

static struct alloc_slot *
alloc_slot_get(void)
{
	struct alloc_slot *s;
	size_t i;

	if (alloc_free == NULL) {
		/* Chunks are never returned: the table's high-water mark. */
		if ((s = calloc(ALLOC_CHUNK, sizeof(*s))) == NULL)
			return NULL;
		for (i = 0; i < ALLOC_CHUNK; i++) {
			s[i].next = alloc_free;
			alloc_free = &s[i];
		}
	}
	s = alloc_free;
	alloc_free = s->next;
	return s;
}

static void
alloc_slot_put(struct alloc_slot *s)
{
	s->next = alloc_free;
	alloc_free = s;
}

/* Take e's bytes off its device's sum. */
static void
alloc_uncount(const struct alloc_entry *e)
{
	uint64_t *u = &alloc_used[e->dev];

	*u = *u > e->size ? *u - e->size : 0;
}

int
alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev)
{
	struct alloc_slot *s, *old;
	int r = -1;

	if (dev < 0 || dev >= SHIM_MAX_DEVICES)
		return -1;
	pthread_mutex_lock(&alloc_lock);
	if ((s = alloc_slot_get()) == NULL)
		goto out;
	s->e.size = size;
	s->e.kind = kind;
	s->e.dev = dev;
	/* A pointer still here was freed behind the shim's back. */
	if ((old = ptrmap_get(&alloc_map, ptr)) != NULL) {
		log_debug("allocation 0x%llx replaces a stale entry",
		    (unsigned long long)ptr);
		alloc_uncount(&old->e);
	}
	if (ptrmap_put(&alloc_map, ptr, s) < 0) {
		if (old != NULL)
			alloc_used[old->e.dev] += old->e.size;
		alloc_slot_put(s);
		goto out;
	}
	if (old != NULL)
		alloc_slot_put(old);
	alloc_used[dev] += size;
	r = 0;
out:
	pthread_mutex_unlock(&alloc_lock);
	return r;
}

int
alloc_table_remove(uint64_t ptr, struct alloc_entry *out)
{
	struct alloc_slot *s;

	pthread_mutex_lock(&alloc_lock);
	if ((s = ptrmap_del(&alloc_map, ptr)) != NULL) {
		*out = s->e;
		alloc_uncount(&s->e);
		alloc_slot_put(s);
	}
	pthread_mutex_unlock(&alloc_lock);
	return s != NULL;
}

uint64_t
alloc_table_used(int dev)
{
	uint64_t u;

	if (dev < 0 || dev >= SHIM_MAX_DEVICES)
		return 0;
	pthread_mutex_lock(&alloc_lock);
	u = alloc_used[dev];
	pthread_mutex_unlock(&alloc_lock);
	return u;
}

int
alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
    void *arg), void *arg)
{
	struct alloc_slot *s;
	uint64_t ptr;
	size_t pos = 0;
	int r = 0;

	pthread_mutex_lock(&alloc_lock);
	while (r == 0 && (s = ptrmap_next(&alloc_map, &pos, &ptr)) != NULL)
		r = fn(ptr, &s->e, arg);
	pthread_mutex_unlock(&alloc_lock);
	return r;
}

void
alloc_table_fork_prepare(void)
{
	pthread_mutex_lock(&alloc_lock);
}

void
alloc_table_fork_parent(void)
{
	pthread_mutex_unlock(&alloc_lock);
}

void
alloc_table_fork_child(void)
{
	struct alloc_slot *s;
	size_t pos = 0, i;

	while ((s = ptrmap_next(&alloc_map, &pos, NULL)) != NULL)
		alloc_slot_put(s);
	ptrmap_free(&alloc_map);
	for (i = 0; i < SHIM_MAX_DEVICES; i++)
		alloc_used[i] = 0;
	pthread_mutex_unlock(&alloc_lock);
}
