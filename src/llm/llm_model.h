/* LLM model and device configurations, and the memory plan of one replica:
 * how much of a device the weights take and how many requests' KV cache fit
 * in the rest (issue 38, docs/research/vidur.md section 2).
 *
 * A models file (format "clustersim-llm-models", data/llm/models.json) lists
 * models (the shape of a decoder-only transformer), devices (memory and
 * peak fp16 throughput) and node types (a device and how many of it one node
 * holds). Every number is checked on loading; a bad entry is an error naming
 * the file, the JSON path and what was expected.
 *
 * The memory plan follows Vidur's memory planner and parameter counter, so
 * that a replica admits as many requests here as it does there:
 *
 *   head_dim           = embedding_dim / num_q_heads
 *   q per device       = num_q_heads / TP, kv per device = ceil(num_kv_heads / TP)
 *   params per layer   = E * head_dim * (q + 2 kv) + E * head_dim * q
 *                        + (3 if gated MLP else 2) * E * mlp_hidden_dim / TP (integer division)
 *   weight bytes       = 2 * params per layer * num_layers / PP     (fp16; embedding,
 *                        LM head and norms are not counted, as in Vidur)
 *   KV bytes per token = 2 (fp16) * 2 (K and V) * head_dim * kv * num_layers
 *   usable bytes       = memory_gib * 1024^3 * (1 - 0.1)             (a 10 % margin)
 *   KV memory          = usable bytes - weight bytes
 *   max_batch_size     = floor(KV memory / (KV bytes per token * max_tokens))
 *   request slots      = max_batch_size * PP
 *   num_blocks         = (max_tokens / block_size) * request slots
 *
 * Pipeline parallelism: the weights count the layers of one stage (L / PP),
 * but the KV bytes per token count all L layers, as Vidur's planner does.
 * A device of stage s holds the KV cache of its L / PP layers for every
 * request in flight on the replica, so the true capacity is
 * KV memory / (KV bytes per token / PP * max_tokens) requests; Vidur's
 * max_batch_size (all layers) times PP request slots is that number up to
 * the floor's rounding (it rounds down before multiplying by PP). We keep
 * Vidur's order of rounding so that its numbers are reproduced exactly
 * (Llama-2-70B TP4-PP2 on 80 GB: 179 per stage, 358 slots, 91,648 blocks).
 * max_batch_size is also what Vidur's schedulers take as the batch limit
 * (before its batch_size_cap), per stage.
 *
 * Nothing here is global; a set is immutable once loaded.
 */
#ifndef CS_LLM_MODEL_H
#define CS_LLM_MODEL_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The "format" and the only "version" a models file may declare. */
#define CS_LLM_MODELS_FORMAT "clustersim-llm-models"
#define CS_LLM_FORMAT_VERSION 1

/* The header every data/llm file shares: root an object whose "format" is
 * format and "version" CS_LLM_FORMAT_VERSION (checked before the other
 * keys, so that a newer file is told apart from a misspelt field), whose
 * keys are all in keys (NULL-terminated) and which has a string "source"
 * (*source points into root). FALSE with error set naming file and field
 * otherwise. */
struct cJSON;
gboolean cs_llm_read_header(const struct cJSON *root, const char *format, const char *const *keys,
                            const char **source, const char *file, GError **error);

/* Vidur's defaults (vidur/config/config.py): the memory margin, the KV
 * block size of its schedulers and the request generator's max_tokens. */
#define CS_LLM_MEMORY_MARGIN 0.1
#define CS_LLM_BLOCK_SIZE 16
#define CS_LLM_MAX_TOKENS 4096

typedef struct {
  char *name;                  /* Hugging Face name, "meta-llama/Llama-2-7b-hf" */
  int num_layers;
  int num_q_heads;
  int num_kv_heads;            /* < num_q_heads: grouped-query attention */
  int embedding_dim;           /* a multiple of num_q_heads */
  int mlp_hidden_dim;
  int max_position_embeddings;
  int vocab_size;
  gboolean use_gated_mlp;      /* gate and up projections: three MLP matrices, not two */
  gboolean post_attn_norm;     /* a norm after attention (timed as post_attention_layernorm) */
  gboolean no_tensor_parallel; /* the model cannot be split by tensor parallelism */
} CsLlmModel;

typedef struct {
  char *name;                  /* "a100" */
  double memory_gib;           /* device memory, GiB (Vidur's total_memory_gb) */
  double fp16_tflops;          /* peak fp16 throughput; informational */
  double price_per_hour;       /* $ per device hour (Vidur's GPU_COSTS), for the cost of a
                                * deployment; 0 when the file gives none */
} CsLlmDevice;

typedef struct {
  char *name;                  /* "a100_pairwise_nvlink" */
  const CsLlmDevice *device;   /* in the same set */
  int devices_per_node;
} CsLlmNode;

typedef struct CsLlmModelSet CsLlmModelSet;

