/*
 * test_proxy.c: the TCP proxy (faults/proxy.h) in front of a real
 * redis-server, with real sockets: idle overhead, bytes intact and in order
 * under latency + jitter, measured delay against the configured one,
 * blackhole (timeout, connection kept), hold (late reply after heal), reset
 * (existing connections reset, new ones refused until heal), one link cut
 * leaving its neighbours alone, bandwidth, slicer, backpressure, rule
 * composition, and a clean stop. Two proxy "nodes" point at the same
 * redis-server so links differ only by listener. Also: a node with a
 * password, reached by a client that sends none, through a proxy that
 * authenticates for it (its AUTH and +OK never reach the client or the
 * byte counts; a refused AUTH resets the connection and is logged).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <hiredis/hiredis.h>

#include "faults/proxy.h"
#include "backends/cluster.h"
#include "model/options.h"
#include "util/proc.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "tests/unit/testing.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define NW 2
#define NN 2

static struct node_proc node;
static struct proxy *px;
static redisContext *adm;   /* direct to the node */
static int next_id = 100;
static char *tmpdir;

static redisContext *conn_to(const char *host, int port, int64_t timeout_ms)
{
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c && !c->err)
        redisSetTimeout(c, tv);
    return c;
}

/* A hiredis connection over link (w, n). Caller frees with redisFree. */
static redisContext *link_conn(int w, int n, int64_t timeout_ms)
{
    const struct lock_node *a = &proxy_worker_nodes(px, w)[n];
    return conn_to(a->host, a->port, timeout_ms);
}

static int ping_ok(redisContext *c)
{
    if (!c || c->err)
        return 0;
    redisReply *r = redisCommand(c, "PING");
    int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
    freeReplyObject(r);
    return ok;
}

/* Put rule on link (w, n) (w < 0: every link) in dirs; returns the fault id. */
static int set_rule(unsigned what, const struct proxy_rule *rule, int w, int n, unsigned dirs,
                    struct proxy_ack *ack)
{
    uint8_t sel[NW * NN];
    for (int i = 0; i < NW * NN; i++)
        sel[i] = (uint8_t)((w < 0 || i == w * NN + n) ? dirs : 0);
    struct ls_err err = {0};
    int id = next_id++;
    int rc = proxy_fault_set(px, id, what, rule, sel, ack, &err);
    CHECKF(rc == 0, "proxy_fault_set: %s", err.msg);
    return id;
}

