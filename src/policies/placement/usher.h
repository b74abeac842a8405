/* Usher's placement (OSDI'24 section 3.3) as the thesis implemented it
 * (thesis 5.2.2; POLICIES.md), with the thesis' metric variants WAO-Usher and
 * WSM-Usher (5.3). The registry entries ("usher", "wao-usher", "wsm-usher")
 * read their parameters from JSON and call cs_usher_place(); tests call it
 * directly to see the extra facts in CsUsherInfo.
 *
 * Steps (details and every choice made where the sources are vague:
 * docs/policies.md):
 *  1. Per model, the candidate batch sizes (place_common.h) and c_l, the
 *     replicas needed to serve the whole rate at the largest batch size that
 *     meets the SLO.
 *  2. Grouping: rounds of minimum-weight maximum-cardinality matching
 *     (matching.h) on D = |sum Creq - sum Mreq| of the average Creq/Mreq of
 *     each model, never forming a group above max_group_size.
 *  3. Groups one after another: enumerate every configuration (batch size and
 *     replication factor i * c_l per model), place it greedily (C-heavy and
 *     M-heavy alternating, largest Creq+Mreq first; own GPUs, then other used
 *     GPUs, then new ones), keep the best (fixed: most expected goodput;
 *     min_gpus: all load served with the fewest new GPUs); ties keep the
 *     first configuration in enumeration order.
 *
 * The usher_schedule.c half does step 3; usher.c the rest.
 */
#ifndef CS_USHER_H
#define CS_USHER_H

#include <glib.h>

#include "matching.h"
#include "place_common.h"
#include "clustersim/placement.h"

G_BEGIN_DECLS

typedef enum {
  CS_USHER_FIXED,    /* maximise expected goodput on the cluster's GPUs */
  CS_USHER_MIN_GPUS, /* serve every model's rate with as few GPUs as possible */
} CsUsherMode;

/* Which of two fixed-mode configurations of equal expected goodput a group
 * keeps. */
typedef enum {
  CS_USHER_TIE_FEWEST_GPUS, /* the one opening fewer GPUs, then the first: the thesis'
                             * "maximizing goodput and minimizing cost" (5.2.1) */
  CS_USHER_TIE_FIRST,       /* the first in enumeration order, whatever it costs */
} CsUsherTieBreak;

typedef struct {
  CsCreqMetric metric;      /* column used as Creq */
  CsUsherMode mode;
  CsUsherTieBreak tie_break; /* fixed mode only; min_gpus always minimises GPUs */
  int max_group_size;       /* 4 in the paper and the thesis */
  const int *batches;       /* candidate batch sizes, ascending (borrowed) */
  int n_batches;
  gboolean mps_shares;      /* give each replica MPS share = Creq/100 (thesis: yes) */
  const int *groups;        /* NULL: step 2 forms the groups; else n_models entries,
                               each model's group in 0..n_models-1, groups placed in
                               increasing index (unused indices skipped); borrowed */
} CsUsherOptions;

/* What the placement does not show by itself. */
typedef struct {
  int gpus_needed;      /* GPUs the plan uses; in min_gpus mode it may exceed the
                           cluster, whose GPUs then get only the first part */
  int n_groups;         /* groups formed in step 2 */
  int *group_of_model;  /* n_models entries: group index in placement order,
                           -1 for a model without any usable batch size; owned */
  long configurations;  /* configurations evaluated over all groups */
} CsUsherInfo;

/* Frees the arrays inside info (not info itself); accepts a zeroed struct. */
void cs_usher_info_clear(CsUsherInfo *info);

/* Computes Usher's placement. info may be NULL; otherwise it is filled on
 * success (clear it with cs_usher_info_clear). Returns NULL with error set
 * when a model has no profile on the cluster's GPU type, the cluster mixes GPU
 * types, there are more models than the matching supports
 * (CS_MATCHING_MAX_NODES), opt->groups is out of range, or a group has too
 * many configurations to enumerate (more than 2e7). Models Usher cannot
 * serve get no replica and a line in the log. */
CsPlacement *cs_usher_place(const CsPlacementProblem *in, const CsUsherOptions *opt,
                            CsUsherInfo *info, GError **error);

/* ---- Internal: shared by usher.c and usher_schedule.c ---------------------- */

/* One model as the scheduler sees it. */
typedef struct {
  int model;                /* index into the input's models */
  const char *name;         /* model name (borrowed from the input) */
  double rate;              /* offered rate, req/s */
  CsModelOptions cand;      /* candidate batch sizes (fit an empty GPU) */
  int c_l;                  /* minimum replication factor; 0 = cannot be served */
  int *choice_batch;        /* configuration choices: index into cand.opts ... */
  int *choice_rf;           /* ... and replication factor; batch-major, ascending */
  int n_choices;
} CsUsherModel;

/* GPUs while groups are placed one after another. */
typedef struct {
  double *creq;             /* summed Creq of the replicas on each GPU, % */
  double *mreq;             /* summed Mreq, % */
  int *owner;               /* group that opened the GPU, -1 while unused */
  int n;                    /* GPUs in use or available */
  int capacity;             /* allocated entries */
  gboolean unbounded;       /* min_gpus mode: a new GPU can always be added */
} CsUsherGpus;

/* Chooses and places the configuration of one group (group_index gi) given
 * the GPUs left by earlier groups, appending its replicas to p (GPU indices
 * may exceed the cluster in min_gpus mode; the caller truncates) and updating
 * gpus. Returns the number of configurations evaluated. Writes notes to
 * log. Never fails. */
long cs_usher_schedule_group(const CsUsherModel *const *members, int n_members, int gi,
                             CsUsherGpus *gpus, const CsUsherOptions *opt, CsPlacement *p,
                             GString *log);

G_END_DECLS

#endif
