/* A run's batch size figure: per model, the CDF of batch size by batches and
 * by requests, from summary.json's models[].batches.sizes; see
 * figures_run.h. The CDF helpers serve the comparison figures too
 * (figures_compare.c). A model has the same colour here as in the latency
 * CDF (its position in summary.json). */
#include <string.h>

#include "figures_run.h"

/* A batch's weight: 1 (by batches) or its size (by requests). */
static int64_t weight(const RunBatchSize *b, gboolean by_requests)
{
  return by_requests ? b->count * b->size : b->count;
}

int cs_batch_quantile(const GArray *sizes, int pct, gboolean by_requests)
{
  g_return_val_if_fail(sizes->len > 0 && pct >= 1 && pct <= 100, 0);
  int64_t total = 0;
  for (guint k = 0; k < sizes->len; k++)
    total += weight(&g_array_index(sizes, RunBatchSize, k), by_requests);
  /* ceil(pct/100 x total) in integers: exact, unlike a double's product;
   * total <= CS_BATCH_MAX_REQUESTS (the reader checks), so no overflow. */
  int64_t rank = (pct * total + 99) / 100, cum = 0;
  for (guint k = 0; k < sizes->len; k++) {
    const RunBatchSize *b = &g_array_index(sizes, RunBatchSize, k);
    cum += weight(b, by_requests);
    if (cum >= rank)
      return b->size;
  }
  g_return_val_if_reached(0);
}

void cs_batch_cdf_block(GString *dat, const char *label, const GArray *sizes)
{
  int64_t n = 0, requests = 0;
  for (guint k = 0; k < sizes->len; k++) {
    n += weight(&g_array_index(sizes, RunBatchSize, k), FALSE);
    requests += weight(&g_array_index(sizes, RunBatchSize, k), TRUE);
  }
  cs_dat_field(dat, label);
  g_string_append(dat, "\t0\t0\t0\t0\t0\t0\n");
  int64_t cum = 0, cum_req = 0;
  for (guint k = 0; k < sizes->len; k++) {
    const RunBatchSize *b = &g_array_index(sizes, RunBatchSize, k);
    cum += b->count;
    cum_req += b->count * b->size;
    cs_dat_field(dat, label);
    g_string_append_printf(dat,
                           "\t%d\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%.9g\t%" G_GINT64_FORMAT
                           "\t%.9g\n",
                           b->size, b->count, cum, (double)cum / (double)n, cum_req,
                           (double)cum_req / (double)requests);
  }
}

/* The x range of batch size CDFs whose largest size is max_size: from 0 (the
 * curves rise from it) with a margin; integer tics when few. */
void cs_batch_xaxis(GString *gp, int max_size)
{
  int margin = MAX(1, max_size / 20);
  g_string_append_printf(gp, "set xrange [0:%d]\n", max_size + margin);
  if (max_size <= 16)
    g_string_append(gp, "set xtics 1\n");
}

