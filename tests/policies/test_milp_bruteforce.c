/* The MILP against brute force on small instances of the V100 profile, and of
 * mixed clusters of the V100 and a second GPU type ("slow": every latency
 * doubled, Creq and Mreq changed) on which each GPU's own coefficients must be
 * used, not GPU 0's: every assignment of (batch size, set of GPUs) per model
 * is enumerated, and
 * the MILP must reach the best total expected goodput; with
 * prefer_small_batch its placement must also be lexicographically smallest
 * among those optima: first the sum of the chosen batch sizes, then the
 * number of replicas (milp.h). The brute force shares only the per-batch
 * coefficients (cs_model_options_init) with the code under test, not the
 * optimisation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "policies/placement/placement.h"
#include "policies/placement/milp.h"
#include "policies/placement/place_common.h"

#define MAX_G 3
#define MAX_M 3

static const char *const names[] = { "alexnet", "resnet50", "densenet121", "mobilenet_v2",
                                     "vgg19",   "bert",     "gpt2" };
static const int batches[] = { 4, 16, 64 };

typedef struct {
  double total;
  int batch_sum, replicas;
} Score;

typedef struct {
  CsModelOptions opts[MAX_M][MAX_G]; /* per model and GPU: that GPU's type's candidates */
  const CsPlacementModel *models;
  int nm, ng;
  /* search state */
  double creq[MAX_G], mreq[MAX_G];
  double best_total;  /* pass 1: the best goodput */
  Score best;         /* pass 2: the lexicographic best among optima */
  gboolean lex_pass;
  double total;
  int batch_sum, replicas;
} Brute;

static void visit(Brute *b, int m)
{
  if (m == b->nm) {
    if (!b->lex_pass) {
      b->best_total = MAX(b->best_total, b->total);
      return;
    }
    if (b->total < b->best_total - 1e-7)
      return;
    if (b->batch_sum < b->best.batch_sum ||
        (b->batch_sum == b->best.batch_sum && b->replicas < b->best.replicas))
      b->best = (Score){ b->total, b->batch_sum, b->replicas };
    return;
  }
  visit(b, m + 1); /* no replica of model m */
  /* One batch size per model (the MILP's y[m,b]), on each chosen GPU with the
   * Creq, Mreq and goodput of that GPU's type. */
  for (int k = 0; k < (int)G_N_ELEMENTS(batches); k++) {
    const CsBatchOption *on[MAX_G] = { NULL };
    for (int g = 0; g < b->ng; g++) {
      const CsModelOptions *o = &b->opts[m][g];
      for (int i = 0; i < o->n; i++)
        if (o->opts[i].batch == batches[k] && o->opts[i].meets_slo)
          on[g] = &o->opts[i];
    }
    for (int set = 1; set < (1 << b->ng); set++) {
      gboolean fits = TRUE;
      int count = 0;
      double goodput = 0;
      for (int g = 0; g < b->ng; g++)
        if (set & (1 << g)) {
          count++;
          fits &= on[g] && b->creq[g] + on[g]->creq <= 100.0 + 1e-9 &&
                  b->mreq[g] + on[g]->mreq <= 100.0 + 1e-9;
          if (on[g])
            goodput += on[g]->goodput;
        }
      if (!fits)
        continue;
      for (int g = 0; g < b->ng; g++)
        if (set & (1 << g)) {
          b->creq[g] += on[g]->creq;
          b->mreq[g] += on[g]->mreq;
        }
      double w = MIN(b->models[m].rate_rps, goodput);
      b->total += w;
      b->batch_sum += batches[k];
      b->replicas += count;
      visit(b, m + 1);
      b->total -= w;
      b->batch_sum -= batches[k];
      b->replicas -= count;
      for (int g = 0; g < b->ng; g++)
        if (set & (1 << g)) {
          b->creq[g] -= on[g]->creq;
          b->mreq[g] -= on[g]->mreq;
        }
    }
  }
}

/* A second GPU type "slow" for the models of names: each V100 point at half
 * the throughput (twice the latency), a Creq of 70 % and an Mreq of 150 % of
 * the V100's (capped at 100), so that the best batch size and how many
 * replicas fit differ between the types. JSON text, g_free it. */
