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
  /* No batch up to max_batch fails (a loose SLO): the target is max_batch,
   * as nexuslb's loop runs to the end of its profile. At 1 req/s and an SLO
   * of 10 s: 2 l(512) = 1.09 s fits. */
  CsBatchCosts c = { .lat_ns = resnet_lat, .overhead_ns = resnet_overhead };
  assert_int_equal(cs_central_rate_target(1, 10000000000, 512, &c), 512);
}

/* ---- goodput at Table 2's ResNet50 setting against the real implementation -- */

static char *table2_dir(void)
{
  return test_dir_with_profile(1.053, 5.072);
}

/* The goodput search of the scenario json in dir (bad rate bound 1 %). */
static double search_goodput(const char *dir, const char *json, CsGoodputCriterion crit,
                             double max_multiplier)
{
  CsScenario *sc = test_scenario(dir, json);
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.criterion = crit;
  o.bad_rate_bound = 0.01;
  o.max_multiplier = max_multiplier;
  CsGoodputProbe best;
  GError *err = NULL;
  if (!cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err))
    fail_msg("search: %s", err->message);
  cs_scenario_free(sc);
  return best.offered_rps;
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
  double g = search_goodput(dir, json, crit, 128);
  g_free(json);
  return g;
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

/* ---- Shepherd ------------------------------------------------------------------- */

typedef struct {
  int64_t latency_ns[16];
  gboolean dropped[16];
  int n;
} Outcomes;

static void outcome(const CsRequestRecord *rec, void *user)
{
  Outcomes *o = user;
  assert_true(rec->id < 16);
  o->latency_ns[rec->id] = rec->served ? rec->receive_ns - rec->send_ns : -1;
  o->dropped[rec->id] = rec->dropped;
  o->n++;
}

/* Runs the scenario json of dir, recording each request's outcome in o. */
static CsResults *run_recorded(const char *dir, const char *json, Outcomes *o)
{
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = outcome;
  opt.user_data = o;
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  return r;
}

/* One GPU, l(b) = b + 4 ms (model a), zero delays, requests at times_ms. */
static CsResults *shepherd_run(const char *extra, double slo_ms, const char *times_ms,
                               Outcomes *o)
{
  char *dir = test_dir_with_profile(1.0, 4.0);
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"shepherd\", \"d_ctrl_us\": 0, \"d_data_us\": 0%s},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": %g, \"arrival\": {\"process\": \"times\","
    " \"times_ms\": [%s]}}]}",
    extra, slo_ms, times_ms);
  CsResults *r = run_recorded(dir, json, o);
  g_free(json);
  test_dir_remove(dir);
  return r;
}

static void test_shepherd_preemption_timeline(void **state)
{
  (void)state;
  Outcomes o = { 0 };
  CsResults *r = shepherd_run(", \"preempt_lambda\": 3", 100, "0, 1, 1, 1, 1", &o);
  /* By hand: r0 runs alone from 0 (l(1) = 5 ms). At 1 ms r1 makes the
   * candidate {r0, r1}: 2 < 3 x 1, no preemption. r2 makes {r0, r1, r2}:
   * 3 >= 3, so r0's batch stops (1 ms lost) and {r0, r1, r2} runs [1, 8).
   * r3 and r4 make 4 and 5 < 3 x 3. At 8 the GPU frees: {r3, r4} runs
   * [8, 14). */
  assert_int_equal(o.n, 5);
  const int64_t expect_ms[5] = { 8, 7, 7, 13, 13 };
  for (int i = 0; i < 5; i++)
    assert_int_equal(o.latency_ns[i], expect_ms[i] * 1000000);
  int64_t lost = 0;
  assert_int_equal(cs_results_gpu_preempted(r, 0, &lost), 1);
  assert_int_equal(lost, 1000000);
  assert_int_equal(cs_results_gpu_batches(r, 0), 2);
  cs_results_free(r);
  /* Without preemption: r0 alone [0, 5), then {r1..r4} [5, 13). */
  Outcomes q = { 0 };
  r = shepherd_run(", \"preemption\": false", 100, "0, 1, 1, 1, 1", &q);
  const int64_t expect2_ms[5] = { 5, 12, 12, 12, 12 };
  for (int i = 0; i < 5; i++)
    assert_int_equal(q.latency_ns[i], expect2_ms[i] * 1000000);
  assert_int_equal(cs_results_gpu_preempted(r, 0, NULL), 0);
  cs_results_free(r);
}

