/* Calibration of the GPU execution model against measured co-locations; see
 * gpu_calibrate.h and docs/gpu-model.md. */
#include "calibrate/calibrate.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "gpu/gpu_exec.h"
#include "profiles/interference.h"
#include "profiles/profile.h"
#include "profiles/share_rule.h"

#define CALIB_FORMAT "clustersim-calibration"
#define CALIB_VERSION 1
#define MAX_PAIRS CS_CALIB_MAX_PAIRS
#define MAX_MODELS CS_CALIB_MAX_MODELS
#define MAX_WORKERS 16
#define OPEN_WARMUP_NS INT64_C(1000000000)
#define OPEN_HORIZON_NS INT64_C(11000000000)

static const char *const variant_names[CS_CALIB_N_VARIANTS] = {
  "table", "model", "none", "lopo", "loo-const",
};

const char *cs_calib_variant_name(CsCalibVariant v)
{
  return v >= 0 && v < CS_CALIB_N_VARIANTS ? variant_names[v] : "?";
}

/* ---- the calibration file ------------------------------------------------------- */

typedef struct {
  char *m1, *m2;
  int b1, b2;
  double p1;          /* % of model1; model2 has 100 - p1 */
  double l1, l2;      /* measured ms */
} PairRow;

typedef struct {
  GArray *pairs;      /* PairRow */
  cJSON *root;        /* kept for the colocations */
} CalibFile;

static void calib_file_clear(CalibFile *f)
{
  if (f->pairs) {
    for (guint i = 0; i < f->pairs->len; i++) {
      PairRow *r = &g_array_index(f->pairs, PairRow, i);
      g_free(r->m1);
      g_free(r->m2);
    }
    g_array_unref(f->pairs);
  }
  cJSON_Delete(f->root);
}

static gboolean num_at(const cJSON *row, int i, double *out)
{
  const cJSON *v = cJSON_GetArrayItem(row, i);
  if (!cJSON_IsNumber(v))
    return FALSE;
  *out = v->valuedouble;
  return TRUE;
}

static gboolean load_calib(const char *path, CalibFile *f, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "pairs", "colocations",
                                      NULL };
  memset(f, 0, sizeof *f);
  f->root = cs_json_load_file(path, error);
  if (!f->root)
    return FALSE;
  const char *format = NULL, *source = NULL;
  int version = 0;
  if (!cs_json_expect_object(f->root, path, "", error) ||
      !cs_json_read_string(f->root, "format", TRUE, &format, path, "", error))
    return FALSE;
  if (strcmp(format, CALIB_FORMAT) != 0)
    return cs_json_fail(error, path, "format", "expected \"%s\", got \"%s\"", CALIB_FORMAT,
                        format);
  if (!cs_json_read_int(f->root, "version", TRUE, G_MININT, G_MAXINT, &version, path, "", error))
    return FALSE;
  if (version != CALIB_VERSION)
    return cs_json_fail(error, path, "version",
                        "unsupported version %d (this build reads version %d)", version,
                        CALIB_VERSION);
  if (!cs_json_check_keys(f->root, keys, path, "", error) ||
      !cs_json_read_string(f->root, "source", TRUE, &source, path, "", error))
    return FALSE;
  f->pairs = g_array_new(FALSE, TRUE, sizeof(PairRow));
  const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(f->root, "pairs");
  const cJSON *rows = pairs ? cJSON_GetObjectItemCaseSensitive(pairs, "rows") : NULL;
  if (pairs && !cJSON_IsArray(rows))
    return cs_json_fail(error, path, "pairs.rows", "expected an array of rows [model1, "
                        "model2, batch1, batch2, mps_pct1, latency1_ms, latency2_ms, ...]");
  const cJSON *row;
  int i = 0;
  cJSON_ArrayForEach(row, rows)
  {
    PairRow r = { 0 };
    double b1, b2;
    const cJSON *m1 = cJSON_GetArrayItem(row, 0), *m2 = cJSON_GetArrayItem(row, 1);
    if (!cJSON_IsArray(row) || !cJSON_IsString(m1) || !cJSON_IsString(m2) ||
        !num_at(row, 2, &b1) || !num_at(row, 3, &b2) || !num_at(row, 4, &r.p1) ||
        !num_at(row, 5, &r.l1) || !num_at(row, 6, &r.l2) || b1 < 1 || b2 < 1 ||
        !(r.p1 > 0 && r.p1 < 100) || !(r.l1 > 0) || !(r.l2 > 0)) {
      char *p = cs_json_path_index("pairs.rows", i);
      cs_json_fail(error, path, p, "expected [model1, model2, batch1 >= 1, batch2 >= 1, "
                   "0 < mps_pct1 < 100, latency1_ms > 0, latency2_ms > 0, ...]");
      g_free(p);
      return FALSE;
    }
    r.m1 = g_strdup(m1->valuestring);
    r.m2 = g_strdup(m2->valuestring);
    r.b1 = (int)b1;
    r.b2 = (int)b2;
    g_array_append_val(f->pairs, r);
    i++;
  }
  return TRUE;
}

