/* The config of LLM replicas read and checked, and its requests built
 * (llm_config.h). Moved here from the CLI (cmd_llm.c) so that the capacity
 * search (experiment/llm_search.c) can rebuild the requests at each probe's
 * rate. */
#include <math.h>
#include <string.h>

#include "common/data_files.h"
#include "common/json_input.h"
#include "common/params_internal.h"
#include "llm_config.h"
#include "llm_lengths.h"
#include "policies/registry_internal.h"
#include "scenario_internal.h"
#include "sim/rng.h"
#include "workloads/trace.h"

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

/* requests.synthetic: its parameters only; cs_llm_config_requests draws
 * the requests (llm_config.h). With "lengths" the lengths are a trace's
 * rows (llm_lengths.h) and n defaults to their count. */
static gboolean read_synthetic(CsLlmConfig *r, const cJSON *syn, const char *file,
                               const char *dir, int max_tokens, GError **error)
{
  const char *path = "requests.synthetic";
  static const char *const known[] = { "n", "qps", "arrival", "prompt_tokens", "output_tokens",
                                       "lengths", "seed", NULL };
  int n = 0, prompt[2] = { 0, 0 }, output[2] = { 0, 0 };
  double qps = 1;
  int64_t seed = 0;
  const char *arrival = "poisson";
  const cJSON *lengths = NULL;
  if (!cs_json_expect_object(syn, file, path, error) ||
      !cs_json_check_keys(syn, known, file, path, error))
    return FALSE;
  lengths = cJSON_GetObjectItem(syn, "lengths");
  if (!cs_json_read_int(syn, "n", lengths == NULL, 1, 10000000, &n, file, path, error) ||
      !cs_json_read_string(syn, "arrival", FALSE, &arrival, file, path, error))
    return FALSE;
  gboolean poisson = strcmp(arrival, "poisson") == 0;
  if (!poisson && strcmp(arrival, "static") != 0) {
    char *p = cs_json_path_key(path, "arrival");
    cs_json_fail(error, file, p, "expected \"poisson\" or \"static\", got \"%s\"", arrival);
    g_free(p);
    return FALSE;
  }
  if (!cs_json_read_double(syn, "qps", poisson && !r->rate_free, 1e-9, 1e9, &qps, file, path, error))
    return FALSE;
  if (lengths != NULL) {
    const char *other = cJSON_GetObjectItem(syn, "prompt_tokens") ? "prompt_tokens"
                        : cJSON_GetObjectItem(syn, "output_tokens") ? "output_tokens" : NULL;
    if (other != NULL) {
      char *p = cs_json_path_key(path, other);
      cs_json_fail(error, file, p, "expected none with \"lengths\" (the trace's rows give "
                   "both lengths)");
      g_free(p);
      return FALSE;
    }
    if (!cs_json_read_int64(syn, "seed", TRUE, 0, G_MAXUINT32, &seed, file, path, error) ||
        !cs_llm_lengths_read(r, lengths, file, dir, max_tokens, (uint64_t)seed, error))
      return FALSE;
    if (n == 0)
      n = r->n_len;
    if (n > r->n_len)
      return cs_json_fail(error, file, "requests.synthetic.n", "expected at most the %d rows "
                          "of requests.synthetic.lengths.trace (request i takes row i, as "
                          "Vidur's generator, which runs out there), got %d", r->n_len, n);
  } else if (!read_lengths(syn, "prompt_tokens", file, max_tokens, prompt, error) ||
             !read_lengths(syn, "output_tokens", file, max_tokens, output, error) ||
             !cs_json_read_int64(syn, "seed", TRUE, 0, G_MAXUINT32, &seed, file, path, error)) {
    return FALSE;
  } else if (prompt[1] + output[1] > max_tokens) {
    cs_json_fail(error, file, path, "expected the longest prompt + output (%d + %d) to be at "
                 "most max_tokens %d", prompt[1], output[1], max_tokens);
    return FALSE;
  }
  r->synthetic = TRUE;
  r->poisson = poisson;
  r->n = n;
  r->qps = qps;
  memcpy(r->prompt, prompt, sizeof prompt);
  memcpy(r->output, output, sizeof output);
  r->seed = (uint64_t)seed;
  return TRUE;
}

