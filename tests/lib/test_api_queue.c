/* The dispatch interface's per-replica queue, its random stream and what
 * on_batch_finish says of a batch that fails for memory, as a user's policy
 * sees them: through <clustersim/clustersim.h> and the shared library only.
 *
 * Expected values are hand-computed timelines on the synthetic profile
 * (model a: l(b) = b + 6 ms here, zero network) under constant arrivals,
 * and the properties dispatch.h promises for the random stream. */
#include <glib/gstdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <clustersim/clustersim.h>

#include "test_util.h"

/* ---- the queue of one replica against a hand timeline ----------------------- */

#define PAIRS_REQUESTS 10

typedef struct {
  CsEngine *e;
  CsRequest held;
  gboolean holding;
  /* The replica's queue at each arrival, before the policy acts, and just
   * after each send; and at each batch start. */
  CsReplicaQueue before[PAIRS_REQUESTS], after_send[PAIRS_REQUESTS];
  CsReplicaQueue at_start[PAIRS_REQUESTS];
  int arrivals, starts;
  gboolean sums_match;   /* replica's counters = the GPU's at every probe */
  gboolean out_of_range; /* replica 1 (there is none) answered FALSE, zeroed */
} Pairs;

static void probe(Pairs *p, CsReplicaQueue *q)
{
  assert_true(cs_engine_replica_queue(p->e, 0, q));
  if (q->in_transfer != cs_engine_gpu_in_transfer(p->e, 0) ||
      q->queued != cs_engine_gpu_queued(p->e, 0) ||
      (q->busy ? 1 : 0) != cs_engine_gpu_running(p->e, 0))
    p->sums_match = FALSE;
}

static void *pairs_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Pairs *p = user_data;
  p->e = e;
  p->sums_match = TRUE;
  CsReplicaQueue q = { .queued = 7, .busy = TRUE };
  p->out_of_range = !cs_engine_replica_queue(e, 1, &q) && q.queued == 0 && !q.busy &&
                    !cs_engine_replica_queue(e, -1, &q);
  return p;
}

static void pairs_destroy(void *state)
{
  (void)state;
}

/* Requests go in pairs: the even one waits for the odd one. */
static void pairs_on_request(void *state, int model, const CsRequest *r)
{
  Pairs *p = state;
  int k = p->arrivals++;
  probe(p, &p->before[k]);
  if (!p->holding) {
    p->held = *r;
    p->holding = TRUE;
    return;
  }
  CsBatch *b = cs_engine_batch_new(p->e, model, 2);
  cs_batch_add(p->e, b, &p->held);
  cs_batch_add(p->e, b, r);
  p->holding = FALSE;
  cs_engine_send_replica(p->e, b, 0);
  probe(p, &p->after_send[k]);
}

static void pairs_on_start(void *state, const CsBatchEvent *b)
{
  (void)b;
  Pairs *p = state;
  probe(p, &p->at_start[p->starts++]);
}

static const CsDispatchPolicy pairs = {
  .name = "pairs",
  .uses_placement = TRUE,
  .create = pairs_create,
  .destroy = pairs_destroy,
  .on_request = pairs_on_request,
  .on_batch_start = pairs_on_start,
};

/* Requests every 2.5 ms, in pairs to one replica; l(2) = 8 ms. By hand: batch
 * j leaves at (2j + 1) x 2.5 ms with requests 2j and 2j + 1, and runs
 * [2.5 + 8j, 10.5 + 8j) ms (each waits for the one before from batch 1 on).
 * Before arrival k (at 2.5k ms): sent floor(k / 2) batches, finished those
 * ending by then; the replica is busy once one is sent, and the rest queue. */