static void clear_rule(int id)
{
    struct ls_err err = {0};
    int rc = proxy_fault_clear(px, id, &err);
    CHECKF(rc == 0, "proxy_fault_clear: %s", err.msg);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median PING round trip over c, ns. */
static int64_t ping_median(redisContext *c, int n)
{
    int64_t *t = calloc((size_t)n, sizeof(*t));
    for (int i = 0; i < n; i++) {
        int64_t t0 = ls_now_ns();
        if (!ping_ok(c)) {
            free(t);
            return -1;
        }
        t[i] = ls_now_ns() - t0;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_i64);
    int64_t m = t[n / 2];
    free(t);
    return m;
}

static int64_t direct_median;

static void test_idle_overhead(void)
{
    redisContext *d = conn_to(node.host, node.port, 2000);
    redisContext *p = link_conn(0, 0, 2000);
    REQUIRE(ping_ok(d) && ping_ok(p));
    /* interleave the two so both see the same machine load */
    int64_t md = 0, mp = 0;
    for (int round = 0; round < 3; round++) {
        md += ping_median(d, 500);
        mp += ping_median(p, 500);
    }
    md /= 3;
    mp /= 3;
    direct_median = md;
    fprintf(stderr, "idle PING p50: direct %.1f us, through the proxy %.1f us (+%.1f us)\n",
            (double)md / 1e3, (double)mp / 1e3, (double)(mp - md) / 1e3);
    CHECKF(md > 0 && mp > 0, "pings failed");
    CHECKF(mp - md < 2 * LS_NS_PER_MS, "idle proxy adds %.3f ms", (double)(mp - md) / 1e6);
    struct proxy_link_stats st;
    proxy_link_stats(px, 0, 0, &st);
    CHECK(st.accepted >= 1 && st.open >= 1);
    CHECK(st.bytes[PROXY_TO_NODE] > 0 && st.bytes[PROXY_FROM_NODE] > 0);
    CHECK(st.writes[PROXY_TO_NODE] > 0 && st.writes[PROXY_TO_NODE] < st.bytes[PROXY_TO_NODE]);
    redisFree(d);
    redisFree(p);
}

/* Median redis-single acquire (each followed by its release) at node n, ns. */
static int64_t acquire_median(const struct lock_node *n, int rounds)
{
    const struct lock_ops *ops = lock_find("redis-single");
    struct ls_err err = {0};
    void *opt = calloc(1, ops->options_size ? ops->options_size : 1);
    if (!opt || opt_fill_defaults(ops->options, opt, &err) < 0) {
        free(opt);
        return -1;
    }
    struct lock_config cfg = {.nodes = n, .nnodes = 1, .worker = 3, .ttl_ns = 5 * LS_NS_PER_S,
                              .fencing = 1, .timeout_ns = LS_NS_PER_S, .options = opt, .seed = 1};
    struct lock lk;
    int64_t m = -1;
    int64_t *t = calloc((size_t)rounds, sizeof(*t));
    if (t && lock_open(&lk, ops, &cfg, &err) == 0) {
        int i = 0;
        for (; i < rounds; i++) {
            struct grant g;
            memset(&g, 0, sizeof(g));
            g.res = 9;
            snprintf(g.token, sizeof(g.token), "px-bench-%08d", i);
            int ek = 0;
            int64_t t0 = ls_now_ns();
            if (ops->acquire(&lk, &g, &ek) != LOCK_OK)
                break;
            t[i] = ls_now_ns() - t0;
            ops->release(&lk, &g, &ek);
        }
        if (i == rounds) {
            qsort(t, (size_t)rounds, sizeof(*t), cmp_i64);
            m = t[rounds / 2];
        }
    }
    lock_close(&lk);
    free(t);
    opt_free(ops->options, opt);
    free(opt);
    return m;
}

/* The benchmark: acquire p50 through the idle proxy vs direct. */
static void test_idle_acquire(void)
{
    struct lock_node direct = {0};
    snprintf(direct.host, sizeof(direct.host), "%s", node.host);
    direct.port = node.port;
    int64_t md = 0, mp = 0;
    for (int round = 0; round < 3; round++) {
        md += acquire_median(&direct, 300);
        mp += acquire_median(&proxy_worker_nodes(px, 1)[0], 300);
    }
    md /= 3;
    mp /= 3;
    fprintf(stderr, "idle redis-single acquire p50: direct %.1f us, through the proxy %.1f us (+%.1f us)\n",
            (double)md / 1e3, (double)mp / 1e3, (double)(mp - md) / 1e3);
    CHECK(md > 0 && mp > 0);
    CHECKF(mp - md < 2 * LS_NS_PER_MS, "idle proxy adds %.3f ms to acquire", (double)(mp - md) / 1e6);
}

/* Pipelined SET/GET pairs with random payloads; every reply must match. */
static int pipeline_intact(redisContext *c, int pairs, struct rng *rng, int max_len)
{
    int bad = 0;
    char *val = malloc((size_t)max_len + 1);
    size_t *lens = calloc((size_t)pairs, sizeof(size_t));
    uint64_t *seeds = calloc((size_t)pairs, sizeof(uint64_t));
    for (int i = 0; i < pairs; i++) {
        lens[i] = (size_t)rng_range(rng, 0, max_len);
        seeds[i] = rng_next(rng);
        struct rng vr;
        rng_seed(&vr, seeds[i], 1);
        for (size_t k = 0; k < lens[i]; k++)
            val[k] = (char)rng_below(&vr, 256);
        redisAppendCommand(c, "SET px:k%d %b", i, val, lens[i]);
        redisAppendCommand(c, "GET px:k%d", i);
    }
    for (int i = 0; i < pairs && !bad; i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK || !r || r->type != REDIS_REPLY_STATUS) {
            bad = 1;
            fprintf(stderr, "pair %d: SET reply missing (%s)\n", i, c->errstr);
        }
        freeReplyObject(r);
        r = NULL;
        if (bad || redisGetReply(c, (void **)&r) != REDIS_OK || !r ||
            r->type != REDIS_REPLY_STRING || r->len != lens[i]) {
            if (!bad)
                fprintf(stderr, "pair %d: GET reply wrong (%s)\n", i, c->errstr);
            bad = 1;
        } else {
            struct rng vr;
            rng_seed(&vr, seeds[i], 1);
            for (size_t k = 0; k < lens[i]; k++)
                if ((unsigned char)r->str[k] != (unsigned char)rng_below(&vr, 256)) {
                    fprintf(stderr, "pair %d: byte %zu differs\n", i, k);
                    bad = 1;
                    break;
                }
        }
        freeReplyObject(r);
    }
    free(val);
    free(lens);
    free(seeds);
    return !bad;
}

