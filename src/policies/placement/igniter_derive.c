/* Measuring the simulator's GPU model the way iGniter's profiler measures a
 * GPU; see igniter_derive.h for what is measured and what stands in for what. */
#include "igniter_derive.h"

#include <math.h>

#include "profiles/share_rule.h"
#include <string.h>

#include "placement.h"
#include "gpu/gpu_exec.h"

/* Placeholders for quantities the simulator does not model (igniter_derive.h). */
#define NO_POWER_W 1.0        /* idle power = power cap = every power cell */
#define NO_FREQ_MHZ 1.0       /* maximum frequency = every frequency cell */
#define NO_BANDWIDTH 1.0      /* bytes per ms; unused: payloads are 0 */
#define SCAN_COPIES 5         /* iGniter scans 1..5 copies of a reference model */
#define SMS_PER_UNIT 2        /* MPS share step: 2 SMs (iGniter: 2.5 % of 80) */
#define DEFAULT_UNIT_PCT 2.5

static const int default_batches[CS_IGNITER_DERIVE_N_BATCHES] = { 1, 2, 4, 8, 16, 32, 64, 128 };
static const double default_shares[CS_IGNITER_DERIVE_N_SHARES] = { 10, 20, 30, 40, 50,
                                                                    60, 70, 80, 90, 100 };

/* What one measurement needs about a model: its profile on the GPU type and
 * its index in the interference tables (-1: none), as the engine looks them
 * up for a worker. */
typedef struct {
  const char *name;
  const CsModelProfile *prof;
  int tables_index;
} Target;

/* The measuring bench: the options and the GPU configuration every run uses. */
typedef struct {
  const CsIgniterDeriveOptions *opt;
  CsGpuExecConfig cfg;
} Bench;

/* The job the engine would start for a batch of t at share (fraction; >= 1
 * means no share): isolated time from the profile, demand = the nearest
 * profiled batch's WSM (gpus.c batch_demand and cs_engine_exec_ns). */
static CsGpuJobSpec job_spec(const Target *t, int batch, double share, int worker)
{
  const CsBatchPoint *pt = cs_model_profile_nearest_point(t->prof, batch);
  return (CsGpuJobSpec){ .model = t->tables_index,
                         .batch = batch,
                         .iso_ns = cs_model_profile_exec_ns(t->prof, batch),
                         .demand = pt ? pt->creq_pct[CS_CREQ_WSM] / 100.0 : NAN,
                         .share = share >= 1.0 ? 0.0 : share,
                         .worker = worker,
                         .fixed = 1.0 - cs_share_scalable_fraction(t->prof, batch) };
}

/* Runs copies identical batches started together on an idle GPU until all
 * finish; returns their mean completion time in ms. */
static double run_copies(const Bench *b, const Target *t, int batch, double share, int copies)
{
  CsGpuExec *gpu = cs_gpu_exec_new(&b->cfg);
  for (int k = 0; k < copies; k++) {
    CsGpuJobSpec spec = job_spec(t, batch, share, k);
    cs_gpu_exec_start(gpu, 0, (uint64_t)k, &spec);
  }
  double sum_ns = 0.0;
  int64_t now = 0;
  uint64_t id = 0;
  while (cs_gpu_exec_next(gpu, &now, &id)) {
    cs_gpu_exec_finish(gpu, now, id);
    sum_ns += (double)now;
  }
  cs_gpu_exec_free(gpu);
  return sum_ns / copies / 1e6;
}

/* The L2 utilisation (%) the GPU model attributes to a batch at share, as
 * gpu_exec computes it for the parametric fallback: the tables' L2 value,
 * else the fallback's default utilisation. */
static double l2_pct(const Bench *b, const Target *t, int batch, double share)
{
  double u = cs_interference_util(b->opt->interference, t->tables_index, CS_UTIL_L2, batch,
                                  share >= 1.0 ? 0.0 : share);
  if (isnan(u))
    u = b->cfg.fallback.default_util;
  return 100.0 * u;
}

