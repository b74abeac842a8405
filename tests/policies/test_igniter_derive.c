/* iGniter's measurements derived from the simulator's GPU model
 * (igniter_derive.h): the numbers against closed forms computed here from
 * the profile file itself and from the GPU model's documented rules
 * (docs/gpu-model.md: alone under share r < demand d a batch takes
 * iso x (d / r)^gamma; two batches slow each other by the pair factor, else
 * 1 + the fallback's constant), determinism, bad options, and the igniter
 * placement on the thesis' V100 table without a coefficients file
 * (thesis 6.2.1, 6.2.2, 6.3). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/json_input.h"
#include "policies/placement/igniter_derive.h"
#include "policies/placement/placement.h"

static char *data_path(const char *name)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  return g_build_filename(root ? root : ".", "data", "profiles", name, NULL);
}

typedef struct {
  CsProfileSet *profiles; /* v100_thesis.json */
  cJSON *table;           /* the same file as JSON: the expectations' source */
} Fixture;

static int setup(void **state)
{
  Fixture *f = g_new0(Fixture, 1);
  char *path = data_path("v100_thesis.json");
  GError *err = NULL;
  f->profiles = cs_profile_set_new();
  gboolean ok = cs_profile_set_load_file(f->profiles, path, &err);
  f->table = ok ? cs_json_load_file(path, &err) : NULL;
  g_free(path);
  if (!f->table) {
    print_error("%s\n", err->message);
    g_error_free(err);
    return -1;
  }
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  Fixture *f = *state;
  cs_profile_set_free(f->profiles);
  cJSON_Delete(f->table);
  g_free(f);
  return 0;
}

static cJSON *derive(const CsIgniterDeriveOptions *opt)
{
  GError *err = NULL;
  cJSON *doc = cs_igniter_derive_document(opt, &err);
  if (!doc)
    fail_msg("derive: %s", err->message);
  return doc;
}

static const cJSON *doc_model(const cJSON *doc, const char *name)
{
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "models"))
  {
    if (strcmp(cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring, name) == 0)
      return m;
  }
  fail_msg("model %s not in the derived document", name);
  return NULL;
}

/* Index of x in the document's grid array key ("batches" or "shares_pct"). */
static int grid_index(const cJSON *doc, const char *key, double x)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(
    cJSON_GetObjectItemCaseSensitive(doc, "grid"), key);
  for (int i = 0; i < cJSON_GetArraySize(a); i++)
    if (cJSON_GetArrayItem(a, i)->valuedouble == x)
      return i;
  return -1;
}

static double cell(const cJSON *model, int bi, int si)
{
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(model, "gpu_latency_ms");
  return cJSON_GetArrayItem(cJSON_GetArrayItem(t, bi), si)->valuedouble;
}

/* The profile file's entry of a model: {"batches": [{"batch", "throughput_rps",
 * "creq_pct": {"wsm"}}, ...]}. */
static const cJSON *table_model(const Fixture *f, const char *name)
{
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(f->table, "models"))
  {
    if (strcmp(cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring, name) == 0)
      return m;
  }
  fail_msg("model %s not in v100_thesis.json", name);
  return NULL;
}

static double num(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  assert_true(cJSON_IsNumber(v));
  return v->valuedouble;
}

/* gpu_exec completes at a whole ns, rounded up, of an isolated time rounded to
 * the ns: a measured ms may exceed the closed form by up to 2 ns. */
#define NS_SLACK 2.5e-6

/* At a 100 % share a batch runs at full speed: every profiled batch of every
 * model measures the table's batch / throughput (the simulator's execution
 * time, docs/profiles.md). */