static void test_latency_intact(void)
{
    struct proxy_rule rule = {.delay_ns = 5 * LS_NS_PER_MS, .jitter_ns = 10 * LS_NS_PER_MS};
    redisContext *c = link_conn(0, 0, 20000);
    REQUIRE(ping_ok(c));
    int id = set_rule(PROXY_SET_LATENCY, &rule, 0, 0, PROXY_BOTH, NULL);
    struct rng rng;
    rng_seed(&rng, 42, 7);
    CHECK(pipeline_intact(c, 2000, &rng, 3000));
    clear_rule(id);
    CHECK(ping_ok(c));
    redisFree(c);
}

static void test_latency_measured(void)
{
    const int64_t D = 30 * LS_NS_PER_MS, J = 20 * LS_NS_PER_MS, TOL = 20 * LS_NS_PER_MS;
    redisContext *c = link_conn(0, 0, 5000);
    REQUIRE(ping_ok(c));
    int64_t base = ping_median(c, 50);
    struct proxy_rule rule = {.delay_ns = D, .jitter_ns = J};
    struct proxy_ack ack;
    int id = set_rule(PROXY_SET_LATENCY, &rule, 0, 0, PROXY_DIR_BIT(PROXY_TO_NODE), &ack);
    CHECK(ack.generation > 0 && ack.waited_ns < PROXY_ACK_TIMEOUT_NS);
    struct proxy_rule now;
    proxy_rule_of(px, 0, 0, PROXY_TO_NODE, &now);
    CHECK(now.delay_ns == D && now.jitter_ns == J);
    proxy_rule_of(px, 0, 0, PROXY_FROM_NODE, &now);
    CHECK(now.delay_ns == 0);
    int64_t m = ping_median(c, 15) - base;
    fprintf(stderr, "latency to-node delay 30ms jitter 20ms: PING +%.1f ms\n", (double)m / 1e6);
    CHECKF(m >= D && m <= D + J + TOL, "extra %.1f ms outside [30, 70] ms", (double)m / 1e6);
    /* a link without the rule is not slowed */
    redisContext *o = link_conn(1, 0, 5000);
    int64_t mo = ping_median(o, 15);
    CHECKF(mo < D, "link (1,0) slowed to %.1f ms", (double)mo / 1e6);
    redisFree(o);
    clear_rule(id);

    /* both directions: a round trip crosses the delay twice */
    struct proxy_rule both = {.delay_ns = D};
    id = set_rule(PROXY_SET_LATENCY, &both, 0, 0, PROXY_BOTH, NULL);
    m = ping_median(c, 9) - base;
    fprintf(stderr, "latency both delay 30ms: PING +%.1f ms\n", (double)m / 1e6);
    CHECKF(m >= 2 * D && m <= 2 * D + TOL, "extra %.1f ms outside [60, 80] ms", (double)m / 1e6);

    /* delays do not accumulate: 50 pipelined PINGs all come back after
     * about one round trip, not 50 */
    int64_t t0 = ls_now_ns();
    for (int i = 0; i < 50; i++) {
        redisAppendCommand(c, "PING");
        int done = 0;
        while (!done)
            if (redisBufferWrite(c, &done) != REDIS_OK)
                break;
        ls_sleep_ns(2 * LS_NS_PER_MS); /* separate chunks */
    }
    int ok = 1;
    for (int i = 0; i < 50; i++) {
        redisReply *r = NULL;
        ok &= redisGetReply(c, (void **)&r) == REDIS_OK && r && r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
    }
    int64_t el = ls_now_ns() - t0;
    CHECK(ok);
    CHECKF(el < 100 * 2 * LS_NS_PER_MS + 2 * D + 200 * LS_NS_PER_MS,
           "50 pipelined pings took %.0f ms", (double)el / 1e6);
    CHECKF(el < 50 * D, "delays accumulated: %.0f ms", (double)el / 1e6);
    clear_rule(id);
    m = ping_median(c, 15);
    CHECKF(m < D, "after the rule was cleared PING takes %.1f ms", (double)m / 1e6);
    redisFree(c);
}

