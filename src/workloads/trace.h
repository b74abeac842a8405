/* Streaming readers for public Azure workload traces (docs/traces.md):
 *
 *   MAF 2019  Azure Functions 2019, per-minute invocation counts per function
 *             (invocations_per_function_md.anon.dNN.csv: HashOwner,HashApp,
 *             HashFunction,Trigger,<minute columns>), optionally joined with
 *             the durations and memory companion files.
 *   MAF 2021  Azure Functions 2021, one row per invocation
 *             (app,func,end_timestamp,duration; seconds).
 *   Azure LLM Azure LLM inference 2023 (TIMESTAMP,ContextTokens,
 *             GeneratedTokens), one row per request.
 *
 * Readers stream: memory does not grow with the number of rows (only the
 * MAF 2019 companion tables, which hold one value per function, and the
 * explicit load-all helpers do). Each reader follows the same pattern:
 *
 *   _open(path, ..., error)       -> reader, or NULL with error set
 *   _next(reader, &record, error) -> 1 record read, 0 end of file,
 *                                    -1 error (error set; do not call again)
 *   _close(reader)                -> frees; NULL is accepted
 *
 * Strings and arrays in a record point into the reader and stay valid until
 * the next _next or _close call on it.
 *
 * Errors: domain CS_INPUT_ERROR (common/json_input.h). CS_INPUT_ERROR_IO when
 * a file cannot be opened or read; CS_INPUT_ERROR_INVALID for bad content,
 * with a message "<path>: line <n>: <what was expected>, got ..." (line
 * numbers are 1-based physical lines; the header is line 1). A file without a
 * header or without data rows is INVALID. Nothing here uses global state.
 */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef enum {
  CS_TRACE_FLAGS_NONE = 0,
  /* Accept rows whose arrival time goes backwards. Without it such a row is
   * an error naming its line. With it the rows come in file order and the
   * caller must sort them (or use a _load_sorted helper). */
  CS_TRACE_ALLOW_UNSORTED = 1 << 0,
} CsTraceFlags;

/* ---------------------------------------------------------------- MAF 2019 */

/* Minutes of a day, 1-based, as in the trace's minute column names. */
#define CS_MAF2019_MINUTES_PER_DAY 1440

typedef struct {
  const char *owner;    /* HashOwner */
  const char *app;      /* HashApp */
  const char *function; /* HashFunction */
  const char *trigger;  /* Trigger ("http", "timer", ...) */
  int first_minute;     /* minute of counts[0], 1..1440 (from the header) */
  int n_minutes;        /* number of entries in counts */
  const int64_t *counts; /* invocations in each minute, >= 0 */
  int64_t total;        /* sum of counts */
  /* From the companion files; NAN when no file was given or it has no row
   * for this function. */
  double duration_avg_ms; /* durations file, column Average (milliseconds) */
  double memory_avg_mb;   /* memory file, column AverageAllocatedMb */
  int64_t line;         /* line of this row in the invocations file */
} CsMaf2019Record;

typedef struct CsMaf2019Reader CsMaf2019Reader;

/* Opens an invocations file and reads its header. durations_path and
 * memory_path are optional (NULL): when given, they are read completely now
 * (one entry per function) and joined to each record by HashFunction (the
 * original app-level memory file, which has no HashFunction column, is
 * joined by HashOwner+HashApp). Where a companion lists a key twice the first
 * row wins. Returns NULL with error set when a file cannot be read or a
 * header or companion row is invalid: missing column, non-numeric or
 * non-contiguous minute column names, minutes outside 1..1440. */
CsMaf2019Reader *cs_maf2019_reader_open(const char *invocations_path, const char *durations_path,
                                        const char *memory_path, GError **error);
/* Reads the next function row. Returns 1, 0 at end of file (-1 instead when
 * the file has no data row at all), or -1 with error set for a row with the
 * wrong number of columns or a count that is not a non-negative integer. */
int cs_maf2019_reader_next(CsMaf2019Reader *reader, CsMaf2019Record *record, GError **error);
/* Minute range of the file, known once it is open. */
int cs_maf2019_reader_first_minute(const CsMaf2019Reader *reader);
int cs_maf2019_reader_n_minutes(const CsMaf2019Reader *reader);
void cs_maf2019_reader_close(CsMaf2019Reader *reader);

/* ---------------------------------------------------------------- MAF 2021 */

typedef struct {
  const char *app;   /* app hash */
  const char *func;  /* func hash */
  double arrival_s;  /* end_s - duration_s: when the invocation started */
  int64_t arrival_ns; /* arrival_s rounded to the nearest nanosecond */
  double duration_s; /* >= 0 */
  double end_s;      /* end_timestamp as in the file */
  int64_t line;      /* line in the file */
} CsMaf2021Record;

