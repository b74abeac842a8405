/* Tests of the LLM model configurations and memory plan
 * (src/llm/llm_model.c) on an inline models file. The expected plans are
 * the worked values of docs/research/vidur.md section 2, derived by hand
 * from Vidur's memory planner and parameter counter (80 GB device,
 * max_tokens 4096, block 16, margin 0.1); the byte counts are worked in the
 * comments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "llm/llm_model.h"

#define MODELS_JSON                                                                            \
  "{\"format\": \"clustersim-llm-models\", \"version\": 1, \"source\": \"test fixture\",\n"   \
  " \"models\": [\n"                                                                         \
  "  {\"name\": \"meta-llama/Llama-2-7b-hf\", \"num_layers\": 32, \"num_q_heads\": 32,\n"    \
  "   \"num_kv_heads\": 32, \"embedding_dim\": 4096, \"mlp_hidden_dim\": 11008,\n"           \
  "   \"max_position_embeddings\": 4096, \"use_gated_mlp\": true, \"vocab_size\": 32768,\n"  \
  "   \"post_attn_norm\": true, \"no_tensor_parallel\": false},\n"                           \
  "  {\"name\": \"meta-llama/Llama-2-70b-hf\", \"num_layers\": 80, \"num_q_heads\": 64,\n"   \
  "   \"num_kv_heads\": 8, \"embedding_dim\": 8192, \"mlp_hidden_dim\": 28672,\n"            \
  "   \"max_position_embeddings\": 4096, \"use_gated_mlp\": true, \"vocab_size\": 32768,\n"  \
  "   \"post_attn_norm\": true, \"no_tensor_parallel\": false},\n"                           \
  "  {\"name\": \"microsoft/phi-2\", \"num_layers\": 32, \"num_q_heads\": 32,\n"             \
  "   \"num_kv_heads\": 32, \"embedding_dim\": 2560, \"mlp_hidden_dim\": 10240,\n"           \
  "   \"max_position_embeddings\": 2048, \"use_gated_mlp\": false, \"vocab_size\": 51200,\n" \
  "   \"post_attn_norm\": false, \"no_tensor_parallel\": true}],\n"                          \
  " \"devices\": [{\"name\": \"a100\", \"memory_gib\": 80, \"fp16_tflops\": 312,\n"        \
  "                \"price_per_hour\": 2.21},\n"                                            \
  "               {\"name\": \"a40\", \"memory_gib\": 45, \"fp16_tflops\": 150}],\n"         \
  " \"nodes\": [{\"name\": \"a100_pairwise_nvlink\", \"device\": \"a100\",\n"                \
  "             \"devices_per_node\": 4}]}\n"

static char *tmp_dir;

static int setup(void **state)
{
  (void)state;
  GError *e = NULL;
  tmp_dir = g_dir_make_tmp("test_llm_model_XXXXXX", &e);
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

/* Writes text to tmp_dir/rel (directories made); returns the path. */
static char *write_file(const char *rel, const char *text)
{
  char *path = g_build_filename(tmp_dir, rel, NULL);
  char *dir = g_path_get_dirname(path);
  assert_int_equal(g_mkdir_with_parents(dir, 0700), 0);
  g_free(dir);
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

static CsLlmModelSet *load_fixture(void)
{
  char *path = write_file("models.json", MODELS_JSON);
  GError *e = NULL;
  CsLlmModelSet *set = cs_llm_models_load(path, &e);
  if (!set)
    print_error("%s\n", e->message);
  assert_non_null(set);
  g_free(path);
  return set;
}

/* Loads a bad variant and checks the message has every one of want. */
static void expect_load_error(const char *json, const char *want1, const char *want2)
{
  GError *e = NULL;
  CsLlmModelSet *set = cs_llm_models_load_data(json, "bad.json", &e);
  assert_null(set);
  assert_non_null(e);
  if (!strstr(e->message, want1) || (want2 && !strstr(e->message, want2)))
    print_error("message: %s\n", e->message);
  assert_non_null(strstr(e->message, want1));
  if (want2)
    assert_non_null(strstr(e->message, want2));
  assert_int_equal(e->code, CS_INPUT_ERROR_INVALID);
  g_error_free(e);
}

static void test_load(void **state)
{
  (void)state;
  CsLlmModelSet *set = load_fixture();
  assert_int_equal(cs_llm_models_n_models(set), 3);
  assert_int_equal(cs_llm_models_n_devices(set), 2);
  assert_int_equal(cs_llm_models_n_nodes(set), 1);
  const CsLlmModel *m = cs_llm_models_find_model(set, "meta-llama/Llama-2-70b-hf", NULL);
  assert_non_null(m);
  assert_int_equal(m->num_layers, 80);
  assert_int_equal(m->num_kv_heads, 8);
  assert_int_equal(m->mlp_hidden_dim, 28672);
  assert_true(m->use_gated_mlp);
  const CsLlmModel *phi = cs_llm_models_model(set, 2);
  assert_string_equal(phi->name, "microsoft/phi-2");
  assert_false(phi->use_gated_mlp);
  assert_false(phi->post_attn_norm);
  assert_true(phi->no_tensor_parallel);
  const CsLlmDevice *a40 = cs_llm_models_find_device(set, "a40", NULL);
  assert_non_null(a40);
  assert_true(a40->memory_gib == 45);
  assert_true(a40->price_per_hour == 0); /* the file gives it none */
  assert_true(cs_llm_models_find_device(set, "a100", NULL)->price_per_hour == 2.21);
  const CsLlmNode *node = cs_llm_models_find_node(set, "a100_pairwise_nvlink", NULL);
  assert_non_null(node);
  assert_string_equal(node->device->name, "a100");
  assert_int_equal(node->devices_per_node, 4);
  assert_non_null(strstr(cs_llm_models_source(set), "test fixture"));

  GError *e = NULL;
  assert_null(cs_llm_models_find_model(set, "meta-llama/Llama-2-7b", &e));
  assert_non_null(strstr(e->message, "no model \"meta-llama/Llama-2-7b\""));
  assert_non_null(strstr(e->message, "did you mean \"meta-llama/Llama-2-7b-hf\""));
  g_clear_error(&e);
  assert_null(cs_llm_models_find_device(set, "tpu", &e));
  assert_non_null(strstr(e->message, "known: \"a100\", \"a40\""));
  g_clear_error(&e);
  cs_llm_models_free(set);
}

/* One plan and its checks: max_batch, num_blocks, KV bytes per token. */
static void expect_plan(const CsLlmModelSet *set, const char *model, int tp, int pp,
                        int64_t max_batch, int64_t num_blocks, int64_t kv_per_token,
                        int64_t weight_bytes)
{
  CsLlmPlanConfig cfg;
  cs_llm_plan_config_init(&cfg);
  cfg.tp = tp;
  cfg.pp = pp;
  CsLlmPlan p;
  GError *e = NULL;
  gboolean ok = cs_llm_plan(cs_llm_models_find_model(set, model, NULL),
                            cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, &e);
  if (!ok)
    print_error("%s TP%d PP%d: %s\n", model, tp, pp, e->message);
  assert_true(ok);
  assert_int_equal(p.max_batch_size, max_batch);
  assert_int_equal(p.num_blocks, num_blocks);
  assert_int_equal(p.max_request_slots, max_batch * pp);
  assert_int_equal(p.max_blocks_per_request, 256);
  assert_int_equal(p.kv_bytes_per_token, kv_per_token);
  assert_int_equal(p.kv_bytes_per_request, kv_per_token * 4096);
  assert_int_equal(p.weight_bytes, weight_bytes);
}

static void test_plans(void **state)
{
  (void)state;
  CsLlmModelSet *set = load_fixture();
  const char *l7 = "meta-llama/Llama-2-7b-hf", *l70 = "meta-llama/Llama-2-70b-hf";
  /* Llama-2-7B TP1: params per layer 4096*128*(32 + 2*32) + 4096*128*32 +
   * 3*4096*11008 = 202,375,168, x 32 layers x 2 bytes = 12,952,010,752 B
   * (12.0625 GiB, the doc's 12.06). KV per token 4*128*32*32 = 524,288 B.
   * 80 GiB * 0.9 = 77,309,411,328 B; minus weights 64,357,400,576; over
   * 524,288 * 4096 = 2,147,483,648 B per request: 29 (29.97). Blocks
   * 256 * 29 = 7424. */
  expect_plan(set, l7, 1, 1, 29, 7424, 524288, INT64_C(12952010752));
  CsLlmPlanConfig cfg;
  cs_llm_plan_config_init(&cfg);
  CsLlmPlan p;
  assert_true(cs_llm_plan(cs_llm_models_find_model(set, l7, NULL),
                          cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, NULL));
  assert_int_equal(p.head_dim, 128);
  /* The MFU's parameter count is the plan's: 202,375,168 x 32 layers. */
  assert_int_equal(cs_llm_params_per_device(cs_llm_models_find_model(set, l7, NULL), 1, 1),
                   INT64_C(6476005376));
  assert_int_equal(cs_llm_params_per_device(cs_llm_models_find_model(set, l7, NULL), 2, 1),
                   INT64_C(3238002688));
  assert_true(fabs(p.weight_bytes / 1073741824.0 - 12.06) < 0.005);
  assert_true(p.usable_bytes == 77309411328.0);
  /* TP2, TP4: weights halve and quarter, KV per token too. */
  expect_plan(set, l7, 2, 1, 65, 16640, 262144, INT64_C(6476005376));
  expect_plan(set, l7, 4, 1, 137, 35072, 131072, INT64_C(3238002688));
  /* Llama-2-70B: head_dim 8192/64 = 128; per layer at TP2
   * 8192*128*(32 + 2*4) + 8192*128*32 + 3*8192*28672/2 = 427,819,008
   * params, x 80 layers x 2 bytes = 68,451,041,280 B; KV 4*128*4*80 =
   * 163,840 B per token; (77,309,411,328 - 68,451,041,280) /
   * (163,840 * 4096) = 13.2: 13, 3328 blocks. */
  expect_plan(set, l70, 2, 1, 13, 3328, 163840, INT64_C(68451041280));
  /* TP4: KV 4*128*2*80 = 81,920 B per token (the doc's value). */
  expect_plan(set, l70, 4, 1, 128, 32768, 81920, INT64_C(34225520640));
  expect_plan(set, l70, 8, 1, 358, 91648, 40960, INT64_C(17112760320));
  /* TP4-PP2: the weights of 40 layers, the KV of all 80 (Vidur's count),
   * 179 per stage, 358 slots: 256 * 358 = 91,648 blocks. */
  expect_plan(set, l70, 4, 2, 179, 91648, 81920, INT64_C(17112760320));
  /* TP16, more shards than KV heads: each keeps ceil(8/16) = 1 KV head
   * (Vidur's ceil), so 4*128*1*80 = 40,960 B per token; per layer
   * 8192*128*(4 + 2) + 8192*128*4 + 3*8192*28672/16 = 54,525,952 params,
   * x 80 x 2 = 8,724,152,320 B; (77,309,411,328 - 8,724,152,320) /
   * (40,960 * 4096) = 408.8: 408, 104,448 blocks. */
  expect_plan(set, l70, 16, 1, 408, 104448, 40960, INT64_C(8724152320));
  cs_llm_models_free(set);
}

static void test_does_not_fit(void **state)
{
  (void)state;
  CsLlmModelSet *set = load_fixture();
  CsLlmPlanConfig cfg;
  cs_llm_plan_config_init(&cfg);
  CsLlmPlan p;
  GError *e = NULL;
  /* Llama-2-70B TP1: 2 * 855,638,016 * 80 = 136,902,082,560 B of weights,
   * more than the 77,309,411,328 usable. */
  assert_false(cs_llm_plan(cs_llm_models_find_model(set, "meta-llama/Llama-2-70b-hf", NULL),
                           cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, &e));
  const char *want[] = { "meta-llama/Llama-2-70b-hf", "TP1 PP1", "does not fit on a100",
                         "136902082560", "77309411328", "1342177280" };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    if (!strstr(e->message, want[i]))
      print_error("missing \"%s\" in: %s\n", want[i], e->message);
    assert_non_null(strstr(e->message, want[i]));
  }
  g_clear_error(&e);
  /* phi-2 cannot be split; 7B TP3 does not divide its 32 heads; PP3 does
   * not divide 32 layers. */
  cfg.tp = 2;
  assert_false(cs_llm_plan(cs_llm_models_find_model(set, "microsoft/phi-2", NULL),
                           cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, &e));
  assert_non_null(strstr(e->message, "no_tensor_parallel"));
  g_clear_error(&e);
  cfg.tp = 3;
  assert_false(cs_llm_plan(cs_llm_models_find_model(set, "meta-llama/Llama-2-7b-hf", NULL),
                           cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, &e));
  assert_non_null(strstr(e->message, "TP3 PP1: expected TP to divide num_q_heads (32)"));
  g_clear_error(&e);
  cfg.tp = 1;
  cfg.pp = 3;
  assert_false(cs_llm_plan(cs_llm_models_find_model(set, "meta-llama/Llama-2-7b-hf", NULL),
                           cs_llm_models_find_device(set, "a100", NULL), &cfg, &p, &e));
  assert_non_null(strstr(e->message, "expected PP to divide num_layers (32)"));
  g_clear_error(&e);
  /* phi-2 at TP1: head_dim 2560 / 32 = 80. */
  cfg.pp = 1;
  assert_true(cs_llm_plan(cs_llm_models_find_model(set, "microsoft/phi-2", NULL),
                          cs_llm_models_find_device(set, "a40", NULL), &cfg, &p, &e));
  assert_int_equal(p.head_dim, 80);
  /* Not gated: 2560*80*(32 + 64) + 2560*80*32 + 2*2560*10240 = 78,643,200
   * params per layer, x 32 x 2 = 5,033,164,800 B. */
  assert_int_equal(p.weight_bytes, INT64_C(5033164800));
  cs_llm_models_free(set);
}

