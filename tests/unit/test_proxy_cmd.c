/*
 * test_proxy_cmd.c: the proxy's command rules (proxy.h proxy_cmd_set) in
 * front of a real redis-server, over raw sockets so the bytes and their
 * split are the test's: an error answered in the middle of a pipeline (in
 * one write and byte by byte), a reply dropped after the node applied the
 * command (then the connection is reset at the next request; not counted
 * when the connection dies before the reply), a request
 * dropped, a delay that holds what follows it, a request larger than the
 * parse bound passing unparsed, limit, SHA and key matching, garbage, a
 * rule set on a connection already open (reset: a request of it may be in
 * flight), a RESP3 connection let go, an answer under a from-node delay,
 * and a slot kept after an unacknowledged clear.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "backends/cluster.h"
#include "harness/workload.h"
#include "faults/proxy.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

static struct node_proc node;
static struct proxy *px;
static redisContext *adm;
static int next_id = 1;

static int link_fd(void)
{
    const struct lock_node *a = &proxy_worker_nodes(px, 0)[0];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)a->port)};
    inet_pton(AF_INET, a->host, &sa.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Send s; step > 0: step bytes per write, 1 ms apart. */
static void send_str(int fd, const char *s, size_t len, size_t step)
{
    size_t off = 0;
    while (off < len) {
        size_t n = step && len - off > step ? step : len - off;
        ssize_t w = send(fd, s + off, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        off += (size_t)w;
        if (step)
            ls_sleep_ns(LS_NS_PER_MS);
    }
}

/* Read until want bytes came, the peer closed (*closed = 1) or ms passed.
 * Returns the bytes read (buf NUL-ended). */
static size_t recv_for(int fd, char *buf, size_t cap, size_t want, int ms, int *closed)
{
    size_t got = 0;
    *closed = 0;
    int64_t deadline = ls_now_ns() + (int64_t)ms * LS_NS_PER_MS;
    while (got < want && got + 1 < cap) {
        int64_t left = deadline - ls_now_ns();
        if (left <= 0)
            break;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left / LS_NS_PER_MS) + 1) <= 0)
            continue;
        ssize_t r = recv(fd, buf + got, cap - 1 - got, 0);
        if (r <= 0) {
            *closed = 1;
            break;
        }
        got += (size_t)r;
    }
    buf[got] = '\0';
    return got;
}

static int set_cmd(const char *command, int action, const char *reply)
{
    struct proxy_cmd_rule r;
    memset(&r, 0, sizeof(r));
    snprintf(r.command, sizeof(r.command), "%s", command);
    snprintf(r.reply, sizeof(r.reply), "%s", reply ? reply : "");
    r.action = action;
    uint8_t sel[1] = {1};
    struct ls_err err = {0};
    int id = next_id++;
    CHECKF(proxy_cmd_set(px, id, &r, sel, NULL, &err) == 0, "proxy_cmd_set: %s", err.msg);
    return id;
}

static int set_rule(const struct proxy_cmd_rule *r)
{
    uint8_t sel[1] = {1};
    struct ls_err err = {0};
    int id = next_id++;
    CHECKF(proxy_cmd_set(px, id, r, sel, NULL, &err) == 0, "proxy_cmd_set: %s", err.msg);
    return id;
}

static void clear(int id, struct proxy_cmd_stats *cs)
{
    struct ls_err err = {0};
    CHECKF(proxy_fault_clear(px, id, &err) == 0, "proxy_fault_clear: %s", err.msg);
    if (cs)
        proxy_cmd_stats(px, id, cs);
}

static void adm_set(const char *k, const char *v)
{
    freeReplyObject(redisCommand(adm, "SET %s %s", k, v));
}

static int adm_exists(const char *k)
{
    redisReply *r = redisCommand(adm, "EXISTS %s", k);
    int e = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return e;
}

