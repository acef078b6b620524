/*
 * proxy_ctl.c: the harness side of the proxy (see proxy.h): binding the
 * listeners, forking the proxy process, the per-fault rule contributions
 * composed into the shared rule table, the wait for the proxy's
 * acknowledgement, and stopping it by pid. Everything here runs in the
 * single-threaded harness. Not here: the proxy's event loop (proxy.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults/proxy_int.h"
#include "util/proc.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define READY_TIMEOUT (5 * LS_NS_PER_S)
#define STOP_GRACE (2 * LS_NS_PER_S)

/* One fault's part of the table. */
struct contrib {
    int id;
    unsigned what;            /* PROXY_SET_* */
    struct proxy_rule rule;
    uint8_t *dirs;            /* nlinks entries of PROXY_DIR_BIT (owned) */
    int slot;                 /* a command rule's slot, or -1 */
    struct proxy_cmd_rule cmd;
};

struct proxy {
    pid_t pid;
    int exited;               /* reaped (it died on its own) */
    int nworkers, nnodes, nlinks;
    struct lock_node *addrs;  /* nlinks: where worker w reaches node n */
    struct proxy_shm *shm;
    size_t shm_size;
    int wake_fd, ack_fd;
    uint64_t generation;
    struct contrib *faults;
    int nfaults, cap;
    struct proxy_rule *table; /* composed rules, nlinks * 2 (scratch) */
    int slot_owner[PROXY_MAX_CMD_RULES]; /* fault id that last had the slot (-1: none) */
    uint8_t slot_busy[PROXY_MAX_CMD_RULES]; /* enum slot_state */
};

/* A command rule slot: free, a fault's, or let go by its fault but maybe
 * still used by the proxy (freed once a generation without it is acked:
 * reused earlier, its counters would be zeroed under the old rule). */
enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_LEAVING };

pid_t proxy_pid(const struct proxy *p)
{
    return p ? p->pid : 0;
}

const struct lock_node *proxy_worker_nodes(const struct proxy *p, int worker)
{
    return &p->addrs[(size_t)worker * (size_t)p->nnodes];
}

void proxy_set_upstream(struct proxy *p, int node, int port)
{
    if (p && node >= 0 && node < p->nnodes)
        atomic_store(&p->shm->upstream_port[node], port);
}

/* The proxy holds a listener per link plus two fds per connection: make
 * sure the soft limit allows it (up to the hard limit). */
static int ensure_fds(int nlinks, struct ls_err *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    rlim_t want = (rlim_t)nlinks * 3 + 256;
    if (rl.rlim_cur >= want)
        return 0;
    rlim_t hard = rl.rlim_max;
    if (hard != RLIM_INFINITY && hard < (rlim_t)nlinks + 128)
        return ls_err_set(err, LS_EENV,
                          "proxy: %d links (workers x nodes) need at least %d file descriptors; the "
                          "hard limit (ulimit -Hn) is %llu",
                          nlinks, nlinks + 128, (unsigned long long)hard);
    rl.rlim_cur = hard == RLIM_INFINITY || hard > want ? want : hard;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return ls_err_errno(err, LS_EENV, errno, "proxy: raise the file descriptor limit to %llu",
                            (unsigned long long)rl.rlim_cur);
    return 0;
}

static int bind_listener(struct lock_node *addr, struct ls_err *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ls_err_errno(err, LS_EENV, errno, "proxy: socket");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno;
        close(fd);
        return ls_err_errno(err, LS_EENV, e, "proxy: listen on 127.0.0.1");
    }
    snprintf(addr->host, sizeof(addr->host), "127.0.0.1");
    addr->port = ntohs(sa.sin_port);
    return fd;
}

static void free_proxy(struct proxy *p)
{
    if (!p)
        return;
    if (p->shm)
        munmap(p->shm, p->shm_size);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    if (p->ack_fd >= 0)
        close(p->ack_fd);
    for (int i = 0; i < p->nfaults; i++)
        free(p->faults[i].dirs);
    free(p->faults);
    free(p->table);
    free(p->addrs);
    free(p);
}

