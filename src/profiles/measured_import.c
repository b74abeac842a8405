/* Measured rows to profile and interference files; see measured_import.h. */
#include "profiles/measured_import.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/interference_fit.h"
#include "profiles/profile.h"
#include "profiles/share_rule.h"

/* One row that maps to an output. */
typedef struct {
  char *gpu, *model;       /* GPU type and model name as written */
  int batch;
  double share;            /* percent; 100 for blank */
  const CsMeasuredRow *row;
  int file;
  /* pairs */
  char *partner;           /* NULL for isolated rows */
  int partner_batch;
  double partner_share;
  double ratio;            /* latency / isolated latency */
} Point;

static void point_clear(gpointer p)
{
  Point *pt = p;
  g_free(pt->gpu);
  g_free(pt->model);
  g_free(pt->partner);
}

char *cs_measured_slug(const char *text)
{
  GString *s = g_string_new(NULL);
  int depth = 0;
  gboolean gap = FALSE;
  for (const char *p = text; *p; p++) {
    if (*p == '(') {
      depth++;
      continue;
    }
    if (*p == ')') {
      depth = MAX(0, depth - 1);
      continue;
    }
    if (depth > 0)
      continue;
    if (g_ascii_isalnum(*p)) {
      if (gap && s->len > 0)
        g_string_append_c(s, '_');
      g_string_append_c(s, g_ascii_tolower(*p));
      gap = FALSE;
    } else
      gap = TRUE;
  }
  return g_string_free(s, FALSE);
}

/* Reasons rows are not used, with the lines of each, per file. */
typedef struct {
  char *reason;
  int n;
  GString *where; /* "FILE lines 1, 2, ..." (first few per file) */
  int last_file, shown;
} Skip;

static void skip_add(GPtrArray *skips, const char *reason, const char *file_name, int file,
                     int64_t line)
{
  Skip *s = NULL;
  for (guint i = 0; i < skips->len && !s; i++)
    if (strcmp(((Skip *)skips->pdata[i])->reason, reason) == 0)
      s = skips->pdata[i];
  if (!s) {
    s = g_new0(Skip, 1);
    s->reason = g_strdup(reason);
    s->where = g_string_new(NULL);
    s->last_file = -1;
    g_ptr_array_add(skips, s);
  }
  s->n++;
  if (s->last_file != file) {
    g_string_append_printf(s->where, "%s%s line %" G_GINT64_FORMAT, s->where->len ? "; " : "",
                           file_name, line);
    s->last_file = file;
    s->shown = 1;
  } else if (s->shown < 5) {
    g_string_append_printf(s->where, ", %" G_GINT64_FORMAT, line);
    s->shown++;
  } else if (s->shown == 5) {
    g_string_append(s->where, ", ...");
    s->shown++;
  }
}

static void skips_to_messages(GPtrArray *skips, GPtrArray *out)
{
  for (guint i = 0; i < skips->len; i++) {
    Skip *s = skips->pdata[i];
    g_ptr_array_add(out, g_strdup_printf("%d row%s not imported: %s (%s)", s->n, s->n == 1 ? "" : "s",
                                         s->reason, s->where->str));
    g_free(s->reason);
    g_string_free(s->where, TRUE);
    g_free(s);
  }
  g_ptr_array_set_size(skips, 0);
}

static gboolean fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, msg);
  g_free(msg);
  return FALSE;
}

