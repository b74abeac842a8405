/* Loading, fitting and prediction of iGniter's performance model; see
 * igniter_coef.h for the equations and docs/policies.md for the file format. */
#include "igniter_coef.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"

#define POS 1e-300 /* with a max >= 1e9, cs_json_read_double says "> 0" */
#define BIG 1e12

/* Parsing context: the file name for messages. */
typedef struct {
  const char *file;
  GError **error;
} Ctx;

/* ---- small JSON readers ----------------------------------------------------- */

/* a (at path p) must be an array of n numbers (n < 0: at least -n), each > 0
 * (or >= 0 with allow_zero). Returns the numbers (g_free) and sets *n_out. */
static double *numbers_at(const Ctx *cx, const cJSON *a, const char *p, int n,
                          gboolean allow_zero, int *n_out)
{
  int count = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
  if (!a) {
    cs_json_fail(cx->error, cx->file, p, "required field is missing");
    return NULL;
  }
  if (count < 0 || (n >= 0 && count != n) || (n < 0 && count < -n)) {
    if (n >= 0)
      cs_json_fail(cx->error, cx->file, p, "expected an array of %d numbers, got %s", n,
                   count < 0 ? cs_json_type_name(a) : "another number of elements");
    else
      cs_json_fail(cx->error, cx->file, p, "expected an array of at least %d numbers, got %s",
                   -n, count < 0 ? cs_json_type_name(a) : "fewer elements");
    return NULL;
  }
  double *v = g_new(double, MAX(count, 1));
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, a)
  {
    double x = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!isfinite(x) || x < 0 || (!allow_zero && x == 0)) {
      char *ip = cs_json_path_index(p, i);
      if (cJSON_IsNumber(item) && !isfinite(x))
        cs_json_fail(cx->error, cx->file, ip, "expected a finite number %s, got %s",
                     allow_zero ? ">= 0" : "> 0", cs_json_nonfinite_name(x));
      else if (cJSON_IsNumber(item))
        cs_json_fail(cx->error, cx->file, ip, "expected a number %s, got %g",
                     allow_zero ? ">= 0" : "> 0", x);
      else
        cs_json_fail(cx->error, cx->file, ip, "expected a number, got %s",
                     cs_json_type_name(item));
      g_free(ip);
      g_free(v);
      return NULL;
    }
    v[i++] = x;
  }
  if (n_out)
    *n_out = count;
  return v;
}

/* obj[key] as numbers_at; path is obj's path. */
static double *read_numbers(const Ctx *cx, const cJSON *obj, const char *key, const char *path,
                            int n, gboolean allow_zero, int *n_out)
{
  char *p = cs_json_path_key(path, key);
  double *v = numbers_at(cx, cJSON_GetObjectItemCaseSensitive(obj, key), p, n, allow_zero, n_out);
  g_free(p);
  return v;
}

/* obj[key] must be an nr x nc table of numbers > 0; returns it row-major. */
static double *read_table(const Ctx *cx, const cJSON *obj, const char *key, const char *path,
                          int nr, int nc)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  char *p = cs_json_path_key(path, key);
  double *t = NULL;
  if (!a) {
    cs_json_fail(cx->error, cx->file, p, "required field is missing");
  } else if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != nr) {
    cs_json_fail(cx->error, cx->file, p,
                 "expected %d rows (one per grid batch) of %d numbers (one per grid share), "
                 "got %s",
                 nr, nc, cJSON_IsArray(a) ? "another number of rows" : cs_json_type_name(a));
  } else {
    t = g_new(double, nr * nc);
    for (int r = 0; r < nr; r++) {
      char *rp = cs_json_path_index(p, r);
      double *row = numbers_at(cx, cJSON_GetArrayItem(a, r), rp, nc, FALSE, NULL);
      g_free(rp);
      if (!row) {
        g_free(t);
        t = NULL;
        break;
      }
      memcpy(&t[r * nc], row, sizeof(double) * (size_t)nc);
      g_free(row);
    }
  }
  g_free(p);
  return t;
}

/* ---- fits -------------------------------------------------------------------- */

