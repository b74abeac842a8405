/* The thesis' MILP placement (5.4.3, "AO-MILP" / "WSM-MILP"), solved with
 * GLPK. The registry entry "milp" (aliases "ao-milp", "wsm-milp") reads the
 * parameters from JSON; tests call cs_milp_place() to see the solver facts.
 *
 * Variables x[m,b,g] (binary: model m with batch b on GPU g), y[m,b] (binary:
 * m runs batch b) and w_m (continuous goodput credit):
 *   max sum_m w_m
 *   w_m <= rate_m;  w_m <= sum_{b,g} goodput[m,b] x[m,b,g]
 *   sum_b y[m,b] <= 1;  x[m,b,g] <= y[m,b]
 *   per GPU g: sum creq x <= 100, sum mreq x <= 100
 *   per GPU g and model m: sum_b x[m,b,g] <= 1
 *   per model m: sum x <= max_rep_m (default: the number of GPUs)
 * Only batch sizes of the candidate list (place_common.h) whose latency meets
 * the SLO get an x. The formulation takes coefficients per GPU, so mixed GPU
 * types work (the thesis' suggested extension); the thesis ran one type.
 *
 * Ties: the thesis' solver returns any optimum (it picked batch 64 for
 * efficientnet_b7). prefer_small_batch adds a second, lexicographic solve:
 * total goodput held at least the first optimum minus 1e-7 req/s, minimise
 * sum_m batch(m) * K + (number of replicas), K larger than any replica count.
 */
#ifndef CS_MILP_H
#define CS_MILP_H

#include <glib.h>

#include "place_common.h"
#include "clustersim/placement.h"

G_BEGIN_DECLS

/* Asked at every branch-and-bound callback of GLPK, in place of a clock:
 * has_solution says whether an integer solution is known. Returning TRUE ends
 * the solve exactly as the time limit does (same status, log and error). For
 * tests: GLPK's own limit reads the wall clock, so where it cuts a solve
 * depends on machine speed. */
typedef gboolean (*CsMilpTimeUp)(gboolean has_solution, void *data);

typedef enum {
  CS_MILP_SOLVER_GLPK = 0,
  CS_MILP_SOLVER_CBC    /* COIN-OR CBC, when the build found it (cs_milp_have_cbc) */
} CsMilpSolver;

/* Which model is solved. PER_GPU is the thesis' (above): a binary per
 * (model, batch, GPU), so it grows with the GPUs and their symmetry.
 * CONFIGURATIONS counts GPUs per configuration (a set of (model, batch)
 * replicas that fits one GPU) per GPU type, generated as needed by column
 * generation (milp_config.c): its size does not grow with the number of
 * identical GPUs. AUTO: PER_GPU on at most 8 GPUs and 8 models (the
 * thesis' instances, whose placements and ties it keeps exactly),
 * CONFIGURATIONS beyond. */
typedef enum {
  CS_MILP_FORM_AUTO = 0,
  CS_MILP_FORM_PER_GPU,
  CS_MILP_FORM_CONFIGURATIONS
} CsMilpFormulation;

/* TRUE when this build can solve with CBC. */
gboolean cs_milp_have_cbc(void);

typedef struct {
  CsCreqMetric metric;
  double time_limit_s;          /* the whole call: construction and both solves; INFINITY:
                                   no time limit (node_limit then bounds the solves) */
  gboolean prefer_small_batch;  /* lexicographic second solve (see above) */
  const int *max_replicas;      /* n_models entries, or NULL for "number of GPUs" */
  const int *batches;           /* candidate batch sizes, ascending (borrowed) */
  int n_batches;
  gboolean mps_shares;          /* MPS share = Creq/100 per replica (thesis: no) */
  CsMilpSolver solver;          /* GLPK (default) or CBC (when built with it) */
  CsMilpFormulation formulation; /* AUTO (default), PER_GPU or CONFIGURATIONS */
  int enumerate_limit;          /* configurations: list them all when there are at most
                                   this many (0: 20000; negative: never, always column
                                   generation) */
  int node_limit;               /* > 0: each branch and bound (GLPK: the goodput solve, the
                                   tie-break solve, the configuration master; CBC: its
                                   maxNodes) explores at most this many nodes, the root
                                   included, then ends as the time limit does. Counts, not
                                   seconds: the same cut on any machine. 0: none */
  CsMilpTimeUp time_up;         /* NULL (users): GLPK's wall-clock time limit only; else
                                   also asked during both solves (tests) */
  void *time_up_data;           /* passed to time_up (borrowed) */
} CsMilpOptions;

typedef enum {
  CS_MILP_EMPTY,     /* nothing to decide (no GPU or no candidate): no solve */
  CS_MILP_OPTIMAL,   /* proven optimal */
  CS_MILP_FEASIBLE,  /* time or node limit hit: best solution found, see gap */
  CS_MILP_HEURISTIC, /* time or node limit hit before GLPK's first solution: the greedy start */
} CsMilpStatus;

typedef struct {
  CsMilpStatus status;
  double objective;      /* solver's total expected goodput, req/s */
  double gap;            /* relative MIP gap of the goodput solve: 0 when optimal,
                            NAN when unknown */
  gboolean tie_break_solved; /* prefer_small_batch: the second solve succeeded */
  int n_binaries;        /* per GPU: x and y variables; configurations: the y and
                            GPU-count (integer) variables of the last master */
  gboolean configurations; /* the configuration formulation was solved */
  double bound;          /* an upper bound on the total goodput proven by the solve
                            (the objective when optimal), NAN when none */
  int n_configurations;  /* configurations: columns generated (all of them when
                            they were enumerated) */
  gboolean enumerated;   /* configurations: every feasible one was a column */
  int cg_iterations;     /* configurations: column-generation rounds */
} CsMilpInfo;

/* Solves the MILP. info may be NULL. Returns the placement (replicas in model,
 * then GPU order) or NULL with error set: CS_PLACEMENT_ERROR_PROFILE when a
 * model has no profile on a GPU type of the cluster, CS_PLACEMENT_ERROR_SOLVER
 * when GLPK fails. The search starts from a greedy feasible placement, so a
 * time limit never leaves it without one: a time-limited solution (GLPK's
 * best, or the greedy start when GLPK had none of its own) is returned with
 * its status in info and a note in the log. */
CsPlacement *cs_milp_place(const CsPlacementProblem *in, const CsMilpOptions *opt,
                           CsMilpInfo *info, GError **error);

G_END_DECLS

#endif
