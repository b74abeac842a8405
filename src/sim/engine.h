/* The simulation engine: runs a compiled scenario (config.h) to completion.
 *
 * Pipeline of one request (MODEL.md section 2): client -> router (timeout
 * batching, one open batch per model bound to the model's current replica,
 * round-robin over replicas) -> network (request payload) -> node -> worker
 * FIFO queue -> GPU -> network (result payload) -> client.
 *
 * GPU execution in this version: a GPU runs one batch at a time for the
 * batch's profiled isolated latency; batches of several replicas on one GPU
 * take turns in arrival order (time-slicing, no MPS). */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include <stdio.h>

#include "clustersim/clustersim.h"
#include "config.h"
#include "results.h"

/* Runs the simulation. requests_csv, if not NULL, receives one row per request;
 * decisions, if not NULL, the decision log (docs/scenario.md).
 * Returns the results, or NULL with error set when the dispatch policy
 * misused an engine service (CS_ERROR_POLICY) or the progress callback
 * stopped the run (CS_ERROR_CANCELLED). */
CsResults *cs_engine_run(const CsConfig *cfg, FILE *requests_csv, FILE *decisions,
                         const CsRunOptions *opt, GError **error);

#endif