/* Wait (bounded) until the forked proxy says its loop runs. */
static int wait_ready(struct proxy *p, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + READY_TIMEOUT;
    while (!atomic_load(&p->shm->ready)) {
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
            p->exited = 1;
            char text[64];
            return ls_err_set(err, LS_EENV, "proxy: %s during start-up; see its log",
                              proc_status_text(st, text, sizeof(text)));
        }
        if (ls_now_ns() > deadline)
            return ls_err_set(err, LS_ETIMEOUT, "proxy: not running within 5s");
        ls_sleep_ns(200 * LS_NS_PER_US);
    }
    return 0;
}

/* Contract: node's password as the RESP command AUTH <password> in *cmd
 * (caller wipes and frees), or *cmd NULL when the node has none. */
static int auth_command(const struct lock_node *node, char **cmd, size_t *len,
                        struct ls_err *err)
{
    *cmd = NULL;
    *len = 0;
    size_t pl = strnlen(node->password, sizeof(node->password));
    if (pl == 0)
        return 0;
    if (pl >= sizeof(node->password))
        return ls_err_set(err, LS_EUSAGE, "proxy: a node's password is not terminated");
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "*2\r\n$4\r\nAUTH\r\n$%zu\r\n", pl);
    sb_append(&sb, node->password, pl);
    sb_puts(&sb, "\r\n");
    *len = sb.len;
    *cmd = sb_steal(&sb);
    return 0;
}

int proxy_start(const struct proxy_config *cfg, struct proxy **out, struct ls_err *err)
{
    *out = NULL;
    if (cfg->nworkers < 1 || cfg->nnodes < 1 || cfg->nnodes > PROXY_MAX_NODES)
        return ls_err_set(err, LS_EUSAGE, "proxy: %d workers x %d nodes: out of range",
                          cfg->nworkers, cfg->nnodes);
    int nlinks = cfg->nworkers * cfg->nnodes;
    int rc = ensure_fds(nlinks, err);
    if (rc < 0)
        return rc;
    struct proxy *p = calloc(1, sizeof(*p));
    if (!p)
        return ls_err_set(err, LS_ENOMEM, "proxy: out of memory");
    p->wake_fd = p->ack_fd = -1;
    for (int k = 0; k < PROXY_MAX_CMD_RULES; k++)
        p->slot_owner[k] = -1;
    p->nworkers = cfg->nworkers;
    p->nnodes = cfg->nnodes;
    p->nlinks = nlinks;
    p->addrs = calloc((size_t)nlinks, sizeof(*p->addrs));
    p->table = calloc((size_t)nlinks * 2, sizeof(*p->table));
    int *lfds = calloc((size_t)nlinks, sizeof(int));
    p->shm_size = proxy_shm_size(nlinks);
    void *m = mmap(NULL, p->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    p->shm = m == MAP_FAILED ? NULL : m;
    if (!p->addrs || !p->table || !lfds || !p->shm) {
        free(lfds);
        free_proxy(p);
        return ls_err_set(err, LS_ENOMEM, "proxy: out of memory for %d links", nlinks);
    }
    p->shm->nworkers = cfg->nworkers;
    p->shm->nnodes = cfg->nnodes;
    for (int n = 0; n < cfg->nnodes; n++)
        atomic_store(&p->shm->upstream_port[n], cfg->nodes[n].port);
    p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->ack_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->wake_fd < 0 || p->ack_fd < 0)
        rc = ls_err_errno(err, LS_EENV, errno, "proxy: eventfd");
    int nl = 0;
    for (; rc == 0 && nl < nlinks; nl++) {
        lfds[nl] = bind_listener(&p->addrs[nl], err);
        if (lfds[nl] < 0) {
            rc = lfds[nl];
            break;
        }
    }
    if (rc == 0) {
        struct proxy_child pc = {
            .shm = p->shm,
            .nworkers = cfg->nworkers,
            .nnodes = cfg->nnodes,
            .listen_fds = lfds,
            .wake_fd = p->wake_fd,
            .ack_fd = p->ack_fd,
            .log_path = cfg->log_path,
            .seed = cfg->seed,
        };
        for (int n = 0; n < cfg->nnodes && rc == 0; n++)
            if (inet_pton(AF_INET, cfg->nodes[n].host, &pc.node_addrs[n]) != 1)
                rc = ls_err_set(err, LS_EUSAGE, "proxy: node %d: '%s' is not an IPv4 address", n,
                                cfg->nodes[n].host);
        for (int n = 0; n < cfg->nnodes && rc == 0; n++)
            rc = auth_command(&cfg->nodes[n], &pc.auth[n], &pc.auth_len[n], err);
        if (rc == 0)
            p->pid = proc_fork(0); /* its own group, dying with the harness */
        if (p->pid < 0) {
            rc = ls_err_errno(err, LS_EENV, errno, "proxy: fork");
            p->pid = 0;
        } else if (p->pid == 0 && rc == 0) {
            _exit(proxy_main(&pc));
        }
        for (int n = 0; n < cfg->nnodes; n++) { /* the proxy has its own copy */
            ls_wipe(pc.auth[n], pc.auth_len[n]);
            free(pc.auth[n]);
        }
    }
    for (int i = 0; i < nl; i++)
        close(lfds[i]); /* the proxy has its own copies */
    free(lfds);
    if (rc == 0)
        rc = wait_ready(p, err);
    if (rc < 0) {
        if (p->pid > 0 && !p->exited)
            proc_stop(p->pid, SIGKILL, STOP_GRACE);
        free_proxy(p);
        return rc;
    }
    *out = p;
    return 0;
}

