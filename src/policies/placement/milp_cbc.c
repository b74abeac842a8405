/* The MILP solved by CBC (COIN-OR branch and cut) instead of GLPK: the
 * problem built for GLPK (milp.c) is copied column by column into a CBC
 * model; see milp_internal.h. Compiled only when meson finds CBC's headers
 * (coinor-libcbc-dev); without them "solver": "cbc" is refused.
 *
 * The library is loaded when first asked for, not linked: CBC pulls in
 * BLAS, and Debian's BLAS (OpenBLAS) starts a thread when it loads, which
 * took SIGTERMs that the commands' main threads block while they write
 * (backend_cpu.c tells the same story); loading it with
 * OPENBLAS_NUM_THREADS=1 (unless the user set it) keeps it to the calling
 * thread. */
#include <dlfcn.h>
#include <float.h>
#include <math.h>

#include <coin/Cbc_C_Interface.h>

#include "milp_internal.h"

/* The C interface's functions, resolved from the library (same types as the
 * header's declarations). */
#define CBC_FUNCTIONS(X)                                                                         \
  X(Cbc_newModel) X(Cbc_loadProblem) X(Cbc_setObjSense) X(Cbc_setInteger) X(Cbc_setLogLevel)     \
  X(Cbc_setParameter) X(Cbc_setMaximumSeconds) X(Cbc_setMaximumNodes) X(Cbc_setMIPStartI) X(Cbc_solve)               \
  X(Cbc_bestSolution) X(Cbc_isProvenOptimal) X(Cbc_isProvenInfeasible) X(Cbc_getObjValue)     \
  X(Cbc_getBestPossibleObjValue) X(Cbc_deleteModel)
#define CBC_POINTER(name) static __typeof__(&name) p_##name;
CBC_FUNCTIONS(CBC_POINTER)
#undef CBC_POINTER

/* Debian 12's CBC 2.10 first, then the development name. */
static const char *const cbc_libraries[] = { "libCbcSolver.so.3", "libCbcSolver.so" };

gboolean cs_milp_cbc_load(char **why)
{
  static GMutex lock;
  static gboolean loaded;
  static char *failure;
  g_mutex_lock(&lock);
  if (!loaded && !failure) {
    g_setenv("OPENBLAS_NUM_THREADS", "1", FALSE);
    void *handle = NULL;
    for (size_t i = 0; !handle && i < G_N_ELEMENTS(cbc_libraries); i++)
      handle = dlopen(cbc_libraries[i], RTLD_NOW | RTLD_LOCAL);
    gboolean all = handle != NULL;
#define CBC_RESOLVE(name) \
    if (all) {                                                   \
      p_##name = (__typeof__(p_##name))dlsym(handle, #name);     \
      all = p_##name != NULL;                                    \
    }
    CBC_FUNCTIONS(CBC_RESOLVE)
#undef CBC_RESOLVE
    if (all) {
      loaded = TRUE;
    } else {
      const char *err = dlerror();
      failure = g_strdup_printf("CBC's library (libCbcSolver.so.3, Debian: coinor-libcbc3) "
                                "could not be loaded: %s", err ? err : "symbols missing");
    }
  }
  if (why)
    *why = failure ? g_strdup(failure) : NULL;
  gboolean ok = loaded;
  g_mutex_unlock(&lock);
  return ok;
}

/* GLPK's bound of a row or column as a (lower, upper) pair, infinite where
 * it has none. */
static void bounds(int type, double lb, double ub, double *lo, double *hi)
{
  *lo = type == GLP_LO || type == GLP_DB || type == GLP_FX ? lb : -DBL_MAX;
  *hi = type == GLP_UP || type == GLP_DB ? ub : type == GLP_FX ? lb : DBL_MAX;
}

