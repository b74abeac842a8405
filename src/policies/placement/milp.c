/* MILP placement with GLPK; see milp.h for the model.
 *
 *   "placement": {"policy": "milp", "metric": "ao", "time_limit_s": 60,
 *                 "prefer_small_batch": false, "max_replicas": 4,
 *                 "batch_sizes": [4, 8, 16, 32, 64, 128], "mps_shares": false}
 *
 * "max_replicas" is one number for every model or an object
 * {"model name": number}; models not listed get the number of GPUs.
 * Determinism: GLPK's branch and bound is deterministic, so a solve that
 * finishes within the time limit always returns the same placement; a solve
 * cut by the time limit depends on machine speed (the log says so). Tests
 * cut solves through CsMilpOptions.time_up instead, which reads no clock.
 */
#include "milp.h"

#include <float.h>
#include <glpk.h>
#include <math.h>
#include <string.h>

#include "milp_internal.h"
#include "placement_policies.h"

gboolean cs_milp_have_cbc(void)
{
#ifdef CS_HAVE_CBC
  return cs_milp_cbc_load(NULL);
#else
  return FALSE;
#endif
}

const char *cs_milp_solver_name(const CsMilpOptions *opt)
{
  return opt->solver == CS_MILP_SOLVER_CBC ? "CBC" : "GLPK";
}

/* Problems with at most this many binaries are solved as before warm
 * starts existed (solve()). */
#define PCH_MAX_BINARIES 2000

/* Formulation "auto" solves the per-GPU model on problems of the thesis'
 * size (at most this many GPUs and models: its instances have 6-7 GPUs and
 * 4-5 models), where it takes under a second and returns the placements
 * and ties the thesis published; the configuration model beyond, which
 * proved optimal in milliseconds what the per-GPU model left at a gap
 * after 10 s (docs/policies.md). */
#define THESIS_MAX_GPUS 8
#define THESIS_MAX_MODELS 8

/* How far the tie-break solve may lower the total goodput, req/s. */
#define TIE_SLACK 1e-7

/* Sparse matrix entries in GLPK's 1-based triplet form; index 0 unused. */
typedef struct {
  GArray *ia, *ja, *ar;
} Triplets;

static void triplet(Triplets *t, int row, int col, double v)
{
  g_array_append_val(t->ia, row);
  g_array_append_val(t->ja, col);
  g_array_append_val(t->ar, v);
}

int cs_milp_add_row(glp_prob *lp, int type, double lb, double ub)
{
  int r = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, r, type, lb, ub);
  return r;
}

void cs_milp_index(MilpProblem *pb, const CsPlacementProblem *in, const CsMilpOptions *opt,
                   CsModelOptions *const *cand_of_gpu)
{
  int nm = in->n_models, nb = opt->n_batches, ng = in->n_gpus;
  pb->n_models = nm;
  pb->n_batches = nb;
  pb->n_gpus = ng;
  pb->y_col = g_new0(int, MAX(nm * nb, 1));
  pb->x_col = g_new0(int, MAX(milp_xi(pb, nm, 0, 0), 1));
  pb->x_opt = g_new0(const CsBatchOption *, MAX(milp_xi(pb, nm, 0, 0), 1));
  int col = nm; /* columns 1..nm are the w_m */
  for (int m = 0; m < nm; m++) {
    for (int k = 0; k < nb; k++) {
      for (int g = 0; g < ng; g++) {
        const CsModelOptions *c = &cand_of_gpu[g][m];
        for (int i = 0; i < c->n; i++) {
          if (c->opts[i].batch != opt->batches[k] || !c->opts[i].meets_slo)
            continue;
          if (!pb->y_col[m * nb + k])
            pb->y_col[m * nb + k] = ++col;
          pb->x_col[milp_xi(pb, m, k, g)] = ++col;
          pb->x_opt[milp_xi(pb, m, k, g)] = &c->opts[i];
        }
      }
    }
  }
  pb->n_cols = col;
}

