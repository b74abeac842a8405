/* The metrics of a finished run, from the clients' counters and samples:
 * per model (window, rates, latency and stage percentiles, batch sizes) and
 * in total, and the warnings about the run (unstable models, nothing served
 * or measured). */
#include <math.h>
#include <string.h>

#include "engine_state.h"
#include "samples.h"

void cs_engine_fill_model_result(CsModelResult *m, Client *c)
{
  const CsClientConfig *cfg = c->cfg;
  m->slo_ms = cfg->slo_ms;
  m->offered_rps = cfg->rate_rps;
  m->planned_rps = cfg->planned_rate_rps;
  int64_t window = c->window_end_ns - c->window_start_ns;
  m->window_s = window > 0 ? window * 1e-9 : 0.0;
  m->generated = c->generated;
  m->warmup = c->warmup;
  m->measured = c->measured;
  m->completed = c->completed;
  m->good = c->good;
  m->failed = c->failed;
  m->dropped = c->dropped;
  m->unserved = c->unserved;
  m->late = c->late;
  m->in_window = c->in_window;
  m->good_in_window = c->good_in_window;
  m->drain_s = c->measured > 0 && c->window_end_ns > 0 && c->last_out_ns > c->window_end_ns
                 ? (c->last_out_ns - c->window_end_ns) * 1e-9
                 : 0.0;
  m->submitted_rps = m->window_s > 0 ? c->measured / m->window_s : 0.0;
  m->throughput_rps = m->window_s > 0 ? c->in_window / m->window_s : 0.0;
  m->goodput_rps = m->window_s > 0 ? c->good_in_window / m->window_s : 0.0;
  m->bad_rate = c->measured > 0 ? 1.0 - (double)c->good / (double)c->measured : 0.0;
  cs_samples_stats(&c->e2e, 1, &m->latency);
  cs_samples_stats(&c->router_wait, 1, &m->stage[CS_STAGE_ROUTER_WAIT]);
  for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
    cs_samples_stats(&c->batch_stage[s], 1, &m->stage[s]);
  m->batches = c->batches;
  m->mean_batch = c->batches > 0 ? (double)c->batched_requests / c->batches : NAN;
}

void cs_engine_fill_total(CsResults *res, const Client *clients)
{
  CsModelResult *t = &res->total;
  t->model = "total";
  t->slo_ms = NAN;
  int64_t batched = 0;
  for (int i = 0; i < res->n_models; i++) {
    const CsModelResult *m = &res->models[i];
    t->offered_rps += m->offered_rps;
    t->planned_rps += m->planned_rps;
    t->submitted_rps += m->submitted_rps;
    t->throughput_rps += m->throughput_rps;
    t->goodput_rps += m->goodput_rps;
    t->expected_goodput_rps += m->expected_goodput_rps;
    t->generated += m->generated;
    t->warmup += m->warmup;
    t->measured += m->measured;
    t->completed += m->completed;
    t->good += m->good;
    t->failed += m->failed;
    t->dropped += m->dropped;
    t->unserved += m->unserved;
    t->late += m->late;
    t->in_window += m->in_window;
    t->good_in_window += m->good_in_window;
    t->drain_s = MAX(t->drain_s, m->drain_s);
    t->batches += m->batches;
    batched += clients[i].batched_requests;
    t->window_s = MAX(t->window_s, m->window_s);
  }
  t->bad_rate = t->measured > 0 ? 1.0 - (double)t->good / (double)t->measured : 0.0;
  t->mean_batch = t->batches > 0 ? (double)batched / t->batches : NAN;
  if (res->n_models == 1) {
    /* The union of one model's samples is its own: the same figures, which
     * cs_engine_fill_model_result computed from the same sets. */
    t->latency = res->models[0].latency;
    memcpy(t->stage, res->models[0].stage, sizeof t->stage);
    return;
  }
  CsSamples **sets = g_new(CsSamples *, MAX(res->n_models, 1));
  for (int s = -1; s < CS_N_STAGES; s++) {
    for (int i = 0; i < res->n_models; i++)
      sets[i] = s < 0 ? clients[i].e2e : s == CS_STAGE_ROUTER_WAIT ? clients[i].router_wait
                                                                   : clients[i].batch_stage[s];
    cs_samples_stats(sets, res->n_models, s < 0 ? &t->latency : &t->stage[s]);
  }
  g_free(sets);
}

/* A model is unstable when its measured requests keep finishing long after
 * its window ended: work was still queued, so its rates and percentiles
 * describe a queue that grows with the run's length, not a steady state.
 * "Long" is 10 SLOs or 1 s, whichever is longer: a stable queue drains
 * within a few latencies (the last request's own latency), and the SLO
 * bounds those for any setting a researcher would call feasible; the 1 s
 * floor keeps short SLOs from flagging a burst. */
gboolean cs_engine_model_unstable(const CsModelResult *m)
{
  return m->drain_s > MAX(10.0 * m->slo_ms * 1e-3, 1.0);
}

void cs_engine_warn_about_run(CsResults *res)
{
  for (int i = 0; i < res->n_models; i++) {
    const CsModelResult *m = &res->models[i];
    if (cs_engine_model_unstable(m))
      cs_warning_add(res->warnings, "unstable", m->model, -1,
                     "its last measured request finished %.3f s after the %.3f s measurement "
                     "window ended (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                     " results late): the offered load exceeds what it is served at, and its "
                     "numbers depend on the run's length",
                     m->drain_s, m->window_s, (gint64)m->late, (gint64)m->measured);
    else if (m->measured > 0 && m->completed == 0 && m->unserved < m->measured)
      cs_warning_add(res->warnings, "model_no_results", m->model, -1,
                     "none of its %" G_GINT64_FORMAT " measured requests got a result (%" G_GINT64_FORMAT
                     " dropped, %" G_GINT64_FORMAT " unserved, %" G_GINT64_FORMAT " failed)",
                     (gint64)m->measured, (gint64)m->dropped, (gint64)m->unserved,
                     (gint64)m->failed);
  }
  if (res->total.measured > 0 && res->total.completed == 0)
    cs_warning_add(res->warnings, "nothing_served", NULL, -1,
                   "the run served none of its %" G_GINT64_FORMAT " measured requests",
                   (gint64)res->total.measured);
  else if (res->total.measured == 0)
    cs_warning_add(res->warnings, "nothing_measured", NULL, -1,
                   "no request was sent inside a measurement window: every rate and percentile "
                   "is empty");
}
