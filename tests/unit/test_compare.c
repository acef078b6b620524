/*
 * test_compare.c: the comparison of runs (reports/compare.h) from
 * result.json files written here: rows with the contract fields, per-kind
 * sums over fault windows, violations counted per kind active during them
 * (or, with none active, as the "after" of the window that ended last),
 * n/a kinds of a compare variant, "-" for fences a lock does not offer,
 * the same-schedule check, and the text tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/compare_model.h"
#include "reports/compare.h"
#include "tests/unit/testing.h"
#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

static char *tmp;

static const char RUN_A[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"fail\","
    "\"interrupted\":false,\"duration_s\":10,"
    "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
    "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redis-single\"},"
    "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
    "\"throughput\":{\"grants_per_s\":20.5},\"latency\":{\"acquire\":{\"p99_ms\":3.25}},"
    "\"counts\":{\"grants\":205,\"attempts\":400,\"unknown\":3},"
    "\"checks\":{\"mutex\":{\"violations\":3,\"by_class\":{\"stale_holder\":2,\"lock_broken\":1}},"
    "\"fencing\":{\"offered\":true,\"plain_lost_updates\":2,\"fenced_lost_updates\":0,"
    "\"fence_regressions\":4}},"
    "\"faults\":[{\"id\":0,\"kind\":\"pause\"},{\"id\":1,\"kind\":\"pause\"},{\"id\":2,\"kind\":\"clock\"}],"
    "\"fault_windows\":["
    "{\"id\":0,\"kind\":\"pause\",\"duration_ms\":1000,\"attempts\":10,\"grants\":4,\"unknown\":1,\"acquire_p99_ms\":2.5},"
    "{\"id\":1,\"kind\":\"pause\",\"duration_ms\":1000,\"attempts\":10,\"grants\":6,\"unknown\":0,\"acquire_p99_ms\":9.5},"
    "{\"id\":2,\"kind\":\"clock\",\"duration_ms\":500,\"attempts\":5,\"grants\":5,\"unknown\":0,\"acquire_p99_ms\":null}],"
    "\"violations\":["
    "{\"class\":\"stale-holder\",\"faults\":[0,1]},"
    "{\"class\":\"stale-holder\",\"faults\":[1]},"
    "{\"class\":\"lock-broken\",\"faults\":[1,2]}]}";

static const char RUN_B[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"pass\","
    "\"interrupted\":false,\"duration_s\":10,"
    "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
    "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redlock\"},"
    "\"cluster\":{\"topology\":\"independent\",\"nodes\":3}},"
    "\"throughput\":{\"grants_per_s\":30},\"latency\":{\"acquire\":{\"p99_ms\":1.5}},"
    "\"counts\":{\"grants\":300,\"attempts\":500,\"unknown\":0},"
    "\"checks\":{\"mutex\":{\"violations\":0,\"by_class\":{\"stale_holder\":0,\"lock_broken\":0}},"
    "\"fencing\":{\"offered\":false,\"plain_lost_updates\":0}},"
    "\"faults\":[{\"id\":0,\"kind\":\"latency\"}],"
    "\"fault_windows\":[{\"id\":0,\"kind\":\"latency\",\"duration_ms\":2000,\"attempts\":8,"
    "\"grants\":8,\"unknown\":2,\"acquire_p99_ms\":40}],"
    "\"violations\":[]}";

/* A replicated run with a failover after a pause: a violation inside the
 * failover window, two begun once a window had ended (the aftermath), one
 * before any window ended (counted for no kind). */
