/* Internal: a capacity search's "search.grid" (docs/llm.md, "Capacity
 * search"): lists of options per field expanded into the cartesian product
 * of deployments, as Vidur's config explorer expands its YAML lists
 * (vidur/config_optimizer/config_explorer/config/config.py,
 * JobConfig.generate_job_configs: itertools.product, the last list varying
 * fastest).
 *
 * "grid" is an object of axes, in the order written. An axis is either a
 * deployment field (model, device, node, tensor_parallel,
 * pipeline_parallel, replicas, router, max_tokens, memory_margin,
 * attention_outside_grid, max_replicas; "scheduler" with objects merged
 * into the scheduler; "scheduler.KEY" for one scheduler field) with a list
 * of its values, or a bundle: any other name with a list of objects of
 * deployment fields set together (Vidur's "clusters" and "schedulers"
 * entries: a device with its node, a policy with its chunk size), each
 * optionally with a "name". Every list holds 1 or more distinct options;
 * no two axes may set one field; the product holds at most
 * CS_LLM_GRID_MAX combinations. A combination is named by its options'
 * labels in axis order: a string as it is, tensor_parallel "TP2",
 * pipeline_parallel "PP2", batch_size_cap "cap 64", chunk_size "chunk 512",
 * another number "KEY=V", a bundle its "name" or its fields' labels. */
#ifndef CS_EXPERIMENT_LLM_SEARCH_GRID_H
#define CS_EXPERIMENT_LLM_SEARCH_GRID_H

#include <cjson/cJSON.h>
#include <glib.h>

#define CS_LLM_GRID_MAX 256

typedef struct {
  cJSON *deployment; /* a "deployments" entry's fields (no name) */
  char *name;
  cJSON *options;    /* {AXIS: option} */
  int *choice;       /* per axis, the option's index */
} CsLlmGridPoint;

typedef struct {
  int n_axes;
  char **axis;             /* names, in order */
  const cJSON **options;   /* per axis, its array (in the config) */
  int *n_options;
  CsLlmGridPoint *points;  /* in product order */
  int n_points;
} CsLlmGrid;

/* Expands grid (at "search.grid" of file). Returns the grid
 * (cs_llm_grid_free) or NULL with error "FILE: search.grid...: ..." for
 * anything that is not as above. */
CsLlmGrid *cs_llm_grid_expand(const cJSON *grid, const char *file, GError **error);

void cs_llm_grid_free(CsLlmGrid *g);

#endif