static cJSON *number_array(const double *v, int n)
{
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

/* A table of nb rows of ns copies of x. */
static cJSON *constant_table(int nb, int ns, double x)
{
  cJSON *t = cJSON_CreateArray();
  for (int i = 0; i < nb; i++) {
    cJSON *row = cJSON_CreateArray();
    for (int j = 0; j < ns; j++)
      cJSON_AddItemToArray(row, cJSON_CreateNumber(x));
    cJSON_AddItemToArray(t, row);
  }
  return t;
}

static cJSON *measure_model(const Bench *b, const Target *t, const int *batches, int nb,
                            const double *shares, int ns, GError **error)
{
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "model", t->name);
  cJSON_AddNumberToObject(m, "kernels", 1);
  cJSON_AddNumberToObject(m, "input_bytes", 0);
  cJSON_AddNumberToObject(m, "output_bytes", 0);
  cJSON_AddNumberToObject(m, "idle_ms", 0);
  cJSON *lat = cJSON_AddArrayToObject(m, "gpu_latency_ms");
  cJSON *l2 = cJSON_CreateArray();
  for (int i = 0; i < nb; i++) {
    cJSON *row = cJSON_CreateArray();
    for (int j = 0; j < ns; j++) {
      double r = shares[j] / 100.0;
      cJSON_AddItemToArray(row, cJSON_CreateNumber(run_copies(b, t, batches[i], r, 1)));
      cJSON *pt = cJSON_CreateObject();
      cJSON_AddNumberToObject(pt, "batch", batches[i]);
      cJSON_AddNumberToObject(pt, "share_pct", shares[j]);
      cJSON_AddNumberToObject(pt, "l2_util_pct", MIN(100.0, l2_pct(b, t, batches[i], r)));
      cJSON_AddItemToArray(l2, pt);
    }
    cJSON_AddItemToArray(lat, row);
  }
  cJSON_AddItemToObject(m, "power_w", constant_table(nb, ns, NO_POWER_W));
  cJSON_AddItemToObject(m, "frequency_mhz", constant_table(nb, ns, NO_FREQ_MHZ));
  cJSON_AddItemToObject(m, "l2_points", l2);
  const int pb = CS_IGNITER_DERIVE_PAIR_BATCH;
  const double pr = CS_IGNITER_DERIVE_PAIR_SHARE_PCT / 100.0;
  double pair_l2 = MIN(100.0, l2_pct(b, t, pb, pr));
  if (!(pair_l2 > 0)) {
    /* k_L2 divides by it: a model the GPU model gives no L2 use cannot be
     * expressed in iGniter's terms. */
    g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PROFILE,
                "cannot derive iGniter's pair measurement for model \"%s\": the GPU model "
                "gives it an L2 utilisation of %g %% at batch %d, share %g %% (the interference "
                "file's L2 table), and iGniter's k_L2 divides by it",
                t->name, pair_l2, pb, CS_IGNITER_DERIVE_PAIR_SHARE_PCT);
    cJSON_Delete(m);
    return NULL;
  }
  cJSON *pair = cJSON_AddObjectToObject(m, "pair");
  cJSON_AddNumberToObject(pair, "l2_util_pct", pair_l2);
  cJSON_AddNumberToObject(pair, "active_ms_alone", run_copies(b, t, pb, pr, 1));
  cJSON_AddNumberToObject(pair, "active_ms_pair", run_copies(b, t, pb, pr, 2));
  cJSON_AddNumberToObject(pair, "frequency_pair_mhz", NO_FREQ_MHZ);
  return m;
}

/* The provenance text: inputs, what was measured, what stands in, what is
 * absent. No path or version of this machine or build goes in, so the text
 * (and the placement log that quotes it) is the same everywhere. */
