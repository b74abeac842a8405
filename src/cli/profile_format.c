/* Formatting for the profile subcommand: the helpers that list and show
 * share to put files, GPU types and profiles into text tables (columns
 * padded by display width) and into JSON. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd_profile.h"

/* ---- Formatting helpers --------------------------------------------------- */

/* Characters of s as a terminal shows them: UTF-8 characters, or bytes when
 * s is not valid UTF-8 (the JSON parser does not check, and the UTF-8
 * functions must not walk past the end of a broken sequence). */
static int display_width(const char *s)
{
  return g_utf8_validate(s, -1, NULL) ? (int)g_utf8_strlen(s, -1) : (int)strlen(s);
}

char *one_line(const char *text, int width)
{
  /* Sources are paragraphs; a listing gets the start of the first line. */
  char *raw = g_strndup(text, strcspn(text, "\n"));
  char *line = g_utf8_make_valid(raw, -1);
  g_free(raw);
  if (g_utf8_strlen(line, -1) <= width)
    return line;
  char *cut = g_utf8_substring(line, 0, width - 3);
  char *out = g_strconcat(cut, "...", NULL);
  g_free(cut);
  g_free(line);
  return out;
}

/* Batch sizes as "4,8,16" with runs of 3 or more consecutive sizes as "1-32". */
void append_batches(GString *s, const int *b, int n)
{
  for (int i = 0; i < n;) {
    int j = i; /* last of the run of consecutive sizes starting at i */
    while (j + 1 < n && b[j + 1] == b[j] + 1)
      j++;
    if (s->len)
      g_string_append_c(s, ',');
    if (j - i >= 2) {
      g_string_append_printf(s, "%d-%d", b[i], b[j]);
      i = j + 1;
    } else {
      g_string_append_printf(s, "%d", b[i]);
      i++;
    }
  }
}

/* "all", "some" or "none" of n points having a value. */
const char *coverage(int have, int n)
{
  return n > 0 && have == n ? "all" : have > 0 ? "some" : "none";
}

int count_mreq(const CsModelProfile *p)
{
  int n = 0;
  for (int i = 0; i < p->n_points; i++)
    n += !isnan(p->points[i].mreq_pct);
  return n;
}

int count_creq(const CsModelProfile *p, int m)
{
  int n = 0;
  for (int i = 0; i < p->n_points; i++)
    n += !isnan(p->points[i].creq_pct[m]);
  return n;
}

/* "80 SMs, 16 GiB; DESCRIPTION" (descriptions are sentences: they go last). */
void format_gpu(GString *s, const CsGpuType *g)
{
  if (g->sm_count > 0)
    g_string_append_printf(s, "%d SMs", g->sm_count);
  else
    g_string_append(s, "SM count unknown");
  if (g->memory_bytes > 0)
    g_string_append_printf(s, ", %.4g GiB", (double)g->memory_bytes / (1024.0 * 1024 * 1024));
  else
    g_string_append(s, ", memory unknown");
  if (*g->description)
    g_string_append_printf(s, "; %s", g->description);
}

/* Smallest and largest profiled latency, ms (n_points > 0). */
void latency_range_ms(const CsModelProfile *p, double *lo, double *hi)
{
  int64_t a = p->points[0].latency_ns, b = a;
  for (int i = 1; i < p->n_points; i++) {
    a = MIN(a, p->points[i].latency_ns);
    b = MAX(b, p->points[i].latency_ns);
  }
  *lo = a / 1e6;
  *hi = b / 1e6;
}

void table_init(Table *t, int n_cols)
{
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  t->n_cols = n_cols;
}

/* Takes over the n_cols cells (g_strdup'd or g_strdup_printf'd). */
void table_add(Table *t, char **cells)
{
  char **row = g_new0(char *, t->n_cols + 1);
  for (int c = 0; c < t->n_cols; c++)
    row[c] = cells[c];
  g_ptr_array_add(t->rows, row);
}

void table_print(Table *t, GString *out)
{
  int *w = g_new0(int, t->n_cols);
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    for (int c = 0; c < t->n_cols; c++)
      w[c] = MAX(w[c], display_width(row[c]));
  }
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    GString *line = g_string_new(NULL);
    for (int c = 0; c < t->n_cols; c++) {
      g_string_append(line, row[c]);
      if (c < t->n_cols - 1)
        for (int k = display_width(row[c]); k < w[c] + 2; k++)
          g_string_append_c(line, ' ');
    }
    while (line->len && line->str[line->len - 1] == ' ')
      g_string_truncate(line, line->len - 1);
    g_string_append_printf(out, "%s\n", line->str);
    g_string_free(line, TRUE);
  }
  g_free(w);
  g_ptr_array_free(t->rows, TRUE);
  t->rows = NULL;
}

cJSON *json_strings(GPtrArray *names)
{
  cJSON *a = cJSON_CreateArray();
  for (guint i = 0; i < names->len; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g_ptr_array_index(names, i)));
  return a;
}

static const char *kind_name(FileKind k)
{
  return k == KIND_PROFILE ? "profile" : k == KIND_INTERFERENCE ? "interference" : "igniter";
}

/* The fields every file has in JSON: name, path, kind, given, source. */
static cJSON *json_file_head(const DataFile *f)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", f->name);
  cJSON_AddStringToObject(o, "path", f->path);
  cJSON_AddStringToObject(o, "kind", kind_name(f->kind));
  cJSON_AddBoolToObject(o, "given", f->given);
  cJSON_AddStringToObject(o, "source", f->source);
  return o;
}

cJSON *json_gpu_type(const CsGpuType *g)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", g->name);
  cJSON_AddStringToObject(o, "description", g->description);
  if (g->sm_count > 0)
    cJSON_AddNumberToObject(o, "sm_count", g->sm_count);
  else
    cJSON_AddNullToObject(o, "sm_count");
  if (g->memory_bytes > 0)
    cJSON_AddNumberToObject(o, "memory_bytes", (double)g->memory_bytes);
  else
    cJSON_AddNullToObject(o, "memory_bytes");
  return o;
}

/* A file as `profile list` describes it. */
cJSON *json_file(const DataFile *f)
{
  cJSON *o = json_file_head(f);
  if (f->kind == KIND_PROFILE) {
    GPtrArray *gpus = file_gpu_types(f);
    cJSON *a = cJSON_AddArrayToObject(o, "gpu_types");
    for (guint i = 0; i < gpus->len; i++) {
      const CsGpuType *g = g_ptr_array_index(gpus, i);
      cJSON *go = json_gpu_type(g);
      cJSON_AddNumberToObject(go, "models", file_n_models(f, g->name));
      cJSON_AddItemToArray(a, go);
    }
    g_ptr_array_free(gpus, TRUE);
    cJSON_AddNumberToObject(o, "models", file_n_models(f, NULL));
  } else {
    if (f->kind == KIND_INTERFERENCE)
      cJSON_AddStringToObject(o, "description", cs_interference_set_description(f->interference));
    else
      cJSON_AddStringToObject(o, "gpu_type", f->igniter->gpu_type);
    GPtrArray *names = file_model_names(f);
    cJSON_AddItemToObject(o, "models", json_strings(names));
    g_ptr_array_free(names, TRUE);
  }
  return o;
}
