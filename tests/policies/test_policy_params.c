/* Registry entries of Usher and the MILP: names, parameter validation (errors
 * name the JSON path), parameters that change the result, and inputs the
 * policies must refuse or survive (missing profiles, mixed GPU types, no
 * GPUs, a time limit reached, without a clock). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/json_input.h"
#include "policies/placement/milp.h"
#include "policies/placement/placement.h"
#include "policies/placement/usher.h"
#include "thesis_profiles.h"

/* A second GPU type for mixed clusters: two models, one batch size each. */
static const char *const tiny_profile =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
  " \"gpu_types\": [{\"name\": \"tiny\", \"description\": \"test GPU\"}],"
  " \"models\": ["
  "  {\"gpu\": \"tiny\", \"model\": \"alexnet\", \"batches\": ["
  "    {\"batch\": 4, \"latency_ms\": 2, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 40, \"wao\": 20,"
  "     \"wsm\": 30}},"
  "    {\"batch\": 8, \"latency_ms\": 4, \"mreq_pct\": 20, \"creq_pct\": {\"ao\": 45, \"wao\": 25,"
  "     \"wsm\": 35}}]},"
  "  {\"gpu\": \"tiny\", \"model\": \"resnet50\", \"batches\": ["
  "    {\"batch\": 4, \"latency_ms\": 8, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 40, \"wao\": 20,"
  "     \"wsm\": 30}},"
  "    {\"batch\": 8, \"latency_ms\": 16, \"mreq_pct\": 20, \"creq_pct\": {\"ao\": 45, \"wao\": 25,"
  "     \"wsm\": 35}}]}]}";

/* The thesis' V100 set (thesis_profiles.h) and the tiny profile above. */
static int setup(void **state)
{
  if (thesis_profiles_setup(state) != 0)
    return -1;
  GError *err = NULL;
  if (!cs_profile_set_load_data(*state, tiny_profile, "tiny.json", &err)) {
    print_error("%s\n", err->message);
    g_error_free(err);
    thesis_profiles_teardown(state);
    return -1;
  }
  return 0;
}

typedef struct {
  CsPlacementModel models[4];
  CsPlacementGpu gpus[4];
  CsPlacementProblem in;
} Instance;

/* The thesis' first example: alexnet, gpt2, resnet50, t5, 400 req/s, 200 ms. */
static void example1(Instance *x, const CsProfileSet *set, int n_gpus)
{
  static const char *const names[] = { "alexnet", "gpt2", "resnet50", "t5" };
  memset(x, 0, sizeof *x);
  for (int m = 0; m < 4; m++)
    x->models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = 400, .slo_ms = 200 };
  for (int g = 0; g < n_gpus; g++)
    x->gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
  x->in = (CsPlacementProblem){ .models = x->models, .n_models = 4, .gpus = x->gpus,
                              .n_gpus = n_gpus, .profiles = set };
}

/* Runs policy name with JSON parameters; returns the placement or NULL with
 * *err set. */
static CsPlacement *run(const CsPlacementProblem *in, const char *name, const char *json,
                        GError **err)
{
  /* No wall clock in a result: a MILP object without its own time_limit_s
   * gets 1e6 s, not GLPK's default 60 s, which a slow machine could reach. */
  g_autofree char *limited = NULL;
  if (strstr(name, "milp") && json[0] == '{' && !strstr(json, "time_limit_s") &&
      !strstr(json, "node_limit")) { /* node_limit alone: no clock either (milp.h) */
    const char *rest = json + 1 + strspn(json + 1, " ");
    json = limited = g_strconcat("{\"time_limit_s\": 1e6", *rest == '}' ? "" : ", ", rest, NULL);
  }
  const CsPlacementPolicy *pol = cs_placement_policy_lookup(name);
  assert_non_null(pol);
  cJSON *params = cJSON_Parse(json);
  assert_non_null(params);
  CsPlacement *p = cs_placement_run(pol, NULL, in, params, "scen.json", "placement", err);
  cJSON_Delete(params);
  return p;
}

/* Expects run() to fail with a message containing want. */
static void expect_error(const CsPlacementProblem *in, const char *name, const char *json,
                         const char *want)
{
  GError *err = NULL;
  CsPlacement *p = run(in, name, json, &err);
  if (p)
    fail_msg("%s %s: expected an error containing '%s'", name, json, want);
  assert_non_null(err);
  if (!strstr(err->message, want))
    fail_msg("error '%s' does not contain '%s'", err->message, want);
  g_error_free(err);
}

static CsPlacement *expect_ok(const CsPlacementProblem *in, const char *name, const char *json)
{
  GError *err = NULL;
  CsPlacement *p = run(in, name, json, &err);
  if (!p)
    fail_msg("%s %s: %s", name, json, err->message);
  return p;
}

