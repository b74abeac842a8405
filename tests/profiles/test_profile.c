/* Tests of src/profiles: profile sets and network curves, on the shipped data
 * files (numbers checked against the source tables) and on inline files that
 * must be rejected with a message naming file, JSON path and expectation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "profiles/network.h"
#include "profiles/profile.h"

/* cmocka's assert_float_equal goes through float: too coarse for ns. */
#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (+- %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

/* Path of a shipped data file; the build sets CS_SOURCE_ROOT for tests. */
static char *data_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root) {
    print_error("CS_SOURCE_ROOT is not set (run through meson test)\n");
    fail();
  }
  return g_build_filename(root, "data", "profiles", rel, NULL);
}

static void load_shipped(CsProfileSet *set, const char *rel)
{
  char *path = data_path(rel);
  GError *error = NULL;
  gboolean ok = cs_profile_set_load_file(set, path, &error);
  if (!ok)
    print_error("%s\n", error->message);
  assert_true(ok);
  assert_null(error);
  g_free(path);
}

/* ---- Shipped profiles ----------------------------------------------------- */

static void test_v100_shipped(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  load_shipped(set, "v100_thesis.json");
  assert_int_equal(cs_profile_set_n_models(set), 13);

  const CsGpuType *gpu = cs_profile_set_gpu_type(set, "v100");
  assert_non_null(gpu);
  assert_int_equal(gpu->sm_count, 80);
  assert_int_equal(gpu->memory_bytes, INT64_C(17179869184));
  assert_null(cs_profile_set_gpu_type(set, "V100"));
  /* AWS p3.2xlarge on demand, us-east-1: one V100 for $3.06 an hour. */
  assert_true(cs_gpu_type_price_per_hour(gpu) == 3.06);
  assert_non_null(strstr(cs_gpu_type_price_source(gpu), "p3.2xlarge"));

  /* Table A.1, alexnet batch 4. */
  const CsModelProfile *alex = cs_profile_set_lookup(set, "v100", "alexnet");
  assert_non_null(alex);
  assert_string_equal(alex->model, "alexnet");
  assert_string_equal(alex->gpu_type, "v100");
  /* Payloads (thesis 4.5 and 6.1.2): a 3 x 224 x 224 float32 image, 4 x 3 x 224 x
   * 224 = 602112 bytes; the reply is the argmax label alone, one 64-bit integer. */
  assert_int_equal(alex->input_bytes, 602112);
  assert_int_equal(alex->output_bytes, 8);
  assert_true(isnan(alex->slo_ms));
  assert_true(alex->linear_fitted);
  assert_int_equal(alex->n_points, 6);
  /* Table A.1 / 5.2: alexnet b4 0.0014 s, 2801.75 req/s; Creq AO 69.17, WAO 18.68,
   * WSM 47.07 %; Mreq 1.66 %. */
  assert_int_equal(cs_model_profile_latency_ns(alex, 4), 1400000);
  /* The simulator executes with the unrounded value: 4 / 2801.75 req/s. */
  assert_int_equal(cs_model_profile_exec_ns(alex, 4), llround(4.0 / 2801.75 * 1e9));
  assert_int_equal(cs_model_profile_exec_ns(alex, 5), cs_model_profile_latency_ns(alex, 5));
  const CsBatchPoint *b4 = cs_model_profile_point(alex, 4);
  assert_non_null(b4);
  assert_close(b4->mreq_pct, 1.66, 1e-12);
  assert_close(b4->creq_pct[CS_CREQ_AO], 69.17, 1e-12);
  assert_close(b4->creq_pct[CS_CREQ_WAO], 18.68, 1e-12);
  assert_close(b4->creq_pct[CS_CREQ_WSM], 47.07, 1e-12);
  assert_close(b4->throughput_rps, 2801.75, 1e-9);
  assert_null(b4->note);
  assert_non_null(strstr(alex->source, "v100_thesis.json: "));
  assert_non_null(strstr(alex->source, "Table A.1"));

  /* resnet50: every profiled batch, sorted, and the fitted line in between. */
  const CsModelProfile *rn = cs_profile_set_lookup(set, "v100", "resnet50");
  assert_non_null(rn);
  static const int batches[] = { 4, 8, 16, 32, 64, 128 };
  /* Table 5.2: 0.0068, 0.0096, 0.0160, 0.0300, 0.0573, 0.1113 s. */
  static const int64_t lat_ns[] = { 6800000, 9600000, 16000000, 30000000, 57300000, 111300000 };
  assert_int_equal(rn->n_points, 6);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(rn->points[i].batch, batches[i]);
    assert_int_equal(cs_model_profile_latency_ns(rn, batches[i]), lat_ns[i]);
  }
  assert_close(cs_model_profile_point(rn, 128)->creq_pct[CS_CREQ_AO], 100.0, 1e-12);
  assert_null(cs_model_profile_point(rn, 5));
  /* Least squares by hand over the six points. */
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < 6; i++) {
    mx += batches[i] / 6.0;
    my += (double)lat_ns[i] / 6.0;
  }
  for (int i = 0; i < 6; i++) {
    sxx += (batches[i] - mx) * (batches[i] - mx);
    sxy += (batches[i] - mx) * ((double)lat_ns[i] - my);
  }
  double alpha = sxy / sxx, beta = my - alpha * mx;
  assert_close(rn->alpha_ns, alpha, 1e-6);
  assert_close(rn->beta_ns, beta, 1e-6);
  assert_int_equal(cs_model_profile_latency_ns(rn, 5), llround(alpha * 5 + beta));
  assert_int_equal(cs_model_profile_latency_ns(rn, 256), llround(alpha * 256 + beta));

  /* A row the source could only partly read: empty cells stay unknown. */
  const CsModelProfile *rx = cs_profile_set_lookup(set, "v100", "resnext50_32x4d");
  const CsBatchPoint *rx8 = cs_model_profile_point(rx, 8);
  assert_non_null(rx8);
  assert_true(isnan(rx8->mreq_pct));
  assert_true(isnan(rx8->creq_pct[CS_CREQ_WAO]));
  assert_close(rx8->creq_pct[CS_CREQ_AO], 90.80, 1e-12);
  assert_close(rx8->creq_pct[CS_CREQ_WSM], 68.28, 1e-12);
  assert_string_equal(rx8->note, "uncertain");

  /* Published throughput reproduces the thesis' MILP example (POLICIES.md):
   * alexnet b4 and resnet50 b4 capped at 400 req/s, 2 x t5 b16 = 1092.04. */
  const CsModelProfile *t5 = cs_profile_set_lookup(set, "v100", "t5");
  double total = MIN(400.0, cs_model_profile_throughput_rps(alex, 4)) +
                 MIN(400.0, cs_model_profile_throughput_rps(rn, 4)) +
                 MIN(400.0, 2 * cs_model_profile_throughput_rps(t5, 16));
  assert_close(total, 1092.04, 1e-9);
  /* Unprofiled batch sizes: batch / latency. */
  assert_close(cs_model_profile_throughput_rps(rn, 5),
               5 / (cs_model_profile_latency_ns(rn, 5) * 1e-9), 1e-9);

  /* xlnet's unconstrained fit has a negative intercept; the constrained one
   * goes through the origin and keeps every latency positive. */
  const CsModelProfile *xl = cs_profile_set_lookup(set, "v100", "xlnet");
  assert_close(xl->beta_ns, 0.0, 0.0);
  assert_true(xl->alpha_ns > 0);
  assert_true(cs_model_profile_latency_ns(xl, 1) > 0);

  assert_null(cs_profile_set_lookup(set, "v100", "resnet51"));
  assert_null(cs_profile_set_lookup(set, "a100", "resnet50"));
  /* Every model answers every batch size with a positive latency. */
  for (int i = 0; i < cs_profile_set_n_models(set); i++)
    for (int b = 1; b <= 256; b++)
      assert_true(cs_model_profile_latency_ns(cs_profile_set_model(set, i), b) >= 1);
  cs_profile_set_free(set);
}

