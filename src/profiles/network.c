/* Network curves; see network.h and docs/profiles.md for the file format. */
#include "network.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"

G_DEFINE_QUARK(cs-network-error-quark, cs_network_error)

typedef enum { CURVE_ZERO, CURVE_CONSTANT, CURVE_SEGMENTS } CurveKind;

typedef struct {
  int64_t up_to_bytes; /* inclusive upper end; -1 for the open-ended last segment */
  double a;            /* ms per byte^b */
  double b;            /* exponent, >= 0 so that the curve is finite at 0 bytes */
  double c_ms;         /* offset, ms */
} Segment;

struct CsNetworkCurve {
  CurveKind kind;
  int64_t constant_ns; /* CURVE_CONSTANT only */
  Segment *segments;   /* CURVE_SEGMENTS only: ascending, last open-ended */
  int n_segments;
  char *source;
};

static CsNetworkCurve *curve_new(CurveKind kind, const char *source)
{
  CsNetworkCurve *c = g_new0(CsNetworkCurve, 1);
  c->kind = kind;
  c->source = g_strdup(source);
  return c;
}

CsNetworkCurve *cs_network_curve_new_zero(void)
{
  return curve_new(CURVE_ZERO, "built-in zero curve");
}

CsNetworkCurve *cs_network_curve_new_constant(int64_t ns)
{
  g_return_val_if_fail(ns >= 0, NULL);
  CsNetworkCurve *c = curve_new(CURVE_CONSTANT, "built-in constant curve");
  c->constant_ns = ns;
  return c;
}

void cs_network_curve_free(CsNetworkCurve *curve)
{
  if (!curve)
    return;
  g_free(curve->segments);
  g_free(curve->source);
  g_free(curve);
}

gboolean cs_network_curve_uses_size(const CsNetworkCurve *curve)
{
  g_return_val_if_fail(curve != NULL, FALSE);
  return curve->kind == CURVE_SEGMENTS;
}

const char *cs_network_curve_source(const CsNetworkCurve *curve)
{
  g_return_val_if_fail(curve != NULL, NULL);
  return curve->source;
}

int64_t cs_network_curve_latency_ns(const CsNetworkCurve *curve, int64_t bytes)
{
  g_return_val_if_fail(curve != NULL && bytes >= 0, 0);
  if (curve->kind == CURVE_ZERO)
    return 0;
  if (curve->kind == CURVE_CONSTANT)
    return curve->constant_ns;
  /* Loading guarantees the last segment is open-ended, so the scan stops. */
  const Segment *s = curve->segments;
  while (s->up_to_bytes >= 0 && bytes > s->up_to_bytes)
    s++;
  double ns = (s->a * pow((double)bytes, s->b) + s->c_ms) * 1e6;
  if (!(ns > 0)) /* also catches NaN, which 0 * inf could produce */
    return 0;
  /* (double)INT64_MAX is 2^63, one past the largest int64: >= saturates. */
  if (ns >= (double)INT64_MAX)
    return INT64_MAX;
  return llround(ns);
}

/* ---- Loading ------------------------------------------------------------- */

static gboolean parse_segment(const cJSON *node, Segment *seg, gboolean last, int64_t prev_up_to,
                              const char *file, const char *path, GError **error)
{
  static const char *const keys[] = { "up_to_bytes", "a", "b", "c_ms", NULL };
  seg->up_to_bytes = -1;
  if (!cs_json_expect_object(node, file, path, error) ||
      !cs_json_check_keys(node, keys, file, path, error) ||
      !cs_json_read_int64(node, "up_to_bytes", FALSE, 0, INT64_MAX, &seg->up_to_bytes, file, path,
                          error) ||
      !cs_json_read_double(node, "a", TRUE, -G_MAXDOUBLE, G_MAXDOUBLE, &seg->a, file, path,
                           error) ||
      !cs_json_read_double(node, "b", TRUE, 0, G_MAXDOUBLE, &seg->b, file, path, error) ||
      !cs_json_read_double(node, "c_ms", TRUE, -G_MAXDOUBLE, G_MAXDOUBLE, &seg->c_ms, file, path,
                           error))
    return FALSE;
  /* An open last segment means every size has a latency: no run-time error
   * can come from a payload larger than the profiled range. */
  if (last && seg->up_to_bytes >= 0)
    return cs_json_fail(error, file, path,
                        "expected the last segment to be open-ended (omit \"up_to_bytes\") so "
                        "that every payload size has a latency");
  if (!last && seg->up_to_bytes < 0)
    return cs_json_fail(error, file, path,
                        "expected \"up_to_bytes\" (only the last segment may omit it)");
  if (!last && seg->up_to_bytes <= prev_up_to) {
    char *p = cs_json_path_key(path, "up_to_bytes");
    cs_json_fail(error, file, p,
                 "expected segments in ascending order: a value > %" G_GINT64_FORMAT
                 " (the previous segment's), got %" G_GINT64_FORMAT,
                 (gint64)prev_up_to, (gint64)seg->up_to_bytes);
    g_free(p);
    return FALSE;
  }
  return TRUE;
}