static void test_shepherd_purge_rules(void **state)
{
  (void)state;
  /* SLO 8 ms. r0 (at 0) runs [0, 5). r1 (0.5 ms, due 8.5) and r2 (4.9 ms,
   * due 12.9) wait: {r0, r1} is too small to preempt and at 4.9 ms even r0's
   * deadline fails a larger batch. At 5 ms the GPU frees; r1 cannot finish
   * alone (5 + 5 > 8.5). "head" drops r1 (already at r2's arrival, 4.9 +
   * 5 > 8.5) and runs r2 [5, 10): 5.1 ms. As the emulator is written
   * ("latest", not the default) only r2, the latest, is tested: it can finish, so nothing is
   * dropped, but the walk stops at r1 and the GPU stays idle; no event
   * comes, and when the emulator stops both are dropped. */
  Outcomes head = { 0 }, latest = { 0 };
  CsResults *r = shepherd_run(", \"purge\": \"head\"", 8, "0, 0.5, 4.9", &head);
  assert_int_equal(head.latency_ns[0], 5000000);
  assert_true(head.dropped[1]);
  assert_int_equal(head.latency_ns[2], 5100000);
  cs_results_free(r);
  r = shepherd_run(", \"purge\": \"latest\"", 8, "0, 0.5, 4.9", &latest);
  assert_int_equal(latest.latency_ns[0], 5000000);
  assert_true(latest.dropped[1]);
  assert_true(latest.dropped[2]);
  assert_int_equal(cs_results_model(r, 0)->dropped, 2);
  cs_results_free(r);
}

