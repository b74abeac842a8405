/* The timeline of a run as Chrome trace event JSON (CsRunOptions.trace_json),
 * which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Tracks:
 *   process "dispatch" (pid 1), one thread per model: an async slice per
 *     batch for its transfer to the GPU's node, and a flow arrow from its
 *     dispatch to its execution;
 *   process "clients" (pid 2), one thread per model: an async slice per
 *     request from send to result, or an instant where it was dropped,
 *     failed or left unserved;
 *   process "GPU g (type)" (pid 100 + g), one thread per worker (a replica,
 *     or a model on that GPU): a complete slice per batch execution (model,
 *     size, replica, MPS share), and counters of running and queued batches
 *     and SM use.
 * Times are whole simulated microseconds, the nanoseconds floored: a viewer
 * adds "ts" and "dur" as doubles, and with three decimals the sum could land
 * past the next batch's start on the same track (a batch ending exactly as the
 * next starts was drawn overlapping it, and one of them lost); integers add
 * exactly, and flooring keeps every end at or before the next start.
 * requests.csv keeps the nanoseconds. The
 * writer sees the run only through the CsRunOptions callbacks; the names of
 * processes and threads come from the results at the end. A window keeps the
 * events that overlap it, and the GPU counters' values as of its start. The
 * file is written under a temporary name and renamed when complete. */
#include "trace.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "sim/results.h"

struct CsTraceWriter {
  FILE *f;
  char *path, *tmp;
  int64_t from_ns, to_ns; /* the window; to_ns = INT64_MAX: everything */
  gboolean first;         /* no event written yet (no comma before it) */
  gboolean failed;
  /* The last counter values of each GPU before the window, written at its
   * start when the GPU first changes inside it. */
  GArray *last_state;     /* CsGpuState per GPU */
  GArray *state_shown;    /* gboolean per GPU: the value at the window start was written */
  CsRunOptions user;      /* the caller's callbacks, called first */
  char **models;          /* model names by client index */
  int n_models;
};

#define PID_DISPATCH 1
#define PID_CLIENTS 2
#define PID_GPU0 100

/* Simulated ns as whole microseconds, floored (see the file's comment). */
static int64_t floor_us(int64_t ns)
{
  int64_t us = ns / 1000;
  return ns % 1000 < 0 ? us - 1 : us;
}

static void put_us(FILE *f, int64_t ns)
{
  fprintf(f, "%" PRId64, floor_us(ns));
}

/* Starts an event object: the separator, then {"ph":...,"pid":...,"tid":...,"ts":...,
 * the caller appends the rest and the closing brace. */
static void begin(CsTraceWriter *w, const char *ph, int pid, int64_t tid, int64_t ts)
{
  fputs(w->first ? "\n" : ",\n", w->f);
  w->first = FALSE;
  fprintf(w->f, "{\"ph\":\"%s\",\"pid\":%d,\"tid\":%" PRId64 ",\"ts\":", ph, pid, tid);
  put_us(w->f, ts);
}

static gboolean overlaps(const CsTraceWriter *w, int64_t start, int64_t end)
{
  return end >= w->from_ns && start <= w->to_ns;
}

/* A JSON string of a model name (names are checked at load: no quotes or
 * control characters reach here, but escape anyway). */
