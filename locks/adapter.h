/*
 * adapter.h: one external adapter process and the protocol session with it
 * (docs/protocol.md): spawn (argv, never a shell; stdin/stdout pipes;
 * stderr to a file; in the caller's process group; dies with it), the hello
 * handshake, one request at a time with ids and a timeout, late replies
 * read and dropped, unsolicited events, protocol errors counted and quoted,
 * and the bye -> 1 s -> SIGTERM -> SIGKILL shutdown. Used by the `external`
 * lock (external.c) and by `lockstorm adapter-test` (harness/adapter_test.c).
 * Not here: what a grant means, tokens, restart policy (the callers').
 *
 * Threads: every call takes the adapter's mutex, so a worker's main thread
 * and its renewal thread may share one adapter; adapter_wait_event polls
 * without holding it, so it never delays a request.
 */
#ifndef LS_ADAPTER_H
#define LS_ADAPTER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "locks/adapter_proto.h"
#include "locks/lock.h"
#include "util/err.h"

#define ADAPTER_HELLO_TIMEOUT_NS (10LL * 1000 * 1000 * 1000)
#define ADAPTER_BYE_GRACE_NS (1000LL * 1000 * 1000)
#define ADAPTER_MAX_ARGS 64
#define ADAPTER_SAMPLES 3          /* protocol errors quoted in the stats */
#define ADAPTER_LOST_QUEUE 32
#define ADAPTER_RENEWED_QUEUE 32

struct adapter_config {
    char *const *argv;             /* NULL-terminated; borrowed for the adapter's life */
    const char *stderr_path;       /* the adapter's stderr, appended (NULL: /dev/null) */
    const char *log_path;          /* harness-side log: starts, exits, protocol errors,
                                    * log events (appended; NULL: none) */
    int worker;                    /* hello.worker */
    const struct lock_node *nodes; /* hello.nodes; borrowed */
    int nnodes;
    const char *options_json;      /* hello.options (a JSON object text; NULL: {}) */
    int64_t hello_timeout_ns;      /* 0: ADAPTER_HELLO_TIMEOUT_NS */
    /* called (under the adapter's mutex, so it must not call back into the
     * adapter) for every protocol error with what went wrong and the
     * offending line quoted ("" when none); NULL: none */
    void (*on_proto_error)(void *ctx, const char *what, const char *quoted);
    void *on_proto_error_ctx;
    /* 0 (a run): the adapter joins the caller's process group, so a pause
     * or kill of the worker reaches it and the reaper's kill of the
     * worker's group ends whatever it started. 1 (adapter-test, which has
     * no worker): the adapter leads a group of its own, SIGKILLed by
     * adapter_close once the adapter is gone, so what it started dies too */
    int own_group;
    /* "KEY=value" strings added to the adapter's environment (the clock
     * shim's LD_PRELOAD and control file under client clock faults),
     * NULL-terminated; borrowed for the adapter's life. NULL: none */
    char *const *env_add;
    /* record mode (extension `record`): the hello's "record" object as JSON
     * text (res, ttl_ms, duration_ms), borrowed; the adapter must list
     * `record` in its caps. Then `record`, `lost` and `renewed` events go
     * to one queue in the order read (adapter_wait_record), never to
     * adapter_wait_event. NULL: not record mode */
    const char *record_json;
};

struct adapter_stats {
    uint64_t starts;               /* processes started, the first included */
    uint64_t exits;                /* unexpected exits noticed */
    uint64_t requests;             /* requests sent */
    uint64_t timeouts;             /* requests with no reply in time */
    uint64_t late_replies;         /* replies to abandoned requests, dropped */
    uint64_t protocol_errors;
    uint64_t lost_events;
    uint64_t log_events;
    uint64_t renewed_events;       /* `renewed` events received (extension renewed) */
    uint64_t stalls;               /* `stall` requests answered ok (extension stall) */
    uint64_t record_events;        /* `record` events received (extension record) */
};

/* What adapter_request returns. */
enum adapter_rc {
    ADAPTER_REPLY = 0,     /* *reply filled and checked against the op */
    ADAPTER_TIMEOUT = 1,   /* sent, no reply in time: outcome unknown */
    ADAPTER_PROTO = 2,     /* a protocol error while waiting: outcome unknown */
    ADAPTER_DEAD = 3,      /* the adapter is gone; sent says whether the request left */
};

struct adapter {
    struct adapter_config cfg;
    pthread_mutex_t mu;
    int mu_init;
    pid_t pid;                     /* 0: no process */
    pid_t group;                   /* own_group: the last adapter's process group, or 0 */
    int to_fd, from_fd;            /* its stdin (we write), its stdout (we read); -1 closed */
    int alive;                     /* handshake done and no exit noticed since */
    int exit_pending;              /* an exit noticed, not yet reported by wait_event */
    char exit_text[64];            /* "exited 1", "killed by signal 9 (Killed)" */
    struct aproto_lines lines;
    int64_t next_id;
    int64_t pending_id;            /* request waiting for its reply, 0 none */
    int64_t abandoned[64];         /* ids given up on (timeout, protocol error): ring */
    int nabandoned;
    /* the hello */
    char name[APROTO_NAME_MAX];
    char version[APROTO_NAME_MAX];
    int protocol;
    unsigned caps;
    /* lost events not yet taken by wait_event: ring of (res, token) */
    struct {
        char *res, *token;
    } lost[ADAPTER_LOST_QUEUE];
    int lost_head, lost_n;
    /* renewed events not yet taken by wait_event, each with when it was read */
    struct {
        char *res, *token;
        int64_t validity_ns, read_ns, written_ns;
    } renewed[ADAPTER_RENEWED_QUEUE];
    int renewed_head, renewed_n;
    /* record mode: record, lost and renewed events in the order read, each
     * with read_ns set (a growing array, taken from rec_head) */
    struct amsg *recq;
    size_t rec_head, rec_n, rec_cap;
    struct adapter_stats st;
    char samples[ADAPTER_SAMPLES][256]; /* first protocol errors, quoted */
    FILE *log;
    int64_t t0;                    /* CLOCK_MONOTONIC at adapter_start, for log stamps */
};