static char *source_text(const CsIgniterDeriveOptions *opt, double gamma, double unit,
                         int sm_count, const CsGpuExecConfig *cfg)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(
    s,
    "Derived by clustersim from the simulator's own GPU execution model (src/gpu/gpu_exec: "
    "fluid processor sharing, MPS share caps, pairwise interference; docs/gpu-model.md), not "
    "measured on a GPU. Inputs: profiles %s, GPU type %s, MPS share rule %s (gamma %g), "
    "interference %s. ",
    opt->profile_label ? opt->profile_label : "(unnamed)", opt->gpu_type,
    opt->mps_share_power ? "power" : "scalable", gamma,
    opt->interference_label ? opt->interference_label
    : opt->interference     ? "(unnamed file)"
                            : "none (the built-in fallback)");
  g_string_append_printf(
    s,
    "Measured as iGniter's profiler does, in MPS mode: gpu_latency_ms = completion time of one "
    "batch alone on an idle GPU at each grid batch and MPS share (isolated latency from the "
    "profile, compute demand = WSM of the nearest profiled batch); pair = two copies of the "
    "model at batch %d and %g %% each, started together: mean completion time in the pair "
    "(active_ms_pair) and alone (active_ms_alone). ",
    CS_IGNITER_DERIVE_PAIR_BATCH, CS_IGNITER_DERIVE_PAIR_SHARE_PCT);
  g_string_append_printf(
    s,
    "Stand-in for L2: the simulator has no L2 cache model; l2_util_pct is the L2 utilisation "
    "the GPU model attributes to the batch at that share (the interference file's L2 table, "
    "else the fallback's default utilisation %g %%), so iGniter's k_L2 = (pair / alone - 1) / "
    "pair.l2_util_pct reproduces the measured pair slowdown through its L2 line. ",
    100.0 * cfg->fallback.default_util);
  g_string_append_printf(
    s,
    "Absent from the simulator, written as placeholders: power and frequency (no power or "
    "throttling model: every power_w equals idle_power_w = power_cap_w = %g W, every "
    "frequency_mhz equals max_frequency_mhz = %g MHz, so the predictor never throttles); "
    "kernel scheduling delay (no gaps between kernels: idle_ms and scan.idle_ms_per_kernel "
    "are 0, kernels = 1); host-device copies (included in the profile's latency: "
    "input_bytes = output_bytes = 0, pcie_bandwidth_bytes_per_ms = %g is unused). ",
    NO_POWER_W, NO_FREQ_MHZ, NO_BANDWIDTH);
  if (sm_count > 0)
    g_string_append_printf(s, "share_unit_pct = %d SMs of the GPU type's %d = %g %%.",
                           SMS_PER_UNIT, sm_count, unit);
  else
    g_string_append_printf(s, "share_unit_pct = iGniter's %g %% (the profile gives no SM "
                              "count).", unit);
  return g_string_free(s, FALSE);
}

static gboolean check_grid(const CsIgniterDeriveOptions *opt, GError **error)
{
  if (opt->batches) {
    gboolean ok = opt->n_batches >= 3 && opt->batches[0] >= 1;
    for (int i = 1; ok && i < opt->n_batches; i++)
      ok = opt->batches[i] > opt->batches[i - 1];
    if (!ok) {
      g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PARAMS,
                  "grid batches: expected at least 3 increasing batch sizes >= 1");
      return FALSE;
    }
  }
  if (opt->shares_pct) {
    gboolean ok = opt->n_shares >= 3 && opt->shares_pct[0] > 0 &&
                  opt->shares_pct[opt->n_shares - 1] <= 100;
    for (int i = 1; ok && i < opt->n_shares; i++)
      ok = opt->shares_pct[i] > opt->shares_pct[i - 1];
    if (!ok) {
      g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PARAMS,
                  "grid shares: expected at least 3 increasing MPS shares in (0, 100] %%");
      return FALSE;
    }
  }
  return TRUE;
}

