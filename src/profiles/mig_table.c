/* Measured MIG tables and the MIG rule; see mig_table.h. */
#include "profiles/mig_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"

#define MAX_GPCS 64
#define MAX_PROCESSES 256

/* The ratios one query interpolates, built once at load (queries run at
 * every batch start on an instance): for size g and p processes, per batch
 * where both cells are measured, latency(g, b, p) over latency(gpu_gpcs, b,
 * 1) when p = 1, over latency(g, b, 1) when p > 1; batches ascending. */
typedef struct {
  int g, p, n;
  int *batch;
  double *ratio;
} Ratios;

struct CsMigTable {
  int gpu_gpcs;
  GArray *cells;  /* CsMigCell, sorted */
  GPtrArray *sources;
  GArray *ratios; /* Ratios, sorted by g, p */
};

static const Ratios *ratios_of(const CsMigTable *t, int g, int p);

void cs_mig_table_free(CsMigTable *t)
{
  if (!t)
    return;
  g_array_unref(t->cells);
  g_ptr_array_free(t->sources, TRUE);
  if (t->ratios) {
    for (guint i = 0; i < t->ratios->len; i++) {
      Ratios *r = &g_array_index(t->ratios, Ratios, i);
      g_free(r->batch);
      g_free(r->ratio);
    }
    g_array_unref(t->ratios);
  }
  g_free(t);
}

static int cmp_cell(const void *a, const void *b)
{
  const CsMigCell *x = a, *y = b;
  if (x->gpcs != y->gpcs)
    return x->gpcs < y->gpcs ? -1 : 1;
  if (x->batch != y->batch)
    return x->batch < y->batch ? -1 : 1;
  return x->processes < y->processes ? -1 : x->processes > y->processes;
}

static const CsMigCell *find(const CsMigTable *t, int gpcs, int batch, int processes)
{
  CsMigCell key = { .gpcs = gpcs, .batch = batch, .processes = processes };
  return bsearch(&key, t->cells->data, t->cells->len, sizeof key, cmp_cell);
}

static gboolean parse_cell(CsMigTable *t, const cJSON *c, const char *file, const char *path,
                           GError **error)
{
  static const char *const keys[] = { "gpcs", "batch", "processes", "latency_ms",
                                      "throughput_per_process", "source", NULL };
  CsMigCell cell = { 0 };
  double tput = NAN;
  const char *source = NULL;
  if (!cs_json_expect_object(c, file, path, error) ||
      !cs_json_check_keys(c, keys, file, path, error) ||
      !cs_json_read_int(c, "gpcs", TRUE, 1, t->gpu_gpcs, &cell.gpcs, file, path, error) ||
      !cs_json_read_int(c, "batch", TRUE, 1, 1 << 20, &cell.batch, file, path, error) ||
      !cs_json_read_int(c, "processes", TRUE, 1, MAX_PROCESSES, &cell.processes, file, path,
                        error) ||
      !cs_json_read_double(c, "latency_ms", TRUE, 1e-6, 1e9, &cell.stored_ms, file, path,
                           error) ||
      !cs_json_read_double(c, "throughput_per_process", FALSE, 1e-9, 1e12, &tput, file, path,
                           error) ||
      !cs_json_read_string(c, "source", TRUE, &source, file, path, error))
    return FALSE;
  cell.latency_ms = cell.stored_ms;
  if (!isnan(tput)) {
    /* The throughput is the finer measurement: the stored latency is it
     * rounded (to 1 ms in ParvaGPU's files). */
    double derived = cell.batch * 1000.0 / tput;
    double tol = MAX(0.5, 1e-3 * cell.stored_ms) + 1e-9;
    if (fabs(derived - cell.stored_ms) > tol) {
      char *p = cs_json_path_key(path, "throughput_per_process");
      cs_json_fail(error, file, p, "batch x 1000 / throughput = %.6g ms disagrees with "
                   "latency_ms %.6g by more than its rounding (%.3g ms)", derived,
                   cell.stored_ms, tol);
      g_free(p);
      return FALSE;
    }
    cell.latency_ms = derived;
  }
  char *s = g_strdup(source);
  g_ptr_array_add(t->sources, s);
  cell.source = s;
  g_array_append_val(t->cells, cell);
  return TRUE;
}

