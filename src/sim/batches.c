/* The services a dispatch policy forms and sends batches with
 * (clustersim/dispatch.h), and the engine's ledger of the requests the policy
 * holds, against which every request and batch it passes is checked.
 *
 * Why a ledger: CsRequest is a plain value the policy may copy, so the
 * engine cannot tell by the pointer whether a request is one it gave. A copy
 * with its send time shifted or "measured" flipped would give negative
 * latencies, and a request sent twice would count twice; the ledger keeps,
 * for every request from its arrival, its model, send time, "measured" and
 * whether it is still held by the policy, and each service compares what it
 * is given with it. A misuse stops the run at the call (cs_engine_misuse:
 * the call, the simulated time), before anything is counted.
 *
 * The ledger holds the ids from the oldest request not yet answered (held,
 * or sent: preemption gives sent requests back) to the newest: a constant
 * amount of work per request (an entry at arrival, a comparison when it is
 * added, sent or dropped, a store when it is answered), memory of 16 bytes
 * per request in that span, rounded up to a power of two. */
#include <string.h>

#include "engine_state.h"

/* ---- the ledger ------------------------------------------------------------ */



/* A ring, not a GArray: appending through g_array_append_val and dropping
 * the answered front with g_array_remove_range cost a third of a
 * one-model router run's time (bench/engine_suite.py a: 162 -> 249 ns per
 * request); indexing by id needs no move at all. */
void cs_ledger_init(CsLedger *l)
{
  l->cap = 1024;
  l->ring = g_new(CsLedgerEntry, l->cap);
  l->first = l->next = 0;
}

void cs_ledger_clear(CsLedger *l)
{
  g_clear_pointer(&l->ring, g_free);
}

/* Doubles the ring, each entry moving to its place under the new mask. */
void cs_ledger_grow(CsLedger *l)
{
  uint64_t cap = l->cap * 2;
  CsLedgerEntry *ring = g_new(CsLedgerEntry, cap);
  for (uint64_t id = l->first; id < l->next; id++)
    ring[id & (cap - 1)] = l->ring[id & (l->cap - 1)];
  g_free(l->ring);
  l->ring = ring;
  l->cap = cap;
}






void cs_ledger_return(Engine *e, const Req *r)
{
  cs_ledger_set_state(&e->ledger, r, CS_LEDGER_HELD);
}

/* The policy gives back request r (for model, or -1 for any model; in batch
 * for the message): TRUE when it is a request the engine gave and the policy
 * still holds, unchanged. Else records the misuse, naming call, and returns
 * FALSE. */
static gboolean check_request(Engine *e, const char *call, const Req *r, int model)
{
  if (G_UNLIKELY(!r)) {
    cs_engine_misuse(e, "%s: the request is NULL", call);
    return FALSE;
  }
  CsLedger *l = &e->ledger;
  CsLedgerEntry *x = cs_ledger_entry(l, r->id);
  if (G_UNLIKELY(!x || x->state != CS_LEDGER_HELD)) {
    if (r->id >= l->next)
      cs_engine_misuse(e, "%s: request %" G_GUINT64_FORMAT " is not one the engine gave the "
                       "policy (a CsRequest must be the one on_request received, or a copy of "
                       "it; a pointer kept past on_request points to a later request's memory)",
                       call, (guint64)r->id);
    else
      cs_engine_misuse(e, "%s: request %" G_GUINT64_FORMAT " already left the policy (sent, "
                       "dropped or marked unserved): a request leaves it once",
                       call, (guint64)r->id);
    return FALSE;
  }
  if (G_UNLIKELY(model >= 0 && x->model != model)) {
    cs_engine_misuse(e, "%s: request %" G_GUINT64_FORMAT " is of model %s, not %s", call,
                     (guint64)r->id, e->cfg->clients[x->model].model,
                     e->cfg->clients[model].model);
    return FALSE;
  }
  if (G_UNLIKELY(r->send_ns != x->send_ns || (r->measured ? 1 : 0) != x->measured)) {
    cs_engine_misuse(e, "%s: request %" G_GUINT64_FORMAT " was changed: send_ns %" G_GINT64_FORMAT
                     ", measured %s, where the engine gave send_ns %" G_GINT64_FORMAT
                     ", measured %s (a copy must keep every field)",
                     call, (guint64)r->id, (gint64)r->send_ns, r->measured ? "true" : "false",
                     (gint64)x->send_ns, x->measured ? "true" : "false");
    return FALSE;
  }
  return TRUE;
}

