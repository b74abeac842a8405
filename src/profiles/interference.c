/* Loader and queries of interference data; see interference.h and
 * docs/gpu-model.md for the file format and the interpolation rules. */
#include "interference.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/mig_table.h"

/* A table over (batch, share), completed to the full grid of the batch sizes
 * and shares that occur. nb == 0 means "no table". */
typedef struct {
  int nb, ns;
  int *batches;        /* ascending, unique */
  double *shares;      /* fractions in (0, 1], ascending, unique */
  double *v;           /* nb * ns values, row-major by batch */
  gboolean *measured;  /* which cells were in the file */
} Grid;

typedef struct {
  char *name;
  Grid lat;                      /* latency in ms */
  Grid util[CS_UTIL_N_METRICS];  /* utilisation as a fraction */
  CsMigTable *mig;               /* measured MIG instances (mig_table.h), or NULL */
} Model;

struct CsInterferenceSet {
  char *source;
  char *description;
  GArray *models;          /* Model */
  double *pairs;           /* n * n slowdowns, NAN = missing; built after parsing */
  double *scales;          /* n * n scales on the fallback's excess, NAN = missing */
  CsInterferenceFallback fb;
};

/* ---- fallback -------------------------------------------------------------- */

void cs_interference_fallback_init(CsInterferenceFallback *fb)
{
  *fb = (CsInterferenceFallback){
    .form = CS_FALLBACK_BATCH_SHARE,
    .c = CS_INTERFERENCE_DEFAULT_C,
    .batch_exponent = CS_INTERFERENCE_DEFAULT_BATCH_EXPONENT,
    .share_exponent = CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT,
    .constant = CS_INTERFERENCE_DEFAULT_CONSTANT,
    .metric = CS_UTIL_L2,
    .default_util = CS_INTERFERENCE_DEFAULT_UTIL,
    .combine = CS_COMBINE_NORM,
    .combine_exponent = 1.0 / CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT,
  };
}

double cs_interference_fallback_excess(const CsInterferenceFallback *fb, const CsPairSide *v,
                                       const CsPairSide *a)
{
  if (fb->form == CS_FALLBACK_LINEAR)
    return cs_interference_fallback_eval(fb, v->util, a->util) - 1.0;
  double e = fb->c * pow((double)a->batch, fb->batch_exponent) *
             pow(4.0 * a->sm_share * v->sm_share, fb->share_exponent);
  if (fb->fixed_exponent != 0.0) /* skipped, not multiplied by 1: outputs stay bit-identical */
    e *= pow(MAX(CLAMP(v->fixed, 0.0, 1.0), CS_INTERFERENCE_MIN_FIXED), fb->fixed_exponent);
  return e > 0.0 ? e : 0.0;
}

double cs_interference_combine_term(const CsInterferenceFallback *fb, double excess)
{
  if (!(excess > 0.0))
    return 0.0;
  return fb->combine == CS_COMBINE_NORM ? pow(excess, fb->combine_exponent) : log1p(excess);
}

double cs_interference_combine_factor(const CsInterferenceFallback *fb, double sum)
{
  if (!(sum > 0.0))
    return 1.0;
  return fb->combine == CS_COMBINE_NORM ? 1.0 + pow(sum, 1.0 / fb->combine_exponent) : exp(sum);
}

double cs_interference_fallback_eval(const CsInterferenceFallback *fb, double u_victim,
                                     double u_aggressor)
{
  double s = 1.0 + fb->constant + fb->victim * u_victim + fb->aggressor * u_aggressor;
  return s < 1.0 ? 1.0 : s; /* co-location never speeds a batch up */
}

/* ---- grids ----------------------------------------------------------------- */

