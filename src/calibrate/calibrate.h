/* `clustersim calibrate`: runs measured co-location experiments through the
 * GPU execution model (gpu_exec.h) and reports how far the model is from the
 * measurements (docs/gpu-model.md, "Calibration").
 *
 * Inputs: an interference file (iGniter's V100 tables), a calibration file
 * (format "clustersim-calibration": the measured pairs and a few published
 * co-locations) and a model profile file for colocations that name a GPU type
 * of it (the thesis' V100 profile). Each experiment is simulated with the
 * real gpu_exec object: pairs as two closed-loop workers (a batch restarts as
 * soon as the previous one ends, as in iGniter's measurement), published
 * co-locations as open-loop workers receiving whole batches at a constant
 * rate for 10 s after 1 s of warm-up. The error of one latency is
 * |simulated - measured| / measured; reported as median and p90 per model
 * pair, per model and in total, for these variants:
 *   table     the interference file as loaded (the shipped one: the fitted
 *             batch_share model with a fitted scale per measured pair)
 *   model     every pair from the file's fallback model (no pair data), as a
 *             pair never measured would be
 *   none      no memory interference at all (baseline)
 *   lopo      leave one pair out: the batch_share model fitted (interference_fit.h)
 *             on the other pairs only, predicting the left-out pair
 *   loo-const the same with a constant slowdown (the model before the
 *             batch_share form), for comparison
 * and, per model, leave one model out (lomo): fitted without every row the
 * model is in, predicting those rows. The batch_share fit on all pairs is
 * reported with 95 % confidence intervals, with the fits of every fold, and
 * the scales of each ordered pair on it.
 * Deterministic; no global state.
 */
#ifndef CS_GPU_CALIBRATE_H
#define CS_GPU_CALIBRATE_H

#include <glib.h>
#include <stdio.h>

#include "profiles/interference.h"
#include "profiles/interference_fit.h"
#include "profiles/measured.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

typedef struct {
  const char *interference_path; /* required: clustersim-interference file */
  const char *calibration_path;  /* required: clustersim-calibration file */
  const char *profile_path;      /* clustersim-profile for colocations with a GPU "profile";
                                    NULL: those colocations are skipped */
  double gamma;                  /* MPS cap exponent; 0 = default 1.0 */
  const char *share_profile_path; /* clustersim-profile of the share tables' models, for the
                                    share rule's check; NULL: skipped */
  const char *share_gpu_type;    /* their GPU type in it */
  const char *const *share_measured_paths; /* measured CSVs (measured.h) whose rows alone at
                                    MPS shares check the share rule per source, NULL-terminated;
                                    NULL: none */
  const char *mig_path;          /* clustersim-interference file with MIG tables, for the MIG
                                    rule's check (calibrate_mig.c); NULL: skipped */
} CsGpuCalibrateOptions;

typedef enum {
  CS_CALIB_TABLE = 0,
  CS_CALIB_MODEL,
  CS_CALIB_NONE,
  CS_CALIB_LOPO,
  CS_CALIB_LOO_CONST,
  CS_CALIB_N_VARIANTS
} CsCalibVariant;

/* Name of a variant as printed ("table", "fallback", "none", "loo-const", ...). */
const char *cs_calib_variant_name(CsCalibVariant v);

typedef struct {
  int n;          /* latencies compared */
  double median;  /* of |sim - real| / real */
  double p90;
  double max;
} CsCalibStat;

/* The MPS share rule (share_rule.h) against the measured share tables,
 * every measured cell below a 100 % share predicted as the profile's latency
 * at the batch times the rule's ratio. */
typedef enum {
  CS_SHARE_LOMO = 0,   /* e fitted without the model (leave one model out) */
  CS_SHARE_FIT,        /* e fitted on every model (in sample) */
  CS_SHARE_ZERO,       /* e = 0: no parameter at all */
  CS_SHARE_POWER,      /* the power rule (r/d)^gamma, d = WSM / 100 (1 when unknown) */
  CS_SHARE_SHIPPED,    /* e = CS_SHARE_RULE_DEFAULT_SERIAL, what the engine runs */
  CS_SHARE_N_VARIANTS
} CsShareVariant;

