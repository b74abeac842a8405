/* clustersim place SCENARIO [--json] [--set PATH=VALUE ...] | clustersim place --list */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "policies/placement/placement.h"
#include "experiment/outputs.h"
#include "experiment/run.h"
#include "scenario/scenario.h"

static const char *const metric_names[CS_CREQ_N_METRICS] = { "ao", "wao", "wsm" };

/* The profiled point of the replica's batch, or of the nearest profiled batch. */
static const CsBatchPoint *point_of(const CsConfig *c, const CsReplica *r)
{
  return cs_model_profile_nearest_point(
    cs_profile_set_lookup(c->profiles, c->gpus[r->gpu].gpu_type, c->clients[r->model].model),
    r->batch);
}

/* Adds a plan_partial warning for each model with replicas whose expected
 * goodput is below the rate the placement planned for: the plan itself
 * expects part of its load to go unserved or late, which `clustersim run`
 * then shows as bad requests without a plan_gap warning (it judges goodput
 * against what the plan expected). A model without replicas already has
 * model_unserved. The relative tolerance absorbs the rounding of a
 * policy's sums (capacities added replica by replica). */
static void warn_partial_plans(CsConfig *cfg)
{
  const CsPlacement *p = cfg->placement;
  for (int m = 0; m < cfg->n_clients; m++) {
    const CsClientConfig *cl = &cfg->clients[m];
    double e = p->expected_goodput[m];
    gboolean replicas = FALSE;
    for (guint r = 0; r < p->replicas->len && !replicas; r++)
      replicas = g_array_index(p->replicas, CsReplica, r).model == m;
    if (!replicas || !(e < cl->planned_rate_rps * (1.0 - 1e-9)))
      continue;
    char *offered = cl->rate_rps != cl->planned_rate_rps
                      ? g_strdup_printf(" (it sends %.4g req/s)", cl->rate_rps)
                      : g_strdup("");
    cs_warning_add(cfg->warnings, "plan_partial", cl->model, -1,
                   "placement \"%s\" serves it only partly: it expects a goodput of %.4g of the "
                   "%.4g req/s it planned for%s (%.1f %%)",
                   cfg->placement_policy->name, e, cl->planned_rate_rps, offered,
                   100.0 * e / cl->planned_rate_rps);
    g_free(offered);
  }
}

static void list_policies(void)
{
  /* The process's registry: the built-ins and the plug-ins' (--plugin). */
  const CsRegistry *r = cli_registry();
  for (int i = 0; i < cs_registry_n_placement(r); i++) {
    const CsPlacementPolicy *p = cs_registry_placement_at(r, i);
    printf("%-12s %s\n", p->name, p->description ? p->description : "");
  }
  printf("\n(clustersim policies: every placement, dispatch and controller policy with its "
         "parameters)\n");
}

