/* The configuration formulation's master problem (milp_config.c says what
 * it is): its columns, listed in full or generated. Private to the MILP. */
#ifndef CS_MILP_CONFIG_H
#define CS_MILP_CONFIG_H

#include <glpk.h>

#include "milp_internal.h"

/* Configurations of all types listed in full up to this many (unless
 * CsMilpOptions.enumerate_limit says otherwise): 20000 columns keep the
 * master's LP small next to the per-GPU model's. */
#define CS_MILP_CFG_ENUMERATE_MAX 20000

/* A reduced cost above this (req/s) adds a column. */
#define CS_MILP_CFG_RC_TOL 1e-6

typedef struct {
  int type;   /* GPU type index */
  int n;      /* replicas */
  int *items; /* m * n_batches + k, ascending */
} MilpConfig;

typedef struct {
  const MilpProblem *pb;
  const CsPlacementProblem *in;
  const CsMilpOptions *opt;
  int nm, nb, ng, nt;
  int *type_of_gpu; /* [g] */
  int *type_gpu0;   /* [t]: its first GPU (whose candidates the type shares) */
  int *type_n;      /* [t]: its number of GPUs */
  double *rate;     /* [m]: max(rate, 0) */
  glp_prob *lp;
  int *y_col;       /* [m * nb + k], 0 when (m, k) has no candidate */
  int *g_row, *b_row, *r_row; /* [m]: goodput, batch choice, replica cap */
  int *l_row;       /* [m * nb + k]: link to y */
  int *c_row;       /* [t]: GPUs of the type */
  GPtrArray *configs; /* MilpConfig *; configs[i] is column first_z + i */
  int first_z;
  GHashTable *seen; /* a configuration's key -> its index + 1 */
} MilpMaster;

static inline const CsBatchOption *item_opt(const MilpMaster *ms, int t, int item)
{
  return ms->pb->x_opt[milp_xi(ms->pb, item / ms->nb, item % ms->nb, ms->type_gpu0[t])];
}

/* The goodput credit of one replica: min(goodput, rate), as in milp.c. */
static inline double item_credit(const MilpMaster *ms, int t, int item)
{
  return MIN(item_opt(ms, t, item)->goodput, ms->rate[item / ms->nb]);
}


/* The rows and the w and y columns of the master; no configuration yet. */
void cs_milp_cfg_init(MilpMaster *ms, const MilpProblem *pb, const CsPlacementProblem *in,
                      const CsMilpOptions *opt);

/* Frees the master; accepts a zeroed one. */
void cs_milp_cfg_clear(MilpMaster *ms);

/* The column of configuration (type, items[0..n-1], ascending), added when
 * new (*added says). Returns its index in ms->configs. */
int cs_milp_cfg_add(MilpMaster *ms, int type, const int *items, int n, gboolean *added);

/* Adds every configuration of every type when there are at most limit
 * (none when limit < 0); returns whether it did. */
gboolean cs_milp_cfg_enumerate(MilpMaster *ms, int limit);

/* Column generation until no configuration has a positive reduced cost or
 * deadline_us (or opt->time_up). Returns the best bound on the integer
 * optimum it proved (the sum of rates when none); *converged: the LP is
 * solved over all configurations (its duals are then the master's row
 * duals); *rounds counts the rounds. */
double cs_milp_cfg_generate(MilpMaster *ms, gint64 deadline_us, gboolean *converged, int *rounds);

/* Reduced-cost data of the converged LP, kept for after the integer solve
 * (which replaces the LP solution). */
typedef struct {
  double *value;   /* [t * nm * nb + item] */
  double *c_dual;  /* [t] */
} MilpDuals;

/* Saves the reduced-cost data of the master's current LP solution. */
void cs_milp_cfg_duals_save(const MilpMaster *ms, MilpDuals *d);

void cs_milp_cfg_duals_clear(MilpDuals *d);

/* Adds (as integer columns) every configuration whose reduced cost under d
 * is above -gap when there are at most limit of them. Returns how many
 * there are, 0 (and adds none) when more. */
int cs_milp_cfg_add_improving(MilpMaster *ms, const MilpDuals *d, double gap, int limit);

#endif
