/* Plug-ins through the public header (clustersim/plugin.h), from a program
 * of one's own: what the CLI tests cannot see from outside. A refused load
 * leaves the registry as it was (the policy the plug-in added before failing
 * is gone); a file loads once; a scenario's "plugins" loads into a registry
 * of its own; compiling a scenario whose plug-in is not loaded is an error
 * naming the field.
 * Usage: test_plugins FIRST_FIT.so BAD_INIT_FAILS.so PROFILE.json */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "clustersim/clustersim.h"

static const char *ff_path, *bad_path, *profile;

static void test_refused_load_leaves_the_registry(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  int n = cs_registry_n_placement(r);
  GError *err = NULL;
  assert_false(cs_registry_load_plugin(r, bad_path, &err));
  assert_non_null(strstr(err->message, "cs_plugin_init failed: no licence for this cluster"));
  assert_non_null(strstr(err->message, bad_path));
  g_clear_error(&err);
  /* It had added "half-added" before failing. */
  assert_int_equal(cs_registry_n_placement(r), n);
  assert_null(cs_registry_placement(r, "half-added", NULL));
  assert_int_equal(cs_registry_n_plugins(r), 0);
  /* Refused again, the same way: nothing of the first try was kept. */
  assert_false(cs_registry_load_plugin(r, bad_path, &err));
  assert_non_null(strstr(err->message, "no licence"));
  g_clear_error(&err);
  cs_registry_unref(r);
}

static void test_loads_once_and_records(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  GError *err = NULL;
  assert_true(cs_registry_load_plugin(r, ff_path, &err));
  assert_true(cs_registry_load_plugin(r, ff_path, &err));
  assert_int_equal(cs_registry_n_plugins(r), 1);
  assert_non_null(cs_registry_placement(r, "first-fit-creq", NULL));
  assert_true(g_path_is_absolute(cs_registry_plugin_path(r, 0)));
  /* The SHA-256 of the file, computed here independently. */
  gchar *text = NULL;
  gsize len = 0;
  assert_true(g_file_get_contents(ff_path, &text, &len, NULL));
  char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
  assert_string_equal(cs_registry_plugin_sha256(r, 0), sha);
  assert_null(cs_registry_plugin_path(r, 1));
  g_free(sha);
  g_free(text);
  /* Another registry does not see it: no global registry. */
  CsRegistry *other = cs_registry_new();
  assert_null(cs_registry_placement(other, "first-fit-creq", NULL));
  assert_int_equal(cs_registry_n_plugins(other), 0);
  cs_registry_unref(other);
  cs_registry_unref(r);
}

static char *scenario_text(const char *plugins)
{
  return g_strdup_printf(
    "{\"plugins\": %s, \"profiles\": [\"%s\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": "
    "\"v100\"}, \"placement\": {\"policy\": \"first-fit-creq\"}, \"clients\": [{\"model\": "
    "\"resnet50\", \"rate\": 100, \"slo_ms\": 200, \"duration_s\": 2}]}",
    plugins, profile);
}

static void test_scenario_field(void **state)
{
  (void)state;
  char *dir = g_path_get_dirname(ff_path), *base = g_path_get_basename(ff_path);
  char *list = g_strdup_printf("[\"%s\"]", base);
  char *text = scenario_text(list);
  GError *err = NULL;
  /* Not loaded: compiling says so, naming the field. */
  CsScenario *sc = cs_scenario_new_from_json(text, "s.json", dir, &err);
  assert_non_null(sc);
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "s.json: plugins[0]: plug-in \""));
  assert_non_null(strstr(err->message, "is not loaded"));
  g_clear_error(&err);
  /* Loaded (relative to the scenario's directory) into a registry of its own. */
  assert_true(cs_scenario_load_plugins(sc, &err));
  CsResults *res = cs_run(sc, NULL, &err);
  assert_non_null(res);
  assert_non_null(strstr(cs_results_effective_scenario(res), "\"sha256\""));
  cs_results_free(res);
  cs_scenario_free(sc);
  g_free(text);
  g_free(list);
  /* A malformed field. */
  text = scenario_text("[3]");
  sc = cs_scenario_new_from_json(text, "s.json", dir, &err);
  assert_false(cs_scenario_load_plugins(sc, &err));
  assert_non_null(strstr(err->message, "s.json: plugins[0]: expected a plug-in path"));
  g_clear_error(&err);
  cs_scenario_free(sc);
  g_free(text);
  g_free(dir);
  g_free(base);
}

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: test_plugins FIRST_FIT.so BAD_INIT_FAILS.so PROFILE.json\n");
    return 2;
  }
  ff_path = argv[1];
  bad_path = argv[2];
  profile = argv[3];
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_refused_load_leaves_the_registry),
    cmocka_unit_test(test_loads_once_and_records),
    cmocka_unit_test(test_scenario_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