static void test_shepherd_delay_timeline(void **state)
{
  (void)state;
  /* nexuslb's emulator (tools/shepherd/flex_scheduler.cpp) plans a batch of
   * b at t to start at t + d_ctrl + d_data x b and holds its GPU until it
   * ends, and its candidate checks that end against the earliest deadline.
   * One GPU, l(b) = b + 4 ms, d_ctrl 1 ms, d_data 0.5 ms a request, no
   * preemption, SLO 14.9 ms. By hand: r0 (0 ms) runs [1.5, 6.5). r1..r3
   * (1 ms, due 15.9) wait; at 6.5 the GPU frees: 3 would end at 6.5 + 1 +
   * 1.5 + 7 = 16 > 15.9, 2 at 6.5 + 1 + 1 + 6 = 14.5, so {r1, r2} runs
   * [8.5, 14.5). At 14.5 r3 cannot finish alone (14.5 + 6.5 = 21) and is
   * dropped. Without d_data in the check all three would run, [7.5, 14.5). */
  char *dir = test_dir_with_profile(1.0, 4.0);
  const char *json =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"shepherd\", \"d_ctrl_us\": 1000, \"d_data_us\": 500,"
    " \"preemption\": false},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 14.9, \"arrival\": {\"process\": \"times\","
    " \"times_ms\": [0, 1, 1, 1]}}]}";
  Outcomes o = { 0 };
  CsResults *r = run_recorded(dir, json, &o);
  assert_int_equal(o.n, 4);
  assert_int_equal(o.latency_ns[0], 6500000);
  assert_int_equal(o.latency_ns[1], 13500000);
  assert_int_equal(o.latency_ns[2], 13500000);
  assert_true(o.dropped[3]);
  assert_int_equal(cs_results_gpu_batches(r, 0), 2);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Shepherd's model tie: of equal candidates the lowest model index wins
 * (the scenario's client order, not the name). One GPU, l(b) = b + 4 ms for
 * both models, zero delays, no preemption. By hand: b's request at 0 runs
 * alone [0, 5). At 1 ms two requests of each model arrive and wait. At 5 ms
 * the GPU frees with a candidate of 2 for each: the first client's model
 * runs [5, 11) (latency 10 ms), the other [11, 17) (16 ms). */
static void test_shepherd_model_tie(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  for (int order = 0; order < 2; order++) {
    const char *first = order == 0 ? "a" : "b", *second = order == 0 ? "b" : "a";
    const char *t_first = order == 0 ? "1, 1" : "0, 1, 1", *t_second = order == 0 ? "0, 1, 1" : "1, 1";
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " \"dispatch\": {\"policy\": \"shepherd\", \"d_ctrl_us\": 0, \"d_data_us\": 0,"
      " \"preemption\": false}, \"clients\": ["
      "{\"model\": \"%s\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}},"
      "{\"model\": \"%s\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}}]}",
      first, t_first, second, t_second);
    CsScenario *sc = test_scenario(dir, json);
    g_free(json);
    CsResults *r = test_run(sc, NULL);
    const CsModelResult *a = cs_results_model_by_name(r, "a"), *b = cs_results_model_by_name(r, "b");
    /* a waits [1, 11) when it is the first client, [1, 17) when it is not;
     * b's late pair the other way round; b's first request 5 ms. */
    double a_ms = order == 0 ? 10.0 : 16.0, b_ms = order == 0 ? 16.0 : 10.0;
    assert_int_equal(a->completed, 2);
    assert_int_equal(b->completed, 3);
    assert_true(fabs(a->latency.max - a_ms) < 1e-9 && fabs(a->latency.p50 - a_ms) < 1e-9);
    assert_true(fabs(b->latency.max - b_ms) < 1e-9);
    assert_true(fabs(b->latency.mean - (5.0 + 2 * b_ms) / 3) < 1e-9);
    assert_int_equal(cs_results_gpu_batches(r, 0), 3);
    cs_results_free(r);
    cs_scenario_free(sc);
  }
  test_dir_remove(dir);
}

static void test_shepherd_against_table2(void **state)
{
  (void)state;
  char *dir = table2_dir();
  /* Table 2: Shepherd 4445 req/s on ResNet50 (the real emulator, run by the
   * issue's author: about 4400). The emulator's own delays (d_ctrl 25 us,
   * d_data 75 us a request) are the policy's defaults. */
  double sum = 0;
  for (uint64_t seed = 1; seed <= 6; seed++) {
    double g = table2_goodput(dir, "\"policy\": \"shepherd\"", CS_GOODPUT_BAD_RATE, seed);
    print_message("shepherd, seed %d: %.1f req/s\n", (int)seed, g);
    sum += g;
  }
  double mean = sum / 6;
  print_message("shepherd: mean %.1f req/s over 6 seeds; Table 2 4445, nexuslb about 4400\n", mean);
  assert_true(fabs(mean - 4445) <= 0.05 * 4445);
  test_dir_remove(dir);
}

/* ---- Clockwork ------------------------------------------------------------------- */

/* One GPU, l(b) = b + 4 ms (model a), Clockwork's defaults (10 ms ahead,
 * deadlines 5 ms early, plans at least 1 ms ahead), requests at times_ms. */
static CsResults *clockwork_run(double slo_ms, const char *times_ms, Outcomes *o)
{
  char *dir = test_dir_with_profile(1.0, 4.0);
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"clockwork\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": %g, \"arrival\": {\"process\": \"times\","
    " \"times_ms\": [%s]}}]}",
    slo_ms, times_ms);
  CsResults *r = run_recorded(dir, json, o);
  g_free(json);
  test_dir_remove(dir);
  return r;
}

