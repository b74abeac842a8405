/* Placement policies: the static decision of which model replicas run on
 * which GPU, at which batch size and (optionally) MPS share.
 *
 * Interface (POLICIES.md, thesis 4.3.2):
 *   place(models with rate and SLO, GPUs, profiles)
 *     -> replicas (model, GPU, batch, share) + the policy's expected goodput.
 * The simulator executes the placement with its own GPU model; the expected
 * goodput is the policy's prediction and is reported next to the simulated one.
 *
 * Policies are const vtables listed in one registry (placement_registry.c),
 * looked up by name. A policy reads its parameters from a JSON object (the
 * scenario's "placement" object); unknown parameters are errors.
 */
#ifndef CS_PLACEMENT_H
#define CS_PLACEMENT_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

#include "profiles/interference.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

#define CS_PLACEMENT_ERROR (cs_placement_error_quark())
GQuark cs_placement_error_quark(void);

typedef enum {
  CS_PLACEMENT_ERROR_PARAMS,     /* bad policy parameters */
  CS_PLACEMENT_ERROR_PROFILE,    /* a model has no profile on a GPU type it needs */
  CS_PLACEMENT_ERROR_INFEASIBLE, /* the policy's own model has no solution */
  CS_PLACEMENT_ERROR_SOLVER,     /* the LP/MILP solver failed */
} CsPlacementErrorCode;

/* One model the cluster must serve. */
typedef struct {
  const char *name;   /* model name as in the profiles */
  double rate_rps;    /* offered request rate */
  double slo_ms;      /* end-to-end latency objective */
} CsPlacementModel;

/* One GPU of the cluster, in cluster order (index = GPU id). */
typedef struct {
  const char *gpu_type; /* name of a GPU type in the profile set */
  int node;             /* node index the GPU belongs to */
} CsPlacementGpu;

/* How the simulator will execute the placement (the scenario's "cluster"
 * settings), for a policy that measures the simulator's GPU model itself:
 * iGniter without a coefficients file (igniter_derive.h). */
typedef struct {
  gboolean mps;                          /* cluster.mps */
  double mps_gamma;                      /* cluster.mps_gamma (> 0) */
  const CsInterferenceSet *interference; /* cluster.interference, or NULL */
  const char *interference_name;         /* as the scenario names it, for logs; or NULL */
} CsPlacementGpuModel;

typedef struct {
  const CsPlacementModel *models; /* n_models entries, scenario order */
  int n_models;
  const CsPlacementGpu *gpus;     /* n_gpus entries */
  int n_gpus;
  const CsProfileSet *profiles;
  const CsPlacementGpuModel *gpu_model; /* NULL: MPS, gamma 1, no interference file */
} CsPlacementInput;

typedef struct {
  int model;          /* index into CsPlacementInput.models */
  int gpu;            /* index into CsPlacementInput.gpus */
  int batch;          /* target batch size, >= 1 */
  double mps_share;   /* fraction of SMs in (0, 1], or 0 for no MPS limit */
} CsReplica;

typedef struct {
  GArray *replicas;          /* of CsReplica, in the order the policy placed them */
  double *expected_goodput;  /* per model (n_models entries), req/s, policy's own prediction */
  double expected_total;     /* sum of expected_goodput */
  GString *log;              /* human-readable notes of the policy (solver status, choices) */
  int creq_metric;           /* CsCreqMetric the policy used as Creq, or -1 if none */
  int gpus_needed;           /* GPUs the policy needs to serve everything (min_gpus mode), or -1 */
} CsPlacement;

/* Returns a new empty placement for n_models models. */
CsPlacement *cs_placement_new(int n_models);
/* Frees it; accepts NULL. */
void cs_placement_free(CsPlacement *p);
/* Appends a replica. */
void cs_placement_add(CsPlacement *p, int model, int gpu, int batch, double mps_share);

typedef struct CsPlacementPolicy {
  const char *name;        /* registry name, e.g. "usher" */
  const char *description; /* one line for `clustersim place --list` */
  /* Computes a placement. params is the scenario's "placement" object (may be
   * NULL); file and json_path locate it for messages. Returns NULL with error
   * set when the parameters are invalid or no placement can be computed. A model
   * the policy does not serve simply gets no replica (and a note in log). */
  CsPlacement *(*place)(const CsPlacementInput *in, const cJSON *params, const char *file,
                        const char *json_path, GError **error);
} CsPlacementPolicy;

/* Returns the policy registered under name, or NULL. */
const CsPlacementPolicy *cs_placement_policy_lookup(const char *name);
/* Returns the NULL-terminated registry, in listing order. */
const CsPlacementPolicy *const *cs_placement_policy_list(void);

G_END_DECLS

#endif