static void test_symphony_shipped(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  load_shipped(set, "symphony_linear.json");
  /* Symphony Appendix C: Table 3 lists 35 models on the 1080Ti, Table 4 37 on the A100. */
  assert_int_equal(cs_profile_set_n_models(set), 35 + 37);

  const CsGpuType *g1080 = cs_profile_set_gpu_type(set, "1080ti");
  assert_int_equal(g1080->sm_count, 28);
  assert_int_equal(g1080->memory_bytes, INT64_C(11) * 1024 * 1024 * 1024);
  const CsGpuType *a100 = cs_profile_set_gpu_type(set, "a100");
  assert_int_equal(a100->sm_count, 108);
  assert_int_equal(a100->memory_bytes, 0);
  /* No cloud offers the 1080 Ti: no price, not 0. The A100: AWS p4d.24xlarge,
   * $21.957642 an hour for 8 GPUs. */
  assert_true(isnan(cs_gpu_type_price_per_hour(g1080)));
  assert_null(cs_gpu_type_price_source(g1080));
  assert_close(cs_gpu_type_price_per_hour(a100), 21.957642 / 8, 1e-12);
  assert_non_null(strstr(cs_gpu_type_price_source(a100), "p4d.24xlarge"));

  /* Symphony Appendix C, Table 3: ResNet50 on 1080Ti, alpha 2.050, beta 5.378. */
  const CsModelProfile *rn = cs_profile_set_lookup(set, "1080ti", "ResNet50");
  assert_non_null(rn);
  assert_int_equal(rn->n_points, 0);
  assert_false(rn->linear_fitted);
  assert_close(rn->alpha_ns, 2050000, 1e-6);
  assert_close(rn->beta_ns, 5378000, 1e-6);
  assert_close(rn->slo_ms, 27, 0);
  assert_int_equal(rn->input_bytes, -1);
  assert_int_equal(rn->output_bytes, -1);
  assert_null(cs_model_profile_point(rn, 16));
  assert_int_equal(cs_model_profile_latency_ns(rn, 16), llround((2.050 * 16 + 5.378) * 1e6));
  assert_int_equal(cs_model_profile_latency_ns(rn, 16), 38178000);
  assert_close(cs_model_profile_throughput_rps(rn, 16), 16 / 0.038178, 1e-6);

  /* Table 4: BERT on A100. */
  const CsModelProfile *bert = cs_profile_set_lookup(set, "a100", "BERT");
  assert_non_null(bert);
  assert_int_equal(cs_model_profile_latency_ns(bert, 1), llround((7.353 + 0.222) * 1e6));
  assert_close(bert->slo_ms, 59, 0);
  cs_profile_set_free(set);
}

static void test_both_shipped_in_one_set(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  load_shipped(set, "v100_thesis.json");
  load_shipped(set, "symphony_linear.json");
  assert_int_equal(cs_profile_set_n_models(set), 13 + 72);
  /* Load order is kept. */
  assert_string_equal(cs_profile_set_model(set, 0)->model, "alexnet");
  assert_string_equal(cs_profile_set_model(set, 13)->model, "NASNetMobile");

  /* The same file again: every GPU type and model is a duplicate; nothing changes. */
  char *path = data_path("v100_thesis.json");
  GError *error = NULL;
  assert_false(cs_profile_set_load_file(set, path, &error));
  assert_true(g_error_matches(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_DUPLICATE));
  assert_non_null(strstr(error->message, "gpu_types[0].name: GPU type \"v100\" is already in the "
                                         "set"));
  g_clear_error(&error);
  g_free(path);
  assert_int_equal(cs_profile_set_n_models(set), 85);
  cs_profile_set_free(set);
}

/* ---- Inline profiles ------------------------------------------------------ */

#define HEAD "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\", "
#define V100 "\"gpu_types\": [{\"name\": \"v100\", \"sm_count\": 80}], "
/* One model "m" on v100 with the given fields; two valid points. */
#define M(x) HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", " x "}]}"
#define TWO "{\"batch\": 4, \"latency_ms\": 1}, {\"batch\": 8, \"latency_ms\": 2}"

static CsProfileSet *load_inline(const char *json)
{
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  gboolean ok = cs_profile_set_load_data(set, json, "inline.json", &error);
  if (!ok)
    print_error("%s\n", error->message);
  assert_true(ok);
  return set;
}

