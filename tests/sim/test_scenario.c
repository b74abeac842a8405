/* Scenario validation: a table of bad inputs, each with the message it must
 * produce (file, JSON path, expectation), and --set paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_util.h"

#define BASE_CLUSTER "\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"}"
#define CLIENT_A "{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10}"

typedef struct {
  const char *json;
  const char *message; /* expected substring of the error */
} BadCase;

static const BadCase bad_cases[] = {
  { "{\"seed\": 1,", "test.json: line 1, column 12: not valid JSON" },
  { "[1, 2]", "test.json: expected an object, got an array" },
  { "{" BASE_CLUSTER ", \"clinets\": []}", "unknown field \"clinets\" (did you mean \"clients\"?)" },
  { "{" BASE_CLUSTER ", \"bogus\": 1, \"clients\": [" CLIENT_A "]}", "unknown field \"bogus\" (known fields: name, seed," },
  { "{" BASE_CLUSTER "}", "test.json: clients: required field is missing" },
  { "{" BASE_CLUSTER ", \"clients\": []}", "test.json: clients: expected a non-empty array of clients, got an array" },
  { "{\"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"}, \"clients\": [" CLIENT_A "]}", "test.json: profiles: required field is missing" },
  { "{\"profiles\": [\"nope.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"}, \"clients\": [" CLIENT_A "]}", "test.json: profiles[0]: file \"nope.json\" not found" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"h100\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.gpu_type: \"h100\" is not defined by any loaded profile" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 0, \"gpu_type\": \"gpu\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.gpus: expected an integer in [1, 1048576], got 0" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1.5, \"gpu_type\": \"gpu\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.gpus: expected an integer, got a fractional number" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"nodes\": [{\"gpus\": 1, \"gpu_typ\": \"gpu\"}]}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.nodes[0]: unknown field \"gpu_typ\" (did you mean \"gpu_type\"?)" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": -3, \"slo_ms\": 50, \"requests\": 10}]}", "test.json: clients[0].rate: expected a number > 0, got -3" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": \"fast\", \"slo_ms\": 50, \"requests\": 10}]}", "test.json: clients[0].rate: expected a number, got a string" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"requests\": 10}]}", "test.json: clients[0].slo_ms: required field is missing" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rat\": 100, \"slo_ms\": 50, \"requests\": 10}]}", "test.json: clients[0]: unknown field \"rat\" (did you mean \"rate\"?)" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"zz\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10}]}", "test.json: clients[0]: model \"zz\" has no profile on any GPU type of the cluster" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50}]}", "test.json: clients[0]: needs \"requests\" or \"duration_s\"" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"duration_s\": 1}]}", "test.json: clients[0]: give \"requests\" or \"duration_s\", not both" },
  { "{" BASE_CLUSTER ", \"clients\": [" CLIENT_A ", " CLIENT_A "]}", "test.json: clients[1]: model \"a\" already has a client (clients[0])" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"arrival\": \"bursty\"}]}", "test.json: clients[0].arrival: expected \"poisson\", \"gamma\", \"constant\", \"times\" or \"trace\", got \"bursty\"" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 2, 1]}}]}", "test.json: clients[0].arrival.times_ms[2]: times must not decrease (1 ms after 2 ms)" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 5, \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}}]}", "test.json: clients[0]: a \"times\" arrival sets the requests and rate itself: remove \"rate\"" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\"}}]}", "test.json: clients[0].arrival: a \"times\" process needs \"times_ms\"" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"requests\": 5}]}", "test.json: clients[0].rate: required field is missing" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"fifo\"}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch.policy: unknown policy \"fifo\" (known: router, symphony, eager, timeout, shepherd, clockwork, nexus)" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"p2c\"}, \"clients\": [" CLIENT_A "]}", "nexus)\n  (a policy of your own: build it as a plug-in and load it with --plugin FILE.so" },
  { "{" BASE_CLUSTER ", \"placement\": {\"policy\": \"rr\"}, \"clients\": [" CLIENT_A "]}", "search)\n  (a policy of your own: build it as a plug-in" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"symphony\"}, \"placement\": {\"policy\": \"dedicated\"}, \"clients\": [" CLIENT_A "]}", "test.json: placement: dispatch \"symphony\" runs every model on every GPU and uses no placement" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"timeout\"}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch.timeout_ms: required field is missing" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"symphony\", \"timeout_ms\": 3}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch: \"timeout_ms\" applies to dispatch \"timeout\" only" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"symphony\", \"gpu_choice\": \"random\"}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch.gpu_choice: expected \"lowest_id\" or \"earliest_free\", got \"random\"" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"symphony\", \"d_ctrl\": 3}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch: unknown field \"d_ctrl\" (did you mean \"d_ctrl_us\"?)" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"arrival\": {\"process\": \"gamma\"}}]}", "test.json: clients[0].arrival: a gamma process needs exactly one of \"shape\" and \"cv\"" },
  { "{" BASE_CLUSTER ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"arrival\": {\"process\": \"poisson\", \"cv\": 2}}]}", "test.json: clients[0].arrival: \"shape\" and \"cv\" apply to \"gamma\" only" },
  { "{" BASE_CLUSTER ", \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": -1}, \"clients\": [" CLIENT_A "]}", "test.json: dispatch.max_wait_ms: expected a number >= 0, got -1" },
  { "{" BASE_CLUSTER ", \"network\": {\"constant_ms\": 1, \"curve\": \"x\"}, \"clients\": [" CLIENT_A "]}", "test.json: network: expected exactly one of \"constant_ms\" and \"curve\"" },
  { "{" BASE_CLUSTER ", \"placement\": {\"policy\": \"best\"}, \"clients\": [" CLIENT_A "]}", "test.json: placement.policy: unknown policy \"best\" (known: manual, dedicated" },
  { "{" BASE_CLUSTER ", \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 5, \"batch\": 4}]}, \"clients\": [" CLIENT_A "]}", "test.json: placement.replicas[0]: gpu 5 does not exist (the cluster has 2 GPUs)" },
  { "{" BASE_CLUSTER ", \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"q\", \"gpu\": 0, \"batch\": 4}]}, \"clients\": [" CLIENT_A "]}", "test.json: placement.replicas[0]: model \"q\" has no client in the scenario" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"memory_overflow\": \"crash\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.memory_overflow: expected \"error\" or \"fail_replicas\", got \"crash\"" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"interference\": \"none.json\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.interference: file \"none.json\" not found" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 0.6, \"memory_fraction\": 0.5}, {\"sm_fraction\": 0.6, \"memory_fraction\": 0.5}]}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.mig: instances take 1.2 of the SMs and 1 of the memory; each must be at most 1" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 0.5}]}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.mig[0].memory_fraction: required field is missing" },
  { "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\", \"mps\": \"yes\"}, \"clients\": [" CLIENT_A "]}", "test.json: cluster.mps: expected true or false, got a string" },
  { "{" BASE_CLUSTER ", \"placement\": {\"policy\": \"dedicated\", \"max_bach\": 4}, \"clients\": [" CLIENT_A "]}", "test.json: placement: unknown field \"max_bach\" (did you mean \"max_batch\"?)" },
  { "{" BASE_CLUSTER ", \"seed\": -1, \"clients\": [" CLIENT_A "]}", "test.json: seed: expected an integer >= 0, got -1" },
  { "{" BASE_CLUSTER ", \"outputs\": {\"requests_csv\": 1}, \"clients\": [" CLIENT_A "]}", "test.json: outputs.requests_csv: expected true or false, got a number" },
};