int cmd_place(int argc, char **argv)
{
  const char *prog = "clustersim place";
  gboolean json = FALSE, list = FALSE;
  CliOverrides overrides = { 0 };
  GOptionEntry entries[] = {
    { "list", 'l', 0, G_OPTION_ARG_NONE, &list, "List the placement policies (clustersim policies: with their parameters)", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the placement as JSON", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = cli_context_new("SCENARIO - compute and print the scenario's placement", entries, &overrides);
  g_option_context_set_summary(ctx,
    "Runs the scenario's placement policy and prints, per GPU, the replicas (model, batch, MPS\n"
    "share) with their summed Creq (in the policy's metric) and Mreq, then the policy's expected\n"
    "goodput per model. Nothing is simulated: `clustersim run` uses the same placement and shows\n"
    "expected next to simulated goodput.");
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  CsConfig *cfg = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (list) {
    list_policies();
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, "expected exactly one SCENARIO file, or --list (see --help)");
    goto out;
  }
  if (!(sc = cli_load_scenario(prog, argv[1], &overrides))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (!(cfg = cs_experiment_compile(sc, &err))) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (!cfg->placement) {
    char *m = g_strdup_printf("dispatch \"%s\" runs every model on every GPU and uses no placement",
                              cfg->dispatch->name);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  const CsPlacement *p = cfg->placement;
  int metric = p->creq_metric >= 0 ? p->creq_metric : CS_CREQ_WSM;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "policy", cfg->placement_policy->name);
  cJSON_AddStringToObject(root, "creq_metric", metric_names[metric]);
  cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
  if (!json)
    printf("placement %s (Creq in %s%s)\n\n%-5s %-10s %8s %8s  replicas (model batch share)\n",
           cfg->placement_policy->name, metric_names[metric],
           p->creq_metric < 0 ? ", the policy has no metric of its own" : "", "gpu", "type",
           "creq_%", "mreq_%");
  int used = 0;
  for (int g = 0; g < cfg->n_gpus; g++) {
    double creq = 0, mreq = 0;
    GString *line = g_string_new(NULL);
    cJSON *o = cJSON_CreateObject(), *reps = cJSON_CreateArray();
    for (guint r = 0; r < p->replicas->len; r++) {
      const CsReplica *rep = &g_array_index(p->replicas, CsReplica, r);
      if (rep->gpu != g)
        continue;
      const CsBatchPoint *pt = point_of(cfg, rep);
      double c = pt && !isnan(pt->creq_pct[metric]) ? pt->creq_pct[metric] : 0;
      double m = cfg->replica_mreq[r]; /* as the memory check counted it */
      creq += c;
      mreq += m;
      g_string_append_printf(line, "%s%s %d %s", line->len ? ", " : "",
                             cfg->clients[rep->model].model, rep->batch,
                             rep->mps_share > 0 ? "" : "-");
      if (rep->mps_share > 0)
        g_string_append_printf(line, "%.4g%%", 100 * rep->mps_share);
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "model", cfg->clients[rep->model].model);
      cJSON_AddNumberToObject(x, "batch", rep->batch);
      cJSON_AddNumberToObject(x, "mps_share", rep->mps_share);
      cJSON_AddNumberToObject(x, "creq_pct", c);
      cJSON_AddNumberToObject(x, "mreq_pct", m);
      cJSON_AddBoolToObject(x, "fails_memory", cfg->replica_failed && cfg->replica_failed[r]);
      cJSON_AddItemToArray(reps, x);
    }
    used += line->len > 0;
    cJSON_AddNumberToObject(o, "id", g);
    cJSON_AddStringToObject(o, "gpu_type", cfg->gpus[g].gpu_type);
    cJSON_AddNumberToObject(o, "creq_pct", creq);
    cJSON_AddNumberToObject(o, "mreq_pct", mreq);
    cJSON_AddItemToObject(o, "replicas", reps);
    cJSON_AddItemToArray(gpus, o);
    if (!json)
      printf("%-5d %-10s %8.2f %8.2f  %s\n", g, cfg->gpus[g].gpu_type, creq, mreq,
             line->len ? line->str : "(idle)");
    g_string_free(line, TRUE);
  }
  cJSON *models = cJSON_AddArrayToObject(root, "models");
  if (!json)
    printf("\n%-16s %10s %10s %12s\n", "model", "planned", "slo_ms", "expected");
  for (int m = 0; m < cfg->n_clients; m++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", cfg->clients[m].model);
    cJSON_AddNumberToObject(o, "rate_rps", cfg->clients[m].planned_rate_rps);
    cJSON_AddNumberToObject(o, "slo_ms", cfg->clients[m].slo_ms);
    cJSON_AddNumberToObject(o, "expected_goodput_rps", p->expected_goodput[m]);
    cJSON_AddItemToArray(models, o);
    if (!json)
      printf("%-16s %10.2f %10.1f %12.2f\n", cfg->clients[m].model, cfg->clients[m].planned_rate_rps,
             cfg->clients[m].slo_ms, p->expected_goodput[m]);
  }
  cJSON_AddNumberToObject(root, "expected_goodput_rps", p->expected_total);
  cJSON_AddNumberToObject(root, "gpus_used", used);
  if (p->gpus_needed >= 0)
    cJSON_AddNumberToObject(root, "gpus_needed", p->gpus_needed);
  cJSON_AddStringToObject(root, "log", p->log->str);
  warn_partial_plans(cfg);
  cJSON_AddItemToObject(root, "warnings", cs_warning_list_to_json(cfg->warnings));
  for (int i = 0; i < cs_warning_list_len(cfg->warnings); i++)
    cli_print_warning(cs_warning_list_get(cfg->warnings, i));
  if (json) {
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
  } else {
    printf("%-16s %10s %10s %12.2f\n", "total", "", "", p->expected_total);
    printf("\n%d of %d GPUs used", used, cfg->n_gpus);
    if (p->gpus_needed >= 0)
      printf("; the policy needs %d to serve everything", p->gpus_needed);
    printf("\n%s%s", p->log->len ? "\npolicy log:\n" : "", p->log->str);
  }
  cJSON_Delete(root);
out:
  g_clear_error(&err);
  cs_config_free(cfg);
  cs_scenario_free(sc);
  cli_overrides_clear(&overrides);
  g_option_context_free(ctx);
  return status;
}
