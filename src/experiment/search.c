/* Goodput search by bisection over a rate multiplier; see clustersim.h. */
#include <math.h>
#include <string.h>

#include "search.h"

#include "common/json_input.h"
#include "run.h"
#include "scenario/scenario.h"

void cs_goodput_search_options_init(CsGoodputSearchOptions *o)
{
  o->criterion = CS_GOODPUT_P99;
  o->bad_rate_bound = 0.01;
  o->max_multiplier = 64.0;
  o->tolerance = 0.005;
  o->max_probes = 40;
}

gboolean cs_goodput_probe_passes(const CsResults *r, const CsGoodputSearchOptions *opt,
                                 double *worst, gboolean *measured_all)
{
  gboolean ok = TRUE;
  *worst = 0.0;
  *measured_all = TRUE;
  for (int i = 0; i < cs_results_n_models(r); i++) {
    const CsModelResult *m = cs_results_model(r, i);
    *worst = MAX(*worst, m->bad_rate);
    /* A probe that measured nothing shows nothing: it cannot pass. */
    if (m->measured == 0) {
      ok = FALSE;
      *measured_all = FALSE;
      *worst = 1.0;
      continue;
    }
    if (opt->criterion == CS_GOODPUT_P99) {
      /* Nearest-rank p99 over all measured requests, dropped and failed ones
       * counted as infinitely late, is <= SLO exactly when this many are good. */
      int64_t need = (int64_t)ceil(0.99 * (double)m->measured);
      ok &= m->good >= need;
    } else {
      ok &= m->bad_rate <= opt->bad_rate_bound;
    }
  }
  return ok;
}

/* Runs the scenario with every client's rate multiplied by k. */
static CsResults *probe(CsScenario *sc, const double *base_rates, int n, double k,
                        const CsRunOptions *run_opt, GError **error)
{
  for (int i = 0; i < n; i++) {
    char path[64], value[64];
    g_snprintf(path, sizeof path, "clients[%d].rate", i);
    g_ascii_formatd(value, sizeof value, "%.17g", base_rates[i] * k);
    if (!cs_scenario_set_unrecorded(sc, path, value, error))
      return NULL;
  }
  return cs_run(sc, run_opt, error);
}

/* The search; kept (may be NULL) as cs_goodput_search_keep. */
static gboolean search(CsScenario *sc, const CsGoodputSearchOptions *opt,
                       const CsRunOptions *run_opt, CsGoodputProbeCallback on_probe,
                       void *user_data, CsGoodputProbe *best, CsResults **kept, int *probes,
                       GError **error)
{
  if (kept)
    *kept = NULL;
  *probes = 0;
  if (!(opt->max_multiplier > 0) || !(opt->tolerance > 0 && opt->tolerance < 1) ||
      opt->max_probes < 2 || !(opt->bad_rate_bound >= 0 && opt->bad_rate_bound < 1)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "goodput search: options out of range (max multiplier > 0, tolerance in (0, 1), "
                "at least 2 probes, bad rate bound in [0, 1))");
    return FALSE;
  }
  CsConfig *cfg = cs_experiment_compile(sc, error);
  if (!cfg)
    return FALSE;
  if (cfg->n_llm > 0) {
    cs_config_free(cfg);
    return cs_json_fail(error, cs_scenario_name(sc), "llm",
                        "the goodput search scales the DNN clients' rates and judges every "
                        "model, an LLM deployment's fixed request list included: remove "
                        "\"llm\", or search an LLM deployment with clustersim llm search");
  }
  int n = cfg->n_clients;
  double *base = g_new(double, n);
  gboolean ok = TRUE;
  for (int i = 0; i < n && ok; i++) {
    base[i] = cfg->clients[i].rate_rps;
    if (cfg->clients[i].arrival == CS_ARRIVAL_TIMES) {
      char *jp = cs_json_path_index("clients", i);
      ok = cs_json_fail(error, cs_scenario_name(sc), jp,
                        "an explicit \"times\" arrival has no rate to scale in a goodput search");
      g_free(jp);
    }
  }
  /* Refuse before the first probe, not at the probe that crosses the limit:
   * the probes printed so far would be output of a search that fails. */
  ok = ok && cs_config_check_requests(cfg, cs_scenario_name(sc),
                                      run_opt ? run_opt->max_requests : 0, opt->max_multiplier,
                                      "--max-requests raises it, a lower --max-multiplier "
                                      "avoids it",
                                      error);
  cs_config_free(cfg);
  if (!ok) {
    g_free(base);
    return FALSE;
  }
  double total_base = 0;
  for (int i = 0; i < n; i++)
    total_base += base[i];

  *best = (CsGoodputProbe){ .index = -1, .multiplier = 0.0, .pass = TRUE };
  /* Bracket: grow from 1/64 of the maximum by doubling until a probe fails,
   * then bisect between the last pass and the first failure. */
  double lo = 0.0, hi = -1.0, k = opt->max_multiplier / 64.0;
  const double min_k = opt->max_multiplier / 4096.0;
  int index = 0;
  while (ok && index < opt->max_probes) {
    if (hi > 0) {
      if ((hi - lo) / hi <= opt->tolerance)
        break;
      k = 0.5 * (lo + hi);
    }
    CsResults *r = probe(sc, base, n, k, run_opt, error);
    if (!r) {
      ok = FALSE;
      break;
    }
    CsGoodputProbe p = { .index = index++, .multiplier = k, .offered_rps = total_base * k,
                         .goodput_rps = cs_results_total(r)->goodput_rps };
    p.pass = cs_goodput_probe_passes(r, opt, &p.worst_bad_rate, &p.measured_all);
    *probes = index;
    /* Keep the highest pass; until one passes, the latest probe. */
    if (kept && (p.pass || best->index < 0)) {
      cs_results_free(*kept);
      *kept = r;
    } else {
      cs_results_free(r);
    }
    if (on_probe)
      on_probe(&p, user_data);
    /* Below a probe that measured nothing, or below the floor, lower loads
     * tell nothing more: the objective fails at every load tried. */
    if (!p.pass && lo == 0.0 && (!p.measured_all || k <= min_k))
      break;
    if (p.pass) {
      lo = k;
      *best = p;
      if (hi < 0) {
        if (k >= opt->max_multiplier)
          break; /* passes at the top of the range: report it */
        k = MIN(2.0 * k, opt->max_multiplier);
      }
    } else {
      hi = k;
    }
  }
  /* Leave the scenario as the caller gave it. */
  for (int i = 0; i < n && ok; i++) {
    char path[64], value[64];
    g_snprintf(path, sizeof path, "clients[%d].rate", i);
    g_ascii_formatd(value, sizeof value, "%.17g", base[i]);
    cs_scenario_set_unrecorded(sc, path, value, NULL);
  }
  g_free(base);
  if (!ok && kept) {
    cs_results_free(*kept);
    *kept = NULL;
  }
  return ok;
}

