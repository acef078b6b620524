/*
 * test_links.c: the link target of link faults (harness/links.c) through
 * the real workload loader: defaults, workers x nodes, isolate, split,
 * minority / majority draws, node:N / worker:N targets, every error with
 * its position, the resolved-workload echo loading back to the same
 * target, --set, and the names written to faults.jsonl.
 */
#include <stdlib.h>
#include <string.h>

#include "faults/fault.h"
#include "faults/link_target.h"
#include "harness/links.h"
#include "harness/workload.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

#define HEAD "duration: 5s\ncluster: {nodes: 5}\nworkers: {count: 4}\n"

static struct workload *load(const char *yaml, const char *const *sets, int nsets,
                             struct ls_err *err)
{
    struct workload *w = NULL;
    memset(err, 0, sizeof(*err));
    workload_load_string("t.yaml", yaml, sets, nsets, &w, NULL, err);
    return w;
}

static struct workload *load_ok(const char *yaml)
{
    struct ls_err err;
    struct workload *w = load(yaml, NULL, 0, &err);
    CHECKF(w != NULL, "load failed: %s", err.msg);
    return w;
}

static void expect_err(int line, const char *yaml, const char *where, const char *phrase)
{
    struct ls_err err;
    struct workload *w = load(yaml, NULL, 0, &err);
    CHECKF(w == NULL, "line %d: loaded", line);
    CHECKF(strncmp(err.msg, where, strlen(where)) == 0, "line %d: '%s' not at '%s'", line, err.msg,
           where);
    CHECKF(strstr(err.msg, phrase) != NULL, "line %d: '%s' lacks '%s'", line, err.msg, phrase);
    workload_free(w);
}

/* Links selected by fault 0 of w, as "w.n w.n ..." */
static void links_text(const struct workload *w, uint64_t seed, char *buf, size_t n)
{
    int nw = (int)w->workers.count, nn = (int)w->cluster.nodes;
    uint8_t sel[64 * 16];
    struct rng rng;
    rng_seed(&rng, seed, 1);
    link_target_resolve(&w->faults[0].links, nw, nn, &rng, sel, NULL);
    size_t j = 0;
    buf[0] = '\0';
    for (int a = 0; a < nw; a++)
        for (int b = 0; b < nn; b++)
            if (sel[a * nn + b] && j + 8 < n)
                j += (size_t)snprintf(buf + j, n - j, "%s%d.%d", j ? " " : "", a, b);
}

static void test_defaults(void)
{
    struct workload *w = load_ok(HEAD "faults: [{kind: latency, at: 1s, duration: 1s}]\n");
    REQUIRE(w);
    CHECK(w->faults[0].target == TARGET_LINKS);
    CHECK(!w->faults[0].links.some_workers && w->faults[0].links.nodes_sel == LINK_NODES_ALL);
    uint8_t sel[20];
    struct rng rng;
    rng_seed(&rng, 1, 1);
    CHECK_INT(link_target_resolve(&w->faults[0].links, 4, 5, &rng, sel, NULL), 20);
    char name[64];
    link_target_name(&w->faults[0].links, name, sizeof(name));
    CHECK_STR(name, "links:all/all");
    workload_free(w);
}

static void test_grid(void)
{
    struct workload *w = load_ok(HEAD "faults:\n"
                                      "  - {kind: partition, workers: [0, 1], nodes: [1, 2], "
                                      "mode: hold, at: 1s}\n");
    REQUIRE(w);
    char t[256];
    links_text(w, 1, t, sizeof(t));
    CHECK_STR(t, "0.1 0.2 1.1 1.2");
    link_target_name(&w->faults[0].links, t, sizeof(t));
    CHECK_STR(t, "links:w0,1/n1,2");
    workload_free(w);
}

static void test_isolate_split(void)
{
    struct workload *w = load_ok(HEAD "faults: [{kind: partition, isolate: node:3}]\n");
    REQUIRE(w);
    char t[256];
    links_text(w, 1, t, sizeof(t));
    CHECK_STR(t, "0.3 1.3 2.3 3.3");
    link_target_name(&w->faults[0].links, t, sizeof(t));
    CHECK_STR(t, "isolate:node:3");
    workload_free(w);

    /* client 0 cannot reach D, E; client 1 cannot reach A, B */
    w = load_ok(HEAD "faults: [{kind: partition, split: [[[0], [3, 4]], [[1], [0, 1]]]}]\n");
    REQUIRE(w);
    links_text(w, 1, t, sizeof(t));
    CHECK_STR(t, "0.3 0.4 1.0 1.1");
    link_target_name(&w->faults[0].links, t, sizeof(t));
    CHECK_STR(t, "split:2");
    workload_free(w);
}

