/*
 * test_history.c: loading histories. JSONL parsing (ordering, field
 * mapping, "FILE:LINE:" errors), the export -> JSONL -> check round trip
 * giving the same verdicts, and a run directory built from real binary
 * event logs (a killed worker with its crash record, faults, storage,
 * leftover keys) checked end to end without Redis; a restarted worker's
 * epochs read as one stream (its synthetic crash record included) by the
 * pass and by hist_rec. Closed logs whose records the pass checks
 * (damaged, cut, shortened, read short) are test_history_deferred.c; what
 * both write and read is in history_test.h.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/evidence.h"
#include "checkers/histload.h"
#include "checkers/pass.h"
#include "model/evlog.h"
#include "tests/unit/history_test.h"
#include "tests/unit/testing.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char *tmp;

static int has_warning_h(const struct history *h, const char *needle)
{
    for (int i = 0; i < h->nwarnings; i++)
        if (strstr(h->warnings[i], needle))
            return 1;
    return 0;
}

static void test_jsonl_load(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/a.jsonl", tmp);
    /* Out of order across and within workers, a blank line, sparse ids. */
    REQUIRE(write_file(path,
        "{\"t\":300,\"w\":7,\"type\":\"exit\",\"res\":\"beta\"}\n"
        "\n"
        "{\"t\":100,\"w\":7,\"type\":\"acquire_ok\",\"res\":\"beta\",\"token\":"
        "\"0123456789abcdef0123\",\"fence\":12,\"valid_until\":null}\n"
        "{\"t\":200,\"w\":7,\"type\":\"enter\",\"res\":\"beta\"}\n"
        "{\"t\":50,\"w\":2,\"type\":\"acquire_invoke\",\"res\":\"alpha\",\"attempt\":3}\n"
        "{\"t\":60,\"w\":2,\"type\":\"acquire_unknown\",\"res\":\"alpha\",\"err\":\"timeout\"}\n"
        "{\"t\":70,\"w\":2,\"type\":\"store_write\",\"res\":\"alpha\",\"fence\":4,"
        "\"fenced\":true,\"counter\":9,\"accepted\":false,\"failed\":true}\n"
        "{\"t\":70,\"w\":2,\"type\":\"renew_ok\",\"res\":\"alpha\",\"valid_until\":5000}\n"
        "{\"t\":400,\"w\":2,\"type\":\"crash\"}\n") == 0);
    struct history h;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_jsonl(path, &h, &err) == 0);
    CHECK_INT(h.nworkers, 2);
    CHECK_INT(h.w[0].id, 2);
    CHECK_INT(h.w[1].id, 7);
    CHECK_INT(h.end, 400);
    CHECK_INT(h.nres, 2);
    CHECK_STR(h.res_names[0], "beta"); /* order of first appearance */
    CHECK_STR(h.res_names[1], "alpha");
    CHECK_INT(h.from_rundir, 0);
    REQUIRE(h.w[1].n == 3);
    const struct ev_rec *e = h.w[1].ev;
    CHECK(e[0].type == EV_ACQUIRE_OK && e[1].type == EV_ENTER && e[2].type == EV_EXIT);
    CHECK(e[0].t == 100 && e[1].t == 200 && e[2].t == 300);
    CHECK(e[0].flags & EVF_NO_LEASE);
    CHECK(e[0].flags & EVF_FENCE);
    CHECK_INT(e[0].fence, 12);
    /* token longer than 16: a 16-char hex hash of it */
    int hex = 1;
    for (int i = 0; i < EVLOG_TOKEN_LEN; i++)
        hex &= (e[0].token[i] >= '0' && e[0].token[i] <= '9') ||
               (e[0].token[i] >= 'a' && e[0].token[i] <= 'f');
    CHECK(hex);
    CHECK(memcmp(e[0].token, "0123456789abcdef", 16) != 0);
    REQUIRE(h.w[0].n == 5);
    e = h.w[0].ev;
    CHECK_INT(e[0].aux, 3);
    CHECK_INT(e[1].aux, EVE_TIMEOUT);
    /* equal t: file order kept */
    CHECK(e[2].type == EV_STORE_WRITE && e[3].type == EV_RENEW_OK);
    CHECK_INT(e[2].flags & (EVF_FENCED | EVF_ACCEPTED | EVF_FAILED | EVF_FENCE),
              EVF_FENCED | EVF_FAILED | EVF_FENCE);
    CHECK_INT(e[2].value, 9);
    CHECK_INT(e[3].valid_until, 5000);
    CHECK_INT(e[3].flags & EVF_NO_LEASE, 0);
    CHECK_INT(e[4].type, EV_CRASH);
    history_free(&h);
}

static void expect_error(const char *text, const char *want)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/bad.jsonl", tmp);
    REQUIRE(write_file(path, text) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int rc = history_load_jsonl(path, &h, &err);
    CHECK(rc == LS_EINPUT);
    char prefix[4200];
    snprintf(prefix, sizeof(prefix), "%s:%s", path, want);
    CHECKF(strncmp(err.msg, prefix, strlen(prefix)) == 0, "'%s' does not start '%s'", err.msg,
           prefix);
    history_free(&h);
}

