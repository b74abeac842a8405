/* Times, sizes and memory at the edges of what int64 and a machine hold
 * (issue 13): values in range field by field whose sums, products or spans
 * are not. Each case once crashed, aborted, ran out of memory or printed a
 * wrong number; now it runs with memory that grows with its events, or is
 * refused with the file, the JSON path and what was expected. Expected
 * values are computed by hand in the comments. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "common/checked.h"
#include "scenario/scenario.h"
#include "sim/engine.h"
#include "sim/results.h"
#include "test_util.h"

static void write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  assert_true(g_file_set_contents(p, text, -1, NULL));
  g_free(p);
}

/* Runs json in dir; returns the results or NULL with *message set (g_free). */
static CsResults *try_run(const char *dir, const char *json, const CsRunOptions *opt,
                          char **message)
{
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  CsResults *r = cs_run(sc, opt, &err);
  *message = err ? g_strdup(err->message) : NULL;
  if (err)
    assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_INVALID));
  g_clear_error(&err);
  cs_scenario_free(sc);
  return r;
}

static void assert_refused(const char *dir, const char *json, const CsRunOptions *opt,
                           const char *expected)
{
  char *msg = NULL;
  CsResults *r = try_run(dir, json, opt, &msg);
  if (r || !strstr(msg, expected))
    fail_msg("expected a refusal containing\n  %s\ngot\n  %s", expected, r ? "(a run)" : msg);
  g_free(msg);
}

typedef struct {
  int64_t early, late, other;
} TwoIntervals;

/* Sends in [0.4, 0.401) s, in [4320000.4, 4320000.401) s, elsewhere. */
static void count_sends(const CsRequestRecord *rec, void *user)
{
  TwoIntervals *t = user;
  if (rec->send_ns >= 400000000 && rec->send_ns < 401000000)
    t->early++;
  else if (rec->send_ns >= INT64_C(4320000400000000) && rec->send_ns < INT64_C(4320000401000000))
    t->late++;
  else
    t->other++;
}

/* Two MAF 2021 rows 50 days apart (starts 0.4 s and 4320000.4 s), Poisson
 * arrivals in intervals of 1 ms: intervals 400 and 4320000400 of the window
 * hold a request each, the 4.3 * 10^9 others none. The per-interval index
 * was cut to 32 bits and a dense array of counts written out of bounds; now
 * the client lists the two intervals only. With rate_scale 200, each
 * interval sends Poisson(200) requests inside it and none elsewhere
 * (P(0 in an interval) = e^-200). */
static void test_trace_intervals_far_apart(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.01, 1.0);
  write_file(dir, "far.csv", "app,func,end_timestamp,duration\n"
                             "x,f,0.5,0.1\n"
                             "x,f,4320000.5,0.1\n");
  const char *json =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"far.csv\", \"arrivals\": \"poisson\", \"interval_s\": 0.001,"
    "   \"rate_scale\": 200, \"duration_s\": 4320001},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}";
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  CsConfig *cfg = cs_scenario_compile(sc, &err);
  assert_non_null(cfg);
  assert_int_equal(cfg->clients[0].n_intervals, 2);
  assert_int_equal(cfg->clients[0].interval_index[0], 400);
  assert_int_equal(cfg->clients[0].interval_index[1], INT64_C(4320000400));
  assert_int_equal(cfg->clients[0].interval_counts[0], 1);
  assert_int_equal(cfg->clients[0].interval_counts[1], 1);
  cs_config_free(cfg);

  TwoIntervals seen = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = count_sends;
  opt.user_data = &seen;
  opt.timeseries = TRUE;
  CsResults *r = test_run(sc, &opt);
  assert_true(seen.early > 0);
  assert_true(seen.late > 0);
  assert_int_equal(seen.other, 0);
  /* The GPU is busy around 0.4 s and 4320000.4 s: its busy series holds a
   * few runs, not the 4.3 million bins of 1 s between. */
  assert_true(r->gpu_bins[0]->len <= 8);
  assert_int_equal(cs_bins_end(r->bin_total), 4320001);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* The same trace replayed through place and search goes through the same
 * compilation; a trace window or interval whose simulated length (trace
 * seconds x time_scale) passes 10^9 s is refused with its JSON path. */
