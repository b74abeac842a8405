/* The clients of the simulated world: when each sends (arrival processes:
 * Poisson, gamma, constant, explicit times, per-interval trace rates), its
 * measurement window (warm-up, duration or request count), and what becomes
 * of each request it sent: the result arriving back (latency, SLO, the
 * client's counters and stage samples), or a drop, failure or no replica;
 * and the per-request records (CSV rows, on_request observer). The handler
 * of an arrival, on_arrival, is static inline in engine_state.h. */
#include <gsl/gsl_randist.h>
#include <math.h>

#include "common/checked.h"
#include "engine_state.h"
#include "rng.h"
#include "stats.h"

/* ---- arrivals ----------------------------------------------------------- */

/* The next CS_GAP_BATCH gaps of a Poisson or gamma client, in ns. Drawn
 * together because a draw's log is a long chain of dependent
 * instructions: one at a time, each arrival waited for its own (a fifth of
 * a run's cycles); in a row, the processor works on several at once, and
 * more of them when a loop holds nothing but the logs (the uniforms drawn
 * before, the products and rounding after: 3 % of workload a). The
 * gaps, and their order, are those the client would draw one at a time:
 * its generator serves nothing else, and a gap's mean is the client's
 * for the whole run. What is drawn ahead and never used changes nothing. */
static void draw_gaps(Client *c)
{
  g_assert(c->rng != NULL); /* a Client of src/replay draws nothing */
  const CsClientConfig *cfg = c->cfg;
  double mean_s = c->mean_gap_s, g[CS_GAP_BATCH];
  if (cfg->arrival == CS_ARRIVAL_POISSON) {
    /* cs_rng_exponential's -mu log(1 - u), its three steps in three loops. */
    for (int i = 0; i < CS_GAP_BATCH; i++)
      g[i] = 1.0 - cs_rng_uniform(c->rng);
    for (int i = 0; i < CS_GAP_BATCH; i++)
      g[i] = log(g[i]);
    for (int i = 0; i < CS_GAP_BATCH; i++)
      g[i] = -mean_s * g[i];
  } else {
    for (int i = 0; i < CS_GAP_BATCH; i++)
      g[i] = gsl_ran_gamma(c->rng, cfg->gamma_shape, mean_s / cfg->gamma_shape);
  }
  /* A draw far in the tail of a slow client may not fit in int64 ns: it
   * saturates, and the engine refuses the time (CS_TIME_LIMIT_NS). */
  for (int i = 0; i < CS_GAP_BATCH; i++)
    c->gaps[i] = cs_i64_round_sat(g[i] * 1e9);
  c->gaps_left = CS_GAP_BATCH;
}

static inline int64_t gap_ns(Client *c)
{
  if (G_UNLIKELY(c->gaps_left == 0))
    draw_gaps(c);
  return c->gaps[CS_GAP_BATCH - c->gaps_left--];
}

/* Piecewise-constant rate (trace counts per interval): within interval k the
 * rate is counts[k] * count_scale (x interval_scale[k] under a rate profile)
 * / interval; gaps are exponential or gamma.
 * A gap that crosses into the next interval is discarded and drawing restarts
 * at the boundary with the new rate (exact for Poisson by memorylessness; a
 * renewal restart for gamma). Only the intervals that have requests are
 * listed (interval_index, ascending): an empty interval produces nothing and
 * draws nothing, so stepping from one listed interval to the next is the same
 * as walking through the empty ones. c->interval_pos is the listed interval
 * the last arrival fell in. Returns INT64_MAX after the last interval. */
