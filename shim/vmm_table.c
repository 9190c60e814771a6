/*
 * The virtual memory table: charged handles with their reference and
 * mapping counts, and mappings by address, under one lock.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ptrmap.h"
#include "vmm_table.h"

struct vmm_handle {
	uint64_t	refs;		/* created or retained, not released */
	uint64_t	maps;
};

struct vmm_map {
	uint64_t	size;
	uint64_t	handle;
};

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap vmm_handles;	/* handle -> struct vmm_handle */
static struct ptrmap vmm_maps;		/* address -> struct vmm_map */

int
vmm_created(uint64_t handle)
{
	struct vmm_handle *h = calloc(1, sizeof(*h));
	int r = -1;

	if (h == NULL)
		return -1;
	h->refs = 1;
	pthread_mutex_lock(&vmm_lock);
	free(ptrmap_del(&vmm_handles, handle));	/* a handle value reused */
	if (ptrmap_put(&vmm_handles, handle, h) == 0)
		r = 0;
	pthread_mutex_unlock(&vmm_lock);
	if (r < 0)
		free(h);
	return r;
}

void
vmm_retained(uint64_t handle)
{
	struct vmm_handle *h;

	pthread_mutex_lock(&vmm_lock);
	if ((h = ptrmap_get(&vmm_handles, handle)) != NULL)
		h->refs++;
	pthread_mutex_unlock(&vmm_lock);
}

int
vmm_release(uint64_t handle)
{
	struct vmm_handle *h;
	int gone = 0;

	pthread_mutex_lock(&vmm_lock);
	if ((h = ptrmap_get(&vmm_handles, handle)) != NULL) {
		if (h->refs > 0)
			h->refs--;
		if (h->refs == 0 && h->maps == 0) {
			free(ptrmap_del(&vmm_handles, handle));
			gone = 1;
		}
	}
	pthread_mutex_unlock(&vmm_lock);
	return gone;
}

int
vmm_mapped(uint64_t ptr, uint64_t size, uint64_t handle)
{
	struct vmm_map *m;
	struct vmm_handle *h;
	int r = 0;

	pthread_mutex_lock(&vmm_lock);
	if ((h = ptrmap_get(&vmm_handles, handle)) == NULL)
		goto out;	/* imported, or never charged */
	if ((m = malloc(sizeof(*m))) == NULL ||
	    ptrmap_put(&vmm_maps, ptr, m) < 0) {
		free(m);
		r = -1;
		goto out;
	}
	m->size = size;
	m->handle = handle;
	h->maps++;
out:
	pthread_mutex_unlock(&vmm_lock);
	return r;
}

size_t
vmm_unmap(uint64_t ptr, uint64_t size, uint64_t *freed, size_t max)
{
	uint64_t at = ptr, end = ptr + size;
	struct vmm_handle *h;
	struct vmm_map *m;
	size_t n = 0;

	pthread_mutex_lock(&vmm_lock);
	/* cuMemUnmap takes whole mappings, back to back. */
	while (at < end && (m = ptrmap_del(&vmm_maps, at)) != NULL) {
		at += m->size ? m->size : end - at;
		h = ptrmap_get(&vmm_handles, m->handle);
		if (h != NULL && h->maps > 0 && --h->maps == 0 &&
		    h->refs == 0 && n < max) {
			free(ptrmap_del(&vmm_handles, m->handle));
			freed[n++] = m->handle;
		}
		free(m);
	}
	pthread_mutex_unlock(&vmm_lock);
	return n;
}

int
vmm_map_at(uint64_t ptr, uint64_t *size, uint64_t *handle)
{
	struct vmm_map *m;

	pthread_mutex_lock(&vmm_lock);
	if ((m = ptrmap_get(&vmm_maps, ptr)) != NULL) {
		*size = m->size;
		*handle = m->handle;
	}
	pthread_mutex_unlock(&vmm_lock);
	return m != NULL;
}

void
vmm_fork_child(void)
{
	size_t pos = 0;
	void *v;

	pthread_mutex_init(&vmm_lock, NULL);
	while ((v = ptrmap_next(&vmm_handles, &pos, NULL)) != NULL)
		free(v);
	pos = 0;
	while ((v = ptrmap_next(&vmm_maps, &pos, NULL)) != NULL)
		free(v);
	ptrmap_free(&vmm_handles);
	ptrmap_free(&vmm_maps);
	ptrmap_init(&vmm_handles);
	ptrmap_init(&vmm_maps);
}
