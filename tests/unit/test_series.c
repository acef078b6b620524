/*
 * test_series.c: the fused pass (docs/checkers.md "Holds are paired
 * once"): the charts' series take their holds from the mutex checker's
 * pairing. On
 * seeded random histories, odd ones included (a grant replaced before its
 * enter, an enter without a grant, a stray exit, a worker holding more
 * than eight grants, renewals without a lease, crashes, logs ending in a
 * hold), loaded by the real JSONL loader:
 * - the timeline's holds (its window reader pairs the records again around
 *   the window, after the pass) are exactly the holds the mutex checker
 *   tells its listener that meet the window, lease and end kind included,
 *   on the whole run and zoomed (the look-back before the window is the
 *   longest hold the listener heard);
 * - series_build after check_run (fed by the fused pass) and series_build
 *   alone (its own pass, with the mutex pairing) write the same bytes.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "checkers/series.h"
#include "tests/unit/testing.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define NW_MAX 8
#define NRES 3
#define NO_LEASE INT64_MAX
#define MS ((int64_t)1000000)

static char *tmp;

/* ---- the generator ---- */

static void ev(struct strbuf *sb, int64_t t, int w, const char *type, int res)
{
    sb_printf(sb, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"%s\"", t, w, type);
    if (res >= 0)
        sb_printf(sb, ",\"res\":\"r%d\"", res);
}

/* Contract: one random worker's log of about n steps into sb, in time
 * order: mostly the usual attempt -> grant -> enter -> exit -> release,
 * with (odd) each odd case a real log could hold now and then; without,
 * every hold is short (a few ms) and the worker keeps to its own resource
 * (r<w>) for its first `own` steps, then takes r0 (-1: random ones). */
