/*
 * schedule.h: turns a workload's explicit fault schedule (at, duration,
 * every, count) and the nemesis's drawn faults (the loader's nemesis.h) into
 * fault occurrences, starts and ends them at their times, and writes every
 * start, end and skip to faults.jsonl. The harness main loop asks for the
 * next due time, sleeps until then, and ticks. With a quiet tail
 * (workload quiet_tail) nothing starts in the run's last quiet_tail and
 * every active fault ends when it begins; schedule_heal ends the rest.
 */
#ifndef LS_SCHEDULE_H
#define LS_SCHEDULE_H

#include <stdint.h>

#include "faults/fault.h"

struct fault_env;
struct workload;

struct schedule {
    int nspecs;
    const struct fault_spec **specs; /* the workload's faults, then those added (borrowed) */
    int nexplicit;          /* specs[0..nexplicit) are the workload's faults: */
    int64_t tail_start;     /* run-relative ns the quiet tail begins (duration: none) */
    int serial;             /* nemesis overlap: false: an added spec's start waits while
                               another added spec's occurrence is active */
    int64_t *next_start;    /* per spec: run-relative ns of the next occurrence, INT64_MAX = done */
    int64_t *started;       /* per spec: occurrences so far */
    int64_t added_free_at;  /* serial nemesis: planned end of the last added occurrence
                               that ended (a deferred start is due then), 0 none */
    struct fault_inst *active;
    int *active_si;         /* per active occurrence: its spec's index */
    int nactive, cap;
};

int schedule_init(struct schedule *s, const struct workload *w);
/* Add specs that are not in the workload's faults: (the nemesis's drawn
 * schedule; borrowed: they must outlive s). Call before the first tick.
 * Returns 0 or LS_ENOMEM. */
int schedule_add(struct schedule *s, const struct fault_spec *fs, int n);
void schedule_free(struct schedule *s);
/* Run-relative ns of the next start or end; INT64_MAX when nothing is due. */
int64_t schedule_next(const struct schedule *s);
/* Start and end whatever is due at the env's now, acting through env. */
void schedule_tick(struct schedule *s, const struct fault_env *env);
/* End every active fault now (the final heal before the checkers run):
 * every kind's stop is called and every end is logged. */
void schedule_heal(struct schedule *s, const struct fault_env *env);
/* Faults active right now (for progress). */
int schedule_active(const struct schedule *s);

/* Contract: when the next occurrence of spec si is due (run-relative ns):
 * its planned time, or for a serial nemesis spec deferred behind another
 * added occurrence the planned end of that one, whichever is later. An
 * occurrence started after its due time is late by the difference (the
 * harness was stalled: docs/faults.md "Late faults"). */
int64_t schedule_due(const struct schedule *s, int si);

/* "holder", "worker:3", "node:0", ... */
void fault_target_name(const struct fault_spec *spec, char *buf, size_t n);

#endif
