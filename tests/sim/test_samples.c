/* Compressed sample sets (samples.h): the same statistics as a full sort of
 * the expanded samples, on every shape that exercises the encoding (several
 * blocks, runs of equal values, weights, values near the 2^62 limit, unions
 * of sets), and a few bytes per sample on a realistic latency distribution. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/samples.h"

typedef struct {
  int64_t value, weight;
} Pair;

static int cmp_pair(const void *a, const void *b)
{
  int64_t x = ((const Pair *)a)->value, y = ((const Pair *)b)->value;
  return (x > y) - (x < y);
}

/* Nearest-rank statistics of the expanded multiset by a full sort: the
 * definition, written out without any of the code under test. */
static void reference(Pair *v, size_t n, CsLatencyStats *out)
{
  qsort(v, n, sizeof *v, cmp_pair);
  int64_t total = 0;
  long double sum = 0;
  for (size_t i = 0; i < n; i++) {
    total += v[i].weight;
    sum += (long double)v[i].value * v[i].weight;
  }
  const double pct[4] = { 50, 90, 95, 99 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  for (int q = 0; q < 4; q++) {
    int64_t rank = (int64_t)ceil(pct[q] / 100.0 * (double)total), cum = 0;
    if (rank < 1)
      rank = 1;
    size_t i = 0;
    while ((cum += v[i].weight) < rank)
      i++;
    *dst[q] = v[i].value / 1e6;
  }
  out->max = v[n - 1].value / 1e6;
  out->mean = (double)(sum / total) / 1e6;
}

static void assert_same(const CsLatencyStats *a, const CsLatencyStats *b)
{
  assert_true(a->p50 == b->p50);
  assert_true(a->p90 == b->p90);
  assert_true(a->p95 == b->p95);
  assert_true(a->p99 == b->p99);
  assert_true(a->max == b->max);
  /* The mean from an exact integer sum; the reference's long double agrees
   * to its last bits. */
  assert_float_equal(a->mean, b->mean, fabs(b->mean) * 1e-15);
}

/* n samples of draw(), weight 1 or from wdraw, into sets round robin. */
static void check_case(int n, int n_sets, gboolean weighted, int64_t (*draw)(gsl_rng *),
                       int64_t (*wdraw)(gsl_rng *))
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 42 + (unsigned long)n);
  CsSamples **sets = g_new0(CsSamples *, n_sets);
  for (int i = 0; i < n_sets; i++)
    sets[i] = cs_samples_new(weighted, 0.0);
  Pair *all = g_new(Pair, MAX(n, 1));
  for (int i = 0; i < n; i++) {
    all[i].value = draw(r);
    all[i].weight = wdraw ? wdraw(r) : 1;
    if (weighted)
      cs_samples_add_weighted(sets[i % n_sets], all[i].value, all[i].weight);
    else
      cs_samples_add(sets[i % n_sets], all[i].value);
  }
  CsLatencyStats got, want;
  cs_samples_stats(sets, n_sets, &got);
  if (n == 0) {
    assert_true(isnan(got.p50) && isnan(got.max) && isnan(got.mean));
  } else {
    reference(all, (size_t)n, &want);
    assert_same(&got, &want);
  }
  /* Adding after a query goes on from where it was. */
  if (n > 0 && !weighted) {
    cs_samples_add(sets[0], all[0].value);
    all = g_renew(Pair, all, n + 1);
    all[n] = all[0];
    cs_samples_stats(sets, n_sets, &got);
    reference(all, (size_t)n + 1, &want);
    assert_same(&got, &want);
  }
  for (int i = 0; i < n_sets; i++)
    cs_samples_free(sets[i]);
  g_free(sets);
  g_free(all);
  gsl_rng_free(r);
}

static int64_t exp_latency(gsl_rng *r)
{
  return (int64_t)(gsl_ran_exponential(r, 50e6)) + 2000000;
}

static int64_t few_values(gsl_rng *r)
{
  return 1000000 * (int64_t)gsl_rng_uniform_int(r, 5);
}

