/* A run's figures: reading summary.json, the latency CDF per model (from
 * requests.csv) and the stage breakdown; the cluster figures are in
 * figures_cluster.c. See figures.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "figures_run.h"
#include "common/csv.h"

static const char *const stage_labels[CS_N_STAGES] = {
  "router wait (batching)", "transfer to the GPU's node", "queue at the GPU",
  "GPU execution", "result return",
};

int cs_run_summary_model(const RunSummary *r, const char *name)
{
  for (int i = 0; i < r->n_models; i++)
    if (strcmp(r->models[i].name, name) == 0)
      return i;
  return -1;
}

void cs_run_summary_clear(RunSummary *r)
{
  for (int i = 0; i < r->n_models; i++) {
    if (r->models[i].replicas)
      g_array_unref(r->models[i].replicas);
    if (r->models[i].batch_sizes)
      g_array_unref(r->models[i].batch_sizes);
  }
  g_free(r->models);
  g_free(r->gpus);
  g_free(r->path);
  cJSON_Delete(r->doc);
}

/* A number that may be null (an undefined statistic): NaN then. */
static gboolean read_number_or_null(const cJSON *o, const char *key, double *out,
                                    const char *file, const char *path, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNull(v)) {
    *out = NAN;
    return TRUE;
  }
  return cs_json_read_double(o, key, TRUE, -INFINITY, INFINITY, out, file, path, error);
}

static gboolean read_replicas(RunSummary *r, RunModel *m, const cJSON *o, const char *where,
                              GError **error)
{
  const cJSON *reps = cJSON_GetObjectItemCaseSensitive(o, "replicas");
  char *rw = cs_json_path_key(where, "replicas");
  gboolean ok = TRUE;
  m->replicas = g_array_new(FALSE, FALSE, sizeof(RunReplica));
  if (!cJSON_IsArray(reps))
    ok = cs_json_fail(error, r->path, rw, "expected an array of {\"gpu\", \"batch\", \"mps_share\"}");
  int k = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, (ok ? reps : NULL))
  {
    if (!ok)
      break;
    char *xw = cs_json_path_index(rw, k++);
    RunReplica rep = { .share = NAN };
    ok = cs_json_expect_object(x, r->path, xw, error) &&
         cs_json_read_int(x, "gpu", TRUE, 0, r->n_gpus - 1, &rep.gpu, r->path, xw, error) &&
         cs_json_read_int(x, "batch", TRUE, 1, G_MAXINT, &rep.batch, r->path, xw, error) &&
         cs_json_read_double(x, "mps_share", FALSE, 0.0, 1.0, &rep.share, r->path, xw, error);
    if (ok)
      g_array_append_val(m->replicas, rep);
    g_free(xw);
  }
  g_free(rw);
  return ok;
}

static int cmp_batch_size(const void *a, const void *b)
{
  const RunBatchSize *x = a, *y = b;
  return (x->size > y->size) - (x->size < y->size);
}

/* batches: count, and sizes (absent in summaries of older versions: the
 * batch figures are then skipped). The sizes must add up to count: a
 * summary edited by hand or pieced together from two runs is refused rather
 * than drawn wrong. */
