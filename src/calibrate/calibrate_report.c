/* The calibration's reports: the text `clustersim calibrate` prints and the
 * CSV of every pair latency (--points); see calibrate.h. */
#include <math.h>

#include "calibrate/calibrate.h"

static void pct(FILE *out, double x)
{
  if (isnan(x))
    fprintf(out, "   n/a");
  else
    fprintf(out, "%5.1f%%", x * 100.0);
}

void cs_gpu_calibration_print(const CsGpuCalibration *c, const CsGpuCalibrateOptions *opt,
                              FILE *out)
{
  fprintf(out, "GPU execution model vs measured co-location (docs/gpu-model.md)\n");
  fprintf(out, "interference: %s\ncalibration:  %s\nprofile:      %s\ngamma:        %g\n\n",
          opt->interference_path, opt->calibration_path,
          opt->profile_path ? opt->profile_path : "(none)", opt->gamma > 0 ? opt->gamma : 1.0);
  fprintf(out, "Measured pairs (two workers under MPS, closed loop): error |sim - real| / real,"
          " median / p90\n");
  fprintf(out, "%-18s %5s", "pair", "n");
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    fprintf(out, "  %15s", cs_calib_variant_name((CsCalibVariant)v));
  fputc('\n', out);
  for (int p = 0; p <= c->n_pairs; p++) {
    fprintf(out, "%-18s %5d", p < c->n_pairs ? c->pair_names[p] : "total",
            c->stats[0][p].n);
    for (int v = 0; v < CS_CALIB_N_VARIANTS; v++) {
      fputs("  ", out);
      pct(out, c->stats[v][p].median);
      fputs(" / ", out);
      pct(out, c->stats[v][p].p90);
    }
    fputc('\n', out);
  }
  fprintf(out, "\nBy model (its latencies as the victim; lomo: every row the model is in, "
          "fitted without it)\n%-18s %5s", "model", "n");
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    fprintf(out, "  %15s", cs_calib_variant_name((CsCalibVariant)v));
  fprintf(out, "  %15s\n", "lomo");
  for (int m = 0; m < c->n_models; m++) {
    fprintf(out, "%-18s %5d", c->model_names[m], c->by_model[0][m].n);
    for (int v = 0; v <= CS_CALIB_N_VARIANTS; v++) {
      const CsCalibStat *st = v < CS_CALIB_N_VARIANTS ? &c->by_model[v][m] : &c->lomo[m];
      fputs("  ", out);
      pct(out, st->median);
      fputs(" / ", out);
      pct(out, st->p90);
    }
    fputc('\n', out);
  }
  fprintf(out, "\nModel fit: slowdown = 1 + c * b_aggressor^x * (4 s_aggressor s_victim)^z, "
          "log least squares (95 %% intervals)\n");
  const CsBatchShareFit *a = &c->fit;
  fprintf(out, "  all pairs (n %d%s): c %.5f [%.5f, %.5f]  x %.4f [%.4f, %.4f]  "
          "z %.4f [%.4f, %.4f]  sigma %.4f\n", a->n, a->converged ? "" : ", not converged",
          a->c, a->ci[0][0], a->ci[0][1], a->x, a->ci[1][0], a->ci[1][1], a->z, a->ci[2][0],
          a->ci[2][1], a->sigma);
  for (int p = 0; p < c->n_pairs; p++)
    fprintf(out, "  without %-24s c %.5f  x %.4f  z %.4f  (constant %.4f)\n", c->pair_names[p],
            c->lopo_fit[p].c, c->lopo_fit[p].x, c->lopo_fit[p].z, c->loo_const[p]);
  for (int m = 0; m < c->n_models; m++)
    fprintf(out, "  without model %-16s c %.5f  x %.4f  z %.4f\n", c->model_names[m],
            c->lomo_fit[m].c, c->lomo_fit[m].x, c->lomo_fit[m].z);
  fprintf(out, "  constant on all pairs: %.4f\n  scale per measured pair (victim | aggressor):",
          c->all_const);
  for (int v = 0; v < c->n_models; v++)
    for (int g = 0; g < c->n_models; g++)
      if (!isnan(c->scale[v][g]))
        fprintf(out, " %s|%s %.4f", c->model_names[v], c->model_names[g], c->scale[v][g]);
  fputc('\n', out);
  fprintf(out, "\nPublished co-locations (open loop, constant rate, 10 s after 1 s warm-up): "
          "mean GPU latency per batch\n");
  fprintf(out, "%-24s %-9s %5s %6s %11s %10s %7s %10s %7s %12s %7s\n", "experiment", "model",
          "batch", "share", "measured_ms", "sim_ms", "error", "unseen_ms", "error", "formula_ms",
          "error");
  for (int i = 0; i < c->n_colocations; i++) {
    const CsCalibColocation *col = &c->colocations[i];
    for (int k = 0; k < col->n_workers; k++) {
      const CsCalibWorker *w = &col->workers[k];
      char share[16];
      if (w->share > 0)
        g_snprintf(share, sizeof share, "%.4g%%", w->share * 100.0);
      else
        g_snprintf(share, sizeof share, "none");
      fprintf(out, "%-24s %-9s %5d %6s ", k == 0 ? col->name : "", w->model, w->batch, share);
      if (isnan(w->measured_ms))
        fprintf(out, "%11s ", "-");
      else
        fprintf(out, "%10.3f%s ", w->measured_ms, col->approx ? "~" : " ");
      for (int k2 = 0; k2 < 2; k2++) {
        double sim = k2 == 0 ? w->sim_ms : w->sim_unseen_ms;
        fprintf(out, "%10.3f ", sim);
        if (isnan(w->measured_ms))
          fprintf(out, "%7s ", "");
        else
          fprintf(out, "%+6.1f%% ", (sim - w->measured_ms) / w->measured_ms * 100.0);
      }
      fprintf(out, "%12.3f ", w->sim_formula_ms);
      if (!isnan(w->measured_ms))
        fprintf(out, "%+6.1f%%", (w->sim_formula_ms - w->measured_ms) / w->measured_ms * 100.0);
      fputc('\n', out);
    }
  }
  fprintf(out, "(~ = approximate value read off a figure or the text; unseen = the fallback "
          "model for every pair, as for pairs never measured; formula = without "
          "latency-vs-share tables: the MPS share rule)\n");
  if (c->share)
    cs_calib_share_print(c->share, out);
  if (c->share_pooled)
    cs_calib_share_sources_print(c, out);
  if (c->mig)
    cs_calib_mig_print(c->mig, out);
}

gboolean cs_gpu_calibration_write_points(const CsGpuCalibration *c, const char *path,
                                         GError **error)
{
  const CsCalibPoints *p = &c->points;
  GString *s = g_string_new("pair,victim,aggressor,measured_ms,solo_ms");
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    g_string_append_printf(s, ",%s_ms", cs_calib_variant_name((CsCalibVariant)v));
  g_string_append_c(s, '\n');
  for (int k = 0; k < p->n; k++) {
    g_string_append_printf(s, "%s,%s,%s,%.9g,%.9g", c->pair_names[p->pair[k]],
                           c->model_names[p->victim[k]], c->model_names[p->aggressor[k]],
                           p->measured_ms[k], p->solo_ms[k]);
    for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
      g_string_append_printf(s, ",%.9g", p->sim_ms[v][k]);
    g_string_append_c(s, '\n');
  }
  gboolean ok = g_file_set_contents(path, s->str, (gssize)s->len, error);
  g_string_free(s, TRUE);
  return ok;
}
