/* Profiling a backend: every measurement runs on threads of its own, since
 * a backend's prepare may pin the calling thread (the cpu backend does). */
#include "measure.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "backends.h"
#include "profiles/measured.h"
#include "sim/stats.h"
#include "cs_config.h"

#define UNTIMED 3

typedef struct {
  const CsMeasureOptions *o;
  void *state;
  int model;              /* index into o->models */
  int max_batch;
  /* isolated: every batch size; victim: pair_batch only */
  const int *batches;
  int n_batches;
  double *median_ms, *p10_ms, *p90_ms; /* per batch */
  gint *stop;             /* aggressor: run until set */
  gint *started;          /* aggressor: set once it runs */
  GError *error;
} Job;

/* Index of the point (model m, share s, batch index k) among ns shares and
 * nb batch sizes; share 0 is the worker without a share (isolated). */
static inline size_t point(int ns, int nb, int m, int s, int k)
{
  return ((size_t)m * (size_t)ns + (size_t)s) * (size_t)nb + (size_t)k;
}

/* The q-quantile of n sorted values, linear between order statistics. */
static double quantile(const double *sorted, int n, double q)
{
  return gsl_stats_quantile_from_sorted_data(sorted, 1, (size_t)n, q);
}

static gpointer timed_job(gpointer data)
{
  Job *j = data;
  const CsBackend *be = j->o->backend;
  CsBackendWorker w = { .gpu = 0, .worker = j->model, .model = j->model, .max_batch = j->max_batch };
  if (be->prepare && !be->prepare(j->state, &w, &j->error))
    return NULL;
  /* Warm-up: 100 ms of the largest batch, so that the first point is not
   * measured on cold caches and a low clock. */
  int64_t warm_until = cs_monotonic_ns() + 100000000;
  while (!j->error && cs_monotonic_ns() < warm_until)
    be->execute(j->state, &w, j->batches[j->n_batches - 1], &j->error);
  double *t = g_new(double, j->o->repeat);
  for (int k = 0; k < j->n_batches && !j->error; k++) {
    int b = j->batches[k];
    for (int r = 0; r < UNTIMED + j->o->repeat && !j->error; r++) {
      int64_t t0 = cs_monotonic_ns();
      if (!be->execute(j->state, &w, b, &j->error))
        break;
      if (r >= UNTIMED)
        t[r - UNTIMED] = (cs_monotonic_ns() - t0) * 1e-6;
    }
    if (j->error)
      break;
    gsl_sort(t, 1, (size_t)j->o->repeat);
    j->median_ms[k] = quantile(t, j->o->repeat, 0.5);
    j->p10_ms[k] = quantile(t, j->o->repeat, 0.1);
    j->p90_ms[k] = quantile(t, j->o->repeat, 0.9);
  }
  g_free(t);
  if (be->release)
    be->release(j->state, &w);
  return NULL;
}

/* Isolated latencies, every model, share and batch size in turn, round
 * after round: a change of the machine's speed over the measurement
 * (another tenant, a clock) spreads over every point instead of biasing the
 * points measured while it lasted, and each execution follows a different
 * model, as in a run where models take turns. Share 0 is the worker without
 * a share; the others make latency-vs-share tables. */
typedef struct {
  const CsMeasureOptions *o;
  void *state;
  int n_models, max_batch;
  const double *shares;                /* fractions; 0 = none */
  int n_shares;
  double *median_ms, *p10_ms, *p90_ms; /* (model x share) x batch */
  GError *error;
} Isolated;

