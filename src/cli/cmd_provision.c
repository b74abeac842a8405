/* clustersim provision SCENARIO --types T1,T2 [--max-gpus N] [--max T=N,...]
 * [--price T=P,...] [--criterion p99|bad-rate] [--bad-rate X] [--json] ...:
 * the fewest GPUs and the cheapest mix of GPU types that serve the load as
 * written (experiment/provision.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "experiment/provision.h"

typedef struct {
  gboolean json;
  const CsProvisionOptions *opt;
  cJSON *probes;
} Sink;

static cJSON *counts_json(const CsProvisionOptions *opt, const int *counts)
{
  cJSON *o = cJSON_CreateObject();
  for (int t = 0; t < opt->n_types; t++)
    cJSON_AddNumberToObject(o, opt->types[t], counts[t]);
  return o;
}

static void add_price(cJSON *o, const char *key, double v)
{
  if (isnan(v))
    cJSON_AddNullToObject(o, key);
  else
    cJSON_AddNumberToObject(o, key, v);
}

static void on_probe(const CsProvisionProbe *p, void *user)
{
  Sink *s = user;
  const CsProvisionOptions *opt = s->opt;
  if (s->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "probe", p->index);
    cJSON_AddItemToObject(o, "gpus_per_type", counts_json(opt, p->counts));
    cJSON_AddNumberToObject(o, "gpus", p->gpus);
    add_price(o, "price_per_hour", p->price_per_hour);
    cJSON_AddNumberToObject(o, "goodput_rps", p->goodput_rps);
    cJSON_AddNumberToObject(o, "worst_bad_rate", p->worst_bad_rate);
    cJSON_AddBoolToObject(o, "measured_all", p->measured_all);
    cJSON_AddBoolToObject(o, "pass", p->pass);
    cJSON_AddItemToArray(s->probes, o);
    return;
  }
  if (p->index == 0) {
    printf("%5s", "probe");
    for (int t = 0; t < opt->n_types; t++)
      printf(" %8s", opt->types[t]);
    printf(" %5s %10s %12s %14s %s\n", "gpus", "$/hour", "goodput_rps", "worst_bad_rate",
           "result");
  }
  printf("%5d", p->index);
  for (int t = 0; t < opt->n_types; t++)
    printf(" %8d", p->counts[t]);
  char price[32];
  if (isnan(p->price_per_hour))
    g_strlcpy(price, "-", sizeof price);
  else
    g_snprintf(price, sizeof price, "%.4f", p->price_per_hour);
  printf(" %5d %10s %12.1f %14.4f %s\n", p->gpus, price, p->goodput_rps, p->worst_bad_rate,
         p->pass ? "pass" : p->measured_all ? "fail" : "fail (a model measured nothing)");
  fflush(stdout);
}

static char *mix_text(const CsProvisionOptions *opt, const CsProvisionMix *m)
{
  GString *s = g_string_new(NULL);
  for (int t = 0; t < opt->n_types; t++)
    if (m->counts[t] > 0)
      g_string_append_printf(s, "%s%d x %s", s->len ? " + " : "", m->counts[t], opt->types[t]);
  if (isnan(m->price_per_hour))
    g_string_append_printf(s, " (%d GPUs, price unknown)", m->gpus);
  else
    g_string_append_printf(s, " (%d GPUs, $%.4f per hour)", m->gpus, m->price_per_hour);
  return g_string_free(s, FALSE);
}

static cJSON *mix_json(const CsProvisionOptions *opt, const CsProvisionMix *m)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "gpus_per_type", counts_json(opt, m->counts));
  cJSON_AddNumberToObject(o, "gpus", m->gpus);
  add_price(o, "price_per_hour", m->price_per_hour);
  return o;
}

/* "T=V,T=V" into per-type values (in the order of types); the value parser
 * says whether a value is valid. Returns an error message or NULL. */
static char *parse_per_type(const char *flag, const char *text, char **types, int n,
                            gboolean (*value)(const char *, double *), double *out,
                            const char *expected)
{
  if (!text)
    return NULL;
  char **items = g_strsplit(text, ",", -1);
  char *msg = NULL;
  for (int i = 0; items[i] && !msg; i++) {
    char *eq = strchr(items[i], '=');
    double v;
    int t = -1;
    if (eq) {
      *eq = '\0';
      for (int k = 0; k < n && t < 0; k++)
        if (strcmp(types[k], items[i]) == 0)
          t = k;
    }
    if (!eq)
      msg = g_strdup_printf("%s %s: expected TYPE=VALUE pairs separated by commas", flag, text);
    else if (t < 0)
      msg = g_strdup_printf("%s: \"%s\" is not one of the --types", flag, items[i]);
    else if (!value(eq + 1, &v))
      msg = g_strdup_printf("%s %s=%s: expected %s", flag, items[i], eq + 1, expected);
    else
      out[t] = v;
  }
  g_strfreev(items);
  return msg;
}

