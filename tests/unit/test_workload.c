/*
 * test_workload.c: the workload loader (harness/workload.c): a full file
 * with every key, defaults, one test per class of bad input (return code,
 * exact "FILE:LINE:COL" prefix and a key phrase), --set overrides, the
 * resolved echo round trip, and the committed docs/workload-reference.md
 * being what the tables generate. Needs no Redis.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload.h"
#include "locks/lock.h"
#include "faults/fault.h"
#include "tests/unit/testing.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define MS LS_NS_PER_MS
#define SEC LS_NS_PER_S

/* Load yaml (as "t.yaml") with sets; the error log lands in *log (caller frees). */
static int load_log(const char *yaml, const char *const *sets, int nsets, struct workload **w,
                    struct ls_err *err, char **log)
{
    size_t loglen = 0;
    FILE *f = open_memstream(log, &loglen);
    ls_err_clear(err);
    int rc = workload_load_string("t.yaml", yaml, sets, nsets, w, f, err);
    fclose(f);
    return rc;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* Assert that loading fails with LS_EWORKLOAD, err.msg starts with prefix
 * and contains phrase, and the log's first line is err.msg. */
static void expect_err_at(int line, const char *yaml, const char *const *sets, int nsets,
                          const char *prefix, const char *phrase)
{
    struct workload *w = (struct workload *)1;
    struct ls_err err;
    char *log = NULL;
    int rc = load_log(yaml, sets, nsets, &w, &err, &log);
    CHECKF(rc == LS_EWORKLOAD, "line %d: rc %d (%s)", line, rc, err.msg);
    CHECKF(w == NULL, "line %d: workload not NULL on error", line);
    CHECKF(strncmp(err.msg, prefix, strlen(prefix)) == 0, "line %d: '%s' does not start with '%s'",
           line, err.msg, prefix);
    CHECKF(strstr(err.msg, phrase) != NULL, "line %d: '%s' lacks '%s'", line, err.msg, phrase);
    CHECKF(log && strncmp(log, err.msg, strlen(err.msg)) == 0 && log[strlen(err.msg)] == '\n',
           "line %d: log does not start with the first error: '%s'", line, log ? log : "");
    CHECKF(!strchr(err.msg, '\n'), "line %d: message has a newline", line);
    free(log);
    workload_free(rc == 0 ? w : NULL);
}

#define EXPECT_ERR(yaml, prefix, phrase) expect_err_at(__LINE__, yaml, NULL, 0, prefix, phrase)
#define EXPECT_SET_ERR(yaml, set, prefix, phrase)                                           \
    do {                                                                                    \
        const char *sets_[] = {set};                                                        \
        expect_err_at(__LINE__, yaml, sets_, 1, prefix, phrase);                            \
    } while (0)

static struct workload *load_ok(const char *yaml, const char *const *sets, int nsets)
{
    struct workload *w = NULL;
    struct ls_err err;
    char *log = NULL;
    int rc = load_log(yaml, sets, nsets, &w, &err, &log);
    CHECKF(rc == 0, "load failed: %s\nlog:\n%s", err.msg, log ? log : "");
    CHECKF(log && !*log, "error log not empty: %s", log ? log : "");
    free(log);
    return rc == 0 ? w : NULL;
}

static char *to_json_text(const struct workload *w)
{
    struct json *j = workload_to_json(w);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, j, -1);
    json_free(j);
    return sb_steal(&sb);
}

static const char *json_str_at(const struct json *j, const char *path)
{
    const struct json *v = json_path(j, path);
    return v && v->type == JSON_STR ? v->s : "(missing)";
}

static const char full_yaml[] =
    "name: full-test\n"
    "description: \"every key: set\"\n"
    "seed: 42\n"
    "duration: 30s\n"
    "cluster:\n"
    "  topology: independent\n"
    "  nodes: 3\n"
    "  replicas: 2\n"
    "  sentinels: 1\n"
    "  persistence: aof-everysec\n"
    "  addresses: []\n"
    "lock:\n"
    "  impl: redis-single\n"
    "  ttl: 300ms\n"
    "  renew: {every: 100ms}\n"
    "  retry: {attempts: 20, delay: 5ms, jitter: 2ms}\n"
    "  fencing: false\n"
    "  wait_replicas: 0\n"
    "  options: {timeout: 150ms}\n"
    "workers:\n"
    "  count: 8\n"
    "  resources: 3\n"
    "  pick: round-robin\n"
    "  hold: {dist: lognormal, value: 30ms, sigma: 0.5, max: 200ms}\n"
    "  think: 2ms\n"
    "  on_lost: finish\n"
    "faults:\n"
    "  - {kind: pause, target: holder, resource: 1, at: 2s, duration: 500ms, every: 1.5s, count: 4}\n"
    "  - kind: pause\n"
    "    target: node:2\n"
    "    at: 5s\n"
    "    duration: 1s\n"
    "  - {kind: pause, target: worker:7, at: 0, duration: 100ms}\n"
    "check:\n"
    "  near_miss: 2ms\n"
    "  stuck_after: 5s\n"
    "expect:\n"
    "  checks.mutex.violations: \"> 0\"\n"
    "  checks.fencing.fenced_lost_updates: 0\n"
    "  counts.grants: \">=100\"\n";

