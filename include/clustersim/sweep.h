/* libclustersim: sweeps, the grid of simulations `clustersim sweep` runs,
 * from C.
 *
 * An experiment file (docs/experiments.md, "Sweeps") names a base scenario,
 * variants, axes and seeds; cs_experiment_load reads and checks it (every
 * edit of the grid applied once, before anything runs). cs_experiment_sweep
 * runs its runs on threads, each alone from its own scenario and seed (the
 * same seeds for every variant and axis point: common random numbers), and
 * returns the runs table and its aggregation: mean and 95 % confidence
 * interval per (variant, axis point, model, metric). The texts and files are
 * byte for byte those `clustersim sweep` writes (runs.csv, aggregate.csv,
 * aggregate.json, sweep.json; a shard's runs.csv and shard.json): the
 * command runs the same functions, and adds its figures and its table on
 * stdout.
 *
 * A researcher's own policies reach a sweep through a registry
 * (cs_experiment_use_registry), as they reach a run through
 * cs_scenario_set_registry.
 *
 * Ownership: an experiment and a sweep's results belong to the caller
 * (cs_experiment_free, cs_sweep_results_free); strings returned as const
 * belong to the object they came from and live as long as it. An experiment
 * is immutable once its registry is set: any number of threads may build run
 * scenarios from it, and cs_experiment_sweep may be called from several
 * threads at once on one experiment.
 */
#ifndef CLUSTERSIM_SWEEP_H
#define CLUSTERSIM_SWEEP_H

#include "core.h"
#include "registry.h"

G_BEGIN_DECLS

typedef struct CsScenario CsScenario;
typedef struct CsExperiment CsExperiment;

/* Reads and checks an experiment file and its base scenario (a path relative
 * to the experiment file's directory). Returns a new experiment, or NULL with
 * error set (domain CS_ERROR) naming the file, the JSON path and what was
 * expected. The experiment sees the built-in policies until
 * cs_experiment_use_registry. */
CS_API CsExperiment *cs_experiment_load(const char *path, GError **error);

/* Frees the experiment. Accepts NULL. */
CS_API void cs_experiment_free(CsExperiment *e);

/* Gives every run the policies of registry (a reference is kept; NULL: the
 * built-in policies only) and loads into it the plug-ins the experiment and
 * its scenarios name ("plugins", docs/extending.md). Returns FALSE with error
 * set naming the file, the field and the plug-in when one is refused. Call it
 * before the runs start, from one thread. */
CS_API gboolean cs_experiment_use_registry(CsExperiment *e, CsRegistry *registry,
                                           GError **error);

/* The experiment's "name" (else the file's base name). NULL for NULL. */
CS_API const char *cs_experiment_name(const CsExperiment *e);

/* The number of runs: variants x axis points x seeds. 0 for NULL. */
CS_API int cs_experiment_n_runs(const CsExperiment *e);

/* The number of variants (1 when the file names none: "base"). */
CS_API int cs_experiment_n_variants(const CsExperiment *e);

/* The name of variant i, or NULL when out of range. */
CS_API const char *cs_experiment_variant_name(const CsExperiment *e, int variant);

/* The number of axes (0 or more). */
CS_API int cs_experiment_n_axes(const CsExperiment *e);

/* The name of an axis, or NULL when out of range. */
CS_API const char *cs_experiment_axis_name(const CsExperiment *e, int axis);

/* The number of levels of an axis, 0 when out of range. */
CS_API int cs_experiment_axis_n_levels(const CsExperiment *e, int axis);

/* The label of a level of an axis, or NULL when out of range. */
CS_API const char *cs_experiment_axis_label(const CsExperiment *e, int axis, int level);

/* Run number run's variant name, or NULL when out of range. Runs are
 * numbered variant-major, then axis by axis, seeds innermost. */
CS_API const char *cs_experiment_run_variant(const CsExperiment *e, int run);

/* Run number run's label on axis, or NULL when out of range. */
CS_API const char *cs_experiment_run_label(const CsExperiment *e, int run, int axis);

/* Run number run's seed (0 when out of range). */
CS_API int64_t cs_experiment_run_seed(const CsExperiment *e, int run);

/* Builds the scenario of a run, with the experiment's registry (the seed is
 * not written into it: pass cs_experiment_run_seed() as
 * CsRunOptions.seed_override). Returns a new scenario (cs_scenario_free it),
 * or NULL with error set when run is out of range. */
CS_API CsScenario *cs_experiment_run_scenario(const CsExperiment *e, int run, GError **error);

/* Called after each run with the runs done and the runs to do, from the
 * worker thread that finished it, one call at a time. */
typedef void (*CsSweepProgress)(int done, int total, void *data);

typedef struct {
  int threads;              /* >= 1: runs at once */
  int shard_index;          /* 0-based: the runs whose number mod shard_count is this */
  int shard_count;          /* >= 1; 1: every run */
  CsSweepProgress progress; /* may be NULL */
  void *progress_data;
  int64_t max_requests;     /* each run's CsRunOptions.max_requests (0: the default) */
} CsSweepOptions;

/* Sets every field to its default: the machine's processors as threads, one
 * shard, no progress, the default request limit. */
CS_API void cs_sweep_options_init(CsSweepOptions *opt);

/* Returns sizeof(CsSweepOptions) in this build of the library: a binding that
 * lays the struct out itself (the Python package) checks its layout by it. */
CS_API size_t cs_sweep_options_size(void);

typedef struct CsSweepResults CsSweepResults;

/* Runs the experiment's runs (opt NULL: the defaults; a shard's only when
 * opt->shard_count > 1). Returns the results, never NULL for a valid
 * experiment: a run that cannot run is a row of status "invalid" with its
 * message (cs_sweep_results_n_invalid). NULL (with a critical warning) for a
 * NULL experiment or out-of-range options. */
CS_API CsSweepResults *cs_experiment_sweep(const CsExperiment *e, const CsSweepOptions *opt);

/* Frees the results. Accepts NULL. */
CS_API void cs_sweep_results_free(CsSweepResults *r);

/* The runs the results hold (all of them, or the shard's). */
CS_API int cs_sweep_results_n_runs(const CsSweepResults *r);

/* The runs whose status is not "ok". */
CS_API int cs_sweep_results_n_invalid(const CsSweepResults *r);

/* The text of one output file as `clustersim sweep` writes it: "runs.csv",
 * "aggregate.csv", "aggregate.json" or "sweep.json" for every run's
 * results; "runs.csv" or "shard.json" for a shard's. Returns a new string
 * (g_free it), or NULL for another name. */
CS_API char *cs_sweep_results_text(const CsSweepResults *r, const char *name);

/* Writes the output set into dir (created if absent) as `clustersim sweep
 * -o DIR` does, without the figures (`clustersim sweep plot DIR` draws them):
 * the directory locked while written (a second writer is refused), each file
 * written whole and renamed into place, files of an earlier sweep there
 * removed. Returns FALSE with error set when dir holds an earlier sweep's
 * outputs and !force, another writer holds it, or a file cannot be written. */
CS_API gboolean cs_sweep_results_write(const CsSweepResults *r, const char *dir, gboolean force,
                                       GError **error);

G_END_DECLS

#endif
