/* iGniter placement: parameters, provisioning and the mapping onto a fixed
 * cluster; see igniter.h for the algorithm and docs/policies.md for the
 * choices made where the sources are vague.
 *
 *   "placement": {"policy": "igniter", "coefficients": "igniter_v100_coefficients",
 *                 "slo_fraction": 0.5, "split": true}
 *
 * "coefficients" is a clustersim-igniter file (a path as given, else a name
 * in the data directories' profiles/, with or without ".json") or the
 * document itself as a JSON object. Without it, iGniter's own measurements
 * (igniter_v100_coefficients) are used when they cover the models and the
 * cluster's GPU type; otherwise they are derived from the simulator's GPU
 * model with the scenario's profiles and cluster settings
 * (igniter_derive.h), and the log says so.
 */
#include "igniter.h"
#include "igniter_derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/data_files.h"
#include "place_common.h"
#include "placement_policies.h"

#define DEFAULT_COEFFICIENTS "igniter_v100_coefficients"
#define SHARE_EPS 1e-9 /* slack when comparing a sum of shares with 100 % */

/* One workload: a model, or one part of a split model. */
typedef struct {
  int model;        /* index into the input's models */
  int part;         /* 0..parts-1 */
  const CsIgniterModel *coef;
  double rate_rps;  /* of this part */
  double target_ms; /* slo_fraction x SLO */
  int batch;
  double r_lower;   /* % */
  double solo_share; /* share it needs alone (>= r_lower), % */
} Workload;

/* One workload on a planned GPU. */
typedef struct {
  int w;         /* index into the workloads */
  double share;  /* % */
} Slot;

void cs_igniter_info_clear(CsIgniterInfo *info)
{
  g_free(info->parts);
  g_free(info->batch);
  g_free(info->r_lower);
  memset(info, 0, sizeof *info);
}

/* iGniter's batch: the batch that fills at rate R (req/ms) while the previous
 * one loads, within the target: ceil(t R B / (B + d_in R)). The operations
 * are in iGniter's order so the rounding is the same. */
static int batch_for(double target_ms, double rate_rps, const CsIgniterModel *m,
                     const CsIgniterCoefs *c)
{
  double r = rate_rps / 1000.0;
  double b = ceil(target_ms * r * c->bandwidth / (c->bandwidth + m->input_bytes * r));
  if (!(b >= 1.0))
    return 1;
  return b > (double)(1 << 20) ? 1 << 20 : (int)b;
}

/* r_lower: the solo active-time model solved for the share that meets the
 * target, rounded up to the unit: ceil((gamma / delta - k4) / unit) * unit
 * with gamma = k1 b^2 + k2 b + k3 and delta = target - idle - transfer - k5.
 * Returns INFINITY when delta <= 0 (the target cannot be met at any share). */
static double r_lower_for(double target_ms, int batch, const CsIgniterModel *m,
                          const CsIgniterCoefs *c)
{
  const double *k = m->act;
  double b = batch;
  double gamma = k[0] * b * b + k[1] * b + k[2];
  double delta = target_ms - m->idle_ms - b * (m->input_bytes + m->output_bytes) / c->bandwidth -
                 k[4];
  if (!(delta > 0))
    return INFINITY;
  double r = ceil((gamma / delta - k[3]) / c->share_unit_pct) * c->share_unit_pct;
  /* A share below one unit (the formula allows it for tiny batches) is no
   * MPS setting; the smallest one is. */
  return MAX(r, c->share_unit_pct);
}

static double slot_sum(const Slot *s, int n)
{
  double t = 0.0;
  for (int i = 0; i < n; i++)
    t += s[i].share;
  return t;
}

/* iGniter's alloc_gpus: slots[0..n-1] are a GPU's workloads, the last one
 * just added. While the shares sum to <= 100 %, every workload predicted to
 * miss its target gets one more unit. Returns TRUE when all targets hold with
 * a sum <= 100 % (slots then hold the new shares). */