/* The GPU type name of a row's gpu value; NULL with error when unmapped. */
static char *gpu_type_of(const CsImportOptions *opt, const CsMeasuredFile *f,
                         const CsMeasuredRow *r, const char **single_gpu, GError **error)
{
  if (!opt->gpu_types)
    return cs_measured_slug(r->gpu);
  if (g_strv_length(opt->gpu_types) == 1 && !strchr(opt->gpu_types[0], '=')) {
    if (*single_gpu && strcmp(*single_gpu, r->gpu) != 0) {
      fail(error, "%s: line %" G_GINT64_FORMAT ": column gpu: --gpu-type %s names one GPU type, "
           "but the rows name several GPUs (\"%s\" and \"%s\"); map each with --gpu-type "
           "'GPU=NAME'", f->path, r->line, opt->gpu_types[0], *single_gpu, r->gpu);
      return NULL;
    }
    *single_gpu = r->gpu;
    return g_strdup(opt->gpu_types[0]);
  }
  for (char **m = opt->gpu_types; *m; m++) {
    const char *eq = strrchr(*m, '=');
    if (eq && (size_t)(eq - *m) == strlen(r->gpu) && strncmp(*m, r->gpu, (size_t)(eq - *m)) == 0)
      return g_strdup(eq + 1);
  }
  fail(error, "%s: line %" G_GINT64_FORMAT ": column gpu: no --gpu-type 'GPU=NAME' maps \"%s\"",
       f->path, r->line, r->gpu);
  return NULL;
}

