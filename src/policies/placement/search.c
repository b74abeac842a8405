/* "search": a placement searched by simulation.
 *
 *   "placement": {"policy": "search", "start": ["dedicated", "usher", {"policy": "milp"}],
 *                 "max_evaluations": 200, "seeds": 2, "first_seed": 1000,
 *                 "duration_s": 0, "threads": 0, "round": 8}
 *
 * The analytic policies plan from models of the GPU that ignore what the
 * thesis found decisive (queueing in the router, batch filling, transfers,
 * interference at several levels). This policy scores placements by running
 * the scenario itself (cs_placement_simulate): every starting policy's
 * placement is scored, then local moves improve the best one by hill
 * climbing. Moves of a placement, in this order: each replica's batch to the
 * neighbouring profiled batch sizes (halved and doubled without profiled
 * points); under MPS its share by -0.1 and +0.1 (within (0, 1]; 0, no limit,
 * stays out); removing it; moving it to each other GPU; adding, on each GPU,
 * a replica of each model with the batch of its first replica (the largest
 * profiled batch within the SLO when it has none). A candidate whose
 * replicas exceed a GPU's memory (sum of Mreq over 100 %) is skipped.
 *
 * Score: over `seeds` runs with seeds first_seed, first_seed + 1, ...
 * (common random numbers: every candidate sees the same arrivals; the run's
 * own seed is held out), the objective: "goodput", the mean total goodput
 * (default; it may leave an expensive model unserved when that serves the
 * others more), or "served_share", the mean over models of each one's
 * goodput over its rate, capped at 1 (every model weighs the same). Ties
 * (within 1e-9) go to more total goodput, fewer GPUs used, fewer replicas,
 * then the earlier candidate.
 * Candidates are scored in rounds of `round` in move order, in parallel on
 * `threads` threads (0: the machine's cores); after a round the best
 * candidate that beats the current placement becomes it and its moves are
 * generated anew; a round without one goes on with the next moves, and the
 * search ends at a placement no move improves or after max_evaluations
 * scores (starting placements included). The result depends only on the
 * scenario, the parameters and the seeds, never on the thread count. The
 * returned placement never scores below the best start: it is one of the
 * scored ones. Its expected goodput per model is its simulated goodput.
 */
#include <math.h>
#include <string.h>

#include "placement_policies.h"

typedef struct {
  CsPlacement *p;
  CsPlacementScore score;
  double value;          /* the objective */
  double *model_goodput;
  int replicas;
  gboolean ok;
  char *error;
} Cand;

typedef struct {
  const CsPlacementProblem *pb;
  const uint64_t *seeds;
  int n_seeds;
  double duration_s;
  gboolean served_share; /* objective: mean served share of the models, not total goodput */
} Job;

static void cand_clear(Cand *c)
{
  cs_placement_free(c->p);
  g_free(c->model_goodput);
  g_free(c->error);
  memset(c, 0, sizeof *c);
}

static void score_one(gpointer data, gpointer user)
{
  Cand *c = data;
  const Job *j = user;
  GError *err = NULL;
  c->model_goodput = g_new0(double, MAX(j->pb->n_models, 1));
  c->score.model_goodput_rps = c->model_goodput;
  c->ok = cs_placement_simulate(j->pb, c->p, j->seeds, j->n_seeds, j->duration_s, &c->score, &err);
  if (!c->ok) {
    c->error = g_strdup(err->message);
    g_error_free(err);
  }
  c->replicas = cs_placement_n_replicas(c->p);
  c->value = c->score.goodput_rps;
  if (c->ok && j->served_share) {
    /* Each model weighs the same: its goodput over its rate, capped at 1. */
    double sum = 0;
    for (int m = 0; m < j->pb->n_models; m++) {
      double rate = j->pb->models[m].rate_rps;
      sum += rate > 0 ? MIN(1.0, c->model_goodput[m] / rate) : 1.0;
    }
    c->value = sum / MAX(j->pb->n_models, 1);
  }
}

/* Scores cands[0..n) on `threads` threads; the results do not depend on
 * the order the threads finish in. */
static void score_all(Cand *cands, int n, int threads, Job *job)
{
  if (threads <= 1 || n <= 1) {
    for (int i = 0; i < n; i++)
      score_one(&cands[i], job);
    return;
  }
  GThreadPool *pool = g_thread_pool_new(score_one, job, MIN(threads, n), TRUE, NULL);
  for (int i = 0; i < n; i++)
    g_thread_pool_push(pool, &cands[i], NULL);
  g_thread_pool_free(pool, FALSE, TRUE);
}