static void test_replica_queue_hand_timeline(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 6.0);
  Pairs p = { 0 };
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_dispatch(reg, &pairs, &p, NULL));
  CsScenario *sc = test_scenario(
    dir, "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
         " \"dispatch\": {\"policy\": \"pairs\"},"
         " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0,"
         " \"batch\": 2}]},"
         " \"clients\": [{\"model\": \"a\", \"rate\": 400, \"slo_ms\": 100,"
         " \"arrival\": \"constant\", \"requests\": 10}]}");
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  CsResults *res = test_run(sc, NULL);
  assert_int_equal(p.arrivals, PAIRS_REQUESTS);
  assert_true(p.out_of_range);
  assert_true(p.sums_match);
  /*                               k:  0  1  2  3  4  5  6  7  8  9 */
  static const int sent[] =       { 0, 0, 1, 1, 2, 2, 3, 3, 4, 4 };
  static const int finished[] =   { 0, 0, 0, 0, 0, 1, 1, 1, 2, 2 };
  for (int k = 0; k < PAIRS_REQUESTS; k++) {
    const CsReplicaQueue *q = &p.before[k];
    int outstanding = sent[k] - finished[k];
    gboolean busy = outstanding > 0;
    int queued = outstanding - (busy ? 1 : 0);
    if (q->in_transfer != 0 || q->queued != queued || q->busy != busy ||
        q->waiting_requests != 2 * queued || q->running_requests != (busy ? 2 : 0) ||
        q->fails_memory)
      fail_msg("arrival %d: in_transfer %d queued %d waiting %ld busy %d running %ld; expected "
               "queued %d busy %d", k, q->in_transfer, q->queued, (long)q->waiting_requests,
               q->busy, (long)q->running_requests, queued, busy);
    if (k % 2 == 1) {
      /* Just sent, zero network: in transfer until its node event, at this
       * same time. */
      const CsReplicaQueue *a = &p.after_send[k];
      assert_int_equal(a->in_transfer, 1);
      assert_int_equal(a->queued, queued);
      assert_int_equal(a->waiting_requests, 2 * queued + 2);
      assert_int_equal(a->busy, busy);
    }
  }
  /* At each start the batch runs and what is left waits: batch 1 starts at
   * 10.5 ms, before batch 2 leaves (12.5); batches 2 and 3 (at 18.5, 26.5)
   * find the next one queued (sent at 17.5, 22.5); batch 4 is the last. */
  assert_int_equal(p.starts, 5);
  static const int queued_at_start[] = { 0, 0, 1, 1, 0 };
  for (int j = 0; j < 5; j++) {
    assert_true(p.at_start[j].busy);
    assert_int_equal(p.at_start[j].running_requests, 2);
    assert_int_equal(p.at_start[j].queued, queued_at_start[j]);
    assert_int_equal(p.at_start[j].waiting_requests, 2 * queued_at_start[j]);
  }
  assert_int_equal(cs_results_model(res, 0)->completed, 10);
  cs_results_free(res);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- a batch that fails for memory: no callback, the queue lets it go ------- */

/* Models e (Mreq 60 %) and f (Mreq 50 %) on one GPU: f does not fit. */
static const char mem_profile[] =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"tests\","
  " \"models\": ["
  "  {\"gpu\": \"gpu\", \"model\": \"e\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2,"
  " \"mreq_pct\": 60}, {\"batch\": 2, \"latency_ms\": 3, \"mreq_pct\": 65}]},"
  "  {\"gpu\": \"gpu\", \"model\": \"f\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2,"
  " \"mreq_pct\": 50}, {\"batch\": 2, \"latency_ms\": 3, \"mreq_pct\": 55}]}]}";

typedef struct {
  CsEngine *e;
  int starts[2], finishes[2];
  gboolean fails[2];     /* fails_memory of replicas 0 and 1 */
  gboolean active_f;     /* the failing replica is active (it takes batches) */
  CsReplicaQueue f_after_send, f_next_arrival;
  int f_arrivals;
} Failing;

static void *failing_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Failing *f = user_data;
  f->e = e;
  CsReplicaQueue q;
  for (int r = 0; r < 2; r++) {
    assert_true(cs_engine_replica_queue(e, r, &q));
    f->fails[r] = q.fails_memory;
  }
  f->active_f = cs_engine_replica_active(e, 1);
  return f;
}

static void failing_on_request(void *state, int model, const CsRequest *r)
{
  Failing *f = state;
  /* Replica r serves model r (the placement below). */
  if (model == 1 && f->f_arrivals++ == 1)
    assert_true(cs_engine_replica_queue(f->e, 1, &f->f_next_arrival));
  CsBatch *b = cs_engine_batch_new(f->e, model, 1);
  cs_batch_add(f->e, b, r);
  cs_engine_send_replica(f->e, b, model);
  if (model == 1 && f->f_arrivals == 1)
    assert_true(cs_engine_replica_queue(f->e, 1, &f->f_after_send));
}

