/*
 * test_history.c: loading histories. JSONL parsing (ordering, field
 * mapping, "FILE:LINE:" errors), the export -> JSONL -> check round trip
 * giving the same verdicts, and a run directory built from real binary
 * event logs (a killed worker with its crash record, faults, storage,
 * leftover keys) checked end to end without Redis; a restarted worker's
 * epochs read as one stream (its synthetic crash record included) by the
 * pass and by hist_rec.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/evidence.h"
#include "checkers/pass.h"
#include "model/evlog.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static char *tmp;

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || (v->type != JSON_NUM && v->type != JSON_BOOL))
        return -999999;
    return v->is_int || v->type == JSON_BOOL ? v->i : (int64_t)llround(v->d);
}

static const char *gets_(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "(none)";
}

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

static int mkdirs(const char *dir)
{
    char p[8192];
    snprintf(p, sizeof(p), "%s/events", dir);
    if (mkdir(dir, 0755) != 0 || mkdir(p, 0755) != 0)
        return -1;
    return 0;
}

/* `lockstorm log export` of h into the file at path. */
static int export_to(struct history *h, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    history_export_jsonl(h, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* A run directory with events/ and a run.json that ended at end_ns. */
static int make_rundir(const char *dir, const char *end_ns)
{
    char path[8192], text[256];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    snprintf(text, sizeof(text), "{\"format\":\"lockstorm-run\",\"version\":1,\"end_ns\":%s,"
             "\"interrupted\":false,\"leftover_keys\":[]}\n", end_ns);
    return mkdirs(dir) == 0 && write_file(path, text) == 0 ? 0 : -1;
}

/* Contract: a run directory tmp/stem that ran secs seconds, with a
 * workload of `workers` workers on one resource (a log left to the pass
 * names no resource at load: without the workload's, its records would be
 * bad, r0 unknown); dir its path. 0 or -1. */
static int rundir_workers(char *dir, size_t n, const char *stem, int secs, int workers)
{
    char path[8192], text[256], end[32];
    snprintf(dir, n, "%s/%s", tmp, stem);
    snprintf(end, sizeof(end), "%d000000000", secs);
    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    snprintf(text, sizeof(text),
             "name: t\nseed: 1\nduration: %ds\nlock: {impl: redis-single}\n"
             "workers: {count: %d, resources: 1}\n", secs, workers);
    return make_rundir(dir, end) == 0 && write_file(path, text) == 0 ? 0 : -1;
}

static struct ev_rec rec(int64_t t_ms, int type, int res)
{
    struct ev_rec r;
    memset(&r, 0, sizeof(r));
    r.t = t_ms * 1000000;
    r.type = (uint8_t)type;
    r.res = (uint16_t)res;
    return r;
}

/* A worker that gets killed writes from a child that dies: returns 1 in
 * the parent once the child ended (*rc 0 when it wrote its records, -1
 * otherwise), 0 in the child, which writes and _exits. */
static int dying_writer(int *rc)
{
    pid_t pid = fork();
    if (pid == 0)
        return 0;
    int status;
    *rc = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0 ? 0 : -1;
    return 1;
}

/* Worker log with one grant+hold of res (lease until vu ms); closed or
 * left open (killed: the caller appends a crash record). */
static int write_worker(const char *dir, int id, int res, int64_t inv, int64_t ok, int64_t vu,
                        int64_t enter, int64_t exit_, int close_it)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    int rc;
    if (!close_it && dying_writer(&rc))
        return rc;
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, 0, 0, 0, &err) != 0) {
        if (!close_it)
            _exit(1);
        return -1;
    }
    struct ev_rec r = rec(inv, EV_ACQUIRE_INVOKE, res);
    r.aux = 1;
    evlog_append(w, &r);
    r = rec(ok, EV_ACQUIRE_OK, res);
    r.valid_until = vu * 1000000;
    r.flags = EVF_FENCE;
    r.fence = (uint64_t)id + 1;
    snprintf(r.token, sizeof(r.token), "tok-%d", id);
    evlog_append(w, &r);
    r = rec(enter, EV_ENTER, res);
    evlog_append(w, &r);
    r = rec(enter + 1, EV_STORE_READ, res);
    r.flags = EVF_ACCEPTED;
    evlog_append(w, &r);
    if (!close_it)
        _exit(0); /* killed before exit: the log stays open */
    r = rec(exit_ - 1, EV_STORE_WRITE, res);
    r.flags = EVF_ACCEPTED;
    r.value = 1;
    evlog_append(w, &r);
    r = rec(exit_, EV_EXIT, res);
    evlog_append(w, &r);
    r = rec(exit_ + 1, EV_RELEASE_INVOKE, res);
    evlog_append(w, &r);
    r = rec(exit_ + 2, EV_RELEASE_OK, res);
    evlog_append(w, &r);
    return evlog_close(w, &err);
}

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

