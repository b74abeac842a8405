/* Provisioning search (internal; `clustersim provision`, docs/experiments.md,
 * "Provisioning"): the fewest GPUs, and separately the cheapest mix of GPU
 * types, that serve a scenario's load as written within its objective
 * (Symphony's Figure 10 question).
 *
 * A mix gives each GPU type a count; the scenario's cluster is replaced by one
 * node per type with a count above 0, in the order the types are given, and
 * everything else (load, dispatch, placement, seed) runs as written. A probe
 * simulates one mix and passes by the goodput search's criterion (p99 or bad
 * rate, every model measured).
 *
 * Assumption: more GPUs of a type never hurt (a mix that passes still passes
 * with a GPU added). It holds for a capacity-bound load and a policy that
 * uses the GPUs it gets; it can fail (a policy that spreads a model thinly, a
 * round-robin that sends load to a slow GPU). The search relies on it to
 * bisect instead of enumerating: for every count of the types but the last
 * (each up to its bound), the fewest GPUs of the last type that pass, by
 * bisection below the count found for one fewer GPU of the type before it;
 * those minimal mixes are the frontier, and the fewest GPUs and the cheapest
 * mix are read off it. Under the assumption both are exact. Every pair of
 * probes is checked against it, and a contradiction is reported (never
 * silently trusted): the answer may then be wrong.
 *
 * Deterministic: probes run in a fixed order with the scenario's seed. */
#ifndef CS_PROVISION_H
#define CS_PROVISION_H

#include <glib.h>

#include "clustersim/clustersim.h"

G_BEGIN_DECLS

#define CS_PROVISION_MAX_TYPES 8

typedef struct {
  const char *const *types; /* GPU type names, n_types of them, distinct */
  int n_types;              /* 1..CS_PROVISION_MAX_TYPES */
  int max_gpus;             /* at most this many GPUs in a mix, >= 1 */
  const int *max_per_type;  /* per type, >= 0 (at most max_gpus counts) */
  const double *price;      /* per type: dollars per GPU-hour, NAN for the profile's */
  CsGoodputSearchOptions criterion; /* criterion and bad_rate_bound only */
} CsProvisionOptions;

typedef struct {
  int index;              /* probe number, from 0 */
  int counts[CS_PROVISION_MAX_TYPES]; /* GPUs per type */
  int gpus;               /* their sum */
  double price_per_hour;  /* the mix's price; NAN when a type used has none */
  double goodput_rps;     /* total simulated goodput */
  double worst_bad_rate;  /* highest bad rate over the models */
  gboolean measured_all;  /* every model measured a request */
  gboolean pass;
} CsProvisionProbe;

/* A mix found: one of the frontier, or an answer. */
typedef struct {
  int counts[CS_PROVISION_MAX_TYPES];
  int gpus;
  double price_per_hour; /* NAN when a type used has no price */
} CsProvisionMix;

typedef struct {
  double price[CS_PROVISION_MAX_TYPES];  /* per type, as used; NAN unknown */
  char *price_source[CS_PROVISION_MAX_TYPES]; /* per type; NULL when unknown */
  GArray *frontier;       /* CsProvisionMix: minimal passing mixes, in search order */
  gboolean found;         /* some mix within the bounds passed */
  CsProvisionMix fewest;  /* fewest GPUs (ties: cheaper, then earlier in search order) */
  gboolean cheapest_found; /* some passing mix has a known price */
  CsProvisionMix cheapest; /* lowest price (ties: fewer GPUs, then search order) */
  GPtrArray *violations;  /* char *: probes that contradict the monotonicity assumption */
  int probes;
} CsProvisionResult;

typedef void (*CsProvisionProbeCallback)(const CsProvisionProbe *p, void *user_data);

/* Runs the search on sc (left as given). Returns FALSE with error set when
 * the options are out of range, a type is not declared by the scenario's
 * profiles or given twice, the scenario is invalid or splits GPUs into MIG
 * instances (not searched), its clients would send more requests than
 * run_opt's limit, or a probe fails to run. *out is filled on success (free with
 * cs_provision_result_clear). on_probe (may be NULL) sees every probe. */
gboolean cs_provision(CsScenario *sc, const CsProvisionOptions *opt, const CsRunOptions *run_opt,
                      CsProvisionProbeCallback on_probe, void *user_data, CsProvisionResult *out,
                      GError **error);

void cs_provision_result_clear(CsProvisionResult *r);

G_END_DECLS

#endif
