/* clustersim sweep EXPERIMENT [-j N] [-o DIR [--force]] [--shard K/N] [--metric M] [--model M]
 *                             [--list] [--no-render]
 * clustersim sweep merge [-o DIR [--force]] [--metric M] [--model M] [--no-render] SHARDDIR...
 * clustersim sweep plot DIR [--metric M] [--model M] [--no-render]
 *
 * Runs an experiment's grid (docs/experiments.md, "Sweeps"), prints the
 * comparison table and writes runs.csv, aggregate.csv, aggregate.json,
 * sweep.json and the figures (DIR/figures, drawn from aggregate.csv: "sweep
 * plot" redraws them from an output directory); a shard writes its runs.csv
 * and shard.json, and merge turns shards into exactly the unsharded outputs.
 * Exit status: 0, 1 when some run was invalid (the others ran and are
 * written) or the figures could not be made, 2 on bad input (nothing is
 * written). gnuplot missing is a warning: the figures' data and scripts are
 * written, and the status stays 0. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "experiment/experiment.h"
#include "experiment/sweep.h"
#include "experiment/sweep_aggregate.h"
#include "common/output_guard.h"
#include "figures/figures.h"

#define EXIT_SOME_INVALID 1

typedef struct {
  gint64 start_us, last_us;
  gboolean shown;
} Progress;

/* On a terminal only (cmd_sweep): runs done, elapsed and the time left, at
 * most four times a second, over itself (\r, then erase to the end). */
static void on_progress(int done, int total, void *data)
{
  Progress *p = data;
  gint64 now = g_get_monotonic_time();
  if (done < total && now - p->last_us < 250000)
    return;
  p->last_us = now;
  p->shown = TRUE;
  char *line = cs_sweep_progress_text(done, total, (double)(now - p->start_us) * 1e-6);
  fprintf(stderr, "\r%s\033[K", line);
  g_free(line);
  fflush(stderr);
}

/* Parses "K/N" with 1 <= K <= N. */
static gboolean parse_shard(const char *text, int *k, int *n)
{
  char **parts = g_strsplit(text, "/", -1);
  guint64 a = 0, b = 0;
  gboolean ok = g_strv_length(parts) == 2 &&
                g_ascii_string_to_unsigned(parts[0], 10, 1, G_MAXINT, &a, NULL) &&
                g_ascii_string_to_unsigned(parts[1], 10, 1, G_MAXINT, &b, NULL) && a <= b;
  g_strfreev(parts);
  *k = (int)a;
  *n = (int)b;
  return ok;
}

/* Checks that --metric (NULL: not given) names a metric some runs.csv has;
 * prints the error with the list and returns FALSE when it does not. */
static gboolean metric_option(const char *prog, const char *name)
{
  if (!name || cs_runs_is_metric_name(name))
    return TRUE;
  char *list = cs_runs_metric_names();
  char *msg = g_strdup_printf("--metric %s: not a metric of runs.csv (%s)", name, list);
  cli_fail(prog, msg);
  g_free(msg);
  g_free(list);
  return FALSE;
}

/* The index of --metric in table t (default: max_load_rps in a
 * goodput-search sweep, else goodput_rps); prints the error and returns -1
 * when t has no such metric. */
static int table_metric(const char *prog, const CsRunsTable *t, const char *name)
{
  const char *m = name ? name : t->search ? "max_load_rps" : "goodput_rps";
  int i = cs_runs_metric_index(t, m);
  if (i < 0) {
    char *msg = g_strdup_printf("--metric %s: only a goodput-search sweep (an experiment with "
                                "\"search\") has it", m);
    cli_fail(prog, msg);
    g_free(msg);
  }
  return i;
}

/* Locks output directory dir for this process (output_guard.h), naming it
 * as the option does in messages. */
static CsDirLock *lock_output(const char *dir, GError **error)
{
  char *what = g_strdup_printf("--output %s", dir);
  CsDirLock *lock = cs_dir_lock_acquire(dir, what, error);
  g_free(what);
  return lock;
}

/* Draws the figures of the sweep output in dir. Returns FALSE after
 * printing why when they could not be made. */
