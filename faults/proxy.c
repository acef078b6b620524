/*
 * proxy.c: the proxy process (see proxy.h), one epoll loop. Each accepted
 * connection on a link's listener gets a connection to its node; the pair
 * forwards two directions (to-node: client -> node, from-node: node ->
 * client), each a byte buffer plus a queue of chunks (one per read) with
 * the time each may leave. Idle path: read, queue with release = now,
 * write at once; buffers are allocated per connection, never per chunk.
 * Under rules: latency holds a chunk until read time + delay + jitter but
 * never before the chunk before it (no reordering, no accumulation);
 * hold keeps chunks until the rule is lifted; blackhole drops bytes as
 * they are read; reset kills connections with RST (SO_LINGER 0) and
 * resets new ones at accept; rate is a token bucket; slice/gap split
 * writes. A source is no longer read once 4 MiB wait in its direction,
 * so TCP backpressure reaches the sender. One timerfd wakes the loop for
 * the earliest pending release. A node with a password gets the proxy's
 * AUTH as the first bytes of each connection, outside every rule (it is
 * the proxy's handshake, not the client's traffic), and the first line the
 * node answers is consumed, never forwarded. A link a command rule covers
 * takes its requests and replies through proxy_cmd.c, which parses them;
 * no other byte is parsed. Not here: the harness side (proxy_ctl.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "faults/proxy_loop.h"
#include "util/rng.h"
#include "util/timeutil.h"

void plog(struct pstate *st, const char *fmt, ...)
{
    if (!st->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(st->log, "[%9.3f] ", (double)(ls_now_ns() - st->t0) / 1e9);
    vfprintf(st->log, fmt, ap);
    fputc('\n', st->log);
    va_end(ap);
}

const struct proxy_rule *rule_of(const struct pstate *st, const struct pconn *c, int dir)
{
    return &st->rules[(size_t)c->link * 2 + (size_t)dir];
}

static size_t held(const struct pdir *d)
{
    return d->tail - d->head;
}

static void set_wake(struct pstate *st, struct pdir *d, int64_t t)
{
    if (!d->wake && t)
        st->ntimed++;
    else if (d->wake && !t)
        st->ntimed--;
    d->wake = t;
}

static void sock_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Close fd so the peer sees a reset (RST), not an orderly FIN. */
static void close_reset(int fd)
{
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
}

/* End the pair: both fds closed (with RST when reset), the memory freed
 * after the current batch of events (later events of the batch may still
 * name it). */
void conn_kill(struct pstate *st, struct pconn *c, int reset)
{
    if (c->dead)
        return;
    for (int k = 0; k < 2; k++) {
        if (c->fd[k] >= 0) {
            if (reset)
                close_reset(c->fd[k]);
            else
                close(c->fd[k]);
            c->fd[k] = -1;
        }
        set_wake(st, &c->d[k], 0);
    }
    c->dead = 1;
    if (c->prev)
        c->prev->next = c->next;
    else
        st->live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next_dead = st->dead;
    st->dead = c;
    atomic_fetch_sub_explicit(&st->stats[c->link].open, 1, memory_order_relaxed);
}

static void free_dead(struct pstate *st)
{
    while (st->dead) {
        struct pconn *c = st->dead;
        st->dead = c->next_dead;
        for (int k = 0; k < 2; k++) {
            free(c->d[k].buf);
            free(c->d[k].q);
        }
        pcmd_free(st, c);
        free(c);
    }
}

/* Room to read into at the tail: compact, then grow (bounded). */
static size_t dir_space(struct pdir *d)
{
    if (d->cap - d->tail >= READ_MIN)
        return d->cap - d->tail;
    if (d->head > 0) {
        memmove(d->buf, d->buf + d->head, d->tail - d->head);
        d->tail -= d->head;
        d->head = 0;
    }
    if (d->cap - d->tail < READ_MIN && d->cap < MAX_HELD + BUF_INIT) {
        size_t ncap = d->cap * 2;
        if (ncap > MAX_HELD + BUF_INIT)
            ncap = MAX_HELD + BUF_INIT;
        char *nb = realloc(d->buf, ncap);
        if (nb) {
            d->buf = nb;
            d->cap = ncap;
        }
    }
    return d->cap - d->tail;
}

