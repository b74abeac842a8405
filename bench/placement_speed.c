/* Placement speed benchmark: how long each registered placement policy takes
 * for 4, 16 and 64 models on 8, 64 and 512 GPUs.
 *
 *   placement_speed [--data-dir DIR] [--time-limit S] [--seed N] [--solver glpk|cbc]
 *                   [--formulation auto|per_gpu|configurations] [--log]
 *                   [--enumerate-limit N] [--rate-scale X]
 *                   [--models 4,16,64] [--gpus 8,64,512] [--policies a,b,...]
 *
 * Instances are deterministic (GLib's Mersenne Twister, one seed): for n
 * models, n draws with replacement from the 13 models of
 * profiles/v100_thesis.json, the k-th draw of a base model named "base#k" and
 * given a copy of its profile; a rate uniform in 100..1000 req/s (steps of 10)
 * and an SLO of 200, 300 or 400 ms. The same n models are used for every
 * cluster size; GPUs are all "v100". iGniter has measurements only for its
 * own four models on "v100_igniter", so on these instances it derives them
 * from the simulator's GPU model (timed with the placement), and it also gets
 * instances of its own drawn the same way from
 * igniter_v100_coefficients.json (alexnet, resnet50, vgg19, ssd; rates
 * 100..1000 req/s, SLO 40, 60 or 100 ms; coefficient copies renamed the same
 * way and passed inline).
 *
 * Each policy runs once per instance with its default parameters, except
 * the MILPs' time limit (--time-limit, default 10 s), formulation
 * (--formulation, default auto) and solver (--solver,
 * default GLPK; cbc when the build has it). Wall time is measured
 * with the monotonic clock around the policy's place() call, so it includes
 * reading the parameters (and for iGniter loading and fitting the
 * coefficients), not building the instance. Output: a Markdown table on
 * stdout, progress on stderr. "manual" is skipped: it places what the
 * scenario lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "common/json_input.h"
#include "cs_config.h"
#include "policies/placement/placement.h"
#include "profiles/profile.h"

typedef struct {
  int n_models, n_gpus;
  CsPlacementModel *models;
  char **names;
  CsPlacementGpu *gpus;
  CsProfileSet *profiles; /* thesis family */
  cJSON *coefs;           /* igniter family: the renamed coefficients document */
} Instance;

/* Parses "4,16,64" into a list of positive integers. */
static double rate_scale = 1.0; /* --rate-scale: every drawn rate times this */

static int *parse_list(const char *s, int *n)
{
  char **parts = g_strsplit(s, ",", -1);
  *n = (int)g_strv_length(parts);
  int *v = g_new(int, MAX(*n, 1));
  for (int i = 0; i < *n; i++) {
    v[i] = atoi(parts[i]);
    if (v[i] <= 0) {
      fprintf(stderr, "placement_speed: bad list element \"%s\"\n", parts[i]);
      exit(2);
    }
  }
  g_strfreev(parts);
  return v;
}

/* Draws n models from the base entries of doc["models"] (field name_key
 * holds the name), renames the copies "base#k", and returns the new document
 * (doc with "models" replaced). names/rates/slos get n entries. */
static cJSON *draw(const cJSON *doc, const char *name_key, int n, GRand *rng, const int *slos,
                   int n_slos, char **names, double *rates, double *slo_out)
{
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(doc, "models");
  int n_base = cJSON_GetArraySize(base);
  int *count = g_new0(int, n_base);
  cJSON *out = cJSON_Duplicate(doc, TRUE);
  cJSON *list = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    int k = g_rand_int_range(rng, 0, n_base);
    cJSON *m = cJSON_Duplicate(cJSON_GetArrayItem(base, k), TRUE);
    const char *bname = cJSON_GetObjectItemCaseSensitive(m, name_key)->valuestring;
    names[i] = g_strdup_printf("%s#%d", bname, ++count[k]);
    cJSON_ReplaceItemInObjectCaseSensitive(m, name_key, cJSON_CreateString(names[i]));
    cJSON_AddItemToArray(list, m);
    rates[i] = 10.0 * g_rand_int_range(rng, 10, 101) * rate_scale;
    slo_out[i] = slos[g_rand_int_range(rng, 0, n_slos)];
  }
  cJSON_ReplaceItemInObjectCaseSensitive(out, "models", list);
  g_free(count);
  return out;
}

