/*
 * clock.c: the `clock` fault: `jump` steps a clock, `drift` makes it run
 * at another rate, `restore` takes back at the end what the fault changed.
 * On lock nodes (node:N, or the nodes a `nodes:` / `isolate:` key names)
 * it writes the node's control file, which the LD_PRELOAD shim inside that
 * redis-server reads on every clock_gettime(CLOCK_REALTIME), gettimeofday
 * and time: key expiry (PX) and TIME follow the shifted clock. A node's
 * start counts only once TIME on the node shows the shifted clock and the
 * shim acknowledged the change. On workers (worker:N, random-worker,
 * all-workers) it writes the worker's client clock, which a built-in lock
 * that measures elapsed time on CLOCK_REALTIME reads (redlock clock:
 * realtime), and the shim inside the worker's adapter process (an external
 * lock) too; the start line says whether the worker's lock reads it, and
 * for an adapter what its runtime's clock showed (the worker's `clock`
 * probe, adapters/worker-NNN.clock.jsonl).
 */
#include "faults/clock.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "faults/link_target.h"
#include "faults/target.h"
#include "util/clockctl.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define NS_S 1e9
#define TIME_TIMEOUT_US 500000
#define TIME_TOLERANCE LS_NS_PER_MS  /* TIME has microseconds; the shim rounds a drift */
#define VERIFY_TRIES 3
#define PROBE_WAIT_NS (1000 * LS_NS_PER_MS) /* for the adapters' probes, all targets together */
#define PROBE_POLL_NS (10 * LS_NS_PER_MS)

extern const struct fault_ops fault_clock;

struct clock_opts {
    int64_t jump;   /* ns, signed */
    double drift;   /* rate; 1 = none */
    int restore;
};

