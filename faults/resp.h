/*
 * resp.h: incremental RESP2 framing for the proxy's command rules
 * (faults/proxy.c). Requests (client -> node) in both forms Redis takes,
 * inline ("SET k v\r\n") and multibulk ("*3\r\n$3\r\nSET\r\n..."), and
 * replies (node -> client: + - : $ *). Bytes are fed as they arrive, in
 * any split; the parser keeps only small copies of what a rule matches on
 * (the command name and the first three arguments, truncated), never the
 * request itself. Framing only: nothing here knows what a command does.
 */
#ifndef LS_FAULTS_RESP_H
#define LS_FAULTS_RESP_H

#include <stddef.h>
#include <stdint.h>

#define RESP_NAME_MAX 32   /* command names kept (upper-cased), longer ones truncated */
#define RESP_ARG_MAX 128   /* arguments 1..3 kept up to this many bytes */
#define RESP_NARGS_KEPT 3

enum resp_rc {
    RESP_BAD = -1,  /* not RESP2 framing: the stream cannot be followed */
    RESP_MORE = 0,  /* every byte given was used; the message is not complete */
    RESP_DONE = 1,  /* a message ended at *used */
};

/* One request being framed. Zero it (resp_req_reset) before the first byte
 * and after each RESP_DONE. */
struct resp_req {
    /* framing state */
    int phase;
    int64_t nargs;          /* multibulk: arguments announced; inline: words seen */
    int64_t argi;           /* the argument being read */
    int64_t bulk_left;      /* bytes of the current bulk still to come (its CRLF included) */
    char num[24];           /* the digits of a *N or $N line being read */
    size_t num_len;
    int inline_word;        /* inline: inside a word */
    uint64_t bytes;         /* bytes of this request so far */
    /* what was kept */
    char name[RESP_NAME_MAX + 1];             /* argument 0, upper-cased, NUL-ended */
    char arg[RESP_NARGS_KEPT][RESP_ARG_MAX + 1]; /* arguments 1..3 as sent, NUL-ended */
    size_t arg_len[RESP_NARGS_KEPT];          /* bytes kept of each (<= RESP_ARG_MAX) */
    int arg_cut[RESP_NARGS_KEPT];             /* 1: the argument was longer than kept */
    int64_t argc;           /* arguments the request has (0: an empty request, no reply) */
};

/* One reply being framed (RESP2 only: a RESP3 type byte is RESP_BAD). */
struct resp_reply {
    int phase;
    int64_t need;           /* values still to read before the reply is complete */
    int64_t bulk_left;
    char num[24];
    size_t num_len;
    int type;               /* the type byte of the value being read */
    int is_error;           /* the reply is an error (-...) */
};

void resp_req_reset(struct resp_req *p);
/* Feed len bytes of the client's stream. Returns RESP_DONE with *used the
 * bytes up to and including the request's last byte (the rest is for the
 * next request), RESP_MORE with *used = len, or RESP_BAD (*used: where the
 * framing broke). Multibulk limits as Redis's: at most 1024*1024 arguments
 * of at most 512 MiB each; an inline request ends at LF. */
int resp_req_feed(struct resp_req *p, const char *buf, size_t len, size_t *used);

void resp_reply_reset(struct resp_reply *p);
/* As resp_req_feed for one reply of the node's stream. */
int resp_reply_feed(struct resp_reply *p, const char *buf, size_t len, size_t *used);

/* The first key of a parsed request, or NULL when it has none that the
 * rules can see: EVAL / EVALSHA / FCALL with numkeys >= 1: argument 3;
 * commands without keys (PING, SCRIPT, AUTH, ...): NULL; otherwise
 * argument 1. *len its length, *cut 1 when it was truncated. */
const char *resp_req_first_key(const struct resp_req *p, size_t *len, int *cut);

/* Glob match as Redis's KEYS pattern (* ? [abc] [^a] [a-z] \x), on
 * len bytes of s. 1 on a match. */
int resp_glob(const char *pat, const char *s, size_t len);

#endif