static void test_trace_window_past_horizon(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.01, 1.0);
  write_file(dir, "t.csv", "app,func,end_timestamp,duration\nx,f,0.5,0.1\nx,f,100.5,0.1\n");
  assert_refused(dir,
                 "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                 " \"trace\": {\"file\": \"t.csv\", \"duration_s\": 1001, \"time_scale\": 1e6},"
                 " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}",
                 NULL,
                 "test.json: trace.duration_s: the window lasts 1.001e+09 s of simulated time "
                 "(duration_s 1001 s x time_scale 1e+06): expected at most 1e+09 s");
  assert_refused(dir,
                 "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                 " \"trace\": {\"file\": \"t.csv\", \"time_scale\": 1e6, \"duration_s\": 100,"
                 "   \"arrivals\": \"poisson\", \"interval_s\": 2000},"
                 " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}",
                 NULL,
                 "test.json: trace.interval_s: an interval lasts 2e+09 s of simulated time");
  /* Within the horizon: a window of 10^8 s, exact replay. */
  char *msg = NULL;
  CsResults *r = try_run(dir,
              "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
              " \"trace\": {\"file\": \"t.csv\", \"duration_s\": 1000, \"time_scale\": 1e5},"
              " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}",
              NULL, &msg);
  if (!r)
    fail_msg("a window of 1e8 s was refused: %s", msg);
  /* Two rows at 0.4 s and 100.4 s trace time, scaled by 10^5: the last sent
   * at 1.004e7 s, answered within its max_wait (100 ms) and 1.01 ms. */
  assert_int_equal(cs_results_model(r, 0)->generated, 2);
  assert_true(cs_results_sim_time_ns(r) >= INT64_C(10040000000000000) - 2);
  assert_true(cs_results_sim_time_ns(r) <= INT64_C(10040000000000000) + 101010002);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* A request payload of 9 * 10^15 bytes in a batch of 2048 is 1.8 * 10^19
 * bytes, past int64: the product wrapped to a negative size, the network
 * curve refused it with a CRITICAL and the transfer took 0 ns, and the run
 * exited 0. Now the run stops with the sizes. With a constant network the
 * size does not matter and the same batch runs. */
static void test_payload_overflow(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  write_file(dir, "net.json",
             "{\"format\": \"clustersim-network\", \"version\": 1, \"source\": \"test\","
             " \"segments\": [{\"a\": 1e-12, \"b\": 1, \"c_ms\": 0}]}");
  const char *tmpl =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"network\": %s, \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1000},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 2048}]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"rate\": 1000000, \"arrival\": \"constant\","
    "   \"requests\": 2048, \"input_bytes\": 9000000000000000}]}";
  char *json = g_strdup_printf(tmpl, "{\"curve\": \"net.json\"}");
  assert_refused(dir, json, NULL,
                 "the request payload of a batch of 2048 requests of a is 2048 x 9000000000000000 "
                 "bytes, more than 2^63 bytes");
  g_free(json);
  json = g_strdup_printf(tmpl, "{\"constant_ms\": 1}");
  char *msg = NULL;
  CsResults *r = try_run(dir, json, NULL, &msg);
  if (!r)
    fail_msg("a constant network refused a large payload: %s", msg);
  /* The 2048th request is sent at 2047 us and fills the batch: +1 ms to the
   * node, 1 ms on the GPU, +1 ms back: the last result at 5.047 ms. */
  assert_int_equal(cs_results_sim_time_ns(r), 2047000 + 3000000);
  cs_results_free(r);
  g_free(json);
  test_dir_remove(dir);
}

/* A network curve evaluates to more than int64 ns holds (1e300 ms):
 * documented to saturate at INT64_MAX, then now + INT64_MAX wrapped to a
 * time in the past and the engine aborted on "time never runs backwards".
 * Now the sum saturates too and the run stops at the time limit. */
static void test_network_saturates(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  write_file(dir, "slow.json",
             "{\"format\": \"clustersim-network\", \"version\": 1, \"source\": \"test\","
             " \"segments\": [{\"a\": 0, \"b\": 0, \"c_ms\": 1e300}]}");
  assert_refused(dir,
                 "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                 " \"network\": {\"curve\": \"slow.json\"},"
                 " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"rate\": 10, \"requests\": 3}]}",
                 NULL,
                 "test.json: a batch of a at its GPU (after its transfer or a deferred start) "
                 "would be at inf s of simulated time, past the limit of 4.61169e+09 s (2^62 ns)");
  test_dir_remove(dir);
}

