/* Paths of the engine and its outputs that the other suites leave out, each
 * against a hand-computed timeline or a definition of docs/scenario.md:
 * requests.csv rows for every outcome (ok, unserved, failed, dropped), output
 * files that cannot be written, progress reports, the effective scenario API,
 * goodput-search argument errors, centralized dispatch with max_batch and a
 * waiting candidate under earliest_free, the router with max_wait_ms 0, and
 * the small modules (event queue, warnings, batching bounds) at their edges. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "sim/event_queue.h"
#include "test_util.h"
#include "sim/warnings.h"
#include "experiment/outputs.h"

/* Models e (Mreq 60 % at batch 1) and f (Mreq 50 %) on GPU type "gpu" of the
 * synthetic profile, without payload sizes. */
static const char mem_profile[] =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"tests\","
  " \"models\": ["
  "  {\"gpu\": \"gpu\", \"model\": \"e\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2, \"mreq_pct\": 60},"
  "   {\"batch\": 2, \"latency_ms\": 3, \"mreq_pct\": 65}]},"
  "  {\"gpu\": \"gpu\", \"model\": \"f\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2, \"mreq_pct\": 50},"
  "   {\"batch\": 2, \"latency_ms\": 3, \"mreq_pct\": 55}]}]}";

static char *fixture_dir(void)
{
  char *dir = test_dir_with_profile(1.0, 4.0); /* l_a(b) = b + 4 ms */
  char *p = g_build_filename(dir, "mem.json", NULL);
  assert_true(g_file_set_contents(p, mem_profile, -1, NULL));
  g_free(p);
  return dir;
}

/* Reads a CSV into rows of fields (g_strfreev each row; free the array). */
static GPtrArray *read_csv(const char *path)
{
  char *text = NULL;
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  for (int i = 0; lines[i]; i++)
    if (*lines[i])
      g_ptr_array_add(rows, g_strsplit(lines[i], ",", -1));
  g_strfreev(lines);
  g_free(text);
  return rows;
}

static int column(GPtrArray *rows, const char *name)
{
  char **header = g_ptr_array_index(rows, 0);
  for (int i = 0; header[i]; i++)
    if (strcmp(header[i], name) == 0)
      return i;
  fail_msg("no column %s", name);
  return -1;
}

static const char *cell(GPtrArray *rows, guint row, const char *name)
{
  return ((char **)g_ptr_array_index(rows, row))[column(rows, name)];
}

/* Client a: constant 10 req/s, 3 requests at 0, 100 and 200 ms, a replica of
 * batch 1 on GPU 0, zero network: each request is dispatched, reaches the
 * node and starts at its send time and ends l(1) = 5 ms later. Client b has
 * no replica: its 3 requests are unserved at their send time (batch 0, GPU
 * -1). Rows appear in the order requests leave. */
