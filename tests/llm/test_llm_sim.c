/* Tests of the token-level simulation of LLM replicas (src/llm/llm_sim.c)
 * on made-up constant tables, so that every batch's time is known by hand:
 * a model of 2 layers whose nine operators add up to 1.0 ms a layer at any
 * token count (input_layernorm 0.5, the eight others 0.0625 each), decode
 * attention 0.25 ms and prefill attention 0.5 ms a layer everywhere. So a
 * batch of prefills only takes 2 x (1.0 + 0.5) = 3 ms, of decodes only
 * 2 x (1.0 + 0.25) = 2.5 ms, a mixed one 2 x 1.75 = 3.5 ms. Every expected
 * time below is worked out in the comments from those numbers and Vidur's
 * rules (llm_sched.h, llm_sim.h). Disaggregated serving's tests are
 * test_llm_sim_disagg.c's. */
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
#include "llm_tiny.h"
#include "llm_sim_check.h"

static int setup(void **state)
{
  (void)state;
  return tiny_load();
}

static int teardown(void **state)
{
  (void)state;
  tiny_free();
  return 0;
}

/* Two requests on one vLLM replica, 100 blocks (watermark 1):
 * R0 at 0 (64 prompt, 3 output), R1 at 1 ms (64, 2).
 *  t=0    R0 arrives; prefill [R0] 3 ms -> 3.
 *  t=1    R1 arrives, the replica is busy.
 *  t=3    R0's first token (processed 65). vLLM prefill first: [R1] -> 6.
 *  t=6    R1's first token. Decode [R0, R1] (by arrival) 2.5 ms -> 8.5;
 *         R1 (64 + 2 processed) finishes at 8.5.
 *  t=8.5  decode [R0] -> 11; R0 finishes.
 * TTFT: R0 3, R1 6 - 1 = 5; e2e 11 and 7.5. TBT (Vidur's: the end of a
 * decode batch minus the end of the request's previous batch): R0 8.5 - 3
 * = 5.5 (R1's prefill waited on included) and 11 - 8.5 = 2.5; R1 8.5 - 6
 * = 2.5. KV blocks: R0 4 at 0, R1 4 at 3, at 6 each a 5th (processed 65 >
 * 64), R1's 5 freed at 8.5, R0's at 11: 4 x 3 + 8 x 3 + 10 x 2.5 + 5 x 2.5
 * = 73.5 block-ms, mean 73.5 / (100 x 11), peak 10. */
