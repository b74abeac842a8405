/* Fluid processor-sharing execution of co-located batches; see gpu_exec.h
 * and docs/gpu-model.md.
 *
 * Cost notes: the running batches sit in one array in start order (so ties
 * and iteration order are deterministic); a change advances and re-rates all
 * of them, O(n). The interference factor F_k is kept as the sum of the
 * combining rule's terms (logs of factors for the product, e^q for the norm)
 * and updated incrementally (O(n) per change instead of O(n^2)); the sum is
 * reset to exactly 0 whenever a batch runs alone, so rounding cannot pile up
 * over a long run. */
#include "gpu_exec.h"

#include <math.h>
#include <string.h>

#include "profiles/share_rule.h"

typedef struct {
  uint64_t id;
  int worker, model, batch;
  int64_t start_ns;
  double remaining;  /* isolated ns left at st->last_ns */
  double cap;        /* MPS cap, (0, 1] */
  double demand;     /* min(d, r): share of the SMs it occupies */
  double util;       /* utilisation for the parametric fallback */
  double fixed;      /* phi, the spec's fixed part, for the fallback's victim term */
  double acc;        /* sum over the others of the combining rule's terms */
  double f;          /* F, from acc */
  double speed;      /* current speed */
  int n_procs;       /* measured process ratios (gpu_exec.h), 0 = none */
  int group;
  double procs_ratio[CS_GPU_PROCS_MAX];
} Job;

struct CsGpuExec {
  CsGpuExecConfig cfg;
  Job *jobs;          /* running, in start order */
  int n, cap;
  int64_t last_ns;    /* time of the last change */
  double d_total;     /* D */
  gboolean has_next;
  int64_t next_ns;
  uint64_t next_id;
  int64_t busy_ns;
  double sm_ns;
};

void cs_gpu_exec_config_init(CsGpuExecConfig *cfg, const CsInterferenceSet *tables)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->mode = CS_GPU_MPS;
  cfg->share_rule = CS_SHARE_RULE_SCALABLE;
  cfg->share_serial = CS_SHARE_RULE_DEFAULT_SERIAL;
  cfg->gamma = 1.0;
  cfg->default_demand = 1.0;
  cfg->tables = tables;
  cfg->use_share_tables = TRUE;
  cfg->interference = TRUE;
  cfg->use_pair_table = TRUE;
  if (tables)
    cfg->fallback = *cs_interference_set_fallback(tables);
  else
    cs_interference_fallback_init(&cfg->fallback);
  cfg->initial_capacity = 8;
}

CsGpuExec *cs_gpu_exec_new(const CsGpuExecConfig *cfg)
{
  g_return_val_if_fail(cfg != NULL, NULL);
  CsGpuExec *st = g_new0(CsGpuExec, 1);
  st->cfg = *cfg;
  st->cap = MAX(cfg->initial_capacity, 1);
  st->jobs = g_new0(Job, st->cap);
  return st;
}

void cs_gpu_exec_free(CsGpuExec *st)
{
  if (!st)
    return;
  g_free(st->jobs);
  g_free(st);
}

static int find_job(const CsGpuExec *st, uint64_t id)
{
  for (int i = 0; i < st->n; i++)
    if (st->jobs[i].id == id)
      return i;
  return -1;
}

gboolean cs_gpu_exec_accepts(const CsGpuExec *st, int worker)
{
  if (st->cfg.mode == CS_GPU_TIME_SLICE)
    return st->n == 0;
  for (int i = 0; i < st->n; i++)
    if (st->jobs[i].worker == worker)
      return FALSE;
  return TRUE;
}

/* The combining rule's term for victim v running next to aggressor a: from
 * the measured factor of the pair, else the fallback's excess (times the
 * pair's scale when the table has one). */
static double pair_term(const CsGpuExec *st, const Job *v, const Job *a)
{
  const CsGpuExecConfig *cfg = &st->cfg;
  double e;
  double measured = cfg->use_pair_table ? cs_interference_pair(cfg->tables, v->model, a->model)
                                        : NAN;
  if (!isnan(measured)) {
    e = measured - 1.0;
  } else {
    CsPairSide sv = { v->batch, v->demand, v->util, v->fixed },
               sa = { a->batch, a->demand, a->util, a->fixed };
    e = cs_interference_fallback_excess(&cfg->fallback, &sv, &sa);
    double k = cfg->use_pair_table ? cs_interference_pair_scale(cfg->tables, v->model, a->model)
                                   : NAN;
    if (!isnan(k))
      e *= k;
  }
  return cs_interference_combine_term(&cfg->fallback, e);
}

