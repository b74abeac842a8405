/* The MILP's columns (milp.c) and its greedy start (milp_start.c). */
#ifndef CS_MILP_INTERNAL_H
#define CS_MILP_INTERNAL_H

#include <glpk.h>

#include "milp.h"

/* The problem and how its columns map back to replicas. */
typedef struct {
  glp_prob *lp;
  int n_models, n_batches, n_gpus;
  int *y_col;                  /* [m * n_batches + k]: column of y, 0 if none */
  int *x_col;                  /* [(m * n_batches + k) * n_gpus + g]: column of x, 0 if none */
  const CsBatchOption **x_opt; /* same index: the option behind x */
  int n_cols;
} MilpProblem;

static inline size_t milp_xi(const MilpProblem *pb, int m, int k, int g)
{
  return ((size_t)m * (size_t)pb->n_batches + (size_t)k) * (size_t)pb->n_gpus + (size_t)g;
}

/* Fills pb's column maps (y_col, x_col, x_opt, n_cols; lp left NULL) from
 * the candidates of every (model, GPU): columns 1..n_models are the w_m,
 * then y and x in (model, batch, GPU) order, each y before its first x. */
void cs_milp_index(MilpProblem *pb, const CsPlacementProblem *in, const CsMilpOptions *opt,
                   CsModelOptions *const *cand_of_gpu);

/* The batch index of model m's replica on GPU g in solution x (pb's
 * per-GPU columns, 1-based) into k_of[m * n_gpus + g]; entries without a
 * replica are left as they are. */
void cs_milp_k_of(const MilpProblem *pb, const double *x, int *k_of);

/* Frees pb's problem and maps; accepts a zeroed struct. */
void cs_milp_problem_clear(MilpProblem *pb);

/* What one solve gave, whichever solver ran it. */
typedef struct {
  int ret;          /* glp_intopt's code (CBC: 0, or GLP_ETMLIM when cut without a solution) */
  int status;       /* GLP_OPT, GLP_FEAS, or no solution */
  double objective; /* with a solution */
  double gap;       /* 0 when optimal, NAN when unknown */
} CsMilpSolveOut;

/* TRUE when the solve has an integer solution. */
gboolean cs_milp_has_solution(const CsMilpSolveOut *o);

/* How GLPK solves (milp.c says why): */
typedef enum {
  CS_MILP_SOLVE_THESIS, /* MIP presolver, pseudocost branching, no start: problems of the
                           thesis' size, whose placements stay exactly as they were */
  CS_MILP_SOLVE_LARGE,  /* the LP relaxation first, then branch and bound from start */
  CS_MILP_SOLVE_MASTER  /* as LARGE, with GLPK's cuts (the configuration master) */
} CsMilpSolveMode;

/* Solves lp (its kinds and objective set) with opt's solver, cut at
 * deadline_us or by opt->time_up, from start (1-based column values, or
 * NULL; unused in mode THESIS). With a solution, fills x[1..columns]. */
CsMilpSolveOut cs_milp_solve_lp(glp_prob *lp, CsMilpSolveMode mode, const CsMilpOptions *opt,
                                gint64 deadline_us, const double *start, double *x);

/* Adds a row with those bounds to lp; returns its index. */
int cs_milp_add_row(glp_prob *lp, int type, double lb, double ub);

/* "GLPK" or "CBC", the solver opt asks for. */
const char *cs_milp_solver_name(const CsMilpOptions *opt);

/* The start of prefer_small_batch's second solve (milp.h) on lp, whose
 * columns 1..n_models are the w_m: the row sum w >= goodput - 1e-7 and w out
 * of the objective (the caller sets the tie-break objective). Returns FALSE,
 * lp untouched and a log line, when no time is left (deadline_us, unless
 * opt->time_up decides). */
gboolean cs_milp_tie_break_begin(glp_prob *lp, int n_models, double goodput,
                                 const CsMilpOptions *opt, gint64 deadline_us, GString *log);

/* Text for a glp_intopt return code. */
const char *cs_milp_intopt_message(int ret);

/* How a cut solve is named in logs and errors, by the limits opt sets (a
 * time limit, node_limit, or both): "time limit reached", "node limit
 * reached" or "time or node limit reached". */
