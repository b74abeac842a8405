/* clustersim derive-igniter --profile P --gpu-type T [--models a,b] [--mps-gamma G]
 *                           [--interference F] [--batches 1,2,..] [--shares 10,20,..] -o OUT
 *
 * Writes iGniter's measurements derived from the simulator's GPU model
 * (src/policies/placement/igniter_derive.h) as a clustersim-igniter file, after checking
 * that the file loads and fits. Nothing is written on failure. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "common/data_files.h"
#include "common/input_file.h"
#include "policies/placement/igniter_derive.h"

/* A file named on the command line: as given when it exists (whatever it is:
 * its reader refuses what is not a regular file, naming it), else
 * profiles/NAME[.json] in the data directories. NULL if neither. */
static char *find_data_file(const char *given)
{
  /* A broken link is the user's file too: its reader names what is wrong. */
  if (g_file_test(given, G_FILE_TEST_EXISTS) || cs_input_broken_link(given))
    return g_strdup(given);
  if (g_path_is_absolute(given))
    return NULL;
  return cs_data_file_find("profiles", given);
}

/* Parses a comma-separated list of numbers into *out (g_free). Returns the
 * count, or -1 when an item is not a number. */
static int parse_numbers(const char *text, double **out)
{
  char **items = g_strsplit(text, ",", -1);
  int n = (int)g_strv_length(items);
  *out = g_new(double, MAX(n, 1));
  for (int i = 0; i < n; i++) {
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(g_strstrip(items[i]), &end);
    if (errno || end == items[i] || *end || !isfinite(v)) {
      g_strfreev(items);
      g_free(*out);
      *out = NULL;
      return -1;
    }
    (*out)[i] = v;
  }
  g_strfreev(items);
  return n;
}

/* The largest relative gap between the fitted solo active time and the
 * measured grid, per model: how well iGniter's curve fits the GPU model. */
static void print_fit(const CsIgniterCoefs *c, const cJSON *doc, FILE *out)
{
  const cJSON *grid = cJSON_GetObjectItemCaseSensitive(doc, "grid");
  const cJSON *bs = cJSON_GetObjectItemCaseSensitive(grid, "batches");
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(grid, "shares_pct");
  const cJSON *models = cJSON_GetObjectItemCaseSensitive(doc, "models");
  fprintf(out, "%-18s %9s %9s  %s\n", "model", "k_L2", "max_fit_%", "(at batch, share %)");
  const cJSON *m;
  cJSON_ArrayForEach(m, models)
  {
    const char *name = cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring;
    const CsIgniterModel *cm = cs_igniter_coefs_find(c, name);
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(m, "gpu_latency_ms");
    double worst = 0;
    int wb = 0;
    double ws = 0;
    /* The grid walked along its lists (indexing a cJSON array walks it). */
    const cJSON *bi = bs ? bs->child : NULL, *row = lat ? lat->child : NULL;
    for (; bi && row; bi = bi->next, row = row->next)
      for (const cJSON *sj = ss ? ss->child : NULL, *cell = row->child; sj && cell;
           sj = sj->next, cell = cell->next) {
        int b = bi->valueint;
        double s = sj->valuedouble;
        double meas = cell->valuedouble;
        double rel = fabs(cs_igniter_active_solo_ms(cm, b, s) - meas) / meas;
        if (rel > worst) {
          worst = rel;
          wb = b;
          ws = s;
        }
      }
    fprintf(out, "%-18s %9.4g %9.1f  (%d, %g)\n", name, cm->k_l2, 100 * worst, wb, ws);
  }
}

