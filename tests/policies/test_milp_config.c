/* The MILP's configuration formulation (milp_config.c) on instances beyond
 * brute force (test_milp_bruteforce.c covers the small ones): its two ways
 * to the optimum (every configuration listed; column generation and the
 * configurations whose reduced cost could still pay) must agree, CBC (when
 * built) must agree, no feasible solution of the per-GPU model may beat it,
 * every placement must satisfy the thesis' constraints checked here from the
 * candidates alone, and the time-limit paths must still return a placement. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "policies/placement/milp.h"
#include "policies/placement/milp_config.h"
#include "policies/placement/place_common.h"
#include "policies/placement/placement.h"
#include "thesis_profiles.h"

static const char *const names[] = { "alexnet", "bert", "densenet121", "efficientnet_b7",
                                     "resnet50", "vgg19", "mobilenet_v2", "inception_v3" };

#define MAX_MODELS 32
#define MAX_GPUS 64

typedef struct {
  CsPlacementModel models[MAX_MODELS];
  CsPlacementGpu gpus[MAX_GPUS];
  CsPlacementProblem in;
} Cluster;

/* n_models models named in turn from names, rates drawn from seed in
 * [lo, hi) req/s, SLO 400 ms, on n_gpus V100s. */
static void cluster(Cluster *x, int n_models, int n_gpus, double lo, double hi, guint32 seed,
                    const CsProfileSet *profiles)
{
  g_assert(n_models <= MAX_MODELS && n_gpus <= MAX_GPUS);
  GRand *rng = g_rand_new_with_seed(seed);
  for (int m = 0; m < n_models; m++)
    x->models[m] = (CsPlacementModel){ .name = names[m % G_N_ELEMENTS(names)],
                                       .rate_rps = g_rand_double_range(rng, lo, hi),
                                       .slo_ms = 400 };
  g_rand_free(rng);
  for (int g = 0; g < n_gpus; g++)
    x->gpus[g] = (CsPlacementGpu){ .gpu_type = "v100" };
  x->in = (CsPlacementProblem){ .models = x->models, .n_models = n_models, .gpus = x->gpus,
                                .n_gpus = n_gpus, .profiles = profiles };
}

static CsMilpOptions options(CsCreqMetric metric, CsMilpFormulation form, int enumerate_limit)
{
  /* No clock: a slow machine times the test out, never changes it. */
  return (CsMilpOptions){ .metric = metric, .time_limit_s = 1e6,
                          .batches = cs_place_default_batches,
                          .n_batches = cs_place_n_default_batches, .formulation = form,
                          .enumerate_limit = enumerate_limit };
}

/* The thesis' constraints, from the candidates: each replica's batch meets
 * the SLO, one batch size per model, one replica of a model per GPU, Creq
 * and Mreq within 100 per GPU, at most max_rep replicas per model. Returns
 * the total expected goodput, sum over models of min(rate, replicas x
 * goodput). */
static double check_placement(const Cluster *x, const CsPlacement *p, CsCreqMetric metric,
                              const int *max_rep)
{
  const CsPlacementProblem *in = &x->in;
  double creq[MAX_GPUS] = { 0 }, mreq[MAX_GPUS] = { 0 }, served[MAX_MODELS] = { 0 };
  int batch[MAX_MODELS] = { 0 }, count[MAX_MODELS] = { 0 };
  gboolean on[MAX_MODELS][MAX_GPUS] = { { FALSE } };
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    CsModelOptions o = { 0 };
    GError *err = NULL;
    assert_true(cs_model_options_init(&o, in->profiles, in->gpus[r->gpu].gpu_type,
                                      &in->models[r->model], metric, cs_place_default_batches,
                                      cs_place_n_default_batches, "test", &err));
    const CsBatchOption *b = NULL;
    for (int j = 0; j < o.n; j++)
      if (o.opts[j].batch == r->batch)
        b = &o.opts[j];
    assert_non_null(b);
    assert_true(b->meets_slo);
    assert_true(batch[r->model] == 0 || batch[r->model] == r->batch);
    batch[r->model] = r->batch;
    assert_false(on[r->model][r->gpu]);
    on[r->model][r->gpu] = TRUE;
    creq[r->gpu] += b->creq;
    mreq[r->gpu] += b->mreq;
    served[r->model] += b->goodput;
    count[r->model]++;
    cs_model_options_clear(&o);
  }
  double total = 0.0;
  for (int g = 0; g < in->n_gpus; g++)
    assert_true(creq[g] <= 100.0 + 1e-9 && mreq[g] <= 100.0 + 1e-9);
  for (int m = 0; m < in->n_models; m++) {
    if (max_rep)
      assert_true(count[m] <= max_rep[m]);
    total += MIN(served[m], in->models[m].rate_rps);
  }
  return total;
}

