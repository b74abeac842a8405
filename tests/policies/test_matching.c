/* cs_min_weight_matching against brute force on seeded random graphs, plus
 * its tie rule and limits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "policies/placement/matching.h"
#include "policies/placement/placement.h"

/* Best (cardinality, weight) over all matchings of the nodes in `free`, by
 * plain recursion: the lowest free node is unmatched or matched to any other
 * free node it has an edge to. */
static void brute(int n, const double *w, unsigned free, int *card, double *weight)
{
  if (!free) {
    *card = 0;
    *weight = 0.0;
    return;
  }
  int i = __builtin_ctz(free);
  unsigned rest = free & ~(1u << i);
  brute(n, w, rest, card, weight);
  for (int j = i + 1; j < n; j++) {
    if (!(rest & (1u << j)) || !isfinite(w[i * n + j]))
      continue;
    int c;
    double x;
    brute(n, w, rest & ~(1u << j), &c, &x);
    c++;
    x += w[i * n + j];
    if (c > *card || (c == *card && x < *weight - 1e-9)) {
      *card = c;
      *weight = x;
    }
  }
}

/* Checks mate is a matching of existing edges with this cardinality/weight. */
static void check_matching(int n, const double *w, const int *mate, int pairs, double total)
{
  int count = 0;
  double sum = 0.0;
  for (int i = 0; i < n; i++) {
    if (mate[i] < 0)
      continue;
    assert_true(mate[i] < n && mate[i] != i);
    assert_int_equal(mate[mate[i]], i);
    if (mate[i] > i) {
      assert_true(isfinite(w[i * n + mate[i]]));
      count++;
      sum += w[i * n + mate[i]];
    }
  }
  assert_int_equal(count, pairs);
  assert_true(fabs(sum - total) < 1e-9 * MAX(1.0, fabs(sum)));
}

static void random_case(GRand *rng, int n, double edge_p, gboolean integer_weights)
{
  double w[12 * 12] = { 0 };
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      w[i * n + j] = INFINITY;
  }
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      if (g_rand_double(rng) >= edge_p)
        continue;
      /* Integer weights make ties common; negative ones are allowed. */
      w[i * n + j] = integer_weights ? (double)g_rand_int_range(rng, -3, 6)
                                     : g_rand_double_range(rng, -50.0, 200.0);
    }
  }
  int mate[12];
  double total = NAN;
  int pairs = cs_min_weight_matching(n, w, mate, &total, NULL);
  int card;
  double best;
  brute(n, w, n ? (1u << n) - 1 : 0, &card, &best);
  if (pairs != card || fabs(total - best) > 1e-9 * MAX(1.0, fabs(best)))
    fail_msg("n=%d: matching gives %d pairs weight %.12g, brute force %d pairs weight %.12g", n,
             pairs, total, card, best);
  check_matching(n, w, mate, pairs, total);
}

static void test_against_brute_force(void **state)
{
  (void)state;
  GRand *rng = g_rand_new_with_seed(20240611);
  for (int round = 0; round < 400; round++) {
    int n = g_rand_int_range(rng, 0, 11);
    double p = (round % 4 == 0) ? 1.0 : g_rand_double_range(rng, 0.1, 1.0);
    random_case(rng, n, p, round % 2 == 0);
  }
  g_rand_free(rng);
}

/* Equal weights: the lowest node pairs with its lowest partner, recursively. */
static void test_tie_rule(void **state)
{
  (void)state;
  double w[5 * 5];
  for (int i = 0; i < 25; i++)
    w[i] = 1.0;
  int mate[5];
  double total;
  assert_int_equal(cs_min_weight_matching(4, w, mate, &total, NULL), 2);
  assert_int_equal(mate[0], 1);
  assert_int_equal(mate[2], 3);
  assert_true(total == 2.0);
  /* Five nodes: the unmatched one is the last (leaving a node unmatched is
   * tried after every partner). */
  assert_int_equal(cs_min_weight_matching(5, w, mate, &total, NULL), 2);
  assert_int_equal(mate[0], 1);
  assert_int_equal(mate[2], 3);
  assert_int_equal(mate[4], -1);
  /* Weights equal up to rounding noise are ties too. */
  for (int i = 0; i < 25; i++)
    w[i] = 0.1 + 0.2;
  w[0 * 4 + 1] = 0.3;
  w[2 * 4 + 3] = 0.30000000000000004;
  w[0 * 4 + 2] = 0.29999999999999993;
  assert_int_equal(cs_min_weight_matching(4, w, mate, NULL, NULL), 2);
  assert_int_equal(mate[0], 1);
}

/* Cardinality first: a heavy edge that allows a second pair beats a light one. */
static void test_cardinality_first(void **state)
{
  (void)state;
  /* Path 0-1-2-3: edges 0-1 (100), 1-2 (1), 2-3 (100). */
  double w[16];
  for (int i = 0; i < 16; i++)
    w[i] = INFINITY;
  w[0 * 4 + 1] = 100;
  w[1 * 4 + 2] = 1;
  w[2 * 4 + 3] = 100;
  int mate[4];
  double total;
  assert_int_equal(cs_min_weight_matching(4, w, mate, &total, NULL), 2);
  assert_int_equal(mate[0], 1);
  assert_int_equal(mate[2], 3);
  assert_true(total == 200.0);
}

static void test_limits(void **state)
{
  (void)state;
  int mate[CS_MATCHING_MAX_NODES + 1];
  double w[(CS_MATCHING_MAX_NODES + 1) * (CS_MATCHING_MAX_NODES + 1)];
  for (size_t i = 0; i < G_N_ELEMENTS(w); i++)
    w[i] = (double)(i % 7);
  GError *err = NULL;
  assert_int_equal(cs_min_weight_matching(CS_MATCHING_MAX_NODES + 1, w, mate, NULL, &err), -1);
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_POLICY));
  g_clear_error(&err);
  assert_int_equal(cs_min_weight_matching(0, w, mate, NULL, NULL), 0);
  assert_int_equal(cs_min_weight_matching(1, w, mate, NULL, NULL), 0);
  assert_int_equal(mate[0], -1);
  /* The largest size runs (2^20 subsets) and matches everything. */
  int n = CS_MATCHING_MAX_NODES;
  assert_int_equal(cs_min_weight_matching(n, w, mate, NULL, NULL), n / 2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_against_brute_force),
    cmocka_unit_test(test_tie_rule),
    cmocka_unit_test(test_cardinality_first),
    cmocka_unit_test(test_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
