/* "cuda": each worker is a process of its own, clustersim-cuda-worker
 * (cuda_worker.c), on the CUDA device of its GPU, running the model as a
 * chain of cuBLAS single-precision products sized as the cpu backend's
 * (cs_backend_size_models), with the host-device copies of its payloads. A
 * process per worker is what lets an MPS share apply to one worker: its
 * share goes into CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (percent of the SMs),
 * which the MPS server reads when the process connects. Without an MPS
 * server running, shares have no effect (the workers time-slice the device).
 *
 * Options (--backend-option KEY=VALUE):
 *   width=D          matrix width (default 4096: 64 MiB a layer)
 *   min_model_mb=M   weights of the cheapest model, MiB (default 256: beyond
 *                    the L2 caches of current GPUs)
 *   layers=M:N,...   depths by hand
 *   devices=A,B,...  the CUDA device of each GPU of the scenario (default:
 *                    GPU g on device g)
 *   worker=PATH      the worker program (default: $CLUSTERSIM_CUDA_WORKER, the
 *                    build tree's, the installed one)
 *
 * NEVER RUN ON A GPU: written and compiled on machines without one. What
 * has run: the protocol, and the worker failing cleanly at set-up where no
 * device exists (tests/cli/test_replay.sh). docs/replay.md says what to
 * check first on a GPU. */
#define _GNU_SOURCE /* SOCK_CLOEXEC, MSG_NOSIGNAL */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backends.h"
#include "cs_config.h"

typedef struct {
  const CsBackendSetup *setup;
  int width;
  double min_model_mb;
  int *layers;     /* per model */
  int *device;     /* per GPU */
  char *worker;    /* the worker program */
} Cuda;

/* The worker's stdin and stdout are one end of a socket pair: the other is
 * written with send(MSG_NOSIGNAL), so that a worker that died is an error
 * (EPIPE), not a SIGPIPE that would kill the replay. */
typedef struct {
  GPid pid;
  int fd;
  FILE *from;
} CudaWorker;

static gboolean say(CudaWorker *x, const char *line)
{
  size_t n = strlen(line), done = 0;
  while (done < n) {
    ssize_t k = send(x->fd, line + done, n - done, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return FALSE;
    done += (size_t)k;
  }
  return TRUE;
}

static const char *worker_program(const CsBackendSetup *setup)
{
  const char *given = cs_backend_option(setup, "worker");
  if (given)
    return given;
  const char *env = g_getenv("CLUSTERSIM_CUDA_WORKER");
  if (env && *env)
    return env;
  if (g_file_test(CS_CUDA_WORKER_BUILD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return CS_CUDA_WORKER_BUILD_PATH;
  return CS_CUDA_WORKER_INSTALL_PATH;
}

static void cuda_close(void *state)
{
  Cuda *c = state;
  g_free(c->layers);
  g_free(c->device);
  g_free(c->worker);
  g_free(c);
}

static void *cuda_open(const CsBackendSetup *setup, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const known[] = { "width", "min_model_mb", "layers", "devices", "worker",
                                       NULL };
  if (!cs_backend_check_options(setup, "cuda", known, error))
    return NULL;
  Cuda *c = g_new0(Cuda, 1);
  c->setup = setup;
  c->layers = g_new0(int, MAX(setup->n_models, 1));
  c->device = g_new0(int, MAX(setup->n_gpus, 1));
  double width = 4096, min_mb = 256;
  gboolean ok = cs_backend_option_double(setup, "cuda", "width", 16, 16384, &width, error) &&
                cs_backend_option_double(setup, "cuda", "min_model_mb", 0.001, 1 << 20, &min_mb,
                                         error);
  c->width = (int)width;
  c->min_model_mb = min_mb;
  ok = ok && cs_backend_size_models(setup, "cuda", c->width, min_mb, c->layers, error);
  for (int g = 0; g < setup->n_gpus; g++)
    c->device[g] = g;
  const char *devices = cs_backend_option(setup, "devices");
  if (ok && devices) {
    char **parts = g_strsplit(devices, ",", -1);
    ok = (int)g_strv_length(parts) == setup->n_gpus;
    for (int g = 0; ok && g < setup->n_gpus; g++) {
      char *end = NULL;
      gint64 v = g_ascii_strtoll(parts[g], &end, 10);
      ok = end != parts[g] && *end == '\0' && v >= 0 && v <= 1024;
      c->device[g] = (int)v;
    }
    g_strfreev(parts);
    if (!ok)
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "--backend-option devices=%s: expected %d CUDA device numbers, one per GPU of "
                  "the scenario", devices, setup->n_gpus);
  }
  c->worker = g_strdup(worker_program(setup));
  if (ok && !g_file_test(c->worker, G_FILE_TEST_IS_EXECUTABLE)) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO,
                "no worker program at %s (build with -Dcuda=enabled, or give "
                "--backend-option worker=PATH)", c->worker);
    ok = FALSE;
  }
  if (!ok) {
    cuda_close(c);
    return NULL;
  }
  return c;
}

