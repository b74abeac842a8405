/* Tests of the calibration driver (src/calibrate/calibrate.c) on bad inputs:
 * every way a calibration file can be wrong is refused with the file, the
 * JSON path and what was expected, and nothing is printed. The good path on
 * the shipped data is tested in test_gpu_exec.c (test_calibration). Files are
 * written to a temporary directory; the interference and profile data are
 * the shipped ones (found through CS_SOURCE_ROOT). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/interference.h"
#include "profiles/profile.h"
#include "calibrate/calibrate.h"
#include "profiles/mig_table.h"

#define HEAD "{\"format\": \"clustersim-calibration\", \"version\": 1, \"source\": \"s\""
/* A valid pair row: alexnet batch 2 at 20 % next to resnet50 batch 2. */
#define ROW "[\"alexnet\", \"resnet50\", 2, 2, 20, 2.76, 3.57]"
#define WORKER "{\"model\": \"alexnet\", \"batch\": 4, \"share_pct\": 10, \"rate_rps\": 500}"

typedef struct {
  const char *json;
  const char *message; /* the whole message after "<path>: " */
} BadCalib;

static const BadCalib bad_calibs[] = {
  { "[]", "expected an object, got an array" },
  { "{\"format\": \"clustersim-profile\"}",
    "format: expected \"clustersim-calibration\", got \"clustersim-profile\"" },
  { "{\"format\": \"clustersim-calibration\"}", "version: required field is missing" },
  { "{\"format\": \"clustersim-calibration\", \"version\": 2}",
    "version: unsupported version 2 (this build reads version 1)" },
  { HEAD ", \"pair\": {}}", "unknown field \"pair\" (did you mean \"pairs\"?)" },
  { "{\"format\": \"clustersim-calibration\", \"version\": 1}",
    "source: required field is missing" },
  { HEAD ", \"pairs\": {\"rows\": 3}}",
    "pairs.rows: expected an array of rows [model1, model2, batch1, batch2, mps_pct1, "
    "latency1_ms, latency2_ms, ...]" },
  { HEAD ", \"pairs\": {}}",
    "pairs.rows: expected an array of rows [model1, model2, batch1, batch2, mps_pct1, "
    "latency1_ms, latency2_ms, ...]" },
  /* Each field of a row wrong in turn. */
  { HEAD ", \"pairs\": {\"rows\": [" ROW ", \"x\"]}}",
    "pairs.rows[1]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  { HEAD ", \"pairs\": {\"rows\": [[1, \"resnet50\", 2, 2, 20, 2.76, 3.57]]}}",
    "pairs.rows[0]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  { HEAD ", \"pairs\": {\"rows\": [[\"alexnet\", \"resnet50\", 0, 2, 20, 2.76, 3.57]]}}",
    "pairs.rows[0]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  { HEAD ", \"pairs\": {\"rows\": [[\"alexnet\", \"resnet50\", 2, 2, 100, 2.76, 3.57]]}}",
    "pairs.rows[0]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  { HEAD ", \"pairs\": {\"rows\": [[\"alexnet\", \"resnet50\", 2, 2, 20, 0, 3.57]]}}",
    "pairs.rows[0]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  { HEAD ", \"pairs\": {\"rows\": [[\"alexnet\", \"resnet50\", 2, 2, 20, 2.76]]}}",
    "pairs.rows[0]: expected [model1, model2, batch1 >= 1, batch2 >= 1, 0 < mps_pct1 < 100, "
    "latency1_ms > 0, latency2_ms > 0, ...]" },
  /* Colocations. */
  { HEAD ", \"colocations\": {}}", "colocations: expected an array" },
  { HEAD ", \"colocations\": [1]}", "colocations[0]: expected an object, got a number" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"worker\": []}]}",
    "colocations[0]: unknown field \"worker\" (did you mean \"workers\"?)" },
  { HEAD ", \"colocations\": [{\"profile\": \"interference\", \"workers\": [" WORKER "]}]}",
    "colocations[0].name: required field is missing" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"workers\": [" WORKER "]}]}",
    "colocations[0].profile: required field is missing" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"mps\": 1, "
    "\"workers\": [" WORKER "]}]}",
    "colocations[0].mps: expected true or false, got a number" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"approx\": "
    "\"no\", \"workers\": [" WORKER "]}]}",
    "colocations[0].approx: expected true or false, got a string" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"note\": 5, "
    "\"workers\": [" WORKER "]}]}",
    "colocations[0].note: expected a non-empty string, got a number" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": []}]}",
    "colocations[0].workers: expected an array of 1 to 16 workers" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\"}]}",
    "colocations[0].workers: expected an array of 1 to 16 workers" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[7]}]}",
    "colocations[0].workers[0]: expected an object, got a number" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"model\": \"alexnet\", \"batch\": 4, \"rate\": 5}]}]}",
    "colocations[0].workers[0]: unknown field \"rate\" (did you mean \"rate_rps\"?)" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"batch\": 4, \"rate_rps\": 5}]}]}",
    "colocations[0].workers[0].model: required field is missing" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"model\": \"alexnet\", \"batch\": 0, \"rate_rps\": 5}]}]}",
    "colocations[0].workers[0].batch: expected an integer in [1, 1048576], got 0" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"model\": \"alexnet\", \"batch\": 4, \"share_pct\": 120, \"rate_rps\": 5}]}]}",
    "colocations[0].workers[0].share_pct: expected a number in [0, 100], got 120" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"model\": \"alexnet\", \"batch\": 4}]}]}",
    "colocations[0].workers[0].rate_rps: required field is missing" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[{\"model\": \"alexnet\", \"batch\": 4, \"rate_rps\": 5, \"measured_ms\": -1}]}]}",
    "colocations[0].workers[0].measured_ms: expected a number > 0, got -1" },
  /* Models the data do not have. */
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"interference\", \"workers\": "
    "[" WORKER ", {\"model\": \"bert\", \"batch\": 4, \"rate_rps\": 5}]}]}",
    "colocations[0].workers[1]: model \"bert\" has no latency-vs-share table in the "
    "interference file" },
  { HEAD ", \"colocations\": [{\"name\": \"c\", \"profile\": \"v100_igniter\", \"workers\": "
    "[{\"model\": \"bert\", \"batch\": 4, \"rate_rps\": 5}]}]}",
    "colocations[0].workers[0]: no profile of \"bert\" on GPU type \"v100_igniter\"" },
};

