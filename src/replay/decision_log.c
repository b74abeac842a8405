/* Reading a decision log: one JSON object per line, checked field by field
 * (a replay trusts nothing it has not checked: an index out of range would
 * be a crash, a time running backwards a wrong number). */
#include "decision_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/input_file.h"
#include "common/json_input.h"

#define MAX_TIME_NS ((int64_t)1 << 62)

static gboolean fail(GError **error, const char *file, gint64 line, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean fail(GError **error, const char *file, gint64 line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: line %" G_GINT64_FORMAT ": %s",
              file, line, msg);
  g_free(msg);
  return FALSE;
}

static gboolean read_header(DecisionLog *log, cJSON *h, GError **error)
{
  const char *f = log->path;
  const char *format = NULL, *placement = NULL;
  int version = 0;
  if (!cJSON_IsObject(h) || !cs_json_read_string(h, "format", TRUE, &format, f, "line 1", error))
    return error && *error ? FALSE
                           : fail(error, f, 1, "expected the header object of a decision log");
  if (strcmp(format, "clustersim-decisions") != 0)
    return fail(error, f, 1, "format: expected \"clustersim-decisions\", got \"%s\"", format);
  if (!cs_json_read_int(h, "version", TRUE, 0, 1000000, &version, f, "line 1", error))
    return FALSE;
  if (version != 1)
    return fail(error, f, 1, "version: this build reads version 1, the log is version %d",
                version);
  cJSON *models = cJSON_GetObjectItemCaseSensitive(h, "models");
  cJSON *gpus = cJSON_GetObjectItemCaseSensitive(h, "gpus");
  if (!cJSON_IsArray(models) || cJSON_GetArraySize(models) < 1)
    return fail(error, f, 1, "models: expected a non-empty array");
  if (!cJSON_IsArray(gpus) || cJSON_GetArraySize(gpus) < 1)
    return fail(error, f, 1, "gpus: expected a non-empty array");
  log->n_models = cJSON_GetArraySize(models);
  log->n_gpus = cJSON_GetArraySize(gpus);
  log->models = g_new0(char *, log->n_models + 1);
  log->slo_ns = g_new0(int64_t, log->n_models);
  log->gpu_types = g_new0(char *, log->n_gpus + 1);
  cJSON *o = models->child;
  for (int m = 0; m < log->n_models; m++, o = o->next) {
    char *path = g_strdup_printf("line 1: models[%d]", m);
    const char *name = NULL;
    gboolean ok = cJSON_IsObject(o) &&
                  cs_json_read_string(o, "name", TRUE, &name, f, path, error) &&
                  cs_json_read_int64(o, "slo_ns", TRUE, 1, MAX_TIME_NS, &log->slo_ns[m], f, path,
                                     error);
    g_free(path);
    if (!ok)
      return error && *error ? FALSE : fail(error, f, 1, "models[%d]: expected an object", m);
    log->models[m] = g_strdup(name);
  }
  o = gpus->child;
  for (int g = 0; g < log->n_gpus; g++, o = o->next) {
    char *path = g_strdup_printf("line 1: gpus[%d]", g);
    const char *type = NULL;
    gboolean ok = cJSON_IsObject(o) &&
                  cs_json_read_string(o, "gpu_type", TRUE, &type, f, path, error);
    g_free(path);
    if (!ok)
      return error && *error ? FALSE : fail(error, f, 1, "gpus[%d]: expected an object", g);
    log->gpu_types[g] = g_strdup(type);
  }
  if (!cs_json_read_bool(h, "mps", TRUE, &log->mps, f, "line 1", error) ||
      !cs_json_read_string(h, "placement", TRUE, &placement, f, "line 1", error))
    return FALSE;
  log->has_placement = strcmp(placement, "none") != 0;
  if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(h, "scenario")))
    return fail(error, f, 1, "scenario: expected the effective scenario (an object); logs "
                "written before it was recorded cannot be replayed: run the scenario again "
                "with --decisions");
  return TRUE;
}

