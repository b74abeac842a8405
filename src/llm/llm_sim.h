/* The token-level simulation of a cluster of identical LLM replicas, as
 * Vidur models it (issue 38; docs/research/vidur.md sections 4 and 6): a
 * router sends each arriving request to a replica; a replica with no batch
 * in flight asks its scheduler (llm_sched.h) for the next batch, times it
 * (cs_llm_exec_batch_time, CPU overhead 0 as Vidur's default
 * skip_cpu_overhead_modeling) and, when it ends, reports it done and asks
 * again. With PP pipeline stages (exec.pp), a replica has up to PP batches
 * in flight; each stage runs one batch at a time, FIFO, for its time
 * (cs_llm_exec_batch_time at that stage: num_layers / PP layers, and the
 * send of the activations to the next stage on every stage but the last);
 * a batch that leaves a stage joins the next one's queue at once, and its
 * end is its last stage's end (Vidur's BatchStageArrival, BatchStageEnd,
 * BatchEnd events). The replica forms batches at the same moments as with
 * one stage (an arrival, a batch's end), while fewer than PP are in flight
 * (Vidur's on_schedule loop): several at one instant if it can; not when a
 * stage other than the last frees. Disaggregated serving has 1 stage.
 *
 * Time is integer nanoseconds from 0 (the trace's clock). A batch's time,
 * computed in ms as a double, becomes llround(ms * 1e6) ns.
 *
 * The order of what happens at one instant t. Vidur's event queue
 * (vidur/simulator.py, vidur/events/) is a heap keyed by (time, event id,
 * type) with ids in creation order, and every arrival event is created
 * before the run starts, so at time t:
 *  1. every request arriving at t is routed, in input order (Vidur's global
 *     scheduler sorts its queue by arrival with a stable sort and routes all
 *     of it at the first GlobalSchedule event of t; routing them one by one
 *     in that order gives the same replicas, as lor's counts grow by one per
 *     assignment in both);
 *  2. every batch ending at t is done (llm_sched's batch_done), in the order
 *     the batches were started (their BatchStageEnd events' ids); with
 *     stages, every stage end at t in that order: the stage takes the head
 *     of its queue, then the batch joins the next stage's queue (starting
 *     it if free) or, from the last stage, is done; and,
 *     disaggregated, every KV transfer ending at t, in the same order of
 *     creation; a prefill ending on the prefill pool queues its request,
 *     pending transfer, at the decode replica chosen then;
 *  3. disaggregated: every decode replica, in replica order, reserves the
 *     blocks of the requests pending transfer to it, FIFO while the head
 *     fits (cs_llm_sched_reserve_prefilled), and their transfers start at t
 *     in that order; a prefill that ended at t in 2 has queued there, so it
 *     is reserved at its own end when the blocks are free;
 *  4. every replica that got a request or ended a batch or a transfer at t
 *     and has fewer batches in flight than stages forms its next batches
 *     while it can (each joins the first stage's queue), in replica order;
 *     twice when it both got a request and ended a batch at t (Vidur's two
 *     ReplicaScheduleEvents: the second forms a batch only when the first
 *     stopped at none, its restarts having freed blocks; `llm_sim_stages`
 *     test_two_passes_at_an_instant)
 *     (replicas do not share state, so this order changes nothing); a
 *     decode replica then reserves again as in 3, as forming the batch may
 *     have restarted requests and freed their blocks.
 * Blocks free on a decode replica only at a batch end (2) and a restart
 * (4), so a request pending transfer is reserved at the first instant its
 * decode replica can take it.
 * Vidur runs 2 before 1's ReplicaSchedule events and both before any
 * schedule of t, which is the order above (3 is not Vidur's): a batch
 * ending at t is followed by a batch that may take the requests arriving
 * at t.
 *
 * Routers (vidur/scheduler/global_scheduler/):
 *  - round_robin: the k-th request routed (from 0) goes to replica k mod R;
 *  - lor (least outstanding requests): the replica whose waiting queue is
 *    shortest (llm_sched's n_waiting: requests not admitted, restarted ones
 *    included; admitted and running ones do not count), ties to the lowest
 *    replica id. Since a request leaves that queue when its replica admits
 *    it, an idle replica 0 wins every tie, and under light load most
 *    requests go to it: with 4 replicas at 16 requests/s of 1,500 uniform
 *    requests (examples/llm/run.json's lengths), 991, 437, 69 and 3;
 *  - least_outstanding (not Vidur's): the replica with the fewest requests
 *    not finished, waiting or admitted (llm_sched's n_waiting + n_holding),
 *    ties to the lowest id: what "least outstanding requests" means in
 *    most serving systems, and balanced (375 each in the same run).
 *
 * Per request (Vidur's entities/request.py and metrics/metrics_store.py):
 *  - scheduled: the start of the first batch that holds it (kept across
 *    restarts); first token: the end of the batch that processed its
 *    prompt's last token the first time (prefill_completed_at, kept across
 *    restarts); completed: the end of the batch of its last token;
 *  - TTFT = first token - arrival (Vidur's prefill_e2e_time, queueing
 *    included); e2e = completed - arrival (request_e2e_time);
 *  - TBT (Vidur's decode_token_execution_plus_preemption_time): for each
 *    batch in which the request took a decode token, the batch's end minus
 *    the end of the request's previous batch (batch end - batch start +
 *    latest_iteration_scheduling_delay), so the wait between iterations
 *    counts. The token of a prefill (the first one, or a re-prefill after
 *    a restart) records none, as in Vidur: the time lost to a restart
 *    appears in e2e, not in TBT;
 *  - the gaps between output tokens (not Vidur's): every output token but a
 *    request's first, the time since its previous output token; a restart's
 *    loss appears here, in the gap before its re-prefill's token;
 *  - decode time per token (Vidur's
 *    decode_time_execution_plus_preemption_normalized): (completed - first
 *    token) / decode tokens, the decode tokens as rewritten by the last
 *    restart (Vidur's num_decode_tokens at completion).
 */