/* Builds the MILP of milp.h over pb's column maps (cs_milp_index). */
static void build(MilpProblem *pb, const CsPlacementProblem *in, const CsMilpOptions *opt)
{
  int nm = in->n_models, nb = opt->n_batches, ng = in->n_gpus;
  pb->lp = glp_create_prob();
  glp_set_obj_dir(pb->lp, GLP_MAX);
  glp_add_cols(pb->lp, nm);
  for (int m = 0; m < nm; m++) {
    glp_set_col_bnds(pb->lp, m + 1, GLP_DB, 0.0, MAX(in->models[m].rate_rps, 0.0));
    glp_set_obj_coef(pb->lp, m + 1, 1.0);
  }
  if (pb->n_cols > nm)
    glp_add_cols(pb->lp, pb->n_cols - nm);
  for (int c = nm + 1; c <= pb->n_cols; c++)
    glp_set_col_kind(pb->lp, c, GLP_BV);

  Triplets t = { g_array_new(FALSE, FALSE, sizeof(int)), g_array_new(FALSE, FALSE, sizeof(int)),
                 g_array_new(FALSE, FALSE, sizeof(double)) };
  triplet(&t, 0, 0, 0.0);
  for (int m = 0; m < nm; m++) {
    int goodput_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 0.0); /* w_m - sum goodput x <= 0 */
    int batch_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 1.0);   /* sum_b y <= 1 */
    int max_rep = opt->max_replicas ? opt->max_replicas[m] : ng;
    int rep_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, max_rep); /* sum x <= max_rep */
    triplet(&t, goodput_row, m + 1, 1.0);
    for (int k = 0; k < nb; k++) {
      int y = pb->y_col[m * nb + k];
      if (!y)
        continue;
      triplet(&t, batch_row, y, 1.0);
      for (int g = 0; g < ng; g++) {
        int x = pb->x_col[milp_xi(pb, m, k, g)];
        if (!x)
          continue;
        /* min(goodput, rate) instead of goodput: the same integer solutions
         * (w_m <= rate_m anyway, and one replica reaching the rate already
         * allows w_m = rate_m) but a much tighter LP relaxation. */
        triplet(&t, goodput_row, x,
                -MIN(pb->x_opt[milp_xi(pb, m, k, g)]->goodput, MAX(in->models[m].rate_rps, 0.0)));
        triplet(&t, rep_row, x, 1.0);
        int link = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 0.0); /* x - y <= 0 */
        triplet(&t, link, x, 1.0);
        triplet(&t, link, y, -1.0);
      }
    }
  }
  for (int g = 0; g < ng; g++) {
    int creq_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 100.0);
    int mreq_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 100.0);
    for (int m = 0; m < nm; m++) {
      int once_row = 0; /* sum_b x[m,b,g] <= 1: one replica of m per GPU */
      for (int k = 0; k < nb; k++) {
        int x = pb->x_col[milp_xi(pb, m, k, g)];
        if (!x)
          continue;
        const CsBatchOption *o = pb->x_opt[milp_xi(pb, m, k, g)];
        triplet(&t, creq_row, x, o->creq);
        triplet(&t, mreq_row, x, o->mreq);
        if (!once_row)
          once_row = cs_milp_add_row(pb->lp, GLP_UP, 0.0, 1.0);
        triplet(&t, once_row, x, 1.0);
      }
    }
  }
  /* Symmetry breaking: GPUs of one type are interchangeable, so any solution
   * can be permuted until key(g) = sum over g's replicas of a per-(model,
   * batch) key is non-increasing along the GPUs of each type. Requiring that
   * removes no goodput but most of the equivalent branches that otherwise keep
   * branch and bound busy for minutes on six identical GPUs. */
  for (int g = 0; g < ng; g++) {
    int h = g + 1;
    while (h < ng && strcmp(in->gpus[h].gpu_type, in->gpus[g].gpu_type) != 0)
      h++;
    if (h >= ng)
      continue;
    int order_row = cs_milp_add_row(pb->lp, GLP_LO, 0.0, 0.0); /* key(g) - key(h) >= 0 */
    for (int m = 0; m < nm; m++)
      for (int k = 0; k < nb; k++) {
        double key = (double)(m * nb + k + 1);
        if (pb->x_col[milp_xi(pb, m, k, g)])
          triplet(&t, order_row, pb->x_col[milp_xi(pb, m, k, g)], key);
        if (pb->x_col[milp_xi(pb, m, k, h)])
          triplet(&t, order_row, pb->x_col[milp_xi(pb, m, k, h)], -key);
      }
  }
  glp_load_matrix(pb->lp, (int)t.ia->len - 1, (const int *)(void *)t.ia->data,
                  (const int *)(void *)t.ja->data, (const double *)(void *)t.ar->data);
  g_array_unref(t.ia);
  g_array_unref(t.ja);
  g_array_unref(t.ar);
}