/* Explicit send times out of int64 ns (1e300 ms wrapped, then an assertion
 * aborted) and clients whose sending ends past 10^9 s are refused at
 * validation with their JSON path. */
static void test_times_past_horizon(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  const char *head = "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, "
                     "\"gpu_type\": \"gpu\"}, \"clients\": [";
  char *json = g_strconcat(head, "{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": "
                           "{\"process\": \"times\", \"times_ms\": [1e300]}}]}", NULL);
  assert_refused(dir, json, NULL,
                 "test.json: clients[0].arrival.times_ms[0]: expected a time in ms in [0, 1e+12] "
                 "(simulated time is limited to 1e+09 s), got 1e+300");
  g_free(json);
  /* start 6e8 s + duration 6e8 s = 1.2e9 s. */
  json = g_strconcat(head, "{\"model\": \"a\", \"slo_ms\": 50, \"rate\": 1e-6, \"start_s\": 6e8, "
                     "\"duration_s\": 6e8}]}", NULL);
  assert_refused(dir, json, NULL,
                 "test.json: clients[0]: sends until 1.2e+09 s of simulated time (start_s 6e+08 + "
                 "warmup_s 0 + duration_s 6e+08): expected at most 1e+09 s");
  g_free(json);
  /* 20 requests at 1e-8 req/s take 2e9 s. */
  json = g_strconcat(head, "{\"model\": \"a\", \"slo_ms\": 50, \"rate\": 1e-8, \"requests\": 20}]}",
                     NULL);
  assert_refused(dir, json, NULL,
                 "test.json: clients[0]: sends until 2e+09 s of simulated time (start_s 0 + "
                 "warmup_s 0 + requests / rate 2e+09)");
  g_free(json);
  /* Times [0, 4e11] ms: a mean gap of 4e8 s, so the window ends at 8e8 s. */
  json = g_strconcat(head, "{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": "
                     "{\"process\": \"times\", \"times_ms\": [0, 4e11]}}]}", NULL);
  char *msg = NULL;
  CsResults *r = try_run(dir, json, NULL, &msg);
  if (!r)
    fail_msg("refused: %s", msg);
  assert_int_equal(cs_results_model(r, 0)->completed, 2);
  g_free(json);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Two requests 4e8 s apart, each 1 ms on the GPU, in bins of 1 s: the GPU
 * is used in bins 0 and 4e8, idle in the 4e8 - 1 between. A dense series
 * took 16 bytes per bin (6.4 GB here; 16 GiB for duration_s 1e9); the runs
 * take two entries. GPUs used: max 1, mean 2 / (4e8 + 1) over the bins up to
 * the last one used. */
static void test_timeseries_sparse(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": "
    "   {\"process\": \"times\", \"times_ms\": [0, 4e11]}}]}");
  CsResults *r = test_run_series(sc);
  assert_int_equal(r->gpu_bins[0]->len, 2);
  assert_int_equal(r->bin_total->len, 2);
  assert_int_equal(cs_bins_end(r->bin_total), 400000001);
  char *summary = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(summary);
  cJSON *as = cJSON_GetObjectItem(doc, "autoscaling");
  double mean = cJSON_GetObjectItem(as, "gpus_used_mean")->valuedouble;
  assert_true(fabs(mean - 2.0 / 400000001.0) <= 1e-12 * mean);
  assert_float_equal(cJSON_GetObjectItem(as, "gpus_used_max")->valuedouble, 1.0, 0.0);
  cJSON_Delete(doc);
  g_free(summary);
  /* The CSV has a row per bin a GPU ran in: 0 and 4e8, 0.001 busy GPUs. */
  char *path = g_build_filename(dir, "ts.csv", NULL);
  GError *err = NULL;
  assert_true(cs_results_write_gpu_timeseries(r, path, &err));
  char *text = NULL;
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  assert_string_equal(text, "time_s,gpus_used,busy_gpus\n0,1,0.001000\n400000000,1,0.001000\n");
  g_free(text);
  g_free(path);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* The summary's autoscaling figures of a run, read back from its JSON. */
static void summary_used(const CsResults *r, double *mean, double *max, double *bin_s,
                         gboolean *has_timeseries)
{
  char *summary = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(summary);
  cJSON *as = cJSON_GetObjectItem(doc, "autoscaling");
  *mean = cJSON_GetObjectItem(as, "gpus_used_mean")->valuedouble;
  *max = cJSON_GetObjectItem(as, "gpus_used_max")->valuedouble;
  *bin_s = cJSON_GetObjectItem(as, "timeseries_bin_s")->valuedouble;
  *has_timeseries = cJSON_GetObjectItem(doc, "timeseries") != NULL;
  cJSON_Delete(doc);
  g_free(summary);
}

/* Issue 32: a run keeps no time series unless asked, and its series never
 * reach CS_SERIES_MAX_RUNS runs. N = 4096 requests 2 s apart, each
 * 1 ms on the one GPU 100 ms after it was sent (the router's default wait),
 * answered within the SLO: in 1 s bins every series (GPU busy,
 * SM use, worker, model) has a run per even bin, N = 4096 of them, so the
 * width doubles once, to 2 s, where the N bins 0..4095 are consecutive and
 * equal: one run each. GPUs used stay at the scenario's 1 s: used in the N
 * even bins of 0 .. 2 (N - 1) = 8190, so max 1, mean 4096 / 8191; the
 * count settles (used.h) every 2,050 busy periods, once here. */
static void test_timeseries_bounded(void **state)
{
  (void)state;
  enum { N = 4096 };
  char *dir = test_dir_with_profile(0.0, 1.0);
  GString *json = g_string_new(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\", \"times_ms\": [");
  for (int k = 0; k < N; k++)
    g_string_append_printf(json, "%s%d", k ? "," : "", 2000 * k);
  g_string_append(json, "]}}]}");
  CsScenario *sc = test_scenario(dir, json->str);
  g_string_free(json, TRUE);
  double mean, max, bin_s;
  gboolean has_ts;

  /* Without the series: none kept, the writers refuse, the figures hold. */
  CsResults *r = test_run(sc, NULL);
  assert_false(r->has_series);
  assert_null(r->gpu_bins[0]);
  assert_null(r->bin_total);
  summary_used(r, &mean, &max, &bin_s, &has_ts);
  assert_true(fabs(mean - 4096.0 / 8191.0) <= 1e-15);
  assert_float_equal(max, 1.0, 0.0);
  assert_float_equal(bin_s, 1.0, 0.0);
  assert_false(has_ts);
  char *path = g_build_filename(dir, "ts.csv", NULL);
  GError *err = NULL;
  assert_false(cs_results_write_gpu_timeseries(r, path, &err));
  assert_int_equal(err->code, CS_ERROR_INVALID);
  assert_non_null(strstr(err->message, "the run kept no time series"));
  g_clear_error(&err);
  assert_false(cs_results_write_gpu_detail(r, path, path, &err));
  g_clear_error(&err);
  assert_false(cs_results_write_model_timeseries(r, path, NULL, &err));
  g_clear_error(&err);
  assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  cs_results_free(r);

  /* With them: 2 s bins, stated in the summary; the same GPUs used. */
  r = test_run_series(sc);
  assert_int_equal(r->bin_ns, INT64_C(2000000000));
  assert_int_equal(r->gpu_bins[0]->len, 1);
  assert_int_equal(r->gpu_sm_bins[0]->len, 1);
  assert_int_equal(r->workers[0].bins->len, 1);
  assert_int_equal(r->model_series[0]->len, 1);
  summary_used(r, &mean, &max, &bin_s, &has_ts);
  assert_true(fabs(mean - 4096.0 / 8191.0) <= 1e-15);
  assert_float_equal(max, 1.0, 0.0);
  assert_float_equal(bin_s, 1.0, 0.0);
  assert_true(has_ts);
  char *summary = cs_results_to_json(r);
  assert_non_null(strstr(summary, "\"timeseries\":\t{\n\t\t\"bin_s\":\t2,\n\t\t\"requested_bin_s\":\t1,\n\t\t\"max_runs\":\t4096\n\t}"));
  g_free(summary);
  /* A row per 2 s bin: one GPU used, 1 ms busy of 2 s. */
  assert_true(cs_results_write_gpu_timeseries(r, path, &err));
  char *text = NULL;
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  assert_int_equal(g_strv_length(lines), 1 + N + 1);
  assert_string_equal(lines[1], "0,1,0.000500");
  assert_string_equal(lines[N], "8190,1,0.000500");
  g_strfreev(lines);
  g_free(text);
  /* Per model: a request sent and a good result per bin, 0.5 good/s. */
  assert_true(cs_results_write_model_timeseries(r, path, NULL, &err));
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  lines = g_strsplit(text, "\n", -1);
  assert_int_equal(g_strv_length(lines), 1 + N + 1);
  assert_string_equal(lines[1], "0,a,1,1,0,0.5");
  assert_string_equal(lines[N], "8190,a,1,1,0,0.5");
  g_strfreev(lines);
  g_free(text);
  g_free(path);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* GPUs used across a settle of the count (used.h) while a GPU is busy: a's
 * one batch (10^7 ms) keeps GPU 0 busy over [0.5, 10000.5) s, bins 0..10000;
 * b's 2,100 batches (5 ms each, sent 2 s apart from 0) use GPU 1 in the even
 * bins 0..4198. The count settles after 2,052 of b's busy periods, at about
 * 4,102 s, with GPU 0's period still open: it must count GPU 0's bins so far
 * then, and not again when the period ends. Max 2 (bins 0..4198 even), mean
 * (10001 + 2100) / 10001 over bins 0..10000. */
static void test_gpus_used_settle_while_busy(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1e7);
  GString *json = g_string_new(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"network\": \"zero\","
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1},"
    "   {\"model\": \"b\", \"gpu\": 1, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 2e7, \"arrival\": {\"process\": \"times\", \"times_ms\": [500]}},"
    "   {\"model\": \"b\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\", \"times_ms\": [");
  for (int k = 0; k < 2100; k++)
    g_string_append_printf(json, "%s%d", k ? "," : "", 2000 * k);
  g_string_append(json, "]}}]}");
  CsScenario *sc = test_scenario(dir, json->str);
  g_string_free(json, TRUE);
  double mean, max, bin_s;
  gboolean has_ts;
  for (int with_series = 0; with_series < 2; with_series++) {
    CsResults *r = with_series ? test_run_series(sc) : test_run(sc, NULL);
    assert_int_equal(cs_results_model(r, 0)->completed, 1);
    assert_int_equal(cs_results_model(r, 1)->completed, 2100);
    summary_used(r, &mean, &max, &bin_s, &has_ts);
    assert_true(fabs(mean - 12101.0 / 10001.0) <= 1e-15);
    assert_float_equal(max, 2.0, 0.0);
    assert_false(has_ts); /* 2,100 runs at most: no doubling */
    cs_results_free(r);
  }
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* One batch of model a takes 10^6 ms = 1000 s; sent at 0.5 s it keeps the
 * GPU busy over [0.5, 1000.5) s: 0.5 s in bin 0, full bins 1..999, 0.5 s in
 * bin 1000. Three runs hold them, and the CSV a row per bin. */
static void test_timeseries_long_batch(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1e6);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 2e6, \"arrival\": "
    "   {\"process\": \"times\", \"times_ms\": [500]}}]}");
  CsResults *r = test_run_series(sc);
  assert_int_equal(r->gpu_bins[0]->len, 3);
  char *gpath = g_build_filename(dir, "g.csv", NULL), *wpath = g_build_filename(dir, "w.csv", NULL);
  char *tpath = g_build_filename(dir, "t.csv", NULL);
  GError *err = NULL;
  assert_true(cs_results_write_gpu_detail(r, gpath, wpath, &err));
  assert_true(cs_results_write_gpu_timeseries(r, tpath, &err));
  char *text = NULL;
  assert_true(g_file_get_contents(gpath, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  assert_int_equal(g_strv_length(lines), 1 + 1001 + 1); /* header, bins 0..1000, "" */
  assert_string_equal(lines[1], "0,0,0.500000,0.500000,0.0000");
  assert_string_equal(lines[2], "1,0,1.000000,1.000000,0.0000");
  assert_string_equal(lines[1000], "999,0,1.000000,1.000000,0.0000");
  assert_string_equal(lines[1001], "1000,0,0.500000,0.500000,0.0000");
  g_strfreev(lines);
  g_free(text);
  /* The batch finished in bin 1000, after 10^6 ms on the GPU. */
  assert_true(g_file_get_contents(wpath, &text, NULL, NULL));
  assert_string_equal(text, "time_s,worker,model,gpu,mps_share,batches,mean_gpu_latency_ms\n"
                            "1000,0,a,0,0,1,1000000.000000\n");
  g_free(text);
  g_free(gpath);
  g_free(wpath);
  g_free(tpath);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* A rate of 10^12 req/s for 10^9 s is 10^21 requests: in range field by
 * field, it ran for ever. cs_run refuses it before simulating, with the
 * count and the memory it would need (64 bytes each: 10^21 * 64 / 2^30 =
 * 5.96e+13 GiB). A run within max_requests goes; one over it is refused;
 * -1 lifts the limit. */
static void test_request_limit(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  assert_refused(dir,
                 "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                 " \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"rate\": 1e12, \"duration_s\": 1e9}]}",
                 NULL,
                 "test.json: clients: the run would send about 1e+21 requests, more than the limit "
                 "of 100000000 (--max-requests, or CsRunOptions.max_requests, raises it); it would "
                 "need about 5.96e+13 GiB of memory for them (64 bytes per request); clients[0] "
                 "(model a) alone sends about 1e+21");
  /* 1000 requests + 100 req/s x 2 s of warm-up = 1200 expected. */
  const char *json =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"rate\": 100, \"requests\": 1000,"
    "   \"warmup_s\": 2, \"arrival\": \"constant\"}]}";
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.max_requests = 1199;
  assert_refused(dir, json, &opt, "the run would send about 1.2e+03 requests, more than the limit of 1199");
  opt.max_requests = 1200;
  char *msg = NULL;
  CsResults *r = try_run(dir, json, &opt, &msg);
  assert_non_null(r);
  assert_int_equal(cs_results_model(r, 0)->generated, 1200);
  cs_results_free(r);
  opt.max_requests = -1;
  r = try_run(dir, json, &opt, &msg);
  assert_non_null(r);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* The engine's own guard, for callers that skip cs_run's estimate: a run
 * that sends more than twice max_requests stops (checked every 65536
 * events). 200000 requests against a limit of 10000. */
static void test_engine_request_guard(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 0.001);
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"rate\": 1000, \"requests\": 200000,"
    "   \"arrival\": \"constant\"}]}");
  GError *err = NULL;
  CsConfig *cfg = cs_scenario_compile(sc, &err);
  assert_non_null(cfg);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.max_requests = 10000;
  CsResults *r = cs_engine_run(cfg, NULL, NULL, &opt, &err);
  assert_null(r);
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_INVALID));
  assert_non_null(strstr(err->message, "the run sent more than 20000 requests, twice the limit"));
  g_clear_error(&err);
  cs_config_free(cfg);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Usher's min_gpus mode planned a GPU per replica: vgg19 at 10^12 req/s
 * asked for billions of replicas (an int overflow, then a 15 GB
 * allocation). Past 2^20 replicas the model is not served, with the reason
 * in the log. Model p meets its SLO at batch 4 only, 4 ms (1000 req/s), so
 * c_l = 10^9 replicas. */