static void test_full_share_is_profile_latency(void **state)
{
  Fixture *f = *state;
  CsIgniterDeriveOptions opt = { .profiles = f->profiles, .gpu_type = "v100" };
  cJSON *doc = derive(&opt);
  int s100 = grid_index(doc, "shares_pct", 100);
  assert_true(s100 >= 0);
  int checked = 0;
  const cJSON *tm;
  cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(f->table, "models"))
  {
    const char *name = cJSON_GetObjectItemCaseSensitive(tm, "model")->valuestring;
    const cJSON *dm = doc_model(doc, name);
    const cJSON *pt;
    cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(tm, "batches"))
    {
      int bi = grid_index(doc, "batches", num(pt, "batch"));
      if (bi < 0)
        continue;
      double want = num(pt, "batch") / num(pt, "throughput_rps") * 1000.0;
      double got = cell(dm, bi, s100);
      if (!(got >= want - 1e-6 && got <= want + NS_SLACK))
        fail_msg("%s batch %g at 100 %%: got %.9f ms, want %.9f", name, num(pt, "batch"), got,
                 want);
      checked++;
    }
  }
  /* Every profiled batch (4 to 128) is on the default grid of powers of 2:
   * Table A.1's 13 models have 9 x 6 + 3 (bloom_560) + 4 (gpt2) + 5 (t5) +
   * 5 (xlnet) = 71 rows. */
  assert_true(checked >= 60);
  assert_int_equal(checked, 71);
  cJSON_Delete(doc);
}

/* The power share rule: below its demand d (WSM of the batch) a batch alone
 * is slowed to (r / d)^gamma of its speed; at or above d it runs at full
 * speed. */
static void test_share_cap_closed_form(void **state)
{
  Fixture *f = *state;
  const cJSON *tm = table_model(f, "resnet50");
  const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(tm, "batches"), 2);
  assert_int_equal((int)num(pt, "batch"), 16);
  double iso = 16.0 / num(pt, "throughput_rps") * 1000.0;
  double d = num(cJSON_GetObjectItemCaseSensitive(pt, "creq_pct"), "wsm") / 100.0; /* 0.8733 */
  static const char *const models[] = { "resnet50" };
  for (int g = 1; g <= 2; g++) {
    CsIgniterDeriveOptions opt = { .profiles = f->profiles, .gpu_type = "v100",
                                   .models = models, .n_models = 1, .mps_gamma = g,
                                   .mps_share_power = TRUE };
    cJSON *doc = derive(&opt);
    const cJSON *dm = doc_model(doc, "resnet50");
    int bi = grid_index(doc, "batches", 16);
    for (int s = 10; s <= 100; s += 10) {
      double r = s / 100.0;
      double want = r < d ? iso * pow(d / r, g) : iso;
      double got = cell(dm, bi, grid_index(doc, "shares_pct", s));
      /* iso is rounded to the ns (+-0.5 ns) before it is scaled */
      double scale = r < d ? pow(d / r, g) : 1.0;
      if (!(fabs(got - want) <= scale * 0.5e-6 + NS_SLACK))
        fail_msg("gamma %d share %d %%: got %.9f ms, want %.9f", g, s, got, want);
    }
    cJSON_Delete(doc);
  }
}

/* Without an interference file two batches slow each other by the built-in
 * model, 1 + c 16^x (4 x 0.5 x 0.5)^z = 1 + c 16^x for two batches of 16 on
 * half the GPU each; the L2 stand-in is the fallback's default utilisation,
 * and the fitted k_L2 makes iGniter's predictor give the same pair slowdown. */
