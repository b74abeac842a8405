/* The configuration master's columns (milp_config.h): the master, every
 * configuration listed, column generation, and the configurations that can
 * still improve on an incumbent. */
#include <math.h>
#include <string.h>

#include "milp_config.h"

/* A listing gives up (as if there were more than its limit) after
 * NODE_FACTOR x (models + 1) x (limit + 1) search nodes. Listing every
 * configuration never needs more than (models + 1) per configuration (each
 * node extends to one by skipping the models left), but the reduced-cost
 * listing prunes by value before capacity and can visit far more partial
 * configurations than it lists; nothing else would bound its time.
 * Deterministic, unlike a clock. */
#define NODE_FACTOR 4

static gint64 node_budget(const MilpMaster *ms, int limit)
{
  return (gint64)NODE_FACTOR * (ms->nm + 1) * ((gint64)limit + 1);
}

static char *config_key(int type, const int *items, int n)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%d:", type);
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%d,", items[i]);
  return g_string_free(s, FALSE);
}

static void config_free(gpointer p)
{
  MilpConfig *c = p;
  g_free(c->items);
  g_free(c);
}

/* The column of configuration (type, items[0..n-1], ascending), added when
 * new. Returns its index in ms->configs. */
int cs_milp_cfg_add(MilpMaster *ms, int type, const int *items, int n, gboolean *added)
{
  char *key = config_key(type, items, n);
  gpointer found = g_hash_table_lookup(ms->seen, key);
  if (found) {
    g_free(key);
    *added = FALSE;
    return GPOINTER_TO_INT(found) - 1;
  }
  MilpConfig *c = g_new(MilpConfig, 1);
  c->type = type;
  c->n = n;
  c->items = g_memdup2(items, sizeof(int) * (size_t)MAX(n, 1));
  g_ptr_array_add(ms->configs, c);
  g_hash_table_insert(ms->seen, key, GINT_TO_POINTER((int)ms->configs->len));
  int col = glp_add_cols(ms->lp, 1);
  g_assert(col == ms->first_z + (int)ms->configs->len - 1);
  glp_set_col_bnds(ms->lp, col, GLP_LO, 0.0, 0.0);
  int *ind = g_new(int, 3 * (size_t)n + 2);
  double *val = g_new(double, 3 * (size_t)n + 2);
  int len = 0;
  for (int i = 0; i < n; i++) {
    int m = items[i] / ms->nb;
    ind[++len] = ms->g_row[m];
    val[len] = -item_credit(ms, type, items[i]);
    ind[++len] = ms->l_row[items[i]];
    val[len] = 1.0;
    ind[++len] = ms->r_row[m];
    val[len] = 1.0;
  }
  ind[++len] = ms->c_row[type];
  val[len] = 1.0;
  glp_set_mat_col(ms->lp, col, len, ind, val);
  g_free(ind);
  g_free(val);
  *added = TRUE;
  return (int)ms->configs->len - 1;
}