/* ---- a small driver around gpu_exec --------------------------------------------------- */

typedef struct {
  CsGpuJobSpec spec;
  double rate_rps;    /* whole batches arrive every batch / rate s; 0 = closed loop */
} SimWorker;

/* Simulates the workers on one GPU; mean_ms[w] is the mean GPU latency (start
 * to end) of the batches of worker w that start at or after warmup_ns and
 * end by horizon_ns (NAN if none). */
static void simulate(const CsGpuExecConfig *cfg, const SimWorker *w, int n, int64_t warmup_ns,
                     int64_t horizon_ns, double *mean_ms)
{
  CsGpuExec *g = cs_gpu_exec_new(cfg);
  int64_t period[MAX_WORKERS], started[MAX_WORKERS], arrived[MAX_WORKERS];
  int64_t start_ns[MAX_WORKERS], count[MAX_WORKERS];
  double sum[MAX_WORKERS];
  gboolean running[MAX_WORKERS];
  g_assert(n <= MAX_WORKERS);
  for (int k = 0; k < n; k++) {
    period[k] = w[k].rate_rps > 0 ? llround(w[k].spec.batch * 1e9 / w[k].rate_rps) : 0;
    started[k] = arrived[k] = count[k] = 0;
    sum[k] = 0;
    running[k] = FALSE;
  }
  uint64_t seq = 0;
  int64_t now = 0;
  for (;;) {
    /* Start whatever may start: the earliest waiting batch first (FIFO
     * across workers matters without MPS), ties to the lower worker. */
    for (;;) {
      int best = -1;
      int64_t best_t = INT64_MAX;
      for (int k = 0; k < n; k++) {
        if (running[k] || !cs_gpu_exec_accepts(g, w[k].spec.worker))
          continue;
        int64_t t = period[k] == 0 ? now : (arrived[k] > started[k] ? started[k] * period[k]
                                                                     : INT64_MAX);
        if (t < best_t) {
          best_t = t;
          best = k;
        }
      }
      if (best < 0)
        break;
      cs_gpu_exec_start(g, now, (seq++ << 8) | (uint64_t)best, &w[best].spec);
      running[best] = TRUE;
      start_ns[best] = now;
      started[best]++;
    }
    int64_t t_arr = INT64_MAX;
    for (int k = 0; k < n; k++)
      if (period[k] > 0)
        t_arr = MIN(t_arr, arrived[k] * period[k]);
    int64_t t_done;
    uint64_t id;
    gboolean done = cs_gpu_exec_next(g, &t_done, &id);
    if (done && t_done <= t_arr) {
      if (t_done > horizon_ns)
        break;
      now = t_done;
      int k = (int)(id & 0xff);
      cs_gpu_exec_finish(g, now, id);
      running[k] = FALSE;
      if (start_ns[k] >= warmup_ns) {
        sum[k] += (double)(now - start_ns[k]);
        count[k]++;
      }
    } else {
      if (t_arr == INT64_MAX || t_arr > horizon_ns)
        break;
      now = t_arr;
      for (int k = 0; k < n; k++)
        if (period[k] > 0 && arrived[k] * period[k] == now)
          arrived[k]++;
    }
  }
  for (int k = 0; k < n; k++)
    mean_ms[k] = count[k] > 0 ? sum[k] / (double)count[k] / 1e6 : NAN;
  cs_gpu_exec_free(g);
}