gboolean cs_goodput_search(CsScenario *sc, const CsGoodputSearchOptions *opt,
                           const CsRunOptions *run_opt, CsGoodputProbeCallback on_probe,
                           void *user_data, CsGoodputProbe *best, GError **error)
{
  int probes;
  return search(sc, opt, run_opt, on_probe, user_data, best, NULL, &probes, error);
}

gboolean cs_goodput_search_keep(CsScenario *sc, const CsGoodputSearchOptions *opt,
                                const CsRunOptions *run_opt, CsGoodputProbe *best,
                                CsResults **kept, int *probes, GError **error)
{
  return search(sc, opt, run_opt, NULL, NULL, best, kept, probes, error);
}

gboolean cs_search_options_read(const cJSON *root, const char *file, gboolean *present,
                                CsGoodputSearchOptions *o, GError **error)
{
  static const char *const keys[] = { "criterion", "bad_rate_bound", "max_multiplier",
                                      "tolerance", "max_probes", NULL };
  cs_goodput_search_options_init(o);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "search");
  *present = s != NULL;
  if (!s)
    return TRUE;
  const char *criterion = NULL;
  int64_t max_probes = o->max_probes;
  gboolean has_bound = cJSON_IsObject(s) && cJSON_HasObjectItem(s, "bad_rate_bound");
  if (!cs_json_expect_object(s, file, "search", error) ||
      !cs_json_check_keys(s, keys, file, "search", error) ||
      !cs_json_read_string(s, "criterion", FALSE, &criterion, file, "search", error) ||
      !cs_json_read_double(s, "bad_rate_bound", FALSE, 0.0, 1.0, &o->bad_rate_bound, file,
                           "search", error) ||
      !cs_json_read_double(s, "max_multiplier", FALSE, 0.0, 1e9, &o->max_multiplier, file,
                           "search", error) ||
      !cs_json_read_double(s, "tolerance", FALSE, 0.0, 1.0, &o->tolerance, file, "search",
                           error) ||
      !cs_json_read_int64(s, "max_probes", FALSE, 2, 1000, &max_probes, file, "search", error))
    return FALSE;
  o->max_probes = (int)max_probes;
  if (criterion && strcmp(criterion, "bad_rate") == 0)
    o->criterion = CS_GOODPUT_BAD_RATE;
  else if (criterion && strcmp(criterion, "p99") != 0)
    return cs_json_fail(error, file, "search.criterion",
                        "expected \"p99\" or \"bad_rate\", got \"%s\"", criterion);
  /* The interval ends the readers accept but the search does not. */
  if (!(o->bad_rate_bound < 1.0))
    return cs_json_fail(error, file, "search.bad_rate_bound", "expected a number below 1");
  if (!(o->max_multiplier > 0.0))
    return cs_json_fail(error, file, "search.max_multiplier", "expected a number above 0");
  if (!(o->tolerance > 0.0 && o->tolerance < 1.0))
    return cs_json_fail(error, file, "search.tolerance",
                        "expected a number between 0 and 1 (exclusive)");
  if (has_bound && o->criterion != CS_GOODPUT_BAD_RATE)
    return cs_json_fail(error, file, "search.bad_rate_bound",
                        "applies to the \"bad_rate\" criterion only; set \"criterion\": "
                        "\"bad_rate\" or remove it");
  return TRUE;
}

cJSON *cs_search_options_describe(const CsGoodputSearchOptions *o)
{
  cJSON *d = cJSON_CreateObject();
  gboolean bad_rate = o->criterion == CS_GOODPUT_BAD_RATE;
  cJSON_AddStringToObject(d, "criterion", bad_rate ? "bad_rate" : "p99");
  if (bad_rate)
    cJSON_AddNumberToObject(d, "bad_rate_bound", o->bad_rate_bound);
  cJSON_AddNumberToObject(d, "max_multiplier", o->max_multiplier);
  cJSON_AddNumberToObject(d, "tolerance", o->tolerance);
  cJSON_AddNumberToObject(d, "max_probes", o->max_probes);
  return d;
}
