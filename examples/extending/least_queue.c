/* An external dispatch policy on a placement, written against the installed
 * headers only: each batch goes to the replica of its model with the fewest
 * requests waiting or running there, read from the engine's per-replica
 * queue (cs_engine_replica_queue), ties broken by the policy's own random
 * stream (cs_engine_policy_uniform).
 *
 *   cc least_queue.c $(pkg-config --cflags --libs clustersim) -o least_queue
 *   ./least_queue PROFILE.json        (data/profiles/v100_thesis.json)
 *
 * The policy keeps one open batch per model; it leaves with max_batch
 * requests or max_wait_ms after its first, like the thesis' router. The
 * program registers it, then checks it:
 *   - with one replica there is no choice: it must simulate exactly like
 *     the router with that replica (same counts and latencies);
 *   - with two replicas on two GPUs at a rate one cannot serve, both must
 *     get batches, each replica's queue must add up to its GPU's counters
 *     at every send, and two runs must give the same numbers (the random
 *     stream is the run seed's).
 * Exit status 0 when every check holds, 1 otherwise, 2 on bad arguments. */
#include <stdio.h>
#include <string.h>

#include <clustersim/clustersim.h>

typedef struct {
  int max_batch;
  double max_wait_ms;
} LqParams;

typedef struct {
  long batches[2];     /* per replica, from on_batch_finish */
  gboolean sums_match; /* the replicas' queues add up to their GPU's at every send */
} LqSeen;

typedef struct {
  CsEngine *e;
  const LqParams *p;
  LqSeen *seen;
  int n_models;
  CsBatch **open; /* per model, or NULL */
  CsTimer *timer; /* per model: the open batch's deadline */
} Lq;

static void *lq_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  LqParams p = { .max_batch = 16, .max_wait_ms = 50.0 };
  /* The catalogue (`clustersim policies NAME`) shows these lines. */
  cs_params_doc(params, "max_batch", "largest batch sent to a GPU");
  cs_params_doc(params, "max_wait_ms", "an open batch leaves this long after its first request");
  /* Both fields are read, so that a scenario with two bad values hears of both. */
  CsErrorList *problems = cs_error_list_new();
  cs_params_int(params, "max_batch", FALSE, 1, 4096, &p.max_batch, cs_error_list_slot(problems));
  cs_params_double(params, "max_wait_ms", FALSE, 0.0, 1e6, &p.max_wait_ms,
                   cs_error_list_slot(problems));
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params), error))
    return NULL;
  return g_memdup2(&p, sizeof p);
}

static void lq_describe(const void *params, CsParamsWriter *out)
{
  const LqParams *p = params;
  cs_params_write_int(out, "max_batch", p->max_batch);
  cs_params_write_double(out, "max_wait_ms", p->max_wait_ms);
}

static void *lq_create(CsEngine *e, const void *params, void *user_data)
{
  Lq *q = g_new0(Lq, 1);
  q->e = e;
  q->p = params;
  q->seen = user_data;
  q->n_models = cs_world_n_models(cs_engine_world(e));
  q->open = g_new0(CsBatch *, q->n_models);
  q->timer = g_new0(CsTimer, q->n_models);
  return q;
}

static void lq_destroy(void *state)
{
  Lq *q = state;
  g_free(q->open);
  g_free(q->timer);
  g_free(q);
}

/* The active replica of model m with the fewest requests waiting or
 * running; among equals, one drawn at random from the policy's stream. -1
 * when m has none. */
static int least_queued(Lq *q, int m)
{
  int best = -1, ties = 0;
  int64_t best_len = 0;
  for (int r = 0; r < cs_engine_n_replicas(q->e); r++) {
    CsReplicaQueue st;
    if (cs_engine_replica(q->e, r)->model != m || !cs_engine_replica_active(q->e, r) ||
        !cs_engine_replica_queue(q->e, r, &st) || st.fails_memory)
      continue;
    int64_t len = st.waiting_requests + st.running_requests;
    if (best < 0 || len < best_len) {
      best = r;
      best_len = len;
      ties = 1;
    } else if (len == best_len && cs_engine_policy_uniform(q->e) * ++ties < 1.0) {
      best = r; /* each of the ties kept with probability 1 / ties */
    }
  }
  return best;
}

