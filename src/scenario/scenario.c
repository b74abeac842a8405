/* Scenarios: the JSON document a user writes, its --set overrides, and its
 * validation into a CsConfig (config.h). The format is documented in
 * docs/scenario.md; every field has a default there and here. */
#include <math.h>
#include <string.h>

#include "cs_config.h"
#include "clustersim/clustersim.h"
#include "common/data_files.h"
#include "common/json_input.h"
#include "sim/config.h"
#include "scenario.h"
#include "scenario_trace.h"

struct CsScenario {
  cJSON *root;
  char *name;     /* file name used in messages */
  char *base_dir; /* resolves relative paths */
  GPtrArray *overrides; /* "PATH=VALUE" of every cs_scenario_set, in order */
};

static CsScenario *scenario_wrap(cJSON *root, const char *name, const char *base_dir)
{
  CsScenario *sc = g_new0(CsScenario, 1);
  sc->root = root;
  sc->name = g_strdup(name);
  sc->base_dir = g_strdup(base_dir ? base_dir : ".");
  sc->overrides = g_ptr_array_new_with_free_func(g_free);
  return sc;
}

CsScenario *cs_scenario_load(const char *path, GError **error)
{
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  char *dir = g_path_get_dirname(path);
  CsScenario *sc = scenario_wrap(root, path, dir);
  g_free(dir);
  return sc;
}

CsScenario *cs_scenario_new_from_json(const char *json, const char *name, const char *base_dir,
                                      GError **error)
{
  cJSON *root = cs_json_parse(json, name, error);
  return root ? scenario_wrap(root, name, base_dir) : NULL;
}

CsScenario *cs_scenario_new(const char *name, const char *base_dir)
{
  return scenario_wrap(cJSON_CreateObject(), name ? name : "<scenario>", base_dir);
}

void cs_scenario_free(CsScenario *sc)
{
  if (!sc)
    return;
  cJSON_Delete(sc->root);
  g_free(sc->name);
  g_free(sc->base_dir);
  g_ptr_array_unref(sc->overrides);
  g_free(sc);
}

char *cs_scenario_to_json(const CsScenario *sc)
{
  char *s = cJSON_Print(sc->root);
  char *copy = g_strdup(s);
  cJSON_free(s);
  return copy;
}

const char *cs_scenario_name(const CsScenario *sc)
{
  return sc->name;
}

const cJSON *cs_scenario_root(const CsScenario *sc)
{
  return sc->root;
}

/* ---- --set ------------------------------------------------------------------ */

static gboolean set_fail(GError **error, const char *path, const char *why)
{
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "--set %s: %s", path, why);
  return FALSE;
}

gboolean cs_scenario_set(CsScenario *sc, const char *path, const char *value, GError **error)
{
  if (!cs_scenario_set_unrecorded(sc, path, value, error))
    return FALSE;
  g_ptr_array_add(sc->overrides, g_strdup_printf("%s=%s", path, value));
  return TRUE;
}

gboolean cs_scenario_set_unrecorded(CsScenario *sc, const char *path, const char *value,
                                    GError **error)
{
  /* The value is JSON when it parses as JSON, else a bare string, so that
   * --set clients[0].arrival=gamma works without shell quoting. */
  cJSON *v = cJSON_Parse(value);
  if (!v)
    v = cJSON_CreateString(value);

  cJSON *node = sc->root;
  const char *p = path;
  gboolean ok = TRUE;
  if (!*p)
    ok = set_fail(error, path, "empty path");
  while (ok && *p) {
    if (*p == '[') {
      char *end;
      long idx = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || idx < 0) {
        ok = set_fail(error, path, "expected [index] with a non-negative integer");
        break;
      }
      if (!cJSON_IsArray(node)) {
        ok = set_fail(error, path, "indexing something that is not an array");
        break;
      }
      int n = cJSON_GetArraySize(node);
      p = end + 1;
      if (*p == '.' && *++p == '\0') {
        ok = set_fail(error, path, "empty field name"); /* a trailing dot */
        break;
      }
      gboolean last = (*p == '\0');
      if (idx > n) {
        ok = set_fail(error, path, "index past the end of the array");
        break;
      }
      if (last) {
        if (idx == n)
          cJSON_AddItemToArray(node, v);
        else
          cJSON_ReplaceItemInArray(node, (int)idx, v);
        v = NULL;
        break;
      }
      if (idx == n)
        cJSON_AddItemToArray(node, (*p == '[') ? cJSON_CreateArray() : cJSON_CreateObject());
      node = cJSON_GetArrayItem(node, (int)idx);
      continue;
    }
    size_t len = strcspn(p, ".[");
    if (len == 0) {
      ok = set_fail(error, path, "empty field name");
      break;
    }
    char *key = g_strndup(p, len);
    p += len;
    gboolean last = (*p == '\0');
    if (*p == '.' && *++p == '\0') {
      g_free(key);
      ok = set_fail(error, path, "empty field name"); /* a trailing dot */
      break;
    }
    if (!cJSON_IsObject(node)) {
      g_free(key);
      ok = set_fail(error, path, "a field of something that is not an object");
      break;
    }
    if (last) {
      if (cJSON_GetObjectItemCaseSensitive(node, key))
        cJSON_ReplaceItemInObjectCaseSensitive(node, key, v);
      else
        cJSON_AddItemToObject(node, key, v);
      v = NULL;
      g_free(key);
      break;
    }
    cJSON *child = cJSON_GetObjectItemCaseSensitive(node, key);
    if (!child) {
      child = (*p == '[') ? cJSON_CreateArray() : cJSON_CreateObject();
      cJSON_AddItemToObject(node, key, child);
    }
    g_free(key);
    node = child;
  }
  cJSON_Delete(v);
  return ok;
}

/* ---- validation ------------------------------------------------------------- */

void cs_config_free(CsConfig *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_clients; i++) {
    g_free(c->clients[i].model);
    g_free(c->clients[i].times_ns);
    g_free(c->clients[i].interval_counts);
  }
  g_free(c->trace_desc);
  g_free(c->clients);
  for (int i = 0; i < c->n_gpus; i++)
    g_free(c->gpus[i].gpu_type);
  g_free(c->gpus);
  cs_profile_set_free(c->profiles);
  cs_network_curve_free(c->network);
  cs_placement_free(c->placement);
  g_free(c->replica_failed);
  g_free(c->replica_mreq);
  cs_interference_set_free(c->interference);
  g_free(c->interference_desc);
  if (c->dispatch && c->dispatch_params)
    c->dispatch->free_params(c->dispatch_params);
  g_free(c->network_desc);
  g_strfreev(c->profile_files);
  g_strfreev(c->profile_paths);
  g_free(c->network_path);
  g_free(c->interference_path);
  g_free(c->trace_path);
  g_strfreev(c->overrides);
  cs_warning_list_free(c->warnings);
  g_free(c);
}

