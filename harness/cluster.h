/*
 * cluster.h: moved to backends/cluster.h (issue 15). This forward stays
 * only while faults/stall.c still includes it (the faults slice moves that
 * file onto faults/env.h); delete it with scripts/layers.allow's
 * faults/stall.c line. Nothing new includes this.
 */
#include "backends/cluster.h"