static void test_registry(void **state)
{
  (void)state;
  static const char *const names[] = { "usher",    "wao-usher", "wsm-usher",
                                       "milp",     "ao-milp",   "wsm-milp" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    const CsPlacementPolicy *p = cs_placement_policy_lookup(names[i]);
    assert_non_null(p);
    assert_string_equal(p->name, names[i]);
    assert_non_null(p->description);
  }
  /* Listed once each, and the registry has no duplicate names. */
  const CsPlacementPolicy *const *list = cs_placement_policy_list();
  for (int i = 0; list[i]; i++)
    for (int j = i + 1; list[j]; j++)
      assert_true(strcmp(list[i]->name, list[j]->name) != 0);
}

static void test_usher_param_errors(void **state)
{
  Instance x;
  example1(&x, *state, 4);
  expect_error(&x.in, "usher", "{\"policy\": \"usher\", \"metrc\": \"ao\"}",
               "scen.json: placement: unknown field \"metrc\" (did you mean \"metric\"?)");
  expect_error(&x.in, "usher", "{\"metric\": \"sm\"}",
               "scen.json: placement.metric: expected \"ao\", \"wao\" or \"wsm\", got \"sm\"");
  expect_error(&x.in, "usher", "{\"metric\": 3}", "placement.metric");
  expect_error(&x.in, "usher", "{\"mode\": \"cheap\"}",
               "placement.mode: expected \"fixed\" or \"min_gpus\", got \"cheap\"");
  expect_error(&x.in, "usher", "{\"tie_break\": \"last\"}",
               "placement.tie_break: expected \"fewest_gpus\" or \"first\", got \"last\"");
  expect_error(&x.in, "usher", "{\"mode\": \"min_gpus\", \"tie_break\": \"first\"}",
               "scen.json: placement.tie_break: applies to mode \"fixed\" only");
  expect_error(&x.in, "usher", "{\"max_group_size\": 0}", "placement.max_group_size");
  expect_error(&x.in, "usher", "{\"mps_shares\": 1}", "placement.mps_shares");
  expect_error(&x.in, "usher", "{\"batch_sizes\": [4, 8.5]}",
               "placement.batch_sizes[1]: expected an integer batch size");
  expect_error(&x.in, "usher", "{\"batch_sizes\": []}", "placement.batch_sizes");
  expect_error(&x.in, "usher", "{\"batch_sizes\": [8, 4, 8]}", "listed twice");
  expect_error(&x.in, "usher", "{\"groups\": [[\"alexnet\", \"gpt\"]]}",
               "placement.groups[0][1]: model \"gpt\" has no client in the scenario");
  expect_error(&x.in, "usher", "{\"groups\": [[\"alexnet\"], [\"alexnet\"]]}",
               "placement.groups[1][0]: model \"alexnet\" is already in group 0");
  expect_error(&x.in, "usher", "{\"groups\": [[\"alexnet\", \"gpt2\", \"t5\"]]}",
               "model \"resnet50\" is in no group");
  expect_error(&x.in, "wao-usher", "{\"metric\": \"ao\"}",
               "placement.metric: policy \"wao-usher\" always uses metric \"wao\"");
  expect_error(&x.in, "usher", "[1]", "scen.json: placement: expected an object");
  cs_placement_free(expect_ok(&x.in, "wao-usher", "{\"policy\": \"wao-usher\", \"metric\": "
                                                  "\"wao\"}"));
}

static void test_milp_param_errors(void **state)
{
  Instance x;
  example1(&x, *state, 4);
  expect_error(&x.in, "milp", "{\"time_limit\": 5}",
               "placement: unknown field \"time_limit\" (did you mean \"time_limit_s\"?)");
  expect_error(&x.in, "milp", "{\"time_limit_s\": -1}", "placement.time_limit_s");
  expect_error(&x.in, "milp", "{\"prefer_small_batch\": \"yes\"}",
               "placement.prefer_small_batch");
  expect_error(&x.in, "milp", "{\"max_replicas\": 0}", "placement.max_replicas");
  expect_error(&x.in, "milp", "{\"max_replicas\": {\"bert\": 1}}",
               "placement.max_replicas.bert: model \"bert\" has no client in the scenario");
  expect_error(&x.in, "milp", "{\"max_replicas\": {\"t5\": -1}}", "placement.max_replicas.t5");
  expect_error(&x.in, "milp", "{\"max_replicas\": \"2\"}",
               "placement.max_replicas: expected a number or an object");
  expect_error(&x.in, "wsm-milp", "{\"metric\": \"ao\"}", "always uses metric \"wsm\"");
  expect_error(&x.in, "milp", "{\"formulation\": \"columns\"}",
               "placement.formulation: expected \"auto\", \"per_gpu\" or \"configurations\", "
               "got \"columns\"");
  expect_error(&x.in, "milp", "{\"formulation\": 1}", "placement.formulation");
  expect_error(&x.in, "milp", "{\"enumerate_limit\": -2}", "placement.enumerate_limit");
  expect_error(&x.in, "milp", "{\"enumerate_limit\": 1.5}", "placement.enumerate_limit");
  expect_error(&x.in, "milp", "{\"formulation\": \"per_gpu\", \"enumerate_limit\": 100}",
               "placement: \"enumerate_limit\" sets how the configuration formulation finds "
               "its columns; with \"formulation\": \"per_gpu\" it would be ignored");
}

