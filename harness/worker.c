/*
 * worker.c: the worker process loop (see worker.h). Everything the checkers
 * need is written to the event log here, stamped with CLOCK_MONOTONIC:
 * `exit` is stamped before the release is sent and `enter` after the grant
 * reply arrived, which is what makes any overlap of holds a real violation
 * (docs/checkers.md "Why the check is sound on one host"). Renewal, when configured, runs in a second thread
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

#include "model/evlog.h"
#include "faults/fault.h"
#include "harness/jobs.h"
#include "backends/backend.h"
#include "backends/storage.h"
#include "faults/clock.h"
#include "locks/record.h"
#include "util/clockctl.h"
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
    char client_clock[4096]; /* cfg.client_clock's text */
    const struct store_ops *sto; /* the topology's protected resource (backends/backend.h) */
    void *st;              /* its connection, or NULL: no store ops this run */
    struct jobstore *js;   /* workers.mode jobs: the job's database ops */
    struct rng rng;
    int64_t deadline;      /* from shm, read once the harness says go */
    int64_t start_mono;    /* time 0 of the run (= go), from shm */
    uint64_t grant_seq;
    double *zipf_cdf;
    int stall_poll;        /* the workload has loop_stall faults: look for requests often */

    /* renewal thread */
    int renewing;
    pthread_t rth;
    struct lock rlk;
    struct lock_config rcfg; /* cfg with primary = &lk, for rlk */
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
    return ls_now_ns() - c->start_mono;
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
    /* A deadline already past (hold: 0, think: 0, retry delay 0) costs a
     * clock read, not a clock_nanosleep syscall: two syscalls less per
     * iteration when hammering (bench/ hammer, docs/performance.md). */
    if (!g_abort && ls_now_ns() >= t)
        return 0;
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

/* ---- stall requests (fault loop_stall; the protocol's `stall` extension) ---- */

#define STALL_POLL (5 * LS_NS_PER_MS)

/* Contract: does the workload schedule loop_stall faults (explicit or
 * nemesis)? Then the hold's wait looks for stall requests every STALL_POLL. */
static int wants_stall_poll(const struct workload *w)
{
    for (int i = 0; i < w->nfaults; i++)
        if (w->faults[i].ops && strcmp(w->faults[i].ops->name, "loop_stall") == 0)
            return 1;
    for (int i = 0; w->nemesis.enabled && i < w->nemesis.nkinds; i++)
        if (w->nemesis.kinds[i].ops && strcmp(w->nemesis.kinds[i].ops->name, "loop_stall") == 0)
            return 1;
    return 0;
}

/* Contract: take the harness's stall request, if one is new: ask the lock
 * to stall (its library's thread is blocked; this thread waits for the
 * answer like any request) and report the outcome in shm. Called between
 * lock calls and during a hold's wait, so never with a request of this
 * thread in flight. */
static void take_stall(struct wctx *c)
{
    struct shm_worker *me = c->me;
    int32_t seq = atomic_load(&me->stall_seq);
    if (seq == atomic_load(&me->stall_taken))
        return;
    int64_t ns = atomic_load(&me->stall_ns);
    int held = atomic_load(&me->holding);
    atomic_store(&me->stall_held, held);
    atomic_store(&me->stall_sent, rel_now(c));
    int late = ls_now_ns() > atomic_load(&me->stall_by);
    atomic_store(&me->stall_taken, seq);
    int64_t stalled = 0;
    int64_t result;
    char why[sizeof(me->stall_why)] = "";
    if (late) {
        snprintf(why, sizeof(why), "worker %d took the request too late", c->a->id);
        result = SHM_STALL_DROPPED;
    } else if (!c->lk.ops->stall) {
        snprintf(why, sizeof(why), "lock %s cannot stall (no adapter event loop)",
                 c->lk.ops->name);
        result = SHM_STALL_UNSUPPORTED;
    } else {
        int rc = c->lk.ops->stall(&c->lk, ns, &stalled, why, sizeof(why));
        result = rc == LOCK_STALLED ? stalled
                 : rc == LOCK_STALL_UNSUPPORTED ? SHM_STALL_UNSUPPORTED : SHM_STALL_FAILED;
    }
    memcpy(me->stall_why, why, sizeof(why));
    atomic_store(&me->stall_result, result);
    atomic_store(&me->stall_done, seq);
}

/* Contract: a restarted worker does not take a request its predecessor
 * left: it answers it (untaken, or taken and never answered) as dropped,
 * answer first and taken last, so a harness waiting in e_stall_worker or
 * e_stall_result (harness/fault_env.c) hears at once that no stall
 * happened instead of reading the dead worker's stall_sent/stall_held. A
 * request already answered keeps its answer. */
