/* cs_run: validate, open outputs, simulate, close outputs atomically; and
 * the compile every caller above the scenario layer uses (run.h), with the
 * public functions that compile: cs_scenario_validate and
 * cs_scenario_effective_json. */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "sim/engine.h"
#include "policies/control/control.h"
#include "policies/dispatch/dispatch.h"
#include "experiment/trace.h"
#include "policies/placement/placement.h"
#include "run.h"
#include "scenario/scenario.h"

void cs_run_options_init(CsRunOptions *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->seed_override = -1;
}

size_t cs_run_options_size(void)
{
  return sizeof(CsRunOptions);
}

/* A placement candidate's run (scenario/placement_sim.c): nothing written,
 * the seed replaced. */
static CsResults *run_candidate(CsScenario *sc, int64_t seed, GError **error)
{
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.seed_override = seed;
  return cs_run(sc, &opt, error);
}

static const CsScenarioRunner runner = { .run = run_candidate };

CsConfig *cs_experiment_compile(CsScenario *sc, GError **error)
{
  cs_scenario_set_runner(sc, &runner);
  return cs_scenario_compile(sc, error);
}

gboolean cs_scenario_validate(CsScenario *sc, GError **error)
{
  CsConfig *c = cs_experiment_compile(sc, error);
  cs_config_free(c);
  return c != NULL;
}

char *cs_scenario_effective_json(CsScenario *sc, const CsRunOptions *opt, GError **error)
{
  CsConfig *c = cs_experiment_compile(sc, error);
  if (!c)
    return NULL;
  if (opt && opt->seed_override >= 0)
    c->seed = (uint64_t)opt->seed_override;
  char *text = cs_config_effective_json(sc, c);
  cs_config_free(c);
  return text;
}

/* The document as compact JSON text (g_free it); frees the document. */
static char *json_text(cJSON *doc)
{
  char *text = cJSON_PrintUnformatted(doc);
  char *out = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(doc);
  return out;
}

/* The cost of the run: the cluster's hourly price over the longest
 * measurement window, the window the total goodput is measured over. */
static void fill_cost(CsResults *res, const CsConfig *cfg)
{
  CsCost *k = &res->cost;
  k->price_per_hour = cs_config_cluster_price(cfg, &res->cost_note);
  k->duration_s = res->total.window_s;
  if (cfg->controller && cfg->controller->scales_gpus) {
    /* Whole GPUs only (MIG is refused with autoscaling): each for its own
     * provisioned time, at its node's price. */
    k->gpu_hours = 0.0;
    k->cost = 0.0;
    for (int g = 0; g < cfg->n_gpus; g++) {
      double hours = (double)res->gpus[g].billed_ns / 3.6e12;
      k->gpu_hours += hours;
      k->cost += cfg->nodes[cfg->gpus[g].node].price_per_hour * hours;
    }
    /* LLM deployments hold their GPUs the whole window (no autoscaling). */
    for (int i = 0; i < cfg->n_llm; i++) {
      double hours = cfg->llm[i].gpus * k->duration_s / 3600.0;
      k->gpu_hours += hours;
      k->cost += cfg->llm[i].price_per_hour * hours;
    }
  } else {
    int physical = 0;
    for (int g = 0; g < cfg->n_gpus; g++)
      physical = MAX(physical, cfg->gpus[g].physical + 1);
    for (int i = 0; i < cfg->n_llm; i++)
      physical += cfg->llm[i].gpus;
    k->gpu_hours = physical * k->duration_s / 3600.0;
    k->cost = k->price_per_hour * k->duration_s / 3600.0;
  }
  if (isnan(k->price_per_hour))
    k->cost = NAN;
  gboolean scaled = cfg->controller && cfg->controller->scales_gpus;
  k->paid_per_hour = !scaled             ? k->price_per_hour
                     : k->duration_s > 0 ? k->cost / k->duration_s * 3600.0
                                         : NAN;
  k->goodput_per_dollar = NAN;
  if (k->paid_per_hour > 0)
    k->goodput_per_dollar = res->total.goodput_rps * 3600.0 / k->paid_per_hour;
  else if (k->price_per_hour == 0)
    res->cost_note = g_strdup("goodput per dollar undefined: the cluster's price is 0");
  k->note = res->cost_note;
}