static void gen_worker(struct rng *r, struct strbuf *sb, int w, int *fence, int n, int odd,
                       int own)
{
    int64_t t = rng_range(r, 0, 3) * MS;
    int hoarder = odd && rng_below(r, 6) == 0; /* grants and enters, rarely exits: > 8 slots */
    for (int i = 0; i < n; i++) {
        int res = own < 0 ? (int)rng_below(r, NRES) : i < own ? w : 0;
        int64_t step = rng_below(r, 3) == 0 ? 0 : rng_range(r, 1, 3) * MS / 2;
        t += step;
        int k = (int)rng_below(r, 100);
        if (!odd && k >= 50 && k < 84 && (k < 72 || k >= 76))
            k = 84; /* a store op instead (crashes stay) */
        if (hoarder && k < 70) {
            ev(sb, t, w, "acquire_ok", res);
            sb_printf(sb, ",\"token\":\"w%d-%d\",\"fence\":%d,\"valid_until\":%" PRId64 "}\n", w,
                      *fence, *fence, t + 5 * MS);
            ++*fence;
            ev(sb, t, w, "enter", res);
            sb_puts(sb, "}\n");
        } else if (k < 40) { /* the usual hold, maybe never entered, maybe no lease */
            ev(sb, t, w, "acquire_invoke", res);
            sb_puts(sb, ",\"attempt\":1}\n");
            t += rng_below(r, 2) * MS;
            ev(sb, t, w, "acquire_ok", res);
            sb_printf(sb, ",\"token\":\"w%d-%d\",\"fence\":%d", w, *fence, *fence);
            ++*fence;
            if (rng_below(r, 5) == 0)
                sb_puts(sb, ",\"valid_until\":null}\n");
            else
                sb_printf(sb, ",\"valid_until\":%" PRId64 "}\n",
                          t + rng_range(r, 1, 6) * MS);
            if (rng_below(r, 8) == 0)
                continue; /* left for a replacing grant, a release or a lost */
            t += rng_below(r, 2) * MS / 4;
            ev(sb, t, w, "enter", res);
            sb_puts(sb, "}\n");
            if (rng_below(r, 4) == 0) {
                t += rng_below(r, 3) * MS;
                ev(sb, t, w, "renew_ok", res);
                if (rng_below(r, 6) == 0)
                    sb_puts(sb, ",\"valid_until\":null}\n");
                else
                    sb_printf(sb, ",\"valid_until\":%" PRId64 "}\n",
                              t + rng_range(r, 1, 6) * MS);
            }
            if (odd && rng_below(r, 10) == 0)
                continue; /* no exit: a crash, the end of the log or a later exit ends it */
            t += rng_below(r, 4) * MS;
            ev(sb, t, w, "exit", res);
            sb_puts(sb, "}\n");
            t += rng_below(r, 2) * MS / 2;
            ev(sb, t, w, rng_below(r, 6) ? "release_ok" : "release_not_owner", res);
            sb_puts(sb, "}\n");
        } else if (k < 50) {
            ev(sb, t, w, "acquire_invoke", res);
            sb_puts(sb, ",\"attempt\":1}\n");
            t += MS / 4;
            ev(sb, t, w, rng_below(r, 2) ? "acquire_busy" : "acquire_unknown", res);
            sb_puts(sb, rng_below(r, 2) ? "}\n" : ",\"err\":\"timeout\"}\n");
        } else if (k < 58) {
            ev(sb, t, w, "enter", res); /* without a grant, or entering a left one */
            sb_puts(sb, "}\n");
        } else if (k < 66) {
            ev(sb, t, w, "exit", res); /* a stray exit, or one ending an open hold */
            sb_puts(sb, "}\n");
        } else if (k < 72) {
            ev(sb, t, w, rng_below(r, 2) ? "lost" : "release_fail", res);
            sb_puts(sb, rng_below(r, 2) ? "}\n" : ",\"err\":\"timeout\"}\n");
        } else if (k < 76) {
            ev(sb, t, w, "crash", -1);
            sb_puts(sb, "}\n");
        } else if (k < 84) {
            ev(sb, t, w, "acquire_ok", res); /* a grant with no invoke: maybe a replacement */
            sb_printf(sb, ",\"token\":\"w%d-%d\",\"fence\":%d,\"valid_until\":%" PRId64 "}\n", w,
                      *fence, *fence, t + 4 * MS);
            ++*fence;
        } else {
            ev(sb, t, w, "store_read", res);
            sb_puts(sb, ",\"fence\":1,\"fenced\":false,\"counter\":0,\"accepted\":true}\n");
        }
    }
}

static int load(const char *text, struct history *h)
{
    return t_load_jsonl(tmp, text, h);
}

/* ---- the mutex checker's holds, as its listener hears them ---- */

struct mhold {
    int res, worker, kind;
    double enter_ms, exit_ms, lease_ms; /* lease_ms: -1 for no lease */
};

struct heard {
    struct mhold *a;
    size_t n, cap;
};

static void heard_hold(void *ctx, const struct paired_hold *x)
{
    struct heard *hd = ctx;
    if (hd->n == hd->cap) {
        hd->cap = hd->cap ? 2 * hd->cap : 64;
        hd->a = xrealloc(hd->a, hd->cap * sizeof(*hd->a));
    }
    hd->a[hd->n++] = (struct mhold){x->res, x->worker, x->kind, ns_ms(x->enter), ns_ms(x->exit),
                                    x->lease == NO_LEASE ? -1 : ns_ms(x->lease)};
}

static int cmp_mhold(const void *pa, const void *pb)
{
    const struct mhold *a = pa, *b = pb;
    if (a->res != b->res)
        return a->res - b->res;
    if (a->worker != b->worker)
        return a->worker - b->worker;
    if (a->enter_ms != b->enter_ms)
        return a->enter_ms < b->enter_ms ? -1 : 1;
    if (a->exit_ms != b->exit_ms)
        return a->exit_ms < b->exit_ms ? -1 : 1;
    if (a->lease_ms != b->lease_ms)
        return a->lease_ms < b->lease_ms ? -1 : 1;
    return a->kind - b->kind;
}