/* The whole-table checks: duplicates, single-process partners, a batch
 * shared with the whole GPU. */
static gboolean check(CsMigTable *t, const char *file, const char *path, GError **error)
{
  g_array_sort(t->cells, cmp_cell);
  char *cp = cs_json_path_key(path, "cells");
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < t->cells->len; i++) {
    const CsMigCell *c = &g_array_index(t->cells, CsMigCell, i);
    if (i > 0 && cmp_cell(c, c - 1) == 0)
      ok = cs_json_fail(error, file, cp, "the cell (%d GPCs, batch %d, %d processes) is given "
                        "twice", c->gpcs, c->batch, c->processes);
    else if (c->processes > 1 && !find(t, c->gpcs, c->batch, 1))
      ok = cs_json_fail(error, file, cp, "the cell (%d GPCs, batch %d, %d processes) has no "
                        "single-process cell at the same size and batch to compare with",
                        c->gpcs, c->batch, c->processes);
  }
  for (int g = 1; ok && g <= t->gpu_gpcs; g++) {
    gboolean has = FALSE, shared = FALSE;
    for (guint i = 0; i < t->cells->len; i++) {
      const CsMigCell *c = &g_array_index(t->cells, CsMigCell, i);
      if (c->gpcs == g && c->processes == 1) {
        has = TRUE;
        shared |= find(t, t->gpu_gpcs, c->batch, 1) != NULL;
      }
    }
    if (has && !shared)
      ok = cs_json_fail(error, file, cp, "no batch of the %d-GPC instance alone is measured "
                        "on the whole GPU (%d GPCs) alone, so it cannot be related to it", g,
                        t->gpu_gpcs);
  }
  g_free(cp);
  return ok;
}

static void build_ratios(CsMigTable *t)
{
  t->ratios = g_array_new(FALSE, FALSE, sizeof(Ratios));
  guint i = 0;
  while (i < t->cells->len) { /* one (g, p) at a time: cells sorted by g, batch, p */
    const CsMigCell *c0 = &g_array_index(t->cells, CsMigCell, i);
    int g = c0->gpcs;
    guint end = i;
    while (end < t->cells->len && g_array_index(t->cells, CsMigCell, end).gpcs == g)
      end++;
    for (int p = 1; p <= MAX_PROCESSES; p++) {
      Ratios r = { .g = g, .p = p };
      for (guint k = i; k < end; k++) {
        const CsMigCell *c = &g_array_index(t->cells, CsMigCell, k);
        if (c->processes != p)
          continue;
        const CsMigCell *d = p == 1 ? find(t, t->gpu_gpcs, c->batch, 1) : find(t, g, c->batch, 1);
        if (!d)
          continue;
        r.batch = g_renew(int, r.batch, r.n + 1);
        r.ratio = g_renew(double, r.ratio, r.n + 1);
        r.batch[r.n] = c->batch;
        r.ratio[r.n++] = c->latency_ms / d->latency_ms;
      }
      if (r.n > 0)
        g_array_append_val(t->ratios, r);
    }
    i = end;
  }
}

