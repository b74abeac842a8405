/* The figures of a finished LLM run (llm_sim.h): quantiles, the summary
 * of a run and the series as CSV rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm_sim.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cs_llm_quantile(double *v, size_t n, double q)
{
  if (n == 0)
    return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  double h = q * (double)(n - 1);
  size_t lo = (size_t)floor(h);
  if (lo + 1 >= n)
    return v[n - 1];
  return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* The distribution of n values in ms (v is reordered). */
static void dist(double *v, size_t n, CsLlmDist *out)
{
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  out->n = (int64_t)n;
  out->mean = n ? sum / (double)n : NAN;
  out->p50 = cs_llm_quantile(v, n, 0.50);
  out->p90 = cs_llm_quantile(v, n, 0.90);
  out->p99 = cs_llm_quantile(v, n, 0.99);
}

static void dist_ns(const GArray *a, CsLlmDist *out)
{
  double *v = g_new(double, a->len + 1);
  for (guint i = 0; i < a->len; i++)
    v[i] = (double)g_array_index(a, int64_t, i) / 1e6;
  dist(v, a->len, out);
  g_free(v);
}

/* The transfers' times, the waits before them and each pool's use
 * (llm_sim.h). */
static void disagg_summary(const CsLlmSimResult *r, CsLlmSimSummary *out)
{
  double *v = g_new(double, r->n_requests + 1);
  for (int pass = 0; pass < 2; pass++) {
    size_t k = 0;
    for (int j = 0; j < r->n_requests; j++) {
      const CsLlmSimRequestResult *q = &r->requests[j];
      if (q->transfer_start_ns >= 0)
        v[k++] = (double)(pass == 0 ? q->transfer_end_ns - q->transfer_start_ns
                                    : q->kv_wait_ns) / 1e6;
    }
    dist(v, k, pass == 0 ? &out->transfer : &out->kv_wait);
  }
  g_free(v);
  double busy[2] = { 0, 0 }, kv[2] = { 0, 0 };
  for (int i = 0; i < r->n_replicas && r->makespan_ns > 0; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    int pool = i >= r->n_prefill_replicas;
    busy[pool] += (double)p->busy_ns / (double)r->makespan_ns;
    kv[pool] += p->block_ns / ((double)p->num_blocks * (double)r->makespan_ns);
  }
  int np = r->n_prefill_replicas, nd = r->n_replicas - np;
  out->prefill_busy_util = busy[0] / np;
  out->decode_busy_util = busy[1] / nd;
  out->prefill_kv_mean_util = kv[0] / np;
  out->decode_kv_mean_util = kv[1] / nd;
}

void cs_llm_sim_summary(const CsLlmSimResult *r, CsLlmSimSummary *out)
{
  memset(out, 0, sizeof *out);
  int n = r->n_requests;
  double *v = g_new(double, n + 1);
  for (int pass = 0; pass < 3; pass++) {
    for (int j = 0; j < n; j++) {
      const CsLlmSimRequestResult *q = &r->requests[j];
      v[j] = pass == 0   ? (double)(q->first_token_ns - q->arrival_ns) / 1e6
             : pass == 1 ? (double)(q->completed_ns - q->arrival_ns) / 1e6
                         : (double)(q->completed_ns - q->first_token_ns) / 1e6 /
                             q->final_decode_tokens;
    }
    dist(v, n, pass == 0 ? &out->ttft : pass == 1 ? &out->e2e : &out->decode_per_token);
  }
  g_free(v);
  dist_ns(r->tbt_ns, &out->tbt);
  dist_ns(r->gap_ns, &out->gap);
  double span = (double)(r->makespan_ns - r->requests[0].arrival_ns) / 1e9;
  out->output_tokens_per_s = span > 0 ? (double)r->output_tokens / span : NAN;
  out->requests_per_s = span > 0 ? n / span : NAN;
  double mean = 0;
  for (int i = 0; i < r->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    double peak = (double)p->peak_blocks / (double)p->num_blocks;
    if (peak > out->kv_peak_util)
      out->kv_peak_util = peak;
    if (r->makespan_ns > 0)
      mean += p->block_ns / ((double)p->num_blocks * (double)r->makespan_ns);
  }
  out->kv_mean_util = mean / r->n_replicas;
  if (r->n_prefill_replicas > 0)
    disagg_summary(r, out);
  out->restarts = r->restarts;
  out->makespan_ns = r->makespan_ns;
  cs_llm_sim_mfu(r, r->makespan_ns, &out->mfu, &out->mfu_busy);
}

void cs_llm_series_csv(GString *out, const char *label, const GArray *series, int64_t bin_ns,
                       int64_t total_blocks, int64_t end_ns)
{
  for (guint k = 0; series != NULL && k < series->len; k++) {
    const CsLlmBin *b = &g_array_index(series, CsLlmBin, k);
    int64_t start = (int64_t)k * bin_ns;
    int64_t width = MIN(bin_ns, end_ns - start);
    if (width <= 0)
      width = bin_ns; /* a bin past the last completion holds nothing */
    double w_s = (double)width / 1e9;
    if (label != NULL)
      g_string_append_printf(out, "%s,", label);
    g_string_append_printf(out, "%.9f,%.6f,%" G_GINT64_FORMAT ",%.6f,%" G_GINT64_FORMAT
                           ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "\n",
                           (double)start / 1e9,
                           b->block_ns / ((double)total_blocks * (double)width),
                           b->restarts, (double)b->tokens / w_s, b->batches, b->arrivals,
                           b->completions);
  }
}

void cs_llm_sim_mfu(const CsLlmSimResult *r, int64_t makespan_ns, double *mfu, double *mfu_busy)
{
  double peak = r->device_flops_per_s, all = 0, busy = 0;
  int n_busy = 0;
  for (int i = 0; i < r->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    all += makespan_ns > 0 ? p->flops / (peak * (double)makespan_ns * 1e-9) : 0;
    if (p->busy_ns > 0) {
      busy += p->flops / (peak * (double)p->busy_ns * 1e-9);
      n_busy++;
    }
  }
  *mfu = peak > 0 && r->n_replicas > 0 ? all / r->n_replicas : NAN;
  *mfu_busy = peak > 0 && n_busy > 0 ? busy / n_busy : NAN;
}