static void grid_clear(Grid *g)
{
  g_free(g->batches);
  g_free(g->shares);
  g_free(g->v);
  g_free(g->measured);
  memset(g, 0, sizeof *g);
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int find_int(const int *a, int n, int x)
{
  for (int i = 0; i < n; i++)
    if (a[i] == x)
      return i;
  return -1;
}

static int find_double(const double *a, int n, double x)
{
  for (int i = 0; i < n; i++)
    if (a[i] == x)
      return i;
  return -1;
}

#define CELL(g, i, j) ((g)->v[(size_t)(i) * (size_t)(g)->ns + (size_t)(j)])
#define MEAS(g, i, j) ((g)->measured[(size_t)(i) * (size_t)(g)->ns + (size_t)(j)])

/* Fills every missing cell (i, j) from a reference column k measured at row
 * i: value(i, k) times the ratio value(., j) / value(., k) interpolated
 * linearly in batch between the nearest rows below and above i where both
 * are measured (or the one row found on one side). Columns k are tried by
 * distance |k - j|, the larger share first on a tie. Only measured cells are
 * used as references, so the result does not depend on the filling order.
 * Returns FALSE with *bad_row, *bad_col set when a cell cannot be filled. */
static gboolean grid_complete(Grid *g, int *bad_row, int *bad_col)
{
  double *filled = g_new(double, (size_t)g->nb * g->ns);
  memcpy(filled, g->v, sizeof(double) * (size_t)g->nb * g->ns);
  for (int i = 0; i < g->nb; i++) {
    for (int j = 0; j < g->ns; j++) {
      if (MEAS(g, i, j))
        continue;
      gboolean done = FALSE;
      for (int dist = 1; dist < g->ns && !done; dist++) {
        for (int side = 0; side < 2 && !done; side++) {
          int k = side == 0 ? j + dist : j - dist;
          if (k < 0 || k >= g->ns || !MEAS(g, i, k) || CELL(g, i, k) == 0.0)
            continue;
          int lo = -1, hi = -1;
          for (int r = i - 1; r >= 0 && lo < 0; r--)
            if (MEAS(g, r, j) && MEAS(g, r, k) && CELL(g, r, k) != 0.0)
              lo = r;
          for (int r = i + 1; r < g->nb && hi < 0; r++)
            if (MEAS(g, r, j) && MEAS(g, r, k) && CELL(g, r, k) != 0.0)
              hi = r;
          if (lo < 0 && hi < 0)
            continue;
          double ratio;
          if (lo >= 0 && hi >= 0) {
            double q0 = CELL(g, lo, j) / CELL(g, lo, k), q1 = CELL(g, hi, j) / CELL(g, hi, k);
            double w = (double)(g->batches[i] - g->batches[lo]) /
                       (double)(g->batches[hi] - g->batches[lo]);
            ratio = q0 + w * (q1 - q0);
          } else {
            int r = lo >= 0 ? lo : hi;
            ratio = CELL(g, r, j) / CELL(g, r, k);
          }
          filled[(size_t)i * g->ns + j] = CELL(g, i, k) * ratio;
          done = TRUE;
        }
      }
      if (!done) {
        *bad_row = i;
        *bad_col = j;
        g_free(filled);
        return FALSE;
      }
    }
  }
  g_free(g->v);
  g->v = filled;
  return TRUE;
}

/* Value of row i at share s: linear in 1/s (inv) or in s between columns;
 * below the first column v0 * s0 / s (inv) or v0; above the last, the last. */
static double row_eval(const Grid *g, int i, double s, gboolean inv)
{
  int n = g->ns;
  if (s <= g->shares[0])
    return inv ? CELL(g, i, 0) * g->shares[0] / s : CELL(g, i, 0);
  if (s >= g->shares[n - 1])
    return CELL(g, i, n - 1);
  int j = 0;
  while (j + 1 < n - 1 && g->shares[j + 1] < s)
    j++;
  double s0 = g->shares[j], s1 = g->shares[j + 1];
  double v0 = CELL(g, i, j), v1 = CELL(g, i, j + 1);
  double w = inv ? (1.0 / s - 1.0 / s1) / (1.0 / s0 - 1.0 / s1) : (s1 - s) / (s1 - s0);
  return v1 + w * (v0 - v1);
}

static double grid_eval(const Grid *g, int batch, double share, gboolean inv)
{
  if (g->nb == 0)
    return NAN;
  if (!(share > 0.0) || share > 1.0)
    share = 1.0;
  if (batch <= g->batches[0])
    return row_eval(g, 0, share, inv);
  if (batch >= g->batches[g->nb - 1])
    return row_eval(g, g->nb - 1, share, inv);
  int i = 0;
  while (g->batches[i + 1] < batch)
    i++;
  double v0 = row_eval(g, i, share, inv), v1 = row_eval(g, i + 1, share, inv);
  double w = (double)(batch - g->batches[i]) / (double)(g->batches[i + 1] - g->batches[i]);
  return v0 + w * (v1 - v0);
}

/* ---- parsing ----------------------------------------------------------------- */

static gboolean read_array(const cJSON *obj, const char *key, gboolean required,
                           const cJSON **out, const char *file, const char *path,
                           GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  char *p = cs_json_path_key(path, key);
  gboolean ok = TRUE;
  if (!v) {
    if (required)
      ok = cs_json_fail(error, file, path, "missing required field \"%s\"", key);
  } else if (!cJSON_IsArray(v)) {
    ok = cs_json_fail(error, file, p, "expected an array, got %s", cs_json_type_name(v));
  } else {
    *out = v;
  }
  g_free(p);
  return ok;
}

/* Reads [[batch, share_pct, value], ...] into g. value in [vmin, vmax]. */
static gboolean parse_grid(const cJSON *arr, double vmin, double vmax, Grid *g, const char *file,
                           const char *path, GError **error)
{
  int n = cJSON_GetArraySize(arr);
  if (n == 0)
    return cs_json_fail(error, file, path, "expected a non-empty array of [batch, share_pct, "
                        "value] triples");
  int *bs = g_new(int, n);
  double *ss = g_new(double, n), *vs = g_new(double, n);
  gboolean ok = TRUE;
  /* Walked, not indexed (cJSON's indexed access is linear in the index), and
   * duplicates found by key: a table of n cells reads in O(n). */
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  const cJSON *t = arr->child;
  for (int i = 0; i < n && ok; i++, t = t->next) {
    char *p = cs_json_path_index(path, i);
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != 3) {
      ok = cs_json_fail(error, file, p, "expected a [batch, share_pct, value] triple, got %s",
                        cs_json_type_name(t));
    } else {
      const cJSON *b = t->child, *s = b->next, *v = s->next;
      if (!cJSON_IsNumber(b) || b->valuedouble != floor(b->valuedouble) ||
          b->valuedouble < 1 || b->valuedouble > 1e6)
        ok = cs_json_fail(error, file, p, "batch: expected an integer in [1, 1000000]");
      else if (!cJSON_IsNumber(s) || !(s->valuedouble > 0.0) || s->valuedouble > 100.0)
        ok = cs_json_fail(error, file, p, "share_pct: expected a number > 0 and <= 100");
      else if (!cJSON_IsNumber(v) || !(v->valuedouble >= vmin) || v->valuedouble > vmax)
        ok = cs_json_fail(error, file, p, "value: expected a number in [%g, %g]", vmin, vmax);
      else {
        bs[i] = (int)b->valuedouble;
        ss[i] = s->valuedouble / 100.0;
        vs[i] = v->valuedouble;
        char *key = g_strdup_printf("%d %a", bs[i], ss[i]);
        gpointer first;
        if (g_hash_table_lookup_extended(seen, key, NULL, &first)) {
          ok = cs_json_fail(error, file, p, "batch %d, share %g %% given twice (also at [%d])",
                            bs[i], ss[i] * 100.0, GPOINTER_TO_INT(first));
          g_free(key);
        } else
          g_hash_table_insert(seen, key, GINT_TO_POINTER(i));
      }
    }
    g_free(p);
  }
  g_hash_table_destroy(seen);
  if (ok) {
    /* (g_memdup2 needs GLib 2.68; meson.build asks for 2.66) */
    int *ub = g_new(int, n);
    double *us = g_new(double, n);
    memcpy(ub, bs, sizeof(int) * n);
    memcpy(us, ss, sizeof(double) * n);
    qsort(ub, n, sizeof(int), cmp_int);
    qsort(us, n, sizeof(double), cmp_double);
    int nb = 0, ns = 0;
    for (int i = 0; i < n; i++) {
      if (nb == 0 || ub[nb - 1] != ub[i])
        ub[nb++] = ub[i];
      if (ns == 0 || us[ns - 1] != us[i])
        us[ns++] = us[i];
    }
    g->nb = nb;
    g->ns = ns;
    g->batches = ub;
    g->shares = us;
    g->v = g_new0(double, (size_t)nb * ns);
    g->measured = g_new0(gboolean, (size_t)nb * ns);
    for (int i = 0; i < n; i++) {
      int r = find_int(ub, nb, bs[i]), c = find_double(us, ns, ss[i]);
      CELL(g, r, c) = vs[i];
      MEAS(g, r, c) = TRUE;
    }
    int br = 0, bc = 0;
    if (!grid_complete(g, &br, &bc))
      ok = cs_json_fail(error, file, path, "cannot complete the table: no measured cell to "
                        "derive batch %d, share %g %% from (docs/gpu-model.md, table "
                        "completion)", g->batches[br], g->shares[bc] * 100.0);
  }
  g_free(bs);
  g_free(ss);
  g_free(vs);
  if (!ok)
    grid_clear(g);
  return ok;
}

