/* Controllers (clustersim/control.h): replicas that load, drain and wait for
 * memory, GPUs provisioned and released, the built-in "replan" and
 * "autoscale" controllers. Every expected time is worked by hand in the
 * comments from the profile below: a GPU of 10^10 bytes, model "a" and "b"
 * with latency b + 4 ms and an Mreq of 10 % (60 % for "big" and "big2"), loads over
 * a 1 GB/s host link, so a load of 10 % takes 10^9 bytes / 10^9 B/s = 1 s. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "policies/control/control.h"
#include "test_util.h"

#define MS(x) ((int64_t)llround((x) * 1e6))
#define S(x) ((int64_t)llround((x) * 1e9))

static char *make_dir(void)
{
  char *dir = g_dir_make_tmp("cs-control-XXXXXX", NULL);
  assert_non_null(dir);
  GString *models = g_string_new(NULL);
  const char *names[] = { "a", "b", "big", "big2" };
  const double mreq[] = { 10, 10, 60, 60 };
  for (int i = 0; i < 4; i++)
    g_string_append_printf(
      models,
      "%s{\"gpu\": \"gpu\", \"model\": \"%s\", \"input_bytes\": 1000, \"output_bytes\": 10,"
      " \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 4}, \"batches\": ["
      "{\"batch\": 1, \"latency_ms\": 5, \"mreq_pct\": %g},"
      "{\"batch\": 8, \"latency_ms\": 12, \"mreq_pct\": %g}]}",
      i ? ",\n" : "", names[i], mreq[i], mreq[i]);
  char *json = g_strdup_printf(
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic, for tests\",\n"
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80,"
    " \"memory_bytes\": 10000000000}],\n \"models\": [%s]}\n",
    models->str);
  char *path = g_build_filename(dir, "control.json", NULL);
  assert_true(g_file_set_contents(path, json, -1, NULL));
  g_free(path);
  g_free(json);
  g_string_free(models, TRUE);
  return dir;
}

/* ---- a scripted controller: actions at given times -------------------------- */

typedef enum { ACT_APPLY, ACT_PROVISION, ACT_RELEASE } ActKind;

typedef struct {
  double at_s;
  ActKind kind;
  const char *replicas; /* ACT_APPLY: "model:gpu:batch" separated by spaces */
  int gpu;              /* ACT_PROVISION / ACT_RELEASE */
  double delay_s;       /* ACT_PROVISION */
  const char *expect_error; /* ACT_APPLY: the apply must fail with this message */
} Act;

typedef struct {
  const Act *acts;
  int n;
  int applied_changes[8]; /* what cs_control_apply returned, per action */
} Script;

typedef struct {
  CsControl *c;
  Script *script;
} ScriptState;

static void *script_parse(CsParams *params, void *user_data, GError **error)
{
  (void)params;
  (void)user_data;
  (void)error;
  return g_new0(int, 1);
}

static void *script_create(CsControl *c, const void *params, void *user_data)
{
  (void)params;
  ScriptState *s = g_new0(ScriptState, 1);
  s->c = c;
  s->script = user_data;
  for (int i = 0; i < s->script->n; i++)
    cs_control_timer(c, S(s->script->acts[i].at_s), (uint32_t)i);
  return s;
}

static int model_index(const CsWorld *w, const char *name)
{
  for (int m = 0; m < cs_world_n_models(w); m++)
    if (strcmp(cs_world_model_name(w, m), name) == 0)
      return m;
  fail_msg("no model %s", name);
  return -1;
}

