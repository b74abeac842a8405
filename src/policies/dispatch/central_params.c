/* The parameters of the centralized dispatch policies (symphony, eager,
 * timeout): parsing with their defaults, the effective scenario's defaults,
 * the summary's description, and the budget tables delay(k) and resp(k),
 * with the check of explicit budgets against the simulated network when the
 * scenario is compiled. The scheduler that uses them, and the description of
 * the algorithm and its budgets, are in central.c. */
#include <math.h>
#include <string.h>

#include "central.h"
#include "common/json_input.h"
#include "sim/config.h"
#include "sim/warnings.h"

/* ---- parameters ------------------------------------------------------------ */

static void *central_parse(const cJSON *params, const char *file, const char *path,
                           ExecRule rule, GError **error)
{
  static const char *const keys[] = { "policy",    "gpu_choice", "batch_gathering",
                                      "d_ctrl_us", "d_data_us",  "d_resp_ms",
                                      "max_batch", "timeout_ms", NULL };
  /* d_ctrl's default is that of Symphony's public implementation; d_data and
   * d_resp default to the simulated network (its 50 us and 2 ms assume a
   * network the scenario may not have). */
  double d_ctrl_us = 100.0, d_data_us = 0.0, d_resp_ms = 0.0, timeout_ms = -1.0;
  int max_batch = 512;
  /* Symphony keeps batches large by dropping the head under overload; the
   * eager and timeout baselines drop only hopeless requests, like the eager
   * systems they stand for. Either can be chosen explicitly. */
  const char *choice = "lowest_id", *gather = rule == RULE_DEFERRED ? "window" : "head";
  if (params &&
      (!cs_json_check_keys(params, keys, file, path, error) ||
       !cs_json_read_string(params, "gpu_choice", FALSE, &choice, file, path, error) ||
       !cs_json_read_string(params, "batch_gathering", FALSE, &gather, file, path, error) ||
       !cs_json_read_double(params, "d_ctrl_us", FALSE, 0.0, 1e9, &d_ctrl_us, file, path, error) ||
       !cs_json_read_double(params, "d_data_us", FALSE, 0.0, 1e9, &d_data_us, file, path, error) ||
       !cs_json_read_double(params, "d_resp_ms", FALSE, 0.0, 1e9, &d_resp_ms, file, path, error) ||
       !cs_json_read_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, file, path, error) ||
       !cs_json_read_double(params, "timeout_ms", FALSE, 0.0, 1e9, &timeout_ms, file, path,
                            error)))
    return NULL;
  GpuChoice gc;
  if (strcmp(choice, "lowest_id") == 0)
    gc = GPU_LOWEST_ID;
  else if (strcmp(choice, "earliest_free") == 0)
    gc = GPU_EARLIEST_FREE;
  else {
    char *p = cs_json_path_key(path, "gpu_choice");
    cs_json_fail(error, file, p, "expected \"lowest_id\" or \"earliest_free\", got \"%s\"", choice);
    g_free(p);
    return NULL;
  }
  Gathering ga;
  if (strcmp(gather, "window") == 0)
    ga = GATHER_WINDOW;
  else if (strcmp(gather, "head") == 0)
    ga = GATHER_HEAD;
  else {
    char *p = cs_json_path_key(path, "batch_gathering");
    cs_json_fail(error, file, p, "expected \"window\" or \"head\", got \"%s\"", gather);
    g_free(p);
    return NULL;
  }
  if (rule == RULE_TIMEOUT && timeout_ms < 0) {
    char *p = cs_json_path_key(path, "timeout_ms");
    cs_json_fail(error, file, p, "required field is missing (the timeout k after the first "
                                 "request of a batch)");
    g_free(p);
    return NULL;
  }
  if (rule != RULE_TIMEOUT && timeout_ms >= 0) {
    cs_json_fail(error, file, path, "\"timeout_ms\" applies to dispatch \"timeout\" only");
    return NULL;
  }
  CentralParams *cp = g_new0(CentralParams, 1);
  cp->rule = rule;
  cp->gpu_choice = gc;
  cp->gathering = ga;
  cp->d_ctrl_ns = llround(d_ctrl_us * 1e3);
  cp->d_data_ns = llround(d_data_us * 1e3);
  cp->d_resp_ns = llround(d_resp_ms * 1e6);
  cp->data_explicit = cJSON_GetObjectItemCaseSensitive(params, "d_data_us") != NULL;
  cp->resp_explicit = cJSON_GetObjectItemCaseSensitive(params, "d_resp_ms") != NULL;
  cp->timeout_ns = timeout_ms >= 0 ? llround(timeout_ms * 1e6) : 0;
  cp->max_batch = max_batch;
  return cp;
}