const CsInterferenceFallback *cs_gpu_exec_fallback(const CsGpuExec *st)
{
  g_return_val_if_fail(st != NULL, NULL);
  return &st->cfg.fallback;
}

/* Batches of one model that both carry measured process ratios: the
 * measurement stands for everything between them. */
static gboolean same_group(const Job *a, const Job *b)
{
  return a->n_procs > 0 && b->n_procs > 0 && a->group == b->group;
}

/* The measured ratio for p batches of the group running (gpu_exec.h). */
static double procs_ratio(const Job *j, int p)
{
  if (p <= j->n_procs)
    return j->procs_ratio[p - 1];
  double last = j->procs_ratio[j->n_procs - 1];
  double prev = j->n_procs >= 2 ? j->procs_ratio[j->n_procs - 2] : 1.0;
  return MAX(1.0, last + (last - prev) * (p - j->n_procs));
}

/* Moves every running batch forward to now at its current speed. */
static void advance(CsGpuExec *st, int64_t now)
{
  g_assert(now >= st->last_ns); /* time never runs backwards */
  int64_t dt = now - st->last_ns;
  if (dt > 0 && st->n > 0) {
    for (int i = 0; i < st->n; i++)
      st->jobs[i].remaining -= st->jobs[i].speed * (double)dt;
    st->busy_ns += dt;
    st->sm_ns += MIN(st->d_total, 1.0) * (double)dt;
  }
  st->last_ns = now;
}

/* Duration in whole ns, rounded up, of x ns of wall time. A slack of
 * x * 1e-12 keeps floating-point noise (a few ulps) from adding a nanosecond
 * to an exact result such as 8e6 / 0.5; it is capped at half a nanosecond,
 * since from x = 10^12 ns (1000 s) on it would take a whole nanosecond off
 * an exact duration (10^12 came out as 10^12 - 1). Durations int64 cannot
 * hold saturate at INT64_MAX (the caller's sum saturates too), never
 * shorter. */
static int64_t ceil_ns(double x)
{
  if (!(x > 0.0))
    return 0;
  double y = x < 5e11 ? ceil(x * (1.0 - 1e-12)) : ceil(x - 0.5);
  return y >= 9.2e18 ? INT64_MAX : (int64_t)y;
}

/* Recomputes D, every speed and the earliest completion. */
static void rerate(CsGpuExec *st)
{
  double d = 0.0;
  for (int i = 0; i < st->n; i++)
    d += st->jobs[i].demand;
  st->d_total = d;
  double contention = d > 1.0 ? 1.0 / d : 1.0;
  st->has_next = st->n > 0;
  double best = INFINITY;
  int best_i = -1;
  for (int i = 0; i < st->n; i++) {
    Job *j = &st->jobs[i];
    j->f = cs_interference_combine_factor(&st->cfg.fallback, j->acc);
    j->speed = j->cap * contention / j->f;
    if (j->n_procs > 0) {
      /* O(n) per such batch; only MIG instances with measured processes. */
      int p = 1;
      double own = d;
      for (int k = 0; k < st->n; k++)
        if (k != i && same_group(j, &st->jobs[k])) {
          p++;
          own -= st->jobs[k].demand;
        }
      j->speed = j->cap * (own > 1.0 ? 1.0 / own : 1.0) / j->f / procs_ratio(j, p);
    }
    double t = (j->remaining > 0.0 ? j->remaining : 0.0) / j->speed;
    if (t < best) { /* strict: ties go to the batch started first */
      best = t;
      best_i = i;
    }
  }
  if (best_i >= 0) {
    int64_t dur = ceil_ns(best);
    st->next_ns = dur > INT64_MAX - st->last_ns ? INT64_MAX : st->last_ns + dur;
    st->next_id = st->jobs[best_i].id;
  }
}

