/*
 * Assertions for the simulator's own test programs: a failed check prints
 * one "FAIL function:line: ..." line (flushed, so a forked peer's output
 * stays in order) and counts in `failures`; the program exits non-zero
 * when any failed.
 */
#ifndef GF_TEST_CHECK_H
#define GF_TEST_CHECK_H

#include <cuda.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
		failures++;						\
	}								\
} while (0)

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