static gboolean raise_shares(const CsIgniterCoefs *c, const Workload *wl, Slot *slots, int n,
                             CsIgniterWorkload *scratch, CsIgniterPrediction *pred)
{
  if (slot_sum(slots, n) > 100.0 + SHARE_EPS)
    return FALSE;
  gboolean raised = TRUE;
  while (raised && slot_sum(slots, n) <= 100.0 + SHARE_EPS) {
    raised = FALSE;
    for (int i = 0; i < n; i++)
      scratch[i] = (CsIgniterWorkload){ .model = wl[slots[i].w].coef,
                                        .batch = wl[slots[i].w].batch,
                                        .share_pct = slots[i].share };
    cs_igniter_predict(c, scratch, n, pred);
    for (int i = 0; i < n; i++) {
      if (pred[i].latency_ms > wl[slots[i].w].target_ms) {
        slots[i].share += c->share_unit_pct;
        raised = TRUE;
      }
    }
  }
  return slot_sum(slots, n) <= 100.0 + SHARE_EPS;
}

/* Fills w's batch, r_lower and solo share for its rate; FALSE when it cannot
 * meet its target alone on a GPU. */
static gboolean size_workload(Workload *w, const CsIgniterCoefs *c)
{
  w->batch = batch_for(w->target_ms, w->rate_rps, w->coef, c);
  w->r_lower = r_lower_for(w->target_ms, w->batch, w->coef, c);
  if (!(w->r_lower <= 100.0 + SHARE_EPS))
    return FALSE;
  Slot s = { .w = 0, .share = w->r_lower };
  CsIgniterWorkload scratch;
  CsIgniterPrediction pred;
  if (!raise_shares(c, w, &s, 1, &scratch, &pred))
    return FALSE;
  w->solo_share = s.share;
  return TRUE;
}

static int compare_workloads(const void *a, const void *b)
{
  const Workload *x = a, *y = b;
  if (x->r_lower != y->r_lower)
    return x->r_lower < y->r_lower ? 1 : -1; /* descending */
  if (x->model != y->model)
    return x->model < y->model ? -1 : 1;
  return (x->part > y->part) - (x->part < y->part);
}

/* Per model: its workloads (appended to wl). Logs what it did. */
static void split_model(const CsPlacementProblem *in, const CsIgniterOptions *opt, int m,
                        const CsIgniterModel *coef, GArray *wl, GString *log, CsIgniterInfo *info)
{
  const CsPlacementModel *model = &in->models[m];
  Workload w = { .model = m, .coef = coef, .target_ms = opt->slo_fraction * model->slo_ms };
  int parts = 0;
  int max_parts = opt->split ? CS_IGNITER_MAX_PARTS : 1;
  for (int k = 1; k <= max_parts; k++) {
    w.rate_rps = model->rate_rps / k;
    if (size_workload(&w, opt->coefs)) {
      parts = k;
      break;
    }
    if (w.batch == 1)
      break; /* smaller parts keep batch 1 and fail the same way */
  }
  if (parts == 0) {
    Workload one = w;
    one.rate_rps = model->rate_rps;
    one.batch = batch_for(one.target_ms, one.rate_rps, coef, opt->coefs);
    one.r_lower = r_lower_for(one.target_ms, one.batch, coef, opt->coefs);
    char *why = !isfinite(one.r_lower)
                  ? g_strdup("no share does: idle, transfer and fixed active time exceed it")
                : one.r_lower > 100.0 + SHARE_EPS
                  ? g_strdup_printf("r_lower %.1f %% > 100 %%", one.r_lower)
                  : g_strdup_printf("r_lower %.1f %%, but with the frequency drop the predicted "
                                    "latency exceeds it even at 100 %%",
                                    one.r_lower);
    g_string_append_printf(log,
                           "%s: not served, batch %d cannot meet the target %.3f ms (SLO %.3f "
                           "ms x %.3g) alone on a GPU: %s",
                           model->name, one.batch, one.target_ms, model->slo_ms,
                           opt->slo_fraction, why);
    if (opt->split)
      g_string_append_printf(log, "; nor could up to %d equal parts\n", CS_IGNITER_MAX_PARTS);
    else
      g_string_append(log, " (\"split\" is off)\n");
    g_free(why);
    return;
  }
  if (parts == 1)
    g_string_append_printf(log, "%s: batch %d, r_lower %.1f %% (target %.3f ms, %.2f req/s)\n",
                           model->name, w.batch, w.r_lower, w.target_ms, w.rate_rps);
  else
    g_string_append_printf(log,
                           "%s: split into %d parts of %.2f req/s: batch %d, r_lower %.1f %% "
                           "each (target %.3f ms)\n",
                           model->name, parts, w.rate_rps, w.batch, w.r_lower, w.target_ms);
  if (info) {
    info->parts[m] = parts;
    info->batch[m] = w.batch;
    info->r_lower[m] = w.r_lower;
  }
  for (int k = 0; k < parts; k++) {
    w.part = k;
    g_array_append_val(wl, w);
  }
}

