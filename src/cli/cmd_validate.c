/* clustersim validate SCENARIO --backend NAME [--backend-option KEY=VALUE]...
 *                    [--repeat N] [--max-lateness-ms X] [--max-duration-s S|none]
 *                    [-o DIR [--force]]   (without -o: in a temporary directory, the
 *                                          report printed only)
 *
 * The simulator against a backend, in one command (docs/replay.md):
 *   1. place: run SCENARIO as given, for its placement and batch sizes;
 *   2. profile: measure the backend (profile measure) for the scenario's
 *      models, every batch size from 1 to the largest placed, and the pairs
 *      when the scenario co-locates under MPS -> DIR/profile/;
 *   3. simulate: the scenario on the measured profile and interference,
 *      with the same placement (manual), writing its decisions
 *      -> DIR/simulated/, DIR/decisions.jsonl;
 *   4. replay those decisions on the backend -> DIR/replayed/;
 *   5. report: per-batch execution time, real against simulated (median and
 *      p90 of the relative error), per model p50/p99 latency and goodput,
 *      and figures of both latency distributions -> DIR/report.json,
 *      DIR/report.md, DIR/figures/.
 * Exit status 2 on bad input or a failing step; 0 otherwise, also when the
 * replay was not valid (the report says so, first). */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli.h"
#include "clustersim/backend.h"
#include "figures/figures.h"
#include "profiles/interference.h"
#include "replay/diagnosis.h"
#include "replay/measure.h"

/* Per batch id: its execution time (exec_end - exec_start), from a
 * requests.csv of a run or a replay. */
static GHashTable *exec_times(const char *csv, GError **error)
{
  char *text = NULL;
  if (!g_file_get_contents(csv, &text, NULL, error))
    return NULL;
  GHashTable *t = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  char **lines = g_strsplit(text, "\n", -1);
  g_free(text);
  for (int i = 1; lines[i] && *lines[i]; i++) {
    char **f = g_strsplit(lines[i], ",", -1);
    if (g_strv_length(f) >= 17 && strcmp(f[3], "ok") == 0) {
      gint64 *id = g_new(gint64, 1);
      *id = g_ascii_strtoll(f[16], NULL, 10);
      if (!g_hash_table_contains(t, id)) {
        gint64 *ns = g_new(gint64, 1);
        *ns = g_ascii_strtoll(f[8], NULL, 10) - g_ascii_strtoll(f[7], NULL, 10);
        g_hash_table_insert(t, id, ns);
      } else {
        g_free(id);
      }
    }
    g_strfreev(f);
  }
  g_strfreev(lines);
  return t;
}

/* The q-quantile of v (sorted in place), linear between order statistics;
 * NAN when v is empty. */
static double quantile(GArray *v, double q)
{
  if (v->len == 0)
    return NAN;
  gsl_sort((double *)v->data, 1, v->len);
  return gsl_stats_quantile_from_sorted_data((double *)v->data, 1, v->len, q);
}

