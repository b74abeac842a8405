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
  return cs_policy_params_parse("controller", policy->name, policy->parse, policy->free_params,
                                user_data, obj, known, file, path, params, error);
}

char *cs_controller_describe_json(const CsControllerPolicy *policy, const void *params)
{
  return cs_policy_params_json(policy->describe, params);
}

void cs_controller_fill_defaults(const CsControllerPolicy *policy, const void *params, cJSON *obj)
{
  cs_policy_params_fill(policy->write_defaults, params, obj);
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
  est->last_good = est->last_bad = 0;
  for (int m = 0; m < est->n_models; m++) {
    est->last_good += cs_control_good(c, m);
    est->last_bad += cs_control_bad(c, m);
  }
  est->bad_share = 0.0;
}

void cs_rate_estimator_tick(CsRateEstimator *est, CsControl *c)
{
  int64_t good = 0, bad = 0;
  for (int m = 0; m < est->n_models; m++) {
    good += cs_control_good(c, m);
    bad += cs_control_bad(c, m);
  }
  int64_t dg = good - est->last_good, db = bad - est->last_bad;
  est->last_good = good;
  est->last_bad = bad;
  est->bad_share = dg + db > 0 ? (double)db / (double)(dg + db) : 0.0;
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
