/*
 * worker.c: the worker process loop (see worker.h). Everything the checkers
 * need is written to the event log here, stamped with CLOCK_MONOTONIC:
 * `exit` is stamped before the release is sent and `enter` after the grant
 * reply arrived, which is what makes any overlap of holds a real violation
 * (DESIGN.md "Clocks"). Renewal, when configured, runs in a second thread
 * with its own lock instance; the two threads share the log under a mutex.
 */
#include "harness/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/evlog.h"
#include "harness/storage.h"
#include "util/timeutil.h"

/* Set by SIGTERM: abort the current hold and leave (the harness's "stop
 * now"). The only global: a signal handler may touch nothing else. */
static volatile sig_atomic_t g_abort;

static void on_term(int sig)
{
    (void)sig;
    g_abort = 1;
}

struct wctx {
    const struct worker_args *a;
    const struct workload *w;
    struct shm_worker *me;
    struct evlog_writer *log;
    int log_failed;
    struct lock lk;
    struct lock_config cfg;
    struct storage *st;
    struct rng rng;
    int64_t deadline;      /* from shm, read once the harness says go */
    uint64_t grant_seq;
    double *zipf_cdf;

    /* renewal thread */
    int renewing;
    pthread_t rth;
    struct lock rlk;
    pthread_mutex_t logmu;
    pthread_mutex_t m;
    pthread_cond_t cv_r;   /* wakes the renewal thread */
    pthread_cond_t cv_w;   /* wakes the worker (lost, renewal call done) */
    struct grant rgrant;
    int r_active, r_busy, r_lost, r_quit;
    uint64_t r_gen;
};

static int64_t rel_now(const struct wctx *c)
{
    return ls_now_ns() - c->a->start_mono;
}

static void emit(struct wctx *c, struct ev_rec *r)
{
    if (c->renewing)
        pthread_mutex_lock(&c->logmu);
    if (!c->log_failed && evlog_append(c->log, r) < 0)
        c->log_failed = 1;
    if (c->renewing)
        pthread_mutex_unlock(&c->logmu);
}

static void set_token(struct ev_rec *r, const struct grant *g)
{
    memcpy(r->token, g->token, EVLOG_TOKEN_LEN);
}

static void set_grant(struct ev_rec *r, const struct grant *g)
{
    set_token(r, g);
    if (g->has_fence) {
        r->flags |= EVF_FENCE;
        r->fence = g->fence;
    }
}

static int stopping(const struct wctx *c)
{
    return g_abort || atomic_load_explicit(&c->a->shm->stop, memory_order_relaxed) ||
           c->log_failed;
}

/* Sleep until the absolute monotonic time t, or until the worker must
 * stop (abort; with hold_sleep also a reported loss when on_lost: abort).
 * Returns 1 when interrupted. */
static int wsleep_until(struct wctx *c, int64_t t, int hold_sleep)
{
    if (!c->renewing || !hold_sleep) {
        struct timespec ts = {(time_t)(t / LS_NS_PER_S), (long)(t % LS_NS_PER_S)};
        for (;;) {
            if (g_abort || (!hold_sleep && stopping(c)))
                return 1;
            int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            if (r == 0)
                return 0;
            if (r != EINTR)
                return 0;
        }
    }
    int interrupted = 0;
    pthread_mutex_lock(&c->m);
    for (;;) {
        if (g_abort || (c->r_lost && c->w->workers.on_lost == ON_LOST_ABORT)) {
            interrupted = 1;
            break;
        }
        int64_t now = ls_now_ns();
        if (now >= t)
            break;
        /* wake at least every 50 ms: a signal does not interrupt a cond wait */
        int64_t until = t < now + 50 * LS_NS_PER_MS ? t : now + 50 * LS_NS_PER_MS;
        struct timespec ts = {(time_t)(until / LS_NS_PER_S), (long)(until % LS_NS_PER_S)};
        pthread_cond_timedwait(&c->cv_w, &c->m, &ts);
    }
    pthread_mutex_unlock(&c->m);
    return interrupted;
}

static int pick_resource(struct wctx *c, uint64_t iter)
{
    int64_t n = c->w->workers.resources;
    switch (c->w->workers.pick) {
    case PICK_ROUND_ROBIN:
        return (int)(((uint64_t)c->a->id + iter) % (uint64_t)n);
    case PICK_ZIPF: {
        double u = rng_double(&c->rng);
        int lo = 0, hi = (int)n - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (c->zipf_cdf[mid] >= u)
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo;
    }
    default:
        return (int)rng_below(&c->rng, (uint64_t)n);
    }
}

/* ---- renewal thread ---- */

