/* The capacity search over LLM replicas and the cheapest deployment for a
 * rate (llm_search.h says what is computed). */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "llm_search.h"

const char *cs_llm_slo_name(CsLlmSloMetric m)
{
  static const char *const names[] = { "ttft_ms", "tbt_ms", "scheduling_delay_s" };
  g_return_val_if_fail(m >= 0 && m < CS_LLM_SLO_N, "?");
  return names[m];
}

/* The metric's samples of one run, in its unit; *n of them. */
static double *samples(const CsLlmSimResult *r, CsLlmSloMetric m, size_t *n)
{
  double *v;
  if (m == CS_LLM_SLO_TBT) {
    *n = r->tbt_ns->len;
    v = g_new(double, *n ? *n : 1);
    for (size_t i = 0; i < *n; i++)
      v[i] = (double)g_array_index(r->tbt_ns, int64_t, i) / 1e6;
    return v;
  }
  *n = (size_t)r->n_requests;
  v = g_new(double, *n ? *n : 1);
  for (size_t i = 0; i < *n; i++) {
    const CsLlmSimRequestResult *q = &r->requests[i];
    v[i] = m == CS_LLM_SLO_TTFT ? (double)(q->first_token_ns - q->arrival_ns) / 1e6
                                : (double)(q->scheduled_ns - q->arrival_ns) / 1e9;
  }
  return v;
}

void cs_llm_slo_eval(const CsLlmSlo *slo, const CsLlmSimResult *r, CsLlmProbe *p)
{
  p->pass = TRUE;
  p->ratio = 0;
  for (int m = 0; m < CS_LLM_SLO_N; m++) {
    p->value[m] = NAN;
    const CsLlmSloBound *b = &slo->bound[m];
    if (!b->on)
      continue;
    size_t n;
    double *v = samples(r, (CsLlmSloMetric)m, &n);
    if (n > 0) {
      p->value[m] = cs_llm_quantile(v, n, b->quantile);
      p->ratio = fmax(p->ratio, p->value[m] / b->max);
      if (!(p->value[m] <= b->max))
        p->pass = FALSE;
    }
    g_free(v);
  }
  cs_llm_sim_summary(r, &p->summary);
}

/* The largest arrival of the config's trace, ns (0 when empty). */
static int64_t trace_last_arrival(const CsLlmConfig *cfg)
{
  int64_t last = 0;
  for (int i = 0; i < cfg->n_trace; i++)
    last = cfg->trace_reqs[i].arrival_ns > last ? cfg->trace_reqs[i].arrival_ns : last;
  return last;
}

/* A probe's requests: with trace_qps > 0 the config's trace (its arrivals
 * those of rate trace_qps) with every arrival x trace_qps / qps, rounded
 * to the ns; otherwise the synthetic ones drawn at qps. */
static CsLlmSimRequest *probe_requests(const CsLlmConfig *cfg, double trace_qps, double qps,
                                       int *n, GError **error)
{
  if (trace_qps <= 0)
    return cs_llm_config_requests(cfg, qps, n, error);
  double f = trace_qps / qps;
  if ((double)trace_last_arrival(cfg) * f > 9e18) {
    cs_json_fail(error, cfg->file, "search.trace_qps", "at %.6g requests/s the trace's "
                 "arrivals pass 9e9 s", qps);
    return NULL;
  }
  *n = cfg->n_trace;
  CsLlmSimRequest *r = g_memdup2(cfg->trace_reqs, sizeof *r * (size_t)(*n ? *n : 1));
  for (int i = 0; i < *n; i++)
    r[i].arrival_ns = llround((double)r[i].arrival_ns * f);
  return r;
}