static void test_full(void)
{
    struct workload *w = load_ok(full_yaml, NULL, 0);
    REQUIRE(w);
    CHECK_STR(w->file, "t.yaml");
    CHECK_STR(w->name, "full-test");
    CHECK_STR(w->description, "every key: set");
    CHECK_INT(w->seed, 42);
    CHECK_INT(w->duration, 30 * SEC);
    CHECK_INT(w->cluster.topology, TOPO_INDEPENDENT);
    CHECK_INT(w->cluster.nodes, 3);
    CHECK_INT(w->cluster.replicas, 2);
    CHECK_INT(w->cluster.sentinels, 1);
    CHECK_INT(w->cluster.persistence, PERSIST_AOF_EVERYSEC);
    CHECK_STR(w->lock.impl, "redis-single");
    CHECK(w->lock.ops == lock_find("redis-single"));
    CHECK_INT(w->lock.ttl, 300 * MS);
    CHECK_INT(w->lock.renew_every, 100 * MS);
    CHECK_INT(w->lock.retry.attempts, 20);
    CHECK_INT(w->lock.retry.delay, 5 * MS);
    CHECK_INT(w->lock.retry.jitter, 2 * MS);
    CHECK_INT(w->lock.fencing, 0);
    CHECK_INT(w->lock.wait_replicas, 0);
    CHECK(w->lock.options != NULL);
    CHECK_INT(w->workers.count, 8);
    CHECK_INT(w->workers.resources, 3);
    CHECK_INT(w->workers.pick, PICK_ROUND_ROBIN);
    CHECK_INT(w->workers.hold.kind, DIST_LOGNORMAL);
    CHECK_INT(w->workers.hold.value, 30 * MS);
    CHECK(w->workers.hold.sigma == 0.5);
    CHECK_INT(w->workers.hold.max, 200 * MS);
    CHECK_INT(w->workers.think.kind, DIST_FIXED);
    CHECK_INT(w->workers.think.value, 2 * MS);
    CHECK_INT(w->workers.on_lost, ON_LOST_FINISH);
    REQUIRE(w->nfaults == 3);
    const struct fault_spec *f = &w->faults[0];
    CHECK(f->ops == fault_find("pause"));
    CHECK_INT(f->target, TARGET_HOLDER);
    CHECK_INT(f->target_index, -1);
    CHECK_INT(f->resource, 1);
    CHECK_INT(f->at, 2 * SEC);
    CHECK_INT(f->duration, 500 * MS);
    CHECK_INT(f->every, 1500 * MS);
    CHECK_INT(f->count, 4);
    CHECK_INT(f->line, 28);
    CHECK_INT(f->col, 5);
    f = &w->faults[1];
    CHECK_INT(f->target, TARGET_NODE);
    CHECK_INT(f->target_index, 2);
    CHECK_INT(f->resource, -1);
    CHECK_INT(f->every, 0);
    CHECK_INT(f->count, 0);
    CHECK_INT(f->line, 29);
    CHECK_INT(f->col, 5);
    f = &w->faults[2];
    CHECK_INT(f->target, TARGET_WORKER);
    CHECK_INT(f->target_index, 7);
    CHECK_INT(f->at, 0);
    CHECK_INT(w->check.near_miss, 2 * MS);
    CHECK_INT(w->check.stuck_after, 5 * SEC);
    REQUIRE(w->nexpects == 3);
    CHECK_STR(w->expects[0].path, "checks.mutex.violations");
    CHECK_INT(w->expects[0].op, EXPECT_GT);
    CHECK(w->expects[0].value == 0);
    CHECK_STR(w->expects[0].want, "> 0");
    CHECK_INT(w->expects[0].line, 38);
    CHECK_INT(w->expects[0].col, 3);
    CHECK_INT(w->expects[1].op, EXPECT_EQ);
    CHECK_STR(w->expects[1].want, "0");
    CHECK_INT(w->expects[2].op, EXPECT_GE);
    CHECK(w->expects[2].value == 100);

    struct json *j = workload_to_json(w);
    CHECK_STR(json_str_at(j, "lock.ttl"), "300ms");
    CHECK_STR(json_str_at(j, "lock.renew.every"), "100ms");
    CHECK_STR(json_str_at(j, "lock.options.timeout"), "150ms");
    CHECK_STR(json_str_at(j, "workers.hold.dist"), "lognormal");
    CHECK_STR(json_str_at(j, "faults[1].target"), "node:2");
    CHECK_STR(json_str_at(j, "faults[0].every"), "1500ms");
    CHECK_INT(json_get_int(j, "seed", -1), 42);
    CHECK(json_obj_get(j, "expect") && json_obj_get(j, "expect")->n == 3);
    json_free(j);
    workload_free(w);
}

