/*
 * test_process_faults.c: the pieces under the process faults, against real
 * redis-server processes: a node killed and restarted keeps its port and,
 * with an AOF, its keys (without one it comes back empty); a restart whose
 * port was taken meanwhile fails cleanly; event log names per epoch; a
 * restarted worker's epochs load as one stream whose crashed hold ends at
 * the crash record; the kill/stop/stall options (restart: never ...).
 */
#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/check.h"
#include "backends/cluster.h"
#include "model/evlog.h"
#include "harness/workload.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

static char *tmp;

/* ---- nodes ---- */

/* Contract: run one command on the node; returns the reply (caller frees)
 * or NULL when the node does not answer. */
static redisReply *cmd(const struct node_proc *n, const char *c1, const char *c2, const char *c3)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout(n->host, n->port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    const char *argv[3] = {c1, c2, c3};
    int argc = c3 ? 3 : c2 ? 2 : 1;
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    redisFree(c);
    return r;
}

static int refused(const struct node_proc *n)
{
    redisReply *r = cmd(n, "PING", NULL, NULL);
    if (r)
        freeReplyObject(r);
    return r == NULL;
}

/* Contract: SET k v on a fresh node, SIGKILL (or SIGTERM) it, restart it;
 * returns what GET k gives afterwards ("(nil)", the value, or "(error)"). */
