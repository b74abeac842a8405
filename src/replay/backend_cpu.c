/* "cpu": each GPU of the scenario is a set of CPU cores, each model a chain
 * of single-precision matrix products through OpenBLAS.
 *
 * A model of L layers of width d runs a batch of b requests as L products
 * (b x d) . (d x d): b x d^2 multiply-adds per layer over d^2 weights. At
 * small b the weights' traffic dominates (as at small batches on a GPU), at
 * large b the arithmetic: latency grows with the batch, less than in
 * proportion. Every worker has weights of its own, so co-located workers
 * compete for the cores of their GPU, for the caches and for memory
 * bandwidth; they are not isolated as MIG instances would be.
 *
 * Sizes: the model with the smallest batch-1 latency on its profile gets
 * min_model_mb of weights, every other one weights in proportion to its
 * batch-1 latency (so that models keep their order and ratios of cost). A
 * model far larger than the last-level cache streams its weights from memory
 * at every batch, as a GPU streams them from its HBM: a batch then takes as
 * long whatever ran before it. With models that fit in the cache, a model
 * run after another was found up to 50 % slower than back to back (its
 * weights evicted), which no per-batch latency profile can describe.
 *
 * Options (--backend-option KEY=VALUE):
 *   width=D          matrix width (default 1024: 4 MiB of weights a layer)
 *   min_model_mb=M   weights of the cheapest model, MiB (default 64: beyond
 *                    the caches of the machines this ran on)
 *   layers=M:N,...   model M gets N layers, whatever its profile says (a
 *                    measured profile and the replay that checks it must run
 *                    the same models: clustersim validate passes the layers
 *                    it measured)
 *   cores=A-B        the cores GPUs run on (default: every core this process
 *                    may run on; the replay's clock thread, asleep almost
 *                    always, preempts them when it can run at real-time
 *                    priority)
 * GPUs take consecutive equal groups of those cores; with more GPUs than
 * cores, GPUs share cores (describe says so). OpenBLAS runs one thread per
 * call: the worker's own. OpenBLAS is loaded at run time (load_openblas). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends.h"

/* OpenBLAS is loaded when the backend is first opened, not linked: linked,
 * it started a thread of its own in every clustersim process at load time,
 * and a SIGTERM delivered to that thread killed commands halfway through
 * what they write with the signal blocked in their main thread (the test of
 * `clustersim plot` caught it). Its Fortran interface (sgemm_): GSL's own
 * CBLAS (gslcblas) could shadow OpenBLAS's cblas_ symbols. The library, once
 * loaded, stays loaded: the pointers below are the process's, set once. */
typedef void (*SgemmFn)(const char *transa, const char *transb, const int *m, const int *n,
                        const int *k, const float *alpha, const float *a, const int *lda,
                        const float *b, const int *ldb, const float *beta, float *c,
                        const int *ldc);
static SgemmFn sgemm_;
static char *(*openblas_get_config)(void);

static gboolean load_openblas(GError **error)
{
  static GMutex lock;
  static void *handle;
  static char *failure;
  g_mutex_lock(&lock);
  if (!handle && !failure) {
    handle = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    void (*set_threads)(int) = handle ? (void (*)(int))dlsym(handle, "openblas_set_num_threads") : NULL;
    sgemm_ = handle ? (SgemmFn)dlsym(handle, "sgemm_") : NULL;
    openblas_get_config = handle ? (char *(*)(void))dlsym(handle, "openblas_get_config") : NULL;
    if (!sgemm_ || !set_threads || !openblas_get_config) {
      const char *why = dlerror();
      failure = g_strdup_printf("this backend needs OpenBLAS (libopenblas.so.0; Debian: "
                                "apt-get install libopenblas0, which tools/install-deps.sh "
                                "installs): %s", why ? why : "symbols missing");
      handle = NULL;
    } else {
      set_threads(1); /* one thread per call: the worker's own */
    }
  }
  gboolean ok = failure == NULL;
  if (!ok)
    g_set_error_literal(error, CS_ERROR, CS_ERROR_IO, failure);
  g_mutex_unlock(&lock);
  return ok;
}

typedef struct {
  const CsBackendSetup *setup;
  int width;
  double min_model_mb;
  int *cores;            /* the cores GPUs run on */
  int n_cores;
  int *layers;           /* per model */
  /* Weights, per model a list of copies: a worker takes the first copy no
   * other worker holds and gives it back on release; they are freed at
   * close. One open backend that measures a profile and then replays runs
   * the replay's first worker of a model on the very memory it measured:
   * on a virtual machine, two allocations of the same size were found to
   * run steadily 35 % apart (where the host placed their pages). */
  GMutex pool_lock;
  GPtrArray **copies;    /* per model: float * weights */
  GArray **taken;        /* per model: gboolean per copy */
} Cpu;

typedef struct {
  int layers;
  int copy;              /* which copy of its model's weights it holds */
  float *weights;        /* layers x width x width, from the pool */
  float *act[2];         /* max_batch x width each */
} CpuWorker;

