/*
 * test_redlock.c: the redlock implementation against five real
 * redis-server nodes started in a temp directory (and one port nobody
 * listens on): quorum and validity arithmetic, option checks (also through
 * the workload loader), grants on 3 and 5 nodes, busy, minority/majority of
 * nodes paused (SIGSTOP, state T verified), unlock after a failed attempt,
 * release and extend by quorum, no grant without validity, NOSCRIPT, and
 * max-of-quorum fences going backwards.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "backends/cluster.h"
#include "model/options.h"
#include "util/proc.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "locks/redlock.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

#define NN 5
#define DEAD -1     /* index of the node slot that refuses connections */

static struct node_proc nodes[NN];
static redisContext *adm[NN];
static int dead_port;

/* Run an admin command on node i; NULL on I/O error. Caller frees. */
static redisReply *admin(int i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(adm[i], fmt, ap);
    va_end(ap);
    return r;
}

static void admin_simple(int i, const char *fmt, const char *a, const char *b)
{
    freeReplyObject(admin(i, fmt, a, b));
}

static void flush_all(void)
{
    for (int i = 0; i < NN; i++)
        freeReplyObject(admin(i, "FLUSHALL"));
}

/* GET key on node i into buf ("" when nil); returns 1 when the key exists. */
static int admin_get(int i, const char *key, char *buf, size_t n)
{
    redisReply *r = admin(i, "GET %s", key);
    int found = r && r->type == REDIS_REPLY_STRING;
    snprintf(buf, n, "%s", found ? r->str : "");
    freeReplyObject(r);
    return found;
}

static long long admin_int(int i, const char *fmt, const char *key)
{
    redisReply *r = admin(i, fmt, key);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -999;
    freeReplyObject(r);
    return v;
}

/* EVAL + EVALSHA calls node i counted since its last CONFIG RESETSTAT. */
static long long script_calls(int i)
{
    long long total = 0;
    redisReply *r = admin(i, "INFO commandstats");
    if (!r || r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return -1;
    }
    static const char *const names[] = {"cmdstat_eval:calls=", "cmdstat_evalsha:calls="};
    for (size_t k = 0; k < 2; k++) {
        const char *p = strstr(r->str, names[k]);
        if (p)
            total += strtoll(p + strlen(names[k]), NULL, 10);
    }
    freeReplyObject(r);
    return total;
}

/* Does node i hold key with value token? */
static int holds(int i, const char *key, const char *token)
{
    char buf[64];
    return admin_get(i, key, buf, sizeof(buf)) && strcmp(buf, token) == 0;
}

static int pause_node(int i)
{
    if (kill(nodes[i].pid, SIGSTOP) != 0)
        return -1;
    return proc_wait_state(nodes[i].pid, 'T', 0, 2 * LS_NS_PER_S);
}

static void resume_node(int i)
{
    kill(nodes[i].pid, SIGCONT);
}

/* Bounded: wait until node i answers PING again after SIGCONT. */
static int wait_awake(int i)
{
    for (int k = 0; k < 200; k++) {
        redisReply *r = admin(i, "PING");
        int ok = r && r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        if (ok)
            return 1;
        ls_sleep_ns(10 * LS_NS_PER_MS);
    }
    return 0;
}

struct tl {
    struct lock lk;
    struct lock_config cfg;
    struct lock_node n[NN + 1];
    struct redlock_options opt;
    int rc;
    struct ls_err err;
};

#define REQUIRE_OPEN(t)                                 \
    do {                                                \
        CHECKF((t).rc == 0, "open: %s", (t).err.msg);   \
        if ((t).rc != 0)                                \
            return;                                     \
    } while (0)

/* Default options of redlock, through its own table. */
static void defaults(struct redlock_options *o)
{
    struct ls_err err = {0};
    memset(o, 0, sizeof(*o));
    int rc = opt_fill_defaults(lock_find("redlock")->options, o, &err);
    CHECKF(rc == 0, "%s", err.msg);
}

/* The per-node timeout of the tests that are not about timeouts: the
 * default 50 ms turns a reply delayed by a loaded machine into an unknown
 * outcome (seen: 2-6 per run with four builds running). A node that does
 * not answer in 2 s is broken, not slow. */
#define ROBUST_TIMEOUT (2 * LS_NS_PER_S)

/* Default options of redlock with node_timeout ROBUST_TIMEOUT. */
static void robust(struct redlock_options *o)
{
    defaults(o);
    o->node_timeout = ROBUST_TIMEOUT;
}

/* Open redlock on the fixture nodes idx[0..n) (DEAD = the refusing port)
 * with options o (NULL = robust()). */
