/*
 * replset_host.h: the harness's side of the replicated set
 * (backends/replset.h): starts the set of a run, lending it the run's stop
 * predicate and the services that live in the harness and faults/ (the
 * replication proxy of faults/proxy.h, iptables rules of harness/iptables.h
 * and their reaper, harness/reaper.h).
 */
#ifndef LS_HARNESS_REPLSET_HOST_H
#define LS_HARNESS_REPLSET_HOST_H

#include "util/err.h"

struct run;

/* After cluster_start and the workers' proxy: replset_start for r's
 * workload and nodes, with a host on r (freed by replset_free). Sets
 * r->repl (also on failure, when the set was allocated: the caller frees
 * it with replset_free). 0 or negative with err. */
int run_replset_start(struct run *r, struct ls_err *err);

#endif
