/* Tests of the replica schedulers (src/llm/llm_sched.c). The timelines are
 * traced by hand from Vidur's rules (src/llm/llm_sched.h, with the Vidur
 * file of each); each test's comment works out what every iteration must
 * hold. A batch is written "A=20 B=40 C" : A and B prefill 20 and 40
 * tokens, C decodes one. After every step the block accounting is checked
 * against every request (check_blocks). The last tests run seeded random
 * workloads to completion under each policy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/json_input.h"
#include "llm/llm_sched.h"

#define MAX_REQ 64

typedef struct {
  CsLlmSchedConfig cfg;
  CsLlmSched *s;
  CsLlmRequest req[MAX_REQ];
  int n;
  const CsLlmBatch *batch; /* the last one */
} Sim;

static int64_t ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

static void sim_start(Sim *m)
{
  GError *e = NULL;
  m->s = cs_llm_sched_new(&m->cfg, &e);
  assert_null(e);
  assert_non_null(m->s);
  m->n = 0;
}

static void sim_init(Sim *m, CsLlmSchedPolicy p, int64_t num_blocks)
{
  memset(m, 0, sizeof *m);
  cs_llm_sched_config_init(&m->cfg, p);
  m->cfg.num_blocks = num_blocks;
  sim_start(m);
}

static void sim_end(Sim *m)
{
  cs_llm_sched_free(m->s);
}

/* Request named by a letter, arriving now (arrival = add order). */
static CsLlmRequest *R(Sim *m, char name)
{
  return &m->req[name - 'A'];
}

static void add(Sim *m, char name, int prompt, int output)
{
  GError *e = NULL;
  CsLlmRequest *r = R(m, name);
  cs_llm_request_init(r, name, m->n++, prompt, output);
  assert_true(cs_llm_sched_add(m->s, r, &e));
  assert_null(e);
}

/* Every request's blocks against its state and tokens, and their sum
 * against the scheduler's count and num_blocks. */
static void check_blocks(Sim *m)
{
  const CsLlmSchedConfig *c = &m->cfg;
  int64_t bs = c->block_size, sum = 0;
  int holding = 0, waiting = 0;
  gboolean watermark = c->policy == CS_LLM_SCHED_VLLM || c->policy == CS_LLM_SCHED_SARATHI;
  for (int i = 0; i < MAX_REQ; i++) {
    const CsLlmRequest *r = &m->req[i];
    if (r->prompt_tokens == 0)
      continue;
    sum += r->blocks;
    if (r->state == CS_LLM_REQ_WAITING)
      waiting++;
    if (r->state != CS_LLM_REQ_RUNNING && r->state != CS_LLM_REQ_IN_BATCH) {
      assert_int_equal(r->blocks, 0);
      continue;
    }
    holding++;
    if (!watermark) {
      assert_int_equal(r->blocks, c->max_tokens / bs);
    } else if (!r->prefill_complete) {
      /* The whole prefill reserved at admission. */
      assert_int_equal(r->blocks, ceil_div(r->prefill_tokens, bs));
    } else if (r->state == CS_LLM_REQ_IN_BATCH) {
      /* A decode holds the KV of every token processed so far. */
      assert_int_equal(r->blocks, ceil_div(r->processed_tokens, bs));
    } else {
      /* Between iterations: the token just produced has no KV yet. */
      assert_int_equal(r->blocks, ceil_div(r->processed_tokens - 1, bs));
    }
  }
  assert_int_equal(sum, cs_llm_sched_allocated_blocks(m->s));
  assert_true(sum <= c->num_blocks);
  assert_int_equal(holding, cs_llm_sched_n_holding(m->s));
  assert_int_equal(waiting, cs_llm_sched_n_waiting(m->s));
}

/* The batch as text: "A=20 B" (prefill tokens, or a decode). */
static void batch_text(const CsLlmBatch *b, char *buf, size_t len)
{
  buf[0] = '\0';
  for (int i = 0; i < b->n; i++) {
    const CsLlmBatchEntry *e = &b->entries[i];
    char one[32];
    if (e->prefill)
      snprintf(one, sizeof one, "%s%c=%d", i ? " " : "", (char)e->req->id, e->tokens);
    else {
      assert_int_equal(e->tokens, 1);
      snprintf(one, sizeof one, "%s%c", i ? " " : "", (char)e->req->id);
    }
    g_strlcat(buf, one, len);
  }
}

