/* Properties of Usher and the MILP on seeded random instances drawn from the
 * V100 profile (deterministic: one GRand seed per test):
 *  - no GPU above 100 % Creq (in the metric used) or 100 % Mreq;
 *  - every replica's batch size is a candidate meeting the model's SLO, and
 *    the replicas of one model share a batch size;
 *  - expected goodput per model = min(rate, sum of replica throughputs),
 *    never above the rate, and the total is their sum;
 *  - the MILP's expected goodput is at least Usher's whenever Usher put no two
 *    replicas of one model on one GPU (then Usher's placement is a feasible
 *    point of the MILP); prefer_small_batch keeps the MILP's goodput;
 *  - min_gpus mode on a large cluster serves every model that has a batch
 *    size meeting its SLO completely, on exactly gpus_needed GPUs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "policies/placement/placement.h"
#include "policies/placement/milp.h"
#include "policies/placement/usher.h"
#include "thesis_profiles.h"

#define MAX_GPUS 256

static const char *const all_models[] = {
  "alexnet",     "bert",         "bloom_560", "densenet121",     "efficientnet_b7",
  "gpt2",        "inception_v3", "mobilenet_v2", "resnet50",     "resnext50_32x4d",
  "t5",          "vgg19",        "xlnet",
};

typedef struct {
  CsPlacementModel models[G_N_ELEMENTS(all_models)];
  CsPlacementGpu gpus[MAX_GPUS];
  CsPlacementProblem in;
  CsCreqMetric metric;
} Instance;

/* 2..max_models distinct models, rates in [50, 1500) req/s, SLOs from a few
 * thesis-like values, 1..max_gpus GPUs, a random metric. */
static void random_instance(Instance *x, GRand *rng, const CsProfileSet *set, int max_models,
                            int max_gpus)
{
  static const double slos[] = { 50, 100, 150, 200, 300, 500 };
  memset(x, 0, sizeof *x);
  int n = g_rand_int_range(rng, 2, max_models + 1);
  gboolean taken[G_N_ELEMENTS(all_models)] = { FALSE };
  for (int m = 0; m < n; m++) {
    int k;
    do
      k = g_rand_int_range(rng, 0, G_N_ELEMENTS(all_models));
    while (taken[k]);
    taken[k] = TRUE;
    x->models[m] = (CsPlacementModel){
      .name = all_models[k],
      .rate_rps = g_rand_double_range(rng, 50.0, 1500.0),
      .slo_ms = slos[g_rand_int_range(rng, 0, G_N_ELEMENTS(slos))],
    };
  }
  int g = g_rand_int_range(rng, 1, max_gpus + 1);
  for (int i = 0; i < g; i++)
    x->gpus[i] = (CsPlacementGpu){ .gpu_type = "v100" };
  x->metric = (CsCreqMetric)g_rand_int_range(rng, 0, CS_CREQ_N_METRICS);
  x->in = (CsPlacementProblem){ .models = x->models, .n_models = n, .gpus = x->gpus,
                              .n_gpus = g, .profiles = set };
}

/* Checks the invariants every placement of these policies must satisfy.
 * Returns TRUE when no GPU holds two replicas of one model. */
