/* Simulating a placement candidate on the scenario being compiled
 * (clustersim/placement.h: cs_placement_simulate, cs_placement_problem_place):
 * what lets a placement policy score candidates by simulation instead of an
 * analytic model.
 *
 * The simulator is a snapshot of the scenario (its JSON text, name, base
 * directory, registry and runner) taken when its placement is computed. Each
 * simulation builds a scenario of its own from the snapshot, with the
 * candidate written as a "manual" placement and the controller removed, and
 * has the runner the experiment layer handed to the scenario run it with the
 * seed set (scenario.h: CsScenarioRunner; this layer writes scenarios, the
 * one above runs them): nothing is shared between simulations, so they run
 * in parallel. A scenario compiled without a runner gives its placement
 * problem no simulator. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "policies/placement/placement.h"
#include "policies/registry_internal.h"
#include "scenario_internal.h"

typedef struct {
  CsPlacementSimulator vtable; /* first: the problem points at it */
  const CsScenario *sc; /* valid while its placement is computed */
  GMutex lock;
  char *json;           /* the scenario as compiled, JSON text: taken on first use */
  char *name;
  char *base_dir;
  CsRegistry *registry; /* a reference, or NULL: the built-ins */
  const CsScenarioRunner *runner;
} Sim;

static const Sim *sim_of(const CsPlacementProblem *pb)
{
  return (const Sim *)pb->simulator;
}

/* The snapshot's text, taken once under the lock (most policies never ask:
 * a run does not pay for printing its scenario). */
static const char *snapshot(const Sim *cs)
{
  Sim *s = (Sim *)cs;
  g_mutex_lock(&s->lock);
  if (!s->json)
    s->json = cs_scenario_to_json(s->sc);
  g_mutex_unlock(&s->lock);
  return s->json;
}

static gboolean simulate(const CsPlacementProblem *pb, const CsPlacement *candidate,
                         const uint64_t *seeds, int n_seeds, double duration_s,
                         CsPlacementScore *out, GError **error);
static CsPlacement *place(const CsPlacementProblem *pb, const char *params_json, GError **error);

CsPlacementSimulator *cs_placement_simulator_new(const CsScenario *sc)
{
  /* sc is const to the compile that calls this; the load does not write it. */
  const CsScenarioRunner *runner = g_atomic_pointer_get((gpointer *)&sc->runner);
  if (!runner)
    return NULL;
  Sim *s = g_new0(Sim, 1);
  s->runner = runner;
  s->vtable.simulate = simulate;
  s->vtable.place = place;
  s->sc = sc;
  g_mutex_init(&s->lock);
  s->name = g_strdup(sc->name);
  s->base_dir = g_strdup(sc->base_dir);
  s->registry = sc->registry ? cs_registry_ref(sc->registry) : NULL;
  return &s->vtable;
}

void cs_placement_simulator_free(CsPlacementSimulator *v)
{
  Sim *s = (Sim *)v;
  if (!s)
    return;
  g_mutex_clear(&s->lock);
  g_free(s->json);
  g_free(s->name);
  g_free(s->base_dir);
  cs_registry_unref(s->registry);
  g_free(s);
}

/* Cuts each client's measured phase to d seconds: request counts to the
 * requests the client sends in d at its rate (at least 1), durations to d,
 * a trace's window to d rounded up to whole minutes (MAF 2019 counts per
 * minute; a timestamped trace takes any length). */
static void cut_duration(cJSON *root, double d)
{
  cJSON *top = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
  if (cJSON_IsNumber(top) && top->valuedouble > d)
    cJSON_SetNumberValue(top, d);
  cJSON *clients = cJSON_GetObjectItemCaseSensitive(root, "clients");
  cJSON *c;
  cJSON_ArrayForEach(c, clients)
  {
    cJSON *req = cJSON_GetObjectItemCaseSensitive(c, "requests");
    cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
    cJSON *dur = cJSON_GetObjectItemCaseSensitive(c, "duration_s");
    if (cJSON_IsNumber(req) && cJSON_IsNumber(rate)) {
      double n = MAX(1.0, ceil(rate->valuedouble * d));
      if (req->valuedouble > n)
        cJSON_SetNumberValue(req, n);
    }
    if (cJSON_IsNumber(dur) && dur->valuedouble > d)
      cJSON_SetNumberValue(dur, d);
  }
  cJSON *trace = cJSON_GetObjectItemCaseSensitive(root, "trace");
  if (cJSON_IsObject(trace)) {
    double minutes = ceil(d / 60.0) * 60.0;
    cJSON *td = cJSON_GetObjectItemCaseSensitive(trace, "duration_s");
    if (!td)
      cJSON_AddNumberToObject(trace, "duration_s", minutes);
    else if (cJSON_IsNumber(td) && td->valuedouble > minutes)
      cJSON_SetNumberValue(td, minutes);
  }
}

/* The snapshot with candidate as a manual placement, without controller
 * and without LLM deployments (their GPUs are their own: a candidate
 * changes nothing of theirs, and is judged by the DNN models). */