static void test_two_requests_vllm(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  const CsLlmSimRequest r[] = { { 10, 0, 64, 3 }, { 11, 1 * MS, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(a->id, 10);
  assert_int_equal(a->scheduled_ns, 0);
  assert_int_equal(a->first_token_ns, 3 * MS);
  assert_int_equal(a->completed_ns, 11 * MS);
  assert_int_equal(b->scheduled_ns, 3 * MS);
  assert_int_equal(b->first_token_ns, 6 * MS);
  assert_int_equal(b->completed_ns, 8500000);
  assert_int_equal(a->n_tbt, 2);
  assert_int_equal(a->tbt_max_ns, 5500000);
  assert_int_equal(a->tbt_sum_ns, 8 * MS);
  assert_int_equal(b->n_tbt, 1);
  assert_int_equal(b->tbt_sum_ns, 2500000);
  assert_int_equal(res->n_batches, 4);
  assert_int_equal(res->makespan_ns, 11 * MS);
  assert_int_equal(res->replicas[0].peak_blocks, 10);
  assert_int_equal(res->replicas[0].busy_ns, 11 * MS);
  assert_int_equal(res->restarts, 0);
  /* TBT samples in the order recorded: R0's and R1's at 8.5, R0's at 11. */
  assert_int_equal(res->tbt_ns->len, 3);
  assert_int_equal(g_array_index(res->tbt_ns, int64_t, 0), 5500000);
  assert_int_equal(g_array_index(res->tbt_ns, int64_t, 1), 2500000);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  /* Linear quantiles: TTFT {3, 5}: p50 4, p90 3 + 0.9 x 2 = 4.8, p99 4.98;
   * TBT {2.5, 2.5, 5.5}: p50 2.5, p90 at h = 1.8: 2.5 + 0.8 x 3 = 4.9; e2e
   * {7.5, 11}: p50 9.25. 5 output tokens in 11 ms. */
  assert_close(s.ttft.p50, 4);
  assert_close(s.ttft.p90, 4.8);
  assert_close(s.ttft.p99, 4.98);
  assert_close(s.tbt.p50, 2.5);
  assert_close(s.tbt.p90, 4.9);
  assert_close(s.e2e.p50, 9.25);
  assert_close(s.output_tokens_per_s, 5 / 0.011);
  assert_close(s.kv_peak_util, 0.1);
  assert_close(s.kv_mean_util, 73.5 / 1100);
  /* Decode time per token (completed - first token) / decode tokens: R0
   * 8 / 3, R1 2.5 / 2; mean (8/3 + 1.25) / 2. */
  assert_close(s.decode_per_token.mean, (8.0 / 3 + 1.25) / 2);
  cs_llm_sim_result_free(res);
}

/* A preemption under vLLM, 9 blocks, no watermark: R0 and R1 at 0, 64
 * prompt and 20 output each (6 blocks at most: ceil(83 / 16)).
 *  t=0    prefill [R0, R1] (8 blocks) -> 3; both first tokens at 3.
 *  t=3    decode: R0 takes the last free block (processed 65 > 64); R1
 *         finds none free and, no other request left to preempt, restarts
 *         itself (prefill := 65, decode := 19, its 4 blocks freed).
 *         Decode [R0] -> 5.5. Its re-prefill needs 5 blocks, 4 are free:
 *         R0 decodes alone, 2.5 ms each; its k-th decode ends at 3 + 2.5k,
 *         its 19th (processed 84) at 50.5 ms, when it finishes (a 6th
 *         block at k = 17, processed 81 > 80).
 *  t=50.5 re-prefill [R1] of 65 tokens -> 53.5 (its token number 2; no
 *         TBT), then 18 decodes to processed 84: done at 53.5 + 45 = 98.5.
 * R1: TTFT 3 (kept across the restart), e2e 98.5, 1 restart, final decode
 * tokens 19; its TBTs all 2.5 ms (18 of them); the gap before its
 * re-prefill's token 53.5 - 3 = 50.5 ms. Peak blocks 8 (0 to 3). */
static void test_preemption_vllm(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 9, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.sched.watermark_blocks_fraction = 0;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 20 }, { 1, 0, 64, 20 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(a->first_token_ns, 3 * MS);
  assert_int_equal(a->completed_ns, 50500000);
  assert_int_equal(a->restarts, 0);
  assert_int_equal(a->n_tbt, 19);
  assert_int_equal(a->tbt_max_ns, 2500000);
  assert_int_equal(b->first_token_ns, 3 * MS);
  assert_int_equal(b->scheduled_ns, 0);
  assert_int_equal(b->completed_ns, 98500000);
  assert_int_equal(b->restarts, 1);
  assert_int_equal(b->final_decode_tokens, 19);
  assert_int_equal(b->n_tbt, 18);
  assert_int_equal(b->tbt_sum_ns, 18 * 2500000);
  assert_int_equal(b->gap_max_ns, 50500000);
  assert_int_equal(res->restarts, 1);
  assert_int_equal(res->replicas[0].peak_blocks, 8);
  cs_llm_sim_result_free(res);
}

/* A request that restarts itself with nothing else on its replica (vLLM
 * asks a decode for one free block even when it needs none): 5 blocks of
 * 16, no watermark, R: 64 prompt, 17 output (81 tokens, at most 80 held:
 * 5 blocks). Prefill [R] (4 blocks, processed 65); decode [R] takes the 5th
 * block (65 > 64; processed 66); then no block is free: R restarts itself
 * (prefill := 66, decode := 15), and the batch is empty. Its blocks are
 * free then, so its re-prefill of 66 (5 blocks) runs at once; and so on:
 * each re-prefill gives one token and the next decode restarts it again,
 * at processed 66, 67, ..., 80: 15 restarts, 17 batches (prefill, decode,
 * 15 re-prefills) for 17 output tokens, the replica never idle while it
 * holds R (busy = makespan). Before the fix the replica waited for an
 * event that never came: "request 0 never finished". */
static void test_restart_itself_alone(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 5, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.sched.watermark_blocks_fraction = 0;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 17 } };
  CsLlmSimResult *res = run(&c, r, 1);
  assert_int_equal(res->requests[0].restarts, 15);
  assert_int_equal(res->restarts, 15);
  assert_int_equal(res->n_batches, 17);
  assert_int_equal(res->output_tokens, 17);
  assert_int_equal(res->replicas[0].busy_ns, res->makespan_ns);
  assert_int_equal(res->requests[0].completed_ns, res->makespan_ns);
  cs_llm_sim_result_free(res);
}

