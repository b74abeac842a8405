/* clustersim trace inspect FILE [--format NAME] [--allow-unsorted] [--json] */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "workloads/trace.h"

static int trace_inspect(int argc, char **argv)
{
  const char *prog = "clustersim trace inspect";
  char *format_name = NULL;
  gboolean json = FALSE, unsorted = FALSE;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "maf2019, maf2021, azure-llm or auto (default: from the header)", "NAME" },
    { "allow-unsorted", 0, 0, G_OPTION_ARG_NONE, &unsorted, "Accept timestamped rows out of time order", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the statistics as JSON", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("FILE - statistics of a trace file");
  g_option_context_set_summary(ctx,
    "Functions, total invocations, time span, invocations per minute (min/median/max), burstiness\n"
    "(CV of inter-arrival gaps where the trace has timestamps) and the busiest functions, to pick\n"
    "windows and scales for trace-driven scenarios. Formats: docs/traces.md.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsTraceStats stats = { 0 };
  CsTraceFormat format = CS_TRACE_FORMAT_AUTO;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, "expected exactly one trace FILE (see --help)");
    goto out;
  }
  if (format_name && !cs_trace_format_from_name(format_name, &format, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (!cs_trace_inspect(argv[1], format, unsorted ? CS_TRACE_ALLOW_UNSORTED : 0, &stats, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (json) {
    cJSON *o = cs_trace_stats_to_json(&stats);
    char *text = cJSON_Print(o);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(o);
  } else {
    cs_trace_stats_print(&stats, stdout);
  }
out:
  cs_trace_stats_clear(&stats);
  g_clear_error(&err);
  g_free(format_name);
  g_option_context_free(ctx);
  return status;
}

int cmd_trace(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "inspect") == 0)
    return trace_inspect(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    puts("Usage: clustersim trace inspect FILE [--format NAME] [--allow-unsorted] [--json]");
    return 0;
  }
  return cli_fail("clustersim trace", "expected a subcommand: inspect (see clustersim trace --help)");
}
