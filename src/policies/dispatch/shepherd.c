/* Shepherd's Flex scheduler (Zhang et al., NSDI'23) as Symphony's authors
 * implemented it for their comparison (Shepherd's code is not public; their
 * emulator follows the paper's pseudocode after talking with its authors).
 *
 * State: per model one central queue in deadline order (deadline = send +
 * SLO); per GPU at most one batch, sent or running. A batch of b dispatched
 * at now may start at exec = now + d_ctrl + d_data x b and runs l(b) on its
 * GPU (that GPU's profile: a mixed cluster is handled per GPU).
 *
 * BatchGen(now, GPU, models): per model, purge, then the candidate: walk the
 * GPU's current batch (when it runs that model) followed by the queue in
 * deadline order and keep adding requests while the earliest deadline of the
 * batch still allows now + d_ctrl + d_data x b + l(b); stop at the first that
 * does not. Of the models given, the largest candidate wins (ties: the lowest
 * model index).
 *  - A GPU frees: BatchGen over every model; the winner runs there.
 *  - A request arrives: for every GPU in id order, BatchGen over {its model,
 *    the model the GPU runs}: an idle GPU takes a non-empty candidate at once
 *    (eager); a busy GPU is preempted when the candidate holds at least
 *    lambda times the requests of the batch it has: that batch stops (its
 *    GPU time is lost) and its requests return to their queue. When the batch
 *    dispatched is of another model than the one scanned, that model is
 *    scanned over every GPU next (the pseudocode's "go to line 11").
 * Purge ("head", the default and the paper's intent): drop hopeless
 * requests (that cannot finish even alone) from the head. "latest" is the
 * emulator as written: it tests the queue's latest-deadline request, so
 * requests are dropped only once the whole queue is hopeless, and a hopeless
 * head blocks its model's candidates until then (under steady overload
 * nothing is ever served). Both run only where the emulator's BatchGen does; when
 * nothing is pending any more the requests still queued are dropped, as the
 * emulator does when it stops. */
#include <math.h>
#include <string.h>

#include "clustersim/dispatch.h"

typedef enum { PURGE_LATEST, PURGE_HEAD } Purge;

typedef struct {
  int64_t d_ctrl_ns, d_data_ns;
  double lambda;      /* preempt when new size >= lambda x running size */
  gboolean preemption;
  Purge purge;
  int max_batch;
} ShepherdParams;

typedef struct {
  GArray *q;          /* CsRequest, deadline order from index head */
  guint head;
  int64_t slo_ns;
  int64_t alone_ns;   /* d_ctrl + d_data + l(1) on the fastest GPU */
} ModelQueue;

typedef struct {
  gboolean busy;
  int model;
  GArray *reqs;       /* CsRequest: copies of the batch it has */
} GpuState;

typedef struct {
  CsEngine *e;
  const ShepherdParams *p;
  ModelQueue *models;
  int n_models;
  GpuState *gpus;
  int n_gpus;
  GArray *back;       /* scratch: requests returned by a preemption */
} Shepherd;

/* ---- queues --------------------------------------------------------------------- */

static inline guint q_len(const ModelQueue *m)
{
  return m->q->len - m->head;
}

static inline const CsRequest *q_at(const ModelQueue *m, guint i)
{
  return &g_array_index(m->q, CsRequest, m->head + i);
}

static inline int64_t deadline(const ModelQueue *m, const CsRequest *r)
{
  return r->send_ns + m->slo_ns;
}

static void q_pop(ModelQueue *m)
{
  m->head++;
  if (m->head >= 1024 && m->head * 2 >= m->q->len) {
    g_array_remove_range(m->q, 0, m->head);
    m->head = 0;
  }
}

