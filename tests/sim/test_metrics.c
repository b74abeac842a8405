/* Metrics whose values follow from a hand-computed timeline or a closed
 * form: the goodput search's criteria and its bisection, the GPU-use time
 * series bins, and Symphony's autoscaling advice. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "test_util.h"

/* ---- search criteria ----------------------------------------------------------- */

/* Model "a" on one GPU as two replicas: batch 49 (fits, Mreq 60 %) then
 * batch 1 (does not fit: fails). While a batch of 49 fills within the 1 s
 * MAX_WAIT_TIME (above 49 req/s) the router sends 49 of every 50 requests to
 * the first and 1 to the second, so exactly 2 % of the 5000 measured requests
 * fail; below 10,000 req/s (49 requests per 5 ms) the rest finish within
 * the 1 s SLO. The search below probes 125..8000 req/s (multipliers 1/8..8
 * of 1000 req/s) upwards, and lower when its first probe fails. */
static CsScenario *two_percent_failing(char **dir_out)
{
  char *dir = test_dir_with_profile(1, 1);
  char *prof = g_build_filename(dir, "mreq.json", NULL);
  assert_true(g_file_set_contents(prof,
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80,"
    "   \"memory_bytes\": 17179869184}],"
    " \"models\": [{\"gpu\": \"gpu\", \"model\": \"a\", \"input_bytes\": 0, \"output_bytes\": 0,"
    "   \"batches\": [{\"batch\": 1, \"latency_ms\": 1, \"mreq_pct\": 60},"
    "                 {\"batch\": 49, \"latency_ms\": 5, \"mreq_pct\": 60}]}]}", -1, NULL));
  g_free(prof);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"mreq.json\"],"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"memory_overflow\": \"fail_replicas\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1000},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"a\", \"gpu\": 0, \"batch\": 49}, {\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 1000, \"arrival\": \"constant\","
    "   \"requests\": 5000}]}");
  *dir_out = dir;
  return sc;
}

/* The same placement: the batch-1 replica fails in memory, and the router
 * still sends it 1 request in 50. At 20,000 req/s manual expects
 * min(rate, 49 per 5 ms + 1 per 1 ms) = 10,800 req/s, but only the first
 * replica's 9,800 req/s can be served. At 5,000 req/s it expects 5,000, but
 * 2 % of them go to the failing replica: 4,900. */
static void test_expected_without_failing_replicas(void **state)
{
  (void)state;
  char *dir;
  CsScenario *sc = two_percent_failing(&dir);
  assert_true(cs_scenario_set(sc, "clients[0].rate", "20000", NULL));
  CsResults *r = test_run(sc, NULL);
  assert_float_equal(cs_results_model(r, 0)->expected_goodput_rps, 9800.0, 1e-9);
  char *json = cs_results_to_json(r);
  assert_non_null(strstr(json, "expected goodput 10800.00 req/s lowered to 9800.00"));
  g_free(json);
  cs_results_free(r);
  assert_true(cs_scenario_set(sc, "clients[0].rate", "5000", NULL));
  r = test_run(sc, NULL);
  assert_float_equal(cs_results_model(r, 0)->expected_goodput_rps, 4900.0, 1e-9);
  assert_float_equal(cs_results_total(r)->expected_goodput_rps, 4900.0, 1e-9);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

static CsGoodputProbe search(CsScenario *sc, CsGoodputCriterion criterion, double bound)
{
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.criterion = criterion;
  o.bad_rate_bound = bound;
  o.max_multiplier = 8;
  o.tolerance = 0.01;
  CsGoodputProbe best;
  GError *err = NULL;
  if (!cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err))
    fail_msg("search: %s", err->message);
  return best;
}