static gpointer isolated_job(gpointer data)
{
  Isolated *j = data;
  const CsMeasureOptions *o = j->o;
  const CsBackend *be = o->backend;
  int nb = o->n_batches, R = o->repeat, nw = j->n_models * j->n_shares;
  CsBackendWorker *w = g_new0(CsBackendWorker, nw);
  int prepared = 0;
  for (; prepared < nw && !j->error; prepared++) {
    w[prepared] = (CsBackendWorker){ .gpu = 0, .worker = prepared,
                                     .model = prepared / j->n_shares,
                                     .mps_share = j->shares[prepared % j->n_shares],
                                     .max_batch = j->max_batch };
    if (be->prepare && !be->prepare(j->state, &w[prepared], &j->error))
      break;
  }
  /* Warm-up: 100 ms of each worker's largest batch. */
  for (int i = 0; i < nw && !j->error; i++) {
    int64_t until = cs_monotonic_ns() + 100000000;
    while (!j->error && cs_monotonic_ns() < until)
      be->execute(j->state, &w[i], o->batches[nb - 1], &j->error);
  }
  double *t = g_new(double, (size_t)nw * nb * (UNTIMED + R));
  for (int r = 0; r < UNTIMED + R && !j->error; r++)
    for (int i = 0; i < nw && !j->error; i++)
      for (int k = 0; k < nb && !j->error; k++) {
        int64_t t0 = cs_monotonic_ns();
        if (be->execute(j->state, &w[i], o->batches[k], &j->error))
          t[((size_t)i * nb + k) * (UNTIMED + R) + r] = (cs_monotonic_ns() - t0) * 1e-6;
      }
  for (int i = 0; i < nw * nb && !j->error; i++) {
    double *x = t + (size_t)i * (UNTIMED + R) + UNTIMED;
    gsl_sort(x, 1, (size_t)R);
    j->median_ms[i] = quantile(x, R, 0.5);
    j->p10_ms[i] = quantile(x, R, 0.1);
    j->p90_ms[i] = quantile(x, R, 0.9);
  }
  g_free(t);
  for (int i = 0; i < prepared; i++)
    if (be->release)
      be->release(j->state, &w[i]);
  g_free(w);
  return NULL;
}

/* The aggressor: batches back to back until told to stop. */
static gpointer busy_job(gpointer data)
{
  Job *j = data;
  const CsBackend *be = j->o->backend;
  CsBackendWorker w = { .gpu = 0, .worker = 1000 + j->model, .model = j->model,
                        .max_batch = j->max_batch };
  if (be->prepare && !be->prepare(j->state, &w, &j->error)) {
    g_atomic_int_set(j->started, 1);
    return NULL;
  }
  gboolean first = TRUE;
  while (!g_atomic_int_get(j->stop) && !j->error) {
    be->execute(j->state, &w, j->batches[0], &j->error);
    if (first)
      g_atomic_int_set(j->started, 1);
    first = FALSE;
  }
  g_atomic_int_set(j->started, 1);
  if (be->release)
    be->release(j->state, &w);
  return NULL;
}

static char *machine_text(void)
{
  char *cpu = NULL, *text = NULL;
  if (g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL)) {
    char *p = strstr(text, "model name");
    char *colon = p ? strchr(p, ':') : NULL;
    if (colon) {
      char *end = strchr(colon, '\n');
      cpu = g_strstrip(g_strndup(colon + 1, end ? (gsize)(end - colon - 1) : strlen(colon + 1)));
    }
  }
  g_free(text);
  struct utsname u;
  gboolean have_uname = uname(&u) == 0;
  char *out = g_strdup_printf("%s, %u cores online, %s %s", cpu ? cpu : "unknown CPU",
                              g_get_num_processors(), have_uname ? u.sysname : "unknown OS",
                              have_uname ? u.release : "");
  g_free(cpu);
  return out;
}

static char *print(cJSON *o)
{
  char *text = cJSON_Print(o);
  char *copy = g_strconcat(text, "\n", NULL);
  cJSON_free(text);
  cJSON_Delete(o);
  return copy;
}

double cs_measure_expected_s(const CsMeasureOptions *o)
{
  int n_models = (int)g_strv_length((char **)o->models);
  int ns = 1 + o->n_shares;
  double ns_total = 0, pair_ns = 0;
  for (int m = 0; m < n_models; m++) {
    const CsModelProfile *p = cs_profile_set_lookup(o->like, o->like_type, o->models[m]);
    if (!p)
      continue;
    double sweep = 0;
    for (int k = 0; k < o->n_batches; k++)
      sweep += (double)cs_model_profile_latency_ns(p, o->batches[k]);
    ns_total += ns * (1e8 + (UNTIMED + o->repeat) * sweep);
    if (o->pair_batch > 0)
      pair_ns += (n_models - 1) *
                 (1e8 + (UNTIMED + o->repeat) * (double)cs_model_profile_latency_ns(p, o->pair_batch));
  }
  return (ns_total + pair_ns) * 1e-9;
}