static void test_usher_replicas_bounded(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 1.0);
  write_file(dir, "points.json",
             "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
             " \"models\": [{\"gpu\": \"gpu\", \"model\": \"p\", \"input_bytes\": 0, \"output_bytes\": 0,"
             "   \"batches\": [{\"batch\": 4, \"latency_ms\": 4, \"mreq_pct\": 10,"
             "     \"creq_pct\": {\"ao\": 10, \"wao\": 10, \"wsm\": 10}},"
             "    {\"batch\": 8, \"latency_ms\": 100, \"mreq_pct\": 10,"
             "     \"creq_pct\": {\"ao\": 10, \"wao\": 10, \"wsm\": 10}}]}]}");
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\", \"points.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"usher\", \"mode\": \"min_gpus\", \"metric\": \"ao\"},"
    " \"clients\": [{\"model\": \"p\", \"slo_ms\": 50, \"rate\": 1e12, \"duration_s\": 1e-6}]}");
  GError *err = NULL;
  CsConfig *cfg = cs_scenario_compile(sc, &err);
  if (!cfg)
    fail_msg("%s", err->message);
  assert_int_equal(cs_placement_n_replicas(cfg->placement), 0);
  assert_non_null(strstr(cs_placement_log_text(cfg->placement), "exceed any plan (at most 1048576 replicas)"));
  cs_config_free(cfg);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Per-interval counts arrive in row order, not time order, when several
 * functions feed one client: MAF 2019 rows f1 (3 invocations in minute 3, 2
 * in minute 6) and f2 (4 in minute 2, 3 in minute 3), both on client a. The
 * client lists intervals 1, 2, 5 (minutes 2, 3, 6 of the file, from 0) with
 * 4, 3 + 3 = 6 and 2 requests: sorted and merged. */
