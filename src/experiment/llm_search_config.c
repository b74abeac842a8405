/* A capacity search's config read and checked (llm_search.h,
 * cs_llm_search_spec_load): the SLO, the search's parameters and the
 * deployments, each a run's config with its own fields over the base's. */
#include <string.h>

#include "common/json_input.h"
#include "llm_search.h"
#include "llm_search_grid.h"

#define FORMAT "clustersim-llm-search"

gboolean cs_llm_slo_read(const cJSON *obj, const char *file, const char *path, CsLlmSlo *out,
                         GError **error)
{
  static const char *const known[] = { "ttft_ms", "tbt_ms", "scheduling_delay_s", NULL };
  static const char *const bknown[] = { "quantile", "max", NULL };
  memset(out, 0, sizeof *out);
  if (obj == NULL)
    return cs_json_fail(error, file, path, "expected {\"ttft_ms\": {\"quantile\": Q, \"max\": "
                        "X}, \"tbt_ms\": ..., \"scheduling_delay_s\": ...} (at least one), got "
                        "nothing");
  if (!cs_json_expect_object(obj, file, path, error) ||
      !cs_json_check_keys(obj, known, file, path, error))
    return FALSE;
  int n_on = 0;
  for (int m = 0; m < CS_LLM_SLO_N; m++) {
    const char *key = cs_llm_slo_name((CsLlmSloMetric)m);
    const cJSON *b = cJSON_GetObjectItem(obj, key);
    if (b == NULL)
      continue;
    char *bp = cs_json_path_key(path, key);
    CsLlmSloBound *x = &out->bound[m];
    gboolean ok = cs_json_expect_object(b, file, bp, error) &&
                  cs_json_check_keys(b, bknown, file, bp, error) &&
                  cs_json_read_double(b, "quantile", TRUE, 0, 1, &x->quantile, file, bp, error) &&
                  cs_json_read_double(b, "max", TRUE, 1e-12, 1e12, &x->max, file, bp, error);
    g_free(bp);
    if (!ok)
      return FALSE;
    x->on = TRUE;
    n_on++;
  }
  if (n_on == 0)
    return cs_json_fail(error, file, path, "expected at least one of ttft_ms, tbt_ms, "
                        "scheduling_delay_s");
  return TRUE;
}

/* Requests a search can rebuild at any rate: synthetic Poisson ones, or
 * with trace_qps a trace whose arrivals it scales (llm_search.h); the
 * fewest replicas for target_qps are only scanned on synthetic ones. */
static gboolean check_requests(const CsLlmConfig *cfg, const CsLlmSearchSpec *spec,
                               GError **error)
{
  if (spec->params.trace_qps > 0) {
    if (cfg->synthetic)
      return cs_json_fail(error, cfg->file, "search.trace_qps", "expected none with "
                          "requests.synthetic (it is the rate of requests.trace's arrivals)");
    if (spec->target_qps > 0)
      return cs_json_fail(error, cfg->file, "search.trace_qps", "expected no target_qps "
                          "with it: the fewest replicas are scanned on synthetic requests only");
    return TRUE;
  }
  if (!cfg->synthetic)
    return cs_json_fail(error, cfg->file, "requests", "expected {\"synthetic\": {...}} with "
                        "Poisson arrivals (a search draws the arrivals at each probe's rate), "
                        "or a trace with search.trace_qps, the rate of its arrivals");
  if (!cfg->poisson)
    return cs_json_fail(error, cfg->file, "requests.synthetic.arrival", "expected \"poisson\": "
                        "a search draws the arrivals at each probe's rate");
  return TRUE;
}

/* With target_qps a disaggregated deployment's pools are sized with
 * prefill + decode <= max_replicas (cs_llm_fewest_pools): at least one of
 * each. */
static gboolean check_pools_bound(const CsLlmConfig *c, int max_replicas, const char *file,
                                  const char *path, GError **error)
{
  if (c->sim.decode_replicas > 0 && max_replicas < 2)
    return cs_json_fail(error, file, path, "expected at least 2 with \"disaggregated\" and "
                        "target_qps (it bounds prefill + decode replicas, one of each at "
                        "least), got %d", max_replicas);
  return TRUE;
}

