/*
 * test_replset.c: the replicated topology against real redis-server and
 * redis-sentinel processes: the set comes up in sync with every sentinel
 * seeing it; a client (redis-single with cfg.replset) follows the primary
 * through a Sentinel promotion and through a harness-driven one (READONLY
 * drops the connection, the next call resolves again); a node that is not
 * a primary is refused by the ROLE check; WAIT refuses and deletes a grant
 * too few replicas acknowledged; the replication cut really stops
 * replication and its undo resumes it; the loader's rules for replicated
 * workloads and the failover fault; the host contract of backends/replset.h
 * (who releases the harness's host, NULL accepted) without any process.
 */
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cluster.h"
#include "util/proc.h"
#include "backends/replset.h"
#include "harness/replset_host.h"
#include "harness/run.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "locks/replset.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

/* A harness run reduced to what the replicated set needs: a workload, a
 * directory, the nodes. */
struct fixture {
    struct workload *w;
    struct run r;
    char *dir;
    struct lock_node links[REPLSET_MAX_NODES];
};

static const char *const YAML_SENTINELS =
    "name: t\ncluster: {topology: replicated, replicas: 2, sentinels: 3}\n"
    "lock: {impl: redis-single, ttl: 5s}\n";
static const char *const YAML_MANUAL =
    "name: t\ncluster: {topology: replicated, replicas: 2, sentinels: 0}\n"
    "lock: {impl: redis-single, ttl: 5s}\n";

/* Contract: start the set of yaml; 0 on success (fixture filled), else -1
 * with everything already stopped. */
static int setup(struct fixture *f, const char *yaml)
{
    memset(f, 0, sizeof(*f));
    struct ls_err err = {0, ""};
    if (workload_load_string("t", yaml, NULL, 0, &f->w, stderr, &err) != 0) {
        fprintf(stderr, "load: %s\n", err.msg);
        return -1;
    }
    f->dir = t_tmpdir();
    f->r.w = f->w;
    snprintf(f->r.dir, sizeof(f->r.dir), "%s", f->dir);
    sigemptyset(&f->r.sigs);
    int rc = cluster_start(&f->r.cluster, f->dir, (int)f->w->cluster.nodes, PERSIST_NONE, 0, NULL,
                           NULL, NULL, &err);
    if (rc == 0)
        rc = run_replset_start(&f->r, &err);
    if (rc != 0) {
        fprintf(stderr, "start: %s\n", err.msg);
        replset_free(f->r.repl);
        f->r.repl = NULL;
        cluster_stop(&f->r.cluster);
        return -1;
    }
    for (int n = 0; n < f->r.cluster.nnodes; n++) {
        snprintf(f->links[n].host, sizeof(f->links[n].host), "127.0.0.1");
        f->links[n].port = f->r.cluster.nodes[n].port;
    }
    return 0;
}

static void teardown(struct fixture *f)
{
    replset_free(f->r.repl);
    f->r.repl = NULL;
    cluster_stop(&f->r.cluster);
    workload_free(f->w);
    if (f->dir) {
        t_rmdir(f->dir);
        free(f->dir);
    }
}

/* Contract: open redis-single on the set (cfg must outlive lk). */
static int open_lock(struct fixture *f, struct lock *lk, struct lock_config *cfg, int wait)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->nodes = f->links;
    cfg->nnodes = f->r.cluster.nnodes;
    cfg->ttl_ns = 5 * LS_NS_PER_S;
    cfg->fencing = 1;
    cfg->replset = replset_map_of(f->r.repl);
    cfg->wait_replicas = wait;
    struct ls_err err = {0, ""};
    int rc = lock_open(lk, lock_find("redis-single"), cfg, &err);
    if (rc != 0)
        fprintf(stderr, "lock_open: %s\n", err.msg);
    return rc;
}

static int acquire(struct lock *lk, int res, const char *token, int *kind)
{
    struct grant g;
    memset(&g, 0, sizeof(g));
    g.res = res;
    snprintf(g.token, sizeof(g.token), "%s", token);
    *kind = 0;
    return lk->ops->acquire(lk, &g, kind);
}

/* The value of key on node n, "" when absent or no answer. */
static void get_key(const struct node_proc *n, const char *key, char *buf, size_t len)
{
    buf[0] = '\0';
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout(n->host, n->port, tv);
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *r = redisCommand(c, "GET %s", key);
        if (r && r->type == REDIS_REPLY_STRING)
            snprintf(buf, len, "%s", r->str);
        if (r)
            freeReplyObject(r);
    }
    if (c)
        redisFree(c);
}