static void model_clear(Model *m)
{
  g_free(m->name);
  grid_clear(&m->lat);
  for (int k = 0; k < CS_UTIL_N_METRICS; k++)
    grid_clear(&m->util[k]);
  cs_mig_table_free(m->mig);
}

static int find_model(const GArray *models, const char *name)
{
  for (guint i = 0; i < models->len; i++)
    if (strcmp(g_array_index(models, Model, i).name, name) == 0)
      return (int)i;
  return -1;
}

static gboolean parse_model(CsInterferenceSet *set, const cJSON *node, const char *file,
                            const char *path, GError **error)
{
  static const char *const keys[] = { "model", "share_latency", "l2_util", "dram_util", "mig",
                                      NULL };
  const char *name = NULL;
  const cJSON *lat = NULL, *l2 = NULL, *dram = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "model", TRUE, &name, file, path, error) ||
      !read_array(node, "share_latency", FALSE, &lat, file, path, error) ||
      !read_array(node, "l2_util", FALSE, &l2, file, path, error) ||
      !read_array(node, "dram_util", FALSE, &dram, file, path, error))
    return FALSE;
  if (find_model(set->models, name) >= 0) {
    char *p = cs_json_path_key(path, "model");
    cs_json_fail(error, file, p, "model \"%s\" is defined twice", name);
    g_free(p);
    return FALSE;
  }
  Model m = { .name = g_strdup(name) };
  gboolean ok = TRUE;
  const struct { const cJSON *arr; const char *key; Grid *g; double vmin, vmax, scale; } t[] = {
    { lat, "share_latency", &m.lat, 1e-6, 1e9, 1.0 },
    { l2, "l2_util", &m.util[CS_UTIL_L2], 0.0, 100.0, 0.01 },
    { dram, "dram_util", &m.util[CS_UTIL_DRAM], 0.0, 100.0, 0.01 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(t) && ok; k++) {
    if (!t[k].arr)
      continue;
    char *p = cs_json_path_key(path, t[k].key);
    ok = parse_grid(t[k].arr, t[k].vmin, t[k].vmax, t[k].g, file, p, error);
    g_free(p);
    if (ok)
      for (int c = 0; c < t[k].g->nb * t[k].g->ns; c++)
        t[k].g->v[c] *= t[k].scale;
  }
  const cJSON *mig = cJSON_GetObjectItemCaseSensitive(node, "mig");
  if (ok && mig) {
    char *p = cs_json_path_key(path, "mig");
    m.mig = cs_mig_table_parse(mig, file, p, error);
    ok = m.mig != NULL;
    g_free(p);
  }
  if (!ok) {
    model_clear(&m);
    return FALSE;
  }
  g_array_append_val(set->models, m);
  return TRUE;
}

