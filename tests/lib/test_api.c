/* The extension interface as a user's program sees it: this test includes
 * only <clustersim/clustersim.h> and links the shared library, so it can use
 * nothing the installed library does not export.
 *
 * Expected values are hand-computed timelines on the synthetic profile
 * (latency of model a: alpha * b + beta = 1 ms * b + 4 ms, zero network),
 * counts fixed by constant arrivals, and the messages the interface
 * documents. */
#include <glib/gstdio.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <clustersim/clustersim.h>

#include "test_util.h"

static char *dir;

static int setup(void **state)
{
  (void)state;
  dir = test_dir_with_profile(1.0, 4.0);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  test_dir_remove(dir);
  return 0;
}

static void assert_error(GError *err, int code, const char *message)
{
  assert_non_null(err);
  if (!strstr(err->message, message))
    fail_msg("got      %s\nexpected %s", err->message, message);
  assert_true(g_error_matches(err, CS_ERROR, code));
}

/* ---- a placement policy that reads "alpha" and a nested "opts.beta" -------- */

typedef struct {
  int calls;
  int gpu; /* where it puts model 0's replica */
} PlaceState;

static CsPlacement *one_replica(const CsPlacementProblem *pb, CsParams *params, void *user_data,
                                GError **error)
{
  PlaceState *st = user_data;
  st->calls++;
  double alpha = 1.0, beta = 0.0;
  CsParams *opts = cs_params_get(params, "opts");
  if (!cs_params_double(params, "alpha", FALSE, 0.0, 10.0, &alpha, error) ||
      (opts && !cs_params_double(opts, "beta", FALSE, 0.0, 1.0, &beta, error)))
    return NULL;
  CsPlacement *p = cs_placement_new(pb->n_models);
  cs_placement_add(p, 0, st->gpu, 4, 0.0);
  cs_placement_set_expected_goodput(p, 0, alpha * 100.0);
  cs_placement_log(p, "alpha %g beta %g\n", alpha, beta);
  return p;
}

static const CsPlacementPolicy one_replica_policy = {
  .name = "one-replica",
  .description = "model 0 on one GPU, batch 4",
  .place = one_replica,
};

#define CLIENT_A                                                                                \
  "\"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"arrival\": \"constant\"," \
  " \"requests\": 400}]"

static CsScenario *with_placement(CsRegistry *reg, const char *placement)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"max_wait_ms\": 1000}, \"placement\": %s, " CLIENT_A "}",
    placement);
  CsScenario *sc = test_scenario(dir, json);
  g_free(json);
  cs_scenario_set_registry(sc, reg);
  return sc;
}

