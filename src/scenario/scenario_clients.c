/* The scenario's "clients" section: one client per model, its arrival
 * process (Poisson, gamma, constant, explicit times, or a trace), how long it
 * sends (requests or duration, warm-up, start), its SLO and payload sizes;
 * and the "trace" section that feeds the clients whose arrival is "trace"
 * (scenario_trace.c). See docs/scenario.md. */
#include <math.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "common/checked.h"
#include "common/json_input.h"
#include "sim/config.h"
#include "scenario_internal.h"
#include "scenario_trace.h"

/* Payload sizes: the client's own, else the model's profile on the first GPU
 * type of the cluster that has it. */
static int64_t profile_bytes(const CsConfig *c, const char *model, gboolean input)
{
  for (int g = 0; g < c->n_gpus; g++) {
    const CsModelProfile *p = cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, model);
    if (p) {
      int64_t b = input ? p->input_bytes : p->output_bytes;
      if (b >= 0)
        return b;
    }
  }
  return -1;
}

/* "times": {"process": "times", "times_ms": [t0, t1, ...]}: explicit send
 * times after the client's start, non-decreasing. The offered rate is the
 * number of requests over the window (first time to where the next would be,
 * one mean gap after the last). */
static gboolean read_times(const CsScenario *sc, const cJSON *params, const char *ap,
                           CsClientConfig *cc, GError **error)
{
  const cJSON *list = params ? cJSON_GetObjectItemCaseSensitive(params, "times_ms") : NULL;
  char *tp = cs_json_path_key(ap, "times_ms");
  gboolean ok = TRUE;
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
    ok = cs_json_fail(error, sc->name, list ? tp : ap,
                      list ? "expected a non-empty array of times in ms, got %s"
                           : "a \"times\" process needs \"times_ms\"%s",
                      list ? cs_json_type_name(list) : "");
    g_free(tp);
    return FALSE;
  }
  cc->n_times = cJSON_GetArraySize(list);
  cc->times_ns = g_new(int64_t, cc->n_times);
  int64_t i = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, list)
  {
    /* Bounded so that the time fits in int64 ns with room for the engine
     * (common/checked.h): 1e300 ms would wrap to a time in the past. */
    const double max_ms = CS_SCENARIO_HORIZON_NS * 1e-6;
    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0 ||
        t->valuedouble > max_ms) {
      char *ip = cs_json_path_index(tp, (int)i);
      char got[64];
      if (cJSON_IsNumber(t))
        g_snprintf(got, sizeof got, "%g", t->valuedouble);
      ok = cs_json_fail(error, sc->name, ip,
                        "expected a time in ms in [0, %g] (simulated time is limited to %g s), "
                        "got %s",
                        max_ms, max_ms * 1e-3, cJSON_IsNumber(t) ? got : cs_json_type_name(t));
      g_free(ip);
      break;
    }
    cc->times_ns[i] = llround(t->valuedouble * 1e6);
    if (i > 0 && cc->times_ns[i] < cc->times_ns[i - 1]) {
      char *ip = cs_json_path_index(tp, (int)i);
      ok = cs_json_fail(error, sc->name, ip, "times must not decrease (%g ms after %g ms)",
                        t->valuedouble, cc->times_ns[i - 1] / 1e6);
      g_free(ip);
      break;
    }
    i++;
  }
  g_free(tp);
  return ok;
}

