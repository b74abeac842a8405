/* The scenario's policy sections: "dispatch" (the online policy, its
 * parameters, and the settings a policy without placement would ignore) and
 * "placement" (the static policy, the memory check of the replicas it places,
 * and the warnings about a placement that runs but misleads). Read last: they
 * are checked against clients and cluster. See docs/scenario.md. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "common/json_input.h"
#include "policies/catalog.h"
#include "policies/dispatch/dispatch.h"
#include "policies/placement/placement.h"
#include "policies/registry_internal.h"
#include "sim/config.h"
#include "scenario_internal.h"

/* The settings a dispatch policy without placement would ignore, found in
 * one pass: each problem's message (as the error of that problem alone would
 * read) and the paths `--unset` removes. */
typedef struct {
  GPtrArray *lines; /* char * */
  GPtrArray *paths; /* char * */
} Ignored;

/* Adds the problem of path (owned by the list from now on) with the message
 * cs_json_fail gives it. */
static void ignored_add(Ignored *ig, const CsScenario *sc, char *path, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);
static void ignored_add(Ignored *ig, const CsScenario *sc, char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  GError *e = NULL;
  cs_json_fail(&e, sc->name, path, "%s", msg);
  g_ptr_array_add(ig->lines, g_strdup(e->message));
  g_ptr_array_add(ig->paths, path);
  g_error_free(e);
  g_free(msg);
}

/* A dispatch policy without placement runs one batch at a time on each GPU
 * (Symphony's exclusive execution): settings about co-located replicas, a
 * "placement" object and planned rates would be ignored, so they are
 * refused. */
static void find_ignored_settings(const CsScenario *sc, const CsConfig *c, Ignored *ig)
{
  if (cJSON_GetObjectItemCaseSensitive(sc->root, "placement"))
    ignored_add(ig, sc, g_strdup("placement"),
                "dispatch \"%s\" runs every model on every GPU and uses no placement; remove "
                "\"placement\"",
                c->dispatch->name);
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  static const char *const cluster_keys[] = { "mps", "interference", "memory_overflow",
                                              "mps_share_rule", NULL };
  for (int k = 0; cluster_keys[k]; k++)
    if (cJSON_GetObjectItemCaseSensitive(cl, cluster_keys[k]))
      ignored_add(ig, sc, cs_json_path_key("cluster", cluster_keys[k]),
                  "dispatch \"%s\" runs one batch at a time on each GPU, with every model loaded "
                  "(memory checked at validation), so this setting would be ignored; remove it",
                  c->dispatch->name);
  /* MIG instances follow their measured tables or the MIG rule, not the
   * exponent (docs/gpu-model.md, "MIG"). */
  if (cJSON_GetObjectItemCaseSensitive(cl, "mps_gamma"))
    ignored_add(ig, sc, g_strdup("cluster.mps_gamma"),
                "is the exponent of the MPS share rule \"power\"; dispatch \"%s\" uses no MPS, "
                "so it would be ignored; remove it",
                c->dispatch->name);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "clients");
  int m = 0;
  const cJSON *client;
  cJSON_ArrayForEach(client, list)
  {
    if (cJSON_GetObjectItemCaseSensitive(client, "planned_rate"))
      ignored_add(ig, sc, g_strdup_printf("clients[%d].planned_rate", m),
                  "dispatch \"%s\" uses no placement, so nothing plans for this rate; remove it",
                  c->dispatch->name);
    m++;
  }
}

/* The fields of the scenario's "dispatch" object that policy does not read
 * (the catalogue's record of its parse), as "dispatch.KEY" paths. */
static GPtrArray *unknown_dispatch_fields(const cJSON *d, const CsDispatchPolicy *policy,
                                          void *user_data)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *known = cs_policy_dispatch_fields(policy, user_data);
  const cJSON *f;
  cJSON_ArrayForEach(f, d)
  {
    gboolean ok = strcmp(f->string, "policy") == 0;
    for (guint i = 0; i < known->len && !ok; i++)
      ok = strcmp(f->string, g_ptr_array_index(known, i)) == 0;
    if (!ok)
      g_ptr_array_add(out, cs_json_path_key("dispatch", f->string));
  }
  g_ptr_array_unref(known);
  return out;
}

/* Parses the dispatch object of a policy without placement and refuses,
 * in one error, everything it would ignore: its unknown fields and the
 * scenario's settings find_ignored_settings lists. One problem keeps its
 * own message; several are listed one a line, then the --unset options
 * that remove them all (the CLI's syntax: cli.c). */