void *cs_central_parse_deferred(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_DEFERRED, e);
}
void *cs_central_parse_eager(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_EAGER, e);
}
void *cs_central_parse_timeout(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_TIMEOUT, e);
}

void cs_central_free(void *params)
{
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  g_free(p);
}

/* The effective scenario's dispatch object: every parameter with its value.
 * d_data_us and d_resp_ms stay out unless given: their default is "from the
 * network", which only their absence says. */
void cs_central_fill_defaults(const void *params, cJSON *obj)
{
  const CentralParams *p = params;
  if (!cJSON_GetObjectItemCaseSensitive(obj, "gpu_choice"))
    cJSON_AddStringToObject(obj, "gpu_choice",
                            p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "batch_gathering"))
    cJSON_AddStringToObject(obj, "batch_gathering",
                            p->gathering == GATHER_WINDOW ? "window" : "head");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "d_ctrl_us"))
    cJSON_AddNumberToObject(obj, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  if (!cJSON_GetObjectItemCaseSensitive(obj, "max_batch"))
    cJSON_AddNumberToObject(obj, "max_batch", p->max_batch);
}

void cs_central_describe(const void *params, cJSON *out)
{
  const CentralParams *p = params;
  cJSON_AddStringToObject(out, "gpu_choice",
                          p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  cJSON_AddStringToObject(out, "batch_gathering", p->gathering == GATHER_WINDOW ? "window" : "head");
  /* Whether each delay was set or derived, so that a reader knows what ran. */
  cJSON_AddNumberToObject(out, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  if (p->data_explicit)
    cJSON_AddNumberToObject(out, "d_data_us", p->d_data_ns / 1e3);
  cJSON_AddStringToObject(out, "d_data_source", p->data_explicit ? "explicit" : "network");
  if (p->resp_explicit)
    cJSON_AddNumberToObject(out, "d_resp_ms", p->d_resp_ns / 1e6);
  cJSON_AddStringToObject(out, "d_resp_source", p->resp_explicit ? "explicit" : "network");
  cJSON_AddNumberToObject(out, "max_batch", p->max_batch);
  if (p->rule == RULE_TIMEOUT)
    cJSON_AddNumberToObject(out, "timeout_ms", p->timeout_ns / 1e6);
  if (p->budgets) {
    cJSON *arr = cJSON_AddArrayToObject(out, "budgets");
    for (int m = 0; m < p->n_budgets; m++) {
      const ModelBudget *b = &p->budgets[m];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "model", b->model);
      cJSON_AddNumberToObject(o, "largest_batch", b->largest_batch);
      cJSON_AddNumberToObject(o, "transfer_us_batch_1", b->transfer_ns[0] / 1e3);
      cJSON_AddNumberToObject(o, "transfer_us_largest_batch", b->transfer_ns[1] / 1e3);
      cJSON_AddNumberToObject(o, "network_transfer_us_batch_1", b->net_transfer_ns[0] / 1e3);
      cJSON_AddNumberToObject(o, "network_transfer_us_largest_batch", b->net_transfer_ns[1] / 1e3);
      cJSON_AddNumberToObject(o, "response_ms_batch_1", b->resp_ns[0] / 1e6);
      cJSON_AddNumberToObject(o, "response_ms_largest_batch", b->resp_ns[1] / 1e6);
      cJSON_AddNumberToObject(o, "network_response_ms_batch_1", b->net_resp_ns[0] / 1e6);
      cJSON_AddNumberToObject(o, "network_response_ms_largest_batch", b->net_resp_ns[1] / 1e6);
      cJSON_AddItemToArray(arr, o);
    }
  }
}

/* ---- budgets -------------------------------------------------------------------- */

/* The simulated transfer of k payloads of bytes each, as the engine computes
 * it (network of the product), with the product saturating and the result
 * capped at BUDGET_CAP. */
static int64_t net_ns(const CsConfig *cfg, int64_t bytes, int k)
{
  int64_t total = bytes > 0 && k > INT64_MAX / bytes ? INT64_MAX : bytes * k;
  return MIN(cs_network_curve_latency_ns(cfg->network, total), BUDGET_CAP);
}

/* Extends model m's tables to cover batch size k. Explicit settings give
 * d_data * k and d_resp; otherwise the network's figure for the batch's
 * payload, made non-decreasing in k by a running maximum: gathering bisects on
 * the assumption that a larger batch never returns earlier, and on a fitted
 * curve that dips the budget then errs late, never early. */
void cs_central_budget_extend(Budget *b, const CentralParams *p, const CsConfig *cfg, int m, int k)
{
  if (k < b->len)
    return;
  int old = b->len, len = MAX(k + 1, 2 * old);
  b->transfer = g_renew(int64_t, b->transfer, len);
  b->resp = g_renew(int64_t, b->resp, len);
  const CsClientConfig *cl = &cfg->clients[m];
  for (int i = old; i < len; i++) {
    int64_t t, r;
    if (p->data_explicit)
      t = i > 0 && p->d_data_ns > BUDGET_CAP / i ? BUDGET_CAP : p->d_data_ns * i;
    else
      t = i == 0 ? 0 : MAX(net_ns(cfg, cl->input_bytes, i), b->transfer[i - 1]);
    if (p->resp_explicit)
      r = MIN(p->d_resp_ns, BUDGET_CAP);
    else
      r = i == 0 ? 0 : MAX(net_ns(cfg, cl->output_bytes, i), b->resp[i - 1]);
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

/* Compiled-scenario check (CsDispatchPolicy.check): per model, the largest
 * batch B that fits the SLO with the network-derived budgets (the batch that
 * window gathering aims at when nothing is explicit; independent of explicit
 * d_data/d_resp so that the comparison points do not move with them), the
 * figures for the summary, and a "budget_network_mismatch" warning when an
 * explicit d_data_us or d_resp_ms is more than 10 % off the simulated
 * transfer at batch 1 or at batch B. */
void cs_central_check(void *params, const CsConfig *cfg, CsWarningList *w)
{
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  p->n_budgets = cfg->n_clients;
  p->budgets = g_new0(ModelBudget, MAX(cfg->n_clients, 1));
  CentralParams derived = *p;
  derived.data_explicit = derived.resp_explicit = FALSE;
  for (int m = 0; m < cfg->n_clients; m++) {
    const CsClientConfig *cl = &cfg->clients[m];
    ModelBudget *mb = &p->budgets[m];
    mb->model = g_strdup(cl->model);
    const CsModelProfile *prof =
      cfg->n_gpus > 0 ? cs_profile_set_lookup(cfg->profiles, cfg->gpus[0].gpu_type, cl->model)
                      : NULL;
    Budget nb = { 0 }, sb = { 0 };
    int big = 1;
    while (prof && big < p->max_batch) {
      cs_central_budget_extend(&nb, &derived, cfg, m, big + 1);
      int64_t need = p->d_ctrl_ns + nb.transfer[big + 1] + nb.resp[big + 1] +
                     MIN(cs_model_profile_exec_ns(prof, big + 1), BUDGET_CAP);
      if (need > cl->slo_ns)
        break;
      big++;
    }
    cs_central_budget_extend(&sb, p, cfg, m, big);
    const int ks[2] = { 1, big };
    for (int i = 0; i < 2; i++) {
      mb->transfer_ns[i] = sb.transfer[ks[i]];
      mb->resp_ns[i] = sb.resp[ks[i]];
      mb->net_transfer_ns[i] = net_ns(cfg, cl->input_bytes, ks[i]);
      mb->net_resp_ns[i] = net_ns(cfg, cl->output_bytes, ks[i]);
    }
    mb->largest_batch = big;
    cs_central_budget_clear(&nb);
    cs_central_budget_clear(&sb);
    if (p->data_explicit && (mismatch(mb->transfer_ns[0], mb->net_transfer_ns[0]) ||
                             mismatch(mb->transfer_ns[1], mb->net_transfer_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", cl->model, -1,
                     "dispatch.d_data_us = %g budgets the transfer of a batch of 1 at %.1f us and "
                     "of a batch of %d (the largest within the SLO) at %.1f us, but the simulated "
                     "network takes %.1f us and %.1f us (%" G_GINT64_FORMAT
                     " bytes per request); remove d_data_us to take the transfer from the "
                     "scenario's network",
                     p->d_data_ns / 1e3, mb->transfer_ns[0] / 1e3, big, mb->transfer_ns[1] / 1e3,
                     mb->net_transfer_ns[0] / 1e3, mb->net_transfer_ns[1] / 1e3,
                     (gint64)cl->input_bytes);
    if (p->resp_explicit && (mismatch(mb->resp_ns[0], mb->net_resp_ns[0]) ||
                             mismatch(mb->resp_ns[1], mb->net_resp_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", cl->model, -1,
                     "dispatch.d_resp_ms = %g budgets %.3f ms for a result to come back, but the "
                     "simulated network returns the result of a batch of 1 in %.3f ms and of a "
                     "batch of %d (the largest within the SLO) in %.3f ms (%" G_GINT64_FORMAT
                     " bytes per request); remove d_resp_ms to take the response time from the "
                     "scenario's network",
                     p->d_resp_ns / 1e6, mb->resp_ns[0] / 1e6, mb->net_resp_ns[0] / 1e6, big,
                     mb->net_resp_ns[1] / 1e6, (gint64)cl->output_bytes);
  }
}
