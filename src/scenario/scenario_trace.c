/* Trace-driven clients; see scenario_trace.h and docs/scenario.md.
 *
 * Functions of the trace are numbered in order of first appearance and mapped
 * to the n trace clients: "stripe" (function i -> client i mod n), "blocks"
 * (contiguous runs of ceil(F/n)) or "explicit" (a list of function -> model).
 * Azure LLM rows have no function: each row counts as its own function, so
 * "stripe" deals rows round-robin.
 *
 * Arrivals: "exact" replays the trace's timestamps (MAF 2021, Azure LLM);
 * "poisson" and "gamma" (with "cv") generate requests within each interval of
 * interval_s at rate count x rate_scale / interval, as AlpaServe does; empty
 * intervals produce nothing. time_scale stretches trace time into simulated
 * time (0.5 replays twice as fast). The readers stream: memory grows with the
 * number of functions, and with the rows that fall in the window: one entry
 * per timestamp for exact replay, one per interval that holds requests
 * otherwise (never one per interval of the span: two rows 50 days apart in
 * intervals of 1 ms are two entries, not 4 * 10^9). */
#include "scenario_trace.h"

#include <math.h>
#include <string.h>

#include "common/checked.h"
#include "common/json_input.h"
#include "workloads/trace.h"

typedef enum { MAP_STRIPE, MAP_BLOCKS, MAP_EXPLICIT } Mapping;
typedef enum { ARR_EXACT, ARR_POISSON, ARR_GAMMA } Arrivals;

typedef struct {
  CsTraceFormat format;
  Mapping mapping;
  GHashTable *explicit_map; /* function key -> client slot (GINT_TO_POINTER(j + 1)) */
  GHashTable *explicit_seen;
  double start_s, duration_s; /* duration < 0: to the end of the trace */
  double time_scale, rate_scale, interval_s, cv;
  /* rate_scale as a profile over trace time (an array): n_points points
   * (seconds from the window's start, factor), NULL for a number. */
  double *profile_at, *profile_scale;
  int n_points;
  Arrivals arrivals;
  gboolean allow_unsorted;
  int n;                       /* trace clients */
  GHashTable *function_index;  /* key -> index + 1, first appearance order */
  int64_t n_functions;
  GArray **times;              /* per client: int64 trace-ns (exact) */
  GArray **counts;             /* per client: IntervalCount, the intervals with requests */
  gboolean *unsorted;          /* per client: counts not in ascending interval order */
  int64_t overflow_k;          /* >= 0: an interval whose count overflowed int64 */
} Ctx;

typedef struct {
  int64_t k; /* interval number from the window's start */
  int64_t n; /* requests in it */
} IntervalCount;

/* Adds n requests to interval k of client j. Rows mostly come in time order,
 * so the last entry is the one to add to; otherwise a new entry is appended
 * and the entries are sorted and merged once reading is done. A count that
 * overflows int64 is remembered (overflow_k) and reported after reading. */
static void add_count(Ctx *x, int j, int64_t k, int64_t n)
{
  GArray *a = x->counts[j];
  if (a->len > 0) {
    IntervalCount *last = &g_array_index(a, IntervalCount, a->len - 1);
    if (last->k == k) {
      if (!cs_i64_add(last->n, n, &last->n))
        x->overflow_k = k;
      return;
    }
    if (k < last->k)
      x->unsorted[j] = TRUE;
  }
  IntervalCount e = { .k = k, .n = n };
  g_array_append_val(a, e);
}

static int cmp_interval(gconstpointer a, gconstpointer b)
{
  int64_t x = ((const IntervalCount *)a)->k, y = ((const IntervalCount *)b)->k;
  return (x > y) - (x < y);
}

/* Puts client j's counts in ascending interval order with one entry per
 * interval, drops intervals at or past n_int, and stores the total in *total.
 * Returns FALSE when a sum overflows int64 (then x->overflow_k is set). */
