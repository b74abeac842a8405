/* Sweeps (internal): running an experiment's grid on local threads, its
 * output set, and sharding (docs/experiments.md, "Sweeps").
 *
 * Determinism: every run is simulated alone from its own scenario and seed,
 * its rows are kept by run number and written in run order, so the outputs
 * are the same bytes whatever the number of threads and whichever shards
 * produced them. Nothing of the wall clock is written. */
#ifndef CS_SWEEP_H
#define CS_SWEEP_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "experiment.h"
#include "sweep_runs.h"

G_BEGIN_DECLS

/* CsSweepOptions and CsSweepProgress: clustersim/sweep.h. */

/* Runs the shard's runs on opt->threads threads. Returns the runs table (rows in run order; a run that cannot run
 * has one "invalid" row with its message); run_ids (may be NULL) gets the run
 * numbers run, ascending. Never fails: bad input was refused by
 * cs_experiment_load. */
CsRunsTable *cs_sweep_run(const CsExperiment *e, const CsSweepOptions *opt, GArray **run_ids);

/* The progress line of a sweep on a terminal: "sweep: DONE of TOTAL runs
 * (P %), ELAPSED elapsed, about LEFT left", times as M:SS (H:MM:SS from an
 * hour on), LEFT estimated as elapsed x (total - done) / done: the runs
 * left at the mean pace so far. Before the first run ends the time left is
 * "unknown"; once every run is done there is none. elapsed_s is the wall
 * time since the sweep started (the caller's clock: this function reads
 * none). Returns the line (g_free), without a line break. */
char *cs_sweep_progress_text(int done, int total, double elapsed_s);

/* Runs of the table whose status is not "ok". */
int cs_sweep_n_invalid(const CsRunsTable *t);

/* Prints a line per run that did not run, in run order:
 * "PROG: run N (variant V, AXIS LABEL, ..., seed S) invalid: MESSAGE". */
void cs_sweep_print_invalid(const CsRunsTable *t, const char *prog, FILE *out);

/* ---- Output set (sweep_output.c) ---- */

/* The files a sweep may write in its output directory. */
extern const char *const cs_sweep_output_set[];

/* Checks that dir can take the outputs before anything runs: it is a
 * directory or absent, and holds no file of the set unless force. Returns
 * FALSE with error set otherwise. */
gboolean cs_sweep_check_output_dir(const char *dir, gboolean force, GError **error);

/* Writes the files names[i] with texts[i] (n of them) into dir (created if
 * absent), each under a temporary name first and then renamed with SIGINT
 * and SIGTERM blocked; files of the set not among names are removed, so dir
 * never mixes two sweeps. Returns FALSE with error set when a file cannot be
 * written (the temporaries are removed). */
gboolean cs_sweep_write_outputs(const char *dir, const char *const *names,
                                const char *const *texts, int n, GError **error);

/* The texts of the unsharded output set from a runs table and the
 * experiment's description (cs_experiment_describe): runs.csv,
 * aggregate.csv, aggregate.json, sweep.json, in that order in names/texts
 * (texts to g_free). */
int cs_sweep_outputs(const CsRunsTable *t, const cJSON *describe, const char **names,
                     char **texts);

/* shard.json of a shard: {"sweep": describe, "shard": {"index": K, "count": N},
 * "run_ids": [...]} (g_free it). index is 1-based, as on the command line. */
char *cs_sweep_shard_json(const cJSON *describe, int index, int count, const GArray *run_ids);

/* Merges shard directories (each with shard.json and runs.csv): every shard
 * of the same experiment files and version, every run exactly once, each
 * runs.csv holding exactly the runs its shard.json lists. Returns the merged
 * table in run order and *describe (the sweep description) or NULL with error
 * set naming the directory and what is wrong. */
CsRunsTable *cs_sweep_merge(const char *const *dirs, int n, cJSON **describe, GError **error);

G_END_DECLS

#endif
