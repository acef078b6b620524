/*
 * test_proc.c: util/proc.h against real child processes (sh, sleep, true):
 * the one wait-status formatter's words, the one spawn helper's options
 * (group, stdio, cwd, environment and the run's tag, exec failures either
 * way), proc_fork's group, proc_group_gone reaping what a subreaper
 * adopted, proc_kill_tagged finding a tagged process that left its
 * session, proc_reap_adopted reaping only what it did not start, and the
 * containment's sweep sparing the children from before it. Nothing here
 * signals a process it did not start.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/testing.h"
#include "util/proc.h"
#include "util/timeutil.h"

static void test_status_text(void)
{
    char buf[64];
    CHECK_STR(proc_status_text(0, buf, sizeof(buf)), "exited 0");
    CHECK_STR(proc_status_text(3 << 8, buf, sizeof(buf)), "exited 3");
    CHECK_STR(proc_status_text(SIGKILL, buf, sizeof(buf)), "killed by signal 9 (Killed)");
    CHECK_STR(proc_status_text(SIGSEGV, buf, sizeof(buf)),
              "killed by signal 11 (Segmentation fault)");
    CHECK_STR(proc_status_text(0x137f, buf, sizeof(buf)), "wait status 4991"); /* stopped */
    char small[8];
    CHECK_STR(proc_status_text(SIGKILL, small, sizeof(small)), "killed ");
}

