/* Usher placement: parameters, per-model preparation, grouping and the
 * group-by-group driver; see usher.h. The configuration search of one group
 * is in usher_schedule.c.
 *
 *   "placement": {"policy": "usher", "metric": "ao", "mode": "fixed",
 *                 "max_group_size": 4, "batch_sizes": [4, 8, 16, 32, 64, 128],
 *                 "mps_shares": true}
 *
 * Optional "groups": [["densenet121", "efficientnet_b7", "vgg19"], ["alexnet",
 * "resnet50"]] replaces step 2: the groups, in placement order. The paper
 * leaves both the grouping's ties and the group order open; this lets a
 * scenario pin them (e.g. to the thesis' figures).
 *
 * "wao-usher" and "wsm-usher" are the same policy with another default metric.
 */
#include "usher.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "matching.h"
#include "placement_policies.h"

/* Above this many configurations in one group the enumeration would take
 * minutes; such a scenario needs a smaller max_group_size or fewer GPUs. */
#define MAX_CONFIGURATIONS 20000000.0

/* Replication factors are i * c_l for i = 1..6 (paper 3.3.2). */
#define MAX_MULTIPLE 6
/* Replicas of one model a plan may hold (c_l); MAX_MULTIPLE times it fits
 * an int. */
#define MAX_PLAN_REPLICAS (1 << 20)

/* One group while grouping: members ascending by model index. */
typedef struct {
  int members[CS_MATCHING_MAX_NODES];
  int size;
  double sum_creq, sum_mreq; /* of the members' average Creq / Mreq */
} Group;

void cs_usher_info_clear(CsUsherInfo *info)
{
  g_free(info->group_of_model);
  memset(info, 0, sizeof *info);
}

/* Fills the scheduler's view of model m: candidates, c_l and choices. */
static gboolean prepare_model(CsUsherModel *um, const CsPlacementProblem *in, int m,
                              const CsUsherOptions *opt, GString *log, GError **error)
{
  const CsPlacementModel *model = &in->models[m];
  um->model = m;
  um->name = model->name;
  um->rate = model->rate_rps;
  if (!cs_model_options_init(&um->cand, in->profiles, in->gpus[0].gpu_type, model, opt->metric,
                             opt->batches, opt->n_batches, "usher", error))
    return FALSE;
  const CsModelOptions *c = &um->cand;
  int largest = -1;
  for (int i = 0; i < c->n; i++)
    if (c->opts[i].meets_slo)
      largest = i;
  if (largest < 0) {
    g_string_append_printf(log, "%s: not served, no candidate batch size meets SLO %.3f ms "
                                "and fits a GPU\n",
                           model->name, model->slo_ms);
    return TRUE;
  }
  /* c_l: replicas at the largest batch size meeting the SLO that serve the
   * whole rate. The 1e-9 keeps an exact multiple from rounding up. */
  double need = model->rate_rps / c->opts[largest].goodput;
  if (!(need <= MAX_PLAN_REPLICAS)) {
    /* min_gpus plans a GPU per replica and fixed mode could never place
     * them: past this the int counts below would overflow and the plan's
     * arrays grow with the rate, not with the cluster. */
    g_string_append_printf(log, "%s: not served, c_l = %.3g replicas at batch %d (%.2f req/s "
                                "each) exceed any plan (at most %d replicas)\n",
                           model->name, ceil(need - 1e-9), c->opts[largest].batch,
                           c->opts[largest].goodput, MAX_PLAN_REPLICAS);
    return TRUE;
  }
  um->c_l = MAX(1, (int)ceil(need - 1e-9));
  um->choice_batch = g_new(int, c->n * MAX_MULTIPLE);
  um->choice_rf = g_new(int, c->n * MAX_MULTIPLE);
  for (int i = 0; i < c->n; i++) {
    if (!c->opts[i].meets_slo)
      continue;
    for (int mult = 1; mult <= MAX_MULTIPLE; mult++) {
      int rf = mult * um->c_l;
      if (opt->mode == CS_USHER_FIXED && rf > in->n_gpus)
        break;
      /* min_gpus keeps only configurations serving the whole rate: every
       * replica gets a GPU there, so the others can never be chosen. */
      if (opt->mode == CS_USHER_MIN_GPUS && rf * c->opts[i].goodput < model->rate_rps - 1e-9)
        continue;
      um->choice_batch[um->n_choices] = i;
      um->choice_rf[um->n_choices] = rf;
      um->n_choices++;
    }
  }
  if (um->n_choices == 0)
    g_string_append_printf(log,
                           "%s: not served, c_l = %d replicas at batch %d (%.2f req/s each) "
                           "exceed the %d GPUs of the cluster\n",
                           model->name, um->c_l, c->opts[largest].batch,
                           c->opts[largest].goodput, in->n_gpus);
  return TRUE;
}

