/* Operator and collective tables; see llm_ops.h. */
#include "llm_ops.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"

static const char *const OP_NAMES[CS_LLM_N_OPS + 1] = {
  "input_layernorm", "attn_pre_proj", "attn_rope",     "attn_post_proj", "post_attention_layernorm",
  "mlp_up_proj",     "mlp_act",       "mlp_down_proj", "add",            NULL
};

const char *cs_llm_op_name(CsLlmOp op)
{
  return (op >= 0 && op < CS_LLM_N_OPS) ? OP_NAMES[op] : NULL;
}

/* A profiled grid: x strictly ascending, one y per x. */
typedef struct {
  int64_t *x;
  double *y;
  int n;
} Grid;

typedef struct {
  int tp;
  int64_t *num_tokens;      /* n, ascending */
  int n;
  double *ms[CS_LLM_N_OPS]; /* n each */
} TpTable;

struct CsLlmOps {
  char *file, *gpu, *model, *source;
  struct {
    int n_head, n_kv_head, n_embd, n_expanded_embd, vocab_size;
    gboolean use_gated_mlp;
  } shape;
  TpTable *tps;
  int n_tps;
};

struct CsLlmCurve {
  char *collective;
  int num_workers, devices_per_node;
  Grid g;
  const CsLlmCollectives *owner;
};

struct CsLlmCollectives {
  char *file, *node, *source;
  CsLlmCurve *curves;
  int n_curves;
};

/* ---- Shared readers -------------------------------------------------------- */

/* obj[key] as an array of n_expect elements, the length of the field grid
 * (n_expect < 0: any non-empty length, returned in *n). */
static const cJSON *read_array(const cJSON *obj, const char *key, int n_expect, const char *grid,
                               int *n, const char *file, const char *path, GError **error)
{
  char *p = cs_json_path_key(path, key);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  gboolean ok = FALSE;
  if (!a)
    cs_json_fail(error, file, p, "required field is missing");
  else if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
    cs_json_fail(error, file, p, "expected a non-empty array, got %s",
                 cJSON_IsArray(a) ? "an empty array" : cs_json_type_name(a));
  else if (n_expect >= 0 && cJSON_GetArraySize(a) != n_expect)
    cs_json_fail(error, file, p, "expected %d values, as many as %s, got %d", n_expect, grid,
                 cJSON_GetArraySize(a));
  else
    ok = TRUE;
  g_free(p);
  if (!ok)
    return NULL;
  if (n)
    *n = cJSON_GetArraySize(a);
  return a;
}

/* obj[key]: integers >= 1, strictly ascending; a new array in *out. */
static gboolean read_grid_x(const cJSON *obj, const char *key, int64_t **out, int *n,
                            const char *file, const char *path, GError **error)
{
  const cJSON *a = read_array(obj, key, -1, NULL, n, file, path, error);
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
    ok = cs_json_value_int64(v, 1, INT64_C(1) << 52, &x[i], file, pi, error);
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

/* obj[key]: n finite numbers > 0 (times in ms); a new array in *out. */
static gboolean read_times(const cJSON *obj, const char *key, int n, const char *grid,
                           double **out, const char *file, const char *path, GError **error)
{
  const cJSON *a = read_array(obj, key, n, grid, NULL, file, path, error);
  if (!a)
    return FALSE;
  char *p = cs_json_path_key(path, key);
  double *y = g_new(double, n);
  int i = 0;
  const cJSON *v;
  gboolean ok = TRUE;
  cJSON_ArrayForEach(v, a)
  {
    char *pi = cs_json_path_index(p, i);
    ok = cs_json_value_double(v, 0, G_MAXDOUBLE, &y[i], file, pi, error);
    /* A profiled median of 0 ms would be a broken measurement. */
    if (ok && !(y[i] > 0))
      ok = cs_json_fail(error, file, pi, "expected a time in ms > 0, got 0");
    g_free(pi);
    if (!ok)
      break;
    i++;
  }
  g_free(p);
  if (!ok) {
    g_free(y);
    return FALSE;
  }
  *out = y;
  return TRUE;
}

/* Linear between the grid points around at (exact at one); FALSE outside. */
static gboolean interpolate(const int64_t *x, const double *y, int n, int64_t at, double *out)
{
  if (at < x[0] || at > x[n - 1])
    return FALSE;
  int lo = 0, hi = n - 1;
  /* The last point <= at, by bisection: x[lo] <= at < x[hi] or at == x[hi]. */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (x[mid] <= at)
      lo = mid;
    else
      hi = mid;
  }
  if (at == x[lo]) {
    *out = y[lo];
  } else if (at == x[hi]) {
    *out = y[hi];
  } else {
    double f = (double)(at - x[lo]) / (double)(x[hi] - x[lo]);
    *out = y[lo] + (y[hi] - y[lo]) * f;
  }
  return TRUE;
}

