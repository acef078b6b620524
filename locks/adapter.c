/*
 * adapter.c: an external adapter process and its protocol session (see
 * adapter.h and docs/protocol.md). Everything the adapter writes goes
 * through one line splitter and one dispatcher (take_line), whether it
 * arrives while a request waits or while the worker sleeps in a hold, so a
 * late reply, a `lost` event or garbage is handled the same way anywhere.
 * Not here: grants and tokens (external.c), conformance checks
 * (harness/adapter_test.c).
 */
#include "locks/adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define READ_CHUNK 65536
#define LOG_EVENTS_LOGGED 1000    /* log events written to the log, then only counted */
#define PROTO_ERRORS_LOGGED 10    /* protocol errors quoted in the log */

__attribute__((format(printf, 2, 3))) static void logf_(struct adapter *a, const char *fmt, ...)
{
    if (!a->log)
        return;
    double t = (double)(ls_now_ns() - a->t0) / 1e9;
    fprintf(a->log, "[%9.3fs] ", t);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(a->log, fmt, ap);
    va_end(ap);
    fputc('\n', a->log);
    fflush(a->log);
}

/* Contract: count a protocol error, quote the first few in the log and
 * the first ADAPTER_SAMPLES in a->samples, and tell cfg.on_proto_error. */
static void proto_error(struct adapter *a, const char *what, const char *line, size_t n)
{
    char q[200];
    uint64_t k = a->st.protocol_errors++;
    if (line)
        aproto_quote(line, n, 120, q, sizeof(q));
    else
        q[0] = '\0';
    if (k < ADAPTER_SAMPLES)
        snprintf(a->samples[k], sizeof(a->samples[k]), "%s%s%s%s", what, line ? ": '" : "", q,
                 line ? "'" : "");
    if (k < PROTO_ERRORS_LOGGED)
        logf_(a, "protocol error: %s%s%s%s", what, line ? ": line '" : "", q, line ? "'" : "");
    else if (k == PROTO_ERRORS_LOGGED)
        logf_(a, "further protocol errors are only counted");
    if (a->cfg.on_proto_error)
        a->cfg.on_proto_error(a->cfg.on_proto_error_ctx, what, q);
}

/* ---- process ---- */

/* Contract: reap the process if it exited (block up to wait_ns), record
 * its status text. Returns 1 once reaped (pid cleared), else 0. */
static int reap(struct adapter *a, int64_t wait_ns)
{
    if (a->pid <= 0)
        return 1;
    int64_t deadline = ls_now_ns() + wait_ns;
    for (;;) {
        int st;
        pid_t r = waitpid(a->pid, &st, WNOHANG);
        if (r == a->pid || (r < 0 && errno == ECHILD)) {
            if (r == a->pid)
                proc_status_text(st, a->exit_text, sizeof(a->exit_text));
            else
                snprintf(a->exit_text, sizeof(a->exit_text), "gone");
            a->pid = 0;
            return 1;
        }
        if (ls_now_ns() >= deadline)
            return 0;
        ls_sleep_ns(2 * LS_NS_PER_MS);
    }
}

/* Contract: the process is gone or must go: SIGKILL it (it is ours, by
 * pid) unless already reaped, reap it; pipes stay open until close_fds so
 * that another thread polling them never sees a reused descriptor. */
static void kill_and_reap(struct adapter *a)
{
    if (a->pid > 0 && !reap(a, 0)) {
        kill(a->pid, SIGCONT);
        kill(a->pid, SIGKILL);
        reap(a, 5 * LS_NS_PER_S);
    }
}

static void close_fds(struct adapter *a)
{
    if (a->to_fd >= 0)
        close(a->to_fd);
    if (a->from_fd >= 0)
        close(a->from_fd);
    a->to_fd = a->from_fd = -1;
}

/* Contract: note an unexpected end of the adapter (EOF, EPIPE): it is
 * killed and reaped, requests fail from now on, wait_event reports it. */
static void mark_dead(struct adapter *a, const char *how)
{
    if (!a->alive)
        return;
    a->alive = 0;
    a->exit_pending = 1;
    a->st.exits++;
    /* an adapter closing its stdout is on its way out: give it a moment */
    reap(a, 100 * LS_NS_PER_MS);
    kill_and_reap(a);
    logf_(a, "adapter %s (%s)", a->exit_text[0] ? a->exit_text : "gone", how);
}