static void drop_stale_stall(struct wctx *c, int id, int epoch)
{
    struct shm_worker *me = c->me;
    int32_t seq = atomic_load(&me->stall_seq);
    if (atomic_load(&me->stall_done) != seq) {
        atomic_store(&me->stall_held, -1);
        atomic_store(&me->stall_sent, 0);
        snprintf(me->stall_why, sizeof(me->stall_why),
                 "worker %d restarted (epoch %d) before answering the stall request", id, epoch);
        atomic_store(&me->stall_result, SHM_STALL_DROPPED);
        atomic_store(&me->stall_done, seq);
    }
    atomic_store(&me->stall_taken, seq);
}

/* ---- renewal ---- */

/* One renewal of g through lk, recorded: renew_invoke, then renew_ok, or
 * renew_fail and lost. Returns the lock outcome. Used by the renewal thread
 * (with its own instance) and by inline renewal (with the worker's). */
static int renew_once(struct wctx *c, struct lock *lk, struct grant *g)
{
    int64_t inv = rel_now(c);
    struct ev_rec r = {.t = inv, .type = EV_RENEW_INVOKE, .res = (uint16_t)g->res};
    set_grant(&r, g);
    emit(c, &r);
    int ek = EVE_NONE;
    int out = lk->ops->renew(lk, g, &ek);
    struct ev_rec o = {.t = rel_now(c), .res = (uint16_t)g->res};
    set_grant(&o, g);
    if (out == LOCK_OK) {
        o.type = EV_RENEW_OK;
        if (g->no_lease)
            o.flags |= EVF_NO_LEASE;
        else
            o.valid_until = inv + g->validity_ns;
        emit(c, &o);
    } else {
        o.type = EV_RENEW_FAIL;
        o.aux = (uint32_t)ek;
        emit(c, &o);
        struct ev_rec l = {.t = rel_now(c), .type = EV_LOST, .res = (uint16_t)g->res};
        set_grant(&l, g);
        emit(c, &l);
    }
    return out;
}

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

            int out = renew_once(c, &c->rlk, &g);

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
    c->rcfg = c->cfg;
    c->rcfg.primary = &c->lk; /* an impl may share the first instance's state (external) */
    int rc = lock_open(&c->rlk, c->w->lock.ops, &c->rcfg, err);
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

/* Contract: "wWWW.SSSSSSSSSSS" (worker id, grant sequence; 3 and 11 hex
 * digits, NUL terminated) into tok, which has room for 17 bytes. What
 * snprintf("w%03x.%011llx") wrote, without printf on the hot path. */
static void format_token(char *tok, int id, uint64_t seq)
{
    static const char hex[] = "0123456789abcdef";
    unsigned w = (unsigned)id & 0xfff;
    tok[0] = 'w';
    tok[1] = hex[(w >> 8) & 15];
    tok[2] = hex[(w >> 4) & 15];
    tok[3] = hex[w & 15];
    tok[4] = '.';
    for (int i = 0; i < 11; i++)
        tok[15 - i] = hex[(seq >> (4 * i)) & 15];
    tok[16] = '\0';
}

/* The pause after failed attempt n (before the jitter): delay, times
 * backoff^(n-1) when backing off, capped at max(max_delay, delay). */
static int64_t retry_delay(const struct workload *w, int64_t attempt)
{
    double d = (double)w->lock.retry.delay;
    double cap = (double)w->lock.retry.max_delay;
    if (cap < d)
        cap = d;
    for (int64_t i = 1; i < attempt && w->lock.retry.backoff > 1.0 && d < cap; i++)
        d *= w->lock.retry.backoff;
    return (int64_t)(d < cap ? d : cap);
}

/* Tries to acquire res with the retry policy. Returns 1 with *g filled when
 * granted. */