static const char *row_column(const CsMeasuredRow *r, const char *col)
{
  static const struct {
    const char *name;
    size_t off;
  } cols[] = {
    { "source", offsetof(CsMeasuredRow, source) },
    { "gpu", offsetof(CsMeasuredRow, gpu) },
    { "sharing", offsetof(CsMeasuredRow, sharing) },
    { "stat", offsetof(CsMeasuredRow, stat) },
    { "precision", offsetof(CsMeasuredRow, precision) },
    { "framework_context", offsetof(CsMeasuredRow, framework_context) },
    { "machine", offsetof(CsMeasuredRow, machine) },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
    if (strcmp(cols[i].name, col) == 0)
      return *(char *const *)(const void *)((const char *)r + cols[i].off);
  return NULL;
}

static char *model_of(const CsImportOptions *opt, const CsMeasuredRow *r)
{
  if (!opt->variant_by)
    return g_strdup(r->model);
  GString *s = g_string_new(r->model);
  gboolean first = TRUE;
  for (char **c = opt->variant_by; *c; c++) {
    char *slug = cs_measured_slug(row_column(r, *c));
    if (*slug) {
      g_string_append_printf(s, "%s%s", first ? "@" : "_", slug);
      first = FALSE;
    }
    g_free(slug);
  }
  return g_string_free(s, FALSE);
}

static int cmp_point(gconstpointer a, gconstpointer b)
{
  const Point *x = a, *y = b;
  int c = strcmp(x->gpu, y->gpu);
  if (!c)
    c = strcmp(x->model, y->model);
  if (!c && (x->partner || y->partner))
    c = strcmp(x->partner ? x->partner : "", y->partner ? y->partner : "");
  if (!c)
    c = (x->batch > y->batch) - (x->batch < y->batch);
  if (!c)
    c = (x->share > y->share) - (x->share < y->share);
  if (!c)
    c = (x->partner_batch > y->partner_batch) - (x->partner_batch < y->partner_batch);
  if (!c)
    c = (x->partner_share > y->partner_share) - (x->partner_share < y->partner_share);
  return c;
}

static void sidecar_row(GString *s, const char *json_path, const CsImportOptions *opt,
                        const Point *p)
{
  cs_measured_csv_field(s, json_path);
  g_string_append_c(s, ',');
  cs_measured_csv_field(s, opt->file_names[p->file]);
  g_string_append_printf(s, ",%" G_GINT64_FORMAT ",", p->row->line);
  cs_measured_csv_field(s, p->row->source_path);
  g_string_append_c(s, '\n');
}

#define SIDECAR_HEADER "json_path,file,line,source_path\n"

/* "Imported by ... from F1 (sha256 ...), F2 (...): sources S1, S2." */
static char *source_text(CsMeasuredFile *const *files, int n, const CsImportOptions *opt,
                         const char *what)
{
  GString *s = g_string_new("Imported by `clustersim profile import` from ");
  GPtrArray *sources = g_ptr_array_new();
  for (int i = 0; i < n; i++) {
    g_string_append_printf(s, "%s%s (sha256 %s)", i ? ", " : "", opt->file_names[i],
                           files[i]->sha256);
    for (int k = 0; k < files[i]->n_rows; k++) {
      const char *src = files[i]->rows[k].source;
      gboolean seen = FALSE;
      for (guint j = 0; j < sources->len && !seen; j++)
        seen = strcmp(sources->pdata[j], src) == 0;
      if (!seen)
        g_ptr_array_add(sources, (gpointer)src);
    }
  }
  g_string_append(s, "; rows of source ");
  for (guint j = 0; j < sources->len; j++)
    g_string_append_printf(s, "%s%s", j ? ", " : "", (char *)sources->pdata[j]);
  g_string_append_printf(s, ". %s Where each number comes from: the provenance CSV written "
                         "beside this file (json_path, file, line, source_path; "
                         "docs/profiles.md, \"Importing measured data\").", what);
  g_ptr_array_free(sources, TRUE);
  return g_string_free(s, FALSE);
}

/* Profile: one model per (gpu, model) with >= 2 points. pts sorted. */
static cJSON *build_profile(GArray *pts, CsMeasuredFile *const *files, int n,
                            const CsImportOptions *opt, CsImportResult *res, GPtrArray *skips)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", "clustersim-profile");
  cJSON_AddNumberToObject(root, "version", 1);
  char *src = source_text(files, n, opt,
                          "Batch points: isolated rows at share 100 % or blank (latency_ms, "
                          "throughput as throughput_rps); note: the row's source_path.");
  cJSON_AddStringToObject(root, "source", src);
  g_free(src);
  cJSON *types = cJSON_AddArrayToObject(root, "gpu_types");
  cJSON *models = cJSON_AddArrayToObject(root, "models");
  res->profile_sources = g_string_new(SIDECAR_HEADER);
  const char *last_gpu = NULL;
  int n_models = 0;
  for (guint i = 0; i < pts->len;) {
    const Point *p = &g_array_index(pts, Point, i);
    guint j = i;
    while (j < pts->len && strcmp(g_array_index(pts, Point, j).gpu, p->gpu) == 0 &&
           strcmp(g_array_index(pts, Point, j).model, p->model) == 0)
      j++;
    if (j - i < 2) {
      skip_add(skips, "the only batch point of its model at full share (a profile needs two)",
               opt->file_names[p->file], p->file, p->row->line);
      i = j;
      continue;
    }
    if (!last_gpu || strcmp(last_gpu, p->gpu) != 0) {
      cJSON *t = cJSON_CreateObject();
      cJSON_AddStringToObject(t, "name", p->gpu);
      char *d = g_strdup_printf("as measured: %s", p->row->gpu);
      cJSON_AddStringToObject(t, "description", d);
      g_free(d);
      cJSON_AddItemToArray(types, t);
      last_gpu = p->gpu;
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "gpu", p->gpu);
    cJSON_AddStringToObject(m, "model", p->model);
    cJSON *bs = cJSON_AddArrayToObject(m, "batches");
    for (guint k = i; k < j; k++) {
      const Point *q = &g_array_index(pts, Point, k);
      cJSON *b = cJSON_CreateObject();
      cJSON_AddNumberToObject(b, "batch", q->batch);
      cJSON_AddNumberToObject(b, "latency_ms", q->row->latency_ms);
      if (q->row->throughput > 0)
        cJSON_AddNumberToObject(b, "throughput_rps", q->row->throughput);
      if (q->row->source_path[0])
        cJSON_AddStringToObject(b, "note", q->row->source_path);
      cJSON_AddItemToArray(bs, b);
      char *jp = g_strdup_printf("models[%d].batches[%u].latency_ms", n_models, k - i);
      sidecar_row(res->profile_sources, jp, opt, q);
      g_free(jp);
      if (q->row->throughput > 0) {
        jp = g_strdup_printf("models[%d].batches[%u].throughput_rps", n_models, k - i);
        sidecar_row(res->profile_sources, jp, opt, q);
        g_free(jp);
      }
      res->n_batch_points++;
    }
    cJSON_AddItemToArray(models, m);
    n_models++;
    i = j;
  }
  if (n_models == 0) {
    cJSON_Delete(root);
    g_string_free(res->profile_sources, TRUE);
    res->profile_sources = NULL;
    return NULL;
  }
  return root;
}