/* Routing. 2 replicas; at 0: A (3000 prompt), B (64), C (3000), X (64); at
 * 1 ms: D, E (64 each); 1 output token each, 1000 blocks. Round robin:
 * A 0, B 1, C 0, X 1, D 0, E 1. lor: A to 0 (tie: the lowest id), B to 1
 * (0 has 1 waiting), C to 0 (tie 1-1), X to 1; at 0 replica 0 admits A but
 * not C (vLLM's padded budget: 2 x 3000 > 4096), replica 1 both; at 1 ms
 * replica 0 has 1 waiting, replica 1 none: D to 1, then E to 0 (tie).
 * least_outstanding counts the admitted too: at 0 the same as lor (nothing
 * admitted yet when the four are routed); at 1 ms replica 0 has A admitted
 * and C waiting, replica 1 B and X admitted, 2 each: D to 0 (tie), then E
 * to 1 (3 against 2). */
static void test_routing(void **state)
{
  (void)state;
  const CsLlmSimRequest r[] = { { 0, 0, 3000, 1 }, { 1, 0, 64, 1 }, { 2, 0, 3000, 1 },
                                { 3, 0, 64, 1 },   { 4, MS, 64, 1 }, { 5, MS, 64, 1 } };
  const int want[3][6] = { { 0, 1, 0, 1, 0, 1 }, { 0, 1, 0, 1, 1, 0 }, { 0, 1, 0, 1, 0, 1 } };
  const CsLlmRouter routers[3] = { CS_LLM_ROUTER_ROUND_ROBIN, CS_LLM_ROUTER_LOR,
                                   CS_LLM_ROUTER_LEAST_OUTSTANDING };
  for (int k = 0; k < 3; k++) {
    CsLlmSimConfig c;
    config(&c, CS_LLM_SCHED_VLLM, 1000, 2, routers[k]);
    CsLlmSimResult *res = run(&c, r, 6);
    for (int j = 0; j < 6; j++)
      assert_int_equal(res->requests[j].replica, want[k][j]);
    cs_llm_sim_result_free(res);
  }
  /* Under lor, C waits for A's prefill (0 -> 3) and its own ends at 6; D
   * arrives at 1 ms on replica 1, busy with B and X's prefill until 3: D's
   * prefill 3 -> 6 (with E's? No: E went to replica 0, with C). */
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 1000, 2, CS_LLM_ROUTER_LOR);
  CsLlmSimResult *res = run(&c, r, 6);
  assert_int_equal(res->requests[2].completed_ns, 6 * MS);
  assert_int_equal(res->requests[4].scheduled_ns, 3 * MS);
  assert_int_equal(res->requests[4].completed_ns, 6 * MS);
  cs_llm_sim_result_free(res);
  assert_int_equal(cs_llm_router_parse("lor", &c.router, NULL), TRUE);
  GError *e = NULL;
  assert_false(cs_llm_router_parse("random", &c.router, &e));
  assert_non_null(strstr(e->message, "\"random\": expected round_robin, lor or least_outstanding"));
  g_clear_error(&e);
  assert_true(cs_llm_router_parse("least_outstanding", &c.router, &e));
  assert_int_equal(c.router, CS_LLM_ROUTER_LEAST_OUTSTANDING);
  g_clear_error(&e);
}

/* A request arriving exactly when a batch ends is in the queue when the
 * replica forms its next batch (llm_sim.h, the order at one instant): R0 at
 * 0 (64, 2), R1 at 3 ms (64, 1). At 3 R0's prefill ends and R1 arrives;
 * vLLM puts the prefill first: [R1] 3 -> 6, then R0's decode 6 -> 8.5. */
static void test_same_instant(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 }, { 1, 3 * MS, 64, 1 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_int_equal(res->requests[1].scheduled_ns, 3 * MS);
  assert_int_equal(res->requests[1].completed_ns, 6 * MS);
  assert_int_equal(res->requests[0].completed_ns, 8500000);
  assert_int_equal(res->requests[0].tbt_max_ns, 5500000);
  cs_llm_sim_result_free(res);
}

