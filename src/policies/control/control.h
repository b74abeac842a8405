/* The framework's side of controllers (the policies' side is
 * clustersim/control.h): the built-in controllers, running a controller's
 * parameter hooks on the scenario's "controller" object, and the rate
 * estimator the built-in ones share. */
#ifndef CS_POLICIES_CONTROL_H
#define CS_POLICIES_CONTROL_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "clustersim/control.h"

extern const CsControllerPolicy cs_controller_replan;    /* periodic or triggered re-placement */
extern const CsControllerPolicy cs_controller_autoscale; /* Symphony's autoscaling signals */

/* Returns the built-in controller registered under name, or NULL. */
const CsControllerPolicy *cs_controller_policy_lookup(const char *name);
/* Returns the NULL-terminated list of built-in controllers. */
const CsControllerPolicy *const *cs_controller_policy_list(void);

/* Runs policy->parse on obj (the scenario's "controller" object; file and
 * path locate it in messages), with "policy" and the framework's own keys
 * (known, NULL-terminated) accepted, then rejects any field nobody asked
 * for. Sets *params and returns TRUE, or returns FALSE with error set. */
gboolean cs_controller_parse(const CsControllerPolicy *policy, void *user_data, const cJSON *obj,
                             const char *const *known, const char *file, const char *path,
                             void **params, GError **error);

/* The parameters as policy->describe writes them, compact JSON ("{}"). */
char *cs_controller_describe_json(const CsControllerPolicy *policy, const void *params);

/* Adds to obj every default policy->write_defaults writes that obj lacks. */
void cs_controller_fill_defaults(const CsControllerPolicy *policy, const void *params, cJSON *obj);

/* Symphony's autoscaling rule (section 3.5) for n_ready GPUs at bad rate r
 * and idle fraction f: GPUs to add (> 0), ceil(n r / (1 - r)) when r >
 * bad_threshold (INT_MAX when r >= 1: all there are); else GPUs to release
 * (< 0), floor(n f) when f > idle_threshold; else 0. */
int cs_autoscale_rule(int n_ready, double r, double f, double bad_threshold,
                      double idle_threshold);

/* ---- the rate estimator of the built-in controllers ------------------------------- */

/* What the built-in controllers observe every tick. Per model, an
 * exponentially weighted moving average of the arrival rate observed over
 * ticks of equal length:
 *
 *   r_k = (1 - a) r_(k-1) + a x_k,   a = 1 - 2^(-tick / half_life)
 *
 * x_k is the number of arrivals in tick k over the tick's length; r_0 is the
 * scenario's planned rate. An arrival's weight halves every half_life.
 * And the tick's bad share: of the requests that left during it, all models,
 * those not answered within their SLO (0 when none left). */
typedef struct {
  int n_models;
  double alpha;
  double *rate;         /* current estimates, req/s */
  int64_t *last_count;  /* arrivals counted at the previous tick */
  int64_t last_ns;      /* time of the previous tick */
  int64_t last_good, last_bad; /* answers within and past the SLO at the previous tick */
  double bad_share;     /* of the last tick */
} CsRateEstimator;

/* Starts the estimator at the world's planned rates (cs_world_rate_rps when
 * the scenario plans for the sending rate). */
void cs_rate_estimator_init(CsRateEstimator *est, CsControl *c, double tick_s, double half_life_s);
/* Folds in the arrivals and answers since the previous call. */
void cs_rate_estimator_tick(CsRateEstimator *est, CsControl *c);
void cs_rate_estimator_clear(CsRateEstimator *est);

#endif
