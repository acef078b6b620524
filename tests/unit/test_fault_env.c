/*
 * test_fault_env.c: a fault kind acts only through struct fault_env
 * (faults/env.h), so it runs against any implementation of the ops. Here a
 * second, small one acts on real child processes of the test (no run, no
 * lock nodes): the real `pause` kind stops and resumes them, and overlapping
 * pauses of one process keep it stopped until the last one ends (the count
 * is the kind's own state, held for it by the env's kind_state). The real
 * `loop_stall` kind meets stall answers the env gives it: one that never
 * stalled must say it did not bite.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "model/workload.h"
#include "tests/unit/testing.h"
#include "util/json.h"
#include "util/proc.h"
#include "util/rng.h"
#include "util/timeutil.h"

#define NCHILD 2
#define NMANY 100 /* more than a fault occurrence once recorded (64) */

/* The env's context: children that stand in for workers. */
struct kids {
    pid_t pid[NMANY];
    int n;
    struct rng rng;
    int64_t t0;
    const struct fault_ops *kind;
    void *state;                /* the one kind's state (owned) */
    int stall_answer;           /* what stall_result says: FAULT_STALLED or a FAULT_STALL_* */
};

static int64_t k_now(void *ctx)
{
    return ls_now_ns() - ((struct kids *)ctx)->t0;
}

static int k_interrupted(void *ctx)
{
    (void)ctx;
    return 0;
}

static int k_sleep(void *ctx, int64_t ns)
{
    (void)ctx;
    ls_sleep_ns(ns);
    return 0;
}

static struct rng *k_rng(void *ctx)
{
    return &((struct kids *)ctx)->rng;
}

static int k_nworkers(void *ctx)
{
    return ((struct kids *)ctx)->n;
}

static int k_nnodes(void *ctx)
{
    (void)ctx;
    return 0;
}

static void *k_kind_state(void *ctx, const struct fault_ops *kind, size_t size)
{
    struct kids *k = ctx;
    if (!k->state) {
        k->state = calloc(1, size);
        k->kind = kind;
    }
    return k->kind == kind ? k->state : NULL;
}

static int k_worker_alive(void *ctx, int i)
{
    struct kids *k = ctx;
    return i >= 0 && i < k->n && k->pid[i] > 0;
}

static int k_worker_busy(void *ctx, int i, int acquiring, int64_t *since)
{
    (void)ctx;
    (void)i;
    (void)acquiring;
    if (since)
        *since = 0;
    return -1; /* these workers hold nothing */
}

static int k_pause_worker(void *ctx, int i, int64_t confirm, int *pid, int *sys_errno)
{
    struct kids *k = ctx;
    *pid = k->pid[i];
    if (kill(-k->pid[i], SIGSTOP) < 0) {
        *sys_errno = 1;
        return FAULT_PAUSE_SIGNAL;
    }
    if (proc_wait_state(k->pid[i], 'T', 1, confirm) < 0) {
        kill(-k->pid[i], SIGCONT);
        return FAULT_PAUSE_TIMEOUT;
    }
    return FAULT_PAUSED;
}

static void k_resume(void *ctx, int pid, int group, int64_t confirm)
{
    (void)ctx;
    (void)confirm;
    kill(group ? -pid : pid, SIGCONT);
}

static int k_node(void *ctx, int k, struct fault_node *out)
{
    (void)ctx;
    (void)k;
    (void)out;
    return -1;
}

/* The request is sent at once; its answer is the test's (k->stall_answer). */
static int k_stall_worker(void *ctx, int i, int64_t ns, int64_t take, int64_t *sent_at,
                          int *held, int *ticket, char *why, size_t n)
{
    (void)i;
    (void)ns;
    (void)take;
    (void)why;
    (void)n;
    *sent_at = k_now(ctx);
    *held = 0;
    *ticket = 1;
    return FAULT_STALL_SENT;
}

static int k_stall_result(void *ctx, int i, int ticket, int64_t wait, int64_t *stalled_ns,
                          char *why, size_t n)
{
    struct kids *k = ctx;
    (void)wait;
    *stalled_ns = k->stall_answer == FAULT_STALLED ? 5 * LS_NS_PER_MS : 0;
    if (k->stall_answer != FAULT_STALLED)
        snprintf(why, n, "worker %d restarted before answering request %d", i, ticket);
    return k->stall_answer;
}