static char *find_data_file(const CsScenario *sc, const char *entry, const char *sub,
                            const char *json_path, GError **error);

/* Resolves a file named in the scenario: relative to the scenario's directory,
 * else as a name in <data dir>/<sub>/ with or without ".json". Returns the
 * absolute path (g_free it) or NULL after setting error. */
static char *resolve_data_file(const CsScenario *sc, const char *entry, const char *sub,
                               const char *json_path, GError **error)
{
  char *found = find_data_file(sc, entry, sub, json_path, error);
  if (!found)
    return NULL;
  /* Absolute, so that the effective scenario can be run from anywhere. */
  char *abs = g_canonicalize_filename(found, NULL);
  g_free(found);
  return abs;
}

static char *find_data_file(const CsScenario *sc, const char *entry, const char *sub,
                            const char *json_path, GError **error)
{
  if (g_path_is_absolute(entry)) {
    if (g_file_test(entry, G_FILE_TEST_IS_REGULAR))
      return g_strdup(entry);
  } else {
    char *p = g_build_filename(sc->base_dir, entry, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
      return p;
    g_free(p);
    p = cs_data_file_find(sub, entry);
    if (p)
      return p;
  }
  cs_json_fail(error, sc->name, json_path,
               "file \"%s\" not found (looked relative to the scenario and in the data "
               "directory's %s/; set CLUSTERSIM_DATA_DIR to add one)",
               entry, sub);
  return NULL;
}

static gboolean read_profiles(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "profiles");
  if (!list)
    return cs_json_fail(error, sc->name, "profiles",
                        "required field is missing (a list of profile files, e.g. "
                        "[\"v100_thesis\"])");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
    return cs_json_fail(error, sc->name, "profiles",
                        "expected a non-empty array of profile file names, got %s",
                        cs_json_type_name(list));
  c->profiles = cs_profile_set_new();
  GPtrArray *files = g_ptr_array_new();
  GPtrArray *paths = g_ptr_array_new();
  int i = 0;
  const cJSON *item;
  gboolean ok = TRUE;
  cJSON_ArrayForEach(item, list)
  {
    char *jp = cs_json_path_index("profiles", i++);
    char *path = NULL;
    if (!cJSON_IsString(item) || !item->valuestring[0])
      ok = cs_json_fail(error, sc->name, jp, "expected a file name, got %s",
                        cs_json_type_name(item));
    else
      path = resolve_data_file(sc, item->valuestring, "profiles", jp, error);
    if (ok && !path)
      ok = FALSE;
    if (ok) {
      GError *perr = NULL;
      if (!cs_profile_set_load_file(c->profiles, path, &perr)) {
        /* The profile's own message names its file and path; say which entry loaded it. */
        cs_json_fail(error, sc->name, jp, "%s", perr->message);
        g_error_free(perr);
        ok = FALSE;
      } else {
        g_ptr_array_add(files, g_strdup(item->valuestring));
        g_ptr_array_add(paths, g_strdup(path));
      }
    }
    g_free(path);
    g_free(jp);
    if (!ok)
      break;
  }
  g_ptr_array_add(files, NULL);
  c->profile_files = (char **)g_ptr_array_free(files, FALSE);
  g_ptr_array_add(paths, NULL);
  c->profile_paths = (char **)g_ptr_array_free(paths, FALSE);
  return ok;
}

static gboolean read_network(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *net = cJSON_GetObjectItemCaseSensitive(sc->root, "network");
  if (!net || (cJSON_IsString(net) && strcmp(net->valuestring, "zero") == 0)) {
    c->network = cs_network_curve_new_zero();
    c->network_is_zero = TRUE;
    c->network_desc = g_strdup("zero");
    return TRUE;
  }
  static const char *const keys[] = { "constant_ms", "curve", NULL };
  if (!cJSON_IsObject(net))
    return cs_json_fail(error, sc->name, "network",
                        "expected \"zero\" or an object {\"constant_ms\": x} or {\"curve\": "
                        "file}, got %s",
                        cs_json_type_name(net));
  if (!cs_json_check_keys(net, keys, sc->name, "network", error))
    return FALSE;
  double constant_ms = -1.0;
  const char *curve = NULL;
  if (!cs_json_read_double(net, "constant_ms", FALSE, 0.0, 1e9, &constant_ms, sc->name, "network",
                           error) ||
      !cs_json_read_string(net, "curve", FALSE, &curve, sc->name, "network", error))
    return FALSE;
  if ((constant_ms >= 0.0) == (curve != NULL))
    return cs_json_fail(error, sc->name, "network",
                        "expected exactly one of \"constant_ms\" and \"curve\"");
  if (curve) {
    char *path = resolve_data_file(sc, curve, "profiles/network", "network.curve", error);
    if (!path)
      return FALSE;
    GError *nerr = NULL;
    c->network = cs_network_curve_load_file(path, &nerr);
    c->network_path = path;
    if (!c->network) {
      cs_json_fail(error, sc->name, "network.curve", "%s", nerr->message);
      g_error_free(nerr);
      return FALSE;
    }
    c->network_desc = g_strdup(curve);
  } else {
    c->network = cs_network_curve_new_constant(llround(constant_ms * 1e6));
    c->network_desc = g_strdup_printf("constant %g ms", constant_ms);
  }
  return TRUE;
}

/* Appends n GPUs of a type on a node. With "mig" (a list of instances, each
 * {"sm_fraction": f, "memory_fraction": m}), every GPU is split into those
 * instances, and each instance is a GPU of the cluster numbering. */
