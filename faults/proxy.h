/*
 * proxy.h: lockstorm's TCP proxy between the workers and the lock nodes
 * (docs/faults.md "Link faults"). One listener on 127.0.0.1 per (worker, node) link,
 * so a fault can slow or cut any subset of links. The proxy is a process
 * forked from the harness (the harness stays single-threaded), driven by
 * epoll, dying with the harness. The harness controls it through a shared
 * rule table: one rule per link and direction, written by the harness,
 * applied by the proxy, which acknowledges each generation of the table;
 * a change counts only once acknowledged. With no rule set the proxy
 * forwards each read at once (TCP_NODELAY on both sides, no allocation per
 * chunk). A node with a password (lock_node.password) gets AUTH from the
 * proxy first on every connection, and its +OK never reaches the client:
 * clients (external adapters among them, whose protocol carries no
 * password) reach a protected node as if it had none. Not here: which links
 * a fault picks (faults/link_target.h) or the fault kinds themselves
 * (faults/link.c). The storage node is never proxied.
 */
#ifndef LS_PROXY_H
#define LS_PROXY_H

#include <stdint.h>
#include <sys/types.h>

#include "model/node.h"
#include "util/err.h"

#define PROXY_MAX_NODES 32
#define PROXY_ACK_TIMEOUT_NS (5 * LS_NS_PER_S) /* generous: a loaded CI machine can starve the proxy process for a second */

enum proxy_dir { PROXY_TO_NODE = 0, PROXY_FROM_NODE = 1 };

/* Ordered by severity: when several faults cover one link the most severe
 * partition wins. */
enum proxy_partition {
    PROXY_PART_NONE,
    PROXY_PART_HOLD,       /* bytes kept, delivered when the partition heals */
    PROXY_PART_BLACKHOLE,  /* bytes read and dropped; connections stay open */
    PROXY_PART_RESET,      /* connections reset (RST), new ones accepted and reset */
};

/* What one direction of one link does to the bytes crossing it. All zero:
 * forward at once. */
struct proxy_rule {
    int64_t delay_ns;      /* each chunk leaves >= read time + delay + U[0, jitter] */
    int64_t jitter_ns;
    int partition;         /* enum proxy_partition */
    int64_t rate;          /* bytes/s (token bucket), 0 = unlimited */
    int64_t slice;         /* at most this many bytes per write, 0 = off */
    int64_t gap_ns;        /* pause after each write (with slice), 0 = none */
    uint32_t cmd_mask;     /* to-node: the command rule slots covering it (composed by the
                            * proxy from proxy_cmd_set; ignored in proxy_fault_set) */
};

/* Which fields of a proxy_rule a fault sets (proxy_fault_set). */
#define PROXY_SET_LATENCY 1u    /* delay_ns, jitter_ns */
#define PROXY_SET_PARTITION 2u  /* partition */
#define PROXY_SET_RATE 4u       /* rate */
#define PROXY_SET_SLICE 8u      /* slice, gap_ns */

/* Direction bits of one link in proxy_fault_set's dirs[]. */
#define PROXY_DIR_BIT(d) (1u << (d))
#define PROXY_BOTH (PROXY_DIR_BIT(PROXY_TO_NODE) | PROXY_DIR_BIT(PROXY_FROM_NODE))

struct proxy_config {
    int nworkers;
    int nnodes;                      /* 1..PROXY_MAX_NODES */
    const struct lock_node *nodes;   /* where node n really listens, and its password: the
                                      * proxy authenticates each connection to it for the
                                      * client (borrowed for the call) */
    const char *log_path;            /* proxy log (appended), or NULL for none */
    uint64_t seed;                   /* jitter draws */
};

/* Command rules (docs/faults.md "Per-command faults"): what the proxy does
 * to the requests (client -> node) a rule matches. The proxy parses a
 * link's requests and replies only while a command rule covers the link. */
#define PROXY_MAX_CMD_RULES 16        /* command rules in force at once, over all links */
#define PROXY_CMD_BOUND 65536         /* bytes of one request held to parse it; a larger one
                                       * passes unparsed (counted: cmd_oversized) */
#define PROXY_CMD_NAME_MAX 32
#define PROXY_CMD_SHA_MAX 40
#define PROXY_CMD_KEY_MAX 64
#define PROXY_CMD_REPLY_MAX 120

enum proxy_cmd_action {
    PROXY_CMD_DELAY,       /* hold the request (and what follows it) delay_ns more */
    PROXY_CMD_DROP,        /* never forward it; the connection is lost (see proxy.c) */
    PROXY_CMD_DROP_REPLY,  /* forward it, drop the node's reply; the connection is lost */
    PROXY_CMD_ERROR,       /* never forward it; answer "-<reply>\r\n" in its place */
};

struct proxy_cmd_rule {
    char command[PROXY_CMD_NAME_MAX + 1];  /* upper case, as the request's argument 0 */
    char sha[PROXY_CMD_SHA_MAX + 1];       /* "" or a prefix of EVALSHA's script SHA (lower case) */
    char key[PROXY_CMD_KEY_MAX + 1];       /* "" or a glob the request's first key must match */
    char reply[PROXY_CMD_REPLY_MAX + 1];   /* PROXY_CMD_ERROR: the error line, no '-', no CRLF */
    int32_t action;                        /* enum proxy_cmd_action */
    int64_t delay_ns;                      /* PROXY_CMD_DELAY */
    int64_t limit;                         /* act on at most this many matches; 0 = every one */
};

