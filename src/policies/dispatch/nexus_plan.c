/* Nexus' squishy bin packing, and the "nexus" policy's parameters.
 *
 * Per model and GPU type (l = that type's latency):
 *  - max batch B: the largest b with 2 l(b) <= SLO - network_reserve (a
 *    request waits up to one batch and runs in the next, and nexuslb keeps
 *    2 ms for the network); saturated throughput B / l(B).
 *  - Saturate: while the model's rate left is at least the saturated
 *    throughput of the best free type, it gets a GPU of its own at batch B.
 *  - Residual (rate r left): b = the largest b <= B with (b - 1) / r + l(b)
 *    <= SLO (the batch fills within (b - 1) / r, then runs), max duty cycle
 *    min(SLO - l(b), b / r).
 *  - Merging (calc_cycle): a GPU's duty cycle is the smallest max duty of its
 *    models; each model's batch is ceil(duty x rate) (to 1e-3, as nexuslb's
 *    BatchSizeCeilEps); the GPU is feasible when every batch is at most its
 *    model's B and the batches' latencies sum to at most the duty cycle.
 *    Residuals, by occupancy l(b) / duty (highest first), go to the feasible
 *    GPU, in use or free, with the highest resulting occupancy (nexuslb's
 *    FindBestBackend); a GPU already full (occupancy >= 1) takes nothing.
 * A GPU type on which even a batch of 1 breaks the rule never runs the
 * model. On one GPU type this is Algorithm 1 of the Nexus-on-BLOX report;
 * with several, every figure is the type's own, saturated instances take
 * the type with the highest saturated throughput, and a residual that no
 * GPU can take whole saturates the best free GPU and goes on (nexuslb's
 * FindBestBackend when no backend can absorb the rate). */
#include <math.h>
#include <string.h>

#include "nexus.h"

#define RATE_EPS 1e-3 /* req/s below which a rate is nothing (nexuslb's) */

static inline int64_t lat(const NexusCosts *c, int m, int t, int b)
{
  return c->lat_ns(c->ctx, m, t, b);
}

int cs_nexus_max_batch(const NexusCosts *c, int m, int t)
{
  int64_t budget = c->slo_ns[m] - c->reserve_ns;
  int b = 0;
  while (b < NEXUS_BATCH_CAP && 2 * lat(c, m, t, b + 1) <= budget)
    b++;
  return b;
}

double cs_nexus_saturated_rps(const NexusCosts *c, int m, int t)
{
  int b = cs_nexus_max_batch(c, m, t);
  return b > 0 ? b * 1e9 / (double)lat(c, m, t, b) : 0.0;
}

/* nexuslb's BatchSizeCeilEps(x, 1e-3): x rounded up, unless it is within
 * 1e-3 above a whole number (not 0), so that duty x rate = 4.9999999 or
 * 5.0000001 gives 5. */
static int ceil_eps(double x)
{
  double f = floor(x);
  if (x - f < 1e-3 && f != 0)
    return (int)f;
  return (int)ceil(x);
}

NexusPlan *cs_nexus_plan_new(int n_models, int n_gpus)
{
  NexusPlan *p = g_new0(NexusPlan, 1);
  p->n_models = n_models;
  p->cap = n_gpus;
  p->bins = g_new0(NexusBin, MAX(n_gpus, 1));
  for (int i = 0; i < n_gpus; i++)
    p->bins[i].sessions = g_new0(NexusSession, MAX(n_models, 1));
  p->unplaced_rps = g_new0(double, MAX(n_models, 1));
  p->no_gpu = g_new0(gboolean, MAX(n_models, 1));
  return p;
}

void cs_nexus_plan_free(NexusPlan *p)
{
  if (!p)
    return;
  for (int i = 0; i < p->cap; i++)
    g_free(p->bins[i].sessions);
  g_free(p->bins);
  g_free(p->unplaced_rps);
  g_free(p->no_gpu);
  g_free(p);
}

static void plan_clear(NexusPlan *p)
{
  p->n_bins = 0;
  for (int m = 0; m < p->n_models; m++) {
    p->unplaced_rps[m] = 0;
    p->no_gpu[m] = FALSE;
  }
}