static gboolean parse_without_placement(const CsScenario *sc, CsConfig *c, const cJSON *d,
                                        GError **error)
{
  Ignored ig = { g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free) };
  GError *perr = NULL;
  gboolean ok = cs_dispatch_parse(c->dispatch, c->dispatch_user_data, d, sc->name, "dispatch",
                                  &c->dispatch_params, &perr);
  if (!ok) {
    /* Only a refusal of unknown fields joins the list: a bad value is
     * fixed, not removed. */
    GPtrArray *unknown = d ? unknown_dispatch_fields(d, c->dispatch, c->dispatch_user_data)
                           : g_ptr_array_new_with_free_func(g_free);
    if (unknown->len == 0) {
      g_propagate_error(error, perr);
      perr = NULL;
    } else {
      g_ptr_array_add(ig.lines, g_strdup(perr->message));
      for (guint i = 0; i < unknown->len; i++)
        g_ptr_array_add(ig.paths, g_strdup(g_ptr_array_index(unknown, i)));
    }
    g_ptr_array_unref(unknown);
  }
  if (perr || ok)
    find_ignored_settings(sc, c, &ig);
  if (ig.lines->len == 1) {
    if (perr)
      g_propagate_error(error, g_steal_pointer(&perr));
    else
      g_set_error_literal(error, CS_ERROR, CS_ERROR_INVALID, g_ptr_array_index(ig.lines, 0));
  } else if (ig.lines->len > 1) {
    GString *m = g_string_new(NULL);
    g_string_append_printf(m, "%s: dispatch \"%s\" would ignore %u settings of the scenario "
                           "(it runs every model on every GPU, one batch at a time, without a "
                           "placement):",
                           sc->name, c->dispatch->name, ig.paths->len);
    for (guint i = 0; i < ig.lines->len; i++)
      cs_error_append_problem(m, sc->name, g_ptr_array_index(ig.lines, i));
    g_string_append(m, "\nremove them with:");
    for (guint i = 0; i < ig.paths->len; i++)
      g_string_append_printf(m, " --unset %s", (const char *)g_ptr_array_index(ig.paths, i));
    g_set_error_literal(error, CS_ERROR, CS_ERROR_INVALID, m->str);
    g_string_free(m, TRUE);
  }
  g_clear_error(&perr);
  gboolean refused = ig.lines->len > 0 || !ok;
  g_ptr_array_unref(ig.lines);
  g_ptr_array_unref(ig.paths);
  if (refused && c->dispatch_params) {
    c->dispatch->free_params(c->dispatch_params);
    c->dispatch_params = NULL;
  }
  return !refused;
}

/* TRUE when the interference file has a MIG table and the cluster has MIG
 * instances: the tables then act without MPS too (docs/gpu-model.md, "MIG
 * instances"). */
static gboolean mig_tables_apply(const CsConfig *c)
{
  if (!c->has_mig || !c->interference)
    return FALSE;
  for (int i = 0; i < cs_interference_set_n_models(c->interference); i++)
    if (cs_interference_mig(c->interference, i))
      return TRUE;
  return FALSE;
}

/* With a placement and without MPS, co-located replicas time-slice: the
 * interference tables and the MPS exponent (outside MIG) have nothing to
 * act on. A scenario may toggle "mps" to compare, so this is a warning. */
static void warn_ignored_settings(const CsScenario *sc, CsConfig *c)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  if (c->mps)
    return;
  if (cJSON_GetObjectItemCaseSensitive(cl, "interference") && !mig_tables_apply(c))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.interference applies to replicas running concurrently under MPS; "
                   "cluster.mps is false, so co-located replicas time-slice and it is ignored");
  if (cJSON_GetObjectItemCaseSensitive(cl, "mps_gamma"))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.mps_gamma is the exponent of the MPS share rule \"power\"; "
                   "cluster.mps is false, so it is ignored");
  if (cJSON_GetObjectItemCaseSensitive(cl, "mps_share_rule"))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.mps_share_rule applies to replicas running concurrently under MPS; "
                   "cluster.mps is false, so it is ignored");
}

/* Under MPS the exponent acts only in the power share rule: with the
 * default rule "scalable" it would be ignored (MIG instances do not use it). */
static void warn_gamma_without_power(const CsScenario *sc, CsConfig *c)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  if (c->mps && !c->mps_share_power && cJSON_GetObjectItemCaseSensitive(cl, "mps_gamma"))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.mps_gamma is the exponent of cluster.mps_share_rule \"power\"; the "
                   "rule is \"scalable\", so it is ignored");
}

