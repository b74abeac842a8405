/* A feasible start for the MILP (milp_internal.h): greedy placements in the
 * MILP's own columns, and the check that a solution satisfies every row. */
#include <glpk.h>
#include <string.h>

#include "milp_internal.h"

/* Replicas of model m with batch index k, first fit over the GPUs in order
 * (room for their Creq and Mreq) until they serve rate or max_rep of them
 * are placed. With on (per GPU) they are placed: on set and creq/mreq
 * taken; without, only tried. Returns the rate they serve (at most rate);
 * *used (when not NULL) gets their summed Creq. */
static double first_fit(const MilpProblem *pb, int m, int k, double rate, int max_rep,
                        double *creq, double *mreq, gboolean *on, double *used)
{
  double served = 0.0, compute = 0.0;
  int n = 0;
  for (int g = 0; g < pb->n_gpus && served < rate && n < max_rep; g++) {
    const CsBatchOption *o = pb->x_opt[milp_xi(pb, m, k, g)];
    if (o && creq[g] + o->creq <= 100.0 && mreq[g] + o->mreq <= 100.0) {
      if (on) {
        creq[g] += o->creq;
        mreq[g] += o->mreq;
        on[g] = TRUE;
      }
      served += MIN(o->goodput, rate);
      compute += o->creq;
      n++;
    }
  }
  if (used)
    *used = compute;
  return MIN(served, rate);
}

/* A feasible start: models in the order of prio (descending, then index)
 * each take the batch size whose replicas, placed first-fit over the GPUs in
 * order until they serve the rate (or max_replicas, or no GPU has room),
 * serve the most (then use the least compute, then the smaller batch). The
 * GPUs of each type then swap their configurations so that the symmetry
 * rows (key non-increasing along a type's GPUs) hold. Fills x[1..n_cols] and
 * returns the objective, the sum of w_m. */