static int acquire(struct wctx *c, int res, struct grant *g)
{
    const struct workload *w = c->w;
    for (int64_t attempt = 1; attempt <= w->lock.retry.attempts; attempt++) {
        if (stopping(c) || ls_now_ns() >= c->deadline)
            return 0;
        if (c->stall_poll)
            take_stall(c);
        memset(g, 0, sizeof(*g));
        g->res = res;
        format_token(g->token, c->a->id, ++c->grant_seq);
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
            int64_t d = retry_delay(w, attempt) + rng_range(&c->rng, 0, w->lock.retry.jitter);
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

/* Contract: record a renewal the library made by itself (news n about g):
 * renew_ok with EVF_AUTO, valid until n->at_ns plus the validity it
 * reported (docs/protocol.md, extension `renewed`: the adapter counts it
 * from its write; at_ns is that instant when the line says it, host_mono_ms,
 * else the read, which overstates the lease by the line's time in the pipe). */
static void record_auto_renewal(struct wctx *c, const struct grant *g, const struct lock_news *n)
{
    struct ev_rec o = {.t = rel_now(c), .type = EV_RENEW_OK, .res = (uint16_t)g->res,
                       .flags = EVF_AUTO};
    set_grant(&o, g);
    o.valid_until = n->at_ns - c->start_mono + n->validity_ns;
    emit(c, &o);
}

/* The hold's sleep for implementations that learn news on their own
 * (lock_ops.wait_news: an external adapter's `lost` event): sleeps until t
 * taking that news; a loss of g is recorded as one `lost` event and, with
 * on_lost: abort, ends the hold. With a renewal thread it also ends on the
 * thread's loss (which the thread recorded), looking every 50 ms. A
 * renewal the library reports having made is recorded (renew_ok, EVF_AUTO);
 * a stall request is taken here (every STALL_POLL when the workload has
 * loop_stall faults). Returns 1 when the hold was cut short. */
static int hold_wait(struct wctx *c, const struct grant *g, int64_t t)
{
    int abort_on_lost = c->w->workers.on_lost == ON_LOST_ABORT;
    int recorded = 0;
    for (;;) {
        if (g_abort)
            return 1;
        if (c->renewing) {
            pthread_mutex_lock(&c->m);
            int lost = c->r_lost;
            pthread_mutex_unlock(&c->m);
            if (lost && abort_on_lost)
                return 1;
            recorded |= lost;
        }
        int64_t now = ls_now_ns();
        if (now >= t)
            return 0;
        int64_t until = t;
        if (c->renewing && until > now + 50 * LS_NS_PER_MS)
            until = now + 50 * LS_NS_PER_MS;
        if (c->stall_poll) {
            take_stall(c);
            if (until > now + STALL_POLL)
                until = now + STALL_POLL;
        }
        struct lock_news n;
        if (c->lk.ops->wait_news(&c->lk, until, &n) <= 0)
            continue;
        if (n.kind == LOCK_NEWS_RENEWED) {
            if (n.res == g->res && strcmp(n.token, g->token) == 0)
                record_auto_renewal(c, g, &n);
            continue; /* an earlier grant's: its hold is over */
        }
        if (n.kind != LOCK_NEWS_LOST || n.res != g->res || strcmp(n.token, g->token) != 0)
            continue; /* about an earlier grant */
        if (!recorded) {
            struct ev_rec l = {.t = rel_now(c), .type = EV_LOST, .res = (uint16_t)g->res};
            set_grant(&l, g);
            emit(c, &l);
            recorded = 1;
        }
        if (abort_on_lost)
            return 1;
    }
}

/* The busy-spinning hold (workers.hold_cpu) until t: CPU-bound work. A
 * renewal thread beside it still renews; its loss ends the spin with
 * on_lost: abort (looked at every millisecond). Returns 1 when cut short. */
static int hold_spin(struct wctx *c, int64_t t)
{
    int64_t next_look = 0;
    for (;;) {
        int64_t now = ls_now_ns();
        if (now >= t)
            return 0;
        if (g_abort)
            return 1;
        if (c->renewing && now >= next_look) {
            pthread_mutex_lock(&c->m);
            int lost = c->r_lost;
            pthread_mutex_unlock(&c->m);
            if (lost && c->w->workers.on_lost == ON_LOST_ABORT)
                return 1;
            next_look = now + LS_NS_PER_MS;
        }
    }
}

/* Inline renewal (lock.renew.mode: inline): the worker renews g itself, as
 * a single event loop's timer would. An asynchronous hold (sleeping) leaves
 * the loop free, so a renewal runs when it is due; a CPU-bound hold
 * (workers.hold_cpu) runs in synchronous slices of lock.renew.slice and an
 * overdue renewal runs only between two slices: a slice longer than the
 * TTL lets the lease expire while the worker still believes it holds
 * (reference article 05, "the extension that never extends"). A refused
 * renewal is recorded as lost; with on_lost: abort it ends the hold.
 * Returns 1 when cut short. */
static int hold_inline(struct wctx *c, struct grant *g, int64_t t)
{
    const struct workload *w = c->w;
    int64_t every = w->lock.renew_every, slice = w->lock.renew_slice;
    int64_t due = ls_now_ns() + every;
    int lost = 0;
    for (;;) {
        if (g_abort)
            return 1;
        int64_t now = ls_now_ns();
        if (!lost && now >= due) {
            if (renew_once(c, &c->lk, g) != LOCK_OK) {
                lost = 1;
                if (w->workers.on_lost == ON_LOST_ABORT)
                    return 1;
            }
            due = ls_now_ns() + every;
            continue;
        }
        if (now >= t)
            return 0;
        if (w->workers.hold_cpu) {
            int64_t end = now + slice < t ? now + slice : t;
            while (ls_now_ns() < end && !g_abort)
                ;
        } else if (wsleep_until(c, !lost && due < t ? due : t, 1)) {
            return 1;
        }
    }
}

/* The hold's work until t, for grant g (NULL: jobs mode without a lock).
 * Returns 1 when cut short (SIGTERM, or a loss with on_lost: abort). */
static int hold_for(struct wctx *c, struct grant *g, int64_t t)
{
    const struct workload *w = c->w;
    if (g && w->lock.renew_every > 0 && w->lock.renew_mode == RENEW_INLINE)
        return hold_inline(c, g, t);
    if (w->workers.hold_cpu)
        return hold_spin(c, t);
    if (g && c->lk.ops->wait_news)
        return hold_wait(c, g, t);
    return wsleep_until(c, t, 1);
}

/* Enter the hold of res: shm says who holds what (fault target holder)
 * and, with a grant g, the enter event is logged and the renewal thread
 * takes g. g NULL: jobs mode without a lock layer, where the processing is
 * marked in shm only (no hold in the log). Returns the enter time
 * (CLOCK_MONOTONIC ns). */
static int64_t hold_begin(struct wctx *c, const struct grant *g, int res)
{
    atomic_store(&c->me->hold_since, rel_now(c));
    atomic_store(&c->me->holding, res);
    int64_t enter_mono = ls_now_ns();
    if (!g)
        return enter_mono;
    atomic_fetch_add_explicit(&c->me->grants, 1, memory_order_relaxed);
    struct ev_rec r = {.t = enter_mono - c->start_mono, .type = EV_ENTER, .res = (uint16_t)res};
    set_grant(&r, g);
    emit(c, &r);
    if (c->renewing)
        renew_begin(c, g);
    return enter_mono;
}

/* Leave the hold of res: exit is logged before the release is sent (the
 * soundness rule: docs/checkers.md "Why the check is sound on one host"), then g is released. The caller
 * has ended renewal (renew_end). g NULL: only shm is cleared. */
static void hold_end(struct wctx *c, const struct grant *g, int res)
{
    atomic_store(&c->me->holding, -1);
    if (!g)
        return;
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

/* The protected-resource ops on whichever storage the run's topology has
 * (the Redis storage node, or the PostgreSQL table, where a grant that is a
 * transaction takes the ops into it: the store asks the lock). */
static void store_read(struct wctx *c, const struct grant *g, struct store_op *pr,
                       struct store_op *fr)
{
    c->sto->read(c->st, &c->lk, g->res, g->has_fence, g->fence, pr, fr);
}

static void store_write(struct wctx *c, const struct grant *g, int64_t pval, int do_fenced,
                        int64_t fval, struct store_op *pw, struct store_op *fw)
{
    c->sto->write(c->st, &c->lk, g->res, pval, do_fenced, g->fence, fval, pw, fw);
}

static void hold_and_release(struct wctx *c, struct grant *g)
{
    const struct workload *w = c->w;
    int res = g->res;
    int64_t hold = dist_draw(&w->workers.hold, &c->rng);
    int64_t enter_mono = hold_begin(c, g, res);

    struct store_op pr = {0}, fr = {0};
    if (c->st) {
        store_read(c, g, &pr, &fr);
        store_event(c, EV_STORE_READ, res, g, 0, &pr);
        if (g->has_fence)
            store_event(c, EV_STORE_READ, res, g, 1, &fr);
    }

    int interrupted = hold_for(c, g, enter_mono + hold);
    int lost = c->renewing ? renew_end(c) : 0;
    int skip = interrupted || (lost && w->workers.on_lost == ON_LOST_ABORT);

    if (c->st && !skip && pr.ok) {
        struct store_op pw, fw;
        int do_fenced = g->has_fence && fr.ok && fr.accepted;
        store_write(c, g, pr.value + 1, do_fenced, fr.value + 1, &pw, &fw);
        store_event(c, EV_STORE_WRITE, res, g, 0, &pw);
        if (do_fenced)
            store_event(c, EV_STORE_WRITE, res, g, 1, &fw);
    }
    hold_end(c, g, res);
}

/* ---- jobs mode (harness/jobs.h) ---- */

static void job_event(struct wctx *c, int res, int64_t job, int step, const struct grant *g)
{
    struct ev_rec r = {.t = rel_now(c), .type = EV_JOB, .res = (uint16_t)res, .value = job,
                       .aux = (uint32_t)step};
    if (g)
        set_grant(&r, g);
    emit(c, &r);
}

/* Process one job with the layers of workers.jobs: lock(job) -> check
 * "done" (with idempotency: claim it with SET NX) -> the work (the hold) ->
 * the side effect (with constraint: a conditional insert) -> mark done ->
 * unlock. Every step is logged as a `job` event. A lock not granted within
 * the retry policy leaves the job to the others, as a handler that finds it
 * "being processed" does. */
static void job_process(struct wctx *c, int64_t job)
{
    const struct workload *w = c->w;
    unsigned layers = w->workers.jobs.layers;
    int res = (int)(job % w->workers.resources);
    struct grant gr, *g = NULL;
    if (layers & JOB_LAYER_LOCK) {
        if (!acquire(c, res, &gr)) {
            job_event(c, res, job, JOBS_GAVE_UP, NULL);
            return;
        }
        g = &gr;
    }
    int64_t hold = dist_draw(&w->workers.hold, &c->rng);
    /* With the lock, the hold (shm "holding", what a pause of the holder
     * looks for) is the logged enter..exit. Without it, the log shows the
     * job from `claimed` to its effect or abort, and shm must say "holding"
     * only inside that span: a pause that caught the worker in the check
     * before `claimed`, or in the mark-done after the effect, would stamp
     * no logged step late and the checker could not tell it bit. */
    int64_t enter_mono = g ? hold_begin(c, g, res) : 0;
    int st = (layers & JOB_LAYER_IDEMPOTENCY) ? jobstore_claim(c->js, job, c->a->id)
                                              : jobstore_check(c->js, job);
    job_event(c, res, job, st == JOBR_FREE ? JOBS_CLAIMED : st == JOBR_DONE ? JOBS_SKIP_DONE
                                                                            : JOBS_ERROR, g);
    if (!g)
        enter_mono = st == JOBR_FREE ? hold_begin(c, NULL, res) : ls_now_ns();
    int cut = st != JOBR_FREE;
    if (!cut)
        cut = hold_for(c, g, enter_mono + hold);
    int lost = g && c->renewing ? renew_end(c) : 0;
    if (st == JOBR_FREE && (cut || (lost && w->workers.on_lost == ON_LOST_ABORT))) {
        job_event(c, res, job, JOBS_ABORTED, g);
    } else if (st == JOBR_FREE) {
        int e = jobstore_effect(c->js, job, c->a->id, (layers & JOB_LAYER_CONSTRAINT) != 0);
        job_event(c, res, job, e == JOBR_APPLIED ? JOBS_EFFECT : e == JOBR_REFUSED ? JOBS_REFUSED
                                                                                : JOBS_ERROR, g);
        if (!g)
            hold_end(c, NULL, res);
        if (e == JOBR_APPLIED && jobstore_mark_done(c->js, job, c->a->id) < 0)
            job_event(c, res, job, JOBS_ERROR, g);
    }
    hold_end(c, g, res);
}

/* The job stream: job k is announced k * interval after the run started
 * (the harness's "go"); the worker takes every job in order, waiting for
 * its announcement, and goes on after the deadline until it has tried every
 * announced job (the harness stops it after a grace period). A restarted
 * worker (epoch >= 1) starts with the job being announced now. */
static void jobs_loop(struct wctx *c)
{
    const struct workload *w = c->w;
    int64_t base = c->deadline - w->duration;
    int64_t iv = w->workers.jobs.interval;
    int64_t n = jobs_total(w);
    int64_t k = 0;
    if (c->a->epoch > 0 && ls_now_ns() > base)
        k = (ls_now_ns() - base) / iv;
    c->deadline = INT64_MAX; /* acquires of late jobs still retry; `stop` ends them */
    for (; k < n && !stopping(c); k++) {
        if (wsleep_until(c, base + k * iv, 0))
            break;
        job_process(c, k);
    }
}

/* ---- record mode (lock.impl record, locks/record.c) ---- */

#define REC_TOKENS 8 /* recent grants whose program tokens lost/renewed may name */

/* The program's grants as the worker numbers them. */
struct rec_state {
    int cur;                          /* the current grant is toks[cur] (-1: none) */
    int64_t inv_t;                    /* its acquire's time (ns since the run start) */
    struct {
        int used, res;
        struct grant g;               /* the worker's token, fence */
        int has_ptoken;
        char ptoken[LOCK_REC_TOKEN_MAX];
    } toks[REC_TOKENS];
    int next;
};

/* Contract: a new grant of res for the program: the worker's next token
 * (as acquire numbers them) in a fresh slot, which becomes the current. */
static struct grant *rec_new_grant(struct wctx *c, struct rec_state *rs, int res)
{
    int k = rs->next;
    rs->next = (rs->next + 1) % REC_TOKENS;
    memset(&rs->toks[k], 0, sizeof(rs->toks[k]));
    rs->toks[k].used = 1;
    rs->toks[k].res = res;
    rs->toks[k].g.res = res;
    format_token(rs->toks[k].g.token, c->a->id, ++c->grant_seq);
    rs->cur = k;
    return &rs->toks[k].g;
}

/* Contract: the grant an event of res refers to: the current one when it
 * is of res, else a new one (an event out of sequence: counted by the
 * lock, recorded as it came; the checkers see, e.g., an enter with no
 * grant). */
static struct grant *rec_grant(struct wctx *c, struct rec_state *rs, int res)
{
    if (rs->cur >= 0 && rs->toks[rs->cur].res == res)
        return &rs->toks[rs->cur].g;
    return rec_new_grant(c, rs, res);
}

/* Contract: the grant the program's token names (a lost or renewed
 * event), NULL when it names none of the recent ones. */
static struct grant *rec_by_token(struct rec_state *rs, const struct lock_rec *e)
{
    for (int i = 0; i < REC_TOKENS; i++)
        if (rs->toks[i].used && rs->toks[i].res == e->res &&
            (e->has_token ? rs->toks[i].has_ptoken && strcmp(rs->toks[i].ptoken, e->token) == 0
                          : i == rs->cur))
            return &rs->toks[i].g;
    return NULL;
}

/* Contract: one event of the program as the event-log record the normal
 * loop writes for the same step, stamped with the event's time, and shm in
 * step (acquiring, holding, the progress counters). */
static void rec_take(struct wctx *c, struct rec_state *rs, const struct lock_rec *e)
{
    int64_t t = e->at_ns - c->start_mono;
    struct ev_rec r = {.t = t, .res = (uint16_t)(e->res >= 0 ? e->res : 0)};
    struct grant *g;
    switch (e->what) {
    case LREC_ACQUIRE:
        g = rec_new_grant(c, rs, e->res);
        rs->inv_t = t;
        r.type = EV_ACQUIRE_INVOKE;
        r.aux = 1;
        set_token(&r, g);
        atomic_fetch_add_explicit(&c->me->attempts, 1, memory_order_relaxed);
        atomic_store_explicit(&c->me->acquire_since, e->at_ns, memory_order_relaxed);
        atomic_store_explicit(&c->me->acquiring, e->res, memory_order_relaxed);
        break;
    case LREC_ACQUIRED:
        if (rs->cur < 0 || rs->toks[rs->cur].res != e->res || rs->toks[rs->cur].has_ptoken) {
            rec_new_grant(c, rs, e->res); /* no acquire before it: counted from now */
            rs->inv_t = t;
        }
        g = &rs->toks[rs->cur].g;
        if (e->has_token) {
            rs->toks[rs->cur].has_ptoken = 1;
            memcpy(rs->toks[rs->cur].ptoken, e->token, sizeof(e->token));
        }
        g->has_fence = e->has_fence;
        g->fence = e->fence;
        r.type = EV_ACQUIRE_OK;
        set_grant(&r, g);
        /* the program's own caps decide (docs/protocol.md "record"): a
         * program whose locks never expire has no lease to count from */
        if (e->no_lease || c->w->lock.ttl <= 0)
            r.flags |= EVF_NO_LEASE;
        else /* validity_ms absent: the TTL the hello asked for */
            r.valid_until = rs->inv_t + (e->has_validity ? e->validity_ns : c->w->lock.ttl);
        atomic_store_explicit(&c->me->acquiring, -1, memory_order_relaxed);
        break;
    case LREC_BUSY:
    case LREC_ACQUIRE_FAILED:
        g = rec_grant(c, rs, e->res);
        set_token(&r, g);
        if (e->what == LREC_BUSY) {
            r.type = EV_ACQUIRE_BUSY;
            atomic_fetch_add_explicit(&c->me->busy, 1, memory_order_relaxed);
        } else if (e->unknown) {
            r.type = EV_ACQUIRE_UNKNOWN;
            r.aux = (uint32_t)e->err_kind;
            atomic_fetch_add_explicit(&c->me->unknown, 1, memory_order_relaxed);
        } else {
            r.type = EV_ACQUIRE_FAIL;
            r.aux = (uint32_t)e->err_kind;
        }
        atomic_store_explicit(&c->me->acquiring, -1, memory_order_relaxed);
        rs->cur = -1;
        break;
    case LREC_ENTER:
        g = rec_grant(c, rs, e->res);
        r.type = EV_ENTER;
        set_grant(&r, g);
        atomic_fetch_add_explicit(&c->me->grants, 1, memory_order_relaxed);
        atomic_store(&c->me->hold_since, t);
        atomic_store(&c->me->holding, e->res);
        break;
    case LREC_EXIT:
    case LREC_RELEASE:
        g = rec_grant(c, rs, e->res);
        r.type = e->what == LREC_EXIT ? EV_EXIT : EV_RELEASE_INVOKE;
        set_grant(&r, g);
        atomic_store(&c->me->holding, -1);
        break;
    case LREC_RELEASED:
    case LREC_RELEASE_FAILED:
        g = rec_grant(c, rs, e->res);
        set_grant(&r, g);
        if (e->what == LREC_RELEASE_FAILED) {
            r.type = EV_RELEASE_FAIL;
            r.aux = (uint32_t)e->err_kind;
        } else {
            r.type = e->released ? EV_RELEASE_OK : EV_RELEASE_NOT_OWNER;
        }
        atomic_store(&c->me->holding, -1);
        rs->cur = -1;
        break;
    case LREC_LOST:
    case LREC_RENEWED:
        g = rec_by_token(rs, e);
        if (!g)
            return; /* a grant released long ago (counted in adapter.lost/renewed_events) */
        set_grant(&r, g);
        if (e->what == LREC_LOST) {
            r.type = EV_LOST;
        } else {
            r.type = EV_RENEW_OK;
            r.flags |= EVF_AUTO;
            r.valid_until = t + e->validity_ns;
        }
        break;
    case LREC_GONE:
        /* the program crashed: what it held ends here, as a killed
         * worker's does (a crash record; the lock may live on until its
         * TTL, which the checkers know from the grant) */
        if (rs->cur >= 0) {
            r.type = EV_CRASH;
            r.res = (uint16_t)rs->toks[rs->cur].res;
            rs->cur = -1;
        }
        atomic_store(&c->me->holding, -1);
        atomic_store_explicit(&c->me->acquiring, -1, memory_order_relaxed);
        if (!r.type)
            return;
        break;
    default:
        return;
    }
    emit(c, &r);
}

/* Record mode: the program runs its own loop and reports each step; the
 * worker records them (rec_take) from go until the deadline, then sends
 * stop and records until the program says `stopped` (or ends) or
 * stop_grace has passed. Returns 0, or -1 with err set when the program
 * could not be told to start. */
static int record_loop(struct wctx *c, int64_t stop_grace, struct ls_err *err)
{
    struct rec_state rs;
    memset(&rs, 0, sizeof(rs));
    rs.cur = -1;
    char why[200];
    if (c->lk.ops->record_ctl(&c->lk, LOCK_REC_START, why, sizeof(why)) < 0)
        return ls_err_set(err, LS_EENV, "worker %d: record: cannot start the program: %s",
                          c->a->id, why);
    int stop_sent = 0, prog_gone = 0;
    int64_t end = c->deadline;
    for (;;) {
        if (g_abort || c->log_failed)
            break;
        if (!stop_sent && (ls_now_ns() >= c->deadline || stopping(c))) {
            /* a program already gone (it crashed and its restart was not
             * due yet) says nothing more: what it wrote before it ended is
             * read below, without waiting stop_grace for a `stopped` that
             * cannot come (the run's end, and every open wait with it,
             * stretched by that grace before) */
            prog_gone = c->lk.ops->record_ctl(&c->lk, LOCK_REC_STOP, why, sizeof(why)) < 0;
            stop_sent = 1;
            end = prog_gone ? ls_now_ns() : ls_now_ns() + stop_grace;
        }
        if (stop_sent && !prog_gone && ls_now_ns() >= end)
            break;
        struct lock_rec e;
        int r = c->lk.ops->record_next(&c->lk, end, &e);
        if (r <= 0 && prog_gone)
            break; /* nothing queued is left */
        if (r <= 0)
            continue;
        if (e.what == LREC_STOPPED)
            break;
        rec_take(c, &rs, &e);
    }
    if (rs.cur >= 0 && !c->log_failed) {
        /* still holding when the grace ran out (or it said stopped while
         * holding): the program is shut down now, and its hold ends with
         * it, as a crash does; left open, the log would have a hold with
         * no end and the checker could not decide */
        struct lock_rec gone;
        memset(&gone, 0, sizeof(gone));
        gone.what = LREC_GONE;
        gone.res = -1;
        gone.at_ns = ls_now_ns();
        rec_take(c, &rs, &gone);
    }
    atomic_store(&c->me->holding, -1);
    atomic_store_explicit(&c->me->acquiring, -1, memory_order_relaxed);
    return 0;
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
    c->start_mono = a->start_mono;
    c->w = a->w;
    c->me = &a->shm->w[a->id];
    atomic_store(&c->me->pid, (int32_t)getpid());
    c->stall_poll = wants_stall_poll(c->w);
    drop_stale_stall(c, a->id, a->epoch);
    /* a restarted worker (epoch >= 1) draws a fresh stream and numbers its
     * tokens from epoch << 32, so no token repeats one of a dead epoch */
    rng_seed(&c->rng, c->w->seed, 1 + (uint64_t)a->id + ((uint64_t)a->epoch << 32));
    c->grant_seq = (uint64_t)a->epoch << 32;
    struct ls_err err = {0};
    int status = 0;

    char path[4096];
    evlog_path(path, sizeof(path), a->rundir, a->id, a->epoch);
    if (evlog_open_run(&c->log, path, (uint32_t)a->id, a->epoch, a->run_id, a->start_mono,
                       a->start_real, &err) < 0)
        return fail(c, &err);

    c->cfg.nodes = a->nodes;
    c->cfg.nnodes = a->nnodes;
    c->cfg.worker = a->id;
    c->cfg.ttl_ns = c->w->lock.ttl;
    c->cfg.fencing = c->w->lock.fencing;
    c->cfg.timeout_ns = 0; /* the implementation's own `timeout` option decides */
    c->cfg.options = c->w->lock.options;
    c->cfg.seed = c->w->seed ^ ((uint64_t)a->id << 32);
    c->cfg.replset = a->replset;
    c->cfg.wait_replicas = (int)c->w->lock.wait_replicas;
    c->cfg.rundir = a->rundir;
    c->cfg.epoch = a->epoch;
    c->cfg.resources = (int)c->w->workers.resources;
    c->cfg.duration_ns = c->w->duration;
    workload_lock_keys(c->w, &c->cfg); /* lock.key_prefix and the resource names */
    if (a->rundir && clockfault_client(c->w)) {
        clockctl_worker_path(c->client_clock, sizeof(c->client_clock), a->rundir, a->id);
        c->cfg.client_clock = c->client_clock;
    }
    if (lock_open(&c->lk, c->w->lock.ops, &c->cfg, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }
    int jobs = c->w->workers.mode == WMODE_JOBS;
    int record = c->lk.ops->record_next != NULL; /* record mode: the program's own loop */
    if (jobs && !a->storage_host) {
        ls_err_set(&err, LS_EENV, "worker %d: jobs mode needs the storage node", a->id);
        status = fail(c, &err);
        goto out;
    }
    if (jobs && jobstore_open(&c->js, a->storage_host, a->storage_port, a->storage_password,
                          LS_NS_PER_S, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }
    c->sto = c->w->cluster.backend->store;
    if (!jobs && !record && a->storage_host && c->w->workers.store &&
        c->sto->open(&c->st, a->storage_host, a->storage_port, a->storage_password,
                     LS_NS_PER_S, &err) < 0) {
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
    if (c->w->lock.renew_every > 0 && c->w->lock.renew_mode == RENEW_THREAD &&
        (!jobs || (c->w->workers.jobs.layers & JOB_LAYER_LOCK)) &&
        renew_start_thread(c, &err) < 0) {
        status = fail(c, &err);
        goto out;
    }

    atomic_store(&c->me->state, WS_READY);
    while (!atomic_load(&a->shm->go) && !stopping(c))
        ls_sleep_ns(200 * LS_NS_PER_US);
    c->deadline = atomic_load(&a->shm->deadline);
    if (atomic_load(&a->shm->go)) { /* time 0 is go: the harness fixed it once all were ready */
        c->start_mono = atomic_load(&a->shm->start_mono);
        evlog_set_start(c->log, c->start_mono, atomic_load(&a->shm->start_real));
    }
    atomic_store(&c->me->state, WS_RUNNING);

    if (jobs)
        jobs_loop(c);
    if (record && record_loop(c, ((const struct record_options *)c->w->lock.options)->stop_grace, &err) < 0)
        status = fail(c, &err);
    for (uint64_t iter = 0; !jobs && !record && !stopping(c) && ls_now_ns() < c->deadline; iter++) {
        int res = pick_resource(c, iter);
        struct grant g;
        if (acquire(c, res, &g))
            hold_and_release(c, &g);
        if (c->stall_poll)
            take_stall(c);
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
    if (c->st)
        c->sto->close(c->st);
    jobstore_close(c->js);
    free(c->zipf_cdf);
    if (evlog_close(c->log, &err) < 0 && status == 0)
        status = fail(c, &err);
    if (status == 0)
        atomic_store(&c->me->state, WS_DONE);
    return status;
}
