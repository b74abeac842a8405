/* clustersim llm run CONFIG.json [-o DIR]: a cluster of identical LLM
 * replicas through time (src/llm/llm_sim.h) from a config of format
 * "clustersim-llm-run" (docs/llm.md). Every input is checked before the run
 * and the run completes before anything is written, so a bad config or a
 * refused request leaves no output. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "common/json_input.h"
#include "experiment/experiment.h"
#include "scenario/llm_config.h"

#define PROG "clustersim llm run"

static cJSON *dist_json(const CsLlmDist *d)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", (double)d->n);
  cJSON_AddNumberToObject(o, "p50_ms", d->n ? d->p50 : 0);
  cJSON_AddNumberToObject(o, "p90_ms", d->n ? d->p90 : 0);
  cJSON_AddNumberToObject(o, "p99_ms", d->n ? d->p99 : 0);
  cJSON_AddNumberToObject(o, "mean_ms", d->n ? d->mean : 0);
  return o;
}

static char *summary_text(const CsLlmConfig *r, const CsLlmSimResult *res, const CsLlmSimSummary *s,
                          const char *file)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "format", "clustersim-llm-summary");
  cJSON_AddNumberToObject(o, "version", 1);
  cJSON *prov = cJSON_AddObjectToObject(o, "provenance");
  cJSON_AddStringToObject(prov, "config_file", file);
  cJSON_AddItemToObject(prov, "config", cJSON_Duplicate(r->root, TRUE));
  cJSON_AddStringToObject(prov, "models", cs_llm_models_source(r->models));
  cJSON_AddStringToObject(prov, "ops", cs_llm_ops_source(r->ops));
  cJSON_AddStringToObject(prov, "attention", cs_llm_attention_source(r->att));
  if (r->coll)
    cJSON_AddStringToObject(prov, "collectives", cs_llm_collectives_source(r->coll));
  if (r->trace_path)
    cJSON_AddStringToObject(prov, "trace", r->trace_path);
  if (r->lengths_path) /* requests.synthetic.lengths: the lengths' trace */
    cJSON_AddStringToObject(prov, "lengths_trace", r->lengths_path);
  cJSON_AddStringToObject(prov, "percentiles", "linear interpolation (numpy's default)");
  /* A custom scheduler's plug-in, by name and SHA-256 (docs/extending.md). */
  cs_experiment_describe_plugins(cli_registry(), prov);
  cJSON_AddNumberToObject(o, "requests", res->n_requests);
  cJSON_AddNumberToObject(o, "prompts_cut_to_max_tokens", (double)r->cut_prompts);
  cJSON_AddNumberToObject(o, "trace_rows_left_out", (double)(r->skipped + r->lengths_skipped));
  if (r->lengths_path)
    cJSON_AddNumberToObject(o, "lengths_cut_to_max_tokens", (double)r->lengths_cut);
  cJSON_AddNumberToObject(o, "num_blocks_per_replica", (double)r->sim.sched.num_blocks);
  cJSON_AddItemToObject(o, "ttft", dist_json(&s->ttft));
  cJSON_AddItemToObject(o, "tbt", dist_json(&s->tbt));
  cJSON_AddItemToObject(o, "e2e", dist_json(&s->e2e));
  cJSON_AddItemToObject(o, "token_gap", dist_json(&s->gap));
  cJSON_AddItemToObject(o, "decode_time_per_token", dist_json(&s->decode_per_token));
  cJSON_AddNumberToObject(o, "output_tokens", (double)res->output_tokens);
  cJSON_AddNumberToObject(o, "output_tokens_per_s", s->output_tokens_per_s);
  cJSON_AddNumberToObject(o, "requests_per_s", s->requests_per_s);
  cJSON_AddNumberToObject(o, "preemptions", (double)s->restarts);
  cJSON_AddNumberToObject(o, "batches", (double)res->n_batches);
  cJSON_AddStringToObject(o, "attention_outside_grid",
                          r->attention_outside == CS_LLM_ATTN_CLAMP_OUTSIDE ? "clamp" : "refuse");
  cJSON_AddNumberToObject(o, "attention_clamped_batches",
                          (double)res->attention_clamped_batches);
  cJSON_AddNumberToObject(o, "makespan_s", (double)s->makespan_ns / 1e9);
  cJSON_AddNumberToObject(o, "kv_peak_utilisation", s->kv_peak_util);
  cJSON_AddNumberToObject(o, "kv_mean_utilisation", s->kv_mean_util);
  /* Model FLOPs utilisation (docs/llm.md): null when the device has no peak. */
  if (isfinite(s->mfu) && isfinite(s->mfu_busy)) {
    cJSON_AddNumberToObject(o, "mfu", s->mfu);
    cJSON_AddNumberToObject(o, "mfu_busy", s->mfu_busy);
  } else {
    cJSON_AddNullToObject(o, "mfu");
    cJSON_AddNullToObject(o, "mfu_busy");
  }
  if (res->n_prefill_replicas > 0) {
    cJSON *dg = cJSON_AddObjectToObject(o, "disaggregated");
    cJSON_AddNumberToObject(dg, "prefill_replicas", res->n_prefill_replicas);
    cJSON_AddNumberToObject(dg, "decode_replicas", res->n_replicas - res->n_prefill_replicas);
    cJSON_AddStringToObject(dg, "prefill_scheduler", cs_llm_sched_config_name(&r->sim.sched));
    cJSON_AddStringToObject(dg, "decode_scheduler",
                            cs_llm_sched_config_name(&r->sim.decode_sched));
    cJSON_AddNumberToObject(dg, "num_blocks_per_decode_replica",
                            (double)r->sim.decode_sched.num_blocks);
    cJSON_AddNumberToObject(dg, "kv_bytes_per_token_per_shard",
                            (double)r->sim.kv_bytes_per_token);
    cJSON_AddStringToObject(dg, "kv_transfer_curve", cs_network_curve_source(r->kv_curve));
    cJSON_AddItemToObject(dg, "kv_transfer", dist_json(&s->transfer));
    cJSON_AddItemToObject(dg, "kv_wait", dist_json(&s->kv_wait));
    cJSON_AddNumberToObject(dg, "prefill_busy_utilisation", s->prefill_busy_util);
    cJSON_AddNumberToObject(dg, "decode_busy_utilisation", s->decode_busy_util);
    cJSON_AddNumberToObject(dg, "prefill_kv_mean_utilisation", s->prefill_kv_mean_util);
    cJSON_AddNumberToObject(dg, "decode_kv_mean_utilisation", s->decode_kv_mean_util);
  }
  cJSON *reps = cJSON_AddArrayToObject(o, "replicas");
  for (int i = 0; i < res->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &res->replicas[i];
    cJSON *x = cJSON_CreateObject();
    if (res->n_prefill_replicas > 0)
      cJSON_AddStringToObject(x, "pool", i < res->n_prefill_replicas ? "prefill" : "decode");
    cJSON_AddNumberToObject(x, "batches", (double)p->n_batches);
    cJSON_AddNumberToObject(x, "busy_s", (double)p->busy_ns / 1e9);
    cJSON_AddNumberToObject(x, "peak_blocks", (double)p->peak_blocks);
    cJSON_AddNumberToObject(x, "mean_blocks",
                            res->makespan_ns ? p->block_ns / (double)res->makespan_ns : 0);
    cJSON_AddNumberToObject(x, "preemptions", (double)p->restarts);
    cJSON_AddItemToArray(reps, x);
  }
  char *text = cs_json_print_exact_line(o);
  cJSON_Delete(o);
  return text;
}