static gint by_deadline(gconstpointer a, gconstpointer b)
{
  const CsRequest *x = a, *y = b;
  if (x->send_ns != y->send_ns)
    return x->send_ns < y->send_ns ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Puts requests a preemption returned back into their queue, in deadline
 * order (one SLO per model: send order, ties by id). */
static void q_requeue(ModelQueue *m, const GArray *back)
{
  g_array_remove_range(m->q, 0, m->head);
  m->head = 0;
  g_array_append_vals(m->q, back->data, back->len);
  g_array_sort(m->q, by_deadline);
}

/* ---- costs ---------------------------------------------------------------------- */

static inline int64_t lat(Shepherd *s, int m, int g, int b)
{
  return cs_engine_exec_ns(s->e, m, g, b);
}

/* When a batch of b dispatched now on GPU g finishes. */
static inline int64_t finish_ns(Shepherd *s, int m, int g, int b, int64_t now)
{
  return now + s->p->d_ctrl_ns + s->p->d_data_ns * b + lat(s, m, g, b);
}

/* The fastest GPU's finish for a lone request dispatched now: the purge's
 * test. */
static inline int64_t alone_ns(Shepherd *s, int m, int64_t now)
{
  return now + s->models[m].alone_ns;
}

/* Drops what the purge rule finds hopeless now. It runs only where the
 * emulator's BatchGen runs (an arrival, a GPU freeing): a drop timer would
 * change who is served, since a hopeless queue blocks its model's later
 * arrivals until the purge empties it. */
static void purge(Shepherd *s, int m, int64_t now)
{
  ModelQueue *mq = &s->models[m];
  int64_t alone = alone_ns(s, m, now);
  if (s->p->purge == PURGE_LATEST) {
    /* The latest deadline is the last; when it is hopeless, all are. */
    if (q_len(mq) > 0 && deadline(mq, q_at(mq, q_len(mq) - 1)) < alone)
      while (q_len(mq) > 0) {
        cs_engine_drop(s->e, m, q_at(mq, 0));
        q_pop(mq);
      }
  } else {
    while (q_len(mq) > 0 && deadline(mq, q_at(mq, 0)) < alone) {
      cs_engine_drop(s->e, m, q_at(mq, 0));
      q_pop(mq);
    }
  }
}

/* The candidate of model m for GPU g: its size (0: none). with_current: the
 * GPU's batch of the same model comes first. */
static int candidate(Shepherd *s, int m, int g, gboolean with_current, int64_t now)
{
  ModelQueue *mq = &s->models[m];
  const GArray *cur = s->gpus[g].reqs;
  guint n_cur = with_current ? cur->len : 0;
  guint total = n_cur + q_len(mq);
  int64_t earliest = INT64_MAX;
  int b = 0;
  for (guint i = 0; i < total && b < s->p->max_batch; i++) {
    const CsRequest *r = i < n_cur ? &g_array_index(cur, CsRequest, i) : q_at(mq, i - n_cur);
    int64_t d = MIN(earliest, deadline(mq, r));
    if (d < finish_ns(s, m, g, b + 1, now))
      break;
    earliest = d;
    b++;
  }
  return b;
}

/* Sends the first b requests of model m's queue to GPU g. */
static void dispatch(Shepherd *s, int m, int g, int b, int64_t now)
{
  ModelQueue *mq = &s->models[m];
  GpuState *gs = &s->gpus[g];
  CsBatch *batch = cs_engine_batch_new(s->e, m, b);
  g_array_set_size(gs->reqs, 0);
  for (int i = 0; i < b; i++) {
    cs_batch_add(s->e, batch, q_at(mq, 0));
    g_array_append_vals(gs->reqs, q_at(mq, 0), 1);
    q_pop(mq);
  }
  cs_batch_set_not_before(batch, now + s->p->d_ctrl_ns + s->p->d_data_ns * b);
  gs->busy = TRUE;
  gs->model = m;
  cs_engine_send_gpu(s->e, batch, g);
}

/* Stops GPU g's batch and returns its requests to their queue. */
static void preempt(Shepherd *s, int g)
{
  GpuState *gs = &s->gpus[g];
  g_array_set_size(s->back, 0);
  cs_engine_preempt_gpu(s->e, g, s->back);
  q_requeue(&s->models[gs->model], s->back);
  g_array_set_size(gs->reqs, 0);
  gs->busy = FALSE;
}

/* A GPU freed (or is idle): BatchGen over every model. */
static void fill_gpu(Shepherd *s, int g, int64_t now)
{
  int best = -1, best_b = 0;
  for (int m = 0; m < s->n_models; m++) {
    purge(s, m, now);
    int b = candidate(s, m, g, FALSE, now);
    if (b > best_b) {
      best = m;
      best_b = b;
    }
  }
  if (best >= 0)
    dispatch(s, best, g, best_b, now);
}

/* Scans every GPU for model m (an arrival, or the model last dispatched). */
static void scan(Shepherd *s, int m, int64_t now)
{
  /* Each rescan follows a dispatch of another model onto a busy GPU, which
   * needs a candidate lambda times larger than what ran: batches grow, so
   * the chain is short; the bound only guards against a zero-size loop. */
  for (int round = 0; round < 4 * s->n_gpus + 4; round++) {
    int next = -1;
    for (int g = 0; g < s->n_gpus && next < 0; g++) {
      GpuState *gs = &s->gpus[g];
      int models[2] = { m, gs->busy ? gs->model : -1 };
      int best = -1, best_b = 0;
      for (int k = 0; k < 2; k++) {
        int x = models[k];
        if (x < 0 || (k == 1 && x == m))
          continue;
        purge(s, x, now);
        int b = candidate(s, x, g, gs->busy && gs->model == x, now);
        if (b > best_b) {
          best = x;
          best_b = b;
        }
      }
      if (best < 0)
        continue;
      if (!gs->busy) {
        dispatch(s, best, g, best_b, now);
      } else if (s->p->preemption && best_b >= s->p->lambda * (double)gs->reqs->len) {
        preempt(s, g);
        /* The candidate counted the GPU's batch first; back in the queue
         * (in deadline order) the same requests lead it. */
        purge(s, best, now);
        int b = candidate(s, best, g, FALSE, now);
        if (b > 0)
          dispatch(s, best, g, b, now);
        else
          fill_gpu(s, g, now);
      } else {
        continue;
      }
      if (s->gpus[g].busy && s->gpus[g].model != m)
        next = s->gpus[g].model;
    }
    if (next < 0)
      return;
    m = next;
  }
}

/* ---- vtable --------------------------------------------------------------------- */

static void *shepherd_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy",     "d_ctrl_us", "d_data_us", "preempt_lambda",
                                      "preemption", "purge",     "max_batch", NULL };
  static const char *const purges[] = { "latest", "head", NULL }; /* index = Purge */
  /* Defaults of Symphony's Shepherd emulator (its command-line flags). */
  double d_ctrl_us = 25, d_data_us = 75, lambda = 3.03;
  gboolean preemption = TRUE;
  int purge_rule = PURGE_HEAD, max_batch = 512;
  cs_params_doc(params, "d_ctrl_us", "fixed delay before a planned batch starts (the emulator's shepherd_dctrl)");
  cs_params_doc(params, "d_data_us", "delay per request of a planned batch (the emulator's shepherd_ddata)");
  cs_params_doc(params, "preempt_lambda", "preempt a running batch when a candidate holds at least this many times its requests");
  cs_params_doc(params, "preemption", "false: never preempt");
  cs_params_doc(params, "purge", "head: drop hopeless requests from the head; latest: the emulator as written (tests the latest deadline)");
  cs_params_doc(params, "max_batch", "largest batch sent");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "d_ctrl_us", FALSE, 0.0, 1e9, &d_ctrl_us,
                     cs_error_list_slot(problems));
    cs_params_double(params, "d_data_us", FALSE, 0.0, 1e9, &d_data_us,
                     cs_error_list_slot(problems));
    cs_params_double(params, "preempt_lambda", FALSE, 1.0, 1e9, &lambda,
                     cs_error_list_slot(problems));
    cs_params_bool(params, "preemption", FALSE, &preemption, cs_error_list_slot(problems));
    cs_params_choice(params, "purge", FALSE, purges, &purge_rule, cs_error_list_slot(problems));
    cs_params_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  if (!preemption && cs_params_has(params, "preempt_lambda")) {
    cs_params_fail(params, error,
                   "\"preempt_lambda\" sets when a batch is preempted; with \"preemption\": false "
                   "it would be ignored");
    return NULL;
  }
  ShepherdParams *p = g_new0(ShepherdParams, 1);
  p->d_ctrl_ns = llround(d_ctrl_us * 1e3);
  p->d_data_ns = llround(d_data_us * 1e3);
  p->lambda = lambda;
  p->preemption = preemption;
  p->purge = (Purge)purge_rule;
  p->max_batch = max_batch;
  return p;
}

