/*
 * bench_proxy.c: benchmark 7, the proxy's cost per command with and
 * without a command rule (docs/performance.md "Proxy: command rules").
 * One redis-server, one proxy link, one client doing request/response
 * SET and GET (16-byte value) as fast as it can, three ways interleaved
 * round by round so each sees the same machine load: direct to the node
 * (the reference), through the idle proxy (no rule: nothing parsed), and
 * through the proxy with a command rule on the link that matches nothing
 * (every request and reply parsed, none acted on). Median ops/s of the
 * rounds; the ratios are the figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "backends/cluster.h"
#include "bench/common.h"
#include "faults/proxy.h"
#include "model/workload.h"
#include "util/timeutil.h"

#define MAX_ROUNDS 16

/* ops/s of n request/response commands over c; -1 on an error. */
static double run_ops(redisContext *c, int n)
{
    int64_t t0 = ls_now_ns();
    for (int i = 0; i < n; i++) {
        redisReply *r = (i & 1) ? redisCommand(c, "GET bench:proxy")
                                : redisCommand(c, "SET bench:proxy 0123456789abcdef");
        int ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok)
            fprintf(stderr, "bench_proxy: %s\n", r ? r->str : c->errstr);
        freeReplyObject(r);
        if (!ok)
            return -1;
    }
    double s = (double)(ls_now_ns() - t0) / 1e9;
    return s > 0 ? n / s : -1;
}

static redisContext *conn(const char *host, int port)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c && !c->err)
        redisSetTimeout(c, tv);
    return c;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, NULL, NULL) < 0 || bench_tmp(&o) < 0)
        return 2;
    int rounds = o.smoke ? 2 : 10, n = o.smoke ? 500 : 20000;
    struct node_proc node;
    memset(&node, 0, sizeof(node)); /* no password */
    struct ls_err err = {0};
    if (node_start(&node, o.tmp, "bench-proxy", PERSIST_NONE, &err) < 0) {
        fprintf(stderr, "bench_proxy: redis-server: %s\n", err.msg);
        return 1;
    }
    struct lock_node up;
    memset(&up, 0, sizeof(up));
    snprintf(up.host, sizeof(up.host), "%s", node.host);
    up.port = node.port;
    struct proxy_config cfg = {.nworkers = 1, .nnodes = 1, .nodes = &up, .seed = 1};
    struct proxy *px = NULL;
    if (proxy_start(&cfg, &px, &err) < 0) {
        fprintf(stderr, "bench_proxy: proxy: %s\n", err.msg);
        node_stop(&node);
        return 1;
    }
    const struct lock_node *link = &proxy_worker_nodes(px, 0)[0];
    redisContext *d = conn(node.host, node.port), *p = conn(link->host, link->port);
    struct proxy_cmd_rule rule;
    memset(&rule, 0, sizeof(rule));
    snprintf(rule.command, sizeof(rule.command), "LSBENCHNOMATCH");
    rule.action = PROXY_CMD_ERROR;
    snprintf(rule.reply, sizeof(rule.reply), "ERR never");
    uint8_t sel[1] = {1};
    double direct[MAX_ROUNDS], idle[MAX_ROUNDS], parsed[MAX_ROUNDS];
    int failed = !d || d->err || !p || p->err;
    for (int r = 0; r < rounds && !failed; r++) {
        direct[r] = run_ops(d, n);
        idle[r] = run_ops(p, n);
        failed |= proxy_cmd_set(px, 1, &rule, sel, NULL, &err) < 0;
        /* a connection that talked before a command rule covered its link is
         * reset at the rule's start (faults.md, "Per-command faults"): the
         * parsed rounds run on a connection made under the rule */
        redisFree(p);
        p = conn(link->host, link->port);
        failed |= !p || p->err;
        if (failed)
            break;
        parsed[r] = run_ops(p, n);
        failed |= proxy_fault_clear(px, 1, &err) < 0;
        if (direct[r] < 0 || idle[r] < 0 || parsed[r] < 0)
            fprintf(stderr, "bench_proxy: round %d: direct %.0f idle %.0f parsed %.0f\n", r,
                    direct[r], idle[r], parsed[r]);
        failed |= direct[r] < 0 || idle[r] < 0 || parsed[r] < 0;
    }
    struct proxy_cmd_stats cs;
    proxy_cmd_stats(px, 1, &cs);
    if (d)
        redisFree(d);
    if (p)
        redisFree(p);
    proxy_stop(px);
    node_stop(&node);
    if (failed) {
        fprintf(stderr, "bench_proxy: a command failed (%s)\n", err.msg);
        bench_cleanup(&o);
        return 1;
    }
    double md = bench_median(direct, rounds), mi = bench_median(idle, rounds),
           mp = bench_median(parsed, rounds);
    struct json *sec = json_new_obj();
    json_obj_set_str(sec, "method",
                     "one client, request/response SET/GET of a 16-byte value, rounds of n "
                     "commands: direct, through the idle proxy, through the proxy with a command "
                     "rule that matches nothing (everything parsed), interleaved; median ops/s");
    json_obj_set_int(sec, "rounds", rounds);
    json_obj_set_int(sec, "commands_per_round", n);
    json_obj_set_num(sec, "direct_ops_s", md);
    json_obj_set_num(sec, "idle_ops_s", mi);
    json_obj_set_num(sec, "parsed_ops_s", mp);
    json_obj_set_int(sec, "parsed_requests_matched", (int64_t)cs.matched);
    struct json *targets = json_obj_set(sec, "targets", json_new_arr());
    bench_target(targets, "proxy idle vs direct (reported; the idle path as before)", mi / md,
                 ">=", 0.3, "x");
    bench_target(targets, "proxy with a command rule vs idle proxy", mp / mi, ">=", 0.9, "x");
    fprintf(stderr, "proxy, %d rounds of %d commands: direct %.0f ops/s, idle proxy %.0f (%.2f x), "
                    "command rule %.0f (%.2f x idle)\n",
            rounds, n, md, mi, mi / md, mp, mp / mi);
    bench_print(sec);
    json_free(sec);
    bench_cleanup(&o);
    return cs.matched == 0 ? 0 : 1;
}
