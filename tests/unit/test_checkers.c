/*
 * test_checkers.c: the mutex, fencing, liveness and stats checkers on
 * hand-built histories (JSONL text, loaded by the real loader; storage and
 * leftover keys set on the loaded history). Each case states the verdict a
 * correct checker must reach, so a checker that bites too little or too
 * much fails here. No Redis: the checkers never talk to it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checker.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static char *tmp;

/* ---- history builders (times in ms) ---- */

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

/* acquire_invoke at inv, acquire_ok at ok; fence < 0: none; vu < 0: no lease. */
static void grant(struct strbuf *sb, int w, const char *res, double inv, double ok, long fence,
                  double vu)
{
    line(sb, inv, w, "acquire_invoke", res, "\"attempt\":1");
    char extra[256], f[32], v[32];
    if (fence >= 0)
        snprintf(f, sizeof(f), "%ld", fence);
    else
        snprintf(f, sizeof(f), "null");
    if (vu >= 0)
        snprintf(v, sizeof(v), "%lld", ns(vu));
    else
        snprintf(v, sizeof(v), "null");
    snprintf(extra, sizeof(extra), "\"token\":\"w%d-%g\",\"fence\":%s,\"valid_until\":%s", w, ok,
             f, v);
    line(sb, ok, w, "acquire_ok", res, extra);
}

/* enter, exit, then a release. */
static void hold(struct strbuf *sb, int w, const char *res, double enter, double exit_)
{
    line(sb, enter, w, "enter", res, NULL);
    line(sb, exit_, w, "exit", res, NULL);
    line(sb, exit_ + 0.01, w, "release_invoke", res, NULL);
    line(sb, exit_ + 0.5, w, "release_ok", res, NULL);
}

static void store(struct strbuf *sb, double t, int w, const char *type, int fenced, long fence,
                  long counter, int accepted)
{
    char extra[200];
    char f[40] = "";
    if (fence >= 0)
        snprintf(f, sizeof(f), "\"fence\":%ld,", fence);
    snprintf(extra, sizeof(extra), "%s\"fenced\":%s,\"counter\":%ld,\"accepted\":%s", f,
             fenced ? "true" : "false", counter, accepted ? "true" : "false");
    line(sb, t, w, type, "r0", extra);
}

static int load_text(const char *text, struct history *h)
{
    return t_load_jsonl(tmp, text, h);
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v) {
        fprintf(stderr, "  (no %s)\n", path);
        return -999999;
    }
    if (v->type == JSON_BOOL)
        return v->i;
    if (v->type != JSON_NUM)
        return -888888;
    return v->is_int ? v->i : (int64_t)llround(v->d);
}

static double getd(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_NUM ? v->d : NAN;
}

static const char *gets_(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "(none)";
}

static int is_null(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_NULL;
}

static int has_warning(const struct json *r, const char *needle)
{
    const struct json *w = json_obj_get(r, "warnings");
    for (size_t i = 0; w && i < w->n; i++)
        if (strstr(w->kids[i]->s, needle))
            return 1;
    return 0;
}

/* Load text, run every checker with default params (capacity cap). */
static struct json *check_text(const char *text, int cap, struct history *h)
{
    if (load_text(text, h) != 0)
        return NULL;
    struct check_params p;
    check_params_from(h, &p);
    p.capacity = cap;
    return check_run(h, &p);
}

/* ---- mutex ---- */

