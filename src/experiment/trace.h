/* The timeline of a run as Chrome trace event JSON (trace.c). */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include "clustersim/clustersim.h"

typedef struct CsTraceWriter CsTraceWriter;

/* Opens opt->trace_json (under a temporary name) and fills *wrapped with opt's
 * settings and callbacks that record the timeline before calling opt's own.
 * models names the clients in order. Returns NULL with error set
 * (CS_ERROR_IO) when the file cannot be written. */
CsTraceWriter *cs_trace_writer_new(const CsRunOptions *opt, const char *const *models,
                                   int n_models, CsRunOptions *wrapped, GError **error);

/* Names the tracks from res, completes the file and renames it into place;
 * frees w. Returns FALSE with error set when the file cannot be written. */
gboolean cs_trace_writer_finish(CsTraceWriter *w, const CsResults *res, GError **error);

/* Frees w and removes its unfinished file (a run that failed). Accepts NULL. */
void cs_trace_writer_free(CsTraceWriter *w);

#endif
