/*
 * test_evidence.c: a run directory's event logs compared with its run.json
 * (checkers/evidence.h), from real binary logs written by the log writer:
 * an intact run is complete; a missing log, a log of another run (its id, a
 * header naming another worker, a worker run.json does not list), a log
 * cut short of how its process ended, a failed or unfinished run and no
 * logs at all are gaps that make the checkers' verdict unknown; a killed
 * worker's crash record, a dead worker's torn last record and an old run
 * directory without run ids are not.
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/evidence.h"
#include "model/evlog.h"
#include "tests/unit/testing.h"

static char *tmp;
static int seq;

static const uint8_t RUN_A[EVLOG_RUN_ID_LEN] = {0xa1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                14, 15};
static const uint8_t RUN_B[EVLOG_RUN_ID_LEN] = {0xb2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                14, 15};
#define RUN_A_HEX "a10102030405060708090a0b0c0d0e0f"

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* How a test log ends. */
enum { CLOSED, KILLED_CRASH, KILLED_BARE, KILLED_TORN };

/* Contract: worker id's log of epoch in dir, naming run id (NULL: none),
 * one hold of r0 at base ms; ended as how says (a killed writer is a child
 * that dies; KILLED_CRASH then gets the harness's crash record, KILLED_TORN
 * a half-written record after its last). Returns 0 or -1. */
