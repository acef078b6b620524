/*
 * test_story.c: violation stories (checkers/story.c) and the charts' series
 * (checkers/series.c) on hand-built histories: JSONL text loaded by the
 * real loader, a fault window added to the loaded history the way
 * faults.jsonl would, then the real checkers via check_run. The story text
 * is compared in full: every sentence must come from a record.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/series.h"
#include "checkers/story.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static char *tmp;

static long long ns(double t_ms)
{
    return llround(t_ms * 1e6);
}

static void line(struct strbuf *sb, double t, int w, const char *type, const char *extra)
{
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\",\"res\":\"r0\"", ns(t), w, type);
    if (extra && *extra)
        sb_printf(sb, ",%s", extra);
    sb_puts(sb, "}\n");
}

static void grant(struct strbuf *sb, int w, double inv, double ok, long fence, double vu)
{
    char extra[200];
    line(sb, inv, w, "acquire_invoke", "\"attempt\":1");
    snprintf(extra, sizeof(extra), "\"token\":\"w%d\",\"fence\":%ld,\"valid_until\":%lld", w,
             fence, ns(vu));
    line(sb, ok, w, "acquire_ok", extra);
}

static void store(struct strbuf *sb, double t, int w, const char *type, int fenced, long fence,
                  long counter, int accepted)
{
    char extra[200];
    snprintf(extra, sizeof(extra),
             "\"fence\":%ld,\"fenced\":%s,\"counter\":%ld,\"accepted\":%s", fence,
             fenced ? "true" : "false", counter, accepted ? "true" : "false");
    line(sb, t, w, type, extra);
}

static int load_text(const char *text, struct history *h)
{
    return t_load_jsonl(tmp, text, h);
}

/* The demo's story: w3 paused past its lease while w5 takes the lock. */
static void stale_history(struct strbuf *sb)
{
    grant(sb, 3, 1203.9, 1204.0, 41, 1504.0);
    line(sb, 1204.1, 3, "enter", NULL);
    store(sb, 1204.2, 3, "store_read", 0, 41, 0, 1);
    store(sb, 1204.3, 3, "store_read", 1, 41, 0, 1);
    grant(sb, 5, 1510.5, 1511.0, 42, 1811.0);
    line(sb, 1511.1, 5, "enter", NULL);
    store(sb, 1511.6, 5, "store_read", 0, 42, 0, 1);
    store(sb, 1511.7, 5, "store_read", 1, 42, 0, 1);
    store(sb, 1560.0, 5, "store_write", 0, 42, 1, 1);
    store(sb, 1560.1, 5, "store_write", 1, 42, 1, 1);
    line(sb, 1561.0, 5, "exit", NULL);
    line(sb, 1561.1, 5, "release_invoke", NULL);
    line(sb, 1562.0, 5, "release_ok", NULL);
    store(sb, 1811.0, 3, "store_write", 0, 41, 1, 1);
    store(sb, 1811.5, 3, "store_write", 1, 41, 1, 0);
    line(sb, 1842.0, 3, "exit", NULL);
    line(sb, 1842.1, 3, "release_invoke", NULL);
    line(sb, 1843.0, 3, "release_not_owner", NULL);
}

/* A pause of w3 from 1310 to 1810 ms, fault id 2, as faults.jsonl says. */
static void add_pause(struct history *h, int id, int worker, double start, double end)
{
    h->faults = realloc(h->faults, (size_t)(h->nfaults + 1) * sizeof(*h->faults));
    struct fault_window *f = &h->faults[h->nfaults++];
    memset(f, 0, sizeof(*f));
    f->id = id;
    snprintf(f->kind, sizeof(f->kind), "pause");
    snprintf(f->target, sizeof(f->target), "holder");
    f->worker = worker;
    f->node = -1;
    f->start = ns(start);
    f->end = ns(end);
}

