/* Tests of llm_sched's requests prefilled elsewhere and of blocks kept past
 * a request's end (disaggregated serving, llm_sched.h): the block
 * accounting worked by hand, the reservation before the transfer (FIFO,
 * head-of-line, the watermark and the holding cap), every refusal. Block size
 * 16 throughout. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "llm/llm_sched.h"

static CsLlmSched *new_sched(CsLlmSchedPolicy p, int64_t blocks)
{
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, p);
  c.num_blocks = blocks;
  CsLlmSched *s = cs_llm_sched_new(&c, NULL);
  assert_non_null(s);
  return s;
}

/* ok and *e after the call (taken by address: an argument's order of
 * evaluation is unspecified). */
static void expect_refused(gboolean ok, GError **ep, const char *want)
{
  GError *e = *ep;
  *ep = NULL;
  assert_false(ok);
  assert_non_null(e);
  if (!strstr(e->message, want))
    print_error("missing \"%s\" in: %s\n", want, e->message);
  assert_non_null(strstr(e->message, want));
  g_error_free(e);
}

/* vLLM, 20 blocks (watermark int(0.2) = 0). A (prompt 64, output 3) and B
 * (40, 2) prefilled elsewhere:
 *  - added: both pending transfer (n_waiting 2), nothing allocated;
 *  - reserved FIFO: A ceil(64/16) = 4 blocks, B ceil(40/16) = 3: 7
 *    allocated, 2 holding, 2 in transfer, none waiting; nothing to run
 *    while they are in transfer;
 *  - arrived (A then B): batch 1 is a decode batch [A, B], 1 token each, A
 *    after 65 tokens (its prompt and first token), B after 41; A crosses a
 *    block (65 > 64): 5, B does not (41 <= 48): 3; 8 allocated;
 *  - done: A 66 processed, B 42 = 40 + 2 finished (its 3 freed: 5 left);
 *    neither token is a first token;
 *  - batch 2 [A] (66 <= 80, no new block) -> A finished, 0 allocated. */
static void test_vllm_accounting(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_VLLM, 20);
  CsLlmRequest a, b;
  cs_llm_request_init(&a, 1, 0, 64, 3);
  cs_llm_request_init(&b, 2, 1, 40, 2);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  assert_true(cs_llm_sched_add_prefilled(s, &b, NULL));
  assert_int_equal(cs_llm_sched_n_waiting(s), 2);
  assert_int_equal(cs_llm_sched_n_prefilled_waiting(s), 2);
  assert_ptr_equal(cs_llm_sched_prefilled_waiting(s, 1), &b);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 0);
  assert_int_equal(a.processed_tokens, 65);
  assert_int_equal(a.emitted_tokens, 1);
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &a);
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &b);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  assert_int_equal(a.blocks, 4);
  assert_int_equal(b.blocks, 3);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 7);
  assert_int_equal(cs_llm_sched_n_holding(s), 2);
  assert_int_equal(cs_llm_sched_n_in_transfer(s), 2);
  assert_int_equal(cs_llm_sched_n_waiting(s), 0);
  assert_int_equal(a.state, CS_LLM_REQ_WAITING);
  assert_null(cs_llm_sched_next_batch(s, NULL));
  assert_true(cs_llm_sched_prefilled_arrived(s, &a, NULL));
  assert_true(cs_llm_sched_prefilled_arrived(s, &b, NULL));
  assert_int_equal(cs_llm_sched_n_in_transfer(s), 0);
  GError *e = NULL;
  expect_refused(cs_llm_sched_prefilled_arrived(s, &a, &e), &e,
                 "LLM request 1: arrived by transfer without a reservation");
  const CsLlmBatch *bt = cs_llm_sched_next_batch(s, NULL);
  assert_non_null(bt);
  assert_int_equal(bt->n, 2);
  assert_int_equal(bt->n_decode, 2);
  assert_ptr_equal(bt->entries[0].req, &a);
  assert_int_equal(bt->entries[0].processed_before, 65);
  assert_int_equal(bt->entries[1].processed_before, 41);
  assert_int_equal(a.blocks, 5);
  assert_int_equal(b.blocks, 3);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 8);
  bt = cs_llm_sched_batch_done(s, NULL);
  assert_false(bt->entries[0].first_token);
  assert_true(bt->entries[0].emitted);
  assert_true(bt->entries[1].finished);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 5);
  bt = cs_llm_sched_next_batch(s, NULL);
  assert_int_equal(bt->n, 1);
  assert_int_equal(a.blocks, 5);
  bt = cs_llm_sched_batch_done(s, NULL);
  assert_true(bt->entries[0].finished);
  assert_int_equal(a.emitted_tokens, 3);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 0);
  assert_int_equal(cs_llm_sched_n_holding(s), 0);
  cs_llm_sched_free(s);
}

