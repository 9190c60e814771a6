/*
 * The benchmark's clock and statistics: monotonic nanoseconds, nearest-rank
 * quantiles, medians of repetitions.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

static int
double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
stats_quantile(double *v, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), double_cmp);
	rank = (size_t)ceil(p * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/* The middle value; the mean of the two middle ones for an even count. */
double
stats_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), double_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