static void tl_open(struct tl *t, const int *idx, int n, int64_t ttl, int fencing,
                    const struct redlock_options *o)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < n; i++) {
        snprintf(t->n[i].host, sizeof(t->n[i].host), "127.0.0.1");
        t->n[i].port = idx[i] == DEAD ? dead_port : nodes[idx[i]].port;
    }
    if (o)
        t->opt = *o;
    else
        robust(&t->opt);
    t->cfg.nodes = t->n;
    t->cfg.nnodes = n;
    t->cfg.worker = 3;
    t->cfg.ttl_ns = ttl;
    t->cfg.fencing = fencing;
    t->cfg.options = &t->opt;
    t->rc = lock_open(&t->lk, lock_find("redlock"), &t->cfg, &t->err);
}

static void grant_init(struct grant *g, int res, const char *token)
{
    memset(g, 0, sizeof(*g));
    g->res = res;
    snprintf(g->token, sizeof(g->token), "%s", token);
}

static int acq(struct tl *t, struct grant *g, int *ek)
{
    *ek = EVE_NONE;
    return t->lk.ops->acquire(&t->lk, g, ek);
}

static int rel(struct tl *t, const struct grant *g, int *ek)
{
    *ek = EVE_NONE;
    return t->lk.ops->release(&t->lk, g, ek);
}

static int ren(struct tl *t, struct grant *g, int *ek)
{
    *ek = EVE_NONE;
    return t->lk.ops->renew(&t->lk, g, ek);
}

static const int all5[NN] = {0, 1, 2, 3, 4};
static const int first3[3] = {0, 1, 2};

/* ---- arithmetic and options ---- */

static void test_quorum_math(void)
{
    static const int want[8] = {0, 1, 2, 2, 3, 3, 4, 4};
    for (int n = 0; n <= 7; n++)
        CHECKF(redlock_quorum(n, 0) == want[n], "n=%d: %d", n, redlock_quorum(n, 0));
    CHECK_INT(redlock_quorum(5, 2), 2);
    CHECK_INT(redlock_quorum(0, 2), 0);
    CHECK_INT(redlock_quorum(-1, 0), 0);
}

static void test_validity_math(void)
{
    CHECK_INT(redlock_drift(LS_NS_PER_S, 0.01), 12 * LS_NS_PER_MS);
    CHECK_INT(redlock_drift(LS_NS_PER_S, 0), 2 * LS_NS_PER_MS);
    CHECK_INT(redlock_drift(10 * LS_NS_PER_S, 0.5), 5002 * LS_NS_PER_MS);
    CHECK_INT(redlock_validity(LS_NS_PER_S, 100 * LS_NS_PER_MS, 0.01), 888 * LS_NS_PER_MS);
    CHECK_INT(redlock_validity(LS_NS_PER_S, 0, 0.01), 988 * LS_NS_PER_MS);
    /* a round as long as the TTL, or a TTL at the drift floor: no validity */
    CHECK(redlock_validity(LS_NS_PER_S, LS_NS_PER_S, 0.01) < 0);
    CHECK(redlock_validity(2 * LS_NS_PER_MS, 0, 0.01) <= 0);
    CHECK(redlock_validity(5 * LS_NS_PER_MS, 20 * LS_NS_PER_MS, 0.01) < 0);
    CHECK_INT(redlock_validity(5 * LS_NS_PER_MS, 0, 0), 3 * LS_NS_PER_MS);
}