static int write_log(const char *dir, int id, uint32_t epoch, const uint8_t *run, int64_t base,
                     int how)
{
    char path[8192];
    evlog_path(path, sizeof(path), dir, id, epoch);
    pid_t pid = how == CLOSED ? 0 : fork();
    if (pid < 0)
        return -1;
    if (how == CLOSED || pid == 0) {
        struct evlog_writer *w;
        struct ls_err err = {0, ""};
        if (evlog_open_run(&w, path, (uint32_t)id, epoch, run, 0, 0, &err) != 0) {
            if (how != CLOSED)
                _exit(1);
            return -1;
        }
        static const int types[] = {EV_ACQUIRE_INVOKE, EV_ACQUIRE_OK, EV_ENTER, EV_EXIT,
                                    EV_RELEASE_INVOKE, EV_RELEASE_OK};
        for (int i = 0; i < 6; i++) {
            struct ev_rec r;
            memset(&r, 0, sizeof(r));
            r.t = (base + i) * 1000000;
            r.type = (uint8_t)types[i];
            if (types[i] == EV_ACQUIRE_OK) {
                r.valid_until = (base + 100) * 1000000;
                snprintf(r.token, sizeof(r.token), "w%d.e%u", id, epoch);
            }
            evlog_append(w, &r);
        }
        if (how != CLOSED)
            _exit(0); /* dies with its log open */
        return evlog_close(w, &err);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    if (how == KILLED_CRASH) {
        struct ev_rec cr;
        memset(&cr, 0, sizeof(cr));
        cr.t = (base + 7) * 1000000;
        cr.type = EV_CRASH;
        struct ls_err err = {0, ""};
        return evlog_append_offline(path, &cr, &err);
    }
    if (how == KILLED_TORN) {
        int fd = open(path, O_WRONLY);
        int ok = fd >= 0 && pwrite(fd, "\x11\x22\x33", 3, EVLOG_HEADER_SIZE + 6 * EVLOG_REC_SIZE) ==
                                3;
        if (fd >= 0)
            close(fd);
        return ok ? 0 : -1;
    }
    return 0;
}

struct spec {
    const char *run_id;     /* run.json run_id: NULL none */
    const char *state;
    const char *extra;      /* more run.json members, or "" */
    const char *w0e0_exit;  /* worker 0 epoch 0 (restarted after) */
    int w0e0_killed;
    const char *w1_exit;    /* worker 1, one epoch */
    const char *w0e0_more;  /* more members of worker 0 epoch 0's entry, or NULL */
};

static const struct spec GOOD = {RUN_A_HEX, "finished", "", "killed by signal 9 (Killed)", 1,
                                 "exited 0", NULL};

/* Contract: a fresh run directory whose run.json lists worker 0 (epochs 0
 * and 1, epoch 1 exited 0) and worker 1 (epoch 0) as s says. */
static void make_dir(char *dir, size_t n, const struct spec *s)
{
    snprintf(dir, n, "%s/run%d", tmp, seq++);
    char path[8192], text[2048];
    snprintf(path, sizeof(path), "%s/events", dir);
    REQUIRE(mkdir(dir, 0755) == 0 && mkdir(path, 0755) == 0);
    char id[64] = "null";
    if (s->run_id)
        snprintf(id, sizeof(id), "\"%s\"", s->run_id);
    snprintf(text, sizeof(text),
             "{\"format\":\"lockstorm-run\",\"version\":1,\"run_id\":%s,\"state\":\"%s\",%s"
             "\"end_ns\":500000000,\"interrupted\":false,\"leftover_keys\":[],\"storage\":null,"
             "\"workers\":[{\"worker\":0,\"epoch\":1,\"exit\":\"exited 0\",\"epochs\":["
             "{\"epoch\":0,\"exit\":\"%s\",\"killed_by_harness\":%s%s},"
             "{\"epoch\":1,\"exit\":\"exited 0\",\"killed_by_harness\":false}]},"
             "{\"worker\":1,\"epoch\":0,\"exit\":\"%s\",\"epochs\":["
             "{\"epoch\":0,\"exit\":\"%s\",\"killed_by_harness\":false}]}]}\n",
             id, s->state, s->extra, s->w0e0_exit, s->w0e0_killed ? "true" : "false",
             s->w0e0_more ? s->w0e0_more : "", s->w1_exit, s->w1_exit);
    snprintf(path, sizeof(path), "%s/run.json", dir);
    REQUIRE(write_file(path, text) == 0);
    snprintf(path, sizeof(path), "%s/faults.jsonl", dir);
    REQUIRE(write_file(path, "") == 0);
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    REQUIRE(write_file(path, "{\"res\":\"r0\",\"plain\":0}\n") == 0);
    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    REQUIRE(write_file(path, "name: t\nseed: 1\nduration: 1s\n"
                             "lock: {impl: redis-single, ttl: 300ms, fencing: false}\n"
                             "workers: {count: 2, resources: 1}\n") == 0);
}

/* The usual logs: worker 0's epoch 0 killed with its crash record, its
 * epoch 1 and worker 1 closed; all of run. */
static void usual_logs(const char *dir, const uint8_t *run)
{
    REQUIRE(write_log(dir, 0, 0, run, 10, KILLED_CRASH) == 0);
    REQUIRE(write_log(dir, 0, 1, run, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, run, 100, CLOSED) == 0);
}

/* Contract: the checkers' fragment of dir (caller frees), NULL when the
 * directory does not load. */
static struct json *check_dir(const char *dir)
{
    struct history h;
    struct ls_err err = {0, ""};
    if (history_load_rundir(dir, &h, &err) != 0) {
        CHECKF(0, "%s: %s", dir, err.msg);
        history_free(&h);
        return NULL;
    }
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    history_free(&h);
    return r;
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || (v->type != JSON_NUM && v->type != JSON_BOOL))
        return -999999;
    return v->i;
}

static const char *gets_(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "(none)";
}

/* Exactly one gap, containing needle; the checkers' verdict unknown. */
static void one_gap(const struct json *r, const char *needle)
{
    const struct json *g = json_path(r, "evidence.gaps");
    CHECKF(g && g->type == JSON_ARR && g->n == 1 && g->kids[0]->type == JSON_STR &&
               strstr(g->kids[0]->s, needle),
           "want one gap with '%s', got %zu: '%s'", needle, g ? g->n : 0,
           g && g->n ? g->kids[0]->s : "");
    CHECK_INT(geti(r, "evidence.complete"), 0);
    CHECK_STR(gets_(r, "verdict_checks"), "unknown");
}