static gboolean check_placement(const Instance *x, const CsPlacement *p, gboolean shares)
{
  int ng = x->in.n_gpus, nm = x->in.n_models;
  double *creq = g_new0(double, ng), *mreq = g_new0(double, ng), *cap = g_new0(double, nm);
  int *batch = g_new0(int, nm), *count = g_new0(int, (size_t)nm * ng);
  gboolean distinct = TRUE;
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    assert_true(r->model >= 0 && r->model < nm && r->gpu >= 0 && r->gpu < ng);
    const CsModelProfile *prof = cs_profile_set_lookup(x->in.profiles, "v100",
                                                       x->models[r->model].name);
    const CsBatchPoint *pt = cs_model_profile_point(prof, r->batch);
    assert_non_null(pt);
    assert_true(pt->latency_ns <= x->models[r->model].slo_ms * 1e6);
    assert_false(isnan(pt->creq_pct[x->metric]) || isnan(pt->mreq_pct));
    if (batch[r->model])
      assert_int_equal(batch[r->model], r->batch);
    batch[r->model] = r->batch;
    creq[r->gpu] += pt->creq_pct[x->metric];
    mreq[r->gpu] += pt->mreq_pct;
    cap[r->model] += cs_model_profile_throughput_rps(prof, r->batch);
    if (count[r->model * ng + r->gpu]++)
      distinct = FALSE;
    if (shares)
      assert_true(fabs(r->mps_share - pt->creq_pct[x->metric] / 100.0) < 1e-12);
    else
      assert_true(r->mps_share == 0.0);
  }
  for (int g = 0; g < ng; g++) {
    if (creq[g] > 100.0 + 1e-6 || mreq[g] > 100.0 + 1e-6)
      fail_msg("GPU %d over capacity: Creq %.4f %%, Mreq %.4f %%", g, creq[g], mreq[g]);
  }
  double total = 0.0;
  for (int m = 0; m < nm; m++) {
    double want = MIN(x->models[m].rate_rps, cap[m]);
    assert_true(p->expected_goodput[m] <= x->models[m].rate_rps + 1e-9);
    assert_true(fabs(p->expected_goodput[m] - want) < 1e-9);
    total += p->expected_goodput[m];
  }
  assert_true(fabs(p->expected_total - total) < 1e-6);
  g_free(creq);
  g_free(mreq);
  g_free(cap);
  g_free(batch);
  g_free(count);
  return distinct;
}

static CsPlacement *run_usher(const Instance *x, CsUsherMode mode, CsUsherInfo *info)
{
  CsUsherOptions opt = { .metric = x->metric, .mode = mode, .max_group_size = 4,
                         .batches = cs_place_default_batches,
                         .n_batches = cs_place_n_default_batches, .mps_shares = TRUE };
  GError *err = NULL;
  CsPlacement *p = cs_usher_place(&x->in, &opt, info, &err);
  if (!p)
    fail_msg("usher: %s", err->message);
  return p;
}

static CsPlacement *run_milp(const Instance *x, gboolean prefer_small)
{
  CsMilpOptions opt = { .metric = x->metric, .time_limit_s = 1e6, /* no clock: a slow machine times the test out, never changes it */
                        .prefer_small_batch = prefer_small, .batches = cs_place_default_batches,
                        .n_batches = cs_place_n_default_batches };
  CsMilpInfo info;
  GError *err = NULL;
  CsPlacement *p = cs_milp_place(&x->in, &opt, &info, &err);
  if (!p)
    fail_msg("milp: %s", err->message);
  assert_true(info.status == CS_MILP_OPTIMAL || info.status == CS_MILP_EMPTY);
  if (prefer_small && info.status == CS_MILP_OPTIMAL)
    assert_true(info.tie_break_solved);
  return p;
}

static void test_fixed_cluster_properties(void **state)
{
  GRand *rng = g_rand_new_with_seed(4242);
  int compared = 0, duplicates = 0, milp_better = 0;
  for (int round = 0; round < 120; round++) {
    Instance x;
    random_instance(&x, rng, *state, 5, 5);
    CsPlacement *u = run_usher(&x, CS_USHER_FIXED, NULL);
    gboolean distinct = check_placement(&x, u, TRUE);
    CsPlacement *m = run_milp(&x, FALSE);
    assert_true(check_placement(&x, m, FALSE));
    if (distinct) {
      compared++;
      if (m->expected_total < u->expected_total - 1e-6)
        fail_msg("round %d: MILP %.6f < Usher %.6f\nUsher log:\n%s\nMILP log:\n%s", round,
                 m->expected_total, u->expected_total, u->log->str, m->log->str);
      milp_better += m->expected_total > u->expected_total + 1e-6;
    } else {
      duplicates++;
    }
    CsPlacement *s = run_milp(&x, TRUE);
    check_placement(&x, s, FALSE);
    if (fabs(s->expected_total - m->expected_total) > 1e-6)
      fail_msg("round %d: prefer_small_batch changed the goodput: %.9f vs %.9f", round,
               s->expected_total, m->expected_total);
    cs_placement_free(s);
    cs_placement_free(m);
    cs_placement_free(u);
  }
  /* The comparison must have had something to compare. */
  assert_true(compared >= 60);
  assert_true(milp_better > 0);
  print_message("compared %d instances (MILP better on %d), %d with a model twice on a GPU\n",
                compared, milp_better, duplicates);
  g_rand_free(rng);
}