void cs_milp_problem_clear(MilpProblem *pb)
{
  if (pb->lp)
    glp_delete_prob(pb->lp);
  g_free(pb->y_col);
  g_free(pb->x_col);
  g_free(pb->x_opt);
}

/* What the branch-and-bound callback sees. */
typedef struct {
  double last_gap;         /* the last relative gap GLPK reported */
  const CsMilpOptions *opt;
  gboolean timed_out;      /* opt->time_up or the deadline said the time is up */
  gint64 deadline_us;      /* g_get_monotonic_time() at which the call's limit ends */
  const double *start;     /* an integer feasible solution to start from (1-based), or NULL */
  gboolean start_given;    /* start was handed to GLPK */
  gint64 last_call_us;     /* the previous callback, 0 before the first */
  gint64 longest_step_us;  /* the longest time between two callbacks so far */
  int nodes;               /* nodes explored so far (the root, then one per GLP_ISELECT) */
} SolveState;

/* Branch-and-bound callback: hands GLPK the start solution at its first
 * request for a heuristic one (glp_ios_heur_sol: with it GLPK has an
 * incumbent from the first node, so a cut solve always has a solution),
 * remembers the last relative gap GLPK reports (glp_ios_mip_gap gives
 * DBL_MAX before the first integer solution), and ends the search when the
 * next step would end past the deadline (now + the longest time between two
 * callbacks so far: on 64 models x 64 GPUs a node takes about 4 s, and
 * waiting for the deadline itself overran it by that much) or when the
 * injected time_up says so (milp.h). GLPK's own tm_lim counts only
 * glp_intopt's time and overshot it by seconds on large instances.
 * opt->node_limit is counted at GLP_ISELECT, where GLPK is about to pick the
 * next node: once that many have been explored (the root counts) it ends
 * the search there, the same way on any machine. */
static void bnb_callback(glp_tree *tree, void *info)
{
  SolveState *st = info;
  int r = glp_ios_reason(tree);
  if (r == GLP_IHEUR && st->start && !st->start_given) {
    st->start_given = TRUE;
    glp_ios_heur_sol(tree, st->start);
  }
  if (r == GLP_IBINGO || r == GLP_ISELECT || r == GLP_IBRANCH || r == GLP_IHEUR)
    st->last_gap = glp_ios_mip_gap(tree);
  if (st->timed_out)
    return;
  if (r == GLP_ISELECT && st->opt->node_limit > 0 && ++st->nodes >= st->opt->node_limit) {
    st->timed_out = TRUE;
    glp_ios_terminate(tree);
    return;
  }
  gint64 now = g_get_monotonic_time();
  if (st->last_call_us)
    st->longest_step_us = MAX(st->longest_step_us, now - st->last_call_us);
  st->last_call_us = now;
  if ((st->opt->time_up &&
       st->opt->time_up(glp_ios_mip_gap(tree) != DBL_MAX, st->opt->time_up_data)) ||
      (!st->opt->time_up && now + st->longest_step_us >= st->deadline_us)) {
    st->timed_out = TRUE;
    glp_ios_terminate(tree);
  }
}

const char *cs_milp_intopt_message(int ret)
{
  switch (ret) {
  case 0: return "solved";
  case GLP_EBOUND: return "invalid bounds";
  case GLP_EROOT: return "no optimal basis of the LP relaxation";
  case GLP_ENOPFS: return "no primal feasible solution";
  case GLP_ENODFS: return "LP relaxation has no dual feasible solution";
  case GLP_EFAIL: return "solver failure";
  case GLP_EMIPGAP: return "relative MIP gap tolerance reached";
  case GLP_ETMLIM: return "time limit reached";
  case GLP_ESTOP: return "stopped by the application";
  default: return "unknown glp_intopt return code";
  }
}

const char *cs_milp_limit_reached(const CsMilpOptions *opt)
{
  if (opt->node_limit <= 0)
    return "time limit reached";
  return isfinite(opt->time_limit_s) && !opt->time_up ? "time or node limit reached"
                                                       : "node limit reached";
}

