/* A controller as a plug-in (tests/cli/test_cli_plugins.sh): "tick-notes"
 * wakes at first_s, then every period_s, and notes each model's arrivals so
 * far in the run's control log. Under constant arrivals the counts have a
 * closed form, which the test checks: the plug-in's parameters reached it,
 * its timers fired when asked, and what it observed is what arrived. */
#include <clustersim/clustersim.h>

typedef struct {
  double first_s, period_s;
} TickParams;

typedef struct {
  CsControl *c;
  const TickParams *p;
} Tick;

static void *tick_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "first_s", "period_s", NULL };
  TickParams p = { .first_s = 1.0, .period_s = 1.0 };
  cs_params_doc(params, "first_s", "time of the first note");
  cs_params_doc(params, "period_s", "time between notes");
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "first_s", FALSE, 0.0, 1e6, &p.first_s, cs_error_list_slot(problems));
    cs_params_double(params, "period_s", FALSE, 1e-3, 1e6, &p.period_s,
                     cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params), error))
    return NULL;
  return g_memdup2(&p, sizeof p);
}

static void tick_describe(const void *params, CsParamsWriter *out)
{
  const TickParams *p = params;
  cs_params_write_double(out, "first_s", p->first_s);
  cs_params_write_double(out, "period_s", p->period_s);
}

static void *tick_create(CsControl *c, const void *params, void *user_data)
{
  (void)user_data;
  Tick *t = g_new0(Tick, 1);
  t->c = c;
  t->p = params;
  cs_control_timer(c, (int64_t)(t->p->first_s * 1e9 + 0.5), 0);
  return t;
}

static void tick_on_timer(void *state, uint32_t arg)
{
  Tick *t = state;
  const CsWorld *w = cs_control_world(t->c);
  for (int m = 0; m < cs_world_n_models(w); m++)
    cs_control_note(t->c, "tick %u: %s arrivals %" G_GINT64_FORMAT, arg,
                    cs_world_model_name(w, m), cs_control_arrivals(t->c, m));
  cs_control_timer(t->c, cs_control_now(t->c) + (int64_t)(t->p->period_s * 1e9 + 0.5), arg + 1);
}

static const CsControllerPolicy tick = {
  .name = "tick-notes",
  .description = "notes each model's arrivals at first_s, then every period_s",
  .parse = tick_parse,
  .free_params = g_free,
  .describe = tick_describe,
  .create = tick_create,
  .destroy = g_free,
  .on_timer = tick_on_timer,
};

CS_PLUGIN_DEFINE_ABI_VERSION

G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
{
  return cs_registry_add_controller(registry, &tick, NULL, error);
}
