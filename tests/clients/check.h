/*
 * Assertions for the simulator's own test programs: CHECK (failures.h),
 * and EXPECT and OK of a CUDA call's result.
 */
#ifndef GF_TEST_CHECK_H
#define GF_TEST_CHECK_H

#include <cuda.h>

#include "failures.h"

static inline const char *
err_name(CUresult r)
{
	const char *s = NULL;

	cuGetErrorName(r, &s);
	return s != NULL ? s : "?";
}

#define EXPECT(call, want) do {						\
	CUresult r_ = (call);						\
	CHECK(r_ == (want), "%s: got %s, want %s", #call,		\
	    err_name(r_), err_name(want));				\
} while (0)

#define OK(call)	EXPECT(call, CUDA_SUCCESS)

#endif
