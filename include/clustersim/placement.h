/* libclustersim: placement policies, the static decision of which model
 * replicas run on which GPU, at which batch size and MPS share.
 *
 *   place(problem: models with rate and SLO, GPUs, profiles, GPU model)
 *     -> placement: replicas (model, GPU, batch, share), the policy's expected
 *        goodput per model, and a log of its choices.
 *
 * The simulator then executes the placement with its own GPU model; the
 * expected goodput is the policy's prediction and is reported next to the
 * simulated one. Every built-in policy (dedicated, usher, milp, igniter, ...)
 * is a CsPlacementPolicy like the ones a user registers (registry.h), and
 * sees nothing more than this header, params.h and profiles.h.
 */
#ifndef CLUSTERSIM_PLACEMENT_H
#define CLUSTERSIM_PLACEMENT_H

#include "core.h"
#include "params.h"
#include "profiles.h"

G_BEGIN_DECLS

/* ---- The problem ---------------------------------------------------------------- */

/* One model the cluster must serve (one per client of the scenario). */
typedef struct {
  const char *name; /* model name as in the profiles */
  double rate_rps;  /* rate to plan for: the client's planned_rate, else its rate */
  double slo_ms;    /* end-to-end latency objective */
} CsPlacementModel;

/* One GPU of the cluster, in cluster order (index = GPU id). A MIG instance
 * appears as a GPU of its physical GPU's type: its SM and memory fractions
 * are not shown (the framework checks memory against its fraction). */
typedef struct {
  const char *gpu_type; /* name of a GPU type in the profile set */
  int node;             /* node index the GPU belongs to */
} CsPlacementGpu;

/* Interference tables of the scenario (cluster.interference); opaque. */
typedef struct CsInterferenceSet CsInterferenceSet;

/* How the simulator will execute the placement (the scenario's "cluster"
 * settings), for a policy that predicts co-location itself. */
typedef struct {
  gboolean mps;                          /* co-located replicas share SMs under MPS */
  double mps_gamma;                      /* exponent of the power share rule (r/d)^gamma, > 0 */
  const CsInterferenceSet *interference; /* cluster.interference, or NULL */
  const char *interference_name;         /* as the scenario names it, for logs; or NULL */
  gboolean mps_share_power;              /* cluster.mps_share_rule "power" (FALSE: the
                                            default "scalable", docs/gpu-model.md) */
} CsPlacementGpuModel;

/* The scenario a problem comes from, to simulate candidates on (opaque). */
typedef struct CsPlacementSimulator CsPlacementSimulator;

typedef struct {
  const CsPlacementModel *models;       /* n_models entries, scenario order */
  int n_models;
  const CsPlacementGpu *gpus;           /* n_gpus entries */
  int n_gpus;
  const CsProfileSet *profiles;         /* the scenario's profiles */
  const CsPlacementGpuModel *gpu_model; /* never NULL when the framework calls place */
  /* The scenario being compiled, for cs_placement_simulate and
   * cs_placement_problem_place; NULL when the placement is computed outside
   * a scenario's compilation (a controller's re-placement, a policy run from
   * code), or inside one of those calls (no recursion). */
  const CsPlacementSimulator *simulator;
} CsPlacementProblem;

/* ---- The placement ---------------------------------------------------------------- */

typedef struct {
  int model;        /* index into the problem's models */
  int gpu;          /* index into the problem's GPUs */
  int batch;        /* target batch size, >= 1 */
  double mps_share; /* fraction of the GPU's SMs in (0, 1], or 0 for no MPS limit */
} CsReplica;

/* A placement; every function below refuses a NULL one as GLib refuses a
 * broken precondition (a critical warning; 0, -1, NaN or NULL returned,
 * nothing done). */
typedef struct CsPlacement CsPlacement;

/* Returns a new empty placement for n_models models (expected goodput 0 for
 * each, no Creq metric, GPUs needed unknown). Free with cs_placement_free. */
CS_API CsPlacement *cs_placement_new(int n_models);
/* Frees it; accepts NULL. */
CS_API void cs_placement_free(CsPlacement *p);

/* Appends a replica. The framework checks every replica after place()
 * returns (model and GPU in range, batch >= 1, share in [0, 1], a profile for
 * the model on the GPU's type) and rejects a placement that breaks one. */