static gboolean figures(const char *prog, const char *dir, const char *metric,
                        const char *model, gboolean render, gboolean list)
{
  GError *err = NULL;
  CsFigureSet *set = cs_figures_sweep(dir, metric, model, &err);
  if (!set) {
    fprintf(stderr, "%s: figures: %s\n", prog, err->message);
    g_error_free(err);
    return FALSE;
  }
  gboolean ok = cli_save_figures(prog, set, dir, render, list);
  cs_figure_set_free(set);
  return ok;
}

/* Writes the unsharded outputs and figures (when dir is set), prints the
 * invalid runs and the comparison table of metric_name (NULL: the default).
 * SIGINT and SIGTERM wait from the first file written to the last figure
 * installed, so that an interrupt leaves the old set or the new one, the
 * figures with their tables; the lock of dir is released before they act.
 * Returns the exit status. */
static int finish_set(const char *prog, const CsRunsTable *t, const cJSON *describe,
                      const char *dir, const char *metric_name, const char *model,
                      gboolean render);

static int finish(const char *prog, const CsRunsTable *t, const cJSON *describe, const char *dir,
                  const char *metric_name, const char *model, gboolean render, CsDirLock **lock)
{
  cs_signals_hold();
  int status = finish_set(prog, t, describe, dir, metric_name, model, render);
  cs_dir_lock_release(*lock);
  *lock = NULL;
  cs_signals_release();
  return status;
}

static int finish_set(const char *prog, const CsRunsTable *t, const cJSON *describe,
                      const char *dir, const char *metric_name, const char *model,
                      gboolean render)
{
  int metric = table_metric(prog, t, metric_name);
  if (metric < 0)
    return EXIT_BAD_INPUT;
  if (dir) {
    const char *names[8];
    char *texts[8];
    int n = cs_sweep_outputs(t, describe, names, texts);
    GError *err = NULL;
    gboolean ok = cs_sweep_write_outputs(dir, names, (const char *const *)texts, n, &err);
    for (int i = 0; i < n; i++)
      g_free(texts[i]);
    if (!ok) {
      cli_fail(prog, err->message);
      g_error_free(err);
      return EXIT_BAD_INPUT;
    }
  }
  CsAggregate *a = cs_aggregate_new(t);
  const cJSON *search = cJSON_GetObjectItemCaseSensitive(describe, "search");
  const cJSON *criterion = cJSON_GetObjectItemCaseSensitive(search, "criterion");
  const cJSON *bound = cJSON_GetObjectItemCaseSensitive(search, "bad_rate_bound");
  if (cJSON_IsString(criterion) && strcmp(criterion->valuestring, "p99") == 0)
    printf("goodput search: each run is the highest load with every model's p99 latency <= "
           "its SLO\n");
  else if (cJSON_IsString(criterion) && cJSON_IsNumber(bound))
    printf("goodput search: each run is the highest load with every model's bad rate <= %g\n",
           bound->valuedouble);
  cs_aggregate_print_table(a, metric, model, stdout);
  cs_aggregate_free(a);
  fflush(stdout);
  gboolean drawn =
    !dir || figures(prog, dir, cs_runs_metric_name(t, metric), model, render, FALSE);
  cs_sweep_print_invalid(t, prog, stderr);
  int bad = cs_sweep_n_invalid(t);
  if (bad) {
    fprintf(stderr, "%s: %d run%s invalid (status \"invalid\" in runs.csv); the others ran\n",
            prog, bad, bad == 1 ? "" : "s");
    return EXIT_SOME_INVALID;
  }
  return drawn ? 0 : EXIT_SOME_INVALID;
}

static void print_list(const CsExperiment *e)
{
  printf("run_id\tvariant");
  for (int a = 0; a < cs_experiment_n_axes(e); a++)
    printf("\t%s", cs_experiment_axis_name(e, a));
  printf("\tseed\n");
  for (int r = 0; r < cs_experiment_n_runs(e); r++) {
    printf("%d\t%s", r, cs_experiment_run_variant(e, r));
    for (int a = 0; a < cs_experiment_n_axes(e); a++)
      printf("\t%s", cs_experiment_run_label(e, r, a));
    printf("\t%" G_GINT64_FORMAT "\n", cs_experiment_run_seed(e, r));
  }
}

