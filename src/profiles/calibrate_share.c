/* The MPS share rule against the measured share tables, leaving one model
 * out (docs/gpu-model.md, "The MPS share rule"); see calibrate.h. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/calibrate.h"
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

/* The measured cells below 100 % of every model with a table, against the
 * profile of the same model; FALSE with error when a model has no profile. */
static GArray *collect(const CsInterferenceSet *set, const CsProfileSet *prof, const char *path,
                       const char *gpu_type, GPtrArray *names, GError **error)
{
  GArray *cells = g_array_new(FALSE, FALSE, sizeof(Cell));
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
      g_array_unref(cells);
      return NULL;
    }
    int m = (int)names->len;
    g_ptr_array_add(names, g_strdup(name));
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
  return cells;
}

static double predict_ms(const Cell *c, CsShareVariant v, double e, double gamma)
{
  if (v == CS_SHARE_POWER) {
    double d = isnan(c->wsm) ? 1.0 : CLAMP(c->wsm, 1e-6, 1.0);
    return c->profile_ms * (c->o.share < d ? pow(d / c->o.share, gamma) : 1.0);
  }
  return c->profile_ms * cs_share_rule_ratio(c->o.scalable, e, c->o.share);
}

CsCalibShare *cs_calib_share_run(const CsInterferenceSet *set, const CsProfileSet *prof,
                                 const char *profile_path, const char *gpu_type, double gamma,
                                 GError **error)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *cells = collect(set, prof, profile_path, gpu_type, names, error);
  if (!cells) {
    g_ptr_array_free(names, TRUE);
    return NULL;
  }
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
        double e = v == CS_SHARE_LOMO ? s->lomo_fit[c->o.model].e : v == CS_SHARE_FIT ? s->fit.e
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

static void stat3(FILE *out, const CsCalibStat *st)
{
  fprintf(out, "  %5.1f%% / %5.1f%% / %5.1f%%", st->median * 100.0, st->p90 * 100.0,
          st->max * 100.0);
}

void cs_calib_share_print(const CsCalibShare *s, FILE *out)
{
  static const char *const names[CS_SHARE_N_VARIANTS] = { "rule, lomo", "rule, in sample",
                                                          "rule, e = 0", "power (gamma)" };
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