/* Up once the search has an integer solution (the per-GPU model's start). */
static gboolean up_once_solved(gboolean has_solution, void *data)
{
  (void)data;
  return has_solution;
}

static gboolean up_at_once(gboolean has_solution, void *data)
{
  (void)has_solution;
  (*(int *)data)++;
  return TRUE;
}

static double greedy_start_of(const CsPlacement *p)
{
  const char *line = strstr(p->log->str, "greedy start: objective ");
  assert_non_null(line);
  return g_ascii_strtod(line + strlen("greedy start: objective "), NULL);
}

/* Instances where the per-GPU model ends at a gap after seconds (the
 * benchmark's 16 x 64 and 64 x 64 are like them): both ways to the
 * configuration optimum prove the same one, CBC too, the placement is
 * feasible and worth what the solver says, and the per-GPU model's first
 * solution does not beat it. */
static void test_methods_agree(void **state)
{
  static const struct {
    int models, gpus;
    double lo, hi;
    CsCreqMetric metric;
    int max_rep;
  } cases[] = {
    { 16, 64, 2000, 9000, CS_CREQ_AO, 0 }, { 24, 8, 100, 1000, CS_CREQ_AO, 0 },
    { 12, 32, 2000, 6000, CS_CREQ_AO, 3 }, { 32, 24, 500, 2000, CS_CREQ_AO, 2 },
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    Cluster x;
    cluster(&x, cases[c].models, cases[c].gpus, cases[c].lo, cases[c].hi, 7 + (guint32)c, *state);
    int max_rep[MAX_MODELS];
    for (int m = 0; m < cases[c].models; m++)
      max_rep[m] = cases[c].max_rep;
    const int *cap = cases[c].max_rep ? max_rep : NULL;
    double objective[2] = { 0 };
    for (int generated = 0; generated < 2; generated++) {
      CsMilpOptions opt = options(cases[c].metric, CS_MILP_FORM_CONFIGURATIONS,
                                  generated ? -1 : 0);
      opt.max_replicas = cap;
      CsMilpInfo info;
      GError *err = NULL;
      CsPlacement *p = cs_milp_place(&x.in, &opt, &info, &err);
      assert_non_null(p);
      print_message("case %zu, %s: %.4f req/s (start %.4f), %d configurations, %d rounds\n", c,
                    generated ? "generated" : "listed", info.objective, greedy_start_of(p),
                    info.n_configurations, info.cg_iterations);
      if (info.status != CS_MILP_OPTIMAL)
        fail_msg("%s", p->log->str);
      assert_true(info.gap == 0.0 && info.bound == info.objective);
      assert_true(info.enumerated == !generated);
      assert_float_equal(check_placement(&x, p, cases[c].metric, cap), info.objective, 1e-6);
      assert_float_equal(p->expected_total, info.objective, 1e-6);
      assert_true(info.objective >= greedy_start_of(p) - 0.005); /* the log rounds it */
      objective[generated] = info.objective;
      cs_placement_free(p);
    }
    assert_float_equal(objective[0], objective[1], 1e-6);
    /* The per-GPU model's first solution (its greedy start or better) is
     * feasible for the same problem: never above the optimum. */
    CsMilpOptions per = options(cases[c].metric, CS_MILP_FORM_PER_GPU, 0);
    per.max_replicas = cap;
    per.time_up = up_once_solved;
    CsMilpInfo per_info;
    CsPlacement *q = cs_milp_place(&x.in, &per, &per_info, NULL);
    assert_non_null(q);
    assert_true(q->expected_total <= objective[0] + 1e-6);
    cs_placement_free(q);
    if (cs_milp_have_cbc()) {
      CsMilpOptions cbc = options(cases[c].metric, CS_MILP_FORM_CONFIGURATIONS, 0);
      cbc.max_replicas = cap;
      cbc.solver = CS_MILP_SOLVER_CBC;
      CsMilpInfo cbc_info;
      CsPlacement *r = cs_milp_place(&x.in, &cbc, &cbc_info, NULL);
      assert_non_null(r);
      assert_int_equal(cbc_info.status, CS_MILP_OPTIMAL);
      assert_float_equal(cbc_info.objective, objective[0], 1e-6);
      cs_placement_free(r);
    }
  }
}