static void test_error_pipelined(void)
{
    static const char req[] = "SET pe:1 v\r\n*2\r\n$3\r\nDEL\r\n$4\r\npe:1\r\nPING\r\n";
    static const char want[] = "+OK\r\n-READONLY You can't write against a read only replica."
                               "\r\n+PONG\r\n";
    for (size_t step = 0; step <= 1; step++) {
        int id = set_cmd("DEL", PROXY_CMD_ERROR,
                         "READONLY You can't write against a read only replica.");
        int fd = link_fd();
        REQUIRE(fd >= 0);
        send_str(fd, req, strlen(req), step);
        char buf[512];
        int closed;
        recv_for(fd, buf, sizeof(buf), strlen(want), 2000, &closed);
        CHECK_STR(buf, want);
        CHECK(adm_exists("pe:1")); /* the DEL never reached the node */
        /* the connection goes on: a DEL again, and a GET */
        send_str(fd, "DEL pe:1\r\nGET pe:1\r\n", 20, 0);
        recv_for(fd, buf, sizeof(buf), 62, 2000, &closed);
        CHECK(strstr(buf, "-READONLY") == buf && strstr(buf, "$1\r\nv\r\n"));
        struct proxy_cmd_stats cs;
        clear(id, &cs);
        CHECK_INT(cs.matched, 2);
        CHECK_INT(cs.acted, 2);
        close(fd);
    }
}

static void test_drop_reply(void)
{
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    int id = set_cmd("SET", PROXY_CMD_DROP_REPLY, NULL);
    int fd = link_fd();
    REQUIRE(fd >= 0);
    send_str(fd, "SET dr:1 x\r\n", 12, 0);
    char buf[256];
    int closed;
    size_t n = recv_for(fd, buf, sizeof(buf), 1, 300, &closed);
    CHECKF(n == 0 && !closed, "a reply came: '%s'", buf);
    CHECK(adm_exists("dr:1")); /* applied, its reply lost */
    send_str(fd, "PING\r\n", 6, 0);
    n = recv_for(fd, buf, sizeof(buf), 1, 2000, &closed);
    CHECKF(n == 0 && closed, "the next request was not answered by a reset: '%s'", buf);
    struct proxy_cmd_stats cs;
    clear(id, &cs);
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(cs.acted, 1);
    CHECK_INT(after.cmd_lost - before.cmd_lost, 1);
    CHECK(after.dropped[PROXY_FROM_NODE] - before.dropped[PROXY_FROM_NODE] == 5); /* "+OK\r\n" */
    close(fd);
}

/* A drop-reply whose connection dies before the reply came dropped
 * nothing: matched, not counted as acted (the end line's bit). */
static void test_drop_reply_never_came(void)
{
    struct proxy_link_stats st;
    proxy_link_stats(px, 0, 0, &st);
    uint64_t open0 = st.open;
    int id = set_cmd("BLPOP", PROXY_CMD_DROP_REPLY, NULL);
    int fd = link_fd();
    REQUIRE(fd >= 0);
    send_str(fd, "BLPOP dn:none 2\r\n", 17, 0);
    struct proxy_cmd_stats cs;
    memset(&cs, 0, sizeof(cs));
    for (int i = 0; i < 200 && cs.matched == 0; i++) {
        ls_sleep_ns(5 * LS_NS_PER_MS);
        proxy_cmd_stats(px, id, &cs);
    }
    CHECK_INT(cs.matched, 1);
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd); /* reset, long before BLPOP's 2 s */
    for (int i = 0; i < 200; i++) {
        proxy_link_stats(px, 0, 0, &st);
        if (st.open <= open0)
            break;
        ls_sleep_ns(5 * LS_NS_PER_MS);
    }
    CHECK(st.open <= open0);
    clear(id, &cs);
    CHECK_INT(cs.matched, 1);
    CHECK_INT(cs.acted, 0);
}

