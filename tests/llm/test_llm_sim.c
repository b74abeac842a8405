/* Tests of the token-level simulation of LLM replicas (src/llm/llm_sim.c)
 * on made-up constant tables, so that every batch's time is known by hand:
 * a model of 2 layers whose nine operators add up to 1.0 ms a layer at any
 * token count (input_layernorm 0.5, the eight others 0.0625 each), decode
 * attention 0.25 ms and prefill attention 0.5 ms a layer everywhere. So a
 * batch of prefills only takes 2 x (1.0 + 0.5) = 3 ms, of decodes only
 * 2 x (1.0 + 0.25) = 2.5 ms, a mixed one 2 x 1.75 = 3.5 ms. Every expected
 * time below is worked out in the comments from those numbers and Vidur's
 * rules (llm_sched.h, llm_sim.h). */
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

static CsNetworkCurve *two_ms; /* the disaggregated tests' KV transfer */

static int setup(void **state)
{
  (void)state;
  return tiny_load();
}

static int teardown(void **state)
{
  (void)state;
  tiny_free();
  cs_network_curve_free(two_ms);
  return 0;
}

static void config(CsLlmSimConfig *c, CsLlmSchedPolicy pol, int64_t blocks, int replicas,
                   CsLlmRouter router)
{
  memset(c, 0, sizeof *c);
  c->exec = (CsLlmExecConfig){ .model = &TINY_MODEL, .ops = ops, .devices_per_node = 1, .tp = 1,
                               .pp = 1, .attention = att };
  cs_llm_sched_config_init(&c->sched, pol);
  c->sched.num_blocks = blocks;
  c->replicas = replicas;
  c->router = router;
}

