/* The MIG rule against measured MIG tables, leaving one model out, and the
 * MPS model for several processes of one model against the measured ones
 * (docs/gpu-model.md, "MIG"); see calibrate.h. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_min.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "calibrate/calibrate.h"
#include "profiles/mig_table.h"

typedef struct {
  int model;
  int gpcs, batch;
  double f;        /* gpcs / gpu_gpcs */
  double measured; /* latency on the instance over the whole GPU, same batch, alone */
} Obs;

/* The whole GPU's curve of one model: its single-process cells at gpu_gpcs,
 * and the least-squares slope as the profile loader fits it (through the
 * origin when the intercept would be negative, 0 when the slope would be). */
typedef struct {
  int n;
  double *batch, *lat, slope;
} Curve;

static void curve_of(const CsMigTable *t, Curve *c)
{
  int g = cs_mig_table_gpu_gpcs(t), n = cs_mig_table_n_cells(t);
  c->batch = g_new(double, n);
  c->lat = g_new(double, n);
  c->n = 0;
  for (int i = 0; i < n; i++) {
    const CsMigCell *x = cs_mig_table_cell(t, i);
    if (x->gpcs == g && x->processes == 1) {
      c->batch[c->n] = x->batch;
      c->lat[c->n++] = x->latency_ms;
    }
  }
  double c0, c1, cov00, cov01, cov11, ss;
  c->slope = 0.0;
  if (c->n >= 2) {
    gsl_fit_linear(c->batch, 1, c->lat, 1, (size_t)c->n, &c0, &c1, &cov00, &cov01, &cov11, &ss);
    if (c0 < 0.0)
      gsl_fit_mul(c->batch, 1, c->lat, 1, (size_t)c->n, &c1, &cov11, &ss);
    c->slope = MAX(c1, 0.0);
  }
}

typedef struct {
  const Obs *obs;
  const Curve *curves;
  int n, skip; /* model left out, -1 none */
} FitData;

static double rule(const Curve *c, const Obs *o, double kappa)
{
  return cs_mig_rule_ratio_curve(c->batch, c->lat, c->n, c->slope, o->batch, o->f, kappa);
}

static double sse(double kappa, void *p)
{
  const FitData *d = p;
  double s = 0.0;
  for (int i = 0; i < d->n; i++) {
    const Obs *o = &d->obs[i];
    if (o->model == d->skip)
      continue;
    double r = log(rule(&d->curves[o->model], o, kappa) / o->measured);
    s += r * r;
  }
  return s;
}

/* kappa minimising the squared log errors (GSL's Brent minimiser on
 * [0.05, 3]); the best of a coarse grid brackets it. */
static double fit_kappa(const Obs *obs, const Curve *curves, int n, int skip)
{
  FitData d = { obs, curves, n, skip };
  double best = 1.0, best_v = INFINITY;
  for (int k = 1; k < 60; k++) {
    double x = 0.05 * k, v = sse(x, &d);
    if (v < best_v) {
      best_v = v;
      best = x;
    }
  }
  double lo = MAX(best - 0.05, 0.05), hi = MIN(best + 0.05, 3.0);
  if (!(sse(best, &d) < sse(lo, &d) && sse(best, &d) < sse(hi, &d)))
    return best; /* at an edge of the range: no interior minimum to refine */
  gsl_function fn = { sse, &d };
  gsl_min_fminimizer *m = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  gsl_min_fminimizer_set(m, &fn, best, lo, hi);
  for (int it = 0; it < 100; it++) {
    if (gsl_min_fminimizer_iterate(m) != GSL_SUCCESS)
      break;
    if (gsl_min_test_interval(gsl_min_fminimizer_x_lower(m), gsl_min_fminimizer_x_upper(m),
                              1e-10, 0.0) == GSL_SUCCESS)
      break;
  }
  double x = gsl_min_fminimizer_x_minimum(m);
  gsl_set_error_handler(old);
  gsl_min_fminimizer_free(m);
  return x;
}

