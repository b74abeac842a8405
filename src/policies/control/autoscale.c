/* "autoscale": Symphony's autoscaling rule (section 3.5 of the paper) acting
 * on the cluster's pool of GPUs.
 *
 *   "controller": {"policy": "autoscale", "initial_gpus": 2, "tick_s": 10,
 *                  "bad_rate_threshold": 0.01, "provision_delay_s": 60,
 *                  "min_gpus": 1, "max_gpus": 8, "half_life_s": 30}
 *
 * The cluster's GPUs are the pool; the first initial_gpus are on at the
 * start. Every tick_s it reads, over the tick, the bad rate r (requests not
 * answered within their SLO over the requests that left, all models) and
 * the idle fraction f of the N GPUs ready through the whole tick (1 - their
 * busy time over N x tick). Symphony's rule:
 *   r > bad_rate_threshold: provision N r / (1 - r) GPUs (rounded up; the
 *       rest of the pool when r = 1), the lowest-numbered that are off;
 *   otherwise: release N f GPUs (rounded down), the highest-numbered ready
 *       ones (Symphony's dispatch leaves those idle), keeping min_gpus.
 * Two damping settings, off by default (the paper states none): releases
 * happen only when f > idle_threshold, and never to a GPU provisioned less
 * than hold_s ago. Without them the rule oscillates on bursty load: the
 * GPU added to cut a 4 % bad rate leaves the pair 85 % idle, and goes.
 * It adds none while a GPU it asked for is still provisioning: the signal
 * still describes the smaller cluster, and adding on it again would count
 * the same shortfall twice. A GPU provisioned is billed from the request;
 * it takes work after provision_delay_s (plus, under a centralized dispatch
 * policy, the load of every model). A released GPU finishes what it holds.
 *
 * With a placement-based dispatch policy, the placement follows the GPUs:
 * whenever the ready GPUs differ from those of the running placement, the
 * scenario's placement policy runs again on the ready GPUs, for the rates
 * of an exponentially weighted estimator (half_life_s; control.h). */
#include <limits.h>
#include <math.h>

#include "control.h"

typedef struct {
  double tick_s, bad_rate_threshold, provision_delay_s, half_life_s;
  double idle_threshold;  /* release only when f exceeds it (0: the paper's rule) */
  double hold_s;          /* a GPU is not released sooner after it was provisioned */
  int min_gpus, max_gpus; /* max_gpus 0: the whole pool */
} AutoscaleParams;

typedef struct {
  CsControl *c;
  const AutoscaleParams *p;
  int n_gpus, max_gpus;
  CsRateEstimator est;
  gboolean placed_here;   /* the run has a placement: it follows the GPUs */
  gboolean *placed_on;    /* per GPU: ready when the running placement was made */
  gboolean *ready_before; /* per GPU: ready at the previous tick */
  int64_t *busy_before;   /* per GPU: busy ns at the previous tick */
  int64_t *provisioned_ns; /* per GPU: when it was last provisioned (0 for those on at 0) */
  int64_t last_ns;
  int64_t failures;
} Autoscale;

static void *autoscale_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "initial_gpus", "tick_s", "bad_rate_threshold",
                                      "provision_delay_s", "min_gpus", "max_gpus", "half_life_s",
                                      "idle_threshold", "hold_s", NULL };
  AutoscaleParams *p = g_new(AutoscaleParams, 1);
  *p = (AutoscaleParams){ .tick_s = 10, .bad_rate_threshold = 0.01, .provision_delay_s = 60,
                          .half_life_s = 30, .idle_threshold = 0, .hold_s = 0, .min_gpus = 1,
                          .max_gpus = 0 };
  cs_params_doc(params, "initial_gpus", "GPUs on at the start, the lowest-numbered of the pool");
  cs_params_doc(params, "tick_s", "reads the bad rate and the idle fraction every tick");
  cs_params_doc(params, "bad_rate_threshold", "a bad rate r above it provisions ceil(N r / (1 - r)) GPUs");
  cs_params_doc(params, "provision_delay_s", "a provisioned GPU takes work this long after it was asked for (VM start-up)");
  cs_params_doc(params, "min_gpus", "releases never go below this many GPUs");
  cs_params_doc(params, "max_gpus", "provisions never go above this many GPUs");
  cs_params_doc_default(params, "max_gpus", "the whole pool");
  cs_params_doc(params, "half_life_s", "half-life of the EWMA rates the placement follows the GPUs with");
  cs_params_doc(params, "idle_threshold", "releases only above this idle fraction (damping)");
  cs_params_doc(params, "hold_s", "keeps a provisioned GPU at least this long");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "tick_s", FALSE, 1e-3, 1e9, &p->tick_s, cs_error_list_slot(problems));
    cs_params_double(params, "bad_rate_threshold", FALSE, 0, 1, &p->bad_rate_threshold,
                     cs_error_list_slot(problems));
    cs_params_double(params, "provision_delay_s", FALSE, 0, 1e9, &p->provision_delay_s,
                     cs_error_list_slot(problems));
    cs_params_double(params, "half_life_s", FALSE, 1e-3, 1e9, &p->half_life_s,
                     cs_error_list_slot(problems));
    cs_params_double(params, "idle_threshold", FALSE, 0, 1, &p->idle_threshold,
                     cs_error_list_slot(problems));
    cs_params_double(params, "hold_s", FALSE, 0, 1e9, &p->hold_s, cs_error_list_slot(problems));
    cs_params_int(params, "min_gpus", FALSE, 0, 1 << 20, &p->min_gpus,
                  cs_error_list_slot(problems));
    cs_params_int(params, "max_gpus", FALSE, 1, 1 << 20, &p->max_gpus,
                  cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error)) {
    g_free(p);
    return NULL;
  }
  if (p->max_gpus > 0 && p->min_gpus > p->max_gpus) {
    cs_params_fail_field(params, "min_gpus", error, "%d is above max_gpus (%d)", p->min_gpus,
                         p->max_gpus);
    g_free(p);
    return NULL;
  }
  return p;
}