static gboolean read_arrival(const CsScenario *sc, const cJSON *cl, const char *jp,
                             CsClientConfig *cc, GError **error)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(cl, "arrival");
  char *ap = cs_json_path_key(jp, "arrival");
  gboolean ok = TRUE;
  const char *process = "poisson";
  const cJSON *params = NULL;
  if (!a) {
    /* default: Poisson */
  } else if (cJSON_IsString(a)) {
    process = a->valuestring;
  } else if (cJSON_IsObject(a)) {
    static const char *const keys[] = { "process", "shape", "cv", "times_ms", NULL };
    ok = cs_json_check_keys(a, keys, sc->name, ap, error) &&
         cs_json_read_string(a, "process", TRUE, &process, sc->name, ap, error);
    params = a;
  } else {
    ok = cs_json_fail(error, sc->name, ap,
                      "expected \"poisson\", \"constant\" or {\"process\": \"gamma\", \"cv\": x}, "
                      "got %s",
                      cs_json_type_name(a));
  }
  if (ok) {
    if (strcmp(process, "trace") == 0) {
      cc->window_ns = -1; /* filled from the scenario's "trace" after all clients are read */
    } else if (strcmp(process, "times") == 0) {
      cc->arrival = CS_ARRIVAL_TIMES;
      ok = read_times(sc, params, ap, cc, error);
    } else if (strcmp(process, "poisson") == 0) {
      cc->arrival = CS_ARRIVAL_POISSON;
    } else if (strcmp(process, "constant") == 0) {
      cc->arrival = CS_ARRIVAL_CONSTANT;
    } else if (strcmp(process, "gamma") == 0) {
      cc->arrival = CS_ARRIVAL_GAMMA;
      double shape = -1.0, cv = -1.0;
      if (params)
        ok = cs_json_read_double(params, "shape", FALSE, 1e-6, 1e6, &shape, sc->name, ap, error) &&
             cs_json_read_double(params, "cv", FALSE, 1e-3, 1e3, &cv, sc->name, ap, error);
      if (ok && (shape > 0) == (cv > 0))
        ok = cs_json_fail(error, sc->name, ap,
                          "a gamma process needs exactly one of \"shape\" and \"cv\"");
      if (ok)
        cc->gamma_shape = shape > 0 ? shape : 1.0 / (cv * cv);
    } else {
      char *pp = params ? cs_json_path_key(ap, "process") : g_strdup(ap);
      ok = cs_json_fail(error, sc->name, pp,
                        "expected \"poisson\", \"gamma\", \"constant\", \"times\" or \"trace\", got "
                        "\"%s\"",
                        process);
      g_free(pp);
    }
    if (ok && cc->arrival != CS_ARRIVAL_TIMES && params &&
        cJSON_GetObjectItemCaseSensitive(params, "times_ms"))
      ok = cs_json_fail(error, sc->name, ap, "\"times_ms\" applies to \"times\" only");
    if (ok && cc->arrival != CS_ARRIVAL_GAMMA && params &&
        (cJSON_GetObjectItemCaseSensitive(params, "shape") ||
         cJSON_GetObjectItemCaseSensitive(params, "cv")))
      ok = cs_json_fail(error, sc->name, ap, "\"shape\" and \"cv\" apply to \"gamma\" only");
  }
  g_free(ap);
  return ok;
}

/* The scenario's "trace" object feeds the clients whose arrival is "trace". */
static gboolean read_trace(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(sc->root, "trace");
  int *idx = g_new0(int, MAX(c->n_clients, 1));
  int n = 0;
  for (int i = 0; i < c->n_clients; i++)
    if (c->clients[i].window_ns < 0) {
      idx[n++] = i;
      c->clients[i].requests = 0;
    }
  gboolean ok = TRUE;
  if (n == 0 && tr)
    ok = cs_json_fail(error, sc->name, "trace",
                      "no client has \"arrival\": \"trace\" to take requests from it");
  else if (n > 0 && !tr)
    ok = cs_json_fail(error, sc->name, "trace",
                      "required field is missing (clients with \"arrival\": \"trace\" need "
                      "one; see docs/scenario.md)");
  else if (n > 0) {
    const char *file = NULL;
    ok = cs_json_expect_object(tr, sc->name, "trace", error) &&
         cs_json_read_string(tr, "file", TRUE, &file, sc->name, "trace", error);
    char *path = ok ? cs_scenario_resolve_data_file(sc, file, "traces", "trace.file", error) : NULL;
    ok = ok && path && cs_trace_clients_compile(tr, sc->name, path, file, c->clients, idx, n,
                                                &c->trace_desc, error);
    c->trace_path = path;
  }
  g_free(idx);
  return ok;
}

/* Refuses a client whose sending would end past CS_SCENARIO_HORIZON_NS:
 * start + warm-up + measured phase (its duration, the time its requests take
 * at its rate, the last explicit time plus one mean gap, or the trace
 * window). Each field is in range on its own; their sum need not be, and
 * past the horizon int64 ns would no longer hold the times the engine adds
 * to them. Computed in double seconds, which cannot overflow. */