static CsNetworkCurve *load_root(const cJSON *root, const char *file, GError **error)
{
  static const char *const keys[] = { "format", "version", "source", "segments", NULL };
  const char *format = NULL, *source = NULL;
  int version = 0;
  if (!cs_json_expect_object(root, file, "", error) ||
      !cs_json_read_string(root, "format", TRUE, &format, file, "", error))
    return NULL;
  if (strcmp(format, CS_NETWORK_FORMAT) != 0) {
    cs_json_fail(error, file, "format", "expected \"%s\", got \"%s\"", CS_NETWORK_FORMAT, format);
    return NULL;
  }
  /* Version before the other fields: a newer file should be told apart from
   * a file with a misspelt field. */
  if (!cs_json_read_int(root, "version", TRUE, G_MININT, G_MAXINT, &version, file, "", error))
    return NULL;
  if (version != CS_NETWORK_FORMAT_VERSION) {
    cs_json_fail(error, file, "version", "unsupported version %d (this build reads version %d)",
                 version, CS_NETWORK_FORMAT_VERSION);
    return NULL;
  }
  if (!cs_json_check_keys(root, keys, file, "", error) ||
      !cs_json_read_string(root, "source", TRUE, &source, file, "", error))
    return NULL;
  const cJSON *segments = cJSON_GetObjectItemCaseSensitive(root, "segments");
  if (!segments) {
    cs_json_fail(error, file, "segments", "required field is missing");
    return NULL;
  }
  if (!cJSON_IsArray(segments) || cJSON_GetArraySize(segments) < 1) {
    cs_json_fail(error, file, "segments", "expected a non-empty array, got %s",
                 cJSON_IsArray(segments) ? "an empty array" : cs_json_type_name(segments));
    return NULL;
  }

  int n = cJSON_GetArraySize(segments);
  CsNetworkCurve *c = curve_new(CURVE_SEGMENTS, NULL);
  c->segments = g_new0(Segment, n);
  c->n_segments = n;
  c->source = g_strdup_printf("%s: %s", file, source);
  int i = 0;
  int64_t prev = -1;
  const cJSON *item;
  cJSON_ArrayForEach(item, segments)
  {
    char *p = cs_json_path_index("segments", i);
    gboolean ok = parse_segment(item, &c->segments[i], i == n - 1, prev, file, p, error);
    g_free(p);
    if (!ok) {
      cs_network_curve_free(c);
      return NULL;
    }
    prev = c->segments[i].up_to_bytes;
    i++;
  }
  return c;
}

/* The JSON readers report in CS_INPUT_ERROR; move to CS_NETWORK_ERROR. */
static void move_error(GError **error, GError *local)
{
  int code = CS_NETWORK_ERROR_INVALID;
  if (local->code == CS_INPUT_ERROR_IO)
    code = CS_NETWORK_ERROR_IO;
  else if (local->code == CS_INPUT_ERROR_PARSE)
    code = CS_NETWORK_ERROR_PARSE;
  g_set_error_literal(error, CS_NETWORK_ERROR, code, local->message);
  g_error_free(local);
}

static CsNetworkCurve *load_tree(cJSON *root, const char *file, GError **error)
{
  GError *local = NULL;
  CsNetworkCurve *c = load_root(root, file, &local);
  cJSON_Delete(root);
  if (!c)
    move_error(error, local);
  return c;
}

CsNetworkCurve *cs_network_curve_load_file(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  GError *local = NULL;
  cJSON *root = cs_json_load_file(path, &local);
  if (!root) {
    move_error(error, local);
    return NULL;
  }
  return load_tree(root, path, error);
}

CsNetworkCurve *cs_network_curve_load_data(const char *json, const char *name, GError **error)
{
  g_return_val_if_fail(json != NULL && name != NULL, NULL);
  GError *local = NULL;
  cJSON *root = cs_json_parse(json, name, &local);
  if (!root) {
    move_error(error, local);
    return NULL;
  }
  return load_tree(root, name, error);
}
