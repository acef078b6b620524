/*
 * test_checkproc.c: the checker pass in a child process (harness/checkproc.h)
 * keeps its contract at the edges: the child's error comes back with its
 * code and message, a stop stops it with LS_EINTR and no result, and no
 * child is ever left unreaped. The full pass over real run directories is
 * exercised by every e2e run and by tests/e2e/test_signals.sh (a signal
 * during the checking).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/checkproc.h"
#include "tests/unit/testing.h"

/* 1 when this process has no child left (reaped or never made). */
static int no_children(void)
{
    return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static int stop_at_once(void *arg)
{
    int *calls = arg;
    (*calls)++;
    return 1;
}

static int never(void *arg)
{
    int *calls = arg;
    (*calls)++;
    return 0;
}

static void test_error_comes_back(void)
{
    struct json *res = (struct json *)1;
    struct ls_err err = {0};
    int calls = 0;
    int rc = checkproc_run("/nonexistent/lockstorm-run", 0, 1, never, &calls, &res, &err);
    CHECKF(rc < 0 && rc != LS_EINTR, "rc %d", rc);
    CHECK_INT(err.code, rc);
    CHECKF(strstr(err.msg, "/nonexistent/lockstorm-run") != NULL, "message '%s'", err.msg);
    CHECK(res == NULL);
    CHECK(calls >= 1);
    CHECK(no_children());
}

static void test_stop_kills_and_reaps(void)
{
    char dir[] = "/tmp/lscheckproc-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    struct json *res = NULL;
    struct ls_err err = {0};
    int calls = 0;
    int rc = checkproc_run(dir, 0, 1, stop_at_once, &calls, &res, &err);
    CHECK_INT(rc, LS_EINTR);
    CHECK(res == NULL);
    CHECK_INT(calls, 1);
    CHECK(no_children());
    /* nothing written into the directory by the stopped child (no temp files) */
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", dir);
    CHECK(system(cmd) == 0);
    rmdir(dir);
}

int main(void)
{
    RUN(test_error_comes_back);
    RUN(test_stop_kills_and_reaps);
    return t_finish();
}
