/* Sweeps from the library (clustersim/sweep.h): the runs of an experiment
 * and the texts and files of its output set, over the same functions
 * `clustersim sweep` uses (sweep.c, sweep_output.c), so that a program's
 * sweep and the command's are the same bytes. */
#include <string.h>

#include "clustersim/clustersim.h"
#include "common/output_guard.h"
#include "experiment.h"
#include "sweep.h"

struct CsSweepResults {
  CsRunsTable *table;
  cJSON *describe;    /* sweep.json's object (cs_experiment_describe) */
  GArray *run_ids;    /* the run numbers run, ascending */
  int shard_index;    /* 0-based */
  int shard_count;    /* 1: every run */
};

gboolean cs_experiment_use_registry(CsExperiment *e, CsRegistry *registry, GError **error)
{
  g_return_val_if_fail(e != NULL, FALSE);
  if (!registry) {
    cs_experiment_set_registry(e, NULL);
    return TRUE;
  }
  return cs_experiment_load_plugins(e, registry, error);
}

void cs_sweep_options_init(CsSweepOptions *opt)
{
  g_return_if_fail(opt != NULL);
  *opt = (CsSweepOptions){ .threads = (int)g_get_num_processors(), .shard_index = 0,
                           .shard_count = 1 };
}

size_t cs_sweep_options_size(void)
{
  return sizeof(CsSweepOptions);
}

CsSweepResults *cs_experiment_sweep(const CsExperiment *e, const CsSweepOptions *opt)
{
  g_return_val_if_fail(e != NULL, NULL);
  CsSweepOptions defaults;
  cs_sweep_options_init(&defaults);
  if (!opt)
    opt = &defaults;
  g_return_val_if_fail(opt->threads >= 1 && opt->shard_count >= 1 && opt->shard_index >= 0 &&
                         opt->shard_index < opt->shard_count,
                       NULL);
  CsSweepResults *r = g_new0(CsSweepResults, 1);
  r->table = cs_sweep_run(e, opt, &r->run_ids);
  r->describe = cs_experiment_describe(e);
  r->shard_index = opt->shard_index;
  r->shard_count = opt->shard_count;
  return r;
}

void cs_sweep_results_free(CsSweepResults *r)
{
  if (!r)
    return;
  cs_runs_table_free(r->table);
  cJSON_Delete(r->describe);
  if (r->run_ids)
    g_array_unref(r->run_ids);
  g_free(r);
}

int cs_sweep_results_n_runs(const CsSweepResults *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return (int)r->run_ids->len;
}

int cs_sweep_results_n_invalid(const CsSweepResults *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return cs_sweep_n_invalid(r->table);
}

/* The output set's names and texts (texts to g_free): the unsharded set, or
 * a shard's runs.csv and shard.json. Returns their number. */
static int output_set(const CsSweepResults *r, const char **names, char **texts)
{
  if (r->shard_count == 1)
    return cs_sweep_outputs(r->table, r->describe, names, texts);
  names[0] = "runs.csv";
  texts[0] = cs_runs_table_to_csv(r->table);
  names[1] = "shard.json";
  texts[1] = cs_sweep_shard_json(r->describe, r->shard_index + 1, r->shard_count, r->run_ids);
  return 2;
}

char *cs_sweep_results_text(const CsSweepResults *r, const char *name)
{
  g_return_val_if_fail(r != NULL && name != NULL, NULL);
  const char *names[8];
  char *texts[8];
  int n = output_set(r, names, texts);
  char *text = NULL;
  for (int i = 0; i < n; i++) {
    if (!text && strcmp(names[i], name) == 0)
      text = texts[i];
    else
      g_free(texts[i]);
  }
  return text;
}

gboolean cs_sweep_results_write(const CsSweepResults *r, const char *dir, gboolean force,
                                GError **error)
{
  g_return_val_if_fail(r != NULL && dir != NULL, FALSE);
  if (!cs_sweep_check_output_dir(dir, force, error))
    return FALSE;
  CsDirLock *lock = cs_dir_lock_acquire(dir, dir, error);
  if (!lock)
    return FALSE;
  /* Checked again under the lock: another writer may have filled it. */
  gboolean ok = cs_sweep_check_output_dir(dir, force, error);
  if (ok) {
    const char *names[8];
    char *texts[8];
    int n = output_set(r, names, texts);
    ok = cs_sweep_write_outputs(dir, names, (const char *const *)texts, n, error);
    for (int i = 0; i < n; i++)
      g_free(texts[i]);
    /* No figures are drawn here: an earlier sweep's would not match. */
    if (ok)
      cs_output_figures_clear(dir);
  }
  cs_dir_lock_release(lock);
  return ok;
}
