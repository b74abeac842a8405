/* Goodput search (internal parts): the search that keeps its best run, and
 * the "search" block of an experiment file (docs/experiments.md, "Goodput
 * search sweeps"). The public search is cs_goodput_search (clustersim.h). */
#ifndef CS_SEARCH_H
#define CS_SEARCH_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "clustersim/clustersim.h"

G_BEGIN_DECLS

/* cs_goodput_search that also hands back a simulation: *kept gets the
 * results of the highest passing probe, or, when no probe passed, of the
 * last probe run (its models, for reporting); NULL when no probe ran.
 * *probes gets the number of simulations run. Fails as cs_goodput_search
 * does (then *kept is NULL). */
gboolean cs_goodput_search_keep(CsScenario *sc, const CsGoodputSearchOptions *opt,
                                const CsRunOptions *run_opt, CsGoodputProbe *best,
                                CsResults **kept, int *probes, GError **error);

/* Whether a run meets the search's objective (opt's criterion and bound):
 * every model measured a request, and every model's p99 latency is within
 * its SLO (at least ceil(0.99 n) of its n measured requests good) or its bad
 * rate within the bound. *worst gets the highest bad rate (1 for a model
 * that measured nothing), *measured_all whether every model measured one. */
gboolean cs_goodput_probe_passes(const CsResults *r, const CsGoodputSearchOptions *opt,
                                 double *worst, gboolean *measured_all);

/* Reads the optional "search" object of an experiment file's root:
 * {"criterion": "p99" | "bad_rate", "bad_rate_bound", "max_multiplier",
 * "tolerance", "max_probes"}, every field optional (the defaults of
 * cs_goodput_search_options_init). *present says whether it was there; *o
 * gets the options. Returns FALSE with error set naming file and the JSON
 * path when a field is unknown or out of range. */
gboolean cs_search_options_read(const cJSON *root, const char *file, gboolean *present,
                                CsGoodputSearchOptions *o, GError **error);

/* The options as sweep.json records them (every field written out; the
 * bound only for the bad-rate criterion). A new object. */
cJSON *cs_search_options_describe(const CsGoodputSearchOptions *o);

G_END_DECLS

#endif
