/* The MILP placement's registry entries: its JSON parameters (milp.c has
 * the model and the solve). */
#include "milp.h"

#include <math.h>
#include <string.h>

#include "milp_internal.h"
#include "placement_policies.h"

/* Reads "max_replicas": a number for all models or {"model": number}. *out is
 * left NULL when absent, else n_models entries (caller g_free()s). */
static gboolean read_max_replicas(const CsPlacementProblem *in, CsParams *params, int **out,
                                  GError **error)
{
  *out = NULL;
  CsParams *node = cs_params_get(params, "max_replicas");
  if (!node)
    return TRUE;
  int all = in->n_gpus;
  if (cs_params_kind(node) == CS_PARAMS_NUMBER) {
    if (!cs_params_int(params, "max_replicas", TRUE, 1, G_MAXINT, &all, error))
      return FALSE;
    *out = g_new(int, MAX(in->n_models, 1));
    for (int m = 0; m < in->n_models; m++)
      (*out)[m] = all;
    return TRUE;
  }
  if (cs_params_kind(node) != CS_PARAMS_OBJECT)
    return cs_params_fail(node, error, "expected a number or an object {\"model\": number}, got %s",
                          cs_params_kind_name(node));
  int *v = g_new(int, MAX(in->n_models, 1));
  for (int m = 0; m < in->n_models; m++)
    v[m] = in->n_gpus;
  gboolean ok = TRUE;
  for (int i = 0; ok && i < cs_params_size(node); i++) {
    CsParams *item = cs_params_at(node, i);
    const char *name = cs_params_name(item);
    int m = 0;
    while (m < in->n_models && strcmp(in->models[m].name, name) != 0)
      m++;
    if (m == in->n_models)
      ok = cs_params_fail(item, error, "model \"%s\" has no client in the scenario", name);
    else
      ok = cs_params_int(node, name, TRUE, 0, G_MAXINT, &v[m], error);
  }
  if (!ok) {
    g_free(v);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

static CsPlacement *milp_place_params(const CsPlacementProblem *in, CsParams *params,
                                      const char *policy, CsCreqMetric default_metric,
                                      gboolean metric_fixed, GError **error)
{
  static const char *const keys[] = { "policy",       "metric",      "time_limit_s",
                                      "prefer_small_batch", "max_replicas", "batch_sizes",
                                      "mps_shares",   "solver",      "formulation",
                                      "enumerate_limit", "node_limit", NULL };
  CsMilpOptions opt = { .metric = default_metric, .time_limit_s = 60.0 };
  int *batches = NULL, *max_rep = NULL;
  cs_params_doc(params, "metric", "Creq column: ao, wao or wsm (fixed by ao-milp and wsm-milp)");
  cs_params_doc(params, "time_limit_s", "wall-time limit of the whole call (candidates, construction and both solves)");
  cs_params_doc(params, "node_limit", "each branch and bound explores at most this many nodes; given alone it replaces the wall-clock limit");
  cs_params_doc_default(params, "node_limit", "none");
  cs_params_doc(params, "prefer_small_batch", "lexicographic tie-break towards smaller batches (false: the thesis' behaviour)");
  cs_params_doc(params, "max_replicas", "replicas per model: a number for every model, or {\"model\": n} for some");
  cs_params_doc_default(params, "max_replicas", "the number of GPUs");
  cs_params_doc(params, "batch_sizes", "candidate batch sizes, an array of distinct integers in [1, 1048576] (the same as Usher's)");
  cs_params_doc_default(params, "batch_sizes", "4, 8, 16, 32, 64, 128");
  cs_params_doc(params, "mps_shares", "give replicas MPS share Creq/100 (the thesis ran the MILPs without shares)");
  cs_params_doc(params, "solver", "glpk, or cbc (COIN-OR CBC, when the build found it)");
  cs_params_doc(params, "formulation", "per_gpu (the thesis' model), configurations (GPUs counted per configuration) or auto (per_gpu on at most 8 GPUs and 8 models)");
  cs_params_doc(params, "enumerate_limit", "configurations only: list every configuration when there are at most this many (0: 20,000; -1: always column generation)");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_place_read_metric(params, "metric", metric_fixed ? policy : NULL, "milp", &opt.metric,
                         cs_error_list_slot(problems));
    cs_params_double(params, "time_limit_s", FALSE, 0.001, 1e6, &opt.time_limit_s,
                     cs_error_list_slot(problems));
    cs_params_int(params, "node_limit", FALSE, 1, G_MAXINT, &opt.node_limit,
                  cs_error_list_slot(problems));
    cs_params_bool(params, "prefer_small_batch", FALSE, &opt.prefer_small_batch,
                   cs_error_list_slot(problems));
    cs_params_bool(params, "mps_shares", FALSE, &opt.mps_shares, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  /* node_limit alone: no wall clock at all, so a cut solve gives the same
   * placement on any machine (milp.h); with time_limit_s both apply. */
  if (opt.node_limit > 0 && !cs_params_has(params, "time_limit_s"))
    opt.time_limit_s = INFINITY;
  const char *solver = "glpk";
  if (!cs_params_string(params, "solver", FALSE, &solver, error))
    return NULL;
  gboolean cbc = strcmp(solver, "cbc") == 0;
  if ((cbc && !cs_milp_have_cbc()) || (!cbc && strcmp(solver, "glpk") != 0)) {
#ifdef CS_HAVE_CBC
    char *why = NULL;
    if (cbc && !cs_milp_cbc_load(&why)) {
      cs_params_fail(cs_params_get(params, "solver"), error, "\"cbc\": %s", why);
      g_free(why);
      return NULL;
    }
#endif
    if (cbc)
      cs_params_fail(cs_params_get(params, "solver"), error,
                     "\"cbc\" is not in this build (install coinor-libcbc-dev, then "
                     "reconfigure: meson setup --reconfigure BUILD_DIR)");
    else
      cs_params_fail(cs_params_get(params, "solver"), error,
                     "expected \"glpk\" or \"cbc\", got \"%s\"", solver);
    return NULL;
  }
  opt.solver = cbc ? CS_MILP_SOLVER_CBC : CS_MILP_SOLVER_GLPK;
  const char *form = "auto";
  if (!cs_params_string(params, "formulation", FALSE, &form, error))
    return NULL;
  if (!cs_params_int(params, "enumerate_limit", FALSE, -1, G_MAXINT, &opt.enumerate_limit,
                     error))
    return NULL;
  if (strcmp(form, "auto") == 0)
    opt.formulation = CS_MILP_FORM_AUTO;
  else if (strcmp(form, "per_gpu") == 0)
    opt.formulation = CS_MILP_FORM_PER_GPU;
  else if (strcmp(form, "configurations") == 0)
    opt.formulation = CS_MILP_FORM_CONFIGURATIONS;
  else
    return cs_params_fail(cs_params_get(params, "formulation"), error,
                          "expected \"auto\", \"per_gpu\" or \"configurations\", got \"%s\"",
                          form),
           NULL;
  if (opt.formulation == CS_MILP_FORM_PER_GPU && cs_params_has(params, "enumerate_limit"))
    return cs_params_fail(params, error,
                          "\"enumerate_limit\" sets how the configuration formulation finds its "
                          "columns; with \"formulation\": \"per_gpu\" it would be ignored"),
           NULL;
  if (!read_max_replicas(in, params, &max_rep, error))
    return NULL;
  if (!cs_place_read_batch_sizes(params, &batches, &opt.n_batches, error)) {
    g_free(max_rep);
    return NULL;
  }
  opt.batches = batches;
  opt.max_replicas = max_rep;
  if (cs_params_describing(params)) { /* the catalogue needs the parameters only */
    g_free(batches);
    g_free(max_rep);
    return NULL;
  }
  CsPlacement *p = cs_milp_place(in, &opt, NULL, error);
  g_free(batches);
  g_free(max_rep);
  return p;
}

static CsPlacement *milp_generic(const CsPlacementProblem *in, CsParams *params, void *user_data,
                                 GError **error)
{
  (void)user_data;
  return milp_place_params(in, params, "milp", CS_CREQ_AO, FALSE, error);
}

static CsPlacement *milp_ao(const CsPlacementProblem *in, CsParams *params, void *user_data,
                            GError **error)
{
  (void)user_data;
  return milp_place_params(in, params, "ao-milp", CS_CREQ_AO, TRUE, error);
}

static CsPlacement *milp_wsm(const CsPlacementProblem *in, CsParams *params, void *user_data,
                             GError **error)
{
  (void)user_data;
  return milp_place_params(in, params, "wsm-milp", CS_CREQ_WSM, TRUE, error);
}

const CsPlacementPolicy cs_place_milp = {
  .name = "milp",
  .description = "thesis MILP (GLPK or CBC): maximise expected goodput over batch size and GPU "
                 "of every replica; metric ao (default), wao or wsm; per GPU on the thesis' "
                 "sizes, GPUs counted per configuration beyond",
  .place = milp_generic,
};

const CsPlacementPolicy cs_place_ao_milp = {
  .name = "ao-milp",
  .description = "MILP with achieved occupancy as Creq (thesis AO-MILP)",
  .place = milp_ao,
};

const CsPlacementPolicy cs_place_wsm_milp = {
  .name = "wsm-milp",
  .description = "MILP with weighted average SM utilisation as Creq (thesis WSM-MILP)",
  .place = milp_wsm,
};