static const struct opt_def clock_tab[] = {
    {"jump", OPT_DURATION, offsetof(struct clock_opts, jump), "0", -3600 * NS_S, 3600 * NS_S, NULL,
     NULL,
     "step the target clocks at the start: +2s forward (a node then expires keys 2 s early), "
     "-2s back (keys live longer); 0 = no step"},
    {"drift", OPT_DOUBLE, offsetof(struct clock_opts, drift), "1", 0.01, 100, NULL, NULL,
     "rate of the target clocks while the fault lasts (1.5 = 1.5 s per true second, 0.5 = half "
     "speed); 1 = no drift. At the end the rate is 1 again"},
    {"restore", OPT_BOOL, offsetof(struct clock_opts, restore), "true", 0, 0, NULL, NULL,
     "at the end take back the step and the time the drift gained or lost (the clock is true "
     "again, which is itself a step); false leaves the clock off by that much"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* One clock an occurrence changed. */
struct clk_target {
    int worker;                  /* the worker whose client clock, or -1 */
    int node;                    /* the node, or -1 */
    struct ls_clockctl *ctl;     /* mapped (owned) */
    int applied;                 /* the change was written */
    double rate_before;          /* drift: the rate it found */
    int64_t drift_start;         /* drift: true realtime ns when it began */
    uint64_t gen;                /* the control file's generation after the change */
};

struct clk_state {
    int n;
    struct clk_target t[];       /* n entries */
};

/* ---- preparation (before the cluster starts) ---- */

int clockfault_used(const struct workload *w)
{
    for (int i = 0; i < w->nfaults; i++)
        if (w->faults[i].ops == &fault_clock)
            return 1;
    for (int i = 0; w->nemesis.enabled && i < w->nemesis.nkinds; i++)
        if (w->nemesis.kinds[i].ops == &fault_clock)
            return 1;
    return 0;
}

int clockfault_client(const struct workload *w)
{
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *s = &w->faults[i];
        if (s->ops == &fault_clock &&
            (s->target == TARGET_WORKER || s->target == TARGET_RANDOM_WORKER ||
             s->target == TARGET_ALL_WORKERS))
            return 1;
    }
    for (int i = 0; w->nemesis.enabled && i < w->nemesis.nkinds; i++)
        if (w->nemesis.kinds[i].ops == &fault_clock)
            return 1;
    return 0;
}

int clockfault_prepare(const struct workload *w, const char *rundir, struct ls_err *err)
{
    if (!clockfault_used(w))
        return 0;
    char path[4096];
    int rc = clockctl_shim_path(path, sizeof(path), err);
    if (rc < 0)
        return rc;
    static const char *const dirs[] = {"nodes", "clocks"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", rundir, dirs[i]);
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create %s", path);
    }
    for (int k = 0; k < (int)w->cluster.nodes && rc == 0; k++) {
        clockctl_node_path(path, sizeof(path), rundir, k);
        rc = clockctl_create(path, err);
    }
    for (int i = 0; i < (int)w->workers.count && rc == 0; i++) {
        clockctl_worker_path(path, sizeof(path), rundir, i);
        rc = clockctl_create(path, err);
    }
    return rc;
}

/* ---- targets ---- */

/* Contract: the clocks fi's target names, as a new state with ctl not yet
 * mapped (caller frees), *st NULL when there is nothing to act on. Returns
 * 0 or negative with err set (link keys a clock fault cannot use). */
static int resolve(const struct fault_env *env, struct fault_inst *fi, struct clk_state **st,
                   struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    int nn = env->ops->nnodes(env->ctx), nw = env->ops->nworkers(env->ctx);
    int cap = (nn > nw ? nn : nw) + 1;
    struct clk_state *cs = calloc(1, sizeof(*cs) + (size_t)cap * sizeof(cs->t[0]));
    if (!cs)
        return ls_err_set(err, LS_ENOMEM, "clock: out of memory");
    *st = NULL;
    switch (s->target) {
    case TARGET_NODE:
        if (s->target_index >= 0 && s->target_index < nn)
            cs->t[cs->n++] = (struct clk_target){.worker = -1, .node = s->target_index};
        break;
    case TARGET_LINKS: {
        if (s->links.some_workers || s->links.ngroups) {
            free(cs);
            return ls_err_set(err, LS_EWORKLOAD,
                              "clock: a clock belongs to a node or a worker, not to a link: "
                              "name nodes with node:N, nodes: or isolate:, a worker's clock "
                              "with worker:N (workers: and split: do not apply)");
        }
        uint8_t *sel = malloc((size_t)(nw > 0 ? nw : 1) * (size_t)(nn > 0 ? nn : 1));
        if (!sel) {
            free(cs);
            return ls_err_set(err, LS_ENOMEM, "clock: out of memory");
        }
        uint32_t used = 0;
        link_target_resolve(&s->links, nw > 0 ? nw : 1, nn, env->ops->rng(env->ctx), sel,
                            &used);
        free(sel);
        struct json *drawn = NULL;
        if (s->links.nodes_sel == LINK_NODES_MINORITY || s->links.nodes_sel == LINK_NODES_MAJORITY)
            drawn = json_obj_set(fi->detail, "nodes_drawn", json_new_arr());
        for (int k = 0; k < nn; k++) {
            if (!(used & (1u << k)))
                continue;
            cs->t[cs->n++] = (struct clk_target){.worker = -1, .node = k};
            if (drawn)
                json_arr_push(drawn, json_new_int(k));
        }
        break;
    }
    case TARGET_WORKER:
        if (s->target_index >= 0 && s->target_index < nw)
            cs->t[cs->n++] = (struct clk_target){.worker = s->target_index, .node = -1};
        break;
    case TARGET_RANDOM_WORKER: {
        int w = fault_random_worker(env, LINK_MAX_WORKERS);
        if (w >= 0)
            cs->t[cs->n++] = (struct clk_target){.worker = w, .node = -1};
        break;
    }
    case TARGET_ALL_WORKERS:
        for (int i = 0; i < nw; i++)
            cs->t[cs->n++] = (struct clk_target){.worker = i, .node = -1};
        break;
    default:
        break;
    }
    if (cs->n == 0) {
        free(cs);
        return 0;
    }
    if (cs->n == 1) {
        fi->node = cs->t[0].node;
        fi->worker = cs->t[0].worker;
    }
    *st = cs;
    return 0;
}

/* Path of target t's control file, and the run-directory-relative part. */
static const char *target_path(const struct fault_env *env, const struct clk_target *t,
                               char *buf, size_t n)
{
    const char *dir = env->ops->run_dir(env->ctx);
    if (t->node >= 0)
        clockctl_node_path(buf, n, dir, t->node);
    else
        clockctl_worker_path(buf, n, dir, t->worker);
    return buf + strlen(dir) + 1;
}

/* ---- verification ---- */

/* Contract: ask node n for TIME and check, with the harness's true
 * realtime taken just before and after, that the answer is the shifted
 * clock of ctl (within TIME_TOLERANCE) and that the shim in that
 * redis-server acknowledged generation gen. Describes the check in o.
 * Returns 1 verified, 0 not (why in o), -1 when the node did not answer. */
static int verify_node(const struct fault_env *env, const struct fault_node *n,
                       struct ls_clockctl *ctl, uint64_t gen, struct json *o)
{
    struct timeval tv = {0, TIME_TIMEOUT_US};
    redisContext *c = env->ops->node_connect(env->ctx, n->index, tv);
    if (!c || c->err) {
        json_obj_set_str(o, "verified", c ? c->errstr : "connect: out of memory");
        if (c)
            redisFree(c);
        return -1;
    }
    redisSetTimeout(c, tv);
    int ok = -1;
    for (int attempt = 0; attempt < VERIFY_TRIES && ok != 1; attempt++) {
        int64_t before = ls_realtime_ns();
        redisReply *rep = redisCommand(c, "TIME");
        int64_t after = ls_realtime_ns();
        if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
            json_obj_set_str(o, "verified", rep ? "TIME: unexpected reply" : c->errstr);
            if (rep)
                freeReplyObject(rep);
            ok = -1;
            break;
        }
        int64_t node_ns = strtoll(rep->element[0]->str, NULL, 10) * LS_NS_PER_S +
                          strtoll(rep->element[1]->str, NULL, 10) * LS_NS_PER_US;
        freeReplyObject(rep);
        struct ls_clockstate st;
        ls_clockctl_snapshot(ctl, &st);
        int64_t lo = ls_clockstate_apply(&st, before) - TIME_TOLERANCE;
        int64_t hi = ls_clockstate_apply(&st, after) + TIME_TOLERANCE;
        int64_t pid = 0;
        uint64_t acked = clockctl_acked(ctl, &pid);
        json_obj_set_num(o, "node_time_offset_ms", (double)(node_ns - (before + after) / 2) / 1e6);
        json_obj_set_num(o, "expected_offset_ms",
                         (double)(ls_clockstate_apply(&st, after) - after) / 1e6);
        json_obj_set_num(o, "time_rtt_ms", (double)(after - before) / 1e6);
        int in_range = node_ns >= lo && node_ns <= hi;
        int shim_acked = acked >= gen && pid == (int64_t)n->pid;
        if (in_range && shim_acked) {
            json_obj_set_str(o, "verified", "TIME on the node shows the shifted clock; the shim "
                                            "in that redis-server applied the change");
            ok = 1;
        } else {
            json_obj_set_str(o, "verified",
                             !shim_acked ? "the shim in the node did not acknowledge the change "
                                           "(not preloaded?)"
                                         : "TIME on the node is not the shifted clock");
            ok = 0;
        }
    }
    redisFree(c);
    return ok;
}