static void test_registry_contents(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  static const char *const placement[] = { "manual",   "dedicated", "usher",
                                           "wao-usher", "wsm-usher", "milp",
                                           "ao-milp",  "wsm-milp",  "igniter", "search" };
  static const char *const dispatch[] = { "router", "symphony", "eager",
                                          "timeout", "shepherd", "clockwork", "nexus" };
  assert_int_equal(cs_registry_n_placement(r), 10);
  for (int i = 0; i < 10; i++)
    assert_string_equal(cs_registry_placement_at(r, i)->name, placement[i]);
  assert_null(cs_registry_placement_at(r, 10));
  assert_int_equal(cs_registry_n_dispatch(r), 7);
  for (int i = 0; i < 7; i++)
    assert_string_equal(cs_registry_dispatch_at(r, i)->name, dispatch[i]);

  GError *err = NULL;
  PlaceState st = { 0 };
  assert_true(cs_registry_add_placement(r, &one_replica_policy, &st, &err));
  void *ud = NULL;
  assert_ptr_equal(cs_registry_placement(r, "one-replica", &ud), &one_replica_policy);
  assert_ptr_equal(ud, &st);
  assert_int_equal(cs_registry_n_placement(r), 11);

  CsPlacementPolicy clash = one_replica_policy;
  clash.name = "usher";
  assert_false(cs_registry_add_placement(r, &clash, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "placement policy \"usher\": the registry already has a "
                                      "policy of that name");
  g_clear_error(&err);
  clash.name = "my policy";
  assert_false(cs_registry_add_placement(r, &clash, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "a name holds letters, digits, '-', '_' and '.' only");
  g_clear_error(&err);
  clash.name = "no-place";
  clash.place = NULL;
  assert_false(cs_registry_add_placement(r, &clash, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "placement policy \"no-place\": no place callback");
  g_clear_error(&err);
  CsDispatchPolicy d = { .name = "half", .create = NULL };
  assert_false(cs_registry_add_dispatch(r, &d, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "dispatch policy \"half\": no create callback");
  g_clear_error(&err);
  static const char *const controllers[] = { "replan", "autoscale" };
  assert_int_equal(cs_registry_n_controller(r), 2);
  for (int i = 0; i < 2; i++)
    assert_string_equal(cs_registry_controller_at(r, i)->name, controllers[i]);
  assert_null(cs_registry_controller_at(r, 2));
  CsControllerPolicy k = { .name = "replan" };
  assert_false(cs_registry_add_controller(r, &k, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "controller policy \"replan\": the registry already has a "
                                      "policy of that name");
  g_clear_error(&err);
  k.name = "k";
  assert_false(cs_registry_add_controller(r, &k, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "controller policy \"k\": no parse callback");
  g_clear_error(&err);
  cs_registry_unref(r);
}

static void test_registries_are_independent(void **state)
{
  (void)state;
  PlaceState on0 = { .gpu = 0 }, on1 = { .gpu = 1 };
  CsRegistry *r0 = cs_registry_new(), *r1 = cs_registry_new();
  assert_true(cs_registry_add_placement(r0, &one_replica_policy, &on0, NULL));
  assert_true(cs_registry_add_placement(r1, &one_replica_policy, &on1, NULL));
  CsScenario *s0 = with_placement(r0, "{\"policy\": \"one-replica\"}");
  CsScenario *s1 = with_placement(r1, "{\"policy\": \"one-replica\"}");
  /* The scenarios hold their own references. */
  cs_registry_unref(r0);
  cs_registry_unref(r1);
  CsResults *a = test_run(s0, NULL), *b = test_run(s1, NULL);
  assert_int_equal(cs_placement_replica(cs_results_placement(a), 0)->gpu, 0);
  assert_int_equal(cs_placement_replica(cs_results_placement(b), 0)->gpu, 1);
  /* Each policy instance saw only its own scenario's run. */
  assert_int_equal(on0.calls, 1);
  assert_int_equal(on1.calls, 1);
  /* A scenario without a registry sees the built-ins only. */
  CsScenario *none = with_placement(NULL, "{\"policy\": \"one-replica\"}");
  GError *err = NULL;
  assert_false(cs_scenario_validate(none, &err));
  assert_error(err, CS_ERROR_INVALID,
               "test.json: placement.policy: unknown policy \"one-replica\" (known: manual, "
               "dedicated, usher");
  g_clear_error(&err);
  cs_results_free(a);
  cs_results_free(b);
  cs_scenario_free(s0);
  cs_scenario_free(s1);
  cs_scenario_free(none);
}

/* A policy's prediction above the model's rate (2.5 x 100 req/s) is capped
 * at the rate by the framework, which says so in the placement's log: a
 * model cannot be served more than it is sent. */
static void test_expected_goodput_capped(void **state)
{
  (void)state;
  PlaceState st = { 0 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_placement(r, &one_replica_policy, &st, NULL));
  CsScenario *sc = with_placement(r, "{\"policy\": \"one-replica\", \"alpha\": 2.5}");
  cs_registry_unref(r);
  CsResults *res = test_run(sc, NULL);
  const CsPlacement *p = cs_results_placement(res);
  assert_true(cs_placement_expected_goodput(p, 0) == 100.0);
  assert_true(cs_placement_expected_total(p) == 100.0);
  assert_true(cs_results_model_by_name(res, "a")->expected_goodput_rps == 100.0);
  assert_non_null(strstr(cs_placement_log_text(p),
                         "alpha 2.5 beta 0\na: expected goodput 250 req/s capped at its rate, "
                         "100 req/s\n"));
  cs_results_free(res);
  /* At or below the rate, the prediction stays as the policy gave it. */
  cs_scenario_free(sc);
  r = cs_registry_new();
  assert_true(cs_registry_add_placement(r, &one_replica_policy, &st, NULL));
  sc = with_placement(r, "{\"policy\": \"one-replica\", \"alpha\": 0.5}");
  cs_registry_unref(r);
  res = test_run(sc, NULL);
  assert_true(cs_placement_expected_goodput(cs_results_placement(res), 0) == 50.0);
  assert_null(strstr(cs_placement_log_text(cs_results_placement(res)), "capped"));
  cs_results_free(res);
  cs_scenario_free(sc);
}

static void test_params_unknown_and_typed(void **state)
{
  (void)state;
  PlaceState st = { 0 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_placement(r, &one_replica_policy, &st, NULL));
  static const struct {
    const char *placement, *message;
  } cases[] = {
    { "{\"policy\": \"one-replica\", \"alphaa\": 2}",
      "test.json: placement: unknown field \"alphaa\" (did you mean \"alpha\"?)" },
    { "{\"policy\": \"one-replica\", \"zeta\": 2}",
      "test.json: placement: unknown field \"zeta\" (known fields: alpha, opts, policy)" },
    { "{\"policy\": \"one-replica\", \"opts\": {\"beta\": 0.5, \"gamma\": 1}}",
      "test.json: placement.opts: unknown field \"gamma\"" },
    { "{\"policy\": \"one-replica\", \"alpha\": \"2\"}",
      "test.json: placement.alpha: expected a number, got a string" },
    { "{\"policy\": \"one-replica\", \"opts\": {\"beta\": 3}}",
      "test.json: placement.opts.beta: expected a number in [0, 1], got 3" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CsScenario *sc = with_placement(r, cases[i].placement);
    GError *err = NULL;
    assert_false(cs_scenario_validate(sc, &err));
    assert_error(err, CS_ERROR_INVALID, cases[i].message);
    g_error_free(err);
    cs_scenario_free(sc);
  }
  /* Read and checked: the expected goodput is the policy's alpha x 100,
   * capped by nothing (rate 100 req/s, alpha 0.5). */
  CsScenario *sc = with_placement(r, "{\"policy\": \"one-replica\", \"alpha\": 0.5, "
                                     "\"opts\": {\"beta\": 0.25}}");
  CsResults *res = test_run(sc, NULL);
  const CsPlacement *p = cs_results_placement(res);
  assert_true(cs_placement_expected_goodput(p, 0) == 50.0);
  assert_non_null(strstr(cs_placement_log_text(p), "alpha 0.5 beta 0.25"));
  assert_non_null(cs_results_model_by_name(res, "a"));
  assert_null(cs_results_model_by_name(res, "zz"));
  cs_results_free(res);
  cs_scenario_free(sc);
  cs_registry_unref(r);
}

/* ---- placements the framework refuses --------------------------------------- */

static CsPlacement *bad_gpu(const CsPlacementProblem *pb, CsParams *params, void *ud, GError **e)
{
  (void)params, (void)ud, (void)e;
  CsPlacement *p = cs_placement_new(pb->n_models);
  cs_placement_add(p, 0, pb->n_gpus, 4, 0.0);
  return p;
}

static CsPlacement *bad_goodput(const CsPlacementProblem *pb, CsParams *params, void *ud,
                                GError **e)
{
  (void)params, (void)ud, (void)e;
  CsPlacement *p = cs_placement_new(pb->n_models);
  cs_placement_set_expected_goodput(p, 0, -1.0);
  return p;
}

static CsPlacement *silent_null(const CsPlacementProblem *pb, CsParams *params, void *ud,
                                GError **e)
{
  (void)pb, (void)params, (void)ud, (void)e;
  return NULL;
}

static CsPlacement *own_failure(const CsPlacementProblem *pb, CsParams *params, void *ud,
                                GError **e)
{
  (void)pb, (void)params, (void)ud;
  g_set_error(e, G_FILE_ERROR, G_FILE_ERROR_FAILED, "solver gave up");
  return NULL;
}

static void test_placement_results_checked(void **state)
{
  (void)state;
  static const struct {
    CsPlacement *(*place)(const CsPlacementProblem *, CsParams *, void *, GError **);
    const char *message;
  } cases[] = {
    { bad_gpu, "test.json: placement: policy \"p\" returned replica 0 (model 0, gpu 2, batch 4, "
               "share 0): its GPU index is out of range" },
    { bad_goodput, "test.json: placement: policy \"p\" expects goodput -1 req/s for a: expected "
                   "a finite number >= 0" },
    { silent_null, "test.json: placement: policy \"p\" returned no placement and no error" },
    { own_failure, "test.json: placement: solver gave up" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CsPlacementPolicy pol = { .name = "p", .place = cases[i].place };
    CsRegistry *r = cs_registry_new();
    assert_true(cs_registry_add_placement(r, &pol, NULL, NULL));
    CsScenario *sc = with_placement(r, "{\"policy\": \"p\"}");
    cs_registry_unref(r);
    GError *err = NULL;
    assert_null(cs_run(sc, NULL, &err));
    assert_error(err, CS_ERROR_POLICY, cases[i].message);
    g_error_free(err);
    cs_scenario_free(sc);
  }
}

/* ---- a dispatch policy: every request alone to GPU g, with callbacks ------- */

typedef struct {
  int gpu;                   /* where it sends */
  int starts, finishes;
  int64_t first_start_ns, first_end_ns;
} FifoCounts;

typedef struct {
  CsEngine *e;
  FifoCounts *c;
} Fifo;

static void *fifo_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Fifo *f = g_new0(Fifo, 1);
  f->e = e;
  f->c = user_data;
  return f;
}

static void fifo_on_request(void *state, int model, const CsRequest *r)
{
  Fifo *f = state;
  CsBatch *b = cs_engine_batch_new(f->e, model, 1);
  cs_batch_add(f->e, b, r);
  cs_engine_send_gpu(f->e, b, f->c->gpu);
}

static void fifo_on_start(void *state, const CsBatchEvent *b)
{
  Fifo *f = state;
  if (f->c->starts++ == 0)
    f->c->first_start_ns = b->start_ns;
}

static void fifo_on_finish(void *state, const CsBatchEvent *b)
{
  Fifo *f = state;
  if (f->c->finishes++ == 0)
    f->c->first_end_ns = b->end_ns;
}

static const CsDispatchPolicy fifo = {
  .name = "fifo",
  .uses_placement = FALSE,
  .create = fifo_create,
  .destroy = g_free,
  .on_request = fifo_on_request,
  .on_batch_start = fifo_on_start,
  .on_batch_finish = fifo_on_finish,
};

/* A policy that preempts: every request stops whatever GPU 0 has and goes
 * there with the requests it got back, as one batch. */
typedef struct {
  CsEngine *e;
  GArray *back;
  int starts, finishes, stopped;
  int64_t last_start_ns, last_end_ns;
} Preempter;

static void *preempter_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Preempter *p = user_data;
  p->e = e;
  p->back = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  return p;
}

static void preempter_destroy(void *state)
{
  Preempter *p = state;
  g_array_unref(p->back);
}

static void preempter_on_request(void *state, int model, const CsRequest *r)
{
  Preempter *p = state;
  g_array_set_size(p->back, 0);
  p->stopped += cs_engine_preempt_gpu(p->e, 0, p->back);
  CsBatch *b = cs_engine_batch_new(p->e, model, (int)p->back->len + 1);
  for (guint i = 0; i < p->back->len; i++)
    cs_batch_add(p->e, b, &g_array_index(p->back, CsRequest, i));
  cs_batch_add(p->e, b, r);
  cs_engine_send_gpu(p->e, b, 0);
}

static void preempter_on_start(void *state, const CsBatchEvent *b)
{
  Preempter *p = state;
  p->starts++;
  p->last_start_ns = b->start_ns;
}

static void preempter_on_finish(void *state, const CsBatchEvent *b)
{
  Preempter *p = state;
  p->finishes++;
  p->last_end_ns = b->end_ns;
}

static const CsDispatchPolicy preempter = {
  .name = "preempter",
  .uses_placement = FALSE,
  .create = preempter_create,
  .destroy = preempter_destroy,
  .on_request = preempter_on_request,
  .on_batch_start = preempter_on_start,
  .on_batch_finish = preempter_on_finish,
};

static void test_preemption_hand_timeline(void **state)
{
  (void)state;
  Preempter p = { 0 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &preempter, &p, NULL));
  CsScenario *sc = test_scenario(
    dir, "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
         " \"dispatch\": {\"policy\": \"preempter\"},"
         " \"clients\": [{\"model\": \"a\", \"rate\": 400, \"slo_ms\": 50,"
         " \"arrival\": \"constant\", \"requests\": 3}]}");
  cs_scenario_set_registry(sc, r);
  cs_registry_unref(r);
  CsResults *res = test_run(sc, NULL);
  /* l(b) = b + 4 ms, requests at 0, 2.5 and 5 ms (zero network). By hand:
   * {0} runs from 0 and is stopped at 2.5 ms; {0, 1} runs from 2.5 and is
   * stopped at 5 ms; {0, 1, 2} runs [5, 12) ms. Lost: 2 x 2.5 ms. */
  assert_int_equal(p.stopped, 2);
  assert_int_equal(p.starts, 3);
  assert_int_equal(p.finishes, 1);
  assert_int_equal(p.last_start_ns, 5000000);
  assert_int_equal(p.last_end_ns, 12000000);
  int64_t lost = -1;
  assert_int_equal(cs_results_gpu_preempted(res, 0, &lost), 2);
  assert_int_equal(lost, 5000000);
  assert_int_equal(cs_results_gpu_batches(res, 0), 1);
  const CsModelResult *m = cs_results_model(res, 0);
  assert_int_equal(m->completed, 3);
  assert_int_equal(m->good, 3);
  /* Latencies 12, 9.5 and 7 ms: the GPU was busy without a gap for 12 ms. */
  assert_true(fabs(m->latency.mean - (12 + 9.5 + 7) / 3.0) < 1e-9);
  assert_true(fabs(m->latency.max - 12) < 1e-9);
  assert_true(fabs(cs_results_gpu_busy_fraction(res, 0) - 1.0) < 1e-12);
  cs_results_free(res);
  cs_scenario_free(sc);
}

typedef struct {
  int batches, gpu_changes, max_running;
  int64_t first_dispatch_ns, first_end_ns;
  int progress_calls, stop_after;
} Observed;

static void on_batch(const CsBatchEvent *b, void *user_data)
{
  Observed *o = user_data;
  if (o->batches++ == 0) {
    o->first_dispatch_ns = b->dispatch_ns;
    o->first_end_ns = b->end_ns;
  }
}

static void on_gpu(const CsGpuState *s, void *user_data)
{
  Observed *o = user_data;
  o->gpu_changes++;
  o->max_running = MAX(o->max_running, s->running);
}

static gboolean on_progress(double fraction, int64_t t, void *user_data)
{
  (void)fraction, (void)t;
  Observed *o = user_data;
  return ++o->progress_calls < o->stop_after;
}

static CsScenario *with_fifo(CsRegistry *reg, int requests)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"fifo\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"arrival\": \"constant\","
    " \"requests\": %d}]}",
    requests);
  CsScenario *sc = test_scenario(dir, json);
  g_free(json);
  cs_scenario_set_registry(sc, reg);
  return sc;
}

static void test_dispatch_callbacks_and_observers(void **state)
{
  (void)state;
  FifoCounts counts = { .gpu = 1 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &fifo, &counts, NULL));
  CsScenario *sc = with_fifo(r, 400);
  cs_registry_unref(r);
  Observed o = { 0 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_batch = on_batch;
  opt.on_gpu = on_gpu;
  opt.user_data = &o;
  CsResults *res = test_run(sc, &opt);
  /* Requests every 10 ms, each alone: l(1) = 1 + 4 = 5 ms, so no queueing.
   * The first arrives at 0, runs [0, 5 ms) on GPU 1 (zero network). */
  assert_int_equal(counts.starts, 400);
  assert_int_equal(counts.finishes, 400);
  assert_int_equal(counts.first_start_ns, 0);
  assert_int_equal(counts.first_end_ns, 5000000);
  assert_int_equal(o.batches, 400);
  assert_int_equal(o.first_dispatch_ns, 0);
  assert_int_equal(o.first_end_ns, 5000000);
  /* Two changes per batch (start, finish); never two at once. */
  assert_int_equal(o.gpu_changes, 800);
  assert_int_equal(o.max_running, 1);
  assert_true(cs_results_gpu_busy_fraction(res, 0) == 0.0);
  assert_int_equal(cs_results_model(res, 0)->good, 400);
  assert_null(cs_results_placement(res));
  cs_results_free(res);
  cs_scenario_free(sc);
}

static void test_dispatch_misuse_stops_the_run(void **state)
{
  (void)state;
  FifoCounts counts = { .gpu = 2 }; /* the first index past the cluster */
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &fifo, &counts, NULL));
  CsScenario *sc = with_fifo(r, 400);
  cs_registry_unref(r);
  GError *err = NULL;
  assert_null(cs_run(sc, NULL, &err));
  assert_error(err, CS_ERROR_POLICY, "dispatch policy \"fifo\": cs_engine_send_gpu: gpu 2 out of "
                                     "range (the cluster has 2) (at 0.000000 s simulated)");
  g_error_free(err);
  cs_scenario_free(sc);
}

static void test_progress_cancels(void **state)
{
  (void)state;
  FifoCounts counts = { .gpu = 0 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &fifo, &counts, NULL));
  /* 100000 requests: more than 65536 events, so progress is reported. */
  CsScenario *sc = with_fifo(r, 100000);
  cs_registry_unref(r);
  char *csv = g_build_filename(dir, "requests.csv", NULL);
  Observed o = { .stop_after = 2 };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_progress = on_progress;
  opt.user_data = &o;
  opt.requests_csv = csv;
  GError *err = NULL;
  assert_null(cs_run(sc, &opt, &err));
  assert_error(err, CS_ERROR_CANCELLED, "run cancelled by the progress callback");
  assert_int_equal(o.progress_calls, 2);
  /* Nothing written: neither the CSV nor its temporary. */
  assert_false(g_file_test(csv, G_FILE_TEST_EXISTS));
  char *partial = g_strconcat(csv, ".partial", NULL);
  assert_false(g_file_test(partial, G_FILE_TEST_EXISTS));
  g_free(partial);
  g_free(csv);
  g_error_free(err);
  cs_scenario_free(sc);
}


