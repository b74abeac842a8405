/* LLM model and device configurations and the memory plan; see llm_model.h. */
#include "llm_model.h"

#include <math.h>
#include <string.h>

#include "common/data_files.h"
#include "common/json_input.h"

struct CsLlmModelSet {
  CsLlmModel *models;
  int n_models;
  CsLlmDevice *devices;
  int n_devices;
  CsLlmNode *nodes;
  int n_nodes;
  char *file;
  char *source;
};

void cs_llm_models_free(CsLlmModelSet *set)
{
  if (!set)
    return;
  for (int i = 0; i < set->n_models; i++)
    g_free(set->models[i].name);
  for (int i = 0; i < set->n_devices; i++)
    g_free(set->devices[i].name);
  for (int i = 0; i < set->n_nodes; i++)
    g_free(set->nodes[i].name);
  g_free(set->models);
  g_free(set->devices);
  g_free(set->nodes);
  g_free(set->file);
  g_free(set->source);
  g_free(set);
}

/* ---- Loading ------------------------------------------------------------- */

/* The array root[key], non-empty; its size in *n. */
static const cJSON *read_array(const cJSON *root, const char *key, int *n, const char *file,
                               GError **error)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!a) {
    cs_json_fail(error, file, key, "required field is missing");
    return NULL;
  }
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1) {
    cs_json_fail(error, file, key, "expected a non-empty array, got %s",
                 cJSON_IsArray(a) ? "an empty array" : cs_json_type_name(a));
    return NULL;
  }
  *n = cJSON_GetArraySize(a);
  return a;
}

/* A name not given before in names[0..n-1] (models, devices and nodes each
 * have their own namespace). */
static gboolean check_new_name(const char *name, char *const *names, int n, size_t stride,
                               const char *file, const char *path, GError **error)
{
  for (int i = 0; i < n; i++) {
    const char *other = *(char *const *)((const char *)names + (size_t)i * stride);
    if (strcmp(other, name) == 0) {
      char *p = cs_json_path_key(path, "name");
      cs_json_fail(error, file, p, "expected a name not given before, got \"%s\" again", name);
      g_free(p);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean parse_model(const cJSON *node, CsLlmModel *m, const char *file, const char *path,
                            GError **error)
{
  static const char *const keys[] = { "name", "num_layers", "num_q_heads", "num_kv_heads",
                                      "embedding_dim", "mlp_hidden_dim",
                                      "max_position_embeddings", "use_gated_mlp", "vocab_size",
                                      "post_attn_norm", "no_tensor_parallel", NULL };
  const char *name = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "name", TRUE, &name, file, path, error))
    return FALSE;
  m->name = g_strdup(name);
  /* Bounds far above any model, low enough that every product below
   * (E * E * 3, bytes per token * tokens) stays inside int64. */
  if (!cs_json_read_int(node, "num_layers", TRUE, 1, 100000, &m->num_layers, file, path, error) ||
      !cs_json_read_int(node, "num_q_heads", TRUE, 1, 100000, &m->num_q_heads, file, path,
                        error) ||
      !cs_json_read_int(node, "num_kv_heads", TRUE, 1, 100000, &m->num_kv_heads, file, path,
                        error) ||
      !cs_json_read_int(node, "embedding_dim", TRUE, 1, 1000000, &m->embedding_dim, file, path,
                        error) ||
      !cs_json_read_int(node, "mlp_hidden_dim", TRUE, 1, 10000000, &m->mlp_hidden_dim, file,
                        path, error) ||
      !cs_json_read_int(node, "max_position_embeddings", TRUE, 1, G_MAXINT,
                        &m->max_position_embeddings, file, path, error) ||
      !cs_json_read_int(node, "vocab_size", TRUE, 1, G_MAXINT, &m->vocab_size, file, path,
                        error) ||
      !cs_json_read_bool(node, "use_gated_mlp", TRUE, &m->use_gated_mlp, file, path, error) ||
      !cs_json_read_bool(node, "post_attn_norm", TRUE, &m->post_attn_norm, file, path, error) ||
      !cs_json_read_bool(node, "no_tensor_parallel", TRUE, &m->no_tensor_parallel, file, path,
                         error))
    return FALSE;
  /* head_dim is embedding_dim / num_q_heads: it has to be whole. */
  if (m->embedding_dim % m->num_q_heads != 0) {
    char *p = cs_json_path_key(path, "embedding_dim");
    cs_json_fail(error, file, p, "expected a multiple of num_q_heads (%d), got %d",
                 m->num_q_heads, m->embedding_dim);
    g_free(p);
    return FALSE;
  }
  if (m->num_kv_heads > m->num_q_heads) {
    char *p = cs_json_path_key(path, "num_kv_heads");
    cs_json_fail(error, file, p, "expected at most num_q_heads (%d), got %d", m->num_q_heads,
                 m->num_kv_heads);
    g_free(p);
    return FALSE;
  }
  return TRUE;
}

static gboolean parse_device(const cJSON *node, CsLlmDevice *d, const char *file,
                             const char *path, GError **error)
{
  static const char *const keys[] = { "name", "memory_gib", "fp16_tflops", "price_per_hour",
                                      NULL };
  const char *name = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "name", TRUE, &name, file, path, error))
    return FALSE;
  d->name = g_strdup(name);
  /* A device of more than a million GiB is a typo; the bound keeps bytes
   * inside int64. */
  if (!cs_json_read_double(node, "memory_gib", TRUE, 0, 1e6, &d->memory_gib, file, path,
                           error) ||
      !cs_json_read_double(node, "fp16_tflops", TRUE, 0, G_MAXDOUBLE, &d->fp16_tflops, file,
                           path, error))
    return FALSE;
  /* Optional: a device Vidur gives no price has none, and a cost asked of it is refused
   * where it is asked; a price given must be positive, as a free GPU is a typo. */
  gboolean priced = cJSON_GetObjectItemCaseSensitive(node, "price_per_hour") != NULL;
  if (priced && !cs_json_read_double(node, "price_per_hour", TRUE, 0, G_MAXDOUBLE,
                                     &d->price_per_hour, file, path, error))
    return FALSE;
  const char *zero = !(d->memory_gib > 0) ? "memory_gib"
                     : !(d->fp16_tflops > 0) ? "fp16_tflops"
                     : priced && !(d->price_per_hour > 0) ? "price_per_hour" : NULL;
  if (zero) {
    char *p = cs_json_path_key(path, zero);
    cs_json_fail(error, file, p, "expected a number > 0, got 0");
    g_free(p);
    return FALSE;
  }
  return TRUE;
}