/* Up after the given number of questions (column-generation rounds and
 * branch-and-bound callbacks). */
typedef struct {
  int asked, up_after;
} Budget;

static gboolean up_after(gboolean has_solution, void *data)
{
  (void)has_solution;
  Budget *b = data;
  return ++b->asked > b->up_after;
}

/* Under WAO (small Creq: many models fit a GPU) the configurations are too
 * many to list and the integer solve over the generated ones stops short
 * of the column-generation bound: the status says so, the gap is measured
 * against that bound (valid for every placement), and the placement still
 * satisfies every constraint and beats the greedy start. */
static void test_bound_when_not_proven(void **state)
{
  Cluster x;
  cluster(&x, 16, 16, 500, 3000, 8, *state);
  Budget budget = { .up_after = 2000 };
  CsMilpOptions opt = options(CS_CREQ_WAO, CS_MILP_FORM_CONFIGURATIONS, 0);
  opt.time_up = up_after;
  opt.time_up_data = &budget;
  CsMilpInfo info;
  CsPlacement *p = cs_milp_place(&x.in, &opt, &info, NULL);
  assert_non_null(p);
  print_message("%.4f req/s, bound %.4f, gap %.4g, %d configurations, %d rounds\n",
                info.objective, info.bound, info.gap, info.n_configurations,
                info.cg_iterations);
  assert_false(info.enumerated);
  assert_int_equal(info.status, CS_MILP_FEASIBLE);
  assert_true(info.bound > info.objective && info.gap > 0.0);
  assert_float_equal(info.gap, (info.bound - info.objective) / info.objective, 1e-12);
  assert_non_null(strstr(p->log->str, "not proven optimal"));
  assert_true(info.objective > greedy_start_of(p));
  assert_float_equal(check_placement(&x, p, CS_CREQ_WAO, NULL), info.objective, 1e-6);
  /* The bound holds against the per-GPU model's best within the same
   * budget, a different formulation of the same problem. */
  Budget per_budget = { .up_after = 2000 };
  CsMilpOptions per = options(CS_CREQ_WAO, CS_MILP_FORM_PER_GPU, 0);
  per.time_up = up_after;
  per.time_up_data = &per_budget;
  CsMilpInfo per_info;
  CsPlacement *q = cs_milp_place(&x.in, &per, &per_info, NULL);
  assert_non_null(q);
  print_message("per GPU: %.4f req/s\n", q->expected_total);
  assert_true(q->expected_total <= info.bound + 1e-6);
  /* Within this budget the per-GPU search found nothing of its own: its
   * greedy start, no bound. */
  assert_int_equal(per_info.status, CS_MILP_HEURISTIC);
  assert_true(isnan(per_info.bound));
  cs_placement_free(q);
  cs_placement_free(p);
}

/* Column generation cut after its first round: the bound it reports (the
 * Lagrangian bound of that round, not the restricted LP's value) still
 * holds against the optimum proven with every configuration listed. */
