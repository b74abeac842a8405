/* clustersim profile show NAME: the profiles of a file, model or GPU type,
 * per (GPU type, model) with the inputs the policies need (Creq, Mreq,
 * interference, iGniter), as text tables or JSON, with suggestions for an
 * unknown name and the names that differ only in case. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmd_profile.h"
#include "common/json_input.h"

static const char *const metric_names[CS_CREQ_N_METRICS] = { "ao", "wao", "wsm" };

/* ---- profile show --------------------------------------------------------- */

/* One (GPU type, model) row of show. */
static void profile_row_text(const Catalog *cat, const CsModelProfile *p, Table *t)
{
  GString *batches = g_string_new(NULL);
  int *b = g_new(int, MAX(p->n_points, 1));
  for (int i = 0; i < p->n_points; i++)
    b[i] = p->points[i].batch;
  append_batches(batches, b, p->n_points);
  g_free(b);
  if (p->n_points == 0)
    g_string_append(batches, "-");

  char *latency;
  double lo, hi;
  if (p->n_points > 0) {
    latency_range_ms(p, &lo, &hi);
    latency = g_strdup_printf("%g-%g", lo, hi);
  } else
    latency = g_strdup_printf("%.4g*b+%.4g", p->alpha_ns / 1e6, p->beta_ns / 1e6);

  GString *creq = g_string_new(NULL);
  for (int m = 0; m < CS_CREQ_N_METRICS; m++) {
    int n = count_creq(p, m);
    if (n == 0)
      continue;
    g_string_append_printf(creq, "%s%s", creq->len ? "," : "", metric_names[m]);
    if (n < p->n_points)
      g_string_append_printf(creq, "(%d/%d)", n, p->n_points);
  }
  if (!creq->len)
    g_string_append(creq, "-");
  int nm = count_mreq(p);
  char *mreq = nm == 0 ? g_strdup("-")
               : nm == p->n_points ? g_strdup("yes")
                                   : g_strdup_printf("%d/%d", nm, p->n_points);

  GPtrArray *inter = interference_files_for(cat, p->model);
  GString *is = g_string_new(NULL);
  for (guint i = 0; i < inter->len; i++)
    g_string_append_printf(is, "%s%s", i ? "," : "", ((DataFile *)g_ptr_array_index(inter, i))->name);
  if (!is->len)
    g_string_append(is, "-");
  g_ptr_array_free(inter, TRUE);

  GPtrArray *ign = igniter_files_for(cat, p->gpu_type, p->model);
  GString *gs = g_string_new(NULL);
  if (ign->len) {
    g_string_append(gs, "measured (");
    for (guint i = 0; i < ign->len; i++)
      g_string_append_printf(gs, "%s%s", i ? "," : "", ((DataFile *)g_ptr_array_index(ign, i))->name);
    g_string_append(gs, ")");
  } else {
    g_string_append(gs, "derived on demand");
  }
  g_ptr_array_free(ign, TRUE);

  table_add(t, (char *[]){
    g_strdup(p->model), g_string_free(batches, FALSE), latency,
    isnan(p->slo_ms) ? g_strdup("-") : g_strdup_printf("%g", p->slo_ms),
    p->input_bytes < 0 ? g_strdup("-") : g_strdup_printf("%" G_GINT64_FORMAT, p->input_bytes),
    p->output_bytes < 0 ? g_strdup("-") : g_strdup_printf("%" G_GINT64_FORMAT, p->output_bytes),
    g_string_free(creq, FALSE), mreq, g_string_free(is, FALSE), g_string_free(gs, FALSE) });
}

static cJSON *json_batches_with(const CsModelProfile *p, int metric /* -1: Mreq */)
{
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < p->n_points; i++) {
    double v = metric < 0 ? p->points[i].mreq_pct : p->points[i].creq_pct[metric];
    if (!isnan(v))
      cJSON_AddItemToArray(a, cJSON_CreateNumber(p->points[i].batch));
  }
  return a;
}