static int spawn(struct adapter *a, struct ls_err *err)
{
    const char *prog = a->cfg.argv[0];
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    int errfd = -1;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0)
                close(in[i]);
            if (out[i] >= 0)
                close(out[i]);
        }
        return ls_err_errno(err, LS_EENV, e, "adapter %s: pipe", prog);
    }
    errfd = open(a->cfg.stderr_path ? a->cfg.stderr_path : "/dev/null",
                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (errfd < 0) {
        int e = errno;
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return ls_err_errno(err, LS_EENV, e, "adapter %s: open %s", prog,
                            a->cfg.stderr_path ? a->cfg.stderr_path : "/dev/null");
    }
    /* the caller's process group (a pause or kill of the worker reaches the
     * adapter) unless own_group, dying with its parent (util/proc.h) */
    struct spawn_opts po = {.use_fds = 1, .fd_in = in[0], .fd_out = out[1], .fd_err = errfd,
                           .flags = a->cfg.own_group ? 0 : PROC_SAME_GROUP, .what = "adapter",
                           .env_add = a->cfg.env_add};
    pid_t pid = proc_spawn_opts(a->cfg.argv, &po, err);
    close(in[0]);
    close(out[1]);
    close(errfd);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        return (int)pid;
    }
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    a->pid = pid;
    if (a->cfg.own_group) {
        setpgid(pid, pid); /* as the child does: whichever runs first */
        a->group = pid;
    }
    a->to_fd = in[1];
    a->from_fd = out[0];
    a->exit_text[0] = '\0';
    a->st.starts++;
    aproto_lines_free(&a->lines);
    aproto_lines_init(&a->lines, APROTO_MAX_LINE);
    return 0;
}

/* ---- I/O ---- */

/* Contract: write all n bytes to the adapter's stdin before deadline.
 * Returns 0, -1 when it is gone (EPIPE), -2 at the deadline (a stopped
 * adapter with a full pipe). */
static int write_all(struct adapter *a, const char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        if (a->to_fd < 0)
            return -1;
        ssize_t w = write(a->to_fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN)
            return -1;
        int64_t left = deadline - ls_now_ns();
        if (left <= 0)
            return -2;
        struct pollfd pf = {a->to_fd, POLLOUT, 0};
        poll(&pf, 1, (int)(left / LS_NS_PER_MS) + 1);
    }
    return 0;
}

/* Contract: read what is available into the line splitter. Returns > 0
 * bytes read, 0 at EOF, -1 when nothing is available now. */
static ssize_t read_some(struct adapter *a)
{
    char buf[READ_CHUNK];
    if (a->from_fd < 0)
        return 0;
    for (;;) {
        ssize_t r = read(a->from_fd, buf, sizeof(buf));
        if (r > 0) {
            if (aproto_lines_feed(&a->lines, buf, (size_t)r) < 0)
                return 0; /* out of memory: treat as the end of the adapter */
            return r;
        }
        if (r == 0)
            return 0;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN ? -1 : 0;
    }
}

static int was_abandoned(const struct adapter *a, int64_t id)
{
    int n = a->nabandoned < 64 ? a->nabandoned : 64;
    for (int i = 0; i < n; i++)
        if (a->abandoned[i] == id)
            return 1;
    return 0;
}

static void abandon(struct adapter *a, int64_t id)
{
    a->abandoned[a->nabandoned % 64] = id;
    a->nabandoned++;
    if (a->nabandoned >= 128)
        a->nabandoned = 64; /* keep the ring full-sized without overflow */
}

static void queue_lost(struct adapter *a, struct amsg *m)
{
    if (a->lost_n == ADAPTER_LOST_QUEUE) { /* drop the oldest */
        free(a->lost[a->lost_head].res);
        free(a->lost[a->lost_head].token);
        a->lost_head = (a->lost_head + 1) % ADAPTER_LOST_QUEUE;
        a->lost_n--;
    }
    int k = (a->lost_head + a->lost_n) % ADAPTER_LOST_QUEUE;
    a->lost[k].res = m->res;
    a->lost[k].token = m->token;
    m->res = m->token = NULL;
    a->lost_n++;
}

/* Contract: keep renewed event m (its strings move into the queue) with
 * the instant it was read; the oldest goes when the queue is full. */
static void queue_renewed(struct adapter *a, struct amsg *m, int64_t read_ns)
{
    if (a->renewed_n == ADAPTER_RENEWED_QUEUE) {
        free(a->renewed[a->renewed_head].res);
        free(a->renewed[a->renewed_head].token);
        a->renewed_head = (a->renewed_head + 1) % ADAPTER_RENEWED_QUEUE;
        a->renewed_n--;
    }
    int k = (a->renewed_head + a->renewed_n) % ADAPTER_RENEWED_QUEUE;
    a->renewed[k].res = m->res;
    a->renewed[k].token = m->token;
    a->renewed[k].validity_ns = m->validity_ns;
    a->renewed[k].read_ns = read_ns;
    a->renewed[k].written_ns = m->written_ns;
    m->res = m->token = NULL;
    a->renewed_n++;
}

/* Contract: the oldest queued renewed event into *ev (AMSG_RENEWED; every
 * other field cleared, so amsg_free(ev) frees only what it owns). Returns
 * 1, or 0 when none is queued. */