static gint compare_int(gconstpointer a, gconstpointer b)
{
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static double pct(double real, double sim)
{
  return sim != 0 && isfinite(sim) && isfinite(real) ? 100.0 * (real - sim) / sim : NAN;
}

static void add_num(cJSON *o, const char *k, double v)
{
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static char *fmt(double v, const char *f)
{
  return isfinite(v) ? g_strdup_printf(f, v) : g_strdup("-");
}

/* The report: per-batch error over every batch, per model the latency
 * percentiles and goodput of both, and where they disagree the likely cause
 * (diagnosis.h) from the plan's load on the measured profile (measured,
 * GPU type gpu_type), the batches' signed error and the drift. */
static gboolean report(const char *dir, const CsResults *sim, const CsResults *rep,
                       const char *sim_csv, const char *rep_csv, const char *scenario,
                       const char *backend, double drift, const CsProfileSet *measured,
                       const char *gpu_type, gboolean mps, const CsProbeStats *measure_wake,
                       GString *md, GError **error)
{
  GHashTable *a = exec_times(sim_csv, error);
  if (!a)
    return FALSE;
  GHashTable *b = exec_times(rep_csv, error);
  if (!b) {
    g_hash_table_destroy(a);
    return FALSE;
  }
  GArray *abs_err = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *signed_err = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *abs_err_ms = g_array_new(FALSE, FALSE, sizeof(double));
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, a);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    gint64 *real = g_hash_table_lookup(b, key);
    gint64 simulated = *(gint64 *)value;
    if (!real || simulated <= 0)
      continue;
    double e = (double)(*real - simulated) / (double)simulated;
    double ae = fabs(e);
    g_array_append_val(signed_err, e);
    g_array_append_val(abs_err, ae);
    double ms = fabs((double)(*real - simulated)) * 1e-6;
    g_array_append_val(abs_err_ms, ms);
  }
  g_hash_table_destroy(a);
  g_hash_table_destroy(b);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "scenario", scenario);
  cJSON_AddStringToObject(root, "backend", backend);
  gboolean valid = cs_results_replay_valid(rep);
  cJSON_AddBoolToObject(root, "replay_valid", valid);
  cJSON *pb = cJSON_AddObjectToObject(root, "batch_execution_error_pct");
  cJSON_AddNumberToObject(pb, "batches", abs_err->len);
  double med = quantile(abs_err, 0.5) * 100, p90 = quantile(abs_err, 0.9) * 100;
  double bias = quantile(signed_err, 0.5) * 100;
  add_num(pb, "median_abs", med);
  add_num(pb, "p90_abs", p90);
  add_num(pb, "median_signed", bias);
  add_num(pb, "median_abs_ms", quantile(abs_err_ms, 0.5));
  add_num(root, "machine_drift_pct", drift);
  /* How late a thread of normal priority woke while the profile was
   * measured and during the replay (probe.h), and whether that made the
   * machine busy for these batches (the replay's warning
   * replay_machine_busy; the measurement's own judgement). */
  gboolean replay_busy = FALSE;
  for (int w = 0; w < cs_results_n_warnings(rep); w++)
    replay_busy |= strcmp(cs_results_warning(rep, w)->code, "replay_machine_busy") == 0;
  char *rep_text = cs_results_to_json(rep);
  cJSON *rep_json = cJSON_Parse(rep_text);
  g_free(rep_text);
  cJSON *wake = cJSON_GetObjectItemCaseSensitive(
    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep_json, "replay"),
                                     "lateness_ms"), "normal_thread_wakeup");
  double replay_p50 = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(wake, "p50"));
  double replay_p90 = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(wake, "p90"));
  cJSON_Delete(rep_json);
  gboolean measure_busy = measure_wake->busy;
  gboolean busy = replay_busy || measure_busy;
  cJSON_AddBoolToObject(root, "machine_busy", busy);
  cJSON *wj = cJSON_AddObjectToObject(root, "normal_thread_wakeup_ms");
  cJSON *wm = cJSON_AddObjectToObject(wj, "measurement");
  add_num(wm, "p50", measure_wake->p50_ms);
  add_num(wm, "p90", measure_wake->p90_ms);
  cJSON_AddBoolToObject(wm, "busy", measure_busy);
  cJSON *wr = cJSON_AddObjectToObject(wj, "replay");
  add_num(wr, "p50", replay_p50);
  add_num(wr, "p90", replay_p90);
  cJSON_AddBoolToObject(wr, "busy", replay_busy);
  const char *busy_when = measure_busy && replay_busy ? "while the profile was measured and during the replay"
                          : measure_busy              ? "while the profile was measured"
                          : replay_busy               ? "during the replay"
                                                      : NULL;
  double busy_p90 = measure_busy && replay_busy ? MAX(measure_wake->p90_ms, replay_p90)
                    : measure_busy              ? measure_wake->p90_ms
                                                : replay_p90;
  g_string_append_printf(md, "# Validation: %s on backend %s\n\n", scenario, backend);
  if (fabs(drift) > 5.0)
    g_string_append_printf(md, "**The machine's speed changed during the validation**: isolated "
                           "latencies measured again after the replay are %+.1f %% off those "
                           "the simulation used (median over every model and batch size); "
                           "errors of that size are the machine's, not the simulator's.\n\n",
                           drift);
  else if (isfinite(drift))
    g_string_append_printf(md, "Isolated latencies measured again after the replay: %+.1f %% "
                           "(median) from those the simulation used.\n\n", drift);
  if (busy_when)
    g_string_append_printf(md, "**The machine was busy %s**: a thread of normal priority woke "
                           "%.3f ms late from its sleeps (p90; report.json has each part), and "
                           "batches measured or replayed then ran about as late; errors of that "
                           "size are the machine's, not the simulator's.\n\n",
                           busy_when, busy_p90);
  if (!valid)
    g_string_append(md, "**The replay was not valid**: its own scheduling was later than its "
                        "bound (replayed/summary.json, \"replay\"); the real figures below "
                        "include that overhead.\n\n");
  char *m1 = fmt(med, "%.2f"), *m2 = fmt(p90, "%.2f"), *m3 = fmt(bias, "%+.2f");
  char *m4 = fmt(quantile(abs_err_ms, 0.5), "%.3f");
  g_string_append_printf(md, "Batch execution time, real vs simulated, over %u batches: median "
                         "error %s %% (%s ms), p90 %s %% (median signed %s %%: positive = real "
                         "slower).\n\n",
                         abs_err->len, m1, m4, m2, m3);
  g_free(m4);
  g_free(m1);
  g_free(m2);
  g_free(m3);
  cJSON *why = cJSON_AddArrayToObject(root, "diagnosis");
  for (int m = 0; m < cs_results_n_models(sim) && m < cs_results_n_models(rep); m++) {
    const CsModelResult *s = cs_results_model(sim, m), *r = cs_results_model(rep, m);
    CsDiagnosisFacts facts = { .model = s->model, .sim_goodput_rps = s->goodput_rps,
                               .real_goodput_rps = r->goodput_rps,
                               .offered_rps = s->offered_rps,
                               .load = cs_diagnosis_load(sim, measured, gpu_type, mps, m),
                               .batch_signed_pct = bias, .drift_pct = drift,
                               .replay_valid = valid, .busy_when = busy_when,
                               .busy_wakeup_p90_ms = busy_p90 };
    char *text = cs_diagnosis_text(&facts);
    if (!text)
      continue;
    g_string_append_printf(md, "%s\n\n", text);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", s->model);
    add_num(o, "load", facts.load);
    cJSON_AddStringToObject(o, "text", text);
    cJSON_AddItemToArray(why, o);
    g_free(text);
  }
  g_string_append(md, "| model | p50 sim ms | p50 real ms | diff % | p99 sim ms | p99 real ms | "
                      "diff % | goodput sim | goodput real | diff % |\n"
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  cJSON *models = cJSON_AddArrayToObject(root, "models");
  for (int m = 0; m <= cs_results_n_models(sim); m++) {
    const CsModelResult *s = m < cs_results_n_models(sim) ? cs_results_model(sim, m)
                                                          : cs_results_total(sim);
    const CsModelResult *r = m < cs_results_n_models(rep) ? cs_results_model(rep, m)
                                                          : cs_results_total(rep);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", s->model);
    const double v[] = { s->latency.p50, r->latency.p50, pct(r->latency.p50, s->latency.p50),
                         s->latency.p99, r->latency.p99, pct(r->latency.p99, s->latency.p99),
                         s->goodput_rps, r->goodput_rps, pct(r->goodput_rps, s->goodput_rps) };
    static const char *const keys[] = { "p50_sim_ms", "p50_real_ms", "p50_diff_pct",
                                        "p99_sim_ms", "p99_real_ms", "p99_diff_pct",
                                        "goodput_sim_rps", "goodput_real_rps", "goodput_diff_pct" };
    g_string_append_printf(md, "| %s |", s->model);
    for (int k = 0; k < 9; k++) {
      add_num(o, keys[k], v[k]);
      char *x = fmt(v[k], k % 3 == 2 ? "%+.2f" : "%.2f");
      g_string_append_printf(md, " %s |", x);
      g_free(x);
    }
    g_string_append(md, "\n");
    cJSON_AddItemToArray(models, o);
  }
  g_string_append(md, "\nFigures: figures/latency_cdf_compare_MODEL (simulated vs replayed).\n");
  char *text = cJSON_Print(root);
  char *path = g_build_filename(dir, "report.json", NULL);
  char *full = g_strconcat(text, "\n", NULL);
  gboolean ok = g_file_set_contents(path, full, -1, error);
  g_free(full);
  g_free(path);
  cJSON_free(text);
  cJSON_Delete(root);
  g_array_unref(abs_err);
  g_array_unref(signed_err);
  g_array_unref(abs_err_ms);
  if (ok) {
    path = g_build_filename(dir, "report.md", NULL);
    ok = g_file_set_contents(path, md->str, -1, error);
    g_free(path);
  }
  return ok;
}