/* One iteration: the next batch must be `expect` ("" for none); after it,
 * the requests in `first` got their first token and those in `finished`
 * finished (letters, in batch order). */
static void step(Sim *m, const char *expect, const char *first, const char *finished)
{
  GError *e = NULL;
  m->batch = cs_llm_sched_next_batch(m->s, &e);
  assert_null(e);
  check_blocks(m);
  if (expect[0] == '\0') {
    assert_null(m->batch);
    return;
  }
  assert_non_null(m->batch);
  char got[512];
  batch_text(m->batch, got, sizeof got);
  assert_string_equal(got, expect);
  int64_t total = 0;
  for (int i = 0; i < m->batch->n; i++)
    total += m->batch->entries[i].tokens;
  assert_int_equal(m->batch->total_tokens, total);
  m->batch = cs_llm_sched_batch_done(m->s, &e);
  assert_null(e);
  check_blocks(m);
  char f[64] = "", d[64] = "";
  for (int i = 0; i < m->batch->n; i++) {
    const CsLlmBatchEntry *en = &m->batch->entries[i];
    char id[2] = { (char)en->req->id, '\0' };
    if (en->first_token)
      g_strlcat(f, id, sizeof f);
    if (en->finished)
      g_strlcat(d, id, sizeof d);
  }
  assert_string_equal(f, first);
  assert_string_equal(d, finished);
}

/* Runs `count` identical iterations. */
static void steps(Sim *m, int count, const char *expect)
{
  for (int i = 0; i < count; i++)
    step(m, expect, "", "");
}

/* vLLM, 3 requests of prompt 20, 40, 30 and 3 output tokens each, 100
 * blocks (watermark int(0.01 * 100) = 1):
 * 1: prefill-first takes all three: free after each 100-2-0 = 98, 100-3-2
 *    = 95, 100-2-5 = 93, all >= 1; padded budget 3 * max(20,40,30) = 120 <=
 *    4096. Blocks ceil(20/16) + ceil(40/16) + ceil(30/16) = 2+3+2 = 7.
 *    Processed 21, 41, 31: each got its first token.
 * 2, 3: decodes (22, 42, 32: no block needed, 32 <= 2*16); 3 output tokens
 *    = 1 prefill + 2 decodes, all finish at 3 and free their 7 blocks. */
static void test_vllm_basic(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_VLLM, 100);
  assert_int_equal(cs_llm_sched_watermark(m.s), 1);
  assert_int_equal(cs_llm_sched_batch_limit(m.s), 128);
  add(&m, 'A', 20, 3);
  add(&m, 'B', 40, 3);
  add(&m, 'C', 30, 3);
  step(&m, "A=20 B=40 C=30", "ABC", "");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 7);
  assert_int_equal(m.batch->prefill_tokens, 90);
  assert_int_equal(R(&m, 'A')->processed_tokens, 21);
  assert_int_equal(R(&m, 'B')->processed_tokens, 41);
  step(&m, "A B C", "", "");
  assert_int_equal(m.batch->n_decode, 3);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 7);
  step(&m, "A B C", "", "ABC");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  for (char c = 'A'; c <= 'C'; c++) {
    assert_int_equal(R(&m, c)->emitted_tokens, 3);
    assert_int_equal(R(&m, c)->state, CS_LLM_REQ_FINISHED);
  }
  step(&m, "", "", "");
  sim_end(&m);
}

/* vLLM's padded budget at max_tokens_in_batch 100, same requests:
 * 1: A (1*20 = 20), B (2*40 = 80), C would make 3*40 = 120 > 100: stop.
 * 2: prefill first: C alone (30), while A and B wait for their decodes.
 * 3, 4: decodes of A, B, C (sorted by arrival); all finish at 4.
 * A prompt of 16 tokens, output 3 (D, alone afterwards) needs a second
 * block: 1 block at admission, 17 processed after its prefill > 16, so its
 * first decode allocates one more (2 blocks), and 18 <= 32 needs none. */