static gboolean add_gpus(const CsScenario *sc, GArray *gpus, int node, const char *type, int n,
                         const cJSON *obj, const char *path, int *physical, GError **error)
{
  const cJSON *mig = cJSON_GetObjectItemCaseSensitive(obj, "mig");
  char *mp = cs_json_path_key(path, "mig");
  gboolean ok = TRUE;
  int n_inst = 0;
  if (mig && (!cJSON_IsArray(mig) || cJSON_GetArraySize(mig) == 0))
    ok = cs_json_fail(error, sc->name, mp,
                      "expected a non-empty array of {\"sm_fraction\": f, \"memory_fraction\": m}, "
                      "got %s",
                      cs_json_type_name(mig));
  double *smf = NULL, *memf = NULL;
  if (ok && mig) {
    n_inst = cJSON_GetArraySize(mig);
    smf = g_new0(double, n_inst);
    memf = g_new0(double, n_inst);
    double sum_sm = 0, sum_mem = 0;
    static const char *const keys[] = { "sm_fraction", "memory_fraction", NULL };
    for (int k = 0; ok && k < n_inst; k++) {
      const cJSON *inst = cJSON_GetArrayItem(mig, k);
      char *ip = cs_json_path_index(mp, k);
      ok = cs_json_expect_object(inst, sc->name, ip, error) &&
           cs_json_check_keys(inst, keys, sc->name, ip, error) &&
           cs_json_read_double(inst, "sm_fraction", TRUE, 1e-3, 1, &smf[k], sc->name, ip, error) &&
           cs_json_read_double(inst, "memory_fraction", TRUE, 1e-3, 1, &memf[k], sc->name, ip,
                               error);
      sum_sm += smf[k];
      sum_mem += memf[k];
      g_free(ip);
    }
    if (ok && (sum_sm > 1 + 1e-9 || sum_mem > 1 + 1e-9))
      ok = cs_json_fail(error, sc->name, mp,
                        "instances take %.4g of the SMs and %.4g of the memory; each must be at "
                        "most 1",
                        sum_sm, sum_mem);
  }
  for (int g = 0; ok && g < n; g++) {
    int phys = (*physical)++;
    for (int k = 0; k < MAX(n_inst, 1); k++) {
      CsGpuConfig gc = { .node = node, .gpu_type = g_strdup(type), .physical = phys,
                         .mig_instance = mig ? k : -1, .sm_fraction = mig ? smf[k] : 1.0,
                         .memory_fraction = mig ? memf[k] : 1.0 };
      g_array_append_val(gpus, gc);
    }
  }
  g_free(smf);
  g_free(memf);
  g_free(mp);
  return ok;
}

static gboolean read_cluster(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  if (!cl)
    return cs_json_fail(error, sc->name, "cluster",
                        "required field is missing (e.g. {\"gpus\": 4, \"gpu_type\": \"v100\"})");
  static const char *const keys[] = { "gpus",         "gpu_type",        "nodes", "mps",
                                      "mps_gamma",    "interference",    "mig",
                                      "memory_overflow", NULL };
  static const char *const node_keys[] = { "gpus", "gpu_type", "mig", NULL };
  int physical = 0;
  const char *interference = NULL, *overflow = "error";
  c->mps_gamma = 1.0;
  if (!cs_json_expect_object(cl, sc->name, "cluster", error) ||
      !cs_json_check_keys(cl, keys, sc->name, "cluster", error) ||
      !cs_json_read_bool(cl, "mps", FALSE, &c->mps, sc->name, "cluster", error) ||
      !cs_json_read_double(cl, "mps_gamma", FALSE, 0.01, 100, &c->mps_gamma, sc->name, "cluster",
                           error) ||
      !cs_json_read_string(cl, "interference", FALSE, &interference, sc->name, "cluster", error) ||
      !cs_json_read_string(cl, "memory_overflow", FALSE, &overflow, sc->name, "cluster", error))
    return FALSE;
  if (strcmp(overflow, "error") == 0)
    c->memory_overflow_fails = FALSE;
  else if (strcmp(overflow, "fail_replicas") == 0)
    c->memory_overflow_fails = TRUE;
  else
    return cs_json_fail(error, sc->name, "cluster.memory_overflow",
                        "expected \"error\" or \"fail_replicas\", got \"%s\"", overflow);
  if (interference) {
    char *path = resolve_data_file(sc, interference, "profiles", "cluster.interference", error);
    if (!path)
      return FALSE;
    GError *ierr = NULL;
    c->interference = cs_interference_set_load_file(path, &ierr);
    c->interference_path = path;
    if (!c->interference) {
      cs_json_fail(error, sc->name, "cluster.interference", "%s", ierr->message);
      g_error_free(ierr);
      return FALSE;
    }
    c->interference_desc = g_strdup(interference);
  }
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(cl, "nodes");
  GArray *gpus = g_array_new(FALSE, TRUE, sizeof(CsGpuConfig));
  gboolean ok = TRUE;
  if (nodes) {
    if (cJSON_GetObjectItemCaseSensitive(cl, "gpus") ||
        cJSON_GetObjectItemCaseSensitive(cl, "gpu_type") ||
        cJSON_GetObjectItemCaseSensitive(cl, "mig"))
      ok = cs_json_fail(error, sc->name, "cluster",
                        "give either \"nodes\" or \"gpus\" with \"gpu_type\" (and \"mig\") for one "
                        "node, not both");
    else if (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0)
      ok = cs_json_fail(error, sc->name, "cluster.nodes",
                        "expected a non-empty array of {\"gpus\": n, \"gpu_type\": name}, got %s",
                        cs_json_type_name(nodes));
    int i = 0;
    const cJSON *node;
    if (ok) {
      cJSON_ArrayForEach(node, nodes)
      {
        char *jp = cs_json_path_index("cluster.nodes", i);
        int n = 0;
        const char *type = NULL;
        ok = cs_json_expect_object(node, sc->name, jp, error) &&
             cs_json_check_keys(node, node_keys, sc->name, jp, error) &&
             cs_json_read_int(node, "gpus", TRUE, 1, 1 << 20, &n, sc->name, jp, error) &&
             cs_json_read_string(node, "gpu_type", TRUE, &type, sc->name, jp, error);
        if (ok && !cs_profile_set_gpu_type(c->profiles, type)) {
          char *hint = cs_profile_set_suggest_gpu_type(c->profiles, type);
          ok = cs_json_fail(error, sc->name, jp,
                            "gpu_type \"%s\" is not defined by any loaded profile%s", type, hint);
          g_free(hint);
        }
        ok = ok && add_gpus(sc, gpus, i, type, n, node, jp, &physical, error);
        g_free(jp);
        i++;
        if (!ok)
          break;
      }
    }
    c->n_nodes = i;
  } else {
    int n = 0;
    const char *type = NULL;
    ok = cs_json_read_int(cl, "gpus", TRUE, 1, 1 << 20, &n, sc->name, "cluster", error) &&
         cs_json_read_string(cl, "gpu_type", TRUE, &type, sc->name, "cluster", error);
    if (ok && !cs_profile_set_gpu_type(c->profiles, type)) {
      char *hint = cs_profile_set_suggest_gpu_type(c->profiles, type);
      ok = cs_json_fail(error, sc->name, "cluster.gpu_type",
                        "\"%s\" is not defined by any loaded profile%s", type, hint);
      g_free(hint);
    }
    ok = ok && add_gpus(sc, gpus, 0, type, n, cl, "cluster", &physical, error);
    c->n_nodes = 1;
  }
  c->n_gpus = (int)gpus->len;
  c->gpus = (CsGpuConfig *)g_array_free(gpus, FALSE);
  for (int g = 0; g < c->n_gpus; g++)
    c->has_mig |= c->gpus[g].mig_instance >= 0;
  return ok;
}

/* Payload sizes: the client's own, else the model's profile on the first GPU
 * type of the cluster that has it. */
