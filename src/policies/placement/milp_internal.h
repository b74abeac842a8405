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

/* A greedy feasible solution (the better of two model orders: by rate, and
 * by goodput per unit of compute): fills x[1..n_cols] with column values
 * that satisfy every row of pb->lp, and returns its objective (the total
 * goodput credit, req/s). Never fails; with no room it places nothing. */
double cs_milp_greedy_start(const MilpProblem *pb, const CsPlacementProblem *in,
                            const CsMilpOptions *opt, double *x);

/* TRUE when x (1-based) satisfies every row and column bound of lp within
 * tol (glp_ios_heur_sol takes a start without checking it). */
gboolean cs_milp_satisfies(glp_prob *lp, const double *x, double tol);

/* Loads CBC's library once (milp_cbc.c; only when built with CS_HAVE_CBC).
 * Returns TRUE when it is loaded; else FALSE and, when why is not NULL, the
 * reason in *why (g_free it). Thread-safe. */
gboolean cs_milp_cbc_load(char **why);

/* Solves lp with CBC (milp_cbc.c; only when built with CS_HAVE_CBC) within
 * deadline_us (opt->time_up is not consulted: CBC's C interface has no
 * node callback), from start (1-based, or NULL). Returns GLP_OPT, GLP_FEAS
 * (a solution, cut by the limit), GLP_NOFEAS or GLP_UNDEF (none found in
 * time); with a solution fills x[1..n], *objective and *gap (0 when
 * optimal). */
int cs_milp_cbc_solve(glp_prob *lp, const CsMilpOptions *opt, gint64 deadline_us,
                      const double *start, double *x, double *objective, double *gap);

#endif