const char *cs_milp_limit_stopped(const CsMilpOptions *opt)
{
  if (opt->node_limit <= 0)
    return "stopped by time limit";
  return isfinite(opt->time_limit_s) && !opt->time_up ? "stopped by time or node limit"
                                                       : "stopped by node limit";
}

const char *cs_milp_ret_message(const CsMilpOptions *opt, int ret)
{
  return ret == GLP_ETMLIM ? cs_milp_limit_reached(opt) : cs_milp_intopt_message(ret);
}

const char *cs_milp_cut_note(const CsMilpOptions *opt)
{
  /* Only a wall-clock limit makes where a solve is cut machine-dependent. */
  return isfinite(opt->time_limit_s) && !opt->time_up ? "depends on machine speed"
                                                       : "the same on any machine";
}

const char *cs_milp_raise_hint(const CsMilpOptions *opt)
{
  if (opt->node_limit <= 0)
    return "; raise time_limit_s";
  return isfinite(opt->time_limit_s) ? "; raise time_limit_s or node_limit" : "; raise node_limit";
}

/* Milliseconds from now to deadline_us, at least 1 (GLPK's limits). */
int cs_milp_ms_left(gint64 deadline_us)
{
  double ms = ceil((double)(deadline_us - g_get_monotonic_time()) / 1000.0);
  return (int)CLAMP(ms, 1.0, (double)G_MAXINT);
}

/* A GLPK terminal hook that prints nothing. */
static int swallow_output(void *info, const char *s)
{
  (void)info;
  (void)s;
  return 1;
}

/* One solve, cut at deadline_us (or by opt->time_up). Returns glp_intopt's
 * code (GLP_ETMLIM also when the deadline or opt->time_up ended it, or the
 * LP relaxation did not finish in time); *gap gets the final relative gap
 * (0 when optimal, NAN when unknown).
 *
 * Problems of at most PCH_MAX_BINARIES binaries (the thesis' have under
 * 1000) are solved as they always were, so their placements stay exactly
 * the same: GLPK's MIP presolver, hybrid pseudocost branching (2-10x faster
 * on them than the default), no start. Larger ones: the LP relaxation by
 * the primal simplex without presolver (with it, 64 models x 64 GPUs took
 * three times as long, past tm_lim), then branch and bound without the MIP
 * presolver (which would hide the original columns from start) from start,
 * an integer feasible solution (1-based column values, or NULL), branching
 * by Driebeck and Tomlin's heuristic: pseudocost branching first solves an
 * LP per fractional variable without returning to the callback, which kept
 * 16 models x 64 GPUs (6000 binaries) 7 s past its deadline. GLPK's cover
 * and clique cuts would help but print to stdout whatever msg_lev says
 * (only the process-wide glp_term_out silences them), so they stay off. */
static int solve(glp_prob *lp, const CsMilpOptions *opt, gint64 deadline_us, const double *start,
                 CsMilpSolveMode mode, double *gap)
{
  *gap = NAN;
  gboolean large = mode != CS_MILP_SOLVE_THESIS;
  if (large) {
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    if (!opt->time_up)
      sp.tm_lim = cs_milp_ms_left(deadline_us);
    int ret = glp_simplex(lp, &sp);
    if (ret == GLP_ETMLIM)
      return GLP_ETMLIM;
    if (ret != 0 || glp_get_status(lp) != GLP_OPT)
      return ret != 0 ? GLP_EROOT : GLP_ENOPFS;
  }
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = large ? GLP_OFF : GLP_ON; /* small: the relaxation is solved within */
  parm.br_tech = large ? GLP_BR_DTH : GLP_BR_PCH;
  parm.tm_lim = opt->time_up ? G_MAXINT : cs_milp_ms_left(deadline_us);
  SolveState st = { .last_gap = NAN, .opt = opt, .deadline_us = deadline_us,
                    .start = large ? start : NULL, .nodes = 1 };
  parm.cb_func = bnb_callback;
  parm.cb_info = &st;
  if (mode == CS_MILP_SOLVE_MASTER) {
    /* The configuration master is small and its rows are knapsacks over
     * general integers: cuts close most of its gap. GLPK prints their
     * progress to the terminal whatever msg_lev says; the hook (GLPK's
     * environment is per thread) swallows it. */
    parm.mir_cuts = parm.gmi_cuts = parm.cov_cuts = parm.clq_cuts = GLP_ON;
    glp_term_hook(swallow_output, NULL);
  }
  int ret = glp_intopt(lp, &parm);
  if (mode == CS_MILP_SOLVE_MASTER)
    glp_term_hook(NULL, NULL);
  if (ret == GLP_ESTOP && st.timed_out)
    ret = GLP_ETMLIM;
  int status = glp_mip_status(lp);
  if (status == GLP_OPT)
    *gap = 0.0;
  else
    *gap = (st.last_gap == DBL_MAX) ? NAN : st.last_gap;
  return ret;
}

