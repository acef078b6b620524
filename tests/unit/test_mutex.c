/*
 * test_mutex.c: the mutex checker against docs/checkers.md "Overlap
 * semantics" and "Incidents" on hand-picked histories: ties (zero-length
 * holds, a lease ending at a grant, a crash or log end at an entry),
 * semaphores, leases as they stood, renewals after loss and losses,
 * incidents and how many are listed. The random-history property test
 * against a brute-force oracle is test_mutex_oracle.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkers/check.h"
#include "tests/unit/mutex_test.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static char *tmp;

/* ---- shared helpers ---- */

static void ev(struct strbuf *sb, int64_t t, int w, const char *type, int res, const char *extra)
{
    sb_printf(sb, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"%s\"", t, w, type);
    if (res >= 0)
        sb_printf(sb, ",\"res\":\"r%d\"", res);
    if (extra && *extra)
        sb_printf(sb, ",%s", extra);
    sb_puts(sb, "}\n");
}

/* acquire_ok at t (ns) with lease vu (ns; < 0: none) and fence f. */
static void grant_at(struct strbuf *sb, int64_t t, int w, int res, long f, int64_t vu)
{
    char extra[160], v[32];
    if (vu >= 0)
        snprintf(v, sizeof(v), "%" PRId64, vu);
    else
        snprintf(v, sizeof(v), "null");
    snprintf(extra, sizeof(extra), "\"token\":\"w%d-f%ld\",\"fence\":%ld,\"valid_until\":%s", w,
             f, f, v);
    ev(sb, t, w, "acquire_ok", res, extra);
}

/* A whole hold in ms: grant at acq (lease vu, < 0 none), enter, exit, release. */
static void hold_ms(struct strbuf *sb, int w, double acq, double vu, double enter, double exit_)
{
    static long fence;
    grant_at(sb, llround(acq * MS), w, 0, ++fence, vu < 0 ? -1 : llround(vu * MS));
    ev(sb, llround(enter * MS), w, "enter", 0, NULL);
    ev(sb, llround(exit_ * MS), w, "exit", 0, NULL);
    ev(sb, llround(exit_ * MS), w, "release_invoke", 0, NULL);
    ev(sb, llround(exit_ * MS) + 1, w, "release_ok", 0, NULL);
}

static int load_text(const char *text, struct history *h)
{
    return t_load_jsonl(tmp, text, h);
}

/* ---- hand-picked histories ---- */

/* The issue's reproduction: three holds touching at t = 100 ns, the middle
 * one of zero length (release, acquire, release, acquire all at t). */