static gboolean count_value(const char *s, double *v)
{
  guint64 n;
  if (!g_ascii_string_to_unsigned(s, 10, 0, 1 << 20, &n, NULL))
    return FALSE;
  *v = (double)n;
  return TRUE;
}

static gboolean price_value(const char *s, double *v)
{
  char *end;
  *v = g_ascii_strtod(s, &end);
  return *s && !*end && isfinite(*v) && *v >= 0 && *v <= 1e6;
}

int cmd_provision(int argc, char **argv)
{
  const char *prog = "clustersim provision";
  char *types_text = NULL, *max_text = NULL, *price_text = NULL, *criterion = NULL;
  char *seed_text = NULL, *max_requests_text = NULL;
  CliOverrides overrides = { 0 };
  double bad_rate = 0.01;
  int max_gpus = 16;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "types", 't', 0, G_OPTION_ARG_STRING, &types_text, "GPU types to draw from, comma-separated (one node per type, in this order)", "T1,T2" },
    { "max-gpus", 'n', 0, G_OPTION_ARG_INT, &max_gpus, "At most this many GPUs in a mix (default 16)", "N" },
    { "max", 0, 0, G_OPTION_ARG_STRING, &max_text, "At most N GPUs of a type (default --max-gpus)", "T=N,..." },
    { "price", 0, 0, G_OPTION_ARG_STRING, &price_text, "Dollars per GPU-hour of a type, instead of its profile's (required for the cheapest mix of a type without a price)", "T=P,..." },
    { "criterion", 'c', 0, G_OPTION_ARG_STRING, &criterion, "p99 (default: every model's p99 latency <= SLO, dropped and failed requests counted as late) or bad-rate", "NAME" },
    { "bad-rate", 0, 0, G_OPTION_ARG_DOUBLE, &bad_rate, "Bound for --criterion bad-rate (default 0.01)", "X" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_text, "Seed for every random stream", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the probes and the result as JSON", NULL },
    { "max-requests", 0, 0, G_OPTION_ARG_STRING, &max_requests_text, CLI_MAX_REQUESTS_HELP " (per probe)", "N" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = cli_context_new("SCENARIO - the fewest GPUs and the cheapest mix that serve the load", entries, &overrides);
  g_option_context_set_summary(ctx,
    "Replaces the scenario's cluster by mixes of the given GPU types (one node per type) and\n"
    "finds, for the load as written, the fewest GPUs and the cheapest mix whose every model\n"
    "meets the objective (as clustersim search: p99 <= SLO, or bad rate within a bound).\n"
    "Assumes that more GPUs of a type never hurt, to bisect rather than try every mix; a\n"
    "probe that contradicts it is reported. Prints every probe, then the result.");
  GError *err = NULL;
  int status = 0;
  CsScenario *sc = NULL;
  gint64 seed = -1, max_requests = 0;
  char **types = NULL;
  char *msg = NULL;
  Sink sink = { 0 };
  CsProvisionResult res = { 0 };
  gboolean have_res = FALSE;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 2) {
    status = cli_fail(prog, "expected exactly one SCENARIO file (see --help)");
    goto out;
  }
  if (!types_text || !*types_text) {
    status = cli_fail(prog, "--types: required: the GPU types to draw from, e.g. --types a100,1080ti");
    goto out;
  }
  types = g_strsplit(types_text, ",", -1);
  int n = (int)g_strv_length(types);
  for (int t = 0; t < n && !msg; t++)
    if (!*types[t])
      msg = g_strdup_printf("--types %s: expected GPU type names separated by commas",
                            types_text);
  if (!msg && n > CS_PROVISION_MAX_TYPES)
    msg = g_strdup_printf("--types: at most %d GPU types, got %d", CS_PROVISION_MAX_TYPES, n);
  if (!msg && !(max_gpus >= 1 && max_gpus <= (1 << 20)))
    msg = g_strdup_printf("--max-gpus %d: expected an integer in [1, %d]", max_gpus, 1 << 20);
  double maxd[CS_PROVISION_MAX_TYPES], price[CS_PROVISION_MAX_TYPES];
  for (int t = 0; t < CS_PROVISION_MAX_TYPES; t++) {
    maxd[t] = max_gpus;
    price[t] = NAN;
  }
  if (!msg)
    msg = parse_per_type("--max", max_text, types, n, count_value, maxd,
                         "an integer in [0, 1048576]");
  if (!msg)
    msg = parse_per_type("--price", price_text, types, n, price_value, price,
                         "dollars per GPU-hour, a number in [0, 1e6]");
  CsProvisionOptions opt = { .types = (const char *const *)types, .n_types = n,
                             .max_gpus = max_gpus, .price = price };
  cs_goodput_search_options_init(&opt.criterion);
  if (!msg && criterion && strcmp(criterion, "bad-rate") == 0)
    opt.criterion.criterion = CS_GOODPUT_BAD_RATE;
  else if (!msg && criterion && strcmp(criterion, "p99") != 0)
    msg = g_strdup_printf("--criterion %s: expected p99 or bad-rate", criterion);
  if (!msg && !(bad_rate >= 0 && bad_rate < 1))
    msg = g_strdup("--bad-rate: expected a number in [0, 1)");
  if (msg) {
    status = cli_fail(prog, msg);
    goto out;
  }
  opt.criterion.bad_rate_bound = bad_rate;
  int max_per_type[CS_PROVISION_MAX_TYPES];
  for (int t = 0; t < CS_PROVISION_MAX_TYPES; t++)
    max_per_type[t] = (int)maxd[t];
  opt.max_per_type = max_per_type;
  if (!cli_parse_seed(prog, seed_text, &seed) ||
      !cli_parse_max_requests(prog, max_requests_text, &max_requests) ||
      !(sc = cli_load_scenario(prog, argv[1], &overrides))) {
    status = EXIT_BAD_INPUT;
    goto out;
  }
  CsRunOptions ropt;
  cs_run_options_init(&ropt);
  ropt.seed_override = seed;
  ropt.max_requests = max_requests;
  sink = (Sink){ .json = json, .opt = &opt, .probes = cJSON_CreateArray() };
  if (!cs_provision(sc, &opt, &ropt, on_probe, &sink, &res, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  have_res = TRUE;
  for (guint i = 0; i < res.violations->len; i++)
    fprintf(stderr, "clustersim provision: warning [not_monotone]: %s\n",
            (const char *)g_ptr_array_index(res.violations, i));
  if (json) {
    cJSON *root = cJSON_CreateObject();
    cJSON *ty = cJSON_AddArrayToObject(root, "types");
    for (int t = 0; t < n; t++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "gpu_type", types[t]);
      cJSON_AddNumberToObject(o, "max_gpus", max_per_type[t]);
      add_price(o, "price_per_hour", res.price[t]);
      if (res.price_source[t])
        cJSON_AddStringToObject(o, "price_source", res.price_source[t]);
      else
        cJSON_AddNullToObject(o, "price_source");
      cJSON_AddItemToArray(ty, o);
    }
    cJSON_AddNumberToObject(root, "max_gpus", max_gpus);
    cJSON_AddStringToObject(root, "criterion",
                            opt.criterion.criterion == CS_GOODPUT_P99 ? "p99" : "bad-rate");
    if (opt.criterion.criterion == CS_GOODPUT_BAD_RATE)
      cJSON_AddNumberToObject(root, "bad_rate_bound", bad_rate);
    cJSON_AddItemToObject(root, "probes", sink.probes);
    sink.probes = NULL;
    cJSON *fr = cJSON_AddArrayToObject(root, "frontier");
    for (guint i = 0; i < res.frontier->len; i++)
      cJSON_AddItemToArray(fr, mix_json(&opt, &g_array_index(res.frontier, CsProvisionMix, i)));
    cJSON_AddItemToObject(root, "fewest_gpus",
                          res.found ? mix_json(&opt, &res.fewest) : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "cheapest",
                          res.cheapest_found ? mix_json(&opt, &res.cheapest) : cJSON_CreateNull());
    cJSON *v = cJSON_AddArrayToObject(root, "monotonicity_violations");
    for (guint i = 0; i < res.violations->len; i++)
      cJSON_AddItemToArray(v, cJSON_CreateString(g_ptr_array_index(res.violations, i)));
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
  } else {
    printf("\nprices per GPU-hour:");
    for (int t = 0; t < n; t++)
      if (isnan(res.price[t]))
        printf(" %s unknown;", types[t]);
      else
        printf(" %s $%.4f;", types[t], res.price[t]);
    printf("\nminimal passing mixes (%u):\n", res.frontier->len);
    for (guint i = 0; i < res.frontier->len; i++) {
      char *m = mix_text(&opt, &g_array_index(res.frontier, CsProvisionMix, i));
      printf("  %s\n", m);
      g_free(m);
    }
    if (!res.found) {
      printf("fewest GPUs: none: no mix of at most %d GPUs passes\n", max_gpus);
    } else {
      char *f = mix_text(&opt, &res.fewest);
      printf("fewest GPUs: %s\n", f);
      g_free(f);
      if (res.cheapest_found) {
        char *c = mix_text(&opt, &res.cheapest);
        printf("cheapest:    %s\n", c);
        g_free(c);
      } else {
        printf("cheapest:    unknown: every passing mix uses a GPU type without a price "
               "(--price TYPE=P gives one)\n");
      }
    }
  }
  if (!res.found)
    fprintf(stderr, "clustersim provision: warning [no_mix]: no mix of the types within the "
                    "bounds meets the objective\n");
out:
  if (have_res)
    cs_provision_result_clear(&res);
  cJSON_Delete(sink.probes);
  g_free(msg);
  g_strfreev(types);
  g_clear_error(&err);
  cs_scenario_free(sc);
  g_free(types_text);
  g_free(max_text);
  g_free(price_text);
  g_free(criterion);
  g_free(seed_text);
  g_free(max_requests_text);
  cli_overrides_clear(&overrides);
  g_option_context_free(ctx);
  return status;
}
