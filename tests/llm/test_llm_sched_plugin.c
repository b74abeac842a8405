/* A replica scheduler of one's own (clustersim/llm.h): the example vLLM
 * written against the public header only (examples/extending/llm_vllm.c)
 * against the built-in vLLM, in lockstep on seeded random workloads with
 * tight memory (restarts, prefilled requests of disaggregated serving):
 * the same batches, restarts, first tokens, finishes and blocks after every
 * iteration. Then every misuse the framework stops, each once, and the
 * registry's refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <string.h>

#include "clustersim/registry.h"
#include "llm/llm_sched.h"

extern const CsLlmSchedulerPolicy cs_example_llm_vllm;

#define MAX_REQ 40

static int64_t ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

/* ---- lockstep ------------------------------------------------------------------ */

typedef struct {
  CsLlmSchedConfig cfg;
  int n;
  int arrive[MAX_REQ];
  int prompt[MAX_REQ], output[MAX_REQ];
  gboolean prefilled[MAX_REQ]; /* added as prefilled elsewhere (disaggregated) */
} Workload;

/* As tests/llm/test_sched_vidur.py draws vLLM's: max_tokens 160, blocks for
 * one longest request and a few more, so that memory runs out often. */
static void draw(GRand *g, Workload *w)
{
  memset(w, 0, sizeof *w);
  cs_llm_sched_config_init(&w->cfg, CS_LLM_SCHED_VLLM);
  CsLlmSchedConfig *c = &w->cfg;
  c->max_tokens = 160;
  c->block_size = g_rand_double(g) < 0.4 ? 16 : g_rand_int_range(g, 1, 21);
  c->batch_size_cap = g_rand_int_range(g, 1, 9);
  c->max_tokens_in_batch = g_rand_int_range(g, 159, 401);
  static const double wms[] = { 0.0, 0.01, 0.1 };
  c->watermark_blocks_fraction = wms[g_rand_int_range(g, 0, 3)];
  int64_t need = ceil_div(c->max_tokens - 1, c->block_size);
  c->num_blocks = need + 1 + g_rand_int_range(g, 0, (gint32)(need * 3 + 1));
  if (need > c->num_blocks - (int64_t)(c->watermark_blocks_fraction * c->num_blocks))
    c->num_blocks = need * 2 + 2;
  w->n = g_rand_int_range(g, 1, 25);
  int t = 0;
  for (int i = 0; i < w->n; i++) {
    t += g_rand_double(g) < 0.5 ? 0 : g_rand_int_range(g, 0, 7);
    w->arrive[i] = t;
    w->prompt[i] = g_rand_int_range(g, 1, 101);
    w->output[i] = g_rand_int_range(g, 1, 61);
    w->prefilled[i] = w->output[i] >= 2 && g_rand_double(g) < 0.2;
  }
}

typedef struct {
  CsLlmSched *s;
  CsLlmRequest req[MAX_REQ];
} Side;

static void side_start(Side *d, const Workload *w, gboolean custom)
{
  memset(d, 0, sizeof *d);
  CsLlmSchedConfig c = w->cfg;
  if (custom) {
    c.policy = CS_LLM_SCHED_CUSTOM;
    c.custom = &cs_example_llm_vllm;
  }
  GError *e = NULL;
  d->s = cs_llm_sched_new(&c, &e);
  if (e != NULL)
    fail_msg("%s", e->message);
  for (int i = 0; i < w->n; i++)
    cs_llm_request_init(&d->req[i], i, i, w->prompt[i], w->output[i]);
}

static void side_add(Side *d, const Workload *w, int i)
{
  GError *e = NULL;
  gboolean ok = w->prefilled[i] ? cs_llm_sched_add_prefilled(d->s, &d->req[i], &e)
                                : cs_llm_sched_add(d->s, &d->req[i], &e);
  if (!ok)
    fail_msg("request %d: %s", i, e->message);
}

