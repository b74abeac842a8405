/* Percentiles: nearest-rank definition, selection against a full sort; the
 * random streams (rng.h): published and independent reference outputs. */
#include <float.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "sim/rng.h"
#include "sim/samples.h"
#include "sim/stats.h"

static int cmp64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void test_nearest_rank(void **state)
{
  (void)state;
  /* 1..100 ms: p50 is the 50th value, p99 the 99th. */
  int64_t v[100];
  for (int i = 0; i < 100; i++)
    v[i] = (int64_t)(100 - i) * 1000000;
  CsLatencyStats s;
  cs_latency_stats(v, 100, &s);
  assert_float_equal(s.p50, 50.0, 1e-12);
  assert_float_equal(s.p90, 90.0, 1e-12);
  assert_float_equal(s.p95, 95.0, 1e-12);
  assert_float_equal(s.p99, 99.0, 1e-12);
  assert_float_equal(s.max, 100.0, 1e-12);
  assert_float_equal(s.mean, 50.5, 1e-12);
  int64_t one = 7000000;
  cs_latency_stats(&one, 1, &s);
  assert_float_equal(s.p50, 7.0, 1e-12);
  assert_float_equal(s.p99, 7.0, 1e-12);
  cs_latency_stats(NULL, 0, &s);
  assert_true(isnan(s.p50) && isnan(s.mean));
}

static void test_select_matches_sort(void **state)
{
  (void)state;
  GRand *rand = g_rand_new_with_seed(11);
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + (size_t)g_rand_int_range(rand, 0, 3000);
    int64_t *v = g_new(int64_t, n), *sorted = g_new(int64_t, n);
    int range = round % 2 ? 5 : 1000000; /* heavy duplicates, then few */
    for (size_t i = 0; i < n; i++)
      v[i] = sorted[i] = g_rand_int_range(rand, 0, range);
    qsort(sorted, n, sizeof *sorted, cmp64);
    CsLatencyStats s;
    cs_latency_stats(v, n, &s);
    const double pct[] = { 50, 90, 95, 99 };
    const double got[] = { s.p50, s.p90, s.p95, s.p99 };
    for (int k = 0; k < 4; k++) {
      size_t rank = (size_t)ceil(pct[k] / 100.0 * n);
      assert_float_equal(got[k], sorted[rank - 1] / 1e6, 1e-12);
    }
    assert_float_equal(s.max, sorted[n - 1] / 1e6, 1e-12);
    g_free(v);
    g_free(sorted);
  }
  g_rand_free(rand);
}

/* Weighted samples (samples.h) give exactly the statistics of the expanded
 * samples by selection. */
static void test_weighted_matches_expanded(void **state)
{
  (void)state;
  GRand *rand = g_rand_new_with_seed(13);
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + (size_t)g_rand_int_range(rand, 0, 300);
    CsSamples *w = cs_samples_new(TRUE, 0.0);
    GArray *expanded = g_array_new(FALSE, FALSE, sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
      int64_t value = g_rand_int_range(rand, 0, round % 2 ? 20 : 5000000);
      int64_t weight = g_rand_int_range(rand, 1, 17);
      cs_samples_add_weighted(w, value, weight);
      for (int64_t k = 0; k < weight; k++)
        g_array_append_val(expanded, value);
    }
    CsLatencyStats a, b;
    cs_samples_stats(&w, 1, &a);
    cs_latency_stats((int64_t *)expanded->data, expanded->len, &b);
    assert_float_equal(a.p50, b.p50, 0.0);
    assert_float_equal(a.p90, b.p90, 0.0);
    assert_float_equal(a.p95, b.p95, 0.0);
    assert_float_equal(a.p99, b.p99, 0.0);
    assert_float_equal(a.max, b.max, 0.0);
    assert_float_equal(a.mean, b.mean, 1e-9);
    cs_samples_free(w);
    g_array_unref(expanded);
  }
  g_rand_free(rand);
}

/* xoshiro256** against its authors' reference implementation: from the
 * state {1, 2, 3, 4} its first ten outputs, as published by the `reference`
 * test of the Rust crate rand_xoshiro (xoshiro256starstar.rs, "produced with
 * the reference implementation"); the splitmix64 expansion of a seed gives
 * splitmix64's published first outputs of that seed (rand_xoshiro's
 * splitmix64.rs, seed 1477776061723855037). */
