/*
 * replset.c: `cluster.topology: replicated` (see replset.h): its ops table
 * and load-time rules (cluster.nodes = 1 + replicas, min_replicas_*, which
 * lock implementations and wait_replicas values fit; the nodes start like
 * the independent ones), then its run-time side: replication proxy,
 * replicas, Sentinel processes, and the primitives the failover fault is
 * built from (cut, promote, re-point, ask the sentinels). Every
 * step is confirmed before it counts (in sync, ROLE, what the sentinels
 * report); every wait is bounded. Sentinels are redis-server --sentinel
 * processes with a generated config (each knows the replicas and the other
 * sentinels from the start, so no discovery delay), loopback only, one
 * directory and log each under nodes/, stopped by pid.
 */
#include "backends/replset.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/cluster.h"
#include "backends/storage.h"
#include "locks/lock.h"
#include "model/node.h"
#include "model/workload.h"
#include "model/yamltree.h"
#include "util/proc.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define CMD_TIMEOUT_US 1000000
#define QUICK_TIMEOUT_US 200000
#define SYNC_TIMEOUT (10 * LS_NS_PER_S)
#define SENTINEL_TIMEOUT (15 * LS_NS_PER_S)
#define PROMOTE_TIMEOUT (2 * LS_NS_PER_S)
#define START_ATTEMPTS 5
#define PROBE_KEY "lockstorm:replication-probe"

struct sentinel {
    pid_t pid;
    pid_t first_pid;        /* kept for run.json once stopped */
    int port;
    char id[41];            /* sentinel myid: 40 hex digits */
    char dir[512];
    char log[512];
    char conf[600];
};

struct replset {
    int nnodes;
    int primary;            /* the harness's view */
    int busy;               /* a failover is under way */
    int failovers;          /* promotions so far */
    int quorum;
    int cut_id, cut_node;   /* the fault whose cut is in place and its node; -1: none */
    struct replset_host host; /* the harness's services (released at free) */
    struct cluster *cluster; /* the nodes (borrowed) */
    int64_t min_replicas_to_write, min_replicas_max_lag; /* cluster.min_replicas_* (lag in ns) */
    int proxied;            /* the replication proxy (row 0, one listener per node) runs; not with iptables */
    pid_t proxy_pid;
    int iptables;           /* cut: iptables: no proxy, node n replicates from 127.0.0.(10+n) */
    char ipt_comment[REPLSET_IPT_COMMENT_MAX]; /* the run's rules' comment: lockstorm:<harness pid> */
    int ipt_stale;          /* stale rules of dead runs removed at start */
    int ipt_reaper_live;    /* the rules reaper (deletes the run's rules if the harness dies) runs */
    pid_t ipt_reaper_pid;   /* kept for run.json once stopped */
    int nsentinels;
    struct sentinel *sentinels;
    _Atomic int32_t *shared; /* MAP_SHARED: the primary, for workers (no sentinels) */
    struct replset_map map;
    char password[LS_PASSWORD_MAX]; /* the nodes' and the sentinels' (cluster.password), or "" */
};

/* ---- load-time rules and the ops table ---- */

/* The user's node for cluster.KEY, or NULL when absent. */
static const struct ynode *cluster_key(const struct ynode *root, const char *key)
{
    const struct ynode *c = root ? ymap_get(root, "cluster") : NULL;
    return c && c->kind == YN_MAP ? ymap_get(c, key) : NULL;
}

/* Contract: the rules of the cluster section, once all its keys are
 * loaded (called at its last entry); sets cluster.nodes to 1 + replicas. */
static void check_cluster(struct workload *w, const struct ynode *at, const struct ynode *root,
                          struct ydiag *dg)
{
    const struct ynode *rn = cluster_key(root, "replicas");
    const struct ynode *mn = cluster_key(root, "min_replicas_to_write");
    const struct ynode *ln = cluster_key(root, "min_replicas_max_lag");
    if (w->cluster.replicas < 1) {
        ydiag_at(dg, rn ? rn : at,
                 "cluster.replicas: a replicated topology needs at least 1 replica");
        return;
    }
    const struct ynode *nn = cluster_key(root, "nodes");
    if (nn && w->cluster.nodes != 1 + w->cluster.replicas)
        ydiag_at(dg, nn,
                 "cluster.nodes: %lld, but a replicated set of 1 primary and %lld replicas has "
                 "%lld nodes; leave cluster.nodes out",
                 (long long)w->cluster.nodes, (long long)w->cluster.replicas,
                 (long long)(1 + w->cluster.replicas));
    w->cluster.nodes = 1 + w->cluster.replicas;
    if (w->cluster.min_replicas_to_write > w->cluster.replicas)
        ydiag_at(dg, mn ? mn : at,
                 "cluster.min_replicas_to_write: %lld is more than cluster.replicas %lld: no "
                 "primary could ever write",
                 (long long)w->cluster.min_replicas_to_write, (long long)w->cluster.replicas);
    if (w->cluster.min_replicas_max_lag % LS_NS_PER_S != 0)
        ydiag_at(dg, ln ? ln : at,
                 "cluster.min_replicas_max_lag: Redis counts it in whole seconds; write e.g. 1s");
}