/* ---- the world as a policy reads it, and a dispatch policy's parameters ---- */

typedef struct {
  int max_batch;
} WorldParams;

typedef struct {
  gboolean checked; /* the world answered as the scenario says */
} WorldSeen;

static void *world_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  WorldParams p = { .max_batch = 4 };
  CsParams *nested = cs_params_get(params, "nested");
  const char *label = NULL;
  if (!cs_params_int(params, "max_batch", FALSE, 1, 64, &p.max_batch, error) ||
      (nested && !cs_params_string(nested, "label", TRUE, &label, error)))
    return NULL;
  if (nested && strcmp(label, "bad") == 0) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "label says bad");
    return NULL;
  }
  if (nested && strcmp(label, "silent") == 0)
    return NULL;
  return g_memdup2(&p, sizeof p);
}

static void *world_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  WorldSeen *seen = user_data;
  const CsWorld *w = cs_engine_world(e);
  /* As written in the scenario below; out-of-range indices give neutral
   * answers, not a crash. */
  seen->checked =
    cs_world_n_models(w) == 1 && strcmp(cs_world_model_name(w, 0), "a") == 0 &&
    cs_world_slo_ns(w, 0) == 50000000 && cs_world_rate_rps(w, 0) == 100.0 &&
    cs_world_input_bytes(w, 0) == 1000 && cs_world_output_bytes(w, 0) == 10 &&
    cs_world_n_gpus(w) == 2 && strcmp(cs_world_gpu_type(w, 1), "gpu") == 0 &&
    cs_world_gpu_node(w, 1) == 0 && cs_world_profiles(w) != NULL &&
    cs_world_profile(w, 0, 1) != NULL && cs_world_placement(w) == NULL &&
    cs_world_seed(w) == 77 && cs_world_network_ns(w, 1000) == 0 &&
    cs_world_model_name(w, 1) == NULL && cs_world_slo_ns(w, -1) == 0 &&
    cs_world_rate_rps(w, 5) == 0.0 && cs_world_input_bytes(w, 9) == 0 &&
    cs_world_output_bytes(w, 9) == 0 && cs_world_gpu_type(w, 2) == NULL &&
    cs_world_gpu_node(w, -1) == -1 && cs_world_profile(w, 0, 2) == NULL &&
    cs_engine_gpu_queued(e, 9) == 0 && cs_engine_gpu_running(e, -1) == 0 &&
    cs_engine_gpu_in_transfer(e, 2) == 0;
  return g_new0(int, 1);
}