gboolean cs_milp_has_solution(const CsMilpSolveOut *o)
{
  return o->status == GLP_OPT || o->status == GLP_FEAS;
}

CsMilpSolveOut cs_milp_solve_lp(glp_prob *lp, CsMilpSolveMode mode, const CsMilpOptions *opt,
                                gint64 deadline_us, const double *start, double *x)
{
  CsMilpSolveOut o = { .gap = NAN, .status = GLP_UNDEF };
  if (opt->solver == CS_MILP_SOLVER_CBC) {
#ifdef CS_HAVE_CBC
    o.status = cs_milp_cbc_solve(lp, opt, deadline_us, start, x, &o.objective, &o.gap);
    o.ret = cs_milp_has_solution(&o) ? 0 : o.status == GLP_NOFEAS ? GLP_ENOPFS : GLP_ETMLIM;
#else
    g_assert_not_reached(); /* refused when the options are read */
#endif
    return o;
  }
  o.ret = solve(lp, opt, deadline_us, start, mode, &o.gap);
  o.status = glp_mip_status(lp);
  if (cs_milp_has_solution(&o)) {
    o.objective = glp_mip_obj_val(lp);
    for (int c = 1; c <= glp_get_num_cols(lp); c++)
      x[c] = glp_mip_col_val(lp, c);
  }
  return o;
}

/* Solves pb->lp as set with opt's solver; with a solution, x[1..n_cols]. */
static CsMilpSolveOut run_solver(MilpProblem *pb, const CsMilpOptions *opt, gint64 deadline_us,
                                 const double *start, double *x)
{
  return cs_milp_solve_lp(pb->lp,
                          glp_get_num_int(pb->lp) <= PCH_MAX_BINARIES ? CS_MILP_SOLVE_THESIS
                                                                      : CS_MILP_SOLVE_LARGE,
                          opt, deadline_us, start, x);
}

gboolean cs_milp_tie_break_begin(glp_prob *lp, int n_models, double goodput,
                                 const CsMilpOptions *opt, gint64 deadline_us, GString *log)
{
  if (!opt->time_up && g_get_monotonic_time() >= deadline_us) {
    g_string_append(log, "prefer_small_batch: no time left for the tie-break solve; keeping "
                         "the first solution\n");
    return FALSE;
  }
  int row = cs_milp_add_row(lp, GLP_LO, goodput - TIE_SLACK, 0.0);
  int *ind = g_new(int, n_models + 1);
  double *val = g_new(double, n_models + 1);
  for (int m = 0; m < n_models; m++) {
    ind[m + 1] = m + 1;
    val[m + 1] = 1.0;
    glp_set_obj_coef(lp, m + 1, 0.0);
  }
  glp_set_mat_row(lp, row, n_models, ind, val);
  g_free(ind);
  g_free(val);
  return TRUE;
}

/* Second, lexicographic solve for prefer_small_batch (milp.h). x_first holds
 * the first solution and is replaced when this one succeeds. */