/* Vidur's trace_replay: tokens x scale, truncated, clipped to >= 1, then a
 * prompt whose prompt + output exceeds max_tokens is cut; arrivals x
 * time_scale. Not Vidur's: "min_prompt_tokens" and "max_prompt_tokens"
 * leave out the rows whose prompt (after the cut) is shorter or longer, "limit" keeps the first N rows left
 * (for the sampled attention grid, which refuses some long prefills). */
/* An Azure LLM inference trace (workloads/azure_llm.c) as Vidur's processed
 * one: arrivals from its earliest request, ContextTokens as the prompt and
 * GeneratedTokens as the output (0 allowed: the scales' clip to 1 below
 * applies, as Vidur's trace_replay clips). Vidur's own conversation trace
 * is this file so converted (docs/llm.md, "Traces"). */
static CsLlmRequestTrace *azure_as_requests(const char *path, GError **error)
{
  CsAzureLlmTrace *a = cs_azure_llm_load_sorted(path, error);
  if (a == NULL)
    return NULL;
  CsLlmRequestTrace *t = g_new0(CsLlmRequestTrace, 1);
  t->n_records = a->n_records;
  t->records = g_new0(CsLlmRequestRecord, MAX(a->n_records, 1));
  for (size_t i = 0; i < a->n_records; i++)
    t->records[i] = (CsLlmRequestRecord){ .time_ns = a->records[i].time_ns,
                                          .prompt_tokens = a->records[i].context_tokens,
                                          .output_tokens = a->records[i].generated_tokens,
                                          .line = a->records[i].line };
  cs_azure_llm_trace_free(a);
  if (t->n_records == 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: no requests", path);
    cs_llm_request_trace_free(t);
    return NULL;
  }
  return t;
}