/* Contract: the whole of file path (at most n - 1 bytes) into buf. */
static const char *slurp(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return buf;
    ssize_t k = read(fd, buf, n - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    return buf;
}

static void test_spawn_opts(void)
{
    char *dir = t_tmpdir();
    char out[600], text[600];
    snprintf(out, sizeof(out), "%s/out", dir);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    /* stdio, cwd, the exact environment plus the run's tag, own group */
    setenv(PROC_RUN_TAG, "abc123", 1);
    char *argv[] = {"sh", "-c", "pwd; echo \"$A|$LOCKSTORM_RUN|$HOME\"; ps -o pgid= -p $$", NULL};
    char *envp[] = {"A=1", "PATH=/usr/bin:/bin", NULL};
    struct spawn_opts o = {.envp = envp, .use_fds = 1, .fd_in = -1, .fd_out = fd, .fd_err = fd,
                           .cwd = dir, .path = "/bin/sh"};
    struct ls_err err = {0};
    pid_t pid = proc_spawn_opts(argv, &o, &err);
    close(fd);
    REQUIRE(pid > 0);
    int st = 0;
    CHECK(proc_wait(pid, 10 * LS_NS_PER_S, &st) == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char want[700];
    snprintf(want, sizeof(want), "%s\n1|abc123|\n%d\n", dir, (int)pid);
    slurp(out, text, sizeof(text));
    /* ps pads the pgid */
    char *p = text, *w = want;
    int same = 1;
    while (*p && *w) {
        if (*p == ' ') {
            p++;
            continue;
        }
        same = same && *p == *w;
        p++, w++;
    }
    CHECKF(same && !*p && !*w, "got '%s' want '%s'", text, want);

    /* env_add: the harness's environment with additions */
    fd = open(out, O_WRONLY | O_TRUNC | O_CLOEXEC);
    REQUIRE(fd >= 0);
    char *add[] = {"B=2", NULL};
    char *argv2[] = {"sh", "-c", "echo \"$B|$LOCKSTORM_RUN\"; ps -o pgid= -p $$", NULL};
    struct spawn_opts o2 = {.env_add = add, .use_fds = 1, .fd_in = -1, .fd_out = fd,
                            .fd_err = fd, .flags = PROC_SAME_GROUP};
    pid = proc_spawn_opts(argv2, &o2, &err);
    close(fd);
    REQUIRE(pid > 0);
    CHECK(proc_wait(pid, 10 * LS_NS_PER_S, &st) == 1 && st == 0);
    snprintf(want, sizeof(want), "2|abc123\n%d\n", (int)getpgrp());
    slurp(out, text, sizeof(text));
    for (p = text, w = want, same = 1; *p && *w;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        same = same && *p == *w;
        p++, w++;
    }
    CHECKF(same && !*p && !*w, "same group: got '%s' want '%s'", text, want);
    unsetenv(PROC_RUN_TAG);

    /* a failed exec: an error here, named; or exit 127 with PROC_EXEC_EXIT */
    char *bad[] = {"lockstorm-no-such-program", NULL};
    struct spawn_opts o3 = {.what = "thing", .as_user = "nobody"};
    memset(&err, 0, sizeof(err));
    CHECK(proc_spawn_opts(bad, &o3, &err) == LS_EENV);
    CHECKF(strstr(err.msg, "thing: cannot run lockstorm-no-such-program as nobody") != NULL,
           "%s", err.msg);
    struct spawn_opts o4 = {.flags = PROC_EXEC_EXIT};
    pid = proc_spawn_opts(bad, &o4, &err);
    REQUIRE(pid > 0);
    CHECK(proc_wait(pid, 10 * LS_NS_PER_S, &st) == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 127);
    /* a chdir that fails is an error too */
    char *tru[] = {"true", NULL};
    struct spawn_opts o5 = {.cwd = "/nonexistent/lockstorm"};
    memset(&err, 0, sizeof(err));
    CHECK(proc_spawn_opts(tru, &o5, &err) == LS_EENV && strstr(err.msg, "cannot run true"));
    t_rmdir(dir);
    free(dir);
}

static void test_fork(void)
{
    pid_t pid = proc_fork(0);
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(getpgrp() == getpid() ? 0 : 1);
    int st = 0;
    CHECK(proc_wait(pid, 10 * LS_NS_PER_S, &st) == 1 && st == 0);
    pid = proc_fork(PROC_NO_DEATHSIG);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int sig = -1;
        prctl(PR_GET_PDEATHSIG, &sig);
        _exit(getpgrp() == getpid() && sig == 0 ? 0 : 1);
    }
    CHECK(proc_wait(pid, 10 * LS_NS_PER_S, &st) == 1 && st == 0);
}

/* A subreaper's adopted orphan in a group keeps the group alive until it is
 * reaped; a tagged escaper (new session) is found by its environment. */
static void test_adopted_and_tagged(void)
{
    int prev = 0;
    prctl(PR_GET_CHILD_SUBREAPER, &prev);
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    setenv(PROC_RUN_TAG, "feedc0de", 1);
    /* sh (its own group) starts a grandchild in that group and exits; the
     * grandchild is adopted by us, then killed */
    char *dir = t_tmpdir();
    char pidfile[600];
    snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s", pidfile);
    char *argv[] = {"sh", "-c", cmd, NULL};
    struct ls_err err = {0};
    pid_t sh = proc_spawn(argv, NULL, &err);
    REQUIRE(sh > 0);
    CHECK(proc_wait(sh, 10 * LS_NS_PER_S, NULL) == 1);
    char text[64];
    int64_t until = ls_now_ns() + 5 * LS_NS_PER_S;
    while (!*slurp(pidfile, text, sizeof(text)) && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    pid_t gc = (pid_t)strtol(text, NULL, 10);
    REQUIRE(gc > 1);
    CHECK(!proc_group_gone(sh)); /* the orphan lives in sh's group */
    kill(gc, SIGKILL);
    until = ls_now_ns() + 5 * LS_NS_PER_S;
    while (!proc_group_gone(sh) && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    CHECK(proc_group_gone(sh)); /* its zombie was reaped */

    /* an escaper: a new session, SIGTERM and SIGHUP ignored, carrying the tag */
    unlink(pidfile);
    snprintf(cmd, sizeof(cmd),
             "exec setsid sh -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 30'", pidfile);
    char *argv2[] = {"sh", "-c", cmd, NULL};
    pid_t esc = proc_spawn(argv2, NULL, &err);
    REQUIRE(esc > 0);
    until = ls_now_ns() + 5 * LS_NS_PER_S;
    while (!*slurp(pidfile, text, sizeof(text)) && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    pid_t e = (pid_t)strtol(text, NULL, 10);
    REQUIRE(e > 1);
    CHECK(proc_state(e, 0) != 0);
    CHECK(proc_kill_tagged("LOCKSTORM_RUN=other", 0, LS_NS_PER_S) == 0); /* not ours */
    CHECK(proc_state(e, 0) != 0 && proc_state(e, 0) != 'Z');
    /* by its tag alone (children = 0), though it is our adopted child */
    CHECK(proc_kill_tagged("LOCKSTORM_RUN=feedc0de", 0, 2 * LS_NS_PER_S) >= 1);
    CHECK(proc_wait(e, LS_NS_PER_S, NULL) == 1); /* reaped (gone) */
    CHECK(proc_wait(esc, LS_NS_PER_S, NULL) == 1);
    char s = proc_state(e, 0);
    CHECKF(s == 0, "escaper %d state %c", (int)e, s ? s : '-');
    unsetenv(PROC_RUN_TAG);
    prctl(PR_SET_CHILD_SUBREAPER, prev);
    t_rmdir(dir);
    free(dir);
}

/* Contract: wait (up to 5 s) until pid is a zombie; 1 when it is. */
static int until_zombie(pid_t pid)
{
    int64_t until = ls_now_ns() + 5 * LS_NS_PER_S;
    while (proc_state(pid, 0) != 'Z' && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    return proc_state(pid, 0) == 'Z';
}

/* proc_reap_adopted reaps a dead child it did not start (an adopted
 * orphan stands in: a raw fork), never one proc_fork started */
static void test_reap_adopted(void)
{
    pid_t mine = proc_fork(0);
    REQUIRE(mine >= 0);
    if (mine == 0)
        _exit(3);
    pid_t other = fork();
    REQUIRE(other >= 0);
    if (other == 0)
        _exit(0);
    REQUIRE(until_zombie(mine) && until_zombie(other));
    CHECK(proc_reap_adopted() == 1);
    CHECK(proc_state(other, 0) == 0); /* reaped */
    CHECK(proc_state(mine, 0) == 'Z'); /* left for its owner */
    int st = 0;
    CHECK(waitpid(mine, &st, 0) == mine && WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

/* the containment's sweep kills a child started after begin and leaves a
 * child from before it (a wrapper's `sleep 300 & exec lockstorm`) alone */
static void test_contain_before(void)
{
    char *argv[] = {"sleep", "30", NULL};
    pid_t before = fork(); /* not through proc.c: the wrapper's child */
    REQUIRE(before >= 0);
    if (before == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    struct proc_contain box;
    proc_contain_begin(&box, "0123abcd");
    struct ls_err err = {0};
    pid_t after = proc_spawn(argv, NULL, &err);
    REQUIRE(after > 0);
    CHECK(proc_contain_sweep(&box, 2 * LS_NS_PER_S) == 1);
    CHECK(proc_state(after, 0) == 0); /* killed and reaped */
    char s = proc_state(before, 0);
    CHECKF(s != 0 && s != 'Z', "the child from before begin: state %c", s ? s : '-');
    proc_contain_end(&box);
    kill(before, SIGKILL);
    waitpid(before, NULL, 0);
}

int main(void)
{
    RUN(test_status_text);
    RUN(test_spawn_opts);
    RUN(test_fork);
    RUN(test_adopted_and_tagged);
    RUN(test_reap_adopted);
    RUN(test_contain_before);
    return t_finish();
}