/* The rows and the w and y columns; no configuration yet. */
void cs_milp_cfg_init(MilpMaster *ms, const MilpProblem *pb, const CsPlacementProblem *in,
                        const CsMilpOptions *opt)
{
  memset(ms, 0, sizeof *ms);
  ms->pb = pb;
  ms->in = in;
  ms->opt = opt;
  ms->nm = in->n_models;
  ms->nb = opt->n_batches;
  ms->ng = in->n_gpus;
  ms->type_of_gpu = g_new(int, MAX(ms->ng, 1));
  ms->type_gpu0 = g_new(int, MAX(ms->ng, 1));
  ms->type_n = g_new0(int, MAX(ms->ng, 1));
  for (int g = 0; g < ms->ng; g++) {
    int t = 0;
    while (t < ms->nt && strcmp(in->gpus[ms->type_gpu0[t]].gpu_type, in->gpus[g].gpu_type) != 0)
      t++;
    if (t == ms->nt)
      ms->type_gpu0[ms->nt++] = g;
    ms->type_of_gpu[g] = t;
    ms->type_n[t]++;
  }
  ms->rate = g_new(double, MAX(ms->nm, 1));
  for (int m = 0; m < ms->nm; m++)
    ms->rate[m] = MAX(in->models[m].rate_rps, 0.0);
  int nmk = MAX(ms->nm * ms->nb, 1);
  ms->y_col = g_new0(int, nmk);
  ms->l_row = g_new0(int, nmk);
  ms->g_row = g_new0(int, MAX(ms->nm, 1));
  ms->b_row = g_new0(int, MAX(ms->nm, 1));
  ms->r_row = g_new0(int, MAX(ms->nm, 1));
  ms->c_row = g_new0(int, MAX(ms->nt, 1));
  ms->configs = g_ptr_array_new_with_free_func(config_free);
  ms->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

  glp_prob *lp = ms->lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, ms->nm);
  for (int m = 0; m < ms->nm; m++) {
    glp_set_col_bnds(lp, m + 1, GLP_DB, 0.0, ms->rate[m]);
    glp_set_obj_coef(lp, m + 1, 1.0);
  }
  for (int m = 0; m < ms->nm; m++)
    for (int k = 0; k < ms->nb; k++)
      if (pb->y_col[m * ms->nb + k]) {
        ms->y_col[m * ms->nb + k] = glp_add_cols(lp, 1);
        glp_set_col_bnds(lp, ms->y_col[m * ms->nb + k], GLP_DB, 0.0, 1.0);
      }
  ms->first_z = glp_get_num_cols(lp) + 1;
  int ind[3];
  double val[3];
  for (int m = 0; m < ms->nm; m++) {
    int max_rep = MIN(opt->max_replicas ? opt->max_replicas[m] : ms->ng, ms->ng);
    ms->g_row[m] = cs_milp_add_row(lp, GLP_UP, 0.0, 0.0);
    ind[1] = m + 1;
    val[1] = 1.0;
    glp_set_mat_row(lp, ms->g_row[m], 1, ind, val);
    ms->b_row[m] = cs_milp_add_row(lp, GLP_UP, 0.0, 1.0);
    ms->r_row[m] = cs_milp_add_row(lp, GLP_UP, 0.0, max_rep);
    GArray *ys = g_array_new(FALSE, FALSE, sizeof(int));
    int zero = 0;
    g_array_append_val(ys, zero);
    for (int k = 0; k < ms->nb; k++) {
      int item = m * ms->nb + k, y = ms->y_col[item];
      if (!y)
        continue;
      g_array_append_val(ys, y);
      int gpus = 0; /* GPUs whose type has the item */
      for (int t = 0; t < ms->nt; t++)
        gpus += item_opt(ms, t, item) ? ms->type_n[t] : 0;
      ms->l_row[item] = cs_milp_add_row(lp, GLP_UP, 0.0, 0.0);
      ind[1] = y;
      val[1] = -(double)MIN(max_rep, gpus);
      glp_set_mat_row(lp, ms->l_row[item], 1, ind, val);
    }
    double *ones = g_new(double, ys->len);
    for (guint i = 0; i < ys->len; i++)
      ones[i] = 1.0;
    glp_set_mat_row(lp, ms->b_row[m], (int)ys->len - 1, &g_array_index(ys, int, 0), ones);
    g_free(ones);
    g_array_unref(ys);
  }
  for (int t = 0; t < ms->nt; t++)
    ms->c_row[t] = cs_milp_add_row(lp, GLP_UP, 0.0, ms->type_n[t]);
}

void cs_milp_cfg_clear(MilpMaster *ms)
{
  if (ms->lp)
    glp_delete_prob(ms->lp);
  g_free(ms->type_of_gpu);
  g_free(ms->type_gpu0);
  g_free(ms->type_n);
  g_free(ms->rate);
  g_free(ms->y_col);
  g_free(ms->l_row);
  g_free(ms->g_row);
  g_free(ms->b_row);
  g_free(ms->r_row);
  g_free(ms->c_row);
  if (ms->configs)
    g_ptr_array_unref(ms->configs);
  if (ms->seen)
    g_hash_table_unref(ms->seen);
}

/* ---- Enumeration ------------------------------------------------------------ */

/* A depth-first listing of the configurations of one type, model by model
 * (none, or one of its batch sizes that still fits). With value set, only
 * those whose reduced cost (-c_dual + the values of their items) is above
 * floor, pruned by the most the models left could add. */
typedef struct {
  MilpMaster *ms;
  int t;
  const double *value; /* [item]: its share of the reduced cost, or NULL: list all */
  const double *rest;  /* [m]: the largest positive value models m.. can still add */
  double floor;
  int *items, n;
  double creq, mreq, rc;
  int count, limit;
  gint64 nodes;        /* search nodes visited, against node_budget() */
  GArray *found;       /* (type, n, items...) records, flattened */
} Listing;

