/*
 * proxy_int.h: what the harness side of the proxy (proxy_ctl.c) and the
 * proxy process (proxy.c) share: the layout of the shared-memory rule
 * table and the hand-over from one to the other at fork. Private to
 * faults/proxy*.c.
 *
 * The rule table is a seqlock: the harness makes seq odd, writes the rules
 * and the new generation, makes seq even, and wakes the proxy (eventfd).
 * The proxy copies the table while seq is even and unchanged, applies it,
 * stores applied_resets and then applied = generation, and wakes the
 * harness (a second eventfd). Every shared field is an atomic.
 */
#ifndef LS_PROXY_INT_H
#define LS_PROXY_INT_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "faults/proxy.h"

struct proxy_rule_shm {
    _Atomic int64_t delay_ns, jitter_ns, rate, slice, gap_ns;
    _Atomic int32_t partition;
    _Atomic uint32_t cmd_mask;         /* to-node only: the command rule slots covering it */
};

/* One command rule slot: the rule as words under the seqlock, its
 * counters written by the proxy alone (zeroed by the harness before the
 * slot is given to a new fault, while no generation in force uses it). */
#define PROXY_CMD_WORDS ((sizeof(struct proxy_cmd_rule) + 7) / 8)
struct proxy_cmd_shm {
    _Atomic uint64_t words[PROXY_CMD_WORDS];
    _Atomic uint64_t matched, acted;
};

struct proxy_stats_shm {
    _Atomic uint64_t accepted, open, resets;
    _Atomic uint64_t bytes[2], dropped[2], writes[2];
    _Atomic uint64_t cmd_oversized, cmd_unfollowed, cmd_lost, cmd_taken;
};

struct proxy_shm {
    _Atomic uint64_t seq;              /* seqlock over rules[] and generation */
    _Atomic uint64_t generation;       /* written under the seqlock */
    _Atomic uint64_t applied;          /* last generation the proxy applied */
    _Atomic uint64_t applied_resets;   /* connections reset applying it (stored before applied) */
    _Atomic int32_t ready;             /* the proxy's loop runs */
    _Atomic int32_t upstream_port[PROXY_MAX_NODES];
    int32_t nworkers, nnodes;
    struct proxy_cmd_shm cmd[PROXY_MAX_CMD_RULES]; /* under the seqlock (words) */
    /* followed by rules[nlinks][2] then stats[nlinks] (proxy_shm_rules / _stats) */
};

static inline size_t proxy_shm_size(int nlinks)
{
    return sizeof(struct proxy_shm) + (size_t)nlinks * 2 * sizeof(struct proxy_rule_shm) +
           (size_t)nlinks * sizeof(struct proxy_stats_shm);
}

static inline struct proxy_rule_shm *proxy_shm_rules(struct proxy_shm *s)
{
    return (struct proxy_rule_shm *)(void *)(s + 1);
}

static inline struct proxy_stats_shm *proxy_shm_stats(struct proxy_shm *s)
{
    int nlinks = s->nworkers * s->nnodes;
    return (struct proxy_stats_shm *)(void *)(proxy_shm_rules(s) + (size_t)nlinks * 2);
}

/* Everything the proxy process starts from (built by proxy_start before the
 * fork; the child owns the fds). */
struct proxy_child {
    struct proxy_shm *shm;
    int nworkers, nnodes;
    int *listen_fds;            /* nworkers * nnodes, index worker * nnodes + node */
    struct in_addr node_addrs[PROXY_MAX_NODES]; /* where node n listens (its port: upstream_port) */
    int wake_fd;                /* eventfd: the harness changed the table */
    int ack_fd;                 /* eventfd: the proxy applied a generation */
    const char *log_path;
    uint64_t seed;
    char *auth[PROXY_MAX_NODES];   /* node n's password as a RESP AUTH command, sent first on
                                    * each connection to it (its +OK swallowed), or NULL */
    size_t auth_len[PROXY_MAX_NODES];
};

#endif
