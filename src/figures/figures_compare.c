/* Figures comparing runs (clustersim plot --compare): per model present in
 * every run, the batch size CDF (by batches) and the latency CDF of each
 * run, one series per run directory, medians marked; see figures.h. Series
 * k has colour k whatever the figure, so a run keeps its colour across
 * models and across the two kinds of figure. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "figures_run.h"

typedef struct {
  int n;
  RunSummary *runs;
  char **labels;    /* per run: its dispatch policy, with the directory when shared */
  GArray ***lat;    /* [run][model of that run]: sorted latencies (ns); NULL without
                     * every run's requests.csv */
} Compare;

/* A directory's last component as given ("a/b/" -> "b"), for labels. */
static char *dir_name(const char *dir)
{
  char *d = g_strdup(dir);
  gsize len = strlen(d);
  while (len > 1 && d[len - 1] == '/')
    d[--len] = '\0';
  char *base = g_path_get_basename(d);
  g_free(d);
  return base;
}

/* The dispatch policy names a run; runs that share one are told apart by
 * their directory's name, or by the directory as given when that is shared
 * too (a/run and b/run). */
static void make_labels(Compare *c)
{
  c->labels = g_new0(char *, c->n + 1);
  for (int i = 0; i < c->n; i++) {
    gboolean policy_shared = FALSE, name_shared = FALSE;
    char *name = dir_name(c->runs[i].dir);
    for (int j = 0; j < c->n; j++) {
      if (j == i || strcmp(c->runs[i].dispatch, c->runs[j].dispatch) != 0)
        continue;
      policy_shared = TRUE;
      char *other = dir_name(c->runs[j].dir);
      name_shared = name_shared || strcmp(name, other) == 0;
      g_free(other);
    }
    c->labels[i] = !policy_shared ? g_strdup(c->runs[i].dispatch)
                   : g_strdup_printf("%s (%s)", c->runs[i].dispatch,
                                     name_shared ? c->runs[i].dir : name);
    g_free(name);
  }
}

/* "N TYPE GPUs (MPS)" and the placement, when every run has the same; the
 * title's second line. Runs on different clusters say so instead. */
static char *compare_subtitle(const Compare *c)
{
  GString *s = g_string_new(NULL);
  gboolean same = TRUE;
  for (int i = 1; i < c->n; i++)
    same = same && c->runs[i].n_gpus == c->runs[0].n_gpus && c->runs[i].mps == c->runs[0].mps &&
           strcmp(c->runs[i].gpus[0].type, c->runs[0].gpus[0].type) == 0;
  if (same)
    g_string_append_printf(s, "%d %s GPU%s%s", c->runs[0].n_gpus, c->runs[0].gpus[0].type,
                           c->runs[0].n_gpus == 1 ? "" : "s", c->runs[0].mps ? " (MPS)" : "");
  else
    g_string_append(s, "runs on different clusters");
  gboolean same_pl = TRUE;
  for (int i = 1; i < c->n; i++)
    same_pl = same_pl && strcmp(c->runs[i].placement, c->runs[0].placement) == 0;
  if (same_pl && strcmp(c->runs[0].placement, "none") != 0)
    g_string_append_printf(s, ", placement %s", c->runs[0].placement);
  g_string_append_printf(s, "; %d runs", c->n);
  return g_string_free(s, FALSE);
}

/* The .dat header lines saying which run each series is. */
static void dat_runs(GString *dat, const Compare *c, const char *what)
{
  for (int i = 0; i < c->n; i++) {
    g_string_append_printf(dat, "# run %d: ", i);
    cs_dat_field(dat, c->labels[i]);
    g_string_append(dat, " = ");
    cs_dat_field(dat, c->runs[i].dir);
    g_string_append_printf(dat, " (%s)\n", what);
  }
}

