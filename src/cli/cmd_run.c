/* clustersim run SCENARIO [--seed N] [--output DIR [--force]] [--requests-csv] [--json]
 *                         [--decisions FILE]
 *                         [--set PATH=VALUE ...] [--unset PATH ...]
 *                         [--trace FILE [--trace-window A:B]]
 *
 * Outputs never mix runs: a DIR that holds any file of the output set is
 * refused unless --force, which replaces the whole set (files of the set this
 * run does not write are removed too). Every file is first written under a
 * temporary name and renamed only when all of them are complete, with
 * SIGINT/SIGTERM blocked while that happens; a signal during the simulation
 * removes the temporary files (and DIR if this run created it) and exits
 * 128 + the signal number. */
#include <errno.h>
#include <math.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/output_guard.h"

/* The output set, in the order it is listed to users. */
static const char *const output_set[] = { "summary.json",        "scenario.json",
                                          "gpus_over_time.csv",  "gpu_timeseries.csv",
                                          "worker_latency.csv",  "models_over_time.csv",
                                          "cluster_over_time.csv", "llm_over_time.csv",
                                          "requests.csv",          NULL };
enum { N_OUTPUTS = 9 };
#define TMP_SUFFIX ".new"

/* What a signal handler removes: the temporary files (and their ".partial"
 * forms, which cs_run streams to) and the directory if this run created it.
 * Filled before the handlers are installed; read only in the handler. */
static char *cleanup_paths[2 * N_OUTPUTS + 1];
static char *cleanup_dir;

static void on_signal(int sig)
{
  for (int i = 0; cleanup_paths[i]; i++)
    unlink(cleanup_paths[i]);
  if (cleanup_dir)
    rmdir(cleanup_dir);
  _exit(128 + sig);
}

static void install_cleanup(const char *dir, gboolean created)
{
  int k = 0;
  for (int i = 0; output_set[i]; i++) {
    cleanup_paths[k++] = g_strconcat(dir, "/", output_set[i], TMP_SUFFIX, NULL);
    cleanup_paths[k++] = g_strconcat(dir, "/", output_set[i], TMP_SUFFIX ".partial", NULL);
  }
  cleanup_paths[k] = NULL;
  cleanup_dir = created ? g_strdup(dir) : NULL;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static void remove_temporaries(void)
{
  for (int i = 0; cleanup_paths[i]; i++)
    g_unlink(cleanup_paths[i]);
}

static void free_cleanup(void)
{
  for (int i = 0; cleanup_paths[i]; i++)
    g_clear_pointer(&cleanup_paths[i], g_free);
  g_clear_pointer(&cleanup_dir, g_free);
}

static char *out_path(const char *dir, const char *name, gboolean tmp)
{
  return g_strconcat(dir, "/", name, tmp ? TMP_SUFFIX : "", NULL);
}

/* Returns a comma-separated list of the output-set files already in dir
 * (g_free it), or NULL when there are none. */
static char *existing_outputs(const char *dir)
{
  GString *list = g_string_new(NULL);
  for (int i = 0; output_set[i]; i++) {
    char *p = out_path(dir, output_set[i], FALSE);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
      g_string_append_printf(list, "%s%s", list->len ? ", " : "", output_set[i]);
    g_free(p);
  }
  return g_string_free(list, list->len == 0);
}

/* Writes every output of the run under temporary names. Returns FALSE with
 * error set if one cannot be written (the caller removes the temporaries). */
static gboolean write_temporaries(const CsResults *res, const char *dir, GError **error)
{
  char *summary = cs_results_to_json(res);
  char *spath = out_path(dir, "summary.json", TRUE);
  char *epath = out_path(dir, "scenario.json", TRUE);
  char *tpath = out_path(dir, "gpus_over_time.csv", TRUE);
  char *gpath = out_path(dir, "gpu_timeseries.csv", TRUE);
  char *wpath = out_path(dir, "worker_latency.csv", TRUE);
  char *mpath = out_path(dir, "models_over_time.csv", TRUE);
  char *cpath = out_path(dir, "cluster_over_time.csv", TRUE);
  gboolean ok = g_file_set_contents(spath, summary, -1, error) &&
                g_file_set_contents(epath, cs_results_effective_scenario(res), -1, error) &&
                cs_results_write_gpu_timeseries(res, tpath, error) &&
                cs_results_write_gpu_detail(res, gpath, wpath, error) &&
                cs_results_write_model_timeseries(res, mpath, cpath, error);
  if (ok && cs_results_n_llm(res) > 0) {
    char *lpath = out_path(dir, "llm_over_time.csv", TRUE);
    ok = cs_results_write_llm_timeseries(res, lpath, error);
    g_free(lpath);
  }
  g_free(mpath);
  g_free(cpath);
  g_free(summary);
  g_free(spath);
  g_free(epath);
  g_free(tpath);
  g_free(gpath);
  g_free(wpath);
  return ok;
}

/* Replaces the output set in dir with the temporaries, signals held so
 * that the set is never left half replaced. Files of the set that this run
 * did not write (an earlier requests.csv) are removed, and so are the figures
 * clustersim plot drew from the outputs replaced. */
static gboolean commit_outputs(const char *dir, GError **error)
{
  /* Held for every thread (a placement search leaves idle pool threads
   * that would take the signal); the cleanup handler runs after. */
  cs_signals_hold();
  gboolean ok = TRUE;
  for (int i = 0; output_set[i] && ok; i++) {
    char *tmp = out_path(dir, output_set[i], TRUE), *final = out_path(dir, output_set[i], FALSE);
    if (g_file_test(tmp, G_FILE_TEST_EXISTS)) {
      if (g_rename(tmp, final) != 0) {
        g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", final,
                    g_strerror(errno));
        ok = FALSE;
      }
    } else {
      g_unlink(final);
    }
    g_free(tmp);
    g_free(final);
  }
  if (ok)
    cs_figure_dir_clear(dir);
  cs_signals_release();
  return ok;
}