static int count_model(const CsPlacement *p, int m)
{
  int n = 0;
  for (guint i = 0; i < p->replicas->len; i++)
    n += g_array_index(p->replicas, CsReplica, i).model == m;
  return n;
}

/* Parameters that change the outcome do so as documented. */
static void test_parameters_take_effect(void **state)
{
  Instance x;
  example1(&x, *state, 4);
  /* max_replicas caps t5 (model 3) at one replica: the best is then alexnet,
   * resnet50, t5 b16 and gpt2 b16 = 400 + 400 + 146.02 + 111.49. By hand
   * (Table 5.2, SLO 200 ms): every batch's AO Creq is above 69 %, so no two
   * replicas share a GPU and the 4 GPUs hold 4 replicas; one replica serves
   * alexnet or resnet50 whole (b4: 2801.75, 589.78 req/s); t5's best within
   * 200 ms is b16 (146.02; b32 takes 213.1 ms), gpt2's b16 (111.49; b32 takes
   * 273 ms). A fourth GPU for t5 is not allowed, and a second gpt2 instead of
   * t5 gives 111.49 < 146.02: 1057.51 req/s. */
  CsPlacement *p = expect_ok(&x.in, "milp", "{\"max_replicas\": {\"t5\": 1}}");
  assert_int_equal(count_model(p, 3), 1);
  assert_true(fabs(p->expected_total - 1057.51) < 0.005);
  cs_placement_free(p);
  /* The same by the configuration formulation, listed and generated. */
  static const char *const forms[] = {
    "{\"max_replicas\": {\"t5\": 1}, \"formulation\": \"configurations\"}",
    "{\"max_replicas\": {\"t5\": 1}, \"formulation\": \"configurations\", "
    "\"enumerate_limit\": -1}",
  };
  for (size_t f = 0; f < G_N_ELEMENTS(forms); f++) {
    p = expect_ok(&x.in, "milp", forms[f]);
    assert_non_null(strstr(p->log->str, "configuration formulation"));
    assert_non_null(strstr(p->log->str, f ? "column generation" : "all of them"));
    assert_int_equal(count_model(p, 3), 1);
    assert_true(fabs(p->expected_total - 1057.51) < 0.005);
    cs_placement_free(p);
  }
  for (int f = 0; f < 2; f++) {
    p = expect_ok(&x.in, "milp", f ? "{\"max_replicas\": 1, \"mps_shares\": true, "
                                     "\"formulation\": \"configurations\"}"
                                   : "{\"max_replicas\": 1, \"mps_shares\": true}");
    for (int m = 0; m < 4; m++)
      assert_true(count_model(p, m) <= 1);
    for (guint i = 0; i < p->replicas->len; i++) {
      const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
      const CsBatchPoint *pt = cs_model_profile_point(
        cs_profile_set_lookup(*state, "v100", x.models[r->model].name), r->batch);
      assert_true(fabs(r->mps_share - pt->creq_pct[CS_CREQ_AO] / 100.0) < 1e-12);
    }
    cs_placement_free(p);
  }

  /* WSM as Creq: MPS shares follow the WSM column; without shares they are 0. */
  p = expect_ok(&x.in, "usher", "{\"metric\": \"wsm\"}");
  assert_true(p->replicas->len > 0);
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    const CsBatchPoint *pt = cs_model_profile_point(
      cs_profile_set_lookup(*state, "v100", x.models[r->model].name), r->batch);
    assert_true(fabs(r->mps_share - pt->creq_pct[CS_CREQ_WSM] / 100.0) < 1e-12);
  }
  assert_non_null(strstr(p->log->str, "metric wsm"));
  cs_placement_free(p);
  p = expect_ok(&x.in, "wsm-usher", "{\"mps_shares\": false}");
  for (guint i = 0; i < p->replicas->len; i++)
    assert_true(g_array_index(p->replicas, CsReplica, i).mps_share == 0.0);
  cs_placement_free(p);

  /* Only batch size 4 allowed: Usher's 800 req/s placement needs t5 at 8. */
  p = expect_ok(&x.in, "usher", "{\"batch_sizes\": [4]}");
  for (guint i = 0; i < p->replicas->len; i++)
    assert_int_equal(g_array_index(p->replicas, CsReplica, i).batch, 4);
  cs_placement_free(p);

  /* The tie-break through JSON: the log says which rule chose. */
  p = expect_ok(&x.in, "usher", "{\"tie_break\": \"fewest_gpus\"}");
  assert_non_null(strstr(p->log->str, "mode fixed (ties: fewest GPUs)"));
  cs_placement_free(p);
  p = expect_ok(&x.in, "usher", "{\"tie_break\": \"first\"}");
  assert_non_null(strstr(p->log->str, "mode fixed, max group size"));
  cs_placement_free(p);

  /* min_gpus through JSON: the log reports the GPUs needed. */
  p = expect_ok(&x.in, "usher", "{\"mode\": \"min_gpus\"}");
  assert_non_null(strstr(p->log->str, "gpus_needed: "));
  assert_non_null(strstr(p->log->str, "fewer than the"));
  cs_placement_free(p);
}