void cs_nexus_plan_copy(NexusPlan *dst, const NexusPlan *src)
{
  g_assert(dst->cap == src->cap && dst->n_models == src->n_models);
  dst->n_bins = src->n_bins;
  for (int i = 0; i < src->n_bins; i++) {
    NexusSession *keep = dst->bins[i].sessions;
    dst->bins[i] = src->bins[i];
    dst->bins[i].sessions = keep;
    memcpy(keep, src->bins[i].sessions, sizeof(NexusSession) * src->bins[i].n_sessions);
  }
  memcpy(dst->unplaced_rps, src->unplaced_rps, sizeof(double) * src->n_models);
  memcpy(dst->no_gpu, src->no_gpu, sizeof(gboolean) * src->n_models);
}

/* ---- building blocks -------------------------------------------------------- */

/* One packing: free GPUs of each type, counted down as bins take them, and
 * each model's max batch and saturated throughput per type (computed once:
 * the merging loops ask for them often). */
typedef struct {
  const NexusCosts *c;
  NexusPlan *p;
  int *free_gpus;
  int *maxb;   /* [model x n_types + type] */
  double *tp;  /* the same, req/s */
} Packer;

static void packer_init(Packer *k, const NexusCosts *c, NexusPlan *p)
{
  int n = MAX(c->n_models * c->n_types, 1);
  *k = (Packer){ .c = c, .p = p, .free_gpus = g_new(int, MAX(c->n_types, 1)),
                 .maxb = g_new(int, n), .tp = g_new(double, n) };
  memcpy(k->free_gpus, c->type_gpus, sizeof(int) * c->n_types);
  for (int m = 0; m < c->n_models; m++)
    for (int t = 0; t < c->n_types; t++) {
      k->maxb[m * c->n_types + t] = cs_nexus_max_batch(c, m, t);
      k->tp[m * c->n_types + t] = cs_nexus_saturated_rps(c, m, t);
    }
}

static void packer_clear(Packer *k)
{
  g_free(k->free_gpus);
  g_free(k->maxb);
  g_free(k->tp);
}

static inline int maxb(const Packer *k, int m, int t)
{
  return k->maxb[m * k->c->n_types + t];
}

static inline double sat_rps(const Packer *k, int m, int t)
{
  return k->tp[m * k->c->n_types + t];
}

/* The free type with the highest saturated throughput for m (-1: none). */
static int best_free_type(const Packer *k, int m)
{
  int best = -1;
  double best_tp = 0;
  for (int t = 0; t < k->c->n_types; t++) {
    double tp = sat_rps(k, m, t);
    if (k->free_gpus[t] > 0 && tp > best_tp) {
      best = t;
      best_tp = tp;
    }
  }
  return best;
}

static void add_saturated(Packer *k, int m, int t)
{
  NexusBin *bin = &k->p->bins[k->p->n_bins++];
  int b = maxb(k, m, t);
  k->free_gpus[t]--;
  bin->type = t;
  bin->gpu = -1;
  bin->saturated = TRUE;
  bin->exec_ns = lat(k->c, m, t, b);
  bin->duty_ns = (double)bin->exec_ns;
  bin->n_sessions = 1;
  bin->sessions[0] = (NexusSession){ .model = m, .batch = b, .max_duty_ns = bin->duty_ns,
                                     .rate_rps = b * 1e9 / bin->duty_ns,
                                     .throughput_rps = b * 1e9 / bin->duty_ns };
}

/* ComputeBatchSize for a residual rate r of m on type t: FALSE when t cannot
 * hold it as a residual (its saturated throughput is below r, or not even
 * a batch of 1 fills and runs within the SLO). */
static gboolean residual(const Packer *k, int m, int t, double r, NexusSession *s)
{
  const NexusCosts *c = k->c;
  int big = maxb(k, m, t);
  if (big == 0 || r >= sat_rps(k, m, t))
    return FALSE;
  double slo = (double)c->slo_ns[m];
  int b = 0;
  while (b < big && (double)b * 1e9 / r + (double)lat(c, m, t, b + 1) <= slo)
    b++;
  if (b == 0)
    return FALSE;
  *s = (NexusSession){ .model = m, .batch = b, .rate_rps = r,
                       .max_duty_ns = MIN(slo - (double)lat(c, m, t, b), b * 1e9 / r) };
  s->throughput_rps = b * 1e9 / s->max_duty_ns;
  return TRUE;
}

