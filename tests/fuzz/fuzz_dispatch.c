/* Fuzzes the public dispatch interface (clustersim/dispatch.h) as a careless
 * policy would use it: the input is a script of calls. Its first byte picks a
 * centralized policy or a placement-based one (dedicated placement) over a
 * fixed scenario of two models on two GPUs; every later byte is one call,
 * with its arguments in the bytes after it, taken three at a time on each
 * arrival and timer: new batches of any capacity, adding held requests (or
 * changed copies of them, or requests already gone) to any batch (sent,
 * discarded or of another model included), sends to any GPU or replica,
 * drops, unserved marks, timers and their cancellation, preemption, exec_ns
 * of any size, deferred starts, reads. When the script ends, or nothing is
 * pending, the policy discards its batches and drops what it still holds.
 *
 * Properties: the run ends, either with results that keep every invariant
 * fuzz_run_checked checks (every request leaves once, times in order,
 * counts equal the summary's) or stopped on the policy's misuse
 * (CS_ERROR_POLICY naming it); never a crash, a leak, a sanitizer report,
 * another error, or a batch whose requests differ from what was added. */
#include <string.h>

#include "fuzz_common.h"

#define SLOTS 8

typedef struct {
  const uint8_t *data;
  size_t size, pos;
} Script;

typedef struct {
  CsEngine *e;
  Script *s;
  gboolean placed;
  GArray *held;            /* CsRequest: requests given and not known to have left */
  GArray *gone;            /* CsRequest: requests that left (to reuse them wrongly) */
  CsBatch *slot[SLOTS];    /* batches made (sent or discarded ones stay: stale pointers) */
  GArray *added[SLOTS];    /* CsRequest added to each slot's batch while it was held */
  CsTimer timer;
} Policy;

static Script script;
/* The first batch whose contents differed from what was added, or NULL:
 * a finding only when the run ends without a misuse (after one, the policy
 * goes on calling within its callback on a run that has stopped). */
static char *mismatch;

static int next(Script *s)
{
  return s->pos < s->size ? s->data[s->pos++] : -1;
}

static int arg(Script *s)
{
  int v = next(s);
  return v < 0 ? 0 : v;
}

static void *create(CsEngine *e, const void *params, void *user_data)
{
  (void)params;
  Policy *p = g_new0(Policy, 1);
  p->e = e;
  p->s = &script;
  p->placed = GPOINTER_TO_INT(user_data);
  p->held = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  p->gone = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  for (int i = 0; i < SLOTS; i++)
    p->added[i] = g_array_new(FALSE, FALSE, sizeof(CsRequest));
  return p;
}

static void destroy(void *state)
{
  Policy *p = state;
  g_array_unref(p->held);
  g_array_unref(p->gone);
  for (int i = 0; i < SLOTS; i++)
    g_array_unref(p->added[i]);
  g_free(p);
}

/* The held request k (mod their count) leaves our account. */
static CsRequest take(Policy *p, int k)
{
  CsRequest r = g_array_index(p->held, CsRequest, k % p->held->len);
  g_array_remove_index(p->held, k % p->held->len);
  g_array_append_val(p->gone, r);
  return r;
}

/* A request to pass: mostly a held one, else a gone one or a changed copy. */
static CsRequest pick(Policy *p, int how, int k)
{
  if (p->gone->len > 0 && (how % 8 == 6 || p->held->len == 0))
    return g_array_index(p->gone, CsRequest, k % p->gone->len);
  CsRequest r = p->held->len > 0 ? g_array_index(p->held, CsRequest, k % p->held->len)
                                 : (CsRequest){ .id = (uint64_t)k };
  if (how % 8 == 7)
    r.send_ns += 1 + k; /* a changed copy */
  return r;
}

/* A new batch for slot j (-1: none). The engine reuses batches: a stale
 * pointer of another slot may now name this one, whose additions only its
 * new owner tracks, so such pointers are forgotten. */
