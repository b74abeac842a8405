/* Attention tables and a batch's attention time; see llm_attention.h. */
#include "llm_attention.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "common/json_input.h"

/* A profiled grid: ms[r * n_cols + c] is the time at kv[r] and cols[c],
 * NAN where the file has null (prefill only). */
typedef struct {
  const char *name;     /* "decode" or "prefill", for messages */
  const char *col_name; /* "batch_size" or "prefill_chunk_size" */
  const char *col_word; /* "batch" or "chunk" */
  int64_t *cols;
  int n_cols;
  int64_t *kv;
  int n_kv;
  double *ms;
} Grid;

struct CsLlmAttention {
  char *file, *gpu, *model, *backend, *source;
  int tp, block_size, max_model_len;
  Grid decode, prefill;
  CsLlmAttentionOutside outside; /* refuse (the default) or clamp a point off the grid */
};

static void grid_clear(Grid *g)
{
  g_free(g->cols);
  g_free(g->kv);
  g_free(g->ms);
}

void cs_llm_attention_free(CsLlmAttention *a)
{
  if (!a)
    return;
  grid_clear(&a->decode);
  grid_clear(&a->prefill);
  g_free(a->file);
  g_free(a->gpu);
  g_free(a->model);
  g_free(a->backend);
  g_free(a->source);
  g_free(a);
}

/* ---- Loading -------------------------------------------------------------- */

/* obj[key] as a non-empty array; its length in *n. */
static const cJSON *read_array(const cJSON *obj, const char *key, int *n, const char *file,
                               const char *path, GError **error)
{
  char *p = cs_json_path_key(path, key);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  gboolean ok = FALSE;
  if (!a)
    cs_json_fail(error, file, p, "required field is missing");
  else if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
    cs_json_fail(error, file, p, "expected a non-empty array, got %s",
                 cJSON_IsArray(a) ? "an empty array" : cs_json_type_name(a));
  else
    ok = TRUE;
  g_free(p);
  if (!ok)
    return NULL;
  *n = cJSON_GetArraySize(a);
  return a;
}

/* obj[key]: integers >= min, strictly ascending; a new array in *out. */
static gboolean read_axis(const cJSON *obj, const char *key, int64_t min, int64_t **out, int *n,
                          const char *file, const char *path, GError **error)
{
  const cJSON *a = read_array(obj, key, n, file, path, error);
  if (!a)
    return FALSE;
  char *p = cs_json_path_key(path, key);
  int64_t *x = g_new(int64_t, *n);
  int i = 0;
  const cJSON *v;
  gboolean ok = TRUE;
  cJSON_ArrayForEach(v, a)
  {
    char *pi = cs_json_path_index(p, i);
    ok = cs_json_value_int64(v, min, INT64_C(1) << 40, &x[i], file, pi, error);
    if (ok && i > 0 && x[i] <= x[i - 1])
      ok = cs_json_fail(error, file, pi,
                        "expected ascending values without repeats: a value > %" G_GINT64_FORMAT
                        " (the previous one), got %" G_GINT64_FORMAT,
                        (gint64)x[i - 1], (gint64)x[i]);
    g_free(pi);
    if (!ok)
      break;
    i++;
  }
  g_free(p);
  if (!ok) {
    g_free(x);
    return FALSE;
  }
  *out = x;
  return TRUE;
}

/* One value of median_ms at row r, column c: a time > 0, or null exactly
 * where the point is beyond max_len (max_len 0: never). */
static gboolean read_cell(const cJSON *v, Grid *g, int r, int c, int max_len, const char *file,
                          const char *path, GError **error)
{
  int64_t col = g->cols[c], kv = g->kv[r];
  gboolean beyond = max_len > 0 && col + kv > max_len;
  double *out = &g->ms[(size_t)r * g->n_cols + c];
  if (beyond) {
    if (cJSON_IsNull(v)) {
      *out = NAN;
      return TRUE;
    }
    return cs_json_fail(error, file, path,
                        "expected null (%s %" G_GINT64_FORMAT " + kv %" G_GINT64_FORMAT
                        " > max_model_len %d: not profiled), got %s",
                        g->col_word, (gint64)col, (gint64)kv, max_len, cs_json_type_name(v));
  }
  if (cJSON_IsNull(v)) {
    if (max_len > 0)
      return cs_json_fail(error, file, path,
                          "expected a time in ms > 0 (%s %" G_GINT64_FORMAT " + kv %" G_GINT64_FORMAT
                          " <= max_model_len %d), got null",
                          g->col_word, (gint64)col, (gint64)kv, max_len);
    return cs_json_fail(error, file, path, "expected a time in ms > 0, got null");
  }
  if (!cs_json_value_double(v, 0, G_MAXDOUBLE, out, file, path, error))
    return FALSE;
  /* A profiled median of 0 ms would be a broken measurement. */
  if (!(*out > 0))
    return cs_json_fail(error, file, path, "expected a time in ms > 0, got 0");
  return TRUE;
}

