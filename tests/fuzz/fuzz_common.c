/* Shared by the fuzz harnesses; see fuzz_common.h. */
#include "fuzz_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "experiment/run.h"
#include "scenario/scenario.h"

/* A run is simulated only when the scenario asks for at most this many
 * requests in all on at most FUZZ_MAX_GPUS_LINEAR GPUs: such a run takes
 * milliseconds even under the sanitizers, so every input stays far below
 * libFuzzer's timeout, while the values that shape it (rates, SLOs,
 * latencies, payloads, start times, shares) are all still free. Bigger runs
 * differ only in length, which the fuzzer cannot tell from a hang. The
 * library counts the expected requests itself (CsRunOptions.max_requests:
 * rates x times, request counts, explicit times, trace intervals) and
 * refuses the run before simulating, or stops one that sends twice as many. */
#define FUZZ_MAX_REQUESTS 2000

static char *source_root;
static char *base_dir;
static char *temp_dir;
static GHashTable *temp_paths; /* name -> path */

static void remove_temp_dir(void)
{
  if (!temp_dir)
    return;
  GHashTableIter it;
  gpointer path;
  g_hash_table_iter_init(&it, temp_paths);
  while (g_hash_table_iter_next(&it, NULL, &path))
    unlink((const char *)path);
  rmdir(temp_dir);
}

void fuzz_init(char **argv)
{
  if (source_root)
    return;
  /* GLib's constructor reads G_SLICE when the library loads, before any code
   * of ours runs: setting it now would be too late (a leaked slice then stays
   * invisible to LeakSanitizer). So the process starts over with it set,
   * whoever started it (tools/fuzz.sh exports it already). */
  const char *slice = getenv("G_SLICE");
  if (!slice || strcmp(slice, "always-malloc") != 0) {
    setenv("G_SLICE", "always-malloc", 1);
    setenv("G_DEBUG", "gc-friendly", 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "fuzz: cannot restart with G_SLICE=always-malloc (%s): leaks of GLib "
            "slices stay hidden\n", strerror(errno));
  }
  /* CS_SOURCE_ROOT is what the test suite sets; the build's own source tree
   * is the fallback (fuzz binaries are not installed). */
  const char *env = getenv("CS_SOURCE_ROOT");
  source_root = g_strdup(env && *env ? env : CS_FUZZ_SOURCE_ROOT);
  base_dir = g_build_filename(source_root, "tests", "fuzz", "files", NULL);
  char *data = g_build_filename(source_root, "data", NULL);
  /* Bare names ("v100_thesis") resolve in the repository's data directory,
   * whatever an installed clustersim holds. */
  setenv("CLUSTERSIM_DATA_DIR", data, 1);
  g_free(data);
  if (!g_file_test(base_dir, G_FILE_TEST_IS_DIR)) {
    fprintf(stderr, "fuzz: %s is not a directory (set CS_SOURCE_ROOT to the repository)\n",
            base_dir);
    abort();
  }
  GError *error = NULL;
  temp_dir = g_dir_make_tmp("cs-fuzz-XXXXXX", &error);
  if (!temp_dir) {
    fprintf(stderr, "fuzz: %s\n", error->message);
    abort();
  }
  temp_paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  atexit(remove_temp_dir);
}

const char *fuzz_base_dir(void)
{
  return base_dir;
}

const char *fuzz_write_temp(const char *name, const uint8_t *data, size_t size)
{
  const char *path = g_hash_table_lookup(temp_paths, name);
  if (!path) {
    char *p = g_build_filename(temp_dir, name, NULL);
    g_hash_table_insert(temp_paths, g_strdup(name), p);
    path = p;
  }
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
    abort();
  }
  return path;
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
  return g_strndup((const char *)data, size);
}

CsScenario *fuzz_load_scenario(const uint8_t *data, size_t size)
{
  char *text = fuzz_strndup(data, size);
  GError *error = NULL;
  CsScenario *sc = cs_scenario_new_from_json(text, "fuzz.json", fuzz_base_dir(), &error);
  g_free(text);
  if (!sc)
    fuzz_reject(&error);
  return sc;
}

static unsigned long accepted;

void fuzz_accept(void)
{
  accepted++;
}

unsigned long fuzz_accepted(void)
{
  return accepted;
}

static gboolean verbose(void)
{
  static int v = -1;
  if (v < 0)
    v = getenv("CS_FUZZ_VERBOSE") != NULL;
  return v;
}