/* The models to measure, checked: each has a profile on the GPU type and is
 * named once. Returns the array (g_free) and its length, or NULL. */
static Target *targets(const CsIgniterDeriveOptions *opt, int *n_out, GError **error)
{
  GPtrArray *names = g_ptr_array_new();
  if (opt->models) {
    for (int i = 0; i < opt->n_models; i++)
      g_ptr_array_add(names, (gpointer)opt->models[i]);
  } else {
    int n = cs_profile_set_n_models(opt->profiles);
    for (int i = 0; i < n; i++) {
      const CsModelProfile *p = cs_profile_set_model(opt->profiles, i);
      if (strcmp(p->gpu_type, opt->gpu_type) == 0)
        g_ptr_array_add(names, p->model);
    }
  }
  int n = (int)names->len;
  Target *t = g_new0(Target, MAX(n, 1));
  gboolean ok = TRUE;
  if (n == 0) {
    ok = FALSE;
    g_set_error(error, CS_PLACEMENT_ERROR,
                opt->models ? CS_PLACEMENT_ERROR_PARAMS : CS_PLACEMENT_ERROR_PROFILE,
                opt->models ? "no model to derive iGniter's measurements for"
                            : "the profiles have no model on GPU type \"%s\"",
                opt->gpu_type);
  }
  for (int i = 0; ok && i < n; i++) {
    const char *name = g_ptr_array_index(names, i);
    for (int j = 0; ok && j < i; j++)
      if (strcmp(t[j].name, name) == 0) {
        ok = FALSE;
        g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PARAMS,
                    "model \"%s\" is listed twice", name);
      }
    t[i].name = name;
    t[i].prof = cs_profile_set_lookup(opt->profiles, opt->gpu_type, name);
    t[i].tables_index = cs_interference_set_find(opt->interference, name);
    if (ok && !t[i].prof) {
      ok = FALSE;
      g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PROFILE,
                  "no profile of model \"%s\" on GPU type \"%s\" to derive iGniter's "
                  "measurements from",
                  name, opt->gpu_type);
    }
  }
  g_ptr_array_unref(names);
  if (!ok) {
    g_free(t);
    return NULL;
  }
  *n_out = n;
  return t;
}

