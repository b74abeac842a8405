/* Internal: a line-at-a-time CSV reader shared by the trace readers, the
 * measured-profile reader and the figures.
 *
 * One line is held at a time, split in place into fields, so memory depends
 * on the longest line only. Handles LF and CRLF endings, a last line with or
 * without a newline, a UTF-8 byte-order mark before the header, and
 * RFC 4180 quoted fields within one line ("" is a literal quote; quoted line
 * breaks are rejected: none of the Azure files use them). Blank lines are
 * skipped. Messages are "<path>: line <n>: ...".
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef struct {
  FILE *fp;
  char *path;     /* as given by the caller, used in messages */
  char *line;     /* current line (getline buffer), split in place */
  size_t line_cap;
  int64_t lineno; /* physical line number of the current line */
  char **fields;  /* pointers into line */
  size_t n_fields;
  size_t fields_cap;
} CsCsv;

/* Opens path (common/input_file.h: never blocks, refuses what is not a
 * regular file). Returns FALSE with CS_INPUT_ERROR_IO when it cannot be
 * opened: "<path>: cannot read: not found", "... not a regular file (a
 * directory)", ... */
gboolean cs_csv_open(CsCsv *csv, const char *path, GError **error);
/* Reads and splits the next non-blank line. Returns 1, 0 at end of file, -1
 * with error set on a read error (IO) or a malformed quoted field (INVALID). */
int cs_csv_next(CsCsv *csv, GError **error);
/* Reads the header line: like cs_csv_next, but end of file is an INVALID
 * "empty file" error naming expected_columns. Returns TRUE on success. */
gboolean cs_csv_read_header(CsCsv *csv, const char *expected_columns, GError **error);
void cs_csv_close(CsCsv *csv);

/* Sets error INVALID "<path>: line <n>: <message>". Returns -1 so readers
 * can `return cs_csv_fail(...)`. */
int cs_csv_fail(const CsCsv *csv, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Index of the header field equal to name, or -1. */
int cs_csv_find(const CsCsv *csv, const char *name);
/* Like cs_csv_find, but a missing column is an error listing what was
 * expected; returns -1 then. */
int cs_csv_require(const CsCsv *csv, const char *name, const char *expected_columns,
                   GError **error);
/* Fails with a "expected N columns, got M" error unless the current line has
 * n fields. Returns TRUE when it has. */
gboolean cs_csv_expect_fields(const CsCsv *csv, size_t n, GError **error);

/* Reads the next data row of a trace and checks it has n fields. rows_read is
 * the number of data rows read before. Returns 1 for a row, 0 at the end of
 * the file, -1 with error set on a bad row, or when the file ends without any
 * data row ("no data rows after the header (expected one row per WHAT)"). */
int cs_csv_next_row(CsCsv *csv, int64_t rows_read, size_t n, const char *what, GError **error);

/* Parses a decimal integer (digits only, no sign, no spaces) into *out.
 * Returns TRUE, or FALSE with an error "<label>: <expectation>, got ..."
 * (label names the field, e.g. "column duration"; a negative value gets its
 * own message). */
gboolean cs_csv_parse_count(const CsCsv *csv, const char *text, const char *label, int64_t *out,
                            GError **error);
/* Parses a finite decimal number (locale-independent). min_zero rejects
 * negative values. Errors as for cs_csv_parse_count. */
gboolean cs_csv_parse_double(const CsCsv *csv, const char *text, const char *label,
                             gboolean min_zero, double *out, GError **error);

G_END_DECLS

#endif