static void *renew_main(void *arg)
{
    struct wctx *c = arg;
    int64_t every = c->w->lock.renew_every;
    pthread_mutex_lock(&c->m);
    while (!c->r_quit) {
        while (!c->r_active && !c->r_quit)
            pthread_cond_wait(&c->cv_r, &c->m);
        if (c->r_quit)
            break;
        uint64_t gen = c->r_gen;
        struct grant g = c->rgrant;
        int64_t next = ls_now_ns() + every;
        while (c->r_active && c->r_gen == gen && !c->r_quit) {
            if (ls_now_ns() < next) {
                struct timespec ts = {(time_t)(next / LS_NS_PER_S), (long)(next % LS_NS_PER_S)};
                pthread_cond_timedwait(&c->cv_r, &c->m, &ts);
                continue;
            }
            c->r_busy = 1;
            pthread_mutex_unlock(&c->m);

            int64_t inv = rel_now(c);
            struct ev_rec r = {.t = inv, .type = EV_RENEW_INVOKE, .res = (uint16_t)g.res};
            set_grant(&r, &g);
            emit(c, &r);
            int ek = EVE_NONE;
            int out = c->rlk.ops->renew(&c->rlk, &g, &ek);
            struct ev_rec o = {.t = rel_now(c), .res = (uint16_t)g.res};
            set_grant(&o, &g);
            if (out == LOCK_OK) {
                o.type = EV_RENEW_OK;
                if (g.no_lease)
                    o.flags |= EVF_NO_LEASE;
                else
                    o.valid_until = inv + g.validity_ns;
                emit(c, &o);
            } else {
                o.type = EV_RENEW_FAIL;
                o.aux = (uint32_t)ek;
                emit(c, &o);
                struct ev_rec l = {.t = rel_now(c), .type = EV_LOST, .res = (uint16_t)g.res};
                set_grant(&l, &g);
                emit(c, &l);
            }

            pthread_mutex_lock(&c->m);
            c->r_busy = 0;
            if (out != LOCK_OK)
                c->r_lost = 1;
            pthread_cond_broadcast(&c->cv_w);
            if (out != LOCK_OK)
                break;
            next += every;
        }
        /* wait for the next grant */
        while (c->r_active && c->r_gen == gen && !c->r_quit)
            pthread_cond_wait(&c->cv_r, &c->m);
    }
    pthread_mutex_unlock(&c->m);
    return NULL;
}

static void renew_begin(struct wctx *c, const struct grant *g)
{
    pthread_mutex_lock(&c->m);
    c->rgrant = *g;
    c->r_lost = 0;
    c->r_gen++;
    c->r_active = 1;
    pthread_cond_broadcast(&c->cv_r);
    pthread_mutex_unlock(&c->m);
}

/* Ends renewal of the current grant; returns once no renewal call is in
 * flight, so nothing is renewed after the hold's exit. Returns r_lost. */
static int renew_end(struct wctx *c)
{
    pthread_mutex_lock(&c->m);
    c->r_active = 0;
    pthread_cond_broadcast(&c->cv_r);
    while (c->r_busy)
        pthread_cond_wait(&c->cv_w, &c->m);
    int lost = c->r_lost;
    pthread_mutex_unlock(&c->m);
    return lost;
}

static int renew_start_thread(struct wctx *c, struct ls_err *err)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->m, NULL);
    pthread_mutex_init(&c->logmu, NULL);
    pthread_cond_init(&c->cv_r, &ca);
    pthread_cond_init(&c->cv_w, &ca);
    pthread_condattr_destroy(&ca);
    int rc = lock_open(&c->rlk, c->w->lock.ops, &c->cfg, err);
    if (rc < 0)
        return rc;
    c->renewing = 1;
    if (pthread_create(&c->rth, NULL, renew_main, c) != 0) {
        c->renewing = 0;
        return ls_err_set(err, LS_EENV, "worker %d: cannot start the renewal thread", c->a->id);
    }
    return 0;
}

static void renew_stop_thread(struct wctx *c)
{
    if (!c->renewing)
        return;
    pthread_mutex_lock(&c->m);
    c->r_quit = 1;
    pthread_cond_broadcast(&c->cv_r);
    pthread_mutex_unlock(&c->m);
    pthread_join(c->rth, NULL);
    lock_close(&c->rlk);
}

/* ---- one acquisition + hold + release ---- */

/* Tries to acquire res with the retry policy. Returns 1 with *g filled when
 * granted. */
