/*
 * test_topology_external.c: topology external at load time
 * (backends/external.h, harness/workload.c): address parsing,
 * cluster.nodes following the addresses, the echo loading back to the same
 * workload, and which fault kinds and targets are refused for lack of
 * process control of the nodes.
 * The run side (real nodes) is tests/e2e/test_topology_external.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "faults/fault.h"
#include "backends/external.h"
#include "harness/workload.h"
#include "testing.h"
#include "util/strbuf.h"

static void test_split(void)
{
    char host[64];
    int port = 0;
    CHECK(external_split_address("redis-1:6379", host, sizeof(host), &port) == 0);
    CHECK_STR(host, "redis-1");
    CHECK_INT(port, 6379);
    CHECK(external_split_address("127.0.0.1:1", host, sizeof(host), &port) == 0);
    CHECK_STR(host, "127.0.0.1");
    CHECK_INT(port, 1);
    CHECK(external_split_address("a:b:65535", host, sizeof(host), &port) == 0); /* last ':' */
    CHECK_STR(host, "a:b");
    static const char *const bad[] = {"redis", ":6379", "redis:", "redis:0", "redis:65536",
                                      "redis:63x9", "redis:-1", "redis:+1", NULL};
    for (int i = 0; bad[i]; i++)
        CHECKF(external_split_address(bad[i], host, sizeof(host), &port) < 0, "%s", bad[i]);
    char tiny[4];
    CHECK(external_split_address("redis:6379", tiny, sizeof(tiny), &port) < 0);
}

static struct workload *load(const char *yaml, const char *set)
{
    struct workload *w = NULL;
    struct ls_err err = {0};
    const char *sets[1] = {set};
    if (workload_load_string("t.yaml", yaml, sets, set ? 1 : 0, &w, NULL, &err) != 0)
        return NULL;
    return w;
}

static const char BASE[] =
    "duration: 5s\n"
    "cluster: {topology: external, addresses: [\"n1:7001\", \"10.0.0.2:7002\", \"n3:7003\"]}\n"
    "lock: {impl: redlock}\n";

static void test_load_and_echo(void)
{
    struct workload *w = load(BASE, NULL);
    REQUIRE(w != NULL);
    CHECK_INT(w->cluster.topology, TOPO_EXTERNAL);
    CHECK_INT(w->cluster.nodes, 3);
    REQUIRE(w->cluster.naddresses == 3);
    CHECK_STR(w->cluster.addresses[1], "10.0.0.2:7002");
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    struct workload *w2 = load(sb_cstr(&sb), NULL);
    REQUIRE(w2 != NULL);
    CHECK_INT(w2->cluster.naddresses, 3);
    CHECK_STR(w2->cluster.addresses[2], "n3:7003");
    struct strbuf sb2 = STRBUF_INIT;
    workload_to_yaml(w2, &sb2);
    CHECK_STR(sb_cstr(&sb), sb_cstr(&sb2));
    sb_free(&sb);
    sb_free(&sb2);
    workload_free(w2);
    /* --set replaces the list */
    struct workload *w3 = load(BASE, "cluster.addresses=[\"only:1\"]");
    REQUIRE(w3 != NULL);
    CHECK_INT(w3->cluster.nodes, 1);
    CHECK_INT(w3->cluster.naddresses, 1);
    workload_free(w3);
    workload_free(w);
}

static void test_load_errors(void)
{
    CHECK(load(BASE, "cluster.addresses=[]") == NULL);
    CHECK(load(BASE, "cluster.addresses=[\"nohostport\"]") == NULL);
    CHECK(load(BASE, "cluster.nodes=2") == NULL); /* disagrees with the 3 addresses */
    CHECK(load("cluster: {addresses: [\"a:1\"]}\n", NULL) == NULL); /* not external */
    struct workload *w = load(BASE, "cluster.nodes=3"); /* agrees: fine */
    CHECK(w != NULL);
    workload_free(w);
}

static void test_faults(void)
{
    static const struct {
        const char *fault;
        int ok;
    } cases[] = {
        {"{kind: pause, target: holder, at: 1s}", 1},
        {"{kind: pause, target: \"node:0\", at: 1s}", 0},
        {"{kind: kill, target: random-worker, at: 1s}", 1},
        {"{kind: kill, target: \"node:1\", at: 1s}", 0},
        {"{kind: stop, target: \"node:2\", at: 1s}", 0},
        {"{kind: stall, at: 1s}", 0},
        {"{kind: partition, nodes: [0], at: 1s}", 1},
        {"{kind: latency, target: \"node:1\", delay: 10ms, at: 1s}", 1},
        {"{kind: clock, target: \"node:0\", jump: 1s, at: 1s}", 0},
        {"{kind: clock, nodes: [0, 1], jump: 1s, at: 1s}", 0},
        {"{kind: clock, target: \"worker:0\", jump: 1s, at: 1s}", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strstr(cases[i].fault, "clock") && !fault_find("clock"))
            continue; /* a build without clock faults */
        char set[160];
        snprintf(set, sizeof(set), "faults[0]=%s", cases[i].fault);
        struct workload *w = load(BASE, set);
        CHECKF((w != NULL) == cases[i].ok, "%s: %s", cases[i].fault,
               cases[i].ok ? "refused" : "accepted");
        workload_free(w);
    }
    /* the same node faults are fine when lockstorm starts the nodes */
    struct workload *w = load("cluster: {nodes: 3}\nduration: 5s\n",
                              "faults[0]={kind: kill, target: \"node:1\", at: 1s}");
    CHECK(w != NULL);
    workload_free(w);
}

static void test_predicate(void)
{
    const struct fault_ops *pause = fault_find("pause"), *part = fault_find("partition");
    REQUIRE(pause && part);
    CHECK(!workload_fault_needs_control(pause, TARGET_HOLDER));
    CHECK(!workload_fault_needs_control(pause, TARGET_ALL_WORKERS));
    CHECK(workload_fault_needs_control(pause, TARGET_NODE));
    CHECK(!workload_fault_needs_control(part, TARGET_NODE));
    CHECK(!workload_fault_needs_control(part, TARGET_LINKS));
    CHECK(workload_fault_needs_control(pause, 99)); /* an unknown target is never assumed safe */
}

int main(void)
{
    RUN(test_split);
    RUN(test_load_and_echo);
    RUN(test_load_errors);
    RUN(test_faults);
    RUN(test_predicate);
    return t_finish();
}
