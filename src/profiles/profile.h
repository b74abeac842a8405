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

G_BEGIN_DECLS

/* The "format" and the only "version" a profile file may declare. */
#define CS_PROFILE_FORMAT "clustersim-profile"
#define CS_PROFILE_FORMAT_VERSION 1

#define CS_PROFILE_ERROR (cs_profile_error_quark())
GQuark cs_profile_error_quark(void);

typedef enum {
  CS_PROFILE_ERROR_IO,      /* file cannot be read */
  CS_PROFILE_ERROR_PARSE,   /* not JSON */
  CS_PROFILE_ERROR_INVALID, /* JSON but not a valid profile: names file, JSON path, expectation */
  CS_PROFILE_ERROR_DUPLICATE, /* a (gpu, model) pair or GPU type defined twice */
} CsProfileErrorCode;

/* Compute metric used as Creq (POLICIES.md). */
typedef enum {
  CS_CREQ_AO = 0,  /* max achieved occupancy (Usher) */
  CS_CREQ_WAO,     /* time-weighted average achieved occupancy */
  CS_CREQ_WSM,     /* time-weighted average SM utilisation */
  CS_CREQ_N_METRICS
} CsCreqMetric;

typedef struct {
  int batch;                              /* batch size, >= 1 */
  int64_t latency_ns;                     /* isolated latency of one batch, all SMs */
  double mreq_pct;                        /* memory requirement, % of GPU memory; NAN if unknown */
  double creq_pct[CS_CREQ_N_METRICS];     /* compute requirement per metric, %; NAN if unknown */
  double throughput_rps;                  /* throughput the source publishes for one replica at
                                             this batch size (more digits than latency_ns in the
                                             thesis table); NAN if the file does not give it */
  char *note;                             /* the source's remark, e.g. "uncertain"; or NULL */
} CsBatchPoint;

typedef struct {
  char *name;                 /* e.g. "v100" */
  char *description;          /* free text, may be "" */
  int sm_count;               /* 0 if unknown */
  int64_t memory_bytes;       /* 0 if unknown */
} CsGpuType;

typedef struct {
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
} CsModelProfile;

typedef struct CsProfileSet CsProfileSet;

/* Returns a new empty set. Never fails. */
CsProfileSet *cs_profile_set_new(void);

/* Frees the set and everything it handed out. Accepts NULL. */
void cs_profile_set_free(CsProfileSet *set);

/* Loads one profile file into the set. Returns FALSE with error set (message
 * naming the file, the JSON path and what was expected) when the file cannot be
 * read, is not a valid profile of a supported version, or defines a GPU type or
 * (GPU type, model) pair already in the set. A model may refer to a GPU type
 * declared in the same file or in a file loaded into the set before.
 * On failure the set is unchanged. */
gboolean cs_profile_set_load_file(CsProfileSet *set, const char *path, GError **error);

/* Same, from a string already in memory; name is used in messages. */
gboolean cs_profile_set_load_data(CsProfileSet *set, const char *json, const char *name,
                                  GError **error);

/* Returns the profile of model on gpu_type, or NULL if the set has none. */
const CsModelProfile *cs_profile_set_lookup(const CsProfileSet *set, const char *gpu_type,
                                            const char *model);

/* Returns the GPU type called name, or NULL. */
const CsGpuType *cs_profile_set_gpu_type(const CsProfileSet *set, const char *name);

/* Number of GPU types / the i-th one in declaration order (0 <= i < count;
 * NULL otherwise). Types a file declares are appended when it loads, so the
 * types of one file are the indices between the counts before and after. */
int cs_profile_set_n_gpu_types(const CsProfileSet *set);
const CsGpuType *cs_profile_set_gpu_type_at(const CsProfileSet *set, int i);

/* Returns the " (did you mean ...?)" text of cs_did_you_mean (json_input.h)
 * for an unknown GPU type name among the set's GPU types, or "" when none is
 * close. g_free the result. */
char *cs_profile_set_suggest_gpu_type(const CsProfileSet *set, const char *name);

/* Number of model profiles / the i-th one in load order (0 <= i < count).
 * As for GPU types, a loaded file's models are appended after the others. */
int cs_profile_set_n_models(const CsProfileSet *set);
const CsModelProfile *cs_profile_set_model(const CsProfileSet *set, int i);

/* Returns the profiled point whose batch size is nearest to batch (the
 * smaller one on a tie), or NULL when the profile has no points. */
const CsBatchPoint *cs_model_profile_nearest_point(const CsModelProfile *p, int batch);

/* Returns the profiled point for exactly this batch size, or NULL. */
const CsBatchPoint *cs_model_profile_point(const CsModelProfile *p, int batch);

/* Isolated latency of a batch of this size in ns: the profiled value when the
 * batch size was profiled, else round(alpha * batch + beta). batch >= 1.
 * Loading guarantees alpha >= 0, beta >= 0 and latency(1) >= 1 ns, so the
 * result is always >= 1; it saturates at INT64_MAX instead of overflowing. */
int64_t cs_model_profile_latency_ns(const CsModelProfile *p, int batch);

/* Throughput of one replica running batches of this size back to back, in
 * requests per second: the point's throughput_rps when the source published
 * one (use this to reproduce the thesis' expected-goodput numbers), else
 * batch / latency. batch >= 1. */
double cs_model_profile_throughput_rps(const CsModelProfile *p, int batch);

/* Execution time of a batch of this size in ns, as the simulator runs it:
 * batch / throughput_rps for a profiled point that gives its throughput (the
 * thesis' latency column is rounded to 0.1 ms, its throughput column keeps the
 * measured precision), else cs_model_profile_latency_ns. batch >= 1. */
int64_t cs_model_profile_exec_ns(const CsModelProfile *p, int batch);

G_END_DECLS

#endif