cJSON *cs_igniter_derive_document(const CsIgniterDeriveOptions *opt, GError **error)
{
  g_return_val_if_fail(opt != NULL && opt->profiles != NULL && opt->gpu_type != NULL, NULL);
  const CsGpuType *type = cs_profile_set_gpu_type(opt->profiles, opt->gpu_type);
  if (!type) {
    g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PROFILE,
                "GPU type \"%s\" is not in the profiles", opt->gpu_type);
    return NULL;
  }
  double gamma = opt->mps_gamma == 0 ? 1.0 : opt->mps_gamma;
  if (!(gamma > 0) || !isfinite(gamma)) {
    g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PARAMS,
                "MPS gamma: expected a number > 0, got %g", opt->mps_gamma);
    return NULL;
  }
  if (!check_grid(opt, error))
    return NULL;
  int n = 0;
  Target *t = targets(opt, &n, error);
  if (!t)
    return NULL;
  const int *batches = opt->batches ? opt->batches : default_batches;
  int nb = opt->batches ? opt->n_batches : CS_IGNITER_DERIVE_N_BATCHES;
  const double *shares = opt->shares_pct ? opt->shares_pct : default_shares;
  int ns = opt->shares_pct ? opt->n_shares : CS_IGNITER_DERIVE_N_SHARES;

  /* The GPU as the engine configures it for placed replicas under MPS. */
  Bench b = { .opt = opt };
  cs_gpu_exec_config_init(&b.cfg, opt->interference);
  b.cfg.sm_count = type->sm_count;
  b.cfg.memory_bytes = type->memory_bytes;
  b.cfg.mode = CS_GPU_MPS;
  b.cfg.gamma = gamma;
  b.cfg.share_rule = opt->mps_share_power ? CS_SHARE_RULE_POWER : CS_SHARE_RULE_SCALABLE;

  double unit = type->sm_count > 0 ? 100.0 * SMS_PER_UNIT / type->sm_count : DEFAULT_UNIT_PCT;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "format", CS_IGNITER_FORMAT);
  cJSON_AddNumberToObject(doc, "version", CS_IGNITER_FORMAT_VERSION);
  char *src = source_text(opt, gamma, unit, type->sm_count, &b.cfg);
  cJSON_AddStringToObject(doc, "source", src);
  g_free(src);
  char *desc = g_strdup_printf("GPU type %s as the simulator executes it (%s)", opt->gpu_type,
                               type->description && *type->description ? type->description
                                                                       : "no description");
  cJSON_AddStringToObject(doc, "description", desc);
  g_free(desc);
  cJSON_AddStringToObject(doc, "gpu_type", opt->gpu_type);
  cJSON *hw = cJSON_AddObjectToObject(doc, "hardware");
  cJSON_AddNumberToObject(hw, "max_frequency_mhz", NO_FREQ_MHZ);
  cJSON_AddNumberToObject(hw, "power_cap_w", NO_POWER_W);
  cJSON_AddNumberToObject(hw, "idle_power_w", NO_POWER_W);
  cJSON_AddNumberToObject(hw, "pcie_bandwidth_bytes_per_ms", NO_BANDWIDTH);
  cJSON_AddNumberToObject(hw, "share_unit_pct", unit);
  /* The scan: nothing in the simulator varies with the number of copies
   * here (no power, no frequency, no scheduling gaps), so it is written,
   * not run. */
  cJSON *scan = cJSON_AddObjectToObject(doc, "scan");
  cJSON_AddStringToObject(scan, "model", t[0].name);
  double copies[SCAN_COPIES], power[SCAN_COPIES], freq[SCAN_COPIES], idle[SCAN_COPIES];
  for (int k = 0; k < SCAN_COPIES; k++) {
    copies[k] = k + 1;
    power[k] = NO_POWER_W;
    freq[k] = NO_FREQ_MHZ;
    idle[k] = 0.0;
  }
  cJSON_AddItemToObject(scan, "copies", number_array(copies, SCAN_COPIES));
  cJSON_AddItemToObject(scan, "power_w", number_array(power, SCAN_COPIES));
  cJSON_AddItemToObject(scan, "frequency_mhz", number_array(freq, SCAN_COPIES));
  cJSON_AddItemToObject(scan, "idle_ms_per_kernel", number_array(idle, SCAN_COPIES));
  cJSON *grid = cJSON_AddObjectToObject(doc, "grid");
  double *bd = g_new(double, nb);
  for (int i = 0; i < nb; i++)
    bd[i] = batches[i];
  cJSON_AddItemToObject(grid, "batches", number_array(bd, nb));
  cJSON_AddItemToObject(grid, "shares_pct", number_array(shares, ns));
  g_free(bd);
  cJSON *models = cJSON_AddArrayToObject(doc, "models");
  for (int i = 0; i < n; i++) {
    cJSON *m = measure_model(&b, &t[i], batches, nb, shares, ns, error);
    if (!m) {
      cJSON_Delete(doc);
      g_free(t);
      return NULL;
    }
    cJSON_AddItemToArray(models, m);
  }
  g_free(t);
  return doc;
}

CsIgniterCoefs *cs_igniter_derive(const CsIgniterDeriveOptions *opt, GError **error)
{
  cJSON *doc = cs_igniter_derive_document(opt, error);
  if (!doc)
    return NULL;
  char *name = g_strdup_printf("iGniter measurements derived for GPU type %s", opt->gpu_type);
  CsIgniterCoefs *c = cs_igniter_coefs_load_json(doc, name, error);
  g_free(name);
  cJSON_Delete(doc);
  return c;
}
