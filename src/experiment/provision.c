/* Provisioning search over mixes of GPU types; see provision.h. */
#include "provision.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "policies/dispatch/dispatch.h"
#include "run.h"
#include "scenario/scenario.h"
#include "search.h"

typedef struct {
  CsScenario *sc;
  const CsProvisionOptions *opt;
  const CsRunOptions *run_opt;
  CsProvisionProbeCallback on_probe;
  void *user_data;
  CsProvisionResult *out;
  cJSON *base_cluster;   /* the scenario's cluster without its GPUs, nodes and prices */
  int cap[CS_PROVISION_MAX_TYPES]; /* per type: min(max_per_type, max_gpus) */
  GHashTable *seen;      /* "n0,n1,..." -> GINT_TO_POINTER(1 + pass): probes run */
  GArray *history;       /* CsProvisionProbe, in probe order */
} Search;

static int total(const Search *s, const int *counts)
{
  int n = 0;
  for (int t = 0; t < s->opt->n_types; t++)
    n += counts[t];
  return n;
}

static double mix_price(const Search *s, const int *counts)
{
  double sum = 0.0;
  for (int t = 0; t < s->opt->n_types; t++)
    if (counts[t] > 0)
      sum += counts[t] * s->out->price[t]; /* NAN stays NAN: the price is unknown */
  return sum;
}

static char *mix_key(const Search *s, const int *counts)
{
  GString *k = g_string_new(NULL);
  for (int t = 0; t < s->opt->n_types; t++)
    g_string_append_printf(k, "%s%d", t ? "," : "", counts[t]);
  return g_string_free(k, FALSE);
}

static char *mix_text(const Search *s, const int *counts)
{
  GString *k = g_string_new(NULL);
  for (int t = 0; t < s->opt->n_types; t++)
    g_string_append_printf(k, "%s%d %s", t ? " + " : "", counts[t], s->opt->types[t]);
  return g_string_free(k, FALSE);
}

/* A passing mix and a failing one it dominates (no fewer GPUs of any type)
 * contradict "more GPUs never hurt": say so, naming both probes. */
static void check_monotone(Search *s, const CsProvisionProbe *p)
{
  for (guint i = 0; i < s->history->len; i++) {
    const CsProvisionProbe *q = &g_array_index(s->history, CsProvisionProbe, i);
    if (p->pass == q->pass)
      continue;
    const CsProvisionProbe *hi = p->pass ? q : p, *lo = p->pass ? p : q; /* hi fails */
    gboolean dominates = TRUE;
    for (int t = 0; t < s->opt->n_types; t++)
      dominates &= hi->counts[t] >= lo->counts[t];
    if (!dominates)
      continue;
    char *a = mix_text(s, hi->counts), *b = mix_text(s, lo->counts);
    g_ptr_array_add(s->out->violations,
                    g_strdup_printf("probe %d (%s) fails although probe %d (%s, no more GPUs of "
                                    "any type) passes: more GPUs hurt here, so the search's "
                                    "answer may not be the least",
                                    hi->index, a, lo->index, b));
    g_free(a);
    g_free(b);
  }
}

/* Simulates the mix (once: later asks are answered from the first run).
 * Sets *pass; a mix without GPUs fails without a run. */
static gboolean probe(Search *s, const int *counts, gboolean *pass, GError **error)
{
  if (total(s, counts) == 0) {
    *pass = FALSE;
    return TRUE;
  }
  char *key = mix_key(s, counts);
  gpointer known = g_hash_table_lookup(s->seen, key);
  if (known) {
    *pass = GPOINTER_TO_INT(known) - 1;
    g_free(key);
    return TRUE;
  }
  cJSON *cl = cJSON_Duplicate(s->base_cluster, TRUE);
  cJSON *nodes = cJSON_AddArrayToObject(cl, "nodes");
  for (int t = 0; t < s->opt->n_types; t++) {
    if (counts[t] == 0)
      continue;
    cJSON *n = cJSON_CreateObject();
    cJSON_AddNumberToObject(n, "gpus", counts[t]);
    cJSON_AddStringToObject(n, "gpu_type", s->opt->types[t]);
    if (!isnan(s->out->price[t])) {
      cJSON_AddNumberToObject(n, "price_per_hour", s->out->price[t]);
      cJSON_AddStringToObject(n, "price_source", s->out->price_source[t]);
    }
    cJSON_AddItemToArray(nodes, n);
  }
  char *text = cs_json_print_exact(cl);
  cJSON_Delete(cl);
  gboolean ok = cs_scenario_set_unrecorded(s->sc, "cluster", text, error);
  g_free(text);
  CsResults *r = ok ? cs_run(s->sc, s->run_opt, error) : NULL;
  if (!r) {
    g_free(key);
    return FALSE;
  }
  CsProvisionProbe p = { .index = s->out->probes++, .gpus = total(s, counts),
                         .price_per_hour = mix_price(s, counts),
                         .goodput_rps = cs_results_total(r)->goodput_rps };
  memcpy(p.counts, counts, sizeof p.counts);
  p.pass = cs_goodput_probe_passes(r, &s->opt->criterion, &p.worst_bad_rate, &p.measured_all);
  cs_results_free(r);
  check_monotone(s, &p);
  g_array_append_val(s->history, p);
  g_hash_table_insert(s->seen, key, GINT_TO_POINTER(1 + p.pass));
  if (s->on_probe)
    s->on_probe(&p, s->user_data);
  *pass = p.pass;
  return TRUE;
}