static int64_t huge_values(gsl_rng *r)
{
  return ((int64_t)1 << 62) - 1 - (int64_t)gsl_rng_uniform_int(r, 1000) * ((int64_t)1 << 50);
}

/* Latencies above a constant offset: high bits set and never varying (the
 * sort skips their digits). */
static int64_t offset_latency(gsl_rng *r)
{
  return ((int64_t)1 << 45) + exp_latency(r);
}

/* Values from 0 to 2^36 of every magnitude: sorted differences of every
 * varint length, 1 to 6 bytes (the encoding's fast path ends at 2^28). */
static int64_t spread_values(gsl_rng *r)
{
  return (int64_t)gsl_rng_uniform_int(r, 1 << 16) << gsl_rng_uniform_int(r, 21);
}

/* The same up to 2^41: values that differ above bit 36 (the other sort). */
static int64_t wide_values(gsl_rng *r)
{
  return (int64_t)gsl_rng_uniform_int(r, 1 << 16) << gsl_rng_uniform_int(r, 26);
}

/* Latencies with one in 40 at the largest value: blocks that end in a run
 * of it after a difference above 2^56 (the longest varints, 9 bytes, read
 * at the end of a block), and a p99 among them. */
static int64_t rare_huge(gsl_rng *r)
{
  return gsl_rng_uniform_int(r, 40) == 0 ? ((int64_t)1 << 62) - 1 : exp_latency(r);
}

/* The same up to 2^62: sorted differences of every varint length up to the
 * longest (8 bytes below 2^56, 9 above). */
static int64_t all_magnitudes(gsl_rng *r)
{
  return (int64_t)gsl_rng_uniform_int(r, 1 << 16) << gsl_rng_uniform_int(r, 47);
}

/* Most latencies at one value, the rest spread: radix digits that most but
 * not all keys share (a pass that may not be skipped). */
static int64_t mostly_one(gsl_rng *r)
{
  return gsl_rng_uniform_int(r, 10) < 7 ? 5000000 : exp_latency(r);
}

static int64_t constant_value(gsl_rng *r)
{
  (void)r;
  return 123456789;
}

static int64_t tiny_values(gsl_rng *r)
{
  return (int64_t)gsl_rng_uniform_int(r, 3);
}

static int64_t batch_weight(gsl_rng *r)
{
  return 1 + (int64_t)gsl_rng_uniform_int(r, 32);
}

static int64_t huge_weight(gsl_rng *r)
{
  return 1 + (int64_t)gsl_rng_uniform_int(r, 1000000000);
}

static void test_matches_full_sort(void **state)
{
  (void)state;
  check_case(0, 1, FALSE, exp_latency, NULL);
  check_case(1, 1, FALSE, exp_latency, NULL);
  check_case(7, 3, FALSE, exp_latency, NULL);          /* a set stays empty */
  check_case(1000, 1, FALSE, exp_latency, NULL);       /* buffer only */
  check_case(100000, 1, FALSE, exp_latency, NULL);     /* several blocks */
  check_case(100000, 5, FALSE, exp_latency, NULL);     /* a union */
  check_case(50000, 1, FALSE, few_values, NULL);       /* long runs of equal values */
  check_case(50000, 2, FALSE, tiny_values, NULL);      /* 0 included */
  check_case(40000, 1, FALSE, huge_values, NULL);      /* near 2^62 */
  check_case(40000, 1, FALSE, offset_latency, NULL);   /* constant high bits */
  check_case(40000, 1, FALSE, constant_value, NULL);   /* nothing to sort */
  check_case(40000, 1, FALSE, mostly_one, NULL);       /* digits shared by most keys */
  check_case(40000, 1, FALSE, spread_values, NULL);    /* every varint length */
  check_case(40000, 1, FALSE, wide_values, NULL);      /* differ above bit 36 */
  check_case(40000, 1, FALSE, all_magnitudes, NULL);
  check_case(40000, 1, FALSE, rare_huge, NULL);        /* 9-byte varints at the end */
  check_case(40000, 2, TRUE, rare_huge, batch_weight);
  check_case(40000, 2, TRUE, spread_values, batch_weight);
  check_case(40000, 2, TRUE, wide_values, batch_weight);
  check_case(60000, 3, TRUE, exp_latency, batch_weight);
  check_case(30000, 1, TRUE, few_values, batch_weight); /* equal values merged, weights added */
  check_case(20000, 2, TRUE, exp_latency, huge_weight);
}

