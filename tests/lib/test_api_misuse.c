/* The dispatch interface defends itself (issue 34): each misuse a careless
 * policy can make stops the run at the call with CS_ERROR_POLICY, naming the
 * call and the simulated time, as clustersim/dispatch.h documents. Like
 * test_api.c, this test includes only <clustersim/clustersim.h> and links
 * the shared library.
 *
 * Each case is a policy whose on_request makes one misuse on the first
 * request (at 0 s: constant arrivals at 100 req/s start at 0). The expected
 * messages are the ones the header promises, with the request's own values
 * (request 0 of model a, sent at 0 ns, measured: no warm-up). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <clustersim/clustersim.h>

#include "test_util.h"

static char *dir;

typedef struct {
  CsEngine *e;
  int calls;
} Bad;

static void *bad_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  Bad *b = g_new0(Bad, 1);
  b->e = e;
  return b;
}

/* A batch of model 0 holding r. */
static CsBatch *one(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = cs_engine_batch_new(e, 0, 1);
  cs_batch_add(e, b, r);
  return b;
}

static void send_twice(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = one(e, r);
  cs_engine_send_gpu(e, b, 0);
  cs_engine_send_gpu(e, b, 0);
}

static void add_after_send(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = one(e, r);
  cs_engine_send_gpu(e, b, 0);
  cs_batch_add(e, b, r);
}

static void not_before_after_send(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = one(e, r);
  cs_engine_send_gpu(e, b, 0);
  cs_batch_set_not_before(b, 5);
}

static void read_after_discard(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = cs_engine_batch_new(e, 0, 1);
  cs_engine_batch_discard(e, b);
  (void)cs_batch_size(b);
  cs_engine_drop(e, 0, r);
}

static void huge_capacity(CsEngine *e, const CsRequest *r)
{
  cs_engine_send_gpu(e, cs_engine_batch_new(e, 0, INT_MAX), 0);
  (void)r;
}

static void huge_exec(CsEngine *e, const CsRequest *r)
{
  (void)cs_engine_exec_ns(e, 0, 0, INT_MAX);
  cs_engine_drop(e, 0, r);
}

static void shifted_copy(CsEngine *e, const CsRequest *r)
{
  CsRequest c = *r;
  c.send_ns -= 1000;
  cs_engine_send_gpu(e, one(e, &c), 0);
}

static void flipped_copy(CsEngine *e, const CsRequest *r)
{
  CsRequest c = *r;
  c.measured = !c.measured;
  cs_engine_drop(e, 0, &c);
}

static void forged(CsEngine *e, const CsRequest *r)
{
  CsRequest c = { .id = 999, .send_ns = r->send_ns, .measured = r->measured };
  cs_engine_unserved(e, 0, &c);
}

static void null_batch(CsEngine *e, const CsRequest *r)
{
  (void)r;
  cs_engine_send_gpu(e, NULL, 0);
}

static void null_request(CsEngine *e, const CsRequest *r)
{
  (void)r;
  cs_batch_add(e, cs_engine_batch_new(e, 0, 1), NULL);
}

static void null_drop(CsEngine *e, const CsRequest *r)
{
  (void)r;
  cs_engine_drop(e, 0, NULL);
}

static void added_twice(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = one(e, r);
  cs_batch_add(e, b, r);
  cs_engine_send_gpu(e, b, 0);
}

static void sent_then_dropped(CsEngine *e, const CsRequest *r)
{
  cs_engine_send_gpu(e, one(e, r), 0);
  cs_engine_drop(e, 0, r);
}

static void dropped_then_sent(CsEngine *e, const CsRequest *r)
{
  CsBatch *b = one(e, r);
  cs_engine_drop(e, 0, r);
  cs_engine_send_gpu(e, b, 1);
}

/* Two models: request 1 (of b) into a batch of a. */
static void wrong_model(CsEngine *e, const CsRequest *r)
{
  if (r->id == 0) {
    cs_engine_drop(e, 0, r);
    return;
  }
  cs_batch_add(e, cs_engine_batch_new(e, 0, 1), r);
}