/* The provisioning loop: returns the planned GPUs (GArray of GArray of Slot). */
static GPtrArray *provision(const CsIgniterCoefs *c, const Workload *wl, int n_wl)
{
  GPtrArray *gpus = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  Slot *trial = g_new(Slot, n_wl + 1), *best = g_new(Slot, n_wl + 1);
  CsIgniterWorkload *scratch = g_new(CsIgniterWorkload, n_wl + 1);
  CsIgniterPrediction *pred = g_new(CsIgniterPrediction, n_wl + 1);
  for (int i = 0; i < n_wl; i++) {
    int chosen = -1;
    double least = INFINITY;
    for (guint j = 0; j < gpus->len; j++) {
      GArray *g = g_ptr_array_index(gpus, j);
      int n = (int)g->len;
      memcpy(trial, g->data, sizeof(Slot) * (size_t)n);
      trial[n] = (Slot){ .w = i, .share = wl[i].r_lower };
      double before = slot_sum(trial, n);
      if (!raise_shares(c, wl, trial, n + 1, scratch, pred))
        continue;
      double growth = slot_sum(trial, n + 1) - before;
      if (growth < least) {
        least = growth;
        chosen = (int)j;
        memcpy(best, trial, sizeof(Slot) * (size_t)(n + 1));
      }
    }
    if (chosen < 0) {
      GArray *g = g_array_new(FALSE, FALSE, sizeof(Slot));
      Slot s = { .w = i, .share = wl[i].solo_share };
      g_array_append_val(g, s);
      g_ptr_array_add(gpus, g);
    } else {
      GArray *g = g_ptr_array_index(gpus, chosen);
      g_array_set_size(g, g->len + 1);
      memcpy(g->data, best, sizeof(Slot) * g->len);
    }
  }
  g_free(trial);
  g_free(best);
  g_free(scratch);
  g_free(pred);
  return gpus;
}

/* iGniter provisions identical GPUs: one set of coefficients, measured on one
 * GPU type, predicts every GPU of its plan, and the plan's GPUs are
 * interchangeable. On a mixed cluster it could only use the GPUs of one type
 * and leave the others idle, which reads as a policy result when it is a
 * limit of the algorithm: refuse, naming the first GPU that differs. */
static gboolean require_one_type(const CsPlacementProblem *in, GError **error)
{
  for (int g = 1; g < in->n_gpus; g++)
    if (strcmp(in->gpus[g].gpu_type, in->gpus[0].gpu_type) != 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "placement \"igniter\" provisions GPUs of one type (its coefficients are "
                  "measured on one GPU type and its plan treats GPUs as identical), but GPU 0 "
                  "is \"%s\" and GPU %d is \"%s\": use a cluster of one GPU type",
                  in->gpus[0].gpu_type, g, in->gpus[g].gpu_type);
      return FALSE;
    }
  return TRUE;
}