/* Runs w on both sides; returns the restarts (the same on both). */
static int64_t lockstep(const Workload *w)
{
  Side a, b; /* built-in, custom */
  side_start(&a, w, FALSE);
  side_start(&b, w, TRUE);
  int added = 0, finished = 0, iter = 0;
  while (finished < w->n) {
    assert_true(iter < 100000);
    while (added < w->n && w->arrive[added] <= iter) {
      side_add(&a, w, added);
      side_add(&b, w, added);
      added++;
    }
    /* Prefilled requests whose decode blocks fit are reserved and their
     * transfer ends at once (llm_sim times it). */
    for (;;) {
      CsLlmRequest *ra = cs_llm_sched_reserve_prefilled(a.s);
      CsLlmRequest *rb = cs_llm_sched_reserve_prefilled(b.s);
      assert_int_equal(ra == NULL, rb == NULL);
      if (ra == NULL)
        break;
      assert_int_equal(ra->id, rb->id);
      assert_true(cs_llm_sched_prefilled_arrived(a.s, ra, NULL));
      assert_true(cs_llm_sched_prefilled_arrived(b.s, rb, NULL));
    }
    /* Batches are formed while fewer than num_stages are in flight (one
     * at a time with one stage). */
    const CsLlmBatch *x, *y;
    while (cs_llm_sched_n_in_flight(a.s) < w->cfg.num_stages) {
      GError *e = NULL;
      x = cs_llm_sched_next_batch(a.s, NULL);
      y = cs_llm_sched_next_batch(b.s, &e);
      if (e != NULL)
        fail_msg("iteration %d: %s", iter, e->message);
      assert_int_equal(x == NULL, y == NULL);
      assert_int_equal(cs_llm_sched_n_restarts(a.s), cs_llm_sched_n_restarts(b.s));
      if (x == NULL)
        break;
      assert_int_equal(x->n, y->n);
      assert_int_equal(x->n_restarted, y->n_restarted);
      for (int k = 0; k < x->n_restarted; k++)
        assert_int_equal(x->restarted[k]->id, y->restarted[k]->id);
      for (int k = 0; k < x->n; k++) {
        assert_int_equal(x->entries[k].req->id, y->entries[k].req->id);
        assert_int_equal(x->entries[k].tokens, y->entries[k].tokens);
        assert_int_equal(x->entries[k].prefill, y->entries[k].prefill);
      }
    }
    assert_int_equal(cs_llm_sched_n_in_flight(a.s), cs_llm_sched_n_in_flight(b.s));
    if (cs_llm_sched_n_in_flight(a.s) == 0) {
      assert_true(added < w->n); /* nothing held back with nothing in flight */
      iter = w->arrive[added];
      continue;
    }
    x = cs_llm_sched_batch_done(a.s, NULL);
    y = cs_llm_sched_batch_done(b.s, NULL);
    for (int k = 0; k < x->n; k++) {
      assert_int_equal(x->entries[k].first_token, y->entries[k].first_token);
      assert_int_equal(x->entries[k].finished, y->entries[k].finished);
      finished += x->entries[k].finished;
    }
    assert_int_equal(cs_llm_sched_allocated_blocks(a.s), cs_llm_sched_allocated_blocks(b.s));
    assert_int_equal(cs_llm_sched_n_waiting(a.s), cs_llm_sched_n_waiting(b.s));
    assert_int_equal(cs_llm_sched_n_running(a.s), cs_llm_sched_n_running(b.s));
    for (int i = 0; i < w->n; i++) {
      assert_int_equal(a.req[i].blocks, b.req[i].blocks);
      assert_int_equal(a.req[i].processed_tokens, b.req[i].processed_tokens);
    }
    iter++;
  }
  for (int i = 0; i < w->n; i++)
    assert_int_equal(b.req[i].emitted_tokens, w->output[i]);
  assert_int_equal(cs_llm_sched_allocated_blocks(b.s), 0);
  int64_t restarts = cs_llm_sched_n_restarts(a.s);
  cs_llm_sched_free(a.s);
  cs_llm_sched_free(b.s);
  return restarts;
}

static void equals_builtin(guint32 seed, gboolean stages)
{
  GRand *g = g_rand_new_with_seed(seed);
  int64_t restarts = 0;
  int with_prefilled = 0;
  for (int k = 0; k < 400; k++) {
    Workload w;
    draw(g, &w);
    /* 2 to 4 pipeline stages: up to that many batches in flight, each of
     * at most batch_size_cap / stages requests. */
    if (stages) {
      int st = g_rand_int_range(g, 2, 5);
      w.cfg.num_stages = MIN(st, w.cfg.batch_size_cap);
    }
    for (int i = 0; i < w.n; i++)
      if (w.prefilled[i]) {
        with_prefilled++;
        break;
      }
    restarts += lockstep(&w);
  }
  /* The workloads reach what the comparison is about. */
  print_message("%" PRId64 " restarts; %d of 400 workloads with prefilled requests\n", restarts, with_prefilled);
  assert_true(restarts > 100);
  assert_true(with_prefilled > 50);
  g_rand_free(g);
}

static void test_example_vllm_equals_builtin(void **state)
{
  (void)state;
  equals_builtin(38, FALSE);
}

/* The same with pipeline stages: the example reads
 * cs_llm_replica_num_stages for vLLM's max_micro_batch_size. */