static void test_pair_builtin_fallback(void **state)
{
  Fixture *f = *state;
  static const char *const models[] = { "alexnet", "vgg19" };
  CsIgniterDeriveOptions opt = { .profiles = f->profiles, .gpu_type = "v100",
                                 .models = models, .n_models = 2 };
  cJSON *doc = derive(&opt);
  const double excess = CS_INTERFERENCE_DEFAULT_C * pow(16.0, CS_INTERFERENCE_DEFAULT_BATCH_EXPONENT);
  for (int k = 0; k < 2; k++) {
    const cJSON *pair = cJSON_GetObjectItemCaseSensitive(doc_model(doc, models[k]), "pair");
    double alone = num(pair, "active_ms_alone"), both = num(pair, "active_ms_pair");
    assert_true(fabs(both / alone - (1.0 + excess)) < 1e-6);
    assert_true(fabs(num(pair, "l2_util_pct") - 100.0 * CS_INTERFERENCE_DEFAULT_UTIL) < 1e-12);
  }
  GError *err = NULL;
  CsIgniterCoefs *c = cs_igniter_coefs_load_json(doc, "derived", &err);
  assert_non_null(c);
  const CsIgniterModel *m = cs_igniter_coefs_find(c, "vgg19");
  assert_true(fabs(m->k_l2 - excess / (100.0 * CS_INTERFERENCE_DEFAULT_UTIL)) < 1e-7);
  /* iGniter's prediction for two copies at batch 16, 50 %: active time x
   * (1 + excess); no scheduling delay, no throttling, no transfers. */
  CsIgniterWorkload w[2] = { { m, 16, 50 }, { m, 16, 50 } };
  CsIgniterPrediction p1, p2[2];
  cs_igniter_predict(c, w, 1, &p1);
  cs_igniter_predict(c, w, 2, p2);
  /* k_L2 comes from simulated latencies in whole ns: within 1e-6 */
  assert_true(fabs(p2[0].latency_ms / p1.latency_ms - (1.0 + excess)) < 1e-6);
  assert_true(fabs(p1.latency_ms - cs_igniter_active_solo_ms(m, 16, 50)) < 1e-12);
  cs_igniter_coefs_free(c);
  cJSON_Delete(doc);
}

/* With iGniter's V100 tables: alone, the batch takes iso x the table's share
 * slowdown; in the pair, x the pair factor of (model, model), here the file's
 * batch_share model at batch 16 and shares 0.5: 1 + c 16^x (4 x 0.25)^z.
 * Each computed from the interference file's own answers. */
static void test_pair_with_tables(void **state)
{
  (void)state;
  char *ppath = data_path("igniter_v100_profile.json"), *ipath = data_path("igniter_v100.json");
  GError *err = NULL;
  CsProfileSet *prof = cs_profile_set_new();
  assert_true(cs_profile_set_load_file(prof, ppath, &err));
  CsInterferenceSet *set = cs_interference_set_load_file(ipath, &err);
  assert_non_null(set);
  static const char *const models[] = { "alexnet", "resnet50", "vgg19", "ssd" };
  CsIgniterDeriveOptions opt = { .profiles = prof, .gpu_type = "v100_igniter", .models = models,
                                 .n_models = 4, .interference = set,
                                 .interference_label = "igniter_v100" };
  cJSON *doc = derive(&opt);
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  for (int k = 0; k < 4; k++) {
    int i = cs_interference_set_find(set, models[k]);
    const CsModelProfile *p = cs_profile_set_lookup(prof, "v100_igniter", models[k]);
    double iso = (double)cs_model_profile_exec_ns(p, 16) / 1e6;
    double alone = iso * cs_interference_share_slowdown(set, i, 16, 0.5);
    assert_true(isnan(cs_interference_pair(set, i, i)) &&
                isnan(cs_interference_pair_scale(set, i, i)) && fb->form == CS_FALLBACK_BATCH_SHARE);
    double s = 1.0 + fb->c * pow(16.0, fb->batch_exponent);
    const cJSON *pair = cJSON_GetObjectItemCaseSensitive(doc_model(doc, models[k]), "pair");
    if (fabs(num(pair, "active_ms_alone") - alone) > NS_SLACK ||
        fabs(num(pair, "active_ms_pair") - alone * s) > NS_SLACK)
      fail_msg("%s: alone %.9f / pair %.9f ms, want %.9f / %.9f", models[k],
               num(pair, "active_ms_alone"), num(pair, "active_ms_pair"), alone, alone * s);
    double l2 = 100.0 * cs_interference_util(set, i, CS_UTIL_L2, 16, 0.5);
    assert_true(fabs(num(pair, "l2_util_pct") - l2) < 1e-9);
  }
  assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(doc, "source")->valuestring,
                         "interference igniter_v100"));
  cJSON_Delete(doc);
  cs_interference_set_free(set);
  cs_profile_set_free(prof);
  g_free(ppath);
  g_free(ipath);
}