static void test_fit_inline(void **state)
{
  (void)state;
  /* Points given out of order; hand-computed least squares over
   * (2, 3 ms), (4, 5 ms), (8, 10 ms): mean b = 14/3, mean l = 6 ms,
   * Sxx = 56/3, Sxy = 22 -> alpha = 33/28 ms, beta = 6 - 33/28 * 14/3 = 0.5 ms. */
  CsProfileSet *set = load_inline(
    HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", \"batches\": ["
    "{\"batch\": 8, \"latency_ms\": 10}, {\"batch\": 2, \"latency_ms\": 3},"
    "{\"batch\": 4, \"latency_ms\": 5}]}]}");
  const CsModelProfile *p = cs_profile_set_lookup(set, "v100", "m");
  assert_non_null(p);
  assert_int_equal(p->n_points, 3);
  assert_int_equal(p->points[0].batch, 2);
  assert_int_equal(p->points[1].batch, 4);
  assert_int_equal(p->points[2].batch, 8);
  assert_true(p->linear_fitted);
  assert_close(p->alpha_ns, 33.0 / 28.0 * 1e6, 1e-6);
  assert_close(p->beta_ns, 0.5e6, 1e-6);
  assert_int_equal(cs_model_profile_latency_ns(p, 4), 5000000); /* profiled wins */
  assert_int_equal(cs_model_profile_latency_ns(p, 16), 19357143); /* 33/28*16 + 0.5 ms */
  assert_int_equal(cs_model_profile_latency_ns(p, 1), 1678571);
  assert_int_equal(p->input_bytes, -1);
  assert_true(isnan(p->points[0].mreq_pct));
  assert_true(isnan(p->points[0].throughput_rps));
  assert_string_equal(p->source, "inline.json: test");
  cs_profile_set_free(set);
}

static void test_fit_constrained(void **state)
{
  (void)state;
  /* (4, 10 ms), (8, 30 ms): the exact line has beta = -10 ms. Constrained:
   * through the origin alpha = (4*10 + 8*30) / (16 + 64) = 3.5 ms, SSE 20,
   * better than the flat mean 20 ms (SSE 200). */
  CsProfileSet *set = load_inline(
    HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"steep\", \"batches\": ["
    "{\"batch\": 4, \"latency_ms\": 10}, {\"batch\": 8, \"latency_ms\": 30}]},"
    "{\"gpu\": \"v100\", \"model\": \"falling\", \"batches\": ["
    "{\"batch\": 2, \"latency_ms\": 10}, {\"batch\": 4, \"latency_ms\": 8}]}]}");
  const CsModelProfile *p = cs_profile_set_lookup(set, "v100", "steep");
  assert_close(p->alpha_ns, 3.5e6, 1e-6);
  assert_close(p->beta_ns, 0, 0);
  assert_int_equal(cs_model_profile_latency_ns(p, 1), 3500000);
  /* (2, 10 ms), (4, 8 ms): slope -1 ms. Flat mean 9 ms (SSE 2) beats the
   * line through the origin, alpha = 52/20 = 2.6 ms (SSE 28.8). */
  p = cs_profile_set_lookup(set, "v100", "falling");
  assert_close(p->alpha_ns, 0, 0);
  assert_close(p->beta_ns, 9e6, 1e-6);
  assert_int_equal(cs_model_profile_latency_ns(p, 100), 9000000);
  cs_profile_set_free(set);
}

static void test_linear_with_points(void **state)
{
  (void)state;
  /* A given linear model wins over fitting, even with one point; the point
   * still wins at its own batch size. */
  CsProfileSet *set = load_inline(
    HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", \"input_bytes\": 0,"
    "\"output_bytes\": 16, \"slo_ms\": 12.5, \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 0.25},"
    "\"batches\": [{\"batch\": 4, \"latency_ms\": 4.5, \"throughput_rps\": 900,"
    "\"mreq_pct\": 0, \"creq_pct\": {\"wsm\": 12.5}, \"note\": \"hand-made\"}]}]}");
  const CsModelProfile *p = cs_profile_set_lookup(set, "v100", "m");
  assert_false(p->linear_fitted);
  assert_int_equal(p->input_bytes, 0);
  assert_int_equal(p->output_bytes, 16);
  assert_close(p->slo_ms, 12.5, 0);
  assert_int_equal(cs_model_profile_latency_ns(p, 4), 4500000);
  assert_int_equal(cs_model_profile_latency_ns(p, 3), 3250000);
  assert_close(cs_model_profile_throughput_rps(p, 4), 900, 0);
  const CsBatchPoint *pt = cs_model_profile_point(p, 4);
  assert_close(pt->mreq_pct, 0, 0);
  assert_true(isnan(pt->creq_pct[CS_CREQ_AO]));
  assert_close(pt->creq_pct[CS_CREQ_WSM], 12.5, 0);
  assert_string_equal(pt->note, "hand-made");
  assert_int_equal(cs_model_profile_latency_ns(p, G_MAXINT), llround(G_MAXINT * 1e6 + 0.25e6));
  cs_profile_set_free(set);

  /* The largest slope a file may give, at the largest batch, saturates
   * instead of overflowing. */
  set = load_inline(M("\"linear\": {\"alpha_ms\": 1e9, \"beta_ms\": 0}"));
  p = cs_profile_set_lookup(set, "v100", "m");
  assert_int_equal(cs_model_profile_latency_ns(p, G_MAXINT), INT64_MAX);
  assert_int_equal(cs_model_profile_latency_ns(p, 1), INT64_C(1000000000000000));
  cs_profile_set_free(set);
}

/* Throughput given for a batch: the execution time is batch / throughput
 * (4 / 1000 rps = 4 ms), not the latency; other batches use the latency.
 * A profile of only a linear model has no points. */