/* Least-squares line y = k x + c; FALSE when fewer than two distinct x. */
static gboolean fit_line(const double *x, const double *y, int n, double *k, double *c)
{
  gboolean distinct = FALSE;
  for (int i = 1; i < n; i++)
    distinct = distinct || x[i] != x[0];
  if (n < 2 || !distinct)
    return FALSE;
  double cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, (size_t)n, c, k, &cov00, &cov01, &cov11, &sumsq);
  return isfinite(*k) && isfinite(*c);
}

/* The solo active-time fit by variable projection (igniter_coef.h). */
typedef struct {
  int n;
  const double *b, *r, *y; /* batch, share %, active ms */
  gsl_matrix *X;
  gsl_vector *yv, *c;
  gsl_matrix *cov;
  gsl_multifit_linear_workspace *ws;
} ActFit;

/* Residual sum of squares at k4; the linear coefficients go to coef[4]
 * (k1, k2, k3, k5) when coef is not NULL. */
static double act_residual(ActFit *f, double k4, double *coef)
{
  for (int i = 0; i < f->n; i++) {
    double d = f->r[i] + k4;
    gsl_matrix_set(f->X, (size_t)i, 0, f->b[i] * f->b[i] / d);
    gsl_matrix_set(f->X, (size_t)i, 1, f->b[i] / d);
    gsl_matrix_set(f->X, (size_t)i, 2, 1.0 / d);
    gsl_matrix_set(f->X, (size_t)i, 3, 1.0);
  }
  double chisq = INFINITY;
  gsl_multifit_linear(f->X, f->yv, f->c, f->cov, &chisq, f->ws);
  if (coef)
    for (int k = 0; k < 4; k++)
      coef[k] = gsl_vector_get(f->c, (size_t)k);
  return isfinite(chisq) ? chisq : INFINITY;
}

/* Fits k1..k5 (out[5]) to n >= 5 points. With u = k4 + min share > 0, the
 * residual is scanned at 20 points per decade over u in [1e-6, 1e6] x min
 * share, then minimised by golden section between the best scan point's
 * neighbours. Deterministic; agrees with scipy's curve_fit (iGniter) to about
 * 1e-7 relative on the shipped data. */
static void fit_active(const double *b, const double *r, const double *y, int n, double *out)
{
  ActFit f = { .n = n, .b = b, .r = r, .y = y };
  f.X = gsl_matrix_alloc((size_t)n, 4);
  f.yv = gsl_vector_alloc((size_t)n);
  f.c = gsl_vector_alloc(4);
  f.cov = gsl_matrix_alloc(4, 4);
  f.ws = gsl_multifit_linear_alloc((size_t)n, 4);
  for (int i = 0; i < n; i++)
    gsl_vector_set(f.yv, (size_t)i, y[i]);
  double rmin = r[0];
  for (int i = 1; i < n; i++)
    rmin = MIN(rmin, r[i]);
  enum { N_SCAN = 241 };
  double best = INFINITY;
  int bi = 0;
  double u[N_SCAN];
  for (int i = 0; i < N_SCAN; i++) {
    u[i] = rmin * pow(10.0, -6.0 + 12.0 * i / (N_SCAN - 1));
    double s = act_residual(&f, u[i] - rmin, NULL);
    if (s < best) {
      best = s;
      bi = i;
    }
  }
  double x = u[bi];
  if (bi > 0 && bi < N_SCAN - 1) {
    const double g = (sqrt(5.0) - 1.0) / 2.0;
    double lo = u[bi - 1], hi = u[bi + 1];
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = act_residual(&f, x1 - rmin, NULL), f2 = act_residual(&f, x2 - rmin, NULL);
    for (int it = 0; it < 200 && hi - lo > 1e-14 * hi; it++) {
      if (f1 <= f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - g * (hi - lo);
        f1 = act_residual(&f, x1 - rmin, NULL);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + g * (hi - lo);
        f2 = act_residual(&f, x2 - rmin, NULL);
      }
    }
    x = f1 <= f2 ? x1 : x2;
    if (MIN(f1, f2) > best)
      x = u[bi];
  }
  double coef[4];
  act_residual(&f, x - rmin, coef);
  out[0] = coef[0];
  out[1] = coef[1];
  out[2] = coef[2];
  out[3] = x - rmin;
  out[4] = coef[3];
  gsl_multifit_linear_free(f.ws);
  gsl_matrix_free(f.cov);
  gsl_vector_free(f.c);
  gsl_vector_free(f.yv);
  gsl_matrix_free(f.X);
}

