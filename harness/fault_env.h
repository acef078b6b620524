/*
 * fault_env.h: the harness's side of faults/env.h. A run's fault env acts
 * on that run's workers, lock nodes, replicated set and proxy; the fault
 * kinds see only the ops table. State a kind keeps across occurrences
 * (kind_state) lives here, not in struct run.
 */
#ifndef LS_HARNESS_FAULT_ENV_H
#define LS_HARNESS_FAULT_ENV_H

#include "faults/env.h"

struct run;

/* Contract: make env act on r (borrowed: r outlives env). Returns 0, or
 * LS_ENOMEM with env->ctx NULL. Free with fault_env_free. */
int fault_env_init(struct fault_env *env, struct run *r);
/* Frees what env owns (kind states); accepts an env fault_env_init failed. */
void fault_env_free(struct fault_env *env);

#endif
