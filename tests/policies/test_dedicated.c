/* Placement boundaries on synthetic profiles whose numbers make each one
 * visible. "dedicated": batch 4 takes 20 ms, batch 8 exactly 50 ms, batch 16
 * 80 ms; its batch is the largest whose isolated latency is <= the SLO, one
 * model per GPU in client order, and its expected goodput is
 * min(rate, batch / latency). Usher and the MILP: a batch whose latency
 * equals the SLO is a candidate, and Usher's minimum replication factor is
 * ceil(rate / goodput) for an exact multiple too. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "policies/placement/placement.h"
#include "policies/placement/milp.h"
#include "policies/placement/placement_policies.h"
#include "policies/placement/usher.h"

static CsProfileSet *synthetic(void)
{
  /* m: the dedicated boundary; n: a second model; lin: linear only (5 ms per
   * request + 10 ms); u: Creq/Mreq for Usher and the MILP, batch 8 exactly
   * 50 ms at 100 req/s published throughput, batch 16 at 90 ms. */
  cJSON *doc = cJSON_Parse(
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\"}],"
    " \"models\": [{\"gpu\": \"gpu\", \"model\": \"m\", \"batches\": ["
    "   {\"batch\": 4, \"latency_ms\": 20}, {\"batch\": 8, \"latency_ms\": 50},"
    "   {\"batch\": 16, \"latency_ms\": 80}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"lin\", \"linear\": {\"alpha_ms\": 5, \"beta_ms\": 10}},"
    "  {\"gpu\": \"gpu\", \"model\": \"u\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 40, \"wao\": 40, \"wsm\": 40}},"
    "   {\"batch\": 16, \"latency_ms\": 90, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 40, \"wao\": 40, \"wsm\": 40}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"ua\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 60, \"wao\": 60, \"wsm\": 60}},"
    "   {\"batch\": 16, \"latency_ms\": 900, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 60, \"wao\": 60, \"wsm\": 60}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"ub\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 50,"
    "    \"creq_pct\": {\"ao\": 10, \"wao\": 10, \"wsm\": 10}},"
    "   {\"batch\": 16, \"latency_ms\": 900, \"mreq_pct\": 50,"
    "    \"creq_pct\": {\"ao\": 10, \"wao\": 10, \"wsm\": 10}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"uc\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 20,"
    "    \"creq_pct\": {\"ao\": 20, \"wao\": 20, \"wsm\": 20}},"
    "   {\"batch\": 16, \"latency_ms\": 900, \"mreq_pct\": 20,"
    "    \"creq_pct\": {\"ao\": 20, \"wao\": 20, \"wsm\": 20}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"ud\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 30,"
    "    \"creq_pct\": {\"ao\": 33, \"wao\": 33, \"wsm\": 33}},"
    "   {\"batch\": 16, \"latency_ms\": 900, \"mreq_pct\": 30,"
    "    \"creq_pct\": {\"ao\": 33, \"wao\": 33, \"wsm\": 33}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"ue\", \"batches\": ["
    "   {\"batch\": 8, \"latency_ms\": 50, \"throughput_rps\": 100, \"mreq_pct\": 40,"
    "    \"creq_pct\": {\"ao\": 5, \"wao\": 5, \"wsm\": 5}},"
    "   {\"batch\": 16, \"latency_ms\": 900, \"mreq_pct\": 40,"
    "    \"creq_pct\": {\"ao\": 5, \"wao\": 5, \"wsm\": 5}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"k\", \"batches\": ["
    "   {\"batch\": 4, \"latency_ms\": 40, \"throughput_rps\": 100, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 30, \"wao\": 30, \"wsm\": 30}},"
    "   {\"batch\": 5, \"latency_ms\": 16, \"throughput_rps\": 300, \"mreq_pct\": 10,"
    "    \"creq_pct\": {\"ao\": 30, \"wao\": 30, \"wsm\": 30}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"n\", \"batches\": [{\"batch\": 4, \"latency_ms\": 20}, {\"batch\": 8, \"latency_ms\": 200}]}]}");
  assert_non_null(doc);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  char *dir = g_dir_make_tmp("cs-dedicated-XXXXXX", NULL);
  char *path = g_build_filename(dir, "p.json", NULL);
  assert_true(g_file_set_contents(path, text, -1, NULL));
  CsProfileSet *set = cs_profile_set_new();
  GError *err = NULL;
  if (!cs_profile_set_load_file(set, path, &err))
    fail_msg("%s", err->message);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  cJSON_free(text);
  return set;
}

