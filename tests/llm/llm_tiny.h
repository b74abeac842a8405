/* The tiny made-up LLM deployment of the replica and search tests: every
 * operator a constant per layer (0.5 ms the input norm, 0.0625 ms each other
 * one, so 1 ms a layer, 2 ms for the 2 layers, any batch up to 8192 tokens),
 * decode attention 0.25 ms and prefill attention 0.5 ms a layer on their
 * grids (decode: kv 64-4096, batch 1-128; prefill: chunk 64-4096, kv
 * 0-4096). The tests' timelines are worked by hand from these
 * numbers. Included by one test program each (definitions are static). */
#ifndef CS_TESTS_LLM_TINY_H
#define CS_TESTS_LLM_TINY_H

#include <cmocka.h>
#include <glib.h>

#include "llm/llm_attention.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"

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
  " \"tensor_parallel\": [{\"tp\": 1, \"num_tokens\": [1, 8192], \"median_ms\": {\n"
  "    \"input_layernorm\": [0.5, 0.5], \"attn_pre_proj\": " C8 ", \"attn_rope\": " C8 ",\n"
  "    \"attn_post_proj\": " C8 ", \"post_attention_layernorm\": " C8 ",\n"
  "    \"mlp_up_proj\": " C8 ", \"mlp_act\": " C8 ", \"mlp_down_proj\": " C8 ",\n"
  "    \"add\": " C8 "}}]}\n";

static const char ATT_JSON[] =
  "{\"format\": \"clustersim-llm-attention\", \"version\": 1, \"source\": \"test fixture\",\n"
  " \"gpu\": \"a100\", \"model\": \"" TINY "\", \"tp\": 1, \"block_size\": 16,\n"
  " \"max_model_len\": 8192, \"attention_backend\": \"FLASH\",\n"
  " \"decode\": {\"kv_cache_size\": [64, 4096], \"batch_size\": [1, 128],\n"
  "  \"median_ms\": [[0.25, 0.25], [0.25, 0.25]]},\n"
  " \"prefill\": {\"kv_cache_size\": [0, 4096], \"prefill_chunk_size\": [64, 4096],\n"
  "  \"median_ms\": [[0.5, 0.5], [0.5, 0.5]]}}\n";

static const CsLlmModel TINY_MODEL = { .name = TINY, .num_layers = 2, .num_q_heads = 2,
                                       .num_kv_heads = 2, .embedding_dim = 8,
                                       .mlp_hidden_dim = 16, .max_position_embeddings = 4096,
                                       .vocab_size = 32, .use_gated_mlp = TRUE,
                                       .post_attn_norm = TRUE };

static CsLlmOps *ops;
static CsLlmAttention *att;

/* Loads ops and att; 0, or -1 with the reader's message printed. */
static int tiny_load(void)
{
  GError *e = NULL;
  ops = cs_llm_ops_load_data(OPS_JSON, "ops.json", &e);
  att = cs_llm_attention_load_data(ATT_JSON, "att.json", &e);
  if (e)
    print_error("%s\n", e->message);
  g_clear_error(&e);
  return ops && att ? 0 : -1;
}

static void tiny_free(void)
{
  cs_llm_ops_free(ops);
  cs_llm_attention_free(att);
}

#endif
