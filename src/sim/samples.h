/* Exact order statistics of many latency samples in little memory.
 *
 * A CsSamples is a multiset of durations (ns, in [0, 2^62)) with integer
 * weights. Appending is a store into a buffer; each full buffer (at most
 * CS_SAMPLES_BLOCK values) is sorted and encoded as a block: the values in
 * ascending order, each as the varint of its difference from the one before
 * (equal values merged, their weights added), with a sparse index. Sorted
 * neighbours are close, so a latency takes 2-3 bytes instead of the 8 of an
 * int64 (plus up to 8 more of array doubling): docs/performance.md has the
 * figures. Nothing is approximated: cs_samples_stats gives exactly what
 * cs_latency_stats (stats.h) gives on the samples expanded by their
 * weights, by bisection on the value with exact counts per block.
 *
 * A sketch set (a sketch error > 0) keeps instead counts in buckets
 * (gamma^(i-1), gamma^i] with gamma = (1 + a) / (1 - a), DDSketch's
 * logarithmic buckets: constant memory (a few thousand counters), and each
 * percentile within relative error a of the exact one and within the exact
 * [min, max] (a bucket's midpoint may lie above the largest value in it, and
 * p99 <= max must hold); max and mean stay exact.
 *
 * Not thread-safe; nothing global.
 */
#ifndef CS_SAMPLES_H
#define CS_SAMPLES_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/clustersim.h"

#define CS_SAMPLES_BLOCK 16384

typedef struct CsSamplesBlock CsSamplesBlock;

typedef struct {
  gboolean weighted;
  /* Sketch mode (relative error > 0): counts per logarithmic bucket. */
  double sketch_error;     /* a; 0: exact */
  double log_gamma;        /* log((1 + a) / (1 - a)) */
  int64_t *bucket;         /* counts of buckets first_bucket .. + n_buckets - 1 */
  int first_bucket, n_buckets;
  int64_t zeros;           /* values of 0 ns */
  int64_t sketch_min;      /* a sketch set's smallest value (INT64_MAX when empty) */
  int64_t *values;         /* the buffer of values not yet in a block */
  int64_t *weights;        /* weighted: theirs; else NULL */
  int n, cap;              /* in the buffer; cap grows to CS_SAMPLES_BLOCK (stays 0 for a sketch) */
  int weighted_cap;        /* cap if weighted (what the weighted fast path tests), else 0 */
  int64_t buf_min, buf_max; /* of the buffer's values (INT64_MAX, INT64_MIN when empty) */
  GPtrArray *blocks;       /* CsSamplesBlock, each one slab piece, owned (samples.c) */
  __int128 sum;            /* exact sum of value x weight (of an exact set: in blocks; flushing adds the buffer's) */
  int64_t total;           /* sum of weights */
  int64_t max;             /* of the values in blocks as given, before any clamping (and,
                            * for a sketch, of all) */
  size_t block_bytes;      /* memory the blocks hold */
} CsSamples;

/* A new empty multiset; weighted: cs_samples_add_weighted may be used (the
 * buffer then keeps a weight per value). sketch_error 0: exact; in (0, 0.5):
 * a sketch of that relative error (above). Never fails. */
CsSamples *cs_samples_new(gboolean weighted, double sketch_error);
void cs_samples_free(CsSamples *s);

/* Counts value weight times in a sketch set's bucket (samples_sketch.c). */
void cs_samples_sketch_add(CsSamples *s, int64_t value, int64_t weight);

/* cs_samples_stats for sketch sets, all of one relative error
 * (samples_sketch.c). */
void cs_samples_sketch_stats(CsSamples *const *sets, int n, CsLatencyStats *out);

/* Moves the buffer into a block (cs_samples_add does it when the buffer is
 * full). */
void cs_samples_flush(CsSamples *s);

/* Makes room in a full buffer (grows it, or moves it into a block). Returns
 * FALSE for a sketch set, whose values go to cs_samples_sketch_add. */
gboolean cs_samples_make_room(CsSamples *s);

/* Adds value (ns, 0 <= value < 2^62) once. A sketch set keeps a buffer of
 * capacity 0, so that one test sends it and a full buffer off the fast path. */
static inline void cs_samples_add(CsSamples *s, int64_t value)
{
  if (G_UNLIKELY(s->n == s->cap) && !cs_samples_make_room(s)) {
    cs_samples_sketch_add(s, value, 1);
    return;
  }
  if (s->weighted)
    s->weights[s->n] = 1;
  s->values[s->n++] = value;
  s->total++;
  s->buf_min = MIN(s->buf_min, value);
  s->buf_max = MAX(s->buf_max, value);
}

/* cs_samples_add_many off its fast path: a full buffer, a weighted set, a
 * sketch. */
void cs_samples_add_many_slow(CsSamples *s, const int64_t *values, int k);

/* Adds values[0..k) once each: the same as k calls of cs_samples_add, with
 * the set's fields kept in registers (the engine adds a batch's latencies,
 * a few at a time: inline, without a call). */
static inline void cs_samples_add_many(CsSamples *s, const int64_t *values, int k)
{
  if (G_UNLIKELY(k > s->cap - s->n || s->weighted)) {
    cs_samples_add_many_slow(s, values, k);
    return;
  }
  int64_t *dst = s->values + s->n, lo = s->buf_min, hi = s->buf_max;
  for (int i = 0; i < k; i++) {
    int64_t v = values[i];
    dst[i] = v;
    lo = MIN(lo, v);
    hi = MAX(hi, v);
  }
  s->n += k;
  s->total += k;
  s->buf_min = lo;
  s->buf_max = hi;
}

/* cs_samples_add_weighted off its fast path: checks the arguments, adds to
 * a sketch, makes room. */
void cs_samples_add_weighted_slow(CsSamples *s, int64_t value, int64_t weight);

/* Adds value weight (>= 1) times; s must be weighted. Inline, as the engine
 * adds each batch's stage times: two tests send a full buffer, a sketch or
 * unweighted set (weighted_cap 0) and a bad weight off the fast path. */
static inline void cs_samples_add_weighted(CsSamples *s, int64_t value, int64_t weight)
{
  if (G_UNLIKELY(s->n >= s->weighted_cap || weight < 1)) {
    cs_samples_add_weighted_slow(s, value, weight);
    return;
  }
  s->weights[s->n] = weight;
  s->values[s->n++] = value;
  s->total += weight;
  s->buf_min = MIN(s->buf_min, value);
  s->buf_max = MAX(s->buf_max, value);
}

/* The total weight (number of samples). */
static inline int64_t cs_samples_count(const CsSamples *s)
{
  return s->total;
}

/* Bytes s holds (blocks, their indexes and the buffer's allocation); the
 * slabs they are pieces of may hold more, shared with other sets (slab.h). */
size_t cs_samples_bytes(const CsSamples *s);

/* Fills out (ms) with the nearest-rank p50/p90/p95/p99, max and mean of the
 * union of sets[0..n) (a NULL set counts as empty): exactly the figures of
 * cs_latency_stats over the samples expanded by their weights (the rank-th
 * smallest for rank ceil(p/100 x count)); for sketch sets (all of one
 * relative error a) each percentile within relative error a of that, max
 * and mean exact. Flushes every set's
 * buffer. With no sample every field is NAN. */
void cs_samples_stats(CsSamples *const *sets, int n, CsLatencyStats *out);

#endif