static gboolean read_request(DecisionLog *log, cJSON *o, gint64 line, GError **error)
{
  const char *f = log->path;
  char *path = g_strdup_printf("line %" G_GINT64_FORMAT, line);
  int64_t id = 0;
  DlRequest r = { 0 };
  gboolean ok = cs_json_read_int64(o, "id", TRUE, 0, MAX_TIME_NS, &id, f, path, error) &&
                cs_json_read_int(o, "model", TRUE, 0, log->n_models - 1, &r.model, f, path,
                                 error) &&
                cs_json_read_int64(o, "send_ns", TRUE, 0, MAX_TIME_NS, &r.send_ns, f, path,
                                   error) &&
                cs_json_read_bool(o, "measured", TRUE, &r.measured, f, path, error);
  g_free(path);
  if (!ok)
    return FALSE;
  /* Ids are given in sending order from 0: an id is an index. */
  if (id != (int64_t)log->requests->len)
    return fail(error, f, line, "id: expected request %u (requests are numbered in order from "
                "0), got %" G_GINT64_FORMAT, log->requests->len, (gint64)id);
  g_array_append_val(log->requests, r);
  DlEvent ev = { DL_EV_REQUEST, (guint)id, r.send_ns };
  g_array_append_val(log->timeline, ev);
  return TRUE;
}

static gboolean read_batch(DecisionLog *log, cJSON *o, gint64 line, GArray *in_batch,
                           GError **error)
{
  const char *f = log->path;
  char *path = g_strdup_printf("line %" G_GINT64_FORMAT, line);
  int64_t id = 0;
  DlBatch b = { 0 };
  gboolean ok =
    cs_json_read_int64(o, "id", TRUE, 1, MAX_TIME_NS, &id, f, path, error) &&
    cs_json_read_int(o, "model", TRUE, 0, log->n_models - 1, &b.model, f, path, error) &&
    cs_json_read_int(o, "gpu", TRUE, 0, log->n_gpus - 1, &b.gpu, f, path, error) &&
    cs_json_read_int(o, "worker", TRUE, 0, G_MAXINT, &b.worker, f, path, error) &&
    cs_json_read_int(o, "replica", TRUE, -1, G_MAXINT, &b.replica, f, path, error) &&
    cs_json_read_double(o, "mps_share", TRUE, 0.0, 1.0, &b.mps_share, f, path, error) &&
    cs_json_read_int64(o, "dispatch_ns", TRUE, 0, MAX_TIME_NS, &b.dispatch_ns, f, path, error) &&
    cs_json_read_int64(o, "not_before_ns", TRUE, 0, MAX_TIME_NS, &b.not_before_ns, f, path,
                       error) &&
    cs_json_read_bool(o, "inputs_at_node", TRUE, &b.inputs_at_node, f, path, error);
  g_free(path);
  if (!ok)
    return FALSE;
  b.id = (uint64_t)id;
  cJSON *reqs = cJSON_GetObjectItemCaseSensitive(o, "requests");
  if (!cJSON_IsArray(reqs) || cJSON_GetArraySize(reqs) < 1)
    return fail(error, f, line, "requests: expected a non-empty array of request ids");
  b.first = log->members->len;
  b.n = cJSON_GetArraySize(reqs);
  cJSON *x;
  cJSON_ArrayForEach(x, reqs)
  {
    double v = cJSON_IsNumber(x) ? x->valuedouble : -1.0;
    if (!(v >= 0 && v < (double)log->requests->len && v == (double)(guint32)v))
      return fail(error, f, line, "requests: expected ids of requests sent before the batch, "
                  "got %s", cJSON_IsNumber(x) ? "an unknown id" : "a non-number");
    guint32 rid = (guint32)v;
    const DlRequest *r = &g_array_index(log->requests, DlRequest, rid);
    if (r->model != b.model)
      return fail(error, f, line, "requests: request %u is of model %d, the batch of model %d",
                  rid, r->model, b.model);
    if (g_array_index(in_batch, guint8, rid))
      return fail(error, f, line, "requests: request %u is in an earlier batch too (a policy "
                  "that preempts, such as shepherd): replaying preemption is not supported",
                  rid);
    g_array_index(in_batch, guint8, rid) = 1;
    g_array_append_val(log->members, rid);
  }
  g_array_append_val(log->batches, b);
  DlEvent ev = { DL_EV_BATCH, log->batches->len - 1, b.dispatch_ns };
  g_array_append_val(log->timeline, ev);
  return TRUE;
}

