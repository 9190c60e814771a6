/*
 * Arrays by context (ctx_table.h): a small list under a mutex. Arrays are
 * made and destroyed far less often than device memory is allocated.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ctx_table.h"

struct ctx_array {
	uint64_t	key;
	CUcontext	ctx;
};

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctx_array *ctx_arrays;
static size_t ctx_narrays, ctx_cap;

int
ctx_keys_push(uint64_t **keys, size_t *n, size_t *cap, uint64_t key)
{
	uint64_t *k;
	size_t c;

	if (*n == *cap) {
		c = *cap != 0 ? *cap * 2 : 16;
		if ((k = reallocarray(*keys, c, sizeof(*k))) == NULL)
			return -1;
		*keys = k;
		*cap = c;
	}
	(*keys)[(*n)++] = key;
	return 0;
}

int
ctx_array_made(uint64_t key, CUcontext ctx)
{
	struct ctx_array *a;
	size_t c;
	int r = 0;

	pthread_mutex_lock(&ctx_lock);
	if (ctx_narrays == ctx_cap) {
		c = ctx_cap != 0 ? ctx_cap * 2 : 16;
		if ((a = reallocarray(ctx_arrays, c, sizeof(*a))) == NULL) {
			r = -1;
			goto out;
		}
		ctx_arrays = a;
		ctx_cap = c;
	}
	ctx_arrays[ctx_narrays].key = key;
	ctx_arrays[ctx_narrays++].ctx = ctx;
out:
	pthread_mutex_unlock(&ctx_lock);
	return r;
}

void
ctx_array_gone(uint64_t key)
{
	size_t i;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < ctx_narrays; i++)
		if (ctx_arrays[i].key == key) {
			ctx_arrays[i] = ctx_arrays[--ctx_narrays];
			break;
		}
	pthread_mutex_unlock(&ctx_lock);
}

int
ctx_array_list(CUcontext ctx, uint64_t **keys, size_t *n, size_t *cap)
{
	size_t i;
	int r = 0;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < ctx_narrays && r == 0; i++)
		if (ctx_arrays[i].ctx == ctx)
			r = ctx_keys_push(keys, n, cap, ctx_arrays[i].key);
	pthread_mutex_unlock(&ctx_lock);
	return r;
}

void
ctx_array_forget(CUcontext ctx)
{
	size_t i;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < ctx_narrays; )
		if (ctx_arrays[i].ctx == ctx)
			ctx_arrays[i] = ctx_arrays[--ctx_narrays];
		else
			i++;
	pthread_mutex_unlock(&ctx_lock);
}

void
ctx_array_fork_child(void)
{
	ctx_narrays = 0;
	(void)pthread_mutex_init(&ctx_lock, NULL);
}
