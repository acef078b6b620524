/*
 * test_result.c: the result model's assembly, expectations, verdict and
 * exit code, the expectation-path table, and the text/JSON renderers.
 * Golden tests render fixed, hand-written models (so checker changes do not
 * move them) and compare with the .txt files in tests/unit/golden/;
 * LS_UPDATE_GOLDEN=1 rewrites them. One test feeds a small in-memory
 * history through result_build and the real checkers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <math.h>

#include "harness/workload.h"
#include "reports/result.h"
#include "harness/holds.h"
#include "harness/verdict.h"
#include "model/checkschema.h"
#include "tests/unit/testing.h"

/* ---- fixtures ------------------------------------------------------------- */

/* A failing run: stale-holder violations under pause faults, fencing holds. */
static const char FIXTURE_FAIL[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"tool_version\":\"0.1.0\",\"seed\":7,"
    "\"verdict\":\"unknown\",\"source\":\"runs/demo-20261122T053122Z\","
    "\"started_at\":\"2026-11-22T05:31:22Z\",\"ended_at\":\"2026-11-22T05:31:32Z\","
    "\"duration_s\":10.021,\"interrupted\":false,"
    "\"workload\":{\"name\":\"demo\",\"seed\":7,\"duration\":\"10s\","
    "  \"lock\":{\"impl\":\"redis-single\",\"ttl\":\"300ms\",\"fencing\":true},"
    "  \"workers\":{\"count\":6,\"resources\":2}},"
    "\"verdict_checks\":\"invalid\","
    "\"counts\":{\"attempts\":1210,\"grants\":602,\"busy\":600,\"failed\":0,\"unknown\":8,"
    "  \"releases\":596,\"release_not_owner\":6,\"release_failed\":0,\"renewals\":0,"
    "  \"renew_failed\":0,\"lost\":0,\"crashes\":0,\"expired_grants\":14,\"store_ops\":2408,"
    "  \"events\":7236},"
    "\"latency\":{"
    "  \"acquire\":{\"count\":1210,\"p50_ms\":0.213,\"p90_ms\":0.41,\"p99_ms\":1.25,"
    "    \"p999_ms\":3.1,\"max_ms\":4.52,\"mean_ms\":0.2876},"
    "  \"acquire_wait\":{\"count\":602,\"p50_ms\":12.5,\"p90_ms\":48,\"p99_ms\":310.2,"
    "    \"p999_ms\":520,\"max_ms\":530.1,\"mean_ms\":21.4},"
    "  \"release\":{\"count\":602,\"p50_ms\":0.18,\"p90_ms\":0.35,\"p99_ms\":0.9,"
    "    \"p999_ms\":2,\"max_ms\":2.2,\"mean_ms\":0.21},"
    "  \"renew\":{\"count\":0,\"p50_ms\":null,\"p90_ms\":null,\"p99_ms\":null,"
    "    \"p999_ms\":null,\"max_ms\":null,\"mean_ms\":null}},"
    "\"throughput\":{\"grants_per_s\":60.07,\"attempts_per_s\":120.74},"
    "\"checks\":{"
    "  \"mutex\":{\"verdict\":\"invalid\",\"valid\":false,\"violations\":14,\"near_misses\":3,"
    "    \"by_class\":{\"stale_holder\":14,\"lock_broken\":0},\"capacity\":1,\"holds\":602},"
    "  \"fencing\":{\"verdict\":\"valid\",\"valid\":true,\"offered\":true,"
    "    \"plain_lost_updates\":9,\"fenced_lost_updates\":0,\"stale_ops_rejected\":12,"
    "    \"fence_regressions\":0,\"plain_accepted_writes\":602,\"fenced_accepted_writes\":590,"
    "    \"per_resource\":[{\"res\":\"r0\",\"plain_final\":296,\"plain_accepted\":301,"
    "      \"plain_lost\":5,\"fenced_final\":295,\"fenced_accepted\":295,\"fenced_lost\":0,"
    "      \"rejected\":6}]},"
    "  \"liveness\":{\"verdict\":\"valid\",\"valid\":true,\"longest_stall_ms\":520.4,"
    "    \"longest_stall_resource\":\"r1\",\"crash_to_next_grant_ms\":null,"
    "    \"stuck_resources\":0,\"stuck\":[],\"busy_share\":0.4959,\"failed_share\":0,"
    "    \"unknown_share\":0.0066,"
    "    \"fairness\":{\"min_grants\":8,\"max_grants\":120,\"ratio\":15}},"
    "  \"stats\":{\"verdict\":\"valid\"}},"
    "\"violations\":["
    "  {\"resource\":\"r0\",\"class\":\"stale-holder\",\"overlap_start_ms\":1012.3,"
    "   \"overlap_ms\":212.4,\"holders\":["
    "     {\"worker\":2,\"token\":\"9f01\",\"fence\":17,\"acquired_ms\":760.1,"
    "      \"valid_until_ms\":1060.1,\"enter_ms\":760.4,\"exit_ms\":1224.7},"
    "     {\"worker\":4,\"token\":\"9f02\",\"fence\":18,\"acquired_ms\":1012,"
    "      \"valid_until_ms\":1312,\"enter_ms\":1012.3,\"exit_ms\":1060.2}],"
    "   \"faults\":[0]},"
    "  {\"resource\":\"r1\",\"class\":\"stale-holder\",\"overlap_start_ms\":2560,"
    "   \"overlap_ms\":40,\"holders\":["
    "     {\"worker\":1,\"token\":\"a1\",\"fence\":null,\"acquired_ms\":2200,"
    "      \"valid_until_ms\":2500,\"enter_ms\":2201,\"exit_ms\":2600},"
    "     {\"worker\":5,\"token\":\"a2\",\"fence\":31,\"acquired_ms\":2559,"
    "      \"valid_until_ms\":2859,\"enter_ms\":2560,\"exit_ms\":2590}],"
    "   \"faults\":[]}],"
    "\"faults\":["
    "  {\"id\":0,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":2,\"node\":null,"
    "   \"start_ms\":1000,\"end_ms\":1500,\"skipped\":false,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":1,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":null,\"node\":null,"
    "   \"start_ms\":2500,\"end_ms\":2500,\"skipped\":true,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":2,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":1,\"node\":null,"
    "   \"start_ms\":4000,\"end_ms\":4500,\"skipped\":false,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":3,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":3,\"node\":null,"
    "   \"start_ms\":5500,\"end_ms\":6000,\"skipped\":false,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":4,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":0,\"node\":null,"
    "   \"start_ms\":7000,\"end_ms\":7500,\"skipped\":false,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":5,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":5,\"node\":null,"
    "   \"start_ms\":8500,\"end_ms\":9000,\"skipped\":false,\"params\":{\"duration_ms\":500}},"
    "  {\"id\":6,\"kind\":\"pause\",\"target\":\"holder\",\"worker\":4,\"node\":null,"
    "   \"start_ms\":9500,\"end_ms\":10000,\"skipped\":false,\"params\":{\"duration_ms\":500}}],"
    "\"per_worker\":["
    "  {\"worker\":0,\"attempts\":200,\"grants\":100,\"busy\":100,\"failed\":0,\"unknown\":0,"
    "   \"complete\":true,\"torn_bytes\":0}],"
    "\"warnings\":[\"worker 3: 64 torn bytes after the last valid record\"],"
    "\"expectations\":[]}";

/* A clean run without expectations; the lock offers no fences. */
static const char FIXTURE_PASS[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"tool_version\":\"0.1.0\",\"seed\":42,"
    "\"verdict\":\"unknown\",\"source\":\"runs/calm\","
    "\"started_at\":\"2026-11-22T06:00:00Z\",\"ended_at\":\"2026-11-22T06:00:05Z\","
    "\"duration_s\":5,\"interrupted\":false,"
    "\"workload\":{\"name\":\"calm\",\"seed\":42,\"duration\":\"5s\","
    "  \"lock\":{\"impl\":\"naive-setnx-expire\"},\"workers\":{\"count\":2,\"resources\":1}},"
    "\"verdict_checks\":\"valid\","
    "\"counts\":{\"attempts\":100,\"grants\":50,\"busy\":50,\"failed\":0,\"unknown\":0,"
    "  \"releases\":50,\"release_not_owner\":0,\"release_failed\":0,\"renewals\":10,"
    "  \"renew_failed\":0,\"lost\":0,\"crashes\":0,\"expired_grants\":0,\"store_ops\":100,"
    "  \"events\":520},"
    "\"latency\":{"
    "  \"acquire\":{\"count\":100,\"p50_ms\":0.1,\"p90_ms\":0.2,\"p99_ms\":0.3,"
    "    \"p999_ms\":0.3,\"max_ms\":0.31,\"mean_ms\":0.12},"
    "  \"renew\":{\"count\":10,\"p50_ms\":0.1,\"p90_ms\":0.1,\"p99_ms\":0.1,"
    "    \"p999_ms\":0.1,\"max_ms\":0.1,\"mean_ms\":0.1}},"
    "\"throughput\":{\"grants_per_s\":10,\"attempts_per_s\":20},"
    "\"checks\":{"
    "  \"mutex\":{\"verdict\":\"valid\",\"valid\":true,\"violations\":0,\"near_misses\":0,"
    "    \"by_class\":{\"stale_holder\":0,\"lock_broken\":0},\"capacity\":1,\"holds\":50},"
    "  \"fencing\":{\"verdict\":\"valid\",\"valid\":true,\"offered\":false,"
    "    \"plain_lost_updates\":0,\"fenced_lost_updates\":0,\"stale_ops_rejected\":0,"
    "    \"fence_regressions\":0,\"plain_accepted_writes\":50,\"fenced_accepted_writes\":0},"
    "  \"liveness\":{\"verdict\":\"valid\",\"valid\":true,\"longest_stall_ms\":12,"
    "    \"longest_stall_resource\":\"r0\",\"crash_to_next_grant_ms\":null,"
    "    \"stuck_resources\":0,\"stuck\":[],\"busy_share\":0.5,\"failed_share\":0,"
    "    \"unknown_share\":0,\"fairness\":{\"min_grants\":24,\"max_grants\":26,\"ratio\":1.0833}},"
    "  \"stats\":{\"verdict\":\"valid\"}},"
    "\"violations\":[],\"faults\":[],\"per_worker\":[],\"warnings\":[],\"expectations\":[]}";

/* A JSONL history cut short: no workload, no run directory, interrupted. */
static const char FIXTURE_UNKNOWN[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"tool_version\":\"0.1.0\",\"seed\":null,"
    "\"verdict\":\"unknown\",\"source\":\"/tmp/history.jsonl\","
    "\"duration_s\":2.5,\"interrupted\":true,\"workload\":null,"
    "\"verdict_checks\":\"unknown\","
    "\"counts\":{\"attempts\":10,\"grants\":3,\"busy\":7,\"failed\":0,\"unknown\":0,"
    "  \"releases\":2,\"release_not_owner\":0,\"release_failed\":0,\"renewals\":0,"
    "  \"renew_failed\":0,\"lost\":0,\"crashes\":1,\"expired_grants\":0,\"store_ops\":0,"
    "  \"events\":30},"
    "\"throughput\":{\"grants_per_s\":1.2,\"attempts_per_s\":4},"
    "\"checks\":{"
    "  \"mutex\":{\"verdict\":\"unknown\",\"valid\":false,\"violations\":0,\"near_misses\":0,"
    "    \"by_class\":{\"stale_holder\":0,\"lock_broken\":0},\"capacity\":1,\"holds\":3,"
    "    \"reason\":\"a hold has no exit and no crash record\"},"
    "  \"fencing\":{\"verdict\":\"valid\",\"valid\":true,\"offered\":true,"
    "    \"available\":false,"
    "    \"note\":\"not available: lost updates need a run directory (storage.jsonl)\","
    "    \"plain_lost_updates\":0,\"fenced_lost_updates\":0,\"stale_ops_rejected\":0,"
    "    \"fence_regressions\":0,\"plain_accepted_writes\":0,\"fenced_accepted_writes\":0,"
    "    \"per_resource\":[],\"regressions\":[]},"
    "  \"liveness\":{\"verdict\":\"unknown\",\"valid\":false,\"longest_stall_ms\":1800,"
    "    \"longest_stall_resource\":\"r0\",\"crash_to_next_grant_ms\":null,"
    "    \"stuck_resources\":1,"
    "    \"stuck\":[{\"res\":\"r0\",\"reason\":\"no grant for the last 1800 ms while workers waited\"}],"
    "    \"busy_share\":0.7,\"failed_share\":0,\"unknown_share\":0,"
    "    \"fairness\":{\"min_grants\":0,\"max_grants\":3,\"ratio\":null}},"
    "  \"stats\":{\"verdict\":\"valid\"}},"
    "\"violations\":[],\"faults\":[],"
    "\"per_worker\":[{\"worker\":0,\"attempts\":5,\"grants\":3,\"busy\":2,\"failed\":0,"
    "  \"unknown\":0,\"complete\":true,\"torn_bytes\":0},"
    "  {\"worker\":1,\"attempts\":5,\"grants\":0,\"busy\":5,\"failed\":0,"
    "  \"unknown\":0,\"complete\":false,\"torn_bytes\":0}],"
    "\"warnings\":[\"worker 1: log not closed (the worker did not finish)\"],"
    "\"expectations\":[]}";

static struct json *parse_or_die(const char *text)
{
    struct json *v = NULL;
    char err[256];
    if (json_parse(text, strlen(text), &v, err, sizeof(err)) != 0) {
        fprintf(stderr, "fixture does not parse: %s\n", err);
        exit(2);
    }
    return v;
}

/* A workload carrying only expectations (what result_eval_expectations
 * reads). Each spec is "path|op|value|want". */
struct expect_set {
    struct workload w;
    struct expect_spec e[32];
};

static void add_expect(struct expect_set *s, const char *path, int op, double value,
                       const char *want)
{
    struct expect_spec *e = &s->e[s->w.nexpects++];
    e->path = strdup(path);
    e->op = op;
    e->value = value;
    e->want = strdup(want);
    s->w.expects = s->e;
}

static void free_expects(struct expect_set *s)
{
    for (int i = 0; i < s->w.nexpects; i++) {
        free(s->e[i].path);
        free(s->e[i].want);
    }
    s->w.nexpects = 0;
}

/* The failing fixture with its three expectations evaluated (2 of 3 met). */
static struct json *fail_model(void)
{
    struct json *r = parse_or_die(FIXTURE_FAIL);
    struct expect_set s = {0};
    add_expect(&s, "checks.mutex.violations", EXPECT_GT, 0, "> 0");
    add_expect(&s, "checks.fencing.fenced_lost_updates", EXPECT_EQ, 0, "0");
    add_expect(&s, "counts.grants", EXPECT_GE, 1000, ">= 1000");
    result_eval_expectations(r, &s.w);
    free_expects(&s);
    return r;
}

static struct json *plain_model(const char *fixture)
{
    struct json *r = parse_or_die(fixture);
    result_eval_expectations(r, NULL);
    return r;
}

/* ---- golden files ---------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        sb_append(&sb, buf, n);
    fclose(f);
    *len = sb.len;
    sb_cstr(&sb);
    return sb_steal(&sb);
}

/* Compare got with tests/unit/golden/<name>; LS_UPDATE_GOLDEN=1 rewrites it. */
static void check_golden(const char *name, struct strbuf *got)
{
    const char *src = getenv("LS_SOURCE_DIR");
    if (!src || !*src)
        src = LS_SOURCE_DIR;
    struct strbuf path = STRBUF_INIT;
    sb_printf(&path, "%s/tests/unit/golden/%s", src, name);
    const char *upd = getenv("LS_UPDATE_GOLDEN");
    if (upd && strcmp(upd, "1") == 0) {
        int rc = sb_write_file(got, sb_cstr(&path));
        CHECKF(rc == 0, "cannot write %s", sb_cstr(&path));
        fprintf(stderr, "golden: rewrote %s\n", sb_cstr(&path));
        sb_free(&path);
        return;
    }
    size_t wlen = 0;
    char *want = read_all(sb_cstr(&path), &wlen);
    CHECKF(want != NULL, "golden file %s missing (create it with LS_UPDATE_GOLDEN=1)",
           sb_cstr(&path));
    if (want && (wlen != got->len || memcmp(want, sb_cstr(got), wlen) != 0)) {
        /* First differing line, diff style. */
        const char *a = want, *b = sb_cstr(got);
        int line = 1;
        while (*a && *b) {
            const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
            size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
            if (la != lb || memcmp(a, b, la) != 0 || !ea != !eb)
                break;
            a += la + (ea ? 1 : 0);
            b += lb + (eb ? 1 : 0);
            line++;
        }
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        fprintf(stderr, "--- %s (golden)\n+++ rendered\n@@ line %d @@\n-%.*s\n+%.*s\n", name, line,
                (int)(ea ? (size_t)(ea - a) : strlen(a)), a,
                (int)(eb ? (size_t)(eb - b) : strlen(b)), b);
        fprintf(stderr, "if the change is intended, regenerate the golden files with\n"
                        "  LS_UPDATE_GOLDEN=1 ctest --test-dir BUILD_DIR -R test_result\n"
                        "or LS_UPDATE_GOLDEN=1 LS_SOURCE_DIR=%s BUILD_DIR/test_result\n"
                        "and review the change with git diff tests/unit/golden/\n", src);
        CHECKF(0, "%s differs from its golden file", name);
    }
    free(want);
    sb_free(&path);
}

static void golden_text(const char *name, struct json *r)
{
    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    check_golden(name, &sb);
    sb_free(&sb);
}

static void test_golden_fail(void)
{
    struct json *r = fail_model();
    golden_text("result_fail.txt", r);
    json_free(r);
}

static void test_golden_pass(void)
{
    struct json *r = plain_model(FIXTURE_PASS);
    golden_text("result_pass.txt", r);
    json_free(r);
}

static void test_golden_unknown(void)
{
    struct json *r = plain_model(FIXTURE_UNKNOWN);
    golden_text("result_unknown.txt", r);
    json_free(r);
}

/* ---- the verdict line -------------------------------------------------------- */

static const char *last_line(const struct strbuf *sb)
{
    const char *s = sb->buf;
    size_t n = sb->len;
    if (n && s[n - 1] == '\n')
        n--;
    while (n && s[n - 1] != '\n')
        n--;
    return s + n;
}

static void test_verdict_line(void)
{
    struct json *r = fail_model();
    struct strbuf line = STRBUF_INIT, text = STRBUF_INIT;
    render_verdict_line(r, &line);
    CHECK_STR(sb_cstr(&line),
              "lockstorm: FAIL workload=demo lock=redis-single workers=6 resources=2 duration=10s "
              "faults=pause:6 seed=7 incidents=- (violations=14 stale-holder=14 lock-broken=0) "
              "plain_lost=9 "
              "fenced_lost=0 expectations=2/3\n");
    render_text(r, &text);
    CHECK_STR(last_line(&text), sb_cstr(&line));
    json_free(r);

    r = plain_model(FIXTURE_PASS);
    sb_reset(&line);
    render_verdict_line(r, &line);
    CHECK_STR(sb_cstr(&line),
              "lockstorm: PASS workload=calm lock=naive-setnx-expire workers=2 resources=1 "
              "duration=5s faults=none seed=42 incidents=- (violations=0 stale-holder=0 lock-broken=0) "
              "plain_lost=0 fenced_lost=- expectations=-\n");
    json_free(r);

    r = plain_model(FIXTURE_UNKNOWN);
    sb_reset(&line);
    render_verdict_line(r, &line);
    CHECK_STR(sb_cstr(&line),
              "lockstorm: UNKNOWN workload=- lock=- workers=2 resources=- duration=2.5s "
              "faults=none seed=- incidents=- (violations=0 stale-holder=0 lock-broken=0) plain_lost=- "
              "fenced_lost=- expectations=-\n");
    json_free(r);
    sb_free(&line);
    sb_free(&text);
}

static void test_text_flags(void)
{
    struct json *r = fail_model();
    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    const char *t = sb_cstr(&sb);
    CHECK(strstr(t, "  mutex     invalid !!!") != NULL);
    CHECK(strstr(t, "  liveness  valid ???") != NULL);
    CHECK(strstr(t, "??? unfair: fairness ratio 15 > 10") != NULL);
    CHECK(strstr(t, "  fencing   valid       ") != NULL);
    CHECK(strstr(t, "FAILED") != NULL);
    CHECK(strstr(t, "faults     6 injected (pause=6), 1 skipped") != NULL);
    CHECK(strstr(t, "r0 stale-holder at=1012.3ms overlap=212.4ms workers=2->4 fences=17->18 "
                    "faults=pause(w2)") != NULL);
    CHECK(strstr(t, "... 12 more") != NULL);
    json_free(r);

    r = plain_model(FIXTURE_UNKNOWN);
    sb_reset(&sb);
    render_text(r, &sb);
    t = sb_cstr(&sb);
    CHECK(strstr(t, "!!! interrupted") != NULL);
    CHECK(strstr(t, "  fencing   valid       fence_regressions=0 (not available") != NULL);
    CHECK(strstr(t, "  mutex     unknown ??? ") != NULL);
    CHECK(strstr(t, "??? stuck r0:") != NULL);
    CHECK(strstr(t, "??? starved") != NULL);
    CHECK(strstr(t, "??? long stall") != NULL);
    json_free(r);
    sb_free(&sb);
}

/* ---- JSON -------------------------------------------------------------------- */

/* Every contract path of docs/result-format.md (marked C; arrays at
 * their first element). */
static const char *const contract_paths[] = {
    "format", "version", "tool_version", "seed", "verdict", "workload", "duration_s",
    "counts.attempts", "counts.grants", "counts.busy", "counts.failed", "counts.unknown",
    "counts.releases", "counts.release_not_owner", "counts.renewals", "counts.renew_failed",
    "counts.lost", "counts.crashes", "counts.expired_grants",
    "latency.acquire.p50_ms", "latency.acquire.p90_ms", "latency.acquire.p99_ms",
    "latency.acquire.p999_ms", "latency.acquire.max_ms",
    "latency.release.p50_ms", "latency.release.p90_ms", "latency.release.p99_ms",
    "latency.release.p999_ms", "latency.release.max_ms",
    "latency.renew.p50_ms", "latency.renew.p90_ms", "latency.renew.p99_ms",
    "latency.renew.p999_ms", "latency.renew.max_ms",
    "throughput.grants_per_s", "throughput.attempts_per_s",
    "checks.mutex.valid", "checks.mutex.violations", "checks.mutex.near_misses",
    "checks.mutex.by_class.stale_holder", "checks.mutex.by_class.lock_broken",
    "checks.fencing.valid", "checks.fencing.offered", "checks.fencing.plain_lost_updates",
    "checks.fencing.fenced_lost_updates", "checks.fencing.stale_ops_rejected",
    "checks.fencing.fence_regressions",
    "checks.liveness.valid", "checks.liveness.longest_stall_ms",
    "checks.liveness.crash_to_next_grant_ms", "checks.liveness.stuck_resources",
    "violations.0.resource", "violations.0.class", "violations.0.overlap_start_ms",
    "violations.0.overlap_ms", "violations.0.holders.0.worker", "violations.0.holders.0.token",
    "violations.0.holders.0.fence", "violations.0.holders.0.acquired_ms",
    "violations.0.holders.0.valid_until_ms", "violations.0.holders.0.enter_ms",
    "violations.0.holders.0.exit_ms", "violations.0.faults",
    "faults.0.kind", "faults.0.target", "faults.0.start_ms", "faults.0.end_ms", "faults.0.params",
    "expectations.0.path", "expectations.0.want", "expectations.0.got", "expectations.0.ok",
};

/* The contract paths that hold numbers or booleans (expectation targets). */
static const char *const contract_numeric[] = {
    "version", "seed", "duration_s",
    "counts.attempts", "counts.grants", "counts.busy", "counts.failed", "counts.unknown",
    "counts.releases", "counts.release_not_owner", "counts.renewals", "counts.renew_failed",
    "counts.lost", "counts.crashes", "counts.expired_grants",
    "latency.acquire.p50_ms", "latency.acquire.p90_ms", "latency.acquire.p99_ms",
    "latency.acquire.p999_ms", "latency.acquire.max_ms",
    "latency.release.p50_ms", "latency.release.p99_ms", "latency.release.max_ms",
    "latency.renew.p50_ms", "latency.renew.p999_ms", "latency.renew.max_ms",
    "throughput.grants_per_s", "throughput.attempts_per_s",
    "checks.mutex.valid", "checks.mutex.violations", "checks.mutex.near_misses",
    "checks.mutex.by_class.stale_holder", "checks.mutex.by_class.lock_broken",
    "checks.fencing.valid", "checks.fencing.offered", "checks.fencing.plain_lost_updates",
    "checks.fencing.fenced_lost_updates", "checks.fencing.stale_ops_rejected",
    "checks.fencing.fence_regressions",
    "checks.liveness.valid", "checks.liveness.longest_stall_ms",
    "checks.liveness.crash_to_next_grant_ms", "checks.liveness.stuck_resources",
    "violations.0.overlap_start_ms", "violations.0.overlap_ms",
    "violations.0.holders.0.worker", "violations.0.holders.0.fence",
    "violations.0.holders.0.acquired_ms", "violations.0.holders.0.valid_until_ms",
    "violations.0.holders.0.enter_ms", "violations.0.holders.0.exit_ms",
    "faults.0.start_ms", "faults.0.end_ms",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void test_json_roundtrip(void)
{
    struct json *r = fail_model();
    struct strbuf sb = STRBUF_INIT;
    render_json(r, &sb);
    REQUIRE(sb.len > 2);
    CHECK(sb.buf[sb.len - 1] == '\n');
    CHECK(sb.buf[sb.len - 2] == '}');
    CHECK(strncmp(sb.buf, "{\n  \"format\": \"lockstorm-result\"", 31) == 0);
    struct json *back = NULL;
    char err[256];
    REQUIRE(json_parse(sb.buf, sb.len, &back, err, sizeof(err)) == 0);
    for (size_t i = 0; i < NELEM(contract_paths); i++)
        CHECKF(json_path(back, contract_paths[i]) != NULL, "contract path %s missing",
               contract_paths[i]);
    /* Same document: compact forms agree. */
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    json_write(&a, r, -1);
    json_write(&b, back, -1);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    CHECK_STR(json_get_str(back, "verdict", ""), "fail");
    sb_free(&a);
    sb_free(&b);
    sb_free(&sb);
    json_free(back);
    json_free(r);
}

/* json_load_file / sb_read_file: a file written by sb_write_file reads back
 * whole (larger than one read block), a missing file is -1 with errno, bad
 * JSON is -2 with the parser's reason. */
/* The reference the writer's number formatting must match: the shortest
 * of %.15g / %.17g that reads back as the same double. */
static void ref_num(char *buf, size_t len, double d)
{
    snprintf(buf, len, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, len, "%.17g", d);
}

/* Contract: json_write of d gives exactly ref_num's text (the writer's
 * fast path for integers and few decimals must not change a byte); counts
 * mismatches, reporting the first few. */
static int num_mismatch(double d, int *shown)
{
    struct json *v = json_new_num(d);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, v, -1);
    char want[48];
    if (d == floor(d) && fabs(d) < 9.0e15) /* json_new_num keeps those as integers */
        snprintf(want, sizeof(want), "%lld", (long long)d);
    else
        ref_num(want, sizeof(want), d);
    int bad = strcmp(sb_cstr(&sb), want) != 0;
    if (bad && (*shown)++ < 5)
        CHECKF(0, "%.17g written as %s, want %s", d, sb_cstr(&sb), want);
    sb_free(&sb);
    json_free(v);
    return bad;
}

static void test_json_numbers(void)
{
    static const double fixed[] = {1, -1, 12.345, -12.345, 0.1, 0.0001, 0.00011, 0.00009, 1e-5,
                                   999999999999999.0, 1e15, 123456789012.3456, 0.5, 2.675,
                                   1.0 / 3, 1e300, -1e-300, 4503599627370497.0, 100, 9.9999};
    int shown = 0, bad = 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        bad += num_mismatch(fixed[i], &shown);
    uint64_t x = 88172645463325252ULL; /* xorshift64: a fixed pseudo-random sweep */
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        int64_t k = (int64_t)(x >> 14) % 2000000000000LL - 1000000000000LL;
        switch (i % 4) {
        case 0: d = (double)k / 1000.0; break;             /* ms with 3 decimals */
        case 1: d = (double)(k % 100000000) / 10000.0; break; /* up to 4 decimals */
        case 2: d = (double)k * 1.000001 / 7.0; break;       /* full precision */
        default: d = (double)(k % 1000) / 100000.0; break;   /* 5 decimals, tiny */
        }
        bad += num_mismatch(d, &shown);
    }
    CHECKF(bad == 0, "%d numbers written differently from %%.15g/%%.17g", bad);
    struct json *v = json_new_int(INT64_MIN);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, v, -1);
    CHECK(strcmp(sb_cstr(&sb), "-9223372036854775808") == 0);
    sb_free(&sb);
    json_free(v);
}

static void test_json_load_file(void)
{
    char *dir = t_tmpdir();
    REQUIRE(dir != NULL);
    char path[4096];
    snprintf(path, sizeof(path), "%s/r.json", dir);
    struct json *r = fail_model();
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, r, 2);
    while (sb.len < 200000) /* several read blocks */
        sb_puts(&sb, "          ");
    REQUIRE(sb_write_file(&sb, path) == 0);
    struct json *back = NULL;
    char why[128];
    CHECK(json_load_file(path, &back, why, sizeof(why)) == 0);
    CHECK_STR(json_get_str(back, "verdict", ""), "fail");
    json_free(back);
    struct strbuf raw = STRBUF_INIT;
    CHECK(sb_read_file(&raw, path) == 0);
    CHECK(raw.len == sb.len && memcmp(raw.buf, sb.buf, sb.len) == 0);
    snprintf(path, sizeof(path), "%s/missing.json", dir);
    CHECK(json_load_file(path, &back, why, sizeof(why)) == -1 && errno == ENOENT);
    CHECK(back == NULL);
    snprintf(path, sizeof(path), "%s/bad.json", dir);
    struct strbuf bad = STRBUF_INIT;
    sb_puts(&bad, "{\"a\": ");
    REQUIRE(sb_write_file(&bad, path) == 0);
    CHECK(json_load_file(path, &back, why, sizeof(why)) == -2 && back == NULL);
    CHECKF(strstr(why, "offset") != NULL, "why: %s", why);
    sb_free(&bad);
    sb_free(&raw);
    sb_free(&sb);
    json_free(r);
    t_rmdir(dir);
    free(dir);
}