static gboolean parse_node(const cJSON *node, CsLlmNode *n, const CsLlmModelSet *set,
                           const char *file, const char *path, GError **error)
{
  static const char *const keys[] = { "name", "device", "devices_per_node", NULL };
  const char *name = NULL, *device = NULL;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_string(node, "name", TRUE, &name, file, path, error))
    return FALSE;
  n->name = g_strdup(name);
  if (!cs_json_read_string(node, "device", TRUE, &device, file, path, error) ||
      !cs_json_read_int(node, "devices_per_node", TRUE, 1, 1 << 20, &n->devices_per_node, file,
                        path, error))
    return FALSE;
  n->device = cs_llm_models_find_device(set, device, NULL);
  if (!n->device) {
    const char **known = g_new0(const char *, set->n_devices + 1);
    for (int i = 0; i < set->n_devices; i++)
      known[i] = set->devices[i].name;
    char *hint = cs_did_you_mean(device, known, set->n_devices);
    char *p = cs_json_path_key(path, "device");
    cs_json_fail(error, file, p, "expected a device of \"devices\", got \"%s\"%s", device, hint);
    g_free(p);
    g_free(hint);
    g_free(known);
    return FALSE;
  }
  return TRUE;
}

gboolean cs_llm_read_header(const cJSON *root, const char *format, const char *const *keys,
                            const char **source, const char *file, GError **error)
{
  const char *got = NULL;
  int version = 0;
  if (!cs_json_expect_object(root, file, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &got, file, "", error))
    return FALSE;
  if (strcmp(got, format) != 0)
    return cs_json_fail(error, file, "format", "expected \"%s\", got \"%s\"", format, got);
  /* The version before the other fields: a newer file is told apart from
   * one with a misspelt field. */
  if (!cs_json_read_int(root, "version", TRUE, G_MININT, G_MAXINT, &version, file, "", error))
    return FALSE;
  if (version != CS_LLM_FORMAT_VERSION)
    return cs_json_fail(error, file, "version",
                        "unsupported version %d (this build reads version %d)", version,
                        CS_LLM_FORMAT_VERSION);
  return cs_json_check_keys(root, keys, file, "", error) &&
         cs_json_read_string(root, "source", TRUE, source, file, "", error);
}

