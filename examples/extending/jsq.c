/* An external dispatch policy, written against the installed headers only:
 * join the shortest queue, with per-model batching.
 *
 *   cc jsq.c $(pkg-config --cflags --libs clustersim) -o jsq
 *   ./jsq PROFILE.json        (data/profiles/v100_thesis.json)
 *
 * or, as a plug-in for clustersim --plugin (the policy only, no program):
 *
 *   cc -shared -fPIC -DCS_EXAMPLE_PLUGIN jsq.c $(pkg-config --cflags clustersim) -o jsq.so
 *
 * The policy keeps one open batch per model. A batch leaves when it holds
 * max_batch requests or max_wait_ms after its first request, whichever comes
 * first, for the GPU with the fewest batches in transfer, waiting or running
 * (the lowest id on a tie). Every model may run on every GPU: a centralized
 * policy, like Symphony.
 *
 * The program registers it, then checks it against the built-in policies:
 *   - on one GPU every policy sends to the same GPU, so JSQ must simulate
 *     exactly like the thesis' router with one replica of batch max_batch
 *     and the same timeout (same per-model counts and latencies);
 *   - on four GPUs, under constant arrivals that one GPU cannot serve, the
 *     engine's batch callback counts batches per GPU: JSQ must use all four;
 *     its goodput is printed next to Symphony's on the same scenario.
 * Exit status 0 when every check holds, 1 otherwise, 2 on bad arguments. */
#include <stdio.h>
#include <string.h>

#include <clustersim/clustersim.h>

typedef struct {
  int max_batch;
  double max_wait_ms;
} JsqParams;

typedef struct {
  CsEngine *e;
  const JsqParams *p;
  int n_models, n_gpus;
  CsBatch **open;  /* per model, or NULL */
  CsTimer *timer;  /* per model: the open batch's deadline */
  long *finished;  /* per GPU: batches finished (on_batch_finish) */
} Jsq;

static void *jsq_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  JsqParams p = { .max_batch = 8, .max_wait_ms = 5.0 };
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

/* What the summary shows and the effective scenario writes out. */
static void jsq_describe(const void *params, CsParamsWriter *out)
{
  const JsqParams *p = params;
  cs_params_write_int(out, "max_batch", p->max_batch);
  cs_params_write_double(out, "max_wait_ms", p->max_wait_ms);
}

static void *jsq_create(CsEngine *e, const void *params, void *user_data)
{
  Jsq *j = g_new0(Jsq, 1);
  j->e = e;
  j->p = params;
  j->n_models = cs_world_n_models(cs_engine_world(e));
  j->n_gpus = cs_world_n_gpus(cs_engine_world(e));
  j->open = g_new0(CsBatch *, j->n_models);
  j->timer = g_new0(CsTimer, j->n_models);
  /* The caller's counters, so that the program can read them after the run. */
  j->finished = user_data;
  return j;
}

static void jsq_destroy(void *state)
{
  Jsq *j = state;
  g_free(j->open);
  g_free(j->timer);
  g_free(j);
}

static int shortest_queue(const Jsq *j)
{
  int best = 0, best_len = G_MAXINT;
  for (int g = 0; g < j->n_gpus; g++) {
    int len = cs_engine_gpu_in_transfer(j->e, g) + cs_engine_gpu_queued(j->e, g) +
              cs_engine_gpu_running(j->e, g);
    if (len < best_len) {
      best = g;
      best_len = len;
    }
  }
  return best;
}

static void send_open(Jsq *j, int m)
{
  CsBatch *b = j->open[m];
  j->open[m] = NULL;
  cs_engine_cancel(j->e, j->timer[m]);
  j->timer[m] = CS_TIMER_NONE;
  cs_engine_send_gpu(j->e, b, shortest_queue(j));
}

static void jsq_on_request(void *state, int m, const CsRequest *r)
{
  Jsq *j = state;
  if (!j->open[m]) {
    j->open[m] = cs_engine_batch_new(j->e, m, j->p->max_batch);
    j->timer[m] = cs_engine_timer(j->e, cs_engine_now(j->e) + (int64_t)(j->p->max_wait_ms * 1e6),
                                  (uint32_t)m);
  }
  cs_batch_add(j->e, j->open[m], r);
  if (cs_batch_size(j->open[m]) >= j->p->max_batch)
    send_open(j, m);
}

static void jsq_on_timer(void *state, uint32_t m)
{
  Jsq *j = state;
  j->timer[m] = CS_TIMER_NONE;
  send_open(j, (int)m);
}

static void jsq_on_batch_finish(void *state, const CsBatchEvent *b)
{
  Jsq *j = state;
  if (j->finished)
    j->finished[b->gpu]++;
}

static const CsDispatchPolicy jsq = {
  .name = "jsq",
  .description = "join the shortest queue: per-model batches (max_batch, max_wait_ms) to the GPU "
                 "with the fewest batches",
  .uses_placement = FALSE,
  .parse = jsq_parse,
  .free_params = g_free,
  .create = jsq_create,
  .destroy = jsq_destroy,
  .on_request = jsq_on_request,
  .on_timer = jsq_on_timer,
  .on_batch_finish = jsq_on_batch_finish,
  .describe = jsq_describe,
  .write_defaults = jsq_describe,
};

#ifdef CS_EXAMPLE_PLUGIN
/* Built as a plug-in (-DCS_EXAMPLE_PLUGIN -shared -fPIC): the policy alone,
 * for clustersim --plugin (docs/extending.md, "Plug-ins"). */