static void test_minority_majority(void)
{
    struct workload *w = load_ok(HEAD "faults: [{kind: partition, nodes: minority}]\n");
    REQUIRE(w);
    uint8_t sel[20];
    uint32_t used;
    struct rng rng;
    rng_seed(&rng, 5, 1);
    CHECK_INT(link_target_resolve(&w->faults[0].links, 4, 5, &rng, sel, &used), 4 * 2);
    CHECK_INT(__builtin_popcount(used), 2);
    /* the same seed draws the same nodes */
    uint32_t again;
    rng_seed(&rng, 5, 1);
    link_target_resolve(&w->faults[0].links, 4, 5, &rng, sel, &again);
    CHECK(again == used);
    workload_free(w);
    w = load_ok(HEAD "faults: [{kind: latency, workers: [2], nodes: majority}]\n");
    REQUIRE(w);
    rng_seed(&rng, 5, 1);
    CHECK_INT(link_target_resolve(&w->faults[0].links, 4, 5, &rng, sel, &used), 3);
    CHECK_INT(__builtin_popcount(used), 3);
    for (int n = 0; n < 5; n++)
        CHECK(sel[0 * 5 + n] == 0 && sel[2 * 5 + n] == ((used >> n) & 1));
    workload_free(w);
}

static void test_other_targets(void)
{
    struct workload *w =
        load_ok(HEAD "faults: [{kind: latency, target: node:2, delay: 10ms, jitter: 5ms}]\n");
    REQUIRE(w);
    CHECK(w->faults[0].target == TARGET_NODE && w->faults[0].target_index == 2);
    workload_free(w);
    w = load_ok(HEAD "faults: [{kind: bandwidth, target: holder, rate: 5000}]\n");
    REQUIRE(w);
    CHECK(w->faults[0].target == TARGET_HOLDER);
    workload_free(w);
    w = load_ok(HEAD "faults: [{kind: slicer, target: links, size: 3, direction: to-node}]\n");
    REQUIRE(w);
    CHECK(w->faults[0].target == TARGET_LINKS);
    workload_free(w);
}

static void test_errors(void)
{
    expect_err(__LINE__, HEAD "faults: [{kind: latency, workers: [0, 7]}]\n", "t.yaml:4:",
               "faults[0].workers[1]: worker 7 is out of range 0..3 (workers.count is 4)");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, nodes: [5]}]\n", "t.yaml:4:",
               "node 5 is out of range 0..4");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, nodes: []}]\n", "t.yaml:4:",
               "non-empty list of node numbers");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, workers: some}]\n", "t.yaml:4:",
               "expected `all` or a list of worker numbers");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, nodes: [x]}]\n", "t.yaml:4:",
               "expected a node number, got 'x'");
    expect_err(__LINE__,
               "cluster: {nodes: 2}\nfaults: [{kind: partition, nodes: minority}]\n",
               "t.yaml:2:", "minority needs cluster.nodes >= 3");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, isolate: node:1, workers: [0]}]\n",
               "t.yaml:4:", "isolate: cannot be combined with workers");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, isolate: 1}]\n", "t.yaml:4:",
               "expected node:N, got '1'");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, isolate: node:9}]\n", "t.yaml:4:",
               "node 9 is out of range");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, split: [[0, 1]], nodes: [1]}]\n",
               "t.yaml:4:", "expected a non-empty list of worker numbers");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, split: [[[0], [1]]], nodes: [1]}]\n",
               "t.yaml:4:", "split: cannot be combined with nodes");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, split: [[[0]]]}]\n", "t.yaml:4:",
               "expected a pair [[workers...], [nodes...]]");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, target: node:1, nodes: [1]}]\n",
               "t.yaml:4:", "need target links");
    expect_err(__LINE__, HEAD "faults: [{kind: pause, nodes: [1]}]\n", "t.yaml:4:",
               "unknown key 'nodes'");
    expect_err(__LINE__, HEAD "faults: [{kind: partition, mode: drop}]\n", "t.yaml:4:",
               "faults[0].mode");
    expect_err(__LINE__, HEAD "faults: [{kind: latency, direction: up}]\n", "t.yaml:4:",
               "faults[0].direction");
    expect_err(__LINE__, HEAD "faults: [{kind: pause, target: links}]\n", "t.yaml:4:",
               "cannot target links");
    expect_err(__LINE__, HEAD "faults:\n  - kind: latency\n    nodes: [0,\n      9]\n",
               "t.yaml:7:7:", "node 9");
}

