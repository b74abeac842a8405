/* How a run was produced: the setup recorded in summary.json and the
 * effective scenario written beside it.
 *
 * Two rules make a run reproducible from its outputs alone:
 * - the summary names every input file by its base name and SHA-256, never
 *   by the path it was found at, so it does not depend on where the scenario
 *   file lives or how it spelled its paths;
 * - the effective scenario is the document that ran: --set overrides applied
 *   (and listed in "overrides_applied"), defaults written out, and file
 *   references replaced by absolute paths, so running it from anywhere gives
 *   the same summary byte for byte. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "clustersim/clustersim.h"
#include "policies/control/control.h"
#include "policies/dispatch/dispatch.h"
#include "sim/config.h"
#include "llm_config.h"
#include "scenario.h"
#include "workloads/trace.h"

/* {"file": base name, "sha256": hex} of a file, or NULL with error set. */
static cJSON *file_json(const char *path, GError **error)
{
  char *sha = cs_trace_file_sha256(path, error);
  if (!sha)
    return NULL;
  cJSON *o = cJSON_CreateObject();
  char *base = g_path_get_basename(path);
  cJSON_AddStringToObject(o, "file", base);
  cJSON_AddStringToObject(o, "sha256", sha);
  g_free(base);
  g_free(sha);
  return o;
}

static const char *arrival_name(const CsClientConfig *cc)
{
  switch (cc->arrival) {
  case CS_ARRIVAL_POISSON:
    return "poisson";
  case CS_ARRIVAL_GAMMA:
    return "gamma";
  case CS_ARRIVAL_CONSTANT:
    return "constant";
  case CS_ARRIVAL_TIMES:
    return cc->window_ns > 0 ? "trace (exact timestamps)" : "times";
  default:
    return cc->piecewise_gamma ? "trace (gamma per interval)" : "trace (poisson per interval)";
  }
}

static cJSON *client_json(const CsClientConfig *cc)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "model", cc->model);
  cJSON_AddStringToObject(o, "arrival", arrival_name(cc));
  if (cc->arrival == CS_ARRIVAL_GAMMA || (cc->arrival == CS_ARRIVAL_PIECEWISE && cc->piecewise_gamma)) {
    cJSON_AddNumberToObject(o, "gamma_shape", cc->gamma_shape);
    cJSON_AddNumberToObject(o, "cv", 1.0 / sqrt(cc->gamma_shape));
  }
  cJSON_AddNumberToObject(o, "rate_rps", cc->rate_rps);
  cJSON_AddNumberToObject(o, "planned_rate_rps", cc->planned_rate_rps);
  cJSON_AddNumberToObject(o, "slo_ms", cc->slo_ms);
  if (cc->requests > 0 && cc->window_ns == 0)
    cJSON_AddNumberToObject(o, "requests", (double)cc->requests);
  else
    cJSON_AddNumberToObject(o, "duration_s", cc->duration_ns * 1e-9);
  cJSON_AddNumberToObject(o, "warmup_s", cc->warmup_ns * 1e-9);
  cJSON_AddNumberToObject(o, "start_s", cc->start_ns * 1e-9);
  cJSON_AddNumberToObject(o, "input_bytes", (double)cc->input_bytes);
  cJSON_AddNumberToObject(o, "output_bytes", (double)cc->output_bytes);
  return o;
}

/* A data file of an LLM deployment from its reader's source line "PATH:
 * SOURCE": {"file", "sha256", "source"}, the path left out (it is this
 * machine's), or NULL with error set. */
static cJSON *llm_data_json(const char *line, GError **error)
{
  const char *sep = strstr(line, ": ");
  char *path = sep ? g_strndup(line, (gsize)(sep - line)) : g_strdup(line);
  cJSON *f = file_json(path, error);
  g_free(path);
  if (f)
    cJSON_AddStringToObject(f, "source", sep ? sep + 2 : "");
  return f;
}

/* The LLM deployments as they ran (scenario_llm.c): what each is, its price
 * and the sources of the data that timed it (each data file's own
 * "source"), and its trace file with its hash. Absent without any. */