static void world_on_request(void *state, int model, const CsRequest *r)
{
  (void)state;
  (void)model;
  (void)r;
}

static void world_describe(const void *params, CsParamsWriter *out)
{
  const WorldParams *p = params;
  cs_params_write_int(out, "max_batch", p->max_batch);
  cs_params_write_int(out, "max_batch", 999); /* written twice: the first stays */
  cs_params_write_begin_object(out, "nested");
  cs_params_write_string(out, "label", "ok");
  cs_params_write_bool(out, "on", TRUE);
  cs_params_write_begin_array(out, "list");
  cs_params_write_double(out, NULL, 0.5);
  cs_params_write_end(out);
  cs_params_write_end(out);
}

static const CsDispatchPolicy world_policy = {
  .name = "world",
  .parse = world_parse,
  .free_params = g_free,
  .create = world_create,
  .destroy = g_free,
  .on_request = world_on_request,
  .describe = world_describe,
  .write_defaults = world_describe,
};

static CsScenario *with_world(CsRegistry *reg, const char *dispatch)
{
  char *json = g_strdup_printf(
    "{\"seed\": 77, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, "
    "\"gpu_type\": \"gpu\"}, \"dispatch\": %s,"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"arrival\": \"constant\","
    " \"requests\": 10}]}",
    dispatch);
  CsScenario *sc = test_scenario(dir, json);
  g_free(json);
  cs_scenario_set_registry(sc, reg);
  return sc;
}

