/*
 * incident.h: the run's own machinery failing under it. A worker that dies
 * by a signal nobody in the harness sent, a lock node that exits without a
 * fault, the proxy dying, the storage node gone before its final counters
 * were read: the run still ends through its teardown with a verdict, and
 * each such event is an incident, one line in run.json's "incidents". A
 * run with incidents did not run as planned: it is marked interrupted (it
 * cannot pass) and the checker lists every incident in its warnings.
 */
#ifndef LS_INCIDENT_H
#define LS_INCIDENT_H

#include "harness/run.h"

/* Append one incident line to r->incidents (created on first use). */
void incident_add(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Called at the start of teardown, before the workers are stopped: every
 * worker process already gone that no fault and no teardown ended, and
 * that exited non-zero or by a signal, is an incident. */
void incident_scan_workers(struct run *r);

/* Called once the workers stopped: a worker that gave up because its
 * environment failed it (its event log could not grow: disk full; its
 * connections could not be made) is not an incident but the run's error:
 * returns LS_EIO with err naming the first such worker and why, else 0. */
int incident_worker_error(struct run *r, struct ls_err *err);

/* Called after the workers and the proxy stopped, before the nodes: every
 * lock or storage node the run expects alive that has exited is reaped and
 * is an incident (its pid is set to 0, so nothing signals a reused pid). */
void incident_scan_nodes(struct run *r);

/* The final heal failed with eh: returns 1 (and records an incident) when
 * the proxy process is dead, so there is no rule left to outlive the run;
 * 0 when the failure is a real error the caller must report. */
int incident_proxy_dead(struct run *r, const struct ls_err *eh);

#endif