/* ---- expectations, verdict, exit code ------------------------------------- */

static const char EXPECT_MODEL[] =
    "{\"verdict_checks\":\"valid\",\"interrupted\":false,"
    "\"a\":{\"n\":5,\"x\":0.30000000000000004,\"big\":9007199254740993,\"t\":true,\"f\":false,"
    "\"s\":\"str\",\"nul\":null,\"arr\":[10,20.5]}}";

struct expect_case {
    const char *path;
    int op;
    double value;
    int ok;           /* expected outcome */
    const char *got;  /* expected "got" as compact JSON */
};

static void test_expectations(void)
{
    static const struct expect_case cases[] = {
        {"a.n", EXPECT_EQ, 5, 1, "5"},
        {"a.n", EXPECT_EQ, 5.0000001, 0, "5"},      /* integers compare exactly */
        {"a.n", EXPECT_EQ, 6, 0, "5"},
        {"a.x", EXPECT_EQ, 0.3, 1, "0.30000000000000004"}, /* relative tolerance */
        {"a.x", EXPECT_EQ, 0.3001, 0, "0.30000000000000004"},
        {"a.big", EXPECT_EQ, 9007199254740992.0, 0, "9007199254740993"},
        {"a.big", EXPECT_NE, 9007199254740992.0, 1, "9007199254740993"},
        {"a.n", EXPECT_NE, 5, 0, "5"},
        {"a.n", EXPECT_NE, 4, 1, "5"},
        {"a.x", EXPECT_NE, 0.3, 0, "0.30000000000000004"},
        {"a.n", EXPECT_LT, 6, 1, "5"},
        {"a.n", EXPECT_LT, 5, 0, "5"},
        {"a.n", EXPECT_LE, 5, 1, "5"},
        {"a.n", EXPECT_LE, 4.5, 0, "5"},
        {"a.n", EXPECT_GT, 4.9, 1, "5"},
        {"a.n", EXPECT_GT, 5, 0, "5"},
        {"a.n", EXPECT_GE, 5, 1, "5"},
        {"a.n", EXPECT_GE, 5.5, 0, "5"},
        {"a.t", EXPECT_EQ, 1, 1, "1"},              /* bools compare as 1/0 */
        {"a.f", EXPECT_EQ, 0, 1, "0"},
        {"a.t", EXPECT_GT, 0, 1, "1"},
        {"a.f", EXPECT_GT, 0, 0, "0"},
        {"a.arr.1", EXPECT_GT, 20, 1, "20.5"},
        {"a.arr[0]", EXPECT_EQ, 10, 1, "10"},
        {"a.missing", EXPECT_EQ, 0, 0, "null"},     /* missing: got null, not ok */
        {"a.missing", EXPECT_NE, 1, 0, "null"},
        {"a.s", EXPECT_EQ, 0, 0, "null"},           /* not a number */
        {"a.nul", EXPECT_EQ, 0, 0, "null"},
        {"a", EXPECT_GE, 0, 0, "null"},
        {"a.arr.7", EXPECT_GE, 0, 0, "null"},
    };
    struct json *r = parse_or_die(EXPECT_MODEL);
    struct expect_set s = {0};
    int want_failed = 0;
    for (size_t i = 0; i < NELEM(cases); i++) {
        add_expect(&s, cases[i].path, cases[i].op, cases[i].value, "as written");
        want_failed += !cases[i].ok;
    }
    CHECK_INT(result_eval_expectations(r, &s.w), want_failed);
    const struct json *ex = json_obj_get(r, "expectations");
    REQUIRE(ex && ex->type == JSON_ARR && ex->n == NELEM(cases));
    for (size_t i = 0; i < NELEM(cases); i++) {
        const struct json *e = ex->kids[i];
        const struct json *ok = json_obj_get(e, "ok");
        CHECKF(ok && ok->type == JSON_BOOL && (int)ok->i == cases[i].ok,
               "case %zu (%s op %d %g): ok should be %d", i, cases[i].path, cases[i].op,
               cases[i].value, cases[i].ok);
        struct strbuf g = STRBUF_INIT;
        json_write(&g, json_obj_get(e, "got"), -1);
        CHECKF(strcmp(sb_cstr(&g), cases[i].got) == 0, "case %zu: got %s, want %s", i,
               sb_cstr(&g), cases[i].got);
        sb_free(&g);
        CHECK_STR(json_get_str(e, "path", ""), cases[i].path);
        CHECK_STR(json_get_str(e, "want", ""), "as written");
        /* Entry layout: path, want, got, ok, and why when not measured (got null). */
        CHECK((e->n == 4 || (e->n == 5 && strcmp(e->keys[4], "why") == 0 &&
                             json_obj_get(e, "got")->type == JSON_NULL)) &&
              strcmp(e->keys[0], "path") == 0 && strcmp(e->keys[3], "ok") == 0);
    }
    CHECK_STR(json_get_str(r, "verdict", ""), "fail");
    free_expects(&s);

    /* Evaluating again replaces, never appends. */
    add_expect(&s, "a.n", EXPECT_EQ, 5, "5");
    CHECK_INT(result_eval_expectations(r, &s.w), 0);
    CHECK_INT(json_obj_get(r, "expectations")->n, 1);
    CHECK_STR(json_get_str(r, "verdict", ""), "pass");
    free_expects(&s);
    json_free(r);
}

