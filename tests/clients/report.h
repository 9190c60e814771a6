/*
 * The test clients' one output line per driver call: "WHAT ok" or
 * "WHAT err=CODE", which the integration tests compare.
 */
#ifndef GF_TEST_REPORT_H
#define GF_TEST_REPORT_H

#include <cuda.h>
#include <stdio.h>

static inline void
report(const char *what, CUresult r)
{
	if (r == CUDA_SUCCESS)
		printf("%s ok\n", what);
	else
		printf("%s err=%d\n", what, (int)r);
}

/* cuMemGetInfo's answer: "info free=N total=N" or "info err=CODE". */
static inline void
report_info(CUresult r, size_t free_bytes, size_t total_bytes)
{
	if (r == CUDA_SUCCESS)
		printf("info free=%zu total=%zu\n", free_bytes, total_bytes);
	else
		report("info", r);
}

/* cuMemGetInfo, reported (where cuda.h's names are the current ABI's). */
#ifndef __CUDA_API_VERSION_INTERNAL
static inline void
report_meminfo(void)
{
	size_t free_bytes = 0, total_bytes = 0;
	CUresult r = cuMemGetInfo(&free_bytes, &total_bytes);

	report_info(r, free_bytes, total_bytes);
}
#endif

#endif