/* ---- adapters: the probe of the `clock` extension ---- */

/* Contract: the newest line of worker's probe file (adapters/
 * worker-NNN.clock.jsonl, written by its external lock: locks/
 * external_clock.c) made for generation gen or later, as a new object
 * (caller frees), or NULL (*exists says whether the file is there: a
 * worker whose lock runs no adapter under the shim has none). */
static struct json *probe_line(const struct fault_env *env, int worker, uint64_t gen,
                               int *exists)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/adapters/worker-%03d.clock.jsonl",
             env->ops->run_dir(env->ctx), worker);
    struct strbuf sb = STRBUF_INIT;
    *exists = sb_read_file(&sb, path) == 0;
    struct json *best = NULL;
    const char *p = sb.buf, *end = sb.buf + sb.len;
    while (*exists && p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break; /* a line still being written */
        struct json *o = NULL;
        char why[64];
        if (json_parse(p, (size_t)(nl - p), &o, why, sizeof(why)) == 0 &&
            json_get_int(o, "gen", -1) >= (int64_t)gen) {
            json_free(best);
            best = o;
        } else {
            json_free(o);
        }
        p = nl + 1;
    }
    sb_free(&sb);
    return best;
}

/* Contract: for every worker target of cs whose adapter runs under the
 * shim, wait (until deadline, true to signals) for its probe of the
 * generation the change made and put it in the matching entry of arr as
 * "adapter_clock"; one that did not come in time (or by the end of the
 * run) is {"result":"pending"} (the worker was busy or paused: the file
 * keeps the later probe). */