static void test_defaults(void)
{
    const char *inputs[] = {"name: x\n", "{}\n"};
    for (int i = 0; i < 2; i++) {
        struct workload *w = load_ok(inputs[i], NULL, 0);
        REQUIRE(w);
        CHECK_STR(w->name, i == 0 ? "x" : "t");
        CHECK_STR(w->description, "");
        CHECK_INT(w->seed, 1);
        CHECK_INT(w->duration, 10 * SEC);
        CHECK_INT(w->cluster.topology, TOPO_INDEPENDENT);
        CHECK_INT(w->cluster.nodes, 1);
        CHECK_INT(w->cluster.replicas, 1);
        CHECK_INT(w->cluster.sentinels, 0);
        CHECK_INT(w->cluster.persistence, PERSIST_NONE);
        CHECK_STR(w->lock.impl, "redis-single");
        CHECK(w->lock.ops == lock_find("redis-single"));
        CHECK_INT(w->lock.ttl, 1 * SEC);
        CHECK_INT(w->lock.renew_every, 0);
        CHECK_INT(w->lock.retry.attempts, 50);
        CHECK_INT(w->lock.retry.delay, 10 * MS);
        CHECK_INT(w->lock.retry.jitter, 10 * MS);
        CHECK_INT(w->lock.fencing, 1);
        CHECK_INT(w->lock.wait_replicas, 0);
        CHECK_INT(w->workers.count, 6);
        CHECK_INT(w->workers.resources, 2);
        CHECK_INT(w->workers.pick, PICK_UNIFORM);
        CHECK_INT(w->workers.hold.kind, DIST_UNIFORM);
        CHECK_INT(w->workers.hold.min, 20 * MS);
        CHECK_INT(w->workers.hold.max, 80 * MS);
        CHECK_INT(w->workers.think.kind, DIST_FIXED);
        CHECK_INT(w->workers.think.value, 5 * MS);
        CHECK_INT(w->workers.on_lost, ON_LOST_ABORT);
        CHECK_INT(w->nfaults, 0);
        CHECK_INT(w->check.near_miss, 1 * MS);
        CHECK_INT(w->check.stuck_after, -1); /* auto: checkers/check.c derives it */
        CHECK_INT(w->nexpects, 0);
        workload_free(w);
    }
    /* the default name comes from the file name */
    struct workload *w = NULL;
    struct ls_err err;
    ls_err_clear(&err);
    CHECK(workload_load_string("dir/My Test.yml", "seed: 3\n", NULL, 0, &w, NULL, &err) == 0);
    if (w)
        CHECK_STR(w->name, "My-Test");
    workload_free(w);
    /* a fault with only its kind gets every common default */
    w = load_ok("faults: [{kind: pause}]\n", NULL, 0);
    REQUIRE(w && w->nfaults == 1);
    CHECK_INT(w->faults[0].target, TARGET_HOLDER);
    CHECK_INT(w->faults[0].resource, -1);
    CHECK_INT(w->faults[0].at, 1 * SEC);
    CHECK_INT(w->faults[0].duration, 1 * SEC);
    CHECK_INT(w->faults[0].every, 0);
    CHECK_INT(w->faults[0].count, 0);
    workload_free(w);
}