static void mutex_holds(struct history *h, struct heard *hd)
{
    struct check_params p;
    check_params_from(h, &p);
    struct json *scratch = json_new_obj();
    void *st = mutex_checker.init(h, &p, scratch);
    struct hold_listener l = {heard_hold, hd};
    mutex_checker.listen(st, &l);
    struct pass_consumer c = {&mutex_checker.ops, st, 1};
    CHECK(pass_run(h, &c, 1) == 0);
    mutex_checker.finish(st, scratch);
    json_free(scratch);
    for (size_t k = 0; k < hd->n; k++) /* the loader numbers resources as it meets them */
        hd->a[k].res = (int)strtol(h->res_names[hd->a[k].res] + 1, NULL, 10);
    if (hd->n > 1) /* qsort takes no NULL array, even of none */
        qsort(hd->a, hd->n, sizeof(*hd->a), cmp_mhold);
}

/* Contract: the timeline's holds of series s (its lanes resolved). */
static void timeline_holds(const struct json *s, struct heard *hd)
{
    static const char *const kinds[] = {"exit", "crash", "open"};
    const struct json *lanes = json_path(s, "timeline.lanes");
    const struct json *rows = json_path(s, "timeline.holds.rows");
    for (size_t i = 0; rows && i < rows->n; i++) {
        const struct json *row = rows->kids[i];
        const struct json *ln = json_arr_get(lanes, (size_t)json_arr_get(row, 0)->i);
        const struct json *vu = json_arr_get(row, 3);
        const char *end = json_arr_get(row, 4)->s;
        struct mhold m = {(int)strtol(json_get_str(ln, "res", "r-1") + 1, NULL, 10),
                          (int)json_get_int(ln, "worker", -1), -1, json_arr_get(row, 1)->d,
                          json_arr_get(row, 2)->d, vu->type == JSON_NULL ? -1 : vu->d};
        for (int k = 0; k < 3; k++)
            if (strcmp(end, kinds[k]) == 0)
                m.kind = k;
        if (hd->n == hd->cap) {
            hd->cap = hd->cap ? 2 * hd->cap : 64;
            hd->a = xrealloc(hd->a, hd->cap * sizeof(*hd->a));
        }
        hd->a[hd->n++] = m;
    }
    if (hd->n > 1) /* qsort takes no NULL array, even of none */
        qsort(hd->a, hd->n, sizeof(*hd->a), cmp_mhold);
}

static char *written(const struct json *v)
{
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, v, 0);
    return sb_steal(&sb);
}

/* ---- the tests ---- */

struct tally {
    uint64_t histories, bad_pairs, bad_bytes, zoomed;
    int64_t holds, drawn, open, crash, no_lease, wide;
};

/* Contract: judge the history in text (history i of seed) three ways and
 * count in y what differs: the series of check_run's fused pass against
 * series_build's own pass (bytes), and the timeline's holds against the
 * mutex checker's holds that meet the timeline's window [from, to] (enter
 * <= to, exit >= from: what the timeline draws). */