static int acquire(struct wctx *c, int res, struct grant *g)
{
    const struct workload *w = c->w;
    for (int64_t attempt = 1; attempt <= w->lock.retry.attempts; attempt++) {
        if (stopping(c) || ls_now_ns() >= c->deadline)
            return 0;
        memset(g, 0, sizeof(*g));
        g->res = res;
        snprintf(g->token, sizeof(g->token), "w%03x.%011llx", (unsigned)c->a->id & 0xfff,
                 (unsigned long long)(++c->grant_seq & 0xfffffffffffULL));
        int64_t inv = rel_now(c);
        struct ev_rec r = {.t = inv, .type = EV_ACQUIRE_INVOKE, .res = (uint16_t)res,
                           .aux = (uint32_t)attempt};
        set_token(&r, g);
        emit(c, &r);
        atomic_fetch_add_explicit(&c->me->attempts, 1, memory_order_relaxed);
        int ek = EVE_NONE;
        atomic_store_explicit(&c->me->acquire_since, ls_now_ns(), memory_order_relaxed);
        atomic_store_explicit(&c->me->acquiring, res, memory_order_relaxed);
        int out = c->lk.ops->acquire(&c->lk, g, &ek);
        atomic_store_explicit(&c->me->acquiring, -1, memory_order_relaxed);
        struct ev_rec o = {.t = rel_now(c), .res = (uint16_t)res};
        set_token(&o, g);
        switch (out) {
        case LOCK_OK:
            o.type = EV_ACQUIRE_OK;
            set_grant(&o, g);
            if (g->no_lease)
                o.flags |= EVF_NO_LEASE;
            else
                o.valid_until = inv + g->validity_ns;
            emit(c, &o);
            return 1;
        case LOCK_BUSY:
            o.type = EV_ACQUIRE_BUSY;
            atomic_fetch_add_explicit(&c->me->busy, 1, memory_order_relaxed);
            break;
        case LOCK_UNKNOWN:
            o.type = EV_ACQUIRE_UNKNOWN;
            atomic_fetch_add_explicit(&c->me->unknown, 1, memory_order_relaxed);
            o.aux = (uint32_t)ek;
            break;
        default:
            o.type = EV_ACQUIRE_FAIL;
            o.aux = (uint32_t)ek;
            break;
        }
        emit(c, &o);
        if (attempt < w->lock.retry.attempts) {
            int64_t d = w->lock.retry.delay + rng_range(&c->rng, 0, w->lock.retry.jitter);
            int64_t until = ls_now_ns() + d;
            if (until > c->deadline)
                until = c->deadline;
            if (wsleep_until(c, until, 0))
                return 0;
        }
    }
    return 0;
}

static void store_event(struct wctx *c, int type, int res, const struct grant *g, int fenced,
                        const struct store_op *op)
{
    struct ev_rec r = {.t = rel_now(c), .type = (uint8_t)type, .res = (uint16_t)res,
                       .value = op->value};
    set_grant(&r, g);
    if (fenced)
        r.flags |= EVF_FENCED;
    if (op->accepted)
        r.flags |= EVF_ACCEPTED;
    if (!op->ok)
        r.flags |= EVF_FAILED;
    emit(c, &r);
}

static void hold_and_release(struct wctx *c, struct grant *g)
{
    const struct workload *w = c->w;
    int res = g->res;
    int64_t hold = dist_draw(&w->workers.hold, &c->rng);

    atomic_store(&c->me->hold_since, rel_now(c));
    atomic_store(&c->me->holding, res);
    atomic_fetch_add_explicit(&c->me->grants, 1, memory_order_relaxed);
    int64_t enter_mono = ls_now_ns();
    struct ev_rec r = {.t = enter_mono - c->a->start_mono, .type = EV_ENTER, .res = (uint16_t)res};
    set_grant(&r, g);
    emit(c, &r);
    if (c->renewing)
        renew_begin(c, g);

    struct store_op pr = {0}, fr = {0};
    if (c->st) {
        storage_read(c->st, res, g->has_fence, g->fence, &pr, &fr);
        store_event(c, EV_STORE_READ, res, g, 0, &pr);
        if (g->has_fence)
            store_event(c, EV_STORE_READ, res, g, 1, &fr);
    }

    int interrupted = wsleep_until(c, enter_mono + hold, 1);
    int lost = c->renewing ? renew_end(c) : 0;
    int skip = interrupted || (lost && w->workers.on_lost == ON_LOST_ABORT);

    if (c->st && !skip && pr.ok) {
        struct store_op pw, fw;
        int do_fenced = g->has_fence && fr.ok && fr.accepted;
        storage_write(c->st, res, pr.value + 1, do_fenced, g->fence, fr.value + 1, &pw, &fw);
        store_event(c, EV_STORE_WRITE, res, g, 0, &pw);
        if (do_fenced)
            store_event(c, EV_STORE_WRITE, res, g, 1, &fw);
    }

    atomic_store(&c->me->holding, -1);
    struct ev_rec x = {.t = rel_now(c), .type = EV_EXIT, .res = (uint16_t)res};
    set_grant(&x, g);
    emit(c, &x);

    struct ev_rec ri = {.t = rel_now(c), .type = EV_RELEASE_INVOKE, .res = (uint16_t)res};
    set_grant(&ri, g);
    emit(c, &ri);
    int ek = EVE_NONE;
    int out = c->lk.ops->release(&c->lk, g, &ek);
    struct ev_rec ro = {.t = rel_now(c), .res = (uint16_t)res};
    set_grant(&ro, g);
    if (out == LOCK_OK) {
        ro.type = EV_RELEASE_OK;
    } else if (out == LOCK_NOT_OWNER) {
        ro.type = EV_RELEASE_NOT_OWNER;
    } else {
        ro.type = EV_RELEASE_FAIL;
        ro.aux = (uint32_t)ek;
    }
    emit(c, &ro);
}