/* a better than b: more goodput, then fewer GPUs, then fewer replicas. */
static gboolean better(const Cand *a, const Cand *b)
{
  if (!a->ok)
    return FALSE;
  if (!b->ok)
    return TRUE;
  if (fabs(a->value - b->value) > 1e-9)
    return a->value > b->value;
  if (fabs(a->score.goodput_rps - b->score.goodput_rps) > 1e-9)
    return a->score.goodput_rps > b->score.goodput_rps;
  if (a->score.gpus_used != b->score.gpus_used)
    return a->score.gpus_used < b->score.gpus_used;
  return a->replicas < b->replicas;
}

static CsPlacement *copy_placement(const CsPlacement *p, int skip)
{
  CsPlacement *q = cs_placement_new(cs_placement_n_models(p));
  for (int i = 0; i < cs_placement_n_replicas(p); i++)
    if (i != skip) {
      const CsReplica *r = cs_placement_replica(p, i);
      cs_placement_add(q, r->model, r->gpu, r->batch, r->mps_share);
    }
  return q;
}

static const CsModelProfile *profile_of(const CsPlacementProblem *pb, int model, int gpu)
{
  return cs_profile_set_lookup(pb->profiles, pb->gpus[gpu].gpu_type, pb->models[model].name);
}

/* TRUE when every GPU holds its replicas' memory (sum of Mreq <= 100 %). */
static gboolean fits(const CsPlacementProblem *pb, const CsPlacement *p)
{
  double *mem = g_new0(double, MAX(pb->n_gpus, 1));
  gboolean ok = TRUE;
  for (int i = 0; i < cs_placement_n_replicas(p) && ok; i++) {
    const CsReplica *r = cs_placement_replica(p, i);
    mem[r->gpu] += cs_model_profile_mreq_pct(profile_of(pb, r->model, r->gpu), r->batch);
    ok = mem[r->gpu] <= 100.0 + 1e-9;
  }
  g_free(mem);
  return ok;
}

/* The profiled batch sizes next to b (below and above), or b/2 and 2b
 * without profiled points; 0 where there is none. */
static void neighbour_batches(const CsModelProfile *prof, int b, int *lower, int *upper)
{
  *lower = 0;
  *upper = 0;
  int n = prof ? cs_model_profile_n_points(prof) : 0;
  for (int i = 0; i < n; i++) {
    int s = cs_model_profile_point_at(prof, i)->batch;
    if (s < b)
      *lower = s;
    if (s > b && *upper == 0)
      *upper = s;
  }
  if (n == 0) {
    *lower = b > 1 ? b / 2 : 0;
    *upper = b * 2;
  }
}

/* The batch a new replica of model gets on gpu: that of its first replica,
 * else the largest profiled batch whose latency fits the SLO (1 if none). */
static int new_batch(const CsPlacementProblem *pb, const CsPlacement *p, int model, int gpu)
{
  for (int i = 0; i < cs_placement_n_replicas(p); i++)
    if (cs_placement_replica(p, i)->model == model)
      return cs_placement_replica(p, i)->batch;
  const CsModelProfile *prof = profile_of(pb, model, gpu);
  int best = 1;
  for (int i = 0; prof && i < cs_model_profile_n_points(prof); i++) {
    const CsBatchPoint *pt = cs_model_profile_point_at(prof, i);
    if (cs_model_profile_latency_ns(prof, pt->batch) * 1e-6 <= pb->models[model].slo_ms)
      best = pt->batch;
  }
  return best;
}