static void test_bad_inputs(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
    GError *err = NULL;
    CsScenario *sc = cs_scenario_new_from_json(bad_cases[i].json, "test.json", dir, &err);
    if (sc) {
      gboolean ok = cs_scenario_validate(sc, &err);
      assert_false(ok);
      cs_scenario_free(sc);
    }
    assert_non_null(err);
    if (!strstr(err->message, bad_cases[i].message))
      fail_msg("case %zu:\n  got      %s\n  expected %s", i, err->message, bad_cases[i].message);
    assert_true(err->domain == CS_ERROR);
    g_error_free(err);
  }
  test_dir_remove(dir);
}

static void test_valid_minimal(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  CsScenario *sc = test_scenario(dir, "{" BASE_CLUSTER ", \"clients\": [" CLIENT_A "]}");
  GError *err = NULL;
  assert_true(cs_scenario_validate(sc, &err));
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

/* Building a scenario in code with the same paths as --set. */
static void test_set_paths(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 4.0);
  CsScenario *sc = cs_scenario_new("code", dir);
  GError *err = NULL;
  const char *sets[][2] = {
    { "profiles[0]", "synthetic.json" },
    { "cluster.gpus", "1" },
    { "cluster.gpu_type", "gpu" },
    { "clients[0].model", "a" },
    { "clients[0].rate", "100" },
    { "clients[0].slo_ms", "50" },
    { "clients[0].requests", "10" },
    { "clients[0].arrival", "constant" },
    { "clients[0].rate", "200" }, /* replaces */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++)
    if (!cs_scenario_set(sc, sets[i][0], sets[i][1], &err))
      fail_msg("set %s: %s", sets[i][0], err->message);
  CsResults *r = test_run(sc, NULL);
  assert_float_equal(cs_results_model(r, 0)->submitted_rps, 200.0, 1e-9);
  cs_results_free(r);

  const char *bad[][2] = {
    { "clients[5].rate", "1" },
    { "clients[x].rate", "1" },
    { "", "1" },
    { "clients.rate", "1" },
  };
  const char *msgs[] = { "index past the end", "expected [index]", "empty path", "not an object" };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    assert_false(cs_scenario_set(sc, bad[i][0], bad[i][1], &err));
    if (!strstr(err->message, msgs[i]))
      fail_msg("set %s: got %s", bad[i][0], err->message);
    g_clear_error(&err);
  }
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_valid_minimal),
    cmocka_unit_test(test_set_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