static void test_requests_csv_ok_and_unserved(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 3},"
    "  {\"model\": \"b\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 3, \"start_s\": 0.05}]}");
  char *csv = g_build_filename(dir, "requests.csv", NULL);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.requests_csv = csv;
  CsResults *r = test_run(sc, &opt);
  GPtrArray *rows = read_csv(csv);
  assert_int_equal(rows->len, 1 + 6);
  int n_a = 0, n_b = 0;
  for (guint i = 1; i < rows->len; i++) {
    int64_t send = g_ascii_strtoll(cell(rows, i, "send_ns"), NULL, 10);
    assert_string_equal(cell(rows, i, "measured"), "1");
    if (strcmp(cell(rows, i, "model"), "a") == 0) {
      assert_int_equal(send, (int64_t)n_a * 100000000);
      assert_string_equal(cell(rows, i, "status"), "ok");
      assert_int_equal(g_ascii_strtoll(cell(rows, i, "dispatch_ns"), NULL, 10), send);
      assert_int_equal(g_ascii_strtoll(cell(rows, i, "node_ns"), NULL, 10), send);
      assert_int_equal(g_ascii_strtoll(cell(rows, i, "exec_start_ns"), NULL, 10), send);
      assert_int_equal(g_ascii_strtoll(cell(rows, i, "exec_end_ns"), NULL, 10), send + 5000000);
      assert_int_equal(g_ascii_strtoll(cell(rows, i, "receive_ns"), NULL, 10), send + 5000000);
      assert_string_equal(cell(rows, i, "latency_ns"), "5000000");
      assert_string_equal(cell(rows, i, "slo_met"), "1");
      assert_string_equal(cell(rows, i, "batch_size"), "1");
      assert_string_equal(cell(rows, i, "gpu"), "0");
      n_a++;
    } else {
      assert_string_equal(cell(rows, i, "model"), "b");
      assert_int_equal(send, 50000000 + (int64_t)n_b * 100000000);
      assert_string_equal(cell(rows, i, "status"), "unserved");
      assert_string_equal(cell(rows, i, "latency_ns"), "0");
      assert_string_equal(cell(rows, i, "slo_met"), "0");
      assert_string_equal(cell(rows, i, "batch_size"), "0");
      assert_string_equal(cell(rows, i, "gpu"), "-1");
      n_b++;
    }
  }
  assert_int_equal(n_a, 3);
  assert_int_equal(n_b, 3);
  assert_int_equal(cs_results_model(r, 1)->unserved, 3);
  assert_float_equal(cs_results_model(r, 1)->bad_rate, 1.0, 0);
  /* The warning names the model and no GPU. */
  int found = 0;
  for (int i = 0; i < cs_results_n_warnings(r); i++) {
    const CsWarning *w = cs_results_warning(r, i);
    if (strcmp(w->code, "model_unserved") == 0) {
      assert_string_equal(w->model, "b");
      assert_int_equal(w->gpu, -1);
      found++;
    }
  }
  assert_int_equal(found, 1);
  assert_null(cs_results_warning(r, -1));
  assert_null(cs_results_warning(r, cs_results_n_warnings(r)));
  g_ptr_array_free(rows, TRUE);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(csv);
  test_dir_remove(dir);
}

/* memory_overflow "fail_replicas": e (60 %) fits GPU 0, f (50 %) no longer
 * does; f's requests fail, the warning names f and GPU 0, and the GPU's
 * memory in the summary counts only the replica that runs (60 %). */
static void test_failed_replica(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\", \"mem.json\"],"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"memory_overflow\": \"fail_replicas\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"e\", \"gpu\": 0, \"batch\": 1},"
    "  {\"model\": \"f\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"e\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 2},"
    "  {\"model\": \"f\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 2}]}");
  char *csv = g_build_filename(dir, "requests.csv", NULL);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.requests_csv = csv;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(cs_results_model(r, 0)->completed, 2);
  assert_int_equal(cs_results_model(r, 1)->failed, 2);
  assert_int_equal(cs_results_model(r, 1)->completed, 0);
  GPtrArray *rows = read_csv(csv);
  for (guint i = 1; i < rows->len; i++)
    assert_string_equal(cell(rows, i, "status"),
                        strcmp(cell(rows, i, "model"), "e") == 0 ? "ok" : "failed");
  g_ptr_array_free(rows, TRUE);
  gboolean warned = FALSE;
  for (int i = 0; i < cs_results_n_warnings(r); i++) {
    const CsWarning *w = cs_results_warning(r, i);
    if (strcmp(w->code, "replica_fails") == 0) {
      assert_string_equal(w->model, "f");
      assert_int_equal(w->gpu, 0);
      warned = TRUE;
    }
  }
  assert_true(warned);
  char *json = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(json);
  const cJSON *gpu0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "gpus"), 0);
  assert_float_equal(cJSON_GetObjectItem(gpu0, "memory_pct")->valuedouble, 60.0, 1e-9);
  /* The warning in the summary carries its model and GPU. */
  const cJSON *w;
  int n = 0;
  cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings"))
    if (strcmp(cJSON_GetObjectItem(w, "code")->valuestring, "replica_fails") == 0) {
      assert_string_equal(cJSON_GetObjectItem(w, "model")->valuestring, "f");
      assert_int_equal(cJSON_GetObjectItem(w, "gpu")->valueint, 0);
      n++;
    }
  assert_int_equal(n, 1);
  cJSON_Delete(doc);
  g_free(json);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(csv);
  test_dir_remove(dir);
}