static cJSON *profile_row_json(const Catalog *cat, const DataFile *f, const CsModelProfile *p)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", f->name);
  cJSON_AddStringToObject(o, "gpu_type", p->gpu_type);
  cJSON_AddStringToObject(o, "model", p->model);
  cJSON *b = cJSON_AddArrayToObject(o, "batch_sizes");
  for (int i = 0; i < p->n_points; i++)
    cJSON_AddItemToArray(b, cJSON_CreateNumber(p->points[i].batch));
  if (p->n_points > 0) {
    double lo, hi;
    latency_range_ms(p, &lo, &hi);
    cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
    cJSON_AddNumberToObject(l, "min", lo);
    cJSON_AddNumberToObject(l, "max", hi);
  } else {
    cJSON_AddNullToObject(o, "latency_ms");
  }
  cJSON *lin = cJSON_AddObjectToObject(o, "linear");
  cJSON_AddNumberToObject(lin, "alpha_ms", p->alpha_ns / 1e6);
  cJSON_AddNumberToObject(lin, "beta_ms", p->beta_ns / 1e6);
  cJSON_AddBoolToObject(lin, "fitted", p->linear_fitted);
  if (isnan(p->slo_ms))
    cJSON_AddNullToObject(o, "slo_ms");
  else
    cJSON_AddNumberToObject(o, "slo_ms", p->slo_ms);
  if (p->input_bytes < 0)
    cJSON_AddNullToObject(o, "input_bytes");
  else
    cJSON_AddNumberToObject(o, "input_bytes", (double)p->input_bytes);
  if (p->output_bytes < 0)
    cJSON_AddNullToObject(o, "output_bytes");
  else
    cJSON_AddNumberToObject(o, "output_bytes", (double)p->output_bytes);

  cJSON *fields = cJSON_AddObjectToObject(o, "fields");
  cJSON_AddStringToObject(fields, "mreq", coverage(count_mreq(p), p->n_points));
  for (int m = 0; m < CS_CREQ_N_METRICS; m++) {
    char *k = g_strdup_printf("creq_%s", metric_names[m]);
    cJSON_AddStringToObject(fields, k, coverage(count_creq(p, m), p->n_points));
    g_free(k);
  }
  cJSON_AddItemToObject(o, "mreq_batch_sizes", json_batches_with(p, -1));
  cJSON *cb = cJSON_AddObjectToObject(o, "creq_batch_sizes");
  for (int m = 0; m < CS_CREQ_N_METRICS; m++)
    cJSON_AddItemToObject(cb, metric_names[m], json_batches_with(p, m));

  cJSON *ia = cJSON_AddArrayToObject(o, "interference");
  GPtrArray *inter = interference_files_for(cat, p->model);
  for (guint k = 0; k < inter->len; k++) {
    const DataFile *fi = g_ptr_array_index(inter, k);
    int i = cs_interference_set_find(fi->interference, p->model);
    cJSON *io = cJSON_CreateObject();
    cJSON_AddStringToObject(io, "file", fi->name);
    cJSON_AddBoolToObject(io, "share_table", cs_interference_has_share_table(fi->interference, i));
    GPtrArray *pairs = interference_pairs(fi->interference, i);
    cJSON_AddItemToObject(io, "pairs_with", json_strings(pairs));
    g_ptr_array_free(pairs, TRUE);
    cJSON_AddItemToArray(ia, io);
  }
  g_ptr_array_free(inter, TRUE);

  cJSON *ig = cJSON_AddObjectToObject(o, "igniter");
  GPtrArray *ign = igniter_files_for(cat, p->gpu_type, p->model);
  cJSON_AddStringToObject(ig, "inputs", ign->len ? "measured" : "derived on demand");
  cJSON *ifs = cJSON_AddArrayToObject(ig, "files");
  for (guint k = 0; k < ign->len; k++)
    cJSON_AddItemToArray(ifs, cJSON_CreateString(((DataFile *)g_ptr_array_index(ign, k))->name));
  g_ptr_array_free(ign, TRUE);
  return o;
}

/* Prints (text) or adds (JSON) the profiles of a profile file that match
 * gpu_type / model (NULL: any), one table per GPU type. Returns the number of
 * GPU types shown (a type without models is shown too); adds the number of
 * profiles shown to *n_rows. */