char *cs_duration_words(double s)
{
  if (s < 120)
    return g_strdup_printf("%.3g s", s);
  if (s < 7200)
    return g_strdup_printf("%.3g s (about %.3g min)", s, s / 60);
  if (s < 3 * 86400)
    return g_strdup_printf("%.3g s (about %.3g h)", s, s / 3600);
  return g_strdup_printf("%.3g s (about %.3g days)", s, s / 86400);
}

/* One row of the measured format (CS_MEASURED_CSV_HEADER's columns). */
static void csv_row(GString *c, const CsMeasureOptions *o, const char *model, int batch,
                    const char *share, const char *partners, double ms, double iso_ms,
                    const char *kind, const char *sharing, const char *stat, double p90_ms,
                    const char *where, const char *machine)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  cs_measured_csv_field(c, "clustersim_profile_measure");
  g_string_append_c(c, ',');
  cs_measured_csv_field(c, o->gpu_type);
  g_string_append_c(c, ',');
  cs_measured_csv_field(c, model);
  g_string_append_printf(c, ",%d,%s,", batch, share);
  cs_measured_csv_field(c, partners);
  g_string_append_printf(c, ",%s,", g_ascii_formatd(num, sizeof num, "%.6f", MAX(ms, 1e-6)));
  if (isfinite(iso_ms))
    g_string_append(c, g_ascii_formatd(num, sizeof num, "%.6f", MAX(iso_ms, 1e-6)));
  g_string_append_printf(c, ",%s,", kind);
  cs_measured_csv_field(c, sharing);
  g_string_append_c(c, ',');
  cs_measured_csv_field(c, stat);
  g_string_append_c(c, ',');
  if (isfinite(p90_ms))
    g_string_append(c, g_ascii_formatd(num, sizeof num, "%.6f", p90_ms));
  g_string_append_c(c, ',');
  cs_measured_csv_field(c, where);
  g_string_append_printf(c, ",sized like GPU type %s,", o->like_type);
  cs_measured_csv_field(c, machine);
  g_string_append_c(c, '\n');
}

