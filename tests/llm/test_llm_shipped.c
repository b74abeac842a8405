/* The LLM execution model (src/llm) on the shipped data/llm files (found
 * through CS_SOURCE_ROOT): the memory plans of docs/research/vidur.md
 * section 2 from data/llm/models.json, and the per-iteration sums of the
 * example rows of section 1 (Vidur's profiled medians, Llama-2 on an A100)
 * from the operator tables. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"

#define L7 "meta-llama/Llama-2-7b-hf"
#define L70 "meta-llama/Llama-2-70b-hf"

static char *llm_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root) {
    print_error("CS_SOURCE_ROOT is not set (run through meson test)\n");
    fail();
  }
  return g_build_filename(root, "data", "llm", rel, NULL);
}

static void *checked(void *p, GError *e)
{
  if (!p)
    print_error("%s\n", e->message);
  assert_non_null(p);
  return p;
}

static void test_plans(void **state)
{
  (void)state;
  char *path = llm_path("models.json");
  GError *e = NULL;
  CsLlmModelSet *set = checked(cs_llm_models_load(path, &e), e);
  const CsLlmDevice *a100 = checked((void *)cs_llm_models_find_device(set, "a100", &e), e);
  assert_true(a100->memory_gib == 80);
  /* Vidur's GPU_COSTS (docs/research/vidur.md): a100 2.21, h100 4.25 $ an hour. */
  assert_true(a100->price_per_hour == 2.21);
  const CsLlmDevice *h100 = checked((void *)cs_llm_models_find_device(set, "h100", &e), e);
  assert_true(h100->price_per_hour == 4.25);
  const struct {
    const char *model;
    int tp, pp;
    int64_t max_batch, num_blocks;
  } want[] = {
    { L7, 1, 1, 29, 7424 },   { L7, 2, 1, 65, 16640 },  { L7, 4, 1, 137, 35072 },
    { L70, 2, 1, 13, 3328 },  { L70, 4, 1, 128, 32768 }, { L70, 8, 1, 358, 91648 },
    { L70, 4, 2, 179, 91648 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    CsLlmPlanConfig cfg;
    cs_llm_plan_config_init(&cfg);
    cfg.tp = want[i].tp;
    cfg.pp = want[i].pp;
    CsLlmPlan p;
    const CsLlmModel *m = checked((void *)cs_llm_models_find_model(set, want[i].model, &e), e);
    assert_true(cs_llm_plan(m, a100, &cfg, &p, &e));
    assert_int_equal(p.max_batch_size, want[i].max_batch);
    assert_int_equal(p.num_blocks, want[i].num_blocks);
  }
  CsLlmPlanConfig cfg;
  cs_llm_plan_config_init(&cfg);
  CsLlmPlan p;
  assert_false(cs_llm_plan(cs_llm_models_find_model(set, L70, NULL), a100, &cfg, &p, &e));
  assert_non_null(strstr(e->message, "does not fit"));
  g_clear_error(&e);
  /* The 7B's weights: 12.06 GiB; phi-2's head_dim 2560 / 32 = 80. */
  assert_true(cs_llm_plan(cs_llm_models_find_model(set, L7, NULL), a100, &cfg, &p, &e));
  assert_true(fabs(p.weight_bytes / 1073741824.0 - 12.06) < 0.005);
  assert_int_equal(p.kv_bytes_per_token, 524288);
  assert_true(cs_llm_plan(cs_llm_models_find_model(set, "microsoft/phi-2", NULL), a100, &cfg,
                          &p, &e));
  assert_int_equal(p.head_dim, 80);
  cs_llm_models_free(set);
  g_free(path);
}

