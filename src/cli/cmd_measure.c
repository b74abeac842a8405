/* clustersim profile measure --backend NAME --like PROFILE --gpu-type TYPE --models A,B
 *                           [--batches 1,2,4,8] [--repeat N] [--pair-batch B]
 *                           [--shares 20,50,100] [--like-interference FILE]
 *                           [--backend-option KEY=VALUE]... -o DIR [--force]
 *                           [--csv FILE]
 *
 * Profiles an execution backend (clustersim/backend.h): the isolated latency
 * of each model at each batch size, and the slowdown of each model next to
 * each other one on the same GPU, and with --shares each model's latency on
 * those MPS shares of the GPU (a backend that runs shares); writes DIR/profile.json (format
 * clustersim-profile, GPU type --name) and DIR/interference.json
 * (clustersim-interference), the machine and date in their source. The
 * models are sized like their profiles on --like's GPU type (the cpu
 * backend: depth from the batch-1 latency). With --csv the same measurements
 * also go to FILE as rows of the measured format (docs/profiles.md,
 * "Measured data"), the machine in each row. Exit status 2 on bad input or a
 * failing backend; nothing is written then. */
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/data_files.h"
#include "profiles/interference.h"
#include "replay/measure.h"

/* Ascending integers in [lo, hi], comma separated, into out. */
static gboolean parse_ascending(const char *text, int lo, int hi, GArray *out)
{
  char **parts = g_strsplit(text, ",", -1);
  gboolean ok = parts[0] != NULL;
  for (int i = 0; ok && parts[i]; i++) {
    char *end = NULL;
    gint64 b = g_ascii_strtoll(parts[i], &end, 10);
    int v = (int)b;
    ok = end != parts[i] && *end == '\0' && b >= lo && b <= hi &&
         (out->len == 0 || v > g_array_index(out, int, out->len - 1));
    if (ok)
      g_array_append_val(out, v);
  }
  g_strfreev(parts);
  return ok;
}

