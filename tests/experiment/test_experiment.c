/* Experiment files: the grid they expand to, the scenario each run gets, and
 * the messages of bad ones.
 *
 * Expectations are written out by hand from the experiment text: the run
 * order (variants, then axes with the first slowest, seeds innermost), the
 * scenario a run must see after "unset" then "set" at each level, and the
 * file and JSON path a message must name. */
#include <glib/gstdio.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "test_util.h"

static char *dir;

static const char *const base_json =
  "{\"seed\": 3, \"profiles\": [\"synthetic.json\"],"
  " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
  " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 4},"
  "                                                     {\"model\": \"b\", \"gpu\": 1, \"batch\": 4}]},"
  " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 60, \"requests\": 200},"
  "              {\"model\": \"b\", \"rate\": 150, \"slo_ms\": 80, \"requests\": 200}]}";

static int setup(void **state)
{
  (void)state;
  dir = test_dir_with_profile(1.0, 4.0);
  char *p = g_build_filename(dir, "base.json", NULL);
  assert_true(g_file_set_contents(p, base_json, -1, NULL));
  g_free(p);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  test_dir_remove(dir);
  return 0;
}

/* Writes an experiment file in the test directory; returns its path. */
static char *write_experiment(const char *name, const char *json)
{
  char *p = g_build_filename(dir, name, NULL);
  assert_true(g_file_set_contents(p, json, -1, NULL));
  return p;
}

static CsExperiment *load(const char *json)
{
  char *p = write_experiment("exp.json", json);
  GError *err = NULL;
  CsExperiment *e = cs_experiment_load(p, &err);
  if (!e)
    fail_msg("load: %s", err->message);
  g_free(p);
  return e;
}

/* The message of loading json, which must fail. */
static char *load_error(const char *json)
{
  char *p = write_experiment("bad.json", json);
  GError *err = NULL;
  CsExperiment *e = cs_experiment_load(p, &err);
  assert_null(e);
  assert_non_null(err);
  char *msg = g_strdup(err->message);
  g_error_free(err);
  g_free(p);
  return msg;
}

static void assert_contains(const char *text, const char *part)
{
  if (!strstr(text, part))
    fail_msg("\"%s\" does not contain \"%s\"", text, part);
}

/* The scenario of run as a JSON tree (cJSON_Delete it). */
static cJSON *run_doc(const CsExperiment *e, int run)
{
  GError *err = NULL;
  CsScenario *sc = cs_experiment_run_scenario(e, run, &err);
  if (!sc)
    fail_msg("run %d: %s", run, err->message);
  char *text = cs_scenario_to_json(sc);
  cJSON *doc = cJSON_Parse(text);
  g_free(text);
  cs_scenario_free(sc);
  return doc;
}

static double num_at(const cJSON *doc, const char *a, int i, const char *b)
{
  const cJSON *arr = cJSON_GetObjectItem(doc, a);
  return cJSON_GetObjectItem(cJSON_GetArrayItem(arr, i), b)->valuedouble;
}