static void test_bad_keys_and_values(void)
{
    EXPECT_ERR("worker: {}\n", "t.yaml:1:1: ",
               "unknown key 'worker' at top level; did you mean 'workers'?");
    EXPECT_ERR("name: x\nlock:\n  tll: 1s\n", "t.yaml:3:3: ",
               "unknown key 'tll' in lock; did you mean 'ttl'?");
    EXPECT_ERR("zzzzzz: 1\n", "t.yaml:1:1: ", "unknown key 'zzzzzz' at top level; valid keys: name,");
    EXPECT_ERR("workers:\n  count: six\n", "t.yaml:2:10: ",
               "workers.count: expected an integer, got 'six'");
    EXPECT_ERR("workers:\n  count: 0\n", "t.yaml:2:10: ", "workers.count: 0 is out of range 1..1024");
    EXPECT_ERR("duration: 50ms\n", "t.yaml:1:11: ", "duration: 50ms is out of range 100ms..24h");
    EXPECT_ERR("duration: 100\n", "t.yaml:1:11: ", "expected a duration, got '100'; duration needs a unit");
    EXPECT_ERR("seed: -1\n", "t.yaml:1:7: ", "seed: expected a non-negative integer, got '-1'");
    EXPECT_ERR("lock: {fencing: maybe}\n", "t.yaml:1:17: ", "lock.fencing: expected true or false, got 'maybe'");
    EXPECT_ERR("workers: {pick: zipff}\n", "t.yaml:1:17: ",
               "workers.pick: unknown value 'zipff'; did you mean 'zipf'?");
    EXPECT_ERR("cluster: {persistence: always}\n", "t.yaml:1:24: ",
               "choose one of: none, aof-everysec, aof-always");
    EXPECT_ERR("lock:\n  impl: redis-singel\n", "t.yaml:2:9: ",
               "lock.impl: unknown lock implementation 'redis-singel'; did you mean 'redis-single'? valid: ");
    EXPECT_ERR("lock: 5\n", "t.yaml:1:7: ", "lock: expected a mapping, got a scalar");
    EXPECT_ERR("workers: {count: [1]}\n", "t.yaml:1:18: ", "workers.count: expected an integer, got a list");
    EXPECT_ERR("name: 'my test'\n", "t.yaml:1:7: ", "name: 'my test' is not a valid name");
    EXPECT_ERR("name: .hidden\n", "t.yaml:1:7: ", "is not a valid name");
    EXPECT_ERR("cluster:\n  topology: replicated\n  replicas: 0\n", "t.yaml:3:13: ",
               "cluster.replicas: a replicated topology needs at least 1 replica");
    EXPECT_ERR("cluster: {nodes: 16}\n", "t.yaml:1:18: ", "cluster.nodes: 16 is out of range 1..15");
    EXPECT_ERR("cluster: {addresses: ['127.0.0.1:6379']}\n", "t.yaml:1:22: ",
               "cluster.addresses: only valid with cluster.topology external");
    EXPECT_ERR("cluster: {addresses: [nohost]}\n", "t.yaml:1:23: ",
               "cluster.addresses[0]: expected host:port");
    EXPECT_ERR("lock: {wait_replicas: 1}\n", "t.yaml:1:23: ",
               "lock.wait_replicas: must be 0 with cluster.topology independent");
    EXPECT_ERR("lock: {ttl: 100ms, renew: {every: 100ms}}\n", "t.yaml:1:35: ",
               "lock.renew.every: 100ms must be shorter than lock.ttl 100ms");
    EXPECT_ERR("lock: {renew: {evry: 100ms}}\n", "t.yaml:1:16: ",
               "unknown key 'evry' in lock.renew; did you mean 'every'?");
    EXPECT_ERR("lock: {renew: 100ms}\n", "t.yaml:1:15: ", "lock.renew: expected 'none' or {every: DURATION}");
    EXPECT_ERR("lock: {impl: naive-del, renew: {every: 100ms}}\n", "t.yaml:1:25: ",
               "lock.renew: lock implementation 'naive-del' cannot renew");
    EXPECT_ERR("lock:\n  options: {timeot: 1s}\n", "t.yaml:2:13: ",
               "unknown key 'timeot' in lock.options; did you mean 'timeout'?");
    EXPECT_ERR("lock:\n  options: {timeout: 2h}\n", "t.yaml:2:22: ",
               "lock.options.timeout: 2h is out of range 1ms..1m");
    EXPECT_ERR("lock: {retry: {attempts: 0}}\n", "t.yaml:1:26: ",
               "lock.retry.attempts: 0 is out of range 1..1000000");
    EXPECT_ERR("check: {near_miss: 11s}\n", "t.yaml:1:20: ", "check.near_miss: 11s is out of range 0..10s");
}

static void test_bad_dists(void)
{
    EXPECT_ERR("workers: {hold: {dist: uniform, min: 50ms, max: 10ms}}\n", "t.yaml:1:38: ",
               "workers.hold: min 50ms is greater than max 10ms");
    EXPECT_ERR("workers: {hold: {dist: fixed}}\n", "t.yaml:1:17: ", "workers.hold: dist fixed needs value");
    EXPECT_ERR("workers: {hold: {dist: uniform, min: 1ms}}\n", "t.yaml:1:17: ",
               "workers.hold: dist uniform needs max");
    EXPECT_ERR("workers: {hold: {dist: fixed, value: 5ms, min: 1ms}}\n", "t.yaml:1:48: ",
               "workers.hold: 'min' does not apply to dist fixed (it takes: value)");
    EXPECT_ERR("workers: {think: {dist: gaussian, value: 1ms}}\n", "t.yaml:1:25: ",
               "workers.think.dist: unknown value 'gaussian'");
    EXPECT_ERR("workers: {hold: {dist: exponential, mean: 0}}\n", "t.yaml:1:43: ",
               "workers.hold.mean: must be greater than 0");
    EXPECT_ERR("workers: {hold: {dist: lognormal, value: 10ms, sigma: 0}}\n", "t.yaml:1:55: ",
               "workers.hold.sigma: must be greater than 0");
    EXPECT_ERR("workers: {hold: {min: 1ms, max: 2ms}}\n", "t.yaml:1:17: ", "workers.hold: missing 'dist'");
    EXPECT_ERR("workers: {hold: {dist: uniform, min: 1ms, maks: 2ms}}\n", "t.yaml:1:43: ",
               "unknown key 'maks' in workers.hold; did you mean 'max'?");
    EXPECT_ERR("workers: {hold: soon}\n", "t.yaml:1:17: ", "workers.hold: expected a duration, got 'soon'");
    EXPECT_ERR("workers: {hold: 2h}\n", "t.yaml:1:17: ", "workers.hold: 2h is out of range 0..1h");
}

