/* A run's LLM figure (figures.h): each LLM deployment's KV use and output
 * tokens per second over time, from llm_over_time.csv (docs/llm.md, "LLM
 * models in a scenario"). Runs without LLM deployments have no such file
 * and no such figure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "figures_run.h"

/* A number cell of llm_over_time.csv, checked. */
static gboolean cell(const CsCsv *csv, int col, const char *name, double *out, GError **error)
{
  char *end = NULL;
  *out = strtod(csv->fields[col], &end);
  if (end == csv->fields[col] || *end != '\0' || !isfinite(*out))
    return cs_csv_fail(csv, error, "%s: expected a number, got \"%s\"", name,
                       csv->fields[col]) >= 0;
  return TRUE;
}

gboolean cs_figure_llm_over_time(CsFigureSet *set, const RunSummary *r, GError **error)
{
  char *path = g_build_filename(r->dir, "llm_over_time.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_free(path);
    return TRUE; /* no LLM deployment */
  }
  static const char *const cols =
    "model,time_s,kv_util,preemptions,output_tokens_per_s,batches,arrivals,completions";
  CsCsv csv = { 0 };
  gboolean ok = cs_csv_open(&csv, path, error) && cs_csv_read_header(&csv, cols, error);
  int c_model = -1, c_t = -1, c_kv = -1, c_pre = -1, c_tok = -1;
  ok = ok && (c_model = cs_csv_require(&csv, "model", cols, error)) >= 0 &&
       (c_t = cs_csv_require(&csv, "time_s", cols, error)) >= 0 &&
       (c_kv = cs_csv_require(&csv, "kv_util", cols, error)) >= 0 &&
       (c_pre = cs_csv_require(&csv, "preemptions", cols, error)) >= 0 &&
       (c_tok = cs_csv_require(&csv, "output_tokens_per_s", cols, error)) >= 0;
  size_t n_cols = csv.n_fields;
  GString *dat = g_string_new(NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  int64_t preemptions = 0;
  int rc = 0;
  while (ok && (rc = cs_csv_next(&csv, error)) > 0) {
    double t, kv, pre, tok;
    ok = cs_csv_expect_fields(&csv, n_cols, error) && cell(&csv, c_t, "time_s", &t, error) &&
         cell(&csv, c_kv, "kv_util", &kv, error) &&
         cell(&csv, c_pre, "preemptions", &pre, error) &&
         cell(&csv, c_tok, "output_tokens_per_s", &tok, error);
    if (!ok)
      break;
    const char *m = csv.fields[c_model];
    if (names->len == 0 || strcmp(g_ptr_array_index(names, names->len - 1), m) != 0) {
      g_string_append(dat, names->len ? "\n\n" : "");
      g_ptr_array_add(names, g_strdup(m));
    }
    preemptions += (int64_t)pre;
    cs_dat_field(dat, m);
    g_string_append_printf(dat, "\t%.9g\t%.9g\t%.9g\t%.9g\n", t, 100 * kv, pre, tok);
  }
  if (ok && rc < 0)
    ok = FALSE;
  cs_csv_close(&csv);
  if (ok && names->len == 0)
    cs_figure_set_note(set, "llm_over_time skipped: %s has no bin", path);
  if (ok && names->len > 0) {
    CsFigure *f = cs_figure_set_add(set, "llm_over_time");
    g_string_append_printf(f->dat,
                           "# clustersim run figure data: each LLM deployment over time, from "
                           "llm_over_time.csv.\n# One block per deployment (gnuplot's index "
                           "0, 1, ...): the bin's start, its mean KV\n# blocks in use (%% of "
                           "the deployment's), requests preempted, output tokens per second.\n"
                           "# model\ttime_s\tkv_pct\tpreemptions\toutput_tokens_per_s\n%s",
                           dat->str);
    GString *top = g_string_new(NULL), *bottom = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++) {
      const char *name = g_ptr_array_index(names, i);
      g_string_append_printf(top, "%s\"llm_over_time.dat\" index %u using 2:3 with steps lw 2 "
                                  "lc rgb \"%s\" title ",
                             i ? ", \\\n       " : "", i, cs_figure_colour((int)i));
      cs_gp_string(top, name);
      g_string_append_printf(bottom, "%s\"llm_over_time.dat\" index %u using 2:5 with steps "
                                     "lw 2 lc rgb \"%s\" title ",
                             i ? ", \\\n       " : "", i, cs_figure_colour((int)i));
      cs_gp_string(bottom, name);
    }
    char *title = g_strdup_printf("LLM deployments over time (bins of %g s; %" G_GINT64_FORMAT
                                  " preemptions in all)",
                                  r->bin_s, preemptions);
    cs_gp_begin(f, "KV cache in use (top) and output tokens per second (bottom) per LLM "
                   "deployment over time");
    cs_gp_outputs_begin(f);
    g_string_append(f->gp, "  set multiplot layout 2, 1 title ");
    cs_gp_string(f->gp, title);
    g_string_append_printf(f->gp,
                           " noenhanced\n"
                           "  set key top right\n  unset xlabel\n"
                           "  set ylabel \"KV blocks in use (%%)\"\n  set yrange [0:100]\n"
                           "  plot %s\n"
                           "  set xlabel \"simulated time (s)\"\n  unset key\n"
                           "  set ylabel \"output tokens/s\"\n  set yrange [0:*]\n"
                           "  plot %s\n  unset multiplot\n",
                           top->str, bottom->str);
    cs_gp_end(f);
    g_free(title);
    g_string_free(top, TRUE);
    g_string_free(bottom, TRUE);
  }
  g_string_free(dat, TRUE);
  g_ptr_array_free(names, TRUE);
  g_free(path);
  return ok;
}