CsPlacement *cs_igniter_place(const CsPlacementProblem *in, const CsIgniterOptions *opt,
                              CsIgniterInfo *info, GError **error)
{
  const CsIgniterCoefs *c = opt->coefs;
  g_return_val_if_fail(c != NULL && opt->slo_fraction > 0 && opt->slo_fraction <= 1, NULL);
  if (info)
    memset(info, 0, sizeof *info);
  if (!require_one_type(in, error))
    return NULL;
  if (info) {
    memset(info, 0, sizeof *info);
    info->parts = g_new0(int, MAX(in->n_models, 1));
    info->batch = g_new0(int, MAX(in->n_models, 1));
    info->r_lower = g_new0(double, MAX(in->n_models, 1));
  }
  /* Every model needs coefficients, even if the cluster is empty: a typo in
   * a model name should not depend on the cluster size. */
  for (int m = 0; m < in->n_models; m++) {
    if (!cs_igniter_coefs_find(c, in->models[m].name)) {
      GString *known = g_string_new(NULL);
      for (int i = 0; i < c->n_models; i++)
        g_string_append_printf(known, "%s\"%s\"", i ? ", " : "", c->models[i].name);
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "placement \"igniter\": no iGniter coefficients for model \"%s\" (the "
                  "coefficients have %s)",
                  in->models[m].name, known->str);
      g_string_free(known, TRUE);
      if (info)
        cs_igniter_info_clear(info);
      return NULL;
    }
  }
  /* The cluster's GPUs the plan can use: all of them (one type, checked above),
   * when they are of the coefficients' type. */
  int *usable = g_new(int, MAX(in->n_gpus, 1));
  int n_usable = 0;
  for (int g = 0; g < in->n_gpus; g++)
    if (strcmp(in->gpus[g].gpu_type, c->gpu_type) == 0)
      usable[n_usable++] = g;
  if (in->n_gpus > 0 && n_usable == 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "placement \"igniter\": the coefficients were measured on GPU type \"%s\", "
                "but the cluster has none (GPU 0 is \"%s\")",
                c->gpu_type, in->gpus[0].gpu_type);
    g_free(usable);
    if (info)
      cs_igniter_info_clear(info);
    return NULL;
  }
  CsPlacement *p = cs_placement_new(in->n_models);
  /* Notes go to a GString first (split_model appends to it), then to p. */
  GString *log = g_string_new(opt->log_prefix ? opt->log_prefix : "");
  g_string_append_printf(log,
                         "igniter: GPU type %s, target = %.3g x SLO, share unit %.3g %%%s\n",
                         c->gpu_type, opt->slo_fraction, c->share_unit_pct,
                         opt->split ? "" : ", no splitting");
  if (in->n_gpus == 0) {
    g_string_append(log, "the cluster has no GPU: nothing placed\n");
    cs_placement_log(p, "%s", log->str);
    g_string_free(log, TRUE);
    g_free(usable);
    return p;
  }

  GArray *wla = g_array_new(FALSE, FALSE, sizeof(Workload));
  for (int m = 0; m < in->n_models; m++)
    split_model(in, opt, m, cs_igniter_coefs_find(c, in->models[m].name), wla, log, info);
  Workload *wl = (Workload *)(void *)wla->data;
  int n_wl = (int)wla->len;
  if (n_wl > 1) /* an empty array's data is NULL, which qsort may not be given */
    qsort(wl, (size_t)n_wl, sizeof *wl, compare_workloads);
  GPtrArray *plan = provision(c, wl, n_wl);
  cs_placement_set_gpus_needed(p, (int)plan->len);
  g_string_append_printf(log, "gpus_needed: %u\n", plan->len);

  /* Map plan GPU j onto usable[j] while there are GPUs; predict each GPU's
   * final co-location for the expected goodput. */
  int *kept = g_new0(int, MAX(in->n_models, 1)); /* replicas kept per model */
  double *goodput = g_new0(double, MAX(in->n_models, 1)); /* predicted, per model */
  CsIgniterWorkload *scratch = g_new(CsIgniterWorkload, MAX(n_wl, 1));
  CsIgniterPrediction *pred = g_new(CsIgniterPrediction, MAX(n_wl, 1));
  int mapped = MIN((int)plan->len, n_usable);
  for (int j = 0; j < mapped; j++) {
    GArray *g = g_ptr_array_index(plan, j);
    const Slot *s = (const Slot *)(const void *)g->data;
    int n = (int)g->len;
    for (int i = 0; i < n; i++)
      scratch[i] = (CsIgniterWorkload){ .model = wl[s[i].w].coef, .batch = wl[s[i].w].batch,
                                        .share_pct = s[i].share };
    cs_igniter_predict(c, scratch, n, pred);
    g_string_append_printf(log, "GPU %d:", usable[j]);
    for (int i = 0; i < n; i++) {
      const Workload *w = &wl[s[i].w];
      cs_placement_add(p, w->model, usable[j], w->batch, s[i].share / 100.0);
      goodput[w->model] += pred[i].throughput_rps;
      kept[w->model]++;
      g_string_append_printf(log, "%s %s b%d %.1f %% (predicted %.2f ms, %.1f req/s)",
                             i ? "," : "", in->models[w->model].name, w->batch, s[i].share,
                             pred[i].latency_ms, pred[i].throughput_rps);
    }
    g_string_append_c(log, '\n');
  }
  if ((int)plan->len > n_usable) {
    g_string_append_printf(log,
                           "the cluster has %d usable GPU%s, fewer than the %u the plan needs: "
                           "replicas planned for GPUs %d..%u of the plan are dropped\n",
                           n_usable, n_usable == 1 ? "" : "s", plan->len, n_usable,
                           plan->len - 1);
    for (int m = 0; m < in->n_models; m++) {
      int planned = 0;
      for (int i = 0; i < n_wl; i++)
        planned += wl[i].model == m;
      if (planned > 0 && kept[m] == 0)
        g_string_append_printf(log, "%s: not served, all its replicas were planned for "
                                       "GPUs beyond the cluster\n",
                               in->models[m].name);
      else if (kept[m] < planned)
        g_string_append_printf(log, "%s: %d of its %d replicas kept\n", in->models[m].name,
                               kept[m], planned);
    }
  }
  for (int m = 0; m < in->n_models; m++)
    cs_placement_set_expected_goodput(p, m, MIN(in->models[m].rate_rps, goodput[m]));
  cs_placement_log(p, "%s", log->str);
  g_string_free(log, TRUE);
  g_free(goodput);
  if (info) {
    info->gpus_planned = (int)plan->len;
    info->gpus_used = mapped;
  }
  g_free(kept);
  g_free(scratch);
  g_free(pred);
  g_free(usable);
  g_ptr_array_unref(plan);
  g_array_unref(wla);
  return p;
}

