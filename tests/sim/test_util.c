#include "test_util.h"

#include <glib/gstdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

char *test_dir_with_profile(double alpha_ms, double beta_ms)
{
  char *dir = g_dir_make_tmp("cs-test-XXXXXX", NULL);
  assert_non_null(dir);
  char *json = g_strdup_printf(
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic, for tests\",\n"
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80,"
    " \"memory_bytes\": 17179869184}],\n"
    " \"models\": [\n"
    "  {\"gpu\": \"gpu\", \"model\": \"a\", \"input_bytes\": 1000, \"output_bytes\": 10,"
    "   \"linear\": {\"alpha_ms\": %.17g, \"beta_ms\": %.17g}},\n"
    "  {\"gpu\": \"gpu\", \"model\": \"b\", \"input_bytes\": 1000, \"output_bytes\": 10,"
    "   \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 4}},\n"
    "  {\"gpu\": \"gpu\", \"model\": \"c\", \"input_bytes\": 1000, \"output_bytes\": 10,"
    "   \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 4}}]}\n",
    alpha_ms, beta_ms);
  char *path = g_build_filename(dir, "synthetic.json", NULL);
  assert_true(g_file_set_contents(path, json, -1, NULL));
  g_free(path);
  g_free(json);
  return dir;
}

void test_dir_remove(char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    char *p = g_build_filename(dir, name, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
  g_free(dir);
}

CsScenario *test_scenario(const char *dir, const char *json)
{
  GError *err = NULL;
  CsScenario *sc = cs_scenario_new_from_json(json, "test.json", dir, &err);
  if (!sc)
    fail_msg("scenario: %s", err->message);
  return sc;
}

CsResults *test_run(CsScenario *sc, const CsRunOptions *opt)
{
  GError *err = NULL;
  CsResults *r = cs_run(sc, opt, &err);
  if (!r)
    fail_msg("run: %s", err->message);
  return r;
}

CsResults *test_run_series(CsScenario *sc)
{
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.timeseries = TRUE;
  return test_run(sc, &opt);
}