static void kill_restart(int persistence, int sig, const char *name, char *got, size_t n)
{
    snprintf(got, n, "(error)");
    struct node_proc node;
    memset(&node, 0, sizeof(node));
    struct ls_err err = {0, ""};
    int rc = node_start(&node, tmp, name, persistence, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc != 0)
        return;
    redisReply *r = cmd(&node, "SET", "lockstorm:r0", "tok-1");
    CHECK(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
    int port = node.port;
    pid_t old = node.pid;
    int status = 0;
    rc = node_kill(&node, sig, 5 * LS_NS_PER_S, &status, &err);
    CHECKF(rc == 0, "%s", err.msg);
    CHECK_INT(node.pid, 0);
    CHECK(sig == SIGKILL ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
                         : WIFEXITED(status));
    CHECK(refused(&node));
    rc = node_restart(&node, 10 * LS_NS_PER_S, &err);
    CHECKF(rc == 0, "%s", err.msg);
    CHECK_INT(node.port, port);
    CHECK(node.pid > 0 && node.pid != old);
    r = cmd(&node, "GET", "lockstorm:r0", NULL);
    if (r && r->type == REDIS_REPLY_STRING)
        snprintf(got, n, "%s", r->str);
    else if (r && r->type == REDIS_REPLY_NIL)
        snprintf(got, n, "(nil)");
    if (r)
        freeReplyObject(r);
    node_stop(&node);
}

static void test_node_restart_persistence(void)
{
    char got[64];
    kill_restart(PERSIST_AOF_ALWAYS, SIGKILL, "aof-always", got, sizeof(got));
    CHECK_STR(got, "tok-1");          /* replayed from the AOF */
    kill_restart(PERSIST_NONE, SIGKILL, "none", got, sizeof(got));
    CHECK_STR(got, "(nil)");          /* nothing on disk: every key lost */
    kill_restart(PERSIST_AOF_EVERYSEC, SIGTERM, "everysec-term", got, sizeof(got));
    CHECK_STR(got, "tok-1");          /* a clean shutdown fsyncs the AOF */
}

/* The port was taken while the node was down: the restart reports it and
 * leaves nothing running; once the port is free again it succeeds. */
static void test_node_restart_port_taken(void)
{
    struct node_proc node;
    memset(&node, 0, sizeof(node));
    struct ls_err err = {0, ""};
    int rc = node_start(&node, tmp, "taken", PERSIST_NONE, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc != 0)
        return;
    REQUIRE(node_kill(&node, SIGKILL, 5 * LS_NS_PER_S, NULL, &err) == 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)node.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int bound = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0;
    CHECK(bound);
    if (bound) {
        rc = node_restart(&node, 2 * LS_NS_PER_S, &err);
        CHECK(rc < 0);
        CHECK_INT(node.pid, 0);
        CHECKF(strstr(err.msg, "exited at start-up") || strstr(err.msg, "did not answer"), "%s",
               err.msg);
    }
    if (fd >= 0)
        close(fd);
    ls_err_clear(&err);
    rc = node_restart(&node, 10 * LS_NS_PER_S, &err);
    CHECKF(rc == 0, "%s", err.msg);
    CHECK(!refused(&node));
    /* restarting a running node is refused, and killing a stopped one */
    CHECK(node_restart(&node, LS_NS_PER_S, &err) < 0);
    node_stop(&node);
    ls_err_clear(&err);
    CHECK(node_kill(&node, SIGKILL, LS_NS_PER_S, NULL, &err) < 0);
}

/* ---- event log names ---- */

static void test_names(void)
{
    char p[256];
    evlog_path(p, sizeof(p), "/r", 7, 0);
    CHECK_STR(p, "/r/events/worker-007.bin");
    evlog_path(p, sizeof(p), "/r", 7, 12);
    CHECK_STR(p, "/r/events/worker-007.e12.bin");
    int w = -1;
    uint32_t e = 99;
    CHECK(evlog_parse_name("worker-007.bin", &w, &e) == 0 && w == 7 && e == 0);
    CHECK(evlog_parse_name("worker-1234.e3.bin", &w, &e) == 0 && w == 1234 && e == 3);
    CHECK(evlog_parse_name("worker-7.bin", &w, &e) == 0 && w == 7 && e == 0);
    const char *bad[] = {"worker-007.e0.bin", "worker-007.e.bin", "worker-007.e01.bin",
                         "worker-.bin",       "worker-007.bin.x", "worker-007.x1.bin",
                         "worker-12345678.bin", "notes.txt", "worker-007.e1", NULL};
    for (int i = 0; bad[i]; i++)
        CHECKF(evlog_parse_name(bad[i], &w, &e) < 0, "%s", bad[i]);
}

/* ---- a restarted worker's history ---- */

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
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

/* Contract: write events/worker-<id> epoch <epoch>: one grant of r0 at ok
 * ms (lease 1 s), enter at ok + 1; with exit_ > 0 the hold ends there and
 * the log is closed, else the writer dies with the log open (a SIGKILLed
 * worker). Returns 0 or -1. */
static int write_epoch(const char *dir, int id, uint32_t epoch, int64_t ok, int64_t exit_)
{
    char path[8192];
    evlog_path(path, sizeof(path), dir, id, epoch);
    pid_t pid = 0;
    if (exit_ <= 0) {
        pid = fork();
        if (pid < 0)
            return -1;
        if (pid > 0) {
            int status;
            return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                           WEXITSTATUS(status) == 0 ? 0 : -1;
        }
    }
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, epoch, 0, 0, &err) != 0) {
        if (pid == 0 && exit_ <= 0)
            _exit(1);
        return -1;
    }
    struct ev_rec r = rec(ok - 1, EV_ACQUIRE_INVOKE, 0);
    r.aux = 1;
    evlog_append(w, &r);
    r = rec(ok, EV_ACQUIRE_OK, 0);
    r.valid_until = (ok - 1 + 1000) * 1000000;
    snprintf(r.token, sizeof(r.token), "w%d.e%u", id, epoch);
    evlog_append(w, &r);
    r = rec(ok + 1, EV_ENTER, 0);
    evlog_append(w, &r);
    if (exit_ <= 0)
        _exit(0); /* dies in its hold */
    r = rec(exit_, EV_EXIT, 0);
    evlog_append(w, &r);
    r = rec(exit_ + 1, EV_RELEASE_INVOKE, 0);
    evlog_append(w, &r);
    r = rec(exit_ + 2, EV_RELEASE_OK, 0);
    evlog_append(w, &r);
    return evlog_close(w, &err);
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || v->type != JSON_NUM)
        return -999999;
    return v->is_int ? v->i : (int64_t)llround(v->d);
}

