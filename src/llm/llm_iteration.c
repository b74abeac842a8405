/* The time of one iteration through one stage; see llm_iteration.h. */
#include "llm_iteration.h"

#include <math.h>

#include "common/json_input.h"

struct CsLlmExec {
  CsLlmExecConfig cfg;
  const CsLlmCurve *all_reduce; /* NULL at TP 1 */
  const CsLlmCurve *send_recv;  /* NULL at PP 1 */
  int layers;                   /* per stage */
};

void cs_llm_exec_free(CsLlmExec *x)
{
  g_free(x);
}

CsLlmExec *cs_llm_exec_new(const CsLlmExecConfig *cfg, GError **error)
{
  g_return_val_if_fail(cfg != NULL && cfg->model != NULL && cfg->ops != NULL, NULL);
  const CsLlmModel *m = cfg->model;
  if (cfg->tp < 1 || cfg->pp < 1 || cfg->devices_per_node < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: expected TP >= 1, PP >= 1 and devices per node >= 1, got TP%d PP%d on %d",
                m->name, cfg->tp, cfg->pp, cfg->devices_per_node);
    return NULL;
  }
  if (m->num_layers % cfg->pp != 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s at TP%d PP%d: expected PP to divide num_layers (%d)", m->name, cfg->tp,
                cfg->pp, m->num_layers);
    return NULL;
  }
  /* Vidur's condition: a replica either fits in part of one node or fills
   * whole nodes, so a stage's pair is either inside a node or across two. */
  int workers = cfg->tp * cfg->pp;
  if (!(workers < cfg->devices_per_node || workers % cfg->devices_per_node == 0)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s at TP%d PP%d: %d devices on nodes of %d: expected fewer than a node's "
                "devices or a multiple of them",
                m->name, cfg->tp, cfg->pp, workers, cfg->devices_per_node);
    return NULL;
  }
  if (!cs_llm_ops_check_model(cfg->ops, m, error))
    return NULL;
  if (cfg->attention && !cs_llm_attention_check(cfg->attention, m, cfg->tp, error))
    return NULL;
  if (!cs_llm_ops_has_tp(cfg->ops, cfg->tp)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: no entry of tensor_parallel has tp %d (needed for %s at TP%d)",
                cs_llm_ops_file(cfg->ops), cfg->tp, m->name, cfg->tp);
    return NULL;
  }
  if ((cfg->tp > 1 || cfg->pp > 1) && !cfg->collectives) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s at TP%d PP%d: a collectives table is needed beyond one device", m->name,
                cfg->tp, cfg->pp);
    return NULL;
  }
  CsLlmExec *x = g_new0(CsLlmExec, 1);
  x->cfg = *cfg;
  x->layers = m->num_layers / cfg->pp;
  if (cfg->tp > 1) {
    x->all_reduce = cs_llm_collectives_find(cfg->collectives, "all_reduce", cfg->tp, cfg->tp,
                                            error);
    if (!x->all_reduce)
      goto fail;
  }
  if (cfg->pp > 1) {
    int per_node = workers > cfg->devices_per_node ? 1 : 2;
    x->send_recv = cs_llm_collectives_find(cfg->collectives, "send_recv", 2, per_node, error);
    if (!x->send_recv)
      goto fail;
  }
  return x;
fail:
  g_free(x);
  return NULL;
}

int64_t cs_llm_exec_max_tokens(const CsLlmExec *x)
{
  g_return_val_if_fail(x != NULL, 0);
  return cs_llm_ops_max_tokens(x->cfg.ops, x->cfg.tp);
}

