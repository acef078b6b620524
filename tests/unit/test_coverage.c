/*
 * test_coverage.c: coverage (checkers/coverage.c) on a hand-built history:
 * which fault occurrences bit by which rule (worker, node, link), the
 * holds / grants / contended acquires, the lateness bound and its warning;
 * the activity floor and the check.stuck_after default from a workload;
 * when a late start is due (faults/schedule.c); and the verdict rule of
 * harness/verdict.c (coverage, evidence, not measured). No Redis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "faults/schedule.h"
#include "harness/workload.h"
#include "harness/verdict.h"
#include "model/rundir.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char *tmp;

static long long ns(double t_ms)
{
    return llround(t_ms * 1e6);
}

static void line(struct strbuf *sb, double t, int w, const char *type, const char *res,
                 const char *extra)
{
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\"", ns(t), w, type);
    if (res)
        sb_printf(sb, ",\"res\":\"%s\"", res);
    if (extra && *extra)
        sb_printf(sb, ",%s", extra);
    sb_puts(sb, "}\n");
}

/* acquire at t (granted at t + 1), hold [t + 1, exit], release right after */
static void cycle(struct strbuf *sb, double t, int w, const char *res, double exit)
{
    char extra[160];
    line(sb, t, w, "acquire_invoke", res, "\"attempt\":1");
    snprintf(extra, sizeof(extra), "\"token\":\"w%d-%g\",\"fence\":null,\"valid_until\":%lld", w,
             t, ns(t + 1000));
    line(sb, t + 1, w, "acquire_ok", res, extra);
    line(sb, t + 1, w, "enter", res, NULL);
    line(sb, exit, w, "exit", res, NULL);
    line(sb, exit + 0.1, w, "release_invoke", res, NULL);
    line(sb, exit + 0.5, w, "release_ok", res, NULL);
}

/* A fault window; links: a JSON array of [worker, node] pairs or NULL;
 * late_ms < 0: none written. */
static void add_fault(struct history *h, const char *kind, const char *target, int worker,
                      int node, double start, double end, int skipped, const char *links,
                      double late_ms, double duration_ms)
{
    h->faults = xrealloc(h->faults, (size_t)(h->nfaults + 1) * sizeof(*h->faults));
    struct fault_window *f = &h->faults[h->nfaults];
    memset(f, 0, sizeof(*f));
    f->id = h->nfaults++;
    snprintf(f->kind, sizeof(f->kind), "%s", kind);
    snprintf(f->target, sizeof(f->target), "%s", target);
    f->worker = worker;
    f->node = node;
    f->start = ns(start);
    f->end = ns(end);
    f->skipped = skipped;
    char buf[512];
    snprintf(buf, sizeof(buf), "{\"params\":{\"duration_ms\":%g}%s%s%s%s}", duration_ms,
             links ? ",\"links\":" : "", links ? links : "", skipped ? ",\"reason\":\"no holder\"" : "",
             "");
    char why[128];
    json_parse(buf, strlen(buf), &f->record, why, sizeof(why));
    if (late_ms >= 0)
        json_obj_set_num(f->record, "late_ms", late_ms);
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || v->type != JSON_NUM) {
        fprintf(stderr, "  (no number at %s)\n", path);
        return -999999;
    }
    return v->is_int ? v->i : (int64_t)llround(v->d);
}

static int bit_at(const struct json *r, int i)
{
    char path[64];
    snprintf(path, sizeof(path), "faults.%d.bit", i);
    const struct json *v = json_path(r, path);
    if (!v)
        return -2;
    return v->type == JSON_NULL ? -1 : (int)v->i;
}

static const char *reason_at(const struct json *r, int i)
{
    char path[64];
    snprintf(path, sizeof(path), "faults.%d.bit_reason", i);
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "";
}

static int has_warning(const struct json *r, const char *needle)
{
    const struct json *w = json_obj_get(r, "warnings");
    for (size_t i = 0; w && i < w->n; i++)
        if (w->kids[i]->type == JSON_STR && strstr(w->kids[i]->s, needle))
            return 1;
    return 0;
}

/*
 * worker 0: cycle r0 at 10 (hold 11 .. 50), cycle r0 at 300 (hold 301 .. 302)
 * worker 1: invoke r0 at 20 -> busy 20.5 (w0 holds r0: contended), cycle r0
 *           at 60 (hold 61 .. 62), invoke r1 at 400, crash at 410
 * worker 2: granted r1 at 600, still in that hold when its log ends
 */