static void test_grid_order_and_count(void **state)
{
  (void)state;
  CsExperiment *e = load(
    "{\"name\": \"grid\", \"base\": \"base.json\","
    " \"variants\": [{\"name\": \"x\"}, {\"name\": \"y\", \"set\": {\"dispatch.max_wait_ms\": 5}}],"
    " \"axes\": [{\"name\": \"gpus\", \"path\": \"cluster.gpus\", \"values\": [2, 3, 4]},"
    "          {\"name\": \"load\", \"levels\": [{\"label\": \"low\", \"set\": {\"clients[0].rate\": 50}},"
    "                                        {\"label\": \"high\", \"set\": {\"clients[0].rate\": 400}}]}],"
    " \"seeds\": {\"first\": 7, \"count\": 2}}");
  /* 2 variants x 3 x 2 points x 2 seeds. */
  assert_int_equal(cs_experiment_n_runs(e), 24);
  assert_string_equal(cs_experiment_name(e), "grid");
  static const struct {
    int run;
    const char *variant, *gpus, *load;
    int64_t seed;
  } expect[] = {
    { 0, "x", "2", "low", 7 },   { 1, "x", "2", "low", 8 },   { 2, "x", "2", "high", 7 },
    { 3, "x", "2", "high", 8 },  { 4, "x", "3", "low", 7 },   { 11, "x", "4", "high", 8 },
    { 12, "y", "2", "low", 7 },  { 17, "y", "3", "low", 8 },  { 23, "y", "4", "high", 8 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(expect); i++) {
    assert_string_equal(cs_experiment_run_variant(e, expect[i].run), expect[i].variant);
    assert_string_equal(cs_experiment_run_label(e, expect[i].run, 0), expect[i].gpus);
    assert_string_equal(cs_experiment_run_label(e, expect[i].run, 1), expect[i].load);
    assert_int_equal(cs_experiment_run_seed(e, expect[i].run), expect[i].seed);
  }
  char *d = cs_experiment_run_describe(e, 17);
  assert_string_equal(d, "variant y, gpus 3, load low, seed 8");
  g_free(d);
  /* Run 17: variant y, 3 GPUs, low load. */
  cJSON *doc = run_doc(e, 17);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "cluster"), "gpus")->valueint, 3);
  assert_true(num_at(doc, "clients", 0, "rate") == 50.0);
  assert_true(num_at(doc, "clients", 1, "rate") == 150.0);
  assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "dispatch"), "max_wait_ms")->valuedouble ==
              5.0);
  /* The seed is not edited: it goes to cs_run as seed_override. */
  assert_int_equal(cJSON_GetObjectItem(doc, "seed")->valueint, 3);
  cJSON_Delete(doc);
  cs_experiment_free(e);
}

static void test_defaults_one_variant_no_axis(void **state)
{
  (void)state;
  CsExperiment *e = load("{\"base\": \"base.json\", \"seeds\": [5, 1, 9]}");
  assert_int_equal(cs_experiment_n_runs(e), 3);
  assert_int_equal(cs_experiment_n_axes(e), 0);
  assert_string_equal(cs_experiment_run_variant(e, 2), "base");
  assert_string_equal(cs_experiment_name(e), "exp.json");
  assert_int_equal(cs_experiment_run_seed(e, 0), 5);
  assert_int_equal(cs_experiment_run_seed(e, 2), 9);
  cs_experiment_free(e);
}

static void test_star_expands_over_the_array(void **state)
{
  (void)state;
  CsExperiment *e = load(
    "{\"base\": \"base.json\", \"set\": {\"clients[*].rate\": 42, \"clients[*].warmup_s\": 0.5},"
    " \"seeds\": {\"first\": 1, \"count\": 1}}");
  cJSON *doc = run_doc(e, 0);
  for (int i = 0; i < 2; i++) {
    assert_true(num_at(doc, "clients", i, "rate") == 42.0);
    assert_true(num_at(doc, "clients", i, "warmup_s") == 0.5);
  }
  cJSON_Delete(doc);
  cs_experiment_free(e);
  /* An unset over [*] removes the field from every element; a whole [*]
   * unset empties the array. */
  e = load("{\"base\": \"base.json\", \"variants\": ["
           " {\"name\": \"no-slo\", \"unset\": [\"clients[*].slo_ms\"]},"
           " {\"name\": \"none\", \"unset\": [\"clients[*]\"]}],"
           " \"seeds\": {\"first\": 1, \"count\": 1}}");
  doc = run_doc(e, 0);
  const cJSON *clients = cJSON_GetObjectItem(doc, "clients");
  assert_int_equal(cJSON_GetArraySize(clients), 2);
  for (int i = 0; i < 2; i++) {
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(clients, i), "slo_ms"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(clients, i), "rate"));
  }
  cJSON_Delete(doc);
  doc = run_doc(e, 1);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "clients")), 0);
  cJSON_Delete(doc);
  cs_experiment_free(e);
}

