/* The size of a run before it runs: how many requests the clients will send,
 * and the refusal of a run that would send more than the caller allows (the
 * CLI's --max-requests); see scenario.h.
 *
 * Why count requests: memory grows with them (latency samples per request,
 * requests queued at the dispatch policy, a row each in requests.csv) and so
 * does the run time; every other structure of the engine grows with batches
 * or events, which requests bound. A rate of 10^12 req/s for 10^9 s is
 * in range field by field, but would run for ever. */
#include <math.h>

#include "common/json_input.h"
#include "scenario.h"

double cs_config_expected_requests(const CsConfig *c, int i, double rate_multiplier)
{
  const CsClientConfig *cc = &c->clients[i];
  double warmup_s = cc->warmup_ns * 1e-9;
  if (cc->arrival == CS_ARRIVAL_TIMES)
    return (double)cc->n_times; /* explicit times or exact trace replay: fixed */
  if (cc->arrival == CS_ARRIVAL_PIECEWISE) {
    /* The trace's counts over its window (warm-up included), scaled. */
    double n = 0;
    for (int64_t k = 0; k < cc->n_intervals; k++)
      n += (double)cc->interval_counts[k] * (cc->interval_scale ? cc->interval_scale[k] : 1.0);
    return n * cc->count_scale;
  }
  double rate = cc->rate_rps * rate_multiplier;
  if (cc->requests > 0)
    return (double)cc->requests + rate * warmup_s;
  return rate * (warmup_s + cc->duration_ns * 1e-9);
}

gboolean cs_config_check_requests(const CsConfig *c, const char *file, int64_t max_requests,
                                  double rate_multiplier, const char *how, GError **error)
{
  if (max_requests == 0)
    max_requests = CS_DEFAULT_MAX_REQUESTS;
  if (max_requests < 0)
    return TRUE;
  double total = 0, most = -1;
  int busiest = 0;
  for (int i = 0; i < c->n_clients; i++) {
    double n = cs_config_expected_requests(c, i, rate_multiplier);
    total += n;
    if (n > most) {
      most = n;
      busiest = i;
    }
  }
  if (total <= (double)max_requests)
    return TRUE;
  char *jp = cs_json_path_index("clients", busiest);
  gboolean ok = cs_json_fail(
    error, file, "clients",
    "the run would send about %.3g requests%s, more than the limit of %" G_GINT64_FORMAT
    " (%s); it would need about %.3g GiB of memory for them (%d bytes per request); %s "
    "(model %s) alone sends about %.3g",
    total, rate_multiplier != 1.0 ? " at the largest rate multiplier" : "",
    (gint64)max_requests, how, total * CS_BYTES_PER_REQUEST / (1024.0 * 1024.0 * 1024.0),
    CS_BYTES_PER_REQUEST, jp, c->clients[busiest].model, most);
  g_free(jp);
  return ok;
}