typedef struct {
  int n_models;
  char **models;                                  /* NULL-terminated */
  CsCalibStat *stats[CS_SHARE_N_VARIANTS];        /* n_models + 1, pooled last */
  CsCalibStat strict[CS_SHARE_N_VARIANTS];        /* pooled over the batches whose 100 %
                                                     latency is measured, not derived */
  CsShareFit fit;                                 /* on every model */
  CsShareFit *lomo_fit;                           /* n_models */
} CsCalibShare;

/* The MIG rule (mig_table.h) against measured MIG tables: every
 * single-process cell below the whole GPU whose batch the whole GPU has too,
 * predicted as the whole GPU's latency times the rule's ratio. */
typedef enum {
  CS_MIG_LOMO = 0,     /* kappa fitted without the model */
  CS_MIG_FIT,          /* kappa fitted on every model (in sample) */
  CS_MIG_KAPPA1,       /* kappa = 1: no parameter */
  CS_MIG_POWER,        /* the rule before: (min(1, f/d))^gamma with d = 1, gamma 1: 1/f */
  CS_MIG_N_VARIANTS
} CsMigVariant;

typedef struct {
  int n_models;
  char **models;                            /* NULL-terminated */
  CsCalibStat *stats[CS_MIG_N_VARIANTS];    /* n_models + 1, pooled last */
  double kappa;                             /* on every model */
  double *lomo_kappa;                       /* n_models */
  CsCalibStat procs_mps;                    /* the MPS model for p processes of one model
                                               without a table, against every measured
                                               cell of several processes */
  CsCalibStat procs_rule;                   /* the MIG rule's processes (mig_table.h) on
                                               the same cells, kappa fitted without the
                                               model */
} CsCalibMig;

/* Runs the MIG rule's check on set (loaded from path, for messages).
 * Returns NULL with error set when no model has a usable cell. */
CsCalibMig *cs_calib_mig_run(const CsInterferenceSet *set, const char *path, GError **error);
void cs_calib_mig_free(CsCalibMig *s);
void cs_calib_mig_print(const CsCalibMig *s, FILE *out);

typedef struct {
  char *model;
  int batch;
  double share;           /* fraction, 0 = none */
  double measured_ms;     /* NAN when the source gives none for this worker */
  double sim_ms;          /* mean simulated GPU latency, model as configured (tables on) */
  double sim_unseen_ms;   /* same with the fallback model for every pair (no pair data) */
  double sim_formula_ms;  /* same without latency-vs-share tables: the (r/d)^gamma cap */
} CsCalibWorker;

typedef struct {
  char *name;
  char *note;
  gboolean approx;        /* the measured values are read off figures / text */
  int n_workers;
  CsCalibWorker *workers;
} CsCalibColocation;

/* Every measured pair latency with what each variant simulates for it. */
typedef struct {
  int n;                                 /* 2 per pair row: model1's, then model2's */
  double *measured_ms, *solo_ms;         /* solo: the share table at its batch and share */
  int *pair, *victim, *aggressor;        /* indices into pair_names / model_names */
  double *sim_ms[CS_CALIB_N_VARIANTS];
} CsCalibPoints;

#define CS_CALIB_MAX_PAIRS 8
#define CS_CALIB_MAX_MODELS 16

