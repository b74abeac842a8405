/* Shared by the fuzz harnesses of tests/fuzz (docs/testing.md, "Fuzzing").
 *
 * Each harness defines LLVMFuzzerTestOneInput; with -Dfuzz=true it links
 * libFuzzer, otherwise replay_main.c, which runs it once per file given (the
 * test suite replays the committed corpora that way). Findings are reported by
 * crashing: the sanitizers, or fuzz_fail() when a documented property does not
 * hold (the message says which).
 */
#ifndef CS_FUZZ_COMMON_H
#define CS_FUZZ_COMMON_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sets up the process once: G_SLICE=always-malloc and G_DEBUG=gc-friendly
 * so that GLib hands every allocation to malloc (else leaks hide from
 * LeakSanitizer in its slices; the process is started again with argv when
 * they were not set), CLUSTERSIM_DATA_DIR to the repository's data/ so that
 * bare profile names resolve, a temporary directory for the input files the
 * readers need. Called by LLVMFuzzerInitialize in every harness; idempotent. */
void fuzz_init(char **argv);

/* The committed directory scenarios are resolved against (tests/fuzz/files:
 * small trace excerpts and data files the seed scenarios name). */
const char *fuzz_base_dir(void);

/* Writes size bytes to the file name (a plain name) in the process' temporary
 * directory and returns its path (owned here, valid until the next call with
 * the same name). Aborts if the file cannot be written: that is no finding. */
const char *fuzz_write_temp(const char *name, const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (g_free it); an embedded NUL ends it. */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* The input as a scenario file "fuzz.json" resolved against fuzz_base_dir(),
 * or NULL after fuzz_reject when it does not load. */
CsScenario *fuzz_load_scenario(const uint8_t *data, size_t size);

/* Marks the current input as accepted: it went the whole way (loaded,
 * validated, ran; each harness says what that is). The replay driver's
 * --expect-accepted makes a seed that is not accepted an error, so that seeds
 * cannot silently stop exercising what they were chosen for. */
void fuzz_accept(void);
/* How many inputs were accepted so far. */
unsigned long fuzz_accepted(void);

/* Clears an error of rejected input (no finding); with CS_FUZZ_VERBOSE set in
 * the environment, prints it first, to see why a seed is refused. */
void fuzz_reject(GError **error);

/* With CS_FUZZ_VERBOSE set, prints a note about the input (printf-style). */
void fuzz_note(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* Reports a property that does not hold and aborts (a finding). */
void fuzz_fail(const char *fmt, ...) G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN;

/* TRUE when validating the scenario is cheap enough to do on every input: its
 * cluster has at most FUZZ_MAX_GPUS GPUs as far as the document says, or
 * FUZZ_MAX_GPUS_LINEAR under a placement whose cost is linear in the GPUs
 * (dedicated, manual, none), or more than the library's limit (refused
 * before anything is allocated). Caps
 * the MILP policies' branch and bound at FUZZ_MILP_NODES nodes per solve
 * (placement.node_limit) and lifts their wall-clock limit to the largest
 * allowed (10^6 s): a solve cut by the clock would depend on machine speed,
 * and fuzz_simulate compares two runs of a scenario byte for byte (with the
 * default 60 s, libFuzzer's timeout would report a hang). */
#define FUZZ_MAX_GPUS 16
#define FUZZ_MAX_GPUS_LINEAR 4096
#define FUZZ_MILP_NODES 200
gboolean fuzz_validation_cheap(CsScenario *sc);

/* Validates sc and, when its work is small (fuzz_work_small), runs it with
 * every observer checking the invariants of docs/scenario.md, then checks
 * that its effective scenario reproduces the results byte for byte. Returns
 * TRUE when it ran. Invalid scenarios are no finding: it returns FALSE. */
gboolean fuzz_run_checked(CsScenario *sc);

/* Runs sc (of n_models models on n_gpus GPUs) with the observers of
 * fuzz_run_checked; a dispatch policy's misuse (CS_ERROR_POLICY naming it)
 * is an expected end, any other failure a finding. Returns the results, or
 * NULL when the run stopped on a misuse. */
CsResults *fuzz_run_policy(CsScenario *sc, int n_models, int n_gpus);

/* For the trace harnesses: parses each scenario of templates (NULL-ended),
 * points its "trace.file" at path, validates it and runs it as
 * fuzz_run_checked does, so that trace content reaches the trace clients'
 * compilation (windows, intervals, mapping) and the simulation. */
void fuzz_trace_scenarios(const char *const *templates, const char *path);

/* An open /dev/null for the printing functions. */
FILE *fuzz_null_file(void);

#endif