static void test_world_and_dispatch_params(void **state)
{
  (void)state;
  WorldSeen seen = { 0 };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &world_policy, &seen, NULL));
  /* The policy sends nothing: the run still ends, counts the requests as not
   * answered and warns that the policy held them. */
  CsScenario *sc = with_world(r, "{\"policy\": \"world\", \"max_batch\": 8}");
  CsResults *res = test_run(sc, NULL);
  assert_true(seen.checked);
  /* All 10 requests stayed with the policy: the run says so. */
  gboolean held = FALSE;
  for (int i = 0; i < cs_results_n_warnings(res); i++) {
    const CsWarning *w = cs_results_warning(res, i);
    held |= strcmp(w->code, "requests_held") == 0 &&
            strstr(w->message, "10 of its 10 requests were still held by dispatch policy "
                               "\"world\"") != NULL;
  }
  assert_true(held);
  assert_int_equal(cs_results_model(res, 0)->completed, 0);
  /* The summary shows what describe wrote; the effective scenario adds the
   * defaults the scenario left out (nested), keeping its own max_batch. */
  char *json = cs_results_to_json(res);
  assert_non_null(strstr(json, "\"params\":\t{\n\t\t\t\"max_batch\":\t8,\n\t\t\t\"nested\":\t{"));
  g_free(json);
  const char *eff = cs_results_effective_scenario(res);
  assert_non_null(strstr(eff, "\"max_batch\":\t8"));
  assert_non_null(strstr(eff, "\"list\":\t[0.5]"));
  cs_results_free(res);
  cs_scenario_free(sc);

  static const struct {
    const char *dispatch, *message;
    int code;
  } cases[] = {
    { "{\"policy\": \"world\", \"max_bach\": 8}",
      "test.json: dispatch: unknown field \"max_bach\" (did you mean \"max_batch\"?)",
      CS_ERROR_INVALID },
    { "{\"policy\": \"world\", \"nested\": {\"label\": 3}}",
      "test.json: dispatch.nested.label: expected a non-empty string, got a number",
      CS_ERROR_INVALID },
    { "{\"policy\": \"world\", \"nested\": {\"label\": \"bad\"}}",
      "test.json: dispatch: label says bad", CS_ERROR_POLICY },
    { "{\"policy\": \"world\", \"nested\": {\"label\": \"silent\"}}",
      "test.json: dispatch: dispatch policy \"world\" returned no parameters and no error",
      CS_ERROR_POLICY },
    { "{\"policy\": \"world\", \"nested\": {\"label\": \"ok\", \"extra\": 1}}",
      "test.json: dispatch.nested: unknown field \"extra\"", CS_ERROR_INVALID },
    { "{\"policy\": \"wrld\"}",
      "test.json: dispatch.policy: unknown policy \"wrld\" (known: router, symphony, eager, "
      "timeout, shepherd, clockwork, nexus, world)", CS_ERROR_INVALID },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CsScenario *bad = with_world(r, cases[i].dispatch);
    GError *err = NULL;
    assert_false(cs_scenario_validate(bad, &err));
    assert_error(err, cases[i].code, cases[i].message);
    g_error_free(err);
    cs_scenario_free(bad);
  }
  CsDispatchPolicy half = world_policy;
  half.name = "no-free";
  half.free_params = NULL;
  GError *err = NULL;
  assert_false(cs_registry_add_dispatch(r, &half, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "dispatch policy \"no-free\": no free_params (it has parse) "
                                      "callback");
  g_clear_error(&err);
  half.name = "world";
  half.free_params = g_free;
  assert_false(cs_registry_add_dispatch(r, &half, NULL, &err));
  assert_error(err, CS_ERROR_INVALID, "dispatch policy \"world\": the registry already has a "
                                      "policy of that name");
  g_clear_error(&err);
  void *ud = NULL;
  assert_null(cs_registry_dispatch(r, "nope", &ud));
  assert_null(ud);
  assert_null(cs_registry_dispatch_at(r, 99));
  cs_registry_unref(r);
}