static gboolean llm_setup_json(const CsConfig *c, cJSON *setup, GError **error)
{
  cJSON *list = cJSON_AddArrayToObject(setup, "llm");
  for (int i = 0; i < c->n_llm; i++) {
    const CsLlmServingConfig *d = &c->llm[i];
    const CsLlmConfig *lc = d->owner;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(list, o);
    cJSON_AddStringToObject(o, "model", d->name);
    cJSON_AddStringToObject(o, "llm_model", d->llm_model);
    cJSON_AddStringToObject(o, "device", d->device);
    cJSON_AddNumberToObject(o, "gpus", d->gpus);
    cJSON_AddNumberToObject(o, "requests", d->n_reqs);
    if (isfinite(d->price_per_hour)) {
      cJSON_AddNumberToObject(o, "price_per_hour", d->price_per_hour);
      cJSON_AddStringToObject(o, "price_source", "data/llm/models.json (Vidur's GPU_COSTS)");
    } else {
      cJSON_AddNullToObject(o, "price_per_hour");
    }
    cJSON *src = cJSON_AddObjectToObject(o, "data");
    const char *names[] = { "models", "ops", "attention", "collectives" };
    const char *lines[] = { cs_llm_models_source(lc->models), cs_llm_ops_source(lc->ops),
                            cs_llm_attention_source(lc->att),
                            lc->coll ? cs_llm_collectives_source(lc->coll) : NULL };
    for (int k = 0; k < 4; k++) {
      if (lines[k] == NULL)
        continue;
      cJSON *f = llm_data_json(lines[k], error);
      if (!f)
        return FALSE;
      cJSON_AddItemToObject(src, names[k], f);
    }
    if (lc->trace_path) {
      cJSON *f = file_json(lc->trace_path, error);
      if (!f)
        return FALSE;
      cJSON_AddItemToObject(o, "trace", f);
    }
    if (lc->lengths_path) {
      /* requests.synthetic.lengths: the trace the lengths come from. */
      cJSON *f = file_json(lc->lengths_path, error);
      if (!f)
        return FALSE;
      cJSON_AddItemToObject(o, "lengths_trace", f);
    }
  }
  return TRUE;
}

cJSON *cs_config_setup_json(const CsConfig *c, GError **error)
{
  cJSON *setup = cJSON_CreateObject();
  cJSON *prof = cJSON_AddArrayToObject(setup, "profiles");
  for (int i = 0; c->profile_paths && c->profile_paths[i]; i++) {
    cJSON *f = file_json(c->profile_paths[i], error);
    if (!f)
      goto fail;
    cJSON_AddItemToArray(prof, f);
  }
  if (c->network_path) {
    cJSON *f = file_json(c->network_path, error);
    if (!f)
      goto fail;
    cJSON_AddItemToObject(setup, "network", f);
  } else {
    cJSON_AddStringToObject(setup, "network", c->network_desc);
  }
  if (c->trace_desc) {
    /* The trace as the trace reader described it, named by base name. */
    cJSON *t = cJSON_Parse(c->trace_desc);
    char *base = g_path_get_basename(c->trace_path);
    cJSON_ReplaceItemInObjectCaseSensitive(t, "file", cJSON_CreateString(base));
    g_free(base);
    cJSON_AddItemToObject(setup, "trace", t);
  }
  if (c->n_llm > 0 && !llm_setup_json(c, setup, error))
    goto fail;
  cJSON *cl = cJSON_AddObjectToObject(setup, "cluster");
  cJSON_AddNumberToObject(cl, "gpus", c->n_gpus);
  cJSON_AddNumberToObject(cl, "nodes", c->n_nodes);
  cJSON_AddBoolToObject(cl, "mig", c->has_mig);
  cJSON_AddBoolToObject(cl, "mps", c->mps);
  cJSON_AddNumberToObject(cl, "mps_gamma", c->mps_gamma);
  cJSON_AddStringToObject(cl, "mps_share_rule", c->mps_share_power ? "power" : "scalable");
  if (c->interference_path) {
    cJSON *f = file_json(c->interference_path, error);
    if (!f)
      goto fail;
    cJSON_AddItemToObject(cl, "interference", f);
  } else {
    cJSON_AddNullToObject(cl, "interference");
  }
  cJSON_AddStringToObject(cl, "memory_overflow",
                          c->memory_overflow_fails ? "fail_replicas" : "error");
  /* Which price each node's GPUs were charged and where it came from. */
  cJSON *prices = cJSON_AddArrayToObject(cl, "prices");
  for (int i = 0; i < c->n_nodes; i++) {
    const CsNodeConfig *n = &c->nodes[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "node", i);
    cJSON_AddStringToObject(o, "gpu_type", n->gpu_type);
    cJSON_AddNumberToObject(o, "gpus", n->gpus);
    if (isnan(n->price_per_hour)) {
      cJSON_AddNullToObject(o, "price_per_hour");
      cJSON_AddNullToObject(o, "price_source");
    } else {
      cJSON_AddNumberToObject(o, "price_per_hour", n->price_per_hour);
      cJSON_AddStringToObject(o, "price_source", n->price_source);
    }
    cJSON_AddItemToArray(prices, o);
  }
  cJSON *clients = cJSON_AddArrayToObject(setup, "clients");
  for (int i = 0; i < c->n_clients; i++)
    cJSON_AddItemToArray(clients, client_json(&c->clients[i]));
  cJSON *ov = cJSON_AddArrayToObject(setup, "overrides");
  for (int i = 0; c->overrides && c->overrides[i]; i++)
    cJSON_AddItemToArray(ov, cJSON_CreateString(c->overrides[i]));
  /* The plug-ins whose policies the registry held, by the SHA-256 they had
   * when loaded (absent without plug-ins, as before they existed). */
  cJSON *plugins = c->plugin_paths ? cJSON_AddArrayToObject(setup, "plugins") : NULL;
  for (int i = 0; plugins && c->plugin_paths[i]; i++) {
    cJSON *o = cJSON_CreateObject();
    char *base = g_path_get_basename(c->plugin_paths[i]);
    cJSON_AddStringToObject(o, "file", base);
    cJSON_AddStringToObject(o, "sha256", c->plugin_sha256[i]);
    g_free(base);
    cJSON_AddItemToArray(plugins, o);
  }
  return setup;
fail:
  cJSON_Delete(setup);
  return NULL;
}

