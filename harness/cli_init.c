/*
 * cli_init.c: `lockstorm init` (see cli_init.h). The starters are text
 * with a comment on every key, kept here so an installed binary needs no
 * template files. Each is meant to show its story in a few seconds on a
 * laptop and carries an expect: block stating what it must show, so the
 * starter is a CI gate as written. Not here: any workload semantics (the
 * loader decides whether a starter loads).
 */
#include "harness/cli_init.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/init_text.h"
#include "harness/workload.h"
#include "util/err.h"
#include "util/strbuf.h"
#include "util/exedir.h"

struct scenario {
    const char *name;
    const char *summary;
    const char *needs;   /* what a build must have for it to load */
    const char *text;    /* "@ADAPTERS@" is replaced by the bundled adapters directory,
                          * "@FILE@" by the file the starter is written to */
};

/* The header names the starter's own file and how to run it. */
#define HEAD(name)                                                                             \
    "# @FILE@: lockstorm starter workload (`lockstorm init --scenario " name "`)\n"            \
    "# run it: lockstorm run @FILE@\n"

static const struct scenario scenarios[] = {
    {"correct-lock", "a correct lock under holder pauses: never granted twice, fencing saves the "
     "data (the default)",
     "the redis-single lock and the pause fault",
     HEAD("correct-lock")
     "# A correct lock: redis-single (SET NX PX, a release that compares the\n"
     "# token first, fencing tokens). Whoever holds the lock is paused (SIGSTOP,\n"
     "# as a long GC pause would) for longer than the TTL, so a paused holder\n"
     "# overstays its lease (stale-holder: no lock can prevent that); the lock is\n"
     "# still never granted twice (lock-broken 0), and the fenced counter rejects\n"
     "# every write of a stale holder (no fenced lost update). This is what a\n"
     "# PASS looks like; swap in the broken release and the gate fails:\n"
     "#   lockstorm run @FILE@ --set lock.impl=naive-del\n"
     "# Then replace the lock with your own (`lockstorm init --scenario adapter`).\n"
     "name: correct-lock\n"
     "description: a correct lock under holder pauses; never granted twice, fencing saves the "
     "data\n"
     INIT_TEXT_RUN_4S
     "  impl: redis-single        # `lockstorm list locks`\n"
     INIT_TEXT_TTL_RETRY
     "  fencing: true             # a fencing token with each grant, checked by the storage\n"
     INIT_TEXT_PAUSED_HOLDERS
     "  checks.fencing.fenced_lost_updates: 0        # fencing kept the data right\n"
     INIT_TEXT_GRANTS_GATE},
    {"stolen-lock", "a holder paused past its TTL; an unconditional DEL steals the next lock",
     "the naive-del lock and the pause fault",
     HEAD("stolen-lock")
     "# A holder is paused (SIGSTOP, as a long GC pause would) past its lease. The\n"
     "# lock releases with an unconditional DEL, so the paused holder, once it\n"
     "# wakes, deletes the lock the next holder now owns, and a third worker gets\n"
     "# it while the second still holds it: the lock was granted twice\n"
     "# (lock-broken). Run it, then change lock.impl to redis-single (its release\n"
     "# compares the token first): lock-broken drops to 0 and only stale-holder\n"
     "# violations remain, which fencing makes harmless.\n"
     "#   lockstorm run @FILE@\n"
     "#   lockstorm run @FILE@ --set lock.impl=redis-single\n"
     "name: stolen-lock\n"
     "description: holders paused past their TTL; an unconditional DEL frees the next holder's lock\n"
     "seed: 7                     # every random choice derives from it: same seed, same run\n"
     "duration: 6s                # how long the workers run\n"
     "\n"
     "cluster:\n"
     "  topology: independent     # lockstorm starts its own redis-server on a free loopback port\n"
     "  nodes: 1\n"
     "\n"
     "lock:\n"
     "  impl: naive-del           # `lockstorm list locks`; try redis-single\n"
     "  ttl: 200ms                # the lease asked for with each grant\n"
     "  retry: {attempts: 100, delay: 5ms, jitter: 5ms}   # per hold, before giving up\n"
     "  fencing: true             # ask for fencing tokens where the lock offers them\n"
     "\n"
     "workers:\n"
     "  count: 6                  # processes contending for the lock\n"
     "  resources: 1              # one lock name: every worker wants the same lock\n"
     "  hold: {dist: uniform, min: 30ms, max: 80ms}   # critical-section length\n"
     "  think: 2ms                # pause between a release and the next acquire\n"
     "\n"
     "faults:                     # `lockstorm list faults`\n"
     "  # pause whoever holds the lock at that instant, for longer than the TTL\n"
     "  - {kind: pause, target: holder, at: 500ms, duration: 400ms, every: 1s}\n"
     "\n"
     "expect:                     # the CI gate: exit 0 exactly when every line holds\n"
     "  checks.mutex.by_class.lock_broken: \"> 0\"     # the bug shows\n"
     "  counts.grants: \">= 50\"                       # and the lock was really exercised\n"},
    {"failover", "single-node lock on a primary with replicas; a failover loses a grant",
     "cluster.topology replicated and the failover fault",
     HEAD("failover")
     "# One primary and two replicas, lockstorm as the operator (no Sentinel).\n"
     "# The primary's replication link is cut 700ms before the primary is\n"
     "# killed, so the grants it acknowledged in that window exist nowhere\n"
     "# else. lockstorm promotes a replica that never saw them, and it grants\n"
     "# the lock again while the holder is still in its hold with a valid\n"
     "# lease: lock-broken, though the lock did nothing wrong. Then try\n"
     "# lock.wait_replicas: 1 (a grant no replica acknowledged is refused):\n"
     "#   lockstorm run @FILE@\n"
     "#   lockstorm run @FILE@ --set lock.wait_replicas=1 --set expect={}\n"
     "name: failover\n"
     "description: replication cut, primary killed, replica promoted; a grant is lost\n"
     "seed: 11\n"
     "duration: 5s\n"
     "\n"
     "cluster:\n"
     "  topology: replicated      # one primary and `replicas` replicas, started by lockstorm\n"
     "  replicas: 2\n"
     "  sentinels: 0              # 0: lockstorm promotes; 3: Sentinel does (mode: sentinel)\n"
     "\n"
     "lock:\n"
     "  impl: redis-single        # SET NX PX on whichever node is the primary\n"
     "  ttl: 600ms\n"
     "  retry: {attempts: 1000, delay: 5ms, jitter: 5ms}\n"
     "  wait_replicas: 0          # 1 = WAIT for one replica after each acquire\n"
     "\n"
     "workers:\n"
     "  count: 6\n"
     "  resources: 2\n"
     "  hold: 400ms               # long enough to span the promotion\n"
     "  think: 1ms\n"
     "\n"
     "faults:\n"
     "  # cut replication 700ms before killing the primary, promote a replica 50ms later\n"
     "  - {kind: failover, mode: manual, how: kill, cut_before: 700ms, at: 800ms, duration: 50ms,\n"
     "     every: 2s, count: 2}\n"
     "\n"
     "expect:\n"
     "  checks.mutex.by_class.lock_broken: \"> 0\"     # the failover lost a grant\n"},
    {"redlock-clock", "Redlock on 3 nodes; a majority's clocks jump forward and expire every lock",
     "the redlock lock and the clock fault (the LD_PRELOAD clock shim)",
     HEAD("redlock-clock")
     "# Redlock on three independent nodes. Redlock assumes clocks run at about\n"
     "# the same rate; here the clocks of two nodes (a majority) jump 5s forward\n"
     "# every second, so they expire the lock early, and another worker gets a\n"
     "# majority while the holder still believes its grant is valid\n"
     "# (lock-broken). Without the clock fault the same workload is safe:\n"
     "#   lockstorm run @FILE@\n"
     "#   lockstorm run @FILE@ --set faults=[]\n"
     "name: redlock-clock\n"
     "description: clock jumps on a majority of Redlock nodes expire a held lock\n"
     "seed: 7\n"
     "duration: 6s\n"
     "\n"
     "cluster:\n"
     "  topology: independent\n"
     "  nodes: 3                  # independent nodes: Redlock needs 2 of 3\n"
     "\n"
     "lock:\n"
     "  impl: redlock\n"
     "  ttl: 2s                   # validity = ttl - elapsed - drift allowance\n"
     "  retry: {attempts: 100, delay: 10ms, jitter: 10ms}\n"
     "  options:\n"
     "    node_timeout: 50ms      # per-node timeout of each request\n"
     "\n"
     "workers:\n"
     "  count: 4\n"
     "  resources: 1\n"
     "  hold: {dist: uniform, min: 100ms, max: 400ms}\n"
     "  think: 5ms\n"
     "\n"
     "faults:\n"
     "  # step the clocks of nodes 0 and 1 forward; each occurrence restores them at its end\n"
     "  - {kind: clock, nodes: [0, 1], jump: 5s, at: 1s, duration: 300ms, every: 1s}\n"
     "\n"
     "expect:\n"
     "  checks.mutex.by_class.lock_broken: \"> 0\"     # the clock jump broke the lock\n"},
    {"ttl-sweep", "a correct lock under pauses; sweep the TTL to find the smallest safe one",
     "the redis-single lock and the pause fault",
     HEAD("ttl-sweep")
     "# A correct lock (redis-single) under holder pauses of 150ms and critical\n"
     "# sections with a long tail. A holder overstays (stale-holder) whenever its\n"
     "# pause plus its work outlasts the TTL; the lock itself is never granted\n"
     "# twice. Sweep the TTL and compare stale-holder counts and acquire\n"
     "# latency; the smallest TTL with no stale-holder is the safe one for this\n"
     "# load (and every longer TTL costs waiting when a holder dies):\n"
     "#   for ttl in 100ms 200ms 400ms 800ms; do\n"
     "#     lockstorm run @FILE@ --set lock.ttl=$ttl --out runs/ttl-$ttl --quiet\n"
     "#     lockstorm get runs/ttl-$ttl workload.lock.ttl checks.mutex.by_class.stale_holder\n"
     "#   done\n"
     "# `lockstorm sweep` runs such a matrix (TTL x pause length) and recommends\n"
     "# the smallest safe TTL (docs/sweep.md).\n"
     "name: ttl-sweep\n"
     "description: a correct lock under pauses; the TTL decides how often holders overstay\n"
     "seed: 7\n"
     "duration: 6s\n"
     "\n"
     "cluster:\n"
     "  topology: independent\n"
     "  nodes: 1\n"
     "\n"
     "lock:\n"
     "  impl: redis-single        # SET NX PX, compare-and-delete release\n"
     "  ttl: 200ms                # the value to sweep (--set lock.ttl=...)\n"
     "  retry: {attempts: 200, delay: 5ms, jitter: 5ms}\n"
     "\n"
     "workers:\n"
     "  count: 6\n"
     "  resources: 2\n"
     "  hold: {dist: lognormal, value: 40ms, sigma: 0.6, max: 400ms}   # median 40ms, long tail\n"
     "  think: 5ms\n"
     "\n"
     "faults:\n"
     "  - {kind: pause, target: holder, at: 500ms, duration: 150ms, every: 700ms}\n"
     "\n"
     "expect:\n"
     "  checks.mutex.by_class.lock_broken: 0         # a correct lock never grants twice\n"
     "  checks.fencing.fenced_lost_updates: 0        # fencing keeps the data right\n"},
    {"adapter", "your lock library (any language) through an adapter process, under pauses",
     "the external lock implementation (adapters, docs/protocol.md)",
     HEAD("adapter")
     "# Test a lock library written in another language: lockstorm starts one\n"
     "# adapter process per worker (lock.options.command, run without a shell)\n"
     "# and speaks the adapter protocol with it (docs/adapters.md); the workers\n"
     "# do the holds, the protected-resource writes and the event logs exactly as\n"
     "# for the built-in locks. This starter uses the bundled Node.js adapter of\n"
     "# the hand-rolled ioredis lock (needs node, and `npm ci` in adapters/node);\n"
     "# replace the command with your own adapter. Holders are paused past the\n"
     "# TTL: a lock without renewal shows stale-holder violations, a correct one\n"
     "# never lock-broken.\n"
     "#   lockstorm run @FILE@\n"
     "name: adapter\n"
     "description: a lock library behind an adapter process, holders paused past the TTL\n"
     "seed: 7\n"
     "duration: 6s\n"
     "\n"
     "cluster:\n"
     "  topology: independent\n"
     "  nodes: 1\n"
     "\n"
     "lock:\n"
     "  impl: external            # an adapter process per worker\n"
     "  ttl: 300ms\n"
     "  retry: {attempts: 100, delay: 10ms, jitter: 10ms}\n"
     "  options:\n"
     "    command: [node, \"@ADAPTERS@/node/ioredis-handrolled.js\"]   # your adapter's argv\n"
     "    adapter: {}             # handed to the adapter untouched (its library's settings)\n"
     "    request_timeout: 2s     # then the outcome of a request is unknown\n"
     "\n"
     "workers:\n"
     "  count: 4\n"
     "  resources: 1\n"
     "  hold: {dist: uniform, min: 20ms, max: 60ms}\n"
     "  think: 5ms\n"
     "\n"
     "faults:\n"
     "  - {kind: pause, target: holder, at: 1s, duration: 500ms, every: 1.5s}\n"
     "\n"
     "expect:\n"
     "  checks.mutex.by_class.stale_holder: \"> 0\"    # paused holders overstayed\n"
     "  checks.mutex.by_class.lock_broken: 0          # the library never granted twice\n"},
};
#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