/* Merges two sorted member lists into dst. */
static void merge_groups(Group *dst, const Group *a, const Group *b)
{
  int i = 0, j = 0;
  dst->size = 0;
  while (i < a->size || j < b->size) {
    if (j >= b->size || (i < a->size && a->members[i] < b->members[j]))
      dst->members[dst->size++] = a->members[i++];
    else
      dst->members[dst->size++] = b->members[j++];
  }
  dst->sum_creq = a->sum_creq + b->sum_creq;
  dst->sum_mreq = a->sum_mreq + b->sum_mreq;
}

/* Adds model m to group g, keeping members in model order and summing the
 * model's average Creq and Mreq. The average is over every batch size that
 * fits a GPU, not only those meeting the SLO (paper 3.3.1); this is what makes
 * the thesis' second example group bert with gpt2 and resnet50. */
static void group_add(Group *g, const CsUsherModel *um)
{
  const CsModelOptions *c = &um->cand;
  int pos = g->size++;
  while (pos > 0 && g->members[pos - 1] > um->model) {
    g->members[pos] = g->members[pos - 1];
    pos--;
  }
  g->members[pos] = um->model;
  for (int i = 0; i < c->n; i++) {
    g->sum_creq += c->opts[i].creq / c->n;
    g->sum_mreq += c->opts[i].mreq / c->n;
  }
}

/* Groups given in the parameters: forced[m] is model m's group. Models
 * without candidates are left out. Returns the number of groups. */
static int forced_groups(const CsUsherModel *um, int n_models, const int *forced, Group *groups)
{
  int n = 0;
  for (int m = 0; m < n_models; m++)
    n = MAX(n, forced[m] + 1);
  memset(groups, 0, sizeof *groups * (size_t)n);
  for (int m = 0; m < n_models; m++)
    if (um[m].cand.n > 0)
      group_add(&groups[forced[m]], &um[m]);
  /* Drop groups left empty by models without candidates. */
  int kept = 0;
  for (int gi = 0; gi < n; gi++)
    if (groups[gi].size > 0)
      groups[kept++] = groups[gi];
  return kept;
}

typedef struct {
  double weight;
  int i, j;
} Edge;

static int by_weight(const void *a, const void *b)
{
  const Edge *x = a, *y = b;
  if (x->weight != y->weight)
    return x->weight < y->weight ? -1 : 1;
  if (x->i != y->i)
    return x->i < y->i ? -1 : 1;
  return (x->j > y->j) - (x->j < y->j);
}

/* Usher's grouping beyond the exact matching's size: edges in ascending
 * weight (ties: lower node numbers first) are taken while both ends are
 * free. The result is a maximal matching, not always of maximum
 * cardinality or minimum weight (networkx's blossom algorithm in the thesis
 * is exact at any size). Fills mate as cs_min_weight_matching does and
 * returns the number of pairs. */
static int greedy_matching(int n, const double *weight, int *mate)
{
  Edge *edges = g_new(Edge, MAX((size_t)n * (n - 1) / 2, 1));
  size_t n_edges = 0;
  for (int i = 0; i < n; i++) {
    mate[i] = -1;
    for (int j = i + 1; j < n; j++)
      if (isfinite(weight[i * n + j]))
        edges[n_edges++] = (Edge){ weight[i * n + j], i, j };
  }
  qsort(edges, n_edges, sizeof *edges, by_weight);
  int pairs = 0;
  for (size_t e = 0; e < n_edges; e++)
    if (mate[edges[e].i] < 0 && mate[edges[e].j] < 0) {
      mate[edges[e].i] = edges[e].j;
      mate[edges[e].j] = edges[e].i;
      pairs++;
    }
  g_free(edges);
  return pairs;
}

/* Usher step 2 (thesis 5.2.2): every model with candidates starts as a group,
 * in scenario order; each round merges the pairs of a minimum-weight
 * maximum-cardinality matching on D = |sum Creq - sum Mreq| over both groups'
 * models, with edges only between groups whose union stays within
 * max_group_size; rounds stop when no edge is left. After a round the merged
 * groups come first (in the order of their first node), then the unmatched
 * ones: the order the thesis' implementation produced in both of its examples
 * with groups of different ages (5.4.1 and 6.2.1), and the order groups are
 * placed in. This order is also the next round's node order, which decides
 * the matching's ties (matching.h). A round of more than
 * CS_MATCHING_MAX_NODES groups, where the exact matching would take 2^n
 * memory, matches greedily instead (greedy_matching); a round halves the
 * groups, so the exact matching takes over within a few rounds. Returns the
 * number of groups (in groups[]); never fails. */