static CsLlmSimResult *run(const CsLlmSimConfig *c, const CsLlmSimRequest *r, int n)
{
  GError *e = NULL;
  CsLlmSimResult *res = cs_llm_sim_run(c, r, n, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(res);
  return res;
}

static void assert_close(double a, double b)
{
  if (!(fabs(a - b) <= 1e-9 * fmax(1, fabs(b)))) {
    print_error("%.17g, expected %.17g\n", a, b);
    fail();
  }
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

static void expect_error(const CsLlmSimConfig *c, const CsLlmSimRequest *r, int n,
                         const char *want)
{
  GError *e = NULL;
  assert_null(cs_llm_sim_run(c, r, n, &e));
  assert_non_null(e);
  if (!strstr(e->message, want))
    print_error("missing \"%s\" in: %s\n", want, e->message);
  assert_non_null(strstr(e->message, want));
  g_error_free(e);
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
  c.exec.pp = 2;
  expect_error(&c, small, 1, "pipeline parallelism is not simulated yet");
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

/* Disaggregated: replica 0 the prefill pool, 1.. the decode pool, each vLLM
 * with 100 blocks (watermark 1) unless changed, every KV transfer a fixed 2
 * ms (a constant curve), as Splitwise's timeline has it: the prefill replica
 * emits the first token at its batch's end and keeps the blocks until the
 * transfer ends. */
static void disagg(CsLlmSimConfig *c, int prefill, int decode)
{
  config(c, CS_LLM_SCHED_VLLM, 100, prefill, CS_LLM_ROUTER_ROUND_ROBIN);
  c->decode_replicas = decode;
  c->decode_sched = c->sched;
  if (two_ms == NULL)
    two_ms = cs_network_curve_new_constant(2 * MS);
  c->kv_curve = two_ms;
  c->kv_bytes_per_token = 1000;
}

/* R0 at 0 (64 prompt, 3 output), R1 at 1 ms (64, 2); 1 prefill + 1 decode.
 * Prefill replica P (0), decode replica D (1):
 *  t=0    P: prefill [R0] 3 ms -> 3.
 *  t=1    R1 arrives, P busy.
 *  t=3    R0's prefill ends: first token (TTFT 3); it queues at D, which
 *         reserves its 4 blocks at once (kv wait 0): transfer 3 -> 5.
 *         P keeps its 4 blocks and takes [R1] (4 more) -> 6.
 *  t=5    R0 at D: P frees 4; D decodes [R0] (processed 65) 2.5 ms -> 7.5,
 *         a 5th block (65 > 64).
 *  t=6    R1's first token (TTFT 5); D reserves 4 (5 + 4 of 100): transfer
 *         6 -> 8, kv wait 0.
 *  t=7.5  R0's 2nd token; TBT 7.5 - 3 = 4.5 (the transfer and the wait
 *         for D included). [R0] -> 10.
 *  t=8    R1 at D: P frees 4; D busy, R1 joins its next batch.
 *  t=10   R0 finishes (TBT 2.5, e2e 10). [R1] (a 5th block) -> 12.5, R1
 *         finishes (TBT 12.5 - 6 = 6.5, e2e 11.5).
 * Busy: P 3 + 3 = 6 ms, D 3 x 2.5 = 7.5 ms of 12.5. Blocks: P 4 x 3 +
 * 8 x 2 + 4 x 3 = 40 block-ms, peak 8; D, reservations included: R0 4 x 2
 * + 5 x 5, R1 4 x 4 + 5 x 2.5: 61.5, peak 5 + 4 = 9 over [6, 10). */
static void test_disagg_timeline(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  const CsLlmSimRequest r[] = { { 10, 0, 64, 3 }, { 11, 1 * MS, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(res->n_replicas, 2);
  assert_int_equal(res->n_prefill_replicas, 1);
  assert_int_equal(a->replica, 0);
  assert_int_equal(a->decode_replica, 1);
  assert_int_equal(a->scheduled_ns, 0);
  assert_int_equal(a->first_token_ns, 3 * MS);
  assert_int_equal(a->transfer_start_ns, 3 * MS);
  assert_int_equal(a->transfer_end_ns, 5 * MS);
  assert_int_equal(a->completed_ns, 10 * MS);
  assert_int_equal(a->n_tbt, 2);
  assert_int_equal(a->tbt_sum_ns, 7 * MS);
  assert_int_equal(a->tbt_max_ns, 4500000);
  assert_int_equal(a->gap_max_ns, 4500000);
  assert_int_equal(a->final_decode_tokens, 3);
  assert_int_equal(b->scheduled_ns, 3 * MS);
  assert_int_equal(b->first_token_ns, 6 * MS);
  assert_int_equal(b->transfer_start_ns, 6 * MS);
  assert_int_equal(b->transfer_end_ns, 8 * MS);
  assert_int_equal(b->decode_replica, 1);
  assert_int_equal(b->completed_ns, 12500000);
  assert_int_equal(b->n_tbt, 1);
  assert_int_equal(b->tbt_max_ns, 6500000);
  assert_int_equal(res->makespan_ns, 12500000);
  assert_int_equal(res->replicas[0].busy_ns, 6 * MS);
  assert_int_equal(res->replicas[1].busy_ns, 7500000);
  assert_int_equal(res->replicas[0].peak_blocks, 8);
  assert_int_equal(res->replicas[1].peak_blocks, 9);
  assert_close(res->replicas[0].block_ns, 40.0 * MS);
  assert_close(res->replicas[1].block_ns, 61.5 * MS);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  assert_int_equal(s.transfer.n, 2);
  assert_close(s.transfer.p50, 2.0);
  assert_close(s.transfer.p99, 2.0);
  assert_close(s.ttft.p50, 4.0); /* 3 and 5 */
  assert_close(s.prefill_busy_util, 6.0 / 12.5);
  assert_close(s.decode_busy_util, 7.5 / 12.5);
  assert_close(s.prefill_kv_mean_util, 40.0 / (100 * 12.5));
  assert_close(s.decode_kv_mean_util, 61.5 / (100 * 12.5));
  /* TBT samples 4.5, 2.5, 6.5: p50 4.5. */
  assert_int_equal(s.tbt.n, 3);
  assert_close(s.tbt.p50, 4.5);
  /* D reserved each request's blocks at its prefill's end. */
  assert_int_equal(a->kv_wait_ns, 0);
  assert_int_equal(b->kv_wait_ns, 0);
  assert_int_equal(s.kv_wait.n, 2);
  assert_close(s.kv_wait.p99, 0.0);
  cs_llm_sim_result_free(res);
}

/* One output token: it finishes at its prefill's end (0 -> 3), frees its 4
 * blocks there, and never leaves the prefill replica. */
static void test_disagg_one_token(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  const CsLlmSimRequest r[] = { { 5, 0, 64, 1 } };
  CsLlmSimResult *res = run(&c, r, 1);
  const CsLlmSimRequestResult *a = &res->requests[0];
  assert_int_equal(a->first_token_ns, 3 * MS);
  assert_int_equal(a->completed_ns, 3 * MS);
  assert_int_equal(a->decode_replica, -1);
  assert_int_equal(a->transfer_start_ns, -1);
  assert_int_equal(a->kv_wait_ns, -1);
  assert_int_equal(a->transfer_end_ns, -1);
  assert_int_equal(res->replicas[1].n_batches, 0);
  assert_close(res->replicas[0].block_ns, 12.0 * MS);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  assert_int_equal(s.transfer.n, 0);
  cs_llm_sim_result_free(res);
}

/* Decode-side memory: D has 7 blocks (watermark int(0.07) = 0). R0 (64, 3)
 * and R1 (64, 2) both at 0. D reserves a request's blocks before its
 * transfer (llm_sim.h), so R1's KV cache waits on P:
 *  t=0    P: prefill [R0, R1] -> 3 (8 blocks).
 *  t=3    both first tokens; both queue at D. D reserves R0 (ceil(64/16) =
 *         4 blocks, 3 free): transfer 3 -> 5. R1 needs 4 of 3: it waits,
 *         its 4 blocks held on P.
 *  t=5    R0 at D: P frees its 4. D: [R0] (processed 65) -> 7.5, a 5th
 *         block (2 free).
 *  t=7.5  R0 has 66 of 67; R1 still does not fit (2 free). [R0] -> 10
 *         (66 <= 80: no new block).
 *  t=10   R0 finishes: 7 free. D reserves R1 (4, 3 free): kv wait 10 - 3
 *         = 7 ms, transfer 10 -> 12. D has nothing to run.
 *  t=12   R1 at D: P frees its 4. [R1] -> 14.5 (a 5th block), R1
 *         finishes.
 * R1's one TBT: 14.5 - 3 = 11.5 ms (7 waiting for blocks, 2 of transfer,
 * 2.5 of decode); R0's 4.5 and 2.5. Blocks: P 8 x 5 + 4 x 7 = 68
 * block-ms, peak 8; D 4 x 2 + 5 x 5 + 4 x 2 + 5 x 2.5 = 53.5, peak 5. No
 * restart. (Had the transfer started at the prefill's end, with R1 waiting
 * at D holding nothing, R1 would have finished at 12.5 and P freed its
 * blocks at 5.) */
static void test_disagg_decode_memory(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  c.decode_sched.num_blocks = 7;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 3 }, { 1, 0, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  const CsLlmSimRequestResult *a = &res->requests[0], *b = &res->requests[1];
  assert_int_equal(a->first_token_ns, 3 * MS);
  assert_int_equal(a->transfer_start_ns, 3 * MS);
  assert_int_equal(a->kv_wait_ns, 0);
  assert_int_equal(a->transfer_end_ns, 5 * MS);
  assert_int_equal(a->completed_ns, 10 * MS);
  assert_int_equal(a->tbt_sum_ns, 7 * MS);
  assert_int_equal(b->first_token_ns, 3 * MS);
  assert_int_equal(b->transfer_start_ns, 10 * MS);
  assert_int_equal(b->kv_wait_ns, 7 * MS);
  assert_int_equal(b->transfer_end_ns, 12 * MS);
  assert_int_equal(b->completed_ns, 14500000);
  assert_int_equal(b->n_tbt, 1);
  assert_int_equal(b->tbt_max_ns, 11500000);
  assert_int_equal(res->makespan_ns, 14500000);
  assert_int_equal(res->replicas[0].peak_blocks, 8);
  assert_int_equal(res->replicas[1].peak_blocks, 5);
  assert_close(res->replicas[0].block_ns, 68.0 * MS);
  assert_close(res->replicas[1].block_ns, 53.5 * MS);
  assert_int_equal(res->restarts, 0);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  /* Waits 0 and 7 ms: mean 3.5, p50 3.5, p99 0 + 0.99 x 7 = 6.93. */
  assert_int_equal(s.kv_wait.n, 2);
  assert_close(s.kv_wait.mean, 3.5);
  assert_close(s.kv_wait.p50, 3.5);
  assert_close(s.kv_wait.p99, 6.93);
  assert_close(s.transfer.p99, 2.0);
  cs_llm_sim_result_free(res);
}

/* The prefill replica's memory stays held while a transfer waits for decode
 * blocks, so a waiting prefill is admitted later. P has 10 blocks, D 9
 * (watermarks int(0.1) = int(0.09) = 0). R0 (96 prompt: 6 blocks, 2
 * output), R1 (64: 4, 2), R2 (128: 8, 2), all at 0:
 *  t=0     P admits R0 and R1 (10 blocks); R2 does not fit. [R0, R1] -> 3.
 *  t=3     both first tokens, both queue at D. D reserves R0 (6, 3 free):
 *          transfer 3 -> 5; R1 needs 4 of 3 and waits. P still holds 10:
 *          no batch.
 *  t=5     R0 at D: P frees 6 (6 free; R2 needs 8: it waits). D: [R0]
 *          (processed 97) -> 7.5, a 7th block (97 > 96; 2 free).
 *  t=7.5   R0 finishes (98), 9 free: D reserves R1 (4; kv wait 4.5):
 *          transfer 7.5 -> 9.5.
 *  t=9.5   R1 at D: P frees 4 (10 free) and admits R2: [R2] -> 12.5. D:
 *          [R1] (65) -> 12, a 5th block; R1 finishes at 12, 9 free.
 *  t=12.5  R2's first token (TTFT 12.5); D reserves its 8 at once: transfer
 *          12.5 -> 14.5.
 *  t=14.5  R2 at D: P frees 8. [R2] (129 > 128: a 9th block) -> 17, R2
 *          finishes.
 * Had R1's transfer started at 3 (ending at 5, its blocks then held by no
 * replica), P would have had all 10 blocks back at 5 and admitted R2 then.
 * TBT: R0 7.5 - 3 = 4.5, R1 12 - 3 = 9, R2 17 - 12.5 = 4.5. Busy: P 6 ms,
 * D 7.5 ms. Blocks: P 10 x 5 + 4 x 4.5 + 8 x 5 = 108 block-ms, peak 10; D
 * 6 x 2 + 7 x 2.5 + 4 x 2 + 5 x 2.5 + 0 x 0.5 + 8 x 2 + 9 x 2.5 = 88.5,
 * peak 9. Waits 0, 4.5, 0: mean 1.5, p50 0, p99 0.98 x 4.5 = 4.41. */
static void test_disagg_transfer_waits(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  c.sched.num_blocks = 10;
  c.decode_sched.num_blocks = 9;
  const CsLlmSimRequest r[] = { { 0, 0, 96, 2 }, { 1, 0, 64, 2 }, { 2, 0, 128, 2 } };
  CsLlmSimResult *res = run(&c, r, 3);
  const CsLlmSimRequestResult *q = res->requests;
  const int64_t start[] = { 3 * MS, 7500000, 12500000 };
  const int64_t wait[] = { 0, 4500000, 0 };
  const int64_t done[] = { 7500000, 12 * MS, 17 * MS };
  const int64_t tbt[] = { 4500000, 9 * MS, 4500000 };
  for (int j = 0; j < 3; j++) {
    assert_int_equal(q[j].decode_replica, 1);
    assert_int_equal(q[j].transfer_start_ns, start[j]);
    assert_int_equal(q[j].kv_wait_ns, wait[j]);
    assert_int_equal(q[j].transfer_end_ns, start[j] + 2 * MS);
    assert_int_equal(q[j].completed_ns, done[j]);
    assert_int_equal(q[j].n_tbt, 1);
    assert_int_equal(q[j].tbt_max_ns, tbt[j]);
  }
  assert_int_equal(q[1].first_token_ns, 3 * MS);
  assert_int_equal(q[2].scheduled_ns, 9500000);
  assert_int_equal(q[2].first_token_ns, 12500000);
  assert_int_equal(res->makespan_ns, 17 * MS);
  assert_int_equal(res->replicas[0].busy_ns, 6 * MS);
  assert_int_equal(res->replicas[1].busy_ns, 7500000);
  assert_int_equal(res->replicas[0].peak_blocks, 10);
  assert_int_equal(res->replicas[1].peak_blocks, 9);
  assert_close(res->replicas[0].block_ns, 108.0 * MS);
  assert_close(res->replicas[1].block_ns, 88.5 * MS);
  assert_int_equal(res->restarts, 0);
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  assert_int_equal(s.kv_wait.n, 3);
  assert_close(s.kv_wait.mean, 1.5);
  assert_close(s.kv_wait.p50, 0.0);
  assert_close(s.kv_wait.p99, 4.41);
  assert_close(s.ttft.p99, 3.0 + 0.98 * 9.5); /* 3, 3, 12.5 */
  cs_llm_sim_result_free(res);
}

/* Prefill-side memory: P has 8 blocks (watermark int(0.08) = 0), D 100.
 * R0, R1, R2 at 0, each 64 prompt (4 blocks) and 2 output:
 *  t=0    P admits R0 and R1 (8 blocks, 0 free); R2 does not fit. Prefill
 *         [R0, R1] 3 ms -> 3.
 *  t=3    both first tokens; transfers 3 -> 5 (R0 then R1), P keeping
 *         their 8 blocks. P is idle, R2 still does not fit: no batch, and
 *         nothing in flight on P.
 *  t=5    the transfers end: P frees 4 + 4, and only this wakes it (no
 *         arrival, no batch end on P): it admits R2, [R2] -> 8. D runs
 *         R0 and R1 (4 blocks each, reserved at 3), [R0, R1] 2.5 ms ->
 *         7.5, a 5th block each (65 > 64); both finish (TBT 7.5 - 3 = 4.5).
 *  t=8    R2's first token (TTFT 8), transfer 8 -> 10.
 *  t=10   P frees R2's 4. D runs R2: [R2] -> 12.5, R2 finishes (TBT
 *         12.5 - 8 = 4.5, e2e 12.5).
 * D reserves each request's 4 blocks at its prefill's end (100 free: no
 * wait), at 3 for R0 and R1, at 8 for R2.
 * Busy: P 3 + 3 = 6 ms, D 2 x 2.5 = 5 ms. Blocks: P 8 x 5 + 4 x 5 = 60
 * block-ms, peak 8; D 8 x 2 + 10 x 2.5 + 4 x 2 + 5 x 2.5 = 61.5, peak 10.
 * Were P not woken at 5, R2 would never run (an error: it never
 * finished). */
static void test_disagg_prefill_memory(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  c.sched.num_blocks = 8;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 }, { 1, 0, 64, 2 }, { 2, 0, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 3);
  for (int j = 0; j < 2; j++) {
    assert_int_equal(res->requests[j].scheduled_ns, 0);
    assert_int_equal(res->requests[j].first_token_ns, 3 * MS);
    assert_int_equal(res->requests[j].transfer_end_ns, 5 * MS);
    assert_int_equal(res->requests[j].completed_ns, 7500000);
    assert_int_equal(res->requests[j].tbt_max_ns, 4500000);
  }
  const CsLlmSimRequestResult *q = &res->requests[2];
  assert_int_equal(q->replica, 0);
  assert_int_equal(q->decode_replica, 1);
  assert_int_equal(q->scheduled_ns, 5 * MS);
  assert_int_equal(q->first_token_ns, 8 * MS);
  assert_int_equal(q->transfer_start_ns, 8 * MS);
  assert_int_equal(q->transfer_end_ns, 10 * MS);
  assert_int_equal(q->completed_ns, 12500000);
  assert_int_equal(q->n_tbt, 1);
  assert_int_equal(q->tbt_max_ns, 4500000);
  assert_int_equal(res->makespan_ns, 12500000);
  assert_int_equal(res->replicas[0].busy_ns, 6 * MS);
  assert_int_equal(res->replicas[0].n_batches, 2);
  assert_int_equal(res->replicas[1].busy_ns, 5 * MS);
  assert_int_equal(res->replicas[0].peak_blocks, 8);
  assert_int_equal(res->replicas[1].peak_blocks, 10);
  assert_close(res->replicas[0].block_ns, 60.0 * MS);
  assert_close(res->replicas[1].block_ns, 61.5 * MS);
  assert_int_equal(res->restarts, 0);
  cs_llm_sim_result_free(res);
}

/* 1 prefill + 2 decode replicas: R0 and R1 prefilled in one batch (0 -> 3)
 * start their transfers at 3 in batch order; R0 goes to replica 1 (both
 * empty, the lowest id), R1 to replica 2 (replica 1 has R0 on the way). */
static void test_disagg_decode_choice(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 2);
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 }, { 1, 0, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 2);
  assert_int_equal(res->requests[0].decode_replica, 1);
  assert_int_equal(res->requests[1].decode_replica, 2);
  /* Each decodes alone at 5: -> 7.5. */
  assert_int_equal(res->requests[0].completed_ns, 7500000);
  assert_int_equal(res->requests[1].completed_ns, 7500000);
  cs_llm_sim_result_free(res);
}

static void test_disagg_errors(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 2 } };
  disagg(&c, 1, 1);
  c.decode_sched.policy = CS_LLM_SCHED_STATIC;
  expect_error(&c, r, 1, "disaggregated: expected a decode scheduler of vllm, sarathi or orca");
  disagg(&c, 1, 1);
  c.kv_curve = NULL;
  expect_error(&c, r, 1, "disaggregated: expected a KV-transfer curve");
  disagg(&c, 1, 1);
  c.decode_replicas = -1;
  expect_error(&c, r, 1, "disaggregated: expected decode replicas >= 0");
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
    cmocka_unit_test(test_routing),           cmocka_unit_test(test_same_instant),
    cmocka_unit_test(test_errors),            cmocka_unit_test(test_sarathi_chunks),
    cmocka_unit_test(test_disagg_timeline),   cmocka_unit_test(test_disagg_one_token),
    cmocka_unit_test(test_disagg_decode_memory), cmocka_unit_test(test_disagg_transfer_waits),
    cmocka_unit_test(test_disagg_prefill_memory),
    cmocka_unit_test(test_disagg_decode_choice),
    cmocka_unit_test(test_disagg_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