static void test_bad_faults(void)
{
    EXPECT_ERR("faults:\n  - {kind: pasue}\n", "t.yaml:2:12: ",
               "faults[0].kind: unknown fault kind 'pasue'; did you mean 'pause'? valid: pause");
    EXPECT_ERR("faults:\n  - {at: 1s}\n", "t.yaml:2:5: ", "faults[0]: missing 'kind'; one of: pause");
    EXPECT_ERR("faults: [pause]\n", "t.yaml:1:10: ", "faults[0]: expected a mapping");
    EXPECT_ERR("faults: {kind: pause}\n", "t.yaml:1:9: ", "faults: expected a list of fault mappings");
    EXPECT_ERR("faults:\n  - {kind: pause, durration: 1s}\n", "t.yaml:2:19: ",
               "unknown key 'durration' in faults[0]; did you mean 'duration'?");
    EXPECT_ERR("faults:\n  - {kind: pause, target: worker:6}\n", "t.yaml:2:27: ",
               "faults[0].target: worker 6 is out of range 0..5 (workers.count is 6)");
    EXPECT_ERR("faults:\n  - {kind: pause, target: node:1}\n", "t.yaml:2:27: ",
               "faults[0].target: node 1 is out of range 0..0 (cluster.nodes is 1)");
    EXPECT_ERR("faults:\n  - {kind: pause, target: leader}\n", "t.yaml:2:27: ",
               "faults[0].target: unknown target 'leader'; one of: holder, worker:N");
    EXPECT_ERR("faults:\n  - {kind: pause, target: worker:x}\n", "t.yaml:2:27: ",
               "faults[0].target: expected worker:N with N a number");
    EXPECT_ERR("faults:\n  - {kind: pause, at: 10s}\n", "t.yaml:2:23: ",
               "faults[0].at: 10s is not before the end of the run (duration 10s)");
    EXPECT_ERR("duration: 500ms\nfaults:\n  - {kind: pause}\n", "t.yaml:3:5: ",
               "faults[0].at: 1s (the default) is not before the end of the run");
    EXPECT_ERR("faults:\n  - {kind: pause, duration: 1s, every: 500ms}\n", "t.yaml:2:40: ",
               "faults[0].every: 500ms is shorter than the fault's duration 1s");
    EXPECT_ERR("faults:\n  - {kind: pause, duration: 0}\n", "t.yaml:2:29: ",
               "faults[0].duration: 0 is out of range 1ns..24h");
    EXPECT_ERR("faults:\n  - {kind: pause, count: 3}\n", "t.yaml:2:26: ",
               "faults[0].count: 3 occurrences need 'every' > 0");
    EXPECT_ERR("faults:\n  - {kind: pause, target: worker:1, resource: 0}\n", "t.yaml:2:47: ",
               "faults[0].resource: only applies with target holder");
    EXPECT_ERR("faults:\n  - {kind: pause, resource: 2}\n", "t.yaml:2:29: ",
               "faults[0].resource: 2 is out of range -1..1 (workers.resources is 2)");
    EXPECT_ERR("faults:\n  - {kind: pause}\n  - {kind: pause, at: 1m}\n", "t.yaml:3:23: ",
               "faults[1].at: 1m is not before the end of the run");
}

static void test_bad_expect(void)
{
    EXPECT_ERR("expect:\n  checks.mutex.violatons: 0\n", "t.yaml:2:3: ",
               "unknown result path 'checks.mutex.violatons'; see docs/result-format.md");
    EXPECT_ERR("expect:\n  counts.grants: \"~ 5\"\n", "t.yaml:2:18: ",
               "expect 'counts.grants': bad condition '~ 5'; write a number or \"OP NUMBER\"");
    EXPECT_ERR("expect:\n  counts.grants: \">= lots\"\n", "t.yaml:2:18: ", "bad condition '>= lots'");
    EXPECT_ERR("expect:\n  counts.grants: [1]\n", "t.yaml:2:18: ",
               "expect 'counts.grants': expected a number or a condition");
    EXPECT_ERR("expect: [counts.grants]\n", "t.yaml:1:9: ", "expect: expected a mapping");
    /* conditions accepted in every spelling */
    struct workload *w = load_ok("expect:\n  counts.grants: \">=100\"\n  counts.busy: \"< 5\"\n"
                                 "  counts.lost: \"!= 1.5\"\n  counts.crashes: '== 0'\n"
                                 "  counts.attempts: <= 10\n  counts.failed: 3\n",
                                 NULL, 0);
    REQUIRE(w && w->nexpects == 6);
    CHECK_INT(w->expects[0].op, EXPECT_GE);
    CHECK_INT(w->expects[1].op, EXPECT_LT);
    CHECK(w->expects[1].value == 5);
    CHECK_INT(w->expects[2].op, EXPECT_NE);
    CHECK(w->expects[2].value == 1.5);
    CHECK_INT(w->expects[3].op, EXPECT_EQ);
    CHECK_INT(w->expects[4].op, EXPECT_LE);
    CHECK_INT(w->expects[5].op, EXPECT_EQ);
    CHECK(w->expects[5].value == 3);
    workload_free(w);
}

