/* clustersim plot RUNDIR [--no-render]
 * clustersim plot --compare RUNDIR1 RUNDIR2... -o OUTDIR [--no-render]
 *
 * Draws the figures of one run's output directory (written by clustersim run
 * --output RUNDIR) into RUNDIR/figures: latency CDF per model, stage
 * breakdown, GPUs busy over time and the placement map (docs/experiments.md,
 * "Figures"). Exit status: 0 (also when gnuplot is missing: the .dat and .gp
 * files are written and a warning says so), 1 when gnuplot fails on a script
 * or a file cannot be written, 2 when RUNDIR is not a run's output (nothing
 * is written).
 *
 * --compare draws, into OUTDIR/figures, per model every run has, the runs'
 * batch size CDFs side by side (and their latency CDFs when every run has
 * requests.csv), one series per run. The same exit statuses; 2 also for
 * fewer than two runs, a run given twice, runs without a model in common, or
 * an OUTDIR that is a run's or a sweep's own directory (its figures would be
 * replaced). */
#include <stdio.h>

#include "cli.h"
#include "figures/figures.h"

gboolean cli_save_figures(const char *prog, CsFigureSet *set, const char *dir, gboolean render,
                          gboolean list)
{
  for (guint i = 0; i < set->notes->len; i++)
    fprintf(stderr, "%s: note: %s\n", prog, (const char *)g_ptr_array_index(set->notes, i));
  char *why = NULL;
  char *gnuplot = render ? cs_figure_find_gnuplot(&why) : NULL;
  GString *messages = g_string_new(NULL);
  GError *err = NULL;
  gboolean ok = cs_figure_set_save(set, dir, gnuplot, messages, &err);
  if (messages->len)
    fprintf(stderr, "%s: gnuplot says:\n%s", prog, messages->str);
  char *figdir = g_build_filename(dir, "figures", NULL);
  if (!ok) {
    fprintf(stderr, "%s: figures: %s\n", prog, err->message);
    g_error_free(err);
  } else if (render && !gnuplot) {
    fprintf(stderr,
            "%s: warning: figures not rendered: %s; their data and gnuplot scripts are in %s "
            "(run gnuplot NAME.gp there)\n",
            prog, why, figdir);
  }
  if (ok && list) {
    printf("%u figure%s in %s:", set->figures->len, set->figures->len == 1 ? "" : "s", figdir);
    for (guint i = 0; i < set->figures->len; i++)
      printf(" %s", ((const CsFigure *)g_ptr_array_index(set->figures, i))->name);
    printf(" (%s)\n", gnuplot ? ".dat, .gp, .svg, .png" : ".dat, .gp: not rendered");
  }
  g_free(figdir);
  g_string_free(messages, TRUE);
  g_free(gnuplot);
  g_free(why);
  return ok;
}