static void test_throughput_and_points(void **state)
{
  (void)state;
  CsProfileSet *set = load_inline(
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 5, \"throughput_rps\": 1000},"
      "{\"batch\": 8, \"latency_ms\": 9}]"));
  const CsModelProfile *p = cs_profile_set_lookup(set, "v100", "m");
  assert_int_equal(cs_model_profile_exec_ns(p, 4), 4000000);
  assert_int_equal(cs_model_profile_latency_ns(p, 4), 5000000);
  assert_int_equal(cs_model_profile_exec_ns(p, 8), 9000000);
  /* Batch 8 without a throughput: 8 / 9 ms = 888.9 req/s. */
  assert_close(cs_model_profile_throughput_rps(p, 8), 8 / 9e-3, 1e-9);
  assert_close(cs_model_profile_throughput_rps(p, 4), 1000, 0);
  /* Nearest profiled batch: 6 is as far from 4 as from 8; the first wins. */
  assert_int_equal(cs_model_profile_nearest_point(p, 6)->batch, 4);
  assert_int_equal(cs_model_profile_nearest_point(p, 7)->batch, 8);
  assert_int_equal(cs_model_profile_nearest_point(p, 100)->batch, 8);
  assert_null(cs_model_profile_nearest_point(NULL, 4));
  cs_profile_set_free(set);

  set = load_inline(M("\"linear\": {\"alpha_ms\": 2, \"beta_ms\": 1}"));
  p = cs_profile_set_lookup(set, "v100", "m");
  assert_int_equal(p->n_points, 0);
  assert_null(cs_model_profile_point(p, 4));
  assert_null(cs_model_profile_nearest_point(p, 4));
  assert_int_equal(cs_model_profile_exec_ns(p, 4), 9000000);
  assert_close(cs_model_profile_throughput_rps(p, 4), 4 / 9e-3, 1e-9);
  cs_profile_set_free(set);

  /* A file of GPU types only (no "models"). */
  set = load_inline(HEAD "\"gpu_types\": [{\"name\": \"a100\", \"memory_bytes\": 42949672960}]}");
  assert_int_equal(cs_profile_set_n_models(set), 0);
  assert_true(cs_profile_set_gpu_type(set, "a100")->memory_bytes == INT64_C(42949672960));
  cs_profile_set_free(set);
}

/* An unknown GPU type lists the types of earlier files, then this file's. */
static void test_unknown_gpu_lists_known(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  assert_true(cs_profile_set_load_data(set, HEAD V100 "\"models\": []}", "a.json", &error));
  assert_false(cs_profile_set_load_data(
    set, HEAD "\"gpu_types\": [{\"name\": \"t4\"}], \"models\": [{\"gpu\": \"h100\", "
    "\"model\": \"m\", \"batches\": [" TWO "]}]}", "b.json", &error));
  assert_string_equal(error->message,
                      "b.json: models[0].gpu: unknown GPU type \"h100\" (declare it in "
                      "\"gpu_types\" of this file or of one loaded before; known: \"v100\", "
                      "\"t4\")");
  g_clear_error(&error);
  assert_null(cs_profile_set_gpu_type(set, "t4"));
  cs_profile_set_free(set);
}

static void test_gpu_from_earlier_file(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  assert_true(cs_profile_set_load_data(set, HEAD V100 "\"models\": []}", "gpus.json", &error));
  assert_true(cs_profile_set_load_data(
    set, HEAD "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\","
    "\"linear\": {\"alpha_ms\": 1, \"beta_ms\": 0}}]}", "models.json", &error));
  assert_null(error);
  assert_non_null(cs_profile_set_lookup(set, "v100", "m"));
  assert_int_equal(cs_model_profile_latency_ns(cs_profile_set_lookup(set, "v100", "m"), 7),
                   7000000);
  cs_profile_set_free(set);
}

typedef struct {
  const char *what;
  const char *json;
  int code;
  const char *message; /* expected substring, after "bad.json: " */
  const char *also;    /* a second expected substring, or NULL; where the wording of the
                          range comes from the shared JSON readers, only the value is checked */
} BadCase;