static char *tmp_dir;

static char *data_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  return g_build_filename(root ? root : ".", "data", "profiles", rel, NULL);
}

static void test_bad_calibration_files(void **state)
{
  (void)state;
  char *inter = data_path("igniter_v100.json"), *prof = data_path("igniter_v100_profile.json");
  char *path = g_build_filename(tmp_dir, "calib.json", NULL);
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_calibs); i++) {
    assert_true(g_file_set_contents(path, bad_calibs[i].json, -1, NULL));
    CsGpuCalibrateOptions opt = { .interference_path = inter, .calibration_path = path,
                                  .profile_path = prof };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    GError *error = NULL;
    gboolean ok = cs_gpu_calibrate_run(&opt, out, &error);
    fclose(out);
    char *want = g_strdup_printf("%s: %s", path, bad_calibs[i].message);
    if (ok || !error || strcmp(error->message, want) != 0 || len != 0) {
      print_error("case %zu: %s\n  got      \"%s\"\n  expected \"%s\"\n  printed %zu bytes\n", i,
                  bad_calibs[i].json, error ? error->message : "success", want, len);
      failures++;
    }
    g_clear_error(&error);
    g_free(want);
    free(text);
  }
  assert_int_equal(failures, 0);
  g_remove(path);
  g_free(path);
  g_free(inter);
  g_free(prof);
}

/* Files that cannot be read: the interference, calibration and profile
 * paths are each reported as I/O errors naming the file (the profile loader
 * keeps its own error domain). */