static gboolean read_batches(RunSummary *r, RunModel *m, const cJSON *o, const char *where,
                             GError **error)
{
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "batches");
  char *bw = cs_json_path_key(where, "batches");
  char *sw = cs_json_path_key(bw, "sizes");
  gboolean ok = cs_json_expect_object(b, r->path, bw, error) &&
                cs_json_read_int64(b, "count", TRUE, 0, G_MAXINT64, &m->batches, r->path, bw,
                                   error);
  const cJSON *sizes = ok ? cJSON_GetObjectItemCaseSensitive(b, "sizes") : NULL;
  if (ok && sizes) {
    ok = cs_json_expect_object(sizes, r->path, sw, error);
    m->batch_sizes = g_array_new(FALSE, FALSE, sizeof(RunBatchSize));
    int64_t sum = 0, requests = 0;
    const cJSON *each = ok ? sizes : NULL, *x;
    cJSON_ArrayForEach(x, each)
    {
      char *xw = cs_json_path_key(sw, x->string);
      guint64 size = 0;
      RunBatchSize bs = { 0 };
      if (!g_ascii_string_to_unsigned(x->string, 10, 1, G_MAXINT, &size, NULL))
        ok = cs_json_fail(error, r->path, xw, "expected a batch size (an integer >= 1) as key");
      else
        ok = cs_json_value_int64(x, 1, G_MAXINT64, &bs.count, r->path, xw, error);
      bs.size = (int)size;
      /* The requests in these batches are bounded so that quantile ranks
       * (100 x requests) stay within int64; no run comes near. */
      if (ok && bs.count > (CS_BATCH_MAX_REQUESTS - requests) / bs.size)
        ok = cs_json_fail(error, r->path, xw,
                          "more than %" G_GINT64_FORMAT " requests in batches: not a run's count",
                          (int64_t)CS_BATCH_MAX_REQUESTS);
      g_free(xw);
      if (!ok)
        break;
      requests += bs.count * bs.size;
      sum += bs.count;
      g_array_append_val(m->batch_sizes, bs);
    }
    if (ok) {
      g_array_sort(m->batch_sizes, cmp_batch_size);
      for (guint k = 1; ok && k < m->batch_sizes->len; k++)
        if (g_array_index(m->batch_sizes, RunBatchSize, k).size ==
            g_array_index(m->batch_sizes, RunBatchSize, k - 1).size)
          ok = cs_json_fail(error, r->path, sw, "batch size %d given twice",
                            g_array_index(m->batch_sizes, RunBatchSize, k).size);
    }
    if (ok && sum != m->batches)
      ok = cs_json_fail(error, r->path, sw,
                        "the sizes count %" G_GINT64_FORMAT " batches, batches.count %"
                        G_GINT64_FORMAT " (the files of two runs?)",
                        sum, m->batches);
  }
  g_free(sw);
  g_free(bw);
  return ok;
}

static gboolean read_model(RunSummary *r, RunModel *m, const cJSON *o, const char *where,
                           GError **error)
{
  for (int s = 0; s < CS_N_STAGES; s++)
    m->stage_mean[s] = NAN;
  const cJSON *lat = cJSON_GetObjectItemCaseSensitive(o, "latency_ms");
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(o, "stages_ms");
  char *lw = cs_json_path_key(where, "latency_ms");
  char *sw = cs_json_path_key(where, "stages_ms");
  gboolean ok = cs_json_expect_object(o, r->path, where, error) &&
                cs_json_read_string(o, "model", TRUE, &m->name, r->path, where, error) &&
                read_number_or_null(o, "slo_ms", &m->slo_ms, r->path, where, error) &&
                cs_json_expect_object(lat, r->path, lw, error) &&
                read_number_or_null(lat, "mean", &m->latency_mean, r->path, lw, error) &&
                cs_json_expect_object(stages, r->path, sw, error);
  m->has_stage_means = TRUE;
  for (int s = 0; ok && s < CS_N_STAGES; s++) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(stages, cs_stage_name((CsStage)s));
    char *stw = cs_json_path_key(sw, cs_stage_name((CsStage)s));
    ok = cs_json_expect_object(st, r->path, stw, error);
    /* Summaries of versions before the stage means have p50 and p95 only. */
    if (ok && !cJSON_HasObjectItem(st, "mean"))
      m->has_stage_means = FALSE;
    else if (ok)
      ok = read_number_or_null(st, "mean", &m->stage_mean[s], r->path, stw, error);
    g_free(stw);
  }
  ok = ok && read_replicas(r, m, o, where, error) && read_batches(r, m, o, where, error);
  g_free(lw);
  g_free(sw);
  return ok;
}

static gboolean read_gpus(RunSummary *r, const cJSON *gpus, GError **error)
{
  if (!cJSON_IsArray(gpus) || cJSON_GetArraySize(gpus) == 0)
    return cs_json_fail(error, r->path, "gpus", "expected a non-empty array of GPUs");
  r->n_gpus = cJSON_GetArraySize(gpus);
  r->gpus = g_new0(RunGpu, r->n_gpus);
  gboolean ok = TRUE;
  const cJSON *o = gpus->child;
  for (int g = 0; ok && g < r->n_gpus; g++, o = o->next) {
    char *w = cs_json_path_index("gpus", g);
    RunGpu *x = &r->gpus[g];
    int id = -1;
    x->mig_instance = -1;
    x->physical = g;
    ok = cs_json_expect_object(o, r->path, w, error) &&
         cs_json_read_int(o, "id", TRUE, 0, G_MAXINT, &id, r->path, w, error) &&
         cs_json_read_string(o, "gpu_type", TRUE, &x->type, r->path, w, error) &&
         cs_json_read_double(o, "busy_fraction", TRUE, 0.0, 1.0, &x->busy_fraction, r->path, w,
                             error) &&
         read_number_or_null(o, "memory_pct", &x->memory_pct, r->path, w, error) &&
         cs_json_read_int(o, "mig_instance", FALSE, 0, G_MAXINT, &x->mig_instance, r->path, w,
                          error) &&
         cs_json_read_int(o, "physical_gpu", FALSE, 0, G_MAXINT, &x->physical, r->path, w,
                          error);
    if (ok && id != g)
      ok = cs_json_fail(error, r->path, w, "expected id %d (GPUs in order), got %d", g, id);
    g_free(w);
  }
  return ok;
}

