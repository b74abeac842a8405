/* The GPU model scored on measured co-located rows; see calibrate_measured.h. */
#include "calibrate/calibrate_measured.h"

#include <gsl/gsl_multifit.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/share_rule.h"
#include "gpu/gpu_exec.h"

#define MAX_WORKERS 64
#define VICTIM_BATCHES 8   /* closed loop: every victim batch sees the same set, so a few suffice */
#define MAX_EVENTS 4000000 /* a bound, never reached by a row a source can measure */

static const char *const method_names[CS_SCORE_N_METHODS] = { "model", "none", "constant",
                                                               "pair_factor", "pair_loglinear" };

const char *cs_score_method_name(CsScoreMethod m)
{
  return (unsigned)m < CS_SCORE_N_METHODS ? method_names[m] : "?";
}

/* A row to score, and its workers (0 = the victim). */
typedef struct {
  const CsMeasuredRow *row;
  int n_workers;
  CsGpuJobSpec spec[MAX_WORKERS];
  char *pair, *source;
} Job;

static gboolean usable_row(const CsMeasuredRow *r)
{
  return r->kind == CS_MEASURED_COLOCATED && r->mig_gpcs == 0 &&
         !(r->time_quota_pct < 100);
}

/* The spec of one worker as the engine builds it (src/sim/gpus.c gpu_start). */
static CsGpuJobSpec spec_of(const CsScoreOptions *opt, const CsModelProfile *prof,
                            const char *model, int batch, double share_pct, int worker)
{
  double share = isnan(share_pct) || share_pct >= 100 ? 0.0 : share_pct / 100.0;
  const CsBatchPoint *near = cs_model_profile_nearest_point(prof, batch);
  CsInterferenceFallback builtin;
  cs_interference_fallback_init(&builtin);
  const CsInterferenceFallback *fb = opt->tables ? cs_interference_set_fallback(opt->tables)
                                                 : &builtin;
  gboolean needs_fixed = (share > 0.0 && share < 1.0) || fb->fixed_exponent != 0.0;
  double scalable = needs_fixed ? cs_share_scalable_fraction(prof, batch) : NAN;
  return (CsGpuJobSpec){
    .model = cs_interference_set_find(opt->tables, model),
    .batch = batch,
    .iso_ns = MAX(cs_model_profile_exec_ns(prof, batch), 1),
    .demand = near ? near->creq_pct[CS_CREQ_WSM] / 100.0 : NAN,
    .share = share,
    .worker = worker,
    .fixed = isnan(scalable) ? 0.0 : 1.0 - scalable,
  };
}

/* Mean latency (ms) of the victim's batches, every worker closed loop from 0. */
static double simulate(const CsGpuExecConfig *cfg, const Job *j)
{
  CsGpuExec *g = cs_gpu_exec_new(cfg);
  int64_t start[MAX_WORKERS];
  for (int k = 0; k < j->n_workers; k++) {
    cs_gpu_exec_start(g, 0, (uint64_t)k, &j->spec[k]);
    start[k] = 0;
  }
  double sum = 0;
  int done = 0;
  for (long ev = 0; done < VICTIM_BATCHES && ev < MAX_EVENTS; ev++) {
    int64_t t;
    uint64_t id;
    if (!cs_gpu_exec_next(g, &t, &id))
      break;
    cs_gpu_exec_finish(g, t, id);
    if (id == 0) {
      sum += (double)(t - start[0]);
      done++;
    }
    start[id] = t;
    cs_gpu_exec_start(g, t, id, &j->spec[id]);
  }
  cs_gpu_exec_free(g);
  return done > 0 ? sum / done / 1e6 : NAN;
}

typedef struct {
  char *reason;
  int n;
} Skip;

static void skip(GPtrArray *skips, const char *reason)
{
  for (guint i = 0; i < skips->len; i++) {
    Skip *s = skips->pdata[i];
    if (strcmp(s->reason, reason) == 0) {
      s->n++;
      return;
    }
  }
  Skip *s = g_new0(Skip, 1);
  s->reason = g_strdup(reason);
  s->n = 1;
  g_ptr_array_add(skips, s);
}

