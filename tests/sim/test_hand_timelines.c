/* Expected values computed outside the code under test, added by an audit of
 * the numeric assertions (issue 10): hand-worked timelines of Symphony's GPU
 * timer (a wait, a grant, ties on `latest` and its inclusive bound), the
 * autoscaling advice at a bad rate other than 1/2, the goodput search checked
 * against a brute-force queue, and MAF 2019 trace windows that start late and
 * are scaled in time. Every comment gives the arithmetic. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "test_util.h"

#define MS(x) ((int64_t)llround((x) * 1e6))

/* ---- Symphony's GPU timer (Algorithm 1, Appendix D; docs/dispatch.md) ------- */

typedef struct {
  int64_t send[8], dispatch[8], start[8], end[8];
  int client[8];
  gboolean served[8];
  int n;
} Seen;

static void record(const CsRequestRecord *rec, void *user)
{
  Seen *s = user;
  assert_true(rec->id < 8);
  s->send[rec->id] = rec->send_ns;
  s->dispatch[rec->id] = rec->dispatch_ns;
  s->start[rec->id] = rec->exec_start_ns;
  s->end[rec->id] = rec->exec_end_ns;
  s->client[rec->id] = rec->client;
  s->served[rec->id] = rec->served;
  s->n++;
}

/* Runs an eager scenario on one GPU without delays (models b and c of the
 * synthetic profile: l(k) = k + 4 ms) with the given clients. */
static CsResults *run_eager(const char *dir, const char *clients, Seen *s)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"eager\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": %s}", clients);
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record;
  opt.user_data = s;
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  g_free(json);
  return r;
}

/* The index of the request of client `client` sent at `send_ms`. */
static int find(const Seen *s, int client, double send_ms)
{
  for (int i = 0; i < s->n; i++)
    if (s->client[i] == client && s->send[i] == MS(send_ms))
      return i;
  fail_msg("no request of client %d sent at %g ms", client, send_ms);
  return -1;
}

/* Asserts that the request of `client` sent at `send_ms` left at `at_ms` and
 * ran [at_ms, at_ms + 5). */
static void expect_run(const Seen *s, int client, double send_ms, double at_ms)
{
  int i = find(s, client, send_ms);
  assert_true(s->served[i]);
  assert_int_equal(s->dispatch[i], MS(at_ms));
  assert_int_equal(s->start[i], MS(at_ms));
  assert_int_equal(s->end[i], MS(at_ms + 5));
}

/* A `latest` tie goes to the first client, even when the other client's
 * candidate formed first. Clients b (times 0 and 1 ms, SLO 100 ms) and c (one
 * request at 0.5 ms, SLO 100.5 ms), l(1) = 5 ms:
 *   t=0    b's request runs alone [0, 5): the GPU is believed busy until 5.
 *   t=0.5  c's candidate (bs 1) waits: latest = 0.5 + 100.5 - 5 = 96 ms.
 *   t=1    b's candidate (bs 1) waits: latest = 1 + 100 - 5 = 96 ms.
 *   t=5    the GPU timer (5 - delay 0) grants the smallest latest; 96 = 96,
 *          so client order decides: b runs [5, 10), then c [10, 15).
 * A rule "first candidate to wait wins" would run c at 5. */