static gboolean finish_counts(Ctx *x, int j, int64_t n_int, int64_t *total)
{
  GArray *a = x->counts[j];
  if (x->unsorted[j])
    g_array_sort(a, cmp_interval);
  guint out = 0;
  *total = 0;
  for (guint i = 0; i < a->len; i++) {
    IntervalCount e = g_array_index(a, IntervalCount, i);
    if (e.k >= n_int || e.n == 0)
      continue;
    IntervalCount *prev = out > 0 ? &g_array_index(a, IntervalCount, out - 1) : NULL;
    if (prev && prev->k == e.k) {
      if (!cs_i64_add(prev->n, e.n, &prev->n)) {
        x->overflow_k = e.k;
        return FALSE;
      }
    } else {
      g_array_index(a, IntervalCount, out++) = e;
    }
    if (!cs_i64_add(*total, e.n, total)) {
      x->overflow_k = e.k;
      return FALSE;
    }
  }
  g_array_set_size(a, out);
  return x->overflow_k < 0;
}

static int client_of(Ctx *x, const char *key, int64_t total_functions_hint)
{
  if (x->mapping == MAP_EXPLICIT) {
    gpointer v = g_hash_table_lookup(x->explicit_map, key);
    if (v)
      g_hash_table_add(x->explicit_seen, g_strdup(key));
    return v ? GPOINTER_TO_INT(v) - 1 : -1;
  }
  int64_t i;
  if (key) {
    gpointer v = g_hash_table_lookup(x->function_index, key);
    if (!v) {
      i = x->n_functions++;
      g_hash_table_insert(x->function_index, g_strdup(key), GINT_TO_POINTER((int)(i + 1)));
    } else {
      i = GPOINTER_TO_INT(v) - 1;
    }
  } else {
    i = x->n_functions++; /* a row without function identity */
  }
  if (x->mapping == MAP_STRIPE)
    return (int)(i % x->n);
  int64_t block = (total_functions_hint + x->n - 1) / x->n;
  return (int)MIN(i / MAX(block, 1), x->n - 1);
}

static void add_time(Ctx *x, int j, int64_t t_ns)
{
  int64_t w0 = llround(x->start_s * 1e9);
  if (t_ns < w0 || (x->duration_s >= 0 && t_ns >= w0 + llround(x->duration_s * 1e9)))
    return;
  if (x->arrivals == ARR_EXACT) {
    int64_t rel = t_ns - w0;
    g_array_append_val(x->times[j], rel);
  } else {
    add_count(x, j, (t_ns - w0) / llround(x->interval_s * 1e9), 1);
  }
}

static gboolean read_maf2019(Ctx *x, const char *path, GError **error)
{
  /* Blocks need the number of functions first: one row per function. */
  int64_t rows = 0;
  CsMaf2019Record rec;
  int rc;
  if (x->mapping == MAP_BLOCKS) {
    CsMaf2019Reader *r = cs_maf2019_reader_open(path, NULL, NULL, error);
    if (!r)
      return FALSE;
    while ((rc = cs_maf2019_reader_next(r, &rec, error)) == 1)
      rows++;
    cs_maf2019_reader_close(r);
    if (rc < 0)
      return FALSE;
  }
  CsMaf2019Reader *r = cs_maf2019_reader_open(path, NULL, NULL, error);
  if (!r)
    return FALSE;
  while ((rc = cs_maf2019_reader_next(r, &rec, error)) == 1) {
    int j = client_of(x, rec.function, rows);
    if (j < 0)
      continue;
    /* Minute m of the file covers [m*60, (m+1)*60) s after the file's first minute. */
    for (int m = 0; m < rec.n_minutes; m++) {
      int64_t c = rec.counts[m];
      if (c == 0)
        continue;
      int64_t t0 = (int64_t)m * 60 * 1000000000LL;
      int64_t w0 = llround(x->start_s * 1e9);
      if (t0 < w0 || (x->duration_s >= 0 && t0 >= w0 + llround(x->duration_s * 1e9)))
        continue;
      add_count(x, j, (t0 - w0) / llround(x->interval_s * 1e9), c);
    }
  }
  int n_minutes = cs_maf2019_reader_n_minutes(r);
  cs_maf2019_reader_close(r);
  if (rc < 0)
    return FALSE;
  if (x->duration_s < 0)
    x->duration_s = n_minutes * 60.0 - x->start_s;
  return TRUE;
}

