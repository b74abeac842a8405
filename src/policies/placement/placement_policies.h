/* The placement policies known to the registry (placement_registry.c). */
#ifndef CS_PLACEMENT_POLICIES_H
#define CS_PLACEMENT_POLICIES_H

#include "clustersim/placement.h"

extern const CsPlacementPolicy cs_place_manual;    /* replicas written in the scenario */
extern const CsPlacementPolicy cs_place_search;    /* searched by simulation from the others */
extern const CsPlacementPolicy cs_place_dedicated; /* each model alone on a GPU, largest batch within SLO */
extern const CsPlacementPolicy cs_place_usher;     /* Usher as in the thesis, metric param (ao) */
extern const CsPlacementPolicy cs_place_wao_usher; /* Usher with WAO as Creq */
extern const CsPlacementPolicy cs_place_wsm_usher; /* Usher with WSM as Creq */
extern const CsPlacementPolicy cs_place_milp;      /* thesis MILP (GLPK), metric param (ao) */
extern const CsPlacementPolicy cs_place_ao_milp;   /* MILP with AO as Creq */
extern const CsPlacementPolicy cs_place_wsm_milp;  /* MILP with WSM as Creq */
extern const CsPlacementPolicy cs_place_igniter;   /* iGniter provisioning, plan mapped in order */

#endif