static const BadCase bad_profiles[] = {
  /* Several independent problems: one error listing each (issue 35). */
  { "several problems", HEAD "\"gpu_types\": [{\"name\": \"v100\"}, {\"name\": \"v100\"}], "
    "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", \"slo_ms\": -5, \"batches\": [" TWO "]},"
    "{\"gpu\": \"h100\", \"model\": \"n\", \"batches\": [" TWO "]},"
    "{\"gpu\": \"v100\", \"model\": \"k\", \"batches\": [" TWO "]},"
    "{\"gpu\": \"v100\", \"model\": \"k\", \"batches\": [" TWO "]}]}",
    CS_PROFILE_ERROR_DUPLICATE,
    "4 problems in the profile:\n"
    "  gpu_types[1].name: GPU type \"v100\" is declared twice (also at gpu_types[0])\n"
    "  models[0].slo_ms: expected a number > 0 and <= 1e+09, got -5\n"
    "  models[1].gpu: unknown GPU type \"h100\" (declare it in \"gpu_types\" of this file or of "
    "one loaded before; known: \"v100\")\n"
    "  models[3]: model \"k\" on GPU type \"v100\" is defined twice (also at models[2])", NULL },
  { "unknown field with suggestion",
    M("\"batches\": [{\"batch\": 4, \"latency_mss\": 1}, {\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0]: unknown field \"latency_mss\" (did you mean \"latency_ms\"?)", NULL },
  { "unknown top-level field", HEAD V100 "\"model\": []}", CS_PROFILE_ERROR_INVALID,
    "unknown field \"model\" (did you mean \"models\"?)", NULL },
  { "unknown creq metric", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"creq_pct\": "
                             "{\"wsn\": 3}}, {\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].creq_pct: unknown field \"wsn\" (did you mean \"wsm\"?)", NULL },
  { "unknown field, no close name",
    M("\"linear\": {\"alpha_ms\": 1, \"beta_ms\": 1, \"gamma\": 2}"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].linear: unknown field \"gamma\" (known fields: alpha_ms, beta_ms)", NULL },
  { "wrong version",
    "{\"format\": \"clustersim-profile\", \"version\": 2, \"new_field\": 1}",
    CS_PROFILE_ERROR_INVALID, "version: unsupported version 2 (this build reads version 1)", NULL },
  { "version as string", "{\"format\": \"clustersim-profile\", \"version\": \"1\"}",
    CS_PROFILE_ERROR_INVALID, "version: expected an integer, got a string", NULL },
  { "missing version", "{\"format\": \"clustersim-profile\"}", CS_PROFILE_ERROR_INVALID,
    "version: required field is missing", NULL },
  { "wrong format", "{\"format\": \"clustersim-network\", \"version\": 1}",
    CS_PROFILE_ERROR_INVALID,
    "format: expected \"clustersim-profile\", got \"clustersim-network\"", NULL },
  { "missing format", "{\"version\": 1}", CS_PROFILE_ERROR_INVALID,
    "format: required field is missing", NULL },
  { "root not an object", "[1, 2]", CS_PROFILE_ERROR_INVALID,
    "expected an object, got an array", NULL },
  { "missing source", "{\"format\": \"clustersim-profile\", \"version\": 1}",
    CS_PROFILE_ERROR_INVALID, "source: required field is missing", NULL },
  { "not JSON", "{\"format\": \"clustersim-profile\",\n \"version\": }", CS_PROFILE_ERROR_PARSE,
    "line 2, column", NULL },
  /* The first point's note is allocated before the second fails: no leak. */
  { "missing latency",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"note\": \"n\"}, {\"batch\": 8}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[1].latency_ms: required field is missing", NULL },
  { "negative latency", M("\"batches\": [{\"batch\": 4, \"latency_ms\": -1}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].latency_ms: expected a number > 0 and <= 1e+09, got -1", NULL },
  { "zero latency", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 0}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].latency_ms: expected a number > 0", NULL },
  { "latency below 1 ns", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1e-7}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].latency_ms: expected a latency of at least "
                              "1 ns", NULL },
  { "latency as string", M("\"batches\": [{\"batch\": 4, \"latency_ms\": \"1.4\"}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].latency_ms: expected a number, got a string",
    NULL },
  { "duplicate batch",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1}, {\"batch\": 8, \"latency_ms\": 2}, "
      "{\"batch\": 4, \"latency_ms\": 3}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[2].batch: duplicate batch size 4 (also at models[0].batches[0])", NULL },
  { "batch 0", M("\"batches\": [{\"batch\": 0, \"latency_ms\": 1}]"), CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].batch: expected an integer", "got 0" },
  { "fractional batch", M("\"batches\": [{\"batch\": 4.5, \"latency_ms\": 1}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].batch: expected an integer, got a fractional number", NULL },
  { "mreq above 100", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"mreq_pct\": 101}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].mreq_pct: expected a number", "got 101" },
  { "null cell", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"mreq_pct\": null}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].mreq_pct: expected a number, got null", NULL },
  { "batches not an array", M("\"batches\": {\"batch\": 4}"), CS_PROFILE_ERROR_INVALID,
    "models[0].batches: expected an array, got an object", NULL },
  { "one point and no linear model", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0]: expected a \"linear\" model or at least 2 profiled batch sizes in \"batches\"",
    NULL },
  { "neither points nor linear", M("\"slo_ms\": 10"), CS_PROFILE_ERROR_INVALID,
    "models[0]: expected a \"linear\" model or at least 2 profiled batch sizes", NULL },
  { "negative alpha", M("\"linear\": {\"alpha_ms\": -1, \"beta_ms\": 5}"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].linear.alpha_ms: expected a number", "got -1" },
  { "zero linear model", M("\"linear\": {\"alpha_ms\": 0, \"beta_ms\": 0}"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].linear: expected alpha_ms + beta_ms (the latency of batch 1) to be at least 1 ns",
    NULL },
  { "missing beta", M("\"linear\": {\"alpha_ms\": 1}"), CS_PROFILE_ERROR_INVALID,
    "models[0].linear.beta_ms: required field is missing", NULL },
  { "negative slo", M("\"slo_ms\": -5, \"batches\": [" TWO "]"), CS_PROFILE_ERROR_INVALID,
    "models[0].slo_ms: expected a number > 0", NULL },
  { "negative payload", M("\"input_bytes\": -1, \"batches\": [" TWO "]"),
    CS_PROFILE_ERROR_INVALID, "models[0].input_bytes: expected an integer", "got -1" },
  { "missing model name", HEAD V100 "\"models\": [{\"gpu\": \"v100\"}]}",
    CS_PROFILE_ERROR_INVALID, "models[0].model: required field is missing", NULL },
  { "empty model name", HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"\"}]}",
    CS_PROFILE_ERROR_INVALID,
    "models[0].model: expected a non-empty string, got an empty string", NULL },
  { "unknown gpu type",
    HEAD V100 "\"models\": [{\"gpu\": \"h100\", \"model\": \"m\", \"batches\": [" TWO "]}]}",
    CS_PROFILE_ERROR_INVALID, "models[0].gpu: unknown GPU type \"h100\" (declare it in "
                              "\"gpu_types\" of this file or of one loaded before; known: "
                              "\"v100\")", NULL },
  { "gpu type declared twice", HEAD "\"gpu_types\": [{\"name\": \"v100\"}, {\"name\": \"a\"}, "
                               "{\"name\": \"v100\"}]}",
    CS_PROFILE_ERROR_DUPLICATE,
    "gpu_types[2].name: GPU type \"v100\" is declared twice (also at gpu_types[0])", NULL },
  { "model defined twice in a file",
    HEAD V100 "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", \"batches\": [" TWO "]},"
    "{\"gpu\": \"v100\", \"model\": \"m\", \"batches\": [" TWO "]}]}",
    CS_PROFILE_ERROR_DUPLICATE,
    "models[1]: model \"m\" on GPU type \"v100\" is defined twice (also at models[0])", NULL },
  { "negative sm count", HEAD "\"gpu_types\": [{\"name\": \"g\", \"sm_count\": -1}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].sm_count: expected an integer", "got -1" },
  { "latency above the maximum", M("\"batches\": [{\"batch\": 4, \"latency_ms\": 2e9}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].latency_ms: expected a number > 0 and <= 1e+09, got 2e+09", NULL },
  { "gpu type not an object", HEAD "\"gpu_types\": [\"v100\"]}", CS_PROFILE_ERROR_INVALID,
    "gpu_types[0]: expected an object, got a string", NULL },
  { "gpu type without name", HEAD "\"gpu_types\": [{\"sm_count\": 80}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].name: required field is missing", NULL },
  { "gpu description not a string", HEAD "\"gpu_types\": [{\"name\": \"g\", \"description\": 1}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].description: expected a non-empty string, got a "
                              "number", NULL },
  { "negative gpu memory", HEAD "\"gpu_types\": [{\"name\": \"g\", \"memory_bytes\": -1}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].memory_bytes: expected an integer >= 0, got -1",
    NULL },
  { "negative gpu price", HEAD "\"gpu_types\": [{\"name\": \"g\", \"price_per_hour\": -1, "
    "\"price_source\": \"x\"}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].price_per_hour: expected a number in [0, 1e+06], got -1", NULL },
  { "infinite gpu price", HEAD "\"gpu_types\": [{\"name\": \"g\", \"price_per_hour\": 1e999, "
    "\"price_source\": \"x\"}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].price_per_hour: expected a finite number", NULL },
  { "gpu price without source", HEAD "\"gpu_types\": [{\"name\": \"g\", \"price_per_hour\": 1}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].price_per_hour: expected \"price_source\" beside it",
    NULL },
  { "gpu price source without price", HEAD "\"gpu_types\": [{\"name\": \"g\", "
    "\"price_source\": \"AWS\"}]}",
    CS_PROFILE_ERROR_INVALID, "gpu_types[0].price_source: given without \"price_per_hour\"", NULL },
  { "gpu_types not an array", HEAD "\"gpu_types\": {\"name\": \"g\"}}", CS_PROFILE_ERROR_INVALID,
    "gpu_types: expected an array, got an object", NULL },
  { "models not an array", HEAD V100 "\"models\": {}}", CS_PROFILE_ERROR_INVALID,
    "models: expected an array, got an object", NULL },
  { "source not a string", "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": 7}",
    CS_PROFILE_ERROR_INVALID, "source: expected a non-empty string, got a number", NULL },
  { "model not an object", HEAD V100 "\"models\": [[]]}", CS_PROFILE_ERROR_INVALID,
    "models[0]: expected an object, got an array", NULL },
  { "misspelt model field", M("\"slo\": 5, \"batches\": [" TWO "]"), CS_PROFILE_ERROR_INVALID,
    "models[0]: unknown field \"slo\" (did you mean \"slo_ms\"?)", NULL },
  { "model without gpu", HEAD V100 "\"models\": [{\"model\": \"m\", \"batches\": [" TWO "]}]}",
    CS_PROFILE_ERROR_INVALID, "models[0].gpu: required field is missing", NULL },
  { "negative output payload", M("\"output_bytes\": -3, \"batches\": [" TWO "]"),
    CS_PROFILE_ERROR_INVALID, "models[0].output_bytes: expected an integer >= 0, got -3", NULL },
  { "point not an object", M("\"batches\": [4, 8]"), CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0]: expected an object, got a number", NULL },
  { "negative throughput",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"throughput_rps\": -5}, "
      "{\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].throughput_rps: expected a number > 0",
    "got -5" },
  { "note not a string",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"note\": true}, "
      "{\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].note: expected a non-empty string, got a "
                              "boolean", NULL },
  { "creq not an object",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"creq_pct\": 30}, "
      "{\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID, "models[0].batches[0].creq_pct: expected an object, got a number",
    NULL },
  { "creq above 100",
    M("\"batches\": [{\"batch\": 4, \"latency_ms\": 1, \"creq_pct\": {\"wao\": 101}}, "
      "{\"batch\": 8, \"latency_ms\": 2}]"),
    CS_PROFILE_ERROR_INVALID,
    "models[0].batches[0].creq_pct.wao: expected a number in [0, 100], got 101", NULL },
  { "linear not an object", M("\"linear\": [1, 0]"), CS_PROFILE_ERROR_INVALID,
    "models[0].linear: expected an object, got an array", NULL },
  { "unknown gpu type, none declared",
    HEAD "\"models\": [{\"gpu\": \"v100\", \"model\": \"m\", \"batches\": [" TWO "]}]}",
    CS_PROFILE_ERROR_INVALID, "models[0].gpu: unknown GPU type \"v100\" (declare it in "
                              "\"gpu_types\" of this file or of one loaded before; known: none)",
    NULL },
  { "misspelt gpu field", HEAD "\"gpu_types\": [{\"name\": \"g\", \"memory_byte\": 1}]}",
    CS_PROFILE_ERROR_INVALID,
    "gpu_types[0]: unknown field \"memory_byte\" (did you mean \"memory_bytes\"?)", NULL },
};

static void test_bad_profiles(void **state)
{
  (void)state;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_profiles); i++) {
    const BadCase *c = &bad_profiles[i];
    CsProfileSet *set = cs_profile_set_new();
    GError *error = NULL;
    gboolean ok = cs_profile_set_load_data(set, c->json, "bad.json", &error);
    char *want = g_strconcat("bad.json: ", c->message, NULL);
    if (ok || !error || error->domain != CS_PROFILE_ERROR || error->code != c->code ||
        !strstr(error->message, want) || (c->also && !strstr(error->message, c->also))) {
      print_error("case \"%s\": expected code %d and message containing\n  %s\ngot %s: %s\n",
                  c->what, c->code, want, ok ? "success" : "error",
                  error ? error->message : "(no error)");
      fail();
    }
    /* A failed load leaves the set as it was. */
    assert_int_equal(cs_profile_set_n_models(set), 0);
    assert_null(cs_profile_set_gpu_type(set, "v100"));
    g_free(want);
    g_clear_error(&error);
    cs_profile_set_free(set);
  }
}