static void add_fallback(cJSON *root, const CsInterferenceFallback *fb)
{
  cJSON *f = cJSON_AddObjectToObject(root, "fallback");
  cJSON_AddStringToObject(f, "form", "batch_share");
  cJSON_AddNumberToObject(f, "c", fb->c);
  cJSON_AddNumberToObject(f, "batch_exponent", fb->batch_exponent);
  cJSON_AddNumberToObject(f, "share_exponent", fb->share_exponent);
  if (fb->fixed_exponent != 0.0)
    cJSON_AddNumberToObject(f, "fixed_exponent", fb->fixed_exponent);
  cJSON *c = cJSON_AddObjectToObject(root, "combine");
  if (fb->combine == CS_COMBINE_PRODUCT)
    cJSON_AddStringToObject(c, "rule", "product");
  else {
    cJSON_AddStringToObject(c, "rule", "norm");
    if (fabs(fb->combine_exponent - MAX(1.0, 1.0 / fb->share_exponent)) > 1e-12)
      cJSON_AddNumberToObject(c, "exponent", fb->combine_exponent);
  }
}

/* The victim's fixed part phi (CsPairObs.fixed_v) of every pair row, from
 * the profile this import builds, when the fallback's victim term needs it
 * (else all 0). FALSE when a victim has no full-GPU rows to take it from. */
static gboolean victims_fixed(GArray *pairs, const CsImportOptions *opt, const cJSON *profile,
                              double *fixed, GError **error)
{
  for (guint i = 0; i < pairs->len; i++)
    fixed[i] = 0.0;
  if (opt->fallback.fixed_exponent == 0.0 || pairs->len == 0)
    return TRUE;
  CsProfileSet *set = cs_profile_set_new();
  gboolean ok = TRUE;
  if (profile) {
    char *text = cJSON_PrintUnformatted(profile);
    ok = cs_profile_set_load_data(set, text, opt->profile_name, error);
    cJSON_free(text);
  }
  for (guint i = 0; ok && i < pairs->len; i++) {
    const Point *p = &g_array_index(pairs, Point, i);
    const CsModelProfile *prof = cs_profile_set_lookup(set, p->gpu, p->model);
    double f = prof ? cs_share_scalable_fraction(prof, p->batch) : NAN;
    if (isnan(f))
      ok = fail(error, "pair rows of model \"%s\" on GPU type %s: the fallback's victim term "
                "(fixed_exponent %g) needs the model's isolated rows at the whole GPU, for its "
                "fixed part; none was imported", p->model, p->gpu, opt->fallback.fixed_exponent);
    else
      fixed[i] = 1.0 - f;
  }
  cs_profile_set_free(set);
  return ok;
}