/* Symphony with an SLO of 3 ms below l(1) = 5 ms: no request can be served
 * even alone, so all are dropped: bad rate 1, no result, and the autoscaling
 * advice N r / (1 - r) is unbounded at r = 1 (null in the summary). */
static void test_all_dropped(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\", \"d_ctrl_us\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 3, \"arrival\": \"constant\", \"requests\": 4}]}");
  char *csv = g_build_filename(dir, "requests.csv", NULL);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.requests_csv = csv;
  CsResults *r = test_run(sc, &opt);
  const CsModelResult *m = cs_results_model(r, 0);
  assert_int_equal(m->dropped, 4);
  assert_int_equal(m->completed, 0);
  assert_float_equal(m->bad_rate, 1.0, 0);
  assert_true(isnan(m->latency.p50));
  GPtrArray *rows = read_csv(csv);
  assert_int_equal(rows->len, 5);
  for (guint i = 1; i < rows->len; i++)
    assert_string_equal(cell(rows, i, "status"), "dropped");
  g_ptr_array_free(rows, TRUE);
  char *json = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(json);
  const cJSON *as = cJSON_GetObjectItem(doc, "autoscaling");
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(as, "advice_add_gpus")));
  assert_float_equal(cJSON_GetObjectItem(as, "bad_rate")->valuedouble, 1.0, 0);
  const char *codes[] = { "model_no_results", "nothing_served" };
  for (int k = 0; k < 2; k++) {
    gboolean seen = FALSE;
    for (int i = 0; i < cs_results_n_warnings(r); i++)
      seen |= strcmp(cs_results_warning(r, i)->code, codes[k]) == 0;
    if (!seen)
      fail_msg("no warning %s", codes[k]);
  }
  cJSON_Delete(doc);
  g_free(json);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(csv);
  test_dir_remove(dir);
}

/* A requests CSV that cannot be created, or cannot be put in place (its
 * name is a directory), fails the run naming the file, and leaves no partial
 * file behind. */
static void test_requests_csv_unwritable(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 50, \"requests\": 3}]}");
  char *missing = g_build_filename(dir, "no", "such", "requests.csv", NULL);
  char *as_dir = g_build_filename(dir, "requests_dir", NULL);
  assert_int_equal(g_mkdir(as_dir, 0755), 0);
  char *inside = g_build_filename(as_dir, "keep", NULL);
  assert_true(g_file_set_contents(inside, "x", -1, NULL));
  const char *paths[] = { missing, as_dir };
  for (int i = 0; i < 2; i++) {
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.requests_csv = paths[i];
    GError *err = NULL;
    assert_null(cs_run(sc, &opt, &err));
    char *prefix = g_strdup_printf("%s: cannot write: ", paths[i]);
    assert_true(g_str_has_prefix(err->message, prefix));
    g_free(prefix);
    g_error_free(err);
    char *partial = g_strconcat(paths[i], ".partial", NULL);
    assert_false(g_file_test(partial, G_FILE_TEST_EXISTS));
    g_free(partial);
  }
  /* An invalid scenario fails before anything is written. */
  CsScenario *bad = test_scenario(dir, "{\"clients\": [], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"}}");
  GError *err = NULL;
  CsRunOptions opt;
  cs_run_options_init(&opt);
  char *csv = g_build_filename(dir, "r.csv", NULL);
  opt.requests_csv = csv;
  assert_null(cs_run(bad, &opt, &err));
  assert_string_equal(err->message, "test.json: profiles: required field is missing (a list of profile files, e.g. [\"v100_thesis\"])");
  assert_false(g_file_test(csv, G_FILE_TEST_EXISTS));
  g_clear_error(&err);
  g_free(csv);
  cs_scenario_free(bad);

  /* The GPU detail files: an unwritable path is an error naming it. */
  CsResults *r = test_run_series(sc);
  char *ok_path = g_build_filename(dir, "gpu.csv", NULL);
  assert_false(cs_results_write_gpu_detail(r, missing, ok_path, &err));
  assert_non_null(err);
  g_clear_error(&err);
  assert_false(cs_results_write_gpu_detail(r, ok_path, missing, &err));
  assert_non_null(err);
  g_clear_error(&err);
  assert_false(cs_results_write_gpu_timeseries(r, missing, &err));
  assert_non_null(err);
  g_clear_error(&err);
  g_unlink(ok_path);
  g_free(ok_path);
  cs_results_free(r);

  g_unlink(inside);
  g_rmdir(as_dir);
  g_free(inside);
  g_free(as_dir);
  g_free(missing);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