/* Contract: the cluster rules at the cluster section's last key; then
 * lock.impl must follow a primary (LOCK_CAP_REPLICATED) and
 * lock.wait_replicas must not exceed the replicas. */
static void check_key(struct workload *w, const char *path, const struct ynode *at,
                      const struct ynode *root, struct ydiag *dg)
{
    if (strcmp(path, "cluster.min_replicas_max_lag") == 0) {
        check_cluster(w, at, root, dg);
    } else if (strcmp(path, "lock.impl") == 0 && w->lock.ops &&
               !(w->lock.ops->caps & LOCK_CAP_REPLICATED)) {
        char names[256] = "";
        size_t len = 0;
        const struct lock_ops *const *all = lock_all();
        for (int i = 0; all && all[i]; i++) {
            if (!(all[i]->caps & LOCK_CAP_REPLICATED))
                continue;
            int k = snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
                             all[i]->name);
            if (k < 0 || (size_t)k >= sizeof(names) - len)
                break;
            len += (size_t)k;
        }
        ydiag_at(dg, at,
                 "lock.impl: '%s' cannot run on cluster.topology replicated (it does not follow "
                 "a primary through failovers); implementations that can: %s",
                 w->lock.ops->name, names[0] ? names : "none");
    } else if (strcmp(path, "lock.wait_replicas") == 0 &&
               w->lock.wait_replicas > w->cluster.replicas) {
        ydiag_at(dg, at,
                 "lock.wait_replicas: %lld is more than cluster.replicas %lld: no grant could "
                 "ever be acknowledged",
                 (long long)w->lock.wait_replicas, (long long)w->cluster.replicas);
    }
}

const struct backend_ops backend_replicated = {
    .version = BACKEND_OPS_VERSION,
    .name = "replicated",
    .help = "one primary and cluster.replicas replicas (optional sentinels), started by lockstorm",
    .caps = BACKEND_CAP_NODE_CONTROL | BACKEND_CAP_REPLICAS | BACKEND_CAP_REDIS,
    .start = backend_redis_start,
    .stop = cluster_stop,
    .dump_storage = backend_redis_dump,
    .store = &store_redis,
    .check_key = check_key,
};

/* ---- small redis helpers ---- */

/* Contract: a connection to host:port (authenticated with password, ""
 * for none) with timeout us for connect and commands, or NULL. Caller frees with redisFree. */
static redisContext *dial(const char *host, int port, const char *password, long us)
{
    struct timeval tv = {us / 1000000, us % 1000000};
    redisContext *c = ls_redis_connect(host, port, tv, password);
    if (!c || c->err || redisSetTimeout(c, tv) != REDIS_OK) {
        if (c)
            redisFree(c);
        return NULL;
    }
    return c;
}

/* Contract: run one command (printf-style, hiredis format) on node n over
 * a fresh connection; the reply (caller frees) or NULL when the node did
 * not answer within us. An error reply is returned as such. */
static redisReply *node_cmd(const struct node_proc *n, long us, const char *fmt, ...)
{
    if (n->pid <= 0)
        return NULL;
    redisContext *c = dial(n->host, n->port, n->password, us);
    if (!c)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    redisFree(c);
    return r;
}

/* Contract: 0 when the reply is a status OK / not an error, else negative
 * with err set naming what (and frees r). */
static int ok_reply(redisReply *r, const char *what, int node, struct ls_err *err)
{
    int rc = 0;
    if (!r)
        rc = ls_err_set(err, LS_EENV, "node %d: %s: no answer", node, what);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = ls_err_set(err, LS_EENV, "node %d: %s: %s", node, what, r->str);
    if (r)
        freeReplyObject(r);
    return rc;
}

/* The value of key in a flat key/value array reply (SENTINEL master), or "". */
static const char *kv(const redisReply *r, const char *key)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return "";
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, key) == 0)
            return r->element[i + 1]->type == REDIS_REPLY_STRING ? r->element[i + 1]->str : "";
    return "";
}

/* The value of field in an INFO reply ("master_link_status:up"), copied
 * into buf; "" when absent. */
static void info_field(const redisReply *r, const char *field, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!r || r->type != REDIS_REPLY_STRING)
        return;
    size_t fl = strlen(field);
    for (const char *p = r->str; p && *p; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, field, fl) == 0 && p[fl] == ':') {
            const char *v = p + fl + 1;
            size_t k = strcspn(v, "\r\n");
            if (k >= n)
                k = n - 1;
            memcpy(buf, v, k);
            buf[k] = '\0';
            return;
        }
    }
}

void replset_role(const struct node_proc *n, char *role, size_t len)
{
    role[0] = '\0';
    if (n->pid <= 0 || proc_state(n->pid, 0) == 'T')
        return;
    redisReply *r = node_cmd(n, QUICK_TIMEOUT_US, "ROLE");
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_STRING)
        snprintf(role, len, "%s", r->element[0]->str);
    if (r)
        freeReplyObject(r);
}

/* ---- the host ---- */

/* Non-zero once the run is interrupted. */
static int interrupted(struct replset *rs)
{
    return rs->host.ops->interrupted(rs->host.ctx);
}