const char *const *cli_init_scenarios(void)
{
    static const char *names[NSCENARIOS + 1];
    for (size_t i = 0; i < NSCENARIOS; i++)
        names[i] = scenarios[i].name;
    names[NSCENARIOS] = NULL;
    return names;
}

static const struct scenario *find_scenario(const char *name)
{
    for (size_t i = 0; name && i < NSCENARIOS; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

/* Contract: the bundled adapters directory into buf: next to the binary's
 * install prefix (share/lockstorm/adapters), the build tree's parent, or
 * the source tree; "adapters" (relative) when none exists. */
static void adapters_dir(char *buf, size_t n)
{
    static const char *const rel[] = {"/../share/lockstorm/adapters", "/../adapters"};
    if (exe_relative(rel, sizeof(rel) / sizeof(rel[0]), 1, buf))
        return;
#ifdef LS_SOURCE_DIR
    struct stat st;
    snprintf(buf, n, "%s/adapters", LS_SOURCE_DIR);
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
        return;
#endif
    snprintf(buf, n, "adapters");
}

char *cli_init_text(const char *name, const char *file)
{
    const struct scenario *s = find_scenario(name);
    if (!s)
        return NULL;
    char dir[PATH_MAX], own[PATH_MAX];
    adapters_dir(dir, sizeof(dir));
    if (!file || strcmp(file, "-") == 0)
        snprintf(own, sizeof(own), "%s.yaml", s->name);
    else
        snprintf(own, sizeof(own), "%s", file);
    for (char *c = own; *c; c++) /* it goes into a comment line */
        if ((unsigned char)*c < 0x20)
            *c = '?';
    struct strbuf sb = STRBUF_INIT;
    const char *p = s->text, *a, *f;
    for (;;) {
        a = strstr(p, "@ADAPTERS@");
        f = strstr(p, "@FILE@");
        const char *mark = a && (!f || a < f) ? a : f;
        if (!mark)
            break;
        sb_append(&sb, p, (size_t)(mark - p));
        sb_puts(&sb, mark == a ? dir : own);
        p = mark + strlen(mark == a ? "@ADAPTERS@" : "@FILE@");
    }
    sb_puts(&sb, p);
    return sb_steal(&sb);
}

/* Contract: 0 when the starter loads; else -1 with the loader's first
 * error in why. */
static int starter_loads(const char *name, const char *text, char *why, size_t n)
{
    struct workload *w = NULL;
    struct ls_err err = {0};
    int rc = workload_load_string(name, text, NULL, 0, &w, NULL, &err);
    workload_free(w);
    if (rc == 0)
        return 0;
    snprintf(why, n, "%s", err.msg);
    return -1;
}

static int list_scenarios(void)
{
    printf("scenarios (lockstorm init --scenario NAME [FILE]):\n");
    for (size_t i = 0; i < NSCENARIOS; i++) {
        char *text = cli_init_text(scenarios[i].name, NULL);
        char why[512];
        int ok = starter_loads(scenarios[i].name, text, why, sizeof(why)) == 0;
        free(text);
        printf("  %-14s %s%s\n", scenarios[i].name, scenarios[i].summary,
               ok ? "" : " [not available in this build]");
    }
    return 0;
}

static int init_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "lockstorm: init: %s%s%s; see 'lockstorm help init'\n", msg,
            arg ? " " : "", arg ? arg : "");
    return 2;
}

