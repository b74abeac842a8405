/* Runs one workload through the simulation of LLM replicas
 * (src/llm/llm_sim.c) on constant made-up tables and prints what happened
 * to each request, for test_sim_vidur.py to compare with Vidur's own event
 * loop, routers and schedulers on the same workload.
 *
 * The tables: a model of 2 layers whose operators take 1.0 ms a layer at
 * any token count, attention 0.25 ms a layer when decoding and 0.5 ms when
 * prefilling, on grids wide enough for any small workload (prefill chunks
 * from 1 token). So a batch of prefills takes 3 ms, of decodes 2.5 ms, a
 * mixed one 3.5 ms: the other side's stand-in predictor says the same.
 * With 2 pipeline stages, one layer a stage: 1.5, 1.25 and 1.75 ms, and
 * the first stage adds a send_recv of 0.5 ms (a constant curve on a node
 * of 2 devices).
 *
 * Input (stdin): "POLICY REPLICAS ROUTER NUM_BLOCKS BLOCK_SIZE BATCH_SIZE_CAP
 * MAX_BATCH_SIZE WATERMARK_FRACTION MAX_TOKENS_IN_BATCH CHUNK_SIZE
 * MAX_TOKENS STAGES N", then N lines "ARRIVAL_NS PROMPT OUTPUT" (STAGES 1
 * or 2).
 * Output: one line a request, "ID REPLICA SCHEDULED FIRST_TOKEN COMPLETED
 * RESTARTS N_TBT TBT_SUM TBT_MAX" (ns), then "batches B restarts R".
 * Exit 2 on bad input or a refused run. */
#include <stdio.h>
#include <stdlib.h>

#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"
#include "llm/llm_sim.h"

#define TINY "test/tiny"
#define C8 "[0.0625, 0.0625]"
static const char OPS_JSON[] =
  "{\"format\": \"clustersim-llm-ops\", \"version\": 1, \"source\": \"test fixture\",\n"
  " \"gpu\": \"a100\", \"model\": \"" TINY "\",\n"
  " \"model_shape\": {\"n_head\": 2, \"n_kv_head\": 2, \"n_embd\": 8,\n"
  "  \"n_expanded_embd\": 16, \"vocab_size\": 32, \"use_gated_mlp\": true},\n"
  " \"ops\": [\"input_layernorm\", \"attn_pre_proj\", \"attn_rope\", \"attn_post_proj\",\n"
  "         \"post_attention_layernorm\", \"mlp_up_proj\", \"mlp_act\", \"mlp_down_proj\",\n"
  "         \"add\"],\n"
  " \"tensor_parallel\": [{\"tp\": 1, \"num_tokens\": [1, 65536], \"median_ms\": {\n"
  "    \"input_layernorm\": [0.5, 0.5], \"attn_pre_proj\": " C8 ", \"attn_rope\": " C8 ",\n"
  "    \"attn_post_proj\": " C8 ", \"post_attention_layernorm\": " C8 ",\n"
  "    \"mlp_up_proj\": " C8 ", \"mlp_act\": " C8 ", \"mlp_down_proj\": " C8 ",\n"
  "    \"add\": " C8 "}}]}\n";
static const char ATT_JSON[] =
  "{\"format\": \"clustersim-llm-attention\", \"version\": 1, \"source\": \"test fixture\",\n"
  " \"gpu\": \"a100\", \"model\": \"" TINY "\", \"tp\": 1, \"block_size\": 16,\n"
  " \"max_model_len\": 131072, \"attention_backend\": \"FLASH\",\n"
  " \"decode\": {\"kv_cache_size\": [64, 65536], \"batch_size\": [1, 4096],\n"
  "  \"median_ms\": [[0.25, 0.25], [0.25, 0.25]]},\n"
  " \"prefill\": {\"kv_cache_size\": [0, 65536], \"prefill_chunk_size\": [1, 65536],\n"
  "  \"median_ms\": [[0.5, 0.5], [0.5, 0.5]]}}\n";

static const CsLlmModel TINY_MODEL = { .name = TINY, .num_layers = 2, .num_q_heads = 2,
                                       .num_kv_heads = 2, .embedding_dim = 8,
                                       .mlp_hidden_dim = 16, .max_position_embeddings = 4096,
                                       .vocab_size = 32, .use_gated_mlp = TRUE,
                                       .post_attn_norm = TRUE };