static cJSON *build_interference(GArray *cells, GArray *pairs, const double *fixed,
                                 CsMeasuredFile *const *files, int n,
                                 const CsImportOptions *opt, CsImportResult *res)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", "clustersim-interference");
  cJSON_AddNumberToObject(root, "version", 1);
  char *what = g_strdup_printf(
    "share_latency: isolated rows of the models measured below 100 %% share, [batch, share_pct, "
    "latency_ms]. pairs: per ordered (victim, aggressor), the scale on the fallback's excess "
    "fitted by cs_fit_pair_scale (log least squares of latency / isolated_latency_ms) on the "
    "co-located rows with one partner, samples = rows. fallback: %s.",
    opt->fallback_source ? opt->fallback_source : "the built-in default");
  char *src = source_text(files, n, opt, what);
  g_free(what);
  cJSON_AddStringToObject(root, "source", src);
  g_free(src);
  const Point *any = cells->len ? &g_array_index(cells, Point, 0)
                                : pairs->len ? &g_array_index(pairs, Point, 0) : NULL;
  if (any) {
    char *d = g_strdup_printf("%s (GPU type %s)", any->row->gpu, any->gpu);
    cJSON_AddStringToObject(root, "description", d);
    g_free(d);
  }
  res->interference_sources = g_string_new(SIDECAR_HEADER);
  cJSON *models = cJSON_AddArrayToObject(root, "models");
  int n_models = 0;
  for (guint i = 0; i < cells->len;) {
    const Point *p = &g_array_index(cells, Point, i);
    guint j = i;
    gboolean below = FALSE;
    while (j < cells->len && strcmp(g_array_index(cells, Point, j).model, p->model) == 0) {
      below |= g_array_index(cells, Point, j).share < 100;
      j++;
    }
    if (!below) {
      i = j;
      continue;
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "model", p->model);
    cJSON *t = cJSON_AddArrayToObject(m, "share_latency");
    for (guint k = i; k < j; k++) {
      const Point *q = &g_array_index(cells, Point, k);
      cJSON *c = cJSON_CreateArray();
      cJSON_AddItemToArray(c, cJSON_CreateNumber(q->batch));
      cJSON_AddItemToArray(c, cJSON_CreateNumber(q->share));
      cJSON_AddItemToArray(c, cJSON_CreateNumber(q->row->latency_ms));
      cJSON_AddItemToArray(t, c);
      char *jp = g_strdup_printf("models[%d].share_latency[%u]", n_models, k - i);
      sidecar_row(res->interference_sources, jp, opt, q);
      g_free(jp);
      res->n_share_cells++;
    }
    cJSON_AddItemToArray(models, m);
    n_models++;
    i = j;
  }
  cJSON *jpairs = cJSON_AddArrayToObject(root, "pairs");
  CsBatchShareFit fit = { .c = opt->fallback.c, .x = opt->fallback.batch_exponent,
                          .z = opt->fallback.share_exponent,
                          .w = opt->fallback.fixed_exponent };
  int n_pairs = 0;
  for (guint i = 0; i < pairs->len;) {
    const Point *p = &g_array_index(pairs, Point, i);
    guint j = i;
    while (j < pairs->len && strcmp(g_array_index(pairs, Point, j).model, p->model) == 0 &&
           strcmp(g_array_index(pairs, Point, j).partner, p->partner) == 0)
      j++;
    int k = (int)(j - i);
    CsPairObs *obs = g_new(CsPairObs, k);
    for (int o = 0; o < k; o++) {
      const Point *q = &g_array_index(pairs, Point, i + (guint)o);
      obs[o] = (CsPairObs){ 0, 1, q->batch, q->partner_batch, q->share / 100.0,
                            q->partner_share / 100.0, q->ratio, fixed[i + (guint)o], 0 };
    }
    double scale = cs_fit_pair_scale(obs, k, NULL, &fit);
    g_free(obs);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "victim", p->model);
    cJSON_AddStringToObject(e, "aggressor", p->partner);
    /* 6 significant digits: the fit's own uncertainty is far larger. */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    cJSON_AddNumberToObject(e, "scale", g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, "%.6g",
                                                                       scale), NULL));
    cJSON_AddNumberToObject(e, "samples", k);
    cJSON_AddItemToArray(jpairs, e);
    char *jp = g_strdup_printf("pairs[%d].scale", n_pairs);
    for (guint o = i; o < j; o++)
      sidecar_row(res->interference_sources, jp, opt, &g_array_index(pairs, Point, o));
    g_free(jp);
    res->n_pair_rows += k;
    n_pairs++;
    i = j;
  }
  res->n_pairs = n_pairs;
  add_fallback(root, &opt->fallback);
  return root;
}

void cs_import_result_clear(CsImportResult *r)
{
  cJSON_Delete(r->profile);
  cJSON_Delete(r->interference);
  if (r->profile_sources)
    g_string_free(r->profile_sources, TRUE);
  if (r->interference_sources)
    g_string_free(r->interference_sources, TRUE);
  if (r->skipped)
    g_ptr_array_free(r->skipped, TRUE);
  memset(r, 0, sizeof *r);
}