static const struct fault_env_ops kids_ops = {
    .now = k_now,
    .interrupted = k_interrupted,
    .sleep = k_sleep,
    .rng = k_rng,
    .nworkers = k_nworkers,
    .nnodes = k_nnodes,
    .kind_state = k_kind_state,
    .worker_alive = k_worker_alive,
    .worker_busy = k_worker_busy,
    .pause_worker = k_pause_worker,
    .resume = k_resume,
    .node = k_node,
    .stall_worker = k_stall_worker,
    .stall_result = k_stall_result,
};

/* A child in its own process group that sleeps until killed. */
static pid_t spawn_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

static void kids_free(struct kids *k)
{
    for (int i = 0; i < k->n; i++)
        if (k->pid[i] > 0) {
            kill(-k->pid[i], SIGKILL);
            waitpid(k->pid[i], NULL, 0);
        }
    free(k->state);
}

/* Contract: 1 when pid leaves state T within 1 s. */
static int runs_again(pid_t pid)
{
    int64_t until = ls_now_ns() + LS_NS_PER_S;
    while (proc_state(pid, 1) == 'T' && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
    return proc_state(pid, 1) != 'T';
}

static void inst(struct fault_inst *fi, const struct fault_spec *fs, int id)
{
    memset(fi, 0, sizeof(*fi));
    fi->spec = fs;
    fi->id = id;
    fi->worker = fi->node = -1;
    fi->detail = json_new_obj();
}

static void inst_free(struct fault_inst *fi)
{
    json_free(fi->detail);
    json_free(fi->end_detail);
}

static void test_pause_overlap(void)
{
    const struct fault_ops *pause = fault_find("pause");
    REQUIRE(pause != NULL);
    struct kids k = {.n = NCHILD, .t0 = ls_now_ns()};
    rng_seed(&k.rng, 1, 2);
    for (int i = 0; i < NCHILD; i++)
        k.pid[i] = spawn_child();
    REQUIRE(k.pid[0] > 0 && k.pid[1] > 0);
    struct fault_env env = {&kids_ops, &k};
    struct fault_spec one = {.ops = pause, .target = TARGET_WORKER, .target_index = 1,
                             .resource = -1, .duration = LS_NS_PER_S};
    struct fault_spec all = {.ops = pause, .target = TARGET_ALL_WORKERS, .target_index = -1,
                             .resource = -1, .duration = LS_NS_PER_S};
    struct fault_inst a, b;
    inst(&a, &one, 0);
    inst(&b, &all, 1);
    struct ls_err err = {0};

    /* worker:1, then all workers: worker 1 is paused twice */
    CHECKF(pause->start(&env, &a, &err) == 0, "%s", err.msg);
    CHECK_INT(a.worker, 1);
    CHECK_INT(a.npids, 1);
    CHECK_INT(a.pids[0], k.pid[1]);
    CHECK(proc_state(k.pid[1], 1) == 'T');
    CHECKF(pause->start(&env, &b, &err) == 0, "%s", err.msg);
    CHECK_INT(b.npids, 2);
    CHECK(proc_state(k.pid[0], 1) == 'T');

    /* the first one ends: worker 1 stays stopped, the other pause holds it */
    CHECK_INT(pause->stop(&env, &a, &err), 0);
    ls_sleep_ns(50 * LS_NS_PER_MS);
    CHECK(proc_state(k.pid[1], 1) == 'T');
    CHECK(proc_state(k.pid[0], 1) == 'T');
    CHECK_INT(pause->stop(&env, &a, &err), 0); /* idempotent: no second drop */
    ls_sleep_ns(50 * LS_NS_PER_MS);
    CHECK(proc_state(k.pid[1], 1) == 'T');

    /* the last one ends: both run again */
    CHECK_INT(pause->stop(&env, &b, &err), 0);
    CHECK(runs_again(k.pid[0]));
    CHECK(runs_again(k.pid[1]));

    /* a target the env does not have is nothing to act on */
    struct fault_spec gone = {.ops = pause, .target = TARGET_WORKER, .target_index = NCHILD,
                              .resource = -1};
    struct fault_spec node = {.ops = pause, .target = TARGET_NODE, .target_index = 0,
                              .resource = -1};
    struct fault_inst c, d;
    inst(&c, &gone, 2);
    inst(&d, &node, 3);
    CHECK_INT(pause->start(&env, &c, &err), 1);
    CHECK_INT(pause->start(&env, &d, &err), 1);
    inst_free(&a);
    inst_free(&b);
    inst_free(&c);
    inst_free(&d);
    kids_free(&k);
}

/* A pause of all workers stops and records every one of them, however
 * many, and its end resumes every one: with 64 recorded at most, workers
 * 65 on stayed stopped to the end of the run. */
static void test_pause_all_many(void)
{
    const struct fault_ops *pause = fault_find("pause");
    REQUIRE(pause != NULL);
    struct kids k = {.n = NMANY, .t0 = ls_now_ns()};
    rng_seed(&k.rng, 1, 2);
    for (int i = 0; i < NMANY; i++) {
        k.pid[i] = spawn_child();
        REQUIRE(k.pid[i] > 0);
    }
    struct fault_env env = {&kids_ops, &k};
    struct fault_spec all = {.ops = pause, .target = TARGET_ALL_WORKERS, .target_index = -1,
                             .resource = -1, .duration = LS_NS_PER_S};
    struct fault_inst a;
    inst(&a, &all, 0);
    struct ls_err err = {0};
    CHECKF(pause->start(&env, &a, &err) == 0, "%s", err.msg);
    CHECK_INT(a.npids, NMANY);
    CHECK(proc_state(k.pid[NMANY - 1], 1) == 'T');
    CHECK_INT(pause->stop(&env, &a, &err), 0);
    int running = 0;
    for (int i = 0; i < NMANY; i++)
        running += runs_again(k.pid[i]);
    CHECK_INT(running, NMANY);
    inst_free(&a);
    kids_free(&k);
}

/* A loop_stall whose stall never happened (dropped, failed, no answer)
 * did not bite, even though its worker held a lock when it was sent: its
 * end line says bit:false with a why (checkers/coverage.c would otherwise
 * count it bitten as a worker fault on a holder). One that stalled leaves
 * `bit` to coverage. */
static void test_loop_stall_not_bitten(void)
{
    const struct fault_ops *ls = fault_find("loop_stall");
    REQUIRE(ls != NULL);
    const int answers[] = {FAULT_STALL_NOT_TAKEN, FAULT_STALL_FAILED, FAULT_STALL_PENDING,
                           FAULT_STALLED};
    for (size_t a = 0; a < sizeof(answers) / sizeof(answers[0]); a++) {
        struct kids k = {.n = 1, .t0 = ls_now_ns(), .stall_answer = answers[a]};
        rng_seed(&k.rng, 1, 2);
        k.pid[0] = spawn_child();
        REQUIRE(k.pid[0] > 0);
        struct fault_env env = {&kids_ops, &k};
        struct fault_spec fs = {.ops = ls, .target = TARGET_WORKER, .target_index = 0,
                                .resource = -1, .duration = 0};
        struct fault_inst fi;
        inst(&fi, &fs, 0);
        struct ls_err err = {0};
        CHECKF(ls->start(&env, &fi, &err) == 0, "%s", err.msg);
        CHECK_INT(ls->stop(&env, &fi, &err), 0);
        REQUIRE(fi.end_detail != NULL);
        const struct json *bit = json_obj_get(fi.end_detail, "bit");
        if (answers[a] == FAULT_STALLED) {
            CHECKF(bit == NULL, "answer %d: a stall that happened leaves bit to coverage",
                   answers[a]);
        } else {
            CHECKF(bit && bit->type == JSON_BOOL && !bit->i, "answer %d: bit:false expected",
                   answers[a]);
            CHECKF(strstr(json_get_str(fi.end_detail, "bit_why", ""), "restarted") != NULL,
                   "answer %d: bit_why says why: %s", answers[a],
                   json_get_str(fi.end_detail, "bit_why", ""));
        }
        inst_free(&fi);
        kids_free(&k);
    }
}

int main(void)
{
    RUN(test_loop_stall_not_bitten);
    RUN(test_pause_overlap);
    RUN(test_pause_all_many);
    return t_finish();
}
