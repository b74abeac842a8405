/* The MPS share rule against the measured share tables, leaving one model
 * out (docs/gpu-model.md, "The MPS share rule"); see calibrate.h. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "common/json_input.h"
#include "calibrate/calibrate.h"
#include "profiles/profile.h"
#include "profiles/share_rule.h"

typedef struct {
  CsShareObs o;
  double measured_ms, profile_ms, wsm; /* wsm: demand of the power rule, NAN unknown */
  gboolean strict;                     /* the batch's 100 % latency is measured */
} Cell;

void cs_calib_share_free(CsCalibShare *s)
{
  if (!s)
    return;
  g_strfreev(s->models);
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
    g_free(s->stats[v]);
  g_free(s->lomo_fit);
  g_free(s);
}

static int name_index(GPtrArray *names, const char *name);

/* Appends the measured cells below 100 % of every model with a table,
 * against the profile of the same model, to cells (model indices by name in
 * names); FALSE with error when a model has no profile. */
static gboolean collect(const CsInterferenceSet *set, const CsProfileSet *prof, const char *path,
                        const char *gpu_type, GPtrArray *names, GArray *cells, GError **error)
{
  for (int i = 0; i < cs_interference_set_n_models(set); i++) {
    CsShareCell *sc = NULL;
    int n = cs_interference_share_cells(set, i, &sc);
    if (n == 0)
      continue;
    const char *name = cs_interference_set_model_name(set, i);
    const CsModelProfile *p = cs_profile_set_lookup(prof, gpu_type, name);
    if (!p) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: no profile of \"%s\" on GPU type \"%s\" (the "
                  "share rule's check needs one for every model with a share table)", path, name,
                  gpu_type);
      g_free(sc);
      return FALSE;
    }
    int m = name_index(names, name);
    for (int k = 0; k < n; k++) {
      if (!(sc[k].share < 1.0))
        continue;
      gboolean strict = FALSE;
      for (int j = 0; j < n; j++)
        strict |= sc[j].batch == sc[k].batch && sc[j].share >= 1.0;
      const CsBatchPoint *bp = cs_model_profile_nearest_point(p, sc[k].batch);
      double profile_ms = (double)cs_model_profile_latency_ns(p, sc[k].batch) / 1e6;
      Cell c = { .o = { m, sc[k].batch, cs_share_scalable_fraction(p, sc[k].batch), sc[k].share,
                        sc[k].latency_ms / profile_ms },
                 .measured_ms = sc[k].latency_ms, .profile_ms = profile_ms,
                 .wsm = bp ? bp->creq_pct[CS_CREQ_WSM] / 100.0 : NAN, .strict = strict };
      if (isnan(c.o.scalable))
        c.o.scalable = 1.0;
      g_array_append_val(cells, c);
    }
    g_free(sc);
  }
  return TRUE;
}

static double predict_ms(const Cell *c, CsShareVariant v, double e, double gamma)
{
  if (v == CS_SHARE_POWER) {
    double d = isnan(c->wsm) ? 1.0 : CLAMP(c->wsm, 1e-6, 1.0);
    return c->profile_ms * (c->o.share < d ? pow(d / c->o.share, gamma) : 1.0);
  }
  return c->profile_ms * cs_share_rule_ratio(c->o.scalable, e, c->o.share);
}

/* Fits, leaves each model out and scores every variant on cells (taken);
 * names (taken) are the models of cells' indices. */
static CsCalibShare *run_cells(GArray *cells, GPtrArray *names, double gamma)
{
  CsCalibShare *s = g_new0(CsCalibShare, 1);
  s->n_models = (int)names->len;
  g_ptr_array_add(names, NULL);
  s->models = (char **)g_ptr_array_free(names, FALSE);
  int n = (int)cells->len;
  CsShareObs *obs = g_new(CsShareObs, (size_t)n + 1);
  gboolean *use = g_new(gboolean, (size_t)n + 1);
  for (int k = 0; k < n; k++)
    obs[k] = g_array_index(cells, Cell, k).o;
  cs_fit_share_serial(obs, n, NULL, &s->fit);
  s->lomo_fit = g_new0(CsShareFit, MAX(s->n_models, 1));
  for (int m = 0; m < s->n_models; m++) {
    for (int k = 0; k < n; k++)
      use[k] = obs[k].model != m;
    if (!cs_fit_share_serial(obs, n, use, &s->lomo_fit[m]))
      s->lomo_fit[m] = s->fit;
  }
  double *err = g_new(double, (size_t)n + 1), *strict = g_new(double, (size_t)n + 1);
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++) {
    s->stats[v] = g_new0(CsCalibStat, s->n_models + 1);
    int n_strict = 0;
    for (int m = 0; m <= s->n_models; m++) {
      int k_err = 0;
      for (int k = 0; k < n; k++) {
        const Cell *c = &g_array_index(cells, Cell, k);
        if (m < s->n_models && c->o.model != m)
          continue;
        double e = v == CS_SHARE_LOMO   ? s->lomo_fit[c->o.model].e
                   : v == CS_SHARE_FIT  ? s->fit.e
                   : v == CS_SHARE_SHIPPED ? CS_SHARE_RULE_DEFAULT_SERIAL
                                        : 0.0;
        double x = fabs(predict_ms(c, (CsShareVariant)v, e, gamma) - c->measured_ms) /
                   c->measured_ms;
        err[k_err++] = x;
        if (m == s->n_models && c->strict)
          strict[n_strict++] = x;
      }
      cs_calib_stat_of(err, k_err, &s->stats[v][m]);
    }
    cs_calib_stat_of(strict, n_strict, &s->strict[v]);
  }
  g_free(err);
  g_free(strict);
  g_free(obs);
  g_free(use);
  g_array_unref(cells);
  return s;
}