static void test_trace_intervals_sorted_merged(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.01, 1.0);
  write_file(dir, "inv.csv", "HashOwner,HashApp,HashFunction,Trigger,1,2,3,4,5,6\n"
                             "o,a,f1,http,0,0,3,0,0,2\n"
                             "o,a,f2,http,0,4,3,0,0,0\n");
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"inv.csv\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}");
  GError *err = NULL;
  CsConfig *cfg = cs_scenario_compile(sc, &err);
  if (!cfg)
    fail_msg("%s", err->message);
  const CsClientConfig *cc = &cfg->clients[0];
  assert_int_equal(cc->n_intervals, 3);
  const int64_t index[3] = { 1, 2, 5 }, counts[3] = { 4, 6, 2 };
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cc->interval_index[i], index[i]);
    assert_int_equal(cc->interval_counts[i], counts[i]);
  }
  /* 12 requests over the 6-minute window. */
  assert_float_equal(cc->rate_rps, 12.0 / 360.0, 1e-15);
  cs_config_free(cfg);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* The runs of equal bins against a dense array filled by hand, bin by bin:
 * spans in time order (as the engine adds them) that start and end inside
 * bins, on bin edges, in the bin where the previous one ended, and cover
 * long stretches; then the merge of three series against the dense sums
 * and counts. Bins of 10 ns over 20000 ns. */
