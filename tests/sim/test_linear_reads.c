/* Readers are linear in the lists they read (issue 34).
 *
 * cJSON keeps an array as a linked list: cJSON_GetArrayItem(a, i) walks i + 1
 * nodes and cJSON_GetArraySize(a) walks them all, so a reader that indexes a
 * list in a loop takes n^2 / 2 steps (100,000 trace.rate_scale points took
 * 69 s). This test counts those steps instead of timing anything: it is
 * linked with -Wl,--wrap for both functions (tests/sim/meson.build), and each
 * call through the library's static archives adds the nodes it walks.
 * cJSON_ArrayForEach and ->child/->next walks are macros and pointer steps,
 * not calls, and cost one node each, as they should.
 *
 * Each reader is fed lists of N and 2N elements (N = 5000): the steps must be
 * at most STEPS_PER_ELEMENT per element, and doubling the lists must at most
 * double them (plus a constant). A reader indexing one of its lists would
 * take about N^2 / 2 = 1.25e7 steps at N, far beyond both. */
#include <glib/gstdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "clustersim/clustersim.h"
#include "experiment/experiment.h"
#include "figures/figures_run.h"
#include "replay/decision_log.h"
#include "test_util.h"

#define N 5000
#define STEPS_PER_ELEMENT 16

static gint64 steps;

cJSON *__real_cJSON_GetArrayItem(const cJSON *array, int index);
int __real_cJSON_GetArraySize(const cJSON *array);

/* The wrapped functions: the real ones, counting the nodes they walk. */
cJSON *__wrap_cJSON_GetArrayItem(const cJSON *array, int index)
{
  steps += index >= 0 ? (gint64)index + 1 : 0;
  return __real_cJSON_GetArrayItem(array, index);
}

int __wrap_cJSON_GetArraySize(const cJSON *array)
{
  int n = __real_cJSON_GetArraySize(array);
  steps += n;
  return n;
}

/* Steps counted by read(n), for n = N and 2N, checked as above. */
static void assert_linear(gint64 (*read)(int n), const char *what)
{
  gint64 at_n = read(N), at_2n = read(2 * N);
  print_message("%s: %" G_GINT64_FORMAT " steps at %d elements, %" G_GINT64_FORMAT " at %d\n",
                what, at_n, N, at_2n, 2 * N);
  assert_true(at_n <= (gint64)STEPS_PER_ELEMENT * N);
  assert_true(at_2n <= 2 * at_n + 1000);
}

/* A scenario of n nodes of one GPU each, n manual replicas (a policy's
 * parameters, read through CsParams) and n explicit send times. */
static char *big_scenario(int n)
{
  GString *s = g_string_new("{\"seed\": 1, \"profiles\": [\"synthetic.json\"],"
                            " \"cluster\": {\"nodes\": [");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s{\"gpus\": 1, \"gpu_type\": \"gpu\"}", i ? ", " : "");
  g_string_append(s, "]}, \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1},"
                     " \"placement\": {\"policy\": \"manual\", \"replicas\": [");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s{\"model\": \"a\", \"gpu\": %d, \"batch\": 1}", i ? ", " : "", i);
  g_string_append(s, "]}, \"clients\": [{\"model\": \"a\", \"slo_ms\": 100,"
                     " \"arrival\": {\"process\": \"times\", \"times_ms\": [");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%d", i ? ", " : "", i);
  g_string_append(s, "]}}]}");
  return g_string_free(s, FALSE);
}

/* Loading, running and describing the scenario (its effective scenario and
 * summary), then reading the summary back as `plot` does and the decision
 * log as `replay` does. */
static gint64 read_scenario(int n)
{
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *json = big_scenario(n);
  char *log = g_build_filename(dir, "d.jsonl", NULL);
  steps = 0;
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.decisions = log;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(cs_results_n_gpus(r), n);
  char *summary = cs_results_to_json(r);
  char *spath = g_build_filename(dir, "summary.json", NULL);
  assert_true(g_file_set_contents(spath, summary, -1, NULL));
  RunSummary rs = { .dir = dir };
  GError *err = NULL;
  if (!cs_run_summary_read(&rs, &err))
    fail_msg("summary: %s", err->message);
  assert_int_equal(rs.n_gpus, n);
  assert_int_equal((int)rs.models[0].replicas->len, n);
  cs_run_summary_clear(&rs);
  DecisionLog *d = cs_decision_log_read(log, &err);
  if (!d)
    fail_msg("decision log: %s", err->message);
  assert_int_equal(d->n_gpus, n);
  assert_int_equal((int)d->requests->len, n);
  cs_decision_log_free(d);
  gint64 counted = steps;
  g_unlink(spath);
  g_unlink(log);
  g_free(spath);
  g_free(summary);
  g_free(log);
  g_free(json);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
  return counted;
}

static void test_scenario_lists(void **state)
{
  (void)state;
  assert_linear(read_scenario, "nodes, manual replicas, times_ms; summary; decision log");
}

/* A trace's rate profile of n points. */
static gint64 read_rate_profile(int n)
{
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3,4\n"
    "o1,a1,f1,http,6,6,6,6\n", -1, NULL));
  GString *s = g_string_new("{\"seed\": 2, \"profiles\": [\"synthetic.json\"],"
                            " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                            " \"trace\": {\"file\": \"counts.csv\", \"arrivals\": \"poisson\","
                            " \"rate_scale\": [");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s{\"at_s\": %g, \"scale\": 1}", i ? ", " : "", i * 240.0 / n);
  g_string_append(s, "]}, \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}");
  steps = 0;
  CsScenario *sc = test_scenario(dir, s->str);
  CsResults *r = test_run(sc, NULL);
  char *summary = cs_results_to_json(r);
  gint64 counted = steps;
  g_free(summary);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_string_free(s, TRUE);
  g_free(path);
  test_dir_remove(dir);
  return counted;
}

