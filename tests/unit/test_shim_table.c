/*
 * Unit tests of shim/hooks_table.c: the one table through which
 * cuGetProcAddress (procaddr_find) and dlsym (procaddr_by_symbol) reach the
 * shim's hooks. The hooks themselves are stubs here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the table here. */
#include "../../shim/hooks_table.c"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))
#define PTDS		CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define LEGACY		CU_GET_PROC_ADDRESS_LEGACY_STREAM

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	(void)dptr, (void)bytesize;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
    size_t Height, unsigned int ElementSizeBytes)
{
	(void)dptr, (void)pPitch, (void)WidthInBytes, (void)Height;
	(void)ElementSizeBytes;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	(void)dptr, (void)bytesize, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	(void)dptr;
	return CUDA_SUCCESS;
}

CUresult
cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	(void)free_bytes, (void)total_bytes;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	(void)bytes, (void)dev;
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	(void)symbol, (void)pfn, (void)cudaVersion, (void)flags;
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	(void)symbol, (void)pfn, (void)cudaVersion, (void)flags;
	(void)symbolStatus;
	return CUDA_SUCCESS;
}

struct find_case {
	const char	*name;
	int		version;
	uint64_t	flags;
	void		*want;		/* NULL: no hook, the driver's answer stands */
	int		status;
};

static void
test_sorted(void **state)
{
	(void)state;
	assert_int_equal(procaddr_check_sorted(hooks_table, hooks_table_len),
	    0);
	assert_int_equal(hooks_table_len, 8);
}

static void
find_check(const struct find_case *c)
{
	const struct procaddr *e;
	int status = -1;

	e = procaddr_find(hooks_table, hooks_table_len, c->name, c->version,
	    c->flags, &status);
	if ((e ? e->fn : NULL) != c->want || status != c->status)
		fail_msg("(%s, %d, %llu): got %s (status %d), want %s "
		    "(status %d)", c->name, c->version,
		    (unsigned long long)c->flags, e ? e->symbol : "no hook",
		    status, c->want ? "a hook" : "no hook", c->status);
}