static const char COLL_JSON[] =
  "{\"format\": \"clustersim-llm-collectives\", \"version\": 1, \"source\": \"test fixture\",\n"
  " \"node\": \"tiny_pair\", \"curves\": [\n"
  "  {\"collective\": \"send_recv\", \"num_workers\": 2, \"devices_per_node\": 2,\n"
  "   \"size_bytes\": [1, 1073741824], \"median_ms\": [0.5, 0.5]}]}\n";

static int fail(GError *e)
{
  fprintf(stderr, "llm_sim_trace: %s\n", e->message);
  g_error_free(e);
  return 2;
}

int main(void)
{
  char pname[32], rname[32];
  long long num_blocks;
  int replicas, block_size, cap, max_batch, mtib, chunk, max_tokens, stages, n;
  double wm;
  if (scanf("%31s %d %31s %lld %d %d %d %lf %d %d %d %d %d", pname, &replicas, rname,
            &num_blocks, &block_size, &cap, &max_batch, &wm, &mtib, &chunk, &max_tokens,
            &stages, &n) != 13 ||
      n < 1) {
    fprintf(stderr, "llm_sim_trace: stdin: expected the config line\n");
    return 2;
  }
  GError *e = NULL;
  CsLlmSimConfig c = { .replicas = replicas };
  CsLlmSchedPolicy policy;
  if (!cs_llm_sched_policy_parse(pname, &policy, &e) ||
      !cs_llm_router_parse(rname, &c.router, &e))
    return fail(e);
  CsLlmOps *ops = cs_llm_ops_load_data(OPS_JSON, "ops.json", &e);
  CsLlmAttention *att = ops ? cs_llm_attention_load_data(ATT_JSON, "att.json", &e) : NULL;
  CsLlmCollectives *coll = att ? cs_llm_collectives_load_data(COLL_JSON, "coll.json", &e) : NULL;
  if (coll == NULL)
    return fail(e);
  c.exec = (CsLlmExecConfig){ .model = &TINY_MODEL, .ops = ops, .collectives = coll,
                              .devices_per_node = 2, .tp = 1, .pp = stages, .attention = att };
  cs_llm_sched_config_init(&c.sched, policy);
  c.sched.num_blocks = num_blocks;
  c.sched.block_size = block_size;
  c.sched.batch_size_cap = cap;
  c.sched.max_batch_size = max_batch;
  c.sched.watermark_blocks_fraction = wm;
  c.sched.max_tokens_in_batch = mtib;
  c.sched.chunk_size = chunk;
  c.sched.max_tokens = max_tokens;
  c.sched.num_stages = stages;
  CsLlmSimRequest *reqs = g_new0(CsLlmSimRequest, n);
  for (int i = 0; i < n; i++) {
    long long t;
    if (scanf("%lld %d %d", &t, &reqs[i].prompt_tokens, &reqs[i].output_tokens) != 3) {
      fprintf(stderr, "llm_sim_trace: stdin: request %d: expected 3 numbers\n", i);
      return 2;
    }
    reqs[i].id = i;
    reqs[i].arrival_ns = t;
  }
  CsLlmSimResult *res = cs_llm_sim_run(&c, reqs, n, &e);
  if (res == NULL)
    return fail(e);
  for (int i = 0; i < n; i++) {
    const CsLlmSimRequestResult *q = &res->requests[i];
    printf("%lld %d %lld %lld %lld %d %lld %lld %lld\n", (long long)q->id, q->replica,
           (long long)q->scheduled_ns, (long long)q->first_token_ns,
           (long long)q->completed_ns, q->restarts, (long long)q->n_tbt,
           (long long)q->tbt_sum_ns, (long long)q->tbt_max_ns);
  }
  printf("batches %lld restarts %lld\n", (long long)res->n_batches, (long long)res->restarts);
  cs_llm_sim_result_free(res);
  cs_llm_attention_free(att);
  cs_llm_collectives_free(coll);
  cs_llm_ops_free(ops);
  g_free(reqs);
  return 0;
}