static CsLlmModelSet *load_root(const cJSON *root, const char *file, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "models", "devices",
                                      "nodes", NULL };
  const char *source = NULL;
  int n_models = 0, n_devices = 0, n_nodes = 0;
  const cJSON *models, *devices, *nodes;
  if (!cs_llm_read_header(root, CS_LLM_MODELS_FORMAT, keys, &source, file, error) ||
      !(models = read_array(root, "models", &n_models, file, error)) ||
      !(devices = read_array(root, "devices", &n_devices, file, error)) ||
      !(nodes = read_array(root, "nodes", &n_nodes, file, error)))
    return NULL;

  CsLlmModelSet *set = g_new0(CsLlmModelSet, 1);
  set->file = g_strdup(file);
  set->source = g_strdup_printf("%s: %s", file, source);
  set->models = g_new0(CsLlmModel, n_models);
  set->devices = g_new0(CsLlmDevice, n_devices);
  set->nodes = g_new0(CsLlmNode, n_nodes);
  const cJSON *item;
  /* Each count grows as an entry is parsed, so that a failure frees the
   * names read so far and nothing else. */
  cJSON_ArrayForEach(item, models)
  {
    char *p = cs_json_path_index("models", set->n_models);
    CsLlmModel *m = &set->models[set->n_models++];
    gboolean ok = parse_model(item, m, file, p, error) &&
                  check_new_name(m->name, &set->models[0].name, set->n_models - 1,
                                 sizeof(CsLlmModel), file, p, error);
    g_free(p);
    if (!ok)
      goto fail;
  }
  cJSON_ArrayForEach(item, devices)
  {
    char *p = cs_json_path_index("devices", set->n_devices);
    CsLlmDevice *d = &set->devices[set->n_devices++];
    gboolean ok = parse_device(item, d, file, p, error) &&
                  check_new_name(d->name, &set->devices[0].name, set->n_devices - 1,
                                 sizeof(CsLlmDevice), file, p, error);
    g_free(p);
    if (!ok)
      goto fail;
  }
  cJSON_ArrayForEach(item, nodes)
  {
    char *p = cs_json_path_index("nodes", set->n_nodes);
    CsLlmNode *n = &set->nodes[set->n_nodes++];
    gboolean ok = parse_node(item, n, set, file, p, error) &&
                  check_new_name(n->name, &set->nodes[0].name, set->n_nodes - 1,
                                 sizeof(CsLlmNode), file, p, error);
    g_free(p);
    if (!ok)
      goto fail;
  }
  return set;
fail:
  cs_llm_models_free(set);
  return NULL;
}

CsLlmModelSet *cs_llm_models_load_data(const char *json, const char *name, GError **error)
{
  g_return_val_if_fail(json != NULL && name != NULL, NULL);
  cJSON *root = cs_json_parse(json, name, error);
  if (!root)
    return NULL;
  CsLlmModelSet *set = load_root(root, name, error);
  cJSON_Delete(root);
  return set;
}

CsLlmModelSet *cs_llm_models_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  char *found = NULL;
  /* A bare name ("models") that is no file here is a data file's name. */
  if (!strchr(path, '/') && !g_file_test(path, G_FILE_TEST_EXISTS)) {
    found = cs_llm_data_find(path, error);
    if (!found)
      return NULL;
  }
  const char *file = found ? found : path;
  cJSON *root = cs_json_load_file(file, error);
  CsLlmModelSet *set = root ? load_root(root, file, error) : NULL;
  cJSON_Delete(root);
  g_free(found);
  return set;
}

const char *cs_llm_models_source(const CsLlmModelSet *set)
{
  g_return_val_if_fail(set != NULL, NULL);
  return set->source;
}

int cs_llm_models_n_models(const CsLlmModelSet *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return set->n_models;
}

const CsLlmModel *cs_llm_models_model(const CsLlmModelSet *set, int i)
{
  g_return_val_if_fail(set != NULL && i >= 0 && i < set->n_models, NULL);
  return &set->models[i];
}

