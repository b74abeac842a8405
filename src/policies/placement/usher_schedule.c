/* Usher step 3: choose and place the configuration of one group
 * (Usher Algorithms 1 and 2 as the thesis implemented them; see usher.h).
 *
 * A configuration gives every member a batch size and a replication factor.
 * Configurations are enumerated like Python's itertools.product over the
 * members in group order (the first member varies slowest), each member's
 * choices in increasing batch size, then increasing factor. With "a later
 * configuration replaces the best only if strictly better", this order is what
 * reproduces the thesis' placement of its first example (t5 batch 8 three
 * times and resnet50 batch 32, not some other 800 req/s placement).
 */
#include <math.h>
#include <string.h>

#include "usher.h"

/* Percentages are sums of measured values: allow rounding noise at 100 %. */
#define CAPACITY_SLACK 1e-9

typedef enum { C_HEAVY, M_HEAVY, NEUTRAL } Kind;

/* One replica of the chosen configuration, in placement order. */
typedef struct {
  int member;
  int gpu;
} Placed;

/* Scratch state of one configuration's placement. */
typedef struct {
  const CsUsherModel *const *members;
  int n_members;
  int gi;                 /* group index, the owner mark of GPUs it opens */
  const CsUsherGpus *start; /* GPUs before this group */
  gboolean unbounded;
  /* working copy of the GPUs; capacity covers every replica of the group */
  double *creq, *mreq;
  int *owner;
  int n, capacity;
  /* per member */
  int *order;             /* placement order (member indices) */
  Kind *kind;
  double *rreq;           /* Creq + Mreq of the chosen batch */
  int *placed;            /* replicas placed */
  int opened;             /* GPUs opened by this group so far */
} Work;

/* Comparison with a relative tolerance: goodputs are sums of products. */
static gboolean greater(double a, double b)
{
  return a > b + 1e-9 * MAX(1.0, MAX(fabs(a), fabs(b)));
}

static const CsBatchOption *chosen_batch(const CsUsherModel *m, int choice)
{
  return &m->cand.opts[m->choice_batch[choice]];
}

/* Member order for Algorithm 2: C-heavy and M-heavy lists, each by Creq+Mreq
 * descending, interleaved starting with C-heavy (the paper pairs
 * (C-heavy_i, M-heavy_i)); what is left of the longer list follows, neutral
 * models last (thesis 5.2.1). Ties keep group order (insertion sort is stable). */
static void placement_order(Work *w, const int *sel)
{
  int lists[3][CS_MATCHING_MAX_NODES];
  int len[3] = { 0, 0, 0 };
  for (int k = 0; k < w->n_members; k++) {
    const CsBatchOption *o = chosen_batch(w->members[k], sel[k]);
    Kind kind = NEUTRAL;
    if (o->creq >= 1.2 * o->mreq && o->creq > 0)
      kind = C_HEAVY;
    else if (o->mreq >= 1.2 * o->creq && o->mreq > 0)
      kind = M_HEAVY;
    w->kind[k] = kind;
    w->rreq[k] = o->creq + o->mreq;
    int *list = lists[kind];
    int pos = len[kind]++;
    while (pos > 0 && w->rreq[list[pos - 1]] < w->rreq[k]) {
      list[pos] = list[pos - 1];
      pos--;
    }
    list[pos] = k;
  }
  int out = 0;
  for (int i = 0; i < MAX(len[C_HEAVY], len[M_HEAVY]); i++) {
    if (i < len[C_HEAVY])
      w->order[out++] = lists[C_HEAVY][i];
    if (i < len[M_HEAVY])
      w->order[out++] = lists[M_HEAVY][i];
  }
  for (int i = 0; i < len[NEUTRAL]; i++)
    w->order[out++] = lists[NEUTRAL][i];
}

/* Picks the GPU for one replica needing (c, m): among GPUs of this group that
 * can host it, the one left with the least spare Creq+Mreq; else the same
 * among GPUs of earlier groups; else the first unused GPU (opened for this
 * group). Lowest index wins ties. Returns -1 when no GPU can take it. */