static int show_profiles(const Catalog *cat, const DataFile *f, const char *gpu_type,
                         const char *model, GString *out, cJSON *rows, cJSON *gpu_list,
                         int *n_rows)
{
  int n = 0;
  GPtrArray *gpus = file_gpu_types(f);
  for (guint g = 0; g < gpus->len; g++) {
    const CsGpuType *gt = g_ptr_array_index(gpus, g);
    GPtrArray *profs = file_profiles(f, gt->name, model);
    if ((gpu_type && strcmp(gt->name, gpu_type) != 0) || (model && profs->len == 0)) {
      g_ptr_array_free(profs, TRUE);
      continue;
    }
    n++;
    if (gpu_list)
      cJSON_AddItemToArray(gpu_list, json_gpu_type(gt));
    if (out) {
      GString *desc = g_string_new(NULL);
      format_gpu(desc, gt);
      g_string_append_printf(out, "\nGPU type %s (%s): %s\n", gt->name, f->name, desc->str);
      g_string_free(desc, TRUE);
    }
    Table t;
    table_init(&t, 10);
    table_add(&t, (char *[]){ g_strdup("MODEL"), g_strdup("BATCH SIZES"), g_strdup("LATENCY ms"),
                              g_strdup("SLO ms"), g_strdup("IN B"), g_strdup("OUT B"),
                              g_strdup("CREQ"), g_strdup("MREQ"), g_strdup("INTERFERENCE"),
                              g_strdup("IGNITER INPUTS") });
    for (guint i = 0; i < profs->len; i++) {
      const CsModelProfile *p = g_ptr_array_index(profs, i);
      if (rows)
        cJSON_AddItemToArray(rows, profile_row_json(cat, f, p));
      else
        profile_row_text(cat, p, &t);
      (*n_rows)++;
    }
    if (out && profs->len)
      table_print(&t, out);
    else if (out)
      g_string_append(out, "(no models)\n");
    if (t.rows)
      g_ptr_array_free(t.rows, TRUE);
    g_ptr_array_free(profs, TRUE);
  }
  g_ptr_array_free(gpus, TRUE);
  return n;
}

/* Text of an interference or iGniter file. */
static void show_other_text(const DataFile *f, GString *out)
{
  GPtrArray *names = file_model_names(f);
  if (f->kind == KIND_INTERFERENCE) {
    g_string_append_printf(out, "interference data (%s), measured on %s\n",
                           CS_INTERFERENCE_FORMAT,
                           *cs_interference_set_description(f->interference)
                             ? cs_interference_set_description(f->interference)
                             : "(no description)");
    g_string_append(out, "Not tied to a GPU type: a scenario's cluster.interference chooses the "
                         "file that applies.\n\n");
    Table t;
    table_init(&t, 3);
    table_add(&t, (char *[]){ g_strdup("MODEL"), g_strdup("SHARE TABLE"),
                              g_strdup("MEASURED PAIRS WITH") });
    for (guint k = 0; k < names->len; k++) {
      int i = cs_interference_set_find(f->interference, g_ptr_array_index(names, k));
      GPtrArray *pairs = interference_pairs(f->interference, i);
      g_ptr_array_add(pairs, NULL);
      char *joined = pairs->len > 1 ? g_strjoinv(",", (char **)pairs->pdata) : g_strdup("-");
      g_ptr_array_free(pairs, TRUE);
      table_add(&t, (char *[]){ g_strdup(g_ptr_array_index(names, k)),
                                g_strdup(cs_interference_has_share_table(f->interference, i)
                                           ? "yes" : "-"),
                                joined });
    }
    table_print(&t, out);
  } else {
    g_string_append_printf(out, "iGniter measurements (%s) on GPU type %s\nmodels:",
                           CS_IGNITER_FORMAT, f->igniter->gpu_type);
    for (guint k = 0; k < names->len; k++)
      g_string_append_printf(out, "%s %s", k ? "," : "", (char *)g_ptr_array_index(names, k));
    g_string_append_c(out, '\n');
  }
  g_ptr_array_free(names, TRUE);
}

/* Every file, model and GPU type name of the catalog, for suggestions. */
static GPtrArray *all_names(const Catalog *cat)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    g_ptr_array_add(out, f->name);
    if (f->kind == KIND_PROFILE) {
      for (int i = f->gpu_first; i < f->gpu_end; i++)
        g_ptr_array_add(out, cs_profile_set_gpu_type_at(f->set, i)->name);
      for (int i = f->model_first; i < f->model_end; i++)
        g_ptr_array_add(out, cs_profile_set_model(f->set, i)->model);
    } else {
      GPtrArray *names = file_model_names(f);
      for (guint i = 0; i < names->len; i++)
        g_ptr_array_add(out, g_ptr_array_index(names, i));
      g_ptr_array_free(names, TRUE);
    }
  }
  return out;
}