/* ---- parameter views: kinds, members, values, text --------------------------- */

static CsPlacement *view_walker(const CsPlacementProblem *pb, CsParams *params, void *ud,
                                GError **error)
{
  int *ok = ud;
  CsParams *list = cs_params_get(params, "list");
  CsParams *obj = cs_params_get(params, "obj");
  CsParams *member = cs_params_at(obj, 0); /* taking a member asks for it */
  double d = 0;
  int i = 0;
  gboolean b = FALSE;
  const char *str = NULL;
  *ok = cs_params_kind(params) == CS_PARAMS_OBJECT && cs_params_size(list) == 4 &&
        cs_params_kind(cs_params_at(list, 0)) == CS_PARAMS_NUMBER &&
        cs_params_as_double(cs_params_at(list, 0), 0, 10, &d, NULL) && d == 1.5 &&
        cs_params_as_int(cs_params_at(list, 1), 0, 10, &i, NULL) && i == 2 &&
        cs_params_as_bool(cs_params_at(list, 2), &b, NULL) && b &&
        cs_params_as_string(cs_params_at(list, 3), &str, NULL) && strcmp(str, "x") == 0 &&
        cs_params_at(list, 4) == NULL && cs_params_name(cs_params_at(list, 0)) == NULL &&
        strcmp(cs_params_name(member), "k") == 0 &&
        strcmp(cs_params_path(member), "placement.obj.k") == 0 &&
        strcmp(cs_params_file(member), "test.json") == 0 &&
        cs_params_kind(cs_params_get(params, "nil")) == CS_PARAMS_NULL &&
        cs_params_get(list, "x") == NULL && !cs_params_has(list, "x") &&
        cs_params_size(member) == 0 &&
        !cs_params_as_int(cs_params_at(list, 0), 0, 10, &i, NULL);
  GError *e = NULL;
  cs_params_as_string(cs_params_at(list, 0), &str, &e);
  *ok = *ok && e && strstr(e->message, "test.json: placement.list[0]: expected a non-empty "
                                       "string, got a number");
  g_clear_error(&e);
  /* A nested format of the policy's own: its text counts as read. */
  char *text = cs_params_to_json(cs_params_get(params, "free"));
  *ok = *ok && strcmp(text, "{\"anything\":[1,2]}") == 0;
  g_free(text);
  CsPlacement *p = cs_placement_new(pb->n_models);
  (void)error;
  return p;
}