/* A cleanly closed log is checked record by record in the checkers' pass,
 * not at load (checkers/history.h "unverified"). A bad record in its
 * middle (corruption: crashes leave logs unclosed) makes the check load the
 * history again with every record checked first: the verdict and warnings
 * are those of checking everything at load. */
static int has_gap(const struct json *r, const char *needle)
{
    const struct json *g = json_path(r, "evidence.gaps");
    for (size_t i = 0; g && g->type == JSON_ARR && i < g->n; i++)
        if (g->kids[i]->type == JSON_STR && strstr(g->kids[i]->s, needle))
            return 1;
    return 0;
}

static int has_warning(const struct json *r, const char *needle)
{
    const struct json *w = json_obj_get(r, "warnings");
    for (size_t i = 0; w && w->type == JSON_ARR && i < w->n; i++)
        if (w->kids[i]->type == JSON_STR && strstr(w->kids[i]->s, needle))
            return 1;
    return 0;
}

static double numv(const struct json *v)
{
    return v->is_int ? (double)v->i : v->d;
}

/* Contract: worker id's closed log of the n records r in dir. 0 or -1. */
static int write_recs(const char *dir, int id, struct ev_rec *r, int n)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, 0, 0, 0, &err) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        evlog_append(w, &r[i]);
    return evlog_close(w, &err);
}

/* Contract: record k of worker id's log in dir damaged (its checksum no
 * longer matches; its time kept). */
static void damage_rec(const char *dir, int id, size_t k)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x55\x55", 2, (off_t)(EVLOG_HEADER_SIZE + k * EVLOG_REC_SIZE + 40)) == 2);
    close(fd);
}

/* Contract: dir's history loaded into *h (worker dw's log left to the
 * pass) and checked on jobs threads, listing `listed` violations, into *r;
 * with unreadable, run.json is away while it is checked, so that the logs
 * cannot be read again. */
static void check_cut(const char *dir, int dw, struct history *h, int unreadable, int jobs,
                      int listed, struct json **r)
{
    *r = NULL; /* (and h empty) when a REQUIRE below returns */
    memset(h, 0, sizeof(*h));
    char path[8192], saved[8192];
    struct ls_err err = {0, ""};
    snprintf(path, sizeof(path), "%s/run.json", dir);
    snprintf(saved, sizeof(saved), "%s/run.json.saved", dir);
    REQUIRE(history_load_rundir(dir, h, &err) == 0);
    CHECK_INT(h->w[dw].unverified, 1);
    if (unreadable)
        REQUIRE(rename(path, saved) == 0);
    struct check_params p;
    check_params_from(h, &p);
    p.max_violations = listed;
    p.jobs = jobs;
    p.par_min_events = 0;
    *r = check_run(h, &p);
    if (unreadable)
        REQUIRE(rename(saved, path) == 0);
}

/* The logs cannot be read again and one of them is damaged: the pass cuts
 * it at its last good record, and its worker's log ends at that record's
 * place in the merged order, not at the damaged record's (its own time,
 * later). Worker 0 holds r0 from 10 ms without a lease, its last good
 * record at 100, the damaged one (an exit) at 500, one more after it (a
 * damaged last record is found at load); worker 1 holds from 50
 * to 300, worker 2 from 60 to 70. So the hold of 0 ends at 100 (open), and
 * both violations (1 entering on 0; 2 on 0 and 1) end at the second latest
 * exit of their holds: 100. Ended at the damaged record's place, 0's hold
 * ended after 1's exit at 300 was heard, and a violation counted without
 * its holders (past the listed ones) ended at 300. */
