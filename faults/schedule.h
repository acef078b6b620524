/*
 * schedule.h: turns a workload's explicit fault schedule (at, duration,
 * every, count) into fault occurrences, starts and ends them at their times,
 * and writes every start, end and skip to faults.jsonl. The harness main
 * loop asks for the next due time, sleeps until then, and ticks.
 */
#ifndef LS_SCHEDULE_H
#define LS_SCHEDULE_H

#include <stdint.h>

#include "faults/fault.h"

struct run;

struct schedule {
    int nspecs;
    int64_t *next_start;    /* per spec: run-relative ns of the next occurrence, INT64_MAX = done */
    int64_t *started;       /* per spec: occurrences so far */
    struct fault_inst *active;
    int nactive, cap;
};

int schedule_init(struct schedule *s, const struct run *r);
void schedule_free(struct schedule *s);
/* Run-relative ns of the next start or end; INT64_MAX when nothing is due. */
int64_t schedule_next(const struct schedule *s);
/* Start and end whatever is due at run_now(r). */
void schedule_tick(struct schedule *s, struct run *r);
/* End every active fault now (the final heal before the checkers run). */
void schedule_heal(struct schedule *s, struct run *r);
/* Faults active right now (for progress). */
int schedule_active(const struct schedule *s);

/* "holder", "worker:3", "node:0", ... */
void fault_target_name(const struct fault_spec *spec, char *buf, size_t n);

#endif
