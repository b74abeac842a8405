/* Tests of the operator and collective tables (src/llm/llm_ops.c) and of
 * the per-iteration time (src/llm/llm_iteration.c) on inline fixtures.
 *
 * The TP1 rows at 1, 512 and 4096 tokens are Vidur's profiled medians for
 * Llama-2-7B on an A100 (docs/research/vidur.md section 1); the row at 256
 * tokens, the TP2 rows and the collective curves are made up for the tests.
 * Expected times are summed by hand in the comments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"

#define assert_close(a, b) assert_close_impl((a), (b), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, const char *what, const char *file, int line)
{
  if (!(fabs(a - b) <= 1e-9 * fmax(1, fabs(b)))) {
    print_error("%s = %.17g, expected %.17g\n", what, a, b);
    _fail(file, line);
  }
}

#define L7 "meta-llama/Llama-2-7b-hf"

#define OPS_JSON                                                                              \
  "{\"format\": \"clustersim-llm-ops\", \"version\": 1, \"source\": \"test fixture\",\n"     \
  " \"gpu\": \"a100\", \"model\": \"" L7 "\",\n"                                               \
  " \"model_shape\": {\"n_head\": 32, \"n_kv_head\": 32, \"n_embd\": 4096,\n"                 \
  "  \"n_expanded_embd\": 11008, \"vocab_size\": 32768, \"use_gated_mlp\": true},\n"        \
  " \"ops\": [\"input_layernorm\", \"attn_pre_proj\", \"attn_rope\", \"attn_post_proj\",\n"     \
  "         \"post_attention_layernorm\", \"mlp_up_proj\", \"mlp_act\", \"mlp_down_proj\",\n"    \
  "         \"add\"],\n"                                                                       \
  " \"tensor_parallel\": [\n"                                                                  \
  "  {\"tp\": 1, \"num_tokens\": [1, 256, 512, 4096], \"median_ms\": {\n"                      \
  "    \"input_layernorm\": [0.005, 0.010, 0.012, 0.105],\n"                                   \
  "    \"attn_pre_proj\": [0.065, 0.150, 0.234, 1.911],\n"                                     \
  "    \"attn_rope\": [0.005, 0.015, 0.022, 0.149],\n"                                         \
  "    \"attn_post_proj\": [0.025, 0.050, 0.088, 0.611],\n"                                    \
  "    \"post_attention_layernorm\": [0.005, 0.010, 0.012, 0.104],\n"                          \
  "    \"mlp_up_proj\": [0.116, 0.250, 0.402, 3.3655],\n"                                      \
  "    \"mlp_act\": [0.007, 0.020, 0.0365, 0.266],\n"                                          \
  "    \"mlp_down_proj\": [0.060, 0.130, 0.229, 1.604],\n"                                     \
  "    \"add\": [0.002, 0.005, 0.007, 0.055]}},\n"                                             \
  "  {\"tp\": 2, \"num_tokens\": [8, 512, 4096], \"median_ms\": {\n"                           \
  "    \"input_layernorm\": [0.004, 0.006, 0.06],\n"                                           \
  "    \"attn_pre_proj\": [0.04, 0.117, 0.9],\n"                                               \
  "    \"attn_rope\": [0.004, 0.011, 0.07],\n"                                                 \
  "    \"attn_post_proj\": [0.02, 0.044, 0.3],\n"                                              \
  "    \"post_attention_layernorm\": [0.004, 0.006, 0.06],\n"                                  \
  "    \"mlp_up_proj\": [0.07, 0.201, 1.7],\n"                                                 \
  "    \"mlp_act\": [0.005, 0.01825, 0.13],\n"                                                 \
  "    \"mlp_down_proj\": [0.04, 0.1145, 0.8],\n"                                              \
  "    \"add\": [0.002, 0.0035, 0.03]}}]}\n"

#define COLL_JSON                                                                             \
  "{\"format\": \"clustersim-llm-collectives\", \"version\": 1, \"source\": \"test fixture\",\n" \
  " \"node\": \"a100_pairwise_nvlink\", \"curves\": [\n"                                       \
  "  {\"collective\": \"all_reduce\", \"num_workers\": 2, \"devices_per_node\": 2,\n"          \
  "   \"size_bytes\": [2048, 4194304, 8388608], \"median_ms\": [0.03, 0.07, 0.12]},\n"          \
  "  {\"collective\": \"send_recv\", \"num_workers\": 2, \"devices_per_node\": 2,\n"           \
  "   \"size_bytes\": [2048, 4194304, 8388608], \"median_ms\": [0.005, 0.04, 0.07]},\n"         \
  "  {\"collective\": \"send_recv\", \"num_workers\": 2, \"devices_per_node\": 1,\n"           \
  "   \"size_bytes\": [2048, 4194304, 8388608], \"median_ms\": [0.1, 0.9, 1.7]}]}\n"

static const CsLlmModel LLAMA7 = { .name = L7, .num_layers = 32, .num_q_heads = 32,
                                   .num_kv_heads = 32, .embedding_dim = 4096,
                                   .mlp_hidden_dim = 11008, .max_position_embeddings = 4096,
                                   .vocab_size = 32768, .use_gated_mlp = TRUE,
                                   .post_attn_norm = TRUE };

static char *tmp_dir;

static int setup(void **state)
{
  (void)state;
  GError *e = NULL;
  tmp_dir = g_dir_make_tmp("test_llm_ops_XXXXXX", &e);
  assert_non_null(tmp_dir);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  char *argv[] = { "rm", "-rf", tmp_dir, NULL };
  g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free(tmp_dir);
  return 0;
}

static char *write_file(const char *name, const char *text)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  GError *e = NULL;
  assert_true(g_file_set_contents(path, text, -1, &e));
  return path;
}

/* text with its one occurrence of from replaced by to (g_free it). */
static char *replace(const char *text, const char *from, const char *to)
{
  const char *at = strstr(text, from);
  assert_non_null(at);
  assert_null(strstr(at + 1, from));
  return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static CsLlmOps *load_ops(void)
{
  char *path = write_file("ops.json", OPS_JSON);
  GError *e = NULL;
  CsLlmOps *ops = cs_llm_ops_load(path, &e);
  if (!ops)
    print_error("%s\n", e->message);
  assert_non_null(ops);
  g_free(path);
  return ops;
}

static CsLlmCollectives *load_coll(void)
{
  char *path = write_file("coll.json", COLL_JSON);
  GError *e = NULL;
  CsLlmCollectives *c = cs_llm_collectives_load(path, &e);
  if (!c)
    print_error("%s\n", e->message);
  assert_non_null(c);
  g_free(path);
  return c;
}

static void assert_has(const GError *e, const char *want)
{
  assert_non_null(e);
  if (!strstr(e->message, want))
    print_error("missing \"%s\" in: %s\n", want, e->message);
  assert_non_null(strstr(e->message, want));
}

static void test_lookup(void **state)
{
  (void)state;
  CsLlmOps *ops = load_ops();
  assert_string_equal(cs_llm_ops_gpu(ops), "a100");
  assert_string_equal(cs_llm_ops_model(ops), L7);
  assert_true(cs_llm_ops_has_tp(ops, 2));
  assert_false(cs_llm_ops_has_tp(ops, 4));
  assert_int_equal(cs_llm_ops_max_tokens(ops, 1), 4096);
  assert_true(cs_llm_ops_check_model(ops, &LLAMA7, NULL));
  double ms = 0;
  /* Exact at a profiled point. */
  assert_true(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_MLP_UP_PROJ, 512, &ms, NULL));
  assert_close(ms, 0.402);
  assert_true(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_ADD, 1, &ms, NULL));
  assert_close(ms, 0.002);
  assert_true(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_ADD, 4096, &ms, NULL));
  assert_close(ms, 0.055);
  /* The midpoint of 512 and 4096, 2304: (0.012 + 0.105) / 2. */
  assert_true(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_INPUT_LAYERNORM, 2304, &ms, NULL));
  assert_close(ms, 0.0585);
  /* A quarter of the way from 256 to 512, 320: 0.150 + (0.234 - 0.150) / 4. */
  assert_true(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_ATTN_PRE_PROJ, 320, &ms, NULL));
  assert_close(ms, 0.171);

  GError *e = NULL;
  assert_false(cs_llm_ops_time_ms(ops, 1, CS_LLM_OP_ADD, 4097, &ms, &e));
  assert_has(e, "add at TP1 for 4097 tokens: outside the profiled num_tokens 1 to 4096");
  g_clear_error(&e);
  assert_false(cs_llm_ops_time_ms(ops, 2, CS_LLM_OP_ADD, 4, &ms, &e));
  assert_has(e, "outside the profiled num_tokens 8 to 4096");
  g_clear_error(&e);
  assert_false(cs_llm_ops_time_ms(ops, 4, CS_LLM_OP_ADD, 512, &ms, &e));
  assert_has(e, "ops.json: no tensor-parallel degree 4 (the table has 1, 2)");
  g_clear_error(&e);

  /* Another model's table. */
  CsLlmModel other = LLAMA7;
  other.num_kv_heads = 8;
  assert_false(cs_llm_ops_check_model(ops, &other, &e));
  assert_has(e, "model_shape.n_kv_head: expected 8 (the num_kv_heads of model " L7 "), got 32");
  g_clear_error(&e);
  other = LLAMA7;
  other.name = "meta-llama/Meta-Llama-3-8B";
  assert_false(cs_llm_ops_check_model(ops, &other, &e));
  assert_has(e, "ops.json: model: expected \"meta-llama/Meta-Llama-3-8B\", got \"" L7 "\"");
  g_clear_error(&e);
  cs_llm_ops_free(ops);
}