static void test_no_overlap(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 101);
    hold(&sb, 0, "r0", 2, 10);
    line(&sb, 5, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 5.5, 1, "acquire_busy", "r0", NULL);
    grant(&sb, 1, "r0", 12, 13, 2, 113);
    hold(&sb, 1, "r0", 14, 20);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    CHECK_INT(geti(r, "checks.mutex.valid"), 1);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK_INT(geti(r, "checks.mutex.holds"), 2);
    CHECK_INT(geti(r, "checks.mutex.near_misses"), 0);
    CHECK_STR(gets_(r, "verdict_checks"), "valid");
    CHECK_INT(json_obj_get(r, "violations")->n, 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_stale_holder(void)
{
    struct strbuf sb = STRBUF_INIT;
    /* w0's lease ends at 100 but it stays in its hold until 300 (paused). */
    grant(&sb, 0, "r0", 0, 1, 7, 100);
    hold(&sb, 0, "r0", 2, 300);
    grant(&sb, 1, "r0", 149, 151, 8, 251);
    hold(&sb, 1, "r0", 152, 200);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "invalid");
    CHECK_INT(geti(r, "checks.mutex.valid"), 0);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(geti(r, "checks.mutex.by_class.stale_holder"), 1);
    CHECK_INT(geti(r, "checks.mutex.by_class.lock_broken"), 0);
    CHECK_STR(gets_(r, "violations.0.class"), "stale-holder");
    CHECK_STR(gets_(r, "violations.0.resource"), "r0");
    CHECK(fabs(getd(r, "violations.0.overlap_start_ms") - 152) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.overlap_ms") - 48) < 1e-9);
    CHECK_INT(geti(r, "violations.0.holders.0.worker"), 0);
    CHECK_INT(geti(r, "violations.0.holders.1.worker"), 1);
    CHECK_INT(geti(r, "violations.0.holders.0.fence"), 7);
    CHECK_STR(gets_(r, "violations.0.holders.0.token"), "w0-1");
    CHECK(fabs(getd(r, "violations.0.holders.0.valid_until_ms") - 100) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.holders.0.acquired_ms") - 1) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.holders.0.enter_ms") - 2) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.holders.0.exit_ms") - 300) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.holders.1.enter_ms") - 152) < 1e-9);
    CHECK_STR(gets_(r, "verdict_checks"), "invalid");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_lock_broken(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 1000);
    hold(&sb, 0, "r0", 2, 300);
    grant(&sb, 1, "r0", 99, 100, 2, 1100);   /* granted while w0's lease ran */
    hold(&sb, 1, "r0", 101, 200);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(geti(r, "checks.mutex.by_class.lock_broken"), 1);
    CHECK_STR(gets_(r, "violations.0.class"), "lock-broken");
    CHECK(fabs(getd(r, "violations.0.overlap_ms") - 99) < 1e-9);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_touching_and_near_miss(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 1000);
    hold(&sb, 0, "r0", 2, 100);
    grant(&sb, 1, "r0", 50, 99, 2, 1100);
    hold(&sb, 1, "r0", 100, 200);   /* enter == previous exit: touching */
    grant(&sb, 2, "r0", 150, 200.2, 3, 1200);
    hold(&sb, 2, "r0", 200.5, 300); /* 0.5 ms after: near miss */
    grant(&sb, 0, "r0", 250, 301, 4, 1300);
    hold(&sb, 0, "r0", 302, 400);   /* 2 ms after: not a near miss */
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK_INT(geti(r, "checks.mutex.near_misses"), 2);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    json_free(r);
    /* A wider near-miss window counts the third one too. */
    struct check_params p;
    check_params_from(&h, &p);
    p.near_miss = 3 * 1000000LL;
    r = json_new_obj();
    check_mutex(&h, &p, r);
    CHECK_INT(geti(r, "checks.mutex.near_misses"), 3);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_semaphore(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 0.5, -1, 1000);
    hold(&sb, 0, "r0", 1, 100);
    grant(&sb, 1, "r0", 5, 9, -1, 1000);
    hold(&sb, 1, "r0", 10, 200);
    struct history h;
    struct json *r = check_text(sb.buf, 2, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0); /* two at once is allowed */
    CHECK_INT(geti(r, "checks.mutex.capacity"), 2);
    json_free(r);
    history_free(&h);

    grant(&sb, 2, "r0", 15, 19, -1, 1000);
    hold(&sb, 2, "r0", 20, 150);
    r = check_text(sb.buf, 2, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    const struct json *hl = json_path(r, "violations.0.holders");
    CHECK(hl && hl->n == 3);
    CHECK_INT(geti(r, "violations.0.holders.0.worker"), 0);
    CHECK_INT(geti(r, "violations.0.holders.1.worker"), 1);
    CHECK_INT(geti(r, "violations.0.holders.2.worker"), 2);
    /* Three in from 20 until the first of them leaves at 100. */
    CHECK(fabs(getd(r, "violations.0.overlap_start_ms") - 20) < 1e-9);
    CHECK(fabs(getd(r, "violations.0.overlap_ms") - 80) < 1e-9);
    /* Both earlier leases were valid at 19: the service granted a third. */
    CHECK_STR(gets_(r, "violations.0.class"), "lock-broken");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_no_lease(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, -1, -1);
    hold(&sb, 0, "r0", 2, 100000);      /* no TTL: valid forever */
    grant(&sb, 1, "r0", 50000, 60000, -1, -1);
    hold(&sb, 1, "r0", 60001, 60002);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_STR(gets_(r, "violations.0.class"), "lock-broken");
    CHECK(is_null(r, "violations.0.holders.0.valid_until_ms"));
    CHECK(is_null(r, "violations.0.holders.0.fence"));
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_renewal_extends_lease(void)
{
    struct strbuf base = STRBUF_INIT, ren = STRBUF_INIT;
    for (int pass = 0; pass < 2; pass++) {
        struct strbuf *sb = pass ? &ren : &base;
        grant(sb, 0, "r0", 0, 1, 1, 100);
        line(sb, 2, 0, "enter", "r0", NULL);
        if (pass) {
            line(sb, 89, 0, "renew_invoke", "r0", NULL);
            line(sb, 90, 0, "renew_ok", "r0", "\"valid_until\":190000000");
        }
        line(sb, 300, 0, "exit", "r0", NULL);
        grant(sb, 1, "r0", 149, 150, 2, 250);
        hold(sb, 1, "r0", 151, 160);
    }
    struct history h;
    struct json *r = check_text(base.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "violations.0.class"), "stale-holder");
    json_free(r);
    history_free(&h);
    r = check_text(ren.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "violations.0.class"), "lock-broken"); /* L = 190 > 150 */
    CHECK(fabs(getd(r, "violations.0.holders.0.valid_until_ms") - 190) < 1e-9);
    CHECK_INT(geti(r, "counts.renewals"), 1);
    CHECK_INT(geti(r, "latency.renew.count"), 1);
    json_free(r);
    history_free(&h);
    sb_free(&base);
    sb_free(&ren);
}

/* A renewal the library made by itself (renew_ok with "auto") answers no
 * renew command of the worker's: the renew latency is the explicit
 * renewal's own (89 -> 90 ms), not cut short by the auto record. */