/* Not a misuse: the policy stops the run itself (cs_engine_abort), then
 * misuses a service: the stop is the one reported. */
static void aborts(CsEngine *e, const CsRequest *r)
{
  (void)r;
  cs_engine_abort(e, "no replica can take model a");
  cs_engine_send_gpu(e, NULL, 0);
}

typedef void (*Misuse)(CsEngine *e, const CsRequest *r);
static Misuse current;

static void bad_on_request(void *state, int model, const CsRequest *r)
{
  (void)model;
  current(((Bad *)state)->e, r);
}

static CsScenario *scenario(CsRegistry *reg, int n_models)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"bad\"}, \"clients\": ["
    "{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 10}%s]}",
    n_models > 1 ? ", {\"model\": \"b\", \"rate\": 100, \"slo_ms\": 50, \"arrival\": \"constant\","
                   " \"requests\": 10}" : "");
  CsScenario *sc = test_scenario(dir, json);
  g_free(json);
  cs_scenario_set_registry(sc, reg);
  return sc;
}

static const CsDispatchPolicy bad = {
  .name = "bad", .uses_placement = FALSE, .create = bad_create, .destroy = g_free,
  .on_request = bad_on_request,
};

static CsResults *run_with(Misuse m, int n_models, GError **err)
{
  current = m;
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_dispatch(r, &bad, NULL, NULL));
  CsScenario *sc = scenario(r, n_models);
  cs_registry_unref(r);
  CsResults *res = cs_run(sc, NULL, err);
  cs_scenario_free(sc);
  return res;
}

#define AT0 " (at 0.000000 s simulated)"
#define LEFT " already left the policy (sent, dropped or marked unserved): a request leaves it once"
#define HELD_NOT ": the batch is not one the policy holds (sent): once sent or discarded a batch is the engine's"

static void test_each_misuse_stops_the_run(void **state)
{
  (void)state;
  static const struct {
    Misuse misuse;
    int n_models;
    const char *message;
  } cases[] = {
    { send_twice, 1, "cs_engine_send_gpu" HELD_NOT AT0 },
    { add_after_send, 1, "cs_batch_add" HELD_NOT AT0 },
    { not_before_after_send, 1, "cs_batch_set_not_before" HELD_NOT AT0 },
    { read_after_discard, 1, "cs_batch_size: the batch was discarded or its result arrived: it "
                             "is no longer the policy's to read" AT0 },
    { huge_capacity, 1, "cs_engine_batch_new: capacity 2147483647 beyond the largest batch, "
                        "1048576 requests (CS_BATCH_MAX)" AT0 },
    { huge_exec, 1, "cs_engine_exec_ns: model 0, gpu 0, batch 2147483647 out of range (batches "
                    "of 1 to 1048576, CS_BATCH_MAX)" AT0 },
    { shifted_copy, 1, "cs_batch_add: request 0 was changed: send_ns -1000, measured true, where "
                       "the engine gave send_ns 0, measured true (a copy must keep every field)" AT0 },
    { flipped_copy, 1, "cs_engine_drop: request 0 was changed: send_ns 0, measured false, where "
                       "the engine gave send_ns 0, measured true" },
    { forged, 1, "cs_engine_unserved: request 999 is not one the engine gave the policy" },
    { null_batch, 1, "cs_engine_send_gpu: the batch is NULL" AT0 },
    { null_request, 1, "cs_batch_add: the request is NULL" AT0 },
    { null_drop, 1, "cs_engine_drop: the request is NULL" AT0 },
    { added_twice, 1, "cs_engine_send_gpu: request 0" LEFT AT0 },
    { sent_then_dropped, 1, "cs_engine_drop: request 0" LEFT AT0 },
    { dropped_then_sent, 1, "cs_engine_send_gpu: request 0" LEFT AT0 },
    { wrong_model, 2, "cs_batch_add: request 1 is of model b, not a" AT0 },
    { aborts, 1, "dispatch policy \"bad\": no replica can take model a" AT0 },
  };
  /* CS_MISUSE_CASE=i runs case i alone (to see one misuse's behaviour). */
  const char *only = g_getenv("CS_MISUSE_CASE");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    if (only && (size_t)atoi(only) != i)
      continue;
    GError *err = NULL;
    CsResults *res = run_with(cases[i].misuse, cases[i].n_models, &err);
    if (res)
      fail_msg("case %zu: the run did not stop", i);
    assert_non_null(err);
    if (!strstr(err->message, "dispatch policy \"bad\": ") || !strstr(err->message, cases[i].message))
      fail_msg("case %zu:\ngot      %s\nexpected %s", i, err->message, cases[i].message);
    assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_POLICY));
    g_error_free(err);
  }
}