/* decode < 0: the config's decode pool (none when colocated). */
static gboolean probe_at(const CsLlmConfig *cfg, int replicas, int decode, double qps,
                         double trace_qps, const CsLlmSlo *slo, CsLlmProbe *out, GError **error)
{
  int n = 0;
  CsLlmSimRequest *reqs = probe_requests(cfg, trace_qps, qps, &n, error);
  if (reqs == NULL)
    return FALSE;
  CsLlmSimConfig sim = cfg->sim;
  if (replicas > 0)
    sim.replicas = replicas;
  if (decode >= 0)
    sim.decode_replicas = decode;
  GError *e = NULL;
  CsLlmSimResult *res = cs_llm_sim_run(&sim, reqs, n, &e);
  g_free(reqs);
  if (res == NULL) {
    if (sim.decode_replicas > 0)
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: %dP+%dD at %.6g "
                  "requests/s: %s", cfg->file, sim.replicas, sim.decode_replicas, qps, e->message);
    else
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: %d replica(s) at %.6g "
                  "requests/s: %s", cfg->file, sim.replicas, qps, e->message);
    g_error_free(e);
    return FALSE;
  }
  memset(out, 0, sizeof *out);
  out->qps = qps;
  out->replicas = sim.replicas;
  out->decode_replicas = sim.decode_replicas;
  out->batches = res->n_batches;
  out->attention_clamped_batches = res->attention_clamped_batches;
  cs_llm_slo_eval(slo, res, out);
  cs_llm_sim_result_free(res);
  return TRUE;
}

gboolean cs_llm_probe(const CsLlmConfig *cfg, int replicas, double qps, const CsLlmSlo *slo,
                      CsLlmProbe *out, GError **error)
{
  return probe_at(cfg, replicas, -1, qps, 0, slo, out, error);
}

gboolean cs_llm_probe_pools(const CsLlmConfig *cfg, int prefill, int decode, double qps,
                            const CsLlmSlo *slo, CsLlmProbe *out, GError **error)
{
  g_return_val_if_fail(cfg->sim.decode_replicas > 0 && prefill >= 1 && decode >= 1, FALSE);
  return probe_at(cfg, prefill, decode, qps, 0, slo, out, error);
}

void cs_llm_search_params_init(CsLlmSearchParams *p)
{
  p->start_qps = 1;
  p->granularity_pct = 2.5;
  p->max_probes = 20;
  p->trace_qps = 0;
}

void cs_llm_search_result_free(CsLlmSearchResult *r)
{
  if (r == NULL)
    return;
  g_array_free(r->probes, TRUE);
  g_free(r);
}

CsLlmSearchResult *cs_llm_search_capacity(const CsLlmConfig *cfg, int replicas,
                                          const CsLlmSlo *slo, const CsLlmSearchParams *sp,
                                          GError **error)
{
  CsLlmSearchResult *r = g_new0(CsLlmSearchResult, 1);
  r->probes = g_array_new(FALSE, TRUE, sizeof(CsLlmProbe));
  r->best = -1;
  double left = 0, right = 2 * sp->start_qps, qps = 0, min_fail = 4294967296.0;
  for (int it = 0; it < sp->max_probes; it++) {
    if (fabs(left - right) < sp->granularity_pct * qps / 100)
      break;
    double next = (left + right) / 2;
    /* Below this rate the arrivals could pass 9e9 s (n intervals of at
     * most 3 / qps), which cs_llm_config_requests refuses: a search that
     * fails down to there has no rate to report, not an error. */
    if (sp->trace_qps > 0 ? (double)trace_last_arrival(cfg) * sp->trace_qps / next > 9e18
                          : cfg->n * 3.0 / next > 9e9) {
      r->stopped_low = TRUE;
      break;
    }
    qps = next;
    CsLlmProbe p;
    if (!probe_at(cfg, replicas, -1, qps, sp->trace_qps, slo, &p, error)) {
      cs_llm_search_result_free(r);
      return NULL;
    }
    g_array_append_val(r->probes, p);
    if (p.pass) {
      r->found = TRUE;
      r->max_qps = qps;
      r->best = (int)r->probes->len - 1;
      if (p.ratio < 1.0 / 8)
        right = fmin(right * 4, min_fail);
      else if (p.ratio < 1.0 / 4 || qps > 0.8 * right)
        right = fmin(right * 2, min_fail);
      left = qps;
    } else {
      right = p.ratio > 100 && qps / 2 > left ? qps / 2 : qps;
      min_fail = fmin(min_fail, qps);
    }
  }
  /* Monotone: every probe that passed lies below every one that failed. */
  double lowest_fail = INFINITY, highest_pass = -INFINITY;
  for (guint i = 0; i < r->probes->len; i++) {
    const CsLlmProbe *p = &g_array_index(r->probes, CsLlmProbe, i);
    if (p->pass)
      highest_pass = fmax(highest_pass, p->qps);
    else
      lowest_fail = fmin(lowest_fail, p->qps);
  }
  r->non_monotone = highest_pass > lowest_fail;
  return r;
}

