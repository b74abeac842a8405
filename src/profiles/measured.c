/* Reader of the measured-rows CSV format; see measured.h. */
#include "measured.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "common/csv.h"

/* Every known column; the order is the one messages list them in. */
typedef enum {
  COL_SOURCE = 0, COL_GPU, COL_MODEL, COL_BATCH, COL_LATENCY, COL_KIND, /* required */
  COL_SHARE, COL_PARTNERS, COL_ISOLATED, COL_SHARING, COL_STAT, COL_SOURCE_PATH, COL_NOTES,
  COL_THROUGHPUT, COL_THROUGHPUT_PP, COL_STD, COL_P90, COL_P99, COL_MIG, COL_QUOTA,
  COL_PRECISION, COL_FRAMEWORK, COL_SERVER_INFER, COL_MACHINE,
  N_COLS
} Column;
enum { N_REQUIRED = COL_KIND + 1 };

static const char *const column_names[N_COLS] = {
  "source", "gpu", "model", "batch", "latency_ms", "kind",
  "share_pct", "partners", "isolated_latency_ms", "sharing", "stat", "source_path", "notes",
  "throughput", "throughput_per_process", "std_ms", "p90_ms", "p99_ms", "mig_gpcs",
  "time_quota_pct", "precision", "framework_context", "server_compute_infer_ms", "machine",
};

#define REQUIRED_LIST "source, gpu, model, batch, latency_ms, kind"

static const char *const kind_names[] = { "isolated", "colocated", "colocated_same_model" };

const char *cs_measured_kind_name(CsMeasuredKind kind)
{
  return (unsigned)kind < G_N_ELEMENTS(kind_names) ? kind_names[kind] : "?";
}

void cs_measured_partners_free(CsMeasuredPartner *partners, int n)
{
  for (int i = 0; i < n; i++) {
    g_free(partners[i].model);
    g_free(partners[i].placement);
    g_free(partners[i].note);
  }
  g_free(partners);
}

static void row_clear(CsMeasuredRow *r)
{
  g_free(r->source);
  g_free(r->gpu);
  g_free(r->model);
  cs_measured_partners_free(r->partners, r->n_partners);
  g_free(r->sharing);
  g_free(r->stat);
  g_free(r->source_path);
  g_free(r->notes);
  g_free(r->precision);
  g_free(r->framework_context);
  g_free(r->machine);
}

void cs_measured_file_free(CsMeasuredFile *file)
{
  if (!file)
    return;
  for (int i = 0; i < file->n_rows; i++)
    row_clear(&file->rows[i]);
  g_free(file->rows);
  g_free(file->path);
  g_free(file->sha256);
  g_free(file);
}

void cs_measured_csv_field(GString *s, const char *text)
{
  if (!strpbrk(text, ",\"\r\n")) {
    g_string_append(s, text);
    return;
  }
  g_string_append_c(s, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *p);
  }
  g_string_append_c(s, '"');
}

int cs_measured_row_n_corunners(const CsMeasuredRow *row)
{
  int n = 0;
  for (int i = 0; i < row->n_partners; i++)
    n += row->partners[i].copies;
  return n;
}

/* A positive integer of at most 9 digits (no sign, no spaces). */
static gboolean parse_small_int(const char *text, int *out)
{
  size_t len = strlen(text);
  if (len == 0 || len > 9 || strspn(text, "0123456789") != len)
    return FALSE;
  *out = atoi(text);
  return TRUE;
}

static gboolean parse_number(const char *text, double *out)
{
  char *end = NULL;
  if (*text == '\0' || g_ascii_isspace(*text))
    return FALSE;
  double v = g_ascii_strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(v))
    return FALSE;
  *out = v;
  return TRUE;
}

/* One partner; the regex captures model, batch, share, placement, copies,
 * note (docs in measured.h). */