typedef struct {
  int calls;
  double last;
  gboolean decreasing, out_of_range;
} Progress;

static gboolean on_progress(double f, int64_t t, void *user)
{
  (void)t;
  Progress *p = user;
  p->decreasing |= p->calls > 0 && f < p->last;
  p->out_of_range |= f < 0 || f > 1;
  p->last = f;
  p->calls++;
  return TRUE;
}

/* Progress is reported as the fraction of the requests to generate, in
 * [0, 1] and never decreasing, once every 65536 events (100000 requests
 * make more than that). */
static void test_progress(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 500, \"arrival\": \"constant\", \"requests\": 100000}]}");
  Progress p = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_progress = on_progress;
  opt.user_data = &p;
  CsResults *r = test_run(sc, &opt);
  assert_true(p.calls >= 1);
  assert_false(p.decreasing);
  assert_false(p.out_of_range);
  /* The events between reports are a fixed count: reports = events / 65536. */
  assert_int_equal(p.calls, (int)(cs_results_events(r) / 65536));
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

static const cJSON *path_get(const cJSON *root, const char *a, const char *b)
{
  const cJSON *o = cJSON_GetObjectItem(root, a);
  return b ? cJSON_GetObjectItem(o, b) : o;
}

/* cs_scenario_effective_json (docs/scenario.md, "Outputs and provenance"):
 * the seed of the options written in, the top-level duration_s moved into
 * each client that runs by duration (not into one with "requests" or
 * "times"), no mps_gamma for MIG under a centralized policy (MIG does not
 * use it), the
 * dispatch defaults, and the same text as the run's own effective scenario;
 * running it reproduces the summary. An invalid scenario gives NULL. */
static void test_effective_scenario(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  const char *json =
    "{\"profiles\": [\"synthetic.json\"], \"duration_s\": 0.5,"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\","
    "  \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}]},"
    " \"dispatch\": {\"policy\": \"symphony\", \"gpu_choice\": \"earliest_free\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 100},"
    "  {\"model\": \"b\", \"rate\": 50, \"slo_ms\": 100, \"requests\": 5},"
    "  {\"model\": \"c\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 10]}}]}";
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = 7;
  GError *err = NULL;
  char *eff = cs_scenario_effective_json(sc, &opt, &err);
  assert_non_null(eff);
  cJSON *doc = cJSON_Parse(eff);
  assert_int_equal(path_get(doc, "seed", NULL)->valueint, 7);
  assert_null(path_get(doc, "duration_s", NULL));
  const cJSON *clients = path_get(doc, "clients", NULL);
  assert_float_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(clients, 0), "duration_s")->valuedouble, 0.5, 0);
  assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(clients, 1), "duration_s"));
  assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(clients, 2), "duration_s"));
  assert_null(path_get(doc, "cluster", "mps_gamma"));
  assert_null(path_get(doc, "cluster", "mps"));
  assert_null(path_get(doc, "placement", NULL));
  assert_string_equal(path_get(doc, "dispatch", "gpu_choice")->valuestring, "earliest_free");
  assert_string_equal(path_get(doc, "dispatch", "batch_gathering")->valuestring, "window");
  assert_float_equal(path_get(doc, "dispatch", "d_ctrl_us")->valuedouble, 100.0, 0);
  assert_int_equal(path_get(doc, "dispatch", "max_batch")->valueint, 512);
  cJSON_Delete(doc);

  CsResults *r1 = test_run(sc, &opt);
  assert_string_equal(cs_results_effective_scenario(r1), eff);
  CsScenario *again = test_scenario(dir, eff);
  CsResults *r2 = test_run(again, NULL);
  char *s1 = cs_results_to_json(r1), *s2 = cs_results_to_json(r2);
  assert_string_equal(s1, s2);
  g_free(s1);
  g_free(s2);
  cs_results_free(r1);
  cs_results_free(r2);
  cs_scenario_free(again);
  g_free(eff);

  CsScenario *bad = test_scenario(dir, "{\"profiles\": [\"synthetic.json\"]}");
  assert_null(cs_scenario_effective_json(bad, NULL, &err));
  assert_string_equal(err->message, "test.json: cluster: required field is missing (e.g. {\"gpus\": 4, \"gpu_type\": \"v100\"})");
  g_clear_error(&err);
  cs_scenario_free(bad);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