static int op_index(const char *name)
{
  for (int k = 0; k < CS_LLM_N_OPS; k++)
    if (strcmp(OP_NAMES[k], name) == 0)
      return k;
  return -1;
}

/* ---- Operator tables ------------------------------------------------------ */

void cs_llm_ops_free(CsLlmOps *ops)
{
  if (!ops)
    return;
  for (int i = 0; i < ops->n_tps; i++) {
    g_free(ops->tps[i].num_tokens);
    for (int k = 0; k < CS_LLM_N_OPS; k++)
      g_free(ops->tps[i].ms[k]);
  }
  g_free(ops->tps);
  g_free(ops->file);
  g_free(ops->gpu);
  g_free(ops->model);
  g_free(ops->source);
  g_free(ops);
}

/* "ops": each known op exactly once. */
static gboolean check_op_list(const cJSON *root, const char *file, GError **error)
{
  int n = 0;
  const cJSON *a = read_array(root, "ops", -1, NULL, &n, file, "", error);
  if (!a)
    return FALSE;
  gboolean seen[CS_LLM_N_OPS] = { FALSE };
  int i = 0;
  const cJSON *v;
  cJSON_ArrayForEach(v, a)
  {
    char *p = cs_json_path_index("ops", i++);
    const char *name = NULL;
    gboolean ok = cs_json_value_string(v, &name, file, p, error);
    int k = ok ? op_index(name) : -1;
    if (ok && k < 0) {
      char *hint = cs_did_you_mean(name, OP_NAMES, CS_LLM_N_OPS);
      ok = cs_json_fail(error, file, p, "expected a known op, got \"%s\"%s", name, hint);
      g_free(hint);
    } else if (ok && seen[k]) {
      ok = cs_json_fail(error, file, p, "expected each op once, got \"%s\" again", name);
    }
    g_free(p);
    if (!ok)
      return FALSE;
    seen[k] = TRUE;
  }
  for (int k = 0; k < CS_LLM_N_OPS; k++)
    if (!seen[k])
      return cs_json_fail(error, file, "ops", "expected every op of a layer: \"%s\" is missing",
                          OP_NAMES[k]);
  return TRUE;
}

static gboolean parse_tp(const cJSON *node, TpTable *t, const CsLlmOps *ops, const char *file,
                         const char *path, GError **error)
{
  static const char *const keys[] = { "tp", "num_tokens", "median_ms", NULL };
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_int(node, "tp", TRUE, 1, 1 << 20, &t->tp, file, path, error))
    return FALSE;
  for (int i = 0; i < ops->n_tps; i++)
    if (ops->tps[i].tp == t->tp) {
      char *p = cs_json_path_key(path, "tp");
      cs_json_fail(error, file, p, "expected a degree not given before, got %d again", t->tp);
      g_free(p);
      return FALSE;
    }
  if (!read_grid_x(node, "num_tokens", &t->num_tokens, &t->n, file, path, error))
    return FALSE;
  char *mp = cs_json_path_key(path, "median_ms");
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(node, "median_ms");
  gboolean ok = TRUE;
  if (!ms)
    ok = cs_json_fail(error, file, mp, "required field is missing");
  else
    ok = cs_json_expect_object(ms, file, mp, error) &&
         cs_json_check_keys(ms, OP_NAMES, file, mp, error);
  for (int k = 0; ok && k < CS_LLM_N_OPS; k++) {
    if (!cJSON_GetObjectItemCaseSensitive(ms, OP_NAMES[k])) {
      char *p = cs_json_path_key(mp, OP_NAMES[k]);
      ok = cs_json_fail(error, file, p, "required field is missing (every op of \"ops\")");
      g_free(p);
      break;
    }
    ok = read_times(ms, OP_NAMES[k], t->n, "num_tokens", &t->ms[k], file, mp, error);
  }
  g_free(mp);
  return ok;
}

