/*
 * CHECK for the test programs: a failed check prints one "FAIL
 * function:line: ..." line (flushed, so a forked peer's output stays in
 * order) and counts in `failures`; the program exits non-zero when any
 * failed. check.h adds the CUDA calls' EXPECT and OK to it.
 */
#ifndef GF_TEST_FAILURES_H
#define GF_TEST_FAILURES_H

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

#endif