static void test_bad_inputs(void **state)
{
  Instance x;
  example1(&x, *state, 4);
  GError *err = NULL;

  /* A model without a profile. */
  x.models[1].name = "no_such_model";
  for (int i = 0; i < 2; i++) {
    CsPlacement *p = run(&x.in, i ? "milp" : "usher", "{}", &err);
    assert_null(p);
    assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_POLICY));
    assert_non_null(strstr(err->message, "no_such_model"));
    g_clear_error(&err);
  }
  x.models[1].name = "gpt2";

  /* Mixed GPU types: Usher refuses, the MILP uses per-type coefficients. */
  x.gpus[3].gpu_type = "tiny";
  x.models[1] = x.models[2]; /* only alexnet and resnet50 exist on "tiny" */
  x.in.n_models = 2;
  assert_null(run(&x.in, "usher", "{}", &err));
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_POLICY));
  assert_non_null(strstr(err->message, "GPU 3 is \"tiny\""));
  g_clear_error(&err);
  CsPlacement *p = expect_ok(&x.in, "milp", "{}");
  /* alexnet and resnet50 at 400 req/s fit on four GPUs either way: one V100
   * replica each serves 400 (b4: 2801.75 and 589.78 req/s), 400 + 400. */
  assert_true(fabs(p->expected_total - 800.0) < 1e-6);
  cs_placement_free(p);
  example1(&x, *state, 4);

  /* Forced groups out of range (the JSON reader cannot produce these). */
  example1(&x, *state, 4);
  static const int bad_groups[] = { 0, 4, 0, 0 };
  CsUsherOptions uo = { .metric = CS_CREQ_AO, .mode = CS_USHER_FIXED, .max_group_size = 4,
                        .batches = cs_place_default_batches,
                        .n_batches = cs_place_n_default_batches, .groups = bad_groups };
  assert_null(cs_usher_place(&x.in, &uo, NULL, &err));
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_POLICY));
  assert_non_null(strstr(err->message, "model \"gpt2\" has group 4"));
  g_clear_error(&err);

  /* No GPU: empty placements, no error. */
  example1(&x, *state, 0);
  p = expect_ok(&x.in, "usher", "{}");
  assert_int_equal(p->replicas->len, 0);
  assert_true(p->expected_total == 0.0);
  cs_placement_free(p);
  p = expect_ok(&x.in, "milp", "{}");
  assert_int_equal(p->replicas->len, 0);
  cs_placement_free(p);

  /* No batch size meets a 1 ms SLO: nothing to place, said in the log. */
  example1(&x, *state, 4);
  for (int m = 0; m < 4; m++)
    x.models[m].slo_ms = 1.0;
  p = expect_ok(&x.in, "milp", "{}");
  assert_int_equal(p->replicas->len, 0);
  assert_non_null(strstr(p->log->str, "nothing placed"));
  cs_placement_free(p);
  p = expect_ok(&x.in, "usher", "{}");
  assert_int_equal(p->replicas->len, 0);
  assert_non_null(strstr(p->log->str, "not served"));
  cs_placement_free(p);
}

/* A time limit far too short for a larger instance: either the best solution
 * found (with the status in the log) or a solver error, never a crash. */
/* The time limit, without a clock: CsMilpOptions.time_up ends a solve where
 * the test says, as GLPK's wall-clock limit would (milp.h). Four models at
 * 900 req/s on three V100s (metric wao): branch and bound finds integer
 * solutions before it proves one optimal, in both solves (about 80 and 240
 * callbacks in), so every time-limit path runs, on any machine. */