static int take_renewed(struct adapter *a, struct amsg *ev)
{
    if (a->renewed_n == 0)
        return 0;
    memset(ev, 0, sizeof(*ev));
    int k = a->renewed_head;
    ev->kind = AMSG_RENEWED;
    ev->res = a->renewed[k].res;
    ev->token = a->renewed[k].token;
    ev->has_validity = 1;
    ev->validity_ns = a->renewed[k].validity_ns;
    ev->read_ns = a->renewed[k].read_ns;
    ev->written_ns = a->renewed[k].written_ns;
    a->renewed[k].res = a->renewed[k].token = NULL;
    a->renewed_head = (a->renewed_head + 1) % ADAPTER_RENEWED_QUEUE;
    a->renewed_n--;
    return 1;
}

#define RECQ_MAX (1 << 20) /* record-mode events waiting for the worker; more is an error */

/* Contract: keep event m (record, lost, renewed; its strings move into
 * the queue) with the instant it was read. A queue already holding
 * RECQ_MAX events (a worker that stopped taking them) drops m as a
 * protocol error, counted and quoted. */
static void queue_record(struct adapter *a, struct amsg *m, int64_t read_ns, const char *line,
                         size_t n)
{
    if (a->rec_head > 0 && a->rec_head == a->rec_n) { /* all taken: start over */
        a->rec_head = a->rec_n = 0;
    }
    if (a->rec_n - a->rec_head >= RECQ_MAX) {
        proto_error(a, "record-mode event queue full (the worker stopped taking events), dropped",
                    line, n);
        return;
    }
    if (a->rec_n == a->rec_cap) {
        if (a->rec_head > 0) { /* slide the untaken ones down first */
            memmove(a->recq, a->recq + a->rec_head, (a->rec_n - a->rec_head) * sizeof(*a->recq));
            a->rec_n -= a->rec_head;
            a->rec_head = 0;
        }
        if (a->rec_n == a->rec_cap) {
            size_t cap = a->rec_cap ? a->rec_cap * 2 : 64;
            struct amsg *q = realloc(a->recq, cap * sizeof(*q));
            if (!q) {
                proto_error(a, "out of memory for record-mode events, dropped", line, n);
                return;
            }
            a->recq = q;
            a->rec_cap = cap;
        }
    }
    m->read_ns = read_ns;
    a->recq[a->rec_n++] = *m;
    memset(m, 0, sizeof(*m)); /* the queue owns its strings now */
}

/* What take_line found for the pending request. */
enum { TL_NONE = 0, TL_REPLY = 1, TL_PROTO = -1 };

/* Contract: handle one line. A reply to the pending request (a->pending_id)
 * is parsed into *reply and checked against op: TL_REPLY, or TL_PROTO with
 * why when it fails the check. Any other protocol error counts and, while
 * a request is pending, fails it (TL_PROTO). Events and late replies are
 * handled here: TL_NONE. */
static int take_line(struct adapter *a, const char *line, size_t n, int op, struct amsg *reply,
                     char *why, size_t whylen)
{
    struct amsg m;
    char pwhy[256];
    if (n == 0)
        return TL_NONE; /* blank lines carry nothing */
    if (aproto_parse(line, n, &m, pwhy, sizeof(pwhy)) < 0) {
        proto_error(a, pwhy, line, n);
        snprintf(why, whylen, "protocol error: %s", pwhy);
        return a->pending_id ? TL_PROTO : TL_NONE;
    }
    switch (m.kind) {
    case AMSG_REPLY:
        if (a->pending_id && m.id == a->pending_id) {
            if (aproto_check_reply(op, &m, pwhy, sizeof(pwhy)) < 0) {
                amsg_free(&m);
                proto_error(a, pwhy, line, n);
                snprintf(why, whylen, "protocol error: %s", pwhy);
                return TL_PROTO;
            }
            *reply = m;
            return TL_REPLY;
        }
        if (was_abandoned(a, m.id)) {
            a->st.late_replies++;
            logf_(a, "late reply to request %lld dropped", (long long)m.id);
            amsg_free(&m);
            return TL_NONE;
        }
        amsg_free(&m);
        snprintf(pwhy, sizeof(pwhy), "reply to unknown id %lld", (long long)m.id);
        proto_error(a, pwhy, line, n);
        snprintf(why, whylen, "protocol error: %s", pwhy);
        return a->pending_id ? TL_PROTO : TL_NONE;
    case AMSG_RECORD:
        if (!a->cfg.record_json) {
            amsg_free(&m);
            proto_error(a, "a record event outside record mode (lock.impl record)", line, n);
            snprintf(why, whylen, "protocol error: a record event outside record mode");
            return a->pending_id ? TL_PROTO : TL_NONE;
        }
        a->st.record_events++;
        queue_record(a, &m, ls_now_ns(), line, n);
        amsg_free(&m);
        return TL_NONE;
    case AMSG_LOST: {
        a->st.lost_events++;
        if (a->cfg.record_json) {
            queue_record(a, &m, ls_now_ns(), line, n);
            amsg_free(&m);
            return TL_NONE;
        }
        char q[120];
        logf_(a, "lost event: res %s token %s", m.res,
              aproto_quote(m.token, strlen(m.token), 64, q, sizeof(q)));
        queue_lost(a, &m);
        amsg_free(&m);
        return TL_NONE;
    }
    case AMSG_RENEWED:
        a->st.renewed_events++;
        if (a->cfg.record_json)
            queue_record(a, &m, ls_now_ns(), line, n);
        else
            queue_renewed(a, &m, ls_now_ns());
        amsg_free(&m);
        return TL_NONE;
    case AMSG_LOG:
        if (a->st.log_events++ < LOG_EVENTS_LOGGED) {
            char q[600];
            logf_(a, "log: %s", aproto_quote(m.msg, strlen(m.msg), 500, q, sizeof(q)));
        }
        amsg_free(&m);
        return TL_NONE;
    default:
        amsg_free(&m);
        proto_error(a, "a second hello", line, n);
        snprintf(why, whylen, "protocol error: a second hello");
        return a->pending_id ? TL_PROTO : TL_NONE;
    }
}

