/* Least-squares fits of the interference model; see interference_fit.h. */
#include "profiles/interference_fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <string.h>

#include "profiles/interference.h"

typedef struct {
  const CsPairObs *obs;
  const CsShareObs *cells;  /* share fit */
  const int *rows;          /* indices into obs or cells */
  int n;
  const CsBatchShareFit *shape; /* scale fit: the fixed c, x, z, w */
  int n_groups;             /* joint fit: parameter k of group g is slot[g][k] (-1: w not
                               fitted); z is the last */
  int slot[CS_JOINT_MAX_GROUPS][3];
  int z_slot;
} FitData;

/* log max(phi_v, floor): the victim term's regressor */
static double log_fixed(const CsPairObs *o)
{
  return log(MAX(CLAMP(o->fixed_v, 0.0, 1.0), CS_INTERFERENCE_MIN_FIXED));
}

/* e of observation o under log c = t0, x = t1, z = t2 (w = 0) */
static double excess(const CsPairObs *o, double t0, double t1, double t2)
{
  return exp(t0 + t1 * log((double)o->batch_a) + t2 * log(4.0 * o->share_a * o->share_v));
}

/* e of observation o under a whole fit, its victim term included */
static double fit_excess(const CsBatchShareFit *fit, const CsPairObs *o)
{
  double e = excess(o, log(fit->c), fit->x, fit->z);
  return fit->w != 0.0 ? e * exp(fit->w * log_fixed(o)) : e;
}

static int shape_f(const gsl_vector *t, void *data, gsl_vector *f)
{
  const FitData *d = data;
  double t0 = gsl_vector_get(t, 0), t1 = gsl_vector_get(t, 1), t2 = gsl_vector_get(t, 2);
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    gsl_vector_set(f, i, log1p(excess(o, t0, t1, t2)) - log(o->ratio));
  }
  return GSL_SUCCESS;
}

static int shape_df(const gsl_vector *t, void *data, gsl_matrix *J)
{
  const FitData *d = data;
  double t0 = gsl_vector_get(t, 0), t1 = gsl_vector_get(t, 1), t2 = gsl_vector_get(t, 2);
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    double e = excess(o, t0, t1, t2), g = e / (1.0 + e);
    gsl_matrix_set(J, i, 0, g);
    gsl_matrix_set(J, i, 1, g * log((double)o->batch_a));
    gsl_matrix_set(J, i, 2, g * log(4.0 * o->share_a * o->share_v));
  }
  return GSL_SUCCESS;
}

static int scale_f(const gsl_vector *t, void *data, gsl_vector *f)
{
  const FitData *d = data;
  double k = exp(gsl_vector_get(t, 0));
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    double e = fit_excess(d->shape, o);
    gsl_vector_set(f, i, log1p(k * e) - log(o->ratio));
  }
  return GSL_SUCCESS;
}

static int scale_df(const gsl_vector *t, void *data, gsl_matrix *J)
{
  const FitData *d = data;
  double k = exp(gsl_vector_get(t, 0));
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    double e = fit_excess(d->shape, o);
    gsl_matrix_set(J, i, 0, k * e / (1.0 + k * e));
  }
  return GSL_SUCCESS;
}

/* 1 + (1 - e) f (1/r - 1) of cell o: the share rule's ratio */
static double share_ratio(const CsShareObs *o, double e)
{
  return 1.0 + (1.0 - e) * o->scalable * (1.0 / o->share - 1.0);
}

static int share_f(const gsl_vector *t, void *data, gsl_vector *f)
{
  const FitData *d = data;
  double e = gsl_vector_get(t, 0);
  for (int i = 0; i < d->n; i++) {
    const CsShareObs *o = &d->cells[d->rows[i]];
    gsl_vector_set(f, i, log(share_ratio(o, e)) - log(o->ratio));
  }
  return GSL_SUCCESS;
}