static int64_t piecewise_next(Client *c, int64_t index)
{
  const CsClientConfig *cfg = c->cfg;
  int64_t t = index == 0 ? cfg->start_ns : c->last_ns;
  if (index == 0)
    c->interval_pos = 0;
  /* Validation keeps start + (k + 1) * interval below the time limit for
   * every listed k, so these products and sums cannot overflow. */
  for (; c->interval_pos < cfg->n_intervals; c->interval_pos++) {
    int64_t p = c->interval_pos;
    int64_t begin = cfg->start_ns + cfg->interval_index[p] * cfg->interval_ns;
    int64_t end = begin + cfg->interval_ns;
    t = MAX(t, begin);
    double n = cfg->interval_counts[p] * cfg->count_scale *
               (cfg->interval_scale ? cfg->interval_scale[p] : 1.0);
    if (!(n > 0)) { /* a rate profile at 0 here: the interval sends nothing */
      t = end;
      continue;
    }
    double mean_s = cfg->interval_ns * 1e-9 / n;
    double g = cfg->piecewise_gamma
                 ? gsl_ran_gamma(c->rng, cfg->gamma_shape, mean_s / cfg->gamma_shape)
                 : cs_rng_exponential(c->rng, mean_s);
    int64_t next = cs_i64_add_sat(t, cs_i64_round_sat(g * 1e9));
    if (next < end) {
      c->last_ns = next;
      return next;
    }
    t = end;
  }
  return INT64_MAX;
}

/* Time of the client's arrival number index (0-based), drawing a gap for random
 * processes. Constant arrivals are computed from the index, not summed, so
 * rounding never drifts. */
static int64_t arrival_time(Client *c, int64_t index)
{
  const CsClientConfig *cfg = c->cfg;
  /* Sums saturate: a time int64 cannot hold becomes INT64_MAX, past the
   * window of a duration-bound client and refused by the engine otherwise. */
  if (cfg->arrival == CS_ARRIVAL_CONSTANT)
    return cs_i64_add_sat(cfg->start_ns, cs_i64_round_sat((double)index * 1e9 / cfg->rate_rps));
  if (cfg->arrival == CS_ARRIVAL_TIMES)
    return index < cfg->n_times
             ? cs_i64_add_sat(cfg->start_ns, cfg->times_ns[index])
             : cs_i64_add_sat(cs_i64_add_sat(cfg->start_ns, cfg->times_ns[cfg->n_times - 1]),
                              cs_i64_round_sat(1e9 / cfg->rate_rps));
  if (cfg->arrival == CS_ARRIVAL_PIECEWISE)
    return piecewise_next(c, index);
  int64_t base = index == 0 ? cfg->start_ns : c->last_ns;
  c->last_ns = cs_i64_add_sat(base, gap_ns(c));
  return c->last_ns;
}

/* Decides whether arrival at time t is generated; sets the window end when the
 * client stops. */
static gboolean client_accepts(Client *c, int64_t t)
{
  const CsClientConfig *cfg = c->cfg;
  if (cfg->arrival == CS_ARRIVAL_TIMES && c->index >= cfg->n_times) {
    /* a trace window, or one mean gap after the last listed time */
    c->window_end_ns = cfg->window_ns > 0 ? cfg->start_ns + cfg->window_ns : t;
    return FALSE;
  }
  if (t < c->window_start_ns)
    return TRUE; /* warm-up */
  if (cfg->duration_ns > 0)
    return t < c->window_end_ns;
  if (c->measured < cfg->requests)
    return TRUE;
  /* Count-bounded: the window ends where the next arrival would have been. */
  c->window_end_ns = t;
  return FALSE;
}

void cs_engine_schedule_next_arrival(Engine *e, int ci)
{
  Client *c = &e->clients[ci];
  int64_t t = arrival_time(c, c->index);
  /* Arrivals are the queue's stream (event_queue.h): one pending per client. */
  if (client_accepts(c, t))
    eq_push_stream(e->q, t, (uint32_t)ci);
  else
    c->done = TRUE;
}

/* ---- outputs per request -------------------------------------------------- */

