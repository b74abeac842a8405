/* The "search" placement policy and cs_placement_simulate: the score it
 * reports is what independent runs of its placement give on its seeds, it
 * never returns a placement worse than a start (each start also run
 * independently), no batch change improves the placement it ends at, the
 * thread count changes nothing, and the budget holds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "experiment/run.h"
#include "scenario/scenario.h"
#include "sim/config.h"
#include "test_util.h"

/* Models a and b on GPU type "gpu": latency b + 4 ms, profiled at 1 and 8
 * (5 and 12 ms), Mreq 30 %. */
static char *make_dir(void)
{
  char *dir = g_dir_make_tmp("cs-search-XXXXXX", NULL);
  assert_non_null(dir);
  GString *models = g_string_new(NULL);
  const char *names[] = { "a", "b" };
  for (int i = 0; i < 2; i++)
    g_string_append_printf(
      models,
      "%s{\"gpu\": \"gpu\", \"model\": \"%s\", \"input_bytes\": 1000, \"output_bytes\": 10,"
      " \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 4}, \"batches\": ["
      "{\"batch\": 1, \"latency_ms\": 5, \"mreq_pct\": 30},"
      "{\"batch\": 8, \"latency_ms\": 12, \"mreq_pct\": 30}]}",
      i ? ",\n" : "", names[i]);
  char *json = g_strdup_printf(
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic, for tests\",\n"
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80,"
    " \"memory_bytes\": 10000000000}],\n \"models\": [%s]}\n",
    models->str);
  char *path = g_build_filename(dir, "search.json", NULL);
  assert_true(g_file_set_contents(path, json, -1, NULL));
  g_free(path);
  g_free(json);
  g_string_free(models, TRUE);
  return dir;
}

/* a at 900 req/s, b at 150, SLO 40 ms, 2 s each, 2 GPUs time-slicing,
 * router with a 20 ms timeout. One replica of a at batch 8 runs at most
 * 8 / 12 ms = 667 req/s: dedicated (a and b alone at batch 8) loses most of
 * a, and the search has something to find. */
static char *scenario(const char *placement)
{
  return g_strdup_printf(
    "{\"seed\": 7, \"profiles\": [\"search.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
    " \"placement\": %s,"
    " \"clients\": [{\"model\": \"a\", \"rate\": 900, \"slo_ms\": 40, \"duration_s\": 2},"
    "  {\"model\": \"b\", \"rate\": 150, \"slo_ms\": 40, \"duration_s\": 2}]}",
    placement);
}

static const char *const SEARCH =
  "{\"policy\": \"search\", \"start\": [\"dedicated\", {\"policy\": \"manual\", \"replicas\": "
  "[{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"b\", \"gpu\": 0, \"batch\": 1}]}],"
  " \"max_evaluations\": %d, \"seeds\": 2, \"first_seed\": 100, \"threads\": %d}";

/* Mean total goodput of a manual placement over seeds 100 and 101, each an
 * ordinary run: the independent check of the search's scores. */
static double independent_score(const char *dir, const char *replicas_json)
{
  char *pl = g_strdup_printf("{\"policy\": \"manual\", \"replicas\": %s}", replicas_json);
  char *json = scenario(pl);
  double sum = 0;
  for (int k = 0; k < 2; k++) {
    CsScenario *sc = test_scenario(dir, json);
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.seed_override = 100 + k;
    CsResults *r = test_run(sc, &opt);
    sum += cs_results_total(r)->goodput_rps;
    cs_results_free(r);
    cs_scenario_free(sc);
  }
  g_free(json);
  g_free(pl);
  return sum / 2;
}

/* The placement of a run as a manual replica list, JSON text. */
static char *replicas_of(const CsPlacement *p, int change, int new_batch)
{
  GString *s = g_string_new("[");
  const char *names[] = { "a", "b" };
  for (int i = 0; i < cs_placement_n_replicas(p); i++) {
    const CsReplica *r = cs_placement_replica(p, i);
    g_string_append_printf(s, "%s{\"model\": \"%s\", \"gpu\": %d, \"batch\": %d}", i ? ", " : "",
                           names[r->model], r->gpu, i == change ? new_batch : r->batch);
  }
  g_string_append(s, "]");
  return g_string_free(s, FALSE);
}