/* Queue len bytes (already at the buffer's tail) released at release.
 * Chunks that are both due merge, so the idle path keeps one chunk. */
int push_chunk(struct pdir *d, size_t len, int64_t release, int64_t now)
{
    if (d->qn > 0) {
        struct pchunk *t = &d->q[(d->qhead + d->qn - 1) % d->qcap];
        if (release <= now && t->release <= now) {
            t->len += len;
            return 0;
        }
    }
    if (d->qn == d->qcap) {
        size_t ncap = d->qcap * 2;
        struct pchunk *nq = malloc(ncap * sizeof(*nq));
        if (!nq)
            return -1;
        for (size_t i = 0; i < d->qn; i++)
            nq[i] = d->q[(d->qhead + i) % d->qcap];
        free(d->q);
        d->q = nq;
        d->qcap = ncap;
        d->qhead = 0;
    }
    d->q[(d->qhead + d->qn) % d->qcap] = (struct pchunk){len, release};
    d->qn++;
    return 0;
}

static void pop_bytes(struct pdir *d, size_t n)
{
    struct pchunk *ch = &d->q[d->qhead];
    d->head += n;
    ch->len -= n;
    if (ch->len == 0) {
        d->qhead = (d->qhead + 1) % d->qcap;
        d->qn--;
    }
    if (d->qn == 0 && !d->unpushed)
        d->head = d->tail = 0;
}

/* Pass FIN on once the source ended and nothing of it waits; the pair
 * ends when both directions did. */
static void maybe_shut(struct pstate *st, struct pconn *c, int k)
{
    struct pdir *d = &c->d[k];
    if (c->dead || !d->eof || d->shut || d->qn || (k == PROXY_TO_NODE && c->connecting))
        return;
    shutdown(c->fd[1 - k], SHUT_WR);
    d->shut = 1;
    if (c->d[0].shut && c->d[1].shut)
        conn_kill(st, c, 0);
}

/* Write what direction k may write now; arm its wake for what it must
 * wait for. */
void dir_flush(struct pstate *st, struct pconn *c, int k, int64_t t)
{
    struct pdir *d = &c->d[k];
    if (c->dead || (k == PROXY_TO_NODE && c->connecting))
        return;
    const struct proxy_rule *r = rule_of(st, c, k);
    int out = c->fd[1 - k];
    set_wake(st, d, 0);
    d->wblocked = 0;
    while (d->qn) {
        struct pchunk *ch = &d->q[d->qhead];
        if (ch->release > t) {
            set_wake(st, d, ch->release);
            break;
        }
        if (r->partition == PROXY_PART_HOLD)
            break;
        if (r->partition == PROXY_PART_BLACKHOLE || r->partition == PROXY_PART_RESET) {
            c->lost_bytes = 1;
            atomic_fetch_add_explicit(&st->stats[c->link].dropped[k], ch->len,
                                      memory_order_relaxed);
            pop_bytes(d, ch->len);
            continue;
        }
        size_t n = ch->len;
        if (r->slice > 0 && n > (size_t)r->slice)
            n = (size_t)r->slice;
        if (r->gap_ns > 0 && d->next_ok > t) {
            set_wake(st, d, d->next_ok);
            break;
        }
        if (r->rate > 0) {
            double burst = (double)r->rate / 50.0; /* 20 ms worth */
            if (burst < 1.0)
                burst = 1.0;
            d->tokens += (double)(t - d->refill_ns) * (double)r->rate / 1e9;
            if (d->tokens > burst)
                d->tokens = burst;
            d->refill_ns = t;
            double need = (double)n < burst ? (double)n : burst;
            if (d->tokens < need) {
                set_wake(st, d, t + (int64_t)((need - d->tokens) * 1e9 / (double)r->rate) + 1);
                break;
            }
            if ((double)n > d->tokens)
                n = (size_t)d->tokens;
        }
        ssize_t w = send(out, d->buf + d->head, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                d->wblocked = 1;
                break;
            }
            conn_kill(st, c, 0);
            return;
        }
        atomic_fetch_add_explicit(&st->stats[c->link].bytes[k], (uint64_t)w, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->stats[c->link].writes[k], 1, memory_order_relaxed);
        pop_bytes(d, (size_t)w);
        if (r->rate > 0)
            d->tokens -= (double)w;
        if (r->gap_ns > 0)
            d->next_ok = t + r->gap_ns;
        if ((size_t)w < n) {
            d->wblocked = 1;
            break;
        }
    }
    maybe_shut(st, c, k);
}

