/* "replan": runs the scenario's placement policy again while the run goes
 * on, with the arrival rates it estimates, and applies the result.
 *
 *   "controller": {"policy": "replan", "period_s": 60, "tick_s": 1,
 *                  "half_life_s": 30, "rate_change": 0.25, "bad_rate": 0,
 *                  "min_interval_s": 10, "headroom": 1}
 *
 * Every tick_s it folds the arrivals of the tick into an exponentially
 * weighted rate per model (control.h, CsRateEstimator: half_life_s), then
 * re-places when period_s has passed since the last placement (0: never on
 * time alone), or on a trigger: some model's estimate moved from the rate
 * the running placement planned for by more than rate_change times the
 * larger of the two (and 1 req/s), or the share of requests not answered
 * within their SLO in the tick exceeded bad_rate (0 turns a trigger off).
 * Two placements are at least min_interval_s apart: loads take time, and a
 * controller that re-places while the last change still loads would chase
 * its own transient. The policy plans for estimate x headroom. */
#include <math.h>

#include "control.h"

typedef struct {
  double period_s, tick_s, half_life_s, rate_change, bad_rate, min_interval_s, headroom;
} ReplanParams;

typedef struct {
  CsControl *c;
  const ReplanParams *p;
  CsRateEstimator est;
  double *planned;        /* the rates the running placement planned for */
  int64_t last_place_ns;  /* when it last re-placed (0 at the start) */
  int64_t failures;
} Replan;

static void *replan_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy",   "period_s",       "tick_s",   "half_life_s",
                                      "rate_change", "bad_rate",    "min_interval_s", "headroom",
                                      NULL };
  ReplanParams *p = g_new(ReplanParams, 1);
  *p = (ReplanParams){ .period_s = 60, .tick_s = 1, .half_life_s = 30, .rate_change = 0.25,
                       .bad_rate = 0, .min_interval_s = 10, .headroom = 1 };
  cs_params_doc(params, "period_s", "re-places when this long has passed since the last placement (0: never on time alone)");
  cs_params_doc(params, "tick_s", "folds each tick's arrivals into the rate estimates");
  cs_params_doc(params, "half_life_s", "an arrival's weight in the rate estimate halves every half_life_s");
  cs_params_doc(params, "rate_change", "re-places when an estimate is this fraction away from the planned rate (0: off)");
  cs_params_doc(params, "bad_rate", "re-places when a tick's bad rate exceeds this (0: off)");
  cs_params_doc(params, "min_interval_s", "placements are at least this far apart");
  cs_params_doc(params, "headroom", "the placement plans for estimate x headroom");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "period_s", FALSE, 0, 1e9, &p->period_s, cs_error_list_slot(problems));
    cs_params_double(params, "tick_s", FALSE, 1e-3, 1e9, &p->tick_s, cs_error_list_slot(problems));
    cs_params_double(params, "half_life_s", FALSE, 1e-3, 1e9, &p->half_life_s,
                     cs_error_list_slot(problems));
    cs_params_double(params, "rate_change", FALSE, 0, 1e9, &p->rate_change,
                     cs_error_list_slot(problems));
    cs_params_double(params, "bad_rate", FALSE, 0, 1, &p->bad_rate, cs_error_list_slot(problems));
    cs_params_double(params, "min_interval_s", FALSE, 0, 1e9, &p->min_interval_s,
                     cs_error_list_slot(problems));
    cs_params_double(params, "headroom", FALSE, 0.01, 100, &p->headroom,
                     cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error)) {
    g_free(p);
    return NULL;
  }
  if (p->period_s == 0 && p->rate_change == 0 && p->bad_rate == 0) {
    cs_params_fail_field(params, "period_s", error,
                         "with period_s, rate_change and bad_rate all 0 the controller would never "
                         "re-place; give one of them");
    g_free(p);
    return NULL;
  }
  if (p->period_s > 0 && p->period_s < p->tick_s) {
    cs_params_fail_field(params, "period_s", error,
                         "%g s is shorter than tick_s (%g s), when the controller looks; expected "
                         "period_s >= tick_s", p->period_s, p->tick_s);
    g_free(p);
    return NULL;
  }
  return p;
}