static int fail(struct wctx *c, const struct ls_err *err)
{
    snprintf(c->me->error, sizeof(c->me->error), "%s", err->msg);
    atomic_store(&c->me->state, WS_FAILED);
    return 3;
}

int worker_main(const struct worker_args *a)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: sleeps return EINTR */
    /* a write to a reset connection must be an error the lock reports
     * (unknown outcome), not the death of the worker */
    signal(SIGPIPE, SIG_IGN);

    struct wctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    struct wctx *c = &ctx;
    c->a = a;
    c->w = a->w;
    c->me = &a->shm->w[a->id];
    atomic_store(&c->me->pid, (int32_t)getpid());
    /* a restarted worker (epoch >= 1) draws a fresh stream and numbers its
     * tokens from epoch << 32, so no token repeats one of a dead epoch */
    rng_seed(&c->rng, c->w->seed, 1 + (uint64_t)a->id + ((uint64_t)a->epoch << 32));
    c->grant_seq = (uint64_t)a->epoch << 32;
    struct ls_err err = {0};
    int status = 0;

    char path[4096];
    evlog_path(path, sizeof(path), a->rundir, a->id, a->epoch);
    if (evlog_open(&c->log, path, (uint32_t)a->id, a->epoch, a->start_mono, a->start_real, &err) < 0)
        return fail(c, &err);

    c->cfg.nodes = a->nodes;
    c->cfg.nnodes = a->nnodes;
    c->cfg.worker = a->id;
    c->cfg.ttl_ns = c->w->lock.ttl;
    c->cfg.fencing = c->w->lock.fencing;
    c->cfg.timeout_ns = 0; /* the implementation's own `timeout` option decides */
    c->cfg.options = c->w->lock.options;
    c->cfg.seed = c->w->seed ^ ((uint64_t)a->id << 32);
    if (lock_open(&c->lk, c->w->lock.ops, &c->cfg, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }
    if (a->storage_host && c->w->workers.store &&
        storage_open(&c->st, a->storage_host, a->storage_port, LS_NS_PER_S, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }
    if (c->w->workers.pick == PICK_ZIPF) {
        int64_t n = c->w->workers.resources;
        c->zipf_cdf = calloc((size_t)n, sizeof(double));
        double sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += 1.0 / (double)(i + 1);
        double acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += 1.0 / (double)(i + 1) / sum;
            c->zipf_cdf[i] = acc;
        }
        c->zipf_cdf[n - 1] = 1.0;
    }
    if (c->w->lock.renew_every > 0 && renew_start_thread(c, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }

    atomic_store(&c->me->state, WS_READY);
    while (!atomic_load(&a->shm->go) && !stopping(c))
        ls_sleep_ns(200 * LS_NS_PER_US);
    c->deadline = atomic_load(&a->shm->deadline);
    atomic_store(&c->me->state, WS_RUNNING);

    for (uint64_t iter = 0; !stopping(c) && ls_now_ns() < c->deadline; iter++) {
        int res = pick_resource(c, iter);
        struct grant g;
        if (acquire(c, res, &g))
            hold_and_release(c, &g);
        int64_t think = dist_draw(&c->w->workers.think, &c->rng);
        int64_t until = ls_now_ns() + think;
        if (until > c->deadline)
            until = c->deadline;
        wsleep_until(c, until, 0);
    }
    if (c->log_failed) {
        ls_err_set(&err, LS_EIO, "worker %d: event log %s: cannot grow (disk full?)", a->id, path);
        status = fail(c, &err);
    }

out:
    renew_stop_thread(c);
    lock_close(&c->lk);
    storage_close(c->st);
    free(c->zipf_cdf);
    if (evlog_close(c->log, &err) < 0 && status == 0)
        status = fail(c, &err);
    if (status == 0)
        atomic_store(&c->me->state, WS_DONE);
    return status;
}