gboolean cs_llm_exec_stage_time(const CsLlmExec *x, int64_t num_tokens, double attention_ms,
                                int stage, CsLlmStageTime *out, GError **error)
{
  g_return_val_if_fail(x != NULL && out != NULL, FALSE);
  const CsLlmModel *m = x->cfg.model;
  /* The ceiling keeps N8 (and N8 * embedding_dim * 2) inside int64. */
  if (num_tokens < 1 || num_tokens > (INT64_C(1) << 40) || !(attention_ms >= 0) ||
      !isfinite(attention_ms) || stage < 0 || stage >= x->cfg.pp) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: expected a batch of 1 to 2^40 tokens, an attention time >= 0 ms and a "
                "stage of 0 to %d, got %" G_GINT64_FORMAT " tokens, %g ms, stage %d",
                m->name, x->cfg.pp - 1, (gint64)num_tokens, attention_ms, stage);
    return FALSE;
  }
  CsLlmStageTime t = { .num_tokens = num_tokens, .layers = x->layers };
  t.num_tokens_rounded = (num_tokens + 7) / 8 * 8;
  /* Said for the batch, not for the first op that would fail. */
  int64_t max = cs_llm_ops_max_tokens(x->cfg.ops, x->cfg.tp);
  if (t.num_tokens_rounded > max) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: a batch of %" G_GINT64_FORMAT " tokens, timed as %" G_GINT64_FORMAT
                " (a multiple of 8), is beyond the %" G_GINT64_FORMAT
                " tokens profiled at TP%d (no extrapolation)",
                cs_llm_ops_file(x->cfg.ops), (gint64)num_tokens,
                (gint64)t.num_tokens_rounded, (gint64)max, x->cfg.tp);
    return FALSE;
  }
  double layer_ms = attention_ms;
  for (int k = 0; k < CS_LLM_N_OPS; k++) {
    double ms = 0;
    if (k == CS_LLM_OP_POST_ATTENTION_LAYERNORM && !m->post_attn_norm) {
      t.op_ms[k] = 0;
      continue;
    }
    if (!cs_llm_ops_time_ms(x->cfg.ops, x->cfg.tp, (CsLlmOp)k, t.num_tokens_rounded, &ms, error))
      return FALSE;
    t.op_ms[k] = ms * x->layers;
    layer_ms += ms;
  }
  /* A token's activations: embedding_dim fp16 values. */
  int64_t bytes = t.num_tokens_rounded * m->embedding_dim * 2;
  if (x->all_reduce) {
    double ms = 0;
    if (!cs_llm_curve_time_ms(x->all_reduce, bytes, &ms, error))
      return FALSE;
    /* After attention and after the MLP. */
    double ar = 2 * (ms + CS_LLM_NCCL_LAUNCH_MS);
    t.all_reduce_ms = ar * x->layers;
    layer_ms += ar;
  }
  if (x->send_recv && stage < x->cfg.pp - 1 &&
      !cs_llm_curve_time_ms(x->send_recv, bytes, &t.send_recv_ms, error))
    return FALSE;
  t.attention_ms = attention_ms * x->layers;
  /* Vidur multiplies the layer's sum by the layers, then adds the send. */
  t.total_ms = layer_ms * x->layers + t.send_recv_ms;
  *out = t;
  return TRUE;
}

gboolean cs_llm_exec_batch_time(const CsLlmExec *x, const CsLlmBatchRequest *reqs, int n,
                                int stage, CsLlmStageTime *out, CsLlmBatchAttention *attention,
                                GError **error)
{
  g_return_val_if_fail(x != NULL && out != NULL, FALSE);
  if (!x->cfg.attention) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s at TP%d: no attention table was given, so a batch cannot be timed from "
                "its requests",
                x->cfg.model->name, x->cfg.tp);
    return FALSE;
  }
  CsLlmBatchAttention att;
  if (!cs_llm_attention_batch(x->cfg.attention, x->cfg.model, reqs, n, &att, error))
    return FALSE;
  /* Within int64: at most 2^20 requests of 2^20 tokens each. */
  int64_t tokens = 0;
  for (int i = 0; i < n; i++)
    tokens += reqs[i].num_tokens;
  if (!cs_llm_exec_stage_time(x, tokens, att.total_ms, stage, out, error))
    return FALSE;
  if (attention)
    *attention = att;
  return TRUE;
}

double cs_llm_exec_batch_flops(const CsLlmExec *x, const CsLlmBatchRequest *reqs, int n)
{
  const CsLlmModel *m = x->cfg.model;
  double params = (double)cs_llm_params_per_device(m, x->cfg.tp, x->cfg.pp);
  double per_token_pair = 4.0 * (m->num_layers / x->cfg.pp) * (m->num_q_heads / x->cfg.tp) *
                          (m->embedding_dim / m->num_q_heads);
  double flops = 0;
  for (int i = 0; i < n; i++) {
    double q = reqs[i].num_tokens;
    flops += 2.0 * q * params + per_token_pair * q * (q + reqs[i].num_processed);
  }
  return flops;
}