/* ---- the document ------------------------------------------------------------ */

typedef struct {
  int nb, ns;
  double *batches, *shares;
} Grid;

static gboolean strictly_increasing(const double *v, int n)
{
  for (int i = 1; i < n; i++)
    if (!(v[i] > v[i - 1]))
      return FALSE;
  return TRUE;
}

static gboolean read_hardware(const Ctx *cx, const cJSON *root, CsIgniterCoefs *c)
{
  static const char *const keys[] = { "max_frequency_mhz", "power_cap_w", "idle_power_w",
                                      "pcie_bandwidth_bytes_per_ms", "share_unit_pct", NULL };
  const cJSON *hw = cJSON_GetObjectItemCaseSensitive(root, "hardware");
  if (!hw)
    return cs_json_fail(cx->error, cx->file, "hardware", "required field is missing");
  return cs_json_expect_object(hw, cx->file, "hardware", cx->error) &&
         cs_json_check_keys(hw, keys, cx->file, "hardware", cx->error) &&
         cs_json_read_double(hw, "max_frequency_mhz", TRUE, POS, BIG, &c->max_freq_mhz, cx->file,
                             "hardware", cx->error) &&
         cs_json_read_double(hw, "power_cap_w", TRUE, POS, BIG, &c->power_cap_w, cx->file,
                             "hardware", cx->error) &&
         cs_json_read_double(hw, "idle_power_w", TRUE, 0, BIG, &c->idle_power_w, cx->file,
                             "hardware", cx->error) &&
         cs_json_read_double(hw, "pcie_bandwidth_bytes_per_ms", TRUE, POS, BIG, &c->bandwidth,
                             cx->file, "hardware", cx->error) &&
         cs_json_read_double(hw, "share_unit_pct", TRUE, 0.01, 100, &c->share_unit_pct,
                             cx->file, "hardware", cx->error);
}

/* The hardware scan: frequency slope above the power cap and the per-kernel
 * scheduling delay line (igniter_coef.h). */
static gboolean read_scan(const Ctx *cx, const cJSON *root, CsIgniterCoefs *c)
{
  static const char *const keys[] = { "model", "copies", "power_w", "frequency_mhz",
                                      "idle_ms_per_kernel", NULL };
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "scan");
  const char *model = NULL;
  if (!s)
    return cs_json_fail(cx->error, cx->file, "scan", "required field is missing");
  if (!cs_json_expect_object(s, cx->file, "scan", cx->error) ||
      !cs_json_check_keys(s, keys, cx->file, "scan", cx->error) ||
      !cs_json_read_string(s, "model", FALSE, &model, cx->file, "scan", cx->error))
    return FALSE;
  int n = 0, n2 = 0;
  double *copies = read_numbers(cx, s, "copies", "scan", -3, FALSE, &n);
  if (!copies)
    return FALSE;
  double *power = read_numbers(cx, s, "power_w", "scan", n, FALSE, &n2);
  double *freq = power ? read_numbers(cx, s, "frequency_mhz", "scan", n, FALSE, &n2) : NULL;
  double *idle = freq ? read_numbers(cx, s, "idle_ms_per_kernel", "scan", n, TRUE, &n2) : NULL;
  gboolean ok = idle != NULL;
  for (int i = 0; ok && i < n; i++)
    if (copies[i] != floor(copies[i]) || (i > 0 && copies[i] <= copies[i - 1]))
      ok = cs_json_fail(cx->error, cx->file, "scan.copies",
                        "expected increasing whole numbers of concurrent copies");
  const double F = c->max_freq_mhz;
  /* Frequency above the cap. The measured power of a throttled point is held
   * at the cap, so iGniter extends power linearly with the average step of
   * the unthrottled points before it and fits f = F + s (P - cap) through
   * the throttled ones. No throttled point: s = 0. */
  c->freq_slope = 0.0;
  int first = -1;
  for (int i = 0; ok && i < n && first < 0; i++)
    if (freq[i] < F - 1e-9)
      first = i;
  if (ok && first >= 0) {
    if (first < 2) {
      ok = cs_json_fail(cx->error, cx->file, "scan.frequency_mhz",
                        "the power/frequency fit needs at least two points at the maximum "
                        "frequency %g MHz before the first throttled one",
                        F);
    } else {
      double step = (power[first - 1] - power[0]) / (first - 1);
      int m = n - first;
      double *x = g_new(double, m), *y = g_new(double, m);
      double p = power[first - 1], sxx = 0;
      for (int i = 0; i < m; i++) {
        p += step;
        x[i] = p - c->power_cap_w;
        y[i] = freq[first + i] - F;
        sxx += x[i] * x[i];
      }
      if (sxx > 0) {
        double cov, sumsq;
        gsl_fit_mul(x, 1, y, 1, (size_t)m, &c->freq_slope, &cov, &sumsq);
      } else {
        ok = cs_json_fail(cx->error, cx->file, "scan.power_w",
                          "the extended power of the throttled points equals the cap; no "
                          "frequency slope can be fitted");
      }
      g_free(x);
      g_free(y);
    }
  }
  /* Scheduling delay: idle time per kernel at the maximum frequency, minus
   * the one-copy value, against the number of copies. */
  if (ok) {
    double *x = g_new(double, MAX(n - 1, 1)), *y = g_new(double, MAX(n - 1, 1));
    double base = idle[0] * freq[0] / F;
    for (int i = 1; i < n; i++) {
      x[i - 1] = copies[i];
      y[i - 1] = idle[i] * freq[i] / F - base;
    }
    ok = fit_line(x, y, n - 1, &c->sch_alpha, &c->sch_beta);
    if (!ok)
      cs_json_fail(cx->error, cx->file, "scan.idle_ms_per_kernel",
                   "cannot fit the scheduling delay line");
    g_free(x);
    g_free(y);
  }
  g_free(copies);
  g_free(power);
  g_free(freq);
  g_free(idle);
  return ok;
}

