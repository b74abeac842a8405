/* Order statistics over latency samples. */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"

/* Fills out (in ms) with the nearest-rank percentiles p50/p90/p95/p99, the max
 * and the mean of the n samples in v (ns). Percentile p is the sample of rank
 * ceil(p/100 * n) in ascending order, so every reported value was observed.
 * Reorders v (linear-time selection, no full sort). With n == 0 every field is
 * NAN. */
void cs_latency_stats(int64_t *v, size_t n, CsLatencyStats *out);

/* Returns the sample of 0-based rank k (0 <= k < n) in ascending order,
 * reordering v[lo..n) so that smaller samples come first. Exposed for tests. */
int64_t cs_select_rank(int64_t *v, size_t n, size_t k);

#endif
