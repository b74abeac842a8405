/* The scenario's "llm" section (docs/llm.md, "LLM models in a scenario"):
 * each entry a deployment of identical LLM replicas with the fields of a
 * `clustersim llm run` config (read by llm_config.c, so that the two agree
 * field for field), a name and the SLOs its requests are judged by. Each
 * becomes a CsLlmServingConfig and a client after the DNN models' (sim/
 * config.h), whose arrivals are the deployment's request list. */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "llm_config.h"
#include "scenario_internal.h"

static void free_owner(void *owner)
{
  cs_llm_config_free(owner);
}

/* The SLO object at PATH: both bounds, in ms. */
static gboolean read_slo(const cJSON *entry, const char *file, const char *jp, double *ttft_ms,
                         double *tpot_ms, GError **error)
{
  char *sp = cs_json_path_key(jp, "slo");
  const cJSON *slo = cJSON_GetObjectItemCaseSensitive(entry, "slo");
  static const char *const keys[] = { "ttft_ms", "tpot_ms", NULL };
  gboolean ok = slo != NULL
                  ? cs_json_expect_object(slo, file, sp, error) &&
                      cs_json_check_keys(slo, keys, file, sp, error) &&
                      cs_json_read_double(slo, "ttft_ms", TRUE, 1e-6, 1e9, ttft_ms, file, sp,
                                          error) &&
                      cs_json_read_double(slo, "tpot_ms", TRUE, 1e-6, 1e9, tpot_ms, file, sp,
                                          error)
                  : cs_json_fail(error, file, sp, "required field is missing (an object "
                                 "{\"ttft_ms\": MS, \"tpot_ms\": MS}: a request is good when "
                                 "its time to first token and its time per output token after "
                                 "the first are both within them)");
  g_free(sp);
  return ok;
}

/* Entry i at jp into d and its client cc; names (the DNN models' and the
 * earlier entries') must not repeat. */
