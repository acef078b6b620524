/*
 * test_clockshim.c: the clock shim (faults/shim/clockshim.c) and its
 * control file (util/clockctl.h). A child process exec'd with the shim
 * preloaded sees a jump on clock_gettime(CLOCK_REALTIME), gettimeofday and
 * time, a drift as a faster clock, and CLOCK_MONOTONIC untouched, and it
 * acknowledges each change; a real redis-server started with a control
 * file (cluster.h node_start) expires a key early after a forward jump,
 * keeps one longer after a backward jump, and shows both in TIME; a node
 * started without one runs without the shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/cluster.h"
#include "util/proc.h"
#include "harness/workload.h"
#include "tests/unit/testing.h"
#include "util/clockctl.h"
#include "util/err.h"
#include "util/timeutil.h"

#define CHILD_ARG "--clockshim-child"

static char *tmp;

/* ---- the child: runs with the shim preloaded ---- */

static int64_t ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * LS_NS_PER_S + ts->tv_nsec;
}

/* Prints "rt tod time mono rt2" (ns, ns, s, ns, ns): the three realtime
 * calls, the monotonic clock, and realtime again after 100 ms of monotonic
 * sleep (for the drift test). */
static int child_main(void)
{
    struct timespec rt, mono, rt2;
    struct timeval tv;
    clock_gettime(CLOCK_REALTIME, &rt);
    gettimeofday(&tv, NULL);
    time_t t = time(NULL);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    struct timespec d = {0, 100000000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
    clock_gettime(CLOCK_REALTIME, &rt2);
    printf("%lld %lld %lld %lld %lld\n", (long long)ts_ns(&rt),
           (long long)tv.tv_sec * LS_NS_PER_S + (long long)tv.tv_usec * LS_NS_PER_US,
           (long long)t, (long long)ts_ns(&mono), (long long)ts_ns(&rt2));
    return 0;
}

struct sample {
    long long rt, tod, t, mono, rt2;
    int64_t real_before, real_after, mono_before, mono_after;
    pid_t pid;
};

/* Contract: run this binary as the child with the shim and control file
 * ctl_path, and read its line. Returns 0 or -1. */
static int run_child(const char *shim, const char *ctl_path, struct sample *s)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    s->real_before = ls_realtime_ns();
    s->mono_before = ls_now_ns();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        setenv("LD_PRELOAD", shim, 1);
        setenv(LS_CLOCKCTL_ENV, ctl_path, 1);
        /* an ASan build of this binary accepts a preloaded library before its runtime */
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
        execl(exe, exe, CHILD_ARG, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char buf[512];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(buf) - 1 && (r = read(pfd[0], buf + n, sizeof(buf) - 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    s->real_after = ls_realtime_ns();
    s->mono_after = ls_now_ns();
    s->pid = pid;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return sscanf(buf, "%lld %lld %lld %lld %lld", &s->rt, &s->tod, &s->t, &s->mono, &s->rt2) == 5
               ? 0
               : -1;
}

static char shim[PATH_MAX];

static void test_child_sees_jump(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/child.clock", tmp);
    struct ls_err err = {0};
    REQUIRE(clockctl_create(path, &err) == 0);
    struct ls_clockctl *c = NULL;
    REQUIRE(clockctl_map(path, &c, &err) == 0);

    /* no shift yet: the child sees the true clock */
    struct sample s;
    REQUIRE(run_child(shim, path, &s) == 0);
    CHECK(s.rt >= s.real_before && s.rt <= s.real_after);

    int64_t jump = 7200 * LS_NS_PER_S + 123 * LS_NS_PER_MS;
    uint64_t gen = clockctl_jump(c, ls_realtime_ns(), jump);
    REQUIRE(run_child(shim, path, &s) == 0);
    CHECKF(s.rt >= s.real_before + jump && s.rt <= s.real_after + jump,
           "clock_gettime %lld not in [%lld, %lld]", s.rt, (long long)(s.real_before + jump),
           (long long)(s.real_after + jump));
    CHECKF(s.tod >= s.real_before + jump - LS_NS_PER_US && s.tod <= s.real_after + jump,
           "gettimeofday %lld", s.tod);
    CHECKF(s.t >= (s.real_before + jump) / LS_NS_PER_S && s.t <= (s.real_after + jump) / LS_NS_PER_S,
           "time %lld", s.t);
    CHECKF(s.mono >= s.mono_before && s.mono <= s.mono_after, "monotonic %lld was shifted", s.mono);
    int64_t pid = 0;
    CHECK(clockctl_acked(c, &pid) == gen);
    CHECK_INT(pid, s.pid);

    /* backward past the epoch start of the jump: -3 h in all */
    int64_t back = -3 * 3600 * LS_NS_PER_S;
    clockctl_reset(c);
    clockctl_jump(c, ls_realtime_ns(), back);
    REQUIRE(run_child(shim, path, &s) == 0);
    CHECK(s.rt >= s.real_before + back && s.rt <= s.real_after + back);
    CHECK(s.tod >= s.real_before + back - LS_NS_PER_US && s.tod <= s.real_after + back);
    CHECK(s.t >= (s.real_before + back) / LS_NS_PER_S && s.t <= (s.real_after + back) / LS_NS_PER_S);

    /* drift: 10 s per true second; the child's 100 ms monotonic sleep
     * shows as about 1 s of realtime */
    clockctl_reset(c);
    clockctl_set_rate(c, ls_realtime_ns(), 10.0);
    REQUIRE(run_child(shim, path, &s) == 0);
    long long delta = s.rt2 - s.rt;
    CHECKF(delta >= 900 * LS_NS_PER_MS && delta <= 10 * 200 * LS_NS_PER_MS,
           "drift 10: 100ms of sleep took %lld ns of realtime", delta);
    clockctl_unmap(c);
}

static void test_control_file_rules(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/rules.clock", tmp);
    struct ls_err err = {0};
    REQUIRE(clockctl_create(path, &err) == 0);
    struct ls_clockctl *c = NULL;
    REQUIRE(clockctl_map(path, &c, &err) == 0);
    struct ls_clockstate st;
    CHECK(ls_clockctl_snapshot(c, &st) == 1);
    CHECK_INT(ls_clockstate_apply(&st, 1000), 1000);
    /* a drift is continuous where it starts; a jump adds */
    clockctl_set_rate(c, 5000, 2.0);
    ls_clockctl_snapshot(c, &st);
    CHECK_INT(ls_clockstate_apply(&st, 5000), 5000);
    CHECK_INT(ls_clockstate_apply(&st, 6000), 7000);
    clockctl_jump(c, 6000, -500);
    ls_clockctl_snapshot(c, &st);
    CHECK_INT(ls_clockstate_apply(&st, 6000), 6500);
    CHECK_INT(ls_clockstate_apply(&st, 7000), 8500);
    clockctl_reset(c);
    ls_clockctl_snapshot(c, &st);
    CHECK_INT(ls_clockstate_apply(&st, 123456), 123456);
    clockctl_unmap(c);
    /* not a control file */
    snprintf(path, sizeof(path), "%s/junk.clock", tmp);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    for (int i = 0; i < 80; i++)
        fputc('x', f);
    fclose(f);
    ls_err_clear(&err);
    CHECK(clockctl_map(path, &c, &err) < 0);
    CHECK(strstr(err.msg, "not a version") != NULL);
}

/* ---- a real redis-server ---- */

static redisReply *cmd(redisContext *c, const char *fmt, const char *a1, const char *a2)
{
    return a2 ? redisCommand(c, fmt, a1, a2) : a1 ? redisCommand(c, fmt, a1) : redisCommand(c, fmt);
}

static long long integer(redisContext *c, const char *fmt, const char *key)
{
    redisReply *r = cmd(c, fmt, key, NULL);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -99;
    if (r)
        freeReplyObject(r);
    return v;
}

static int64_t node_time(redisContext *c)
{
    redisReply *r = redisCommand(c, "TIME");
    int64_t v = -1;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        v = strtoll(r->element[0]->str, NULL, 10) * LS_NS_PER_S +
            strtoll(r->element[1]->str, NULL, 10) * LS_NS_PER_US;
    if (r)
        freeReplyObject(r);
    return v;
}

static void test_redis_expires_early(void)
{
    char base[PATH_MAX], nodes[PATH_MAX + 8], path[PATH_MAX + 32];
    snprintf(base, sizeof(base), "%s/redis", tmp);
    snprintf(nodes, sizeof(nodes), "%s/nodes", base);
    REQUIRE(mkdir(base, 0700) == 0 && mkdir(nodes, 0700) == 0);
    snprintf(path, sizeof(path), "%s/node-0.clock", nodes);
    struct ls_err err = {0};
    REQUIRE(clockctl_create(path, &err) == 0);
    struct node_proc n, plain;
    memset(&n, 0, sizeof(n));
    memset(&plain, 0, sizeof(plain));
    int rc = node_start(&n, base, "node-0", PERSIST_NONE, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc != 0)
        return;
    CHECK_STR(n.clock_file, path);
    REQUIRE(node_start(&plain, base, "node-1", PERSIST_NONE, &err) == 0);
    CHECK(plain.clock_file[0] == '\0');
    struct ls_clockctl *ctl = NULL;
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout(n.host, n.port, tv);
    redisContext *pc = redisConnectWithTimeout(plain.host, plain.port, tv);
    if (!c || c->err || !pc || pc->err || clockctl_map(path, &ctl, &err) != 0) {
        CHECK(!"connect to the nodes and map the control file");
        goto out;
    }
    redisSetTimeout(c, tv);
    int64_t pid = 0;
    clockctl_acked(ctl, &pid);
    CHECKF(pid == n.pid, "the shim in redis-server %d attached (ack pid %lld)", (int)n.pid,
           (long long)pid);

    redisReply *r = cmd(c, "SET short v PX 5000", NULL, NULL);
    freeReplyObject(r);
    r = cmd(c, "SET long v PX 600000", NULL, NULL);
    freeReplyObject(r);
    CHECK_INT(integer(c, "EXISTS %s", "short"), 1);

    /* forward 6 s: the 5 s key is gone at once, the 10 min one has ~594 s */
    int64_t t0 = ls_realtime_ns();
    uint64_t gen = clockctl_jump(ctl, t0, 6 * LS_NS_PER_S);
    int64_t before = ls_realtime_ns();
    int64_t nt = node_time(c);
    int64_t after = ls_realtime_ns();
    CHECKF(nt >= before + 6 * LS_NS_PER_S - LS_NS_PER_MS && nt <= after + 6 * LS_NS_PER_S + LS_NS_PER_MS,
           "TIME %lld shows +6s", (long long)nt);
    CHECK(clockctl_acked(ctl, &pid) >= gen && pid == n.pid);
    CHECK_INT(integer(c, "EXISTS %s", "short"), 0);
    long long pttl = integer(c, "PTTL %s", "long");
    CHECKF(pttl > 590000 && pttl <= 594000, "PTTL long %lld", pttl);
    /* the node without the shim kept the true clock */
    int64_t pt = node_time(pc);
    CHECK(pt > 0 && pt < ls_realtime_ns() + LS_NS_PER_S);

    /* back to true time; a 3 s key set now lives ~13 s once the clock
     * steps 10 s back */
    clockctl_reset(ctl);
    r = cmd(c, "SET k2 v PX 3000", NULL, NULL);
    freeReplyObject(r);
    clockctl_jump(ctl, ls_realtime_ns(), -10 * LS_NS_PER_S);
    pttl = integer(c, "PTTL %s", "k2");
    CHECKF(pttl > 12000 && pttl <= 13000, "PTTL k2 after the backward jump %lld", pttl);
out:
    if (c)
        redisFree(c);
    if (pc)
        redisFree(pc);
    clockctl_unmap(ctl);
    pid_t p1 = n.pid, p2 = plain.pid;
    node_stop(&n);
    node_stop(&plain);
    /* nothing left: the processes were stopped and reaped by pid */
    CHECK(kill(p1, 0) < 0 && errno == ESRCH);
    CHECK(kill(p2, 0) < 0 && errno == ESRCH);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], CHILD_ARG) == 0)
        return child_main();
    struct ls_err err = {0};
    if (clockctl_shim_path(shim, sizeof(shim), &err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    tmp = t_tmpdir();
    RUN(test_control_file_rules);
    RUN(test_child_sees_jump);
    RUN(test_redis_expires_early);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
