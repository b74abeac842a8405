/* clustersim llm search CONFIG.json [--json] [-o DIR]: the highest Poisson
 * rate each deployment serves under the SLOs, and the cheapest deployment
 * for a target rate (experiment/llm_search.h; docs/llm.md "Capacity
 * search"). Every input is checked and every run done before anything is
 * written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "common/json_input.h"
#include "experiment/experiment.h"
#include "experiment/llm_search.h"

#define PROG "clustersim llm search"

typedef struct {
  CsLlmSearchResult *cap;   /* the capacity search at the deployment's replicas */
  GArray *fit_probes;       /* CsLlmProbe: replicas 1.. (or pools' splits) at the target rate */
  CsLlmFit fit;
  CsLlmPoolFit pools;       /* disaggregated: the split scan's account */
} Outcome;

/* A disaggregated answer whose requests waited longer for decode memory
 * than for their first token (p90): a decode pool falling behind, which
 * neither SLO sees (the wait delays one TBT sample a request). */
static void warn_kv_wait(const char *name, const CsLlmSimSummary *s)
{
  if (s->kv_wait.n > 0 && s->ttft.n > 0 && s->kv_wait.p90 > s->ttft.p90)
    printf("  warning: %s: the answer's requests waited %.1f ms (p90) for a place at their "
           "decode replica (its KV blocks, or its batch_size_cap on requests holding memory) "
           "before their KV transfer, more than for their first token (%.1f ms): its decode "
           "pool falls behind, which no TTFT or TBT bound sees (docs/llm.md)\n",
           name, s->kv_wait.p90, s->ttft.p90);
}

/* The probe of the fit found at the target rate (the last one run), or NULL. */
static const CsLlmProbe *fit_probe(const Outcome *o)
{
  if (o->fit.replicas <= 0 || o->fit_probes == NULL || o->fit_probes->len == 0)
    return NULL;
  return &g_array_index(o->fit_probes, CsLlmProbe, o->fit_probes->len - 1);
}

static void add_number_or_null(cJSON *o, const char *key, double v)
{
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

static cJSON *probe_json(const CsLlmProbe *p)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "qps", p->qps);
  cJSON_AddNumberToObject(o, "replicas", p->replicas);
  cJSON_AddNumberToObject(o, "decode_replicas", p->decode_replicas);
  cJSON_AddBoolToObject(o, "pass", p->pass);
  for (int m = 0; m < CS_LLM_SLO_N; m++)
    add_number_or_null(o, cs_llm_slo_name((CsLlmSloMetric)m), p->value[m]);
  cJSON_AddNumberToObject(o, "ttft_p90_ms", p->summary.ttft.n ? p->summary.ttft.p90 : 0);
  cJSON_AddNumberToObject(o, "tbt_p90_ms", p->summary.tbt.n ? p->summary.tbt.p90 : 0);
  cJSON_AddNumberToObject(o, "output_tokens_per_s", p->summary.output_tokens_per_s);
  cJSON_AddNumberToObject(o, "preemptions", (double)p->summary.restarts);
  cJSON_AddNumberToObject(o, "batches", (double)p->batches);
  cJSON_AddNumberToObject(o, "attention_clamped_batches", (double)p->attention_clamped_batches);
  /* Disaggregated: the wait for decode memory before the KV transfer, in
   * no SLO (it delays the first TBT sample only). */
  cJSON_AddNumberToObject(o, "kv_wait_p90_ms", p->summary.kv_wait.n ? p->summary.kv_wait.p90 : 0);
  return o;
}

static cJSON *probes_json(const GArray *a)
{
  cJSON *arr = cJSON_CreateArray();
  for (guint i = 0; i < a->len; i++)
    cJSON_AddItemToArray(arr, probe_json(&g_array_index(a, CsLlmProbe, i)));
  return arr;
}