static void test_latest_tie_goes_to_client_order(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  Seen s = { 0 };
  CsResults *r = run_eager(dir,
    "[{\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}},"
    " {\"model\": \"c\", \"slo_ms\": 100.5, \"arrival\": {\"process\": \"times\", \"times_ms\": [0.5]}}]",
    &s);
  assert_int_equal(s.n, 3);
  expect_run(&s, 0, 0, 0);
  expect_run(&s, 0, 1, 5);
  expect_run(&s, 1, 0.5, 10);
  assert_int_equal(cs_results_model(r, 0)->good + cs_results_model(r, 1)->good, 3);
  cs_results_free(r);

  /* The same with the clients listed the other way round: c is first now and
   * takes the GPU at 5, b follows at 10. */
  memset(&s, 0, sizeof s);
  r = run_eager(dir,
    "[{\"model\": \"c\", \"slo_ms\": 100.5, \"arrival\": {\"process\": \"times\", \"times_ms\": [0.5]}},"
    " {\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}}]",
    &s);
  assert_int_equal(s.n, 3);
  expect_run(&s, 1, 0, 0);
  expect_run(&s, 0, 0.5, 5);
  expect_run(&s, 1, 1, 10);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Without a tie the smallest latest wins whatever the client order: b at 0
 * and 1 ms (SLO 100: latest 96 ms), c at 1 ms with SLO 50 (latest 1 + 50 -
 * 5 = 46 ms). At 5 c (46 < 96) runs [5, 10), b [10, 15). */
static void test_smallest_latest_wins(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  Seen s = { 0 };
  CsResults *r = run_eager(dir,
    "[{\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}},"
    " {\"model\": \"c\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [1]}}]",
    &s);
  assert_int_equal(s.n, 3);
  expect_run(&s, 0, 0, 0);
  expect_run(&s, 1, 1, 5);
  expect_run(&s, 0, 1, 10);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* `latest` is inclusive: a waiting candidate whose latest equals the GPU's
 * free time is still granted. c at 1 ms with SLO 9 ms: latest = 1 + 9 - 5 =
 * 5 ms, exactly when b's first request frees the GPU; it runs [5, 10) and is
 * back at its due time 10 ms (good: latency 9 ms = SLO). b's second request
 * (latest 96) runs [10, 15). With an exclusive bound c would stop waiting at
 * 5 and be dropped. */
static void test_latest_inclusive(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  Seen s = { 0 };
  CsResults *r = run_eager(dir,
    "[{\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}},"
    " {\"model\": \"c\", \"slo_ms\": 9, \"arrival\": {\"process\": \"times\", \"times_ms\": [1]}}]",
    &s);
  assert_int_equal(s.n, 3);
  expect_run(&s, 0, 0, 0);
  expect_run(&s, 1, 1, 5);
  expect_run(&s, 0, 1, 10);
  assert_int_equal(cs_results_model(r, 1)->good, 1);
  assert_int_equal(cs_results_model(r, 1)->dropped, 0);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* The same tie under Symphony's own deferred dispatch, where the tie decides
 * which candidate is served and which is dropped. No delays. Model a (l = 5
 * ms at any batch: the profile's alpha 0, beta 5), one request at 0 with SLO
 * 5 ms: frontrun = due - l(2) = 0 = now, so it leaves at once and runs
 * [0, 5). Models b and c (l(k) = k + 4), one request each: b at 1 ms with SLO
 * 9 (due 10), c at 0.5 ms with SLO 9.5 (due 10). For both, frontrun exec =
 * max(now, 10 - l(2)) = 4 and latest = 10 - l(1) = 5.
 *   t=4  both model timers fire; GPU 0 frees at 5 > 4: both wait, GPU timer
 *        at 5.
 *   t=5  latest 5 = 5 for both (and free 5 <= 5): the first of b and c in
 *        client order runs [5, 10) and is back at its due time (good); the
 *        other, whose latest 5 is now before the GPU's free time 10, stops
 *        waiting and is dropped (its drop timer fires at latest + 1 ns).
 * c's candidate forms first (0.5 < 1), so arrival order would favour c. */
static void test_symphony_latest_tie(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 5.0);
  const char *a = "{\"model\": \"a\", \"slo_ms\": 5, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}";
  const char *b = "{\"model\": \"b\", \"slo_ms\": 9, \"arrival\": {\"process\": \"times\", \"times_ms\": [1]}}";
  const char *c = "{\"model\": \"c\", \"slo_ms\": 9.5, \"arrival\": {\"process\": \"times\", \"times_ms\": [0.5]}}";
  for (int order = 0; order < 2; order++) {
    /* order 0: clients a, b, c (b wins); order 1: a, c, b (c wins) */
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " \"dispatch\": {\"policy\": \"symphony\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
      " \"clients\": [%s, %s, %s]}", a, order ? c : b, order ? b : c);
    CsScenario *sc = test_scenario(dir, json);
    Seen s = { 0 };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = record;
    opt.user_data = &s;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(s.n, 3);
    expect_run(&s, 0, 0, 0);
    double winner_send = order ? 0.5 : 1, loser_send = order ? 1 : 0.5;
    int i = find(&s, 1, winner_send);
    assert_true(s.served[i]);
    assert_int_equal(s.dispatch[i], MS(5));
    assert_int_equal(s.start[i], MS(5));
    assert_int_equal(s.end[i], MS(10));
    assert_false(s.served[find(&s, 2, loser_send)]);
    assert_int_equal(cs_results_model(r, 1)->good, 1);
    assert_int_equal(cs_results_model(r, 2)->dropped, 1);
    assert_int_equal(cs_results_model(r, 0)->good, 1);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
}

/* ---- autoscaling advice (Symphony 3.5) ------------------------------------------ */

static double autoscaling(const CsResults *r, const char *key)
{
  char *json = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(json);
  g_free(json);
  const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "autoscaling"), key);
  assert_true(cJSON_IsNumber(v));
  double x = v->valuedouble;
  cJSON_Delete(doc);
  return x;
}

/* Two GPUs (N = 2). Model a: 30 requests at 10 req/s (sent at 0, 0.1, ...,
 * 2.9 s), each alone for 10 ms on GPU 0, all good; model b: 10 requests at
 * 10 req/s with no replica, all bad. Bad rate r = 10 / 40 = 1/4, so Symphony's
 * N r / (1 - r) = 2 (1/4) / (3/4) = 2/3 of a GPU to add (N r would say 1/2,
 * r / (1 - r) 1/3). The run ends with a's last result at 2.91 s; GPU 0 is busy
 * 30 x 10 ms = 0.3 s of it, GPU 1 never: idle fraction f = 1 - (0.3 / 2.91) / 2
 * and N f = 2 - 0.3 / 2.91 GPUs to remove. */
static void test_advice_at_a_quarter(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"arrival\": \"constant\", \"requests\": 30},"
    "  {\"model\": \"b\", \"rate\": 10, \"slo_ms\": 100, \"arrival\": \"constant\", \"requests\": 10}]}");
  CsResults *r = test_run(sc, NULL);
  assert_int_equal(cs_results_sim_time_ns(r), MS(2910));
  assert_float_equal(autoscaling(r, "bad_rate"), 0.25, 1e-15);
  assert_float_equal(autoscaling(r, "advice_add_gpus"), 2.0 / 3.0, 1e-12);
  assert_float_equal(autoscaling(r, "gpu_idle_fraction"), 1.0 - (0.3 / 2.91) / 2.0, 1e-12);
  assert_float_equal(autoscaling(r, "advice_remove_gpus"), 2.0 - 0.3 / 2.91, 1e-12);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- the goodput search against a brute-force queue ------------------------------- */

/* One server, service exactly 10 ms, first come first served, constant
 * arrivals at `rate` req/s sent at round(k x 1e9 / rate) ns while before
 * `duration_s` (integer nanoseconds, as docs/scenario.md's constant process). A request is
 * good when it is back within 50 ms. Returns whether the nearest-rank p99
 * latency is within the SLO, i.e. at least ceil(0.99 n) of the n requests are
 * good (dropped or failed ones would count as infinitely late; there are none).
 * This is the Lindley recursion, written here without the simulator. */
static gboolean brute_force_p99_holds(double rate, double duration_s)
{
  const int64_t service = MS(10), slo = MS(50), end = MS(1000 * duration_s);
  int64_t free_at = 0, n = 0, good = 0;
  for (int64_t k = 0;; k++) {
    int64_t t = llround((double)k * 1e9 / rate);
    if (t >= end)
      break;
    int64_t done = MAX(t, free_at) + service;
    free_at = done;
    good += done - t <= slo;
    n++;
  }
  return good >= (int64_t)ceil(0.99 * (double)n);
}

/* The search of test_metrics.c's closed form (50 req/s base, capacity 100
 * req/s), with the brute force as the judge: the reported multiplier m must
 * pass, and the search stopped only once its failing bracket end hi had
 * (hi - m) / hi <= tolerance, so m / (1 - tolerance) >= hi fails too.
 * Request i waits i (10 - 20/m) ms, so about 40 / (10 - 20/m) + 1 of the
 * 500 m d requests sent in d seconds are good. With d = 10 s the p99 and p95
 * limits are close (bisecting the brute force: m = 2.00808 and 2.00842);
 * with d = 1 s (about 104 requests) they are 0.16 % apart (2.08081 and
 * 2.08421), so a search that judged p95 would report a multiplier the brute
 * force fails. */
static void test_search_against_brute_force(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 50, \"arrival\": \"constant\","
    "   \"duration_s\": 10}]}");
  const struct {
    const char *duration;
    double tolerance;
  } cases[] = { { "10", 0.0005 }, { "10", 0.01 }, { "1", 0.0005 } };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    assert_true(cs_scenario_set(sc, "clients[0].duration_s", cases[i].duration, NULL));
    double duration_s = g_ascii_strtod(cases[i].duration, NULL);
    CsGoodputSearchOptions o;
    cs_goodput_search_options_init(&o);
    o.max_multiplier = 4;
    o.tolerance = cases[i].tolerance;
    CsGoodputProbe best;
    GError *err = NULL;
    assert_true(cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err));
    print_message("%s s, tolerance %g: multiplier %.6f\n", cases[i].duration, o.tolerance,
                  best.multiplier);
    assert_true(best.index >= 0);
    assert_true(brute_force_p99_holds(50 * best.multiplier, duration_s));
    assert_false(brute_force_p99_holds(50 * best.multiplier / (1 - o.tolerance), duration_s));
    assert_float_equal(best.offered_rps, 50 * best.multiplier, 1e-9);
  }
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- MAF 2019 windows that start late (docs/scenario.md, "Trace-driven clients") -- */