static gboolean read_trace(CsLlmConfig *r, const cJSON *req, const char *file, const char *dir,
                           int max_tokens, GError **error)
{
  const char *path = "requests";
  static const char *const known[] = { "trace", "trace_format", "time_scale", "prefill_scale",
                                       "decode_scale", "limit", "min_prompt_tokens",
                                       "max_prompt_tokens", NULL };
  const char *rel = NULL, *format = "vidur";
  double ts = 1, ps = 1, ds = 1;
  int limit = 0, min_prompt = 1, max_prompt = G_MAXINT;
  if (!cs_json_check_keys(req, known, file, path, error) ||
      !cs_json_read_int(req, "min_prompt_tokens", FALSE, 1, G_MAXINT, &min_prompt, file, path,
                        error) ||
      !cs_json_read_int(req, "max_prompt_tokens", FALSE, min_prompt, G_MAXINT, &max_prompt, file,
                        path, error) ||
      !cs_json_read_string(req, "trace", TRUE, &rel, file, path, error) ||
      !cs_json_read_string(req, "trace_format", FALSE, &format, file, path, error) ||
      !cs_json_read_double(req, "time_scale", FALSE, 1e-9, 1e9, &ts, file, path, error) ||
      !cs_json_read_double(req, "prefill_scale", FALSE, 1e-9, 1e6, &ps, file, path, error) ||
      !cs_json_read_double(req, "decode_scale", FALSE, 1e-9, 1e6, &ds, file, path, error) ||
      !cs_json_read_int(req, "limit", FALSE, 1, G_MAXINT, &limit, file, path, error))
    return FALSE;
  gboolean azure = strcmp(format, "azure_llm") == 0;
  if (!azure && strcmp(format, "vidur") != 0)
    return cs_json_fail(error, file, "requests.trace_format", "expected \"vidur\" (Vidur's "
                        "processed traces) or \"azure_llm\" (the Azure LLM inference trace's "
                        "TIMESTAMP, ContextTokens, GeneratedTokens), got \"%s\"",
                        format);
  r->trace_path = g_path_is_absolute(rel) ? g_strdup(rel) : g_build_filename(dir, rel, NULL);
  GError *e = NULL;
  CsLlmRequestTrace *tr = azure ? azure_as_requests(r->trace_path, &e)
                                : cs_vidur_trace_load(r->trace_path, &e);
  if (tr == NULL) {
    cs_json_fail(error, file, "requests.trace", "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  size_t n = tr->n_records;
  r->trace_reqs = g_new0(CsLlmSimRequest, n);
  gboolean ok = TRUE;
  for (size_t i = 0; i < n && ok && (limit == 0 || r->n_trace < limit); i++) {
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
    r->trace_reqs[r->n_trace++] = (CsLlmSimRequest){ .id = (int64_t)i,
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

static gboolean read_fields(CsLlmConfig *r, const cJSON *root, const char *const *known,
                            const char *expected_format, const char *file, const char *dir,
                            GError **error);

/* The run's fields and the caller's extra ones are the known keys. */
static gboolean read_config(CsLlmConfig *r, const char *expected_format,
                            const char *const *extra_keys, const char *file, const char *dir,
                            GError **error)
{
  const cJSON *root = r->root;
  static const char *const run_keys[] = { "format", "version", "model", "device", "node",
                                          "tensor_parallel", "pipeline_parallel", "replicas",
                                          "scheduler", "router", "requests", "max_tokens",
                                          "memory_margin", "attention_outside_grid",
                                          "disaggregated", "timeseries_bin_s" };
  GPtrArray *keys = g_ptr_array_new();
  /* A deployment inside another document (a scenario's "llm" entries) has
   * no format and version of its own. */
  for (size_t i = expected_format != NULL ? 0 : 2; i < G_N_ELEMENTS(run_keys); i++)
    g_ptr_array_add(keys, (gpointer)run_keys[i]);
  for (size_t i = 0; extra_keys && extra_keys[i]; i++)
    g_ptr_array_add(keys, (gpointer)extra_keys[i]);
  g_ptr_array_add(keys, NULL);
  const char *const *known = (const char *const *)keys->pdata;
  gboolean ok = read_fields(r, root, known, expected_format, file, dir, error);
  g_ptr_array_free(keys, TRUE);
  return ok;
}

/* A scheduler object at PATH (NULL: every default): its policy and fields,
 * and the memory plan its block size gives (num_blocks from the plan unless
 * the object sets it). */
/* The scheduler named policy: a built-in one, or one of r's registry
 * (clustersim/llm.h), whose own fields of sc its parse reads (sknown are
 * the framework's). */
static gboolean resolve_sched(CsLlmConfig *r, const cJSON *sc, const char *path,
                              const char *policy, const char *const *sknown, CsLlmSchedConfig *s,
                              const char *file, GError **error)
{
  CsLlmSchedPolicy pol;
  if (cs_llm_sched_policy_parse(policy, &pol, NULL)) {
    cs_llm_sched_config_init(s, pol);
    return sc == NULL || cs_json_check_keys(sc, sknown, file, path, error);
  }
  void *user_data = NULL;
  const CsLlmSchedulerPolicy *custom = cs_registry_llm_scheduler(r->registry, policy, &user_data);
  if (custom == NULL) {
    char *names = cs_registry_llm_scheduler_names(r->registry);
    char *fp = g_strdup_printf("%s.policy", path);
    cs_json_fail(error, file, fp, "unknown LLM replica scheduler \"%s\" (known: %s)"
                 CS_PLUGIN_HINT, policy, names);
    g_free(fp);
    g_free(names);
    return FALSE;
  }
  cs_llm_sched_config_init(s, CS_LLM_SCHED_CUSTOM);
  int slot = s == &r->sim.decode_sched;
  void *params = NULL;
  if (!cs_policy_params_parse("LLM scheduler", custom->name, custom->parse, custom->free_params,
                              user_data, sc, sknown, file, path, &params, error))
    return FALSE;
  r->custom[slot] = custom;
  r->custom_params[slot] = params;
  s->custom = custom;
  s->custom_user_data = user_data;
  s->custom_params = params;
  return TRUE;
}

static gboolean read_sched(CsLlmConfig *r, const cJSON *sc, const char *path,
                           const CsLlmModel *m, const CsLlmDevice *d, CsLlmPlanConfig *pc,
                           int max_tokens, CsLlmSchedConfig *s, CsLlmPlan *plan,
                           const char *file, GError **error)
{
  GError *e = NULL;
  const char *policy = "sarathi"; /* Vidur's default replica scheduler */
  static const char *const sknown[] = { "policy", "batch_size_cap", "chunk_size", "block_size",
                                        "watermark_blocks_fraction", "max_tokens_in_batch",
                                        "num_blocks", NULL };
  if (sc != NULL && (!cs_json_expect_object(sc, file, path, error) ||
                     !cs_json_read_string(sc, "policy", FALSE, &policy, file, path, error)))
    return FALSE;
  if (!resolve_sched(r, sc, path, policy, sknown, s, file, error))
    return FALSE;
  s->max_tokens = max_tokens;
  int64_t num_blocks = 0;
  if (sc != NULL &&
      (!cs_json_read_int(sc, "batch_size_cap", FALSE, 1, 1 << 20, &s->batch_size_cap, file,
                         path, error) ||
       !cs_json_read_int(sc, "chunk_size", FALSE, 1, 1 << 20, &s->chunk_size, file, path,
                         error) ||
       !cs_json_read_int(sc, "block_size", FALSE, 1, 1 << 16, &s->block_size, file, path,
                         error) ||
       !cs_json_read_double(sc, "watermark_blocks_fraction", FALSE, 0, 0.999,
                            &s->watermark_blocks_fraction, file, path, error) ||
       !cs_json_read_int(sc, "max_tokens_in_batch", FALSE, 1, 1 << 20, &s->max_tokens_in_batch,
                         file, path, error) ||
       !cs_json_read_int64(sc, "num_blocks", FALSE, 1, INT64_C(1) << 40, &num_blocks, file,
                           path, error)))
    return FALSE;
  pc->block_size = s->block_size;
  if (!cs_llm_plan(m, d, pc, plan, &e))
    return cs_json_fail(error, file, "model", "%s", e->message), g_clear_error(&e), FALSE;
  s->num_blocks = num_blocks > 0 ? num_blocks : plan->num_blocks;
  s->max_batch_size = plan->max_batch_size;
  s->num_stages = pc->pp;
  /* vLLM's and Sarathi's batch limit is batch_size_cap / stages. */
  if (s->batch_size_cap < pc->pp && s->policy != CS_LLM_SCHED_ORCA &&
      s->policy != CS_LLM_SCHED_STATIC) {
    char *fp = g_strdup_printf("%s.batch_size_cap", path);
    cs_json_fail(error, file, fp, "expected >= pipeline_parallel (%d): a batch holds at most "
                 "batch_size_cap / pipeline_parallel requests, got %d",
                 pc->pp, s->batch_size_cap);
    g_free(fp);
    return FALSE;
  }
  return TRUE;
}

/* "disaggregated" (docs/llm.md, "Disaggregated prefill and decode"): the
 * two pools, their schedulers (each the top-level "scheduler" unless given,
 * a whole object then, not merged) and the KV transfer's curve: a network
 * curve by name or path (as the DNN scenarios' network.curve) or a line of
 * gbps and latency_ms. */
static gboolean read_disagg(CsLlmConfig *r, const cJSON *dg, const cJSON *root,
                            const CsLlmModel *m, const CsLlmDevice *d, CsLlmPlanConfig *pc,
                            int max_tokens, const char *file, const char *dir, GError **error)
{
  static const char *const dknown[] = { "prefill_replicas", "decode_replicas", "kv_transfer",
                                        "prefill_scheduler", "decode_scheduler", NULL };
  static const char *const kknown[] = { "network", "gbps", "latency_ms", NULL };
  int np = 0, nd = 0;
  if (!cs_json_expect_object(dg, file, "disaggregated", error) ||
      !cs_json_check_keys(dg, dknown, file, "disaggregated", error) ||
      !cs_json_read_int(dg, "prefill_replicas", TRUE, 1, 100000, &np, file, "disaggregated",
                        error) ||
      !cs_json_read_int(dg, "decode_replicas", TRUE, 1, 100000, &nd, file, "disaggregated",
                        error))
    return FALSE;
  if (cJSON_GetObjectItem(root, "replicas") != NULL)
    return cs_json_fail(error, file, "replicas", "expected no \"replicas\" beside "
                        "\"disaggregated\" (its prefill_replicas and decode_replicas say "
                        "how many)");
  if (np == 1 && cJSON_GetObjectItem(root, "router") != NULL)
    return cs_json_fail(error, file, "router", "expected no router with one prefill replica "
                        "(the router chooses among prefill replicas; the decode replica is "
                        "chosen by least outstanding requests, docs/llm.md)");
  const cJSON *top = cJSON_GetObjectItem(root, "scheduler");
  const cJSON *ps = cJSON_GetObjectItem(dg, "prefill_scheduler");
  const cJSON *ds = cJSON_GetObjectItem(dg, "decode_scheduler");
  CsLlmPlan plan;
  if (!read_sched(r, ps ? ps : top, ps ? "disaggregated.prefill_scheduler" : "scheduler", m,
                  d, pc, max_tokens, &r->sim.sched, &plan, file, error) ||
      !read_sched(r, ds ? ds : top, ds ? "disaggregated.decode_scheduler" : "scheduler", m, d, pc,
                  max_tokens, &r->sim.decode_sched, &plan, file, error))
    return FALSE;
  if (r->sim.decode_sched.policy == CS_LLM_SCHED_STATIC)
    return cs_json_fail(error, file, ds ? "disaggregated.decode_scheduler.policy"
                                        : "scheduler.policy",
                        "expected vllm, sarathi or orca for the decode pool, got static "
                        "(static batching admits whole prefills only)");
  r->sim.replicas = np;
  r->sim.decode_replicas = nd;
  r->sim.kv_bytes_per_token = plan.kv_bytes_per_token;
  const cJSON *kv = cJSON_GetObjectItem(dg, "kv_transfer");
  const char *kp = "disaggregated.kv_transfer";
  if (kv == NULL)
    return cs_json_fail(error, file, kp, "expected {\"network\": CURVE} or {\"gbps\": X, "
                        "\"latency_ms\": Y}, got nothing");
  const char *net = NULL;
  double gbps = -1, lat = -1;
  if (!cs_json_expect_object(kv, file, kp, error) ||
      !cs_json_check_keys(kv, kknown, file, kp, error) ||
      !cs_json_read_string(kv, "network", FALSE, &net, file, kp, error) ||
      !cs_json_read_double(kv, "gbps", FALSE, 1e-6, 1e9, &gbps, file, kp, error) ||
      !cs_json_read_double(kv, "latency_ms", FALSE, 0, 1e9, &lat, file, kp, error))
    return FALSE;
  if ((net != NULL) == (gbps > 0 || lat >= 0) || (net == NULL && (gbps < 0 || lat < 0)))
    return cs_json_fail(error, file, kp, "expected either \"network\" alone or both "
                        "\"gbps\" and \"latency_ms\"");
  GError *e = NULL;
  if (net != NULL) {
    char *p = g_path_is_absolute(net) ? g_strdup(net) : g_build_filename(dir, net, NULL);
    if (!g_file_test(p, G_FILE_TEST_IS_REGULAR)) {
      g_free(p);
      p = g_path_is_absolute(net) ? NULL : cs_data_file_find("profiles/network", net);
    }
    if (p == NULL)
      return cs_json_fail(error, file, "disaggregated.kv_transfer.network",
                          "network curve \"%s\" not found (a file, or a name in the data "
                          "directories' profiles/network/)", net);
    r->kv_curve = cs_network_curve_load_file(p, &e);
    g_free(p);
  } else {
    /* One segment: a x^1 + c with a in ms per byte. */
    char *json = g_strdup_printf("{\"format\": \"clustersim-network\", \"version\": 1, "
                                 "\"source\": \"%.17g Gb/s and %.17g ms\", "
                                 "\"segments\": [{\"a\": %.17g, \"b\": 1, \"c_ms\": %.17g}]}",
                                 gbps, lat, 8.0 / (gbps * 1e6), lat);
    r->kv_curve = cs_network_curve_load_data(json, kp, &e);
    g_free(json);
  }
  if (r->kv_curve == NULL)
    return cs_json_fail(error, file, kp, "%s", e->message), g_clear_error(&e), FALSE;
  r->sim.kv_curve = r->kv_curve;
  return TRUE;
}

static gboolean read_fields(CsLlmConfig *r, const cJSON *root, const char *const *known,
                            const char *expected_format, const char *file, const char *dir,
                            GError **error)
{
  const char *format = NULL, *model = NULL, *device = NULL, *node = NULL, *router = "round_robin";
  int version = 0, tp = 1, pp = 1, replicas = 1, max_tokens = 4096;
  double margin = 0.1, bin_s = 1.0;
  if (!cs_json_expect_object(root, file, "", error))
    return FALSE;
  if (expected_format != NULL) {
    if (!cs_json_read_string(root, "format", TRUE, &format, file, "", error))
      return FALSE;
    if (strcmp(format, expected_format) != 0)
      return cs_json_fail(error, file, "format", "expected \"%s\", got \"%s\"",
                          expected_format, format);
    if (!cs_json_read_int(root, "version", TRUE, 1, 1, &version, file, "", error))
      return FALSE;
  }
  if (!cs_json_check_keys(root, known, file, "", error) ||
      !cs_json_read_string(root, "model", TRUE, &model, file, "", error) ||
      !cs_json_read_string(root, "device", TRUE, &device, file, "", error) ||
      !cs_json_read_string(root, "node", TRUE, &node, file, "", error) ||
      !cs_json_read_int(root, "tensor_parallel", FALSE, 1, 64, &tp, file, "", error) ||
      !cs_json_read_int(root, "pipeline_parallel", FALSE, 1, 64, &pp, file, "", error) ||
      !cs_json_read_int(root, "replicas", FALSE, 1, 100000, &replicas, file, "", error) ||
      !cs_json_read_string(root, "router", FALSE, &router, file, "", error) ||
      !cs_json_read_int(root, "max_tokens", FALSE, 1, 1 << 20, &max_tokens, file, "", error) ||
      !cs_json_read_double(root, "memory_margin", FALSE, 0, 0.999, &margin, file, "", error) ||
      !cs_json_read_double(root, "timeseries_bin_s", FALSE, 1e-3, 1e6, &bin_s, file, "", error))
    return FALSE;
  r->timeseries_bin_ns = llround(bin_s * 1e9);
  if (pp > 1 && cJSON_GetObjectItem(root, "disaggregated") != NULL)
    return cs_json_fail(error, file, "pipeline_parallel", "expected 1 with \"disaggregated\": "
                        "pipeline stages are not simulated with disaggregated serving, got %d",
                        pp);
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

  /* Vidur asserts that a stage holds whole layers. */
  if (m->num_layers % pp != 0)
    return cs_json_fail(error, file, "pipeline_parallel", "expected a divisor of %s's "
                        "num_layers (%d), got %d", m->name, m->num_layers, pp);
  /* The memory plan decides the KV blocks (Vidur's memory planner). */
  CsLlmPlanConfig pc;
  cs_llm_plan_config_init(&pc);
  pc.tp = tp;
  pc.pp = pp;
  pc.max_tokens = max_tokens;
  pc.memory_margin = margin;
  CsLlmPlan plan;
  if (!read_sched(r, cJSON_GetObjectItem(root, "scheduler"), "scheduler", m, d, &pc,
                  max_tokens, &r->sim.sched, &plan, file, error))
    return FALSE;
  r->sim.replicas = replicas;
  const cJSON *dg = cJSON_GetObjectItem(root, "disaggregated");
  if (dg != NULL && !read_disagg(r, dg, root, m, d, &pc, max_tokens, file, dir, error))
    return FALSE;
  r->device = d;
  r->sim.device_flops_per_s = d->fp16_tflops * 1e12;
  r->tensor_parallel = tp;
  r->pipeline_parallel = pp;
  r->max_tokens = max_tokens;

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
  /* A point off the attention grid: refused unless the config asks for the
   * grid's edge (llm_attention.h), as Vidur's forests answer there. */
  const char *outside = "refuse";
  if (!cs_json_read_string(root, "attention_outside_grid", FALSE, &outside, file, "", error))
    return FALSE;
  if (!cs_llm_attention_outside_parse(outside, &r->attention_outside, &e))
    return cs_json_fail(error, file, "attention_outside_grid", "%s", e->message),
           g_clear_error(&e), FALSE;
  cs_llm_attention_set_outside(r->att, r->attention_outside);
  if (tp > 1 || pp > 1) {
    rel = g_strdup_printf("collectives/%s.json", node);
    r->coll = load_data(rel, (gpointer (*)(const char *, GError **))cs_llm_collectives_load, file,
                        "node", error);
    g_free(rel);
    if (r->coll == NULL)
      return FALSE;
  }
  r->sim.exec = (CsLlmExecConfig){ .model = m, .ops = r->ops, .collectives = r->coll,
                                   .devices_per_node = nd->devices_per_node, .tp = tp, .pp = pp,
                                   .attention = r->att };
  /* The replica's tables, checked here so that a bad degree is the
   * config's error (the shipped attention sample is TP1 only): the field
   * is pipeline_parallel when the same replica at PP1 would do. */
  CsLlmExec *x = cs_llm_exec_new(&r->sim.exec, &e);
  if (x == NULL) {
    CsLlmExecConfig one = r->sim.exec;
    one.pp = 1;
    CsLlmExec *x1 = pp > 1 ? cs_llm_exec_new(&one, NULL) : NULL;
    const char *field = x1 != NULL ? "pipeline_parallel" : "tensor_parallel";
    cs_llm_exec_free(x1);
    return cs_json_fail(error, file, field, "%s", e->message), g_clear_error(&e), FALSE;
  }
  cs_llm_exec_free(x);
  const cJSON *req = cJSON_GetObjectItem(root, "requests");
  if (req == NULL)
    return cs_json_fail(error, file, "requests", "expected {\"trace\": PATH} or "
                        "{\"synthetic\": {...}}, got nothing");
  if (!cs_json_expect_object(req, file, "requests", error))
    return FALSE;
  const cJSON *syn = cJSON_GetObjectItem(req, "synthetic");
  if (syn != NULL && cJSON_GetArraySize(req) == 1)
    return read_synthetic(r, syn, file, dir, max_tokens, error);
  if (cJSON_GetObjectItem(req, "trace") != NULL && syn == NULL)
    return read_trace(r, req, file, dir, max_tokens, error);
  return cs_json_fail(error, file, "requests", "expected exactly one of {\"trace\": PATH, ...} "
                      "or {\"synthetic\": {...}}");
fail_e_router:
  cs_json_fail(error, file, "router", "%s", e->message);
  g_error_free(e);
  return FALSE;
}

CsLlmConfig *cs_llm_config_parse(cJSON *root, const char *format,
                                 const char *const *extra_keys, const char *label,
                                 const char *dir, GError **error)
{
  return cs_llm_config_parse_in(root, format, extra_keys, label, dir, NULL, error);
}

CsLlmConfig *cs_llm_config_parse_in(cJSON *root, const char *format,
                                    const char *const *extra_keys, const char *label,
                                    const char *dir, const CsRegistry *registry, GError **error)
{
  CsLlmConfig *r = g_new0(CsLlmConfig, 1);
  r->registry = registry;
  r->root = root;
  r->file = g_strdup(label);
  /* A search draws its own rates: its requests need none. */
  r->rate_free = format != NULL && strcmp(format, "clustersim-llm-run") != 0;
  if (!read_config(r, format, extra_keys, label, dir, error)) {
    cs_llm_config_free(r);
    return NULL;
  }
  return r;
}

CsLlmConfig *cs_llm_config_load(const char *file, const CsRegistry *registry, GError **error)
{
  cJSON *root = cs_json_load_file(file, error);
  if (root == NULL)
    return NULL;
  char *dir = g_path_get_dirname(file);
  CsLlmConfig *r =
      cs_llm_config_parse_in(root, "clustersim-llm-run", NULL, file, dir, registry, error);
  g_free(dir);
  return r;
}

void cs_llm_config_free(CsLlmConfig *r)
{
  if (r == NULL)
    return;
  for (int i = 0; i < 2; i++)
    if (r->custom[i] != NULL && r->custom[i]->free_params != NULL)
      r->custom[i]->free_params(r->custom_params[i]);
  cJSON_Delete(r->root);
  cs_network_curve_free(r->kv_curve);
  cs_llm_models_free(r->models);
  cs_llm_ops_free(r->ops);
  cs_llm_attention_free(r->att);
  cs_llm_collectives_free(r->coll);
  g_free(r->trace_reqs);
  g_free(r->trace_path);
  g_free(r->len_prompt);
  g_free(r->len_output);
  g_free(r->lengths_path);
  g_free(r->file);
  g_free(r);
}

/* One stream a quantity (llm_config.h), so that a change of rate moves
 * the arrivals and leaves the lengths as they were. */
static void stream(CsRngState *st, uint64_t seed, const char *name)
{
  cs_rng_state_seed(st, cs_rng_stream_seed(seed, name));
}

static int uniform_int(CsRngState *st, const int lo_hi[2])
{
  double u = cs_rng_to_unit(cs_rng_next(st));
  int v = lo_hi[0] + (int)floor(u * ((double)lo_hi[1] - lo_hi[0] + 1));
  return v > lo_hi[1] ? lo_hi[1] : v; /* u < 1, so never; kept against rounding */
}

CsLlmSimRequest *cs_llm_config_requests(const CsLlmConfig *cfg, double qps, int *n,
                                        GError **error)
{
  if (!cfg->synthetic) {
    if (qps > 0) {
      cs_json_fail(error, cfg->file, "requests", "expected {\"synthetic\": {\"arrival\": "
                   "\"poisson\", ...}}: a trace's arrivals have no rate to change");
      return NULL;
    }
    *n = cfg->n_trace;
    return g_memdup2(cfg->trace_reqs, sizeof *cfg->trace_reqs * (size_t)(cfg->n_trace ? cfg->n_trace : 1));
  }
  if (qps > 0 && !cfg->poisson) {
    cs_json_fail(error, cfg->file, "requests.synthetic.arrival", "expected \"poisson\": "
                 "\"static\" arrivals have no rate to change");
    return NULL;
  }
  if (qps <= 0)
    qps = cfg->qps;
  CsRngState arr, pr, out;
  stream(&arr, cfg->seed, "llm/arrivals");
  stream(&pr, cfg->seed, "llm/prompt_tokens");
  stream(&out, cfg->seed, "llm/output_tokens");
  CsLlmSimRequest *reqs = g_new0(CsLlmSimRequest, cfg->n);
  double t = 0;
  for (int i = 0; i < cfg->n; i++) {
    /* Vidur's generator caps an interval at 3 / qps (an interval more than
     * three means long is drawn as three means). */
    if (cfg->poisson && i > 0)
      t += fmin(-log(1 - cs_rng_to_unit(cs_rng_next(&arr))) / qps, 3 / qps);
    if (t * 1e9 > 9e18) { /* llround would overflow int64 ns */
      g_free(reqs);
      cs_json_fail(error, cfg->file, "requests.synthetic", "at %.6g requests/s the arrivals "
                   "of %d requests pass 9e9 s", qps, cfg->n);
      return NULL;
    }
    /* With lengths from a trace, request i takes its row i (llm_lengths.h). */
    reqs[i] = (CsLlmSimRequest){ .id = i, .arrival_ns = llround(t * 1e9),
                                 .prompt_tokens = cfg->len_prompt ? cfg->len_prompt[i]
                                                                  : uniform_int(&pr, cfg->prompt),
                                 .output_tokens = cfg->len_output ? cfg->len_output[i]
                                                                  : uniform_int(&out, cfg->output) };
  }
  *n = cfg->n;
  return reqs;
}