static void put_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void on_batch(const CsBatchEvent *b, void *user_data)
{
  CsTraceWriter *w = user_data;
  if (w->user.on_batch)
    w->user.on_batch(b, w->user.user_data);
  /* Each event is kept when it overlaps the window by itself. */
  if (overlaps(w, b->start_ns, b->end_ns)) {
    /* Execution on the GPU's worker track. */
    begin(w, "X", PID_GPU0 + b->gpu, b->worker, b->start_ns);
    fprintf(w->f, ",\"dur\":%" PRId64, floor_us(b->end_ns) - floor_us(b->start_ns));
    fputs(",\"cat\":\"batch\",\"name\":", w->f);
    put_string(w->f, b->model < w->n_models ? w->models[b->model] : "?");
    fprintf(w->f, ",\"args\":{\"batch_id\":%" PRIu64 ",\"size\":%d,\"replica\":%d}}",
            b->batch_id, b->size, b->replica);
  }
  if (overlaps(w, b->dispatch_ns, b->node_ns)) {
    /* Transfer to the node, on the model's dispatch track. */
    begin(w, "b", PID_DISPATCH, b->model, b->dispatch_ns);
    fprintf(w->f, ",\"cat\":\"transfer\",\"id\":%" PRIu64 ",\"name\":\"to gpu %d\"}",
            b->batch_id, b->gpu);
    begin(w, "e", PID_DISPATCH, b->model, b->node_ns);
    fprintf(w->f, ",\"cat\":\"transfer\",\"id\":%" PRIu64 ",\"name\":\"to gpu %d\"}",
            b->batch_id, b->gpu);
  }
  if (overlaps(w, b->dispatch_ns, b->node_ns) && overlaps(w, b->start_ns, b->end_ns)) {
    /* An arrow from the dispatch to the execution, when both are in the file
     * (an arrow to or from nothing is dropped or misdrawn by viewers). */
    begin(w, "s", PID_DISPATCH, b->model, b->dispatch_ns);
    fprintf(w->f, ",\"cat\":\"flow\",\"id\":%" PRIu64 ",\"name\":\"batch\"}", b->batch_id);
    begin(w, "f", PID_GPU0 + b->gpu, b->worker, b->start_ns);
    fprintf(w->f, ",\"bp\":\"e\",\"cat\":\"flow\",\"id\":%" PRIu64 ",\"name\":\"batch\"}",
            b->batch_id);
  }
}

static void put_counter(CsTraceWriter *w, const CsGpuState *s, int64_t ts)
{
  begin(w, "C", PID_GPU0 + s->gpu, 0, ts);
  fprintf(w->f, ",\"name\":\"gpu %d\",\"args\":{\"running\":%d,\"queued\":%d,\"sm_use\":%.17g}}",
          s->gpu, s->running, s->queued, s->sm_use);
}

static void on_gpu(const CsGpuState *s, void *user_data)
{
  CsTraceWriter *w = user_data;
  if (w->user.on_gpu)
    w->user.on_gpu(s, w->user.user_data);
  if ((guint)s->gpu >= w->last_state->len) {
    g_array_set_size(w->last_state, s->gpu + 1);
    g_array_set_size(w->state_shown, s->gpu + 1);
  }
  if (s->time_ns < w->from_ns) {
    g_array_index(w->last_state, CsGpuState, s->gpu) = *s;
    return;
  }
  if (s->time_ns > w->to_ns)
    return;
  gboolean *shown = &g_array_index(w->state_shown, gboolean, s->gpu);
  const CsGpuState *before = &g_array_index(w->last_state, CsGpuState, s->gpu);
  if (!*shown && w->from_ns > 0 && s->time_ns > w->from_ns) {
    CsGpuState at_start = *before;
    at_start.gpu = s->gpu; /* zeroed when the GPU had not changed yet: idle */
    put_counter(w, &at_start, w->from_ns);
  }
  *shown = TRUE;
  put_counter(w, s, s->time_ns);
}

static void on_request(const CsRequestRecord *r, void *user_data)
{
  CsTraceWriter *w = user_data;
  if (w->user.on_request)
    w->user.on_request(r, w->user.user_data);
  if (!overlaps(w, r->send_ns, r->receive_ns))
    return;
  if (!r->served) {
    const char *what = r->dropped ? "dropped" : r->unserved ? "unserved" : "failed";
    begin(w, "i", PID_CLIENTS, r->client, r->receive_ns);
    fprintf(w->f, ",\"s\":\"t\",\"cat\":\"request\",\"name\":\"%s\",\"args\":{\"id\":%" PRIu64
                  "}}",
            what, r->id);
    return;
  }
  begin(w, "b", PID_CLIENTS, r->client, r->send_ns);
  fprintf(w->f, ",\"cat\":\"request\",\"id\":%" PRIu64 ",\"name\":", r->id);
  put_string(w->f, r->model);
  fprintf(w->f, ",\"args\":{\"batch_id\":%" PRIu64 ",\"slo_met\":%s,\"measured\":%s}}",
          r->batch_id, r->slo_met ? "true" : "false", r->measured ? "true" : "false");
  begin(w, "e", PID_CLIENTS, r->client, r->receive_ns);
  fprintf(w->f, ",\"cat\":\"request\",\"id\":%" PRIu64 ",\"name\":", r->id);
  put_string(w->f, r->model);
  fputc('}', w->f);
}

