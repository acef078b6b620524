/*
 * workload_pg.h: the loader's rules for `cluster.topology: postgres` and
 * lock.impl pg-advisory (harness/workload_pg.c).
 */
#ifndef LS_WORKLOAD_PG_H
#define LS_WORKLOAD_PG_H

#include "harness/workload.h"

struct ynode;
struct ydiag;

/* Cross-key rules, once every key of w is loaded (root: the document, for
 * positions). Errors go to dg. */
void workload_pg_check(const struct workload *w, const struct ynode *root, struct ydiag *dg);

#endif