/* calc_cycle over sessions (n of them, on type t): sets each batch, the
 * throughput, the bin's duty and exec; FALSE when overloaded. */
static gboolean calc_cycle(const Packer *k, int t, NexusSession *s, int n, double *duty,
                           int64_t *exec)
{
  const NexusCosts *c = k->c;
  double d = s[0].max_duty_ns;
  for (int i = 1; i < n; i++)
    d = MIN(d, s[i].max_duty_ns);
  int64_t sum = 0;
  gboolean ok = TRUE;
  for (int i = 0; i < n; i++) {
    int b = ceil_eps(d * s[i].rate_rps * 1e-9);
    int big = maxb(k, s[i].model, t);
    if (b < 1 || b > big) {
      ok = FALSE;
      b = big;
    }
    s[i].batch = b;
    s[i].throughput_rps = b * 1e9 / d;
    sum += lat(c, s[i].model, t, MAX(b, 1));
  }
  *duty = d;
  *exec = sum;
  return ok && (double)sum <= d;
}

/* Places a residual rate r of m; returns the rate left unplaced. */
static double place_residual(Packer *k, int m, double r)
{
  const NexusCosts *c = k->c;
  NexusPlan *p = k->p;
  NexusSession *tmp = g_new(NexusSession, c->n_models + 1);
  double left = r;
  while (left > RATE_EPS) {
    int best_bin = -1, best_type = -1;
    double best_occ = -1;
    /* GPUs in use: merge into a GPU that is not full. */
    for (int i = 0; i < p->n_bins; i++) {
      NexusBin *bin = &p->bins[i];
      NexusSession s;
      if (bin->saturated || (double)bin->exec_ns >= bin->duty_ns ||
          !residual(k, m, bin->type, left, &s))
        continue;
      memcpy(tmp, bin->sessions, sizeof(NexusSession) * bin->n_sessions);
      tmp[bin->n_sessions] = s;
      double duty;
      int64_t exec;
      if (calc_cycle(k, bin->type, tmp, bin->n_sessions + 1, &duty, &exec) &&
          (double)exec / duty > best_occ) {
        best_occ = (double)exec / duty;
        best_bin = i;
      }
    }
    /* A free GPU of each type. */
    for (int t = 0; t < c->n_types; t++) {
      NexusSession s;
      double duty;
      int64_t exec;
      if (k->free_gpus[t] == 0 || !residual(k, m, t, left, &s) ||
          !calc_cycle(k, t, &s, 1, &duty, &exec))
        continue;
      if ((double)exec / duty > best_occ) {
        best_occ = (double)exec / duty;
        best_bin = -1;
        best_type = t;
      }
    }
    if (best_bin < 0 && best_type < 0) {
      /* No GPU takes it whole: a free GPU of a slower type (mixed clusters
       * only) runs it saturated and the rest goes on; else it is short. */
      int t = best_free_type(k, m);
      if (t < 0)
        break;
      add_saturated(k, m, t);
      left -= p->bins[p->n_bins - 1].sessions[0].throughput_rps;
      continue;
    }
    NexusBin *bin;
    NexusSession s;
    if (best_bin >= 0) {
      bin = &p->bins[best_bin];
    } else {
      bin = &p->bins[p->n_bins++];
      k->free_gpus[best_type]--;
      *bin = (NexusBin){ .type = best_type, .gpu = -1, .sessions = bin->sessions };
    }
    residual(k, m, bin->type, left, &s);
    bin->sessions[bin->n_sessions++] = s;
    calc_cycle(k, bin->type, bin->sessions, bin->n_sessions, &bin->duty_ns, &bin->exec_ns);
    left = 0;
  }
  g_free(tmp);
  return MAX(left, 0.0);
}

/* ---- the packing ------------------------------------------------------------- */

typedef struct {
  int model;
  double key;
} Order;

static gint by_key_desc(gconstpointer a, gconstpointer b)
{
  const Order *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return x->model - y->model;
}