/* Builds the job of row r; NULL (reason added) when it cannot be scored. */
static gboolean make_job(const CsScoreOptions *opt, const CsMeasuredRow *r, Job *j,
                         GPtrArray *skips)
{
  memset(j, 0, sizeof *j);
  if (r->kind == CS_MEASURED_ISOLATED) {
    skip(skips, "isolated rows (nothing co-located to predict)");
    return FALSE;
  }
  if (r->kind == CS_MEASURED_COLOCATED_SAME_MODEL || r->mig_gpcs > 0) {
    skip(skips, "MIG rows (an instance, not MPS on the whole GPU)");
    return FALSE;
  }
  if (r->time_quota_pct < 100) {
    skip(skips, "time quota below 100 %");
    return FALSE;
  }
  const CsModelProfile *vp = cs_profile_set_lookup(opt->profile, opt->gpu_type, r->model);
  if (!vp) {
    char *m = g_strdup_printf("victim model %s not in the profile", r->model);
    skip(skips, m);
    g_free(m);
    return FALSE;
  }
  j->row = r;
  j->spec[0] = spec_of(opt, vp, r->model, r->batch, r->share_pct, 0);
  j->n_workers = 1;
  GString *pair = g_string_new(r->model);
  g_string_append_c(pair, '|');
  for (int p = 0; p < r->n_partners; p++) {
    const CsMeasuredPartner *q = &r->partners[p];
    const CsModelProfile *pp = cs_profile_set_lookup(opt->profile, opt->gpu_type, q->model);
    if (!pp || j->n_workers + q->copies > MAX_WORKERS) {
      char *m = !pp ? g_strdup_printf("partner model %s not in the profile", q->model)
                    : g_strdup_printf("more than %d co-running processes", MAX_WORKERS - 1);
      skip(skips, m);
      g_free(m);
      g_string_free(pair, TRUE);
      return FALSE;
    }
    for (int c = 0; c < q->copies; c++, j->n_workers++)
      j->spec[j->n_workers] = spec_of(opt, pp, q->model, q->batch, q->share_pct, j->n_workers);
    g_string_append_printf(pair, "%s%s", p ? "+" : "", q->model);
    if (q->copies > 1)
      g_string_append_printf(pair, "x%d", q->copies);
  }
  j->pair = g_string_free(pair, FALSE);
  j->source = g_strdup(r->source);
  return TRUE;
}

/* Index of name in names (added when new). */
static int slot(GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp(names->pdata[i], name) == 0)
      return (int)i;
  g_ptr_array_add(names, g_strdup(name));
  return (int)names->len - 1;
}

/* K = exp(mean log(latency / isolated)) over the shipped rows of source
 * (NULL: all). Returns the number of rows used. */
static int fit_constant(const CsScoreOptions *opt, const char *source, double *k)
{
  double sum = 0;
  int n = 0;
  for (int f = 0; f < opt->n_shipped; f++)
    for (int i = 0; i < opt->shipped[f]->n_rows; i++) {
      const CsMeasuredRow *r = &opt->shipped[f]->rows[i];
      if (!usable_row(r) || isnan(r->isolated_latency_ms) ||
          (source && strcmp(source, r->source) != 0))
        continue;
      sum += log(r->latency_ms / r->isolated_latency_ms);
      n++;
    }
  *k = n > 0 ? exp(sum / n) : NAN;
  return n;
}

/* Features of the log-linear floor: 1, log b_v, log b_a, log s_v, log s_a
 * (the first partner's batch and share; a blank share is 1). */
enum { N_FEATURES = 5 };
static void features(const Job *j, double x[N_FEATURES])
{
  const CsMeasuredRow *r = j->row;
  double sv = isnan(r->share_pct) ? 100 : r->share_pct;
  double sa = isnan(r->partners[0].share_pct) ? 100 : r->partners[0].share_pct;
  x[0] = 1.0;
  x[1] = log(r->batch);
  x[2] = log(r->partners[0].batch);
  x[3] = log(sv / 100);
  x[4] = log(sa / 100);
}

/* pred[i] = none[i] * exp(x_i . beta) with beta fitted by linear least
 * squares of log(measured / none) over the rows of pair p (truncated SVD:
 * a feature constant within the pair drops out). */
