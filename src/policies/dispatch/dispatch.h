/* Dispatch policies: the online stage between clients and GPUs that decides
 * when requests leave as a batch and to which GPU.
 *
 * A policy is a const vtable in the registry (dispatch.c), chosen by name in
 * the scenario's "dispatch" object. Its parameters are parsed and checked when
 * the scenario is validated (parse), and an instance is created per run
 * (create). During the run the engine calls on_request for every request that
 * arrives and on_timer for the policy's own timers; the policy acts through
 * the engine services of engine_internal.h (timers, batches, send, drop).
 */
#ifndef CS_DISPATCH_H
#define CS_DISPATCH_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

typedef struct Engine Engine;
typedef struct Req Req;
typedef struct CsConfig CsConfig;           /* config.h */
typedef struct CsWarningList CsWarningList; /* warnings.h */

typedef struct CsDispatchPolicy {
  const char *name;
  const char *description;
  /* TRUE when the policy sends each model's batches to the replicas of the
   * placement; FALSE when it runs every model on every GPU (no placement). */
  gboolean uses_placement;
  /* Parses the scenario's "dispatch" object (may be NULL: defaults). Returns the
   * policy's parameters (freed with free_params), or NULL with error set. */
  void *(*parse)(const cJSON *params, const char *file, const char *path, GError **error);
  void (*free_params)(void *params);
  /* Optional (NULL: nothing to check). Called once, when the scenario is
   * compiled, after parse and after clients, GPUs, profiles and network are
   * compiled and checked: completes params with what the policy derives from
   * the simulated world (shown by describe) and adds a warning to warnings for
   * each setting that disagrees with it. Never fails. */
  void (*check)(void *params, const CsConfig *cfg, CsWarningList *warnings);
  /* Creates the per-run state. */
  void *(*create)(Engine *e, const void *params);
  void (*destroy)(void *state);
  /* A request of model (client index) arrives; the policy owns it from now on. */
  void (*on_request)(void *state, int model, const Req *r);
  /* A timer the policy set fires; arg is what it passed to cs_engine_timer. */
  void (*on_timer)(void *state, uint32_t arg);
  /* Writes a JSON description of the parameters (for the summary). */
  void (*describe)(const void *params, cJSON *out);
  /* Adds to the scenario's "dispatch" object every parameter it leaves out,
   * with the value parse() gave it, so that the effective scenario states
   * every default and parses to the same parameters. */
  void (*fill_defaults)(const void *params, cJSON *obj);
} CsDispatchPolicy;

/* Returns the policy registered under name, or NULL. */
const CsDispatchPolicy *cs_dispatch_policy_lookup(const char *name);
/* Returns the NULL-terminated registry. */
const CsDispatchPolicy *const *cs_dispatch_policy_list(void);

extern const CsDispatchPolicy cs_dispatch_router;    /* thesis: per-replica timeout batching */
extern const CsDispatchPolicy cs_dispatch_symphony;  /* Symphony deferred batch scheduling */
extern const CsDispatchPolicy cs_dispatch_eager;     /* centralized, dispatch as soon as a GPU is free */
extern const CsDispatchPolicy cs_dispatch_timeout;   /* centralized, dispatch at first arrival + k */

#endif