void fuzz_note(const char *fmt, ...)
{
  if (!verbose())
    return;
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void fuzz_reject(GError **error)
{
  if (*error)
    fuzz_note("rejected: %s", (*error)->message);
  g_clear_error(error);
}

void fuzz_fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz: property failed: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* GPUs a cluster object or node asks for, counting only values validation
 * accepts (an integer 1..2^20) so that out-of-range ones still reach it. */
static double node_gpus(const cJSON *node, const cJSON *mig)
{
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(node, "gpus");
  if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > (1 << 20))
    return 0;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(node, "mig");
  if (!m)
    m = mig;
  return n->valuedouble * (cJSON_IsArray(m) ? MAX(cJSON_GetArraySize(m), 1) : 1);
}

/* Validation computes the placement, whose cost grows with the cluster (the
 * MILP policies solve with GLPK, usher matches, search simulates): a valid
 * 10,000-GPU cluster would only show up as a timeout, which is no bug. The
 * dedicated and manual placements (and dispatch without placement) cost
 * time linear in the GPUs, and may have thousands; a cluster beyond the
 * limit (CS_MAX_GPUS) is refused while it is read, before anything is
 * allocated, so it is validated too, however many GPUs it asks for. */
static gboolean placement_linear(const cJSON *root)
{
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(root, "placement");
  const cJSON *policy = cJSON_GetObjectItemCaseSensitive(pl, "policy");
  return !pl || (cJSON_IsString(policy) && (strcmp(policy->valuestring, "dedicated") == 0 ||
                                            strcmp(policy->valuestring, "manual") == 0));
}

gboolean fuzz_validation_cheap(CsScenario *sc)
{
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(cs_scenario_root(sc), "placement");
  const cJSON *policy = cJSON_GetObjectItemCaseSensitive(pl, "policy");
  if (cJSON_IsString(policy) && strstr(policy->valuestring, "milp")) {
    /* Nodes, not seconds: where a solve is cut must not depend on the
     * machine's load, as the run is repeated and compared byte for byte.
     * Unrecorded: the effective scenario holds the caps as if they were
     * given. A value validation would refuse is left for it to refuse. */
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(pl, "node_limit");
    const cJSON *limit = cJSON_GetObjectItemCaseSensitive(pl, "time_limit_s");
    GError *error = NULL;
    if ((!nodes || (cJSON_IsNumber(nodes) && nodes->valuedouble > FUZZ_MILP_NODES &&
                    nodes->valuedouble <= G_MAXINT && nodes->valuedouble == floor(nodes->valuedouble))) &&
        !cs_scenario_set_unrecorded(sc, "placement.node_limit", G_STRINGIFY(FUZZ_MILP_NODES),
                                    &error))
      fuzz_reject(&error);
    if ((!limit || (cJSON_IsNumber(limit) && limit->valuedouble >= 0.001 &&
                    limit->valuedouble <= 1e6)) &&
        !cs_scenario_set_unrecorded(sc, "placement.time_limit_s", "1e6", &error))
      fuzz_reject(&error);
  }
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(cs_scenario_root(sc), "cluster");
  if (!cJSON_IsObject(cl))
    return TRUE;
  const cJSON *mig = cJSON_GetObjectItemCaseSensitive(cl, "mig");
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(cl, "nodes");
  double total = node_gpus(cl, NULL);
  int cap = placement_linear(cs_scenario_root(sc)) ? FUZZ_MAX_GPUS_LINEAR : FUZZ_MAX_GPUS;
  if (cJSON_IsArray(nodes)) {
    if (cJSON_GetArraySize(nodes) > cap) {
      fuzz_note("%d nodes: too big to validate", cJSON_GetArraySize(nodes));
      return FALSE;
    }
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes)
    {
      if (cJSON_IsObject(node))
        total += node_gpus(node, mig);
    }
  }
  if (total > CS_MAX_GPUS)
    return TRUE; /* refused as it is read */
  if (total > cap)
    fuzz_note("%.0f GPUs: too big to validate", total);
  return total <= cap;
}

/* ---- The invariants a run must keep (docs/scenario.md, clustersim.h) ---- */

typedef struct {
  int n_models, n_gpus;
  int n_dnn;              /* clients from n_dnn on are LLM deployments' (sim/config.h) */
  int64_t *records, *measured, *completed, *good, *dropped, *unserved, *failed;
} RunCheck;