/* Send the proxy's AUTH to the node once connected (a fresh socket's
 * send buffer takes it whole). Returns 0, or -1 with the pair killed. */
static int send_auth(struct pstate *st, struct pconn *c)
{
    int node = c->link % st->nnodes;
    const char *cmd = st->pc->auth[node];
    if (!cmd)
        return 0;
    ssize_t w = send(c->fd[1], cmd, st->pc->auth_len[node], MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w == (ssize_t)st->pc->auth_len[node])
        return 0;
    plog(st, "link %d: AUTH to node %d: %s", c->link, node,
         w < 0 ? strerror(errno) : "short write");
    conn_kill(st, c, 1);
    return -1;
}

/* The node's reply to the proxy's AUTH: its first line. Consumes it from
 * the n bytes at p (moving what follows to p) and returns the bytes left
 * for the client; -1 when the node refused (the pair is reset: the client
 * sees a node that closed on it, and the log says why). */
static ssize_t auth_reply(struct pstate *st, struct pconn *c, char *p, size_t n)
{
    char *nl = memchr(p, '\n', n);
    size_t take = nl ? (size_t)(nl - p) + 1 : n;
    size_t room = sizeof(c->auth_line) - 1 - c->auth_len;
    size_t keep = take < room ? take : room;
    memcpy(c->auth_line + c->auth_len, p, keep);
    c->auth_len += keep;
    c->auth_line[c->auth_len] = '\0';
    if (!nl)
        return 0;
    c->auth_pending = 0;
    if (strcmp(c->auth_line, "+OK\r\n") != 0) {
        plog(st, "link %d: node %d refused the proxy's AUTH: %.*s; connection reset", c->link,
             c->link % st->nnodes, (int)strcspn(c->auth_line, "\r\n"), c->auth_line);
        conn_kill(st, c, 1);
        return -1;
    }
    memmove(p, p + take, n - take);
    return (ssize_t)(n - take);
}

/* One read from side k into its direction. Returns 1 when bytes were
 * read, 0 otherwise (nothing there, EOF, room exhausted, or the pair died). */
static int do_read(struct pstate *st, struct pconn *c, int k)
{
    struct pdir *d = &c->d[k];
    if (c->dead || d->eof || held(d) >= MAX_HELD)
        return 0;
    size_t space = dir_space(d);
    if (space == 0)
        return 0;
    ssize_t n = read(c->fd[k], d->buf + d->tail, space);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_kill(st, c, 0);
        return 0;
    }
    if (n == 0) {
        d->eof = 1;
        if (c->cmd)
            pcmd_eof(st, c, ls_now_ns());
        maybe_shut(st, c, k);
        return 0;
    }
    if (k == PROXY_FROM_NODE && c->auth_pending) {
        n = auth_reply(st, c, d->buf + d->tail, (size_t)n);
        if (n <= 0)
            return n == 0;
    }
    int64_t t = ls_now_ns();
    const struct proxy_rule *r = rule_of(st, c, k);
    if (r->partition == PROXY_PART_BLACKHOLE || r->partition == PROXY_PART_RESET) {
        c->lost_bytes = 1;
        c->talked = 1;
        atomic_fetch_add_explicit(&st->stats[c->link].dropped[k], (uint64_t)n,
                                  memory_order_relaxed);
        return 1;
    }
    int64_t rel = t;
    if (r->delay_ns > 0 || r->jitter_ns > 0)
        rel = t + r->delay_ns + (r->jitter_ns > 0 ? rng_range(&st->rng, 0, r->jitter_ns) : 0);
    if (k == PROXY_TO_NODE ? (r->cmd_mask || c->cmd) : c->cmd != NULL) {
        /* a command rule covers the link, or the connection is still parsed */
        if (k == PROXY_TO_NODE)
            pcmd_to_node(st, c, (size_t)n, t, rel);
        else
            pcmd_from_node(st, c, (size_t)n, t, rel);
        c->talked = 1;
        return !c->dead;
    }
    c->talked = 1;
    d->tail += (size_t)n;
    if (rel < d->last_release)
        rel = d->last_release;
    d->last_release = rel;
    if (push_chunk(d, (size_t)n, rel, t) < 0) {
        plog(st, "link %d: out of memory queueing %zd bytes; connection closed", c->link, n);
        conn_kill(st, c, 1);
        return 0;
    }
    dir_flush(st, c, k, t);
    return 1;
}

