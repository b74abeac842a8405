/* Model profiles: reading and validating clustersim-profile files into a
 * profile set; see profile.h and docs/profiles.md for the format. */
#include "profile.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "profile_set.h"

/* Latencies above this are surely a unit mistake, and keeping ms * 1e6 far
 * below INT64_MAX means the conversion to ns can never overflow. */
#define MAX_LATENCY_MS 1e9

/* ---- Errors -------------------------------------------------------------- */

/* The JSON readers report in CS_INPUT_ERROR; callers of this module expect
 * CS_PROFILE_ERROR, so move the message over with the matching code. */
static gboolean move_error(GError **error, GError *local)
{
  int code = CS_PROFILE_ERROR_INVALID;
  if (local->domain == CS_INPUT_ERROR && local->code == CS_INPUT_ERROR_IO)
    code = CS_PROFILE_ERROR_IO;
  else if (local->domain == CS_INPUT_ERROR && local->code == CS_INPUT_ERROR_PARSE)
    code = CS_PROFILE_ERROR_PARSE;
  else if (local->domain == CS_PROFILE_ERROR)
    code = local->code;
  g_set_error_literal(error, CS_PROFILE_ERROR, code, local->message);
  g_error_free(local);
  return FALSE;
}

/* Like cs_json_fail, but in CS_PROFILE_ERROR with code DUPLICATE. */
static gboolean fail_duplicate(GError **error, const char *file, const char *path,
                               const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean fail_duplicate(GError **error, const char *file, const char *path,
                               const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_DUPLICATE, "%s: %s: %s", file, path,
              msg);
  g_free(msg);
  return FALSE;
}

/* ---- Field readers ------------------------------------------------------- */

/* A number > 0 and <= max. cs_json_read_double only knows closed ranges, and
 * a zero latency, SLO or throughput is as wrong as a negative one. */
static gboolean read_positive(const cJSON *obj, const char *key, gboolean required, double max,
                              double *out, const char *file, const char *path, GError **error)
{
  double v = NAN;
  if (!cs_json_read_double(obj, key, required, -G_MAXDOUBLE, G_MAXDOUBLE, &v, file, path, error))
    return FALSE;
  if (isnan(v))
    return TRUE; /* optional and absent */
  if (v <= 0 || v > max) {
    char *p = cs_json_path_key(path, key);
    cs_json_fail(error, file, p, "expected a number > 0 and <= %g, got %g", max, v);
    g_free(p);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* A latency in ms, converted to ns rounded to nearest; must be >= 1 ns. */
static gboolean read_latency(const cJSON *obj, const char *key, int64_t *out_ns,
                             const char *file, const char *path, GError **error)
{
  double ms = NAN;
  if (!read_positive(obj, key, TRUE, MAX_LATENCY_MS, &ms, file, path, error))
    return FALSE;
  int64_t ns = llround(ms * 1e6);
  if (ns < 1) {
    char *p = cs_json_path_key(path, key);
    cs_json_fail(error, file, p, "expected a latency of at least 1 ns (0.000001 ms), got %g", ms);
    g_free(p);
    return FALSE;
  }
  *out_ns = ns;
  return TRUE;
}

/* Optional array field: NULL result with TRUE when absent. */
static gboolean read_array(const cJSON *obj, const char *key, const cJSON **out, const char *file,
                           const char *path, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!v)
    return TRUE;
  if (!cJSON_IsArray(v)) {
    char *p = cs_json_path_key(path, key);
    cs_json_fail(error, file, p, "expected an array, got %s", cs_json_type_name(v));
    g_free(p);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* ---- GPU types ----------------------------------------------------------- */

static GpuEntry *parse_gpu_type(const cJSON *node, const char *file, const char *path,
                                GError **error)
{
  static const char *const keys[] = { "name",           "description",  "sm_count",
                                      "memory_bytes",   "price_per_hour", "price_source",
                                      NULL };
  const char *name = NULL, *description = "", *price_source = NULL;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  double price = NAN;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "name", TRUE, &name, file, path, error) ||
      !cs_json_read_string(node, "description", FALSE, &description, file, path, error) ||
      !cs_json_read_int(node, "sm_count", FALSE, 0, G_MAXINT, &sm_count, file, path, error) ||
      !cs_json_read_int64(node, "memory_bytes", FALSE, 0, INT64_MAX, &memory_bytes, file, path,
                          error) ||
      !cs_json_read_double(node, "price_per_hour", FALSE, 0.0, CS_PRICE_MAX, &price, file, path,
                           error) ||
      !cs_json_read_string(node, "price_source", FALSE, &price_source, file, path, error))
    return NULL;
  /* A price without its source cannot be checked or updated, and a source
   * without a price says nothing: they come together or not at all. */
  if (isnan(price) != (price_source == NULL)) {
    char *jp = cs_json_path_key(path, isnan(price) ? "price_source" : "price_per_hour");
    cs_json_fail(error, file, jp,
                 isnan(price) ? "given without \"price_per_hour\": remove it or give the price"
                              : "expected \"price_source\" beside it (provider, instance type, "
                                "region, on-demand or not, and the date of the price)");
    g_free(jp);
    return NULL;
  }
  GpuEntry *g = g_new0(GpuEntry, 1);
  g->type.name = g_strdup(name);
  g->type.description = g_strdup(description);
  g->type.sm_count = sm_count;
  g->type.memory_bytes = memory_bytes;
  g->type.price_per_hour = price;
  g->type.price_source = g_strdup(price_source);
  g->origin = g_strdup(file);
  return g;
}

/* ---- Batch points -------------------------------------------------------- */

static gboolean parse_creq(const cJSON *node, double creq[CS_CREQ_N_METRICS], const char *file,
                           const char *path, GError **error)
{
  /* Same order as CsCreqMetric. */
  static const char *const keys[] = { "ao", "wao", "wsm", NULL };
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error))
    return FALSE;
  for (int m = 0; m < CS_CREQ_N_METRICS; m++)
    if (!cs_json_read_double(node, keys[m], FALSE, 0, 100, &creq[m], file, path, error))
      return FALSE;
  return TRUE;
}