/* median_ms: one row per kv, one value per column. */
static gboolean read_matrix(const cJSON *obj, Grid *g, int max_len, const char *file,
                            const char *path, GError **error)
{
  int n = 0;
  const cJSON *a = read_array(obj, "median_ms", &n, file, path, error);
  if (!a)
    return FALSE;
  char *p = cs_json_path_key(path, "median_ms");
  gboolean ok = TRUE;
  if (n != g->n_kv)
    ok = cs_json_fail(error, file, p, "expected %d rows, one per kv_cache_size, got %d", g->n_kv,
                      n);
  g->ms = g_new(double, (size_t)g->n_kv * g->n_cols);
  int r = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, a)
  {
    if (!ok)
      break;
    char *pr = cs_json_path_index(p, r);
    if (!cJSON_IsArray(row))
      ok = cs_json_fail(error, file, pr, "expected an array of %d values, one per %s, got %s",
                        g->n_cols, g->col_name, cs_json_type_name(row));
    else if (cJSON_GetArraySize(row) != g->n_cols)
      ok = cs_json_fail(error, file, pr, "expected %d values, one per %s, got %d", g->n_cols,
                        g->col_name, cJSON_GetArraySize(row));
    int c = 0;
    const cJSON *v;
    if (ok)
      cJSON_ArrayForEach(v, row)
      {
        char *pc = cs_json_path_index(pr, c);
        ok = read_cell(v, g, r, c, max_len, file, pc, error);
        g_free(pc);
        if (!ok)
          break;
        c++;
      }
    g_free(pr);
    r++;
  }
  g_free(p);
  return ok;
}

static gboolean read_grid(const cJSON *root, Grid *g, int max_len, const char *file,
                          GError **error)
{
  const char *const keys[] = { "kv_cache_size", g->col_name, "median_ms", NULL };
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, g->name);
  if (!obj)
    return cs_json_fail(error, file, g->name, "required field is missing");
  return cs_json_expect_object(obj, file, g->name, error) &&
         cs_json_check_keys(obj, keys, file, g->name, error) &&
         read_axis(obj, "kv_cache_size", 0, &g->kv, &g->n_kv, file, g->name, error) &&
         read_axis(obj, g->col_name, 1, &g->cols, &g->n_cols, file, g->name, error) &&
         read_matrix(obj, g, max_len, file, g->name, error);
}

static CsLlmAttention *from_root(const cJSON *root, const char *file, GError **error)
{
  static const char *const keys[] = { "format",        "version", "source",     "gpu",
                                      "model",         "tp",      "block_size", "max_model_len",
                                      "attention_backend", "decode", "prefill", NULL };
  const char *source = NULL, *gpu = NULL, *model = NULL, *backend = NULL;
  if (!cs_llm_read_header(root, CS_LLM_ATTENTION_FORMAT, keys, &source, file, error))
    return NULL;
  CsLlmAttention *a = g_new0(CsLlmAttention, 1);
  a->decode = (Grid){ .name = "decode", .col_name = "batch_size", .col_word = "batch" };
  a->prefill = (Grid){ .name = "prefill", .col_name = "prefill_chunk_size", .col_word = "chunk" };
  if (!cs_json_read_string(root, "gpu", TRUE, &gpu, file, "", error) ||
      !cs_json_read_string(root, "model", TRUE, &model, file, "", error) ||
      !cs_json_read_int(root, "tp", TRUE, 1, 1 << 20, &a->tp, file, "", error) ||
      !cs_json_read_int(root, "block_size", TRUE, 1, 1 << 20, &a->block_size, file, "", error) ||
      !cs_json_read_int(root, "max_model_len", TRUE, 1, 1 << 30, &a->max_model_len, file, "",
                        error) ||
      !cs_json_read_string(root, "attention_backend", TRUE, &backend, file, "", error) ||
      !read_grid(root, &a->decode, 0, file, error) ||
      !read_grid(root, &a->prefill, a->max_model_len, file, error)) {
    cs_llm_attention_free(a);
    return NULL;
  }
  a->file = g_strdup(file);
  a->gpu = g_strdup(gpu);
  a->model = g_strdup(model);
  a->backend = g_strdup(backend);
  a->source = g_strdup_printf("%s: %s", file, source);
  return a;
}