static void test_bad_yaml(void)
{
    EXPECT_ERR("name: x\nlock: [a\n", "t.yaml:3:1: ", "malformed YAML: did not find expected ',' or ']'");
    EXPECT_ERR("name: x\n  seed: 1\n", "t.yaml:2:7: ", "malformed YAML: mapping values are not allowed");
    EXPECT_ERR("expect:\n  counts.grants: > 0\n", "t.yaml:2:20: ", "quote values that start with '>'");
    EXPECT_ERR("", "t.yaml:1:1: ", "the workload is empty");
    EXPECT_ERR("# only a comment\n", "t.yaml:1:1: ", "the workload is empty");
    EXPECT_ERR("---\n", "t.yaml:1:1: ", "the workload is empty");
    EXPECT_ERR("- a\n- b\n", "t.yaml:1:1: ", "expected a mapping of workload keys");
    EXPECT_ERR("just text\n", "t.yaml:1:1: ", "at top level, got a scalar");
    EXPECT_ERR("name: a\n---\nname: b\n", "t.yaml:2:1: ", "only one YAML document is allowed");
    EXPECT_ERR("lock:\n  ttl: 1s\n  impl: busted\n  ttl: 2s\n", "t.yaml:4:3: ",
               "duplicate key 'ttl' (first at line 2)");
    EXPECT_ERR("lock: &l {ttl: 1s}\ncheck: *l\n", "t.yaml:1:7: ", "aliases are not supported");
    EXPECT_ERR("seed: !!int 5\n", "t.yaml:1:7: ", "YAML tags are not supported");
    EXPECT_ERR("expect:\n  counts.grants: != 0\n", "t.yaml:2:18: ", "quote a value that starts with '!'");
    EXPECT_ERR("name: a\xff\n", "t.yaml:1:8: ", "not valid UTF-8 text");
    EXPECT_ERR("name: a\x01\n", "t.yaml:1:8: ", "control characters are not allowed");
    EXPECT_ERR("{a: 1}: 2\n", "t.yaml:1:1: ", "mapping keys must be plain strings");

    char *big = malloc(6000);
    snprintf(big, 6000, "description: ");
    memset(big + 13, 'a', 5000);
    snprintf(big + 5013, 100, "\n");
    EXPECT_ERR(big, "t.yaml:1:14: ", "string is too long (5000 bytes; the limit is 4096)");
    free(big);

    /* nesting bomb */
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, "a: ");
    for (int i = 0; i < 100; i++)
        sb_putc(&sb, '[');
    for (int i = 0; i < 100; i++)
        sb_putc(&sb, ']');
    sb_putc(&sb, '\n');
    EXPECT_ERR(sb_cstr(&sb), "t.yaml:1:", "nesting is too deep");
    sb_free(&sb);
}

static void test_files(void)
{
    struct workload *w = (struct workload *)1;
    struct ls_err err;
    char *dir = t_tmpdir();
    char path[4096];

    ls_err_clear(&err);
    snprintf(path, sizeof(path), "%s/missing.yaml", dir);
    CHECK_INT(workload_load(path, NULL, 0, &w, NULL, &err), LS_EIO);
    CHECK(w == NULL);
    char want[4200];
    snprintf(want, sizeof(want), "%s: cannot read: No such file or directory;", path);
    CHECKF(strncmp(err.msg, want, strlen(want)) == 0, "got '%s'", err.msg);

    ls_err_clear(&err);
    CHECK_INT(workload_load(dir, NULL, 0, &w, NULL, &err), LS_EIO);
    snprintf(want, sizeof(want), "%s: cannot read: Is a directory;", dir);
    CHECKF(strncmp(err.msg, want, strlen(want)) == 0, "got '%s'", err.msg);

    /* a real file: default name from its base name */
    snprintf(path, sizeof(path), "%s/pause-demo.yaml", dir);
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs("seed: 9\nworkers:\n  count: 2\n", f);
    fclose(f);
    ls_err_clear(&err);
    CHECK_INT(workload_load(path, NULL, 0, &w, NULL, &err), 0);
    if (w) {
        CHECK_STR(w->name, "pause-demo");
        CHECK_STR(w->file, path);
        CHECK_INT(w->workers.count, 2);
    }
    workload_free(w);

    /* errors in a file name the file */
    f = fopen(path, "w");
    REQUIRE(f);
    fputs("seed: 9\nworkers:\n  count: many\n", f);
    fclose(f);
    ls_err_clear(&err);
    CHECK_INT(workload_load(path, NULL, 0, &w, NULL, &err), LS_EWORKLOAD);
    snprintf(want, sizeof(want), "%s:3:10: workers.count: expected an integer, got 'many'", path);
    CHECK_STR(err.msg, want);

    /* too large */
    snprintf(path, sizeof(path), "%s/huge.yaml", dir);
    f = fopen(path, "w");
    REQUIRE(f);
    for (int i = 0; i < 1100 * 1024 / 16; i++)
        fputs("# padding line.\n", f);
    fclose(f);
    ls_err_clear(&err);
    CHECK_INT(workload_load(path, NULL, 0, &w, NULL, &err), LS_EWORKLOAD);
    snprintf(want, sizeof(want), "%s: file is too large", path);
    CHECKF(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);

    t_rmdir(dir);
    free(dir);
}