static void test_intact(void)
{
    char dir[4096];
    make_dir(dir, sizeof(dir), &GOOD);
    usual_logs(dir, RUN_A);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.complete"), 1);
    CHECK(json_path(r, "evidence.gaps.0") == NULL);
    CHECK_STR(gets_(r, "evidence.run_id"), RUN_A_HEX);
    CHECK_STR(gets_(r, "evidence.run_state"), "finished");
    CHECK_INT(geti(r, "evidence.logs.expected"), 3);
    CHECK_INT(geti(r, "evidence.logs.found"), 3);
    CHECK_INT(geti(r, "evidence.logs.missing"), 0);
    CHECK_INT(geti(r, "evidence.logs.foreign"), 0);
    CHECK_INT(geti(r, "evidence.logs.damaged"), 0);
    CHECKF(strcmp(gets_(r, "verdict_checks"), "valid") == 0, "%s %s %s %s",
           gets_(r, "checks.mutex.verdict"), gets_(r, "checks.fencing.verdict"),
           gets_(r, "checks.liveness.verdict"), gets_(r, "checks.stats.verdict"));
    /* the evidence comes right after verdict_checks */
    CHECK(r->n > 1 && strcmp(r->keys[0], "verdict_checks") == 0 &&
          strcmp(r->keys[1], "evidence") == 0);
    json_free(r);
}

static void test_missing_and_none(void)
{
    char dir[4096], path[8192];
    make_dir(dir, sizeof(dir), &GOOD);
    usual_logs(dir, RUN_A);
    evlog_path(path, sizeof(path), dir, 1, 0);
    REQUIRE(unlink(path) == 0);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-001.bin: missing (worker 1 epoch 0");
    CHECK_INT(geti(r, "evidence.logs.missing"), 1);
    CHECK_INT(geti(r, "evidence.logs.found"), 2);
    json_free(r);

    make_dir(dir, sizeof(dir), &GOOD); /* no logs at all */
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/: no event logs (run.json lists 3)");
    CHECK_INT(geti(r, "evidence.logs.missing"), 3);
    json_free(r);
}

static void test_foreign(void)
{
    char dir[4096];
    /* worker 1's log is another run's */
    make_dir(dir, sizeof(dir), &GOOD);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_CRASH) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_B, 100, CLOSED) == 0);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-001.bin: a log of another run (run id b2010203");
    CHECK_INT(geti(r, "evidence.logs.foreign"), 1);
    CHECK_INT(geti(r, "counts.grants"), 2); /* not checked: its grant is not counted */
    json_free(r);

    /* a worker run.json does not list */
    make_dir(dir, sizeof(dir), &GOOD);
    usual_logs(dir, RUN_A);
    REQUIRE(write_log(dir, 2, 0, RUN_A, 300, CLOSED) == 0);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-002.bin: a log of another run (run.json lists no such worker");
    CHECK_INT(geti(r, "counts.grants"), 3);
    json_free(r);

    /* a log renamed to another worker's name: its header says so */
    make_dir(dir, sizeof(dir), &GOOD);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_CRASH) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    char from[8192], to[8192];
    evlog_path(from, sizeof(from), dir, 0, 1);
    evlog_path(to, sizeof(to), dir, 1, 0);
    REQUIRE(link(from, to) == 0);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-001.bin: a log of another run (its header says worker 0 epoch 1)");
    json_free(r);

    /* a run.json with a run id, logs without one */
    make_dir(dir, sizeof(dir), &GOOD);
    usual_logs(dir, NULL);
    r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.logs.foreign"), 3);
    CHECK(strstr(gets_(r, "evidence.gaps.0"), "run id none, this run's is " RUN_A_HEX) != NULL);
    json_free(r);

    /* a run directory of before run ids: nothing to compare, nothing wrong */
    struct spec old = GOOD;
    old.run_id = NULL;
    make_dir(dir, sizeof(dir), &old);
    usual_logs(dir, NULL);
    r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.complete"), 1);
    CHECK(json_path(r, "evidence.run_id") && json_path(r, "evidence.run_id")->type == JSON_NULL);
    json_free(r);
}

