/* clustersim plot RUNDIR [--no-render]
 *
 * Draws the figures of one run's output directory (written by clustersim run
 * --output RUNDIR) into RUNDIR/figures: latency CDF per model, stage
 * breakdown, GPUs busy over time and the placement map (docs/experiments.md,
 * "Figures"). Exit status: 0 (also when gnuplot is missing: the .dat and .gp
 * files are written and a warning says so), 1 when gnuplot fails on a script
 * or a file cannot be written, 2 when RUNDIR is not a run's output (nothing
 * is written). */
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

int cmd_plot(int argc, char **argv)
{
  const char *prog = "clustersim plot";
  gboolean no_render = FALSE;
  GOptionEntry entries[] = {
    { "no-render", 0, 0, G_OPTION_ARG_NONE, &no_render, "Write the figures' .dat and .gp files only; do not run gnuplot", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("RUNDIR - draw the figures of a run's outputs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Reads the outputs of `clustersim run SCENARIO --output RUNDIR [--requests-csv]` and writes\n"
    "into RUNDIR/figures, for each figure, NAME.dat (the data), NAME.gp (a gnuplot script to\n"
    "restyle) and, with gnuplot (on PATH, or $CLUSTERSIM_GNUPLOT), NAME.svg and NAME.png:\n"
    "latency_cdf (per model; needs requests.csv), stage_breakdown (mean time in each stage per\n"
    "model), gpu_busy (GPUs busy over time, per GPU) and placement (replicas, batch sizes and\n"
    "MPS shares on each GPU).");
  GError *err = NULL;
  int status = 0;
  CsFigureSet *set = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
  } else if (argc != 2) {
    status = cli_fail(prog, argc < 2 ? "expected a RUNDIR (written by clustersim run --output)"
                                     : "expected exactly one RUNDIR");
  } else if (!g_file_test(argv[1], G_FILE_TEST_IS_DIR)) {
    /* Missing and "not a directory" are different mistakes. */
    char *m = g_strdup_printf("%s: %s (expected the --output DIR of clustersim run)", argv[1],
                              g_file_test(argv[1], G_FILE_TEST_EXISTS) ? "not a directory"
                                                                       : "not found");
    status = cli_fail(prog, m);
    g_free(m);
  } else if (!(set = cs_figures_run(argv[1], &err))) {
    status = cli_fail(prog, err->message);
  } else {
    status = cli_save_figures(prog, set, argv[1], !no_render, TRUE) ? 0 : 1;
  }
  g_clear_error(&err);
  cs_figure_set_free(set);
  g_option_context_free(ctx);
  return status;
}
