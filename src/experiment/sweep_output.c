/* A sweep's output set, shard.json and merging shards; see sweep.h. */
#include <errno.h>
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>

#include "common/input_file.h"
#include "common/json_input.h"
#include "common/output_guard.h"
#include "sweep.h"
#include "sweep_aggregate.h"

const char *const cs_sweep_output_set[] = { "runs.csv",  "aggregate.csv", "aggregate.json",
                                            "sweep.json", "shard.json",   NULL };
#define TMP_SUFFIX ".new"

gboolean cs_sweep_check_output_dir(const char *dir, gboolean force, GError **error)
{
  if (!g_file_test(dir, G_FILE_TEST_EXISTS))
    return TRUE;
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "--output %s: exists and is not a directory",
                dir);
    return FALSE;
  }
  if (force)
    return TRUE;
  GString *found = g_string_new(NULL);
  for (int i = 0; cs_sweep_output_set[i]; i++) {
    char *p = g_build_filename(dir, cs_sweep_output_set[i], NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
      g_string_append_printf(found, "%s%s", found->len ? ", " : "", cs_sweep_output_set[i]);
    g_free(p);
  }
  gboolean ok = found->len == 0;
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_IO,
                "--output %s: holds the outputs of an earlier sweep (%s); use --force to "
                "replace them all, or another directory",
                dir, found->str);
  g_string_free(found, TRUE);
  return ok;
}

static gboolean among(const char *name, const char *const *names, int n)
{
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0)
      return TRUE;
  return FALSE;
}

gboolean cs_sweep_write_outputs(const char *dir, const char *const *names,
                                const char *const *texts, int n, GError **error)
{
  gboolean created = !g_file_test(dir, G_FILE_TEST_EXISTS);
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot create output directory: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  /* Signals are held from the first temporary to the last rename (a matter
   * of milliseconds: the sweep has run), so that an interrupt leaves neither
   * temporaries nor half of one sweep's files beside half of another's. A
   * blocked mask would not do: it is the calling thread's, and the sweep's
   * worker threads would take the signal. */
  cs_signals_hold();
  gboolean ok = TRUE;
  for (int i = 0; ok && i < n; i++) {
    char *tmp = g_strconcat(dir, "/", names[i], TMP_SUFFIX, NULL);
    ok = g_file_set_contents(tmp, texts[i], -1, error);
    g_free(tmp);
  }
  for (int i = 0; ok && cs_sweep_output_set[i]; i++) {
    char *final = g_build_filename(dir, cs_sweep_output_set[i], NULL);
    if (!among(cs_sweep_output_set[i], names, n))
      g_unlink(final);
    g_free(final);
  }
  for (int i = 0; i < n; i++) {
    char *tmp = g_strconcat(dir, "/", names[i], TMP_SUFFIX, NULL);
    char *final = g_build_filename(dir, names[i], NULL);
    if (ok && g_rename(tmp, final) != 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", final,
                  g_strerror(errno));
      ok = FALSE;
    }
    if (!ok)
      g_unlink(tmp);
    g_free(tmp);
    g_free(final);
  }
  if (!ok && created)
    g_rmdir(dir); /* leave nothing behind; only succeeds if empty */
  cs_signals_release();
  return ok;
}

static char *json_text(const cJSON *doc)
{
  char *text = cJSON_Print(doc);
  char *out = g_strconcat(text, "\n", NULL);
  cJSON_free(text);
  return out;
}

int cs_sweep_outputs(const CsRunsTable *t, const cJSON *describe, const char **names,
                     char **texts)
{
  CsAggregate *a = cs_aggregate_new(t);
  names[0] = "runs.csv";
  texts[0] = cs_runs_table_to_csv(t);
  names[1] = "aggregate.csv";
  texts[1] = cs_aggregate_to_csv(a);
  names[2] = "aggregate.json";
  texts[2] = cs_aggregate_to_json(a);
  names[3] = "sweep.json";
  texts[3] = json_text(describe);
  cs_aggregate_free(a);
  return 4;
}