static void count_probe(const CsGoodputProbe *p, void *user)
{
  (void)p;
  (*(int *)user)++;
}

/* Goodput search arguments: options out of range, an invalid scenario, a
 * client without a rate to scale; max_probes bounds the simulations: with 2
 * probes on a light load both pass, at max/64 and max/32, and the best is
 * the second. The client's rate is left as it was. With max_multiplier 64
 * the probes are multipliers 1 and 2, i.e. 64 and 128 req/s of constant
 * arrivals (a request every 7.8 ms) on a GPU that takes l(1) = 5 ms: no
 * queue, every latency 5 ms <= 100 ms, both pass; best: multiplier 2,
 * offered 2 x 64 = 128 req/s. */
static void test_search_arguments(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 64, \"slo_ms\": 100, \"arrival\": \"constant\", \"duration_s\": 1}]}");
  const char *range_msg =
    "goodput search: options out of range (max multiplier > 0, tolerance in (0, 1), at least 2 "
    "probes, bad rate bound in [0, 1))";
  for (int k = 0; k < 5; k++) {
    CsGoodputSearchOptions o;
    cs_goodput_search_options_init(&o);
    switch (k) {
    case 0: o.max_multiplier = 0; break;
    case 1: o.tolerance = 1; break;
    case 2: o.tolerance = 0; break;
    case 3: o.max_probes = 1; break;
    default: o.bad_rate_bound = 1; break;
    }
    CsGoodputProbe best;
    GError *err = NULL;
    assert_false(cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err));
    assert_string_equal(err->message, range_msg);
    g_error_free(err);
  }
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.max_probes = 2;
  o.max_multiplier = 64;
  CsGoodputProbe best;
  int probes = 0;
  GError *err = NULL;
  assert_true(cs_goodput_search(sc, &o, NULL, count_probe, &probes, &best, &err));
  assert_int_equal(probes, 2);
  assert_int_equal(best.index, 1);
  assert_float_equal(best.multiplier, 2.0, 0);
  assert_float_equal(best.offered_rps, 128.0, 1e-9);
  char *json = cs_scenario_to_json(sc);
  cJSON *doc = cJSON_Parse(json);
  assert_float_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "clients"), 0), "rate")->valuedouble, 64.0, 0);
  cJSON_Delete(doc);
  g_free(json);
  cs_scenario_free(sc);

  sc = test_scenario(dir, "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"}, \"clients\": []}");
  assert_false(cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err));
  assert_string_equal(err->message, "test.json: clients: expected a non-empty array of clients, got an array");
  g_clear_error(&err);
  cs_scenario_free(sc);

  sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 5, \"slo_ms\": 100, \"requests\": 5},"
    "  {\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 10]}}]}");
  assert_false(cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err));
  assert_string_equal(err->message, "test.json: clients[1]: an explicit \"times\" arrival has no rate to scale in a goodput search");
  g_clear_error(&err);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

typedef struct {
  int n, max_batch, batches_of_max;
  int64_t dispatch[3], start[3], end[3];
  int size[3];
} Seen;

static void on_request(const CsRequestRecord *rec, void *user)
{
  Seen *s = user;
  s->max_batch = MAX(s->max_batch, rec->batch_size);
  if (s->n < 3) {
    s->dispatch[s->n] = rec->dispatch_ns;
    s->start[s->n] = rec->exec_start_ns;
    s->end[s->n] = rec->exec_end_ns;
    s->size[s->n] = rec->batch_size;
  }
  s->n++;
}