static int form_groups(const CsUsherModel *um, int n_models, int max_group_size, Group *groups,
                       GString *log, GError **error)
{
  int n = 0;
  for (int m = 0; m < n_models; m++) {
    if (um[m].cand.n == 0)
      continue;
    memset(&groups[n], 0, sizeof groups[n]);
    group_add(&groups[n++], &um[m]);
  }
  if (n > CS_MATCHING_MAX_NODES)
    g_string_append_printf(log, "%d models to group: rounds with more than %d groups use a "
                                "greedy matching (docs/policies.md)\n",
                           n, CS_MATCHING_MAX_NODES);
  double *weight = g_new(double, MAX(n * n, 1));
  int *mate = g_new(int, MAX(n, 1));
  Group *next = g_new(Group, MAX(n, 1));
  for (int round = 1;; round++) {
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        gboolean ok = i != j && groups[i].size + groups[j].size <= max_group_size;
        weight[i * n + j] =
          ok ? fabs(groups[i].sum_creq + groups[j].sum_creq - groups[i].sum_mreq -
                    groups[j].sum_mreq)
             : INFINITY;
      }
    }
    int pairs = n <= CS_MATCHING_MAX_NODES ? cs_min_weight_matching(n, weight, mate, NULL, error)
                                           : greedy_matching(n, weight, mate);
    g_assert(pairs >= 0); /* n is in range */
    if (pairs == 0)
      break;
    int n_next = 0;
    for (int i = 0; i < n; i++)
      if (mate[i] > i)
        merge_groups(&next[n_next++], &groups[i], &groups[mate[i]]);
    for (int i = 0; i < n; i++)
      if (mate[i] < 0)
        next[n_next++] = groups[i];
    memcpy(groups, next, sizeof *next * (size_t)n_next);
    n = n_next;
    g_string_append_printf(log, "grouping round %d: %d pair%s merged, %d group%s\n", round, pairs,
                           pairs == 1 ? "" : "s", n, n == 1 ? "" : "s");
  }
  g_free(weight);
  g_free(mate);
  g_free(next);
  return n;
}

