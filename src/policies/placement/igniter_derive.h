/* iGniter's measurements derived from the simulator's own GPU model.
 *
 * iGniter (igniter_coef.h) needs what its profiler measures on a real GPU: the
 * latency of one batch alone over a grid of batch sizes and MPS shares, L2
 * utilisation, one pair co-location per model, and power/frequency and
 * kernel-scheduling scans. For a profile that iGniter never measured (the
 * thesis' V100 table) this module measures the simulator instead: it drives
 * src/gpu/gpu_exec (the model that executes every simulated batch) exactly as
 * the engine would for a replica on one GPU of the given type, and writes the
 * results as a "clustersim-igniter" version-1 document whose "source" says
 * what was measured and what stands in for what the simulator does not model:
 *
 *   gpu_latency_ms  one batch alone, MPS mode, share r of the grid: the
 *                   completion time gpu_exec gives (isolated latency from the
 *                   profile, demand = the nearest profiled batch's WSM, the
 *                   cluster's MPS gamma and interference tables);
 *   pair            two copies of the model at batch 16, 50 % each, started
 *                   together: active time alone and in the pair (iGniter's
 *                   pair measurement);
 *   l2_points       stand-in: the simulator has no L2 cache. The value is the
 *                   L2 utilisation the GPU model attributes to the batch at
 *                   that share (the interference file's L2 table, else the
 *                   fallback's default utilisation); with it as pair.l2_util_pct
 *                   the loader's k_L2 makes iGniter's predictor reproduce the
 *                   measured pair slowdown;
 *   power/frequency absent: no power or throttling model. Every power cell
 *                   equals idle power = power cap (placeholders of 1 W), every
 *                   frequency the maximum (placeholder 1 MHz): never throttled;
 *   scheduling      absent: the fluid model has no gaps between kernels, so
 *                   idle_ms and the scan's idle time per kernel are 0
 *                   ("kernels" = 1 is a placeholder);
 *   transfers       the profile's latency includes the host-device copies
 *                   (docs/gpu-model.md), so input/output bytes are 0 and the
 *                   PCIe bandwidth (1 byte/ms) is a placeholder.
 * The share unit is 2 SMs of the GPU type (iGniter's 2.5 % on an 80-SM V100),
 * 2.5 % when the profile does not give the SM count.
 *
 * Deterministic: the same inputs give the same document, byte for byte once
 * printed. Nothing here is global.
 */
#ifndef CS_IGNITER_DERIVE_H
#define CS_IGNITER_DERIVE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "profiles/igniter_coef.h"
#include "profiles/interference.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

/* Default grid: batches 1, 2, 4, ..., 128 (iGniter's 1/16/32 and every batch
 * the thesis profiled), shares 10, 20, ..., 100 % (iGniter's 10/50/100 and
 * the steps between). */
#define CS_IGNITER_DERIVE_N_BATCHES 8
#define CS_IGNITER_DERIVE_N_SHARES 10
/* The pair measurement, as iGniter's: two copies at this batch and share. */
#define CS_IGNITER_DERIVE_PAIR_BATCH 16
#define CS_IGNITER_DERIVE_PAIR_SHARE_PCT 50.0

typedef struct {
  const CsProfileSet *profiles;          /* required */
  const char *gpu_type;                  /* required: a GPU type of profiles */
  const char *const *models;             /* n_models distinct names; NULL: every model profiled
                                            on gpu_type, in load order */
  int n_models;
  double mps_gamma;                      /* exponent of the power share rule; 0 means 1.0 */
  gboolean mps_share_power;              /* the power share rule (r/d)^gamma instead of the
                                            default scalable one (gpu_exec.h) */
  const CsInterferenceSet *interference; /* the cluster's tables, or NULL (built-in fallback) */
  const char *profile_label;             /* names the profiles in "source", or NULL */
  const char *interference_label;        /* names the interference file in "source", or NULL */
  const int *batches;                    /* grid batches, increasing, >= 1; NULL: default */
  int n_batches;                         /* >= 3 when batches is given */
  const double *shares_pct;              /* grid shares, increasing, in (0, 100]; NULL: default */
  int n_shares;                          /* >= 3 when shares_pct is given */
} CsIgniterDeriveOptions;

/* Measures and returns the document (cJSON_Delete it). Returns NULL with
 * error (CS_PLACEMENT_ERROR) when gpu_type is not in the profiles, a model
 * has no profile on it, or the interference file gives a model no L2 use at
 * the pair cell (CS_PLACEMENT_ERROR_PROFILE), or an option is invalid:
 * no model, a model listed twice, a grid that is not increasing or too small,
 * a gamma <= 0 (CS_PLACEMENT_ERROR_PARAMS). */
cJSON *cs_igniter_derive_document(const CsIgniterDeriveOptions *opt, GError **error);

/* The same, then loaded and fitted by cs_igniter_coefs_load_json (one fitting
 * path for measured and derived files). Returns NULL with error as above, or
 * the loader's error (CS_INPUT_ERROR) if the measurements cannot be fitted. */
CsIgniterCoefs *cs_igniter_derive(const CsIgniterDeriveOptions *opt, GError **error);

G_END_DECLS

#endif
