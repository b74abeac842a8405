/* Execution of co-located batches on one GPU: a fluid processor-sharing
 * server (MODEL.md section 3, docs/gpu-model.md).
 *
 * A running batch carries its remaining work in "isolated nanoseconds" (its
 * profiled latency alone on the whole GPU) and progresses at a speed <= 1
 * that depends on the set of batches running with it:
 *
 *   speed_k = cap_k / max(1, D) / F_k
 *
 *   cap_k  MPS cap: latency(b, 1) / latency(b, r_k) from the model's
 *          latency-vs-share table when it has one, else by the share rule:
 *          1 / (1 + (1 - e) (1 - fixed_k) (1/r_k - 1)) (share_rule.h), or
 *          with the power rule (r_k / d_k)^gamma when r_k < d_k, else 1.
 *   D      sum over running batches of min(d_k, r_k) (d_k without a share):
 *          SM contention when the demands exceed the GPU.
 *   F_k    the excesses e = slowdown - 1 of (victim k, aggressor a) over
 *          the other running batches a, combined by the interference
 *          data's rule (norm: 1 + (sum e^q)^(1/q); product: prod (1 + e));
 *          e from the measured pair factor, else the fallback model (times
 *          the pair's scale when the data has one; interference.h).
 *
 * Whenever the set changes (start or finish) every running batch is
 * advanced by speed * elapsed and all speeds are recomputed; the earliest
 * completion is cached. The caller (the engine) keeps one pending event per
 * GPU at cs_gpu_exec_next() and re-arms it after every change.
 *
 * Measured processes: a batch whose spec has n_procs > 0 (a MIG instance
 * whose table measured several processes of its model) runs, while p
 * batches of its group (the same model) with such a spec run at once, at
 * 1 / procs_ratio[p - 1] (beyond n_procs linear in p from the last two
 * entries, at least 1) instead of by contention and interference among
 * them: the measurement holds both. Toward other batches the usual terms
 * act, D counting the batch's own demand and the others' outside its group.
 *
 * Modes: with MPS, batches of different workers run concurrently. Without
 * MPS (time-slicing), they take turns: the GPU accepts a start only when
 * nothing runs, and the caller queues the rest in FIFO order. In both modes
 * one worker runs one batch at a time (MODEL.md section 2.5).
 *
 * Guarantees: deterministic (no randomness, no pointer or hash order; ties
 * between equal completion times go to the batch started first); simulated
 * time stays int64 ns, completion times are rounded up to the next integer
 * ns; a change costs O(running batches) arithmetic and allocates nothing
 * unless more batches run at once than ever before on this GPU.
 * Not thread-safe; one object per GPU. Nothing here is global.
 */
#ifndef CS_GPU_EXEC_H
#define CS_GPU_EXEC_H

#include <glib.h>
#include <stdint.h>

#include "profiles/interference.h"

G_BEGIN_DECLS

/* Process counts a job spec carries measured ratios for. */
#define CS_GPU_PROCS_MAX 8

typedef enum {
  CS_GPU_TIME_SLICE = 0, /* no MPS: one batch at a time, FIFO turns */
  CS_GPU_MPS,            /* MPS: batches of different workers run concurrently */
} CsGpuShareMode;

typedef enum {
  CS_SHARE_RULE_SCALABLE = 0, /* 1 + (1 - e) f (1/r - 1) with f from the profile */
  CS_SHARE_RULE_POWER         /* (r / d)^gamma below the demand d */
} CsGpuShareRule;

typedef struct {
  int sm_count;                     /* SMs of the GPU type; informational, 0 = unknown */
  int64_t memory_bytes;             /* memory of the GPU type; informational, 0 = unknown */
  CsGpuShareMode mode;              /* default CS_GPU_MPS */
  CsGpuShareRule share_rule;        /* for models without a share table; default SCALABLE */
  double share_serial;              /* e of the scalable rule; default
                                       CS_SHARE_RULE_DEFAULT_SERIAL */
  double gamma;                     /* exponent of the power rule (r/d)^gamma; default 1.0 */
  double default_demand;            /* d of a batch whose spec gives NAN; default 1.0 */
  const CsInterferenceSet *tables;  /* share tables and pair factors, or NULL; not owned,
                                       must outlive the object */
  gboolean use_share_tables;        /* use latency-vs-share tables when present; default TRUE */
  gboolean interference;            /* apply memory interference (F_k); default TRUE */
  gboolean use_pair_table;          /* use measured pair factors when present; default TRUE
                                       (FALSE: every pair uses the fallback) */
  CsInterferenceFallback fallback;  /* for pairs missing from tables; default the tables'
                                       fallback, or the built-in one without tables */
  int initial_capacity;             /* batches that fit without growing; default 8 */
} CsGpuExecConfig;