static gboolean read_left(DecisionLog *log, cJSON *o, gint64 line, GArray *in_batch,
                          GError **error)
{
  const char *f = log->path;
  char *path = g_strdup_printf("line %" G_GINT64_FORMAT, line);
  int64_t id = 0;
  const char *why = NULL;
  DlLeft l = { 0 };
  gboolean ok = cs_json_read_int64(o, "id", TRUE, 0, MAX_TIME_NS, &id, f, path, error) &&
                cs_json_read_int(o, "model", TRUE, 0, log->n_models - 1, &l.model, f, path,
                                 error) &&
                cs_json_read_int64(o, "at_ns", TRUE, 0, MAX_TIME_NS, &l.at_ns, f, path, error) &&
                cs_json_read_string(o, "why", TRUE, &why, f, path, error);
  g_free(path);
  if (!ok)
    return FALSE;
  if (id >= (int64_t)log->requests->len)
    return fail(error, f, line, "id: request %" G_GINT64_FORMAT " was not sent before", (gint64)id);
  if (g_array_index(in_batch, guint8, id))
    return fail(error, f, line, "id: request %" G_GINT64_FORMAT " left after it was batched (a "
                "policy that preempts): replaying that is not supported", (gint64)id);
  g_array_index(in_batch, guint8, id) = 1;
  l.id = (uint64_t)id;
  if (strcmp(why, "dropped") == 0)
    l.why = DL_LEFT_DROPPED;
  else if (strcmp(why, "unserved") == 0)
    l.why = DL_LEFT_UNSERVED;
  else if (strcmp(why, "failed") == 0)
    l.why = DL_LEFT_FAILED;
  else
    return fail(error, f, line, "why: expected \"dropped\", \"unserved\" or \"failed\", got \"%s\"",
                why);
  g_array_append_val(log->left, l);
  DlEvent ev = { DL_EV_LEFT, log->left->len - 1, l.at_ns };
  g_array_append_val(log->timeline, ev);
  return TRUE;
}

static gboolean read_end(DecisionLog *log, cJSON *o, gint64 line, GError **error)
{
  const char *f = log->path;
  char *path = g_strdup_printf("line %" G_GINT64_FORMAT, line);
  gboolean ok = cs_json_read_int64(o, "at_ns", TRUE, 0, MAX_TIME_NS, &log->end_ns, f, path, error);
  g_free(path);
  if (!ok)
    return FALSE;
  cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "windows");
  if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) != log->n_models)
    return fail(error, f, line, "windows: expected an array of %d windows (one per model)",
                log->n_models);
  log->window_start_ns = g_new0(int64_t, log->n_models);
  log->window_end_ns = g_new0(int64_t, log->n_models);
  cJSON *x = w->child;
  for (int m = 0; m < log->n_models; m++, x = x->next) {
    char *p = g_strdup_printf("line %" G_GINT64_FORMAT ": windows[%d]", line, m);
    ok = cs_json_read_int64(x, "start_ns", TRUE, 0, MAX_TIME_NS, &log->window_start_ns[m], f, p,
                            error) &&
         cs_json_read_int64(x, "end_ns", TRUE, 0, MAX_TIME_NS, &log->window_end_ns[m], f, p, error);
    g_free(p);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* A replica record: those active at 0 become the replay's placement. */
static gboolean read_replica(DecisionLog *log, cJSON *o, gint64 line, GError **error)
{
  const char *f = log->path;
  char *path = g_strdup_printf("line %" G_GINT64_FORMAT, line);
  int model = 0, gpu = 0, batch = 0;
  double share = 0.0;
  int64_t at = 0;
  const char *life = NULL;
  gboolean ok = cs_json_read_int(o, "model", TRUE, 0, log->n_models - 1, &model, f, path, error) &&
                cs_json_read_int(o, "gpu", TRUE, 0, log->n_gpus - 1, &gpu, f, path, error) &&
                cs_json_read_int(o, "batch", TRUE, 1, G_MAXINT, &batch, f, path, error) &&
                cs_json_read_double(o, "mps_share", TRUE, 0.0, 1.0, &share, f, path, error) &&
                cs_json_read_int64(o, "at_ns", TRUE, 0, MAX_TIME_NS, &at, f, path, error) &&
                cs_json_read_string(o, "life", TRUE, &life, f, path, error);
  g_free(path);
  if (!ok)
    return FALSE;
  if (at > 0 || strcmp(life, "active") != 0) {
    log->n_controller_records++;
    return TRUE;
  }
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "model", log->models[model]);
  cJSON_AddNumberToObject(r, "gpu", gpu);
  cJSON_AddNumberToObject(r, "batch", batch);
  if (share > 0)
    cJSON_AddNumberToObject(r, "mps_share", share);
  cJSON_AddItemToArray(log->initial_replicas, r);
  return TRUE;
}