static void test_sentinel_promotion(void)
{
    struct fixture f;
    REQUIRE(setup(&f, YAML_SENTINELS) == 0);
    const struct replset_map *map = replset_map_of(f.r.repl);
    CHECK_INT(map->nsentinels, 3);
    CHECK_INT(replset_primary(f.r.repl), 0);
    int agree = 0;
    CHECK_INT(replset_sentinel_primary(f.r.repl, &agree), 0);
    CHECK_INT(agree, 3);

    struct replset_resolver rs;
    struct timeval tv = {0, 200000};
    replset_resolver_init(&rs, map, f.links, tv);
    CHECK_INT(replset_resolve(&rs), 0);

    struct lock lk;
    struct lock_config cfg;
    REQUIRE(open_lock(&f, &lk, &cfg, 0) == 0);
    int kind;
    CHECK_INT(acquire(&lk, 0, "tok-a", &kind), LOCK_OK);
    char v[64];
    get_key(&f.r.cluster.nodes[0], "lockstorm:r0", v, sizeof(v));
    CHECK_STR(v, "tok-a");

    /* a promotion Sentinel carries out (forced: every node stays up) */
    struct timeval stv = {1, 0};
    redisContext *sc = redisConnectWithTimeout("127.0.0.1", map->sentinels[0].port, stv);
    REQUIRE(sc && !sc->err);
    redisReply *rep = redisCommand(sc, "SENTINEL FAILOVER %s", map->master_name);
    CHECKF(rep && rep->type == REDIS_REPLY_STATUS, "%s", rep ? rep->str : "no answer");
    if (rep)
        freeReplyObject(rep);
    redisFree(sc);
    int p = -1;
    int64_t deadline = ls_now_ns() + 15 * LS_NS_PER_S;
    while (ls_now_ns() < deadline) {
        p = replset_sentinel_primary(f.r.repl, &agree);
        char role[16];
        if (p > 0) {
            replset_role(&f.r.cluster.nodes[p], role, sizeof(role));
            if (strcmp(role, "master") == 0)
                break;
        }
        ls_sleep_ns(20 * LS_NS_PER_MS);
    }
    CHECKF(p > 0, "sentinels still name node %d", p);
    if (p > 0) {
        CHECK_INT(replset_resolve(&rs), p);
        /* the replicated lock is on the new primary */
        get_key(&f.r.cluster.nodes[p], "lockstorm:r0", v, sizeof(v));
        CHECK_STR(v, "tok-a");
        /* demote the old primary as Sentinel eventually would: the client
         * still connected to it gets READONLY, drops the connection, and
         * its next call resolves the new primary through Sentinel */
        CHECK(replset_follow(f.r.repl, 0, p, &(struct ls_err){0, ""}) == 0);
        int o = acquire(&lk, 1, "tok-b", &kind);
        CHECK_INT(o, LOCK_FAIL);
        CHECK_INT(kind, EVE_REPLY);
        int ok = 0;
        for (int i = 0; i < 50 && !ok; i++) {
            ok = acquire(&lk, 1, "tok-b", &kind) == LOCK_OK;
            if (!ok)
                ls_sleep_ns(20 * LS_NS_PER_MS);
        }
        CHECK(ok);
        get_key(&f.r.cluster.nodes[p], "lockstorm:r1", v, sizeof(v));
        CHECK_STR(v, "tok-b");
    }
    lock_close(&lk);
    replset_resolver_close(&rs);
    teardown(&f);
}

static void test_harness_promotion(void)
{
    struct fixture f;
    REQUIRE(setup(&f, YAML_MANUAL) == 0);
    struct lock lk;
    struct lock_config cfg;
    REQUIRE(open_lock(&f, &lk, &cfg, 0) == 0);
    int kind;
    CHECK_INT(acquire(&lk, 0, "tok-a", &kind), LOCK_OK);

    /* a node that is not a primary is refused by the ROLE check */
    struct lock lk2;
    struct lock_config cfg2;
    replset_set_primary(f.r.repl, 2);
    REQUIRE(open_lock(&f, &lk2, &cfg2, 0) == 0);
    CHECK_INT(acquire(&lk2, 3, "tok-x", &kind), LOCK_FAIL);
    CHECK_INT(kind, EVE_NO_PRIMARY);
    lock_close(&lk2);

    /* the harness promotes node 1 and re-points the others */
    struct ls_err err = {0, ""};
    CHECKF(replset_promote(f.r.repl, 1, &err) == 0, "%s", err.msg);
    CHECK(replset_follow(f.r.repl, 2, 1, &err) == 0);
    CHECK(replset_follow(f.r.repl, 0, 1, &err) == 0);
    replset_set_primary(f.r.repl, 1);
    int o = acquire(&lk, 1, "tok-b", &kind); /* on the demoted node 0: READONLY */
    CHECK_INT(o, LOCK_FAIL);
    CHECK_INT(acquire(&lk, 1, "tok-b", &kind), LOCK_OK);
    char v[64];
    get_key(&f.r.cluster.nodes[1], "lockstorm:r1", v, sizeof(v));
    CHECK_STR(v, "tok-b");
    lock_close(&lk);
    teardown(&f);
}