static int model_index_or_add(CsInterferenceSet *set, const char *name)
{
  int i = find_model(set->models, name);
  if (i >= 0)
    return i;
  Model m = { .name = g_strdup(name) };
  g_array_append_val(set->models, m);
  return (int)set->models->len - 1;
}

typedef struct {
  int victim, aggressor;
  double slowdown;  /* NAN when the entry gives a scale */
  double scale;     /* NAN when the entry gives a slowdown */
} PairEntry;

static gboolean parse_pairs(CsInterferenceSet *set, const cJSON *arr, GArray *out,
                            const char *file, GError **error)
{
  static const char *const keys[] = { "victim", "aggressor", "slowdown", "scale", "samples",
                                      "note", NULL };
  const cJSON *item;
  int i = 0;
  cJSON_ArrayForEach(item, arr)
  {
    char *p = cs_json_path_index("pairs", i);
    const char *v = NULL, *a = NULL, *note = NULL;
    double s = NAN, k = NAN;
    int samples = 0;
    gboolean ok = cs_json_expect_object(item, file, p, error) &&
                  cs_json_check_keys(item, keys, file, p, error) &&
                  cs_json_read_string(item, "victim", TRUE, &v, file, p, error) &&
                  cs_json_read_string(item, "aggressor", TRUE, &a, file, p, error) &&
                  cs_json_read_double(item, "slowdown", FALSE, 1e-3, 1e3, &s, file, p, error) &&
                  cs_json_read_double(item, "scale", FALSE, 0.0, 1e3, &k, file, p, error) &&
                  cs_json_read_int(item, "samples", FALSE, 1, G_MAXINT, &samples, file, p,
                                   error) &&
                  cs_json_read_string(item, "note", FALSE, &note, file, p, error);
    if (ok && isnan(s) == isnan(k))
      ok = cs_json_fail(error, file, p, "expected either \"slowdown\" (a measured factor) or "
                        "\"scale\" (on the fallback's excess), %s",
                        isnan(s) ? "got neither" : "got both");
    if (ok) {
      PairEntry e = { model_index_or_add(set, v), model_index_or_add(set, a), s, k };
      for (guint j = 0; j < out->len && ok; j++) {
        const PairEntry *o = &g_array_index(out, PairEntry, j);
        if (o->victim == e.victim && o->aggressor == e.aggressor)
          ok = cs_json_fail(error, file, p, "pair (victim \"%s\", aggressor \"%s\") is given "
                            "twice (also at pairs[%u])", v, a, j);
      }
      if (ok)
        g_array_append_val(out, e);
    }
    g_free(p);
    if (!ok)
      return FALSE;
    i++;
  }
  return TRUE;
}