static void test_auto_renewal_not_a_reply(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 100);
    line(&sb, 2, 0, "enter", "r0", NULL);
    line(&sb, 89, 0, "renew_invoke", "r0", NULL);
    line(&sb, 89.5, 0, "renew_ok", "r0", "\"valid_until\":180000000,\"auto\":true");
    line(&sb, 90, 0, "renew_ok", "r0", "\"valid_until\":190000000");
    line(&sb, 150, 0, "exit", "r0", NULL);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "latency.renew.count"), 1);
    CHECKF(fabs(getd(r, "latency.renew.max_ms") - 1.0) < 0.01, "renew latency max %g ms",
           getd(r, "latency.renew.max_ms"));
    CHECK_INT(geti(r, "counts.renewals"), 2);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_hold_without_exit(void)
{
    /* w0 crashes in its hold at 50; w1 enters at 101: no overlap. */
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 80);
    line(&sb, 2, 0, "enter", "r0", NULL);
    line(&sb, 50, 0, "crash", NULL, NULL);
    grant(&sb, 1, "r0", 60, 100, 2, 180);
    hold(&sb, 1, "r0", 101, 150);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    CHECK_INT(geti(r, "checks.mutex.holds"), 2);
    CHECK_INT(geti(r, "counts.crashes"), 1);
    CHECK(fabs(getd(r, "checks.liveness.crash_to_next_grant_ms") - 50) < 1e-9);
    CHECK_INT(geti(r, "checks.liveness.holder_crashes"), 1);
    CHECK_INT(geti(r, "checks.liveness.crashes_without_next_grant"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* The crash comes after w1 entered: the hold counts until the crash. */
    grant(&sb, 0, "r0", 0, 1, 1, 80);
    line(&sb, 2, 0, "enter", "r0", NULL);
    line(&sb, 120, 0, "crash", NULL, NULL);
    grant(&sb, 1, "r0", 60, 100, 2, 180);
    hold(&sb, 1, "r0", 101, 150);
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_STR(gets_(r, "violations.0.class"), "stale-holder");
    CHECK(fabs(getd(r, "violations.0.overlap_ms") - 19) < 1e-9);
    CHECK_INT(geti(r, "violations.0.holders.0.crashed"), 1);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* No exit and no crash, no overlap: the checker cannot say valid. */
    grant(&sb, 0, "r0", 0, 1, 1, 80);
    line(&sb, 2, 0, "enter", "r0", NULL);
    line(&sb, 30, 0, "store_read", "r0", "\"fenced\":false,\"counter\":0,\"accepted\":true");
    grant(&sb, 1, "r0", 60, 100, 2, 180);
    hold(&sb, 1, "r0", 101, 150);
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "unknown");
    CHECK_INT(geti(r, "checks.mutex.valid"), 0);
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    CHECK(has_warning(r, "without exit or crash"));
    json_free(r);
    history_free(&h);

    /* ... but a violation elsewhere still makes it invalid. */
    grant(&sb, 2, "r0", 110, 111, 3, 300);
    hold(&sb, 2, "r0", 112, 120);
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "invalid");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_multiple_resources(void)
{
    /* Simultaneous holds of different resources are no violation. */
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "a", 0, 1, 1, 100);
    hold(&sb, 0, "a", 2, 50);
    grant(&sb, 1, "b", 0, 1, 1, 100);
    hold(&sb, 1, "b", 2, 50);
    grant(&sb, 2, "a", 10, 20, 2, 120);
    hold(&sb, 2, "a", 30, 40); /* overlaps w0 on a */
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_STR(gets_(r, "violations.0.resource"), "a");
    CHECK(fabs(getd(r, "violations.0.overlap_ms") - 10) < 1e-9);
    CHECK_INT(h.nres, 2);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* ---- fencing ---- */

/* Two overlapping holds doing the read-modify-write of rundir.md: plain
 * loses one update, the fenced write of the stale holder is rejected. */
static void lost_update_history(struct strbuf *sb)
{
    grant(sb, 0, "r0", 0, 1, 1, 100);
    line(sb, 2, 0, "enter", "r0", NULL);
    store(sb, 3, 0, "store_read", 0, -1, 0, 1);
    store(sb, 3.1, 0, "store_read", 1, 1, 0, 1);
    grant(sb, 1, "r0", 140, 150, 2, 250);
    line(sb, 151, 1, "enter", "r0", NULL);
    store(sb, 152, 1, "store_read", 0, -1, 0, 1);
    store(sb, 152.1, 1, "store_read", 1, 2, 0, 1);
    store(sb, 160, 1, "store_write", 0, -1, 1, 1);
    store(sb, 160.1, 1, "store_write", 1, 2, 1, 1);
    line(sb, 161, 1, "exit", "r0", NULL);
    store(sb, 290, 0, "store_write", 0, -1, 1, 1);
    store(sb, 290.1, 0, "store_write", 1, 1, 1, 0); /* stale fence: rejected */
    line(sb, 300, 0, "exit", "r0", NULL);
}

static void give_storage(struct history *h, int64_t plain, int64_t fenced)
{
    h->from_rundir = 1;
    h->have_storage = 1;
    h->storage = calloc((size_t)h->nres, sizeof(*h->storage));
    h->storage[0].present = 1;
    h->storage[0].plain = plain;
    h->storage[0].fenced = fenced;
    h->storage[0].fence_hwm = 2;
}

