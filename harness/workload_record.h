/*
 * workload_record.h: the loader's rules for lock.impl record (record mode:
 * the user's own program locks and reports; harness/workload_record.c).
 */
#ifndef LS_WORKLOAD_RECORD_H
#define LS_WORKLOAD_RECORD_H

#include "harness/workload.h"

struct ynode;
struct ydiag;

/* Cross-key rules, once every key of w is loaded (root: the document, for
 * positions). Errors go to dg. */
void workload_record_check(const struct workload *w, const struct ynode *root, struct ydiag *dg);

#endif