static void on_request(const CsRequestRecord *r, void *data)
{
  RunCheck *k = data;
  if (r->client < 0 || r->client >= k->n_models)
    fuzz_fail("request %" G_GUINT64_FORMAT ": client %d of %d", r->id, r->client, k->n_models);
  int c = r->client;
  k->records[c]++;
  if (r->served && c >= k->n_dnn) {
    /* An LLM request (clustersim.h): no batch or GPU of the numbering; its
     * first iteration's start, then its completion. */
    if (!(r->send_ns <= r->dispatch_ns && r->dispatch_ns == r->node_ns &&
          r->node_ns == r->exec_start_ns && r->exec_start_ns <= r->exec_end_ns &&
          r->exec_end_ns == r->receive_ns) ||
        r->batch_size != 0 || r->gpu != -1 || r->batch_id != 0 || r->replica < 0 ||
        r->dropped || r->unserved)
      fuzz_fail("LLM request %" G_GUINT64_FORMAT ": send %" G_GINT64_FORMAT " scheduled %"
                G_GINT64_FORMAT " done %" G_GINT64_FORMAT ", batch %d, gpu %d, replica %d",
                r->id, r->send_ns, r->exec_start_ns, r->receive_ns, r->batch_size, r->gpu,
                r->replica);
  } else if (r->served) {
    if (!(r->send_ns <= r->dispatch_ns && r->dispatch_ns <= r->node_ns &&
          r->node_ns <= r->exec_start_ns && r->exec_start_ns <= r->exec_end_ns &&
          r->exec_end_ns <= r->receive_ns))
      fuzz_fail("request %" G_GUINT64_FORMAT ": times out of order: send %" G_GINT64_FORMAT
                " dispatch %" G_GINT64_FORMAT " node %" G_GINT64_FORMAT
                " start %" G_GINT64_FORMAT " end %" G_GINT64_FORMAT
                " receive %" G_GINT64_FORMAT,
                r->id, r->send_ns, r->dispatch_ns, r->node_ns, r->exec_start_ns,
                r->exec_end_ns, r->receive_ns);
    if (r->batch_size < 1 || r->gpu < 0 || r->gpu >= k->n_gpus || r->batch_id == 0 ||
        r->dropped || r->unserved)
      fuzz_fail("request %" G_GUINT64_FORMAT ": served with batch %d, gpu %d of %d, batch id "
                "%" G_GUINT64_FORMAT ", dropped %d, unserved %d",
                r->id, r->batch_size, r->gpu, k->n_gpus, r->batch_id, r->dropped, r->unserved);
  } else if (r->batch_size != 0 || r->gpu != -1 || r->slo_met || (r->dropped && r->unserved)) {
    fuzz_fail("request %" G_GUINT64_FORMAT ": not served but batch %d, gpu %d, slo_met %d, "
              "dropped %d, unserved %d",
              r->id, r->batch_size, r->gpu, r->slo_met, r->dropped, r->unserved);
  }
  if (r->send_ns < 0)
    fuzz_fail("request %" G_GUINT64_FORMAT ": sent at %" G_GINT64_FORMAT, r->id, r->send_ns);
  if (!r->measured)
    return;
  k->measured[c]++;
  k->completed[c] += r->served;
  k->good[c] += r->slo_met;
  k->dropped[c] += r->dropped;
  k->unserved[c] += r->unserved;
  k->failed[c] += !r->served && !r->dropped && !r->unserved;
}

static void on_batch(const CsBatchEvent *b, void *data)
{
  RunCheck *k = data;
  if (b->size < 1 || b->gpu < 0 || b->gpu >= k->n_gpus || b->model < 0 ||
      b->model >= k->n_models || !(b->dispatch_ns <= b->node_ns && b->node_ns <= b->start_ns &&
                                   b->start_ns <= b->end_ns))
    fuzz_fail("batch %" G_GUINT64_FORMAT ": model %d, gpu %d, size %d, dispatch %" G_GINT64_FORMAT
              " node %" G_GINT64_FORMAT " start %" G_GINT64_FORMAT " end %" G_GINT64_FORMAT,
              b->batch_id, b->model, b->gpu, b->size, b->dispatch_ns, b->node_ns, b->start_ns,
              b->end_ns);
}