static void fit_loglinear(CsScoreResult *res, const Job *jobs, int p)
{
  int n = 0;
  for (int i = 0; i < res->n_rows; i++)
    n += res->row_pair[i] == p;
  if (n < 2 * N_FEATURES) {
    /* Too few rows for five terms: the pair's factor alone. */
    for (int i = 0; i < res->n_rows; i++)
      if (res->row_pair[i] == p)
        res->sim_ms[CS_SCORE_PAIR_LOGLINEAR][i] = res->sim_ms[CS_SCORE_PAIR_FACTOR][i];
    return;
  }
  gsl_matrix *X = gsl_matrix_alloc((size_t)n, N_FEATURES);
  gsl_vector *y = gsl_vector_alloc((size_t)n), *beta = gsl_vector_alloc(N_FEATURES);
  gsl_matrix *cov = gsl_matrix_alloc(N_FEATURES, N_FEATURES);
  gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, N_FEATURES);
  int k = 0;
  for (int i = 0; i < res->n_rows; i++)
    if (res->row_pair[i] == p) {
      double x[N_FEATURES];
      features(&jobs[i], x);
      for (int c = 0; c < N_FEATURES; c++)
        gsl_matrix_set(X, (size_t)k, (size_t)c, x[c]);
      gsl_vector_set(y, (size_t)k, log(res->measured_ms[i] / res->sim_ms[CS_SCORE_NONE][i]));
      k++;
    }
  double chisq;
  size_t rank;
  gsl_multifit_linear_tsvd(X, y, 1e-10, beta, cov, &chisq, &rank, w);
  for (int i = 0; i < res->n_rows; i++)
    if (res->row_pair[i] == p) {
      double x[N_FEATURES], e = 0;
      features(&jobs[i], x);
      for (int c = 0; c < N_FEATURES; c++)
        e += x[c] * gsl_vector_get(beta, (size_t)c);
      res->sim_ms[CS_SCORE_PAIR_LOGLINEAR][i] = res->sim_ms[CS_SCORE_NONE][i] * exp(e);
    }
  gsl_multifit_linear_free(w);
  gsl_matrix_free(X);
  gsl_matrix_free(cov);
  gsl_vector_free(y);
  gsl_vector_free(beta);
}

static void group_stats(const CsScoreResult *res, const int *member, int id, CsScoreGroup *g)
{
  double *errs = g_new(double, (size_t)res->n_rows + 1);
  for (int m = 0; m < CS_SCORE_N_METHODS; m++) {
    int n = 0;
    for (int i = 0; i < res->n_rows; i++)
      if (!member || member[i] == id) {
        double sim = res->sim_ms[m][i];
        errs[n++] = isfinite(sim) ? fabs(sim - res->measured_ms[i]) / res->measured_ms[i]
                                  : INFINITY;
      }
    cs_calib_stat_of(errs, n, &g->stat[m]);
  }
  g_free(errs);
}

static int cmp_group(const void *a, const void *b)
{
  return strcmp(((const CsScoreGroup *)a)->name, ((const CsScoreGroup *)b)->name);
}

/* Groups by names, sorted; member[] renumbered to the sorted order. */
static CsScoreGroup *make_groups(CsScoreResult *res, GPtrArray *names, int *member)
{
  int n = (int)names->len;
  CsScoreGroup *g = g_new0(CsScoreGroup, (size_t)n + 1);
  for (int i = 0; i < n; i++) {
    g[i].name = g_strdup(names->pdata[i]);
    group_stats(res, member, i, &g[i]);
    g[i].measured = i; /* the old index, until renumbered below */
  }
  qsort(g, (size_t)n, sizeof *g, cmp_group);
  int *to = g_new(int, (size_t)n + 1);
  for (int i = 0; i < n; i++)
    to[g[i].measured] = i;
  for (int i = 0; i < res->n_rows; i++)
    member[i] = to[member[i]];
  for (int i = 0; i < n; i++)
    g[i].measured = FALSE;
  g_free(to);
  return g;
}