/* Contract: dispatch every complete buffered line; stops at the pending
 * request's reply (TL_REPLY) or a protocol error failing it (TL_PROTO). */
static int drain(struct adapter *a, int op, struct amsg *reply, char *why, size_t whylen)
{
    for (;;) {
        char *line;
        size_t n;
        int r = aproto_lines_next(&a->lines, &line, &n);
        if (r == 0)
            return TL_NONE;
        if (r < 0) {
            char w[96];
            snprintf(w, sizeof(w), "a line longer than %d bytes (%zu so far), dropped",
                     APROTO_MAX_LINE, n);
            proto_error(a, w, NULL, 0);
            snprintf(why, whylen, "protocol error: %s", w);
            if (a->pending_id)
                return TL_PROTO;
            continue;
        }
        int t = take_line(a, line, n, op, reply, why, whylen);
        free(line);
        if (t != TL_NONE)
            return t;
    }
}

/* ---- handshake ---- */

/* Contract: the most telling line of the adapter's stderr for a failure
 * message (it must fit the worker's 256-byte error slot): the last line
 * that names an error (not a stack frame), else the last line:
 * "; stderr (adapters/worker-000.stderr): Error: Cannot find module ..." or
 * "; its stderr is empty". */
static void stderr_tail(const struct adapter *a, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!a->cfg.stderr_path)
        return;
    const char *shown = strstr(a->cfg.stderr_path, "adapters/");
    if (!shown)
        shown = a->cfg.stderr_path;
    FILE *f = fopen(a->cfg.stderr_path, "re");
    if (!f)
        return;
    char tail[4096];
    size_t k = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        long from = size > (long)sizeof(tail) - 1 ? size - (long)sizeof(tail) + 1 : 0;
        if (fseek(f, from, SEEK_SET) == 0)
            k = fread(tail, 1, sizeof(tail) - 1, f);
    }
    fclose(f);
    tail[k] = '\0';
    const char *best = NULL, *last = NULL;
    size_t best_len = 0, last_len = 0;
    for (char *line = tail; line < tail + k;) {
        char *nl = memchr(line, '\n', (size_t)(tail + k - line));
        size_t len = nl ? (size_t)(nl - line) : (size_t)(tail + k - line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '\t'))
            p++;
        size_t plen = len - (size_t)(p - line);
        if (plen > 0) {
            last = p;
            last_len = plen;
            int frame = plen > 3 && p != line && strncmp(p, "at ", 3) == 0;
            if (!frame && p == line && (memmem(p, plen, "Error", 5) || memmem(p, plen, "error", 5) ||
                                        memmem(p, plen, "Exception", 9)))
                best = p, best_len = plen;
        }
        line += len + 1;
    }
    if (!last) {
        snprintf(buf, n, "; its stderr is empty");
        return;
    }
    if (!best)
        best = last, best_len = last_len;
    char q[200];
    aproto_quote(best, best_len, 150, q, sizeof(q));
    snprintf(buf, n, "; stderr (%s): %s", shown, q);
}

