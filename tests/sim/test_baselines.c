/* The baseline serving systems of Symphony's evaluation matched to their real
 * implementations (issue 14): nexuslb's eager scheduler and its target batch,
 * Symphony at the public implementation's delays. Expected values come from
 * outside the code: closed forms of nexuslb's estimator worked out by hand,
 * and goodputs measured with the real implementation (EXPERIMENTS.md). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "policies/dispatch/central.h"
#include "test_util.h"

/* ---- nexuslb's target batch, closed form ------------------------------------ */

/* Table 2's ResNet50 on the 1080 Ti: l(b) = 1.053 b + 5.072 ms; the
 * implementation's delays d_ctrl 100 us, d_data 50 us a request, d_resp 2 ms. */
static int64_t resnet_lat(void *ctx, int model, int b)
{
  (void)ctx, (void)model;
  return (int64_t)llround((1.053 * b + 5.072) * 1e6);
}

static int64_t resnet_overhead(void *ctx, int model, int b)
{
  (void)ctx, (void)model;
  return 100000 + 50000 * (int64_t)b + 2000000;
}

static int target_at(double rps)
{
  CsBatchCosts c = { .lat_ns = resnet_lat, .overhead_ns = resnet_overhead };
  return cs_central_rate_target(rps, 25000000, 512, &c);
}

static void test_rate_target_closed_form(void **state)
{
  (void)state;
  /* With B(b) = 25 - 2.1 - 0.05 b ms and n(b) = r l(b) / b, batch b fits
   * while l(b) (1 + 1 / n(b)) <= B(b), i.e. n(b) >= l(b) / (B(b) - l(b)):
   * b = 13: l = 18.761, B = 22.25, so r >= 5.3773 x 13 / 18.761 ms = 3726.0/s;
   * b = 14: l = 19.814, B = 22.2, so r >= 8.3043 x 14 / 19.814 ms = 5867.6/s.
   * The target is 13 in [3726.0, 5867.6) req/s: the "13 at 3750-5500". */
  assert_int_equal(target_at(3725), 12);
  assert_int_equal(target_at(3727), 13);
  assert_int_equal(target_at(5867), 13);
  assert_int_equal(target_at(5868), 14);
  /* Below one GPU's worth (n <= 1 at the first failing b) Nexus' rule: the
   * batch must fill within the SLO, l(b) + b / r <= B(b). At 100 req/s b = 6
   * fails first (2 x 11.39 > 22.6) with n = 0.19, and b = 2 needs 7.178 + 20
   * > 22.8 ms: target 1. b = 2 fits from r = 2 / (22.8 - 7.178 ms) = 128.03/s;
   * b = 3 needs r >= 3 / (22.75 - 8.231 ms) = 206.6/s. */
  assert_int_equal(target_at(100), 1);
  assert_int_equal(target_at(127), 1);
  assert_int_equal(target_at(129), 2);
  assert_int_equal(target_at(206), 2);
  assert_int_equal(target_at(207), 3);
  assert_int_equal(target_at(0), 1);
}

/* ---- goodput at Table 2's ResNet50 setting against the real implementation -- */

static char *table2_dir(void)
{
  return test_dir_with_profile(1.053, 5.072);
}

/* Goodput of a policy at Table 2's ResNet50 setting (8 GPUs, SLO 25 ms,
 * Poisson, 10 s after 1 s of warm-up, zero network) with extra dispatch
 * fields. */
static double table2_goodput(const char *dir, const char *dispatch, CsGoodputCriterion crit,
                             uint64_t seed)
{
  char *json = g_strdup_printf(
    "{\"seed\": %" G_GUINT64_FORMAT ", \"profiles\": [\"synthetic.json\"],"
    " \"cluster\": {\"gpus\": 8, \"gpu_type\": \"gpu\"}, \"dispatch\": {%s},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 25, \"duration_s\": 10,"
    " \"warmup_s\": 1}]}",
    seed, dispatch);
  CsScenario *sc = test_scenario(dir, json);
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.criterion = crit;
  o.bad_rate_bound = 0.01;
  o.max_multiplier = 128;
  CsGoodputProbe best;
  GError *err = NULL;
  if (!cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err))
    fail_msg("search: %s", err->message);
  cs_scenario_free(sc);
  g_free(json);
  return best.offered_rps;
}

#define NEXUSLB_DELAYS "\"d_ctrl_us\": 100, \"d_data_us\": 50, \"d_resp_ms\": 2"

static void test_eager_matches_nexuslb(void **state)
{
  (void)state;
  char *dir = table2_dir();
  /* nexuslb, scheduler-only with emulated GPUs: eager (kImmediately, window
   * drop) 3700-3750 req/s at bad rate <= 1 %. Three seeds, both criteria. */
  for (uint64_t seed = 1; seed <= 3; seed++) {
    double br = table2_goodput(dir, "\"policy\": \"eager\", " NEXUSLB_DELAYS,
                               CS_GOODPUT_BAD_RATE, seed);
    double p99 = table2_goodput(dir, "\"policy\": \"eager\", " NEXUSLB_DELAYS, CS_GOODPUT_P99,
                                seed);
    print_message("eager, seed %d: %.1f req/s (bad rate <= 1 %%), %.1f (p99 <= SLO); nexuslb "
                  "3700-3750\n",
                  (int)seed, br, p99);
    assert_true(br >= 0.95 * 3700 && br <= 1.05 * 3750);
    assert_true(p99 >= 0.95 * 3700 && p99 <= 1.05 * 3750);
  }
  /* The former eager rules stay available by name: gathering at the head on
   * the lowest-id GPU keeps every request until the queue grows and serves
   * far more here (the issue measured 4666), beyond the real one's range. */
  double old = table2_goodput(dir,
                              "\"policy\": \"eager\", \"batch_gathering\": \"head\", "
                              "\"gpu_choice\": \"lowest_id\", " NEXUSLB_DELAYS,
                              CS_GOODPUT_BAD_RATE, 1);
  print_message("eager with head gathering on the lowest-id GPU: %.1f req/s\n", old);
  assert_true(old > 1.1 * 3750);
  test_dir_remove(dir);
}

static void test_symphony_matches_nexuslb(void **state)
{
  (void)state;
  char *dir = table2_dir();
  /* nexuslb's Symphony (kFrontrun, window drop): 5050-5100 req/s. */
  double paper_rules = table2_goodput(dir, "\"policy\": \"symphony\", " NEXUSLB_DELAYS,
                                      CS_GOODPUT_BAD_RATE, 1);
  double impl_rules = table2_goodput(dir,
                                     "\"policy\": \"symphony\", \"target_batch\": \"rate\", "
                                     "\"gpu_choice\": \"earliest_free\", " NEXUSLB_DELAYS,
                                     CS_GOODPUT_BAD_RATE, 1);
  print_message("symphony: %.1f req/s (defaults), %.1f (nexuslb's target and GPU choice); "
                "nexuslb 5050-5100\n",
                paper_rules, impl_rules);
  assert_true(paper_rules >= 0.95 * 5050 && paper_rules <= 1.05 * 5100);
  assert_true(impl_rules >= 0.95 * 5050 && impl_rules <= 1.05 * 5100);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rate_target_closed_form),
    cmocka_unit_test(test_eager_matches_nexuslb),
    cmocka_unit_test(test_symphony_matches_nexuslb),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