/* ---- parameters ---------------------------------------------------------------- */

/* A coefficients name: as given when that path exists (the reader refuses a
 * directory or FIFO by name, rather than "not found"), else
 * <data dir>/profiles/<name>[.json] in the order of cs_data_dirs()
 * ($CLUSTERSIM_DATA_DIR, the installed data directory, the source tree's).
 * Returns the path (g_free) or NULL. */
static char *resolve_coefficients(const char *name)
{
  if (g_file_test(name, G_FILE_TEST_EXISTS))
    return g_strdup(name);
  if (g_path_is_absolute(name))
    return NULL;
  return cs_data_file_find("profiles", name);
}

static CsIgniterCoefs *load_coefficients(CsParams *params, GError **error)
{
  CsParams *v = cs_params_get(params, "coefficients");
  const char *file = cs_params_file(params);
  CsIgniterCoefs *c = NULL;
  const char *name = NULL;
  if (cs_params_kind(v) == CS_PARAMS_OBJECT) {
    /* An inline document: parsed by the coefficients' own reader, which
     * names errors after "file: path". */
    char *text = cs_params_to_json(v);
    char *label = g_strdup_printf("%s: %s", file, cs_params_path(v));
    cJSON *doc = cJSON_Parse(text);
    c = cs_igniter_coefs_load_json(doc, label, error);
    cJSON_Delete(doc);
    g_free(label);
    g_free(text);
  } else if (!(cs_params_kind(v) == CS_PARAMS_STRING && cs_params_as_string(v, &name, NULL))) {
    cs_params_fail(v, error,
                   "expected the name of a clustersim-igniter file or the document as an "
                   "object, got %s",
                   cs_params_kind_name(v));
  } else {
    char *found = resolve_coefficients(name);
    if (!found)
      cs_params_fail(v, error,
                     "coefficients file \"%s\" not found (looked as given and in the data "
                     "directory's profiles/; set CLUSTERSIM_DATA_DIR to add one)",
                     name);
    else {
      GError *local = NULL;
      c = cs_igniter_coefs_load_file(found, &local);
      /* A file that cannot be read (a directory, a FIFO) is named at the
       * field that names it; content errors already name file and path. */
      if (!c && g_error_matches(local, CS_ERROR, CS_ERROR_IO)) {
        cs_params_fail(v, error, "%s", local->message);
        g_error_free(local);
      } else if (!c) {
        g_propagate_error(error, local);
      }
    }
    g_free(found);
  }
  return c;
}