CsLlmAttention *cs_llm_attention_load_data(const char *json, const char *name, GError **error)
{
  g_return_val_if_fail(json != NULL && name != NULL, NULL);
  cJSON *root = cs_json_parse(json, name, error);
  if (!root)
    return NULL;
  CsLlmAttention *a = from_root(root, name, error);
  cJSON_Delete(root);
  return a;
}

CsLlmAttention *cs_llm_attention_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  CsLlmAttention *a = from_root(root, path, error);
  cJSON_Delete(root);
  return a;
}

const char *cs_llm_attention_file(const CsLlmAttention *a)
{
  g_return_val_if_fail(a != NULL, NULL);
  return a->file;
}

const char *cs_llm_attention_gpu(const CsLlmAttention *a)
{
  g_return_val_if_fail(a != NULL, NULL);
  return a->gpu;
}

const char *cs_llm_attention_model(const CsLlmAttention *a)
{
  g_return_val_if_fail(a != NULL, NULL);
  return a->model;
}

int cs_llm_attention_tp(const CsLlmAttention *a)
{
  g_return_val_if_fail(a != NULL, 0);
  return a->tp;
}

const char *cs_llm_attention_source(const CsLlmAttention *a)
{
  g_return_val_if_fail(a != NULL, NULL);
  return a->source;
}

char *cs_llm_attention_rel_path(const char *gpu, const char *model)
{
  g_return_val_if_fail(gpu != NULL && model != NULL, NULL);
  char **parts = g_strsplit(model, "/", -1);
  char *flat = g_strjoinv("__", parts);
  char *rel = g_strdup_printf("attention/%s/%s.json", gpu, flat);
  g_strfreev(parts);
  g_free(flat);
  return rel;
}

gboolean cs_llm_attention_check(const CsLlmAttention *a, const CsLlmModel *m, int tp,
                                GError **error)
{
  g_return_val_if_fail(a != NULL && m != NULL, FALSE);
  if (strcmp(a->model, m->name) != 0)
    return cs_json_fail(error, a->file, "model", "expected \"%s\", got \"%s\"", m->name,
                        a->model);
  if (a->tp != tp)
    return cs_json_fail(error, a->file, "tp", "expected %d (the replica's TP for %s), got %d",
                        tp, m->name, a->tp);
  return TRUE;
}

/* ---- Lookup ------------------------------------------------------------------ */

/* The grid points around at: x[*lo] <= at <= x[*hi], *f the fraction of the
 * way to x[*hi]; *hi == *lo and *f == 0 at a grid point. FALSE outside. */
static gboolean bracket(const int64_t *x, int n, int64_t at, int *lo, int *hi, double *f)
{
  if (at < x[0] || at > x[n - 1])
    return FALSE;
  int a = 0, b = n - 1;
  /* The last point <= at, by bisection. */
  while (b - a > 1) {
    int mid = a + (b - a) / 2;
    if (x[mid] <= at)
      a = mid;
    else
      b = mid;
  }
  if (x[b] <= at)
    a = b;
  *lo = a;
  if (x[a] == at) {
    *hi = a;
    *f = 0;
  } else {
    *hi = a + 1;
    *f = (double)(at - x[a]) / (double)(x[a + 1] - x[a]);
  }
  return TRUE;
}

/* Linear along a grid line. At a grid point f is 0 and y_hi is y_lo (the
 * same index), so the point's value comes back exactly. */
static double lerp(double y_lo, double y_hi, double f)
{
  return y_lo + (y_hi - y_lo) * f;
}