static void test_example_vllm_equals_builtin_stages(void **state)
{
  (void)state;
  equals_builtin(39, TRUE);
}

/* ---- misuse --------------------------------------------------------------------- */

typedef enum {
  BAD_TOO_MANY_BLOCKS,
  BAD_SCHEDULE_WAITING,
  BAD_TWICE,
  BAD_CHUNK_TOO_LONG,
  BAD_CHUNK_NO_ROOM,
  BAD_DECODE_TWO,
  BAD_DECODE_NO_BLOCK,
  BAD_RESTART_WAITING,
  BAD_OTHER_REPLICA,
  BAD_OUTSIDE,
  BAD_IGNORED,
  BAD_FALSE_NO_ERROR,
  BAD_TRUE_WITH_ERROR,
  BAD_CREATE,
} BadMode;

static BadMode bad_mode;
static CsLlmRequest *foreign; /* a request of another replica */

/* Admits the waiting front with its whole prefill and schedules it, or
 * decodes the running front with a block when it needs one: a correct
 * policy the modes break one rule of. */
static gboolean bad_schedule(void *st, CsLlmReplica *rep, GError **error)
{
  (void)st;
  int bs = cs_llm_replica_block_size(rep);
  if (cs_llm_replica_n_waiting(rep) > 0) {
    CsLlmRequest *r = cs_llm_replica_waiting(rep, 0);
    int p = cs_llm_request_prefill_tokens(r);
    switch (bad_mode) {
    case BAD_TOO_MANY_BLOCKS:
      return cs_llm_replica_allocate(rep, r, cs_llm_replica_free_blocks(rep) + 1, error);
    case BAD_SCHEDULE_WAITING:
      return cs_llm_replica_schedule(rep, r, p, error);
    case BAD_RESTART_WAITING:
      return cs_llm_replica_restart(rep, r, error);
    case BAD_OTHER_REPLICA:
      return cs_llm_replica_allocate(rep, foreign, 1, error);
    case BAD_IGNORED:
      (void)cs_llm_replica_allocate(rep, r, 1 << 30, NULL);
      break;
    case BAD_FALSE_NO_ERROR:
      return FALSE;
    case BAD_TRUE_WITH_ERROR:
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "it went wrong");
      return TRUE;
    default:
      break;
    }
    int64_t need = ceil_div(p, bs);
    if (bad_mode == BAD_CHUNK_NO_ROOM)
      need = ceil_div(p, bs) - 1;
    if (!cs_llm_replica_allocate(rep, r, need, error))
      return FALSE;
    if (bad_mode == BAD_CHUNK_TOO_LONG)
      return cs_llm_replica_schedule(rep, r, p + 1, error);
    if (!cs_llm_replica_schedule(rep, r, p, error))
      return FALSE;
    if (bad_mode == BAD_TWICE)
      return cs_llm_replica_schedule(rep, r, p, error);
    return TRUE;
  }
  CsLlmRequest *r = cs_llm_replica_running(rep, 0);
  if (bad_mode == BAD_DECODE_TWO)
    return cs_llm_replica_schedule(rep, r, 2, error);
  if (bad_mode != BAD_DECODE_NO_BLOCK &&
      cs_llm_request_processed_tokens(r) > cs_llm_request_blocks(r) * bs &&
      !cs_llm_replica_allocate(rep, r, 1, error))
    return FALSE;
  return cs_llm_replica_schedule(rep, r, 1, error);
}

static void bad_done(void *st, const CsLlmReplica *rep)
{
  (void)st;
  if (bad_mode == BAD_OUTSIDE)
    (void)cs_llm_replica_restart((CsLlmReplica *)rep, cs_llm_replica_running(rep, 0), NULL);
}

static void *bad_create(const CsLlmReplica *rep, const void *params, void *ud, GError **error)
{
  (void)rep, (void)params, (void)ud;
  if (bad_mode == BAD_CREATE)
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "no state today");
  return NULL;
}

static void bad_destroy(void *st)
{
  (void)st;
}

static const CsLlmSchedulerPolicy bad_policy = {
  .name = "bad",
  .create = bad_create,
  .destroy = bad_destroy,
  .schedule = bad_schedule,
  .on_batch_done = bad_done,
};

static CsLlmSched *bad_sched(GError **error)
{
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_CUSTOM);
  c.custom = &bad_policy;
  c.num_blocks = 100;
  return cs_llm_sched_new(&c, error);
}

/* Runs mode on one request (prompt 16, output 3, blocks of 16) and expects
 * the run stopped at the at-th batch (0: the first) with CS_ERROR_POLICY and
 * a message holding want. */