static CsBatch *fresh(Policy *p, int model, int cap, int j)
{
  CsBatch *b = cs_engine_batch_new(p->e, model, cap);
  for (int k = 0; k < SLOTS; k++)
    if (k != j && p->slot[k] == b)
      p->slot[k] = NULL;
  return b;
}

static void check_batch(Policy *p, int j)
{
  CsBatch *b = p->slot[j];
  if (!b || cs_batch_size(b) != (int)p->added[j]->len)
    return; /* stale, or the engine refused an addition (the run stops) */
  for (int i = 0; i < cs_batch_size(b); i++) {
    const CsRequest *x = cs_batch_request(b, i), *y = &g_array_index(p->added[j], CsRequest, i);
    if ((!x || x->id != y->id || x->send_ns != y->send_ns || x->measured != y->measured) &&
        !mismatch)
      mismatch = g_strdup_printf("batch slot %d, request %d: the engine holds another request "
                                 "than was added", j, i);
  }
}

static void send(Policy *p, int j, int target)
{
  CsBatch *b = p->slot[j];
  if (p->placed)
    cs_engine_send_replica(p->e, b, target);
  else
    cs_engine_send_gpu(p->e, b, target);
  /* The requests added while it was held leave our account (if the engine
   * refused the send, the run stops and nothing more is asked). */
  for (guint i = 0; i < p->added[j]->len; i++) {
    const CsRequest *r = &g_array_index(p->added[j], CsRequest, i);
    for (guint k = 0; k < p->held->len; k++)
      if (g_array_index(p->held, CsRequest, k).id == r->id) {
        take(p, (int)k);
        break;
      }
  }
  g_array_set_size(p->added[j], 0);
}

static void one_call(Policy *p, int op)
{
  Script *s = p->s;
  int j = arg(s) % SLOTS;
  fuzz_note("at %" G_GINT64_FORMAT " ns: call %d, slot %d, %u held", cs_engine_now(p->e), op % 14,
            j, p->held->len);
  switch (op % 14) {
  case 0: { /* a batch of either model, of a capacity up to 2^23 */
    int model = arg(s) % 3 == 2 ? 1 : 0; /* arguments read in order, one statement each */
    int cap = 1 << (arg(s) % 24);
    g_array_set_size(p->added[j], 0);
    p->slot[j] = fresh(p, model, cap, j);
    break;
  }
  case 1: { /* add a request */
    int how = arg(s), k = arg(s);
    if (!p->slot[j])
      break;
    CsRequest r = pick(p, how, k);
    cs_batch_add(p->e, p->slot[j], &r);
    g_array_append_val(p->added[j], r);
    check_batch(p, j);
    break;
  }
  case 2: /* send, to a target that may be out of range */
    if (p->slot[j])
      send(p, j, arg(s) % 4 - 1);
    break;
  case 3:
  case 4: /* drop / unserved, with the request's model or another */
    if (p->held->len > 0) {
      int k = arg(s), wrong = arg(s) % 5 == 4;
      CsRequest r = take(p, k);
      /* Constant arrivals at equal rates alternate between the two models. */
      int m = (int)(r.id % 2) ^ wrong;
      if (op % 14 == 3)
        cs_engine_drop(p->e, m, &r);
      else
        cs_engine_unserved(p->e, m, &r);
    }
    break;
  case 5: /* a timer up to 2.55 ms ahead */
    p->timer = cs_engine_timer(p->e, cs_engine_now(p->e) + arg(s) * 10000, (uint32_t)j);
    break;
  case 6:
    cs_engine_cancel(p->e, p->timer);
    break;
  case 7: /* discard (a held, sent or already discarded batch) */
    if (p->slot[j]) {
      cs_engine_batch_discard(p->e, p->slot[j]);
      g_array_set_size(p->added[j], 0);
    }
    break;
  case 8: { /* preemption: the requests come back to the policy */
    GArray *back = g_array_new(FALSE, FALSE, sizeof(CsRequest));
    cs_engine_preempt_gpu(p->e, arg(s) % 3, back);
    g_array_append_vals(p->held, back->data, back->len);
    g_array_unref(back);
    break;
  }
  case 9: {
    int model = arg(s) % 2, gpu = arg(s) % 2;
    (void)cs_engine_exec_ns(p->e, model, gpu, 1 << (arg(s) % 24));
    break;
  }
  case 10:
    if (p->slot[j])
      cs_batch_set_not_before(p->slot[j], cs_engine_now(p->e) + arg(s) * 10000);
    break;
  case 11:
    if (p->slot[j])
      cs_batch_set_inputs_at_node(p->slot[j]);
    break;
  case 12: { /* reads, of the world and the GPUs */
    (void)cs_engine_gpu_queued(p->e, arg(s) % 3);
    (void)cs_engine_replica_active(p->e, arg(s) % 3);
    int model = arg(s) % 3;
    (void)cs_world_profile(cs_engine_world(p->e), model, arg(s) % 3);
    break;
  }
  default: /* a batch of one held request, sent where it may go */
    if (p->held->len > 0) {
      CsRequest r = take(p, arg(s));
      int model = (int)(r.id % 2);
      CsBatch *b = fresh(p, model, 1, -1);
      cs_batch_add(p->e, b, &r);
      if (p->placed)
        cs_engine_send_replica(p->e, b, model);
      else
        cs_engine_send_gpu(p->e, b, model);
    }
  }
}

