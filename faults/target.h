/*
 * target.h: choosing the worker a fault acts on at the moment it starts.
 * `target: holder` means a worker holding a lock right now, `acquirer` one
 * inside an acquire call; pause, link and process faults pick them the same
 * way, from what the env says the workers are doing (faults/env.h).
 */
#ifndef LS_FAULTS_TARGET_H
#define LS_FAULTS_TARGET_H

#include <stddef.h>
#include <stdint.h>

struct fault_env;

/* Contract: 1 when worker i has been started and has not exited. */
int fault_worker_alive(const struct fault_env *env, int i);

/* Contract: the resource worker i holds (acquiring = 0) or is acquiring
 * (acquiring = 1) right now, or -1; only resource res counts unless
 * res < 0. since (may be NULL): when that grant (call) began, which tells
 * the same grant from a later one. */
int fault_busy_with(const struct fault_env *env, int i, int acquiring, int res, int64_t *since);
/* The name of resource res as the workload gives it (workers.resources'
 * list, or "r<res>"), for a fault's detail: into buf, or borrowed. */
const char *fault_res_name(const struct fault_env *env, int res, char *buf, size_t n);

/* Contract: polls (100 us) until some live worker is busy (as above) or the
 * deadline (ls_now_ns clock) passes or the run is interrupted. Among the
 * busy ones: a holder is drawn at random from the env's fault rng; an
 * acquirer is the one inside its acquire call the longest (the slow
 * acquire, e.g. between two non-atomic commands). Returns the worker, or -1
 * when none was busy. */
int fault_wait_busy(const struct fault_env *env, int acquiring, int res, int64_t deadline);

/* Contract: a live worker drawn from the env's fault rng (among the first
 * max), or -1 when none is alive. */
int fault_random_worker(const struct fault_env *env, int max);

#endif
