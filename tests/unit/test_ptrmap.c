/*
 * Unit tests of common/ptrmap.c: put/get/del, growth, backward-shift
 * deletion checked against a reference array, and iteration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ptrmap.h"

/* Values are addresses in this array, so that any key's value is unique. */
#define NVALS		60000
static char vals[NVALS];

static void *
val(size_t i)
{
	return &vals[i % NVALS];
}

/* xorshift64*: a fixed seed makes every run the same run. */
static uint64_t
rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void
test_put_get_del(void **state)
{
	struct ptrmap m;

	(void)state;
	ptrmap_init(&m);
	assert_null(ptrmap_get(&m, 1));			/* empty, no table */
	assert_null(ptrmap_del(&m, 1));
	assert_int_equal(ptrmap_put(&m, 0x7f0000000000ull, val(1)), 0);
	assert_int_equal(ptrmap_put(&m, 0, val(2)), 0);	/* key 0 is a key */
	assert_int_equal(ptrmap_put(&m, UINT64_MAX, val(3)), 0);
	assert_int_equal(m.len, 3);
	assert_ptr_equal(ptrmap_get(&m, 0x7f0000000000ull), val(1));
	assert_ptr_equal(ptrmap_get(&m, 0), val(2));
	assert_ptr_equal(ptrmap_get(&m, UINT64_MAX), val(3));
	assert_null(ptrmap_get(&m, 0x7f0000000001ull));

	assert_ptr_equal(ptrmap_del(&m, 0), val(2));
	assert_null(ptrmap_get(&m, 0));
	assert_null(ptrmap_del(&m, 0));			/* already gone */
	assert_int_equal(m.len, 2);
	assert_ptr_equal(ptrmap_get(&m, 0x7f0000000000ull), val(1));
	assert_ptr_equal(ptrmap_get(&m, UINT64_MAX), val(3));
	ptrmap_free(&m);
	assert_int_equal(m.len, 0);
	assert_int_equal(m.cap, 0);
	assert_null(ptrmap_get(&m, UINT64_MAX));
}

static void
test_replace(void **state)
{
	struct ptrmap m;

	(void)state;
	ptrmap_init(&m);
	assert_int_equal(ptrmap_put(&m, 42, val(1)), 0);
	assert_int_equal(ptrmap_put(&m, 42, val(2)), 0);
	assert_int_equal(m.len, 1);
	assert_ptr_equal(ptrmap_get(&m, 42), val(2));
	assert_ptr_equal(ptrmap_del(&m, 42), val(2));
	assert_int_equal(m.len, 0);
	assert_null(ptrmap_get(&m, 42));
	ptrmap_free(&m);
}

static void
test_growth(void **state)
{
	const size_t n = 50000;
	struct ptrmap m;
	size_t i;

	(void)state;
	ptrmap_init(&m);
	/* 2 MiB-aligned device pointers: the keys a hash must spread */
	for (i = 0; i < n; i++) {
		assert_int_equal(ptrmap_put(&m, 0x7f0000000000ull +
		    ((uint64_t)i << 21), val(i)), 0);
		assert_int_equal(m.len, i + 1);
	}
	assert_true(m.cap >= n);
	assert_true(m.len * 10 <= m.cap * 7);		/* load under 70% */
	assert_int_equal(m.cap & (m.cap - 1), 0);	/* power of two */
	for (i = 0; i < n; i++)
		if (ptrmap_get(&m, 0x7f0000000000ull + ((uint64_t)i << 21)) !=
		    val(i))
			fail_msg("key %zu lost after growth", i);
	assert_null(ptrmap_get(&m, 0x7f0000000000ull + ((uint64_t)n << 21)));
	ptrmap_free(&m);
}

/*
 * Random puts and deletes against a reference array over a small key
 * space, so that probe runs collide and deletions shift them back; after
 * every step a sample of keys and, now and then, all of them are checked.
 */