static void test_bite_rules(void)
{
    struct strbuf sb = STRBUF_INIT;
    cycle(&sb, 10, 0, "r0", 50);
    cycle(&sb, 300, 0, "r0", 302);
    line(&sb, 20, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 20.5, 1, "acquire_busy", "r0", NULL);
    cycle(&sb, 60, 1, "r0", 62);
    line(&sb, 400, 1, "acquire_invoke", "r1", "\"attempt\":1");
    line(&sb, 410, 1, "crash", NULL, NULL);
    /* worker 2: granted r1 at 600, in its hold when its log ends; worker 0
     * fails an acquire of r2 at 610 (the last record of all) */
    line(&sb, 599, 2, "acquire_invoke", "r1", "\"attempt\":1");
    line(&sb, 600, 2, "acquire_ok", "r1", "\"token\":\"w2\",\"fence\":null,\"valid_until\":900000000");
    line(&sb, 600, 2, "enter", "r1", NULL);
    line(&sb, 610, 0, "acquire_invoke", "r2", "\"attempt\":1");
    line(&sb, 611, 0, "acquire_fail", "r2", "\"err\":\"ERR\"");
    char path[4096];
    snprintf(path, sizeof(path), "%s/h.jsonl", tmp);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs(sb.buf, f);
    fclose(f);
    sb_free(&sb);
    struct history h;
    memset(&h, 0, sizeof(h));
    struct ls_err err = {0, ""};
    REQUIRE(history_load_jsonl(path, &h, &err) == 0);
    /* 0: a pause of worker 0 in its hold: bit (late 150 ms > the 100 ms bound) */
    add_fault(&h, "pause", "worker:0", 0, -1, 30, 40, 0, NULL, 150, 1000);
    /* 1: a pause of worker 0 while it thinks: not bit (late 50 ms: within) */
    add_fault(&h, "pause", "worker:0", 0, -1, 100, 200, 0, NULL, 50, 1000);
    /* 2: latency on worker 1's link while its acquire is in flight: bit */
    add_fault(&h, "latency", "workers:[1]", -1, -1, 15, 25, 0, "[[1,0]]", 0, 10);
    /* 3: partition of worker 0's link while it holds, no command: not bit */
    add_fault(&h, "partition", "workers:[0]", -1, -1, 40, 45, 0, "[[0,0]]", 0, 5);
    /* 4: a node pause while nobody does anything: not bit */
    add_fault(&h, "pause", "node:0", -1, 0, 150, 250, 0, NULL, 0, 100);
    /* 5: a node pause while worker 1's acquire is in flight (it crashes): bit */
    add_fault(&h, "pause", "node:0", -1, 0, 405, 420, 0, NULL, 0, 15);
    /* 6: skipped: undecided */
    add_fault(&h, "pause", "holder", -1, -1, 500, 500, 1, NULL, -1, 100);
    /* 7: all workers paused while worker 0 holds: bit */
    add_fault(&h, "pause", "all-workers", -1, -1, 301.5, 310, 0, NULL, 0, 9);
    /* 8: worker 2 paused after its last record, in the hold it never left: bit */
    add_fault(&h, "pause", "worker:2", 2, -1, 605, 700, 0, NULL, 0, 95);
    /* 9: partition mode reset of worker 0's links during its hold, no
     * command: bit (the connection, and a session lock, went) */
    add_fault(&h, "partition", "holder", 0, 0, 40, 45, 0, "[[0,0]]", 0, 5);
    json_obj_set_int(h.faults[9].record, "connections_reset", 1);

    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    REQUIRE(r != NULL);
    CHECK_INT(bit_at(r, 0), 1);
    CHECK_STR(reason_at(r, 0), "worker 0 was in a hold during the window");
    CHECK_INT(bit_at(r, 1), 0);
    CHECK(strstr(reason_at(r, 1), "no affected worker") != NULL);
    CHECK_INT(bit_at(r, 2), 1);
    CHECK_STR(reason_at(r, 2), "worker 1 had an acquire in flight during the window");
    CHECK_INT(bit_at(r, 3), 0);
    CHECK(strstr(reason_at(r, 3), "no lock command") != NULL);
    CHECK_INT(bit_at(r, 4), 0);
    CHECK_INT(bit_at(r, 5), 1);
    CHECK_INT(bit_at(r, 6), -1);
    CHECK(strstr(reason_at(r, 6), "not injected: no holder") != NULL);
    CHECK_INT(bit_at(r, 7), 1);
    CHECK_INT(bit_at(r, 8), 1);
    CHECK_STR(reason_at(r, 8), "worker 2 was in a hold during the window");
    CHECK_INT(bit_at(r, 9), 1);
    CHECK_STR(reason_at(r, 9), "worker 0 was in a hold during the window");

    CHECK_INT(geti(r, "coverage.faults.occurrences"), 10);
    CHECK_INT(geti(r, "coverage.faults.bit"), 6);
    CHECK_INT(geti(r, "coverage.faults.not_bit"), 3);
    CHECK_INT(geti(r, "coverage.faults.undecided"), 1);
    CHECK_INT(geti(r, "coverage.faults.late"), 1);
    CHECK_INT(geti(r, "coverage.faults.max_late_ms"), 150);
    CHECK_INT(geti(r, "faults.0.late_ms"), 150);
    CHECK_INT(geti(r, "coverage.holds"), 4);
    CHECK_INT(geti(r, "coverage.grants"), 4);
    CHECK_INT(geti(r, "coverage.contended_acquires"), 1);
    CHECK_INT(geti(r, "coverage.grant_floor"), 1); /* no workload */
    CHECK(has_warning(r, "coverage: 6 of 10 fault occurrences bit"));
    CHECK(has_warning(r, "faults: 1 of 10 occurrences started late"));
    CHECK(has_warning(r, "the latest by 150 ms"));
    json_free(r);
    history_free(&h);
}