static void test_drop(void)
{
    adm_set("dq:1", "v");
    int id = set_cmd("DEL", PROXY_CMD_DROP, NULL);
    int fd = link_fd();
    REQUIRE(fd >= 0);
    send_str(fd, "PING\r\nDEL dq:1\r\n", 16, 0);
    char buf[256];
    int closed;
    recv_for(fd, buf, sizeof(buf), 100, 300, &closed);
    CHECK_STR(buf, "+PONG\r\n"); /* the reply before the drop, then nothing */
    CHECK(adm_exists("dq:1"));
    struct proxy_cmd_stats cs;
    clear(id, &cs); /* lifting the rule resets the lost connection */
    recv_for(fd, buf, sizeof(buf), 1, 2000, &closed);
    CHECK(closed);
    CHECK_INT(cs.acted, 1);
    close(fd);
}

static void test_delay(void)
{
    struct proxy_cmd_rule r;
    memset(&r, 0, sizeof(r));
    snprintf(r.command, sizeof(r.command), "GET");
    r.action = PROXY_CMD_DELAY;
    r.delay_ns = 200 * LS_NS_PER_MS;
    int id = set_rule(&r);
    int fd = link_fd();
    REQUIRE(fd >= 0);
    char buf[256];
    int closed;
    int64_t t0 = ls_now_ns();
    send_str(fd, "PING\r\n", 6, 0);
    recv_for(fd, buf, sizeof(buf), 7, 2000, &closed);
    int64_t fast = ls_now_ns() - t0;
    CHECK_STR(buf, "+PONG\r\n");
    t0 = ls_now_ns();
    send_str(fd, "GET nokey\r\nPING\r\n", 17, 0);
    recv_for(fd, buf, sizeof(buf), 12, 2000, &closed);
    int64_t both = ls_now_ns() - t0;
    CHECK_STR(buf, "$-1\r\n+PONG\r\n"); /* in order: the PING behind the GET waited too */
    CHECKF(fast < 150 * LS_NS_PER_MS, "PING took %.1f ms", (double)fast / 1e6);
    CHECKF(both >= 200 * LS_NS_PER_MS, "GET + PING came back after %.1f ms", (double)both / 1e6);
    t0 = ls_now_ns();
    send_str(fd, "SET dl:1 v\r\n", 12, 0);
    recv_for(fd, buf, sizeof(buf), 5, 2000, &closed);
    int64_t set = ls_now_ns() - t0;
    CHECKF(set < 150 * LS_NS_PER_MS, "SET (no rule) took %.1f ms", (double)set / 1e6);
    clear(id, NULL);
    close(fd);
}

static void test_oversized(void)
{
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    int id = set_cmd("SET", PROXY_CMD_ERROR, "ERR refused");
    int fd = link_fd();
    REQUIRE(fd >= 0);
    size_t vlen = 3 * PROXY_CMD_BOUND;
    char *big = malloc(vlen + 64);
    REQUIRE(big);
    int h = snprintf(big, 64, "*3\r\n$3\r\nSET\r\n$4\r\nov:1\r\n$%zu\r\n", vlen);
    memset(big + h, 'x', vlen);
    memcpy(big + h + vlen, "\r\n", 2);
    send_str(fd, big, (size_t)h + vlen + 2, 0);
    free(big);
    char buf[256];
    int closed;
    recv_for(fd, buf, sizeof(buf), 5, 2000, &closed);
    CHECK_STR(buf, "+OK\r\n"); /* passed unparsed: the node ran it */
    send_str(fd, "SET ov:2 y\r\n", 12, 0);
    recv_for(fd, buf, sizeof(buf), 13, 2000, &closed);
    CHECK_STR(buf, "-ERR refused\r\n"); /* the next one is parsed again */
    struct proxy_cmd_stats cs;
    clear(id, &cs);
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(after.cmd_oversized - before.cmd_oversized, 1);
    CHECK_INT(cs.matched, 1);
    close(fd);
}