static void test_errors(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  /* A request the scheduler refuses is an error naming it. */
  const CsLlmSimRequest big[] = { { 0, 0, 64, 1 }, { 7, 1, 4000, 200 } };
  expect_error(&c, big, 2, "LLM request 7: prompt + output = 4200 tokens, expected <= "
                           "max_tokens (4096)");
  /* A batch the table cannot time (chunk 32 < the grid's 64) names its shape. */
  const CsLlmSimRequest small[] = { { 3, 0, 32, 1 } };
  expect_error(&c, small, 1, "replica 0, batch at 0.000000000 s: 1 requests (1 prefilling, 0 "
                             "decoding), 32 tokens (3: prefill 32 after 0) cannot be timed: ");
  const CsLlmSimRequest late[] = { { 0, 5, 64, 1 }, { 1, 4, 64, 1 } };
  expect_error(&c, late, 2, "request 1 (id 1): expected an arrival no earlier than the "
                            "previous request's");
  c.exec.pp = 2; /* with a scheduler of 1 stage */
  expect_error(&c, small, 1, "2 pipeline stage(s): expected the schedulers' num_stages to be "
                             "the same (got 1)");
  c.exec.pp = 1;
  c.replicas = 0;
  expect_error(&c, small, 1, "replicas: expected at least 1, got 0");
}

/* Sarathi-Serve with chunk 128: R0 (256 prompt, 2 output) at 0, R1 (255,
 * 1) at 1 ms.
 *  t=0    [R0 chunk 128] -> 3.
 *  t=3    R0's partial prefill takes the whole budget: [R0 128] -> 6, R1
 *         waits; R0's first token at 6.
 *  t=6    R0's decode (1 token of the budget), then R1 new with the 127
 *         left: a mixed batch, 3.5 ms -> 9.5; R0 finishes.
 *  t=9.5  R1's last 128: [R1 128] -> 12.5, its only token. */