/* A late start within the bound of a long fault (10% of 5 s = 500 ms) is
 * no warning; the bound is max(100 ms, 10% of the duration). */
static void test_late_bound(void)
{
    struct history h;
    memset(&h, 0, sizeof(h));
    add_fault(&h, "pause", "worker:0", 0, -1, 100, 5100, 0, NULL, 400, 5000);
    add_fault(&h, "pause", "worker:0", 0, -1, 100, 5100, 0, NULL, 99, 10);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "coverage.faults.late"), 0);
    CHECK_INT(geti(r, "coverage.faults.max_late_ms"), 400);
    CHECK(!has_warning(r, "started late"));
    json_free(r);
    history_free(&h);
    memset(&h, 0, sizeof(h));
    add_fault(&h, "pause", "worker:0", 0, -1, 100, 5100, 0, NULL, 501, 5000);
    add_fault(&h, "pause", "worker:0", 0, -1, 100, 5100, 0, NULL, 101, 10);
    r = check_run(&h, &p);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "coverage.faults.late"), 2);
    CHECK(has_warning(r, "faults: 2 of 2 occurrences started late"));
    json_free(r);
    history_free(&h);
}

/* A serial nemesis start deferred behind another added occurrence is due
 * when that one was planned to end, not at its own planned time. */
static void test_due(void)
{
    int64_t next[2] = {100, 200};
    struct schedule s;
    memset(&s, 0, sizeof(s));
    s.nspecs = 2;
    s.nexplicit = 1;
    s.next_start = next;
    s.added_free_at = 500;
    CHECK_INT(schedule_due(&s, 0), 100);
    CHECK_INT(schedule_due(&s, 1), 200); /* not serial: its own time */
    s.serial = 1;
    CHECK_INT(schedule_due(&s, 0), 100); /* the workload's faults are never deferred */
    CHECK_INT(schedule_due(&s, 1), 500);
    s.added_free_at = 150;
    CHECK_INT(schedule_due(&s, 1), 200);
}

static struct workload *load(const char *yaml)
{
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    if (workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err) != 0)
        fprintf(stderr, "  load: %s\n", err.msg);
    return w;
}