static gboolean parse_point(const cJSON *node, CsBatchPoint *pt, const char *file,
                            const char *path, GError **error)
{
  static const char *const keys[] = { "batch",    "latency_ms",     "mreq_pct", "creq_pct",
                                      "throughput_rps", "note", NULL };
  pt->mreq_pct = NAN;
  pt->throughput_rps = NAN;
  for (int m = 0; m < CS_CREQ_N_METRICS; m++)
    pt->creq_pct[m] = NAN;
  pt->note = NULL;
  const char *note = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_int(node, "batch", TRUE, 1, G_MAXINT, &pt->batch, file, path, error) ||
      !read_latency(node, "latency_ms", &pt->latency_ns, file, path, error) ||
      !cs_json_read_double(node, "mreq_pct", FALSE, 0, 100, &pt->mreq_pct, file, path, error) ||
      !read_positive(node, "throughput_rps", FALSE, G_MAXDOUBLE, &pt->throughput_rps, file, path,
                     error) ||
      !cs_json_read_string(node, "note", FALSE, &note, file, path, error))
    return FALSE;
  const cJSON *creq = cJSON_GetObjectItemCaseSensitive(node, "creq_pct");
  if (creq) {
    char *p = cs_json_path_key(path, "creq_pct");
    gboolean ok = parse_creq(creq, pt->creq_pct, file, p, error);
    g_free(p);
    if (!ok)
      return FALSE;
  }
  pt->note = g_strdup(note);
  return TRUE;
}

/* ---- Linear model -------------------------------------------------------- */

/* Least-squares fit of latency_ns = alpha * batch + beta over the points
 * (n >= 2, distinct batch sizes), with alpha, beta >= 0.
 *
 * A plain fit can have a negative intercept (xlnet in the V100 table gives
 * beta = -54 ms), which would make small batches take negative time. The
 * fit is convex, so when the unconstrained optimum breaks a constraint the
 * constrained one lies on a boundary: the better of beta = 0 (fit through the
 * origin) and alpha = 0 (the mean latency). Both are >= 0 since latencies are. */
static void fit_linear(const CsBatchPoint *pts, int n, double *alpha, double *beta)
{
  double *x = g_new(double, n), *y = g_new(double, n);
  double mean = 0;
  for (int i = 0; i < n; i++) {
    x[i] = pts[i].batch;
    y[i] = (double)pts[i].latency_ns;
    mean += y[i] / n;
  }
  double c0, c1, cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  if (c0 >= 0 && c1 >= 0) {
    *alpha = c1;
    *beta = c0;
  } else {
    double slope, cov, sumsq_origin, sumsq_flat = 0;
    gsl_fit_mul(x, 1, y, 1, (size_t)n, &slope, &cov, &sumsq_origin);
    for (int i = 0; i < n; i++)
      sumsq_flat += (y[i] - mean) * (y[i] - mean);
    if (sumsq_origin <= sumsq_flat) {
      *alpha = slope;
      *beta = 0;
    } else {
      *alpha = 0;
      *beta = mean;
    }
  }
  g_free(x);
  g_free(y);
}