static void test_duplicate_across_loads(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  assert_true(cs_profile_set_load_data(set, M("\"batches\": [" TWO "]"), "a.json", &error));

  /* The same model in a later file, the GPU type not redeclared. */
  assert_false(cs_profile_set_load_data(
    set, HEAD "\"models\": [{\"gpu\": \"v100\", \"model\": \"n\", \"batches\": [" TWO "]},"
    "{\"gpu\": \"v100\", \"model\": \"m\", \"batches\": [" TWO "]}]}", "b.json", &error));
  assert_true(g_error_matches(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_DUPLICATE));
  assert_string_equal(error->message, "b.json: models[1]: model \"m\" on GPU type \"v100\" is "
                                      "already in the set (defined by a.json)");
  g_clear_error(&error);
  /* ... and nothing of b.json was added, not even the model before it. */
  assert_int_equal(cs_profile_set_n_models(set), 1);
  assert_null(cs_profile_set_lookup(set, "v100", "n"));

  /* The GPU type declared again. */
  assert_false(cs_profile_set_load_data(set, HEAD V100 "\"models\": []}", "c.json", &error));
  assert_true(g_error_matches(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_DUPLICATE));
  assert_string_equal(error->message, "c.json: gpu_types[0].name: GPU type \"v100\" is already "
                                      "in the set (declared by a.json)");
  g_clear_error(&error);

  /* The same model on another GPU type is not a duplicate. */
  assert_true(cs_profile_set_load_data(
    set, HEAD "\"gpu_types\": [{\"name\": \"t4\"}], \"models\": [{\"gpu\": \"t4\", \"model\": "
    "\"m\", \"batches\": [" TWO "]}]}", "d.json", &error));
  assert_int_equal(cs_profile_set_n_models(set), 2);
  assert_int_equal(cs_profile_set_gpu_type(set, "t4")->sm_count, 0);
  assert_string_equal(cs_profile_set_gpu_type(set, "t4")->description, "");
  cs_profile_set_free(set);
}

