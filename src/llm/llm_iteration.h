/* The time of one iteration of an LLM replica: a batch of tokens through
 * one pipeline stage, composed from the per-layer operator tables and the
 * collective curves as Vidur composes it (docs/research/vidur.md section 3).
 *
 * With N the batch's tokens in all (prompt-chunk tokens plus one per
 * decoding request) and N8 = N rounded up to a multiple of 8, one layer of
 * one stage takes, in ms:
 *
 *   input_layernorm(N8) + attn_pre_proj(N8) + attn_rope(N8) + attention
 *   + attn_post_proj(N8) + AR
 *   + post_attention_layernorm(N8)      (only when the model has post_attn_norm)
 *   + mlp_up_proj(N8) + mlp_act(N8) + mlp_down_proj(N8) + AR
 *   + add(N8)
 *
 *   AR = all_reduce(N8 * embedding_dim * 2 bytes) + 0.02 ms   when TP > 1, else 0
 *
 * the all-reduce curve being the node's of TP workers with TP devices per
 * node (TP inside one node, as Vidur selects it), 0.02 ms Vidur's NCCL CPU
 * launch overhead (its per-device skew term defaults to 0 and is left out).
 * A stage runs num_layers / PP layers, and every stage but the last adds
 * the send of its activations to the next, send_recv(N8 * embedding_dim * 2
 * bytes): the node's curve of 2 workers with 2 devices per node when the
 * replica's TP * PP devices fit in one node, else with 1 device per node
 * (the pair across nodes). That is what Vidur does per stage; it also
 * requires TP * PP to be below the node's device count or a multiple of it,
 * and so does cs_llm_exec_new. The embedding, the LM head and sampling are
 * not timed, as in Vidur; CPU overheads are 0 (Vidur's default).
 *
 * Attention, once per layer, is Vidur's attn_prefill + attn_decode +
 * attn_kv_cache_save (the save 0 with its shipped data). Two entry points:
 * cs_llm_exec_stage_time takes it from the caller as ms per layer, with the
 * batch as a token count; cs_llm_exec_batch_time takes the batch's requests
 * and derives both N and attention from them, attention from the
 * replica's attention table (llm_attention.h: Vidur's aggregation of the
 * decodes into one lookup and of the prefills into another).
 *
 * Lookups are linear between profiled points (llm_ops.h); an N8 beyond the
 * operator grid or a message beyond a curve is an error, as a lookup beyond
 * Vidur's prediction grid is.
 */
#ifndef CS_LLM_ITERATION_H
#define CS_LLM_ITERATION_H

#include <glib.h>
#include <stdint.h>

#include "llm_attention.h"
#include "llm_model.h"
#include "llm_ops.h"

G_BEGIN_DECLS

/* Vidur's nccl_cpu_launch_overhead_ms, added to every all-reduce. */
#define CS_LLM_NCCL_LAUNCH_MS 0.02

/* What an execution model is built from; nothing is copied, so each must
 * outlive it. */
typedef struct {
  const CsLlmModel *model;
  const CsLlmOps *ops;                 /* profiled for model, with degree tp */
  const CsLlmCollectives *collectives; /* the node type's; may be NULL when tp == pp == 1 */
  int devices_per_node;                /* of the node type, >= 1 */
  int tp;                              /* >= 1 */
  int pp;                              /* >= 1, dividing the model's layers */
  const CsLlmAttention *attention;     /* the model's at degree tp; may be NULL, then only
                                          cs_llm_exec_stage_time can time a batch */
} CsLlmExecConfig;

typedef struct CsLlmExec CsLlmExec;

/* Builds the execution model of one replica. Returns it (cs_llm_exec_free)
 * or NULL with error set (CS_INPUT_ERROR_INVALID) when tp, pp or
 * devices_per_node is out of range or PP does not divide the layers, TP * PP
 * is neither below devices_per_node nor a multiple of it, the operator
 * table is not the model's (cs_llm_ops_check_model) or lacks degree tp, or
 * a curve the replica needs is missing (all_reduce of tp workers on tp per
 * node for TP > 1, send_recv of 2 workers for PP > 1), or the attention
 * table, when given, is not the model's at degree tp
 * (cs_llm_attention_check); each message names the file. */
CsLlmExec *cs_llm_exec_new(const CsLlmExecConfig *cfg, GError **error);

void cs_llm_exec_free(CsLlmExec *x);

/* The largest batch in tokens the tables can time (the operator grid's
 * last point: N8 must not exceed it). */
int64_t cs_llm_exec_max_tokens(const CsLlmExec *x);

/* One stage's time for one batch, split by what it is spent on. Every
 * field is a total over the stage's layers, in ms. */
typedef struct {
  int64_t num_tokens;          /* N as given */
  int64_t num_tokens_rounded;  /* N8 */
  int layers;                  /* num_layers / PP */
  double op_ms[CS_LLM_N_OPS];  /* each operator times layers (post_attention_layernorm 0
                                  without post_attn_norm) */
  double attention_ms;         /* the per-layer attention times layers */
  double all_reduce_ms;        /* 2 per layer, launch overhead included; 0 at TP 1 */
  double send_recv_ms;         /* 0 on the last stage */
  double total_ms;             /* the sum of all the above */
} CsLlmStageTime;

/* The time of a batch of num_tokens (>= 1) tokens through pipeline stage
 * stage (0 <= stage < PP), with attention_ms (>= 0, finite) the caller's
 * attention time per layer. Returns TRUE with *out filled, or FALSE with
 * error set (CS_INPUT_ERROR_INVALID) when an argument is out of range or N8
 * or its message size lies outside a table's profiled range (the message
 * names the file and the range). */
gboolean cs_llm_exec_stage_time(const CsLlmExec *x, int64_t num_tokens, double attention_ms,
                                int stage, CsLlmStageTime *out, GError **error);

/* The time of a batch given by its n requests (llm_attention.h) through
 * stage stage: N is the sum of their num_tokens, attention per layer is
 * cs_llm_attention_batch on the replica's attention table, the rest as
 * cs_llm_exec_stage_time. Returns TRUE with *out filled (its attention_ms
 * that attention times the stage's layers) and, when attention is not NULL,
 * *attention the per-layer detail; or FALSE with error set
 * (CS_INPUT_ERROR_INVALID) when the replica has no attention table, or
 * cs_llm_attention_batch or cs_llm_exec_stage_time fails (their
 * messages). */
gboolean cs_llm_exec_batch_time(const CsLlmExec *x, const CsLlmBatchRequest *reqs, int n,
                                int stage, CsLlmStageTime *out, CsLlmBatchAttention *attention,
                                GError **error);

/* The floating-point operations one device does for a batch of n requests
 * through one pipeline stage, as Vidur's MFU calculator counts them
 * (vidur/utils/mfu_calculator.py): 2 x the batch's tokens x the device's
 * parameters (cs_llm_params_per_device), plus per request 4 x layers per
 * stage x q heads per device x head_dim x its tokens x (its tokens + its
 * processed tokens). */
double cs_llm_exec_batch_flops(const CsLlmExec *x, const CsLlmBatchRequest *reqs, int n);

G_END_DECLS

#endif