static void test_clockwork_timeline(void **state)
{
  (void)state;
  /* SLO 100 ms: deadlines D = send + 95. By hand: r0 (0 ms) is planned at
   * now + 1 = 1 ms, alone (its candidates of 16..2 fail: one request), and
   * runs [1, 6). r1 (0.5 ms) goes next, [6, 11): the GPU's work then ends at
   * 11 > 0.5 + 10, so r2..r5 (0.5 ms) wait. The window reopens 1 ms (+1 ns)
   * later: the most urgent candidate is r2's with b = 16; with 4 queued, 16
   * down to 5 fail and b = 4 takes {r2..r5}, [11, 19). */
  Outcomes o = { 0 };
  CsResults *r = clockwork_run(100, "0, 0.5, 0.5, 0.5, 0.5, 0.5", &o);
  const double expect_ms[6] = { 6, 10.5, 18.5, 18.5, 18.5, 18.5 };
  for (int i = 0; i < 6; i++)
    assert_int_equal(o.latency_ns[i], llround(expect_ms[i] * 1e6));
  assert_int_equal(cs_results_gpu_batches(r, 0), 3);
  cs_results_free(r);
  /* SLO 20 ms: D = send + max(15, 10 + 5) = send + 15. r0 [1, 6), r1
   * [6, 11); r2 and r3 wait for the window, which reopens at 1 ms: planned
   * at 11 they would end at 16 (alone) or 17 (together), after their D of
   * 15, so every candidate fails; at 15 ms they time out (dropped). */
  Outcomes q = { 0 };
  r = clockwork_run(20, "0, 0, 0, 0", &q);
  assert_int_equal(q.latency_ns[0], 6000000);
  assert_int_equal(q.latency_ns[1], 11000000);
  assert_true(q.dropped[2] && q.dropped[3]);
  assert_int_equal(cs_results_model(r, 0)->dropped, 2);
  cs_results_free(r);
}

/* Clockwork upgrades a candidate to the largest batch the queue fills. Three
 * models of l(b) = b + 4 ms on one GPU; SLOs a 100, b 99.5, c 100 ms (D =
 * send + 95, + 94.5, + 95). By hand: c0, c1 (0 ms) run [1, 6) and [6, 11):
 * the window is full. a0 and b0 (0.1 ms) wait. At 1 ms (+1 ns) the pass pops
 * by priority D - l(b): ..., (b0, 2) 88.6 and (a0, 2) 89.1 fail (one request
 * each), (b0, 1) 89.6 runs [11, 16): the window is full again with (a0, 1)
 * 90.1 left. a2 (2 ms, D 97) waits. At 6 ms (+1 ns): a2's candidates of 16..3
 * fail (two queued), then (a0, 1) finds a0 and a2 queued and upgrades to 2:
 * {a0, a2} runs [16, 22). Without the upgrade a0 would run alone [16, 21)
 * and a2 [21, 26). */
static void test_clockwork_upgrade(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  const char *json =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"clockwork\"}, \"clients\": ["
    " {\"model\": \"a\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0.1, 2]}},"
    " {\"model\": \"b\", \"slo_ms\": 99.5, \"arrival\": {\"process\": \"times\", \"times_ms\": [0.1]}},"
    " {\"model\": \"c\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 0]}}]}";
  Outcomes o = { 0 };
  CsResults *r = run_recorded(dir, json, &o);
  /* Ids in arrival order: c0 0, c1 1, a0 2, b0 3, a2 4. */
  assert_int_equal(o.n, 5);
  const double expect_ms[5] = { 6, 11, 21.9, 15.9, 20 };
  for (int i = 0; i < 5; i++)
    assert_int_equal(o.latency_ns[i], llround(expect_ms[i] * 1e6));
  assert_int_equal(cs_results_gpu_batches(r, 0), 4);
  cs_results_free(r);
  test_dir_remove(dir);
}