static void test_rundir_cut_in_place(void)
{
    char dir[4096];
    REQUIRE(rundir_workers(dir, sizeof(dir), "cutplace", 1, 3) == 0);
    struct ev_rec a[5] = {rec(5, EV_ACQUIRE_OK, 0), rec(10, EV_ENTER, 0),
                          rec(100, EV_STORE_READ, 0), rec(500, EV_EXIT, 0),
                          rec(510, EV_RELEASE_INVOKE, 0)}; /* a valid last record: the log
                                                              is left to the pass */
    a[0].flags = EVF_NO_LEASE;
    struct ev_rec b[3] = {rec(40, EV_ACQUIRE_OK, 0), rec(50, EV_ENTER, 0), rec(300, EV_EXIT, 0)};
    struct ev_rec c[3] = {rec(55, EV_ACQUIRE_OK, 0), rec(60, EV_ENTER, 0), rec(70, EV_EXIT, 0)};
    b[0].valid_until = c[0].valid_until = 1000 * 1000000LL;
    REQUIRE(write_recs(dir, 0, a, 5) == 0 && write_recs(dir, 1, b, 3) == 0 &&
            write_recs(dir, 2, c, 3) == 0);
    damage_rec(dir, 0, 3);
    for (int listed = 0; listed <= 2; listed++)
        for (int jobs = 1; jobs <= 2; jobs++) {
            struct history h;
            struct json *r;
            check_cut(dir, 0, &h, 1, jobs, listed, &r);
            if (!r) {
                history_free(&h);
                return;
            }
            CHECK_INT(h.w[0].n, 3);
            CHECK(has_warning(r, "reading them again failed"));
            CHECKF(geti(r, "checks.mutex.violations") == 2 && geti(r, "checks.mutex.incidents") == 1,
                   "listed %d, %d threads: %lld violations, %lld incidents", listed, jobs,
                   (long long)geti(r, "checks.mutex.violations"),
                   (long long)geti(r, "checks.mutex.incidents"));
            const struct json *e = json_path(r, "incidents.0.end_ms");
            CHECKF(listed == 0 || (e && e->type == JSON_NUM && fabs(numv(e) - 100) < 1e-9),
                   "listed %d, %d threads: the incident ends at %g ms", listed, jobs,
                   e && e->type == JSON_NUM ? numv(e) : -1.0);
            if (listed > 0) {
                const struct json *ov = json_path(r, "violations.0.overlap_ms");
                CHECKF(ov && ov->type == JSON_NUM && fabs(numv(ov) - 50) < 1e-9,
                       "listed %d: the first overlap lasts %g ms", listed,
                       ov && ov->type == JSON_NUM ? numv(ov) : -1.0);
            }
            json_free(r);
            history_free(&h);
        }
}

/* The same when the damaged record is a log's first: the log has no good
 * record and ends before any record is taken. Worker 1's first record (at
 * 50 ms) is damaged; worker 2 exits at 50, the instant worker 0 enters:
 * touching, no violation. Ended at the damaged record's time, worker 1's
 * log made the checker judge the entries at 50 before worker 2's exit at
 * 50 came: a violation. */
static void test_rundir_cut_first(void)
{
    char dir[4096];
    REQUIRE(rundir_workers(dir, sizeof(dir), "cutfirst", 1, 3) == 0);
    struct ev_rec a[3] = {rec(40, EV_ACQUIRE_OK, 0), rec(50, EV_ENTER, 0), rec(60, EV_EXIT, 0)};
    struct ev_rec b[2] = {rec(50, EV_STORE_READ, 0), rec(70, EV_STORE_READ, 0)};
    struct ev_rec c[3] = {rec(10, EV_ACQUIRE_OK, 0), rec(20, EV_ENTER, 0), rec(50, EV_EXIT, 0)};
    a[0].valid_until = c[0].valid_until = 1000 * 1000000LL;
    REQUIRE(write_recs(dir, 0, a, 3) == 0 && write_recs(dir, 1, b, 2) == 0 &&
            write_recs(dir, 2, c, 3) == 0);
    damage_rec(dir, 1, 0);
    for (int again = 0; again <= 1; again++) /* read again: it fails, or not */
        for (int jobs = 1; jobs <= 3; jobs++) {
            struct history h;
            struct json *r;
            check_cut(dir, 1, &h, !again, jobs, 50, &r);
            if (!r) {
                history_free(&h);
                return;
            }
            CHECKF(geti(r, "checks.mutex.violations") == 0 && h.w[1].n == 0,
                   "read again %s, %d threads: %lld violations, worker 1 kept %zu records",
                   again ? "fine" : "failed", jobs, (long long)geti(r, "checks.mutex.violations"),
                   (size_t)h.w[1].n);
            json_free(r);
            history_free(&h);
        }
}