static gboolean parse_cores(const char *text, GArray *out)
{
  char **parts = g_strsplit(text, ",", -1);
  gboolean ok = parts[0] != NULL;
  for (int i = 0; ok && parts[i]; i++) {
    char *end = NULL;
    gint64 a = g_ascii_strtoll(parts[i], &end, 10), b = a;
    if (end != parts[i] && *end == '-') {
      const char *second = end + 1;
      b = g_ascii_strtoll(second, &end, 10);
      ok = end != second;
    }
    ok = ok && end != parts[i] && *end == '\0' && a >= 0 && b >= a && b < CPU_SETSIZE;
    for (gint64 c = a; ok && c <= b; c++) {
      int v = (int)c;
      g_array_append_val(out, v);
    }
  }
  g_strfreev(parts);
  return ok;
}

static void cpu_close(void *state);

static void *cpu_open(const CsBackendSetup *setup, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const known[] = { "width", "min_model_mb", "layers", "cores", NULL };
  if (!cs_backend_check_options(setup, "cpu", known, error) || !load_openblas(error))
    return NULL;
  Cpu *c = g_new0(Cpu, 1);
  c->setup = setup;
  double width = 1024, min_mb = 64;
  GArray *cores = g_array_new(FALSE, FALSE, sizeof(int));
  const char *cores_text = cs_backend_option(setup, "cores");
  gboolean ok = cs_backend_option_double(setup, "cpu", "width", 16, 16384, &width, error) &&
                cs_backend_option_double(setup, "cpu", "min_model_mb", 0.001, 65536, &min_mb, error);
  if (ok && cores_text && !parse_cores(cores_text, cores)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "--backend-option cores=%s: expected core numbers and ranges, e.g. 1 or 0-3 or "
                "1,3", cores_text);
    ok = FALSE;
  }
  cpu_set_t allowed;
  if (ok && sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "cannot read the allowed cores");
    ok = FALSE;
  }
  if (ok && !cores_text) {
    for (int i = 0; i < CPU_SETSIZE; i++)
      if (CPU_ISSET(i, &allowed))
        g_array_append_val(cores, i);
  }
  for (guint i = 0; ok && i < cores->len; i++)
    if (!CPU_ISSET(g_array_index(cores, int, i), &allowed)) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "--backend-option cores: core %d is not one this process may run on",
                  g_array_index(cores, int, i));
      ok = FALSE;
    }
  c->width = (int)width;
  c->min_model_mb = min_mb;
  c->n_cores = (int)cores->len;
  c->cores = (int *)g_array_free(cores, FALSE);
  c->layers = g_new0(int, MAX(setup->n_models, 1));
  g_mutex_init(&c->pool_lock);
  if (!ok) {
    cpu_close(c);
    return NULL;
  }
  c->copies = g_new0(GPtrArray *, MAX(setup->n_models, 1));
  c->taken = g_new0(GArray *, MAX(setup->n_models, 1));
  for (int m = 0; m < setup->n_models; m++) {
    c->copies[m] = g_ptr_array_new();
    c->taken[m] = g_array_new(FALSE, FALSE, sizeof(gboolean));
  }
  if (!cs_backend_size_models(setup, "cpu", c->width, min_mb, c->layers, error)) {
    cpu_close(c);
    return NULL;
  }
  return c;
}

/* The cores of GPU g: an equal consecutive group, or a shared one. */
static void gpu_cores(const Cpu *c, int g, cpu_set_t *set)
{
  CPU_ZERO(set);
  int n_gpus = c->setup->n_gpus;
  if (n_gpus <= c->n_cores) {
    int per = c->n_cores / n_gpus;
    for (int i = g * per; i < (g + 1) * per; i++)
      CPU_SET(c->cores[i], set);
  } else {
    CPU_SET(c->cores[g % c->n_cores], set);
  }
}

/* Memory for n floats in 2 MiB huge pages where the kernel gives them
 * (transparent huge pages on madvise): with 4 KiB pages a worker's speed
 * varied by up to two times with where its pages happened to land (TLB
 * misses over megabytes of weights); huge pages make it repeatable. */