static void one_history(const char *text, uint64_t seed, uint64_t i, struct tally *y)
{
    struct history h1, h2, h3;
    if (load(text, &h1) != 0 || load(text, &h2) != 0 || load(text, &h3) != 0) {
        CHECKF(0, "history %" PRIu64 " of seed %" PRIu64 " does not load", i, seed);
        return;
    }
    struct check_params p;
    check_params_from(&h1, &p);
    struct json *res = check_run(&h1, &p);
    struct json *fused = series_build(&h1, res); /* from check_run's fused pass */
    struct json *alone = series_build(&h2, res); /* its own pass */
    char *a = written(fused), *b = written(alone);
    if (strcmp(a, b) != 0 && y->bad_bytes++ == 0)
        fprintf(stderr, "series: history %" PRIu64 " of seed %" PRIu64 ": series_build alone "
                "differs from the fused pass's:\n%s\n%s\n", i, seed, a, b);
    free(a);
    free(b);

    struct heard m = {NULL, 0, 0}, t = {NULL, 0, 0};
    mutex_holds(&h3, &m);
    timeline_holds(fused, &t);
    double from = json_get_num(json_obj_get(fused, "timeline"), "from_ms", 0);
    double to = json_get_num(json_obj_get(fused, "timeline"), "to_ms", 0);
    y->zoomed += (uint64_t)json_path(fused, "timeline.zoomed")->i;
    CHECK(!json_path(fused, "timeline.truncated")->i);
    size_t kept = 0;
    for (size_t k = 0; k < m.n; k++) {
        y->open += m.a[k].kind == HOLD_OPEN;
        y->crash += m.a[k].kind == HOLD_CRASH;
        y->no_lease += m.a[k].lease_ms < 0;
        int at = 0; /* the worker's holds open as this one enters */
        for (size_t q = 0; q < m.n; q++)
            at += m.a[q].worker == m.a[k].worker && m.a[q].enter_ms <= m.a[k].enter_ms &&
                  m.a[q].exit_ms > m.a[k].enter_ms;
        y->wide += at > 8;
    }
    y->holds += (int64_t)m.n;
    for (size_t k = 0; k < m.n; k++)
        if (m.a[k].enter_ms <= to && m.a[k].exit_ms >= from)
            m.a[kept++] = m.a[k];
    m.n = kept;
    y->drawn += (int64_t)t.n;
    int same = m.n == t.n;
    for (size_t k = 0; same && k < m.n; k++)
        same = cmp_mhold(&m.a[k], &t.a[k]) == 0;
    if (!same && y->bad_pairs++ == 0) {
        fprintf(stderr, "series: history %" PRIu64 " of seed %" PRIu64 ": the timeline draws "
                "%zu holds in [%.6f, %.6f] ms, the mutex checker paired %zu there; the "
                "history:\n%s", i, seed, t.n, from, to, m.n, text);
        for (size_t k = 0; k < m.n || k < t.n; k++) {
            const struct mhold *x = k < m.n ? &m.a[k] : NULL, *z = k < t.n ? &t.a[k] : NULL;
            fprintf(stderr, "  mutex r%d w%d %.6f-%.6f lease %.6f end %d | timeline r%d w%d "
                    "%.6f-%.6f lease %.6f end %d\n", x ? x->res : -1, x ? x->worker : -1,
                    x ? x->enter_ms : 0, x ? x->exit_ms : 0, x ? x->lease_ms : 0,
                    x ? x->kind : -1, z ? z->res : -1, z ? z->worker : -1, z ? z->enter_ms : 0,
                    z ? z->exit_ms : 0, z ? z->lease_ms : 0, z ? z->kind : -1);
        }
    }
    y->histories++;
    free(m.a);
    free(t.a);
    json_free(fused);
    json_free(alone);
    json_free(res);
    history_free(&h1);
    history_free(&h2);
    history_free(&h3);
}

