/* The replica schedulers with pipeline stages (src/llm/llm_sched.c,
 * num_stages > 1): up to num_stages batches in flight, the running list
 * without their requests, batches ended oldest first, and each policy's
 * batch limit (Vidur's vLLM and Sarathi: max_micro_batch_size =
 * batch_size_cap / num_stages; Orca and static: min(max_batch_size,
 * batch_size_cap), not divided). The timelines are traced by hand from
 * Vidur's rules (llm_sched.h); a batch is written "A=20 B" as in
 * test_llm_sched.c: A prefills 20 tokens, B decodes one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/json_input.h"
#include "llm/llm_sched.h"

#define MAX_REQ 8

typedef struct {
  CsLlmSchedConfig cfg;
  CsLlmSched *s;
  CsLlmRequest req[MAX_REQ];
  int n;
} Sim;

static void sim_init(Sim *m, CsLlmSchedPolicy p, int64_t num_blocks, int stages, int cap)
{
  memset(m, 0, sizeof *m);
  cs_llm_sched_config_init(&m->cfg, p);
  m->cfg.num_blocks = num_blocks;
  m->cfg.num_stages = stages;
  m->cfg.batch_size_cap = cap;
}

static void sim_start(Sim *m)
{
  GError *e = NULL;
  m->s = cs_llm_sched_new(&m->cfg, &e);
  assert_null(e);
  assert_non_null(m->s);
}

static CsLlmRequest *R(Sim *m, char name)
{
  return &m->req[name - 'A'];
}

static void add(Sim *m, char name, int prompt, int output)
{
  GError *e = NULL;
  cs_llm_request_init(R(m, name), name, m->n++, prompt, output);
  assert_true(cs_llm_sched_add(m->s, R(m, name), &e));
  assert_null(e);
}

static void batch_text(const CsLlmBatch *b, char *buf, size_t len)
{
  buf[0] = '\0';
  for (int i = 0; i < b->n; i++) {
    const CsLlmBatchEntry *e = &b->entries[i];
    char one[32];
    if (e->prefill)
      snprintf(one, sizeof one, "%s%c=%d", i ? " " : "", (char)e->req->id, e->tokens);
    else
      snprintf(one, sizeof one, "%s%c", i ? " " : "", (char)e->req->id);
    g_strlcat(buf, one, len);
  }
}

/* No request of a batch in flight is in the running list or waiting, and
 * every one is IN_BATCH. */
static void check_flight(Sim *m)
{
  for (int k = 0; k < cs_llm_sched_n_in_flight(m->s); k++) {
    const CsLlmBatch *b = cs_llm_sched_flight(m->s, k);
    for (int i = 0; i < b->n; i++)
      assert_int_equal(b->entries[i].req->state, CS_LLM_REQ_IN_BATCH);
  }
  int running = 0;
  for (int i = 0; i < MAX_REQ; i++)
    running += m->req[i].prompt_tokens > 0 && m->req[i].state == CS_LLM_REQ_RUNNING;
  assert_int_equal(running, cs_llm_sched_n_running(m->s));
}

/* Forms the next batch: it must be `expect` ("" for none), and then
 * `flight` batches are in flight. */
static void form(Sim *m, const char *expect, int flight)
{
  GError *e = NULL;
  const CsLlmBatch *b = cs_llm_sched_next_batch(m->s, &e);
  assert_null(e);
  if (expect[0] == '\0') {
    assert_null(b);
  } else {
    assert_non_null(b);
    char got[256];
    batch_text(b, got, sizeof got);
    assert_string_equal(got, expect);
  }
  assert_int_equal(cs_llm_sched_n_in_flight(m->s), flight);
  check_flight(m);
}

/* Ends the oldest batch in flight: it must be `expect`, the requests in
 * `first` got their first token and those in `finished` finished. */
static void done(Sim *m, const char *expect, const char *first, const char *finished)
{
  GError *e = NULL;
  const CsLlmBatch *b = cs_llm_sched_batch_done(m->s, &e);
  assert_null(e);
  assert_non_null(b);
  char got[256], f[16] = "", d[16] = "";
  batch_text(b, got, sizeof got);
  assert_string_equal(got, expect);
  for (int i = 0; i < b->n; i++) {
    char id[2] = { (char)b->entries[i].req->id, '\0' };
    if (b->entries[i].first_token)
      g_strlcat(f, id, sizeof f);
    if (b->entries[i].finished)
      g_strlcat(d, id, sizeof d);
  }
  assert_string_equal(f, first);
  assert_string_equal(d, finished);
  check_flight(m);
}

