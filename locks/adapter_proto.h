/*
 * adapter_proto.h: the wire format of the external adapter protocol
 * (docs/protocol.md, version 1): splitting the adapter's stdout into
 * lines, parsing one line into a message, checking that a reply carries
 * what its request needs, and writing requests. Pure functions on memory:
 * no processes, no I/O (that is adapter.c), so every rule here is unit
 * tested (tests/unit/test_adapter_proto.c). Unknown fields are ignored
 * (forward compatibility); a known field of the wrong type is an error.
 */
#ifndef LS_ADAPTER_PROTO_H
#define LS_ADAPTER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "locks/lock.h"
#include "util/strbuf.h"

#define APROTO_VERSION 1
#define APROTO_MAX_LINE (64 * 1024)  /* longer lines are protocol errors, dropped */
#define APROTO_NAME_MAX 64

/* Adapter capabilities (hello.caps). */
#define APROTO_CAP_TTL 0x1
#define APROTO_CAP_RENEW 0x2
#define APROTO_CAP_FENCING 0x4
#define APROTO_CAP_AUTO_RENEW 0x8
/* Extensions (revision 2): used when the harness lists them in its hello
 * and the adapter in its caps. */
#define APROTO_CAP_CLOCK 0x10      /* {"op":"clock"}: the runtime's wall clock */
#define APROTO_CAP_STALL 0x20      /* {"op":"stall"}: block the event loop */
#define APROTO_CAP_RENEWED 0x40    /* the `renewed` event */
/* Revision 4: record mode (the program locks by itself and reports). */
#define APROTO_CAP_RECORD 0x80     /* `record` events, start/stop ops */

/* ---- line splitting ---- */

/* Accumulates bytes and hands out complete '\n'-terminated lines. A line
 * longer than max is dropped whole (through its '\n') and reported once,
 * as soon as it is known to be too long. The caller drains next() after
 * every feed, so the buffer never holds much more than max + one read. */
struct aproto_lines {
    char *buf;          /* owned */
    size_t len, cap;
    size_t max;         /* APROTO_MAX_LINE unless set */
    size_t skipping;    /* > 0: inside an overlong line, bytes dropped so far */
};

void aproto_lines_init(struct aproto_lines *l, size_t max);
void aproto_lines_free(struct aproto_lines *l);
/* Append n bytes read from the adapter. Returns 0, or LS_ENOMEM. */
int aproto_lines_feed(struct aproto_lines *l, const char *p, size_t n);
/* Next complete line, without its '\n' (and a '\r' before it), copied into
 * *line (caller frees with free()) with its length in *n. Returns 1 with a
 * line, 0 when no complete line is buffered (or out of memory), -1 when an
 * overlong line was dropped (*n = its length so far; *line NULL): a
 * protocol error. */
int aproto_lines_next(struct aproto_lines *l, char **line, size_t *n);

/* ---- messages from the adapter ---- */

enum amsg_kind {
    AMSG_REPLY = 1,     /* has "id" */
    AMSG_HELLO,         /* {"op":"hello",...} */
    AMSG_LOST,          /* {"event":"lost",...} */
    AMSG_LOG,           /* {"event":"log",...} */
    AMSG_RENEWED,       /* {"event":"renewed",...} (extension `renewed`) */
    AMSG_RECORD,        /* {"event":"record","what":...} (extension `record`) */
};

struct amsg {
    int kind;           /* enum amsg_kind */
    int64_t id;         /* AMSG_REPLY */
    /* reply fields; has_* say whether the field was present (and not null) */
    int ok;
    int busy, unknown;  /* absent = 0 */
    int has_released, released;
    char *token;        /* owned, NULL when absent */
    int has_fence;
    uint64_t fence;
    int has_validity;
    int64_t validity_ns; /* validity_ms converted; may be <= 0 (also AMSG_RENEWED's) */
    int has_stalled;
    int64_t stalled_ns; /* a stall reply's stalled_ms converted */
    char *error;        /* owned, NULL when absent */
    /* reply to clock (the `clock` extension) */
    int has_wall;
    double wall_ms;     /* the runtime's wall clock, ms since the epoch */
    int has_mono;
    double mono_ms;     /* its monotonic clock, ms (optional) */
    /* hello */
    int protocol;
    char name[APROTO_NAME_MAX];
    char version[APROTO_NAME_MAX];
    unsigned caps;      /* APROTO_CAP_* */
    char unknown_caps[128]; /* caps we do not know, for the log ("" none) */
    /* events */
    char *res;          /* AMSG_LOST, AMSG_RENEWED: owned (token too) */
    char *msg;          /* AMSG_LOG: owned */
    int64_t read_ns;    /* AMSG_RENEWED: CLOCK_MONOTONIC when the harness read the line
                         * (set by adapter.c, 0 from aproto_parse) */
    int64_t written_ns; /* AMSG_RENEWED, AMSG_RECORD: the host's CLOCK_MONOTONIC when the
                         * adapter wrote it (`host_mono_ms`, revision 3); 0 when absent */
    /* AMSG_RECORD (also res, token, has_validity/validity_ns, has_fence/fence,
     * has_released/released, unknown, error above) */
    int rec_what;       /* enum lock_rec_what (LREC_ACQUIRE..LREC_STOPPED) */
    int rec_err_kind;   /* enum ev_err of a failure: timeout, connection, error reply */
};