static void test_collectives(void **state)
{
  (void)state;
  CsLlmCollectives *c = load_coll();
  assert_string_equal(cs_llm_collectives_node(c), "a100_pairwise_nvlink");
  const CsLlmCurve *ar = cs_llm_collectives_find(c, "all_reduce", 2, 2, NULL);
  assert_non_null(ar);
  double ms = 0;
  assert_true(cs_llm_curve_time_ms(ar, 4194304, &ms, NULL));
  assert_close(ms, 0.07);
  /* Midway between 4 MiB and 8 MiB: (0.07 + 0.12) / 2. */
  assert_true(cs_llm_curve_time_ms(ar, 6291456, &ms, NULL));
  assert_close(ms, 0.095);
  GError *e = NULL;
  assert_false(cs_llm_curve_time_ms(ar, 8388609, &ms, &e));
  assert_has(e, "all_reduce (2 workers, 2 per node) of 8388609 bytes: outside the profiled "
                "sizes 2048 to 8388608 bytes");
  g_clear_error(&e);
  assert_null(cs_llm_collectives_find(c, "all_reduce", 4, 4, &e));
  assert_has(e, "coll.json: no all_reduce curve for 4 workers with 4 devices per node");
  assert_has(e, "send_recv (2, 1)");
  g_clear_error(&e);
  cs_llm_collectives_free(c);
}

