/* The MILP placement's configuration formulation (milp.h,
 * CS_MILP_FORM_CONFIGURATIONS): the model of bin packing and cutting stock
 * (Gilmore and Gomory) applied to the thesis' MILP.
 *
 * A configuration of a GPU type is a set of (model, batch) replicas, at most
 * one per model, that fits one GPU of the type (sum Creq <= 100, sum Mreq <=
 * 100), each meeting its SLO there. z_p counts the GPUs running p; GPUs of one
 * type are interchangeable, so this is the whole decision and its size does
 * not grow with the number of GPUs. With w_m and y[m,b] as in milp.h:
 *   max sum_m w_m
 *   w_m <= rate_m;  w_m <= sum_p z_p sum_{(m,b) in p} min(goodput, rate_m)
 *   sum_b y[m,b] <= 1
 *   sum_{p with (m,b)} z_p <= U_m y[m,b]     (U_m: min(max_rep_m, GPUs))
 *   sum_p z_p (replicas of m in p) <= max_rep_m
 *   per type t: sum_{p of t} z_p <= GPUs of type t
 * Every integer solution is a placement of the thesis' model and back.
 *
 * Columns (milp_config_columns.c): every configuration when there are at
 * most enumerate_limit (then the model is exact); otherwise column
 * generation on the LP relaxation, each round with exact pricing giving a
 * Lagrangian bound valid for every placement. The integer problem is solved
 * over the columns (price and branch) from the greedy placement; when its
 * solution falls short of the converged LP, every configuration whose
 * reduced cost is above -(LP - solution) is added, when they are few enough,
 * and the integer problem over them is exact. The gap is reported against
 * the column-generation bound, not against the restricted problem's own
 * (which knows only the columns generated).
 */
#include <float.h>
#include <glpk.h>
#include <math.h>
#include <string.h>

#include "milp_config.h"

/* ---- Integer solve and placement ---------------------------------------------- */

/* The replicas on GPU g in pb's per-GPU solution xs, as items (m * nb + k,
 * ascending) into items; returns how many. */
static int gpu_load(const MilpMaster *ms, const double *xs, int g, int *items)
{
  int n = 0;
  for (int m = 0; m < ms->nm; m++)
    for (int k = 0; k < ms->nb; k++) {
      int c = ms->pb->x_col[milp_xi(ms->pb, m, k, g)];
      if (c && xs[c] > 0.5)
        items[n++] = m * ms->nb + k;
    }
  return n;
}

/* The greedy placement (milp_start.c, in pb's per-GPU columns xs) as master
 * columns: a configuration per distinct GPU load. Fills start (master
 * column values, 1-based, every column of the master so far). */
static void start_to_master(MilpMaster *ms, const double *xs, double *start)
{
  int n_cols = glp_get_num_cols(ms->lp);
  for (int c = 1; c <= n_cols; c++)
    start[c] = 0.0;
  int *items = g_new(int, MAX(ms->nm, 1));
  for (int g = 0; g < ms->ng; g++) {
    int n = gpu_load(ms, xs, g, items);
    if (n == 0)
      continue;
    gboolean added;
    int i = cs_milp_cfg_add(ms, ms->type_of_gpu[g], items, n, &added);
    g_assert(!added); /* the caller added them before */
    start[ms->first_z + i] += 1.0;
  }
  for (int m = 0; m < ms->nm; m++) {
    start[m + 1] = xs[m + 1];
    for (int k = 0; k < ms->nb; k++)
      if (ms->y_col[m * ms->nb + k] && xs[ms->pb->y_col[m * ms->nb + k]] > 0.5)
        start[ms->y_col[m * ms->nb + k]] = 1.0;
  }
  g_free(items);
}

/* Adds the configurations of the greedy placement xs as columns. */
static void add_start_configs(MilpMaster *ms, const double *xs)
{
  int *items = g_new(int, MAX(ms->nm, 1));
  for (int g = 0; g < ms->ng; g++) {
    int n = gpu_load(ms, xs, g, items);
    gboolean added;
    if (n > 0)
      cs_milp_cfg_add(ms, ms->type_of_gpu[g], items, n, &added);
  }
  g_free(items);
}