static char *slow_profile(const CsProfileSet *set)
{
  GString *s = g_string_new("{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": "
                            "\"test\", \"gpu_types\": [{\"name\": \"slow\"}], \"models\": [");
  for (guint n = 0; n < G_N_ELEMENTS(names); n++) {
    const CsModelProfile *p = cs_profile_set_lookup(set, "v100", names[n]);
    g_string_append_printf(s, "%s{\"gpu\": \"slow\", \"model\": \"%s\", \"batches\": [",
                           n ? ", " : "", names[n]);
    for (int i = 0; i < cs_model_profile_n_points(p); i++) {
      const CsBatchPoint *pt = cs_model_profile_point_at(p, i);
      char lat[G_ASCII_DTOSTR_BUF_SIZE], thr[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_dtostr(lat, sizeof lat, 2.0 * (double)pt->latency_ns * 1e-6);
      g_ascii_dtostr(thr, sizeof thr, cs_model_profile_throughput_rps(p, pt->batch) / 2.0);
      g_string_append_printf(s, "%s{\"batch\": %d, \"latency_ms\": %s, \"throughput_rps\": %s",
                             i ? ", " : "", pt->batch, lat, thr);
      if (!isnan(pt->mreq_pct)) {
        char v[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_dtostr(v, sizeof v, MIN(100.0, 1.5 * pt->mreq_pct));
        g_string_append_printf(s, ", \"mreq_pct\": %s", v);
      }
      g_string_append(s, ", \"creq_pct\": {");
      int written = 0;
      for (int c = 0; c < CS_CREQ_N_METRICS; c++)
        if (!isnan(pt->creq_pct[c])) {
          char v[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_dtostr(v, sizeof v, 0.7 * pt->creq_pct[c]);
          g_string_append_printf(s, "%s\"%s\": %s", written++ ? ", " : "",
                                 c == CS_CREQ_AO ? "ao" : c == CS_CREQ_WAO ? "wao" : "wsm", v);
        }
      g_string_append(s, "}}");
    }
    g_string_append(s, "]}");
  }
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

static void test_milp_against_brute_force(void **state)
{
  (void)state;
  const char *root = g_getenv("CS_SOURCE_ROOT");
  char *path = g_build_filename(root ? root : ".", "data", "profiles", "v100_thesis.json", NULL);
  CsProfileSet *set = cs_profile_set_new();
  GError *err = NULL;
  if (!cs_profile_set_load_file(set, path, &err))
    fail_msg("%s", err->message);
  g_free(path);
  char *slow = slow_profile(set);
  if (!cs_profile_set_load_data(set, slow, "slow.json", &err))
    fail_msg("%s", err->message);
  g_free(slow);
  GRand *rng = g_rand_new_with_seed(20261123);
  static const double slos[] = { 50, 100, 200, 400 };
  int tie_broken = 0, mixed = 0, types_differ = 0, cg_rounds = 0;
  /* Rounds 0..149 on V100s only (as before mixed clusters were tested),
   * 150..299 on a random mix of V100 and "slow" GPUs. */
  for (int round = 0; round < 300; round++) {
    CsPlacementModel models[MAX_M];
    CsPlacementGpu gpus[MAX_G];
    int nm = g_rand_int_range(rng, 1, MAX_M + 1), ng = g_rand_int_range(rng, 1, MAX_G + 1);
    gboolean taken[G_N_ELEMENTS(names)] = { FALSE };
    for (int m = 0; m < nm; m++) {
      int k;
      do
        k = g_rand_int_range(rng, 0, G_N_ELEMENTS(names));
      while (taken[k]);
      taken[k] = TRUE;
      models[m] = (CsPlacementModel){ .name = names[k],
                                      .rate_rps = g_rand_double_range(rng, 20.0, 3000.0),
                                      .slo_ms = slos[g_rand_int_range(rng, 0, 4)] };
    }
    for (int g = 0; g < ng; g++)
      gpus[g] = (CsPlacementGpu){
        .gpu_type = round >= 150 && g_rand_boolean(rng) ? "slow" : "v100" };
    for (int g = 1; g < ng; g++)
      if (strcmp(gpus[g].gpu_type, gpus[0].gpu_type) != 0) {
        mixed++;
        break;
      }
    CsCreqMetric metric = (CsCreqMetric)g_rand_int_range(rng, 0, CS_CREQ_N_METRICS);
    CsPlacementProblem in = { .models = models, .n_models = nm, .gpus = gpus, .n_gpus = ng,
                            .profiles = set };

    Brute b = { .models = models, .nm = nm, .ng = ng };
    for (int m = 0; m < nm; m++)
      for (int g = 0; g < ng; g++)
        assert_true(cs_model_options_init(&b.opts[m][g], set, gpus[g].gpu_type, &models[m],
                                          metric, batches, G_N_ELEMENTS(batches), "test", &err));
    visit(&b, 0);
    b.lex_pass = TRUE;
    b.best = (Score){ 0, INT_MAX, INT_MAX };
    visit(&b, 0);

    /* form 0: the per-GPU model; 1: the configuration model with every
     * configuration listed; 2: the same by column generation and the
     * configurations whose reduced cost could still pay. */
    for (int form = 0; form < 3; form++)
    for (int prefer = 0; prefer < 2; prefer++) {
      CsMilpOptions opt = { .metric = metric, .time_limit_s = 1e6, /* no clock: a slow machine times the test out, never changes it */
                            .prefer_small_batch = prefer, .batches = batches,
                            .n_batches = G_N_ELEMENTS(batches),
                            .formulation = form ? CS_MILP_FORM_CONFIGURATIONS
                                                : CS_MILP_FORM_PER_GPU,
                            .enumerate_limit = form == 2 ? -1 : 0 };
      CsMilpInfo info;
      CsPlacement *p = cs_milp_place(&in, &opt, &info, &err);
      if (!p)
        fail_msg("round %d: %s", round, err->message);
      if (fabs(p->expected_total - b.best_total) > 1e-6)
        fail_msg("round %d, formulation %d: MILP %.9f, brute force %.9f req/s\n%s", round, form,
                 p->expected_total, b.best_total, p->log->str);
      if (form > 0 && info.status != CS_MILP_EMPTY) {
        /* Proven optimal, and the bound it proved holds. */
        assert_int_equal(info.status, CS_MILP_OPTIMAL);
        assert_true(info.configurations);
        assert_true(info.enumerated == (form == 1) ||
                    strstr(p->log->str, "greedy start serves every rate"));
        assert_true(info.bound >= b.best_total - 1e-6);
        cg_rounds += info.cg_iterations;
      }
      /* The tie-break is exact only over every configuration. */
      if (prefer && form < 2) {
        int batch_of[MAX_M] = { 0 }, replicas = (int)p->replicas->len, batch_sum = 0;
        for (guint r = 0; r < p->replicas->len; r++) {
          const CsReplica *rep = &g_array_index(p->replicas, CsReplica, r);
          batch_of[rep->model] = rep->batch;
        }
        for (int m = 0; m < nm; m++)
          batch_sum += batch_of[m];
        if (batch_sum != b.best.batch_sum || replicas != b.best.replicas)
          fail_msg("round %d: prefer_small_batch gave batch sum %d with %d replicas; the "
                   "smallest optimum is %d with %d\n%s",
                   round, batch_sum, replicas, b.best.batch_sum, b.best.replicas, p->log->str);
        tie_broken += form == 0 && b.best.replicas < nm * ng;
      }
      cs_placement_free(p);
    }
    /* The optimum a solver reading GPU 0's coefficients for every GPU would
     * report: counted to show the mixed rounds tell the two apart. */
    if (round >= 150) {
      Brute b0 = { .models = models, .nm = nm, .ng = ng };
      for (int m = 0; m < nm; m++)
        for (int g = 0; g < ng; g++)
          assert_true(cs_model_options_init(&b0.opts[m][g], set, gpus[0].gpu_type, &models[m],
                                            metric, batches, G_N_ELEMENTS(batches), "test",
                                            &err));
      visit(&b0, 0);
      types_differ += fabs(b0.best_total - b.best_total) > 1e-6;
      for (int m = 0; m < nm; m++)
        for (int g = 0; g < ng; g++)
          cs_model_options_clear(&b0.opts[m][g]);
    }
    for (int m = 0; m < nm; m++)
      for (int g = 0; g < ng; g++)
        cs_model_options_clear(&b.opts[m][g]);
  }
  assert_true(mixed >= 50);
  /* Rounds where GPU 0's coefficients everywhere would give another optimum. */
  assert_true(types_differ >= 20);
  /* Instances where fewer replicas than "every model everywhere" suffice:
   * the replica term had something to decide. */
  assert_true(tie_broken >= 50);
  /* Column generation had rounds to run (an LP that priced columns). */
  assert_true(cg_rounds >= 300);
  g_rand_free(rng);
  cs_profile_set_free(set);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_milp_against_brute_force),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