static void test_search_criteria(void **state)
{
  (void)state;
  char *dir;
  CsScenario *sc = two_percent_failing(&dir);
  CsResults *r = test_run(sc, NULL);
  assert_int_equal(cs_results_model(r, 0)->failed, 100);
  assert_float_equal(cs_results_model(r, 0)->bad_rate, 0.02, 1e-12);
  cs_results_free(r);
  /* p99 needs ceil(0.99 n) good requests: 98 % never passes (a p95 rule would). */
  CsGoodputProbe best = search(sc, CS_GOODPUT_P99, 0.0);
  assert_int_equal(best.index, -1);
  assert_float_equal(best.offered_rps, 0.0, 0.0);
  /* A 3 % bad-rate bound passes at every load, up to the largest multiplier. */
  best = search(sc, CS_GOODPUT_BAD_RATE, 0.03);
  assert_true(best.index >= 0);
  assert_float_equal(best.multiplier, 8.0, 0.0);
  assert_float_equal(best.offered_rps, 8000.0, 1e-9);
  assert_float_equal(best.worst_bad_rate, 0.02, 1e-12);
  /* A 1 % bound never passes. */
  best = search(sc, CS_GOODPUT_BAD_RATE, 0.01);
  assert_int_equal(best.index, -1);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* One replica runs every request alone for 10 ms: capacity 100 req/s, i.e.
 * multiplier 2 on a 50 req/s client. With constant arrivals at 50 m req/s
 * for 10 s (500 m requests), request i waits i (10 - 20/m) ms; it is good
 * while 10 + wait <= 50 ms. p99 holds while (10 - 20/m) 500 m <= 40/0.99,
 * i.e. m <= 2.00808: the search must end between 2 and that. (Bisecting the
 * brute-force queue of test_hand_timelines.c gives 2.0080808; the search's
 * probes, bisections of [2, 4], end at 2.0078125.) */
static void test_search_capacity_closed_form(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 50, \"arrival\": \"constant\","
    "   \"duration_s\": 10}]}");
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.max_multiplier = 4;
  o.tolerance = 0.0005;
  CsGoodputProbe best;
  GError *err = NULL;
  assert_true(cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err));
  assert_true(best.multiplier >= 2.0 * (1 - 0.0005) && best.multiplier <= 2.00808);
  assert_float_equal(best.offered_rps, 50 * best.multiplier, 1e-9);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- GPU-use time series ---------------------------------------------------------- */

/* Reads gpus_over_time.csv into busy (the busy_gpus column) and used
 * (gpus_used) by bin, at most n bins, zero in the bins without a row; returns
 * the number of rows. The file has a row per bin some GPU ran in, labelled
 * by the start of its bin, in bin order. */
static int read_timeseries(const CsResults *r, const char *dir, double bin_s, double *busy,
                           int *used, int n)
{
  for (int b = 0; b < n; b++) {
    busy[b] = 0.0;
    used[b] = 0;
  }
  char *path = g_build_filename(dir, "ts.csv", NULL);
  GError *err = NULL;
  assert_true(cs_results_write_gpu_timeseries(r, path, &err));
  char *text = NULL;
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  assert_string_equal(lines[0], "time_s,gpus_used,busy_gpus");
  int rows = 0, last = -1;
  for (int i = 1; lines[i] && lines[i][0]; i++, rows++) {
    double t;
    int u;
    double bz;
    assert_int_equal(sscanf(lines[i], "%lf,%d,%lf", &t, &u, &bz), 3);
    int b = (int)lround(t / bin_s);
    assert_float_equal(t, b * bin_s, 1e-9); /* a row is labelled by the start of its bin */
    assert_true(b > last && b < n);
    last = b;
    used[b] = u;
    busy[b] = bz;
  }
  g_strfreev(lines);
  g_free(text);
  g_free(path);
  return rows;
}

/* One request at 0.9 s runs 200 ms: the GPU is busy over [0.9, 1.1) s. With
 * 1 s bins that is 0.1 s in bin 0 and 0.1 s in bin 1 (0.1 busy GPUs each);
 * with 0.25 s bins, 0.1 s in bin 3 and bin 4 (0.4 each), nothing before: the
 * idle bins 0..2 have no row. */
static void test_gpu_timeseries_bins(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 200.0);
  const char *tmpl =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"outputs\": {\"timeseries_bin_s\": %g},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\","
    "   \"times_ms\": [900]}}]}";
  double busy[8];
  int used[8];
  char *json = g_strdup_printf(tmpl, 1.0);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run_series(sc);
  assert_int_equal(read_timeseries(r, dir, 1.0, busy, used, 8), 2);
  assert_float_equal(busy[0], 0.1, 1e-9);
  assert_float_equal(busy[1], 0.1, 1e-9);
  assert_int_equal(used[0], 1);
  assert_int_equal(used[1], 1);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);

  json = g_strdup_printf(tmpl, 0.25);
  sc = test_scenario(dir, json);
  r = test_run_series(sc);
  assert_int_equal(read_timeseries(r, dir, 0.25, busy, used, 8), 2);
  for (int b = 0; b < 3; b++) {
    assert_float_equal(busy[b], 0.0, 0.0);
    assert_int_equal(used[b], 0);
  }
  assert_float_equal(busy[3], 0.4, 1e-9);
  assert_float_equal(busy[4], 0.4, 1e-9);
  assert_int_equal(used[3], 1);
  assert_int_equal(used[4], 1);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