static char *default_name(const CsLlmConfig *c)
{
  GString *s = g_string_new(NULL);
  g_string_printf(s, "%s TP%d %s", c->device->name, c->tensor_parallel,
                  cs_llm_sched_config_name(&c->sim.sched));
  if (c->sim.sched.policy == CS_LLM_SCHED_SARATHI)
    g_string_append_printf(s, " chunk %d", c->sim.sched.chunk_size);
  g_string_append_printf(s, " cap %d", c->sim.sched.batch_size_cap);
  if (c->sim.decode_replicas > 0)
    g_string_append_printf(s, " %dP+%dD", c->sim.replicas, c->sim.decode_replicas);
  return g_string_free(s, FALSE);
}

/* The deployment d at path (its messages "FILE: PATH: ..."): the base
 * document with its fields over the base's. */
static gboolean read_deployment(const CsLlmSearchSpec *spec, const cJSON *d, const char *path,
                                int max_replicas, const char *file, const char *dir,
                                CsLlmDeployment *out, GError **error)
{
  static const char *const known[] = { "name", "model", "device", "node", "tensor_parallel",
                                       "pipeline_parallel", "replicas", "router", "scheduler",
                                       "max_tokens", "memory_margin", "attention_outside_grid",
                                       "max_replicas", NULL };
  char *label = g_strdup_printf("%s: %s", file, path);
  const char *name = NULL;
  gboolean ok = FALSE;
  out->max_replicas = max_replicas;
  if (!cs_json_expect_object(d, file, path, error) ||
      !cs_json_check_keys(d, known, file, path, error) ||
      !cs_json_read_string(d, "name", FALSE, &name, file, path, error) ||
      !cs_json_read_int(d, "max_replicas", FALSE, 1, 100000, &out->max_replicas, file, path,
                        error))
    goto out;
  cJSON *merged = cJSON_Duplicate(spec->base->root, TRUE);
  cJSON_DeleteItemFromObject(merged, "search");
  for (const cJSON *f = d->child; f; f = f->next) {
    if (strcmp(f->string, "name") == 0 || strcmp(f->string, "max_replicas") == 0)
      continue;
    cJSON *base_sc = cJSON_GetObjectItem(merged, "scheduler");
    if (strcmp(f->string, "scheduler") == 0 && cJSON_IsObject(f) && cJSON_IsObject(base_sc)) {
      for (const cJSON *g = f->child; g; g = g->next) {
        cJSON_DeleteItemFromObject(base_sc, g->string);
        cJSON_AddItemToObject(base_sc, g->string, cJSON_Duplicate(g, TRUE));
      }
      continue;
    }
    cJSON_DeleteItemFromObject(merged, f->string);
    cJSON_AddItemToObject(merged, f->string, cJSON_Duplicate(f, TRUE));
  }
  out->cfg = cs_llm_config_parse_in(merged, FORMAT, NULL, label, dir, spec->base->registry, error);
  if (out->cfg == NULL)
    goto out;
  out->name = name ? g_strdup(name) : default_name(out->cfg);
  ok = TRUE;
out:
  g_free(label);
  return ok;
}

/* "grid" (llm_search_grid.h): its combinations read as deployments; one
 * the run reader refuses is skipped when every one of its options loads in
 * another, and refuses the config when one of them loads in none. */
