/*
 * Unit tests of common/procaddr.c: cuGetProcAddress-style resolution by
 * name, CUDA version and the per-thread-default-stream flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "procaddr.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

#define FLAG_LEGACY	1ull	/* CU_GET_PROC_ADDRESS_LEGACY_STREAM */
#define FLAG_PTDS	2ull	/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

/* Stand-ins for functions: only their addresses matter. */
static char fns[32];

#define E(name, version, ptds, symbol, i) \
	{ name, version, ptds, symbol, &fns[i] }

/* Sorted by name (strcmp), version, ptds, as the real tables are. */
static const struct procaddr tab[] = {
	E("cuCtxCreate", 2000, 0, "cuCtxCreate", 0),
	E("cuCtxCreate", 3020, 0, "cuCtxCreate_v2", 1),
	E("cuCtxCreate", 11040, 0, "cuCtxCreate_v3", 2),
	E("cuGetProcAddress", 11030, 0, "cuGetProcAddress", 3),
	E("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2", 4),
	E("cuMemAlloc", 2000, 0, "cuMemAlloc", 5),
	E("cuMemAlloc", 3020, 0, "cuMemAlloc_v2", 6),
	E("cuMemcpy", 4000, 0, "cuMemcpy", 7),
	E("cuMemcpy", 7000, 1, "cuMemcpy_ptds", 8),
	E("cuMemcpyAsync", 4000, 0, "cuMemcpyAsync", 9),
	E("cuMemcpyAsync", 7000, 1, "cuMemcpyAsync_ptsz", 10),
	E("cuMemcpyHtoD", 2000, 0, "cuMemcpyHtoD", 11),
	E("cuMemcpyHtoD", 3020, 0, "cuMemcpyHtoD_v2", 12),
	E("cuMemcpyHtoD", 7000, 1, "cuMemcpyHtoD_v2_ptds", 13),
	E("cuStreamQuery", 2000, 0, "cuStreamQuery", 14),
	E("cuStreamQuery", 7000, 1, "cuStreamQuery_ptsz", 15),
};

/* The symbol procaddr_find gives, or NULL; *status must say why. */
static const char *
find(const char *name, int version, uint64_t flags, int want_status)
{
	const struct procaddr *p;
	int status = -12345;

	p = procaddr_find(tab, NITEMS(tab), name, version, flags, &status);
	if (status != want_status)
		fail_msg("%s@%d flags %llu: status %d, want %d", name, version,
		    (unsigned long long)flags, status, want_status);
	if ((p == NULL) != (status != PROCADDR_FOUND))
		fail_msg("%s@%d: entry and status disagree", name, version);
	return p ? p->symbol : NULL;
}

static void
test_table_sorted(void **state)
{
	(void)state;
	assert_int_equal(procaddr_check_sorted(tab, NITEMS(tab)), 0);
	assert_int_equal(procaddr_check_sorted(tab, 1), 0);
	assert_int_equal(procaddr_check_sorted(tab, 0), 0);
}

static void
test_newest_not_newer(void **state)
{
	(void)state;
	assert_string_equal(find("cuMemAlloc", 12040, 0, PROCADDR_FOUND),
	    "cuMemAlloc_v2");
	assert_string_equal(find("cuMemAlloc", 3020, 0, PROCADDR_FOUND),
	    "cuMemAlloc_v2");
	assert_string_equal(find("cuMemAlloc", 3019, 0, PROCADDR_FOUND),
	    "cuMemAlloc");
	assert_string_equal(find("cuMemAlloc", 2000, 0, PROCADDR_FOUND),
	    "cuMemAlloc");
	assert_string_equal(find("cuCtxCreate", 12000, 0, PROCADDR_FOUND),
	    "cuCtxCreate_v3");
	assert_string_equal(find("cuCtxCreate", 11039, 0, PROCADDR_FOUND),
	    "cuCtxCreate_v2");
	assert_string_equal(find("cuCtxCreate", 11040, 0, PROCADDR_FOUND),
	    "cuCtxCreate_v3");
	/* first and last names of the table */
	assert_string_equal(find("cuCtxCreate", 2500, 0, PROCADDR_FOUND),
	    "cuCtxCreate");
	assert_string_equal(find("cuStreamQuery", 12000, 0, PROCADDR_FOUND),
	    "cuStreamQuery");
	/* the legacy-stream flag asks for what no flag gets */
	assert_string_equal(find("cuMemcpy", 12000, FLAG_LEGACY,
	    PROCADDR_FOUND), "cuMemcpy");
}

static void
test_entry_points_into_table(void **state)
{
	const struct procaddr *p;
	int status;

	(void)state;
	p = procaddr_find(tab, NITEMS(tab), "cuMemAlloc", 12000, 0, &status);
	assert_ptr_equal(p, &tab[6]);
	assert_ptr_equal(p->fn, &fns[6]);
	assert_int_equal(p->version, 3020);
}

static void
test_version_too_low(void **state)
{
	(void)state;
	assert_null(find("cuMemAlloc", 1999, 0, PROCADDR_VERSION_LOW));
	assert_null(find("cuMemAlloc", 0, 0, PROCADDR_VERSION_LOW));
	assert_null(find("cuMemAlloc", -1, 0, PROCADDR_VERSION_LOW));
	assert_null(find("cuMemcpy", 3999, 0, PROCADDR_VERSION_LOW));
	assert_null(find("cuMemcpy", 3999, FLAG_PTDS, PROCADDR_VERSION_LOW));
	assert_null(find("cuGetProcAddress", 11020, 0,
	    PROCADDR_VERSION_LOW));
}

