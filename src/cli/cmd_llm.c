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
#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"
#include "llm/llm_sim.h"
#include "workloads/trace.h"

#define PROG "clustersim llm run"

/* Everything loaded for one run; llm_clear frees it. */
typedef struct {
  cJSON *root;
  CsLlmModelSet *models;
  CsLlmOps *ops;
  CsLlmAttention *att;
  CsLlmCollectives *coll;
  CsLlmSimConfig sim;
  CsLlmSimRequest *reqs;
  int n;
  int64_t cut_prompts; /* trace rows whose prompt was cut to fit max_tokens */
  int64_t skipped;     /* trace rows left out by max_prompt_tokens */
  char *trace_path;
} LlmRun;

static void llm_clear(LlmRun *r)
{
  cJSON_Delete(r->root);
  cs_llm_models_free(r->models);
  cs_llm_ops_free(r->ops);
  cs_llm_attention_free(r->att);
  cs_llm_collectives_free(r->coll);
  g_free(r->reqs);
  g_free(r->trace_path);
}

/* Token counts of a synthetic workload: {"fixed": N} or {"uniform": [MIN, MAX]}. */
static gboolean read_lengths(const cJSON *obj, const char *key, const char *file, int max,
                             int lo_hi[2], GError **error)
{
  const cJSON *v = cJSON_GetObjectItem(obj, key);
  char *path = cs_json_path_key("requests.synthetic", key);
  static const char *const known[] = { "fixed", "uniform", NULL };
  gboolean ok = FALSE;
  if (v == NULL) {
    cs_json_fail(error, file, path, "expected {\"fixed\": N} or {\"uniform\": [MIN, MAX]}");
    goto out;
  }
  if (!cs_json_expect_object(v, file, path, error) || !cs_json_check_keys(v, known, file, path, error))
    goto out;
  const cJSON *u = cJSON_GetObjectItem(v, "uniform");
  if (cJSON_GetObjectItem(v, "fixed") != NULL && u == NULL) {
    ok = cs_json_read_int(v, "fixed", TRUE, 1, max, &lo_hi[0], file, path, error);
    lo_hi[1] = lo_hi[0];
  } else if (u != NULL && cJSON_GetObjectItem(v, "fixed") == NULL && cJSON_IsArray(u) &&
             cJSON_GetArraySize(u) == 2) {
    char *up = cs_json_path_key(path, "uniform");
    char *p0 = cs_json_path_index(up, 0), *p1 = cs_json_path_index(up, 1);
    int64_t a = 0, b = 0;
    ok = cs_json_value_int64(cJSON_GetArrayItem(u, 0), 1, max, &a, file, p0, error) &&
         cs_json_value_int64(cJSON_GetArrayItem(u, 1), a, max, &b, file, p1, error);
    lo_hi[0] = (int)a;
    lo_hi[1] = (int)b;
    g_free(up);
    g_free(p0);
    g_free(p1);
  } else {
    cs_json_fail(error, file, path, "expected exactly one of {\"fixed\": N} or {\"uniform\": "
                 "[MIN, MAX]} (MIN <= MAX)");
  }
out:
  g_free(path);
  return ok;
}

/* Seeded synthetic requests: Vidur's capped Poisson intervals (-ln(1 - U) /
 * qps, at most 3 / qps; docs/research/vidur.md section 5) or all at 0
 * ("static"), lengths uniform on [MIN, MAX]. GLib's Mersenne Twister,
 * seeded, so the same seed gives the same requests everywhere; they are not
 * Vidur's draws (Python's random). */