static void instance_free(Instance *x)
{
  for (int i = 0; i < x->n_models; i++)
    g_free(x->names[i]);
  g_free(x->names);
  g_free(x->models);
  g_free(x->gpus);
  cs_profile_set_free(x->profiles);
  cJSON_Delete(x->coefs);
  memset(x, 0, sizeof *x);
}

/* Builds the instance of family (thesis: profiles; igniter: coefficients)
 * with n models (seeded by seed and n only) on g GPUs. */
static void make_instance(Instance *x, gboolean igniter, const cJSON *src, int n, int g,
                          guint32 seed)
{
  static const int thesis_slos[] = { 200, 300, 400 }, igniter_slos[] = { 40, 60, 100 };
  memset(x, 0, sizeof *x);
  GRand *rng = g_rand_new_with_seed(seed * 1000003u + (guint32)n * 2u + (igniter ? 1u : 0u));
  x->n_models = n;
  x->n_gpus = g;
  x->names = g_new0(char *, n);
  x->models = g_new0(CsPlacementModel, n);
  double *rates = g_new(double, n), *slos = g_new(double, n);
  cJSON *doc = draw(src, "model", n, rng, igniter ? igniter_slos : thesis_slos, 3, x->names,
                    rates, slos);
  for (int i = 0; i < n; i++)
    x->models[i] = (CsPlacementModel){ .name = x->names[i], .rate_rps = rates[i],
                                       .slo_ms = slos[i] };
  x->gpus = g_new(CsPlacementGpu, MAX(g, 1));
  for (int i = 0; i < g; i++)
    x->gpus[i] = (CsPlacementGpu){ .gpu_type = igniter ? "v100_igniter" : "v100", .node = i / 8 };
  x->profiles = cs_profile_set_new();
  if (igniter) {
    x->coefs = doc;
  } else {
    char *text = cJSON_PrintUnformatted(doc);
    GError *err = NULL;
    if (!cs_profile_set_load_data(x->profiles, text, "bench-profiles", &err)) {
      fprintf(stderr, "placement_speed: %s\n", err->message);
      exit(1);
    }
    g_free(text);
    cJSON_Delete(doc);
  }
  g_free(rates);
  g_free(slos);
  g_rand_free(rng);
}

/* A short solver status from the policy's log. */
static char *status_of(const CsPlacement *p, const char *policy)
{
  if (strstr(p->log->str, "greedy start serves every rate: optimal"))
    return g_strdup("optimal (greedy start)");
  if (strstr(p->log->str, "the greedy start kept"))
    return g_strdup("time limit, greedy start kept");
  const char *s = strstr(p->log->str, "GLPK status: ");
  if (!s)
    s = strstr(p->log->str, "CBC status: ");
  if (s) {
    if (g_str_has_prefix(strstr(s, "status: "), "status: optimal,"))
      return g_strdup("optimal");
    if (g_str_has_prefix(strstr(s, "status: "), "status: optimal over")) {
      const char *gap = strstr(s, "gap ");
      return g_strdup_printf("optimal over the columns, gap %.3g %%",
                             g_ascii_strtod(gap + 4, NULL));
    }
    const char *gap = strstr(s, "MIP gap ");
    if (!gap)
      gap = strstr(s, ", gap "); /* configuration formulation: to its bound */
    double v = gap ? g_ascii_strtod(strstr(gap, "gap ") + 4, NULL) : -1;
    return v >= 0 ? g_strdup_printf("time limit, gap %.3g %%", v) : g_strdup("time limit");
  }
  if (strstr(p->log->str, "nothing placed"))
    return g_strdup("nothing to place");
  if (strcmp(policy, "igniter") == 0 && p->gpus_needed >= 0)
    return g_strdup_printf("heuristic; plan needs %d GPUs", p->gpus_needed);
  return g_strdup("heuristic");
}