/* A RUNDIR argument: missing and "not a directory" are different mistakes. */
static gboolean check_rundir(const char *prog, const char *dir, int *status)
{
  if (g_file_test(dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  char *m = g_strdup_printf("%s: %s (expected the --output DIR of clustersim run)", dir,
                            g_file_test(dir, G_FILE_TEST_EXISTS) ? "not a directory"
                                                                 : "not found");
  *status = cli_fail(prog, m);
  g_free(m);
  return FALSE;
}

/* OUTDIR of --compare: a directory or nothing yet, and not a run's or a
 * sweep's output, whose figures/ the comparison would replace. */
static gboolean check_outdir(const char *prog, const char *dir, int *status)
{
  char *m = NULL;
  if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    m = g_strdup_printf("-o %s: not a directory", dir);
  } else {
    static const char *const owned[] = { "summary.json", "sweep.json", "shard.json" };
    for (size_t i = 0; !m && i < G_N_ELEMENTS(owned); i++) {
      char *p = g_build_filename(dir, owned[i], NULL);
      if (g_file_test(p, G_FILE_TEST_EXISTS))
        m = g_strdup_printf("-o %s: holds %s, a %s output: its figures/ are not the "
                            "comparison's; choose another directory",
                            dir, owned[i], i == 0 ? "run's" : "sweep's");
      g_free(p);
    }
  }
  if (m)
    *status = cli_fail(prog, m);
  g_free(m);
  return m == NULL;
}

static int plot_compare(const char *prog, int n, char **dirs, const char *out, gboolean render)
{
  int status = 0;
  if (n < 2)
    return cli_fail(prog, "--compare: expected at least two RUNDIRs (written by clustersim run "
                          "--output)");
  for (int i = 0; i < n; i++)
    if (!check_rundir(prog, dirs[i], &status))
      return status;
  if (!check_outdir(prog, out, &status))
    return status;
  GError *err = NULL;
  CsFigureSet *set = cs_figures_compare((const char *const *)dirs, n, &err);
  if (!set) {
    status = cli_fail(prog, err->message);
    g_error_free(err);
    return status;
  }
  status = cli_save_figures(prog, set, out, render, TRUE) ? 0 : 1;
  cs_figure_set_free(set);
  return status;
}

int cmd_plot(int argc, char **argv)
{
  const char *prog = "clustersim plot";
  gboolean no_render = FALSE, compare = FALSE;
  char *out = NULL;
  GOptionEntry entries[] = {
    { "no-render", 0, 0, G_OPTION_ARG_NONE, &no_render, "Write the figures' .dat and .gp files only; do not run gnuplot", NULL },
    { "compare", 0, 0, G_OPTION_ARG_NONE, &compare, "Compare the runs of two or more RUNDIRs (batch size and latency CDFs per model) into OUTDIR/figures", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "With --compare: where to write (OUTDIR/figures)", "OUTDIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("RUNDIR | --compare RUNDIR1 RUNDIR2... -o OUTDIR - "
                                             "draw the figures of a run's outputs, or compare runs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Reads the outputs of `clustersim run SCENARIO --output RUNDIR [--requests-csv]` and writes\n"
    "into RUNDIR/figures, for each figure, NAME.dat (the data), NAME.gp (a gnuplot script to\n"
    "restyle) and, with gnuplot (on PATH, or $CLUSTERSIM_GNUPLOT), NAME.svg and NAME.png:\n"
    "latency_cdf (per model; needs requests.csv), stage_breakdown (mean time in each stage per\n"
    "model), gpu_busy (GPUs busy over time, per GPU), placement (replicas, batch sizes and\n"
    "MPS shares on each GPU) and batch_sizes (CDF of batch size per model, medians marked).\n"
    "\n"
    "With --compare, reads two or more such RUNDIRs and writes into OUTDIR/figures, per model\n"
    "every run has, batch_sizes_compare_MODEL and (when every run has requests.csv)\n"
    "latency_cdf_compare_MODEL: one CDF per run, labelled by its dispatch policy.");
  GError *err = NULL;
  int status = 0;
  CsFigureSet *set = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
  } else if (compare != (out != NULL)) {
    status = cli_fail(prog, compare ? "--compare needs -o OUTDIR (the figures go to OUTDIR/figures)"
                                    : "-o is for --compare (a run's figures go to RUNDIR/figures)");
  } else if (compare) {
    status = plot_compare(prog, argc - 1, argv + 1, out, !no_render);
  } else if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected a RUNDIR (written by clustersim run --output)"
                                     : "expected exactly one RUNDIR");
  } else if (!check_rundir(prog, argv[1], &status)) {
    /* status set */
  } else if (!(set = cs_figures_run(argv[1], &err))) {
    status = cli_fail(prog, err->message);
  } else {
    status = cli_save_figures(prog, set, argv[1], !no_render, TRUE) ? 0 : 1;
  }
  g_clear_error(&err);
  cs_figure_set_free(set);
  g_free(out);
  g_option_context_free(ctx);
  return status;
}