static gboolean read_grid(const Ctx *cx, const cJSON *root, Grid *g)
{
  static const char *const keys[] = { "batches", "shares_pct", NULL };
  const cJSON *gr = cJSON_GetObjectItemCaseSensitive(root, "grid");
  if (!gr)
    return cs_json_fail(cx->error, cx->file, "grid", "required field is missing");
  if (!cs_json_expect_object(gr, cx->file, "grid", cx->error) ||
      !cs_json_check_keys(gr, keys, cx->file, "grid", cx->error))
    return FALSE;
  g->batches = read_numbers(cx, gr, "batches", "grid", -3, FALSE, &g->nb);
  if (!g->batches)
    return FALSE;
  gboolean whole = TRUE;
  for (int i = 0; i < g->nb; i++)
    whole = whole && g->batches[i] == floor(g->batches[i]);
  if (!whole || !strictly_increasing(g->batches, g->nb))
    return cs_json_fail(cx->error, cx->file, "grid.batches",
                        "expected increasing whole batch sizes");
  g->shares = read_numbers(cx, gr, "shares_pct", "grid", -3, FALSE, &g->ns);
  if (!g->shares)
    return FALSE;
  if (!strictly_increasing(g->shares, g->ns) || g->shares[g->ns - 1] > 100)
    return cs_json_fail(cx->error, cx->file, "grid.shares_pct",
                        "expected increasing MPS shares in (0, 100]");
  return TRUE;
}

static int grid_index(const double *v, int n, double x)
{
  for (int i = 0; i < n; i++)
    if (v[i] == x)
      return i;
  return -1;
}

