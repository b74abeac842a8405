/* Nexus' squishy bin packing (the "nexus" policy's parameters are
 * nexus_params.c).
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