/* Register what each side waits for: readable while its direction has
 * room, writable while the other direction is blocked (or connecting). */
static void update_events(struct pstate *st, struct pconn *c)
{
    if (c->dead)
        return;
    for (int k = 0; k < 2; k++) {
        if (c->gone[k])
            continue;
        uint32_t want = 0;
        if (!c->d[k].eof && held(&c->d[k]) < MAX_HELD)
            want |= EPOLLIN;
        if (c->d[1 - k].wblocked || (k == 1 && c->connecting))
            want |= EPOLLOUT;
        if (want != c->ev[k]) {
            struct epoll_event ev = {.events = want, .data.ptr = &c->tag[k]};
            epoll_ctl(st->ep, EPOLL_CTL_MOD, c->fd[k], &ev);
            c->ev[k] = want;
        }
    }
}

static int link_resets(const struct pstate *st, int link)
{
    return st->rules[(size_t)link * 2].partition == PROXY_PART_RESET ||
           st->rules[(size_t)link * 2 + 1].partition == PROXY_PART_RESET;
}

static int dir_init(struct pdir *d)
{
    d->buf = malloc(BUF_INIT);
    d->q = malloc(Q_INIT * sizeof(*d->q));
    d->cap = BUF_INIT;
    d->qcap = Q_INIT;
    return d->buf && d->q ? 0 : -1;
}

/* A new client on link: reset it when the link resets, else connect to
 * the node (non-blocking) and start forwarding. */
static void accept_one(struct pstate *st, int link, int fd)
{
    struct proxy_stats_shm *s = &st->stats[link];
    atomic_fetch_add_explicit(&s->accepted, 1, memory_order_relaxed);
    if (link_resets(st, link)) {
        close_reset(fd);
        atomic_fetch_add_explicit(&s->resets, 1, memory_order_relaxed);
        return;
    }
    sock_nodelay(fd);
    int node = link % st->nnodes;
    int up = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (up < 0) {
        if (st->connect_errors++ < 20)
            plog(st, "link %d: socket: %s", link, strerror(errno));
        close_reset(fd);
        return;
    }
    sock_nodelay(up);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = st->pc->node_addrs[node]};
    sa.sin_port = htons((uint16_t)atomic_load(&st->shm->upstream_port[node]));
    int rc = connect(up, (struct sockaddr *)&sa, sizeof(sa));
    if (rc < 0 && errno != EINPROGRESS) {
        if (st->connect_errors++ < 20)
            plog(st, "link %d: connect to node %d (port %d): %s", link, node,
                 (int)ntohs(sa.sin_port), strerror(errno));
        close(up);
        close_reset(fd);
        return;
    }
    struct pconn *c = calloc(1, sizeof(*c));
    if (!c || dir_init(&c->d[0]) < 0 || dir_init(&c->d[1]) < 0) {
        if (c) {
            for (int k = 0; k < 2; k++) {
                free(c->d[k].buf);
                free(c->d[k].q);
            }
        }
        free(c);
        close(up);
        close_reset(fd);
        plog(st, "link %d: out of memory for a connection", link);
        return;
    }
    c->link = link;
    c->fd[0] = fd;
    c->fd[1] = up;
    c->connecting = rc < 0;
    c->auth_pending = st->pc->auth[node] != NULL;
    for (int k = 0; k < 2; k++) {
        c->tag[k] = (struct ptag){TAG_CONN, k, c};
        c->ev[k] = EPOLLIN | (k == 1 && c->connecting ? EPOLLOUT : 0);
        struct epoll_event ev = {.events = c->ev[k], .data.ptr = &c->tag[k]};
        epoll_ctl(st->ep, EPOLL_CTL_ADD, c->fd[k], &ev);
    }
    c->next = st->live;
    if (st->live)
        st->live->prev = c;
    st->live = c;
    atomic_fetch_add_explicit(&s->open, 1, memory_order_relaxed);
    if (!c->connecting)
        send_auth(st, c);
}