static gboolean on_progress(double fraction, int64_t t, void *user_data)
{
  CsTraceWriter *w = user_data;
  return w->user.on_progress(fraction, t, w->user.user_data);
}

CsTraceWriter *cs_trace_writer_new(const CsRunOptions *opt, const char *const *models,
                                   int n_models, CsRunOptions *wrapped, GError **error)
{
  CsTraceWriter *w = g_new0(CsTraceWriter, 1);
  w->path = g_strdup(opt->trace_json);
  w->tmp = g_strconcat(opt->trace_json, ".partial", NULL);
  w->f = g_fopen(w->tmp, "w");
  if (!w->f) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", w->path, g_strerror(errno));
    g_free(w->path);
    g_free(w->tmp);
    g_free(w);
    return NULL;
  }
  setvbuf(w->f, NULL, _IOFBF, 1 << 20);
  gboolean windowed = opt->trace_to_s > opt->trace_from_s;
  w->from_ns = windowed ? llround(opt->trace_from_s * 1e9) : 0;
  w->to_ns = windowed ? llround(opt->trace_to_s * 1e9) : INT64_MAX;
  w->first = TRUE;
  w->n_models = n_models;
  w->models = g_new0(char *, n_models + 1);
  for (int m = 0; m < n_models; m++)
    w->models[m] = g_strdup(models[m]);
  w->last_state = g_array_new(FALSE, TRUE, sizeof(CsGpuState));
  w->state_shown = g_array_new(FALSE, TRUE, sizeof(gboolean));
  w->user = *opt;
  *wrapped = *opt;
  wrapped->user_data = w;
  wrapped->on_batch = on_batch;
  wrapped->on_gpu = on_gpu;
  wrapped->on_request = on_request;
  wrapped->on_progress = opt->on_progress ? on_progress : NULL;
  fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"clustersim\"},"
        "\"traceEvents\":[",
        w->f);
  return w;
}

static void name_track(CsTraceWriter *w, const char *kind, int pid, int tid, const char *name)
{
  begin(w, "M", pid, tid, 0);
  fprintf(w->f, ",\"name\":\"%s\",\"args\":{\"name\":", kind);
  put_string(w->f, name);
  fputs("}}", w->f);
}

gboolean cs_trace_writer_finish(CsTraceWriter *w, const CsResults *res, GError **error)
{
  name_track(w, "process_name", PID_DISPATCH, 0, "dispatch");
  name_track(w, "process_name", PID_CLIENTS, 0, "clients");
  for (int m = 0; m < res->n_models; m++) {
    name_track(w, "thread_name", PID_DISPATCH, m, res->models[m].model);
    name_track(w, "thread_name", PID_CLIENTS, m, res->models[m].model);
  }
  for (int g = 0; g < res->n_gpus; g++) {
    char *name = g_strdup_printf("GPU %d (%s)", g, res->gpus[g].gpu_type);
    name_track(w, "process_name", PID_GPU0 + g, 0, name);
    g_free(name);
  }
  for (int k = 0; k < res->n_workers; k++) {
    const CsWorkerResult *wr = &res->workers[k];
    if (wr->gpu < 0)
      continue;
    char *name = wr->share > 0 ? g_strdup_printf("worker %d: %s, MPS share %.4g", k, wr->model,
                                                 wr->share)
                               : g_strdup_printf("worker %d: %s", k, wr->model);
    name_track(w, "thread_name", PID_GPU0 + wr->gpu, k, name);
    g_free(name);
  }
  fputs("\n]}\n", w->f);
  gboolean ok = !ferror(w->f);
  ok = fclose(w->f) == 0 && ok;
  w->f = NULL;
  if (ok && g_rename(w->tmp, w->path) != 0)
    ok = FALSE;
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", w->path,
                g_strerror(errno));
  cs_trace_writer_free(w);
  return ok;
}

void cs_trace_writer_free(CsTraceWriter *w)
{
  if (!w)
    return;
  if (w->f) {
    fclose(w->f);
    g_unlink(w->tmp);
  }
  g_array_free(w->last_state, TRUE);
  g_array_free(w->state_shown, TRUE);
  g_strfreev(w->models);
  g_free(w->path);
  g_free(w->tmp);
  g_free(w);
}