/* Start the process and do the handshake (within cfg->hello_timeout_ns).
 * a is zeroed first; cfg is copied (its pointers stay borrowed). On
 * failure returns LS_EENV with err saying what went wrong and quoting the
 * end of the adapter's stderr; a is still valid for adapter_close. */
int adapter_start(struct adapter *a, const struct adapter_config *cfg, struct ls_err *err);
/* Start a new process after the old one exited (or kill the old one
 * first), same configuration. Counted in st.starts. Returns 0 or LS_EENV. */
int adapter_restart(struct adapter *a, struct ls_err *err);
/* Shut down: {"op":"bye"}, close its stdin, wait ADAPTER_BYE_GRACE_NS,
 * SIGTERM, wait again, SIGKILL; reap; free everything. Accepts NULL and a
 * zeroed or half-started adapter. */
void adapter_close(struct adapter *a);

/* One request: {"id":N,"op":...,"res":res[,"token"][,"ttl_ms"]}; waits at
 * most timeout_ns for the reply with id N, handling whatever else arrives
 * (events, late replies). ADAPTER_REPLY: *reply filled (amsg_free it).
 * Otherwise *reply is empty, why says what happened, and *sent (may be
 * NULL) whether the request was written. */
int adapter_request(struct adapter *a, int op, const char *res, const char *token,
                    int64_t ttl_ns, int64_t timeout_ns, struct amsg *reply, int *sent,
                    char *why, size_t whylen);
/* Same with the request's members given as JSON text after the id, e.g.
 * "\"op\":\"frobnicate\"" (adapter-test); op (enum aproto_op, or 0) is what
 * the reply is checked against. */
int adapter_request_members(struct adapter *a, const char *members, int op, int64_t timeout_ns,
                            struct amsg *reply, int *sent, char *why, size_t whylen);
/* Write raw bytes to the adapter's stdin (adapter-test's garbage line).
 * Returns 0 or -1 (the adapter is gone). */
int adapter_send_raw(struct adapter *a, const char *bytes, size_t n);

/* Wait until the absolute CLOCK_MONOTONIC time until_ns for an event:
 * returns 1 with *ev a `lost` event (kind AMSG_LOST, res and token set;
 * amsg_free it), 3 with *ev a `renewed` event (kind AMSG_RENEWED, res,
 * token, validity_ns and read_ns: when the line was read, which may be
 * during an earlier request), 2 when the adapter's exit was noticed (once
 * per exit), 0 at until_ns or when a signal interrupted the wait. Events
 * come in the order they were read within each kind. Log events and late
 * replies are handled on the way. */
int adapter_wait_event(struct adapter *a, int64_t until_ns, struct amsg *ev);

/* Record mode (cfg.record_json set): wait until the absolute
 * CLOCK_MONOTONIC time until_ns for the next event: 1 with *ev a `record`,
 * `lost` or `renewed` event (kind AMSG_RECORD, AMSG_LOST, AMSG_RENEWED;
 * read_ns set; amsg_free it), in the order they were read; 2 when the
 * adapter's end was noticed (once per end, after every line it wrote was
 * taken); 0 at until_ns or on a signal. */
int adapter_wait_record(struct adapter *a, int64_t until_ns, struct amsg *ev);
/* Record mode: write {"op":"start"} or {"op":"stop"} (ctl: enum
 * lock_rec_ctl); no reply is awaited. Returns 0, or -1 when the adapter is
 * gone or did not read it within 1 s. */
int adapter_record_op(struct adapter *a, int ctl);

/* Extension `stall` (docs/protocol.md): ask the adapter to block its event
 * loop for ms milliseconds and wait up to timeout_ns for the reply (the
 * caller adds the stall to its request timeout). ADAPTER_REPLY with
 * *reply filled (ok:true carries stalled_ns; counted in st.stalls), else as
 * adapter_request. The caller checks the adapter's caps first. */
int adapter_stall(struct adapter *a, int64_t ms, int64_t timeout_ns, struct amsg *reply,
                  int *sent, char *why, size_t whylen);
/* The `clock` extension (docs/protocol.md): one {"op":"clock"} request,
 * timed on the harness's true clock. */
struct adapter_clock {
    double wall_ms;                /* the adapter's answer */
    int has_mono;
    double mono_ms;
    int64_t real_before, real_after; /* true CLOCK_REALTIME ns around the request */
};
/* Contract: ask the adapter for its clock (it must list `clock` in its
 * caps: otherwise ADAPTER_PROTO with why, nothing sent). ADAPTER_REPLY
 * with *out filled when it answered ok:true with a plausible wall_ms
 * (aproto_clock_plausible); any other reply (ok:false, or an implausible
 * wall_ms) is ADAPTER_PROTO with why. Other codes as adapter_request. */
int adapter_clock(struct adapter *a, int64_t timeout_ns, struct adapter_clock *out, char *why,
                  size_t whylen);

/* Is the process there and past its handshake? */
int adapter_alive(struct adapter *a);
/* A copy of the counters (under the mutex). */
void adapter_get_stats(struct adapter *a, struct adapter_stats *out);

#endif