void cs_figure_batch_sizes(CsFigureSet *set, const RunSummary *r)
{
  for (int m = 0; m < r->n_models; m++)
    if (!r->models[m].batch_sizes) {
      cs_figure_set_note(set, "batch_sizes skipped: %s has no batch sizes (written by an older "
                              "clustersim; run it again)",
                         r->path);
      return;
    }
  int shown = 0, max_size = 0;
  for (int m = 0; m < r->n_models; m++) {
    const GArray *sizes = r->models[m].batch_sizes;
    if (sizes->len == 0) {
      cs_figure_set_note(set, "batch_sizes: %s ran no batch of measured requests, no curve",
                         r->models[m].name);
      continue;
    }
    shown++;
    max_size = MAX(max_size, g_array_index(sizes, RunBatchSize, sizes->len - 1).size);
  }
  if (shown == 0) {
    cs_figure_set_note(set, "batch_sizes skipped: no model of %s ran a batch of measured "
                            "requests",
                       r->path);
    return;
  }
  CsFigure *f = cs_figure_set_add(set, "batch_sizes");
  g_string_append(f->dat,
                  "# clustersim run figure data: batch size distribution per model, from "
                  "summary.json\n"
                  "# (models[].batches.sizes: how many batches of each size held measured "
                  "requests).\n"
                  "# One block per model with a batch, separated by two blank lines "
                  "(gnuplot's index 0, 1, ...),\n"
                  "# a row per size, the first at size 0 (nothing yet): batches of that "
                  "size, cum_batches of\n"
                  "# size <= it, fraction_batches = cum_batches / batches.count; "
                  "cum_requests = the requests in\n"
                  "# those batches (size x batches, summed), fraction_requests = "
                  "cum_requests / all requests in\n"
                  "# the model's batches.\n"
                  "# model\t" CS_BATCH_CDF_COLUMNS "\n");
  GString *medians = g_string_new(NULL);
  GString *plot = g_string_new(NULL);
  int block = 0;
  for (int m = 0; m < r->n_models; m++) {
    const RunModel *rm = &r->models[m];
    if (rm->batch_sizes->len == 0)
      continue;
    g_string_append(f->dat, block ? "\n\n" : "");
    cs_batch_cdf_block(f->dat, rm->name, rm->batch_sizes);
    int med = cs_batch_quantile(rm->batch_sizes, 50, FALSE);
    int med_req = cs_batch_quantile(rm->batch_sizes, 50, TRUE);
    cs_dat_field(medians, rm->name);
    g_string_append_printf(medians, "\t%d\t%d\t%d\t%" G_GINT64_FORMAT "\n", med, med_req,
                           cs_batch_quantile(rm->batch_sizes, 90, FALSE), rm->batches);
    const char *c = cs_figure_colour(m);
    char *t1 = g_strdup_printf("%s by batches (n = %" G_GINT64_FORMAT ", median %d)", rm->name,
                               rm->batches, med);
    char *t2 = g_strdup_printf("%s by requests (median %d)", rm->name, med_req);
    g_string_append_printf(plot, "%s    \"batch_sizes.dat\" index %d using 2:5 with steps lw 2 "
                                 "lc rgb \"%s\" title ",
                           block ? ", \\\n" : "", block, c);
    cs_gp_string(plot, t1);
    g_string_append_printf(plot, ", \\\n    \"batch_sizes.dat\" index %d using 2:7 with steps "
                                 "lw 2 dt 2 lc rgb \"%s\" title ",
                           block, c);
    cs_gp_string(plot, t2);
    g_free(t1);
    g_free(t2);
    block++;
  }
  /* The medians sit where the curves cross 0.5: filled by batches, open by
   * requests (every ::k::k picks model k's row of the last block). */
  for (int k = 0, m = 0; m < r->n_models; m++) {
    if (r->models[m].batch_sizes->len == 0)
      continue;
    g_string_append_printf(plot, ", \\\n    \"batch_sizes.dat\" index %d every ::%d::%d using "
                                 "2:(0.5) with points pt 7 ps 1.4 lc rgb \"%s\" notitle, \\\n"
                                 "    \"batch_sizes.dat\" index %d every ::%d::%d using "
                                 "3:(0.5) with points pt 6 ps 1.4 lw 2 lc rgb \"%s\" notitle",
                           block, k, k, cs_figure_colour(m), block, k, k, cs_figure_colour(m));
    k++;
  }
  g_string_append_printf(f->dat,
                         "\n\n# The medians (last block): nearest rank, the smallest size whose "
                         "batches reach rank\n"
                         "# ceil(n / 2) of the model's n batches (median_batches), or of its "
                         "requests counted in the\n"
                         "# batches they ran in (median_requests); p90_batches: rank ceil(0.9 "
                         "n).\n"
                         "# model\tmedian_batches\tmedian_requests\tp90_batches\tbatches\n%s",
                         medians->str);
  char *sub = cs_run_subtitle(r);
  char *title = g_strdup_printf("Batch sizes per model (batches holding measured requests)\n%s",
                                sub);
  cs_gp_begin(f, "batch size CDF per model, by batches and by requests, medians marked");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append(f->gp, " noenhanced\n"
                         "set xlabel \"batch size (requests)\"\n"
                         "set ylabel \"fraction with batch size <= x\"\n"
                         "set yrange [0:1]\nset ytics 0.1\n");
  cs_batch_xaxis(f->gp, max_size);
  g_string_append(f->gp, "set key below horizontal Left reverse height 1 maxcols 2\n"
                         "# Solid: fraction of the batches; dashed: fraction of the requests. "
                         "The medians (points)\n"
                         "# lie on the dotted line at 0.5.\n"
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
