/* Shared pieces of the clustersim subcommands; see cli.h. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_fail(const char *prog, const char *msg)
{
  fprintf(stderr, "%s: %s\n", prog, msg);
  return EXIT_BAD_INPUT;
}

static gboolean add_set(const char *name, const char *value, gpointer data, GError **error)
{
  (void)name;
  (void)error;
  CliOverrides *ov = data;
  g_ptr_array_add(ov->ops, g_strconcat("=", value, NULL));
  return TRUE;
}

static gboolean add_unset(const char *name, const char *value, gpointer data, GError **error)
{
  (void)name;
  (void)error;
  CliOverrides *ov = data;
  g_ptr_array_add(ov->ops, g_strconcat("-", value, NULL));
  return TRUE;
}

GOptionContext *cli_context_new(const char *parameter, const GOptionEntry *entries,
                                CliOverrides *ov)
{
  static const GOptionEntry overrides[] = {
    { "set", 's', 0, G_OPTION_ARG_CALLBACK, (gpointer)add_set,
      "Override a scenario field, e.g. clients[0].rate=200 (repeatable)", "PATH=VALUE" },
    { "unset", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)add_unset,
      "Remove a scenario field so that its default applies, e.g. placement (repeatable; "
      "applied in order with --set)", "PATH" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  if (!ov->ops)
    ov->ops = g_ptr_array_new_with_free_func(g_free);
  GOptionContext *ctx = g_option_context_new(parameter);
  GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, ov, NULL);
  g_option_group_add_entries(group, entries);
  g_option_group_add_entries(group, overrides);
  g_option_context_set_main_group(ctx, group);
  return ctx;
}

void cli_overrides_clear(CliOverrides *ov)
{
  if (ov->ops)
    g_ptr_array_free(ov->ops, TRUE);
  ov->ops = NULL;
}

CsScenario *cli_load_scenario(const char *prog, const char *path, const CliOverrides *ov)
{
  GError *err = NULL;
  CsScenario *sc = cs_scenario_load(path, &err);
  if (!sc) {
    cli_fail("clustersim", err->message);
    g_error_free(err);
    return NULL;
  }
  for (guint i = 0; ov && ov->ops && i < ov->ops->len; i++) {
    const char *op = g_ptr_array_index(ov->ops, i);
    gboolean ok;
    if (op[0] == '-') {
      ok = cs_scenario_unset(sc, op + 1, &err);
    } else {
      const char *set = op + 1;
      char *eq = strchr(set, '=');
      if (!eq) {
        char *m = g_strdup_printf("--set %s: expected PATH=VALUE", set);
        cli_fail(prog, m);
        g_free(m);
        cs_scenario_free(sc);
        return NULL;
      }
      char *key = g_strndup(set, (gsize)(eq - set));
      ok = cs_scenario_set(sc, key, eq + 1, &err);
      g_free(key);
    }
    if (!ok) {
      cli_fail(prog, err->message);
      g_error_free(err);
      cs_scenario_free(sc);
      return NULL;
    }
  }
  if (!cli_scenario_plugins(sc)) { /* after the overrides: --set may name plug-ins */
    cs_scenario_free(sc);
    return NULL;
  }
  return sc;
}

gboolean cli_parse_seed(const char *prog, const char *text, gint64 *seed)
{
  *seed = -1;
  if (!text)
    return TRUE;
  guint64 v;
  if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, &v, NULL)) {
    char *m = g_strdup_printf("--seed %s: expected an integer >= 0", text);
    cli_fail(prog, m);
    g_free(m);
    return FALSE;
  }
  *seed = (gint64)v;
  return TRUE;
}

gboolean cli_parse_max_requests(const char *prog, const char *text, gint64 *max)
{
  *max = 0;
  if (!text)
    return TRUE;
  guint64 v;
  if (g_ascii_strcasecmp(text, "none") == 0) {
    *max = -1;
    return TRUE;
  }
  if (!g_ascii_string_to_unsigned(text, 10, 1, G_MAXINT64, &v, NULL)) {
    char *m = g_strdup_printf("--max-requests %s: expected an integer >= 1, or none", text);
    cli_fail(prog, m);
    g_free(m);
    return FALSE;
  }
  *max = (gint64)v;
  return TRUE;
}

gboolean cli_parse_max_duration(const char *prog, const char *text, double *max)
{
  *max = 0;
  if (!text)
    return TRUE;
  if (g_ascii_strcasecmp(text, "none") == 0) {
    *max = -1;
    return TRUE;
  }
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (end == text || *end || !(v > 0 && v < 1e12)) {
    char *m = g_strdup_printf("--max-duration-s %s: expected a number of seconds in (0, 1e12), "
                              "or none", text);
    cli_fail(prog, m);
    g_free(m);
    return FALSE;
  }
  *max = v;
  return TRUE;
}

static gboolean on_progress(double fraction, int64_t sim_time_ns, void *user_data)
{
  CliProgress *p = user_data;
  gint64 now = g_get_monotonic_time();
  if (now - p->last_us < 250000)
    return TRUE;
  p->last_us = now;
  p->shown = TRUE;
  fprintf(stderr, "\rsimulating: %5.1f %% of requests generated, %.1f s simulated",
          100.0 * fraction, sim_time_ns * 1e-9);
  fflush(stderr);
  return TRUE;
}

void cli_progress_install(CliProgress *p, CsRunOptions *opt)
{
  p->last_us = g_get_monotonic_time();
  p->shown = FALSE;
  if (isatty(STDERR_FILENO)) {
    opt->on_progress = on_progress;
    opt->user_data = p;
  }
}

void cli_progress_done(CliProgress *p)
{
  if (p->shown)
    fputs("\r\033[K", stderr);
  p->shown = FALSE;
}

void cli_print_warning(const CsWarning *w)
{
  GString *who = g_string_new(NULL);
  if (w->model)
    g_string_append_printf(who, " %s", w->model);
  if (w->gpu >= 0)
    g_string_append_printf(who, " gpu %d", w->gpu);
  fprintf(stderr, "clustersim: warning [%s]%s: %s\n", w->code, who->str, w->message);
  g_string_free(who, TRUE);
}

void cli_print_warnings(const CsResults *res)
{
  for (int i = 0; i < cs_results_n_warnings(res); i++)
    cli_print_warning(cs_results_warning(res, i));
}
