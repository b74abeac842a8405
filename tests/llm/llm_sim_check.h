/* The helpers of the LLM simulation's tests (test_llm_sim.c,
 * test_llm_sim_disagg.c): a deployment of the tiny made-up model
 * (llm_tiny.h, included first), a run that must succeed, one that must fail
 * naming what, and a comparison of doubles. Definitions are static: included
 * by one test program each. */
#ifndef CS_TESTS_LLM_SIM_CHECK_H
#define CS_TESTS_LLM_SIM_CHECK_H

#include <math.h>
#include <string.h>

#include "llm/llm_sim.h"

G_GNUC_UNUSED static void config(CsLlmSimConfig *c, CsLlmSchedPolicy pol, int64_t blocks, int replicas,
                   CsLlmRouter router)
{
  memset(c, 0, sizeof *c);
  c->exec = (CsLlmExecConfig){ .model = &TINY_MODEL, .ops = ops, .devices_per_node = 1, .tp = 1,
                               .pp = 1, .attention = att };
  cs_llm_sched_config_init(&c->sched, pol);
  c->sched.num_blocks = blocks;
  c->replicas = replicas;
  c->router = router;
}

G_GNUC_UNUSED static CsLlmSimResult *run(const CsLlmSimConfig *c, const CsLlmSimRequest *r, int n)
{
  GError *e = NULL;
  CsLlmSimResult *res = cs_llm_sim_run(c, r, n, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(res);
  return res;
}

G_GNUC_UNUSED static void assert_close(double a, double b)
{
  if (!(fabs(a - b) <= 1e-9 * fmax(1, fabs(b)))) {
    print_error("%.17g, expected %.17g\n", a, b);
    fail();
  }
}

G_GNUC_UNUSED static void expect_error(const CsLlmSimConfig *c, const CsLlmSimRequest *r, int n,
                         const char *want)
{
  GError *e = NULL;
  assert_null(cs_llm_sim_run(c, r, n, &e));
  assert_non_null(e);
  if (!strstr(e->message, want))
    print_error("missing \"%s\" in: %s\n", want, e->message);
  assert_non_null(strstr(e->message, want));
  g_error_free(e);
}

#endif