static void test_trace_rate_profile(void **state)
{
  (void)state;
  assert_linear(read_rate_profile, "trace.rate_scale points");
}

/* Experiments: an axis of n values with n labels, and n seeds. */
static gint64 read_experiment(int n)
{
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *base = g_build_filename(dir, "base.json", NULL);
  assert_true(g_file_set_contents(base,
    "{\"seed\": 1, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1}, \"placement\": {\"policy\": \"dedicated\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 10}]}", -1, NULL));
  GString *values = g_string_new(NULL), *labels = g_string_new(NULL), *seeds = g_string_new(NULL);
  for (int i = 0; i < n; i++) {
    g_string_append_printf(values, "%s%d", i ? ", " : "", i + 1);
    g_string_append_printf(labels, "%s\"r%d\"", i ? ", " : "", i + 1);
    g_string_append_printf(seeds, "%s%d", i ? ", " : "", i + 1);
  }
  char *axis = g_strdup_printf("{\"name\": \"x\", \"base\": \"base.json\","
                               " \"axes\": [{\"name\": \"rate\", \"path\": \"clients[0].rate\","
                               " \"values\": [%s], \"labels\": [%s]}], \"seeds\": [1]}",
                               values->str, labels->str);
  char *seeded = g_strdup_printf("{\"name\": \"y\", \"base\": \"base.json\", \"seeds\": [%s]}",
                                 seeds->str);
  char *p1 = g_build_filename(dir, "axis.json", NULL), *p2 = g_build_filename(dir, "seeds.json", NULL);
  assert_true(g_file_set_contents(p1, axis, -1, NULL));
  assert_true(g_file_set_contents(p2, seeded, -1, NULL));
  GError *err = NULL;
  steps = 0;
  CsExperiment *e1 = cs_experiment_load(p1, &err);
  if (!e1)
    fail_msg("experiment: %s", err->message);
  CsExperiment *e2 = cs_experiment_load(p2, &err);
  if (!e2)
    fail_msg("experiment: %s", err->message);
  gint64 counted = steps;
  assert_int_equal(cs_experiment_axis_n_levels(e1, 0), n);
  assert_int_equal(cs_experiment_n_runs(e2), n);
  cs_experiment_free(e1);
  cs_experiment_free(e2);
  g_free(p1);
  g_free(p2);
  g_free(axis);
  g_free(seeded);
  g_string_free(values, TRUE);
  g_string_free(labels, TRUE);
  g_string_free(seeds, TRUE);
  g_free(base);
  test_dir_remove(dir);
  return counted;
}

static void test_experiment_lists(void **state)
{
  (void)state;
  assert_linear(read_experiment, "experiment axis values and labels, seeds");
}

/* An experiment's edit over every element ("[*]", scenario.h): a base of n
 * clients, a variant setting clients[*].rate and unsetting
 * clients[*].warmup_s, applied when the run's scenario is built. Each
 * client must end with the new rate and no warm-up. */
static gint64 edit_every_client(int n)
{
  char *dir = test_dir_with_profile(0.1, 1.0);
  GString *base = g_string_new("{\"seed\": 1, \"profiles\": [\"synthetic.json\"],"
                               " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                               " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 1},"
                               " \"placement\": {\"policy\": \"dedicated\"}, \"clients\": [");
  for (int i = 0; i < n; i++)
    g_string_append_printf(base, "%s{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100,"
                                 " \"warmup_s\": 1, \"requests\": 10}", i ? ", " : "");
  g_string_append(base, "]}");
  char *pbase = g_build_filename(dir, "base.json", NULL);
  char *pexp = g_build_filename(dir, "each.json", NULL);
  assert_true(g_file_set_contents(pbase, base->str, -1, NULL));
  assert_true(g_file_set_contents(pexp,
    "{\"name\": \"each\", \"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"name\": \"v\","
    " \"set\": {\"clients[*].rate\": 7}, \"unset\": [\"clients[*].warmup_s\"]}]}", -1, NULL));
  GError *err = NULL;
  CsExperiment *e = cs_experiment_load(pexp, &err);
  if (!e)
    fail_msg("experiment: %s", err->message);
  steps = 0;
  CsScenario *sc = cs_experiment_run_scenario(e, 0, &err);
  if (!sc)
    fail_msg("run scenario: %s", err->message);
  gint64 counted = steps;
  char *json = cs_scenario_to_json(sc);
  cJSON *root = cJSON_Parse(json);
  int seen = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "clients")) {
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(c, "rate")) == 7);
    assert_null(cJSON_GetObjectItem(c, "warmup_s"));
    seen++;
  }
  assert_int_equal(seen, n);
  cJSON_Delete(root);
  g_free(json);
  cs_scenario_free(sc);
  cs_experiment_free(e);
  g_free(pbase);
  g_free(pexp);
  g_string_free(base, TRUE);
  test_dir_remove(dir);
  return counted;
}

static void test_experiment_edit_each(void **state)
{
  (void)state;
  assert_linear(edit_every_client, "an experiment's [*] edit over clients");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scenario_lists),
    cmocka_unit_test(test_trace_rate_profile),
    cmocka_unit_test(test_experiment_lists),
    cmocka_unit_test(test_experiment_edit_each),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