static int share_df(const gsl_vector *t, void *data, gsl_matrix *J)
{
  const FitData *d = data;
  double e = gsl_vector_get(t, 0);
  for (int i = 0; i < d->n; i++) {
    const CsShareObs *o = &d->cells[d->rows[i]];
    gsl_matrix_set(J, i, 0, -o->scalable * (1.0 / o->share - 1.0) / share_ratio(o, e));
  }
  return GSL_SUCCESS;
}

/* Runs the trust-region solver from x0 (p parameters); x0 receives the
 * result, covar (p x p, may be NULL) (J^T J)^-1 at it; returns the sum of
 * squared residuals, and *converged. */
static double solve(gsl_multifit_nlinear_fdf *fdf, FitData *d, double *x0, int p,
                    gsl_matrix *covar, gboolean *converged)
{
  gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
  gsl_multifit_nlinear_workspace *w =
    gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, (size_t)d->n, (size_t)p);
  gsl_vector_view x = gsl_vector_view_array(x0, (size_t)p);
  fdf->n = (size_t)d->n;
  fdf->p = (size_t)p;
  fdf->params = d;
  gsl_multifit_nlinear_init(&x.vector, fdf, w);
  int info = 0;
  int status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
  *converged = status == GSL_SUCCESS;
  gsl_vector *sol = gsl_multifit_nlinear_position(w);
  for (int k = 0; k < p; k++)
    x0[k] = gsl_vector_get(sol, (size_t)k);
  double chisq;
  gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chisq);
  if (covar)
    gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar);
  gsl_multifit_nlinear_free(w);
  return chisq;
}

static int *used_rows(int n, const gboolean *use, int *count)
{
  int *rows = g_new(int, MAX(n, 1));
  *count = 0;
  for (int i = 0; i < n; i++)
    if (!use || use[i])
      rows[(*count)++] = i;
  return rows;
}

gboolean cs_fit_batch_share(const CsPairObs *obs, int n, const gboolean *use,
                            CsBatchShareFit *out)
{
  g_return_val_if_fail(obs != NULL || n == 0, FALSE);
  int m;
  int *rows = used_rows(n, use, &m);
  gboolean ok = m >= 4;
  for (int i = 0; ok && i < m; i++)
    ok = obs[rows[i]].ratio > 0.0 && obs[rows[i]].batch_a >= 1 && obs[rows[i]].share_a > 0.0 &&
         obs[rows[i]].share_v > 0.0;
  if (!ok) {
    g_free(rows);
    return FALSE;
  }
  FitData d = { .obs = obs, .rows = rows, .n = m };
  gsl_multifit_nlinear_fdf fdf = { .f = shape_f, .df = shape_df };
  /* From the constant model (x = z = 0) at a 10 % slowdown: the fit does
   * not depend on a start near its answer. */
  double t[3] = { log(0.1), 0.0, 0.0 };
  gsl_matrix *covar = gsl_matrix_alloc(3, 3);
  gboolean converged;
  double chisq = solve(&fdf, &d, t, 3, covar, &converged);
  double s2 = chisq / (double)(m - 3);
  double tq = gsl_cdf_tdist_Pinv(0.975, (double)(m - 3));
  *out = (CsBatchShareFit){ .n = m, .c = exp(t[0]), .x = t[1], .z = t[2], .sigma = sqrt(s2),
                            .converged = converged };
  for (int k = 0; k < 3; k++) {
    double half = tq * sqrt(s2 * gsl_matrix_get(covar, (size_t)k, (size_t)k));
    out->ci[k][0] = t[k] - half;
    out->ci[k][1] = t[k] + half;
  }
  out->ci[0][0] = exp(out->ci[0][0]); /* fitted as log c */
  out->ci[0][1] = exp(out->ci[0][1]);
  gsl_matrix_free(covar);
  g_free(rows);
  return TRUE;
}