CsMigTable *cs_mig_table_parse(const cJSON *node, const char *file, const char *path,
                               GError **error)
{
  static const char *const keys[] = { "gpu_gpcs", "cells", NULL };
  CsMigTable *t = g_new0(CsMigTable, 1);
  t->cells = g_array_new(FALSE, FALSE, sizeof(CsMigCell));
  t->sources = g_ptr_array_new_with_free_func(g_free);
  const cJSON *cells = cJSON_GetObjectItemCaseSensitive(node, "cells");
  char *cp = cs_json_path_key(path, "cells");
  gboolean ok = cs_json_expect_object(node, file, path, error) &&
                cs_json_check_keys(node, keys, file, path, error) &&
                cs_json_read_int(node, "gpu_gpcs", TRUE, 1, MAX_GPCS, &t->gpu_gpcs, file, path,
                                 error);
  if (ok && !cells)
    ok = cs_json_fail(error, file, cp, "required field is missing");
  else if (ok && (!cJSON_IsArray(cells) || cJSON_GetArraySize(cells) == 0))
    ok = cs_json_fail(error, file, cp, "expected a non-empty array of cells, got %s",
                      cJSON_IsArray(cells) ? "an empty one" : cs_json_type_name(cells));
  /* walked, not indexed: linear in the cells */
  int i = 0;
  for (const cJSON *cell = ok ? cells->child : NULL; ok && cell; cell = cell->next, i++) {
    char *ip = cs_json_path_index(cp, i);
    ok = parse_cell(t, cell, file, ip, error);
    g_free(ip);
  }
  g_free(cp);
  /* Sources were stored by pointer before the sort; the sort moves cells,
   * not strings. */
  if (ok)
    ok = check(t, file, path, error);
  if (ok)
    build_ratios(t);
  if (!ok) {
    cs_mig_table_free(t);
    return NULL;
  }
  return t;
}

int cs_mig_table_gpu_gpcs(const CsMigTable *t)
{
  return t->gpu_gpcs;
}

int cs_mig_table_n_cells(const CsMigTable *t)
{
  return (int)t->cells->len;
}

const CsMigCell *cs_mig_table_cell(const CsMigTable *t, int i)
{
  g_return_val_if_fail(t && i >= 0 && (guint)i < t->cells->len, NULL);
  return &g_array_index(t->cells, CsMigCell, i);
}

int cs_mig_table_size(const CsMigTable *t, double sm_fraction)
{
  if (!t || !(sm_fraction > 0.0))
    return 0;
  double x = sm_fraction * t->gpu_gpcs;
  int g = (int)lround(x);
  if (g < 1 || g > t->gpu_gpcs || fabs(x - g) > CS_MIG_GPC_TOLERANCE)
    return 0;
  return ratios_of(t, g, 1) ? g : 0;
}

static const Ratios *ratios_of(const CsMigTable *t, int g, int p)
{
  for (guint i = 0; i < t->ratios->len; i++) {
    const Ratios *r = &g_array_index(t->ratios, Ratios, i);
    if (r->g == g && r->p == p)
      return r;
  }
  return NULL;
}

/* The ratio of size g and p processes at batch (see Ratios): linear in
 * batch between the measured batches, the nearest outside. NAN when there
 * is none. */
static double ratio_at(const CsMigTable *t, int g, int p, int batch)
{
  const Ratios *r = ratios_of(t, g, p);
  if (!r)
    return NAN;
  if (batch <= r->batch[0])
    return r->ratio[0];
  for (int i = 1; i < r->n; i++)
    if (batch <= r->batch[i])
      return r->ratio[i - 1] + (r->ratio[i] - r->ratio[i - 1]) * (batch - r->batch[i - 1]) /
             (double)(r->batch[i] - r->batch[i - 1]);
  return r->ratio[r->n - 1];
}

double cs_mig_table_iso_ratio(const CsMigTable *t, int gpcs, int batch)
{
  if (!t || gpcs < 1 || gpcs > t->gpu_gpcs)
    return NAN;
  if (gpcs == t->gpu_gpcs)
    return 1.0;
  return ratio_at(t, gpcs, 1, batch);
}

double cs_mig_table_procs_ratio(const CsMigTable *t, int gpcs, int batch, int processes)
{
  if (processes <= 1)
    return 1.0;
  if (!t)
    return NAN;
  /* The process counts measured at this size, ascending (ratios sorted by
   * g, p). */
  int below = 1, above = 0, top = 1, second = 1;
  for (guint i = 0; i < t->ratios->len; i++) {
    const Ratios *q = &g_array_index(t->ratios, Ratios, i);
    if (q->g != gpcs || q->p == 1)
      continue;
    int p = q->p;
    second = top;
    top = p;
    if (p <= processes)
      below = p;
    else if (!above)
      above = p;
  }
  if (top == 1)
    return NAN;
  double r;
  if (below == processes) {
    r = ratio_at(t, gpcs, processes, batch);
  } else if (above) {
    double rb = below == 1 ? 1.0 : ratio_at(t, gpcs, below, batch);
    double ra = ratio_at(t, gpcs, above, batch);
    r = rb + (ra - rb) * (processes - below) / (double)(above - below);
  } else {
    double rt = ratio_at(t, gpcs, top, batch);
    double rs = second == 1 ? 1.0 : ratio_at(t, gpcs, second, batch);
    r = rt + (rt - rs) * (processes - top) / (double)(top - second);
  }
  return MAX(r, 1.0);
}