static double price(const CsLlmConfig *c, int replicas)
{
  double v = NAN;
  if (c->device->price_per_hour > 0)
    cs_llm_deployment_cost(c, replicas, &v, NULL);
  return v;
}

static cJSON *result_json(const CsLlmSearchSpec *s, const Outcome *o, int cheapest,
                          const char *file)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", "clustersim-llm-search-result");
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON *prov = cJSON_AddObjectToObject(root, "provenance");
  cJSON_AddStringToObject(prov, "config_file", file);
  cJSON_AddItemToObject(prov, "config", cJSON_Duplicate(s->base->root, TRUE));
  cJSON_AddStringToObject(prov, "percentiles", "linear interpolation (numpy's default)");
  cs_experiment_describe_plugins(cli_registry(), prov);
  cJSON *ds = cJSON_AddArrayToObject(root, "deployments");
  for (int i = 0; i < s->n_deployments; i++) {
    const CsLlmDeployment *d = &s->deployments[i];
    const CsLlmSearchResult *c = o[i].cap;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", d->name);
    if (d->options) /* a grid's combination: its options */
      cJSON_AddItemToObject(x, "options", cJSON_Duplicate(d->options, TRUE));
    cJSON_AddNumberToObject(x, "replicas", d->cfg->sim.replicas);
    cJSON_AddNumberToObject(x, "decode_replicas", d->cfg->sim.decode_replicas);
    cJSON_AddNumberToObject(x, "gpus", cs_llm_deployment_gpus(d->cfg, d->cfg->sim.replicas));
    add_number_or_null(x, "cost_per_hour", price(d->cfg, d->cfg->sim.replicas));
    if (c->found)
      cJSON_AddNumberToObject(x, "max_qps", c->max_qps);
    else
      cJSON_AddNullToObject(x, "max_qps");
    cJSON_AddBoolToObject(x, "non_monotone", c->non_monotone);
    cJSON_AddBoolToObject(x, "stopped_low", c->stopped_low);
    cJSON_AddItemToObject(x, "probes", probes_json(c->probes));
    if (o[i].fit_probes) {
      cJSON *t = cJSON_AddObjectToObject(x, "target");
      const CsLlmProbe *fp = fit_probe(&o[i]);
      cJSON_AddNumberToObject(t, "replicas", o[i].fit.replicas);
      if (d->cfg->sim.decode_replicas > 0) {
        cJSON_AddNumberToObject(t, "prefill_replicas", o[i].fit.prefill);
        cJSON_AddNumberToObject(t, "decode_replicas", o[i].fit.decode);
        cJSON_AddNumberToObject(t, "splits_complete_to", o[i].pools.complete_total);
        cJSON_AddBoolToObject(t, "max_probes_reached", o[i].pools.limited);
      }
      cJSON_AddNumberToObject(t, "gpus", o[i].fit.gpus);
      add_number_or_null(t, "cost_per_hour", o[i].fit.replicas ? o[i].fit.cost_per_hour : NAN);
      cJSON_AddNumberToObject(t, "probes_run", o[i].fit_probes->len);
      add_number_or_null(t, "ttft_p90_ms", fp && fp->summary.ttft.n ? fp->summary.ttft.p90 : NAN);
      add_number_or_null(t, "tbt_p90_ms", fp && fp->summary.tbt.n ? fp->summary.tbt.p90 : NAN);
      cJSON_AddItemToObject(t, "probes", probes_json(o[i].fit_probes));
    }
    cJSON_AddItemToArray(ds, x);
  }
  if (s->grid_combinations > 0) {
    cJSON *g = cJSON_AddObjectToObject(root, "grid");
    cJSON_AddNumberToObject(g, "combinations", s->grid_combinations);
    cJSON *sk = cJSON_AddArrayToObject(g, "skipped");
    for (int i = 0; i < s->n_skipped; i++) {
      cJSON *k = cJSON_CreateObject();
      cJSON_AddStringToObject(k, "name", s->skipped[i].name);
      cJSON_AddStringToObject(k, "reason", s->skipped[i].reason);
      cJSON_AddItemToArray(sk, k);
    }
  }
  if (s->target_qps > 0) {
    cJSON_AddNumberToObject(root, "target_qps", s->target_qps);
    if (cheapest >= 0)
      cJSON_AddStringToObject(root, "cheapest", s->deployments[cheapest].name);
    else
      cJSON_AddNullToObject(root, "cheapest");
  }
  return root;
}

