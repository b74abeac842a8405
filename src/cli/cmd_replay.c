/* clustersim replay DECISIONS --backend NAME [--backend-option KEY=VALUE]...
 *                  [--max-lateness-ms X] [--max-duration-s S|none] [--output DIR [--force]]
 *                  [--requests-csv] [--json]
 *
 * Plays a decision log (clustersim run --decisions) back in real time on an
 * execution backend and prints the per-model table of what was measured;
 * --output writes summary.json (with a "replay" section) and, asked,
 * requests.csv, in the formats of a run. Exit status 2 on bad input (log,
 * backend, options) or when the backend fails; a replay whose own
 * scheduling was late prints a warning and says "valid": false. */
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clustersim/backend.h"

int cmd_replay(int argc, char **argv)
{
  const char *prog = "clustersim replay";
  char *backend_name = NULL, *output = NULL, *max_duration_text = NULL;
  char **backend_options = NULL;
  double max_late = 1.0, max_duration = 0;
  gboolean requests_csv = FALSE, force = FALSE, json = FALSE, spin = FALSE;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name, "Execution backend (required): emulated, cpu or cuda (docs/replay.md)", "NAME" },
    { "backend-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &backend_options, "A backend setting, e.g. cores=1 (repeatable)", "KEY=VALUE" },
    { "max-lateness-ms", 0, 0, G_OPTION_ARG_DOUBLE, &max_late, "The replay is valid when the 99th percentile of its own lateness (batches sent, and started, after they were due) is at most this (default 1)", "MS" },
    { "max-duration-s", 0, 0, G_OPTION_ARG_STRING, &max_duration_text, CLI_MAX_DURATION_HELP " (the log's span)", "S" },
    { "spin", 0, 0, G_OPTION_ARG_NONE, &spin, "Executors spin between batches instead of sleeping (a core each; steadier timing on virtual machines)", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write summary.json (and requests.csv if asked) to DIR", "DIR" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace the outputs in DIR", NULL },
    { "requests-csv", 0, 0, G_OPTION_ARG_NONE, &requests_csv, "Also write DIR/requests.csv, one row per request, as a run does", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print summary.json instead of the table", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("DECISIONS");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Replays a decision log (clustersim run SCENARIO --decisions FILE) in real time: requests\n"
    "sent at their recorded times, batches formed and sent as the simulator decided, executed\n"
    "by the backend, timed with the monotonic clock. It takes as long as the simulated run\n"
    "(refused beyond --max-duration-s, an hour by default).\n"
    "The summary has the shape of a run's, with a \"replay\" section: the backend, the\n"
    "replay's own lateness and whether it stayed within --max-lateness-ms.");
  GError *err = NULL;
  int status = 0;
  CsResults *res = NULL;
  char *summary_path = NULL, *csv_path = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected a DECISIONS file (see --help)"
                                     : "expected exactly one DECISIONS file");
    goto out;
  }
  char *names = cs_backend_builtin_names();
  const CsBackend *backend = cs_backend_builtin(backend_name);
  if (!backend) {
    char *m = backend_name
                ? g_strdup_printf("--backend %s: unknown backend; this build has %s", backend_name,
                                  names)
                : g_strdup_printf("expected --backend NAME (this build has %s)", names);
    status = cli_fail(prog, m);
    g_free(m);
    g_free(names);
    goto out;
  }
  g_free(names);
  if (!(max_late > 0 && max_late < 1e6)) {
    status = cli_fail(prog, "--max-lateness-ms: expected a number of ms > 0");
    goto out;
  }
  if (!cli_parse_max_duration(prog, max_duration_text, &max_duration)) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if ((requests_csv || force) && !output) {
    status = cli_fail(prog, requests_csv ? "--requests-csv needs --output DIR"
                                         : "--force needs --output DIR");
    goto out;
  }
  if (output) {
    summary_path = g_build_filename(output, "summary.json", NULL);
    csv_path = g_build_filename(output, "requests.csv", NULL);
    if (g_file_test(output, G_FILE_TEST_EXISTS) && !g_file_test(output, G_FILE_TEST_IS_DIR)) {
      char *m = g_strdup_printf("--output %s: exists and is not a directory", output);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    if (!force && (g_file_test(summary_path, G_FILE_TEST_EXISTS) ||
                   g_file_test(csv_path, G_FILE_TEST_EXISTS))) {
      char *m = g_strdup_printf("--output %s: holds the outputs of an earlier run; use --force "
                                "to replace them, or another directory", output);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
  }
  CsReplayOptions opt;
  cs_replay_options_init(&opt);
  opt.decisions = argv[1];
  opt.backend = backend;
  opt.backend_options = (const char *const *)backend_options;
  opt.max_lateness_ms = max_late;
  opt.progress = isatty(STDERR_FILENO);
  opt.spin_idle = spin;
  opt.max_duration_s = max_duration;
  gboolean created = FALSE;
  if (output && !g_file_test(output, G_FILE_TEST_EXISTS)) {
    if (g_mkdir_with_parents(output, 0755) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", output,
                                g_strerror(errno));
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    created = TRUE;
  }
  if (output && requests_csv)
    opt.requests_csv = csv_path;
  else if (output)
    g_unlink(csv_path); /* --force: an earlier requests.csv is not this replay's */
  res = cs_replay(&opt, &err);
  char *summary = res ? cs_results_to_json(res) : NULL;
  if (res && output && !g_file_set_contents(summary_path, summary, -1, &err)) {
    cs_results_free(res);
    res = NULL;
    if (opt.requests_csv)
      g_unlink(csv_path);
  }
  if (!res) {
    status = cli_fail(prog, err->message);
    if (created)
      g_rmdir(output);
    g_free(summary);
    goto out;
  }
  if (json)
    fputs(summary, stdout);
  else
    cs_results_print_table(res, stdout);
  g_free(summary);
  cli_print_warnings(res);
out:
  g_clear_error(&err);
  cs_results_free(res);
  g_free(backend_name);
  g_free(output);
  g_free(max_duration_text);
  g_free(summary_path);
  g_free(csv_path);
  g_strfreev(backend_options);
  g_option_context_free(ctx);
  return status;
}
