/* Reading a decision log (docs/scenario.md, "Decision log") into arrays a
 * replay walks: the header, every request, every batch with its members,
 * every request that left unrun, and the measurement windows of the end
 * record, in the order they were written (which is time order). */
#ifndef CS_DECISION_LOG_H
#define CS_DECISION_LOG_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

typedef struct {
  int model;
  int64_t send_ns;
  gboolean measured;
} DlRequest;

typedef struct {
  uint64_t id;            /* batch_id of requests.csv */
  int model, gpu, worker, replica;
  double mps_share;
  int64_t dispatch_ns, not_before_ns;
  gboolean inputs_at_node;
  int n;                  /* its requests: members[first .. first + n) */
  guint first;
} DlBatch;

typedef struct {
  uint64_t id;            /* the request */
  int model;
  int64_t at_ns;
  int why;                /* DL_LEFT_* */
} DlLeft;

enum { DL_LEFT_DROPPED, DL_LEFT_UNSERVED, DL_LEFT_FAILED };

/* One step of the timeline, in file order. */
typedef struct {
  int kind;               /* DL_EV_* */
  guint index;            /* into requests (= the request id), batches or left */
  int64_t at_ns;
} DlEvent;

enum { DL_EV_REQUEST, DL_EV_BATCH, DL_EV_LEFT };

typedef struct {
  char *path;
  cJSON *header;          /* the first line */
  int n_models, n_gpus;
  char **models;          /* names, NULL-terminated */
  int64_t *slo_ns;        /* per model */
  char **gpu_types;       /* per GPU, NULL-terminated */
  gboolean mps;
  gboolean has_placement; /* the header's placement is not "none" */
  GArray *requests;       /* DlRequest, index = request id */
  GArray *batches;        /* DlBatch */
  GArray *members;        /* guint32 request ids, batch by batch */
  GArray *left;           /* DlLeft */
  GArray *timeline;       /* DlEvent */
  cJSON *initial_replicas; /* [{"model": name, "gpu", "batch", "mps_share"}]: those active at 0 */
  int64_t end_ns;         /* when the run ended */
  int64_t *window_start_ns, *window_end_ns; /* per model (end 0: never ended) */
  int n_controller_records; /* replica/gpu records after 0 (a controller acted) */
} DecisionLog;

/* Reads path. Returns NULL with error set (CS_INPUT_ERROR; the message names
 * the file, the line and the field) when it cannot be read, is not a
 * clustersim-decisions version 1 log, is truncated (no end record) or
 * holds a request in more than one batch (preemption: not replayable). */
DecisionLog *cs_decision_log_read(const char *path, GError **error);
void cs_decision_log_free(DecisionLog *log);

#endif