static gboolean parse_linear(const cJSON *node, CsModelProfile *prof, const char *file,
                             const char *path, GError **error)
{
  static const char *const keys[] = { "alpha_ms", "beta_ms", NULL };
  double alpha = 0, beta = 0;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_double(node, "alpha_ms", TRUE, 0, MAX_LATENCY_MS, &alpha, file, path, error) ||
      !cs_json_read_double(node, "beta_ms", TRUE, 0, MAX_LATENCY_MS, &beta, file, path, error))
    return FALSE;
  if (llround((alpha + beta) * 1e6) < 1)
    return cs_json_fail(error, file, path,
                        "expected alpha_ms + beta_ms (the latency of batch 1) to be at least "
                        "1 ns, got %g ms", alpha + beta);
  prof->alpha_ns = alpha * 1e6;
  prof->beta_ns = beta * 1e6;
  prof->linear_fitted = FALSE;
  return TRUE;
}

/* ---- Models -------------------------------------------------------------- */

static gboolean parse_points(const cJSON *batches, CsModelProfile *prof, const char *file,
                             const char *path, GError **error)
{
  int n = cJSON_GetArraySize(batches);
  prof->points = g_new0(CsBatchPoint, MAX(n, 1));
  char *bpath = cs_json_path_key(path, "batches");
  /* batch size -> index in the file, to name both places of a duplicate */
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  gboolean ok = TRUE;
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, batches)
  {
    char *p = cs_json_path_index(bpath, i);
    ok = parse_point(item, &prof->points[i], file, p, error);
    if (ok) {
      prof->n_points = i + 1; /* from here on the point's note is freed with the profile */
      gpointer other;
      if (g_hash_table_lookup_extended(seen, GINT_TO_POINTER(prof->points[i].batch), NULL,
                                       &other)) {
        char *bp = cs_json_path_key(p, "batch");
        ok = cs_json_fail(error, file, bp, "duplicate batch size %d (also at %s[%d])",
                          prof->points[i].batch, bpath, GPOINTER_TO_INT(other));
        g_free(bp);
      } else {
        g_hash_table_insert(seen, GINT_TO_POINTER(prof->points[i].batch), GINT_TO_POINTER(i));
      }
    }
    g_free(p);
    if (!ok)
      break;
    i++;
  }
  g_hash_table_unref(seen);
  g_free(bpath);
  if (ok)
    qsort(prof->points, (size_t)prof->n_points, sizeof *prof->points, cs_batch_point_compare);
  return ok;
}

/* Parses one model object; the GPU type is checked by the caller. */
static ModelEntry *parse_model(const cJSON *node, const char *file, const char *file_source,
                               const char *path, GError **error)
{
  static const char *const keys[] = { "gpu",   "model",   "input_bytes", "output_bytes",
                                      "slo_ms", "batches", "linear",      NULL };
  const char *gpu = NULL, *model = NULL;
  const cJSON *batches = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "gpu", TRUE, &gpu, file, path, error) ||
      !cs_json_read_string(node, "model", TRUE, &model, file, path, error) ||
      !read_array(node, "batches", &batches, file, path, error))
    return NULL;

  ModelEntry *m = g_new0(ModelEntry, 1);
  CsModelProfile *prof = &m->prof;
  prof->gpu_type = g_strdup(gpu);
  prof->model = g_strdup(model);
  prof->input_bytes = -1;
  prof->output_bytes = -1;
  prof->slo_ms = NAN;
  prof->source = g_strdup_printf("%s: %s", file, file_source);
  m->origin = g_strdup(file);

  const cJSON *linear = cJSON_GetObjectItemCaseSensitive(node, "linear");
  char *lpath = cs_json_path_key(path, "linear");
  gboolean ok =
    cs_json_read_int64(node, "input_bytes", FALSE, 0, INT64_MAX, &prof->input_bytes, file, path,
                       error) &&
    cs_json_read_int64(node, "output_bytes", FALSE, 0, INT64_MAX, &prof->output_bytes, file,
                       path, error) &&
    read_positive(node, "slo_ms", FALSE, MAX_LATENCY_MS, &prof->slo_ms, file, path, error) &&
    (!batches || parse_points(batches, prof, file, path, error)) &&
    (!linear || parse_linear(linear, prof, file, lpath, error));
  g_free(lpath);
  if (ok && !linear) {
    if (prof->n_points >= 2) {
      fit_linear(prof->points, prof->n_points, &prof->alpha_ns, &prof->beta_ns);
      prof->linear_fitted = TRUE;
    } else {
      /* One point says nothing about how latency grows with the batch, and
       * guessing (e.g. proportional scaling) would silently invent data. */
      ok = cs_json_fail(error, file, path,
                        "expected a \"linear\" model or at least 2 profiled batch sizes in "
                        "\"batches\" (the latency of other batch sizes comes from a linear "
                        "model), got %d", prof->n_points);
    }
  }
  if (!ok) {
    cs_profile_model_entry_free(m);
    return NULL;
  }
  return m;
}