int cmd_run(int argc, char **argv)
{
  const char *prog = "clustersim run";
  char *seed_text = NULL, *output = NULL, *trace = NULL, *trace_window = NULL;
  char *decisions = NULL;
  char *max_requests_text = NULL;
  CliOverrides overrides = { 0 };
  gboolean requests_csv = FALSE, force = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text, "Seed for every random stream (overrides the scenario's)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write summary.json, scenario.json (the effective scenario), gpus_over_time.csv, gpu_timeseries.csv, worker_latency.csv, models_over_time.csv, cluster_over_time.csv (llm_over_time.csv with LLM deployments, requests.csv if asked) to DIR", "DIR" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace the outputs of an earlier run in DIR (the whole set)", NULL },
    { "requests-csv", 0, 0, G_OPTION_ARG_NONE, &requests_csv, "Also write DIR/requests.csv, one row per request", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the summary (as summary.json holds it) instead of the table", NULL },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &trace, "Write the run's timeline to FILE as Chrome trace event JSON (open it in ui.perfetto.dev or chrome://tracing)", "FILE" },
    { "trace-window", 0, 0, G_OPTION_ARG_STRING, &trace_window, "Keep only the timeline between A and B seconds of simulated time", "A:B" },
    { "max-requests", 0, 0, G_OPTION_ARG_STRING, &max_requests_text, CLI_MAX_REQUESTS_HELP, "N" },
    { "decisions", 0, 0, G_OPTION_ARG_FILENAME, &decisions, "Write the run's decisions to FILE (JSON lines: every request, every batch with its requests, GPU, worker and share; docs/scenario.md, \"Decision log\")", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = cli_context_new("SCENARIO - simulate a scenario", entries, &overrides);
  g_option_context_set_summary(ctx,
    "Simulates the scenario file and prints a per-model table: offered rate, throughput and\n"
    "goodput (results inside the measurement window, within SLO for goodput), the placement\n"
    "policy's expected goodput and how far goodput falls short of it (gap_%), bad rate,\n"
    "latency percentiles, mean batch size and the measured requests dropped, unserved,\n"
    "failed and late. Warnings go to stderr (plan_gap: a model more than\n"
    "warnings.plan_gap, default 10 %, short of its expected goodput). With\n"
    "--output DIR it writes DIR/summary.json (deterministic: same scenario and seed, same\n"
    "bytes) and DIR/scenario.json, the effective scenario that reproduces it; a DIR holding\n"
    "an earlier run's outputs is refused unless --force.");
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  CsResults *res = NULL;
  char *csv_path = NULL;
  gboolean created_dir = FALSE;
  gint64 seed = -1, max_requests = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected a SCENARIO file (see --help)"
                                     : "expected exactly one SCENARIO file");
    goto out;
  }
  if (!cli_parse_seed(prog, seed_text, &seed) ||
      !cli_parse_max_requests(prog, max_requests_text, &max_requests) ||
      !(sc = cli_load_scenario(prog, argv[1], &overrides))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (requests_csv && !output) {
    status = cli_fail(prog, "--requests-csv needs --output DIR");
    goto out;
  }
  if (force && !output && !trace && !decisions) {
    status = cli_fail(prog, "--force needs --output DIR, --trace FILE or --decisions FILE");
    goto out;
  }
  double window_from = 0.0, window_to = 0.0;
  if (trace_window && !trace) {
    status = cli_fail(prog, "--trace-window needs --trace FILE");
    goto out;
  }
  if (trace_window) {
    char *end = NULL;
    window_from = g_ascii_strtod(trace_window, &end);
    gboolean ok = end != trace_window && *end == ':';
    const char *second = ok ? end + 1 : NULL;
    if (ok) {
      window_to = g_ascii_strtod(second, &end);
      ok = end != second && *end == '\0' && isfinite(window_from) && isfinite(window_to) &&
           window_from >= 0 && window_to > window_from;
    }
    if (!ok) {
      char *m = g_strdup_printf("--trace-window %s: expected A:B, seconds of simulated time "
                                "with 0 <= A < B",
                                trace_window);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
  }
  if (trace && g_file_test(trace, G_FILE_TEST_EXISTS) && !force) {
    char *m = g_strdup_printf("--trace %s: exists; use --force to replace it, or another file",
                              trace);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (decisions && g_file_test(decisions, G_FILE_TEST_EXISTS) && !force) {
    char *m = g_strdup_printf("--decisions %s: exists; use --force to replace it, or another "
                              "file", decisions);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (output) {
    if (g_file_test(output, G_FILE_TEST_EXISTS) && !g_file_test(output, G_FILE_TEST_IS_DIR)) {
      char *m = g_strdup_printf("--output %s: exists and is not a directory", output);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    char *existing = existing_outputs(output);
    if (existing && !force) {
      char *m = g_strdup_printf("--output %s: holds the outputs of an earlier run (%s); use "
                                "--force to replace them all, or another directory",
                                output, existing);
      status = cli_fail(prog, m);
      g_free(m);
      g_free(existing);
      goto out;
    }
    g_free(existing);
  }
  /* Validate before creating the output directory, so bad input leaves no
   * trace. Without one there is nothing to create: cs_run compiles the
   * scenario before it opens any file, and fails the same way (compiling
   * twice cost a millisecond, a sixtieth of a million-request run). */
  if (output && !cs_scenario_validate(sc, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = seed;
  opt.max_requests = max_requests;
  opt.trace_json = trace;
  opt.timeseries = output != NULL; /* the output set holds the time series */
  opt.decisions = decisions;
  opt.trace_from_s = window_from;
  opt.trace_to_s = window_to;
  CliProgress progress;
  cli_progress_install(&progress, &opt);
  if (output) {
    created_dir = !g_file_test(output, G_FILE_TEST_EXISTS);
    if (g_mkdir_with_parents(output, 0755) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", output,
                                g_strerror(errno));
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    install_cleanup(output, created_dir);
    csv_path = out_path(output, "requests.csv", TRUE);
    if (requests_csv || cs_scenario_requests_csv_wanted(sc))
      opt.requests_csv = csv_path;
  }
  res = cs_run(sc, &opt, &err);
  cli_progress_done(&progress);
  if (res && output && (!write_temporaries(res, output, &err) || !commit_outputs(output, &err))) {
    cs_results_free(res);
    res = NULL;
  }
  if (!res) {
    status = cli_fail("clustersim", err->message);
    if (output) {
      remove_temporaries();
      if (created_dir)
        g_rmdir(output); /* leave nothing behind; only succeeds if empty */
    }
    goto out;
  }
  if (json) {
    char *summary = cs_results_to_json(res);
    fputs(summary, stdout);
    g_free(summary);
  } else {
    cs_results_print_table(res, stdout);
  }
  cli_print_warnings(res);
out:
  free_cleanup();
  g_clear_error(&err);
  cs_results_free(res);
  cs_scenario_free(sc);
  g_free(csv_path);
  g_free(output);
  g_free(trace);
  g_free(decisions);
  g_free(trace_window);
  g_free(seed_text);
  g_free(max_requests_text);
  cli_overrides_clear(&overrides);
  g_option_context_free(ctx);
  return status;
}