/* Same inputs, same bytes; the source says what is measured and absent; no
 * power or frequency effect survives the fit. */
static void test_deterministic_and_honest(void **state)
{
  Fixture *f = *state;
  CsIgniterDeriveOptions opt = { .profiles = f->profiles, .gpu_type = "v100",
                                 .profile_label = "v100_thesis" };
  cJSON *a = derive(&opt), *b = derive(&opt);
  char *ta = cJSON_Print(a), *tb = cJSON_Print(b);
  assert_string_equal(ta, tb);
  const char *src = cJSON_GetObjectItemCaseSensitive(a, "source")->valuestring;
  static const char *const says[] = { "simulator's own GPU execution model",
                                      "not measured on a GPU",
                                      "profiles v100_thesis, GPU type v100, MPS share rule scalable (gamma 1)",
                                      "no L2 cache model",
                                      "no power or throttling model",
                                      "no gaps between kernels",
                                      "2 SMs of the GPU type's 80 = 2.5 %" };
  for (size_t i = 0; i < G_N_ELEMENTS(says); i++)
    if (!strstr(src, says[i]))
      fail_msg("source lacks \"%s\": %s", says[i], src);
  GError *err = NULL;
  CsIgniterCoefs *c = cs_igniter_coefs_load_json(a, "derived", &err);
  assert_non_null(c);
  assert_int_equal(c->n_models, 13);
  assert_true(c->freq_slope == 0 && c->sch_alpha == 0 && c->sch_beta == 0);
  assert_true(c->share_unit_pct == 2.5);
  for (int i = 0; i < c->n_models; i++)
    assert_true(c->models[i].power_k == 0 && c->models[i].power_c == 0);
  cs_igniter_coefs_free(c);
  cJSON_free(ta);
  cJSON_free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
}

static void expect_derive_error(const CsIgniterDeriveOptions *opt, int code, const char *want)
{
  GError *err = NULL;
  cJSON *doc = cs_igniter_derive_document(opt, &err);
  assert_null(doc);
  assert_true(g_error_matches(err, CS_PLACEMENT_ERROR, code));
  if (!strstr(err->message, want))
    fail_msg("error '%s' does not contain '%s'", err->message, want);
  g_error_free(err);
}

static void test_bad_options(void **state)
{
  Fixture *f = *state;
  CsIgniterDeriveOptions opt = { .profiles = f->profiles, .gpu_type = "a100" };
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PROFILE, "GPU type \"a100\" is not in the profiles");
  static const char *const unknown[] = { "alexnet", "resnet5" };
  opt = (CsIgniterDeriveOptions){ .profiles = f->profiles, .gpu_type = "v100", .models = unknown,
                                  .n_models = 2 };
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PROFILE,
                      "no profile of model \"resnet5\" on GPU type \"v100\"");
  static const char *const twice[] = { "alexnet", "alexnet" };
  opt.models = twice;
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PARAMS, "model \"alexnet\" is listed twice");
  opt.n_models = 0;
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PARAMS, "no model");
  opt = (CsIgniterDeriveOptions){ .profiles = f->profiles, .gpu_type = "v100", .mps_gamma = -1 };
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PARAMS, "MPS gamma: expected a number > 0");
  static const int batches[] = { 1, 16, 16 };
  opt = (CsIgniterDeriveOptions){ .profiles = f->profiles, .gpu_type = "v100",
                                  .batches = batches, .n_batches = 3 };
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PARAMS, "grid batches: expected at least 3 "
                                                       "increasing");
  static const double shares[] = { 10, 50, 120 };
  opt = (CsIgniterDeriveOptions){ .profiles = f->profiles, .gpu_type = "v100",
                                  .shares_pct = shares, .n_shares = 3 };
  expect_derive_error(&opt, CS_PLACEMENT_ERROR_PARAMS, "grid shares");
}