char *cs_sweep_shard_json(const cJSON *describe, int index, int count, const GArray *run_ids)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddItemToObject(root, "sweep", cJSON_Duplicate(describe, TRUE));
  cJSON *shard = cJSON_AddObjectToObject(root, "shard");
  cJSON_AddNumberToObject(shard, "index", index);
  cJSON_AddNumberToObject(shard, "count", count);
  cJSON *ids = cJSON_AddArrayToObject(root, "run_ids");
  for (guint i = 0; i < run_ids->len; i++)
    cJSON_AddItemToArray(ids, cJSON_CreateNumber(g_array_index(run_ids, int, i)));
  char *text = json_text(root);
  cJSON_Delete(root);
  return text;
}

/* One shard directory as read. */
typedef struct {
  const char *dir;
  cJSON *doc;          /* shard.json */
  const cJSON *sweep;  /* its "sweep" */
  int index, count, runs;
  CsRunsTable *table;
} Shard;

static gboolean read_shard(Shard *s, GError **error)
{
  static const char *const keys[] = { "sweep", "shard", "run_ids", NULL };
  static const char *const shard_keys[] = { "index", "count", NULL };
  char *path = g_build_filename(s->dir, "shard.json", NULL);
  s->doc = cs_json_load_file(path, error);
  const cJSON *shard = NULL;
  int64_t runs = 0;
  gboolean ok = s->doc && cs_json_expect_object(s->doc, path, NULL, error) &&
                cs_json_check_keys(s->doc, keys, path, NULL, error);
  if (ok) {
    s->sweep = cJSON_GetObjectItemCaseSensitive(s->doc, "sweep");
    shard = cJSON_GetObjectItemCaseSensitive(s->doc, "shard");
    ok = cs_json_expect_object(s->sweep, path, "sweep", error) &&
         cs_json_read_int64(s->sweep, "runs", TRUE, 0, G_MAXINT, &runs, path, "sweep", error) &&
         cs_json_expect_object(shard, path, "shard", error) &&
         cs_json_check_keys(shard, shard_keys, path, "shard", error) &&
         cs_json_read_int(shard, "count", TRUE, 1, G_MAXINT, &s->count, path, "shard", error) &&
         cs_json_read_int(shard, "index", TRUE, 1, s->count, &s->index, path, "shard", error);
    s->runs = (int)runs;
  }
  g_free(path);
  if (!ok)
    return FALSE;
  path = g_build_filename(s->dir, "runs.csv", NULL);
  char *text = NULL;
  if (!cs_input_read(path, CS_INPUT_TABLE_MAX_BYTES, &text, NULL, error)) {
    ok = FALSE;
  } else {
    s->table = cs_runs_table_parse(text, path, error);
    ok = s->table != NULL;
  }
  g_free(text);
  g_free(path);
  return ok;
}

/* The first field of the sweep descriptions a and b that differs, for the
 * message ("sha256", "base", "version", ...), or NULL when they are equal. */
static const char *first_difference(const cJSON *a, const cJSON *b)
{
  const cJSON *f;
  cJSON_ArrayForEach(f, a)
  {
    if (!cJSON_Compare(f, cJSON_GetObjectItemCaseSensitive(b, f->string), TRUE))
      return f->string;
  }
  return cJSON_GetArraySize(a) == cJSON_GetArraySize(b) ? NULL : "fields";
}

/* Files each run of shard k in owner[run], refusing a run listed twice (by
 * this shard or another) or out of range. */
