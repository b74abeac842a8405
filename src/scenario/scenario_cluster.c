/* The scenario's hardware sections: "profiles" (the profile files loaded),
 * "network" (zero, constant or a fitted curve) and "cluster" (GPUs on one
 * node or several, MIG instances, MPS and its exponent, interference tables,
 * what happens on memory overflow). Read first: clients and policies are
 * checked against them. See docs/scenario.md. */
#include <math.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "common/json_input.h"
#include "sim/config.h"
#include "scenario.h"
#include "scenario_internal.h"

gboolean cs_scenario_read_profiles(const CsScenario *sc, CsConfig *c, GError **error)
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
  /* Every entry is loaded: the problems of several are listed together. */
  CsErrorList *problems = cs_error_list_new();
  cJSON_ArrayForEach(item, list)
  {
    char *jp = cs_json_path_index("profiles", i++);
    char *path = NULL;
    if (!cJSON_IsString(item) || !item->valuestring[0])
      cs_json_fail(cs_error_list_slot(problems), sc->name, jp, "expected a file name, got %s",
                   cs_json_type_name(item));
    else
      path = cs_scenario_resolve_data_file(sc, item->valuestring, "profiles", jp,
                                           cs_error_list_slot(problems));
    if (path) {
      GError *perr = NULL;
      if (!cs_profile_set_load_file(c->profiles, path, &perr)) {
        /* The profile's own message names its file and path; say which entry loaded it. */
        cs_json_fail(cs_error_list_slot(problems), sc->name, jp, "%s", perr->message);
        g_error_free(perr);
      } else {
        g_ptr_array_add(files, g_strdup(item->valuestring));
        g_ptr_array_add(paths, g_strdup(path));
      }
    }
    g_free(path);
    g_free(jp);
  }
  gboolean ok = cs_error_list_finish(problems, sc->name, "profiles", error);
  g_ptr_array_add(files, NULL);
  c->profile_files = (char **)g_ptr_array_free(files, FALSE);
  g_ptr_array_add(paths, NULL);
  c->profile_paths = (char **)g_ptr_array_free(paths, FALSE);
  return ok;
}

gboolean cs_scenario_read_network(const CsScenario *sc, CsConfig *c, GError **error)
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
    char *path =
      cs_scenario_resolve_data_file(sc, curve, "profiles/network", "network.curve", error);
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
/* *total counts the GPUs of every node read so far, those not appended
 * included: once it passes CS_MAX_GPUS nothing more is appended (the caller
 * refuses the cluster with the whole count), so that memory stays bounded
 * whatever the nodes ask for. */
