/* Why a validation's simulated and real goodput disagree (clustersim
 * validate, docs/replay.md): from what the report knows, the likely cause
 * in a sentence, so that "replay not valid" or a bare 0.00 against 48.85
 * req/s is not all a reader gets.
 *
 * The causes it weighs, each from a figure the validation measured:
 *   - the plan's load on the measured profile (cs_diagnosis_load): at or
 *     beyond capacity the simulated queue grows through the run, and a real
 *     backend a little faster keeps up, so goodput swings between about 0
 *     and the rate on a few % of speed;
 *   - the real batches' speed against the profile (the median signed
 *     per-batch error) next to the machine's drift (the isolated latencies
 *     measured again after the replay): batches off the profile while the
 *     profile itself held means the profile was measured in a minute of
 *     another speed, or the backend runs differently under the replay's load;
 *     both moved means the machine changed speed;
 *   - the replay's own validity (its scheduling later than its bound);
 *   - the machine's other load while the profile was measured or during the
 *     replay (a probe thread of normal priority woke late, probe.h). */
#ifndef CS_REPLAY_DIAGNOSIS_H
#define CS_REPLAY_DIAGNOSIS_H

#include <glib.h>

#include "clustersim/clustersim.h"

/* Simulated and real goodput disagree "wildly" when they differ by more
 * than this fraction of the larger (and by more than 0.5 req/s). */
#define CS_DIAGNOSIS_GOODPUT_GAP 0.25
/* A median signed batch error beyond this (%) is a speed difference. */
#define CS_DIAGNOSIS_BATCH_PCT 10.0
/* Drift beyond this (%) is the machine's (the report's own bound). */
#define CS_DIAGNOSIS_DRIFT_PCT 5.0
/* Load at or above this is near capacity. */
#define CS_DIAGNOSIS_NEAR_LOAD 0.9

/* The load the plan puts on model's replicas on the measured profile
 * (profile, GPU type gpu_type), from sim's placement and the model's
 * offered rate: offered / (what its replicas run back to back at their
 * batch sizes, summed), and, when the GPUs time-slice (mps FALSE), at
 * least the busiest of its GPUs' load (the sum of that over the replicas
 * each GPU holds: their batches take turns). 1 is capacity. NAN when sim
 * has no placement (a centralized policy), the model no replica or the
 * profile no point. */
double cs_diagnosis_load(const CsResults *sim, const CsProfileSet *profile, const char *gpu_type,
                         gboolean mps, int model);

typedef struct {
  const char *model;
  double sim_goodput_rps, real_goodput_rps;
  double offered_rps;
  double load;             /* cs_diagnosis_load; NAN unknown */
  double batch_signed_pct; /* median signed batch error, real vs simulated (+: real slower); NAN */
  double drift_pct;        /* the machine's drift; NAN unknown */
  gboolean replay_valid;
  /* The machine was busy (probe.h) busy_when ("during the replay", "while
   * the profile was measured", ...; NULL: not busy): other work delayed
   * threads of normal priority by busy_wakeup_p90_ms (the probe's p90). */
  const char *busy_when;
  double busy_wakeup_p90_ms;
} CsDiagnosisFacts;

/* NULL when the simulated and real goodput agree (within
 * CS_DIAGNOSIS_GOODPUT_GAP); else one paragraph naming every cause that
 * applies, the likeliest first, or saying that none of them does (g_free). */
char *cs_diagnosis_text(const CsDiagnosisFacts *f);

#endif