static double greedy_start(const MilpProblem *pb, const CsPlacementProblem *in,
                           const CsMilpOptions *opt, const double *prio, double *x)
{
  int nm = pb->n_models, nb = pb->n_batches, ng = pb->n_gpus;
  double *creq = g_new0(double, MAX(ng, 1)), *mreq = g_new0(double, MAX(ng, 1));
  int *chosen = g_new(int, MAX(nm, 1)); /* per model: its batch index, -1 none */
  gboolean *on = g_new0(gboolean, MAX((size_t)nm * ng, 1)); /* [m * ng + g] */
  int *order = g_new(int, MAX(nm, 1));
  for (int m = 0; m < nm; m++) {
    order[m] = m;
    chosen[m] = -1;
  }
  for (int i = 1; i < nm; i++) /* insertion sort: stable, descending priority */
    for (int j = i; j > 0 && prio[order[j]] > prio[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < nm; i++) {
    int m = order[i];
    double rate = MAX(in->models[m].rate_rps, 0.0);
    int max_rep = opt->max_replicas ? opt->max_replicas[m] : ng;
    int best_k = -1;
    double best_served = 0.0, best_used = 0.0;
    for (int k = 0; k < nb; k++) {
      if (!pb->y_col[m * nb + k])
        continue;
      double used = 0.0;
      double served = first_fit(pb, m, k, rate, max_rep, creq, mreq, NULL, &used);
      if (served > best_served || (served == best_served && served > 0 && used < best_used)) {
        best_k = k;
        best_served = served;
        best_used = used;
      }
    }
    if (best_k < 0)
      continue;
    chosen[m] = best_k;
    first_fit(pb, m, best_k, rate, max_rep, creq, mreq, on + (size_t)m * ng, NULL);
  }
  /* Symmetry: within each type, hand the configurations to the type's GPUs
   * in descending key order (GPUs of one type have the same columns). */
  double *key = g_new0(double, MAX(ng, 1));
  for (int g = 0; g < ng; g++)
    for (int m = 0; m < nm; m++)
      if (on[(size_t)m * ng + g])
        key[g] += (double)(m * nb + chosen[m] + 1);
  gboolean *done = g_new0(gboolean, MAX(ng, 1));
  int *gpus = g_new(int, MAX(ng, 1)), *configs = g_new(int, MAX(ng, 1));
  gboolean *placed = g_new0(gboolean, MAX((size_t)nm * ng, 1));
  for (int g = 0; g < ng; g++) {
    if (done[g])
      continue;
    int n = 0;
    for (int h = g; h < ng; h++)
      if (!done[h] && strcmp(in->gpus[h].gpu_type, in->gpus[g].gpu_type) == 0) {
        done[h] = TRUE;
        gpus[n] = configs[n] = h;
        n++;
      }
    for (int i = 1; i < n; i++) /* stable, descending key */
      for (int j = i; j > 0 && key[configs[j]] > key[configs[j - 1]]; j--) {
        int t = configs[j];
        configs[j] = configs[j - 1];
        configs[j - 1] = t;
      }
    for (int i = 0; i < n; i++)
      for (int m = 0; m < nm; m++)
        placed[(size_t)m * ng + gpus[i]] = on[(size_t)m * ng + configs[i]];
  }
  for (int c = 1; c <= pb->n_cols; c++)
    x[c] = 0.0;
  double total = 0.0;
  for (int m = 0; m < nm; m++) {
    if (chosen[m] < 0)
      continue;
    double rate = MAX(in->models[m].rate_rps, 0.0), served = 0.0;
    for (int g = 0; g < ng; g++)
      if (placed[(size_t)m * ng + g]) {
        x[pb->x_col[milp_xi(pb, m, chosen[m], g)]] = 1.0;
        served += MIN(pb->x_opt[milp_xi(pb, m, chosen[m], g)]->goodput, rate);
      }
    x[pb->y_col[m * nb + chosen[m]]] = 1.0;
    x[m + 1] = MIN(served, rate);
    total += x[m + 1];
  }
  g_free(creq);
  g_free(mreq);
  g_free(chosen);
  g_free(on);
  g_free(order);
  g_free(key);
  g_free(done);
  g_free(gpus);
  g_free(configs);
  g_free(placed);
  return total;
}

double cs_milp_greedy_start(const MilpProblem *pb, const CsPlacementProblem *in,
                            const CsMilpOptions *opt, double *x)
{
  int nm = pb->n_models, nb = pb->n_batches, ng = pb->n_gpus;
  double *rate = g_new(double, MAX(nm, 1)), *density = g_new0(double, MAX(nm, 1));
  for (int m = 0; m < nm; m++) {
    rate[m] = in->models[m].rate_rps;
    for (int k = 0; k < nb; k++)
      for (int g = 0; g < ng; g++) {
        const CsBatchOption *o = pb->x_opt[milp_xi(pb, m, k, g)];
        if (o)
          density[m] = MAX(density[m], MIN(o->goodput, MAX(rate[m], 0.0)) / MAX(o->creq, 1e-9));
      }
  }
  double *other = g_new(double, pb->n_cols + 1);
  double a = greedy_start(pb, in, opt, rate, x);
  double b = greedy_start(pb, in, opt, density, other);
  if (b > a)
    memcpy(x, other, sizeof(double) * (size_t)(pb->n_cols + 1));
  g_free(rate);
  g_free(density);
  g_free(other);
  return MAX(a, b);
}

gboolean cs_milp_satisfies(glp_prob *lp, const double *x, double tol)
{
  int n = glp_get_num_cols(lp);
  int *ind = g_new(int, n + 1);
  double *val = g_new(double, n + 1);
  gboolean ok = TRUE;
  for (int j = 1; ok && j <= n; j++) {
    int type = glp_get_col_type(lp, j);
    double lo = glp_get_col_lb(lp, j), hi = glp_get_col_ub(lp, j);
    ok = !((type == GLP_LO || type == GLP_DB || type == GLP_FX) && x[j] < lo - tol) &&
         !((type == GLP_UP || type == GLP_DB || type == GLP_FX) && x[j] > hi + tol);
  }
  for (int i = 1; ok && i <= glp_get_num_rows(lp); i++) {
    int len = glp_get_mat_row(lp, i, ind, val);
    double a = 0.0;
    for (int t = 1; t <= len; t++)
      a += val[t] * x[ind[t]];
    int type = glp_get_row_type(lp, i);
    double lo = glp_get_row_lb(lp, i), hi = glp_get_row_ub(lp, i);
    ok = !((type == GLP_LO || type == GLP_DB || type == GLP_FX) && a < lo - tol) &&
         !((type == GLP_UP || type == GLP_DB || type == GLP_FX) && a > hi + tol);
  }
  g_free(ind);
  g_free(val);
  return ok;
}

double cs_milp_offered(const CsPlacementProblem *in)
{
  double offered = 0.0;
  for (int m = 0; m < in->n_models; m++)
    offered += MAX(in->models[m].rate_rps, 0.0);
  return offered;
}

gboolean cs_milp_serves_every_rate(const CsPlacementProblem *in, double goodput)
{
  double offered = cs_milp_offered(in);
  return goodput >= offered - 1e-9 * MAX(offered, 1.0);
}

void cs_milp_report_start_optimal(CsMilpInfo *info, GString *log, double goodput)
{
  info->status = CS_MILP_OPTIMAL;
  info->gap = 0.0;
  info->objective = info->bound = goodput;
  g_string_append_printf(log, "greedy start serves every rate: optimal (the objective's upper "
                              "bound), objective %.2f req/s, no solve\n",
                         goodput);
}

void cs_milp_report_empty(CsMilpInfo *info, GString *log)
{
  info->status = CS_MILP_EMPTY;
  g_string_append(log, "no model has a batch size meeting its SLO on any GPU: nothing placed\n");
}