static int handshake(struct adapter *a, struct ls_err *err)
{
    char tail[1024];
    const char *prog = a->cfg.argv[0];
    int64_t timeout = a->cfg.hello_timeout_ns > 0 ? a->cfg.hello_timeout_ns : ADAPTER_HELLO_TIMEOUT_NS;
    int64_t deadline = ls_now_ns() + timeout;
    struct strbuf sb = STRBUF_INIT;
    aproto_write_hello_record(&sb, a->cfg.worker, a->cfg.nodes, a->cfg.nnodes,
                              a->cfg.options_json, a->cfg.record_json);
    int w = write_all(a, sb.buf, sb.len, deadline);
    sb_free(&sb);
    const char *fail = NULL;
    char what[400] = "";
    if (w < 0)
        fail = "its stdin is closed";
    while (!fail) {
        char *line;
        size_t n;
        int r = aproto_lines_next(&a->lines, &line, &n);
        if (r < 0) {
            snprintf(what, sizeof(what), "answered a line longer than %d bytes", APROTO_MAX_LINE);
            fail = what;
            break;
        }
        if (r > 0) {
            struct amsg m;
            char pwhy[256], q[160];
            int pr = aproto_parse(line, n, &m, pwhy, sizeof(pwhy));
            aproto_quote(line, n, 120, q, sizeof(q));
            free(line);
            if (n == 0)
                continue;
            if (pr == 0 && m.kind == AMSG_LOG) { /* a library logging at start-up */
                a->st.log_events++;
                logf_(a, "log: %s", m.msg);
                amsg_free(&m);
                continue;
            }
            if (pr < 0) {
                snprintf(what, sizeof(what), "answered '%s' instead of its hello (%s)", q, pwhy);
            } else if (m.kind != AMSG_HELLO) {
                snprintf(what, sizeof(what), "answered '%s' instead of its hello", q);
            } else if (m.protocol != APROTO_VERSION) {
                snprintf(what, sizeof(what), "speaks protocol %d; lockstorm speaks %d",
                         m.protocol, APROTO_VERSION);
            } else {
                memcpy(a->name, m.name, sizeof(a->name));
                memcpy(a->version, m.version, sizeof(a->version));
                a->protocol = m.protocol;
                a->caps = m.caps;
                char caps[64];
                aproto_caps_text(a->caps, caps, sizeof(caps));
                logf_(a, "adapter %s %s (pid %d) started: protocol %d, caps %s%s%s", a->name,
                      a->version, (int)a->pid, a->protocol, caps,
                      m.unknown_caps[0] ? ", unknown caps " : "", m.unknown_caps);
                amsg_free(&m);
                if (a->cfg.record_json && !(a->caps & APROTO_CAP_RECORD)) {
                    snprintf(what, sizeof(what),
                             "%s %s does not list 'record' in its caps: lock.impl record runs a "
                             "program that speaks the record extension (docs/protocol.md "
                             "\"record\"); for a lock adapter use lock.impl external",
                             a->name, a->version);
                    fail = what;
                    break;
                }
                a->alive = 1;
                return 0;
            }
            amsg_free(&m);
            fail = what;
            break;
        }
        int64_t left = deadline - ls_now_ns();
        if (left <= 0) {
            snprintf(what, sizeof(what), "no hello within %.0fs", (double)timeout / 1e9);
            fail = what;
            break;
        }
        struct pollfd pf = {a->from_fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left / LS_NS_PER_MS) + 1);
        if (pr < 0 && errno != EINTR) {
            fail = "poll failed";
            break;
        }
        if (pr > 0 && read_some(a) == 0) {
            reap(a, 500 * LS_NS_PER_MS);
            snprintf(what, sizeof(what), "%s before its hello",
                     a->pid == 0 ? a->exit_text : "closed its stdout");
            fail = what;
        }
    }
    kill_and_reap(a);
    close_fds(a);
    stderr_tail(a, tail, sizeof(tail));
    logf_(a, "handshake failed: %s", fail);
    return ls_err_set(err, LS_EENV, "adapter for worker %d (%s): %s%s", a->cfg.worker, prog, fail,
                      tail);
}

/* ---- public ---- */

int adapter_start(struct adapter *a, const struct adapter_config *cfg, struct ls_err *err)
{
    memset(a, 0, sizeof(*a));
    a->cfg = *cfg;
    a->to_fd = a->from_fd = -1;
    a->t0 = ls_now_ns();
    a->next_id = 1;
    aproto_lines_init(&a->lines, APROTO_MAX_LINE);
    if (pthread_mutex_init(&a->mu, NULL) != 0)
        return ls_err_set(err, LS_EENV, "adapter: mutex");
    a->mu_init = 1;
    if (!cfg->argv || !cfg->argv[0] || !cfg->argv[0][0])
        return ls_err_set(err, LS_EUSAGE, "adapter: no command");
    if (cfg->log_path) {
        a->log = fopen(cfg->log_path, "ae");
        if (!a->log)
            return ls_err_errno(err, LS_EIO, errno, "adapter: open %s", cfg->log_path);
    }
    int rc = spawn(a, err);
    if (rc < 0)
        return rc;
    return handshake(a, err);
}