static void test_sarathi_chunks(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_SARATHI, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.sched.chunk_size = 128;
  const CsLlmSimRequest r[] = { { 0, 0, 256, 2 }, { 1, MS, 255, 1 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_int_equal(res->requests[0].first_token_ns, 6 * MS);
  assert_int_equal(res->requests[0].completed_ns, 9500000);
  assert_int_equal(res->requests[1].scheduled_ns, 6 * MS);
  assert_int_equal(res->requests[1].completed_ns, 12500000);
  cs_llm_sim_result_free(res);
}

/* The series over time (CsLlmBin) of test_two_requests_vllm's timeline in
 * 5 ms bins. KV blocks 4 over [0, 3), 8 over [3, 6), 10 over [6, 8.5), 5
 * over [8.5, 11): bin 0 [0, 5) 4 x 3 + 8 x 2 = 28 block-ms, bin 1 [5, 10)
 * 8 x 1 + 10 x 2.5 + 5 x 1.5 = 40.5, bin 2 [10, 15) 5 x 1 = 5 (73.5 in
 * all). Batches start at 0, 3 (bin 0), 6, 8.5 (bin 1). Output tokens at 3
 * (R0's first), 6 (R1's first), 8.5 (two decodes), 11: 1, 3, 1. Arrivals
 * 0 and 1 ms (bin 0), completions 8.5 (bin 1) and 11 (bin 2). Then 1 ns
 * bins: the width doubles while 11 ms would pass CS_LLM_SERIES_MAX bins,
 * to 256 ns (11e6 / 128 = 85,938 bins, / 256 = 42,969), and the bins still
 * add up to the totals. */
static void test_series_by_hand(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.series_bin_ns = 5 * MS;
  const CsLlmSimRequest r[] = { { 10, 0, 64, 3 }, { 11, 1 * MS, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_non_null(res->series);
  assert_int_equal(res->series_bin_ns, 5 * MS);
  assert_int_equal(res->series->len, 3);
  assert_int_equal(res->total_blocks, 100);
  const CsLlmBin *b = (const CsLlmBin *)res->series->data;
  const double block_ms[] = { 28, 40.5, 5 };
  const int64_t batches[] = { 2, 2, 0 }, tokens[] = { 1, 3, 1 }, arrivals[] = { 2, 0, 0 },
                completions[] = { 0, 1, 1 };
  for (int k = 0; k < 3; k++) {
    assert_close(b[k].block_ns, block_ms[k] * MS);
    assert_int_equal(b[k].batches, batches[k]);
    assert_int_equal(b[k].tokens, tokens[k]);
    assert_int_equal(b[k].arrivals, arrivals[k]);
    assert_int_equal(b[k].completions, completions[k]);
    assert_int_equal(b[k].restarts, 0);
  }
  cs_llm_sim_result_free(res);

  c.series_bin_ns = 1;
  res = run(&c, r, 2);
  assert_int_equal(res->series_bin_ns, 256);
  assert_true(res->series->len <= CS_LLM_SERIES_MAX);
  double blocks = 0;
  int64_t sums[5] = { 0 };
  for (guint k = 0; k < res->series->len; k++) {
    const CsLlmBin *x = &g_array_index(res->series, CsLlmBin, k);
    blocks += x->block_ns;
    sums[0] += x->batches;
    sums[1] += x->tokens;
    sums[2] += x->arrivals;
    sums[3] += x->completions;
    sums[4] += x->restarts;
  }
  assert_close(blocks, 73.5 * MS);
  assert_int_equal(sums[0], 4);
  assert_int_equal(sums[1], 5);
  assert_int_equal(sums[2], 2);
  assert_int_equal(sums[3], 2);
  assert_int_equal(sums[4], 0);
  /* R1's prefill batch starts at 3 ms: bin 3e6 / 256 = 11,718. */
  assert_int_equal(g_array_index(res->series, CsLlmBin, 11718).batches, 1);
  cs_llm_sim_result_free(res);
}

/* test_preemption_vllm's restart (R1 at 3 ms, as the decode of [R0] is
 * formed) lands in bin 0 of 5 ms; no other. */
static void test_series_restart(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 9, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.sched.watermark_blocks_fraction = 0;
  c.series_bin_ns = 5 * MS;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 20 }, { 1, 0, 64, 20 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_int_equal(res->restarts, 1);
  for (guint k = 0; k < res->series->len; k++)
    assert_int_equal(g_array_index(res->series, CsLlmBin, k).restarts, k == 0);
  /* 98.5 ms: bins 0 to 19. */
  assert_int_equal(res->series->len, 20);
  cs_llm_sim_result_free(res);
}

/* The model FLOPs utilisation of test_two_requests_vllm's timeline (Vidur's
 * count, vidur/utils/mfu_calculator.py). The tiny model: head_dim 8 / 2 =
 * 4; params per layer 8 x 4 x (2 + 2 x 2) + 8 x 4 x 2 + 3 x 8 x 16 / 1 =
 * 640, x 2 layers = 1,280; attention 4 x 2 layers x 2 heads x 4 = 64 per
 * (q x (q + processed)). Batches: R0's prefill of 64 after 0: 2 x 64 x
 * 1,280 + 64 x 64 x 64 = 425,984; R1's the same; the decode [R0, R1] of one
 * token each after 65: 2 x (2 x 1,280 + 64 x 66) = 13,568; [R0] after 66:
 * 2,560 + 64 x 67 = 6,848. 872,384 FLOPs over 11 ms (the makespan, all of
 * it busy) at a peak of 1e9 FLOP/s: 872,384 / 1.1e7. */
static void test_mfu_by_hand(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  config(&c, CS_LLM_SCHED_VLLM, 100, 1, CS_LLM_ROUTER_ROUND_ROBIN);
  c.device_flops_per_s = 1e9;
  const CsLlmSimRequest r[] = { { 10, 0, 64, 3 }, { 11, 1 * MS, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_close(res->replicas[0].flops, 872384);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  assert_close(s.mfu, 872384 / 1.1e7);
  assert_close(s.mfu_busy, 872384 / 1.1e7);
  cs_llm_sim_result_free(res);
  c.device_flops_per_s = 0; /* no peak: no MFU */
  res = run(&c, r, 2);
  cs_llm_sim_summary(res, &s);
  assert_true(isnan(s.mfu) && isnan(s.mfu_busy));
  cs_llm_sim_result_free(res);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_two_requests_vllm),
    cmocka_unit_test(test_series_by_hand),
    cmocka_unit_test(test_mfu_by_hand),
    cmocka_unit_test(test_series_restart), cmocka_unit_test(test_preemption_vllm),
    cmocka_unit_test(test_restart_itself_alone),
    cmocka_unit_test(test_routing),           cmocka_unit_test(test_same_instant),
    cmocka_unit_test(test_errors),            cmocka_unit_test(test_sarathi_chunks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