static void test_vllm_budget_and_blocks(void **state)
{
  (void)state;
  Sim m;
  memset(&m, 0, sizeof m);
  cs_llm_sched_config_init(&m.cfg, CS_LLM_SCHED_VLLM);
  m.cfg.num_blocks = 100;
  m.cfg.max_tokens_in_batch = 100;
  sim_start(&m);
  add(&m, 'A', 20, 3);
  add(&m, 'B', 40, 3);
  add(&m, 'C', 30, 3);
  step(&m, "A=20 B=40", "AB", "");
  step(&m, "C=30", "C", "");
  step(&m, "A B C", "", "");
  step(&m, "A B C", "", "ABC");
  add(&m, 'D', 16, 3);
  step(&m, "D=16", "D", "");
  assert_int_equal(R(&m, 'D')->blocks, 1);
  step(&m, "D", "", "");
  assert_int_equal(R(&m, 'D')->blocks, 2);
  step(&m, "D", "", "D");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  sim_end(&m);
}

/* vLLM's watermark: 20 blocks at fraction 0.1 keep int(2.0) = 2 free for
 * new admissions. A (prompt 256 = 16 blocks, output 10), B (48 = 3 blocks,
 * output 1).
 * 1: A: 20 - 0 - 16 = 4 >= 2; B: 20 - 16 - 3 = 1 < 2, held though 4 blocks
 *    are free. A 257.
 * 2: B still held (1 < 2); A decodes, 257 > 256: a 17th block (free 3; a
 *    decode needs only free >= 1). A decodes 257 to 266 in iterations 2 to
 *    10 and finishes.
 * 11: B = 48, whose one output token comes with its prefill. */
static void test_vllm_watermark(void **state)
{
  (void)state;
  Sim m;
  memset(&m, 0, sizeof m);
  cs_llm_sched_config_init(&m.cfg, CS_LLM_SCHED_VLLM);
  m.cfg.num_blocks = 20;
  m.cfg.watermark_blocks_fraction = 0.1;
  sim_start(&m);
  assert_int_equal(cs_llm_sched_watermark(m.s), 2);
  add(&m, 'A', 256, 10);
  add(&m, 'B', 48, 1);
  step(&m, "A=256", "A", "");
  step(&m, "A", "", "");
  assert_int_equal(R(&m, 'A')->blocks, 17);
  steps(&m, 7, "A");
  step(&m, "A", "", "A");
  step(&m, "B=48", "B", "B");
  sim_end(&m);
}

/* vLLM preemption, 7 blocks (watermark int(0.07) = 0): A and B prompt 32
 * (2 blocks), C prompt 40 (3 blocks), 10 output tokens each (totals 42,
 * 42, 50); D (prompt 16, output 2) arrives after iteration 1.
 * 1: A, B, C admitted: free 7-2 = 5, 5-2 = 3, 3-3 = 0 >= 0; budget 3*40 =
 *    120. All 7 blocks held. Processed 33, 33, 41.
 * 2: D cannot be admitted (0 - 1 < 0), so decodes: A first (by arrival)
 *    needs free >= 1, free is 0: the latest-arrived running request C is
 *    restarted: its prefill becomes its processed 41 (40 + 1 generated),
 *    decode 50 - 41 = 9, processed 0, restarts 1, its 3 blocks freed, and
 *    it goes to the FRONT of the queue (C, D). A: 33 > 32 takes a block (3
 *    blocks), B the same: 6 blocks held.
 * 3: C heads the queue and needs ceil(41/16) = 3 blocks, free is 1: no
 *    prefill, and D (1 block, would fit) is held behind it. A and B decode;
 *    34..41 <= 48 need no block. From 33, A and B reach 42 after 9 decodes
 *    (iterations 2 to 10) and finish together at 10.
 * 11: C (3 blocks of 7) and D (1) admitted, budget 2 * 41 = 82; C's
 *    re-prefill of 41 tokens yields its 2nd token (no first-token event:
 *    it had its first at 1); D gets its first. C 42, D 17.
 * 12: decodes by arrival: C (42, no block), D (17 > 16: a 2nd block); D
 *    reaches 18 and finishes. C then decodes alone: 8 decodes from 42 to
 *    50, iterations 12 to 19, taking its 4th block at 19 (49 > 48). C
 *    emitted 1 (iteration 1) + 1 (11) + 8 = 10 tokens. */