CsPlacement *cs_usher_place(const CsPlacementProblem *in, const CsUsherOptions *opt,
                            CsUsherInfo *info, GError **error)
{
  g_return_val_if_fail(opt->max_group_size >= 1 &&
                         opt->max_group_size <= CS_MATCHING_MAX_NODES,
                       NULL);
  if (!cs_place_require_homogeneous(in, "usher", error))
    return NULL;
  if (opt->groups) {
    int *size = g_new0(int, MAX(in->n_models, 1));
    gboolean bad = FALSE;
    for (int m = 0; m < in->n_models && !bad; m++) {
      bad = opt->groups[m] < 0 || opt->groups[m] >= in->n_models ||
            ++size[opt->groups[m]] > CS_MATCHING_MAX_NODES;
      if (bad)
        g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                    "placement \"usher\": model \"%s\" has group %d; groups are numbered "
                    "0..%d and hold at most %d models",
                    in->models[m].name, opt->groups[m], in->n_models - 1, CS_MATCHING_MAX_NODES);
    }
    g_free(size);
    if (bad)
      return NULL;
  }
  CsPlacement *p = cs_placement_new(in->n_models);
  cs_placement_set_creq_metric(p, opt->metric);
  /* Notes go to a GString first: the helpers below append to it. */
  GString *log = g_string_new(NULL);
  g_string_append_printf(log, "usher: metric %s, mode %s%s, max group size %d\n",
                         cs_place_metric_name(opt->metric),
                         opt->mode == CS_USHER_FIXED ? "fixed" : "min_gpus",
                         opt->mode == CS_USHER_FIXED && opt->tie_break == CS_USHER_TIE_FEWEST_GPUS
                           ? " (ties: fewest GPUs)" : "",
                         opt->max_group_size);
  if (in->n_gpus == 0) {
    /* Without a GPU there is no GPU type to read the profiles of. */
    g_string_append(log, "the cluster has no GPU: nothing placed\n");
    if (info) {
      memset(info, 0, sizeof *info);
      info->group_of_model = g_new(int, MAX(in->n_models, 1));
      for (int m = 0; m < in->n_models; m++)
        info->group_of_model[m] = -1;
    }
    cs_placement_log(p, "%s", log->str);
    g_string_free(log, TRUE);
    return p;
  }

  CsUsherModel *um = g_new0(CsUsherModel, MAX(in->n_models, 1));
  Group *groups = g_new(Group, MAX(in->n_models, 1));
  CsUsherGpus gpus = { 0 };
  int n_groups = -1;
  long configurations = 0;
  gboolean ok = TRUE;
  for (int m = 0; ok && m < in->n_models; m++)
    ok = prepare_model(&um[m], in, m, opt, log, error);
  if (ok)
    n_groups = opt->groups
                 ? forced_groups(um, in->n_models, opt->groups, groups)
                 : form_groups(um, in->n_models, opt->max_group_size, groups, log, error);
  ok = ok && n_groups >= 0;
  for (int gi = 0; ok && gi < n_groups; gi++) {
    double product = 1.0;
    for (int k = 0; k < groups[gi].size; k++)
      if (um[groups[gi].members[k]].n_choices > 0)
        product *= um[groups[gi].members[k]].n_choices;
    if (product > MAX_CONFIGURATIONS) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "placement \"usher\": group %d has %.3g configurations (more than %.3g); "
                  "lower max_group_size or use fewer batch sizes",
                  gi + 1, product, MAX_CONFIGURATIONS);
      ok = FALSE;
    }
  }

  if (ok) {
    gpus.unbounded = opt->mode == CS_USHER_MIN_GPUS;
    gpus.n = gpus.unbounded ? 0 : in->n_gpus;
    gpus.capacity = MAX(gpus.n, 1);
    gpus.creq = g_new0(double, gpus.capacity);
    gpus.mreq = g_new0(double, gpus.capacity);
    gpus.owner = g_new(int, gpus.capacity);
    for (int g = 0; g < gpus.n; g++)
      gpus.owner[g] = -1;
    const CsUsherModel *members[CS_MATCHING_MAX_NODES];
    for (int gi = 0; gi < n_groups; gi++) {
      const Group *grp = &groups[gi];
      g_string_append_printf(log, "group %d:", gi + 1);
      int n_members = 0;
      for (int k = 0; k < grp->size; k++) {
        const CsUsherModel *mod = &um[grp->members[k]];
        g_string_append_printf(log, "%s %s", k ? "," : "", mod->name);
        if (mod->n_choices > 0)
          members[n_members++] = mod;
      }
      g_string_append_printf(log, " (sum of average Creq %.2f, Mreq %.2f)\n", grp->sum_creq,
                             grp->sum_mreq);
      if (n_members == 0) {
        g_string_append(log, "  no model of the group can be served\n");
        continue;
      }
      configurations += cs_usher_schedule_group(members, n_members, gi, &gpus, opt, p, log);
    }
  }

  int used = 0;
  for (int g = 0; ok && g < gpus.n; g++)
    used += gpus.owner[g] >= 0;
  if (ok && opt->mode == CS_USHER_MIN_GPUS) {
    g_string_append_printf(log, "gpus_needed: %d\n", used);
    cs_placement_set_gpus_needed(p, used);
    if (used > in->n_gpus) {
      /* Like the thesis' mapping of a plan onto a smaller cluster (5.1.5):
       * GPUs in order until they run out. */
      g_string_append_printf(log,
                             "the cluster has only %d GPU%s, fewer than the %d needed: replicas "
                             "planned for GPUs %d..%d are dropped\n",
                             in->n_gpus, in->n_gpus == 1 ? "" : "s", used, in->n_gpus, used - 1);
      for (int i = cs_placement_n_replicas(p) - 1; i >= 0; i--)
        if (cs_placement_replica(p, i)->gpu >= in->n_gpus)
          cs_placement_remove_replica(p, i);
    }
  }
  if (ok) {
    cs_place_compute_expected(p, in);
    for (int m = 0; m < in->n_models; m++)
      g_string_append_printf(log, "%s: expected goodput %.2f of %.2f req/s\n",
                             in->models[m].name, cs_placement_expected_goodput(p, m),
                             in->models[m].rate_rps);
    int on = 0;
    gboolean *hosts = g_new0(gboolean, in->n_gpus);
    for (int i = 0; i < cs_placement_n_replicas(p); i++) {
      int g = cs_placement_replica(p, i)->gpu;
      on += !hosts[g];
      hosts[g] = TRUE;
    }
    g_free(hosts);
    g_string_append_printf(log, "expected total goodput %.2f req/s on %d GPU%s\n",
                           cs_placement_expected_total(p), on, on == 1 ? "" : "s");
    if (info) {
      info->gpus_needed = used;
      info->n_groups = n_groups;
      info->configurations = configurations;
      info->group_of_model = g_new(int, MAX(in->n_models, 1));
      for (int m = 0; m < in->n_models; m++)
        info->group_of_model[m] = -1;
      for (int gi = 0; gi < n_groups; gi++)
        for (int k = 0; k < groups[gi].size; k++)
          info->group_of_model[groups[gi].members[k]] = gi;
    }
  }

  for (int m = 0; m < in->n_models; m++) {
    cs_model_options_clear(&um[m].cand);
    g_free(um[m].choice_batch);
    g_free(um[m].choice_rf);
  }
  g_free(um);
  g_free(groups);
  g_free(gpus.creq);
  g_free(gpus.mreq);
  g_free(gpus.owner);
  cs_placement_log(p, "%s", log->str);
  g_string_free(log, TRUE);
  if (!ok) {
    cs_placement_free(p);
    return NULL;
  }
  return p;
}

