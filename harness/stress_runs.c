/*
 * stress_runs.c: the runs of `lockstorm stress` (harness/stress_int.h): a
 * batch runs one workload file over consecutive seeds, each the lockstorm
 * binary itself as a `run` child (argv, no shell, util/proc.h, as
 * harness/sweep_run.c starts its cells), at most x->jobs at once. Signals
 * are taken synchronously (sigtimedwait): running children get SIGTERM by
 * pid, SIGKILL after a grace or at a second signal.
 */
#include "harness/stress_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness/childrun.h"
#include "util/proc.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define TICK_NS (100 * LS_NS_PER_MS)         /* the wait loop's period */
#define RUN_SLACK_NS (60 * LS_NS_PER_S)      /* a run may take 2 x duration + this */
#define RUN_GRACE_NS (30 * LS_NS_PER_S)      /* SIGTERM -> SIGKILL for a run */

static int64_t elapsed(const struct stress_ctx *x)
{
    return ls_now_ns() - x->t0;
}

const char *stress_signal_name(int s)
{
    return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : s == SIGHUP ? "SIGHUP" : "signal";
}

/* Contract: take one pending SIGINT/SIGTERM/SIGHUP, waiting up to ns (0: a
 * poll); the first is recorded in x->signal and said in one stderr line,
 * quiet or not. Returns the signal or 0. */
static int take_signal(struct stress_ctx *x, int64_t ns)
{
    sigset_t sigs;
    childrun_stop_signals(&sigs);
    struct timespec ts = {(time_t)(ns / LS_NS_PER_S), (long)(ns % LS_NS_PER_S)};
    int s = sigtimedwait(&sigs, NULL, &ts);
    if (s <= 0)
        return 0;
    if (!x->signal) {
        x->signal = s;
        fprintf(stderr, "lockstorm: %s: stopping (%d run%s stopped by pid; stress.json keeps "
                        "what is known)\n", stress_signal_name(s), x->running, x->running == 1 ? "" : "s");
    } else {
        fprintf(stderr, "lockstorm: %s again: the runs still stopping are killed now\n",
                stress_signal_name(s));
    }
    return s;
}

int stress_poll_signal(struct stress_ctx *x)
{
    take_signal(x, 0);
    return x->signal != 0;
}

int stress_budget_spent(const struct stress_ctx *x)
{
    return x->reduce_runs >= x->max_runs || ls_now_ns() - x->reduce_t0 >= x->reduce_time;
}

int stress_is_hit(const struct stress_ctx *x, const struct json *res)
{
    if (x->need_fail && stress_class_count(res, "fail") == 0)
        return 0;
    return !x->cls[0] || stress_class_count(res, x->cls) > 0;
}