/* Sleep up to ns, waking early on an interrupt. */
static void nap(struct replset *rs, int64_t ns)
{
    rs->host.ops->sleep(rs->host.ctx, ns);
}

/* ---- accessors ---- */

const struct replset_map *replset_map_of(const struct replset *rs)
{
    return rs ? &rs->map : NULL;
}

int replset_primary(const struct replset *rs)
{
    return rs ? rs->primary : -1;
}

int replset_nsentinels(const struct replset *rs)
{
    return rs ? rs->nsentinels : 0;
}

int replset_busy(const struct replset *rs)
{
    return rs && rs->busy;
}

void replset_set_busy(struct replset *rs, int busy)
{
    if (rs)
        rs->busy = busy;
}

void replset_set_primary(struct replset *rs, int node)
{
    if (!rs)
        return;
    if (node != rs->primary)
        rs->failovers++;
    rs->primary = node;
    atomic_store(rs->shared, node);
}

/* ---- nodes ---- */

int replset_configure(struct replset *rs, int node, struct ls_err *err)
{
    const struct node_proc *n = &rs->cluster->nodes[node];
    int rc = ok_reply(node_cmd(n, CMD_TIMEOUT_US,
                               "CONFIG SET replica-announce-port %d repl-diskless-sync-delay 0",
                               rs->map.names[node]),
                      "config set replica-announce-port", node, err);
    /* cut: iptables: the node connects to a primary from its own loopback
     * address (the rules match it); it still listens on 127.0.0.1 only, and
     * names itself so to the sentinels; protected mode off since Redis
     * takes only 127.0.0.1 (not all of 127/8) as local */
    char src[32];
    snprintf(src, sizeof(src), "127.0.0.%d", 10 + node);
    if (rc == 0 && rs->iptables)
        rc = ok_reply(node_cmd(n, CMD_TIMEOUT_US,
                               "CONFIG SET bind-source-addr %s replica-announce-ip 127.0.0.1 "
                               "protected-mode no", src),
                      "config set bind-source-addr", node, err);
    if (rc == 0 && rs->min_replicas_to_write > 0)
        rc = ok_reply(node_cmd(n, CMD_TIMEOUT_US,
                               "CONFIG SET min-replicas-to-write %lld min-replicas-max-lag %lld",
                               (long long)rs->min_replicas_to_write,
                               (long long)(rs->min_replicas_max_lag / LS_NS_PER_S)),
                      "config set min-replicas-to-write", node, err);
    return rc;
}

int replset_follow(struct replset *rs, int node, int primary, struct ls_err *err)
{
    return ok_reply(node_cmd(&rs->cluster->nodes[node], CMD_TIMEOUT_US, "REPLICAOF 127.0.0.1 %d",
                             rs->map.names[primary]),
                    "replicaof", node, err);
}

int replset_promote(struct replset *rs, int node, struct ls_err *err)
{
    const struct node_proc *n = &rs->cluster->nodes[node];
    int rc = ok_reply(node_cmd(n, CMD_TIMEOUT_US, "REPLICAOF NO ONE"), "replicaof no one", node,
                      err);
    if (rc < 0)
        return rc;
    int64_t deadline = ls_now_ns() + PROMOTE_TIMEOUT;
    char role[16];
    for (;;) {
        replset_role(n, role, sizeof(role));
        if (strcmp(role, "master") == 0)
            return 0;
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "node %d: ROLE still '%s' 2s after REPLICAOF NO ONE",
                              node, role);
        ls_sleep_ns(5 * LS_NS_PER_MS);
    }
}

/* Contract: 1 when every replica reports its link up, the primary lists
 * every replica online, and a probe written on the primary has reached
 * every replica (the stream really flows: a replica can report its link up
 * before the primary streams to it); why says what is missing otherwise. */
static int in_sync(struct replset *rs, char *why, size_t n)
{
    const struct node_proc *p = &rs->cluster->nodes[rs->primary];
    char v[256], key[16];
    for (int k = 0; k < rs->nnodes; k++) {
        if (k == rs->primary)
            continue;
        redisReply *rep = node_cmd(&rs->cluster->nodes[k], CMD_TIMEOUT_US, "INFO replication");
        info_field(rep, "master_link_status", v, sizeof(v));
        if (rep)
            freeReplyObject(rep);
        if (strcmp(v, "up") != 0) {
            snprintf(why, n, "replica node %d: master_link_status '%s'", k, v);
            return 0;
        }
    }
    redisReply *rep = node_cmd(p, CMD_TIMEOUT_US, "INFO replication");
    for (int k = 0; k < rs->nnodes - 1; k++) {
        snprintf(key, sizeof(key), "slave%d", k);
        info_field(rep, key, v, sizeof(v));
        if (!strstr(v, "state=online")) {
            snprintf(why, n, "primary node %d: %s '%s'", rs->primary, key, v);
            if (rep)
                freeReplyObject(rep);
            return 0;
        }
    }
    if (rep)
        freeReplyObject(rep);
    redisReply *inc = node_cmd(p, CMD_TIMEOUT_US, "INCR %s", PROBE_KEY);
    long long want = inc && inc->type == REDIS_REPLY_INTEGER ? inc->integer : -1;
    if (inc)
        freeReplyObject(inc);
    int64_t deadline = ls_now_ns() + 200 * LS_NS_PER_MS;
    for (int k = 0; want > 0 && k < rs->nnodes; k++) {
        while (k != rs->primary) {
            redisReply *g = node_cmd(&rs->cluster->nodes[k], CMD_TIMEOUT_US, "GET %s", PROBE_KEY);
            long long got = g && g->type == REDIS_REPLY_STRING ? strtoll(g->str, NULL, 10) : 0;
            if (g)
                freeReplyObject(g);
            if (got >= want)
                break;
            if (ls_now_ns() >= deadline) {
                snprintf(why, n, "replica node %d: probe write %lld not replicated (has %lld)", k,
                         want, got);
                return 0;
            }
            ls_sleep_ns(2 * LS_NS_PER_MS);
        }
    }
    if (want <= 0) {
        snprintf(why, n, "primary node %d: probe write got no answer", rs->primary);
        return 0;
    }
    return 1;
}