int cs_llm_models_n_devices(const CsLlmModelSet *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return set->n_devices;
}

const CsLlmDevice *cs_llm_models_device(const CsLlmModelSet *set, int i)
{
  g_return_val_if_fail(set != NULL && i >= 0 && i < set->n_devices, NULL);
  return &set->devices[i];
}

int cs_llm_models_n_nodes(const CsLlmModelSet *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return set->n_nodes;
}

const CsLlmNode *cs_llm_models_node(const CsLlmModelSet *set, int i)
{
  g_return_val_if_fail(set != NULL && i >= 0 && i < set->n_nodes, NULL);
  return &set->nodes[i];
}

/* The index of name among n entries of size stride whose first member is
 * the name, or -1 with error set (when error is not NULL) naming what. */
static int find_name(const void *entries, int n, size_t stride, const char *name,
                     const char *what, const char *file, GError **error)
{
  const char **known = g_new0(const char *, n + 1);
  for (int i = 0; i < n; i++) {
    known[i] = *(char *const *)((const char *)entries + (size_t)i * stride);
    if (strcmp(known[i], name) == 0) {
      g_free(known);
      return i;
    }
  }
  if (error) {
    char *hint = cs_did_you_mean(name, known, n);
    if (*hint) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: no %s \"%s\"%s", file,
                  what, name, hint);
    } else {
      char *list = g_strjoinv("\", \"", (char **)known);
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "%s: no %s \"%s\" (known: \"%s\")", file, what, name, list);
      g_free(list);
    }
    g_free(hint);
  }
  g_free(known);
  return -1;
}

const CsLlmModel *cs_llm_models_find_model(const CsLlmModelSet *set, const char *name,
                                           GError **error)
{
  g_return_val_if_fail(set != NULL && name != NULL, NULL);
  int i = find_name(set->models, set->n_models, sizeof(CsLlmModel), name, "model", set->file,
                    error);
  return i < 0 ? NULL : &set->models[i];
}

const CsLlmDevice *cs_llm_models_find_device(const CsLlmModelSet *set, const char *name,
                                             GError **error)
{
  g_return_val_if_fail(set != NULL && name != NULL, NULL);
  int i = find_name(set->devices, set->n_devices, sizeof(CsLlmDevice), name, "device",
                    set->file, error);
  return i < 0 ? NULL : &set->devices[i];
}

const CsLlmNode *cs_llm_models_find_node(const CsLlmModelSet *set, const char *name,
                                         GError **error)
{
  g_return_val_if_fail(set != NULL && name != NULL, NULL);
  int i = find_name(set->nodes, set->n_nodes, sizeof(CsLlmNode), name, "node type", set->file,
                    error);
  return i < 0 ? NULL : &set->nodes[i];
}

/* ---- The memory plan ----------------------------------------------------- */

void cs_llm_plan_config_init(CsLlmPlanConfig *cfg)
{
  g_return_if_fail(cfg != NULL);
  *cfg = (CsLlmPlanConfig){ .tp = 1, .pp = 1, .max_tokens = CS_LLM_MAX_TOKENS,
                            .block_size = CS_LLM_BLOCK_SIZE,
                            .memory_margin = CS_LLM_MEMORY_MARGIN };
}

static gboolean plan_fail(GError **error, const CsLlmModel *m, const CsLlmPlanConfig *cfg,
                          const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean plan_fail(GError **error, const CsLlmModel *m, const CsLlmPlanConfig *cfg,
                          const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s at TP%d PP%d: %s", m->name,
              cfg->tp, cfg->pp, why);
  g_free(why);
  return FALSE;
}

int64_t cs_llm_params_per_device(const CsLlmModel *m, int tp, int pp)
{
  int64_t e = m->embedding_dim, hd = e / m->num_q_heads;
  int64_t q = m->num_q_heads / tp, kv = (m->num_kv_heads + tp - 1) / tp;
  int64_t per_layer = e * hd * (q + 2 * kv) + e * hd * q +
                      (m->use_gated_mlp ? 3 : 2) * e * m->mlp_hidden_dim / tp;
  return per_layer * (m->num_layers / pp);
}