/* Key of a point for duplicate detection. */
static char *point_key(const Point *p)
{
  return g_strdup_printf("%s\t%s\t%d\t%.9g", p->gpu, p->model, p->batch, p->share);
}

static gboolean classify(CsMeasuredFile *const *files, int n, const CsImportOptions *opt,
                         GArray *iso, GArray *pairs, GPtrArray *skips, GError **error)
{
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  const char *single_gpu = NULL;
  gboolean ok = TRUE;
  for (int fi = 0; ok && fi < n; fi++) {
    const CsMeasuredFile *f = files[fi];
    const char *fname = opt->file_names[fi];
    if (opt->variant_by)
      for (char **c = opt->variant_by; *c; c++)
        if (!row_column(&f->rows[0], *c)) {
          ok = fail(error, "--variant-by: \"%s\" is not a text column a variant can come from "
                    "(source, gpu, sharing, stat, precision, framework_context, machine)", *c);
          break;
        }
    for (int ri = 0; ok && ri < f->n_rows; ri++) {
      const CsMeasuredRow *r = &f->rows[ri];
      if (r->mig_gpcs > 0) {
        skip_add(skips, "MIG instance rows (mig_gpcs; not an MPS share of the whole GPU)", fname,
                 fi, r->line);
        continue;
      }
      if (r->time_quota_pct < 100) {
        skip_add(skips, "time quota below 100 % (time_quota_pct)", fname, fi, r->line);
        continue;
      }
      Point p = { 0 };
      p.gpu = gpu_type_of(opt, f, r, &single_gpu, error);
      if (!p.gpu) {
        ok = FALSE;
        break;
      }
      p.model = model_of(opt, r);
      p.batch = r->batch;
      p.share = isnan(r->share_pct) ? 100.0 : r->share_pct;
      p.row = r;
      p.file = fi;
      p.ratio = NAN;
      if (r->kind == CS_MEASURED_ISOLATED) {
        if (p.share < 100 && !opt->interference) {
          skip_add(skips, "isolated rows below 100 % share (no --interference output asked for)",
                   fname, fi, r->line);
          point_clear(&p);
          continue;
        }
        char *key = point_key(&p);
        int prev_i = GPOINTER_TO_INT(g_hash_table_lookup(seen, key)) - 1;
        if (prev_i >= 0) {
          const Point *prev = &g_array_index(iso, Point, prev_i);
          ok = fail(error, "%s: line %" G_GINT64_FORMAT ": GPU type %s, model %s, batch %d, "
                    "share %g %% is also given at %s line %" G_GINT64_FORMAT " (one measurement "
                    "per point; --variant-by COLUMNS tells variants apart)",
                    f->path, r->line, p.gpu, p.model, p.batch, p.share,
                    files[prev->file]->path, prev->row->line);
          g_free(key);
          point_clear(&p);
          break;
        }
        g_array_append_val(iso, p);
        /* The index + 1: pointers into iso move as it grows. */
        g_hash_table_insert(seen, key, GINT_TO_POINTER((int)iso->len));
        continue;
      }
      const char *why = NULL;
      if (!opt->interference)
        why = "co-located rows (no --interference output asked for)";
      else if (r->kind == CS_MEASURED_COLOCATED_SAME_MODEL)
        why = "co-located with copies of the same model (colocated_same_model)";
      else if (r->n_partners != 1 || r->partners[0].copies != 1)
        why = "co-located with several partners or copies (pairs take one)";
      else if (isnan(r->share_pct) || isnan(r->partners[0].share_pct))
        why = "co-located without the MPS share of both sides";
      else if (isnan(r->isolated_latency_ms))
        why = "co-located without isolated_latency_ms";
      if (why) {
        skip_add(skips, why, fname, fi, r->line);
        point_clear(&p);
        continue;
      }
      p.partner = g_strdup(r->partners[0].model);
      p.partner_batch = r->partners[0].batch;
      p.partner_share = r->partners[0].share_pct;
      p.ratio = r->latency_ms / r->isolated_latency_ms;
      g_array_append_val(pairs, p);
    }
  }
  g_hash_table_destroy(seen);
  return ok;
}

