/* Measured GPU rows: the project's measurement format (docs/profiles.md,
 * "Measured data"), a tidy CSV with one measured latency per row.
 *
 * Columns are taken by name, in any order. Required: source, gpu, model,
 * batch, latency_ms, kind. Optional (absent or blank = unknown): share_pct,
 * partners, isolated_latency_ms, sharing, stat, source_path, notes,
 * throughput, throughput_per_process, std_ms, p90_ms, p99_ms, mig_gpcs,
 * time_quota_pct, precision, framework_context, server_compute_infer_ms,
 * machine. Any other column, a column named twice, and every bad value are
 * refused, so a typo in a header cannot silently drop a column.
 *
 * kind is one of
 *   isolated              the model ran alone (partners must be blank);
 *   colocated             next to the partners under MPS (partners required);
 *   colocated_same_model  next to copies of itself in one MIG instance
 *                         (ParvaGPU; partners required).
 * partners is a ';'-separated list of
 *   MODEL:b=BATCH[:s=SHARE][:PLACEMENT][ xN][ (NOTE)]
 * MODEL may itself contain ':' (the first ":b=" ends it); SHARE is the
 * partner's MPS SM percentage (0, 100]; PLACEMENT free text without ':'
 * (e.g. "same MIG instance"); xN, N >= 1, N identical copies (default 1);
 * NOTE free text in parentheses without parentheses.
 *
 * Reading uses the project's CSV tokenizer (common/csv.h): RFC 4180
 * quoting within one line, LF or CRLF, a UTF-8 byte-order mark, blank lines
 * skipped. Errors (domain CS_INPUT_ERROR, code INVALID, or IO when the file
 * cannot be read) read "FILE: line N: column C: expected ..., got ...".
 *
 * Ownership: a CsMeasuredFile owns all its rows and strings; free it with
 * cs_measured_file_free (accepts NULL). Nothing here is global.
 */
#ifndef CS_MEASURED_H
#define CS_MEASURED_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef enum {
  CS_MEASURED_ISOLATED = 0,
  CS_MEASURED_COLOCATED,
  CS_MEASURED_COLOCATED_SAME_MODEL
} CsMeasuredKind;

/* One co-runner of a measured row. */
typedef struct {
  char *model;
  int batch;         /* >= 1 */
  double share_pct;  /* (0, 100], NAN when the text gives none */
  int copies;        /* >= 1 */
  char *placement;   /* e.g. "same MIG instance"; NULL when none */
  char *note;        /* the text in parentheses; NULL when none */
} CsMeasuredPartner;

/* One row. Optional numbers are NAN (mig_gpcs 0) when absent or blank;
 * optional strings are "" then (never NULL). */
typedef struct {
  int64_t line;            /* physical line of the file, for messages */
  char *source, *gpu, *model;
  int batch;               /* >= 1 */
  double share_pct;        /* (0, 100]; NAN = blank (the whole GPU) */
  double latency_ms;       /* > 0 */
  double isolated_latency_ms; /* > 0 or NAN */
  CsMeasuredKind kind;
  int n_partners;
  CsMeasuredPartner *partners;
  int mig_gpcs;            /* 1..8, 0 = not a MIG row */
  double throughput, throughput_per_process; /* >= 0 or NAN */
  double std_ms, p90_ms, p99_ms, server_compute_infer_ms; /* >= 0 or NAN */
  double time_quota_pct;   /* (0, 100] or NAN */
  char *sharing, *stat, *source_path, *notes, *precision, *framework_context, *machine;
} CsMeasuredRow;

typedef struct {
  char *path;              /* as given */
  char *sha256;            /* lowercase hex digest of the file's bytes */
  int n_rows;
  CsMeasuredRow *rows;     /* in file order */
} CsMeasuredFile;

/* Loads one file. Returns NULL with error set when it cannot be read, has no
 * header or no data row, lacks a required column, has an unknown or doubled
 * column, a row with another number of fields than the header, or a bad
 * value (unknown kind, a number that is not one or out of range, a malformed
 * partner, partners on an isolated row or none on a co-located one). */
CsMeasuredFile *cs_measured_file_load(const char *path, GError **error);
void cs_measured_file_free(CsMeasuredFile *file);

/* "isolated", "colocated", "colocated_same_model". */
const char *cs_measured_kind_name(CsMeasuredKind kind);

/* Parses a partners field (the grammar above; "" gives 0 partners). Returns
 * the number of partners (>= 0) and sets *out (free with
 * cs_measured_partners_free), or -1 with *why set to "expected ..., got ..."
 * (g_free it). */
int cs_measured_parse_partners(const char *text, CsMeasuredPartner **out, char **why);
void cs_measured_partners_free(CsMeasuredPartner *partners, int n);

/* Total number of co-running processes of a row: the sum of its partners'
 * copies. */
int cs_measured_row_n_corunners(const CsMeasuredRow *row);

/* Appends text as one CSV field (RFC 4180: quoted when it holds a comma, a
 * quote or a line break, quotes doubled). */
void cs_measured_csv_field(GString *out, const char *text);

/* The header a writer of this format uses (cs_measured_csv_field for the
 * fields), ending in a newline: the required columns and the optional ones
 * profile measure fills. */
#define CS_MEASURED_CSV_HEADER                                                                \
  "source,gpu,model,batch,share_pct,partners,latency_ms,isolated_latency_ms,kind,sharing,stat,"  \
  "p90_ms,source_path,notes,machine\n"

G_END_DECLS

#endif
