/* The engine against analytic results: queueing theory, batching by size and
 * by timeout, rates and windows, warm-up, round-robin, unserved models,
 * network stages, determinism and random-stream independence. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_util.h"

/* M/D/1: batch size 1, zero network, Poisson arrivals at rate lambda,
 * deterministic service S. Mean wait in queue = rho*S / (2*(1-rho)). */
static void check_md1(double rho, int64_t requests)
{
  const double S_ms = 10.0; /* latency(1) = 1 + 9 ms */
  char *dir = test_dir_with_profile(1.0, 9.0);
  char *json = g_strdup_printf(
    "{\"seed\": 42, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": %.17g, \"slo_ms\": 1000, \"requests\": %" G_GINT64_FORMAT "}]}",
    rho / (S_ms / 1000.0), (gint64)requests);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  const CsModelResult *m = cs_results_model(r, 0);
  double expect = rho * S_ms / (2.0 * (1.0 - rho));
  double got = m->stage[CS_STAGE_QUEUE_WAIT].mean;
  print_message("M/D/1 rho=%.1f: mean queue wait %.4f ms, Pollaczek-Khinchine %.4f ms (%+.2f %%)\n",
                rho, got, expect, 100.0 * (got - expect) / expect);
  assert_int_equal(m->completed, requests);
  assert_true(fabs(got - expect) <= 0.02 * expect);
  /* Nothing else may add delay in this set-up. */
  assert_float_equal(m->stage[CS_STAGE_ROUTER_WAIT].max, 0.0, 1e-12);
  assert_float_equal(m->stage[CS_STAGE_GPU].p50, S_ms, 1e-9);
  assert_float_equal(m->stage[CS_STAGE_TO_NODE].max, 0.0, 1e-12);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

static void test_md1_rho_05(void **state)
{
  (void)state;
  check_md1(0.5, 1000000);
}

static void test_md1_rho_08(void **state)
{
  (void)state;
  check_md1(0.8, 2000000);
}

typedef struct {
  int n;        /* requests seen */
  int bad_wait; /* requests whose router wait or batch size differs from the analytic value */
} Observed;

/* Constant arrivals every 1 ms, batch target 8 reached long before
 * MAX_WAIT_TIME: every batch has exactly 8 requests and request k of a batch
 * waits (7 - k) ms at the router. */
static void on_request_full(const CsRequestRecord *rec, void *user)
{
  Observed *o = user;
  int pos = (int)((rec->send_ns / 1000000) % 8);
  if (rec->dispatch_ns - rec->send_ns != (int64_t)(7 - pos) * 1000000 || rec->batch_size != 8)
    o->bad_wait++;
  o->n++;
}

static void test_batch_target_reached(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.5, 1.0); /* l(8) = 5 ms < 8 ms spacing of batches */
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 100},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 8}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 800}]}");
  Observed o = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = on_request_full;
  opt.user_data = &o;
  CsResults *r = test_run(sc, &opt);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_int_equal(o.n, 800);
  assert_int_equal(o.bad_wait, 0);
  assert_int_equal(m->batches, 100);
  assert_float_equal(m->mean_batch, 8.0, 1e-12);
  assert_float_equal(m->stage[CS_STAGE_ROUTER_WAIT].mean, 3.5, 1e-9);
  assert_float_equal(m->stage[CS_STAGE_ROUTER_WAIT].max, 7.0, 1e-9);
  assert_float_equal(m->stage[CS_STAGE_GPU].p50, 5.0, 1e-9);
  assert_float_equal(m->stage[CS_STAGE_QUEUE_WAIT].max, 0.0, 1e-12);
  /* Window: 800 requests, 1 ms apart, from 0 to where the 801st would be. */
  assert_float_equal(m->window_s, 0.8, 1e-12);
  assert_float_equal(m->submitted_rps, 1000.0, 1e-9);
  /* The last batch (requests sent at 792..799 ms) leaves at 799 ms and ends at
   * 804 ms, after the window: 792 results arrive inside it, 8 late. */
  assert_int_equal(m->late, 8);
  assert_int_equal(m->in_window, 792);
  assert_float_equal(m->throughput_rps, 990.0, 1e-9);
  assert_float_equal(m->goodput_rps, 990.0, 1e-9);
  assert_float_equal(m->drain_s, 0.004, 1e-12);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Arrivals every 30 ms, target 8, MAX_WAIT_TIME 100 ms: a batch opens with a
 * request at t, collects t+30, t+60, t+90 and leaves at t+100 with 4. */