static int64_t profile_bytes(const CsConfig *c, const char *model, gboolean input)
{
  for (int g = 0; g < c->n_gpus; g++) {
    const CsModelProfile *p = cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, model);
    if (p) {
      int64_t b = input ? p->input_bytes : p->output_bytes;
      if (b >= 0)
        return b;
    }
  }
  return -1;
}

/* "times": {"process": "times", "times_ms": [t0, t1, ...]}: explicit send
 * times after the client's start, non-decreasing. The offered rate is the
 * number of requests over the window (first time to where the next would be,
 * one mean gap after the last). */
static gboolean read_times(const CsScenario *sc, const cJSON *params, const char *ap,
                           CsClientConfig *cc, GError **error)
{
  const cJSON *list = params ? cJSON_GetObjectItemCaseSensitive(params, "times_ms") : NULL;
  char *tp = cs_json_path_key(ap, "times_ms");
  gboolean ok = TRUE;
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
    ok = cs_json_fail(error, sc->name, list ? tp : ap,
                      list ? "expected a non-empty array of times in ms, got %s"
                           : "a \"times\" process needs \"times_ms\"%s",
                      list ? cs_json_type_name(list) : "");
    g_free(tp);
    return FALSE;
  }
  cc->n_times = cJSON_GetArraySize(list);
  cc->times_ns = g_new(int64_t, cc->n_times);
  int64_t i = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, list)
  {
    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0) {
      char *ip = cs_json_path_index(tp, (int)i);
      ok = cs_json_fail(error, sc->name, ip, "expected a time in ms >= 0, got %s",
                        cJSON_IsNumber(t) ? "a negative number" : cs_json_type_name(t));
      g_free(ip);
      break;
    }
    cc->times_ns[i] = llround(t->valuedouble * 1e6);
    if (i > 0 && cc->times_ns[i] < cc->times_ns[i - 1]) {
      char *ip = cs_json_path_index(tp, (int)i);
      ok = cs_json_fail(error, sc->name, ip, "times must not decrease (%g ms after %g ms)",
                        t->valuedouble, cc->times_ns[i - 1] / 1e6);
      g_free(ip);
      break;
    }
    i++;
  }
  g_free(tp);
  return ok;
}

static gboolean read_arrival(const CsScenario *sc, const cJSON *cl, const char *jp,
                             CsClientConfig *cc, GError **error)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(cl, "arrival");
  char *ap = cs_json_path_key(jp, "arrival");
  gboolean ok = TRUE;
  const char *process = "poisson";
  const cJSON *params = NULL;
  if (!a) {
    /* default: Poisson */
  } else if (cJSON_IsString(a)) {
    process = a->valuestring;
  } else if (cJSON_IsObject(a)) {
    static const char *const keys[] = { "process", "shape", "cv", "times_ms", NULL };
    ok = cs_json_check_keys(a, keys, sc->name, ap, error) &&
         cs_json_read_string(a, "process", TRUE, &process, sc->name, ap, error);
    params = a;
  } else {
    ok = cs_json_fail(error, sc->name, ap,
                      "expected \"poisson\", \"constant\" or {\"process\": \"gamma\", \"cv\": x}, "
                      "got %s",
                      cs_json_type_name(a));
  }
  if (ok) {
    if (strcmp(process, "trace") == 0) {
      cc->window_ns = -1; /* filled from the scenario's "trace" after all clients are read */
    } else if (strcmp(process, "times") == 0) {
      cc->arrival = CS_ARRIVAL_TIMES;
      ok = read_times(sc, params, ap, cc, error);
    } else if (strcmp(process, "poisson") == 0) {
      cc->arrival = CS_ARRIVAL_POISSON;
    } else if (strcmp(process, "constant") == 0) {
      cc->arrival = CS_ARRIVAL_CONSTANT;
    } else if (strcmp(process, "gamma") == 0) {
      cc->arrival = CS_ARRIVAL_GAMMA;
      double shape = -1.0, cv = -1.0;
      if (params)
        ok = cs_json_read_double(params, "shape", FALSE, 1e-6, 1e6, &shape, sc->name, ap, error) &&
             cs_json_read_double(params, "cv", FALSE, 1e-3, 1e3, &cv, sc->name, ap, error);
      if (ok && (shape > 0) == (cv > 0))
        ok = cs_json_fail(error, sc->name, ap,
                          "a gamma process needs exactly one of \"shape\" and \"cv\"");
      if (ok)
        cc->gamma_shape = shape > 0 ? shape : 1.0 / (cv * cv);
    } else {
      char *pp = params ? cs_json_path_key(ap, "process") : g_strdup(ap);
      ok = cs_json_fail(error, sc->name, pp,
                        "expected \"poisson\", \"gamma\", \"constant\", \"times\" or \"trace\", got "
                        "\"%s\"",
                        process);
      g_free(pp);
    }
    if (ok && cc->arrival != CS_ARRIVAL_TIMES && params &&
        cJSON_GetObjectItemCaseSensitive(params, "times_ms"))
      ok = cs_json_fail(error, sc->name, ap, "\"times_ms\" applies to \"times\" only");
    if (ok && cc->arrival != CS_ARRIVAL_GAMMA && params &&
        (cJSON_GetObjectItemCaseSensitive(params, "shape") ||
         cJSON_GetObjectItemCaseSensitive(params, "cv")))
      ok = cs_json_fail(error, sc->name, ap, "\"shape\" and \"cv\" apply to \"gamma\" only");
  }
  g_free(ap);
  return ok;
}

static char *resolve_data_file(const CsScenario *sc, const char *entry, const char *sub,
                               const char *json_path, GError **error);

/* The scenario's "trace" object feeds the clients whose arrival is "trace". */
static gboolean read_trace(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(sc->root, "trace");
  int *idx = g_new0(int, MAX(c->n_clients, 1));
  int n = 0;
  for (int i = 0; i < c->n_clients; i++)
    if (c->clients[i].window_ns < 0) {
      idx[n++] = i;
      c->clients[i].requests = 0;
    }
  gboolean ok = TRUE;
  if (n == 0 && tr)
    ok = cs_json_fail(error, sc->name, "trace",
                      "no client has \"arrival\": \"trace\" to take requests from it");
  else if (n > 0 && !tr)
    ok = cs_json_fail(error, sc->name, "trace",
                      "required field is missing (clients with \"arrival\": \"trace\" need "
                      "one; see docs/scenario.md)");
  else if (n > 0) {
    const char *file = NULL;
    ok = cs_json_expect_object(tr, sc->name, "trace", error) &&
         cs_json_read_string(tr, "file", TRUE, &file, sc->name, "trace", error);
    char *path = ok ? resolve_data_file(sc, file, "traces", "trace.file", error) : NULL;
    ok = ok && path && cs_trace_clients_compile(tr, sc->name, path, file, c->clients, idx, n,
                                                &c->trace_desc, error);
    c->trace_path = path;
  }
  g_free(idx);
  return ok;
}