/* A reply line of the worker, without its newline; NULL when it exited. */
static char *reply(CudaWorker *x)
{
  char buf[1024];
  if (!fgets(buf, sizeof buf, x->from))
    return NULL;
  buf[strcspn(buf, "\n")] = '\0';
  return g_strdup(buf);
}

static void stop(CudaWorker *x)
{
  say(x, "quit\n");
  shutdown(x->fd, SHUT_RDWR);
  fclose(x->from); /* closes fd */
  int status = 0;
  waitpid(x->pid, &status, 0);
  g_spawn_close_pid(x->pid);
  g_free(x);
}

static gboolean cuda_prepare(void *state, CsBackendWorker *w, GError **error)
{
  Cuda *c = state;
  const CsModelProfile *p =
    cs_profile_set_lookup(c->setup->profiles, c->setup->gpu_types[w->gpu], c->setup->models[w->model]);
  int64_t in = p ? MAX(0, cs_model_profile_input_bytes(p)) : 0;
  int64_t out = p ? MAX(0, cs_model_profile_output_bytes(p)) : 0;
  char *args[] = { c->worker,
                   "--device", g_strdup_printf("%d", c->device[w->gpu]),
                   "--layers", g_strdup_printf("%d", c->layers[w->model]),
                   "--width", g_strdup_printf("%d", c->width),
                   "--max-batch", g_strdup_printf("%d", MAX(1, w->max_batch)),
                   "--input-bytes", g_strdup_printf("%" G_GINT64_FORMAT, (gint64)in),
                   "--output-bytes", g_strdup_printf("%" G_GINT64_FORMAT, (gint64)out), NULL };
  char **env = g_get_environ();
  if (w->mps_share > 0 && w->mps_share < 1) {
    char *pct = g_strdup_printf("%d", MAX(1, (int)lround(100.0 * w->mps_share)));
    env = g_environ_setenv(env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct, TRUE);
    g_free(pct);
  }
  CudaWorker *x = g_new0(CudaWorker, 1);
  int sv[2] = { -1, -1 };
  gboolean ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0;
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "socketpair: %s", g_strerror(errno));
  ok = ok && g_spawn_async_with_pipes_and_fds(NULL, (const char *const *)args,
                                              (const char *const *)env, G_SPAWN_DO_NOT_REAP_CHILD,
                                              NULL, NULL, sv[1], sv[1], -1, NULL, NULL, 0,
                                              &x->pid, NULL, NULL, NULL, error);
  if (sv[1] >= 0)
    close(sv[1]);
  for (int i = 2; i < 13; i += 2)
    g_free(args[i]);
  g_strfreev(env);
  if (!ok) {
    g_prefix_error(error, "cannot start %s: ", c->worker);
    if (sv[0] >= 0)
      close(sv[0]);
    g_free(x);
    return FALSE;
  }
  x->fd = sv[0];
  x->from = fdopen(sv[0], "r");
  char *line = reply(x);
  if (!line || strcmp(line, "ready") != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO,
                "the worker of %s on GPU %d (CUDA device %d) did not start: %s",
                c->setup->models[w->model], w->gpu, c->device[w->gpu],
                line ? line : "it exited without a word");
    g_free(line);
    stop(x);
    return FALSE;
  }
  g_free(line);
  w->data = x;
  return TRUE;
}

static gboolean cuda_execute(void *state, CsBackendWorker *w, int batch, GError **error)
{
  (void)state;
  CudaWorker *x = w->data;
  char cmd[32];
  g_snprintf(cmd, sizeof cmd, "run %d\n", batch);
  char *line = say(x, cmd) ? reply(x) : NULL;
  gboolean ok = line && strcmp(line, "done") == 0;
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "worker of GPU %d: %s", w->gpu,
                line ? line : "it exited");
  g_free(line);
  return ok;
}

static void cuda_release(void *state, CsBackendWorker *w)
{
  (void)state;
  if (w->data)
    stop(w->data);
  w->data = NULL;
}

static char *cuda_describe(void *state)
{
  Cuda *c = state;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "worker", c->worker);
  cJSON_AddNumberToObject(o, "width", c->width);
  cJSON_AddNumberToObject(o, "min_model_mb", c->min_model_mb);
  cJSON *dev = cJSON_AddArrayToObject(o, "devices");
  for (int g = 0; g < c->setup->n_gpus; g++)
    cJSON_AddItemToArray(dev, cJSON_CreateNumber(c->device[g]));
  cJSON *layers = cJSON_AddObjectToObject(o, "layers");
  for (int m = 0; m < c->setup->n_models; m++)
    cJSON_AddNumberToObject(layers, c->setup->models[m], c->layers[m]);
  cJSON_AddStringToObject(o, "note", "written and compiled without a GPU: check a first run on "
                                     "one against docs/replay.md");
  char *text = cJSON_PrintUnformatted(o);
  char *copy = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(o);
  return copy;
}

const CsBackend cs_backend_cuda = {
  .name = "cuda",
  .description = "a process per worker on its CUDA device, models as cuBLAS product chains "
                 "(never run on a GPU)",
  .open = cuda_open,
  .prepare = cuda_prepare,
  .execute = cuda_execute,
  .release = cuda_release,
  .describe = cuda_describe,
  .close = cuda_close,
  .runs_shares = TRUE,
};