const char *cs_milp_limit_reached(const CsMilpOptions *opt);

/* The same as "stopped by time limit" (or node limit, or both). */
const char *cs_milp_limit_stopped(const CsMilpOptions *opt);

/* cs_milp_intopt_message(ret), with GLP_ETMLIM named by
 * cs_milp_limit_reached(opt). */
const char *cs_milp_ret_message(const CsMilpOptions *opt, int ret);

/* Whether a cut solve's result depends on machine speed: "depends on
 * machine speed" under a wall-clock limit, else "the same on any machine". */
const char *cs_milp_cut_note(const CsMilpOptions *opt);

/* The advice appended to a "found no solution" error after a cut:
 * "; raise time_limit_s" (or node_limit, or either). */
const char *cs_milp_raise_hint(const CsMilpOptions *opt);

/* Milliseconds from now to deadline_us, at least 1 (GLPK's limits). */
int cs_milp_ms_left(gint64 deadline_us);

/* A greedy feasible solution (the better of two model orders: by rate, and
 * by goodput per unit of compute): fills x[1..n_cols] with column values
 * that satisfy every row of pb->lp, and returns its objective (the total
 * goodput credit, req/s). Never fails; with no room it places nothing. */
double cs_milp_greedy_start(const MilpProblem *pb, const CsPlacementProblem *in,
                            const CsMilpOptions *opt, double *x);

/* The sum of the models' rates (req/s): the objective's upper bound, as
 * each model's credit is at most its rate. */
double cs_milp_offered(const CsPlacementProblem *in);

/* TRUE when goodput (req/s) serves every model's rate: the objective's
 * upper bound (each model's credit is at most its rate), so a start that
 * reaches it is optimal without a solve. */
gboolean cs_milp_serves_every_rate(const CsPlacementProblem *in, double goodput);

/* Records in info and log that the greedy start of that goodput is optimal
 * (cs_milp_serves_every_rate) and nothing is solved. */
void cs_milp_report_start_optimal(CsMilpInfo *info, GString *log, double goodput);

/* Records in info and log that no model has a batch size meeting its SLO on
 * any GPU: nothing to place. */
void cs_milp_report_empty(CsMilpInfo *info, GString *log);

/* TRUE when x (1-based) satisfies every row and column bound of lp within
 * tol (glp_ios_heur_sol takes a start without checking it). */
gboolean cs_milp_satisfies(glp_prob *lp, const double *x, double tol);

/* Solves the configuration formulation (milp.h, CS_MILP_FORM_CONFIGURATIONS;
 * milp_config.c) over pb's column maps (pb->lp unused) within deadline_us:
 * writes the batch index of model m's replica on GPU g into
 * k_of[m * n_gpus + g] (left -1 where none), fills info and appends to log.
 * A feasible problem always gets a placement (at worst the greedy start);
 * returns FALSE with error only when the solver fails outright. */
gboolean cs_milp_config_solve(const MilpProblem *pb, const CsPlacementProblem *in,
                              const CsMilpOptions *opt, gint64 deadline_us, int *k_of,
                              CsMilpInfo *info, GString *log, GError **error);

/* Loads CBC's library once (milp_cbc.c; only when built with CS_HAVE_CBC).
 * Returns TRUE when it is loaded; else FALSE and, when why is not NULL, the
 * reason in *why (g_free it). Thread-safe. */
gboolean cs_milp_cbc_load(char **why);

/* Solves lp with CBC (milp_cbc.c; only when built with CS_HAVE_CBC) within
 * deadline_us and opt->node_limit (CBC's maxNodes; opt->time_up is not
 * consulted: CBC's C interface has no node callback), from start (1-based, or NULL). Returns GLP_OPT, GLP_FEAS
 * (a solution, cut by the limit), GLP_NOFEAS or GLP_UNDEF (none found in
 * time); with a solution fills x[1..n], *objective and *gap (0 when
 * optimal). */
int cs_milp_cbc_solve(glp_prob *lp, const CsMilpOptions *opt, gint64 deadline_us,
                      const double *start, double *x, double *objective, double *gap);

#endif