static void test_rundir_deferred(void)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof(dir), "%s/run3", tmp);
    REQUIRE(make_rundir(dir, "1000000000") == 0);
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    REQUIRE(write_file(path, "{\"res\":\"r0\",\"plain\":0}\n{\"res\":\"r1\",\"plain\":2}\n") == 0);
    /* two overlapping holds of r1: worker 1 enters at 53 while 0 holds to 300 */
    REQUIRE(write_worker(dir, 0, 1, 0, 1, 301, 2, 300, 1) == 0);
    REQUIRE(write_worker(dir, 1, 1, 40, 52, 352, 53, 60, 1) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int fds = t_open_fds();
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    /* each closed log keeps its file open for the pass to pread (the
     * history's own: history_free closes them) */
    CHECK(h.w[0].file.has_fd && h.w[1].file.has_fd);
    CHECK_INT(t_open_fds(), fds + 2);
    size_t full = h.w[1].n;
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    CHECK_INT(h.w[1].unverified, 0); /* the pass checked every record */
    CHECK_INT(h.w[1].n, full);
    json_free(r);
    history_free(&h);
    CHECK_INT(t_open_fds(), fds);
    /* LS_CHECK_READ=map: read through the mappings, nothing kept open, the
     * same findings */
    setenv("LS_CHECK_READ", "map", 1);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK(!h.w[0].file.has_fd && !h.w[1].file.has_fd);
    CHECK_INT(t_open_fds(), fds);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    json_free(r);
    history_free(&h);
    unsetenv("LS_CHECK_READ");

    /* worker 1's second record (its grant) no longer matches its checksum */
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x55\x55", 2, EVLOG_HEADER_SIZE + EVLOG_REC_SIZE + 40) == 2);
    close(fd);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    CHECK_INT(h.w[1].n, full); /* not read yet */
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(h.w[1].unverified, 0);
    CHECK_INT(h.w[1].n, 1); /* loaded again: its invoke only */
    CHECK_INT(h.w[1].complete, 0);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK(has_warning(r, "worker 1: event log has a torn tail"));
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1); /* found by the pass, after the load */
    CHECK(has_gap(r, "events/worker-001.bin: damaged after record 1"));
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    json_free(r);
    history_free(&h);

    /* the logs cannot be read again (run.json gone after the load): the
     * damaged log is cut at its bad record, nothing past it reaches a
     * checker, and the history says why */
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[1].unverified, 1);
    snprintf(path, sizeof(path), "%s/run.json", dir);
    char saved[8192];
    snprintf(saved, sizeof(saved), "%s/run.json.saved", dir);
    REQUIRE(rename(path, saved) == 0);
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(h.w[1].n, 1); /* cut before the damaged grant */
    CHECK_INT(h.w[1].complete, 0);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK(has_warning(r, "reading them again failed"));
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    CHECK(has_gap(r, "worker 1: event log damaged at record 1"));
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
    struct strbuf one = STRBUF_INIT;
    json_write(&one, r, -1);
    json_free(r);
    history_free(&h);
    /* the same on 2 and 3 threads (pass.h pass_run_jobs, forced on this
     * small history): the merging thread cuts while helpers read ahead, the same result */
    for (int jobs = 2; jobs <= 3; jobs++) {
        REQUIRE(rename(saved, path) == 0);
        REQUIRE(history_load_rundir(dir, &h, &err) == 0);
        REQUIRE(rename(path, saved) == 0);
        check_params_from(&h, &p);
        p.jobs = jobs;
        p.par_min_events = 0;
        r = check_run(&h, &p);
        CHECK_INT(h.w[1].n, 1);
        struct strbuf par = STRBUF_INIT;
        json_write(&par, r, -1);
        CHECKF(strcmp(one.buf, par.buf) == 0, "%d threads: %s\n1 thread: %s", jobs, par.buf,
               one.buf);
        sb_free(&par);
        json_free(r);
        history_free(&h);
    }
    sb_free(&one);
    REQUIRE(rename(saved, path) == 0);

    /* the same directory loaded for export is checked before export */
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    char out[8192];
    snprintf(out, sizeof(out), "%s/export.jsonl", tmp);
    REQUIRE(export_to(&h, out) == 0);
    CHECK_INT(h.w[1].n, 1);
    history_free(&h);
}

