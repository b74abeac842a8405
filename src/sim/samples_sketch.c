/* The sketch mode of a set of samples (samples.h): counts in DDSketch's
 * logarithmic buckets (gamma^(i-1), gamma^i], gamma = (1 + a) / (1 - a),
 * so that the midpoint of a value's bucket, in relative terms, is within
 * relative error a of it. */
#include "samples.h"

#include <limits.h>
#include <math.h>
#include <string.h>

void cs_samples_sketch_add(CsSamples *s, int64_t value, int64_t weight)
{
  s->sum += (__int128)value * weight;
  s->total += weight;
  if (value > s->max)
    s->max = value;
  if (value < s->sketch_min)
    s->sketch_min = value;
  if (value <= 0) {
    s->zeros += weight;
    return;
  }
  int i = (int)ceil(log((double)value) / s->log_gamma);
  if (s->n_buckets == 0) {
    s->first_bucket = i;
    s->n_buckets = 1;
    s->bucket = g_new0(int64_t, 1);
  } else if (i < s->first_bucket || i >= s->first_bucket + s->n_buckets) {
    int lo = MIN(i, s->first_bucket), hi = MAX(i, s->first_bucket + s->n_buckets - 1);
    int64_t *grown = g_new0(int64_t, hi - lo + 1);
    memcpy(grown + (s->first_bucket - lo), s->bucket, sizeof(int64_t) * (size_t)s->n_buckets);
    g_free(s->bucket);
    s->bucket = grown;
    s->first_bucket = lo;
    s->n_buckets = hi - lo + 1;
  }
  s->bucket[i - s->first_bucket] += weight;
}

void cs_samples_sketch_stats(CsSamples *const *sets, int n, CsLatencyStats *out)
{
  int lo = INT_MAX, hi = INT_MIN;
  __int128 sum = 0;
  int64_t total = 0, zeros = 0, max = INT64_MIN, min = INT64_MAX;
  double log_gamma = 0.0;
  for (int i = 0; i < n; i++) {
    const CsSamples *s = sets[i];
    if (!s || s->total == 0)
      continue;
    g_return_if_fail(log_gamma == 0.0 || s->log_gamma == log_gamma);
    log_gamma = s->log_gamma;
    sum += s->sum;
    total += s->total;
    zeros += s->zeros;
    max = MAX(max, s->max);
    min = MIN(min, s->sketch_min);
    if (s->n_buckets > 0) {
      lo = MIN(lo, s->first_bucket);
      hi = MAX(hi, s->first_bucket + s->n_buckets - 1);
    }
  }
  if (total == 0) {
    out->p50 = out->p90 = out->p95 = out->p99 = out->max = out->mean = NAN;
    return;
  }
  int64_t *merged = g_new0(int64_t, hi >= lo ? hi - lo + 1 : 1);
  for (int i = 0; i < n; i++)
    for (int k = 0; sets[i] && k < sets[i]->n_buckets; k++)
      merged[sets[i]->first_bucket + k - lo] += sets[i]->bucket[k];
  static const double pct[4] = { 50.0, 90.0, 95.0, 99.0 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  double gamma = exp(log_gamma);
  int64_t cum = zeros;
  int b = lo;
  for (int q = 0; q < 4; q++) {
    int64_t rank = MAX((int64_t)ceil(pct[q] / 100.0 * (double)total), 1);
    while (cum < rank && b <= hi)
      cum += merged[b++ - lo];
    /* The rank-th value is 0, or in bucket b - 1: (gamma^(b-2), gamma^(b-1)];
     * its midpoint in relative terms is within a of every value there. */
    double mid = rank <= zeros ? 0.0 : 2.0 * exp(log_gamma * (b - 1)) / (gamma + 1.0) / 1e6;
    /* Every value lies in [min, max], so clamping there only brings the
     * estimate closer; without it p99 of 111.53 ms samples read 114.61 ms
     * (a = 0.1), above the exact max. */
    *dst[q] = CLAMP(mid, min / 1e6, max / 1e6);
  }
  out->max = max / 1e6;
  out->mean = (double)sum / (double)total / 1e6;
  g_free(merged);
}