#ifndef CS_LLM_SIM_H
#define CS_LLM_SIM_H

#include <glib.h>
#include <stdint.h>

#include "llm_iteration.h"
#include "llm_sched.h"
#include "profiles/network.h"

G_BEGIN_DECLS

typedef enum {
  CS_LLM_ROUTER_ROUND_ROBIN,
  CS_LLM_ROUTER_LOR,
  CS_LLM_ROUTER_LEAST_OUTSTANDING,
} CsLlmRouter;

/* "round_robin", "lor", "least_outstanding". */
const char *cs_llm_router_name(CsLlmRouter router);

/* Parses one of those names. Returns FALSE with error set
 * (CS_INPUT_ERROR_INVALID) naming it and the known ones otherwise. */
gboolean cs_llm_router_parse(const char *name, CsLlmRouter *out, GError **error);

/* A deployment: R replicas, each with its own copy of the scheduler.
 * With decode_replicas > 0 it is disaggregated (docs/llm.md, "Disaggregated
 * prefill and decode"): the R replicas are the prefill pool, the router
 * sends each arrival to one of them, and decode_replicas more (decode_sched)
 * run the decodes; replicas are numbered prefill pool first. */
typedef struct {
  CsLlmExecConfig exec;  /* one replica's execution model; nothing copied */
  CsLlmSchedConfig sched; /* num_blocks set; num_stages exec.pp */
  int replicas;          /* >= 1 */
  CsLlmRouter router;
  /* Disaggregated serving; all 0 / NULL when colocated. */
  int decode_replicas;          /* 0: colocated */
  CsLlmSchedConfig decode_sched; /* the decode pool's; not static */
  const CsNetworkCurve *kv_curve; /* a transfer's time from its bytes per shard; not copied */
  int64_t kv_bytes_per_token;   /* per device (TP shard), cs_llm_plan's */
  /* > 0: keep the deployment's series over time (CsLlmBin) in bins this
   * wide, doubled (pairs merged) while they would pass CS_LLM_SERIES_MAX
   * bins, so that memory stays bounded however long the run; 0: none. */
  int64_t series_bin_ns;
  /* One device's peak FLOP/s (the device's fp16_tflops x 10^12), for the
   * model FLOPs utilisation; 0: unknown (MFU NAN). */
  double device_flops_per_s;
} CsLlmSimConfig;