static void test_jsonl_errors(void)
{
    const char *ok = "{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n";
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, ok);
    sb_puts(&sb, "\n");
    sb_puts(&sb, "{\"t\":2,\"w\":0,\"type\":\"exit\",\"res\":\"r0\"\n"); /* line 3: bad JSON */
    expect_error(sb.buf, "3: bad JSON");
    sb_reset(&sb);
    sb_puts(&sb, ok);
    sb_puts(&sb, "{\"t\":2,\"w\":0,\"type\":\"leave\",\"res\":\"r0\"}\n");
    expect_error(sb.buf, "2: unknown event type 'leave'");
    expect_error("{\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n", "1: \"t\" missing");
    expect_error("{\"t\":1.5,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n", "1: \"t\" missing");
    expect_error("{\"t\":1,\"w\":-1,\"type\":\"enter\",\"res\":\"r0\"}\n", "1: \"w\"");
    expect_error("{\"t\":1,\"w\":0,\"type\":\"enter\"}\n", "1: \"res\" missing");
    expect_error("[1,2]\n", "1: not a JSON object");
    expect_error("{\"t\":1,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r0\",\"fence\":\"x\"}\n",
                 "1: \"fence\"");
    expect_error("{\"t\":1,\"w\":0,\"type\":\"store_read\",\"res\":\"r0\",\"accepted\":1}\n",
                 "1: \"fenced\", \"accepted\"");
    sb_free(&sb);

    struct history h;
    struct ls_err err = {0, ""};
    char path[4096];
    snprintf(path, sizeof(path), "%s/none.jsonl", tmp);
    CHECK(history_load_jsonl(path, &h, &err) == LS_EINPUT); /* a missing input: exit 2 */
    history_free(&h);

    /* An empty file is refused: a history of nothing must not pass a CI
     * gate (docs/reliability.md). */
    snprintf(path, sizeof(path), "%s/empty.jsonl", tmp);
    REQUIRE(write_file(path, "\n\n") == 0);
    ls_err_clear(&err);
    CHECK(history_load_jsonl(path, &h, &err) == LS_EINPUT);
    CHECK(strstr(err.msg, "no events") != NULL);
    history_free(&h);
}

/* The loader reads a file where it is mapped: one cut short while it is
 * read (here the moment it is mapped, through the tests' hook) faults
 * past its new end, and the load ends with an error (exit 3), not a
 * crash. Before the fault guard, this test died with SIGBUS. */
static const char *cut_path;

static void cut_now(int fd)
{
    (void)fd;
    if (truncate(cut_path, 1 << 20) != 0)
        abort();
}

