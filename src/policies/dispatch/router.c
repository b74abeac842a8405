/* "router": the thesis' frontend (section 4.3.3, Listing 4.3).
 *
 * One open batch per model, bound to the model's current replica. It is sent
 * to that replica's GPU when it reaches the replica's batch size, or when
 * max_wait_ms (MAX_WAIT_TIME, default 100 ms) has passed since its first
 * request, whichever comes first; then the model moves round-robin to its next
 * replica, so each replica receives load in proportion to its batch size. The
 * requests of a model without replicas are unserved. max_wait_ms = 0 sends every
 * request alone.
 *
 * Under a controller (control.h) the replicas change: the router routes over
 * the active ones, and holds a model's batch while its only replicas are
 * still loading (the requests wait, as they would for a real load). */
#include <math.h>

#include "clustersim/dispatch.h"

typedef struct {
  int64_t max_wait_ns;
} RouterParams;

typedef struct {
  int *batch;             /* per replica of this model: its batch size */
  int *replica;           /* index of the replica in the placement (its worker id) */
  int n_replicas;         /* active replicas */
  int pending;            /* replicas waiting for memory or loading (a controller's) */
  int cur;                /* round-robin position */
  CsBatch *open;
  CsTimer timeout;
} ModelRoute;

typedef struct {
  CsEngine *e;
  const RouterParams *p;
  ModelRoute *models;
  int n_models;
} Router;

static void *router_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "max_wait_ms", NULL };
  double max_wait_ms = 100.0; /* thesis 4.3.3 */
  cs_params_doc(params, "max_wait_ms", "a batch leaves at its replica's batch size or this long after its first request (MAX_WAIT_TIME; 0: every request alone)");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "max_wait_ms", FALSE, 0.0, 1e9, &max_wait_ms,
                     cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  RouterParams *p = g_new0(RouterParams, 1);
  p->max_wait_ns = llround(max_wait_ms * 1e6);
  return p;
}

/* The summary and the effective scenario show the same single parameter. */
static void router_describe(const void *params, CsParamsWriter *out)
{
  const RouterParams *p = params;
  cs_params_write_double(out, "max_wait_ms", p->max_wait_ns / 1e6);
}

/* The routes from the run's active replicas, in replica order (that is the
 * round-robin order); pending counts the replicas still waiting or loading. */
static void build_routes(Router *r)
{
  int n_replicas = cs_engine_n_replicas(r->e);
  for (int m = 0; m < r->n_models; m++) {
    ModelRoute *mr = &r->models[m];
    mr->batch = g_renew(int, mr->batch, MAX(n_replicas, 1));
    mr->replica = g_renew(int, mr->replica, MAX(n_replicas, 1));
    mr->n_replicas = 0;
    mr->pending = 0;
    mr->cur = 0;
  }
  for (int i = 0; i < n_replicas; i++) {
    const CsReplica *rep = cs_engine_replica(r->e, i);
    ModelRoute *mr = &r->models[rep->model];
    if (cs_engine_replica_active(r->e, i)) {
      mr->batch[mr->n_replicas] = rep->batch;
      mr->replica[mr->n_replicas] = i;
      mr->n_replicas++;
    } else if (cs_engine_replica_pending(r->e, i)) {
      mr->pending++;
    }
  }
}

static void *router_create(CsEngine *e, const void *params, void *user_data)
{
  (void)user_data;
  const CsWorld *w = cs_engine_world(e);
  Router *r = g_new0(Router, 1);
  r->e = e;
  r->p = params;
  r->n_models = cs_world_n_models(w);
  r->models = g_new0(ModelRoute, MAX(r->n_models, 1));
  build_routes(r);
  return r;
}

static void router_destroy(void *state)
{
  Router *r = state;
  /* An open batch (a run stopped early) belongs to the engine, which frees it. */
  for (int m = 0; m < r->n_models; m++) {
    g_free(r->models[m].batch);
    g_free(r->models[m].replica);
  }
  g_free(r->models);
  g_free(r);
}

/* Sends the open batch to the model's current replica. With no active
 * replica (a controller's change is loading) the batch stays open until one
 * is: on_cluster_change sends it. */
static void send_open(Router *r, int m)
{
  ModelRoute *mr = &r->models[m];
  cs_engine_cancel(r->e, mr->timeout);
  mr->timeout = CS_TIMER_NONE;
  if (mr->n_replicas == 0)
    return;
  CsBatch *b = mr->open;
  mr->open = NULL;
  cs_engine_send_replica(r->e, b, mr->replica[mr->cur]);
  mr->cur = (mr->cur + 1) % mr->n_replicas;
}

/* The model has no replica and none coming: what it holds is unserved. */
static void unserve_open(Router *r, int m)
{
  ModelRoute *mr = &r->models[m];
  if (!mr->open)
    return;
  for (int i = 0; i < cs_batch_size(mr->open); i++)
    cs_engine_unserved(r->e, m, cs_batch_request(mr->open, i));
  cs_engine_cancel(r->e, mr->timeout);
  mr->timeout = CS_TIMER_NONE;
  cs_engine_batch_discard(r->e, mr->open);
  mr->open = NULL;
}

static void router_on_request(void *state, int m, const CsRequest *req)
{
  Router *r = state;
  ModelRoute *mr = &r->models[m];
  if (mr->n_replicas == 0 && mr->pending == 0) {
    cs_engine_unserved(r->e, m, req);
    return;
  }
  if (!mr->open) {
    mr->open = cs_engine_batch_new(r->e, m, mr->n_replicas ? mr->batch[mr->cur] : 1);
    if (r->p->max_wait_ns > 0)
      mr->timeout = cs_engine_timer(r->e, cs_engine_now(r->e) + r->p->max_wait_ns, (uint32_t)m);
  }
  cs_batch_add(r->e, mr->open, req);
  if (mr->n_replicas > 0 &&
      (cs_batch_size(mr->open) >= mr->batch[mr->cur] || r->p->max_wait_ns == 0))
    send_open(r, m);
}

static void router_on_timer(void *state, uint32_t m)
{
  Router *r = state;
  r->models[m].timeout = CS_TIMER_NONE;
  send_open(r, (int)m);
}

/* The replicas changed: routes start over at each model's first active
 * replica. An open batch whose timeout passed, or that fills the new
 * replica's batch, leaves now. */
static void router_on_cluster_change(void *state)
{
  Router *r = state;
  build_routes(r);
  for (int m = 0; m < r->n_models; m++) {
    ModelRoute *mr = &r->models[m];
    if (!mr->open)
      continue;
    if (mr->n_replicas == 0 && mr->pending == 0)
      unserve_open(r, m);
    else if (mr->n_replicas > 0 &&
             (mr->timeout == CS_TIMER_NONE || cs_batch_size(mr->open) >= mr->batch[mr->cur]))
      send_open(r, m);
  }
}

const CsDispatchPolicy cs_dispatch_router = {
  .name = "router",
  .description = "thesis frontend: per-replica target batch, MAX_WAIT_TIME timeout, round-robin",
  .uses_placement = TRUE,
  .parse = router_parse,
  .free_params = g_free,
  .create = router_create,
  .destroy = router_destroy,
  .on_request = router_on_request,
  .on_timer = router_on_timer,
  .describe = router_describe,
  .write_defaults = router_describe,
  .on_cluster_change = router_on_cluster_change,
};
