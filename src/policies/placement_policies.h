/* The placement policies known to the registry (placement_registry.c). */
#ifndef CS_PLACEMENT_POLICIES_H
#define CS_PLACEMENT_POLICIES_H

#include "placement.h"

extern const CsPlacementPolicy cs_place_manual;    /* replicas written in the scenario */
extern const CsPlacementPolicy cs_place_dedicated; /* each model alone on a GPU, largest batch within SLO */

#endif