double cs_fit_pair_scale(const CsPairObs *obs, int n, const gboolean *use,
                         const CsBatchShareFit *fit)
{
  int m;
  int *rows = used_rows(n, use, &m);
  if (m == 0) {
    g_free(rows);
    return NAN;
  }
  FitData d = { .obs = obs, .rows = rows, .n = m, .shape = fit };
  gsl_multifit_nlinear_fdf fdf = { .f = scale_f, .df = scale_df };
  double t[1] = { 0.0 };
  gboolean converged;
  solve(&fdf, &d, t, 1, NULL, &converged);
  g_free(rows);
  return exp(t[0]);
}

double cs_batch_share_slowdown(const CsBatchShareFit *fit, const CsPairObs *o)
{
  return 1.0 + fit_excess(fit, o);
}

/* The joint fit's excess of observation o under parameters t (see FitData) */
static double joint_excess(const FitData *d, const gsl_vector *t, const CsPairObs *o)
{
  const int *s = d->slot[o->group];
  double v = gsl_vector_get(t, (size_t)s[0]) + gsl_vector_get(t, (size_t)s[1]) *
             log((double)o->batch_a) + gsl_vector_get(t, (size_t)d->z_slot) *
             log(4.0 * o->share_a * o->share_v);
  if (s[2] >= 0)
    v += gsl_vector_get(t, (size_t)s[2]) * log_fixed(o);
  return exp(v);
}

static int joint_f(const gsl_vector *t, void *data, gsl_vector *f)
{
  const FitData *d = data;
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    gsl_vector_set(f, i, log1p(joint_excess(d, t, o)) - log(o->ratio));
  }
  return GSL_SUCCESS;
}

static int joint_df(const gsl_vector *t, void *data, gsl_matrix *J)
{
  const FitData *d = data;
  gsl_matrix_set_zero(J);
  for (int i = 0; i < d->n; i++) {
    const CsPairObs *o = &d->obs[d->rows[i]];
    double e = joint_excess(d, t, o), g = e / (1.0 + e);
    const int *s = d->slot[o->group];
    gsl_matrix_set(J, i, (size_t)s[0], g);
    gsl_matrix_set(J, i, (size_t)s[1], g * log((double)o->batch_a));
    gsl_matrix_set(J, i, (size_t)d->z_slot, g * log(4.0 * o->share_a * o->share_v));
    if (s[2] >= 0)
      gsl_matrix_set(J, i, (size_t)s[2], g * log_fixed(o));
  }
  return GSL_SUCCESS;
}