/* Log of worker id's epoch: the records at times t[0..n) (ms) of types
 * ty[0..n), resource 0, one grant; closed, or left open by a writer that
 * dies (a killed worker). */
static int write_epoch_log(const char *dir, int id, uint32_t epoch, const int64_t *t,
                           const int *ty, int n, int close_it)
{
    char path[8192];
    evlog_path(path, sizeof(path), dir, id, epoch);
    int rc;
    if (!close_it && dying_writer(&rc))
        return rc;
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, epoch, 0, 0, &err) != 0) {
        if (!close_it)
            _exit(1);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        struct ev_rec r = rec(t[i], ty[i], 0);
        if (ty[i] == EV_ACQUIRE_OK) {
            r.valid_until = (t[i] + 100) * 1000000;
            snprintf(r.token, sizeof(r.token), "w%d.e%u", id, epoch);
        }
        evlog_append(w, &r);
    }
    if (!close_it)
        _exit(0);
    return evlog_close(w, &err);
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
/* A closed log that shrinks after the load (the pass reads it with pread):
 * the records past its new end read as zeros, a bad record, and the
 * history is loaded again with the log as it is now, damaged. (This log
 * fits one page, where the mapping reads zeros past the end too; past the
 * last page of a longer one, reading the mapping would be SIGBUS.) */
/* Contract: a new run directory (its path in dir) whose worker 0 holds
 * r1 at 1-300 ms and worker 1 as write_worker's arguments say, both logs
 * closed; then damage(dir) when given; loaded into *h. 0 or -1. */
static int two_workers(char *dir, size_t n, const char *stem, int64_t inv, int64_t ok,
                       int64_t vu, int64_t enter, int64_t exit_, int (*damage)(const char *),
                       struct history *h)
{
    static int calls;
    snprintf(dir, n, "%s/%s-%d", tmp, stem, calls++);
    struct ls_err err = {0, ""};
    if (make_rundir(dir, "1000000000") != 0 || write_worker(dir, 0, 1, 0, 1, 301, 2, 300, 1) != 0 ||
        write_worker(dir, 1, 1, inv, ok, vu, enter, exit_, 1) != 0 || (damage && damage(dir) != 0))
        return -1;
    return history_load_rundir(dir, h, &err);
}

/* Contract: flip a byte of the token of worker 1's record 1. 0 or -1. */
static int flip_token(const char *dir)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    unsigned char x = 0;
    off_t at = EVLOG_HEADER_SIZE + 1 * EVLOG_REC_SIZE + offsetof(struct ev_rec, token);
    int rc = pread(fd, &x, 1, at) == 1 ? 0 : -1;
    x ^= 0x55;
    if (rc == 0 && pwrite(fd, &x, 1, at) != 1)
        rc = -1;
    close(fd);
    return rc;
}

/* jobs: the pass's threads (1: one; more: the helpers read the logs ahead) */
static void rundir_shrunk(int jobs)
{
    char dir[4096], path[8192];
    struct history h;
    REQUIRE(two_workers(dir, sizeof(dir), "run-shrunk", 40, 52, 352, 53, 60, NULL, &h) == 0);
    CHECK(h.w[1].file.has_fd && h.w[1].unverified);
    size_t full = h.w[1].n;
    snprintf(path, sizeof(path), "%s/events/worker-001.bin", dir);
    REQUIRE(truncate(path, EVLOG_HEADER_SIZE + EVLOG_REC_SIZE) == 0); /* its first record only */
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    p.par_min_events = 0;
    struct json *r = check_run(&h, &p);
    REQUIRE(r != NULL);
    CHECKF(full > 1 && h.w[1].n == 1, "jobs %d: worker 1: %zu records of %zu", jobs, h.w[1].n,
           full);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    json_free(r);
    history_free(&h);
}

/* A record whose checksum fails but whose time, number and type are
 * right (a byte of its token flipped): only the checksum finds it, and
 * with helpers it is theirs to find (the merging thread checks only the
 * time order of the chunks they read). */