static void test_objects_replace_and_unset_comes_first(void **state)
{
  (void)state;
  CsExperiment *e = load(
    "{\"base\": \"base.json\", \"variants\": ["
    " {\"name\": \"dedicated\", \"set\": {\"placement\": {\"policy\": \"dedicated\"}}},"
    " {\"name\": \"default\", \"unset\": [\"placement\"]},"
    " {\"name\": \"fresh\", \"set\": {\"placement.policy\": \"dedicated\"}, \"unset\": [\"placement\"]}],"
    " \"seeds\": {\"first\": 1, \"count\": 1}}");
  /* A whole object replaces the field: no replica of the manual placement is left. */
  cJSON *doc = run_doc(e, 0);
  char *pl = cJSON_PrintUnformatted(cJSON_GetObjectItem(doc, "placement"));
  assert_string_equal(pl, "{\"policy\":\"dedicated\"}");
  cJSON_free(pl);
  cJSON_Delete(doc);
  doc = run_doc(e, 1);
  assert_null(cJSON_GetObjectItem(doc, "placement"));
  cJSON_Delete(doc);
  /* Unset before set within one variant, whatever the order in the file. */
  doc = run_doc(e, 2);
  pl = cJSON_PrintUnformatted(cJSON_GetObjectItem(doc, "placement"));
  assert_string_equal(pl, "{\"policy\":\"dedicated\"}");
  cJSON_free(pl);
  cJSON_Delete(doc);
  cs_experiment_free(e);
}

static void test_value_labels(void **state)
{
  (void)state;
  CsExperiment *e = load(
    "{\"base\": \"base.json\", \"axes\": ["
    " {\"name\": \"wait\", \"path\": \"dispatch.max_wait_ms\", \"values\": [0.5, 10]},"
    " {\"name\": \"pl\", \"path\": \"placement\", \"values\": [{\"policy\": \"dedicated\"}, \"x\"]},"
    " {\"name\": \"named\", \"path\": \"cluster.gpus\", \"values\": [2, 3], \"labels\": [\"two\", \"three\"]}],"
    " \"seeds\": {\"first\": 1, \"count\": 1}}");
  assert_string_equal(cs_experiment_axis_label(e, 0, 0), "0.5");
  assert_string_equal(cs_experiment_axis_label(e, 1, 0), "{\"policy\":\"dedicated\"}");
  assert_string_equal(cs_experiment_axis_label(e, 1, 1), "x");
  assert_string_equal(cs_experiment_axis_label(e, 2, 1), "three");
  cs_experiment_free(e);
}

/* Bad experiments: the message names the experiment file, the JSON path and
 * what was expected. */