static void test_limit_sha_key(void)
{
    struct proxy_cmd_rule r;
    memset(&r, 0, sizeof(r));
    snprintf(r.command, sizeof(r.command), "PING");
    snprintf(r.reply, sizeof(r.reply), "ERR once");
    r.action = PROXY_CMD_ERROR;
    r.limit = 1;
    int id = set_rule(&r);
    int fd = link_fd();
    REQUIRE(fd >= 0);
    char buf[512];
    int closed;
    send_str(fd, "PING\r\nPING\r\n", 12, 0);
    recv_for(fd, buf, sizeof(buf), 17, 2000, &closed);
    CHECK_STR(buf, "-ERR once\r\n+PONG\r\n");
    struct proxy_cmd_stats cs;
    clear(id, &cs);
    CHECK_INT(cs.matched, 2);
    CHECK_INT(cs.acted, 1);
    close(fd); /* a connection that talked before a rule is reset when it comes */

    redisReply *sr = redisCommand(adm, "SCRIPT LOAD %s", "return 7");
    REQUIRE(sr && sr->type == REDIS_REPLY_STRING && sr->len == 40);
    char sha[41];
    snprintf(sha, sizeof(sha), "%s", sr->str);
    freeReplyObject(sr);
    memset(&r, 0, sizeof(r));
    snprintf(r.command, sizeof(r.command), "EVALSHA");
    snprintf(r.sha, sizeof(r.sha), "%.8s", sha);
    snprintf(r.key, sizeof(r.key), "lk:*");
    snprintf(r.reply, sizeof(r.reply), "NOSCRIPT No matching script. Please use EVAL.");
    r.action = PROXY_CMD_ERROR;
    id = set_rule(&r);
    fd = link_fd();
    REQUIRE(fd >= 0);
    char req[256];
    int n = snprintf(req, sizeof(req), "EVALSHA %s 1 lk:1\r\nEVALSHA %s 1 other\r\n", sha, sha);
    send_str(fd, req, (size_t)n, 0);
    recv_for(fd, buf, sizeof(buf), 54, 2000, &closed);
    CHECK_STR(buf, "-NOSCRIPT No matching script. Please use EVAL.\r\n:7\r\n");
    clear(id, &cs);
    CHECK_INT(cs.acted, 1);
    close(fd);
}

/* A rule set while a connection that talked is open: a request of it may
 * be in flight (here a BLPOP pipelined behind a PING, still blocked), so
 * its next reply may answer that one; the proxy cannot pair replies it did
 * not see asked for, so it resets the connection at once (counted in the
 * ack and cmd_taken). Taking it up instead answered ECHO with the proxy's
 * error ahead of the BLPOP's *-1: each reply paired with the wrong request.
 * The client's next connection is followed from its first byte. */
static void test_open_connection_reset(void)
{
    int fd = link_fd();
    REQUIRE(fd >= 0);
    char buf[256];
    int closed;
    send_str(fd, "PING\r\nBLPOP nosuchq 0.5\r\n", 26, 0);
    recv_for(fd, buf, sizeof(buf), 7, 2000, &closed);
    CHECK_STR(buf, "+PONG\r\n");
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    struct proxy_cmd_rule r;
    memset(&r, 0, sizeof(r));
    snprintf(r.command, sizeof(r.command), "ECHO");
    snprintf(r.reply, sizeof(r.reply), "ERR no echo");
    r.action = PROXY_CMD_ERROR;
    uint8_t sel[1] = {1};
    struct proxy_ack ack;
    struct ls_err err = {0};
    int id = next_id++;
    CHECKF(proxy_cmd_set(px, id, &r, sel, &ack, &err) == 0, "proxy_cmd_set: %s", err.msg);
    CHECK_INT(ack.resets, 1);
    send_str(fd, "ECHO hi\r\n", 9, 0);
    size_t n = recv_for(fd, buf, sizeof(buf), 100, 2000, &closed);
    CHECKF(n == 0 && closed, "replies came on a connection open before the rule: '%s'", buf);
    close(fd);
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(after.cmd_taken - before.cmd_taken, 1);
    CHECK_INT(after.resets - before.resets, 1);
    /* reconnected: followed from its first byte, pipelined or not */
    fd = link_fd();
    REQUIRE(fd >= 0);
    send_str(fd, "PING\r\nBLPOP nosuchq 0.2\r\nECHO hi\r\n", 35, 0);
    recv_for(fd, buf, sizeof(buf), 26, 2000, &closed);
    CHECK_STR(buf, "+PONG\r\n*-1\r\n-ERR no echo\r\n");
    close(fd);
    /* open but silent when the rule came: nothing in flight, followed */
    clear(id, NULL);
    fd = link_fd();
    REQUIRE(fd >= 0);
    id = set_cmd("ECHO", PROXY_CMD_ERROR, "ERR no echo");
    send_str(fd, "ECHO hi\r\n", 9, 0);
    recv_for(fd, buf, sizeof(buf), 14, 2000, &closed);
    CHECK_STR(buf, "-ERR no echo\r\n");
    struct proxy_cmd_stats cs;
    clear(id, &cs);
    CHECK_INT(cs.acted, 1);
    close(fd);
}