gboolean cs_scenario_read_dispatch(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(sc->root, "dispatch");
  const char *policy = "router";
  if (d && (!cs_json_expect_object(d, sc->name, "dispatch", error) ||
            !cs_json_read_string(d, "policy", FALSE, &policy, sc->name, "dispatch", error)))
    return FALSE;
  c->dispatch = cs_registry_find_dispatch(sc->registry, policy, &c->dispatch_user_data);
  if (!c->dispatch) {
    char *names = cs_registry_names(sc->registry, TRUE);
    cs_json_fail(error, sc->name, "dispatch.policy", "unknown policy \"%s\" (known: %s)" CS_PLUGIN_HINT,
                 policy, names);
    g_free(names);
    return FALSE;
  }
  if (!c->dispatch->uses_placement) {
    if (!parse_without_placement(sc, c, d, error))
      return FALSE;
  } else if (!cs_dispatch_parse(c->dispatch, c->dispatch_user_data, d, sc->name, "dispatch",
                                &c->dispatch_params, error))
    return FALSE;
  if (c->dispatch->uses_placement) {
    warn_ignored_settings(sc, c);
    warn_gamma_without_power(sc, c);
  }
  if (!c->dispatch->uses_placement) {
    /* Every model runs on every GPU: each needs a profile on every GPU type. */
    for (int m = 0; m < c->n_clients; m++)
      for (int g = 0; g < c->n_gpus; g++)
        if (!cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, c->clients[m].model)) {
          char *jp = cs_json_path_index("clients", m);
          cs_json_fail(error, sc->name, jp,
                       "dispatch \"%s\" runs every model on every GPU, but model \"%s\" has no "
                       "profile on GPU type \"%s\" (gpu %d)",
                       c->dispatch->name, c->clients[m].model, c->gpus[g].gpu_type, g);
          g_free(jp);
          return FALSE;
        }
    /* Memory permitting: every model is loaded on every GPU. Each needs at
     * least its Mreq at its smallest profiled batch (weights and the least
     * activation memory); their sum must fit each GPU. */
    for (int g = 0; g < c->n_gpus; g++) {
      double sum = 0;
      GString *list = g_string_new(NULL);
      for (int m = 0; m < c->n_clients; m++) {
        const CsModelProfile *p =
          cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, c->clients[m].model);
        for (int i = 0; i < p->n_points; i++)
          if (!isnan(p->points[i].mreq_pct)) {
            sum += p->points[i].mreq_pct;
            g_string_append_printf(list, "%s%s %.2f %%", list->len ? ", " : "",
                                   c->clients[m].model, p->points[i].mreq_pct);
            break;
          }
      }
      double capacity = 100.0 * c->gpus[g].memory_fraction;
      gboolean fits = sum <= capacity + 1e-9;
      if (!fits)
        cs_json_fail(error, sc->name, "dispatch",
                     "dispatch \"%s\" loads every model on every GPU, but on gpu %d (%s) their "
                     "memory (%s) sums to %.2f %%, over the %.4g %% it has",
                     c->dispatch->name, g, c->gpus[g].gpu_type, list->str, sum, capacity);
      g_string_free(list, TRUE);
      if (!fits)
        return FALSE;
    }
  }
  /* Last: the policy may compare its settings with the compiled world. */
  if (c->dispatch->check)
    c->dispatch->check(c->dispatch_params, c, c->warnings, c->dispatch_user_data);
  return TRUE;
}

/* Mreq of a replica: the profile's memory requirement at its batch size, or
 * at the nearest profiled batch size; 0 when the profile gives none. */
static double replica_mreq(const CsConfig *c, const CsReplica *rep)
{
  return cs_model_profile_mreq_pct(cs_profile_set_lookup(c->profiles, c->gpus[rep->gpu].gpu_type,
                                                         c->clients[rep->model].model),
                                   rep->batch);
}

/* A replica that fails in memory serves nothing: a model's expected
 * goodput may not count it. The router still sends it its round-robin share
 * (in proportion to batch size), and those requests fail; so the policy's
 * figure is capped at the planned rate times the surviving replicas' share,
 * and at what they run back to back (profile throughput at their batch
 * sizes). The log says so. */