typedef struct {
  int64_t n, before, inside, after;
  int64_t lo_ns, hi_ns;
} Window;

static void count_sends(const CsRequestRecord *rec, void *user)
{
  Window *w = user;
  w->n++;
  if (rec->send_ns < w->lo_ns)
    w->before++;
  else if (rec->send_ns < w->hi_ns)
    w->inside++;
  else
    w->after++;
}

/* Minutes 1..5 of one function count 7, 0, 900, 0, 500. The window start_s
 * 60, duration_s 180 covers minutes 2, 3 and 4 (trace time [60, 240) s,
 * client time [0, 180) s x time_scale). Minute by minute, per-interval Poisson
 * arrivals put nothing in [0, 60) s (minute 2 is empty), minute 3's requests
 * in [60, 120) s and nothing after (minute 4 is empty; minute 1's 7 and minute
 * 5's 500 are outside the window). Scaled by time_scale: [60, 120) x scale.
 * The count is Poisson with mean 900 (4 standard deviations: 120); the
 * offered rate is the window's 900 invocations over its 180 x scale s. */
static void test_maf2019_window_by_minute(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3,4,5\n"
    "o1,a1,f1,http,7,0,900,0,500\n", -1, NULL));
  const double scales[] = { 1.0, 0.5, 2.0 };
  for (size_t i = 0; i < G_N_ELEMENTS(scales); i++) {
    char *json = g_strdup_printf(
      "{\"seed\": 9, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " \"trace\": {\"file\": \"counts.csv\", \"start_s\": 60, \"duration_s\": 180, \"time_scale\": %g},"
      " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", scales[i]);
    CsScenario *sc = test_scenario(dir, json);
    Window w = { .lo_ns = MS(60000 * scales[i]), .hi_ns = MS(120000 * scales[i]) };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = count_sends;
    opt.user_data = &w;
    CsResults *r = test_run(sc, &opt);
    const CsModelResult *m = cs_results_model(r, 0);
    print_message("time_scale %g: %" G_GINT64_FORMAT " requests in [%g, %g) s\n", scales[i],
                  (gint64)w.inside, 60 * scales[i], 120 * scales[i]);
    assert_int_equal(w.before, 0);
    assert_int_equal(w.after, 0);
    assert_true(fabs((double)w.inside - 900.0) < 4 * sqrt(900.0));
    assert_int_equal(m->generated, w.n);
    assert_float_equal(m->window_s, 180.0 * scales[i], 1e-9);
    assert_float_equal(m->offered_rps, 900.0 / (180.0 * scales[i]), 1e-9);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  g_free(path);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_latest_tie_goes_to_client_order),
    cmocka_unit_test(test_smallest_latest_wins),
    cmocka_unit_test(test_latest_inclusive),
    cmocka_unit_test(test_symphony_latest_tie),
    cmocka_unit_test(test_advice_at_a_quarter),
    cmocka_unit_test(test_search_against_brute_force),
    cmocka_unit_test(test_maf2019_window_by_minute),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