static gboolean claim_runs(const Shard *shards, int k, int *owner, GError **error)
{
  const Shard *s = &shards[k];
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(s->doc, "run_ids");
  char *path = g_build_filename(s->dir, "shard.json", NULL);
  gboolean ok = TRUE;
  if (!cJSON_IsArray(ids))
    ok = cs_json_fail(error, path, "run_ids", "expected an array of run numbers");
  int i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, (ok ? ids : NULL))
  {
    if (!ok)
      break;
    char *where = cs_json_path_index("run_ids", i++);
    int64_t id;
    ok = cs_json_value_int64(x, 0, s->runs - 1, &id, path, where, error);
    if (ok && owner[id] >= 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "run %d appears in two shards: %s and %s (a shard given twice?)", (int)id,
                  shards[owner[id]].dir, s->dir);
      ok = FALSE;
    }
    if (ok)
      owner[id] = k;
    g_free(where);
  }
  g_free(path);
  return ok;
}

/* The count metrics, whose value on a run's total row is the sum over its
 * model rows. */
static const char *const summed_counts[] = { "generated", "measured", "completed", "good",
                                             "late",      "dropped",  "unserved",  "failed",
                                             "batches",   NULL };

/* The sweep description's lists, each listed once: its seeds, variants and
 * each axis' labels (indexing a cJSON list walks it: per row and axis that
 * would make a merge quadratic in the runs). */
typedef struct {
  GPtrArray *seeds, *variants; /* const cJSON * */
  GPtrArray **labels;          /* per axis */
  int n_axes;
} Grid;

static GPtrArray *listed(const cJSON *a)
{
  GPtrArray *out = g_ptr_array_new();
  const cJSON *x;
  cJSON_ArrayForEach(x, (cJSON_IsArray(a) ? a : NULL))
    g_ptr_array_add(out, (gpointer)x);
  return out;
}

static void grid_init(Grid *g, const cJSON *sweep)
{
  const cJSON *axes = cJSON_GetObjectItemCaseSensitive(sweep, "axes");
  g->seeds = listed(cJSON_GetObjectItemCaseSensitive(sweep, "seeds"));
  g->variants = listed(cJSON_GetObjectItemCaseSensitive(sweep, "variants"));
  GPtrArray *ax = listed(axes);
  g->n_axes = (int)ax->len;
  g->labels = g_new0(GPtrArray *, MAX(g->n_axes, 1));
  for (int a = 0; a < g->n_axes; a++)
    g->labels[a] = listed(cJSON_GetObjectItemCaseSensitive(g_ptr_array_index(ax, a), "labels"));
  g_ptr_array_free(ax, TRUE);
}

static void grid_clear(Grid *g)
{
  g_ptr_array_free(g->seeds, TRUE);
  g_ptr_array_free(g->variants, TRUE);
  for (int a = 0; a < g->n_axes; a++)
    g_ptr_array_free(g->labels[a], TRUE);
  g_free(g->labels);
}

/* The label the sweep description gives run's coordinate: its variant
 * (axis -1), the level of axis a, or its seed (axis n_axes); NULL when the
 * description does not have it. Runs go variants, then axes, seeds innermost. */
static char *grid_label(const Grid *g, int run, int axis)
{
  int n = (int)g->seeds->len;
  if (n <= 0)
    return NULL;
  if (axis == g->n_axes) {
    const cJSON *sd = g_ptr_array_index(g->seeds, run % n);
    return cJSON_IsNumber(sd) ? g_strdup_printf("%.0f", sd->valuedouble) : NULL;
  }
  run /= n;
  for (int a = g->n_axes - 1; a > axis; a--) {
    int levels = (int)g->labels[a]->len;
    if (levels <= 0)
      return NULL;
    run /= levels;
  }
  const GPtrArray *names = axis < 0 ? g->variants : g->labels[axis];
  int k = (int)names->len;
  const cJSON *label = k > 0 ? g_ptr_array_index(names, run % k) : NULL;
  return cJSON_IsString(label) ? g_strdup(label->valuestring) : NULL;
}

/* Checks that rows are the whole rows of one run of the sweep: at its point of
 * the grid, each model once and then one total row whose counts are the sum of
 * the model rows' (so a duplicated, lost or foreign model row is refused, not
 * counted), or the one row of a run that did not run. dir names the shard. */
