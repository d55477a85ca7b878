// SPDX-License-Identifier: GPL-2.0
/*
 * Latency statistics over the samples a latency test stored, as perftest's
 * latency tests report them.  No I/O, so that tests/unit.c can check the
 * numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kverbs.h"

static int kv_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Nearest rank: the smallest sample that at least @num/@den of all samples
 * do not exceed, sorted[ceil(n * num / den) - 1].  In integers, because
 * 0.99 * n in doubles can land a hair above a whole number and take the
 * next rank.
 */
static uint64_t kv_percentile(const uint64_t *sorted, size_t n, uint64_t num,
			      uint64_t den)
{
	uint64_t rank = ((uint64_t)n * num + den - 1) / den;

	return sorted[rank ? rank - 1 : 0];
}

/**
 * kv_lat_stats_compute - perftest's latency columns from samples in ns
 * @ns: the samples, in any order; not modified
 * @n: how many; every one counts, none is dropped as an outlier
 * @st: filled in, in microseconds
 *
 * Returns 0, -EINVAL when @n is 0, or -ENOMEM when there is no memory for
 * the sorted copy; @st is untouched on failure.
 */
int kv_lat_stats_compute(const uint64_t *ns, size_t n, struct kv_lat_stats *st)
{
	double sum = 0, sq = 0, avg;
	uint64_t *sorted;
	size_t i;

	if (!n)
		return -EINVAL;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, ns, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), kv_u64_cmp);

	for (i = 0; i < n; i++)
		sum += sorted[i];
	avg = sum / n;
	/* Two passes: the sum of squares minus n * avg^2 loses the digits. */
	for (i = 0; i < n; i++)
		sq += (sorted[i] - avg) * (sorted[i] - avg);

	st->samples = n;
	st->min = sorted[0] / 1e3;
	st->max = sorted[n - 1] / 1e3;
	/*
	 * The sample at n/2, as perftest's get_median() takes it for the odd
	 * counts its defaults give (1000 iterations less 3); for an even
	 * count that is the upper of the two middle samples, where perftest
	 * would average them.  One measured time, not a mean of two.
	 */
	st->typical = sorted[n / 2] / 1e3;
	st->avg = avg / 1e3;
	/* Of the population: these are all the samples there are. */
	st->stdev = sqrt(sq / n) / 1e3;
	st->p99 = kv_percentile(sorted, n, 99, 100) / 1e3;
	st->p99_9 = kv_percentile(sorted, n, 999, 1000) / 1e3;
	free(sorted);
	return 0;
}