static void test_lost_updates(void)
{
    struct strbuf sb = STRBUF_INIT;
    lost_update_history(&sb);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    give_storage(&h, 1, 1);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.fencing.offered"), 1);
    CHECK_INT(geti(r, "checks.fencing.plain_accepted_writes"), 2);
    CHECK_INT(geti(r, "checks.fencing.plain_lost_updates"), 1);
    CHECK_INT(geti(r, "checks.fencing.fenced_accepted_writes"), 1);
    CHECK_INT(geti(r, "checks.fencing.fenced_lost_updates"), 0);
    CHECK_INT(geti(r, "checks.fencing.stale_ops_rejected"), 1);
    CHECK_INT(geti(r, "checks.fencing.fence_regressions"), 0);
    CHECK_INT(geti(r, "checks.fencing.per_resource.0.plain_final"), 1);
    CHECK_INT(geti(r, "checks.fencing.per_resource.0.plain_lost"), 1);
    CHECK_INT(geti(r, "checks.fencing.per_resource.0.rejected"), 1);
    CHECK_STR(gets_(r, "checks.fencing.verdict"), "valid"); /* fencing saved the counter */
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "invalid");
    CHECK_INT(geti(r, "counts.store_ops"), 8);
    json_free(r);

    /* Without fencing the same damage makes the check invalid. */
    p.fencing_requested = 0;
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_INVALID);
    CHECK_INT(geti(r, "checks.fencing.offered"), 0);
    CHECK_INT(geti(r, "checks.fencing.plain_lost_updates"), 1);
    json_free(r);

    /* A fenced lost update (storage lost one) is invalid when offered. */
    h.storage[0].fenced = 0;
    p.fencing_requested = 1;
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_INVALID);
    CHECK_INT(geti(r, "checks.fencing.fenced_lost_updates"), 1);
    json_free(r);

    /* More final than accepted: clamped to 0 with a warning. */
    h.storage[0].plain = 5;
    h.storage[0].fenced = 1;
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_VALID);
    CHECK_INT(geti(r, "checks.fencing.plain_lost_updates"), 0);
    CHECK(has_warning(r, "above"));
    json_free(r);

    /* A run directory without storage.jsonl: unknown, never valid. */
    free(h.storage);
    h.storage = NULL;
    h.have_storage = 0;
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_UNKNOWN);
    CHECK_INT(geti(r, "checks.fencing.valid"), 0);
    json_free(r);

    /* A JSONL history: not offered, marked not available. */
    h.from_rundir = 0;
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_VALID);
    CHECK_INT(geti(r, "checks.fencing.offered"), 0);
    CHECK(strstr(gets_(r, "checks.fencing.note"), "not available") != NULL);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_fence_regression(void)
{
    struct strbuf sb = STRBUF_INIT;
    /* B (w1) is invoked at 10, after A's grant (fence 5) arrived at 1, and
     * gets fence 5 again: a regression. */
    grant(&sb, 0, "r0", 0, 1, 5, 100);
    hold(&sb, 0, "r0", 2, 5);
    grant(&sb, 1, "r0", 10, 11, 5, 111);
    hold(&sb, 1, "r0", 12, 15);
    grant(&sb, 0, "r0", 20, 21, 6, 121);
    hold(&sb, 0, "r0", 22, 25);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    give_storage(&h, 0, 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_INVALID);
    CHECK_INT(geti(r, "checks.fencing.fence_regressions"), 1);
    CHECK_INT(geti(r, "checks.fencing.regressions.0.worker"), 1);
    CHECK_INT(geti(r, "checks.fencing.regressions.0.earlier_fence"), 5);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* Concurrent acquires: A invoked at 0 and granted at 20 with fence 6,
     * B invoked at 10 (before A's reply) granted at 11 with fence 5. The
     * fences were handed out in order 5, 6: no regression. */
    grant(&sb, 0, "r0", 0, 20, 6, 100);
    hold(&sb, 0, "r0", 21, 25);
    grant(&sb, 1, "r0", 10, 11, 5, 111);
    hold(&sb, 1, "r0", 12, 15);
    REQUIRE(load_text(sb.buf, &h) == 0);
    give_storage(&h, 0, 0);
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_VALID);
    CHECK_INT(geti(r, "checks.fencing.fence_regressions"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* Boundary: A's reply at the very instant B was invoked is not "before":
     * the two acquires overlap, no regression. */
    grant(&sb, 0, "r0", 0, 10, 5, 100);
    hold(&sb, 0, "r0", 11, 12);
    grant(&sb, 1, "r0", 10, 20, 5, 120);
    hold(&sb, 1, "r0", 21, 22);
    REQUIRE(load_text(sb.buf, &h) == 0);
    give_storage(&h, 0, 0);
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_VALID);
    CHECK_INT(geti(r, "checks.fencing.fence_regressions"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* Fences of different resources are independent. */
    grant(&sb, 0, "r0", 0, 1, 9, 100);
    hold(&sb, 0, "r0", 2, 5);
    grant(&sb, 1, "r1", 10, 11, 1, 111);
    hold(&sb, 1, "r1", 12, 15);
    REQUIRE(load_text(sb.buf, &h) == 0);
    give_storage(&h, 0, 0);
    r = json_new_obj();
    CHECK_INT(check_fencing(&h, &p, r), VERDICT_VALID);
    CHECK_INT(geti(r, "checks.fencing.fence_regressions"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* latency.acquire_failed: only the calls that ended acquire_fail, not an
 * unknown outcome or a busy answer of the same or greater length (the
 * late-grant scenarios rest on this: a refused late grant is a long
 * failed call, a call cut by a reset one moment and held the next is a
 * long unknown one). */
static void test_latency_failed(void)
{
    struct strbuf sb = STRBUF_INIT;
    line(&sb, 0, 0, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 1500, 0, "acquire_fail", "r0", "\"err\":\"timeout\"");
    line(&sb, 2000, 0, "acquire_invoke", "r0", "\"attempt\":2");
    line(&sb, 3700, 0, "acquire_unknown", "r0", "\"err\":\"connection\"");
    line(&sb, 4000, 0, "acquire_invoke", "r0", "\"attempt\":3");
    line(&sb, 6000, 0, "acquire_busy", "r0", NULL);
    line(&sb, 6100, 0, "acquire_invoke", "r0", "\"attempt\":4");
    line(&sb, 6110, 0, "acquire_fail", "r0", "\"err\":\"connection\"");
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "latency.acquire.count"), 4);
    CHECK(fabs(getd(r, "latency.acquire.max_ms") - 2000) < 20); /* histogram precision */
    CHECK_INT(geti(r, "latency.acquire_failed.count"), 2);
    CHECK(fabs(getd(r, "latency.acquire_failed.max_ms") - 1500) < 15);
    CHECK(fabs(getd(r, "latency.acquire_failed.mean_ms") - 755) < 1e-6); /* (1500 + 10) / 2 */
    CHECK_INT(geti(r, "latency.acquire_wait.count"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* no failed call: the operation has no sample, its times are null */
    sb_reset(&sb);
    grant(&sb, 0, "r0", 0, 1, -1, 1000);
    hold(&sb, 0, "r0", 2, 10);
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "latency.acquire_failed.count"), 0);
    CHECK(is_null(r, "latency.acquire_failed.max_ms"));
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* ---- liveness ---- */

/* Before any grant of a resource there is no holder, at negative times
 * too: a renewal there (of nothing) leaves it so. The waits of w0 from -100
 * to its grant at -20 are all free (they were held from -100 to -50 when a
 * resource's latest lease started as 0). */
static void test_waits_before_any_holder(void)
{
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, "{\"t\":-100,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"a\"}\n"
                 "{\"t\":-50,\"w\":1,\"type\":\"renew_ok\",\"res\":\"a\",\"valid_until\":1000}\n"
                 "{\"t\":-20,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"a\",\"valid_until\":1000}\n");
    for (int cap = 1; cap <= 2; cap++) {
        struct history h;
        struct json *r = check_text(sb.buf, cap, &h);
        REQUIRE(r != NULL);
        CHECKF(getd(r, "checks.liveness.waits.held.total_ms") == 0, "held %g (capacity %d)",
               getd(r, "checks.liveness.waits.held.total_ms"), cap);
        CHECK(fabs(getd(r, "checks.liveness.waits.free.total_ms") - 80e-6) < 1e-12);
        json_free(r);
        history_free(&h);
    }
    sb_free(&sb);
}

/* At one instant the liveness sweep takes invokes, then grants, then
 * holder crashes, whatever order they came in (the pass's: worker order):
 * w1's invoke at 50 waited for its grant at 50 (no stall, not stuck), and
 * w0's crash at 50 is not followed by that grant (no grant after it). */
static void test_same_instant_order(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, 1, 1000);
    line(&sb, 2, 0, "enter", "r0", NULL);
    line(&sb, 50, 0, "crash", NULL, NULL);
    grant(&sb, 1, "r0", 50, 50, 2, 1000);
    hold(&sb, 1, "r0", 51, 60);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK(fabs(getd(r, "checks.liveness.longest_stall_ms") - 1) < 1e-9);
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 0);
    CHECK_INT(geti(r, "checks.liveness.holder_crashes"), 1);
    CHECK_INT(geti(r, "checks.liveness.crashes_without_next_grant"), 1);
    CHECK(is_null(r, "checks.liveness.crash_to_next_grant_ms"));
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_stall_and_stuck(void)
{
    struct strbuf sb = STRBUF_INIT;
    /* r0: w0 granted at 1; w1 waits from 5 and is granted at 106. */
    grant(&sb, 0, "r0", 0, 1, -1, 1000);
    hold(&sb, 0, "r0", 2, 10);
    line(&sb, 5, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 6, 1, "acquire_busy", "r0", NULL);
    line(&sb, 55, 1, "acquire_invoke", "r0", "\"attempt\":2");
    line(&sb, 56, 1, "acquire_busy", "r0", NULL);
    line(&sb, 105, 1, "acquire_invoke", "r0", "\"attempt\":3");
    line(&sb, 106, 1, "acquire_ok", "r0", "\"token\":\"x\",\"valid_until\":1106000000");
    hold(&sb, 1, "r0", 107, 110);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK(fabs(getd(r, "checks.liveness.longest_stall_ms") - 101) < 1e-9);
    CHECK_STR(gets_(r, "checks.liveness.longest_stall_resource"), "r0");
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 0);
    CHECK_STR(gets_(r, "checks.liveness.verdict"), "valid");
    CHECK(is_null(r, "checks.liveness.crash_to_next_grant_ms"));
    CHECK(fabs(getd(r, "checks.liveness.busy_share") - 0.5) < 1e-9);
    CHECK_INT(geti(r, "checks.liveness.fairness.min_grants"), 1);
    CHECK_INT(geti(r, "checks.liveness.fairness.max_grants"), 1);
    CHECK(fabs(getd(r, "checks.liveness.fairness.ratio") - 1) < 1e-9);
    /* stats on the same history */
    CHECK_INT(geti(r, "counts.attempts"), 4);
    CHECK_INT(geti(r, "counts.grants"), 2);
    CHECK_INT(geti(r, "counts.busy"), 2);
    CHECK_INT(geti(r, "counts.releases"), 2);
    CHECK_INT(geti(r, "latency.acquire.count"), 4);
    CHECK_INT(geti(r, "latency.acquire_wait.count"), 2);
    CHECK(fabs(getd(r, "latency.acquire_wait.max_ms") - 101) < 2); /* histogram precision */
    CHECK_INT(geti(r, "latency.release.count"), 2);
    CHECK_INT(geti(r, "per_worker.1.attempts"), 3);
    CHECK_INT(geti(r, "per_worker.1.busy"), 2);
    CHECK_INT(geti(r, "per_worker.1.complete"), 1);
    json_free(r);
    history_free(&h);

    /* r1: w2 crashes holding it (no TTL); w3 retries until the end. */
    grant(&sb, 2, "r1", 0, 0.5, -1, -1);
    hold(&sb, 2, "r1", 1, 3);
    grant(&sb, 2, "r1", 3.5, 3.6, -1, -1);
    line(&sb, 3.7, 2, "crash", NULL, NULL);
    for (int i = 0; i < 50; i++) {
        line(&sb, 4 + 100 * i, 3, "acquire_invoke", "r1", "\"attempt\":1");
        line(&sb, 5 + 100 * i, 3, "acquire_busy", "r1", NULL);
    }
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 1);
    CHECK_STR(gets_(r, "checks.liveness.stuck.0.res"), "r1");
    CHECK(strstr(gets_(r, "checks.liveness.stuck.0.reason"), "no grant for the last") != NULL);
    CHECK_STR(gets_(r, "checks.liveness.verdict"), "invalid");
    CHECK_STR(gets_(r, "verdict_checks"), "invalid");
    CHECK(fabs(getd(r, "checks.liveness.longest_stall_ms") - (4905 - 4)) < 1e-9);
    CHECK(is_null(r, "checks.liveness.crash_to_next_grant_ms"));
    CHECK_INT(geti(r, "checks.liveness.crashes_without_next_grant"), 1);
    CHECK_INT(geti(r, "per_worker.3.grants"), 0);
    CHECK(is_null(r, "checks.liveness.fairness.ratio")); /* w3 tried and got nothing */
    json_free(r);

    /* A longer stuck_after: not stuck any more. */
    struct check_params p;
    check_params_from(&h, &p);
    p.stuck_after = 10 * 1000000000LL;
    r = json_new_obj();
    CHECK_INT(check_liveness(&h, &p, r), VERDICT_VALID);
    json_free(r);

    /* A key left with no expiry is stuck whatever the stall. */
    h.leftover = calloc(1, sizeof(*h.leftover));
    h.nleftover = 1;
    h.leftover[0].res = 0;
    h.leftover[0].pttl_ms = -1;
    r = json_new_obj();
    CHECK_INT(check_liveness(&h, &p, r), VERDICT_INVALID);
    CHECK_STR(gets_(r, "checks.liveness.stuck.0.res"), "r0");
    CHECK_STR(gets_(r, "checks.liveness.stuck.0.reason"), "lock key left with no expiry");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* A grant that replaces the worker's grant never entered (as the mutex
 * checker has it) takes its place among the holders: w0's first grant of r0
 * (no expiry) is never entered, its second is held and released at 10.5;
 * w1 waits from 20 to the end with r0 free. Counted as a second holder, the
 * first kept r0 "held" forever and never stuck. */
static void test_grant_replaces_unentered(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, -1, -1);
    grant(&sb, 0, "r0", 1.5, 2, -1, -1);
    hold(&sb, 0, "r0", 3, 10);
    for (int i = 0; i < 50; i++) {
        line(&sb, 20 + 100 * i, 1, "acquire_invoke", "r0", "\"attempt\":1");
        line(&sb, 21 + 100 * i, 1, "acquire_busy", "r0", NULL);
    }
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 1);
    CHECK_STR(gets_(r, "checks.liveness.stuck.0.res"), "r0");
    CHECK_STR(gets_(r, "checks.liveness.verdict"), "invalid");
    /* held: only w0's own wait for its second grant behind its first */
    CHECK(fabs(getd(r, "checks.liveness.waits.held.total_ms") - 0.5) < 1e-9);
    CHECK_INT(geti(r, "checks.mutex.holds"), 1);
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* An entered grant is not replaced: w0 holds r0 twice (the second
     * grant while in its first hold) and releases both; r0 is then free. */
    grant(&sb, 0, "r0", 0, 1, -1, -1);
    line(&sb, 2, 0, "enter", "r0", NULL);
    grant(&sb, 0, "r0", 3, 4, -1, -1);
    line(&sb, 5, 0, "enter", "r0", NULL);
    line(&sb, 6, 0, "exit", "r0", NULL);
    line(&sb, 7, 0, "exit", "r0", NULL);
    line(&sb, 8, 0, "release_ok", "r0", NULL);
    line(&sb, 9, 0, "release_ok", "r0", NULL);
    for (int i = 0; i < 50; i++) {
        line(&sb, 20 + 100 * i, 1, "acquire_invoke", "r0", "\"attempt\":1");
        line(&sb, 21 + 100 * i, 1, "acquire_busy", "r0", NULL);
    }
    r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 1);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* A wait still open at the run's end ends at its waiters' last attempt
 * record, not at the run's end: w0 crashes holding r0 at 1 (lease to 501),
 * w1 tries every 100 ms up to its busy at 403 and stops; the run goes on
 * to 3000 (w2's hold of r9). The old rule counted r0's wait to 3000 (2998
 * ms with nothing granted) and called it stuck: a record-mode program gone
 * at the deadline, its worker waiting a stop grace, did that. An attempt
 * still in flight at the end (an invoke with no outcome: a worker blocked
 * in its acquire) waits to the end: stuck, also when the worker tries
 * another resource after it (its attempt of r0 has no end); one ended by
 * its worker's crash waited until the crash. */
static void test_open_wait_end(void)
{
    for (int tail = 0; tail < 4; tail++) {
        struct strbuf sb = STRBUF_INIT;
        grant(&sb, 0, "r0", 0, 0.5, -1, 501);
        line(&sb, 0.6, 0, "enter", "r0", NULL);
        line(&sb, 1, 0, "crash", NULL, NULL);
        for (int i = 0; i < 5; i++) {
            line(&sb, 2 + 100 * i, 1, "acquire_invoke", "r0", "\"attempt\":1");
            line(&sb, 3 + 100 * i, 1, "acquire_busy", "r0", NULL);
        }
        if (tail >= 1)
            line(&sb, 500, 1, "acquire_invoke", "r0", "\"attempt\":1");
        if (tail == 2)
            line(&sb, 600, 1, "crash", NULL, NULL);
        if (tail == 3) { /* then tries another resource: r0's attempt has no end yet */
            line(&sb, 600, 1, "acquire_invoke", "r1", "\"attempt\":1");
            line(&sb, 601, 1, "acquire_busy", "r1", NULL);
        }
        grant(&sb, 2, "r9", 0, 1, -1, -1);
        hold(&sb, 2, "r9", 2, 3000);
        struct history h;
        struct json *r = check_text(sb.buf, 1, &h);
        REQUIRE(r != NULL);
        double stall = tail == 0 ? 401 : tail == 2 ? 598 : 3000.5 - 2;
        CHECKF(fabs(getd(r, "checks.liveness.longest_stall_ms") - stall) < 1e-6,
               "tail %d: stall %g, want %g", tail, getd(r, "checks.liveness.longest_stall_ms"),
               stall);
        CHECKF(geti(r, "checks.liveness.stuck_resources") == (tail == 1 || tail == 3),
               "tail %d: stuck %lld",
               tail, (long long)geti(r, "checks.liveness.stuck_resources"));
        /* free: r0 from the first invoke at 2 to the wait's end (its holder
         * crashed at 1), the first grants' own round trips (0.5 + 1) and
         * r1's own wait (1) */
        CHECKF(fabs(getd(r, "checks.liveness.waits.free.total_ms") -
                    (stall + 1.5 + (tail == 3))) < 1e-6,
               "tail %d: free %g", tail, getd(r, "checks.liveness.waits.free.total_ms"));
        json_free(r);
        history_free(&h);
        sb_free(&sb);
    }
}

/* Waits split by what the waiters waited behind (docs/checkers.md
 * "Waits"). r0: w1 waits 5..6002 behind w0's 6 s hold inside its lease,
 * then 1.5 ms with the lock free. r1: w3 tries from 5 to the end behind a
 * hold inside its lease: the old open-stall rule called that stuck (6 s
 * with nothing granted, over the 2 s of a history), it is not. r2: w5
 * waits behind w4 inside its lease until 1001, behind it past its lease
 * until its release at 3000.5, then free until its grant at 3001. An
 * acquirer's own wait from its invoke to its grant counts too: free when
 * nobody holds the lock. */
static void test_waits(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant(&sb, 0, "r0", 0, 1, -1, 6001);
    hold(&sb, 0, "r0", 2, 6000);
    for (int i = 0; i < 6; i++) {
        line(&sb, 5 + 1000 * i, 1, "acquire_invoke", "r0", "\"attempt\":1");
        line(&sb, 6 + 1000 * i, 1, "acquire_busy", "r0", NULL);
    }
    grant(&sb, 1, "r0", 6001, 6002, -1, 7002);
    hold(&sb, 1, "r0", 6003, 6004);
    grant(&sb, 2, "r1", 0, 1, -1, 10001);
    hold(&sb, 2, "r1", 2, 6004);
    for (int i = 0; i < 6; i++) { /* and at the end (an open wait ends at its last attempt) */
        line(&sb, 5 + 1000 * i, 3, "acquire_invoke", "r1", "\"attempt\":1");
        line(&sb, 6 + 1000 * i, 3, "acquire_busy", "r1", NULL);
    }
    line(&sb, 6004, 3, "acquire_invoke", "r1", "\"attempt\":1");
    line(&sb, 6004.5, 3, "acquire_busy", "r1", NULL);
    grant(&sb, 4, "r2", 0, 1, -1, 1001);
    hold(&sb, 4, "r2", 2, 3000);
    line(&sb, 5, 5, "acquire_invoke", "r2", "\"attempt\":1");
    line(&sb, 6, 5, "acquire_busy", "r2", NULL);
    grant(&sb, 5, "r2", 3000.8, 3001, -1, 4001);
    hold(&sb, 5, "r2", 3002, 3003);
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK(fabs(getd(r, "checks.liveness.longest_stall_ms") - (6004.5 - 5)) < 1e-6);
    CHECK_INT(geti(r, "checks.liveness.stuck_resources"), 0);
    CHECK_STR(gets_(r, "checks.liveness.verdict"), "valid");
    CHECK(fabs(getd(r, "checks.liveness.waits.held.total_ms") - (5995.5 + 5999.5 + 996)) < 1e-6);
    CHECK(fabs(getd(r, "checks.liveness.waits.held.longest_ms") - 5999.5) < 1e-6);
    CHECK_STR(gets_(r, "checks.liveness.waits.held.longest_resource"), "r1");
    CHECK(fabs(getd(r, "checks.liveness.waits.expired.total_ms") - 1999.5) < 1e-6);
    CHECK_STR(gets_(r, "checks.liveness.waits.expired.longest_resource"), "r2");
    /* free: each first grant's own 1 ms round trip too (w0, w2, w4) */
    CHECK(fabs(getd(r, "checks.liveness.waits.free.total_ms") - (1.5 + 0.5 + 3)) < 1e-6);
    CHECK(fabs(getd(r, "checks.liveness.waits.free.longest_ms") - 1.5) < 1e-6);
    CHECK_STR(gets_(r, "checks.liveness.waits.free.longest_resource"), "r0");
    CHECK(fabs(getd(r, "checks.liveness.longest_unserved_wait_ms") - 2000) < 1e-6);
    CHECK_STR(gets_(r, "checks.liveness.longest_unserved_wait_resource"), "r2");
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* A semaphore of 2 with one holder: the waiter waits with a slot free. */
    grant(&sb, 0, "r0", 0, 1, -1, 5001);
    hold(&sb, 0, "r0", 2, 100);
    line(&sb, 5, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 6, 1, "acquire_busy", "r0", NULL);
    grant(&sb, 1, "r0", 49, 50, -1, 5050);
    hold(&sb, 1, "r0", 51, 52);
    r = check_text(sb.buf, 2, &h);
    REQUIRE(r != NULL);
    CHECK(fabs(getd(r, "checks.liveness.waits.free.total_ms") - (1 + 45)) < 1e-6);
    CHECK(fabs(getd(r, "checks.liveness.waits.held.total_ms") - 0) < 1e-6);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

static void test_stats_details(void)
{
    struct strbuf sb = STRBUF_INIT;
    /* An already expired grant (valid_until <= its own t), a failed and an
     * unknown attempt, a lost, a not-owner release. */
    grant(&sb, 0, "r0", 0, 10, -1, 10);
    line(&sb, 11, 0, "enter", "r0", NULL);
    line(&sb, 12, 0, "lost", "r0", NULL);
    line(&sb, 13, 0, "exit", "r0", NULL);
    line(&sb, 14, 0, "release_invoke", "r0", NULL);
    line(&sb, 16, 0, "release_not_owner", "r0", NULL);
    line(&sb, 20, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 21, 1, "acquire_fail", "r0", "\"err\":\"connection\"");
    line(&sb, 30, 1, "acquire_invoke", "r0", "\"attempt\":1");
    line(&sb, 40, 1, "acquire_unknown", "r0", "\"err\":\"timeout\"");
    struct history h;
    struct json *r = check_text(sb.buf, 1, &h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "counts.expired_grants"), 1);
    CHECK_INT(geti(r, "counts.failed"), 1);
    CHECK_INT(geti(r, "counts.unknown"), 1);
    CHECK_INT(geti(r, "counts.lost"), 1);
    CHECK_INT(geti(r, "counts.release_not_owner"), 1);
    CHECK_INT(geti(r, "counts.releases"), 0);
    CHECK_INT(geti(r, "counts.events"), 11);
    CHECK_INT(geti(r, "latency.acquire.count"), 3);
    CHECK(fabs(getd(r, "latency.acquire.max_ms") - 10) < 0.2);
    CHECK(fabs(getd(r, "latency.release.max_ms") - 2) < 0.05);
    CHECK(fabs(getd(r, "checks.liveness.failed_share") - 1.0 / 3) < 1e-9);
    CHECK(fabs(getd(r, "throughput.attempts_per_s") - 3 / 0.040) < 1e-6);
    CHECK_STR(gets_(r, "checks.stats.verdict"), "valid");
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* The registry: every entry complete and found by its name; each reads the
 * history one way (the pass or its own run); the checks' order is fixed. */
static void test_registry(void)
{
    int n = 0;
    const struct checker_ops *const *all = checker_all(&n);
    CHECK(n >= 7);
    for (int i = 0; i < n; i++) {
        const struct checker_ops *c = all[i];
        CHECK_INT(c->version, CHECKER_OPS_VERSION);
        CHECKF(c->name && c->sections && c->sections[0], "entry %d", i);
        CHECKF((c->pass != NULL) != (c->run != NULL), "%s: exactly one of pass and run",
               c->name);
        CHECKF(c->phase == CHECKER_JUDGE || c->phase == CHECKER_AFTER_STORIES, "%s", c->name);
        CHECKF(checker_find(c->name) == c, "%s: not found by its name", c->name);
        for (int j = 0; j < i; j++)
            CHECKF(strcmp(all[j]->name, c->name) != 0, "%s: registered twice", c->name);
    }
    CHECK(checker_find("no-such-checker") == NULL);
    CHECK(checker_find(NULL) == NULL);
    const char *first[] = {"mutex", "fencing", "liveness", "stats"};
    for (int i = 0; i < 4 && i < n; i++)
        CHECK_STR(all[i]->name, first[i]); /* the order of result.json's "checks" */
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_no_overlap);
    RUN(test_stale_holder);
    RUN(test_lock_broken);
    RUN(test_touching_and_near_miss);
    RUN(test_semaphore);
    RUN(test_no_lease);
    RUN(test_renewal_extends_lease);
    RUN(test_auto_renewal_not_a_reply);
    RUN(test_hold_without_exit);
    RUN(test_multiple_resources);
    RUN(test_lost_updates);
    RUN(test_fence_regression);
    RUN(test_latency_failed);
    RUN(test_same_instant_order);
    RUN(test_stall_and_stuck);
    RUN(test_waits_before_any_holder);
    RUN(test_grant_replaces_unentered);
    RUN(test_waits);
    RUN(test_open_wait_end);
    RUN(test_stats_details);
    RUN(test_registry);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