static void adapter_probes(const struct fault_env *env, struct clk_state *cs, struct json *arr,
                           int64_t deadline)
{
    for (int i = 0; i < cs->n; i++) {
        struct clk_target *t = &cs->t[i];
        if (t->worker < 0 || !t->ctl)
            continue;
        struct ls_clockstate st;
        ls_clockctl_snapshot(t->ctl, &st);
        int exists = 0;
        struct json *line = NULL;
        for (;;) {
            line = probe_line(env, t->worker, st.gen, &exists);
            if (line || !exists || env->ops->now(env->ctx) >= deadline ||
                env->ops->signalled(env->ctx) || env->ops->ran_out(env->ctx))
                break; /* a run at its end has workers that probe no more */
            env->ops->sleep(env->ctx, PROBE_POLL_NS);
        }
        if (!exists)
            continue;
        if (!line) {
            line = json_new_obj();
            json_obj_set_int(line, "gen", (int64_t)st.gen);
            json_obj_set_str(line, "result", "pending");
            json_obj_set_str(line, "why", "the worker did not probe its adapter within 1 s "
                                          "(paused, or waiting for a reply): see adapters/"
                                          "worker-NNN.clock.jsonl for the later probe");
        }
        char text[400];
        snprintf(text, sizeof(text), "adapter clock probe: %s: %s",
                 json_get_str(line, "result", "?"), json_get_str(line, "why", ""));
        for (size_t k = 0; k < arr->n; k++) {
            if (json_get_int(arr->kids[k], "worker", -1) != t->worker)
                continue;
            json_obj_set(arr->kids[k], "adapter_clock", json_clone(line));
            json_obj_set_str(arr->kids[k], "verified", text);
        }
        json_free(line);
    }
}

/* ---- start / stop ---- */

/* Contract: apply o's change to t at true realtime now (t->gen: the
 * control file's generation after it). */
static void apply(struct clk_target *t, const struct clock_opts *o, int64_t now)
{
    uint64_t gen = 0;
    if (o->drift != 1.0) {
        struct ls_clockstate st;
        ls_clockctl_snapshot(t->ctl, &st);
        t->rate_before = st.rate;
        t->drift_start = now;
        gen = clockctl_set_rate(t->ctl, now, o->drift);
    }
    if (o->jump != 0)
        gen = clockctl_jump(t->ctl, now, o->jump);
    t->applied = 1;
    t->gen = gen;
}

/* Contract: take back t's change at true realtime now: a drift's rate
 * always; with restore also the step and what the drift gained or lost.
 * Returns the offset left on t's clock, ns. */
static int64_t undo(struct clk_target *t, const struct clock_opts *o, int64_t now)
{
    int64_t back = 0;
    if (o->drift != 1.0) {
        clockctl_set_rate(t->ctl, now, t->rate_before);
        back += (int64_t)((double)(now - t->drift_start) * (o->drift - t->rate_before));
    }
    if (o->jump != 0)
        back += o->jump;
    if (o->restore && back != 0)
        clockctl_jump(t->ctl, now, -back);
    t->applied = 0;
    struct ls_clockstate st;
    ls_clockctl_snapshot(t->ctl, &st);
    return ls_clockstate_apply(&st, now) - now;
}

/* Unmap every control file of cs and free it; accepts NULL. */
static void free_state(struct clk_state *cs)
{
    if (!cs)
        return;
    for (int i = 0; i < cs->n; i++)
        clockctl_unmap(cs->t[i].ctl);
    free(cs);
}

static int clock_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err);

/* Contract: resolve the clocks, write the change into each control file,
 * and verify every node that is up (TIME + the shim's acknowledgement);
 * a node that fails it undoes the whole change. Returns 0, 1 (no target),
 * or negative with err set (the start is logged failed). */