static CsResults *run_search(const char *dir, int budget, int threads)
{
  char *pl = g_strdup_printf(SEARCH, budget, threads);
  char *json = scenario(pl);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  cs_scenario_free(sc);
  g_free(json);
  g_free(pl);
  return r;
}

/* The score the log gives for a line starting with prefix. */
static double logged_goodput(const char *log, const char *prefix)
{
  const char *line = strstr(log, prefix);
  assert_non_null(line);
  const char *g = strstr(line, "goodput ");
  assert_non_null(g);
  return g_ascii_strtod(g + strlen("goodput "), NULL);
}

static void test_search_scores_are_runs(void **state)
{
  (void)state;
  char *dir = make_dir();
  CsResults *r = run_search(dir, 200, 2);
  const CsPlacement *p = cs_results_placement(r);
  const char *log = cs_placement_log_text(p);
  assert_non_null(strstr(log, "no move improves: a local optimum"));
  assert_non_null(strstr(log, "move 1 (evaluation")); /* it improved on the starts */
  /* The result's score is the mean of two ordinary runs of it. */
  char *reps = replicas_of(p, -1, 0);
  double result = independent_score(dir, reps);
  assert_float_equal(logged_goodput(log, "result:"), result, 1e-3);
  assert_float_equal(cs_placement_expected_total(p), result, 1e-6);
  /* No worse than either start, each run independently. */
  double manual_start = independent_score(
    dir, "[{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"b\", \"gpu\": 0, \"batch\": 1}]");
  assert_float_equal(logged_goodput(log, "start {\"policy\":\"manual\""), manual_start, 1e-3);
  assert_true(result >= manual_start - 1e-9);
  assert_true(result >= logged_goodput(log, "start {\"policy\": \"dedicated\"}") - 1e-9);
  /* A local optimum: no batch change of a replica (to the other profiled
   * size) scores higher on the same seeds. */
  for (int i = 0; i < cs_placement_n_replicas(p); i++) {
    int other = cs_placement_replica(p, i)->batch == 1 ? 8 : 1;
    char *moved = replicas_of(p, i, other);
    assert_true(independent_score(dir, moved) <= result + 1e-9);
    g_free(moved);
  }
  g_free(reps);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* One thread or two: the same placement and the same log. */
static void test_search_threads_change_nothing(void **state)
{
  (void)state;
  char *dir = make_dir();
  CsResults *r1 = run_search(dir, 40, 1), *r2 = run_search(dir, 40, 2);
  assert_string_equal(cs_placement_log_text(cs_results_placement(r1)),
                      cs_placement_log_text(cs_results_placement(r2)));
  char *a = replicas_of(cs_results_placement(r1), -1, 0);
  char *b = replicas_of(cs_results_placement(r2), -1, 0);
  assert_string_equal(a, b);
  g_free(a);
  g_free(b);
  cs_results_free(r1);
  cs_results_free(r2);
  test_dir_remove(dir);
}

/* The budget counts the starts: with 1 evaluation only the first start is
 * scored and no move is tried. */
static void test_search_budget(void **state)
{
  (void)state;
  char *dir = make_dir();
  CsResults *r = run_search(dir, 1, 2);
  const char *log = cs_placement_log_text(cs_results_placement(r));
  assert_non_null(strstr(log, "start {\"policy\":\"manual\""));
  assert_non_null(strstr(log, "not scored (budget)"));
  assert_non_null(strstr(log, "budget spent after 1 evaluations (0 moves accepted)"));
  cs_results_free(r);
  r = run_search(dir, 9, 2);
  log = cs_placement_log_text(cs_results_placement(r));
  assert_non_null(strstr(log, "after 9 evaluations"));
  cs_results_free(r);
  test_dir_remove(dir);
}

/* A failing start is skipped and said; a search inside a controller's
 * re-placement has no scenario to score on: the controller warns and the
 * run keeps its placement. */
static void test_search_failures(void **state)
{
  (void)state;
  char *dir = make_dir();
  char *json = scenario("{\"policy\": \"search\", \"start\": [\"dedicated\", {\"policy\": "
                        "\"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 5, \"batch\": "
                        "1}]}], \"max_evaluations\": 5}");
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  const char *log = cs_placement_log_text(cs_results_placement(r));
  assert_non_null(strstr(log, "failed: test.json: placement.replicas[0]: gpu 5 does not exist"));
  cs_results_free(r);
  GError *err = NULL;
  assert_true(cs_scenario_set(sc, "controller",
                              "{\"policy\": \"replan\", \"period_s\": 1, \"tick_s\": 1, \"min_interval_s\": 0}", &err));
  r = test_run(sc, NULL);
  gboolean warned = FALSE;
  for (int i = 0; i < cs_results_n_warnings(r); i++)
    warned |= strcmp(cs_results_warning(r, i)->code, "replan_failed") == 0 &&
              strstr(cs_results_warning(r, i)->message, "has none") != NULL;
  assert_true(warned);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

/* A light load (a and b at 50 req/s each, constant gaps, 1 s) that any
 * placement below serves whole: every request good, so every start scores
 * the same goodput and only the tie rules choose. Only the starts are
 * scored (max_evaluations = the number of starts). */
static CsResults *run_tie(const char *dir, const char *search_fields, const char *clients)
{
  char *json = g_strdup_printf(
    "{\"seed\": 7, \"profiles\": [\"search.json\"], \"network\": \"zero\","
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1},"
    " \"placement\": {\"policy\": \"search\", \"seeds\": 1, \"threads\": 1, %s},"
    " \"clients\": [%s]}",
    search_fields, clients);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  cs_scenario_free(sc);
  g_free(json);
  return r;
}

#define LIGHT_CLIENTS                                                                          \
  "{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 40, \"arrival\": \"constant\", \"duration_s\": 1," \
  " \"warmup_s\": 0}, {\"model\": \"b\", \"rate\": 50, \"slo_ms\": 40, \"arrival\": \"constant\","  \
  " \"duration_s\": 1, \"warmup_s\": 0}"

/* The GPU-count tie: two starts of two replicas each that serve everything
 * (equal goodput), a and b on GPUs 0 and 1 first, both on GPU 0 second: the
 * one on fewer GPUs wins although it comes later. */
static void test_search_gpu_count_tie(void **state)
{
  (void)state;
  char *dir = make_dir();
  CsResults *r = run_tie(
    dir,
    "\"max_evaluations\": 2, \"start\": ["
    "{\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1},"
    " {\"model\": \"b\", \"gpu\": 1, \"batch\": 1}]},"
    "{\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1},"
    " {\"model\": \"b\", \"gpu\": 0, \"batch\": 1}]}]",
    LIGHT_CLIENTS);
  const CsPlacement *p = cs_results_placement(r);
  const char *log = cs_placement_log_text(p);
  /* Both starts serve the 100 requests a second whole. */
  assert_float_equal(logged_goodput(log, "start {\"policy\":\"manual\",\"replicas\":[{\"model\":\"a\",\"gpu\":0,\"batch\":1},{\"model\":\"b\",\"gpu\":1"),
                     100.0, 1e-9);
  assert_float_equal(logged_goodput(log, "start {\"policy\":\"manual\",\"replicas\":[{\"model\":\"a\",\"gpu\":0,\"batch\":1},{\"model\":\"b\",\"gpu\":0"),
                     100.0, 1e-9);
  assert_non_null(strstr(log, "best start: {\"policy\":\"manual\",\"replicas\":[{\"model\":\"a\","
                              "\"gpu\":0,\"batch\":1},{\"model\":\"b\",\"gpu\":0,"));
  assert_int_equal(cs_placement_n_replicas(p), 2);
  assert_int_equal(cs_placement_replica(p, 0)->gpu, 0);
  assert_int_equal(cs_placement_replica(p, 1)->gpu, 0);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* The served_share cap: a model's share counts at most 1. a sends 60 req/s
 * but plans for 20 (planned_rate), b 100 for 100. Serving a alone scores
 * min(1, 60 / 20) / 2 = 0.5 (uncapped: 3 / 2 = 1.5); serving b alone
 * min(1, 100 / 100) / 2 = 0.5. The shares tie, and the total goodput
 * decides: b alone (100 req/s) over a alone (60), although it comes later. */
static void test_search_served_share_cap(void **state)
{
  (void)state;
  char *dir = make_dir();
  CsResults *r = run_tie(
    dir,
    "\"objective\": \"served_share\", \"max_evaluations\": 2, \"start\": ["
    "{\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    "{\"policy\": \"manual\", \"replicas\": [{\"model\": \"b\", \"gpu\": 0, \"batch\": 1}]}]",
    "{\"model\": \"a\", \"rate\": 60, \"planned_rate\": 20, \"slo_ms\": 40, \"arrival\": \"constant\","
    " \"duration_s\": 1, \"warmup_s\": 0}, {\"model\": \"b\", \"rate\": 100, \"slo_ms\": 40,"
    " \"arrival\": \"constant\", \"duration_s\": 1, \"warmup_s\": 0}");
  const CsPlacement *p = cs_results_placement(r);
  const char *log = cs_placement_log_text(p);
  assert_float_equal(logged_goodput(log, "start {\"policy\":\"manual\",\"replicas\":[{\"model\":\"a\""),
                     60.0, 1e-9);
  assert_float_equal(logged_goodput(log, "start {\"policy\":\"manual\",\"replicas\":[{\"model\":\"b\""),
                     100.0, 1e-9);
  assert_non_null(strstr(log, "best start: {\"policy\":\"manual\",\"replicas\":[{\"model\":\"b\""));
  assert_int_equal(cs_placement_n_replicas(p), 1);
  assert_int_equal(cs_placement_replica(p, 0)->model, 1);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* The simulator comes from the layer above (scenario.h, CsScenarioRunner):
 * a scenario compiled by the scenario layer alone gives its placement
 * problem none, and the search says so; compiled by the experiment layer
 * (as cs_run, cs_scenario_validate and `clustersim place` do), the search
 * runs and finds what cs_run's placement is. */
static void test_search_runner_from_above(void **state)
{
  (void)state;
  char *dir = make_dir();
  char *pl = g_strdup_printf(SEARCH, 6, 1);
  char *json = scenario(pl);
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  CsConfig *c = cs_scenario_compile(sc, &err);
  assert_null(c);
  assert_non_null(strstr(err->message, "scores placements by simulating the scenario, and this "
                                       "problem has none"));
  g_clear_error(&err);
  c = cs_experiment_compile(sc, &err);
  assert_non_null(c);
  CsResults *r = test_run(sc, NULL);
  const CsPlacement *p = cs_results_placement(r);
  assert_int_equal(cs_placement_n_replicas(c->placement), cs_placement_n_replicas(p));
  for (int i = 0; i < cs_placement_n_replicas(p); i++) {
    const CsReplica *a = cs_placement_replica(c->placement, i), *b = cs_placement_replica(p, i);
    assert_int_equal(a->model, b->model);
    assert_int_equal(a->gpu, b->gpu);
    assert_int_equal(a->batch, b->batch);
  }
  assert_string_equal(cs_placement_log_text(c->placement), cs_placement_log_text(p));
  assert_true(cs_scenario_validate(sc, &err));
  cs_results_free(r);
  cs_config_free(c);
  cs_scenario_free(sc);
  g_free(json);
  g_free(pl);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_search_scores_are_runs),
    cmocka_unit_test(test_search_threads_change_nothing),
    cmocka_unit_test(test_search_budget),
    cmocka_unit_test(test_search_failures),
    cmocka_unit_test(test_search_gpu_count_tie),
    cmocka_unit_test(test_search_served_share_cap),
    cmocka_unit_test(test_search_runner_from_above),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