void cs_nexus_squishy(const NexusCosts *c, const double *rates_rps, NexusPlan *out)
{
  plan_clear(out);
  int n = c->n_models;
  Packer k;
  packer_init(&k, c, out);
  double *left = g_new0(double, MAX(n, 1));
  gboolean *short_of_gpus = g_new0(gboolean, MAX(n, 1));
  Order *order = g_new(Order, MAX(n, 1));
  for (int m = 0; m < n; m++) {
    left[m] = rates_rps[m];
    order[m] = (Order){ .model = m, .key = rates_rps[m] };
    gboolean any = FALSE;
    for (int t = 0; t < c->n_types; t++)
      any = any || maxb(&k, m, t) > 0;
    out->no_gpu[m] = !any;
  }
  /* Saturate: models by rate, highest first (nexuslb allocates unassigned
   * workloads in that order), so that under a shortfall the GPUs go to
   * whole saturated instances of the busiest models first. */
  qsort(order, n, sizeof(Order), by_key_desc);
  for (int i = 0; i < n; i++) {
    int m = order[i].model;
    if (out->no_gpu[m])
      continue;
    for (;;) {
      int t = best_free_type(&k, m);
      if (t < 0) {
        /* Out of GPUs: a rate a free GPU would run saturated is short. */
        double best = 0;
        for (int u = 0; u < c->n_types; u++)
          best = MAX(best, sat_rps(&k, m, u));
        short_of_gpus[m] = left[m] >= best;
        break;
      }
      double tp = sat_rps(&k, m, t);
      if (left[m] < tp)
        break;
      add_saturated(&k, m, t);
      left[m] -= tp;
    }
  }
  /* Residuals by occupancy on the model's best type, highest first. */
  int n_res = 0;
  for (int m = 0; m < n; m++) {
    if (out->no_gpu[m] || short_of_gpus[m] || left[m] <= RATE_EPS)
      continue;
    int home = 0;
    for (int t = 1; t < c->n_types; t++)
      if (sat_rps(&k, m, t) > sat_rps(&k, m, home))
        home = t;
    NexusSession s;
    double occ = 0;
    if (residual(&k, m, home, left[m], &s))
      occ = (double)lat(c, m, home, s.batch) / s.max_duty_ns;
    order[n_res++] = (Order){ .model = m, .key = occ };
  }
  qsort(order, n_res, sizeof(Order), by_key_desc);
  for (int i = 0; i < n_res; i++) {
    int m = order[i].model;
    left[m] = place_residual(&k, m, left[m]);
  }
  for (int m = 0; m < n; m++)
    out->unplaced_rps[m] = left[m] > RATE_EPS ? left[m] : 0.0;
  g_free(order);
  g_free(short_of_gpus);
  g_free(left);
  packer_clear(&k);
}

void cs_nexus_one_per_model(const NexusCosts *c, NexusPlan *out)
{
  plan_clear(out);
  Packer k;
  packer_init(&k, c, out);
  for (int m = 0; m < c->n_models; m++) {
    gboolean any = FALSE;
    for (int t = 0; t < c->n_types; t++)
      any = any || maxb(&k, m, t) > 0;
    out->no_gpu[m] = !any;
    int t = best_free_type(&k, m);
    if (t >= 0)
      add_saturated(&k, m, t);
  }
  packer_clear(&k);
}

/* The declared mix scaled to the largest load the GPUs hold whole: the
 * largest s for which squishy(s x rates) leaves nothing unplaced, by
 * bisection. The feasible loads end RATE_EPS above the load that saturates
 * the GPUs exactly, so converging from below lands on the saturated plan
 * (for one model: every GPU at its max batch, nexuslb's static schedule). */