static gboolean parse_fallback(CsInterferenceSet *set, const cJSON *node, const char *file,
                               GError **error)
{
  static const char *const linear_keys[] = { "form", "constant", "victim", "aggressor",
                                             "metric", "default_util_pct", NULL };
  static const char *const batch_share_keys[] = { "form", "c", "batch_exponent",
                                                  "share_exponent", "fixed_exponent", NULL };
  const char *p = "fallback";
  CsInterferenceFallback *fb = &set->fb;
  const char *form = "linear"; /* a version-1 file without "form" means the linear one */
  if (!cs_json_expect_object(node, file, p, error) ||
      !cs_json_read_string(node, "form", FALSE, &form, file, p, error))
    return FALSE;
  if (strcmp(form, "batch_share") == 0) {
    fb->form = CS_FALLBACK_BATCH_SHARE;
    if (!cs_json_check_keys(node, batch_share_keys, file, p, error) ||
        !cs_json_read_double(node, "c", FALSE, 0.0, 100.0, &fb->c, file, p, error) ||
        !cs_json_read_double(node, "batch_exponent", FALSE, -10.0, 10.0, &fb->batch_exponent,
                             file, p, error) ||
        !cs_json_read_double(node, "share_exponent", FALSE, 0.01, 10.0, &fb->share_exponent,
                             file, p, error) ||
        !cs_json_read_double(node, "fixed_exponent", FALSE, 0.0, 10.0, &fb->fixed_exponent,
                             file, p, error))
      return FALSE;
    fb->combine = CS_COMBINE_NORM;
    fb->combine_exponent = MAX(1.0, 1.0 / fb->share_exponent);
    return TRUE;
  }
  if (strcmp(form, "linear") != 0)
    return cs_json_fail(error, file, "fallback.form", "expected \"batch_share\" or \"linear\", "
                        "got \"%s\"", form);
  fb->form = CS_FALLBACK_LINEAR;
  fb->combine = CS_COMBINE_PRODUCT; /* version 1's rule for the linear form */
  const char *metric = NULL;
  double util_pct = fb->default_util * 100.0;
  if (!cs_json_check_keys(node, linear_keys, file, p, error) ||
      !cs_json_read_double(node, "constant", FALSE, 0.0, 100.0, &fb->constant, file, p, error) ||
      !cs_json_read_double(node, "victim", FALSE, -100.0, 100.0, &fb->victim, file, p, error) ||
      !cs_json_read_double(node, "aggressor", FALSE, -100.0, 100.0, &fb->aggressor, file, p,
                           error) ||
      !cs_json_read_string(node, "metric", FALSE, &metric, file, p, error) ||
      !cs_json_read_double(node, "default_util_pct", FALSE, 0.0, 100.0, &util_pct, file, p,
                           error))
    return FALSE;
  fb->default_util = util_pct / 100.0;
  if (metric) {
    if (strcmp(metric, "l2") == 0)
      fb->metric = CS_UTIL_L2;
    else if (strcmp(metric, "dram") == 0)
      fb->metric = CS_UTIL_DRAM;
    else
      return cs_json_fail(error, file, "fallback.metric", "expected \"l2\" or \"dram\", got "
                          "\"%s\"", metric);
  }
  return TRUE;
}

