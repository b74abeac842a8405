/* libclustersim: model profiles, read-only.
 *
 * A profile set holds, per (GPU type, model), what the model costs on that GPU
 * type at each profiled batch size: isolated latency, memory requirement
 * (Mreq) and compute requirement (Creq, in three metrics), plus the request
 * and result payloads and the SLO the source suggests. Profile files are in
 * the "clustersim-profile" format (docs/profiles.md); `clustersim profile
 * list` shows the shipped ones. A placement policy receives the set of its
 * scenario in its problem (placement.h); the functions below are all it needs
 * to read it.
 *
 * Latency of a batch size that was not profiled comes from the linear model
 * latency(b) = alpha * b + beta (from the file, or fitted at load), so every
 * loaded profile answers every batch size >= 1. Creq and Mreq exist only at
 * profiled batch sizes.
 *
 * Ownership: a set owns every profile, point and string it hands out; they
 * stay valid until the set is freed. Nothing here is global; a set may be read
 * from several threads at once once loaded.
 */
#ifndef CLUSTERSIM_PROFILES_H
#define CLUSTERSIM_PROFILES_H

#include "core.h"

G_BEGIN_DECLS

typedef struct CsProfileSet CsProfileSet;
typedef struct CsModelProfile CsModelProfile;
typedef struct CsGpuType CsGpuType;

/* Compute metric used as Creq (docs/policies.md). */
typedef enum {
  CS_CREQ_AO = 0,  /* max achieved occupancy (Usher) */
  CS_CREQ_WAO,     /* time-weighted average achieved occupancy */
  CS_CREQ_WSM,     /* time-weighted average SM utilisation */
  CS_CREQ_N_METRICS
} CsCreqMetric;

/* One profiled batch size of a model on a GPU type. */
typedef struct {
  int batch;                          /* batch size, >= 1 */
  int64_t latency_ns;                 /* isolated latency of one batch, all SMs */
  double mreq_pct;                    /* memory requirement, % of GPU memory; NAN if unknown */
  double creq_pct[CS_CREQ_N_METRICS]; /* compute requirement per metric, %; NAN if unknown */
  double throughput_rps;              /* throughput the source publishes for one replica at
                                         this batch size; NAN if it gives none */
  char *note;                         /* the source's remark, e.g. "uncertain"; or NULL */
} CsBatchPoint;

/* ---- Sets ------------------------------------------------------------------- */

/* Returns a new empty set (free with cs_profile_set_free). Never fails. */
CS_API CsProfileSet *cs_profile_set_new(void);

/* Frees the set and everything it handed out. Accepts NULL. */
CS_API void cs_profile_set_free(CsProfileSet *set);

/* Loads one profile file into the set. Returns FALSE with error set (domain
 * CS_ERROR: CS_ERROR_IO when the file cannot be read, CS_ERROR_PARSE when it is
 * not JSON, CS_ERROR_INVALID with the file, JSON path and what was expected
 * when it is not a valid profile, or defines a GPU type or (GPU type, model)
 * pair already in the set). A model may refer to a GPU type declared in the
 * same file or in one loaded before. On failure the set is unchanged. */
CS_API gboolean cs_profile_set_load_file(CsProfileSet *set, const char *path, GError **error);

/* Same, from JSON text in memory; name is used in messages. */
CS_API gboolean cs_profile_set_load_data(CsProfileSet *set, const char *json, const char *name,
                                         GError **error);

/* Number of GPU types, and the i-th in declaration order (NULL when i is out
 * of range). */
CS_API int cs_profile_set_n_gpu_types(const CsProfileSet *set);
CS_API const CsGpuType *cs_profile_set_gpu_type_at(const CsProfileSet *set, int i);

/* Returns the GPU type called name, or NULL. */
CS_API const CsGpuType *cs_profile_set_gpu_type(const CsProfileSet *set, const char *name);

/* Number of (GPU type, model) profiles, and the i-th in load order (NULL when
 * i is out of range). */
CS_API int cs_profile_set_n_models(const CsProfileSet *set);
CS_API const CsModelProfile *cs_profile_set_model(const CsProfileSet *set, int i);