static gboolean read_synthetic(LlmRun *r, const cJSON *syn, const char *file, int max_tokens,
                               GError **error)
{
  const char *path = "requests.synthetic";
  static const char *const known[] = { "n", "qps", "arrival", "prompt_tokens", "output_tokens",
                                       "seed", NULL };
  int n = 0, prompt[2], output[2];
  double qps = 1;
  int64_t seed = 0;
  const char *arrival = "poisson";
  if (!cs_json_expect_object(syn, file, path, error) ||
      !cs_json_check_keys(syn, known, file, path, error) ||
      !cs_json_read_int(syn, "n", TRUE, 1, 10000000, &n, file, path, error) ||
      !cs_json_read_string(syn, "arrival", FALSE, &arrival, file, path, error))
    return FALSE;
  gboolean poisson = strcmp(arrival, "poisson") == 0;
  if (!poisson && strcmp(arrival, "static") != 0) {
    char *p = cs_json_path_key(path, "arrival");
    cs_json_fail(error, file, p, "expected \"poisson\" or \"static\", got \"%s\"", arrival);
    g_free(p);
    return FALSE;
  }
  if (!cs_json_read_double(syn, "qps", poisson, 1e-9, 1e9, &qps, file, path, error) ||
      !read_lengths(syn, "prompt_tokens", file, max_tokens, prompt, error) ||
      !read_lengths(syn, "output_tokens", file, max_tokens, output, error) ||
      !cs_json_read_int64(syn, "seed", TRUE, 0, G_MAXUINT32, &seed, file, path, error))
    return FALSE;
  if (prompt[1] + output[1] > max_tokens) {
    cs_json_fail(error, file, path, "expected the longest prompt + output (%d + %d) to be at "
                 "most max_tokens %d", prompt[1], output[1], max_tokens);
    return FALSE;
  }
  GRand *rng = g_rand_new_with_seed((guint32)seed);
  r->n = n;
  r->reqs = g_new0(CsLlmSimRequest, n);
  double t = 0;
  for (int i = 0; i < n; i++) {
    if (poisson && i > 0) {
      double iv = -log(1 - g_rand_double(rng)) / qps;
      t += fmin(iv, 3 / qps);
    }
    r->reqs[i] = (CsLlmSimRequest){ .id = i, .arrival_ns = llround(t * 1e9),
                                    .prompt_tokens = g_rand_int_range(rng, prompt[0], prompt[1] + 1),
                                    .output_tokens = g_rand_int_range(rng, output[0], output[1] + 1) };
  }
  g_rand_free(rng);
  return TRUE;
}

/* Vidur's trace_replay: tokens x scale, truncated, clipped to >= 1, then a
 * prompt whose prompt + output exceeds max_tokens is cut; arrivals x
 * time_scale. Not Vidur's: "min_prompt_tokens" and "max_prompt_tokens"
 * leave out the rows whose prompt (after the cut) is shorter or longer, "limit" keeps the first N rows left
 * (for the sampled attention grid, which refuses some long prefills). */
