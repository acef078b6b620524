/*
 * redis_multi.c: concurrent script calls on several nodes (see
 * redis_multi.h). Each node's commands are appended to its hiredis output
 * buffer, then one poll() loop drives every socket: finish non-blocking
 * connects, flush output, read and parse replies, until every node has its
 * reply or the deadline passes. A node's pipeline is [AUTH] [CLIENT
 * SETNAME] [SCRIPT LOAD...] call [EVAL after NOSCRIPT]; replies are matched
 * to it in order. A call that times out with its whole pipeline written keeps
 * its connection: the replies it still owes are remembered (rc->late) and
 * skipped when they come, as an asynchronous client does, instead of a
 * reconnect per timeout -- under load, reconnects (each a new handshake
 * through the proxy) cost more than the commands and a slow node never
 * recovered. Its outcome stays unknown. Not here: what the replies mean to
 * a lock.
 */
#include "locks/redis_multi.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "util/timeutil.h"

enum node_state { N_IDLE, N_CONNECTING, N_WRITING, N_READING, N_DONE };

/* What the next reply on a node's pipeline answers. */
enum { Q_LATE = -4, Q_AUTH = -3, Q_SETNAME = -2, Q_CALL = -1 }; /* >= 0: SCRIPT LOAD of it */

/* The longest pipeline (AUTH, SETNAME, every LOAD, call, retry) after the
 * replies an earlier call still owes. */
#define QMAX (RCONN_LATE_MAX + RCONN_MAX_SCRIPTS + 4)

struct node_io {
    int state;                  /* enum node_state */
    int sent;                   /* bytes of the pipeline may have been written */
    int q[QMAX];                /* expected replies, oldest first */
    int qhead, qlen;
    const char *argv[RCONN_MAX_ARGS];
    size_t lens[RCONN_MAX_ARGS];
};