/* vLLM, 2 stages, batch_size_cap 4: max_micro_batch_size 4 / 2 = 2. 100
 * blocks (watermark 1); A, B, C prompts 20, 40, 30, 3 output tokens each
 * (a prefill and 2 decodes; blocks 2, 3, 2).
 *  form 1: prefills A, B; C stops at the batch limit 2.      in flight 1
 *  form 2: C's prefill (the waiting queue's head), 7 blocks. in flight 2
 *  form 3: refused: 2 in flight. The running list is empty: A, B, C are
 *          in flight.
 *  done 1 (A=20 B=40): first tokens A, B; running [A, B].
 *  form:  decodes A B (no waiting request).                  in flight 2
 *  done 2 (C=30): C's first token; running [C].
 *  form:  C (A, B are in flight: not in the running list).
 *  done "A B": processed 22, 42 of 23, 43; running [A, B]. form: A B.
 *  done "C"; form: C. done "A B": both finish; form: none (C in flight).
 *  done "C": C finishes; nothing is held. */
static void test_vllm_two_stages(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_VLLM, 100, 2, 4);
  sim_start(&m);
  assert_int_equal(cs_llm_sched_batch_limit(m.s), 2);
  add(&m, 'A', 20, 3);
  add(&m, 'B', 40, 3);
  add(&m, 'C', 30, 3);
  form(&m, "A=20 B=40", 1);
  form(&m, "C=30", 2);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 7);
  assert_int_equal(cs_llm_sched_n_running(m.s), 0);
  GError *e = NULL;
  assert_null(cs_llm_sched_next_batch(m.s, &e));
  assert_non_null(e);
  assert_non_null(strstr(e->message, "2 batch(es) already in flight"));
  g_clear_error(&e);
  done(&m, "A=20 B=40", "AB", "");
  assert_int_equal(cs_llm_sched_n_running(m.s), 2);
  form(&m, "A B", 2);
  done(&m, "C=30", "C", "");
  form(&m, "C", 2);
  done(&m, "A B", "", "");
  form(&m, "A B", 2);
  done(&m, "C", "", "");
  form(&m, "C", 2);
  done(&m, "A B", "", "AB");
  form(&m, "", 1);
  done(&m, "C", "", "C");
  form(&m, "", 0);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  cs_llm_sched_free(m.s);
}

/* vLLM's sort of the running list by arrival decides with stages: a
 * request left over while others are in flight comes before them in the
 * list. 2 stages, cap 4 (max_micro_batch_size 2), 100 blocks; A, B, C, D
 * prompts 16, 10 output tokens each.
 *  form: prefills A, B; form: prefill C.
 *  done "A=16 B=16": running [A, B]. form: decodes A B.
 *  done "C=16": running [C]. D arrives. form: prefill first: D=16; C is
 *          left in the running list.
 *  done "A B": running [C, A, B], sorted by arrival [A, B, C]. form: A B
 *          (the limit 2; without the sort it would be C A).
 *  done "D=16": running [C, D]. form: C D. */
static void test_vllm_sort_by_arrival(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_VLLM, 100, 2, 4);
  sim_start(&m);
  add(&m, 'A', 16, 10);
  add(&m, 'B', 16, 10);
  add(&m, 'C', 16, 10);
  form(&m, "A=16 B=16", 1);
  form(&m, "C=16", 2);
  done(&m, "A=16 B=16", "AB", "");
  form(&m, "A B", 2);
  done(&m, "C=16", "C", "");
  add(&m, 'D', 16, 10);
  form(&m, "D=16", 2);
  assert_int_equal(cs_llm_sched_n_running(m.s), 1);
  done(&m, "A B", "", "");
  assert_int_equal(cs_llm_sched_n_running(m.s), 3);
  form(&m, "A B", 2);
  done(&m, "D=16", "D", "");
  form(&m, "C D", 2);
  cs_llm_sched_free(m.s);
}

/* Sarathi, 2 stages, batch_size_cap 4 (max_micro_batch_size 2), chunk 512,
 * 100 blocks; A prompt 600, B prompt 100, 2 output tokens each.
 *  form 1: A's first chunk min(600, 512) = 512 (38 blocks for its whole
 *          prefill); B's chunk would be min(100, 512 - 512) = 0: stop.
 *  form 2: B=100 (A in flight is not in the running list).
 *  done 1: A has 512 of 600; running [A]. form: A=88 (the rest).
 *  done 2: B's prefill complete, first token; running [B]. form: B.
 *  done "A=88": A's first token; running [A]. form: A.
 *  done "B": B finishes. done "A": A finishes. */
static void test_sarathi_two_stages(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_SARATHI, 100, 2, 4);
  sim_start(&m);
  assert_int_equal(cs_llm_sched_batch_limit(m.s), 2);
  add(&m, 'A', 600, 2);
  add(&m, 'B', 100, 2);
  form(&m, "A=512", 1);
  form(&m, "B=100", 2);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 38 + 7);
  done(&m, "A=512", "", "");
  form(&m, "A=88", 2);
  done(&m, "B=100", "B", "");
  form(&m, "B", 2);
  done(&m, "A=88", "A", "");
  form(&m, "A", 2);
  done(&m, "B", "", "B");
  done(&m, "A", "", "A");
  form(&m, "", 0);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  cs_llm_sched_free(m.s);
}