static gboolean read_clients(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "clients");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
    return cs_json_fail(error, sc->name, "clients",
                        list ? "expected a non-empty array of clients, got %s"
                             : "required field is missing (a non-empty array of clients)%s",
                        list ? cs_json_type_name(list) : "");
  double default_duration_s = -1.0;
  if (!cs_json_read_double(sc->root, "duration_s", FALSE, 1e-9, 1e9, &default_duration_s,
                           sc->name, "", error))
    return FALSE;
  static const char *const keys[] = { "model",      "rate",        "slo_ms",       "arrival",
                                      "requests",   "duration_s",  "warmup_s",     "start_s",
                                      "input_bytes", "output_bytes", "planned_rate", NULL };
  c->n_clients = cJSON_GetArraySize(list);
  c->clients = g_new0(CsClientConfig, c->n_clients);
  int i = 0;
  const cJSON *cl;
  cJSON_ArrayForEach(cl, list)
  {
    CsClientConfig *cc = &c->clients[i];
    char *jp = cs_json_path_index("clients", i);
    const char *model = NULL;
    double duration_s = -1.0, warmup_s = 0.0, start_s = 0.0;
    int64_t requests = -1;
    cc->input_bytes = cc->output_bytes = -1;
    gboolean ok = cs_json_expect_object(cl, sc->name, jp, error) &&
                  cs_json_check_keys(cl, keys, sc->name, jp, error) &&
                  cs_json_read_string(cl, "model", TRUE, &model, sc->name, jp, error) &&
                  cs_json_read_double(cl, "rate", FALSE, 1e-9, 1e12, &cc->rate_rps, sc->name, jp,
                                      error) &&
                  cs_json_read_double(cl, "planned_rate", FALSE, 1e-9, 1e12, &cc->planned_rate_rps,
                                      sc->name, jp, error) &&
                  cs_json_read_double(cl, "slo_ms", TRUE, 1e-6, 1e9, &cc->slo_ms, sc->name, jp,
                                      error) &&
                  read_arrival(sc, cl, jp, cc, error) &&
                  cs_json_read_int64(cl, "requests", FALSE, 1, INT64_MAX / 4, &requests, sc->name,
                                     jp, error) &&
                  cs_json_read_double(cl, "duration_s", FALSE, 1e-9, 1e9, &duration_s, sc->name,
                                      jp, error) &&
                  cs_json_read_double(cl, "warmup_s", FALSE, 0.0, 1e9, &warmup_s, sc->name, jp,
                                      error) &&
                  cs_json_read_double(cl, "start_s", FALSE, 0.0, 1e9, &start_s, sc->name, jp,
                                      error) &&
                  cs_json_read_int64(cl, "input_bytes", FALSE, 0, INT64_MAX / 4, &cc->input_bytes,
                                     sc->name, jp, error) &&
                  cs_json_read_int64(cl, "output_bytes", FALSE, 0, INT64_MAX / 4,
                                     &cc->output_bytes, sc->name, jp, error);
    if (ok) {
      cc->model = g_strdup(model);
      for (int j = 0; j < i && ok; j++)
        if (strcmp(c->clients[j].model, model) == 0)
          ok = cs_json_fail(error, sc->name, jp,
                            "model \"%s\" already has a client (clients[%d]); one client per "
                            "model",
                            model, j);
    }
    gboolean has_rate = cJSON_GetObjectItemCaseSensitive(cl, "rate") != NULL;
    if (ok && cc->window_ns < 0) {
      if (has_rate || requests > 0 || duration_s > 0)
        ok = cs_json_fail(error, sc->name, jp,
                          "a \"trace\" arrival takes its requests and rate from the scenario's "
                          "\"trace\": remove \"%s\"",
                          has_rate ? "rate" : requests > 0 ? "requests" : "duration_s");
      requests = 1; /* placeholder until the trace is read */
      cc->rate_rps = 1.0;
    } else if (ok && cc->arrival == CS_ARRIVAL_TIMES) {
      if (has_rate || requests > 0 || duration_s > 0)
        ok = cs_json_fail(error, sc->name, jp,
                          "a \"times\" arrival sets the requests and rate itself: remove "
                          "\"%s\"",
                          has_rate ? "rate" : requests > 0 ? "requests" : "duration_s");
      else {
        int64_t n = cc->n_times;
        int64_t span = cc->times_ns[n - 1] - cc->times_ns[0];
        double gap_s = n > 1 && span > 0 ? span * 1e-9 / (n - 1) : 1.0;
        cc->rate_rps = 1.0 / gap_s;
        requests = n;
      }
    } else if (ok && !has_rate) {
      char *rp = cs_json_path_key(jp, "rate");
      ok = cs_json_fail(error, sc->name, rp, "required field is missing");
      g_free(rp);
    }
    if (ok && requests > 0 && duration_s > 0)
      ok = cs_json_fail(error, sc->name, jp,
                        "give \"requests\" or \"duration_s\", not both");
    if (ok && requests < 0 && duration_s < 0) {
      if (default_duration_s > 0)
        duration_s = default_duration_s;
      else
        ok = cs_json_fail(error, sc->name, jp,
                          "needs \"requests\" or \"duration_s\" (or a top-level \"duration_s\")");
    }
    if (ok) {
      gboolean known = FALSE;
      for (int g = 0; g < c->n_gpus && !known; g++)
        known = cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, model) != NULL;
      if (!known) {
        /* Suggest among the models of the cluster's GPU types (one type per
         * node, its GPUs consecutive): a name on another type would fail too. */
        GPtrArray *names = g_ptr_array_new();
        for (int g = 0; g < c->n_gpus; g++) {
          if (g > 0 && c->gpus[g].node == c->gpus[g - 1].node)
            continue;
          for (int i = 0; i < cs_profile_set_n_models(c->profiles); i++) {
            const CsModelProfile *p = cs_profile_set_model(c->profiles, i);
            if (strcmp(p->gpu_type, c->gpus[g].gpu_type) == 0)
              g_ptr_array_add(names, p->model);
          }
        }
        char *hint = cs_did_you_mean(model, (const char *const *)names->pdata, (int)names->len);
        ok = cs_json_fail(error, sc->name, jp,
                          "model \"%s\" has no profile on any GPU type of the cluster%s", model,
                          hint);
        g_free(hint);
        g_ptr_array_free(names, TRUE);
      }
    }
    if (ok) {
      cc->slo_ns = llround(cc->slo_ms * 1e6);
      cc->requests = requests > 0 ? requests : 0;
      cc->duration_ns = duration_s > 0 ? llround(duration_s * 1e9) : 0;
      cc->warmup_ns = llround(warmup_s * 1e9);
      cc->start_ns = llround(start_s * 1e9);
      if (cc->input_bytes < 0)
        cc->input_bytes = profile_bytes(c, model, TRUE);
      if (cc->output_bytes < 0)
        cc->output_bytes = profile_bytes(c, model, FALSE);
      if ((cc->input_bytes < 0 || cc->output_bytes < 0) && !c->network_is_zero)
        ok = cs_json_fail(error, sc->name, jp,
                          "the profile of \"%s\" gives no %s size and the network is not zero: "
                          "set \"%s\"",
                          model, cc->input_bytes < 0 ? "request payload" : "result payload",
                          cc->input_bytes < 0 ? "input_bytes" : "output_bytes");
      cc->input_bytes = MAX(cc->input_bytes, 0);
      cc->output_bytes = MAX(cc->output_bytes, 0);
    }
    g_free(jp);
    i++;
    if (!ok)
      return FALSE;
  }
  if (!read_trace(sc, c, error))
    return FALSE;
  /* Trace clients learn their rate from the trace: plan for it unless told otherwise. */
  for (int k = 0; k < c->n_clients; k++)
    if (!(c->clients[k].planned_rate_rps > 0))
      c->clients[k].planned_rate_rps = c->clients[k].rate_rps;
  return TRUE;
}