void cs_calib_mig_free(CsCalibMig *s)
{
  if (!s)
    return;
  g_strfreev(s->models);
  for (int v = 0; v < CS_MIG_N_VARIANTS; v++)
    g_free(s->stats[v]);
  g_free(s->lomo_kappa);
  g_free(s);
}

/* The MPS model's per-process ratio for p copies of one batch b with no
 * table and no share: demands 1 each (no WSM in the data), so D = p, and
 * each is pressed by p - 1 aggressors through fb. */
static double mps_procs_ratio(const CsInterferenceFallback *fb, int batch, int p)
{
  CsPairSide side = { batch, 1.0, fb->default_util, 0.0 }; /* phi unknown: the floor */
  double term = cs_interference_combine_term(fb, cs_interference_fallback_excess(fb, &side,
                                                                                &side));
  return p * cs_interference_combine_factor(fb, term * (p - 1));
}

CsCalibMig *cs_calib_mig_run(const CsInterferenceSet *set, const char *path, GError **error)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *obs = g_array_new(FALSE, FALSE, sizeof(Obs));
  GArray *procs_err = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *procs = g_array_new(FALSE, FALSE, sizeof(Obs)); /* measured: procs ratio; f, gpcs;
                                                             batch; gpcs field holds p */
  GArray *procs_p = g_array_new(FALSE, FALSE, sizeof(int));
  Curve *curves = g_new0(Curve, MAX(cs_interference_set_n_models(set), 1));
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  for (int i = 0; i < cs_interference_set_n_models(set); i++) {
    const CsMigTable *t = cs_interference_mig(set, i);
    if (!t)
      continue;
    int m = (int)names->len;
    g_ptr_array_add(names, g_strdup(cs_interference_set_model_name(set, i)));
    curve_of(t, &curves[m]);
    int gg = cs_mig_table_gpu_gpcs(t);
    for (int k = 0; k < cs_mig_table_n_cells(t); k++) {
      const CsMigCell *c = cs_mig_table_cell(t, k);
      if (c->processes > 1) {
        double measured = cs_mig_table_procs_ratio(t, c->gpcs, c->batch, c->processes);
        double pred = mps_procs_ratio(fb, c->batch, c->processes);
        double e = fabs(pred - measured) / measured;
        g_array_append_val(procs_err, e);
        Obs po = { m, c->gpcs, c->batch, (double)c->gpcs / cs_mig_table_gpu_gpcs(t), measured };
        g_array_append_val(procs, po);
        g_array_append_val(procs_p, c->processes);
        continue;
      }
      if (c->gpcs == gg)
        continue;
      double whole = NAN;
      for (int j = 0; j < cs_mig_table_n_cells(t); j++) {
        const CsMigCell *w = cs_mig_table_cell(t, j);
        if (w->gpcs == gg && w->batch == c->batch && w->processes == 1)
          whole = w->latency_ms;
      }
      if (isnan(whole))
        continue;
      Obs o = { m, c->gpcs, c->batch, (double)c->gpcs / gg, c->latency_ms / whole };
      g_array_append_val(obs, o);
    }
  }
  if (obs->len == 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: no model has a MIG cell "
                "below the whole GPU measured at a batch the whole GPU has too (the MIG rule's "
                "check needs some)", path);
    g_ptr_array_free(names, TRUE);
    g_array_unref(obs);
    g_array_unref(procs_err);
    g_array_unref(procs);
    g_array_unref(procs_p);
    g_free(curves);
    return NULL;
  }
  CsCalibMig *s = g_new0(CsCalibMig, 1);
  s->n_models = (int)names->len;
  g_ptr_array_add(names, NULL);
  s->models = (char **)g_ptr_array_free(names, FALSE);
  const Obs *o = (const Obs *)obs->data;
  int n = (int)obs->len;
  s->kappa = fit_kappa(o, curves, n, -1);
  s->lomo_kappa = g_new(double, s->n_models);
  for (int m = 0; m < s->n_models; m++)
    s->lomo_kappa[m] = fit_kappa(o, curves, n, m);
  double *err = g_new(double, n);
  for (int v = 0; v < CS_MIG_N_VARIANTS; v++) {
    s->stats[v] = g_new0(CsCalibStat, s->n_models + 1);
    for (int m = 0; m <= s->n_models; m++) {
      int k_err = 0;
      for (int k = 0; k < n; k++) {
        if (m < s->n_models && o[k].model != m)
          continue;
        const Curve *c = &curves[o[k].model];
        double pred = v == CS_MIG_LOMO    ? rule(c, &o[k], s->lomo_kappa[o[k].model])
                      : v == CS_MIG_FIT   ? rule(c, &o[k], s->kappa)
                      : v == CS_MIG_KAPPA1 ? rule(c, &o[k], 1.0)
                                           : 1.0 / o[k].f; /* power, gamma 1, d 1 */
        err[k_err++] = fabs(pred - o[k].measured) / o[k].measured;
      }
      cs_calib_stat_of(err, k_err, &s->stats[v][m]);
    }
  }
  cs_calib_stat_of((double *)procs_err->data, (int)procs_err->len, &s->procs_mps);
  {
    double *pe = g_new(double, MAX(procs->len, 1));
    for (guint k = 0; k < procs->len; k++) {
      const Obs *po = &g_array_index(procs, Obs, k);
      const Curve *c = &curves[po->model];
      double pred = cs_mig_rule_procs_ratio_curve(c->batch, c->lat, c->n, c->slope, po->batch,
                                                  po->f, s->lomo_kappa[po->model],
                                                  g_array_index(procs_p, int, k));
      pe[k] = fabs(pred - po->measured) / po->measured;
    }
    cs_calib_stat_of(pe, (int)procs->len, &s->procs_rule);
    g_free(pe);
  }
  g_free(err);
  for (int m = 0; m < s->n_models; m++) {
    g_free(curves[m].batch);
    g_free(curves[m].lat);
  }
  g_free(curves);
  g_array_unref(obs);
  g_array_unref(procs_err);
  g_array_unref(procs);
  g_array_unref(procs_p);
  return s;
}