static void test_options(void)
{
    const struct lock_ops *ops = lock_find("redlock");
    REQUIRE(ops != NULL);
    CHECK(ops->version == LOCK_OPS_VERSION);
    CHECK(ops->caps & LOCK_CAP_QUORUM);
    CHECK(ops->caps & LOCK_CAP_TTL);
    CHECK(ops->caps & LOCK_CAP_RENEW);
    CHECK(!(ops->caps & LOCK_CAP_NEGATIVE));
    CHECK(ops->renew && ops->validate);
    CHECK(ops->options_size == sizeof(struct redlock_options));
    struct redlock_options o;
    defaults(&o);
    CHECK_INT(o.node_timeout, 50 * LS_NS_PER_MS);
    CHECK(o.drift_factor == 0.01);
    CHECK_INT(o.quorum, 0);
    CHECK_INT(o.unsafe, 0);
    CHECK_INT(o.clock, REDLOCK_CLOCK_MONOTONIC);
    CHECK_INT(o.fencing, REDLOCK_FENCE_NONE);
    for (const struct opt_def *d = ops->options; d->name; d++)
        CHECKF(d->help && d->help[0], "%s", d->name);

    /* range checks through the user-input parser */
    char why[160];
    const struct opt_def *df = NULL, *q = NULL;
    for (const struct opt_def *d = ops->options; d->name; d++) {
        if (strcmp(d->name, "drift_factor") == 0)
            df = d;
        if (strcmp(d->name, "quorum") == 0)
            q = d;
    }
    REQUIRE(df && q);
    CHECK(opt_parse_text(df, &o, "0.6", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(df, &o, "0.5", why, sizeof(why)) == 0 && o.drift_factor == 0.5);
    CHECK(opt_parse_text(q, &o, "16", why, sizeof(why)) < 0);

    /* cross-option rules */
    defaults(&o);
    CHECK(redlock_check(&o, 5, why, sizeof(why)) == 0);
    CHECK(redlock_check(NULL, 1, why, sizeof(why)) == 0);
    CHECK(redlock_check(NULL, 0, why, sizeof(why)) < 0);
    CHECK(redlock_check(NULL, 16, why, sizeof(why)) < 0);
    o.quorum = 2;
    CHECK(redlock_check(&o, 5, why, sizeof(why)) < 0);
    CHECKF(strstr(why, "below a majority") && strstr(why, "unsafe: true"), "%s", why);
    CHECK(redlock_check(&o, 3, why, sizeof(why)) == 0);   /* 2 of 3 is a majority */
    o.unsafe = 1;
    CHECK(redlock_check(&o, 5, why, sizeof(why)) == 0);
    o.quorum = 6;
    CHECK(redlock_check(&o, 5, why, sizeof(why)) < 0);
    CHECKF(strstr(why, "more than the 5 nodes") != NULL, "%s", why);

    /* init refuses the same (a worker would fail to start) */
    struct tl t;
    defaults(&o);
    o.quorum = 1;
    tl_open(&t, first3, 3, LS_NS_PER_S, 0, &o);
    CHECK_INT(t.rc, LS_EWORKLOAD);
    CHECKF(strstr(t.err.msg, "lock redlock: quorum 1 is below a majority"), "%s", t.err.msg);
    lock_close(&t.lk);

    /* list output shows the double's range and the enum choices */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    lock_print_list(f);
    fclose(f);
    CHECK(strstr(buf, "redlock") && strstr(buf, "ttl,renew,quorum"));
    CHECK(strstr(buf, "default 0.01 (0..0.5)") != NULL);
    CHECK(strstr(buf, "(monotonic|realtime)") && strstr(buf, "(none|max-of-quorum)"));
    free(buf);
}

/* The loader calls the validate hook: the error is a workload error before
 * anything starts. */
static void test_loader(void)
{
    static const char *base = "cluster: {nodes: 3}\n"
                              "lock:\n"
                              "  impl: redlock\n"
                              "  options: {quorum: 1}\n";
    struct workload *w = NULL;
    struct ls_err err = {0};
    CHECK_INT(workload_load_string("t.yaml", base, NULL, 0, &w, NULL, &err), LS_EWORKLOAD);
    CHECKF(strstr(err.msg, "t.yaml:4:") && strstr(err.msg, "lock.options: redlock: quorum 1") &&
               strstr(err.msg, "unsafe: true"),
           "%s", err.msg);
    workload_free(w);
    w = NULL;

    const char *sets[] = {"lock.options.unsafe=true"};
    ls_err_clear(&err);
    CHECKF(workload_load_string("t.yaml", base, sets, 1, &w, NULL, &err) == 0, "%s", err.msg);
    workload_free(w);
    w = NULL;

    /* the node count can break it too */
    const char *more[] = {"cluster.nodes=2"};
    ls_err_clear(&err);
    CHECK_INT(workload_load_string("t.yaml",
                                   "cluster: {nodes: 3}\nlock: {impl: redlock, options: {quorum: 3}}\n",
                                   more, 1, &w, NULL, &err),
              LS_EWORKLOAD);
    CHECKF(strstr(err.msg, "more than the 2 nodes") != NULL, "%s", err.msg);
    workload_free(w);
    w = NULL;

    /* N = 1 and every default: fine */
    ls_err_clear(&err);
    CHECKF(workload_load_string("t.yaml", "lock: {impl: redlock}\n", NULL, 0, &w, NULL, &err) == 0,
           "%s", err.msg);
    workload_free(w);
}

/* ---- against the nodes ---- */

static void grant_on(const int *idx, int n)
{
    flush_all();
    struct tl t;
    const int64_t ttl = 2 * LS_NS_PER_S;
    tl_open(&t, idx, n, ttl, 1, NULL);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    grant_init(&g, 4, "tok-grant-000001");
    int o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "%d nodes: %d/%d", n, o, ek);
    /* monotonic: the lease runs ttl - drift from the start of the round */
    CHECK_INT(g.validity_ns, ttl - redlock_drift(ttl, 0.01));
    CHECK(!g.has_fence && !g.no_lease);
    for (int i = 0; i < n; i++) {
        CHECKF(holds(idx[i], "lockstorm:r4", g.token), "node %d", idx[i]);
        long long pttl = admin_int(idx[i], "PTTL %s", "lockstorm:r4");
        CHECKF(pttl > 1900 && pttl <= 2000, "node %d: pttl %lld", idx[i], pttl);
        CHECK_INT(admin_int(idx[i], "EXISTS %s", "lockstorm:fence:r4"), 0);
    }
    struct grant g2;
    grant_init(&g2, 4, "tok-grant-000002");
    CHECK(acq(&t, &g2, &ek) == LOCK_BUSY);
    CHECK(holds(idx[0], "lockstorm:r4", g.token));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    for (int i = 0; i < n; i++)
        CHECK_INT(admin_int(idx[i], "EXISTS %s", "lockstorm:r4"), 0);
    CHECK(rel(&t, &g, &ek) == LOCK_NOT_OWNER);
    CHECK(ren(&t, &g, &ek) == LOCK_NOT_OWNER);
    CHECK(acq(&t, &g2, &ek) == LOCK_OK);
    CHECK(rel(&t, &g2, &ek) == LOCK_OK);
    lock_close(&t.lk);
}