static void test_params_views(void **state)
{
  (void)state;
  int ok = 0;
  CsPlacementPolicy pol = { .name = "walker", .place = view_walker };
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_placement(r, &pol, &ok, NULL));
  CsScenario *sc = with_placement(r, "{\"policy\": \"walker\", \"list\": [1.5, 2, true, \"x\"],"
                                     " \"obj\": {\"k\": 1}, \"nil\": null,"
                                     " \"free\": {\"anything\": [1, 2]}}");
  cs_registry_unref(r);
  GError *err = NULL;
  /* The policy places nothing: model a is unserved, and the run says so. */
  CsResults *res = cs_run(sc, NULL, &err);
  assert_non_null(res);
  assert_true(ok);
  assert_int_equal(cs_placement_n_replicas(cs_results_placement(res)), 0);
  assert_null(cs_placement_replica(cs_results_placement(res), 0));
  assert_true(isnan(cs_placement_expected_goodput(cs_results_placement(res), 5)));
  assert_int_equal(cs_placement_creq_metric(cs_results_placement(res)), -1);
  assert_int_equal(cs_placement_gpus_needed(cs_results_placement(res)), -1);
  assert_int_equal(cs_placement_n_models(cs_results_placement(res)), 1);
  cs_results_free(res);
  cs_scenario_free(sc);
}


