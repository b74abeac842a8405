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
 * pair and in total, for these variants:
 *   table     the model as shipped: pair factors from the table
 *   fallback  every pair from the file's parametric fallback
 *   none      no memory interference at all (baseline)
 *   loo-*     leave one pair out: the fallback of form const / l2 / dram fitted
 *             (least squares on measured / solo - 1) on the other pairs only,
 *             then used to predict the left-out pair.
 * Deterministic; no global state.
 */
#ifndef CS_GPU_CALIBRATE_H
#define CS_GPU_CALIBRATE_H

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef struct {
  const char *interference_path; /* required: clustersim-interference file */
  const char *calibration_path;  /* required: clustersim-calibration file */
  const char *profile_path;      /* clustersim-profile for colocations with a GPU "profile";
                                    NULL: those colocations are skipped */
  double gamma;                  /* MPS cap exponent; 0 = default 1.0 */
} CsGpuCalibrateOptions;

typedef enum {
  CS_CALIB_TABLE = 0,
  CS_CALIB_FALLBACK,
  CS_CALIB_NONE,
  CS_CALIB_LOO_CONST,
  CS_CALIB_LOO_L2,
  CS_CALIB_LOO_DRAM,
  CS_CALIB_N_VARIANTS
} CsCalibVariant;

/* Name of a variant as printed ("table", "fallback", "none", "loo-const", ...). */
const char *cs_calib_variant_name(CsCalibVariant v);

typedef struct {
  int n;          /* latencies compared */
  double median;  /* of |sim - real| / real */
  double p90;
} CsCalibStat;

typedef struct {
  char *model;
  int batch;
  double share;           /* fraction, 0 = none */
  double measured_ms;     /* NAN when the source gives none for this worker */
  double sim_ms;          /* mean simulated GPU latency, model as configured (tables on) */
  double sim_formula_ms;  /* same without latency-vs-share tables: the (r/d)^gamma cap */
} CsCalibWorker;

typedef struct {
  char *name;
  char *note;
  gboolean approx;        /* the measured values are read off figures / text */
  int n_workers;
  CsCalibWorker *workers;
} CsCalibColocation;

typedef struct {
  int n_pairs;                                   /* unordered model pairs */
  char **pair_names;                             /* "m1+m2", n_pairs */
  CsCalibStat *stats[CS_CALIB_N_VARIANTS];       /* n_pairs + 1 entries, total last */
  double loo_coef[3][8][3];                      /* [form][left-out pair][c0, cv, ca]; up
                                                    to 8 pairs */
  double all_coef[3][3];                         /* [form][c0, cv, ca] fitted on all pairs */
  int n_colocations;
  CsCalibColocation *colocations;
} CsGpuCalibration;

/* Runs everything. Returns NULL with error set when a file cannot be read or
 * is invalid (messages name file, JSON path and expectation). */
CsGpuCalibration *cs_gpu_calibrate(const CsGpuCalibrateOptions *opt, GError **error);
void cs_gpu_calibration_free(CsGpuCalibration *c);

/* Prints the report as plain text. */
void cs_gpu_calibration_print(const CsGpuCalibration *c, const CsGpuCalibrateOptions *opt,
                              FILE *out);

/* Convenience for a CLI subcommand: cs_gpu_calibrate + print. Returns FALSE
 * with error set on failure (nothing printed). */
gboolean cs_gpu_calibrate_run(const CsGpuCalibrateOptions *opt, FILE *out, GError **error);

G_END_DECLS

#endif