gboolean cs_llm_plan(const CsLlmModel *m, const CsLlmDevice *d, const CsLlmPlanConfig *cfg,
                     CsLlmPlan *out, GError **error)
{
  g_return_val_if_fail(m != NULL && d != NULL && cfg != NULL && out != NULL, FALSE);
  if (cfg->tp < 1 || cfg->pp < 1 || cfg->max_tokens < 1 || cfg->block_size < 1 ||
      !(cfg->memory_margin >= 0 && cfg->memory_margin < 1))
    return plan_fail(error, m, cfg,
                     "expected TP >= 1, PP >= 1, max_tokens >= 1, block_size >= 1 and a memory "
                     "margin in [0, 1), got max_tokens %d, block_size %d, margin %g",
                     cfg->max_tokens, cfg->block_size, cfg->memory_margin);
  if (m->no_tensor_parallel && cfg->tp > 1)
    return plan_fail(error, m, cfg, "the model cannot be split by tensor parallelism "
                                    "(no_tensor_parallel): expected TP 1");
  /* Vidur asserts these: a shard holds whole query heads and an equal part
   * of the hidden vector, a stage whole layers. */
  if (m->num_q_heads % cfg->tp != 0 || m->embedding_dim % cfg->tp != 0)
    return plan_fail(error, m, cfg,
                     "expected TP to divide num_q_heads (%d) and embedding_dim (%d)",
                     m->num_q_heads, m->embedding_dim);
  if (m->num_layers % cfg->pp != 0)
    return plan_fail(error, m, cfg, "expected PP to divide num_layers (%d)", m->num_layers);

  CsLlmPlan p = { 0 };
  p.head_dim = m->embedding_dim / m->num_q_heads;
  p.q_heads_per_device = m->num_q_heads / cfg->tp;
  p.kv_heads_per_device = (m->num_kv_heads + cfg->tp - 1) / cfg->tp;
  p.layers_per_stage = m->num_layers / cfg->pp;
  int64_t hd = p.head_dim;
  p.params_per_device = cs_llm_params_per_device(m, cfg->tp, cfg->pp);
  p.weight_bytes = 2 * p.params_per_device;
  p.kv_bytes_per_token = 2 * 2 * hd * p.kv_heads_per_device * (int64_t)m->num_layers;
  p.kv_bytes_per_request = p.kv_bytes_per_token * cfg->max_tokens;
  /* In double, in Vidur's order: memory * 1024^3 * (1 - margin). */
  p.usable_bytes = d->memory_gib * 1073741824.0 * (1.0 - cfg->memory_margin);
  p.kv_memory_bytes = p.usable_bytes - (double)p.weight_bytes;
  double batch = floor(p.kv_memory_bytes / (double)p.kv_bytes_per_request);
  if (!(batch >= 1))
    return plan_fail(error, m, cfg,
                     "does not fit on %s (%g GiB): the weights take %" G_GINT64_FORMAT
                     " bytes per device of %.0f usable (%g %% of the memory), and one request "
                     "of %d tokens needs %" G_GINT64_FORMAT " bytes of KV cache beside them",
                     d->name, d->memory_gib, (gint64)p.weight_bytes, p.usable_bytes,
                     100 * (1 - cfg->memory_margin), cfg->max_tokens,
                     (gint64)p.kv_bytes_per_request);
  p.max_batch_size = (int64_t)batch;
  p.max_request_slots = p.max_batch_size * cfg->pp;
  p.max_blocks_per_request = cfg->max_tokens / cfg->block_size;
  p.num_blocks = p.max_blocks_per_request * p.max_request_slots;
  *out = p;
  return TRUE;
}

/* ---- Data files ---------------------------------------------------------- */

char *cs_llm_data_find(const char *rel, GError **error)
{
  g_return_val_if_fail(rel != NULL, NULL);
  char *p = cs_data_file_find("llm", rel);
  if (!p)
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                "%s: not found in the data directories' llm/ (set CLUSTERSIM_DATA_DIR to add "
                "one)",
                rel);
  return p;
}

char *cs_llm_ops_rel_path(const char *gpu, const char *model)
{
  g_return_val_if_fail(gpu != NULL && model != NULL, NULL);
  char **parts = g_strsplit(model, "/", -1);
  char *flat = g_strjoinv("__", parts);
  char *rel = g_strdup_printf("ops/%s/%s.json", gpu, flat);
  g_strfreev(parts);
  g_free(flat);
  return rel;
}