static void test_bins_against_dense(void **state)
{
  (void)state;
  enum { BIN = 10, N = 2000, SERIES = 3 };
  GRand *rng = g_rand_new_with_seed(13);
  GArray *runs[SERIES];
  static int64_t dense_a[SERIES][N];
  static double dense_x[SERIES][N];
  for (int s = 0; s < SERIES; s++) {
    runs[s] = cs_bins_new();
    int64_t t = g_rand_int_range(rng, 0, 30);
    while (t < N * BIN - 1) {
      /* Mostly short spans, sometimes hundreds of ns; sometimes no gap. */
      int64_t len = g_rand_int_range(rng, 0, 8) == 0 ? g_rand_int_range(rng, 50, 400)
                                                     : g_rand_int_range(rng, 1, 6);
      int64_t end = MIN(t + len, (int64_t)N * BIN);
      /* Few values, so that adjacent bins often hold equal ones and join a
       * run that a later span then splits. Exact in binary. */
      double level = g_rand_int_range(rng, 1, 3) / 2.0;
      cs_bins_add_span(runs[s], BIN, t, end, level);
      for (int64_t ns = t; ns < end; ns++) {
        dense_a[s][ns / BIN] += 1;
        dense_x[s][ns / BIN] += level;
      }
      t = end + (g_rand_int_range(rng, 0, 3) == 0 ? 0 : g_rand_int_range(rng, 0, 12));
    }
    /* Every bin of the runs equals the dense one; absent bins are 0. */
    int64_t expect_end = 0;
    for (int b = 0; b < N; b++)
      if (dense_a[s][b] > 0)
        expect_end = b + 1;
    assert_int_equal(cs_bins_end(runs[s]), expect_end);
    int64_t next = 0;
    for (guint i = 0; i < runs[s]->len; i++) {
      const CsBinRun *r = &g_array_index(runs[s], CsBinRun, i);
      assert_true(r->first >= next && r->n >= 1);
      for (; next < r->first; next++)
        assert_int_equal(dense_a[s][next], 0);
      for (int64_t b = r->first; b < r->first + r->n; b++) {
        assert_int_equal(r->a, dense_a[s][b]);
        assert_float_equal(r->x, dense_x[s][b], 1e-9);
      }
      next = r->first + r->n;
    }
    for (; next < N; next++)
      assert_int_equal(dense_a[s][next], 0);
    /* Fewer runs than spans' worth of bins: the long spans are runs. */
    assert_true(runs[s]->len < (guint)expect_end);
    /* Coarsened (issue 32), bin k holds dense bins 2k and 2k + 1 summed;
     * x to 1e-9, the sums of halves being exact in binary. */
    GArray *wide = cs_bins_coarsen(runs[s]);
    next = 0;
    for (guint i = 0; i < wide->len; i++) {
      const CsBinRun *r = &g_array_index(wide, CsBinRun, i);
      assert_true(r->first >= next && r->n >= 1);
      for (; next < r->first; next++)
        assert_int_equal(dense_a[s][2 * next] + dense_a[s][2 * next + 1], 0);
      for (int64_t b = r->first; b < r->first + r->n; b++) {
        assert_int_equal(r->a, dense_a[s][2 * b] + dense_a[s][2 * b + 1]);
        assert_float_equal(r->x, dense_x[s][2 * b] + dense_x[s][2 * b + 1], 1e-9);
      }
      if (i > 0) /* runs that could join did */
        assert_false(g_array_index(wide, CsBinRun, i - 1).first +
                       g_array_index(wide, CsBinRun, i - 1).n == r->first &&
                     g_array_index(wide, CsBinRun, i - 1).a == r->a &&
                     g_array_index(wide, CsBinRun, i - 1).x == r->x);
      next = r->first + r->n;
    }
    for (; next < N / 2; next++)
      assert_int_equal(dense_a[s][2 * next] + dense_a[s][2 * next + 1], 0);
    g_array_unref(wide);
  }
  GArray *total = cs_bins_merge(runs, SERIES);
  int64_t next = 0;
  for (guint i = 0; i < total->len; i++) {
    const CsBinRun *r = &g_array_index(total, CsBinRun, i);
    for (; next < r->first; next++)
      assert_int_equal(dense_a[0][next] + dense_a[1][next] + dense_a[2][next], 0);
    for (int64_t b = r->first; b < r->first + r->n; b++) {
      assert_int_equal(r->a, dense_a[0][b] + dense_a[1][b] + dense_a[2][b]);
      assert_int_equal(r->b, (dense_a[0][b] > 0) + (dense_a[1][b] > 0) + (dense_a[2][b] > 0));
    }
    next = r->first + r->n;
  }
  for (; next < N; next++)
    assert_int_equal(dense_a[0][next] + dense_a[1][next] + dense_a[2][next], 0);
  g_array_unref(total);
  for (int s = 0; s < SERIES; s++)
    g_array_unref(runs[s]);
  g_rand_free(rng);
}