/* Timestamped formats: MAF 2021 (function = app/func) and Azure LLM (none). */
static gboolean read_timestamped(Ctx *x, const char *path, GError **error)
{
  CsTraceFlags flags = x->allow_unsorted ? CS_TRACE_ALLOW_UNSORTED : CS_TRACE_FLAGS_NONE;
  int64_t rows = 0, last_ns = 0;
  int rc;
  gboolean maf = x->format == CS_TRACE_FORMAT_MAF2021;
  for (int pass = x->mapping == MAP_BLOCKS ? 0 : 1; pass < 2; pass++) {
    /* With blocks, a first pass counts the functions. */
    GHashTable *seen = pass == 0 ? g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)
                                 : NULL;
    if (maf) {
      CsMaf2021Reader *r = cs_maf2021_reader_open(path, flags, error);
      if (!r) {
        /* The counting pass of "blocks" owns seen (it leaked here when a
         * format given explicitly did not match the file's header). */
        if (seen)
          g_hash_table_destroy(seen);
        return FALSE;
      }
      CsMaf2021Record rec;
      while ((rc = cs_maf2021_reader_next(r, &rec, error)) == 1) {
        char *key = g_strconcat(rec.app, "/", rec.func, NULL);
        if (pass == 0) {
          g_hash_table_add(seen, key);
          continue;
        }
        int j = client_of(x, key, rows);
        g_free(key);
        if (j >= 0)
          add_time(x, j, rec.arrival_ns);
        last_ns = MAX(last_ns, rec.arrival_ns);
      }
      cs_maf2021_reader_close(r);
    } else {
      CsAzureLlmReader *r = cs_azure_llm_reader_open(path, flags, error);
      if (!r) {
        if (seen)
          g_hash_table_destroy(seen);
        return FALSE;
      }
      CsAzureLlmRecord rec;
      while ((rc = cs_azure_llm_reader_next(r, &rec, error)) == 1) {
        if (pass == 0) {
          rows++;
          continue;
        }
        int j = client_of(x, NULL, rows);
        add_time(x, j, rec.time_ns);
        last_ns = MAX(last_ns, rec.time_ns);
      }
      cs_azure_llm_reader_close(r);
    }
    if (seen) {
      rows = g_hash_table_size(seen);
      g_hash_table_destroy(seen);
    }
    if (rc < 0)
      return FALSE;
  }
  if (x->duration_s < 0)
    x->duration_s = last_ns * 1e-9 - x->start_s + 1e-9; /* include the last request */
  return TRUE;
}