/* One entry of "models": reads the measurements and fits the coefficients. */
static gboolean read_model(const Ctx *cx, const cJSON *node, const char *path, const Grid *g,
                           const CsIgniterCoefs *c, CsIgniterModel *m)
{
  static const char *const keys[] = { "model",   "kernels",        "input_bytes",
                                      "output_bytes", "idle_ms",   "gpu_latency_ms",
                                      "power_w", "frequency_mhz", "l2_points",
                                      "pair",    NULL };
  static const char *const pair_keys[] = { "l2_util_pct", "active_ms_alone", "active_ms_pair",
                                           "frequency_pair_mhz", NULL };
  static const char *const l2_keys[] = { "batch", "share_pct", "l2_util_pct", NULL };
  const char *name = NULL;
  int64_t in_b = 0, out_b = 0;
  if (!cs_json_expect_object(node, cx->file, path, cx->error) ||
      !cs_json_check_keys(node, keys, cx->file, path, cx->error) ||
      !cs_json_read_string(node, "model", TRUE, &name, cx->file, path, cx->error) ||
      !cs_json_read_int(node, "kernels", TRUE, 1, 1 << 24, &m->kernels, cx->file, path,
                        cx->error) ||
      !cs_json_read_int64(node, "input_bytes", TRUE, 0, INT64_C(1) << 40, &in_b, cx->file, path,
                          cx->error) ||
      !cs_json_read_int64(node, "output_bytes", TRUE, 0, INT64_C(1) << 40, &out_b, cx->file,
                          path, cx->error) ||
      !cs_json_read_double(node, "idle_ms", TRUE, 0, BIG, &m->idle_ms, cx->file, path,
                           cx->error))
    return FALSE;
  m->name = g_strdup(name);
  m->input_bytes = (double)in_b;
  m->output_bytes = (double)out_b;
  const int nb = g->nb, ns = g->ns, n = nb * ns;
  double *lat = read_table(cx, node, "gpu_latency_ms", path, nb, ns);
  double *pow_w = lat ? read_table(cx, node, "power_w", path, nb, ns) : NULL;
  double *freq = pow_w ? read_table(cx, node, "frequency_mhz", path, nb, ns) : NULL;
  gboolean ok = freq != NULL;
  double *thr = g_new(double, n), *bx = g_new(double, n), *rx = g_new(double, n),
         *act = g_new(double, n), *py = g_new(double, n), *px = g_new(double, n);
  int np = 0;
  const double F = c->max_freq_mhz;
  for (int i = 0; ok && i < n; i++) {
    int bi = i / ns, si = i % ns;
    if (lat[i] <= m->idle_ms) {
      char *tp = cs_json_path_key(path, "gpu_latency_ms");
      char *rp = cs_json_path_index(tp, bi);
      char *cp = cs_json_path_index(rp, si);
      ok = cs_json_fail(cx->error, cx->file, cp,
                        "latency %g ms is not above idle_ms %g ms", lat[i], m->idle_ms);
      g_free(cp);
      g_free(rp);
      g_free(tp);
      break;
    }
    bx[i] = g->batches[bi];
    rx[i] = g->shares[si];
    /* Active time at the maximum frequency, as iGniter: scale a throttled
     * cell's latency by f / F, then subtract the idle time. */
    act[i] = (freq[i] < F ? lat[i] * freq[i] / F : lat[i]) - m->idle_ms;
    thr[i] = 1000.0 * bx[i] / (lat[i] - m->idle_ms);
    if (freq[i] > F - 1.0) {
      px[np] = thr[i];
      py[np++] = pow_w[i] - c->idle_power_w;
    }
  }
  if (ok) {
    fit_active(bx, rx, act, n, m->act);
    if (!fit_line(px, py, np, &m->power_k, &m->power_c))
      ok = cs_json_fail(cx->error, cx->file, path,
                        "power_w: fewer than two unthrottled cells (frequency within 1 MHz of "
                        "%g) with distinct throughput; cannot fit power against throughput",
                        F);
  }
  /* L2 utilisation against throughput, at the listed grid cells. */
  const cJSON *l2 = ok ? cJSON_GetObjectItemCaseSensitive(node, "l2_points") : NULL;
  char *l2p = cs_json_path_key(path, "l2_points");
  if (ok && (!cJSON_IsArray(l2) || cJSON_GetArraySize(l2) < 2))
    ok = cs_json_fail(cx->error, cx->file, l2p, "expected an array of at least 2 points, got %s",
                      l2 ? (cJSON_IsArray(l2) ? "fewer" : cs_json_type_name(l2)) : "nothing");
  if (ok) {
    int k = 0, cnt = cJSON_GetArraySize(l2);
    double *lx = g_new(double, cnt), *ly = g_new(double, cnt);
    const cJSON *pt;
    cJSON_ArrayForEach(pt, l2)
    {
      char *pp = cs_json_path_index(l2p, k);
      double b = 0, s = 0, u = 0;
      ok = cs_json_expect_object(pt, cx->file, pp, cx->error) &&
           cs_json_check_keys(pt, l2_keys, cx->file, pp, cx->error) &&
           cs_json_read_double(pt, "batch", TRUE, 1, BIG, &b, cx->file, pp, cx->error) &&
           cs_json_read_double(pt, "share_pct", TRUE, POS, 100, &s, cx->file, pp, cx->error) &&
           cs_json_read_double(pt, "l2_util_pct", TRUE, 0, 100, &u, cx->file, pp, cx->error);
      int bi = ok ? grid_index(g->batches, nb, b) : -1, si = ok ? grid_index(g->shares, ns, s) : -1;
      if (ok && (bi < 0 || si < 0))
        ok = cs_json_fail(cx->error, cx->file, pp,
                          "batch %g and share %g %% must be a cell of the grid", b, s);
      g_free(pp);
      if (!ok)
        break;
      lx[k] = thr[bi * ns + si];
      ly[k++] = u;
    }
    if (ok && !fit_line(lx, ly, k, &m->l2_k, &m->l2_c))
      ok = cs_json_fail(cx->error, cx->file, l2p,
                        "the points need at least two distinct throughputs");
    g_free(lx);
    g_free(ly);
  }
  g_free(l2p);
  /* The measured pair: L2 sensitivity of the active time. */
  const cJSON *pair = ok ? cJSON_GetObjectItemCaseSensitive(node, "pair") : NULL;
  char *pairp = cs_json_path_key(path, "pair");
  double l2u = 0, a1 = 0, a2 = 0, f2 = 0;
  if (ok && !pair)
    ok = cs_json_fail(cx->error, cx->file, pairp, "required field is missing");
  if (ok)
    ok = cs_json_expect_object(pair, cx->file, pairp, cx->error) &&
         cs_json_check_keys(pair, pair_keys, cx->file, pairp, cx->error) &&
         cs_json_read_double(pair, "l2_util_pct", TRUE, POS, 100, &l2u, cx->file, pairp,
                             cx->error) &&
         cs_json_read_double(pair, "active_ms_alone", TRUE, POS, BIG, &a1, cx->file, pairp,
                             cx->error) &&
         cs_json_read_double(pair, "active_ms_pair", TRUE, POS, BIG, &a2, cx->file, pairp,
                             cx->error) &&
         cs_json_read_double(pair, "frequency_pair_mhz", TRUE, POS, BIG, &f2, cx->file, pairp,
                             cx->error);
  if (ok)
    m->k_l2 = ((a2 * f2 / F) / a1 - 1.0) / l2u;
  g_free(pairp);
  g_free(lat);
  g_free(pow_w);
  g_free(freq);
  g_free(thr);
  g_free(bx);
  g_free(rx);
  g_free(act);
  g_free(py);
  g_free(px);
  return ok;
}