static void test_ends(void)
{
    char dir[4096];
    /* exited cleanly, log not closed: cut short */
    make_dir(dir, sizeof(dir), &GOOD);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_CRASH) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_A, 100, KILLED_BARE) == 0);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-001.bin: cut short after record 6: not closed, though worker 1's "
               "process exited cleanly");
    CHECK_INT(geti(r, "evidence.logs.damaged"), 1);
    json_free(r);

    /* killed by the harness, no crash record */
    make_dir(dir, sizeof(dir), &GOOD);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_BARE) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_A, 100, CLOSED) == 0);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-000.bin: cut short after record 6: no crash record, though the "
               "harness killed worker 0");
    json_free(r);

    /* died on its own (not killed by the harness), its last record torn:
     * what a death leaves, no gap */
    struct spec died = GOOD;
    died.w0e0_exit = "killed by signal 11 (Segmentation fault)";
    died.w0e0_killed = 0;
    make_dir(dir, sizeof(dir), &died);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_TORN) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_A, 100, CLOSED) == 0);
    r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.complete"), 1);
    CHECK_STR(gets_(r, "evidence.gaps.0"), "(none)");
    json_free(r);

    /* the same log damaged before its end: records after a bad one */
    make_dir(dir, sizeof(dir), &died);
    REQUIRE(write_log(dir, 0, 0, RUN_A, 10, KILLED_BARE) == 0);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_A, 100, CLOSED) == 0);
    char path[8192];
    evlog_path(path, sizeof(path), dir, 0, 0);
    int fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x77", 1, EVLOG_HEADER_SIZE + 2 * EVLOG_REC_SIZE + 3) == 1);
    close(fd);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-000.bin: damaged after record 2");
    json_free(r);

    /* a closed log whose middle is damaged: found by the checkers' pass */
    make_dir(dir, sizeof(dir), &GOOD);
    usual_logs(dir, RUN_A);
    evlog_path(path, sizeof(path), dir, 1, 0);
    fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(pwrite(fd, "\x77", 1, EVLOG_HEADER_SIZE + 3 * EVLOG_REC_SIZE + 3) == 1);
    close(fd);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-001.bin: damaged after record 3 (192 bytes after it cannot be "
               "read; its writer closed it after 6 records)");
    json_free(r);
}

/* A restarted process killed before it created its log: run.json says it
 * made none (log_made false), so none is expected; one that turns up
 * anyway was not there when the run ended. */
static void test_no_log_made(void)
{
    char dir[4096];
    struct spec s = GOOD;
    s.w0e0_more = ",\"log_made\":false";
    make_dir(dir, sizeof(dir), &s);
    REQUIRE(write_log(dir, 0, 1, RUN_A, 200, CLOSED) == 0);
    REQUIRE(write_log(dir, 1, 0, RUN_A, 100, CLOSED) == 0);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.complete"), 1);
    CHECK_INT(geti(r, "evidence.logs.expected"), 2);
    json_free(r);

    make_dir(dir, sizeof(dir), &s);
    usual_logs(dir, RUN_A);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "events/worker-000.bin: a log of another run (run.json lists no such worker");
    json_free(r);
}

static void test_states(void)
{
    char dir[4096];
    struct spec s = GOOD;
    s.state = "failed";
    s.extra = "\"error\":\"worker 0 could not start: adapter: cannot run /nonexistent\",";
    make_dir(dir, sizeof(dir), &s);
    usual_logs(dir, RUN_A);
    struct json *r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "run.json: the run failed: worker 0 could not start: adapter: cannot run "
               "/nonexistent");
    CHECK_STR(gets_(r, "evidence.run_state"), "failed");
    json_free(r);

    s = GOOD;
    s.state = "running";
    s.w1_exit = "running";
    make_dir(dir, sizeof(dir), &s);
    usual_logs(dir, RUN_A);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "run.json: state \"running\": the harness did not finish the run");
    json_free(r);

    s = GOOD;
    s.state = "wobbly\\nstate"; /* a damaged run.json: still one line */
    make_dir(dir, sizeof(dir), &s);
    usual_logs(dir, RUN_A);
    r = check_dir(dir);
    REQUIRE(r);
    one_gap(r, "run.json: unknown state 'wobbly?state'");
    json_free(r);

    s = GOOD;
    s.state = "interrupted"; /* a signal: everything recorded is there (it cannot pass anyway) */
    make_dir(dir, sizeof(dir), &s);
    usual_logs(dir, RUN_A);
    r = check_dir(dir);
    REQUIRE(r);
    CHECK_INT(geti(r, "evidence.complete"), 1);
    json_free(r);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_intact);
    RUN(test_missing_and_none);
    RUN(test_foreign);
    RUN(test_ends);
    RUN(test_no_log_made);
    RUN(test_states);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