static void test_issue_ties(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant_at(&sb, 10, 0, 0, 1, 1000000);
    ev(&sb, 10, 0, "enter", 0, NULL);
    ev(&sb, 100, 0, "exit", 0, NULL);
    ev(&sb, 100, 0, "release_invoke", 0, NULL);
    ev(&sb, 110, 0, "release_ok", 0, NULL);
    grant_at(&sb, 100, 2, 0, 2, 1000000);
    ev(&sb, 100, 2, "enter", 0, NULL);
    ev(&sb, 100, 2, "exit", 0, NULL);
    ev(&sb, 100, 2, "release_invoke", 0, NULL);
    ev(&sb, 105, 2, "release_ok", 0, NULL);
    grant_at(&sb, 100, 1, 0, 3, 1000000);
    ev(&sb, 100, 1, "enter", 0, NULL);
    ev(&sb, 200, 1, "exit", 0, NULL);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    struct json *r = judge(&h, 1, MS, 50);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK_INT(geti(r, "checks.mutex.holds"), 3);       /* the zero-length hold is a hold */
    CHECK_INT(geti(r, "checks.mutex.near_misses"), 2); /* w1 and w2 both touch w0's exit */
    CHECK_INT(geti(r, "checks.mutex.incidents"), 0);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    CHECK_INT(len_of(r, "violations"), 0);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* Capacity 2, five holds around t = 100 ms: w0 leaves at 100 as w2, w3
 * (zero length) and w4 enter; w1 is still in. One hold strictly active and
 * two positive entries: max(0, 1 + 2 - max(1, 2)) = 1 violation, w4 (the
 * later worker), over [100, 150] until w1 leaves. */
static void test_semaphore_ties(void)
{
    struct strbuf sb = STRBUF_INIT;
    hold_ms(&sb, 0, 0, 1000, 0, 100);
    hold_ms(&sb, 1, 50, 1000, 50, 150);
    hold_ms(&sb, 2, 100, 1000, 100, 200);
    hold_ms(&sb, 3, 100, 1000, 100, 100);
    hold_ms(&sb, 4, 100, 1000, 100, 300);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    struct json *r = judge(&h, 2, MS, 50);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(geti(r, "checks.mutex.holds"), 5);
    CHECK_INT(len_of(r, "violations.0.holders"), 3);
    CHECK_INT(geti(r, "violations.0.holders.0.worker"), 1);
    CHECK_INT(geti(r, "violations.0.holders.1.worker"), 2);
    CHECK_INT(geti(r, "violations.0.holders.2.worker"), 4);
    CHECK_INT(get_ns(r, "violations.0.overlap_start_ms"), 100 * MS);
    CHECK_INT(get_ns(r, "violations.0.overlap_ms"), 50 * MS);
    CHECK_STR(gets_(r, "violations.0.class"), "lock-broken");
    json_free(r);
    /* As a mutex: w1 entering w0's hold; then at 100 w2 (w1 strictly
     * active) and w4; w3's zero-length hold none. */
    r = judge(&h, 1, MS, 50);
    CHECK_INT(geti(r, "checks.mutex.violations"), 3);
    CHECK_INT(geti(r, "violations.0.holders.1.worker"), 1); /* w1 entering w0's hold */
    CHECK_INT(geti(r, "violations.1.holders.1.worker"), 2);
    CHECK_INT(geti(r, "violations.2.holders.2.worker"), 4);
    CHECK_INT(geti(r, "checks.mutex.incidents"), 2); /* w0's hold, then w1's */
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* A lease that ends exactly at the later grant has expired (stale-holder);
 * one ns later it was still valid (lock-broken). A zero-length hold inside
 * another hold overlaps nothing. */
static void test_lease_at_grant(void)
{
    for (int later = 0; later < 2; later++) {
        struct strbuf sb = STRBUF_INIT;
        grant_at(&sb, 0, 0, 0, 1, 50 * MS + later);
        ev(&sb, 1 * MS, 0, "enter", 0, NULL);
        ev(&sb, 100 * MS, 0, "exit", 0, NULL);
        hold_ms(&sb, 1, 50, 150, 60, 70);
        hold_ms(&sb, 2, 80, 180, 80, 80);
        struct history h;
        REQUIRE(load_text(sb.buf, &h) == 0);
        struct json *r = judge(&h, 1, MS, 50);
        CHECK_INT(geti(r, "checks.mutex.violations"), 1);
        CHECK_INT(geti(r, "checks.mutex.holds"), 3);
        CHECK_STR(gets_(r, "violations.0.class"), later ? "lock-broken" : "stale-holder");
        CHECK_INT(geti(r, "checks.mutex.by_class.stale_holder"), !later);
        CHECK_INT(geti(r, "checks.mutex.by_class.lock_broken"), later);
        json_free(r);
        history_free(&h);
        sb_free(&sb);
    }
}

/* The entering holder was granted first and slow to enter (paused between
 * its grant and its enter): w1 is granted at 10 ms, w0 at 30 and enters
 * at 31, w1 enters at 60 while w0 holds. The grant judged is the latest,
 * w0's: with w1's lease ending at 20 ms it was granted after w1's lease
 * ran out, and w1 overstayed (stale-holder); with w1's lease to 40 ms the
 * lock was granted twice (lock-broken). The lease that decided is w1's,
 * as it stood at w0's grant; w0, whose grant was judged, carries none.
 * (Judged at w1's grant instead, both were lock-broken: w0's lease, 130 ms,
 * is later than 10 ms, but w0 had no lease yet then.) */
static void test_slow_enter(void)
{
    for (int broken = 0; broken < 2; broken++) {
        struct strbuf sb = STRBUF_INIT;
        hold_ms(&sb, 1, 10, broken ? 40 : 20, 60, 90);
        hold_ms(&sb, 0, 30, 130, 31, 80);
        struct history h;
        REQUIRE(load_text(sb.buf, &h) == 0);
        struct json *r = judge(&h, 1, MS, 50);
        CHECK_INT(geti(r, "checks.mutex.violations"), 1);
        CHECK_STR(gets_(r, "violations.0.class"), broken ? "lock-broken" : "stale-holder");
        CHECK_INT(geti(r, "violations.0.holders.0.worker"), 0);
        CHECK_INT(geti(r, "violations.0.holders.1.worker"), 1);
        CHECK(json_path(r, "violations.0.holders.0.valid_until_at_grant_ms") == NULL);
        CHECK_INT(get_ns(r, "violations.0.holders.1.valid_until_at_grant_ms"),
                  (broken ? 40 : 20) * MS);
        json_free(r);
        history_free(&h);
        sb_free(&sb);
    }
}

/* Leases as they stood at the later grant (docs/checkers.md
 * "Classification"): w0's lease runs out at 10 ms, w1 is granted at 20;
 * w0 renews at `when` (to 35 ms), and is still in its hold at 21. A
 * renewal before the grant makes the overlap lock-broken; one at the
 * grant's instant or after it leaves it stale-holder, and one after it
 * while w1 holds the lock is a renewal after loss. Before leases as they
 * stood, every case here was lock-broken (the final lease, 35 ms). */
static void test_lease_as_stood(void)
{
    static const struct {
        int64_t when;
        const char *cls;
        int ral;
    } cases[] = {{15 * MS, "lock-broken", 0}, {20 * MS, "stale-holder", 0},
                 {25 * MS, "stale-holder", 1}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct strbuf sb = STRBUF_INIT;
        char vu[64];
        grant_at(&sb, 0, 0, 0, 1, 10 * MS);
        ev(&sb, 1 * MS, 0, "enter", 0, NULL);
        snprintf(vu, sizeof(vu), "\"valid_until\":%lld,\"auto\":true", 35 * MS);
        ev(&sb, cases[c].when, 0, "renew_ok", 0, vu);
        ev(&sb, 28 * MS, 0, "exit", 0, NULL);
        hold_ms(&sb, 1, 20, 30, 21, 27);
        struct history h;
        REQUIRE(load_text(sb.buf, &h) == 0);
        struct json *r = judge(&h, 1, MS, 50);
        CHECK_INT(geti(r, "checks.mutex.violations"), 1);
        CHECK_STR(gets_(r, "violations.0.class"), cases[c].cls);
        CHECK_INT(get_ns(r, "violations.0.holders.0.valid_until_at_grant_ms"),
                  c == 0 ? 35 * MS : 10 * MS);
        CHECK_INT(get_ns(r, "violations.0.holders.0.valid_until_ms"), 35 * MS);
        CHECK_INT(geti(r, "checks.mutex.renewed_after_loss"), cases[c].ral);
        CHECK_STR(gets_(r, "checks.mutex.verdict"), "invalid");
        if (cases[c].ral) {
            CHECK_STR(gets_(r, "checks.mutex.anomalies.0.class"), "renewed-after-loss");
            CHECK_INT(geti(r, "checks.mutex.anomalies.0.other.worker"), 1);
            CHECK_INT(get_ns(r, "checks.mutex.anomalies.0.lease_ran_out_ms"), 10 * MS);
            CHECK_INT(geti(r, "checks.mutex.anomalies.0.auto"), 1);
        }
        json_free(r);
        history_free(&h);
        sb_free(&sb);
    }
}

/* A renewal after loss with no overlap (w0 renews late, after w1 was
 * granted, but left before w1 entered): no violation, yet the mutex
 * verdict is invalid, and after w1's end a renewal is no anomaly. Losses:
 * a lost with lease left, one after the lease ran out (expired), one
 * after the exit (the exited grant's lease), one naming no grant, one of a
 * grant without expiry (no_lease: neither left nor run out). */
static void test_ral_and_losses(void)
{
    struct strbuf sb = STRBUF_INIT;
    char vu[64];
    grant_at(&sb, 0, 0, 0, 1, 10 * MS);
    ev(&sb, 1 * MS, 0, "enter", 0, NULL);
    ev(&sb, 2 * MS, 0, "exit", 0, NULL);
    hold_ms(&sb, 1, 20, 50, 30, 40);
    grant_at(&sb, 60 * MS, 2, 0, 3, 70 * MS);
    ev(&sb, 61 * MS, 2, "enter", 0, NULL);
    ev(&sb, 65 * MS, 2, "lost", 0, NULL);      /* lease left: 5 ms */
    ev(&sb, 80 * MS, 2, "lost", 0, NULL);      /* expired */
    ev(&sb, 81 * MS, 2, "exit", 0, NULL);
    ev(&sb, 82 * MS, 2, "lost", 0, NULL);      /* after the exit: still expired */
    ev(&sb, 83 * MS, 2, "release_ok", 0, NULL);
    ev(&sb, 84 * MS, 2, "lost", 0, NULL);      /* no grant any more: unmatched */
    grant_at(&sb, 90 * MS, 3, 0, 4, -1);       /* no expiry */
    ev(&sb, 91 * MS, 3, "enter", 0, NULL);
    ev(&sb, 92 * MS, 3, "lost", 0, NULL);      /* no lease to have left: no_lease */
    ev(&sb, 93 * MS, 3, "exit", 0, NULL);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    /* w0's renewal at 25 ms: w1 was granted at 20 after w0's lease ran out
     * at 10; w0 left at 2 ms, so it has no slot: nothing to renew. */
    struct json *r = judge(&h, 1, MS, 50);
    CHECK_INT(geti(r, "checks.mutex.renewed_after_loss"), 0);
    CHECK_INT(geti(r, "checks.mutex.losses"), 4);
    CHECK_INT(geti(r, "checks.mutex.losses_by_class.lost_with_lease_left"), 1);
    CHECK_INT(geti(r, "checks.mutex.losses_by_class.expired"), 2);
    CHECK_INT(geti(r, "checks.mutex.losses_by_class.no_lease"), 1);
    CHECK_INT(geti(r, "checks.mutex.losses_unmatched"), 1);
    CHECK_STR(gets_(r, "checks.mutex.anomalies.0.class"), "lost-with-lease-left");
    CHECK_INT(get_ns(r, "checks.mutex.anomalies.0.lease_left_ms"), 5 * MS);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "valid");
    json_free(r);
    history_free(&h);
    sb_free(&sb);

    /* The holder still granted (never entered: a renewal before the
     * critical section) renews at 25 while w1 holds: invalid with no
     * overlap; a renewal at 45, after w1's exit at 40, is none. */
    for (int late = 0; late < 2; late++) {
        struct strbuf s2 = STRBUF_INIT;
        grant_at(&s2, 0, 0, 0, 1, 10 * MS);
        snprintf(vu, sizeof(vu), "\"valid_until\":%lld", (late ? 45 : 25) * MS + 10 * MS);
        ev(&s2, (late ? 45 : 25) * MS, 0, "renew_ok", 0, vu);
        ev(&s2, 50 * MS, 0, "release_ok", 0, NULL);
        hold_ms(&s2, 1, 20, 50, 30, 40);
        REQUIRE(load_text(s2.buf, &h) == 0);
        r = judge(&h, 1, MS, 50);
        CHECK_INT(geti(r, "checks.mutex.violations"), 0);
        CHECK_INT(geti(r, "checks.mutex.renewed_after_loss"), !late);
        CHECK_STR(gets_(r, "checks.mutex.verdict"), late ? "valid" : "invalid");
        json_free(r);
        history_free(&h);
        sb_free(&s2);
    }
}

/* A crash, or the end of a log without exit, at the instant another
 * worker enters: the hold has ended, nothing overlaps. */
static void test_end_at_entry(void)
{
    for (int how = 0; how < 2; how++) {
        struct strbuf sb = STRBUF_INIT;
        grant_at(&sb, 0, 1, 0, 1, 500 * MS);
        ev(&sb, 1 * MS, 1, "enter", 0, NULL);
        if (how == 0)
            ev(&sb, 100 * MS, 1, "crash", -1, NULL);
        else
            ev(&sb, 100 * MS, 1, "store_read", 0,
               "\"fenced\":false,\"counter\":0,\"accepted\":true");
        hold_ms(&sb, 0, 100, 600, 100, 150);
        hold_ms(&sb, 2, 100, 600, 100, 100);
        struct history h;
        REQUIRE(load_text(sb.buf, &h) == 0);
        struct json *r = judge(&h, 1, MS, 50);
        CHECK_INT(geti(r, "checks.mutex.violations"), 0);
        CHECK_INT(geti(r, "checks.mutex.holds"), 3);
        CHECK_INT(geti(r, "checks.mutex.near_misses"), 2);
        CHECK_STR(gets_(r, "checks.mutex.verdict"), how == 0 ? "valid" : "unknown");
        json_free(r);
        history_free(&h);
        sb_free(&sb);
    }
}

/* One paused holder (w0, lease to 10 ms, in its hold until 100 ms) and
 * seven successors it overlaps: seven violations, one incident; w1 was
 * granted at 5 ms, while w0's lease ran, so the incident is lock-broken.
 * Then w8 overstays its lease and w9 overlaps it: a second, stale
 * incident. */
static void incident_history(struct strbuf *sb)
{
    hold_ms(sb, 0, 0, 10, 1, 100);
    hold_ms(sb, 1, 5, 13, 11, 15);
    for (int k = 2; k <= 7; k++)
        hold_ms(sb, k, 10.0 * k, 10.0 * k + 8, 10.0 * k + 1, 10.0 * k + 5);
    hold_ms(sb, 8, 110, 200, 111, 300);
    hold_ms(sb, 9, 250, 260, 251, 255);
}

static void test_incidents(void)
{
    struct strbuf sb = STRBUF_INIT;
    incident_history(&sb);
    struct history h;
    REQUIRE(load_text(sb.buf, &h) == 0);
    /* Fault windows: 1 meets violation 1 (w2, 21-25 ms), 2 meets none,
     * 3 meets violation 6 (w7, 71-75 ms), 4 is skipped. */
    static const int64_t fw[4][2] = {{20, 22}, {101, 102}, {74, 80}, {20, 30}};
    h.nfaults = 4;
    h.faults = calloc(4, sizeof(*h.faults));
    REQUIRE(h.faults != NULL);
    for (int i = 0; i < 4; i++) {
        h.faults[i].id = i + 1;
        h.faults[i].start = fw[i][0] * MS;
        h.faults[i].end = fw[i][1] * MS;
        h.faults[i].skipped = i == 3;
        h.faults[i].worker = h.faults[i].node = -1;
    }
    struct json *r = judge(&h, 1, MS, 50);
    CHECK_INT(geti(r, "checks.mutex.violations"), 8);
    CHECK_INT(geti(r, "checks.mutex.by_class.lock_broken"), 1);
    CHECK_INT(geti(r, "checks.mutex.by_class.stale_holder"), 7);
    CHECK_INT(geti(r, "checks.mutex.incidents"), 2);
    CHECK_INT(geti(r, "checks.mutex.incidents_by_class.lock_broken"), 1);
    CHECK_INT(geti(r, "checks.mutex.incidents_by_class.stale_holder"), 1);
    CHECK_INT(len_of(r, "incidents"), 2);
    CHECK_INT(geti(r, "incidents.0.id"), 1);
    CHECK_STR(gets_(r, "incidents.0.class"), "lock-broken");
    CHECK_STR(gets_(r, "incidents.0.resource"), "r0");
    CHECK_INT(geti(r, "incidents.0.cause.worker"), 0);
    CHECK_INT(get_ns(r, "incidents.0.cause.enter_ms"), 1 * MS);
    CHECK_INT(get_ns(r, "incidents.0.cause.exit_ms"), 100 * MS);
    CHECK_INT(get_ns(r, "incidents.0.cause.valid_until_ms"), 10 * MS);
    CHECK(strncmp(gets_(r, "incidents.0.cause.token"), "w0-f", 4) == 0);
    CHECK_INT(geti(r, "incidents.0.violations"), 7);
    CHECK_INT(len_of(r, "incidents.0.listed"), 7);
    for (int k = 0; k < 7; k++) {
        char path[64];
        snprintf(path, sizeof(path), "incidents.0.listed.%d", k);
        CHECK_INT(geti(r, path), k);
    }
    CHECK_INT(geti(r, "incidents.0.first_violation"), 0);
    CHECK_INT(get_ns(r, "incidents.0.start_ms"), 11 * MS);
    CHECK_INT(get_ns(r, "incidents.0.end_ms"), 75 * MS);
    CHECK_INT(len_of(r, "incidents.0.faults"), 2);
    CHECK_INT(geti(r, "incidents.0.faults.0"), 1);
    CHECK_INT(geti(r, "incidents.0.faults.1"), 3);
    CHECK_INT(geti(r, "incidents.1.id"), 2);
    CHECK_STR(gets_(r, "incidents.1.class"), "stale-holder");
    CHECK_INT(geti(r, "incidents.1.cause.worker"), 8);
    CHECK_INT(geti(r, "incidents.1.violations"), 1);
    CHECK_INT(geti(r, "incidents.1.listed.0"), 7);
    CHECK_INT(geti(r, "incidents.1.first_violation"), 7);
    CHECK_INT(len_of(r, "incidents.1.faults"), 0);
    CHECK_INT(geti(r, "violations.7.holders.0.worker"), 8);
    json_free(r);

    /* Three violations listed: the second incident is listed, but none of
     * its violations is; one listed: one incident listed, both counted. */
    r = judge(&h, 1, MS, 3);
    CHECK_INT(len_of(r, "violations"), 3);
    CHECK_INT(len_of(r, "incidents"), 2);
    CHECK_INT(len_of(r, "incidents.0.listed"), 3);
    CHECK_INT(geti(r, "incidents.0.violations"), 7);
    CHECK_INT(len_of(r, "incidents.0.faults"), 2); /* from every violation, listed or not */
    CHECK_INT(len_of(r, "incidents.1.listed"), 0);
    CHECK(json_path(r, "incidents.1.first_violation") &&
          json_path(r, "incidents.1.first_violation")->type == JSON_NULL);
    json_free(r);
    r = judge(&h, 1, MS, 1);
    CHECK_INT(len_of(r, "incidents"), 1);
    CHECK_INT(geti(r, "checks.mutex.incidents"), 2);
    json_free(r);
    history_free(&h);
    sb_free(&sb);
}

/* A lease raised at the very instant of another grant is judged as it
 * stood before that raise, also once the holder's older raises are
 * dropped (mutex.c raises_trim keeps 4 before it drops): w1 renews at 10,
 * 20, 30 (valid until 45), at 50 as w0 is granted (to 150: after w0's
 * grant, which comes first at that instant, so it does not count for
 * it), and at 60, which drops the raises before 50. w0 enters at 70 while
 * w1 holds: w1's lease at w0's grant was 45, run out: stale-holder (a
 * drop of the raise at 50 too would read 150: lock-broken). */
static void test_raise_at_grant_instant(void)
{
    static const char text[] =
        "{\"t\":0,\"w\":1,\"type\":\"acquire_ok\",\"res\":\"r\",\"token\":\"b\",\"valid_until\":15}\n"
        "{\"t\":1,\"w\":1,\"type\":\"enter\",\"res\":\"r\"}\n"
        "{\"t\":10,\"w\":1,\"type\":\"renew_ok\",\"res\":\"r\",\"valid_until\":25}\n"
        "{\"t\":20,\"w\":1,\"type\":\"renew_ok\",\"res\":\"r\",\"valid_until\":35}\n"
        "{\"t\":30,\"w\":1,\"type\":\"renew_ok\",\"res\":\"r\",\"valid_until\":45}\n"
        "{\"t\":50,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r\",\"token\":\"a\",\"valid_until\":500}\n"
        "{\"t\":50,\"w\":1,\"type\":\"renew_ok\",\"res\":\"r\",\"valid_until\":150}\n"
        "{\"t\":60,\"w\":1,\"type\":\"renew_ok\",\"res\":\"r\",\"valid_until\":160}\n"
        "{\"t\":70,\"w\":0,\"type\":\"enter\",\"res\":\"r\"}\n"
        "{\"t\":80,\"w\":0,\"type\":\"exit\",\"res\":\"r\"}\n"
        "{\"t\":90,\"w\":1,\"type\":\"exit\",\"res\":\"r\"}\n";
    struct history h;
    REQUIRE(load_text(text, &h) == 0);
    for (int listed = 0; listed <= 1; listed++) { /* a violation kept with or without holders */
        struct json *r = judge(&h, 1, 0, listed);
        CHECK_INT(geti(r, "checks.mutex.violations"), 1);
        CHECKF(geti(r, "checks.mutex.by_class.stale_holder") == 1,
               "listed %d: stale %lld, broken %lld", listed,
               (long long)geti(r, "checks.mutex.by_class.stale_holder"),
               (long long)geti(r, "checks.mutex.by_class.lock_broken"));
        json_free(r);
    }
    history_free(&h);
}

/* The checker's per-resource state is sized by the history's resources
 * and grows at a grant or entry beyond them (rs_grow), keeping what it
 * held. The loaders count every resource a record names (a run
 * directory's logs that name more than its workload lists make it load
 * again, checking every record), so no loaded history reaches the growth:
 * here the history is told it has one resource. w0's hold of r0 must
 * outlive two growths (r3, r7) for w2's grant of r0 to overlap it. */
static void test_resources_grown(void)
{
    struct strbuf sb = STRBUF_INIT;
    grant_at(&sb, 1 * MS, 0, 0, 1, 1000 * MS);
    ev(&sb, 1 * MS, 0, "enter", 0, NULL);
    grant_at(&sb, 10 * MS, 1, 3, 2, 1000 * MS);
    ev(&sb, 10 * MS, 1, "enter", 3, NULL);
    grant_at(&sb, 20 * MS, 2, 0, 3, 1000 * MS);
    ev(&sb, 20 * MS, 2, "enter", 0, NULL);
    grant_at(&sb, 30 * MS, 3, 7, 4, 1000 * MS);
    ev(&sb, 30 * MS, 3, "enter", 7, NULL);
    ev(&sb, 40 * MS, 2, "exit", 0, NULL);
    ev(&sb, 50 * MS, 0, "exit", 0, NULL);
    ev(&sb, 60 * MS, 1, "exit", 3, NULL);
    ev(&sb, 70 * MS, 3, "exit", 7, NULL);
    for (int told = 0; told < 2; told++) {
        struct history h;
        REQUIRE(load_text(sb.buf, &h) == 0);
        int nres = h.nres;
        if (told)
            h.nres = 1;
        struct json *r = judge(&h, 1, MS, 50);
        CHECKF(geti(r, "checks.mutex.violations") == 1, "told %d: %lld violations", told,
               (long long)geti(r, "checks.mutex.violations"));
        CHECK_INT(geti(r, "checks.mutex.holds"), 4);
        CHECK_STR(gets_(r, "violations[0].resource"), "r0");
        CHECK_INT(geti(r, "violations[0].holders[0].worker"), 0);
        CHECK_INT(geti(r, "violations[0].holders[1].worker"), 2);
        json_free(r);
        h.nres = nres;
        history_free(&h);
    }
    sb_free(&sb);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_issue_ties);
    RUN(test_semaphore_ties);
    RUN(test_lease_at_grant);
    RUN(test_slow_enter);
    RUN(test_lease_as_stood);
    RUN(test_ral_and_losses);
    RUN(test_end_at_entry);
    RUN(test_incidents);
    RUN(test_raise_at_grant_instant);
    RUN(test_resources_grown);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