/* Every replica's share of its GPU adds up to the GPU's counters. */
static gboolean queues_add_up(Lq *q)
{
  int n_gpus = cs_world_n_gpus(cs_engine_world(q->e));
  for (int g = 0; g < n_gpus; g++) {
    int in_transfer = 0, queued = 0, running = 0;
    for (int r = 0; r < cs_engine_n_replicas(q->e); r++) {
      CsReplicaQueue st;
      if (cs_engine_replica(q->e, r)->gpu != g || !cs_engine_replica_queue(q->e, r, &st))
        continue;
      in_transfer += st.in_transfer;
      queued += st.queued;
      running += st.busy ? 1 : 0;
    }
    if (in_transfer != cs_engine_gpu_in_transfer(q->e, g) ||
        queued != cs_engine_gpu_queued(q->e, g) || running != cs_engine_gpu_running(q->e, g))
      return FALSE;
  }
  return TRUE;
}

static void send_open(Lq *q, int m)
{
  CsBatch *b = q->open[m];
  q->open[m] = NULL;
  cs_engine_cancel(q->e, q->timer[m]);
  q->timer[m] = CS_TIMER_NONE;
  int r = least_queued(q, m);
  if (r < 0) { /* no replica: its requests leave unserved */
    for (int i = 0; i < cs_batch_size(b); i++)
      cs_engine_unserved(q->e, m, cs_batch_request(b, i));
    cs_engine_batch_discard(q->e, b);
    return;
  }
  cs_engine_send_replica(q->e, b, r);
  if (q->seen && !queues_add_up(q))
    q->seen->sums_match = FALSE;
}

static void lq_on_request(void *state, int m, const CsRequest *r)
{
  Lq *q = state;
  if (!q->open[m]) {
    q->open[m] = cs_engine_batch_new(q->e, m, q->p->max_batch);
    q->timer[m] = cs_engine_timer(q->e, cs_engine_now(q->e) + (int64_t)(q->p->max_wait_ms * 1e6),
                                  (uint32_t)m);
  }
  cs_batch_add(q->e, q->open[m], r);
  if (cs_batch_size(q->open[m]) >= q->p->max_batch)
    send_open(q, m);
}

static void lq_on_timer(void *state, uint32_t m)
{
  Lq *q = state;
  q->timer[m] = CS_TIMER_NONE;
  send_open(q, (int)m);
}

static void lq_on_batch_finish(void *state, const CsBatchEvent *b)
{
  Lq *q = state;
  if (q->seen && b->replica >= 0 && b->replica < 2)
    q->seen->batches[b->replica]++;
}

static const CsDispatchPolicy least_queue = {
  .name = "least-queue",
  .description = "per-model batches (max_batch, max_wait_ms) to the replica with the fewest "
                 "requests waiting or running",
  .uses_placement = TRUE,
  .parse = lq_parse,
  .free_params = g_free,
  .create = lq_create,
  .destroy = lq_destroy,
  .on_request = lq_on_request,
  .on_timer = lq_on_timer,
  .on_batch_finish = lq_on_batch_finish,
  .describe = lq_describe,
  .write_defaults = lq_describe,
};

/* resnet50 at a constant rate with a replica of batch 16 on each of gpus
 * V100s, 10 s after 1 s of warm-up, dispatched by policy. */