/* summary.json: what every run figure needs, checked field by field. */
gboolean cs_run_summary_read(RunSummary *r, GError **error)
{
  r->path = g_build_filename(r->dir, "summary.json", NULL);
  if (!g_file_test(r->path, G_FILE_TEST_EXISTS)) {
    char *sweep = g_build_filename(r->dir, "sweep.json", NULL);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                "%s: absent: %s is not the output directory of a run (clustersim run "
                "SCENARIO --output DIR)%s",
                r->path, r->dir,
                g_file_test(sweep, G_FILE_TEST_EXISTS)
                  ? "; it is a sweep's: clustersim sweep plot draws its figures" : "");
    g_free(sweep);
    return FALSE;
  }
  r->doc = cs_json_load_file(r->path, error);
  if (!r->doc || !cs_json_expect_object(r->doc, r->path, NULL, error))
    return FALSE;
  const cJSON *setup = cJSON_GetObjectItemCaseSensitive(r->doc, "setup");
  const cJSON *cluster = setup ? cJSON_GetObjectItemCaseSensitive(setup, "cluster") : NULL;
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(r->doc, "placement");
  const cJSON *disp = cJSON_GetObjectItemCaseSensitive(r->doc, "dispatch");
  const cJSON *as = cJSON_GetObjectItemCaseSensitive(r->doc, "autoscaling");
  gboolean ok = cs_json_expect_object(setup, r->path, "setup", error) &&
                cs_json_expect_object(cluster, r->path, "setup.cluster", error) &&
                cs_json_read_bool(cluster, "mps", TRUE, &r->mps, r->path, "setup.cluster",
                                  error) &&
                cs_json_expect_object(pl, r->path, "placement", error) &&
                cs_json_read_string(pl, "policy", TRUE, &r->placement, r->path, "placement",
                                    error) &&
                cs_json_expect_object(disp, r->path, "dispatch", error) &&
                cs_json_read_string(disp, "policy", TRUE, &r->dispatch, r->path, "dispatch",
                                    error) &&
                cs_json_expect_object(as, r->path, "autoscaling", error) &&
                cs_json_read_double(as, "timeseries_bin_s", TRUE, 1e-9, INFINITY, &r->bin_s,
                                    r->path, "autoscaling", error) &&
                read_gpus(r, cJSON_GetObjectItemCaseSensitive(r->doc, "gpus"), error);
  /* A long run's CSV series may have wider bins than the scenario asked for
   * (issue 32): the summary's "timeseries" section then states theirs. */
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(r->doc, "timeseries");
  if (ok && ts)
    ok = cs_json_expect_object(ts, r->path, "timeseries", error) &&
         cs_json_read_double(ts, "bin_s", TRUE, 1e-9, INFINITY, &r->bin_s, r->path, "timeseries",
                             error);
  const cJSON *models = cJSON_GetObjectItemCaseSensitive(r->doc, "models");
  if (ok && (!cJSON_IsArray(models) || cJSON_GetArraySize(models) == 0))
    ok = cs_json_fail(error, r->path, "models", "expected a non-empty array of models");
  if (ok) {
    r->n_models = cJSON_GetArraySize(models);
    r->models = g_new0(RunModel, r->n_models);
  }
  const cJSON *mo = ok ? models->child : NULL;
  for (int i = 0; ok && i < r->n_models; i++, mo = mo->next) {
    char *w = cs_json_path_index("models", i);
    ok = read_model(r, &r->models[i], mo, w, error);
    g_free(w);
  }
  /* LLM deployments (docs/llm.md): their models' SLOs are TTFT and TPOT. */
  const cJSON *llm = cJSON_GetObjectItemCaseSensitive(r->doc, "llm");
  if (ok && llm != NULL && !cJSON_IsArray(llm))
    ok = cs_json_fail(error, r->path, "llm", "expected an array of LLM deployments");
  int k = 0;
  const cJSON *lo;
  const cJSON *llm_list = ok ? llm : NULL;
  cJSON_ArrayForEach(lo, llm_list)
  {
    char *w = cs_json_path_index("llm", k++);
    const char *name = NULL, *device = NULL;
    int gpus = 0;
    const cJSON *slo = cJSON_GetObjectItemCaseSensitive(lo, "slo");
    char *sw = cs_json_path_key(w, "slo");
    double ttft = NAN, tpot = NAN;
    ok = cs_json_expect_object(lo, r->path, w, error) &&
         cs_json_read_string(lo, "model", TRUE, &name, r->path, w, error) &&
         cs_json_read_string(lo, "device", TRUE, &device, r->path, w, error) &&
         cs_json_read_int(lo, "gpus", TRUE, 1, G_MAXINT, &gpus, r->path, w, error) &&
         cs_json_expect_object(slo, r->path, sw, error) &&
         read_number_or_null(slo, "ttft_ms", &ttft, r->path, sw, error) &&
         read_number_or_null(slo, "tpot_ms", &tpot, r->path, sw, error);
    int m = ok ? cs_run_summary_model(r, name) : -1;
    if (ok && m < 0)
      ok = cs_json_fail(error, r->path, w, "model \"%s\" is not in \"models\"", name);
    if (ok) {
      r->models[m].llm = TRUE;
      r->models[m].ttft_slo_ms = ttft;
      r->models[m].tpot_slo_ms = tpot;
      r->llm_gpus += gpus;
      if (r->llm_gpu_type == NULL)
        r->llm_gpu_type = device;
    }
    g_free(sw);
    g_free(w);
    if (!ok)
      break;
  }
  return ok;
}