static void discount_failed_replicas(CsConfig *c)
{
  GArray *reps = c->placement->replicas;
  for (int m = 0; m < c->n_clients; m++) {
    gboolean any_failed = FALSE;
    double capacity = 0.0, batches = 0.0, surviving_batches = 0.0;
    for (guint r = 0; r < reps->len; r++) {
      const CsReplica *rep = &g_array_index(reps, CsReplica, r);
      if (rep->model != m)
        continue;
      batches += rep->batch;
      if (c->replica_failed[r]) {
        any_failed = TRUE;
        continue;
      }
      surviving_batches += rep->batch;
      const CsModelProfile *p =
        cs_profile_set_lookup(c->profiles, c->gpus[rep->gpu].gpu_type, c->clients[m].model);
      capacity += p ? cs_model_profile_throughput_rps(p, rep->batch) : 0.0;
    }
    double *e = &c->placement->expected_goodput[m];
    double cap = MIN(capacity, c->clients[m].planned_rate_rps * surviving_batches / batches);
    if (!any_failed || *e <= cap)
      continue;
    g_string_append_printf(c->placement->log,
                           "%s: expected goodput %.2f req/s lowered to %.2f: its replicas that "
                           "fit in memory get %.4g of its requests and run %.2f req/s\n",
                           c->clients[m].model, *e, cap, surviving_batches / batches, capacity);
    c->placement->expected_total -= *e - cap;
    *e = cap;
  }
}

/* The replicas on a GPU must fit its memory (sum of Mreq <= 100 %). Unless
 * cluster.memory_overflow is "fail_replicas", a placement that does not fit
 * is refused; with it, the replicas that no longer fit (in placement order)
 * fail, and so do the requests sent to them. */
static gboolean check_memory(const CsScenario *sc, CsConfig *c, GError **error)
{
  GArray *reps = c->placement->replicas;
  double *used = g_new0(double, MAX(c->n_gpus, 1));
  c->replica_failed = g_new0(gboolean, MAX(reps->len, 1));
  c->replica_mreq = g_new0(double, MAX(reps->len, 1));
  /* Every GPU that cannot hold its replicas is named, each once: at the
   * first replica that does not fit on it. */
  gboolean *refused = g_new0(gboolean, MAX(c->n_gpus, 1));
  CsErrorList *problems = cs_error_list_new();
  for (guint r = 0; r < reps->len; r++) {
    const CsReplica *rep = &g_array_index(reps, CsReplica, r);
    double m = replica_mreq(c, rep);
    c->replica_mreq[r] = m;
    /* Mreq is a share of the whole GPU; a MIG instance holds its memory fraction. */
    double capacity = 100.0 * c->gpus[rep->gpu].memory_fraction;
    if (refused[rep->gpu])
      continue;
    if (used[rep->gpu] + m <= capacity + 1e-9) {
      used[rep->gpu] += m;
      continue;
    }
    if (c->memory_overflow_fails) {
      c->replica_failed[r] = TRUE;
      cs_warning_add(c->warnings, "replica_fails", c->clients[rep->model].model, rep->gpu,
                     "replica %u (batch %d, Mreq %.2f %%) does not fit in gpu %d's memory "
                     "(%.2f %% used): the requests sent to it fail",
                     r, rep->batch, m, rep->gpu, used[rep->gpu]);
      g_string_append_printf(c->placement->log,
                             "replica %u (%s batch %d, Mreq %.2f %%) does not fit in gpu %d's "
                             "memory (%.2f %% used): it fails\n",
                             r, c->clients[rep->model].model, rep->batch, m, rep->gpu,
                             used[rep->gpu]);
      continue;
    }
    GString *list = g_string_new(NULL);
    for (guint q = 0; q <= r; q++) {
      const CsReplica *o = &g_array_index(reps, CsReplica, q);
      if (o->gpu == rep->gpu)
        g_string_append_printf(list, "%s%s batch %d (%.2f %%)", list->len ? ", " : "",
                               c->clients[o->model].model, o->batch, replica_mreq(c, o));
    }
    refused[rep->gpu] = TRUE;
    cs_json_fail(cs_error_list_slot(problems), sc->name, "placement",
                 "gpu %d (%s) cannot hold its replicas: Mreq %s sum to %.2f %% of the GPU's "
                 "memory, over the %.4g %% it has (set cluster.memory_overflow to "
                 "\"fail_replicas\" to simulate the failure instead)",
                 rep->gpu, c->gpus[rep->gpu].gpu_type, list->str, used[rep->gpu] + m, capacity);
    g_string_free(list, TRUE);
  }
  g_free(used);
  g_free(refused);
  gboolean ok = cs_error_list_finish(problems, sc->name, "placement", error);
  if (ok)
    discount_failed_replicas(c);
  return ok;
}

/* Warnings about a placement that runs but misleads: models without a
 * replica, and MPS shares that time-slicing ignores. */