static void test_floor_and_stuck_after(void)
{
    /* the reproduction: 6 workers, 2 resources, holds 20..80 ms,
     * think 5 ms, 3 s: min(6 / 60 ms, 2 / 50 ms) = 40/s, 120 expected */
    struct workload *w = load("duration: 3s\n");
    REQUIRE(w != NULL);
    double e = 0;
    CHECK_INT(check_grant_floor(w, 1, 0, 0, &e), 6);
    CHECKF(fabs(e - 120) < 1e-6, "expected %g", e);
    CHECK_INT(check_grant_floor(w, 2, 0, 0, NULL), 12); /* a semaphore of 2 */
    /* a slow lock: a granting try takes 300 ms (naive-setnx-expire's gap),
     * a release 1 ms: min(6 / 356 ms, 2 / 350 ms) x 3 s = 17.1 -> 1 */
    CHECK_INT(check_grant_floor(w, 1, 300e6, 1e6, &e), 1);
    CHECKF(fabs(e - 3 * 2 / 0.35) < 1e-6, "expected %g", e);
    /* fast commands change nothing: max(g + rel, 5 ms), max(hold + g, 1 ms) */
    CHECK_INT(check_grant_floor(w, 1, 0.5e6, 0.3e6, &e), 5);
    CHECK_INT(check_stuck_after_auto(w), 2160000000LL); /* 2 x (80 ms + the 1 s default ttl) */
    workload_free(w);
    w = load("duration: 3s\nlock: {ttl: 100ms}\nworkers: {hold: 1ms, think: 10s, count: 2}\n");
    REQUIRE(w != NULL);
    CHECK_INT(check_grant_floor(w, 1, 0, 0, NULL), 1); /* at least 1 */
    CHECK_INT(check_stuck_after_auto(w), 2000000000LL); /* 2 x 101 ms < 2 s */
    workload_free(w);
    w = load("lock: {ttl: 5s}\nworkers: {hold: 3s}\n");
    REQUIRE(w != NULL);
    CHECK_INT(check_stuck_after_auto(w), 16 * 1000000000LL);
    workload_free(w);
    /* unbounded: exponential mean 1 s -> p99.9 = 1 s x ln 1000 */
    w = load("lock: {ttl: 300ms}\nworkers: {hold: {dist: exponential, mean: 1s}}\n");
    REQUIRE(w != NULL);
    CHECKF(llabs(check_stuck_after_auto(w) - llround(2 * (log(1000.0) * 1e9 + 3e8))) < 1000,
           "exponential: %lld", (long long)check_stuck_after_auto(w));
    workload_free(w);
    /* given explicitly, it wins */
    struct ls_err err = {0, ""};
    const char *given = "lock: {ttl: 5s}\nworkers: {hold: 3s}\ncheck: {stuck_after: 1s}\n";
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(rundir_meta_parse("t.yaml", given, strlen(given), &h.meta, &err) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    CHECK_INT(p.stuck_after, 1000000000LL);
    CHECK_INT(p.stuck_after_auto, 0);
    rundir_meta_free(h.meta);
}

static struct json *parse(const char *s)
{
    struct json *j = NULL;
    char why[128];
    if (json_parse(s, strlen(s), &j, why, sizeof(why)) != 0)
        fprintf(stderr, "  parse: %s\n", why);
    return j;
}

static const char *reason0(const struct json *r)
{
    const struct json *v = json_path(r, "verdict_reasons.0");
    return v && v->type == JSON_STR ? v->s : "";
}

static void test_verdict_rule(void)
{
    static const char *const nobite =
        "{\"verdict_checks\":\"valid\",\"interrupted\":false,"
        "\"checks\":{\"mutex\":{\"verdict\":\"valid\",\"violations\":0}},"
        "\"coverage\":{\"grants\":50,\"grant_floor\":6,\"enough_activity\":true,"
        "\"faults\":{\"occurrences\":2,\"bit\":0,\"not_bit\":1,\"undecided\":1}}}";
    struct json *r = parse(nobite);
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(json_get_str(r, "verdict", ""), "unknown");
    CHECK(strstr(reason0(r), "no fault occurrence bit (2: 1 did not, 1 not injected)") != NULL);
    CHECK_INT(result_exit_code(r), 4);

    /* gated on coverage: the expectation decides */
    struct workload *w = load("expect: {coverage.faults.bit: 0}\n");
    REQUIRE(w != NULL);
    result_eval_expectations(r, w);
    CHECK_STR(json_get_str(r, "verdict", ""), "pass");
    CHECK_INT(json_obj_get(r, "verdict_reasons")->n, 0);
    workload_free(w);
    /* an expectation on anything else does not lift the rule */
    w = load("expect: {checks.mutex.violations: 0}\n");
    REQUIRE(w != NULL);
    result_eval_expectations(r, w);
    CHECK_STR(json_get_str(r, "verdict", ""), "unknown");
    workload_free(w);
    json_free(r);

    /* a fail stays a fail whatever the coverage */
    r = parse("{\"verdict_checks\":\"invalid\",\"coverage\":{\"enough_activity\":false,"
              "\"grants\":1,\"grant_floor\":6,\"faults\":{\"occurrences\":1,\"bit\":0}}}");
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(json_get_str(r, "verdict", ""), "fail");
    CHECK_INT(json_obj_get(r, "verdict_reasons")->n, 0);
    json_free(r);

    /* too little activity */
    r = parse("{\"verdict_checks\":\"valid\",\"coverage\":{\"enough_activity\":false,"
              "\"grants\":1,\"grant_floor\":6,\"faults\":{\"occurrences\":0,\"bit\":0}}}");
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(json_get_str(r, "verdict", ""), "unknown");
    CHECK_STR(reason0(r), "too little activity: 1 grants, below this workload's floor of 6 "
                          "(coverage.grant_floor)");
    json_free(r);

    /* incomplete evidence: unknown even for a fail; a missing evidence is complete */
    r = parse("{\"verdict_checks\":\"invalid\",\"evidence\":{\"complete\":false,"
              "\"gaps\":[\"events/worker-001.bin: missing\"]}}");
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(json_get_str(r, "verdict", ""), "unknown");
    CHECK_STR(reason0(r), "evidence gap: events/worker-001.bin: missing");
    json_free(r);
    r = parse("{\"verdict_checks\":\"valid\",\"coverage\":{\"enough_activity\":true,"
              "\"faults\":{\"occurrences\":3,\"bit\":1}}}");
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(json_get_str(r, "verdict", ""), "pass");
    json_free(r);

    /* a checker that could not decide names itself */
    r = parse("{\"verdict_checks\":\"unknown\",\"checks\":{\"fencing\":{\"verdict\":\"unknown\","
              "\"note\":\"not available: storage.jsonl missing from the run directory\"}}}");
    REQUIRE(r != NULL);
    result_eval_expectations(r, NULL);
    CHECK_STR(reason0(r), "the fencing checker could not decide: not available: storage.jsonl "
                          "missing from the run directory");
    json_free(r);
}

static const char *why_of(const struct json *r, int i)
{
    char path[64];
    snprintf(path, sizeof(path), "expectations.%d.why", i);
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "";
}

static void test_not_measured(void)
{
    struct json *r = parse(
        "{\"verdict_checks\":\"unknown\",\"checks\":{"
        "\"fencing\":{\"verdict\":\"valid\",\"offered\":false,\"available\":true,"
        "\"not_offered\":\"lock.fencing is false\",\"plain_lost_updates\":0,"
        "\"fenced_lost_updates\":null},"
        "\"liveness\":{\"verdict\":\"unknown\",\"stuck_resources\":0}},"
        "\"latency\":{\"renew\":{\"count\":0,\"p99_ms\":null}}}");
    REQUIRE(r != NULL);
    struct workload *w = load("expect:\n"
                              "  checks.fencing.fenced_lost_updates: 0\n"
                              "  checks.fencing.plain_lost_updates: 0\n"
                              "  checks.liveness.stuck_resources: 0\n"
                              "  checks.jobs.duplicates: 0\n"
                              "  latency.renew.p99_ms: '< 5'\n"
                              "  checks.fencing.offered: 0\n");
    REQUIRE(w != NULL);
    CHECK_INT(result_eval_expectations(r, w), 4);
    CHECK_STR(why_of(r, 0), "not measured: fencing not offered (lock.fencing is false)");
    CHECK(json_path(r, "expectations.0.got")->type == JSON_NULL);
    CHECK(json_path(r, "expectations.1.ok")->i == 1);
    CHECK(json_path(r, "expectations.1.why") == NULL);
    CHECK_STR(why_of(r, 2), "not measured: the liveness checker could not decide");
    CHECK(json_path(r, "expectations.2.got")->type == JSON_NULL);
    CHECK(strstr(why_of(r, 3), "not measured: no jobs checker") != NULL);
    CHECK(strstr(why_of(r, 4), "not measured: latency.renew.p99_ms is null") != NULL);
    CHECK(json_path(r, "expectations.5.ok")->i == 1); /* offered: measured, false */
    CHECK_STR(json_get_str(r, "verdict", ""), "fail");
    workload_free(w);
    json_free(r);
}

static void test_paths(void)
{
    static const char *const ok[] = {
        "coverage.holds", "coverage.grants", "coverage.contended_acquires",
        "coverage.grant_floor", "coverage.enough_activity", "coverage.faults.occurrences",
        "coverage.faults.bit", "coverage.faults.not_bit", "coverage.faults.undecided",
        "coverage.faults.late", "coverage.faults.max_late_ms", "faults.0.bit",
        "faults[3].late_ms", "checks.liveness.stuck_after_ms"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        CHECKF(result_path_valid(ok[i]), "%s should be a documented path", ok[i]);
    CHECK(!result_path_valid("coverage.faults.bitten"));
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_bite_rules);
    RUN(test_late_bound);
    RUN(test_due);
    RUN(test_floor_and_stuck_after);
    RUN(test_verdict_rule);
    RUN(test_not_measured);
    RUN(test_paths);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
