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

/* A value observed weight times (e.g. a stage time shared by every request of
 * a batch). */
typedef struct {
  int64_t value;  /* ns */
  int64_t weight; /* >= 1 */
} CsWeightedSample;

/* Same statistics as cs_latency_stats over the multiset in which each sample
 * appears weight times, so the result equals that of the expanded array.
 * Sorts v by value. With no samples every field is NAN. */
void cs_weighted_latency_stats(CsWeightedSample *v, size_t n, CsLatencyStats *out);

/* Returns the sample of 0-based rank k (0 <= k < n) in ascending order,
 * reordering v[lo..n) so that smaller samples come first. Exposed for tests. */
int64_t cs_select_rank(int64_t *v, size_t n, size_t k);

#endif