/* ---- statistics and fitting ------------------------------------------------------------ */

void cs_calib_stat_of(double *d, int n, CsCalibStat *out)
{
  out->n = n;
  if (n == 0) {
    out->median = out->p90 = out->max = NAN;
    return;
  }
  gsl_sort(d, 1, (size_t)n);
  out->median = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)n, 0.5);
  out->p90 = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)n, 0.9);
  out->max = d[n - 1];
}

static void stat_of(GArray *errs, CsCalibStat *out)
{
  cs_calib_stat_of((double *)errs->data, (int)errs->len, out);
}

/* Index of model m in names, added when new. */
static int model_slot(GPtrArray *names, const char *m)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp(names->pdata[i], m) == 0)
      return (int)i;
  g_ptr_array_add(names, g_strdup(m));
  return (int)names->len - 1;
}

static int pair_index(GPtrArray *names, const char *a, const char *b)
{
  char *k1 = g_strdup_printf("%s+%s", a, b), *k2 = g_strdup_printf("%s+%s", b, a);
  int idx = -1;
  for (guint i = 0; i < names->len && idx < 0; i++)
    if (strcmp(names->pdata[i], k1) == 0 || strcmp(names->pdata[i], k2) == 0)
      idx = (int)i;
  if (idx < 0) {
    g_ptr_array_add(names, k1);
    k1 = NULL;
    idx = (int)names->len - 1;
  }
  g_free(k1);
  g_free(k2);
  return idx;
}

static CsGpuJobSpec table_spec(const CsInterferenceSet *set, int model, int batch, double share,
                               int worker)
{
  double iso_ms = cs_interference_share_latency_ms(set, model, batch, 1.0);
  return (CsGpuJobSpec){ .model = model, .batch = batch, .iso_ns = MAX(llround(iso_ms * 1e6), 1),
                         .demand = NAN, .share = share, .worker = worker };
}

/* A fallback of the batch_share form with fit's coefficients, combined by
 * the norm with q = 1/z. */
static CsInterferenceFallback batch_share_fallback(const CsBatchShareFit *fit)
{
  CsInterferenceFallback fb;
  cs_interference_fallback_init(&fb);
  fb.c = fit->c;
  fb.batch_exponent = fit->x;
  fb.share_exponent = fit->z;
  fb.fixed_exponent = fit->w;
  fb.combine_exponent = MAX(1.0, 1.0 / fit->z);
  return fb;
}

/* Simulates row r (two closed-loop workers) under cfg; errors of both. */
static void simulate_row(const CsInterferenceSet *set, const PairRow *r,
                         const CsGpuExecConfig *cfg, double err[2], double sim_ms[2])
{
  int i1 = cs_interference_set_find(set, r->m1), i2 = cs_interference_set_find(set, r->m2);
  double s1 = r->p1 / 100.0;
  SimWorker w[2] = { { table_spec(set, i1, r->b1, s1, 0), 0 },
                     { table_spec(set, i2, r->b2, 1.0 - s1, 1), 0 } };
  /* Long enough for several batches of the slower worker. */
  double slow = MAX(cs_interference_share_latency_ms(set, i1, r->b1, s1),
                    cs_interference_share_latency_ms(set, i2, r->b2, 1.0 - s1));
  double mean[2];
  simulate(cfg, w, 2, 0, llround(slow * 1e6 * 12.0), mean);
  err[0] = fabs(mean[0] - r->l1) / r->l1;
  err[1] = fabs(mean[1] - r->l2) / r->l2;
  sim_ms[0] = mean[0];
  sim_ms[1] = mean[1];
}

static void stats_of_groups(GArray **errs, int n, CsCalibStat **out)
{
  *out = g_new0(CsCalibStat, n);
  for (int k = 0; k < n; k++) {
    stat_of(errs[k], &(*out)[k]);
    g_array_unref(errs[k]);
  }
}

