/* Helpers shared by the profile-driven placement policies (Usher, MILP):
 * reading their common parameters and turning a model's profile into the
 * candidate batch sizes the policies choose from.
 *
 * A candidate batch size must be in the policy's batch-size list (Usher's
 * {4, 8, 16, 32, 64, 128} by default), be a profiled point of the model on the
 * GPU type, and have a known Mreq and Creq in the chosen metric; the table has
 * empty cells (resnext50_32x4d batch 8) and those points are skipped. The
 * throughput of a replica is the profile's published throughput
 * (cs_model_profile_throughput_rps), the number the thesis' expected-goodput
 * arithmetic uses.
 */
#ifndef CS_PLACE_COMMON_H
#define CS_PLACE_COMMON_H

#include <glib.h>

#include "clustersim/placement.h"

G_BEGIN_DECLS

/* One batch size of one model on one GPU type. */
typedef struct {
  int batch;            /* batch size */
  double latency_ms;    /* isolated latency of one batch */
  double goodput;       /* req/s of one replica running this batch size back to back */
  double creq;          /* compute requirement in the policy's metric, % */
  double mreq;          /* memory requirement, % */
  gboolean meets_slo;   /* latency <= the model's SLO */
} CsBatchOption;

/* The candidate batch sizes of one model on one GPU type, ascending batch.
 * Only points that fit an empty GPU (Creq <= 100 and Mreq <= 100) are listed;
 * as in Usher (paper 3.3.1) the list stops at the first batch size that does
 * not fit, even if a larger one would. */
typedef struct {
  CsBatchOption *opts;  /* owned; n entries */
  int n;
  const CsModelProfile *prof; /* the profile they come from (owned by the profile set) */
} CsModelOptions;

/* Usher's batch sizes (paper 3.3.2). */
extern const int cs_place_default_batches[];
extern const int cs_place_n_default_batches;

/* Returns "ao", "wao" or "wsm". */
const char *cs_place_metric_name(CsCreqMetric metric);

/* Reads params[key] as a Creq metric name ("ao", "wao", "wsm") into *out,
 * which holds the default; absent leaves it unchanged. alias names a policy
 * whose name implies the default metric (e.g. "wao-usher", or NULL when the
 * metric is free): another metric is then an error pointing at family (the
 * policy that lets one choose). Returns FALSE with error naming the JSON path
 * otherwise. */
gboolean cs_place_read_metric(CsParams *params, const char *key, const char *alias,
                              const char *family, CsCreqMetric *out, GError **error);

/* Reads params["batch_sizes"], an array of distinct integers in [1, 1<<20];
 * absent: the default list. *out (sorted ascending, caller g_free()s) and *n
 * are set on success. Returns FALSE with error naming the element's path. */
gboolean cs_place_read_batch_sizes(CsParams *params, int **out, int *n, GError **error);

/* Fills *out with the candidates of model on gpu_type (see above). Returns
 * FALSE with error (CS_ERROR_POLICY, naming the policy) when the
 * profile set has no profile for the pair. A model with a profile but no
 * usable point gets n = 0, not an error. Free with cs_model_options_clear(). */
gboolean cs_model_options_init(CsModelOptions *out, const CsProfileSet *profiles,
                               const char *gpu_type, const CsPlacementModel *model,
                               CsCreqMetric metric, const int *batches, int n_batches,
                               const char *policy, GError **error);

/* Frees the candidates; accepts a zeroed struct. */
void cs_model_options_clear(CsModelOptions *o);

/* Returns TRUE when every GPU of the cluster has the type of GPU 0 (or there
 * are no GPUs); otherwise FALSE with error (CS_ERROR_POLICY). */
gboolean cs_place_require_homogeneous(const CsPlacementProblem *in, const char *policy,
                                      GError **error);

/* Sets each model's expected goodput to min(rate_m, sum over m's replicas of
 * the replica's throughput at its batch size on its GPU type).
 * Every replica's (GPU type, model) must have a profile (policies only place
 * replicas they looked up). */
void cs_place_compute_expected(CsPlacement *p, const CsPlacementProblem *in);

G_END_DECLS

#endif
