/* The controller's state, shared by the files of the cluster over time
 * (control.c: lives and acting; control_observe.c: what a controller reads).
 * Internal to src/sim. */
#ifndef CS_SIM_CONTROL_INTERNAL_H
#define CS_SIM_CONTROL_INTERNAL_H

#include "engine_state.h"

struct CsControl {
  Engine *e;
  const CsControllerPolicy *policy;
  void *state;
  int pending;            /* EV_CONTROL events in the queue */
  uint64_t changes;       /* cs_control_apply calls that changed something */
  GString *log;           /* "t_s\ttext\n" lines: the controller's notes and the changes */
  CsWarningList *warnings;
  int64_t added, loads, removals, provisions, releases;
  int64_t load_ns_total;  /* sum of the load times of the replicas that loaded */
};

static inline ReplicaLife *life_of(Engine *e, int r)
{
  return &g_array_index(e->replica_life, ReplicaLife, r);
}

static inline const CsReplica *replica_of(const Engine *e, int r)
{
  return &g_array_index(e->replicas, CsReplica, r);
}

#endif