static int mkdir_one(const struct stress_ctx *x, const char *rel)
{
    char p[PATH_MAX + 100];
    snprintf(p, sizeof(p), "%s/%s", x->dir, rel);
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Why a run could not run, in its words: the last "error:" line of its
 * log, else its last non-empty line (into buf; "" when none). */
static void log_tail(const struct stress_ctx *x, const struct srun *r, char *buf, size_t n)
{
    char path[PATH_MAX + 120];
    snprintf(path, sizeof(path), "%s/%s.log", x->dir, r->dir);
    childrun_log_reason(path, buf, n);
}

/* Contract: spawn the run of seed into a new record (x->runs); 0, or -1
 * when it could not start (the record is an error then). */
static int start_run(struct stress_ctx *x, const struct sbatch *b, uint64_t seed)
{
    struct srun *r = xcalloc(1, sizeof(*r));
    r->phase = b->phase;
    r->cand = b->cand;
    r->seed = seed;
    r->exit_code = -1;
    r->t_start = r->t_end = elapsed(x);
    r->timeout = 2 * b->planned + RUN_SLACK_NS;
    if (b->phase == PHASE_STRESS)
        snprintf(r->dir, sizeof(r->dir), "runs/seed-%llu", (unsigned long long)seed);
    else if (b->phase == PHASE_REDUCE)
        snprintf(r->dir, sizeof(r->dir), "reduce/c%03d-seed-%llu", b->cand,
                 (unsigned long long)seed);
    else
        snprintf(r->dir, sizeof(r->dir), "confirm/seed-%llu", (unsigned long long)seed);
    if (x->nruns == x->caprun) {
        x->caprun = x->caprun ? 2 * x->caprun : 32;
        x->runs = xrealloc(x->runs, (size_t)x->caprun * sizeof(*x->runs));
    }
    x->runs[x->nruns++] = r;
    if (b->budgeted)
        x->reduce_runs++;

    char parent[16];
    snprintf(parent, sizeof(parent), "%.*s", (int)(strchr(r->dir, '/') - r->dir), r->dir);
    char out[PATH_MAX + 100], log[PATH_MAX + 120], seedset[40];
    snprintf(out, sizeof(out), "%s/%s", x->dir, r->dir);
    snprintf(log, sizeof(log), "%s.log", out);
    snprintf(seedset, sizeof(seedset), "seed=%llu", (unsigned long long)seed);
    const char *args[540];
    int n = 0;
    const char *fixed[] = {x->self, "run", b->yaml, "--out", out, "--quiet", "--progress", "off",
                           "--format", x->formats};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        args[n++] = fixed[i];
    for (int i = 0; b->with_user_sets && i < x->nsets && n < 536; i++) {
        args[n++] = "--set";
        args[n++] = x->sets[i];
    }
    args[n++] = "--set";
    args[n++] = seedset;
    args[n] = NULL;
    struct ls_err err = {0};
    int rc = mkdir_one(x, parent);
    pid_t pid = rc < 0 ? -1 : proc_spawn((char *const *)args, log, &err);
    if (pid < 0) {
        r->state = SRUN_ERROR;
        snprintf(r->why, sizeof(r->why), "could not start: %s",
                 rc < 0 ? strerror(-rc) : err.msg);
        return -1;
    }
    r->pid = pid;
    r->state = SRUN_RUNNING;
    x->running++;
    return 0;
}

/* Contract: record the end of reaped run r (status as waitpid gave it):
 * done when it left a verdict (exit 0, 1 or 4 and a result.json), else an
 * error; stopped keeps its state (we stopped it) but reads its result. */
static void finish_run(struct stress_ctx *x, struct sbatch *b, struct srun *r, int status)
{
    r->t_end = elapsed(x);
    r->pid = 0;
    x->running--;
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    struct json *res = NULL;
    char why[128] = "";
    if (r->exit_code == 0 || r->exit_code == 1 || r->exit_code == 4) {
        char path[PATH_MAX + 120];
        snprintf(path, sizeof(path), "%s/%s/result.json", x->dir, r->dir);
        if (json_load_file(path, &res, why, sizeof(why)) < 0)
            res = NULL;
    }
    if (res) {
        snprintf(r->verdict, sizeof(r->verdict), "%s", json_get_str(res, "verdict", "unknown"));
        r->classes = stress_classes_of(res);
        const struct json *rs = json_obj_get(res, "verdict_reasons");
        if (strcmp(r->verdict, "unknown") == 0 && rs && rs->type == JSON_ARR && rs->n &&
            rs->kids[0]->type == JSON_STR && r->state != SRUN_STOPPED)
            snprintf(r->why, sizeof(r->why), "%s", rs->kids[0]->s);
    }
    if (r->state == SRUN_STOPPED) {
        json_free(res);
        return;
    }
    if (!res) {
        r->state = SRUN_ERROR;
        char line[256], st[64];
        log_tail(x, r, line, sizeof(line));
        snprintf(r->why, sizeof(r->why), "%s%s%s", proc_status_text(status, st, sizeof(st)),
                 why[0] ? ", no result.json" : "", line[0] ? ": " : "");
        size_t l = strlen(r->why);
        snprintf(r->why + l, sizeof(r->why) - l, "%s", line);
        b->errors++;
        return;
    }
    r->state = SRUN_DONE;
    r->hit = stress_is_hit(x, res);
    b->hits += r->hit;
    b->judged += strcmp(r->verdict, "unknown") != 0;
    b->unknown += strcmp(r->verdict, "unknown") == 0;
    json_free(res);
}

/* The index of r in x->runs. */
static int run_index(const struct stress_ctx *x, const struct srun *r)
{
    for (int i = x->nruns - 1; i >= 0; i--)
        if (x->runs[i] == r)
            return i;
    return -1;
}

static void say_run(const struct stress_ctx *x, const struct srun *r)
{
    if (x->quiet)
        return;
    char cls[200] = "";
    size_t l = 0;
    for (size_t i = 0; r->classes && i < r->classes->n && l < sizeof(cls); i++)
        l += (size_t)snprintf(cls + l, sizeof(cls) - l, " %s=%lld", r->classes->keys[i],
                              (long long)r->classes->kids[i]->i);
    const char *what = r->state == SRUN_ERROR     ? "ERROR"
                       : r->state == SRUN_STOPPED ? "stopped"
                       : !strcmp(r->verdict, "pass") ? "PASS"
                       : !strcmp(r->verdict, "fail") ? "FAIL"
                                                     : "UNKNOWN";
    const char *phase = r->phase == PHASE_STRESS ? "stress" : r->phase == PHASE_REDUCE
                                                                 ? "reduce" : "confirm";
    if (r->state == SRUN_STOPPED) /* why first: the classes are what it saw until then */
        fprintf(stderr, "lockstorm: %s seed %llu: stopped (%s)%s (%.1fs) [%s]\n", phase,
                (unsigned long long)r->seed, r->why, cls, (double)(r->t_end - r->t_start) / 1e9,
                r->dir);
    else
        fprintf(stderr, "lockstorm: %s seed %llu: %s%s%s%s (%.1fs) [%s]\n", phase,
                (unsigned long long)r->seed, what, cls, r->why[0] ? ": " : "", r->why,
                (double)(r->t_end - r->t_start) / 1e9, r->dir);
}

/* Contract: SIGTERM every running run of x from index first on (by pid),
 * then reap each, SIGKILL after RUN_GRACE_NS or at once when a (further)
 * signal comes; each is marked stopped with why. */
static void stop_running(struct stress_ctx *x, struct sbatch *b, int first, const char *why)
{
    for (int i = first; i < x->nruns; i++) {
        struct srun *r = x->runs[i];
        if (r->state != SRUN_RUNNING || r->pid <= 0)
            continue;
        r->state = SRUN_STOPPED;
        snprintf(r->why, sizeof(r->why), "%s", why);
        kill(r->pid, SIGTERM);
    }
    int64_t end = ls_now_ns() + RUN_GRACE_NS;
    int killed = 0;
    for (;;) {
        int left = 0;
        for (int i = first; i < x->nruns; i++) {
            struct srun *r = x->runs[i];
            if (r->pid <= 0)
                continue;
            int status = 0;
            if (proc_wait(r->pid, 0, &status) == 1) {
                finish_run(x, b, r, status);
                say_run(x, r);
            } else {
                left++;
            }
        }
        if (!left)
            break;
        int sig = take_signal(x, 50 * LS_NS_PER_MS);
        if (!killed && (sig || ls_now_ns() >= end)) {
            killed = 1;
            for (int i = first; i < x->nruns; i++)
                if (x->runs[i]->pid > 0)
                    proc_stop(x->runs[i]->pid, SIGKILL, 0);
        }
    }
}

static int more_seeds(const struct stress_ctx *x, const struct sbatch *b, int64_t next)
{
    if (b->count >= 0)
        return next < b->count;
    return elapsed(x) < b->deadline;
}

void stress_batch_run(struct stress_ctx *x, struct sbatch *b)
{
    b->started = b->hits = b->judged = b->unknown = b->errors = 0;
    b->first_hit = b->first_error = -1;
    int first = x->nruns, stop = 0;
    int64_t next = 0;
    for (;;) {
        take_signal(x, 0); /* one taken before or between batches stops this one too */
        while (!x->signal && !stop && x->running < x->jobs && more_seeds(x, b, next) &&
               !(b->budgeted && stress_budget_spent(x))) {
            int rc = start_run(x, b, b->seed0 + (uint64_t)next++);
            b->started++;
            if (rc < 0) {
                b->errors++;
                b->first_error = x->nruns - 1;
                say_run(x, x->runs[x->nruns - 1]);
                stop = 1;
                if (x->running)
                    stop_running(x, b, first, "another run could not start");
            }
            take_signal(x, 0);
        }
        if (x->running == 0)
            break;
        if (x->signal || take_signal(x, TICK_NS)) {
            stop_running(x, b, first, "the stress was interrupted");
            break;
        }
        for (int i = first; i < x->nruns; i++) {
            struct srun *r = x->runs[i];
            if (r->state != SRUN_RUNNING)
                continue;
            int status = 0;
            if (proc_wait(r->pid, 0, &status) == 1) {
                finish_run(x, b, r, status);
            } else if (elapsed(x) - r->t_start > r->timeout) {
                proc_stop(r->pid, SIGTERM, RUN_GRACE_NS);
                finish_run(x, b, r, SIGKILL);
                snprintf(r->why, sizeof(r->why), "did not finish within %llds",
                         (long long)(r->timeout / LS_NS_PER_S));
            } else {
                continue;
            }
            say_run(x, r);
            if (r->state == SRUN_ERROR && b->first_error < 0) {
                b->first_error = run_index(x, r);
                stop = 1;
                stop_running(x, b, first, "another run could not run");
            }
            if (r->hit && b->first_hit < 0) {
                b->first_hit = run_index(x, r);
                if (b->stop_on_hit) {
                    char why[96];
                    snprintf(why, sizeof(why), "seed %llu showed it first",
                             (unsigned long long)r->seed);
                    stop = 1;
                    stop_running(x, b, first, why);
                }
            }
            stress_write_json(x, 0, -1);
        }
    }
    for (int i = first; b->first_error < 0 && i < x->nruns; i++)
        if (x->runs[i]->state == SRUN_ERROR)
            b->first_error = i;
    stress_write_json(x, 0, -1);
}