/* "combine": {"rule": "product" | "norm", "exponent": q (norm)}; without it
 * the fallback form's rule (batch_share: norm with q = 1/z; linear: product). */
static gboolean parse_combine(CsInterferenceSet *set, const cJSON *node, const char *file,
                              GError **error)
{
  static const char *const keys[] = { "rule", "exponent", NULL };
  const char *p = "combine", *rule = NULL;
  CsInterferenceFallback *fb = &set->fb;
  double q = NAN;
  if (!cs_json_expect_object(node, file, p, error) ||
      !cs_json_check_keys(node, keys, file, p, error) ||
      !cs_json_read_string(node, "rule", TRUE, &rule, file, p, error) ||
      !cs_json_read_double(node, "exponent", FALSE, 1.0, 100.0, &q, file, p, error))
    return FALSE;
  if (strcmp(rule, "product") == 0) {
    if (!isnan(q))
      return cs_json_fail(error, file, "combine.exponent", "applies to the rule \"norm\" only");
    fb->combine = CS_COMBINE_PRODUCT;
  } else if (strcmp(rule, "norm") == 0) {
    fb->combine = CS_COMBINE_NORM;
    if (!isnan(q))
      fb->combine_exponent = q;
    else if (fb->form != CS_FALLBACK_BATCH_SHARE)
      return cs_json_fail(error, file, "combine.exponent", "required with a linear fallback "
                          "(the batch_share form implies 1 / share_exponent)");
  } else {
    return cs_json_fail(error, file, "combine.rule", "expected \"product\" or \"norm\", got "
                        "\"%s\"", rule);
  }
  return TRUE;
}