static void test_wait_replicas(void)
{
    struct fixture f;
    REQUIRE(setup(&f, YAML_MANUAL) == 0);
    struct lock lk;
    struct lock_config cfg;
    REQUIRE(open_lock(&f, &lk, &cfg, 2) == 0);
    int kind;
    CHECK_INT(acquire(&lk, 0, "tok-a", &kind), LOCK_OK); /* both replicas acknowledge */
    /* one replica stopped: WAIT 2 sees 1 acknowledgement; refused, deleted */
    pid_t rp = f.r.cluster.nodes[2].pid;
    REQUIRE(kill(rp, SIGSTOP) == 0);
    REQUIRE(proc_wait_state(rp, 'T', 1, LS_NS_PER_S) == 0);
    CHECK_INT(acquire(&lk, 1, "tok-b", &kind), LOCK_FAIL);
    CHECK_INT(kind, EVE_NOT_REPLICATED);
    char v[64];
    get_key(&f.r.cluster.nodes[0], "lockstorm:r1", v, sizeof(v));
    CHECK_STR(v, "");
    kill(rp, SIGCONT);
    lock_close(&lk);
    teardown(&f);
}

static void test_cut(void)
{
    struct fixture f;
    REQUIRE(setup(&f, YAML_MANUAL) == 0);
    struct json *d = json_new_obj();
    struct ls_err err = {0, ""};
    CHECKF(replset_cut(f.r.repl, 7, 0, d, &err) == 0, "%s", err.msg);
    const struct json *ver = json_obj_get(d, "cut_verified");
    CHECK(ver != NULL);
    /* a lock written now stays on the primary */
    struct lock lk;
    struct lock_config cfg;
    REQUIRE(open_lock(&f, &lk, &cfg, 0) == 0);
    int kind;
    CHECK_INT(acquire(&lk, 0, "tok-cut", &kind), LOCK_OK);
    ls_sleep_ns(100 * LS_NS_PER_MS);
    char v[64];
    get_key(&f.r.cluster.nodes[1], "lockstorm:r0", v, sizeof(v));
    CHECK_STR(v, "");
    /* undone: the replicas reconnect and catch up */
    CHECK(replset_uncut(f.r.repl, 7, &err) == 0);
    int64_t deadline = ls_now_ns() + 10 * LS_NS_PER_S;
    do {
        get_key(&f.r.cluster.nodes[1], "lockstorm:r0", v, sizeof(v));
        if (strcmp(v, "tok-cut") == 0)
            break;
        ls_sleep_ns(20 * LS_NS_PER_MS);
    } while (ls_now_ns() < deadline);
    CHECK_STR(v, "tok-cut");
    lock_close(&lk);
    json_free(d);
    teardown(&f);
}

/* Contract: load yaml; returns the loader's code and the first message. */
static int load(const char *yaml, char *msg, size_t n)
{
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    int rc = workload_load_string("t", yaml, NULL, 0, &w, NULL, &err);
    snprintf(msg, n, "%s", err.msg);
    workload_free(w);
    return rc;
}