static gboolean run_pairs(CsGpuCalibration *c, const CsInterferenceSet *set, const CalibFile *f,
                          double gamma, const char *path, GError **error)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *models = g_ptr_array_new_with_free_func(g_free);
  int n_rows = (int)MIN(f->pairs->len, (guint)G_MAXINT / 2);
  /* Observations 2i and 2i + 1 are row i's two latencies (model1, model2);
   * pair and victim/aggressor slots in names / models. */
  CsPairObs *obs = g_new0(CsPairObs, 2 * (size_t)n_rows + 1);
  int *row_pair = g_new(int, (size_t)n_rows + 1);
  gboolean ok = TRUE;
  for (int i = 0; ok && i < n_rows; i++) {
    const PairRow *r = &g_array_index(f->pairs, PairRow, i);
    int i1 = cs_interference_set_find(set, r->m1), i2 = cs_interference_set_find(set, r->m2);
    char *p = cs_json_path_index("pairs.rows", i);
    if (!cs_interference_has_share_table(set, i1) || !cs_interference_has_share_table(set, i2))
      ok = cs_json_fail(error, path, p, "model \"%s\" has no latency-vs-share table in the "
                        "interference file",
                        cs_interference_has_share_table(set, i1) ? r->m2 : r->m1);
    else if ((row_pair[i] = pair_index(names, r->m1, r->m2)) >= MAX_PAIRS)
      ok = cs_json_fail(error, path, "pairs.rows", "more than %d model pairs", MAX_PAIRS);
    else if (model_slot(models, r->m1) >= MAX_MODELS || model_slot(models, r->m2) >= MAX_MODELS)
      ok = cs_json_fail(error, path, "pairs.rows", "more than %d models", MAX_MODELS);
    g_free(p);
    if (!ok)
      break;
    int v1 = model_slot(models, r->m1), v2 = model_slot(models, r->m2);
    double s1 = r->p1 / 100.0, s2 = 1.0 - s1;
    /* iGniter's tables give no line of batch sizes here: no victim term
     * (fixed_v 0), one group. */
    obs[2 * i] = (CsPairObs){ v1, v2, r->b1, r->b2, s1, s2,
                              r->l1 / cs_interference_share_latency_ms(set, i1, r->b1, s1), 0, 0 };
    obs[2 * i + 1] = (CsPairObs){ v2, v1, r->b2, r->b1, s2, s1,
                                  r->l2 / cs_interference_share_latency_ms(set, i2, r->b2, s2),
                                  0, 0 };
  }
  c->n_pairs = (int)names->len;
  c->n_models = (int)models->len;
  g_ptr_array_add(names, NULL);
  g_ptr_array_add(models, NULL);
  c->pair_names = (char **)g_ptr_array_free(names, FALSE); /* NULL-terminated: g_strfreev */
  c->model_names = (char **)g_ptr_array_free(models, FALSE);
  if (!ok || n_rows == 0) {
    g_free(obs);
    g_free(row_pair);
    return ok;
  }

  CsCalibPoints *pt = &c->points;
  pt->n = 2 * n_rows;
  pt->measured_ms = g_new(double, (size_t)pt->n);
  pt->solo_ms = g_new(double, (size_t)pt->n);
  pt->pair = g_new(int, (size_t)pt->n);
  pt->victim = g_new(int, (size_t)pt->n);
  pt->aggressor = g_new(int, (size_t)pt->n);
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    pt->sim_ms[v] = g_new0(double, (size_t)pt->n);
  for (int k = 0; k < pt->n; k++) {
    const PairRow *r = &g_array_index(f->pairs, PairRow, k / 2);
    pt->measured_ms[k] = k % 2 == 0 ? r->l1 : r->l2;
    pt->solo_ms[k] = pt->measured_ms[k] / obs[k].ratio;
    pt->pair[k] = row_pair[k / 2];
    pt->victim[k] = obs[k].victim;
    pt->aggressor[k] = obs[k].aggressor;
  }

  /* Fits: all rows, without each pair, without each model; the constant
   * (least squares of ratio - 1: its mean) likewise per pair. */
  gboolean *use = g_new(gboolean, 2 * (size_t)n_rows + 1);
  for (int k = 0; k < 2 * n_rows; k++)
    use[k] = TRUE;
  cs_fit_batch_share(obs, 2 * n_rows, use, &c->fit);
  for (int p = -1; p < c->n_pairs; p++) {
    double sum = 0.0;
    int n = 0;
    for (int k = 0; k < 2 * n_rows; k++) {
      use[k] = row_pair[k / 2] != p;
      if (use[k]) {
        sum += obs[k].ratio - 1.0;
        n++;
      }
    }
    *(p < 0 ? &c->all_const : &c->loo_const[p]) = n > 0 ? sum / n : 0.0;
    if (p >= 0 && !cs_fit_batch_share(obs, 2 * n_rows, use, &c->lopo_fit[p]))
      c->lopo_fit[p] = c->fit; /* too few rows left: reported as such by n */
  }
  for (int m = 0; m < c->n_models; m++) {
    for (int k = 0; k < 2 * n_rows; k++)
      use[k] = obs[k].victim != m && obs[k].aggressor != m;
    if (!cs_fit_batch_share(obs, 2 * n_rows, use, &c->lomo_fit[m]))
      c->lomo_fit[m] = c->fit;
  }
  for (int v = 0; v < MAX_MODELS; v++)
    for (int a = 0; a < MAX_MODELS; a++)
      c->scale[v][a] = NAN;
  for (int v = 0; v < c->n_models; v++)
    for (int a = 0; a < c->n_models; a++) {
      for (int k = 0; k < 2 * n_rows; k++)
        use[k] = obs[k].victim == v && obs[k].aggressor == a;
      c->scale[v][a] = cs_fit_pair_scale(obs, 2 * n_rows, use, &c->fit);
    }

  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++) {
    GArray *by_pair[MAX_PAIRS + 1], *by_model[MAX_MODELS];
    for (int p = 0; p <= c->n_pairs; p++)
      by_pair[p] = g_array_new(FALSE, FALSE, sizeof(double));
    for (int m = 0; m < c->n_models; m++)
      by_model[m] = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; i < n_rows; i++) {
      int pi = row_pair[i];
      CsGpuExecConfig cfg;
      cs_gpu_exec_config_init(&cfg, set);
      cfg.gamma = gamma;
      if (v == CS_CALIB_MODEL || v == CS_CALIB_LOPO || v == CS_CALIB_LOO_CONST)
        cfg.use_pair_table = FALSE;
      if (v == CS_CALIB_NONE)
        cfg.interference = FALSE;
      else if (v == CS_CALIB_LOPO)
        cfg.fallback = batch_share_fallback(&c->lopo_fit[pi]);
      else if (v == CS_CALIB_LOO_CONST) {
        cs_interference_fallback_init(&cfg.fallback);
        cfg.fallback.form = CS_FALLBACK_LINEAR;
        cfg.fallback.constant = c->loo_const[pi];
        cfg.fallback.combine = CS_COMBINE_PRODUCT;
      }
      double e[2];
      simulate_row(set, &g_array_index(f->pairs, PairRow, i), &cfg, e, &c->points.sim_ms[v][2 * i]);
      for (int k = 0; k < 2; k++) {
        g_array_append_val(by_pair[pi], e[k]);
        g_array_append_val(by_pair[c->n_pairs], e[k]);
        g_array_append_val(by_model[obs[2 * i + k].victim], e[k]);
      }
    }
    stats_of_groups(by_pair, c->n_pairs + 1, &c->stats[v]);
    stats_of_groups(by_model, c->n_models, &c->by_model[v]);
  }
  /* Leave one model out: the rows the model is in (both latencies). */
  GArray *lomo[MAX_MODELS];
  for (int m = 0; m < c->n_models; m++) {
    lomo[m] = g_array_new(FALSE, FALSE, sizeof(double));
    CsGpuExecConfig cfg;
    cs_gpu_exec_config_init(&cfg, set);
    cfg.gamma = gamma;
    cfg.use_pair_table = FALSE;
    cfg.fallback = batch_share_fallback(&c->lomo_fit[m]);
    for (int i = 0; i < n_rows; i++) {
      if (obs[2 * i].victim != m && obs[2 * i].aggressor != m)
        continue;
      double e[2], ms[2];
      simulate_row(set, &g_array_index(f->pairs, PairRow, i), &cfg, e, ms);
      g_array_append_vals(lomo[m], e, 2);
    }
  }
  stats_of_groups(lomo, c->n_models, &c->lomo);
  g_free(use);
  g_free(obs);
  g_free(row_pair);
  return TRUE;
}