/* ---- Registry entries ------------------------------------------------------ */

/* Reads "groups": [["model", ...], ...], every scenario model exactly once.
 * *out stays NULL when absent, else gets n_models group indices (caller
 * g_free()s). */
static gboolean read_groups(const CsPlacementProblem *in, CsParams *params, int **out,
                            GError **error)
{
  *out = NULL;
  CsParams *list = cs_params_get(params, "groups");
  if (!list)
    return TRUE;
  int *group = g_new(int, MAX(in->n_models, 1));
  for (int m = 0; m < in->n_models; m++)
    group[m] = -1;
  gboolean ok = cs_params_kind(list) == CS_PARAMS_ARRAY;
  if (!ok)
    cs_params_fail(list, error, "expected an array of groups (arrays of model names), got %s",
                   cs_params_kind_name(list));
  for (int gi = 0; ok && gi < cs_params_size(list); gi++) {
    CsParams *g = cs_params_at(list, gi);
    int size = cs_params_size(g);
    gboolean is_array = cs_params_kind(g) == CS_PARAMS_ARRAY;
    if (!is_array || size == 0 || size > CS_MATCHING_MAX_NODES)
      ok = cs_params_fail(g, error, "expected an array of 1 to %d model names, got %s",
                          CS_MATCHING_MAX_NODES,
                          is_array ? "another number of elements" : cs_params_kind_name(g));
    for (int k = 0; ok && k < size; k++) {
      CsParams *name = cs_params_at(g, k);
      const char *s = NULL;
      int m = 0;
      if (cs_params_kind(name) != CS_PARAMS_STRING) {
        ok = cs_params_fail(name, error, "expected a model name, got %s",
                            cs_params_kind_name(name));
        break;
      }
      if (!cs_params_as_string(name, &s, NULL))
        s = ""; /* the empty string: no model has that name */
      while (m < in->n_models && strcmp(in->models[m].name, s) != 0)
        m++;
      if (m == in->n_models)
        ok = cs_params_fail(name, error, "model \"%s\" has no client in the scenario", s);
      else if (group[m] >= 0)
        ok = cs_params_fail(name, error, "model \"%s\" is already in group %d", s, group[m]);
      else
        group[m] = gi;
    }
  }
  for (int m = 0; ok && m < in->n_models; m++)
    if (group[m] < 0)
      ok = cs_params_fail(list, error, "model \"%s\" is in no group", in->models[m].name);
  if (!ok) {
    g_free(group);
    return FALSE;
  }
  *out = group;
  return TRUE;
}

/* policy: registry name; metric_fixed: the name implies the metric (an alias
 * such as "wao-usher"), so a different "metric" parameter is a contradiction. */