typedef struct {
  CsPlacementModel models[4];
  CsPlacementGpu gpus[3];
  CsPlacementProblem in;
} BigInstance;

static void big_instance(BigInstance *b, const CsProfileSet *profiles)
{
  static const char *const names[] = { "alexnet", "bert", "densenet121", "efficientnet_b7" };
  for (size_t m = 0; m < G_N_ELEMENTS(names); m++)
    b->models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = 900, .slo_ms = 400 };
  for (int g = 0; g < 3; g++)
    b->gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
  b->in = (CsPlacementProblem){ .models = b->models, .n_models = G_N_ELEMENTS(names),
                              .gpus = b->gpus, .n_gpus = 3, .profiles = profiles };
}

/* time_up answers: how many times it said "time is up" so far. */
typedef struct {
  int said_up;
  int asked;
} Clock;

static gboolean up_at_once(gboolean has_solution, void *data)
{
  (void)has_solution;
  Clock *c = data;
  c->asked++;
  c->said_up++;
  return TRUE;
}

static gboolean up_once_solved(gboolean has_solution, void *data)
{
  Clock *c = data;
  c->asked++;
  c->said_up += has_solution;
  return has_solution;
}

/* Up once a solution is known, or after 200 callbacks without one (so that
 * a solve that should have started from a solution fails fast). */
static gboolean up_solved_or_late(gboolean has_solution, void *data)
{
  Clock *c = data;
  c->asked++;
  gboolean up = has_solution || c->asked > 200;
  c->said_up += up;
  return up;
}

/* Up once the first solve has a solution; from then on (the tie-break) at once. */
static gboolean up_solved_then_at_once(gboolean has_solution, void *data)
{
  Clock *c = data;
  c->asked++;
  if (c->said_up > 0 || has_solution) {
    c->said_up++;
    return TRUE;
  }
  return FALSE;
}

static CsMilpOptions big_options(gboolean prefer_small_batch, CsMilpTimeUp up, Clock *clock)
{
  /* GLPK's own limit far away: only time_up ends a solve early. */
  return (CsMilpOptions){ .metric = CS_CREQ_WAO, .time_limit_s = 3600.0,
                          .prefer_small_batch = prefer_small_batch,
                          .batches = cs_place_default_batches,
                          .n_batches = cs_place_n_default_batches, .time_up = up,
                          .time_up_data = clock };
}

/* A V100 cluster for the larger instances: n_models models named in turn
 * from names, model m at rate0 + step x m req/s with an SLO of slo_ms, on
 * n_gpus V100s. */
typedef struct {
  CsPlacementModel models[24];
  CsPlacementGpu gpus[512];
  CsPlacementProblem in;
} V100Cluster;

static void v100_cluster(V100Cluster *x, const char *const *names, int n_names, int n_models,
                         double rate0, double step, double slo_ms, int n_gpus,
                         const CsProfileSet *profiles)
{
  g_assert(n_models <= (int)G_N_ELEMENTS(x->models) && n_gpus <= (int)G_N_ELEMENTS(x->gpus));
  for (int m = 0; m < n_models; m++)
    x->models[m] = (CsPlacementModel){ .name = names[m % n_names], .rate_rps = rate0 + step * m,
                                       .slo_ms = slo_ms };
  for (int g = 0; g < n_gpus; g++)
    x->gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
  x->in = (CsPlacementProblem){ .models = x->models, .n_models = n_models, .gpus = x->gpus,
                                .n_gpus = n_gpus, .profiles = profiles };
}

/* Time up before any integer solution of GLPK's: the greedy start, which
 * satisfies every constraint (else the log says so), is the placement, with
 * an unknown gap and never more goodput than the optimum. */
static void test_milp_time_limit_no_solution(void **state)
{
  BigInstance b;
  big_instance(&b, *state);
  Clock clock = { 0 };
  CsMilpOptions opt = big_options(FALSE, up_at_once, &clock);
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&b.in, &opt, &info, &err);
  assert_non_null(p);
  assert_null(err);
  assert_int_equal(clock.asked, 1);
  assert_int_equal(info.status, CS_MILP_HEURISTIC);
  assert_true(isnan(info.gap));
  assert_non_null(strstr(p->log->str, "time limit reached before its first solution, the "
                                      "greedy start kept"));
  assert_null(strstr(p->log->str, "violates a constraint"));
  assert_true(info.objective > 0.0 && p->replicas->len > 0);
  assert_true(p->expected_total >= info.objective - 1e-6);
  CsMilpOptions exact = big_options(FALSE, NULL, NULL);
  CsMilpInfo best;
  CsPlacement *q = cs_milp_place(&b.in, &exact, &best, &err);
  assert_non_null(q);
  assert_int_equal(best.status, CS_MILP_OPTIMAL);
  assert_true(info.objective <= best.objective + 1e-6);
  cs_placement_free(q);
  cs_placement_free(p);
}