static void test_vllm_preempt(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_VLLM, 7);
  assert_int_equal(cs_llm_sched_watermark(m.s), 0);
  add(&m, 'A', 32, 10);
  add(&m, 'B', 32, 10);
  add(&m, 'C', 40, 10);
  step(&m, "A=32 B=32 C=40", "ABC", "");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 7);
  add(&m, 'D', 16, 2);
  step(&m, "A B", "", "");
  assert_int_equal(m.batch->n_restarted, 1);
  const CsLlmRequest *c = R(&m, 'C');
  assert_ptr_equal(m.batch->restarted[0], c);
  assert_int_equal(c->restarts, 1);
  assert_int_equal(c->prefill_tokens, 41);
  assert_int_equal(c->decode_tokens, 9);
  assert_int_equal(c->processed_tokens, 0);
  assert_int_equal(c->state, CS_LLM_REQ_WAITING);
  assert_ptr_equal(cs_llm_sched_waiting(m.s, 0), c);
  assert_ptr_equal(cs_llm_sched_waiting(m.s, 1), R(&m, 'D'));
  assert_int_equal(R(&m, 'A')->blocks, 3);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 6);
  steps(&m, 7, "A B");
  step(&m, "A B", "", "AB");
  step(&m, "C=41 D=16", "D", "");
  assert_int_equal(c->processed_tokens, 42);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 4);
  step(&m, "C D", "", "D");
  steps(&m, 6, "C");
  step(&m, "C", "", "C");
  assert_int_equal(c->emitted_tokens, 10);
  assert_int_equal(cs_llm_sched_n_restarts(m.s), 1);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  sim_end(&m);
}

/* Sarathi, chunk 512, 1000 blocks, a prompt of 1200 tokens alone (output 3):
 * chunks 512, 512, 176 (1200 - 1024), the last yielding its first token
 * (1201), then 2 decodes. Blocks: ceil(1200/16) = 75 at admission, for the
 * whole prompt; the first decode has 1201 > 1200: a 76th. */
static void test_sarathi_chunks(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_SARATHI, 1000);
  add(&m, 'A', 1200, 3);
  step(&m, "A=512", "", "");
  assert_int_equal(R(&m, 'A')->blocks, 75);
  step(&m, "A=512", "", "");
  step(&m, "A=176", "A", "");
  step(&m, "A", "", "");
  assert_int_equal(R(&m, 'A')->blocks, 76);
  step(&m, "A", "", "A");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  sim_end(&m);
}

/* Sarathi with decodes in the budget, 1000 blocks. B (prompt 100, output
 * 10) runs first; A (1200, 3) arrives after iteration 1, C (400, 2) after 2.
 * 1: B=100 (7 blocks). B 101.
 * 2: B's decode (1 token), then A new: min(1200, 512 - 1) = 511 (75 blocks).
 * 3: running list B, A: B decodes (1); A is a partial prefill: min(689,
 *    511) = 511; C new: the budget left is 0, so C waits.
 * 4: B (1), A: min(1200 - 1022 = 178, 511) = 178, completing its prompt
 *    (first token); C new: min(400, 512 - 179 = 333) = 333 (25 blocks):
 *    two prefills share the batch.
 * 5: B, A decode (A: 1201 > 1200, a 76th block); C: min(67, 510) = 67,
 *    its prompt complete (first token).
 * 6: B, A, C decode (C: 401 > 400, a 26th block); A reaches 1203 and C
 *    402: both finish. B: 106 after 6; 4 more decodes to 110 (7..10). */
static void test_sarathi_mixed(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_SARATHI, 1000);
  add(&m, 'B', 100, 10);
  step(&m, "B=100", "B", "");
  add(&m, 'A', 1200, 3);
  step(&m, "B A=511", "", "");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 82);
  add(&m, 'C', 400, 2);
  step(&m, "B A=511", "", "");
  assert_int_equal(m.batch->total_tokens, 512);
  assert_int_equal(cs_llm_sched_n_waiting(m.s), 1);
  step(&m, "B A=178 C=333", "A", "");
  assert_int_equal(m.batch->total_tokens, 512);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 107);
  step(&m, "B A C=67", "C", "");
  assert_int_equal(R(&m, 'A')->blocks, 76);
  step(&m, "B A C", "", "AC");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 7);
  steps(&m, 3, "B");
  step(&m, "B", "", "B");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  sim_end(&m);
}