static void stat3(FILE *out, const CsCalibStat *st)
{
  fprintf(out, "  %5.1f%% / %5.1f%% / %5.1f%%", st->median * 100.0, st->p90 * 100.0,
          st->max * 100.0);
}

void cs_calib_mig_print(const CsCalibMig *s, FILE *out)
{
  static const char *const names[CS_MIG_N_VARIANTS] = { "rule, lomo", "rule, in sample",
                                                        "rule, kappa = 1", "power (1/f)" };
  fprintf(out, "\nMIG rule for instances without a measurement: lat(b, f) / lat(b) = "
          "L(b / f^kappa) / L(b), L the whole GPU's curve;\nagainst every measured "
          "single-process cell below the whole GPU: error median / p90 / max\n%-18s %5s",
          "model", "n");
  for (int v = 0; v < CS_MIG_N_VARIANTS; v++)
    fprintf(out, "  %24s", names[v]);
  fputc('\n', out);
  for (int m = 0; m <= s->n_models; m++) {
    fprintf(out, "%-18s %5d", m < s->n_models ? s->models[m] : "pooled", s->stats[0][m].n);
    for (int v = 0; v < CS_MIG_N_VARIANTS; v++)
      stat3(out, &s->stats[v][m]);
    fputc('\n', out);
  }
  fprintf(out, "  kappa on every model: %.4f\n", s->kappa);
  for (int m = 0; m < s->n_models; m++)
    fprintf(out, "  kappa without %-16s %.4f\n", s->models[m], s->lomo_kappa[m]);
  fprintf(out, "Several processes p of one model in one instance against the measured "
          "per-process ratio (n %d):\n  the MIG rule's, L(p b / f^kappa) / L(b / f^kappa), "
          "kappa without the model: median %.1f%% / p90 %.1f%% / max %.1f%%\n"
          "  the MPS model's (D = p, the interference fallback):          median %.1f%% / "
          "p90 %.1f%% / max %.1f%%\n", s->procs_rule.n, s->procs_rule.median * 100.0,
          s->procs_rule.p90 * 100.0, s->procs_rule.max * 100.0, s->procs_mps.median * 100.0,
          s->procs_mps.p90 * 100.0, s->procs_mps.max * 100.0);
}