static void test_missing_file(void **state)
{
  (void)state;
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  assert_false(cs_profile_set_load_file(set, "/nonexistent/p.json", &error));
  assert_true(g_error_matches(error, CS_PROFILE_ERROR, CS_PROFILE_ERROR_IO));
  assert_non_null(strstr(error->message, "/nonexistent/p.json: cannot read"));
  g_clear_error(&error);
  cs_profile_set_free(set);
  cs_profile_set_free(NULL);
}

/* ---- Network curves ------------------------------------------------------- */

static void test_network_builtin(void **state)
{
  (void)state;
  CsNetworkCurve *zero = cs_network_curve_new_zero();
  assert_int_equal(cs_network_curve_latency_ns(zero, 0), 0);
  assert_int_equal(cs_network_curve_latency_ns(zero, 9633792), 0);
  assert_int_equal(cs_network_curve_latency_ns(zero, INT64_MAX), 0);
  assert_string_equal(cs_network_curve_source(zero), "built-in zero curve");
  CsNetworkCurve *constant = cs_network_curve_new_constant(250000);
  assert_int_equal(cs_network_curve_latency_ns(constant, 0), 250000);
  assert_int_equal(cs_network_curve_latency_ns(constant, 1), 250000);
  assert_int_equal(cs_network_curve_latency_ns(constant, INT64_C(1) << 40), 250000);
  cs_network_curve_free(zero);
  cs_network_curve_free(constant);
  cs_network_curve_free(NULL);
}

static void test_network_gcp_shipped(void **state)
{
  (void)state;
  char *path = data_path("network/gcp_n1_standard_16.json");
  GError *error = NULL;
  CsNetworkCurve *c = cs_network_curve_load_file(path, &error);
  if (!c)
    print_error("%s\n", error->message);
  assert_non_null(c);
  /* Thesis 4.6.2: a 16x3x224x224 float32 batch, 9,633,792 bytes, ~8.7 ms. */
  int64_t ns = cs_network_curve_latency_ns(c, 9633792);
  assert_true(llabs(ns - 8700000) <= 1);
  /* The other anchor: the 0.322 ms ping at 0 bytes. */
  assert_int_equal(cs_network_curve_latency_ns(c, 0), 322000);
  /* One resnet50 request (602,112 bytes) costs a sixteenth of the payload part. */
  assert_int_equal(cs_network_curve_latency_ns(c, 602112),
                   llround((0.322 + (8.7 - 0.322) / 16) * 1e6));
  int64_t prev = 0;
  for (int64_t x = 0; x <= INT64_C(1) << 32; x = x * 2 + 1) {
    int64_t v = cs_network_curve_latency_ns(c, x);
    assert_true(v >= prev);
    prev = v;
  }
  assert_non_null(strstr(cs_network_curve_source(c), "gcp_n1_standard_16.json: "));
  assert_non_null(strstr(cs_network_curve_source(c), "not the thesis' fit"));
  cs_network_curve_free(c);
  g_free(path);
}

#define NET "{\"format\": \"clustersim-network\", \"version\": 1, \"source\": \"test\", "

static void test_network_segments(void **state)
{
  (void)state;
  GError *error = NULL;
  CsNetworkCurve *c = cs_network_curve_load_data(
    NET "\"segments\": ["
    "{\"up_to_bytes\": 1000, \"a\": 0.001, \"b\": 1, \"c_ms\": 0.1},"
    "{\"up_to_bytes\": 1000000, \"a\": 1, \"b\": 0.5, \"c_ms\": 0},"
    "{\"a\": -1e-6, \"b\": 1, \"c_ms\": 1000}]}",
    "net.json", &error);
  assert_non_null(c);
  assert_int_equal(cs_network_curve_latency_ns(c, 0), 100000);         /* 0.1 ms */
  assert_int_equal(cs_network_curve_latency_ns(c, 1000), 1100000);     /* 1.1 ms: bound inclusive */
  assert_int_equal(cs_network_curve_latency_ns(c, 1024), 32000000);    /* sqrt(1024) ms */
  assert_int_equal(cs_network_curve_latency_ns(c, 1000000), 1000000000);
  assert_int_equal(cs_network_curve_latency_ns(c, 1000001), llround((1000 - 1.000001) * 1e6));
  /* The open segment falls below zero past 1e9 bytes: clamped, never negative. */
  assert_int_equal(cs_network_curve_latency_ns(c, INT64_C(2000000000)), 0);
  assert_string_equal(cs_network_curve_source(c), "net.json: test");
  cs_network_curve_free(c);
}

/* Latencies past int64 saturate: 1 ms * x^2 at x = 1e10 bytes is 1e20 ms. A
 * constant curve takes its time at every size. */
static void test_network_edges(void **state)
{
  (void)state;
  GError *error = NULL;
  CsNetworkCurve *c = cs_network_curve_load_data(
    NET "\"segments\": [{\"a\": 1, \"b\": 2, \"c_ms\": 0}]}", "sq.json", &error);
  assert_non_null(c);
  assert_int_equal(cs_network_curve_latency_ns(c, 1000), INT64_C(1000000000000));
  assert_int_equal(cs_network_curve_latency_ns(c, INT64_C(10000000000)), INT64_MAX);
  cs_network_curve_free(c);
  c = cs_network_curve_new_constant(2500);
  assert_int_equal(cs_network_curve_latency_ns(c, 0), 2500);
  assert_int_equal(cs_network_curve_latency_ns(c, INT64_C(1) << 40), 2500);
  assert_non_null(cs_network_curve_source(c));
  cs_network_curve_free(c);
  cs_network_curve_free(NULL);
}

typedef struct {
  const char *what;
  const char *json;
  int code;
  const char *message;
  const char *also;
} BadNet;