/* The resolved workload loads back to the same targets and options. */
static void test_echo_roundtrip(void)
{
    const char *yaml = HEAD "faults:\n"
                            "  - {kind: latency, workers: [1, 3], nodes: [0, 4], delay: 7ms, "
                            "jitter: 2ms, direction: from-node}\n"
                            "  - {kind: partition, isolate: node:2, mode: reset, at: 2s}\n"
                            "  - {kind: partition, split: [[[0], [3, 4]], [[1, 2], [0]]], mode: hold}\n"
                            "  - {kind: bandwidth, nodes: majority, rate: 1234}\n"
                            "  - {kind: slicer, target: node:1, size: 2, gap: 1ms}\n";
    struct workload *w = load_ok(yaml);
    REQUIRE(w);
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    struct ls_err err;
    struct workload *w2 = load(sb_cstr(&sb), NULL, 0, &err);
    CHECKF(w2 != NULL, "reload: %s\n%s", err.msg, sb_cstr(&sb));
    if (w2) {
        REQUIRE(w2->nfaults == 5);
        for (int i = 0; i < 5; i++) {
            CHECKF(w2->faults[i].target == w->faults[i].target, "fault %d target", i);
            CHECKF(memcmp(&w2->faults[i].links, &w->faults[i].links, sizeof(w->faults[i].links)) == 0,
                   "fault %d links differ", i);
            CHECKF(memcmp(w2->faults[i].params, w->faults[i].params,
                          w->faults[i].ops->options_size) == 0,
                   "fault %d options differ", i);
        }
        struct strbuf sb2 = STRBUF_INIT;
        workload_to_yaml(w2, &sb2);
        CHECK_STR(sb_cstr(&sb2), sb_cstr(&sb));
        sb_free(&sb2);
    }
    struct json *j = workload_to_json(w);
    struct json *f0 = json_arr_get(json_obj_get(j, "faults"), 0);
    CHECK(f0 && json_obj_get(f0, "workers") && json_obj_get(f0, "nodes"));
    struct json *f1 = json_arr_get(json_obj_get(j, "faults"), 1);
    CHECK(f1 && strcmp(json_get_str(f1, "isolate", ""), "node:2") == 0 && !json_obj_get(f1, "workers"));
    json_free(j);
    workload_free(w2);
    workload_free(w);
    sb_free(&sb);
}

static void test_set_override(void)
{
    const char *sets[] = {"faults[0].nodes=[3]", "faults[0].workers=[2]"};
    struct ls_err err;
    struct workload *w = load(HEAD "faults: [{kind: partition}]\n", sets, 2, &err);
    CHECKF(w != NULL, "%s", err.msg);
    if (!w)
        return;
    char t[256];
    links_text(w, 1, t, sizeof(t));
    CHECK_STR(t, "2.3");
    workload_free(w);
}

static void test_registry(void)
{
    const char *kinds[] = {"latency", "partition", "bandwidth", "slicer"};
    for (int i = 0; i < 4; i++) {
        const struct fault_ops *ops = fault_find(kinds[i]);
        CHECKF(ops && ops->options && ops->start && ops->stop, "%s", kinds[i]);
        CHECK(ops && (ops->targets & (1u << TARGET_LINKS)));
    }
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_grid);
    RUN(test_isolate_split);
    RUN(test_minority_majority);
    RUN(test_other_targets);
    RUN(test_errors);
    RUN(test_echo_roundtrip);
    RUN(test_set_override);
    RUN(test_registry);
    return t_finish();
}