static CsLlmOps *ops_from_root(const cJSON *root, const char *file, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "gpu", "model",
                                      "model_shape", "ops", "tensor_parallel", NULL };
  static const char *const shape_keys[] = { "n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                                            "vocab_size", "use_gated_mlp", NULL };
  const char *source = NULL, *gpu = NULL, *model = NULL;
  if (!cs_llm_read_header(root, CS_LLM_OPS_FORMAT, keys, &source, file, error) ||
      !cs_json_read_string(root, "gpu", TRUE, &gpu, file, "", error) ||
      !cs_json_read_string(root, "model", TRUE, &model, file, "", error))
    return NULL;
  CsLlmOps *ops = g_new0(CsLlmOps, 1);
  ops->file = g_strdup(file);
  ops->gpu = g_strdup(gpu);
  ops->model = g_strdup(model);
  ops->source = g_strdup_printf("%s: %s", file, source);
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(root, "model_shape");
  int n = 0;
  const cJSON *tps = NULL;
  if (!shape) {
    cs_json_fail(error, file, "model_shape", "required field is missing");
    goto fail;
  }
  if (!cs_json_expect_object(shape, file, "model_shape", error) ||
      !cs_json_check_keys(shape, shape_keys, file, "model_shape", error) ||
      !cs_json_read_int(shape, "n_head", TRUE, 1, G_MAXINT, &ops->shape.n_head, file,
                        "model_shape", error) ||
      !cs_json_read_int(shape, "n_kv_head", TRUE, 1, G_MAXINT, &ops->shape.n_kv_head, file,
                        "model_shape", error) ||
      !cs_json_read_int(shape, "n_embd", TRUE, 1, G_MAXINT, &ops->shape.n_embd, file,
                        "model_shape", error) ||
      !cs_json_read_int(shape, "n_expanded_embd", TRUE, 1, G_MAXINT,
                        &ops->shape.n_expanded_embd, file, "model_shape", error) ||
      !cs_json_read_int(shape, "vocab_size", TRUE, 1, G_MAXINT, &ops->shape.vocab_size, file,
                        "model_shape", error) ||
      !cs_json_read_bool(shape, "use_gated_mlp", TRUE, &ops->shape.use_gated_mlp, file,
                         "model_shape", error) ||
      !check_op_list(root, file, error) ||
      !(tps = read_array(root, "tensor_parallel", -1, NULL, &n, file, "", error)))
    goto fail;
  ops->tps = g_new0(TpTable, n);
  const cJSON *item;
  cJSON_ArrayForEach(item, tps)
  {
    char *p = cs_json_path_index("tensor_parallel", ops->n_tps);
    /* Counted before parsing, so that a failure frees what was read. */
    TpTable *t = &ops->tps[ops->n_tps];
    gboolean ok = parse_tp(item, t, ops, file, p, error);
    ops->n_tps++;
    g_free(p);
    if (!ok)
      goto fail;
  }
  return ops;
fail:
  cs_llm_ops_free(ops);
  return NULL;
}

CsLlmOps *cs_llm_ops_load_data(const char *json, const char *name, GError **error)
{
  g_return_val_if_fail(json != NULL && name != NULL, NULL);
  cJSON *root = cs_json_parse(json, name, error);
  if (!root)
    return NULL;
  CsLlmOps *ops = ops_from_root(root, name, error);
  cJSON_Delete(root);
  return ops;
}

CsLlmOps *cs_llm_ops_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  CsLlmOps *ops = ops_from_root(root, path, error);
  cJSON_Delete(root);
  return ops;
}

const char *cs_llm_ops_file(const CsLlmOps *ops)
{
  g_return_val_if_fail(ops != NULL, NULL);
  return ops->file;
}

const char *cs_llm_ops_gpu(const CsLlmOps *ops)
{
  g_return_val_if_fail(ops != NULL, NULL);
  return ops->gpu;
}

const char *cs_llm_ops_model(const CsLlmOps *ops)
{
  g_return_val_if_fail(ops != NULL, NULL);
  return ops->model;
}

const char *cs_llm_ops_source(const CsLlmOps *ops)
{
  g_return_val_if_fail(ops != NULL, NULL);
  return ops->source;
}

static const TpTable *find_tp(const CsLlmOps *ops, int tp)
{
  for (int i = 0; i < ops->n_tps; i++)
    if (ops->tps[i].tp == tp)
      return &ops->tps[i];
  return NULL;
}

gboolean cs_llm_ops_has_tp(const CsLlmOps *ops, int tp)
{
  g_return_val_if_fail(ops != NULL, FALSE);
  return find_tp(ops, tp) != NULL;
}

int64_t cs_llm_ops_max_tokens(const CsLlmOps *ops, int tp)
{
  g_return_val_if_fail(ops != NULL, 0);
  const TpTable *t = find_tp(ops, tp);
  return t ? t->num_tokens[t->n - 1] : 0;
}

