/* The framework's side of placement policies (the policies' side is
 * clustersim/placement.h; the placement's fields are sim/placement_value.h):
 * the built-in policies (placement_registry.c), and running a policy on the
 * scenario's "placement" object with the checks of what it returns. */
#ifndef CS_PLACEMENT_H
#define CS_PLACEMENT_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

#include "clustersim/placement.h"
#include "sim/placement_value.h"
#include "profiles/interference.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

#define CS_PLACEMENT_ERROR (cs_placement_error_quark())
GQuark cs_placement_error_quark(void);

typedef enum {
  CS_PLACEMENT_ERROR_PARAMS,     /* bad policy parameters */
  CS_PLACEMENT_ERROR_PROFILE,    /* a model has no profile on a GPU type it needs */
  CS_PLACEMENT_ERROR_INFEASIBLE, /* the policy's own model has no solution */
  CS_PLACEMENT_ERROR_SOLVER,     /* the LP/MILP solver failed */
} CsPlacementErrorCode;

/* The scenario a problem comes from (public side: clustersim/placement.h).
 * The scenario layer fills it; cs_placement_simulate and
 * cs_placement_problem_place (placement.c) call through it, so that the
 * policies' library does not depend on the scenario's. */
struct CsPlacementSimulator {
  gboolean (*simulate)(const CsPlacementProblem *pb, const CsPlacement *candidate,
                       const uint64_t *seeds, int n_seeds, double duration_s,
                       CsPlacementScore *out, GError **error);
  CsPlacement *(*place)(const CsPlacementProblem *pb, const char *params_json, GError **error);
  void *state; /* the scenario layer's */
};

/* Returns the built-in policy registered under name, or NULL. */
const CsPlacementPolicy *cs_placement_policy_lookup(const char *name);
/* Returns the NULL-terminated list of built-in policies, in listing order. */
const CsPlacementPolicy *const *cs_placement_policy_list(void);

/* Runs policy on problem with params (the scenario's "placement" object, or
 * NULL for none; file and path locate it for messages), then checks what it
 * returned: every field of params was asked for, every replica is in range
 * and has a profile, and expected goodputs are finite and >= 0. Returns the
 * placement, or NULL with error set. */
CsPlacement *cs_placement_run(const CsPlacementPolicy *policy, void *user_data,
                              const CsPlacementProblem *problem, const cJSON *params,
                              const char *file, const char *path, GError **error);

/* Releases what placement solvers keep per thread: GLPK's environment, which
 * it allocates in thread-local storage on first use and frees only when asked
 * (glp_free_env). A thread that ran placements and ends without calling this
 * leaks it; calling it when nothing is held is harmless. */
void cs_placement_thread_release(void);

G_END_DECLS

#endif