/* The decision log's first line: what its records refer to
 * (docs/scenario.md, "Decision log"). */
static void write_decisions_header(FILE *f, CsScenario *sc, const CsConfig *cfg)
{
  cJSON *h = cJSON_CreateObject();
  cJSON_AddStringToObject(h, "format", "clustersim-decisions");
  cJSON_AddNumberToObject(h, "version", 1);
  cJSON_AddStringToObject(h, "time_unit", "ns");
  cJSON_AddNumberToObject(h, "seed", (double)cfg->seed);
  cJSON *models = cJSON_AddArrayToObject(h, "models");
  for (int m = 0; m < cfg->n_clients; m++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", cfg->clients[m].model);
    cJSON_AddNumberToObject(o, "slo_ns", (double)cfg->clients[m].slo_ns);
    cJSON_AddItemToArray(models, o);
  }
  cJSON *gpus = cJSON_AddArrayToObject(h, "gpus");
  for (int g = 0; g < cfg->n_gpus; g++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "gpu_type", cfg->gpus[g].gpu_type);
    cJSON_AddNumberToObject(o, "node", cfg->gpus[g].node);
    cJSON_AddNumberToObject(o, "sm_fraction", cfg->gpus[g].sm_fraction);
    cJSON_AddItemToArray(gpus, o);
  }
  cJSON_AddStringToObject(h, "dispatch", cfg->dispatch->name);
  cJSON_AddStringToObject(h, "placement", cfg->placement ? cfg->placement_policy->name : "none");
  cJSON_AddBoolToObject(h, "mps", cfg->mps);
  /* The effective scenario (defaults filled, files by absolute path): a
   * replay reads its clients, profiles and network from it. */
  char *eff = cs_config_effective_json(sc, cfg);
  cJSON *scenario = eff ? cJSON_Parse(eff) : NULL;
  g_free(eff);
  if (scenario)
    cJSON_AddItemToObject(h, "scenario", scenario);
  char *text = cJSON_PrintUnformatted(h);
  fprintf(f, "%s\n", text);
  cJSON_free(text);
  cJSON_Delete(h);
}

/* The results' effective scenario is a cJSON tree printed when asked. */
static char *print_effective(const void *doc)
{
  return cs_json_print_exact_line(doc);
}

static void free_effective(void *doc)
{
  cJSON_Delete(doc);
}