/* Contract: write text to path (created; replaced only with force) or to
 * stdout for "-". Returns 0, 2 (exists) or 3 (I/O error), message printed. */
static int write_starter(const char *path, const char *text, int force)
{
    if (strcmp(path, "-") == 0) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : 3;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0) {
        int e = errno;
        if (e == EEXIST) {
            fprintf(stderr, "lockstorm: init: %s exists; choose another FILE or add --force\n",
                    path);
            return 2;
        }
        fprintf(stderr, "lockstorm: error: init: create %s: %s\n", path, strerror(e));
        return 3;
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            fprintf(stderr, "lockstorm: error: init: write %s: %s\n", path, strerror(e));
            return 3;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0) {
        fprintf(stderr, "lockstorm: error: init: write %s: %s\n", path, strerror(errno));
        return 3;
    }
    return 0;
}

int cli_init_main(int argc, char **argv)
{
    const char *name = "correct-lock", *file = NULL;
    int force = 0, list = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0) {
            if (i + 1 >= argc)
                return init_usage("--scenario needs a NAME", NULL);
            name = argv[++i];
        } else if (strncmp(argv[i], "--scenario=", 11) == 0) {
            name = argv[i] + 11;
        } else if (strcmp(argv[i], "--force") == 0) {
            force = 1;
        } else if (strcmp(argv[i], "--list") == 0) {
            list = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return init_usage("unknown option", argv[i]);
        } else if (file) {
            return init_usage("unexpected argument", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (list)
        return list_scenarios();
    const struct scenario *s = find_scenario(name);
    if (!s) {
        fprintf(stderr, "lockstorm: init: unknown scenario '%s'; one of:", name);
        for (size_t i = 0; i < NSCENARIOS; i++)
            fprintf(stderr, " %s", scenarios[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    char defpath[128];
    if (!file) {
        snprintf(defpath, sizeof(defpath), "%s.yaml", s->name);
        file = defpath;
    }
    char *text = cli_init_text(s->name, file);
    char why[1024];
    if (starter_loads(file, text, why, sizeof(why)) < 0) {
        fprintf(stderr,
                "lockstorm: init: scenario '%s' needs %s, which this build of lockstorm does not "
                "offer yet; nothing written (the starter does not load: %s)\n",
                s->name, s->needs, why);
        free(text);
        return 2;
    }
    int rc = write_starter(file, text, force);
    free(text);
    if (rc == 0 && strcmp(file, "-") != 0)
        fprintf(stderr, "lockstorm: wrote %s (scenario %s); run it: lockstorm run %s\n", file,
                s->name, file);
    return rc;
}