static CsLlmExec *exec_for(const CsLlmModel *m, const CsLlmOps *ops, const CsLlmCollectives *c,
                           int tp, int pp, int per_node, GError **error)
{
  CsLlmExecConfig cfg = { .model = m, .ops = ops, .collectives = c, .devices_per_node = per_node,
                          .tp = tp, .pp = pp };
  return cs_llm_exec_new(&cfg, error);
}

static void test_iteration(void **state)
{
  (void)state;
  CsLlmOps *ops = load_ops();
  CsLlmCollectives *c = load_coll();
  GError *e = NULL;
  CsLlmExec *x = exec_for(&LLAMA7, ops, NULL, 1, 1, 4, &e);
  assert_non_null(x);
  assert_int_equal(cs_llm_exec_max_tokens(x), 4096);
  CsLlmStageTime t;
  /* TP1, 512 tokens: 0.012 + 0.234 + 0.022 + 0.088 + 0.012 + 0.402 + 0.0365
   * + 0.229 + 0.007 = 1.0425 ms per layer, x 32 = 33.36 ms. */
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 0, &t, &e));
  assert_close(t.total_ms, 33.36);
  assert_int_equal(t.num_tokens_rounded, 512);
  assert_int_equal(t.layers, 32);
  assert_close(t.op_ms[CS_LLM_OP_MLP_UP_PROJ], 0.402 * 32);
  assert_close(t.op_ms[CS_LLM_OP_ADD], 0.007 * 32);
  assert_close(t.all_reduce_ms, 0);
  assert_close(t.send_recv_ms, 0);
  /* 509 tokens are timed as 512: the same 33.36 ms (unrounded, 509 would
   * fall between 256 and 512). */
  assert_true(cs_llm_exec_stage_time(x, 509, 0, 0, &t, &e));
  assert_int_equal(t.num_tokens, 509);
  assert_int_equal(t.num_tokens_rounded, 512);
  assert_close(t.total_ms, 33.36);
  /* The caller's attention, 0.25 ms per layer: + 8 ms. */
  assert_true(cs_llm_exec_stage_time(x, 512, 0.25, 0, &t, &e));
  assert_close(t.attention_ms, 8);
  assert_close(t.total_ms, 41.36);
  /* The midpoint 2304 of 512 and 4096: the 4096 row sums to 0.105 + 1.911
   * + 0.149 + 0.611 + 0.104 + 3.3655 + 0.266 + 1.604 + 0.055 = 8.1705, so
   * (1.0425 + 8.1705) / 2 = 4.6065 per layer, x 32 = 147.408 ms. */
  assert_true(cs_llm_exec_stage_time(x, 2304, 0, 0, &t, &e));
  assert_close(t.total_ms, 147.408);
  assert_close(t.op_ms[CS_LLM_OP_INPUT_LAYERNORM], 0.0585 * 32);
  /* Beyond the grid: 4093 tokens round to 4096 (profiled), 4097 to 4104. */
  assert_true(cs_llm_exec_stage_time(x, 4093, 0, 0, &t, &e));
  assert_close(t.total_ms, 8.1705 * 32);
  assert_false(cs_llm_exec_stage_time(x, 4097, 0, 0, &t, &e));
  assert_has(e, "ops.json: a batch of 4097 tokens, timed as 4104 (a multiple of 8), is beyond "
                "the 4096 tokens profiled at TP1");
  g_clear_error(&e);
  assert_false(cs_llm_exec_stage_time(x, 0, 0, 0, &t, &e));
  assert_has(e, "expected a batch of 1 to 2^40 tokens");
  g_clear_error(&e);
  cs_llm_exec_free(x);

  /* Without a norm after attention: 1.0425 - 0.012 = 1.0305, x 32 = 32.976. */
  CsLlmModel no_norm = LLAMA7;
  no_norm.post_attn_norm = FALSE;
  x = exec_for(&no_norm, ops, NULL, 1, 1, 4, &e);
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 0, &t, &e));
  assert_close(t.total_ms, 32.976);
  assert_close(t.op_ms[CS_LLM_OP_POST_ATTENTION_LAYERNORM], 0);
  cs_llm_exec_free(x);

  /* TP2, 512 tokens: the TP2 row sums to 0.006 + 0.117 + 0.011 + 0.044 +
   * 0.006 + 0.201 + 0.01825 + 0.1145 + 0.0035 = 0.52125; two all-reduces of
   * 512 * 4096 * 2 = 4,194,304 bytes, 0.07 + 0.02 ms each: + 0.18, so
   * 0.70125 per layer, x 32 = 22.44 ms, of which 5.76 all-reduce. */
  x = exec_for(&LLAMA7, ops, c, 2, 1, 4, &e);
  assert_non_null(x);
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 0, &t, &e));
  assert_close(t.all_reduce_ms, 5.76);
  assert_close(t.total_ms, 22.44);
  cs_llm_exec_free(x);

  /* TP1 PP2 on nodes of 4: 16 layers a stage, 16 x 1.0425 = 16.68 ms; the
   * first stage sends 4,194,304 bytes to the second inside the node (the
   * (2, 2) curve: 0.04 ms), the last sends nothing. */
  x = exec_for(&LLAMA7, ops, c, 1, 2, 4, &e);
  assert_non_null(x);
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 0, &t, &e));
  assert_int_equal(t.layers, 16);
  assert_close(t.send_recv_ms, 0.04);
  assert_close(t.total_ms, 16.72);
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 1, &t, &e));
  assert_close(t.send_recv_ms, 0);
  assert_close(t.total_ms, 16.68);
  assert_false(cs_llm_exec_stage_time(x, 512, 0, 2, &t, &e));
  assert_has(e, "a stage of 0 to 1, got 512 tokens, 0 ms, stage 2");
  g_clear_error(&e);
  cs_llm_exec_free(x);
  /* On nodes of 1 device the pair crosses nodes: the (2, 1) curve, 0.9 ms. */
  x = exec_for(&LLAMA7, ops, c, 1, 2, 1, &e);
  assert_non_null(x);
  assert_true(cs_llm_exec_stage_time(x, 512, 0, 0, &t, &e));
  assert_close(t.total_ms, 17.58);
  cs_llm_exec_free(x);

  /* What a replica cannot be built from. */
  assert_null(exec_for(&LLAMA7, ops, c, 4, 1, 4, &e));
  assert_has(e, "no entry of tensor_parallel has tp 4");
  g_clear_error(&e);
  assert_null(exec_for(&LLAMA7, ops, NULL, 2, 1, 4, &e));
  assert_has(e, "a collectives table is needed");
  g_clear_error(&e);
  assert_null(exec_for(&LLAMA7, ops, c, 2, 3, 4, &e));
  assert_has(e, "expected PP to divide num_layers (32)");
  g_clear_error(&e);
  assert_null(exec_for(&LLAMA7, ops, c, 2, 4, 3, &e));
  assert_has(e, "8 devices on nodes of 3: expected fewer than a node's devices or a multiple");
  g_clear_error(&e);
  cs_llm_collectives_free(c);
  cs_llm_ops_free(ops);
}