static void on_request_slow(const CsRequestRecord *rec, void *user)
{
  Observed *o = user;
  int pos = (int)((rec->send_ns / 30000000) % 4);
  if (rec->dispatch_ns - rec->send_ns != 100000000 - (int64_t)pos * 30000000 || rec->batch_size != 4)
    o->bad_wait++;
  o->n++;
}

static void test_batch_timeout(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.5, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 8}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 33.333333333333336, \"slo_ms\": 500, \"arrival\": \"constant\", \"requests\": 400}]}");
  Observed o = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = on_request_slow;
  opt.user_data = &o;
  CsResults *r = test_run(sc, &opt);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_int_equal(o.n, 400);
  assert_int_equal(o.bad_wait, 0);
  assert_int_equal(m->batches, 100);
  assert_float_equal(m->mean_batch, 4.0, 1e-12);
  assert_float_equal(m->stage[CS_STAGE_ROUTER_WAIT].max, 100.0, 1e-9);
  assert_float_equal(m->stage[CS_STAGE_ROUTER_WAIT].mean, (100 + 70 + 40 + 10) / 4.0, 1e-9);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Warm-up: requests sent during warmup_s are generated but not measured.
 * Constant 100 req/s: 1 s of warm-up sends 100, the 10 s window 1000, and
 * every measured request completes (the run drains after the window). */
static void test_warmup_and_window(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.5, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 500, \"arrival\": \"constant\","
    "  \"duration_s\": 10, \"warmup_s\": 1}]}");
  CsResults *r = test_run(sc, NULL);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_int_equal(m->warmup, 100);
  assert_int_equal(m->measured, 1000);
  assert_int_equal(m->generated, 1100);
  assert_float_equal(m->window_s, 10.0, 1e-12);
  assert_float_equal(m->submitted_rps, 100.0, 1e-9);
  assert_int_equal(m->completed, 1000);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Round-robin over replicas of batch 4 and 8: each gets every other batch, so
 * the batch-8 replica serves twice the requests. A model that gets no GPU
 * has every request unserved (not failed, not dropped), visibly. Constant 2 ms network both ways. */
static void test_round_robin_unserved_network(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"network\": {\"constant_ms\": 2},"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"a\", \"gpu\": 0, \"batch\": 4}, {\"model\": \"a\", \"gpu\": 1, \"batch\": 8}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 1200},"
    "  {\"model\": \"b\", \"rate\": 10, \"slo_ms\": 50, \"requests\": 20}]}");
  CsResults *r = test_run(sc, NULL);
  const CsModelResult *a = cs_results_model(r, 0), *b = cs_results_model(r, 1);
  assert_int_equal(a->batches, 200);
  assert_float_equal(a->mean_batch, 6.0, 1e-12);
  assert_float_equal(a->stage[CS_STAGE_TO_NODE].p50, 2.0, 1e-12);
  assert_float_equal(a->stage[CS_STAGE_RESULT_RETURN].max, 2.0, 1e-12);
  char *json = cs_results_to_json(r);
  assert_non_null(strstr(json, "\"4\":\t100"));
  assert_non_null(strstr(json, "\"8\":\t100"));
  g_free(json);
  assert_int_equal(b->unserved, 20);
  assert_int_equal(b->failed, 0);
  assert_int_equal(b->dropped, 0);
  assert_int_equal(b->completed, 0);
  int unserved_warnings = 0, no_results = 0;
  for (int i = 0; i < cs_results_n_warnings(r); i++) {
    const CsWarning *w = cs_results_warning(r, i);
    unserved_warnings += strcmp(w->code, "model_unserved") == 0 && strcmp(w->model, "b") == 0;
    no_results += strcmp(w->code, "model_no_results") == 0 && strcmp(w->model, "b") == 0;
  }
  assert_int_equal(unserved_warnings, 1);
  assert_int_equal(no_results, 0); /* model_unserved already says why */
  assert_float_equal(b->goodput_rps, 0.0, 0.0);
  assert_float_equal(b->bad_rate, 1.0, 0.0);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