/* A union of sets whose values lie in disjoint ranges, and sets that
 * overlap them: each percentile falls in one set's blocks while the others
 * lie wholly below or above it, or straddle it. */
static void test_union_of_ranges(void **state)
{
  (void)state;
  enum { SETS = 6, PER = 30000 };
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CsSamples *sets[SETS];
  Pair *all = g_new(Pair, SETS * PER);
  for (int i = 0; i < SETS; i++) {
    sets[i] = cs_samples_new(i % 2 == 1, 0.0);
    for (int k = 0; k < PER; k++) {
      /* Sets 0, 2, 4: one range each; sets 1, 3, 5: across all of them. */
      int64_t v = i % 2 == 0 ? (int64_t)i * 1000000000 + exp_latency(r)
                             : (int64_t)(gsl_rng_uniform(r) * 5e9);
      int64_t w = i % 2 == 1 ? batch_weight(r) : 1;
      all[i * PER + k] = (Pair){ v, w };
      if (i % 2 == 1)
        cs_samples_add_weighted(sets[i], v, w);
      else
        cs_samples_add(sets[i], v);
    }
  }
  CsLatencyStats got, want;
  for (int n = 1; n <= SETS; n++) {
    cs_samples_stats(sets, n, &got);
    reference(all, (size_t)n * PER, &want); /* sorts all[0..n x PER): sets stay whole */
    assert_same(&got, &want);
  }
  for (int i = 0; i < SETS; i++)
    cs_samples_free(sets[i]);
  g_free(all);
  gsl_rng_free(r);
}

/* The figure the encoding is for: Poisson-like latencies (an exponential of
 * 50 ms mean above 2 ms), one million, take under 4 bytes each, where an
 * int64 array takes 8 (16 after doubling). */
static void test_compact(void **state)
{
  (void)state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CsSamples *s = cs_samples_new(FALSE, 0.0);
  for (int i = 0; i < 1000000; i++)
    cs_samples_add(s, exp_latency(r));
  cs_samples_flush(s);
  double per = (double)cs_samples_bytes(s) / 1e6;
  print_message("%.2f bytes per sample\n", per);
  assert_true(per < 4.0);
  cs_samples_free(s);
  gsl_rng_free(r);
}

/* Sketch sets: every percentile within the stated relative error of the
 * exact one, max and mean exact, and memory that does not grow with the
 * number of samples. */
static void check_sketch(double a, int n, int n_sets, gboolean weighted,
                         int64_t (*draw)(gsl_rng *), int64_t (*wdraw)(gsl_rng *))
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7 + (unsigned long)n);
  CsSamples **exact = g_new0(CsSamples *, n_sets), **sketch = g_new0(CsSamples *, n_sets);
  for (int i = 0; i < n_sets; i++) {
    exact[i] = cs_samples_new(weighted, 0.0);
    sketch[i] = cs_samples_new(weighted, a);
  }
  for (int i = 0; i < n; i++) {
    int64_t v = draw(r), w = wdraw ? wdraw(r) : 1;
    if (weighted) {
      cs_samples_add_weighted(exact[i % n_sets], v, w);
      cs_samples_add_weighted(sketch[i % n_sets], v, w);
    } else {
      cs_samples_add(exact[i % n_sets], v);
      cs_samples_add(sketch[i % n_sets], v);
    }
  }
  CsLatencyStats e, k;
  cs_samples_stats(exact, n_sets, &e);
  cs_samples_stats(sketch, n_sets, &k);
  const double want[4] = { e.p50, e.p90, e.p95, e.p99 }, got[4] = { k.p50, k.p90, k.p95, k.p99 };
  for (int q = 0; q < 4; q++)
    assert_true(fabs(got[q] - want[q]) <= a * want[q] * (1 + 1e-9) + 1e-12);
  assert_true(k.max == e.max);
  assert_true(k.mean == e.mean);
  for (int i = 0; i < n_sets; i++) {
    assert_true(cs_samples_bytes(sketch[i]) < 64 * 1024);
    cs_samples_free(exact[i]);
    cs_samples_free(sketch[i]);
  }
  g_free(exact);
  g_free(sketch);
  gsl_rng_free(r);
}