static void test_lagrangian_bound_when_cut(void **state)
{
  static const int gpus[] = { 8, 24, 64 };
  for (size_t c = 0; c < G_N_ELEMENTS(gpus); c++) {
    Cluster x;
    cluster(&x, 24, gpus[c], 500, 4000, 11 + (guint32)c, *state);
    CsMilpOptions listed = options(CS_CREQ_AO, CS_MILP_FORM_CONFIGURATIONS, 0);
    CsMilpInfo best;
    CsPlacement *p = cs_milp_place(&x.in, &listed, &best, NULL);
    assert_non_null(p);
    assert_int_equal(best.status, CS_MILP_OPTIMAL);
    cs_placement_free(p);
    Budget budget = { .up_after = 1 }; /* one round, then the time is up */
    CsMilpOptions opt = options(CS_CREQ_AO, CS_MILP_FORM_CONFIGURATIONS, -1);
    opt.time_up = up_after;
    opt.time_up_data = &budget;
    CsMilpInfo info;
    p = cs_milp_place(&x.in, &opt, &info, NULL);
    assert_non_null(p);
    print_message("%d GPUs: optimum %.4f, after one round bound %.4f, objective %.4f\n",
                  gpus[c], best.objective, info.bound, info.objective);
    assert_int_equal(info.cg_iterations, 1);
    assert_non_null(strstr(p->log->str, "cut by the time limit (Lagrangian bound)"));
    assert_true(info.bound >= best.objective - 1e-6);
    assert_true(info.objective <= best.objective + 1e-6);
    cs_placement_free(p);
  }
}

/* The master's internals after column generation converged on a listable
 * instance: each column's reduced cost from the saved duals (the pricing's
 * arithmetic) equals GLPK's own column dual, and the configurations listed
 * as able to improve on an incumbent are exactly those of every
 * configuration (listed in full, reduced cost computed here) above -gap. */
static void test_reduced_costs(void **state)
{
  Cluster x;
  cluster(&x, 24, 8, 500, 4000, 11, *state);
  CsMilpOptions opt = options(CS_CREQ_AO, CS_MILP_FORM_CONFIGURATIONS, 0);
  CsModelOptions *cand = g_new0(CsModelOptions, x.in.n_models);
  for (int m = 0; m < x.in.n_models; m++)
    assert_true(cs_model_options_init(&cand[m], x.in.profiles, "v100", &x.in.models[m],
                                      opt.metric, opt.batches, opt.n_batches, "test", NULL));
  CsModelOptions *cand_of_gpu[MAX_GPUS];
  for (int g = 0; g < x.in.n_gpus; g++)
    cand_of_gpu[g] = cand;
  MilpProblem pb = { 0 };
  cs_milp_index(&pb, &x.in, &opt, cand_of_gpu);
  MilpMaster ms, all;
  cs_milp_cfg_init(&ms, &pb, &x.in, &opt);
  gboolean converged = FALSE;
  int rounds = 0;
  cs_milp_cfg_generate(&ms, G_MAXINT64, &converged, &rounds);
  assert_true(converged && rounds > 1);
  MilpDuals d = { 0 };
  cs_milp_cfg_duals_save(&ms, &d);
  int nmk = ms.nm * ms.nb;
  for (guint i = 0; i < ms.configs->len; i++) {
    const MilpConfig *c = g_ptr_array_index(ms.configs, i);
    double rc = -d.c_dual[c->type];
    for (int r = 0; r < c->n; r++)
      rc += d.value[(size_t)c->type * nmk + c->items[r]];
    assert_float_equal(rc, glp_get_col_dual(ms.lp, ms.first_z + (int)i), 1e-6);
    assert_true(rc <= CS_MILP_CFG_RC_TOL);
  }
  cs_milp_cfg_init(&all, &pb, &x.in, &opt);
  assert_true(cs_milp_cfg_enumerate(&all, 1000000));
  print_message("%u configurations in all, %u generated in %d rounds\n", all.configs->len,
                ms.configs->len, rounds);
  static const double gaps[] = { 1.0, 30.0, 300.0, 3000.0 };
  for (size_t k = 0; k < G_N_ELEMENTS(gaps); k++) {
    int above = 0;
    for (guint i = 0; i < all.configs->len; i++) {
      const MilpConfig *c = g_ptr_array_index(all.configs, i);
      double rc = -d.c_dual[c->type];
      for (int r = 0; r < c->n; r++)
        rc += d.value[(size_t)c->type * nmk + c->items[r]];
      assert_true(fabs(rc + gaps[k]) > 1e-6); /* no tie at the floor */
      above += rc > -gaps[k];
    }
    int listed = cs_milp_cfg_add_improving(&ms, &d, gaps[k], 1000000);
    print_message("gap %.0f: %d listed, %d by brute force\n", gaps[k], listed, above);
    assert_int_equal(listed, above);
  }
  cs_milp_cfg_duals_clear(&d);
  cs_milp_cfg_clear(&ms);
  cs_milp_cfg_clear(&all);
  cs_milp_problem_clear(&pb);
  for (int m = 0; m < x.in.n_models; m++)
    cs_model_options_clear(&cand[m]);
  g_free(cand);
}

