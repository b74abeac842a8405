/* clustersim run SCENARIO [--seed N] [--output DIR] [--requests-csv] [--set PATH=VALUE ...] */
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "cli.h"

/* Writes every output file of a run into dir; on failure removes what it wrote. */
static gboolean write_outputs(const CsResults *res, const char *dir, GError **error)
{
  char *summary = cs_results_to_json(res);
  char *spath = g_build_filename(dir, "summary.json", NULL);
  char *tpath = g_build_filename(dir, "gpus_over_time.csv", NULL);
  char *gpath = g_build_filename(dir, "gpu_timeseries.csv", NULL);
  char *wpath = g_build_filename(dir, "worker_latency.csv", NULL);
  gboolean ok = g_file_set_contents(spath, summary, -1, error) &&
                cs_results_write_gpu_timeseries(res, tpath, error) &&
                cs_results_write_gpu_detail(res, gpath, wpath, error);
  if (!ok) {
    g_unlink(spath);
    g_unlink(tpath);
    g_unlink(gpath);
    g_unlink(wpath);
  }
  g_free(gpath);
  g_free(wpath);
  g_free(summary);
  g_free(spath);
  g_free(tpath);
  return ok;
}

int cmd_run(int argc, char **argv)
{
  const char *prog = "clustersim run";
  char *seed_text = NULL, *output = NULL;
  char **sets = NULL;
  gboolean requests_csv = FALSE;
  GOptionEntry entries[] = {
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text, "Seed for every random stream (overrides the scenario's)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write summary.json, gpus_over_time.csv, gpu_timeseries.csv, worker_latency.csv (and requests.csv if asked) to DIR", "DIR" },
    { "requests-csv", 0, 0, G_OPTION_ARG_NONE, &requests_csv, "Also write DIR/requests.csv, one row per request", NULL },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario field, e.g. clients[0].rate=200 (repeatable)", "PATH=VALUE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("SCENARIO - simulate a scenario");
  g_option_context_set_summary(ctx,
    "Simulates the scenario file and prints a per-model table: offered, submitted, throughput,\n"
    "goodput (requests within SLO per second), the placement policy's expected goodput, bad\n"
    "rate, latency percentiles, mean batch size and failed requests. With --output DIR it\n"
    "writes DIR/summary.json (deterministic: same scenario and seed, same bytes) and\n"
    "DIR/gpus_over_time.csv.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  CsResults *res = NULL;
  char *csv_path = NULL;
  gboolean created_dir = FALSE;
  gint64 seed = -1;
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
      !(sc = cli_load_scenario(prog, argv[1], sets))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (requests_csv && !output) {
    status = cli_fail(prog, "--requests-csv needs --output DIR");
    goto out;
  }
  /* Validate before creating anything, so bad input leaves no trace. */
  if (!cs_scenario_validate(sc, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = seed;
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
    csv_path = g_build_filename(output, "requests.csv", NULL);
    if (requests_csv || cs_scenario_requests_csv_wanted(sc))
      opt.requests_csv = csv_path;
  }
  res = cs_run(sc, &opt, &err);
  cli_progress_done(&progress);
  if (res && output && !write_outputs(res, output, &err)) {
    if (opt.requests_csv)
      g_unlink(opt.requests_csv);
    cs_results_free(res);
    res = NULL;
  }
  if (!res) {
    status = cli_fail("clustersim", err->message);
    if (created_dir)
      g_rmdir(output); /* leave nothing behind; only succeeds if empty */
    goto out;
  }
  cs_results_print_table(res, stdout);
  cli_print_warnings(res);
out:
  g_clear_error(&err);
  cs_results_free(res);
  cs_scenario_free(sc);
  g_free(csv_path);
  g_free(output);
  g_free(seed_text);
  g_strfreev(sets);
  g_option_context_free(ctx);
  return status;
}