static void test_bad_models(void **state)
{
  (void)state;
  char *j;
  j = replace(MODELS_JSON, "\"embedding_dim\": 2560", "\"embedding_dim\": 2561");
  expect_load_error(j, "bad.json: models[2].embedding_dim: expected a multiple of num_q_heads "
                       "(32), got 2561", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"num_kv_heads\": 8,", "\"num_kv_heads\": 80,");
  expect_load_error(j, "models[1].num_kv_heads: expected at most num_q_heads (64), got 80", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"microsoft/phi-2\"", "\"meta-llama/Llama-2-7b-hf\"");
  expect_load_error(j, "models[2].name: expected a name not given before", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"device\": \"a100\"", "\"device\": \"a10\"");
  expect_load_error(j, "nodes[0].device: expected a device of \"devices\", got \"a10\"",
                    "did you mean");
  g_free(j);
  j = replace(MODELS_JSON, "\"num_layers\": 80, ", "");
  expect_load_error(j, "models[1]", "num_layers");
  g_free(j);
  j = replace(MODELS_JSON, "\"memory_gib\": 45", "\"memory_gib\": 0");
  expect_load_error(j, "devices[1].memory_gib: expected a number > 0", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"price_per_hour\": 2.21", "\"price_per_hour\": 0");
  expect_load_error(j, "devices[0].price_per_hour: expected a number > 0", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"price_per_hour\": 2.21", "\"price_per_hour\": \"cheap\"");
  expect_load_error(j, "devices[0].price_per_hour", "number");
  g_free(j);
  j = replace(MODELS_JSON, "\"version\": 1", "\"version\": 2");
  expect_load_error(j, "version: unsupported version 2", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "clustersim-llm-models", "clustersim-llm-ops");
  expect_load_error(j, "format: expected \"clustersim-llm-models\"", NULL);
  g_free(j);
  j = replace(MODELS_JSON, "\"use_gated_mlp\": false", "\"use_gated_mlp\": 0");
  expect_load_error(j, "models[2].use_gated_mlp", NULL);
  g_free(j);
}