static void test_min_gpus_properties(void **state)
{
  GRand *rng = g_rand_new_with_seed(777);
  for (int round = 0; round < 120; round++) {
    Instance x;
    random_instance(&x, rng, *state, 5, 1);
    x.in.n_gpus = MAX_GPUS;
    for (int g = 0; g < MAX_GPUS; g++)
      x.gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
    CsUsherInfo info = { 0 };
    CsPlacement *p = run_usher(&x, CS_USHER_MIN_GPUS, &info);
    check_placement(&x, p, TRUE);
    assert_true(info.gpus_needed <= MAX_GPUS);
    gboolean used[MAX_GPUS] = { FALSE };
    int n_used = 0;
    for (guint i = 0; i < p->replicas->len; i++) {
      int g = g_array_index(p->replicas, CsReplica, i).gpu;
      n_used += !used[g];
      used[g] = TRUE;
    }
    assert_int_equal(n_used, info.gpus_needed);
    /* GPUs are opened in order: the used ones are 0..needed-1. */
    for (int g = 0; g < info.gpus_needed; g++)
      assert_true(used[g]);
    for (int m = 0; m < x.in.n_models; m++) {
      CsModelOptions c;
      assert_true(cs_model_options_init(&c, *state, "v100", &x.models[m], x.metric,
                                        cs_place_default_batches, cs_place_n_default_batches,
                                        "test", NULL));
      gboolean servable = FALSE;
      for (int i = 0; i < c.n; i++)
        servable |= c.opts[i].meets_slo;
      cs_model_options_clear(&c);
      if (servable)
        assert_true(fabs(p->expected_goodput[m] - x.models[m].rate_rps) < 1e-9);
      else
        assert_true(p->expected_goodput[m] == 0.0);
    }
    cs_usher_info_clear(&info);
    cs_placement_free(p);
  }
  g_rand_free(rng);
}

/* Same seed, same answer: placements are deterministic. */
static void test_deterministic(void **state)
{
  for (int rep = 0; rep < 2; rep++) {
    GRand *a = g_rand_new_with_seed(99), *b = g_rand_new_with_seed(99);
    for (int round = 0; round < 10; round++) {
      Instance x, y;
      random_instance(&x, a, *state, 5, 5);
      random_instance(&y, b, *state, 5, 5);
      CsPlacement *p = rep ? run_milp(&x, TRUE) : run_usher(&x, CS_USHER_FIXED, NULL);
      CsPlacement *q = rep ? run_milp(&y, TRUE) : run_usher(&y, CS_USHER_FIXED, NULL);
      assert_int_equal(p->replicas->len, q->replicas->len);
      assert_memory_equal(p->replicas->data, q->replicas->data,
                          p->replicas->len * sizeof(CsReplica));
      assert_string_equal(p->log->str, q->log->str);
      cs_placement_free(p);
      cs_placement_free(q);
    }
    g_rand_free(a);
    g_rand_free(b);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fixed_cluster_properties),
    cmocka_unit_test(test_min_gpus_properties),
    cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, thesis_profiles_setup, thesis_profiles_teardown);
}