static void test_open_connection_and_garbage(void)
{
    char buf[256];
    int closed;
    int id = set_cmd("ECHO", PROXY_CMD_ERROR, "ERR no echo");
    int fd = link_fd();
    REQUIRE(fd >= 0);
    send_str(fd, "ECHO hi\r\n", 9, 0);
    recv_for(fd, buf, sizeof(buf), 14, 2000, &closed);
    CHECK_STR(buf, "-ERR no echo\r\n");
    /* garbage: the stream is no longer followed (Redis answers and closes) */
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    send_str(fd, "*x\r\n", 4, 0);
    recv_for(fd, buf, sizeof(buf), 200, 2000, &closed);
    CHECK(strncmp(buf, "-ERR Protocol error", 19) == 0);
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(after.cmd_unfollowed - before.cmd_unfollowed, 1);
    clear(id, NULL);
    close(fd);
    /* no rule: nothing is parsed, so garbage is not even noticed */
    fd = link_fd();
    REQUIRE(fd >= 0);
    proxy_link_stats(px, 0, 0, &before);
    send_str(fd, "*x\r\n", 4, 0);
    recv_for(fd, buf, sizeof(buf), 200, 2000, &closed);
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(after.cmd_unfollowed - before.cmd_unfollowed, 0);
    close(fd);
}

/* HELLO 3 switches the connection to RESP3: no longer followed, so the
 * rule stops acting on it (counted), and the replies pass untouched. */
static void test_resp3_unfollowed(void)
{
    int id = set_cmd("ECHO", PROXY_CMD_ERROR, "ERR no echo");
    int fd = link_fd();
    REQUIRE(fd >= 0);
    struct proxy_link_stats before, after;
    proxy_link_stats(px, 0, 0, &before);
    char buf[2048];
    int closed;
    send_str(fd, "HELLO 3\r\n", 9, 0);
    recv_for(fd, buf, sizeof(buf), sizeof(buf) - 1, 300, &closed);
    CHECK(buf[0] == '%'); /* a RESP3 map */
    send_str(fd, "ECHO x\r\n", 8, 0);
    recv_for(fd, buf, sizeof(buf), 7, 2000, &closed);
    CHECK_STR(buf, "$1\r\nx\r\n");
    proxy_link_stats(px, 0, 0, &after);
    CHECK_INT(after.cmd_unfollowed - before.cmd_unfollowed, 1);
    struct proxy_cmd_stats cs;
    clear(id, &cs);
    CHECK_INT(cs.acted, 0);
    close(fd);
}

/* The proxy's own error answer comes as late as a node reply would under
 * a from-node delay on the link. */