static void autoscale_describe(const void *params, CsParamsWriter *out)
{
  const AutoscaleParams *p = params;
  cs_params_write_double(out, "tick_s", p->tick_s);
  cs_params_write_double(out, "bad_rate_threshold", p->bad_rate_threshold);
  cs_params_write_double(out, "provision_delay_s", p->provision_delay_s);
  cs_params_write_int(out, "min_gpus", p->min_gpus);
  if (p->max_gpus > 0)
    cs_params_write_int(out, "max_gpus", p->max_gpus);
  cs_params_write_double(out, "half_life_s", p->half_life_s);
  cs_params_write_double(out, "idle_threshold", p->idle_threshold);
  cs_params_write_double(out, "hold_s", p->hold_s);
}

static int64_t ns_of(double s)
{
  return llround(s * 1e9);
}

int cs_autoscale_rule(int n_ready, double r, double f, double bad_threshold,
                      double idle_threshold)
{
  if (r > bad_threshold) {
    if (r >= 1.0)
      return INT_MAX;
    /* The tolerance keeps an exact product (8 x 0.25 = 2) from rounding up. */
    return (int)ceil(n_ready * r / (1.0 - r) - 1e-9);
  }
  if (f > idle_threshold)
    return -(int)floor(n_ready * f + 1e-9);
  return 0;
}

/* The pool is the cluster: a bound beyond it is clamped, and said so. */
static void autoscale_check(void *params, const CsWorld *w, CsWarningList *warnings,
                            void *user_data)
{
  (void)user_data;
  const AutoscaleParams *p = params;
  int n = cs_world_n_gpus(w);
  if (p->max_gpus > n)
    cs_warning_add(warnings, "setting_clamped", NULL, -1,
                   "controller.max_gpus is %d but the cluster, the pool it provisions from, has "
                   "%d GPUs: at most %d are used", p->max_gpus, n, n);
  if (p->min_gpus > n)
    cs_warning_add(warnings, "setting_clamped", NULL, -1,
                   "controller.min_gpus is %d but the cluster has %d GPUs: it keeps them all",
                   p->min_gpus, n);
}

static void *autoscale_create(CsControl *c, const void *params, void *user_data)
{
  (void)user_data;
  Autoscale *a = g_new0(Autoscale, 1);
  a->c = c;
  a->p = params;
  const CsWorld *w = cs_control_world(c);
  a->n_gpus = cs_world_n_gpus(w);
  a->max_gpus = a->p->max_gpus > 0 ? MIN(a->p->max_gpus, a->n_gpus) : a->n_gpus;
  a->placed_here = cs_world_placement(w) != NULL;
  cs_rate_estimator_init(&a->est, c, a->p->tick_s, a->p->half_life_s);
  a->placed_on = g_new0(gboolean, MAX(a->n_gpus, 1));
  a->ready_before = g_new0(gboolean, MAX(a->n_gpus, 1));
  a->busy_before = g_new0(int64_t, MAX(a->n_gpus, 1));
  a->provisioned_ns = g_new0(int64_t, MAX(a->n_gpus, 1));
  for (int g = 0; g < a->n_gpus; g++)
    a->placed_on[g] = a->ready_before[g] = cs_control_gpu_life(c, g) == CS_GPU_READY;
  cs_control_timer(c, ns_of(a->p->tick_s), 0);
  return a;
}

static void autoscale_destroy(void *state)
{
  Autoscale *a = state;
  cs_rate_estimator_clear(&a->est);
  g_free(a->placed_on);
  g_free(a->ready_before);
  g_free(a->busy_before);
  g_free(a->provisioned_ns);
  g_free(a);
}