static void damaged_token(int jobs, int wait)
{
    char dir[4096];
    struct history h;
    REQUIRE(two_workers(dir, sizeof(dir), "run-dmg", 400, 401, 800, 402, 500, flip_token, &h) == 0);
    CHECK(h.w[1].file.has_fd && h.w[1].unverified);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    p.par_min_events = 0;
    pass_test_ring_wait(wait);
    struct json *r = check_run(&h, &p);
    pass_test_ring_wait(0);
    REQUIRE(r != NULL);
    CHECKF(h.w[1].n == 1, "jobs %d wait %d: worker 1 has %zu records, not 1 (cut at the bad one)",
           jobs, wait, h.w[1].n);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    json_free(r);
    history_free(&h);
}

static void test_damaged_ahead(void)
{
    damaged_token(1, 0);
    damaged_token(2, 0);
    damaged_token(2, 1);
    damaged_token(3, 1);
}

/* One worker's 6,000 records come before any other's: the merging thread
 * takes chunk after chunk of that one log while the other 19 give nothing
 * back. A helper asleep until more chunks are given back than that ring
 * can give must still be woken when the merging thread waits for it (a
 * review found that it was not, with every chunk taken from the helpers;
 * whether the helper is asleep then is a matter of timing, and this test
 * did not see the hang before the fix; alarm() makes one a failure). The
 * pass must run through with every chunk read and checked by the helper:
 * no reload, the right counts. */
static void test_ring_wait_skewed(void)
{
    char dir[4096];
    enum { N0 = 6000, NW = 20 };
    REQUIRE(rundir_workers(dir, sizeof(dir), "run-skewed", 10, NW) == 0);
    static int64_t t[N0];
    static int ty[N0];
    for (int i = 0; i < N0; i++) {
        t[i] = 1 + i;
        ty[i] = i % 2 ? EV_ACQUIRE_BUSY : EV_ACQUIRE_INVOKE;
    }
    REQUIRE(write_epoch_log(dir, 0, 0, t, ty, N0, 1) == 0);
    for (int w = 1; w < NW; w++) {
        int64_t tw[2] = {8000 + w, 8001 + w};
        REQUIRE(write_epoch_log(dir, w, 0, tw, ty, 2, 1) == 0);
    }
    struct history h;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    REQUIRE(h.nworkers == NW);
    for (int w = 0; w < NW; w++)
        CHECKF(h.w[w].file.has_fd && h.w[w].unverified, "worker %d: has_fd %d unverified %d", w,
               h.w[w].file.has_fd, h.w[w].unverified);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = 2;
    p.par_min_events = 0;
    pass_test_ring_wait(1);
    alarm(60);
    struct json *r = check_run(&h, &p);
    alarm(0);
    pass_test_ring_wait(0);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "counts.attempts"), N0 / 2 + NW - 1);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 0);
    CHECK(h.memo == NULL || !h.memo->verify_all); /* the pass above ran through: no reload */
    json_free(r);
    history_free(&h);
}

/* pread made to fail (EIO) in one log (its device and inode) for the
 * bytes [from, to), while its mapping still reads them: what a second pass
 * over a history whose log became unreadable there meets. This test
 * program's pread stands in for the C library's (the pass's
 * hist_read_recs calls it); armed in one test only. */
static struct {
    int armed;
    dev_t dev;
    ino_t ino;
    off_t from, to;
    int hits;
} pread_fail;

static ssize_t pread_shim(int fd, void *buf, size_t n, off_t off)
{
    if (pread_fail.armed && off + (off_t)n > pread_fail.from && off < pread_fail.to) {
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_dev == pread_fail.dev && st.st_ino == pread_fail.ino) {
            pread_fail.hits++;
            if (off >= pread_fail.from) {
                errno = EIO;
                return -1;
            }
            n = (size_t)(pread_fail.from - off);
        }
    }
    return syscall(SYS_pread64, fd, buf, n, off);
}

/* (with _FILE_OFFSET_BITS=64 the headers name it pread64: so does this) */
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return pread_shim(fd, buf, n, off);
}