/* ---- published co-locations ---------------------------------------------------------------- */

static gboolean run_colocations(CsGpuCalibration *c, const CsInterferenceSet *set,
                                const CalibFile *f, const CsProfileSet *profiles,
                                const CsProfileSet *share_prof, const char *share_gpu, double gamma,
                                const char *path, GError **error)
{
  static const char *const ckeys[] = { "name", "profile", "mps", "approx", "note", "workers",
                                       NULL };
  static const char *const wkeys[] = { "model", "batch", "share_pct", "rate_rps", "measured_ms",
                                       NULL };
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(f->root, "colocations");
  if (list && !cJSON_IsArray(list))
    return cs_json_fail(error, path, "colocations", "expected an array");
  GArray *out = g_array_new(FALSE, TRUE, sizeof(CsCalibColocation));
  const cJSON *item;
  int ci = 0;
  gboolean ok = TRUE;
  cJSON_ArrayForEach(item, list)
  {
    char *p = cs_json_path_index("colocations", ci++);
    const char *name = NULL, *prof = NULL, *note = "";
    gboolean mps = TRUE, approx = FALSE;
    const cJSON *workers = NULL;
    ok = cs_json_expect_object(item, path, p, error) &&
         cs_json_check_keys(item, ckeys, path, p, error) &&
         cs_json_read_string(item, "name", TRUE, &name, path, p, error) &&
         cs_json_read_string(item, "profile", TRUE, &prof, path, p, error) &&
         cs_json_read_bool(item, "mps", FALSE, &mps, path, p, error) &&
         cs_json_read_bool(item, "approx", FALSE, &approx, path, p, error) &&
         cs_json_read_string(item, "note", FALSE, &note, path, p, error);
    if (ok) {
      workers = cJSON_GetObjectItemCaseSensitive(item, "workers");
      int nw = cJSON_GetArraySize(workers);
      if (!cJSON_IsArray(workers) || nw < 1 || nw > MAX_WORKERS) {
        char *wp = cs_json_path_key(p, "workers");
        ok = cs_json_fail(error, path, wp, "expected an array of 1 to %d workers", MAX_WORKERS);
        g_free(wp);
      }
    }
    gboolean from_profile = ok && strcmp(prof, "interference") != 0;
    if (ok && from_profile && !profiles) {
      g_free(p);
      continue; /* no profile file given: skip */
    }
    CsCalibColocation col = { 0 };
    SimWorker w[MAX_WORKERS];
    if (ok) {
      col.name = g_strdup(name);
      col.note = g_strdup(note);
      col.approx = approx;
      col.n_workers = cJSON_GetArraySize(workers);
      col.workers = g_new0(CsCalibWorker, col.n_workers);
    }
    for (int k = 0; ok && k < col.n_workers; k++) {
      const cJSON *wn = cJSON_GetArrayItem(workers, k);
      char *wp = g_strdup_printf("%s.workers[%d]", p, k);
      const char *model = NULL;
      int batch = 0;
      double share_pct = 0, rate = 0, measured = NAN;
      ok = cs_json_expect_object(wn, path, wp, error) &&
           cs_json_check_keys(wn, wkeys, path, wp, error) &&
           cs_json_read_string(wn, "model", TRUE, &model, path, wp, error) &&
           cs_json_read_int(wn, "batch", TRUE, 1, 1 << 20, &batch, path, wp, error) &&
           cs_json_read_double(wn, "share_pct", FALSE, 0, 100, &share_pct, path, wp, error) &&
           cs_json_read_double(wn, "rate_rps", TRUE, 1e-3, 1e9, &rate, path, wp, error) &&
           cs_json_read_double(wn, "measured_ms", FALSE, 1e-6, 1e9, &measured, path, wp, error);
      if (ok) {
        CsCalibWorker *cw = &col.workers[k];
        cw->model = g_strdup(model);
        cw->batch = batch;
        cw->share = share_pct / 100.0;
        cw->measured_ms = measured;
        int mi = cs_interference_set_find(set, model);
        if (!from_profile) {
          if (!cs_interference_has_share_table(set, mi))
            ok = cs_json_fail(error, path, wp, "model \"%s\" has no latency-vs-share table in "
                              "the interference file", model);
          else
            w[k].spec = table_spec(set, mi, batch, cw->share, k);
          /* the tables' own models: the share rule's f from their profile */
          const CsModelProfile *sp =
            share_prof ? cs_profile_set_lookup(share_prof, share_gpu, model) : NULL;
          w[k].spec.fixed = sp ? 1.0 - cs_share_scalable_fraction(sp, batch) : 0.0;
        } else {
          const CsModelProfile *mp = cs_profile_set_lookup(profiles, prof, model);
          if (!mp) {
            ok = cs_json_fail(error, path, wp, "no profile of \"%s\" on GPU type \"%s\"",
                              model, prof);
          } else {
            const CsBatchPoint *bp = cs_model_profile_point(mp, batch);
            w[k].spec = (CsGpuJobSpec){
              .model = mi, .batch = batch, .iso_ns = cs_model_profile_latency_ns(mp, batch),
              .demand = bp ? bp->creq_pct[CS_CREQ_WSM] / 100.0 : NAN, .share = cw->share,
              .worker = k, .fixed = 1.0 - cs_share_scalable_fraction(mp, batch) };
          }
        }
        w[k].rate_rps = rate;
      }
      g_free(wp);
    }
    if (ok) {
      double mean[MAX_WORKERS];
      for (int variant = 0; variant < 3; variant++) { /* as loaded, unseen, formula */
        CsGpuExecConfig cfg;
        cs_gpu_exec_config_init(&cfg, set);
        cfg.gamma = gamma;
        cfg.mode = mps ? CS_GPU_MPS : CS_GPU_TIME_SLICE;
        cfg.use_pair_table = variant != 1;
        cfg.use_share_tables = variant != 2;
        simulate(&cfg, w, col.n_workers, OPEN_WARMUP_NS, OPEN_HORIZON_NS, mean);
        for (int k = 0; k < col.n_workers; k++)
          *(variant == 0   ? &col.workers[k].sim_ms
            : variant == 1 ? &col.workers[k].sim_unseen_ms
                           : &col.workers[k].sim_formula_ms) = mean[k];
      }
      g_array_append_val(out, col);
    } else if (col.workers) {
      for (int k = 0; k < col.n_workers; k++)
        g_free(col.workers[k].model);
      g_free(col.workers);
      g_free(col.name);
      g_free(col.note);
    }
    g_free(p);
    if (!ok)
      break;
  }
  c->n_colocations = (int)out->len;
  c->colocations = (CsCalibColocation *)g_array_free(out, FALSE);
  return ok;
}