static gboolean check_horizon(const CsScenario *sc, const CsClientConfig *cc, int i,
                              GError **error)
{
  double start_s = cc->start_ns * 1e-9, warmup_s = cc->warmup_ns * 1e-9;
  double phase_s;
  const char *what;
  if (cc->window_ns > 0) {
    phase_s = cc->window_ns * 1e-9 - warmup_s; /* the trace window counts the warm-up */
    what = "the trace window";
  } else if (cc->arrival == CS_ARRIVAL_TIMES) {
    phase_s = cc->times_ns[cc->n_times - 1] * 1e-9 + 1.0 / cc->rate_rps;
    what = "its last time plus one mean gap";
  } else if (cc->duration_ns > 0) {
    phase_s = cc->duration_ns * 1e-9;
    what = "duration_s";
  } else {
    phase_s = (double)cc->requests / cc->rate_rps;
    what = "requests / rate";
  }
  double end_s = start_s + warmup_s + phase_s;
  const double horizon_s = CS_SCENARIO_HORIZON_NS * 1e-9;
  if (end_s <= horizon_s)
    return TRUE;
  char *jp = cs_json_path_index("clients", i);
  gboolean ok = cs_json_fail(error, sc->name, jp,
                             "sends until %g s of simulated time (start_s %g + warmup_s %g + %s "
                             "%g): expected at most %g s, the limit of simulated time",
                             end_s, start_s, warmup_s, what, phase_s, horizon_s);
  g_free(jp);
  return ok;
}