/* A bare name is a file of the data directories' llm/. */
static void test_data_dir(void **state)
{
  (void)state;
  char *dir = g_build_filename(tmp_dir, "data", NULL);
  char *m = write_file("data/llm/models.json", MODELS_JSON);
  char *rel = cs_llm_ops_rel_path("a100", "meta-llama/Llama-2-7b-hf");
  assert_string_equal(rel, "ops/a100/meta-llama__Llama-2-7b-hf.json");
  char *o = write_file("data/llm/ops/a100/meta-llama__Llama-2-7b-hf.json", "{}");
  g_setenv("CLUSTERSIM_DATA_DIR", dir, TRUE);
  GError *e = NULL;
  CsLlmModelSet *set = cs_llm_models_load("models", &e);
  assert_non_null(set);
  assert_non_null(strstr(cs_llm_models_source(set), m));
  cs_llm_models_free(set);
  char *found = cs_llm_data_find(rel, &e);
  assert_string_equal(found, o);
  g_free(found);
  assert_null(cs_llm_data_find("ops/a100/none.json", &e));
  assert_int_equal(e->code, CS_INPUT_ERROR_IO);
  assert_non_null(strstr(e->message, "ops/a100/none.json: not found"));
  g_clear_error(&e);
  g_unsetenv("CLUSTERSIM_DATA_DIR");
  g_free(rel);
  g_free(o);
  g_free(m);
  g_free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_load),          cmocka_unit_test(test_plans),
    cmocka_unit_test(test_does_not_fit),  cmocka_unit_test(test_bad_models),
    cmocka_unit_test(test_data_dir),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