static void test_jsonl_cut_short(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/cut.jsonl", tmp);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    for (int i = 0; i < 300000; i++) /* ~19 MB: past a chunk of the mapping */
        fprintf(f, "{\"t\":%d,\"w\":%d,\"type\":\"acquire_invoke\",\"res\":\"r0\","
                "\"attempt\":1}\n", i * 10, i % 4);
    REQUIRE(fclose(f) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    cut_path = path;
    jl_mapped_hook = cut_now;
    int rc = history_load_jsonl(path, &h, &err);
    jl_mapped_hook = NULL;
    CHECKF(rc == LS_EIO && strstr(err.msg, "got shorter while it was read") != NULL,
           "rc %d: %s", rc, err.msg);
    history_free(&h);
}

/* A file that ends on a page's last byte, with or without its last
 * line's newline, in a shape the loader knows or not: read to the end
 * and no further (the mapping has no byte past it). */
static void test_jsonl_page_end(void)
{
    const char *shaped = "{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n";
    for (int nl = 0; nl <= 1; nl++)
        for (int same = 0; same <= 1; same++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/page%d%d.jsonl", tmp, nl, same);
            struct strbuf sb = STRBUF_INIT;
            for (int i = 0; i < 100; i++)
                sb_puts(&sb, shaped);
            /* the last line: the shape of those before, or other keys' order */
            const char *line = same ? "{\"t\":7,\"w\":0,\"type\":\"exit\",\"res\":\"r0\"}"
                                    : "{\"w\":0,\"t\":7,\"res\":\"r0\",\"type\":\"exit\"}";
            size_t n = strlen(line);
            size_t pad = 8192 - sb.len - n - (size_t)nl; /* spaces before the last line */
            for (size_t k = 0; k < pad; k++)
                sb_puts(&sb, k + 1 == pad ? "\n" : " ");
            sb_puts(&sb, line);
            if (nl)
                sb_puts(&sb, "\n");
            REQUIRE(sb.len == 8192);
            REQUIRE(write_file(path, sb.buf) == 0);
            sb_free(&sb);
            struct history h;
            struct ls_err err = {0, ""};
            int rc = history_load_jsonl(path, &h, &err);
            CHECKF(rc == 0, "nl %d same %d: %s", nl, same, err.msg);
            CHECK(rc != 0 || (h.nworkers == 1 && h.w[0].n == 101 && hist_last_rec(&h.w[0])->t == 7));
            history_free(&h);
        }
}

/* hist_reader_first_at against a walk of the times written, for one
 * worker's stream of every kind (records in memory, packed into the JSONL
 * spill, a run's log in two epochs), times spread evenly, in bursts, all
 * equal, or with huge gaps: every at below, at, between and above them. */
static size_t first_at_walk(const int64_t *t, size_t n, int64_t at)
{
    size_t lo = 0, hi = n; /* halving the array in memory: no reader */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void first_at_check(struct history *h, const int64_t *t, size_t n, struct rng *g,
                           const char *what)
{
    REQUIRE(h->nworkers == 1 && h->w[0].n == n);
    struct hist_reader rd;
    int bad = 0;
    for (size_t k = 0; k < 3 * n + 40 && k < 3000 && bad < 3; k++) {
        int64_t at;
        switch (k < 4 ? (int)k : (int)rng_below(g, 4)) {
        case 0: at = t[0] - 1; break;
        case 1: at = t[n - 1] + 1; break;
        case 2: at = t[rng_below(g, n)]; break;
        default: at = t[rng_below(g, n)] + (int64_t)rng_below(g, 3) - 1; break;
        }
        hist_reader_init(&rd, &h->w[0]);
        size_t got = hist_reader_first_at(&rd, at), want = first_at_walk(t, n, at);
        hist_reader_done(&rd);
        if (got != want)
            bad++;
        CHECKF(got == want, "%s: %zu records, at %lld: %zu, not %zu", what, n, (long long)at, got,
               want);
    }
}

static void test_first_at(void)
{
    static const size_t sizes[] = {1, 2, 127, 128, 129, 300, 5000, 40000};
    struct rng g;
    rng_seed(&g, 19, 0);
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (int shape = 0; shape < 5; shape++) {
            size_t n = sizes[si];
            int64_t *t = xmalloc(n * sizeof(*t));
            /* shape 4: near the largest time a history has (10^18), where
             * times 128 ns apart are one double (a guess divided 0 by 0) */
            int64_t x = shape == 4 ? 999999999999900000 : 1000;
            for (size_t i = 0; i < n; i++) {
                switch (shape) {
                case 0: x += 1000 + (int64_t)rng_below(&g, 200); break; /* even */
                case 1: x += rng_below(&g, 50) ? (int64_t)rng_below(&g, 3) : 5000000; break;
                case 2: break;                                          /* all equal */
                case 3: x += rng_below(&g, 100) ? 1 : (int64_t)1 << 40; break; /* gaps */
                default: x += (int64_t)rng_below(&g, 2); break;          /* near 10^18 */
                }
                t[i] = x;
            }
            char path[4096], what[64];
            struct strbuf sb = STRBUF_INIT;
            for (size_t i = 0; i < n; i++)
                sb_printf(&sb, "{\"t\":%lld,\"w\":3,\"type\":\"enter\",\"res\":\"r0\"}\n",
                          (long long)t[i]);
            snprintf(path, sizeof(path), "%s/first_at.jsonl", tmp);
            REQUIRE(write_file(path, sb.buf) == 0);
            sb_free(&sb);
            for (int packed = 0; packed <= 1; packed++) {
                if (packed)
                    setenv("LS_JSONL_MEM_BOUND", "4096", 1); /* spilled: a packed stream */
                struct history h;
                struct ls_err err = {0, ""};
                int rc = history_load_jsonl(path, &h, &err);
                unsetenv("LS_JSONL_MEM_BOUND");
                CHECKF(rc == 0, "%s", err.msg);
                snprintf(what, sizeof(what), "shape %d, %s", shape, packed ? "packed" : "jsonl");
                if (rc == 0)
                    first_at_check(&h, t, n, &g, what);
                history_free(&h);
            }
            /* a run's log, in two epochs (the stream's two runs) */
            char dir[4096];
            snprintf(dir, sizeof(dir), "%s/first_at_run", tmp);
            REQUIRE(make_rundir(dir, "0") == 0);
            size_t half = n / 2;
            for (uint32_t e = 0; e < 2; e++) {
                char lp[8192];
                evlog_path(lp, sizeof(lp), dir, 3, e);
                struct evlog_writer *w;
                struct ls_err err = {0, ""};
                REQUIRE(evlog_open(&w, lp, 3, e, 0, 0, &err) == 0);
                for (size_t i = e ? half : 0; i < (e ? n : half); i++) {
                    struct ev_rec r;
                    memset(&r, 0, sizeof(r));
                    r.t = t[i];
                    r.type = EV_ENTER;
                    evlog_append(w, &r);
                }
                REQUIRE(evlog_close(w, &err) == 0);
            }
            struct history h;
            struct ls_err err = {0, ""};
            int rc = history_load_rundir(dir, &h, &err);
            CHECKF(rc == 0, "%s", err.msg);
            snprintf(what, sizeof(what), "shape %d, run", shape);
            if (rc == 0)
                first_at_check(&h, t, n, &g, what);
            history_free(&h);
            t_rmdir(dir);
            free(t);
        }
}

/* A history with a stale-holder and a lock-broken overlap, a crash, a
 * stuck resource and near misses: every checker has something to say. */
static const char *busy_history =
    "{\"t\":0,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"r0\",\"attempt\":1}\n"
    "{\"t\":1000000,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"aa\",\"fence\":1,"
    "\"valid_until\":100000000}\n"
    "{\"t\":2000000,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n"
    "{\"t\":3000000,\"w\":0,\"type\":\"store_read\",\"res\":\"r0\",\"fence\":1,\"fenced\":true,"
    "\"counter\":0,\"accepted\":true}\n"
    "{\"t\":300000000,\"w\":0,\"type\":\"exit\",\"res\":\"r0\"}\n"
    "{\"t\":300000001,\"w\":0,\"type\":\"release_invoke\",\"res\":\"r0\"}\n"
    "{\"t\":300500000,\"w\":0,\"type\":\"release_fail\",\"res\":\"r0\",\"err\":\"connection\"}\n"
    "{\"t\":140000000,\"w\":1,\"type\":\"acquire_invoke\",\"res\":\"r0\",\"attempt\":1}\n"
    "{\"t\":150000000,\"w\":1,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"bb\",\"fence\":2,"
    "\"valid_until\":250000000}\n"
    "{\"t\":151000000,\"w\":1,\"type\":\"enter\",\"res\":\"r0\"}\n"
    "{\"t\":170000000,\"w\":1,\"type\":\"exit\",\"res\":\"r0\"}\n"
    "{\"t\":160000000,\"w\":2,\"type\":\"acquire_invoke\",\"res\":\"r0\",\"attempt\":1}\n"
    "{\"t\":161000000,\"w\":2,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"cc\",\"fence\":3,"
    "\"valid_until\":null}\n"
    "{\"t\":161500000,\"w\":2,\"type\":\"enter\",\"res\":\"r0\"}\n"
    "{\"t\":162000000,\"w\":2,\"type\":\"exit\",\"res\":\"r0\"}\n"
    "{\"t\":5000000,\"w\":3,\"type\":\"acquire_invoke\",\"res\":\"r1\",\"attempt\":1}\n"
    "{\"t\":6000000,\"w\":3,\"type\":\"acquire_ok\",\"res\":\"r1\",\"token\":\"dd\",\"fence\":null,"
    "\"valid_until\":null}\n"
    "{\"t\":7000000,\"w\":3,\"type\":\"enter\",\"res\":\"r1\"}\n"
    "{\"t\":8000000,\"w\":3,\"type\":\"crash\"}\n"
    "{\"t\":9000000,\"w\":4,\"type\":\"acquire_invoke\",\"res\":\"r1\",\"attempt\":1}\n"
    "{\"t\":9500000,\"w\":4,\"type\":\"acquire_busy\",\"res\":\"r1\"}\n"
    "{\"t\":3000000000,\"w\":4,\"type\":\"acquire_invoke\",\"res\":\"r1\",\"attempt\":2}\n"
    "{\"t\":3000500000,\"w\":4,\"type\":\"acquire_busy\",\"res\":\"r1\"}\n";

static void test_export_roundtrip(void)
{
    char path[4096], out1[4096], out2[4096];
    snprintf(path, sizeof(path), "%s/busy.jsonl", tmp);
    snprintf(out1, sizeof(out1), "%s/export1.jsonl", tmp);
    snprintf(out2, sizeof(out2), "%s/export2.jsonl", tmp);
    REQUIRE(write_file(path, busy_history) == 0);
    struct history h1, h2;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_jsonl(path, &h1, &err) == 0);
    FILE *f = fopen(out1, "w");
    REQUIRE(f != NULL);
    history_export_jsonl(&h1, f);
    fclose(f);
    REQUIRE(history_load_jsonl(out1, &h2, &err) == 0);
    f = fopen(out2, "w");
    REQUIRE(f != NULL);
    history_export_jsonl(&h2, f);
    fclose(f);

    struct check_params p;
    check_params_from(&h1, &p);
    struct json *r1 = check_run(&h1, &p);
    struct json *r2 = check_run(&h2, &p);
    CHECK_STR(gets_(r1, "checks.mutex.verdict"), "invalid");
    CHECK_INT(geti(r1, "checks.mutex.violations"), 2);
    CHECK_INT(geti(r1, "checks.mutex.by_class.stale_holder"), 1);
    CHECK_INT(geti(r1, "checks.mutex.by_class.lock_broken"), 1);
    CHECK_STR(gets_(r1, "checks.liveness.verdict"), "invalid");
    CHECK_STR(gets_(r1, "checks.liveness.stuck.0.res"), "r1");
    CHECK_INT(geti(r1, "counts.events"), 23);
    CHECK_INT(geti(r1, "counts.release_failed"), 1);

    /* The round trip gives the same answers. */
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    json_write(&a, json_obj_get(r1, "checks"), -1);
    json_write(&b, json_obj_get(r2, "checks"), -1);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    sb_reset(&a);
    sb_reset(&b);
    json_write(&a, json_obj_get(r1, "violations"), -1);
    json_write(&b, json_obj_get(r2, "violations"), -1);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    sb_reset(&a);
    sb_reset(&b);
    json_write(&a, json_obj_get(r1, "counts"), -1);
    json_write(&b, json_obj_get(r2, "counts"), -1);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    CHECK_STR(gets_(r1, "verdict_checks"), gets_(r2, "verdict_checks"));

    /* export(load(export(h))) == export(h), and it is time ordered. */
    char *t1, *t2;
    size_t n1, n2;
    FILE *f1 = fopen(out1, "r"), *f2 = fopen(out2, "r");
    REQUIRE(f1 && f2);
    t1 = calloc(1, 65536);
    t2 = calloc(1, 65536);
    n1 = fread(t1, 1, 65535, f1);
    n2 = fread(t2, 1, 65535, f2);
    fclose(f1);
    fclose(f2);
    CHECK(n1 == n2 && memcmp(t1, t2, n1) == 0);
    CHECK(strncmp(t1, "{\"t\":0,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"r0\",\"attempt\":1}\n",
                  60) == 0);
    long long prev = -1;
    int ordered = 1;
    for (char *s = t1; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        long long t = strtoll(s + 5, NULL, 10);
        ordered &= t >= prev;
        prev = t;
    }
    CHECK(ordered);
    free(t1);
    free(t2);
    sb_free(&a);
    sb_free(&b);
    json_free(r1);
    json_free(r2);
    history_free(&h1);
    history_free(&h2);
}

/* ---- run directory ---- */

static void test_rundir(void)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof(dir), "%s/run1", tmp);
    REQUIRE(mkdirs(dir) == 0);

    struct history h;
    struct ls_err err = {0, ""};
    /* No run.json yet: not a run directory. */
    CHECK(history_load_rundir(dir, &h, &err) == LS_EINPUT);
    CHECK(strstr(err.msg, "not a lockstorm run directory") != NULL);
    history_free(&h);

    /* worker 0 holds r1 [2, 300] with a lease to 100 (paused past it);
     * worker 1 is granted r1 at 150, enters 151 and is killed at 170. */
    REQUIRE(write_worker(dir, 0, 1, 0, 1, 100, 2, 300, 1) == 0);
    REQUIRE(write_worker(dir, 1, 1, 140, 150, 250, 151, 0, 0) == 0);
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    struct ev_rec crash = rec(170, EV_CRASH, 0);
    REQUIRE(evlog_append_offline(path, &crash, &err) == 0);
    snprintf(path, sizeof(path), "%s/events/notes.txt", dir);
    REQUIRE(write_file(path, "not a log\n") == 0);

    snprintf(path, sizeof(path), "%s/run.json", dir);
    REQUIRE(write_file(path,
        "{\"format\":\"lockstorm-run\",\"version\":1,\"start_real_ns\":1,\"start_mono_ns\":2,"
        "\"started_at\":\"2026-11-22T05:31:22Z\",\"ended_at\":\"2026-11-22T05:31:23Z\","
        "\"end_ns\":400000000,\"duration_ns\":400000000,\"interrupted\":true,\"signal\":"
        "\"SIGINT\",\"state\":\"interrupted\",\"workers\":[{\"worker\":0,\"epoch\":0},"
        "{\"worker\":1,\"epoch\":0}],\"nodes\":[],\"storage\":null,"
        "\"leftover_keys\":[{\"res\":2,\"node\":0,\"pttl_ms\":-1}]}\n") == 0);
    snprintf(path, sizeof(path), "%s/faults.jsonl", dir);
    REQUIRE(write_file(path,
        "{\"id\":0,\"event\":\"start\",\"t_ns\":50000000,\"kind\":\"pause\",\"target\":"
        "\"holder\",\"worker\":0,\"node\":-1,\"pids\":[1],\"params\":{\"duration_ms\":200}}\n"
        "{\"id\":0,\"event\":\"end\",\"t_ns\":250000000}\n"
        "{\"id\":1,\"event\":\"skipped\",\"t_ns\":60000000,\"kind\":\"pause\",\"target\":"
        "\"holder\",\"reason\":\"no worker holds a lock\"}\n"
        "{\"id\":2,\"event\":\"start\",\"t_ns\":350000000,\"kind\":\"latency\",\"target\":"
        "\"node:0\",\"worker\":null,\"node\":0}\n"
        "garbage\n") == 0);
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    REQUIRE(write_file(path, "{\"res\":\"r0\",\"plain\":0,\"fenced\":0,\"fence_hwm\":0}\n"
                         "{\"res\":\"r1\",\"plain\":1,\"fenced\":0,\"fence_hwm\":2}\n") == 0);

    ls_err_clear(&err);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.from_rundir, 1);
    CHECK_INT(h.interrupted, 1);
    CHECK_INT(h.nworkers, 2);
    CHECK_INT(h.w[0].complete, 1);
    CHECK_INT(h.w[1].complete, 0);
    CHECK_INT(h.w[1].n, 5);
    CHECK_INT(h.end, 400000000);
    CHECK_INT(h.nres, 3); /* r0 (storage), r1 (events), r2 (leftover key) */
    CHECK_STR(h.res_names[2], "r2");
    CHECK_INT(h.nfaults, 3);
    CHECK_INT(h.faults[0].end, 250000000);
    CHECK_INT(h.faults[1].skipped, 1);
    CHECK_INT(h.faults[2].end, 400000000); /* never ended: run end */
    CHECK_INT(h.faults[2].worker, -1);
    CHECK_INT(h.have_storage, 1);
    CHECK(h.have_storage && h.storage[1].present && h.storage[1].plain == 1);
    CHECK_INT(h.nleftover, 1);
    CHECK(has_warning_h(&h, "workload.yaml missing"));
    CHECK(has_warning_h(&h, "notes.txt"));
    CHECK(has_warning_h(&h, "faults.jsonl:5"));

    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    CHECK_STR(gets_(r, "checks.mutex.verdict"), "invalid");
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_STR(gets_(r, "violations.0.class"), "stale-holder");
    CHECK_STR(gets_(r, "violations.0.resource"), "r1");
    CHECK_INT(geti(r, "violations.0.holders.1.crashed"), 1);
    /* overlap [151, 170]: the pause (50..250) is active, the skipped one and
     * the latency fault (from 350) are not. */
    const struct json *fl = json_path(r, "violations.0.faults");
    CHECK(fl && fl->n == 1 && fl->kids[0]->i == 0);
    CHECK_INT(geti(r, "faults.0.params.duration_ms"), 200);
    CHECK_INT(geti(r, "faults.1.skipped"), 1);
    CHECK_STR(gets_(r, "faults.1.reason"), "no worker holds a lock");
    /* plain: 1 accepted write (worker 1 died before writing), final 1. */
    CHECK_INT(geti(r, "checks.fencing.offered"), 1);
    CHECK_INT(geti(r, "checks.fencing.plain_lost_updates"), 0);
    CHECK_STR(gets_(r, "checks.fencing.verdict"), "valid");
    CHECK_STR(gets_(r, "checks.liveness.stuck.0.res"), "r2");
    CHECK_INT(geti(r, "per_worker.1.complete"), 0);
    CHECK_INT(geti(r, "counts.crashes"), 1);
    /* what the record lacks: no workload.yaml, a damaged faults.jsonl line;
     * worker 1's killed log (crash record, no close) and notes.txt are no gap */
    CHECK_INT(geti(r, "evidence.complete"), 0);
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    CHECK_INT(geti(r, "evidence.logs.expected"), 2);
    CHECK_INT(geti(r, "evidence.logs.found"), 2);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 0);
    CHECK(json_path(r, "evidence.gaps.2") == NULL);
    CHECK(strstr(gets_(r, "evidence.gaps.0"), "workload.yaml: missing") != NULL);
    CHECK(strstr(gets_(r, "evidence.gaps.1"), "faults.jsonl:5: damaged line") != NULL);
    CHECK_STR(gets_(r, "evidence.run_state"), "interrupted");
    CHECK(json_path(r, "evidence.run_id") && json_path(r, "evidence.run_id")->type == JSON_NULL);
    json_free(r);
    history_free(&h);

    /* A corrupt event log header is an error naming the file (one run.json
     * does not list is foreign: not read, a gap). */
    snprintf(path, sizeof(path), "%s/events/worker-002.bin", dir);
    REQUIRE(write_file(path, "this is not an event log, it is far too short\n") == 0);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.nworkers, 2);
    CHECK(h.ev && h.ev->foreign == 1);
    history_free(&h);
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    REQUIRE(write_file(path, "this is not an event log, it is far too short\n") == 0);
    ls_err_clear(&err);
    CHECK(history_load_rundir(dir, &h, &err) == LS_ECORRUPT);
    CHECK(strstr(err.msg, "worker-001.bin") != NULL);
    history_free(&h);
}