/* A raw TCP connection to link (w, n); -1 on failure. */
static int raw_conn(int w, int n)
{
    const struct lock_node *a = &proxy_worker_nodes(px, w)[n];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)a->port)};
    inet_pton(AF_INET, a->host, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Wait up to ms for fd to become readable: 1 data, 0 EOF, -1 error/reset,
 * -2 nothing within ms. */
static int raw_wait(int fd, int ms)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, ms) <= 0)
        return -2;
    char b[256];
    ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
    return n > 0 ? 1 : n == 0 ? 0 : -1;
}

static void test_blackhole(void)
{
    redisContext *c = link_conn(0, 0, 300);
    int raw = raw_conn(0, 0);
    REQUIRE(ping_ok(c) && raw >= 0);
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    struct proxy_rule rule = {.partition = PROXY_PART_BLACKHOLE};
    int id = set_rule(PROXY_SET_PARTITION, &rule, 0, 0, PROXY_BOTH, NULL);
    int64_t t0 = ls_now_ns();
    redisReply *r = redisCommand(c, "SET px:bh 1");
    int64_t el = ls_now_ns() - t0;
    CHECKF(r == NULL && c->err, "blackholed SET got a reply");
    CHECKF(el >= 250 * LS_NS_PER_MS, "timed out after %.0f ms only", (double)el / 1e6);
    freeReplyObject(r);
    /* the connection stays open: neither data nor EOF nor reset */
    CHECK(send(raw, "PING\r\n", 6, MSG_NOSIGNAL) == 6);
    CHECK(raw_wait(raw, 300) == -2);
    proxy_link_stats(px, 0, 0, &after);
    CHECK(after.dropped[PROXY_TO_NODE] > before.dropped[PROXY_TO_NODE]);
    CHECK(after.open >= 2);
    /* nothing reached the node */
    redisReply *g = redisCommand(adm, "EXISTS px:bh");
    CHECK(g && g->type == REDIS_REPLY_INTEGER && g->integer == 0);
    freeReplyObject(g);
    /* the same node through another link works */
    redisContext *o = link_conn(1, 0, 1000);
    CHECK(ping_ok(o));
    redisFree(o);
    clear_rule(id);
    /* at heal, a stream that lost bytes is reset (a real network never
     * delivers a stream with a hole in it), and new connections work */
    int rw = raw_wait(raw, 2000);
    CHECKF(rw == -1 || rw == 0, "a connection that lost bytes was not reset at heal (%d)", rw);
    redisContext *n = link_conn(0, 0, 1000);
    CHECK(ping_ok(n));
    redisFree(n);
    redisFree(c);
    close(raw);
}