/* A second pass over a verified history whose log reads short with pread
 * at records 1,100 to 1,199 (in a chunk in the middle of a run: the pass
 * reads the rest of that run through the mapping, passing over its chunks
 * still to come): the same result on 1 thread and on 2 and 3, with the
 * consumers fed by a helper (all of them, and the merging thread making
 * the calls). A review found the helper's cursor reading the short
 * chunk's slot after the merging thread had given it back, when a helper
 * had refilled it with a chunk that read whole: records of the wrong
 * chunk, a different result from run to run. */
static void test_second_pass_short_read(void)
{
    char dir[4096], path[8192];
    REQUIRE(rundir_workers(dir, sizeof(dir), "run-shortread", 100, 2) == 0);
    enum { N = 6000 };
    static int64_t t[N];
    static int ty[N];
    for (int w = 0; w < 2; w++) { /* attempts refused after varied waits */
        for (int i = 0; i < N; i++) {
            t[i] = (i ? t[i - 1] : w) + 1 + (i * 7 + w) % 13;
            ty[i] = i % 2 ? EV_ACQUIRE_BUSY : EV_ACQUIRE_INVOKE;
        }
        REQUIRE(write_epoch_log(dir, w, 0, t, ty, N, 1) == 0);
    }
    struct history h;
    struct ls_err err = {0, ""};
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = 1;
    struct json *r = check_run(&h, &p); /* checks every record: the logs are verified */
    json_free(r);
    REQUIRE(h.w[0].file.has_fd && !h.w[0].unverified);
    struct stat st;
    evlog_path(path, sizeof(path), dir, 0, 0);
    REQUIRE(stat(path, &st) == 0);
    pread_fail.dev = st.st_dev;
    pread_fail.ino = st.st_ino;
    pread_fail.from = EVLOG_HEADER_SIZE + 1100 * EVLOG_REC_SIZE;
    pread_fail.to = EVLOG_HEADER_SIZE + 1200 * EVLOG_REC_SIZE;
    pread_fail.hits = 0;
    pread_fail.armed = 1;
    struct strbuf one = STRBUF_INIT;
    r = check_run(&h, &p);
    json_write(&one, r, -1);
    json_free(r);
    CHECK(pread_fail.hits > 0);
    /* wait: every chunk read by the helpers (pass_test_ring_wait), so the
     * short chunk's slot is refilled before the merging thread passes its
     * last chunk over, always (the review's case, which the free-running
     * pass meets by timing only) */
    const char *off[] = {"all", "main:all", ""};
    for (int wait = 0; wait <= 1; wait++)
        for (int k = 0; k < 3; k++)
            for (int jobs = 2; jobs <= 3; jobs++) {
                setenv("LS_CHECK_OFFLOAD", off[k], 1);
                check_params_from(&h, &p);
                p.jobs = jobs;
                p.par_min_events = 0;
                pread_fail.hits = 0;
                pass_test_ring_wait(wait);
                alarm(60);
                r = check_run(&h, &p);
                alarm(0);
                pass_test_ring_wait(0);
                struct strbuf par = STRBUF_INIT;
                json_write(&par, r, -1);
                CHECKF(strcmp(one.buf, par.buf) == 0 && pread_fail.hits > 0,
                       "LS_CHECK_OFFLOAD=%s, %d threads, wait %d (%d short reads): %.300s\n"
                       "1 thread: %.300s",
                       off[k], jobs, wait, pread_fail.hits, par.buf, one.buf);
                sb_free(&par);
                json_free(r);
            }
    unsetenv("LS_CHECK_OFFLOAD");
    pread_fail.armed = 0;
    sb_free(&one);
    history_free(&h);
}

static void test_rundir_shrunk(void)
{
    rundir_shrunk(1);
    rundir_shrunk(2);
    rundir_shrunk(3);
    pass_test_ring_wait(1); /* the helpers read and check every chunk */
    rundir_shrunk(2);
    rundir_shrunk(3);
    pass_test_ring_wait(0);
}

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
    RUN(test_export_roundtrip);
    RUN(test_rundir);
    RUN(test_rundir_workload);
    RUN(test_rundir_deferred);
    RUN(test_rundir_cut_in_place);
    RUN(test_rundir_cut_first);
    RUN(test_rundir_shrunk);
    RUN(test_damaged_ahead);
    RUN(test_ring_wait_skewed);
    RUN(test_second_pass_short_read);
    RUN(test_epoch_stream);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