/* Median over every (model, batch) point of after / before - 1, in %:
 * how much the machine's speed moved between two measured profiles. */
static double profile_drift_pct(const char *before, const char *after)
{
  cJSON *a = cJSON_Parse(before), *b = cJSON_Parse(after);
  GArray *r = g_array_new(FALSE, FALSE, sizeof(double));
  cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "models");
  cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, "models");
  /* Both profiles walked side by side (indexing a cJSON array walks it). */
  for (cJSON *pa = ma ? ma->child : NULL, *pb = mb ? mb->child : NULL; pa && pb;
       pa = pa->next, pb = pb->next) {
    cJSON *ba = cJSON_GetObjectItemCaseSensitive(pa, "batches");
    cJSON *bb = cJSON_GetObjectItemCaseSensitive(pb, "batches");
    for (cJSON *xa = ba ? ba->child : NULL, *xb = bb ? bb->child : NULL; xa && xb;
         xa = xa->next, xb = xb->next) {
      double x = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(xa, "latency_ms"));
      double y = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(xb, "latency_ms"));
      double q = 100.0 * (y / x - 1.0);
      if (x > 0 && isfinite(q))
        g_array_append_val(r, q);
    }
  }
  double med = quantile(r, 0.5);
  g_array_unref(r);
  cJSON_Delete(a);
  cJSON_Delete(b);
  return med;
}

