/* Profiled operator and collective times of LLM inference (issue 38):
 * the tables converted from Vidur's profiling data (data/llm/, formats in
 * data/llm/README.md).
 *
 * An operator table (format "clustersim-llm-ops") holds, for one GPU type
 * and one model, per tensor-parallel degree TP, a grid of batch sizes in
 * tokens (num_tokens, ascending) and the median time in ms of each of the
 * nine per-layer operators on one TP shard at each grid point. A
 * collectives table (format "clustersim-llm-collectives") holds, for one
 * node type, curves of the median time in ms of a collective (all_reduce,
 * send_recv) over its message size in bytes, one per (collective,
 * num_workers, devices_per_node).
 *
 * Lookup between grid points is linear: the time at N is interpolated
 * between the two profiled points around N, exact at a profiled point.
 * Vidur instead fits one random forest per operator to the same medians and
 * predicts it once on every integer N up front; a forest is piecewise
 * constant, so its values step between profiled points and need not equal
 * them at a point. Beyond the profiled range, either end, a lookup is an
 * error, not an extrapolation: Vidur's prediction grid ends at the
 * profiled maximum (4096 tokens) and its lookup raises there too.
 *
 * Attention (prefill and decode) and the KV-cache save are not here: they
 * have their own table and lookup (llm_attention.h).
 *
 * Loading checks everything once, so a lookup fails only on a size outside
 * the profiled range. Tables are immutable once loaded; nothing is global.
 */
#ifndef CS_LLM_OPS_H
#define CS_LLM_OPS_H

#include <glib.h>
#include <stdint.h>

#include "llm_model.h"

G_BEGIN_DECLS

#define CS_LLM_OPS_FORMAT "clustersim-llm-ops"
#define CS_LLM_COLLECTIVES_FORMAT "clustersim-llm-collectives"

/* The per-layer operators, in the order of one transformer layer. */
typedef enum {
  CS_LLM_OP_INPUT_LAYERNORM = 0,
  CS_LLM_OP_ATTN_PRE_PROJ,            /* the fused QKV projection */
  CS_LLM_OP_ATTN_ROPE,
  CS_LLM_OP_ATTN_POST_PROJ,           /* the attention output projection */
  CS_LLM_OP_POST_ATTENTION_LAYERNORM,
  CS_LLM_OP_MLP_UP_PROJ,              /* gate and up projections when gated */
  CS_LLM_OP_MLP_ACT,
  CS_LLM_OP_MLP_DOWN_PROJ,
  CS_LLM_OP_ADD,                      /* the residual add, counted once per layer */
  CS_LLM_N_OPS
} CsLlmOp;

/* The op's name in the files ("input_layernorm", ...); NULL out of range. */
const char *cs_llm_op_name(CsLlmOp op);

typedef struct CsLlmOps CsLlmOps;

/* Loads an operator table. Returns it (cs_llm_ops_free) or NULL with error
 * set (CS_INPUT_ERROR) when the file cannot be read, is not JSON, or is not
 * a valid table of version 1. Each problem names the file and the field's
 * JSON path, e.g. "tensor_parallel[1].median_ms.attn_rope[7]", with what
 * was expected: "ops" naming each of the nine known ops once; per TP entry
 * a tp >= 1 not given before, num_tokens integers >= 1 strictly ascending,
 * and median_ms with exactly the ops of "ops", each an array of the length
 * of num_tokens of finite numbers > 0. */
CsLlmOps *cs_llm_ops_load(const char *path, GError **error);

/* The same from text in memory; name is the file name used in messages. */
CsLlmOps *cs_llm_ops_load_data(const char *json, const char *name, GError **error);

void cs_llm_ops_free(CsLlmOps *ops);

/* The table's file name (as given), "gpu", "model" and "FILE: SOURCE". */
const char *cs_llm_ops_file(const CsLlmOps *ops);
const char *cs_llm_ops_gpu(const CsLlmOps *ops);
const char *cs_llm_ops_model(const CsLlmOps *ops);
const char *cs_llm_ops_source(const CsLlmOps *ops);

/* TRUE when the table has entries for tensor-parallel degree tp. */
gboolean cs_llm_ops_has_tp(const CsLlmOps *ops, int tp);

/* The largest profiled num_tokens of degree tp, or 0 without that degree. */
int64_t cs_llm_ops_max_tokens(const CsLlmOps *ops, int tp);

/* Checks that the table was profiled for model m: its "model" is m's name
 * and its model_shape (n_head, n_kv_head, n_embd, n_expanded_embd,
 * vocab_size, use_gated_mlp) equals m's fields, the columns on which Vidur
 * selects the profiled rows. Returns FALSE with error set
 * (CS_INPUT_ERROR_INVALID) naming the file, the field and both values. */
gboolean cs_llm_ops_check_model(const CsLlmOps *ops, const CsLlmModel *m, GError **error);

/* The time in ms of op on one shard of degree tp for a batch of num_tokens
 * tokens, linear between the grid points around it (exact at one). Returns
 * TRUE with *out_ms set, or FALSE with error set (CS_INPUT_ERROR_INVALID)
 * naming the file when the table has no degree tp or num_tokens lies
 * outside its profiled grid (giving the grid's range). */
gboolean cs_llm_ops_time_ms(const CsLlmOps *ops, int tp, CsLlmOp op, int64_t num_tokens,
                            double *out_ms, GError **error);

/* ---- Collectives ---------------------------------------------------------- */

typedef struct CsLlmCollectives CsLlmCollectives;
typedef struct CsLlmCurve CsLlmCurve;

/* Loads a collectives table. Returns it (cs_llm_collectives_free) or NULL
 * with error set (CS_INPUT_ERROR) when the file cannot be read, is not JSON
 * or is not valid: per curve a known collective ("all_reduce" or
 * "send_recv"), num_workers >= 2, devices_per_node >= 1, a triple not given
 * before, size_bytes integers >= 1 strictly ascending and median_ms of the
 * same length, finite numbers > 0; each problem with its JSON path. */
CsLlmCollectives *cs_llm_collectives_load(const char *path, GError **error);
CsLlmCollectives *cs_llm_collectives_load_data(const char *json, const char *name,
                                               GError **error);
void cs_llm_collectives_free(CsLlmCollectives *c);

const char *cs_llm_collectives_file(const CsLlmCollectives *c);
const char *cs_llm_collectives_node(const CsLlmCollectives *c);
const char *cs_llm_collectives_source(const CsLlmCollectives *c);

/* The curve of that collective, worker count and devices per node (owned by
 * the table), or NULL with error set (CS_INPUT_ERROR_INVALID, when error is
 * not NULL) naming the file and listing the triples it has. */
const CsLlmCurve *cs_llm_collectives_find(const CsLlmCollectives *c, const char *collective,
                                          int num_workers, int devices_per_node,
                                          GError **error);

/* The time in ms of the curve's collective on a message of bytes bytes,
 * linear between the profiled sizes around it (exact at one). Returns TRUE
 * with *out_ms set, or FALSE with error set (CS_INPUT_ERROR_INVALID) naming
 * the file and the curve when bytes lies outside the profiled sizes. */
gboolean cs_llm_curve_time_ms(const CsLlmCurve *curve, int64_t bytes, double *out_ms,
                              GError **error);

G_END_DECLS

#endif