/* The most bins a series holds before its width doubles. */
#define CS_LLM_SERIES_MAX 65536

/* One bin of a deployment's series, all replicas together. */
typedef struct {
  double block_ns;       /* the integral of allocated KV blocks over the bin */
  int64_t restarts;      /* requests preempted (restarted) as batches were formed in it */
  int64_t tokens;        /* output tokens of the batches that ended in it */
  int64_t batches;       /* batches started in it */
  int64_t arrivals;      /* requests routed in it */
  int64_t completions;   /* requests completed in it */
} CsLlmBin;

/* The time of one request's KV-cache transfer: prompt tokens x
 * kv_bytes_per_token, the bytes of one tensor-parallel shard (every shard
 * sends its own part over its own link, in parallel, as Splitwise and
 * DistServe have it), through kv_curve. */
int64_t cs_llm_kv_transfer_ns(const CsLlmSimConfig *cfg, int prompt_tokens);

/* A request as asked. */
typedef struct {
  int64_t id;            /* the caller's, in messages and outputs */
  int64_t arrival_ns;    /* >= 0, non-decreasing along the list */
  int prompt_tokens;     /* >= 1 */
  int output_tokens;     /* >= 1 */
} CsLlmSimRequest;

/* What happened to one request; times in ns from 0. */
typedef struct {
  int64_t id;
  int64_t arrival_ns;
  int prompt_tokens;
  int output_tokens;
  int replica;           /* 0-based */
  int64_t scheduled_ns;
  int64_t first_token_ns;
  int64_t completed_ns;
  int restarts;
  int final_decode_tokens; /* Vidur's num_decode_tokens at completion */
  int64_t n_tbt;         /* TBT samples (decode iterations) */
  int64_t tbt_sum_ns;
  int64_t tbt_max_ns;    /* 0 when n_tbt is 0 */
  int64_t gap_max_ns;    /* the longest gap between two output tokens; 0 with one token */
  /* Disaggregated only (else decode_replica and the transfer times are -1;
   * replica is then the prefill replica): */
  int decode_replica;    /* 0-based over all replicas (>= the prefill pool's size), chosen
                          * at its prefill's end */
  int64_t transfer_start_ns; /* its decode blocks reserved: its prefill's end (its first
                              * token), or later when it waited for them */
  int64_t kv_wait_ns;        /* transfer_start - its prefill's end, its prefill blocks held */
  int64_t transfer_end_ns;   /* its KV cache at the decode replica, its prefill blocks freed */
} CsLlmSimRequestResult;

typedef struct {
  int64_t num_blocks;
  int64_t peak_blocks;   /* the most allocated at once */
  double block_ns;       /* the integral of allocated blocks over [0, makespan] */
  int64_t busy_ns;       /* time with a batch in flight; with PP stages, one device's: the
                          * stages' execution times summed over batches, / PP */
  int64_t n_batches;
  int64_t restarts;
  double flops;          /* one device's FLOPs over its batches (cs_llm_exec_batch_flops) */
} CsLlmSimReplicaResult;

typedef struct {
  CsLlmSimRequestResult *requests; /* n_requests, in input order */
  int n_requests;
  CsLlmSimReplicaResult *replicas; /* n_replicas */
  int n_replicas;
  int n_prefill_replicas; /* disaggregated: the first n_prefill_replicas are the prefill pool;
                           * 0 when colocated */
  GArray *tbt_ns;        /* int64 TBT samples, in the order recorded */
  GArray *gap_ns;        /* int64 gaps between output tokens, in the order recorded */
  int64_t makespan_ns;   /* the last completion */
  int64_t n_batches;
  int64_t restarts;      /* all replicas' (Vidur's num_restarts summed) */
  int64_t output_tokens; /* sum of the requests' output tokens */
  int64_t attention_clamped_batches; /* batches whose attention was looked up at the grid's
                                      * edge (CS_LLM_ATTN_CLAMP_OUTSIDE, llm_attention.h) */
  /* With cfg.series_bin_ns > 0, CsLlmBin from time 0, series_bin_ns wide
   * (possibly doubled), up to the bin of the makespan; else NULL. */
  GArray *series;
  int64_t series_bin_ns;
  int64_t total_blocks;  /* the blocks of all replicas (a bin's KV use: block_ns / this / width) */
  double device_flops_per_s; /* the config's (MFU) */
} CsLlmSimResult;