static void test_missing_inputs(void **state)
{
  (void)state;
  char *inter = data_path("igniter_v100.json"), *calib = data_path("gpu_calibration.json");
  const char *absent = "/nonexistent/clustersim-test.json";
  CsGpuCalibrateOptions opts[] = {
    { .interference_path = absent, .calibration_path = calib },
    { .interference_path = inter, .calibration_path = absent },
    { .interference_path = inter, .calibration_path = calib, .profile_path = absent },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
    GError *error = NULL;
    assert_null(cs_gpu_calibrate(&opts[i], &error));
    if (i < 2)
      assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
    else
      assert_true(g_error_matches(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_IO));
    assert_true(g_str_has_prefix(error->message, absent));
    g_clear_error(&error);
  }
  cs_gpu_calibration_free(NULL);
  g_free(inter);
  g_free(calib);
}

/* A colocation on a GPU profile is skipped when no profile file is given
 * (it cannot be simulated), not an error; the interference ones still run.
 * Variant names are stable: they head the printed columns. */
static void test_colocation_without_profile(void **state)
{
  (void)state;
  char *inter = data_path("igniter_v100.json");
  char *path = g_build_filename(tmp_dir, "calib_skip.json", NULL);
  assert_true(g_file_set_contents(
    path,
    HEAD ", \"colocations\": [{\"name\": \"on-profile\", \"profile\": \"v100_igniter\", "
    "\"workers\": [{\"model\": \"alexnet\", \"batch\": 4, \"rate_rps\": 100}]},"
    "{\"name\": \"on-tables\", \"profile\": \"interference\", \"workers\": [" WORKER "]}]}",
    -1, NULL));
  CsGpuCalibrateOptions opt = { .interference_path = inter, .calibration_path = path };
  GError *error = NULL;
  CsGpuCalibration *c = cs_gpu_calibrate(&opt, &error);
  assert_non_null(c);
  assert_int_equal(c->n_pairs, 0);
  assert_int_equal(c->n_colocations, 1);
  assert_string_equal(c->colocations[0].name, "on-tables");
  /* Alone, alexnet batch 4 at a 10 % share takes the completed table's
   * latency (under the 8 ms between batches at 500 req/s: no queueing), to
   * the ns the latency is rounded to. */
  assert_true(isnan(c->colocations[0].workers[0].measured_ms));
  CsInterferenceSet *set = cs_interference_set_load_file(inter, &error);
  double table_ms =
    cs_interference_share_latency_ms(set, cs_interference_set_find(set, "alexnet"), 4, 0.1);
  assert_true(table_ms > 0 && table_ms < 8.0);
  assert_true(fabs(c->colocations[0].workers[0].sim_ms - table_ms) <= 1e-6);
  cs_interference_set_free(set);
  cs_gpu_calibration_free(c);
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    assert_string_not_equal(cs_calib_variant_name((CsCalibVariant)v), "?");
  assert_string_equal(cs_calib_variant_name(CS_CALIB_N_VARIANTS), "?");
  assert_string_equal(cs_calib_variant_name((CsCalibVariant)-1), "?");
  g_remove(path);
  g_free(path);
  g_free(inter);
}

/* The share rule per measured source and the MIG rule on the shipped data.
 * The figures pinned are those of an independent computation,
 * tests/gpu/check_share_mig.py (Python standard library; it also checks
 * every printed figure): e fitted on Gpulet's 350 cells 0.2809, on RaPP's
 * 5225 0.1376; kappa on ParvaGPU's 323 single-process cells 0.8614 (SciPy's
 * least_squares on the same log residuals gave 0.8614 too), which is the
 * engine's CS_MIG_RULE_DEFAULT_KAPPA; MIG leaving one model out pooled median
 * 7.1 %, where the rule before (1/f) gives 70.7 %. Bad inputs: a measured
 * file giving one cell twice, a MIG file without MIG tables. */