gboolean cs_ledger_leave(Engine *e, const char *call, const Req *r, int model, gboolean sent)
{
  if (!check_request(e, call, r, model))
    return FALSE;
  cs_ledger_set_state(&e->ledger, r, sent ? CS_LEDGER_SENT : CS_LEDGER_GONE);
  return TRUE;
}

/* ---- batches ------------------------------------------------------------------ */

/* FALSE after recording the misuse when b is NULL or not a batch the policy
 * holds (sent, discarded, or never made). */
static gboolean held(Engine *e, const char *call, const Batch *b)
{
  if (G_UNLIKELY(!b)) {
    cs_engine_misuse(e, "%s: the batch is NULL", call);
    return FALSE;
  }
  if (G_UNLIKELY(b->state != BATCH_HELD)) {
    cs_engine_misuse(e, "%s: the batch is not one the policy holds (%s): once sent or discarded "
                     "a batch is the engine's",
                     call, b->state == BATCH_FREE ? "discarded, or its result arrived" : "sent");
    return FALSE;
  }
  return TRUE;
}

Batch *cs_engine_batch_new(Engine *e, int model, int cap)
{
  g_return_val_if_fail(e != NULL, NULL);
  if (model < 0 || model >= e->cfg->n_clients) {
    cs_engine_misuse(e, "cs_engine_batch_new: model %d out of range (the scenario has %d)", model,
           e->cfg->n_clients);
    model = 0;
  }
  if (cap > CS_BATCH_MAX) {
    /* A hint, but one of INT_MAX would allocate 48 GB before anything ran. */
    cs_engine_misuse(e, "cs_engine_batch_new: capacity %d beyond the largest batch, %d requests "
                     "(CS_BATCH_MAX)", cap, CS_BATCH_MAX);
    cap = 1;
  }
  cap = MAX(cap, 1);
  Batch *b = e->free_batches;
  if (b) {
    e->free_batches = b->next;
    if (b->cap < cap) {
      b->reqs = g_renew(Req, b->reqs, cap);
      b->cap = cap;
    }
  } else {
    b = g_new0(Batch, 1);
    b->reqs = g_new(Req, cap);
    b->cap = cap;
    g_ptr_array_add(e->batches, b);
  }
  b->engine = e;
  b->model = model;
  b->gpu = -1;
  b->replica = -1;
  b->n = 0;
  b->not_before_ns = 0;
  b->iso_ns = 0;
  b->inputs_at_node = FALSE;
  b->state = BATCH_HELD;
  b->next = NULL;
  return b;
}

void cs_engine_batch_discard(Engine *e, Batch *b)
{
  g_return_if_fail(e != NULL);
  if (!held(e, "cs_engine_batch_discard", b))
    return;
  batch_release(e, b);
}

void cs_batch_add(Engine *e, Batch *b, const Req *r)
{
  g_return_if_fail(e != NULL);
  if (!held(e, "cs_batch_add", b) || !check_request(e, "cs_batch_add", r, b->model))
    return;
  if (b->n == b->cap) {
    if (G_UNLIKELY(b->n >= CS_BATCH_MAX)) {
      cs_engine_misuse(e, "cs_batch_add: a batch of more than %d requests (CS_BATCH_MAX)",
                       CS_BATCH_MAX);
      return;
    }
    b->cap = MIN(2 * b->cap, CS_BATCH_MAX);
    b->reqs = g_renew(Req, b->reqs, b->cap);
  }
  b->reqs[b->n++] = *r;
}

/* The getters take no engine: a batch knows its own, for the misuse. */
static gboolean readable(const Batch *b, const char *call)
{
  if (G_UNLIKELY(b->state == BATCH_FREE)) {
    cs_engine_misuse(b->engine, "%s: the batch was discarded or its result arrived: it is no "
                     "longer the policy's to read", call);
    return FALSE;
  }
  return TRUE;
}