static void batch_compare(CsFigureSet *set, const Compare *c, const char *model)
{
  int idx[c->n];
  int shown = 0, max_size = 0;
  for (int i = 0; i < c->n; i++) {
    idx[i] = cs_run_summary_model(&c->runs[i], model);
    const GArray *sizes = c->runs[i].models[idx[i]].batch_sizes;
    if (!sizes) {
      cs_figure_set_note(set, "batch_sizes_compare skipped: %s has no batch sizes (written by "
                              "an older clustersim; run it again)",
                         c->runs[i].path);
      return;
    }
    if (sizes->len == 0)
      continue;
    shown++;
    max_size = MAX(max_size, g_array_index(sizes, RunBatchSize, sizes->len - 1).size);
  }
  for (int i = 0; i < c->n; i++)
    if (c->runs[i].models[idx[i]].batch_sizes->len == 0)
      cs_figure_set_note(set, "batch_sizes_compare: %s ran no batch of measured requests of %s, "
                              "no curve",
                         c->runs[i].dir, model);
  if (shown == 0) {
    cs_figure_set_note(set, "batch_sizes_compare skipped for %s: no run ran a batch of it",
                       model);
    return;
  }
  char *stem = g_strconcat("batch_sizes_compare_", model, NULL);
  CsFigure *f = cs_figure_set_add(set, stem);
  g_free(stem);
  g_string_append(f->dat, "# clustersim comparison figure data: batch size distribution of "
                          "model ");
  cs_dat_field(f->dat, model);
  g_string_append(f->dat, " per run, from each run's\n"
                          "# summary.json (models[].batches.sizes: how many batches of each "
                          "size held measured requests).\n");
  dat_runs(f->dat, c, "its summary.json");
  g_string_append(f->dat,
                  "# One block per run with a batch, in that order (gnuplot's index 0, 1, ...), "
                  "as in batch_sizes.dat:\n"
                  "# a row per size, the first at size 0; fraction_batches = cum_batches / "
                  "batches.count, the\n"
                  "# requests columns weight each batch by its size. The last block: each "
                  "run's median by\n"
                  "# batches, nearest rank (the smallest size reaching rank ceil(n / 2) of its "
                  "n batches).\n"
                  "# run\t" CS_BATCH_CDF_COLUMNS "\n");
  GString *plot = g_string_new(NULL);
  GString *medians = g_string_new(NULL);
  int block = 0;
  for (int i = 0; i < c->n; i++) {
    const RunModel *m = &c->runs[i].models[idx[i]];
    if (m->batch_sizes->len == 0)
      continue;
    g_string_append(f->dat, block ? "\n\n" : "");
    cs_batch_cdf_block(f->dat, c->labels[i], m->batch_sizes);
    int med = cs_batch_quantile(m->batch_sizes, 50, FALSE);
    cs_dat_field(medians, c->labels[i]);
    g_string_append_printf(medians, "\t%d\t%" G_GINT64_FORMAT "\n", med, m->batches);
    char *t = g_strdup_printf("%s (n = %" G_GINT64_FORMAT ", median %d)", c->labels[i],
                              m->batches, med);
    g_string_append_printf(plot, "%s    \"%s.dat\" index %d using 2:5 with steps lw 2 lc rgb "
                                 "\"%s\" title ",
                           block ? ", \\\n" : "", f->name, block, cs_figure_colour(i));
    cs_gp_string(plot, t);
    g_free(t);
    block++;
  }
  for (int i = 0, k = 0; i < c->n; i++) {
    if (c->runs[i].models[idx[i]].batch_sizes->len == 0)
      continue;
    g_string_append_printf(plot, ", \\\n    \"%s.dat\" index %d every ::%d::%d using 2:(0.5) "
                                 "with points pt 7 ps 1.4 lc rgb \"%s\" notitle",
                           f->name, block, k, k, cs_figure_colour(i));
    k++;
  }
  g_string_append_printf(f->dat, "\n\n# run\tmedian_batches\tbatches\n%s", medians->str);
  char *sub = compare_subtitle(c);
  char *title = g_strdup_printf("Batch sizes of %s by run (batches holding measured requests)\n%s",
                                model, sub);
  cs_gp_begin(f, "batch size CDF of one model per run, medians marked");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append(f->gp, " noenhanced\n"
                         "set xlabel \"batch size (requests)\"\n"
                         "set ylabel \"fraction of batches of size <= x\"\n"
                         "set yrange [0:1]\nset ytics 0.1\n");
  cs_batch_xaxis(f->gp, max_size);
  g_string_append(f->gp, "set key below horizontal Left reverse height 1\n"
                         "# The medians (points) lie on the dotted line at 0.5.\n"
                         "set arrow from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 3 "
                         "lw 1 lc rgb \"#909090\"\n");
  cs_gp_outputs_begin(f);
  g_string_append_printf(f->gp, "  plot \\\n%s\n", plot->str);
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
  g_string_free(plot, TRUE);
  g_string_free(medians, TRUE);
}