static int has_warning(const struct history *h, const char *needle)
{
    for (int i = 0; i < h->nwarnings; i++)
        if (strstr(h->warnings[i], needle))
            return 1;
    return 0;
}

/* Contract: a run directory where worker 0 (epoch 0) is granted r0 at 1 ms
 * and killed in its hold at 100 ms (a crash record unless no_crash), its
 * epoch 1 holds r0 [601, 700]; worker 1 holds r0 [301, 400] while worker
 * 0's dead lease (to 1000 ms) is still running. */
static int make_run(const char *dir, int no_crash)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events", dir);
    if (mkdir(dir, 0755) != 0 || mkdir(path, 0755) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/run.json", dir);
    if (write_text(path, "{\"format\":\"lockstorm-run\",\"version\":1,\"end_ns\":1000000000,"
                         "\"interrupted\":false,\"leftover_keys\":[]}\n") != 0)
        return -1;
    if (write_epoch(dir, 0, 0, 1, 0) != 0 || write_epoch(dir, 0, 1, 600, 700) != 0 ||
        write_epoch(dir, 1, 0, 300, 400) != 0)
        return -1;
    if (no_crash)
        return 0;
    evlog_path(path, sizeof(path), dir, 0, 0);
    struct ev_rec cr = rec(100, EV_CRASH, 0);
    struct ls_err err = {0, ""};
    return evlog_append_offline(path, &cr, &err);
}

static void test_epochs(void)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/run-epochs", tmp);
    REQUIRE(make_run(dir, 0) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int rc = history_load_rundir(dir, &h, &err);
    CHECKF(rc == 0, "%s", err.msg);
    REQUIRE(rc == 0);
    CHECK_INT(h.nworkers, 2);
    CHECK_INT(h.w[0].id, 0);
    CHECK_INT(h.w[0].n, 3 + 1 + 6); /* epoch 0, its crash record, epoch 1 */
    CHECK_INT(hist_rec(&h.w[0], 3)->type, EV_CRASH);
    CHECK_INT(hist_rec(&h.w[0], 4)->t, 599 * 1000000);
    CHECK_INT(h.w[0].complete, 1);  /* epoch 0 crashed, epoch 1 closed */
    CHECK(!has_warning(&h, "worker 0")); /* nothing missing in worker 0's epochs */
    struct check_params p;
    check_params_from(&h, &p);
    struct json *r = check_run(&h, &p);
    /* the crashed hold ended at the crash (100 ms): worker 1's hold from
     * 301 ms overlaps nothing, though the dead holder's lease ran to 1 s */
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    CHECK_INT(geti(r, "counts.grants"), 3);     /* the restarted epoch's grant counts */
    CHECK_INT(geti(r, "counts.crashes"), 1);
    CHECK_INT(geti(r, "checks.liveness.holder_crashes"), 1);
    CHECK_INT(geti(r, "checks.liveness.crash_to_next_grant_ms"), 200); /* 100 -> 300 */
    CHECK_INT(geti(r, "per_worker.0.grants"), 2);
    json_free(r);
    history_free(&h);

    /* Without the crash record the dead epoch's hold is cut at its last
     * record (2 ms), never closed by the next epoch's exit at 700 ms. */
    snprintf(dir, sizeof(dir), "%s/run-epochs-nocrash", tmp);
    REQUIRE(make_run(dir, 1) == 0);
    ls_err_clear(&err);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK_INT(h.w[0].n, 3 + 1 + 6);
    CHECK_INT(hist_rec(&h.w[0], 3)->type, EV_CRASH);
    CHECK_INT(hist_rec(&h.w[0], 3)->t, 2 * 1000000);
    CHECK_INT(h.w[0].complete, 0);
    CHECK(has_warning(&h, "worker 0 epoch 0: no crash record before the restart"));
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(geti(r, "checks.mutex.violations"), 0);
    json_free(r);
    history_free(&h);

    /* A missing epoch is a warning; two logs of one epoch an error. */
    char path[8192];
    snprintf(dir, sizeof(dir), "%s/run-epochs", tmp);
    REQUIRE(write_epoch(dir, 1, 2, 800, 850) == 0);
    ls_err_clear(&err);
    REQUIRE(history_load_rundir(dir, &h, &err) == 0);
    CHECK(has_warning(&h, "worker 1: event log of epoch 1 missing"));
    CHECK_INT(h.w[1].n, 12);
    history_free(&h);
    snprintf(path, sizeof(path), "%s/events/worker-1.e2.bin", dir);
    REQUIRE(write_text(path, "x") == 0);
    ls_err_clear(&err);
    CHECK(history_load_rundir(dir, &h, &err) == LS_ECORRUPT);
    CHECKF(strstr(err.msg, "two event logs for worker 1 epoch 2") != NULL, "%s", err.msg);
    history_free(&h);
}