static void expect_ops_error(const char *json, const char *want)
{
  GError *e = NULL;
  assert_null(cs_llm_ops_load_data(json, "bad.json", &e));
  assert_has(e, want);
  assert_int_equal(e->code, CS_INPUT_ERROR_INVALID);
  g_error_free(e);
}

static void test_bad_ops(void **state)
{
  (void)state;
  char *j;
  j = replace(OPS_JSON, "[1, 256, 512, 4096]", "[1, 512, 256, 4096]");
  expect_ops_error(j, "bad.json: tensor_parallel[0].num_tokens[2]: expected ascending values "
                      "without repeats: a value > 512 (the previous one), got 256");
  g_free(j);
  j = replace(OPS_JSON, "[0.004, 0.011, 0.07]", "[0.004, 0.011]");
  expect_ops_error(j, "tensor_parallel[1].median_ms.attn_rope: expected 3 values, as many as "
                      "num_tokens, got 2");
  g_free(j);
  j = replace(OPS_JSON, "[0.004, 0.011, 0.07]", "[0.004, 0, 0.07]");
  expect_ops_error(j, "tensor_parallel[1].median_ms.attn_rope[1]: expected a time in ms > 0");
  g_free(j);
  j = replace(OPS_JSON, "[0.004, 0.011, 0.07]", "[0.004, \"0.011\", 0.07]");
  expect_ops_error(j, "tensor_parallel[1].median_ms.attn_rope[1]");
  g_free(j);
  /* A missing op, in a TP entry and in the list. */
  j = replace(OPS_JSON, ",\n    \"add\": [0.002, 0.0035, 0.03]", "");
  expect_ops_error(j, "tensor_parallel[1].median_ms.add: required field is missing");
  g_free(j);
  j = replace(OPS_JSON, ", \"mlp_down_proj\",", ",");
  expect_ops_error(j, "ops: expected every op of a layer: \"mlp_down_proj\" is missing");
  g_free(j);
  j = replace(OPS_JSON, "\"mlp_act\", \"mlp_down_proj\"", "\"mlp_actt\", \"mlp_down_proj\"");
  expect_ops_error(j, "ops[6]: expected a known op, got \"mlp_actt\" (did you mean \"mlp_act\"?)");
  g_free(j);
  j = replace(OPS_JSON, "\"add\"],", "\"add\", \"add\"],");
  expect_ops_error(j, "ops[9]: expected each op once");
  g_free(j);
  j = replace(OPS_JSON, "\"add\": [0.002, 0.005, 0.007, 0.055]}",
              "\"add\": [0.002, 0.005, 0.007, 0.055], \"emb\": [1, 1, 1, 1]}");
  expect_ops_error(j, "tensor_parallel[0].median_ms: unknown field \"emb\"");
  g_free(j);
  j = replace(OPS_JSON, "{\"tp\": 2,", "{\"tp\": 1,");
  expect_ops_error(j, "tensor_parallel[1].tp: expected a degree not given before, got 1 again");
  g_free(j);
  j = replace(OPS_JSON, "\"n_kv_head\": 32, ", "");
  expect_ops_error(j, "model_shape");
  g_free(j);
  j = replace(OPS_JSON, "\"version\": 1", "\"version\": 2");
  expect_ops_error(j, "version: unsupported version 2");
  g_free(j);
}