/* Sarathi restarting a request in the middle of its prefill: 5 blocks
 * (watermark 0), chunk 16. B (prompt 16, output 20) first; A (48, 2) after
 * iteration 1.
 * 1: B=16 (1 block); B 17.
 * 2: B decodes: 17 > 16, a 2nd block; A new: 5 - 2 - 3 = 0 >= 0, chunk
 *    min(48, 16 - 1) = 15 (3 blocks for its whole prompt): all 5 held.
 * 3: running list B, A: B needs free >= 1 and has 0, so the list's last, A
 *    (15 of 48 prefilled), is restarted. Vidur would make A's prefill 15 and
 *    its output 48 + 2 - 15 = 35 tokens; here A keeps prefill 48, output 2,
 *    processed 0 (llm_sched.h, difference 2). B decodes (18, no block); A,
 *    at the queue front, is admitted again at once (5 - 2 - 3 = 0): 15. */
static void test_sarathi_restart_partial(void **state)
{
  (void)state;
  Sim m;
  memset(&m, 0, sizeof m);
  cs_llm_sched_config_init(&m.cfg, CS_LLM_SCHED_SARATHI);
  m.cfg.num_blocks = 5;
  m.cfg.chunk_size = 16;
  sim_start(&m);
  add(&m, 'B', 16, 20);
  step(&m, "B=16", "B", "");
  add(&m, 'A', 48, 2);
  step(&m, "B A=15", "", "");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 5);
  step(&m, "B A=15", "", "");
  const CsLlmRequest *a = R(&m, 'A');
  assert_int_equal(m.batch->n_restarted, 1);
  assert_ptr_equal(m.batch->restarted[0], a);
  assert_int_equal(a->restarts, 1);
  assert_int_equal(a->prefill_tokens, 48);
  assert_int_equal(a->decode_tokens, 2);
  assert_int_equal(a->processed_tokens, 15);
  sim_end(&m);
}

/* Orca, max_tokens 4096: 256 blocks reserved per request; 600 blocks fit
 * two (600 - 512 = 88 < 256). A (10, 2), B (20, 4), C (30, 2).
 * 1: A=10, B=20; C waits (88 free). A 11, B 21.
 * 2: A, B decode; A reaches 12 and finishes, freeing 256.
 * 3: B decodes, C admitted (344 free) with its whole prompt, mixed.
 * 4: B (24) and C (32) finish. */
static void test_orca(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_ORCA, 600);
  add(&m, 'A', 10, 2);
  add(&m, 'B', 20, 4);
  add(&m, 'C', 30, 2);
  step(&m, "A=10 B=20", "AB", "");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 512);
  step(&m, "A B", "", "A");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 256);
  step(&m, "B C=30", "C", "");
  step(&m, "B C", "", "BC");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  sim_end(&m);

  /* max_batch_size 1 (a memory plan of one request): one at a time, even
   * with memory for more. */
  memset(&m, 0, sizeof m);
  cs_llm_sched_config_init(&m.cfg, CS_LLM_SCHED_ORCA);
  m.cfg.num_blocks = 1000;
  m.cfg.max_batch_size = 1;
  sim_start(&m);
  assert_int_equal(cs_llm_sched_batch_limit(m.s), 1);
  add(&m, 'A', 10, 2);
  add(&m, 'B', 20, 1);
  step(&m, "A=10", "A", "");
  step(&m, "A", "", "A");
  step(&m, "B=20", "B", "B");
  sim_end(&m);
}

/* Static batching, 1000 blocks (3 requests of 256 fit). A (10, 2) and B
 * (20, 4) form a batch; C (5, 1) arrives after iteration 1 and waits until
 * the batch has ended, though memory would take it.
 * 1: A=10, B=20. 2: A, B; A finishes and frees its 256 blocks at once
 * (Vidur would keep them for good: llm_sched.h, difference 1).
 * 3, 4: B alone; B finishes at 4. 5: C=5, whose one output token comes
 * with its prefill: it finishes in the same iteration. */
static void test_static(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_STATIC, 1000);
  add(&m, 'A', 10, 2);
  add(&m, 'B', 20, 4);
  step(&m, "A=10 B=20", "AB", "");
  add(&m, 'C', 5, 1);
  step(&m, "A B", "", "A");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 256);
  step(&m, "B", "", "");
  assert_int_equal(cs_llm_sched_n_waiting(m.s), 1);
  step(&m, "B", "", "B");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  step(&m, "C=5", "C", "C");
  step(&m, "", "", "");
  sim_end(&m);
}