int cmd_profile_measure(int argc, char **argv)
{
  const char *prog = "clustersim profile measure";
  char *backend_name = NULL, *like = NULL, *like_type = NULL, *models_text = NULL,
       *batches_text = NULL, *output = NULL, *gpu_type = NULL, *shares_text = NULL,
       *like_interference = NULL, *csv_path = NULL;
  char **backend_options = NULL;
  int repeat = 20, pair_batch = 8;
  gboolean force = FALSE;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name, "Execution backend (required): emulated, cpu or cuda", "NAME" },
    { "backend-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &backend_options, "A backend setting, e.g. width=512 (repeatable)", "KEY=VALUE" },
    { "like", 0, 0, G_OPTION_ARG_FILENAME, &like, "Profile file (path or shipped name) the backend sizes its models from (required)", "PROFILE" },
    { "like-gpu", 0, 0, G_OPTION_ARG_STRING, &like_type, "Its GPU type (default: its first)", "TYPE" },
    { "models", 'm', 0, G_OPTION_ARG_STRING, &models_text, "Models to measure, comma separated (required)", "A,B" },
    { "batches", 0, 0, G_OPTION_ARG_STRING, &batches_text, "Batch sizes, ascending (default 1,2,4,8,16,32)", "LIST" },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Timed executions per point (default 20)", "N" },
    { "pair-batch", 0, 0, G_OPTION_ARG_INT, &pair_batch, "Batch size of pair measurements, one of --batches; 0: no pairs (default 8)", "B" },
    { "shares", 0, 0, G_OPTION_ARG_STRING, &shares_text, "MPS shares in %, ascending, to measure each model's latency-vs-share table at (a backend that runs shares: emulated, cuda)", "LIST" },
    { "like-interference", 0, 0, G_OPTION_ARG_FILENAME, &like_interference, "Interference file whose share tables the emulated backend executes", "FILE" },
    { "gpu-type", 0, 0, G_OPTION_ARG_STRING, &gpu_type, "Name of the measured GPU type in the files (required)", "NAME" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Directory for profile.json and interference.json (required)", "DIR" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace those files", NULL },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "Also write the measurements as rows of the measured CSV format (docs/profiles.md), for profile import and calibrate --measured", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new(NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Measures an execution backend: each model's isolated latency per batch size and each\n"
    "ordered pair's slowdown on one GPU (and with --shares each model's latency on those\n"
    "MPS shares), written as DIR/profile.json and\n"
    "DIR/interference.json in the project's formats (docs/replay.md).");
  GError *err = NULL;
  int status = 0;
  CsProfileSet *set = NULL;
  char **models = NULL;
  char *profile = NULL, *interference = NULL, *described = NULL, *like_path = NULL, *csv = NULL;
  char *ppath = NULL, *ipath = NULL;
  GArray *batches = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *shares = g_array_new(FALSE, FALSE, sizeof(int));
  CsInterferenceSet *tables = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 1) {
    status = cli_fail(prog, "expected no arguments (see --help)");
    goto out;
  }
  const CsBackend *backend = cs_backend_builtin(backend_name);
  if (!backend) {
    char *names = cs_backend_builtin_names();
    char *m = backend_name ? g_strdup_printf("--backend %s: unknown backend; this build has %s",
                                             backend_name, names)
                           : g_strdup_printf("expected --backend NAME (this build has %s)", names);
    status = cli_fail(prog, m);
    g_free(m);
    g_free(names);
    goto out;
  }
  if (!like || !models_text || !gpu_type || !output) {
    status = cli_fail(prog, "--like, --models, --gpu-type and --output are required");
    goto out;
  }
  if (!parse_ascending(batches_text ? batches_text : "1,2,4,8,16,32", 1, 4096, batches)) {
    status = cli_fail(prog, "--batches: expected ascending batch sizes in [1, 4096], e.g. 1,2,4,8");
    goto out;
  }
  if (repeat < 3 || repeat > 100000) {
    status = cli_fail(prog, "--repeat: expected an integer in [3, 100000]");
    goto out;
  }
  if (shares_text && !parse_ascending(shares_text, 1, 100, shares)) {
    status = cli_fail(prog, "--shares: expected ascending percentages in [1, 100], e.g. 20,50,100");
    goto out;
  }
  if (shares->len > 0 && !backend->runs_shares) {
    char *m = g_strdup_printf("--shares: backend %s does not run workers on a share of a GPU",
                              backend->name);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  gboolean in_list = pair_batch == 0;
  for (guint i = 0; i < batches->len; i++)
    in_list = in_list || g_array_index(batches, int, i) == pair_batch;
  if (!in_list) {
    status = cli_fail(prog, "--pair-batch: expected 0 or one of --batches");
    goto out;
  }
  ppath = g_build_filename(output, "profile.json", NULL);
  ipath = g_build_filename(output, "interference.json", NULL);
  if (!force && csv_path && g_file_test(csv_path, G_FILE_TEST_EXISTS)) {
    char *m = g_strdup_printf("--csv %s: exists; use --force to replace it", csv_path);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (!force && (g_file_test(ppath, G_FILE_TEST_EXISTS) || g_file_test(ipath, G_FILE_TEST_EXISTS))) {
    char *m = g_strdup_printf("--output %s: holds a measured profile; use --force to replace it",
                              output);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  like_path = g_file_test(like, G_FILE_TEST_EXISTS) ? g_strdup(like)
                                                    : cs_data_file_find("profiles", like);
  set = cs_profile_set_new();
  if (!cs_profile_set_load_file(set, like_path ? like_path : like, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (!like_type) {
    const CsGpuType *t = cs_profile_set_gpu_type_at(set, 0);
    like_type = t ? g_strdup(cs_gpu_type_name(t)) : NULL;
  }
  if (!like_type || !cs_profile_set_gpu_type(set, like_type)) {
    status = cli_fail(prog, "--like-gpu: the profile has no such GPU type");
    goto out;
  }
  if (like_interference) {
    char *path = g_file_test(like_interference, G_FILE_TEST_EXISTS)
                   ? g_strdup(like_interference) : cs_data_file_find("profiles", like_interference);
    tables = cs_interference_set_load_file(path ? path : like_interference, &err);
    g_free(path);
    if (!tables) {
      status = cli_fail(prog, err->message);
      goto out;
    }
  }
  models = g_strsplit(models_text, ",", -1);
  if (!models[0]) {
    status = cli_fail(prog, "--models: expected at least one model");
    goto out;
  }
  CsMeasureOptions o = { .backend = backend, .backend_options = (const char *const *)backend_options,
                         .like = set, .like_type = like_type, .models = (const char *const *)models,
                         .batches = (const int *)batches->data, .n_batches = (int)batches->len,
                         .repeat = repeat, .pair_batch = g_strv_length(models) > 1 ? pair_batch : 0,
                         .gpu_type = gpu_type, .shares = (const int *)shares->data,
                         .n_shares = (int)shares->len, .like_interference = tables,
                         .csv = csv_path ? &csv : NULL };
  CsProbeStats wake = { 0 };
  o.wakeup = &wake;
  if (!cs_measure_backend(&o, &profile, &interference, &described, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (g_mkdir_with_parents(output, 0755) != 0) {
    char *m = g_strdup_printf("%s: cannot create output directory: %s", output, g_strerror(errno));
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  /* g_file_set_contents writes a temporary file and renames it: no partial file. */
  if (!g_file_set_contents(ppath, profile, -1, &err) ||
      (interference && !g_file_set_contents(ipath, interference, -1, &err)) ||
      (csv && !g_file_set_contents(csv_path, csv, -1, &err))) {
    g_unlink(ppath);
    if (interference)
      g_unlink(ipath);
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (!interference)
    g_unlink(ipath);
  if (wake.busy)
    fprintf(stderr, "%s: warning: the machine was busy while measuring: a thread of normal "
            "priority woke %.3f ms late from its sleeps (p90; median %.3f ms), and the "
            "latencies measured include late wake-ups of about that (the profile's source "
            "says so); measure again on a quiet machine\n", prog, wake.p90_ms, wake.p50_ms);
  printf("%s\n%s%s\n", ppath, interference ? ipath : "",
         interference ? "" : "(no pairs or shares measured)");
  if (csv)
    printf("%s\n", csv_path);
out:
  g_clear_error(&err);
  g_array_unref(batches);
  g_array_unref(shares);
  cs_interference_set_free(tables);
  cs_profile_set_free(set);
  g_strfreev(models);
  g_strfreev(backend_options);
  g_free(profile);
  g_free(interference);
  g_free(csv);
  g_free(csv_path);
  g_free(described);
  g_free(like_path);
  g_free(ppath);
  g_free(ipath);
  g_free(backend_name);
  g_free(like);
  g_free(like_type);
  g_free(models_text);
  g_free(batches_text);
  g_free(shares_text);
  g_free(like_interference);
  g_free(output);
  g_free(gpu_type);
  g_option_context_free(ctx);
  return status;
}