static void test_acquire(void)
{
    grant_on(first3, 3);
    grant_on(all5, 5);
    grant_on(all5, 1);
}

/* Another token on a majority: busy, and our keys on the rest are gone.
 * Another token on a minority: granted. */
static void test_busy(void)
{
    flush_all();
    struct tl t;
    tl_open(&t, all5, NN, 2 * LS_NS_PER_S, 0, NULL);
    REQUIRE_OPEN(t);
    for (int i = 0; i < 3; i++)
        admin_simple(i, "SET %s %s PX 5000", "lockstorm:r1", "tok-other-000001");
    struct grant g;
    int ek;
    grant_init(&g, 1, "tok-busy-0000001");
    int o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_BUSY, "%d/%d", o, ek);
    for (int i = 0; i < 3; i++)
        CHECK(holds(i, "lockstorm:r1", "tok-other-000001"));
    for (int i = 3; i < NN; i++)    /* granted there, then unlocked */
        CHECK_INT(admin_int(i, "EXISTS %s", "lockstorm:r1"), 0);

    /* held everywhere: every answer a definite no, so no unlock round (one
     * script call per node) */
    for (int i = 3; i < NN; i++)
        admin_simple(i, "SET %s %s PX 5000", "lockstorm:r1", "tok-other-000001");
    for (int i = 0; i < NN; i++)
        freeReplyObject(admin(i, "CONFIG RESETSTAT"));
    o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_BUSY, "%d/%d", o, ek);
    for (int i = 0; i < NN; i++)
        CHECKF(script_calls(i) == 1, "node %d: %lld script calls", i, script_calls(i));
    for (int i = 3; i < NN; i++)
        admin_simple(i, "DEL %s", "lockstorm:r1", NULL);

    admin_simple(2, "DEL %s", "lockstorm:r1", NULL);   /* other token now on 2 of 5 */
    o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "%d/%d", o, ek);
    for (int i = 2; i < NN; i++)
        CHECK(holds(i, "lockstorm:r1", g.token));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);  /* 3 of 5 released */
    CHECK(holds(0, "lockstorm:r1", "tok-other-000001"));
    lock_close(&t.lk);
}

/* 5 nodes, 2 paused: granted in one node_timeout, not one per paused node
 * (the round is concurrent); 3 paused: not granted, and the 2 reachable
 * keys are gone. node_timeout 500 ms: the live nodes answer within it on a
 * loaded machine, and the bounds (one round < 2 timeouts) stay far from a
 * sequential round's. */
