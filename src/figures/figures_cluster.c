/* A run's cluster figures: GPUs busy over time and the placement map; see
 * figures_run.h. A model has the same colour here as in the latency CDF
 * (its position in summary.json). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "figures_run.h"
#include "common/csv.h"

/* A time-series CSV cell: a finite number >= 0, kept as text to copy it
 * into the .dat unchanged. */
static gboolean check_cell(const CsCsv *csv, int col, const char *name, GError **error)
{
  double v;
  char *label = g_strdup_printf("column %s", name);
  gboolean ok = cs_csv_parse_double(csv, csv->fields[col], label, TRUE, &v, error);
  g_free(label);
  return ok;
}

/* Bins past this are refused rather than drawn (a dense grid per GPU). */
#define MAX_FIGURE_BINS 10000000

/* gpus_over_time.csv: time_s, gpus_used, busy_gpus per bin, as rows of
 * the .dat. The file has a row per bin in which some GPU ran, in bin order;
 * the bins before and between them are idle and get rows of zeros, so that
 * the steps drawn fall to 0 there. Returns the number of bins or -1 with
 * error set. */
static int read_totals(const char *path, double bin_s, GString *dat, GError **error)
{
  static const char *const expected = "time_s, gpus_used, busy_gpus";
  static const char *const names[] = { "time_s", "gpus_used", "busy_gpus" };
  CsCsv csv = { 0 };
  int col[3], bins = 0, rc = 0;
  gboolean ok = cs_csv_open(&csv, path, error) && cs_csv_read_header(&csv, expected, error) &&
                (col[0] = cs_csv_require(&csv, "time_s", expected, error)) >= 0 &&
                (col[1] = cs_csv_require(&csv, "gpus_used", expected, error)) >= 0 &&
                (col[2] = cs_csv_require(&csv, "busy_gpus", expected, error)) >= 0;
  size_t ncol = csv.n_fields;
  while (ok && (rc = cs_csv_next(&csv, error)) == 1) {
    double t = 0;
    ok = cs_csv_expect_fields(&csv, ncol, error) &&
         cs_csv_parse_double(&csv, csv.fields[col[0]], "column time_s", TRUE, &t, error);
    for (int i = 1; ok && i < 3; i++)
      ok = check_cell(&csv, col[i], names[i], error);
    if (!ok)
      break;
    double b = round(t / bin_s);
    if (b < bins || b >= MAX_FIGURE_BINS) {
      cs_csv_fail(&csv, error, b < bins ? "time_s %s does not follow the row before"
                                        : "time_s %s is past any bin of the run",
                  csv.fields[col[0]]);
      ok = FALSE;
      break;
    }
    for (; bins < (int)b; bins++) {
      char tb[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf(dat, "%s\t0\t0\n",
                             g_ascii_formatd(tb, sizeof tb, "%.9g", bins * bin_s));
    }
    g_string_append_printf(dat, "%s\t%s\t%s\n", csv.fields[col[0]], csv.fields[col[1]],
                           csv.fields[col[2]]);
    bins++;
  }
  ok = ok && rc == 0;
  cs_csv_close(&csv);
  return ok ? bins : -1;
}

/* gpu_timeseries.csv: busy fraction and SM use per GPU and bin, into
 * busy[g * n_bins + b] and sm[...] as text (NULL: the bin is absent, the GPU
 * ran nothing in it). Extends *n_bins to the last bin seen. */
static gboolean read_per_gpu(const RunSummary *r, const char *path, GPtrArray *busy,
                             GPtrArray *sm, int *n_bins, GError **error)
{
  static const char *const expected = "time_s, gpu, busy_fraction, sm_use";
  CsCsv csv = { 0 };
  int ct = -1, cg = -1, cb = -1, cu = -1, rc = 0;
  gboolean ok = cs_csv_open(&csv, path, error) && cs_csv_read_header(&csv, expected, error) &&
                (ct = cs_csv_require(&csv, "time_s", expected, error)) >= 0 &&
                (cg = cs_csv_require(&csv, "gpu", expected, error)) >= 0 &&
                (cb = cs_csv_require(&csv, "busy_fraction", expected, error)) >= 0 &&
                (cu = cs_csv_require(&csv, "sm_use", expected, error)) >= 0;
  size_t ncol = csv.n_fields;
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  while (ok && (rc = cs_csv_next(&csv, error)) == 1) {
    double t;
    int64_t g;
    ok = cs_csv_expect_fields(&csv, ncol, error) &&
         cs_csv_parse_double(&csv, csv.fields[ct], "column time_s", TRUE, &t, error) &&
         cs_csv_parse_count(&csv, csv.fields[cg], "column gpu", &g, error) &&
         check_cell(&csv, cb, "busy_fraction", error) &&
         check_cell(&csv, cu, "sm_use", error);
    if (ok && g >= r->n_gpus) {
      cs_csv_fail(&csv, error, "gpu %" G_GINT64_FORMAT " is not a GPU of %s (%d GPUs)", g,
                  r->path, r->n_gpus);
      ok = FALSE;
    }
    if (!ok)
      break;
    /* Compared as a double: llround of a huge time would be undefined. */
    double bd = round(t / r->bin_s);
    int64_t b = bd < MAX_FIGURE_BINS ? (int64_t)bd : MAX_FIGURE_BINS;
    if (b >= MAX_FIGURE_BINS) {
      cs_csv_fail(&csv, error, "time_s %s is past any bin of the run", csv.fields[ct]);
      ok = FALSE;
      break;
    }
    char **row = g_new0(char *, 5);
    row[0] = g_strdup_printf("%" G_GINT64_FORMAT, g);
    row[1] = g_strdup_printf("%" G_GINT64_FORMAT, b);
    row[2] = g_strdup(csv.fields[cb]);
    row[3] = g_strdup(csv.fields[cu]);
    g_ptr_array_add(rows, row);
    *n_bins = MAX(*n_bins, (int)b + 1);
  }
  ok = ok && rc == 0;
  cs_csv_close(&csv);
  if (ok) {
    g_ptr_array_set_size(busy, r->n_gpus * *n_bins);
    g_ptr_array_set_size(sm, r->n_gpus * *n_bins);
    for (guint i = 0; i < rows->len; i++) {
      char **row = g_ptr_array_index(rows, i);
      int at = atoi(row[0]) * *n_bins + atoi(row[1]);
      g_free(busy->pdata[at]);
      g_free(sm->pdata[at]);
      busy->pdata[at] = g_strdup(row[2]);
      sm->pdata[at] = g_strdup(row[3]);
    }
  }
  g_ptr_array_unref(rows);
  return ok;
}

gboolean cs_figure_gpu_busy(CsFigureSet *set, const RunSummary *r, GError **error)
{
  char *totals = g_build_filename(r->dir, "gpus_over_time.csv", NULL);
  char *per_gpu = g_build_filename(r->dir, "gpu_timeseries.csv", NULL);
  GString *top = g_string_new(NULL);
  GPtrArray *busy = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *sm = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = TRUE;
  int n_bins = 0;
  if (!g_file_test(totals, G_FILE_TEST_EXISTS) || !g_file_test(per_gpu, G_FILE_TEST_EXISTS)) {
    cs_figure_set_note(set, "gpu_busy skipped: %s or %s is absent", totals, per_gpu);
    goto out;
  }
  ok = (n_bins = read_totals(totals, r->bin_s, top, error)) >= 0 &&
       read_per_gpu(r, per_gpu, busy, sm, &n_bins, error);
  if (!ok)
    goto out;
  if (n_bins == 0) {
    cs_figure_set_note(set, "gpu_busy skipped: %s has no time bin", totals);
    goto out;
  }
  CsFigure *f = cs_figure_set_add(set, "gpu_busy");
  g_string_append_printf(f->dat,
                         "# clustersim run figure data: GPUs over time, bins of %g s.\n"
                         "# Index 0, from gpus_over_time.csv: bin start, GPUs that ran a batch "
                         "in the bin, busy\n# GPUs (busy GPU-time / bin width).\n"
                         "# time_s\tgpus_used\tbusy_gpus\n%s\n\n",
                         r->bin_s, top->str);
  g_string_append(f->dat, "# Index 1, from gpu_timeseries.csv: per GPU (a scan line each) and "
                          "bin, the bin's middle,\n# the GPU, its busy fraction and SM use (0 "
                          "where the file has no row: the GPU ran nothing).\n"
                          "# time_mid_s\tgpu\tbusy_fraction\tsm_use\n");
  for (int g = 0; g < r->n_gpus; g++) {
    g_string_append(f->dat, g ? "\n" : "");
    for (int b = 0; b < n_bins; b++) {
      const char *bu = busy->pdata[g * n_bins + b], *su = sm->pdata[g * n_bins + b];
      g_string_append_printf(f->dat, "%.9g\t%d\t%s\t%s\n", (b + 0.5) * r->bin_s, g,
                             bu ? bu : "0", su ? su : "0");
    }
  }
  char *sub = cs_run_subtitle(r);
  char *title = g_strdup_printf("GPUs over time\n%s", sub);
  double t_end = n_bins * r->bin_s;
  cs_gp_begin(f, "GPUs used and busy over time (top), busy fraction per GPU (bottom)");
  g_string_append_printf(f->gp,
                         "bin = %.17g\n"
                         "set xrange [0:%.17g]\n"
                         "set cbrange [0:1]\n"
                         "set palette defined (0 \"#f4f4f4\", 0.5 \"#6baed6\", 1 \"#08306b\")\n",
                         r->bin_s, t_end);
  cs_gp_outputs_begin(f);
  g_string_append(f->gp, "  set multiplot title ");
  cs_gp_string(f->gp, title);
  g_string_append_printf(
    f->gp,
    " noenhanced\n"
    "  set lmargin at screen 0.09\n  set rmargin at screen 0.74\n"
    "  # Top: how many GPUs work.\n"
    "  set tmargin at screen 0.86\n  set bmargin at screen 0.57\n"
    "  unset xlabel\n  set format x \"\"\n  unset colorbox\n"
    "  set ylabel \"GPUs\"\n  set yrange [0:%d]\n  set ytics %s\n"
    "  set key at screen 0.75, screen 0.86 left top vertical Left reverse samplen 2\n"
    "  # Each bin drawn over its width (x: the bin's middle).\n"
    "  plot \"gpu_busy.dat\" index 0 using ($1 + bin / 2.0):2 with histeps lw 2 "
    "lc rgb \"#999999\" title \"used (ran a batch)\", \\\n"
    "       \"gpu_busy.dat\" index 0 using ($1 + bin / 2.0):3 with histeps lw 2 "
    "lc rgb \"#0072b2\" title \"busy (mean)\"\n"
    "  # Bottom: each GPU's busy fraction per bin.\n"
    "  set tmargin at screen 0.50\n  set bmargin at screen 0.11\n"
    "  set xlabel \"simulated time (s)\"\n  set format x \"%%g\"\n"
    "  set ylabel \"GPU\"\n  set yrange [-0.5:%.1f]\n  set ytics %s\n  unset key\n"
    "  set colorbox user origin screen 0.76, screen 0.11 size screen 0.02, screen 0.39\n"
    "  set cblabel \"busy fraction\"\n"
    "  plot \"gpu_busy.dat\" index 1 using 1:2:3 with image notitle\n"
    "  unset multiplot\n",
    r->n_gpus + (r->n_gpus < 4 ? 1 : r->n_gpus / 4), r->n_gpus <= 8 ? "1" : "auto",
    r->n_gpus - 0.5,
    r->n_gpus <= 16 ? "1" : "auto");
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
out:
  g_free(totals);
  g_free(per_gpu);
  g_string_free(top, TRUE);
  g_ptr_array_unref(busy);
  g_ptr_array_unref(sm);
  return ok;
}

/* The boxes of one GPU's column: bottom and top of each replica there.
 * Under MPS a box is as tall as its share (so shares above 1 are an
 * oversubscribed GPU); replicas without a share split what the others leave
 * (0.1 each when they leave nothing, to stay visible). Time-sliced replicas
 * split the column evenly: they take turns. */
typedef struct {
  int model, replica;
  const RunReplica *rep;
  double y0, y1;
} Box;

static GArray *column(const RunSummary *r, int gpu)
{
  GArray *boxes = g_array_new(FALSE, FALSE, sizeof(Box));
  double given = 0;
  int unlimited = 0;
  for (int m = 0; m < r->n_models; m++)
    for (guint k = 0; k < r->models[m].replicas->len; k++) {
      const RunReplica *rep = &g_array_index(r->models[m].replicas, RunReplica, k);
      if (rep->gpu != gpu)
        continue;
      Box b = { .model = m, .replica = (int)k, .rep = rep };
      g_array_append_val(boxes, b);
      if (rep->share > 0)
        given += rep->share;
      else
        unlimited++;
    }
  double rest = given < 1.0 ? (1.0 - given) / MAX(unlimited, 1) : 0.1;
  double y = 0;
  for (guint i = 0; i < boxes->len; i++) {
    Box *b = &g_array_index(boxes, Box, i);
    double h = !r->mps ? 1.0 / boxes->len : b->rep->share > 0 ? b->rep->share : rest;
    b->y0 = y;
    b->y1 = y += h;
  }
  return boxes;
}

static gboolean oversubscribed(GArray **cols, int n)
{
  for (int g = 0; g < n; g++) {
    double sum = 0;
    for (guint i = 0; i < cols[g]->len; i++)
      sum += MAX(g_array_index(cols[g], Box, i).rep->share, 0.0);
    if (sum > 1.0)
      return TRUE;
  }
  return FALSE;
}

static gboolean unlimited_any(GArray **cols, int n)
{
  for (int g = 0; g < n; g++)
    for (guint i = 0; i < cols[g]->len; i++)
      if (!(g_array_index(cols[g], Box, i).rep->share > 0))
        return TRUE;
  return FALSE;
}

void cs_figure_placement(CsFigureSet *set, const RunSummary *r)
{
  int n_replicas = 0;
  gboolean shares_known = TRUE;
  for (int m = 0; m < r->n_models; m++) {
    n_replicas += (int)r->models[m].replicas->len;
    for (guint k = 0; k < r->models[m].replicas->len; k++)
      shares_known = shares_known && !isnan(g_array_index(r->models[m].replicas, RunReplica, k).share);
  }
  if (n_replicas == 0) {
    cs_figure_set_note(set, "placement skipped: the run has no replicas (dispatch %s places "
                            "none: every model may run on any GPU)",
                       r->dispatch);
    return;
  }
  if (r->mps && !shares_known) {
    cs_figure_set_note(set, "placement skipped: %s has no MPS shares (written by an older "
                            "clustersim; run it again)",
                       r->path);
    return;
  }
  GArray **cols = g_new(GArray *, r->n_gpus);
  double top = 1.0;
  for (int g = 0; g < r->n_gpus; g++) {
    cols[g] = column(r, g);
    if (cols[g]->len)
      top = MAX(top, g_array_index(cols[g], Box, cols[g]->len - 1).y1);
  }
  CsFigure *f = cs_figure_set_add(set, "placement");
  g_string_append_printf(f->dat,
                         "# clustersim run figure data: the placement's replicas on each GPU, "
                         "from summary.json.\n"
                         "# One block per model (gnuplot's index 0, 1, ...), then one of the GPUs"
                         ". y0, y1: the box\n# drawn for the replica: %s\n"
                         "# gpu\tmodel\treplica\tbatch\tmps_share\ty0\ty1\n",
                         r->mps ? "its MPS share of the SMs stacked (no share: an even part "
                                  "of what the others leave, 0.1 if nothing)"
                                : "time-sliced replicas split the column evenly");
  int block = 0;
  GString *plot = g_string_new(NULL);
  for (int m = 0; m < r->n_models; m++) {
    if (r->models[m].replicas->len == 0)
      continue;
    g_string_append(f->dat, block ? "\n\n" : "");
    for (int g = 0; g < r->n_gpus; g++)
      for (guint i = 0; i < cols[g]->len; i++) {
        const Box *b = &g_array_index(cols[g], Box, i);
        if (b->model != m)
          continue;
        g_string_append_printf(f->dat, "%d\t", g);
        cs_dat_field(f->dat, r->models[m].name);
        g_string_append_printf(f->dat, "\t%d\t%d\t%.17g\t%.17g\t%.17g\n", b->replica,
                               b->rep->batch, b->rep->share, b->y0, b->y1);
      }
    g_string_append_printf(plot, "    \"placement.dat\" index %d using 1:(($6 + $7) / 2):(0.38):"
                                 "(($7 - $6) / 2) with boxxyerror fs solid 0.8 border lc rgb "
                                 "\"white\" fc rgb \"%s\" title ",
                           block, cs_figure_colour(m));
    cs_gp_string(plot, r->models[m].name);
    g_string_append(plot, ", \\\n");
    block++;
  }
  g_string_append(f->dat, "\n\n# gpu\tbusy_fraction\tmemory_pct\tlabel\n");
  for (int g = 0; g < r->n_gpus; g++) {
    const RunGpu *x = &r->gpus[g];
    g_string_append_printf(f->dat, "%d\t%.17g\t%.17g\t", g, x->busy_fraction, x->memory_pct);
    if (x->mig_instance >= 0)
      g_string_append_printf(f->dat, "%d (MIG %d.%d)\n", g, x->physical, x->mig_instance);
    else
      g_string_append_printf(f->dat, "%d\n", g);
  }
  /* Plain labels rather than a `with labels` plot: gnuplot 5.4 draws the
   * latter with enhanced text whatever it is told, turning the "_b7" of
   * efficientnet_b7 into a subscript. Up to 4 GPUs a box holds its label on
   * two lines; up to 24 it is written upwards, shortened to what the box's
   * height holds (about 5.5 px a character at 8 points, 330 px for the
   * y range); beyond, the colours and the data file say it. */
  GString *labels = g_string_new("# In each box: model, batch size and share; above each GPU: "
                                 "its busy fraction.\n");
  gboolean upright = r->n_gpus <= 4, upwards = !upright && r->n_gpus <= 24;
  for (int g = 0; (upright || upwards) && g < r->n_gpus; g++)
    for (guint i = 0; i < cols[g]->len; i++) {
      const Box *b = &g_array_index(cols[g], Box, i);
      const char *model = r->models[b->model].name;
      char *share = !r->mps ? g_strdup("")
                    : b->rep->share > 0 ? g_strdup_printf(" · %.0f %%", 100 * b->rep->share)
                                        : g_strdup(" · no limit");
      char *full = g_strdup_printf(upright ? "%s\nb%d%s" : "%s b%d%s", model, b->rep->batch,
                                   share);
      char *part = g_strdup_printf("b%d%s", b->rep->batch, share);
      char *text;
      double px = (b->y1 - b->y0) / (top * 1.12) * 330;
      if (upright)
        text = g_strdup(b->y1 - b->y0 < 0.12 ? part : full);
      else
        text = g_strdup(g_utf8_strlen(full, -1) * 5.5 <= px   ? full
                        : g_utf8_strlen(part, -1) * 5.5 <= px ? part
                        : px >= 14                            ? "" : NULL);
      if (text && !*text) {
        g_free(text);
        text = g_strdup_printf("b%d", b->rep->batch);
      }
      if (text && (upright || g_utf8_strlen(text, -1) * 5.5 <= px)) {
        g_string_append(labels, "set label ");
        cs_gp_string(labels, text);
        g_string_append_printf(labels, " at %d, %.17g center %sfront noenhanced font \"%s\"\n",
                               g, (b->y0 + b->y1) / 2, upright ? "" : "rotate by 90 ",
                               upright ? "DejaVu Sans,10" : "DejaVu Sans,8");
      }
      g_free(text);
      g_free(full);
      g_free(part);
      g_free(share);
    }
  gboolean busy_labels = r->n_gpus <= 16;
  for (int g = 0; busy_labels && g < r->n_gpus; g++)
    g_string_append_printf(labels, "set label \"%.0f %%%s\" at %d, %.17g center noenhanced "
                                   "font \",%d\"\n",
                           100 * r->gpus[g].busy_fraction, r->n_gpus <= 6 ? " busy" : "", g,
                           top * 1.04, r->n_gpus <= 6 ? 9 : 8);
  g_string_append(labels, "set xtics (");
  for (int g = 0; g < r->n_gpus; g++) {
    const RunGpu *x = &r->gpus[g];
    char *t = x->mig_instance >= 0 ? g_strdup_printf("%d (MIG %d.%d)", g, x->physical, x->mig_instance)
                                   : g_strdup_printf("%d", g);
    g_string_append(labels, g ? ", " : "");
    cs_gp_tic(labels, t);
    g_string_append_printf(labels, " %d", g);
    g_free(t);
  }
  g_string_append(labels, ") noenhanced\n");
  /* The last box element ends the plot command. */
  g_string_truncate(plot, plot->len - 4);
  g_string_append(plot, "\n");
  char *sub = cs_run_subtitle(r);
  /* A model the placement left out would otherwise be missing without a
   * word; "no limit" needs one too: the box's height is then a drawing
   * choice. */
  GString *missing = g_string_new(NULL);
  for (int m = 0; m < r->n_models; m++)
    if (r->models[m].replicas->len == 0)
      g_string_append_printf(missing, "%s%s", missing->len ? ", " : "\nno replica (unserved): ",
                             r->models[m].name);
  char *title = g_strdup_printf("Placement: replicas, batch sizes and %s per GPU\n%s%s%s",
                                r->mps ? "MPS shares" : "time slices", sub, missing->str,
                                r->mps && unlimited_any(cols, r->n_gpus)
                                  ? "\nno limit: a replica without MPS share, drawn as an "
                                    "even part of what the others leave"
                                  : "");
  g_string_free(missing, TRUE);
  cs_gp_begin(f, "the placement's replicas on each GPU");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append_printf(f->gp,
                         " noenhanced\n"
                         "set xlabel \"%s\"\n"
                         "set ylabel \"%s\"\n"
                         "set xrange [-0.6:%.1f]\n"
                         "set yrange [0:%.17g]\n"
                         "set ytics %s\n"
                         "set grid noxtics\n"
                         "set key below horizontal Left reverse height 1\n",
                         busy_labels ? "GPU (busy fraction of the run above each)" : "GPU",
                         r->mps ? "MPS share of the GPU's SMs" : "time-sliced (drawn evenly)",
                         r->n_gpus - 0.4, top * 1.12,
                         r->mps ? "(\"0\" 0, \"25 %%\" 0.25, \"50 %%\" 0.5, \"75 %%\" 0.75, "
                                  "\"100 %%\" 1)"
                                : "(\"\" 0)");
  g_string_append(f->gp, labels->str);
  if (r->mps && oversubscribed(cols, r->n_gpus))
    g_string_append(f->gp, "# Shares above the whole GPU: oversubscribed.\n"
                           "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 "
                           "lc rgb \"#606060\" front\n");
  cs_gp_outputs_begin(f);
  g_string_append_printf(f->gp, "  plot \\\n%s", plot->str);
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
  g_string_free(plot, TRUE);
  g_string_free(labels, TRUE);
  for (int g = 0; g < r->n_gpus; g++)
    g_array_unref(cols[g]);
  g_free(cols);
}