static void script_on_timer(void *state, uint32_t arg)
{
  ScriptState *s = state;
  const Act *a = &s->script->acts[arg];
  const CsWorld *w = cs_control_world(s->c);
  if (a->kind == ACT_PROVISION) {
    assert_true(cs_control_provision_gpu(s->c, a->gpu, S(a->delay_s)));
    return;
  }
  if (a->kind == ACT_RELEASE) {
    assert_true(cs_control_release_gpu(s->c, a->gpu));
    return;
  }
  CsPlacement *p = cs_placement_new(cs_world_n_models(w));
  gchar **items = g_strsplit(a->replicas, " ", -1);
  for (int i = 0; items[i] && *items[i]; i++) {
    gchar **f = g_strsplit(items[i], ":", 3);
    cs_placement_add(p, model_index(w, f[0]), atoi(f[1]), atoi(f[2]), 0.0);
    g_strfreev(f);
  }
  g_strfreev(items);
  GError *err = NULL;
  int changed = cs_control_apply(s->c, p, &err);
  if (a->expect_error) {
    assert_int_equal(changed, -1);
    assert_string_equal(err->message, a->expect_error);
    g_error_free(err);
  } else if (changed < 0) {
    fail_msg("apply: %s", err->message);
  }
  s->script->applied_changes[arg] = changed;
  cs_placement_free(p);
}

static const CsControllerPolicy script_policy = {
  .name = "script",
  .description = "test: actions at fixed times",
  .parse = script_parse,
  .free_params = g_free,
  .create = script_create,
  .destroy = g_free,
  .on_timer = script_on_timer,
};

/* ---- what the requests did ------------------------------------------------------ */

typedef struct {
  GArray *recs; /* CsRequestRecord (model names point into the run) */
} Seen;

static void record(const CsRequestRecord *rec, void *user)
{
  Seen *s = user;
  g_array_append_val(s->recs, *rec);
}

static CsResults *run(const char *dir, const char *json, Script *script, Seen *seen)
{
  CsScenario *sc = test_scenario(dir, json);
  CsRegistry *reg = cs_registry_new();
  GError *err = NULL;
  if (script)
    assert_true(cs_registry_add_controller(reg, &script_policy, script, &err));
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.timeseries = TRUE; /* test_move_makes_before_it_breaks reads them */
  if (seen) {
    seen->recs = g_array_new(FALSE, FALSE, sizeof(CsRequestRecord));
    opt.on_request = record;
    opt.user_data = seen;
  }
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  return r;
}

/* One model "a" every 10 ms (constant) for 4 s, each request alone
 * (max_wait 0: batch 1, 5 ms), on two GPUs, replica on gpu 0. */
static const char *const MOVE_SCENARIO =
  "{\"profiles\": [\"control.json\"],"
  " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"host_to_gpu_gbps\": 1},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
  " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
  " \"controller\": {\"policy\": \"script\"},"
  " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"arrival\": \"constant\", \"slo_ms\": 1000,"
  " \"duration_s\": 4}]}";

/* At 1 s the replica moves to gpu 1. Make before break: the new one loads
 * 10 % x 10^10 bytes at 10^9 B/s = 1 s, so gpu 0 serves every request sent
 * before 2 s and gpu 1 every one from 2 s on (the load's end, set at 1 s,
 * comes before the arrival at 2 s, set at 1.99 s). */