void cs_nexus_whole_cluster(const NexusCosts *c, const double *rates_rps, NexusPlan *out)
{
  int n = c->n_models;
  double *scaled = g_new0(double, MAX(n, 1));
  double lo = 0, hi = 1;
  gboolean bounded = FALSE;
  for (int i = 0; i < 200; i++) {
    double s = bounded ? 0.5 * (lo + hi) : hi;
    for (int m = 0; m < n; m++)
      scaled[m] = s * rates_rps[m];
    cs_nexus_squishy(c, scaled, out);
    gboolean fits = TRUE;
    for (int m = 0; m < n; m++)
      fits = fits && (out->no_gpu[m] || out->unplaced_rps[m] == 0);
    if (fits)
      lo = s;
    else
      hi = s;
    if (!fits)
      bounded = TRUE;
    else if (!bounded)
      hi *= 2;
    if (bounded && hi - lo <= 1e-12 * hi)
      break;
  }
  for (int m = 0; m < n; m++)
    scaled[m] = lo * rates_rps[m];
  cs_nexus_squishy(c, scaled, out);
  g_free(scaled);
}

/* ---- GPUs for the bins ---------------------------------------------------------- */

static int shared_models(const NexusBin *a, const NexusBin *b)
{
  int n = 0;
  for (int i = 0; i < a->n_sessions; i++)
    for (int j = 0; j < b->n_sessions; j++)
      n += a->sessions[i].model == b->sessions[j].model;
  return n;
}

void cs_nexus_assign(NexusPlan *p, const NexusPlan *prev, const int *gpu_type, int n_gpus)
{
  int *prev_bin = g_new(int, MAX(n_gpus, 1));
  gboolean *used = g_new0(gboolean, MAX(n_gpus, 1));
  for (int g = 0; g < n_gpus; g++)
    prev_bin[g] = -1;
  for (int i = 0; prev && i < prev->n_bins; i++)
    if (prev->bins[i].gpu >= 0)
      prev_bin[prev->bins[i].gpu] = i;
  for (int i = 0; i < p->n_bins; i++)
    p->bins[i].gpu = -1;
  /* Greedy: the (bin, GPU) pair sharing the most models first; ties to the
   * lower bin, then the lower GPU. */
  for (;;) {
    int best = 0, bi = -1, bg = -1;
    for (int i = 0; i < p->n_bins; i++) {
      if (p->bins[i].gpu >= 0)
        continue;
      for (int g = 0; g < n_gpus; g++) {
        if (used[g] || prev_bin[g] < 0 || gpu_type[g] != p->bins[i].type)
          continue;
        int s = shared_models(&p->bins[i], &prev->bins[prev_bin[g]]);
        if (s > best) {
          best = s;
          bi = i;
          bg = g;
        }
      }
    }
    if (bi < 0)
      break;
    p->bins[bi].gpu = bg;
    used[bg] = TRUE;
  }
  for (int i = 0; i < p->n_bins; i++)
    for (int g = 0; g < n_gpus && p->bins[i].gpu < 0; g++)
      if (!used[g] && gpu_type[g] == p->bins[i].type) {
        p->bins[i].gpu = g;
        used[g] = TRUE;
      }
  g_free(used);
  g_free(prev_bin);
}

int cs_nexus_gpu_types(const CsWorld *w, int *gpu_type, int *rep, int *type_gpus)
{
  int n_types = 0;
  for (int g = 0; g < cs_world_n_gpus(w); g++) {
    int t = 0;
    while (t < n_types && strcmp(cs_world_gpu_type(w, rep[t]), cs_world_gpu_type(w, g)) != 0)
      t++;
    if (t == n_types) {
      rep[n_types] = g;
      type_gpus[n_types++] = 0;
    }
    type_gpus[t]++;
    gpu_type[g] = t;
  }
  return n_types;
}

/* ---- parameters ------------------------------------------------------------------ */

