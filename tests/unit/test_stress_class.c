/*
 * test_stress_class.c: the failure classes of `lockstorm stress --until`
 * (harness/stress_class.c) read from result documents written here: the
 * list and its validation, counts at documented result paths, checkers
 * that said invalid, "fail" as the verdict, the first class of a run in
 * order of severity among what failed (never a count an expectation
 * allowed), and the fewest workers each can show in.
 */
#include <stdio.h>
#include <string.h>

#include "harness/stress.h"
#include "model/resultpath.h"
#include "tests/unit/testing.h"
#include "util/json.h"

static struct json *doc(const char *text)
{
    struct json *d = NULL;
    char why[128];
    if (json_parse(text, strlen(text), &d, why, sizeof(why)) < 0)
        fprintf(stderr, "bad test JSON: %s\n", why);
    return d;
}

static void test_list_and_paths(void)
{
    char list[800];
    stress_class_list(list, sizeof(list));
    CHECKF(strstr(list, "lock_broken, ") == list, "%s", list);
    CHECKF(strstr(list, ", stale_holder") && strstr(list, ", mutex") && strstr(list, ", fail"),
           "%s", list);
    CHECK(!strstr(list, "windows") && !strstr(list, "coverage")); /* no checks.NAME verdict */
    int n = 0;
    for (char *p = list; *p;) { /* every listed name is valid; every count class documented */
        char name[64];
        size_t len = strcspn(p, ",");
        snprintf(name, sizeof(name), "%.*s", (int)len, p);
        CHECKF(stress_class_valid(name), "%s", name);
        const char *path = stress_class_path(name);
        if (path)
            CHECKF(result_path_valid(path), "%s: %s", name, path);
        n++;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    CHECKF(n >= 15, "%d classes", n);
    CHECK(!stress_class_valid("bogus"));
    CHECK(!stress_class_valid("lock-broken")); /* the result's spelling is lock_broken */
    CHECK(!stress_class_valid("windows"));
    CHECK(!stress_class_valid(NULL));
}

static void test_counts(void)
{
    struct json *r = doc("{\"verdict\":\"fail\",\"checks\":{"
                         "\"mutex\":{\"verdict\":\"invalid\",\"renewed_after_loss\":0,"
                         "\"by_class\":{\"stale_holder\":3,\"lock_broken\":0}},"
                         "\"fencing\":{\"verdict\":\"valid\",\"plain_lost_updates\":2,"
                         "\"fenced_lost_updates\":0},"
                         "\"liveness\":{\"verdict\":\"unknown\"}}}");
    CHECK_INT(stress_class_count(r, "stale_holder"), 3);
    CHECK_INT(stress_class_count(r, "lock_broken"), 0);
    CHECK_INT(stress_class_count(r, "plain_lost_updates"), 2);
    CHECK_INT(stress_class_count(r, "duplicates"), 0); /* no jobs section: absent is 0 */
    CHECK_INT(stress_class_count(r, "mutex"), 1);
    CHECK_INT(stress_class_count(r, "fencing"), 0);
    CHECK_INT(stress_class_count(r, "liveness"), 0);  /* unknown is not invalid */
    CHECK_INT(stress_class_count(r, "fail"), 1);
    CHECK_STR(stress_primary_class(r), "stale_holder");
    struct json *c = stress_classes_of(r);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, c, -1);
    CHECK_STR(sb_cstr(&sb), "{\"stale_holder\":3,\"plain_lost_updates\":2,\"mutex\":1}");
    sb_free(&sb);
    json_free(c);
    json_free(r);

    r = doc("{\"verdict\":\"pass\",\"checks\":{\"mutex\":{\"verdict\":\"invalid\","
            "\"by_class\":{\"stale_holder\":1,\"lock_broken\":4}}}}");
    CHECK_INT(stress_class_count(r, "fail"), 0); /* a negative control's expect: passes */
    CHECK_STR(stress_primary_class(r), "lock_broken"); /* the most severe first */
    json_free(r);

    r = doc("{\"verdict\":\"fail\",\"checks\":{\"liveness\":{\"verdict\":\"invalid\"}}}");
    CHECK_STR(stress_primary_class(r), "liveness");
    json_free(r);
    r = doc("{\"verdict\":\"fail\",\"checks\":{\"mutex\":{\"verdict\":\"valid\"}}}");
    CHECK(stress_primary_class(r) == NULL); /* failed an expectation only */
    json_free(r);
}

/* With expectations, the class is what a failed expectation read: a count
 * an expectation allowed is not the class of a run that failed another. */
static void test_primary_from_expectations(void)
{
    const char *checks = "\"checks\":{\"mutex\":{\"verdict\":\"invalid\",\"violations\":5,"
                         "\"by_class\":{\"stale_holder\":5,\"lock_broken\":0}},"
                         "\"fencing\":{\"verdict\":\"invalid\",\"fence_regressions\":2}}";
    char buf[1024];
    /* stale-holder allowed (a correct lock under pauses), too few grants */
    snprintf(buf, sizeof(buf), "{\"verdict\":\"fail\",%s,\"expectations\":["
             "{\"path\":\"checks.mutex.by_class.stale_holder\",\"ok\":true},"
             "{\"path\":\"checks.fencing.fence_regressions\",\"ok\":true},"
             "{\"path\":\"counts.grants\",\"ok\":false}]}", checks);
    struct json *r = doc(buf);
    CHECK(stress_primary_class(r) == NULL);
    json_free(r);
    /* stale-holder allowed, the fence regressions were not */
    snprintf(buf, sizeof(buf), "{\"verdict\":\"fail\",%s,\"expectations\":["
             "{\"path\":\"checks.mutex.by_class.stale_holder\",\"ok\":true},"
             "{\"path\":\"checks.fencing.fence_regressions\",\"ok\":false}]}", checks);
    r = doc(buf);
    CHECK_STR(stress_primary_class(r), "fence_regressions");
    json_free(r);
    /* a failed expectation on a checker's other field: that checker */
    snprintf(buf, sizeof(buf), "{\"verdict\":\"fail\",%s,\"expectations\":["
             "{\"path\":\"checks.mutex.violations\",\"ok\":false}]}", checks);
    r = doc(buf);
    CHECK_STR(stress_primary_class(r), "mutex");
    json_free(r);
    /* a negative control whose lock_broken did not appear: nothing applies */
    snprintf(buf, sizeof(buf), "{\"verdict\":\"fail\",%s,\"expectations\":["
             "{\"path\":\"checks.mutex.by_class.lock_broken\",\"ok\":false}]}", checks);
    r = doc(buf);
    CHECK(stress_primary_class(r) == NULL);
    json_free(r);
    /* without expectations: only counts of a checker that said invalid */
    r = doc("{\"verdict\":\"fail\",\"checks\":{\"mutex\":{\"verdict\":\"valid\","
            "\"by_class\":{\"stale_holder\":2}},\"liveness\":{\"verdict\":\"invalid\"}}}");
    CHECK_STR(stress_primary_class(r), "liveness");
    json_free(r);
}

static void test_min_workers(void)
{
    CHECK_INT(stress_class_min_workers("lock_broken"), 2);
    CHECK_INT(stress_class_min_workers("stale_holder"), 2);
    CHECK_INT(stress_class_min_workers("mutex"), 2);
    CHECK_INT(stress_class_min_workers("stuck_resources"), 1);
    CHECK_INT(stress_class_min_workers("fail"), 1);
}

int main(void)
{
    RUN(test_list_and_paths);
    RUN(test_counts);
    RUN(test_primary_from_expectations);
    RUN(test_min_workers);
    return t_finish();
}