int adapter_restart(struct adapter *a, struct ls_err *err)
{
    pthread_mutex_lock(&a->mu);
    a->alive = 0;
    kill_and_reap(a);
    close_fds(a);
    a->pending_id = 0;
    logf_(a, "restarting the adapter");
    int rc = spawn(a, err);
    if (rc == 0)
        rc = handshake(a, err);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void adapter_close(struct adapter *a)
{
    if (!a || !a->mu_init)
        return;
    pthread_mutex_lock(&a->mu);
    if (a->pid > 0) {
        struct strbuf sb = STRBUF_INIT;
        aproto_write_bye(&sb);
        int64_t deadline = ls_now_ns() + ADAPTER_BYE_GRACE_NS;
        if (a->alive)
            write_all(a, sb.buf, sb.len, deadline);
        sb_free(&sb);
        if (a->to_fd >= 0)
            close(a->to_fd);
        a->to_fd = -1;
        /* keep reading (events, late replies) so a chatty adapter never
         * blocks on a full pipe while it exits */
        while (a->pid > 0 && !reap(a, 0) && ls_now_ns() < deadline) {
            struct pollfd pf = {a->from_fd, POLLIN, 0};
            if (a->from_fd >= 0 && poll(&pf, 1, 5) > 0) {
                char why[8];
                struct amsg none;
                if (read_some(a) == 0) {
                    close(a->from_fd);
                    a->from_fd = -1;
                }
                drain(a, 0, &none, why, sizeof(why));
            } else if (a->from_fd < 0) {
                ls_sleep_ns(5 * LS_NS_PER_MS);
            }
        }
        if (a->pid > 0) {
            logf_(a, "no exit within 1s of bye: SIGTERM");
            kill(a->pid, SIGCONT);
            kill(a->pid, SIGTERM);
            if (!reap(a, ADAPTER_BYE_GRACE_NS)) {
                logf_(a, "still there 1s after SIGTERM: SIGKILL");
                kill_and_reap(a);
            }
        }
        logf_(a, "adapter stopped (%s)", a->exit_text);
    }
    if (a->group > 0) {
        /* the leader is reaped; its group lives on (and its id cannot be
         * reused) while anything it started is in it */
        int live = proc_group_live(a->group); /* zombies (dead) keep a group too */
        if (kill(-a->group, SIGKILL) == 0 && live)
            logf_(a, "killed what the adapter left in its process group %d", (int)a->group);
        a->group = 0;
    }
    close_fds(a);
    aproto_lines_free(&a->lines);
    for (int i = 0; i < a->lost_n; i++) {
        int k = (a->lost_head + i) % ADAPTER_LOST_QUEUE;
        free(a->lost[k].res);
        free(a->lost[k].token);
    }
    a->lost_n = 0;
    struct amsg rn;
    while (take_renewed(a, &rn))
        amsg_free(&rn);
    for (size_t i = a->rec_head; i < a->rec_n; i++)
        amsg_free(&a->recq[i]);
    free(a->recq);
    a->recq = NULL;
    a->rec_head = a->rec_n = a->rec_cap = 0;
    if (a->log)
        fclose(a->log);
    a->log = NULL;
    a->alive = 0;
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_destroy(&a->mu);
    a->mu_init = 0;
}

/* Contract: the request loop, with the mutex held: write line (for id),
 * wait for the reply. See adapter_request. */
static int exchange(struct adapter *a, int64_t id, const char *line, size_t len, int op,
                    int64_t timeout_ns, struct amsg *reply, int *sent, char *why, size_t whylen)
{
    int64_t deadline = ls_now_ns() + timeout_ns;
    memset(reply, 0, sizeof(*reply));
    if (sent)
        *sent = 0;
    /* whatever arrived since the last call first (events, late replies) */
    char dwhy[8];
    drain(a, 0, reply, dwhy, sizeof(dwhy));
    if (!a->alive) {
        snprintf(why, whylen, "the adapter is not running (%s)",
                 a->exit_text[0] ? a->exit_text : "not started");
        return ADAPTER_DEAD;
    }
    int w = write_all(a, line, len, deadline);
    if (w == -1) {
        mark_dead(a, "its stdin is closed");
        snprintf(why, whylen, "the adapter is gone (%s)", a->exit_text);
        return ADAPTER_DEAD;
    }
    a->st.requests++;
    if (sent)
        *sent = 1; /* a partial write at the deadline counts as sent too */
    a->pending_id = id;
    int rc;
    if (w == -2) {
        snprintf(why, whylen, "could not write the request within the timeout");
        a->st.timeouts++;
        rc = ADAPTER_TIMEOUT;
        goto out;
    }
    for (;;) {
        int t = drain(a, op, reply, why, whylen);
        if (t == TL_REPLY) {
            rc = ADAPTER_REPLY;
            break;
        }
        if (t == TL_PROTO) {
            rc = ADAPTER_PROTO;
            break;
        }
        int64_t left = deadline - ls_now_ns();
        if (left <= 0) {
            a->st.timeouts++;
            snprintf(why, whylen, "no reply within %.0fms", (double)timeout_ns / 1e6);
            rc = ADAPTER_TIMEOUT;
            break;
        }
        struct pollfd pf = {a->from_fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)((left + LS_NS_PER_MS - 1) / LS_NS_PER_MS));
        if (pr < 0 && errno != EINTR) {
            snprintf(why, whylen, "poll: %s", strerror(errno));
            rc = ADAPTER_TIMEOUT;
            break;
        }
        if (pr > 0 && read_some(a) == 0) {
            /* the lines it wrote before its end still count */
            int t2 = drain(a, op, reply, why, whylen);
            if (t2 == TL_REPLY) {
                mark_dead(a, "its stdout closed");
                rc = ADAPTER_REPLY;
                break;
            }
            mark_dead(a, "its stdout closed");
            snprintf(why, whylen, "the adapter exited during the request (%s)", a->exit_text);
            rc = ADAPTER_DEAD;
            break;
        }
    }
out:
    if (rc != ADAPTER_REPLY)
        abandon(a, id);
    a->pending_id = 0;
    return rc;
}