/* Parse one line. Returns 0 with *m filled (free with amsg_free), or -1
 * with a one-line reason in why ("not JSON: offset 3: ...", "reply: 'ok'
 * must be true or false, got a string") and *m empty. */
int aproto_parse(const char *line, size_t n, struct amsg *m, char *why, size_t whylen);
void amsg_free(struct amsg *m);

/* Requests. */
enum aproto_op { AOP_ACQUIRE = 1, AOP_RENEW, AOP_RELEASE, AOP_STALL, AOP_CLOCK };

/* Does reply m carry what a reply to op needs? ok:true acquire needs a
 * non-empty token and validity_ms; ok:true renew needs validity_ms; ok:true
 * release needs released; ok:true stall needs stalled_ms; ok:true clock
 * needs wall_ms. Returns 0 or -1
 * with the reason in why. */
int aproto_check_reply(int op, const struct amsg *m, char *why, size_t whylen);

/* Map a reply to the lock outcome vocabulary (lock.h) and an enum ev_err
 * for the failures. Call after aproto_check_reply passed. */
int aproto_outcome(int op, const struct amsg *m, int *err_kind);

/* "ttl,renew" text of caps ("-" when none). */
void aproto_caps_text(unsigned caps, char *buf, size_t n);

/* ---- messages to the adapter (one line each, '\n' included) ---- */

/* {"op":"hello","protocol":1,"worker":W,"nodes":["h:p",...],"options":OPTS,
 * "extensions":[...]} (the extensions this harness uses, aproto_extensions)
 * options_json is a JSON object text (NULL: {}), copied verbatim. */
void aproto_write_hello(struct strbuf *sb, int worker, const struct lock_node *nodes, int nnodes,
                        const char *options_json);
/* The same hello in record mode (extension `record`, revision 4): the
 * extensions list `record` too and record_json (a JSON object text: res,
 * ttl_ms, duration_ms) is added as "record"; NULL: aproto_write_hello. */
void aproto_write_hello_record(struct strbuf *sb, int worker, const struct lock_node *nodes,
                               int nnodes, const char *options_json, const char *record_json);
/* {"op":"start"} / {"op":"stop"} (extension `record`) */
void aproto_write_record_op(struct strbuf *sb, int ctl);
/* {"id":I,"op":"acquire"|"renew"|"release","res":R[,"token":T][,"ttl_ms":X]}
 * token: NULL for acquire; ttl_ns < 0: no ttl_ms (release). */
void aproto_write_request(struct strbuf *sb, int64_t id, int op, const char *res,
                          const char *token, int64_t ttl_ns);
/* {"id":I,"op":"stall","ms":M} (extension `stall`) */
void aproto_write_stall(struct strbuf *sb, int64_t id, int64_t ms);
/* {"op":"bye"} */
void aproto_write_bye(struct strbuf *sb);

/* ---- the `clock` extension ---- */

/* {"id":I,"op":"clock"} */
void aproto_write_clock(struct strbuf *sb, int64_t id);
/* Is wall_ms a plausible wall clock: a time after 2001-09-09 and before
 * 2286 (ms since the epoch)? A runtime that answers seconds, or ns, fails. */
int aproto_clock_plausible(double wall_ms);

/* Quote a line for a message: at most max bytes, control bytes and
 * non-ASCII shown as \xNN, "..." appended when cut. Returns buf. */
const char *aproto_quote(const char *line, size_t n, size_t max, char *buf, size_t buflen);

#endif
