/* Private to the "nexus" dispatch policy: its parameters and its planner,
 * Nexus' squishy bin packing (Shen et al., SOSP'19; Algorithm 1 of the
 * Nexus-on-BLOX report), with the rules of nexuslb's Nexus scheduler
 * (ComputeBatchSize, calc_cycle, FindBestBackend).
 *
 * nexus_plan.c plans (which GPU runs which models at which batch) and holds
 * the CsDispatchPolicy hooks that run when a scenario is compiled (parse,
 * check, describe); nexus.c is the online part: frontends, backends, epochs.
 * The planner sees latencies only through NexusCosts, so tests give it hand
 * profiles. */
#ifndef CS_DISPATCH_NEXUS_H
#define CS_DISPATCH_NEXUS_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/dispatch.h"

/* Batches above this are never planned (nexuslb's profiles stop at 499; the
 * other centralized policies' max_batch default is 512). */
#define NEXUS_BATCH_CAP 512
/* The rate a model is planned for when it had no arrival (nexuslb's
 * EpochSchedule: max(rate, 0.1)), so that a quiet model keeps a backend. */
#define NEXUS_MIN_RATE_RPS 0.1

typedef enum { INITIAL_DECLARED, INITIAL_ONE_PER_MODEL, INITIAL_WHOLE_CLUSTER } NexusInitial;

/* Latency of a batch of b of model on a GPU of type (0 .. n_types - 1), ns;
 * INT64_MAX / 8 when the type cannot run the model. */
typedef struct {
  int64_t (*lat_ns)(void *ctx, int model, int type, int b);
  void *ctx;
  int n_models;
  int n_types;
  const int *type_gpus;   /* GPUs of each type */
  const int64_t *slo_ns;  /* per model */
  int64_t reserve_ns;     /* network reserve of the saturate rule */
} NexusCosts;

/* One model on one GPU of the plan. */
typedef struct {
  int model;
  int batch;             /* the backend's batch for it */
  double rate_rps;       /* the rate planned onto this GPU (saturated: its throughput) */
  double max_duty_ns;    /* the longest duty cycle the model allows here */
  double throughput_rps; /* batch / duty cycle: the frontends' weight */
} NexusSession;

/* One GPU of the plan: a saturated model, or residuals sharing its duty cycle. */
typedef struct {
  int type;
  int gpu;               /* assigned by cs_nexus_assign; -1 before */
  gboolean saturated;
  double duty_ns;        /* the shortest max duty of its sessions */
  int64_t exec_ns;       /* sum of l(batch) over its sessions */
  int n_sessions;
  NexusSession *sessions; /* room for every model */
} NexusBin;

typedef struct {
  int n_models, cap;
  int n_bins;
  NexusBin *bins;        /* room for cap (the cluster's GPUs) */
  double *unplaced_rps;  /* per model: rate the GPUs could not take */
  gboolean *no_gpu;      /* per model: SLO too tight for batch 1 on every type */
} NexusPlan;

NexusPlan *cs_nexus_plan_new(int n_models, int n_gpus);
void cs_nexus_plan_free(NexusPlan *p);
void cs_nexus_plan_copy(NexusPlan *dst, const NexusPlan *src);

/* Nexus' largest batch with 2 l(b) <= SLO - reserve on type t (0: none),
 * and its throughput b / l(b) in req/s. */
int cs_nexus_max_batch(const NexusCosts *c, int model, int type);
double cs_nexus_saturated_rps(const NexusCosts *c, int model, int type);

/* Squishy bin packing of the rates (req/s per model) into out; bins get no
 * GPU yet. Order when GPUs run short: saturated instances first, models by
 * rate (highest first, ties by index), then residuals by occupancy. */
void cs_nexus_squishy(const NexusCosts *c, const double *rates_rps, NexusPlan *out);

/* nexuslb's start: one GPU per model, in model order, at its max batch, on
 * the first type that can run it. */
void cs_nexus_one_per_model(const NexusCosts *c, NexusPlan *out);

/* The plan for the declared mix scaled up to what the GPUs hold (every GPU
 * in use): a static schedule provisioned for the cluster. A model no GPU
 * type can run stays out of the scaling (its no_gpu flag is set). */
void cs_nexus_whole_cluster(const NexusCosts *c, const double *rates_rps, NexusPlan *out);

/* Gives each bin a GPU of its type (gpu_type[g] for the n_gpus GPUs),
 * keeping models where prev (or NULL) had them: greedily by the number of
 * models a bin shares with a GPU's previous bin, then in GPU order. */
void cs_nexus_assign(NexusPlan *p, const NexusPlan *prev, const int *gpu_type, int n_gpus);

typedef struct {
  int64_t epoch_ns;
  int64_t reserve_ns;
  int frontends;
  int64_t poll_ns;
  NexusInitial initial;
  gboolean replan;         /* FALSE (default): the initial plan runs the whole run */
  /* Filled by the check when the scenario is compiled, for the summary. */
  char **models, **types;  /* names */
  int n_models, n_types;
  NexusPlan *initial_plan; /* what runs from t = 0 */
  NexusPlan *declared_plan; /* the plan at the declared rates (initial not "declared") */
  double *declared_rps;
} NexusParams;

void *cs_nexus_parse(CsParams *params, void *user_data, GError **error);
void cs_nexus_free_params(void *params);
void cs_nexus_check(void *params, const CsWorld *w, CsWarningList *warnings, void *user_data);
void cs_nexus_describe(const void *params, CsParamsWriter *out);
void cs_nexus_write_defaults(const void *params, CsParamsWriter *out);

/* The cluster's GPU types in order of first appearance: fills gpu_type[g]
 * and returns the number of types; rep[t] is the first GPU of type t. */
int cs_nexus_gpu_types(const CsWorld *w, int *gpu_type, int *rep, int *type_gpus);

extern const CsDispatchPolicy cs_dispatch_nexus;

#endif
