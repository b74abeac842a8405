/* The built-in backends and the option helpers of clustersim/backend.h. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "backends.h"
#include "cs_config.h"

static const CsBackend *const builtins[] = {
  &cs_backend_emulated,
#ifdef CS_HAVE_OPENBLAS
  &cs_backend_cpu,
#endif
  NULL,
};

const CsBackend *cs_backend_builtin(const char *name)
{
  for (int i = 0; name && builtins[i]; i++)
    if (strcmp(builtins[i]->name, name) == 0)
      return builtins[i];
  return NULL;
}

char *cs_backend_builtin_names(void)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; builtins[i]; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", builtins[i]->name);
  return g_string_free(s, FALSE);
}

const char *cs_backend_option(const CsBackendSetup *setup, const char *key)
{
  size_t n = strlen(key);
  for (int i = 0; setup->options && setup->options[i]; i++)
    if (strncmp(setup->options[i], key, n) == 0 && setup->options[i][n] == '=')
      return setup->options[i] + n + 1;
  return NULL;
}

gboolean cs_backend_check_options(const CsBackendSetup *setup, const char *backend,
                                  const char *const *known, GError **error)
{
  for (int i = 0; setup->options && setup->options[i]; i++) {
    const char *opt = setup->options[i];
    const char *eq = strchr(opt, '=');
    gboolean ok = FALSE;
    for (int k = 0; eq && known[k] && !ok; k++)
      ok = strlen(known[k]) == (size_t)(eq - opt) && strncmp(known[k], opt, eq - opt) == 0;
    if (!ok) {
      char *list = g_strjoinv(", ", (char **)known);
      char *knows = known[0] ? g_strdup_printf("knows %s", list) : g_strdup("takes no options");
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "--backend-option %s: %s; backend \"%s\" %s",
                  opt, eq ? "unknown key" : "expected KEY=VALUE", backend, knows);
      g_free(knows);
      g_free(list);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean cs_backend_option_double(const CsBackendSetup *setup, const char *backend,
                                  const char *key, double min, double max, double *out,
                                  GError **error)
{
  const char *v = cs_backend_option(setup, key);
  if (!v)
    return TRUE;
  char *end = NULL;
  double x = g_ascii_strtod(v, &end);
  if (end == v || *end != '\0' || !(x >= min && x <= max)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "--backend-option %s=%s: backend \"%s\" expects a number in [%g, %g]", key, v,
                backend, min, max);
    return FALSE;
  }
  *out = x;
  return TRUE;
}

void cs_sleep_until_ns(int64_t deadline_ns)
{
  struct timespec ts = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

int64_t cs_monotonic_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cs_wait_until_ns(int64_t deadline_ns)
{
  if (deadline_ns - cs_monotonic_ns() > CS_SPIN_NS)
    cs_sleep_until_ns(deadline_ns - CS_SPIN_NS);
  while (cs_monotonic_ns() < deadline_ns) {
  }
}