CS_API void cs_placement_add(CsPlacement *p, int model, int gpu, int batch, double mps_share);

/* Removes replica i (0 <= i < cs_placement_n_replicas), keeping the order of
 * the others: for a policy that plans more than the cluster holds and then
 * drops what does not fit. */
CS_API void cs_placement_remove_replica(CsPlacement *p, int i);

/* Sets the policy's own prediction of a model's goodput in req/s (>= 0). The
 * framework caps it at the model's rate and says so in the log. */
CS_API void cs_placement_set_expected_goodput(CsPlacement *p, int model, double rps);

/* Appends printf-style text to the policy's log (shown by `clustersim place`
 * and stored in the run's summary). */
CS_API void cs_placement_log(CsPlacement *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Records the Creq metric the policy used (shown by `clustersim place`). */
CS_API void cs_placement_set_creq_metric(CsPlacement *p, CsCreqMetric metric);

/* Records how many GPUs the policy needs to serve every model (for policies
 * that minimise GPUs). */
CS_API void cs_placement_set_gpus_needed(CsPlacement *p, int gpus);

/* Readers. Replicas are in the order the policy added them; replica i is NULL
 * when i is out of range. expected_total is the sum over the models. The
 * metric is -1 and gpus_needed -1 when the policy did not set them. */
CS_API int cs_placement_n_models(const CsPlacement *p);
CS_API int cs_placement_n_replicas(const CsPlacement *p);
CS_API const CsReplica *cs_placement_replica(const CsPlacement *p, int i);
CS_API double cs_placement_expected_goodput(const CsPlacement *p, int model);
CS_API double cs_placement_expected_total(const CsPlacement *p);
CS_API const char *cs_placement_log_text(const CsPlacement *p);
CS_API int cs_placement_creq_metric(const CsPlacement *p);
CS_API int cs_placement_gpus_needed(const CsPlacement *p);

/* ---- Simulating candidates (placements searched by simulation) ---------------- */

/* What a simulation of a candidate gave: means over its seeds. */
typedef struct {
  double goodput_rps;         /* total goodput of the models, req/s */
  double bad_rate;            /* measured requests not answered within their SLO, over all */
  int gpus_used;              /* GPUs holding a replica of the candidate */
  double *model_goodput_rps;  /* NULL, or n_models entries the call fills per model */
} CsPlacementScore;

/* Simulates the problem's scenario with candidate as its placement (its
 * "manual" form; the scenario's controller removed) once per seed in
 * seeds[0..n_seeds) (common random numbers: every candidate scored on the
 * same seeds sees the same arrivals), each client's measured phase cut to
 * duration_s seconds when duration_s > 0 (trace clients: the trace window),
 * and fills out. Thread safe: candidates may be simulated in parallel.
 * Returns FALSE with error set when pb has no simulator, the candidate does
 * not run (a replica out of memory, a GPU out of range) or n_seeds < 1. */
CS_API gboolean cs_placement_simulate(const CsPlacementProblem *pb, const CsPlacement *candidate,
                                      const uint64_t *seeds, int n_seeds, double duration_s,
                                      CsPlacementScore *out, GError **error);

/* Runs another placement policy of the scenario's registry on pb:
 * params_json is its "placement" object ({"policy": "usher", ...}). The
 * policy sees no simulator. Returns its placement, or NULL with error set
 * when pb has no simulator, the policy is unknown or it fails. */
CS_API CsPlacement *cs_placement_problem_place(const CsPlacementProblem *pb,
                                               const char *params_json, GError **error);

/* ---- The policy ---------------------------------------------------------------- */

typedef struct CsPlacementPolicy {
  const char *name;        /* the scenario's "placement.policy", e.g. "usher" */
  const char *description; /* one line for `clustersim place --list` */
  /* Computes a placement. params is the scenario's "placement" object (an
   * empty object when the scenario has none); user_data is what the policy
   * was registered with. Returns a new placement, or NULL with error set
   * when the parameters are invalid (name the field: cs_params_fail_field)
   * or no placement can be computed. A model the policy does not serve gets
   * no replica (say why in the log). Must be deterministic: the same problem
   * and parameters give the same placement. */
  CsPlacement *(*place)(const CsPlacementProblem *problem, CsParams *params, void *user_data,
                        GError **error);
} CsPlacementPolicy;

G_END_DECLS

#endif