static char *registry_names(gboolean dispatch)
{
  GString *names = g_string_new(NULL);
  if (dispatch) {
    const CsDispatchPolicy *const *all = cs_dispatch_policy_list();
    for (int i = 0; all[i]; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", all[i]->name);
  } else {
    const CsPlacementPolicy *const *all = cs_placement_policy_list();
    for (int i = 0; all[i]; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", all[i]->name);
  }
  return g_string_free(names, FALSE);
}

/* A dispatch policy without placement runs one batch at a time on each GPU
 * (Symphony's exclusive execution): settings about co-located replicas would
 * be ignored, so they are refused, as a "placement" object is. */
static gboolean refuse_ignored_settings(const CsScenario *sc, const CsConfig *c, GError **error)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  static const char *const cluster_keys[] = { "mps", "interference", "memory_overflow", NULL };
  for (int k = 0; cluster_keys[k]; k++)
    if (cJSON_GetObjectItemCaseSensitive(cl, cluster_keys[k])) {
      char *jp = cs_json_path_key("cluster", cluster_keys[k]);
      cs_json_fail(error, sc->name, jp,
                   "dispatch \"%s\" runs one batch at a time on each GPU, with every model loaded "
                   "(memory checked at validation), so this setting would be ignored; remove it",
                   c->dispatch->name);
      g_free(jp);
      return FALSE;
    }
  if (!c->has_mig && cJSON_GetObjectItemCaseSensitive(cl, "mps_gamma"))
    return cs_json_fail(error, sc->name, "cluster.mps_gamma",
                        "applies to MPS co-location and MIG instances; dispatch \"%s\" on whole "
                        "GPUs uses neither, so it would be ignored; remove it",
                        c->dispatch->name);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "clients");
  for (int m = 0; m < c->n_clients; m++)
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, m), "planned_rate")) {
      char *jp = g_strdup_printf("clients[%d].planned_rate", m);
      cs_json_fail(error, sc->name, jp,
                   "dispatch \"%s\" uses no placement, so nothing plans for this rate; remove it",
                   c->dispatch->name);
      g_free(jp);
      return FALSE;
    }
  return TRUE;
}

/* With a placement and without MPS, co-located replicas time-slice: the
 * interference tables and the MPS exponent (outside MIG) have nothing to
 * act on. A scenario may toggle "mps" to compare, so this is a warning. */
static void warn_ignored_settings(const CsScenario *sc, CsConfig *c)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  if (c->mps)
    return;
  if (cJSON_GetObjectItemCaseSensitive(cl, "interference"))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.interference applies to replicas running concurrently under MPS; "
                   "cluster.mps is false, so co-located replicas time-slice and it is ignored");
  if (!c->has_mig && cJSON_GetObjectItemCaseSensitive(cl, "mps_gamma"))
    cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                   "cluster.mps_gamma applies under MPS or to MIG instances; cluster.mps is "
                   "false and there is no MIG, so it is ignored");
}

static gboolean read_dispatch(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(sc->root, "dispatch");
  const char *policy = "router";
  if (d && (!cs_json_expect_object(d, sc->name, "dispatch", error) ||
            !cs_json_read_string(d, "policy", FALSE, &policy, sc->name, "dispatch", error)))
    return FALSE;
  c->dispatch = cs_dispatch_policy_lookup(policy);
  if (!c->dispatch) {
    char *names = registry_names(TRUE);
    cs_json_fail(error, sc->name, "dispatch.policy", "unknown policy \"%s\" (known: %s)", policy,
                 names);
    g_free(names);
    return FALSE;
  }
  c->dispatch_params = c->dispatch->parse(d, sc->name, "dispatch", error);
  if (!c->dispatch_params)
    return FALSE;
  if (!c->dispatch->uses_placement && !refuse_ignored_settings(sc, c, error))
    return FALSE;
  if (c->dispatch->uses_placement)
    warn_ignored_settings(sc, c);
  if (!c->dispatch->uses_placement) {
    /* Every model runs on every GPU: each needs a profile on every GPU type. */
    for (int m = 0; m < c->n_clients; m++)
      for (int g = 0; g < c->n_gpus; g++)
        if (!cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, c->clients[m].model)) {
          char *jp = cs_json_path_index("clients", m);
          cs_json_fail(error, sc->name, jp,
                       "dispatch \"%s\" runs every model on every GPU, but model \"%s\" has no "
                       "profile on GPU type \"%s\" (gpu %d)",
                       c->dispatch->name, c->clients[m].model, c->gpus[g].gpu_type, g);
          g_free(jp);
          return FALSE;
        }
    /* Memory permitting: every model is loaded on every GPU. Each needs at
     * least its Mreq at its smallest profiled batch (weights and the least
     * activation memory); their sum must fit each GPU. */
    for (int g = 0; g < c->n_gpus; g++) {
      double sum = 0;
      GString *list = g_string_new(NULL);
      for (int m = 0; m < c->n_clients; m++) {
        const CsModelProfile *p =
          cs_profile_set_lookup(c->profiles, c->gpus[g].gpu_type, c->clients[m].model);
        for (int i = 0; i < p->n_points; i++)
          if (!isnan(p->points[i].mreq_pct)) {
            sum += p->points[i].mreq_pct;
            g_string_append_printf(list, "%s%s %.2f %%", list->len ? ", " : "",
                                   c->clients[m].model, p->points[i].mreq_pct);
            break;
          }
      }
      double capacity = 100.0 * c->gpus[g].memory_fraction;
      gboolean fits = sum <= capacity + 1e-9;
      if (!fits)
        cs_json_fail(error, sc->name, "dispatch",
                     "dispatch \"%s\" loads every model on every GPU, but on gpu %d (%s) their "
                     "memory (%s) sums to %.2f %%, over the %.4g %% it has",
                     c->dispatch->name, g, c->gpus[g].gpu_type, list->str, sum, capacity);
      g_string_free(list, TRUE);
      if (!fits)
        return FALSE;
    }
  }
  /* Last: the policy may compare its settings with the compiled world. */
  if (c->dispatch->check)
    c->dispatch->check(c->dispatch_params, c, c->warnings);
  return TRUE;
}