char *cs_run_subtitle(const RunSummary *r)
{
  GString *s = g_string_new(NULL);
  if (strcmp(r->placement, "none") != 0)
    g_string_append_printf(s, "placement %s, ", r->placement);
  g_string_append_printf(s, "dispatch %s, %d %s GPU%s%s", r->dispatch, r->n_gpus,
                         r->gpus[0].type, r->n_gpus == 1 ? "" : "s", r->mps ? " (MPS)" : "");
  if (r->llm_gpus > 0)
    g_string_append_printf(s, "; LLM deployments on %d %s GPU%s of their own", r->llm_gpus,
                           r->llm_gpu_type, r->llm_gpus == 1 ? "" : "s");
  return g_string_free(s, FALSE);
}

static int cmp_int64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* requests.csv: the end-to-end latency (ns) of each served measured request
 * (status ok), per model of the summary, sorted. */
gboolean cs_run_read_latencies(const RunSummary *r, const char *path, GArray **lat,
                               GError **error)
{
  static const char *const expected = "model, measured, status, latency_ns (as clustersim run "
                                      "--requests-csv writes them)";
  CsCsv csv = { 0 };
  gboolean ok = cs_csv_open(&csv, path, error) && cs_csv_read_header(&csv, expected, error);
  int cm = -1, cme = -1, cs = -1, cl = -1;
  size_t ncol = csv.n_fields;
  ok = ok && (cm = cs_csv_require(&csv, "model", expected, error)) >= 0 &&
       (cme = cs_csv_require(&csv, "measured", expected, error)) >= 0 &&
       (cs = cs_csv_require(&csv, "status", expected, error)) >= 0 &&
       (cl = cs_csv_require(&csv, "latency_ns", expected, error)) >= 0;
  int rc = 0;
  while (ok && (rc = cs_csv_next(&csv, error)) == 1) {
    if (!cs_csv_expect_fields(&csv, ncol, error)) {
      ok = FALSE;
      break;
    }
    const char *measured = csv.fields[cme];
    if (strcmp(measured, "0") != 0 && strcmp(measured, "1") != 0) {
      cs_csv_fail(&csv, error, "column measured: expected 0 or 1, got \"%s\"", measured);
      ok = FALSE;
      break;
    }
    int m = cs_run_summary_model(r, csv.fields[cm]);
    if (m < 0) {
      cs_csv_fail(&csv, error, "model \"%s\" is not a model of %s (the files of two runs?)",
                  csv.fields[cm], r->path);
      ok = FALSE;
      break;
    }
    int64_t ns;
    if (!cs_csv_parse_count(&csv, csv.fields[cl], "column latency_ns", &ns, error)) {
      ok = FALSE;
      break;
    }
    if (measured[0] == '1' && strcmp(csv.fields[cs], "ok") == 0)
      g_array_append_val(lat[m], ns);
  }
  if (rc < 0)
    ok = FALSE;
  cs_csv_close(&csv);
  for (int m = 0; ok && m < r->n_models; m++)
    qsort(lat[m]->data, lat[m]->len, sizeof(int64_t), cmp_int64);
  return ok;
}

