/* Tests of disaggregated prefill and decode in the token-level simulation
 * (src/llm/llm_sim.c; docs/llm.md, "Disaggregated prefill and decode") on
 * the made-up constant tables of test_llm_sim.c (llm_tiny.h): a batch of
 * prefills only takes 3 ms, of decodes only 2.5 ms, every KV transfer a
 * fixed 2 ms. Every expected time below is worked out in the comments from
 * those numbers and the rules of llm_sched.h and llm_sim.h. */
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

static CsNetworkCurve *two_ms; /* the KV transfer */

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

/* A restart on the decode replica frees blocks for a pending transfer at
 * once (llm_sim.h's order at an instant, 4). D has 9 blocks (watermark 0).
 * R0 (64, 3), R1 (64, 2), R2 (64, 2), all at 0:
 *  t=0    P: prefill [R0, R1, R2] -> 3.
 *  t=3    all three queue at D: R0 and R1 reserved (4 + 4 of 9), transfers
 *         3 -> 5; R2 (4 blocks) waits, 1 free.
 *  t=5    both at D. Step 3: 1 free, nothing for R2. Step 4: D decodes R0
 *         (1 free: a 5th block, 65 > 64; 0 free), then R1 needs free >= 1
 *         with none and no other request left: R1 restarts itself (its 4
 *         freed; prefill := 65, decode := 1): [R0] -> 7.5. D reserves
 *         again: R2 fits (4 of 4): transfer 5 -> 7, kv wait 2.
 *  t=7    R2 at D (D busy).
 *  t=7.5  R0 has 66 of 67. R2 joins the running list; R1 (5 blocks) does
 *         not fit in 0 free; decodes [R0, R2]: R0 needs 1 with 0 free, so
 *         R2, the list's last, restarts (4 freed; prefill := 65, decode :=
 *         1): [R0] -> 10.
 *  t=10   R0 finishes (5 freed, 9 free). Waiting [R2, R1], 5 blocks each:
 *         R2 is admitted, R1 not (4 left): prefill [R2] -> 13, its last
 *         token, R2 finishes.
 *  t=13   [R1] -> 16, R1 finishes.
 * D: 4 batches, 2.5 + 2.5 + 3 + 3 = 11 ms busy; peak 9 blocks (R0's 5 and
 * R2's reservation at 5). Without the reservation after forming the batch,
 * R2 would have waited for R0's batch end at 7.5. */
static void test_disagg_reserve_after_restart(void **state)
{
  (void)state;
  CsLlmSimConfig c;
  disagg(&c, 1, 1);
  c.decode_sched.num_blocks = 9;
  const CsLlmSimRequest r[] = { { 0, 0, 64, 3 }, { 1, 0, 64, 2 }, { 2, 0, 64, 2 } };
  CsLlmSimResult *res = run(&c, r, 3);
  const CsLlmSimRequestResult *q = res->requests;
  assert_int_equal(q[0].transfer_start_ns, 3 * MS);
  assert_int_equal(q[1].transfer_start_ns, 3 * MS);
  assert_int_equal(q[2].transfer_start_ns, 5 * MS);
  assert_int_equal(q[2].kv_wait_ns, 2 * MS);
  assert_int_equal(q[2].transfer_end_ns, 7 * MS);
  assert_int_equal(q[0].completed_ns, 10 * MS);
  assert_int_equal(q[2].completed_ns, 13 * MS);
  assert_int_equal(q[1].completed_ns, 16 * MS);
  assert_int_equal(q[0].restarts, 0);
  assert_int_equal(q[1].restarts, 1);
  assert_int_equal(q[2].restarts, 1);
  assert_int_equal(res->restarts, 2);
  assert_int_equal(res->replicas[1].n_batches, 4);
  assert_int_equal(res->replicas[1].busy_ns, 11 * MS);
  assert_int_equal(res->replicas[1].peak_blocks, 9);
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

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_disagg_timeline),      cmocka_unit_test(test_disagg_one_token),
    cmocka_unit_test(test_disagg_decode_memory), cmocka_unit_test(test_disagg_transfer_waits),
    cmocka_unit_test(test_disagg_reserve_after_restart),
    cmocka_unit_test(test_disagg_prefill_memory),
    cmocka_unit_test(test_disagg_decode_choice), cmocka_unit_test(test_disagg_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