/* A problem past PCH_MAX_BINARIES (16 models on 64 GPUs, 6000 binaries,
 * more load than they hold):
 * GLPK starts from the greedy solution, so the first callback already has
 * one; cut there, that solution is kept (status feasible, not an error).
 * Before warm starts, GLPK had no integer solution after 10 s on this
 * instance and the call failed. */
static void test_milp_large_starts_from_greedy(void **state)
{
  static const char *const names[] = { "alexnet", "bert", "densenet121", "efficientnet_b7",
                                       "resnet50", "vgg19", "mobilenet_v2", "inception_v3" };
  V100Cluster x;
  v100_cluster(&x, names, 8, 16, 30000, 1000, 400, 64, *state);
  Clock clock = { 0 };
  CsMilpOptions opt = big_options(FALSE, up_solved_or_late, &clock);
  opt.formulation = CS_MILP_FORM_PER_GPU; /* "auto" would solve configurations */
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&x.in, &opt, &info, &err);
  assert_non_null(p);
  assert_true(info.n_binaries > 2000);
  assert_int_equal(info.status, CS_MILP_FEASIBLE);
  assert_int_equal(clock.said_up, 1);
  assert_true(clock.asked <= 200); /* it had a solution from the start */
  const char *line = strstr(p->log->str, "greedy start: objective ");
  assert_non_null(line);
  double start = g_ascii_strtod(line + strlen("greedy start: objective "), NULL);
  assert_true(start > 0.0);
  assert_true(info.objective >= start - 0.01);
  assert_true(p->expected_total >= info.objective - 1e-6);
  cs_placement_free(p);
}

/* Time up after the first integer solution: it is kept, marked not proven
 * optimal, with a positive gap. */
static void test_milp_time_limit_feasible(void **state)
{
  BigInstance b;
  big_instance(&b, *state);
  Clock clock = { 0 };
  CsMilpOptions opt = big_options(FALSE, up_once_solved, &clock);
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&b.in, &opt, &info, &err);
  assert_non_null(p);
  assert_int_equal(clock.said_up, 1);
  assert_int_equal(info.status, CS_MILP_FEASIBLE);
  assert_true(isfinite(info.gap) && info.gap > 0.0);
  assert_true(info.objective > 0.0);
  assert_non_null(strstr(p->log->str, "GLPK status: time limit reached, best solution found "
                                      "kept"));
  assert_non_null(strstr(p->log->str, "not proven optimal"));
  assert_false(info.tie_break_solved);
  /* The replicas placed deliver at least the solver's goodput credit (w_m is
   * at most what they give), and no model more than it offers. */
  assert_true(p->expected_total >= info.objective - 1e-6);
  assert_true(p->expected_total <= 900.0 * 4 + 1e-6);
  assert_true(p->replicas->len > 0);
  /* The bound it reports (from GLPK's gap) holds against the optimum. */
  CsMilpOptions exact = big_options(FALSE, NULL, NULL);
  CsMilpInfo best;
  CsPlacement *q = cs_milp_place(&b.in, &exact, &best, &err);
  assert_non_null(q);
  assert_int_equal(best.status, CS_MILP_OPTIMAL);
  assert_true(best.bound == best.objective);
  assert_true(info.bound >= best.objective - 1e-6 && info.bound > info.objective);
  cs_placement_free(q);
  cs_placement_free(p);
}

/* prefer_small_batch: the first solve stopped with a solution, the tie-break
 * stopped before one: the first solution stays. */
static void test_milp_time_limit_tie_break_fails(void **state)
{
  BigInstance b;
  big_instance(&b, *state);
  Clock plain_clock = { 0 }, clock = { 0 };
  CsMilpOptions plain = big_options(FALSE, up_once_solved, &plain_clock);
  CsMilpOptions opt = big_options(TRUE, up_solved_then_at_once, &clock);
  CsMilpInfo plain_info, info;
  GError *err = NULL;
  CsPlacement *first = cs_milp_place(&b.in, &plain, &plain_info, &err);
  CsPlacement *p = cs_milp_place(&b.in, &opt, &info, &err);
  assert_non_null(first);
  assert_non_null(p);
  assert_int_equal(clock.said_up, 2);
  assert_int_equal(info.status, CS_MILP_FEASIBLE);
  assert_false(info.tie_break_solved);
  assert_non_null(strstr(p->log->str, "prefer_small_batch: tie-break solve failed (time limit "
                                      "reached); keeping the first solution"));
  /* Same first solve as without prefer_small_batch: the same replicas. */
  assert_int_equal(p->replicas->len, first->replicas->len);
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    const CsReplica *f = &g_array_index(first->replicas, CsReplica, i);
    assert_int_equal(r->model, f->model);
    assert_int_equal(r->gpu, f->gpu);
    assert_int_equal(r->batch, f->batch);
  }
  cs_placement_free(first);
  cs_placement_free(p);
}