/* A grid's combinations the run reader refused, each with its reason. */
static void print_skipped(const CsLlmSearchSpec *s)
{
  if (s->n_skipped == 0)
    return;
  printf("skipped %d of the grid's %d combinations (they do not load; docs/llm.md):\n",
         s->n_skipped, s->grid_combinations);
  for (int i = 0; i < s->n_skipped; i++)
    printf("  %s: %s\n", s->skipped[i].name, s->skipped[i].reason);
}

static void print_tables(const CsLlmSearchSpec *s, const Outcome *o, int cheapest)
{
  print_skipped(s);
  printf("%-36s %8s %6s %9s %9s %9s %5s %8s %9s\n", "deployment", "max_qps", "probes",
         "TTFT_p90", "TBT_p90", "tok/s", "GPUs", "$/h", "qps/$h");
  for (int i = 0; i < s->n_deployments; i++) {
    const CsLlmDeployment *d = &s->deployments[i];
    const CsLlmSearchResult *c = o[i].cap;
    int reps = d->cfg->sim.replicas;
    double cost = price(d->cfg, reps);
    printf("%-36s ", d->name);
    if (c->found) {
      const CsLlmProbe *p = &g_array_index(c->probes, CsLlmProbe, c->best);
      printf("%8.3f %6u %9.1f %9.1f %9.1f", c->max_qps, c->probes->len,
             p->summary.ttft.n ? p->summary.ttft.p90 : 0, p->summary.tbt.n ? p->summary.tbt.p90 : 0,
             p->summary.output_tokens_per_s);
    } else {
      printf("%8s %6u %9s %9s %9s", "none", c->probes->len, "-", "-", "-");
    }
    printf(" %5d", cs_llm_deployment_gpus(d->cfg, reps));
    if (isfinite(cost) && c->found)
      printf(" %8.2f %9.3f\n", cost, c->max_qps / cost);
    else if (isfinite(cost))
      printf(" %8.2f %9s\n", cost, "-");
    else
      printf(" %8s %9s\n", "-", "-");
    if (c->stopped_low && c->probes->len > 0)
      printf("  note: %s: every probe failed down to %.3g requests/s, where the search "
             "stops\n", d->name, g_array_index(c->probes, CsLlmProbe, c->probes->len - 1).qps);
    else if (c->stopped_low)
      printf("  note: %s: start_qps is so low that %d requests could arrive past 9e9 s: "
             "nothing probed\n", d->name, d->cfg->n);
    int64_t clamped = 0, batches = 0;
    for (guint k = 0; k < c->probes->len; k++) {
      clamped += g_array_index(c->probes, CsLlmProbe, k).attention_clamped_batches;
      batches += g_array_index(c->probes, CsLlmProbe, k).batches;
    }
    if (clamped > 0)
      printf("  warning: %s: %" G_GINT64_FORMAT " of the probes' %" G_GINT64_FORMAT
             " batches looked their attention up at the grid's edge "
             "(\"attention_outside_grid\": \"clamp\")\n",
             d->name, clamped, batches);
    if (c->found)
      warn_kv_wait(d->name, &g_array_index(c->probes, CsLlmProbe, c->best).summary);
    if (c->non_monotone)
      printf("  warning: %s: not monotone (a probe passed above a rate that failed); the "
             "answer is the last rate that passed\n", d->name);
  }
  if (s->target_qps <= 0)
    return;
  printf("\nat %.3f requests/s:\n%-36s %8s %5s %8s %6s %9s %9s\n", s->target_qps, "deployment",
         "replicas", "GPUs", "$/h", "probes", "TTFT_p90", "TBT_p90");
  for (int i = 0; i < s->n_deployments; i++) {
    const CsLlmDeployment *d = &s->deployments[i];
    const CsLlmProbe *fp = fit_probe(&o[i]);
    gboolean pools = d->cfg->sim.decode_replicas > 0;
    char *reps = pools ? g_strdup_printf("%dP+%dD", o[i].fit.prefill, o[i].fit.decode)
                       : g_strdup_printf("%d", o[i].fit.replicas);
    if (fp)
      printf("%-36s %8s %5d %8.2f %6u %9.1f %9.1f\n", d->name, reps, o[i].fit.gpus,
             o[i].fit.cost_per_hour, o[i].fit_probes->len,
             fp->summary.ttft.n ? fp->summary.ttft.p90 : 0,
             fp->summary.tbt.n ? fp->summary.tbt.p90 : 0);
    else if (!pools)
      printf("%-36s %8s %5s %8s %6u %9s %9s   (none of 1..%d meets the SLO)\n", d->name, "-",
             "-", "-", o[i].fit_probes->len, "-", "-", d->max_replicas);
    else if (!o[i].pools.limited)
      printf("%-36s %8s %5s %8s %6u %9s %9s   (no split of 2..%d replicas meets the SLO)\n",
             d->name, "-", "-", "-", o[i].fit_probes->len, "-", "-", d->max_replicas);
    else
      printf("%-36s %8s %5s %8s %6u %9s %9s   (none found before max_probes)\n", d->name, "-",
             "-", "-", o[i].fit_probes->len, "-", "-");
    if (fp)
      warn_kv_wait(d->name, &fp->summary);
    if (pools && o[i].pools.limited)
      printf("  warning: %s: max_probes (%d) reached at %dP+%dD with splits of up to %d "
             "replicas unprobed: no answer (every split of up to %d replicas fails; raise "
             "search.max_probes)\n", d->name, s->params.max_probes, o[i].pools.stopped_at_prefill,
             o[i].pools.stopped_at_total - o[i].pools.stopped_at_prefill, d->max_replicas,
             o[i].pools.complete_total);
    g_free(reps);
  }
  if (cheapest >= 0 && s->deployments[cheapest].cfg->sim.decode_replicas > 0)
    printf("cheapest: %s, %dP+%dD (%d replicas), %.2f $/h\n", s->deployments[cheapest].name,
           o[cheapest].fit.prefill, o[cheapest].fit.decode, o[cheapest].fit.replicas,
           o[cheapest].fit.cost_per_hour);
  else if (cheapest >= 0)
    printf("cheapest: %s, %d replica(s), %.2f $/h\n", s->deployments[cheapest].name,
           o[cheapest].fit.replicas, o[cheapest].fit.cost_per_hour);
  else
    printf("cheapest: none meets the SLO at that rate\n");
}

