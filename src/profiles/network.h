/* Network curves: how long a transfer of a payload takes (thesis 4.6.2).
 *
 * The router -> node and worker -> result server transfers of a batch take
 * latency(payload bytes). A curve file (format "clustersim-network",
 * documented in docs/profiles.md) gives it piecewise as
 *   latency_ms(x) = a * x^b + c_ms   for x <= up_to_bytes of the segment,
 * segments ascending, the last one open-ended so that every size has a value.
 * Tests and idealised scenarios use the built-in zero and constant curves.
 *
 * Latencies are int64 nanoseconds, rounded to nearest, clamped at 0 below
 * (a fitted curve may dip under zero near its ends) and saturating at
 * INT64_MAX above. A curve is immutable once built; nothing here is global.
 */
#ifndef CS_NETWORK_H
#define CS_NETWORK_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The "format" and the only "version" a network-curve file may declare. */
#define CS_NETWORK_FORMAT "clustersim-network"
#define CS_NETWORK_FORMAT_VERSION 1

#define CS_NETWORK_ERROR (cs_network_error_quark())
GQuark cs_network_error_quark(void);

typedef enum {
  CS_NETWORK_ERROR_IO,      /* file cannot be read */
  CS_NETWORK_ERROR_PARSE,   /* not JSON */
  CS_NETWORK_ERROR_INVALID, /* JSON but not a valid curve: names file, JSON path, expectation */
} CsNetworkErrorCode;

typedef struct CsNetworkCurve CsNetworkCurve;

/* Loads a curve file. Returns a new curve (free with cs_network_curve_free),
 * or NULL with error set when the file cannot be read, is not JSON, or is not
 * a valid curve of a supported version (message names file, JSON path and
 * what was expected). */
CsNetworkCurve *cs_network_curve_load_file(const char *path, GError **error);

/* Same, from a string already in memory; name is used in messages. */
CsNetworkCurve *cs_network_curve_load_data(const char *json, const char *name, GError **error);

/* Returns a new curve that takes 0 ns for every size. Never fails. */
CsNetworkCurve *cs_network_curve_new_zero(void);

/* Returns a new curve that takes ns (>= 0) for every size, 0 bytes included.
 * Never fails. */
CsNetworkCurve *cs_network_curve_new_constant(int64_t ns);

/* Frees the curve. Accepts NULL. */
void cs_network_curve_free(CsNetworkCurve *curve);

/* Latency in ns of a transfer of bytes (>= 0) bytes: 0 for the zero curve,
 * the constant for a constant curve, else the segment formula evaluated at
 * bytes (at 0 bytes that is a * 0^b + c_ms), rounded to nearest ns, >= 0. */
int64_t cs_network_curve_latency_ns(const CsNetworkCurve *curve, int64_t bytes);

/* TRUE when the latency depends on the payload size (a loaded curve), FALSE
 * for the zero and constant curves. */
gboolean cs_network_curve_uses_size(const CsNetworkCurve *curve);

/* Provenance: "FILE: SOURCE" for a loaded curve, "built-in zero curve" or
 * "built-in constant curve" otherwise. Owned by the curve. */
const char *cs_network_curve_source(const CsNetworkCurve *curve);

G_END_DECLS

#endif