/* verdict and exit code for one model: verdict_checks vc, interrupted,
 * and nexp expectations of which nfail fail. */
static void verdict_case(const char *vc, int interrupted, int nexp, int nfail,
                         const char *want_verdict, int want_exit)
{
    struct json *r = json_new_obj();
    json_obj_set_str(r, "verdict", "unknown");
    json_obj_set_bool(r, "interrupted", interrupted);
    if (vc)
        json_obj_set_str(r, "verdict_checks", vc);
    json_obj_set_int(r, "n", 1);
    struct expect_set s = {0};
    for (int i = 0; i < nexp; i++)
        add_expect(&s, "n", EXPECT_EQ, i < nfail ? 2 : 1, "== 1");
    CHECK_INT(result_eval_expectations(r, nexp ? &s.w : NULL), nfail);
    CHECKF(strcmp(json_get_str(r, "verdict", ""), want_verdict) == 0,
           "vc=%s interrupted=%d exp=%d fail=%d: verdict %s, want %s", vc ? vc : "(none)",
           interrupted, nexp, nfail, json_get_str(r, "verdict", ""), want_verdict);
    CHECK_INT(result_exit_code(r), want_exit);
    free_expects(&s);
    json_free(r);
}

static void test_verdict_rules(void)
{
    /* Without expectations the checkers decide. */
    verdict_case("valid", 0, 0, 0, "pass", 0);
    verdict_case("invalid", 0, 0, 0, "fail", 1);
    verdict_case("unknown", 0, 0, 0, "unknown", 4);
    verdict_case(NULL, 0, 0, 0, "unknown", 4);
    /* With expectations they decide alone. */
    verdict_case("invalid", 0, 2, 0, "pass", 0);
    verdict_case("unknown", 0, 2, 0, "pass", 0);
    verdict_case("valid", 0, 3, 1, "fail", 1);
    verdict_case("valid", 0, 1, 1, "fail", 1);
    /* An interrupted run never passes, but a failure stays a failure. */
    verdict_case("valid", 1, 0, 0, "unknown", 4);
    verdict_case("invalid", 1, 0, 0, "fail", 1);
    verdict_case("unknown", 1, 0, 0, "unknown", 4);
    verdict_case("invalid", 1, 2, 0, "unknown", 4);
    verdict_case("valid", 1, 2, 1, "fail", 1);

    /* Exit code of odd documents. */
    struct json *r = json_new_obj();
    CHECK_INT(result_exit_code(r), 4);
    json_obj_set_str(r, "verdict", "maybe");
    CHECK_INT(result_exit_code(r), 4);
    json_obj_set_int(r, "verdict", 0);
    CHECK_INT(result_exit_code(r), 4);
    json_free(r);
}