/* ---- Loading ------------------------------------------------------------- */

/* Lists the GPU types a model may refer to, for the "unknown GPU type" message. */
static char *known_gpu_list(const CsProfileSet *set, GPtrArray *staged)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < set->gpus->len; i++) {
    const GpuEntry *g = g_ptr_array_index(set->gpus, i);
    g_string_append_printf(s, "%s\"%s\"", s->len ? ", " : "", g->type.name);
  }
  for (guint i = 0; i < staged->len; i++) {
    const GpuEntry *g = g_ptr_array_index(staged, i);
    /* A type declared twice (itself an error, listed with the others) once. */
    gboolean seen = FALSE;
    for (guint j = 0; j < i && !seen; j++)
      seen = strcmp(((const GpuEntry *)g_ptr_array_index(staged, j))->type.name,
                    g->type.name) == 0;
    if (!seen)
      g_string_append_printf(s, "%s\"%s\"", s->len ? ", " : "", g->type.name);
  }
  if (!s->len)
    g_string_append(s, "none");
  return g_string_free(s, FALSE);
}

/* Validates the whole document into staged lists before touching the set, so
 * that a failure leaves the set unchanged. */
static gboolean load_root(CsProfileSet *set, const cJSON *root, const char *file,
                          GPtrArray *gpus, GPtrArray *models, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "gpu_types", "models", NULL };
  const char *format = NULL, *source = NULL;
  int version = 0;
  if (!cs_json_expect_object(root, file, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &format, file, "", error))
    return FALSE;
  if (strcmp(format, CS_PROFILE_FORMAT) != 0)
    return cs_json_fail(error, file, "format", "expected \"%s\", got \"%s\"", CS_PROFILE_FORMAT,
                        format);
  /* Version before the other fields: a newer file should be told apart from
   * a file with a misspelt field. */
  if (!cs_json_read_int(root, "version", TRUE, G_MININT, G_MAXINT, &version, file, "", error))
    return FALSE;
  if (version != CS_PROFILE_FORMAT_VERSION)
    return cs_json_fail(error, file, "version",
                        "unsupported version %d (this build reads version %d)", version,
                        CS_PROFILE_FORMAT_VERSION);
  const cJSON *gpu_types = NULL, *model_list = NULL;
  if (!cs_json_check_keys(root, keys, file, "", error) ||
      !cs_json_read_string(root, "source", TRUE, &source, file, "", error) ||
      !read_array(root, "gpu_types", &gpu_types, file, "", error) ||
      !read_array(root, "models", &model_list, file, "", error))
    return FALSE;

  /* Every GPU type and model is read: their problems are listed together.
   * at[k] is the file's index of the k-th entry kept, for "also at". */
  CsErrorList *problems = cs_error_list_new();
  GArray *at = g_array_new(FALSE, FALSE, sizeof(int));
  const cJSON *item;
  int i = 0;
  guint first_gpu = gpus->len;
  cJSON_ArrayForEach(item, gpu_types)
  {
    char *p = cs_json_path_index("gpu_types", i);
    GpuEntry *g = parse_gpu_type(item, file, p, cs_error_list_slot(problems));
    if (g) {
      gboolean ok = TRUE;
      char *np = cs_json_path_key(p, "name");
      const GpuEntry *old = g_hash_table_lookup(set->gpu_index, g->type.name);
      for (guint j = first_gpu; j < gpus->len && ok; j++)
        if (strcmp(((const GpuEntry *)g_ptr_array_index(gpus, j))->type.name, g->type.name) == 0)
          ok = fail_duplicate(cs_error_list_slot(problems), file, np, "GPU type \"%s\" is "
                              "declared twice (also at gpu_types[%d])", g->type.name,
                              g_array_index(at, int, j - first_gpu));
      if (ok && old)
        ok = fail_duplicate(cs_error_list_slot(problems), file, np, "GPU type \"%s\" is already "
                            "in the set (declared by %s)", g->type.name, old->origin);
      g_ptr_array_add(gpus, g);
      g_array_append_val(at, i);
      g_free(np);
    }
    g_free(p);
    i++;
  }

  i = 0;
  guint first_model = models->len;
  g_array_set_size(at, 0);
  cJSON_ArrayForEach(item, model_list)
  {
    char *p = cs_json_path_index("models", i);
    ModelEntry *m = parse_model(item, file, source, p, cs_error_list_slot(problems));
    if (m) {
      gboolean ok = TRUE;
      const CsModelProfile *prof = &m->prof;
      const GpuEntry *gpu = g_hash_table_lookup(set->gpu_index, prof->gpu_type);
      for (guint j = 0; j < gpus->len && !gpu; j++)
        if (strcmp(((const GpuEntry *)g_ptr_array_index(gpus, j))->type.name,
                   prof->gpu_type) == 0)
          gpu = g_ptr_array_index(gpus, j);
      if (!gpu) {
        char *gp = cs_json_path_key(p, "gpu");
        char *known = known_gpu_list(set, gpus);
        ok = cs_json_fail(cs_error_list_slot(problems), file, gp,
                          "unknown GPU type \"%s\" (declare it in \"gpu_types\" of this file or "
                          "of one loaded before; known: %s)", prof->gpu_type, known);
        g_free(known);
        g_free(gp);
      }
      /* Files hold tens of models: a quadratic scan is cheaper than an index. */
      for (guint j = first_model; j < models->len && ok; j++) {
        const CsModelProfile *other = &((const ModelEntry *)g_ptr_array_index(models, j))->prof;
        if (strcmp(other->gpu_type, prof->gpu_type) == 0 && strcmp(other->model, prof->model) == 0)
          ok = fail_duplicate(cs_error_list_slot(problems), file, p, "model \"%s\" on GPU type "
                              "\"%s\" is defined twice (also at models[%d])", prof->model,
                              prof->gpu_type, g_array_index(at, int, j - first_model));
      }
      const ModelEntry *old = ok && gpu && gpu->models
        ? g_hash_table_lookup(gpu->models, prof->model) : NULL;
      if (old)
        fail_duplicate(cs_error_list_slot(problems), file, p, "model \"%s\" on GPU type \"%s\" "
                       "is already in the set (defined by %s)", prof->model, prof->gpu_type,
                       old->origin);
      g_ptr_array_add(models, m);
      g_array_append_val(at, i);
    }
    g_free(p);
    i++;
  }
  g_array_free(at, TRUE);
  return cs_error_list_finish(problems, file, "the profile", error);
}

