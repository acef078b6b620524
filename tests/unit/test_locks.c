/*
 * test_locks.c: the built-in lock implementations against a real
 * redis-server started in a temp directory: grants, busy, release and
 * stale release, renew, TTLs, fences, NOSCRIPT fallback, unknown outcome
 * under SIGSTOP, connect refused, and each negative control's bug made to
 * happen on purpose (stolen DEL, TTL-less gap, check-then-set race). The
 * node requires a password (as a run's nodes do): every lock authenticates;
 * a wrong one is a failed connect; a release after a node restart
 * reconnects instead of failing.
 */
#include <errno.h>
#include <pthread.h>
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
#include "locks/redis_conn.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

/* The fixture: one node for the whole binary, an admin connection. */
static struct node_proc node;
static redisContext *adm;

/* Run one admin command; NULL on I/O error. Caller frees. */
static redisReply *admin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(adm, fmt, ap);
    va_end(ap);
    return r;
}

/* Integer reply of an admin command, or -999 on anything else. */
static long long admin_int(const char *fmt, const char *key)
{
    redisReply *r = admin(fmt, key);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -999;
    freeReplyObject(r);
    return v;
}

/* GET key into buf ("" when nil); returns 1 when the key exists. */
static int admin_get(const char *key, char *buf, size_t n)
{
    redisReply *r = admin("GET %s", key);
    int found = r && r->type == REDIS_REPLY_STRING;
    snprintf(buf, n, "%s", found ? r->str : "");
    freeReplyObject(r);
    return found;
}

static void admin_simple(const char *cmd)
{
    redisReply *r = admin(cmd);
    freeReplyObject(r);
}

struct tlock {
    struct lock lk;
    struct lock_config cfg;
    struct lock_node n;
    struct rlock_options opt;
    int rc;
    struct ls_err err;
};

/* REQUIRE that tl_open succeeded, saying why not. */
#define REQUIRE_OPEN(t)                                                  \
    do {                                                                 \
        CHECKF((t).rc == 0, "open: %s", (t).err.msg);                    \
        if ((t).rc != 0)                                                 \
            return;                                                      \
    } while (0)

/* Open impl on the fixture node. gap/timeout 0: defaults. */
static void tl_open(struct tlock *t, const char *impl, int64_t ttl, int fencing, int64_t gap,
                    int64_t timeout)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->n.host, sizeof(t->n.host), "%s", node.host);
    t->n.port = node.port;
    snprintf(t->n.password, sizeof(t->n.password), "%s", node.password);
    t->opt.timeout = timeout ? timeout : 200 * LS_NS_PER_MS;
    t->opt.gap = gap;
    t->cfg.nodes = &t->n;
    t->cfg.nnodes = 1;
    t->cfg.worker = 7;
    t->cfg.ttl_ns = ttl;
    t->cfg.fencing = fencing;
    t->cfg.options = &t->opt;
    t->rc = lock_open(&t->lk, lock_find(impl), &t->cfg, &t->err);
}

static void grant_init(struct grant *g, int res, const char *token)
{
    memset(g, 0, sizeof(*g));
    g->res = res;
    snprintf(g->token, sizeof(g->token), "%s", token);
}

static int acq(struct tlock *t, struct grant *g, int *ek)
{
    *ek = EVE_NONE;
    return t->lk.ops->acquire(&t->lk, g, ek);
}

static int rel(struct tlock *t, const struct grant *g)
{
    int ek = EVE_NONE;
    return t->lk.ops->release(&t->lk, g, &ek);
}

static const char *const all_impls[] = {
    "redis-single", "naive-del", "naive-setnx-expire", "naive-get-set", "naive-no-ttl", "busted",
};
#define NIMPLS (sizeof(all_impls) / sizeof(all_impls[0]))

/* ---- registry ---- */

