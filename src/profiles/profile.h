/* Model profiles: what a model costs on a GPU type, per batch size.
 *
 * A profile file (format "clustersim-profile", documented in docs/profiles.md)
 * lists GPU types and, per (GPU type, model), the profiled batch sizes with
 * isolated latency, memory requirement (Mreq, % of GPU memory) and compute
 * requirement (Creq, % of the GPU) in the metrics AO, WAO and WSM, plus the
 * request and result payload sizes. Several files can be loaded into one set.
 *
 * Latency of a batch size that was not profiled comes from the linear model
 * latency(b) = alpha * b + beta: taken from the file when it gives one,
 * otherwise fitted by least squares (GSL) over the profiled points, with
 * alpha and beta constrained to be >= 0 (docs/profiles.md). A model with
 * neither a "linear" model nor at least two profiled points is rejected at
 * load, so every loaded profile answers every batch size >= 1.
 *
 * Ownership: a CsProfileSet owns everything it hands out; returned pointers
 * stay valid until the set is freed. Nothing here is global.
 */
#ifndef CS_PROFILE_H
#define CS_PROFILE_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/profiles.h"

G_BEGIN_DECLS

/* The "format" and the only "version" a profile file may declare. */
#define CS_PROFILE_FORMAT "clustersim-profile"
#define CS_PROFILE_FORMAT_VERSION 1

/* Profile errors are library errors (CS_ERROR): IO, PARSE or INVALID; a
 * duplicate GPU type or (GPU type, model) pair is INVALID. */
#define CS_PROFILE_ERROR CS_ERROR
#define CS_PROFILE_ERROR_IO CS_ERROR_IO
#define CS_PROFILE_ERROR_PARSE CS_ERROR_PARSE
#define CS_PROFILE_ERROR_INVALID CS_ERROR_INVALID
#define CS_PROFILE_ERROR_DUPLICATE CS_ERROR_INVALID

struct CsGpuType {
  char *name;                 /* e.g. "v100" */
  char *description;          /* free text, may be "" */
  int sm_count;               /* 0 if unknown */
  int64_t memory_bytes;       /* 0 if unknown */
  double price_per_hour;      /* dollars per GPU-hour; NAN if unknown */
  char *price_source;         /* where the price comes from; NULL if unknown */
};

/* The largest hourly price of one GPU a profile or scenario may give, in
 * dollars: far above any offering, low enough that a cluster's price over
 * 2^20 GPUs and a cost over 10^9 s stay finite and exact enough. */
#define CS_PRICE_MAX 1e6

struct CsModelProfile {
  char *gpu_type;             /* name of a CsGpuType in the same set */
  char *model;                /* model name, e.g. "resnet50" */
  int64_t input_bytes;        /* request payload per request; -1 if the profile does not say */
  int64_t output_bytes;       /* result payload per request; -1 if the profile does not say */
  double slo_ms;              /* SLO suggested by the source; NAN if none */
  CsBatchPoint *points;       /* profiled batch sizes, sorted by batch, unique */
  int n_points;               /* may be 0 when only the linear model is given */
  double alpha_ns;            /* linear model slope, ns per request in the batch */
  double beta_ns;             /* linear model intercept, ns */
  gboolean linear_fitted;     /* TRUE if alpha/beta were fitted here, FALSE if read from the file */
  char *source;               /* provenance: file it came from and the source it cites */
};

/* The public queries (cs_profile_set_*, cs_model_profile_*, cs_gpu_type_*) are
 * declared in clustersim/profiles.h. */

/* Returns the " (did you mean ...?)" text of cs_did_you_mean (json_input.h)
 * for an unknown GPU type name among the set's GPU types, or "" when none is
 * close. g_free the result. */
char *cs_profile_set_suggest_gpu_type(const CsProfileSet *set, const char *name);

G_END_DECLS

#endif