/* ---- cut ---- */

/* Contract: cut: iptables: DROP rules between node's port and every
 * other node's source address; all or none (rules added before a failure
 * are deleted). 0 or negative with err. */
static int ipt_cut(struct replset *rs, int node, struct json *detail, struct ls_err *err)
{
    int rc = 0, nrules = 0;
    for (int k = 0; k < rs->nnodes && rc == 0; k++) {
        char src[32];
        snprintf(src, sizeof(src), "127.0.0.%d", 10 + k);
        if (k != node && (rc = rs->host.ops->ipt_cut_pair(1, rs->ipt_comment, src,
                                                          rs->map.real[node], err)) == 0)
            nrules += 2;
    }
    if (rc < 0) {
        rs->host.ops->ipt_remove_tagged(rs->ipt_comment, NULL);
        return rc;
    }
    json_obj_set_str(detail, "cut", "iptables");
    json_obj_set_int(detail, "cut_rules", nrules);
    json_obj_set_str(detail, "cut_comment", rs->ipt_comment);
    return 0;
}

int replset_cut(struct replset *rs, int id, int node, struct json *detail, struct ls_err *err)
{
    if (rs->iptables) {
        int rc = ipt_cut(rs, node, detail, err);
        if (rc < 0)
            return rc;
    } else {
        uint64_t generation = 0;
        int64_t waited_ns = 0;
        int rc = rs->host.ops->proxy_cut(rs->host.ctx, id, node, &generation, &waited_ns, err);
        if (rc < 0)
            return rc;
        json_obj_set_str(detail, "cut", "proxy");
        json_obj_set_int(detail, "cut_proxy_generation", (int64_t)generation);
        json_obj_set_num(detail, "cut_proxy_ack_ms", (double)waited_ns / 1e6);
    }
    rs->cut_id = id;
    rs->cut_node = node;
    /* verify: a write on the node must not reach its replicas */
    const struct node_proc *p = &rs->cluster->nodes[node];
    redisReply *inc = node_cmd(p, CMD_TIMEOUT_US, "INCR %s", PROBE_KEY);
    long long v = inc && inc->type == REDIS_REPLY_INTEGER ? inc->integer : -1;
    if (inc)
        freeReplyObject(inc);
    if (v < 0) {
        replset_uncut(rs, id, NULL);
        return ls_err_set(err, LS_EENV, "node %d: probe write for the cut got no answer", node);
    }
    ls_sleep_ns(100 * LS_NS_PER_MS);
    int checked = 0;
    for (int k = 0; k < rs->nnodes; k++) {
        if (k == node || rs->cluster->nodes[k].pid <= 0)
            continue;
        redisReply *g = node_cmd(&rs->cluster->nodes[k], CMD_TIMEOUT_US, "GET %s", PROBE_KEY);
        long long got = g && g->type == REDIS_REPLY_STRING ? strtoll(g->str, NULL, 10) : 0;
        int answered = g && (g->type == REDIS_REPLY_STRING || g->type == REDIS_REPLY_NIL);
        if (g)
            freeReplyObject(g);
        if (!answered)
            continue;
        checked++;
        if (got >= v) {
            replset_uncut(rs, id, NULL);
            return ls_err_set(err, LS_EENV,
                              "node %d: the cut did not stop replication (node %d got probe %lld)",
                              node, k, v);
        }
    }
    json_obj_set_int(detail, "cut_replicas_checked", checked);
    json_obj_set_str(detail, "cut_verified",
                     "probe write on the primary absent on every replica after 100 ms");
    return 0;
}

int replset_uncut(struct replset *rs, int id, struct ls_err *err)
{
    if (rs && rs->iptables && rs->cut_node >= 0 && rs->cut_id == id) {
        /* DROP loses no byte of a TCP stream (it is sent again once the
         * rules go), so no stream resumes with a hole: nothing to reset */
        rs->cut_node = rs->cut_id = -1;
        int rc = rs->host.ops->ipt_remove_tagged(rs->ipt_comment, err);
        return rc < 0 ? rc : 0;
    }
    if (!rs || !rs->proxied || rs->cut_node < 0 || rs->cut_id != id)
        return 0;
    /* reset what the cut left open first: a replication stream with a hole
     * must not resume; the replica reconnects and resynchronises */
    int rc = rs->host.ops->proxy_uncut(rs->host.ctx, id, rs->cut_node, err);
    rs->cut_node = rs->cut_id = -1;
    return rc;
}