/* ---- entry points ------------------------------------------------------------------------- */

void cs_gpu_calibration_free(CsGpuCalibration *c)
{
  if (!c)
    return;
  g_strfreev(c->pair_names);
  g_strfreev(c->model_names);
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++) {
    g_free(c->stats[v]);
    g_free(c->by_model[v]);
  }
  g_free(c->lomo);
  g_free(c->points.measured_ms);
  g_free(c->points.solo_ms);
  g_free(c->points.pair);
  g_free(c->points.victim);
  g_free(c->points.aggressor);
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    g_free(c->points.sim_ms[v]);
  for (int i = 0; i < c->n_colocations; i++) {
    CsCalibColocation *col = &c->colocations[i];
    for (int k = 0; k < col->n_workers; k++)
      g_free(col->workers[k].model);
    g_free(col->workers);
    g_free(col->name);
    g_free(col->note);
  }
  g_free(c->colocations);
  cs_calib_share_free(c->share);
  cs_calib_mig_free(c->mig);
  for (int i = 0; i < c->n_share_sources; i++)
    cs_calib_share_free(c->share_sources[i]);
  g_free(c->share_sources);
  g_strfreev(c->share_source_paths);
  g_free(c->share_source_models);
  cs_calib_share_free(c->share_pooled);
  g_free(c);
}

