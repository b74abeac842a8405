/* Shared pieces of the clustersim subcommands. */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <glib.h>

#include "clustersim/clustersim.h"
#include "figures/figure.h"

/* Exit status for bad input: scenario, profile, trace or flags. */
#define EXIT_BAD_INPUT 2

/* Prints "prog: msg" to stderr and returns EXIT_BAD_INPUT. */
int cli_fail(const char *prog, const char *msg);

/* The --set PATH=VALUE and --unset PATH options of a command, in command-line
 * order: "=PATH=VALUE" for a set, "-PATH" for an unset. */
typedef struct {
  GPtrArray *ops;
} CliOverrides;

/* Returns an option context whose main group holds entries followed by
 * --set and --unset, which append to ov (initialise it zeroed; free with
 * cli_overrides_clear). */
GOptionContext *cli_context_new(const char *parameter, const GOptionEntry *entries,
                                CliOverrides *ov);
void cli_overrides_clear(CliOverrides *ov);

/* Loads a scenario and applies the overrides in order. Returns NULL after
 * printing the error. */
CsScenario *cli_load_scenario(const char *prog, const char *path, const CliOverrides *ov);

/* Plug-ins (cli_plugins.c): loads those of CLUSTERSIM_PLUGINS and of every
 * --plugin FILE / --plugin=FILE in argv (before a "--") into the process's
 * registry and removes the options from argv. Returns 0, or EXIT_BAD_INPUT
 * after printing why a plug-in was refused. */
int cli_plugins_setup(int *argc, char ***argv);

/* The process's registry: the built-in policies and every plug-in loaded. */
CsRegistry *cli_registry(void);

/* Gives sc the process's registry and loads the plug-ins its "plugins"
 * field names. Returns FALSE after printing the error. cli_load_scenario
 * does this; a command building scenarios otherwise calls it. */
gboolean cli_scenario_plugins(CsScenario *sc);

/* Parses --seed text into *seed (-1 when text is NULL). Returns FALSE after
 * printing the error. */
gboolean cli_parse_seed(const char *prog, const char *text, gint64 *seed);

/* Parses --max-requests text into *max: 0 (the library's default, 10^8)
 * when text is NULL, -1 for "none" (no limit), else the integer >= 1.
 * Returns FALSE after printing the error. */
gboolean cli_parse_max_requests(const char *prog, const char *text, gint64 *max);

/* Parses --max-duration-s text into *max: 0 (the library's default, an
 * hour) when text is NULL, -1 for "none" (no bound), else the number of
 * seconds > 0. Returns FALSE after printing the error. */
gboolean cli_parse_max_duration(const char *prog, const char *text, double *max);

/* The help text of --max-duration-s (replay, validate). */
#define CLI_MAX_DURATION_HELP                                                                 \
  "Refuse to start when the real time it would take exceeds S seconds (default 3600); "       \
  "none: no bound"

/* The help text of --max-requests, shared by the commands that simulate. */
#define CLI_MAX_REQUESTS_HELP                                                                 \
  "Refuse a run whose clients would send more than N requests (default 100000000; memory "    \
  "and time grow with them); none: no limit"

/* Progress on a terminal only: installs a callback in opt when stderr is a
 * TTY; cli_progress_done clears the line. */
typedef struct {
  gint64 last_us;
  gboolean shown;
} CliProgress;
void cli_progress_install(CliProgress *p, CsRunOptions *opt);
void cli_progress_done(CliProgress *p);

/* Prints every warning of a run on stderr, one line each:
 * "clustersim: warning [CODE] MODEL gpu N: MESSAGE". */
void cli_print_warnings(const CsResults *res);
/* Prints one warning that way. */
void cli_print_warning(const CsWarning *w);

int cmd_run(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_provision(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_derive(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_profile_measure(int argc, char **argv);
int cmd_profile_import(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_policies(int argc, char **argv);
int cmd_llm(int argc, char **argv);
int cmd_llm_search(int argc, char **argv);
/* The registry whose policies the CLI's scenarios see (`clustersim policies`,
 * `place --list`), with one reference (cs_registry_unref it). */
CsRegistry *cli_policies_registry(void);

/* Writes a figure set into dir/figures and renders it unless !render
 * (cmd_plot.c): prints the set's notes, gnuplot's warnings and, when gnuplot
 * is missing, one warning on stderr; with list, a line naming the figures on
 * stdout. Returns FALSE after printing the error when a file cannot be written
 * or gnuplot fails on a script. */
gboolean cli_save_figures(const char *prog, CsFigureSet *set, const char *dir, gboolean render,
                          gboolean list);

#endif