/* Reservation is FIFO and stops at the first that does not fit: 10 blocks
 * (watermark 0), A (64 prompt: 4 blocks, 4 output) running with 5 after
 * its first decode; B (96: 6) does not fit in 5 and C (16: 1) behind it
 * waits too, holding nothing. When A finishes (two more decodes: 67, 68 of
 * 68) its 5 free: B (6) and C (1) are reserved, in that order. */
static void test_head_of_line(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_VLLM, 10);
  CsLlmRequest a, b, c;
  cs_llm_request_init(&a, 1, 0, 64, 4);
  cs_llm_request_init(&b, 2, 1, 96, 2);
  cs_llm_request_init(&c, 3, 2, 16, 2);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &a);
  assert_true(cs_llm_sched_prefilled_arrived(s, &a, NULL));
  cs_llm_sched_next_batch(s, NULL);
  cs_llm_sched_batch_done(s, NULL);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 5);
  assert_true(cs_llm_sched_add_prefilled(s, &b, NULL));
  assert_true(cs_llm_sched_add_prefilled(s, &c, NULL));
  assert_null(cs_llm_sched_reserve_prefilled(s));
  assert_int_equal(cs_llm_sched_n_prefilled_waiting(s), 2);
  const CsLlmBatch *bt = cs_llm_sched_next_batch(s, NULL);
  assert_int_equal(bt->n, 1); /* A alone */
  assert_int_equal(cs_llm_sched_n_waiting(s), 2);
  assert_int_equal(b.state, CS_LLM_REQ_WAITING);
  assert_int_equal(c.blocks, 0);
  cs_llm_sched_batch_done(s, NULL);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  cs_llm_sched_next_batch(s, NULL);
  bt = cs_llm_sched_batch_done(s, NULL);
  assert_true(bt->entries[0].finished);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 0);
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &b);
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &c);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 7);
  assert_int_equal(cs_llm_sched_n_waiting(s), 0);
  cs_llm_sched_free(s);
}

/* The watermark and the cap on requests holding memory, as a local
 * admission: 100 blocks (watermark int(0.01 x 100) = 1). A (64: 4 blocks)
 * reserved leaves 96 free; B (1536 prompt: 96 blocks) would leave 0 < 1:
 * refused; with A gone (released by finishing) it is reserved (100 - 96 =
 * 4 >= 1). With batch_size_cap 1, one request reserved stops the next
 * however many blocks are free. */
static void test_reserve_watermark_cap(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_VLLM, 100);
  CsLlmRequest a, b;
  cs_llm_request_init(&a, 1, 0, 64, 2);
  cs_llm_request_init(&b, 2, 0, 1536, 2);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  assert_true(cs_llm_sched_add_prefilled(s, &b, NULL));
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &a);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  assert_int_equal(b.blocks, 0);
  assert_true(cs_llm_sched_prefilled_arrived(s, &a, NULL));
  cs_llm_sched_next_batch(s, NULL);
  assert_true(cs_llm_sched_batch_done(s, NULL)->entries[0].finished);
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &b);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 96);
  cs_llm_sched_free(s);
  CsLlmSchedConfig cfg;
  cs_llm_sched_config_init(&cfg, CS_LLM_SCHED_SARATHI);
  cfg.num_blocks = 100;
  cfg.batch_size_cap = 1;
  s = cs_llm_sched_new(&cfg, NULL);
  cs_llm_request_init(&a, 1, 0, 64, 2);
  cs_llm_request_init(&b, 2, 0, 16, 2);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  assert_true(cs_llm_sched_add_prefilled(s, &b, NULL));
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &a);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  cs_llm_sched_free(s);
}