static gboolean grid_lookup(const CsLlmAttention *a, const Grid *g, int max_len, int64_t col,
                            int64_t kv, double *out, gboolean *clamped, GError **error)
{
  int c0, c1, r0, r1;
  double fc, fr;
  if (clamped)
    *clamped = FALSE;
  if (a->outside == CS_LLM_ATTN_CLAMP_OUTSIDE) {
    /* What a piecewise-constant fit answers beyond its data (Vidur's
     * forests): the value at the nearest edge, axis by axis. */
    int64_t c = CLAMP(col, g->cols[0], g->cols[g->n_cols - 1]);
    int64_t k = CLAMP(kv, g->kv[0], g->kv[g->n_kv - 1]);
    if (clamped)
      *clamped = c != col || k != kv;
    col = c;
    kv = k;
  }
  if (!bracket(g->cols, g->n_cols, col, &c0, &c1, &fc) ||
      !bracket(g->kv, g->n_kv, kv, &r0, &r1, &fr)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: %s attention at %s %" G_GINT64_FORMAT ", kv %" G_GINT64_FORMAT
                ": outside the profiled grid (%s %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ", kv_cache_size %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                "; no extrapolation)",
                a->file, g->name, g->col_word, (gint64)col, (gint64)kv, g->col_name,
                (gint64)g->cols[0], (gint64)g->cols[g->n_cols - 1], (gint64)g->kv[0],
                (gint64)g->kv[g->n_kv - 1]);
    return FALSE;
  }
  const double *m = g->ms;
  int nc = g->n_cols;
  /* The corners the point draws on: those of nonzero bilinear weight. */
  int cs[2] = { c0, c1 }, rs[2] = { r0, r1 };
  GString *missing = NULL;
  for (int i = 0; i < (fr > 0 ? 2 : 1); i++)
    for (int j = 0; j < (fc > 0 ? 2 : 1); j++)
      if (isnan(m[(size_t)rs[i] * nc + cs[j]])) {
        if (!missing)
          missing = g_string_new(NULL);
        g_string_append_printf(missing, "%s(%s %" G_GINT64_FORMAT ", kv %" G_GINT64_FORMAT ")",
                               missing->len ? " and " : "", g->col_word,
                               (gint64)g->cols[cs[j]], (gint64)g->kv[rs[i]]);
      }
  if (missing) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: %s attention at %s %" G_GINT64_FORMAT ", kv %" G_GINT64_FORMAT
                ": its cell (%s %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ", kv %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ") lacks %s, beyond max_model_len %d; refused rather than extrapolated "
                "(profiled: %s %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ", kv_cache_size %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                " where %s + kv <= %d)",
                a->file, g->name, g->col_word, (gint64)col, (gint64)kv, g->col_word,
                (gint64)g->cols[c0], (gint64)g->cols[c1], (gint64)g->kv[r0],
                (gint64)g->kv[r1], missing->str, max_len, g->col_name, (gint64)g->cols[0],
                (gint64)g->cols[nc - 1], (gint64)g->kv[0], (gint64)g->kv[g->n_kv - 1],
                g->col_word, max_len);
    g_string_free(missing, TRUE);
    return FALSE;
  }
  double lo = lerp(m[(size_t)r0 * nc + c0], m[(size_t)r0 * nc + c1], fc);
  double hi = lerp(m[(size_t)r1 * nc + c0], m[(size_t)r1 * nc + c1], fc);
  *out = lerp(lo, hi, fr);
  return TRUE;
}

gboolean cs_llm_attention_decode_ms(const CsLlmAttention *a, int64_t batch, int64_t kv,
                                    double *out_ms, GError **error)
{
  g_return_val_if_fail(a != NULL && out_ms != NULL, FALSE);
  return grid_lookup(a, &a->decode, 0, batch, kv, out_ms, NULL, error);
}

gboolean cs_llm_attention_prefill_ms(const CsLlmAttention *a, int64_t chunk, int64_t kv,
                                     double *out_ms, GError **error)
{
  g_return_val_if_fail(a != NULL && out_ms != NULL, FALSE);
  return grid_lookup(a, &a->prefill, a->max_model_len, chunk, kv, out_ms, NULL, error);
}

void cs_llm_attention_set_outside(CsLlmAttention *a, CsLlmAttentionOutside mode)
{
  g_return_if_fail(a != NULL);
  a->outside = mode;
}

gboolean cs_llm_attention_outside_parse(const char *name, CsLlmAttentionOutside *out,
                                        GError **error)
{
  if (name != NULL && strcmp(name, "refuse") == 0) {
    *out = CS_LLM_ATTN_REFUSE_OUTSIDE;
    return TRUE;
  }
  if (name != NULL && strcmp(name, "clamp") == 0) {
    *out = CS_LLM_ATTN_CLAMP_OUTSIDE;
    return TRUE;
  }
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
              "\"%s\": expected \"refuse\" or \"clamp\"", name != NULL ? name : "(null)");
  return FALSE;
}

/* ---- A batch ----------------------------------------------------------------- */

static int64_t round_up_kv(int64_t x)
{
  return (x + CS_LLM_KV_GRANULARITY - 1) / CS_LLM_KV_GRANULARITY * CS_LLM_KV_GRANULARITY;
}

/* The integer nearest sqrt(s), s <= 2^60, exactly: r with (2r - 1)^2 <=
 * 4s < (2r + 1)^2 (never equal: 4s is even, (2r +- 1)^2 odd). The double
 * sqrt is only the first guess, off by one at most near 2^60. */