int cs_llm_deployment_gpus(const CsLlmConfig *cfg, int replicas)
{
  /* Disaggregated: replicas of the prefill pool, and the decode pool's. */
  return (replicas + cfg->sim.decode_replicas) * cfg->tensor_parallel * cfg->pipeline_parallel;
}

static gboolean check_price(const CsLlmConfig *cfg, GError **error)
{
  if (!(cfg->device->price_per_hour > 0)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: device: \"%s\" has no "
                "price_per_hour in models.json: a deployment's cost needs it", cfg->file,
                cfg->device->name);
    return FALSE;
  }
  return TRUE;
}

gboolean cs_llm_deployment_cost(const CsLlmConfig *cfg, int replicas, double *per_hour,
                                GError **error)
{
  if (!check_price(cfg, error))
    return FALSE;
  *per_hour = cs_llm_deployment_gpus(cfg, replicas) * cfg->device->price_per_hour;
  return TRUE;
}

gboolean cs_llm_pools_cost(const CsLlmConfig *cfg, int prefill, int decode, int *gpus,
                           double *per_hour, GError **error)
{
  if (!check_price(cfg, error))
    return FALSE;
  *gpus = (prefill + decode) * cfg->tensor_parallel * cfg->pipeline_parallel;
  *per_hour = *gpus * cfg->device->price_per_hour;
  return TRUE;
}

gboolean cs_llm_fewest_replicas(const CsLlmConfig *cfg, double qps, const CsLlmSlo *slo,
                                int max_replicas, int *replicas, GArray *probes, GError **error)
{
  *replicas = 0;
  for (int k = 1; k <= max_replicas; k++) {
    CsLlmProbe p;
    if (!cs_llm_probe(cfg, k, qps, slo, &p, error))
      return FALSE;
    if (probes)
      g_array_append_val(probes, p);
    if (p.pass) {
      *replicas = k;
      break;
    }
  }
  return TRUE;
}

gboolean cs_llm_fewest_pools(const CsLlmConfig *cfg, double qps, const CsLlmSlo *slo,
                             int max_replicas, int max_probes, CsLlmPoolFit *out,
                             GArray *probes, GError **error)
{
  memset(out, 0, sizeof *out);
  out->best = -1;
  /* Every split of a total n costs the same (n x GPUs a replica x price):
   * totals in increasing order, and within one the fewer prefill replicas
   * first, so the first split that passes is the cheapest (ties to fewer
   * prefill replicas). No split is skipped: pass/fail need not be monotone
   * in the split, nor in the total. */
  for (int n = 2; n <= max_replicas; n++) {
    for (int p = 1; p <= n - 1; p++) {
      if (out->probes >= max_probes) {
        out->limited = TRUE;
        out->stopped_at_prefill = p;
        out->stopped_at_total = n;
        return TRUE;
      }
      CsLlmProbe pr;
      if (!cs_llm_probe_pools(cfg, p, n - p, qps, slo, &pr, error))
        return FALSE;
      out->probes++;
      if (probes)
        g_array_append_val(probes, pr);
      if (pr.pass) {
        out->prefill = p;
        out->decode = n - p;
        out->best = probes ? (int)probes->len - 1 : -1;
        return TRUE;
      }
    }
    out->complete_total = n;
  }
  return TRUE;
}

int cs_llm_cheapest(const CsLlmFit *fits, int n)
{
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (fits[i].replicas <= 0)
      continue;
    if (best < 0 || fits[i].cost_per_hour < fits[best].cost_per_hour ||
        (fits[i].cost_per_hour == fits[best].cost_per_hour && fits[i].gpus < fits[best].gpus))
      best = i;
  }
  return best;
}