static void on_listen(struct pstate *st, int link)
{
    for (;;) {
        int fd = accept4(st->pc->listen_fds[link], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && st->accept_errors++ < 20)
                plog(st, "link %d: accept: %s", link, strerror(errno));
            return;
        }
        accept_one(st, link, fd);
    }
}

static void on_conn(struct pstate *st, struct pconn *c, int k, uint32_t events)
{
    if (c->dead)
        return;
    int64_t t = ls_now_ns();
    if (k == 1 && c->connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int e = 0;
        socklen_t len = sizeof(e);
        if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) < 0)
            e = errno;
        if (e) {
            if (st->connect_errors++ < 20)
                plog(st, "link %d: connect to node %d: %s", c->link, c->link % st->nnodes,
                     strerror(e));
            conn_kill(st, c, 1);
            return;
        }
        c->connecting = 0;
        if (send_auth(st, c) < 0)
            return;
        dir_flush(st, c, PROXY_TO_NODE, t);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        do_read(st, c, k);
    if (!c->dead && (events & EPOLLOUT))
        dir_flush(st, c, 1 - k, t);
    if (!c->dead && (events & EPOLLERR)) {
        conn_kill(st, c, 0);
    } else if (!c->dead && (events & EPOLLHUP)) {
        /* Both ways closed on side k. The usual case: we passed FIN on to
         * it earlier and now it closed too; what it sent last may still be
         * waiting (latency), so read to EOF and let that drain without
         * side k in the epoll set (a hung-up fd is reported forever). */
        while (do_read(st, c, k))
            ;
        if (!c->dead && c->d[k].eof && c->d[1 - k].shut) {
            epoll_ctl(st->ep, EPOLL_CTL_DEL, c->fd[k], NULL);
            c->gone[k] = 1;
        } else {
            conn_kill(st, c, 0);
        }
    }
    update_events(st, c);
}

/* Copy the shared table (seqlock read) into st->rules. */
static void read_table(struct pstate *st)
{
    struct proxy_rule_shm *src = proxy_shm_rules(st->shm);
    for (int spins = 0;; spins++) {
        uint64_t s1 = atomic_load_explicit(&st->shm->seq, memory_order_acquire);
        if (s1 & 1) {
            if (spins > 100)
                sched_yield();
            continue;
        }
        for (int i = 0; i < st->nlinks * 2; i++) {
            struct proxy_rule *r = &st->rules[i];
            r->delay_ns = atomic_load_explicit(&src[i].delay_ns, memory_order_relaxed);
            r->jitter_ns = atomic_load_explicit(&src[i].jitter_ns, memory_order_relaxed);
            r->rate = atomic_load_explicit(&src[i].rate, memory_order_relaxed);
            r->slice = atomic_load_explicit(&src[i].slice, memory_order_relaxed);
            r->gap_ns = atomic_load_explicit(&src[i].gap_ns, memory_order_relaxed);
            r->partition = atomic_load_explicit(&src[i].partition, memory_order_relaxed);
            r->cmd_mask = atomic_load_explicit(&src[i].cmd_mask, memory_order_relaxed);
        }
        pcmd_read_rules(st);
        st->gen = atomic_load_explicit(&st->shm->generation, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&st->shm->seq, memory_order_relaxed) == s1)
            return;
    }
}