static int clock_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct clock_opts *o = fi->spec->params;
    struct clk_state *cs = NULL;
    int rc = resolve(env, fi, &cs, err);
    if (rc < 0 || !cs)
        return rc < 0 ? rc : 1;
    fi->state = cs;
    char path[4096];
    for (int i = 0; i < cs->n; i++) {
        target_path(env, &cs->t[i], path, sizeof(path));
        rc = clockctl_map(path, &cs->t[i].ctl, err);
        if (rc < 0)
            return rc; /* stop (called by the scheduler) frees the state */
    }
    int64_t now = ls_realtime_ns();
    fi->start_ns = env->ops->now(env->ctx);
    for (int i = 0; i < cs->n; i++)
        apply(&cs->t[i], o, now);

    struct json *arr = json_obj_set(fi->detail, "clocks", json_new_arr());
    int bad = -1;
    char why[256] = "";
    for (int i = 0; i < cs->n; i++) {
        struct clk_target *t = &cs->t[i];
        struct json *e = json_arr_push(arr, json_new_obj());
        json_obj_set_str(e, "file", target_path(env, t, path, sizeof(path)));
        struct ls_clockstate st;
        ls_clockctl_snapshot(t->ctl, &st);
        json_obj_set_num(e, "offset_ms", (double)(ls_clockstate_apply(&st, now) - now) / 1e6);
        json_obj_set_num(e, "rate", st.rate);
        if (t->node >= 0) {
            struct fault_node nd = {.index = t->node};
            env->ops->node(env->ctx, t->node, &nd);
            const struct fault_node *n = &nd;
            json_obj_set_int(e, "node", t->node);
            if (n->pid <= 0) {
                json_obj_set_str(e, "verified", "not checked: the node is down (its restart "
                                                "reads the shifted clock)");
                continue;
            }
            json_obj_set_int(e, "pid", n->pid);
            if (fi->npids < (int)(sizeof(fi->pids) / sizeof(fi->pids[0])))
                fi->pids[fi->npids++] = n->pid;
            if (verify_node(env, n, t->ctl, t->gen, e) != 1 && bad < 0) {
                bad = t->node;
                snprintf(why, sizeof(why), "%s", json_get_str(e, "verified", "?"));
            }
        } else {
            json_obj_set_int(e, "worker", t->worker);
            int64_t pid = 0;
            clockctl_acked(t->ctl, &pid);
            json_obj_set_bool(e, "read_by_lock", pid > 0);
            json_obj_set_str(e, "verified",
                             pid > 0 ? "written; the worker's lock reads this clock (redlock "
                                       "clock: realtime) at its next round"
                                     : "written; nothing in this worker reads a realtime clock "
                                       "(e.g. redlock clock: monotonic): no effect on the lock");
        }
    }
    adapter_probes(env, cs, arr, env->ops->now(env->ctx) + PROBE_WAIT_NS);
    if (bad >= 0) {
        struct ls_err e2 = {0};
        clock_stop(env, fi, &e2);
        return ls_err_set(err, LS_EENV,
                          "clock: node %d does not show the shifted clock: %s (see "
                          "nodes/node-%d.log); the change was undone", bad, why, bad);
    }
    return 0;
}

/* Contract: undo what start applied (idempotent: the state is freed) and
 * describe each clock on the end line. Never fails. */
static int clock_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    (void)err;
    struct clk_state *cs = fi->state;
    if (!cs)
        return 0;
    const struct clock_opts *o = fi->spec->params;
    int64_t now = ls_realtime_ns();
    if (!fi->end_detail)
        fi->end_detail = json_new_obj();
    struct json *arr = json_obj_set(fi->end_detail, "clocks", json_new_arr());
    char path[4096];
    for (int i = 0; i < cs->n; i++) {
        struct clk_target *t = &cs->t[i];
        if (!t->ctl || !t->applied)
            continue;
        int64_t left = undo(t, o, now);
        struct json *e = json_arr_push(arr, json_new_obj());
        json_obj_set_str(e, "file", target_path(env, t, path, sizeof(path)));
        json_obj_set_int(e, t->node >= 0 ? "node" : "worker", t->node >= 0 ? t->node : t->worker);
        json_obj_set_bool(e, "restored", o->restore);
        json_obj_set_num(e, "offset_left_ms", (double)left / 1e6);
    }
    adapter_probes(env, cs, arr, env->ops->now(env->ctx) + PROBE_WAIT_NS);
    free_state(cs);
    fi->state = NULL;
    return 0;
}

/* Contract: the loader's cross-key rule (fault_ops.validate): a clock
 * fault must change something (a start would otherwise do nothing). */
static int clock_validate(const struct workload *w, const struct fault_spec *fs, char *why,
                          size_t n)
{
    const struct clock_opts *o = fs->params;
    (void)w;
    if (o->jump == 0 && o->drift == 1.0) {
        snprintf(why, n, "kind clock with neither jump nor drift does nothing; set jump (e.g. "
                         "jump: 2s or -2s) and/or drift (e.g. drift: 1.5)");
        return -1;
    }
    return 0;
}

#define CLOCK_TARGETS                                                                          \
    ((1u << TARGET_NODE) | (1u << TARGET_LINKS) | (1u << TARGET_WORKER) |                      \
     (1u << TARGET_RANDOM_WORKER) | (1u << TARGET_ALL_WORKERS))

const struct fault_ops fault_clock = {
    .version = FAULT_OPS_VERSION,
    .name = "clock",
    .help = "step (jump) or skew (drift) CLOCK_REALTIME of lock nodes (LD_PRELOAD shim: key "
            "expiry follows it) or of workers' client clocks (read by redlock clock: realtime, "
            "and by adapter processes through the shim)",
    .targets = CLOCK_TARGETS,
    .options = clock_tab,
    .options_size = sizeof(struct clock_opts),
    .start = clock_start,
    .stop = clock_stop,
    .validate = clock_validate,
};