static void expect_bad_config(const CsLlmSchedConfig *cfg, const char *needle)
{
  GError *e = NULL;
  assert_null(cs_llm_sched_new(cfg, &e));
  assert_non_null(e);
  assert_true(g_error_matches(e, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID));
  if (strstr(e->message, needle) == NULL)
    fail_msg("\"%s\" lacks \"%s\"", e->message, needle);
  g_error_free(e);
}

static void test_bad_input(void **state)
{
  (void)state;
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_VLLM);
  expect_bad_config(&c, "num_blocks is 0, expected >= 1");
  c.num_blocks = 100;
  c.block_size = 0;
  expect_bad_config(&c, "block_size is 0");
  c.block_size = 16;
  c.chunk_size = -1;
  expect_bad_config(&c, "chunk_size is -1");
  c.chunk_size = 512;
  c.watermark_blocks_fraction = 1;
  expect_bad_config(&c, "watermark_blocks_fraction is 1, expected in [0, 1)");
  c.watermark_blocks_fraction = 0.01;
  c.num_stages = 0;
  expect_bad_config(&c, "num_stages is 0, expected >= 1");
  c.num_stages = 129;
  expect_bad_config(&c, "batch_size_cap is 128 with 129 pipeline stages, expected >= "
                        "num_stages");
  c.num_stages = 1;
  c.policy = CS_LLM_SCHED_ORCA;
  expect_bad_config(&c, "256 blocks per request, expected 1 to num_blocks (100)");

  CsLlmSchedPolicy p;
  GError *e = NULL;
  assert_true(cs_llm_sched_policy_parse("faster_transformer", &p, NULL));
  assert_int_equal(p, CS_LLM_SCHED_STATIC);
  assert_true(cs_llm_sched_policy_parse("sarathi", &p, NULL));
  assert_int_equal(p, CS_LLM_SCHED_SARATHI);
  assert_false(cs_llm_sched_policy_parse("lightllm", &p, &e));
  assert_non_null(strstr(e->message, "\"lightllm\": expected vllm, sarathi, orca, static"));
  g_clear_error(&e);

  /* Requests: 100 blocks, watermark 1, so at most 99 blocks = 1584 tokens
   * of prefill after a restart (prompt + output - 1). */
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_VLLM);
  c.num_blocks = 100;
  CsLlmSched *s = cs_llm_sched_new(&c, NULL);
  CsLlmRequest r;
  struct {
    int prompt, output;
    const char *needle;
  } bad[] = {
    { 0, 5, "request 7: 0 prompt and 5 output tokens, expected >= 1 each" },
    { 5, 0, "0 output tokens" },
    { 4000, 97, "prompt + output = 4097 tokens, expected <= max_tokens (4096)" },
    { 1500, 86, "up to 1585 tokens needs 100 blocks, expected <= num_blocks - watermark" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    cs_llm_request_init(&r, 7, 0, bad[i].prompt, bad[i].output);
    assert_false(cs_llm_sched_add(s, &r, &e));
    if (strstr(e->message, bad[i].needle) == NULL)
      fail_msg("\"%s\" lacks \"%s\"", e->message, bad[i].needle);
    g_clear_error(&e);
  }
  cs_llm_request_init(&r, 7, 0, 1500, 85);
  assert_true(cs_llm_sched_add(s, &r, NULL));
  assert_false(cs_llm_sched_add(s, &r, &e));
  assert_non_null(strstr(e->message, "added twice"));
  g_clear_error(&e);
  assert_null(cs_llm_sched_batch_done(s, &e));
  assert_non_null(strstr(e->message, "no batch in flight"));
  g_clear_error(&e);
  assert_non_null(cs_llm_sched_next_batch(s, NULL));
  assert_null(cs_llm_sched_next_batch(s, &e));
  assert_non_null(strstr(e->message, "already in flight"));
  g_clear_error(&e);
  cs_llm_sched_free(s);

  /* vLLM's padded budget alone: a re-prefill of up to 4095 tokens at a
   * budget of 4000. */
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_VLLM);
  c.num_blocks = 10000;
  c.max_tokens_in_batch = 4000;
  s = cs_llm_sched_new(&c, NULL);
  cs_llm_request_init(&r, 8, 0, 3000, 1096);
  assert_false(cs_llm_sched_add(s, &r, &e));
  assert_non_null(strstr(e->message, "up to 4095 tokens (prompt + output - 1 after a restart), "
                                     "expected <= max_tokens_in_batch (4000)"));
  g_clear_error(&e);
  cs_llm_sched_free(s);
}