/* Re-places on the ready GPUs when they are not those of the running
 * placement. */
static void follow_gpus(Autoscale *a)
{
  CsControl *c = a->c;
  gboolean differs = FALSE;
  for (int g = 0; g < a->n_gpus; g++)
    differs |= a->placed_on[g] != (cs_control_gpu_life(c, g) == CS_GPU_READY);
  if (!differs)
    return;
  GError *err = NULL;
  CsPlacement *pl = cs_control_place(c, a->est.rate, &err);
  int changed = pl ? cs_control_apply(c, pl, &err) : -1;
  cs_placement_free(pl);
  if (changed < 0) {
    if (a->failures++ == 0)
      cs_control_warn(c, "replan_failed", NULL, -1,
                      "controller \"autoscale\" could not re-place on the ready GPUs: %s; the run "
                      "keeps its placement (later failures are in the control log)",
                      err->message);
    else
      cs_control_note(c, "re-placement on the ready GPUs failed: %s", err->message);
    g_error_free(err);
    return;
  }
  cs_control_note(c, "re-placed on the ready GPUs: %d replica(s) added or removed", changed);
  for (int g = 0; g < a->n_gpus; g++)
    a->placed_on[g] = cs_control_gpu_life(c, g) == CS_GPU_READY;
}

static void autoscale_on_timer(void *state, uint32_t arg)
{
  (void)arg;
  Autoscale *a = state;
  CsControl *c = a->c;
  int64_t now = cs_control_now(c);
  cs_rate_estimator_tick(&a->est, c);
  double r = a->est.bad_share;
  /* Idle fraction over the GPUs ready through the whole tick. */
  int n_ready = 0, n_on = 0, provisioning = 0;
  double busy = 0.0, span = (double)(now - a->last_ns);
  for (int g = 0; g < a->n_gpus; g++) {
    CsGpuLife life = cs_control_gpu_life(c, g);
    int64_t b = cs_control_gpu_busy_ns(c, g);
    if (life == CS_GPU_READY && a->ready_before[g]) {
      n_ready++;
      busy += (double)(b - a->busy_before[g]);
    }
    n_on += life != CS_GPU_OFF;
    provisioning += life == CS_GPU_PROVISIONING;
    a->busy_before[g] = b;
  }
  double f = n_ready > 0 && span > 0 ? MAX(0.0, 1.0 - busy / (n_ready * span)) : 0.0;
  a->last_ns = now;
  int rule = cs_autoscale_rule(n_ready, r, f, a->p->bad_rate_threshold, a->p->idle_threshold);
  if (rule > 0 && provisioning == 0) {
    int want = rule;
    int add = MIN(want, a->max_gpus - n_on);
    cs_control_note(c, "bad rate %.4f over %d GPU(s): add %d (rule %s%d)", r, n_ready, add,
                    want == INT_MAX ? "the whole pool, " : "", want == INT_MAX ? a->max_gpus : want);
    for (int g = 0; g < a->n_gpus && add > 0; g++)
      if (cs_control_provision_gpu(c, g, ns_of(a->p->provision_delay_s))) {
        a->provisioned_ns[g] = now;
        add--;
      }
  } else if (rule < 0) {
    int want = MIN(-rule, n_on - a->p->min_gpus), released = 0;
    for (int g = a->n_gpus - 1; g >= 0 && released < want; g--)
      if (cs_control_gpu_life(c, g) == CS_GPU_READY &&
          now - a->provisioned_ns[g] >= ns_of(a->p->hold_s) && cs_control_release_gpu(c, g))
        released++;
    if (want > 0)
      cs_control_note(c, "idle fraction %.4f over %d GPU(s), bad rate %.4f: released %d of %d "
                      "(rule %d; the others are within hold_s of their provisioning)",
                      f, n_ready, r, released, want, -rule);
  }
  for (int g = 0; g < a->n_gpus; g++)
    a->ready_before[g] = cs_control_gpu_life(c, g) == CS_GPU_READY;
  if (a->placed_here)
    follow_gpus(a);
  cs_control_timer(c, now + ns_of(a->p->tick_s), 0);
}

const CsControllerPolicy cs_controller_autoscale = {
  .name = "autoscale",
  .description = "Symphony's autoscaling rule: add N r/(1-r) GPUs at bad rate r, release N f "
                 "at idle fraction f, with a provisioning delay",
  .scales_gpus = TRUE,
  .parse = autoscale_parse,
  .free_params = g_free,
  .check = autoscale_check,
  .describe = autoscale_describe,
  .write_defaults = autoscale_describe,
  .create = autoscale_create,
  .destroy = autoscale_destroy,
  .on_timer = autoscale_on_timer,
};