void proxy_stop(struct proxy *p)
{
    if (!p)
        return;
    if (p->pid > 0 && !p->exited)
        proc_stop(p->pid, SIGTERM, STOP_GRACE);
    free_proxy(p);
}

/* Compose every contribution into p->table (see proxy_fault_set). */
static void compose(struct proxy *p)
{
    memset(p->table, 0, (size_t)p->nlinks * 2 * sizeof(*p->table));
    for (int f = 0; f < p->nfaults; f++) {
        const struct contrib *c = &p->faults[f];
        if (c->slot >= 0) {
            for (int l = 0; l < p->nlinks; l++)
                if (c->dirs[l])
                    p->table[(size_t)l * 2 + PROXY_TO_NODE].cmd_mask |= 1u << c->slot;
            continue;
        }
        for (int l = 0; l < p->nlinks; l++) {
            for (int d = 0; d < 2; d++) {
                if (!(c->dirs[l] & PROXY_DIR_BIT(d)))
                    continue;
                struct proxy_rule *r = &p->table[(size_t)l * 2 + (size_t)d];
                if (c->what & PROXY_SET_LATENCY) {
                    if (c->rule.delay_ns > r->delay_ns)
                        r->delay_ns = c->rule.delay_ns;
                    if (c->rule.jitter_ns > r->jitter_ns)
                        r->jitter_ns = c->rule.jitter_ns;
                }
                if ((c->what & PROXY_SET_PARTITION) && c->rule.partition > r->partition)
                    r->partition = c->rule.partition;
                if ((c->what & PROXY_SET_RATE) && c->rule.rate > 0 &&
                    (r->rate == 0 || c->rule.rate < r->rate))
                    r->rate = c->rule.rate;
                if (c->what & PROXY_SET_SLICE) {
                    if (c->rule.slice > 0 && (r->slice == 0 || c->rule.slice < r->slice))
                        r->slice = c->rule.slice;
                    if (c->rule.gap_ns > r->gap_ns)
                        r->gap_ns = c->rule.gap_ns;
                }
            }
        }
    }
}

/* Publish p->table as a new generation (seqlock write). */
static uint64_t publish(struct proxy *p)
{
    struct proxy_shm *s = p->shm;
    struct proxy_rule_shm *dst = proxy_shm_rules(s);
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < p->nlinks * 2; i++) {
        const struct proxy_rule *r = &p->table[i];
        atomic_store_explicit(&dst[i].delay_ns, r->delay_ns, memory_order_relaxed);
        atomic_store_explicit(&dst[i].jitter_ns, r->jitter_ns, memory_order_relaxed);
        atomic_store_explicit(&dst[i].rate, r->rate, memory_order_relaxed);
        atomic_store_explicit(&dst[i].slice, r->slice, memory_order_relaxed);
        atomic_store_explicit(&dst[i].gap_ns, r->gap_ns, memory_order_relaxed);
        atomic_store_explicit(&dst[i].partition, r->partition, memory_order_relaxed);
        atomic_store_explicit(&dst[i].cmd_mask, r->cmd_mask, memory_order_relaxed);
    }
    for (int k = 0; k < PROXY_MAX_CMD_RULES; k++) {
        struct proxy_cmd_rule rule;
        memset(&rule, 0, sizeof(rule));
        for (int f = 0; f < p->nfaults; f++)
            if (p->faults[f].slot == k)
                rule = p->faults[f].cmd;
        uint64_t w[PROXY_CMD_WORDS];
        memset(w, 0, sizeof(w));
        memcpy(w, &rule, sizeof(rule));
        for (size_t j = 0; j < PROXY_CMD_WORDS; j++)
            atomic_store_explicit(&s->cmd[k].words[j], w[j], memory_order_relaxed);
    }
    uint64_t gen = ++p->generation;
    atomic_store_explicit(&s->generation, gen, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    return gen;
}

