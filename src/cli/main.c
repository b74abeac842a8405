/* clustersim: the command-line front end of libclustersim.
 *
 *   clustersim run SCENARIO [--seed N] [--output DIR] [--requests-csv] [--set PATH=VALUE ...]
 *
 * Exit status: 0 on success, 2 on bad input (scenario, profile, flags) with a
 * message naming the file, the JSON path and what was expected; nothing is
 * written when a run fails. */
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

#define EXIT_BAD_INPUT 2

static const char *const usage_text =
  "Usage: clustersim COMMAND [OPTIONS]\n"
  "\n"
  "Deterministic discrete-event simulator of ML inference scheduling on GPU clusters.\n"
  "\n"
  "Commands:\n"
  "  run SCENARIO    simulate a scenario file, print the per-model table, write results\n"
  "\n"
  "Options:\n"
  "  -h, --help      show this help (COMMAND --help for a command's options)\n"
  "  --version       print the version\n";

static int fail(const char *prog, const char *msg)
{
  fprintf(stderr, "%s: %s\n", prog, msg);
  return EXIT_BAD_INPUT;
}

/* Progress on a terminal only: a single line rewritten in place. */
typedef struct {
  gint64 last_us;
  gboolean shown;
} Progress;

static void on_progress(double fraction, int64_t sim_time_ns, void *user_data)
{
  Progress *p = user_data;
  gint64 now = g_get_monotonic_time();
  if (now - p->last_us < 250000)
    return;
  p->last_us = now;
  p->shown = TRUE;
  fprintf(stderr, "\rsimulating: %5.1f %% of requests generated, %.1f s simulated", 100.0 * fraction,
          sim_time_ns * 1e-9);
  fflush(stderr);
}

static gboolean write_file_atomic(const char *path, const char *text, GError **error)
{
  /* g_file_set_contents writes a temporary file and renames it. */
  return g_file_set_contents(path, text, -1, error);
}

static int cmd_run(int argc, char **argv)
{
  char *seed_text = NULL;
  char *output = NULL;
  char **sets = NULL;
  gboolean requests_csv = FALSE;
  GOptionEntry entries[] = {
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text, "Seed for every random stream (overrides the scenario's)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write summary.json (and requests.csv if asked) to DIR", "DIR" },
    { "requests-csv", 0, 0, G_OPTION_ARG_NONE, &requests_csv, "Also write DIR/requests.csv, one row per request", NULL },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario field, e.g. clients[0].rate=200 (repeatable)", "PATH=VALUE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("SCENARIO - simulate a scenario");
  g_option_context_set_summary(ctx,
    "Simulates the scenario file and prints a per-model table: offered, submitted, throughput,\n"
    "goodput (requests within SLO per second), the placement policy's expected goodput, bad\n"
    "rate, latency percentiles, mean batch size and failed requests. With --output DIR it\n"
    "writes DIR/summary.json (deterministic: same scenario and seed, same bytes).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  CsResults *res = NULL;
  char *csv_path = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = fail("clustersim run", err->message);
    goto out;
  }
  if (argc != 2) {
    status = fail("clustersim run", argc < 2 ? "expected a SCENARIO file (see --help)"
                                               : "expected exactly one SCENARIO file");
    goto out;
  }
  gint64 seed = -1;
  if (seed_text) {
    guint64 v;
    if (!g_ascii_string_to_unsigned(seed_text, 10, 0, G_MAXINT64, &v, NULL)) {
      char *m = g_strdup_printf("--seed %s: expected an integer >= 0", seed_text);
      status = fail("clustersim run", m);
      g_free(m);
      goto out;
    }
    seed = (gint64)v;
  }
  sc = cs_scenario_load(argv[1], &err);
  if (!sc) {
    status = fail("clustersim", err->message);
    goto out;
  }
  for (int i = 0; sets && sets[i]; i++) {
    char *eq = strchr(sets[i], '=');
    if (!eq) {
      char *m = g_strdup_printf("--set %s: expected PATH=VALUE", sets[i]);
      status = fail("clustersim run", m);
      g_free(m);
      goto out;
    }
    *eq = '\0';
    if (!cs_scenario_set(sc, sets[i], eq + 1, &err)) {
      status = fail("clustersim run", err->message);
      goto out;
    }
  }
  if (!cs_scenario_validate(sc, &err)) {
    status = fail("clustersim", err->message);
    goto out;
  }
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = seed;
  Progress progress = { .last_us = g_get_monotonic_time() };
  if (isatty(STDERR_FILENO)) {
    opt.on_progress = on_progress;
    opt.user_data = &progress;
  }
  if (requests_csv && !output) {
    status = fail("clustersim run", "--requests-csv needs --output DIR");
    goto out;
  }
  gboolean created_dir = FALSE;
  if (output) {
    created_dir = !g_file_test(output, G_FILE_TEST_EXISTS);
    if (g_mkdir_with_parents(output, 0755) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", output,
                                g_strerror(errno));
      status = fail("clustersim run", m);
      g_free(m);
      goto out;
    }
    csv_path = g_build_filename(output, "requests.csv", NULL);
    /* The scenario may ask for the CSV itself (outputs.requests_csv). */
    if (requests_csv || cs_scenario_requests_csv_wanted(sc))
      opt.requests_csv = csv_path;
  }
  res = cs_run(sc, &opt, &err);
  if (progress.shown)
    fputs("\r\033[K", stderr);
  if (!res) {
    status = fail("clustersim", err->message);
    if (created_dir)
      g_rmdir(output); /* leave nothing behind; only succeeds if empty */
    goto out;
  }
  if (output) {
    char *summary = cs_results_to_json(res);
    char *path = g_build_filename(output, "summary.json", NULL);
    if (!write_file_atomic(path, summary, &err)) {
      status = fail("clustersim", err->message);
      if (opt.requests_csv)
        g_unlink(opt.requests_csv);
      if (created_dir)
        g_rmdir(output);
    }
    g_free(path);
    g_free(summary);
    if (status)
      goto out;
  }
  cs_results_print_table(res, stdout);
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

int main(int argc, char **argv)
{
  if (argc < 2) {
    fputs(usage_text, stderr);
    return EXIT_BAD_INPUT;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("clustersim %s\n", cs_version());
    return 0;
  }
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  fprintf(stderr, "clustersim: unknown command \"%s\"\n\n%s", cmd, usage_text);
  return EXIT_BAD_INPUT;
}