/* A NULL engine is a broken precondition, refused as GLib refuses one: a
 * critical warning per call, nothing done, and the run says that the
 * requests were never sent. */
static int criticals;

static void count_critical(const gchar *domain, GLogLevelFlags level, const gchar *message,
                           gpointer user_data)
{
  (void)domain, (void)level, (void)user_data;
  if (strstr(message, "cs_engine_drop") && strstr(message, "e != NULL"))
    criticals++;
}

static void null_engine(CsEngine *e, const CsRequest *r)
{
  (void)e;
  cs_engine_drop(NULL, 0, r);
}

static void test_null_engine_refused(void **state)
{
  (void)state;
  GLogFunc old = g_log_set_default_handler(count_critical, NULL);
  criticals = 0;
  GError *err = NULL;
  CsResults *res = run_with(null_engine, 1, &err);
  g_log_set_default_handler(old, NULL);
  assert_non_null(res);
  assert_int_equal(criticals, 10);
  assert_int_equal(cs_results_model(res, 0)->completed, 0);
  gboolean held = FALSE;
  for (int i = 0; i < cs_results_n_warnings(res); i++)
    held = held || strcmp(cs_results_warning(res, i)->code, "requests_held") == 0;
  assert_true(held);
  cs_results_free(res);
}

/* The getters a dispatch policy reads the world through refuse NULL the
 * same way: cs_world_placement is NULL for a centralized policy. */
static int any_critical;

static void count_any(const gchar *domain, GLogLevelFlags level, const gchar *message,
                      gpointer user_data)
{
  (void)domain, (void)level, (void)user_data;
  if (strstr(message, "!= NULL"))
    any_critical++;
}

static void test_null_getters_refused(void **state)
{
  (void)state;
  GLogFunc old = g_log_set_default_handler(count_any, NULL);
  any_critical = 0;
  assert_int_equal(cs_placement_n_replicas(NULL), 0);
  assert_null(cs_placement_replica(NULL, 0));
  assert_int_equal(cs_world_n_models(NULL), 0);
  assert_null(cs_world_model_name(NULL, 0));
  assert_int_equal(cs_engine_now(NULL), 0);
  assert_int_equal(cs_batch_size(NULL), 0);
  g_log_set_default_handler(old, NULL);
  assert_int_equal(any_critical, 6);
}

/* The controller's services (control.h) refuse a NULL controller the same
 * way, each with its neutral value, and cs_control_apply a NULL placement. */