/* With a workload.yaml the resources and check parameters come from it. */
static void test_rundir_workload(void)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof(dir), "%s/run2", tmp);
    REQUIRE(mkdirs(dir) == 0);
    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    REQUIRE(write_file(path,
        "name: t\nseed: 1\nduration: 1s\n"
        "lock: {impl: redis-single, ttl: 300ms, fencing: false}\n"
        "workers: {count: 2, resources: 4}\n"
        "check: {near_miss: 5ms, stuck_after: 3s}\n") == 0);
    snprintf(path, sizeof(path), "%s/run.json", dir);
    REQUIRE(write_file(path, "{\"format\":\"lockstorm-run\",\"version\":1,\"end_ns\":1000000000,"
                         "\"state\":\"finished\",\"workers\":[{\"worker\":0,\"epoch\":0},"
                         "{\"worker\":1,\"epoch\":0}],"
                         "\"interrupted\":false,\"leftover_keys\":[]}\n") == 0);
    snprintf(path, sizeof(path), "%s/faults.jsonl", dir);
    REQUIRE(write_file(path, "") == 0);
    REQUIRE(write_worker(dir, 0, 1, 0, 1, 301, 2, 50, 1) == 0);
    REQUIRE(write_worker(dir, 1, 1, 40, 52, 352, 53, 60, 1) == 0); /* 3 ms after: near miss */
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    REQUIRE(write_file(path, "{\"res\":\"r1\",\"plain\":2}\n") == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int rc = history_load_rundir(dir, &h, &err);
    CHECKF(rc == 0, "%s", err.msg);
    REQUIRE(rc == 0);
    CHECKF(h.meta != NULL, "%s", h.nwarnings ? h.warnings[0] : "");
    CHECK_INT(h.nres, 4);
    CHECK_INT(h.interrupted, 0);
    struct check_params p;
    check_params_from(&h, &p);
    CHECK_INT(p.near_miss, 5000000);
    CHECK_INT(p.stuck_after, 3000000000LL);
    CHECK_INT(p.ttl, 300000000);
    CHECK_INT(p.fencing_requested, 0);
    struct json *r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.near_misses"), 1);
    CHECK_INT(geti(r, "checks.fencing.offered"), 0); /* fences seen, but not requested */
    CHECK_INT(geti(r, "checks.fencing.plain_lost_updates"), 0);
    CHECK_STR(gets_(r, "checks.fencing.verdict"), "valid");
    CHECK_STR(gets_(r, "verdict_checks"), "valid");
    CHECK_INT(geti(r, "evidence.complete"), 1); /* a run directory of before run ids */
    json_free(r);
    history_free(&h);
}

