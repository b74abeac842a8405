/* The framework's side of running a placement policy: the checks of what it
 * returns, and the calls through the problem's simulator. The placement
 * itself, the value a policy builds, is the engine's (sim/placement_value.c). */
#include "placement.h"

#include <glpk.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "common/json_input.h"
#include "common/params_internal.h"

G_DEFINE_QUARK(cs-placement-error-quark, cs_placement_error)

/* A user's policy is checked like input: what it returns must make sense
 * before the simulator runs it. */
/* A policy's output that makes no sense: its failure, not the scenario's. */
static gboolean policy_fail(GError **error, const char *file, const char *path, const char *fmt,
                            ...) G_GNUC_PRINTF(4, 5);
static gboolean policy_fail(GError **error, const char *file, const char *path, const char *fmt,
                            ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "%s: %s: %s", file, path, msg);
  g_free(msg);
  return FALSE;
}

static gboolean check_result(const CsPlacementPolicy *policy, const CsPlacementProblem *pb,
                             const CsPlacement *p, const char *file, const char *path,
                             GError **error)
{
  if (p->n_models != pb->n_models)
    return policy_fail(error, file, path,
                        "policy \"%s\" returned a placement for %d models, the scenario has %d",
                        policy->name, p->n_models, pb->n_models);
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    const char *what = NULL;
    if (r->model < 0 || r->model >= pb->n_models)
      what = "its model index is out of range";
    else if (r->gpu < 0 || r->gpu >= pb->n_gpus)
      what = "its GPU index is out of range";
    else if (r->batch < 1)
      what = "its batch size is below 1";
    else if (!(r->mps_share >= 0.0 && r->mps_share <= 1.0))
      what = "its MPS share is outside [0, 1]";
    else if (pb->profiles && !cs_profile_set_lookup(pb->profiles, pb->gpus[r->gpu].gpu_type,
                                    pb->models[r->model].name))
      what = "its model has no profile on the GPU's type";
    if (what)
      return policy_fail(error, file, path,
                          "policy \"%s\" returned replica %u (model %d, gpu %d, batch %d, share "
                          "%g): %s",
                          policy->name, i, r->model, r->gpu, r->batch, r->mps_share, what);
  }
  for (int m = 0; m < p->n_models; m++)
    if (!(isfinite(p->expected_goodput[m]) && p->expected_goodput[m] >= 0.0))
      return policy_fail(error, file, path,
                          "policy \"%s\" expects goodput %g req/s for %s: expected a finite "
                          "number >= 0",
                          policy->name, p->expected_goodput[m], pb->models[m].name);
  return TRUE;
}

/* A model cannot be served more requests than it is sent: a policy's
 * prediction above the model's planned rate (a simulated goodput that drew
 * more arrivals than the mean, a capacity) is capped there, as
 * cs_placement_set_expected_goodput promises, and the log says so. */
static void cap_expected_goodput(const CsPlacementProblem *pb, CsPlacement *p)
{
  for (int m = 0; m < p->n_models && m < pb->n_models; m++) {
    double rate = pb->models[m].rate_rps, e = p->expected_goodput[m];
    if (!(e > rate))
      continue;
    cs_placement_log(p, "%s: expected goodput %.4g req/s capped at its rate, %.4g req/s\n",
                     pb->models[m].name, e, rate);
    cs_placement_set_expected_goodput(p, m, rate);
  }
}

CsPlacement *cs_placement_run(const CsPlacementPolicy *policy, void *user_data,
                              const CsPlacementProblem *problem, const cJSON *params,
                              const char *file, const char *path, GError **error)
{
  cJSON *empty = params ? NULL : cJSON_CreateObject();
  CsParams *view = cs_params_new_root(params ? params : empty, file, path);
  cs_params_mark_known(view, "policy");
  CsPlacement *p = NULL;
  if (cs_json_expect_object(params ? params : empty, file, path, error)) {
    GError *perr = NULL;
    p = policy->place(problem, view, user_data, &perr);
    if (!p && !perr)
      g_set_error(&perr, CS_ERROR, CS_ERROR_POLICY, "policy \"%s\" returned no placement and "
                  "no error", policy->name);
    if (perr && p) { /* error set means failure, whatever was returned */
      cs_placement_free(p);
      p = NULL;
    }
    if (perr) {
      /* Errors from the parameter readers name the file and path already;
       * a policy's own failures (no solution, solver) do not. */
      if (perr->domain == CS_ERROR && perr->code != CS_ERROR_POLICY)
        g_propagate_error(error, perr);
      else {
        g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "%s: %s: %s", file, path, perr->message);
        g_error_free(perr);
      }
    }
    if (p && (!cs_params_check_asked(view, error) ||
              !check_result(policy, problem, p, file, path, error))) {
      cs_placement_free(p);
      p = NULL;
    }
    if (p)
      cap_expected_goodput(problem, p);
  }
  cs_params_free(view);
  cJSON_Delete(empty);
  return p;
}

static gboolean no_simulator(const CsPlacementProblem *pb, const char *call, GError **error)
{
  if (pb && pb->simulator)
    return FALSE;
  g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
              "%s: the problem has no scenario to simulate (outside a scenario's compilation, "
              "or inside a policy another one runs)", call);
  return TRUE;
}

gboolean cs_placement_simulate(const CsPlacementProblem *pb, const CsPlacement *candidate,
                               const uint64_t *seeds, int n_seeds, double duration_s,
                               CsPlacementScore *out, GError **error)
{
  if (no_simulator(pb, "cs_placement_simulate", error))
    return FALSE;
  return pb->simulator->simulate(pb, candidate, seeds, n_seeds, duration_s, out, error);
}

CsPlacement *cs_placement_problem_place(const CsPlacementProblem *pb, const char *params_json,
                                        GError **error)
{
  if (no_simulator(pb, "cs_placement_problem_place", error))
    return NULL;
  return pb->simulator->place(pb, params_json, error);
}

void cs_placement_thread_release(void)
{
  glp_free_env();
}