static void test_bad_experiments(void **state)
{
  (void)state;
  static const struct {
    const char *json;
    const char *parts[3];
  } cases[] = {
    { "{\"base\": \"base.json\"}", { "bad.json", "\"seeds\" is required" } },
    { "{\"seeds\": [1]}", { "bad.json", "base" } },
    { "{\"base\": \"missing.json\", \"seeds\": [1]}",
      { "bad.json: base: cannot read the base scenario", "missing.json" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"varaints\": []}",
      { "bad.json", "unknown field \"varaints\" (did you mean \"variants\"?)" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"set\": {}}]}",
      { "bad.json: variants[0]", "name" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
      { "bad.json: variants[1].name: variant \"a\" appears twice" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"name\": \"a\", \"set\": [1]}]}",
      { "bad.json: variants[0].set: expected an object" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"set\": {\"seed\": 4}}",
      { "bad.json: set.seed: the seed is chosen by \"seeds\"" } },
    { "{\"base\": \"base.json\", \"seeds\": [1, 1]}", { "bad.json: seeds[1]: seed 1 appears twice" } },
    { "{\"base\": \"base.json\", \"seeds\": {\"first\": 1, \"count\": 0}}",
      { "bad.json: seeds", "count" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"axes\": [{\"name\": \"g\", \"path\": \"cluster.gpus\","
      " \"values\": [1], \"levels\": []}]}",
      { "bad.json: axes[0]: expected either \"path\" and \"values\" or \"levels\"" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"axes\": [{\"name\": \"g\", \"path\": \"cluster.gpus\","
      " \"values\": [1, 1]}]}",
      { "bad.json: axes[0].values: label \"1\" appears twice" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"axes\": [{\"name\": \"seed\", \"path\": \"cluster.gpus\","
      " \"values\": [1]}]}",
      { "bad.json: axes[0].name: \"seed\" is a column of runs.csv already" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"axes\": [{\"name\": \"bad_rate\", \"path\": \"cluster.gpus\","
      " \"values\": [1]}]}",
      { "bad.json: axes[0].name: \"bad_rate\" is a column of runs.csv already" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"axes\": [{\"name\": \"g\", \"levels\": [{\"label\": \"a\","
      " \"sett\": {}}]}]}",
      { "bad.json: axes[0].levels[0]: unknown field \"sett\"" } },
    /* Edits that cannot apply: named by where they are, and for which run. */
    { "{\"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"name\": \"v\", \"set\": "
      "{\"clients[5].rate\": 3}}]}",
      { "bad.json: variants[0].set.clients[5].rate: index past the end of the array",
        "applied to base.json" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"variants\": [{\"name\": \"v\"}, {\"name\": \"w\", \"unset\": "
      "[\"placement.replica\"]}], \"axes\": [{\"name\": \"g\", \"path\": \"cluster.gpus\", \"values\": [1, 2]}]}",
      { "bad.json: variants[1].unset[0]:", "has no field \"replica\" (did you mean \"replicas\"?)",
        "for variant w, g 1" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"set\": {\"cluster[*].gpus\": 3}}",
      { "bad.json: set.cluster[*].gpus: cluster is an object in the scenario, not an array" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"set\": {\"nothere[*].x\": 1}}",
      { "bad.json: set.nothere[*].x: nothere is absent in the scenario, not an array to expand [*] over" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"set\": {\"clients[*].x[*]\": 1}}",
      { "bad.json: set.clients[*].x[*]: clients[0].x is absent in the scenario, not an array" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"set\": {\"extra\": [], \"extra[*].a\": 1}}",
      { "bad.json: set.extra[*].a: extra is an empty array: [*] stands for no element" } },
    { "{\"base\": \"base.json\", \"seeds\": [1], \"unset\": [\"clients[*].warmup_s\"]}",
      { "bad.json: unset[0]: at clients[1].warmup_s:", "has no field \"warmup_s\"" } },
    { "{\"base\": \"base.json\", \"seeds\": [1]", { "bad.json: line 1", "not valid JSON" } },
  };
  /* Several independent problems: one error listing each (issue 35), a
   * section's own list indented under it. */
  static const char *const several[][2] = {
    { "{\"variants\": [{\"set\": {}}, {\"name\": \"a\", \"set\": [1]}, {\"name\": \"b\", \"x\": 1}],"
      " \"axes\": [{\"name\": \"seed\", \"path\": \"cluster.gpus\", \"values\": [1]},"
      " {\"name\": \"g\", \"path\": \"cluster.gpus\", \"values\": []}]}",
      "bad.json: 4 problems in the experiment:\n"
      "  base: required field is missing\n"
      "  3 problems in variants:\n"
      "    variants[0].name: required field is missing\n"
      "    variants[1].set: expected an object of scenario path: value, got an array\n"
      "    variants[2]: unknown field \"x\" (known fields: name, set, unset, description)\n"
      "  2 problems in axes:\n"
      "    axes[0].name: \"seed\" is a column of runs.csv already; choose another name\n"
      "    axes[1].values: expected a non-empty array of values, got an array\n"
      "  \"seeds\" is required: {\"first\": 1, \"count\": 5} or a list [1, 2, 3]" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(several); i++) {
    char *msg = load_error(several[i][0]);
    /* The whole message after the experiment file's directory. */
    assert_contains(msg, several[i][1]);
    assert_string_equal(msg + strlen(msg) - strlen(several[i][1]), several[i][1]);
    g_free(msg);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *msg = load_error(cases[i].json);
    for (int k = 0; k < 3 && cases[i].parts[k]; k++)
      assert_contains(msg, cases[i].parts[k]);
    g_free(msg);
  }
}

/* Collects every request's send time by request id. */
static void collect_send(const CsRequestRecord *rec, void *data)
{
  GArray *a = data;
  if (a->len <= rec->id)
    g_array_set_size(a, (guint)rec->id + 1);
  g_array_index(a, int64_t, rec->id) = rec->send_ns * 4 + rec->client; /* time and client */
}

static GArray *send_times(const CsExperiment *e, int run)
{
  GError *err = NULL;
  CsScenario *sc = cs_experiment_run_scenario(e, run, &err);
  if (!sc)
    fail_msg("run %d: %s", run, err->message);
  GArray *a = g_array_new(FALSE, TRUE, sizeof(int64_t));
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = cs_experiment_run_seed(e, run);
  opt.on_request = collect_send;
  opt.user_data = a;
  CsResults *res = test_run(sc, &opt);
  cs_results_free(res);
  cs_scenario_free(sc);
  return a;
}

static gboolean same_times(const GArray *a, const GArray *b)
{
  return a->len == b->len && memcmp(a->data, b->data, a->len * sizeof(int64_t)) == 0;
}

/* Common random numbers: every variant and GPU count sees the same arrivals
 * for one seed (each client's stream is keyed by seed and model; placement
 * draws nothing), and another seed gives other arrivals. */
static void test_common_random_numbers(void **state)
{
  (void)state;
  CsExperiment *e = load(
    "{\"base\": \"base.json\", \"set\": {\"clients[*].warmup_s\": 0.2},"
    " \"variants\": [{\"name\": \"manual\"},"
    "               {\"name\": \"dedicated\", \"set\": {\"placement\": {\"policy\": \"dedicated\"}}},"
    "               {\"name\": \"wait0\", \"set\": {\"dispatch.max_wait_ms\": 0, \"placement\": {\"policy\": \"dedicated\"}}}],"
    " \"axes\": [{\"name\": \"gpus\", \"path\": \"cluster.gpus\", \"values\": [2, 3]}],"
    " \"seeds\": {\"first\": 11, \"count\": 2}}");
  assert_int_equal(cs_experiment_n_runs(e), 12);
  GArray *ref = send_times(e, 0); /* manual, 2 GPUs, seed 11 */
  assert_true(ref->len > 400);    /* 2 x 200 measured and the warm-up */
  for (int run = 2; run < 12; run += 2) {
    assert_int_equal(cs_experiment_run_seed(e, run), 11);
    GArray *other = send_times(e, run);
    if (!same_times(ref, other))
      fail_msg("run %d (seed 11) sends at other times than run 0", run);
    g_array_unref(other);
  }
  GArray *seed12 = send_times(e, 1);
  assert_false(same_times(ref, seed12));
  g_array_unref(seed12);
  g_array_unref(ref);
  cs_experiment_free(e);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_order_and_count),
    cmocka_unit_test(test_defaults_one_variant_no_axis),
    cmocka_unit_test(test_star_expands_over_the_array),
    cmocka_unit_test(test_objects_replace_and_unset_comes_first),
    cmocka_unit_test(test_value_labels),
    cmocka_unit_test(test_bad_experiments),
    cmocka_unit_test(test_common_random_numbers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