#define HUGE_PAGE ((size_t)2 << 20)
static float *alloc_floats(size_t n)
{
  size_t bytes = (n * sizeof(float) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  void *p = NULL;
  if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
    g_error("backend \"cpu\": out of memory (%zu bytes)", bytes);
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

static gboolean cpu_prepare(void *state, CsBackendWorker *w, GError **error)
{
  Cpu *c = state;
  cpu_set_t set;
  gpu_cores(c, w->gpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "cannot pin the worker of GPU %d",
                w->gpu);
    return FALSE;
  }
  CpuWorker *x = g_new0(CpuWorker, 1);
  x->layers = c->layers[w->model];
  size_t d = (size_t)c->width;
  g_mutex_lock(&c->pool_lock);
  GArray *taken = c->taken[w->model];
  guint k = 0;
  while (k < taken->len && g_array_index(taken, gboolean, k))
    k++;
  if (k == taken->len) {
    /* A new copy, first touched by the worker's own thread, on its cores.
     * Weights 1/d and inputs 1 keep every value 1: no overflow, no
     * denormals that would slow some batches. */
    float *weights = alloc_floats((size_t)x->layers * d * d);
    for (size_t i = 0; i < (size_t)x->layers * d * d; i++)
      weights[i] = 1.0f / (float)d;
    g_ptr_array_add(c->copies[w->model], weights);
    gboolean no = FALSE;
    g_array_append_val(taken, no);
  }
  g_array_index(taken, gboolean, k) = TRUE;
  x->copy = (int)k;
  x->weights = g_ptr_array_index(c->copies[w->model], k);
  g_mutex_unlock(&c->pool_lock);
  for (int k = 0; k < 2; k++) {
    x->act[k] = alloc_floats((size_t)MAX(w->max_batch, 1) * d);
    for (size_t i = 0; i < (size_t)MAX(w->max_batch, 1) * d; i++)
      x->act[k][i] = 1.0f;
  }
  w->data = x;
  return TRUE;
}

static gboolean cpu_execute(void *state, CsBackendWorker *w, int batch, GError **error)
{
  Cpu *c = state;
  CpuWorker *x = w->data;
  if (batch > w->max_batch) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "a batch of %d, more than the "
                "%d prepared for", batch, w->max_batch);
    return FALSE;
  }
  const int d = c->width, n = batch;
  const float one = 1.0f, zero = 0.0f;
  /* Column-major: activations (d x n) = weights (d x d) . activations (d x n). */
  for (int l = 0; l < x->layers; l++)
    sgemm_("N", "N", &d, &n, &d, &one, x->weights + (size_t)l * d * d, &d, x->act[l & 1], &d,
           &zero, x->act[(l + 1) & 1], &d);
  return TRUE;
}

static void cpu_release(void *state, CsBackendWorker *w)
{
  Cpu *c = state;
  CpuWorker *x = w->data;
  if (!x)
    return;
  g_mutex_lock(&c->pool_lock);
  g_array_index(c->taken[w->model], gboolean, x->copy) = FALSE;
  g_mutex_unlock(&c->pool_lock);
  free(x->act[0]);
  free(x->act[1]);
  g_free(x);
  w->data = NULL;
}

static char *cpu_describe(void *state)
{
  Cpu *c = state;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "blas", openblas_get_config());
  cJSON_AddNumberToObject(o, "width", c->width);
  cJSON_AddNumberToObject(o, "min_model_mb", c->min_model_mb);
  cJSON *cores = cJSON_AddArrayToObject(o, "cores");
  for (int i = 0; i < c->n_cores; i++)
    cJSON_AddItemToArray(cores, cJSON_CreateNumber(c->cores[i]));
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpu_cores");
  for (int g = 0; g < c->setup->n_gpus; g++) {
    cpu_set_t set;
    gpu_cores(c, g, &set);
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < CPU_SETSIZE; i++)
      if (CPU_ISSET(i, &set))
        cJSON_AddItemToArray(list, cJSON_CreateNumber(i));
    cJSON_AddItemToArray(gpus, list);
  }
  cJSON_AddBoolToObject(o, "gpus_share_cores", c->setup->n_gpus > c->n_cores);
  cJSON *layers = cJSON_AddObjectToObject(o, "layers");
  for (int m = 0; m < c->setup->n_models; m++)
    cJSON_AddNumberToObject(layers, c->setup->models[m], c->layers[m]);
  char *text = cJSON_PrintUnformatted(o);
  char *copy = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(o);
  return copy;
}

static double cpu_worker_share(void *state, int gpu)
{
  Cpu *c = state;
  cpu_set_t set;
  gpu_cores(c, gpu, &set);
  return 1.0 / CPU_COUNT(&set);
}

static void cpu_close(void *state)
{
  Cpu *c = state;
  for (int m = 0; c->copies && m < c->setup->n_models; m++) {
    for (guint k = 0; k < c->copies[m]->len; k++)
      free(g_ptr_array_index(c->copies[m], k));
    g_ptr_array_unref(c->copies[m]);
    g_array_unref(c->taken[m]);
  }
  g_free(c->copies);
  g_free(c->taken);
  g_mutex_clear(&c->pool_lock);
  g_free(c->cores);
  g_free(c->layers);
  g_free(c);
}

const CsBackend cs_backend_cpu = {
  .name = "cpu",
  .description = "GPUs as pinned CPU cores, models as OpenBLAS matrix-product chains",
  .open = cpu_open,
  .prepare = cpu_prepare,
  .execute = cpu_execute,
  .release = cpu_release,
  .describe = cpu_describe,
  .worker_share = cpu_worker_share,
  .close = cpu_close,
};