static void test_loader_rules(void)
{
    char m[1100];
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    REQUIRE(workload_load_string("t", YAML_SENTINELS, NULL, 0, &w, NULL, &err) == 0);
    CHECK_INT(w->cluster.nodes, 3);
    workload_free(w);
    CHECK(load("cluster: {topology: replicated, replicas: 0}\n", m, sizeof(m)) != 0 &&
          strstr(m, "at least 1 replica"));
    CHECK(load("cluster: {topology: replicated, replicas: 2, nodes: 2}\n", m, sizeof(m)) != 0 &&
          strstr(m, "leave cluster.nodes out"));
    CHECK(load("cluster: {topology: replicated, replicas: 1, min_replicas_to_write: 2}\n", m,
               sizeof(m)) != 0 && strstr(m, "min_replicas_to_write"));
    CHECK(load("cluster: {min_replicas_to_write: 1}\n", m, sizeof(m)) != 0 &&
          strstr(m, "only valid with cluster.topology replicated"));
    CHECK(load("cluster: {topology: replicated, replicas: 1}\nlock: {wait_replicas: 2}\n", m,
               sizeof(m)) != 0 && strstr(m, "wait_replicas"));
    CHECK(load("cluster: {topology: replicated, replicas: 2}\nlock: {impl: redlock}\n", m,
               sizeof(m)) != 0 && strstr(m, "cannot run on cluster.topology replicated"));
    CHECK(load("faults: [{kind: failover, mode: manual}]\n", m, sizeof(m)) != 0 &&
          strstr(m, "needs cluster.topology: replicated"));
    CHECK(load("cluster: {topology: replicated, replicas: 1}\nfaults: [{kind: failover}]\n", m,
               sizeof(m)) != 0 && strstr(m, "mode sentinel needs cluster.sentinels"));
    CHECK(load("cluster: {topology: replicated, replicas: 1, sentinels: 3}\n"
               "faults: [{kind: failover, mode: manual}]\n", m, sizeof(m)) != 0 &&
          strstr(m, "mode manual needs cluster.sentinels: 0"));
    CHECK(load("cluster: {topology: replicated, replicas: 1}\n"
               "faults: [{kind: failover, mode: manual, target: \"node:0\"}]\n", m,
               sizeof(m)) != 0 && strstr(m, "cannot target"));
    CHECKF(load("cluster: {topology: replicated, replicas: 2}\nlock: {wait_replicas: 1}\n"
                "faults: [{kind: failover, mode: manual, how: pause, cut_before: 300ms}]\n", m,
                sizeof(m)) == 0, "%s", m);
}

/* A host that counts what the set asks of it (none of it may run here). */
struct counting_host {
    int calls;    /* any callback but release */
    int releases; /* release */
};

static int ch_interrupted(void *ctx)
{
    ((struct counting_host *)ctx)->calls++;
    return 1;
}

static void ch_sleep(void *ctx, int64_t ns)
{
    (void)ns;
    ((struct counting_host *)ctx)->calls++;
}

static void ch_release(void *ctx)
{
    ((struct counting_host *)ctx)->releases++;
}

/* The host contract of backends/replset.h without any process: a start
 * refused before the set exists releases the host itself (*out NULL); one
 * refused after leaves the set to replset_free, which releases it once;
 * the mixed-cut refusal keeps its message; NULL is accepted where the
 * header says so. */
static void test_host_contract(void)
{
    struct counting_host ch = {0};
    static const struct replset_host_ops ops = {
        .interrupted = ch_interrupted,
        .sleep = ch_sleep,
        .release = ch_release,
    };
    const struct replset_host host = {&ops, &ch};
    struct node_proc nodes[3];
    memset(nodes, 0, sizeof(nodes));
    struct cluster cl = {.nnodes = 1, .nodes = nodes, .nalloc = 3};
    struct replset_config cfg = {.cluster = &cl, .dir = "/nonexistent", .iptables = 0};
    struct replset *rs = (struct replset *)&ch; /* must be overwritten */
    struct ls_err err = {0, ""};
    CHECK_INT(replset_start(&cfg, host, &rs, &err), LS_EUSAGE);
    CHECK(rs == NULL);
    CHECK_STR(err.msg, "replicated set: 1 nodes, 0 sentinels not supported");
    CHECK_INT(ch.releases, 1);
    CHECK_INT(ch.calls, 0);

    ch = (struct counting_host){0};
    ls_err_clear(&err);
    cl.nnodes = 3;
    cfg.iptables = -1;
    CHECK_INT(replset_start(&cfg, host, &rs, &err), LS_EUSAGE);
    CHECK(rs != NULL);
    CHECK(strstr(err.msg, "cut: iptables and cut: proxy cannot be mixed") != NULL);
    CHECK_INT(ch.releases, 0);
    CHECK_INT(replset_primary(rs), 0);
    replset_stop(rs);
    replset_free(rs);
    CHECK_INT(ch.releases, 1);
    CHECK_INT(ch.calls, 0);

    replset_stop(NULL);
    replset_free(NULL);
    CHECK(replset_map_of(NULL) == NULL);
    CHECK_INT(replset_primary(NULL), -1);
    CHECK_INT(replset_uncut(NULL, 1, NULL), 0);
    struct json *j = replset_json(NULL);
    CHECK(j && j->type == JSON_NULL);
    json_free(j);
}

int main(void)
{
    RUN(test_host_contract);
    RUN(test_loader_rules);
    RUN(test_harness_promotion);
    RUN(test_wait_replicas);
    RUN(test_cut);
    RUN(test_sentinel_promotion);
    return t_finish();
}