static cJSON *candidate_scenario(const CsPlacementProblem *pb, const CsPlacement *candidate,
                                 double duration_s)
{
  cJSON *root = cJSON_Parse(snapshot(sim_of(pb)));
  cJSON_DeleteItemFromObjectCaseSensitive(root, "controller");
  cJSON_DeleteItemFromObjectCaseSensitive(root, "llm");
  cJSON_DeleteItemFromObjectCaseSensitive(root, "placement");
  cJSON *pl = cJSON_AddObjectToObject(root, "placement");
  cJSON_AddStringToObject(pl, "policy", "manual");
  cJSON *reps = cJSON_AddArrayToObject(pl, "replicas");
  for (int i = 0; i < cs_placement_n_replicas(candidate); i++) {
    const CsReplica *r = cs_placement_replica(candidate, i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", pb->models[r->model].name);
    cJSON_AddNumberToObject(o, "gpu", r->gpu);
    cJSON_AddNumberToObject(o, "batch", r->batch);
    cJSON_AddNumberToObject(o, "mps_share", r->mps_share);
    cJSON_AddItemToArray(reps, o);
  }
  if (duration_s > 0)
    cut_duration(root, duration_s);
  return root;
}

static gboolean simulate(const CsPlacementProblem *pb, const CsPlacement *candidate,
                         const uint64_t *seeds, int n_seeds, double duration_s,
                         CsPlacementScore *out, GError **error)
{
  if (!candidate || n_seeds < 1 || !seeds || !out ||
      cs_placement_n_models(candidate) != pb->n_models) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "cs_placement_simulate: expected a candidate for the problem's %d models and at "
                "least one seed", pb->n_models);
    return FALSE;
  }
  for (int i = 0; i < cs_placement_n_replicas(candidate); i++) {
    const CsReplica *r = cs_placement_replica(candidate, i);
    if (r->model < 0 || r->model >= pb->n_models || r->gpu < 0 || r->gpu >= pb->n_gpus) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "cs_placement_simulate: replica %d (model %d, gpu %d) is out of the problem's "
                  "range", i, r->model, r->gpu);
      return FALSE;
    }
  }
  cJSON *root = candidate_scenario(pb, candidate, duration_s);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  double good = 0, bad = 0;
  double *per = out->model_goodput_rps;
  for (int m = 0; per && m < pb->n_models; m++)
    per[m] = 0;
  gboolean ok = TRUE;
  for (int k = 0; ok && k < n_seeds; k++) {
    CsScenario *sc = cs_scenario_new_from_json(text, sim_of(pb)->name, sim_of(pb)->base_dir,
                                               error);
    if (!sc) {
      ok = FALSE;
      break;
    }
    cs_scenario_set_registry(sc, sim_of(pb)->registry);
    CsResults *r = sim_of(pb)->runner->run(sc, (int64_t)(seeds[k] & (uint64_t)INT64_MAX), error);
    if (r) {
      good += cs_results_total(r)->goodput_rps;
      bad += cs_results_total(r)->bad_rate;
      for (int m = 0; per && m < pb->n_models && m < cs_results_n_models(r); m++)
        per[m] += cs_results_model(r, m)->goodput_rps / n_seeds;
    }
    ok = r != NULL;
    cs_results_free(r);
    cs_scenario_free(sc);
  }
  cJSON_free(text);
  if (!ok)
    return FALSE;
  out->goodput_rps = good / n_seeds;
  out->bad_rate = bad / n_seeds;
  gboolean *used = g_new0(gboolean, MAX(pb->n_gpus, 1));
  out->gpus_used = 0;
  for (int i = 0; i < cs_placement_n_replicas(candidate); i++) {
    int g = cs_placement_replica(candidate, i)->gpu;
    out->gpus_used += !used[g];
    used[g] = TRUE;
  }
  g_free(used);
  return TRUE;
}

static CsPlacement *place(const CsPlacementProblem *pb, const char *params_json, GError **error)
{
  cJSON *params = params_json ? cJSON_Parse(params_json) : NULL;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "policy");
  if (!cJSON_IsObject(params) || !cJSON_IsString(name)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "cs_placement_problem_place: expected a placement object {\"policy\": ...}, got "
                "%s", params_json ? params_json : "NULL");
    cJSON_Delete(params);
    return NULL;
  }
  void *user_data = NULL;
  const CsPlacementPolicy *policy =
    cs_registry_find_placement(sim_of(pb)->registry, name->valuestring, &user_data);
  CsPlacement *p = NULL;
  if (!policy) {
    char *names = cs_registry_names(sim_of(pb)->registry, FALSE);
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "unknown placement policy \"%s\" (known: %s)",
                name->valuestring, names);
    g_free(names);
  } else {
    CsPlacementProblem inner = *pb;
    inner.simulator = NULL; /* no recursion: a search inside a search has nothing to score on */
    p = cs_placement_run(policy, user_data, &inner, params, sim_of(pb)->name, "placement",
                         error);
  }
  cJSON_Delete(params);
  return p;
}
