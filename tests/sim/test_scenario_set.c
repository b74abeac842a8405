/* Scenarios from code: the typed setters and cs_scenario_unset.
 *
 * Expectations come from the same scenario written as JSON text: a scenario
 * built with setters, or edited with unset, must simulate exactly like the
 * document a user would have written by hand (same events, same per-model
 * counts and latencies), and the messages name the path and the closest
 * field. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

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

/* Same simulation: events and every measured count and latency agree exactly. */
static void assert_same_run(const CsResults *x, const CsResults *y)
{
  assert_int_equal(cs_results_events(x), cs_results_events(y));
  assert_int_equal(cs_results_n_models(x), cs_results_n_models(y));
  for (int i = 0; i < cs_results_n_models(x); i++) {
    const CsModelResult *a = cs_results_model(x, i), *b = cs_results_model(y, i);
    assert_string_equal(a->model, b->model);
    assert_int_equal(a->measured, b->measured);
    assert_int_equal(a->completed, b->completed);
    assert_int_equal(a->good, b->good);
    assert_int_equal(a->dropped, b->dropped);
    assert_true(a->latency.p99 == b->latency.p99);
    assert_true(a->mean_batch == b->mean_batch);
  }
}

static const char *const written =
  "{\"seed\": 7, \"profiles\": [\"synthetic.json\"],"
  " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
  " \"placement\": {\"policy\": \"dedicated\"},"
  " \"clients\": [{\"model\": \"a\", \"rate\": 300, \"slo_ms\": 60, \"arrival\": \"poisson\","
  "               \"duration_s\": 2, \"warmup_s\": 0.5},"
  "              {\"model\": \"b\", \"rate\": 150.5, \"slo_ms\": 80, \"arrival\": \"constant\","
  "               \"requests\": 200}]}";

static void test_typed_setters_build_the_written_scenario(void **state)
{
  (void)state;
  CsScenario *built = cs_scenario_new("built", dir);
  GError *err = NULL;
  assert_true(cs_scenario_set_int(built, "seed", 7, &err));
  assert_true(cs_scenario_set_string(built, "profiles[0]", "synthetic.json", &err));
  assert_true(cs_scenario_set_int(built, "cluster.gpus", 2, &err));
  assert_true(cs_scenario_set_string(built, "cluster.gpu_type", "gpu", &err));
  assert_true(cs_scenario_set_string(built, "dispatch.policy", "router", &err));
  assert_true(cs_scenario_set_double(built, "dispatch.max_wait_ms", 20.0, &err));
  assert_true(cs_scenario_set_string(built, "placement.policy", "dedicated", &err));
  assert_true(cs_scenario_set_string(built, "clients[0].model", "a", &err));
  assert_true(cs_scenario_set_int(built, "clients[0].rate", 300, &err));
  assert_true(cs_scenario_set_int(built, "clients[0].slo_ms", 60, &err));
  assert_true(cs_scenario_set_string(built, "clients[0].arrival", "poisson", &err));
  assert_true(cs_scenario_set_int(built, "clients[0].duration_s", 2, &err));
  assert_true(cs_scenario_set_double(built, "clients[0].warmup_s", 0.5, &err));
  assert_true(cs_scenario_set_string(built, "clients[1].model", "b", &err));
  assert_true(cs_scenario_set_double(built, "clients[1].rate", 150.5, &err));
  assert_true(cs_scenario_set_int(built, "clients[1].slo_ms", 80, &err));
  assert_true(cs_scenario_set_string(built, "clients[1].arrival", "constant", &err));
  assert_true(cs_scenario_set_int(built, "clients[1].requests", 200, &err));
  assert_null(err);
  CsScenario *text = test_scenario(dir, written);
  CsResults *a = test_run(built, NULL), *b = test_run(text, NULL);
  assert_same_run(a, b);
  /* Constant arrivals: exactly the 200 requests asked for. */
  assert_int_equal(cs_results_model(a, 1)->measured, 200);
  cs_results_free(a);
  cs_results_free(b);
  cs_scenario_free(built);
  cs_scenario_free(text);
}

