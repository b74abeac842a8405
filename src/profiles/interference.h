/* Interference data for the GPU execution model (docs/gpu-model.md).
 *
 * A file of format "clustersim-interference" (version 1) describes how
 * co-located work slows down on one kind of GPU:
 *  - per model, a latency-vs-MPS-share table (batch x share -> latency) and
 *    L2 / DRAM utilisation tables over the same axes, from solo runs;
 *  - per ordered pair (victim model, aggressor model), a slowdown factor
 *    measured for concurrent execution;
 *  - per ordered pair, either a measured slowdown factor, or a scale on the
 *    model's excess for that pair (the model keeps its batch and share
 *    dependence, the pair its level);
 *  - a model (the "fallback") for every pair without a measured factor, one of
 *      batch_share: excess = c * b_a^x * (4 s_a s_v)^z
 *        b_a the aggressor's batch, s the SM share each may occupy
 *        (min(MPS share, demand)): pressure grows with the aggressor's batch
 *        and share, sensitivity with the victim's share (docs/gpu-model.md);
 *      linear: excess = constant + victim * u_victim + aggressor * u_aggressor
 *        with u a model's utilisation (fraction of peak, metric l2 or dram)
 *        at its batch size and MPS share, default_util when it has no table;
 *  - how several aggressors' excesses combine into the victim's factor F:
 *      product: F = prod (1 + e_a)
 *      norm:    F = 1 + (sum e_a^q)^(1/q); with q = 1/z the batch_share
 *               model's aggressors act as one holding the sum of their shares.
 *
 * Tables need not be rectangular: the loader completes the grid of all the
 * batch sizes and shares that occur by the ratio rule of docs/gpu-model.md
 * and fails if a cell cannot be completed. Queries interpolate linearly in
 * batch, and in 1/share (latency) or share (utilisation); outside the grid
 * they clamp to its edge, except latency below the smallest share, which
 * grows as 1/share.
 *
 * A set is one file; which GPU types it applies to is the caller's decision
 * (the file's "description" says where the numbers were measured). Models are
 * referred to by index (cs_interference_set_find) so the hot path never
 * compares strings. Ownership: the set owns everything; free with
 * cs_interference_set_free (accepts NULL). Nothing here is global.
 */
#ifndef CS_INTERFERENCE_H
#define CS_INTERFERENCE_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define CS_INTERFERENCE_FORMAT "clustersim-interference"
#define CS_INTERFERENCE_FORMAT_VERSION 1

typedef enum {
  CS_UTIL_L2 = 0, /* L2 cache utilisation */
  CS_UTIL_DRAM,   /* DRAM bandwidth utilisation */
  CS_UTIL_N_METRICS
} CsUtilMetric;

typedef enum {
  CS_FALLBACK_BATCH_SHARE = 0, /* c * b_a^x * (4 s_a s_v)^z */
  CS_FALLBACK_LINEAR           /* constant + victim * u_v + aggressor * u_a */
} CsFallbackForm;

typedef enum {
  CS_COMBINE_PRODUCT = 0,      /* F = prod (1 + e_a) */
  CS_COMBINE_NORM              /* F = 1 + (sum e_a^q)^(1/q) */
} CsCombineRule;

/* The model for pairs without a measured factor, and the combining rule
 * (see above). */
typedef struct {
  CsFallbackForm form;
  /* batch_share */
  double c;              /* excess at batch 1 and s_a s_v = 1/4, >= 0 */
  double batch_exponent; /* x */
  double share_exponent; /* z */
  double fixed_exponent; /* w: the victim's fixed part phi enters as max(phi, 0.05)^w; 0 = off */
  /* linear */
  double constant;       /* c0 >= 0 */
  double victim;         /* coefficient of the victim's utilisation (fraction) */
  double aggressor;      /* coefficient of the aggressor's utilisation (fraction) */
  CsUtilMetric metric;   /* which utilisation the two terms use */
  double default_util;   /* utilisation (fraction) of a model without a table */
  /* combining */
  CsCombineRule combine;
  double combine_exponent; /* q >= 1 (norm) */
} CsInterferenceFallback;

/* Built-in default when no interference data is given, and for a file
 * without a "fallback": the v100_igniter group of the joint fit that
 * `clustersim calibrate` runs on the shipped pair data of every GPU type at
 * once (calibrate_joint.h: z shared with Gpulet's A100 rows; no victim term,
 * fixed_exponent 0), combined by the norm with q = 1/z. A GPU type without
 * pair data of its own gets it (docs/gpu-model.md says how far that carries).
 * Tests check these equal the fit. */
#define CS_INTERFERENCE_DEFAULT_C 0.08085
#define CS_INTERFERENCE_DEFAULT_BATCH_EXPONENT 0.1395
#define CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT 0.4256
/* Defaults of a linear fallback's fields (the constant the same data fits). */
#define CS_INTERFERENCE_DEFAULT_CONSTANT 0.1014
#define CS_INTERFERENCE_DEFAULT_UTIL 0.1688
void cs_interference_fallback_init(CsInterferenceFallback *fb);