static void test_hold(void)
{
    redisContext *c = link_conn(0, 0, 3000);
    REQUIRE(ping_ok(c));
    redisReply *z = redisCommand(adm, "DEL px:hold");
    freeReplyObject(z);
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    struct proxy_rule rule = {.partition = PROXY_PART_HOLD};
    int id = set_rule(PROXY_SET_PARTITION, &rule, 0, 0, PROXY_BOTH, NULL);
    redisAppendCommand(c, "SET px:hold late");
    int done = 0;
    while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK)
            break;
    /* held: no reply, and the node has not seen the command */
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    CHECK(poll(&pf, 1, 300) == 0);
    redisReply *g = redisCommand(adm, "EXISTS px:hold");
    CHECK(g && g->type == REDIS_REPLY_INTEGER && g->integer == 0);
    freeReplyObject(g);
    int64_t t_heal = ls_now_ns();
    clear_rule(id);
    redisReply *r = NULL;
    CHECK(redisGetReply(c, (void **)&r) == REDIS_OK && r && r->type == REDIS_REPLY_STATUS);
    int64_t el = ls_now_ns() - t_heal;
    CHECKF(el < 500 * LS_NS_PER_MS, "late reply took %.0f ms after heal", (double)el / 1e6);
    freeReplyObject(r);
    proxy_link_stats(px, 0, 0, &after);
    CHECK(after.dropped[PROXY_TO_NODE] == before.dropped[PROXY_TO_NODE]); /* hold drops nothing */
    g = redisCommand(adm, "GET px:hold");
    CHECK(g && g->type == REDIS_REPLY_STRING && strcmp(g->str, "late") == 0);
    freeReplyObject(g);
    CHECK(ping_ok(c));
    redisFree(c);
}

static void test_reset(void)
{
    redisContext *a = link_conn(0, 0, 1000);
    redisContext *b = link_conn(0, 0, 1000);
    redisContext *other = link_conn(1, 0, 1000);
    REQUIRE(ping_ok(a) && ping_ok(b) && ping_ok(other));
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    struct proxy_rule rule = {.partition = PROXY_PART_RESET};
    struct proxy_ack ack;
    int id = set_rule(PROXY_SET_PARTITION, &rule, 0, 0, PROXY_BOTH, &ack);
    CHECKF(ack.resets >= 2, "ack reports %llu connections reset", (unsigned long long)ack.resets);
    CHECK(!ping_ok(a));
    CHECK(a->err != 0);
    /* new connections are accepted and reset */
    for (int i = 0; i < 3; i++) {
        redisContext *n = link_conn(0, 0, 1000);
        CHECK(!ping_ok(n));
        if (n)
            redisFree(n);
    }
    int raw = raw_conn(0, 0);
    if (raw >= 0) {
        CHECK(raw_wait(raw, 1000) == -1 || raw_wait(raw, 10) == 0);
        close(raw);
    }
    proxy_link_stats(px, 0, 0, &after);
    CHECK(after.resets >= before.resets + 5);
    CHECK(after.open == 0);
    /* the neighbour link kept its connection */
    CHECK(ping_ok(other));
    clear_rule(id);
    redisContext *n = link_conn(0, 0, 1000);
    CHECK(ping_ok(n));
    redisFree(n);
    redisFree(a);
    redisFree(b);
    redisFree(other);
}

/* Worker 0 cut from node 1: worker 1's link to node 1 and worker 0's link
 * to node 0 still work. */
static void test_partition_isolated(void)
{
    redisContext *c01 = link_conn(0, 1, 300), *c11 = link_conn(1, 1, 1000),
                 *c00 = link_conn(0, 0, 1000);
    REQUIRE(ping_ok(c01) && ping_ok(c11) && ping_ok(c00));
    struct proxy_rule rule = {.partition = PROXY_PART_BLACKHOLE};
    int id = set_rule(PROXY_SET_PARTITION, &rule, 0, 1, PROXY_BOTH, NULL);
    CHECK(!ping_ok(c01));
    CHECK(ping_ok(c11));
    CHECK(ping_ok(c00));
    struct proxy_rule r;
    proxy_rule_of(px, 1, 1, PROXY_TO_NODE, &r);
    CHECK(r.partition == PROXY_PART_NONE);
    proxy_rule_of(px, 0, 1, PROXY_FROM_NODE, &r);
    CHECK(r.partition == PROXY_PART_BLACKHOLE);
    clear_rule(id);
    redisFree(c01);
    redisFree(c11);
    redisFree(c00);
}