/* Model FLOPs utilisation of r's replicas (CsLlmSimSummary's mfu and
 * mfu_busy) with makespan the span to judge them over. */
void cs_llm_sim_mfu(const CsLlmSimResult *r, int64_t makespan_ns, double *mfu, double *mfu_busy);

/* Runs n (>= 1) requests through the deployment until every one has
 * finished. Returns the result (cs_llm_sim_result_free) or NULL with error
 * set (CS_INPUT_ERROR_INVALID):
 *  - replicas < 1, exec.pp != 1 ("pipeline parallelism is not simulated
 *    yet"), cs_llm_exec_new or cs_llm_sched_new refusing its config;
 *  - a request out of range or arriving before the previous one (its index
 *    and id named);
 *  - a request the scheduler refuses (cs_llm_sched_add: named by id);
 *  - a batch the tables cannot time: "replica R, batch at T s: S requests
 *    (P prefilling, D decoding), N tokens: " and the lookup's message;
 *  - a replica left with requests and no batch it can form (cannot happen
 *    for requests cs_llm_sched_add took; checked, not assumed);
 *  - disaggregated: decode_replicas < 0, a static decode scheduler, no
 *    kv_curve, kv_bytes_per_token < 0, a request the decode scheduler
 *    refuses (cs_llm_sched_add_prefilled, at its prefill's end). */
CsLlmSimResult *cs_llm_sim_run(const CsLlmSimConfig *cfg, const CsLlmSimRequest *reqs, int n,
                               GError **error);

void cs_llm_sim_result_free(CsLlmSimResult *r);

/* ---- a deployment run instant by instant ----------------------------------
 * What cs_llm_sim_run does, for a caller with its own clock (the engine,
 * sim/llm_serving.c): requests are added as they arrive, and each step runs
 * one instant, the earliest with something to do, in the order above
 * (arrivals, batch and transfer ends, reservations for transfers, new
 * batches). A caller that adds a request arriving
 * at t must do so before stepping t, and every request arriving at t before
 * that step, or the order at t is no longer Vidur's. Requests are held only
 * from their arrival to their completion, so memory follows the requests in
 * flight, not the run's length. */
typedef struct CsLlmCluster CsLlmCluster;

/* What the caller hears, each with the tag it gave the request; NULL ones
 * are not called. tbt and gap: each TBT sample and each gap between output
 * tokens, as recorded (llm_sim.h's definitions); done: a request completed,
 * r valid during the call only (its completed_ns is now). */
typedef struct {
  void (*tbt)(void *user, int64_t tag, int64_t ns);
  void (*gap)(void *user, int64_t tag, int64_t ns);
  void (*done)(void *user, const CsLlmSimRequestResult *r, int64_t tag);
  void *user;
} CsLlmClusterHooks;

/* A deployment with no requests yet (cfg copied; what it points to must
 * outlive it). Returns it (cs_llm_cluster_free) or NULL with error set, for
 * the configurations cs_llm_sim_run refuses. */
CsLlmCluster *cs_llm_cluster_new(const CsLlmSimConfig *cfg, const CsLlmClusterHooks *hooks,
                                 GError **error);
void cs_llm_cluster_free(CsLlmCluster *c);

/* Adds request r (its arrival in the future or now). Returns FALSE with
 * error set, naming tag and r's id, when r is out of range, arrives before
 * the previous request or before the last instant stepped. */
gboolean cs_llm_cluster_add(CsLlmCluster *c, const CsLlmSimRequest *r, int64_t tag,
                            GError **error);

/* The next instant with something to do: the earliest arrival not routed,
 * batch end or KV transfer's end; INT64_MAX when none. */