static void replan_describe(const void *params, CsParamsWriter *out)
{
  const ReplanParams *p = params;
  cs_params_write_double(out, "period_s", p->period_s);
  cs_params_write_double(out, "tick_s", p->tick_s);
  cs_params_write_double(out, "half_life_s", p->half_life_s);
  cs_params_write_double(out, "rate_change", p->rate_change);
  cs_params_write_double(out, "bad_rate", p->bad_rate);
  cs_params_write_double(out, "min_interval_s", p->min_interval_s);
  cs_params_write_double(out, "headroom", p->headroom);
}

static int64_t ns_of(double s)
{
  return llround(s * 1e9);
}

static void *replan_create(CsControl *c, const void *params, void *user_data)
{
  (void)user_data;
  Replan *r = g_new0(Replan, 1);
  r->c = c;
  r->p = params;
  cs_rate_estimator_init(&r->est, c, r->p->tick_s, r->p->half_life_s);
  int n = r->est.n_models;
  r->planned = g_new0(double, MAX(n, 1));
  for (int m = 0; m < n; m++)
    r->planned[m] = cs_world_planned_rate_rps(cs_control_world(c), m);
  cs_control_timer(c, ns_of(r->p->tick_s), 0);
  return r;
}

static void replan_destroy(void *state)
{
  Replan *r = state;
  cs_rate_estimator_clear(&r->est);
  g_free(r->planned);
  g_free(r);
}

/* Why to re-place now, or NULL. */
static const char *trigger(Replan *r, int64_t now, double bad_share)
{
  const ReplanParams *p = r->p;
  if (now - r->last_place_ns < ns_of(p->min_interval_s))
    return NULL;
  if (p->period_s > 0 && now - r->last_place_ns >= ns_of(p->period_s))
    return "period";
  if (p->bad_rate > 0 && bad_share > p->bad_rate)
    return "bad rate";
  for (int m = 0; p->rate_change > 0 && m < r->est.n_models; m++) {
    double est = r->est.rate[m], plan = r->planned[m];
    if (fabs(est - plan) > p->rate_change * MAX(MAX(est, plan), 1.0))
      return "rate change";
  }
  return NULL;
}

static void replace(Replan *r, const char *why)
{
  CsControl *c = r->c;
  const CsWorld *w = cs_control_world(c);
  int n = r->est.n_models;
  double *rates = g_new0(double, MAX(n, 1));
  GString *text = g_string_new(NULL);
  for (int m = 0; m < n; m++) {
    rates[m] = r->est.rate[m] * r->p->headroom;
    g_string_append_printf(text, "%s%s %.4g", m ? ", " : "", cs_world_model_name(w, m), rates[m]);
  }
  GError *err = NULL;
  CsPlacement *pl = cs_control_place(c, rates, &err);
  int changed = pl ? cs_control_apply(c, pl, &err) : -1;
  if (changed < 0) {
    if (r->failures++ == 0)
      cs_control_warn(c, "replan_failed", NULL, -1,
                      "controller \"replan\" (%s) could not re-place for %s req/s: %s; the run "
                      "keeps its placement (later failures are in the control log)",
                      why, text->str, err->message);
    else
      cs_control_note(c, "replan (%s) failed: %s", why, err->message);
    g_error_free(err);
  } else {
    cs_control_note(c, "replan (%s) for %s req/s: %d replica(s) added or removed", why, text->str,
                    changed);
    for (int m = 0; m < n; m++)
      r->planned[m] = rates[m] / r->p->headroom;
  }
  r->last_place_ns = cs_control_now(c);
  cs_placement_free(pl);
  g_string_free(text, TRUE);
  g_free(rates);
}

static void replan_on_timer(void *state, uint32_t arg)
{
  (void)arg;
  Replan *r = state;
  CsControl *c = r->c;
  cs_rate_estimator_tick(&r->est, c);
  int64_t now = cs_control_now(c);
  const char *why = trigger(r, now, r->est.bad_share);
  if (why)
    replace(r, why);
  cs_control_timer(c, now + ns_of(r->p->tick_s), 0);
}

const CsControllerPolicy cs_controller_replan = {
  .name = "replan",
  .description = "re-runs the placement policy every period or on a rate or SLO trigger, with "
                 "EWMA rate estimates",
  .needs_placement = TRUE,
  .parse = replan_parse,
  .free_params = g_free,
  .describe = replan_describe,
  .write_defaults = replan_describe,
  .create = replan_create,
  .destroy = replan_destroy,
  .on_timer = replan_on_timer,
};