/* Every move of p, in the documented order, that fits in memory. */
static GPtrArray *moves(const CsPlacementProblem *pb, const CsPlacement *p)
{
  GPtrArray *out = g_ptr_array_new();
  int n = cs_placement_n_replicas(p);
  gboolean mps = pb->gpu_model && pb->gpu_model->mps;
  for (int i = 0; i < n; i++) {
    const CsReplica *r = cs_placement_replica(p, i);
    int lower, upper;
    neighbour_batches(profile_of(pb, r->model, r->gpu), r->batch, &lower, &upper);
    int batches[2] = { lower, upper };
    for (int k = 0; k < 2; k++)
      if (batches[k] > 0) {
        CsPlacement *q = copy_placement(p, i);
        cs_placement_add(q, r->model, r->gpu, batches[k], r->mps_share);
        g_ptr_array_add(out, q);
      }
    if (mps && r->mps_share > 0)
      for (int k = -1; k <= 1; k += 2) {
        double s = round((r->mps_share + 0.1 * k) * 1000) / 1000;
        if (s > 0 && s <= 1.0 + 1e-9) {
          CsPlacement *q = copy_placement(p, i);
          cs_placement_add(q, r->model, r->gpu, r->batch, MIN(s, 1.0));
          g_ptr_array_add(out, q);
        }
      }
    g_ptr_array_add(out, copy_placement(p, i)); /* remove it */
    for (int g = 0; g < pb->n_gpus; g++)
      if (g != r->gpu && profile_of(pb, r->model, g)) {
        CsPlacement *q = copy_placement(p, i);
        cs_placement_add(q, r->model, g, r->batch, r->mps_share);
        g_ptr_array_add(out, q);
      }
  }
  for (int g = 0; g < pb->n_gpus; g++)
    for (int m = 0; m < pb->n_models; m++)
      if (profile_of(pb, m, g)) {
        CsPlacement *q = copy_placement(p, -1);
        cs_placement_add(q, m, g, new_batch(pb, p, m, g), 0.0);
        g_ptr_array_add(out, q);
      }
  /* Out of memory: not a candidate. */
  GPtrArray *kept = g_ptr_array_new();
  for (guint i = 0; i < out->len; i++) {
    CsPlacement *q = g_ptr_array_index(out, i);
    if (fits(pb, q))
      g_ptr_array_add(kept, q);
    else
      cs_placement_free(q);
  }
  g_ptr_array_free(out, TRUE);
  return kept;
}

typedef struct {
  int max_evaluations, n_seeds, threads, round;
  int64_t first_seed;
  double duration_s;
  gboolean served_share;
} SearchParams;