CsScoreResult *cs_score_measured(const CsScoreOptions *opt, GError **error)
{
  CsScoreResult *res = g_new0(CsScoreResult, 1);
  GPtrArray *skips = g_ptr_array_new();
  GArray *jobs = g_array_new(FALSE, TRUE, sizeof(Job));
  for (int f = 0; f < opt->n_files; f++)
    for (int i = 0; i < opt->files[f]->n_rows; i++) {
      Job j;
      if (make_job(opt, &opt->files[f]->rows[i], &j, skips))
        g_array_append_val(jobs, j);
    }
  res->skipped = g_ptr_array_new_with_free_func(g_free);
  res->gpus = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < skips->len; i++) {
    Skip *s = skips->pdata[i];
    g_ptr_array_add(res->skipped, g_strdup_printf("%d row%s: %s", s->n, s->n == 1 ? "" : "s",
                                                  s->reason));
    res->n_skipped += s->n;
    g_free(s->reason);
    g_free(s);
  }
  g_ptr_array_free(skips, TRUE);
  int n = res->n_rows = (int)jobs->len;
  if (n == 0) {
    GString *why = g_string_new("no co-located row to score");
    for (guint i = 0; i < res->skipped->len; i++)
      g_string_append_printf(why, "%s%s", i ? "; " : " (", (char *)res->skipped->pdata[i]);
    if (res->skipped->len)
      g_string_append_c(why, ')');
    g_set_error_literal(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, why->str);
    g_string_free(why, TRUE);
    g_array_free(jobs, TRUE);
    cs_score_result_free(res);
    return NULL;
  }
  res->measured_ms = g_new(double, (size_t)n);
  for (int m = 0; m < CS_SCORE_N_METHODS; m++)
    res->sim_ms[m] = g_new(double, (size_t)n);
  res->row_source = g_new(int, (size_t)n);
  res->row_pair = g_new(int, (size_t)n);
  GPtrArray *sources = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *pairs = g_ptr_array_new_with_free_func(g_free);

  CsGpuExecConfig cfg_model, cfg_none;
  cs_gpu_exec_config_init(&cfg_model, opt->tables);
  cfg_model.mode = CS_GPU_MPS;
  if (opt->gamma > 0)
    cfg_model.gamma = opt->gamma;
  cfg_none = cfg_model;
  cfg_none.interference = FALSE;
  for (int i = 0; i < n; i++) {
    Job *j = &g_array_index(jobs, Job, i);
    res->measured_ms[i] = j->row->latency_ms;
    res->sim_ms[CS_SCORE_MODEL][i] = simulate(&cfg_model, j);
    res->sim_ms[CS_SCORE_NONE][i] = simulate(&cfg_none, j);
    res->row_source[i] = slot(sources, j->source);
    /* A pair of one source: the same names elsewhere were measured elsewhere. */
    char *key = g_strdup_printf("%s\t%s", j->source, j->pair);
    res->row_pair[i] = slot(pairs, key);
    g_free(key);
    slot(res->gpus, j->row->gpu);
  }

  /* constant: per source, on its own shipped rows when there are any, else
   * on all of them. */
  double *k_source = g_new(double, sources->len + 1);
  for (guint i = 0; i < sources->len; i++)
    if (fit_constant(opt, sources->pdata[i], &k_source[i]) == 0)
      fit_constant(opt, NULL, &k_source[i]);
  /* pair_factor: exp(mean log(measured / none)) per pair, on these rows. */
  double *lsum = g_new0(double, pairs->len + 1);
  int *lcount = g_new0(int, pairs->len + 1);
  for (int i = 0; i < n; i++) {
    lsum[res->row_pair[i]] += log(res->measured_ms[i] / res->sim_ms[CS_SCORE_NONE][i]);
    lcount[res->row_pair[i]]++;
  }
  for (int i = 0; i < n; i++) {
    int p = res->row_pair[i];
    double none = res->sim_ms[CS_SCORE_NONE][i];
    res->sim_ms[CS_SCORE_CONSTANT][i] = none * k_source[res->row_source[i]];
    res->sim_ms[CS_SCORE_PAIR_FACTOR][i] = none * exp(lsum[p] / lcount[p]);
  }
  g_free(lsum);
  g_free(lcount);
  g_free(k_source);
  for (guint p = 0; p < pairs->len; p++)
    fit_loglinear(res, (const Job *)(void *)jobs->data, (int)p);

  res->total.name = g_strdup("total");
  group_stats(res, NULL, 0, &res->total);
  res->n_sources = (int)sources->len;
  res->n_pairs = (int)pairs->len;
  res->sources = make_groups(res, sources, res->row_source);
  for (int i = 0; i < res->n_sources; i++) {
    CsScoreGroup *g = &res->sources[i];
    g->constant_rows = fit_constant(opt, g->name, &g->constant);
    g->constant_own = g->constant_rows > 0;
    if (!g->constant_own)
      g->constant_rows = fit_constant(opt, NULL, &g->constant);
  }
  res->pairs = make_groups(res, pairs, res->row_pair);
  /* A pair is "measured" when the interference data has its (single
   * partner's) ordered pair. */
  for (int i = 0; i < n; i++) {
    const Job *j = &g_array_index(jobs, Job, i);
    if (opt->tables && j->n_workers == 2 && j->spec[0].model >= 0 && j->spec[1].model >= 0 &&
        (isfinite(cs_interference_pair_scale(opt->tables, j->spec[0].model, j->spec[1].model)) ||
         isfinite(cs_interference_pair(opt->tables, j->spec[0].model, j->spec[1].model))))
      res->pairs[res->row_pair[i]].measured = TRUE;
  }
  for (int i = 0; i < n; i++) {
    Job *j = &g_array_index(jobs, Job, i);
    g_free(j->pair);
    g_free(j->source);
  }
  g_array_free(jobs, TRUE);
  g_ptr_array_free(sources, TRUE);
  g_ptr_array_free(pairs, TRUE);
  return res;
}