static void test_move_makes_before_it_breaks(void **state)
{
  (void)state;
  char *dir = make_dir();
  const Act acts[] = { { .at_s = 1, .kind = ACT_APPLY, .replicas = "a:1:1" } };
  Script script = { .acts = acts, .n = 1 };
  Seen seen;
  CsResults *r = run(dir, MOVE_SCENARIO, &script, &seen);
  assert_int_equal(script.applied_changes[0], 2); /* one added, one removed */
  assert_int_equal(seen.recs->len, 400);
  for (guint i = 0; i < seen.recs->len; i++) {
    const CsRequestRecord *q = &g_array_index(seen.recs, CsRequestRecord, i);
    assert_true(q->served);
    assert_int_equal(q->gpu, q->send_ns < S(2) ? 0 : 1);
    assert_int_equal(q->replica, q->send_ns < S(2) ? 0 : 1);
    assert_int_equal(q->receive_ns - q->send_ns, MS(5)); /* nobody waited */
  }
  const CsControlSummary *k = cs_results_control(r);
  assert_non_null(k);
  assert_int_equal(k->changes, 1);
  assert_int_equal(k->added, 1);
  assert_int_equal(k->loads, 1);
  assert_int_equal(k->removals, 1);
  assert_float_equal(k->load_s_total, 1.0, 1e-9);
  assert_int_equal(k->replicas_total, 2);
  /* The log has the load at 1 s, the switch at 2 s and the old one's end. */
  assert_non_null(strstr(k->log, "1.000000\tload replica 1 (a on gpu 1, batch 1, Mreq 10.00 %): 1.000 s"));
  assert_non_null(strstr(k->log, "2.000000\treplica 1 active"));
  assert_non_null(strstr(k->log, "2.000000\tretire replica 0"));
  /* Per model and 1 s bin: 100 sent, 100 answered within the SLO (5 ms
   * after), none bad; the cluster had 2 GPUs from 0 until the end. */
  char *mpath = g_build_filename(dir, "models.csv", NULL);
  char *cpath = g_build_filename(dir, "cluster.csv", NULL);
  assert_true(cs_results_write_model_timeseries(r, mpath, cpath, NULL));
  char *mtext = NULL, *ctext = NULL;
  assert_true(g_file_get_contents(mpath, &mtext, NULL, NULL));
  assert_true(g_file_get_contents(cpath, &ctext, NULL, NULL));
  assert_string_equal(mtext, "time_s,model,sent,good,bad,goodput_rps\n"
                             "0,a,100,100,0,100\n1,a,100,100,0,100\n"
                             "2,a,100,100,0,100\n3,a,100,100,0,100\n");
  assert_true(g_str_has_prefix(ctext, "time_s,gpus_provisioned\n0,2\n"));
  g_free(mtext);
  g_free(ctext);
  g_free(mpath);
  g_free(cpath);
  /* The summary lists both replicas with their lives. */
  char *text = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(text);
  const cJSON *reps = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "control"), "replicas");
  assert_int_equal(cJSON_GetArraySize(reps), 2);
  const cJSON *old = cJSON_GetArrayItem(reps, 0), *new = cJSON_GetArrayItem(reps, 1);
  assert_float_equal(cJSON_GetObjectItem(old, "drain_s")->valuedouble, 2.0, 1e-12);
  assert_float_equal(cJSON_GetObjectItem(old, "retired_s")->valuedouble, 2.0, 1e-12);
  assert_float_equal(cJSON_GetObjectItem(new, "added_s")->valuedouble, 1.0, 1e-12);
  assert_float_equal(cJSON_GetObjectItem(new, "active_s")->valuedouble, 2.0, 1e-12);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(new, "drain_s")));
  assert_int_equal(cJSON_GetObjectItem(new, "gpu")->valueint, 1);
  cJSON_Delete(doc);
  g_free(text);
  cs_results_free(r);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* A batch-size change on the same GPU reuses the weights: no load, the new
 * replica is active at once and the old one drains. */