/* The GPUs of each type take the configurations of master solution x in
 * column order. */
static void master_to_placement(const MilpMaster *ms, const double *x, int *k_of)
{
  int *next = g_new0(int, MAX(ms->nt, 1)); /* per type: GPUs handed out */
  for (guint i = 0; i < ms->configs->len; i++) {
    const MilpConfig *c = g_ptr_array_index(ms->configs, i);
    int z = (int)lround(x[ms->first_z + (int)i]);
    for (int j = 0; j < z; j++) {
      int g = -1;
      for (int h = 0, seen = 0; h < ms->ng && g < 0; h++)
        if (ms->type_of_gpu[h] == c->type && seen++ == next[c->type])
          g = h;
      g_assert(g >= 0); /* the type's row caps the count */
      next[c->type]++;
      for (int r = 0; r < c->n; r++)
        k_of[(size_t)(c->items[r] / ms->nb) * ms->ng + g] = c->items[r] % ms->nb;
    }
  }
  g_free(next);
}

/* prefer_small_batch (milp.h) over the master's columns: total goodput held
 * (cs_milp_tie_break_begin), minimise K x sum of batch sizes + replicas.
 * x holds the first solution and is replaced when this one succeeds. */
static gboolean config_tie_break(MilpMaster *ms, double goodput, gint64 deadline_us, double *x,
                                 GString *log)
{
  const CsMilpOptions *opt = ms->opt;
  glp_prob *lp = ms->lp;
  if (!cs_milp_tie_break_begin(lp, ms->nm, goodput, opt, deadline_us, log))
    return FALSE;
  double K = (double)ms->nm * ms->ng + 1.0;
  for (int item = 0; item < ms->nm * ms->nb; item++)
    if (ms->y_col[item])
      glp_set_obj_coef(lp, ms->y_col[item], K * opt->batches[item % ms->nb]);
  for (guint i = 0; i < ms->configs->len; i++)
    glp_set_obj_coef(lp, ms->first_z + (int)i,
                     ((const MilpConfig *)g_ptr_array_index(ms->configs, i))->n);
  glp_set_obj_dir(lp, GLP_MIN);
  int n_cols = glp_get_num_cols(lp);
  double *y = g_new0(double, (size_t)n_cols + 1);
  CsMilpSolveOut o = cs_milp_solve_lp(lp, CS_MILP_SOLVE_MASTER, opt, deadline_us, x, y);
  double total = 0.0;
  for (int m = 0; m < ms->nm; m++)
    total += y[m + 1];
  gboolean ok = cs_milp_has_solution(&o) && total >= goodput - 1e-6;
  if (!ok)
    g_string_append_printf(log,
                           "prefer_small_batch: tie-break solve failed (%s); keeping the first "
                           "solution\n",
                           cs_milp_ret_message(ms->opt, o.ret));
  else {
    g_string_append_printf(log, "prefer_small_batch: tie-break solve over the %u configurations "
                                "%s%s\n",
                           ms->configs->len, o.status == GLP_OPT ? "optimal" :
                           cs_milp_limit_stopped(ms->opt),
                           o.status == GLP_OPT ? "" : " (best tie-break found)");
    memcpy(x, y, sizeof(double) * ((size_t)n_cols + 1));
  }
  g_free(y);
  return ok;
}