static void latency_compare(CsFigureSet *set, const Compare *c, const char *model)
{
  int *idx = g_new(int, c->n);
  int shown = 0;
  int64_t lo = G_MAXINT64, hi = 0;
  double slo_hi = 0, slo0 = c->runs[0].models[cs_run_summary_model(&c->runs[0], model)].slo_ms;
  gboolean same_slo = TRUE;
  for (int i = 0; i < c->n; i++) {
    idx[i] = cs_run_summary_model(&c->runs[i], model);
    const GArray *v = c->lat[i][idx[i]];
    double slo = c->runs[i].models[idx[i]].slo_ms;
    same_slo = same_slo && (slo == slo0 || (isnan(slo) && isnan(slo0)));
    if (isfinite(slo))
      slo_hi = MAX(slo_hi, slo);
    if (v->len == 0) {
      cs_figure_set_note(set, "latency_cdf_compare: %s served no measured request of %s, no "
                              "curve",
                         c->runs[i].dir, model);
      continue;
    }
    shown++;
    lo = MIN(lo, g_array_index(v, int64_t, 0));
    hi = MAX(hi, g_array_index(v, int64_t, v->len - 1));
  }
  if (shown == 0) {
    cs_figure_set_note(set, "latency_cdf_compare skipped for %s: no run served a measured "
                            "request of it",
                       model);
    g_free(idx);
    return;
  }
  char *stem = g_strconcat("latency_cdf_compare_", model, NULL);
  CsFigure *f = cs_figure_set_add(set, stem);
  g_free(stem);
  g_string_append(f->dat, "# clustersim comparison figure data: end-to-end latency CDF of "
                          "model ");
  cs_dat_field(f->dat, model);
  g_string_append(f->dat, " per run, from each run's\n"
                          "# requests.csv (measured requests with status ok).\n");
  dat_runs(f->dat, c, "its requests.csv");
  g_string_append(f->dat,
                  "# One block per run that served one, in that order (gnuplot's index 0, 1, "
                  "...), as in latency_cdf.dat:\n"
                  "# rank in the sorted latencies (1 = fastest), fraction = rank / n; every "
                  "request when n <= 2000,\n"
                  "# else the ranks ceil(q n) for q = 0.001, ..., 1 and 0.9901, ..., 0.9999, "
                  "and the fastest.\n"
                  "# The last block: each run's median, the latency of rank ceil(n / 2), and "
                  "its SLO.\n"
                  "# run\tlatency_ms\tfraction\trank\tn\n");
  GString *plot = g_string_new(NULL), *medians = g_string_new(NULL), *arrows = g_string_new(NULL);
  int block = 0;
  for (int i = 0; i < c->n; i++) {
    const GArray *v = c->lat[i][idx[i]];
    const RunModel *m = &c->runs[i].models[idx[i]];
    if (v->len == 0)
      continue;
    GArray *ranks = cs_cdf_ranks(v->len);
    g_string_append(f->dat, block ? "\n\n" : "");
    for (guint k = 0; k < ranks->len; k++) {
      int64_t rk = g_array_index(ranks, int64_t, k);
      cs_dat_field(f->dat, c->labels[i]);
      g_string_append_c(f->dat, '\t');
      cs_append_ms(f->dat, g_array_index(v, int64_t, rk - 1));
      g_string_append_printf(f->dat, "\t%.9g\t%" G_GINT64_FORMAT "\t%u\n", (double)rk / v->len,
                             rk, v->len);
    }
    g_array_unref(ranks);
    int64_t p50 = g_array_index(v, int64_t, (v->len + 1) / 2 - 1);
    cs_dat_field(medians, c->labels[i]);
    g_string_append_c(medians, '\t');
    cs_append_ms(medians, p50);
    g_string_append_printf(medians, "\t%u\t%.17g\n", v->len, m->slo_ms);
    GString *t = g_string_new(NULL);
    g_string_append_printf(t, "%s (n = %u, median %.1f ms)", c->labels[i], v->len, p50 / 1e6);
    g_string_append_printf(plot, "%s    \"%s.dat\" index %d using 2:3 with steps lw 2 lc rgb "
                                 "\"%s\" title ",
                           block ? ", \\\n" : "", f->name, block, cs_figure_colour(i));
    cs_gp_string(plot, t->str);
    g_string_free(t, TRUE);
    /* One SLO line when the runs agree on it, else each run's in its colour. */
    if (isfinite(m->slo_ms) && (!same_slo || block == 0))
      g_string_append_printf(arrows, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead "
                                     "dt 2 lw 1.5 lc rgb \"%s\"\n",
                             m->slo_ms, m->slo_ms, same_slo ? "#707070" : cs_figure_colour(i));
    block++;
  }
  for (int i = 0, k = 0; i < c->n; i++) {
    if (c->lat[i][idx[i]]->len == 0)
      continue;
    g_string_append_printf(plot, ", \\\n    \"%s.dat\" index %d every ::%d::%d using 2:(0.5) "
                                 "with points pt 7 ps 1.4 lc rgb \"%s\" notitle",
                           f->name, block, k, k, cs_figure_colour(i));
    k++;
  }
  g_string_append_printf(f->dat, "\n\n# run\tmedian_ms\tn\tslo_ms\n%s", medians->str);
  /* As latency_cdf: a log scale when the runs' latencies span more than a
   * factor of 100 (an overloaded run beside a healthy one). */
  double lo_ms = lo / 1e6, hi_ms = MAX(hi / 1e6, slo_hi);
  gboolean logx = lo_ms > 0 && hi_ms / lo_ms > 100;
  char *sub = compare_subtitle(c);
  char *title = g_strdup_printf("End-to-end latency of %s by run (served measured requests)\n%s",
                                model, sub);
  cs_gp_begin(f, "end-to-end latency CDF of one model per run, medians marked, SLO dashed");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append_printf(f->gp,
                         " noenhanced\n"
                         "set xlabel \"end-to-end latency (ms%s)\"\n"
                         "set ylabel \"fraction of requests answered within x\"\n"
                         "set yrange [0:1]\nset ytics 0.1\n",
                         logx ? ", log scale" : "");
  if (logx)
    g_string_append_printf(f->gp, "set logscale x\nset xrange [%.17g:%.17g]\n",
                           pow(10.0, floor(log10(lo_ms))), hi_ms * 1.25);
  else
    g_string_append_printf(f->gp, "set xrange [0:%.17g]\n", hi_ms * 1.05);
  g_string_append_printf(f->gp, "set key below horizontal Left reverse height 1\n"
                                "# The SLO dashed (%s); the medians (points) on the dotted "
                                "line at 0.5.\n"
                                "set arrow from graph 0, first 0.5 to graph 1, first 0.5 nohead "
                                "dt 3 lw 1 lc rgb \"#909090\"\n%s",
                         same_slo ? "grey: every run's" : "in each run's colour", arrows->str);
  cs_gp_outputs_begin(f);
  g_string_append_printf(f->gp, "  plot \\\n%s\n", plot->str);
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
  g_string_free(plot, TRUE);
  g_string_free(medians, TRUE);
  g_string_free(arrows, TRUE);
  g_free(idx);
}