static void test_answer_delayed(void)
{
    struct proxy_rule lat;
    memset(&lat, 0, sizeof(lat));
    lat.delay_ns = 300 * LS_NS_PER_MS;
    uint8_t dirs[1] = {(uint8_t)PROXY_DIR_BIT(PROXY_FROM_NODE)};
    struct ls_err err = {0};
    int lid = next_id++;
    CHECKF(proxy_fault_set(px, lid, PROXY_SET_LATENCY, &lat, dirs, NULL, &err) == 0,
           "proxy_fault_set: %s", err.msg);
    int id = set_cmd("ECHO", PROXY_CMD_ERROR, "ERR late");
    int fd = link_fd();
    REQUIRE(fd >= 0);
    char buf[256];
    int closed;
    int64_t t0 = ls_now_ns();
    send_str(fd, "ECHO x\r\n", 8, 0);
    recv_for(fd, buf, sizeof(buf), 11, 2000, &closed);
    int64_t ms = (ls_now_ns() - t0) / LS_NS_PER_MS;
    CHECK_STR(buf, "-ERR late\r\n");
    CHECKF(ms >= 290, "the answer came after %lld ms, under a 300 ms delay", (long long)ms);
    close(fd);
    clear(id, NULL);
    clear(lid, NULL);
}

/* A clear the proxy did not acknowledge (stopped: the commit times out)
 * leaves the slot taken: the proxy may still use the old rule, so the next
 * rule must not take that slot and zero its counters. */
static void test_slot_after_unacked_clear(void)
{
    int a = set_cmd("ECHO", PROXY_CMD_ERROR, "ERR a");
    int fd = link_fd();
    REQUIRE(fd >= 0);
    char buf[256];
    int closed;
    send_str(fd, "ECHO x\r\n", 8, 0);
    recv_for(fd, buf, sizeof(buf), 8, 2000, &closed);
    CHECK_STR(buf, "-ERR a\r\n");
    close(fd);
    REQUIRE(kill(proxy_pid(px), SIGSTOP) == 0);
    struct ls_err err = {0};
    CHECK(proxy_fault_clear(px, a, &err) == LS_ETIMEOUT);
    kill(proxy_pid(px), SIGCONT);
    int b = set_cmd("PING", PROXY_CMD_ERROR, "ERR b");
    struct proxy_cmd_stats cs;
    proxy_cmd_stats(px, a, &cs);
    CHECK_INT(cs.acted, 1); /* a's slot was not handed to b */
    clear(b, NULL);
    clear(a, NULL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char *dir = t_tmpdir();
    struct ls_err err = {0};
    if (node_start(&node, dir, "proxycmd", PERSIST_NONE, &err) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err.msg);
        t_rmdir(dir);
        free(dir);
        return 1;
    }
    struct lock_node up[1];
    memset(up, 0, sizeof(up));
    snprintf(up[0].host, sizeof(up[0].host), "%s", node.host);
    up[0].port = node.port;
    char log[4096];
    snprintf(log, sizeof(log), "%s/proxy.log", dir);
    struct proxy_config cfg = {.nworkers = 1, .nnodes = 1, .nodes = up, .log_path = log, .seed = 1};
    if (proxy_start(&cfg, &px, &err) < 0) {
        fprintf(stderr, "cannot start the proxy: %s\n", err.msg);
        node_stop(&node);
        t_rmdir(dir);
        free(dir);
        return 1;
    }
    struct timeval tv = {2, 0};
    adm = redisConnectWithTimeout(node.host, node.port, tv);

    RUN(test_error_pipelined);
    RUN(test_drop_reply);
    RUN(test_drop_reply_never_came);
    RUN(test_drop);
    RUN(test_delay);
    RUN(test_oversized);
    RUN(test_limit_sha_key);
    RUN(test_open_connection_reset);
    RUN(test_open_connection_and_garbage);
    RUN(test_resp3_unfollowed);
    RUN(test_answer_delayed);
    RUN(test_slot_after_unacked_clear);

    proxy_stop(px);
    if (adm)
        redisFree(adm);
    node_stop(&node);
    t_rmdir(dir);
    free(dir);
    return t_finish();
}
