/* The built-in backends and the option helpers of clustersim/backend.h. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "backends.h"
#include "cs_config.h"

static const CsBackend *const builtins[] = {
  &cs_backend_emulated,
  &cs_backend_cpu,
#ifdef CS_HAVE_CUDA
  &cs_backend_cuda,
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

/* "M:N,M:N": layers per model, by name. */
static gboolean parse_layers(const CsBackendSetup *setup, const char *backend, const char *text,
                             int *layers, GError **error)
{
  char **parts = g_strsplit(text, ",", -1);
  gboolean ok = parts[0] != NULL;
  for (int i = 0; ok && parts[i]; i++) {
    const char *colon = strrchr(parts[i], ':');
    char *end = NULL;
    gint64 n = colon ? g_ascii_strtoll(colon + 1, &end, 10) : 0;
    ok = colon && end != colon + 1 && *end == '\0' && n >= 1 && n <= 100000;
    int m = 0;
    while (ok && m < setup->n_models &&
           !(strlen(setup->models[m]) == (size_t)(colon - parts[i]) &&
             strncmp(setup->models[m], parts[i], colon - parts[i]) == 0))
      m++;
    if (ok && m == setup->n_models) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "--backend-option layers: \"%.*s\" is not a model of this run (backend \"%s\")",
                  (int)(colon - parts[i]), parts[i], backend);
      g_strfreev(parts);
      return FALSE;
    }
    if (ok)
      layers[m] = (int)n;
  }
  g_strfreev(parts);
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "--backend-option layers=%s: expected MODEL:LAYERS,... with LAYERS in [1, 100000]",
                text);
  return ok;
}

gboolean cs_backend_size_models(const CsBackendSetup *setup, const char *backend, int width,
                                double min_model_mb, int *layers, GError **error)
{
  /* A model's depth follows its batch-1 latency on the first GPU type that
   * profiles it (models without a profile count as the cheapest). */
  double *ms = g_new(double, MAX(setup->n_models, 1));
  double least = INFINITY;
  for (int m = 0; m < setup->n_models; m++) {
    const CsModelProfile *p = NULL;
    for (int g = 0; g < setup->n_gpus && !p; g++)
      p = cs_profile_set_lookup(setup->profiles, setup->gpu_types[g], setup->models[m]);
    ms[m] = p ? cs_model_profile_latency_ns(p, 1) * 1e-6 : NAN;
    if (ms[m] < least)
      least = ms[m];
  }
  double layer_mb = (double)width * width * sizeof(float) / (1 << 20);
  for (int m = 0; m < setup->n_models; m++) {
    double mb = min_model_mb * (isfinite(ms[m]) && isfinite(least) ? ms[m] / least : 1.0);
    layers[m] = (int)MIN(100000.0, MAX(1.0, round(mb / layer_mb)));
  }
  g_free(ms);
  const char *given = cs_backend_option(setup, "layers");
  return !given || parse_layers(setup, backend, given, layers, error);
}
