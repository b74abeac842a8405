/* iGniter placement (thesis 5.1; F. Xu et al., IEEE TPDS 2022; the
 * provisioning algorithm of the public repository icloud-ecnu/igniter).
 *
 *   "placement": {"policy": "igniter", "coefficients": "igniter_v100_coefficients",
 *                 "slo_fraction": 0.5, "split": true}
 *
 * Without "coefficients" the measurements are the shipped ones when they
 * serve the scenario, else derived from the simulator's GPU model
 * (igniter_derive.h); docs/policies.md says exactly when.
 *
 * Provisioning, per iGniter, for every model with rate R (req/ms) and SLO T:
 *   - target t = slo_fraction x T (iGniter halves the SLO: half for the batch
 *     to fill, half for the inference);
 *   - batch b = ceil(t R B / (B + d_in R)), B the PCIe bandwidth, d_in the
 *     input bytes per request (the batch fills while the previous one loads);
 *   - r_lower = the least MPS share (a multiple of the share unit) whose solo
 *     prediction meets t at batch b: the solo active-time model solved for r,
 *     rounded up to the unit (at least one unit);
 *   - workloads are taken by r_lower descending (ties: scenario order); each
 *     goes to the existing GPU whose summed shares grow least when it is added
 *     at r_lower and every workload's share on that GPU is raised by one unit
 *     while its predicted latency exceeds its target, as long as the sum stays
 *     <= 100 % (ties: lowest GPU); when no GPU can take it, a new GPU is
 *     opened for it (the same raising, alone).
 * A model whose workload cannot meet its target even alone at 100 % is split,
 * with "split" (the default), into the fewest k <= 1024 equal parts of R/k
 * that each can (each part is a replica with its own batch); without
 * "split", or when no k works, the model is not served.
 *
 * Fixed cluster (thesis 5.1.5): the plan is made for as many GPUs as it
 * needs, then its GPUs are mapped in the order they were opened onto the
 * cluster's GPUs of the coefficients' GPU type, in cluster order, until they
 * run out; replicas on the remaining plan GPUs are dropped and the log names
 * the models left without a replica.
 *
 * Expected goodput of a model = min(rate, sum over its kept replicas of the
 * throughput iGniter predicts for the replica with its GPU's final
 * co-location: 1000 b / (t_gpu + b d_out / B)). Every planned replica meets
 * its target by construction.
 */
#ifndef CS_IGNITER_H
#define CS_IGNITER_H

#include "profiles/igniter_coef.h"
#include "clustersim/placement.h"

G_BEGIN_DECLS

/* Most parts a model may be split into. */
#define CS_IGNITER_MAX_PARTS 1024

typedef struct {
  const CsIgniterCoefs *coefs; /* not owned */
  double slo_fraction;         /* (0, 1]; iGniter: 0.5 */
  gboolean split;              /* split models too large for one GPU */
  const char *log_prefix;      /* written first in the placement's log, or NULL */
} CsIgniterOptions;

/* What the plan looked like, for tests and the benchmark. */
typedef struct {
  int gpus_planned;  /* GPUs the plan needs (before mapping onto the cluster) */
  int gpus_used;     /* cluster GPUs that got replicas */
  int *parts;        /* per model: workloads it was split into (0: not served) */
  int *batch;        /* per model: batch of each part (0: not served) */
  double *r_lower;   /* per model: r_lower of each part, % (0: not served) */
} CsIgniterInfo;

/* Frees the arrays of info; accepts a zeroed struct. */
void cs_igniter_info_clear(CsIgniterInfo *info);

/* Plans and maps (see above). info may be NULL; otherwise it is filled and
 * must be cleared by the caller (on failure it is left zeroed, owning
 * nothing). Returns NULL with error when a model has no
 * coefficients (CS_PLACEMENT_ERROR_PROFILE) or the cluster has GPUs but none
 * of the coefficients' type (CS_PLACEMENT_ERROR_PARAMS). No GPUs: an empty
 * placement and a log line. */
CsPlacement *cs_igniter_place(const CsPlacementProblem *in, const CsIgniterOptions *opt,
                              CsIgniterInfo *info, GError **error);

G_END_DECLS

#endif