static void test_clockwork_against_table2(void **state)
{
  (void)state;
  /* Table 2: Clockwork 1358 req/s (ResNet50, SLO 25 ms) and 458
   * (InceptionResNetV2: alpha 5.090, beta 18.368 ms, SLO 70 ms). */
  struct {
    double alpha, beta, slo, paper;
  } cases[] = { { 1.053, 5.072, 25, 1358 }, { 5.090, 18.368, 70, 458 } };
  for (int k = 0; k < 2; k++) {
    char *dir = test_dir_with_profile(cases[k].alpha, cases[k].beta);
    double sum = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
      char *json = g_strdup_printf(
        "{\"seed\": %d, \"profiles\": [\"synthetic.json\"],"
        " \"cluster\": {\"gpus\": 8, \"gpu_type\": \"gpu\"}, \"dispatch\": {\"policy\": \"clockwork\"},"
        " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": %g, \"duration_s\": 10,"
        " \"warmup_s\": 1}]}",
        (int)seed, cases[k].slo);
      /* The search's default largest multiplier (64). */
      double g = search_goodput(dir, json, CS_GOODPUT_BAD_RATE, 64);
      print_message("clockwork, SLO %g ms, seed %d: %.1f req/s\n", cases[k].slo, (int)seed, g);
      sum += g;
      g_free(json);
    }
    print_message("clockwork: mean %.1f req/s; Table 2 %.0f\n", sum / 3, cases[k].paper);
    assert_true(fabs(sum / 3 - cases[k].paper) <= 0.05 * cases[k].paper);
    test_dir_remove(dir);
  }
}

/* ---- Figure 2: goodput under overload ------------------------------------------------ */

/* Goodput (good requests per second of the window) at an offered load, Table
 * 2's ResNet50 setting, 5 s after 1 s of warm-up. */
static double goodput_at(const char *dir, const char *dispatch, double rps)
{
  char *json = g_strdup_printf(
    "{\"seed\": 1, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 8, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {%s}, \"clients\": [{\"model\": \"a\", \"rate\": %g, \"slo_ms\": 25,"
    " \"duration_s\": 5, \"warmup_s\": 1}]}",
    dispatch, rps);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  double g = cs_results_model(r, 0)->goodput_rps;
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  return g;
}

static void test_overload_figure2(void **state)
{
  (void)state;
  char *dir = table2_dir();
  /* Symphony keeps its goodput past its capacity (about 5000 req/s here):
   * flat top (the paper: "Symphony and Nexus achieve goodput stability"). */
  double sym_cap = goodput_at(dir, "\"policy\": \"symphony\", " NEXUSLB_DELAYS, 6000);
  double sym_over = goodput_at(dir, "\"policy\": \"symphony\", " NEXUSLB_DELAYS, 15000);
  /* Shepherd loses most of it ("Shepherd and Clockwork exhibit a
   * substantial loss in goodput as we increase the offered load beyond
   * their capabilities"): its capacity is about 4600 here. */
  double sh_cap = goodput_at(dir, "\"policy\": \"shepherd\"", 4500);
  double sh_over = goodput_at(dir, "\"policy\": \"shepherd\"", 9000);
  double sh_latest = goodput_at(dir, "\"policy\": \"shepherd\", \"purge\": \"latest\"", 9000);
  print_message("goodput: symphony %.0f at 6000 offered, %.0f at 15000; shepherd %.0f at 4500, "
                "%.0f at 9000 (purge latest: %.0f)\n",
                sym_cap, sym_over, sh_cap, sh_over, sh_latest);
  assert_true(sym_over >= 0.95 * sym_cap);
  assert_true(sh_over < 0.5 * sh_cap);
  /* As the emulator is written, a hopeless head blocks the queue for good. */
  assert_true(sh_latest < 0.01 * sh_cap);
  test_dir_remove(dir);
}

/* ---- centralized policies on mixed GPU types ------------------------------------- */

/* GPU 0 of type first_type, GPU 1 of the other: "slow" l(b) = 2b + 8 ms,
 * "fast" l(b) = b + 4 ms. */