static void test_paused_nodes(void)
{
    flush_all();
    const int64_t nt = 500 * LS_NS_PER_MS;
    struct redlock_options o;
    defaults(&o);
    o.node_timeout = nt;
    struct tl t;
    tl_open(&t, all5, NN, 3 * LS_NS_PER_S, 0, &o);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    grant_init(&g, 2, "tok-warm-0000001");
    CHECK(acq(&t, &g, &ek) == LOCK_OK);     /* connections up, scripts loaded */
    CHECK(rel(&t, &g, &ek) == LOCK_OK);

    REQUIRE(pause_node(3) == 0);
    REQUIRE(pause_node(4) == 0);
    grant_init(&g, 2, "tok-minority-001");
    int64_t t0 = ls_now_ns();
    int out = acq(&t, &g, &ek);
    int64_t took = ls_now_ns() - t0;
    CHECKF(out == LOCK_OK, "2 of 5 paused: %d/%d", out, ek);
    /* concurrent: one node_timeout, not one per paused node (2 x nt) */
    CHECKF(took >= nt - 5 * LS_NS_PER_MS && took < 2 * nt, "took %lld ms",
           (long long)(took / LS_NS_PER_MS));
    printf("# acquire with 2 of 5 nodes paused, node_timeout 500ms: %.1f ms\n",
           (double)took / 1e6);
    CHECK(g.validity_ns == 3 * LS_NS_PER_S - redlock_drift(3 * LS_NS_PER_S, 0.01));
    for (int i = 0; i < 3; i++)
        CHECK(holds(i, "lockstorm:r2", g.token));
    /* a second round reconnects to the paused nodes: still about one timeout */
    t0 = ls_now_ns();
    out = rel(&t, &g, &ek);
    took = ls_now_ns() - t0;
    CHECKF(out == LOCK_OK, "release with 2 of 5 paused: %d/%d", out, ek);
    CHECKF(took < 2 * nt, "release took %lld ms", (long long)(took / LS_NS_PER_MS));
    for (int i = 0; i < 3; i++)
        CHECK_INT(admin_int(i, "EXISTS %s", "lockstorm:r2"), 0);

    REQUIRE(pause_node(2) == 0);
    grant_init(&g, 2, "tok-majority-001");
    t0 = ls_now_ns();
    out = acq(&t, &g, &ek);
    took = ls_now_ns() - t0;
    /* the paused nodes may execute the SET when they wake: unknown */
    CHECKF(out == LOCK_UNKNOWN && ek == EVE_TIMEOUT, "3 of 5 paused: %d/%d", out, ek);
    CHECK_INT(g.validity_ns, 0);
    /* unlock-on-failure: the reachable nodes had granted, and are clean */
    CHECK_INT(admin_int(0, "EXISTS %s", "lockstorm:r2"), 0);
    CHECK_INT(admin_int(1, "EXISTS %s", "lockstorm:r2"), 0);
    /* an acquire round and an unlock round, each one timeout (per node: 6) */
    CHECKF(took < 3 * nt, "took %lld ms (acquire + unlock rounds)",
           (long long)(took / LS_NS_PER_MS));
    printf("# failed acquire with 3 of 5 paused (acquire + unlock rounds): %.1f ms\n",
           (double)took / 1e6);

    for (int i = 2; i < NN; i++)
        resume_node(i);
    for (int i = 2; i < NN; i++)
        CHECK(wait_awake(i));
    /* back to normal: the lock reconnects by itself */
    flush_all();
    grant_init(&g, 2, "tok-after-000001");
    out = acq(&t, &g, &ek);
    CHECKF(out == LOCK_OK, "%d/%d", out, ek);
    for (int i = 0; i < NN; i++)
        CHECK(holds(i, "lockstorm:r2", g.token));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    lock_close(&t.lk);
}

/* Refused connections count as definite failures; the live node is
 * unlocked. */
static void test_refused(void)
{
    flush_all();
    static const int idx[3] = {0, DEAD, DEAD};
    struct tl t;
    tl_open(&t, idx, 3, 2 * LS_NS_PER_S, 0, NULL);
    REQUIRE_OPEN(t);   /* nodes down at init: no error */
    struct grant g;
    int ek;
    grant_init(&g, 5, "tok-refused-0001");
    int o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "%d/%d", o, ek);
    CHECK_INT(admin_int(0, "EXISTS %s", "lockstorm:r5"), 0);
    o = rel(&t, &g, &ek);
    CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "release: %d/%d", o, ek);
    lock_close(&t.lk);

    /* 2 live of 3: granted; release is OK on the 2 */
    static const int idx2[3] = {0, 1, DEAD};
    tl_open(&t, idx2, 3, 2 * LS_NS_PER_S, 0, NULL);
    REQUIRE_OPEN(t);
    o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "%d/%d", o, ek);
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    lock_close(&t.lk);
}

/* Release: not ours on a majority is NOT_OWNER (and the rest is cleaned).
 * Extend: by quorum, with validity recomputed. */
