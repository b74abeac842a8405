/* Format names, format detection from a header line, and file checksums;
 * see trace.h. */
#include <errno.h>
#include <string.h>

#include "common/input_file.h"
#include "common/json_input.h"
#include "trace.h"
#include "common/csv.h"

const char *cs_trace_format_name(CsTraceFormat format)
{
  switch (format) {
  case CS_TRACE_FORMAT_AUTO:
    return "auto";
  case CS_TRACE_FORMAT_MAF2019:
    return "maf2019";
  case CS_TRACE_FORMAT_MAF2021:
    return "maf2021";
  case CS_TRACE_FORMAT_AZURE_LLM:
    return "azure-llm";
  }
  return "unknown";
}

gboolean cs_trace_format_from_name(const char *name, CsTraceFormat *out, GError **error)
{
  static const CsTraceFormat all[] = {CS_TRACE_FORMAT_AUTO, CS_TRACE_FORMAT_MAF2019,
                                      CS_TRACE_FORMAT_MAF2021, CS_TRACE_FORMAT_AZURE_LLM};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
    if (name && strcmp(name, cs_trace_format_name(all[i])) == 0) {
      *out = all[i];
      return TRUE;
    }
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
              "unknown trace format \"%s\": expected auto, maf2019, maf2021 or azure-llm",
              name ? name : "");
  return FALSE;
}

static gboolean has_all(const CsCsv *csv, const char *const *names)
{
  for (; *names; names++)
    if (cs_csv_find(csv, *names) < 0)
      return FALSE;
  return TRUE;
}

CsTraceFormat cs_trace_detect_format(const char *path, GError **error)
{
  static const char *const maf2019[] = {"HashOwner", "HashApp", "HashFunction", "Trigger", NULL};
  static const char *const maf2021[] = {"app", "func", "end_timestamp", "duration", NULL};
  static const char *const llm[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens", NULL};
  static const char *const durations[] = {"HashFunction", "Average", NULL};
  static const char *const memory[] = {"HashApp", "AverageAllocatedMb", NULL};
  CsCsv csv;
  if (!cs_csv_open(&csv, path, error))
    return CS_TRACE_FORMAT_AUTO;
  CsTraceFormat format = CS_TRACE_FORMAT_AUTO;
  if (!cs_csv_read_header(&csv, "of a MAF 2019, MAF 2021 or Azure LLM trace", error))
    goto out;
  if (has_all(&csv, maf2019))
    format = CS_TRACE_FORMAT_MAF2019;
  else if (has_all(&csv, maf2021))
    format = CS_TRACE_FORMAT_MAF2021;
  else if (has_all(&csv, llm))
    format = CS_TRACE_FORMAT_AZURE_LLM;
  else if (has_all(&csv, durations))
    cs_csv_fail(&csv, error, "this is a MAF 2019 durations file, not a trace: inspect the "
                             "invocations file (durations are joined to it)");
  else if (has_all(&csv, memory))
    cs_csv_fail(&csv, error, "this is a MAF 2019 memory file, not a trace: inspect the "
                             "invocations file (memory is joined to it)");
  else
    cs_csv_fail(&csv, error,
                "unrecognised header: expected the columns of MAF 2019 (HashOwner,HashApp,"
                "HashFunction,Trigger,<minutes>), MAF 2021 (app,func,end_timestamp,duration) "
                "or Azure LLM (TIMESTAMP,ContextTokens,GeneratedTokens)");
out:
  cs_csv_close(&csv);
  return format;
}

char *cs_trace_file_sha256(const char *path, GError **error)
{
  FILE *fp = cs_input_fopen(path, error);
  if (!fp)
    return NULL;
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  guchar buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
    g_checksum_update(sum, buf, (gssize)n);
  char *hex = NULL;
  if (ferror(fp)) {
    int err = errno;
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: read error: %s", path,
                g_strerror(err));
  } else {
    hex = g_strdup(g_checksum_get_string(sum));
  }
  g_checksum_free(sum);
  fclose(fp);
  return hex;
}