static uint64_t the_seed(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = t_env_u64("LS_SERIES_SEED", (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec ^
                                                  ((uint64_t)getpid() << 32));
    printf("series: seed %" PRIu64 " (LS_SERIES_SEED=%" PRIu64 " reproduces this run)\n", seed,
           seed);
    return seed;
}

static void report(const char *what, const struct tally *y)
{
    printf("series: %s: %" PRIu64 " histories (%" PRIu64 " zoomed), %" PRId64 " holds (%" PRId64
           " open at the log's end, %" PRId64 " ended by a crash, %" PRId64 " without a lease, %"
           PRId64 " entered with 8 more open), %" PRId64 " drawn; %" PRIu64
           " timelines paired otherwise, %" PRIu64 " series differing\n", what, y->histories,
           y->zoomed, y->holds, y->open, y->crash, y->no_lease, y->wide, y->drawn, y->bad_pairs,
           y->bad_bytes);
    CHECKF(y->bad_pairs == 0, "%" PRIu64 " of %" PRIu64 " timelines pair otherwise than the "
           "mutex checker", y->bad_pairs, y->histories);
    CHECKF(y->bad_bytes == 0, "%" PRIu64 " of %" PRIu64 " series differ with and without the "
           "check's pass", y->bad_bytes, y->histories);
}

/* Small histories: the timeline is the whole run (every hold drawn). */
static void test_whole_run(void)
{
    uint64_t seed = the_seed(), n = t_env_u64("LS_SERIES_N", 400);
    struct rng r;
    rng_seed(&r, seed, 0);
    struct tally y;
    memset(&y, 0, sizeof(y));
    for (uint64_t i = 0; i < n; i++) {
        struct strbuf sb = STRBUF_INIT;
        int nw = 1 + (int)rng_below(&r, NW_MAX), fence = 1;
        for (int w = 0; w < nw; w++)
            gen_worker(&r, &sb, w, &fence, 4 + (int)rng_below(&r, 40), 1, -1);
        one_history(sb_cstr(&sb), seed, i, &y);
        sb_free(&sb);
    }
    report("whole run", &y);
    CHECK(y.zoomed == 0);
    CHECK(n < 100 || (y.open > 0 && y.crash > 0 && y.no_lease > 0 && y.wide > 0));
}

/* Long histories (over 1,500 holds): the timeline zooms into a window and
 * its reader starts the longest hold (as the mutex checker paired it)
 * before the window: a shorter look-back would miss or mispair holds.
 * Every other one without odd records: short holds, a short look-back,
 * the window half-way, where the first overlap is. */
static void test_zoomed(void)
{
    uint64_t seed = the_seed(), n = t_env_u64("LS_SERIES_ZOOMED_N", 12);
    struct rng r;
    rng_seed(&r, seed, 1);
    struct tally y;
    memset(&y, 0, sizeof(y));
    for (uint64_t i = 0; i < n; i++) {
        struct strbuf sb = STRBUF_INIT;
        int fence = 1;
        for (int w = 0; w < NW_MAX; w++)
            if (i % 2) /* odd: overlaps from the start */
                gen_worker(&r, &sb, w, &fence, 600, 1, -1);
            else /* one resource each, but the last worker's on r0 from half-way */
                gen_worker(&r, &sb, w, &fence, 2500, 0, w < NW_MAX - 1 ? 2500 : 1250);
        one_history(sb_cstr(&sb), seed, i, &y);
        sb_free(&sb);
    }
    report("zoomed", &y);
    CHECK(y.zoomed == n);
}

/* Values a history from elsewhere may hold: an attempt invoked before
 * time 0 and granted after it (its latency goes to the first bucket: its
 * bucket by the invoke's time was negative, and the histogram written
 * there was outside the array: a crash), and counters at the ends of
 * int64 (their differences summed overflowed: the sum is taken modulo
 * 2^64, the lost updates saturate). */
static void test_extreme_values(void)
{
    const char *text =
        "{\"t\":-1000000000000000,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"r0\"}\n"
        "{\"t\":5,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"a\",\"fence\":1,"
        "\"valid_until\":100000000}\n"
        "{\"t\":6,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n"
        "{\"t\":7,\"w\":0,\"type\":\"store_write\",\"res\":\"r0\",\"fence\":1,\"fenced\":false,"
        "\"counter\":9000000000000000000,\"accepted\":true}\n"
        "{\"t\":8,\"w\":0,\"type\":\"store_write\",\"res\":\"r0\",\"fence\":1,\"fenced\":false,"
        "\"counter\":-9000000000000000000,\"accepted\":true}\n"
        "{\"t\":9,\"w\":0,\"type\":\"exit\",\"res\":\"r0\"}\n"
        "{\"t\":200000000,\"w\":0,\"type\":\"store_write\",\"res\":\"r0\",\"fence\":1,"
        "\"fenced\":false,\"counter\":9000000000000000000,\"accepted\":true}\n"
        "{\"t\":300000000,\"w\":0,\"type\":\"release_ok\",\"res\":\"r0\"}\n";
    struct history h;
    REQUIRE(load(text, &h) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = check_run(&h, &p);
    struct json *sr = series_build(&h, res);
    const struct json *q = json_path(sr, "latency_quantiles.rows");
    REQUIRE(q && q->type == JSON_ARR && q->n >= 1);
    const struct json *row = json_arr_get(q, 0);
    CHECKF(row->n == 4 && json_arr_get(row, 3)->i == 1, "first bucket: %s", written(row));
    const struct json *f = json_path(sr, "fencing.rows");
    REQUIRE(f && f->type == JSON_ARR && f->n >= 2);
    for (size_t i = 0; i < f->n; i++) { /* plain_lost never negative */
        const struct json *x = json_arr_get(json_arr_get(f, i), 1);
        CHECKF(x && x->type == JSON_NUM && x->i >= 0, "row %zu", i);
    }
    json_free(sr);
    json_free(res);
    history_free(&h);

    /* two counters of 5 x 10^18 each: their sum passes int64 (modulo 2^64 it
     * read as 8.4 x 10^18 lost updates; none were) */
    const char *two =
        "{\"t\":1,\"w\":0,\"type\":\"store_write\",\"res\":\"r0\",\"fenced\":false,"
        "\"counter\":5000000000000000000,\"accepted\":true}\n"
        "{\"t\":2,\"w\":0,\"type\":\"store_write\",\"res\":\"r1\",\"fenced\":false,"
        "\"counter\":5000000000000000000,\"accepted\":true}\n"
        "{\"t\":1000000000,\"w\":0,\"type\":\"store_read\",\"res\":\"r1\",\"fenced\":false,"
        "\"counter\":5000000000000000000,\"accepted\":true}\n";
    REQUIRE(load(two, &h) == 0);
    check_params_from(&h, &p);
    res = check_run(&h, &p);
    sr = series_build(&h, res);
    f = json_path(sr, "fencing.rows");
    REQUIRE(f && f->type == JSON_ARR && f->n >= 2);
    const struct json *last = json_arr_get(json_arr_get(f, f->n - 1), 1);
    CHECKF(last && last->type == JSON_NUM && last->i == 0, "plain_lost %lld",
           last ? (long long)last->i : -1);
    json_free(sr);
    json_free(res);
    history_free(&h);

    /* five resources each held from -10^18 to 10^18 ns while another worker
     * waits: their waits summed pass int64 (they wrapped); past it the
     * total is saturated, 2^63 - 1 ns */
    struct strbuf sb = STRBUF_INIT;
    for (int r = 0; r < 5; r++) {
        ev(&sb, -1000000000000000000LL, r, "acquire_ok", r);
        sb_puts(&sb, ",\"valid_until\":null}\n");
        ev(&sb, -1000000000000000000LL, r, "enter", r);
        sb_puts(&sb, "}\n");
        ev(&sb, 1000000000000000000LL, r, "exit", r);
        sb_puts(&sb, "}\n");
        ev(&sb, 1000000000000000000LL, r, "release_ok", r);
        sb_puts(&sb, "}\n");
        ev(&sb, -999999999999999999LL, 10 + r, "acquire_invoke", r);
        sb_puts(&sb, "}\n");
        ev(&sb, -999999999999999998LL, 10 + r, "acquire_busy", r);
        sb_puts(&sb, "}\n");
        ev(&sb, 999999999999999998LL, 10 + r, "acquire_invoke", r);
        sb_puts(&sb, "}\n");
        ev(&sb, 999999999999999999LL, 10 + r, "acquire_busy", r);
        sb_puts(&sb, "}\n");
    }
    REQUIRE(load(sb_cstr(&sb), &h) == 0);
    sb_free(&sb);
    check_params_from(&h, &p);
    res = check_run(&h, &p);
    const struct json *held = json_path(res, "checks.liveness.waits.held.total_ms");
    CHECKF(held && held->type == JSON_NUM && held->d >= 9.2e12, "held waits %s",
           held ? written(held) : "(none)");
    json_free(res);
    history_free(&h);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_whole_run);
    RUN(test_zoomed);
    RUN(test_extreme_values);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
