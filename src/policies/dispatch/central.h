/* Private to the centralized dispatch policies (symphony, eager, timeout):
 * their parameters and the budget tables of their scheduler.
 *
 * central_params.c parses, describes and checks the parameters (the
 * CsDispatchPolicy hooks that run when a scenario is compiled) and computes
 * the budgets delay(k) and resp(k); central.c is the online scheduler, which
 * reads the budgets on its hot path. The functions were static in one
 * central.c; shared across the two files now, they carry the cs_ prefix of
 * every libclustersim symbol. */
#ifndef CS_DISPATCH_CENTRAL_H
#define CS_DISPATCH_CENTRAL_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/dispatch.h"

typedef enum { RULE_DEFERRED, RULE_EAGER, RULE_TIMEOUT } ExecRule;
typedef enum { GPU_LOWEST_ID, GPU_EARLIEST_FREE } GpuChoice;
typedef enum { GATHER_WINDOW, GATHER_HEAD } Gathering;
/* Window gathering's target batch: the largest batch that meets the SLO when
 * dispatched on arrival, or nexuslb's estimate from the observed rate. */
typedef enum { TARGET_SLO, TARGET_RATE } TargetBatch;

/* What cs_central_check derived for one model, for the summary: the scheduler's
 * budgets and the simulated transfers at batch 1 and at the largest batch. */
typedef struct {
  char *model;
  int largest_batch;           /* largest k with d_ctrl + network budgets + l(k) <= SLO */
  int64_t transfer_ns[2];      /* scheduler: transfer(1), transfer(largest) */
  int64_t net_transfer_ns[2];  /* network(k * input_bytes) at the same k */
  int64_t resp_ns[2];          /* scheduler: resp(1), resp(largest) */
  int64_t net_resp_ns[2];      /* network(k * output_bytes) at the same k */
} ModelBudget;

typedef struct {
  ExecRule rule;
  GpuChoice gpu_choice;
  Gathering gathering;
  TargetBatch target;
  int64_t rate_sample_ns; /* TARGET_RATE: width of one rate sample */
  int rate_window;        /* TARGET_RATE: samples averaged */
  int64_t d_ctrl_ns, d_data_ns, d_resp_ns; /* d_data/d_resp: only when explicit */
  gboolean data_explicit, resp_explicit;
  int64_t timeout_ns; /* RULE_TIMEOUT: k */
  int max_batch;
  ModelBudget *budgets; /* per client, filled by cs_central_check; NULL before */
  int n_budgets;
} CentralParams;

/* Budgets are capped so that a time plus a few of them cannot overflow
 * int64 (INT64_MAX / 8 ns is about 36 years). */
#define BUDGET_CAP (INT64_MAX / 8)

/* A model's budget tables, indexed by batch size k in [0, len). */
typedef struct {
  int64_t *transfer; /* transfer(k); delay(k) = d_ctrl + transfer(k) */
  int64_t *resp;     /* resp(k) */
  int len;
} Budget;

/* The CsDispatchPolicy hooks of central_params.c, one parse per rule. */
void *cs_central_parse_deferred(CsParams *p, void *user_data, GError **e);
void *cs_central_parse_eager(CsParams *p, void *user_data, GError **e);
void *cs_central_parse_timeout(CsParams *p, void *user_data, GError **e);
void cs_central_free(void *params);
void cs_central_write_defaults(const void *params, CsParamsWriter *out);
void cs_central_describe(const void *params, CsParamsWriter *out);
void cs_central_check(void *params, const CsWorld *world, CsWarningList *w, void *user_data);

/* What a batch of b of a model costs: its run time and the delays around it
 * (delay(b) + resp(b)), in ns. */
typedef struct {
  int64_t (*lat_ns)(void *ctx, int model, int b);
  int64_t (*overhead_ns)(void *ctx, int model, int b);
  void *ctx;
  int model;
} CsBatchCosts;

/* nexuslb's target batch for window gathering (its BatchSizeEstimator) at
 * an arrival rate of rate_rps: with n(b) = rate x l(b) / b GPUs busy in
 * round robin, a request waits up to l(b) / n(b) before its batch runs, so
 * the first b with l(b) (1 + 1 / max(n(b), 1)) > SLO - overhead(b) fails and
 * the target is b - 1 (at least 1). When that b needs at most one GPU
 * (n(b) <= 1), Nexus' rule for a model of less than a GPU applies instead:
 * the target is the last b >= 1 before the first b >= 2 with l(b) + b / rate
 * > SLO - overhead(b). The cluster's GPU count does not enter, as in
 * nexuslb. Returns a batch size in [1, max_batch]. */
int cs_central_rate_target(double rate_rps, int64_t slo_ns, int max_batch,
                           const CsBatchCosts *costs);

/* Extends model m's budget tables to cover batch size k (central_params.c). */
void cs_central_budget_extend(Budget *b, const CentralParams *p, const CsWorld *w, int m, int k);
/* Frees a model's budget tables. */
void cs_central_budget_clear(Budget *b);

#endif