/* ---- sentinels ---- */

/* Contract: write sentinel k's config file (every replica and every other
 * sentinel known from the start). */
static int write_sentinel_conf(struct replset *rs, int k, struct ls_err *err)
{
    const struct sentinel *s = &rs->sentinels[k];
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb,
              "# lockstorm sentinel %d (generated; sentinel rewrites it)\n"
              "port %d\nbind 127.0.0.1\nprotected-mode yes\ndaemonize no\n"
              "dir %s\nlogfile \"\"\nloglevel notice\n"
              "sentinel myid %s\n"
              "sentinel resolve-hostnames no\n"
              "sentinel monitor %s 127.0.0.1 %d %d\n"
              "sentinel down-after-milliseconds %s %d\n"
              "sentinel failover-timeout %s %d\n"
              "sentinel parallel-syncs %s 1\n",
              k, s->port, s->dir, s->id, rs->map.master_name, rs->map.names[rs->primary],
              rs->quorum, rs->map.master_name, REPLSET_DOWN_AFTER_MS, rs->map.master_name,
              REPLSET_FAILOVER_TIMEOUT_MS, rs->map.master_name);
    for (int n = 0; n < rs->nnodes; n++)
        if (n != rs->primary)
            sb_printf(&sb, "sentinel known-replica %s 127.0.0.1 %d\n", rs->map.master_name,
                      rs->map.names[n]);
    for (int j = 0; j < rs->nsentinels; j++)
        if (j != k)
            sb_printf(&sb, "sentinel known-sentinel %s 127.0.0.1 %d %s\n", rs->map.master_name,
                      rs->sentinels[j].port, rs->sentinels[j].id);
    /* the nodes' password (cluster.password), required by the sentinels too
     * (of clients and of each other): a secret file like nodes/password */
    if (rs->password[0])
        sb_printf(&sb, "requirepass \"%s\"\nsentinel sentinel-pass \"%s\"\n"
                       "sentinel auth-pass %s \"%s\"\n",
                  rs->password, rs->password, rs->map.master_name, rs->password);
    int rc = sb_write_file(&sb, s->conf);
    if (rc == 0 && chmod(s->conf, 0600) < 0)
        rc = -errno;
    ls_wipe(sb.buf, sb.cap);
    sb_free(&sb);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", s->conf);
    return 0;
}

static void stop_sentinels(struct replset *rs)
{
    for (int k = 0; k < rs->nsentinels; k++)
        if (rs->sentinels[k].pid > 0)
            kill(rs->sentinels[k].pid, SIGTERM);
    for (int k = 0; k < rs->nsentinels; k++) {
        proc_stop(rs->sentinels[k].pid, 0, 2 * LS_NS_PER_S);
        rs->sentinels[k].pid = 0;
        /* a sentinel rewrites its config (with the password) at start and
         * at each failover, as a new 0644 & ~umask file: 0600 again, so the
         * run directory can be archived or copied without it (the 0700
         * directory protected it while the run lasted) */
        if (rs->sentinels[k].conf[0])
            chmod(rs->sentinels[k].conf, 0600);
    }
}

/* Contract: sentinel k answers PING (bounded); 0 or negative with err
 * (LS_EINTR once the run is interrupted). */
static int sentinel_wait_up(struct replset *rs, const struct sentinel *s, int k,
                            const char *password, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + 5 * LS_NS_PER_S;
    for (;;) {
        if (proc_wait(s->pid, 0, NULL) == 1)
            return ls_err_set(err, LS_EENV, "sentinel %d (127.0.0.1:%d) exited at start-up (see %s)",
                              k, s->port, s->log);
        redisContext *c = dial("127.0.0.1", s->port, password, QUICK_TIMEOUT_US);
        if (c) {
            redisReply *rep = redisCommand(c, "PING");
            int ok = rep && rep->type == REDIS_REPLY_STATUS;
            if (rep)
                freeReplyObject(rep);
            redisFree(c);
            if (ok)
                return 0;
        }
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "sentinel %d (127.0.0.1:%d) did not answer PING "
                              "within 5s (see %s)", k, s->port, s->log);
        if (interrupted(rs))
            return ls_err_set(err, LS_EINTR, "interrupted while the sentinels started");
        nap(rs, 5 * LS_NS_PER_MS);
    }
}

/* Contract: start every sentinel (ports chosen first, since each config
 * names the others); on a start-up failure all are stopped and tried again
 * with fresh ports. */