int cs_milp_cbc_solve(glp_prob *lp, const CsMilpOptions *opt, gint64 deadline_us,
                      const double *start, double *x, double *objective, double *gap)
{
  g_return_val_if_fail(cs_milp_cbc_load(NULL), GLP_UNDEF);
  int n = glp_get_num_cols(lp), m = glp_get_num_rows(lp);
  int *ind = g_new(int, (size_t)m + 1);
  double *val = g_new(double, (size_t)m + 1);
  GArray *starts = g_array_sized_new(FALSE, FALSE, sizeof(CoinBigIndex), (guint)n + 1);
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *vals = g_array_new(FALSE, FALSE, sizeof(double));
  double *collb = g_new(double, (size_t)n + 1), *colub = g_new(double, (size_t)n + 1);
  double *obj = g_new(double, (size_t)n + 1);
  double *rowlb = g_new(double, (size_t)m + 1), *rowub = g_new(double, (size_t)m + 1);
  for (int j = 1; j <= n; j++) {
    CoinBigIndex s = (CoinBigIndex)rows->len;
    g_array_append_val(starts, s);
    int len = glp_get_mat_col(lp, j, ind, val);
    for (int k = 1; k <= len; k++) {
      int r = ind[k] - 1;
      g_array_append_val(rows, r);
      g_array_append_val(vals, val[k]);
    }
    bounds(glp_get_col_type(lp, j), glp_get_col_lb(lp, j), glp_get_col_ub(lp, j), &collb[j - 1],
           &colub[j - 1]);
    obj[j - 1] = glp_get_obj_coef(lp, j);
  }
  CoinBigIndex end = (CoinBigIndex)rows->len;
  g_array_append_val(starts, end);
  for (int i = 1; i <= m; i++)
    bounds(glp_get_row_type(lp, i), glp_get_row_lb(lp, i), glp_get_row_ub(lp, i), &rowlb[i - 1],
           &rowub[i - 1]);

  Cbc_Model *model = p_Cbc_newModel();
  p_Cbc_loadProblem(model, n, m, (const CoinBigIndex *)(void *)starts->data,
                  (const int *)(void *)rows->data, (const double *)(void *)vals->data, collb,
                  colub, obj, rowlb, rowub);
  p_Cbc_setObjSense(model, glp_get_obj_dir(lp) == GLP_MAX ? -1.0 : 1.0);
  for (int j = 1; j <= n; j++)
    if (glp_get_col_kind(lp, j) != GLP_CV)
      p_Cbc_setInteger(model, j - 1);
  p_Cbc_setLogLevel(model, 0);
  /* Wall-clock seconds, like the call's own limit; one thread, so that a
   * solve that finishes in time is deterministic. */
  p_Cbc_setParameter(model, "timeMode", "elapsed");
  p_Cbc_setParameter(model, "threads", "0");
  double left = (double)(deadline_us - g_get_monotonic_time()) / 1e6;
  p_Cbc_setMaximumSeconds(model, opt->time_up ? 1e9 : MAX(left, 0.001));
  /* node_limit: CBC's own node count, the same on any machine (one thread). */
  if (opt->node_limit > 0)
    p_Cbc_setMaximumNodes(model, opt->node_limit);
  if (start) {
    int *idx = g_new(int, (size_t)n);
    for (int j = 0; j < n; j++)
      idx[j] = j;
    p_Cbc_setMIPStartI(model, n, idx, start + 1);
    g_free(idx);
  }
  p_Cbc_solve(model);
  int status;
  const double *sol = p_Cbc_bestSolution(model);
  if (p_Cbc_isProvenOptimal(model))
    status = GLP_OPT;
  else if (p_Cbc_isProvenInfeasible(model))
    status = GLP_NOFEAS;
  else
    status = sol ? GLP_FEAS : GLP_UNDEF;
  *gap = NAN;
  if (sol) {
    for (int j = 1; j <= n; j++)
      x[j] = sol[j - 1];
    *objective = p_Cbc_getObjValue(model);
    double bound = p_Cbc_getBestPossibleObjValue(model);
    *gap = status == GLP_OPT ? 0.0 : fabs(*objective - bound) / MAX(fabs(*objective), 1e-9);
  }
  p_Cbc_deleteModel(model);
  g_free(ind);
  g_free(val);
  g_array_unref(starts);
  g_array_unref(rows);
  g_array_unref(vals);
  g_free(collb);
  g_free(colub);
  g_free(obj);
  g_free(rowlb);
  g_free(rowub);
  return status;
}
