/* `clustersim calibrate --measured`: the shipped GPU model scored on measured
 * co-located rows (measured.h), docs/gpu-model.md "Scoring measured rows".
 *
 * Every co-located row (kind colocated, not a MIG row, time quota 100 % or
 * blank) is simulated with the real CsGpuExec (gpu_exec.h) under MPS: the
 * victim (the row's model, batch, share) and each partner (model, batch,
 * share; each of its copies a worker of its own) as closed-loop workers on
 * one GPU (a batch restarts the instant the previous one ends, as the sources
 * measured), isolated latencies from the profile (as the engine takes them:
 * cs_model_profile_exec_ns, demand from the profile's WSM, the share rule's
 * fixed part from cs_share_scalable_fraction), share tables and pair scales
 * from the interference data (a pair it has no entry for: the fallback
 * model alone). The victim's mean latency is the prediction; the error is
 * |sim - real| / real. Besides the model, three baselines:
 *   none         the same simulation without interference;
 *   constant     none x one slowdown K fitted on the shipped pair data
 *                (log least squares: K = exp(mean log(latency /
 *                isolated_latency_ms))) over the rows of the same source when
 *                the shipped data has any, else over all of it;
 *   pair_factor  none x one factor per ordered pair fitted (log least
 *                squares) on the scored rows themselves;
 *   pair_loglinear  none x exp(a + b log b_v + c log b_a + d log s_v +
 *                e log s_a) per ordered pair, fitted (linear least squares
 *                of log(measured / none), truncated SVD) on the scored rows
 *                themselves (the first partner's batch and share): the floor
 *                of ../shared/data/measured/README.md, in sample.
 * Statistics (median, p90, n) per source, per ordered pair of a source
 * (victim, the partners' models joined by "+") and in total. Rows not scored are counted
 * per reason. Deterministic; nothing global.
 */
#ifndef CS_CALIBRATE_MEASURED_H
#define CS_CALIBRATE_MEASURED_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdio.h>

#include "calibrate/calibrate.h"
#include "profiles/interference.h"
#include "profiles/measured.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

typedef enum {
  CS_SCORE_MODEL = 0,
  CS_SCORE_NONE,
  CS_SCORE_CONSTANT,
  CS_SCORE_PAIR_FACTOR,
  CS_SCORE_PAIR_LOGLINEAR,
  CS_SCORE_N_METHODS
} CsScoreMethod;

/* "model", "none", "constant", "pair_factor", "pair_loglinear". */
const char *cs_score_method_name(CsScoreMethod m);

typedef struct {
  CsMeasuredFile *const *files;       /* the rows to score */
  int n_files;
  const CsProfileSet *profile;        /* isolated latencies */
  const char *gpu_type;               /* of the profile */
  const CsInterferenceSet *tables;    /* NULL: the built-in fallback, no share tables */
  CsMeasuredFile *const *shipped;     /* pair data for the constant baseline; may be 0 */
  int n_shipped;
  double gamma;                       /* power share rule's exponent; 0: 1.0 */
} CsScoreOptions;

typedef struct {
  char *name;                         /* source, or "victim|aggressor" */
  gboolean measured;                  /* pairs: the interference data has this pair */
  CsCalibStat stat[CS_SCORE_N_METHODS];
  /* sources: the constant baseline's K (NAN when the shipped data has no
   * usable row), the rows it was fitted on, and whether those are the
   * source's own (else every shipped pair row) */
  double constant;
  int constant_rows;
  gboolean constant_own;
} CsScoreGroup;

typedef struct {
  int n_rows;                         /* scored */
  /* per scored row, in file order */
  double *measured_ms, *sim_ms[CS_SCORE_N_METHODS];
  int *row_source, *row_pair;         /* indices into sources / pairs */
  CsScoreGroup total;
  int n_sources, n_pairs;
  CsScoreGroup *sources, *pairs;      /* sorted by name; a pair's name is
                                         "SOURCE\tVICTIM|PARTNERS" */
  GPtrArray *gpus;                    /* the gpu values of the scored rows, first seen first */
  GPtrArray *skipped;                 /* "N rows: REASON" */
  int n_skipped;
} CsScoreResult;

/* Scores. Returns NULL with error set when no row can be scored (the
 * message lists why the rows were not). */
CsScoreResult *cs_score_measured(const CsScoreOptions *opt, GError **error);
void cs_score_result_free(CsScoreResult *r);

/* The report as text, and as a JSON object with "total": {"rows",
 * "median_pct", "p90_pct", "max_pct", "baselines"}, "baselines", "sources"
 * (each with its "constant"), "pairs", "gpus", "not_scored". */
void cs_score_print(const CsScoreResult *r, const char *header, FILE *out);
cJSON *cs_score_json(const CsScoreResult *r);

G_END_DECLS

#endif