static int start_sentinels(struct replset *rs, struct ls_err *err)
{
    struct ls_err last = {0};
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        ls_err_clear(&last);
        for (int k = 0; k < rs->nsentinels; k++) {
            int port = cluster_free_port(err);
            if (port < 0)
                return port;
            rs->sentinels[k].port = port;
        }
        int rc = 0;
        for (int k = 0; k < rs->nsentinels && rc == 0; k++)
            rc = write_sentinel_conf(rs, k, err);
        if (rc < 0)
            return rc;
        for (int k = 0; k < rs->nsentinels && rc == 0; k++) {
            struct sentinel *s = &rs->sentinels[k];
            char *argv[] = {"redis-server", s->conf, "--sentinel", NULL};
            pid_t pid = proc_spawn(argv, s->log, &last);
            if (pid < 0) {
                if (strstr(last.msg, "cannot run"))
                    return ls_err_set(err, LS_EENV, "%s; install redis-server (it runs the "
                                      "sentinels too) or put it on PATH", last.msg);
                rc = pid;
                break;
            }
            s->pid = s->first_pid = pid;
        }
        for (int k = 0; k < rs->nsentinels && rc == 0; k++)
            rc = sentinel_wait_up(rs, &rs->sentinels[k], k, rs->password, &last);
        for (int k = 0; k < rs->nsentinels && rc == 0; k++) {
            redisContext *c = dial("127.0.0.1", rs->sentinels[k].port, rs->password,
                                   CMD_TIMEOUT_US);
            redisReply *rep = c ? redisCommand(c, "SENTINEL DEBUG ping-period 250 ask-period 250 "
                                                  "info-period 1000") : NULL;
            if (!rep || rep->type == REDIS_REPLY_ERROR)
                rc = ls_err_set(&last, LS_EENV, "sentinel %d: SENTINEL DEBUG: %s", k,
                                rep ? rep->str : "no answer");
            if (rep)
                freeReplyObject(rep);
            if (c)
                redisFree(c);
        }
        if (rc == 0)
            return 0;
        stop_sentinels(rs);
        if (rc == LS_EINTR)
            return ls_err_set(err, LS_EINTR, "%s", last.msg);
    }
    return ls_err_set(err, LS_EENV, "sentinels: %s (after %d attempts)", last.msg, START_ATTEMPTS);
}

/* Contract: 1 when sentinel k sees the primary as master with every
 * replica (link ok) and every other sentinel up; why says what is missing. */
static int sentinel_ready(const struct replset *rs, int k, char *why, size_t n)
{
    redisContext *c = dial("127.0.0.1", rs->sentinels[k].port, rs->password, CMD_TIMEOUT_US);
    if (!c) {
        snprintf(why, n, "sentinel %d: no answer", k);
        return 0;
    }
    int ok = 0;
    redisReply *m = redisCommand(c, "SENTINEL master %s", rs->map.master_name);
    redisReply *rep = m ? redisCommand(c, "SENTINEL replicas %s", rs->map.master_name) : NULL;
    redisReply *sen = rep ? redisCommand(c, "SENTINEL sentinels %s", rs->map.master_name) : NULL;
    if (!sen) {
        snprintf(why, n, "sentinel %d: no answer", k);
    } else if (strcmp(kv(m, "flags"), "master") != 0 ||
               strtol(kv(m, "port"), NULL, 10) != rs->map.names[rs->primary]) {
        snprintf(why, n, "sentinel %d: master flags '%s' port %s", k, kv(m, "flags"),
                 kv(m, "port"));
    } else if (rep->type != REDIS_REPLY_ARRAY || (int)rep->elements != rs->nnodes - 1) {
        snprintf(why, n, "sentinel %d: %zu replicas known", k,
                 rep->type == REDIS_REPLY_ARRAY ? rep->elements : 0);
    } else if (sen->type != REDIS_REPLY_ARRAY || (int)sen->elements != rs->nsentinels - 1) {
        snprintf(why, n, "sentinel %d: %zu other sentinels known", k,
                 sen->type == REDIS_REPLY_ARRAY ? sen->elements : 0);
    } else {
        ok = 1;
        for (size_t i = 0; ok && i < rep->elements; i++)
            if (strcmp(kv(rep->element[i], "flags"), "slave") != 0 ||
                strcmp(kv(rep->element[i], "master-link-status"), "ok") != 0) {
                snprintf(why, n, "sentinel %d: replica %s flags '%s' link '%s'", k,
                         kv(rep->element[i], "port"), kv(rep->element[i], "flags"),
                         kv(rep->element[i], "master-link-status"));
                ok = 0;
            }
        for (size_t i = 0; ok && i < sen->elements; i++)
            if (strcmp(kv(sen->element[i], "flags"), "sentinel") != 0) {
                snprintf(why, n, "sentinel %d: sentinel %s flags '%s'", k,
                         kv(sen->element[i], "port"), kv(sen->element[i], "flags"));
                ok = 0;
            }
    }
    if (m)
        freeReplyObject(m);
    if (rep)
        freeReplyObject(rep);
    if (sen)
        freeReplyObject(sen);
    redisFree(c);
    return ok;
}

int replset_sentinel_primary(const struct replset *rs, int *agree)
{
    int votes[REPLSET_MAX_NODES] = {0};
    for (int k = 0; k < rs->nsentinels; k++) {
        redisContext *c = dial("127.0.0.1", rs->sentinels[k].port, rs->password,
                               QUICK_TIMEOUT_US);
        redisReply *rep = c ? redisCommand(c, "SENTINEL get-master-addr-by-name %s",
                                           rs->map.master_name) : NULL;
        if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
            rep->element[1]->type == REDIS_REPLY_STRING) {
            int node = replset_node_of_port(&rs->map, (int)strtol(rep->element[1]->str, NULL, 10));
            if (node >= 0)
                votes[node]++;
        }
        if (rep)
            freeReplyObject(rep);
        if (c)
            redisFree(c);
    }
    int best = -1;
    for (int n = 0; n < rs->nnodes; n++)
        if (best < 0 || votes[n] > votes[best])
            best = n;
    if (agree)
        *agree = best >= 0 ? votes[best] : 0;
    return best >= 0 && votes[best] >= rs->nsentinels / 2 + 1 ? best : -1;
}

