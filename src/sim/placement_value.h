/* The placement as a value (public side: clustersim/placement.h): its fields,
 * for the engine and the placement framework, and its copy. */
#ifndef CS_PLACEMENT_VALUE_H
#define CS_PLACEMENT_VALUE_H

#include <glib.h>

#include "clustersim/placement.h"

G_BEGIN_DECLS

/* A placement (public side: clustersim/placement.h). The engine and the
 * placement framework read the fields; policies build it with
 * cs_placement_add and the setters. */
struct CsPlacement {
  GArray *replicas;         /* of CsReplica, in the order the policy placed them */
  int n_models;
  double *expected_goodput; /* per model, req/s, the policy's own prediction */
  double expected_total;    /* their sum in model order (kept by the setter) */
  GString *log;             /* human-readable notes of the policy (solver status, choices) */
  int creq_metric;          /* CsCreqMetric the policy used as Creq, or -1 if none */
  int gpus_needed;          /* GPUs the policy needs to serve everything, or -1 */
};

/* Returns an exact copy of p (expected_total included). */
CsPlacement *cs_placement_copy(const CsPlacement *p);

G_END_DECLS

#endif
