/* Tests of the joint interference fit (src/profiles/interference_fit.c) on
 * observations made from known coefficients: the fit must give back the
 * coefficients that made them, each group its own c, x and w, the share
 * exponent shared; and refuse what it cannot fit. The fit on the shipped
 * measurements is checked against an independent one in test_gpu_exec.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "profiles/interference_fit.h"

#define assert_close(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* slowdown 1 + c b_a^x (4 s_a s_v)^z max(phi, 0.05)^w, written out */
static double made(double c, double x, double z, double w, const CsPairObs *o)
{
  return 1.0 + c * pow(o->batch_a, x) * pow(4.0 * o->share_a * o->share_v, z) *
               pow(fmax(o->fixed_v, 0.05), w);
}

/* Two groups on a grid of batches, shares and fixed parts (phi down to
 * 0.01, below the floor): group 0 without a victim term, group 1 with. */
static int make_obs(CsPairObs *obs)
{
  static const int batches[] = { 1, 2, 4, 8, 16, 32, 64 };
  static const double shares[] = { 0.2, 0.4, 0.5, 0.6, 0.8 };
  static const double fixed[] = { 0.01, 0.1, 0.4, 0.9 };
  int n = 0;
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 4; k++) {
          CsPairObs o = { .victim = 0, .aggressor = 1, .batch_v = 4, .batch_a = batches[i],
                          .share_v = shares[j], .share_a = 1.0 - shares[j],
                          .fixed_v = fixed[k], .group = g };
          o.ratio = g == 0 ? made(0.08, 0.14, 0.42, 0.0, &o) : made(0.55, 0.04, 0.42, 0.7, &o);
          obs[n++] = o;
        }
  return n;
}

static void test_joint_recovers(void **state)
{
  (void)state;
  CsPairObs obs[280];
  int n = make_obs(obs);
  gboolean fit_fixed[2] = { FALSE, TRUE };
  CsJointFit fit;
  assert_true(cs_fit_joint(obs, n, NULL, 2, fit_fixed, &fit));
  assert_true(fit.converged);
  assert_int_equal(fit.n, 280);
  assert_int_equal(fit.n_params, 6);
  assert_int_equal(fit.group[0].n, 140);
  assert_close(fit.group[0].c, 0.08, 1e-9);
  assert_close(fit.group[0].x, 0.14, 1e-9);
  assert_close(fit.group[0].w, 0.0, 0);
  assert_close(fit.group[1].c, 0.55, 1e-9);
  assert_close(fit.group[1].x, 0.04, 1e-9);
  assert_close(fit.group[1].w, 0.7, 1e-9);
  assert_close(fit.group[0].z, 0.42, 1e-9);
  assert_close(fit.group[1].z, 0.42, 1e-9);
  assert_true(fit.sigma < 1e-9);
  /* the fitted slowdown is the one that made each observation */
  for (int i = 0; i < n; i++)
    assert_close(cs_batch_share_slowdown(&fit.group[obs[i].group], &obs[i]), obs[i].ratio, 1e-9);
  /* a scale on the fitted model of an exact pair is 1; on a pair whose
   * excess is twice the model's, 2 */
  gboolean use[280];
  for (int i = 0; i < n; i++) {
    use[i] = obs[i].group == 1;
    if (use[i])
      obs[i].ratio = 1.0 + 2.0 * (obs[i].ratio - 1.0);
  }
  assert_close(cs_fit_pair_scale(obs, n, use, &fit.group[1]), 2.0, 1e-9);
}

static void test_joint_one_group_is_batch_share(void **state)
{
  (void)state;
  CsPairObs obs[280];
  int n = make_obs(obs);
  gboolean use[280];
  for (int i = 0; i < n; i++)
    use[i] = obs[i].group == 0;
  CsJointFit joint;
  CsBatchShareFit alone;
  assert_true(cs_fit_joint(obs, n, use, 1, NULL, &joint));
  assert_true(cs_fit_batch_share(obs, n, use, &alone));
  assert_close(joint.group[0].c, alone.c, 1e-9);
  assert_close(joint.group[0].x, alone.x, 1e-9);
  assert_close(joint.group[0].z, alone.z, 1e-9);
  assert_close(alone.w, 0.0, 0);
}

static void test_joint_refuses(void **state)
{
  (void)state;
  CsPairObs obs[280];
  int n = make_obs(obs);
  CsJointFit fit;
  assert_false(cs_fit_joint(obs, n, NULL, 0, NULL, &fit));
  assert_false(cs_fit_joint(obs, n, NULL, CS_JOINT_MAX_GROUPS + 1, NULL, &fit));
  /* a group without observations */
  assert_false(cs_fit_joint(obs, n, NULL, 3, NULL, &fit));
  /* fewer than 4 in a group */
  gboolean use[280];
  for (int i = 0; i < n; i++)
    use[i] = obs[i].group == 0 || i % 70 == 0;
  assert_false(cs_fit_joint(obs, n, use, 2, NULL, &fit));
  obs[3].ratio = 0.0;
  assert_false(cs_fit_joint(obs, n, NULL, 2, NULL, &fit));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_joint_recovers),
    cmocka_unit_test(test_joint_one_group_is_batch_share),
    cmocka_unit_test(test_joint_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