static const char STALE_STORY[] =
    "t=1.204s w3 acquires r0 (fence 41, valid until 1.504s) · "
    "t=1.204s w3 reads 0 from the plain counter · "
    "t=1.310s pause w3 (fault #2) · "
    "t=1.504s w3's lease on r0 expires · "
    "t=1.511s w5 acquires r0 (fence 42, valid until 1.811s) · "
    "overlap on r0 1.511–1.561s (50 ms) · "
    "t=1.512s w5 reads 0 from the plain counter · "
    "t=1.560s w5 writes 1 to the plain counter · "
    "t=1.560s w5 writes 1 to the fenced counter · "
    "t=1.561s w5 leaves its critical section · "
    "t=1.562s w5 releases r0 · "
    "t=1.810s w3 resumes, still in its hold · "
    "t=1.811s w3 writes 1 to the plain counter · "
    "t=1.812s the storage rejects w3's fenced write (fence 41: a newer fence was seen) · "
    "t=1.842s w3 leaves its critical section, 338 ms past its lease · "
    "t=1.843s w3's release of r0 finds the lock no longer its own · "
    "stale-holder: w3 overstayed its lease by 338 ms; the fenced counter rejected w3's write; "
    "w3's plain write (1) overwrote w5's (1): a lost update";

static void test_stale_holder_story(void)
{
    struct strbuf sb = STRBUF_INIT;
    stale_history(&sb);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    add_pause(&h, 2, 3, 1310, 1810);
    add_pause(&h, 3, 1, 1400, 1450); /* another worker's pause: not in the story */
    struct check_params p;
    check_params_from(&h, &p);
    CHECK_INT(p.max_stories, 3);
    struct json *res = check_run(&h, &p);
    CHECK_INT(json_get_int(json_path(res, "checks.mutex"), "violations", -1), 1);
    const struct json *v = json_path(res, "violations.0");
    REQUIRE(v != NULL);
    CHECK_STR(json_get_str(v, "class", ""), "stale-holder");
    CHECK_STR(json_get_str(v, "story_text", ""), STALE_STORY);
    const struct json *story = json_obj_get(v, "story");
    REQUIRE(story && story->type == JSON_ARR && story->n == 17);
    /* time ordered, each item {t_ms, kind, text} */
    for (size_t i = 1; i < story->n; i++)
        CHECK(json_get_num(story->kids[i], "t_ms", 0) >= json_get_num(story->kids[i - 1], "t_ms", 0));
    CHECK_STR(json_get_str(story->kids[0], "kind", ""), "grant");
    CHECK_STR(json_get_str(story->kids[2], "kind", ""), "fault");
    CHECK_STR(json_get_str(story->kids[3], "kind", ""), "lease");
    CHECK_STR(json_get_str(story->kids[5], "kind", ""), "overlap");
    CHECK_STR(json_get_str(story->kids[16], "kind", ""), "conclusion");
    CHECK(fabs(json_get_num(story->kids[2], "t_ms", 0) - 1310.0) < 1e-6);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* The lock granted twice while the first lease was valid; no fences. */
static void test_lock_broken_story(void)
{
    struct strbuf sb = STRBUF_INIT;
    line(&sb, 99, 1, "acquire_invoke", "\"attempt\":1");
    line(&sb, 100, 1, "acquire_ok", "\"token\":\"a\",\"fence\":null,\"valid_until\":2000000000");
    line(&sb, 100.5, 1, "enter", NULL);
    store(&sb, 101, 1, "store_read", 0, 0, 7, 1);
    line(&sb, 499, 2, "acquire_invoke", "\"attempt\":1");
    line(&sb, 500, 2, "acquire_ok", "\"token\":\"b\",\"fence\":null,\"valid_until\":2400000000");
    line(&sb, 500.5, 2, "enter", NULL);
    store(&sb, 501, 2, "store_read", 0, 0, 7, 1);
    store(&sb, 600, 1, "store_write", 0, 0, 8, 1);
    line(&sb, 601, 1, "exit", NULL);
    line(&sb, 602, 1, "release_invoke", NULL);
    line(&sb, 603, 1, "release_ok", NULL);
    store(&sb, 700, 2, "store_write", 0, 0, 8, 1);
    line(&sb, 701, 2, "exit", NULL);
    line(&sb, 702, 2, "release_invoke", NULL);
    line(&sb, 703, 2, "release_not_owner", NULL);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = check_run(&h, &p);
    const struct json *v = json_path(res, "violations.0");
    REQUIRE(v != NULL);
    CHECK_STR(json_get_str(v, "class", ""), "lock-broken");
    const char *text = json_get_str(v, "story_text", "");
    CHECKF(strstr(text, "t=0.100s w1 acquires r0 (no fence, valid until 2.000s)") == text,
           "%s", text);
    CHECKF(strstr(text, "overlap on r0 0.500–0.601s (100 ms)") != NULL, "%s", text);
    CHECKF(strstr(text, " · lock-broken: r0 was granted to w2 while w1's lease was valid until "
                        "2.000s; w1 had no fence, so the storage could not refuse its write; w2's plain "
                        "write (8) overwrote w1's (8): a lost update") != NULL,
           "%s", text);
    CHECKF(strstr(text, "fault") == NULL, "no fault in this story: %s", text);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* naive-del's bug: w1's late unconditional release frees w2's lock, then
 * w1 acquires it again while w2 still holds it. The story shows the
 * release that broke the lock. Twice: w2 entering at once after its grant,
 * and slow to enter (a loaded machine), so that w1's release lands after
 * w2's grant but before its enter, and w2 enters after w1 (the checker
 * then judges w1's grant, the latest: docs/checkers.md "Classification").
 * The story says whose lock the release freed either way. */
static void test_release_breaks_lock(void)
{
    for (int slow = 0; slow < 2; slow++) {
        struct strbuf sb = STRBUF_INIT;
        grant(&sb, 1, 99, 100, 1, 400);
        line(&sb, 100.5, 1, "enter", NULL);
        grant(&sb, 2, 449, 450, 2, 750);
        line(&sb, slow ? 510 : 450.5, 2, "enter", NULL);
        line(&sb, 500, 1, "exit", NULL);  /* w1 overstayed: violation 1 (stale-holder) */
        line(&sb, 500.1, 1, "release_invoke", NULL);
        line(&sb, 501, 1, "release_ok", NULL); /* deleted w2's key */
        grant(&sb, 1, 502, 503, 3, 803);
        line(&sb, 503.5, 1, "enter", NULL);  /* violation 2 (lock-broken) */
        line(&sb, 600, 2, "exit", NULL);
        line(&sb, 601, 2, "release_invoke", NULL);
        line(&sb, 602, 2, "release_not_owner", NULL);
        line(&sb, 650, 1, "exit", NULL);
        line(&sb, 651, 1, "release_invoke", NULL);
        line(&sb, 652, 1, "release_ok", NULL);
        struct history h;
        memset(&h, 0, sizeof(h));
        REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
        struct check_params p;
        check_params_from(&h, &p);
        struct json *res = check_run(&h, &p);
        /* slow: w2's grant is during w1's hold, w1 overstayed its lease
         * before it: one violation, when w2 enters */
        CHECK_INT(json_get_int(json_path(res, "checks.mutex"), "violations", -1), slow ? 1 : 2);
        const struct json *v = json_path(res, slow ? "violations.0" : "violations.1");
        REQUIRE(v != NULL);
        CHECK_STR(json_get_str(v, "class", ""), "lock-broken");
        const char *text = json_get_str(v, "story_text", "");
        CHECKF(strstr(text, "t=0.500s w1 leaves its previous critical section · "
                            "t=0.501s w1 releases r0 (its previous grant), while w2 holds it · "
                            "t=0.503s w1 acquires r0 (fence 3, valid until 0.803s)") != NULL,
               "slow %d: %s", slow, text);
        CHECKF(strstr(text, "lock-broken: r0 was granted to w1 while w2's lease was valid until "
                            "0.750s; w1's release at 0.501s freed it first") != NULL,
               "slow %d: %s", slow, text);
        CHECK_INT(strstr(text, "releases r0 (its previous grant)") ==
                      strstr(text, "releases r0"), 1); /* narrated once */
        json_free(res);
        history_free(&h);
        sb_free(&sb);
    }
}

/* The same bug with the stale release coming from a third worker, not a
 * holder of the violation: the story still names it. */
static void test_foreign_release(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 2, 449, 450, 2, 750);
    line(&sb, 450.5, 2, "enter", NULL);
    line(&sb, 499, 3, "exit", NULL); /* w3's own (expired) hold ends ... */
    line(&sb, 500, 3, "release_invoke", NULL);
    line(&sb, 501, 3, "release_ok", NULL); /* ... and its DEL frees w2's key */
    grant(&sb, 1, 502, 503, 3, 803);
    line(&sb, 503.5, 1, "enter", NULL);
    line(&sb, 600, 2, "exit", NULL);
    line(&sb, 650, 1, "exit", NULL);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = check_run(&h, &p);
    const char *text = json_get_str(json_path(res, "violations.0"), "story_text", "");
    CHECKF(strstr(text, "t=0.450s w2 acquires r0 (fence 2, valid until 0.750s) · "
                        "t=0.501s w3 releases r0, while w2 holds it · "
                        "t=0.503s w1 acquires r0") == text, "%s", text);
    CHECKF(strstr(text, "; w3's release at 0.501s freed it first") != NULL, "%s", text);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* When the first few violations are all of one class, the first of the
 * other class still gets a story (it takes the last slot). */
static void test_story_classes(void)
{
    struct strbuf sb = STRBUF_INIT;
    /* w0 holds r0 far past its lease: w1..w3 overlap it (stale-holder x3);
     * then w4 is granted while w3's lease is valid (lock-broken) */
    grant(&sb, 0, 0, 1, 1, 50);
    line(&sb, 1.1, 0, "enter", NULL);
    for (int k = 1; k <= 3; k++) {
        grant(&sb, k, 100 * k, 100 * k + 1, 1 + k, 100 * k + 300);
        line(&sb, 100 * k + 2, k, "enter", NULL);
        line(&sb, 100 * k + 10 + (k == 3 ? 200 : 0), k, "exit", NULL);
    }
    grant(&sb, 4, 399, 400, 9, 700);
    line(&sb, 400.5, 4, "enter", NULL);
    line(&sb, 450, 4, "exit", NULL);
    line(&sb, 900, 0, "exit", NULL);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = check_run(&h, &p);
    const struct json *vs = json_obj_get(res, "violations");
    REQUIRE(vs && vs->n == 4);
    CHECK_STR(json_get_str(vs->kids[3], "class", ""), "lock-broken");
    CHECK(json_obj_get(vs->kids[0], "story") != NULL);
    CHECK(json_obj_get(vs->kids[1], "story") != NULL);
    CHECK(json_obj_get(vs->kids[2], "story") == NULL); /* gave its slot */
    CHECK(json_obj_get(vs->kids[3], "story") != NULL);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* check.stories 1: the one story is the lock's own failure (lock-broken),
 * even when stale-holder violations come first. */
static void test_story_lock_broken_first(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, 0, 1, 1, 50);
    line(&sb, 1.1, 0, "enter", NULL);
    for (int k = 1; k <= 3; k++) {
        grant(&sb, k, 100 * k, 100 * k + 1, 1 + k, 100 * k + 300);
        line(&sb, 100 * k + 2, k, "enter", NULL);
        line(&sb, 100 * k + 10 + (k == 3 ? 200 : 0), k, "exit", NULL);
    }
    grant(&sb, 4, 399, 400, 9, 700);
    line(&sb, 400.5, 4, "enter", NULL);
    line(&sb, 450, 4, "exit", NULL);
    line(&sb, 900, 0, "exit", NULL);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    p.max_stories = 1;
    struct json *res = check_run(&h, &p);
    const struct json *vs = json_obj_get(res, "violations");
    REQUIRE(vs && vs->n == 4);
    CHECK_STR(json_get_str(vs->kids[3], "class", ""), "lock-broken");
    for (size_t i = 0; i < 3; i++)
        CHECKF(json_obj_get(vs->kids[i], "story") == NULL, "violation %zu has a story", i);
    CHECK(json_obj_get(vs->kids[3], "story") != NULL);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* Three holds of w1..w3 all overlapping w0's long one (its lease ends at
 * 50 ms, it exits at 900 ms): three stale-holder violations. */
static void three_overlaps(struct strbuf *sb)
{
    grant(sb, 0, 0, 1, 1, 50);
    line(sb, 1.1, 0, "enter", NULL);
    for (int k = 1; k <= 3; k++) {
        grant(sb, k, 100 * k, 100 * k + 1, 1 + k, 100 * k + 300);
        line(sb, 100 * k + 2, k, "enter", NULL);
        line(sb, 100 * k + 10, k, "exit", NULL);
    }
    line(sb, 900, 0, "exit", NULL);
}

/* With incidents in the model, each incident is told by its first
 * violation before any second violation of an incident gets a story. */
static void test_story_incidents(void)
{
    struct strbuf sb = STRBUF_INIT;
    three_overlaps(&sb);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    p.max_stories = 0; /* the checkers' own pass tells none: this test picks */
    struct json *res = check_run(&h, &p);
    struct json *vs = json_obj_get(res, "violations");
    REQUIRE(vs && vs->n == 3);
    /* two incidents by hand (the mutex checker makes them in a real run):
     * violations 0 and 1, then violation 2 */
    struct json *incs = json_obj_set(res, "incidents", json_new_arr());
    for (int i = 0; i < 2; i++) {
        struct json *inc = json_arr_push(incs, json_new_obj());
        json_obj_set_int(inc, "id", i + 1);
        json_obj_set_str(inc, "class", "stale-holder");
        json_obj_set_int(inc, "first_violation", i == 0 ? 0 : 2);
    }
    p.max_stories = 2;
    check_stories(&h, &p, res);
    CHECK(json_obj_get(vs->kids[0], "story") != NULL);
    CHECK(json_obj_get(vs->kids[1], "story") == NULL); /* the same incident as 0 */
    CHECK(json_obj_get(vs->kids[2], "story") != NULL);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* check.stories bounds the narrated violations; 0 turns them off. */
static void test_story_count(void)
{
    struct strbuf sb = STRBUF_INIT;
    three_overlaps(&sb);
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    p.max_stories = 2;
    struct json *res = check_run(&h, &p);
    CHECK_INT(json_get_int(json_path(res, "checks.mutex"), "violations", -1), 3);
    CHECK(json_path(res, "violations.0.story") != NULL);
    CHECK(json_path(res, "violations.1.story_text") != NULL);
    CHECK(json_path(res, "violations.2.story") == NULL);
    json_free(res);
    p.max_stories = 0;
    res = check_run(&h, &p);
    CHECK(json_path(res, "violations.0.story") == NULL);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

/* The series: bounded, consistent with the checkers' totals. */
static void test_series(void)
{
    struct strbuf sb = STRBUF_INIT;
    stale_history(&sb);
    line(&sb, 1900, 4, "acquire_invoke", "\"attempt\":1");
    line(&sb, 1900.5, 4, "acquire_busy", NULL);
    line(&sb, 1950, 4, "acquire_invoke", "\"attempt\":2");
    line(&sb, 1951, 4, "acquire_unknown", "\"err\":\"timeout\"");
    struct history h;
    memset(&h, 0, sizeof(h));
    REQUIRE(load_text(sb_cstr(&sb), &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = check_run(&h, &p);
    struct json *s = series_build(&h, res);
    REQUIRE(s != NULL);
    CHECK(json_get_num(s, "bucket_ms", 0) == 100);
    const struct json *rows = json_path(s, "rate.rows");
    REQUIRE(rows && rows->n >= 19);
    double grants = 0, busy = 0, unknown = 0;
    for (size_t i = 0; i < rows->n; i++) {
        grants += json_arr_get(rows->kids[i], 1)->d * 0.1;
        busy += json_arr_get(rows->kids[i], 2)->d * 0.1;
        unknown += json_arr_get(rows->kids[i], 3)->d * 0.1;
    }
    CHECK(fabs(grants - 2) < 1e-9 && fabs(busy - 1) < 1e-9 && fabs(unknown - 1) < 1e-9);
    CHECK_INT(json_path(s, "latency.rows")->n, 4);
    /* one plain update lost (w3's 6 over w5's 6), the fenced counter kept both */
    const struct json *f = json_path(s, "fencing.rows");
    const struct json *last = f->kids[f->n - 1];
    CHECK_INT(json_arr_get(last, 1)->i, 1);
    CHECK_INT(json_arr_get(last, 2)->i, 0);
    CHECK_INT(json_arr_get(last, 3)->i, 1);
    /* two holds on two lanes, the overlap on both */
    CHECK_INT(json_path(s, "timeline.lanes")->n, 2);
    CHECK_INT(json_path(s, "timeline.holds.rows")->n, 2);
    CHECK_INT(json_path(s, "timeline.overlaps.rows")->n, 2);
    CHECK(!json_path(s, "timeline.zoomed")->i);
    json_free(s);
    json_free(res);
    history_free(&h);
    sb_free(&sb);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_stale_holder_story);
    RUN(test_lock_broken_story);
    RUN(test_release_breaks_lock);
    RUN(test_foreign_release);
    RUN(test_story_classes);
    RUN(test_story_lock_broken_first);
    RUN(test_story_incidents);
    RUN(test_story_count);
    RUN(test_series);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