static int cmd_merge(int argc, char **argv)
{
  const char *prog = "clustersim sweep merge";
  char *output = NULL, *metric_name = NULL, *model = NULL;
  gboolean force = FALSE, no_render = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the merged outputs (as the unsharded sweep writes them) to DIR", "DIR" },
    { "no-render", 0, 0, G_OPTION_ARG_NONE, &no_render, "Write the figures' .dat and .gp files only; do not run gnuplot", NULL },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace the outputs of an earlier sweep in DIR", NULL },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric_name, "Metric of the printed table (default goodput_rps; max_load_rps in a goodput-search sweep)", "M" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &model, "Model of the printed table (default total)", "NAME" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("SHARDDIR... - merge the shards of a sweep");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Checks that the shard directories (written by clustersim sweep --shard K/N -o DIR) come\n"
    "from the same experiment, base scenario and version and hold every run exactly once,\n"
    "then writes exactly what the unsharded sweep writes and prints its table.");
  GError *err = NULL;
  int status = 0;
  CsRunsTable *t = NULL;
  cJSON *describe = NULL;
  CsDirLock *lock = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
  } else if (argc < 2) {
    status = cli_fail(prog, "expected one or more SHARDDIR (see --help)");
  } else if (force && !output) {
    status = cli_fail(prog, "--force needs --output DIR");
  } else if (!metric_option(prog, metric_name)) {
    status = EXIT_BAD_INPUT;
  } else if (output && !cs_sweep_check_output_dir(output, force, &err)) {
    status = cli_fail(prog, err->message);
  } else if (!(t = cs_sweep_merge((const char *const *)argv + 1, argc - 1, &describe, &err))) {
    status = cli_fail(prog, err->message);
  } else if (output && !(lock = lock_output(output, &err))) {
    status = cli_fail(prog, err->message);
  } else if (output && !cs_sweep_check_output_dir(output, force, &err)) {
    /* Checked again under the lock: another merge may have written it. */
    status = cli_fail(prog, err->message);
  } else {
    status = finish(prog, t, describe, output, metric_name, model ? model : "total", !no_render,
                    &lock);
  }
  cs_dir_lock_release(lock);
  g_clear_error(&err);
  cs_runs_table_free(t);
  cJSON_Delete(describe);
  g_free(output);
  g_free(metric_name);
  g_free(model);
  g_option_context_free(ctx);
  return status;
}

/* A copy of argv with "-jN" split into "-j" "N", as make and parallel take
 * it (GOption reads "-j2" as the flags -j and -2). g_strfreev it. */
static char **split_jobs_flag(int argc, char **argv, int *new_argc)
{
  GPtrArray *a = g_ptr_array_new();
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "-j", 2) == 0 && g_ascii_isdigit(argv[i][2])) {
      g_ptr_array_add(a, g_strdup("-j"));
      g_ptr_array_add(a, g_strdup(argv[i] + 2));
    } else {
      g_ptr_array_add(a, g_strdup(argv[i]));
    }
  }
  *new_argc = (int)a->len;
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