static void apply_table(struct pstate *st)
{
    read_table(st);
    uint64_t resets = 0;
    int64_t t = ls_now_ns();
    struct pconn *next;
    for (struct pconn *c = st->live; c; c = next) {
        next = c->next;
        /* A stream that lost bytes to a blackhole cannot go on once the
         * link heals: a real network would have retransmitted them or the
         * connection would have died, never delivered later bytes with a
         * hole before them (clients would match replies to the wrong
         * requests). So when its link no longer blackholes, it is reset,
         * as the TCP stack of a long partition eventually does. */
        const struct proxy_rule *r0 = rule_of(st, c, 0), *r1 = rule_of(st, c, 1);
        int healed = r0->partition != PROXY_PART_BLACKHOLE && r1->partition != PROXY_PART_BLACKHOLE;
        if (link_resets(st, c->link) || (c->lost_bytes && healed)) {
            conn_kill(st, c, 1);
            atomic_fetch_add_explicit(&st->stats[c->link].resets, 1, memory_order_relaxed);
            resets++;
            continue;
        }
        if (pcmd_apply(st, c, t)) {
            atomic_fetch_add_explicit(&st->stats[c->link].resets, 1, memory_order_relaxed);
            resets++;
            continue;
        }
        dir_flush(st, c, 0, t);
        dir_flush(st, c, 1, t);
        update_events(st, c);
    }
    int nrules = 0;
    for (int i = 0; i < st->nlinks * 2; i++) {
        const struct proxy_rule *r = &st->rules[i];
        nrules += r->delay_ns || r->jitter_ns || r->partition || r->rate || r->slice || r->gap_ns ||
                  r->cmd_mask;
    }
    atomic_store_explicit(&st->shm->applied_resets, resets, memory_order_relaxed);
    atomic_store_explicit(&st->shm->applied, st->gen, memory_order_release);
    uint64_t one = 1;
    ssize_t w = write(st->pc->ack_fd, &one, sizeof(one));
    (void)w;
    plog(st, "generation %llu applied: %d link directions with rules, %llu connections reset",
         (unsigned long long)st->gen, nrules, (unsigned long long)resets);
}

static void on_timer(struct pstate *st)
{
    uint64_t x;
    ssize_t r = read(st->timer_fd, &x, sizeof(x));
    (void)r;
    st->armed = 0;
    int64_t t = ls_now_ns();
    struct pconn *next;
    for (struct pconn *c = st->live; c && st->ntimed; c = next) {
        next = c->next;
        for (int k = 0; k < 2 && !c->dead; k++)
            if (c->d[k].wake && c->d[k].wake <= t)
                dir_flush(st, c, k, t);
        update_events(st, c);
    }
}

/* Point the timerfd at the earliest wake (scanning only while any). */
static void rearm(struct pstate *st)
{
    int64_t min = 0;
    if (st->ntimed > 0)
        for (struct pconn *c = st->live; c; c = c->next)
            for (int k = 0; k < 2; k++)
                if (c->d[k].wake && (!min || c->d[k].wake < min))
                    min = c->d[k].wake;
    if (min == st->armed)
        return;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (min) {
        its.it_value.tv_sec = (time_t)(min / LS_NS_PER_S);
        its.it_value.tv_nsec = (long)(min % LS_NS_PER_S);
    }
    timerfd_settime(st->timer_fd, min ? TFD_TIMER_ABSTIME : 0, &its, NULL);
    st->armed = min;
}

static int add_fd(struct pstate *st, int fd, struct ptag *tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    return epoll_ctl(st->ep, EPOLL_CTL_ADD, fd, &ev);
}