typedef struct CsMaf2021Reader CsMaf2021Reader;

/* Opens a MAF 2021 file (columns found by name; others are ignored). Returns
 * NULL with error set when it cannot be read, is empty or lacks a column. */
CsMaf2021Reader *cs_maf2021_reader_open(const char *path, CsTraceFlags flags, GError **error);
/* Reads the next invocation. Returns 1, 0 at end of file (-1 when there was
 * no data row), or -1 with error set for a wrong column count, a field that
 * is not a finite number, a negative duration, a start time outside
 * +-1e9 s (about 31 years; nanoseconds must fit int64_t), or (without
 * CS_TRACE_ALLOW_UNSORTED) an arrival earlier than the previous row's. */
int cs_maf2021_reader_next(CsMaf2021Reader *reader, CsMaf2021Record *record, GError **error);
void cs_maf2021_reader_close(CsMaf2021Reader *reader);

/* A whole MAF 2021 file in memory, sorted by arrival (stable: equal arrivals
 * keep file order). Record strings are owned by the trace (deduplicated). */
typedef struct {
  CsMaf2021Record *records;
  size_t n_records;
  GStringChunk *strings;
} CsMaf2021Trace;

/* Loads a file in any row order and sorts it. Returns NULL with error set on
 * the same errors as the reader (except ordering). Free with _trace_free. */
CsMaf2021Trace *cs_maf2021_load_sorted(const char *path, GError **error);
void cs_maf2021_trace_free(CsMaf2021Trace *trace);

/* --------------------------------------------------------------- Azure LLM */

typedef struct {
  /* Arrival relative to the reader's time origin: the first row of the file
   * (so the first record has 0). With CS_TRACE_ALLOW_UNSORTED it can be
   * negative. Exact: no floating point is involved. */
  int64_t time_ns;
  int64_t epoch_ns;      /* the TIMESTAMP itself, in UTC */
  int64_t context_tokens;   /* >= 0 */
  int64_t generated_tokens; /* >= 0 */
  int64_t line;
} CsAzureLlmRecord;

typedef struct CsAzureLlmReader CsAzureLlmReader;

/* Opens an Azure LLM inference trace (columns found by name). TIMESTAMP is
 * "YYYY-MM-DD HH:MM:SS" with an optional fraction of up to 9 digits (the 2023
 * files have 7) and an optional zone "Z", "+HH:MM" or "-HH:MM" (the 2024 files
 * have "+00:00"; without one the time is UTC); 'T' may replace the space.
 * Returns NULL with error set when the file cannot be read, is empty or lacks
 * a column. */
CsAzureLlmReader *cs_azure_llm_reader_open(const char *path, CsTraceFlags flags, GError **error);
/* Reads the next request. Returns 1, 0 at end of file (-1 when there was no
 * data row), or -1 with error set for a wrong column count, a malformed
 * timestamp, a token count that is not a non-negative integer, or (without
 * CS_TRACE_ALLOW_UNSORTED) a timestamp earlier than the previous row's. */
int cs_azure_llm_reader_next(CsAzureLlmReader *reader, CsAzureLlmRecord *record, GError **error);
/* Epoch (ns, UTC) of the time origin; 0 before the first record is read. */
int64_t cs_azure_llm_reader_origin_epoch_ns(const CsAzureLlmReader *reader);
void cs_azure_llm_reader_close(CsAzureLlmReader *reader);

/* A whole LLM trace in memory, sorted stably by timestamp, with time_ns
 * re-based so the earliest request is at 0. */
typedef struct {
  CsAzureLlmRecord *records;
  size_t n_records;
  int64_t origin_epoch_ns; /* epoch of the earliest request */
} CsAzureLlmTrace;

/* Loads a file in any row order and sorts it. Returns NULL with error set on
 * the same errors as the reader (except ordering). */
CsAzureLlmTrace *cs_azure_llm_load_sorted(const char *path, GError **error);
void cs_azure_llm_trace_free(CsAzureLlmTrace *trace);

/* ------------------------------------------------- Vidur's processed traces */

/* One LLM request: when it arrives, its prompt (prefill) tokens and the
 * tokens it generates (decode tokens, the first output token included, as
 * Vidur counts them: a request of D decode tokens runs its prefill and then
 * D - 1 decode iterations). */
typedef struct {
  int64_t time_ns;       /* from the trace's time 0, exact to the nanosecond */
  int64_t prompt_tokens; /* >= 1 */
  int64_t output_tokens; /* >= 1 */
  int64_t line;
} CsLlmRequestRecord;

typedef struct {
  CsLlmRequestRecord *records;
  size_t n_records;
} CsLlmRequestTrace;

