/* The built-in controllers, the framework's side of a controller's parameter
 * hooks, and the rate estimator the built-in controllers share. */
#include <math.h>
#include <string.h>

#include "common/params_internal.h"
#include "control.h"

static const CsControllerPolicy *const builtins[] = {
  &cs_controller_replan,
  &cs_controller_autoscale,
  NULL,
};

const CsControllerPolicy *cs_controller_policy_lookup(const char *name)
{
  for (int i = 0; builtins[i]; i++)
    if (strcmp(builtins[i]->name, name) == 0)
      return builtins[i];
  return NULL;
}

const CsControllerPolicy *const *cs_controller_policy_list(void)
{
  return builtins;
}

gboolean cs_controller_parse(const CsControllerPolicy *policy, void *user_data, const cJSON *obj,
                             const char *const *known, const char *file, const char *path,
                             void **params, GError **error)
{
  *params = NULL;
  CsParams *view = cs_params_new_root(obj, file, path);
  cs_params_mark_known(view, "policy");
  for (int i = 0; known && known[i]; i++)
    cs_params_mark_known(view, known[i]);
  GError *perr = NULL;
  *params = policy->parse(view, user_data, &perr);
  gboolean ok = perr == NULL && *params != NULL;
  if (!ok) {
    if (!perr)
      g_set_error(&perr, CS_ERROR, CS_ERROR_POLICY,
                  "controller \"%s\" returned no parameters and no error", policy->name);
    if (*params && policy->free_params)
      policy->free_params(*params);
    *params = NULL;
    /* Errors from the parameter readers name the file and path already. */
    if (perr->domain == CS_ERROR && perr->code != CS_ERROR_POLICY)
      g_propagate_error(error, perr);
    else {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "%s: %s: %s", file, path, perr->message);
      g_error_free(perr);
    }
  }
  if (ok && !cs_params_check_asked(view, error)) {
    if (policy->free_params)
      policy->free_params(*params);
    *params = NULL;
    ok = FALSE;
  }
  cs_params_free(view);
  return ok;
}

char *cs_controller_describe_json(const CsControllerPolicy *policy, const void *params)
{
  cJSON *out = cJSON_CreateObject();
  if (policy->describe) {
    CsParamsWriter *w = cs_params_writer_new(out);
    policy->describe(params, w);
    cs_params_writer_free(w);
  }
  char *text = cJSON_PrintUnformatted(out);
  char *copy = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(out);
  return copy;
}

void cs_controller_fill_defaults(const CsControllerPolicy *policy, const void *params, cJSON *obj)
{
  if (!policy->write_defaults)
    return;
  CsParamsWriter *w = cs_params_writer_new(obj); /* keeps the scenario's own values */
  policy->write_defaults(params, w);
  cs_params_writer_free(w);
}

/* ---- rate estimator ------------------------------------------------------------ */

void cs_rate_estimator_init(CsRateEstimator *est, CsControl *c, double tick_s, double half_life_s)
{
  const CsWorld *w = cs_control_world(c);
  est->n_models = cs_world_n_models(w);
  est->alpha = 1.0 - exp2(-tick_s / half_life_s);
  est->rate = g_new0(double, MAX(est->n_models, 1));
  est->last_count = g_new0(int64_t, MAX(est->n_models, 1));
  for (int m = 0; m < est->n_models; m++) {
    est->rate[m] = cs_world_planned_rate_rps(w, m);
    est->last_count[m] = cs_control_arrivals(c, m);
  }
  est->last_ns = cs_control_now(c);
}

void cs_rate_estimator_tick(CsRateEstimator *est, CsControl *c)
{
  int64_t now = cs_control_now(c);
  double span_s = (now - est->last_ns) * 1e-9;
  if (span_s <= 0)
    return;
  for (int m = 0; m < est->n_models; m++) {
    int64_t count = cs_control_arrivals(c, m);
    double x = (double)(count - est->last_count[m]) / span_s;
    est->rate[m] = (1.0 - est->alpha) * est->rate[m] + est->alpha * x;
    est->last_count[m] = count;
  }
  est->last_ns = now;
}

void cs_rate_estimator_clear(CsRateEstimator *est)
{
  g_clear_pointer(&est->rate, g_free);
  g_clear_pointer(&est->last_count, g_free);
}