/* Compose, publish, wake the proxy and wait (bounded) for its ack. */
static int commit(struct proxy *p, struct proxy_ack *ack, struct ls_err *err)
{
    if (p->exited)
        return ls_err_set(err, LS_EENV, "proxy: not running (it exited earlier); see its log");
    compose(p);
    int64_t t0 = ls_now_ns();
    uint64_t gen = publish(p);
    uint64_t one = 1;
    if (write(p->wake_fd, &one, sizeof(one)) < 0)
        return ls_err_errno(err, LS_EENV, errno, "proxy: wake");
    int64_t deadline = t0 + PROXY_ACK_TIMEOUT_NS;
    for (;;) {
        if (atomic_load_explicit(&p->shm->applied, memory_order_acquire) >= gen) {
            if (ack) {
                ack->generation = gen;
                ack->resets = atomic_load_explicit(&p->shm->applied_resets, memory_order_relaxed);
                ack->waited_ns = ls_now_ns() - t0;
            }
            for (int k = 0; k < PROXY_MAX_CMD_RULES; k++)
                if (p->slot_busy[k] == SLOT_LEAVING)
                    p->slot_busy[k] = SLOT_FREE;
            return 0;
        }
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
            p->exited = 1;
            char text[64];
            return ls_err_set(err, LS_EENV, "proxy: %s before applying the rules",
                              proc_status_text(st, text, sizeof(text)));
        }
        int64_t left = deadline - ls_now_ns();
        if (left <= 0)
            return ls_err_set(err, LS_ETIMEOUT,
                              "proxy: rule generation %llu not applied within 5s",
                              (unsigned long long)gen);
        struct pollfd pf = {.fd = p->ack_fd, .events = POLLIN};
        int ms = (int)(left / LS_NS_PER_MS) + 1;
        if (ms > 50)
            ms = 50; /* also look at the pid now and then */
        if (poll(&pf, 1, ms) > 0) {
            uint64_t x;
            ssize_t r = read(p->ack_fd, &x, sizeof(x));
            (void)r;
        }
    }
}

static int find_fault(const struct proxy *p, int id)
{
    for (int i = 0; i < p->nfaults; i++)
        if (p->faults[i].id == id)
            return i;
    return -1;
}

/* Fault id's contribution, made or replaced (not committed). Returns its
 * index or -1 when out of memory. */
static int put_contrib(struct proxy *p, int id, unsigned what, const struct proxy_rule *rule,
                       const uint8_t *dirs)
{
    int i = find_fault(p, id);
    if (i < 0) {
        if (p->nfaults == p->cap) {
            int cap = p->cap ? p->cap * 2 : 8;
            struct contrib *a = realloc(p->faults, (size_t)cap * sizeof(*a));
            if (!a)
                return -1;
            p->faults = a;
            p->cap = cap;
        }
        uint8_t *d = malloc((size_t)p->nlinks);
        if (!d)
            return -1;
        i = p->nfaults++;
        p->faults[i].dirs = d;
    }
    struct contrib *c = &p->faults[i];
    c->slot = -1;
    c->id = id;
    c->what = what;
    c->rule = *rule;
    memcpy(c->dirs, dirs, (size_t)p->nlinks);
    return i;
}

int proxy_fault_set(struct proxy *p, int id, unsigned what, const struct proxy_rule *rule,
                    const uint8_t *dirs, struct proxy_ack *ack, struct ls_err *err)
{
    if (put_contrib(p, id, what, rule, dirs) < 0)
        return ls_err_set(err, LS_ENOMEM, "proxy: out of memory");
    return commit(p, ack, err);
}