static gboolean load_root(CsInterferenceSet *set, const cJSON *root, const char *file,
                          GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "description", "models",
                                      "pairs", "fallback", "combine", NULL };
  const char *format = NULL, *source = NULL, *desc = "";
  int version = 0;
  if (!cs_json_expect_object(root, file, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &format, file, "", error))
    return FALSE;
  if (strcmp(format, CS_INTERFERENCE_FORMAT) != 0)
    return cs_json_fail(error, file, "format", "expected \"%s\", got \"%s\"",
                        CS_INTERFERENCE_FORMAT, format);
  if (!cs_json_read_int(root, "version", TRUE, G_MININT, G_MAXINT, &version, file, "", error))
    return FALSE;
  if (version != CS_INTERFERENCE_FORMAT_VERSION)
    return cs_json_fail(error, file, "version",
                        "unsupported version %d (this build reads version %d)", version,
                        CS_INTERFERENCE_FORMAT_VERSION);
  const cJSON *models = NULL, *pairs = NULL;
  if (!cs_json_check_keys(root, keys, file, "", error) ||
      !cs_json_read_string(root, "source", TRUE, &source, file, "", error) ||
      !cs_json_read_string(root, "description", FALSE, &desc, file, "", error) ||
      !read_array(root, "models", FALSE, &models, file, "", error) ||
      !read_array(root, "pairs", FALSE, &pairs, file, "", error))
    return FALSE;
  set->source = g_strdup_printf("%s: %s", file, source);
  set->description = g_strdup(desc);
  const cJSON *fb = cJSON_GetObjectItemCaseSensitive(root, "fallback");
  if (fb && !parse_fallback(set, fb, file, error))
    return FALSE;
  const cJSON *combine = cJSON_GetObjectItemCaseSensitive(root, "combine");
  if (combine && !parse_combine(set, combine, file, error))
    return FALSE;
  if (models) {
    const cJSON *item;
    int i = 0;
    cJSON_ArrayForEach(item, models)
    {
      char *p = cs_json_path_index("models", i);
      gboolean ok = parse_model(set, item, file, p, error);
      g_free(p);
      if (!ok)
        return FALSE;
      i++;
    }
  }
  GArray *entries = g_array_new(FALSE, FALSE, sizeof(PairEntry));
  gboolean ok = !pairs || parse_pairs(set, pairs, entries, file, error);
  if (ok) {
    int n = (int)set->models->len;
    set->pairs = g_new(double, (size_t)MAX(n, 1) * MAX(n, 1));
    set->scales = g_new(double, (size_t)MAX(n, 1) * MAX(n, 1));
    for (int k = 0; k < n * n; k++)
      set->pairs[k] = set->scales[k] = NAN;
    for (guint k = 0; k < entries->len; k++) {
      const PairEntry *e = &g_array_index(entries, PairEntry, k);
      set->pairs[(size_t)e->victim * n + e->aggressor] = e->slowdown;
      set->scales[(size_t)e->victim * n + e->aggressor] = e->scale;
    }
  }
  g_array_unref(entries);
  return ok;
}

static CsInterferenceSet *set_new(void)
{
  CsInterferenceSet *set = g_new0(CsInterferenceSet, 1);
  set->models = g_array_new(FALSE, FALSE, sizeof(Model));
  cs_interference_fallback_init(&set->fb);
  return set;
}

void cs_interference_set_free(CsInterferenceSet *set)
{
  if (!set)
    return;
  for (guint i = 0; i < set->models->len; i++)
    model_clear(&g_array_index(set->models, Model, i));
  g_array_unref(set->models);
  g_free(set->pairs);
  g_free(set->scales);
  g_free(set->source);
  g_free(set->description);
  g_free(set);
}

/* Builds a set from a parsed document and frees the document. */
static CsInterferenceSet *load_tree(cJSON *root, const char *name, GError **error)
{
  if (!root)
    return NULL;
  CsInterferenceSet *set = set_new();
  gboolean ok = load_root(set, root, name, error);
  cJSON_Delete(root);
  if (!ok) {
    cs_interference_set_free(set);
    return NULL;
  }
  return set;
}