/* max_batch bounds a centralized policy's batches: 200 requests 1 ms apart
 * on one GPU whose batch of b takes b + 4 ms queue up behind each batch, so
 * without the bound batches would grow past 2; with max_batch 2 none does and
 * every request is still served (SLO 10 s). */
static void test_central_max_batch(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  const char *policies[] = { "\"eager\"", "\"timeout\", \"timeout_ms\": 1", "\"eager\"" };
  const char *gathering[] = { "head", "head", "window" };
  for (int k = 0; k < 3; k++) {
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " \"dispatch\": {\"policy\": %s, \"max_batch\": 2, \"d_ctrl_us\": 0, \"batch_gathering\": \"%s\"},"
      " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 10000, \"arrival\": \"constant\", \"requests\": 200}]}",
      policies[k], gathering[k]);
    CsScenario *sc = test_scenario(dir, json);
    Seen s = { 0 };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = on_request;
    opt.user_data = &s;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(s.n, 200);
    assert_int_equal(s.max_batch, 2);
    assert_int_equal(cs_results_model(r, 0)->completed, 200);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
}

/* Symphony defers a batch of bs to due - resp(bs + 1) - l(bs + 1) so that it
 * can grow by one; a batch already at max_batch cannot grow, so it leaves at
 * now + delay(bs) (as a batch at the largest size within the SLO does).
 * max_batch 1, no delays, SLO 1 s, one request at 0: dispatched at 0, done at
 * l(1) = 5 ms (deferring it to 1000 - l(2) = 994 ms would gain nothing).
 * Under a backlog the deferral drops requests a 10 s SLO leaves ample time
 * for: 200 requests 1 ms apart, batches of at most 2 taking 6 ms, all done
 * after 600 ms. */
static void test_symphony_max_batch_does_not_defer(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\", \"max_batch\": 1, \"d_ctrl_us\": 0},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}]}");
  Seen s = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = on_request;
  opt.user_data = &s;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(s.n, 1);
  assert_int_equal(s.dispatch[0], 0);
  assert_int_equal(s.end[0], 5000000);
  cs_results_free(r);
  cs_scenario_free(sc);

  sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\", \"max_batch\": 2, \"d_ctrl_us\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 10000, \"arrival\": \"constant\", \"requests\": 200}]}");
  r = test_run(sc, NULL);
  assert_int_equal(cs_results_model(r, 0)->dropped, 0);
  assert_int_equal(cs_results_model(r, 0)->completed, 200);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* eager, earliest_free, one GPU, no delays, l(b) = b + 4 ms, requests at 0,
 * 1 and 2 ms (SLO 1 s):
 *   t=0  request 0 alone: dispatched at once, runs [0, 5).
 *   t=1  request 1: candidate of 1 at exec 1, but the GPU frees at 5 > 1:
 *        the candidate waits, GPU timer at 5.
 *   t=2  request 2 joins the candidate (2 requests).
 *   t=5  the GPU frees: the batch of 2 is dispatched and runs [5, 11). */
static void test_earliest_free_waits(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  for (int k = 0; k < 2; k++) {
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " \"dispatch\": {\"policy\": \"eager\", \"gpu_choice\": \"%s\", \"d_ctrl_us\": 0},"
      " \"clients\": [{\"model\": \"a\", \"slo_ms\": 1000, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1, 2]}}]}",
      k == 0 ? "earliest_free" : "lowest_id");
    CsScenario *sc = test_scenario(dir, json);
    Seen s = { 0 };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = on_request;
    opt.user_data = &s;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(s.n, 3);
    const int64_t ms = 1000000;
    const int64_t want_dispatch[3] = { 0, 5 * ms, 5 * ms }, want_end[3] = { 5 * ms, 11 * ms, 11 * ms };
    const int want_size[3] = { 1, 2, 2 };
    for (int i = 0; i < 3; i++) {
      assert_int_equal(s.dispatch[i], want_dispatch[i]);
      assert_int_equal(s.start[i], want_dispatch[i]);
      assert_int_equal(s.end[i], want_end[i]);
      assert_int_equal(s.size[i], want_size[i]);
    }
    /* The summary says which choice ran. */
    char *sum = cs_results_to_json(r);
    cJSON *doc = cJSON_Parse(sum);
    const cJSON *params = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "dispatch"), "params");
    assert_string_equal(cJSON_GetObjectItem(params, "gpu_choice")->valuestring,
                        k == 0 ? "earliest_free" : "lowest_id");
    cJSON_Delete(doc);
    g_free(sum);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
}