/* ---- expectation paths ----------------------------------------------------- */

static void test_path_valid(void)
{
    for (size_t i = 0; i < NELEM(contract_numeric); i++)
        CHECKF(result_path_valid(contract_numeric[i]), "%s should be valid", contract_numeric[i]);
    static const char *const extras[] = {
        "interrupted", "counts.release_failed", "counts.store_ops", "counts.events",
        "latency.acquire.count", "latency.acquire.mean_ms", "latency.acquire_wait.p99_ms",
        "latency.acquire_failed.max_ms",
        "checks.mutex.holds", "checks.mutex.capacity", "checks.fencing.plain_accepted_writes",
        "checks.fencing.fenced_accepted_writes", "checks.fencing.per_resource.0.plain_lost",
        "checks.fencing.per_resource[1].rejected", "checks.liveness.busy_share",
        "checks.liveness.failed_share", "checks.liveness.unknown_share",
        "checks.liveness.fairness.ratio", "checks.liveness.fairness.min_grants",
        "violations[3].overlap_ms", "violations.12.holders[1].fence", "faults.0.skipped",
        "per_worker.5.grants", "per_worker[0].complete", "per_worker.1.events",
        "checks.fencing.available", "checks.fencing.regressions.0.earlier_fence",
        "checks.liveness.holder_crashes", "checks.liveness.crashes_without_next_grant",
        "checks.stats.valid",
    };
    for (size_t i = 0; i < NELEM(extras); i++)
        CHECKF(result_path_valid(extras[i]), "%s should be valid", extras[i]);
    static const char *const junk[] = {
        "", ".", "counts", "counts.", ".counts.grants", "counts..grants", "counts.bogus",
        "count.grants", "checks.mutex.violation", "checks.mutex.by_class", "latency.acquire.p50",
        "latency.lock.p50_ms", "violations.overlap_ms", "violations.x.overlap_ms",
        "violations.-1.overlap_ms", "violations[].overlap_ms", "violations[a].overlap_ms",
        "violations[0.overlap_ms", "violations]0[.overlap_ms", "violations.0", "counts[0]",
        "format", "verdict", "workload.seed", "checks.mutex.violations.0",
        "Checks.mutex.violations", "counts.grants ", "expectations.0.ok",
    };
    for (size_t i = 0; i < NELEM(junk); i++)
        CHECKF(!result_path_valid(junk[i]), "'%s' should be refused", junk[i]);
    CHECK(!result_path_valid(NULL));
    char longp[2048];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    CHECK(!result_path_valid(longp));
}