void cs_gpu_exec_start(CsGpuExec *st, int64_t now, uint64_t job_id, const CsGpuJobSpec *spec)
{
  g_return_if_fail(st != NULL && spec != NULL);
  g_return_if_fail(spec->batch >= 1 && spec->iso_ns >= 1 && spec->worker >= 0);
  g_return_if_fail(cs_gpu_exec_accepts(st, spec->worker));
  g_return_if_fail(find_job(st, job_id) < 0);
  const CsGpuExecConfig *cfg = &st->cfg;
  advance(st, now);

  double d = isnan(spec->demand) ? cfg->default_demand : spec->demand;
  d = CLAMP(d, 1e-6, 1.0);
  double r = spec->share > 0.0 && spec->share < 1.0 ? spec->share : 0.0;
  int model = cfg->tables && spec->model >= 0 && spec->model < cs_interference_set_n_models(
                cfg->tables) ? spec->model : -1;

  Job j = { .id = job_id, .worker = spec->worker, .model = model, .batch = spec->batch,
            .start_ns = now, .remaining = (double)spec->iso_ns, .cap = 1.0, .demand = d,
            .fixed = CLAMP(spec->fixed, 0.0, 1.0) };
  if (cfg->mode == CS_GPU_MPS && r > 0.0) {
    j.demand = MIN(d, r);
    if (cfg->use_share_tables && cs_interference_has_share_table(cfg->tables, model))
      j.cap = 1.0 / cs_interference_share_slowdown(cfg->tables, model, spec->batch, r);
    else if (cfg->share_rule == CS_SHARE_RULE_SCALABLE)
      j.cap = 1.0 / cs_share_rule_ratio(1.0 - j.fixed, cfg->share_serial, r);
    else if (r < d)
      j.cap = pow(r / d, cfg->gamma);
  }
  j.util = cs_interference_util(cfg->tables, model, cfg->fallback.metric, spec->batch,
                                cfg->mode == CS_GPU_MPS ? r : 0.0);
  if (isnan(j.util))
    j.util = cfg->fallback.default_util;
  j.n_procs = spec->group >= 0 ? CLAMP(spec->n_procs, 0, CS_GPU_PROCS_MAX) : 0;
  j.group = spec->group;
  for (int p = 0; p < j.n_procs; p++)
    j.procs_ratio[p] = MAX(spec->procs_ratio[p], 1.0);

  if (st->n == st->cap) {
    st->cap *= 2;
    st->jobs = g_renew(Job, st->jobs, st->cap);
  }
  if (cfg->interference) {
    for (int i = 0; i < st->n; i++) {
      Job *o = &st->jobs[i];
      if (same_group(o, &j))
        continue;
      o->acc += pair_term(st, o, &j);
      j.acc += pair_term(st, &j, o);
    }
  }
  st->jobs[st->n++] = j;
  rerate(st);
}

gboolean cs_gpu_exec_next(const CsGpuExec *st, int64_t *time_ns, uint64_t *job_id)
{
  if (!st->has_next)
    return FALSE;
  if (time_ns)
    *time_ns = st->next_ns;
  if (job_id)
    *job_id = st->next_id;
  return TRUE;
}

gboolean cs_gpu_exec_finish(CsGpuExec *st, int64_t now, uint64_t job_id)
{
  int k = find_job(st, job_id);
  if (k < 0)
    return FALSE;
  advance(st, now);
  Job gone = st->jobs[k];
  memmove(&st->jobs[k], &st->jobs[k + 1], sizeof(Job) * (size_t)(st->n - k - 1));
  st->n--;
  if (st->cfg.interference) {
    if (st->n == 1) {
      st->jobs[0].acc = 0.0;
    } else {
      for (int i = 0; i < st->n; i++)
        if (!same_group(&st->jobs[i], &gone))
          st->jobs[i].acc -= pair_term(st, &st->jobs[i], &gone);
    }
  }
  rerate(st);
  return TRUE;
}

int cs_gpu_exec_n_running(const CsGpuExec *st)
{
  return st->n;
}

void cs_gpu_exec_job(const CsGpuExec *st, int i, CsGpuJobInfo *out)
{
  g_return_if_fail(i >= 0 && i < st->n && out != NULL);
  const Job *j = &st->jobs[i];
  *out = (CsGpuJobInfo){
    .job_id = j->id, .worker = j->worker, .model = j->model, .batch = j->batch,
    .start_ns = j->start_ns, .remaining_ns = j->remaining, .speed = j->speed, .cap = j->cap,
    .slowdown = j->f, .sm_demand = j->demand,
  };
}

double cs_gpu_exec_speed(const CsGpuExec *st, uint64_t job_id)
{
  int k = find_job(st, job_id);
  return k < 0 ? NAN : st->jobs[k].speed;
}

double cs_gpu_exec_sm_use(const CsGpuExec *st)
{
  return st->n > 0 ? MIN(st->d_total, 1.0) : 0.0;
}

int64_t cs_gpu_exec_busy_ns(const CsGpuExec *st)
{
  return st->busy_ns;
}

double cs_gpu_exec_sm_ns(const CsGpuExec *st)
{
  return st->sm_ns;
}