static void test_release_extend(void)
{
    flush_all();
    const int64_t ttl = 2 * LS_NS_PER_S;
    struct tl t;
    tl_open(&t, all5, NN, ttl, 0, NULL);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    grant_init(&g, 6, "tok-extend-00001");
    REQUIRE(acq(&t, &g, &ek) == LOCK_OK);
    for (int i = 0; i < NN; i++)
        admin_simple(i, "PEXPIRE %s %s", "lockstorm:r6", "500");
    g.validity_ns = 0;
    int o = ren(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "%d/%d", o, ek);
    CHECK_INT(g.validity_ns, ttl - redlock_drift(ttl, 0.01));
    for (int i = 0; i < NN; i++) {
        long long pttl = admin_int(i, "PTTL %s", "lockstorm:r6");
        CHECKF(pttl > 1900, "node %d: pttl %lld after extend", i, pttl);
    }
    /* lost on 2 of 5: still extended by the 3 */
    admin_simple(0, "DEL %s", "lockstorm:r6", NULL);
    admin_simple(1, "SET %s %s", "lockstorm:r6", "tok-thief-000001");
    o = ren(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "3 of 5: %d/%d", o, ek);
    /* lost on 3 of 5: not ours any more */
    admin_simple(2, "DEL %s", "lockstorm:r6", NULL);
    g.validity_ns = 12345;
    o = ren(&t, &g, &ek);
    CHECKF(o == LOCK_NOT_OWNER, "2 of 5: %d/%d", o, ek);
    CHECK_INT(g.validity_ns, 12345);
    o = rel(&t, &g, &ek);
    CHECKF(o == LOCK_NOT_OWNER, "release with 2 of 5: %d/%d", o, ek);
    CHECK_INT(admin_int(3, "EXISTS %s", "lockstorm:r6"), 0);   /* released everywhere */
    CHECK_INT(admin_int(4, "EXISTS %s", "lockstorm:r6"), 0);
    CHECK(holds(1, "lockstorm:r6", "tok-thief-000001"));       /* not ours: untouched */
    lock_close(&t.lk);
}

/* A grant with no validity left is never returned. */
static void test_no_validity(void)
{
    flush_all();
    struct redlock_options o;
    defaults(&o);
    o.node_timeout = 20 * LS_NS_PER_MS;
    struct tl t;
    tl_open(&t, first3, 3, 5 * LS_NS_PER_MS, 0, &o);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    /* without faults, a 5ms lease is granted with what is left of it (200
     * tries: a loaded machine may leave none of the 5 ms in many of them) */
    int granted = 0;
    for (int k = 0; k < 200 && granted < 3; k++) {
        grant_init(&g, 7, "tok-tiny-0000001");
        int out = acq(&t, &g, &ek);
        if (out == LOCK_OK) {
            granted++;
            CHECKF(g.validity_ns > 0, "validity %lld", (long long)g.validity_ns);
            rel(&t, &g, &ek);
        }
    }
    CHECKF(granted > 0, "no 5ms lease granted in 200 tries");
    /* a slow node (paused) makes the round take node_timeout > ttl: the two
     * others grant, but no validity is left */
    REQUIRE(pause_node(2) == 0);
    grant_init(&g, 7, "tok-tiny-0000002");
    int out = acq(&t, &g, &ek);
    CHECKF(out != LOCK_OK, "granted with no validity left: %lld", (long long)g.validity_ns);
    CHECK_INT(g.validity_ns, 0);
    CHECK_INT(admin_int(0, "EXISTS %s", "lockstorm:r7"), 0);
    CHECK_INT(admin_int(1, "EXISTS %s", "lockstorm:r7"), 0);
    resume_node(2);
    CHECK(wait_awake(2));
    lock_close(&t.lk);

    /* a TTL at the drift floor: a quorum grants but it is never returned;
     * definite failure (timeout), every key deleted again */
    o.node_timeout = ROBUST_TIMEOUT;
    tl_open(&t, first3, 3, 2 * LS_NS_PER_MS, 0, &o);
    REQUIRE_OPEN(t);
    grant_init(&g, 8, "tok-floor-000001");
    out = acq(&t, &g, &ek);
    CHECKF(out == LOCK_FAIL && ek == EVE_TIMEOUT, "%d/%d", out, ek);
    for (int i = 0; i < 3; i++)
        CHECK_INT(admin_int(i, "EXISTS %s", "lockstorm:r8"), 0);
    lock_close(&t.lk);
}

/* max-of-quorum: each granting node INCRs its own counter; the fence is the
 * largest. A later grant on another quorum gets a smaller fence. */