static const BadNet bad_networks[] = {
  { "last segment bounded",
    NET "\"segments\": [{\"up_to_bytes\": 10, \"a\": 1, \"b\": 1, \"c_ms\": 0}]}",
    CS_NETWORK_ERROR_INVALID,
    "segments[0]: expected the last segment to be open-ended (omit \"up_to_bytes\")", NULL },
  { "open segment not last",
    NET "\"segments\": [{\"a\": 1, \"b\": 1, \"c_ms\": 0}, {\"a\": 1, \"b\": 1, \"c_ms\": 0}]}",
    CS_NETWORK_ERROR_INVALID,
    "segments[0]: expected \"up_to_bytes\" (only the last segment may omit it)", NULL },
  { "not ascending",
    NET "\"segments\": [{\"up_to_bytes\": 10, \"a\": 1, \"b\": 1, \"c_ms\": 0},"
    "{\"up_to_bytes\": 10, \"a\": 1, \"b\": 1, \"c_ms\": 0}, {\"a\": 1, \"b\": 1, \"c_ms\": 0}]}",
    CS_NETWORK_ERROR_INVALID,
    "segments[1].up_to_bytes: expected segments in ascending order: a value > 10 (the previous "
    "segment's), got 10", NULL },
  { "negative exponent", NET "\"segments\": [{\"a\": 1, \"b\": -1, \"c_ms\": 0}]}",
    CS_NETWORK_ERROR_INVALID, "segments[0].b: expected a number", "got -1" },
  { "missing a", NET "\"segments\": [{\"b\": 1, \"c_ms\": 0}]}", CS_NETWORK_ERROR_INVALID,
    "segments[0].a: required field is missing", NULL },
  { "misspelt field", NET "\"segments\": [{\"a\": 1, \"b\": 1, \"cms\": 0}]}",
    CS_NETWORK_ERROR_INVALID, "segments[0]: unknown field \"cms\" (did you mean \"c_ms\"?)", NULL },
  { "empty segments", NET "\"segments\": []}", CS_NETWORK_ERROR_INVALID,
    "segments: expected a non-empty array, got an empty array", NULL },
  { "misspelt segments", NET "\"segment\": []}", CS_NETWORK_ERROR_INVALID,
    "unknown field \"segment\" (did you mean \"segments\"?)", NULL },
  { "missing segments", "{\"format\": \"clustersim-network\", \"version\": 1, "
    "\"source\": \"test\"}", CS_NETWORK_ERROR_INVALID, "segments: required field is missing",
    NULL },
  { "segments not an array", NET "\"segments\": {\"a\": 1}}", CS_NETWORK_ERROR_INVALID,
    "segments: expected a non-empty array, got an object", NULL },
  { "wrong version", "{\"format\": \"clustersim-network\", \"version\": 3}",
    CS_NETWORK_ERROR_INVALID, "version: unsupported version 3 (this build reads version 1)", NULL },
  { "profile given as curve", "{\"format\": \"clustersim-profile\", \"version\": 1}",
    CS_NETWORK_ERROR_INVALID,
    "format: expected \"clustersim-network\", got \"clustersim-profile\"", NULL },
  { "root not an object", "[]", CS_NETWORK_ERROR_INVALID, "expected an object, got an array",
    NULL },
  { "missing version", "{\"format\": \"clustersim-network\"}", CS_NETWORK_ERROR_INVALID,
    "version: required field is missing", NULL },
  { "missing source", "{\"format\": \"clustersim-network\", \"version\": 1, \"segments\": []}",
    CS_NETWORK_ERROR_INVALID, "source: required field is missing", NULL },
  { "segment not an object", NET "\"segments\": [5]}", CS_NETWORK_ERROR_INVALID,
    "segments[0]: expected an object, got a number", NULL },
  { "missing exponent", NET "\"segments\": [{\"a\": 1, \"c_ms\": 0}]}", CS_NETWORK_ERROR_INVALID,
    "segments[0].b: required field is missing", NULL },
  { "missing constant", NET "\"segments\": [{\"a\": 1, \"b\": 1}]}", CS_NETWORK_ERROR_INVALID,
    "segments[0].c_ms: required field is missing", NULL },
  { "fractional bound", NET "\"segments\": [{\"up_to_bytes\": 1.5, \"a\": 1, \"b\": 1, "
    "\"c_ms\": 0}, {\"a\": 1, \"b\": 1, \"c_ms\": 0}]}", CS_NETWORK_ERROR_INVALID,
    "segments[0].up_to_bytes: expected an integer, got a fractional number", NULL },
  { "not JSON", "{\"format\": ", CS_NETWORK_ERROR_PARSE, "line 1, column", NULL },
};

static void test_bad_networks(void **state)
{
  (void)state;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_networks); i++) {
    const BadNet *c = &bad_networks[i];
    GError *error = NULL;
    CsNetworkCurve *curve = cs_network_curve_load_data(c->json, "bad.json", &error);
    char *want = g_strconcat("bad.json: ", c->message, NULL);
    if (curve || !error || error->domain != CS_NETWORK_ERROR || error->code != c->code ||
        !strstr(error->message, want) || (c->also && !strstr(error->message, c->also))) {
      print_error("case \"%s\": expected code %d and message containing\n  %s\ngot %s: %s\n",
                  c->what, c->code, want, curve ? "success" : "error",
                  error ? error->message : "(no error)");
      fail();
    }
    g_free(want);
    g_clear_error(&error);
  }
  GError *error = NULL;
  assert_null(cs_network_curve_load_file("/nonexistent/net.json", &error));
  assert_true(g_error_matches(error, CS_NETWORK_ERROR, CS_NETWORK_ERROR_IO));
  g_clear_error(&error);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_v100_shipped),
    cmocka_unit_test(test_symphony_shipped),
    cmocka_unit_test(test_both_shipped_in_one_set),
    cmocka_unit_test(test_fit_inline),
    cmocka_unit_test(test_fit_constrained),
    cmocka_unit_test(test_linear_with_points),
    cmocka_unit_test(test_gpu_from_earlier_file),
    cmocka_unit_test(test_throughput_and_points),
    cmocka_unit_test(test_unknown_gpu_lists_known),
    cmocka_unit_test(test_bad_profiles),
    cmocka_unit_test(test_duplicate_across_loads),
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_network_builtin),
    cmocka_unit_test(test_network_gcp_shipped),
    cmocka_unit_test(test_network_segments),
    cmocka_unit_test(test_bad_networks),
    cmocka_unit_test(test_network_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