static gboolean parse_partner(GRegex *re, const char *text, CsMeasuredPartner *p, char **why)
{
  memset(p, 0, sizeof *p);
  p->share_pct = NAN;
  p->copies = 1;
  GMatchInfo *m = NULL;
  if (!g_regex_match(re, text, 0, &m)) {
    g_match_info_free(m);
    *why = g_strdup_printf("expected MODEL:b=BATCH[:s=SHARE][:PLACEMENT][ xN][ (NOTE)], got \"%s\"",
                           text);
    return FALSE;
  }
  char *g[7];
  for (int i = 1; i <= 6; i++)
    g[i] = g_match_info_fetch(m, i);
  g_match_info_free(m);
  gboolean ok = FALSE;
  double share = NAN;
  if (!parse_small_int(g[2], &p->batch) || p->batch < 1)
    *why = g_strdup_printf("partner \"%s\": batch: expected an integer >= 1, got \"%s\"", text, g[2]);
  else if (g[3][0] && (!parse_number(g[3], &share) || !(share > 0 && share <= 100)))
    *why = g_strdup_printf("partner \"%s\": share: expected a number in (0, 100], got \"%s\"", text,
                           g[3]);
  else if (g[4][0] && g_str_has_prefix(g[4], "s="))
    *why = g_strdup_printf("partner \"%s\": share: expected a number in (0, 100], got \"%s\"", text,
                           g[4] + 2);
  else if (g[5][0] && (!parse_small_int(g[5], &p->copies) || p->copies < 1))
    *why = g_strdup_printf("partner \"%s\": copies: expected xN with N >= 1, got \"x%s\"", text, g[5]);
  else
    ok = TRUE;
  if (ok) {
    p->model = g_strdup(g[1]);
    p->share_pct = share;
    p->placement = g[4][0] ? g_strdup(g[4]) : NULL;
    p->note = g[6][0] ? g_strdup(g[6]) : NULL;
  }
  for (int i = 1; i <= 6; i++)
    g_free(g[i]);
  return ok;
}

static GRegex *partner_regex(void)
{
  /* Lazy MODEL so the first ":b=" ends it; PLACEMENT must be non-empty. */
  GError *e = NULL;
  GRegex *re = g_regex_new("^(.+?):b=([^:]*?)(?::s=([^: ]+))?(?::([^:()]*?[^:() ]))??"
                           "(?: x([^ ]+))?(?: \\(([^()]*)\\))?$",
                           G_REGEX_OPTIMIZE, 0, &e);
  g_assert_no_error(e); /* a constant pattern */
  return re;
}

int cs_measured_parse_partners(const char *text, CsMeasuredPartner **out, char **why)
{
  *out = NULL;
  if (text[0] == '\0')
    return 0;
  GRegex *re = partner_regex();
  char **items = g_strsplit(text, ";", -1);
  int n = (int)g_strv_length(items);
  CsMeasuredPartner *ps = g_new0(CsMeasuredPartner, n);
  int ok_n = 0;
  for (; ok_n < n; ok_n++) {
    char *item = g_strstrip(items[ok_n]);
    if (!parse_partner(re, item, &ps[ok_n], why))
      break;
  }
  g_strfreev(items);
  g_regex_unref(re);
  if (ok_n < n) {
    cs_measured_partners_free(ps, ok_n);
    return -1;
  }
  *out = ps;
  return n;
}

typedef struct {
  CsCsv *csv;
  int col[N_COLS]; /* field index, -1 when the column is absent */
} Reader;

static const char *field(const Reader *rd, Column c)
{
  return rd->col[c] < 0 ? "" : rd->csv->fields[rd->col[c]];
}

static gboolean bad(const Reader *rd, Column c, const char *expected, GError **error)
{
  const char *got = field(rd, c);
  if (strlen(got) > 60)
    cs_csv_fail(rd->csv, error, "column %s: expected %s, got \"%.60s...\"", column_names[c], expected,
                got);
  else
    cs_csv_fail(rd->csv, error, "column %s: expected %s, got \"%s\"", column_names[c], expected, got);
  return FALSE;
}

