/* iGniter's coefficients and its analytical latency predictor (thesis 5.1.2;
 * F. Xu et al., IEEE TPDS 2022).
 *
 * A file of format "clustersim-igniter" (version 1, docs/policies.md) holds
 * what iGniter's profiling measures on one GPU type: hardware constants, a
 * scan of power, frequency and per-kernel idle time with 1..n concurrent
 * copies of a reference model, and per model a grid of GPU latency, power and
 * frequency over (batch, MPS share), L2 utilisation points and one measured
 * pair co-location. Loading fits the predictor's coefficients from these
 * measurements the way iGniter's algorithm does when it starts:
 *
 *   t_act_solo(b, r) = (k1 b^2 + k2 b + k3) / (r + k4) + k5        (ms; r = share %)
 *       least squares over the grid's GPU latency minus idle_ms, each cell
 *       first scaled to the maximum frequency (latency x f / F when f < F);
 *       fitted exactly by variable projection: for fixed k4 the model is
 *       linear in k1, k2, k3, k5 (GSL linear least squares), and k4 minimises
 *       the residual over (-min share, inf) (grid scan, then Brent);
 *   power above idle (W) = a_p * thr + c_p, thr = 1000 b / (latency - idle_ms),
 *       least squares over the unthrottled cells (f > F - 1 MHz);
 *   L2 utilisation (%)   = a_c * thr + c_c, least squares over l2_points;
 *   k_l2 = ((active_ms_pair * frequency_pair / F) / active_ms_alone - 1) / pair.l2_util_pct;
 *   frequency above the power cap: f = F + s (P - cap); s fitted through the
 *       throttled scan points after extending their power linearly with the
 *       average step of the unthrottled ones (their measured power is capped);
 *   extra idle time per kernel with n >= 2 workloads = alpha n + beta, least
 *       squares over the scan's idle time (scaled by f / F) minus the 1-copy value.
 *
 * Prediction for n workloads on one GPU (cs_igniter_predict), per workload i:
 *   P = idle_power + sum_k (a_p thr_k + c_p), thr_k = 1000 b_k / t_act_solo_k
 *   f = F, or F + s (P - cap) when P > cap
 *   t_sch = kernels_i (alpha n + beta) [n >= 2, else 0] + idle_ms_i
 *   t_act = t_act_solo_i (1 + k_l2_i sum_{k != i} (a_c thr_k + c_c))
 *   t_gpu = (t_sch + t_act) / (f / F)
 *   t_inf = t_gpu + b_i (input + output bytes) / bandwidth      (t_load + t_feedback)
 *   throughput = 1000 b_i / (t_gpu + b_i output bytes / bandwidth)
 * exactly as iGniter's predict(); a non-positive solo active time or
 * frequency gives an infinite latency and zero throughput.
 *
 * Ownership: a CsIgniterCoefs owns everything it hands out; free with
 * cs_igniter_coefs_free (accepts NULL). Nothing here is global.
 */
#ifndef CS_IGNITER_COEF_H
#define CS_IGNITER_COEF_H

#include <cjson/cJSON.h>
#include <glib.h>

G_BEGIN_DECLS

#define CS_IGNITER_FORMAT "clustersim-igniter"
#define CS_IGNITER_FORMAT_VERSION 1

/* One model's fitted coefficients. */
typedef struct {
  char *name;           /* model name as in the profiles */
  int kernels;          /* kernels per inference */
  double input_bytes;   /* per request, host to device */
  double output_bytes;  /* per request, device to host */
  double idle_ms;       /* GPU idle (scheduling) time of one batch alone */
  double act[5];        /* k1..k5 of t_act_solo above */
  double power_k, power_c; /* a_p (W per req/s), c_p (W) */
  double l2_k, l2_c;       /* a_c (% per req/s), c_c (%) */
  double k_l2;             /* relative active-time increase per % of co-located L2 use */
} CsIgniterModel;

typedef struct {
  char *gpu_type;          /* GPU type the measurements were taken on */
  char *source;            /* the file's provenance text */
  double max_freq_mhz;     /* F */
  double power_cap_w;
  double idle_power_w;
  double bandwidth;        /* PCIe bytes per ms */
  double share_unit_pct;   /* step of MPS shares, % */
  double freq_slope;       /* s, MHz per W above the cap (0: no throttling seen) */
  double sch_alpha, sch_beta; /* extra idle ms per kernel = alpha n + beta, n >= 2 */
  CsIgniterModel *models;  /* n_models entries, file order */
  int n_models;
} CsIgniterCoefs;

/* Loads and fits a file (name is used in messages). Returns NULL with error
 * (CS_INPUT_ERROR) naming the file, the JSON path and what was expected when
 * the file cannot be read, is not a version-1 clustersim-igniter document, or
 * its measurements cannot be fitted (too few or degenerate points). */
CsIgniterCoefs *cs_igniter_coefs_load_file(const char *path, GError **error);
/* The same from a parsed document (not taken over); name is used in messages. */
CsIgniterCoefs *cs_igniter_coefs_load_json(const cJSON *root, const char *name,
                                           GError **error);
void cs_igniter_coefs_free(CsIgniterCoefs *c);

/* Returns the model called name, or NULL. */
const CsIgniterModel *cs_igniter_coefs_find(const CsIgniterCoefs *c, const char *name);

/* Solo active time t_act_solo(batch, share_pct), ms. */
double cs_igniter_active_solo_ms(const CsIgniterModel *m, int batch, double share_pct);

/* One workload on a GPU: model, batch size, MPS share in %. */
typedef struct {
  const CsIgniterModel *model;
  int batch;
  double share_pct;
} CsIgniterWorkload;

typedef struct {
  double latency_ms;     /* t_inf */
  double gpu_ms;         /* t_gpu */
  double throughput_rps; /* batches back to back */
} CsIgniterPrediction;

/* Predicts every workload of w[0..n-1] co-located on one GPU; out has n
 * entries. n >= 1. */
void cs_igniter_predict(const CsIgniterCoefs *c, const CsIgniterWorkload *w, int n,
                        CsIgniterPrediction *out);

G_END_DECLS

#endif