static int cmp_i64(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* "rate_scale": a number, or a profile over trace time: points {"at_s",
 * "scale"} with at_s from 0 (the window's start) strictly increasing and
 * scale finite, >= 0, interpolated linearly and held after the last point. */
static gboolean read_rate_scale(const cJSON *obj, const char *file, Ctx *x, double **own_at,
                                double **own_scale, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "rate_scale");
  if (!cJSON_IsArray(v))
    return cs_json_read_double(obj, "rate_scale", FALSE, 1e-6, 1e6, &x->rate_scale, file, "trace",
                               error);
  int n = cJSON_GetArraySize(v);
  if (n == 0)
    return cs_json_fail(error, file, "trace.rate_scale",
                        "expected a number or a non-empty array of {\"at_s\": t, \"scale\": f}");
  static const char *const keys[] = { "at_s", "scale", NULL };
  /* Owned by the caller's own_at / own_scale, freed on every return. */
  x->profile_at = *own_at = g_new(double, n);
  x->profile_scale = *own_scale = g_new(double, n);
  x->n_points = n;
  int i = 0;
  const cJSON *pt;
  cJSON_ArrayForEach(pt, v)
  {
    char *pp = g_strdup_printf("trace.rate_scale[%d]", i);
    gboolean ok = cs_json_expect_object(pt, file, pp, error) &&
                  cs_json_check_keys(pt, keys, file, pp, error) &&
                  cs_json_read_double(pt, "at_s", TRUE, 0, 1e9, &x->profile_at[i], file, pp,
                                      error) &&
                  cs_json_read_double(pt, "scale", TRUE, 0, 1e6, &x->profile_scale[i], file, pp,
                                      error);
    if (ok && i == 0 && x->profile_at[0] != 0)
      ok = cs_json_fail(error, file, pp, "at_s: the first point must be at 0 (the window's "
                        "start), got %g", x->profile_at[0]);
    if (ok && i > 0 && !(x->profile_at[i] > x->profile_at[i - 1]))
      ok = cs_json_fail(error, file, pp, "at_s: expected a time after the previous point's %g "
                        "s, got %g", x->profile_at[i - 1], x->profile_at[i]);
    g_free(pp);
    if (!ok)
      return FALSE;
    i++;
  }
  return TRUE;
}


/* A rate profile longer than this is summarised in the summary's setup
 * (profile_digest): listing 10^6 points there printed them twice more (the
 * effective scenario, scenario.json, lists them all). */
#define CS_SETUP_PROFILE_POINTS 100

/* {"points", "first_at_s", "last_at_s", "min_scale", "max_scale",
 * "sha256"} of the profile; the digest is of the points as written in
 * order, each (at_s, scale) as two IEEE-754 doubles in little-endian byte
 * order, so that two runs' setups tell whether their profiles were equal. */
static cJSON *profile_digest(const Ctx *x)
{
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  double lo = x->profile_scale[0], hi = x->profile_scale[0];
  for (int i = 0; i < x->n_points; i++) {
    double v[2] = { x->profile_at[i], x->profile_scale[i] };
    for (int k = 0; k < 2; k++) {
      uint64_t bits;
      memcpy(&bits, &v[k], sizeof bits);
      guchar le[8];
      for (int b = 0; b < 8; b++)
        le[b] = (guchar)(bits >> (8 * b));
      g_checksum_update(sum, le, sizeof le);
    }
    lo = MIN(lo, x->profile_scale[i]);
    hi = MAX(hi, x->profile_scale[i]);
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "points", x->n_points);
  cJSON_AddNumberToObject(o, "first_at_s", x->profile_at[0]);
  cJSON_AddNumberToObject(o, "last_at_s", x->profile_at[x->n_points - 1]);
  cJSON_AddNumberToObject(o, "min_scale", lo);
  cJSON_AddNumberToObject(o, "max_scale", hi);
  cJSON_AddStringToObject(o, "sha256", g_checksum_get_string(sum));
  g_checksum_free(sum);
  return o;
}

/* The profile's factor at t seconds of trace time from the window's start.
 * The point before t by bisection: a walk from the first point for every
 * interval would take intervals x points. */
static double profile_at(const Ctx *x, double t)
{
  int i = 0, hi = x->n_points - 1; /* profile_at[i] <= t (at_s starts at 0), i <= hi */
  while (i < hi) {
    int mid = i + (hi - i + 1) / 2;
    if (x->profile_at[mid] <= t)
      i = mid;
    else
      hi = mid - 1;
  }
  if (i + 1 == x->n_points)
    return x->profile_scale[i];
  double a = x->profile_at[i], b = x->profile_at[i + 1];
  return x->profile_scale[i] + (x->profile_scale[i + 1] - x->profile_scale[i]) * (t - a) / (b - a);
}

gboolean cs_trace_clients_compile(const cJSON *obj, const char *file, const char *path,
                                  const char *written_name, CsClientConfig *clients,
                                  const int *idx, int n, char **desc, GError **error)
{
  static const char *const keys[] = { "file",       "format",     "mapping",  "start_s",
                                      "duration_s", "time_scale", "rate_scale", "arrivals",
                                      "cv",         "interval_s", "allow_unsorted", NULL };
  const char *jp = "trace";
  const char *format_name = "auto", *arrivals = NULL;
  Ctx x = { .n = n, .start_s = 0, .duration_s = -1, .time_scale = 1, .rate_scale = 1,
            .interval_s = 60, .cv = -1, .overflow_k = -1 };
  g_autofree double *profile_at_s = NULL;
  g_autofree double *profile_scale = NULL;
  if (!cs_json_check_keys(obj, keys, file, jp, error) ||
      !cs_json_read_string(obj, "format", FALSE, &format_name, file, jp, error) ||
      !cs_json_read_double(obj, "start_s", FALSE, 0, 1e9, &x.start_s, file, jp, error) ||
      !cs_json_read_double(obj, "duration_s", FALSE, 1e-6, 1e9, &x.duration_s, file, jp, error) ||
      !cs_json_read_double(obj, "time_scale", FALSE, 1e-6, 1e6, &x.time_scale, file, jp, error) ||
      !read_rate_scale(obj, file, &x, &profile_at_s, &profile_scale, error) ||
      !cs_json_read_double(obj, "interval_s", FALSE, 1e-3, 1e6, &x.interval_s, file, jp, error) ||
      !cs_json_read_double(obj, "cv", FALSE, 1e-3, 1e3, &x.cv, file, jp, error) ||
      !cs_json_read_string(obj, "arrivals", FALSE, &arrivals, file, jp, error) ||
      !cs_json_read_bool(obj, "allow_unsorted", FALSE, &x.allow_unsorted, file, jp, error))
    return FALSE;
  GError *ferr = NULL;
  if (!cs_trace_format_from_name(format_name, &x.format, &ferr)) {
    cs_json_fail(error, file, "trace.format", "%s", ferr->message);
    g_error_free(ferr);
    return FALSE;
  }
  if (x.format == CS_TRACE_FORMAT_AUTO) {
    x.format = cs_trace_detect_format(path, error);
    if (x.format == CS_TRACE_FORMAT_AUTO)
      return FALSE;
  }
  gboolean timestamped = x.format != CS_TRACE_FORMAT_MAF2019;
  if (!arrivals)
    x.arrivals = timestamped ? ARR_EXACT : ARR_POISSON;
  else if (strcmp(arrivals, "exact") == 0)
    x.arrivals = ARR_EXACT;
  else if (strcmp(arrivals, "poisson") == 0)
    x.arrivals = ARR_POISSON;
  else if (strcmp(arrivals, "gamma") == 0)
    x.arrivals = ARR_GAMMA;
  else
    return cs_json_fail(error, file, "trace.arrivals",
                        "expected \"exact\", \"poisson\" or \"gamma\", got \"%s\"", arrivals);
  if (x.arrivals == ARR_EXACT && !timestamped)
    return cs_json_fail(error, file, "trace.arrivals",
                        "\"exact\" needs timestamps; MAF 2019 has per-minute counts only: use "
                        "\"poisson\" or \"gamma\"");
  if ((x.arrivals == ARR_GAMMA) != (x.cv > 0))
    return cs_json_fail(error, file, "trace",
                        "\"cv\" is required with \"arrivals\": \"gamma\" and only then");
  if (x.arrivals == ARR_EXACT && (x.rate_scale != 1.0 || x.n_points > 0))
    return cs_json_fail(error, file, "trace.rate_scale",
                        "exact replay keeps the trace's timestamps and cannot scale the rate; "
                        "use \"time_scale\" or \"poisson\"/\"gamma\" arrivals");
  if (!timestamped) {
    /* Per-minute counts: windows must fall on minute boundaries. */
    double vals[3] = { x.start_s, x.duration_s, x.interval_s };
    const char *names[3] = { "trace.start_s", "trace.duration_s", "trace.interval_s" };
    for (int i = 0; i < 3; i++)
      if (vals[i] >= 0 && fmod(vals[i], 60.0) != 0.0)
        return cs_json_fail(error, file, names[i],
                            "MAF 2019 counts invocations per minute: expected a multiple of 60 "
                            "s, got %g",
                            vals[i]);
  }
  /* Mapping */
  const cJSON *map = cJSON_GetObjectItemCaseSensitive(obj, "mapping");
  x.function_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  x.explicit_map = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  x.explicit_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
  if (!map || (cJSON_IsString(map) && strcmp(map->valuestring, "stripe") == 0)) {
    x.mapping = MAP_STRIPE;
  } else if (cJSON_IsString(map) && strcmp(map->valuestring, "blocks") == 0) {
    x.mapping = MAP_BLOCKS;
    if (x.format == CS_TRACE_FORMAT_AZURE_LLM)
      ok = cs_json_fail(error, file, "trace.mapping",
                        "Azure LLM rows have no function to group into blocks: use \"stripe\"");
  } else if (cJSON_IsArray(map)) {
    x.mapping = MAP_EXPLICIT;
    if (x.format == CS_TRACE_FORMAT_AZURE_LLM)
      ok = cs_json_fail(error, file, "trace.mapping",
                        "Azure LLM rows have no function to map explicitly: use \"stripe\"");
    int i = 0;
    const cJSON *item;
    /* Every entry is read: their problems are listed together. */
    CsErrorList *el = cs_error_list_new();
    cJSON_ArrayForEach(item, map)
    {
      static const char *const mkeys[] = { "function", "model", NULL };
      char *ip = cs_json_path_index("trace.mapping", i++);
      const char *fn = NULL, *model = NULL;
      gboolean item_ok = cs_json_expect_object(item, file, ip, cs_error_list_slot(el)) &&
                         cs_json_check_keys(item, mkeys, file, ip, cs_error_list_slot(el));
      if (item_ok) {
        item_ok &= cs_json_read_string(item, "function", TRUE, &fn, file, ip,
                                       cs_error_list_slot(el));
        item_ok &= cs_json_read_string(item, "model", TRUE, &model, file, ip,
                                       cs_error_list_slot(el));
      }
      int slot = -1;
      for (int j = 0; item_ok && j < n; j++)
        if (strcmp(clients[idx[j]].model, model) == 0)
          slot = j;
      if (item_ok && slot < 0)
        item_ok = cs_json_fail(cs_error_list_slot(el), file, ip,
                               "model \"%s\" has no client with \"arrival\": \"trace\"",
                               model);
      if (item_ok && g_hash_table_contains(x.explicit_map, fn))
        item_ok = cs_json_fail(cs_error_list_slot(el), file, ip,
                               "function \"%s\" is mapped twice", fn);
      if (item_ok)
        g_hash_table_insert(x.explicit_map, g_strdup(fn), GINT_TO_POINTER(slot + 1));
      g_free(ip);
    }
    ok = cs_error_list_finish(el, file, "trace.mapping", ok ? error : NULL) && ok;
  } else {
    ok = cs_json_fail(error, file, "trace.mapping",
                      "expected \"stripe\", \"blocks\" or a list of {\"function\", \"model\"}, "
                      "got %s",
                      cs_json_type_name(map));
  }
  x.times = g_new0(GArray *, n);
  x.counts = g_new0(GArray *, n);
  x.unsorted = g_new0(gboolean, n);
  for (int j = 0; j < n; j++) {
    x.times[j] = g_array_new(FALSE, FALSE, sizeof(int64_t));
    x.counts[j] = g_array_new(FALSE, FALSE, sizeof(IntervalCount));
  }
  if (ok)
    ok = timestamped ? read_timestamped(&x, path, error) : read_maf2019(&x, path, error);
  if (ok && x.mapping == MAP_EXPLICIT) {
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, x.explicit_map);
    /* Every missing function, in list order. */
    CsErrorList *el = cs_error_list_new();
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, map)
    {
      const char *fn = cJSON_GetObjectItemCaseSensitive(item, "function")->valuestring;
      if (!g_hash_table_contains(x.explicit_seen, fn)) {
        char *ip = cs_json_path_index("trace.mapping", i);
        cs_json_fail(cs_error_list_slot(el), file, ip, "function \"%s\" does not occur in %s",
                     fn, written_name);
        g_free(ip);
      }
      i++;
    }
    ok = cs_error_list_finish(el, file, "trace.mapping", error);
    (void)key;
  }
  if (ok && !(x.duration_s > 0))
    ok = cs_json_fail(error, file, "trace.start_s",
                      "the window starts at or after the end of the trace");
  /* The window and an interval in simulated time must be representable:
   * duration_s and time_scale are each in range, their product need not be. */
  const double horizon_s = CS_SCENARIO_HORIZON_NS * 1e-9;
  if (ok && !(x.duration_s * x.time_scale <= horizon_s))
    ok = cs_json_fail(error, file, cJSON_GetObjectItemCaseSensitive(obj, "duration_s") ?
                                     "trace.duration_s" : "trace",
                      "the window lasts %g s of simulated time (duration_s %g s x time_scale "
                      "%g): expected at most %g s, the limit of simulated time",
                      x.duration_s * x.time_scale, x.duration_s, x.time_scale, horizon_s);
  if (ok && x.arrivals != ARR_EXACT && !(x.interval_s * x.time_scale <= horizon_s))
    ok = cs_json_fail(error, file, "trace.interval_s",
                      "an interval lasts %g s of simulated time (interval_s %g s x time_scale "
                      "%g): expected at most %g s, the limit of simulated time",
                      x.interval_s * x.time_scale, x.interval_s, x.time_scale, horizon_s);
  char *sha = NULL;
  if (ok) {
    sha = cs_trace_file_sha256(path, error);
    ok = sha != NULL;
  }
  for (int j = 0; ok && j < n; j++) {
    CsClientConfig *cc = &clients[idx[j]];
    cc->window_ns = llround(x.duration_s * x.time_scale * 1e9);
    cc->duration_ns = cc->window_ns - cc->warmup_ns;
    if (cc->duration_ns <= 0) {
      char *cp = cs_json_path_index("clients", idx[j]);
      ok = cs_json_fail(error, file, cp, "warmup_s is as long as the trace window (%g s)",
                        cc->window_ns * 1e-9);
      g_free(cp);
      break;
    }
    if (x.arrivals == ARR_EXACT) {
      GArray *t = x.times[j];
      if (x.allow_unsorted)
        g_array_sort(t, cmp_i64);
      for (guint i = 0; i < t->len; i++)
        g_array_index(t, int64_t, i) = llround(g_array_index(t, int64_t, i) * x.time_scale);
      cc->arrival = CS_ARRIVAL_TIMES;
      cc->n_times = t->len;
      cc->times_ns = (int64_t *)g_array_free(t, FALSE);
      x.times[j] = NULL;
      cc->rate_rps = cc->n_times / (cc->window_ns * 1e-9);
    } else {
      int64_t n_int = (int64_t)ceil(x.duration_s / x.interval_s - 1e-9);
      int64_t total = 0;
      if (!finish_counts(&x, j, n_int, &total)) {
        ok = cs_json_fail(error, file, "trace.file",
                          "%s: the requests of interval %" G_GINT64_FORMAT " (from %g s) "
                          "overflow a 64-bit count",
                          written_name, x.overflow_k, x.start_s + x.overflow_k * x.interval_s);
        break;
      }
      GArray *c = x.counts[j];
      cc->arrival = CS_ARRIVAL_PIECEWISE;
      cc->interval_ns = llround(x.interval_s * x.time_scale * 1e9);
      cc->count_scale = x.rate_scale;
      /* A profile: the factor of interval k at its midpoint (k + 1/2) x
       * interval_s of trace time, so an interval straddling a point gets
       * the profile's mean over it when the profile is linear there. */
      double scaled_total = 0.0;
      if (x.n_points > 0)
        cc->interval_scale = g_new(double, MAX(c->len, 1));
      cc->piecewise_gamma = x.arrivals == ARR_GAMMA;
      cc->gamma_shape = x.arrivals == ARR_GAMMA ? 1.0 / (x.cv * x.cv) : 0.0;
      cc->n_intervals = c->len;
      cc->interval_index = g_new(int64_t, MAX(c->len, 1));
      cc->interval_counts = g_new(int64_t, MAX(c->len, 1));
      for (guint i = 0; i < c->len; i++) {
        cc->interval_index[i] = g_array_index(c, IntervalCount, i).k;
        cc->interval_counts[i] = g_array_index(c, IntervalCount, i).n;
        if (cc->interval_scale) {
          cc->interval_scale[i] = profile_at(&x, (cc->interval_index[i] + 0.5) * x.interval_s);
          scaled_total += (double)cc->interval_counts[i] * cc->interval_scale[i];
        }
      }
      cc->rate_rps = (cc->interval_scale ? scaled_total : total * x.rate_scale) /
                     (cc->window_ns * 1e-9);
    }
    if (!(cc->rate_rps > 0)) {
      char *cp = cs_json_path_index("clients", idx[j]);
      ok = cs_json_fail(error, file, cp,
                        "model \"%s\" receives no request from the trace in the window (check "
                        "trace.mapping, start_s and duration_s)",
                        cc->model);
      g_free(cp);
    }
  }
  if (ok) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "file", written_name);
    cJSON_AddStringToObject(d, "format", cs_trace_format_name(x.format));
    cJSON_AddStringToObject(d, "sha256", sha);
    cJSON_AddNumberToObject(d, "start_s", x.start_s);
    cJSON_AddNumberToObject(d, "duration_s", x.duration_s);
    cJSON_AddNumberToObject(d, "time_scale", x.time_scale);
    if (x.n_points > CS_SETUP_PROFILE_POINTS) {
      cJSON_AddItemToObject(d, "rate_scale", profile_digest(&x));
    } else if (x.n_points > 0) {
      cJSON *prof = cJSON_AddArrayToObject(d, "rate_scale");
      for (int i = 0; i < x.n_points; i++) {
        cJSON *pt = cJSON_CreateObject();
        cJSON_AddNumberToObject(pt, "at_s", x.profile_at[i]);
        cJSON_AddNumberToObject(pt, "scale", x.profile_scale[i]);
        cJSON_AddItemToArray(prof, pt);
      }
    } else {
      cJSON_AddNumberToObject(d, "rate_scale", x.rate_scale);
    }
    cJSON_AddStringToObject(d, "arrivals", x.arrivals == ARR_EXACT     ? "exact"
                                           : x.arrivals == ARR_POISSON ? "poisson"
                                                                       : "gamma");
    if (x.arrivals != ARR_EXACT)
      cJSON_AddNumberToObject(d, "interval_s", x.interval_s);
    cJSON_AddStringToObject(d, "mapping", x.mapping == MAP_STRIPE   ? "stripe"
                                          : x.mapping == MAP_BLOCKS ? "blocks"
                                                                    : "explicit");
    char *text = cJSON_PrintUnformatted(d);
    *desc = g_strdup(text);
    cJSON_free(text);
    cJSON_Delete(d);
  }
  g_free(sha);
  for (int j = 0; j < n; j++) {
    if (x.times[j])
      g_array_unref(x.times[j]);
    if (x.counts[j])
      g_array_unref(x.counts[j]);
  }
  g_free(x.times);
  g_free(x.counts);
  g_free(x.unsorted);
  g_hash_table_destroy(x.function_index);
  g_hash_table_destroy(x.explicit_map);
  g_hash_table_destroy(x.explicit_seen);
  return ok;
}
