/* The parameters of the centralized dispatch policies (symphony, eager,
 * timeout): parsing with their defaults, the effective scenario's defaults,
 * the summary's description, and the budget tables delay(k) and resp(k),
 * with the check of explicit budgets against the simulated network when the
 * scenario is compiled. The scheduler that uses them, and the description of
 * the algorithm and its budgets, are in central.c. */
#include <math.h>
#include <string.h>

#include "central.h"

/* ---- parameters ------------------------------------------------------------ */

static void *central_parse(CsParams *params, ExecRule rule, GError **error)
{
  static const char *const keys[] = { "policy",         "gpu_choice",     "batch_gathering",
                                      "target_batch",   "rate_sample_ms", "rate_window",
                                      "d_ctrl_us",      "d_data_us",      "d_resp_ms",
                                      "max_batch",      "timeout_ms",     NULL };
  static const char *const choices[] = { "lowest_id", "earliest_free", NULL };
  static const char *const gatherings[] = { "window", "head", NULL };
  static const char *const targets[] = { "slo", "rate", NULL };
  /* d_ctrl's default is that of Symphony's public implementation; d_data and
   * d_resp default to the simulated network (its 50 us and 2 ms assume a
   * network the scenario may not have). */
  double d_ctrl_us = 100.0, d_data_us = 0.0, d_resp_ms = 0.0, timeout_ms = -1.0;
  int max_batch = 512;
  /* Symphony keeps batches large by dropping the head under overload, aiming
   * at the largest batch that fits the SLO (its paper). Eager is the
   * baseline of Symphony's public implementation (nexuslb): window dropping
   * towards a target batch estimated from the observed rate, on the GPU free
   * soonest. The timeout baseline drops only hopeless requests. Every choice
   * can be made explicitly; eager's former defaults are "head" and
   * "lowest_id". RpsMeter of nexuslb: 50 ms samples, the last 100 averaged. */
  int choice = rule == RULE_EAGER ? GPU_EARLIEST_FREE : GPU_LOWEST_ID;
  int gather = rule == RULE_TIMEOUT ? GATHER_HEAD : GATHER_WINDOW;
  int target = rule == RULE_EAGER ? TARGET_RATE : TARGET_SLO;
  double rate_sample_ms = 50.0;
  int rate_window = 100;
  cs_params_doc(params, "gpu_choice", "lowest_id: the lowest-id GPU free in time (Algorithm 1); earliest_free: the GPU free soonest (Appendix D)");
  cs_params_doc(params, "batch_gathering", "window: drop the head under overload to keep batches at the target; head: drop only hopeless requests");
  cs_params_doc(params, "target_batch", "window gathering's target: slo (largest batch meeting the SLO when sent on arrival) or rate (from the observed rate)");
  cs_params_doc(params, "rate_sample_ms", "target_batch rate: length of one rate sample");
  cs_params_doc(params, "rate_window", "target_batch rate: samples in the rate's moving average");
  cs_params_doc(params, "d_ctrl_us", "fixed part of delay(k): the batch reaches the GPU this long before it may start");
  cs_params_doc(params, "d_data_us", "transfer(k) = d_data_us x k");
  cs_params_doc_default(params, "d_data_us", "from the network (k x the model's input_bytes)");
  cs_params_doc(params, "d_resp_ms", "resp(k) = d_resp_ms for every k");
  cs_params_doc_default(params, "d_resp_ms", "from the network (k x the model's output_bytes)");
  cs_params_doc(params, "max_batch", "largest batch sent");
  cs_params_doc(params, "timeout_ms", "a batch leaves this long after its first request");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_choice(params, "gpu_choice", FALSE, choices, &choice, cs_error_list_slot(problems));
    cs_params_choice(params, "batch_gathering", FALSE, gatherings, &gather,
                     cs_error_list_slot(problems));
    cs_params_choice(params, "target_batch", FALSE, targets, &target, cs_error_list_slot(problems));
    cs_params_double(params, "rate_sample_ms", FALSE, 0.001, 1e6, &rate_sample_ms,
                     cs_error_list_slot(problems));
    cs_params_int(params, "rate_window", FALSE, 1, 1000000, &rate_window,
                  cs_error_list_slot(problems));
    cs_params_double(params, "d_ctrl_us", FALSE, 0.0, 1e9, &d_ctrl_us,
                     cs_error_list_slot(problems));
    cs_params_double(params, "d_data_us", FALSE, 0.0, 1e9, &d_data_us,
                     cs_error_list_slot(problems));
    cs_params_double(params, "d_resp_ms", FALSE, 0.0, 1e9, &d_resp_ms,
                     cs_error_list_slot(problems));
    cs_params_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, cs_error_list_slot(problems));
    cs_params_double(params, "timeout_ms", rule == RULE_TIMEOUT, 0.0, 1e9, &timeout_ms,
                     cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  if (rule != RULE_TIMEOUT)
    cs_params_doc_hide(params, "timeout_ms"); /* read only to refuse it */
  if (rule != RULE_TIMEOUT && timeout_ms >= 0) {
    cs_params_fail(params, error, "\"timeout_ms\" applies to dispatch \"timeout\" only");
    return NULL;
  }
  if (gather == GATHER_HEAD && cs_params_has(params, "target_batch")) {
    cs_params_fail(params, error,
                   "\"target_batch\" sets the batch that window gathering aims at; with "
                   "\"batch_gathering\": \"head\" it would be ignored");
    return NULL;
  }
  if (target != TARGET_RATE &&
      (cs_params_has(params, "rate_sample_ms") || cs_params_has(params, "rate_window"))) {
    cs_params_fail(params, error,
                   "\"rate_sample_ms\" and \"rate_window\" set the rate estimate of "
                   "\"target_batch\": \"rate\" (window gathering); here they would be ignored");
    return NULL;
  }
  CentralParams *cp = g_new0(CentralParams, 1);
  cp->rule = rule;
  cp->gpu_choice = (GpuChoice)choice;
  cp->gathering = (Gathering)gather;
  cp->target = gather == GATHER_WINDOW ? (TargetBatch)target : TARGET_SLO;
  cp->rate_sample_ns = llround(rate_sample_ms * 1e6);
  cp->rate_window = rate_window;
  cp->d_ctrl_ns = llround(d_ctrl_us * 1e3);
  cp->d_data_ns = llround(d_data_us * 1e3);
  cp->d_resp_ns = llround(d_resp_ms * 1e6);
  cp->data_explicit = cs_params_has(params, "d_data_us");
  cp->resp_explicit = cs_params_has(params, "d_resp_ms");
  cp->timeout_ns = timeout_ms >= 0 ? llround(timeout_ms * 1e6) : 0;
  cp->max_batch = max_batch;
  return cp;
}