static void test_rng_published_outputs(void **state)
{
  (void)state;
  CsRngState st = { { 1, 2, 3, 4 } };
  static const uint64_t want[] = { 11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL,
                                   1216172134540287360ULL, 607988272756665600ULL,
                                   16172922978634559625ULL, 8476171486693032832ULL,
                                   10595114339597558777ULL, 2904607092377533576ULL };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
    assert_true(cs_rng_next(&st) == want[i]);
  cs_rng_state_seed(&st, 1477776061723855037ULL);
  assert_true(st.s[0] == 1985237415132408290ULL);
  assert_true(st.s[1] == 2979275885539914483ULL);
  assert_true(st.s[2] == 13511426838097143398ULL);
}

/* Whole streams, from the seed and name to the first draws, against an
 * independent implementation: the table is tests/sim/rng_reference.py's
 * output (the test rng_reference fails when they differ). Each draw is
 * checked by every road a stream is read: 64 bits (the policy's stream),
 * cs_rng_uniform (arrivals), gsl_rng_uniform and gsl_rng_get (GSL's
 * distributions, through cs_rng_type). */
typedef struct {
  uint64_t seed;
  const char *name;
  uint64_t stream_seed;
  uint64_t draws[4];
} StreamRef;

static const StreamRef stream_refs[] = {
  /* rng_reference.py: begin (generated: tests/sim/rng_reference.py) */
  { 0x0000000000000001ULL, "client/resnet50/arrivals", 0x3b6c850b4a94eb07ULL, { 0x9e0c7c7deb2698eeULL, 0xe4396ef1ed9f8224ULL, 0xc11374947c381966ULL, 0x9e78934c85abd64dULL } },
  { 0x000000000000002aULL, "dispatch/nexus", 0xdba18c25f9fabf30ULL, { 0x0d7bff85faff58e5ULL, 0x7bad65dc7d63a91bULL, 0x4ffec7135a1faac5ULL, 0xc482df6b485855a1ULL } },
  { 0x0000000000000000ULL, "", 0xaebe53f85cdc3c4cULL, { 0xee8e4caeac743bdfULL, 0x25433d3b5ff51db0ULL, 0x9a39c887ad08347aULL, 0xee5e34442b2290d1ULL } },
  { 0xffffffffffffffffULL, "client/bert/arrivals", 0x63d5e840b845692aULL, { 0x0fef2d5297534da5ULL, 0x605ab3165ce4ce7bULL, 0x0a6186e5c211314bULL, 0x0eed47788800e387ULL } },
  /* rng_reference.py: end */
};

static void test_rng_stream_reference(void **state)
{
  (void)state;
  for (size_t k = 0; k < G_N_ELEMENTS(stream_refs); k++) {
    const StreamRef *ref = &stream_refs[k];
    assert_true(cs_rng_stream_seed(ref->seed, ref->name) == ref->stream_seed);
    gsl_rng *bits = cs_rng_stream_new(ref->seed, ref->name), *unit = cs_rng_stream_new(ref->seed, ref->name);
    gsl_rng *gsl_unit = cs_rng_stream_new(ref->seed, ref->name), *gsl_word = cs_rng_stream_new(ref->seed, ref->name);
    for (int i = 0; i < 4; i++) {
      uint64_t w = ref->draws[i];
      double u = ldexp((double)(w >> 11), -53); /* the top 53 bits, times 2^-53 */
      assert_true(cs_rng_bits64(bits) == w);
      assert_true(cs_rng_uniform(unit) == u);
      assert_true(gsl_rng_uniform(gsl_unit) == u);
      assert_true(gsl_rng_get(gsl_word) == (unsigned long)(w >> 32));
    }
    gsl_rng_free(bits);
    gsl_rng_free(unit);
    gsl_rng_free(gsl_unit);
    gsl_rng_free(gsl_word);
  }
}