static CsScenario *scenario(const char *profile, CsRegistry *reg, const char *policy, int gpus,
                            int rate)
{
  CsScenario *sc = cs_scenario_new("least_queue", NULL);
  cs_scenario_set_registry(sc, reg);
  GError *err = NULL;
  gboolean ok = cs_scenario_set_int(sc, "seed", 3, &err) &&
                cs_scenario_set_string(sc, "profiles[0]", profile, &err) &&
                cs_scenario_set_int(sc, "cluster.gpus", gpus, &err) &&
                cs_scenario_set_string(sc, "cluster.gpu_type", "v100", &err) &&
                cs_scenario_set_string(sc, "dispatch.policy", policy, &err) &&
                cs_scenario_set_int(sc, "dispatch.max_wait_ms", 50, &err) &&
                cs_scenario_set_string(sc, "placement.policy", "manual", &err) &&
                cs_scenario_set_string(sc, "clients[0].model", "resnet50", &err) &&
                cs_scenario_set_int(sc, "clients[0].rate", rate, &err) &&
                cs_scenario_set_int(sc, "clients[0].slo_ms", 100, &err) &&
                cs_scenario_set_string(sc, "clients[0].arrival", "poisson", &err) &&
                cs_scenario_set_int(sc, "clients[0].duration_s", 10, &err) &&
                cs_scenario_set_int(sc, "clients[0].warmup_s", 1, &err);
  for (int g = 0; ok && g < gpus; g++) {
    char path[64];
    g_snprintf(path, sizeof path, "placement.replicas[%d].model", g);
    ok = cs_scenario_set_string(sc, path, "resnet50", &err);
    g_snprintf(path, sizeof path, "placement.replicas[%d].gpu", g);
    ok = ok && cs_scenario_set_int(sc, path, g, &err);
    g_snprintf(path, sizeof path, "placement.replicas[%d].batch", g);
    ok = ok && cs_scenario_set_int(sc, path, 16, &err);
  }
  if (!ok) {
    fprintf(stderr, "least_queue: %s\n", err->message);
    g_error_free(err);
    cs_scenario_free(sc);
    return NULL;
  }
  return sc;
}

static CsResults *run(CsScenario *sc)
{
  GError *err = NULL;
  CsResults *res = sc ? cs_run(sc, NULL, &err) : NULL;
  if (!res && err) {
    fprintf(stderr, "least_queue: %s\n", err->message);
    g_error_free(err);
  }
  return res;
}

static int failures;

static void check(gboolean ok, const char *what)
{
  printf("%s - %s\n", ok ? "ok" : "FAIL", what);
  failures += !ok;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s PROFILE.json\n", argv[0]);
    return 2;
  }
  LqSeen seen = { .sums_match = TRUE };
  CsRegistry *reg = cs_registry_new();
  GError *err = NULL;
  if (!cs_registry_add_dispatch(reg, &least_queue, &seen, &err)) {
    fprintf(stderr, "least_queue: %s\n", err->message);
    return 1;
  }

  /* One replica: no choice to make, so the router's batches exactly. */
  CsScenario *a = scenario(argv[1], reg, "least-queue", 1, 800);
  CsScenario *b = scenario(argv[1], NULL, "router", 1, 800);
  CsResults *ra = run(a), *rb = run(b);
  if (!ra || !rb)
    return 1;
  const CsModelResult *x = cs_results_model(ra, 0), *y = cs_results_model(rb, 0);
  check(x->measured == y->measured && x->good == y->good && x->completed == y->completed &&
          x->latency.p50 == y->latency.p50 && x->latency.p99 == y->latency.p99 &&
          x->mean_batch == y->mean_batch,
        "one replica: least-queue simulates exactly like the router");

  /* Two replicas at 1600 req/s: one V100 serves about 1000 req/s at batch 16. */
  memset(seen.batches, 0, sizeof seen.batches);
  CsScenario *c = scenario(argv[1], reg, "least-queue", 2, 1600);
  CsResults *rc = run(c);
  if (!rc)
    return 1;
  long first[2] = { seen.batches[0], seen.batches[1] };
  check(first[0] > 0 && first[1] > 0, "two replicas: both get batches");
  check(seen.sums_match, "every replica's queue adds up to its GPU's counters at every send");
  CsResults *again = run(c);
  if (!again)
    return 1;
  check(cs_results_model(again, 0)->good == cs_results_model(rc, 0)->good &&
          cs_results_model(again, 0)->latency.p99 == cs_results_model(rc, 0)->latency.p99,
        "the same seed gives the same run (the tie-breaks are the policy's stream)");
  printf("\nbatches per replica: %ld %ld; goodput %.1f of %.0f req/s, p99 %.2f ms\n", first[0],
         first[1], cs_results_model(rc, 0)->goodput_rps, cs_results_model(rc, 0)->offered_rps,
         cs_results_model(rc, 0)->latency.p99);

  cs_results_free(ra);
  cs_results_free(rb);
  cs_results_free(rc);
  cs_results_free(again);
  cs_scenario_free(a);
  cs_scenario_free(b);
  cs_scenario_free(c);
  cs_registry_unref(reg);
  return failures ? 1 : 0;
}