static int cmd_sweep_plot(int argc, char **argv)
{
  const char *prog = "clustersim sweep plot";
  char *metric_name = NULL, *model = NULL;
  gboolean no_render = FALSE;
  GOptionEntry entries[] = {
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric_name, "Metric of the figures besides the p99 latency (default goodput_rps; max_load_rps in a goodput-search sweep)", "M" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &model, "Model of the figures (default total)", "NAME" },
    { "no-render", 0, 0, G_OPTION_ARG_NONE, &no_render, "Write the figures' .dat and .gp files only; do not run gnuplot", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("DIR - redraw the figures of a sweep's output");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Reads DIR/aggregate.csv and DIR/sweep.json (written by clustersim sweep -o DIR or sweep\n"
    "merge) and rewrites DIR/figures: the metric and the p99 latency against each numeric axis\n"
    "(else the first axis), a series per variant with its 95 % confidence interval. Figures of\n"
    "other metrics and models drawn there before stay.");
  GError *err = NULL;
  int status = 0;
  CsDirLock *lock = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
  } else if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected a sweep's output DIR (clustersim sweep -o DIR)"
                                     : "expected exactly one DIR");
  } else if (!metric_option(prog, metric_name)) {
    status = EXIT_BAD_INPUT;
  } else if (!g_file_test(argv[1], G_FILE_TEST_IS_DIR)) {
    /* Missing and "not a directory" are different mistakes. */
    char *m = g_strdup_printf("%s: %s (expected the -o DIR of clustersim sweep)", argv[1],
                              g_file_test(argv[1], G_FILE_TEST_EXISTS) ? "not a directory"
                                                                       : "not found");
    status = cli_fail(prog, m);
    g_free(m);
  } else if (!(lock = cs_dir_lock_acquire(argv[1], argv[1], &err))) {
    status = cli_fail(prog, err->message);
  } else {
    CsFigureSet *set = cs_figures_sweep(argv[1], metric_name, model ? model : "total", &err);
    if (set)
      set->keep_others = TRUE; /* the figures of other metrics and models stay */
    if (!set)
      status = cli_fail(prog, err->message);
    else
      status = cli_save_figures(prog, set, argv[1], !no_render, TRUE) ? 0 : EXIT_SOME_INVALID;
    cs_figure_set_free(set);
  }
  cs_dir_lock_release(lock);
  g_clear_error(&err);
  g_free(metric_name);
  g_free(model);
  g_option_context_free(ctx);
  return status;
}

static int sweep_main(int argc, char **argv);

int cmd_sweep(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "merge") == 0)
    return cmd_merge(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "plot") == 0)
    return cmd_sweep_plot(argc - 1, argv + 1);
  int n;
  char **args = split_jobs_flag(argc, argv, &n);
  /* GOption removes what it parses from the array it is given: keep the
   * original pointers to free them. */
  char **keep = g_memdup2(args, sizeof(char *) * (gsize)(n + 1));
  int status = sweep_main(n, args);
  g_free(args);
  g_strfreev(keep);
  return status;
}