void *cs_nexus_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy",  "epoch_s",      "network_reserve_ms",
                                      "frontends", "poll_us",    "initial_plan",
                                      "replan",  NULL };
  static const char *const initials[] = { "declared", "one_gpu_per_model", "whole_cluster",
                                          NULL };
  /* Symphony's text: the scheduler re-plans every 10 s (when replan is
   * on). nexuslb: 2 ms of network kept out of the saturate rule, a backend
   * polls every 50 us, one frontend (at most 1000: each keeps a round-robin
   * state per model and GPU).
   *
   * The default plan is a static one for the whole cluster, never
   * recomputed: Nexus as Symphony's experiments ran it (issue 31). nexuslb's
   * run_nexus takes a static schedule (its "schedule" key, added the day
   * after run_nexus first ran; static backends are never re-planned), and
   * without one it would start each model on one GPU (LoadModel with no
   * estimated workload) and re-plan only after 30 one-second rate samples.
   * Symphony's paper reads the same way: its Figure 2 (right) has Nexus
   * keeping every GPU busy at 3K req/s, before its peak goodput, which a
   * plan packed to the load does not do (it leaves GPUs idle); section 5
   * blames Nexus' "static partitioning of models to backends" for bursty
   * loads; Table 2 compares Nexus with N b / (alpha b + beta) for all N = 8
   * GPUs. Nexus' own epoch planning (initial_plan "declared", replan true)
   * plans from the last rate with no headroom, as the real Nexus does, so a
   * saturated GPU gets its full throughput and Poisson bursts make it drop
   * about 2 % (docs/dispatch.md). */
  double epoch_s = 10.0, reserve_ms = 2.0, poll_us = 50.0;
  int frontends = 1, initial = INITIAL_WHOLE_CLUSTER;
  gboolean replan = FALSE;
  cs_params_doc(params, "epoch_s", "with replan: re-plan every epoch (refused without replan true)");
  cs_params_doc(params, "network_reserve_ms", "kept out of the saturate rule (nexuslb's network_latency_us)");
  cs_params_doc(params, "frontends", "frontends, each with its own round-robin state");
  cs_params_doc(params, "poll_us", "an idle backend looks for work this often");
  cs_params_doc(params, "initial_plan", "the plan at t = 0: whole_cluster (declared mix scaled to the GPUs), declared (the clients' rates) or one_gpu_per_model");
  cs_params_doc(params, "replan", "true: Nexus' epoch scheduler re-plans every epoch_s from the observed rates; false: the initial plan runs throughout");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "epoch_s", FALSE, 0.001, 1e6, &epoch_s, cs_error_list_slot(problems));
    cs_params_double(params, "network_reserve_ms", FALSE, 0.0, 1e6, &reserve_ms,
                     cs_error_list_slot(problems));
    cs_params_int(params, "frontends", FALSE, 1, 1000, &frontends, cs_error_list_slot(problems));
    cs_params_double(params, "poll_us", FALSE, 0.001, 1e9, &poll_us, cs_error_list_slot(problems));
    cs_params_choice(params, "initial_plan", FALSE, initials, &initial,
                     cs_error_list_slot(problems));
    cs_params_bool(params, "replan", FALSE, &replan, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  if (!replan && cs_params_has(params, "epoch_s")) {
    cs_params_fail(params, error,
                   "\"epoch_s\" sets how often the plan is recomputed; with \"replan\": false "
                   "(the default) it would be ignored: set \"replan\": true to re-plan");
    return NULL;
  }
  NexusParams *p = g_new0(NexusParams, 1);
  p->epoch_ns = llround(epoch_s * 1e9);
  p->reserve_ns = llround(reserve_ms * 1e6);
  p->frontends = frontends;
  p->poll_ns = MAX(llround(poll_us * 1e3), 1);
  p->initial = (NexusInitial)initial;
  p->replan = replan;
  return p;
}

static void clear_derived(NexusParams *p)
{
  for (int m = 0; m < p->n_models; m++)
    g_free(p->models[m]);
  for (int t = 0; t < p->n_types; t++)
    g_free(p->types[t]);
  g_free(p->models);
  g_free(p->types);
  g_free(p->declared_rps);
  cs_nexus_plan_free(p->initial_plan);
  cs_nexus_plan_free(p->declared_plan);
  p->models = p->types = NULL;
  p->declared_rps = NULL;
  p->initial_plan = p->declared_plan = NULL;
  p->n_models = p->n_types = 0;
}

void cs_nexus_free_params(void *params)
{
  if (!params)
    return;
  clear_derived(params);
  g_free(params);
}

typedef struct {
  const CsWorld *w;
  const int *rep;
} WorldCosts;

static int64_t world_lat(void *ctx, int m, int t, int b)
{
  const WorldCosts *wc = ctx;
  const CsModelProfile *prof = cs_world_profile(wc->w, m, wc->rep[t]);
  return prof ? MIN(cs_model_profile_exec_ns(prof, b), INT64_MAX / 8) : INT64_MAX / 8;
}