static void test_rng_streams(void **state)
{
  (void)state;
  /* Same (seed, name): same stream. Another name or seed: another stream. */
  assert_true(cs_rng_stream_seed(1, "client/a/arrivals") == cs_rng_stream_seed(1, "client/a/arrivals"));
  assert_true(cs_rng_stream_seed(1, "client/a/arrivals") != cs_rng_stream_seed(1, "client/b/arrivals"));
  assert_true(cs_rng_stream_seed(1, "client/a/arrivals") != cs_rng_stream_seed(2, "client/a/arrivals"));
  gsl_rng *x = cs_rng_stream_new(5, "s"), *y = cs_rng_stream_new(5, "s"), *z = cs_rng_stream_new(5, "t");
  gsl_rng *v = cs_rng_stream_new(6, "s");
  int same_z = 0, same_v = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t a = cs_rng_bits64(x), b = cs_rng_bits64(y), c = cs_rng_bits64(z), d = cs_rng_bits64(v);
    assert_true(a == b);
    same_z += a == c;
    same_v += a == d;
  }
  assert_int_equal(same_z, 0); /* by chance with probability 2^-64 each */
  assert_int_equal(same_v, 0);
  /* Independent streams: over a million pairs of uniforms of two streams
   * the correlation is within 5 standard errors (1 / sqrt(n)) of 0, and
   * each stream's mean within 5 of its 1/2 (standard error 1 / sqrt(12 n)). */
  enum { N = 1000000 };
  double sx = 0, sz = 0, sxz = 0, sxx = 0, szz = 0;
  for (int i = 0; i < N; i++) {
    double a = cs_rng_uniform(x), c = cs_rng_uniform(z);
    sx += a, sz += c, sxz += a * c, sxx += a * a, szz += c * c;
  }
  double mx = sx / N, mz = sz / N;
  double corr = (sxz / N - mx * mz) / sqrt((sxx / N - mx * mx) * (szz / N - mz * mz));
  assert_true(fabs(corr) < 5.0 / sqrt(N));
  assert_true(fabs(mx - 0.5) < 5.0 / sqrt(12.0 * N));
  assert_true(fabs(mz - 0.5) < 5.0 / sqrt(12.0 * N));
  gsl_rng_free(x);
  gsl_rng_free(y);
  gsl_rng_free(z);
  gsl_rng_free(v);
  /* The whole 64-bit stream seed counts: version 1 folded it to 32 bits
   * (s ^ s >> 32), which maps 2^32 and 1 to the same seed. */
  CsRngState p, q;
  cs_rng_state_seed(&p, (uint64_t)1 << 32);
  cs_rng_state_seed(&q, 1);
  assert_true(cs_rng_next(&p) != cs_rng_next(&q));
  /* gsl_rng_set seeds as cs_rng_state_seed does. */
  gsl_rng *r = gsl_rng_alloc(&cs_rng_type);
  gsl_rng_set(r, 77);
  cs_rng_state_seed(&p, 77);
  for (int i = 0; i < 10; i++)
    assert_true(cs_rng_bits64(r) == cs_rng_next(&p));
  gsl_rng_free(r);
}

/* cs_rng_uniform (the inline path) is gsl_rng_uniform through cs_rng_type,
 * draw for draw, with GSL's own draws (and gamma variates, which draw
 * gsl_rng_get words and uniforms) interleaved on the same generator, on
 * several streams; a generator of another type goes to GSL. The type's
 * range is 32 bits on every platform. */
static void test_rng_uniform_matches_gsl(void **state)
{
  (void)state;
  gsl_rng *probe = cs_rng_stream_new(1, "s");
  assert_true(gsl_rng_max(probe) == 0xffffffffUL && gsl_rng_min(probe) == 0);
  gsl_rng_free(probe);
  static const char *names[] = { "client/x/arrivals", "client/y/arrivals", "s" };
  for (size_t s = 0; s < G_N_ELEMENTS(names); s++) {
    gsl_rng *ours = cs_rng_stream_new(3 + s, names[s]);
    gsl_rng *gsl = cs_rng_stream_new(3 + s, names[s]);
    for (int i = 0; i < 2000000; i++) {
      if (i % 1000 == 999) { /* the same state change by either road */
        assert_true(gsl_rng_uniform(ours) == gsl_rng_uniform(gsl));
        assert_true(gsl_ran_gamma(ours, 0.5, 1.0) == gsl_ran_gamma(gsl, 0.5, 1.0));
        assert_true(gsl_rng_uniform_int(ours, 1000) == gsl_rng_uniform_int(gsl, 1000));
      }
      double u = cs_rng_uniform(ours);
      assert_true(u == gsl_rng_uniform(gsl));
      assert_true(u >= 0.0 && u < 1.0 && ldexp(u, 53) == floor(ldexp(u, 53)));
    }
    gsl_rng_free(ours);
    gsl_rng_free(gsl);
  }
  gsl_rng *a = gsl_rng_alloc(gsl_rng_taus2), *b = gsl_rng_alloc(gsl_rng_taus2);
  for (int i = 0; i < 1000; i++)
    assert_true(cs_rng_uniform(a) == gsl_rng_uniform(b));
  gsl_rng_free(a);
  gsl_rng_free(b);
}