static int pick_gpu(Work *w, double c, double m)
{
  int best[2] = { -1, -1 };
  double best_spare[2] = { 0.0, 0.0 };
  int first_unused = -1;
  for (int g = 0; g < w->n; g++) {
    if (w->owner[g] < 0) {
      if (first_unused < 0)
        first_unused = g;
      continue;
    }
    if (w->creq[g] + c > 100.0 + CAPACITY_SLACK || w->mreq[g] + m > 100.0 + CAPACITY_SLACK)
      continue;
    int tier = w->owner[g] == w->gi ? 0 : 1;
    double spare = (100.0 - w->creq[g] - c) + (100.0 - w->mreq[g] - m);
    if (best[tier] < 0 || spare < best_spare[tier]) {
      best[tier] = g;
      best_spare[tier] = spare;
    }
  }
  if (best[0] >= 0)
    return best[0];
  if (best[1] >= 0)
    return best[1];
  if (first_unused < 0 && w->unbounded) {
    g_assert(w->n < w->capacity);
    first_unused = w->n++;
    w->creq[first_unused] = w->mreq[first_unused] = 0.0;
    w->owner[first_unused] = -1;
  }
  if (first_unused >= 0) {
    w->owner[first_unused] = w->gi;
    w->opened++;
  }
  return first_unused;
}

/* Places configuration sel on a fresh copy of the starting GPUs. Returns the
 * group's expected goodput; *new_gpus gets the number of GPUs opened. When
 * record is non-NULL, appends (member, gpu) pairs in placement order. Gives up
 * as soon as max_new GPUs are open, returning -1 (min_gpus mode passes the
 * best cost so far: such a configuration cannot win). */
static double place_config(Work *w, const int *sel, int max_new, int *new_gpus, GArray *record)
{
  w->n = w->start->n;
  memcpy(w->creq, w->start->creq, sizeof(double) * (size_t)w->n);
  memcpy(w->mreq, w->start->mreq, sizeof(double) * (size_t)w->n);
  memcpy(w->owner, w->start->owner, sizeof(int) * (size_t)w->n);
  w->opened = 0;
  placement_order(w, sel);
  double goodput = 0.0;
  for (int i = 0; i < w->n_members; i++) {
    int k = w->order[i];
    const CsUsherModel *mod = w->members[k];
    const CsBatchOption *o = chosen_batch(mod, sel[k]);
    int rf = mod->choice_rf[sel[k]];
    w->placed[k] = 0;
    /* Replicas of one model are identical: once one does not fit, none will. */
    while (w->placed[k] < rf) {
      int g = pick_gpu(w, o->creq, o->mreq);
      if (g < 0)
        break;
      w->creq[g] += o->creq;
      w->mreq[g] += o->mreq;
      w->placed[k]++;
      if (w->opened >= max_new) {
        *new_gpus = w->opened;
        return -1.0;
      }
      if (record) {
        Placed r = { .member = k, .gpu = g };
        g_array_append_val(record, r);
      }
    }
    goodput += MIN(mod->rate, w->placed[k] * o->goodput);
  }
  *new_gpus = w->opened;
  return goodput;
}

static void append_config_note(GString *log, Work *w, const int *sel, double goodput,
                               int new_gpus)
{
  for (int k = 0; k < w->n_members; k++) {
    const CsUsherModel *mod = w->members[k];
    const CsBatchOption *o = chosen_batch(mod, sel[k]);
    int rf = mod->choice_rf[sel[k]];
    g_string_append_printf(log, "%s    %s: batch %d, factor %d", k ? "\n" : "", mod->name,
                           o->batch, rf);
    if (w->placed[k] < rf)
      g_string_append_printf(log, " (%d placed)", w->placed[k]);
    g_string_append_printf(log, ", Creq %.2f Mreq %.2f, %s, expected %.2f req/s", o->creq,
                           o->mreq,
                           w->kind[k] == C_HEAVY   ? "C-heavy"
                           : w->kind[k] == M_HEAVY ? "M-heavy"
                                                   : "neutral",
                           MIN(mod->rate, w->placed[k] * o->goodput));
  }
  g_string_append_printf(log, "\n  group expected goodput %.2f req/s, %d new GPU%s\n", goodput,
                         new_gpus, new_gpus == 1 ? "" : "s");
}