static gboolean check_run_rows(const CsRunsTable *t, const Grid *grid, int run, GPtrArray *rows,
                               const char *dir, GError **error)
{
  int c_model = cs_runs_col_model(t), c_status = cs_runs_col_status(t);
  for (guint i = 0; i < rows->len; i++) {
    char **row = g_ptr_array_index(rows, i);
    for (int axis = -1; axis <= t->n_axes; axis++) {
      int col = axis < 0 ? CS_RUNS_COL_VARIANT
                         : (axis == t->n_axes ? cs_runs_col_seed(t) : CS_RUNS_COL_FIRST_AXIS + axis);
      char *want = grid_label(grid, run, axis);
      gboolean same = !want || strcmp(want, row[col]) == 0;
      if (!same)
        g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                    "%s/runs.csv: run %d: a row has %s \"%s\" but run %d of the sweep has \"%s\"",
                    dir, run, (const char *)g_ptr_array_index(t->columns, col), row[col], run,
                    want);
      g_free(want);
      if (!same)
        return FALSE;
    }
  }
  char **first = g_ptr_array_index(rows, 0);
  if (rows->len == 1 && strcmp(first[c_status], "invalid") == 0 && !*first[c_model])
    return TRUE;
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < rows->len; i++) {
    char **row = g_ptr_array_index(rows, i);
    const char *m = row[c_model];
    if (!*m || strcmp(row[c_status], "ok") != 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s/runs.csv: run %d: row %u of the run has model \"%s\" and status \"%s\"; "
                  "expected a model's name (or total) and \"ok\"",
                  dir, run, i + 1, m, row[c_status]);
      ok = FALSE;
    } else if (!g_hash_table_add(seen, (gpointer)m)) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s/runs.csv: run %d: two rows of model \"%s\" (a row duplicated?)", dir, run,
                  m);
      ok = FALSE;
    }
  }
  char **total = g_ptr_array_index(rows, rows->len - 1);
  if (ok && (rows->len < 2 || strcmp(total[c_model], "total") != 0)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "%s/runs.csv: run %d: expected its model rows and then its total row, got %u "
                "row(s) ending with model \"%s\"",
                dir, run, rows->len, total[c_model]);
    ok = FALSE;
  }
  g_hash_table_destroy(seen);
  /* The total row is computed by the run over its models: counts that do not
   * add up mean a model row is missing or does not belong to the run. A
   * search run that found no load has empty metrics (NaN): nothing to sum. */
  for (int k = 0; ok && summed_counts[k]; k++) {
    int metric = cs_runs_metric_index(t, summed_counts[k]);
    if (metric < 0)
      continue;
    int col = cs_runs_col_metric(t, metric);
    double want = cs_runs_cell_value(total[col]), sum = 0;
    for (guint i = 0; i + 1 < rows->len; i++)
      sum += cs_runs_cell_value(((char **)g_ptr_array_index(rows, i))[col]);
    if (!isnan(want) && !isnan(sum) && sum != want) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s/runs.csv: run %d: its total row has %s = %s but its %u model rows sum to "
                  "%.17g: a model row is missing or belongs to another run",
                  dir, run, summed_counts[k], total[col], rows->len - 1, sum);
      ok = FALSE;
    }
  }
  return ok;
}