static int setup(struct pstate *st)
{
    const struct proxy_child *pc = st->pc;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    st->sig_fd = signalfd(-1, &term, SFD_NONBLOCK | SFD_CLOEXEC);
    st->ep = epoll_create1(EPOLL_CLOEXEC);
    st->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    st->rules = calloc((size_t)st->nlinks * 2, sizeof(*st->rules));
    st->ltags = calloc((size_t)st->nlinks, sizeof(*st->ltags));
    if (st->sig_fd < 0 || st->ep < 0 || st->timer_fd < 0 || !st->rules || !st->ltags) {
        plog(st, "setup failed: %s", strerror(errno));
        return -1;
    }
    st->wtag = (struct ptag){TAG_WAKE, 0, NULL};
    st->ttag = (struct ptag){TAG_TIMER, 0, NULL};
    st->stag = (struct ptag){TAG_SIGNAL, 0, NULL};
    if (add_fd(st, pc->wake_fd, &st->wtag) < 0 || add_fd(st, st->timer_fd, &st->ttag) < 0 ||
        add_fd(st, st->sig_fd, &st->stag) < 0) {
        plog(st, "epoll_ctl: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < st->nlinks; i++) {
        st->ltags[i] = (struct ptag){TAG_LISTEN, i, NULL};
        if (add_fd(st, pc->listen_fds[i], &st->ltags[i]) < 0) {
            plog(st, "epoll_ctl listener %d: %s", i, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void summary(struct pstate *st)
{
    uint64_t acc = 0, bytes[2] = {0, 0}, dropped[2] = {0, 0}, resets = 0;
    for (int i = 0; i < st->nlinks; i++) {
        struct proxy_stats_shm *s = &st->stats[i];
        acc += atomic_load(&s->accepted);
        resets += atomic_load(&s->resets);
        for (int d = 0; d < 2; d++) {
            bytes[d] += atomic_load(&s->bytes[d]);
            dropped[d] += atomic_load(&s->dropped[d]);
        }
    }
    plog(st,
         "stopping: %llu connections accepted, %llu reset; bytes to nodes %llu (dropped %llu), "
         "from nodes %llu (dropped %llu); connect errors %lld",
         (unsigned long long)acc, (unsigned long long)resets, (unsigned long long)bytes[0],
         (unsigned long long)dropped[0], (unsigned long long)bytes[1],
         (unsigned long long)dropped[1], (long long)st->connect_errors);
}

int proxy_main(const struct proxy_child *pc)
{
    struct pstate st;
    memset(&st, 0, sizeof(st));
    st.pc = pc;
    st.shm = pc->shm;
    st.stats = proxy_shm_stats(pc->shm);
    st.nlinks = pc->nworkers * pc->nnodes;
    st.nnodes = pc->nnodes;
    st.t0 = ls_now_ns();
    st.ep = st.timer_fd = st.sig_fd = -1;
    rng_seed(&st.rng, pc->seed, 0x9e0c5);
    if (pc->log_path) {
        st.log = fopen(pc->log_path, "ae");
        if (st.log)
            setvbuf(st.log, NULL, _IOLBF, 0);
    }
    if (setup(&st) < 0)
        return 3;
    read_table(&st);
    plog(&st, "proxy %d up: %d workers x %d nodes = %d listeners on 127.0.0.1", (int)getpid(),
         pc->nworkers, pc->nnodes, st.nlinks);
    atomic_store(&st.shm->ready, 1);
    struct epoll_event evs[MAX_EVENTS];
    while (!st.stopping) {
        int n = epoll_wait(st.ep, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            plog(&st, "epoll_wait: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            struct ptag *tag = evs[i].data.ptr;
            switch (tag->kind) {
            case TAG_LISTEN: on_listen(&st, tag->idx); break;
            case TAG_CONN: on_conn(&st, tag->c, tag->idx, evs[i].events); break;
            case TAG_TIMER: on_timer(&st); break;
            case TAG_WAKE: {
                uint64_t x;
                ssize_t r = read(pc->wake_fd, &x, sizeof(x));
                (void)r;
                apply_table(&st);
                break;
            }
            case TAG_SIGNAL: {
                struct signalfd_siginfo si;
                ssize_t r = read(st.sig_fd, &si, sizeof(si));
                (void)r;
                st.stopping = 1;
                break;
            }
            default: break;
            }
        }
        free_dead(&st);
        rearm(&st);
    }
    summary(&st);
    while (st.live)
        conn_kill(&st, st.live, 0);
    free_dead(&st);
    if (st.log)
        fclose(st.log);
    return 0;
}