static gboolean read_grid(CsLlmSearchSpec *spec, const cJSON *grid, int max_replicas,
                          const char *file, const char *dir, GError **error)
{
  CsLlmGrid *g = cs_llm_grid_expand(grid, file, error);
  if (g == NULL)
    return FALSE;
  char **why = g_new0(char *, g->n_points); /* NULL: loaded */
  spec->deployments = g_new0(CsLlmDeployment, g->n_points);
  spec->grid_combinations = g->n_points;
  gboolean ok = TRUE;
  for (int i = 0; i < g->n_points; i++) {
    const CsLlmGridPoint *p = &g->points[i];
    CsLlmDeployment *d = &spec->deployments[spec->n_deployments];
    char *path = g_strdup_printf("search.grid (%s)", p->name);
    GError *e = NULL;
    if (read_deployment(spec, p->deployment, path, max_replicas, file, dir, d, &e)) {
      g_free(d->name);
      d->name = g_strdup(p->name);
      d->options = cJSON_Duplicate(p->options, TRUE);
      spec->n_deployments++;
    } else {
      /* The reader's message after "FILE: search.grid (NAME): ". */
      size_t pre = strlen(file) + strlen(path) + 4;
      why[i] = g_strdup(strlen(e->message) > pre ? e->message + pre : e->message);
      g_error_free(e);
      cs_llm_config_free(d->cfg);
      g_free(d->name);
      memset(d, 0, sizeof *d);
    }
    g_free(path);
  }
  /* An option that loads in no combination is the config's error. */
  for (int a = 0; a < g->n_axes && ok; a++)
    for (int j = 0; j < g->n_options[a] && ok; j++) {
      int first = -1;
      gboolean loads = FALSE;
      for (int i = 0; i < g->n_points && !loads; i++)
        if (g->points[i].choice[a] == j) {
          loads = why[i] == NULL;
          first = first < 0 ? i : first;
        }
      if (loads)
        continue;
      char *ap = cs_json_path_key("search.grid", g->axis[a]);
      char *op = cs_json_path_index(ap, j);
      char *v = cJSON_PrintUnformatted(cJSON_GetArrayItem(g->options[a], j));
      ok = cs_json_fail(error, file, op, "expected an option some combination can run, got "
                        "%s, refused in every one, first (%s): %s", v, g->points[first].name,
                        why[first]);
      cJSON_free(v);
      g_free(op);
      g_free(ap);
    }
  for (int i = 0; i < g->n_points && ok; i++)
    if (why[i] != NULL) {
      spec->skipped = g_renew(CsLlmSkipped, spec->skipped, spec->n_skipped + 1);
      spec->skipped[spec->n_skipped++] = (CsLlmSkipped){ .name = g_strdup(g->points[i].name),
                                                         .reason = why[i] };
      why[i] = NULL;
    }
  for (int i = 0; i < g->n_points; i++)
    g_free(why[i]);
  g_free(why);
  cs_llm_grid_free(g);
  return ok;
}