static int sweep_main(int argc, char **argv)
{
  const char *prog = "clustersim sweep";
  char *output = NULL, *shard_text = NULL, *metric_name = NULL, *model = NULL;
  char *max_requests_text = NULL;
  gboolean force = FALSE, list = FALSE, no_render = FALSE;
  int jobs = G_MININT; /* not given */
  gint64 max_requests = 0;
  GOptionEntry entries[] = {
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Runs at a time (default: the processors); the outputs do not depend on it", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write runs.csv, aggregate.csv, aggregate.json, sweep.json and the figures (DIR/figures) to DIR", "DIR" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace the outputs of an earlier sweep in DIR", NULL },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard_text, "Run only the runs whose number mod N is K-1 and write DIR/runs.csv and DIR/shard.json (for sweep merge)", "K/N" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric_name, "Metric of the printed table (default goodput_rps; max_load_rps in a goodput-search sweep)", "M" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &model, "Model of the printed table (default total)", "NAME" },
    { "list", 0, 0, G_OPTION_ARG_NONE, &list, "Print the runs (number, variant, axis labels, seed) and stop", NULL },
    { "no-render", 0, 0, G_OPTION_ARG_NONE, &no_render, "Write the figures' .dat and .gp files only; do not run gnuplot", NULL },
    { "max-requests", 0, 0, G_OPTION_ARG_STRING, &max_requests_text, CLI_MAX_REQUESTS_HELP " (per run; a run over it is reported invalid)", "N" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("EXPERIMENT - run an experiment's grid of simulations");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Runs every variant x axis point x seed of the experiment file on local threads and prints\n"
    "a table of the metric's mean and 95 % confidence interval over the seeds, a row per axis\n"
    "point and a column per variant. With --output DIR it writes runs.csv (a row per run and\n"
    "model), aggregate.csv and aggregate.json (statistics over the seeds) and sweep.json; the\n"
    "same bytes whatever -j. A run whose scenario is invalid is reported and the others go on\n"
    "(exit status 1). DIR/figures gets the metric and the p99 latency against the axes, a series\n"
    "per variant (drawn with gnuplot when found). `clustersim sweep merge -o DIR SHARDDIR...`\n"
    "merges --shard outputs; `clustersim sweep plot DIR` redraws the figures.");
  GError *err = NULL;
  int status = 0, shard_k = 1, shard_n = 1;
  CsExperiment *e = NULL;
  CsDirLock *lock = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected an EXPERIMENT file (see --help)"
                                     : "expected exactly one EXPERIMENT file");
    goto out;
  }
  if (jobs != G_MININT && jobs < 1) {
    status = cli_fail(prog, "-j: expected a number of runs at a time >= 1");
    goto out;
  }
  if (shard_text && !parse_shard(shard_text, &shard_k, &shard_n)) {
    char *m = g_strdup_printf("--shard %s: expected K/N with 1 <= K <= N", shard_text);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (shard_text && !output) {
    status = cli_fail(prog, "--shard needs --output DIR (the shard's part, for sweep merge)");
    goto out;
  }
  if (force && !output) {
    status = cli_fail(prog, "--force needs --output DIR");
    goto out;
  }
  if (!metric_option(prog, metric_name) ||
      !cli_parse_max_requests(prog, max_requests_text, &max_requests)) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (!(e = cs_experiment_load(argv[1], &err)) ||
      !cs_experiment_load_plugins(e, cli_registry(), &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  /* A search metric asked of a sweep without search: say so before running. */
  const CsRunsTable shape = { .search = cs_experiment_search(e) != NULL };
  if (table_metric(prog, &shape, metric_name) < 0) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (list) {
    print_list(e);
    goto out;
  }
  if (output && !cs_sweep_check_output_dir(output, force, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* Held from before the runs to the last file: a second sweep into DIR
   * meanwhile is refused rather than replacing this one's outputs. */
  if (output && !(lock = lock_output(output, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  Progress progress = { .start_us = g_get_monotonic_time() };
  progress.last_us = progress.start_us;
  CsSweepOptions opt = { .threads = jobs != G_MININT ? jobs : (int)g_get_num_processors(),
                         .shard_index = shard_k - 1, .shard_count = shard_n,
                         .max_requests = max_requests };
  if (isatty(STDERR_FILENO)) {
    opt.progress = on_progress;
    opt.progress_data = &progress;
  }
  GArray *ids = NULL;
  CsRunsTable *t = cs_sweep_run(e, &opt, &ids);
  if (progress.shown)
    fputs("\r\033[K", stderr);
  cJSON *describe = cs_experiment_describe(e);
  if (shard_text) {
    const char *names[] = { "runs.csv", "shard.json" };
    char *texts[] = { cs_runs_table_to_csv(t),
                      cs_sweep_shard_json(describe, shard_k, shard_n, ids) };
    cs_signals_hold();
    gboolean written = cs_sweep_write_outputs(output, names, (const char *const *)texts, 2, &err);
    if (written)
      cs_figure_dir_clear(output); /* of an earlier unsharded sweep there */
    cs_dir_lock_release(lock);
    lock = NULL;
    cs_signals_release();
    if (!written) {
      status = cli_fail(prog, err->message);
    } else {
      printf("shard %d/%d: %u of %d runs, written to %s\n", shard_k, shard_n, ids->len,
             cs_experiment_n_runs(e), output);
      cs_sweep_print_invalid(t, prog, stderr);
      status = cs_sweep_n_invalid(t) ? EXIT_SOME_INVALID : 0;
    }
    g_free(texts[0]);
    g_free(texts[1]);
  } else {
    status = finish(prog, t, describe, output, metric_name, model ? model : "total", !no_render,
                    &lock);
  }
  cJSON_Delete(describe);
  cs_runs_table_free(t);
  g_array_unref(ids);
out:
  cs_dir_lock_release(lock);
  g_clear_error(&err);
  cs_experiment_free(e);
  g_free(output);
  g_free(shard_text);
  g_free(metric_name);
  g_free(model);
  g_free(max_requests_text);
  g_option_context_free(ctx);
  return status;
}