int proxy_cmd_set(struct proxy *p, int id, const struct proxy_cmd_rule *rule, const uint8_t *sel,
                  struct proxy_ack *ack, struct ls_err *err)
{
    int old = find_fault(p, id);
    if (old >= 0 && p->faults[old].slot >= 0)
        p->slot_busy[p->faults[old].slot] = SLOT_LEAVING;
    int slot = -1;
    for (int k = 0; k < PROXY_MAX_CMD_RULES && slot < 0; k++)
        if (p->slot_busy[k] == SLOT_FREE)
            slot = k;
    if (slot < 0)
        return ls_err_set(err, LS_EUSAGE,
                          "proxy: %d command rules are in force (or not yet acknowledged "
                          "as lifted); end one first",
                          PROXY_MAX_CMD_RULES);
    struct proxy_rule none;
    memset(&none, 0, sizeof(none));
    uint8_t *dirs = malloc((size_t)p->nlinks);
    if (!dirs)
        return ls_err_set(err, LS_ENOMEM, "proxy: out of memory");
    for (int l = 0; l < p->nlinks; l++)
        dirs[l] = sel[l] ? (uint8_t)PROXY_DIR_BIT(PROXY_TO_NODE) : 0;
    /* no generation in force uses the slot: its counters start again */
    atomic_store(&p->shm->cmd[slot].matched, 0);
    atomic_store(&p->shm->cmd[slot].acted, 0);
    int i = put_contrib(p, id, 0, &none, dirs);
    free(dirs);
    if (i < 0)
        return ls_err_set(err, LS_ENOMEM, "proxy: out of memory");
    p->slot_busy[slot] = SLOT_BUSY;
    p->slot_owner[slot] = id;
    p->faults[i].slot = slot;
    p->faults[i].cmd = *rule;
    return commit(p, ack, err);
}

void proxy_cmd_stats(const struct proxy *p, int id, struct proxy_cmd_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < PROXY_MAX_CMD_RULES; k++) {
        if (p->slot_owner[k] != id)
            continue;
        out->matched = atomic_load(&p->shm->cmd[k].matched);
        out->acted = atomic_load(&p->shm->cmd[k].acted);
    }
}

int proxy_fault_clear(struct proxy *p, int id, struct ls_err *err)
{
    int i = find_fault(p, id);
    if (i < 0)
        return 0;
    if (p->faults[i].slot >= 0)
        p->slot_busy[p->faults[i].slot] = SLOT_LEAVING; /* free once acknowledged */
    free(p->faults[i].dirs);
    p->faults[i] = p->faults[--p->nfaults];
    return commit(p, NULL, err);
}

int proxy_heal(struct proxy *p, struct ls_err *err)
{
    for (int k = 0; k < PROXY_MAX_CMD_RULES; k++)
        if (p->slot_busy[k] == SLOT_BUSY)
            p->slot_busy[k] = SLOT_LEAVING;
    for (int i = 0; i < p->nfaults; i++)
        free(p->faults[i].dirs);
    p->nfaults = 0;
    return commit(p, NULL, err);
}

void proxy_rule_of(const struct proxy *p, int worker, int node, int dir, struct proxy_rule *out)
{
    const struct proxy_rule_shm *r =
        &proxy_shm_rules(p->shm)[((size_t)worker * (size_t)p->nnodes + (size_t)node) * 2 +
                                 (size_t)dir];
    out->delay_ns = atomic_load(&r->delay_ns);
    out->jitter_ns = atomic_load(&r->jitter_ns);
    out->rate = atomic_load(&r->rate);
    out->slice = atomic_load(&r->slice);
    out->gap_ns = atomic_load(&r->gap_ns);
    out->partition = atomic_load(&r->partition);
    out->cmd_mask = atomic_load(&r->cmd_mask);
}

void proxy_link_stats(const struct proxy *p, int worker, int node, struct proxy_link_stats *out)
{
    const struct proxy_stats_shm *s =
        &proxy_shm_stats(p->shm)[(size_t)worker * (size_t)p->nnodes + (size_t)node];
    out->accepted = atomic_load(&s->accepted);
    out->open = atomic_load(&s->open);
    out->resets = atomic_load(&s->resets);
    for (int d = 0; d < 2; d++) {
        out->bytes[d] = atomic_load(&s->bytes[d]);
        out->dropped[d] = atomic_load(&s->dropped[d]);
        out->writes[d] = atomic_load(&s->writes[d]);
    }
    out->cmd_oversized = atomic_load(&s->cmd_oversized);
    out->cmd_unfollowed = atomic_load(&s->cmd_unfollowed);
    out->cmd_lost = atomic_load(&s->cmd_lost);
    out->cmd_taken = atomic_load(&s->cmd_taken);
}