static gboolean tie_break(MilpProblem *pb, const CsMilpOptions *opt, double goodput,
                          gint64 deadline_us, double *x_first, GString *log)
{
  glp_prob *lp = pb->lp;
  if (!cs_milp_tie_break_begin(lp, pb->n_models, goodput, opt, deadline_us, log))
    return FALSE;
  /* Batch sizes dominate; K exceeds any number of replicas, so replicas only
   * break ties between equal batch sums. Integer coefficients: exact. */
  double K = (double)pb->n_models * pb->n_gpus + 1.0;
  for (int m = 0; m < pb->n_models; m++) {
    for (int k = 0; k < pb->n_batches; k++) {
      int y = pb->y_col[m * pb->n_batches + k];
      if (!y)
        continue;
      const CsBatchOption *o = NULL;
      for (int g = 0; g < pb->n_gpus && !o; g++)
        o = pb->x_opt[milp_xi(pb, m, k, g)];
      glp_set_obj_coef(lp, y, K * o->batch);
      for (int g = 0; g < pb->n_gpus; g++)
        if (pb->x_col[milp_xi(pb, m, k, g)])
          glp_set_obj_coef(lp, pb->x_col[milp_xi(pb, m, k, g)], 1.0);
    }
  }
  glp_set_obj_dir(lp, GLP_MIN);
  /* The first solution is feasible here too: it starts the search. */
  double *x = g_new0(double, (size_t)pb->n_cols + 1);
  CsMilpSolveOut o = run_solver(pb, opt, deadline_us, x_first, x);
  double total = 0.0;
  for (int m = 0; m < pb->n_models; m++)
    total += x[m + 1];
  if (!cs_milp_has_solution(&o) || total < goodput - 1e-6) {
    g_string_append_printf(log,
                           "prefer_small_batch: tie-break solve failed (%s); keeping the first "
                           "solution\n",
                           cs_milp_intopt_message(o.ret));
    g_free(x);
    return FALSE;
  }
  g_string_append_printf(log, "prefer_small_batch: tie-break solve %s%s\n",
                         o.status == GLP_OPT ? "optimal" : cs_milp_limit_stopped(opt),
                         o.status == GLP_OPT ? "" : " (best tie-break found)");
  memcpy(x_first, x, sizeof(double) * ((size_t)pb->n_cols + 1));
  g_free(x);
  return TRUE;
}

/* The greedy start (milp_internal.h) in x; *ok when it satisfies every row
 * (else the log says so). Returns its objective. */
static double start_solution(const MilpProblem *pb, const CsPlacementProblem *in,
                             const CsMilpOptions *opt, double *x, gboolean *ok, GString *log)
{
  double goodput = cs_milp_greedy_start(pb, in, opt, x);
  *ok = cs_milp_satisfies(pb->lp, x, 1e-6);
  if (*ok)
    g_string_append_printf(log, "greedy start: objective %.2f req/s\n", goodput);
  else
    g_string_append(log, "greedy start: violates a constraint (a bug, please report it): not "
                         "used\n");
  return goodput;
}

void cs_milp_k_of(const MilpProblem *pb, const double *x, int *k_of)
{
  for (int m = 0; m < pb->n_models; m++)
    for (int g = 0; g < pb->n_gpus; g++)
      for (int k = 0; k < pb->n_batches; k++) {
        int c = pb->x_col[milp_xi(pb, m, k, g)];
        if (c && x[c] > 0.5)
          k_of[(size_t)m * pb->n_gpus + g] = k;
      }
}

/* The thesis' formulation (milp.h) over pb's column maps: builds and
 * solves it, fills k_of and info. Returns FALSE with error when the solver
 * fails without any placement. */