/* Why the shipped measurements c do not serve this input, or NULL when they
 * do: every model is in them and the cluster has a GPU of their type.
 * g_free the result. */
static char *not_covered(const CsIgniterCoefs *c, const CsPlacementProblem *in)
{
  gboolean type = FALSE;
  for (int g = 0; g < in->n_gpus && !type; g++)
    type = strcmp(in->gpus[g].gpu_type, c->gpu_type) == 0;
  if (!type)
    return g_strdup_printf("they are of GPU type %s", c->gpu_type);
  for (int m = 0; m < in->n_models; m++)
    if (!cs_igniter_coefs_find(c, in->models[m].name))
      return g_strdup_printf("they have no model %s", in->models[m].name);
  return NULL;
}

/* Measures the simulator's GPU model for the models of in on the GPU type of
 * the cluster's first GPU, with the cluster's settings (igniter_derive.h).
 * why says why the shipped file was not used; the log gets a line saying
 * the coefficients are derived. */
static CsIgniterCoefs *derive_coefficients(const CsPlacementProblem *in, const char *why,
                                           GString *log, GError **error)
{
  if (!in->profiles) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "placement \"igniter\": no \"coefficients\" given, the shipped measurements "
                "(%s) do not serve this cluster (%s), and there are no profiles to derive them "
                "from",
                DEFAULT_COEFFICIENTS, why);
    return NULL;
  }
  const CsPlacementGpuModel defaults = { .mps = TRUE, .mps_gamma = 1.0 };
  const CsPlacementGpuModel *gm = in->gpu_model ? in->gpu_model : &defaults;
  /* Each model once: two client streams of one model share its measurements. */
  const char **names = g_new(const char *, MAX(in->n_models, 1));
  int n = 0;
  for (int m = 0; m < in->n_models; m++) {
    gboolean seen = FALSE;
    for (int k = 0; k < n && !seen; k++)
      seen = strcmp(names[k], in->models[m].name) == 0;
    if (!seen)
      names[n++] = in->models[m].name;
  }
  const char *interference = gm->interference_name ? gm->interference_name
                             : gm->interference    ? "(unnamed file)"
                                                   : "none (the built-in fallback)";
  CsIgniterDeriveOptions d = { .profiles = in->profiles,
                               .gpu_type = in->gpus[0].gpu_type,
                               .models = names,
                               .n_models = n,
                               .mps_gamma = gm->mps_gamma,
                               .mps_share_power = gm->mps_share_power,
                               .interference = gm->interference,
                               .profile_label = "of the scenario",
                               .interference_label = interference };
  GError *err = NULL;
  CsIgniterCoefs *c = cs_igniter_derive(&d, &err);
  g_free(names);
  if (!c) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "placement \"igniter\": deriving its measurements from the simulator's GPU "
                "model: %s",
                err->message);
    g_error_free(err);
    return NULL;
  }
  g_string_append_printf(log,
                         "igniter: coefficients derived from the simulator's GPU model (no "
                         "\"coefficients\" given; the shipped %s do not serve: %s): GPU type "
                         "%s, MPS share rule %s (gamma %g), interference %s; measured solo "
                         "latency over batch x MPS share and one pair per model; no L2, "
                         "power/frequency or scheduling model (see `clustersim derive-igniter`)\n",
                         DEFAULT_COEFFICIENTS, why, d.gpu_type,
                         gm->mps_share_power ? "power" : "scalable",
                         gm->mps_gamma > 0 ? gm->mps_gamma : 1.0, interference);
  if (!gm->mps)
    g_string_append(log, "igniter: the cluster runs without MPS (cluster.mps false): the "
                         "simulator does not apply the shares of this plan\n");
  return c;
}