static CsResults *mixed_run(const char *first_type, const char *policy, double slo_ms,
                            const char *times_ms, Outcomes *o)
{
  char *dir = g_dir_make_tmp("cs-mixed-XXXXXX", NULL);
  const char *prof =
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic\","
    " \"gpu_types\": [{\"name\": \"slow\", \"description\": \"t\", \"sm_count\": 40, \"memory_bytes\": 0},"
    " {\"name\": \"fast\", \"description\": \"t\", \"sm_count\": 80, \"memory_bytes\": 0}],"
    " \"models\": [{\"gpu\": \"slow\", \"model\": \"a\", \"input_bytes\": 0, \"output_bytes\": 0,"
    " \"linear\": {\"alpha_ms\": 2, \"beta_ms\": 8}},"
    " {\"gpu\": \"fast\", \"model\": \"a\", \"input_bytes\": 0, \"output_bytes\": 0,"
    " \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 4}}]}";
  char *path = g_build_filename(dir, "mixed.json", NULL);
  assert_true(g_file_set_contents(path, prof, -1, NULL));
  g_free(path);
  const char *second = strcmp(first_type, "slow") == 0 ? "fast" : "slow";
  char *json = g_strdup_printf(
    "{\"profiles\": [\"mixed.json\"], \"cluster\": {\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"%s\"},"
    " {\"gpus\": 1, \"gpu_type\": \"%s\"}]},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 0%s},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": %g, \"arrival\": {\"process\": \"times\","
    " \"times_ms\": [%s]}}]}",
    first_type, second, policy,
    strcmp(policy, "shepherd") == 0 ? ", \"d_data_us\": 0" : ", \"d_data_us\": 0, \"d_resp_ms\": 0",
    slo_ms, times_ms);
  CsResults *r = run_recorded(dir, json, o);
  g_free(json);
  test_dir_remove(dir);
  return r;
}

static gboolean has_warning(const CsResults *r, const char *code)
{
  for (int i = 0; i < cs_results_n_warnings(r); i++)
    if (strcmp(cs_results_warning(r, i)->code, code) == 0)
      return TRUE;
  return FALSE;
}

static void test_central_mixed_gpu_types(void **state)
{
  (void)state;
  /* Eager (earliest free GPU, lowest id on ties), GPU 0 slow. By hand: r0
   * (0 ms) on GPU 0 runs [0, 10); r1 (1 ms) on GPU 1 runs [1, 6); r2 (7 ms):
   * GPU 1 has been free since 6, GPU 0 frees at 10, so GPU 1 runs it [7, 12).
   * A scheduler that booked GPU 1 with the slow latency (free at 11) would
   * send r2 to GPU 0 at 10 and return it at 20. */
  Outcomes o = { 0 };
  CsResults *r = mixed_run("slow", "eager", 50, "0, 1, 7", &o);
  assert_int_equal(o.latency_ns[0], 10000000);
  assert_int_equal(o.latency_ns[1], 5000000);
  assert_int_equal(o.latency_ns[2], 5000000);
  assert_false(has_warning(r, "slo_unreachable"));
  cs_results_free(r);
  /* The scheduler plans with the slowest type (Symphony's implementation
   * merges profiles so): with an SLO of 9 ms a lone request fits the fast
   * GPU (5 ms) but not the slow one (10 ms), so every request is dropped,
   * GPU 0 fast or not, and a warning says so. */
  for (int first = 0; first < 2; first++) {
    Outcomes q = { 0 };
    r = mixed_run(first ? "slow" : "fast", "symphony", 9, "0, 20", &q);
    assert_true(q.dropped[0] && q.dropped[1]);
    assert_true(has_warning(r, "slo_unreachable"));
    cs_results_free(r);
  }
  /* Shepherd plans each GPU with its own latency: the fast GPU serves both. */
  Outcomes sh = { 0 };
  r = mixed_run("slow", "shepherd", 9, "0, 20", &sh);
  assert_int_equal(sh.latency_ns[0], 5000000);
  assert_int_equal(sh.latency_ns[1], 5000000);
  cs_results_free(r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rate_target_closed_form),
    cmocka_unit_test(test_eager_matches_nexuslb),
    cmocka_unit_test(test_symphony_matches_nexuslb),
    cmocka_unit_test(test_shepherd_preemption_timeline),
    cmocka_unit_test(test_shepherd_purge_rules),
    cmocka_unit_test(test_shepherd_delay_timeline),
    cmocka_unit_test(test_shepherd_model_tie),
    cmocka_unit_test(test_shepherd_against_table2),
    cmocka_unit_test(test_clockwork_timeline),
    cmocka_unit_test(test_clockwork_upgrade),
    cmocka_unit_test(test_clockwork_against_table2),
    cmocka_unit_test(test_overload_figure2),
    cmocka_unit_test(test_central_mixed_gpu_types),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
