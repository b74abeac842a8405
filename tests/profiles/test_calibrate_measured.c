/* Tests of the scoring of measured rows (src/calibrate/calibrate_measured.c)
 * on a case computed by hand: two models with share tables, one measured
 * pair scale, the batch_share fallback for the other direction. Closed loop
 * under MPS with shares 50 / 50 (no SM contention), a victim takes
 *   table(b, s_v) * (1 + k c b_a^x (4 s_a s_v)^z)
 * with k the pair's scale (1 without one), and the baselines follow from
 * the rows' numbers (docs/gpu-model.md, "Scoring measured rows"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calibrate/calibrate_measured.h"

#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (eps %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

static const char *const PROFILE =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"t\","
  " \"gpu_types\": [{\"name\": \"g\"}], \"models\": ["
  " {\"gpu\": \"g\", \"model\": \"a\", \"batches\": [{\"batch\": 2, \"latency_ms\": 2.5},"
  "  {\"batch\": 4, \"latency_ms\": 4.5}]},"
  " {\"gpu\": \"g\", \"model\": \"b\", \"batches\": [{\"batch\": 2, \"latency_ms\": 2.0},"
  "  {\"batch\": 4, \"latency_ms\": 3.0}]}]}";

/* c = 0.1, x = 0.5, z = 1; scale 2 on (a | b) only. */
static const char *const TABLES =
  "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"t\","
  " \"models\": [{\"model\": \"a\", \"share_latency\": [[2, 50, 4.0], [2, 100, 2.5]]},"
  "  {\"model\": \"b\", \"share_latency\": [[4, 50, 6.0], [4, 100, 3.0]]}],"
  " \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"scale\": 2}],"
  " \"fallback\": {\"form\": \"batch_share\", \"c\": 0.1, \"batch_exponent\": 0.5,"
  "  \"share_exponent\": 1}}";

#define HDR "source,gpu,model,batch,share_pct,partners,latency_ms,isolated_latency_ms,kind\n"

static char *tmpdir;

static CsMeasuredFile *load_csv(const char *name, const char *text)
{
  char *path = g_build_filename(tmpdir, name, NULL);
  assert_true(g_file_set_contents(path, text, -1, NULL));
  GError *e = NULL;
  CsMeasuredFile *f = cs_measured_file_load(path, &e);
  if (!f)
    print_error("%s\n", e->message);
  assert_non_null(f);
  g_remove(path);
  g_free(path);
  return f;
}

typedef struct {
  CsProfileSet *prof;
  CsInterferenceSet *tables;
  CsMeasuredFile *rows, *shipped;
} Fixture;

static int setup(void **state)
{
  tmpdir = g_dir_make_tmp("test_calibrate_measured_XXXXXX", NULL);
  Fixture *fx = g_new0(Fixture, 1);
  GError *e = NULL;
  fx->prof = cs_profile_set_new();
  assert_true(cs_profile_set_load_data(fx->prof, PROFILE, "p.json", &e));
  fx->tables = cs_interference_set_load_data(TABLES, "i.json", &e);
  assert_non_null(fx->tables);
  fx->rows = load_csv("rows.csv", HDR
                      "s,G,a,2,50,b:b=4:s=50,5.6,4.0,colocated\n"
                      "s,G,b,4,50,a:b=2:s=50,7.0,6.0,colocated\n"
                      "s,G,a,4,100,,4.5,,isolated\n"
                      "s,G,c,4,50,a:b=2:s=50,7.0,6.0,colocated\n");
  fx->shipped = load_csv("shipped.csv", HDR
                         "s,G,x,1,50,y:b=1:s=50,1.2,1.0,colocated\n"
                         "s,G,y,1,50,x:b=1:s=50,3.0,2.0,colocated\n"
                         "other,G,x,1,50,y:b=1:s=50,9.0,1.0,colocated\n");
  *state = fx;
  return 0;
}

static int teardown(void **state)
{
  Fixture *fx = *state;
  cs_profile_set_free(fx->prof);
  cs_interference_set_free(fx->tables);
  cs_measured_file_free(fx->rows);
  cs_measured_file_free(fx->shipped);
  g_free(fx);
  g_rmdir(tmpdir);
  g_free(tmpdir);
  return 0;
}

static CsScoreResult *score(Fixture *fx)
{
  CsScoreOptions opt = { .files = &fx->rows, .n_files = 1, .profile = fx->prof, .gpu_type = "g",
                         .tables = fx->tables, .shipped = &fx->shipped, .n_shipped = 1 };
  GError *e = NULL;
  CsScoreResult *r = cs_score_measured(&opt, &e);
  if (!r)
    print_error("%s\n", e->message);
  assert_non_null(r);
  return r;
}