static gboolean solve_per_gpu(MilpProblem *pb, const CsPlacementProblem *in,
                              const CsMilpOptions *opt, gint64 deadline_us, int *k_of,
                              CsMilpInfo *info, GString *log, GError **error)
{
  build(pb, in, opt);
  info->n_binaries = pb->n_cols - in->n_models;
  g_string_append_printf(log, "%d binary variables, %d constraints\n", info->n_binaries,
                         glp_get_num_rows(pb->lp));
  if (info->n_binaries == 0) {
    cs_milp_report_empty(info, log);
    return TRUE;
  }
  gboolean ok = TRUE;
  double gap = NAN;
  /* Large problems start from the greedy solution; small ones solve as
   * they always did and build it only if the time limit leaves them
   * without a solution (built before, it slowed glp_intopt by a third on
   * 4 models x 64 GPUs: GLPK's allocations landed differently). */
  gboolean large = glp_get_num_int(pb->lp) > PCH_MAX_BINARIES;
  double *start = g_new(double, pb->n_cols + 1);
  double start_goodput = 0.0;
  gboolean start_ok = FALSE, start_optimal = FALSE, fallback = FALSE;
  if (large) {
    start_goodput = start_solution(pb, in, opt, start, &start_ok, log);
    start_optimal = start_ok && cs_milp_serves_every_rate(in, start_goodput);
  }
  double *x = g_new0(double, pb->n_cols + 1);
  CsMilpSolveOut out = { .status = GLP_UNDEF, .gap = NAN };
  if (!start_optimal)
    out = run_solver(pb, opt, deadline_us, start_ok ? start : NULL, x);
  int ret = out.ret;
  gap = out.gap;
  if (start_optimal) {
    cs_milp_report_start_optimal(info, log, start_goodput);
    memcpy(x, start, sizeof(double) * (size_t)(pb->n_cols + 1));
  } else if (cs_milp_has_solution(&out)) {
    info->status = out.status == GLP_OPT ? CS_MILP_OPTIMAL : CS_MILP_FEASIBLE;
    info->gap = gap;
    info->objective = out.objective;
    /* GLPK's gap is |objective - bound| / |objective| */
    info->bound = out.status == GLP_OPT ? out.objective
                  : isfinite(gap)       ? out.objective + gap * fabs(out.objective)
                                        : NAN;
    if (info->status == CS_MILP_OPTIMAL)
      g_string_append_printf(log, "%s status: optimal, MIP gap 0%%, objective %.2f req/s\n",
                             cs_milp_solver_name(opt), info->objective);
    else
      g_string_append_printf(log,
                             "%s status: %s, best solution found kept, MIP gap %.4g%%, "
                             "objective %.2f req/s (not proven optimal; %s)\n",
                             cs_milp_solver_name(opt), cs_milp_ret_message(opt, ret), gap * 100.0,
                             info->objective, cs_milp_cut_note(opt));
  } else {
    if (ret == GLP_ETMLIM && !large)
      start_goodput = start_solution(pb, in, opt, start, &start_ok, log);
    ok = ret == GLP_ETMLIM && start_ok;
    fallback = ok;
  }
  if (fallback) {
    /* Cut before GLPK had a solution (a large problem's LP relaxation did
     * not finish in time, or a small problem's search found none): the
     * start is still a feasible placement. */
    info->status = CS_MILP_HEURISTIC;
    info->objective = start_goodput;
    g_string_append_printf(log,
                           "%s status: %s before its first solution, the greedy start kept, "
                           "objective %.2f req/s (not proven optimal, gap unknown; %s)\n",
                           cs_milp_solver_name(opt), cs_milp_limit_reached(opt), start_goodput,
                           cs_milp_cut_note(opt));
    memcpy(x, start, sizeof(double) * (size_t)(pb->n_cols + 1));
  } else if (!ok) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "placement \"milp\": %s found no solution: %s (code %d, status %d)%s",
                cs_milp_solver_name(opt), cs_milp_ret_message(opt, ret), ret, out.status,
                ret == GLP_ETMLIM ? cs_milp_raise_hint(opt) : "");
  }
  g_free(start);
  if (ok) {
    if (opt->prefer_small_batch && info->status != CS_MILP_HEURISTIC)
      info->tie_break_solved = tie_break(pb, opt, info->objective, deadline_us, x, log);
    cs_milp_k_of(pb, x, k_of);
  }
  g_free(x);
  return ok;
}