static void twice_on_request(void *state, int model, const CsRequest *r)
{
  CsEngine *e = *(CsEngine **)state;
  cs_engine_drop(e, model, r);
  cs_engine_drop(e, model, r);
}

static void *twice_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  CsEngine **state = g_new(CsEngine *, 1);
  *state = e;
  return state;
}

static void bad_model_on_request(void *state, int model, const CsRequest *r)
{
  (void)model;
  cs_engine_unserved(*(CsEngine **)state, 3, r);
}

static void test_requests_leave_once(void **state)
{
  (void)state;
  static const struct {
    void (*on_request)(void *, int, const CsRequest *);
    const char *message;
  } cases[] = {
    { twice_on_request, "dispatch policy \"bad\": cs_engine_drop: request 0 already left the "
                        "policy (sent, dropped or marked unserved): a request leaves it once (at "
                        "0.000000 s simulated)" },
    { bad_model_on_request, "dispatch policy \"bad\": cs_engine_unserved: model 3 out of range "
                            "(the scenario has 1) (at 0.000000 s simulated)" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CsDispatchPolicy pol = { .name = "bad", .create = twice_create, .destroy = g_free,
                             .on_request = cases[i].on_request };
    CsRegistry *r = cs_registry_new();
    assert_true(cs_registry_add_dispatch(r, &pol, NULL, NULL));
    CsScenario *sc = with_world(r, "{\"policy\": \"bad\"}");
    cs_registry_unref(r);
    GError *err = NULL;
    assert_null(cs_run(sc, NULL, &err));
    assert_error(err, CS_ERROR_POLICY, cases[i].message);
    g_error_free(err);
    cs_scenario_free(sc);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_registry_contents),
    cmocka_unit_test(test_registries_are_independent),
    cmocka_unit_test(test_expected_goodput_capped), cmocka_unit_test(test_params_unknown_and_typed),
    cmocka_unit_test(test_placement_results_checked),
    cmocka_unit_test(test_dispatch_callbacks_and_observers),
    cmocka_unit_test(test_dispatch_misuse_stops_the_run),
    cmocka_unit_test(test_preemption_hand_timeline),
    cmocka_unit_test(test_progress_cancels),
    cmocka_unit_test(test_world_and_dispatch_params),
    cmocka_unit_test(test_params_views),
    cmocka_unit_test(test_requests_leave_once),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