/* Returns the profile of model on gpu_type, or NULL if the set has none. */
CS_API const CsModelProfile *cs_profile_set_lookup(const CsProfileSet *set, const char *gpu_type,
                                                   const char *model);

/* ---- GPU types ---------------------------------------------------------------- */

/* The type's name, e.g. "v100". */
CS_API const char *cs_gpu_type_name(const CsGpuType *t);
/* Free text; "" when the file gives none. */
CS_API const char *cs_gpu_type_description(const CsGpuType *t);
/* Streaming multiprocessors; 0 when unknown. */
CS_API int cs_gpu_type_sm_count(const CsGpuType *t);
/* Device memory in bytes; 0 when unknown. */
CS_API int64_t cs_gpu_type_memory_bytes(const CsGpuType *t);
/* Hourly price of one GPU of this type in dollars (the profile's default;
 * a scenario may override it per node); NAN when the profile gives none. */
CS_API double cs_gpu_type_price_per_hour(const CsGpuType *t);
/* Where that price comes from (provider, instance type, region, on-demand or
 * not, date); NULL when the profile gives no price. */
CS_API const char *cs_gpu_type_price_source(const CsGpuType *t);

/* ---- Model profiles ------------------------------------------------------------ */

/* Model name, e.g. "resnet50", and the GPU type it was profiled on. */
CS_API const char *cs_model_profile_model(const CsModelProfile *p);
CS_API const char *cs_model_profile_gpu_type(const CsModelProfile *p);

/* SLO the source suggests, in ms; NAN when it gives none. */
CS_API double cs_model_profile_slo_ms(const CsModelProfile *p);

/* Request and result payload of one request in bytes; -1 when the profile does
 * not say. */
CS_API int64_t cs_model_profile_input_bytes(const CsModelProfile *p);
CS_API int64_t cs_model_profile_output_bytes(const CsModelProfile *p);

/* Provenance: the file it came from and the source it cites. */
CS_API const char *cs_model_profile_source(const CsModelProfile *p);

/* Number of profiled batch sizes (may be 0 when the file gives only the
 * linear model), and the i-th point in increasing batch order (NULL when i is
 * out of range). */
CS_API int cs_model_profile_n_points(const CsModelProfile *p);
CS_API const CsBatchPoint *cs_model_profile_point_at(const CsModelProfile *p, int i);

/* Returns the profiled point for exactly this batch size, or NULL. */
CS_API const CsBatchPoint *cs_model_profile_point(const CsModelProfile *p, int batch);

/* Returns the profiled point whose batch size is nearest to batch (the smaller
 * one on a tie), or NULL when the profile has no points. */
CS_API const CsBatchPoint *cs_model_profile_nearest_point(const CsModelProfile *p, int batch);

/* Memory requirement (Mreq, % of the GPU's memory) of a replica at batch:
 * the value at the nearest profiled batch size that gives one (the smaller
 * on a tie); 0 when no point gives it or p is NULL. */
CS_API double cs_model_profile_mreq_pct(const CsModelProfile *p, int batch);

/* The linear latency model latency(b) = alpha * b + beta, in ns: *alpha_ns
 * and *beta_ns (both >= 0; either pointer may be NULL). Returns TRUE when the
 * file gave it, FALSE when it was fitted at load over the profiled points. */
CS_API gboolean cs_model_profile_linear(const CsModelProfile *p, double *alpha_ns,
                                        double *beta_ns);

/* Isolated latency of a batch of this size in ns: the profiled value when the
 * batch size was profiled, else round(alpha * batch + beta). batch >= 1.
 * Always >= 1; saturates at INT64_MAX instead of overflowing. */
CS_API int64_t cs_model_profile_latency_ns(const CsModelProfile *p, int batch);

/* Throughput of one replica running batches of this size back to back, in
 * req/s: the point's throughput_rps when the source published one, else
 * batch / latency. batch >= 1. */
CS_API double cs_model_profile_throughput_rps(const CsModelProfile *p, int batch);

/* Execution time of a batch of this size in ns, as the simulator runs it
 * alone on a whole GPU: batch / throughput_rps for a profiled point that
 * gives its throughput, else cs_model_profile_latency_ns. batch >= 1. */
CS_API int64_t cs_model_profile_exec_ns(const CsModelProfile *p, int batch);

G_END_DECLS

#endif
