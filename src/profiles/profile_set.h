/* Internal to src/profiles: the profile set's entries, shared by the set
 * and its lookups (profile.c) and the reader of profile files
 * (profile_load.c). */
#ifndef CS_PROFILE_SET_H
#define CS_PROFILE_SET_H

#include "profile.h"

typedef struct {
  CsGpuType type;
  char *origin;        /* name of the file that declared it, for duplicate messages */
  GHashTable *models;  /* model name -> ModelEntry*, borrowed from the set's list */
} GpuEntry;

typedef struct {
  CsModelProfile prof;
  char *origin;        /* name of the file that defined it */
} ModelEntry;

struct CsProfileSet {
  GPtrArray *gpus;        /* GpuEntry*, declaration order; owned */
  GHashTable *gpu_index;  /* name -> GpuEntry*, borrowed */
  GPtrArray *models;      /* ModelEntry*, load order; owned */
};

/* Free an entry; accept NULL. */
void cs_profile_gpu_entry_free(GpuEntry *g);
void cs_profile_model_entry_free(ModelEntry *m);

/* Orders batch points by batch size (qsort, bsearch). */
int cs_batch_point_compare(const void *a, const void *b);

#endif