void cs_score_result_free(CsScoreResult *r)
{
  if (!r)
    return;
  g_free(r->measured_ms);
  for (int m = 0; m < CS_SCORE_N_METHODS; m++)
    g_free(r->sim_ms[m]);
  g_free(r->row_source);
  g_free(r->row_pair);
  g_free(r->total.name);
  for (int i = 0; i < r->n_sources; i++)
    g_free(r->sources[i].name);
  for (int i = 0; i < r->n_pairs; i++)
    g_free(r->pairs[i].name);
  g_free(r->sources);
  g_free(r->pairs);
  if (r->skipped)
    g_ptr_array_free(r->skipped, TRUE);
  if (r->gpus)
    g_ptr_array_free(r->gpus, TRUE);
  g_free(r);
}

/* ---- report ------------------------------------------------------------------ */

static void print_group(const CsScoreGroup *g, const char *label, FILE *out)
{
  fprintf(out, "%-52s %6d", label, g->stat[0].n);
  for (int m = 0; m < CS_SCORE_N_METHODS; m++)
    fprintf(out, "  %6.1f %6.1f", 100 * g->stat[m].median, 100 * g->stat[m].p90);
  fputc('\n', out);
}

void cs_score_print(const CsScoreResult *r, const char *header, FILE *out)
{
  fprintf(out, "%s\n", header);
  fprintf(out, "rows scored: %d; not scored: %d%s", r->n_rows, r->n_skipped,
              r->skipped->len ? " (" : "\n");
  for (guint i = 0; i < r->skipped->len; i++)
    fprintf(out, "%s%s", i ? "; " : "", (char *)r->skipped->pdata[i]);
  if (r->skipped->len)
    fputs(")\n", out);
  for (int i = 0; i < r->n_sources; i++) {
    const CsScoreGroup *g = &r->sources[i];
    fprintf(out, "constant slowdown of source %s: %.4f, fitted on %d shipped pair rows%s\n",
            g->name, g->constant, g->constant_rows, g->constant_own ? " of that source"
                                                                 : " (all sources: none of it)");
  }
  fputc('\n', out);
  fprintf(out, "|sim - real| / real, %% (median p90)\n");
  fprintf(out, "%-52s %6s", "", "rows");
  for (int m = 0; m < CS_SCORE_N_METHODS; m++)
    fprintf(out, "  %13s", method_names[m]);
  fputc('\n', out);
  print_group(&r->total, "total", out);
  for (int i = 0; i < r->n_sources; i++) {
    char *l = g_strdup_printf("source %s", r->sources[i].name);
    print_group(&r->sources[i], l, out);
    g_free(l);
  }
  for (int i = 0; i < r->n_pairs; i++) {
    const char *tab = strchr(r->pairs[i].name, '\t');
    char *src = g_strndup(r->pairs[i].name, (gsize)(tab - r->pairs[i].name));
    char *l = r->n_sources > 1
                ? g_strdup_printf("pair %s%s, %s", tab + 1,
                                  r->pairs[i].measured ? " (measured scale)" : "", src)
                : g_strdup_printf("pair %s%s", tab + 1,
                                  r->pairs[i].measured ? " (measured scale)" : "");
    g_free(src);
    print_group(&r->pairs[i], l, out);
    g_free(l);
  }
  fputs("\nmodel: the GPU model as shipped; none: no interference; constant: none x the constant;\n"
        "pair_factor: none x one factor per ordered pair fitted on these rows; pair_loglinear:\n"
        "none x a log-linear factor per ordered pair in both batches and shares fitted on these\n"
        "rows (the floor).\n", out);
}