CsInterferenceSet *cs_interference_set_load_data(const char *json, const char *name,
                                                 GError **error)
{
  return load_tree(cs_json_parse(json, name, error), name, error);
}

CsInterferenceSet *cs_interference_set_load_file(const char *path, GError **error)
{
  return load_tree(cs_json_load_file(path, error), path, error);
}

/* ---- queries ------------------------------------------------------------------- */

const char *cs_interference_set_source(const CsInterferenceSet *set)
{
  return set->source;
}

const char *cs_interference_set_description(const CsInterferenceSet *set)
{
  return set->description;
}

const CsInterferenceFallback *cs_interference_set_fallback(const CsInterferenceSet *set)
{
  return &set->fb;
}

int cs_interference_set_n_models(const CsInterferenceSet *set)
{
  return set ? (int)set->models->len : 0;
}

int cs_interference_set_find(const CsInterferenceSet *set, const char *model)
{
  return set && model ? find_model(set->models, model) : -1;
}

const char *cs_interference_set_model_name(const CsInterferenceSet *set, int i)
{
  g_return_val_if_fail(set && i >= 0 && i < (int)set->models->len, NULL);
  return g_array_index(set->models, Model, i).name;
}

static const Model *model_at(const CsInterferenceSet *set, int i)
{
  if (!set || i < 0 || i >= (int)set->models->len)
    return NULL;
  return &g_array_index(set->models, Model, i);
}

const CsMigTable *cs_interference_mig(const CsInterferenceSet *set, int i)
{
  const Model *m = model_at(set, i);
  return m ? m->mig : NULL;
}

gboolean cs_interference_has_share_table(const CsInterferenceSet *set, int i)
{
  const Model *m = model_at(set, i);
  return m && m->lat.nb > 0;
}

double cs_interference_share_latency_ms(const CsInterferenceSet *set, int i, int batch,
                                        double share)
{
  const Model *m = model_at(set, i);
  return m ? grid_eval(&m->lat, batch, share, TRUE) : NAN;
}

double cs_interference_share_slowdown(const CsInterferenceSet *set, int i, int batch,
                                      double share)
{
  const Model *m = model_at(set, i);
  if (!m || m->lat.nb == 0)
    return NAN;
  double full = grid_eval(&m->lat, batch, 1.0, TRUE);
  double part = grid_eval(&m->lat, batch, share, TRUE);
  double s = part / full;
  return s < 1.0 ? 1.0 : s;
}

int cs_interference_share_cells(const CsInterferenceSet *set, int i, CsShareCell **cells)
{
  *cells = NULL;
  const Model *m = model_at(set, i);
  if (!m || m->lat.nb == 0)
    return 0;
  const Grid *g = &m->lat;
  int n = 0;
  *cells = g_new(CsShareCell, (size_t)g->nb * (size_t)g->ns);
  for (int b = 0; b < g->nb; b++)
    for (int k = 0; k < g->ns; k++)
      if (g->measured[b * g->ns + k])
        (*cells)[n++] = (CsShareCell){ g->batches[b], g->shares[k], g->v[b * g->ns + k] };
  return n;
}

double cs_interference_util(const CsInterferenceSet *set, int i, CsUtilMetric metric, int batch,
                            double share)
{
  const Model *m = model_at(set, i);
  if (!m || metric < 0 || metric >= CS_UTIL_N_METRICS)
    return NAN;
  return grid_eval(&m->util[metric], batch, share, FALSE);
}

double cs_interference_pair(const CsInterferenceSet *set, int victim, int aggressor)
{
  int n = cs_interference_set_n_models(set);
  if (victim < 0 || aggressor < 0 || victim >= n || aggressor >= n)
    return NAN;
  return set->pairs[(size_t)victim * n + aggressor];
}

double cs_interference_pair_scale(const CsInterferenceSet *set, int victim, int aggressor)
{
  int n = cs_interference_set_n_models(set);
  if (victim < 0 || aggressor < 0 || victim >= n || aggressor >= n)
    return NAN;
  return set->scales[(size_t)victim * n + aggressor];
}