static void emit(Engine *e, const CsRequestRecord *r)
{
  if (e->csv)
    fprintf(e->csv,
            "%" G_GUINT64_FORMAT ",%s,%d,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%d,%d,%d,%d,%d,%" G_GUINT64_FORMAT "\n",
            (guint64)r->id, r->model, r->measured ? 1 : 0,
            r->served ? "ok" : r->dropped ? "dropped" : r->unserved ? "unserved" : "failed",
            (gint64)r->send_ns, (gint64)r->dispatch_ns, (gint64)r->node_ns,
            (gint64)r->exec_start_ns, (gint64)r->exec_end_ns, (gint64)r->receive_ns,
            (gint64)(r->receive_ns - r->send_ns), r->slo_met ? 1 : 0, r->batch_size, r->gpu,
            r->replica, r->worker, (guint64)r->batch_id);
  if (e->opt && e->opt->on_request)
    e->opt->on_request(r, e->opt->user_data);
}

static gboolean wants_records(const Engine *e)
{
  return e->csv || (e->opt && e->opt->on_request);
}

gboolean cs_engine_wants_records(const Engine *e)
{
  return wants_records(e);
}

void cs_engine_emit_record(Engine *e, const CsRequestRecord *r)
{
  emit(e, r);
}

static void emit_unserved(Engine *e, int model, const Req *r, gboolean dropped,
                          gboolean unserved)
{
  Client *c = &e->clients[model];
  c->resolved++;
  c->all_bad++;
  if (G_UNLIKELY(e->decisions))
    fprintf(e->decisions, "{\"ev\":\"left\",\"id\":%" G_GUINT64_FORMAT ",\"model\":%d,\"at_ns\":%"
            G_GINT64_FORMAT ",\"why\":\"%s\"}\n", (guint64)r->id, model, (gint64)e->now,
            dropped ? "dropped" : unserved ? "unserved" : "failed");
  cs_engine_count_in_bin(e, c, 0, 1, 0);
  if (r->measured)
    c->last_out_ns = e->now;
  if (!wants_records(e))
    return;
  CsRequestRecord rec = {
    .id = r->id, .model = e->clients[model].cfg->model, .client = model,
    .measured = r->measured, .served = FALSE, .dropped = dropped, .unserved = unserved,
    .send_ns = r->send_ns,
    .dispatch_ns = e->now, .node_ns = e->now, .exec_start_ns = e->now,
    .exec_end_ns = e->now, .receive_ns = e->now, .batch_size = 0, .gpu = -1,
    .slo_met = FALSE, .replica = -1, .worker = -1, .batch_id = 0,
  };
  emit(e, &rec);
}

void cs_engine_drop(Engine *e, int model, const Req *r)
{
  g_return_if_fail(e != NULL);
  if (!cs_engine_model_ok(e, "cs_engine_drop", model) ||
      !cs_ledger_leave(e, "cs_engine_drop", r, model, FALSE))
    return;
  e->clients[model].dropped += r->measured;
  emit_unserved(e, model, r, TRUE, FALSE);
}

void cs_engine_fail(Engine *e, int model, const Req *r)
{
  cs_ledger_done(e, r);
  e->clients[model].failed += r->measured;
  emit_unserved(e, model, r, FALSE, FALSE);
}

void cs_engine_unserved(Engine *e, int model, const Req *r)
{
  g_return_if_fail(e != NULL);
  if (!cs_engine_model_ok(e, "cs_engine_unserved", model) ||
      !cs_ledger_leave(e, "cs_engine_unserved", r, model, FALSE))
    return;
  e->clients[model].unserved += r->measured;
  emit_unserved(e, model, r, FALSE, TRUE);
}

void cs_engine_flush_bin(Client *c)
{
  if (c->open_bin >= 0) {
    /* One addition: a and b first and x after would leave each bin a run
     * of its own, never joining an equal one before it. */
    cs_bins_add_bin(c->series, c->open_bin, c->open_good, c->open_bad, (double)c->open_sent);
  }
  c->open_bin = -1;
  c->open_good = c->open_bad = c->open_sent = 0;
  c->bin_start = 1; /* no bin open: [1, 0) holds no time */
  c->bin_end = 0;
}

/* Closes client c's open bin and opens the one now falls in (in the
 * series' width, which closing the old one may have doubled). */