static gboolean read_entry(const CsScenario *sc, CsConfig *c, const cJSON *entry, int i,
                           const char *jp, CsLlmServingConfig *d, CsClientConfig *cc,
                           GError **error)
{
  const char *name = NULL;
  double ttft_ms = 0, tpot_ms = 0, warmup_s = 0;
  if (!cs_json_expect_object(entry, sc->name, jp, error) ||
      !cs_json_read_string(entry, "name", TRUE, &name, sc->name, jp, error) ||
      !read_slo(entry, sc->name, jp, &ttft_ms, &tpot_ms, error) ||
      !cs_json_read_double(entry, "warmup_s", FALSE, 0, 1e9, &warmup_s, sc->name, jp, error))
    return FALSE;
  for (int j = 0; j < c->n_clients + i; j++)
    if (strcmp(c->clients[j].model, name) == 0)
      return cs_json_fail(error, sc->name, jp, "name \"%s\" is already a model's (%s): every "
                          "model of a scenario has its own name",
                          name, j < c->n_clients ? "clients" : "llm");
  if (cJSON_GetObjectItemCaseSensitive(entry, "timeseries_bin_s") != NULL) {
    char *tp = cs_json_path_key(jp, "timeseries_bin_s");
    cs_json_fail(error, sc->name, tp, "a scenario's series share outputs.timeseries_bin_s: "
                 "remove it here");
    g_free(tp);
    return FALSE;
  }
  /* The deployment's own fields, named "FILE: llm[i]: FIELD" in messages. */
  cJSON *copy = cJSON_Duplicate(entry, TRUE);
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "name");
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "slo");
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "warmup_s");
  char *label = g_strdup_printf("%s: %s", sc->name, jp);
  char *dir = g_strdup(sc->base_dir ? sc->base_dir : ".");
  CsLlmConfig *r = cs_llm_config_parse_in(copy, NULL, NULL, label, dir, sc->registry, error);
  g_free(dir);
  g_free(label);
  if (r == NULL)
    return FALSE;
  GError *e = NULL;
  int n = 0;
  CsLlmSimRequest *reqs = cs_llm_config_requests(r, 0, &n, &e);
  if (reqs == NULL) {
    cs_json_fail(error, sc->name, jp, "requests: %s", e->message);
    g_error_free(e);
    cs_llm_config_free(r);
    return FALSE;
  }
  d->name = g_strdup(name);
  d->path = g_strdup(jp);
  d->sim = r->sim;
  d->reqs = reqs;
  d->n_reqs = n;
  d->ttft_slo_ns = llround(ttft_ms * 1e6);
  d->tpot_slo_ns = llround(tpot_ms * 1e6);
  d->tensor_parallel = r->tensor_parallel;
  d->gpus = (r->sim.replicas + r->sim.decode_replicas) * r->tensor_parallel *
            r->pipeline_parallel;
  d->device = g_strdup(r->device->name);
  d->price_per_hour = r->device->price_per_hour > 0 ? r->device->price_per_hour : NAN;
  d->llm_model = g_strdup(r->sim.exec.model->name);
  d->scheduler = g_strdup(cs_llm_sched_config_name(&r->sim.sched));
  d->owner = r;
  d->owner_free = free_owner;
  /* Its client sends the list as it is: the requests from warmup_s on
   * measured, the window from there to one mean gap after the last (a
   * "times" client). */
  int max_output = 1;
  cc->times_ns = g_new(int64_t, n);
  for (int k = 0; k < n; k++) {
    cc->times_ns[k] = reqs[k].arrival_ns;
    max_output = MAX(max_output, reqs[k].output_tokens);
  }
  cc->n_times = n;
  cc->model = g_strdup(name);
  cc->arrival = CS_ARRIVAL_TIMES;
  int64_t span = reqs[n - 1].arrival_ns - reqs[0].arrival_ns;
  cc->rate_rps = n > 1 && span > 0 ? (n - 1) / (span * 1e-9) : 1.0;
  cc->planned_rate_rps = cc->rate_rps;
  cc->requests = n;
  cc->warmup_ns = llround(warmup_s * 1e9);
  if (cc->warmup_ns > reqs[n - 1].arrival_ns) {
    char *wp = cs_json_path_key(jp, "warmup_s");
    cs_json_fail(error, sc->name, wp, "expected a warm-up that ends before the last request "
                 "arrives (%.9g s), got %g s: no request would be measured",
                 reqs[n - 1].arrival_ns * 1e-9, warmup_s);
    g_free(wp);
    return FALSE;
  }
  /* The latency a request meeting both SLOs may take at most (the longest
   * output's): the scale of the "unstable" check (metrics.c). */
  cc->slo_ms = ttft_ms + tpot_ms * (max_output - 1);
  cc->slo_ns = llround(cc->slo_ms * 1e6);
  return TRUE;
}

gboolean cs_scenario_read_llm(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "llm");
  if (list == NULL)
    return TRUE;
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
    return cs_json_fail(error, sc->name, "llm", "expected a non-empty array of LLM "
                        "deployments, got %s",
                        cs_json_type_name(list));
  int n = cJSON_GetArraySize(list);
  c->clients = g_renew(CsClientConfig, c->clients, c->n_clients + n);
  memset(c->clients + c->n_clients, 0, sizeof *c->clients * (size_t)n);
  c->llm = g_new0(CsLlmServingConfig, n);
  CsErrorList *el = cs_error_list_new();
  int i = 0;
  const cJSON *entry;
  cJSON_ArrayForEach(entry, list)
  {
    char *jp = cs_json_path_index("llm", i);
    /* Entries are counted as read, so that cs_config_free frees what each
     * holds, a half-read one included. */
    c->n_llm = i + 1;
    read_entry(sc, c, entry, i, jp, &c->llm[i], &c->clients[c->n_clients + i],
               cs_error_list_slot(el));
    if (c->clients[c->n_clients + i].model == NULL)
      c->clients[c->n_clients + i].model = g_strdup(""); /* never matches a name */
    g_free(jp);
    i++;
  }
  return cs_error_list_finish(el, sc->name, "llm", error);
}