/* cs_i64_round_sat rounds as llround inside int64's range (its own inline
 * code, not a call): halves, the largest double below a half, whole numbers
 * past 2^52, negative values, and a million doubles of random bits. */
static void test_round_sat_matches_llround(void **state)
{
  (void)state;
  const double edges[] = { 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994,
                           -0.49999999999999994, 4503599627370495.5, 4503599627370497.0,
                           9007199254740993.0, 1e18, -1e18, 9.2e18, -9.2e18, 123456.4999999,
                           DBL_MIN, -DBL_MIN, 1.0 - DBL_EPSILON / 2 };
  for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
    assert_true(cs_i64_round_sat(edges[i]) == llround(edges[i]));
  assert_true(cs_i64_round_sat(9223372036854775808.0) == INT64_MAX);
  assert_true(cs_i64_round_sat(NAN) == INT64_MAX);
  assert_true(cs_i64_round_sat(-INFINITY) == INT64_MIN);
  uint64_t z = 42;
  for (int i = 0; i < 1000000; i++) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t bits = z ^ (z >> 29);
    double x;
    memcpy(&x, &bits, sizeof x);
    if (!isfinite(x) || fabs(x) >= 9.2e18)
      continue;
    assert_true(cs_i64_round_sat(x) == llround(x));
    /* magnitudes a simulation meets: 0 to 10^12 ns */
    double y = ldexp((double)(bits >> 11), -53) * pow(10.0, (double)(i % 13));
    assert_true(cs_i64_round_sat(y) == llround(y));
    assert_true(cs_i64_round_sat(-y) == llround(-y));
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_sat_matches_llround),
    cmocka_unit_test(test_trace_intervals_far_apart),
    cmocka_unit_test(test_trace_intervals_sorted_merged),
    cmocka_unit_test(test_bins_against_dense),
    cmocka_unit_test(test_trace_window_past_horizon),
    cmocka_unit_test(test_payload_overflow),
    cmocka_unit_test(test_network_saturates),
    cmocka_unit_test(test_times_past_horizon),
    cmocka_unit_test(test_timeseries_sparse),
    cmocka_unit_test(test_timeseries_long_batch),
    cmocka_unit_test(test_timeseries_bounded),
    cmocka_unit_test(test_gpus_used_settle_while_busy),
    cmocka_unit_test(test_request_limit),
    cmocka_unit_test(test_engine_request_guard),
    cmocka_unit_test(test_usher_replicas_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
