/* clustersim search SCENARIO [--criterion p99|bad-rate] [--bad-rate X] ... */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

typedef struct {
  gboolean json;
  cJSON *probes;
  double lowest; /* lowest multiplier probed */
} ProbeSink;

static void on_probe(const CsGoodputProbe *p, void *user)
{
  ProbeSink *s = user;
  s->lowest = p->index == 0 ? p->multiplier : MIN(s->lowest, p->multiplier);
  if (s->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "probe", p->index);
    cJSON_AddNumberToObject(o, "multiplier", p->multiplier);
    cJSON_AddNumberToObject(o, "offered_rps", p->offered_rps);
    cJSON_AddNumberToObject(o, "goodput_rps", p->goodput_rps);
    cJSON_AddNumberToObject(o, "worst_bad_rate", p->worst_bad_rate);
    cJSON_AddBoolToObject(o, "measured_all", p->measured_all);
    cJSON_AddBoolToObject(o, "pass", p->pass);
    cJSON_AddItemToArray(s->probes, o);
  } else {
    /* The header with the first probe: a search refused before it prints nothing. */
    if (p->index == 0)
      printf("%5s %12s %12s %12s %14s %s\n", "probe", "multiplier", "offered_rps", "goodput_rps",
             "worst_bad_rate", "result");
    printf("%5d %12.6g %12.1f %12.1f %14.4f %s\n", p->index, p->multiplier, p->offered_rps,
           p->goodput_rps, p->worst_bad_rate,
           p->pass ? "pass" : p->measured_all ? "fail" : "fail (a model measured nothing)");
    fflush(stdout);
  }
}

int cmd_search(int argc, char **argv)
{
  const char *prog = "clustersim search";
  char *seed_text = NULL, *criterion = NULL, *max_requests_text = NULL;
  CliOverrides overrides = { 0 };
  double bad_rate = 0.01, max_mult = 64, tolerance = 0.005;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "criterion", 'c', 0, G_OPTION_ARG_STRING, &criterion, "p99 (default: every model's p99 latency <= SLO, dropped and failed requests counted as late) or bad-rate", "NAME" },
    { "bad-rate", 0, 0, G_OPTION_ARG_DOUBLE, &bad_rate, "Bound for --criterion bad-rate (default 0.01)", "X" },
    { "max-multiplier", 0, 0, G_OPTION_ARG_DOUBLE, &max_mult, "Largest rate multiplier tried (default 64)", "K" },
    { "tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &tolerance, "Stop when the bracket is this tight, relative (default 0.005)", "X" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text, "Seed for every random stream", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the probes and the result as JSON", NULL },
    { "max-requests", 0, 0, G_OPTION_ARG_STRING, &max_requests_text, CLI_MAX_REQUESTS_HELP " (per probe, at the largest multiplier)", "N" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = cli_context_new("SCENARIO - find the highest load served within the SLO", entries, &overrides);
  g_option_context_set_summary(ctx,
    "Goodput as Symphony defines it: the highest offered load the configuration serves with\n"
    "every model's p99 latency within its SLO (or bad rate within a bound). Multiplies every\n"
    "client's rate by k and bisects over k; prints every probe, then the result.");
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  gint64 seed = -1, max_requests = 0;
  ProbeSink sink = { .json = FALSE, .probes = NULL, .lowest = 0.0 };
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, "expected exactly one SCENARIO file (see --help)");
    goto out;
  }
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  if (criterion && strcmp(criterion, "bad-rate") == 0) {
    o.criterion = CS_GOODPUT_BAD_RATE;
  } else if (criterion && strcmp(criterion, "p99") != 0) {
    char *m = g_strdup_printf("--criterion %s: expected p99 or bad-rate", criterion);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  /* Checked here, by option, before anything is printed: the library's own
   * check comes after the table's header reached stdout. */
  const char *bad_option = !(bad_rate >= 0 && bad_rate < 1) ? "--bad-rate: expected a number in "
                                                              "[0, 1)"
                           : !(max_mult > 0 && isfinite(max_mult))
                             ? "--max-multiplier: expected a finite number > 0"
                           : !(tolerance > 0 && tolerance < 1) ? "--tolerance: expected a number "
                                                                 "in (0, 1)"
                                                               : NULL;
  if (bad_option) {
    status = cli_fail(prog, bad_option);
    goto out;
  }
  o.bad_rate_bound = bad_rate;
  o.max_multiplier = max_mult;
  o.tolerance = tolerance;
  if (!cli_parse_seed(prog, seed_text, &seed) ||
      !cli_parse_max_requests(prog, max_requests_text, &max_requests) ||
      !(sc = cli_load_scenario(prog, argv[1], &overrides))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  if (!cs_scenario_validate(sc, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  CsRunOptions ropt;
  cs_run_options_init(&ropt);
  ropt.seed_override = seed;
  ropt.max_requests = max_requests;
  sink.json = json;
  sink.probes = cJSON_CreateArray();
  CsGoodputProbe best;
  if (!cs_goodput_search(sc, &o, &ropt, on_probe, &sink, &best, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "criterion", o.criterion == CS_GOODPUT_P99 ? "p99" : "bad-rate");
    if (o.criterion == CS_GOODPUT_BAD_RATE)
      cJSON_AddNumberToObject(root, "bad_rate_bound", o.bad_rate_bound);
    cJSON_AddItemToObject(root, "probes", sink.probes);
    sink.probes = NULL;
    cJSON_AddBoolToObject(root, "passed", best.index >= 0);
    if (best.index >= 0) {
      cJSON_AddNumberToObject(root, "multiplier", best.multiplier);
      cJSON_AddNumberToObject(root, "goodput_rps", best.offered_rps);
    } else {
      cJSON_AddNullToObject(root, "multiplier");
      cJSON_AddNullToObject(root, "goodput_rps");
    }
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
  } else if (best.index >= 0) {
    printf("\ngoodput: %.1f req/s offered (multiplier %.6g) with %s\n", best.offered_rps,
           best.multiplier,
           o.criterion == CS_GOODPUT_P99 ? "p99 <= SLO for every model" : "bad rate within bound");
  } else {
    printf("\ngoodput: none: no probe passed\n");
  }
  if (best.index < 0)
    fprintf(stderr,
            "clustersim search: warning [no_goodput]: the objective fails at every load tried "
            "(down to multiplier %.6g): there is no goodput to report\n",
            sink.lowest);
out:
  cJSON_Delete(sink.probes);
  g_clear_error(&err);
  cs_scenario_free(sc);
  g_free(seed_text);
  g_free(criterion);
  g_free(max_requests_text);
  cli_overrides_clear(&overrides);
  g_option_context_free(ctx);
  return status;
}