void *cs_central_parse_deferred(CsParams *p, void *user_data, GError **e)
{
  (void)user_data;
  return central_parse(p, RULE_DEFERRED, e);
}
void *cs_central_parse_eager(CsParams *p, void *user_data, GError **e)
{
  (void)user_data;
  return central_parse(p, RULE_EAGER, e);
}
void *cs_central_parse_timeout(CsParams *p, void *user_data, GError **e)
{
  (void)user_data;
  return central_parse(p, RULE_TIMEOUT, e);
}

void cs_central_free(void *params)
{
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  g_free(p);
}

/* Window gathering's target and, for "rate", its estimator. */
static void write_target(const CentralParams *p, CsParamsWriter *out)
{
  if (p->gathering != GATHER_WINDOW)
    return;
  cs_params_write_string(out, "target_batch", p->target == TARGET_RATE ? "rate" : "slo");
  if (p->target == TARGET_RATE) {
    cs_params_write_double(out, "rate_sample_ms", p->rate_sample_ns / 1e6);
    cs_params_write_int(out, "rate_window", p->rate_window);
  }
}

/* The effective scenario's dispatch object: every parameter with its value.
 * d_data_us and d_resp_ms stay out unless given: their default is "from the
 * network", which only their absence says. */
void cs_central_write_defaults(const void *params, CsParamsWriter *out)
{
  const CentralParams *p = params;
  cs_params_write_string(out, "gpu_choice",
                         p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  cs_params_write_string(out, "batch_gathering", p->gathering == GATHER_WINDOW ? "window" : "head");
  write_target(p, out);
  cs_params_write_double(out, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  cs_params_write_int(out, "max_batch", p->max_batch);
}

void cs_central_describe(const void *params, CsParamsWriter *out)
{
  const CentralParams *p = params;
  cs_params_write_string(out, "gpu_choice",
                         p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  cs_params_write_string(out, "batch_gathering", p->gathering == GATHER_WINDOW ? "window" : "head");
  write_target(p, out);
  /* Whether each delay was set or derived, so that a reader knows what ran. */
  cs_params_write_double(out, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  if (p->data_explicit)
    cs_params_write_double(out, "d_data_us", p->d_data_ns / 1e3);
  cs_params_write_string(out, "d_data_source", p->data_explicit ? "explicit" : "network");
  if (p->resp_explicit)
    cs_params_write_double(out, "d_resp_ms", p->d_resp_ns / 1e6);
  cs_params_write_string(out, "d_resp_source", p->resp_explicit ? "explicit" : "network");
  cs_params_write_int(out, "max_batch", p->max_batch);
  if (p->rule == RULE_TIMEOUT)
    cs_params_write_double(out, "timeout_ms", p->timeout_ns / 1e6);
  if (p->budgets) {
    cs_params_write_begin_array(out, "budgets");
    for (int m = 0; m < p->n_budgets; m++) {
      const ModelBudget *b = &p->budgets[m];
      cs_params_write_begin_object(out, NULL);
      cs_params_write_string(out, "model", b->model);
      cs_params_write_int(out, "largest_batch", b->largest_batch);
      cs_params_write_double(out, "transfer_us_batch_1", b->transfer_ns[0] / 1e3);
      cs_params_write_double(out, "transfer_us_largest_batch", b->transfer_ns[1] / 1e3);
      cs_params_write_double(out, "network_transfer_us_batch_1", b->net_transfer_ns[0] / 1e3);
      cs_params_write_double(out, "network_transfer_us_largest_batch",
                             b->net_transfer_ns[1] / 1e3);
      cs_params_write_double(out, "response_ms_batch_1", b->resp_ns[0] / 1e6);
      cs_params_write_double(out, "response_ms_largest_batch", b->resp_ns[1] / 1e6);
      cs_params_write_double(out, "network_response_ms_batch_1", b->net_resp_ns[0] / 1e6);
      cs_params_write_double(out, "network_response_ms_largest_batch", b->net_resp_ns[1] / 1e6);
      cs_params_write_end(out);
    }
    cs_params_write_end(out);
  }
}

/* ---- nexuslb's target batch ---------------------------------------------------- */

int cs_central_rate_target(double rate_rps, int64_t slo_ns, int max_batch,
                           const CsBatchCosts *costs)
{
  double rate = rate_rps * 1e-9; /* per ns */
  int fail = max_batch + 1;
  double n_at_fail = 0;
  for (int b = 1; b <= max_batch; b++) {
    double l = (double)costs->lat_ns(costs->ctx, costs->model, b);
    double budget = (double)(slo_ns - costs->overhead_ns(costs->ctx, costs->model, b));
    double n = rate * l / b;
    if (l * (1.0 + 1.0 / MAX(n, 1.0)) > budget) {
      fail = b;
      n_at_fail = n;
      break;
    }
  }
  if (fail > max_batch)
    return max_batch;
  if (n_at_fail > 1.0)
    return MAX(1, fail - 1);
  int b = 2;
  for (; b <= max_batch; b++) {
    double budget = (double)(slo_ns - costs->overhead_ns(costs->ctx, costs->model, b));
    if (rate <= 0 || (double)costs->lat_ns(costs->ctx, costs->model, b) + b / rate > budget)
      break;
  }
  return b - 1;
}

/* ---- budgets -------------------------------------------------------------------- */

/* The simulated transfer of k payloads of bytes each, as the engine computes
 * it (network of the product), with the product saturating and the result
 * capped at BUDGET_CAP. */
static int64_t net_ns(const CsWorld *w, int64_t bytes, int k)
{
  int64_t total = bytes > 0 && k > INT64_MAX / bytes ? INT64_MAX : bytes * k;
  return MIN(cs_world_network_ns(w, total), BUDGET_CAP);
}

/* Extends model m's tables to cover batch size k. Explicit settings give
 * d_data * k and d_resp; otherwise the network's figure for the batch's
 * payload, made non-decreasing in k by a running maximum: gathering bisects on
 * the assumption that a larger batch never returns earlier, and on a fitted
 * curve that dips the budget then errs late, never early. */
void cs_central_budget_extend(Budget *b, const CentralParams *p, const CsWorld *w, int m, int k)
{
  if (k < b->len)
    return;
  int old = b->len, len = MAX(k + 1, 2 * old);
  b->transfer = g_renew(int64_t, b->transfer, len);
  b->resp = g_renew(int64_t, b->resp, len);
  for (int i = old; i < len; i++) {
    int64_t t, r;
    if (p->data_explicit)
      t = i > 0 && p->d_data_ns > BUDGET_CAP / i ? BUDGET_CAP : p->d_data_ns * i;
    else
      t = i == 0 ? 0 : MAX(net_ns(w, cs_world_input_bytes(w, m), i), b->transfer[i - 1]);
    if (p->resp_explicit)
      r = MIN(p->d_resp_ns, BUDGET_CAP);
    else
      r = i == 0 ? 0 : MAX(net_ns(w, cs_world_output_bytes(w, m), i), b->resp[i - 1]);
    b->transfer[i] = t;
    b->resp[i] = r;
  }
  b->len = len;
}

void cs_central_budget_clear(Budget *b)
{
  g_free(b->transfer);
  g_free(b->resp);
  b->transfer = b->resp = NULL;
  b->len = 0;
}

/* TRUE when the scheduler's figure est is more than 10 % away from the
 * simulated sim (any est > 0 when sim is 0). */
static gboolean mismatch(int64_t est, int64_t sim)
{
  return fabs((double)est - (double)sim) > 0.1 * (double)sim;
}

/* The run time of a batch of k of model m on the slowest GPU of the world
 * (the scheduler plans with it in a mixed cluster), capped at BUDGET_CAP. */
static int64_t slowest_exec_ns(const CsWorld *w, int m, int k)
{
  int64_t worst = 0;
  for (int g = 0; g < cs_world_n_gpus(w); g++) {
    const CsModelProfile *prof = cs_world_profile(w, m, g);
    if (prof)
      worst = MAX(worst, MIN(cs_model_profile_exec_ns(prof, k), BUDGET_CAP));
  }
  return worst;
}

/* Compiled-scenario check (CsDispatchPolicy.check): per model, the largest
 * batch B that fits the SLO with the network-derived budgets (the batch that
 * window gathering aims at when nothing is explicit; independent of explicit
 * d_data/d_resp so that the comparison points do not move with them), the
 * figures for the summary, and a "budget_network_mismatch" warning when an
 * explicit d_data_us or d_resp_ms is more than 10 % off the simulated
 * transfer at batch 1 or at batch B. */
void cs_central_check(void *params, const CsWorld *world, CsWarningList *w, void *user_data)
{
  (void)user_data;
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  int n_models = cs_world_n_models(world);
  p->n_budgets = n_models;
  p->budgets = g_new0(ModelBudget, MAX(n_models, 1));
  CentralParams derived = *p;
  derived.data_explicit = derived.resp_explicit = FALSE;
  for (int m = 0; m < n_models; m++) {
    const char *model = cs_world_model_name(world, m);
    int64_t input_bytes = cs_world_input_bytes(world, m);
    int64_t output_bytes = cs_world_output_bytes(world, m);
    ModelBudget *mb = &p->budgets[m];
    mb->model = g_strdup(model);
    Budget nb = { 0 }, sb = { 0 };
    int big = 1;
    while (cs_world_n_gpus(world) > 0 && big < p->max_batch) {
      cs_central_budget_extend(&nb, &derived, world, m, big + 1);
      int64_t need = p->d_ctrl_ns + nb.transfer[big + 1] + nb.resp[big + 1] +
                     slowest_exec_ns(world, m, big + 1);
      if (need > cs_world_slo_ns(world, m))
        break;
      big++;
    }
    cs_central_budget_extend(&sb, p, world, m, big);
    /* Even a lone request planned on the slowest GPU misses the SLO: the
     * scheduler will drop every request, whatever faster GPUs could do. */
    if (cs_world_n_gpus(world) > 0) {
      int64_t alone = p->d_ctrl_ns + sb.transfer[1] + sb.resp[1] + slowest_exec_ns(world, m, 1);
      if (alone > cs_world_slo_ns(world, m))
        cs_warning_add(w, "slo_unreachable", model, -1,
                       "even a batch of 1 needs %.3f ms (d_ctrl, transfer and response budgets, "
                       "and the run time on the slowest GPU type, which the scheduler plans "
                       "with) against an SLO of %.3f ms: every request will be dropped",
                       alone / 1e6, cs_world_slo_ns(world, m) / 1e6);
    }
    const int ks[2] = { 1, big };
    for (int i = 0; i < 2; i++) {
      mb->transfer_ns[i] = sb.transfer[ks[i]];
      mb->resp_ns[i] = sb.resp[ks[i]];
      mb->net_transfer_ns[i] = net_ns(world, input_bytes, ks[i]);
      mb->net_resp_ns[i] = net_ns(world, output_bytes, ks[i]);
    }
    mb->largest_batch = big;
    cs_central_budget_clear(&nb);
    cs_central_budget_clear(&sb);
    if (p->data_explicit && (mismatch(mb->transfer_ns[0], mb->net_transfer_ns[0]) ||
                             mismatch(mb->transfer_ns[1], mb->net_transfer_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", model, -1,
                     "dispatch.d_data_us = %g budgets the transfer of a batch of 1 at %.1f us and "
                     "of a batch of %d (the largest within the SLO) at %.1f us, but the simulated "
                     "network takes %.1f us and %.1f us (%" G_GINT64_FORMAT
                     " bytes per request); remove d_data_us to take the transfer from the "
                     "scenario's network",
                     p->d_data_ns / 1e3, mb->transfer_ns[0] / 1e3, big, mb->transfer_ns[1] / 1e3,
                     mb->net_transfer_ns[0] / 1e3, mb->net_transfer_ns[1] / 1e3,
                     (gint64)input_bytes);
    if (p->resp_explicit && (mismatch(mb->resp_ns[0], mb->net_resp_ns[0]) ||
                             mismatch(mb->resp_ns[1], mb->net_resp_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", model, -1,
                     "dispatch.d_resp_ms = %g budgets %.3f ms for a result to come back, but the "
                     "simulated network returns the result of a batch of 1 in %.3f ms and of a "
                     "batch of %d (the largest within the SLO) in %.3f ms (%" G_GINT64_FORMAT
                     " bytes per request); remove d_resp_ms to take the response time from the "
                     "scenario's network",
                     p->d_resp_ns / 1e6, mb->resp_ns[0] / 1e6, mb->net_resp_ns[0] / 1e6, big,
                     mb->net_resp_ns[1] / 1e6, (gint64)output_bytes);
  }
}