void cs_igniter_coefs_free(CsIgniterCoefs *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_models; i++)
    g_free(c->models[i].name);
  g_free(c->models);
  g_free(c->gpu_type);
  g_free(c->source);
  g_free(c);
}

CsIgniterCoefs *cs_igniter_coefs_load_json(const cJSON *root, const char *name, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "description", "gpu_type",
                                      "hardware", "scan", "grid", "models", NULL };
  Ctx cx = { .file = name, .error = error };
  const char *format = NULL, *source = NULL, *desc = NULL, *gpu = NULL;
  int version = 0;
  if (!cs_json_expect_object(root, name, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &format, name, "", error))
    return NULL;
  if (strcmp(format, CS_IGNITER_FORMAT) != 0) {
    cs_json_fail(error, name, "format", "expected \"%s\", got \"%s\"", CS_IGNITER_FORMAT,
                 format);
    return NULL;
  }
  if (!cs_json_read_int(root, "version", TRUE, G_MININT, G_MAXINT, &version, name, "", error))
    return NULL;
  if (version != CS_IGNITER_FORMAT_VERSION) {
    cs_json_fail(error, name, "version", "unsupported version %d (this build reads version %d)",
                 version, CS_IGNITER_FORMAT_VERSION);
    return NULL;
  }
  if (!cs_json_check_keys(root, keys, name, "", error) ||
      !cs_json_read_string(root, "source", TRUE, &source, name, "", error) ||
      !cs_json_read_string(root, "description", FALSE, &desc, name, "", error) ||
      !cs_json_read_string(root, "gpu_type", TRUE, &gpu, name, "", error))
    return NULL;
  CsIgniterCoefs *c = g_new0(CsIgniterCoefs, 1);
  c->gpu_type = g_strdup(gpu);
  c->source = g_strdup(source);
  Grid g = { 0 };
  gboolean ok = read_hardware(&cx, root, c) && read_scan(&cx, root, c) && read_grid(&cx, root, &g);
  const cJSON *models = ok ? cJSON_GetObjectItemCaseSensitive(root, "models") : NULL;
  if (ok && (!cJSON_IsArray(models) || cJSON_GetArraySize(models) == 0))
    ok = cs_json_fail(error, name, "models", "expected a non-empty array of models, got %s",
                      models ? (cJSON_IsArray(models) ? "an empty array"
                                                      : cs_json_type_name(models))
                             : "nothing");
  if (ok) {
    int n = cJSON_GetArraySize(models), i = 0;
    c->models = g_new0(CsIgniterModel, n);
    const cJSON *node;
    cJSON_ArrayForEach(node, models)
    {
      char *p = cs_json_path_index("models", i);
      ok = read_model(&cx, node, p, &g, c, &c->models[i]);
      c->n_models = i + 1; /* free what was read, even on failure */
      if (ok && cs_igniter_coefs_find(c, c->models[i].name) != &c->models[i])
        ok = cs_json_fail(error, name, p, "model \"%s\" is listed twice", c->models[i].name);
      g_free(p);
      if (!ok)
        break;
      i++;
    }
  }
  g_free(g.batches);
  g_free(g.shares);
  if (!ok) {
    cs_igniter_coefs_free(c);
    return NULL;
  }
  return c;
}