/* An optional number: blank gives NAN. lo_open: value must be > lo, else >= lo. */
static gboolean opt_number(const Reader *rd, Column c, double lo, gboolean lo_open, double hi,
                           const char *expected, double *out, GError **error)
{
  const char *t = field(rd, c);
  *out = NAN;
  if (t[0] == '\0')
    return TRUE;
  double v;
  if (!parse_number(t, &v) || (lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi))
    return bad(rd, c, expected, error);
  *out = v;
  return TRUE;
}

static gboolean read_header(Reader *rd, GError **error)
{
  CsCsv *csv = rd->csv;
  if (!cs_csv_read_header(csv, REQUIRED_LIST, error))
    return FALSE;
  for (int c = 0; c < N_COLS; c++)
    rd->col[c] = -1;
  for (size_t i = 0; i < csv->n_fields; i++) {
    const char *name = csv->fields[i];
    int c = 0;
    while (c < N_COLS && strcmp(column_names[c], name) != 0)
      c++;
    if (c == N_COLS) {
      GString *known = g_string_new(NULL);
      for (int k = 0; k < N_COLS; k++)
        g_string_append_printf(known, "%s%s", k ? ", " : "", column_names[k]);
      cs_csv_fail(csv, error, "header: unknown column \"%s\" (known columns: %s)", name, known->str);
      g_string_free(known, TRUE);
      return FALSE;
    }
    if (rd->col[c] >= 0) {
      cs_csv_fail(csv, error, "header: column \"%s\" appears twice", name);
      return FALSE;
    }
    rd->col[c] = (int)i;
  }
  for (int c = 0; c < N_REQUIRED; c++)
    if (rd->col[c] < 0) {
      cs_csv_fail(csv, error, "header: missing column \"%s\" (required columns: " REQUIRED_LIST ")",
                  column_names[c]);
      return FALSE;
    }
  return TRUE;
}