static void
test_unknown_name(void **state)
{
	static const char *const unknown[] = {
		"cuFoo", "", "a", "zzz", "cuMemAllo", "cuMemAllocX",
		"cuMemAlloc_v2",	/* a symbol, not a base name */
		"cumemalloc", "cuMemcpyA", "cuGetExportTable",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(unknown); i++) {
		assert_null(find(unknown[i], 12000, 0, PROCADDR_NOT_FOUND));
		assert_null(find(unknown[i], 12000, FLAG_PTDS,
		    PROCADDR_NOT_FOUND));
	}
}

static void
test_ptds_variant(void **state)
{
	(void)state;
	assert_string_equal(find("cuMemcpy", 12000, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpy_ptds");
	assert_string_equal(find("cuMemcpy", 12000, 0, PROCADDR_FOUND),
	    "cuMemcpy");
	assert_string_equal(find("cuMemcpyAsync", 7000, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpyAsync_ptsz");
	assert_string_equal(find("cuMemcpyAsync", 7000, 0, PROCADDR_FOUND),
	    "cuMemcpyAsync");
	assert_string_equal(find("cuMemcpyHtoD", 12000, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpyHtoD_v2_ptds");
	assert_string_equal(find("cuMemcpyHtoD", 12000, 0, PROCADDR_FOUND),
	    "cuMemcpyHtoD_v2");
	assert_string_equal(find("cuStreamQuery", 12000,
	    FLAG_PTDS | FLAG_LEGACY, PROCADDR_FOUND), "cuStreamQuery_ptsz");
}

static void
test_ptds_falls_back(void **state)
{
	(void)state;
	/* no per-thread variant at all */
	assert_string_equal(find("cuMemAlloc", 12000, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemAlloc_v2");
	assert_string_equal(find("cuCtxCreate", 3020, FLAG_PTDS,
	    PROCADDR_FOUND), "cuCtxCreate_v2");
	/* a per-thread variant newer than the caller */
	assert_string_equal(find("cuMemcpyHtoD", 6050, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpyHtoD_v2");
	assert_string_equal(find("cuMemcpyHtoD", 3000, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpyHtoD");
	assert_string_equal(find("cuMemcpy", 6999, FLAG_PTDS,
	    PROCADDR_FOUND), "cuMemcpy");
}

static void
test_by_symbol(void **state)
{
	const struct procaddr *p;

	(void)state;
	p = procaddr_by_symbol(tab, NITEMS(tab), "cuMemAlloc_v2");
	assert_non_null(p);
	assert_string_equal(p->name, "cuMemAlloc");
	assert_int_equal(p->version, 3020);
	p = procaddr_by_symbol(tab, NITEMS(tab), "cuMemcpyHtoD_v2_ptds");
	assert_ptr_equal(p, &tab[13]);
	assert_int_equal(p->ptds, 1);
	p = procaddr_by_symbol(tab, NITEMS(tab), "cuStreamQuery_ptsz");
	assert_ptr_equal(p, &tab[15]);
	p = procaddr_by_symbol(tab, NITEMS(tab), "cuMemAlloc");
	assert_ptr_equal(p, &tab[5]);
	assert_null(procaddr_by_symbol(tab, NITEMS(tab), "cuMemAlloc_v3"));
	assert_null(procaddr_by_symbol(tab, NITEMS(tab), ""));
	assert_null(procaddr_by_symbol(tab, 0, "cuMemAlloc"));
}

/* tab with entries i and j swapped must be refused. */
static void
check_swap_unsorted(size_t i, size_t j)
{
	struct procaddr bad[NITEMS(tab)];
	struct procaddr t;

	memcpy(bad, tab, sizeof(bad));
	t = bad[i];
	bad[i] = bad[j];
	bad[j] = t;
	if (procaddr_check_sorted(bad, NITEMS(bad)) != -1)
		fail_msg("entries %zu and %zu swapped: accepted", i, j);
}

static void
test_check_sorted_rejects(void **state)
{
	struct procaddr dup[3];

	(void)state;
	check_swap_unsorted(0, NITEMS(tab) - 1);	/* names */
	check_swap_unsorted(4, 5);			/* names, adjacent */
	check_swap_unsorted(5, 6);			/* versions */
	check_swap_unsorted(0, 2);
	check_swap_unsorted(7, 8);			/* ptds first */
	check_swap_unsorted(12, 13);

	/* the same (name, version, ptds) twice */
	memcpy(dup, &tab[5], 2 * sizeof(dup[0]));
	dup[2] = dup[1];
	assert_int_equal(procaddr_check_sorted(dup, 3), -1);
	/* a legacy and a ptds entry of one version, in this order, are fine */
	dup[2].ptds = 1;
	assert_int_equal(procaddr_check_sorted(dup, 3), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_sorted),
		cmocka_unit_test(test_newest_not_newer),
		cmocka_unit_test(test_entry_points_into_table),
		cmocka_unit_test(test_version_too_low),
		cmocka_unit_test(test_unknown_name),
		cmocka_unit_test(test_ptds_variant),
		cmocka_unit_test(test_ptds_falls_back),
		cmocka_unit_test(test_by_symbol),
		cmocka_unit_test(test_check_sorted_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