static void test_hand_computed(void **state)
{
  Fixture *fx = *state;
  CsScoreResult *r = score(fx);
  assert_int_equal(r->n_rows, 2);
  /* the isolated row and the model missing from the profile */
  assert_int_equal(r->n_skipped, 2);
  assert_int_equal(r->skipped->len, 2);
  assert_string_equal(r->skipped->pdata[0], "1 row: isolated rows (nothing co-located to predict)");
  assert_string_equal(r->skipped->pdata[1], "1 row: victim model c not in the profile");
  const double eps = 1e-5; /* ns rounding of the simulation */
  /* a next to b: 4.0 * (1 + 2 * 0.1 * sqrt(4) * (4 * 0.5 * 0.5)) = 5.6 */
  assert_close(r->sim_ms[CS_SCORE_MODEL][0], 5.6, eps);
  /* b next to a, no scale: 6.0 * (1 + 0.1 * sqrt(2)) */
  assert_close(r->sim_ms[CS_SCORE_MODEL][1], 6.0 * (1 + 0.1 * sqrt(2.0)), eps);
  /* none: the share tables' latency, here equal to isolated_latency_ms */
  assert_close(r->sim_ms[CS_SCORE_NONE][0], 4.0, eps);
  assert_close(r->sim_ms[CS_SCORE_NONE][1], 6.0, eps);
  /* constant on source s of the shipped rows: exp(mean(log 1.2, log 1.5)) */
  assert_close(r->sources[0].constant, sqrt(1.2 * 1.5), 1e-12);
  assert_int_equal(r->sources[0].constant_rows, 2);
  assert_true(r->sources[0].constant_own);
  assert_close(r->sim_ms[CS_SCORE_CONSTANT][1], 6.0 * sqrt(1.8), eps);
  /* one row per pair: the pair's factor (and the log-linear one) is exact */
  assert_close(r->sim_ms[CS_SCORE_PAIR_FACTOR][0], 5.6, eps);
  assert_close(r->sim_ms[CS_SCORE_PAIR_LOGLINEAR][1], 7.0, eps);

  double e_model_b = fabs(6.0 * (1 + 0.1 * sqrt(2.0)) - 7.0) / 7.0;
  assert_int_equal(r->total.stat[CS_SCORE_MODEL].n, 2);
  assert_close(r->total.stat[CS_SCORE_MODEL].median, e_model_b / 2, 1e-6);
  assert_close(r->total.stat[CS_SCORE_MODEL].max, e_model_b, 1e-6);
  /* none: |iso - real| / real, median of 1.6 / 5.6 and 1 / 7 */
  assert_close(r->total.stat[CS_SCORE_NONE].median, (1.6 / 5.6 + 1.0 / 7.0) / 2, 1e-6);
  assert_int_equal(r->n_pairs, 2);
  assert_string_equal(r->pairs[0].name, "s\ta|b");
  assert_true(r->pairs[0].measured);
  assert_string_equal(r->pairs[1].name, "s\tb|a");
  assert_false(r->pairs[1].measured);
  assert_int_equal(r->n_sources, 1);
  assert_string_equal(r->sources[0].name, "s");

  cJSON *j = cs_score_json(r);
  const cJSON *total = cJSON_GetObjectItemCaseSensitive(j, "total");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(total, "rows")->valueint, 2);
  assert_close(cJSON_GetObjectItemCaseSensitive(total, "median_pct")->valuedouble,
               100 * e_model_b / 2, 1e-4);
  assert_non_null(cJSON_GetObjectItemCaseSensitive(total, "p90_pct"));
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(j, "baselines");
  for (int m = CS_SCORE_NONE; m < CS_SCORE_N_METHODS; m++)
    assert_non_null(cJSON_GetObjectItemCaseSensitive(base, cs_score_method_name(m)));
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "pairs")), 2);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "sources")), 1);
  const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "not_scored");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(ns, "rows")->valueint, 2);
  cJSON_Delete(j);
  cs_score_result_free(r);
}

/* Without interference data: the built-in fallback, the profile's latency
 * under the share rule; "none" alone is checked: iso / share would be the
 * power rule's, the scalable rule is never faster than the profile. */
static void test_no_tables_no_rows(void **state)
{
  Fixture *fx = *state;
  CsMeasuredFile *iso = load_csv("iso.csv", HDR "s,G,a,4,100,,4.5,,isolated\n");
  CsScoreOptions opt = { .files = &iso, .n_files = 1, .profile = fx->prof, .gpu_type = "g" };
  GError *e = NULL;
  assert_null(cs_score_measured(&opt, &e));
  assert_string_equal(e->message, "no co-located row to score (1 row: isolated rows (nothing "
                                  "co-located to predict))");
  g_error_free(e);
  cs_measured_file_free(iso);

  opt.files = &fx->rows;
  CsScoreResult *r = cs_score_measured(&opt, &e);
  assert_non_null(r);
  assert_true(isnan(r->sources[0].constant));
  assert_int_equal(r->sources[0].constant_rows, 0);
  assert_true(r->sim_ms[CS_SCORE_NONE][0] >= 2.5 - 1e-6);
  assert_true(r->sim_ms[CS_SCORE_MODEL][0] > r->sim_ms[CS_SCORE_NONE][0]);
  assert_false(r->pairs[0].measured);
  cs_score_result_free(r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hand_computed),
    cmocka_unit_test(test_no_tables_no_rows),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