int cs_batch_size(const Batch *b)
{
  g_return_val_if_fail(b != NULL, 0);
  return readable(b, "cs_batch_size") ? b->n : 0;
}

int cs_batch_model(const Batch *b)
{
  g_return_val_if_fail(b != NULL, -1);
  return readable(b, "cs_batch_model") ? b->model : -1;
}

const Req *cs_batch_request(const Batch *b, int i)
{
  g_return_val_if_fail(b != NULL, NULL);
  return readable(b, "cs_batch_request") && i >= 0 && i < b->n ? &b->reqs[i] : NULL;
}

void cs_batch_set_not_before(Batch *b, int64_t t_ns)
{
  g_return_if_fail(b != NULL);
  if (held(b->engine, "cs_batch_set_not_before", b))
    b->not_before_ns = t_ns;
}

void cs_batch_set_inputs_at_node(Batch *b)
{
  g_return_if_fail(b != NULL);
  if (held(b->engine, "cs_batch_set_inputs_at_node", b))
    b->inputs_at_node = TRUE;
}

/* Every request of the batch leaves the policy now; FALSE (the misuse
 * recorded) when one already has, or appears twice. */
static gboolean leave(Engine *e, const char *call, Batch *b)
{
  /* The batch holds the engine's copies of requests checked whole when they
   * were added (cs_batch_add): only whether each is still held is left to
   * check, the full check giving the message when one is not. */
  for (int i = 0; i < b->n; i++) {
    CsLedgerEntry *x = cs_ledger_entry(&e->ledger, b->reqs[i].id);
    if (G_LIKELY(x && x->state == CS_LEDGER_HELD))
      x->state = CS_LEDGER_SENT;
    else if (!cs_ledger_leave(e, call, &b->reqs[i], b->model, TRUE))
      return FALSE;
  }
  return TRUE;
}

/* Network transfer of the batch's requests to gpu's node, then its queue. */
static void send(Engine *e, Batch *b, int gpu, int worker)
{
  Worker *wk = &e->workers[worker];
  wk->outstanding++;
  wk->in_transfer++;
  wk->waiting_requests += b->n;
  b->gpu = gpu;
  b->worker = worker;
  b->id = ++e->next_batch_id;
  b->dispatch_ns = e->now;
  b->node_ns = -1;
  e->gpus[gpu].in_transfer++;
  b->state = BATCH_IN_TRANSFER;
  if (G_UNLIKELY(e->decisions)) {
    const Worker *w = &e->workers[worker];
    fprintf(e->decisions,
            "{\"ev\":\"batch\",\"id\":%" G_GUINT64_FORMAT ",\"model\":%d,\"gpu\":%d,\"worker\":%d,"
            "\"replica\":%d,\"mps_share\":%.17g,\"dispatch_ns\":%" G_GINT64_FORMAT
            ",\"not_before_ns\":%" G_GINT64_FORMAT ",\"inputs_at_node\":%s,\"requests\":[",
            (guint64)b->id, b->model, gpu, worker, b->replica, w->share, (gint64)e->now,
            (gint64)MAX(b->not_before_ns, e->now), b->inputs_at_node ? "true" : "false");
    for (int i = 0; i < b->n; i++)
      fprintf(e->decisions, "%s%" G_GUINT64_FORMAT, i ? "," : "", (guint64)b->reqs[i].id);
    fputs("]}\n", e->decisions);
  }
  int64_t at = b->inputs_at_node ? e->now
                                 : cs_engine_transfer_end(e, b, e->clients[b->model].cfg->input_bytes,
                                                          "request payload");
  eq_push(e->q, at, EV_BATCH_AT_NODE, 0, b);
}

