/* Running a sweep's runs on a pool of threads; see sweep.h.
 *
 * Each run builds its own scenario from the (immutable) experiment and is
 * simulated alone: cs_run keeps no global state, so runs on different threads
 * share nothing but the experiment. A worker writes only the slot of its run;
 * the main thread reads the slots after the pool has finished. */
#include "sweep.h"

#include <math.h>

#include <string.h>

#include "policies/placement/placement.h"
#include "search.h"

typedef struct {
  const CsExperiment *e;
  const CsRunsTable *table; /* for the row layout only */
  const int *runs;          /* run number of each slot */
  GPtrArray **slots;        /* rows of each slot's run, written by its worker */
  int n;
  int done;                 /* runs finished (under lock) */
  GMutex lock;              /* serialises the progress callback */
  CsSweepProgress progress;
  void *progress_data;
  int64_t max_requests;
} Sweep;

static void run_slot(gpointer data, gpointer user_data)
{
  Sweep *s = user_data;
  int slot = GPOINTER_TO_INT(data) - 1;
  int run = s->runs[slot];
  int n_axes = cs_experiment_n_axes(s->e);
  const char **labels = g_new0(const char *, n_axes + 1);
  for (int a = 0; a < n_axes; a++)
    labels[a] = cs_experiment_run_label(s->e, run, a);
  int64_t seed = cs_experiment_run_seed(s->e, run);
  GError *err = NULL;
  CsResults *res = NULL;
  CsScenario *sc = cs_experiment_run_scenario(s->e, run, &err);
  const CsGoodputSearchOptions *search = cs_experiment_search(s->e);
  CsRunsSearch outcome = { 0 };
  if (sc) {
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.seed_override = seed;
    opt.max_requests = s->max_requests;
    if (!search) {
      res = cs_run(sc, &opt, &err);
    } else {
      CsGoodputProbe best;
      /* A search that ran no probe (the scenario is invalid) set err. */
      if (cs_goodput_search_keep(sc, search, &opt, &best, &res, &outcome.probes, &err) && res) {
        outcome.passed = best.index >= 0;
        outcome.multiplier = best.multiplier;
      }
    }
  }
  s->slots[slot] = cs_runs_rows(s->table, run, cs_experiment_run_variant(s->e, run), labels, seed,
                                res, search ? &outcome : NULL, err ? err->message : NULL);
  cs_results_free(res);
  cs_scenario_free(sc);
  g_clear_error(&err);
  g_free(labels);
  /* Pool threads outlive the sweep's use of them: give GLPK's per-thread
   * environment back after every run rather than leak it at thread exit. */
  cs_placement_thread_release();
  g_mutex_lock(&s->lock);
  s->done++;
  if (s->progress)
    s->progress(s->done, s->n, s->progress_data);
  g_mutex_unlock(&s->lock);
}

CsRunsTable *cs_sweep_run(const CsExperiment *e, const CsSweepOptions *opt, GArray **run_ids)
{
  int n_axes = cs_experiment_n_axes(e);
  const char **names = g_new0(const char *, n_axes + 1);
  for (int a = 0; a < n_axes; a++)
    names[a] = cs_experiment_axis_name(e, a);
  CsRunsTable *table = cs_runs_table_new(names, n_axes, cs_experiment_search(e) != NULL);
  g_free(names);

  int count = MAX(opt->shard_count, 1);
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(int));
  for (int r = opt->shard_index; r < cs_experiment_n_runs(e); r += count)
    g_array_append_val(ids, r);

  Sweep s = { .e = e, .table = table, .runs = (const int *)(const void *)ids->data,
              .n = (int)ids->len, .progress = opt->progress,
              .progress_data = opt->progress_data, .max_requests = opt->max_requests };
  s.slots = g_new0(GPtrArray *, MAX(s.n, 1));
  g_mutex_init(&s.lock);
  if (s.n > 0) {
    /* Exclusive threads: they end with the pool, nothing lingers. */
    GThreadPool *pool = g_thread_pool_new(run_slot, &s, MAX(opt->threads, 1), TRUE, NULL);
    for (int i = 0; i < s.n; i++)
      g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
    g_thread_pool_free(pool, FALSE, TRUE); /* waits for every run */
  }
  g_mutex_clear(&s.lock);
  for (int i = 0; i < s.n; i++)
    cs_runs_table_take(table, s.slots[i]);
  g_free(s.slots);
  if (run_ids)
    *run_ids = ids;
  else
    g_array_unref(ids);
  return table;
}

int cs_sweep_n_invalid(const CsRunsTable *t)
{
  int n = 0;
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    n += strcmp(row[cs_runs_col_status(t)], "ok") != 0;
  }
  return n;
}

void cs_sweep_print_invalid(const CsRunsTable *t, const char *prog, FILE *out)
{
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    const char *status = row[cs_runs_col_status(t)];
    if (strcmp(status, "ok") == 0)
      continue;
    GString *where = g_string_new(NULL);
    g_string_append_printf(where, "variant %s", row[CS_RUNS_COL_VARIANT]);
    for (int a = 0; a < t->n_axes; a++)
      g_string_append_printf(where, ", %s %s",
                             (const char *)g_ptr_array_index(t->columns, CS_RUNS_COL_FIRST_AXIS + a),
                             row[CS_RUNS_COL_FIRST_AXIS + a]);
    fprintf(out, "%s: run %s (%s, seed %s) %s: %s\n", prog, row[CS_RUNS_COL_RUN_ID], where->str,
            row[cs_runs_col_seed(t)], status, row[cs_runs_col_error(t)]);
    g_string_free(where, TRUE);
  }
}

/* M:SS, or H:MM:SS from an hour on; seconds rounded down. */
static void append_clock(GString *out, double s)
{
  gint64 t = isfinite(s) && s > 0 ? (gint64)s : 0;
  if (t >= 3600)
    g_string_append_printf(out, "%" G_GINT64_FORMAT ":%02d:%02d", t / 3600, (int)(t / 60 % 60),
                           (int)(t % 60));
  else
    g_string_append_printf(out, "%d:%02d", (int)(t / 60), (int)(t % 60));
}

char *cs_sweep_progress_text(int done, int total, double elapsed_s)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "sweep: %d of %d runs (%d %%), ", done, total,
                         total > 0 ? (int)(100.0 * done / total) : 100);
  append_clock(out, elapsed_s);
  g_string_append(out, " elapsed");
  if (done <= 0 && done < total) {
    g_string_append(out, ", time left unknown");
  } else if (done < total) {
    g_string_append(out, ", about ");
    append_clock(out, elapsed_s * (double)(total - done) / (double)done);
    g_string_append(out, " left");
  }
  return g_string_free(out, FALSE);
}