/* "auto" keeps the per-GPU model on the thesis' sizes and solves
 * configurations beyond. */
static void test_auto_choice(void **state)
{
  Cluster x;
  cluster(&x, 5, 6, 200, 600, 1, *state);
  CsMilpOptions opt = options(CS_CREQ_AO, CS_MILP_FORM_AUTO, 0);
  CsMilpInfo info;
  CsPlacement *p = cs_milp_place(&x.in, &opt, &info, NULL);
  assert_non_null(p);
  assert_false(info.configurations);
  assert_null(strstr(p->log->str, "configuration formulation"));
  assert_null(strstr(p->log->str, "is not used"));
  cs_placement_free(p);
  /* An enumerate_limit that this size does not use is said, not dropped. */
  CsMilpOptions limited = options(CS_CREQ_AO, CS_MILP_FORM_AUTO, 100);
  p = cs_milp_place(&x.in, &limited, &info, NULL);
  assert_non_null(p);
  assert_false(info.configurations);
  assert_non_null(strstr(p->log->str, "enumerate_limit 100 is not used"));
  cs_placement_free(p);
  cluster(&x, 5, 9, 200, 600, 1, *state);
  p = cs_milp_place(&x.in, &opt, &info, NULL);
  assert_non_null(p);
  assert_true(info.configurations);
  assert_non_null(strstr(p->log->str, "configuration formulation"));
  cs_placement_free(p);
}

/* Time up at once (during column generation and at the integer solve's
 * first callback): still a feasible placement, worth at least the greedy
 * start, with no claim of optimality. */
static void test_time_up_keeps_a_placement(void **state)
{
  Cluster x;
  cluster(&x, 16, 64, 2000, 9000, 7, *state);
  for (int generated = 0; generated < 2; generated++) {
    int asked = 0;
    CsMilpOptions opt = options(CS_CREQ_AO, CS_MILP_FORM_CONFIGURATIONS, generated ? -1 : 0);
    opt.time_up = up_at_once;
    opt.time_up_data = &asked;
    CsMilpInfo info;
    GError *err = NULL;
    CsPlacement *p = cs_milp_place(&x.in, &opt, &info, &err);
    assert_non_null(p);
    assert_true(asked >= 1);
    assert_true(info.status == CS_MILP_HEURISTIC || info.status == CS_MILP_FEASIBLE);
    assert_true(info.status != CS_MILP_FEASIBLE || (isfinite(info.gap) && info.gap > 0.0));
    if (generated)
      assert_int_equal(info.cg_iterations, 0);
    assert_null(strstr(p->log->str, "violates a constraint"));
    double start = greedy_start_of(p);
    assert_true(p->expected_total >= start - 1e-6);
    assert_float_equal(check_placement(&x, p, CS_CREQ_AO, NULL), p->expected_total, 1e-6);
    cs_placement_free(p);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_methods_agree),
    cmocka_unit_test(test_bound_when_not_proven),
    cmocka_unit_test(test_lagrangian_bound_when_cut),
    cmocka_unit_test(test_reduced_costs),
    cmocka_unit_test(test_auto_choice),
    cmocka_unit_test(test_time_up_keeps_a_placement),
  };
  return cmocka_run_group_tests(tests, thesis_profiles_setup, thesis_profiles_teardown);
}