static void test_bandwidth(void)
{
    const int64_t rate = 200 * 1000;   /* bytes/s */
    const size_t size = 100 * 1000;
    char *val = malloc(size);
    memset(val, 'b', size);
    redisContext *c = link_conn(0, 0, 10000);
    REQUIRE(ping_ok(c));
    redisReply *r = redisCommand(c, "SET px:big %b", val, size);
    freeReplyObject(r);
    int64_t t0 = ls_now_ns();
    r = redisCommand(c, "GET px:big");
    int64_t fast = ls_now_ns() - t0;
    CHECK(r && r->type == REDIS_REPLY_STRING && r->len == size);
    freeReplyObject(r);
    struct proxy_rule rule = {.rate = rate};
    int id = set_rule(PROXY_SET_RATE, &rule, 0, 0, PROXY_DIR_BIT(PROXY_FROM_NODE), NULL);
    t0 = ls_now_ns();
    r = redisCommand(c, "GET px:big");
    int64_t slow = ls_now_ns() - t0;
    CHECK(r && r->type == REDIS_REPLY_STRING && r->len == size &&
          memcmp(r->str, val, size) == 0);
    freeReplyObject(r);
    /* 100 kB at 200 kB/s is 0.5 s; the 20 ms burst takes 4 kB off */
    fprintf(stderr, "bandwidth 200kB/s: GET 100kB %.0f ms (unlimited %.1f ms)\n",
            (double)slow / 1e6, (double)fast / 1e6);
    CHECKF(slow >= 400 * LS_NS_PER_MS && slow < 2 * LS_NS_PER_S, "took %.0f ms", (double)slow / 1e6);
    clear_rule(id);
    free(val);
    redisFree(c);
}

static void test_slicer(void)
{
    redisContext *c = link_conn(0, 0, 20000);
    REQUIRE(ping_ok(c));
    struct proxy_rule rule = {.slice = 3};
    int id = set_rule(PROXY_SET_SLICE, &rule, 0, 0, PROXY_BOTH, NULL);
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    struct rng rng;
    rng_seed(&rng, 9, 9);
    CHECK(pipeline_intact(c, 200, &rng, 300));
    proxy_link_stats(px, 0, 0, &after);
    for (int d = 0; d < 2; d++) {
        uint64_t bytes = after.bytes[d] - before.bytes[d], writes = after.writes[d] - before.writes[d];
        CHECKF(bytes > 1000 && writes >= bytes / 3, "dir %d: %llu bytes in %llu writes", d,
               (unsigned long long)bytes, (unsigned long long)writes);
    }
    clear_rule(id);
    /* with a gap the receiver sees the pieces one by one; still intact */
    struct proxy_rule gap = {.slice = 2, .gap_ns = 200 * LS_NS_PER_US};
    id = set_rule(PROXY_SET_SLICE, &gap, 0, 0, PROXY_BOTH, NULL);
    CHECK(pipeline_intact(c, 10, &rng, 40));
    clear_rule(id);
    redisFree(c);
}

/* Replies held past the 4 MiB buffer limit: the proxy stops reading from
 * the node (backpressure) and resumes after the heal; all replies intact. */
static void test_backpressure(void)
{
    const size_t size = 1024 * 1024;
    char *val = malloc(size);
    for (size_t i = 0; i < size; i++)
        val[i] = (char)('a' + i % 26);
    redisContext *c = link_conn(0, 0, 10000);
    REQUIRE(ping_ok(c));
    redisReply *r = redisCommand(c, "SET px:mb %b", val, size);
    freeReplyObject(r);
    struct proxy_rule rule = {.partition = PROXY_PART_HOLD};
    int id = set_rule(PROXY_SET_PARTITION, &rule, 0, 0, PROXY_DIR_BIT(PROXY_FROM_NODE), NULL);
    for (int i = 0; i < 10; i++)
        redisAppendCommand(c, "GET px:mb");
    int done = 0;
    while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK)
            break;
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    CHECK(poll(&pf, 1, 300) == 0);
    clear_rule(id);
    int ok = 1;
    for (int i = 0; i < 10; i++) {
        r = NULL;
        ok &= redisGetReply(c, (void **)&r) == REDIS_OK && r && r->type == REDIS_REPLY_STRING &&
              r->len == size && memcmp(r->str, val, size) == 0;
        freeReplyObject(r);
    }
    CHECK(ok);
    free(val);
    redisFree(c);
}