/* ---- result_build over a real (small) history ------------------------------- */

static void ev(struct ev_rec *r, size_t *n, int64_t t_ms, int type, int flags, uint64_t fence,
               int64_t valid_until_ms, int64_t value, const char *token)
{
    struct ev_rec *e = &r[(*n)++];
    memset(e, 0, sizeof(*e));
    e->t = t_ms * 1000000;
    e->seq = (uint32_t)(*n - 1);
    e->type = (uint8_t)type;
    e->flags = (uint8_t)flags;
    e->fence = fence;
    e->valid_until = valid_until_ms * 1000000;
    e->value = value;
    if (token)
        memcpy(e->token, token, strlen(token) < EVLOG_TOKEN_LEN ? strlen(token) : EVLOG_TOKEN_LEN);
}

/* One hold of resource 0 by a worker: acquire at t, hold 10 ms, counters
 * read v and written v+1 (fence f). */
static void hold(struct ev_rec *r, size_t *n, int64_t t, uint64_t f, int64_t v, const char *tok)
{
    ev(r, n, t, EV_ACQUIRE_INVOKE, 0, 0, 0, 0, NULL);
    ev(r, n, t + 1, EV_ACQUIRE_OK, EVF_FENCE, f, t + 301, 0, tok);
    ev(r, n, t + 1, EV_ENTER, 0, 0, 0, 0, tok);
    ev(r, n, t + 2, EV_STORE_READ, EVF_ACCEPTED, 0, 0, v, NULL);
    ev(r, n, t + 2, EV_STORE_READ, EVF_FENCE | EVF_FENCED | EVF_ACCEPTED, f, 0, v, NULL);
    ev(r, n, t + 10, EV_STORE_WRITE, EVF_ACCEPTED, 0, 0, v + 1, NULL);
    ev(r, n, t + 10, EV_STORE_WRITE, EVF_FENCE | EVF_FENCED | EVF_ACCEPTED, f, 0, v + 1, NULL);
    ev(r, n, t + 11, EV_EXIT, 0, 0, 0, 0, tok);
    ev(r, n, t + 11, EV_RELEASE_INVOKE, 0, 0, 0, 0, tok);
    ev(r, n, t + 12, EV_RELEASE_OK, 0, 0, 0, 0, tok);
}