static CsPlacement *usher_place_params(const CsPlacementProblem *in, CsParams *params,
                                       const char *policy, CsCreqMetric default_metric,
                                       gboolean metric_fixed, GError **error)
{
  static const char *const keys[] = { "policy",      "metric",     "mode",   "max_group_size",
                                      "batch_sizes", "mps_shares", "groups", "tie_break",
                                      NULL };
  static const char *const modes[] = { "fixed", "min_gpus", NULL };
  static const char *const tie_breaks[] = { "fewest_gpus", "first", NULL };
  CsUsherOptions opt = { .metric = default_metric, .mode = CS_USHER_FIXED,
                         .max_group_size = 4, .mps_shares = TRUE };
  int mode = 0, tie_break = 0;
  int *batches = NULL, *groups = NULL;
  cs_params_doc(params, "metric", "Creq column: ao, wao or wsm (fixed by wao-usher and wsm-usher)");
  cs_params_doc(params, "mode", "fixed: maximise expected goodput on the cluster's GPUs; min_gpus: serve every rate with as few GPUs as possible");
  cs_params_doc(params, "tie_break", "fixed mode only: of equal-goodput configurations keep the one opening the fewest GPUs, or the first enumerated");
  cs_params_doc(params, "max_group_size", "largest group the grouping may form (the paper and the thesis use 4)");
  cs_params_doc(params, "batch_sizes", "candidate batch sizes, an array of distinct integers in [1, 1048576]");
  cs_params_doc_default(params, "batch_sizes", "4, 8, 16, 32, 64, 128");
  cs_params_doc(params, "mps_shares", "each replica gets MPS share Creq/100 of its batch size, as in the thesis");
  cs_params_doc(params, "groups", "array of arrays of model names: skips the grouping step (every model exactly once, in placement order)");
  cs_params_doc_default(params, "groups", "grouping by the policy");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_place_read_metric(params, "metric", metric_fixed ? policy : NULL, "usher", &opt.metric,
                         cs_error_list_slot(problems));
    cs_params_choice(params, "mode", FALSE, modes, &mode, cs_error_list_slot(problems));
    cs_params_choice(params, "tie_break", FALSE, tie_breaks, &tie_break,
                     cs_error_list_slot(problems));
    cs_params_int(params, "max_group_size", FALSE, 1, CS_MATCHING_MAX_NODES, &opt.max_group_size,
                  cs_error_list_slot(problems));
    cs_params_bool(params, "mps_shares", FALSE, &opt.mps_shares, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  opt.mode = mode == 0 ? CS_USHER_FIXED : CS_USHER_MIN_GPUS;
  opt.tie_break = tie_break == 1 ? CS_USHER_TIE_FIRST : CS_USHER_TIE_FEWEST_GPUS;
  if (opt.mode == CS_USHER_MIN_GPUS && cs_params_has(params, "tie_break")) {
    cs_params_fail_field(params, "tie_break", error,
                         "applies to mode \"fixed\" only (min_gpus always keeps the "
                         "configuration with the fewest GPUs); remove it");
    return NULL;
  }
  if (!read_groups(in, params, &groups, error))
    return NULL;
  if (!cs_place_read_batch_sizes(params, &batches, &opt.n_batches, error)) {
    g_free(groups);
    return NULL;
  }
  opt.batches = batches;
  opt.groups = groups;
  if (cs_params_describing(params)) { /* the catalogue needs the parameters only */
    g_free(batches);
    g_free(groups);
    return NULL;
  }
  CsPlacement *p = cs_usher_place(in, &opt, NULL, error);
  g_free(batches);
  g_free(groups);
  return p;
}

static CsPlacement *usher_ao(const CsPlacementProblem *in, CsParams *params, void *user_data,
                             GError **error)
{
  (void)user_data;
  return usher_place_params(in, params, "usher", CS_CREQ_AO, FALSE, error);
}

static CsPlacement *usher_wao(const CsPlacementProblem *in, CsParams *params, void *user_data,
                              GError **error)
{
  (void)user_data;
  return usher_place_params(in, params, "wao-usher", CS_CREQ_WAO, TRUE, error);
}

static CsPlacement *usher_wsm(const CsPlacementProblem *in, CsParams *params, void *user_data,
                              GError **error)
{
  (void)user_data;
  return usher_place_params(in, params, "wsm-usher", CS_CREQ_WSM, TRUE, error);
}

const CsPlacementPolicy cs_place_usher = {
  .name = "usher",
  .description = "Usher (OSDI'24) as in the thesis: grouping, configuration search, greedy "
                 "C/M-heavy placement; metric ao (default), wao or wsm",
  .place = usher_ao,
};

const CsPlacementPolicy cs_place_wao_usher = {
  .name = "wao-usher",
  .description = "Usher with weighted average achieved occupancy as Creq (thesis 5.3.1)",
  .place = usher_wao,
};

const CsPlacementPolicy cs_place_wsm_usher = {
  .name = "wsm-usher",
  .description = "Usher with weighted average SM utilisation as Creq (thesis 5.3.2)",
  .place = usher_wsm,
};