static cJSON *stat_json(const CsCalibStat *s)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "rows", s->n);
  cJSON_AddNumberToObject(o, "median_pct", 100 * s->median);
  cJSON_AddNumberToObject(o, "p90_pct", 100 * s->p90);
  cJSON_AddNumberToObject(o, "max_pct", 100 * s->max);
  return o;
}

static cJSON *group_json(const CsScoreGroup *g)
{
  cJSON *o = stat_json(&g->stat[CS_SCORE_MODEL]);
  cJSON *b = cJSON_AddObjectToObject(o, "baselines");
  for (int m = CS_SCORE_NONE; m < CS_SCORE_N_METHODS; m++)
    cJSON_AddItemToObject(b, method_names[m], stat_json(&g->stat[m]));
  return o;
}

cJSON *cs_score_json(const CsScoreResult *r)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddItemToObject(root, "total", group_json(&r->total));
  cJSON *b = cJSON_AddObjectToObject(root, "baselines");
  for (int m = CS_SCORE_NONE; m < CS_SCORE_N_METHODS; m++)
    cJSON_AddItemToObject(b, method_names[m], stat_json(&r->total.stat[m]));
  cJSON *s = cJSON_AddArrayToObject(root, "sources");
  for (int i = 0; i < r->n_sources; i++) {
    const CsScoreGroup *g = &r->sources[i];
    cJSON *o = group_json(g);
    cJSON_AddItemToObject(o, "source", cJSON_CreateString(g->name));
    cJSON *c = cJSON_AddObjectToObject(o, "constant");
    if (isfinite(g->constant))
      cJSON_AddNumberToObject(c, "slowdown", g->constant);
    else
      cJSON_AddNullToObject(c, "slowdown");
    cJSON_AddNumberToObject(c, "rows", g->constant_rows);
    cJSON_AddBoolToObject(c, "own_source", g->constant_own);
    cJSON_AddItemToArray(s, o);
  }
  cJSON *p = cJSON_AddArrayToObject(root, "pairs");
  for (int i = 0; i < r->n_pairs; i++) {
    cJSON *o = group_json(&r->pairs[i]);
    const char *tab = strchr(r->pairs[i].name, '\t'), *bar = strchr(tab, '|');
    char *src = g_strndup(r->pairs[i].name, (gsize)(tab - r->pairs[i].name));
    char *victim = g_strndup(tab + 1, (gsize)(bar - tab - 1));
    cJSON_AddStringToObject(o, "source", src);
    g_free(src);
    cJSON_AddStringToObject(o, "victim", victim);
    cJSON_AddStringToObject(o, "aggressor", bar + 1);
    cJSON_AddBoolToObject(o, "measured_scale", r->pairs[i].measured);
    g_free(victim);
    cJSON_AddItemToArray(p, o);
  }
  cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
  for (guint i = 0; i < r->gpus->len; i++)
    cJSON_AddItemToArray(gpus, cJSON_CreateString(r->gpus->pdata[i]));
  cJSON *ns = cJSON_AddObjectToObject(root, "not_scored");
  cJSON_AddNumberToObject(ns, "rows", r->n_skipped);
  cJSON *why = cJSON_AddArrayToObject(ns, "reasons");
  for (guint i = 0; i < r->skipped->len; i++)
    cJSON_AddItemToArray(why, cJSON_CreateString(r->skipped->pdata[i]));
  return root;
}