/* An explicit d_resp_ms that matches the simulated return of a batch of 1
 * but not of the largest batch within the SLO is still a mismatch. GCP
 * curve: 0.322 ms + 8.696471752763605e-07 ms per byte (the line through the
 * thesis' ping, 0.322 ms, and its one published point, 9,633,792 bytes in
 * 8.7 ms: (8.7 - 0.322) / 9633792); 10^6-byte results: 1.191647 ms for a
 * batch of 1, 0.322 + 0.8696 k ms for k. */
static void test_resp_mismatch_at_largest_batch(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  const char *root = g_getenv("CS_SOURCE_ROOT");
  char *curve = g_build_filename(root, "data", "profiles", "network", "gcp_n1_standard_16.json", NULL);
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"network\": {\"curve\": \"%s\"},"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\", \"d_resp_ms\": 1.191647},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 2, \"output_bytes\": 1000000}]}",
    curve);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  int n = 0;
  for (int i = 0; i < cs_results_n_warnings(r); i++) {
    const CsWarning *w = cs_results_warning(r, i);
    if (strcmp(w->code, "budget_network_mismatch") == 0) {
      assert_string_equal(w->model, "a");
      assert_true(g_str_has_prefix(w->message, "dispatch.d_resp_ms = 1.19165 budgets 1.192 ms for a "
                                   "result to come back, but the simulated network returns the "
                                   "result of a batch of 1 in 1.192 ms"));
      n++;
    }
  }
  assert_int_equal(n, 1);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  g_free(curve);
  test_dir_remove(dir);
}

/* The router with max_wait_ms 0 sends every request alone, whatever the
 * replica's batch size (docs/scenario.md): 20 requests, 20 batches of 1. */
static void test_router_zero_wait(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 8}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 1000, \"slo_ms\": 100, \"arrival\": \"constant\", \"requests\": 20}]}");
  Seen s = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = on_request;
  opt.user_data = &s;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(s.max_batch, 1);
  assert_int_equal(cs_results_model(r, 0)->batches, 20);
  assert_float_equal(cs_results_model(r, 0)->stage[CS_STAGE_ROUTER_WAIT].max, 0.0, 0);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- small modules at their edges ------------------------------------------ */

static void test_event_queue_edges(void **state)
{
  (void)state;
  cs_eq_free(NULL);
  CsEventQueue *q = cs_eq_new();
  assert_int_equal(cs_eq_peek_time(q), INT64_MAX); /* empty */
  CsEventHandle h = cs_eq_push(q, 5, 1, 0, NULL);
  assert_int_equal(cs_eq_peek_time(q), 5);
  /* A handle whose slot this queue never had, and the null handle. */
  CsEventHandle foreign = { .slot = 1000, .gen = h.gen };
  assert_false(cs_eq_pending(q, foreign));
  assert_false(cs_eq_cancel(q, foreign));
  CsEventHandle none = { 0 };
  assert_false(cs_eq_pending(q, none));
  CsEvent ev;
  assert_true(cs_eq_pop(q, &ev));
  /* Popped: its handle is no longer pending, even if the slot is reused. */
  assert_false(cs_eq_pending(q, h));
  CsEventHandle h2 = cs_eq_push(q, 7, 1, 0, NULL);
  assert_false(cs_eq_pending(q, h));
  assert_true(cs_eq_pending(q, h2));
  assert_true(cs_eq_pop(q, &ev));
  assert_false(cs_eq_pop(q, &ev));
  cs_eq_free(q);
}