DecisionLog *cs_decision_log_read(const char *path, GError **error)
{
  FILE *in = cs_input_fopen(path, error);
  if (!in)
    return NULL;
  DecisionLog *log = g_new0(DecisionLog, 1);
  log->path = g_strdup(path);
  log->requests = g_array_new(FALSE, FALSE, sizeof(DlRequest));
  log->batches = g_array_new(FALSE, FALSE, sizeof(DlBatch));
  log->members = g_array_new(FALSE, FALSE, sizeof(guint32));
  log->left = g_array_new(FALSE, FALSE, sizeof(DlLeft));
  log->timeline = g_array_new(FALSE, FALSE, sizeof(DlEvent));
  log->initial_replicas = cJSON_CreateArray();
  GArray *in_batch = g_array_new(FALSE, TRUE, sizeof(guint8)); /* per request: batched or left */
  char *buf = NULL;
  size_t cap = 0;
  gint64 line = 0;
  gboolean ok = TRUE, ended = FALSE;
  int64_t last_at = 0;
  ssize_t len;
  while (ok && (len = getline(&buf, &cap, in)) >= 0) {
    line++;
    if (ended) {
      ok = fail(error, path, line, "a record after the end record");
      break;
    }
    cJSON *o = cJSON_ParseWithLength(buf, (size_t)len);
    if (!o) {
      ok = line == 1 ? fail(error, path, 1, "not a decision log (the first line is not JSON)")
                     : fail(error, path, line, "not JSON (a truncated log?)");
      break;
    }
    if (!cs_json_check_unique(o, buf, (size_t)len, path, (int)MIN(line, G_MAXINT), error)) {
      cJSON_Delete(o);
      ok = FALSE;
      break;
    }
    if (line == 1) {
      ok = read_header(log, o, error);
      if (ok) {
        log->header = o;
        continue;
      }
      cJSON_Delete(o);
      break;
    }
    const char *ev = NULL;
    char *p = g_strdup_printf("line %" G_GINT64_FORMAT, line);
    ok = cJSON_IsObject(o) && cs_json_read_string(o, "ev", TRUE, &ev, path, p, error);
    g_free(p);
    if (!ok) {
      if (!(error && *error))
        fail(error, path, line, "expected an object with \"ev\"");
      cJSON_Delete(o);
      break;
    }
    guint before = log->timeline->len;
    if (strcmp(ev, "request") == 0) {
      ok = read_request(log, o, line, error);
      guint8 zero = 0;
      if (ok)
        g_array_append_val(in_batch, zero);
    } else if (strcmp(ev, "batch") == 0)
      ok = read_batch(log, o, line, in_batch, error);
    else if (strcmp(ev, "left") == 0)
      ok = read_left(log, o, line, in_batch, error);
    else if (strcmp(ev, "replica") == 0)
      ok = read_replica(log, o, line, error);
    else if (strcmp(ev, "gpu") == 0)
      log->n_controller_records++;
    else if (strcmp(ev, "end") == 0) {
      ok = read_end(log, o, line, error);
      ended = TRUE;
    } else
      ok = fail(error, path, line, "ev: expected request, batch, left, replica, gpu or end, got "
                "\"%s\"", ev);
    if (ok && log->timeline->len > before) {
      int64_t at = g_array_index(log->timeline, DlEvent, before).at_ns;
      if (at < last_at)
        ok = fail(error, path, line, "time runs backwards (%" G_GINT64_FORMAT " ns after %"
                  G_GINT64_FORMAT " ns)", (gint64)at, (gint64)last_at);
      last_at = at;
    }
    cJSON_Delete(o);
  }
  if (ok && ferror(in))
    ok = fail(error, path, line, "cannot read: %s", g_strerror(errno));
  if (ok && line == 0)
    ok = fail(error, path, 1, "empty: not a decision log");
  else if (ok && !ended)
    ok = fail(error, path, line, "no end record: the log is truncated (the run that wrote it "
              "did not finish)");
  free(buf);
  fclose(in);
  g_array_unref(in_batch);
  if (!ok) {
    cs_decision_log_free(log);
    return NULL;
  }
  return log;
}

void cs_decision_log_free(DecisionLog *log)
{
  if (!log)
    return;
  g_free(log->path);
  cJSON_Delete(log->header);
  g_strfreev(log->models);
  g_free(log->slo_ns);
  g_strfreev(log->gpu_types);
  g_array_unref(log->requests);
  g_array_unref(log->batches);
  g_array_unref(log->members);
  g_array_unref(log->left);
  g_array_unref(log->timeline);
  cJSON_Delete(log->initial_replicas);
  g_free(log->window_start_ns);
  g_free(log->window_end_ns);
  g_free(log);
}