/* Every run's requests.csv, or a note naming the runs without one. */
static gboolean read_all_latencies(CsFigureSet *set, Compare *c, GError **error)
{
  GString *missing = g_string_new(NULL);
  for (int i = 0; i < c->n; i++) {
    char *p = g_build_filename(c->runs[i].dir, "requests.csv", NULL);
    if (!g_file_test(p, G_FILE_TEST_EXISTS))
      g_string_append_printf(missing, "%s%s", missing->len ? ", " : "", p);
    g_free(p);
  }
  if (missing->len) {
    cs_figure_set_note(set, "latency_cdf_compare skipped: %s absent (clustersim run ... "
                            "--requests-csv writes it)",
                       missing->str);
    g_string_free(missing, TRUE);
    return TRUE;
  }
  g_string_free(missing, TRUE);
  c->lat = g_new0(GArray **, c->n);
  gboolean ok = TRUE;
  for (int i = 0; ok && i < c->n; i++) {
    char *p = g_build_filename(c->runs[i].dir, "requests.csv", NULL);
    c->lat[i] = g_new(GArray *, c->runs[i].n_models);
    for (int m = 0; m < c->runs[i].n_models; m++)
      c->lat[i][m] = g_array_new(FALSE, FALSE, sizeof(int64_t));
    ok = cs_run_read_latencies(&c->runs[i], p, c->lat[i], error);
    g_free(p);
  }
  return ok;
}