static const char BUILD_YAML[] =
    "name: tiny\n"
    "seed: 11\n"
    "duration: 1s\n"
    "lock: {impl: redis-single, ttl: 300ms, fencing: true}\n"
    "workers: {count: 2, resources: 1}\n"
    "expect:\n"
    "  checks.mutex.violations: 0\n"
    "  counts.grants: \">= 100\"\n";

static void test_build(void)
{
    struct ev_rec w0[32], w1[32];
    size_t n0 = 0, n1 = 0;
    hold(w0, &n0, 100, 1, 0, "t1");
    hold(w1, &n1, 200, 2, 1, "t2");
    hold(w0, &n0, 300, 3, 2, "t3");

    struct ls_err err = {0};
    struct workload *wl = NULL;
    int rc = workload_load_string("tiny.yaml", BUILD_YAML, NULL, 0, &wl, stderr, &err);
    CHECKF(rc == 0, "workload_load_string: %s", err.msg);
    if (rc != 0)
        return;

    struct hist_worker ws[2];
    memset(ws, 0, sizeof(ws));
    ws[0].id = 0; ws[0].ev = w0; ws[0].n = n0; ws[0].complete = 1;
    ws[1].id = 1; ws[1].ev = w1; ws[1].n = n1; ws[1].complete = 1;
    char name0[] = "r0";
    char *names[] = {name0};
    struct storage_final fin = {1, 3, 3, 3};
    char src[] = "runs/tiny";
    struct history h;
    memset(&h, 0, sizeof(h));
    h.source = src;
    h.from_rundir = 1;

    h.run = parse_or_die("{\"format\":\"lockstorm-run\",\"started_at\":\"2026-11-22T05:31:22Z\","
                         "\"ended_at\":\"2026-11-22T05:31:23Z\",\"interrupted\":false}");
    h.end = 1000 * 1000000LL;
    h.nworkers = 2;
    h.w = ws;
    h.nres = 1;
    h.res_names = names;
    h.have_storage = 1;
    h.storage = &fin;

    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = result_build(&h, wl, &p);
    REQUIRE(r != NULL);

    /* Header first, in order; the checker fragment after it; expectations,
     * then the charts' series last. */
    static const char *const head[] = {"format", "version", "tool_version", "seed", "verdict",
                                       "verdict_reasons", "source", "started_at", "ended_at", "duration_s",
                                       "interrupted", "workload"};
    REQUIRE(r->n > NELEM(head));
    for (size_t i = 0; i < NELEM(head); i++)
        CHECKF(strcmp(r->keys[i], head[i]) == 0, "key %zu is %s, want %s", i, r->keys[i], head[i]);
    CHECK_STR(r->keys[r->n - 2], "expectations");
    CHECK_STR(r->keys[r->n - 1], "series");
    CHECK_STR(json_get_str(r, "format", ""), RESULT_FORMAT);
    CHECK_INT(json_get_int(r, "version", 0), RESULT_VERSION);
    CHECK_STR(json_get_str(r, "tool_version", ""), LS_VERSION);
    CHECK_INT(json_get_int(r, "seed", 0), 11);
    CHECK_STR(json_get_str(r, "source", ""), "runs/tiny");
    CHECK(json_get_num(r, "duration_s", 0) == 1.0);
    CHECK(json_obj_get(r, "workload") && json_obj_get(r, "workload")->type == JSON_OBJ);

    /* The contract paths that exist without violations, faults. */
    for (size_t i = 0; i < NELEM(contract_paths); i++) {
        const char *cp = contract_paths[i];
        if (strncmp(cp, "violations.0", 12) == 0 || strncmp(cp, "faults.0", 8) == 0)
            continue;
        CHECKF(json_path(r, cp) != NULL, "result_build: contract path %s missing", cp);
    }
    CHECK_INT(json_get_int(json_path(r, "counts"), "grants", -1), 3);
    CHECK_INT(json_get_int(json_path(r, "checks.mutex"), "violations", -1), 0);
    /* every checker that ran has a description the renderers draw it from */
    const struct json *checks = json_obj_get(r, "checks");
    REQUIRE(checks && checks->type == JSON_OBJ && checks->n > 0);
    for (size_t i = 0; i < checks->n; i++)
        CHECKF(checkschema_find(checks->keys[i]) != NULL, "checker %s has no description",
               checks->keys[i]);

    /* Expectations: violations == 0 holds, grants >= 100 does not. */
    const struct json *ex = json_obj_get(r, "expectations");
    REQUIRE(ex && ex->n == 2);
    CHECK(json_obj_get(ex->kids[0], "ok")->i == 1);
    CHECK(json_obj_get(ex->kids[1], "ok")->i == 0);
    CHECK_STR(json_get_str(r, "verdict", ""), "fail");
    CHECK_INT(result_exit_code(r), 1);

    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    CHECK(strstr(sb_cstr(&sb), "lockstorm: FAIL workload=tiny lock=redis-single workers=2 "
                               "resources=1 duration=1s faults=none seed=11 incidents=0 (violations=0 ") != NULL);
    sb_free(&sb);

    json_free(r);
    json_free(h.run);
    workload_free(wl);
}

