/* Goodput search by bisection over a rate multiplier; see clustersim.h. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "scenario/scenario.h"

void cs_goodput_search_options_init(CsGoodputSearchOptions *o)
{
  o->criterion = CS_GOODPUT_P99;
  o->bad_rate_bound = 0.01;
  o->max_multiplier = 64.0;
  o->tolerance = 0.005;
  o->max_probes = 40;
}

static gboolean passes(const CsResults *r, const CsGoodputSearchOptions *opt, double *worst,
                       gboolean *measured_all)
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

gboolean cs_goodput_search(CsScenario *sc, const CsGoodputSearchOptions *opt,
                           const CsRunOptions *run_opt, CsGoodputProbeCallback on_probe,
                           void *user_data, CsGoodputProbe *best, GError **error)
{
  if (!(opt->max_multiplier > 0) || !(opt->tolerance > 0 && opt->tolerance < 1) ||
      opt->max_probes < 2 || !(opt->bad_rate_bound >= 0 && opt->bad_rate_bound < 1)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "goodput search: options out of range (max multiplier > 0, tolerance in (0, 1), "
                "at least 2 probes, bad rate bound in [0, 1))");
    return FALSE;
  }
  CsConfig *cfg = cs_scenario_compile(sc, error);
  if (!cfg)
    return FALSE;
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
    p.pass = passes(r, opt, &p.worst_bad_rate, &p.measured_all);
    cs_results_free(r);
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
  return ok;
}