/* The ranks the CDF shows of n sorted values: all of them up to 2000, else
 * the minimum, every 1/1000 of the way and every 1/10000 above 0.99, so that
 * the tail keeps its detail in a file of about 1100 rows per model. */
GArray *cs_cdf_ranks(int64_t n)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int64_t));
  if (n <= 2000) {
    for (int64_t r = 1; r <= n; r++)
      g_array_append_val(a, r);
    return a;
  }
  int64_t last = 1;
  g_array_append_val(a, last);
  for (int64_t k = 1; k <= 10000; k++) {
    if (k < 9900 && k % 10 != 0)
      continue;
    int64_t r = (k * n + 9999) / 10000; /* nearest rank: ceil(q n), q = k / 10000 */
    if (r > last) {
      g_array_append_val(a, r);
      last = r;
    }
  }
  return a;
}

void cs_append_ms(GString *out, int64_t ns)
{
  g_string_append_printf(out, "%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT, ns / 1000000,
                         ns % 1000000);
}

static void latency_cdf(CsFigureSet *set, const RunSummary *r, GError **error, gboolean *ok)
{
  char *path = g_build_filename(r->dir, "requests.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    cs_figure_set_note(set, "latency_cdf skipped: %s is absent (clustersim run ... --output %s "
                            "--requests-csv writes it)",
                       path, r->dir);
    g_free(path);
    return;
  }
  GArray **lat = g_new(GArray *, r->n_models);
  for (int m = 0; m < r->n_models; m++)
    lat[m] = g_array_new(FALSE, FALSE, sizeof(int64_t));
  *ok = cs_run_read_latencies(r, path, lat, error);
  int64_t lo = G_MAXINT64, hi = 0;
  double slo_hi = 0;
  int shown = 0;
  for (int m = 0; *ok && m < r->n_models; m++) {
    if (lat[m]->len == 0) {
      cs_figure_set_note(set, "latency_cdf: %s has no served measured request, no curve",
                         r->models[m].name);
      continue;
    }
    shown++;
    lo = MIN(lo, g_array_index(lat[m], int64_t, 0));
    hi = MAX(hi, g_array_index(lat[m], int64_t, lat[m]->len - 1));
    if (isfinite(r->models[m].slo_ms) && !r->models[m].llm)
      slo_hi = MAX(slo_hi, r->models[m].slo_ms);
  }
  if (*ok && shown == 0)
    cs_figure_set_note(set, "latency_cdf skipped: no served measured request in %s", path);
  if (!*ok || shown == 0)
    goto out;
  CsFigure *f = cs_figure_set_add(set, "latency_cdf");
  g_string_append_printf(f->dat,
                         "# clustersim run figure data: end-to-end latency CDF per model, from "
                         "requests.csv\n"
                         "# (measured requests with status ok). One block per model, separated "
                         "by two blank lines\n"
                         "# (gnuplot's index 0, 1, ...). rank: position in the sorted latencies "
                         "(1 = fastest);\n"
                         "# fraction = rank / n. Every request when n <= 2000, else the ranks "
                         "ceil(q n) for\n"
                         "# q = 0.001, 0.002, ..., 1 and 0.9901, ..., 0.9999, and the fastest.\n"
                         "# model\tlatency_ms\tfraction\trank\tn\n");
  GString *plot = g_string_new(NULL);
  GString *arrows = g_string_new(NULL);
  int block = 0;
  for (int m = 0; m < r->n_models; m++) {
    GArray *v = lat[m];
    if (v->len == 0)
      continue;
    GArray *ranks = cs_cdf_ranks(v->len);
    g_string_append(f->dat, block ? "\n\n" : "");
    for (guint k = 0; k < ranks->len; k++) {
      int64_t rk = g_array_index(ranks, int64_t, k);
      cs_dat_field(f->dat, r->models[m].name);
      g_string_append_c(f->dat, '\t');
      cs_append_ms(f->dat, g_array_index(v, int64_t, rk - 1));
      g_string_append_printf(f->dat, "\t%.9g\t%" G_GINT64_FORMAT "\t%u\n",
                             (double)rk / v->len, rk, v->len);
    }
    g_array_unref(ranks);
    const RunModel *rm = &r->models[m];
    /* An LLM deployment's SLOs bound TTFT and TPOT, not this latency. */
    char *title = rm->llm ? g_strdup_printf("%s (n = %u, LLM: TTFT SLO %g ms, TPOT SLO %g ms)",
                                            rm->name, v->len, rm->ttft_slo_ms, rm->tpot_slo_ms)
                  : isfinite(rm->slo_ms)
                    ? g_strdup_printf("%s (n = %u, SLO %g ms)", rm->name, v->len, rm->slo_ms)
                    : g_strdup_printf("%s (n = %u)", rm->name, v->len);
    g_string_append_printf(plot, "%s    \"latency_cdf.dat\" index %d using 2:3 with steps lw 2 "
                                 "lc rgb \"%s\" title ",
                           block ? ", \\\n" : "", block, cs_figure_colour(m));
    cs_gp_string(plot, title);
    g_free(title);
    /* An SLO is dashed in its model's colour, in grey when models share it. */
    gboolean shared = FALSE, first = TRUE;
    for (int o = 0; o < r->n_models; o++)
      if (o != m && lat[o]->len > 0 && r->models[o].slo_ms == rm->slo_ms) {
        shared = TRUE;
        first = first && o > m;
      }
    if (isfinite(rm->slo_ms) && first && !rm->llm)
      g_string_append_printf(arrows, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead "
                                     "dt 2 lw 1.5 lc rgb \"%s\"\n",
                             rm->slo_ms, rm->slo_ms, shared ? "#707070" : cs_figure_colour(m));
    block++;
  }
  /* Overloaded models reach seconds while the others answer in
   * milliseconds: then a log scale shows both. */
  double lo_ms = lo / 1e6, hi_ms = MAX(hi / 1e6, slo_hi);
  gboolean logx = lo_ms > 0 && hi_ms / lo_ms > 100;
  char *sub = cs_run_subtitle(r);
  char *title = g_strdup_printf("End-to-end latency per model (served measured requests)\n%s",
                                sub);
  cs_gp_begin(f, "end-to-end latency CDF per model, SLOs dashed");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append_printf(f->gp,
                         " noenhanced\n"
                         "set xlabel \"end-to-end latency (ms%s)\"\n"
                         "set ylabel \"fraction of requests answered within x\"\n"
                         "set yrange [0:1]\nset ytics 0.1\n",
                         logx ? ", log scale" : "");
  if (logx)
    g_string_append_printf(f->gp, "set logscale x\nset xrange [%.17g:%.17g]\n",
                           pow(10.0, floor(log10(lo_ms))), hi_ms * 1.25);
  else
    g_string_append_printf(f->gp, "set xrange [0:%.17g]\n", hi_ms * 1.05);
  g_string_append(f->gp, "set key below horizontal Left reverse height 1\n"
                         "# Each model's SLO, dashed in its colour (grey: several models' "
                         "SLO).\n");
  g_string_append(f->gp, arrows->str);
  cs_gp_outputs_begin(f);
  g_string_append_printf(f->gp, "  plot \\\n%s\n", plot->str);
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
  g_string_free(plot, TRUE);
  g_string_free(arrows, TRUE);
out:
  for (int m = 0; m < r->n_models; m++)
    g_array_unref(lat[m]);
  g_free(lat);
  g_free(path);
}