static void
test_random_against_reference(void **state)
{
	enum { KEYS = 4096, STEPS = 200000 };
	static void *ref[KEYS];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct ptrmap m;
	size_t step, k, len = 0;

	(void)state;
	memset(ref, 0, sizeof(ref));
	ptrmap_init(&m);
	for (step = 0; step < STEPS; step++) {
		uint64_t r = rng_next(&seed);
		size_t key = (size_t)(r % KEYS);
		uint64_t mkey = 0x7f0000000000ull + ((uint64_t)key << 12);

		/* more puts than deletes early, then more deletes */
		if ((r >> 32) % 100 < (step < STEPS / 2 ? 60u : 40u)) {
			assert_int_equal(ptrmap_put(&m, mkey, val(step)), 0);
			if (ref[key] == NULL)
				len++;
			ref[key] = val(step);
		} else {
			assert_ptr_equal(ptrmap_del(&m, mkey), ref[key]);
			if (ref[key] != NULL)
				len--;
			ref[key] = NULL;
		}
		assert_int_equal(m.len, len);
		k = (size_t)(rng_next(&seed) % KEYS);
		assert_ptr_equal(ptrmap_get(&m,
		    0x7f0000000000ull + ((uint64_t)k << 12)), ref[k]);
		if (step % 4999 == 0) {
			for (k = 0; k < KEYS; k++)
				if (ptrmap_get(&m, 0x7f0000000000ull +
				    ((uint64_t)k << 12)) != ref[k])
					fail_msg("step %zu: key %zu wrong",
					    step, k);
		}
	}
	for (k = 0; k < KEYS; k++)
		assert_ptr_equal(ptrmap_get(&m, 0x7f0000000000ull +
		    ((uint64_t)k << 12)), ref[k]);
	ptrmap_free(&m);
}

/*
 * Deleting from the middle of long probe runs: every key of a full-ish
 * table is deleted in random order and all the others stay findable.
 */
static void
test_delete_all_keeps_others(void **state)
{
	enum { N = 3000 };
	static uint64_t keys[N];
	static unsigned char gone[N];
	uint64_t seed = 42;
	struct ptrmap m;
	size_t i, j;

	(void)state;
	ptrmap_init(&m);
	for (i = 0; i < N; i++) {
		keys[i] = rng_next(&seed);
		assert_int_equal(ptrmap_put(&m, keys[i], val(i)), 0);
	}
	memset(gone, 0, sizeof(gone));
	for (i = N; i > 0; i--) {
		j = (size_t)(rng_next(&seed) % i);
		/* the j-th key not yet gone */
		for (size_t k = 0;; k++) {
			if (gone[k])
				continue;
			if (j-- == 0) {
				j = k;
				break;
			}
		}
		assert_ptr_equal(ptrmap_del(&m, keys[j]), val(j));
		gone[j] = 1;
		if (i % 97 == 0)
			for (size_t k = 0; k < N; k++)
				assert_ptr_equal(ptrmap_get(&m, keys[k]),
				    gone[k] ? NULL : val(k));
	}
	assert_int_equal(m.len, 0);
	ptrmap_free(&m);
}

static void
test_iteration_each_once(void **state)
{
	enum { N = 10000 };
	static unsigned seen[N];
	struct ptrmap m;
	size_t pos = 0, i, count = 0;
	uint64_t key;
	void *v;

	(void)state;
	ptrmap_init(&m);
	assert_null(ptrmap_next(&m, &pos, &key));	/* empty map */
	for (i = 0; i < N; i++)
		assert_int_equal(ptrmap_put(&m, (uint64_t)i * 256 + 7,
		    val(i)), 0);
	for (i = 0; i < N; i += 3)		/* with holes from deletion */
		assert_ptr_equal(ptrmap_del(&m, (uint64_t)i * 256 + 7),
		    val(i));
	memset(seen, 0, sizeof(seen));
	pos = 0;
	while ((v = ptrmap_next(&m, &pos, &key)) != NULL) {
		assert_int_equal(key % 256, 7);
		i = (size_t)(key / 256);
		assert_true(i < N);
		assert_ptr_equal(v, val(i));
		seen[i]++;
		count++;
	}
	assert_int_equal(count, m.len);
	for (i = 0; i < N; i++)
		assert_int_equal(seen[i], i % 3 == 0 ? 0 : 1);
	/* the end stays the end; a NULL key pointer is allowed */
	assert_null(ptrmap_next(&m, &pos, &key));
	pos = 0;
	assert_non_null(ptrmap_next(&m, &pos, NULL));
	ptrmap_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_del),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_delete_all_keeps_others),
		cmocka_unit_test(test_iteration_each_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
