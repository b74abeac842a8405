/* Percentiles by repeated three-way quickselect; see stats.h.
 *
 * Why not sort: a one-hour run holds tens of millions of samples per array and
 * only five ranks are wanted; selection is linear, sorting n log n. Three-way
 * partitioning keeps runs of equal latencies (common with deterministic
 * service times) linear instead of quadratic. */
#include "stats.h"

#include <math.h>

static inline void swap64(int64_t *a, int64_t *b)
{
  int64_t t = *a;
  *a = *b;
  *b = t;
}

static int64_t median3(int64_t a, int64_t b, int64_t c)
{
  if (a > b) {
    int64_t t = a;
    a = b;
    b = t;
  }
  return c < a ? a : (c > b ? b : c);
}

/* Selects rank k within v[lo, hi) and returns the value; afterwards v[lo, k)
 * holds values <= it and v(k, hi) values >= it. */
static int64_t select_range(int64_t *v, size_t lo, size_t hi, size_t k)
{
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t pivot = median3(v[lo], v[mid], v[hi - 1]);
    /* Dutch national flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot. */
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      if (v[i] < pivot)
        swap64(&v[lt++], &v[i++]);
      else if (v[i] > pivot)
        swap64(&v[i], &v[--gt]);
      else
        i++;
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return pivot;
  }
  return v[k];
}

int64_t cs_select_rank(int64_t *v, size_t n, size_t k)
{
  return select_range(v, 0, n, k);
}

void cs_latency_stats(int64_t *v, size_t n, CsLatencyStats *out)
{
  if (n == 0) {
    out->p50 = out->p90 = out->p95 = out->p99 = out->max = out->mean = NAN;
    return;
  }
  static const double pct[4] = { 50.0, 90.0, 95.0, 99.0 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  size_t lo = 0;
  for (int i = 0; i < 4; i++) {
    size_t rank = (size_t)ceil(pct[i] / 100.0 * (double)n);
    size_t k = rank > 0 ? rank - 1 : 0;
    /* Ranks ascend, so each search starts where the previous one left off. */
    *dst[i] = select_range(v, lo, n, k) / 1e6;
    lo = k;
  }
  int64_t mx = v[lo];
  /* Exact integer sum: no rounding, and the same result whatever the order. */
  __int128 sum = 0;
  for (size_t i = 0; i < n; i++) {
    sum += v[i];
    if (v[i] > mx)
      mx = v[i];
  }
  out->max = mx / 1e6;
  out->mean = (double)sum / (double)n / 1e6;
}
