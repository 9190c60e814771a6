/*
 * The live allocation table: ptrmaps from device pointer to entry, entries
 * recycled through free lists (no malloc per allocation once warm), and
 * the bytes live per device. It is split in shards by a hash of the
 * pointer, each with its own lock, free list and sums on a cache line of
 * their own, so that threads allocating at once rarely meet.
 */
#include <pthread.h>
#include <stdlib.h>

#include "alloc_table.h"
#include "log.h"
#include "ptrmap.h"
#include "shim.h"

#define ALLOC_CHUNK	256	/* entries allocated at once */
#define ALLOC_SHARDS	16	/* a power of two */

/* A table entry; next links it on the free list while unused. */
struct alloc_slot {
	struct alloc_entry	e;
	struct alloc_slot	*next;
};

struct alloc_shard {
	pthread_mutex_t	 lock;
	struct ptrmap	 map;		/* ptr -> struct alloc_slot */
	struct alloc_slot *free;
	uint64_t	 used[SHIM_MAX_DEVICES];
} __attribute__((aligned(64)));

static struct alloc_shard shards[ALLOC_SHARDS] = {
	[0 ... ALLOC_SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/* Fibonacci hashing: the top bits of ptr times 2^64 / phi. */
static struct alloc_shard *
shard_of(uint64_t ptr)
{
	return &shards[(ptr * 0x9e3779b97f4a7c15ull) >> 60 &
	    (ALLOC_SHARDS - 1)];
}

static struct alloc_slot *
alloc_slot_get(struct alloc_shard *sh)
{
	struct alloc_slot *s;
	size_t i;

	if (sh->free == NULL) {
		/* Chunks are never returned: the table's high-water mark. */
		if ((s = calloc(ALLOC_CHUNK, sizeof(*s))) == NULL)
			return NULL;
		for (i = 0; i < ALLOC_CHUNK; i++) {
			s[i].next = sh->free;
			sh->free = &s[i];
		}
	}
	s = sh->free;
	sh->free = s->next;
	return s;
}

static void
alloc_slot_put(struct alloc_shard *sh, struct alloc_slot *s)
{
	s->next = sh->free;
	sh->free = s;
}

/* Take e's bytes off its device's sum in sh. */
static void
alloc_uncount(struct alloc_shard *sh, const struct alloc_entry *e)
{
	uint64_t *u = &sh->used[e->dev];

	*u = *u > e->size ? *u - e->size : 0;
}

int
alloc_table_add(uint64_t ptr, uint64_t size, uint32_t kind, int dev,
    unsigned flags)
{
	struct alloc_shard *sh = shard_of(ptr);
	struct alloc_slot *s, *old;
	int r = -1;

	if (dev < 0 || dev >= SHIM_MAX_DEVICES)
		return -1;
	pthread_mutex_lock(&sh->lock);
	if ((s = alloc_slot_get(sh)) == NULL)
		goto out;
	s->e.size = size;
	s->e.kind = kind;
	s->e.dev = (int16_t)dev;
	s->e.flags = (uint16_t)flags;
	/* A pointer still here was freed behind the shim's back. */
	if ((old = ptrmap_get(&sh->map, ptr)) != NULL) {
		log_debug("allocation 0x%llx replaces a stale entry",
		    (unsigned long long)ptr);
		alloc_uncount(sh, &old->e);
	}
	if (ptrmap_put(&sh->map, ptr, s) < 0) {
		if (old != NULL)
			sh->used[old->e.dev] += old->e.size;
		alloc_slot_put(sh, s);
		goto out;
	}
	if (old != NULL)
		alloc_slot_put(sh, old);
	sh->used[dev] += size;
	r = 0;
out:
	pthread_mutex_unlock(&sh->lock);
	return r;
}

int
alloc_table_remove(uint64_t ptr, struct alloc_entry *out)
{
	struct alloc_shard *sh = shard_of(ptr);
	struct alloc_slot *s;

	pthread_mutex_lock(&sh->lock);
	if ((s = ptrmap_del(&sh->map, ptr)) != NULL) {
		*out = s->e;
		alloc_uncount(sh, &s->e);
		alloc_slot_put(sh, s);
	}
	pthread_mutex_unlock(&sh->lock);
	return s != NULL;
}

uint64_t
alloc_table_used(int dev)
{
	uint64_t u = 0;
	size_t i;

	if (dev < 0 || dev >= SHIM_MAX_DEVICES)
		return 0;
	for (i = 0; i < ALLOC_SHARDS; i++) {
		pthread_mutex_lock(&shards[i].lock);
		u += shards[i].used[dev];
		pthread_mutex_unlock(&shards[i].lock);
	}
	return u;
}

static void
shards_lock(void)
{
	size_t i;

	for (i = 0; i < ALLOC_SHARDS; i++)
		pthread_mutex_lock(&shards[i].lock);
}

static void
shards_unlock(void)
{
	size_t i;

	for (i = ALLOC_SHARDS; i-- > 0; )
		pthread_mutex_unlock(&shards[i].lock);
}

int
alloc_table_walk(int (*fn)(uint64_t ptr, const struct alloc_entry *e,
    void *arg), void *arg)
{
	struct alloc_slot *s;
	uint64_t ptr;
	size_t pos, i;
	int r = 0;

	/* All at once: a consistent picture (re-registration). */
	shards_lock();
	for (i = 0; i < ALLOC_SHARDS && r == 0; i++)
		for (pos = 0; r == 0 &&
		    (s = ptrmap_next(&shards[i].map, &pos, &ptr)) != NULL; )
			r = fn(ptr, &s->e, arg);
	shards_unlock();
	return r;
}

void
alloc_table_fork_prepare(void)
{
	shards_lock();
}

void
alloc_table_fork_parent(void)
{
	shards_unlock();
}

void
alloc_table_fork_child(void)
{
	struct alloc_slot *s;
	size_t pos, i, d;

	for (i = 0; i < ALLOC_SHARDS; i++) {
		for (pos = 0; (s = ptrmap_next(&shards[i].map, &pos,
		    NULL)) != NULL; )
			alloc_slot_put(&shards[i], s);
		ptrmap_free(&shards[i].map);
		for (d = 0; d < SHIM_MAX_DEVICES; d++)
			shards[i].used[d] = 0;
	}
	shards_unlock();
}