static void failing_on_start(void *state, const CsBatchEvent *b)
{
  ((Failing *)state)->starts[b->replica]++;
}

static void failing_on_finish(void *state, const CsBatchEvent *b)
{
  ((Failing *)state)->finishes[b->replica]++;
}

static const CsDispatchPolicy failing = {
  .name = "to-own-replica",
  .uses_placement = TRUE,
  .create = failing_create,
  .destroy = pairs_destroy,
  .on_request = failing_on_request,
  .on_batch_start = failing_on_start,
  .on_batch_finish = failing_on_finish,
};

static void test_failed_replica_batches_get_no_callback(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  char *path = g_build_filename(dir, "mem.json", NULL);
  assert_true(g_file_set_contents(path, mem_profile, -1, NULL));
  g_free(path);
  Failing f = { 0 };
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_dispatch(reg, &failing, &f, NULL));
  CsScenario *sc = test_scenario(dir,
    "{\"profiles\": [\"synthetic.json\", \"mem.json\"],"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"memory_overflow\": \"fail_replicas\"},"
    " \"dispatch\": {\"policy\": \"to-own-replica\"},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"e\", \"gpu\": 0,"
    " \"batch\": 1}, {\"model\": \"f\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"e\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\","
    " \"requests\": 3}, {\"model\": \"f\", \"rate\": 10, \"slo_ms\": 50, \"arrival\": \"constant\","
    " \"requests\": 3}]}");
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  CsResults *res = test_run(sc, NULL);
  assert_false(f.fails[0]);
  assert_true(f.fails[1]);
  assert_true(f.active_f);
  /* e's batches run and say so; f's three fail at the node, silently. */
  assert_int_equal(f.starts[0], 3);
  assert_int_equal(f.finishes[0], 3);
  assert_int_equal(f.starts[1], 0);
  assert_int_equal(f.finishes[1], 0);
  assert_int_equal(cs_results_model(res, 1)->failed, 3);
  assert_int_equal(cs_results_model(res, 0)->completed, 3);
  /* Sent: in transfer; 100 ms later, gone from the queue, never busy. */
  assert_int_equal(f.f_after_send.in_transfer, 1);
  assert_int_equal(f.f_after_send.waiting_requests, 1);
  assert_true(f.f_after_send.fails_memory);
  assert_int_equal(f.f_next_arrival.in_transfer, 0);
  assert_int_equal(f.f_next_arrival.queued, 0);
  assert_int_equal(f.f_next_arrival.waiting_requests, 0);
  assert_false(f.f_next_arrival.busy);
  cs_results_free(res);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* ---- the policy's random stream ----------------------------------------------- */

#define DRAWS_KEPT 16
#define STREAM_REQUESTS 300

typedef struct {
  int per_request;                   /* draws per request */
  double u[DRAWS_KEPT];              /* the first draws of cs_engine_policy_uniform */
  uint64_t bits[DRAWS_KEPT];         /* then of cs_engine_policy_random */
  int64_t send_ns[STREAM_REQUESTS];  /* every request's send time */
  int n, drawn;
  gboolean in_range;                 /* every uniform in [0, 1) */
  CsEngine *e;
} Drawer;

static void *drawer_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Drawer *d = user_data;
  d->e = e;
  d->in_range = TRUE;
  for (int i = 0; i < DRAWS_KEPT; i++)
    d->u[i] = cs_engine_policy_uniform(e);
  for (int i = 0; i < DRAWS_KEPT; i++)
    d->bits[i] = cs_engine_policy_random(e);
  return d;
}

static void drawer_on_request(void *state, int model, const CsRequest *r)
{
  Drawer *d = state;
  if (d->n < STREAM_REQUESTS)
    d->send_ns[d->n++] = r->send_ns;
  for (int i = 0; i < d->per_request; i++) {
    double u = cs_engine_policy_uniform(d->e);
    d->in_range = d->in_range && u >= 0.0 && u < 1.0;
    d->drawn++;
  }
  CsBatch *b = cs_engine_batch_new(d->e, model, 1);
  cs_batch_add(d->e, b, r);
  cs_engine_send_gpu(d->e, b, 0);
}

static const CsDispatchPolicy drawer_a = {
  .name = "drawer-a",
  .create = drawer_create,
  .destroy = pairs_destroy,
  .on_request = drawer_on_request,
};