/* ---- options ---- */

static void test_options(void)
{
    static const char *base = "duration: 5s\nworkers: {count: 2}\nfaults:\n";
    struct {
        const char *fault;
        const char *want;  /* in the resolved YAML, or the error */
        int ok;
    } cases[] = {
        {"  - {kind: kill, target: holder}\n", "restart: duration", 1},
        {"  - {kind: kill, target: \"node:0\", restart: never}\n", "restart: never", 1},
        {"  - {kind: kill, target: all-workers, restart: 0}\n", "restart: 0", 1},
        {"  - {kind: stop, target: \"worker:1\", restart: 250ms, grace: 1s}\n", "grace: 1s", 1},
        {"  - {kind: stall, target: \"node:0\", mode: sleep}\n", "mode: sleep", 1},
        {"  - {kind: kill, restart: soon}\n", "expected a duration or never, duration", 0},
        {"  - {kind: stall, target: holder}\n", "cannot target holder", 0},
        {"  - {kind: stall, target: \"node:0\", mode: nap}\n", "pause", 0},
        {"  - {kind: stop, grace: 0}\n", "out of range", 0},
        {NULL, NULL, 0},
    };
    for (int i = 0; cases[i].fault; i++) {
        char yaml[512];
        snprintf(yaml, sizeof(yaml), "%s%s", base, cases[i].fault);
        struct workload *w = NULL;
        struct ls_err err = {0, ""};
        int rc = workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err);
        if (!cases[i].ok) {
            CHECKF(rc != 0 && strstr(err.msg, cases[i].want), "%s: %s", cases[i].fault, err.msg);
            continue;
        }
        CHECKF(rc == 0, "%s: %s", cases[i].fault, err.msg);
        if (rc != 0)
            continue;
        struct strbuf sb = STRBUF_INIT;
        workload_to_yaml(w, &sb);
        CHECKF(strstr(sb_cstr(&sb), cases[i].want) != NULL, "%s: %s", cases[i].want,
               sb_cstr(&sb));
        /* the echo loads back to the same echo */
        struct workload *w2 = NULL;
        rc = workload_load_string("echo.yaml", sb_cstr(&sb), NULL, 0, &w2, NULL, &err);
        CHECKF(rc == 0, "%s", err.msg);
        if (rc == 0) {
            struct strbuf sb2 = STRBUF_INIT;
            workload_to_yaml(w2, &sb2);
            CHECK_STR(sb_cstr(&sb2), sb_cstr(&sb));
            sb_free(&sb2);
            workload_free(w2);
        }
        sb_free(&sb);
        workload_free(w);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    tmp = t_tmpdir();
    RUN(test_names);
    RUN(test_epochs);
    RUN(test_options);
    RUN(test_node_restart_persistence);
    RUN(test_node_restart_port_taken);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