/* Runs every search; FALSE with error set when a run fails. */
static gboolean run_all(const CsLlmSearchSpec *s, Outcome *o, GError **error)
{
  for (int i = 0; i < s->n_deployments; i++) {
    const CsLlmDeployment *d = &s->deployments[i];
    o[i].cap = cs_llm_search_capacity(d->cfg, 0, &s->slo, &s->params, error);
    if (o[i].cap == NULL)
      return FALSE;
    if (s->target_qps <= 0)
      continue;
    o[i].fit_probes = g_array_new(FALSE, TRUE, sizeof(CsLlmProbe));
    if (d->cfg->sim.decode_replicas > 0) {
      /* Two pools: the cheapest split, prefill + decode <= max_replicas. */
      if (!cs_llm_fewest_pools(d->cfg, s->target_qps, &s->slo, d->max_replicas,
                               s->params.max_probes, &o[i].pools, o[i].fit_probes, error))
        return FALSE;
      o[i].fit.prefill = o[i].pools.prefill;
      o[i].fit.decode = o[i].pools.decode;
      o[i].fit.replicas = o[i].pools.prefill + o[i].pools.decode;
      if (o[i].fit.replicas > 0 &&
          !cs_llm_pools_cost(d->cfg, o[i].fit.prefill, o[i].fit.decode, &o[i].fit.gpus,
                             &o[i].fit.cost_per_hour, error))
        return FALSE;
      continue;
    }
    if (!cs_llm_fewest_replicas(d->cfg, s->target_qps, &s->slo, d->max_replicas,
                                &o[i].fit.replicas, o[i].fit_probes, error))
      return FALSE;
    if (o[i].fit.replicas > 0) {
      o[i].fit.gpus = cs_llm_deployment_gpus(d->cfg, o[i].fit.replicas);
      if (!cs_llm_deployment_cost(d->cfg, o[i].fit.replicas, &o[i].fit.cost_per_hour, error))
        return FALSE;
    }
  }
  return TRUE;
}