/* ---- the igniter placement without a coefficients file ------------------------------- */

typedef struct {
  CsPlacementModel models[8];
  CsPlacementGpu gpus[16];
  CsPlacementProblem in;
} Instance;

static void instance(Instance *x, const Fixture *f, int n, const char *const *names,
                     double rate, double slo, int n_gpus)
{
  memset(x, 0, sizeof *x);
  for (int m = 0; m < n; m++)
    x->models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = rate, .slo_ms = slo };
  for (int g = 0; g < n_gpus; g++)
    x->gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
  x->in = (CsPlacementProblem){ .models = x->models, .n_models = n, .gpus = x->gpus,
                              .n_gpus = n_gpus, .profiles = f->profiles };
}

static CsPlacement *place(const CsPlacementProblem *in, const char *json)
{
  const CsPlacementPolicy *pol = cs_placement_policy_lookup("igniter");
  cJSON *params = cJSON_Parse(json);
  GError *err = NULL;
  CsPlacement *p = cs_placement_run(pol, NULL, in, params, "scen.json", "placement", &err);
  cJSON_Delete(params);
  if (!p)
    fail_msg("%s: %s", json, err->message);
  return p;
}

/* Every model has at least one replica and the log says where the
 * coefficients came from. */
static void assert_all_placed(const CsPlacement *p, const CsPlacementProblem *in)
{
  for (int m = 0; m < in->n_models; m++) {
    gboolean found = FALSE;
    for (guint r = 0; r < p->replicas->len; r++)
      found = found || g_array_index(p->replicas, CsReplica, r).model == m;
    if (!found)
      fail_msg("%s has no replica:\n%s", in->models[m].name, p->log->str);
  }
  assert_non_null(strstr(p->log->str, "coefficients derived from the simulator's GPU model"));
}

static const char *const vision[] = { "alexnet", "densenet121", "efficientnet_b7", "resnet50",
                                      "vgg19" };

/* Thesis 6.2.1: the five vision models at 500 req/s, SLO 200 ms, six V100s:
 * every model placed. The thesis' plan needs 5 GPUs (6.2.1, Observation 5,
 * on Figure 6.8: "five GPUs are required to serve the entire workload";
 * measured coefficients there, derived ones here): so does the plan derived
 * with the power share rule; with the default scalable rule the derived
 * solo latencies under small shares are lower and the plan needs 4
 * (docs/reproductions/thesis_6_2_1.md, finding 6). */
static void test_thesis_6_2_1(void **state)
{
  Instance x;
  instance(&x, *state, 5, vision, 500, 200, 6);
  CsPlacement *p = place(&x.in, "{\"policy\": \"igniter\"}");
  assert_all_placed(p, &x.in);
  assert_int_equal(p->gpus_needed, 4);
  assert_non_null(strstr(p->log->str, "MPS share rule scalable (gamma 1), interference none"));
  cs_placement_free(p);
  CsPlacementGpuModel power = { .mps = TRUE, .mps_gamma = 1.0, .mps_share_power = TRUE };
  x.in.gpu_model = &power;
  p = place(&x.in, "{\"policy\": \"igniter\"}");
  assert_all_placed(p, &x.in);
  assert_int_equal(p->gpus_needed, 5);
  cs_placement_free(p);
  /* The cluster's GPU-model settings reach the derivation. */
  CsPlacementGpuModel gm = { .mps = FALSE, .mps_gamma = 2.0, .mps_share_power = TRUE };
  x.in.gpu_model = &gm;
  p = place(&x.in, "{\"policy\": \"igniter\"}");
  assert_all_placed(p, &x.in);
  assert_non_null(strstr(p->log->str, "MPS share rule power (gamma 2), interference none"));
  assert_non_null(strstr(p->log->str, "the cluster runs without MPS"));
  cs_placement_free(p);
}