gboolean cs_fit_joint(const CsPairObs *obs, int n, const gboolean *use, int n_groups,
                      const gboolean *fit_fixed, CsJointFit *out)
{
  g_return_val_if_fail((obs != NULL || n == 0) && out != NULL, FALSE);
  if (n_groups < 1 || n_groups > CS_JOINT_MAX_GROUPS)
    return FALSE;
  gboolean *in = g_new0(gboolean, MAX(n, 1));
  int count[CS_JOINT_MAX_GROUPS] = { 0 };
  gboolean ok = TRUE;
  for (int i = 0; i < n; i++) {
    const CsPairObs *o = &obs[i];
    in[i] = (!use || use[i]) && o->group >= 0 && o->group < n_groups;
    if (!in[i])
      continue;
    ok = ok && o->ratio > 0.0 && o->batch_a >= 1 && o->share_a > 0.0 && o->share_v > 0.0;
    count[o->group]++;
  }
  for (int g = 0; g < n_groups; g++)
    ok = ok && count[g] >= 4;
  int m;
  int *rows = used_rows(n, in, &m);
  g_free(in);
  if (!ok) {
    g_free(rows);
    return FALSE;
  }
  FitData d = { .obs = obs, .rows = rows, .n = m, .n_groups = n_groups };
  int p = 0;
  double t[3 * CS_JOINT_MAX_GROUPS + 1];
  for (int g = 0; g < n_groups; g++) {
    /* from the constant model at a 10 % slowdown, as cs_fit_batch_share */
    d.slot[g][0] = p;
    t[p++] = log(0.1);
    d.slot[g][1] = p;
    t[p++] = 0.0;
    d.slot[g][2] = fit_fixed && fit_fixed[g] ? p : -1;
    if (d.slot[g][2] >= 0)
      t[p++] = 0.0;
  }
  d.z_slot = p;
  t[p++] = 0.0;
  gsl_multifit_nlinear_fdf fdf = { .f = joint_f, .df = joint_df };
  gsl_matrix *covar = gsl_matrix_alloc((size_t)p, (size_t)p);
  gboolean converged;
  double chisq = solve(&fdf, &d, t, p, covar, &converged);
  double s2 = chisq / (double)(m - p);
  double tq = gsl_cdf_tdist_Pinv(0.975, (double)(m - p));
  memset(out, 0, sizeof *out);
  out->n = m;
  out->n_groups = n_groups;
  out->n_params = p;
  out->sigma = sqrt(s2);
  out->converged = converged;
  for (int g = 0; g < n_groups; g++) {
    int k3[3] = { d.slot[g][0], d.slot[g][1], d.z_slot };
    CsBatchShareFit *f = &out->group[g];
    *f = (CsBatchShareFit){ .n = count[g], .c = exp(t[k3[0]]), .x = t[k3[1]], .z = t[d.z_slot],
                            .w = d.slot[g][2] >= 0 ? t[d.slot[g][2]] : 0.0,
                            .sigma = sqrt(s2), .converged = converged };
    for (int k = 0; k < 3; k++) {
      double half = tq * sqrt(s2 * gsl_matrix_get(covar, (size_t)k3[k], (size_t)k3[k]));
      f->ci[k][0] = t[k3[k]] - half;
      f->ci[k][1] = t[k3[k]] + half;
    }
    f->ci[0][0] = exp(f->ci[0][0]); /* fitted as log c */
    f->ci[0][1] = exp(f->ci[0][1]);
    if (d.slot[g][2] >= 0) {
      int k = d.slot[g][2];
      double half = tq * sqrt(s2 * gsl_matrix_get(covar, (size_t)k, (size_t)k));
      out->w_ci[g][0] = t[k] - half;
      out->w_ci[g][1] = t[k] + half;
    }
  }
  gsl_matrix_free(covar);
  g_free(rows);
  return TRUE;
}

gboolean cs_fit_share_serial(const CsShareObs *obs, int n, const gboolean *use, CsShareFit *out)
{
  g_return_val_if_fail(obs != NULL || n == 0, FALSE);
  int m;
  int *rows = used_rows(n, use, &m);
  gboolean ok = m >= 2;
  for (int i = 0; ok && i < m; i++)
    ok = obs[rows[i]].ratio > 0.0 && obs[rows[i]].share > 0.0 && obs[rows[i]].share < 1.0;
  if (!ok) {
    g_free(rows);
    return FALSE;
  }
  FitData d = { .cells = obs, .rows = rows, .n = m };
  gsl_multifit_nlinear_fdf fdf = { .f = share_f, .df = share_df };
  double t[1] = { 0.0 }; /* from "all of f scales" */
  gsl_matrix *covar = gsl_matrix_alloc(1, 1);
  gboolean converged;
  double chisq = solve(&fdf, &d, t, 1, covar, &converged);
  double s2 = chisq / (double)(m - 1);
  double half = gsl_cdf_tdist_Pinv(0.975, (double)(m - 1)) * sqrt(s2 * gsl_matrix_get(covar, 0, 0));
  *out = (CsShareFit){ .n = m, .e = t[0], .ci = { t[0] - half, t[0] + half }, .sigma = sqrt(s2),
                       .converged = converged };
  gsl_matrix_free(covar);
  g_free(rows);
  return TRUE;
}