static void test_fences(void)
{
    flush_all();
    struct redlock_options o;
    defaults(&o);
    o.fencing = REDLOCK_FENCE_MAX_OF_QUORUM;
    o.node_timeout = LS_NS_PER_S; /* node 0 paused below: a round waits this long */
    struct tl t;
    tl_open(&t, first3, 3, 2 * LS_NS_PER_S, 1, &o);
    REQUIRE_OPEN(t);
    admin_simple(0, "SET %s %s", "lockstorm:fence:r9", "100");
    struct grant a, b;
    int ek;
    grant_init(&a, 9, "tok-fence-A00001");
    REQUIRE(acq(&t, &a, &ek) == LOCK_OK);
    CHECK(a.has_fence);
    CHECK_INT(a.fence, 101);
    char buf[32];
    CHECK(admin_get(1, "lockstorm:fence:r9", buf, sizeof(buf)) && strcmp(buf, "1") == 0);
    CHECK(rel(&t, &a, &ek) == LOCK_OK);

    REQUIRE(pause_node(0) == 0);
    grant_init(&b, 9, "tok-fence-B00001");
    int out = acq(&t, &b, &ek);
    resume_node(0);
    CHECKF(out == LOCK_OK, "%d/%d", out, ek);
    CHECK(b.has_fence);
    CHECKF(b.fence < a.fence, "later grant's fence %llu, earlier %llu: not a regression",
           (unsigned long long)b.fence, (unsigned long long)a.fence);
    CHECK(wait_awake(0));
    CHECK(rel(&t, &b, &ek) == LOCK_OK);
    lock_close(&t.lk);

    /* the workload's lock.fencing off: no fence, no INCR */
    flush_all();
    tl_open(&t, first3, 3, 2 * LS_NS_PER_S, 0, &o);
    REQUIRE_OPEN(t);
    REQUIRE(acq(&t, &a, &ek) == LOCK_OK);
    CHECK(!a.has_fence);
    CHECK_INT(admin_int(1, "EXISTS %s", "lockstorm:fence:r9"), 0);
    CHECK(rel(&t, &a, &ek) == LOCK_OK);
    lock_close(&t.lk);
}

/* quorum below a majority with unsafe: a negative control that grants while
 * another token holds a majority. */
static void test_unsafe_quorum(void)
{
    flush_all();
    struct redlock_options o;
    robust(&o);
    o.quorum = 1;
    o.unsafe = 1;
    struct tl t;
    tl_open(&t, first3, 3, 2 * LS_NS_PER_S, 0, &o);
    REQUIRE_OPEN(t);
    admin_simple(0, "SET %s %s", "lockstorm:r10", "tok-other-000001");
    admin_simple(1, "SET %s %s", "lockstorm:r10", "tok-other-000001");
    struct grant g;
    int ek;
    grant_init(&g, 10, "tok-unsafe-00001");
    int out = acq(&t, &g, &ek);
    CHECKF(out == LOCK_OK, "%d/%d", out, ek);
    CHECK(holds(2, "lockstorm:r10", g.token));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    lock_close(&t.lk);
}

/* Script cache flushed (as after a restart): EVAL fallback, nothing lost.
 * Connections the server closed while idle are replaced, not unknown. */
static void test_noscript_and_stale(void)
{
    flush_all();
    struct tl t;
    tl_open(&t, first3, 3, 2 * LS_NS_PER_S, 0, NULL);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    grant_init(&g, 11, "tok-script-00001");
    REQUIRE(acq(&t, &g, &ek) == LOCK_OK);
    for (int i = 0; i < 3; i++)
        freeReplyObject(admin(i, "SCRIPT FLUSH"));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    int o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "after SCRIPT FLUSH: %d/%d", o, ek);
    /* every client but the admin one is disconnected by the node */
    for (int i = 0; i < 3; i++)
        freeReplyObject(admin(i, "CLIENT KILL TYPE normal SKIPME yes"));
    o = rel(&t, &g, &ek);
    CHECKF(o == LOCK_OK, "after the node closed our connections: %d/%d", o, ek);
    lock_close(&t.lk);
}

/* total_connections_received of node i (INFO stats), -1 on error. */
static long long connections_received(int i)
{
    redisReply *r = admin(i, "INFO stats");
    long long v = -1;
    const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "total_connections_received:") : NULL;
    if (p)
        v = strtoll(p + strlen("total_connections_received:"), NULL, 10);
    freeReplyObject(r);
    return v;
}

/* A node too slow for node_timeout: each timed-out call keeps its
 * connection and its late replies are skipped when they come (no reconnect
 * per timeout, which under load never let a handshake finish in time), the
 * replies of the next calls are matched right, and the late SETs were
 * undone by the releases queued behind them on the same connection. */
