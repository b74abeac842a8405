/* Line-at-a-time CSV reading; see csv.h. */
#include "csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

#include "input_file.h"
#include "json_input.h"

gboolean cs_csv_open(CsCsv *csv, const char *path, GError **error)
{
  memset(csv, 0, sizeof *csv);
  csv->fp = cs_input_fopen(path, error);
  if (!csv->fp)
    return FALSE;
  csv->path = g_strdup(path);
  return TRUE;
}

void cs_csv_close(CsCsv *csv)
{
  if (csv->fp)
    fclose(csv->fp);
  free(csv->line); /* allocated by getline with malloc */
  g_free(csv->fields);
  g_free(csv->path);
  memset(csv, 0, sizeof *csv);
}

int cs_csv_fail(const CsCsv *csv, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: line %" G_GINT64_FORMAT ": %s",
              csv->path, csv->lineno, msg);
  g_free(msg);
  return -1;
}

static void push_field(CsCsv *csv, char *field)
{
  if (csv->n_fields == csv->fields_cap) {
    csv->fields_cap = csv->fields_cap ? 2 * csv->fields_cap : 16;
    csv->fields = g_renew(char *, csv->fields, csv->fields_cap);
  }
  csv->fields[csv->n_fields++] = field;
}

/* Splits csv->line (NUL-terminated, no line ending) into fields in place.
 * A quoted field is unescaped in place: the text only ever shrinks. */
static int split_line(CsCsv *csv, GError **error)
{
  csv->n_fields = 0;
  char *p = csv->line;
  for (;;) {
    if (*p != '"') {
      push_field(csv, p);
      char *comma = strchr(p, ',');
      if (!comma)
        return 1;
      *comma = '\0';
      p = comma + 1;
      continue;
    }
    char *out = p, *in = p + 1;
    push_field(csv, out);
    for (;;) {
      if (*in == '\0')
        return cs_csv_fail(csv, error,
                           "unterminated quoted field in column %zu (a quoted field must end on "
                           "the same line)",
                           csv->n_fields);
      if (*in == '"') {
        if (in[1] == '"') {
          *out++ = '"';
          in += 2;
          continue;
        }
        in++;
        break;
      }
      *out++ = *in++;
    }
    if (*in == '\0') {
      *out = '\0';
      return 1;
    }
    if (*in != ',')
      return cs_csv_fail(csv, error,
                         "expected ',' or end of line after the closing quote of column %zu",
                         csv->n_fields);
    *out = '\0';
    p = in + 1;
  }
}

int cs_csv_next(CsCsv *csv, GError **error)
{
  for (;;) {
    errno = 0;
    ssize_t len = getline(&csv->line, &csv->line_cap, csv->fp);
    if (len < 0) {
      if (ferror(csv->fp)) {
        int err = errno;
        g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                    "%s: read error after line %" G_GINT64_FORMAT ": %s", csv->path, csv->lineno,
                    g_strerror(err));
        return -1;
      }
      return 0;
    }
    csv->lineno++;
    while (len > 0 && (csv->line[len - 1] == '\n' || csv->line[len - 1] == '\r'))
      csv->line[--len] = '\0';
    /* Files saved by spreadsheet tools may start with a byte-order mark. */
    if (csv->lineno == 1 && len >= 3 && memcmp(csv->line, "\xEF\xBB\xBF", 3) == 0) {
      memmove(csv->line, csv->line + 3, (size_t)len - 2);
      len -= 3;
    }
    if (len == 0)
      continue;
    if ((size_t)len != strlen(csv->line))
      return cs_csv_fail(csv, error, "unexpected NUL byte (not a text CSV file?)");
    return split_line(csv, error);
  }
}

gboolean cs_csv_read_header(CsCsv *csv, const char *expected_columns, GError **error)
{
  int rc = cs_csv_next(csv, error);
  if (rc > 0)
    return TRUE;
  if (rc == 0)
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: empty file: expected a header line with columns %s", csv->path,
                expected_columns);
  return FALSE;
}

int cs_csv_find(const CsCsv *csv, const char *name)
{
  for (size_t i = 0; i < csv->n_fields; i++)
    if (strcmp(csv->fields[i], name) == 0)
      return (int)i;
  return -1;
}

int cs_csv_require(const CsCsv *csv, const char *name, const char *expected_columns,
                   GError **error)
{
  int i = cs_csv_find(csv, name);
  if (i < 0)
    cs_csv_fail(csv, error, "header: missing column \"%s\" (expected columns %s)", name,
                expected_columns);
  return i;
}

gboolean cs_csv_expect_fields(const CsCsv *csv, size_t n, GError **error)
{
  if (csv->n_fields == n)
    return TRUE;
  cs_csv_fail(csv, error, "expected %zu columns as in the header, got %zu", n, csv->n_fields);
  return FALSE;
}

/* Quotes text for a message, shortened so a garbage line stays readable. */
static char *quote_value(const char *text)
{
  enum { MAX = 40 };
  if (strlen(text) <= MAX)
    return g_strdup_printf("\"%s\"", text);
  return g_strdup_printf("\"%.*s...\"", MAX, text);
}

gboolean cs_csv_parse_count(const CsCsv *csv, const char *text, const char *label, int64_t *out,
                            GError **error)
{
  const char *p = text;
  int64_t v = 0;
  gboolean ok = *p != '\0';
  for (; *p; p++) {
    if (*p < '0' || *p > '9') {
      ok = FALSE;
      break;
    }
    int d = *p - '0';
    if (v > (INT64_MAX - d) / 10) {
      ok = FALSE;
      break;
    }
    v = v * 10 + d;
  }
  if (ok) {
    *out = v;
    return TRUE;
  }
  char *q = quote_value(text);
  if (text[0] == '-' && text[1] >= '0' && text[1] <= '9')
    cs_csv_fail(csv, error, "%s: negative count %s, expected an integer >= 0", label, q);
  else
    cs_csv_fail(csv, error, "%s: expected a non-negative integer, got %s", label, q);
  g_free(q);
  return FALSE;
}

gboolean cs_csv_parse_double(const CsCsv *csv, const char *text, const char *label,
                             gboolean min_zero, double *out, GError **error)
{
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (*text == '\0' || end == text || *end != '\0' || !isfinite(v)) {
    char *q = quote_value(text);
    cs_csv_fail(csv, error, "%s: expected a finite number, got %s", label, q);
    g_free(q);
    return FALSE;
  }
  if (min_zero && v < 0) {
    char *q = quote_value(text);
    cs_csv_fail(csv, error, "%s: negative value %s, expected a number >= 0", label, q);
    g_free(q);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

int cs_csv_next_row(CsCsv *csv, int64_t rows_read, size_t n, const char *what, GError **error)
{
  int rc = cs_csv_next(csv, error);
  if (rc < 0)
    return -1;
  if (rc == 0) {
    if (rows_read == 0)
      return cs_csv_fail(csv, error, "no data rows after the header (expected one row per %s)",
                         what);
    return 0;
  }
  return cs_csv_expect_fields(csv, n, error) ? 1 : -1;
}