gboolean cs_milp_config_solve(const MilpProblem *pb, const CsPlacementProblem *in,
                              const CsMilpOptions *opt, gint64 deadline_us, int *k_of,
                              CsMilpInfo *info, GString *log, GError **error)
{
  info->configurations = TRUE;
  info->bound = NAN;
  if (pb->n_cols == in->n_models) {
    cs_milp_report_empty(info, log);
    return TRUE;
  }
  /* The greedy start, in the per-GPU columns it is written for. */
  double *xs = g_new(double, (size_t)pb->n_cols + 1);
  double start_goodput = cs_milp_greedy_start(pb, in, opt, xs);
  g_string_append_printf(log, "greedy start: objective %.2f req/s\n", start_goodput);
  /* A start that serves every rate is optimal; prefer_small_batch still
   * has its tie-break to solve (from the master, below). */
  if (cs_milp_serves_every_rate(in, start_goodput) && !opt->prefer_small_batch) {
    cs_milp_report_start_optimal(info, log, start_goodput);
    cs_milp_k_of(pb, xs, k_of);
    g_free(xs);
    return TRUE;
  }

  MilpMaster ms;
  cs_milp_cfg_init(&ms, pb, in, opt);
  add_start_configs(&ms, xs);
  int limit = opt->enumerate_limit ? opt->enumerate_limit : CS_MILP_CFG_ENUMERATE_MAX;
  gboolean enumerated = cs_milp_cfg_enumerate(&ms, limit), converged = FALSE;
  int rounds = 0;
  double bound = cs_milp_offered(in);
  if (enumerated) {
    g_string_append_printf(log, "%d GPU type(s), %u configurations: all of them\n", ms.nt,
                           ms.configs->len);
  } else {
    gint64 now = g_get_monotonic_time();
    /* Half the time left to the bound and the columns, half to the integer
     * solve over them. */
    bound = cs_milp_cfg_generate(&ms, now + (deadline_us - now) / 2, &converged, &rounds);
    g_string_append_printf(log,
                           "column generation: %d rounds, %u configurations, %s, bound %.2f "
                           "req/s\n",
                           rounds, ms.configs->len,
                           converged ? "converged (LP optimum over all configurations)"
                                     : "cut by the time limit (Lagrangian bound)",
                           bound);
  }
  /* The converged LP's duals say which columns could still matter. */
  MilpDuals duals = { 0 };
  double lp_optimum = glp_get_obj_val(ms.lp), slack = 0.0;
  if (converged) {
    cs_milp_cfg_duals_save(&ms, &duals);
    for (int t = 0; t < ms.nt; t++)
      slack += ms.type_n[t] * CS_MILP_CFG_RC_TOL;
  }
  int n_cols = glp_get_num_cols(ms.lp);
  for (int item = 0; item < ms.nm * ms.nb; item++)
    if (ms.y_col[item])
      glp_set_col_kind(ms.lp, ms.y_col[item], GLP_BV);
  for (int c = ms.first_z; c <= n_cols; c++)
    glp_set_col_kind(ms.lp, c, GLP_IV);
  double *start = g_new(double, (size_t)n_cols + 1), *x = g_new0(double, (size_t)n_cols + 1);
  start_to_master(&ms, xs, start);
  gboolean start_ok = cs_milp_satisfies(ms.lp, start, 1e-6);
  if (!start_ok)
    g_string_append(log, "greedy start: violates a constraint (a bug, please report it): not "
                         "used\n");
  CsMilpSolveOut out = cs_milp_solve_lp(ms.lp, CS_MILP_SOLVE_MASTER, opt, deadline_us,
                                        start_ok ? start : NULL, x);
  /* exact: the columns hold an optimum, so the solver's own gap is the gap. */
  gboolean exact = enumerated;
  if (converged && cs_milp_has_solution(&out) &&
      lp_optimum - out.objective > 1e-6 * MAX(1.0, out.objective) &&
      (opt->time_up || g_get_monotonic_time() < deadline_us)) {
    if (limit < 0) /* "never list every configuration" still lists these */
      limit = CS_MILP_CFG_ENUMERATE_MAX;
    int before = (int)ms.configs->len;
    int n = cs_milp_cfg_add_improving(&ms, &duals, lp_optimum - out.objective + slack, limit);
    if (n == 0)
      g_string_append_printf(log, "more than %d configurations have a reduced cost above "
                                  "-%.2f req/s (the gap): not listed\n",
                             limit, lp_optimum - out.objective);
    else
      g_string_append_printf(log,
                             "%d configurations (%d new) have a reduced cost above -%.2f req/s "
                             "(the gap): only they can improve on %.2f req/s; solving over "
                             "all of them\n",
                             n, (int)ms.configs->len - before, lp_optimum - out.objective,
                             out.objective);
    if (n > 0) {
      exact = TRUE;
      int grown = glp_get_num_cols(ms.lp);
      double *incumbent = g_new0(double, (size_t)grown + 1), *y = g_new0(double, (size_t)grown + 1);
      memcpy(incumbent, x, sizeof(double) * ((size_t)n_cols + 1));
      CsMilpSolveOut again = cs_milp_solve_lp(ms.lp, CS_MILP_SOLVE_MASTER, opt, deadline_us,
                                              incumbent, y);
      if (cs_milp_has_solution(&again) && again.objective >= out.objective - 1e-9) {
        out = again;
        g_free(x);
        x = y;
        y = NULL;
      } else {
        exact = FALSE; /* cut before it did better: the first solve stands */
        g_free(x);
        x = incumbent;
        incumbent = NULL;
      }
      g_free(incumbent);
      g_free(y);
      g_free(start);
      start = g_new0(double, (size_t)grown + 1);
      start_to_master(&ms, xs, start);
      n_cols = grown;
    }
  }
  info->n_binaries = glp_get_num_int(ms.lp);
  info->n_configurations = (int)ms.configs->len;
  info->enumerated = enumerated;
  info->cg_iterations = rounds;
  gboolean ok = TRUE;
  if (cs_milp_has_solution(&out)) {
    double obj = out.objective;
    if (exact)
      bound = out.status == GLP_OPT ? obj
              : isfinite(out.gap)   ? MIN(bound, obj + out.gap * fabs(obj))
                                    : bound;
    else if (converged)
      bound = MIN(bound, lp_optimum + slack);
    bound = MAX(bound, obj);
    gboolean optimal = bound - obj <= 1e-6 * MAX(1.0, obj);
    info->status = optimal ? CS_MILP_OPTIMAL : CS_MILP_FEASIBLE;
    info->objective = obj;
    info->bound = optimal ? obj : bound;
    info->gap = optimal ? 0.0 : (bound - obj) / MAX(fabs(obj), 1e-9);
    if (optimal)
      g_string_append_printf(log, "%s status: optimal, MIP gap 0%%, objective %.2f req/s\n",
                             cs_milp_solver_name(opt), obj);
    else if (out.status == GLP_OPT)
      g_string_append_printf(log,
                             "%s status: optimal over the %u configurations generated, "
                             "objective %.2f req/s, gap %.4g%% to the bound %.2f req/s over all "
                             "configurations (not proven optimal)\n",
                             cs_milp_solver_name(opt), ms.configs->len, obj, info->gap * 100.0, bound);
    else
      g_string_append_printf(log,
                             "%s status: %s, best solution found kept, gap %.4g%% to the "
                             "bound %.2f req/s, objective %.2f req/s (not proven optimal; "
                             "%s)\n",
                             cs_milp_solver_name(opt), cs_milp_ret_message(opt, out.ret),
                             info->gap * 100.0, bound, obj, cs_milp_cut_note(opt));
  } else if (out.ret == GLP_ETMLIM && start_ok) {
    info->status = CS_MILP_HEURISTIC;
    info->objective = start_goodput;
    info->bound = bound;
    g_string_append_printf(log,
                           "%s status: %s before its first solution, the greedy start kept, "
                           "objective %.2f req/s (not proven optimal, gap unknown; %s)\n",
                           cs_milp_solver_name(opt), cs_milp_limit_reached(opt), start_goodput,
                           cs_milp_cut_note(opt));
    memcpy(x, start, sizeof(double) * ((size_t)n_cols + 1));
  } else {
    ok = FALSE;
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "placement \"milp\": %s found no solution: %s (code %d, status %d)%s",
                cs_milp_solver_name(opt), cs_milp_ret_message(opt, out.ret), out.ret, out.status,
                out.ret == GLP_ETMLIM ? cs_milp_raise_hint(opt) : "");
  }
  cs_milp_cfg_duals_clear(&duals);
  if (ok && opt->prefer_small_batch && info->status != CS_MILP_HEURISTIC)
    info->tie_break_solved = config_tie_break(&ms, info->objective, deadline_us, x, log);
  if (ok)
    master_to_placement(&ms, x, k_of);
  g_free(start);
  g_free(x);
  g_free(xs);
  cs_milp_cfg_clear(&ms);
  return ok;
}

