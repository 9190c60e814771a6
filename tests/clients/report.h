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

#endif