static void test_iteration(void **state)
{
  (void)state;
  char *mpath = llm_path("models.json");
  char *rel = cs_llm_ops_rel_path("a100", L7);
  char *opath = llm_path(rel);
  GError *e = NULL;
  CsLlmModelSet *set = checked(cs_llm_models_load(mpath, &e), e);
  CsLlmOps *ops = checked(cs_llm_ops_load(opath, &e), e);
  const CsLlmModel *m = cs_llm_models_find_model(set, L7, NULL);
  CsLlmExecConfig cfg = { .model = m, .ops = ops, .devices_per_node = 4, .tp = 1, .pp = 1 };
  CsLlmExec *x = checked(cs_llm_exec_new(&cfg, &e), e);
  CsLlmStageTime t;
  /* Vidur's row at 512 tokens: 0.012 + 0.234 + 0.022 + 0.088 + 0.012 +
   * 0.402 + 0.0365 + 0.229 + 0.007 = 1.0425 ms a layer, x 32 = 33.36 ms;
   * 509 tokens are timed as 512. */
  assert_true(cs_llm_exec_stage_time(x, 509, 0, 0, &t, &e));
  assert_true(fabs(t.total_ms - 33.36) < 1e-9);
  /* The row at 4096: 0.105 + 1.911 + 0.149 + 0.611 + 0.104 + 3.3655 +
   * 0.266 + 1.604 + 0.055 = 8.1705 ms a layer, x 32 = 261.456 ms. */
  assert_true(cs_llm_exec_stage_time(x, 4096, 0, 0, &t, &e));
  assert_true(fabs(t.total_ms - 261.456) < 1e-9);
  assert_false(cs_llm_exec_stage_time(x, 4097, 0, 0, &t, &e));
  g_clear_error(&e);
  cs_llm_exec_free(x);
  /* TP4 at 512 tokens, one op at a time: 0.011, 0.057, 0.126, 0.065. */
  double ms = 0;
  assert_true(cs_llm_ops_time_ms(ops, 4, CS_LLM_OP_INPUT_LAYERNORM, 512, &ms, &e));
  assert_true(fabs(ms - 0.011) < 1e-12);
  assert_true(cs_llm_ops_time_ms(ops, 4, CS_LLM_OP_ATTN_PRE_PROJ, 512, &ms, &e));
  assert_true(fabs(ms - 0.057) < 1e-12);
  assert_true(cs_llm_ops_time_ms(ops, 4, CS_LLM_OP_MLP_UP_PROJ, 512, &ms, &e));
  assert_true(fabs(ms - 0.126) < 1e-12);
  assert_true(cs_llm_ops_time_ms(ops, 4, CS_LLM_OP_MLP_DOWN_PROJ, 512, &ms, &e));
  assert_true(fabs(ms - 0.065) < 1e-12);
  cs_llm_ops_free(ops);
  g_free(opath);
  g_free(rel);

  /* Llama-2-70B TP4 at 512 tokens: pre_proj 0.11, post_proj 0.1005, up
   * 0.547, act 0.022, down 0.2805 ms; TP1 at 1 token: up 0.58, down 0.29. */
  rel = cs_llm_ops_rel_path("a100", L70);
  opath = llm_path(rel);
  ops = checked(cs_llm_ops_load(opath, &e), e);
  assert_true(cs_llm_ops_check_model(ops, cs_llm_models_find_model(set, L70, NULL), &e));
  const struct {
    int tp;
    CsLlmOp op;
    int64_t n;
    double ms;
  } want[] = {
    { 4, CS_LLM_OP_ATTN_PRE_PROJ, 512, 0.11 }, { 4, CS_LLM_OP_ATTN_POST_PROJ, 512, 0.1005 },
    { 4, CS_LLM_OP_MLP_UP_PROJ, 512, 0.547 },  { 4, CS_LLM_OP_MLP_ACT, 512, 0.022 },
    { 4, CS_LLM_OP_MLP_DOWN_PROJ, 512, 0.2805 }, { 1, CS_LLM_OP_MLP_UP_PROJ, 1, 0.58 },
    { 1, CS_LLM_OP_MLP_DOWN_PROJ, 1, 0.29 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    assert_true(cs_llm_ops_time_ms(ops, want[i].tp, want[i].op, want[i].n, &ms, &e));
    if (fabs(ms - want[i].ms) > 1e-12)
      print_error("%s TP%d %d tokens: %.17g, expected %g\n", cs_llm_op_name(want[i].op),
                  want[i].tp, (int)want[i].n, ms, want[i].ms);
    assert_true(fabs(ms - want[i].ms) <= 1e-12);
  }
  cs_llm_ops_free(ops);
  g_free(opath);
  g_free(rel);
  cs_llm_models_free(set);
  g_free(mpath);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_plans),
    cmocka_unit_test(test_iteration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
