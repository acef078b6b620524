/*
 * test_expect_durations.c: `expect:` conditions written as durations
 * ("< 500ms" against a *_ms path, ">= 1.5s" against a *_s path) are
 * converted to the path's unit when the workload is loaded and evaluated
 * like numbers; a duration on a path that is not a time is refused with
 * FILE:LINE:COL; per-class violation counts are valid paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload.h"
#include "harness/verdict.h"
#include "tests/unit/testing.h"

static struct workload *load(const char *expect_block, char **log)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), "name: t\nexpect:\n%s", expect_block);
    struct workload *w = NULL;
    struct ls_err err = {0};
    size_t n = 0;
    FILE *f = open_memstream(log, &n);
    int rc = workload_load_string("t.yaml", yaml, NULL, 0, &w, f, &err);
    fclose(f);
    return rc == 0 ? w : NULL;
}

static const struct expect_spec *find(const struct workload *w, const char *path)
{
    for (int i = 0; w && i < w->nexpects; i++)
        if (strcmp(w->expects[i].path, path) == 0)
            return &w->expects[i];
    return NULL;
}

static void test_conversion(void)
{
    char *log = NULL;
    struct workload *w = load("  checks.liveness.crash_to_next_grant_ms: \"< 1.5s\"\n"
                              "  checks.liveness.longest_stall_ms: \"<= 500ms\"\n"
                              "  latency.acquire.p99_ms: \"< 250us\"\n"
                              "  duration_s: \">= 2500ms\"\n"
                              "  phases.no_fault.duration_ms: \"> 0\"\n"
                              "  checks.mutex.by_class.stale_holder: 0\n"
                              "  checks.mutex.by_class.lock_broken: \"== 0\"\n",
                              &log);
    CHECKF(w != NULL, "load failed: %s", log ? log : "");
    free(log);
    if (!w)
        return;
    const struct expect_spec *e = find(w, "checks.liveness.crash_to_next_grant_ms");
    REQUIRE(e != NULL);
    CHECK_INT(e->op, EXPECT_LT);
    CHECK(e->value == 1500.0);
    CHECK_STR(e->want, "< 1.5s");
    e = find(w, "checks.liveness.longest_stall_ms");
    REQUIRE(e != NULL);
    CHECK_INT(e->op, EXPECT_LE);
    CHECK(e->value == 500.0);
    e = find(w, "latency.acquire.p99_ms");
    REQUIRE(e != NULL);
    CHECK(e->value == 0.25);
    e = find(w, "duration_s");
    REQUIRE(e != NULL);
    CHECK_INT(e->op, EXPECT_GE);
    CHECK(e->value == 2.5);
    CHECK(find(w, "checks.mutex.by_class.lock_broken") != NULL);

    /* evaluation: the converted values against a result */
    struct json *res = json_new_obj();
    json_obj_set_num(res, "duration_s", 3.0);
    struct json *checks = json_obj_set(res, "checks", json_new_obj());
    struct json *lv = json_obj_set(checks, "liveness", json_new_obj());
    json_obj_set_num(lv, "crash_to_next_grant_ms", 1499.9);
    json_obj_set_num(lv, "longest_stall_ms", 500.5); /* just over: fails */
    struct json *mx = json_obj_set(checks, "mutex", json_new_obj());
    struct json *bc = json_obj_set(mx, "by_class", json_new_obj());
    json_obj_set_int(bc, "stale_holder", 0);
    json_obj_set_int(bc, "lock_broken", 0);
    struct json *lat = json_obj_set(json_obj_set(res, "latency", json_new_obj()), "acquire",
                                    json_new_obj());
    json_obj_set_num(lat, "p99_ms", 0.2);
    struct json *ph = json_obj_set(json_obj_set(res, "phases", json_new_obj()), "no_fault",
                                   json_new_obj());
    json_obj_set_num(ph, "duration_ms", 10);
    int failed = result_eval_expectations(res, w);
    CHECK_INT(failed, 1);
    const struct json *ex = json_obj_get(res, "expectations");
    REQUIRE(ex && ex->n == 7);
    for (size_t i = 0; i < ex->n; i++) {
        const char *p = json_get_str(ex->kids[i], "path", "");
        const struct json *ok = json_obj_get(ex->kids[i], "ok");
        int want_ok = strcmp(p, "checks.liveness.longest_stall_ms") != 0;
        CHECKF(ok && ok->i == want_ok, "%s: ok %d", p, ok ? (int)ok->i : -1);
    }
    CHECK_STR(json_get_str(res, "verdict", ""), "fail");
    /* the condition is echoed as written: a reader sees the duration */
    CHECK_STR(json_get_str(ex->kids[0], "want", ""), "< 1.5s");
    json_free(res);
    workload_free(w);
}

static void test_refused(void)
{
    char *log = NULL;
    struct workload *w = load("  counts.grants: \"> 5ms\"\n", &log);
    CHECK(w == NULL);
    CHECKF(log && strstr(log, "t.yaml:3:18: expect 'counts.grants': bad condition '> 5ms'") &&
               strstr(log, "a duration compares only with a time"),
           "log: %s", log ? log : "");
    free(log);
    workload_free(w);
    log = NULL;
    w = load("  checks.liveness.longest_stall_ms: \"< 5 parsecs\"\n", &log);
    CHECK(w == NULL);
    CHECKF(log && strstr(log, "bad condition"), "log: %s", log ? log : "");
    free(log);
    workload_free(w);
    log = NULL;
    w = load("  checks.liveness.longest_stall_ms: \"< 5xs\"\n", &log);
    CHECK(w == NULL);
    CHECKF(log && strstr(log, "unknown duration unit"), "log: %s", log ? log : "");
    free(log);
    workload_free(w);
}

int main(void)
{
    RUN(test_conversion);
    RUN(test_refused);
    return t_finish();
}