void cs_engine_open_bin(Engine *e, Client *c)
{
  cs_engine_flush_bin(c);
  cs_engine_check_series(e, c->series);
  int64_t bin = e->now / e->bin_ns;
  c->open_bin = bin;
  c->bin_start = bin * e->bin_ns;
  c->bin_end = cs_i64_add_sat(c->bin_start, e->bin_ns);
}

void cs_engine_on_result(Engine *e, Batch *b)
{
  Client *c = &e->clients[b->model];
  const int64_t slo = c->cfg->slo_ns, now = e->now, dispatch = b->dispatch_ns;
  int measured_in_batch = 0, good = 0, good_measured = 0;
  c->resolved += b->n;
  /* Results arrive in time order, and a client's window end is known before
   * any result arrives at or after it (it is set when the client stops). */
  gboolean in_window = now >= c->window_start_ns && (c->window_end_ns == 0 || now < c->window_end_ns);
  gboolean late = c->window_end_ns != 0 && now >= c->window_end_ns;
  gboolean records = wants_records(e);
  /* The measured requests' latencies go to their sample sets a chunk at a
   * time, in request order (the order cs_samples_add would see). */
  enum { CHUNK = 64 };
  int64_t lat_chunk[CHUNK], wait_chunk[CHUNK];
  int k = 0;
  for (int i = 0; i < b->n; i++) {
    const Req *r = &b->reqs[i];
    int64_t lat = now - r->send_ns;
    int ok = lat <= slo;
    good += ok;
    if (r->measured) {
      measured_in_batch++;
      good_measured += ok;
      lat_chunk[k] = lat;
      wait_chunk[k] = dispatch - r->send_ns;
      if (++k == CHUNK) {
        cs_samples_add_many(c->e2e, lat_chunk, k);
        cs_samples_add_many(c->router_wait, wait_chunk, k);
        k = 0;
      }
    }
    if (G_UNLIKELY(records)) {
      CsRequestRecord rec = {
        .id = r->id, .model = c->cfg->model, .client = b->model, .measured = r->measured,
        .served = TRUE, .send_ns = r->send_ns, .dispatch_ns = b->dispatch_ns,
        .node_ns = b->node_ns, .exec_start_ns = b->start_ns, .exec_end_ns = b->end_ns,
        .receive_ns = now, .batch_size = b->n, .gpu = b->gpu,
        .slo_met = ok, .replica = b->replica, .worker = b->worker, .batch_id = b->id,
      };
      emit(e, &rec);
    }
  }
  if (k > 0) {
    cs_samples_add_many(c->e2e, lat_chunk, k);
    cs_samples_add_many(c->router_wait, wait_chunk, k);
  }
  if (in_window) {
    c->in_window += b->n;
    c->good_in_window += good;
  }
  c->completed += measured_in_batch;
  c->good += good_measured;
  c->late += late ? measured_in_batch : 0;
  c->all_good += good;
  c->all_bad += b->n - good;
  cs_engine_count_in_bin(e, c, good, b->n - good, 0);
  if (measured_in_batch > 0) {
    c->last_out_ns = e->now;
    const int64_t stage_ns[CS_N_STAGES] = {
      [CS_STAGE_TO_NODE] = b->node_ns - b->dispatch_ns,
      [CS_STAGE_QUEUE_WAIT] = b->start_ns - b->node_ns,
      [CS_STAGE_GPU] = b->end_ns - b->start_ns,
      [CS_STAGE_RESULT_RETURN] = e->now - b->end_ns,
    };
    for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
      cs_samples_add_weighted(c->batch_stage[s], stage_ns[s], measured_in_batch);
    c->iso_ns_sum += (double)b->iso_ns * measured_in_batch;
    c->batches++;
    c->batched_requests += b->n;
    if ((guint)b->n >= c->batch_sizes->len)
      g_array_set_size(c->batch_sizes, b->n + 1);
    g_array_index(c->batch_sizes, int64_t, b->n)++;
  }
  for (int i = 0; i < b->n; i++)
    cs_ledger_done(e, &b->reqs[i]);
  batch_release(e, b);
}