int show(const Catalog *cat, const char *name, gboolean json, GString *out,
                cJSON **json_out, GError **error)
{
  /* A file: its name, or the path it was read from. */
  char *canonical = g_file_test(name, G_FILE_TEST_IS_REGULAR)
                      ? g_canonicalize_filename(name, NULL) : NULL;
  char *stem = !strchr(name, G_DIR_SEPARATOR) && g_str_has_suffix(name, ".json")
                 ? stem_of(name) : g_strdup(name);
  GPtrArray *files = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (strcmp(f->name, stem) == 0 || (canonical && strcmp(f->canonical, canonical) == 0))
      g_ptr_array_add(files, (gpointer)f);
  }
  g_free(canonical);
  g_free(stem);

  cJSON *root = json ? cJSON_CreateObject() : NULL;
  cJSON *rows = NULL, *gpu_list = NULL, *file_list = NULL;
  if (root) {
    cJSON_AddStringToObject(root, "query", name);
    file_list = cJSON_AddArrayToObject(root, "files");
    gpu_list = cJSON_AddArrayToObject(root, "gpu_types");
    rows = cJSON_AddArrayToObject(root, "profiles");
  }
  int n = 0, n_rows = 0;
  for (guint k = 0; k < files->len; k++) {
    const DataFile *f = g_ptr_array_index(files, k);
    n++;
    if (root)
      cJSON_AddItemToArray(file_list, json_file(f));
    else
      g_string_append_printf(out, "%s%s: %s\nsource: %s\n", k ? "\n" : "", f->name, f->path,
                             f->source);
    if (f->kind == KIND_PROFILE)
      show_profiles(cat, f, NULL, NULL, root ? NULL : out, rows, gpu_list, &n_rows);
    else if (!root)
      show_other_text(f, out);
  }
  const char *matched = "file";
  if (files->len == 0) {
    /* A model or a GPU type, in every profile file that has it. */
    int as_gpu = 0, as_model = 0;
    for (guint k = 0; k < cat->files->len; k++) {
      const DataFile *f = g_ptr_array_index(cat->files, k);
      if (f->kind != KIND_PROFILE)
        continue;
      int ng = show_profiles(cat, f, name, NULL, root ? NULL : out, rows, gpu_list, &n_rows);
      int nm = show_profiles(cat, f, NULL, name, root ? NULL : out, rows, gpu_list, &n_rows);
      if ((ng || nm) && root)
        cJSON_AddItemToArray(file_list, json_file(f));
      as_gpu += ng;
      as_model += nm;
    }
    n = as_gpu + as_model;
    matched = as_gpu && as_model ? "gpu type and model" : as_gpu ? "gpu type" : "model";
  }
  g_ptr_array_free(files, TRUE);

  GPtrArray *names = all_names(cat);
  if (n == 0) {
    char *hint = cs_did_you_mean(name, (const char *const *)names->pdata, (int)names->len);
    fail(error, "no profile file, model or GPU type called \"%s\"%s (clustersim profile list "
                "shows the files)", name, hint);
    g_free(hint);
    g_ptr_array_free(names, TRUE);
    cJSON_Delete(root);
    return EXIT_BAD_INPUT;
  }
  /* Names are case-sensitive: point out the ones that differ only in case. */
  g_ptr_array_sort(names, compare_str_ptr);
  GPtrArray *similar = g_ptr_array_new();
  for (guint i = 0; i < names->len; i++) {
    const char *s = g_ptr_array_index(names, i);
    if (g_ascii_strcasecmp(s, name) == 0 && strcmp(s, name) != 0 &&
        (similar->len == 0 || strcmp(g_ptr_array_index(similar, similar->len - 1), s) != 0))
      g_ptr_array_add(similar, (gpointer)s);
  }
  if (root) {
    cJSON_AddStringToObject(root, "matched", matched);
    cJSON_AddItemToObject(root, "differs_only_in_case", json_strings(similar));
  } else if (similar->len) {
    g_string_append(out, "\nNames are case-sensitive; also known:");
    for (guint i = 0; i < similar->len; i++)
      g_string_append_printf(out, "%s \"%s\"", i ? "," : "", (char *)g_ptr_array_index(similar, i));
    g_string_append_c(out, '\n');
  }
  g_ptr_array_free(similar, TRUE);
  g_ptr_array_free(names, TRUE);
  if (!root && n_rows)
    g_string_append(out,
                    "\nCREQ: compute requirement metrics given (n/m: at n of m batch sizes); "
                    "MREQ: memory requirement.\n"
                    "INTERFERENCE: interference files with this model (not tied to a GPU type; "
                    "a scenario's cluster.interference picks one).\n"
                    "IGNITER INPUTS: measured = a clustersim-igniter file covers this model on "
                    "this GPU type; otherwise derived on demand from the simulator's GPU model.\n");
  *json_out = root;
  return 0;
}