/* Slowdown (>= 1) of a victim with utilisation u_victim next to an aggressor
 * with utilisation u_aggressor (fractions) under a linear fallback. */
double cs_interference_fallback_eval(const CsInterferenceFallback *fb, double u_victim,
                                     double u_aggressor);

/* One side of a co-located pair, as the fallback sees it. */
typedef struct {
  int batch;
  double sm_share; /* fraction of the SMs it may occupy, (0, 1] */
  double util;     /* utilisation (fraction) for the linear form */
  double fixed;    /* phi: the part of its isolated latency that does not scale with batch
                      or SMs, 1 - cs_share_scalable_fraction (share_rule.h), in [0, 1];
                      read on the victim side when fixed_exponent != 0 */
} CsPairSide;

/* The floor of phi in the victim term: a batch whose latency is all
 * batch-proportional still has launches and synchronisations to lose. */
#define CS_INTERFERENCE_MIN_FIXED 0.05

/* Excess (slowdown - 1, >= 0) of victim v next to aggressor a under fb's
 * form. */
double cs_interference_fallback_excess(const CsInterferenceFallback *fb, const CsPairSide *v,
                                       const CsPairSide *a);

/* The combining rule in two steps: term(e) of each aggressor's excess is
 * summed, factor(sum) is the victim's F (>= 1; 1 for a sum of 0). */
double cs_interference_combine_term(const CsInterferenceFallback *fb, double excess);
double cs_interference_combine_factor(const CsInterferenceFallback *fb, double sum);

typedef struct CsInterferenceSet CsInterferenceSet;

/* Loads a file. Returns NULL with error set (domain CS_INPUT_ERROR; message
 * naming the file, the JSON path and what was expected) when the file cannot
 * be read, is not JSON, is not a valid interference file of version 1, or has
 * a table that cannot be completed. */
CsInterferenceSet *cs_interference_set_load_file(const char *path, GError **error);
/* Same from a string; name is used in messages. */
CsInterferenceSet *cs_interference_set_load_data(const char *json, const char *name,
                                                 GError **error);
void cs_interference_set_free(CsInterferenceSet *set);

/* "FILE: SOURCE" of the file; owned by the set. */
const char *cs_interference_set_source(const CsInterferenceSet *set);
/* Free-text description of the hardware; owned by the set, may be "". */
const char *cs_interference_set_description(const CsInterferenceSet *set);
/* The fallback of the file (its "fallback" object, else the built-in default). */
const CsInterferenceFallback *cs_interference_set_fallback(const CsInterferenceSet *set);

/* Number of models, the index of a model by name (-1 if absent; set may be
 * NULL), the name of index i (owned by the set). */
int cs_interference_set_n_models(const CsInterferenceSet *set);
int cs_interference_set_find(const CsInterferenceSet *set, const char *model);
const char *cs_interference_set_model_name(const CsInterferenceSet *set, int i);

/* Model i's measured MIG table (mig_table.h, docs/gpu-model.md "MIG"), or
 * NULL when it has none (or i is not a model of the set). */
typedef struct CsMigTable CsMigTable;
const CsMigTable *cs_interference_mig(const CsInterferenceSet *set, int i);

/* TRUE if model i has a latency-vs-share table. */
gboolean cs_interference_has_share_table(const CsInterferenceSet *set, int i);

/* Latency (ms) of one batch of model i alone under an MPS share (fraction in
 * (0, 1]; 0 means no share = 1) from the completed table. NAN if the model
 * has no table. Batch sizes outside the table clamp to its edge. */
double cs_interference_share_latency_ms(const CsInterferenceSet *set, int i, int batch,
                                        double share);

/* Slowdown (>= 1) of model i at batch under share relative to the same batch
 * with the whole GPU: latency(b, share) / latency(b, 1), at least 1. NAN if
 * the model has no table. */
double cs_interference_share_slowdown(const CsInterferenceSet *set, int i, int batch,
                                      double share);

/* One measured cell of a latency-vs-share table. */
typedef struct {
  int batch;
  double share;      /* fraction, (0, 1] */
  double latency_ms;
} CsShareCell;

/* The cells of model i's latency-vs-share table that the file gives (not
 * those completed), by batch then share: returns their number and sets
 * *cells (g_free it; NULL when 0). 0 when the model has no table. */
int cs_interference_share_cells(const CsInterferenceSet *set, int i, CsShareCell **cells);

/* Utilisation (fraction of peak) of model i at batch under share, NAN if the
 * model has no table for that metric. */
double cs_interference_util(const CsInterferenceSet *set, int i, CsUtilMetric metric, int batch,
                            double share);

/* Measured slowdown of victim next to aggressor (model indices), NAN if the
 * pair is not in the table with a "slowdown" (or an index is -1). */
double cs_interference_pair(const CsInterferenceSet *set, int victim, int aggressor);

/* Scale on the fallback's excess for victim next to aggressor, NAN if the
 * pair is not in the table with a "scale" (or an index is -1). */
double cs_interference_pair_scale(const CsInterferenceSet *set, int victim, int aggressor);

G_END_DECLS

#endif