/* Orca reserves max_tokens / block_size = 256 blocks before the transfer:
 * of 300, the second request does not fit. */
static void test_orca_reservation(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_ORCA, 300);
  CsLlmRequest a, b;
  cs_llm_request_init(&a, 1, 0, 64, 3);
  cs_llm_request_init(&b, 2, 0, 64, 3);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  assert_true(cs_llm_sched_add_prefilled(s, &b, NULL));
  assert_ptr_equal(cs_llm_sched_reserve_prefilled(s), &a);
  assert_null(cs_llm_sched_reserve_prefilled(s));
  assert_int_equal(a.blocks, 256);
  assert_true(cs_llm_sched_prefilled_arrived(s, &a, NULL));
  const CsLlmBatch *bt = cs_llm_sched_next_batch(s, NULL);
  assert_int_equal(bt->n, 1);
  assert_int_equal(a.blocks, 256);
  assert_int_equal(cs_llm_sched_n_waiting(s), 1);
  cs_llm_sched_free(s);
}

/* keep_blocks: a one-token request prefilled here finishes with its 4
 * blocks still held (a prefill replica's KV cache in transfer), then
 * release frees them. */
static void test_keep_and_release(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_SARATHI, 100);
  CsLlmRequest a;
  cs_llm_request_init(&a, 1, 0, 64, 1);
  a.keep_blocks = TRUE;
  GError *e = NULL;
  expect_refused(cs_llm_sched_release(s, &a, &e), &e, "released while unfinished");
  assert_true(cs_llm_sched_add(s, &a, NULL));
  cs_llm_sched_next_batch(s, NULL);
  const CsLlmBatch *bt = cs_llm_sched_batch_done(s, NULL);
  assert_true(bt->entries[0].finished);
  assert_true(bt->entries[0].first_token);
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 4);
  assert_int_equal(cs_llm_sched_n_holding(s), 1);
  assert_true(cs_llm_sched_release(s, &a, NULL));
  assert_int_equal(cs_llm_sched_allocated_blocks(s), 0);
  assert_int_equal(cs_llm_sched_n_holding(s), 0);
  expect_refused(cs_llm_sched_release(s, &a, &e), &e, "released while not keeping blocks");
  cs_llm_sched_free(s);
}

static void test_refusals(void **state)
{
  (void)state;
  CsLlmSched *s = new_sched(CS_LLM_SCHED_VLLM, 100);
  CsLlmRequest a;
  GError *e = NULL;
  cs_llm_request_init(&a, 7, 0, 64, 1);
  expect_refused(cs_llm_sched_add_prefilled(s, &a, &e), &e,
                 "LLM request 7: a prefilled request needs >= 2 output tokens");
  cs_llm_request_init(&a, 8, 0, 4000, 200);
  expect_refused(cs_llm_sched_add_prefilled(s, &a, &e), &e,
                 "LLM request 8: prompt + output = 4200 tokens, expected <= max_tokens");
  cs_llm_request_init(&a, 9, 0, 64, 3);
  assert_true(cs_llm_sched_add_prefilled(s, &a, NULL));
  expect_refused(cs_llm_sched_add_prefilled(s, &a, &e), &e, "added twice");
  cs_llm_sched_free(s);
  s = new_sched(CS_LLM_SCHED_STATIC, 1000);
  cs_llm_request_init(&a, 10, 0, 64, 3);
  expect_refused(cs_llm_sched_add_prefilled(s, &a, &e), &e, "got static");
  cs_llm_sched_free(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_vllm_accounting),  cmocka_unit_test(test_head_of_line),
    cmocka_unit_test(test_reserve_watermark_cap),
    cmocka_unit_test(test_orca_reservation), cmocka_unit_test(test_keep_and_release),
    cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