static const char RUN_C[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"fail\","
    "\"interrupted\":false,\"duration_s\":10,"
    "\"workload\":{\"name\":\"w\",\"duration\":\"10s\","
    "\"faults\":[{\"kind\":\"pause\"},{\"kind\":\"failover\"}],"
    "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redis-single\"},"
    "\"cluster\":{\"topology\":\"replicated\",\"nodes\":2}},"
    "\"counts\":{\"grants\":10,\"attempts\":10,\"unknown\":0},"
    "\"faults\":[{\"id\":0,\"kind\":\"pause\"},{\"id\":1,\"kind\":\"failover\"}],"
    "\"fault_windows\":["
    "{\"id\":0,\"kind\":\"pause\",\"start_ms\":1000,\"end_ms\":2000,\"duration_ms\":1000},"
    "{\"id\":1,\"kind\":\"failover\",\"start_ms\":4000,\"end_ms\":5000,\"duration_ms\":1000}],"
    "\"violations\":["
    "{\"class\":\"lock-broken\",\"faults\":[],\"overlap_start_ms\":500},"
    "{\"class\":\"lock-broken\",\"faults\":[],\"overlap_start_ms\":2500},"
    "{\"class\":\"lock-broken\",\"faults\":[1],\"overlap_start_ms\":4500},"
    "{\"class\":\"stale-holder\",\"faults\":[],\"overlap_start_ms\":6000}]}";

/* The same workload on one independent node, its failover left out. */
static const char RUN_D[] =
    "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"pass\","
    "\"interrupted\":false,\"duration_s\":10,"
    "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
    "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redis-single\"},"
    "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
    "\"counts\":{\"grants\":10,\"attempts\":10,\"unknown\":0},"
    "\"faults\":[{\"id\":0,\"kind\":\"pause\"}],"
    "\"fault_windows\":["
    "{\"id\":0,\"kind\":\"pause\",\"start_ms\":1000,\"end_ms\":2000,\"duration_ms\":1000}],"
    "\"violations\":[]}";

/* Contract: dir/result.json with text; returns the directory (static buffer per call site). */
static void write_run(const char *name, const char *text, char *dir, size_t n)
{
    snprintf(dir, n, "%s/%s", tmp, name);
    mkdir(dir, 0700);
    char path[4200];
    snprintf(path, sizeof(path), "%s/result.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_rows_and_kinds(void)
{
    char a[4096], b[4096];
    write_run("single", RUN_A, a, sizeof(a));
    write_run("redlock-3", RUN_B, b, sizeof(b));
    const char *dirs[] = {a, b};
    struct json *doc = NULL;
    struct ls_err err = {0};
    REQUIRE(compare_build(dirs, 2, NULL, &doc, &err) == 0);
    CHECK_STR(json_get_str(doc, "format", ""), COMPARE_FORMAT);
    const struct json *r0 = json_path(doc, "runs[0]");
    const struct json *r1 = json_path(doc, "runs[1]");
    REQUIRE(r0 && r1);
    CHECK_STR(json_get_str(r0, "label", ""), "single");
    CHECK_STR(json_get_str(r1, "lock", ""), "redlock");
    CHECK_INT(json_get_int(r1, "nodes", 0), 3);
    CHECK_INT(json_get_int(r0, "stale_holder", -1), 2);
    CHECK_INT(json_get_int(r0, "lock_broken", -1), 1);
    CHECK_INT(json_get_int(r0, "fence_regressions", -1), 4);
    CHECK(json_obj_get(r1, "fenced_lost_updates")->type == JSON_NULL); /* not offered */
    /* pause: 10 grants over 2 s; p99 the larger window's; violations once per kind */
    const struct json *p = json_path(r0, "by_fault.pause");
    REQUIRE(p != NULL);
    CHECK_INT(json_get_int(p, "windows", 0), 2);
    CHECK(json_get_num(p, "grants_per_s", 0) == 5.0);
    CHECK(json_get_num(p, "acquire_p99_ms_max", 0) == 9.5);
    CHECK_INT(json_get_int(p, "unknown", -1), 1);
    CHECK_INT(json_get_int(p, "stale_holder", -1), 2);
    CHECK_INT(json_get_int(p, "lock_broken", -1), 1);
    const struct json *c = json_path(r0, "by_fault.clock");
    REQUIRE(c != NULL);
    CHECK_INT(json_get_int(c, "lock_broken", -1), 1);
    CHECK_INT(json_get_int(c, "stale_holder", -1), 0);
    CHECK(json_obj_get(c, "acquire_p99_ms_max")->type == JSON_NULL);
    /* kinds in order of first appearance, over all runs */
    const struct json *k = json_obj_get(doc, "fault_kinds");
    REQUIRE(k && k->n == 3);
    CHECK_STR(k->kids[0]->s, "pause");
    CHECK_STR(k->kids[2]->s, "latency");
    const struct json *same = json_obj_get(doc, "same_schedule");
    CHECK(same && same->type == JSON_BOOL && same->i == 1);

    struct strbuf sb = STRBUF_INIT;
    render_compare_text(doc, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(strstr(t, "same seed, workers and fault schedule") != NULL, "%s", t);
    CHECKF(strstr(t, "| pause") && strstr(t, "| clock") && strstr(t, "| latency"), "%s", t);
    /* the single node's row: fenced lost 0; redlock's: fences not offered */
    CHECKF(strstr(t, "\nsingle ") && strstr(t, "\nredlock-3 "), "%s", t);
    CHECKF(strstr(t, "2/1") != NULL, "pause st/br 2/1 in\n%s", t);
    sb_free(&sb);
    json_free(doc);

    /* labels given; a run with another seed makes the schedule differ */
    char c2[4096], other[sizeof(RUN_B) + 8];
    snprintf(other, sizeof(other), "%s", RUN_B);
    char *s = strstr(other, "\"seed\":7");
    REQUIRE(s != NULL);
    s[7] = '8';
    write_run("seed8", other, c2, sizeof(c2));
    const char *d2[] = {a, c2};
    const char *labels[] = {"A", NULL};
    REQUIRE(compare_build(d2, 2, labels, &doc, &err) == 0);
    CHECK_STR(json_get_str(json_path(doc, "runs[0]"), "label", ""), "A");
    CHECK_STR(json_get_str(json_path(doc, "runs[1]"), "label", ""), "seed8");
    same = json_obj_get(doc, "same_schedule");
    CHECK(same && same->i == 0);
    render_compare_text(doc, &sb);
    CHECK(strstr(sb_cstr(&sb), "warning: the runs differ") != NULL);
    sb_free(&sb);
    json_free(doc);
}

static void test_errors(void)
{
    struct json *doc = NULL;
    struct ls_err err = {0};
    const char *missing[] = {"/nonexistent/run"};
    CHECK(compare_build(missing, 1, NULL, &doc, &err) == LS_EINPUT);
    CHECK(strstr(err.msg, "/nonexistent/run/result.json") != NULL);
    CHECK(doc == NULL);
    char d[4096];
    write_run("notours", "{\"format\":\"something-else\"}", d, sizeof(d));
    const char *dirs[] = {d};
    ls_err_clear(&err);
    CHECK(compare_build(dirs, 1, NULL, &doc, &err) == LS_EINPUT);
    CHECK(strstr(err.msg, "not a lockstorm result.json") != NULL);
    ls_err_clear(&err);
    CHECK(compare_build(dirs, 0, NULL, &doc, &err) == LS_EUSAGE);
}

/* A kind a variant left out is n/a with its reason, and does not make the
 * schedules differ; a violation with no fault active counts as the
 * aftermath of the window that ended last before it. */
static void test_na_and_after(void)
{
    char c[4096], d[4096];
    write_run("repl", RUN_C, c, sizeof(c));
    write_run("single", RUN_D, d, sizeof(d));
    const char *dirs[] = {c, d};
    struct compare_na na[] = {{1, "failover", "no replica to promote"}};
    struct json *doc = NULL;
    struct ls_err err = {0};
    REQUIRE(compare_build_na(dirs, 2, NULL, na, 1, &doc, &err) == 0);
    const struct json *same = json_obj_get(doc, "same_schedule");
    CHECK(same && same->type == JSON_BOOL && same->i == 1);
    const struct json *p = json_path(doc, "runs[0].by_fault.pause");
    const struct json *f = json_path(doc, "runs[0].by_fault.failover");
    REQUIRE(p && f);
    CHECK_INT(json_get_int(p, "lock_broken", -1), 0);
    CHECK_INT(json_get_int(p, "after_lock_broken", -1), 1);
    CHECK_INT(json_get_int(p, "after_stale_holder", -1), 0);
    CHECK_INT(json_get_int(f, "lock_broken", -1), 1);
    CHECK_INT(json_get_int(f, "after_stale_holder", -1), 1);
    CHECK_INT(json_get_int(f, "after_lock_broken", -1), 0);
    CHECK_STR(json_get_str(json_path(doc, "runs[1].by_fault.failover"), "not_applicable", ""),
              "no replica to promote");
    CHECK(json_path(doc, "runs[1].by_fault.pause") != NULL);
    const struct json *k = json_obj_get(doc, "fault_kinds");
    CHECK(k && k->n == 2);
    struct strbuf sb = STRBUF_INIT;
    render_compare_text(doc, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(strstr(t, "| failover") && strstr(t, "after"), "%s", t);
    CHECKF(strstr(t, "n/a: single, failover: no replica to promote\n") != NULL, "%s", t);
    CHECKF(strstr(t, "   n/a") != NULL, "%s", t);
    CHECKF(strstr(t, "same seed, workers and fault schedule") != NULL, "%s", t);
    sb_free(&sb);
    json_free(doc);

    /* without the n/a mark the schedules differ, and the group is "-" */
    REQUIRE(compare_build(dirs, 2, NULL, &doc, &err) == 0);
    same = json_obj_get(doc, "same_schedule");
    CHECK(same && same->type == JSON_BOOL && same->i == 0);
    CHECK(json_path(doc, "runs[1].by_fault.failover") == NULL);
    json_free(doc);
}

/* A fence regression inside a pause window, no mutex violation: the
 * conclusion under pause is never "clean" (only mutex classes are charged
 * to windows), and the whole run names the fence regressions. */
static void test_other_findings(void)
{
    static const char RUN_F[] =
        "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"fail\","
        "\"verdict_checks\":\"invalid\",\"interrupted\":false,\"duration_s\":10,"
        "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
        "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redis-single\"},"
        "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
        "\"checks\":{\"mutex\":{\"verdict\":\"valid\",\"violations\":0,"
        "\"renewed_after_loss\":0,\"by_class\":{\"stale_holder\":0,\"lock_broken\":0}},"
        "\"fencing\":{\"verdict\":\"invalid\",\"offered\":true,\"plain_lost_updates\":0,"
        "\"fenced_lost_updates\":0,\"fence_regressions\":2}},"
        "\"faults\":[{\"id\":0,\"kind\":\"pause\"}],"
        "\"fault_windows\":[{\"id\":0,\"kind\":\"pause\",\"start_ms\":1000,"
        "\"end_ms\":2000,\"duration_ms\":1000}],\"violations\":[]}";
    static const char RUN_J[] = /* a jobs duplicate: no count of the row but its checker's */
        "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"fail\","
        "\"verdict_checks\":\"invalid\",\"interrupted\":false,\"duration_s\":10,"
        "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
        "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"redis-single\"},"
        "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
        "\"checks\":{\"jobs\":{\"verdict\":\"invalid\",\"duplicates\":1}},"
        "\"faults\":[{\"id\":0,\"kind\":\"pause\"}],"
        "\"fault_windows\":[{\"id\":0,\"kind\":\"pause\",\"start_ms\":1000,"
        "\"end_ms\":2000,\"duration_ms\":1000}],\"violations\":[]}";
    char f[4096], j[4096], d[4096];
    write_run("o-fence", RUN_F, f, sizeof(f));
    write_run("o-jobs", RUN_J, j, sizeof(j));
    write_run("o-clean", RUN_D, d, sizeof(d));
    const char *dirs[] = {f, j, d};
    struct json *doc = NULL;
    struct ls_err err = {0};
    REQUIRE(compare_build(dirs, 3, NULL, &doc, &err) == 0);
    CHECK_INT(json_get_int(json_path(doc, "runs[0].other_findings"), "fence_regressions", -1), 2);
    CHECK_STR(json_get_str(json_path(doc, "conclusions[0]"), "text", ""),
              "under pause: o-fence no mutex violations, other checkers: 2 findings (see the "
              "run); o-jobs no mutex violations, other checkers: 1 finding (see the run); "
              "o-clean clean");
    CHECK_STR(json_get_str(json_path(doc, "conclusions[1]"), "text", ""),
              "whole run: o-fence fence regressions 2; o-jobs duplicates 1; o-clean clean");
    json_free(doc);
}

/* The checkers column says what they found (clean / violations / unknown
 * with the reason), not pass/fail; an unknown run makes the exit 4. */
static void test_findings(void)
{
    static const char RUN_U[] =
        "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"unknown\","
        "\"verdict_checks\":\"unknown\",\"verdict_reasons\":[\"evidence: worker-002.bin is "
        "missing\"],\"interrupted\":false,\"duration_s\":10,"
        "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
        "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"naive-del\"},"
        "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
        "\"checks\":{\"mutex\":{\"verdict\":\"unknown\",\"violations\":0}},"
        "\"violations\":[]}";
    /* an expect: block passed this one: its checkers still found violations */
    static const char RUN_P[] =
        "{\"format\":\"lockstorm-result\",\"version\":1,\"seed\":7,\"verdict\":\"pass\","
        "\"verdict_checks\":\"invalid\",\"interrupted\":false,\"duration_s\":10,"
        "\"workload\":{\"name\":\"w\",\"duration\":\"10s\",\"faults\":[{\"kind\":\"pause\"}],"
        "\"workers\":{\"count\":4},\"lock\":{\"impl\":\"naive-del\"},"
        "\"cluster\":{\"topology\":\"independent\",\"nodes\":1}},"
        "\"checks\":{\"mutex\":{\"verdict\":\"invalid\",\"violations\":5}},"
        "\"violations\":[]}";
    char a[4096], b[4096], u[4096], p[4096];
    write_run("f-single", RUN_A, a, sizeof(a));
    write_run("f-redlock", RUN_B, b, sizeof(b));
    write_run("f-lost", RUN_U, u, sizeof(u));
    write_run("f-expected", RUN_P, p, sizeof(p));
    const char *dirs[] = {a, b, p, u};
    struct json *doc = NULL;
    struct ls_err err = {0};
    REQUIRE(compare_build(dirs, 3, NULL, &doc, &err) == 0);
    CHECK_STR(json_get_str(json_path(doc, "runs[0]"), "findings", ""), "violations");
    CHECK_STR(json_get_str(json_path(doc, "runs[1]"), "findings", ""), "clean");
    CHECK_STR(json_get_str(json_path(doc, "runs[2]"), "findings", ""), "violations");
    CHECK_INT(compare_exit_code(doc), 0); /* violations found are a finding, not an error */
    struct strbuf sb = STRBUF_INIT;
    render_compare_text(doc, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(strstr(t, "checkers") && !strstr(t, " pass ") && !strstr(t, " fail "), "%s", t);
    CHECKF(strstr(t, "\nf-single    redis-single      1  violations") != NULL, "%s", t);
    CHECKF(strstr(t, "\nf-redlock   redlock           3  clean") != NULL, "%s", t);
    json_free(doc);

    REQUIRE(compare_build(dirs, 4, NULL, &doc, &err) == 0);
    const struct json *r3 = json_path(doc, "runs[3]");
    CHECK_STR(json_get_str(r3, "findings", ""), "unknown");
    CHECK_STR(json_get_str(r3, "findings_reason", ""), "evidence: worker-002.bin is missing");
    CHECK_INT(compare_exit_code(doc), 4);
    sb_reset(&sb);
    render_compare_text(doc, &sb);
    t = sb_cstr(&sb);
    CHECKF(strstr(t, "\nunknown: f-lost: evidence: worker-002.bin is missing\n") != NULL, "%s", t);
    sb_free(&sb);
    json_free(doc);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_rows_and_kinds);
    RUN(test_errors);
    RUN(test_na_and_after);
    RUN(test_findings);
    RUN(test_other_findings);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