long cs_usher_schedule_group(const CsUsherModel *const *members, int n_members, int gi,
                             CsUsherGpus *gpus, const CsUsherOptions *opt, CsPlacement *p,
                             GString *log)
{
  g_assert(n_members >= 1 && n_members <= CS_MATCHING_MAX_NODES);
  Work w = { .members = members, .n_members = n_members, .gi = gi, .start = gpus,
             .unbounded = gpus->unbounded };
  /* Room for every GPU there is plus, when GPUs can be added, one per replica
   * of the group's largest configuration. */
  int extra = 0;
  double group_rate = 0.0;
  for (int k = 0; k < n_members; k++) {
    int max_rf = 0;
    for (int c = 0; c < members[k]->n_choices; c++)
      max_rf = MAX(max_rf, members[k]->choice_rf[c]);
    extra += max_rf;
    group_rate += members[k]->rate;
  }
  w.capacity = gpus->n + (gpus->unbounded ? extra : 0);
  w.creq = g_new(double, MAX(w.capacity, 1));
  w.mreq = g_new(double, MAX(w.capacity, 1));
  w.owner = g_new(int, MAX(w.capacity, 1));
  w.order = g_new(int, n_members);
  w.kind = g_new(Kind, n_members);
  w.rreq = g_new(double, n_members);
  w.placed = g_new(int, n_members);
  int *sel = g_new0(int, n_members);
  int *best_sel = g_new0(int, n_members);
  double best_goodput = -1.0;
  int best_cost = G_MAXINT;
  long evaluated = 0;

  /* min_gpus always, fixed mode when asked: of equal goodput, fewer new GPUs wins. */
  gboolean by_cost = opt->mode == CS_USHER_MIN_GPUS || opt->tie_break == CS_USHER_TIE_FEWEST_GPUS;
  for (;;) {
    int cost = 0;
    /* Once the best serves the whole rate (min_gpus keeps only such choices,
     * usher.c), a configuration can at most tie on goodput, so only fewer
     * new GPUs than the best can win: give up on one at that many. */
    gboolean full = opt->mode == CS_USHER_MIN_GPUS || !greater(group_rate, best_goodput);
    int max_new = by_cost && full ? best_cost : G_MAXINT;
    double goodput = place_config(&w, sel, max_new, &cost, NULL);
    evaluated++;
    gboolean better = greater(goodput, best_goodput) ||
                      (by_cost && !greater(best_goodput, goodput) && cost < best_cost);
    if (better) {
      best_goodput = goodput;
      best_cost = cost;
      memcpy(best_sel, sel, sizeof(int) * (size_t)n_members);
    }
    /* Nothing beats serving the whole load strictly: with ties kept first,
     * later configurations cannot win; with fewer GPUs winning ties, none can
     * open fewer than none. */
    full = opt->mode == CS_USHER_MIN_GPUS || !greater(group_rate, best_goodput);
    if (full && (!by_cost || best_cost == 0))
      break;
    /* Odometer: the last member varies fastest. */
    int k = n_members - 1;
    while (k >= 0 && ++sel[k] == members[k]->n_choices) {
      sel[k] = 0;
      k--;
    }
    if (k < 0)
      break;
  }

  GArray *record = g_array_new(FALSE, FALSE, sizeof(Placed));
  int cost = 0;
  double goodput = place_config(&w, best_sel, G_MAXINT, &cost, record);
  g_string_append_printf(log, "  %ld configuration%s evaluated; chosen:\n", evaluated,
                         evaluated == 1 ? "" : "s");
  append_config_note(log, &w, best_sel, goodput, cost);
  for (guint i = 0; i < record->len; i++) {
    const Placed *r = &g_array_index(record, Placed, i);
    const CsUsherModel *mod = members[r->member];
    const CsBatchOption *o = chosen_batch(mod, best_sel[r->member]);
    double share = opt->mps_shares ? CLAMP(o->creq / 100.0, 0.0, 1.0) : 0.0;
    cs_placement_add(p, mod->model, r->gpu, o->batch, share);
  }
  g_array_unref(record);

  /* Commit the chosen placement's GPU state. */
  if (w.n > gpus->capacity) {
    gpus->capacity = MAX(w.n, 2 * gpus->capacity);
    gpus->creq = g_renew(double, gpus->creq, gpus->capacity);
    gpus->mreq = g_renew(double, gpus->mreq, gpus->capacity);
    gpus->owner = g_renew(int, gpus->owner, gpus->capacity);
  }
  gpus->n = w.n;
  memcpy(gpus->creq, w.creq, sizeof(double) * (size_t)w.n);
  memcpy(gpus->mreq, w.mreq, sizeof(double) * (size_t)w.n);
  memcpy(gpus->owner, w.owner, sizeof(int) * (size_t)w.n);

  g_free(w.creq);
  g_free(w.mreq);
  g_free(w.owner);
  g_free(w.order);
  g_free(w.kind);
  g_free(w.rreq);
  g_free(w.placed);
  g_free(sel);
  g_free(best_sel);
  return evaluated;
}