gboolean cs_llm_ops_check_model(const CsLlmOps *ops, const CsLlmModel *m, GError **error)
{
  g_return_val_if_fail(ops != NULL && m != NULL, FALSE);
  if (strcmp(ops->model, m->name) != 0)
    return cs_json_fail(error, ops->file, "model", "expected \"%s\", got \"%s\"", m->name,
                        ops->model);
  const struct {
    const char *field, *model_field;
    int table, model;
  } pairs[] = {
    { "n_head", "num_q_heads", ops->shape.n_head, m->num_q_heads },
    { "n_kv_head", "num_kv_heads", ops->shape.n_kv_head, m->num_kv_heads },
    { "n_embd", "embedding_dim", ops->shape.n_embd, m->embedding_dim },
    { "n_expanded_embd", "mlp_hidden_dim", ops->shape.n_expanded_embd, m->mlp_hidden_dim },
    { "vocab_size", "vocab_size", ops->shape.vocab_size, m->vocab_size },
    { "use_gated_mlp", "use_gated_mlp", ops->shape.use_gated_mlp != 0, m->use_gated_mlp != 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
    if (pairs[i].table != pairs[i].model) {
      char *p = cs_json_path_key("model_shape", pairs[i].field);
      cs_json_fail(error, ops->file, p, "expected %d (the %s of model %s), got %d",
                   pairs[i].model, pairs[i].model_field, m->name, pairs[i].table);
      g_free(p);
      return FALSE;
    }
  return TRUE;
}

gboolean cs_llm_ops_time_ms(const CsLlmOps *ops, int tp, CsLlmOp op, int64_t num_tokens,
                            double *out_ms, GError **error)
{
  g_return_val_if_fail(ops != NULL && op >= 0 && op < CS_LLM_N_OPS && out_ms != NULL, FALSE);
  const TpTable *t = find_tp(ops, tp);
  if (!t) {
    GString *have = g_string_new(NULL);
    for (int i = 0; i < ops->n_tps; i++)
      g_string_append_printf(have, "%s%d", i ? ", " : "", ops->tps[i].tp);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: no tensor-parallel degree %d (the table has %s)", ops->file, tp, have->str);
    g_string_free(have, TRUE);
    return FALSE;
  }
  if (!interpolate(t->num_tokens, t->ms[op], t->n, num_tokens, out_ms)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: %s at TP%d for %" G_GINT64_FORMAT " tokens: outside the profiled "
                "num_tokens %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT " (no extrapolation)",
                ops->file, OP_NAMES[op], tp, (gint64)num_tokens, (gint64)t->num_tokens[0],
                (gint64)t->num_tokens[t->n - 1]);
    return FALSE;
  }
  return TRUE;
}

/* ---- Collectives ------------------------------------------------------------ */

static const char *const COLLECTIVES[] = { "all_reduce", "send_recv", NULL };

void cs_llm_collectives_free(CsLlmCollectives *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_curves; i++) {
    g_free(c->curves[i].collective);
    g_free(c->curves[i].g.x);
    g_free(c->curves[i].g.y);
  }
  g_free(c->curves);
  g_free(c->file);
  g_free(c->node);
  g_free(c->source);
  g_free(c);
}

static gboolean parse_curve(const cJSON *node, CsLlmCurve *cv, const CsLlmCollectives *c,
                            const char *file, const char *path, GError **error)
{
  static const char *const keys[] = { "collective", "num_workers", "devices_per_node",
                                      "size_bytes", "median_ms", NULL };
  const char *name = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "collective", TRUE, &name, file, path, error))
    return FALSE;
  if (!g_strv_contains(COLLECTIVES, name)) {
    char *hint = cs_did_you_mean(name, COLLECTIVES, -1);
    char *p = cs_json_path_key(path, "collective");
    cs_json_fail(error, file, p, "expected \"all_reduce\" or \"send_recv\", got \"%s\"%s", name,
                 hint);
    g_free(p);
    g_free(hint);
    return FALSE;
  }
  cv->collective = g_strdup(name);
  if (!cs_json_read_int(node, "num_workers", TRUE, 2, 1 << 20, &cv->num_workers, file, path,
                        error) ||
      !cs_json_read_int(node, "devices_per_node", TRUE, 1, 1 << 20, &cv->devices_per_node, file,
                        path, error))
    return FALSE;
  for (int i = 0; i < c->n_curves - 1; i++) {
    const CsLlmCurve *o = &c->curves[i];
    if (strcmp(o->collective, cv->collective) == 0 && o->num_workers == cv->num_workers &&
        o->devices_per_node == cv->devices_per_node)
      return cs_json_fail(error, file, path,
                          "expected one curve per collective, num_workers and devices_per_node: "
                          "%s with %d workers, %d per node is curves[%d] already",
                          name, cv->num_workers, cv->devices_per_node, i);
  }
  return read_grid_x(node, "size_bytes", &cv->g.x, &cv->g.n, file, path, error) &&
         read_times(node, "median_ms", cv->g.n, "size_bytes", &cv->g.y, file, path, error);
}