/* The fewest GPUs of the last type (at most hi) that pass with counts of the
 * others: *n, or -1 when even hi does not. Bisection, by the assumption. */
static gboolean least_of_last(Search *s, int *counts, int hi, int *n, GError **error)
{
  int last = s->opt->n_types - 1;
  *n = -1;
  if (hi < 0)
    return TRUE;
  gboolean pass;
  counts[last] = hi;
  if (!probe(s, counts, &pass, error))
    return FALSE;
  if (!pass)
    return TRUE;
  int lo = -1; /* fails (or below the range) */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    counts[last] = mid;
    if (!probe(s, counts, &pass, error))
      return FALSE;
    if (pass)
      hi = mid;
    else
      lo = mid;
  }
  counts[last] = hi;
  *n = hi;
  return TRUE;
}

static void add_frontier(Search *s, const int *counts)
{
  CsProvisionMix m = { .gpus = total(s, counts), .price_per_hour = mix_price(s, counts) };
  memcpy(m.counts, counts, sizeof m.counts);
  g_array_append_val(s->out->frontier, m);
}

/* Every count of type t (and recursively of the types after it but the
 * last); the last type's least count for each. */
static gboolean walk(Search *s, int t, int *counts, int used, GError **error)
{
  int last = s->opt->n_types - 1;
  if (t == last) {
    int n;
    if (!least_of_last(s, counts, MIN(s->cap[last], s->opt->max_gpus - used), &n, error))
      return FALSE;
    if (n >= 0)
      add_frontier(s, counts);
    return TRUE;
  }
  /* With one more GPU of type t the last type never needs more (the
   * assumption): the previous answer bounds the next bisection. */
  int bound = s->cap[last];
  for (int a = 0; a <= MIN(s->cap[t], s->opt->max_gpus - used); a++) {
    counts[t] = a;
    for (int u = t + 1; u < s->opt->n_types; u++)
      counts[u] = 0;
    if (t + 1 < last) {
      if (!walk(s, t + 1, counts, used + a, error))
        return FALSE;
      continue;
    }
    int n;
    if (!least_of_last(s, counts, MIN(bound, s->opt->max_gpus - used - a), &n, error))
      return FALSE;
    if (n < 0)
      continue;
    add_frontier(s, counts);
    bound = n;
    if (n == 0)
      break; /* more of type t with none of the last: more GPUs, no cheaper */
  }
  counts[t] = 0;
  return TRUE;
}

static void pick_answers(CsProvisionResult *out)
{
  for (guint i = 0; i < out->frontier->len; i++) {
    const CsProvisionMix *m = &g_array_index(out->frontier, CsProvisionMix, i);
    /* NAN compares false, so an unknown price never wins a tie on price. */
    if (!out->found || m->gpus < out->fewest.gpus ||
        (m->gpus == out->fewest.gpus && m->price_per_hour < out->fewest.price_per_hour)) {
      out->fewest = *m;
      out->found = TRUE;
    }
    if (isnan(m->price_per_hour))
      continue;
    if (!out->cheapest_found || m->price_per_hour < out->cheapest.price_per_hour ||
        (m->price_per_hour == out->cheapest.price_per_hour && m->gpus < out->cheapest.gpus)) {
      out->cheapest = *m;
      out->cheapest_found = TRUE;
    }
  }
}

/* The options, the types against the scenario's profiles, and what the
 * search cannot vary; fills the prices. */