static gboolean print_log; /* --log: each placement's log on stderr */
static int enumerate_limit; /* --enumerate-limit */

static void run_one(const CsPlacementPolicy *pol, const Instance *x, const char *family,
                    double time_limit, const char *solver, const char *formulation)
{
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "policy", pol->name);
  if (g_str_has_suffix(pol->name, "milp")) {
    cJSON_AddNumberToObject(params, "time_limit_s", time_limit);
    if (solver)
      cJSON_AddStringToObject(params, "solver", solver);
    if (formulation)
      cJSON_AddStringToObject(params, "formulation", formulation);
    if (enumerate_limit)
      cJSON_AddNumberToObject(params, "enumerate_limit", enumerate_limit);
  }
  if (strcmp(pol->name, "igniter") == 0 && x->coefs)
    cJSON_AddItemToObject(params, "coefficients", cJSON_Duplicate(x->coefs, TRUE));
  CsPlacementProblem in = { .models = x->models, .n_models = x->n_models, .gpus = x->gpus,
                          .n_gpus = x->n_gpus, .profiles = x->profiles };
  double offered = 0;
  for (int m = 0; m < x->n_models; m++)
    offered += x->models[m].rate_rps;
  fprintf(stderr, "%s: %d models, %d GPUs (%s)...\n", pol->name, x->n_models, x->n_gpus, family);
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time();
  CsPlacement *p = cs_placement_run(pol, NULL, &in, params, "bench", "placement", &err);
  double ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
  cJSON_Delete(params);
  printf("| %s | %s | %d | %d | ", pol->name, family, x->n_models, x->n_gpus);
  if (!p) {
    /* Keep the table readable: the message on one line, no pipes. */
    char *msg = g_strdup(err->message);
    g_strdelimit(msg, "|\n", ' ');
    printf("%.2f | - | %.0f | - | refused: %s |\n", ms, offered, msg);
    g_free(msg);
    g_error_free(err);
    fflush(stdout);
    return;
  }
  gboolean *used = g_new0(gboolean, MAX(x->n_gpus, 1));
  int n_used = 0;
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    if (!used[r->gpu]) {
      used[r->gpu] = TRUE;
      n_used++;
    }
  }
  if (print_log)
    fprintf(stderr, "%s", p->log->str);
  char *status = status_of(p, pol->name);
  /* The MILP's heuristic, to compare its result against. */
  const char *start = strstr(p->log->str, "greedy start: objective ");
  if (start) {
    char *with = g_strdup_printf("%s; greedy start %.0f", status,
                                 g_ascii_strtod(start + strlen("greedy start: objective "), NULL));
    g_free(status);
    status = with;
  }
  printf("%.2f | %.0f | %.0f | %d | %s |\n", ms, p->expected_total, offered, n_used, status);
  fflush(stdout);
  g_free(status);
  g_free(used);
  cs_placement_free(p);
}