/* Thesis 6.2.2: resnet50, mobilenet_v2, bert, gpt2 at 300 req/s, SLO 300 ms,
 * eight V100s: every model placed. */
static void test_thesis_6_2_2(void **state)
{
  static const char *const names[] = { "resnet50", "mobilenet_v2", "bert", "gpt2" };
  Instance x;
  instance(&x, *state, 4, names, 300, 300, 8);
  CsPlacement *p = place(&x.in, "{\"policy\": \"igniter\"}");
  assert_all_placed(p, &x.in);
  cs_placement_free(p);
}

/* Thesis 6.3: the vision models, total 1000..5000 req/s, SLO 150/250/350 ms:
 * on a cluster large enough for the whole plan every model is placed; at
 * SLO 350 the plan needs 2 and 3 GPUs at 1000 and 2000 req/s (the thesis'
 * numbers) and more than the experiment's 4 GPUs from 3000 req/s on (the
 * thesis: 8). Thesis 6.3, "GPUs required by iGniter": "When the SLO is set
 * to 350ms, iGniter requires 2, 3, 8, 8, and 8 GPUs for total loads of 1000,
 * 2000, 3000, 4000, and 5000 requests per second". */
static void test_thesis_6_3(void **state)
{
  for (int slo = 150; slo <= 350; slo += 100)
    for (int total = 1000; total <= 5000; total += 1000) {
      Instance x;
      instance(&x, *state, 5, vision, total / 5.0, slo, 16);
      CsPlacement *p = place(&x.in, "{\"policy\": \"igniter\"}");
      assert_all_placed(p, &x.in);
      if (slo == 350) {
        if (total <= 2000)
          assert_int_equal(p->gpus_needed, total == 1000 ? 2 : 3);
        else
          assert_true(p->gpus_needed > 4);
      }
      cs_placement_free(p);
    }
}

/* On iGniter's own GPU type and models the shipped measurements are used, not
 * derived, with or without "coefficients". */
static void test_shipped_file_kept(void **state)
{
  (void)state;
  static const char *const names[] = { "alexnet", "resnet50", "vgg19" };
  CsPlacementModel models[3];
  static const double slo[] = { 15, 40, 60 }, rate[] = { 500, 400, 200 };
  for (int m = 0; m < 3; m++)
    models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = rate[m], .slo_ms = slo[m] };
  CsPlacementGpu gpu = { .gpu_type = "v100_igniter" };
  CsPlacementProblem in = { .models = models, .n_models = 3, .gpus = &gpu, .n_gpus = 1 };
  CsPlacement *p = place(&in, "{\"policy\": \"igniter\"}");
  assert_null(strstr(p->log->str, "derived"));
  /* the README example: every model served whole, 500 + 400 + 200
   * (test_igniter.c's test_readme_example) */
  assert_true(fabs(p->expected_total - 1100) < 1e-9);
  cs_placement_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_full_share_is_profile_latency),
    cmocka_unit_test(test_share_cap_closed_form),
    cmocka_unit_test(test_pair_builtin_fallback),
    cmocka_unit_test(test_pair_with_tables),
    cmocka_unit_test(test_deterministic_and_honest),
    cmocka_unit_test(test_bad_options),
    cmocka_unit_test(test_thesis_6_2_1),
    cmocka_unit_test(test_thesis_6_2_2),
    cmocka_unit_test(test_thesis_6_3),
    cmocka_unit_test(test_shipped_file_kept),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