gboolean cs_scenario_read_clients(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "clients");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
    return cs_json_fail(error, sc->name, "clients",
                        list ? "expected a non-empty array of clients, got %s"
                             : "required field is missing (a non-empty array of clients)%s",
                        list ? cs_json_type_name(list) : "");
  double default_duration_s = -1.0;
  if (!cs_json_read_double(sc->root, "duration_s", FALSE, 1e-9, 1e9, &default_duration_s,
                           sc->name, "", error))
    return FALSE;
  static const char *const keys[] = { "model",      "rate",        "slo_ms",       "arrival",
                                      "requests",   "duration_s",  "warmup_s",     "start_s",
                                      "input_bytes", "output_bytes", "planned_rate", NULL };
  c->n_clients = cJSON_GetArraySize(list);
  c->clients = g_new0(CsClientConfig, c->n_clients);
  CsErrorList *el = cs_error_list_new();
  int i = 0;
  const cJSON *cl;
  cJSON_ArrayForEach(cl, list)
  {
    CsClientConfig *cc = &c->clients[i];
    char *jp = cs_json_path_index("clients", i);
    const char *model = NULL;
    double duration_s = -1.0, warmup_s = 0.0, start_s = 0.0;
    int64_t requests = -1;
    cc->input_bytes = cc->output_bytes = -1;
    /* Each field is read on its own, so that a client's bad fields are
     * listed together; the checks after them need them all. An unknown
     * field (a misspelt one) stops the client: its fix changes the rest. */
    gboolean ok = cs_json_expect_object(cl, sc->name, jp, cs_error_list_slot(el)) &&
                  cs_json_check_keys(cl, keys, sc->name, jp, cs_error_list_slot(el));
    if (ok) {
      ok &= cs_json_read_string(cl, "model", TRUE, &model, sc->name, jp, cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "rate", FALSE, 1e-9, 1e12, &cc->rate_rps, sc->name, jp,
                                cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "planned_rate", FALSE, 1e-9, 1e12, &cc->planned_rate_rps,
                                sc->name, jp, cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "slo_ms", TRUE, 1e-6, 1e9, &cc->slo_ms, sc->name, jp,
                                cs_error_list_slot(el));
      ok &= read_arrival(sc, cl, jp, cc, cs_error_list_slot(el));
      ok &= cs_json_read_int64(cl, "requests", FALSE, 1, INT64_MAX / 4, &requests, sc->name, jp,
                               cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "duration_s", FALSE, 1e-9, 1e9, &duration_s, sc->name, jp,
                                cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "warmup_s", FALSE, 0.0, 1e9, &warmup_s, sc->name, jp,
                                cs_error_list_slot(el));
      ok &= cs_json_read_double(cl, "start_s", FALSE, 0.0, 1e9, &start_s, sc->name, jp,
                                cs_error_list_slot(el));
      ok &= cs_json_read_int64(cl, "input_bytes", FALSE, 0, INT64_MAX / 4, &cc->input_bytes,
                               sc->name, jp, cs_error_list_slot(el));
      ok &= cs_json_read_int64(cl, "output_bytes", FALSE, 0, INT64_MAX / 4, &cc->output_bytes,
                               sc->name, jp, cs_error_list_slot(el));
    }
    if (ok) {
      cc->model = g_strdup(model);
      for (int j = 0; j < i && ok; j++)
        if (c->clients[j].model && strcmp(c->clients[j].model, model) == 0)
          ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                            "model \"%s\" already has a client (clients[%d]); one client per "
                            "model",
                            model, j);
    }
    gboolean has_rate = cJSON_GetObjectItemCaseSensitive(cl, "rate") != NULL;
    if (ok && cc->window_ns < 0) {
      if (has_rate || requests > 0 || duration_s > 0)
        ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                          "a \"trace\" arrival takes its requests and rate from the scenario's "
                          "\"trace\": remove \"%s\"",
                          has_rate ? "rate" : requests > 0 ? "requests" : "duration_s");
      requests = 1; /* placeholder until the trace is read */
      cc->rate_rps = 1.0;
    } else if (ok && cc->arrival == CS_ARRIVAL_TIMES) {
      if (has_rate || requests > 0 || duration_s > 0)
        ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                          "a \"times\" arrival sets the requests and rate itself: remove "
                          "\"%s\"",
                          has_rate ? "rate" : requests > 0 ? "requests" : "duration_s");
      else {
        int64_t n = cc->n_times;
        int64_t span = cc->times_ns[n - 1] - cc->times_ns[0];
        double gap_s = n > 1 && span > 0 ? span * 1e-9 / (n - 1) : 1.0;
        cc->rate_rps = 1.0 / gap_s;
        requests = n;
      }
    } else if (ok && !has_rate) {
      char *rp = cs_json_path_key(jp, "rate");
      ok = cs_json_fail(cs_error_list_slot(el), sc->name, rp, "required field is missing");
      g_free(rp);
    }
    if (ok && requests > 0 && duration_s > 0)
      ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                        "give \"requests\" or \"duration_s\", not both");
    if (ok && requests < 0 && duration_s < 0) {
      if (default_duration_s > 0)
        duration_s = default_duration_s;
      else
        ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                          "needs \"requests\" or \"duration_s\" (or a top-level \"duration_s\")");
    }
    if (ok) {
      gboolean known = FALSE;
      for (int g = 0; g < c->n_gpus && !known; g++)
        known = cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, model) != NULL;
      if (!known) {
        /* Suggest among the models of the cluster's GPU types (one type per
         * node, its GPUs consecutive): a name on another type would fail too. */
        GPtrArray *names = g_ptr_array_new();
        for (int g = 0; g < c->n_gpus; g++) {
          if (g > 0 && c->gpus[g].node == c->gpus[g - 1].node)
            continue;
          for (int i = 0; i < cs_profile_set_n_models(c->profiles); i++) {
            const CsModelProfile *p = cs_profile_set_model(c->profiles, i);
            if (strcmp(p->gpu_type, c->gpus[g].gpu_type) == 0)
              g_ptr_array_add(names, p->model);
          }
        }
        char *hint = cs_did_you_mean(model, (const char *const *)names->pdata, (int)names->len);
        ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                          "model \"%s\" has no profile on any GPU type of the cluster%s", model,
                          hint);
        g_free(hint);
        g_ptr_array_free(names, TRUE);
      }
    }
    if (ok) {
      cc->slo_ns = llround(cc->slo_ms * 1e6);
      cc->requests = requests > 0 ? requests : 0;
      cc->duration_ns = duration_s > 0 ? llround(duration_s * 1e9) : 0;
      cc->warmup_ns = llround(warmup_s * 1e9);
      cc->start_ns = llround(start_s * 1e9);
      if (cc->input_bytes < 0)
        cc->input_bytes = profile_bytes(c, model, TRUE);
      if (cc->output_bytes < 0)
        cc->output_bytes = profile_bytes(c, model, FALSE);
      if ((cc->input_bytes < 0 || cc->output_bytes < 0) && !c->network_is_zero)
        ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                          "the profile of \"%s\" gives no %s size and the network is not zero: "
                          "set \"%s\"",
                          model, cc->input_bytes < 0 ? "request payload" : "result payload",
                          cc->input_bytes < 0 ? "input_bytes" : "output_bytes");
      cc->input_bytes = MAX(cc->input_bytes, 0);
      cc->output_bytes = MAX(cc->output_bytes, 0);
    }
    g_free(jp);
    i++;
  }
  if (!cs_error_list_finish(el, sc->name, "clients", error))
    return FALSE;
  if (!read_trace(sc, c, error))
    return FALSE;
  CsErrorList *horizons = cs_error_list_new();
  for (int k = 0; k < c->n_clients; k++)
    check_horizon(sc, &c->clients[k], k, cs_error_list_slot(horizons));
  if (!cs_error_list_finish(horizons, sc->name, "clients", error))
    return FALSE;
  /* Trace clients learn their rate from the trace: plan for it unless told otherwise. */
  for (int k = 0; k < c->n_clients; k++)
    if (!(c->clients[k].planned_rate_rps > 0))
      c->clients[k].planned_rate_rps = c->clients[k].rate_rps;
  return TRUE;
}