static void test_many_errors(void)
{
    struct workload *w = NULL;
    struct ls_err err;
    char *log = NULL;
    /* three errors: all collected, first kept */
    int rc = load_log("worker: 1\nseed: x\nlock: {ttl: 0}\n", NULL, 0, &w, &err, &log);
    CHECK_INT(rc, LS_EWORKLOAD);
    CHECK_INT(count_lines(log), 3);
    CHECKF(strstr(log, "t.yaml:1:1: unknown key 'worker'") == log, "%s", log);
    CHECK(strstr(log, "t.yaml:2:7: seed: expected a non-negative integer, got 'x'\n") != NULL);
    CHECK(strstr(log, "t.yaml:3:13: lock.ttl: 0 is out of range 1ms..1h\n") != NULL);
    CHECKF(strncmp(err.msg, "t.yaml:1:1: unknown key 'worker'", 31) == 0, "%s", err.msg);
    free(log);

    /* more than 20: 20 lines plus one summary */
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 25; i++)
        sb_printf(&sb, "bogus%d: 1\n", i);
    log = NULL;
    rc = load_log(sb_cstr(&sb), NULL, 0, &w, &err, &log);
    CHECK_INT(rc, LS_EWORKLOAD);
    CHECK_INT(count_lines(log), 21);
    CHECKF(strstr(log, "t.yaml: 5 more errors not shown\n") != NULL, "%s", log);
    free(log);
    sb_free(&sb);

    /* NULL errlog and NULL err are fine */
    CHECK_INT(workload_load_string("t.yaml", "seed: x\n", NULL, 0, &w, NULL, NULL), LS_EWORKLOAD);
    CHECK(w == NULL);
}

static void test_set_ok(void)
{
    const char *base = "name: base\nlock:\n  ttl: 1s\nfaults:\n  - {kind: pause, at: 1s, duration: 500ms}\n";
    const char *sets[] = {
        "lock.ttl=500ms",
        "workers.hold={dist: fixed, value: 5ms}",
        "faults[0].duration=2s",
        "faults.0.at=3s",
        "expect.counts.grants=>= 100",
        "check.near_miss=0",
        "name = over",
        "lock.retry.attempts=3",
        "faults[1].kind=pause",
        "faults[1].target=worker:2",
        "lock.renew={every: 100ms}",
        "description='quoted: yes'",
    };
    int n = (int)(sizeof(sets) / sizeof(sets[0]));
    struct workload *w = load_ok(base, sets, n);
    REQUIRE(w);
    CHECK_STR(w->name, "over");
    CHECK_STR(w->description, "quoted: yes");
    CHECK_INT(w->lock.ttl, 500 * MS);
    CHECK_INT(w->lock.renew_every, 100 * MS);
    CHECK_INT(w->lock.retry.attempts, 3);
    CHECK_INT(w->lock.retry.delay, 10 * MS);
    CHECK_INT(w->workers.hold.kind, DIST_FIXED);
    CHECK_INT(w->workers.hold.value, 5 * MS);
    CHECK_INT(w->check.near_miss, 0);
    REQUIRE(w->nfaults == 2);
    CHECK_INT(w->faults[0].duration, 2 * SEC);
    CHECK_INT(w->faults[0].at, 3 * SEC);
    CHECK_INT(w->faults[1].target, TARGET_WORKER);
    CHECK_INT(w->faults[1].target_index, 2);
    REQUIRE(w->nexpects == 1);
    CHECK_STR(w->expects[0].path, "counts.grants");
    CHECK_INT(w->expects[0].op, EXPECT_GE);
    CHECK(w->expects[0].value == 100);
    workload_free(w);

    /* later overrides win; overriding a null section works */
    const char *sets2[] = {"workers.count=3", "workers.count=4", "check.stuck_after=1s"};
    w = load_ok("name: x\ncheck:\n", sets2, 3);
    REQUIRE(w);
    CHECK_INT(w->workers.count, 4);
    CHECK_INT(w->check.stuck_after, 1 * SEC);
    workload_free(w);
}