/* Overlapping faults on one link compose; clearing one leaves the other. */
static void test_compose(void)
{
    struct proxy_rule lat = {.delay_ns = 10 * LS_NS_PER_MS};
    struct proxy_rule lat2 = {.delay_ns = 20 * LS_NS_PER_MS, .jitter_ns = 1};
    struct proxy_rule part = {.partition = PROXY_PART_HOLD};
    struct proxy_rule bh = {.partition = PROXY_PART_BLACKHOLE};
    int a = set_rule(PROXY_SET_LATENCY, &lat, 1, 1, PROXY_BOTH, NULL);
    int b = set_rule(PROXY_SET_LATENCY, &lat2, 1, 1, PROXY_DIR_BIT(PROXY_TO_NODE), NULL);
    int c = set_rule(PROXY_SET_PARTITION, &part, 1, 1, PROXY_BOTH, NULL);
    int d = set_rule(PROXY_SET_PARTITION, &bh, -1, 0, PROXY_BOTH, NULL);
    struct proxy_rule r;
    proxy_rule_of(px, 1, 1, PROXY_TO_NODE, &r);
    CHECK(r.delay_ns == 20 * LS_NS_PER_MS && r.partition == PROXY_PART_BLACKHOLE);
    proxy_rule_of(px, 1, 1, PROXY_FROM_NODE, &r);
    CHECK(r.delay_ns == 10 * LS_NS_PER_MS && r.partition == PROXY_PART_BLACKHOLE);
    clear_rule(d);
    proxy_rule_of(px, 1, 1, PROXY_TO_NODE, &r);
    CHECK(r.partition == PROXY_PART_HOLD);
    clear_rule(b);
    proxy_rule_of(px, 1, 1, PROXY_TO_NODE, &r);
    CHECK(r.delay_ns == 10 * LS_NS_PER_MS && r.jitter_ns == 0);
    clear_rule(c);
    clear_rule(a);
    clear_rule(12345); /* unknown id: no-op */
    proxy_rule_of(px, 1, 1, PROXY_TO_NODE, &r);
    CHECK(r.delay_ns == 0 && r.partition == PROXY_PART_NONE);
    struct ls_err err = {0};
    CHECK(proxy_heal(px, &err) == 0);
}

static void test_stop(void)
{
    pid_t pid = proxy_pid(px);
    CHECK(pid > 0 && proc_state(pid, 0) != 0);
    proxy_stop(px);
    px = NULL;
    CHECK(proc_state(pid, 0) == 0);
    CHECK(kill(pid, 0) < 0 && errno == ESRCH);
}

/* The proxy's AUTH: node 0 of a second proxy has the node's password,
 * node 1 a wrong one; the client sends no AUTH either way. */