/* Mreq of a replica: the profile's memory requirement at its batch size, or
 * at the nearest profiled batch size; 0 when the profile gives none. */
static double replica_mreq(const CsConfig *c, const CsReplica *rep)
{
  const CsModelProfile *p = cs_profile_set_lookup(c->profiles, c->gpus[rep->gpu].gpu_type,
                                                  c->clients[rep->model].model);
  const CsBatchPoint *best = NULL;
  for (int i = 0; p && i < p->n_points; i++)
    if (!isnan(p->points[i].mreq_pct) &&
        (!best || abs(p->points[i].batch - rep->batch) < abs(best->batch - rep->batch)))
      best = &p->points[i];
  return best ? best->mreq_pct : 0.0;
}

/* A replica that fails in memory serves nothing: a model's expected
 * goodput may not count it. The router still sends it its round-robin share
 * (in proportion to batch size), and those requests fail; so the policy's
 * figure is capped at the planned rate times the surviving replicas' share,
 * and at what they run back to back (profile throughput at their batch
 * sizes). The log says so. */
static void discount_failed_replicas(CsConfig *c)
{
  GArray *reps = c->placement->replicas;
  for (int m = 0; m < c->n_clients; m++) {
    gboolean any_failed = FALSE;
    double capacity = 0.0, batches = 0.0, surviving_batches = 0.0;
    for (guint r = 0; r < reps->len; r++) {
      const CsReplica *rep = &g_array_index(reps, CsReplica, r);
      if (rep->model != m)
        continue;
      batches += rep->batch;
      if (c->replica_failed[r]) {
        any_failed = TRUE;
        continue;
      }
      surviving_batches += rep->batch;
      const CsModelProfile *p =
        cs_profile_set_lookup(c->profiles, c->gpus[rep->gpu].gpu_type, c->clients[m].model);
      capacity += p ? cs_model_profile_throughput_rps(p, rep->batch) : 0.0;
    }
    double *e = &c->placement->expected_goodput[m];
    double cap = MIN(capacity, c->clients[m].planned_rate_rps * surviving_batches / batches);
    if (!any_failed || *e <= cap)
      continue;
    g_string_append_printf(c->placement->log,
                           "%s: expected goodput %.2f req/s lowered to %.2f: its replicas that "
                           "fit in memory get %.4g of its requests and run %.2f req/s\n",
                           c->clients[m].model, *e, cap, surviving_batches / batches, capacity);
    c->placement->expected_total -= *e - cap;
    *e = cap;
  }
}

/* The replicas on a GPU must fit its memory (sum of Mreq <= 100 %). Unless
 * cluster.memory_overflow is "fail_replicas", a placement that does not fit
 * is refused; with it, the replicas that no longer fit (in placement order)
 * fail, and so do the requests sent to them. */
static gboolean check_memory(const CsScenario *sc, CsConfig *c, GError **error)
{
  GArray *reps = c->placement->replicas;
  double *used = g_new0(double, MAX(c->n_gpus, 1));
  c->replica_failed = g_new0(gboolean, MAX(reps->len, 1));
  c->replica_mreq = g_new0(double, MAX(reps->len, 1));
  gboolean ok = TRUE;
  for (guint r = 0; r < reps->len && ok; r++) {
    const CsReplica *rep = &g_array_index(reps, CsReplica, r);
    double m = replica_mreq(c, rep);
    c->replica_mreq[r] = m;
    /* Mreq is a share of the whole GPU; a MIG instance holds its memory fraction. */
    double capacity = 100.0 * c->gpus[rep->gpu].memory_fraction;
    if (used[rep->gpu] + m <= capacity + 1e-9) {
      used[rep->gpu] += m;
      continue;
    }
    if (c->memory_overflow_fails) {
      c->replica_failed[r] = TRUE;
      cs_warning_add(c->warnings, "replica_fails", c->clients[rep->model].model, rep->gpu,
                     "replica %u (batch %d, Mreq %.2f %%) does not fit in gpu %d's memory "
                     "(%.2f %% used): the requests sent to it fail",
                     r, rep->batch, m, rep->gpu, used[rep->gpu]);
      g_string_append_printf(c->placement->log,
                             "replica %u (%s batch %d, Mreq %.2f %%) does not fit in gpu %d's "
                             "memory (%.2f %% used): it fails\n",
                             r, c->clients[rep->model].model, rep->batch, m, rep->gpu,
                             used[rep->gpu]);
      continue;
    }
    GString *list = g_string_new(NULL);
    for (guint q = 0; q <= r; q++) {
      const CsReplica *o = &g_array_index(reps, CsReplica, q);
      if (o->gpu == rep->gpu)
        g_string_append_printf(list, "%s%s batch %d (%.2f %%)", list->len ? ", " : "",
                               c->clients[o->model].model, o->batch, replica_mreq(c, o));
    }
    ok = cs_json_fail(error, sc->name, "placement",
                      "gpu %d (%s) cannot hold its replicas: Mreq %s sum to %.2f %% of the GPU's "
                      "memory, over the %.4g %% it has (set cluster.memory_overflow to "
                      "\"fail_replicas\" to simulate the failure instead)",
                      rep->gpu, c->gpus[rep->gpu].gpu_type, list->str, used[rep->gpu] + m,
                      capacity);
    g_string_free(list, TRUE);
  }
  g_free(used);
  if (ok)
    discount_failed_replicas(c);
  return ok;
}

/* Warnings about a placement that runs but misleads: models without a
 * replica, and MPS shares that time-slicing ignores. */