static void compare_clear(Compare *c)
{
  for (int i = 0; i < c->n; i++) {
    if (c->lat && c->lat[i]) {
      for (int m = 0; m < c->runs[i].n_models; m++)
        g_array_unref(c->lat[i][m]);
      g_free(c->lat[i]);
    }
    cs_run_summary_clear(&c->runs[i]);
  }
  g_free(c->lat);
  g_free(c->runs);
  g_strfreev(c->labels);
}

/* The models of run 0 that every run has, in run 0's order; a note for each
 * model some run lacks. Fails when no model is common to all. */
static GPtrArray *common_models(CsFigureSet *set, const Compare *c, GError **error)
{
  GPtrArray *common = g_ptr_array_new();
  for (int i = 0; i < c->n; i++)
    for (int m = 0; m < c->runs[i].n_models; m++) {
      const char *name = c->runs[i].models[m].name;
      /* Each model once, at the first run that has it. */
      gboolean earlier = FALSE;
      for (int j = 0; j < i && !earlier; j++)
        earlier = cs_run_summary_model(&c->runs[j], name) >= 0;
      if (earlier)
        continue;
      GString *lacking = g_string_new(NULL);
      for (int j = 0; j < c->n; j++)
        if (cs_run_summary_model(&c->runs[j], name) < 0)
          g_string_append_printf(lacking, "%s%s", lacking->len ? ", " : "", c->runs[j].path);
      if (lacking->len)
        cs_figure_set_note(set, "no comparison of %s: not a model of %s", name, lacking->str);
      else
        g_ptr_array_add(common, (gpointer)name);
      g_string_free(lacking, TRUE);
    }
  if (common->len == 0) {
    GString *models = g_string_new(NULL);
    for (int i = 0; i < c->n; i++) {
      g_string_append_printf(models, "%s%s has", i ? "; " : "", c->runs[i].path);
      for (int m = 0; m < c->runs[i].n_models; m++)
        g_string_append_printf(models, "%s %s", m ? "," : "", c->runs[i].models[m].name);
    }
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "the runs have no model in common, nothing to compare (%s)", models->str);
    g_string_free(models, TRUE);
    g_ptr_array_unref(common);
    return NULL;
  }
  return common;
}

CsFigureSet *cs_figures_compare(const char *const *dirs, int n, GError **error)
{
  if (n < 2) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "a comparison needs at least two run directories, got %d", n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      char *a = g_canonicalize_filename(dirs[i], NULL), *b = g_canonicalize_filename(dirs[j], NULL);
      gboolean same = strcmp(a, b) == 0;
      g_free(a);
      g_free(b);
      if (same) {
        g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                    "%s: given twice (as %s and %s): compare different runs", dirs[i], dirs[j],
                    dirs[i]);
        return NULL;
      }
    }
  Compare c = { .n = n, .runs = g_new0(RunSummary, n) };
  gboolean ok = TRUE;
  for (int i = 0; i < n; i++)
    c.runs[i].dir = dirs[i];
  for (int i = 0; ok && i < n; i++)
    ok = cs_run_summary_read(&c.runs[i], error);
  CsFigureSet *set = ok ? cs_figure_set_new() : NULL;
  GPtrArray *common = ok ? common_models(set, &c, error) : NULL;
  ok = common && read_all_latencies(set, &c, error);
  if (ok) {
    make_labels(&c);
    for (guint k = 0; k < common->len; k++)
      batch_compare(set, &c, g_ptr_array_index(common, k));
    for (guint k = 0; c.lat && k < common->len; k++)
      latency_compare(set, &c, g_ptr_array_index(common, k));
  } else {
    g_clear_pointer(&set, cs_figure_set_free);
  }
  if (common)
    g_ptr_array_unref(common);
  compare_clear(&c);
  return set;
}