static void expect_coll_error(const char *json, const char *want)
{
  GError *e = NULL;
  assert_null(cs_llm_collectives_load_data(json, "bad.json", &e));
  assert_has(e, want);
  g_error_free(e);
}

static void test_bad_collectives(void **state)
{
  (void)state;
  char *j;
  j = replace(COLL_JSON, "\"collective\": \"all_reduce\"", "\"collective\": \"allreduce\"");
  expect_coll_error(j, "curves[0].collective: expected \"all_reduce\" or \"send_recv\", got "
                       "\"allreduce\" (did you mean \"all_reduce\"?)");
  g_free(j);
  j = replace(COLL_JSON, "[0.1, 0.9, 1.7]", "[0.1, 0.9]");
  expect_coll_error(j, "curves[2].median_ms: expected 3 values, as many as size_bytes, got 2");
  g_free(j);
  j = replace(COLL_JSON, "[0.03, 0.07, 0.12]", "[0.03, -0.07, 0.12]");
  expect_coll_error(j, "curves[0].median_ms[1]");
  g_free(j);
  j = replace(COLL_JSON, "\"devices_per_node\": 1", "\"devices_per_node\": 2");
  expect_coll_error(j, "curves[2]: expected one curve per collective, num_workers and "
                       "devices_per_node: send_recv with 2 workers, 2 per node is curves[1]");
  g_free(j);
  char *k = replace(COLL_JSON, "\"median_ms\": [0.03, 0.07, 0.12]", "\"median_ms\": [1, 2, 3]");
  j = replace(k, "[2048, 4194304, 8388608], \"median_ms\": [1, 2, 3]",
              "[2048, 2048, 8388608], \"median_ms\": [1, 2, 3]");
  expect_coll_error(j, "curves[0].size_bytes[1]: expected ascending values");
  g_free(j);
  g_free(k);
  j = replace(COLL_JSON, "\"num_workers\": 2, \"devices_per_node\": 1",
              "\"num_workers\": 1, \"devices_per_node\": 1");
  expect_coll_error(j, "curves[2].num_workers");
  g_free(j);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lookup),   cmocka_unit_test(test_collectives),
    cmocka_unit_test(test_iteration), cmocka_unit_test(test_bad_ops),
    cmocka_unit_test(test_bad_collectives),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