CsPlacement *cs_milp_place(const CsPlacementProblem *in, const CsMilpOptions *opt,
                           CsMilpInfo *info, GError **error)
{
  /* The limit bounds the whole call: candidates, construction, both solves. */
  gint64 deadline_us = g_get_monotonic_time() + (gint64)MIN(opt->time_limit_s * 1e6, 1e15);
  CsMilpInfo local = { 0 };
  if (!info)
    info = &local;
  memset(info, 0, sizeof *info);
  info->gap = NAN;
  info->bound = NAN;
  /* Candidates per (GPU, model); GPUs of one type share them. */
  CsModelOptions **cand_of_gpu = g_new0(CsModelOptions *, MAX(in->n_gpus, 1));
  GPtrArray *owned = g_ptr_array_new();
  GString *log = g_string_new(NULL); /* the placement's log, flushed at the end */
  gboolean ok = TRUE;
  for (int g = 0; ok && g < in->n_gpus; g++) {
    for (int h = 0; h < g && !cand_of_gpu[g]; h++)
      if (strcmp(in->gpus[h].gpu_type, in->gpus[g].gpu_type) == 0)
        cand_of_gpu[g] = cand_of_gpu[h];
    if (cand_of_gpu[g])
      continue;
    cand_of_gpu[g] = g_new0(CsModelOptions, MAX(in->n_models, 1));
    g_ptr_array_add(owned, cand_of_gpu[g]);
    for (int m = 0; ok && m < in->n_models; m++)
      ok = cs_model_options_init(&cand_of_gpu[g][m], in->profiles, in->gpus[g].gpu_type,
                                 &in->models[m], opt->metric, opt->batches, opt->n_batches, "milp",
                                 error);
  }

  CsPlacement *p = NULL;
  MilpProblem pb = { 0 };
  int *k_of = NULL; /* [m * n_gpus + g]: batch index of m's replica on g, -1 none */
  if (ok) {
    p = cs_placement_new(in->n_models);
    cs_placement_set_creq_metric(p, opt->metric);
    cs_milp_index(&pb, in, opt, cand_of_gpu);
    gboolean configurations =
      opt->formulation == CS_MILP_FORM_CONFIGURATIONS ||
      (opt->formulation == CS_MILP_FORM_AUTO &&
       (in->n_gpus > THESIS_MAX_GPUS || in->n_models > THESIS_MAX_MODELS));
    char *limits = !isfinite(opt->time_limit_s)
                     ? g_strdup_printf("node limit %d, no time limit", opt->node_limit)
                   : opt->node_limit > 0
                     ? g_strdup_printf("time limit %.3g s, node limit %d", opt->time_limit_s,
                                       opt->node_limit)
                     : g_strdup_printf("time limit %.3g s", opt->time_limit_s);
    g_string_append_printf(log, "milp: metric %s, %s, solver %s%s%s\n",
                           cs_place_metric_name(opt->metric), limits,
                           cs_milp_solver_name(opt),
                           opt->prefer_small_batch ? ", prefer_small_batch" : "",
                           configurations ? ", configuration formulation" : "");
    g_free(limits);
    if (!configurations && opt->enumerate_limit != 0)
      g_string_append_printf(log, "formulation auto: the per-GPU model on this size (at most %d "
                                  "GPUs and %d models); enumerate_limit %d is not used\n",
                             THESIS_MAX_GPUS, THESIS_MAX_MODELS, opt->enumerate_limit);
    k_of = g_new(int, MAX((size_t)in->n_models * in->n_gpus, 1));
    for (size_t i = 0; i < (size_t)in->n_models * in->n_gpus; i++)
      k_of[i] = -1;
    if (configurations) {
      ok = cs_milp_config_solve(&pb, in, opt, deadline_us, k_of, info, log, error);
    } else {
      ok = solve_per_gpu(&pb, in, opt, deadline_us, k_of, info, log, error);
    }
  }
  if (ok) {
    for (int m = 0; m < in->n_models; m++)
      for (int g = 0; g < in->n_gpus; g++) {
        int k = k_of[(size_t)m * in->n_gpus + g];
        if (k < 0)
          continue;
        const CsBatchOption *o = pb.x_opt[milp_xi(&pb, m, k, g)];
        double share = opt->mps_shares ? CLAMP(o->creq / 100.0, 0.0, 1.0) : 0.0;
        cs_placement_add(p, m, g, o->batch, share);
      }
  }
  g_free(k_of);
  if (ok) {
    cs_place_compute_expected(p, in);
    for (int i = 0; i < cs_placement_n_replicas(p); i++) {
      const CsReplica *r = cs_placement_replica(p, i);
      g_string_append_printf(log, "%s: gpu %d, batch %d\n", in->models[r->model].name, r->gpu,
                             r->batch);
    }
    for (int m = 0; m < in->n_models; m++)
      g_string_append_printf(log, "%s: expected goodput %.2f of %.2f req/s\n",
                             in->models[m].name, cs_placement_expected_goodput(p, m),
                             in->models[m].rate_rps);
    g_string_append_printf(log, "expected total goodput %.2f req/s\n",
                           cs_placement_expected_total(p));
  }

  cs_milp_problem_clear(&pb);
  for (guint i = 0; i < owned->len; i++) {
    CsModelOptions *c = g_ptr_array_index(owned, i);
    for (int m = 0; m < in->n_models; m++)
      cs_model_options_clear(&c[m]);
    g_free(c);
  }
  g_ptr_array_unref(owned);
  g_free(cand_of_gpu);
  if (p)
    cs_placement_log(p, "%s", log->str);
  g_string_free(log, TRUE);
  if (!ok) {
    cs_placement_free(p);
    return NULL;
  }
  return p;
}