/* What a pass delivered to its consumer. */
struct seen {
    int wi[64];
    struct ev_rec r[64];
    int n, ended;
};

static void seen_event(void *st, int wi, const struct ev_rec *r)
{
    struct seen *s = st;
    if (s->n < 64) {
        s->wi[s->n] = wi;
        s->r[s->n++] = *r;
    }
}

static void seen_end(void *st)
{
    ((struct seen *)st)->ended = 1;
}

static const struct pass_ops seen_ops = {"seen", 0, seen_event, NULL, seen_end, 0};

/* Worker 0 ran three epochs: the first killed with no crash record, the
 * second killed with its crash record appended by the harness, the third
 * closed. Worker 1's hold of r0 overlaps the third epoch's. */
static void test_epoch_stream(void)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof(dir), "%s/run-epochs", tmp);
    REQUIRE(make_rundir(dir, "100000000") == 0);
    static const int hold[] = {EV_ACQUIRE_INVOKE, EV_ACQUIRE_OK, EV_ENTER, EV_STORE_READ,
                               EV_EXIT, EV_RELEASE_INVOKE, EV_RELEASE_OK};
    static const int64_t t0[] = {1, 2, 3, 4}, t1[] = {10, 11, 12}, t2[] = {20, 21, 22, 23, 24,
                                                                         25, 26};
    REQUIRE(write_epoch_log(dir, 0, 0, t0, hold, 4, 0) == 0);
    REQUIRE(write_epoch_log(dir, 0, 1, t1, hold, 3, 0) == 0);
    evlog_path(path, sizeof(path), dir, 0, 1);
    struct ev_rec cr = rec(13, EV_CRASH, 0);
    struct ls_err err = {0, ""};
    REQUIRE(evlog_append_offline(path, &cr, &err) == 0);
    REQUIRE(write_epoch_log(dir, 0, 2, t2, hold, 7, 1) == 0);
    REQUIRE(write_worker(dir, 1, 0, 21, 22, 60, 23, 30, 1) == 0);

    struct history h;
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    REQUIRE(h.nworkers == 2);
    const struct hist_worker *w = &h.w[0];
    /* epoch 0, the crash record made up for it, epoch 1 (with its own), epoch 2 */
    static const int64_t want_t[] = {1, 2, 3, 4, 4, 10, 11, 12, 13, 20, 21, 22, 23, 24, 25, 26};
    static const int want_seq[] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6};
    size_t nwant = sizeof(want_t) / sizeof(want_t[0]);
    REQUIRE(w->n == nwant);
    CHECK_INT(w->nseg, 4);
    CHECK(w->ev == NULL && w->owned == NULL); /* mapped, never copied */
    CHECK_INT(w->unverified, 1);              /* the closed third epoch: checked by the pass */
    CHECK_INT(w->complete, 0);                /* the first epoch was cut */
    CHECK(has_warning_h(&h, "worker 0 epoch 0: no crash record before the restart"));
    CHECK(!has_warning_h(&h, "worker 0 epoch 1"));
    for (size_t i = 0; i < nwant; i++) {
        const struct ev_rec *r = hist_rec(w, i);
        CHECKF(r->t == want_t[i] * 1000000 && r->seq == (uint32_t)want_seq[i],
               "record %zu: t %lld seq %u", i, (long long)r->t, r->seq);
        CHECK((r->type == EV_CRASH) == (i == 4 || i == 8));
    }
    /* the last record and single records read without the mapping where
     * a log is kept open (the third epoch, worker 1's log): the same
     * records; the first two epochs (not closed) are read in place */
    for (int wi = 0; wi < 2; wi++) {
        const struct hist_worker *x = &h.w[wi];
        CHECKF(memcmp(hist_last_rec(x), hist_rec(x, x->n - 1), sizeof(struct ev_rec)) == 0,
               "worker %d: hist_last_rec is not its last record", wi);
        struct hist_reader rd;
        hist_reader_init(&rd, x);
        for (size_t j = 0; j < 3 * x->n; j++) { /* forwards, backwards, then a stride */
            size_t i = j < x->n ? j : j < 2 * x->n ? 2 * x->n - 1 - j : (j * 7) % x->n;
            CHECKF(memcmp(hist_reader_rec(&rd, i), hist_rec(x, i), sizeof(struct ev_rec)) == 0,
                   "worker %d: reader record %zu differs", wi, i);
        }
        CHECKF(rd.mapped == (wi == 0), "worker %d: read in place %d", wi, rd.mapped);
        hist_reader_done(&rd);
    }
    CHECK(h.w[1].file.has_fd && h.w[1].file.has_last); /* else the above tests nothing */
    struct history hx; /* a log cut short in memory: its last record is no longer the copy */
    REQUIRE(history_load_rundir(dir, &hx, &err) == 0);
    REQUIRE(hx.w[1].n > 2 && hx.w[1].file.has_last);
    history_cut(&hx, 1, hx.w[1].n - 2);
    CHECK(hist_last_rec(&hx.w[1]) == hist_rec(&hx.w[1], hx.w[1].n - 1));
    history_free(&hx);

    struct seen s;
    memset(&s, 0, sizeof(s));
    struct pass_consumer c = {&seen_ops, &s, 0};
    REQUIRE(pass_run(&h, &c, 1) == 0);
    CHECK(s.ended);
    CHECK_INT(s.n, (int)nwant + 8); /* worker 1's eight too */
    size_t k = 0;
    for (int i = 0; i < s.n; i++) {
        if (s.wi[i] != 0)
            continue;
        CHECKF(k < nwant && memcmp(&s.r[i], hist_rec(w, k), sizeof(s.r[i])) == 0,
               "pass record %d is not stream record %zu", i, k);
        k++;
    }
    CHECK_INT(k, nwant);
    CHECK_INT(w->unverified, 0);

    /* the verdicts: the first epoch's hold ends at its last record (4 ms),
     * the third one's (22-24 ms) overlaps worker 1's (23-30 ms) */
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(geti(r, "counts.events"), (int64_t)nwant + 8);
    CHECK_INT(geti(r, "counts.crashes"), 2);
    CHECK_INT(geti(r, "counts.grants"), 4);

    /* the same through the JSONL export (one owned array per worker, as
     * the loader built restarted workers before): the same verdicts */
    char jl[8192];
    snprintf(jl, sizeof(jl), "%s/run-epochs.jsonl", tmp);
    REQUIRE(export_to(&h, jl) == 0);
    struct history hj;
    REQUIRE(history_load_jsonl(jl, &hj, &err) == 0);
    REQUIRE(hj.nworkers == 2 && hj.w[0].n == nwant);
    struct check_params pj;
    check_params_from(&hj, &pj);
    struct json *rj = check_run(&hj, &pj);
    static const char *const same[] = {"checks.mutex.verdict",
                                       "checks.mutex.violations", "counts.events",
                                       "counts.crashes", "counts.grants",
                                       "checks.liveness.holder_crashes"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        const struct json *a = json_path(r, same[i]), *b = json_path(rj, same[i]);
        CHECKF(a && b, "%s missing", same[i]);
        if (!a || !b)
            continue;
        struct strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;
        json_write(&sa, a, -1);
        json_write(&sb, b, -1);
        CHECKF(strcmp(sb_cstr(&sa), sb_cstr(&sb)) == 0,
               "%s: %s from the logs, %s from JSONL", same[i], sb_cstr(&sa), sb_cstr(&sb));
        sb_free(&sa);
        sb_free(&sb);
    }
    json_free(rj);
    history_free(&hj);

    /* over the mapping budget (HIST_MAX_MAPPED_LOGS, here 2 of 4 logs):
     * the epochs are copied and unmapped, the same stream and verdicts */
    setenv("LS_CHECK_MAX_MAPPED_LOGS", "2", 1);
    struct history hc;
    REQUIRE(history_load_rundir(dir, &hc, &err) == 0);
    unsetenv("LS_CHECK_MAX_MAPPED_LOGS");
    REQUIRE(hc.nworkers == 2 && hc.w[0].n == nwant);
    CHECK_INT(hc.w[0].nseg, 4);
    CHECK(hc.w[0].seg[0].own != NULL && hc.w[0].seg[0].file.map == NULL);
    for (size_t i = 0; i < nwant; i++)
        CHECKF(memcmp(hist_rec(&hc.w[0], i), hist_rec(w, i), sizeof(struct ev_rec)) == 0,
               "copied stream record %zu differs from the mapped one", i);
    struct check_params pc;
    check_params_from(&hc, &pc);
    struct json *rc = check_run(&hc, &pc);
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        const struct json *a = json_path(r, same[i]), *b = json_path(rc, same[i]);
        CHECKF(a && b && a->type == b->type, "%s missing or differs (copied epochs)", same[i]);
        if (a && b && a->type == JSON_NUM)
            CHECKF(a->d == b->d, "%s: %g mapped, %g copied", same[i], a->d, b->d);
    }
    CHECK_INT(hc.w[0].unverified, 0); /* the copied deferred epoch was checked by the pass */
    json_free(rc);
    history_free(&hc);
    json_free(r);
    history_free(&h);

    /* a damaged record in the deferred third epoch: found by the pass, the
     * history loaded again with every record checked, that epoch cut there */
    evlog_path(path, sizeof(path), dir, 0, 2);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x55\x55", 2, EVLOG_HEADER_SIZE + 3 * EVLOG_REC_SIZE + 40) == 2);
    close(fd);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[0].n, nwant);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(h.w[0].n, 9 + 3); /* epochs 0 and 1, then the third epoch's first three */
    CHECK_INT(hist_rec(&h.w[0], 11)->t, 22 * 1000000);
    CHECK(hist_last_rec(&h.w[0]) == hist_rec(&h.w[0], 11)); /* cut: not the log's last */
    CHECK(has_warning(r, "worker 0 epoch 2: event log has a torn tail"));
    json_free(r);
    history_free(&h);

    /* the deferred third epoch starting before the second ended: found by
     * the pass too, and the stream sorted (into one array) as before */
    static const int64_t t2early[] = {5, 6, 7, 8, 9, 25, 26};
    REQUIRE(unlink(path) == 0);
    REQUIRE(write_epoch_log(dir, 0, 2, t2early, hold, 7, 1) == 0);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[0].unverified, 1);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK(has_warning(r, "worker 0: events out of time order, sorted"));
    REQUIRE(h.w[0].n == nwant);
    CHECK(h.w[0].owned != NULL && h.w[0].seg == NULL);
    for (size_t i = 1; i < nwant; i++)
        CHECK(hist_rec(&h.w[0], i - 1)->t <= hist_rec(&h.w[0], i)->t);
    json_free(r);
    history_free(&h);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_jsonl_load);
    RUN(test_jsonl_errors);
    RUN(test_jsonl_cut_short);
    RUN(test_jsonl_page_end);
    RUN(test_first_at);
    RUN(test_export_roundtrip);
    RUN(test_rundir);
    RUN(test_rundir_workload);
    RUN(test_epoch_stream);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