/* ---- start / stop ---- */

static int start_proxy(struct replset *rs, const struct replset_config *cfg, struct ls_err *err)
{
    struct lock_node real[REPLSET_MAX_NODES];
    memset(real, 0, sizeof(real)); /* no password: replicas and sentinels AUTH themselves */
    for (int n = 0; n < rs->nnodes; n++) {
        snprintf(real[n].host, sizeof(real[n].host), "%s", rs->cluster->nodes[n].host);
        real[n].port = rs->cluster->nodes[n].port;
        rs->map.real[n] = real[n].port;
    }
    char log[2100];
    snprintf(log, sizeof(log), "%s/nodes/replication-proxy.log", cfg->dir);
    int rc = rs->host.ops->proxy_start(rs->host.ctx, real, rs->nnodes, log,
                                   cfg->seed ^ 0x7265706cULL, rs->map.names, &rs->proxy_pid, err);
    if (rc < 0)
        return rc;
    rs->proxied = 1;
    return 0;
}

int replset_start(const struct replset_config *cfg, struct replset_host host,
                  struct replset **out, struct ls_err *err)
{
    *out = NULL;
    int nn = cfg->cluster->nnodes;
    int ns = cfg->sentinels;
    int bad = nn < 2 || nn > REPLSET_MAX_NODES || ns > REPLSET_MAX_SENTINELS;
    struct replset *rs = bad ? NULL : calloc(1, sizeof(*rs));
    if (!rs) {
        if (host.ops->release)
            host.ops->release(host.ctx);
        if (bad)
            return ls_err_set(err, LS_EUSAGE, "replicated set: %d nodes, %d sentinels not "
                              "supported", nn, ns);
        return ls_err_set(err, LS_ENOMEM, "replicated set: out of memory");
    }
    *out = rs;
    rs->host = host;
    rs->cluster = cfg->cluster;
    rs->min_replicas_to_write = cfg->min_replicas_to_write;
    rs->min_replicas_max_lag = cfg->min_replicas_max_lag;
    rs->nnodes = nn;
    rs->nsentinels = ns;
    rs->cut_id = rs->cut_node = -1;
    rs->quorum = ns / 2 + 1;
    rs->map.nnodes = nn;
    rs->map.nsentinels = ns;
    snprintf(rs->password, sizeof(rs->password), "%s", nn > 0 ? rs->cluster->nodes[0].password : "");
    snprintf(rs->map.master_name, sizeof(rs->map.master_name), "%s", REPLSET_MASTER_NAME);
    void *m = mmap(NULL, sizeof(*rs->shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED)
        return ls_err_errno(err, LS_ENOMEM, errno, "replicated set: shared page");
    rs->shared = m;
    atomic_store(rs->shared, 0);
    rs->map.primary = rs->shared;
    rs->sentinels = calloc((size_t)(ns ? ns : 1), sizeof(*rs->sentinels));
    if (!rs->sentinels)
        return ls_err_set(err, LS_ENOMEM, "replicated set: out of memory");

    int rc = 0;
    rs->iptables = cfg->iptables;
    if (rs->iptables < 0)
        return ls_err_set(err, LS_EUSAGE, "failover faults: cut: iptables and cut: proxy cannot "
                          "be mixed in one workload (the set replicates either directly or "
                          "through the replication proxy); use one cut for all");
    if (rs->iptables) {
        char why[256];
        if (host.ops->ipt_usable(why, sizeof(why)) < 0)
            return ls_err_set(err, LS_EENV, "%s", why);
        host.ops->ipt_comment(getpid(), rs->ipt_comment, sizeof(rs->ipt_comment));
        rc = host.ops->ipt_remove_stale(stderr, err); /* of a harness that died with its reaper */
        if (rc < 0)
            return rc;
        rs->ipt_stale = rc;
        rc = host.ops->rules_reaper_start(host.ctx, rs->ipt_comment, &rs->ipt_reaper_pid, err);
        rs->ipt_reaper_live = rs->ipt_reaper_pid > 0;
        for (int n = 0; n < nn; n++) /* no proxy: every name is the node's own port */
            rs->map.names[n] = rs->map.real[n] = rs->cluster->nodes[n].port;
    } else {
        rc = start_proxy(rs, cfg, err);
    }
    for (int n = 0; n < nn && rc == 0; n++)
        rc = replset_configure(rs, n, err);
    for (int n = 1; n < nn && rc == 0; n++)
        rc = replset_follow(rs, n, 0, err);
    if (rc < 0)
        return rc;
    char why[256] = "";
    int64_t deadline = ls_now_ns() + SYNC_TIMEOUT;
    while (!in_sync(rs, why, sizeof(why))) {
        if (interrupted(rs))
            return ls_err_set(err, LS_EINTR, "interrupted while the replicas synchronised");
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "replicas not in sync within 10s: %s", why);
        nap(rs, 10 * LS_NS_PER_MS);
    }
    if (ns == 0)
        return 0;
    for (int k = 0; k < ns; k++) {
        struct sentinel *s = &rs->sentinels[k];
        snprintf(s->id, sizeof(s->id), "%08x%016llx%016llx", (unsigned)(k + 1),
                 (unsigned long long)getpid(), (unsigned long long)ls_now_ns());
        snprintf(s->dir, sizeof(s->dir), "%s/nodes/sentinel-%d", cfg->dir, k);
        snprintf(s->log, sizeof(s->log), "%s/nodes/sentinel-%d.log", cfg->dir, k);
        snprintf(s->conf, sizeof(s->conf), "%s/sentinel.conf", s->dir);
        if (mkdir(s->dir, 0700) < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create %s", s->dir);
    }
    rc = start_sentinels(rs, err);
    if (rc < 0)
        return rc;
    for (int k = 0; k < ns; k++) { /* workers ask them directly, not through a proxy */
        snprintf(rs->map.sentinels[k].host, sizeof(rs->map.sentinels[k].host), "127.0.0.1");
        rs->map.sentinels[k].port = rs->sentinels[k].port;
        memcpy(rs->map.sentinels[k].password, rs->password, sizeof(rs->password));
    }
    deadline = ls_now_ns() + SENTINEL_TIMEOUT;
    for (int k = 0; k < ns;) {
        if (sentinel_ready(rs, k, why, sizeof(why))) {
            k++;
            continue;
        }
        if (interrupted(rs))
            return ls_err_set(err, LS_EINTR, "interrupted while the sentinels started");
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "sentinels not ready within 15s: %s", why);
        nap(rs, 20 * LS_NS_PER_MS);
    }
    return 0;
}

