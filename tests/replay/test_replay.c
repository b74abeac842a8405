/* Replaying decision logs (clustersim/backend.h, src/replay).
 *
 * - Counting: a replay's measurements are counted by replay_results.c, a
 *   path apart from the engine's. Given the simulator's own times (from its
 *   requests.csv), it must give exactly the simulator's figures and rows.
 * - A real replay on the emulated backend: every batch sent, executed no
 *   shorter than its profiled latency, never before its inputs arrive; the
 *   counts equal the simulated run's and its latencies are close (generous
 *   bounds: a shared machine).
 * - The cpu backend's cost grows with the batch size, and bad options are
 *   refused with their key named.
 * - Malformed logs are refused naming the file, the line and the field. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <glib/gstdio.h>

#include "replay/backends.h"
#include "replay/probe.h"
#include "replay/replay_internal.h"
#include "sim/results.h"

#define assert_close(a, b, tol)                                                          \
  do {                                                                                   \
    double a_ = (a), b_ = (b);                                                           \
    if (!(fabs(a_ - b_) <= (tol)))                                                       \
      fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                \
  } while (0)

static char *source_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  return g_build_filename(root ? root : ".", rel, NULL);
}

/* Two models on two V100s behind the router, over the GCP network curve
 * (transfers both ways are not 0), with a warm-up and a window. */
static const char *router_scenario =
  "{\"name\": \"replay test\", \"seed\": 3,"
  " \"profiles\": [\"%s\"], \"network\": {\"curve\": \"%s\"},"
  " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
  " \"placement\": {\"policy\": \"dedicated\"},"
  " \"clients\": ["
  "  {\"model\": \"resnet50\", \"rate\": 150, \"slo_ms\": 40, \"duration_s\": %g, \"warmup_s\": 0.2},"
  "  {\"model\": \"alexnet\", \"rate\": 300, \"slo_ms\": 25, \"arrival\": {\"process\": \"gamma\", \"cv\": 2},"
  "   \"duration_s\": %g, \"warmup_s\": 0.2}]}";

/* Symphony dropping requests it cannot serve in time: "left" records. */
static const char *symphony_scenario =
  "{\"name\": \"replay test, drops\", \"seed\": 5,"
  " \"profiles\": [\"%s\"], \"network\": {\"curve\": \"%s\"},"
  " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"symphony\"},"
  " \"clients\": ["
  "  {\"model\": \"resnet50\", \"rate\": 2500, \"slo_ms\": 15, \"duration_s\": %g, \"warmup_s\": 0.1},"
  "  {\"model\": \"alexnet\", \"rate\": 500, \"slo_ms\": 20, \"duration_s\": %g}]}";

typedef struct {
  char *dir, *log_path, *csv_path;
  CsResults *sim;
} SimRun;

static SimRun simulate(const char *fmt, double duration_s)
{
  SimRun r = { 0 };
  r.dir = g_dir_make_tmp("cs-replay-XXXXXX", NULL);
  assert_non_null(r.dir);
  char *prof = source_path("data/profiles/v100_thesis.json");
  char *net = source_path("data/profiles/network/gcp_n1_standard_16.json");
  char *json = g_strdup_printf(fmt, prof, net, duration_s, duration_s);
  GError *err = NULL;
  CsScenario *sc = cs_scenario_new_from_json(json, "replay-test.json", r.dir, &err);
  assert_non_null(sc);
  r.log_path = g_build_filename(r.dir, "d.jsonl", NULL);
  r.csv_path = g_build_filename(r.dir, "sim.csv", NULL);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.decisions = r.log_path;
  opt.requests_csv = r.csv_path;
  r.sim = cs_run(sc, &opt, &err);
  if (!r.sim)
    fail_msg("%s", err->message);
  cs_scenario_free(sc);
  g_free(json);
  g_free(prof);
  g_free(net);
  return r;
}