/* The share rule on each measured file alone and on everything at once. */
static gboolean run_share_sources(CsGpuCalibration *c, const CsInterferenceSet *set,
                                  const CsProfileSet *share_prof,
                                  const CsGpuCalibrateOptions *opt, double gamma, GError **error)
{
  int n = (int)g_strv_length((char **)opt->share_measured_paths);
  CsMeasuredFile **files = g_new0(CsMeasuredFile *, MAX(n, 1));
  gboolean ok = TRUE;
  c->share_sources = g_new0(CsCalibShare *, MAX(n, 1));
  c->share_source_models = g_new0(int, MAX(n, 1));
  c->share_source_paths = g_new0(char *, n + 1);
  for (int i = 0; ok && i < n; i++) {
    files[i] = cs_measured_file_load(opt->share_measured_paths[i], error);
    ok = files[i] != NULL;
    if (ok) {
      c->share_sources[i] = cs_calib_share_run_all(NULL, NULL, NULL, NULL,
                                                   (const CsMeasuredFile *const *)&files[i], 1,
                                                   gamma, &c->share_source_models[i], error);
      ok = c->share_sources[i] != NULL;
    }
    c->share_source_paths[i] = g_strdup(opt->share_measured_paths[i]);
    c->n_share_sources = i + 1;
  }
  if (ok) {
    c->share_pooled = cs_calib_share_run_all(
      share_prof ? set : NULL, share_prof, opt->share_profile_path,
      opt->share_gpu_type ? opt->share_gpu_type : "v100_igniter",
      (const CsMeasuredFile *const *)files, n, gamma, NULL, error);
    ok = c->share_pooled != NULL;
  }
  for (int i = 0; i < n; i++)
    cs_measured_file_free(files[i]);
  g_free(files);
  return ok;
}