static CsLlmCollectives *collectives_from_root(const cJSON *root, const char *file,
                                               GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "node", "curves", NULL };
  const char *source = NULL, *node = NULL;
  int n = 0;
  const cJSON *curves;
  if (!cs_llm_read_header(root, CS_LLM_COLLECTIVES_FORMAT, keys, &source, file, error) ||
      !cs_json_read_string(root, "node", TRUE, &node, file, "", error) ||
      !(curves = read_array(root, "curves", -1, NULL, &n, file, "", error)))
    return NULL;
  CsLlmCollectives *c = g_new0(CsLlmCollectives, 1);
  c->file = g_strdup(file);
  c->node = g_strdup(node);
  c->source = g_strdup_printf("%s: %s", file, source);
  c->curves = g_new0(CsLlmCurve, n);
  const cJSON *item;
  cJSON_ArrayForEach(item, curves)
  {
    char *p = cs_json_path_index("curves", c->n_curves);
    CsLlmCurve *cv = &c->curves[c->n_curves++];
    cv->owner = c;
    gboolean ok = parse_curve(item, cv, c, file, p, error);
    g_free(p);
    if (!ok) {
      cs_llm_collectives_free(c);
      return NULL;
    }
  }
  return c;
}

CsLlmCollectives *cs_llm_collectives_load_data(const char *json, const char *name,
                                               GError **error)
{
  g_return_val_if_fail(json != NULL && name != NULL, NULL);
  cJSON *root = cs_json_parse(json, name, error);
  if (!root)
    return NULL;
  CsLlmCollectives *c = collectives_from_root(root, name, error);
  cJSON_Delete(root);
  return c;
}

CsLlmCollectives *cs_llm_collectives_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  CsLlmCollectives *c = collectives_from_root(root, path, error);
  cJSON_Delete(root);
  return c;
}

const char *cs_llm_collectives_file(const CsLlmCollectives *c)
{
  g_return_val_if_fail(c != NULL, NULL);
  return c->file;
}

const char *cs_llm_collectives_node(const CsLlmCollectives *c)
{
  g_return_val_if_fail(c != NULL, NULL);
  return c->node;
}

const char *cs_llm_collectives_source(const CsLlmCollectives *c)
{
  g_return_val_if_fail(c != NULL, NULL);
  return c->source;
}

const CsLlmCurve *cs_llm_collectives_find(const CsLlmCollectives *c, const char *collective,
                                          int num_workers, int devices_per_node,
                                          GError **error)
{
  g_return_val_if_fail(c != NULL && collective != NULL, NULL);
  for (int i = 0; i < c->n_curves; i++) {
    const CsLlmCurve *cv = &c->curves[i];
    if (strcmp(cv->collective, collective) == 0 && cv->num_workers == num_workers &&
        cv->devices_per_node == devices_per_node)
      return cv;
  }
  if (error) {
    GString *have = g_string_new(NULL);
    for (int i = 0; i < c->n_curves; i++)
      g_string_append_printf(have, "%s%s (%d, %d)", i ? ", " : "", c->curves[i].collective,
                             c->curves[i].num_workers, c->curves[i].devices_per_node);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: no %s curve for %d workers with %d devices per node (the file has, as "
                "(num_workers, devices_per_node): %s)",
                c->file, collective, num_workers, devices_per_node, have->str);
    g_string_free(have, TRUE);
  }
  return NULL;
}

gboolean cs_llm_curve_time_ms(const CsLlmCurve *curve, int64_t bytes, double *out_ms,
                              GError **error)
{
  g_return_val_if_fail(curve != NULL && out_ms != NULL, FALSE);
  if (!interpolate(curve->g.x, curve->g.y, curve->g.n, bytes, out_ms)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: %s (%d workers, %d per node) of %" G_GINT64_FORMAT " bytes: outside the "
                "profiled sizes %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                " bytes (no extrapolation)",
                curve->owner->file, curve->collective, curve->num_workers,
                curve->devices_per_node, (gint64)bytes, (gint64)curve->g.x[0],
                (gint64)curve->g.x[curve->g.n - 1]);
    return FALSE;
  }
  return TRUE;
}