static void test_auth(void)
{
    struct node_proc pn;
    memset(&pn, 0, sizeof(pn));
    struct ls_err err = {0};
    REQUIRE(ls_password_new(pn.password, sizeof(pn.password), &err) == 0);
    REQUIRE(node_start(&pn, tmpdir, "proxy-auth", PERSIST_NONE, &err) == 0);
    struct lock_node up[2];
    memset(up, 0, sizeof(up));
    for (int n = 0; n < 2; n++) {
        snprintf(up[n].host, sizeof(up[n].host), "%s", pn.host);
        up[n].port = pn.port;
    }
    snprintf(up[0].password, sizeof(up[0].password), "%s", pn.password);
    snprintf(up[1].password, sizeof(up[1].password), "not-the-password");
    char log[4096];
    snprintf(log, sizeof(log), "%s/proxy-auth.log", tmpdir);
    struct proxy_config cfg = {.nworkers = 1, .nnodes = 2, .nodes = up, .log_path = log, .seed = 1};
    struct proxy *ap = NULL;
    if (proxy_start(&cfg, &ap, &err) < 0) {
        CHECKF(0, "proxy: %s", err.msg);
        node_stop(&pn);
        return;
    }
    const struct lock_node *l = proxy_worker_nodes(ap, 0);
    CHECK(l[0].password[0] == '\0'); /* clients of the proxy need none */
    redisContext *direct = conn_to(pn.host, pn.port, 2000);
    redisReply *r = direct ? redisCommand(direct, "PING") : NULL;
    CHECKF(r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0,
           "a direct client without AUTH: %s", r && r->str ? r->str : "no reply");
    freeReplyObject(r);
    redisContext *c = conn_to(l[0].host, l[0].port, 2000);
    CHECK(ping_ok(c));
    r = c ? redisCommand(c, "SET k v") : NULL;
    CHECK(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = c ? redisCommand(c, "GET k") : NULL;
    CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "v") == 0);
    freeReplyObject(r);
    struct proxy_link_stats ls;
    /* the client's bytes only: PING, SET k v, GET k; +PONG, +OK, $1 v (the
     * proxy counts a write after it, so the last may lag the reply: polled) */
    uint64_t sent = 14 + 27 + 20, got = 7 + 5 + 7;
    int64_t until = ls_now_ns() + 2 * LS_NS_PER_S;
    for (;;) {
        proxy_link_stats(ap, 0, 0, &ls);
        if ((ls.bytes[PROXY_TO_NODE] >= sent && ls.bytes[PROXY_FROM_NODE] >= got) ||
            ls_now_ns() >= until)
            break;
        ls_sleep_ns(LS_NS_PER_MS);
    }
    CHECKF(ls.bytes[PROXY_TO_NODE] == sent && ls.bytes[PROXY_FROM_NODE] == got,
           "bytes to the node %llu (want %llu), from it %llu (want %llu)",
           (unsigned long long)ls.bytes[PROXY_TO_NODE], (unsigned long long)sent,
           (unsigned long long)ls.bytes[PROXY_FROM_NODE], (unsigned long long)got);
    if (c)
        redisFree(c);
    c = conn_to(l[1].host, l[1].port, 2000); /* the wrong password: reset, never NOAUTH */
    r = c && !c->err ? redisCommand(c, "PING") : NULL;
    CHECKF(!r, "a refused AUTH answered the client: %s", r && r->str ? r->str : "");
    freeReplyObject(r);
    if (c)
        redisFree(c);
    proxy_stop(ap);
    struct strbuf sb = STRBUF_INIT;
    CHECK(sb_read_file(&sb, log) == 0);
    CHECKF(strstr(sb_cstr(&sb), "refused the proxy's AUTH") != NULL, "%s", sb_cstr(&sb));
    CHECK(strstr(sb_cstr(&sb), pn.password) == NULL && !strstr(sb_cstr(&sb), "not-the-password"));
    sb_free(&sb);
    if (direct)
        redisFree(direct);
    node_stop(&pn);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char *dir = t_tmpdir();
    tmpdir = dir;
    struct ls_err err = {0};
    if (node_start(&node, dir, "proxy", PERSIST_NONE, &err) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err.msg);
        t_rmdir(dir);
        free(dir);
        return 1;
    }
    /* the proxy is forked before any connection is open, so it holds none */
    struct lock_node up[NN];
    memset(up, 0, sizeof(up));
    for (int n = 0; n < NN; n++) {
        snprintf(up[n].host, sizeof(up[n].host), "%s", node.host);
        up[n].port = node.port;
    }
    char log[4096];
    snprintf(log, sizeof(log), "%s/proxy.log", dir);
    struct proxy_config cfg = {.nworkers = NW, .nnodes = NN, .nodes = up, .log_path = log, .seed = 1};
    if (proxy_start(&cfg, &px, &err) < 0) {
        fprintf(stderr, "cannot start the proxy: %s\n", err.msg);
        node_stop(&node);
        t_rmdir(dir);
        free(dir);
        return 1;
    }
    adm = conn_to(node.host, node.port, 2000);

    RUN(test_idle_overhead);
    RUN(test_idle_acquire);
    RUN(test_latency_intact);
    RUN(test_latency_measured);
    RUN(test_blackhole);
    RUN(test_hold);
    RUN(test_reset);
    RUN(test_partition_isolated);
    RUN(test_bandwidth);
    RUN(test_slicer);
    RUN(test_backpressure);
    RUN(test_compose);
    RUN(test_auth);
    RUN(test_stop);

    if (px)
        proxy_stop(px);
    if (adm)
        redisFree(adm);
    node_stop(&node);
    t_rmdir(dir);
    free(dir);
    return t_finish();
}