static void warn_about_placement(CsConfig *c)
{
  GArray *reps = c->placement->replicas;
  int *per_model = g_new0(int, MAX(c->n_clients, 1));
  int *per_gpu = g_new0(int, MAX(c->n_gpus, 1));
  gboolean shares = FALSE;
  for (guint r = 0; r < reps->len; r++) {
    const CsReplica *rep = &g_array_index(reps, CsReplica, r);
    per_model[rep->model]++;
    per_gpu[rep->gpu]++;
    shares |= rep->mps_share > 0 && rep->mps_share < 1.0 - 1e-9;
  }
  for (int m = 0; m < c->n_clients; m++)
    if (per_model[m] == 0)
      cs_warning_add(c->warnings, "model_unserved", c->clients[m].model, -1,
                     "placement \"%s\" gives %s no replica: its requests are unserved",
                     c->placement_policy->name, c->clients[m].model);
  int colocated = 0;
  for (int g = 0; g < c->n_gpus; g++)
    colocated += per_gpu[g] > 1;
  if (!c->mps && shares && colocated > 0)
    cs_warning_add(c->warnings, "mps_shares_ignored", NULL, -1,
                   "placement \"%s\" plans MPS shares for co-located replicas on %d GPU(s), but "
                   "cluster.mps is false: they time-slice and the shares are ignored (set "
                   "\"mps\": true in \"cluster\" to run them concurrently)",
                   c->placement_policy->name, colocated);
  g_free(per_model);
  g_free(per_gpu);
}

static gboolean read_placement(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(sc->root, "placement");
  if (!c->dispatch->uses_placement) {
    if (pl)
      return cs_json_fail(error, sc->name, "placement",
                          "dispatch \"%s\" runs every model on every GPU and uses no placement; "
                          "remove \"placement\"",
                          c->dispatch->name);
    return TRUE;
  }
  const char *policy = "dedicated";
  if (pl && (!cs_json_expect_object(pl, sc->name, "placement", error) ||
             !cs_json_read_string(pl, "policy", FALSE, &policy, sc->name, "placement", error)))
    return FALSE;
  c->placement_policy = cs_placement_policy_lookup(policy);
  if (!c->placement_policy) {
    char *names = registry_names(FALSE);
    cs_json_fail(error, sc->name, "placement.policy", "unknown policy \"%s\" (known: %s)", policy,
                 names);
    g_free(names);
    return FALSE;
  }
  CsPlacementModel *models = g_new0(CsPlacementModel, c->n_clients);
  for (int i = 0; i < c->n_clients; i++)
    models[i] = (CsPlacementModel){ .name = c->clients[i].model,
                                    .rate_rps = c->clients[i].planned_rate_rps,
                                    .slo_ms = c->clients[i].slo_ms };
  CsPlacementGpu *gpus = g_new0(CsPlacementGpu, c->n_gpus);
  for (int g = 0; g < c->n_gpus; g++)
    gpus[g] = (CsPlacementGpu){ .gpu_type = c->gpus[g].gpu_type, .node = c->gpus[g].node };
  CsPlacementGpuModel gpu_model = { .mps = c->mps, .mps_gamma = c->mps_gamma,
                                    .interference = c->interference,
                                    .interference_name = c->interference_desc };
  CsPlacementInput in = { .models = models, .n_models = c->n_clients, .gpus = gpus,
                          .n_gpus = c->n_gpus, .profiles = c->profiles,
                          .gpu_model = &gpu_model };
  c->placement = cs_placement_run(c->placement_policy, NULL, &in, pl, sc->name, "placement", error);
  g_free(models);
  g_free(gpus);
  if (!c->placement)
    return FALSE;
  if (!check_memory(sc, c, error))
    return FALSE;
  warn_about_placement(c);
  return TRUE;
}

static const char *const top_keys[] = { "name",     "seed",    "duration_s", "profiles",
                                        "network",  "cluster", "dispatch",   "placement",
                                        "clients",  "trace",   "outputs",    "overrides_applied",
                                        NULL };

/* "overrides_applied": the --set overrides an effective scenario already
 * holds (informational: they are in its values); the summary lists them
 * before this run's own. */
static gboolean read_overrides(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "overrides_applied");
  GPtrArray *all = g_ptr_array_new();
  gboolean ok = TRUE;
  if (list && !cJSON_IsArray(list))
    ok = cs_json_fail(error, sc->name, "overrides_applied",
                      "expected an array of \"PATH=VALUE\" strings, got %s",
                      cs_json_type_name(list));
  int i = 0;
  const cJSON *item;
  const cJSON *items = ok ? list : NULL;
  cJSON_ArrayForEach(item, items)
  {
    if (!cJSON_IsString(item)) {
      char *jp = cs_json_path_index("overrides_applied", i);
      ok = cs_json_fail(error, sc->name, jp, "expected a \"PATH=VALUE\" string, got %s",
                        cs_json_type_name(item));
      g_free(jp);
      break;
    }
    g_ptr_array_add(all, g_strdup(item->valuestring));
    i++;
  }
  for (guint k = 0; k < sc->overrides->len; k++)
    g_ptr_array_add(all, g_strdup(g_ptr_array_index(sc->overrides, k)));
  g_ptr_array_add(all, NULL);
  c->overrides = (char **)g_ptr_array_free(all, FALSE);
  return ok;
}

CsConfig *cs_scenario_compile(const CsScenario *sc, GError **error)
{
  if (!cs_json_expect_object(sc->root, sc->name, "", error) ||
      !cs_json_check_keys(sc->root, top_keys, sc->name, "", error))
    return NULL;
  CsConfig *c = g_new0(CsConfig, 1);
  c->warnings = cs_warning_list_new();
  int64_t seed = 1;
  const char *name = NULL;
  gboolean ok = cs_json_read_string(sc->root, "name", FALSE, &name, sc->name, "", error) &&
                cs_json_read_int64(sc->root, "seed", FALSE, 0, INT64_MAX, &seed, sc->name, "",
                                   error);
  c->seed = (uint64_t)seed;
  if (ok) {
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(sc->root, "outputs");
    static const char *const out_keys[] = { "requests_csv", "timeseries_bin_s", NULL };
    gboolean csv = FALSE;
    double bin_s = 1.0;
    if (out)
      ok = cs_json_expect_object(out, sc->name, "outputs", error) &&
           cs_json_check_keys(out, out_keys, sc->name, "outputs", error) &&
           cs_json_read_bool(out, "requests_csv", FALSE, &csv, sc->name, "outputs", error) &&
           cs_json_read_double(out, "timeseries_bin_s", FALSE, 1e-3, 1e6, &bin_s, sc->name,
                               "outputs", error);
    c->timeseries_bin_ns = llround(bin_s * 1e9);
  }
  ok = ok && read_overrides(sc, c, error) && read_profiles(sc, c, error) &&
       read_network(sc, c, error) &&
       read_cluster(sc, c, error) && read_clients(sc, c, error) &&
       read_dispatch(sc, c, error) && read_placement(sc, c, error);
  if (!ok) {
    cs_config_free(c);
    return NULL;
  }
  return c;
}

gboolean cs_scenario_requests_csv_wanted(const CsScenario *sc)
{
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(sc->root, "outputs");
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "requests_csv"));
}

gboolean cs_scenario_validate(CsScenario *sc, GError **error)
{
  CsConfig *c = cs_scenario_compile(sc, error);
  cs_config_free(c);
  return c != NULL;
}