/* --- random workloads --- */

static uint64_t rng_state;

/* splitmix64: a fixed, documented sequence, so the workloads are the same
 * everywhere. */
static uint64_t next_u64(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int uniform(int lo, int hi)
{
  return lo + (int)(next_u64() % (uint64_t)(hi - lo + 1));
}

/* Checks of one batch against the caps of its policy. prev/prev_n: the
 * requests of the batch before (static). */
static void check_batch(Sim *m, const CsLlmBatch *b, CsLlmRequest **prev, int prev_n,
                        gboolean prev_unfinished)
{
  const CsLlmSchedConfig *c = &m->cfg;
  assert_true(b->n >= 1 && b->n <= cs_llm_sched_batch_limit(m->s));
  assert_true(cs_llm_sched_n_holding(m->s) <= c->batch_size_cap);
  int max_len = 0, n_prefill = 0;
  for (int i = 0; i < b->n; i++) {
    const CsLlmBatchEntry *e = &b->entries[i];
    for (int j = 0; j < i; j++)
      assert_ptr_not_equal(b->entries[j].req, e->req);
    assert_true(e->tokens >= 1);
    if (e->prefill) {
      n_prefill++;
      max_len = MAX(max_len, e->tokens);
    } else {
      assert_int_equal(e->tokens, 1);
    }
  }
  switch (c->policy) {
  case CS_LLM_SCHED_VLLM:
    /* Whole prefills only, within the padded budget, or decodes only. */
    assert_true(n_prefill == 0 || n_prefill == b->n);
    if (n_prefill > 0)
      assert_true((int64_t)b->n * max_len <= c->max_tokens_in_batch);
    break;
  case CS_LLM_SCHED_SARATHI:
    if (b->prefill_tokens > 0)
      assert_true(b->total_tokens <= c->chunk_size);
    break;
  case CS_LLM_SCHED_ORCA:
  case CS_LLM_SCHED_CUSTOM: /* not run here: test_llm_sched_plugin.c */
    break;
  case CS_LLM_SCHED_STATIC:
    /* While the last batch has unfinished requests, exactly those run. */
    if (prev_unfinished) {
      int k = 0;
      for (int j = 0; j < prev_n; j++)
        if (prev[j]->state != CS_LLM_REQ_FINISHED)
          assert_ptr_equal(b->entries[k++].req, prev[j]);
      assert_int_equal(k, b->n);
    } else {
      assert_int_equal(n_prefill, b->n);
    }
    break;
  }
}

/* One workload: n requests with arrivals at iteration indices, run until
 * all finish. */
static void run_random(CsLlmSchedPolicy p, uint64_t seed, int64_t *restarts)
{
  rng_state = seed;
  Sim m;
  memset(&m, 0, sizeof m);
  cs_llm_sched_config_init(&m.cfg, p);
  CsLlmSchedConfig *c = &m.cfg;
  c->max_tokens = 160;
  c->block_size = uniform(1, 3) == 1 ? 16 : uniform(1, 20);
  c->batch_size_cap = uniform(1, 8);
  c->max_batch_size = uniform(1, 8);
  c->chunk_size = uniform(1, 64);
  c->max_tokens_in_batch = uniform(159, 400);
  c->watermark_blocks_fraction = uniform(0, 1) ? 0.01 : 0.1;
  int64_t need = ceil_div(159, c->block_size); /* the longest re-prefill */
  if (p == CS_LLM_SCHED_ORCA || p == CS_LLM_SCHED_STATIC)
    c->num_blocks = (160 / c->block_size) * uniform(1, 4) + uniform(0, 5);
  else
    c->num_blocks = need + 1 + uniform(0, (int)need * 3);
  sim_start(&m);
  /* The watermark grows with num_blocks: ensure the longest fits above it. */
  if (need > c->num_blocks - cs_llm_sched_watermark(m.s) && p != CS_LLM_SCHED_ORCA &&
      p != CS_LLM_SCHED_STATIC) {
    sim_end(&m);
    c->num_blocks = need * 2 + 2;
    sim_start(&m);
    assert_true(need <= c->num_blocks - cs_llm_sched_watermark(m.s));
  }
  int n = uniform(1, 24);
  int arrive[MAX_REQ];
  int t = 0;
  for (int i = 0; i < n; i++) {
    t += uniform(0, 1) ? 0 : uniform(0, 6);
    arrive[i] = t;
    int prompt = uniform(1, 100);
    int output = uniform(1, 60);
    if (prompt + output > 160)
      output = 160 - prompt;
    cs_llm_request_init(&m.req[i], 'A' + i, i, prompt, output);
  }
  CsLlmRequest *prev[MAX_REQ];
  int prev_n = 0, added = 0, finished = 0, iter = 0;
  while (finished < n) {
    while (added < n && arrive[added] <= iter) {
      assert_true(cs_llm_sched_add(m.s, &m.req[added], NULL));
      added++;
    }
    gboolean prev_unfinished = FALSE;
    for (int j = 0; j < prev_n; j++)
      prev_unfinished |= prev[j]->state != CS_LLM_REQ_FINISHED;
    const CsLlmBatch *b = cs_llm_sched_next_batch(m.s, NULL);
    check_blocks(&m);
    if (b == NULL) {
      /* Nothing in flight and every request taken can run on an empty
       * replica: no batch means nothing to run until the next arrival. */
      if (cs_llm_sched_n_waiting(m.s) != 0 || cs_llm_sched_n_running(m.s) != 0)
        fail_msg("%s seed %llu: no batch at iteration %d with %d waiting, %d running",
                 cs_llm_sched_policy_name(p), (unsigned long long)seed, iter,
                 cs_llm_sched_n_waiting(m.s), cs_llm_sched_n_running(m.s));
      assert_true(added < n);
      iter = arrive[added];
      continue;
    }
    check_batch(&m, b, prev, prev_n, prev_unfinished);
    prev_n = b->n;
    for (int i = 0; i < b->n; i++)
      prev[i] = b->entries[i].req;
    b = cs_llm_sched_batch_done(m.s, NULL);
    assert_non_null(b);
    check_blocks(&m);
    for (int i = 0; i < b->n; i++)
      finished += b->entries[i].finished;
    if (++iter > 100000)
      fail_msg("%s seed %llu: no end after 100000 iterations", cs_llm_sched_policy_name(p),
               (unsigned long long)seed);
  }
  for (int i = 0; i < n; i++) {
    const CsLlmRequest *r = &m.req[i];
    assert_int_equal(r->state, CS_LLM_REQ_FINISHED);
    assert_int_equal(r->emitted_tokens, r->output_tokens);
    assert_int_equal(r->processed_tokens, r->prompt_tokens + r->output_tokens);
    assert_int_equal(r->prefill_tokens + r->decode_tokens, r->prompt_tokens + r->output_tokens);
    assert_true(r->got_first_token);
    if (p == CS_LLM_SCHED_ORCA || p == CS_LLM_SCHED_STATIC)
      assert_int_equal(r->restarts, 0);
    *restarts += r->restarts;
  }
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  assert_int_equal(cs_llm_sched_n_holding(m.s), 0);
  sim_end(&m);
}

static void test_random(void **state)
{
  (void)state;
  for (int p = CS_LLM_SCHED_VLLM; p <= CS_LLM_SCHED_STATIC; p++) {
    int64_t restarts = 0;
    for (uint64_t seed = 1; seed <= 300; seed++)
      run_random((CsLlmSchedPolicy)p, seed * 1000 + (uint64_t)p, &restarts);
    /* The memory is tight enough that vLLM and Sarathi restart requests. */
    if (p == CS_LLM_SCHED_VLLM || p == CS_LLM_SCHED_SARATHI)
      assert_true(restarts > 0);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_vllm_basic),        cmocka_unit_test(test_vllm_budget_and_blocks),
    cmocka_unit_test(test_vllm_watermark),    cmocka_unit_test(test_vllm_preempt),
    cmocka_unit_test(test_sarathi_chunks),
    cmocka_unit_test(test_sarathi_mixed),     cmocka_unit_test(test_sarathi_restart_partial),
    cmocka_unit_test(test_orca),              cmocka_unit_test(test_static),
    cmocka_unit_test(test_bad_input),         cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