/* The plan at the declared rates, and the one that runs from t = 0, for the
 * summary; a warning per model the GPUs cannot hold. Runtime plans follow
 * the observed rates and are not known here: the warnings speak of the
 * declared rates, and a model left without a backend at run time shows in
 * its unserved count. */
void cs_nexus_check(void *params, const CsWorld *w, CsWarningList *warnings, void *user_data)
{
  (void)user_data;
  NexusParams *p = params;
  clear_derived(p);
  int n_models = cs_world_n_models(w), n_gpus = cs_world_n_gpus(w);
  int *gpu_type = g_new0(int, MAX(n_gpus, 1)), *rep = g_new0(int, MAX(n_gpus, 1));
  int *type_gpus = g_new0(int, MAX(n_gpus, 1));
  int64_t *slo = g_new0(int64_t, MAX(n_models, 1));
  p->n_types = cs_nexus_gpu_types(w, gpu_type, rep, type_gpus);
  p->n_models = n_models;
  p->models = g_new0(char *, MAX(n_models, 1));
  p->types = g_new0(char *, MAX(p->n_types, 1));
  p->declared_rps = g_new0(double, MAX(n_models, 1));
  for (int t = 0; t < p->n_types; t++)
    p->types[t] = g_strdup(cs_world_gpu_type(w, rep[t]));
  for (int m = 0; m < n_models; m++) {
    p->models[m] = g_strdup(cs_world_model_name(w, m));
    p->declared_rps[m] = MAX(cs_world_rate_rps(w, m), NEXUS_MIN_RATE_RPS);
    slo[m] = cs_world_slo_ns(w, m);
  }
  WorldCosts wc = { .w = w, .rep = rep };
  NexusCosts c = { .lat_ns = world_lat, .ctx = &wc, .n_models = n_models,
                   .n_types = p->n_types, .type_gpus = type_gpus, .slo_ns = slo,
                   .reserve_ns = p->reserve_ns };
  NexusPlan *declared = cs_nexus_plan_new(n_models, n_gpus);
  cs_nexus_squishy(&c, p->declared_rps, declared);
  cs_nexus_assign(declared, NULL, gpu_type, n_gpus);
  if (p->initial == INITIAL_DECLARED) {
    p->initial_plan = declared;
  } else {
    p->declared_plan = declared;
    p->initial_plan = cs_nexus_plan_new(n_models, n_gpus);
    if (p->initial == INITIAL_ONE_PER_MODEL)
      cs_nexus_one_per_model(&c, p->initial_plan);
    else
      cs_nexus_whole_cluster(&c, p->declared_rps, p->initial_plan);
    cs_nexus_assign(p->initial_plan, NULL, gpu_type, n_gpus);
  }
  /* Without re-planning only the initial plan ever runs. */
  const NexusPlan *converged = p->replan ? declared : p->initial_plan;
  for (int m = 0; m < n_models; m++) {
    double at_start = 0, converged_rps = 0;
    for (int i = 0; i < p->initial_plan->n_bins; i++)
      for (int j = 0; j < p->initial_plan->bins[i].n_sessions; j++)
        if (p->initial_plan->bins[i].sessions[j].model == m)
          at_start += p->initial_plan->bins[i].sessions[j].throughput_rps;
    for (int i = 0; i < converged->n_bins; i++)
      for (int j = 0; j < converged->bins[i].n_sessions; j++)
        if (converged->bins[i].sessions[j].model == m)
          converged_rps += converged->bins[i].sessions[j].throughput_rps;
    if (declared->no_gpu[m]) {
      int64_t best = INT64_MAX;
      for (int t = 0; t < p->n_types; t++)
        best = MIN(best, world_lat(&wc, m, t, 1));
      cs_warning_add(warnings, "nexus_no_backend", p->models[m], -1,
                     "a batch of 1 takes %.3f ms on the fastest GPU type, more than half of its "
                     "SLO less the network reserve ((%.3f - %.3f) / 2 ms), Nexus' rule for a "
                     "batch: no GPU runs it and its requests are counted unserved",
                     best / 1e6, slo[m] / 1e6, p->reserve_ns / 1e6);
      continue;
    }
    if (converged_rps < p->declared_rps[m] - 1e-3)
      cs_warning_add(warnings, "nexus_gpu_shortfall", p->models[m], -1,
                     "at its declared %.1f req/s, squishy bin packing needs more GPUs than the "
                     "cluster's %d: the %s plan gives it %.1f req/s%s (saturated GPUs go first, "
                     "to the models with the highest rates)",
                     p->declared_rps[m], n_gpus, p->replan ? "epochs'" : "static",
                     converged_rps,
                     converged_rps > 0 ? "" : ", no backend: its requests are counted unserved");
    if (at_start == 0 && converged_rps > 0)
      cs_warning_add(warnings, "nexus_no_backend", p->models[m], -1,
                     "the initial plan finds no GPU left for it among the cluster's %d: its "
                     "requests until the first epoch (%.3f s) are counted unserved",
                     n_gpus, p->epoch_ns / 1e9);
  }
  g_free(slo);
  g_free(type_gpus);
  g_free(rep);
  g_free(gpu_type);
}