gboolean cs_measure_backend(const CsMeasureOptions *o, char **profile, char **interference,
                            char **described, GError **error)
{
  *profile = *interference = *described = NULL;
  int n_models = (int)g_strv_length((char **)o->models);
  /* The isolated job holds every sample at once (its rounds interleave
   * every point): bound them before the backend is touched. */
  double samples = (double)n_models * (1 + o->n_shares) * o->n_batches * (UNTIMED + o->repeat);
  if (samples > CS_MEASURE_MAX_SAMPLES) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "measuring %d models at %d shares (the whole GPU included) and %d batch "
                "sizes, %d runs each, would hold %.3g timed samples (%.3g MiB), more than the limit of %d",
                n_models, 1 + o->n_shares, o->n_batches, UNTIMED + o->repeat, samples,
                samples * sizeof(double) / (1024.0 * 1024.0), CS_MEASURE_MAX_SAMPLES);
    return FALSE;
  }
  const CsModelProfile **like = g_new0(const CsModelProfile *, MAX(n_models, 1));
  for (int m = 0; m < n_models; m++) {
    like[m] = cs_profile_set_lookup(o->like, o->like_type, o->models[m]);
    if (!like[m]) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "model %s has no profile on GPU type %s",
                  o->models[m], o->like_type);
      g_free(like);
      return FALSE;
    }
  }
  if (o->n_shares > 0 && !o->backend->runs_shares) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "backend \"%s\" does not run workers on a share of a GPU: it cannot measure "
                "latency-vs-share tables", o->backend->name);
    g_free(like);
    return FALSE;
  }
  const char *types[] = { o->like_type };
  CsBackendSetup setup = { .n_gpus = 1, .gpu_types = types, .mps = TRUE, .n_models = n_models,
                           .models = o->models, .profiles = o->like,
                           .options = o->backend_options, .interference = o->like_interference };
  void *state = o->backend_state ? o->backend_state : o->backend->open(&setup, NULL, error);
  if (!state) {
    g_prefix_error(error, "backend \"%s\": ", o->backend->name);
    g_free(like);
    return FALSE;
  }
  int max_batch = o->batches[o->n_batches - 1];
  int nb = o->n_batches;
  /* Share 0 (none) first, then the requested ones. */
  int ns = 1 + o->n_shares;
  double *shares = g_new0(double, ns);
  for (int s = 1; s < ns; s++)
    shares[s] = o->shares[s - 1] / 100.0;
  size_t n_points = (size_t)n_models * ns * nb;
  double *median = g_new0(double, n_points), *p10 = g_new0(double, n_points),
         *p90 = g_new0(double, n_points);
  GError *err = NULL;
  CsProbe *probe = cs_probe_start(cs_monotonic_ns());
  {
    Isolated j = { .o = o, .state = state, .n_models = n_models, .max_batch = max_batch,
                   .shares = shares, .n_shares = ns,
                   .median_ms = median, .p10_ms = p10, .p90_ms = p90 };
    g_thread_join(g_thread_new("cs-measure", isolated_job, &j));
    err = j.error;
  }
  /* Pairs: the victim timed while the aggressor runs back to back. */
  int pk = 0;
  while (pk < nb && o->batches[pk] != o->pair_batch)
    pk++;
  /* victim, aggressor, slowdown, median ms, p90 ms */
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(double) * 5);
  for (int v = 0; o->pair_batch > 0 && pk < nb && v < n_models && !err; v++)
    for (int a = 0; a < n_models && !err; a++) {
      if (a == v)
        continue;
      gint stop = 0, started = 0;
      int pb[] = { o->pair_batch };
      double med = 0, lo = 0, hi = 0;
      Job agg = { .o = o, .state = state, .model = a, .max_batch = o->pair_batch, .batches = pb,
                  .n_batches = 1, .stop = &stop, .started = &started };
      Job vic = { .o = o, .state = state, .model = v, .max_batch = o->pair_batch, .batches = pb,
                  .n_batches = 1, .median_ms = &med, .p10_ms = &lo, .p90_ms = &hi };
      GThread *ta = g_thread_new("cs-aggressor", busy_job, &agg);
      while (!g_atomic_int_get(&started))
        g_usleep(100);
      g_thread_join(g_thread_new("cs-victim", timed_job, &vic));
      g_atomic_int_set(&stop, 1);
      g_thread_join(ta);
      err = vic.error ? vic.error : agg.error;
      if (vic.error && agg.error)
        g_error_free(agg.error);
      double row[5] = { v, a, med / median[point(ns, nb, v, 0, pk)], med, hi };
      g_array_append_vals(pairs, row, 1);
    }
  GArray *wakeups = cs_probe_stop(probe);
  char *desc = o->backend->describe ? o->backend->describe(state) : g_strdup("{}");
  double share = o->backend->worker_share ? o->backend->worker_share(state, 0) : NAN;
  if (!o->backend_state)
    o->backend->close(state);
  if (err) {
    g_propagate_prefixed_error(error, err, "backend \"%s\": ", o->backend->name);
    g_array_unref(wakeups);
    g_free(desc);
    g_free(median);
    g_free(p10);
    g_free(p90);
    g_free(shares);
    g_free(like);
    g_array_unref(pairs);
    return FALSE;
  }

  /* The probe against the median of every latency measured (isolated, at
   * every share, and the pairs' victims). */
  GArray *all = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (size_t i = 0; i < n_points; i++)
    g_array_append_val(all, (int64_t){ (int64_t)llround(median[i] * 1e6) });
  for (guint i = 0; i < pairs->len; i++)
    g_array_append_val(all, (int64_t){ (int64_t)llround(((double *)pairs->data)[5 * i + 3] * 1e6) });
  CsLatencyStats typical;
  cs_latency_stats((int64_t *)all->data, all->len, &typical);
  g_array_unref(all);
  CsProbeStats wake = cs_probe_stats(wakeups, typical.p50);
  g_array_unref(wakeups);
  if (o->wakeup)
    *o->wakeup = wake;
  char *wake_text = g_strdup_printf(
    " Meanwhile a thread of normal priority woke %.3f ms late from its sleeps (p90; median "
    "%.3f ms, %u wake-ups)%s.", wake.p90_ms, wake.p50_ms, wake.samples,
    wake.busy ? ": the machine was busy, and these latencies include late wake-ups of about "
                "that (measure again on a quiet machine)"
              : "");
  GDateTime *now = g_date_time_new_now_utc();
  char *date = g_date_time_format(now, "%Y-%m-%d %H:%M UTC");
  g_date_time_unref(now);
  char *machine = machine_text();
  char *source = g_strdup_printf(
    "Measured by clustersim %s, `clustersim profile measure --backend %s`, on %s, %s: one GPU "
    "of the backend, each batch size's latency the median of %d timed executions after %d "
    "untimed ones, every model and batch size in turn round after round (after 100 ms of "
    "each model's largest batch); each model sized like its profile on GPU type %s.%s "
    "Backend: %s",
    CS_VERSION, o->backend->name, machine, date, o->repeat, UNTIMED, o->like_type, wake_text,
    desc);
  g_free(wake_text);
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "format", "clustersim-profile");
  cJSON_AddNumberToObject(p, "version", 1);
  cJSON_AddStringToObject(p, "source", source);
  cJSON *gt = cJSON_CreateObject();
  cJSON_AddStringToObject(gt, "name", o->gpu_type);
  char *gdesc = g_strdup_printf("backend %s on %s", o->backend->name, machine);
  cJSON_AddStringToObject(gt, "description", gdesc);
  g_free(gdesc);
  cJSON_AddItemToArray(cJSON_AddArrayToObject(p, "gpu_types"), gt);
  cJSON *models = cJSON_AddArrayToObject(p, "models");
  for (int m = 0; m < n_models; m++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "gpu", o->gpu_type);
    cJSON_AddStringToObject(x, "model", o->models[m]);
    if (cs_model_profile_input_bytes(like[m]) >= 0)
      cJSON_AddNumberToObject(x, "input_bytes", (double)cs_model_profile_input_bytes(like[m]));
    if (cs_model_profile_output_bytes(like[m]) >= 0)
      cJSON_AddNumberToObject(x, "output_bytes", (double)cs_model_profile_output_bytes(like[m]));
    if (isfinite(cs_model_profile_slo_ms(like[m])))
      cJSON_AddNumberToObject(x, "slo_ms", cs_model_profile_slo_ms(like[m]));
    cJSON *bs = cJSON_AddArrayToObject(x, "batches");
    for (int k = 0; k < nb; k++) {
      cJSON *pt = cJSON_CreateObject();
      cJSON_AddNumberToObject(pt, "batch", o->batches[k]);
      cJSON_AddNumberToObject(pt, "latency_ms", MAX(median[point(ns, nb, m, 0, k)], 1e-6));
      /* A worker alone can use this much of its GPU (one core of k). */
      if (isfinite(share))
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(pt, "creq_pct"), "wsm", 100.0 * share);
      size_t at = point(ns, nb, m, 0, k);
      char *note = g_strdup_printf("p10 %.4f ms, p90 %.4f ms", p10[at], p90[at]);
      cJSON_AddStringToObject(pt, "note", note);
      g_free(note);
      cJSON_AddItemToArray(bs, pt);
    }
    cJSON_AddItemToArray(models, x);
  }
  *profile = print(p);
  if (pairs->len > 0 || ns > 1) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "format", "clustersim-interference");
    cJSON_AddNumberToObject(f, "version", 1);
    char *isrc = g_strdup_printf(
      "%s%s%s", source,
      ns > 1 ? " share_latency: each batch size alone on a worker given that share of the GPU "
               "(the backend's MPS share), median of the timed executions, measured in the same "
               "rounds as the isolated latencies." : "",
      pairs->len > 0 ? " Pairs: the victim timed (median) while the aggressor runs batches of "
                       "the same size back to back on the same GPU, over the victim's isolated "
                       "median; fallback.constant: the mean of (slowdown - 1) over the pairs."
                     : " Pairs not measured: the built-in fallback applies to co-located "
                       "workers.");
    cJSON_AddStringToObject(f, "source", isrc);
    g_free(isrc);
    cJSON_AddStringToObject(f, "description", machine);
    if (ns > 1) {
      cJSON *ms = cJSON_AddArrayToObject(f, "models");
      for (int m = 0; m < n_models; m++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "model", o->models[m]);
        cJSON *tab = cJSON_AddArrayToObject(x, "share_latency");
        for (int s = 1; s < ns; s++)
          for (int k = 0; k < nb; k++) {
            double row[3] = { o->batches[k], o->shares[s - 1],
                              MAX(median[point(ns, nb, m, s, k)], 1e-6) };
            cJSON_AddItemToArray(tab, cJSON_CreateDoubleArray(row, 3));
          }
        cJSON_AddItemToArray(ms, x);
      }
    }
    if (pairs->len > 0) {
      cJSON *pa = cJSON_AddArrayToObject(f, "pairs");
      double sum = 0;
      for (guint i = 0; i < pairs->len; i++) {
        const double *row = (const double *)pairs->data + 5 * i;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "victim", o->models[(int)row[0]]);
        cJSON_AddStringToObject(x, "aggressor", o->models[(int)row[1]]);
        cJSON_AddNumberToObject(x, "slowdown", row[2]);
        cJSON_AddNumberToObject(x, "samples", o->repeat);
        cJSON_AddItemToArray(pa, x);
        sum += row[2] - 1.0;
      }
      cJSON *fb = cJSON_AddObjectToObject(f, "fallback");
      cJSON_AddNumberToObject(fb, "constant", MAX(0.0, sum / pairs->len));
      cJSON_AddNumberToObject(fb, "victim", 0);
      cJSON_AddNumberToObject(fb, "aggressor", 0);
    }
    *interference = print(f);
  }
  if (o->csv) {
    char *where = g_strdup_printf("clustersim %s profile measure --backend %s, %s", CS_VERSION,
                                  o->backend->name, date);
    char *stat = g_strdup_printf("median of %d timed executions after %d untimed", o->repeat,
                                 UNTIMED);
    GString *c = g_string_new(CS_MEASURED_CSV_HEADER);
    for (int m = 0; m < n_models; m++)
      for (int s = 0; s < ns; s++)
        for (int k = 0; k < nb; k++) {
          size_t at = point(ns, nb, m, s, k);
          /* A 100 % share is the whole GPU: the isolated row is that point. */
          if (s > 0 && o->shares[s - 1] >= 100)
            continue;
          char *share = s ? g_strdup_printf("%d", o->shares[s - 1]) : g_strdup("");
          csv_row(c, o, o->models[m], o->batches[k], share, "", median[at], NAN, "isolated",
                  s ? "mps_share" : "none (whole GPU)", stat, p90[at], where, machine);
          g_free(share);
        }
    for (guint i = 0; i < pairs->len; i++) {
      const double *row = (const double *)pairs->data + 5 * i;
      int v = (int)row[0], a = (int)row[1];
      char *partner = g_strdup_printf("%s:b=%d", o->models[a], o->pair_batch);
      csv_row(c, o, o->models[v], o->pair_batch, "", partner, row[3],
              median[point(ns, nb, v, 0, pk)], "colocated",
              "mps (no share limit; the partner runs batches back to back)", stat, row[4], where,
              machine);
      g_free(partner);
    }
    *o->csv = g_string_free(c, FALSE);
    g_free(where);
    g_free(stat);
  }
  *described = desc;
  g_free(source);
  g_free(machine);
  g_free(date);
  g_free(median);
  g_free(p10);
  g_free(p90);
  g_free(shares);
  g_free(like);
  g_array_unref(pairs);
  return TRUE;
}