/* Copy at most n-1 bytes of s into buf, terminated. */
static void put_err(char *buf, size_t n, const char *s)
{
    size_t len = strnlen(s, n - 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
}

/* End the node's part: record the outcome, drop the connection (its
 * pipeline state is unknown). errnum: errno saved right after the failure,
 * or 0. */
static void finish_err(struct rconn *rc, struct rmulti_call *call, struct node_io *io, int outcome,
                       int kind, int errnum)
{
    if (rc->c && rc->c->err)
        put_err(rc->errstr, sizeof(rc->errstr), rc->c->errstr);
    else if (errnum)
        put_err(rc->errstr, sizeof(rc->errstr), strerror(errnum));
    rconn_close(rc);
    call->outcome = outcome;
    call->err_kind = kind;
    io->state = N_DONE;
}

/* An I/O failure after the pipeline may have been written: unknown; before:
 * nothing ran. */
static void finish_io(struct rconn *rc, struct rmulti_call *call, struct node_io *io, int errnum)
{
    int kind = EVE_CONN;
    if (rc->c && rc->c->err == REDIS_ERR_PROTOCOL)
        kind = EVE_PROTO;
    else if (rc->c && rc->c->err == REDIS_ERR_OOM)
        kind = EVE_OTHER;
    finish_err(rc, call, io, io->sent ? LOCK_UNKNOWN : LOCK_FAIL, kind, errnum);
}

/* Expect one more reply of kind `what` (Q_* or a script index) on the node;
 * QMAX covers the longest pipeline (SETNAME, every LOAD, call, retry). */
static void push(struct node_io *io, int what)
{
    if (io->qlen < QMAX)
        io->q[(io->qhead + io->qlen++) % QMAX] = what;
}

/* Append the call itself: EVALSHA when the sha is known, else EVAL. */
static int append_call(struct rconn *rc, const struct rmulti_call *call, struct node_io *io,
                       int use_sha)
{
    if (use_sha && rc->sha[call->script][0]) {
        io->argv[0] = "EVALSHA";
        io->lens[0] = 7;
        io->argv[1] = rc->sha[call->script];
        io->lens[1] = 40;
    } else {
        io->argv[0] = "EVAL";
        io->lens[0] = 4;
        io->argv[1] = rc->scripts[call->script].body;
        io->lens[1] = strlen(io->argv[1]);
    }
    if (redisAppendCommandArgv(rc->c, call->nargs + 2, io->argv, io->lens) != REDIS_OK)
        return -1;
    push(io, Q_CALL);
    return 0;
}

/* A reply an ended call still owed: a SCRIPT LOAD's sha is kept, the rest
 * is dropped. Returns -1 when the connection is no use (a refused AUTH:
 * everything after it was refused too). Frees reply. */
static int late_reply(struct rconn *rc, int what, redisReply *reply)
{
    int bad = what == Q_AUTH && reply->type != REDIS_REPLY_STATUS;
    if (what >= 0 && what < rc->nscripts && reply->type == REDIS_REPLY_STRING && reply->len == 40)
        memcpy(rc->sha[what], reply->str, 41);
    freeReplyObject(reply);
    return bad ? -1 : 0;
}

/* Take the late replies that have arrived on a connection that owes some,
 * without waiting. Returns 0, or -1 when the connection is no use: the node
 * closed or reset it, or sent more than it owed. */
static int settle_late(struct rconn *rc)
{
    struct pollfd pf = {.fd = rc->c->fd, .events = POLLIN};
    if (poll(&pf, 1, 0) <= 0 || !pf.revents)
        return 0;
    if (redisBufferRead(rc->c) != REDIS_OK)
        return -1;
    for (;;) {
        void *r = NULL;
        if (redisGetReplyFromReader(rc->c, &r) != REDIS_OK)
            return -1;
        if (!r)
            return 0;
        if (rc->nlate == 0) {
            freeReplyObject(r);
            return -1;
        }
        int what = rc->late[0];
        memmove(rc->late, rc->late + 1, (size_t)--rc->nlate);
        if (late_reply(rc, what, r) < 0)
            return -1;
    }
}

/* Drop idle connections the node closed or reset since the last batch
 * (rconn_stale), so a restarted node costs a reconnect, not an unknown
 * outcome; one that owes late replies takes what arrived of them. */
static void drop_stale(struct rconn *conns, const struct rmulti_call *calls, int n)
{
    for (int i = 0; i < n; i++) {
        if (calls[i].skip || !conns[i].c)
            continue;
        if (conns[i].nlate > 0 ? settle_late(&conns[i]) < 0 : rconn_stale(&conns[i]))
            rconn_close(&conns[i]);
    }
}

/* The deadline passed with the node's whole pipeline on the wire: keep
 * the connection and remember what its replies answer (the call's own reply
 * is skipped when it comes). Returns 0, or -1 when it owes too many. */
static int keep_late(struct rconn *rc, const struct node_io *io)
{
    if (!rc->c || rc->c->err || io->qlen > RCONN_LATE_MAX)
        return -1;
    for (int j = 0; j < io->qlen; j++) {
        int what = io->q[(io->qhead + j) % QMAX];
        rc->late[j] = (signed char)(what == Q_CALL ? Q_LATE : what);
    }
    rc->nlate = io->qlen;
    return 0;
}

/* Prepare node i: connect if needed and append its pipeline. */
static void start_node(struct rconn *rc, struct rmulti_call *call, struct node_io *io)
{
    io->state = N_WRITING;
    for (int j = 0; rc->c && j < rc->nlate; j++)
        push(io, rc->late[j]);     /* owed by earlier calls: they come first */
    rc->nlate = 0;
    if (!rc->c) {
        rc->c = redisConnectNonBlock(rc->host, rc->port);
        if (!rc->c || rc->c->err) {
            if (!rc->c)
                put_err(rc->errstr, sizeof(rc->errstr), "out of memory");
            finish_err(rc, call, io, LOCK_FAIL, EVE_CONN, 0);
            return;
        }
        int one = 1;
        (void)setsockopt(rc->c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        io->state = N_CONNECTING;
        if (rc->password[0]) {
            if (redisAppendCommand(rc->c, "AUTH %s", rc->password) != REDIS_OK)
                goto oom;
            push(io, Q_AUTH);
        }
        if (rc->client_name[0]) {
            if (redisAppendCommand(rc->c, "CLIENT SETNAME %s", rc->client_name) != REDIS_OK)
                goto oom;
            push(io, Q_SETNAME);
        }
    }
    for (int s = 0; s < rc->nscripts; s++) {
        if (rc->sha[s][0])
            continue;
        if (redisAppendCommand(rc->c, "SCRIPT LOAD %s", rc->scripts[s].body) != REDIS_OK)
            goto oom;
        push(io, s);
    }
    if (append_call(rc, call, io, 1) == 0)
        return;
oom:
    put_err(rc->errstr, sizeof(rc->errstr), "out of memory");
    finish_err(rc, call, io, LOCK_FAIL, EVE_OTHER, 0);
}

/* The node does not know the sha: nothing ran. */
static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && r->len >= 8 && memcmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Parse every complete reply in the node's input buffer. */
static void take_replies(struct rconn *rc, struct rmulti_call *call, struct node_io *io)
{
    while (io->state != N_DONE) {
        void *r = NULL;
        if (redisGetReplyFromReader(rc->c, &r) != REDIS_OK) {
            finish_io(rc, call, io, 0);
            return;
        }
        if (!r)
            return;
        redisReply *reply = r;
        if (io->qlen == 0) {        /* a reply nobody asked for */
            freeReplyObject(reply);
            put_err(rc->errstr, sizeof(rc->errstr), "unexpected reply");
            finish_err(rc, call, io, LOCK_UNKNOWN, EVE_PROTO, 0);
            return;
        }
        int what = io->q[io->qhead];
        io->qhead = (io->qhead + 1) % QMAX;
        io->qlen--;
        if (what == Q_LATE) {
            freeReplyObject(reply);     /* an earlier call's, which ended unknown */
        } else if (what == Q_AUTH && reply->type != REDIS_REPLY_STATUS) {
            /* refused: what follows gets NOAUTH, so nothing ran */
            snprintf(rc->errstr, sizeof(rc->errstr), "%s:%d: AUTH: %.80s", rc->host, rc->port,
                     reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
            freeReplyObject(reply);
            finish_err(rc, call, io, LOCK_FAIL, EVE_CONN, 0);
            return;
        } else if (what == Q_SETNAME || what == Q_AUTH) {
            freeReplyObject(reply);     /* a proxy may refuse SETNAME: harmless */
        } else if (what >= 0) {
            if (reply->type == REDIS_REPLY_STRING && reply->len == 40)
                memcpy(rc->sha[what], reply->str, 41);
            freeReplyObject(reply);     /* on an error reply EVAL is used instead */
        } else if (is_noscript(reply)) {
            /* the node lost its script cache (restart, SCRIPT FLUSH):
             * nothing ran, send the body (which caches it again) */
            freeReplyObject(reply);
            if (append_call(rc, call, io, 0) != 0) {
                put_err(rc->errstr, sizeof(rc->errstr), "out of memory");
                finish_err(rc, call, io, LOCK_UNKNOWN, EVE_OTHER, 0);
                return;
            }
            io->state = N_WRITING;
        } else {
            call->outcome = LOCK_OK;
            call->err_kind = EVE_NONE;
            call->reply = reply;
            io->state = N_DONE;
        }
    }
}

/* Flush what is left of the node's output buffer. */
static void do_write(struct rconn *rc, struct rmulti_call *call, struct node_io *io)
{
    int done = 0;
    io->sent = 1;   /* a write may put any prefix of the pipeline on the wire */
    if (redisBufferWrite(rc->c, &done) != REDIS_OK) {
        finish_io(rc, call, io, errno);
        return;
    }
    if (done)
        io->state = N_READING;
}

/* Handle poll results for one node. */
static void on_event(struct rconn *rc, struct rmulti_call *call, struct node_io *io, short rev)
{
    if (io->state == N_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(rc->c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
            soerr = errno;
        if (soerr || (rev & (POLLERR | POLLHUP))) {
            finish_err(rc, call, io, LOCK_FAIL, EVE_CONN, soerr ? soerr : ECONNREFUSED);
            return;
        }
        rc->connects++;
        io->state = N_WRITING;
    }
    if (io->state == N_WRITING && (rev & (POLLOUT | POLLERR | POLLHUP))) {
        do_write(rc, call, io);
        if (io->state == N_DONE)
            return;
    }
    if (rev & (POLLIN | POLLERR | POLLHUP)) {
        if (redisBufferRead(rc->c) != REDIS_OK) {
            finish_io(rc, call, io, errno);
            return;
        }
        take_replies(rc, call, io);
        if (io->state == N_WRITING)   /* a NOSCRIPT retry was queued */
            do_write(rc, call, io);
    }
}

void rmulti_eval(struct rconn *conns, struct rmulti_call *calls, int n, int64_t timeout_ns)
{
    struct node_io io[RMULTI_MAX];
    if (n > RMULTI_MAX)
        n = RMULTI_MAX;
    int64_t deadline = ls_now_ns() + (timeout_ns > 0 ? timeout_ns : RCONN_DEFAULT_TIMEOUT_NS);
    memset(io, 0, sizeof(io));
    for (int i = 0; i < n; i++) {
        calls[i].outcome = LOCK_FAIL;
        calls[i].err_kind = EVE_NONE;
        calls[i].reply = NULL;
    }
    drop_stale(conns, calls, n);
    for (int i = 0; i < n; i++) {
        struct rmulti_call *call = &calls[i];
        io[i].state = N_DONE;
        if (call->skip)
            continue;
        if (call->script < 0 || call->script >= conns[i].nscripts || call->nargs < 0 ||
            call->nargs > RCONN_MAX_ARGS - 2) {
            call->err_kind = EVE_OTHER;
            continue;
        }
        memcpy(io[i].argv + 2, call->args, (size_t)call->nargs * sizeof(*call->args));
        memcpy(io[i].lens + 2, call->lens, (size_t)call->nargs * sizeof(*call->lens));
        start_node(&conns[i], call, &io[i]);
        /* an established connection is written at once; a fresh one when
         * poll says its connect completed */
        if (io[i].state == N_WRITING)
            do_write(&conns[i], call, &io[i]);
    }

    for (;;) {
        struct pollfd pf[RMULTI_MAX];
        int idx[RMULTI_MAX], k = 0;
        for (int i = 0; i < n; i++) {
            if (io[i].state == N_DONE)
                continue;
            pf[k].fd = conns[i].c->fd;
            pf[k].events = io[i].state == N_READING ? POLLIN
                           : io[i].state == N_CONNECTING ? POLLOUT
                                                         : (short)(POLLIN | POLLOUT);
            pf[k].revents = 0;
            idx[k++] = i;
        }
        if (k == 0)
            return;
        int64_t left = deadline - ls_now_ns();
        if (left <= 0)
            break;
        struct timespec ts = {(time_t)(left / LS_NS_PER_S), (long)(left % LS_NS_PER_S)};
        int rc = ppoll(pf, (nfds_t)k, &ts, NULL);
        if (rc < 0 && errno != EINTR)
            break;
        for (int j = 0; rc > 0 && j < k; j++)
            if (pf[j].revents)
                on_event(&conns[idx[j]], &calls[idx[j]], &io[idx[j]], pf[j].revents);
    }
    /* the deadline passed */
    for (int i = 0; i < n; i++) {
        if (io[i].state == N_DONE)
            continue;
        if (io[i].state == N_CONNECTING) {
            put_err(conns[i].errstr, sizeof(conns[i].errstr), "connect timed out");
            finish_err(&conns[i], &calls[i], &io[i], LOCK_FAIL, EVE_CONN, 0);
        } else if (io[i].state == N_READING && keep_late(&conns[i], &io[i]) == 0) {
            /* the whole pipeline is on the wire (a partly written one is
             * dropped as before: its tail must not go out with a later call) */
            put_err(conns[i].errstr, sizeof(conns[i].errstr), "no reply in time");
            calls[i].outcome = LOCK_UNKNOWN;
            calls[i].err_kind = EVE_TIMEOUT;
            io[i].state = N_DONE;
        } else {
            put_err(conns[i].errstr, sizeof(conns[i].errstr), "no reply in time");
            finish_err(&conns[i], &calls[i], &io[i], io[i].sent ? LOCK_UNKNOWN : LOCK_FAIL,
                       EVE_TIMEOUT, 0);
        }
    }
}