/* Lists from model m on; FALSE once there are more than e->limit in all
 * (or the node budget is spent). */
static gboolean list_from(Listing *e, int m)
{
  if (++e->nodes > node_budget(e->ms, e->limit))
    return FALSE;
  if (e->value && e->rc + e->rest[m] <= e->floor)
    return TRUE; /* nothing below can reach the floor */
  if (m == e->ms->nm) {
    if (e->n == 0)
      return TRUE;
    if (++e->count > e->limit)
      return FALSE;
    g_array_append_val(e->found, e->t);
    g_array_append_val(e->found, e->n);
    g_array_append_vals(e->found, e->items, (guint)e->n);
    return TRUE;
  }
  if (!list_from(e, m + 1))
    return FALSE;
  for (int k = 0; k < e->ms->nb; k++) {
    int item = m * e->ms->nb + k;
    const CsBatchOption *o = item_opt(e->ms, e->t, item);
    if (!o || e->creq + o->creq > 100.0 || e->mreq + o->mreq > 100.0)
      continue;
    double v = e->value ? e->value[item] : 0.0;
    e->items[e->n++] = item;
    e->creq += o->creq;
    e->mreq += o->mreq;
    e->rc += v;
    gboolean ok = list_from(e, m + 1);
    e->rc -= v;
    e->creq -= o->creq;
    e->mreq -= o->mreq;
    e->n--;
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* The configurations of every type (with d, only those whose reduced cost
 * under d is above floor) into found, when there are at most limit;
 * returns how many, or -1 when there are more. */
static int list_configs(MilpMaster *ms, const MilpDuals *d, double floor, int limit,
                        GArray *found)
{
  int nmk = ms->nm * ms->nb;
  g_array_set_size(found, 0);
  Listing e = { .ms = ms, .items = g_new(int, MAX(ms->nm, 1)), .floor = floor,
                .limit = limit, .found = found };
  double *rest = g_new0(double, (size_t)ms->nm + 1);
  gboolean ok = TRUE;
  for (int t = 0; ok && t < ms->nt; t++) {
    e.t = t;
    if (d) {
      e.value = d->value + (size_t)t * nmk;
      for (int m = ms->nm - 1; m >= 0; m--) {
        double best = 0.0;
        for (int k = 0; k < ms->nb; k++)
          if (item_opt(ms, t, m * ms->nb + k))
            best = MAX(best, e.value[m * ms->nb + k]);
        rest[m] = rest[m + 1] + best;
      }
      e.rest = rest;
      e.rc = -d->c_dual[t];
    }
    ok = list_from(&e, 0);
  }
  g_free(rest);
  g_free(e.items);
  return ok ? e.count : -1;
}

/* Adds the configurations of found as columns, integer ones when integer. */
static void add_found(MilpMaster *ms, const GArray *found, gboolean integer)
{
  for (guint i = 0; i < found->len;) {
    int t = g_array_index(found, int, i), n = g_array_index(found, int, i + 1);
    gboolean added;
    int j = cs_milp_cfg_add(ms, t, &g_array_index(found, int, i + 2), n, &added);
    if (added && integer)
      glp_set_col_kind(ms->lp, ms->first_z + j, GLP_IV);
    i += 2 + (guint)n;
  }
}

gboolean cs_milp_cfg_enumerate(MilpMaster *ms, int limit)
{
  if (limit < 0)
    return FALSE;
  GArray *found = g_array_new(FALSE, FALSE, sizeof(int));
  int count = list_configs(ms, NULL, 0.0, limit, found);
  if (count >= 0)
    add_found(ms, found, FALSE);
  g_array_unref(found);
  return count >= 0;
}

/* ---- Column generation ------------------------------------------------------ */

/* The LP relaxation of the columns so far, from the last basis. Returns TRUE
 * when it is solved to optimality before deadline_us. */
static gboolean lp_solve(MilpMaster *ms, gint64 deadline_us)
{
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  if (!ms->opt->time_up)
    sp.tm_lim = cs_milp_ms_left(deadline_us);
  int ret = glp_simplex(ms->lp, &sp);
  return ret == 0 && glp_get_status(ms->lp) == GLP_OPT;
}

/* An item's share of a configuration's reduced cost under the current duals:
 * the column's coefficients (-credit in the goodput row, 1 in the link and
 * replica rows) against the row duals, d = c - sum a pi with c = 0. */
static double item_value(const MilpMaster *ms, int t, int item)
{
  int m = item / ms->nb;
  return item_credit(ms, t, item) * glp_get_row_dual(ms->lp, ms->g_row[m]) -
         glp_get_row_dual(ms->lp, ms->l_row[item]) - glp_get_row_dual(ms->lp, ms->r_row[m]);
}

/* A priced configuration: its items and reduced cost. */
typedef struct {
  int *items;
  int n;
  double rc;
} Priced;

/* The configuration of type t with the largest reduced cost, exactly, by
 * GLPK on the knapsack (at most one item per model, Creq and Mreq within
 * 100, only items of positive value). Returns FALSE when the time was up
 * before it was proven. */
static gboolean price_exact(MilpMaster *ms, int t, const double *value, gint64 deadline_us,
                            Priced *out)
{
  out->n = 0;
  out->rc = -glp_get_row_dual(ms->lp, ms->c_row[t]);
  int nmk = ms->nm * ms->nb;
  int *item_of_col = g_new(int, nmk + 1);
  glp_prob *kp = glp_create_prob();
  glp_set_obj_dir(kp, GLP_MAX);
  int creq_row = cs_milp_add_row(kp, GLP_UP, 0.0, 100.0);
  int mreq_row = cs_milp_add_row(kp, GLP_UP, 0.0, 100.0);
  int n = 0, model_row = 0, model = -1;
  for (int item = 0; item < nmk; item++) {
    if (!item_opt(ms, t, item) || value[item] <= 1e-12)
      continue;
    const CsBatchOption *o = item_opt(ms, t, item);
    int c = glp_add_cols(kp, 1);
    glp_set_col_kind(kp, c, GLP_BV);
    glp_set_obj_coef(kp, c, value[item]);
    item_of_col[c] = item;
    n++;
    if (item / ms->nb != model) {
      model = item / ms->nb;
      model_row = cs_milp_add_row(kp, GLP_UP, 0.0, 1.0);
    }
    int ind[4] = { 0, creq_row, mreq_row, model_row };
    double val[4] = { 0.0, o->creq, o->mreq, 1.0 };
    glp_set_mat_col(kp, c, 3, ind, val);
  }
  gboolean proven = TRUE;
  if (n > 0) {
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.tm_lim = cs_milp_ms_left(deadline_us);
    int ret = glp_intopt(kp, &parm);
    int status = glp_mip_status(kp);
    proven = ret == 0 && status == GLP_OPT;
    if (status == GLP_OPT || status == GLP_FEAS) {
      for (int c = 1; c <= n; c++)
        if (glp_mip_col_val(kp, c) > 0.5)
          out->items[out->n++] = item_of_col[c];
      out->rc += glp_mip_obj_val(kp);
    }
  }
  glp_delete_prob(kp);
  g_free(item_of_col);
  return proven;
}

/* A second candidate of type t: items of positive value by value per unit of
 * the larger of Creq and Mreq, first fit (one per model). */
static void price_greedy(MilpMaster *ms, int t, const double *value, Priced *out)
{
  int nmk = ms->nm * ms->nb;
  int *order = g_new(int, MAX(nmk, 1));
  double *density = g_new(double, MAX(nmk, 1));
  int n = 0;
  for (int item = 0; item < nmk; item++) {
    const CsBatchOption *o = item_opt(ms, t, item);
    if (!o || value[item] <= 1e-12)
      continue;
    density[item] = value[item] / MAX(MAX(o->creq, o->mreq), 1e-9);
    order[n++] = item;
  }
  for (int i = 1; i < n; i++) /* insertion sort: stable, descending density */
    for (int j = i; j > 0 && density[order[j]] > density[order[j - 1]]; j--) {
      int s = order[j];
      order[j] = order[j - 1];
      order[j - 1] = s;
    }
  gboolean *used = g_new0(gboolean, MAX(ms->nm, 1));
  double creq = 0.0, mreq = 0.0;
  out->n = 0;
  out->rc = -glp_get_row_dual(ms->lp, ms->c_row[t]);
  for (int i = 0; i < n; i++) {
    int item = order[i], m = item / ms->nb;
    const CsBatchOption *o = item_opt(ms, t, item);
    if (used[m] || creq + o->creq > 100.0 || mreq + o->mreq > 100.0)
      continue;
    used[m] = TRUE;
    creq += o->creq;
    mreq += o->mreq;
    out->items[out->n++] = item;
    out->rc += value[item];
  }
  /* ascending, as configurations are keyed */
  for (int i = 1; i < out->n; i++)
    for (int j = i; j > 0 && out->items[j] < out->items[j - 1]; j--) {
      int s = out->items[j];
      out->items[j] = out->items[j - 1];
      out->items[j - 1] = s;
    }
  g_free(order);
  g_free(density);
  g_free(used);
}

/* Column generation until no configuration has a positive reduced cost or
 * deadline_us. Returns the best bound on the integer optimum it proved (the
 * sum of rates when none); *converged says whether the LP is solved over
 * all configurations; *rounds counts the rounds. */
double cs_milp_cfg_generate(MilpMaster *ms, gint64 deadline_us, gboolean *converged, int *rounds)
{
  double bound = 0.0;
  for (int m = 0; m < ms->nm; m++)
    bound += ms->rate[m];
  *converged = FALSE;
  *rounds = 0;
  int nmk = ms->nm * ms->nb;
  double *value = g_new(double, MAX(nmk, 1));
  Priced pr = { .items = g_new(int, MAX(ms->nm, 1)) };
  for (;;) {
    if (ms->opt->time_up ? ms->opt->time_up(TRUE, ms->opt->time_up_data)
                         : g_get_monotonic_time() >= deadline_us)
      break;
    if (!lp_solve(ms, deadline_us))
      break;
    double lagrangian = glp_get_obj_val(ms->lp);
    gboolean exact = TRUE;
    int added = 0;
    (*rounds)++;
    for (int t = 0; t < ms->nt; t++) {
      for (int item = 0; item < nmk; item++)
        value[item] = item_opt(ms, t, item) ? item_value(ms, t, item) : 0.0;
      gboolean proven = price_exact(ms, t, value, deadline_us, &pr);
      exact = exact && proven;
      if (proven)
        lagrangian += ms->type_n[t] * MAX(pr.rc, 0.0);
      gboolean new_col;
      if (pr.rc > CS_MILP_CFG_RC_TOL && pr.n > 0) {
        cs_milp_cfg_add(ms, t, pr.items, pr.n, &new_col);
        added += new_col;
      }
      price_greedy(ms, t, value, &pr);
      if (pr.rc > CS_MILP_CFG_RC_TOL && pr.n > 0) {
        cs_milp_cfg_add(ms, t, pr.items, pr.n, &new_col);
        added += new_col;
      }
    }
    if (exact)
      bound = MIN(bound, lagrangian);
    if (!added) {
      *converged = exact;
      break;
    }
  }
  g_free(value);
  g_free(pr.items);
  return bound;
}

/* ---- Columns that can improve on an incumbent ------------------------------------- */

/* After convergence, with the LP optimum lp and its duals, every integer
 * solution satisfies value <= lp - sum_p |rc_p| z_p (the w and y columns
 * only lower it further: they are dual feasible). So a solution better than
 * an incumbent by anything uses only configurations whose reduced cost is
 * above -(lp - incumbent): listing all of them makes the integer problem
 * over the columns exact. */
void cs_milp_cfg_duals_save(const MilpMaster *ms, MilpDuals *d)
{
  int nmk = ms->nm * ms->nb;
  d->value = g_new0(double, MAX((size_t)ms->nt * nmk, 1));
  d->c_dual = g_new0(double, MAX(ms->nt, 1));
  for (int t = 0; t < ms->nt; t++) {
    d->c_dual[t] = glp_get_row_dual(ms->lp, ms->c_row[t]);
    for (int item = 0; item < nmk; item++)
      if (item_opt(ms, t, item))
        d->value[(size_t)t * nmk + item] = item_value(ms, t, item);
  }
}

void cs_milp_cfg_duals_clear(MilpDuals *d)
{
  g_free(d->value);
  g_free(d->c_dual);
}

int cs_milp_cfg_add_improving(MilpMaster *ms, const MilpDuals *d, double gap, int limit)
{
  GArray *found = g_array_new(FALSE, FALSE, sizeof(int));
  int count = list_configs(ms, d, -gap, limit, found);
  if (count > 0)
    add_found(ms, found, TRUE);
  g_array_unref(found);
  return MAX(count, 0);
}