static void test_registry(void)
{
    CHECK(lock_find("nope") == NULL);
    CHECK(lock_find(NULL) == NULL);
    size_t n = 0;
    for (const struct lock_ops *const *p = lock_all(); *p; p++)
        n++;
    CHECK(n >= NIMPLS);
    char names[512];
    lock_names(names, sizeof(names));
    char tiny[8];
    lock_names(tiny, sizeof(tiny));
    CHECK(strlen(tiny) == 7);
    for (size_t i = 0; i < NIMPLS; i++) {
        const struct lock_ops *o = lock_find(all_impls[i]);
        REQUIRE(o != NULL);
        CHECK_STR(o->name, all_impls[i]);
        CHECK(o->version == LOCK_OPS_VERSION);
        CHECK(strstr(names, all_impls[i]) != NULL);
        CHECK(o->model && o->model[0]);
        CHECK(o->options_size == sizeof(struct rlock_options));
        CHECK(o->caps & LOCK_CAP_FENCING);
        CHECK(!!(o->caps & LOCK_CAP_NEGATIVE) == (i != 0));
        CHECK(!!(o->caps & LOCK_CAP_TTL) == (strcmp(o->name, "naive-no-ttl") != 0));
        CHECK((o->renew != NULL) == (i == 0));
        /* Every default parses with the user-input parser and is in range. */
        int has_timeout = 0, has_gap = 0;
        for (const struct opt_def *d = o->options; d && d->name; d++) {
            int64_t v;
            const char *why;
            CHECK(d->type == OPT_DURATION);
            CHECKF(ls_parse_duration(d->def, &v, &why) == 0, "%s.%s", o->name, d->name);
            CHECK(v >= d->min && v <= d->max);
            CHECK(d->help && d->help[0]);
            has_timeout |= strcmp(d->name, "timeout") == 0 && v == 200 * LS_NS_PER_MS;
            has_gap |= strcmp(d->name, "gap") == 0 && v == 0;
        }
        CHECK(has_timeout);
        CHECK(has_gap == (strcmp(o->name, "naive-setnx-expire") == 0 ||
                          strcmp(o->name, "naive-get-set") == 0));
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    lock_print_list(f);
    fclose(f);
    CHECK(strstr(buf, "redis-single") && strstr(buf, "ttl,renew,fencing"));
    CHECK(strstr(buf, "negative control") != NULL);
    CHECK(strstr(buf, "    timeout") && strstr(buf, "default 200ms (1ms..1m)"));
    CHECK(strstr(buf, "    gap") != NULL);
    free(buf);

    struct lock lk;
    struct lock_config cfg = {0};
    struct ls_err err = {0};
    CHECK(lock_open(&lk, lock_find("redis-single"), &cfg, &err) < 0); /* no node */
    CHECK(err.msg[0] != '\0');
    lock_close(&lk);
    lock_close(NULL);
}

/* The options tables through the workload loader's own machinery. */
static void test_options(void)
{
    for (size_t i = 0; i < NIMPLS; i++) {
        const struct lock_ops *o = lock_find(all_impls[i]);
        REQUIRE(o != NULL);
        struct rlock_options *opt = calloc(1, o->options_size);
        REQUIRE(opt != NULL);
        opt->gap = -1;
        struct ls_err err = {0};
        CHECKF(opt_fill_defaults(o->options, opt, &err) == 0, "%s: %s", o->name, err.msg);
        CHECK(opt->timeout == 200 * LS_NS_PER_MS);
        char why[128];
        const struct opt_def *timeout = &o->options[0];
        CHECK_STR(timeout->name, "timeout");
        CHECK(opt_parse_text(timeout, opt, "0", why, sizeof(why)) < 0);
        CHECK(opt_parse_text(timeout, opt, "2m", why, sizeof(why)) < 0);
        CHECK(opt_parse_text(timeout, opt, "50ms", why, sizeof(why)) == 0);
        CHECK(opt->timeout == 50 * LS_NS_PER_MS);
        const struct opt_def *gap = o->options[1].name ? &o->options[1] : NULL;
        if (gap) {
            CHECK_STR(gap->name, "gap");
            CHECK(opt->gap == 0);
            CHECK(opt_parse_text(gap, opt, "11s", why, sizeof(why)) < 0);
            CHECK(opt_parse_text(gap, opt, "20ms", why, sizeof(why)) == 0);
            CHECK(opt->gap == 20 * LS_NS_PER_MS);
        } else {
            CHECK(opt->gap == -1);   /* not this implementation's key */
        }
        free(opt);
    }
}

/* ---- per implementation ---- */

static int is_compare_del(const char *impl)
{
    return strcmp(impl, "naive-del") != 0 && strcmp(impl, "naive-no-ttl") != 0;
}

static void basic_one(const char *impl)
{
    admin_simple("FLUSHALL");
    struct tlock a;
    tl_open(&a, impl, 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(a);
    int busted = strcmp(impl, "busted") == 0;
    int no_ttl = strcmp(impl, "naive-no-ttl") == 0;
    struct grant g1, g2, g3, stale;
    int ek;

    grant_init(&g1, 3, "tok-one-00000001");
    CHECKF(acq(&a, &g1, &ek) == LOCK_OK, "%s", impl);
    CHECK(g1.has_fence && g1.fence >= 1);
    CHECK(g1.no_lease == no_ttl);
    if (!no_ttl)
        CHECK(g1.validity_ns == 5 * LS_NS_PER_S);
    char val[64];
    CHECK(admin_get("lockstorm:r3", val, sizeof(val)));
    CHECK_STR(val, "tok-one-00000001");
    long long pttl = admin_int("PTTL %s", "lockstorm:r3");
    if (no_ttl)
        CHECKF(pttl == -1, "%s pttl %lld", impl, pttl);
    else
        CHECKF(pttl > 4000 && pttl <= 5000, "%s pttl %lld", impl, pttl);

    grant_init(&g2, 3, "tok-two-00000002");
    int o2 = acq(&a, &g2, &ek);
    CHECKF(o2 == (busted ? LOCK_OK : LOCK_BUSY), "%s second acquire %d", impl, o2);
    /* Another resource is independent. */
    grant_init(&g3, 4, "tok-res4-0000003");
    CHECK(acq(&a, &g3, &ek) == LOCK_OK);
    CHECK(rel(&a, &g3) == LOCK_OK);

    if (busted) {
        /* g2 overwrote g1: g1's release is stale, g2's is the real one. */
        CHECK(g2.fence > g1.fence);
        CHECK(rel(&a, &g1) == LOCK_NOT_OWNER);
        CHECK(admin_get("lockstorm:r3", val, sizeof(val)));
        CHECK(rel(&a, &g2) == LOCK_OK);
        CHECK(!admin_get("lockstorm:r3", val, sizeof(val)));
    } else if (is_compare_del(impl)) {
        grant_init(&stale, 3, "tok-stale-000009");
        CHECK(rel(&a, &stale) == LOCK_NOT_OWNER);
        CHECK(admin_get("lockstorm:r3", val, sizeof(val)));
        CHECK_STR(val, "tok-one-00000001");
        CHECK(rel(&a, &g1) == LOCK_OK);
        CHECK(!admin_get("lockstorm:r3", val, sizeof(val)));
        CHECK(rel(&a, &g1) == LOCK_NOT_OWNER);
    } else {
        /* The stolen lock: g1's lease ends (simulated by deleting the key),
         * g3 is granted, then g1's late release deletes g3's lock. */
        admin_simple("DEL lockstorm:r3");
        grant_init(&g3, 3, "tok-three-000003");
        CHECK(acq(&a, &g3, &ek) == LOCK_OK);
        CHECK(g3.fence > g1.fence);
        CHECK(rel(&a, &g1) == LOCK_OK);
        CHECKF(!admin_get("lockstorm:r3", val, sizeof(val)), "%s: the other holder's key survived", impl);
        grant_init(&g2, 3, "tok-four-0000004");
        CHECK(acq(&a, &g2, &ek) == LOCK_OK);  /* a third holder while g3 believes it holds */
        CHECK(rel(&a, &g2) == LOCK_OK);
    }

    /* Fences strictly increase across grants. */
    uint64_t last = 0;
    for (int i = 0; i < 5; i++) {
        struct grant g;
        grant_init(&g, 5, "tok-fence-000000");
        g.token[15] = (char)('a' + i);
        CHECK(acq(&a, &g, &ek) == LOCK_OK);
        CHECK(g.has_fence);
        CHECKF(g.fence > last, "%s fence %llu after %llu", impl, (unsigned long long)g.fence,
               (unsigned long long)last);
        last = g.fence;
        CHECK(rel(&a, &g) == LOCK_OK);
    }
    lock_close(&a.lk);

    /* Without fencing: no fence, and the counter is left alone. */
    struct tlock b;
    tl_open(&b, impl, 5 * LS_NS_PER_S, 0, 0, 0);
    REQUIRE_OPEN(b);
    redisReply *r = admin("GET lockstorm:fence:r5");
    long long before = r && r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : -1;
    freeReplyObject(r);
    struct grant g;
    grant_init(&g, 5, "tok-nofence-0000");
    CHECK(acq(&b, &g, &ek) == LOCK_OK);
    CHECK(!g.has_fence);
    CHECK(rel(&b, &g) == LOCK_OK);
    r = admin("GET lockstorm:fence:r5");
    long long after = r && r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : -1;
    freeReplyObject(r);
    CHECK(before == (long long)last && after == before);
    lock_close(&b.lk);
}

static void test_basic(void)
{
    for (size_t i = 0; i < NIMPLS; i++)
        basic_one(all_impls[i]);
}

/* Poll (bounded) until key exists (want 1) or is gone (want 0). */
static int wait_key(const char *key, int want, int64_t bound_ns)
{
    int64_t end = ls_now_ns() + bound_ns;
    for (;;) {
        if ((admin_int("EXISTS %s", key) == 1) == want)
            return 1;
        if (ls_now_ns() >= end)
            return 0;
        ls_sleep_ns(LS_NS_PER_MS);
    }
}

static void test_renew(void)
{
    admin_simple("FLUSHALL");
    struct tlock a;
    tl_open(&a, "redis-single", 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(a);
    struct grant g, other;
    int ek;
    grant_init(&g, 1, "tok-renew-000001");
    CHECK(acq(&a, &g, &ek) == LOCK_OK);
    admin_simple("PEXPIRE lockstorm:r1 1000");
    g.validity_ns = 0;
    CHECK(a.lk.ops->renew(&a.lk, &g, &ek) == LOCK_OK);
    CHECK(g.validity_ns == 5 * LS_NS_PER_S);
    long long pttl = admin_int("PTTL %s", "lockstorm:r1");
    CHECKF(pttl > 4000 && pttl <= 5000, "pttl %lld", pttl);
    grant_init(&other, 1, "tok-other-000002");
    CHECK(a.lk.ops->renew(&a.lk, &other, &ek) == LOCK_NOT_OWNER);
    CHECK(rel(&a, &g) == LOCK_OK);
    lock_close(&a.lk);

    /* After the lease ran out, renew says not-owner. */
    struct tlock s;
    tl_open(&s, "redis-single", 30 * LS_NS_PER_MS, 0, 0, 0);
    REQUIRE_OPEN(s);
    grant_init(&g, 2, "tok-short-000003");
    CHECK(acq(&s, &g, &ek) == LOCK_OK);
    CHECK(wait_key("lockstorm:r2", 0, 2 * LS_NS_PER_S));
    CHECK(s.lk.ops->renew(&s.lk, &g, &ek) == LOCK_NOT_OWNER);
    CHECK(rel(&s, &g) == LOCK_NOT_OWNER);
    lock_close(&s.lk);

    /* ttl below 1ms is refused at init (not for naive-no-ttl, which has none). */
    struct tlock z;
    tl_open(&z, "redis-single", 0, 0, 0, 0);
    CHECK(z.rc == LS_EUSAGE && strstr(z.err.msg, "ttl") != NULL);
    lock_close(&z.lk);
    tl_open(&z, "naive-no-ttl", 0, 0, 0, 0);
    CHECK(z.rc == 0);
    lock_close(&z.lk);
}

static void test_noscript(void)
{
    static const char *const scripted[] = {"redis-single", "naive-del", "busted", "naive-no-ttl"};
    for (size_t i = 0; i < sizeof(scripted) / sizeof(scripted[0]); i++) {
        admin_simple("FLUSHALL");
        struct tlock a;
        tl_open(&a, scripted[i], 5 * LS_NS_PER_S, 1, 0, 0);
        REQUIRE_OPEN(a);
        struct grant g;
        int ek;
        grant_init(&g, 1, "tok-noscript-001");
        CHECK(acq(&a, &g, &ek) == LOCK_OK);
        CHECK(rel(&a, &g) == LOCK_OK);
        admin_simple("SCRIPT FLUSH");
        CHECKF(acq(&a, &g, &ek) == LOCK_OK, "%s after SCRIPT FLUSH: %d", scripted[i], ek);
        admin_simple("SCRIPT FLUSH");
        if (a.lk.ops->renew)
            CHECK(a.lk.ops->renew(&a.lk, &g, &ek) == LOCK_OK);
        admin_simple("SCRIPT FLUSH");
        CHECK(rel(&a, &g) == LOCK_OK);
        CHECK(!wait_key("lockstorm:r1", 1, 0));
        lock_close(&a.lk);
    }
}

/* ---- negative controls' windows, from a second connection ---- */

struct acq_job {
    struct tlock *t;
    struct grant g;
    pthread_barrier_t *bar;
    int out;
    int ek;
};

static void *acq_thread(void *arg)
{
    struct acq_job *j = arg;
    if (j->bar)
        pthread_barrier_wait(j->bar);
    j->out = acq(j->t, &j->g, &j->ek);
    return NULL;
}

static void test_setnx_gap(void)
{
    admin_simple("FLUSHALL");
    struct tlock a;
    tl_open(&a, "naive-setnx-expire", 5 * LS_NS_PER_S, 1, 200 * LS_NS_PER_MS, 0);
    REQUIRE_OPEN(a);
    struct acq_job j = {.t = &a};
    grant_init(&j.g, 6, "tok-gap-00000001");
    pthread_t th;
    int64_t t0 = ls_now_ns();
    int prc = pthread_create(&th, NULL, acq_thread, &j);   /* REQUIRE evaluates twice */
    REQUIRE(prc == 0);
    CHECK(wait_key("lockstorm:r6", 1, LS_NS_PER_S));
    long long pttl = admin_int("PTTL %s", "lockstorm:r6");
    int64_t seen = ls_now_ns() - t0;
    CHECKF(pttl == -1 || seen > 150 * LS_NS_PER_MS, "in the gap the key has PTTL %lld", pttl);
    CHECK(pttl == -1);
    pthread_join(th, NULL);
    CHECK(j.out == LOCK_OK);
    CHECK(ls_now_ns() - t0 >= 200 * LS_NS_PER_MS);
    CHECK(j.g.has_fence && j.g.fence >= 1);
    pttl = admin_int("PTTL %s", "lockstorm:r6");
    CHECKF(pttl > 4000 && pttl <= 5000, "after the gap PTTL %lld", pttl);
    CHECK(rel(&a, &j.g) == LOCK_OK);
    lock_close(&a.lk);
}

static void test_get_set_race(void)
{
    admin_simple("FLUSHALL");
    struct tlock a, b;
    tl_open(&a, "naive-get-set", 5 * LS_NS_PER_S, 1, 50 * LS_NS_PER_MS, 0);
    tl_open(&b, "naive-get-set", 5 * LS_NS_PER_S, 1, 50 * LS_NS_PER_MS, 0);
    REQUIRE_OPEN(a);
    REQUIRE_OPEN(b);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    struct acq_job ja = {.t = &a, .bar = &bar}, jb = {.t = &b, .bar = &bar};
    grant_init(&ja.g, 8, "tok-race-a000001");
    grant_init(&jb.g, 8, "tok-race-b000002");
    pthread_t ta, tb;
    int pa = pthread_create(&ta, NULL, acq_thread, &ja);   /* REQUIRE evaluates twice */
    int pb = pa == 0 ? pthread_create(&tb, NULL, acq_thread, &jb) : -1;
    if (pa == 0 && pb != 0) {
        pthread_barrier_wait(&bar);   /* unblock ta */
        pthread_join(ta, NULL);
    }
    REQUIRE(pa == 0 && pb == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&bar);
    CHECKF(ja.out == LOCK_OK && jb.out == LOCK_OK, "both granted: %d %d", ja.out, jb.out);
    CHECK(ja.g.fence != jb.g.fence);
    /* The last SET won; the other holder's release is not-owner. */
    char val[64];
    CHECK(admin_get("lockstorm:r8", val, sizeof(val)));
    struct grant *winner = strcmp(val, ja.g.token) == 0 ? &ja.g : &jb.g;
    struct grant *loser = winner == &ja.g ? &jb.g : &ja.g;
    CHECK(rel(&a, loser) == LOCK_NOT_OWNER);
    CHECK(rel(&b, winner) == LOCK_OK);
    /* Without a gap, a held key is seen: busy. */
    struct grant g;
    int ek;
    grant_init(&g, 9, "tok-held-0000001");
    CHECK(acq(&a, &g, &ek) == LOCK_OK);
    grant_init(&g, 9, "tok-held-0000002");
    CHECK(acq(&b, &g, &ek) == LOCK_BUSY);
    lock_close(&a.lk);
    lock_close(&b.lk);
}

/* ---- failures: a paused node, a stopped node ---- */

static void test_unknown(void)
{
    admin_simple("FLUSHALL");
    const int64_t timeout = 200 * LS_NS_PER_MS;
    struct tlock a;
    tl_open(&a, "redis-single", 5 * LS_NS_PER_S, 1, 0, timeout);
    REQUIRE_OPEN(a);
    struct grant g;
    int ek;
    grant_init(&g, 1, "tok-warm-0000001");
    CHECK(acq(&a, &g, &ek) == LOCK_OK);   /* connected, scripts loaded */
    CHECK(rel(&a, &g) == LOCK_OK);

    int krc = kill(node.pid, SIGSTOP);
    REQUIRE(krc == 0);
    CHECK(proc_wait_state(node.pid, 'T', 0, 2 * LS_NS_PER_S) == 0);
    grant_init(&g, 1, "tok-paused-00001");
    int64_t t0 = ls_now_ns();
    int o = acq(&a, &g, &ek);
    int64_t took = ls_now_ns() - t0;
    CHECKF(o == LOCK_UNKNOWN, "acquire on a paused node: %d", o);
    CHECK(ek == EVE_TIMEOUT);
    CHECKF(took >= timeout - 20 * LS_NS_PER_MS && took < timeout + 300 * LS_NS_PER_MS,
           "took %lld ms", (long long)(took / LS_NS_PER_MS));
    /* A fresh connection to a paused node: the kernel accepts it, the
     * handshake times out, nothing of the acquire was sent. */
    struct tlock b;
    tl_open(&b, "redis-single", 5 * LS_NS_PER_S, 1, 0, timeout);
    struct grant gb;
    grant_init(&gb, 2, "tok-fresh-000001");
    o = b.rc == 0 ? acq(&b, &gb, &ek) : -1;
    CHECKF(b.rc == 0, "open: %s", b.err.msg);
    CHECKF(o == LOCK_FAIL && ek == EVE_TIMEOUT, "fresh connection to a paused node: %d/%d", o, ek);
    kill(node.pid, SIGCONT);
    lock_close(&b.lk);

    /* The unknown acquire really ran once the node woke: the outcome was
     * unknown, not failed. The lock reconnects by itself. */
    CHECK(wait_key("lockstorm:r1", 1, 2 * LS_NS_PER_S));
    struct grant g2;
    grant_init(&g2, 1, "tok-after-000001");
    CHECK(acq(&a, &g2, &ek) == LOCK_BUSY);
    CHECK(rel(&a, &g) == LOCK_OK);
    CHECK(acq(&a, &g2, &ek) == LOCK_OK);
    CHECK(g2.fence > 0);
    CHECK(!wait_key("lockstorm:r2", 1, 0));
    lock_close(&a.lk);
}

static void test_refused(void)
{
    admin_simple("FLUSHALL");
    struct tlock a;
    tl_open(&a, "redis-single", 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(a);
    struct grant g;
    int ek;
    grant_init(&g, 1, "tok-refused-0001");
    CHECK(acq(&a, &g, &ek) == LOCK_OK);
    node_stop(&node);
    for (size_t i = 0; i < NIMPLS; i++) {
        struct tlock t;
        tl_open(&t, all_impls[i], 5 * LS_NS_PER_S, 1, 0, 0);  /* a down node is no init error */
        CHECKF(t.rc == 0, "%s: open with the node down: %s", all_impls[i], t.err.msg);
        if (t.rc != 0)
            continue;
        grant_init(&g, 1, "tok-refused-0002");
        int o = acq(&t, &g, &ek);
        CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "%s: %d/%d", all_impls[i], o, ek);
        ek = EVE_NONE;
        o = t.lk.ops->release(&t.lk, &g, &ek);
        CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "%s release: %d/%d", all_impls[i], o, ek);
        lock_close(&t.lk);
    }
    /* An established connection whose node went away: the next call may
     * already have been written, so it is unknown (or, once dropped, fail). */
    int o = acq(&a, &g, &ek);
    CHECKF(o == LOCK_UNKNOWN || o == LOCK_FAIL, "%d", o);
    o = acq(&a, &g, &ek);
    CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "%d/%d", o, ek);
    lock_close(&a.lk);
}

/* Contract: (re)open the admin connection to the fixture node; 0 or -1. */
static int admin_connect(void)
{
    if (adm)
        redisFree(adm);
    struct timeval tv = {2, 0};
    adm = node_connect(&node, tv);
    if (!adm || adm->err)
        return -1;
    redisSetTimeout(adm, tv);
    return 0;
}

/* The node refuses a client without the password, and a lock with a wrong
 * one fails to connect (nothing sent), saying AUTH. */
static void test_password(void)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout(node.host, node.port, tv);
    REQUIRE(c && !c->err);
    redisReply *r = redisCommand(c, "GET lockstorm:r0");
    CHECKF(r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0, "%s",
           r && r->str ? r->str : "no reply");
    freeReplyObject(r);
    redisFree(c);
    /* (every other test here authenticates: the fixture node has a password) */
    struct tlock t;
    tl_open(&t, "redis-single", 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(t);
    snprintf(((struct rsingle *)t.lk.ctx)->conn.password, LS_PASSWORD_MAX, "wrong");
    rconn_close(&((struct rsingle *)t.lk.ctx)->conn);
    struct grant g;
    int ek;
    grant_init(&g, 2, "tok-password-02");
    int o = acq(&t, &g, &ek);
    CHECKF(o == LOCK_FAIL && ek == EVE_CONN, "wrong password: %d/%d", o, ek);
    CHECKF(strstr(((struct rsingle *)t.lk.ctx)->conn.errstr, "AUTH") != NULL, "%s",
           ((struct rsingle *)t.lk.ctx)->conn.errstr);
    lock_close(&t.lk);
}

/* A node restart breaks the lock's idle connection: the release after it
 * notices (rconn_stale), reconnects and reaches the new node, instead of
 * failing once with an unknown outcome. */
static void test_restart(void)
{
    struct tlock t;
    tl_open(&t, "redis-single", 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(t);
    struct rconn *conn = &((struct rsingle *)t.lk.ctx)->conn;
    struct grant g;
    int ek;
    grant_init(&g, 3, "tok-restart-0001");
    CHECK(acq(&t, &g, &ek) == LOCK_OK);
    uint64_t connects = conn->connects;
    CHECK(!rconn_stale(conn));
    struct ls_err err = {0};
    REQUIRE(node_kill(&node, SIGKILL, 5 * LS_NS_PER_S, NULL, &err) == 0);
    int64_t until = ls_now_ns() + 5 * LS_NS_PER_S; /* the FIN of the dead node, bounded */
    while (!rconn_stale(conn) && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    CHECK(rconn_stale(conn));
    int rc = node_restart(&node, 10 * LS_NS_PER_S, &err);
    REQUIRE(rc == 0);
    REQUIRE(admin_connect() == 0);
    /* no persistence: the grant is gone with the old process, so the
     * release reaches the new node and finds nothing of it */
    int o = rel(&t, &g);
    CHECKF(o == LOCK_NOT_OWNER, "release after a restart: %d (%s)", o, conn->errstr);
    CHECKF(conn->connects == connects + 1, "%llu connects, wanted %llu",
           (unsigned long long)conn->connects, (unsigned long long)connects + 1);
    grant_init(&g, 3, "tok-restart-0002");
    CHECK(acq(&t, &g, &ek) == LOCK_OK);
    CHECK(rel(&t, &g) == LOCK_OK);
    lock_close(&t.lk);
}

/* Commands are framed by hand (locks/redis_conn.c frame) up to 1 KiB and
 * by hiredis beyond: both reach the node byte for byte (binary values with
 * CR LF inside, empty arguments, a value of 3000 bytes). */
static void test_framing(void)
{
    struct tlock t;
    tl_open(&t, "redis-single", 5 * LS_NS_PER_S, 1, 0, 0);
    REQUIRE_OPEN(t);
    struct rconn *conn = &((struct rsingle *)t.lk.ctx)->conn;
    char big[3000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i % 251);
    const char small[] = "a\r\nb\0c";
    const char *vals[3] = {small, "", big};
    const size_t lens[3] = {sizeof(small) - 1, 0, sizeof(big)};
    for (int k = 0; k < 3; k++) {
        const char *set[3] = {"SET", "lockstorm:test-framing", vals[k]};
        size_t setl[3] = {3, 22, lens[k]};
        redisReply *r = NULL;
        int ek = 0;
        CHECKF(rconn_command(conn, 3, set, setl, &r, &ek) == LOCK_OK && r &&
                   r->type == REDIS_REPLY_STATUS,
               "SET #%d: %s", k, conn->errstr);
        freeReplyObject(r);
        const char *get[2] = {"GET", "lockstorm:test-framing"};
        size_t getl[2] = {3, 22};
        r = NULL;
        CHECKF(rconn_command(conn, 2, get, getl, &r, &ek) == LOCK_OK && r &&
                   r->type == REDIS_REPLY_STRING && r->len == lens[k] &&
                   memcmp(r->str, vals[k], lens[k]) == 0,
               "GET #%d: %zu bytes back, %zu sent", k, r ? r->len : 0, lens[k]);
        freeReplyObject(r);
    }
    const char *del[2] = {"DEL", "lockstorm:test-framing"};
    size_t dell[2] = {3, 22};
    redisReply *r = NULL;
    int ek = 0;
    CHECK(rconn_command(conn, 2, del, dell, &r, &ek) == LOCK_OK);
    freeReplyObject(r);
    lock_close(&t.lk);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char *dir = t_tmpdir();
    struct ls_err err = {0};
    if (ls_password_new(node.password, sizeof(node.password), &err) < 0 ||
        node_start(&node, dir, "locks", PERSIST_NONE, &err) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err.msg);
        t_rmdir(dir);
        free(dir);
        return 1;
    }
    if (admin_connect() < 0) {
        fprintf(stderr, "admin connection failed\n");
        node_stop(&node);
        t_rmdir(dir);
        free(dir);
        return 1;
    }

    RUN(test_registry);
    RUN(test_options);
    RUN(test_basic);
    RUN(test_renew);
    RUN(test_noscript);
    RUN(test_setnx_gap);
    RUN(test_get_set_race);
    RUN(test_unknown);
    RUN(test_password);
    RUN(test_framing);
    RUN(test_restart);
    RUN(test_refused);

    redisFree(adm);
    node_stop(&node);
    t_rmdir(dir);
    free(dir);
    return t_finish();
}