static void expect_stop(BadMode mode, int at, const char *want)
{
  bad_mode = mode;
  GError *e = NULL;
  CsLlmSched *s = bad_sched(&e);
  assert_non_null(s);
  CsLlmSched *other = bad_sched(&e);
  CsLlmRequest r, f;
  cs_llm_request_init(&r, 7, 0, 16, 3);
  cs_llm_request_init(&f, 8, 0, 16, 3);
  assert_true(cs_llm_sched_add(s, &r, &e));
  assert_true(cs_llm_sched_add(other, &f, &e));
  foreign = &f;
  const CsLlmBatch *b = NULL;
  int iter = 0;
  for (; iter < 4; iter++) {
    b = cs_llm_sched_next_batch(s, &e);
    if (e != NULL)
      break;
    if (b != NULL)
      assert_non_null(cs_llm_sched_batch_done(s, NULL));
  }
  if (e == NULL || iter != at)
    fail_msg("mode %d: %s at batch %d, expected an error at %d", mode,
             e ? e->message : "no error", iter, at);
  assert_null(b);
  assert_true(g_error_matches(e, CS_ERROR, CS_ERROR_POLICY));
  if (strstr(e->message, want) == NULL || strstr(e->message, "LLM scheduler \"bad\"") == NULL)
    fail_msg("mode %d: message \"%s\", expected \"%s\"", mode, e->message, want);
  g_error_free(e);
  cs_llm_sched_free(s);
  cs_llm_sched_free(other);
}

static void test_misuse_stops(void **state)
{
  (void)state;
  expect_stop(BAD_TOO_MANY_BLOCKS, 0, "cs_llm_replica_allocate: request 7: 101 blocks, "
              "expected 1 to the 100 free");
  expect_stop(BAD_SCHEDULE_WAITING, 0, "cs_llm_replica_schedule: request 7: waiting, expected "
              "a running request");
  expect_stop(BAD_TWICE, 0, "request 7: already in the batch, expected a running request");
  expect_stop(BAD_CHUNK_TOO_LONG, 0, "a prefill chunk of 17 tokens, expected 1 to the 16");
  /* prompt 17 would need 2 blocks; 16 needs 1, and 0 is refused first. */
  expect_stop(BAD_CHUNK_NO_ROOM, 0, "0 blocks, expected 1 to the 100 free");
  expect_stop(BAD_DECODE_TWO, 1, "a decode of 2 tokens, expected 1");
  /* After its prefill of 16 (+1 output token) it has processed 17 in one
   * block of 16. */
  expect_stop(BAD_DECODE_NO_BLOCK, 1, "its 1 blocks hold 16 tokens, expected room for the 17 "
              "processed");
  expect_stop(BAD_RESTART_WAITING, 0, "cs_llm_replica_restart: request 7: waiting, expected a "
              "running request");
  expect_stop(BAD_OTHER_REPLICA, 0, "request 8: a request of another replica");
  expect_stop(BAD_OUTSIDE, 1, "cs_llm_replica_restart: called outside the policy's schedule");
  expect_stop(BAD_IGNORED, 0, "1073741824 blocks");
  expect_stop(BAD_FALSE_NO_ERROR, 0, "schedule returned FALSE and set no error");
  expect_stop(BAD_TRUE_WITH_ERROR, 0, "it went wrong");
}

static void test_chunk_without_room(void **state)
{
  (void)state;
  /* A prompt of 20 in one block of 16: the chunk of 20 has no room. */
  bad_mode = BAD_CHUNK_NO_ROOM;
  GError *e = NULL;
  CsLlmSched *s = bad_sched(&e);
  CsLlmRequest r;
  cs_llm_request_init(&r, 3, 0, 20, 2);
  assert_true(cs_llm_sched_add(s, &r, &e));
  assert_null(cs_llm_sched_next_batch(s, &e));
  assert_non_null(e);
  assert_non_null(strstr(e->message, "request 3: its 1 blocks hold 16 tokens, expected room "
                                     "for the 0 processed and the 20 of this chunk"));
  g_error_free(e);
  cs_llm_sched_free(s);
}

static void test_create_fails(void **state)
{
  (void)state;
  bad_mode = BAD_CREATE;
  GError *e = NULL;
  assert_null(bad_sched(&e));
  assert_non_null(e);
  assert_string_equal(e->message, "LLM scheduler \"bad\": no state today");
  g_error_free(e);
}

/* A custom policy's request bound: the replica's blocks, not the watermark
 * (the policy's own to keep). */