/* series.holds (harness/holds.c): each worker's grants paired with their
 * enter, renewals, lost notice, exit and release; a crash and a log's end
 * end a hold; a grant never entered is no hold. */
static void test_holds(void)
{
    struct ev_rec w0[16], w1[8], w2[8];
    size_t n0 = 0, n1 = 0, n2 = 0;
    ev(w0, &n0, 100, EV_ACQUIRE_OK, EVF_FENCE, 1, 400, 0, "a");
    ev(w0, &n0, 100, EV_ENTER, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 200, EV_RENEW_OK, 0, 0, 500, 0, NULL);
    ev(w0, &n0, 300, EV_EXIT, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 301, EV_RELEASE_OK, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 400, EV_ACQUIRE_OK, EVF_FENCE, 3, 700, 0, "b");
    ev(w0, &n0, 401, EV_ENTER, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 500, EV_LOST, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 800, EV_EXIT, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 801, EV_RELEASE_NOT_OWNER, 0, 0, 0, 0, NULL);
    ev(w0, &n0, 900, EV_ACQUIRE_OK, EVF_FENCE, 4, 1200, 0, "c"); /* never entered */
    ev(w0, &n0, 901, EV_RELEASE_OK, 0, 0, 0, 0, NULL);
    ev(w1, &n1, 305, EV_ACQUIRE_OK, EVF_NO_LEASE, 0, 0, 0, "d");
    ev(w1, &n1, 306, EV_ENTER, 0, 0, 0, 0, NULL);
    ev(w1, &n1, 350, EV_CRASH, 0, 0, 0, 0, NULL);
    ev(w2, &n2, 950, EV_ACQUIRE_OK, EVF_FENCE, 5, 1250, 0, "e");
    ev(w2, &n2, 951, EV_ENTER, 0, 0, 0, 0, NULL); /* the log ends in the hold */

    struct hist_worker ws[3];
    memset(ws, 0, sizeof(ws));
    ws[0].id = 0; ws[0].ev = w0; ws[0].n = n0; ws[0].complete = 1;
    ws[1].id = 1; ws[1].ev = w1; ws[1].n = n1; ws[1].complete = 1;
    ws[2].id = 2; ws[2].ev = w2; ws[2].n = n2; ws[2].complete = 1;
    char name0[] = "r0";
    char *names[] = {name0};
    struct history h;
    memset(&h, 0, sizeof(h));
    h.nworkers = 3;
    h.w = ws;
    h.nres = 1;
    h.res_names = names;
    h.end = 1000 * 1000000LL;

    struct json *empty = json_new_obj();
    struct json *o = holds_build(&h, empty);
    CHECK_INT(json_get_int(o, "total", -1), 4);
    CHECK_INT(json_get_int(o, "kept", -1), 4);
    CHECK_INT(json_get_int(o, "sampled_every", -1), 1);
    const struct json *c = json_obj_get(o, "columns");
    CHECK_STR(json_get_str(c, "worker", ""), "0,0,1,2");
    CHECK_STR(json_get_str(c, "grant_ms", ""), "100,400,305,950");
    CHECK_STR(json_get_str(c, "enter_ms", ""), "100,401,306,951");
    CHECK_STR(json_get_str(c, "exit_ms", ""), "300,800,350,951");
    CHECK_STR(json_get_str(c, "valid_until_ms", ""), "500,700,null,1250"); /* renewed */
    CHECK_STR(json_get_str(c, "fence", ""), "1,3,null,5");
    CHECK_STR(json_get_str(c, "end", ""), "0,0,1,2");        /* exit exit crash open */
    CHECK_STR(json_get_str(c, "release", ""), "1,2,0,0");    /* ok not_owner none none */
    CHECK_STR(json_get_str(c, "renewals", ""), "1,0,0,0");
    CHECK_STR(json_get_str(c, "lost", ""), "0,1,0,0");
    CHECK_STR(json_arr_get(json_obj_get(o, "releases"), 2)->s, "not_owner");
    CHECK_STR(json_arr_get(json_obj_get(o, "ends"), 1)->s, "crash");
    json_free(o);

    /* result_add_holds puts it under series, only when there is one */
    struct json *r = json_new_obj();
    result_add_holds(r, &h);
    CHECK(json_path(r, "series.holds") == NULL);
    json_obj_set(r, "series", json_new_obj());
    result_add_holds(r, &h);
    CHECK_INT(json_get_int(json_path(r, "series.holds"), "total", -1), 4);
    json_free(r);
    json_free(empty);
}

int main(void)
{
    RUN(test_golden_fail);
    RUN(test_holds);
    RUN(test_golden_pass);
    RUN(test_golden_unknown);
    RUN(test_verdict_line);
    RUN(test_text_flags);
    RUN(test_json_roundtrip);
    RUN(test_json_load_file);
    RUN(test_json_numbers);
    RUN(test_expectations);
    RUN(test_verdict_rules);
    RUN(test_path_valid);
    RUN(test_build);
    return t_finish();
}