void replset_stop(struct replset *rs)
{
    if (!rs)
        return;
    stop_sentinels(rs);
    if (rs->proxied)
        rs->host.ops->proxy_stop(rs->host.ctx);
    rs->proxied = 0;
    if (rs->ipt_reaper_live) {
        /* no rule outlives the run: delete them now; the rules reaper
         * checks once more as it exits */
        struct ls_err e = {0};
        rs->cut_node = rs->cut_id = -1;
        if (rs->host.ops->ipt_remove_tagged(rs->ipt_comment, &e) < 0)
            fprintf(stderr, "lockstorm: warning: %s (the rules reaper tries again)\n", e.msg);
        rs->host.ops->rules_reaper_stop(rs->host.ctx);
        rs->ipt_reaper_live = 0;
    }
}

void replset_free(struct replset *rs)
{
    if (!rs)
        return;
    replset_stop(rs);
    if (rs->shared)
        munmap(rs->shared, sizeof(*rs->shared));
    free(rs->sentinels);
    ls_wipe(rs->password, sizeof(rs->password));
    ls_wipe(rs->map.sentinels, sizeof(rs->map.sentinels));
    if (rs->host.ops->release)
        rs->host.ops->release(rs->host.ctx);
    free(rs);
}

struct json *replset_json(const struct replset *rs)
{
    if (!rs)
        return json_new_null();
    struct json *j = json_new_obj();
    json_obj_set_int(j, "primary", rs->primary);
    json_obj_set_int(j, "failovers", rs->failovers);
    json_obj_set_str(j, "cut", rs->iptables ? "iptables" : "proxy");
    if (rs->iptables) {
        struct json *q = json_obj_set(j, "iptables", json_new_obj());
        json_obj_set_str(q, "comment", rs->ipt_comment);
        json_obj_set_int(q, "stale_rules_removed", rs->ipt_stale);
        json_obj_set_int(q, "pid", rs->ipt_reaper_pid); /* the rules reaper */
    } else {
        struct json *p = json_obj_set(j, "proxy", json_new_obj());
        json_obj_set_int(p, "pid", rs->proxy_pid);
        json_obj_set_str(p, "log", "nodes/replication-proxy.log");
    }
    struct json *ns = json_obj_set(j, "nodes", json_new_arr());
    for (int n = 0; n < rs->nnodes; n++) {
        struct json *e = json_arr_push(ns, json_new_obj());
        json_obj_set_int(e, "index", n);
        json_obj_set_int(e, "port", rs->map.real[n]);
        json_obj_set_int(e, "replication_port", rs->map.names[n]);
        if (rs->iptables) {
            char src[32];
            snprintf(src, sizeof(src), "127.0.0.%d", 10 + n);
            json_obj_set_str(e, "source_addr", src);
        }
    }
    struct json *ss = json_obj_set(j, "sentinels", json_new_arr());
    for (int k = 0; k < rs->nsentinels; k++) {
        struct json *e = json_arr_push(ss, json_new_obj());
        char log[64];
        snprintf(log, sizeof(log), "nodes/sentinel-%d.log", k);
        json_obj_set_int(e, "port", rs->sentinels[k].port);
        json_obj_set_int(e, "pid", rs->sentinels[k].first_pid);
        json_obj_set_str(e, "log", log);
    }
    json_obj_set_str(j, "master_name", rs->map.master_name);
    return j;
}