/* L at a real batch x (see cs_mig_rule_ratio_curve). */
static double curve_at(const double *b, const double *lat, int n, double slope, double x)
{
  if (n == 0)
    return slope * x;
  if (x <= b[0]) {
    double v = lat[0] - slope * (b[0] - x);
    return MAX(v, lat[0] * x / b[0]);
  }
  for (int i = 1; i < n; i++)
    if (x <= b[i])
      return lat[i - 1] + (lat[i] - lat[i - 1]) * (x - b[i - 1]) / (b[i] - b[i - 1]);
  return lat[n - 1] + slope * (x - b[n - 1]);
}

double cs_mig_rule_ratio_curve(const double *batch, const double *latency, int n, double slope,
                               int b, double f, double kappa)
{
  if (!(f < 1.0))
    return 1.0;
  if (n == 0 && !(slope > 0.0))
    return NAN;
  double scale = pow(f, -kappa);
  return curve_at(batch, latency, n, slope, b * scale) / curve_at(batch, latency, n, slope, b);
}

/* L of the profile at a real batch x: curve_at over its points, without
 * copying them (this runs at every batch start on an instance). */
static double profile_at(const CsModelProfile *p, double slope, double x)
{
  const CsBatchPoint *pt = p->points;
  int n = p->n_points;
  if (x <= pt[0].batch) {
    double l0 = (double)pt[0].latency_ns;
    return MAX(l0 - slope * (pt[0].batch - x), l0 * x / pt[0].batch);
  }
  for (int i = 1; i < n; i++)
    if (x <= pt[i].batch)
      return (double)pt[i - 1].latency_ns + (double)(pt[i].latency_ns - pt[i - 1].latency_ns) *
             (x - pt[i - 1].batch) / (double)(pt[i].batch - pt[i - 1].batch);
  return (double)pt[n - 1].latency_ns + slope * (x - pt[n - 1].batch);
}

double cs_mig_rule_ratio(const CsModelProfile *p, int batch, double f, double kappa)
{
  g_return_val_if_fail(p != NULL && batch >= 1, NAN);
  if (!(f < 1.0))
    return 1.0;
  double x = batch * pow(f, -kappa);
  if (p->n_points == 0)
    return (p->alpha_ns * x + p->beta_ns) / (p->alpha_ns * batch + p->beta_ns);
  double slope = isfinite(p->alpha_ns) ? MAX(p->alpha_ns, 0.0) : 0.0;
  return profile_at(p, slope, x) / profile_at(p, slope, batch);
}

double cs_mig_rule_procs_ratio_curve(const double *batch, const double *latency, int n,
                                     double slope, int b, double f, double kappa, int p)
{
  if (p <= 1)
    return 1.0;
  if (n == 0 && !(slope > 0.0))
    return NAN;
  double x = b * (f < 1.0 ? pow(f, -kappa) : 1.0);
  return curve_at(batch, latency, n, slope, p * x) / curve_at(batch, latency, n, slope, x);
}

double cs_mig_rule_procs_ratio(const CsModelProfile *prof, int batch, double f, double kappa,
                               int p)
{
  g_return_val_if_fail(prof != NULL && batch >= 1, NAN);
  if (p <= 1)
    return 1.0;
  double x = batch * (f < 1.0 ? pow(f, -kappa) : 1.0);
  if (prof->n_points == 0)
    return (prof->alpha_ns * p * x + prof->beta_ns) / (prof->alpha_ns * x + prof->beta_ns);
  double slope = isfinite(prof->alpha_ns) ? MAX(prof->alpha_ns, 0.0) : 0.0;
  return profile_at(prof, slope, p * x) / profile_at(prof, slope, x);
}