/* gsl_ran_gamma drawing through cs_rng_type has the gamma's moments: over
 * a million draws of shape k and scale theta the mean is within 5 standard
 * errors of k theta (sigma / sqrt(n)) and the variance within 5 of k theta^2
 * (sigma^2 sqrt((2 + 6 / k) / n): the gamma's excess kurtosis is 6 / k).
 * Shapes of the clients' cv 4 (a regression golden's), 2, 1 and 0.5 (k = 1 / cv^2). */
static void test_rng_gamma_moments(void **state)
{
  (void)state;
  static const double shapes[] = { 0.0625, 0.25, 1.0, 4.0 };
  enum { N = 1000000 };
  for (size_t j = 0; j < G_N_ELEMENTS(shapes); j++) {
    double k = shapes[j], theta = 0.002 / k; /* mean 2 ms, a client at 500 req/s */
    gsl_rng *r = cs_rng_stream_new(11, "client/g/arrivals");
    double sum = 0, sum2 = 0;
    for (int i = 0; i < N; i++) {
      double g = gsl_ran_gamma(r, k, theta);
      sum += g, sum2 += g * g;
    }
    double mean = sum / N, var = sum2 / N - mean * mean;
    double sd = sqrt(k) * theta;
    assert_true(fabs(mean - k * theta) < 5.0 * sd / sqrt(N));
    assert_true(fabs(var - k * theta * theta) < 5.0 * sd * sd * sqrt((2.0 + 6.0 / k) / N));
    gsl_rng_free(r);
  }
}

/* cs_rng_exponential is gsl_ran_exponential with log(1 - u) for log1p(-u):
 * on the same stream every draw agrees within a few ulps; up to 10 s means
 * (a rate of 0.1 req/s) a million draws round to the same nanoseconds; at 60 s
 * an ulp is 1e-5 ns and about one draw in a million lands on the other side
 * of a half nanosecond. */
static void test_rng_exponential_matches_gsl(void **state)
{
  (void)state;
  static const double means_s[] = { 1e-6, 1.0 / 3000.0, 0.25, 10.0, 60.0 };
  for (size_t m = 0; m < G_N_ELEMENTS(means_s); m++) {
    gsl_rng *ours = cs_rng_stream_new(7, "client/x/arrivals");
    gsl_rng *gsl = cs_rng_stream_new(7, "client/x/arrivals");
    int differ = 0, ns_differ = 0;
    for (int i = 0; i < 1000000; i++) {
      double a = cs_rng_exponential(ours, means_s[m]), b = gsl_ran_exponential(gsl, means_s[m]);
      assert_true(fabs(a - b) <= 4 * DBL_EPSILON * b);
      ns_differ += llround(a * 1e9) != llround(b * 1e9);
      differ += a != b;
    }
    assert_true(ns_differ <= (means_s[m] <= 10.0 ? 0 : 10));
    /* The two logs do differ in the last bit now and then (so this test
     * compares two computations, not one twice). */
    assert_true(differ > 0);
    gsl_rng_free(ours);
    gsl_rng_free(gsl);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_nearest_rank),
    cmocka_unit_test(test_select_matches_sort),
    cmocka_unit_test(test_weighted_matches_expanded),
    cmocka_unit_test(test_rng_published_outputs),
    cmocka_unit_test(test_rng_stream_reference),
    cmocka_unit_test(test_rng_streams),
    cmocka_unit_test(test_rng_uniform_matches_gsl),
    cmocka_unit_test(test_rng_gamma_moments),
    cmocka_unit_test(test_rng_exponential_matches_gsl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
