/* Pipeline stages through time (src/llm/llm_sim.c with pp > 1) on the
 * tiny made-up tables (llm_tiny.h): 2 layers, so at PP2 one layer a stage,
 * and a send_recv of 0.5 ms at any size (the fixture below). A stage of a
 * batch of prefills only takes 1.0 + 0.5 = 1.5 ms, of decodes only 1.0 +
 * 0.25 = 1.25 ms; the first stage adds the send to the second: 2.0 and
 * 1.75 ms. Every time below is worked out by hand from those numbers and
 * Vidur's events (llm_sim.h): a stage runs one batch at a time, FIFO; a
 * batch's tokens appear when it leaves the last stage; a replica forms
 * batches while fewer than 2 are in flight, at an arrival or a batch's
 * end. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"
#include "llm/llm_sim.h"

#define MS INT64_C(1000000)
#define US INT64_C(1000)
#include "llm_tiny.h"
#include "llm_sim_check.h"

static const char COLL_JSON[] =
  "{\"format\": \"clustersim-llm-collectives\", \"version\": 1, \"source\": \"test fixture\",\n"
  " \"node\": \"tiny_pair\", \"curves\": [\n"
  "  {\"collective\": \"send_recv\", \"num_workers\": 2, \"devices_per_node\": 2,\n"
  "   \"size_bytes\": [1, 1073741824], \"median_ms\": [0.5, 0.5]}]}\n";

static CsLlmCollectives *coll;

static int setup(void **state)
{
  (void)state;
  GError *e = NULL;
  coll = cs_llm_collectives_load_data(COLL_JSON, "coll.json", &e);
  if (e)
    print_error("%s\n", e->message);
  g_clear_error(&e);
  return coll && tiny_load() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
  (void)state;
  tiny_free();
  cs_llm_collectives_free(coll);
  return 0;
}

/* One replica of 2 stages on a node of 2 devices. */
static void config_pp2(CsLlmSimConfig *c, int cap)
{
  config(c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c->exec.pp = 2;
  c->exec.devices_per_node = 2;
  c->exec.collectives = coll;
  c->sched.num_stages = 2;
  c->sched.batch_size_cap = cap;
}

/* vLLM, 2 stages, 100 blocks: R0 at 0 (64 prompt, 3 output), R1 at 0.5 ms
 * (64, 2). Bk is the k-th batch; "s0 2.0-4.0" its time in stage 0.
 *  t=0     R0 arrives: B1 = prefill [R0], s0 0-2.0. No second batch: none
 *          waits, none runs.
 *  t=0.5   R1 arrives; 1 batch in flight < 2: B2 = prefill [R1], queued at
 *          s0 (busy).
 *  t=2.0   B1 leaves s0, which takes B2: s0 2.0-4.0; B1 s1 2.0-3.5.
 *  t=3.5   B1 ends: R0's first token (processed 65). B3 = decode [R0] (a
 *          5th block: 65 > 64), queued at s0 (B2 until 4.0).
 *  t=4.0   s0 takes B3: 4.0-5.75; B2 s1 4.0-5.5.
 *  t=5.5   B2 ends: R1's first token. B4 = decode [R1] (5th block), queued.
 *  t=5.75  s0 takes B4: 5.75-7.5; B3 s1 5.75-7.0.
 *  t=7.0   B3 ends: R0's 2nd token, TBT 7.0 - 3.5 = 3.5. B5 = decode [R0],
 *          queued.
 *  t=7.5   s0 takes B5: 7.5-9.25; B4 s1 7.5-8.75.
 *  t=8.75  B4 ends: R1 (64 + 2) finishes, TBT 8.75 - 5.5 = 3.25. No batch:
 *          R0 is in flight.
 *  t=9.25  B5 s1 9.25-10.5.
 *  t=10.5  B5 ends: R0 finishes, TBT 10.5 - 7.0 = 3.5.
 * (One stage would take 3 ms and 2.5 ms a batch: R0 done at 11.)
 * Busy: s0 2.0 + 2.0 + 3 x 1.75 = 9.25, s1 1.5 + 1.5 + 3 x 1.25 = 6.75;
 * a device's mean (9.25 + 6.75) / 2 = 8.0 ms. Blocks: 4 over 0-0.5, 8
 * over 0.5-3.5, 9 over 3.5-5.5, 10 over 5.5-8.75, 5 over 8.75-10.5: 2 + 24
 * + 18 + 32.5 + 8.75 = 85.25 block-ms, peak 10. */
static void test_two_stages_timeline(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config_pp2(&c, 128);
  const CsLlmSimRequest r[] = { { 10, 0, 64, 3 }, { 11, 500 * US, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(a->scheduled_ns, 0);
  assert_int_equal(a->first_token_ns, 3500 * US);
  assert_int_equal(a->completed_ns, 10500 * US);
  assert_int_equal(a->n_tbt, 2);
  assert_int_equal(a->tbt_sum_ns, 7 * MS);
  assert_int_equal(a->tbt_max_ns, 3500 * US);
  assert_int_equal(b->scheduled_ns, 500 * US);
  assert_int_equal(b->first_token_ns, 5500 * US);
  assert_int_equal(b->completed_ns, 8750 * US);
  assert_int_equal(b->n_tbt, 1);
  assert_int_equal(b->tbt_sum_ns, 3250 * US);
  assert_int_equal(res->n_batches, 5);
  assert_int_equal(res->makespan_ns, 10500 * US);
  assert_int_equal(res->replicas[0].busy_ns, 8 * MS);
  assert_int_equal(res->replicas[0].peak_blocks, 10);
  assert_close(res->replicas[0].block_ns, 85.25 * MS);
  /* One device's FLOPs, each batch once (cs_llm_exec_batch_flops: a stage
   * of 1 layer, 640 parameters = 8 x 4 x 6 + 8 x 4 x 2 + 3 x 8 x 16): a
   * prefill of 64, 2 x 64 x 640 + 4 x 1 x 2 x 4 x 64 x 64 = 212,992 (B1,
   * B2); a decode after 65, 1,280 + 32 x 66 = 3,392 (B3, B4); after 66,
   * 1,280 + 32 x 67 = 3,424 (B5): 436,192. */
  assert_close(res->replicas[0].flops, 436192);
  /* TBT samples in the order recorded: R0's at 7.0, R1's at 8.75, R0's at
   * 10.5. */
  assert_int_equal(res->tbt_ns->len, 3);
  assert_int_equal(g_array_index(res->tbt_ns, int64_t, 0), 3500 * US);
  assert_int_equal(g_array_index(res->tbt_ns, int64_t, 1), 3250 * US);
  assert_int_equal(g_array_index(res->tbt_ns, int64_t, 2), 3500 * US);
  cs_llm_sim_result_free(res);
}

/* Two batches formed at one instant (Vidur's on_schedule loop): cap 2, so
 * vLLM's max_micro_batch_size is 1; R0 and R1 (64, 2) both at 0.
 *  t=0     B1 = prefill [R0], s0 0-2.0; B2 = prefill [R1] at once, queued.
 *  t=2.0   s0 B2 2.0-4.0; B1 s1 2.0-3.5.
 *  t=3.5   B1 ends: R0's first token; B3 = decode [R0], queued.
 *  t=4.0   s0 B3 4.0-5.75; B2 s1 4.0-5.5.
 *  t=5.5   B2 ends: R1's first token; B4 = decode [R1], queued.
 *  t=5.75  s0 B4 5.75-7.5; B3 s1 5.75-7.0.
 *  t=7.0   B3 ends: R0 finishes (TBT 3.5).
 *  t=7.5   B4 s1 7.5-8.75.
 *  t=8.75  B4 ends: R1 finishes (TBT 3.25). */
static void test_two_batches_at_once(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config_pp2(&c, 2);
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 }, { 1, 0, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_int_equal(res->requests[0].first_token_ns, 3500 * US);
  assert_int_equal(res->requests[1].scheduled_ns, 0);
  assert_int_equal(res->requests[1].first_token_ns, 5500 * US);
  assert_int_equal(res->requests[0].completed_ns, 7 * MS);
  assert_int_equal(res->requests[1].completed_ns, 8750 * US);
  assert_int_equal(res->n_batches, 4);
  cs_llm_sim_result_free(res);
}

/* Two scheduling passes at one instant (Vidur's two ReplicaScheduleEvents:
 * one for the arrivals, one for the batch that ended): vLLM, 2 stages, 9
 * blocks of 16, no watermark; R0 at 0 (79 prompt: 5 blocks, 3 output), R1
 * at 3.5 ms (64 prompt: 4 blocks, 1 output).
 *  t=0     B1 = prefill [R0], s0 0-2.0, s1 2.0-3.5.
 *  t=3.5   B1 ends (R0's first token, processed 80); R1 arrives. Pass 1:
 *          B2 = prefill [R1] (4 blocks: none free), s0 3.5-5.5; then R0's
 *          decode finds no free block and restarts itself (prefill := 80,
 *          its 5 blocks freed): no batch. Pass 2: B3 = R0's re-prefill of
 *          80 (5 blocks), queued at s0.
 *  t=5.5   s0 B3 5.5-7.5; B2 s1 5.5-7.0.
 *  t=7.0   B2 ends: R1's only token; it finishes (4 blocks free).
 *  t=7.5   B3 s1 7.5-9.0.
 *  t=9.0   B3 ends: R0's 2nd token (no TBT: a re-prefill). B4 = decode [R0]
 *          (a 6th block: 81 > 80), s0 9.0-10.75, s1 10.75-12.0.
 *  t=12.0  B4 ends: R0 finishes, TBT 12.0 - 9.0 = 3.0.
 * (With one pass at 3.5, R0 would re-prefill only at 7.0 and finish at
 * 13.5.) */
static void test_two_passes_at_an_instant(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config_pp2(&c, 128);
  c.sched.num_blocks = 9;
  c.sched.watermark_blocks_fraction = 0;
  const CsLlmSimRequest r[] = { { 0, 0, 79, 3 }, { 1, 3500 * US, 64, 1 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(a->first_token_ns, 3500 * US);
  assert_int_equal(a->restarts, 1);
  assert_int_equal(a->completed_ns, 12 * MS);
  assert_int_equal(a->n_tbt, 1);
  assert_int_equal(a->tbt_sum_ns, 3 * MS);
  assert_int_equal(b->scheduled_ns, 3500 * US);
  assert_int_equal(b->completed_ns, 7 * MS);
  assert_int_equal(res->n_batches, 4);
  cs_llm_sim_result_free(res);
}

/* What is refused: stages the scheduler does not have, and disaggregated
 * serving with stages. */
static void test_stage_errors(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config_pp2(&c, 128);
  c.sched.num_stages = 1;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 } };
  expect_error(&c, r, 1, "expected the schedulers' num_stages to be the same (got 1)");
  c.sched.num_stages = 2;
  c.decode_replicas = 1;
  c.decode_sched = c.sched;
  expect_error(&c, r, 1, "pipeline parallelism (2 stages) is not simulated with "
                         "disaggregated serving");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_two_stages_timeline),
    cmocka_unit_test(test_two_batches_at_once),
    cmocka_unit_test(test_two_passes_at_an_instant),
    cmocka_unit_test(test_stage_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