static const char *const determinism_scenario =
  "{\"seed\": 7, \"profiles\": [\"synthetic.json\"], \"network\": {\"constant_ms\": 0.5},"
  " \"cluster\": {\"gpus\": 3, \"gpu_type\": \"gpu\"},"
  " \"clients\": [{\"model\": \"a\", \"rate\": 300, \"slo_ms\": 60, \"duration_s\": 20, \"warmup_s\": 1},"
  "  {\"model\": \"b\", \"rate\": 200, \"slo_ms\": 40, \"arrival\": {\"process\": \"gamma\", \"cv\": 3}, \"duration_s\": 20},"
  "  {\"model\": \"c\", \"rate\": 100, \"slo_ms\": 40, \"arrival\": \"constant\", \"requests\": 2000}]}";

static void test_determinism(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  char *out[3];
  for (int i = 0; i < 3; i++) {
    CsScenario *sc = test_scenario(dir, determinism_scenario);
    CsRunOptions opt;
    cs_run_options_init(&opt);
    if (i == 2)
      opt.seed_override = 8;
    CsResults *r = test_run(sc, &opt);
    out[i] = cs_results_to_json(r);
    cs_results_free(r);
    cs_scenario_free(sc);
  }
  assert_string_equal(out[0], out[1]);
  assert_string_not_equal(out[0], out[2]);
  for (int i = 0; i < 3; i++)
    g_free(out[i]);
  test_dir_remove(dir);
}

/* Adding a client (listed first, so every index shifts) leaves the other
 * clients' arrival times unchanged: streams are keyed by model name. */
typedef struct {
  GArray *sends;
} Sends;

static void collect_a(const CsRequestRecord *rec, void *user)
{
  Sends *s = user;
  if (strcmp(rec->model, "a") == 0)
    g_array_append_val(s->sends, rec->send_ns);
}

static GArray *sends_of_a(const char *dir, const char *json)
{
  CsScenario *sc = test_scenario(dir, json);
  Sends s = { g_array_new(FALSE, FALSE, sizeof(int64_t)) };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = collect_a;
  opt.user_data = &s;
  CsResults *r = test_run(sc, &opt);
  cs_results_free(r);
  cs_scenario_free(sc);
  return s.sends;
}

static int cmp_i64(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void test_stream_independence(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  GArray *alone = sends_of_a(dir,
    "{\"seed\": 3, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 200, \"slo_ms\": 60, \"duration_s\": 5}]}");
  GArray *with_b = sends_of_a(dir,
    "{\"seed\": 3, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"b\", \"rate\": 500, \"slo_ms\": 60, \"duration_s\": 5},"
    "  {\"model\": \"a\", \"rate\": 200, \"slo_ms\": 60, \"duration_s\": 5}]}");
  /* Records leave in completion order; compare the arrival times as sets.
   * Poisson at 200 req/s for 5 s: 1000 expected, standard deviation 32, so
   * more than 900 (3 of them below) says the stream ran. */
  g_array_sort(alone, cmp_i64);
  g_array_sort(with_b, cmp_i64);
  assert_true(alone->len > 900);
  assert_int_equal(alone->len, with_b->len);
  assert_memory_equal(alone->data, with_b->data, alone->len * sizeof(int64_t));
  g_array_unref(alone);
  g_array_unref(with_b);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_md1_rho_05),
    cmocka_unit_test(test_md1_rho_08),
    cmocka_unit_test(test_batch_target_reached),
    cmocka_unit_test(test_batch_timeout),
    cmocka_unit_test(test_warmup_and_window),
    cmocka_unit_test(test_round_robin_unserved_network),
    cmocka_unit_test(test_determinism),
    cmocka_unit_test(test_stream_independence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
