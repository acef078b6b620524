/*
 * test_reaper.c: the rules reaper (harness/reaper.c) after the harness
 * died in the middle of an iptables call, and proc_tagged_alive, which it
 * waits on. Real processes and, as root with iptables, real rules (a DROP
 * of tcp to 127.0.0.1 port 9, tagged with a comment of a pid of ours,
 * removed at the end whatever happened).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/reaper.h"
#include "testing.h"
#include "util/iptables.h"
#include "util/proc.h"
#include "util/timeutil.h"

/* a tagged child counts while it lives, and no longer once reaped; an
 * entry of another run never counts */
static void test_tagged_alive(void)
{
    char id[32], tag[64];
    snprintf(id, sizeof(id), "a11ce%d", (int)getpid());
    snprintf(tag, sizeof(tag), "%s=%s", PROC_RUN_TAG, id);
    setenv(PROC_RUN_TAG, id, 1);
    CHECK_INT(proc_tagged_alive(tag), 0); /* ourselves: never counted */
    char *argv[] = {"sleep", "30", NULL};
    struct ls_err err = {0};
    pid_t p = proc_spawn(argv, NULL, &err);
    unsetenv(PROC_RUN_TAG);
    REQUIRE(p > 0);
    CHECK_INT(proc_tagged_alive(tag), 1);
    CHECK_INT(proc_tagged_alive("LOCKSTORM_RUN=other"), 0);
    kill(p, SIGKILL);
    CHECK(proc_wait(p, 5 * LS_NS_PER_S, NULL) == 1);
    CHECK_INT(proc_tagged_alive(tag), 0);
}

/* Contract: the path of an executable iptables, or NULL. */
static const char *iptables_path(void)
{
    static const char *const cand[] = {"/usr/sbin/iptables", "/sbin/iptables"};
    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
        if (access(cand[i], X_OK) == 0)
            return cand[i];
    return NULL;
}

/* Contract: 1 when `iptables -S OUTPUT` lists a rule with comment, 0 when
 * not, -1 when it could not be run. */
static int rule_listed(const char *ipt, const char *comment)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "%s -w 5 -S OUTPUT", ipt);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[1024], quoted[64];
    snprintf(quoted, sizeof(quoted), "\"%s\"", comment);
    int found = 0;
    while (fgets(line, sizeof(line), f))
        found |= strstr(line, quoted) != NULL;
    return pclose(f) == 0 ? found : -1;
}

/* The harness dies (no goodbye) while an iptables call of its is still to
 * commit a rule: here a tagged `sh` without a death signal, as the
 * harness's own calls are (util/iptables.c), that adds the rule 0.4 s
 * after the death. A reaper that swept once at the death left that rule
 * for good; it must sweep again once nothing tagged is left. */
static void test_rules_after_death(void)
{
    const char *ipt = iptables_path();
    if (geteuid() != 0 || !ipt) {
        printf("ok - # SKIP %s\n", ipt ? "not root" : "no iptables");
        return;
    }
    int prev = 0;
    prctl(PR_GET_CHILD_SUBREAPER, &prev);
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); /* the orphans come to us */
    int info[2];
    REQUIRE(pipe(info) == 0);
    pid_t h = fork(); /* the harness */
    REQUIRE(h >= 0);
    if (h == 0) {
        close(info[0]);
        char id[32], comment[IPT_COMMENT_MAX], cmd[512];
        snprintf(id, sizeof(id), "dead%d", (int)getpid());
        setenv(PROC_RUN_TAG, id, 1);
        ipt_comment(getpid(), comment, sizeof(comment));
        struct reaper rp = {0};
        struct ls_err err = {0};
        if (reaper_rules_start(&rp, comment, &err) < 0)
            _exit(3);
        snprintf(cmd, sizeof(cmd),
                 "sleep 0.4; exec %s -w 5 -A OUTPUT -p tcp -d 127.0.0.1 --dport 9 "
                 "-m comment --comment %s -j DROP",
                 ipt, comment);
        char *argv[] = {"sh", "-c", cmd, NULL};
        struct spawn_opts po = {.path = "/bin/sh", .what = "sh",
                               .flags = PROC_SAME_GROUP | PROC_NO_DEATHSIG | PROC_KEEP_SIGNALS};
        if (proc_spawn_opts(argv, &po, &err) < 0)
            _exit(4);
        int pids[2] = {(int)getpid(), (int)rp.pid};
        if (write(info[1], pids, sizeof(pids)) != (ssize_t)sizeof(pids))
            _exit(5);
        _exit(0); /* dead without a goodbye: its pipe to the reaper closes */
    }
    close(info[1]);
    int pids[2] = {0, 0};
    ssize_t got = read(info[0], pids, sizeof(pids));
    close(info[0]);
    int st = 0;
    waitpid(h, &st, 0);
    CHECKF(got == (ssize_t)sizeof(pids) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "the harness stand-in: %zd bytes, wait status %d", got, st);
    char comment[IPT_COMMENT_MAX];
    ipt_comment(h, comment, sizeof(comment)); /* its pid: its rules' comment */
    /* the reaper is ours now (subreaper): wait for its exit, bounded */
    if (got == (ssize_t)sizeof(pids))
        CHECK(proc_wait((pid_t)pids[1], 20 * LS_NS_PER_S, NULL) == 1);
    /* then the sh (its iptables), so that its rule is in if it ever will be */
    int64_t until = ls_now_ns() + 10 * LS_NS_PER_S;
    while (waitpid(-1, NULL, WNOHANG) >= 0 && ls_now_ns() < until)
        ls_sleep_ns(10 * LS_NS_PER_MS);
    int listed = rule_listed(ipt, comment);
    CHECKF(listed == 0, "the rule tagged %s is %s after the reaper exited", comment,
           listed < 0 ? "unknown (iptables -S failed)" : "still there");
    struct ls_err err = {0};
    ipt_remove_tagged(comment, &err); /* whatever happened */
    prctl(PR_SET_CHILD_SUBREAPER, prev);
}

int main(void)
{
    RUN(test_tagged_alive);
    RUN(test_rules_after_death);
    return t_finish();
}