static void calls(Policy *p)
{
  for (int i = 0; i < 3; i++) {
    int op = next(p->s);
    if (op < 0)
      return;
    one_call(p, op);
  }
}

static void on_request(void *state, int model, const CsRequest *r)
{
  Policy *p = state;
  (void)model;
  g_array_append_val(p->held, *r);
  calls(p);
}

static void on_timer(void *state, uint32_t arg)
{
  (void)arg;
  calls(state);
}

/* Nothing pending: what is still held leaves, so that the run ends with
 * every request accounted for. */
static void on_quiet(void *state)
{
  Policy *p = state;
  for (int j = 0; j < SLOTS; j++)
    if (p->slot[j] && p->added[j]->len > 0) {
      cs_engine_batch_discard(p->e, p->slot[j]);
      g_array_set_size(p->added[j], 0);
    }
  while (p->held->len > 0) {
    CsRequest r = take(p, 0);
    cs_engine_drop(p->e, (int)(r.id % 2), &r);
  }
}

static const char *const scenario =
  "{\"seed\": 1, \"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"%s\"}%s,"
  " \"clients\": [{\"model\": \"resnet50\", \"rate\": 200, \"slo_ms\": 100, \"arrival\": \"constant\","
  " \"requests\": 40}, {\"model\": \"alexnet\", \"rate\": 200, \"slo_ms\": 100, \"arrival\":"
  " \"constant\", \"requests\": 40}]}";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  gboolean placed = data[0] & 1;
  script = (Script){ .data = data, .size = size, .pos = 1 };
  CsDispatchPolicy pol = { .name = placed ? "fuzz_placed" : "fuzz_central",
                           .description = "a script of calls",
                           .uses_placement = placed, .create = create, .destroy = destroy,
                           .on_request = on_request, .on_timer = on_timer,
                           .on_quiet = on_quiet };
  CsRegistry *reg = cs_registry_new();
  if (!cs_registry_add_dispatch(reg, &pol, GINT_TO_POINTER(placed), NULL))
    fuzz_fail("cannot register the policy");
  char *json = g_strdup_printf(scenario, pol.name,
                               placed ? ", \"placement\": {\"policy\": \"dedicated\"}" : "");
  GError *error = NULL;
  CsScenario *sc = cs_scenario_new_from_json(json, "fuzz_dispatch.json", fuzz_base_dir(), &error);
  if (!sc)
    fuzz_fail("the fixed scenario does not load: %s", error->message);
  cs_scenario_set_registry(sc, reg);
  cs_registry_unref(reg);
  g_clear_pointer(&mismatch, g_free);
  CsResults *r = fuzz_run_policy(sc, 2, 2);
  if (r && mismatch)
    fuzz_fail("%s", mismatch);
  if (r)
    fuzz_accept();
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  return 0;
}