void cs_engine_send_replica(Engine *e, Batch *b, int replica)
{
  g_return_if_fail(e != NULL);
  /* A batch sent twice is in flight: it must not be released here. */
  if (!held(e, "cs_engine_send_replica", b))
    return;
  const CsReplica *r = replica >= 0 && replica < (int)e->replicas->len
                         ? &g_array_index(e->replicas, CsReplica, replica)
                         : NULL;
  if (!e->cfg->placement)
    cs_engine_misuse(e, "cs_engine_send_replica: the run has no placement (a centralized policy sends "
              "with cs_engine_send_gpu)");
  else if (!r)
    cs_engine_misuse(e, "cs_engine_send_replica: replica %d out of range (the run has %u)", replica,
           e->replicas->len);
  else if (r->model != b->model)
    cs_engine_misuse(e, "cs_engine_send_replica: a batch of %s sent to replica %d, which serves %s",
           e->cfg->clients[b->model].model, replica, e->cfg->clients[r->model].model);
  else if (b->n == 0)
    cs_engine_misuse(e, "cs_engine_send_replica: the batch is empty");
  else if (!cs_engine_replica_active(e, replica))
    cs_engine_misuse(e, "cs_engine_send_replica: replica %d is not active (waiting, loading, "
                     "draining or retired: see cs_engine_replica_active)", replica);
  if (e->misuse || !leave(e, "cs_engine_send_replica", b)) {
    batch_release(e, b);
    return;
  }
  b->replica = replica;
  send(e, b, r->gpu, replica);
}

void cs_engine_send_gpu(Engine *e, Batch *b, int gpu)
{
  g_return_if_fail(e != NULL);
  if (!held(e, "cs_engine_send_gpu", b))
    return;
  if (e->cfg->placement)
    cs_engine_misuse(e, "cs_engine_send_gpu: the run has a placement (a placement-based policy sends "
              "with cs_engine_send_replica)");
  else if (gpu < 0 || gpu >= e->cfg->n_gpus)
    cs_engine_misuse(e, "cs_engine_send_gpu: gpu %d out of range (the cluster has %d)", gpu,
           e->cfg->n_gpus);
  else if (b->n == 0)
    cs_engine_misuse(e, "cs_engine_send_gpu: the batch is empty");
  else if (!cs_control_gpu_takes_work(e, gpu))
    cs_engine_misuse(e, "cs_engine_send_gpu: gpu %d takes no work now (off, provisioning or "
                     "released: see cs_engine_gpu_ready)", gpu);
  if (e->misuse || !leave(e, "cs_engine_send_gpu", b)) {
    batch_release(e, b);
    return;
  }
  send(e, b, gpu, b->model * e->cfg->n_gpus + gpu); /* a worker per (model, GPU) */
}

int64_t cs_engine_exec_ns(Engine *e, int model, int gpu, int n)
{
  g_return_val_if_fail(e != NULL, INT64_MAX / 8);
  if (G_UNLIKELY(model < 0 || model >= e->cfg->n_clients || gpu < 0 || gpu >= e->cfg->n_gpus ||
                 n < 1 || n > CS_BATCH_MAX)) {
    cs_engine_misuse(e, "cs_engine_exec_ns: model %d, gpu %d, batch %d out of range (batches of "
                     "1 to %d, CS_BATCH_MAX)", model, gpu, n, CS_BATCH_MAX);
    return INT64_MAX / 8;
  }
  int k = model * e->n_gpu_types + e->gpus[gpu].type;
  GArray *t = e->latency[k];
  if (G_UNLIKELY((guint)n >= t->len)) {
    /* Filled on first use: policies may form batches of any size. */
    const CsModelProfile *prof = e->profile[k];
    if (!prof) {
      cs_engine_misuse(e, "cs_engine_exec_ns: %s has no profile on gpu %d's type %s",
             e->cfg->clients[model].model, gpu, e->cfg->gpus[gpu].gpu_type);
      return INT64_MAX / 8;
    }
    guint old = t->len;
    g_array_set_size(t, MIN(MAX((guint)n + 1, old * 2), (guint)CS_BATCH_MAX + 1));
    for (guint s = MAX(old, 1); s < t->len; s++)
      g_array_index(t, int64_t, s) = cs_model_profile_exec_ns(prof, (int)s);
  }
  return g_array_index(t, int64_t, n);
}