static gboolean read_row(const Reader *rd, CsMeasuredRow *r, GError **error)
{
  memset(r, 0, sizeof *r);
  r->line = rd->csv->lineno;
  const Column text_req[] = { COL_SOURCE, COL_GPU, COL_MODEL };
  for (size_t i = 0; i < G_N_ELEMENTS(text_req); i++)
    if (field(rd, text_req[i])[0] == '\0')
      return bad(rd, text_req[i], "a non-empty text", error);
  if (!parse_small_int(field(rd, COL_BATCH), &r->batch) || r->batch < 1)
    return bad(rd, COL_BATCH, "an integer >= 1", error);
  double v;
  if (!parse_number(field(rd, COL_LATENCY), &v) || !(v > 0))
    return bad(rd, COL_LATENCY, "a number > 0 (ms)", error);
  r->latency_ms = v;
  const char *kind = field(rd, COL_KIND);
  size_t k = 0;
  while (k < G_N_ELEMENTS(kind_names) && strcmp(kind_names[k], kind) != 0)
    k++;
  if (k == G_N_ELEMENTS(kind_names))
    return bad(rd, COL_KIND, "isolated, colocated or colocated_same_model", error);
  r->kind = (CsMeasuredKind)k;

  if (!opt_number(rd, COL_SHARE, 0, TRUE, 100, "blank or a number in (0, 100]", &r->share_pct,
                  error) ||
      !opt_number(rd, COL_ISOLATED, 0, TRUE, INFINITY, "blank or a number > 0 (ms)",
                  &r->isolated_latency_ms, error) ||
      !opt_number(rd, COL_THROUGHPUT, 0, FALSE, INFINITY, "blank or a number >= 0",
                  &r->throughput, error) ||
      !opt_number(rd, COL_THROUGHPUT_PP, 0, FALSE, INFINITY, "blank or a number >= 0",
                  &r->throughput_per_process, error) ||
      !opt_number(rd, COL_STD, 0, FALSE, INFINITY, "blank or a number >= 0 (ms)", &r->std_ms,
                  error) ||
      !opt_number(rd, COL_P90, 0, FALSE, INFINITY, "blank or a number >= 0 (ms)", &r->p90_ms,
                  error) ||
      !opt_number(rd, COL_P99, 0, FALSE, INFINITY, "blank or a number >= 0 (ms)", &r->p99_ms,
                  error) ||
      !opt_number(rd, COL_SERVER_INFER, 0, FALSE, INFINITY, "blank or a number >= 0 (ms)",
                  &r->server_compute_infer_ms, error) ||
      !opt_number(rd, COL_QUOTA, 0, TRUE, 100, "blank or a number in (0, 100]",
                  &r->time_quota_pct, error))
    return FALSE;
  const char *mig = field(rd, COL_MIG);
  if (mig[0] && (!parse_small_int(mig, &r->mig_gpcs) || r->mig_gpcs < 1 || r->mig_gpcs > 8))
    return bad(rd, COL_MIG, "blank or an integer in [1, 8] (GPCs)", error);

  char *why = NULL;
  int np = cs_measured_parse_partners(field(rd, COL_PARTNERS), &r->partners, &why);
  if (np < 0) {
    cs_csv_fail(rd->csv, error, "column partners: %s", why);
    g_free(why);
    return FALSE;
  }
  r->n_partners = np;
  if (r->kind == CS_MEASURED_ISOLATED && np > 0)
    return bad(rd, COL_PARTNERS, "blank on an isolated row", error);
  if (r->kind != CS_MEASURED_ISOLATED && np == 0)
    return bad(rd, COL_PARTNERS, "at least one partner on a co-located row", error);

  r->source = g_strdup(field(rd, COL_SOURCE));
  r->gpu = g_strdup(field(rd, COL_GPU));
  r->model = g_strdup(field(rd, COL_MODEL));
  r->sharing = g_strdup(field(rd, COL_SHARING));
  r->stat = g_strdup(field(rd, COL_STAT));
  r->source_path = g_strdup(field(rd, COL_SOURCE_PATH));
  r->notes = g_strdup(field(rd, COL_NOTES));
  r->precision = g_strdup(field(rd, COL_PRECISION));
  r->framework_context = g_strdup(field(rd, COL_FRAMEWORK));
  r->machine = g_strdup(field(rd, COL_MACHINE));
  return TRUE;
}

static char *file_sha256(const char *path, GError **error)
{
  char *data = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &data, &len, &e)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot read: %s", path, e->message);
    g_error_free(e);
    return NULL;
  }
  char *hex = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
  g_free(data);
  return hex;
}

CsMeasuredFile *cs_measured_file_load(const char *path, GError **error)
{
  CsCsv csv;
  if (!cs_csv_open(&csv, path, error))
    return NULL;
  Reader rd = { .csv = &csv };
  CsMeasuredFile *file = g_new0(CsMeasuredFile, 1);
  file->path = g_strdup(path);
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(CsMeasuredRow));
  gboolean ok = read_header(&rd, error);
  size_t n_fields = csv.n_fields;
  while (ok) {
    int rc = cs_csv_next_row(&csv, rows->len, n_fields, "measured latency", error);
    if (rc <= 0) {
      ok = rc == 0;
      break;
    }
    CsMeasuredRow r;
    if (!read_row(&rd, &r, error)) {
      row_clear(&r);
      ok = FALSE;
      break;
    }
    g_array_append_val(rows, r);
  }
  cs_csv_close(&csv);
  file->n_rows = (int)rows->len;
  file->rows = (CsMeasuredRow *)(void *)g_array_free(rows, FALSE);
  if (ok)
    file->sha256 = file_sha256(path, error);
  if (!ok || !file->sha256) {
    cs_measured_file_free(file);
    return NULL;
  }
  return file;
}