CS_PLUGIN_DEFINE_ABI_VERSION

G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
{
  return cs_registry_add_dispatch(registry, &jsq, NULL, error);
}
#else
/* resnet50 at a constant rate on gpus V100s, 10 s after 1 s of warm-up. */
static CsScenario *scenario(const char *profile, CsRegistry *reg, int gpus, int rate)
{
  CsScenario *sc = cs_scenario_new("jsq", NULL);
  cs_scenario_set_registry(sc, reg);
  GError *err = NULL;
  if (!(cs_scenario_set_int(sc, "seed", 3, &err) &&
        cs_scenario_set_string(sc, "profiles[0]", profile, &err) &&
        cs_scenario_set_int(sc, "cluster.gpus", gpus, &err) &&
        cs_scenario_set_string(sc, "cluster.gpu_type", "v100", &err) &&
        cs_scenario_set_string(sc, "clients[0].model", "resnet50", &err) &&
        cs_scenario_set_int(sc, "clients[0].rate", rate, &err) &&
        cs_scenario_set_int(sc, "clients[0].slo_ms", 100, &err) &&
        cs_scenario_set_string(sc, "clients[0].arrival", "constant", &err) &&
        cs_scenario_set_int(sc, "clients[0].duration_s", 10, &err) &&
        cs_scenario_set_int(sc, "clients[0].warmup_s", 1, &err))) {
    fprintf(stderr, "jsq: %s\n", err->message);
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
    fprintf(stderr, "jsq: %s\n", err->message);
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
  long finished[4] = { 0 };
  CsRegistry *reg = cs_registry_new();
  GError *err = NULL;
  if (!cs_registry_add_dispatch(reg, &jsq, finished, &err)) {
    fprintf(stderr, "jsq: %s\n", err->message);
    return 1;
  }

  /* One GPU: JSQ and the router form the same batches and send them to the
   * same GPU, which runs one at a time. 800 req/s fills batches of 16 in
   * 20 ms, well before the 50 ms timeout. */
  CsScenario *a = scenario(argv[1], reg, 1, 800);
  cs_scenario_set_string(a, "dispatch.policy", "jsq", &err);
  cs_scenario_set_int(a, "dispatch.max_batch", 16, &err);
  cs_scenario_set_int(a, "dispatch.max_wait_ms", 50, &err);
  CsScenario *b = scenario(argv[1], NULL, 1, 800);
  cs_scenario_set_int(b, "dispatch.max_wait_ms", 50, &err);
  cs_scenario_set_string(b, "placement.policy", "manual", &err);
  cs_scenario_set_string(b, "placement.replicas[0].model", "resnet50", &err);
  cs_scenario_set_int(b, "placement.replicas[0].gpu", 0, &err);
  cs_scenario_set_int(b, "placement.replicas[0].batch", 16, &err);
  CsResults *ra = run(a), *rb = run(b);
  if (!ra || !rb)
    return 1;
  const CsModelResult *x = cs_results_model_by_name(ra, "resnet50");
  const CsModelResult *y = cs_results_model_by_name(rb, "resnet50");
  check(x->measured == y->measured && x->good == y->good && x->completed == y->completed &&
          x->latency.p50 == y->latency.p50 && x->latency.p99 == y->latency.p99 &&
          x->mean_batch == y->mean_batch,
        "one GPU: JSQ simulates exactly like the router with one replica of batch 16");
  check(x->mean_batch == 16.0, "one GPU: every batch is full (16 requests every 20 ms)");

  /* Four GPUs at 3000 req/s: one V100 serves about 1000 req/s at batch 16. */
  memset(finished, 0, sizeof finished);
  CsScenario *c = scenario(argv[1], reg, 4, 3000);
  cs_scenario_set_string(c, "dispatch.policy", "jsq", &err);
  cs_scenario_set_int(c, "dispatch.max_batch", 16, &err);
  CsScenario *d = scenario(argv[1], NULL, 4, 3000);
  cs_scenario_set_string(d, "dispatch.policy", "symphony", &err);
  CsResults *rc = run(c), *rd = run(d);
  if (!rc || !rd)
    return 1;
  gboolean all_used = TRUE;
  for (int g = 0; g < 4; g++)
    all_used = all_used && finished[g] > 0;
  check(all_used, "four GPUs: JSQ spreads batches over all of them");
  check(cs_results_model(rc, 0)->dropped == 0, "JSQ never drops a request");
  printf("\nbatches per GPU (jsq): %ld %ld %ld %ld\n", finished[0], finished[1], finished[2],
         finished[3]);
  printf("%-10s %10s %12s %12s %10s\n", "dispatch", "rate", "goodput", "p99_ms", "batch");
  const CsResults *rs[2] = { rc, rd };
  const char *names[2] = { "jsq", "symphony" };
  for (int i = 0; i < 2; i++) {
    const CsModelResult *m = cs_results_model(rs[i], 0);
    printf("%-10s %10.0f %12.1f %12.2f %10.2f\n", names[i], m->offered_rps, m->goodput_rps,
           m->latency.p99, m->mean_batch);
  }

  cs_results_free(ra);
  cs_results_free(rb);
  cs_results_free(rc);
  cs_results_free(rd);
  cs_scenario_free(a);
  cs_scenario_free(b);
  cs_scenario_free(c);
  cs_scenario_free(d);
  cs_registry_unref(reg);
  return failures ? 1 : 0;
}
#endif