/* What one command rule met since it was set. */
struct proxy_cmd_stats {
    uint64_t matched;        /* requests that matched it */
    uint64_t acted;          /* of those, acted on (matched - acted: past its limit) */
};

/* Counters of one link since the proxy started (read from shared memory). */
struct proxy_link_stats {
    uint64_t accepted;       /* connections accepted on the link's listener */
    uint64_t open;           /* connection pairs open right now */
    uint64_t bytes[2];       /* bytes forwarded, per enum proxy_dir */
    uint64_t dropped[2];     /* bytes dropped by a blackhole, per direction */
    uint64_t writes[2];      /* writes that forwarded them, per direction */
    uint64_t resets;         /* connections reset (open ones and new ones refused) */
    uint64_t cmd_oversized;  /* requests larger than PROXY_CMD_BOUND passed unparsed */
    uint64_t cmd_unfollowed; /* connections whose stream a command rule could not follow
                              * (not RESP2, subscribe / monitor / RESP3): passed unparsed */
    uint64_t cmd_lost;       /* connections reset at their next request after a drop */
    uint64_t cmd_taken;      /* connections open and used when a command rule came to cover
                              * their link: reset then (also in resets), followed on reconnect */
};

/* What the proxy reported when it acknowledged a change. */
struct proxy_ack {
    uint64_t generation;     /* the rule-table generation it applied */
    uint64_t resets;         /* connections it reset while applying it */
    int64_t waited_ns;       /* from the change to the acknowledgement */
};

struct proxy;

/* Start the proxy: bind every listener (127.0.0.1, free ports) in this
 * process, fork the proxy (it inherits them; PR_SET_PDEATHSIG, its own
 * process group) and wait (bounded) until it runs. On success *out is the
 * handle (proxy_stop frees it). On failure nothing is left running and a
 * negative code is returned (LS_EENV: ports, fds, fork). */
int proxy_start(const struct proxy_config *cfg, struct proxy **out, struct ls_err *err);
/* Stop the proxy by pid (SIGTERM, 2 s, SIGKILL), reap it and free p.
 * Accepts NULL. */
void proxy_stop(struct proxy *p);
pid_t proxy_pid(const struct proxy *p);
/* The nnodes addresses worker w must use (borrowed until proxy_stop). */
const struct lock_node *proxy_worker_nodes(const struct proxy *p, int worker);
/* Node n now listens on port (a restarted node): new connections go there. */
void proxy_set_upstream(struct proxy *p, int node, int port);

/* Fault id puts rule's fields `what` on the link directions in dirs[]
 * (nworkers * nnodes entries, index worker * nnodes + node, each a set of
 * PROXY_DIR_BIT). Faults compose per link and direction: the largest delay
 * and jitter, the most severe partition, the smallest non-zero rate and
 * slice, the largest gap. Returns 0 once the proxy has acknowledged the new
 * table (ack filled when not NULL), LS_ETIMEOUT when it did not within 1 s,
 * LS_EENV when it is gone. An id already set is replaced. */
int proxy_fault_set(struct proxy *p, int id, unsigned what, const struct proxy_rule *rule,
                    const uint8_t *dirs, struct proxy_ack *ack, struct ls_err *err);
/* Remove fault id's rules (no-op for an unknown id) and wait for the ack. */
int proxy_fault_clear(struct proxy *p, int id, struct ls_err *err);
/* Remove every rule (the final heal) and wait for the ack. */
int proxy_heal(struct proxy *p, struct ls_err *err);
/* Fault id puts command rule on the links sel marks (nworkers * nnodes
 * entries, 1 = covered; requests, to-node). Command rules compose by slot:
 * a request takes the matching rule in the lowest slot, and a new rule
 * takes the lowest free slot (one freed by an acknowledged clear), so the
 * winner is not by order of setting. Returns as
 * proxy_fault_set; LS_EUSAGE when PROXY_MAX_CMD_RULES are in force.
 * proxy_fault_clear(id) lifts it. */
int proxy_cmd_set(struct proxy *p, int id, const struct proxy_cmd_rule *rule, const uint8_t *sel,
                  struct proxy_ack *ack, struct ls_err *err);
/* The counters of fault id's command rule (zero when it had none); exact
 * once proxy_fault_clear(id) returned. */
void proxy_cmd_stats(const struct proxy *p, int id, struct proxy_cmd_stats *out);
/* The rule in force now for one link direction (what the table holds). */
void proxy_rule_of(const struct proxy *p, int worker, int node, int dir, struct proxy_rule *out);
void proxy_link_stats(const struct proxy *p, int worker, int node, struct proxy_link_stats *out);

/* The proxy process itself (proxy.c); called in the forked child only. */
struct proxy_child;
int proxy_main(const struct proxy_child *pc);

#endif