/* prefer_small_batch: both solves stopped once they have a solution: the
 * tie-break's solution is used and keeps the first solve's goodput. */
static void test_milp_time_limit_tie_break_feasible(void **state)
{
  BigInstance b;
  big_instance(&b, *state);
  Clock clock = { 0 };
  CsMilpOptions opt = big_options(TRUE, up_once_solved, &clock);
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&b.in, &opt, &info, &err);
  assert_non_null(p);
  assert_int_equal(clock.said_up, 2);
  assert_int_equal(info.status, CS_MILP_FEASIBLE);
  assert_true(info.tie_break_solved);
  assert_non_null(strstr(p->log->str, "prefer_small_batch: tie-break solve stopped by time "
                                      "limit (best tie-break found)"));
  assert_true(p->expected_total >= info.objective - 1e-6);
  cs_placement_free(p);
}

/* A large problem whose greedy start already serves every rate has reached
 * the objective's upper bound (sum of w_m <= sum of rates): optimal without a
 * solve. Four models at 400 req/s on 512 V100s. */
static void test_milp_large_start_serves_everything(void **state)
{
  static const char *const names[] = { "alexnet", "resnet50", "densenet121", "vgg19" };
  V100Cluster x;
  v100_cluster(&x, names, 4, 4, 400, 0, 400, 512, *state);
  CsMilpOptions opt = big_options(FALSE, up_at_once, &(Clock){ 0 });
  opt.formulation = CS_MILP_FORM_PER_GPU;
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&x.in, &opt, &info, &err);
  assert_non_null(p);
  assert_true(info.n_binaries > 2000);
  assert_int_equal(info.status, CS_MILP_OPTIMAL);
  assert_true(info.gap == 0.0);
  assert_float_equal(info.objective, 1600.0, 1e-9);
  assert_float_equal(p->expected_total, 1600.0, 1e-9);
  assert_non_null(strstr(p->log->str, "greedy start serves every rate: optimal"));
  cs_placement_free(p);
}

/* Usher on more than CS_MATCHING_MAX_NODES models: the first grouping
 * round matches greedily (the exact matching would need 2^24 subsets), later
 * ones exactly; every group stays within max_group_size and every model is
 * placed in one. Before, Usher refused: "24 models to group". */
static void test_usher_more_than_20_models(void **state)
{
  static const char *const names[] = { "alexnet", "resnet50", "densenet121", "vgg19",
                                       "mobilenet_v2", "inception_v3" };
  V100Cluster x;
  v100_cluster(&x, names, 6, 24, 100, 10, 300, 64, *state);
  static const int batches[] = { 8, 32 }; /* few configurations: a quick test */
  CsUsherOptions opt = { .metric = CS_CREQ_AO, .mode = CS_USHER_FIXED, .max_group_size = 4,
                         .batches = batches, .n_batches = 2, .mps_shares = TRUE };
  CsUsherInfo info = { 0 };
  GError *err = NULL;
  CsPlacement *p = cs_usher_place(&x.in, &opt, &info, &err);
  assert_null(err);
  assert_non_null(p);
  assert_non_null(strstr(p->log->str, "24 models to group: rounds with more than 20 groups use "
                                      "a greedy matching"));
  int size[24] = { 0 };
  for (int m = 0; m < 24; m++) {
    assert_true(info.group_of_model[m] >= 0 && info.group_of_model[m] < info.n_groups);
    size[info.group_of_model[m]]++;
  }
  for (int g = 0; g < info.n_groups; g++)
    assert_true(size[g] >= 1 && size[g] <= 4);
  assert_true(info.n_groups >= 6 && info.n_groups < 24); /* merged, at most 4 each */
  assert_true(p->expected_total > 0.0);
  cs_usher_info_clear(&info);
  cs_placement_free(p);
}

#define RATE_SHORT 800.0

/* A start that serves almost every rate (here 90-100 %) is not proof of
 * optimality: only one that serves all of them is. With the search cut at
 * once, the status must say "not proven". One replica per model at most
 * keeps vgg19 below its rate. */