static void test_typed_setters_keep_types(void **state)
{
  (void)state;
  CsScenario *sc = test_scenario(dir, written);
  GError *err = NULL;
  /* A string stays a string, even when it reads as a number. */
  assert_true(cs_scenario_set_string(sc, "clients[0].rate", "200", &err));
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "clients[0].rate: expected a number, got a string"));
  g_clear_error(&err);
  assert_true(cs_scenario_set_bool(sc, "clients[0].rate", TRUE, &err));
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "clients[0].rate: expected a number, got a boolean"));
  g_clear_error(&err);
  /* JSON has no NaN, and doubles hold integers exactly only up to 2^53. */
  assert_false(cs_scenario_set_double(sc, "clients[0].rate", NAN, &err));
  assert_non_null(strstr(err->message, "clients[0].rate: not a finite number"));
  g_clear_error(&err);
  assert_false(cs_scenario_set_int(sc, "seed", INT64_C(1) << 53, &err));
  assert_non_null(strstr(err->message, "seed: an integer of magnitude 2^53 or more"));
  g_clear_error(&err);
  assert_true(cs_scenario_set_int(sc, "seed", (INT64_C(1) << 53) - 1, &err));
  assert_false(cs_scenario_set_string(sc, "clients[5].model", "a", &err));
  assert_non_null(strstr(err->message, "index past the end of the array"));
  g_clear_error(&err);
  /* Each setter is an override of the effective scenario, value as JSON. */
  assert_true(cs_scenario_set_double(sc, "clients[0].rate", 250.25, &err));
  char *eff = cs_scenario_effective_json(sc, NULL, &err);
  assert_non_null(eff);
  assert_non_null(strstr(eff, "\"clients[0].rate=\\\"200\\\"\""));
  assert_non_null(strstr(eff, "\"clients[0].rate=true\""));
  assert_non_null(strstr(eff, "\"clients[0].rate=250.25\""));
  g_free(eff);
  cs_scenario_free(sc);
}

static void test_unset_switches_to_centralized_dispatch(void **state)
{
  (void)state;
  /* The placement-based scenario, switched to Symphony in two edits ... */
  CsScenario *edited = test_scenario(dir, written);
  GError *err = NULL;
  assert_true(cs_scenario_unset(edited, "placement", &err));
  assert_true(cs_scenario_unset(edited, "dispatch.max_wait_ms", &err));
  assert_true(cs_scenario_set_string(edited, "dispatch.policy", "symphony", &err));
  assert_null(err);
  /* ... runs exactly as the same document written without them. */
  CsScenario *text = test_scenario(dir,
    "{\"seed\": 7, \"profiles\": [\"synthetic.json\"],"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 300, \"slo_ms\": 60, \"arrival\": \"poisson\","
    "               \"duration_s\": 2, \"warmup_s\": 0.5},"
    "              {\"model\": \"b\", \"rate\": 150.5, \"slo_ms\": 80, \"arrival\": \"constant\","
    "               \"requests\": 200}]}");
  CsResults *a = test_run(edited, NULL), *b = test_run(text, NULL);
  assert_same_run(a, b);
  char *eff = cs_scenario_effective_json(edited, NULL, &err);
  assert_non_null(strstr(eff, "\"unset placement\""));
  assert_non_null(strstr(eff, "\"unset dispatch.max_wait_ms\""));
  assert_null(strstr(eff, "\"placement\":"));
  g_free(eff);
  cs_results_free(a);
  cs_results_free(b);
  cs_scenario_free(edited);
  cs_scenario_free(text);
}

static void test_unset_array_element(void **state)
{
  (void)state;
  CsScenario *sc = test_scenario(dir, written);
  GError *err = NULL;
  assert_true(cs_scenario_unset(sc, "clients[0]", &err));
  CsResults *r = test_run(sc, NULL);
  /* Client b moved up to index 0. */
  assert_int_equal(cs_results_n_models(r), 1);
  assert_string_equal(cs_results_model(r, 0)->model, "b");
  assert_int_equal(cs_results_model(r, 0)->measured, 200);
  cs_results_free(r);
  cs_scenario_free(sc);
}

static void test_unset_errors(void **state)
{
  (void)state;
  static const struct {
    const char *path, *message;
  } cases[] = {
    { "placment", "--unset placment: the scenario has no field \"placment\" (did you mean "
                  "\"placement\"?)" },
    { "dispatch.max_wait", "--unset dispatch.max_wait: dispatch has no field \"max_wait\" (did "
                           "you mean \"max_wait_ms\"?)" },
    { "clients[2]", "--unset clients[2]: clients has no element [2]" },
    { "clients[0].rate.x", "--unset clients[0].rate.x: clients[0].rate has no field \"x\"" },
    { "seed[0]", "--unset seed[0]: seed has no element [0]" },
    { "", "--unset : empty path" },
    { "dispatch.", "--unset dispatch.: empty field name" },
    { "clients[x]", "--unset clients[x]: expected [index] with a non-negative integer" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CsScenario *sc = test_scenario(dir, written);
    char *before = cs_scenario_to_json(sc);
    GError *err = NULL;
    assert_false(cs_scenario_unset(sc, cases[i].path, &err));
    if (strcmp(err->message, cases[i].message) != 0)
      fail_msg("unset \"%s\":\n  got      %s\n  expected %s", cases[i].path, err->message,
               cases[i].message);
    /* A failed unset changes nothing. */
    char *after = cs_scenario_to_json(sc);
    assert_string_equal(before, after);
    g_free(before);
    g_free(after);
    g_error_free(err);
    cs_scenario_free(sc);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_typed_setters_build_the_written_scenario),
    cmocka_unit_test(test_typed_setters_keep_types),
    cmocka_unit_test(test_unset_switches_to_centralized_dispatch),
    cmocka_unit_test(test_unset_array_element),
    cmocka_unit_test(test_unset_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