CsCalibShare *cs_calib_share_run(const CsInterferenceSet *set, const CsProfileSet *prof,
                                 const char *profile_path, const char *gpu_type, double gamma,
                                 GError **error)
{
  return cs_calib_share_run_all(set, prof, profile_path, gpu_type, NULL, 0, gamma, NULL, error);
}

static int name_index(GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp(g_ptr_array_index(names, i), name) == 0)
      return (int)i;
  g_ptr_array_add(names, g_strdup(name));
  return (int)names->len - 1;
}

static gboolean whole_gpu(const CsMeasuredRow *r)
{
  return isnan(r->share_pct) || r->share_pct >= 100.0;
}

/* The rows the check reads: alone, not in a MIG instance, no time quota
 * below 100 %. */
static gboolean usable(const CsMeasuredRow *r)
{
  return r->kind == CS_MEASURED_ISOLATED && r->mig_gpcs == 0 &&
         (isnan(r->time_quota_pct) || r->time_quota_pct >= 100.0);
}

/* Appends the cells of one measured file to cells (model indices by name in
 * names): per model, its rows at 100 % are its profile (least-squares line
 * through them as the profile loader fits it, no payload, so f = alpha b /
 * L(b)), and every row below 100 % at a batch measured at 100 % is a cell,
 * measured over the 100 % latency of the same batch (the shape, not the
 * level). FALSE with error when a (model, batch, share) is measured twice. */
static gboolean collect_measured(const CsMeasuredFile *f, GArray *cells, GPtrArray *names,
                                 int *n_models, GError **error)
{
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *models = g_ptr_array_new();
  gboolean ok = TRUE;
  for (int i = 0; ok && i < f->n_rows; i++) {
    const CsMeasuredRow *r = &f->rows[i];
    if (!usable(r))
      continue;
    char *key = g_strdup_printf("%s\t%d\t%.9g", r->model, r->batch,
                                whole_gpu(r) ? 100.0 : r->share_pct);
    gpointer prev = g_hash_table_lookup(seen, key);
    if (prev) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: line %" G_GINT64_FORMAT
                  ": %s at batch %d and share %g %% is measured twice (also line %"
                  G_GINT64_FORMAT "); the share rule's check needs one latency per cell",
                  f->path, r->line, r->model, r->batch, whole_gpu(r) ? 100.0 : r->share_pct,
                  f->rows[GPOINTER_TO_INT(prev) - 1].line);
      g_free(key);
      ok = FALSE;
      break;
    }
    g_hash_table_insert(seen, key, GINT_TO_POINTER(i + 1));
    gboolean known = FALSE;
    for (guint k = 0; k < models->len; k++)
      known |= strcmp(g_ptr_array_index(models, k), r->model) == 0;
    if (!known)
      g_ptr_array_add(models, r->model);
  }
  for (guint k = 0; ok && k < models->len; k++) {
    const char *name = g_ptr_array_index(models, k);
    int n100 = 0;
    double *xb = g_new(double, f->n_rows), *yl = g_new(double, f->n_rows);
    for (int i = 0; i < f->n_rows; i++) {
      const CsMeasuredRow *r = &f->rows[i];
      if (usable(r) && whole_gpu(r) && strcmp(r->model, name) == 0) {
        xb[n100] = r->batch;
        yl[n100++] = r->latency_ms;
      }
    }
    double c0 = 0, c1 = 0, cov00, cov01, cov11, ss;
    if (n100 >= 2) {
      gsl_fit_linear(xb, 1, yl, 1, (size_t)n100, &c0, &c1, &cov00, &cov01, &cov11, &ss);
      if (c0 < 0.0)
        gsl_fit_mul(xb, 1, yl, 1, (size_t)n100, &c1, &cov11, &ss);
      c1 = MAX(c1, 0.0);
    }
    if (n100 >= 2)
      (*n_models)++;
    int m = n100 >= 2 ? name_index(names, name) : -1;
    for (int i = 0; m >= 0 && i < f->n_rows; i++) {
      const CsMeasuredRow *r = &f->rows[i];
      if (!usable(r) || whole_gpu(r) || strcmp(r->model, name) != 0)
        continue;
      double full = NAN;
      for (int j = 0; j < n100; j++)
        if ((int)xb[j] == r->batch)
          full = yl[j];
      if (isnan(full))
        continue;
      Cell c = { .o = { m, r->batch, CLAMP(c1 * r->batch / full, 0.0, 1.0), r->share_pct / 100.0,
                        r->latency_ms / full },
                 .measured_ms = r->latency_ms, .profile_ms = full, .wsm = NAN, .strict = TRUE };
      g_array_append_val(cells, c);
    }
    g_free(xb);
    g_free(yl);
  }
  g_ptr_array_free(models, TRUE);
  g_hash_table_unref(seen);
  return ok;
}