static void stage_breakdown(CsFigureSet *set, const RunSummary *r)
{
  for (int m = 0; m < r->n_models; m++)
    if (!r->models[m].has_stage_means) {
      cs_figure_set_note(set, "stage_breakdown skipped: %s has no stage means (written by an "
                              "older clustersim; run it again)",
                         r->path);
      return;
    }
  GString *rows = g_string_new(NULL);
  int shown = 0;
  gboolean slo = FALSE;
  for (int m = 0; m < r->n_models; m++) {
    const RunModel *rm = &r->models[m];
    if (!isfinite(rm->latency_mean)) {
      cs_figure_set_note(set, "stage_breakdown: %s completed no measured request, no bar",
                         rm->name);
      continue;
    }
    cs_dat_field(rows, rm->name);
    for (int s = 0; s < CS_N_STAGES; s++)
      g_string_append_printf(rows, "\t%.17g", isfinite(rm->stage_mean[s]) ? rm->stage_mean[s] : 0.0);
    g_string_append_printf(rows, "\t%.17g\t%.17g\n", rm->latency_mean, rm->slo_ms);
    slo = slo || isfinite(rm->slo_ms);
    shown++;
  }
  if (shown == 0) {
    cs_figure_set_note(set, "stage_breakdown skipped: no model completed a measured request");
    g_string_free(rows, TRUE);
    return;
  }
  CsFigure *f = cs_figure_set_add(set, "stage_breakdown");
  g_string_append(f->dat, "# clustersim run figure data: mean time per stage of the measured "
                          "requests that got a result,\n"
                          "# per model, in ms (summary.json's models[].stages_ms.*.mean; the "
                          "stages add up to\n# latency_mean), and the model's SLO.\n# model");
  for (int s = 0; s < CS_N_STAGES; s++)
    g_string_append_printf(f->dat, "\t%s", cs_stage_name((CsStage)s));
  g_string_append_printf(f->dat, "\tlatency_mean\tslo_ms\n%s", rows->str);
  char *sub = cs_run_subtitle(r);
  char *title = g_strdup_printf("Where the time goes: mean latency per stage\n%s", sub);
  cs_gp_begin(f, "mean time per stage and model, stacked; total and SLO marked");
  g_string_append(f->gp, "set title ");
  cs_gp_string(f->gp, title);
  g_string_append_printf(f->gp,
                         " noenhanced\n"
                         "set ylabel \"mean time per request (ms)\"\n"
                         "set yrange [0:*]\n"
                         "set offsets 0, 0, graph 0.1, 0\n"
                         "set style data histograms\n"
                         "set style histogram rowstacked\n"
                         "set style fill solid 0.9 border rgb \"white\"\n"
                         "set boxwidth 0.6\n"
                         "set xtics noenhanced nomirror%s\n"
                         "set grid noxtics\n"
                         "set style textbox opaque noborder margins 1, 1\n"
                         "set xrange [-0.6:%d.6]\n"
                         "set key below horizontal Left reverse height 1\n",
                         shown > 6 ? " rotate by -30" : "", shown - 1);
  cs_gp_outputs_begin(f);
  g_string_append(f->gp, "  plot \\\n");
  for (int s = 0; s < CS_N_STAGES; s++) {
    g_string_append_printf(f->gp, "    \"stage_breakdown.dat\" using %d%s lc rgb \"%s\" title ",
                           s + 2, s == 0 ? ":xtic(1)" : "", cs_figure_colour(s));
    cs_gp_string(f->gp, stage_labels[s]);
    g_string_append(f->gp, ", \\\n");
  }
  /* The SLO first, then the totals on an opaque box: a total near the SLO
   * stays readable. */
  if (slo)
    g_string_append(f->gp, "    \"stage_breakdown.dat\" using ($0 - 0.4):8:(0.8):(0) with "
                           "vectors nohead lw 2 dt 2 lc rgb \"#404040\" title \"SLO\", \\\n");
  g_string_append(f->gp, "    \"stage_breakdown.dat\" using 0:7:(sprintf(\"%.1f ms\", $7)) "
                         "with labels boxed offset 0, 0.8 notitle\n");
  cs_gp_end(f);
  g_free(title);
  g_free(sub);
  g_string_free(rows, TRUE);
}

CsFigureSet *cs_figures_run(const char *dir, GError **error)
{
  RunSummary r = { .dir = dir };
  CsFigureSet *set = NULL;
  if (cs_run_summary_read(&r, error)) {
    set = cs_figure_set_new();
    gboolean ok = TRUE;
    latency_cdf(set, &r, error, &ok);
    if (ok) {
      stage_breakdown(set, &r);
      ok = cs_figure_gpu_busy(set, &r, error);
    }
    if (ok) {
      cs_figure_placement(set, &r);
      cs_figure_batch_sizes(set, &r);
      ok = cs_figure_llm_over_time(set, &r, error);
    }
    if (!ok)
      g_clear_pointer(&set, cs_figure_set_free);
  }
  cs_run_summary_clear(&r);
  return set;
}