static void test_milp_large_start_short_of_every_rate(void **state)
{
  static const char *const names[] = { "alexnet", "resnet50", "densenet121", "vgg19" };
  static const int one[] = { 1, 1, 1, 1 };
  V100Cluster x;
  v100_cluster(&x, names, 4, 4, RATE_SHORT, 0, 400, 512, *state);
  CsMilpOptions opt = big_options(FALSE, up_at_once, &(Clock){ 0 });
  opt.formulation = CS_MILP_FORM_PER_GPU;
  opt.max_replicas = one;
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&x.in, &opt, &info, &err);
  assert_non_null(p);
  const char *line = strstr(p->log->str, "greedy start: objective ");
  assert_non_null(line);
  double start = g_ascii_strtod(line + strlen("greedy start: objective "), NULL);
  print_message("start %.2f of %.2f\n", start, 4 * RATE_SHORT);
  assert_true(start >= 0.9 * 4 * RATE_SHORT && start < 4 * RATE_SHORT);
  assert_true(info.status != CS_MILP_OPTIMAL);
  assert_null(strstr(p->log->str, "serves every rate"));
  cs_placement_free(p);
}

/* placement.node_limit: the cut counts branch-and-bound nodes, not seconds
 * (milp.h), so where it falls is the same on any machine. The instance of
 * the time-limit tests needs branching before GLPK's first integer solution
 * (about 80 callbacks in, above): cut at the root (node_limit 1) the greedy
 * start is kept, and the log says why and that no clock was involved; with
 * room for the whole search it is solved to optimality; the same limit
 * gives the same placement twice. Before node_limit a scenario could bound
 * the MILP only by wall-clock time (the fuzzers' 1 s cap gave two runs of
 * one scenario different placements on a loaded machine). */
static void test_milp_node_limit(void **state)
{
  BigInstance b;
  big_instance(&b, *state);
  CsPlacement *root = expect_ok(&b.in, "milp", "{\"metric\": \"wao\", \"node_limit\": 1}");
  const char *log = root->log->str;
  if (!strstr(log, "node limit 1, no time limit") ||
      !strstr(log, "node limit reached before its first solution, the greedy start kept") ||
      !strstr(log, "the same on any machine") || strstr(log, "machine speed"))
    fail_msg("node_limit 1: unexpected log:\n%s", log);
  CsPlacement *again = expect_ok(&b.in, "milp", "{\"metric\": \"wao\", \"node_limit\": 1}");
  assert_string_equal(again->log->str, log);
  CsPlacement *full = expect_ok(&b.in, "milp",
                                "{\"metric\": \"wao\", \"node_limit\": 1000000}");
  if (!strstr(full->log->str, "status: optimal"))
    fail_msg("node_limit 10^6: expected an optimal solve:\n%s", full->log->str);
  CsPlacement *timed = expect_ok(&b.in, "milp", "{\"metric\": \"wao\"}");
  assert_true(fabs(cs_placement_expected_total(full) - cs_placement_expected_total(timed)) < 1e-6);
  assert_true(cs_placement_expected_total(root) <= cs_placement_expected_total(full) + 1e-6);
  /* Both limits: both named, whichever comes first cuts. */
  CsPlacement *both = expect_ok(&b.in, "milp",
                                "{\"metric\": \"wao\", \"node_limit\": 1, \"time_limit_s\": 1e6}");
  if (!strstr(both->log->str, "time limit 1e+06 s, node limit 1") ||
      !strstr(both->log->str, "time or node limit reached before its first solution"))
    fail_msg("both limits: unexpected log:\n%s", both->log->str);
  cs_placement_free(root);
  cs_placement_free(again);
  cs_placement_free(full);
  cs_placement_free(timed);
  cs_placement_free(both);
  expect_error(&b.in, "milp", "{\"node_limit\": 0}", "placement.node_limit");
  expect_error(&b.in, "milp", "{\"node_limit\": 2.5}", "placement.node_limit");
  expect_error(&b.in, "milp", "{\"node_limit\": \"10\"}", "placement.node_limit");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_registry),
    cmocka_unit_test(test_usher_param_errors),
    cmocka_unit_test(test_milp_param_errors),
    cmocka_unit_test(test_parameters_take_effect),
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_usher_more_than_20_models),
    cmocka_unit_test(test_milp_time_limit_no_solution),
    cmocka_unit_test(test_milp_large_starts_from_greedy),
    cmocka_unit_test(test_milp_large_start_serves_everything),
    cmocka_unit_test(test_milp_large_start_short_of_every_rate),
    cmocka_unit_test(test_milp_time_limit_feasible),
    cmocka_unit_test(test_milp_time_limit_tie_break_fails),
    cmocka_unit_test(test_milp_time_limit_tie_break_feasible),
    cmocka_unit_test(test_milp_node_limit),
  };
  return cmocka_run_group_tests(tests, setup, thesis_profiles_teardown);
}