void cs_nexus_write_defaults(const void *params, CsParamsWriter *out)
{
  const NexusParams *p = params;
  if (p->replan)
    cs_params_write_double(out, "epoch_s", p->epoch_ns / 1e9);
  cs_params_write_double(out, "network_reserve_ms", p->reserve_ns / 1e6);
  cs_params_write_int(out, "frontends", p->frontends);
  cs_params_write_double(out, "poll_us", p->poll_ns / 1e3);
  static const char *const initials[] = { "declared", "one_gpu_per_model", "whole_cluster" };
  cs_params_write_string(out, "initial_plan", initials[p->initial]);
  cs_params_write_bool(out, "replan", p->replan);
}

static void describe_plan(const NexusParams *p, const NexusPlan *plan, const char *key,
                          CsParamsWriter *out)
{
  cs_params_write_begin_object(out, key);
  cs_params_write_begin_array(out, "gpus");
  for (int g = 0; g < plan->cap; g++)
    for (int i = 0; i < plan->n_bins; i++) {
      const NexusBin *bin = &plan->bins[i];
      if (bin->gpu != g)
        continue;
      cs_params_write_begin_object(out, NULL);
      cs_params_write_int(out, "gpu", g);
      cs_params_write_string(out, "gpu_type", p->types[bin->type]);
      cs_params_write_string(out, "kind", bin->saturated ? "saturated" : "residual");
      cs_params_write_double(out, "duty_ms", bin->duty_ns / 1e6);
      cs_params_write_double(out, "occupancy", (double)bin->exec_ns / bin->duty_ns);
      cs_params_write_begin_array(out, "models");
      for (int j = 0; j < bin->n_sessions; j++) {
        const NexusSession *s = &bin->sessions[j];
        cs_params_write_begin_object(out, NULL);
        cs_params_write_string(out, "model", p->models[s->model]);
        cs_params_write_int(out, "batch", s->batch);
        cs_params_write_double(out, "throughput_rps", s->throughput_rps);
        cs_params_write_end(out);
      }
      cs_params_write_end(out);
      cs_params_write_end(out);
    }
  cs_params_write_end(out);
  cs_params_write_begin_array(out, "unplaced");
  for (int m = 0; m < plan->n_models; m++)
    if (plan->unplaced_rps[m] > 0 || plan->no_gpu[m]) {
      cs_params_write_begin_object(out, NULL);
      cs_params_write_string(out, "model", p->models[m]);
      cs_params_write_double(out, "rate_rps", plan->unplaced_rps[m]);
      cs_params_write_end(out);
    }
  cs_params_write_end(out);
  cs_params_write_end(out);
}

void cs_nexus_describe(const void *params, CsParamsWriter *out)
{
  const NexusParams *p = params;
  cs_nexus_write_defaults(params, out);
  if (p->replan)
    cs_params_write_string(out, "rate_estimate", "arrivals in the last epoch / epoch_s");
  if (p->initial_plan) {
    describe_plan(p, p->initial_plan, "plan_at_start", out);
    if (p->declared_plan)
      describe_plan(p, p->declared_plan, "plan_at_declared_rates", out);
  }
}