/* Fills cfg with the defaults above for the given tables (may be NULL). */
void cs_gpu_exec_config_init(CsGpuExecConfig *cfg, const CsInterferenceSet *tables);

typedef struct {
  int model;       /* index of the model in cfg->tables (cs_interference_set_find), or -1
                      when the tables do not know it (then no share table, fallback
                      interference with the default utilisation) */
  int batch;       /* batch size, >= 1 */
  int64_t iso_ns;  /* isolated latency of this batch alone on the whole GPU, >= 1 */
  double demand;   /* compute demand d in (0, 1], e.g. WSM / 100; NAN = cfg default */
  double share;    /* MPS share r in (0, 1]; 0 = no share (ignored without MPS) */
  int worker;      /* worker (replica) id, >= 0 */
  double fixed;    /* fraction of iso_ns that does not scale with SMs or batch (copies,
                      fixed costs), 1 - cs_share_scalable_fraction; 0 = all of it scales.
                      Read by the share rule under a share, and as the victim's phi by
                      an interference model with a fixed_exponent */
  int n_procs;     /* entries of procs_ratio; 0 = none */
  int group;       /* with n_procs > 0: batches of one group (the caller's model index,
                      >= 0) are the processes procs_ratio counts */
  double procs_ratio[CS_GPU_PROCS_MAX]; /* measured MIG processes (mig_table.h): [p - 1] is
                      the latency with p batches of this model running at once over one
                      alone; see "Measured processes" above */
} CsGpuJobSpec;

/* What a running batch looks like now (for time series and tests). */
typedef struct {
  uint64_t job_id;
  int worker;
  int model;
  int batch;
  int64_t start_ns;      /* when it started */
  double remaining_ns;   /* isolated work left at the last change */
  double speed;          /* current speed, in (0, 1] */
  double cap;            /* MPS cap part of the speed */
  double slowdown;       /* interference part F (>= 1) */
  double sm_demand;      /* min(d, r): its part of D */
} CsGpuJobInfo;

typedef struct CsGpuExec CsGpuExec;

/* Returns a new idle GPU. cfg is copied; cfg->tables is borrowed. */
CsGpuExec *cs_gpu_exec_new(const CsGpuExecConfig *cfg);
void cs_gpu_exec_free(CsGpuExec *st); /* accepts NULL */

/* TRUE if worker may start a batch now: it has none running, and (without
 * MPS) nothing runs at all. */
gboolean cs_gpu_exec_accepts(const CsGpuExec *st, int worker);

/* Starts a batch at time now (>= the time of the previous change). job_id
 * must not be running. The caller must have checked cs_gpu_exec_accepts();
 * otherwise this is a programming error (critical warning, no effect). */
void cs_gpu_exec_start(CsGpuExec *st, int64_t now, uint64_t job_id, const CsGpuJobSpec *spec);

/* Earliest completion among the running batches: its time (rounded up to an
 * integer ns, >= the last change) and job id. FALSE when idle. O(1). */
gboolean cs_gpu_exec_next(const CsGpuExec *st, int64_t *time_ns, uint64_t *job_id);

/* Ends job_id at time now (normally the time cs_gpu_exec_next() gave) and
 * re-balances the others. Returns FALSE if job_id is not running. */
gboolean cs_gpu_exec_finish(CsGpuExec *st, int64_t now, uint64_t job_id);

/* Running batches, and the i-th in start order (0 <= i < n). */
int cs_gpu_exec_n_running(const CsGpuExec *st);
void cs_gpu_exec_job(const CsGpuExec *st, int i, CsGpuJobInfo *out);

/* The interference model this GPU uses (its config's fallback); owned by st. */
const CsInterferenceFallback *cs_gpu_exec_fallback(const CsGpuExec *st);

/* Current speed of job_id, NAN if it is not running. */
double cs_gpu_exec_speed(const CsGpuExec *st, uint64_t job_id);

/* Fraction of the SMs in use now: min(1, D); 0 when idle. */
double cs_gpu_exec_sm_use(const CsGpuExec *st);

/* Time-weighted integrals up to the last change, for busy fraction and mean
 * SM use: ns with at least one batch running, and the integral of sm_use in
 * ns. Add the span since the last change yourself if you need "up to now". */
int64_t cs_gpu_exec_busy_ns(const CsGpuExec *st);
double cs_gpu_exec_sm_ns(const CsGpuExec *st);

G_END_DECLS

#endif