/* Removes dir and everything under it (validate's temporary directory
 * without -o); symbolic links are removed, not followed. */
static void remove_tree(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    char *p = g_build_filename(dir, name, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      remove_tree(p);
    else
      g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
}

/* The scenario to validate with: its effective form on the measured
 * profile (and interference, under MPS), with the placement that ran. */
static char *validation_scenario(CsScenario *sc, const CsResults *first, const char *profile,
                                 const char *interference, const char *gpu_type, GError **error)
{
  char *eff = cs_scenario_effective_json(sc, NULL, error);
  if (!eff)
    return NULL;
  cJSON *doc = cJSON_Parse(eff);
  g_free(eff);
  cJSON *cluster = cJSON_GetObjectItemCaseSensitive(doc, "cluster");
  if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cluster, "gpu_type"))) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "validate runs scenarios of one GPU type given as cluster.gpu_type (not "
                "cluster.nodes)");
    cJSON_Delete(doc);
    return NULL;
  }
  cJSON *profiles = cJSON_CreateArray();
  cJSON_AddItemToArray(profiles, cJSON_CreateString(profile));
  cJSON_DeleteItemFromObjectCaseSensitive(doc, "profiles");
  cJSON_AddItemToObject(doc, "profiles", profiles);
  cJSON_DeleteItemFromObjectCaseSensitive(cluster, "gpu_type");
  cJSON_AddStringToObject(cluster, "gpu_type", gpu_type);
  cJSON_DeleteItemFromObjectCaseSensitive(cluster, "price_per_hour");
  cJSON_DeleteItemFromObjectCaseSensitive(cluster, "price_source");
  cJSON_DeleteItemFromObjectCaseSensitive(cluster, "interference");
  if (interference)
    cJSON_AddStringToObject(cluster, "interference", interference);
  cJSON_DeleteItemFromObjectCaseSensitive(doc, "overrides_applied");
  const CsPlacement *pl = cs_results_placement(first);
  if (pl) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "policy", "manual");
    cJSON *reps = cJSON_AddArrayToObject(p, "replicas");
    for (int i = 0; i < cs_placement_n_replicas(pl); i++) {
      const CsReplica *r = cs_placement_replica(pl, i);
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "model", cs_results_model(first, r->model)->model);
      cJSON_AddNumberToObject(x, "gpu", r->gpu);
      cJSON_AddNumberToObject(x, "batch", r->batch);
      if (r->mps_share > 0)
        cJSON_AddNumberToObject(x, "mps_share", r->mps_share);
      cJSON_AddItemToArray(reps, x);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "placement");
    cJSON_AddItemToObject(doc, "placement", p);
  }
  char *text = cJSON_Print(doc);
  char *out = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(doc);
  return out;
}