CsIgniterCoefs *cs_igniter_coefs_load_file(const char *path, GError **error)
{
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  CsIgniterCoefs *c = cs_igniter_coefs_load_json(root, path, error);
  cJSON_Delete(root);
  return c;
}

const CsIgniterModel *cs_igniter_coefs_find(const CsIgniterCoefs *c, const char *name)
{
  for (int i = 0; i < c->n_models; i++)
    if (c->models[i].name && strcmp(c->models[i].name, name) == 0)
      return &c->models[i];
  return NULL;
}

/* ---- prediction ---------------------------------------------------------------- */

double cs_igniter_active_solo_ms(const CsIgniterModel *m, int batch, double share_pct)
{
  const double *k = m->act;
  double b = batch;
  return (k[0] * b * b + k[1] * b + k[2]) / (share_pct + k[3]) + k[4];
}

void cs_igniter_predict(const CsIgniterCoefs *c, const CsIgniterWorkload *w, int n,
                        CsIgniterPrediction *out)
{
  g_return_if_fail(n >= 1);
  double *solo = g_new(double, n), *l2 = g_new(double, n);
  double power = c->idle_power_w, l2_total = 0.0;
  gboolean valid = TRUE;
  for (int i = 0; i < n; i++) {
    const CsIgniterModel *m = w[i].model;
    solo[i] = cs_igniter_active_solo_ms(m, w[i].batch, w[i].share_pct);
    valid = valid && solo[i] > 0 && isfinite(solo[i]);
    double thr = 1000.0 * w[i].batch / solo[i];
    power += m->power_k * thr + m->power_c;
    l2[i] = m->l2_k * thr + m->l2_c;
    l2_total += l2[i];
  }
  double F = c->max_freq_mhz, f = F;
  if (power > c->power_cap_w)
    f = F + c->freq_slope * (power - c->power_cap_w);
  double per_kernel = n >= 2 ? c->sch_alpha * n + c->sch_beta : 0.0;
  for (int i = 0; i < n; i++) {
    const CsIgniterModel *m = w[i].model;
    if (!valid || !(f > 0)) {
      out[i] = (CsIgniterPrediction){ .latency_ms = INFINITY, .gpu_ms = INFINITY,
                                      .throughput_rps = 0.0 };
      continue;
    }
    double t_sch = m->kernels * per_kernel + m->idle_ms;
    double t_act = solo[i] * (1.0 + m->k_l2 * (l2_total - l2[i]));
    double gpu = (t_sch + t_act) / (f / F);
    double b = w[i].batch;
    out[i].gpu_ms = gpu;
    out[i].latency_ms = gpu + (m->input_bytes + m->output_bytes) * b / c->bandwidth;
    out[i].throughput_rps = b * 1000.0 / (gpu + m->output_bytes * b / c->bandwidth);
  }
  g_free(solo);
  g_free(l2);
}
