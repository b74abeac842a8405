/* Experiments (internal): a grid of simulations described by one JSON file,
 * the input of `clustersim sweep` (docs/experiments.md, "Sweeps").
 *
 * An experiment names a base scenario, edits applied to every run ("set",
 * "unset"), named variants, axes (a scenario path with values, or labelled
 * levels that each edit the scenario) and seeds. Runs are numbered
 * variant-major, then axis by axis (the first axis varies slowest), seeds
 * innermost: run = ((variant * P) + point) * S + seed index, P the number of
 * axis points and S the number of seeds.
 *
 * A run's scenario is the base, then the top-level edits, the variant's, each
 * axis level's in axis order; within one set of edits "unset" comes before
 * "set", so a level can replace a block. A path step "[*]" stands for every
 * element of the array there (as the scenario holds it at that moment).
 * The run's seed is given to cs_run through CsRunOptions.seed_override.
 *
 * Loading checks the whole grid: every (variant, axis point) scenario is
 * built once, so an edit that cannot apply is reported before anything runs,
 * naming the experiment file, the JSON path of the edit and the run. Whether
 * a built scenario is valid is for cs_run to say, run by run.
 *
 * An experiment is immutable after loading: any number of threads may build
 * run scenarios from it at once. */
#ifndef CS_EXPERIMENT_H
#define CS_EXPERIMENT_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "clustersim/clustersim.h"

G_BEGIN_DECLS


/* Loading, freeing and the grid's shape and runs are public
 * (clustersim/sweep.h): cs_experiment_load, _free, _name, _n_runs,
 * _n_variants, _variant_name, _n_axes, _axis_name, _axis_n_levels,
 * _axis_label, _run_variant, _run_label, _run_seed, _run_scenario. */

/* The goodput search every run makes (the experiment's "search"), or NULL
 * when each run is one simulation. */
const CsGoodputSearchOptions *cs_experiment_search(const CsExperiment *e);


/* "variant NAME, AXIS LABEL, ..., seed S" for messages (g_free it). */
char *cs_experiment_run_describe(const CsExperiment *e, int run);


/* What identifies the experiment's outputs (sweep.json): name, file base
 * name and SHA-256, base scenario base name and SHA-256, library version,
 * number of runs, variants, axes with their labels, seeds, and the search
 * options of a goodput-search experiment. A new object. */
cJSON *cs_experiment_describe(const CsExperiment *e);

/* The experiment file as given, and the number of its seeds. */
const char *cs_experiment_file(const CsExperiment *e);
int cs_experiment_n_seeds(const CsExperiment *e);

/* The experiment's "plugins" (absolute paths; NULL-terminated, owned by e). */
const char *const *cs_experiment_plugins(const CsExperiment *e);

/* Gives every run's scenario the registry (a reference is kept; NULL: the
 * built-in policies). Call before runs are built, not while. */
void cs_experiment_set_registry(CsExperiment *e, CsRegistry *registry);

/* Sets e's registry and loads into it the experiment's "plugins" and those
 * that each (variant, axis point) scenario names (experiment_plugins.c).
 * Returns FALSE with error set naming the file, the field and the plug-in.
 * Call before the runs start: it writes the registry. */
gboolean cs_experiment_load_plugins(CsExperiment *e, CsRegistry *registry, GError **error);

/* Adds "plugins" ([{"file", "sha256"}], every plug-in of the registry) to a
 * description d; nothing when the registry (may be NULL) has none. */
void cs_experiment_describe_plugins(const CsRegistry *registry, cJSON *d);

G_END_DECLS

#endif