static void sim_run_free(SimRun *r)
{
  cs_results_free(r->sim);
  g_unlink(r->log_path);
  g_unlink(r->csv_path);
  char *rep = g_build_filename(r->dir, "replay.csv", NULL);
  g_unlink(rep);
  g_free(rep);
  g_rmdir(r->dir);
  g_free(r->dir);
  g_free(r->log_path);
  g_free(r->csv_path);
}

static int by_text(const void *a, const void *b)
{
  return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

/* The rows of a requests.csv, sorted (ties in time may be ordered apart). */
static char **sorted_rows(const char *path)
{
  char *text = NULL;
  assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **rows = g_strsplit(text, "\n", -1);
  g_free(text);
  guint n = g_strv_length(rows);
  qsort(rows, n, sizeof(char *), by_text);
  return rows;
}

static void assert_same_latency(const CsLatencyStats *a, const CsLatencyStats *b)
{
  const double x[] = { a->p50, a->p90, a->p95, a->p99, a->max, a->mean };
  const double y[] = { b->p50, b->p90, b->p95, b->p99, b->max, b->mean };
  for (int i = 0; i < 6; i++)
    if (!(isnan(x[i]) && isnan(y[i])))
      assert_close(x[i], y[i], 1e-9);
}

static gint by_int64(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The replay's counting, fed the simulator's own times, is the simulator's. */
static void counting_reproduces(const char *fmt, gboolean drops)
{
  SimRun r = simulate(fmt, 1.5);
  /* The scenario exercises what it is meant to: requests that left unrun. */
  assert_true(drops ? r.sim->total.dropped > 0 : r.sim->total.dropped == 0);
  assert_true(r.sim->total.warmup > 0 && r.sim->total.late > 0);
  GError *err = NULL;
  DecisionLog *log = cs_decision_log_read(r.log_path, &err);
  if (!log)
    fail_msg("%s", err->message);
  CsConfig *cfg = cs_replay_compile_scenario(log, &err);
  if (!cfg)
    fail_msg("%s", err->message);
  Replay rp = { .log = log, .cfg = cfg, .backend = &cs_backend_emulated, .max_lateness_ms = 1 };
  rp.send_ns = g_new(int64_t, log->requests->len);
  for (guint i = 0; i < log->requests->len; i++)
    rp.send_ns[i] = g_array_index(log->requests, DlRequest, i).send_ns;
  rp.times = g_array_new(FALSE, TRUE, sizeof(ReplayBatch));
  g_array_set_size(rp.times, log->batches->len);
  rp.left_ns = g_array_new(FALSE, TRUE, sizeof(int64_t));
  for (guint i = 0; i < log->left->len; i++)
    g_array_append_val(rp.left_ns, g_array_index(log->left, DlLeft, i).at_ns);
  /* Batch times from the simulator's requests.csv. */
  GHashTable *by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint i = 0; i < log->batches->len; i++)
    g_hash_table_insert(by_id, &g_array_index(log->batches, DlBatch, i).id, GUINT_TO_POINTER(i + 1));
  char *text = NULL;
  assert_true(g_file_get_contents(r.csv_path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  g_free(text);
  int found = 0;
  for (int i = 1; lines[i] && *lines[i]; i++) {
    char **f = g_strsplit(lines[i], ",", -1);
    if (strcmp(f[3], "ok") == 0) {
      gint64 id = g_ascii_strtoll(f[16], NULL, 10);
      guint k = GPOINTER_TO_UINT(g_hash_table_lookup(by_id, &id));
      assert_true(k > 0);
      ReplayBatch *t = &g_array_index(rp.times, ReplayBatch, k - 1);
      t->dispatch_ns = g_ascii_strtoll(f[5], NULL, 10);
      t->node_ns = g_ascii_strtoll(f[6], NULL, 10);
      t->start_ns = g_ascii_strtoll(f[7], NULL, 10);
      t->end_ns = g_ascii_strtoll(f[8], NULL, 10);
      found++;
    }
    g_strfreev(f);
  }
  g_strfreev(lines);
  assert_true(found > 100);
  char *rep_csv = g_build_filename(r.dir, "replay.csv", NULL);
  CsResults *res = cs_replay_results(&rp, NULL, rep_csv, &err);
  if (!res)
    fail_msg("%s", err->message);

  assert_int_equal(res->n_models, r.sim->n_models);
  for (int m = 0; m <= res->n_models; m++) {
    const CsModelResult *a = m < res->n_models ? &res->models[m] : &res->total;
    const CsModelResult *b = m < res->n_models ? &r.sim->models[m] : &r.sim->total;
    assert_int_equal(a->generated, b->generated);
    assert_int_equal(a->warmup, b->warmup);
    assert_int_equal(a->measured, b->measured);
    assert_int_equal(a->completed, b->completed);
    assert_int_equal(a->good, b->good);
    assert_int_equal(a->late, b->late);
    assert_int_equal(a->dropped, b->dropped);
    assert_int_equal(a->unserved, b->unserved);
    assert_int_equal(a->failed, b->failed);
    assert_int_equal(a->in_window, b->in_window);
    assert_int_equal(a->good_in_window, b->good_in_window);
    assert_int_equal(a->batches, b->batches);
    assert_close(a->goodput_rps, b->goodput_rps, 1e-9);
    assert_close(a->throughput_rps, b->throughput_rps, 1e-9);
    assert_close(a->drain_s, b->drain_s, 1e-12);
    assert_same_latency(&a->latency, &b->latency);
    for (int s = 0; s < CS_N_STAGES; s++)
      assert_same_latency(&a->stage[s], &b->stage[s]);
  }
  for (int g = 0; g < res->n_gpus; g++) {
    assert_int_equal(res->gpus[g].busy_ns, r.sim->gpus[g].busy_ns);
    assert_int_equal(res->gpus[g].batches, r.sim->gpus[g].batches);
  }
  /* Row for row, the simulator's requests.csv. */
  char **a = sorted_rows(rep_csv), **b = sorted_rows(r.csv_path);
  assert_int_equal(g_strv_length(a), g_strv_length(b));
  for (int i = 0; a[i]; i++)
    assert_string_equal(a[i], b[i]);
  g_strfreev(a);
  g_strfreev(b);
  g_free(rep_csv);
  assert_true(cs_results_replay_valid(res));
  cs_results_free(res);
  /* Validity: both latenesses within the bound (1 ms here), not either. */
  for (int late_kind = 0; late_kind < 2; late_kind++) {
    for (guint i = 0; i < rp.times->len; i++) {
      ReplayBatch *t = &g_array_index(rp.times, ReplayBatch, i);
      t->dispatch_late_ns = late_kind == 0 ? 2000000 : 0;
      t->start_late_ns = late_kind == 1 ? 2000000 : 0;
    }
    res = cs_replay_results(&rp, NULL, NULL, &err);
    assert_non_null(res);
    assert_false(cs_results_replay_valid(res));
    assert_true(cs_results_n_warnings(res) >= 1);
    assert_string_equal(cs_results_warning(res, 0)->code, "replay_late");
    cs_results_free(res);
  }
  for (guint i = 0; i < rp.times->len; i++) {
    ReplayBatch *t = &g_array_index(rp.times, ReplayBatch, i);
    t->dispatch_late_ns = t->start_late_ns = 0;
  }
  /* A busy machine: the probe's p90 wake-up lateness above 5 % of the median
   * batch (and above 0.2 ms) warns, at or below it does not. The median from
   * the batches here, by sorting. */
  GArray *exec = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (guint i = 0; i < rp.times->len; i++) {
    const ReplayBatch *t = &g_array_index(rp.times, ReplayBatch, i);
    if (t->end_ns > t->start_ns)
      g_array_append_val(exec, (int64_t){ t->end_ns - t->start_ns });
  }
  g_array_sort(exec, by_int64);
  double median_ms = (exec->len % 2 ? g_array_index(exec, int64_t, exec->len / 2)
                      : (g_array_index(exec, int64_t, exec->len / 2 - 1) +
                         g_array_index(exec, int64_t, exec->len / 2)) / 2.0) * 1e-6;
  g_array_unref(exec);
  double bound_ms = MAX(0.2, 0.05 * median_ms);
  const double probe_ms[] = { 0.04, bound_ms * 0.98, bound_ms * 1.02, 5.0 };
  const gboolean warns[] = { FALSE, FALSE, TRUE, TRUE };
  for (int k = 0; k < 4; k++) {
    /* 400 quiet wake-ups (0.01 ms) and 100 at probe_ms[k]: the p90 (rank
     * 450 of 500) is probe_ms[k], the median and the mean far below it. */
    rp.wakeup_late_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
    for (int i = 0; i < 500; i++)
      g_array_append_val(rp.wakeup_late_ns,
                         (int64_t){ i % 5 == 4 ? (int64_t)(probe_ms[k] * 1e6) : 10000 });
    res = cs_replay_results(&rp, NULL, NULL, &err);
    assert_non_null(res);
    assert_true(cs_results_replay_valid(res));
    gboolean busy = FALSE;
    for (int w = 0; w < cs_results_n_warnings(res); w++)
      busy |= strcmp(cs_results_warning(res, w)->code, "replay_machine_busy") == 0;
    if (busy != warns[k])
      fail_msg("probe at %.4f ms, median batch %.4f ms: busy warning %d, expected %d",
               probe_ms[k], median_ms, busy, warns[k]);
    cs_results_free(res);
    g_array_unref(rp.wakeup_late_ns);
    rp.wakeup_late_ns = NULL;
  }
  g_hash_table_destroy(by_id);
  g_free(rp.send_ns);
  g_array_unref(rp.times);
  g_array_unref(rp.left_ns);
  cs_config_free(cfg);
  cs_decision_log_free(log);
  sim_run_free(&r);
}

/* The probe's rule (probe.h): busy when the p90 wake-up lateness is above
 * 5 % of the typical duration and above 0.2 ms; unknown figures are never
 * busy. Its stats are nearest-rank over the samples. */
static void test_probe(void **state)
{
  (void)state;
  assert_false(cs_probe_busy(0.19, 1.0));   /* under the floor */
  assert_true(cs_probe_busy(0.21, 1.0));    /* the floor rules for short work */
  assert_false(cs_probe_busy(0.49, 10.0));  /* 4.9 % of 10 ms */
  assert_true(cs_probe_busy(0.51, 10.0));   /* 5.1 % */
  assert_false(cs_probe_busy(NAN, 10.0));
  assert_false(cs_probe_busy(5.0, NAN));
  GArray *v = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (int i = 1; i <= 100; i++) /* 0.01 .. 1.00 ms, shuffled by a stride */
    g_array_append_val(v, (int64_t){ (int64_t)((i * 37 % 100) + 1) * 10000 });
  CsProbeStats st = cs_probe_stats(v, 14.0);
  assert_int_equal(st.samples, 100);
  assert_close(st.p50_ms, 0.50, 1e-12);
  assert_close(st.p90_ms, 0.90, 1e-12);
  assert_close(st.max_ms, 1.00, 1e-12);
  assert_true(st.busy); /* the p90, 0.9 ms, > 5 % of 14 ms; the median, 0.5, is not */
  g_array_unref(v);
  /* A real probe: one sample at least, none early. */
  CsProbe *p = cs_probe_start(cs_monotonic_ns());
  g_usleep(10000);
  GArray *got = cs_probe_stop(p);
  assert_true(got->len >= 1);
  for (guint i = 0; i < got->len; i++)
    assert_true(g_array_index(got, int64_t, i) >= 0);
  g_array_unref(got);
}

static void test_counting_router(void **state)
{
  (void)state;
  counting_reproduces(router_scenario, FALSE);
}

static void test_counting_with_drops(void **state)
{
  (void)state;
  counting_reproduces(symphony_scenario, TRUE);
}

/* One replay of r's decisions on "emulated" into rep_csv: asserts what
 * holds on any machine (the counts, the same batch, GPU and worker per
 * request, execution at least the profiled latency, never before the
 * inputs arrived) and returns whether it also kept to the times (valid
 * within 50 ms, p50 within 5 ms of the simulation's, no batch 50 ms longer
 * than profiled), which a burst of other work on the machine can break. */
static gboolean emulated_replay_once(const SimRun *r, const char *rep_csv, const CsProfileSet *ps)
{
  CsReplayOptions opt;
  cs_replay_options_init(&opt);
  opt.decisions = r->log_path;
  opt.backend = cs_backend_builtin("emulated");
  opt.requests_csv = rep_csv;
  opt.max_lateness_ms = 50; /* generous: a shared machine; the figures come from bench/ */
  GError *err = NULL;
  CsResults *res = cs_replay(&opt, &err);
  if (!res)
    fail_msg("%s", err->message);
  gboolean on_time = cs_results_replay_valid(res);
  assert_non_null(strstr(res->replay_json, "\"backend\":\"emulated\""));
  for (int m = 0; m < res->n_models; m++) {
    assert_int_equal(res->models[m].generated, r->sim->models[m].generated);
    assert_int_equal(res->models[m].measured, r->sim->models[m].measured);
    assert_int_equal(res->models[m].completed, r->sim->models[m].completed);
    assert_int_equal(res->models[m].batches, r->sim->models[m].batches);
    /* The emulated GPU is the simulator's without interference (none here):
     * the latencies differ by the replay's overhead alone. */
    on_time = on_time && fabs(res->models[m].latency.p50 - r->sim->models[m].latency.p50) < 5.0;
  }
  char **a = sorted_rows(rep_csv), **b = sorted_rows(r->csv_path);
  assert_int_equal(g_strv_length(a), g_strv_length(b));
  for (int i = 0; a[i]; i++) {
    if (!*a[i] || g_str_has_prefix(a[i], "id,"))
      continue;
    char **x = g_strsplit(a[i], ",", -1), **y = g_strsplit(b[i], ",", -1);
    assert_string_equal(x[0], y[0]);   /* id */
    assert_string_equal(x[16], y[16]); /* batch */
    assert_string_equal(x[13], y[13]); /* gpu */
    assert_string_equal(x[15], y[15]); /* worker */
    gint64 node = g_ascii_strtoll(x[6], NULL, 10), start = g_ascii_strtoll(x[7], NULL, 10);
    gint64 end = g_ascii_strtoll(x[8], NULL, 10);
    int n = atoi(x[12]);
    int64_t profiled = cs_model_profile_latency_ns(cs_profile_set_lookup(ps, "v100", x[1]), n);
    assert_true(start >= node);
    assert_true(end - start >= profiled);
    on_time = on_time && end - start < profiled + 50000000;
    g_strfreev(x);
    g_strfreev(y);
  }
  g_strfreev(a);
  g_strfreev(b);
  cs_results_free(res);
  return on_time;
}

/* A real replay on "emulated": batches run as long as their profiled
 * latency, in the order and where they were decided. What depends on the
 * machine keeping time is asked of one replay in at most three: a replay
 * that is always late fails, a busy moment of a shared machine does not
 * (docs/testing.md, "Under load"). */
static void test_emulated_replay(void **state)
{
  (void)state;
  SimRun r = simulate(router_scenario, 0.8);
  char *rep_csv = g_build_filename(r.dir, "replay.csv", NULL);
  CsProfileSet *ps = cs_profile_set_new();
  char *prof = source_path("data/profiles/v100_thesis.json");
  assert_true(cs_profile_set_load_file(ps, prof, NULL));
  gboolean on_time = FALSE;
  for (int try = 1; try <= 3 && !on_time; try++) {
    on_time = emulated_replay_once(&r, rep_csv, ps);
    if (!on_time)
      print_message("replay try %d was late (a loaded machine?)%s\n", try,
                    try < 3 ? ": running it again" : "");
  }
  assert_true(on_time);
  cs_profile_set_free(ps);
  g_free(prof);
  g_free(rep_csv);
  sim_run_free(&r);
}

/* The fastest of nine executions. Being descheduled only ever adds time,
 * so the minimum is the execution's own cost on a loaded machine too. The
 * median of five, used before, failed the comparison below when three of
 * five batches of 1 (about 8 ms here, against 42 ms for 64) lost the CPU
 * for 20 ms or more each, which a machine oversubscribed several times
 * over can do: a possible cause of test_replay's one failure under load
 * (issue 34), the only wall-clock comparison in it that is not retried. */
static double fastest_ns(const CsBackend *be, void *st, CsBackendWorker *w, int batch)
{
  double best = INFINITY;
  for (int i = 0; i < 9; i++) {
    int64_t t0 = cs_monotonic_ns();
    assert_true(be->execute(st, w, batch, NULL));
    best = fmin(best, (double)(cs_monotonic_ns() - t0));
  }
  return best;
}

static void test_cpu_backend(void **state)
{
  (void)state;
  const CsBackend *be = cs_backend_builtin("cpu");
  if (!be)
    skip(); /* built without OpenBLAS */
  CsProfileSet *ps = cs_profile_set_new();
  char *prof = source_path("data/profiles/v100_thesis.json");
  assert_true(cs_profile_set_load_file(ps, prof, NULL));
  const char *types[] = { "v100" }, *models[] = { "resnet50" };
  const char *opts[] = { "width=256", NULL };
  CsBackendSetup setup = { .n_gpus = 1, .gpu_types = types, .n_models = 1, .models = models,
                           .profiles = ps, .options = opts };
  GError *err = NULL;
  void *st = be->open(&setup, NULL, &err);
  if (!st)
    fail_msg("%s", err->message);
  char *desc = be->describe(st);
  assert_non_null(strstr(desc, "\"width\":256"));
  g_free(desc);
  /* prepare pins the calling thread (the test's) to the GPU's cores. */
  CsBackendWorker w = { .gpu = 0, .worker = 0, .model = 0, .max_batch = 64 };
  assert_true(be->prepare(st, &w, &err));
  double t1 = fastest_ns(be, st, &w, 1), t64 = fastest_ns(be, st, &w, 64);
  print_message("cpu backend: fastest batch of 1 %.0f ns, of 64 %.0f ns\n", t1, t64);
  /* 64 times the arithmetic over the same weights: longer, if not 64 times. */
  assert_true(t64 > 1.5 * t1);
  assert_false(be->execute(st, &w, 65, &err));
  assert_non_null(strstr(err->message, "more than"));
  /* The framework names the backend (backend.h); a backend naming itself
   * too read 'backend "cpu": backend "cpu": ...'. */
  assert_null(strstr(err->message, "backend"));
  g_clear_error(&err);
  be->release(st, &w);
  be->close(st);

  const char *bad[][2] = { { "depth=3", "unknown key" }, { "width=3", "width=3" },
                           { "cores=x", "cores=x" }, { "cores=4096", "cores=4096" },
                           { "width", "expected KEY=VALUE" } };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    const char *o[] = { bad[i][0], NULL };
    setup.options = o;
    assert_null(be->open(&setup, NULL, &err));
    assert_non_null(err);
    if (!strstr(err->message, bad[i][1]))
      fail_msg("%s: %s", bad[i][0], err->message);
    g_clear_error(&err);
  }
  cs_profile_set_free(ps);
  g_free(prof);
}

static void expect_log_error(const char *dir, const char *text, const char *needle)
{
  char *path = g_build_filename(dir, "bad.jsonl", NULL);
  assert_true(g_file_set_contents(path, text, -1, NULL));
  GError *err = NULL;
  DecisionLog *log = cs_decision_log_read(path, &err);
  assert_null(log);
  assert_non_null(err);
  if (!strstr(err->message, needle) || !strstr(err->message, "bad.jsonl"))
    fail_msg("expected \"%s\" in: %s", needle, err->message);
  g_error_free(err);
  g_unlink(path);
  g_free(path);
}

static void test_bad_logs(void **state)
{
  (void)state;
  SimRun r = simulate(router_scenario, 0.3);
  char *text = NULL;
  assert_true(g_file_get_contents(r.log_path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  guint n = g_strv_length(lines); /* the last is empty */
  /* Without its end record: truncated. */
  char *cut = g_strjoinv("\n", (char *[]){ lines[0], lines[1], lines[2], "", NULL });
  expect_log_error(r.dir, cut, "no end record");
  g_free(cut);
  expect_log_error(r.dir, "", "empty");
  expect_log_error(r.dir, "hello\n", "line 1: not a decision log");
  expect_log_error(r.dir, "{\"format\": \"other\"}\n", "format");
  char *v2 = g_strdup(lines[0]);
  char *p = strstr(v2, "\"version\":1");
  assert_non_null(p);
  p[10] = '2';
  expect_log_error(r.dir, v2, "version 2");
  g_free(v2);
  /* A record with an unknown model index, on line 2. */
  char *badm = g_strdup_printf("%s\n{\"ev\":\"request\",\"id\":0,\"model\":7,\"send_ns\":0,"
                               "\"measured\":true}\n", lines[0]);
  expect_log_error(r.dir, badm, "line 2");
  g_free(badm);
  /* A request in two batches (preemption). */
  GString *twice = g_string_new(NULL);
  int batches = 0;
  for (guint i = 0; i + 1 < n; i++) {
    g_string_append_printf(twice, "%s\n", lines[i]);
    if (strstr(lines[i], "\"ev\":\"batch\"") && ++batches == 1)
      g_string_append_printf(twice, "%s\n", lines[i]);
  }
  expect_log_error(r.dir, twice->str, "earlier batch");
  g_string_free(twice, TRUE);
  /* A log whose recorded scenario lost its "placement" (edited by hand):
   * the replicas at 0 become the placement all the same. The fuzzer found
   * the manual placement leaked when there was no field to replace; the
   * sanitizer run of this test reports that leak. */
  cJSON *head = cJSON_Parse(lines[0]);
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(head, "scenario"),
                                          "placement");
  char *head_text = cJSON_PrintUnformatted(head);
  cJSON_Delete(head);
  GString *edited = g_string_new(head_text);
  g_string_append_c(edited, '\n');
  cJSON_free(head_text);
  for (guint i = 1; i + 1 < n; i++)
    g_string_append_printf(edited, "%s\n", lines[i]);
  char *epath = g_build_filename(r.dir, "edited.jsonl", NULL);
  assert_true(g_file_set_contents(epath, edited->str, -1, NULL));
  g_string_free(edited, TRUE);
  GError *err = NULL;
  DecisionLog *elog = cs_decision_log_read(epath, &err);
  assert_non_null(elog);
  CsConfig *ecfg = cs_replay_compile_scenario(elog, &err);
  if (!ecfg)
    fail_msg("%s", err->message);
  assert_non_null(ecfg->placement);
  assert_int_equal(cs_placement_n_replicas(ecfg->placement), 2);
  cs_config_free(ecfg);
  cs_decision_log_free(elog);
  g_unlink(epath);
  g_free(epath);
  g_strfreev(lines);
  g_free(text);
  sim_run_free(&r);
}

/* Loading libclustersim starts no thread: a command that blocks SIGTERM in
 * its main thread while it writes (clustersim plot, run) relies on it. When
 * the library linked OpenBLAS, OpenBLAS's thread took a SIGTERM meant to
 * wait, and a plot was killed halfway. Runs first, before any replay. */
static void test_library_starts_no_thread(void **state)
{
  (void)state;
  char *status = NULL;
  if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
    skip();
  const char *line = strstr(status, "\nThreads:");
  assert_non_null(line);
  assert_int_equal(atoi(line + strlen("\nThreads:")), 1);
  g_free(status);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_library_starts_no_thread),
    cmocka_unit_test(test_probe),
    cmocka_unit_test(test_counting_router),
    cmocka_unit_test(test_counting_with_drops),
    cmocka_unit_test(test_emulated_replay),
    cmocka_unit_test(test_cpu_backend),
    cmocka_unit_test(test_bad_logs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
