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
 * percentile within relative error a of the exact one; max and mean stay
 * exact.
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
  int64_t *values;         /* the buffer of values not yet in a block */
  int64_t *weights;        /* weighted: theirs; else NULL */
  int n, cap;              /* in the buffer; cap grows to CS_SAMPLES_BLOCK */
  GPtrArray *blocks;       /* CsSamplesBlock, owned */
  __int128 sum;            /* exact sum of value x weight */
  int64_t total;           /* sum of weights */
  int64_t max;
  size_t block_bytes;      /* memory the blocks hold */
} CsSamples;

/* A new empty multiset; weighted: cs_samples_add_weighted may be used (the
 * buffer then keeps a weight per value). sketch_error 0: exact; in (0, 0.5):
 * a sketch of that relative error (above). Never fails. */
CsSamples *cs_samples_new(gboolean weighted, double sketch_error);
void cs_samples_free(CsSamples *s);

/* Counts value weight times in a sketch set's bucket. */
void cs_samples_sketch_add(CsSamples *s, int64_t value, int64_t weight);

/* Moves the buffer into a block (cs_samples_add does it when the buffer is
 * full). */
void cs_samples_flush(CsSamples *s);

/* Adds value (ns, 0 <= value < 2^62) once. */
static inline void cs_samples_add(CsSamples *s, int64_t value)
{
  if (G_UNLIKELY(s->sketch_error > 0.0)) {
    cs_samples_sketch_add(s, value, 1);
    return;
  }
  if (G_UNLIKELY(s->n == s->cap)) {
    if (s->cap < CS_SAMPLES_BLOCK) {
      s->cap = s->cap ? s->cap * 4 : 256;
      s->values = g_renew(int64_t, s->values, s->cap);
      if (s->weighted)
        s->weights = g_renew(int64_t, s->weights, s->cap);
    } else {
      cs_samples_flush(s);
    }
  }
  if (s->weighted)
    s->weights[s->n] = 1;
  s->values[s->n++] = value;
  s->sum += value;
  s->total++;
  if (value > s->max)
    s->max = value;
}

/* Adds value weight (>= 1) times; s must be weighted. */
void cs_samples_add_weighted(CsSamples *s, int64_t value, int64_t weight);

/* The total weight (number of samples). */
static inline int64_t cs_samples_count(const CsSamples *s)
{
  return s->total;
}

/* Bytes s holds (blocks, their indexes and the buffer's allocation). */
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