static void shepherd_write(const void *params, CsParamsWriter *out)
{
  const ShepherdParams *p = params;
  cs_params_write_double(out, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  cs_params_write_double(out, "d_data_us", p->d_data_ns / 1e3);
  cs_params_write_bool(out, "preemption", p->preemption);
  if (p->preemption)
    cs_params_write_double(out, "preempt_lambda", p->lambda);
  cs_params_write_string(out, "purge", p->purge == PURGE_LATEST ? "latest" : "head");
  cs_params_write_int(out, "max_batch", p->max_batch);
}

static void *shepherd_create(CsEngine *e, const void *params, void *user_data)
{
  (void)user_data;
  const CsWorld *w = cs_engine_world(e);
  Shepherd *s = g_new0(Shepherd, 1);
  s->e = e;
  s->p = params;
  s->n_models = cs_world_n_models(w);
  s->models = g_new0(ModelQueue, MAX(s->n_models, 1));
  for (int m = 0; m < s->n_models; m++) {
    s->models[m].q = g_array_new(FALSE, FALSE, sizeof(CsRequest));
    s->models[m].slo_ns = cs_world_slo_ns(w, m);
  }
  s->n_gpus = cs_world_n_gpus(w);
  s->gpus = g_new0(GpuState, MAX(s->n_gpus, 1));
  for (int g = 0; g < s->n_gpus; g++)
    s->gpus[g].reqs = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  for (int m = 0; m < s->n_models; m++) {
    s->models[m].alone_ns = INT64_MAX / 4;
    for (int g = 0; g < s->n_gpus; g++)
      s->models[m].alone_ns = MIN(s->models[m].alone_ns, finish_ns(s, m, g, 1, 0));
  }
  s->back = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  return s;
}

static void shepherd_destroy(void *state)
{
  Shepherd *s = state;
  for (int m = 0; m < s->n_models; m++)
    g_array_unref(s->models[m].q);
  for (int g = 0; g < s->n_gpus; g++)
    g_array_unref(s->gpus[g].reqs);
  g_array_unref(s->back);
  g_free(s->models);
  g_free(s->gpus);
  g_free(s);
}

static void shepherd_on_request(void *state, int m, const CsRequest *r)
{
  Shepherd *s = state;
  g_array_append_vals(s->models[m].q, r, 1);
  scan(s, m, cs_engine_now(s->e));
}

/* Nothing is pending: the emulator, stopping, drops what it still holds. */
static void shepherd_on_quiet(void *state)
{
  Shepherd *s = state;
  for (int m = 0; m < s->n_models; m++) {
    ModelQueue *mq = &s->models[m];
    while (q_len(mq) > 0) {
      cs_engine_drop(s->e, m, q_at(mq, 0));
      q_pop(mq);
    }
  }
}

static void shepherd_on_batch_finish(void *state, const CsBatchEvent *b)
{
  Shepherd *s = state;
  GpuState *gs = &s->gpus[b->gpu];
  gs->busy = FALSE;
  g_array_set_size(gs->reqs, 0);
  fill_gpu(s, b->gpu, cs_engine_now(s->e));
}

const CsDispatchPolicy cs_dispatch_shepherd = {
  .name = "shepherd",
  .description = "Shepherd's Flex: the largest batch over all models when a GPU frees, "
                 "eager on arrival, preemption by a batch lambda times larger",
  .uses_placement = FALSE,
  .parse = shepherd_parse,
  .free_params = g_free,
  .create = shepherd_create,
  .destroy = shepherd_destroy,
  .on_request = shepherd_on_request,
  .on_quiet = shepherd_on_quiet,
  .on_batch_finish = shepherd_on_batch_finish,
  .describe = shepherd_write,
  .write_defaults = shepherd_write,
};