int cmd_validate(int argc, char **argv)
{
  const char *prog = "clustersim validate";
  char *backend_name = NULL, *output = NULL, *max_duration_text = NULL;
  char **backend_options = NULL;
  int repeat = 15;
  double max_late = 1.0, max_duration = 0;
  gboolean force = FALSE, sleep_idle = FALSE, print_only = FALSE;
  CliOverrides overrides = { 0 };
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name, "Execution backend (required): emulated, cpu or cuda", "NAME" },
    { "backend-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &backend_options, "A backend setting (repeatable)", "KEY=VALUE" },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Timed executions per profiled point (default 15)", "N" },
    { "max-lateness-ms", 0, 0, G_OPTION_ARG_DOUBLE, &max_late, "The replay's validity bound (default 1)", "MS" },
    { "max-duration-s", 0, 0, G_OPTION_ARG_STRING, &max_duration_text, CLI_MAX_DURATION_HELP " (profiling, estimated from the scenario's profile, and the replay)", "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Directory for everything (default: none; the report is printed only)", "DIR" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace an earlier validation in DIR", NULL },
    { "sleep-idle", 0, 0, G_OPTION_ARG_NONE, &sleep_idle, "Replay executors sleep between batches (default: they spin, as the profile's measurements run back to back)", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = cli_context_new("SCENARIO", entries, &overrides);
  g_option_context_set_summary(ctx,
    "Profiles the backend for the scenario's models, simulates the scenario on that profile,\n"
    "replays the simulator's decisions on the backend in real time and reports real against\n"
    "simulated: per-batch execution time, per-model latency and goodput, figures. It takes\n"
    "the profiling time plus twice the scenario's duration (docs/replay.md).");
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL, *vsc = NULL;
  CsResults *first = NULL, *sim = NULL, *rep = NULL;
  CsProfileSet *like = NULL, *measured = NULL;
  char **models = NULL;
  void *state = NULL;
  CsProbeStats measure_wake = { .p50_ms = NAN, .p90_ms = NAN };
  const char **types = NULL;
  const CsBackend *backend = NULL;
  char *profile = NULL, *interference = NULL, *described = NULL, *vtext = NULL;
  char *prof_dir = NULL, *ppath = NULL, *ipath = NULL, *sim_dir = NULL, *rep_dir = NULL;
  char *dec = NULL, *sim_csv = NULL, *rep_csv = NULL, *gpu_type = NULL;
  char *like_type = NULL;
  GArray *batches = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *shares = g_array_new(FALSE, FALSE, sizeof(int));
  CsInterferenceSet *tables = NULL;
  GString *md = g_string_new(NULL);
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, "expected a SCENARIO file (see --help)");
    goto out;
  }
  backend = cs_backend_builtin(backend_name);
  if (!backend) {
    char *names = cs_backend_builtin_names();
    char *m = backend_name ? g_strdup_printf("--backend %s: unknown backend; this build has %s",
                                             backend_name, names)
                           : g_strdup_printf("expected --backend NAME (this build has %s)", names);
    status = cli_fail(prog, m);
    g_free(m);
    g_free(names);
    goto out;
  }
  /* Without -o the validation runs in a temporary directory and only its
   * report is printed (as sweep without -o prints its table): the form
   * docs/replay.md gives for a first look. */
  print_only = output == NULL;
  if (print_only && !(output = g_dir_make_tmp("clustersim-validate-XXXXXX", &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (repeat < 3 || repeat > 100000 || !(max_late > 0)) {
    status = cli_fail(prog, "--repeat: expected an integer in [3, 100000]; --max-lateness-ms > 0");
    goto out;
  }
  if (!cli_parse_max_duration(prog, max_duration_text, &max_duration)) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  char *report_path = g_build_filename(output, "report.json", NULL);
  gboolean earlier = !print_only && g_file_test(report_path, G_FILE_TEST_EXISTS);
  g_free(report_path);
  if (earlier && !force) {
    char *m = g_strdup_printf("--output %s: holds an earlier validation; use --force to replace "
                              "it", output);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (!(sc = cli_load_scenario(prog, argv[1], &overrides))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  /* 1. The placement and batch sizes, on the scenario's own profile. */
  CsRunOptions opt;
  cs_run_options_init(&opt);
  if (!(first = cs_run(sc, &opt, &err))) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  int max_batch = 1;
  const CsPlacement *pl = cs_results_placement(first);
  for (int i = 0; pl && i < cs_placement_n_replicas(pl); i++)
    max_batch = MAX(max_batch, cs_placement_replica(pl, i)->batch);
  if (!pl)
    max_batch = 32; /* a centralized policy picks its batches as it goes */
  for (int b = 1; b <= max_batch; b++)
    g_array_append_val(batches, b);
  /* The placement's MPS shares, to measure latency-vs-share tables at. */
  for (int i = 0; pl && i < cs_placement_n_replicas(pl); i++) {
    double r = cs_placement_replica(pl, i)->mps_share;
    int pct = (int)lround(100.0 * r);
    if (r > 0 && r < 1 && pct >= 1 && pct < 100)
      g_array_append_val(shares, pct);
  }
  g_array_sort(shares, compare_int);
  for (guint i = 1; i < shares->len;)
    if (g_array_index(shares, int, i) == g_array_index(shares, int, i - 1))
      g_array_remove_index(shares, i);
    else
      i++;
  if (shares->len > 0) {
    int whole = 100;
    g_array_append_val(shares, whole);
  }
  char *eff = cs_scenario_effective_json(sc, NULL, &err);
  cJSON *doc = eff ? cJSON_Parse(eff) : NULL;
  g_free(eff);
  cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "profiles");
  like = cs_profile_set_new();
  cJSON *f;
  cJSON_ArrayForEach(f, files)
    if (cJSON_IsString(f) && !cs_profile_set_load_file(like, f->valuestring, &err))
      break;
  cJSON *cl = cJSON_GetObjectItemCaseSensitive(doc, "cluster");
  gboolean mps = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cl, "mps"));
  /* The emulated backend runs a share by the scenario's share tables. */
  const char *tables_path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cl, "interference"));
  if (!err && tables_path && !(tables = cs_interference_set_load_file(tables_path, &err)))
    g_prefix_error(&err, "cluster.interference: ");
  like_type = g_strdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cl, "gpu_type")));
  cJSON_Delete(doc);
  if (!err && !like_type)
    g_set_error(&err, CS_ERROR, CS_ERROR_INVALID,
                "%s: validate runs scenarios of one GPU type given as cluster.gpu_type (not "
                "cluster.nodes)", argv[1]);
  if (err) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  models = g_new0(char *, cs_results_n_models(first) + 1);
  for (int m = 0; m < cs_results_n_models(first); m++)
    models[m] = g_strdup(cs_results_model(first, m)->model);
  /* 2. Profile the backend. */
  gpu_type = g_strdup_printf("%s_measured", backend->name);
  if (shares->len > 0 && !backend->runs_shares) {
    fprintf(stderr, "clustersim validate: warning: the placement gives workers MPS shares, but "
            "backend %s does not run shares: the real workers use the whole GPU, the simulation "
            "caps them by its share model (docs/replay.md)\n", backend->name);
    g_array_set_size(shares, 0);
  }
  /* A placement's batch may be up to 2^20, and every size up to it is
   * profiled: refuse a validation that would take longer than its bound
   * before the backend is opened. */
  CsMeasureOptions est = { .backend = backend, .like = like, .like_type = like_type,
                           .models = (const char *const *)models,
                           .batches = (const int *)batches->data, .n_batches = (int)batches->len,
                           .repeat = repeat,
                           .pair_batch = mps && g_strv_length(models) > 1 ? MIN(8, max_batch) : 0,
                           .shares = (const int *)shares->data, .n_shares = (int)shares->len };
  double profiling_s = cs_measure_expected_s(&est);
  est.repeat = MAX(5, repeat / 3);
  est.pair_batch = 0;
  est.n_shares = 0;
  double again_s = cs_measure_expected_s(&est);
  double replay_s = cs_results_sim_time_ns(first) * 1e-9;
  double limit_s = max_duration == 0 ? CS_REPLAY_DEFAULT_MAX_DURATION_S : max_duration;
  double total_s = profiling_s + replay_s + again_s;
  if (limit_s > 0 && total_s > limit_s) {
    char *words = cs_duration_words(total_s);
    char *m = g_strdup_printf("%s: the validation would take %s of real time (profiling "
                              "%d models at %u batch sizes, %.3g s; the replay, %.3g s; "
                              "profiling again, %.3g s; estimated from the scenario's profile), "
                              "more than the limit of %g s (--max-duration-s raises it; none "
                              "lifts it)",
                              argv[1], words, (int)g_strv_length(models), batches->len,
                              profiling_s, replay_s, again_s, limit_s);
    status = cli_fail(prog, m);
    g_free(m);
    g_free(words);
    goto out;
  }
  fprintf(stderr, "validate: profiling backend %s (%d models, batch 1..%d%s%s)\n", backend->name,
          cs_results_n_models(first), max_batch, mps ? ", pairs" : "",
          shares->len > 0 ? ", shares" : "");
  /* One open backend for the profile and the replay: the replay then runs
   * on what was measured (the cpu backend: the same memory). */
  int n_gpus = cs_results_n_gpus(first);
  types = g_new(const char *, MAX(n_gpus, 1));
  for (int g = 0; g < n_gpus; g++)
    types[g] = like_type;
  CsBackendSetup setup = { .n_gpus = n_gpus, .gpu_types = types, .mps = mps,
                           .n_models = (int)g_strv_length(models),
                           .models = (const char *const *)models, .profiles = like,
                           .options = (const char *const *)backend_options,
                           .interference = tables };
  state = backend->open(&setup, NULL, &err);
  if (!state) {
    g_prefix_error(&err, "backend \"%s\": ", backend->name);
    status = cli_fail(prog, err->message);
    goto out;
  }
  CsMeasureOptions mo = { .backend_state = state, .backend = backend, .backend_options = (const char *const *)backend_options,
                          .like = like, .like_type = like_type,
                          .models = (const char *const *)models,
                          .batches = (const int *)batches->data, .n_batches = (int)batches->len,
                          .repeat = repeat,
                          .pair_batch = mps && g_strv_length(models) > 1 ? MIN(8, max_batch) : 0,
                          .gpu_type = gpu_type, .shares = (const int *)shares->data,
                          .n_shares = (int)shares->len, .like_interference = tables,
                          .wakeup = &measure_wake };
  if (!cs_measure_backend(&mo, &profile, &interference, &described, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (measure_wake.busy)
    fprintf(stderr, "%s: warning: the machine was busy while measuring the profile: a thread "
            "of normal priority woke %.3f ms late from its sleeps (p90), and the profile's "
            "latencies include late wake-ups of about that (report.md)\n", prog,
            measure_wake.p90_ms);
  prof_dir = g_build_filename(output, "profile", NULL);
  ppath = g_build_filename(prof_dir, "profile.json", NULL);
  ipath = g_build_filename(prof_dir, "interference.json", NULL);
  sim_dir = g_build_filename(output, "simulated", NULL);
  rep_dir = g_build_filename(output, "replayed", NULL);
  dec = g_build_filename(output, "decisions.jsonl", NULL);
  sim_csv = g_build_filename(sim_dir, "requests.csv", NULL);
  rep_csv = g_build_filename(rep_dir, "requests.csv", NULL);
  if (g_mkdir_with_parents(prof_dir, 0755) != 0 || g_mkdir_with_parents(sim_dir, 0755) != 0 ||
      g_mkdir_with_parents(rep_dir, 0755) != 0) {
    char *m = g_strdup_printf("%s: cannot create: %s", output, g_strerror(errno));
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  /* g_file_set_contents writes a temporary file and renames it: no partial file. */
  if (!g_file_set_contents(ppath, profile, -1, &err) ||
      (interference && !g_file_set_contents(ipath, interference, -1, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* 3. Simulate on the measured profile, same placement. */
  char *abs_p = g_canonicalize_filename(ppath, NULL), *abs_i = g_canonicalize_filename(ipath, NULL);
  vtext = validation_scenario(sc, first, abs_p, interference ? abs_i : NULL, gpu_type, &err);
  g_free(abs_p);
  g_free(abs_i);
  char *vpath = g_build_filename(output, "scenario.json", NULL);
  gboolean wrote = vtext && g_file_set_contents(vpath, vtext, -1, &err);
  g_free(vpath);
  if (!wrote || !(vsc = cs_scenario_new_from_json(vtext, "validation scenario", output, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* The plug-ins its scenario names (a plug-in's policy validates as a
   * built-in one does). */
  if (!cli_scenario_plugins(vsc)) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  cs_run_options_init(&opt);
  opt.decisions = dec;
  opt.requests_csv = sim_csv;
  g_unlink(dec); /* --force */
  if (!(sim = cs_run(vsc, &opt, &err))) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  char *summary = cs_results_to_json(sim);
  char *spath = g_build_filename(sim_dir, "summary.json", NULL);
  wrote = g_file_set_contents(spath, summary, -1, &err);
  g_free(spath);
  g_free(summary);
  if (!wrote) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* 4. Replay on the backend it measured. */
  fprintf(stderr, "validate: replaying %.1f s of decisions on backend %s\n",
          cs_results_sim_time_ns(sim) * 1e-9, backend->name);
  CsReplayOptions ro;
  cs_replay_options_init(&ro);
  ro.decisions = dec;
  ro.backend = backend;
  ro.backend_state = state;
  ro.spin_idle = !sleep_idle;
  ro.max_lateness_ms = max_late;
  ro.requests_csv = rep_csv;
  ro.max_duration_s = max_duration;
  if (!(rep = cs_replay(&ro, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  summary = cs_results_to_json(rep);
  spath = g_build_filename(rep_dir, "summary.json", NULL);
  wrote = g_file_set_contents(spath, summary, -1, &err);
  g_free(spath);
  g_free(summary);
  if (!wrote) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* The machine's speed may change under a validation (other tenants of a
   * virtual machine): the isolated latencies measured again after the
   * replay say by how much, so that a large error is not blamed on the
   * simulator when the machine moved. */
  CsMeasureOptions again = mo;
  again.wakeup = NULL;
  again.repeat = MAX(5, repeat / 3);
  again.pair_batch = 0;
  again.n_shares = 0;
  char *after = NULL, *after_i = NULL, *after_d = NULL;
  double drift = NAN;
  if (cs_measure_backend(&again, &after, &after_i, &after_d, &err))
    drift = profile_drift_pct(profile, after);
  else
    fprintf(stderr, "%s: warning: measuring the backend again after the replay failed (%s): "
            "the machine's drift is unknown\n", prog, err->message);
  if (fabs(drift) > 5.0)
    fprintf(stderr, "%s: warning: the machine's speed changed during the validation: isolated "
            "latencies measured again after the replay are %+.1f %% off those the simulation "
            "used; errors of that size are the machine's (report.md)\n", prog, drift);
  g_clear_error(&err);
  g_free(after);
  g_free(after_i);
  g_free(after_d);
  /* 5. Report and figures. */
  measured = cs_profile_set_new();
  if (!cs_profile_set_load_file(measured, ppath, &err) ||
      !report(output, sim, rep, sim_csv, rep_csv, argv[1], backend->name, drift, measured,
              gpu_type, mps, &measure_wake, md, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (print_only) {
    /* No figures: nothing would keep them. */
    char *figures = g_strrstr(md->str, "\nFigures: ");
    if (figures)
      g_string_truncate(md, (gsize)(figures - md->str) + 1);
    fputs(md->str, stdout);
    fprintf(stderr, "%s: no -o DIR: the report is printed only; -o DIR keeps it with the "
            "measured profile, both runs, the decisions and the figures\n", prog);
    cli_print_warnings(rep);
    goto out;
  }
  const char *dirs[] = { sim_dir, rep_dir };
  CsFigureSet *set = cs_figures_compare(dirs, 2, &err);
  if (!set || !cli_save_figures(prog, set, output, TRUE, FALSE)) {
    if (err)
      cli_fail(prog, err->message);
    status = 1;
  }
  cs_figure_set_free(set);
  fputs(md->str, stdout);
  cli_print_warnings(rep);
out:
  g_clear_error(&err);
  if (print_only && output)
    remove_tree(output);
  cs_results_free(first);
  cs_results_free(sim);
  cs_results_free(rep);
  cs_scenario_free(sc);
  cs_scenario_free(vsc);
  cs_profile_set_free(like);
  cs_profile_set_free(measured);
  g_strfreev(models);
  if (state)
    backend->close(state);
  cs_interference_set_free(tables);
  g_free(types);
  g_strfreev(backend_options);
  g_free(max_duration_text);
  g_array_unref(batches);
  g_array_unref(shares);
  g_string_free(md, TRUE);
  g_free(profile);
  g_free(interference);
  g_free(described);
  g_free(vtext);
  g_free(prof_dir);
  g_free(ppath);
  g_free(ipath);
  g_free(sim_dir);
  g_free(rep_dir);
  g_free(dec);
  g_free(sim_csv);
  g_free(rep_csv);
  g_free(gpu_type);
  g_free(like_type);
  g_free(backend_name);
  g_free(output);
  cli_overrides_clear(&overrides);
  g_option_context_free(ctx);
  return status;
}