CsResults *cs_run(CsScenario *sc, const CsRunOptions *opt, GError **error)
{
  CsConfig *cfg = cs_experiment_compile(sc, error);
  if (!cfg)
    return NULL;
  if (opt && opt->seed_override >= 0)
    cfg->seed = (uint64_t)opt->seed_override;
  if (!cs_config_check_requests(cfg, cs_scenario_name(sc), opt ? opt->max_requests : 0, 1.0,
                                "--max-requests, or CsRunOptions.max_requests, raises it",
                                error)) {
    cs_config_free(cfg);
    return NULL;
  }
  cJSON *setup = cs_config_setup_json(cfg, error);
  if (!setup) {
    cs_config_free(cfg);
    return NULL;
  }

  /* The CSV is written under a temporary name and renamed at the end, so a
   * failed run leaves no partial file behind. */
  FILE *csv = NULL;
  char *tmp = NULL;
  if (opt && opt->requests_csv) {
    tmp = g_strconcat(opt->requests_csv, ".partial", NULL);
    csv = g_fopen(tmp, "w");
    if (!csv) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  opt->requests_csv, g_strerror(errno));
      g_free(tmp);
      cs_config_free(cfg);
      cJSON_Delete(setup);
      return NULL;
    }
    setvbuf(csv, NULL, _IOFBF, 1 << 20);
  }
  /* The timeline's recorder sits between the engine and the caller's callbacks. */
  CsRunOptions traced;
  CsTraceWriter *trace = NULL;
  if (opt && opt->trace_json) {
    const char **names = g_new(const char *, MAX(cfg->n_clients, 1));
    for (int i = 0; i < cfg->n_clients; i++)
      names[i] = cfg->clients[i].model;
    trace = cs_trace_writer_new(opt, names, cfg->n_clients, &traced, error);
    g_free(names);
    if (!trace) {
      if (csv) {
        fclose(csv);
        g_unlink(tmp);
        g_free(tmp);
      }
      cs_config_free(cfg);
      cJSON_Delete(setup);
      return NULL;
    }
  }
  /* The decision log, like the CSV, under a temporary name until the end. */
  FILE *dec = NULL;
  char *dec_tmp = NULL;
  if (opt && opt->decisions) {
    dec_tmp = g_strconcat(opt->decisions, ".partial", NULL);
    dec = g_fopen(dec_tmp, "w");
    if (!dec) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  opt->decisions, g_strerror(errno));
      g_free(dec_tmp);
      dec_tmp = NULL;
      if (csv) {
        fclose(csv);
        g_unlink(tmp);
        g_free(tmp);
      }
      cs_trace_writer_free(trace);
      cs_config_free(cfg);
      cJSON_Delete(setup);
      return NULL;
    }
    setvbuf(dec, NULL, _IOFBF, 1 << 20);
    write_decisions_header(dec, sc, cfg);
  }
  CsResults *res = cs_engine_run(cfg, csv, dec, trace ? &traced : opt, error);
  if (dec) {
    gboolean ok = !ferror(dec);
    int saved = errno;
    if (fclose(dec) != 0) {
      ok = FALSE;
      saved = errno;
    }
    if (res && !ok) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  opt->decisions, g_strerror(saved));
      cs_results_free(res);
      res = NULL;
    }
    if (!res) {
      g_unlink(dec_tmp);
      g_clear_pointer(&dec_tmp, g_free);
    }
  }
  /* A limit the run reached (a time or size int64 cannot hold) is bad input:
   * name the scenario, as validation does. */
  if (!res && error && *error && g_error_matches(*error, CS_ERROR, CS_ERROR_INVALID))
    g_prefix_error(error, "%s: ", cs_scenario_name(sc));
  if (res && trace && !cs_trace_writer_finish(trace, res, error)) {
    cs_results_free(res);
    res = NULL;
  } else if (!res) {
    cs_trace_writer_free(trace);
  }
  if (!res) {
    if (csv) {
      fclose(csv);
      g_unlink(tmp);
      g_free(tmp);
    }
    if (dec_tmp) {
      g_unlink(dec_tmp);
      g_free(dec_tmp);
    }
    cs_config_free(cfg);
    cJSON_Delete(setup);
    return NULL;
  }
  res->setup_json = json_text(setup);
  res->dispatch_params_json = cs_dispatch_describe_json(cfg->dispatch, cfg->dispatch_params);
  if (cfg->controller && res->control)
    res->control->params_json = cs_controller_describe_json(cfg->controller, cfg->controller_params);
  res->placement = cfg->placement ? cs_placement_copy(cfg->placement) : NULL;
  res->effective_doc = cs_config_effective_doc(sc, cfg);
  res->effective_print = print_effective;
  res->effective_free = free_effective;
  fill_cost(res, cfg);
  cs_config_free(cfg);
  if (csv) {
    gboolean ok = !ferror(csv);
    ok = (fclose(csv) == 0) && ok;
    if (ok && g_rename(tmp, opt->requests_csv) != 0)
      ok = FALSE;
    if (!ok) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  opt->requests_csv, g_strerror(errno));
      g_unlink(tmp);
      g_free(tmp);
      if (dec_tmp) {
        g_unlink(dec_tmp);
        g_free(dec_tmp);
      }
      cs_results_free(res);
      return NULL;
    }
    g_free(tmp);
  }
  if (dec_tmp) {
    /* Last, so that a run that failed anywhere leaves no decision log. */
    if (g_rename(dec_tmp, opt->decisions) != 0) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  opt->decisions, g_strerror(errno));
      g_unlink(dec_tmp);
      g_free(dec_tmp);
      cs_results_free(res);
      return NULL;
    }
    g_free(dec_tmp);
  }
  return res;
}