static void test_batch_change_needs_no_load(void **state)
{
  (void)state;
  char *dir = make_dir();
  const Act acts[] = { { .at_s = 1, .kind = ACT_APPLY, .replicas = "a:0:8" } };
  Script script = { .acts = acts, .n = 1 };
  Seen seen;
  CsResults *r = run(dir, MOVE_SCENARIO, &script, &seen);
  const CsControlSummary *k = cs_results_control(r);
  assert_int_equal(k->added, 1);
  assert_int_equal(k->loads, 0);
  assert_float_equal(k->load_s_total, 0.0, 0);
  for (guint i = 0; i < seen.recs->len; i++) {
    const CsRequestRecord *q = &g_array_index(seen.recs, CsRequestRecord, i);
    assert_int_equal(q->replica, q->send_ns < S(1) ? 0 : 1);
    assert_int_equal(q->gpu, 0);
  }
  cs_results_free(r);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* Staged change: gpu 0 holds "big" (60 %); the new placement puts "big2"
 * (60 %) there and moves "big" to gpu 1. Old and new do not fit together on
 * gpu 0, so "big" drains at 1 s (it had nothing in flight: its requests take
 * 5 ms and arrive on the 10 ms grid), "big2" loads 60 % x 10^10 / 10^9 = 6 s
 * from 1 s and is active at 7 s; "big" on gpu 1 too (also 6 s). Meanwhile
 * the router holds the requests: every request of "big" sent in [1 s, 7 s)
 * leaves at 7 s in one batch; "big2" had no replica before 1 s (unserved)
 * and waits likewise. */
static void test_change_waits_for_memory(void **state)
{
  (void)state;
  char *dir = make_dir();
  const char *json =
    "{\"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"host_to_gpu_gbps\": 1},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"big\", \"gpu\": 0, \"batch\": 1}]},"
    " \"controller\": {\"policy\": \"script\"},"
    " \"clients\": [{\"model\": \"big\", \"rate\": 100, \"arrival\": \"constant\", \"slo_ms\": 10000,"
    " \"duration_s\": 8}, {\"model\": \"big2\", \"rate\": 100, \"arrival\": \"constant\", \"slo_ms\": 10000,"
    " \"duration_s\": 8}]}";
  const Act acts[] = { { .at_s = 1, .kind = ACT_APPLY, .replicas = "big2:0:1 big:1:1" } };
  Script script = { .acts = acts, .n = 1 };
  Seen seen;
  CsResults *r = run(dir, json, &script, &seen);
  int held_big = 0, held_b = 0;
  for (guint i = 0; i < seen.recs->len; i++) {
    const CsRequestRecord *q = &g_array_index(seen.recs, CsRequestRecord, i);
    gboolean big = q->client == 0;
    if (q->send_ns < S(1)) {
      if (big) {
        assert_true(q->served);
        assert_int_equal(q->gpu, 0);
      } else {
        assert_true(q->unserved);
      }
    } else if (q->send_ns < S(7)) {
      assert_true(q->served);
      assert_int_equal(q->dispatch_ns, S(7));
      assert_int_equal(q->gpu, big ? 1 : 0);
      held_big += big;
      held_b += !big;
    } else {
      assert_true(q->served);
      assert_int_equal(q->dispatch_ns, q->send_ns);
    }
  }
  assert_int_equal(held_big, 600); /* [1 s, 7 s) on a 10 ms grid */
  assert_int_equal(held_b, 600);
  const CsControlSummary *k = cs_results_control(r);
  assert_non_null(strstr(k->log, "1.000000\tdrain replica 0"));
  assert_non_null(strstr(k->log, "1.000000\tload replica 1 (big2 on gpu 0, batch 1, Mreq 60.00 %): 6.000 s"));
  assert_non_null(strstr(k->log, "7.000000\treplica 1 active"));
  assert_float_equal(k->load_s_total, 12.0, 1e-9);
  cs_results_free(r);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* A draining replica finishes the batches it was sent, on its GPU, after
 * the switch; the replica retires when the last one ends. */
static void test_drain_finishes_batches(void **state)
{
  (void)state;
  char *dir = make_dir();
  /* Batch 8 at 100 req/s fills in 70 ms (8 requests on the 10 ms grid) and
   * runs 12 ms; the new replica (gpu 1, 1 s load) is active at 2 s. The
   * batch holding the requests sent at 1.92 .. 1.99 s fills at 1.99 s and
   * leaves for gpu 0 then; it ends at 2.002 s, after the switch. */
  const char *json =
    "{\"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"host_to_gpu_gbps\": 1},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1000},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 8}]},"
    " \"controller\": {\"policy\": \"script\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"arrival\": \"constant\", \"slo_ms\": 1000,"
    " \"duration_s\": 4}]}";
  const Act acts[] = { { .at_s = 1, .kind = ACT_APPLY, .replicas = "a:1:8" } };
  Script script = { .acts = acts, .n = 1 };
  Seen seen;
  CsResults *r = run(dir, json, &script, &seen);
  gboolean saw_after = FALSE;
  for (guint i = 0; i < seen.recs->len; i++) {
    const CsRequestRecord *q = &g_array_index(seen.recs, CsRequestRecord, i);
    assert_true(q->served);
    if (q->dispatch_ns < S(2))
      assert_int_equal(q->gpu, 0);
    else
      assert_int_equal(q->gpu, 1);
    if (q->gpu == 0 && q->exec_end_ns > S(2)) {
      saw_after = TRUE;
      assert_int_equal(q->dispatch_ns, MS(1990));
      assert_int_equal(q->exec_end_ns, MS(2002));
    }
  }
  assert_true(saw_after);
  const CsControlSummary *k = cs_results_control(r);
  assert_non_null(strstr(k->log, "2.000000\tdrain replica 0 (a on gpu 0, batch 8, 1 batches left)"));
  assert_non_null(strstr(k->log, "2.002000\tretire replica 0"));
  cs_results_free(r);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* A placement whose replicas do not fit a GPU's memory by themselves is
 * refused (-1, the reason in the error); the run keeps its placement. */
static void test_apply_refuses_what_does_not_fit(void **state)
{
  (void)state;
  char *dir = make_dir();
  const char *json =
    "{\"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"big\", \"gpu\": 0, \"batch\": 1}]},"
    " \"controller\": {\"policy\": \"script\"},"
    " \"clients\": [{\"model\": \"big\", \"rate\": 100, \"arrival\": \"constant\", \"slo_ms\": 1000,"
    " \"duration_s\": 2}]}";
  /* 60 % + 60 % on gpu 1: 120 %. */
  const Act acts[] = { { .at_s = 1, .kind = ACT_APPLY, .replicas = "big:1:1 big:1:8",
                         .expect_error = "cs_control_apply: the replicas on gpu 1 need 120.00 % of "
                                         "its memory, over the 100 % it has" } };
  Script script = { .acts = acts, .n = 1 };
  Seen seen;
  CsResults *r = run(dir, json, &script, &seen);
  assert_int_equal(script.applied_changes[0], -1);
  for (guint i = 0; i < seen.recs->len; i++)
    assert_int_equal(g_array_index(seen.recs, CsRequestRecord, i).gpu, 0);
  assert_int_equal(cs_results_control(r)->changes, 0);
  cs_results_free(r);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* ---- GPUs: provisioning, release, GPU-hours ----------------------------------- */

/* A centralized dispatch policy for the test: every request alone to the
 * lowest-numbered GPU that takes work, queueing there. */
static void *lowest_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  (void)user_data;
  return e;
}

static void lowest_destroy(void *state)
{
  (void)state;
}

static void lowest_on_request(void *state, int model, const CsRequest *r)
{
  CsEngine *e = state;
  for (int g = 0; g < cs_world_n_gpus(cs_engine_world(e)); g++)
    if (cs_engine_gpu_ready(e, g)) {
      CsBatch *b = cs_engine_batch_new(e, model, 1);
      cs_batch_add(e, b, r);
      cs_engine_send_gpu(e, b, g);
      return;
    }
  cs_engine_unserved(e, model, r);
}

static void lowest_on_cluster_change(void *state)
{
  (void)state; /* it asks cs_engine_gpu_ready at every request */
}

static const CsDispatchPolicy lowest_policy = {
  .name = "lowest-ready",
  .description = "test: each request alone to the lowest-numbered ready GPU",
  .uses_placement = FALSE,
  .create = lowest_create,
  .destroy = lowest_destroy,
  .on_request = lowest_on_request,
  .on_cluster_change = lowest_on_cluster_change,
};

/* A pool of two GPUs, one on at the start; every request alone (5 ms) to
 * the lowest-numbered ready GPU, 250 req/s (every 4 ms): gpu 0 falls behind
 * by 1 ms a request and stays busy from 0 on, request i running [5i, 5i + 5)
 * ms. gpu 1 is provisioned at 1 s with a 0.5 s delay; under a centralized
 * policy every model loads on it (a: 10 % = 1 s), so it is ready at 2.5 s
 * (gpu 0, lower, still takes everything). gpu 0 is released at 3 s with the
 * 750 requests sent before 3 s queued or done: it takes nothing more,
 * finishes the last at 750 x 5 ms = 3.75 s and is off (gpu 1, taking
 * everything from 3 s on, falls behind the same way). The window starts
 * after a 0.5 s warm-up and lasts 4 s: billed gpu 0 [0.5, 3.75) and gpu 1
 * [1, 4.5): 3.25 + 3.5 = 6.75 GPU-seconds. */
static void test_provision_and_release(void **state)
{
  (void)state;
  char *dir = make_dir();
  const char *json =
    "{\"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"host_to_gpu_gbps\": 1,"
    " \"price_per_hour\": 3.6},"
    " \"dispatch\": {\"policy\": \"lowest-ready\"},"
    " \"controller\": {\"policy\": \"script\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 250, \"arrival\": \"constant\", \"slo_ms\": 10000,"
    " \"warmup_s\": 0.5, \"duration_s\": 4}]}";
  const Act acts[] = { { .at_s = 1, .kind = ACT_PROVISION, .gpu = 1, .delay_s = 0.5 },
                       { .at_s = 3, .kind = ACT_RELEASE, .gpu = 0 } };
  Script script = { .acts = acts, .n = 2 };
  Seen seen;
  /* The script scales GPUs: it must say so to get initial_gpus. */
  CsControllerPolicy scaling = script_policy;
  scaling.scales_gpus = TRUE;
  CsScenario *sc = test_scenario(dir, json);
  CsRegistry *reg = cs_registry_new();
  assert_true(cs_registry_add_controller(reg, &scaling, &script, NULL));
  assert_true(cs_registry_add_dispatch(reg, &lowest_policy, NULL, NULL));
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  GError *err = NULL;
  assert_true(cs_scenario_set(sc, "controller.initial_gpus", "1", &err));
  CsRunOptions opt;
  cs_run_options_init(&opt);
  seen.recs = g_array_new(FALSE, FALSE, sizeof(CsRequestRecord));
  opt.on_request = record;
  opt.user_data = &seen;
  CsResults *r = test_run(sc, &opt);
  int on1 = 0;
  for (guint i = 0; i < seen.recs->len; i++) {
    const CsRequestRecord *q = &g_array_index(seen.recs, CsRequestRecord, i);
    assert_true(q->served);
    assert_int_equal(q->gpu, q->send_ns < S(3) ? 0 : 1);
    if (q->gpu == 1) {
      /* gpu 1 falls behind in turn: its j-th request (sent at 3 s + 4j ms)
       * starts at 3 s + 5j ms (records come in completion order). */
      assert_int_equal(q->send_ns, S(3) + (int64_t)on1 * MS(4));
      assert_int_equal(q->exec_start_ns, S(3) + (int64_t)on1 * MS(5));
      on1++;
    } else {
      assert_int_equal(q->exec_start_ns, (int64_t)q->id * MS(5));
    }
  }
  assert_int_equal(on1, 375); /* sent from 3 s to 4.5 s */
  const CsCost *k = cs_results_cost(r);
  assert_float_equal(k->gpu_hours, 6.75 / 3600, 1e-12);
  assert_float_equal(k->cost, 3.6 * 6.75 / 3600, 1e-12);
  assert_float_equal(k->duration_s, 4.0, 1e-9);
  const CsControlSummary *ks = cs_results_control(r);
  assert_int_equal(ks->provisions, 1);
  assert_int_equal(ks->releases, 1);
  assert_non_null(strstr(ks->log, "1.000000\tprovision gpu 1: ready at 2.500000 s"));
  assert_non_null(strstr(ks->log, "2.500000\tgpu 1 ready"));
  assert_non_null(strstr(ks->log, "3.750000\tgpu 0 off"));
  cs_results_free(r);
  cs_scenario_free(sc);
  g_array_unref(seen.recs);
  test_dir_remove(dir);
}

/* ---- the built-in controllers --------------------------------------------------- */

/* Symphony 3.5, with the paper's formulas: add N r / (1 - r), release N f. */
static void test_autoscale_rule(void **state)
{
  (void)state;
  assert_int_equal(cs_autoscale_rule(8, 0.2, 0.0, 0.01, 0), 2);   /* 8 x 0.25 */
  assert_int_equal(cs_autoscale_rule(8, 0.5, 0.0, 0.01, 0), 8);   /* 8 x 1 */
  assert_int_equal(cs_autoscale_rule(3, 0.1, 0.0, 0.01, 0), 1);   /* 3 x 1/9 = 0.33, up */
  assert_int_equal(cs_autoscale_rule(4, 1.0, 0.0, 0.01, 0), INT_MAX);
  assert_int_equal(cs_autoscale_rule(10, 0.01, 0.35, 0.01, 0), -3); /* r not above: 10 x 0.35 */
  assert_int_equal(cs_autoscale_rule(10, 0.0, 0.09, 0.01, 0), 0);  /* 0.9, down */
  assert_int_equal(cs_autoscale_rule(10, 0.0, 0.35, 0.01, 0.4), 0); /* damped */
}

/* replan's estimator and trigger, by hand: tick 1 s, half-life 2 s (a =
 * 1 - 2^-1/2 = 0.2929), planned 100 req/s, sending 200 req/s (constant:
 * exactly 200 per tick). Estimates r_k = 200 - 100 (2^-1/2)^k: 129.3, 150,
 * 164.6 at 1, 2, 3 s. With rate_change 0.3 the trigger needs |r - 100| >
 * 0.3 max(r, 100): 29.3 > 38.8 no, 50 > 45 yes: the first re-placement is at
 * 2 s, for 150 req/s. */
static void test_replan_trigger_by_hand(void **state)
{
  (void)state;
  char *dir = make_dir();
  const char *json =
    "{\"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"dedicated\"},"
    " \"controller\": {\"policy\": \"replan\", \"period_s\": 0, \"tick_s\": 1, \"half_life_s\": 2,"
    " \"rate_change\": 0.3, \"min_interval_s\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 200, \"planned_rate\": 100, \"arrival\": \"constant\","
    " \"slo_ms\": 1000, \"duration_s\": 5}]}";
  CsResults *r = run(dir, json, NULL, NULL);
  const CsControlSummary *k = cs_results_control(r);
  const char *first = strstr(k->log, "replan (");
  assert_non_null(first);
  assert_true(g_str_has_prefix(first - strlen("2.000000\t"), "2.000000\treplan (rate change) for a 150 req/s"));
  /* Then the plan is 150: 164.6, 175, 182.3, 187.5 at 3..6 s stay within
   * 0.3 of the larger. */
  assert_null(strstr(first + 1, "replan ("));
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Same scenario and seed, same bytes; and the effective scenario, with the
 * controller's defaults written out, runs to the same summary. */
static void test_controller_runs_are_deterministic(void **state)
{
  (void)state;
  char *dir = make_dir();
  const char *json =
    "{\"seed\": 3, \"profiles\": [\"control.json\"],"
    " \"cluster\": {\"gpus\": 3, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
    " \"placement\": {\"policy\": \"dedicated\"},"
    " \"controller\": {\"policy\": \"autoscale\", \"initial_gpus\": 2, \"tick_s\": 1,"
    " \"provision_delay_s\": 2},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 300, \"slo_ms\": 40, \"duration_s\": 20},"
    " {\"model\": \"b\", \"rate\": 50, \"slo_ms\": 40, \"duration_s\": 20}]}";
  CsResults *r1 = run(dir, json, NULL, NULL);
  CsResults *r2 = run(dir, json, NULL, NULL);
  char *j1 = cs_results_to_json(r1), *j2 = cs_results_to_json(r2);
  assert_string_equal(j1, j2);
  CsResults *r3 = run(dir, cs_results_effective_scenario(r1), NULL, NULL);
  char *j3 = cs_results_to_json(r3);
  cJSON *a = cJSON_Parse(j1), *b = cJSON_Parse(j3);
  /* The setup names the file that ran; everything else is the same. */
  cJSON_DeleteItemFromObject(a, "setup");
  cJSON_DeleteItemFromObject(b, "setup");
  char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
  assert_string_equal(ta, tb);
  assert_non_null(strstr(cs_results_effective_scenario(r1), "\"host_to_gpu_gbps\""));
  cJSON_free(ta);
  cJSON_free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
  g_free(j1);
  g_free(j2);
  g_free(j3);
  cs_results_free(r1);
  cs_results_free(r2);
  cs_results_free(r3);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_move_makes_before_it_breaks),
    cmocka_unit_test(test_batch_change_needs_no_load),
    cmocka_unit_test(test_change_waits_for_memory),
    cmocka_unit_test(test_drain_finishes_batches),
    cmocka_unit_test(test_apply_refuses_what_does_not_fit),
    cmocka_unit_test(test_provision_and_release),
    cmocka_unit_test(test_autoscale_rule),
    cmocka_unit_test(test_replan_trigger_by_hand),
    cmocka_unit_test(test_controller_runs_are_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