static void test_null_control_refused(void **state)
{
  (void)state;
  GLogFunc old = g_log_set_default_handler(count_any, NULL);
  any_critical = 0;
  assert_null(cs_control_world(NULL));
  assert_int_equal(cs_control_now(NULL), 0);
  assert_int_equal(cs_control_arrivals(NULL, 0), 0);
  assert_int_equal(cs_control_good(NULL, 0), 0);
  assert_int_equal(cs_control_bad(NULL, 0), 0);
  assert_int_equal(cs_control_gpu_busy_ns(NULL, 0), 0);
  assert_int_equal(cs_control_gpu_life(NULL, 0), CS_GPU_OFF);
  assert_int_equal(cs_control_n_replicas(NULL), 0);
  assert_null(cs_control_replica(NULL, 0));
  assert_int_equal(cs_control_replica_life(NULL, 0), CS_REPLICA_RETIRED);
  assert_true(cs_control_timer(NULL, 0, 0) == 0);
  assert_false(cs_control_cancel(NULL, 0));
  cs_control_warn(NULL, "code", NULL, -1, "%s", "text");
  cs_control_note(NULL, "%s", "text");
  GError *err = NULL;
  assert_null(cs_control_place(NULL, NULL, &err));
  assert_int_equal(cs_control_apply(NULL, NULL, &err), -1);
  assert_false(cs_control_provision_gpu(NULL, 0, 0));
  assert_false(cs_control_release_gpu(NULL, 0));
  g_log_set_default_handler(old, NULL);
  assert_null(err);
  assert_int_equal(any_critical, 18);
}

/* ---- timers: a policy cancels only its own ------------------------------------- */

/* A timer handle is a queue slot and a generation: without a check of the
 * event's kind, a controller could cancel a dispatch policy's timer, and
 * either could cancel the engine's own events (a batch in transfer, a GPU's
 * completion) by passing a guessed handle. The dispatch policy below sends
 * each request alone to GPU 0 and sets a timer at 20 ms; the controller sets
 * one at 15 ms and, at 5 ms, tries to cancel the dispatch timer; at request
 * 1 (10 ms, with batches pending) the policy tries to cancel the
 * controller's timer and then every handle of slot < 256 and generation < 16
 * but its own. Nothing may be cancelled: each timer fires once and every
 * request completes. */
static CsTimer dispatch_timer, control_timer;
static int dispatch_fired, control_fired, cross_cancelled, guessed_cancelled;

static void *cross_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  Bad *b = g_new0(Bad, 1);
  b->e = e;
  dispatch_timer = cs_engine_timer(e, 20000000, 7);
  return b;
}

static void cross_on_request(void *state, int model, const CsRequest *r)
{
  CsEngine *e = ((Bad *)state)->e;
  cs_engine_send_gpu(e, one(e, r), 0);
  (void)model;
  if (r->id != 1)
    return;
  cross_cancelled += cs_engine_cancel(e, control_timer);
  for (uint64_t gen = 1; gen < 16; gen++)
    for (uint64_t slot = 0; slot < 256; slot++) {
      CsTimer t = gen << 32 | slot;
      if (t != dispatch_timer)
        guessed_cancelled += cs_engine_cancel(e, t);
    }
}

static void cross_on_timer(void *state, uint32_t arg)
{
  (void)state;
  dispatch_fired += arg == 7;
}

/* The controller changes nothing; the framework asks for the callback all the same. */
static void cross_on_cluster_change(void *state)
{
  (void)state;
}

static const CsDispatchPolicy cross = {
  .name = "cross", .uses_placement = FALSE, .create = cross_create, .destroy = g_free,
  .on_request = cross_on_request, .on_timer = cross_on_timer,
  .on_cluster_change = cross_on_cluster_change,
};

static void *ctl_parse(CsParams *params, void *user_data, GError **error)
{
  (void)params, (void)user_data, (void)error;
  return g_new0(int, 1);
}

static void *ctl_create(CsControl *c, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  control_timer = cs_control_timer(c, 15000000, 1);
  cs_control_timer(c, 5000000, 2);
  return c;
}

static void ctl_on_timer(void *state, uint32_t arg)
{
  if (arg == 2)
    cross_cancelled += cs_control_cancel(state, dispatch_timer);
  control_fired += arg == 1;
}

static const CsControllerPolicy ctl = {
  .name = "ctl", .parse = ctl_parse, .free_params = g_free, .create = ctl_create,
  .on_timer = ctl_on_timer,
};