CsGpuCalibration *cs_gpu_calibrate(const CsGpuCalibrateOptions *opt, GError **error)
{
  g_return_val_if_fail(opt && opt->interference_path && opt->calibration_path, NULL);
  double gamma = opt->gamma > 0 ? opt->gamma : 1.0;
  CsInterferenceSet *set = cs_interference_set_load_file(opt->interference_path, error);
  if (!set)
    return NULL;
  CsProfileSet *profiles = NULL;
  if (opt->profile_path) {
    profiles = cs_profile_set_new();
    if (!cs_profile_set_load_file(profiles, opt->profile_path, error)) {
      cs_profile_set_free(profiles);
      cs_interference_set_free(set);
      return NULL;
    }
  }
  CsProfileSet *share_prof = NULL;
  const char *share_gpu = opt->share_gpu_type ? opt->share_gpu_type : "v100_igniter";
  if (opt->share_profile_path) {
    share_prof = cs_profile_set_new();
    if (!cs_profile_set_load_file(share_prof, opt->share_profile_path, error)) {
      cs_profile_set_free(share_prof);
      cs_profile_set_free(profiles);
      cs_interference_set_free(set);
      return NULL;
    }
  }
  CalibFile f;
  CsGpuCalibration *c = g_new0(CsGpuCalibration, 1);
  gboolean ok = load_calib(opt->calibration_path, &f, error) &&
                run_pairs(c, set, &f, gamma, opt->calibration_path, error) &&
                run_colocations(c, set, &f, profiles, share_prof, share_gpu, gamma,
                                opt->calibration_path, error);
  if (ok && share_prof) {
    c->share = cs_calib_share_run(set, share_prof, opt->share_profile_path, share_gpu, gamma,
                                  error);
    ok = c->share != NULL;
  }
  if (ok && opt->share_measured_paths)
    ok = run_share_sources(c, set, share_prof, opt, gamma, error);
  if (ok && opt->mig_path) {
    CsInterferenceSet *mig = cs_interference_set_load_file(opt->mig_path, error);
    c->mig = mig ? cs_calib_mig_run(mig, opt->mig_path, error) : NULL;
    ok = c->mig != NULL;
    cs_interference_set_free(mig);
  }
  cs_profile_set_free(share_prof);
  calib_file_clear(&f);
  cs_profile_set_free(profiles);
  cs_interference_set_free(set);
  if (!ok) {
    cs_gpu_calibration_free(c);
    return NULL;
  }
  return c;
}

gboolean cs_gpu_calibrate_run(const CsGpuCalibrateOptions *opt, FILE *out, GError **error)
{
  CsGpuCalibration *c = cs_gpu_calibrate(opt, error);
  if (!c)
    return FALSE;
  cs_gpu_calibration_print(c, opt, out);
  cs_gpu_calibration_free(c);
  return TRUE;
}