static void on_gpu(const CsGpuState *s, void *data)
{
  RunCheck *k = data;
  if (s->gpu < 0 || s->gpu >= k->n_gpus || s->running < 0 || s->queued < 0 ||
      !(s->sm_use >= 0 && s->sm_use <= 1 + 1e-9))
    fuzz_fail("gpu %d at %" G_GINT64_FORMAT ": running %d, queued %d, sm_use %g", s->gpu,
              s->time_ns, s->running, s->queued, s->sm_use);
}

static void check_latency(const char *model, const char *what, const CsLatencyStats *l,
                          int64_t n)
{
  if (n == 0)
    return;
  if (!(l->p50 >= 0 && l->p50 <= l->p90 && l->p90 <= l->p95 && l->p95 <= l->p99 &&
        l->p99 <= l->max && l->mean <= l->max * (1 + 1e-12) + 1e-9))
    fuzz_fail("%s %s latency: p50 %g p90 %g p95 %g p99 %g max %g mean %g over %" G_GINT64_FORMAT,
              model, what, l->p50, l->p90, l->p95, l->p99, l->max, l->mean, n);
}

static void check_results(const RunCheck *k, const CsResults *r)
{
  if (cs_results_n_models(r) != k->n_models || cs_results_n_gpus(r) != k->n_gpus)
    fuzz_fail("results have %d models and %d GPUs, the scenario %d and %d", cs_results_n_models(r),
              cs_results_n_gpus(r), k->n_models, k->n_gpus);
  for (int i = 0; i < k->n_models; i++) {
    const CsModelResult *m = cs_results_model(r, i);
    /* Every request leaves the simulation once, and every measured one in
     * exactly one of completed, dropped, unserved or failed. */
    if (m->generated != k->records[i] || m->measured != k->measured[i] ||
        m->completed != k->completed[i] || m->good != k->good[i] ||
        m->dropped != k->dropped[i] || m->unserved != k->unserved[i] ||
        m->failed != k->failed[i] ||
        m->completed + m->dropped + m->unserved + m->failed != m->measured)
      fuzz_fail("%s: generated %" G_GINT64_FORMAT " (records %" G_GINT64_FORMAT "), measured "
                "%" G_GINT64_FORMAT " (%" G_GINT64_FORMAT "), completed %" G_GINT64_FORMAT
                " (%" G_GINT64_FORMAT "), good %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                "), dropped %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT "), unserved "
                "%" G_GINT64_FORMAT " (%" G_GINT64_FORMAT "), failed %" G_GINT64_FORMAT
                " (%" G_GINT64_FORMAT ")",
                m->model, m->generated, k->records[i], m->measured, k->measured[i],
                m->completed, k->completed[i], m->good, k->good[i], m->dropped, k->dropped[i],
                m->unserved, k->unserved[i], m->failed, k->failed[i]);
    if (m->late > m->completed || m->good_in_window > m->in_window || m->warmup > m->generated ||
        (m->measured > 0 && !(m->bad_rate >= 0 && m->bad_rate <= 1)))
      fuzz_fail("%s: late %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " completed, good in window "
                "%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT ", warm-up %" G_GINT64_FORMAT
                " of %" G_GINT64_FORMAT ", bad rate %g",
                m->model, m->late, m->completed, m->good_in_window, m->in_window, m->warmup,
                m->generated, m->bad_rate);
    check_latency(m->model, "end-to-end", &m->latency, m->completed);
  }
  for (int g = 0; g < k->n_gpus; g++) {
    double f = cs_results_gpu_busy_fraction(r, g);
    if (!(f >= 0 && f <= 1 + 1e-9))
      fuzz_fail("gpu %d busy fraction %g", g, f);
  }
}

/* A run may fail on what only running finds (CS_ERROR_INVALID: too many
 * requests, a time or payload past int64; CS_ERROR_POLICY from the placement,
 * computed again for the run: a MILP solve that hits its time limit this
 * time). The built-in dispatch policies never misuse the engine, and nothing
 * else may fail: that is a finding. */
static gboolean run_error_expected(const GError *error, gboolean invalid_ok, gboolean misuse_ok)
{
  if (error->domain != CS_ERROR)
    return FALSE;
  if (error->code == CS_ERROR_INVALID)
    return invalid_ok;
  return error->code == CS_ERROR_POLICY &&
         (misuse_ok || !g_str_has_prefix(error->message, "dispatch policy \""));
}