static gboolean add_gpus(const CsScenario *sc, GArray *gpus, int node, const char *type, int n,
                         const cJSON *obj, const char *path, int *physical, gint64 *total,
                         CsErrorList *el)
{
  const cJSON *mig = cJSON_GetObjectItemCaseSensitive(obj, "mig");
  char *mp = cs_json_path_key(path, "mig");
  gboolean ok = TRUE;
  int n_inst = 0;
  if (mig && (!cJSON_IsArray(mig) || cJSON_GetArraySize(mig) == 0))
    ok = cs_json_fail(cs_error_list_slot(el), sc->name, mp,
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
    int k = 0;
    const cJSON *inst;
    /* Every instance is read: their problems are listed together (an
     * unknown field stops its instance). */
    cJSON_ArrayForEach(inst, mig)
    {
      char *ip = cs_json_path_index(mp, k);
      if (cs_json_expect_object(inst, sc->name, ip, cs_error_list_slot(el)) &&
          cs_json_check_keys(inst, keys, sc->name, ip, cs_error_list_slot(el))) {
        ok &= cs_json_read_double(inst, "sm_fraction", TRUE, 1e-3, 1, &smf[k], sc->name, ip,
                                  cs_error_list_slot(el));
        ok &= cs_json_read_double(inst, "memory_fraction", TRUE, 1e-3, 1, &memf[k], sc->name, ip,
                                  cs_error_list_slot(el));
      } else {
        ok = FALSE;
      }
      sum_sm += smf[k];
      sum_mem += memf[k];
      g_free(ip);
      k++;
    }
    if (ok && (sum_sm > 1 + 1e-9 || sum_mem > 1 + 1e-9))
      ok = cs_json_fail(cs_error_list_slot(el), sc->name, mp,
                        "instances take %.4g of the SMs and %.4g of the memory; each must be at "
                        "most 1",
                        sum_sm, sum_mem);
  }
  *total += (gint64)n * MAX(n_inst, 1);
  for (int g = 0; ok && *total <= CS_MAX_GPUS && g < n; g++) {
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

/* The price of one GPU of a node: "price_per_hour" (with an optional
 * "price_source") in obj, else the GPU type's default from its profile, else
 * unknown. The source says where the number came from, so that the summary
 * can show it; a price the scenario gives without a source is attributed to
 * its JSON path. */
static gboolean read_price(const CsScenario *sc, const CsConfig *c, const cJSON *obj,
                           const char *path, const char *type, int gpus, GArray *nodes,
                           GError **error)
{
  double price = NAN;
  const char *source = NULL;
  if (!cs_json_read_double(obj, "price_per_hour", FALSE, 0.0, CS_PRICE_MAX, &price, sc->name,
                           path, error) ||
      !cs_json_read_string(obj, "price_source", FALSE, &source, sc->name, path, error))
    return FALSE;
  CsNodeConfig n = { .gpu_type = g_strdup(type), .path = g_strdup(path), .gpus = gpus,
                     .price_per_hour = price };
  if (source && isnan(price)) {
    char *jp = cs_json_path_key(path, "price_source");
    cs_json_fail(error, sc->name, jp,
                 "given without \"price_per_hour\": it says where a price given beside it "
                 "comes from");
    g_free(jp);
    g_free(n.gpu_type);
    g_free(n.path);
    return FALSE;
  }
  if (source) {
    n.price_source = g_strdup(source);
  } else if (!isnan(price)) {
    n.price_source = g_strdup_printf("scenario (%s.price_per_hour)", path);
  } else {
    const CsGpuType *t = cs_profile_set_gpu_type(c->profiles, type);
    n.price_per_hour = cs_gpu_type_price_per_hour(t);
    if (!isnan(n.price_per_hour))
      n.price_source = g_strdup_printf("profile default of GPU type %s: %s", type,
                                       cs_gpu_type_price_source(t));
  }
  g_array_append_val(nodes, n);
  return TRUE;
}

gboolean cs_scenario_read_cluster(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
  if (!cl)
    return cs_json_fail(error, sc->name, "cluster",
                        "required field is missing (e.g. {\"gpus\": 4, \"gpu_type\": \"v100\"})");
  static const char *const keys[] = { "gpus",            "gpu_type",       "nodes",
                                      "mps",             "mps_gamma",      "mps_share_rule",
                                      "interference",
                                      "mig",             "memory_overflow", "price_per_hour",
                                      "price_source",    "host_to_gpu_gbps", "model_load_ms",
                                      NULL };
  static const char *const node_keys[] = { "gpus", "gpu_type", "mig", "price_per_hour",
                                           "price_source", NULL };
  int physical = 0;
  gint64 total = 0;
  const char *interference = NULL, *overflow = "error", *share_rule = "scalable";
  c->mps_gamma = 1.0;
  /* Model loads (controllers): PCIe 3.0 x16 moves about 12 GB/s host to
   * device from pinned memory (15.75 GB/s raw), the link of the V100 and
   * 1080 Ti hosts the profiles come from; docs/scenario.md. */
  double gbps = 12.0, load_ms = 0.0;
  if (!cs_json_expect_object(cl, sc->name, "cluster", error))
    return FALSE;
  /* The cluster's own fields are read each on its own: their problems are
   * listed together. */
  CsErrorList *fields = cs_error_list_new();
  cs_json_check_keys(cl, keys, sc->name, "cluster", cs_error_list_slot(fields));
  cs_json_read_bool(cl, "mps", FALSE, &c->mps, sc->name, "cluster", cs_error_list_slot(fields));
  cs_json_read_double(cl, "mps_gamma", FALSE, 0.01, 100, &c->mps_gamma, sc->name, "cluster",
                      cs_error_list_slot(fields));
  cs_json_read_string(cl, "mps_share_rule", FALSE, &share_rule, sc->name, "cluster",
                      cs_error_list_slot(fields));
  cs_json_read_string(cl, "interference", FALSE, &interference, sc->name, "cluster",
                      cs_error_list_slot(fields));
  cs_json_read_string(cl, "memory_overflow", FALSE, &overflow, sc->name, "cluster",
                      cs_error_list_slot(fields));
  cs_json_read_double(cl, "host_to_gpu_gbps", FALSE, 1e-6, 1e6, &gbps, sc->name, "cluster",
                      cs_error_list_slot(fields));
  cs_json_read_double(cl, "model_load_ms", FALSE, 0, 1e9, &load_ms, sc->name, "cluster",
                      cs_error_list_slot(fields));
  if (strcmp(overflow, "error") == 0)
    c->memory_overflow_fails = FALSE;
  else if (strcmp(overflow, "fail_replicas") == 0)
    c->memory_overflow_fails = TRUE;
  else
    cs_json_fail(cs_error_list_slot(fields), sc->name, "cluster.memory_overflow",
                 "expected \"error\" or \"fail_replicas\", got \"%s\"", overflow);
  if (strcmp(share_rule, "power") == 0)
    c->mps_share_power = TRUE;
  else if (strcmp(share_rule, "scalable") != 0)
    cs_json_fail(cs_error_list_slot(fields), sc->name, "cluster.mps_share_rule",
                 "expected \"scalable\" or \"power\", got \"%s\"", share_rule);
  if (!cs_error_list_finish(fields, sc->name, "cluster", error))
    return FALSE;
  c->host_to_gpu_bytes_per_s = gbps * 1e9;
  c->model_load_overhead_ns = llround(load_ms * 1e6);
  if (interference) {
    char *path = cs_scenario_resolve_data_file(sc, interference, "profiles",
                                               "cluster.interference", error);
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
  GArray *node_list = g_array_new(FALSE, TRUE, sizeof(CsNodeConfig));
  gboolean ok = TRUE;
  if (nodes) {
    if (cJSON_GetObjectItemCaseSensitive(cl, "gpus") ||
        cJSON_GetObjectItemCaseSensitive(cl, "gpu_type") ||
        cJSON_GetObjectItemCaseSensitive(cl, "mig") ||
        cJSON_GetObjectItemCaseSensitive(cl, "price_per_hour") ||
        cJSON_GetObjectItemCaseSensitive(cl, "price_source"))
      ok = cs_json_fail(error, sc->name, "cluster",
                        "give either \"nodes\" or \"gpus\" with \"gpu_type\" (and \"mig\", "
                        "\"price_per_hour\") for one node, not both");
    else if (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0)
      ok = cs_json_fail(error, sc->name, "cluster.nodes",
                        "expected a non-empty array of {\"gpus\": n, \"gpu_type\": name}, got %s",
                        cs_json_type_name(nodes));
    int i = 0;
    const cJSON *node;
    /* Every node is read, so that the problems of several are listed together. */
    CsErrorList *el = cs_error_list_new();
    if (ok) {
      cJSON_ArrayForEach(node, nodes)
      {
        char *jp = cs_json_path_index("cluster.nodes", i);
        int n = 0;
        const char *type = NULL;
        /* An unknown field stops the node (its fix changes the rest). */
        gboolean node_ok = cs_json_expect_object(node, sc->name, jp, cs_error_list_slot(el)) &&
                           cs_json_check_keys(node, node_keys, sc->name, jp,
                                              cs_error_list_slot(el));
        if (node_ok) {
          node_ok &= cs_json_read_int(node, "gpus", TRUE, 1, CS_MAX_GPUS, &n, sc->name, jp,
                                      cs_error_list_slot(el));
          node_ok &= cs_json_read_string(node, "gpu_type", TRUE, &type, sc->name, jp,
                                         cs_error_list_slot(el));
        }
        if (node_ok && !cs_profile_set_gpu_type(c->profiles, type)) {
          char *hint = cs_profile_set_suggest_gpu_type(c->profiles, type);
          node_ok = cs_json_fail(cs_error_list_slot(el), sc->name, jp,
                                 "gpu_type \"%s\" is not defined by any loaded profile%s", type,
                                 hint);
          g_free(hint);
        }
        node_ok = node_ok && add_gpus(sc, gpus, i, type, n, node, jp, &physical, &total, el) &&
                  read_price(sc, c, node, jp, type, n, node_list, cs_error_list_slot(el));
        ok &= node_ok;
        g_free(jp);
        i++;
      }
    }
    ok &= cs_error_list_finish(el, sc->name, "cluster.nodes", error);
    c->n_nodes = i;
  } else {
    int n = 0;
    const char *type = NULL;
    ok = cs_json_read_int(cl, "gpus", TRUE, 1, CS_MAX_GPUS, &n, sc->name, "cluster", error) &&
         cs_json_read_string(cl, "gpu_type", TRUE, &type, sc->name, "cluster", error);
    if (ok && !cs_profile_set_gpu_type(c->profiles, type)) {
      char *hint = cs_profile_set_suggest_gpu_type(c->profiles, type);
      ok = cs_json_fail(error, sc->name, "cluster.gpu_type",
                        "\"%s\" is not defined by any loaded profile%s", type, hint);
      g_free(hint);
    }
    CsErrorList *el = cs_error_list_new();
    ok = ok && add_gpus(sc, gpus, 0, type, n, cl, "cluster", &physical, &total, el);
    ok = cs_error_list_finish(el, sc->name, "cluster.mig", error) && ok &&
         read_price(sc, c, cl, "cluster", type, n, node_list, error);
    c->n_nodes = 1;
  }
  if (ok && total > CS_MAX_GPUS)
    ok = cs_json_fail(error, sc->name, "cluster",
                      "the cluster has %" G_GINT64_FORMAT " GPUs (MIG instances counted), more "
                      "than the limit of %d (2^20); it would need about %.3g GiB of memory for "
                      "them (%d bytes per GPU)",
                      (gint64)total, CS_MAX_GPUS,
                      (double)total * CS_BYTES_PER_GPU / (1024.0 * 1024.0 * 1024.0),
                      CS_BYTES_PER_GPU);
  c->n_gpus = (int)gpus->len;
  c->gpus = (CsGpuConfig *)g_array_free(gpus, FALSE);
  /* Only the nodes read whole: cs_config_free frees n_nodes of them. */
  c->n_nodes = MIN(c->n_nodes, (int)node_list->len);
  c->nodes = (CsNodeConfig *)g_array_free(node_list, FALSE);
  for (int g = 0; g < c->n_gpus; g++)
    c->has_mig |= c->gpus[g].mig_instance >= 0;
  return ok;
}

double cs_config_cluster_price(const CsConfig *c, char **note)
{
  double sum = 0.0;
  if (note)
    *note = NULL;
  for (int i = 0; i < c->n_nodes; i++) {
    if (isnan(c->nodes[i].price_per_hour)) {
      /* A fake 0 would make the cheapest cluster the one nobody priced. */
      if (note)
        *note = g_strdup_printf("cost unknown: GPU type %s (%s) has no price in its profile; "
                                "give %s.price_per_hour",
                                c->nodes[i].gpu_type, c->nodes[i].path, c->nodes[i].path);
      return NAN;
    }
    sum += c->nodes[i].gpus * c->nodes[i].price_per_hour;
  }
  /* The LLM deployments' GPUs are the cluster's too (scenario_llm.c). */
  for (int i = 0; i < c->n_llm; i++) {
    if (isnan(c->llm[i].price_per_hour)) {
      if (note)
        *note = g_strdup_printf("cost unknown: device %s of %s (%s) has no price_per_hour in "
                                "data/llm/models.json",
                                c->llm[i].device, c->llm[i].path, c->llm[i].name);
      return NAN;
    }
    sum += c->llm[i].gpus * c->llm[i].price_per_hour;
  }
  return sum;
}