static void test_set_bad(void)
{
    EXPECT_SET_ERR("name: x\n", "lock.tt=1s", "--set 'lock.tt=1s': ",
                   "unknown key 'tt' in lock; did you mean 'ttl'?");
    EXPECT_SET_ERR("name: x\n", "lokc.ttl=1s", "--set 'lokc.ttl=1s': ",
                   "unknown key 'lokc' at top level; did you mean 'lock'?");
    EXPECT_SET_ERR("name: x\n", "workers.count=six", "--set 'workers.count=six': ",
                   "workers.count: expected an integer, got 'six'");
    EXPECT_SET_ERR("name: x\n", "nonsense", "--set 'nonsense': ", "expected key.path=value");
    EXPECT_SET_ERR("name: x\n", "=5", "--set '=5': ", "expected key.path=value");
    EXPECT_SET_ERR("name: x\n", "lock..ttl=1s", "--set 'lock..ttl=1s': ", "empty key in key path");
    EXPECT_SET_ERR("faults: [{kind: pause}]\n", "faults[3].at=1s", "--set 'faults[3].at=1s': ",
                   "faults has 1 entries; index 3 is out of range");
    EXPECT_SET_ERR("faults: [{kind: pause}]\n", "faults.x=1s", "--set 'faults.x=1s': ",
                   "faults is a list; write faults[N]");
    EXPECT_SET_ERR("lock: {ttl: 1s}\n", "lock[0]=1", "--set 'lock[0]=1': ", "lock is not a list");
    EXPECT_SET_ERR("name: x\n", "lock[0]=1", "--set 'lock[0]=1': ", "lock: expected a mapping, got a list");
    EXPECT_SET_ERR("lock: {ttl: 1s}\n", "lock.ttl.x=1", "--set 'lock.ttl.x=1': ",
                   "lock.ttl is a single value, so it has no 'x'");
    EXPECT_SET_ERR("name: x\n", "workers.hold={dist: fixed", "--set 'workers.hold={dist: fixed': ",
                   "malformed YAML");
    EXPECT_SET_ERR("name: x\n", "expect.counts.grantz=1", "--set 'expect.counts.grantz=1': ",
                   "unknown result path 'counts.grantz'");
    EXPECT_SET_ERR("name: x\n", "faults[0].at=2s", "--set 'faults[0].at=2s': ",
                   "faults[0]: missing 'kind'");
    /* an error in the file is still reported at its position next to --set ones */
    struct workload *w = NULL;
    struct ls_err err;
    char *log = NULL;
    const char *sets[] = {"lock.tt=1s"};
    CHECK_INT(load_log("seed: x\n", sets, 1, &w, &err, &log), LS_EWORKLOAD);
    CHECK_INT(count_lines(log), 2);
    CHECK(strstr(log, "t.yaml:1:7: seed:") != NULL);
    CHECK(strstr(log, "--set 'lock.tt=1s': unknown key 'tt' in lock") != NULL);
    free(log);
}

/* load -> yaml -> load gives the same workload (compared as JSON). */
static void round_trip(const char *yaml, const char *const *sets, int nsets)
{
    struct workload *w1 = load_ok(yaml, sets, nsets);
    REQUIRE(w1);
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w1, &sb);
    struct workload *w2 = load_ok(sb_cstr(&sb), NULL, 0);
    CHECKF(w2 != NULL, "echo does not load:\n%s", sb_cstr(&sb));
    if (w2) {
        char *j1 = to_json_text(w1), *j2 = to_json_text(w2);
        CHECKF(strcmp(j1, j2) == 0, "\n%s\n!=\n%s", j1, j2);
        struct strbuf sb2 = STRBUF_INIT;
        workload_to_yaml(w2, &sb2);
        CHECK_STR(sb_cstr(&sb), sb_cstr(&sb2));
        sb_free(&sb2);
        free(j1);
        free(j2);
    }
    workload_free(w1);
    workload_free(w2);
    sb_free(&sb);
}

static void test_round_trip(void)
{
    round_trip(full_yaml, NULL, 0);
    round_trip("{}\n", NULL, 0);
    round_trip("name: \"true\"\ndescription: \"odd \\\"chars\\\" \\\\ # : - {x} \\t\\u00e9\"\nseed: 18446744073709551615\n"
               "workers: {hold: {dist: exponential, mean: 7ms}, think: {dist: exponential, mean: 1ms, max: 9ms}}\n"
               "lock: {impl: naive-get-set, options: {gap: 3ms}}\n",
               NULL, 0);
    const char *sets[] = {"workers.hold=1.5ms", "expect.checks.mutex.violations=>0"};
    round_trip("name: x\n", sets, 2);
}

static void test_reference(void)
{
    struct strbuf gen = STRBUF_INIT;
    workload_write_reference(&gen);
    CHECK(strstr(sb_cstr(&gen), "| `lock.ttl` | duration | `1s` | 1ms..1h |") != NULL);
    CHECK(strstr(sb_cstr(&gen), "| `workers.count` | integer | `6` | 1..1024 |") != NULL);
    const char *src = getenv("LS_SOURCE_DIR");
    if (!src)
        src = LS_SOURCE_DIR;
    char path[4096];
    snprintf(path, sizeof(path), "%s/docs/workload-reference.md", src);
    if (getenv("LS_UPDATE_REFERENCE")) {
        CHECK(sb_write_file(&gen, path) == 0);
        sb_free(&gen);
        return;
    }
    struct strbuf cur = STRBUF_INIT;
    FILE *f = fopen(path, "r");
    if (f) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
            sb_append(&cur, buf, n);
        fclose(f);
    }
    CHECKF(f && strcmp(sb_cstr(&cur), sb_cstr(&gen)) == 0,
           "%s is out of date with the options tables; regenerate it with\n"
           "    lockstorm validate --reference > docs/workload-reference.md\n"
           "(or run test_workload with LS_UPDATE_REFERENCE=1)",
           path);
    sb_free(&cur);
    sb_free(&gen);
}

int main(void)
{
    RUN(test_full);
    RUN(test_defaults);
    RUN(test_bad_keys_and_values);
    RUN(test_bad_dists);
    RUN(test_bad_faults);
    RUN(test_bad_expect);
    RUN(test_bad_yaml);
    RUN(test_files);
    RUN(test_many_errors);
    RUN(test_set_ok);
    RUN(test_set_bad);
    RUN(test_round_trip);
    RUN(test_reference);
    return t_finish();
}