CsCalibShare *cs_calib_share_run_all(const CsInterferenceSet *set, const CsProfileSet *prof,
                                     const char *profile_path, const char *gpu_type,
                                     const CsMeasuredFile *const *files, int n_files,
                                     double gamma, int *n_models, GError **error)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *cells = g_array_new(FALSE, FALSE, sizeof(Cell));
  int models = 0;
  if (set && !collect(set, prof, profile_path, gpu_type, names, cells, error)) {
    g_ptr_array_free(names, TRUE);
    g_array_unref(cells);
    return NULL;
  }
  models = (int)names->len;
  for (int i = 0; i < n_files; i++)
    if (!collect_measured(files[i], cells, names, &models, error)) {
      g_ptr_array_free(names, TRUE);
      g_array_unref(cells);
      return NULL;
    }
  if (n_models)
    *n_models = models;
  if (cells->len == 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: no model has a latency "
                "alone below a 100 %% share at a batch also measured at 100 %% (the share "
                "rule's check needs some)", n_files > 0 ? files[0]->path : "(no file)");
    g_ptr_array_free(names, TRUE);
    g_array_unref(cells);
    return NULL;
  }
  return run_cells(cells, names, gamma);
}

static void stat3(FILE *out, const CsCalibStat *st)
{
  fprintf(out, "  %5.1f%% / %5.1f%% / %5.1f%%", st->median * 100.0, st->p90 * 100.0,
          st->max * 100.0);
}

void cs_calib_share_print(const CsCalibShare *s, FILE *out)
{
  static const char *const names[CS_SHARE_N_VARIANTS] = { "rule, lomo", "rule, in sample",
                                                          "rule, e = 0", "power (gamma)",
                                                          "rule, e shipped" };
  fprintf(out, "\nMPS share rule for models without a share table: lat(b, r) = lat(b) x (1 + "
          "(1 - e) f(b) (1/r - 1)),\nf from the profile; against every measured share-table "
          "cell below 100 %%: error median / p90 / max\n%-18s %5s", "model", "n");
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
    fprintf(out, "  %24s", names[v]);
  fputc('\n', out);
  for (int m = 0; m <= s->n_models; m++) {
    fprintf(out, "%-18s %5d", m < s->n_models ? s->models[m] : "pooled", s->stats[0][m].n);
    for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
      stat3(out, &s->stats[v][m]);
    fputc('\n', out);
  }
  fprintf(out, "%-18s %5d", "pooled, strict", s->strict[0].n);
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
    stat3(out, &s->strict[v]);
  fprintf(out, "\n(strict: the batches whose 100 %% latency is measured, where the profile's "
          "latency does not come from the share table itself)\n");
  fprintf(out, "  e on every model (n %d%s): %.4f [%.4f, %.4f]  sigma %.4f\n", s->fit.n,
          s->fit.converged ? "" : ", not converged", s->fit.e, s->fit.ci[0], s->fit.ci[1],
          s->fit.sigma);
  for (int m = 0; m < s->n_models; m++)
    fprintf(out, "  e without %-16s %.4f\n", s->models[m], s->lomo_fit[m].e);
}

static void source_row(FILE *out, const char *name, int models, const CsCalibShare *s)
{
  fprintf(out, "%-28s %6d %5d", name, models, s->stats[0][s->n_models].n);
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
    stat3(out, &s->stats[v][s->n_models]);
  fprintf(out, "  %.4f\n", s->fit.e);
}

void cs_calib_share_sources_print(const CsGpuCalibration *c, FILE *out)
{
  static const char *const names[CS_SHARE_N_VARIANTS] = { "rule, lomo", "rule, in sample",
                                                          "rule, e = 0", "power (gamma)",
                                                          "rule, e shipped" };
  fprintf(out, "\nThe share rule per source (each model's 100 %% latencies its profile, cells "
          "below 100 %%; shape only):\nerror median / p90 / max, e fitted on the source (e "
          "shipped: %.4g)\n%-28s %6s %5s", CS_SHARE_RULE_DEFAULT_SERIAL, "source", "models",
          "n");
  for (int v = 0; v < CS_SHARE_N_VARIANTS; v++)
    fprintf(out, "  %24s", names[v]);
  fprintf(out, "  e\n");
  if (c->share)
    source_row(out, "share tables (iGniter)", c->share->n_models, c->share);
  for (int i = 0; i < c->n_share_sources; i++) {
    char *base = g_path_get_basename(c->share_source_paths[i]);
    source_row(out, base, c->share_source_models[i], c->share_sources[i]);
    g_free(base);
  }
  source_row(out, "all at once", c->share_pooled->n_models, c->share_pooled);
  fprintf(out, "(all at once: e fitted on every cell; lomo leaves a model out of every source "
          "that has it)\n");
}