int adapter_request_members(struct adapter *a, const char *members, int op, int64_t timeout_ns,
                            struct amsg *reply, int *sent, char *why, size_t whylen)
{
    pthread_mutex_lock(&a->mu);
    int64_t id = a->next_id++;
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "{\"id\":%lld%s%s}\n", (long long)id, members && *members ? "," : "",
              members ? members : "");
    int rc = exchange(a, id, sb.buf, sb.len, op, timeout_ns, reply, sent, why, whylen);
    sb_free(&sb);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int adapter_request(struct adapter *a, int op, const char *res, const char *token,
                    int64_t ttl_ns, int64_t timeout_ns, struct amsg *reply, int *sent,
                    char *why, size_t whylen)
{
    pthread_mutex_lock(&a->mu);
    int64_t id = a->next_id++;
    struct strbuf sb = STRBUF_INIT;
    aproto_write_request(&sb, id, op, res, token, ttl_ns);
    int rc = exchange(a, id, sb.buf, sb.len, op, timeout_ns, reply, sent, why, whylen);
    sb_free(&sb);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int adapter_stall(struct adapter *a, int64_t ms, int64_t timeout_ns, struct amsg *reply,
                  int *sent, char *why, size_t whylen)
{
    pthread_mutex_lock(&a->mu);
    int64_t id = a->next_id++;
    struct strbuf sb = STRBUF_INIT;
    aproto_write_stall(&sb, id, ms);
    int rc = exchange(a, id, sb.buf, sb.len, AOP_STALL, timeout_ns, reply, sent, why, whylen);
    sb_free(&sb);
    if (rc == ADAPTER_REPLY && reply->ok)
        a->st.stalls++;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int adapter_clock(struct adapter *a, int64_t timeout_ns, struct adapter_clock *out, char *why,
                  size_t whylen)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&a->mu);
    if (!(a->caps & APROTO_CAP_CLOCK)) {
        pthread_mutex_unlock(&a->mu);
        snprintf(why, whylen, "the adapter does not implement the clock extension (its caps "
                              "lack 'clock')");
        return ADAPTER_PROTO;
    }
    int64_t id = a->next_id++;
    struct strbuf sb = STRBUF_INIT;
    aproto_write_clock(&sb, id);
    struct amsg m;
    out->real_before = ls_realtime_ns();
    int rc = exchange(a, id, sb.buf, sb.len, AOP_CLOCK, timeout_ns, &m, NULL, why, whylen);
    out->real_after = ls_realtime_ns();
    sb_free(&sb);
    pthread_mutex_unlock(&a->mu);
    if (rc != ADAPTER_REPLY)
        return rc;
    if (!m.ok) {
        snprintf(why, whylen, "clock: the adapter answered ok:false (%s)",
                 m.error ? m.error : "no error text");
        rc = ADAPTER_PROTO;
    } else if (!aproto_clock_plausible(m.wall_ms)) {
        snprintf(why, whylen, "clock: wall_ms %.17g is not milliseconds since the epoch",
                 m.wall_ms);
        rc = ADAPTER_PROTO;
    } else {
        out->wall_ms = m.wall_ms;
        out->has_mono = m.has_mono;
        out->mono_ms = m.mono_ms;
    }
    amsg_free(&m);
    return rc;
}