/* ---- the effective scenario ---------------------------------------------------- */

/* Sets o[key] to v unless o has it (takes v either way). */
static void add_default(cJSON *o, const char *key, cJSON *v)
{
  if (cJSON_GetObjectItemCaseSensitive(o, key))
    cJSON_Delete(v);
  else
    cJSON_AddItemToObject(o, key, v);
}

static void set_item(cJSON *o, const char *key, cJSON *v)
{
  if (cJSON_GetObjectItemCaseSensitive(o, key))
    cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
  else
    cJSON_AddItemToObject(o, key, v);
}

static cJSON *object_member(cJSON *root, const char *key)
{
  cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!o) {
    o = cJSON_CreateObject();
    cJSON_AddItemToObject(root, key, o);
  }
  return o;
}


char *cs_config_effective_json(const CsScenario *sc, const CsConfig *c)
{
  cJSON *root = cs_config_effective_doc(sc, c);
  char *text = cs_json_print_exact_line(root);
  cJSON_Delete(root);
  return text;
}

cJSON *cs_config_effective_doc(const CsScenario *sc, const CsConfig *c)
{
  cJSON *root = cJSON_Duplicate(cs_scenario_root(sc), TRUE);
  set_item(root, "seed", cJSON_CreateNumber((double)c->seed));
  cJSON *prof = cJSON_CreateArray();
  for (int i = 0; c->profile_paths[i]; i++)
    cJSON_AddItemToArray(prof, cJSON_CreateString(c->profile_paths[i]));
  set_item(root, "profiles", prof);
  if (c->network_path) {
    cJSON *net = cJSON_CreateObject();
    cJSON_AddStringToObject(net, "curve", c->network_path);
    set_item(root, "network", net);
  } else {
    add_default(root, "network", cJSON_CreateString("zero"));
  }
  cJSON *cl = object_member(root, "cluster");
  /* The price that ran, with its source, so that a change of the profile's
   * default does not change what the effective scenario costs. */
  cJSON *node_list = cJSON_GetObjectItemCaseSensitive(cl, "nodes");
  /* Walked along the list: indexing a cJSON array walks it from the start. */
  cJSON *o = node_list ? node_list->child : cl;
  for (int i = 0; i < c->n_nodes && o; i++, o = node_list ? o->next : NULL) {
    const CsNodeConfig *n = &c->nodes[i];
    if (isnan(n->price_per_hour))
      continue;
    add_default(o, "price_per_hour", cJSON_CreateNumber(n->price_per_hour));
    add_default(o, "price_source", cJSON_CreateString(n->price_source));
  }
  if (c->interference_path)
    set_item(cl, "interference", cJSON_CreateString(c->interference_path));
  /* Dispatch without placement refuses the co-location settings (it would
   * ignore them), so their defaults are written only where they apply. */
  if (c->dispatch->uses_placement) {
    add_default(cl, "mps", cJSON_CreateBool(c->mps));
    if (c->mps) /* elsewhere it would be ignored, and say so */
      add_default(cl, "mps_share_rule", cJSON_CreateString(c->mps_share_power ? "power"
                                                                               : "scalable"));
    if (c->mps && c->mps_share_power) /* likewise */
      add_default(cl, "mps_gamma", cJSON_CreateNumber(c->mps_gamma));
    add_default(cl, "memory_overflow",
                cJSON_CreateString(c->memory_overflow_fails ? "fail_replicas" : "error"));
    cJSON *pl = object_member(root, "placement");
    add_default(pl, "policy", cJSON_CreateString(c->placement_policy->name));
  }
  cJSON *d = object_member(root, "dispatch");
  add_default(d, "policy", cJSON_CreateString(c->dispatch->name));
  cs_dispatch_fill_defaults(c->dispatch, c->dispatch_params, d);
  if (c->controller) {
    /* What a model load costs matters only when something loads. */
    add_default(cl, "host_to_gpu_gbps", cJSON_CreateNumber(c->host_to_gpu_bytes_per_s / 1e9));
    add_default(cl, "model_load_ms", cJSON_CreateNumber(c->model_load_overhead_ns / 1e6));
    cJSON *k = object_member(root, "controller");
    if (c->controller->scales_gpus)
      add_default(k, "initial_gpus", cJSON_CreateNumber(c->initial_gpus));
    cs_controller_fill_defaults(c->controller, c->controller_params, k);
  }
  cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "clients");
  cJSON *top_duration = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
  o = list ? list->child : NULL;
  for (int i = 0; i < c->n_clients && o; i++, o = o->next) {
    const CsClientConfig *cc = &c->clients[i];
    add_default(o, "arrival", cJSON_CreateString("poisson"));
    gboolean trace = cc->window_ns > 0;
    if (!trace && cc->arrival != CS_ARRIVAL_TIMES && top_duration &&
        !cJSON_GetObjectItemCaseSensitive(o, "requests"))
      add_default(o, "duration_s", cJSON_Duplicate(top_duration, TRUE));
    add_default(o, "warmup_s", cJSON_CreateNumber(0));
    add_default(o, "start_s", cJSON_CreateNumber(0));
    add_default(o, "input_bytes", cJSON_CreateNumber((double)cc->input_bytes));
    add_default(o, "output_bytes", cJSON_CreateNumber((double)cc->output_bytes));
  }
  if (top_duration)
    cJSON_DeleteItemFromObjectCaseSensitive(root, "duration_s"); /* now in every client */
  if (c->trace_path)
    set_item(object_member(root, "trace"), "file", cJSON_CreateString(c->trace_path));
  /* An LLM deployment's request trace, as it was found (scenario_llm.c). */
  const cJSON *llm = cJSON_GetObjectItemCaseSensitive(root, "llm");
  for (int i = 0; i < c->n_llm; i++) {
    const CsLlmConfig *lc = c->llm[i].owner;
    cJSON *req = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(llm, i), "requests");
    if (lc->trace_path != NULL && req != NULL)
      set_item(req, "trace", cJSON_CreateString(lc->trace_path));
  }
  cJSON *out = object_member(root, "outputs");
  add_default(out, "requests_csv", cJSON_CreateBool(FALSE));
  add_default(out, "timeseries_bin_s", cJSON_CreateNumber(c->timeseries_bin_ns * 1e-9));
  if (c->placement_policy) /* only a placement expects a goodput to fall short of */
    add_default(object_member(root, "warnings"), "plan_gap",
                c->plan_gap >= 0 ? cJSON_CreateNumber(c->plan_gap) : cJSON_CreateFalse());
  cJSON *ov = cJSON_CreateArray();
  for (int i = 0; c->overrides[i]; i++)
    cJSON_AddItemToArray(ov, cJSON_CreateString(c->overrides[i]));
  set_item(root, "overrides_applied", ov);
  /* Every plug-in loaded, wherever it was named (--plugin, the environment,
   * an experiment), so that the effective scenario runs as it is. */
  if (c->plugin_paths) {
    cJSON *pl = cJSON_CreateArray();
    for (int i = 0; c->plugin_paths[i]; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "path", c->plugin_paths[i]);
      cJSON_AddStringToObject(o, "sha256", c->plugin_sha256[i]);
      cJSON_AddItemToArray(pl, o);
    }
    set_item(root, "plugins", pl);
  }
  return root;
}