/* The coefficients: the file "coefficients" names (or holds) when given;
 * else the shipped measurements when they cover the models and the
 * cluster's GPU type (or the cluster has no GPU), else derived from the
 * simulator's GPU model. Lines for the log go to log. */
static CsIgniterCoefs *coefficients_for(const CsPlacementProblem *in, CsParams *params,
                                        GString *log, GError **error)
{
  if (cs_params_has(params, "coefficients"))
    return load_coefficients(params, error);
  char *found = resolve_coefficients(DEFAULT_COEFFICIENTS);
  char *why = NULL;
  if (found) {
    CsIgniterCoefs *c = cs_igniter_coefs_load_file(found, error);
    g_free(found);
    if (!c)
      return NULL; /* a broken shipped file is an error, not a reason to measure */
    if (in->n_gpus == 0 || !(why = not_covered(c, in)))
      return c;
    cs_igniter_coefs_free(c);
  } else {
    why = g_strdup("not found in the data directories");
  }
  CsIgniterCoefs *c = derive_coefficients(in, why, log, error);
  g_free(why);
  return c;
}

static CsPlacement *igniter_place_params(const CsPlacementProblem *in, CsParams *params,
                                         void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "coefficients", "slo_fraction", "split", NULL };
  CsIgniterOptions opt = { .slo_fraction = 0.5, .split = TRUE };
  cs_params_doc(params, "coefficients", "a clustersim-igniter file (path or profiles/NAME) or the document itself as a JSON object");
  cs_params_doc_default(params, "coefficients", "the shipped measurements when they cover the models, else derived from the GPU model");
  cs_params_doc(params, "slo_fraction", "the latency target of one batch is slo_fraction x SLO (iGniter halves the SLO)");
  cs_params_doc(params, "split", "split a model that cannot meet its target alone on one GPU into equal parts (false: not served)");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "slo_fraction", FALSE, 0.001, 1.0, &opt.slo_fraction,
                     cs_error_list_slot(problems));
    cs_params_bool(params, "split", FALSE, &opt.split, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  if (cs_params_describing(params)) /* the catalogue needs the parameters only */
    return NULL;
  /* Before the coefficients: deriving them for a cluster it refuses is wasted work. */
  if (!require_one_type(in, error))
    return NULL;
  GString *log = g_string_new(NULL);
  CsIgniterCoefs *coefs = coefficients_for(in, params, log, error);
  CsPlacement *p = NULL;
  if (coefs) {
    opt.coefs = coefs;
    opt.log_prefix = log->str;
    p = cs_igniter_place(in, &opt, NULL, error);
    cs_igniter_coefs_free(coefs);
  }
  g_string_free(log, TRUE);
  return p;
}

const CsPlacementPolicy cs_place_igniter = {
  .name = "igniter",
  .description = "iGniter (TPDS'22): interference-aware provisioning with MPS shares from its "
                 "analytical latency model; plan mapped onto the cluster's GPUs in order",
  .place = igniter_place_params,
};