int adapter_send_raw(struct adapter *a, const char *bytes, size_t n)
{
    pthread_mutex_lock(&a->mu);
    int rc = -1;
    if (a->alive) {
        rc = write_all(a, bytes, n, ls_now_ns() + LS_NS_PER_S) == 0 ? 0 : -1;
        if (rc < 0)
            mark_dead(a, "its stdin is closed");
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Sleep until the absolute monotonic time t; 0 either way (a signal ends
 * it early, like a poll would). */
static int sleep_until(int64_t t)
{
    struct timespec ts = {(time_t)(t / LS_NS_PER_S), (long)(t % LS_NS_PER_S)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    return 0;
}

/* Contract: the wait of adapter_wait_event and adapter_wait_record, called
 * with a->mu held once the caller's queues are found empty; returns with
 * it released. 2 when the adapter's exit is pending (cleared); 0 when
 * until_ns has passed or a signal ended the wait; -1 when there may be
 * more to take (stdout was readable and is read, its end included, or the
 * poll timed out): the caller looks at its queues again. */
static int wait_more(struct adapter *a, int64_t until_ns)
{
    if (a->exit_pending) {
        a->exit_pending = 0;
        pthread_mutex_unlock(&a->mu);
        return 2;
    }
    int fd = a->alive ? a->from_fd : -1;
    pthread_mutex_unlock(&a->mu);
    int64_t left = until_ns - ls_now_ns();
    if (left <= 0)
        return 0;
    if (fd < 0)
        return sleep_until(until_ns);
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, (int)((left + LS_NS_PER_MS - 1) / LS_NS_PER_MS));
    if (pr < 0)
        return 0; /* EINTR: the worker looks at its stop flags */
    if (pr == 0)
        return -1; /* the next deadline check ends it */
    pthread_mutex_lock(&a->mu);
    if (a->alive && a->from_fd == fd && read_some(a) == 0) {
        char why[8];
        struct amsg none;
        drain(a, 0, &none, why, sizeof(why)); /* the lines before its end count */
        mark_dead(a, "its stdout closed");
    }
    pthread_mutex_unlock(&a->mu);
    return -1;
}

int adapter_wait_event(struct adapter *a, int64_t until_ns, struct amsg *ev)
{
    memset(ev, 0, sizeof(*ev));
    for (;;) {
        pthread_mutex_lock(&a->mu);
        char why[8];
        struct amsg none;
        drain(a, 0, &none, why, sizeof(why));
        if (a->lost_n > 0) {
            ev->kind = AMSG_LOST;
            ev->res = a->lost[a->lost_head].res;
            ev->token = a->lost[a->lost_head].token;
            a->lost_head = (a->lost_head + 1) % ADAPTER_LOST_QUEUE;
            a->lost_n--;
            pthread_mutex_unlock(&a->mu);
            return 1;
        }
        if (take_renewed(a, ev)) {
            pthread_mutex_unlock(&a->mu);
            return 3;
        }
        int w = wait_more(a, until_ns);
        if (w >= 0)
            return w;
    }
}

int adapter_wait_record(struct adapter *a, int64_t until_ns, struct amsg *ev)
{
    memset(ev, 0, sizeof(*ev));
    for (;;) {
        pthread_mutex_lock(&a->mu);
        char why[8];
        struct amsg none;
        drain(a, 0, &none, why, sizeof(why));
        if (a->rec_head < a->rec_n) {
            *ev = a->recq[a->rec_head++];
            pthread_mutex_unlock(&a->mu);
            return 1;
        }
        int w = wait_more(a, until_ns);
        if (w >= 0)
            return w;
    }
}

int adapter_record_op(struct adapter *a, int ctl)
{
    pthread_mutex_lock(&a->mu);
    int rc = -1;
    if (a->alive) {
        struct strbuf sb = STRBUF_INIT;
        aproto_write_record_op(&sb, ctl);
        int w = write_all(a, sb.buf, sb.len, ls_now_ns() + LS_NS_PER_S);
        sb_free(&sb);
        if (w == -1) {
            /* gone, or going: the lines it wrote before are in its stdout
             * pipe still, and count (read now: a dead adapter is not read) */
            for (int k = 0; k < 256 && read_some(a) > 0; k++) /* bounded: one still writing */
                ;
            char why[8];
            struct amsg none;
            drain(a, 0, &none, why, sizeof(why));
            mark_dead(a, "its stdin is closed");
        }
        rc = w == 0 ? 0 : -1;
        logf_(a, "%s sent%s", ctl == LOCK_REC_START ? "start" : "stop", rc ? " (failed)" : "");
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int adapter_alive(struct adapter *a)
{
    pthread_mutex_lock(&a->mu);
    int r = a->alive;
    pthread_mutex_unlock(&a->mu);
    return r;
}

void adapter_get_stats(struct adapter *a, struct adapter_stats *out)
{
    pthread_mutex_lock(&a->mu);
    *out = a->st;
    pthread_mutex_unlock(&a->mu);
}