static void run_drawer(const char *policy, int seed, Drawer *d)
{
  static char *dir;
  if (!dir)
    dir = test_dir_with_profile(1.0, 4.0); /* kept for the process: removed at exit */
  CsDispatchPolicy b = drawer_a;
  b.name = "drawer-b";
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_dispatch(reg, &drawer_a, d, NULL));
  assert_true(cs_registry_add_dispatch(reg, &b, d, NULL));
  char *json = g_strdup_printf(
    "{\"seed\": %d, \"profiles\": [\"synthetic.json\"],"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"}, \"dispatch\": {\"policy\": \"%s\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 100, \"requests\": %d},"
    " {\"model\": \"b\", \"rate\": 30, \"slo_ms\": 100, \"arrival\": {\"process\": \"gamma\","
    " \"cv\": 2}, \"requests\": 100}]}",
    seed, policy, STREAM_REQUESTS - 100);
  CsScenario *sc = test_scenario(dir, json);
  g_free(json);
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  cs_results_free(test_run(sc, NULL));
  cs_scenario_free(sc);
  assert_int_equal(d->n, STREAM_REQUESTS);
  assert_int_equal(d->drawn, STREAM_REQUESTS * d->per_request);
  assert_true(d->in_range);
  /* The test's directory goes with the last run. */
  if (strcmp(policy, "drawer-b") == 0 && seed == 2) {
    test_dir_remove(dir);
    dir = NULL;
  }
}

static gboolean same_draws(const Drawer *x, const Drawer *y)
{
  return memcmp(x->u, y->u, sizeof x->u) == 0 && memcmp(x->bits, y->bits, sizeof x->bits) == 0;
}

/* How many of the kept draws agree (independent streams: about none). */
static int agreeing(const Drawer *x, const Drawer *y)
{
  int n = 0;
  for (int i = 0; i < DRAWS_KEPT; i++)
    n += (x->u[i] == y->u[i]) + (x->bits[i] == y->bits[i]);
  return n;
}

static void test_policy_stream(void **state)
{
  (void)state;
  Drawer *a1 = g_new0(Drawer, 1), *a1_again = g_new0(Drawer, 1), *a1_more = g_new0(Drawer, 1);
  Drawer *a2 = g_new0(Drawer, 1), *b1 = g_new0(Drawer, 1), *b2 = g_new0(Drawer, 1);
  a1_more->per_request = 7;
  run_drawer("drawer-a", 1, a1);
  run_drawer("drawer-a", 1, a1_again);
  run_drawer("drawer-a", 1, a1_more);
  run_drawer("drawer-a", 2, a2);
  run_drawer("drawer-b", 1, b1);
  run_drawer("drawer-b", 2, b2);
  /* Same seed, same policy: the same draws and the same arrivals. */
  assert_true(same_draws(a1, a1_again));
  assert_memory_equal(a1->send_ns, a1_again->send_ns, sizeof a1->send_ns);
  /* 2,100 more draws move no arrival of either client (Poisson and gamma). */
  assert_true(same_draws(a1, a1_more));
  assert_memory_equal(a1->send_ns, a1_more->send_ns, sizeof a1->send_ns);
  /* Another policy name: other draws, the same arrivals; another seed: both
   * change. 32-bit words agree by chance with probability 2^-32 each. */
  assert_int_equal(agreeing(a1, b1), 0);
  assert_memory_equal(a1->send_ns, b1->send_ns, sizeof a1->send_ns);
  assert_int_equal(agreeing(a1, a2), 0);
  assert_int_equal(agreeing(b1, b2), 0);
  assert_int_equal(agreeing(a2, b2), 0);
  assert_memory_not_equal(a1->send_ns, a2->send_ns, sizeof a1->send_ns);
  /* The 64-bit draws use both halves. */
  uint64_t or_hi = 0;
  for (int i = 0; i < DRAWS_KEPT; i++)
    or_hi |= a1->bits[i] >> 32;
  assert_true(or_hi != 0);
  g_free(a1), g_free(a1_again), g_free(a1_more), g_free(a2), g_free(b1), g_free(b2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_replica_queue_hand_timeline),
    cmocka_unit_test(test_failed_replica_batches_get_no_callback),
    cmocka_unit_test(test_policy_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