int cmd_derive(int argc, char **argv)
{
  const char *prog = "clustersim derive-igniter";
  char **profiles = NULL, *gpu_type = NULL, *models = NULL, *interference = NULL,
       *output = NULL, *batches_text = NULL, *shares_text = NULL, *share_rule = NULL;
  double gamma = NAN; /* NAN: not given (1.0) */
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "profile", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY, &profiles, "Profile file or name in the data directory, e.g. v100_thesis (repeatable)", "P" },
    { "gpu-type", 'g', 0, G_OPTION_ARG_STRING, &gpu_type, "GPU type of the profiles to measure", "T" },
    { "models", 'm', 0, G_OPTION_ARG_STRING, &models, "Comma-separated models (default: every model profiled on T)", "a,b" },
    { "mps-share-rule", 0, 0, G_OPTION_ARG_STRING, &share_rule, "MPS share rule for models without a share table, as cluster.mps_share_rule: scalable (default) or power", "R" },
    { "mps-gamma", 0, 0, G_OPTION_ARG_DOUBLE, &gamma, "Exponent of the power share rule (r/d)^gamma, as cluster.mps_gamma (default 1.0)", "G" },
    { "interference", 'i', 0, G_OPTION_ARG_FILENAME, &interference, "Interference file, as cluster.interference (default: none, the built-in fallback)", "F" },
    { "batches", 0, 0, G_OPTION_ARG_STRING, &batches_text, "Grid batch sizes (default 1,2,4,8,16,32,64,128)", "LIST" },
    { "shares", 0, 0, G_OPTION_ARG_STRING, &shares_text, "Grid MPS shares in % (default 10,20,...,100)", "LIST" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "File to write (required)", "OUT" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print nothing on success", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("- derive iGniter's measurements from the simulator");
  g_option_context_set_summary(ctx,
    "Measures the simulator's GPU model the way iGniter's profiler measures a GPU (solo latency\n"
    "over a batch x MPS-share grid, one pair co-location per model) and writes a clustersim-igniter\n"
    "file for \"placement\": {\"policy\": \"igniter\", \"coefficients\": OUT}. Its \"source\" says what\n"
    "was measured and what the simulator does not model (L2 cache, power, frequency, scheduling\n"
    "gaps). Without \"coefficients\" the igniter placement derives the same itself. Prints, per\n"
    "model, k_L2 and the largest gap between iGniter's fitted curve and the measured grid.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsProfileSet *set = cs_profile_set_new();
  CsInterferenceSet *tables = NULL;
  char **model_names = NULL;
  double *bd = NULL, *sd = NULL;
  int *bi = NULL;
  cJSON *doc = NULL;
  CsIgniterCoefs *coefs = NULL;
  char *text = NULL, *label = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 1) {
    status = cli_fail(prog, "takes no positional argument (see --help)");
    goto out;
  }
  if (!profiles || !profiles[0] || !gpu_type || !output) {
    status = cli_fail(prog, !profiles || !profiles[0] ? "--profile is required (e.g. v100_thesis)"
                            : !gpu_type              ? "--gpu-type is required (e.g. v100)"
                                                     : "--output is required");
    goto out;
  }
  gboolean power = share_rule && strcmp(share_rule, "power") == 0;
  if (share_rule && !power && strcmp(share_rule, "scalable") != 0) {
    status = cli_fail(prog, "--mps-share-rule: expected scalable or power");
    goto out;
  }
  if (!isnan(gamma) && !power) {
    status = cli_fail(prog, "--mps-gamma: applies to --mps-share-rule power (the default rule, "
                      "scalable, has no exponent)");
    goto out;
  }
  if (isnan(gamma))
    gamma = 1.0;
  /* The range of a scenario's cluster.mps_gamma (see calibrate's --gamma). */
  if (!(gamma >= 0.01 && gamma <= 100)) {
    status = cli_fail(prog, "--mps-gamma: expected a number in [0.01, 100], as cluster.mps_gamma");
    goto out;
  }
  for (int i = 0; profiles[i]; i++) {
    char *path = find_data_file(profiles[i]);
    if (!path) {
      char *m = g_strdup_printf("--profile: \"%s\" not found (looked as given and in the data "
                                "directory's profiles/)",
                                profiles[i]);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    gboolean ok = cs_profile_set_load_file(set, path, &err);
    g_free(path);
    if (!ok) {
      status = cli_fail(prog, err->message);
      goto out;
    }
  }
  if (interference) {
    char *path = find_data_file(interference);
    if (!path) {
      char *m = g_strdup_printf("--interference: \"%s\" not found (looked as given and in the "
                                "data directory's profiles/)",
                                interference);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    tables = cs_interference_set_load_file(path, &err);
    g_free(path);
    if (!tables) {
      status = cli_fail(prog, err->message);
      goto out;
    }
  }
  CsIgniterDeriveOptions opt = { .profiles = set, .gpu_type = gpu_type, .mps_gamma = gamma,
                                 .mps_share_power = power,
                                 .interference = tables, .interference_label = interference };
  /* The profiles as named on the command line (not the resolved paths, so
   * the file does not depend on this machine's directories). */
  label = g_strjoinv(", ", profiles);
  opt.profile_label = label;
  if (models) {
    model_names = g_strsplit(models, ",", -1);
    for (int i = 0; model_names[i]; i++)
      if (!*g_strstrip(model_names[i])) {
        status = cli_fail(prog, "--models: expected comma-separated model names, got an empty "
                                "name");
        goto out;
      }
    opt.models = (const char *const *)model_names;
    opt.n_models = (int)g_strv_length(model_names);
  }
  if (batches_text) {
    int n = parse_numbers(batches_text, &bd);
    gboolean ok = n >= 3;
    bi = g_new(int, MAX(n, 1));
    for (int i = 0; ok && i < n; i++) {
      ok = bd[i] == floor(bd[i]) && bd[i] >= 1 && bd[i] <= 1 << 20 &&
           (i == 0 || bd[i] > bd[i - 1]);
      bi[i] = ok ? (int)bd[i] : 0;
    }
    if (!ok) {
      status = cli_fail(prog, "--batches: expected at least 3 increasing whole batch sizes "
                              ">= 1, comma-separated");
      goto out;
    }
    opt.batches = bi;
    opt.n_batches = n;
  }
  if (shares_text) {
    int n = parse_numbers(shares_text, &sd);
    gboolean ok = n >= 3 && sd[0] > 0 && sd[n - 1] <= 100;
    for (int i = 1; ok && i < n; i++)
      ok = sd[i] > sd[i - 1];
    if (!ok) {
      status = cli_fail(prog, "--shares: expected at least 3 increasing MPS shares in (0, 100], "
                              "comma-separated");
      goto out;
    }
    opt.shares_pct = sd;
    opt.n_shares = n;
  }
  if (!(doc = cs_igniter_derive_document(&opt, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  /* Check that the file fits before writing it. */
  if (!(coefs = cs_igniter_coefs_load_json(doc, output, &err))) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  char *printed = cJSON_Print(doc);
  text = g_strconcat(printed, "\n", NULL);
  cJSON_free(printed);
  /* g_file_set_contents writes a temporary file and renames it: a failed
   * write leaves no partial file. */
  if (!g_file_set_contents(output, text, -1, &err)) {
    /* GLib's message names its temporary file, not the one asked for: keep
     * only its reason, after the last ": ". */
    const char *why = strrchr(err->message, ':');
    char *m = g_strdup_printf("--output %s: cannot write: %s", output,
                              why ? why + 2 : err->message);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (!quiet) {
    printf("wrote %s: iGniter measurements of %d model%s on GPU type %s, derived from the "
           "simulator's GPU model\n\n",
           output, coefs->n_models, coefs->n_models == 1 ? "" : "s", gpu_type);
    print_fit(coefs, doc, stdout);
  }
out:
  g_clear_error(&err);
  cs_igniter_coefs_free(coefs);
  cJSON_Delete(doc);
  g_free(text);
  g_free(label);
  g_free(bd);
  g_free(bi);
  g_free(sd);
  g_strfreev(model_names);
  cs_interference_set_free(tables);
  cs_profile_set_free(set);
  g_strfreev(profiles);
  g_free(gpu_type);
  g_free(share_rule);
  g_free(models);
  g_free(interference);
  g_free(output);
  g_free(batches_text);
  g_free(shares_text);
  g_option_context_free(ctx);
  return status;
}
