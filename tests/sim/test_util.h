/* Helpers shared by the engine tests: a temporary directory holding a small
 * synthetic profile, and scenarios written against it. */
#ifndef CS_TEST_UTIL_H
#define CS_TEST_UTIL_H

#include "clustersim/clustersim.h"

/* Creates a temporary directory with "synthetic.json": GPU type "gpu" and
 * models "a", "b", "c" with latency(b) = alpha * b + beta (ms) as given by
 * the caller for model "a" (b and c: alpha 1, beta 4), input 1000 bytes,
 * output 10 bytes. Returns the directory (g_free; remove with test_dir_remove). */
char *test_dir_with_profile(double alpha_ms, double beta_ms);
void test_dir_remove(char *dir);

/* Parses scenario JSON text with base_dir dir; fails the test on error. */
CsScenario *test_scenario(const char *dir, const char *json);

/* Runs a scenario; fails the test on error. */
CsResults *test_run(CsScenario *sc, const CsRunOptions *opt);
/* test_run keeping the time series (CsRunOptions.timeseries). */
CsResults *test_run_series(CsScenario *sc);

#endif