/* ---- autoscaling advice -------------------------------------------------------------- */

/* A number of the summary's "autoscaling" object. */
static double autoscaling_number(const char *json, const char *key)
{
  const char *as = strstr(json, "\"autoscaling\":");
  assert_non_null(as);
  char *pat = g_strdup_printf("\"%s\":\t", key);
  const char *p = strstr(as, pat);
  assert_non_null(p);
  double v = g_ascii_strtod(p + strlen(pat), NULL);
  g_free(pat);
  return v;
}

/* Two GPUs. Model "a": 100 requests at 10 req/s (sent at 0, 0.1, ..., 9.9 s),
 * each alone for 10 ms on GPU 0, all good; model "b": 100 requests with no
 * replica. Bad rate r = 100/200 = 0.5, so Symphony's N r / (1 - r) = 2 GPUs
 * to add. GPU 0 is busy 1 s of the 9.91 s run (the last result at 9.91 s),
 * GPU 1 never: idle fraction f = 1 - (1/9.91)/2, N f = 2 - 1/9.91 to remove. */
static void test_autoscaling_advice(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"arrival\": \"constant\", \"requests\": 100},"
    "  {\"model\": \"b\", \"rate\": 10, \"slo_ms\": 100, \"arrival\": \"constant\", \"requests\": 100}]}");
  CsResults *r = test_run(sc, NULL);
  assert_int_equal(cs_results_sim_time_ns(r), 9910000000LL);
  char *json = cs_results_to_json(r);
  assert_float_equal(autoscaling_number(json, "bad_rate"), 0.5, 1e-12);
  assert_float_equal(autoscaling_number(json, "advice_add_gpus"), 2.0, 1e-12);
  assert_float_equal(autoscaling_number(json, "gpu_idle_fraction"), 1.0 - (1.0 / 9.91) / 2.0, 1e-12);
  assert_float_equal(autoscaling_number(json, "advice_remove_gpus"), 2.0 - 1.0 / 9.91, 1e-12);
  g_free(json);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- window boundaries ---------------------------------------------------------------- */

/* Constant arrivals at 10 req/s for 1 s (sent at 0, 0.1, ..., 0.9 s), each
 * alone for exactly 100 ms, SLO exactly 100 ms: every latency equals the SLO
 * (good); results arrive at 0.1, ..., 1.0 s, and the one at exactly 1.0 s is
 * after the window [0, 1): 9 results in it (9.0 req/s), 1 late. */
static void test_window_and_slo_boundaries(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 100.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"arrival\": \"constant\","
    "   \"duration_s\": 1}]}");
  CsResults *r = test_run(sc, NULL);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_int_equal(m->measured, 10);
  assert_int_equal(m->good, 10);
  assert_float_equal(m->bad_rate, 0.0, 0.0);
  assert_int_equal(m->late, 1);
  assert_int_equal(m->in_window, 9);
  assert_int_equal(m->good_in_window, 9);
  assert_float_equal(m->throughput_rps, 9.0, 1e-12);
  assert_float_equal(m->goodput_rps, 9.0, 1e-12);
  assert_float_equal(m->drain_s, 0.0, 0.0); /* the last result is at the window's end */
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* A "times" client's window ends one mean gap after its last time: times
 * 0, 100, 200, 300 ms give rate 10 req/s, window 0.4 s, submitted 10 req/s. */
static void test_times_window(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\","
    "   \"times_ms\": [0, 100, 200, 300]}}]}");
  CsResults *r = test_run(sc, NULL);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_float_equal(m->offered_rps, 10.0, 1e-9);
  assert_float_equal(m->window_s, 0.4, 1e-12);
  assert_float_equal(m->submitted_rps, 10.0, 1e-9);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Gamma gaps with mean 1/rate: 200 req/s for 100 s sends 20,000 requests on
 * average; a renewal process with CV 2 has a count standard deviation of
 * about sqrt(20000) x CV = 283. Five of those either side. */
