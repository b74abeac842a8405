/* Internal to src/experiment: an experiment's grid as its reader
 * (experiment_load.c) builds it and the grid (experiment.c) expands it. */
#ifndef CS_EXPERIMENT_INTERNAL_H
#define CS_EXPERIMENT_INTERNAL_H

#include "experiment.h"
#include "search.h"

/* Largest grid accepted: beyond it a typo (a seed count of 10^9) is likelier
 * than an intent, and run numbers stay far from int overflow. */
#define MAX_RUNS 10000000

/* One edit of the scenario. */
typedef struct {
  char *path;  /* scenario path; "[*]" steps expand over arrays */
  char *value; /* JSON text to set; NULL: unset */
  char *where; /* JSON path of the edit in the experiment file, for messages */
} Edit;

/* A variant, an axis level or the top-level edits: a name and its edits,
 * unsets before sets. */
typedef struct {
  char *name;
  GPtrArray *edits; /* Edit* */
} Level;

typedef struct {
  char *name;
  GPtrArray *levels; /* Level* */
} Axis;

struct CsExperiment {
  char *file;          /* the experiment file as given, for messages */
  char *name;
  char *sha256;        /* of the experiment file's bytes */
  char *base_file;     /* "base" as written: the scenario's name in messages */
  char *base_sha256;   /* of the base scenario file's bytes */
  char *base_dir;      /* resolves the base scenario's own relative file names */
  char *base_json;     /* the base scenario's text, parsed again for every run */
  Level *common;       /* top-level "set" and "unset" */
  GPtrArray *variants; /* Level* */
  GPtrArray *axes;     /* Axis* */
  GArray *seeds;       /* int64_t */
  gboolean has_search; /* every run is a goodput search with these options */
  CsGoodputSearchOptions search;
  int n_points;        /* product of the axes' level counts */
  int n_runs;
  char **plugins;       /* "plugins", absolute (experiment_plugins.c loads them) */
  CsRegistry *registry; /* given to every run's scenario, or NULL */
};

/* A level named name (copied) without edits; free with
 * cs_experiment_level_free (NULL ok), a GDestroyNotify like
 * cs_experiment_axis_free. */
Level *cs_experiment_level_new(const char *name);
void cs_experiment_level_free(gpointer p);
void cs_experiment_axis_free(gpointer p);

/* Splits a run number into variant, axis levels (n_axes entries) and seed index. */
void cs_experiment_run_coords(const CsExperiment *e, int run, int *variant, int *levels,
                              int *seed);

/* The base scenario with the common edits, the variant's and each axis
 * level's applied; NULL with error set naming the failing edit (and, when
 * with_context, the grid point). */
CsScenario *cs_experiment_build(const CsExperiment *e, int variant, const int *levels,
                                gboolean with_context, GError **error);

#endif