int main(int argc, char **argv)
{
  char *data_dir = NULL, *models_s = NULL, *gpus_s = NULL, *policies_s = NULL, *solver = NULL,
       *formulation = NULL;
  double time_limit = 10.0;
  gint seed = 1;
  GOptionEntry entries[] = {
    { "data-dir", 0, 0, G_OPTION_ARG_FILENAME, &data_dir,
      "data directory holding profiles/ (default: the source tree's)", "DIR" },
    { "time-limit", 0, 0, G_OPTION_ARG_DOUBLE, &time_limit, "MILP time limit, s (10)", "S" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, "instance seed (1)", "N" },
    { "solver", 0, 0, G_OPTION_ARG_STRING, &solver, "MILP solver, glpk or cbc (glpk)", "S" },
    { "enumerate-limit", 0, 0, G_OPTION_ARG_INT, &enumerate_limit,
      "MILP configurations listed in full up to N (0: 20000, -1: column generation)", "N" },
    { "rate-scale", 0, 0, G_OPTION_ARG_DOUBLE, &rate_scale,
      "multiply every drawn rate (1; e.g. 20 to load 512 GPUs)", "X" },
    { "log", 0, 0, G_OPTION_ARG_NONE, &print_log, "print each placement's log on stderr", NULL },
    { "formulation", 0, 0, G_OPTION_ARG_STRING, &formulation,
      "MILP formulation, auto, per_gpu or configurations (auto)", "F" },
    { "models", 0, 0, G_OPTION_ARG_STRING, &models_s, "model counts (4,16,64)", "LIST" },
    { "gpus", 0, 0, G_OPTION_ARG_STRING, &gpus_s, "GPU counts (8,64,512)", "LIST" },
    { "policies", 0, 0, G_OPTION_ARG_STRING, &policies_s,
      "policies to run (all registered but manual)", "LIST" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("- time every placement policy");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "placement_speed: %s\n", err->message);
    return 2;
  }
  g_option_context_free(ctx);
  int n_mc, n_gc;
  int *mcounts = parse_list(models_s ? models_s : "4,16,64", &n_mc);
  int *gcounts = parse_list(gpus_s ? gpus_s : "8,64,512", &n_gc);
  const char *dir = data_dir ? data_dir : CS_SOURCE_DATADIR;
  char *thesis_path = g_build_filename(dir, "profiles", "v100_thesis.json", NULL);
  char *coef_path = g_build_filename(dir, "profiles", "igniter_v100_coefficients.json", NULL);
  cJSON *thesis = cs_json_load_file(thesis_path, &err);
  cJSON *coefs = thesis ? cs_json_load_file(coef_path, &err) : NULL;
  if (!coefs) {
    fprintf(stderr, "placement_speed: %s\n", err->message);
    return 1;
  }
  char **only = policies_s ? g_strsplit(policies_s, ",", -1) : NULL;

  printf("| policy | instances | models | GPUs | wall ms | expected goodput req/s | "
         "offered req/s | GPUs used | status |\n");
  printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  gint64 start = g_get_monotonic_time();
  const CsPlacementPolicy *const *list = cs_placement_policy_list();
  for (int a = 0; a < n_mc; a++) {
    for (int b = 0; b < n_gc; b++) {
      Instance thesis_x, igniter_x;
      make_instance(&thesis_x, FALSE, thesis, mcounts[a], gcounts[b], (guint32)seed);
      make_instance(&igniter_x, TRUE, coefs, mcounts[a], gcounts[b], (guint32)seed);
      for (int i = 0; list[i]; i++) {
        if (strcmp(list[i]->name, "manual") == 0 ||
            (only && !g_strv_contains((const char *const *)only, list[i]->name)))
          continue;
        run_one(list[i], &thesis_x, "v100_thesis", time_limit, solver, formulation);
        if (strcmp(list[i]->name, "igniter") == 0)
          run_one(list[i], &igniter_x, "igniter_v100", time_limit, solver, formulation);
      }
      instance_free(&thesis_x);
      instance_free(&igniter_x);
    }
  }
  fprintf(stderr, "total wall time %.1f s\n", (double)(g_get_monotonic_time() - start) * 1e-6);
  g_strfreev(only);
  cJSON_Delete(thesis);
  cJSON_Delete(coefs);
  g_free(thesis_path);
  g_free(coef_path);
  g_free(mcounts);
  g_free(gcounts);
  g_free(data_dir);
  g_free(models_s);
  g_free(gpus_s);
  g_free(policies_s);
  g_free(solver);
  g_free(formulation);
  return 0;
}