gboolean cs_measured_import(CsMeasuredFile *const *files, int n, const CsImportOptions *opt,
                            CsImportResult *res, GError **error)
{
  memset(res, 0, sizeof *res);
  res->skipped = g_ptr_array_new_with_free_func(g_free);
  if (opt->interference && opt->fallback.form != CS_FALLBACK_BATCH_SHARE)
    return fail(error, "the fallback is of the linear form; pair scales are fitted against the "
                "batch_share form only (docs/gpu-model.md)");
  GArray *iso = g_array_new(FALSE, TRUE, sizeof(Point));
  GArray *pairs = g_array_new(FALSE, TRUE, sizeof(Point));
  g_array_set_clear_func(iso, point_clear);
  g_array_set_clear_func(pairs, point_clear);
  GPtrArray *skips = g_ptr_array_new();
  gboolean ok = classify(files, n, opt, iso, pairs, skips, error);
  if (ok) {
    g_array_sort(iso, cmp_point);
    g_array_sort(pairs, cmp_point);
    GArray *full = g_array_new(FALSE, TRUE, sizeof(Point)); /* shallow copies */
    for (guint i = 0; i < iso->len; i++)
      if (g_array_index(iso, Point, i).share >= 100)
        g_array_append_val(full, g_array_index(iso, Point, i));
    res->profile = build_profile(full, files, n, opt, res, skips);
    g_array_free(full, TRUE);
    if (opt->interference) {
      /* One GPU type per interference file. */
      const char *gpu = NULL;
      for (guint k = 0; ok && k < iso->len + pairs->len; k++) {
        const Point *p = k < iso->len ? &g_array_index(iso, Point, k)
                                      : &g_array_index(pairs, Point, k - iso->len);
        if (k < iso->len && p->share >= 100)
          continue;
        if (gpu && strcmp(gpu, p->gpu) != 0)
          ok = fail(error, "--interference: the share and pair rows are of several GPU types "
                    "(%s, %s); an interference file describes one: import one GPU at a time",
                    gpu, p->gpu);
        gpu = p->gpu;
      }
      if (ok) {
        GArray *cells = g_array_new(FALSE, TRUE, sizeof(Point));
        for (guint i = 0; i < iso->len; i++)
          if (!gpu || strcmp(g_array_index(iso, Point, i).gpu, gpu) == 0)
            g_array_append_val(cells, g_array_index(iso, Point, i));
        double *fixed = g_new(double, pairs->len + 1);
        ok = victims_fixed(pairs, opt, res->profile, fixed, error);
        if (ok)
          res->interference = build_interference(cells, pairs, fixed, files, n, opt, res);
        g_free(fixed);
        g_array_free(cells, TRUE);
      }
    }
  }
  skips_to_messages(skips, res->skipped);
  g_ptr_array_free(skips, TRUE);
  g_array_free(iso, TRUE);
  g_array_free(pairs, TRUE);
  if (ok && !res->profile && !(res->interference && (res->n_share_cells || res->n_pairs)))
    ok = fail(error, "no row maps to a batch point, a share cell or a pair (see the rows "
              "not imported above)");
  /* Every output must load: a share table that cannot be completed is
   * refused here, with the loader's message. */
  if (ok && res->interference) {
    char *text = cJSON_PrintUnformatted(res->interference);
    CsInterferenceSet *set = cs_interference_set_load_data(text, opt->interference_name, error);
    ok = set != NULL;
    cs_interference_set_free(set);
    cJSON_free(text);
  }
  if (ok && res->profile) {
    char *text = cJSON_PrintUnformatted(res->profile);
    CsProfileSet *set = cs_profile_set_new();
    ok = cs_profile_set_load_data(set, text, opt->profile_name, error);
    cs_profile_set_free(set);
    cJSON_free(text);
  }
  if (!ok) {
    GPtrArray *keep = res->skipped;
    res->skipped = NULL;
    cs_import_result_clear(res);
    res->skipped = keep; /* the caller may still say what was not used */
  }
  return ok;
}