CsRunsTable *cs_sweep_merge(const char *const *dirs, int n, cJSON **describe, GError **error)
{
  Shard *shards = g_new0(Shard, MAX(n, 1));
  gboolean ok = n > 0;
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "no shard directory given");
  for (int k = 0; ok && k < n; k++) {
    shards[k].dir = dirs[k];
    ok = read_shard(&shards[k], error);
  }
  /* Every shard must come from the same experiment, base scenario, version
   * and split, and carry the same columns. */
  for (int k = 1; ok && k < n; k++) {
    const char *diff = first_difference(shards[0].sweep, shards[k].sweep);
    if (diff) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s and %s are shards of different sweeps: their shard.json differ in "
                  "sweep.%s",
                  dirs[0], dirs[k], diff);
      ok = FALSE;
    } else if (shards[k].count != shards[0].count) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s is shard %d/%d but %s is shard %d/%d: not one split", dirs[0],
                  shards[0].index, shards[0].count, dirs[k], shards[k].index, shards[k].count);
      ok = FALSE;
    } else if (shards[k].table->columns->len != shards[0].table->columns->len ||
               shards[k].table->n_axes != shards[0].table->n_axes) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s/runs.csv and %s/runs.csv have different columns", dirs[0], dirs[k]);
      ok = FALSE;
    }
  }
  int runs = ok ? shards[0].runs : 0;
  int *owner = g_new(int, MAX(runs, 1));
  for (int r = 0; r < runs; r++)
    owner[r] = -1;
  for (int k = 0; ok && k < n; k++)
    ok = claim_runs(shards, k, owner, error);
  GString *missing = g_string_new(NULL);
  int n_missing = 0;
  for (int r = 0; ok && r < runs; r++)
    if (owner[r] < 0 && n_missing++ < 10)
      g_string_append_printf(missing, "%s%d", missing->len ? ", " : "", r);
  if (ok && n_missing > 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "%d of %d runs are in no shard given (runs %s%s): a shard of the %d is missing",
                n_missing, runs, missing->str, n_missing > 10 ? ", ..." : "", shards[0].count);
    ok = FALSE;
  }
  g_string_free(missing, TRUE);
  /* Each shard's runs.csv must hold exactly its runs; rows go by run. */
  GPtrArray **by_run = g_new0(GPtrArray *, MAX(runs, 1));
  for (int k = 0; ok && k < n; k++) {
    CsRunsTable *t = shards[k].table;
    for (guint i = 0; ok && i < t->rows->len; i++) {
      char **row = g_ptr_array_index(t->rows, i);
      int id = cs_runs_row_run_id(row);
      if (id >= runs || owner[id] != k) {
        g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                    "%s/runs.csv: record %u: run %d is not a run its shard.json lists", dirs[k],
                    i + 2, id);
        ok = FALSE;
        break;
      }
      if (!by_run[id])
        by_run[id] = g_ptr_array_new();
      g_ptr_array_add(by_run[id], row);
      t->rows->pdata[i] = NULL; /* moved */
    }
  }
  for (int r = 0; ok && r < runs; r++)
    if (!by_run[r]) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s/runs.csv: has no row of run %d, which its shard.json lists",
                  dirs[owner[r]], r);
      ok = FALSE;
    }
  Grid grid;
  grid_init(&grid, shards[0].sweep);
  for (int r = 0; ok && r < runs; r++)
    ok = check_run_rows(shards[owner[r]].table, &grid, r, by_run[r], dirs[owner[r]], error);
  grid_clear(&grid);
  CsRunsTable *merged = NULL;
  if (ok) {
    CsRunsTable *t0 = shards[0].table;
    merged = cs_runs_table_new((const char *const *)t0->columns->pdata + CS_RUNS_COL_FIRST_AXIS,
                               t0->n_axes, t0->search);
    for (int r = 0; r < runs; r++)
      for (guint i = 0; i < by_run[r]->len; i++)
        g_ptr_array_add(merged->rows, g_ptr_array_index(by_run[r], i));
    *describe = cJSON_Duplicate(shards[0].sweep, TRUE);
  } else {
    for (int r = 0; r < runs; r++)
      for (guint i = 0; by_run[r] && i < by_run[r]->len; i++)
        g_strfreev(g_ptr_array_index(by_run[r], i));
  }
  for (int r = 0; r < runs; r++)
    if (by_run[r])
      g_ptr_array_free(by_run[r], TRUE);
  g_free(by_run);
  g_free(owner);
  for (int k = 0; k < n; k++) {
    cJSON_Delete(shards[k].doc);
    cs_runs_table_free(shards[k].table);
  }
  g_free(shards);
  return merged;
}