int cmd_llm_search(int argc, char **argv)
{
  char *out_dir = NULL;
  gboolean as_json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &as_json,
      "Print the result as JSON (every probe, the metrics, the costs) instead of the tables",
      NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Write search.json (the result as --json prints it, with provenance) into DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("CONFIG.json - the highest rate under latency SLOs");
  g_option_context_set_summary(ctx,
    "For each deployment, the highest Poisson arrival rate whose run meets the SLOs (TTFT,\n"
    "TBT, scheduling delay quantiles), found by Vidur's bisection with the same seed at\n"
    "every probe; with target_qps, the fewest replicas of each deployment that meet them\n"
    "at that rate (disaggregated: the cheapest prefill + decode split, fewer prefill\n"
    "replicas on ties), its cost (replicas x TP x PP x price_per_hour) and the cheapest.\n"
    "CONFIG's format, \"clustersim-llm-search\", is in docs/llm.md.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsLlmSearchSpec *s = NULL;
  Outcome *o = NULL;
  cJSON *result = NULL;
  char *text = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(PROG, "expected one CONFIG.json (see --help)");
    goto out;
  }
  const char *file = argv[1];
  s = cs_llm_search_spec_load(file, cli_registry(), &err);
  if (s == NULL) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  o = g_new0(Outcome, s->n_deployments);
  if (!run_all(s, o, &err)) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  CsLlmFit *fits = g_new0(CsLlmFit, s->n_deployments);
  for (int i = 0; i < s->n_deployments; i++)
    fits[i] = o[i].fit;
  int cheapest = s->target_qps > 0 ? cs_llm_cheapest(fits, s->n_deployments) : -1;
  g_free(fits);
  result = result_json(s, o, cheapest, file);
  text = cs_json_print_exact_line(result);
  if (out_dir != NULL) {
    if (g_mkdir_with_parents(out_dir, 0777) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", out_dir,
                                g_strerror(errno));
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
    char *path = g_build_filename(out_dir, "search.json", NULL);
    gboolean ok = g_file_set_contents(path, text, -1, &err);
    g_free(path);
    if (!ok) {
      char *m = g_strdup_printf("-o %s: %s", out_dir, err->message);
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
  }
  if (as_json)
    fputs(text, stdout);
  else
    print_tables(s, o, cheapest);
out:
  for (int i = 0; o && i < s->n_deployments; i++) {
    cs_llm_search_result_free(o[i].cap);
    if (o[i].fit_probes)
      g_array_free(o[i].fit_probes, TRUE);
  }
  g_free(o);
  cJSON_Delete(result);
  g_free(text);
  if (err)
    g_error_free(err);
  cs_llm_search_spec_free(s);
  g_free(out_dir);
  g_option_context_free(ctx);
  return status;
}