/* Loads a trace of Vidur's processed format (data/processed_traces of
 * github:microsoft/vidur: columns arrived_at, num_prefill_tokens,
 * num_decode_tokens, found by name; arrived_at in seconds from the first
 * request). Times are parsed from the decimal text and rounded to the
 * nearest nanosecond (the files hold a few float reprs of 14 digits).
 * Returns NULL with error set (file and line named) when the file cannot be
 * read, is empty, lacks a column or data rows, or a row has the wrong column
 * count, a time that is not non-negative seconds (at most 10^6), a token count
 * that is not an integer of at least 1, or an arrival earlier than the
 * previous row's. Free with cs_llm_request_trace_free. */
CsLlmRequestTrace *cs_vidur_trace_load(const char *path, GError **error);
void cs_llm_request_trace_free(CsLlmRequestTrace *trace);

/* Formats epoch nanoseconds as "YYYY-MM-DD HH:MM:SS.fffffffff" (UTC).
 * Returns a newly allocated string. */
char *cs_trace_format_epoch_ns(int64_t epoch_ns);

/* ------------------------------------------------------- formats and stats */

typedef enum {
  CS_TRACE_FORMAT_AUTO = 0, /* detect from the header */
  CS_TRACE_FORMAT_MAF2019,
  CS_TRACE_FORMAT_MAF2021,
  CS_TRACE_FORMAT_AZURE_LLM,
} CsTraceFormat;

/* "auto", "maf2019", "maf2021", "azure-llm". */
const char *cs_trace_format_name(CsTraceFormat format);
/* Parses a name above. Returns FALSE with error (INVALID, listing the names)
 * for anything else. */
gboolean cs_trace_format_from_name(const char *name, CsTraceFormat *out, GError **error);
/* Reads the first line of path and recognises the format from its column
 * names. Returns the format, or CS_TRACE_FORMAT_AUTO with error set when the
 * file cannot be read, is empty or matches no format (a MAF 2019 durations or
 * memory companion is named as such in the message). */
CsTraceFormat cs_trace_detect_format(const char *path, GError **error);

#define CS_TRACE_TOP_N 10

typedef struct {
  char *app;      /* app hash */
  char *function; /* function hash */
  int64_t invocations;
} CsTraceTopEntry;

/* What `clustersim trace inspect` reports. Minute k of a timestamped trace
 * covers [60k, 60k+60) s on the reader's clock (MAF 2021: the trace's own
 * clock; Azure LLM: seconds since the first row); MAF 2019 minutes are the
 * header's minute columns. The rate statistics run over every minute of the
 * span, empty minutes included. */
typedef struct {
  CsTraceFormat format;
  char *path;
  char *sha256;          /* hex digest of the file */
  int64_t rows;          /* data rows */
  gboolean has_functions; /* FALSE for Azure LLM (no function identity) */
  int64_t functions;     /* distinct (owner, app, function) / (app, func) */
  int64_t apps;          /* distinct apps */
  int64_t invocations;   /* sum of counts, or number of rows */
  int64_t first_minute;  /* first and last minute of the span */
  int64_t last_minute;
  int64_t span_minutes;  /* last_minute - first_minute + 1 */
  gboolean has_timestamps;
  double first_s;        /* first and last arrival (timestamped formats) */
  double last_s;
  char *first_timestamp; /* Azure LLM: TIMESTAMP of the origin; else NULL */
  double rate_min;       /* invocations per minute over the span */
  double rate_median;
  double rate_max;
  /* Coefficient of variation (population sd / mean) of the gaps between
   * consecutive arrivals; NAN for counts-only traces or < 2 gaps. */
  double burstiness_cv;
  CsTraceTopEntry top[CS_TRACE_TOP_N]; /* busiest functions, count desc then hash asc */
  int n_top;
} CsTraceStats;

/* Reads path completely and fills *out (cleared first; release with
 * cs_trace_stats_clear, also after a failure). format may be AUTO. With
 * CS_TRACE_ALLOW_UNSORTED a timestamped file is loaded and sorted in memory;
 * otherwise it streams and out-of-order rows are errors. Returns FALSE with
 * error set on any reader error. */
gboolean cs_trace_inspect(const char *path, CsTraceFormat format, CsTraceFlags flags,
                          CsTraceStats *out, GError **error);
void cs_trace_stats_clear(CsTraceStats *stats);
/* Returns a new JSON object (caller frees with cJSON_Delete); NAN values
 * and not-applicable fields are null. */
cJSON *cs_trace_stats_to_json(const CsTraceStats *stats);
/* Writes a human-readable summary table to out. */
void cs_trace_stats_print(const CsTraceStats *stats, FILE *out);

/* SHA-256 of a file's bytes as 64 lowercase hex digits (newly allocated),
 * for run summaries. Returns NULL with error (CS_INPUT_ERROR_IO) when the
 * file cannot be read. */
char *cs_trace_file_sha256(const char *path, GError **error);

G_END_DECLS

#endif