static void warn_about_placement(CsConfig *c)
{
  GArray *reps = c->placement->replicas;
  int *per_model = g_new0(int, MAX(c->n_clients, 1));
  int *per_gpu = g_new0(int, MAX(c->n_gpus, 1));
  gboolean shares = FALSE;
  for (guint r = 0; r < reps->len; r++) {
    const CsReplica *rep = &g_array_index(reps, CsReplica, r);
    per_model[rep->model]++;
    per_gpu[rep->gpu]++;
    shares |= rep->mps_share > 0 && rep->mps_share < 1.0 - 1e-9;
  }
  for (int m = 0; m < c->n_clients; m++)
    if (per_model[m] == 0)
      cs_warning_add(c->warnings, "model_unserved", c->clients[m].model, -1,
                     "placement \"%s\" gives %s no replica: its requests are unserved",
                     c->placement_policy->name, c->clients[m].model);
  int colocated = 0;
  for (int g = 0; g < c->n_gpus; g++)
    colocated += per_gpu[g] > 1;
  if (!c->mps && shares && colocated > 0)
    cs_warning_add(c->warnings, "mps_shares_ignored", NULL, -1,
                   "placement \"%s\" plans MPS shares for co-located replicas on %d GPU(s), but "
                   "cluster.mps is false: they time-slice and the shares are ignored (set "
                   "\"mps\": true in \"cluster\" to run them concurrently)",
                   c->placement_policy->name, colocated);
  g_free(per_model);
  g_free(per_gpu);
}

/* A controller's re-placement: the scenario's policy and parameters. */
static CsPlacement *place_again(const CsConfig *c, const CsPlacementProblem *problem,
                                GError **error)
{
  return cs_placement_run(c->placement_policy, c->placement_user_data, problem,
                          c->placement_params, c->name, "placement", error);
}

gboolean cs_scenario_read_placement(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(sc->root, "placement");
  if (!c->dispatch->uses_placement) {
    if (pl)
      return cs_json_fail(error, sc->name, "placement",
                          "dispatch \"%s\" runs every model on every GPU and uses no placement; "
                          "remove \"placement\"",
                          c->dispatch->name);
    return TRUE;
  }
  const char *policy = "dedicated";
  if (pl && (!cs_json_expect_object(pl, sc->name, "placement", error) ||
             !cs_json_read_string(pl, "policy", FALSE, &policy, sc->name, "placement", error)))
    return FALSE;
  void *user_data = NULL;
  c->placement_policy = cs_registry_find_placement(sc->registry, policy, &user_data);
  if (!c->placement_policy) {
    char *names = cs_registry_names(sc->registry, FALSE);
    cs_json_fail(error, sc->name, "placement.policy", "unknown policy \"%s\" (known: %s)" CS_PLUGIN_HINT,
                 policy, names);
    g_free(names);
    return FALSE;
  }
  CsPlacementModel *models = g_new0(CsPlacementModel, c->n_clients);
  for (int i = 0; i < c->n_clients; i++)
    models[i] = (CsPlacementModel){ .name = c->clients[i].model,
                                    .rate_rps = c->clients[i].planned_rate_rps,
                                    .slo_ms = c->clients[i].slo_ms };
  /* Under an autoscaling controller the first initial_gpus GPUs are on at
   * the start: the first placement sees those. */
  CsPlacementGpu *gpus = g_new0(CsPlacementGpu, c->n_gpus);
  for (int g = 0; g < c->initial_gpus; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = c->gpus[g].gpu_type, .node = c->gpus[g].node };
  CsPlacementGpuModel gpu_model = { .mps = c->mps, .mps_gamma = c->mps_gamma,
                                    .mps_share_power = c->mps_share_power,
                                    .interference = c->interference,
                                    .interference_name = c->interference_desc };
  CsPlacementSimulator *sim = cs_placement_simulator_new(sc);
  CsPlacementProblem in = { .models = models, .n_models = c->n_clients, .gpus = gpus,
                          .n_gpus = c->initial_gpus, .profiles = c->profiles,
                          .gpu_model = &gpu_model, .simulator = sim };
  c->placement =
    cs_placement_run(c->placement_policy, user_data, &in, pl, sc->name, "placement", error);
  cs_placement_simulator_free(sim);
  c->placement_params = pl ? cJSON_Duplicate(pl, TRUE) : NULL;
  c->placement_user_data = user_data;
  c->place_again = place_again;
  g_free(models);
  g_free(gpus);
  if (!c->placement)
    return FALSE;
  if (!check_memory(sc, c, error))
    return FALSE;
  warn_about_placement(c);
  return TRUE;
}