int64_t cs_llm_cluster_next_ns(const CsLlmCluster *c);

/* Runs that instant (nothing when there is none). Returns FALSE with error
 * set as cs_llm_sim_run would (a request the scheduler refuses, a batch the
 * tables cannot time); the cluster must not be stepped again then. */
gboolean cs_llm_cluster_step(CsLlmCluster *c, GError **error);

/* Requests added and not completed. */
int64_t cs_llm_cluster_live(const CsLlmCluster *c);

/* Replica i's scheduler (its queues and blocks now), or NULL out of range. */
const CsLlmSched *cs_llm_cluster_replica_sched(const CsLlmCluster *c, int replica);

/* Ends the run at the last completion: every request must have completed
 * (else FALSE with error set naming the first one left, by tag, and where
 * it is), and the per-replica block integrals close at the makespan. */
gboolean cs_llm_cluster_finish(CsLlmCluster *c, GError **error);

/* The counters and per-replica results so far (requests NULL,
 * n_requests the requests added); owned by the cluster. */
const CsLlmSimResult *cs_llm_cluster_result(const CsLlmCluster *c);

/* Hands over the series of the result (NULL without one); the result has
 * none afterwards. */
GArray *cs_llm_cluster_take_series(CsLlmCluster *c);

/* The linear-interpolation quantile (q in [0, 1]) of n >= 1 samples v,
 * sorted in place: with s the ascending order, h = q * (n - 1), the value
 * s[floor h] + (h - floor h) * (s[floor h + 1] - s[floor h]) (numpy's
 * default, "linear"). NAN when n is 0. */
double cs_llm_quantile(double *v, size_t n, double q);

/* p50, p90, p99 and the mean of a distribution, in ms. */
typedef struct {
  double p50, p90, p99, mean;
  int64_t n;
} CsLlmDist;

typedef struct {
  CsLlmDist ttft, tbt, e2e, gap, decode_per_token;
  double output_tokens_per_s; /* output tokens / (makespan - first arrival) */
  double requests_per_s;      /* requests / the same span */
  double kv_peak_util;        /* max over replicas of peak_blocks / num_blocks */
  double kv_mean_util;        /* mean over replicas of block_ns / (num_blocks * makespan) */
  int64_t restarts;
  int64_t makespan_ns;
  /* Disaggregated only (transfer.n 0 and the rest 0 otherwise): the KV
   * transfers' times and the waits before them for decode blocks
   * (kv_wait_ns, every request with a transfer, waits of 0 included); each
   * pool's mean busy fraction (busy_ns / makespan) and mean KV use (as
   * kv_mean_util). */
  CsLlmDist transfer, kv_wait;
  double prefill_busy_util, decode_busy_util, prefill_kv_mean_util, decode_kv_mean_util;
  /* Model FLOPs utilisation, mean over replicas: a device's FLOPs over
   * (peak x makespan), and over (peak x its busy time); NAN when the peak is
   * unknown. */
  double mfu, mfu_busy;
} CsLlmSimSummary;

/* Appends a series (CsLlmBin, bin_ns wide from 0, of a deployment of
 * total_blocks KV blocks, its last completion at end_ns) to out as CSV
 * rows "[LABEL,]time_s,kv_util,preemptions,output_tokens_per_s,batches,
 * arrivals,completions": the bin's start, its mean KV blocks in use over all
 * replicas' blocks, the restarts, output tokens per second, batches started,
 * requests routed and completed in it; a bin's width is bin_ns, the last
 * one's up to end_ns. label NULL: no first column. The header is
 * CS_LLM_SERIES_HEADER (with "model," before it for a label). */
#define CS_LLM_SERIES_HEADER \
  "time_s,kv_util,preemptions,output_tokens_per_s,batches,arrivals,completions\n"
void cs_llm_series_csv(GString *out, const char *label, const GArray *series, int64_t bin_ns,
                       int64_t total_blocks, int64_t end_ns);

/* Summarises r (quantiles as cs_llm_quantile). */
void cs_llm_sim_summary(const CsLlmSimResult *r, CsLlmSimSummary *out);

G_END_DECLS

#endif