static gboolean load_tree(CsProfileSet *set, cJSON *root, const char *file, GError **error)
{
  GPtrArray *gpus = g_ptr_array_new_with_free_func((GDestroyNotify)cs_profile_gpu_entry_free);
  GPtrArray *models = g_ptr_array_new_with_free_func((GDestroyNotify)cs_profile_model_entry_free);
  GError *local = NULL;
  gboolean ok = load_root(set, root, file, gpus, models, &local);
  if (ok) {
    /* Commit: move ownership from the staged lists into the set. */
    for (guint i = 0; i < gpus->len; i++) {
      GpuEntry *g = g_ptr_array_index(gpus, i);
      g->models = g_hash_table_new(g_str_hash, g_str_equal);
      g_ptr_array_add(set->gpus, g);
      g_hash_table_insert(set->gpu_index, g->type.name, g);
    }
    for (guint i = 0; i < models->len; i++) {
      ModelEntry *m = g_ptr_array_index(models, i);
      GpuEntry *g = g_hash_table_lookup(set->gpu_index, m->prof.gpu_type);
      g_hash_table_insert(g->models, m->prof.model, m);
      g_ptr_array_add(set->models, m);
    }
    g_ptr_array_set_free_func(gpus, NULL);
    g_ptr_array_set_free_func(models, NULL);
  } else {
    move_error(error, local);
  }
  g_ptr_array_unref(gpus);
  g_ptr_array_unref(models);
  return ok;
}

gboolean cs_profile_set_load_file(CsProfileSet *set, const char *path, GError **error)
{
  g_return_val_if_fail(set != NULL && path != NULL, FALSE);
  GError *local = NULL;
  cJSON *root = cs_json_load_file(path, &local);
  if (!root)
    return move_error(error, local);
  gboolean ok = load_tree(set, root, path, error);
  cJSON_Delete(root);
  return ok;
}

gboolean cs_profile_set_load_data(CsProfileSet *set, const char *json, const char *name,
                                  GError **error)
{
  g_return_val_if_fail(set != NULL && json != NULL && name != NULL, FALSE);
  GError *local = NULL;
  cJSON *root = cs_json_parse(json, name, &local);
  if (!root)
    return move_error(error, local);
  gboolean ok = load_tree(set, root, name, error);
  cJSON_Delete(root);
  return ok;
}