typedef struct {
  int n_pairs;                                   /* unordered model pairs */
  char **pair_names;                             /* "m1+m2", n_pairs */
  CsCalibStat *stats[CS_CALIB_N_VARIANTS];       /* n_pairs + 1 entries, total last */
  int n_models;                                  /* models of the pair rows */
  char **model_names;                            /* n_models */
  CsCalibStat *by_model[CS_CALIB_N_VARIANTS];    /* errors of each model as victim */
  CsCalibStat *lomo;                             /* per model: rows it is in, fit without it */
  CsBatchShareFit fit;                           /* on all pairs */
  CsBatchShareFit lopo_fit[CS_CALIB_MAX_PAIRS];  /* without pair p */
  CsBatchShareFit lomo_fit[CS_CALIB_MAX_MODELS]; /* without model m */
  double scale[CS_CALIB_MAX_MODELS][CS_CALIB_MAX_MODELS]; /* [victim][aggressor] fitted on
                                                    fit; NAN where not measured */
  double loo_const[CS_CALIB_MAX_PAIRS];          /* the constant fitted without pair p */
  double all_const;                              /* and on all pairs */
  int n_colocations;
  CsCalibColocation *colocations;
  CsCalibShare *share;                           /* NULL when share_profile_path is NULL */
  CsCalibMig *mig;                               /* NULL when mig_path is NULL */
  int n_share_sources;                           /* the measured files of
                                                    share_measured_paths */
  char **share_source_paths;                     /* n_share_sources */
  CsCalibShare **share_sources;                  /* each file alone */
  int *share_source_models;                      /* models each used */
  CsCalibShare *share_pooled;                    /* the share tables (share above) and every
                                                    file at once; NULL without files */
  CsCalibPoints points;                          /* every pair latency, every variant */
} CsGpuCalibration;

/* Prints the share rule per source: the share tables (c->share), each
 * measured file and all at once, pooled over each one's cells. */
void cs_calib_share_sources_print(const CsGpuCalibration *c, FILE *out);

/* Writes c's points as CSV (header, one row per latency; calibrate_report.c).
 * FALSE with error set when path cannot be written. */
gboolean cs_gpu_calibration_write_points(const CsGpuCalibration *c, const char *path,
                                         GError **error);

/* Runs the share rule's check (calibrate_share.c) with prof, loaded from
 * profile_path (for messages). Returns NULL with error set when prof lacks a
 * model of the tables on gpu_type. */
CsCalibShare *cs_calib_share_run(const CsInterferenceSet *set, const CsProfileSet *prof,
                                 const char *profile_path, const char *gpu_type, double gamma,
                                 GError **error);
/* The same on several sources at once: the share tables of set against prof
 * (set NULL: none) and the measured files (rows alone, whole GPU or an MPS
 * share, no MIG, time quota 100 % or none), each model's 100 % rows its
 * profile (calibrate_share.c, collect_measured). Models of the same name in
 * several sources are one model for leaving one out. *n_models (may be
 * NULL): models used. NULL with error set when a model of set has no
 * profile, a measured file gives one cell twice, or no cell is usable. */
CsCalibShare *cs_calib_share_run_all(const CsInterferenceSet *set, const CsProfileSet *prof,
                                     const char *profile_path, const char *gpu_type,
                                     const CsMeasuredFile *const *files, int n_files,
                                     double gamma, int *n_models, GError **error);
void cs_calib_share_free(CsCalibShare *s);
void cs_calib_share_print(const CsCalibShare *s, FILE *out);
/* Median and p90 (and max) of errs (sorted in place); n 0 and NAN when empty. */
void cs_calib_stat_of(double *errs, int n, CsCalibStat *out);

/* Runs everything. Returns NULL with error set when a file cannot be read or
 * is invalid (messages name file, JSON path and expectation). */
CsGpuCalibration *cs_gpu_calibrate(const CsGpuCalibrateOptions *opt, GError **error);
void cs_gpu_calibration_free(CsGpuCalibration *c);

/* Prints the report as plain text (calibrate_report.c). */
void cs_gpu_calibration_print(const CsGpuCalibration *c, const CsGpuCalibrateOptions *opt,
                              FILE *out);

/* Convenience for a CLI subcommand: cs_gpu_calibrate + print. Returns FALSE
 * with error set on failure (nothing printed). */
gboolean cs_gpu_calibrate_run(const CsGpuCalibrateOptions *opt, FILE *out, GError **error);

G_END_DECLS

#endif
