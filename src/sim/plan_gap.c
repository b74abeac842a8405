/* The plan_gap warning: a model whose simulated goodput falls short of what
 * its placement expected, with the largest contributor the engine measured.
 *
 * The target is min(expected goodput, offered rate): a policy may expect
 * more than a client sends (it planned for planned_rate, or its estimate
 * ignores the rate), and no run can serve more than it is sent. The
 * shortfall target - goodput splits exactly into parts the engine counted
 * (each a rate over the measurement window w):
 *   target - submitted               fewer requests sent than the target
 * + (dropped + unserved + failed + held) / w   requests that got no result
 * + (completed - good) / w           results over the SLO
 * + (good - good results in window) / w       good results after the window
 * since submitted = measured / w, measured = good + every kind of bad, and
 * goodput = good results in window / w. The largest positive part is named;
 * for results over the SLO, the latency stage with the largest mean says
 * why (slow_cause). Nothing here is estimated: every figure in a message is
 * one the run measured. */
#include <math.h>

#include "engine_state.h"

typedef struct {
  double rps;   /* its part of the shortfall, req/s */
  char *text;   /* "NAME: detail" */
} Part;

/* Why results were over the SLO, from the stage means over the model's
 * completed measured requests (ms; they add up to the mean latency). GPU
 * time splits into the batches' isolated execution on their GPU and the
 * slowdown on top of it (an MPS share below the whole GPU, co-located
 * batches). The isolated execution at the batch sizes run is what every
 * plan budgets for, so the likely cause is the largest of the other parts
 * (router wait, GPU queue, sharing slowdown, transfers), unless execution
 * alone exceeds the SLO; the breakdown follows so that a reader can weigh
 * a close call. */
static char *slow_cause(const CsModelResult *m, const Client *c)
{
  double router = m->stage[CS_STAGE_ROUTER_WAIT].mean;
  double queue = m->stage[CS_STAGE_QUEUE_WAIT].mean;
  double gpu = m->stage[CS_STAGE_GPU].mean;
  double net = m->stage[CS_STAGE_TO_NODE].mean + m->stage[CS_STAGE_RESULT_RETURN].mean;
  double iso = c->completed > 0 ? c->iso_ns_sum / (double)c->completed * 1e-6 : NAN;
  double slowdown = gpu - iso;
  if (!isfinite(router) || !isfinite(queue) || !isfinite(net) || !isfinite(slowdown))
    return g_strdup("cause not identified");
  gboolean unstable = cs_engine_model_unstable(m);
  double best = MAX(MAX(router, queue), MAX(slowdown, net));
  char *why;
  if (iso > m->slo_ms)
    why = g_strdup_printf("likely cause: execution: the batches alone on their GPU take a mean "
                          "%.4g ms, over the SLO",
                          iso);
  else if (!(best > 0))
    why = g_strdup("cause not identified");
  else if (best == router)
    why = g_strdup_printf("likely cause: router wait: requests waited a mean %.4g ms for their "
                          "batch to leave the router",
                          router);
  else if (best == queue)
    why = g_strdup_printf("likely cause: %s: batches waited a mean %.4g ms in the GPU queues%s",
                          unstable ? "queue growth" : "GPU queue wait", queue,
                          unstable ? ", still queued after the window ended (unstable)" : "");
  else if (best == slowdown)
    why = g_strdup_printf("likely cause: GPU sharing: batches ran a mean %.4g ms on the GPU "
                          "against %.4g ms alone on it (an MPS share below the whole GPU, "
                          "co-located batches)",
                          gpu, iso);
  else
    why = g_strdup_printf("likely cause: transfers: requests spent a mean %.4g ms in transfers "
                          "to the node and back",
                          net);
  char *out = g_strdup_printf("%s (mean latency %.4g ms = router wait %.4g + transfers %.4g + "
                              "GPU queue %.4g + GPU %.4g, of which %.4g alone)",
                              why, m->latency.mean, router, net, queue, gpu, iso);
  g_free(why);
  return out;
}

/* What to say about the shortfall target - goodput (> 0): its largest
 * measured part, with its figures. */
static char *likely_cause(const CsModelResult *m, const Client *c, double target)
{
  const double w = m->window_s;
  const int64_t held = m->measured - m->completed - m->dropped - m->unserved - m->failed;
  const int64_t slow = m->completed - m->good;
  Part parts[7] = {
    { target - m->submitted_rps,
      g_strdup_printf("fewer requests sent: the clients sent %.4g req/s in the window",
                      m->submitted_rps) },
    { m->dropped / w,
      g_strdup_printf("drops: %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " measured requests "
                      "dropped by the dispatch policy",
                      (gint64)m->dropped, (gint64)m->measured) },
    { m->unserved / w,
      g_strdup_printf("unserved: %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " measured "
                      "requests had no replica",
                      (gint64)m->unserved, (gint64)m->measured) },
    { m->failed / w,
      g_strdup_printf("memory: %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " measured "
                      "requests failed on a replica that did not fit in memory",
                      (gint64)m->failed, (gint64)m->measured) },
    { held / w,
      g_strdup_printf("held: %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " measured "
                      "requests were still held by the dispatch policy at the end",
                      (gint64)held, (gint64)m->measured) },
    { slow / w, NULL },                             /* worded below */
    { (m->good - m->good_in_window) / w, NULL },    /* likewise */
  };
  int best = 0;
  for (int i = 1; i < 7; i++)
    if (parts[i].rps > parts[best].rps)
      best = i;
  char *out;
  if (!(parts[best].rps > 0)) {
    out = g_strdup("cause not identified");
  } else if (best == 5) {
    char *why = slow_cause(m, c);
    out = g_strdup_printf("%" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " measured requests "
                          "were answered over the %.4g ms SLO; %s",
                          (gint64)slow, (gint64)m->measured, m->slo_ms, why);
    g_free(why);
  } else if (best == 6) {
    gboolean unstable = cs_engine_model_unstable(m);
    out = g_strdup_printf("likely cause: %s: %" G_GINT64_FORMAT " measured requests were "
                          "answered after the window ended%s",
                          unstable ? "queue growth" : "late results", (gint64)m->late,
                          unstable ? " (unstable)" : "");
  } else {
    out = g_strdup_printf("likely cause: %s", parts[best].text);
  }
  for (int i = 0; i < 7; i++)
    g_free(parts[i].text);
  return out;
}

void cs_engine_warn_plan_gap(CsResults *res, const Client *clients, const CsConfig *cfg)
{
  if (cfg->plan_gap < 0 || !cfg->placement)
    return;
  for (int i = 0; i < res->n_models; i++) {
    const CsModelResult *m = &res->models[i];
    double expected = m->expected_goodput_rps;
    if (!isfinite(expected) || expected <= 0 || !(m->window_s > 0))
      continue;
    double target = MIN(expected, m->offered_rps);
    double gap = 1.0 - m->goodput_rps / target;
    if (!(gap > cfg->plan_gap))
      continue;
    char *cause = likely_cause(m, &clients[i], target);
    cs_warning_add(res->warnings, "plan_gap", m->model, -1,
                   "goodput %.4g req/s is %.1f %% short of %.4g req/s, the smaller of placement "
                   "\"%s\"'s expected goodput (%.4g) and the offered rate (%.4g); %s "
                   "(threshold warnings.plan_gap = %.4g)",
                   m->goodput_rps, 100.0 * gap, target, cfg->placement_policy->name, expected,
                   m->offered_rps, cause, cfg->plan_gap);
    g_free(cause);
  }
}