static void test_custom_add_bounds(void **state)
{
  (void)state;
  bad_mode = BAD_TWICE;
  GError *e = NULL;
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_CUSTOM);
  c.custom = &bad_policy;
  c.num_blocks = 10;
  c.block_size = 16;
  c.watermark_blocks_fraction = 0.5;
  CsLlmSched *s = cs_llm_sched_new(&c, &e);
  CsLlmRequest ok, big;
  cs_llm_request_init(&ok, 1, 0, 150, 11); /* up to 160 tokens: 10 blocks */
  cs_llm_request_init(&big, 2, 0, 150, 12);
  assert_true(cs_llm_sched_add(s, &ok, &e));
  assert_false(cs_llm_sched_add(s, &big, &e));
  assert_non_null(strstr(e->message, "needs 11 blocks, expected <= num_blocks (10 - 0)"));
  g_error_free(e);
  cs_llm_sched_free(s);
  /* A custom config without its policy, or a policy without CUSTOM. */
  e = NULL;
  c.custom = NULL;
  assert_null(cs_llm_sched_new(&c, &e));
  g_clear_error(&e);
  cs_llm_sched_config_init(&c, CS_LLM_SCHED_VLLM);
  c.num_blocks = 10;
  c.custom = &bad_policy;
  assert_null(cs_llm_sched_new(&c, &e));
  g_clear_error(&e);
}

/* ---- registry ------------------------------------------------------------------ */

static gboolean noop_schedule(void *st, CsLlmReplica *rep, GError **error)
{
  (void)st, (void)rep, (void)error;
  return TRUE;
}

static void *noop_parse(CsParams *p, void *ud, GError **error)
{
  (void)p, (void)ud, (void)error;
  return g_strdup("x");
}

static void test_registry(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  assert_int_equal(cs_registry_n_llm_scheduler(r), 0);
  GError *e = NULL;
  static const char *const builtin[] = { "vllm", "sarathi", "orca", "static",
                                         "faster_transformer" };
  for (size_t i = 0; i < G_N_ELEMENTS(builtin); i++) {
    CsLlmSchedulerPolicy p = { .name = builtin[i], .schedule = noop_schedule };
    assert_false(cs_registry_add_llm_scheduler(r, &p, NULL, &e));
    assert_non_null(strstr(e->message, "already has a policy of that name (a built-in"));
    g_clear_error(&e);
  }
  static const CsLlmSchedulerPolicy no_schedule = { .name = "a" };
  static const CsLlmSchedulerPolicy no_free = { .name = "b", .schedule = noop_schedule,
                                                .parse = noop_parse };
  static const CsLlmSchedulerPolicy no_destroy = { .name = "c", .schedule = noop_schedule,
                                                   .create = bad_create };
  static const CsLlmSchedulerPolicy bad_name = { .name = "a b", .schedule = noop_schedule };
  static const CsLlmSchedulerPolicy good = { .name = "mine", .schedule = noop_schedule };
  const struct {
    const CsLlmSchedulerPolicy *p;
    const char *want;
  } refused[] = { { &no_schedule, "no schedule callback" },
                  { &no_free, "no free_params (it has parse) callback" },
                  { &no_destroy, "no destroy (it has create) callback" },
                  { &bad_name, "letters, digits" } };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    assert_false(cs_registry_add_llm_scheduler(r, refused[i].p, NULL, &e));
    if (strstr(e->message, refused[i].want) == NULL)
      fail_msg("\"%s\", expected \"%s\"", e->message, refused[i].want);
    g_clear_error(&e);
  }
  int ud = 5;
  assert_true(cs_registry_add_llm_scheduler(r, &good, &ud, &e));
  assert_false(cs_registry_add_llm_scheduler(r, &good, NULL, &e));
  assert_non_null(strstr(e->message, "a policy the program added"));
  g_clear_error(&e);
  void *got = NULL;
  assert_ptr_equal(cs_registry_llm_scheduler(r, "mine", &got), &good);
  assert_ptr_equal(got, &ud);
  assert_null(cs_registry_llm_scheduler(r, "vllm", &got));
  assert_null(got);
  assert_int_equal(cs_registry_n_llm_scheduler(r), 1);
  assert_ptr_equal(cs_registry_llm_scheduler_at(r, 0), &good);
  assert_null(cs_registry_llm_scheduler_at(r, 1));
  cs_registry_unref(r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_example_vllm_equals_builtin),
    cmocka_unit_test(test_example_vllm_equals_builtin_stages),
    cmocka_unit_test(test_misuse_stops),
    cmocka_unit_test(test_chunk_without_room),
    cmocka_unit_test(test_create_fails),
    cmocka_unit_test(test_custom_add_bounds),
    cmocka_unit_test(test_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