static gboolean check_input(CsScenario *sc, const CsProvisionOptions *opt,
                            const CsRunOptions *run_opt, CsProvisionResult *out, GError **error)
{
  if (opt->n_types < 1 || opt->n_types > CS_PROVISION_MAX_TYPES || opt->max_gpus < 1) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "provision: expected 1 to %d GPU types and a bound of at least 1 GPU",
                CS_PROVISION_MAX_TYPES);
    return FALSE;
  }
  CsConfig *cfg = cs_experiment_compile(sc, error);
  if (!cfg)
    return FALSE;
  gboolean ok = TRUE;
  if (cfg->n_llm > 0)
    ok = cs_json_fail(error, cs_scenario_name(sc), "llm",
                      "provision sizes the DNN models' cluster; an LLM deployment brings GPUs "
                      "of its own: remove \"llm\", or size it with clustersim llm search");
  else if (cfg->has_mig)
    ok = cs_json_fail(error, cs_scenario_name(sc), "cluster",
                      "provision replaces the cluster by whole GPUs and does not search MIG "
                      "layouts; remove \"mig\"");
  /* The centralized policies plan every GPU with the slowest type present
   * (docs/dispatch.md): a GPU of a slower type added to a passing mix can
   * make it fail, against the search's assumption: reported with the
   * violations. */
  if (ok && opt->n_types > 1 && cs_dispatch_plans_by_slowest_type(cfg->dispatch))
    g_ptr_array_add(out->violations,
                    g_strdup_printf("dispatch \"%s\" plans every GPU with the slowest GPU type "
                                    "present (docs/dispatch.md), so adding a GPU of a slower type "
                                    "can make a passing mix fail and the search's assumption does "
                                    "not hold across types: the answer may not be the least; "
                                    "search each type alone (--types T)",
                                    cfg->dispatch->name));
  ok = ok && cs_config_check_requests(cfg, cs_scenario_name(sc),
                                      run_opt ? run_opt->max_requests : 0, 1.0,
                                      "--max-requests raises it", error);
  for (int t = 0; ok && t < opt->n_types; t++) {
    const CsGpuType *type = cs_profile_set_gpu_type(cfg->profiles, opt->types[t]);
    if (!type) {
      char *hint = cs_profile_set_suggest_gpu_type(cfg->profiles, opt->types[t]);
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "provision: --types: GPU type \"%s\" is not defined by the profiles of %s%s",
                  opt->types[t], cs_scenario_name(sc), hint);
      g_free(hint);
      ok = FALSE;
      break;
    }
    for (int u = 0; u < t; u++)
      if (strcmp(opt->types[u], opt->types[t]) == 0) {
        g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                    "provision: --types: GPU type \"%s\" is given twice", opt->types[t]);
        ok = FALSE;
      }
    if (!isnan(opt->price[t])) {
      out->price[t] = opt->price[t];
      out->price_source[t] = g_strdup("provision --price");
    } else {
      out->price[t] = cs_gpu_type_price_per_hour(type);
      if (!isnan(out->price[t]))
        out->price_source[t] = g_strdup_printf("profile default of GPU type %s: %s",
                                               opt->types[t],
                                               cs_gpu_type_price_source(type));
    }
  }
  cs_config_free(cfg);
  return ok;
}

gboolean cs_provision(CsScenario *sc, const CsProvisionOptions *opt, const CsRunOptions *run_opt,
                      CsProvisionProbeCallback on_probe, void *user_data, CsProvisionResult *out,
                      GError **error)
{
  memset(out, 0, sizeof *out);
  for (int t = 0; t < CS_PROVISION_MAX_TYPES; t++)
    out->price[t] = NAN;
  out->frontier = g_array_new(FALSE, TRUE, sizeof(CsProvisionMix));
  out->violations = g_ptr_array_new_with_free_func(g_free);
  if (!check_input(sc, opt, run_opt, out, error)) {
    cs_provision_result_clear(out);
    return FALSE;
  }
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(cs_scenario_root(sc), "cluster");
  char *original = cs_json_print_exact(cl);
  Search s = { .sc = sc, .opt = opt, .run_opt = run_opt, .on_probe = on_probe,
               .user_data = user_data, .out = out,
               .base_cluster = cJSON_Duplicate(cl, TRUE),
               .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
               .history = g_array_new(FALSE, TRUE, sizeof(CsProvisionProbe)) };
  static const char *const replaced[] = { "gpus", "gpu_type", "nodes", "mig",
                                          "price_per_hour", "price_source" };
  for (guint i = 0; i < G_N_ELEMENTS(replaced); i++)
    cJSON_DeleteItemFromObjectCaseSensitive(s.base_cluster, replaced[i]);
  for (int t = 0; t < opt->n_types; t++)
    s.cap[t] = MIN(opt->max_per_type[t], opt->max_gpus);
  int counts[CS_PROVISION_MAX_TYPES] = { 0 };
  gboolean ok = walk(&s, 0, counts, 0, error);
  /* Leave the scenario as the caller gave it. */
  cs_scenario_set_unrecorded(sc, "cluster", original, NULL);
  g_free(original);
  cJSON_Delete(s.base_cluster);
  g_hash_table_unref(s.seen);
  g_array_unref(s.history);
  if (!ok) {
    cs_provision_result_clear(out);
    return FALSE;
  }
  pick_answers(out);
  return TRUE;
}

void cs_provision_result_clear(CsProvisionResult *r)
{
  for (int t = 0; t < CS_PROVISION_MAX_TYPES; t++)
    g_free(r->price_source[t]);
  if (r->frontier)
    g_array_unref(r->frontier);
  if (r->violations)
    g_ptr_array_unref(r->violations);
  memset(r, 0, sizeof *r);
}