/* Runs sc with every check; NULL (after a note) when the run fails as
 * run_error_expected allows (with invalid_ok, an invalid run too; with
 * misuse_ok, a dispatch policy's misuse). */
static CsResults *run_checks(CsScenario *sc, int n_models, int n_dnn, int n_gpus,
                             gboolean invalid_ok, gboolean misuse_ok)
{
  RunCheck k = { .n_models = n_models, .n_dnn = n_dnn, .n_gpus = n_gpus };
  int64_t **counters[] = { &k.records, &k.measured, &k.completed, &k.good,
                           &k.dropped, &k.unserved, &k.failed };
  for (size_t i = 0; i < G_N_ELEMENTS(counters); i++)
    *counters[i] = g_new0(int64_t, MAX(n_models, 1));
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = on_request;
  opt.on_batch = on_batch;
  opt.on_gpu = on_gpu;
  opt.user_data = &k;
  opt.max_requests = FUZZ_MAX_REQUESTS;
  GError *error = NULL;
  CsResults *r = cs_run(sc, &opt, &error);
  if (!r && !run_error_expected(error, invalid_ok, misuse_ok))
    fuzz_fail("validated scenario failed to run: %s", error->message);
  if (r)
    check_results(&k, r);
  else
    fuzz_reject(&error);
  for (size_t i = 0; i < G_N_ELEMENTS(counters); i++)
    g_free(*counters[i]);
  return r;
}

static CsResults *run_with_checks(CsScenario *sc, int n_models, int n_dnn, int n_gpus,
                                  gboolean invalid_ok)
{
  return run_checks(sc, n_models, n_dnn, n_gpus, invalid_ok, FALSE);
}

CsResults *fuzz_run_policy(CsScenario *sc, int n_models, int n_gpus)
{
  return run_checks(sc, n_models, n_models, n_gpus, FALSE, TRUE);
}

gboolean fuzz_run_checked(CsScenario *sc)
{
  GError *error = NULL;
  CsConfig *c = cs_experiment_compile(sc, &error);
  if (!c) {
    fuzz_reject(&error);
    return FALSE;
  }
  int n_models = c->n_clients + c->n_llm, n_dnn = c->n_clients, n_gpus = c->n_gpus;
  cs_config_free(c);
  if (n_gpus > FUZZ_MAX_GPUS_LINEAR) {
    fuzz_note("%d GPUs: too big to run", n_gpus);
    return FALSE;
  }
  CsResults *r = run_with_checks(sc, n_models, n_dnn, n_gpus, TRUE);
  if (!r)
    return FALSE;
  fuzz_note("ran: %d GPUs, %" G_GINT64_FORMAT " requests", n_gpus,
            cs_results_total(r)->generated);
  char *summary = cs_results_to_json(r);
  /* clustersim.h: running the effective scenario reproduces the results'
   * JSON byte for byte, from any directory (its files are absolute). */
  CsScenario *eff = cs_scenario_new_from_json(cs_results_effective_scenario(r), "effective.json",
                                              "/", &error);
  if (!eff)
    fuzz_fail("effective scenario does not parse: %s", error->message);
  CsResults *r2 = run_with_checks(eff, n_models, n_dnn, n_gpus, FALSE);
  char *summary2 = r2 ? cs_results_to_json(r2) : NULL;
  /* Its placement may have met its time limit this time; nothing else may
   * differ. */
  if (summary2 && strcmp(summary, summary2) != 0)
    fuzz_fail("the effective scenario gives other results:\n%s\n---\n%s", summary, summary2);
  g_free(summary);
  g_free(summary2);
  cs_results_free(r);
  cs_results_free(r2);
  cs_scenario_free(eff);
  return TRUE;
}

void fuzz_trace_scenarios(const char *const *templates, const char *path)
{
  for (int i = 0; templates[i]; i++) {
    GError *error = NULL;
    CsScenario *sc = cs_scenario_new_from_json(templates[i], "trace.json", base_dir, &error);
    if (!sc || !cs_scenario_set_string(sc, "trace.file", path, &error))
      fuzz_fail("trace scenario %d: %s", i, error->message);
    fuzz_run_checked(sc);
    cs_scenario_free(sc);
  }
}

FILE *fuzz_null_file(void)
{
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  if (!null)
    abort();
  return null;
}