/* Loads a models file. path is a file, or a bare name ("models") looked up
 * in the data directories' llm/ (common/data_files.h) when no such file
 * exists. Returns a new set (cs_llm_models_free) or NULL with error set
 * (CS_INPUT_ERROR) when the file cannot be found or read, is not JSON, or is
 * not a valid models file of version 1: a missing or ill-typed field, a
 * number out of range, embedding_dim not a multiple of num_q_heads, more KV
 * heads than query heads, a name given twice, a node naming an unknown
 * device. */
CsLlmModelSet *cs_llm_models_load(const char *path, GError **error);

/* The same from text in memory; name is the file name used in messages. */
CsLlmModelSet *cs_llm_models_load_data(const char *json, const char *name, GError **error);

/* Frees the set. Accepts NULL. */
void cs_llm_models_free(CsLlmModelSet *set);

/* Provenance: "FILE: SOURCE" (the file's "source" field). Owned by the set. */
const char *cs_llm_models_source(const CsLlmModelSet *set);

/* Counts and entries in file order (0 <= i < count). */
int cs_llm_models_n_models(const CsLlmModelSet *set);
const CsLlmModel *cs_llm_models_model(const CsLlmModelSet *set, int i);
int cs_llm_models_n_devices(const CsLlmModelSet *set);
const CsLlmDevice *cs_llm_models_device(const CsLlmModelSet *set, int i);
int cs_llm_models_n_nodes(const CsLlmModelSet *set);
const CsLlmNode *cs_llm_models_node(const CsLlmModelSet *set, int i);

/* The entry of that exact name. Each returns it (owned by the set), or NULL
 * with error set (CS_INPUT_ERROR_INVALID) naming the file, the name, the
 * closest known names and, without a close one, all of them. error may be
 * NULL for a plain lookup. */
const CsLlmModel *cs_llm_models_find_model(const CsLlmModelSet *set, const char *name,
                                           GError **error);
const CsLlmDevice *cs_llm_models_find_device(const CsLlmModelSet *set, const char *name,
                                             GError **error);
const CsLlmNode *cs_llm_models_find_node(const CsLlmModelSet *set, const char *name,
                                         GError **error);

/* What a memory plan is asked for. */
typedef struct {
  int tp;              /* tensor-parallel degree, >= 1 */
  int pp;              /* pipeline stages, >= 1 */
  int max_tokens;      /* tokens of the longest request (prompt and output), >= 1 */
  int block_size;      /* tokens per KV block, >= 1 */
  double memory_margin; /* fraction of device memory kept free, in [0, 1) */
} CsLlmPlanConfig;

/* Fills cfg with TP 1, PP 1 and Vidur's defaults above. */
void cs_llm_plan_config_init(CsLlmPlanConfig *cfg);

/* The memory plan of one device of a replica (see the top of this file). */
typedef struct {
  int head_dim;
  int q_heads_per_device;
  int kv_heads_per_device;
  int layers_per_stage;
  int64_t params_per_device;
  int64_t weight_bytes;        /* per device */
  int64_t kv_bytes_per_token;  /* per device, all layers (Vidur's count, above) */
  int64_t kv_bytes_per_request; /* kv_bytes_per_token * max_tokens */
  double usable_bytes;         /* memory * (1 - margin), as a double like Vidur's */
  double kv_memory_bytes;      /* usable_bytes - weight_bytes, > 0 */
  int64_t max_batch_size;      /* requests per stage, >= 1 */
  int64_t max_request_slots;   /* max_batch_size * PP */
  int64_t max_blocks_per_request; /* max_tokens / block_size (integer division) */
  int64_t num_blocks;          /* max_blocks_per_request * max_request_slots */
} CsLlmPlan;

/* The parameters one device of a replica holds at degrees tp and pp (the
 * "params per layer" above times num_layers / pp); tp and pp must divide
 * the model as cs_llm_plan requires. */
int64_t cs_llm_params_per_device(const CsLlmModel *m, int tp, int pp);

/* Plans model m on device d. Returns TRUE with *out filled, or FALSE with
 * error set (CS_INPUT_ERROR_INVALID) when cfg is out of range, the model
 * cannot be split that way (TP > 1 for a no_tensor_parallel model; TP not
 * dividing num_q_heads or embedding_dim; PP not dividing num_layers: Vidur
 * asserts each), or when the model does not fit: not one request of
 * max_tokens fits beside the weights. That message names the model, the
 * device, TP and PP, the weight bytes per device, the usable bytes and the
 * KV bytes one request needs. */
gboolean cs_llm_plan(const CsLlmModel *m, const CsLlmDevice *d, const CsLlmPlanConfig *cfg,
                     CsLlmPlan *out, GError **error);

/* The path of data/llm/REL in the first data directory that has it (REL
 * such as "ops/a100/meta-llama__Llama-2-7b-hf.json"), or NULL with error set
 * (CS_INPUT_ERROR_IO) naming REL and where it was looked for. g_free it. */
char *cs_llm_data_find(const char *rel, GError **error);

/* The data-directory name of a model's operator table for gpu:
 * "ops/GPU/MODEL.json", each "/" of the model name written "__". g_free it. */
char *cs_llm_ops_rel_path(const char *gpu, const char *model);

G_END_DECLS

#endif