/* The ABI of today's callers (CUDA 12 and 13) gets the hook. */
static void
test_find_current(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 13000, 0, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemAlloc", 3020, 0, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemAllocPitch", 12080, 0, (void *)cuMemAllocPitch_v2, 0 },
		{ "cuMemAllocManaged", 12000, 0, (void *)cuMemAllocManaged, 0 },
		{ "cuMemAllocManaged", 6000, 0, (void *)cuMemAllocManaged, 0 },
		{ "cuMemFree", 12000, 0, (void *)cuMemFree_v2, 0 },
		{ "cuMemGetInfo", 12000, 0, (void *)cuMemGetInfo_v2, 0 },
		{ "cuDeviceTotalMem", 11000, 0, (void *)cuDeviceTotalMem_v2, 0 },
		{ "cuMemAlloc", 12000, LEGACY, (void *)cuMemAlloc_v2, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* A caller built against an older CUDA gets the driver's older ABI. */
static void
test_find_old_version(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 3010, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAlloc", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAllocPitch", 3000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemFree", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemGetInfo", 3000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuDeviceTotalMem", 2000, 0, NULL, PROCADDR_VERSION_LOW },
		{ "cuMemAllocManaged", 5050, 0, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/*
 * The per-thread-default-stream flag: allocation and query entry points
 * have no _ptds/_ptsz variant, so a per-thread caller gets the same hook.
 */
static void
test_find_ptds(void **state)
{
	static const struct find_case cases[] = {
		{ "cuMemAlloc", 12000, PTDS, (void *)cuMemAlloc_v2, 0 },
		{ "cuMemFree", 12000, PTDS, (void *)cuMemFree_v2, 0 },
		{ "cuMemGetInfo", 12000, PTDS | LEGACY, (void *)cuMemGetInfo_v2,
		  0 },
		{ "cuMemAlloc", 3000, PTDS, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* Names the shim does not hook are the driver's business. */
static void
test_find_unknown(void **state)
{
	static const struct find_case cases[] = {
		{ "cuGetExportTable", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAllocAsync", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuInit", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAlloc_v2", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAllo", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "cuMemAllocX", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "", 12000, 0, NULL, PROCADDR_NOT_FOUND },
		{ "zzz", 12000, 0, NULL, PROCADDR_NOT_FOUND },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* Asked for itself, cuGetProcAddress answers with the matching hook. */
static void
test_find_getprocaddress(void **state)
{
	static const struct find_case cases[] = {
		{ "cuGetProcAddress", 13000, 0, (void *)cuGetProcAddress_v2, 0 },
		{ "cuGetProcAddress", 12000, 0, (void *)cuGetProcAddress_v2, 0 },
		{ "cuGetProcAddress", 12000, PTDS, (void *)cuGetProcAddress_v2,
		  0 },
		{ "cuGetProcAddress", 11080, 0, (void *)cuGetProcAddress, 0 },
		{ "cuGetProcAddress", 11030, 0, (void *)cuGetProcAddress, 0 },
		{ "cuGetProcAddress", 11020, 0, NULL, PROCADDR_VERSION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		find_check(&cases[i]);
}

/* The dlsym path: exported driver symbol names, and nothing else. */
static void
test_by_symbol(void **state)
{
	static const struct {
		const char	*symbol;
		void		*want;
	} cases[] = {
		{ "cuMemAlloc_v2", (void *)cuMemAlloc_v2 },
		{ "cuMemAllocPitch_v2", (void *)cuMemAllocPitch_v2 },
		{ "cuMemAllocManaged", (void *)cuMemAllocManaged },
		{ "cuMemFree_v2", (void *)cuMemFree_v2 },
		{ "cuMemGetInfo_v2", (void *)cuMemGetInfo_v2 },
		{ "cuDeviceTotalMem_v2", (void *)cuDeviceTotalMem_v2 },
		{ "cuGetProcAddress", (void *)cuGetProcAddress },
		{ "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2 },
		/* the legacy 32-bit ABIs keep the plain names */
		{ "cuMemAlloc", NULL },
		{ "cuMemFree", NULL },
		{ "cuMemGetInfo", NULL },
		{ "cuDeviceTotalMem", NULL },
		{ "cuMemAllocPitch", NULL },
		{ "cuMemAlloc_v2_ptds", NULL },
		{ "cuInit", NULL },
		{ "dlsym", NULL },
	};
	const struct procaddr *e;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		e = procaddr_by_symbol(hooks_table, hooks_table_len,
		    cases[i].symbol);
		if ((e ? e->fn : NULL) != cases[i].want)
			fail_msg("procaddr_by_symbol(\"%s\") = %s",
			    cases[i].symbol, e ? e->symbol : "nothing");
	}
}

/* Every hook is exported by the version script, once. */
static void
test_exported(void **state)
{
	char line[256], want[128];
	size_t i, found;
	FILE *f;

	(void)state;
	if ((f = fopen("shim/libgpufrac.map", "r")) == NULL)
		skip();		/* not run from the top of the tree */
	for (i = 0; i < hooks_table_len; i++) {
		snprintf(want, sizeof(want), "%s;", hooks_table[i].symbol);
		found = 0;
		rewind(f);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, want) != NULL &&
			    strspn(line, " \t") == (size_t)(strstr(line, want) -
			    line))
				found++;
		if (found != 1)
			fail_msg("%s is listed %zu times in "
			    "shim/libgpufrac.map", hooks_table[i].symbol, found);
	}
	fclose(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_find_current),
		cmocka_unit_test(test_find_old_version),
		cmocka_unit_test(test_find_ptds),
		cmocka_unit_test(test_find_unknown),
		cmocka_unit_test(test_find_getprocaddress),
		cmocka_unit_test(test_by_symbol),
		cmocka_unit_test(test_exported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