static gboolean read_trace(LlmRun *r, const cJSON *req, const char *file, int max_tokens,
                           GError **error)
{
  const char *path = "requests";
  static const char *const known[] = { "trace", "time_scale", "prefill_scale", "decode_scale",
                                       "limit", "min_prompt_tokens", "max_prompt_tokens", NULL };
  const char *rel = NULL;
  double ts = 1, ps = 1, ds = 1;
  int limit = 0, min_prompt = 1, max_prompt = G_MAXINT;
  if (!cs_json_check_keys(req, known, file, path, error) ||
      !cs_json_read_int(req, "min_prompt_tokens", FALSE, 1, G_MAXINT, &min_prompt, file, path,
                        error) ||
      !cs_json_read_int(req, "max_prompt_tokens", FALSE, min_prompt, G_MAXINT, &max_prompt, file,
                        path, error) ||
      !cs_json_read_string(req, "trace", TRUE, &rel, file, path, error) ||
      !cs_json_read_double(req, "time_scale", FALSE, 1e-9, 1e9, &ts, file, path, error) ||
      !cs_json_read_double(req, "prefill_scale", FALSE, 1e-9, 1e6, &ps, file, path, error) ||
      !cs_json_read_double(req, "decode_scale", FALSE, 1e-9, 1e6, &ds, file, path, error) ||
      !cs_json_read_int(req, "limit", FALSE, 1, G_MAXINT, &limit, file, path, error))
    return FALSE;
  char *dir = g_path_get_dirname(file);
  r->trace_path = g_path_is_absolute(rel) ? g_strdup(rel) : g_build_filename(dir, rel, NULL);
  g_free(dir);
  GError *e = NULL;
  CsLlmRequestTrace *tr = cs_vidur_trace_load(r->trace_path, &e);
  if (tr == NULL) {
    cs_json_fail(error, file, "requests.trace", "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  size_t n = tr->n_records;
  r->reqs = g_new0(CsLlmSimRequest, n);
  gboolean ok = TRUE;
  for (size_t i = 0; i < n && ok && (limit == 0 || r->n < limit); i++) {
    const CsLlmRequestRecord *rec = &tr->records[i];
    double p = fmax(1, trunc((double)rec->prompt_tokens * ps));
    double d = fmax(1, trunc((double)rec->output_tokens * ds));
    gboolean cut = p + d > max_tokens;
    if (cut)
      p = max_tokens - d;
    if (p < 1) {
      ok = cs_json_fail(error, file, "requests.trace", "%s line %" G_GINT64_FORMAT ": %.0f "
                        "output tokens leave no prompt within max_tokens %d",
                        r->trace_path, rec->line, d, max_tokens);
      break;
    }
    if (p < min_prompt || p > max_prompt) {
      r->skipped++;
      continue;
    }
    r->cut_prompts += cut;
    r->reqs[r->n++] = (CsLlmSimRequest){ .id = (int64_t)i,
                                    .arrival_ns = llround((double)rec->time_ns * ts),
                                    .prompt_tokens = (int)p, .output_tokens = (int)d };
  }
  cs_llm_request_trace_free(tr);
  return ok;
}

/* Looks REL up in the data directories' llm/ and loads it with load. */
static gpointer load_data(const char *rel, gpointer (*load)(const char *, GError **),
                          const char *file, const char *path, GError **error)
{
  GError *e = NULL;
  char *p = cs_llm_data_find(rel, &e);
  gpointer out = p ? load(p, &e) : NULL;
  if (out == NULL) {
    cs_json_fail(error, file, path, "%s", e->message);
    g_error_free(e);
  }
  g_free(p);
  return out;
}

static gboolean read_config(LlmRun *r, const char *file, GError **error)
{
  r->root = cs_json_load_file(file, error);
  if (r->root == NULL)
    return FALSE;
  const cJSON *root = r->root;
  static const char *const known[] = { "format", "version", "model", "device", "node",
                                       "tensor_parallel", "pipeline_parallel", "replicas",
                                       "scheduler", "router", "requests", "max_tokens",
                                       "memory_margin", NULL };
  const char *format = NULL, *model = NULL, *device = NULL, *node = NULL, *router = "round_robin";
  int version = 0, tp = 1, pp = 1, replicas = 1, max_tokens = 4096;
  double margin = 0.1;
  if (!cs_json_expect_object(root, file, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &format, file, "", error))
    return FALSE;
  if (strcmp(format, "clustersim-llm-run") != 0)
    return cs_json_fail(error, file, "format", "expected \"clustersim-llm-run\", got \"%s\"", format);
  if (!cs_json_read_int(root, "version", TRUE, 1, 1, &version, file, "", error) ||
      !cs_json_check_keys(root, known, file, "", error) ||
      !cs_json_read_string(root, "model", TRUE, &model, file, "", error) ||
      !cs_json_read_string(root, "device", TRUE, &device, file, "", error) ||
      !cs_json_read_string(root, "node", TRUE, &node, file, "", error) ||
      !cs_json_read_int(root, "tensor_parallel", FALSE, 1, 64, &tp, file, "", error) ||
      !cs_json_read_int(root, "pipeline_parallel", FALSE, 1, 64, &pp, file, "", error) ||
      !cs_json_read_int(root, "replicas", FALSE, 1, 100000, &replicas, file, "", error) ||
      !cs_json_read_string(root, "router", FALSE, &router, file, "", error) ||
      !cs_json_read_int(root, "max_tokens", FALSE, 1, 1 << 20, &max_tokens, file, "", error) ||
      !cs_json_read_double(root, "memory_margin", FALSE, 0, 0.999, &margin, file, "", error))
    return FALSE;
  if (pp != 1)
    return cs_json_fail(error, file, "pipeline_parallel", "expected 1: pipeline parallelism "
                        "is not simulated yet, got %d", pp);
  GError *e = NULL;
  if (!cs_llm_router_parse(router, &r->sim.router, &e))
    goto fail_e_router;
  r->models = load_data("models.json", (gpointer (*)(const char *, GError **))cs_llm_models_load,
                        file, "model", error);
  if (r->models == NULL)
    return FALSE;
  const CsLlmModel *m = cs_llm_models_find_model(r->models, model, &e);
  if (m == NULL)
    return cs_json_fail(error, file, "model", "%s", e->message), g_clear_error(&e), FALSE;
  const CsLlmDevice *d = cs_llm_models_find_device(r->models, device, &e);
  if (d == NULL)
    return cs_json_fail(error, file, "device", "%s", e->message), g_clear_error(&e), FALSE;
  const CsLlmNode *nd = cs_llm_models_find_node(r->models, node, &e);
  if (nd == NULL)
    return cs_json_fail(error, file, "node", "%s", e->message), g_clear_error(&e), FALSE;
  if (nd->device != d)
    return cs_json_fail(error, file, "node", "expected a node of %s devices, got \"%s\" (%s)",
                        d->name, nd->name, nd->device->name);

  /* The memory plan decides the KV blocks (Vidur's memory planner). */
  CsLlmPlanConfig pc;
  cs_llm_plan_config_init(&pc);
  pc.tp = tp;
  pc.max_tokens = max_tokens;
  pc.memory_margin = margin;
  const cJSON *sc = cJSON_GetObjectItem(root, "scheduler");
  const char *policy = "sarathi"; /* Vidur's default replica scheduler */
  static const char *const sknown[] = { "policy", "batch_size_cap", "chunk_size", "block_size",
                                        "watermark_blocks_fraction", "max_tokens_in_batch",
                                        "num_blocks", NULL };
  if (sc != NULL && (!cs_json_expect_object(sc, file, "scheduler", error) ||
                     !cs_json_check_keys(sc, sknown, file, "scheduler", error) ||
                     !cs_json_read_string(sc, "policy", FALSE, &policy, file, "scheduler", error)))
    return FALSE;
  CsLlmSchedPolicy pol;
  if (!cs_llm_sched_policy_parse(policy, &pol, &e))
    return cs_json_fail(error, file, "scheduler.policy", "%s", e->message), g_clear_error(&e),
           FALSE;
  CsLlmSchedConfig *s = &r->sim.sched;
  cs_llm_sched_config_init(s, pol);
  s->max_tokens = max_tokens;
  int64_t num_blocks = 0;
  if (sc != NULL &&
      (!cs_json_read_int(sc, "batch_size_cap", FALSE, 1, 1 << 20, &s->batch_size_cap, file,
                         "scheduler", error) ||
       !cs_json_read_int(sc, "chunk_size", FALSE, 1, 1 << 20, &s->chunk_size, file, "scheduler",
                         error) ||
       !cs_json_read_int(sc, "block_size", FALSE, 1, 1 << 16, &s->block_size, file, "scheduler",
                         error) ||
       !cs_json_read_double(sc, "watermark_blocks_fraction", FALSE, 0, 0.999,
                            &s->watermark_blocks_fraction, file, "scheduler", error) ||
       !cs_json_read_int(sc, "max_tokens_in_batch", FALSE, 1, 1 << 20, &s->max_tokens_in_batch,
                         file, "scheduler", error) ||
       !cs_json_read_int64(sc, "num_blocks", FALSE, 1, INT64_C(1) << 40, &num_blocks, file,
                           "scheduler", error)))
    return FALSE;
  pc.block_size = s->block_size;
  CsLlmPlan plan;
  if (!cs_llm_plan(m, d, &pc, &plan, &e))
    return cs_json_fail(error, file, "model", "%s", e->message), g_clear_error(&e), FALSE;
  s->num_blocks = num_blocks > 0 ? num_blocks : plan.num_blocks;
  s->max_batch_size = plan.max_batch_size;
  r->sim.replicas = replicas;

  char *rel = cs_llm_ops_rel_path(device, model);
  r->ops = load_data(rel, (gpointer (*)(const char *, GError **))cs_llm_ops_load, file, "device",
                     error);
  g_free(rel);
  if (r->ops == NULL)
    return FALSE;
  rel = cs_llm_attention_rel_path(device, model);
  r->att = load_data(rel, (gpointer (*)(const char *, GError **))cs_llm_attention_load, file,
                     "device", error);
  g_free(rel);
  if (r->att == NULL)
    return FALSE;
  if (tp > 1) {
    rel = g_strdup_printf("collectives/%s.json", node);
    r->coll = load_data(rel, (gpointer (*)(const char *, GError **))cs_llm_collectives_load, file,
                        "node", error);
    g_free(rel);
    if (r->coll == NULL)
      return FALSE;
  }
  r->sim.exec = (CsLlmExecConfig){ .model = m, .ops = r->ops, .collectives = r->coll,
                                   .devices_per_node = nd->devices_per_node, .tp = tp, .pp = 1,
                                   .attention = r->att };
  /* The replica's tables, checked here so that a bad degree is the
   * config's error (the shipped attention sample is TP1 only). */
  CsLlmExec *x = cs_llm_exec_new(&r->sim.exec, &e);
  if (x == NULL)
    return cs_json_fail(error, file, "tensor_parallel", "%s", e->message), g_clear_error(&e),
           FALSE;
  cs_llm_exec_free(x);
  const cJSON *req = cJSON_GetObjectItem(root, "requests");
  if (req == NULL)
    return cs_json_fail(error, file, "requests", "expected {\"trace\": PATH} or "
                        "{\"synthetic\": {...}}, got nothing");
  if (!cs_json_expect_object(req, file, "requests", error))
    return FALSE;
  const cJSON *syn = cJSON_GetObjectItem(req, "synthetic");
  if (syn != NULL && cJSON_GetArraySize(req) == 1)
    return read_synthetic(r, syn, file, max_tokens, error);
  if (cJSON_GetObjectItem(req, "trace") != NULL && syn == NULL)
    return read_trace(r, req, file, max_tokens, error);
  return cs_json_fail(error, file, "requests", "expected exactly one of {\"trace\": PATH, ...} "
                      "or {\"synthetic\": {...}}");
fail_e_router:
  cs_json_fail(error, file, "router", "%s", e->message);
  g_error_free(e);
  return FALSE;
}

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

static char *summary_text(const LlmRun *r, const CsLlmSimResult *res, const CsLlmSimSummary *s,
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
  cJSON_AddStringToObject(prov, "percentiles", "linear interpolation (numpy's default)");
  cJSON_AddNumberToObject(o, "requests", res->n_requests);
  cJSON_AddNumberToObject(o, "prompts_cut_to_max_tokens", (double)r->cut_prompts);
  cJSON_AddNumberToObject(o, "trace_rows_left_out", (double)r->skipped);
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
  cJSON_AddNumberToObject(o, "makespan_s", (double)s->makespan_ns / 1e9);
  cJSON_AddNumberToObject(o, "kv_peak_utilisation", s->kv_peak_util);
  cJSON_AddNumberToObject(o, "kv_mean_utilisation", s->kv_mean_util);
  cJSON *reps = cJSON_AddArrayToObject(o, "replicas");
  for (int i = 0; i < res->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &res->replicas[i];
    cJSON *x = cJSON_CreateObject();
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
  GString *s = g_string_new("id,replica,prompt_tokens,output_tokens,arrived_s,scheduled_s,"
                            "first_token_s,completed_s,restarts,ttft_ms,e2e_ms,tbt_count,"
                            "tbt_mean_ms,tbt_max_ms,token_gap_max_ms,"
                            "decode_time_per_token_ms\n");
  for (int j = 0; j < res->n_requests; j++) {
    const CsLlmSimRequestResult *q = &res->requests[j];
    g_string_append_printf(
      s, "%" G_GINT64_FORMAT ",%d,%d,%d,%.9f,%.9f,%.9f,%.9f,%d,%.6f,%.6f,%" G_GINT64_FORMAT
         ",%.6f,%.6f,%.6f,%.6f\n",
      q->id, q->replica, q->prompt_tokens, q->output_tokens, q->arrival_ns / 1e9,
      q->scheduled_ns / 1e9, q->first_token_ns / 1e9, q->completed_ns / 1e9, q->restarts,
      (q->first_token_ns - q->arrival_ns) / 1e6, (q->completed_ns - q->arrival_ns) / 1e6,
      q->n_tbt, q->n_tbt ? q->tbt_sum_ns / 1e6 / q->n_tbt : 0, q->tbt_max_ns / 1e6,
      q->gap_max_ns / 1e6, (q->completed_ns - q->first_token_ns) / 1e6 / q->final_decode_tokens);
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
         "(COMMAND --help for details)");
    return 0;
  }
  if (argc < 2 || strcmp(argv[1], "run") != 0)
    return cli_fail("clustersim llm", "expected a subcommand: run (see clustersim llm --help)");
  argc--;
  argv++;
  char *out_dir = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Write requests.csv (one row per request, every time) and summary.json (with provenance) "
      "into DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("CONFIG.json - LLM replicas token by token");
  g_option_context_set_summary(ctx,
    "Simulates a cluster of identical LLM replicas as Vidur does: each request routed at\n"
    "arrival (round_robin or lor), each replica's batches formed by its scheduler (vllm,\n"
    "sarathi, orca, static) and timed from the profiled tables of data/llm. Prints TTFT,\n"
    "TBT and end-to-end percentiles (ms, linear interpolation), tokens/s and preemptions.\n"
    "CONFIG's format, \"clustersim-llm-run\", is in docs/llm.md.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  LlmRun r = { 0 };
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
  if (!read_config(&r, file, &err)) {
    status = cli_fail(PROG, err->message);
    goto out;
  }
  res = cs_llm_sim_run(&r.sim, r.reqs, r.n, &err);
  if (res == NULL) {
    char *m = g_strdup_printf("%s: %s", file, err->message);
    status = cli_fail(PROG, m);
    g_free(m);
    goto out;
  }
  CsLlmSimSummary s;
  cs_llm_sim_summary(res, &s);
  if (out_dir != NULL) {
    csv = requests_csv(res);
    sum = summary_text(&r, res, &s, file);
    if (g_mkdir_with_parents(out_dir, 0777) != 0) {
      char *m = g_strdup_printf("%s: cannot create output directory: %s", out_dir,
                                g_strerror(errno));
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
    if (!write_out(out_dir, "requests.csv", csv, &err) ||
        !write_out(out_dir, "summary.json", sum, &err)) {
      char *m = g_strdup_printf("-o %s: %s", out_dir, err->message);
      status = cli_fail(PROG, m);
      g_free(m);
      goto out;
    }
  }
  printf("%d requests on %d replica(s), %s, router %s: makespan %.3f s\n", res->n_requests,
         res->n_replicas, cs_llm_sched_policy_name(r.sim.sched.policy),
         cs_llm_router_name(r.sim.router), s.makespan_ns / 1e9);
  printf("%-8s %10s %10s %10s\n", "ms", "p50", "p90", "p99");
  const struct {
    const char *name;
    const CsLlmDist *d;
  } rows[] = { { "TTFT", &s.ttft }, { "TBT", &s.tbt }, { "e2e", &s.e2e } };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    if (rows[i].d->n)
      printf("%-8s %10.3f %10.3f %10.3f\n", rows[i].name, rows[i].d->p50, rows[i].d->p90,
             rows[i].d->p99);
    else
      printf("%-8s %10s %10s %10s\n", rows[i].name, "-", "-", "-");
  }
  printf("output tokens/s %.2f, preemptions %" G_GINT64_FORMAT ", KV blocks peak %.1f %% mean "
         "%.1f %%\n",
         s.output_tokens_per_s, s.restarts, 100 * s.kv_peak_util, 100 * s.kv_mean_util);
out:
  if (err)
    g_error_free(err);
  g_free(csv);
  g_free(sum);
  cs_llm_sim_result_free(res);
  llm_clear(&r);
  g_free(out_dir);
  g_option_context_free(ctx);
  return status;
}