static void test_gamma_mean_rate(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"seed\": 5, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 200, \"slo_ms\": 100,"
    "   \"arrival\": {\"process\": \"gamma\", \"cv\": 2}, \"duration_s\": 100}]}");
  CsResults *r = test_run(sc, NULL);
  assert_true(fabs(cs_results_model(r, 0)->measured - 20000.0) < 5 * 283.0);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* A bad rate equal to the bound passes: 4 requests, 3 to a batch-3 replica
 * that fits and 1 to a batch-1 replica that fails in memory: bad rate 0.25
 * exactly (a binary fraction), so the bound 0.25 holds at every probe. */
static void test_bad_rate_bound_inclusive(void **state)
{
  (void)state;
  char *dir;
  CsScenario *sc = two_percent_failing(&dir);
  assert_true(cs_scenario_set(sc, "placement.replicas[0].batch", "3", NULL));
  assert_true(cs_scenario_set(sc, "clients[0].requests", "4", NULL));
  assert_true(cs_scenario_set(sc, "dispatch.max_wait_ms", "100000", NULL));
  CsResults *r = test_run(sc, NULL);
  assert_float_equal(cs_results_model(r, 0)->bad_rate, 0.25, 0.0);
  cs_results_free(r);
  CsGoodputProbe best = search(sc, CS_GOODPUT_BAD_RATE, 0.25);
  assert_true(best.index >= 0);
  assert_float_equal(best.multiplier, 8.0, 0.0);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* SM use of a batch size that was not profiled comes from the nearest
 * profiled point, the smaller one on a tie: points at batch 4 (WSM 20 %) and
 * 8 (WSM 60 %), a replica at batch 6, one batch of 6 at t = 0 that runs
 * l(6) = 30 ms (linear through 20 ms at 4 and 40 ms at 8): over the 1 s bin
 * the GPU is busy 0.03 and its SM use is 0.2 x 0.03 = 0.006. */
static void test_sm_use_nearest_point(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1, 1);
  char *prof = g_build_filename(dir, "wsm.json", NULL);
  assert_true(g_file_set_contents(prof,
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80,"
    "   \"memory_bytes\": 17179869184}],"
    " \"models\": [{\"gpu\": \"gpu\", \"model\": \"a\", \"input_bytes\": 0, \"output_bytes\": 0,"
    "   \"batches\": [{\"batch\": 4, \"latency_ms\": 20, \"creq_pct\": {\"ao\": 20, \"wao\": 20, \"wsm\": 20}},"
    "                 {\"batch\": 8, \"latency_ms\": 40, \"creq_pct\": {\"ao\": 60, \"wao\": 60, \"wsm\": 60}}]}]}",
    -1, NULL));
  g_free(prof);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"wsm.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1000},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 6}]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\","
    "   \"times_ms\": [0, 0, 0, 0, 0, 0]}}]}");
  CsResults *r = test_run_series(sc);
  char *gpath = g_build_filename(dir, "gpu.csv", NULL), *wpath = g_build_filename(dir, "w.csv", NULL);
  GError *err = NULL;
  assert_true(cs_results_write_gpu_detail(r, gpath, wpath, &err));
  char *text = NULL;
  assert_true(g_file_get_contents(gpath, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  assert_string_equal(lines[0], "time_s,gpu,busy_fraction,sm_use,memory_pct");
  double t, busy, sm, mem;
  int gpu;
  assert_int_equal(sscanf(lines[1], "%lf,%d,%lf,%lf,%lf", &t, &gpu, &busy, &sm, &mem), 5);
  assert_float_equal(busy, 0.03, 1e-9);
  assert_float_equal(sm, 0.006, 1e-9);
  g_strfreev(lines);
  g_free(text);
  g_free(gpath);
  g_free(wpath);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_search_criteria),
    cmocka_unit_test(test_expected_without_failing_replicas),
    cmocka_unit_test(test_search_capacity_closed_form),
    cmocka_unit_test(test_gpu_timeseries_bins),
    cmocka_unit_test(test_autoscaling_advice),
    cmocka_unit_test(test_window_and_slo_boundaries),
    cmocka_unit_test(test_times_window),
    cmocka_unit_test(test_gamma_mean_rate),
    cmocka_unit_test(test_bad_rate_bound_inclusive),
    cmocka_unit_test(test_sm_use_nearest_point),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