/* Static batching, 2 stages: max_batch = min(max_batch_size 2, cap 128) =
 * 2, not divided by the stages. max_tokens 64, block 16: 4 blocks per
 * request, 16 blocks (4 requests). A..E prompts 10, outputs 2, 3, 2, 2, 1.
 *  form 1: A, B (the limit 2). form 2: C, D (16 blocks held).
 *  done 1: first A, B; the batch [A, B] is to re-run. form: A B.
 *  done 2: first C, D; [C, D] to re-run. form: C D.
 *  done "A B": A finishes (its 4 blocks free), [B] to re-run. form: B
 *          (a batch to re-run goes before E, whose blocks would fit).
 *  done "C D": both finish, 8 blocks free; no batch to re-run. form: E=10.
 *  done "B": B finishes; done "E=10": E's only token. */
static void test_static_two_stages(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_STATIC, 16, 2, 128);
  m.cfg.max_batch_size = 2;
  m.cfg.max_tokens = 64;
  sim_start(&m);
  assert_int_equal(cs_llm_sched_batch_limit(m.s), 2);
  add(&m, 'A', 10, 2);
  add(&m, 'B', 10, 3);
  add(&m, 'C', 10, 2);
  add(&m, 'D', 10, 2);
  add(&m, 'E', 10, 1);
  form(&m, "A=10 B=10", 1);
  form(&m, "C=10 D=10", 2);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 16);
  done(&m, "A=10 B=10", "AB", "");
  form(&m, "A B", 2);
  done(&m, "C=10 D=10", "CD", "");
  form(&m, "C D", 2);
  done(&m, "A B", "", "A");
  form(&m, "B", 2);
  done(&m, "C D", "", "CD");
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 4);
  form(&m, "E=10", 2);
  done(&m, "B", "", "B");
  done(&m, "E=10", "E", "E");
  form(&m, "", 0);
  assert_int_equal(cs_llm_sched_allocated_blocks(m.s), 0);
  cs_llm_sched_free(m.s);
}

/* Static batching when the caller ends both batches before forming again:
 * each re-runs on its own, oldest first (Vidur's _preempted_batches), not
 * as one batch of both. 2 stages, max_batch 2; A..D prompts 10, 3 output
 * tokens. form A B, form C D; done, done; form: A B; form: C D. */
static void test_static_batches_apart(void **state)
{
  (void)state;
  Sim m;
  sim_init(&m, CS_LLM_SCHED_STATIC, 16, 2, 128);
  m.cfg.max_batch_size = 2;
  m.cfg.max_tokens = 64;
  sim_start(&m);
  add(&m, 'A', 10, 3);
  add(&m, 'B', 10, 3);
  add(&m, 'C', 10, 3);
  add(&m, 'D', 10, 3);
  form(&m, "A=10 B=10", 1);
  form(&m, "C=10 D=10", 2);
  done(&m, "A=10 B=10", "AB", "");
  done(&m, "C=10 D=10", "CD", "");
  form(&m, "A B", 1);
  form(&m, "C D", 2);
  cs_llm_sched_free(m.s);
}

/* The limits at 4 stages, cap 128: vLLM and Sarathi 128 / 4 = 32; Orca
 * min(max_batch_size 128, 128) = 128. A cap below the stages is refused
 * for vLLM (its limit would be 0) but not for Orca. */
static void test_limits(void **state)
{
  (void)state;
  static const struct {
    CsLlmSchedPolicy p;
    int64_t limit;
  } cases[] = { { CS_LLM_SCHED_VLLM, 32 }, { CS_LLM_SCHED_SARATHI, 32 },
                { CS_LLM_SCHED_ORCA, 128 }, { CS_LLM_SCHED_STATIC, 128 } };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    Sim m;
    sim_init(&m, cases[i].p, 1000, 4, 128);
    sim_start(&m);
    assert_int_equal(cs_llm_sched_batch_limit(m.s), cases[i].limit);
    cs_llm_sched_free(m.s);
  }
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_VLLM);
  c.num_blocks = 1000;
  c.num_stages = 4;
  c.batch_size_cap = 3;
  GError *e = NULL;
  assert_null(cs_llm_sched_new(&c, &e));
  assert_non_null(strstr(e->message, "batch_size_cap is 3 with 4 pipeline stages"));
  g_clear_error(&e);
  c.policy = CS_LLM_SCHED_ORCA;
  CsLlmSched *s = cs_llm_sched_new(&c, &e);
  assert_null(e);
  assert_int_equal(cs_llm_sched_batch_limit(s), 3);
  cs_llm_sched_free(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_vllm_two_stages),
    cmocka_unit_test(test_vllm_sort_by_arrival),
    cmocka_unit_test(test_sarathi_two_stages),
    cmocka_unit_test(test_static_two_stages),
    cmocka_unit_test(test_static_batches_apart),
    cmocka_unit_test(test_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
