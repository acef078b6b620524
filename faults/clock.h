/*
 * clock.h: the `clock` fault kind (faults/clock.c) and its preparation.
 * A clock fault steps (`jump`) or skews (`drift`) CLOCK_REALTIME of lock
 * nodes, through the LD_PRELOAD shim (faults/shim/clockshim.c) reading a
 * control file per node (util/clockctl.h), or the client clock of workers,
 * which a built-in lock that measures elapsed time on the realtime clock
 * reads (redlock clock: realtime) and an external lock's adapter process
 * runs under (the same shim). The harness's own clocks are never shifted.
 */
#ifndef LS_FAULT_CLOCK_H
#define LS_FAULT_CLOCK_H

#include "model/workload.h"
#include "util/err.h"

/* Does w schedule clock faults (explicitly or as a nemesis kind)? */
int clockfault_used(const struct workload *w);

/* Does w have client clock faults: a clock fault aimed at workers
 * (worker:N, random-worker, all-workers), or `clock` among the nemesis
 * kinds (whose targets are drawn later)? Then every adapter process of an
 * external lock is started with the clock shim reading its worker's
 * client clock (lock_config.client_clock). */
int clockfault_client(const struct workload *w);

/* Before the cluster starts: when w uses clock faults, check that the shim
 * can be found and create a true-clock control file for every lock node
 * (rundir/nodes/node-N.clock: the node is then started with the shim) and
 * every worker (rundir/clocks/worker-NNN.clock). Without clock faults it
 * does nothing, so nodes start exactly as before. Returns 0 or a negative
 * code with err set (LS_EENV: no shim). */
int clockfault_prepare(const struct workload *w, const char *rundir, struct ls_err *err);

#endif