static void test_sources_and_mig(void **state)
{
  (void)state;
  const char *root = g_getenv("CS_SOURCE_ROOT");
  char *inter = data_path("igniter_v100.json"), *calib = data_path("gpu_calibration.json");
  char *mig = data_path("a100_parvagpu_mig.json");
  char *files[3] = { g_build_filename(root ? root : ".", "data", "measured",
                                      "gpulet_a100_isolated.csv", NULL),
                     g_build_filename(root ? root : ".", "data", "measured",
                                      "rapp_v100_sm_share.csv", NULL), NULL };
  CsGpuCalibrateOptions opt = { .interference_path = inter, .calibration_path = calib,
                                .share_measured_paths = (const char *const *)files,
                                .mig_path = mig };
  GError *error = NULL;
  CsGpuCalibration *c = cs_gpu_calibrate(&opt, &error);
  if (!c)
    print_error("%s\n", error->message);
  assert_non_null(c);
  assert_int_equal(c->n_share_sources, 2);
  assert_int_equal(c->share_source_models[0], 10);
  assert_int_equal(c->share_source_models[1], 69);
  const CsCalibShare *g = c->share_sources[0], *r = c->share_sources[1];
  assert_int_equal(g->stats[CS_SHARE_LOMO][g->n_models].n, 350);
  assert_int_equal(r->stats[CS_SHARE_LOMO][r->n_models].n, 5225);
  assert_true(fabs(g->fit.e - 0.2809) <= 5e-4);
  assert_true(fabs(r->fit.e - 0.1376) <= 5e-4);
  /* the shipped e (fitted on iGniter) carries to both sources far better
   * than the power rule */
  assert_true(g->stats[CS_SHARE_SHIPPED][g->n_models].median <= 0.085);
  assert_true(r->stats[CS_SHARE_SHIPPED][r->n_models].median <= 0.06);
  assert_true(g->stats[CS_SHARE_POWER][g->n_models].median >= 0.4);
  assert_null(c->share); /* no share profile given: the pool is the two files */
  assert_int_equal(c->share_pooled->stats[0][c->share_pooled->n_models].n, 350 + 5225);
  const CsCalibMig *m = c->mig;
  assert_non_null(m);
  assert_int_equal(m->n_models, 11);
  assert_int_equal(m->stats[CS_MIG_LOMO][11].n, 323);
  assert_true(fabs(m->kappa - 0.8614) <= 5e-5);
  assert_true(fabs(m->kappa - CS_MIG_RULE_DEFAULT_KAPPA) <= 5e-5);
  assert_true(fabs(m->stats[CS_MIG_LOMO][11].median - 0.071) <= 5e-4);
  assert_true(fabs(m->stats[CS_MIG_POWER][11].median - 0.707) <= 5e-4);
  assert_int_equal(m->procs_mps.n, 1327);
  cs_gpu_calibration_free(c);

  /* a cell measured twice */
  char *dup = g_build_filename(tmp_dir, "dup.csv", NULL);
  assert_true(g_file_set_contents(dup,
    "source,gpu,model,batch,share_pct,latency_ms,kind\n"
    "s,g,m,1,100,1.0,isolated\ns,g,m,2,100,1.5,isolated\ns,g,m,1,50,1.6,isolated\n"
    "s,g,m,1,50,1.7,isolated\n", -1, NULL));
  char *one[2] = { dup, NULL };
  opt.share_measured_paths = (const char *const *)one;
  assert_null(cs_gpu_calibrate(&opt, &error));
  char *want = g_strdup_printf("%s: line 5: m at batch 1 and share 50 %% is measured twice "
                               "(also line 4); the share rule's check needs one latency per "
                               "cell", dup);
  assert_string_equal(error->message, want);
  g_clear_error(&error);
  g_free(want);
  /* a MIG file without MIG tables */
  opt.share_measured_paths = NULL;
  opt.mig_path = inter;
  assert_null(cs_gpu_calibrate(&opt, &error));
  assert_non_null(strstr(error->message, "igniter_v100.json: no model has a MIG cell"));
  g_clear_error(&error);
  g_remove(dup);
  g_free(dup);
  g_free(files[0]);
  g_free(files[1]);
  g_free(inter);
  g_free(calib);
  g_free(mig);
}

static int setup(void **state)
{
  (void)state;
  tmp_dir = g_dir_make_tmp("cs-test-calib-XXXXXX", NULL);
  return tmp_dir ? 0 : -1;
}

static int teardown(void **state)
{
  (void)state;
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return 0;
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_calibration_files),
    cmocka_unit_test(test_missing_inputs),
    cmocka_unit_test(test_colocation_without_profile),
    cmocka_unit_test(test_sources_and_mig),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