static void test_warning_list(void **state)
{
  (void)state;
  cs_warning_list_free(NULL);
  assert_int_equal(cs_warning_list_len(NULL), 0);
  assert_null(cs_warning_list_get(NULL, 0));
  CsWarningList *l = cs_warning_list_new();
  cs_warning_list_extend(l, NULL);
  assert_int_equal(cs_warning_list_len(l), 0);
  cs_warning_add(l, "unstable", "a", -1, "queue grows by %d", 3);
  cs_warning_add(l, "nothing_measured", NULL, 2, "none");
  CsWarningList *copy = cs_warning_list_new();
  cs_warning_list_extend(copy, l);
  assert_int_equal(cs_warning_list_len(copy), 2);
  assert_string_equal(cs_warning_list_get(copy, 0)->message, "queue grows by 3");
  assert_null(cs_warning_list_get(copy, 2));
  assert_null(cs_warning_list_get(copy, -1));
  cJSON *a = cs_warning_list_to_json(copy);
  char *text = cJSON_PrintUnformatted(a);
  assert_string_equal(text, "[{\"code\":\"unstable\",\"model\":\"a\",\"message\":\"queue grows by 3\"},"
                            "{\"code\":\"nothing_measured\",\"gpu\":2,\"message\":\"none\"}]");
  cJSON_free(text);
  cJSON_Delete(a);
  cs_warning_list_free(copy);
  cs_warning_list_free(l);
}

/* Degenerate inputs of the Table 2 bounds: no batch fits without a positive
 * per-request cost or without GPUs; an SLO below beta fits none either. */
static void test_batching_degenerate(void **state)
{
  (void)state;
  const CsBatchingBound zero[] = {
    cs_batching_staggered(0.0, 1.0, 100.0, 4),
    cs_batching_uncoordinated(-1.0, 1.0, 100.0, 4),
    cs_batching_uncoordinated(1.0, 1.0, 100.0, 0),
    cs_batching_staggered(1.0, 60.0, 100.0, 1), /* budget 50 ms < beta */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(zero); i++) {
    assert_int_equal(zero[i].batch, 0);
    assert_float_equal(zero[i].throughput_rps, 0.0, 0);
  }
  /* Uncoordinated, alpha 1, beta 4, SLO 100 on 2 GPUs: b = floor(50 - 4) = 46,
   * throughput 2 * 46 / 50 ms = 1840 req/s. */
  CsBatchingBound u = cs_batching_uncoordinated(1.0, 4.0, 100.0, 2);
  assert_int_equal(u.batch, 46);
  assert_float_equal(u.throughput_rps, 1840.0, 1e-9);
}

static int log_count;

static void count_log(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer user)
{
  (void)domain;
  (void)level;
  (void)msg;
  (void)user;
  log_count++;
}

/* Out-of-range accessors return nothing and log a critical (the caller's
 * bug), never read out of bounds. */
static void test_results_accessors(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 50, \"requests\": 3}]}");
  CsResults *r = test_run(sc, NULL);
  GLogFunc old = g_log_set_default_handler(count_log, NULL);
  log_count = 0;
  assert_null(cs_results_model(r, 1));
  assert_null(cs_results_model(r, -1));
  assert_true(isnan(cs_results_gpu_busy_fraction(r, 1)));
  assert_int_equal(log_count, 3);
  g_log_set_default_handler(old, NULL);
  assert_string_equal(cs_stage_name(CS_STAGE_RESULT_RETURN), "result_return");
  assert_string_equal(cs_stage_name(CS_N_STAGES), "unknown");
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_requests_csv_ok_and_unserved),
    cmocka_unit_test(test_failed_replica),
    cmocka_unit_test(test_all_dropped),
    cmocka_unit_test(test_requests_csv_unwritable),
    cmocka_unit_test(test_progress),
    cmocka_unit_test(test_effective_scenario),
    cmocka_unit_test(test_search_arguments),
    cmocka_unit_test(test_central_max_batch),
    cmocka_unit_test(test_symphony_max_batch_does_not_defer),
    cmocka_unit_test(test_earliest_free_waits),
    cmocka_unit_test(test_resp_mismatch_at_largest_batch),
    cmocka_unit_test(test_router_zero_wait),
    cmocka_unit_test(test_event_queue_edges),
    cmocka_unit_test(test_warning_list),
    cmocka_unit_test(test_batching_degenerate),
    cmocka_unit_test(test_results_accessors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