static gboolean read_params(CsParams *params, SearchParams *sp, GError **error)
{
  static const char *const keys[] = { "policy", "start", "max_evaluations", "seeds", "first_seed",
                                      "duration_s", "threads", "round", "objective", NULL };
  static const char *const objectives[] = { "goodput", "served_share", NULL };
  int first_seed = 1000, objective = 0;
  *sp = (SearchParams){ .max_evaluations = 200, .n_seeds = 2, .threads = 0, .round = 8,
                        .duration_s = 0 };
  cs_params_doc(params, "start", "starting policies: names or placement objects with their parameters");
  cs_params_doc_default(params, "start", "every analytic policy (dedicated, usher, ..., igniter)");
  cs_params_doc(params, "max_evaluations", "scores at most this many placements (the starts included)");
  cs_params_doc(params, "seeds", "simulations per candidate (common random numbers: seeds first_seed, first_seed + 1, ...)");
  cs_params_doc(params, "first_seed", "first seed of the candidates' simulations (held away from the run's own)");
  cs_params_doc(params, "duration_s", "each client's measured phase cut to this many seconds when > 0");
  cs_params_doc(params, "threads", "threads scoring moves in parallel (0: one per core)");
  cs_params_doc(params, "round", "moves scored per round; the best of a round that improves is taken");
  cs_params_doc(params, "objective", "goodput: the mean total goodput; served_share: the share of each model's rate served");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_int(params, "max_evaluations", FALSE, 1, 1000000, &sp->max_evaluations,
                  cs_error_list_slot(problems));
    cs_params_int(params, "seeds", FALSE, 1, 1000, &sp->n_seeds, cs_error_list_slot(problems));
    cs_params_int(params, "first_seed", FALSE, 0, G_MAXINT, &first_seed,
                  cs_error_list_slot(problems));
    cs_params_double(params, "duration_s", FALSE, 0, 1e9, &sp->duration_s,
                     cs_error_list_slot(problems));
    cs_params_int(params, "threads", FALSE, 0, 4096, &sp->threads, cs_error_list_slot(problems));
    cs_params_int(params, "round", FALSE, 1, 4096, &sp->round, cs_error_list_slot(problems));
    cs_params_choice(params, "objective", FALSE, objectives, &objective,
                     cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return FALSE;
  sp->served_share = objective == 1;
  sp->first_seed = first_seed;
  if (sp->threads == 0)
    sp->threads = (int)g_get_num_processors();
  return TRUE;
}

/* The starting policies' "placement" objects as JSON text. */
static GPtrArray *read_starts(CsParams *params, GError **error)
{
  GPtrArray *starts = g_ptr_array_new_with_free_func(g_free);
  CsParams *list = cs_params_get(params, "start");
  if (!list) {
    static const char *const defaults[] = { "dedicated", "usher", "wao-usher", "wsm-usher",
                                            "milp", "ao-milp", "wsm-milp", "igniter", NULL };
    for (int i = 0; defaults[i]; i++)
      g_ptr_array_add(starts, g_strdup_printf("{\"policy\": \"%s\"}", defaults[i]));
    return starts;
  }
  if (cs_params_kind(list) != CS_PARAMS_ARRAY || cs_params_size(list) == 0) {
    cs_params_fail_field(params, "start", error,
                         "expected a non-empty array of policy names or placement objects");
    g_ptr_array_free(starts, TRUE);
    return NULL;
  }
  for (int i = 0; i < cs_params_size(list); i++) {
    CsParams *item = cs_params_at(list, i);
    const char *name = NULL;
    if (cs_params_kind(item) == CS_PARAMS_STRING && cs_params_as_string(item, &name, error)) {
      if (strcmp(name, "search") == 0) {
        cs_params_fail(item, error, "\"search\" cannot start from itself");
        g_ptr_array_free(starts, TRUE);
        return NULL;
      }
      g_ptr_array_add(starts, g_strdup_printf("{\"policy\": \"%s\"}", name));
    } else if (cs_params_kind(item) == CS_PARAMS_OBJECT) {
      /* Its fields belong to that policy, which checks them. */
      for (int k = 0; k < cs_params_size(item); k++)
        cs_params_get(item, cs_params_name(cs_params_at(item, k)));
      g_ptr_array_add(starts, cs_params_to_json(item));
    } else {
      cs_params_fail(item, error, "expected a policy name or a placement object, got %s",
                     cs_params_kind_name(item));
      g_ptr_array_free(starts, TRUE);
      return NULL;
    }
  }
  return starts;
}

static void log_score(CsPlacement *log, const char *what, const Cand *c)
{
  cs_placement_log(log, "%s: goodput %.4f req/s, bad rate %.4f, %d GPU(s), %d replica(s)", what,
                   c->score.goodput_rps, c->score.bad_rate, c->score.gpus_used, c->replicas);
  int unserved = 0;
  for (int m = 0; c->model_goodput && m < cs_placement_n_models(c->p); m++)
    unserved += c->model_goodput[m] <= 0;
  if (unserved > 0)
    cs_placement_log(log, ", %d model(s) without goodput", unserved);
  cs_placement_log(log, "\n");
}

static CsPlacement *search_place(const CsPlacementProblem *pb, CsParams *params, void *user_data,
                                 GError **error)
{
  (void)user_data;
  SearchParams sp;
  if (!read_params(params, &sp, error))
    return NULL;
  GPtrArray *starts = read_starts(params, error);
  if (!starts)
    return NULL;
  if (!pb->simulator) {
    g_ptr_array_free(starts, TRUE);
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "\"search\" scores placements by simulating the scenario, and this problem has "
                "none (a controller's re-placement or a policy run from code)");
    return NULL;
  }
  uint64_t *seeds = g_new(uint64_t, sp.n_seeds);
  for (int k = 0; k < sp.n_seeds; k++)
    seeds[k] = (uint64_t)sp.first_seed + (uint64_t)k;
  Job job = { .pb = pb, .seeds = seeds, .n_seeds = sp.n_seeds, .duration_s = sp.duration_s,
              .served_share = sp.served_share };
  CsPlacement *log = cs_placement_new(pb->n_models); /* collects the log text */
  cs_placement_log(log, "search: scores are mean goodput over seeds %" G_GINT64_FORMAT "..%"
                   G_GINT64_FORMAT, (gint64)sp.first_seed, (gint64)(sp.first_seed + sp.n_seeds - 1));
  if (sp.duration_s > 0)
    cs_placement_log(log, ", measured phase cut to %g s", sp.duration_s);
  cs_placement_log(log, "; budget %d evaluations\n", sp.max_evaluations);
  /* Starting placements. */
  int n_starts = (int)starts->len;
  Cand *cands = g_new0(Cand, MAX(n_starts, 1));
  int evaluations = 0;
  for (int i = 0; i < n_starts; i++) {
    GError *err = NULL;
    cands[i].p = cs_placement_problem_place(pb, g_ptr_array_index(starts, i), &err);
    if (!cands[i].p) {
      cands[i].error = g_strdup(err->message);
      g_error_free(err);
    }
  }
  GPtrArray *scored = g_ptr_array_new(); /* the starts that produced a placement */
  for (int i = 0; i < n_starts; i++)
    if (cands[i].p && evaluations < sp.max_evaluations) {
      g_ptr_array_add(scored, &cands[i]);
      evaluations++;
    }
  Cand *batch = g_new0(Cand, MAX(scored->len, 1));
  for (guint i = 0; i < scored->len; i++)
    batch[i].p = ((Cand *)g_ptr_array_index(scored, i))->p;
  score_all(batch, (int)scored->len, sp.threads, &job);
  for (guint i = 0; i < scored->len; i++) {
    Cand *c = g_ptr_array_index(scored, i);
    CsPlacement *p = c->p;
    *c = batch[i];
    c->p = p;
  }
  g_free(batch);
  g_ptr_array_free(scored, TRUE);
  Cand best = { 0 };
  int best_start = -1;
  for (int i = 0; i < n_starts; i++) {
    const char *json = g_ptr_array_index(starts, i);
    if (!cands[i].p) {
      cs_placement_log(log, "start %s: failed: %s\n", json, cands[i].error);
      continue;
    }
    if (!cands[i].ok) {
      cs_placement_log(log, "start %s: %s\n", json,
                       cands[i].error ? cands[i].error : "not scored (budget)");
      continue;
    }
    char *what = g_strdup_printf("start %s", json);
    log_score(log, what, &cands[i]);
    g_free(what);
    if (best_start < 0 || better(&cands[i], &cands[best_start]))
      best_start = i;
  }
  if (best_start < 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "\"search\": no starting policy gave a placement that runs:\n%s",
                cs_placement_log_text(log));
    for (int i = 0; i < n_starts; i++)
      cand_clear(&cands[i]);
    g_free(cands);
    g_free(seeds);
    cs_placement_free(log);
    g_ptr_array_free(starts, TRUE);
    return NULL;
  }
  best = cands[best_start];
  cands[best_start].p = NULL;
  cands[best_start].model_goodput = NULL;
  cands[best_start].error = NULL;
  cs_placement_log(log, "best start: %s\n", (char *)g_ptr_array_index(starts, best_start));
  for (int i = 0; i < n_starts; i++)
    cand_clear(&cands[i]);
  g_free(cands);

  /* Hill climbing by rounds of moves. */
  int accepted = 0;
  GPtrArray *ms = moves(pb, best.p);
  guint next = 0;
  while (next < ms->len && evaluations < sp.max_evaluations) {
    int n = (int)MIN((guint)sp.round, ms->len - next);
    n = MIN(n, sp.max_evaluations - evaluations);
    Cand *round = g_new0(Cand, n);
    for (int i = 0; i < n; i++)
      round[i].p = g_ptr_array_index(ms, next + (guint)i);
    score_all(round, n, sp.threads, &job);
    evaluations += n;
    int win = -1;
    for (int i = 0; i < n; i++)
      if (better(&round[i], win < 0 ? &best : &round[win]))
        win = i;
    if (win >= 0) {
      cand_clear(&best);
      best = round[win];
      round[win].p = NULL;
      round[win].model_goodput = NULL;
      round[win].error = NULL;
      accepted++;
      char *what = g_strdup_printf("move %d (evaluation %d)", accepted, evaluations);
      log_score(log, what, &best);
      g_free(what);
    }
    for (int i = 0; i < n; i++) {
      round[i].p = NULL; /* owned by ms (the winner's was taken) */
      g_free(round[i].model_goodput);
      g_free(round[i].error);
    }
    g_free(round);
    /* The winner left ms; free the rest of the round's and start anew. */
    if (win >= 0) {
      g_ptr_array_index(ms, next + (guint)win) = NULL;
      for (guint i = 0; i < ms->len; i++)
        cs_placement_free(g_ptr_array_index(ms, i));
      g_ptr_array_free(ms, TRUE);
      ms = moves(pb, best.p);
      next = 0;
    } else {
      next += (guint)n;
    }
  }
  gboolean local_optimum = next >= ms->len;
  for (guint i = 0; i < ms->len; i++)
    cs_placement_free(g_ptr_array_index(ms, i));
  g_ptr_array_free(ms, TRUE);
  cs_placement_log(log, "%s after %d evaluations (%d moves accepted)\n",
                   local_optimum ? "no move improves: a local optimum" : "budget spent",
                   evaluations, accepted);
  log_score(log, "result", &best);

  /* The result: the best placement, its simulated goodput as expected. */
  CsPlacement *out = copy_placement(best.p, -1);
  for (int m = 0; m < pb->n_models; m++)
    cs_placement_set_expected_goodput(out, m, MAX(0.0, best.model_goodput[m]));
  cs_placement_log(out, "%s", cs_placement_log_text(log));
  cand_clear(&best);
  cs_placement_free(log);
  g_free(seeds);
  g_ptr_array_free(starts, TRUE);
  return out;
}

const CsPlacementPolicy cs_place_search = {
  .name = "search",
  .description = "placement searched by simulation: the other policies' placements improved by "
                 "local moves, each scored by running the scenario (common random numbers)",
  .place = search_place,
};
