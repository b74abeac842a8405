/* Trace-driven clients: the scenario's "trace" object (docs/scenario.md) and
 * the clients whose arrival is "trace". */
#ifndef CS_SCENARIO_TRACE_H
#define CS_SCENARIO_TRACE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "sim/config.h"

/* Reads the trace at path (already resolved) as the "trace" object obj
 * describes and fills the arrival fields of the trace clients: clients[idx[j]]
 * for j < n (in scenario order). Sets *desc to a JSON description for the
 * summary (file name as written, format, sha256, window, choices). Returns FALSE
 * with error set (file, JSON path or trace line, expectation) on bad input. */
gboolean cs_trace_clients_compile(const cJSON *obj, const char *file, const char *path,
                                  const char *written_name, CsClientConfig *clients,
                                  const int *idx, int n, char **desc, GError **error);

#endif
