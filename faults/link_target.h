/*
 * link_target.h: what a link fault's target (struct link_target, loaded by
 * the workload loader's links.h) means at run time: the concrete
 * (worker, node) links it selects when a fault starts, minority / majority
 * drawn from the run's fault rng, and the short name faults.jsonl gives it.
 * Read by faults/link.c, clock.c and schedule.c; never talks to the proxy.
 */
#ifndef LS_FAULTS_LINK_TARGET_H
#define LS_FAULTS_LINK_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "model/workload.h"
#include "util/rng.h"

/* The word of a nodes selection (enum LINK_NODES_*): "all", "list",
 * "minority", "majority". */
const char *link_nodes_word(int nodes_sel);

/* Short name for faults.jsonl "target" (< 64 chars): "links:all/all",
 * "links:w0,1/n2", "links:all/minority", "isolate:node:1", "split:2". */
void link_target_name(const struct link_target *lt, char *buf, size_t n);

/* Resolve lt to links: sel[w * nnodes + n] = 1 for each selected link
 * (sel has nworkers * nnodes bytes, zeroed here). minority / majority draw
 * their nodes from rng. *nodes_used (may be NULL) gets the set of nodes
 * selected for at least one worker. Returns the number of links selected. */
int link_target_resolve(const struct link_target *lt, int nworkers, int nnodes, struct rng *rng,
                        uint8_t *sel, uint32_t *nodes_used);

#endif
