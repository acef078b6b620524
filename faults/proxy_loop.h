/*
 * proxy_loop.h: the proxy process's own state (faults/proxy.c), shared with
 * its command-rule part (faults/proxy_cmd.c): connections, directions,
 * chunks, and the few helpers both call. Private to the proxy process.
 */
#ifndef LS_PROXY_LOOP_H
#define LS_PROXY_LOOP_H

#include <stdio.h>
#include <sys/types.h>

#include "faults/proxy_int.h"
#include "util/rng.h"

#define BUF_INIT 16384
#define READ_MIN 4096
#define MAX_HELD (4u << 20)
#define Q_INIT 8
#define MAX_EVENTS 128

enum tag_kind { TAG_LISTEN, TAG_WAKE, TAG_TIMER, TAG_SIGNAL, TAG_CONN };

struct pconn;
struct pcmd;

struct ptag {
    int kind;          /* enum tag_kind */
    int idx;           /* TAG_LISTEN: link; TAG_CONN: side (0 client, 1 node) */
    struct pconn *c;   /* TAG_CONN */
};

struct pchunk {
    size_t len;        /* bytes of this chunk still to write */
    int64_t release;   /* CLOCK_MONOTONIC ns it may leave */
};

/* One direction: bytes read from fd[k], written to fd[1 - k]. */
struct pdir {
    char *buf;
    size_t cap, head, tail;     /* waiting bytes are buf[head, tail) */
    struct pchunk *q;           /* ring of chunks covering buf[head, tail) in order */
    size_t qcap, qhead, qn;
    int64_t last_release;       /* release of the newest chunk */
    int64_t wake;               /* time this direction waits for; 0 = none */
    double tokens;              /* token bucket (rate) */
    int64_t refill_ns;
    int64_t next_ok;            /* gap: no write before this */
    int eof;                    /* the source sent FIN */
    int shut;                   /* FIN passed on to the sink */
    int wblocked;               /* the sink's send buffer is full */
    size_t unpushed;            /* to-node under a command rule: bytes at the tail read but
                                 * in no chunk yet (a request not complete) */
};

struct pconn {
    int link;
    int fd[2];                  /* 0 client side, 1 node side */
    int connecting;             /* node connect in progress */
    int dead;
    int lost_bytes;             /* a blackhole dropped bytes of this stream: see apply_table */
    int gone[2];                /* side hung up and left the epoll set; its last bytes drain */
    int auth_pending;           /* the node's reply to the proxy's AUTH is still to come */
    size_t auth_len;
    char auth_line[64];         /* its first bytes, for the log when it is not +OK */
    uint32_t ev[2];             /* epoll events registered per side */
    struct ptag tag[2];
    struct pdir d[2];           /* d[PROXY_TO_NODE], d[PROXY_FROM_NODE] */
    struct pconn *prev, *next;  /* live list */
    struct pconn *next_dead;
    int talked;                 /* a byte was read from either side: too late to begin parsing */
    struct pcmd *cmd;           /* command-rule state while parsing (proxy_cmd.c), or NULL */
};

struct pstate {
    const struct proxy_child *pc;
    struct proxy_shm *shm;
    struct proxy_stats_shm *stats;
    int nlinks, nnodes;
    int ep, timer_fd, sig_fd;
    struct ptag *ltags, wtag, ttag, stag;
    struct proxy_rule *rules;   /* local copy, nlinks * 2 */
    struct pconn *live, *dead;
    int ntimed;                 /* directions with wake != 0 */
    int64_t armed;              /* timerfd deadline, 0 = disarmed */
    struct rng rng;
    FILE *log;
    int64_t t0;
    int stopping;
    uint64_t gen;
    int64_t accept_errors, connect_errors;
    struct proxy_cmd_rule cmd[PROXY_MAX_CMD_RULES]; /* local copy of the command rules */
    uint32_t cmd_epoch[PROXY_MAX_CMD_RULES];  /* bumped when a slot takes a rule after none */
    uint64_t cmd_pending[PROXY_MAX_CMD_RULES]; /* drop-replies matched, reply not yet removed */
};

void plog(struct pstate *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const struct proxy_rule *rule_of(const struct pstate *st, const struct pconn *c, int dir);
/* End the pair (RST when reset); freed after the current batch of events. */
void conn_kill(struct pstate *st, struct pconn *c, int reset);
/* Queue len bytes already at the buffer's tail, released at release. */
int push_chunk(struct pdir *d, size_t len, int64_t release, int64_t now);
/* Write what direction k may write now. */
void dir_flush(struct pstate *st, struct pconn *c, int k, int64_t t);

/* ---- command rules (proxy_cmd.c) ---- */
/* A to-node read of n bytes (at d->tail, not yet counted in it) on a link a
 * command rule covers, or on a connection still parsed: parse, act, queue,
 * flush. rel: when the bytes may leave under the link's own rule. */
void pcmd_to_node(struct pstate *st, struct pconn *c, size_t n, int64_t t, int64_t rel);
/* A from-node read of n bytes on a parsed connection (c->cmd). */
void pcmd_from_node(struct pstate *st, struct pconn *c, size_t n, int64_t t, int64_t rel);
/* The rules changed: a parsed connection whose link no rule covers now
 * stops (a lost one is reset); a connection that talked unparsed on a link
 * a rule covers now is reset (replies to requests in flight cannot be
 * paired: it is followed from its first byte once the client reconnects).
 * Returns 1 when c was reset. */
int pcmd_apply(struct pstate *st, struct pconn *c, int64_t t);
/* A source ended: pass the request bytes held for parsing on. */
void pcmd_eof(struct pstate *st, struct pconn *c, int64_t t);
/* Free c's parse state; a drop-reply still owed is no longer pending. */
void pcmd_free(struct pstate *st, struct pconn *c);
/* Read the command rule slots (inside the seqlock read). */
void pcmd_read_rules(struct pstate *st);

#endif