static void test_late_replies(void)
{
    flush_all();
    struct redlock_options o;
    defaults(&o);
    o.node_timeout = 300 * LS_NS_PER_MS;
    struct tl t;
    tl_open(&t, first3, 3, 5 * LS_NS_PER_S, 0, &o);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    grant_init(&g, 13, "tok-late-warm-01");
    REQUIRE(acq(&t, &g, &ek) == LOCK_OK);   /* connections up, scripts loaded */
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    long long conns0 = connections_received(2);
    REQUIRE(pause_node(2) == 0);
    const int rounds = 3;
    for (int k = 0; k < rounds; k++) {
        char tok[32];
        snprintf(tok, sizeof(tok), "tok-late-%07d", k);
        grant_init(&g, 14 + k, tok);
        int out = acq(&t, &g, &ek);
        CHECKF(out == LOCK_OK, "round %d with node 2 paused: %d/%d", k, out, ek);
        out = rel(&t, &g, &ek);
        CHECKF(out == LOCK_OK, "release %d: %d/%d", k, out, ek);
    }
    resume_node(2);
    REQUIRE(wait_awake(2));
    grant_init(&g, 20, "tok-late-after01");
    int out = acq(&t, &g, &ek);
    CHECKF(out == LOCK_OK, "after the node woke: %d/%d", out, ek);
    for (int i = 0; i < 3; i++)
        CHECK(holds(i, "lockstorm:r20", g.token));
    CHECK(rel(&t, &g, &ek) == LOCK_OK);
    /* the paused rounds' SETs ran on wake, each undone by its release */
    for (int k = 0; k < rounds; k++) {
        char key[32];
        snprintf(key, sizeof(key), "lockstorm:r%d", 14 + k);
        CHECK_INT(admin_int(2, "EXISTS %s", key), 0);
    }
    long long conns1 = connections_received(2);
    CHECKF(conns0 >= 0 && conns1 == conns0, "node 2 accepted %lld new connections (0 expected)",
           conns1 - conns0);
    lock_close(&t.lk);
}

/* clock: realtime works the same when the clock does not jump; a figure
 * for the round trip of a 5-node round. */
static void test_realtime_and_speed(void)
{
    flush_all();
    struct redlock_options o;
    robust(&o);
    o.clock = REDLOCK_CLOCK_REALTIME;
    struct tl t;
    tl_open(&t, all5, NN, 2 * LS_NS_PER_S, 0, &o);
    REQUIRE_OPEN(t);
    struct grant g;
    int ek;
    const int rounds = 200;
    int ok = 0;
    int64_t t0 = ls_now_ns();
    for (int k = 0; k < rounds; k++) {
        grant_init(&g, 12, "tok-speed-000001");
        ok += acq(&t, &g, &ek) == LOCK_OK;
        ok += rel(&t, &g, &ek) == LOCK_OK;
        CHECK(g.validity_ns > LS_NS_PER_S);
    }
    int64_t took = ls_now_ns() - t0;
    CHECK_INT(ok, 2 * rounds);
    printf("# 5-node round (acquire or release), no faults: %.1f us mean over %d\n",
           (double)took / 1e3 / (2 * rounds), 2 * rounds);
    lock_close(&t.lk);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char *dir = t_tmpdir();
    struct ls_err err = {0};
    int started = 0, rc = 1;
    for (; started < NN; started++) {
        char name[16];
        snprintf(name, sizeof(name), "rl-%d", started);
        if (node_start(&nodes[started], dir, name, PERSIST_NONE, &err) < 0) {
            fprintf(stderr, "cannot start redis-server: %s\n", err.msg);
            goto out;
        }
        struct timeval tv = {2, 0};
        adm[started] = redisConnectWithTimeout(nodes[started].host, nodes[started].port, tv);
        if (!adm[started] || adm[started]->err) {
            fprintf(stderr, "admin connection failed\n");
            started++;
            goto out;
        }
        redisSetTimeout(adm[started], tv);
    }
    /* a port that refuses: a node started and stopped again */
    struct node_proc gone;
    memset(&gone, 0, sizeof(gone));
    if (node_start(&gone, dir, "rl-gone", PERSIST_NONE, &err) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err.msg);
        goto out;
    }
    dead_port = gone.port;
    node_stop(&gone);

    RUN(test_quorum_math);
    RUN(test_validity_math);
    RUN(test_options);
    RUN(test_loader);
    RUN(test_acquire);
    RUN(test_busy);
    RUN(test_paused_nodes);
    RUN(test_refused);
    RUN(test_release_extend);
    RUN(test_no_validity);
    RUN(test_fences);
    RUN(test_unsafe_quorum);
    RUN(test_late_replies);
    RUN(test_noscript_and_stale);
    RUN(test_realtime_and_speed);
    rc = t_finish();
out:
    for (int i = 0; i < started; i++) {
        kill(nodes[i].pid, SIGCONT);    /* in case a test stopped early */
        if (adm[i])
            redisFree(adm[i]);
        node_stop(&nodes[i]);
    }
    t_rmdir(dir);
    free(dir);
    return rc;
}
