/*
 * redlock.h: the parts of the Redlock implementation (redlock.c) that tests
 * and the loader need: its options struct, the quorum and validity
 * arithmetic as pure functions, and the cross-option check. The lock
 * itself is reached through its ops table ("redlock" in the registry).
 */
#ifndef LS_REDLOCK_H
#define LS_REDLOCK_H

#include <stddef.h>
#include <stdint.h>

#define REDLOCK_MAX_NODES 15

enum redlock_clock { REDLOCK_CLOCK_MONOTONIC, REDLOCK_CLOCK_REALTIME };
enum redlock_fencing { REDLOCK_FENCE_NONE, REDLOCK_FENCE_MAX_OF_QUORUM };

/* `lock.options` of redlock (its options table is in redlock.c). */
struct redlock_options {
    int64_t node_timeout;   /* ns: connect + reply budget of one round on all nodes */
    double drift_factor;    /* drift = ttl * drift_factor + 2ms */
    int64_t quorum;         /* 0 = majority (n/2 + 1) */
    int unsafe;             /* allow quorum below a majority (negative control) */
    int clock;              /* enum redlock_clock: clock of the elapsed-time check */
    int fencing;            /* enum redlock_fencing */
};

/* Nodes needed for a grant: override when > 0, else the majority n/2 + 1.
 * Returns 0 for n < 1. */
int redlock_quorum(int n, int override);

/* The clock drift allowance: ttl * drift_factor + 2ms (ns, rounded down). */
int64_t redlock_drift(int64_t ttl_ns, double drift_factor);

/* Time left on a lock after an acquire/extend round that took elapsed_ns:
 * ttl - elapsed - drift. Zero or negative means no grant. */
int64_t redlock_validity(int64_t ttl_ns, int64_t elapsed_ns, double drift_factor);

/* Cross-option rules for n nodes: 1 <= n <= REDLOCK_MAX_NODES, quorum <= n,
 * and a quorum below a majority only with unsafe. opts may be NULL (the
 * defaults). Returns 0, or -1 with a one-line reason in why. */
int redlock_check(const struct redlock_options *opts, int n, char *why, size_t len);

#endif