/* Places models (names, rates, SLOs) on n_gpus GPUs with params (JSON or NULL). */
static CsPlacement *place(const CsProfileSet *set, const char *const *names, const double *rate,
                          const double *slo, int n_models, int n_gpus, const char *params)
{
  CsPlacementModel models[4];
  CsPlacementGpu gpus[4];
  for (int m = 0; m < n_models; m++)
    models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = rate[m], .slo_ms = slo[m] };
  for (int g = 0; g < n_gpus; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = "gpu" };
  CsPlacementProblem in = { .models = models, .n_models = n_models, .gpus = gpus,
                          .n_gpus = n_gpus, .profiles = set };
  cJSON *p = params ? cJSON_Parse(params) : NULL;
  GError *err = NULL;
  CsPlacement *pl = cs_placement_run(&cs_place_dedicated, NULL, &in, p, "test.json", "placement", &err);
  cJSON_Delete(p);
  if (!pl)
    fail_msg("%s", err->message);
  return pl;
}

static int batch_of(const CsPlacement *p, int model)
{
  for (guint r = 0; r < p->replicas->len; r++) {
    const CsReplica *rep = &g_array_index(p->replicas, CsReplica, r);
    if (rep->model == model)
      return rep->batch;
  }
  return 0;
}

static void test_batch_boundary(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  const char *m[] = { "m" };
  double rate[] = { 1000 };
  /* SLO 50 ms: batch 8 takes exactly 50 ms and is allowed; 160 req/s. */
  double slo[] = { 50 };
  CsPlacement *p = place(set, m, rate, slo, 1, 1, NULL);
  assert_int_equal(batch_of(p, 0), 8);
  assert_float_equal(p->expected_goodput[0], 8 / 0.050, 1e-9);
  cs_placement_free(p);
  /* Just under: batch 4 (200 req/s). */
  slo[0] = 49.999;
  p = place(set, m, rate, slo, 1, 1, NULL);
  assert_int_equal(batch_of(p, 0), 4);
  assert_float_equal(p->expected_goodput[0], 4 / 0.020, 1e-9);
  cs_placement_free(p);
  /* max_batch caps the choice: 16 allowed by the SLO, max_batch 15 gives 8;
   * and the rate caps the expected goodput. */
  slo[0] = 100;
  rate[0] = 150;
  p = place(set, m, rate, slo, 1, 1, "{\"max_batch\": 15}");
  assert_int_equal(batch_of(p, 0), 8);
  assert_float_equal(p->expected_goodput[0], 150, 1e-9);
  cs_placement_free(p);
  p = place(set, m, rate, slo, 1, 1, "{\"max_batch\": 16}");
  assert_int_equal(batch_of(p, 0), 16);
  cs_placement_free(p);
  /* No batch within 19.999 ms: no replica, said in the log. */
  slo[0] = 19.999;
  p = place(set, m, rate, slo, 1, 1, NULL);
  assert_int_equal(p->replicas->len, 0);
  assert_float_equal(p->expected_goodput[0], 0, 0);
  assert_non_null(strstr(p->log->str, "m: not served, no batch size meets SLO"));
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* One GPU per model in client order: with one GPU the second model gets none. */
static void test_one_gpu_per_model(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  const char *m[] = { "n", "m" };
  double rate[] = { 100, 100 }, slo[] = { 100, 100 };
  CsPlacement *p = place(set, m, rate, slo, 2, 1, NULL);
  assert_int_equal(p->replicas->len, 1);
  const CsReplica *rep = &g_array_index(p->replicas, CsReplica, 0);
  assert_int_equal(rep->model, 0);
  assert_int_equal(rep->gpu, 0);
  assert_non_null(strstr(p->log->str, "m: not served, no GPU left"));
  cs_placement_free(p);
  p = place(set, m, rate, slo, 2, 2, NULL);
  assert_int_equal(p->replicas->len, 2);
  assert_int_equal(g_array_index(p->replicas, CsReplica, 1).gpu, 1);
  assert_int_equal(batch_of(p, 1), 16);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* A linear-only profile: latency(b) = 5 b + 10 ms; SLO 50 ms allows b = 8
 * exactly (50 ms), so with max_batch 8 the batch is 8. */
static void test_linear_boundary(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  const char *m[] = { "lin" };
  double rate[] = { 100 }, slo[] = { 50 };
  CsPlacement *p = place(set, m, rate, slo, 1, 1, "{\"max_batch\": 8}");
  assert_int_equal(batch_of(p, 0), 8);
  cs_placement_free(p);
  slo[0] = 49.999;
  p = place(set, m, rate, slo, 1, 1, "{\"max_batch\": 8}");
  assert_int_equal(batch_of(p, 0), 7);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* Model u at SLO 50 ms: batch 8 (exactly 50 ms) is its only candidate. Rate
 * 200 req/s is exactly 2 x its 100 req/s: Usher's minimum replication
 * factor is 2, so it places 2 replicas (on 4 GPUs, fixed mode) and expects
 * 200; the MILP places batch 8 as well. */
static void test_usher_milp_boundaries(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  CsPlacementModel models[] = { { .name = "u", .rate_rps = 200, .slo_ms = 50 } };
  CsPlacementGpu gpus[4];
  for (int g = 0; g < 4; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = "gpu" };
  CsPlacementProblem in = { .models = models, .n_models = 1, .gpus = gpus, .n_gpus = 4,
                          .profiles = set };
  static const int batches[] = { 8, 16 };
  CsUsherOptions uo = { .metric = CS_CREQ_AO, .mode = CS_USHER_FIXED, .max_group_size = 4,
                        .batches = batches, .n_batches = 2 };
  GError *err = NULL;
  CsPlacement *p = cs_usher_place(&in, &uo, NULL, &err);
  if (!p)
    fail_msg("%s", err->message);
  assert_int_equal(p->replicas->len, 2);
  assert_int_equal(batch_of(p, 0), 8);
  assert_float_equal(p->expected_goodput[0], 200, 1e-9);
  cs_placement_free(p);
  CsMilpOptions mo = { .metric = CS_CREQ_AO, .time_limit_s = 1e6, .prefer_small_batch = TRUE,
                       .batches = batches, .n_batches = 2 };
  CsMilpInfo info;
  p = cs_milp_place(&in, &mo, &info, &err);
  if (!p)
    fail_msg("%s", err->message);
  assert_int_equal(p->replicas->len, 2);
  assert_int_equal(batch_of(p, 0), 8);
  assert_float_equal(p->expected_goodput[0], 200, 1e-9);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* prefer_small_batch: the batch sum comes first, the replica count only
 * breaks ties. Model k at 300 req/s is served whole by 3 replicas of batch 4
 * (100 req/s each) or by 1 of batch 5 (300 req/s): the smaller batch wins
 * with its 3 replicas (sum 4 < 5), however many replicas that takes. */
static void test_milp_batch_before_replicas(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  CsPlacementModel models[] = { { .name = "k", .rate_rps = 300, .slo_ms = 100 } };
  CsPlacementGpu gpus[4];
  for (int g = 0; g < 4; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = "gpu" };
  CsPlacementProblem in = { .models = models, .n_models = 1, .gpus = gpus, .n_gpus = 4,
                          .profiles = set };
  static const int batches[] = { 4, 5 };
  CsMilpOptions mo = { .metric = CS_CREQ_AO, .time_limit_s = 1e6, .prefer_small_batch = TRUE,
                       .batches = batches, .n_batches = 2 };
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&in, &mo, &info, &err);
  if (!p)
    fail_msg("%s", err->message);
  assert_int_equal(p->replicas->len, 3);
  assert_int_equal(batch_of(p, 0), 4);
  assert_float_equal(p->expected_goodput[0], 300, 1e-9);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* Usher's step 4 on one group (pinned with "groups"), batch 8 only, every
 * replica 100 req/s. Members are ordered C-heavy and M-heavy alternately
 * (Creq >= 1.2 Mreq, resp. Mreq >= 1.2 Creq; each list by Creq + Mreq
 * descending), neutral last; each replica goes to the group's GPU left with
 * the least spare Creq + Mreq (lowest index on ties), else a new GPU. */
static CsPlacement *usher_group(const CsProfileSet *set, const char *const *names,
                                const double *rates, int n, int n_gpus)
{
  CsPlacementModel models[8];
  for (int m = 0; m < n; m++)
    models[m] = (CsPlacementModel){ .name = names[m], .rate_rps = rates[m], .slo_ms = 100 };
  CsPlacementGpu gpus[4];
  for (int g = 0; g < n_gpus; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = "gpu" };
  CsPlacementProblem in = { .models = models, .n_models = n, .gpus = gpus, .n_gpus = n_gpus,
                          .profiles = set };
  static const int batches[] = { 8 };
  static const int one_group[8] = { 0 };
  CsUsherOptions uo = { .metric = CS_CREQ_AO, .mode = CS_USHER_FIXED, .max_group_size = 8,
                        .batches = batches, .n_batches = 1, .groups = one_group };
  GError *err = NULL;
  CsPlacement *p = cs_usher_place(&in, &uo, NULL, &err);
  if (!p)
    fail_msg("%s", err->message);
  return p;
}

/* Best fit. ua (Creq 60, Mreq 10) needs 2 replicas for 200 req/s: GPU 0 and,
 * as they do not fit together, GPU 1. ub (10/50) fits both equally: GPU 0
 * (70/60). uc (20/20) fits both: GPU 0 would be left with 10 + 20 = 30 spare,
 * GPU 1 with 20 + 70 = 90: best fit takes GPU 0. */
static void test_usher_best_fit(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  const char *names[] = { "ua", "ub", "uc" };
  double rates[] = { 200, 100, 100 };
  CsPlacement *p = usher_group(set, names, rates, 3, 2);
  int gpu_of[3][2], n_of[3] = { 0 };
  for (guint r = 0; r < p->replicas->len; r++) {
    const CsReplica *rep = &g_array_index(p->replicas, CsReplica, r);
    gpu_of[rep->model][n_of[rep->model]++] = rep->gpu;
  }
  assert_int_equal(n_of[0], 2);
  assert_int_equal(gpu_of[0][0], 0);
  assert_int_equal(gpu_of[0][1], 1);
  assert_int_equal(n_of[1], 1);
  assert_int_equal(gpu_of[1][0], 0);
  assert_int_equal(n_of[2], 1);
  assert_int_equal(gpu_of[2][0], 0);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

/* The C-heavy threshold is 1.2: ud (Creq 33, Mreq 30: ratio 1.1) is neutral
 * and goes last, after ua (C-heavy 60/10), ub (M-heavy 10/50, sum 60) and ue
 * (M-heavy 5/40, sum 45): placement order ua, ub, ue, ud. (At a threshold of
 * 1.0 ud would be C-heavy, placed right after ub.) */
static void test_usher_heavy_threshold(void **state)
{
  (void)state;
  CsProfileSet *set = synthetic();
  const char *names[] = { "ua", "ub", "ud", "ue" };
  double rates[] = { 100, 100, 100, 100 };
  CsPlacement *p = usher_group(set, names, rates, 4, 2);
  assert_int_equal(p->replicas->len, 4);
  static const int order[] = { 0, 1, 3, 2 };
  for (int i = 0; i < 4; i++)
    assert_int_equal(g_array_index(p->replicas, CsReplica, i).model, order[i]);
  assert_float_equal(p->expected_total, 400, 1e-9);
  cs_placement_free(p);
  cs_profile_set_free(set);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_batch_boundary),
    cmocka_unit_test(test_one_gpu_per_model),
    cmocka_unit_test(test_linear_boundary),
    cmocka_unit_test(test_usher_milp_boundaries),
    cmocka_unit_test(test_milp_batch_before_replicas),
    cmocka_unit_test(test_usher_best_fit),
    cmocka_unit_test(test_usher_heavy_threshold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