static int64_t round_sqrt(int64_t s)
{
  int64_t r = llround(sqrt((double)s));
  while ((2 * r + 1) * (2 * r + 1) <= 4 * s)
    r++;
  while (r > 0 && (2 * r - 1) * (2 * r - 1) > 4 * s)
    r--;
  return r;
}

/* Appends to error's message, which keeps the file first. */
static void append_to_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void append_to_error(GError **error, const char *fmt, ...)
{
  if (!error || !*error)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *tail = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *m = g_strconcat((*error)->message, tail, NULL);
  g_free((*error)->message);
  (*error)->message = m;
  g_free(tail);
}

gboolean cs_llm_attention_batch(const CsLlmAttention *a, const CsLlmModel *m,
                                const CsLlmBatchRequest *reqs, int n, CsLlmBatchAttention *out,
                                GError **error)
{
  g_return_val_if_fail(a != NULL && m != NULL && out != NULL, FALSE);
  if (n < 1 || n > CS_LLM_BATCH_MAX_REQUESTS || !reqs) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: a batch of %d requests: expected 1 to %d", a->file, n,
                CS_LLM_BATCH_MAX_REQUESTS);
    return FALSE;
  }
  CsLlmBatchAttention t = { 0 };
  int64_t decode_processed = 0, chunk_sq = 0;
  for (int i = 0; i < n; i++) {
    const CsLlmBatchRequest *q = &reqs[i];
    gboolean dec = q->prefill_complete;
    int64_t max_tokens = dec ? 1 : CS_LLM_BATCH_MAX_TOKENS;
    int64_t min_processed = dec ? 1 : 0;
    if (q->num_tokens < 1 || q->num_tokens > max_tokens || q->num_processed < min_processed ||
        q->num_processed > (INT64_C(1) << 40)) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "%s: request %d of the batch (%s): expected %s and %" G_GINT64_FORMAT
                  " to 2^40 tokens processed, got %" G_GINT64_FORMAT " tokens and %"
                  G_GINT64_FORMAT " processed",
                  a->file, i, dec ? "decoding" : "prefilling",
                  dec ? "1 token this iteration" : "1 to 2^20 tokens this iteration",
                  (gint64)min_processed, (gint64)q->num_tokens, (gint64)q->num_processed);
      return FALSE;
    }
    if (dec) {
      t.decode_batch++;
      decode_processed += q->num_processed;
    } else {
      t.num_prefills++;
      t.prefill_kv_sum += round_up_kv(q->num_processed);
      chunk_sq += q->num_tokens * q->num_tokens;
    }
  }
  gboolean gqa = m->num_q_heads > m->num_kv_heads;
  double frac = gqa ? CS_LLM_ATTN_BATCHING_OVERHEAD : 0;
  if (t.decode_batch > 0) {
    /* The mean truncated, then rounded up (the order matters). */
    t.decode_kv = round_up_kv(decode_processed / t.decode_batch);
    gboolean clamped;
    if (!grid_lookup(a, &a->decode, 0, t.decode_batch, t.decode_kv, &t.decode_ms, &clamped,
                     error)) {
      append_to_error(error,
                      " (the batch's %d decoding requests, %" G_GINT64_FORMAT
                      " tokens processed in all, looked up at their mean rounded up to a "
                      "multiple of %d)",
                      t.decode_batch, (gint64)decode_processed, CS_LLM_KV_GRANULARITY);
      return FALSE;
    }
    t.clamped += clamped;
    t.decode_ms *= 1 + frac * (t.decode_batch > 1);
  }
  if (t.num_prefills > 0) {
    t.prefill_chunk_eq = round_sqrt(chunk_sq);
    gboolean clamped;
    if (!grid_lookup(a, &a->prefill, a->max_model_len, t.prefill_chunk_eq, t.prefill_kv_sum,
                     &t.prefill_ms, &clamped, error)) {
      append_to_error(error,
                      " (the batch's %d prefills as one: chunk round(sqrt(%" G_GINT64_FORMAT
                      ")) and kv the sum of each one's processed tokens rounded up to a "
                      "multiple of %d)",
                      t.num_prefills, (gint64)chunk_sq, CS_LLM_KV_GRANULARITY);
      return FALSE;
    }
    t.clamped += clamped;
    t.prefill_ms *= 1 + frac * (t.num_prefills > 1);
  }
  t.kv_cache_save_ms = 0;
  t.total_ms = t.decode_ms + t.prefill_ms + t.kv_cache_save_ms;
  *out = t;
  return TRUE;
}