static void test_sketch_relative_error(void **state)
{
  (void)state;
  check_sketch(0.01, 200000, 1, FALSE, exp_latency, NULL);
  check_sketch(0.01, 100000, 3, FALSE, exp_latency, NULL);
  check_sketch(0.001, 100000, 1, FALSE, exp_latency, NULL);
  check_sketch(0.05, 50000, 2, FALSE, tiny_values, NULL);   /* zeros */
  check_sketch(0.01, 50000, 1, FALSE, few_values, NULL);
  check_sketch(0.01, 40000, 1, FALSE, huge_values, NULL);
  check_sketch(0.02, 60000, 2, TRUE, exp_latency, batch_weight);
  /* Empty: every field NAN. */
  CsSamples *s = cs_samples_new(FALSE, 0.01);
  CsLatencyStats out;
  cs_samples_stats(&s, 1, &out);
  assert_true(isnan(out.p50) && isnan(out.max) && isnan(out.mean));
  cs_samples_free(s);
}

/* Property: a sketch's percentiles are ordered and lie within the exact
 * [min, max] of the samples, whatever their number and the relative error.
 * A bucket's midpoint can lie above every value in it: 111.53 ms alone at
 * a = 0.1 read p50 = ... = p99 = 114.61 ms, above its max (the quickstart
 * with few requests and outputs.percentile_sketch 0.1). */
static void test_sketch_within_min_max(void **state)
{
  (void)state;
  CsSamples *one = cs_samples_new(FALSE, 0.1);
  cs_samples_add(one, 111530000);
  CsLatencyStats out;
  cs_samples_stats(&one, 1, &out);
  assert_true(out.p50 == 111.53 && out.p90 == 111.53 && out.p95 == 111.53 &&
              out.p99 == 111.53 && out.max == 111.53);
  cs_samples_free(one);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 34);
  const double errors[] = { 0.001, 0.01, 0.05, 0.1, 0.3 };
  for (int e = 0; e < 5; e++)
    for (int n = 1; n <= 60; n++) {
      CsSamples *sets[2] = { cs_samples_new(FALSE, errors[e]), cs_samples_new(TRUE, errors[e]) };
      int64_t lo = INT64_MAX, hi = 0;
      for (int i = 0; i < n; i++) {
        int64_t v = exp_latency(r);
        lo = MIN(lo, v);
        hi = MAX(hi, v);
        if (i % 2)
          cs_samples_add_weighted(sets[1], v, 1 + (int64_t)gsl_rng_uniform_int(r, 5));
        else
          cs_samples_add(sets[0], v);
      }
      cs_samples_stats(sets, 2, &out);
      assert_true(out.max == hi / 1e6);
      assert_true(lo / 1e6 <= out.p50 && out.p50 <= out.p90 && out.p90 <= out.p95 &&
                  out.p95 <= out.p99 && out.p99 <= out.max);
      cs_samples_free(sets[0]);
      cs_samples_free(sets[1]);
    }
  gsl_rng_free(r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_matches_full_sort),
    cmocka_unit_test(test_sketch_within_min_max),
    cmocka_unit_test(test_union_of_ranges),
    cmocka_unit_test(test_compact),
    cmocka_unit_test(test_sketch_relative_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