static char *requests_csv(const CsLlmSimResult *res)
{
  gboolean dg = res->n_prefill_replicas > 0;
  /* Disaggregated: replica is the prefill replica, and four more columns
   * (empty for a request of one output token, which has no decode). */
  GString *s = g_string_new(dg ? "id,prefill_replica,prompt_tokens" : "id,replica,prompt_tokens");
  g_string_append(s, ",output_tokens,arrived_s,scheduled_s,first_token_s,completed_s,"
                     "restarts,ttft_ms,e2e_ms,tbt_count,tbt_mean_ms,tbt_max_ms,"
                     "token_gap_max_ms,decode_time_per_token_ms");
  g_string_append(s, dg ? ",decode_replica,transfer_start_s,transfer_end_s,kv_wait_ms\n" : "\n");
  for (int j = 0; j < res->n_requests; j++) {
    const CsLlmSimRequestResult *q = &res->requests[j];
    g_string_append_printf(
      s, "%" G_GINT64_FORMAT ",%d,%d,%d,%.9f,%.9f,%.9f,%.9f,%d,%.6f,%.6f,%" G_GINT64_FORMAT
         ",%.6f,%.6f,%.6f,%.6f",
      q->id, q->replica, q->prompt_tokens, q->output_tokens, q->arrival_ns / 1e9,
      q->scheduled_ns / 1e9, q->first_token_ns / 1e9, q->completed_ns / 1e9, q->restarts,
      (q->first_token_ns - q->arrival_ns) / 1e6, (q->completed_ns - q->arrival_ns) / 1e6,
      q->n_tbt, q->n_tbt ? q->tbt_sum_ns / 1e6 / q->n_tbt : 0, q->tbt_max_ns / 1e6,
      q->gap_max_ns / 1e6, (q->completed_ns - q->first_token_ns) / 1e6 / q->final_decode_tokens);
    if (dg && q->decode_replica >= 0)
      g_string_append_printf(s, ",%d,%.9f,%.9f,%.6f", q->decode_replica,
                             q->transfer_start_ns / 1e9, q->transfer_end_ns / 1e9,
                             q->kv_wait_ns / 1e6);
    else if (dg)
      g_string_append(s, ",,,,");
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

/* Writes text to dir/name through a temporary file and a rename. */
static gboolean write_out(const char *dir, const char *name, const char *text, GError **error)
{
  char *path = g_build_filename(dir, name, NULL);
  gboolean ok = g_file_set_contents(path, text, -1, error);
  g_free(path);
  return ok;
}

int cmd_llm(int argc, char **argv)
{
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    puts("Usage: clustersim llm run CONFIG.json [-o DIR]\n"
         "       clustersim llm search CONFIG.json [--json] [-o DIR]\n"
         "(COMMAND --help for details)");
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "search") == 0)
    return cmd_llm_search(argc - 1, argv + 1);
  if (argc < 2 || strcmp(argv[1], "run") != 0)
    return cli_fail("clustersim llm", "expected a subcommand: run or search (see clustersim "
                    "llm --help)");
  argc--;
  argv++;
  char *out_dir = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Write requests.csv (one row per request, every time), summary.json (with provenance) "
      "and timeseries.csv (KV use, preemptions, tokens/s per timeseries_bin_s) into DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("CONFIG.json - LLM replicas token by token");
  g_option_context_set_summary(ctx,
    "Simulates a cluster of identical LLM replicas as Vidur does: each request routed at\n"
    "arrival (round_robin, lor or least_outstanding), each replica's batches formed by its\n"
    "scheduler (vllm, sarathi, orca, static, or one of your own loaded with --plugin)\n"
    "and timed from the profiled tables of\n"
    "data/llm. Prints TTFT,\n"
    "TBT and end-to-end percentiles (ms, linear interpolation), tokens/s and preemptions.\n"
    "CONFIG's format, \"clustersim-llm-run\", is in docs/llm.md.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsLlmConfig *r = NULL;
  CsLlmSimRequest *reqs = NULL;
  int n = 0;
  CsLlmSimResult *res = NULL;
  char *csv = NULL, *sum = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(PROG, "expected one CONFIG.json (see --help)");
    goto out;
  }
  const char *file = argv[1];
  r = cs_llm_config_load(file, cli_registry(), &err);
  if (r == NULL || (reqs = cs_llm_config_requests(r, 0, &n, &err)) == NULL) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  if (out_dir != NULL)
    r->sim.series_bin_ns = r->timeseries_bin_ns; /* timeseries.csv */
  res = cs_llm_sim_run(&r->sim, reqs, n, &err);
  if (res == NULL) {
    /* A point off the grid has a way forward the table's reader cannot name. */
    gboolean off_grid = r->attention_outside == CS_LLM_ATTN_REFUSE_OUTSIDE &&
                        strstr(err->message, "outside the profiled grid") != NULL;
    char *m = g_strdup_printf("%s: %s%s", file, err->message,
                              off_grid ? "; \"attention_outside_grid\": \"clamp\" looks such a "
                                         "point up at the grid's nearest edge instead, as "
                                         "Vidur's forests answer there (docs/llm.md)"
                                       : "");
    status = cli_fail(PROG, m);
    g_free(m);
    goto out;
  }
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  if (res->attention_clamped_batches > 0)
    fprintf(stderr,
            "clustersim: warning [attention_clamped] %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
            " batches looked their attention up at the edge of the profiled grid of %s "
            "(\"attention_outside_grid\": \"clamp\"): their attention time is the edge's, "
            "not a measurement\n",
            res->attention_clamped_batches, res->n_batches, r->sim.exec.model->name);
  if (out_dir != NULL) {
    csv = requests_csv(res);
    sum = summary_text(r, res, &s, file);
    if (g_mkdir_with_parents(out_dir, 0777) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", out_dir,
                                g_strerror(errno));
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
    GString *ts = g_string_new(CS_LLM_SERIES_HEADER);
    cs_llm_series_csv(ts, NULL, res->series, res->series_bin_ns, res->total_blocks,
                      res->makespan_ns);
    gboolean ok = write_out(out_dir, "requests.csv", csv, &err) &&
                  write_out(out_dir, "summary.json", sum, &err) &&
                  write_out(out_dir, "timeseries.csv", ts->str, &err);
    g_string_free(ts, TRUE);
    if (!ok) {
      char *m = g_strdup_printf("-o %s: %s", out_dir, err->message);
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
  }
  if (res->n_prefill_replicas > 0)
    printf("%d requests, disaggregated: %d prefill replica(s) (%s, router %s), %d decode "
           "replica(s) (%s, least outstanding): makespan %.3f s\n",
           res->n_requests, res->n_prefill_replicas, cs_llm_sched_config_name(&r->sim.sched),
           cs_llm_router_name(r->sim.router), res->n_replicas - res->n_prefill_replicas,
           cs_llm_sched_config_name(&r->sim.decode_sched), s.makespan_ns / 1e9);
  else
    printf("%d requests on %d replica(s), %s, router %s: makespan %.3f s\n", res->n_requests,
           res->n_replicas, cs_llm_sched_config_name(&r->sim.sched),
           cs_llm_router_name(r->sim.router), s.makespan_ns / 1e9);
  printf("%-8s %10s %10s %10s\n", "ms", "p50", "p90", "p99");
  const struct {
    const char *name;
    const CsLlmDist *d;
  } rows[] = { { "TTFT", &s.ttft }, { "TBT", &s.tbt }, { "e2e", &s.e2e },
               { "transfer", &s.transfer }, { "kv wait", &s.kv_wait } };
  /* The KV transfer's rows (its time, the wait for decode blocks before it)
   * only when disaggregated. */
  size_t n_rows = G_N_ELEMENTS(rows) - (res->n_prefill_replicas > 0 ? 0 : 2);
  for (size_t i = 0; i < n_rows; i++) {
    if (rows[i].d->n)
      printf("%-8s %10.3f %10.3f %10.3f\n", rows[i].name, rows[i].d->p50, rows[i].d->p90,
             rows[i].d->p99);
    else
      printf("%-8s %10s %10s %10s\n", rows[i].name, "-", "-", "-");
  }
  printf("output tokens/s %.2f, preemptions %" G_GINT64_FORMAT ", KV blocks peak %.1f %% mean "
         "%.1f %%, MFU %.2f %% (%.2f %% while busy)\n",
         s.output_tokens_per_s, s.restarts, 100 * s.kv_peak_util, 100 * s.kv_mean_util,
         100 * s.mfu, 100 * s.mfu_busy);
  if (res->n_prefill_replicas > 0)
    printf("busy: prefill pool %.1f %%, decode pool %.1f %%; KV blocks mean: prefill %.1f %%, "
           "decode %.1f %%\n",
           100 * s.prefill_busy_util, 100 * s.decode_busy_util, 100 * s.prefill_kv_mean_util,
           100 * s.decode_kv_mean_util);
out:
  if (err)
    g_error_free(err);
  g_free(csv);
  g_free(sum);
  cs_llm_sim_result_free(res);
  cs_llm_config_free(r);
  g_free(reqs);
  g_free(out_dir);
  g_option_context_free(ctx);
  return status;
}