static void test_timers_cancel_only_their_own(void **state)
{
  (void)state;
  dispatch_fired = control_fired = cross_cancelled = guessed_cancelled = 0;
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_dispatch(reg, &cross, NULL, NULL));
  assert_true(cs_registry_add_controller(reg, &ctl, NULL, NULL));
  CsScenario *sc = test_scenario(
    dir, "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
         " \"dispatch\": {\"policy\": \"cross\"}, \"controller\": {\"policy\": \"ctl\"},"
         " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50,"
         " \"arrival\": \"constant\", \"requests\": 10}]}");
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  GError *err = NULL;
  CsResults *res = cs_run(sc, NULL, &err);
  cs_scenario_free(sc);
  if (!res)
    fail_msg("%s", err->message);
  assert_int_equal(cross_cancelled, 0);
  assert_int_equal(guessed_cancelled, 0);
  assert_int_equal(dispatch_fired, 1);
  assert_int_equal(control_fired, 1);
  assert_int_equal(cs_results_model(res, 0)->completed, 10);
  cs_results_free(res);
}

/* ---- the ledger holds any number of requests ----------------------------------- */

/* A policy that holds requests: every 3000th arrival it drops the oldest
 * 1000 it holds, and when nothing else is pending it drops the rest, newest
 * first. The engine's record of held requests must grow past its first
 * size (1024) while its oldest entries are already gone, and still know
 * every request: 10,000 measured requests, all dropped, no misuse. */
typedef struct {
  CsEngine *e;
  GArray *held; /* CsRequest copies, oldest first */
  guint from;   /* held[from..] are still held */
} Hoard;

static void *hoard_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  Hoard *h = g_new0(Hoard, 1);
  h->e = e;
  h->held = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  return h;
}

static void hoard_destroy(void *state)
{
  Hoard *h = state;
  g_array_unref(h->held);
  g_free(h);
}

static void hoard_on_request(void *state, int model, const CsRequest *r)
{
  Hoard *h = state;
  g_array_append_val(h->held, *r);
  if (h->held->len % 3000 == 0)
    for (int k = 0; k < 1000; k++, h->from++)
      cs_engine_drop(h->e, model, &g_array_index(h->held, CsRequest, h->from));
}

static void hoard_on_quiet(void *state)
{
  Hoard *h = state;
  for (guint i = h->held->len; i-- > h->from;)
    cs_engine_drop(h->e, 0, &g_array_index(h->held, CsRequest, i));
  h->from = h->held->len;
}

static const CsDispatchPolicy hoard = {
  .name = "hoard", .uses_placement = FALSE, .create = hoard_create, .destroy = hoard_destroy,
  .on_request = hoard_on_request, .on_quiet = hoard_on_quiet,
};

static void test_ledger_holds_many(void **state)
{
  (void)state;
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_dispatch(reg, &hoard, NULL, NULL));
  CsScenario *sc = test_scenario(
    dir, "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
         " \"dispatch\": {\"policy\": \"hoard\"}, \"clients\": [{\"model\": \"a\", \"rate\": 1000,"
         " \"slo_ms\": 50, \"arrival\": \"constant\", \"requests\": 10000}]}");
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  GError *err = NULL;
  CsResults *res = cs_run(sc, NULL, &err);
  cs_scenario_free(sc);
  if (!res)
    fail_msg("%s", err->message);
  assert_int_equal(cs_results_model(res, 0)->measured, 10000);
  assert_int_equal(cs_results_model(res, 0)->dropped, 10000);
  assert_int_equal(cs_results_model(res, 0)->completed, 0);
  cs_results_free(res);
}

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

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_each_misuse_stops_the_run),
    cmocka_unit_test(test_null_engine_refused),
    cmocka_unit_test(test_null_getters_refused),
    cmocka_unit_test(test_null_control_refused),
    cmocka_unit_test(test_timers_cancel_only_their_own),
    cmocka_unit_test(test_ledger_holds_many),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