static gboolean read_search(CsLlmSearchSpec *spec, const char *file, const char *dir,
                            GError **error)
{
  static const char *const known[] = { "slo", "start_qps", "granularity_pct", "max_probes",
                                       "max_replicas", "target_qps", "trace_qps", "deployments",
                                       "grid", NULL };
  const cJSON *s = cJSON_GetObjectItem(spec->base->root, "search");
  int max_replicas = 8;
  if (s == NULL)
    return cs_json_fail(error, file, "search", "expected {\"slo\": {...}, \"start_qps\": N, "
                        "...}, got nothing");
  CsLlmSearchParams *p = &spec->params;
  cs_llm_search_params_init(p);
  if (!cs_json_expect_object(s, file, "search", error) ||
      !cs_json_check_keys(s, known, file, "search", error) ||
      !cs_llm_slo_read(cJSON_GetObjectItem(s, "slo"), file, "search.slo", &spec->slo, error) ||
      !cs_json_read_double(s, "start_qps", TRUE, 1e-6, 1e6, &p->start_qps, file, "search",
                           error) ||
      !cs_json_read_double(s, "granularity_pct", FALSE, 1e-3, 100, &p->granularity_pct, file,
                           "search", error) ||
      !cs_json_read_int(s, "max_probes", FALSE, 1, 1000, &p->max_probes, file, "search",
                        error) ||
      !cs_json_read_int(s, "max_replicas", FALSE, 1, 100000, &max_replicas, file, "search",
                        error) ||
      !cs_json_read_double(s, "target_qps", FALSE, 1e-6, 1e6, &spec->target_qps, file,
                           "search", error) ||
      !cs_json_read_double(s, "trace_qps", FALSE, 1e-6, 1e6, &p->trace_qps, file, "search",
                           error))
    return FALSE;
  /* The requests are the base's in every deployment: checked once, there. */
  if (!check_requests(spec->base, spec, error))
    return FALSE;
  const cJSON *ds = cJSON_GetObjectItem(s, "deployments");
  const cJSON *grid = cJSON_GetObjectItem(s, "grid");
  if (grid != NULL && ds != NULL)
    return cs_json_fail(error, file, "search.grid", "expected no \"deployments\" beside it "
                        "(the deployments are the grid's combinations; a list of deployments "
                        "is a bundle axis: \"NAME\": [{FIELDS}, ...])");
  if (grid != NULL) {
    if (!read_grid(spec, grid, max_replicas, file, dir, error))
      return FALSE;
  } else if (ds == NULL) {
    spec->n_deployments = 1;
    spec->deployments = g_new0(CsLlmDeployment, 1);
    spec->deployments[0].name = default_name(spec->base);
    spec->deployments[0].max_replicas = max_replicas;
    /* cfg NULL: the base itself (not freed twice) */
  } else {
    if (!cJSON_IsArray(ds) || cJSON_GetArraySize(ds) < 1)
      return cs_json_fail(error, file, "search.deployments", "expected a non-empty array of "
                          "objects, got %s", cJSON_IsArray(ds) ? "an empty array"
                                                               : cs_json_type_name(ds));
    spec->n_deployments = cJSON_GetArraySize(ds);
    spec->deployments = g_new0(CsLlmDeployment, spec->n_deployments);
    for (int i = 0; i < spec->n_deployments; i++) {
      char *path = g_strdup_printf("search.deployments[%d]", i);
      gboolean ok = read_deployment(spec, cJSON_GetArrayItem(ds, i), path, max_replicas, file,
                                    dir, &spec->deployments[i], error);
      g_free(path);
      if (!ok)
        return FALSE;
    }
  }
  for (int i = 0; spec->target_qps > 0 && i < spec->n_deployments; i++) {
    const CsLlmConfig *c = spec->deployments[i].cfg ? spec->deployments[i].cfg : spec->base;
    double cost;
    if (!cs_llm_deployment_cost(c, 1, &cost, error))
      return FALSE;
    const cJSON *own = ds ? cJSON_GetObjectItem(cJSON_GetArrayItem(ds, i), "max_replicas") : NULL;
    const CsLlmDeployment *dp = &spec->deployments[i];
    char *mp = own ? g_strdup_printf("search.deployments[%d].max_replicas", i)
               : dp->options && cJSON_GetObjectItem(dp->options, "max_replicas")
                   ? g_strdup_printf("search.grid (%s): max_replicas", dp->name)
                   : g_strdup("search.max_replicas");
    gboolean ok = check_pools_bound(c, spec->deployments[i].max_replicas, file, mp, error);
    g_free(mp);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

CsLlmSearchSpec *cs_llm_search_spec_load(const char *file, const CsRegistry *registry,
                                         GError **error)
{
  cJSON *root = cs_json_load_file(file, error);
  if (root == NULL)
    return NULL;
  static const char *const extra[] = { "search", NULL };
  char *dir = g_path_get_dirname(file);
  CsLlmSearchSpec *spec = g_new0(CsLlmSearchSpec, 1);
  spec->base = cs_llm_config_parse_in(root, FORMAT, extra, file, dir, registry, error);
  gboolean ok = spec->base != NULL && read_search(spec, file, dir, error);
  g_free(dir);
  if (!ok) {
    cs_llm_search_spec_free(spec);
    return NULL;
  }
  for (int i = 0; i < spec->n_deployments; i++)
    if (spec->deployments[i].cfg == NULL)
      spec->deployments[i].cfg = spec->base;
  return spec;
}

void cs_llm_search_spec_free(CsLlmSearchSpec *s)
{
  if (s == NULL)
    return;
  for (int i = 0; i < s->n_deployments; i++) {
    if (s->deployments[i].cfg != s->base)
      cs_llm_config_free(s->deployments[i].cfg);
    g_free(s->deployments[i].name);
    cJSON_Delete(s->deployments[i].options);
  }
  for (int i = 0; i < s->n_skipped; i++) {
    g_free(s->skipped[i].name);
    g_free(s->skipped[i].reason);
  }
  g_free(s->skipped);
  g_free(s->deployments);
  cs_llm_config_free(s->base);
  g_free(s);
}
