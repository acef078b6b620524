/*
 * test_hardening.c: the pure parts of the hardening modules
 * (docs/reliability.md): what limits_need_of asks of a workload, a soft
 * limit raised up to its hard one by limits_check, a refusal naming the
 * number needed, and leftover_check_dir on run.json files that must not
 * report anything (finished, a live harness, a pid that is not what the run
 * started). The live cases run in tests/e2e (test_limits.sh,
 * test_kill_harness.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/leftover.h"
#include "harness/limits.h"
#include "harness/workload.h"
#include "testing.h"

static struct workload *load(const char *yaml)
{
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    if (workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err) != 0)
        fprintf(stderr, "load: %s\n", err.msg);
    return w;
}

static void test_need(void)
{
    struct workload *w = load("workers: {count: 1000}\ncluster: {proxy: true}\n");
    REQUIRE(w);
    struct limits_need n;
    limits_need_of(w, &n);
    /* 1000 links + 2 x 1000 proxied connections + 64 */
    CHECK_INT(n.nofile, 3064);
    CHECK_STR(n.nofile_who, "the proxy");
    CHECK(n.nproc >= 1000);
    workload_free(w);

    w = load("workers: {count: 1000}\ncluster: {proxy: false}\nfaults: []\n");
    REQUIRE(w);
    limits_need_of(w, &n);
    CHECK_INT(n.nofile, 1000 + 32 + 64);
    CHECK_STR(n.nofile_who, "each redis-server node");
    workload_free(w);

    /* a renewing thread doubles every worker's connections */
    w = load("workers: {count: 10}\ncluster: {nodes: 3, proxy: true}\nlock: {impl: redlock, ttl: 1s, "
             "renew: {every: 300ms}}\n");
    REQUIRE(w);
    limits_need_of(w, &n);
    CHECK_INT(n.nofile, 30 + 2 * 30 * 2 + 64);
    workload_free(w);
}

static void test_check_raises_and_refuses(void)
{
    struct rlimit saved, rl;
    REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    struct workload *w = load("workers: {count: 1000}\ncluster: {proxy: true}\n");
    REQUIRE(w);
    struct ls_err err = {0, ""};
    if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max >= 4096) {
        rl.rlim_cur = 256;
        rl.rlim_max = saved.rlim_max;
        REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
        CHECK_INT(limits_check(w, &err), 0); /* raised to what is needed */
        REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        CHECK(rl.rlim_cur >= 3064);
    }
    /* lowering the hard limit cannot be undone unprivileged: do it in a child */
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        rl.rlim_cur = rl.rlim_max = 256;
        struct ls_err e = {0, ""};
        int ok = setrlimit(RLIMIT_NOFILE, &rl) == 0 && limits_check(w, &e) == LS_EENV &&
                 strstr(e.msg, "need about 3064 descriptors in the proxy") &&
                 strstr(e.msg, "ulimit -n 3064");
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    workload_free(w);
}

static void write_run_json(const char *dir, const char *state, long harness, long node_pid)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\n  \"format\": \"lockstorm-run\",\n  \"state\": \"%s\",\n  \"harness\": {\"pid\": "
            "%ld},\n  \"workers\": [{\"pid\": %ld, \"epochs\": [{\"pid\": %ld}]}],\n  \"nodes\": "
            "[{\"port\": 1, \"pid\": %ld}],\n  \"proxy\": {\"pid\": %ld},\n  \"storage\": null\n}\n",
            state, harness, node_pid, node_pid, node_pid, node_pid);
    fclose(f);
}

static void test_leftover_quiet(void)
{
    char dir[] = "/tmp/lstest-leftover-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char path[4200];
    FILE *out = tmpfile();
    REQUIRE(out);
    /* our own pid is alive but is no redis-server and no `lockstorm run` */
    write_run_json(dir, "running", 999999999L, (long)getpid());
    CHECK_INT(leftover_check_dir(dir, 0, out), 0);
    /* a finished run has no leftovers to look for */
    write_run_json(dir, "finished", 999999999L, (long)getpid());
    CHECK_INT(leftover_check_dir(dir, 0, out), 0);
    /* garbage and absence are quietly nothing */
    snprintf(path, sizeof(path), "%s/run.json", dir);
    FILE *g = fopen(path, "w");
    REQUIRE(g);
    fputs("not json \"state\": \"running\"", g);
    fclose(g);
    CHECK_INT(leftover_check_dir(dir, 0, out), 0);
    unlink(path);
    CHECK_INT(leftover_check_dir(dir, 0, out), 0);
    CHECK_INT(leftover_check_siblings("/nonexistent-dir", out), 0);
    CHECK_INT(ftell(out), 0); /* and said nothing */
    fclose(out);
    rmdir(dir);
}

int main(void)
{
    RUN(test_need);
    RUN(test_check_raises_and_refuses);
    RUN(test_leftover_quiet);
    return t_finish();
}
