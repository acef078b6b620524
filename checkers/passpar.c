/*
 * passpar.c: the merged pass on several threads (pass.h pass_run_jobs;
 * docs/checkers.md "The pass on several cores"). One thread merges and
 * feeds every consumer exactly as pass_run does; jobs - 1 helper threads,
 * each with its share of the workers, run ahead of it in their logs: they
 * check the deferred records (checksum, sequence, time order, resource)
 * and fault the logs' pages in, and the merging thread reads each
 * record's verdict instead of checking it. The consumers see the one
 * thread's calls, so the result is the same for every thread count.
 */
#include "checkers/pass.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "checkers/pass_int.h"

/* More helpers than this gain nothing: the merging thread is the limit. */
#define HELPERS_MAX 32

/* How far a helper runs ahead of the merging thread in a worker's stream
 * (records), and how many it checks of one worker before the next. */
#define AHEAD_RECS 2048
#define AHEAD_BATCH 256

struct aheadctl {
    struct ahead a;           /* first: ahead_at finds the rest from it */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int waiters;      /* threads in (or entering) a wait */
    _Atomic int stop;
};

/* One of a helper's workers: the runs of its stream as they were at the
 * start (copied: the merging thread may cut the worker's log while the
 * helper is elsewhere in it), and where the helper is. */
struct hrun {
    const struct ev_rec *ev;
    size_t n;
    int unverified;
};

struct hpos {
    int wi;
    struct hrun *runs;        /* (owned) */
    int nruns, run;
    size_t i, p, n;           /* record i of run `run`, record p of the stream of n */
    int64_t prev_t;           /* time of the record before p */
    int done;
};

struct helper {
    struct history *h;
    struct aheadctl *x;
    int nw;
    struct hpos *w;           /* its workers (owned) */
};

/* Contract: wake the waiting threads, if any (after a seq_cst store). */
static void notify(struct aheadctl *x)
{
    if (atomic_load(&x->waiters)) {
        pthread_mutex_lock(&x->mu);
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
    }
}

int ahead_judge(struct ahead *a, int wi, size_t p, const struct history *h,
                const struct ev_rec *r, size_t i, int64_t prev_t)
{
    struct ahead_w *w = &a->w[wi];
    size_t ok = atomic_load(&w->ok);
    if (ok > p) {
        a->okc[wi] = ok;
        return 0;
    }
    if (atomic_load(&w->bad) == p)
        return 1;
    return !rec_ok(h, r, i, prev_t); /* the helper is behind: never wait for it */
}

void ahead_at(struct ahead *a, int wi, size_t p)
{
    atomic_store(&a->w[wi].at, p);
    notify((struct aheadctl *)a);
}

/* Contract: move q to the next record; 0 when its stream is over. */
static int hp_next(struct hpos *q)
{
    if (++q->p >= q->n)
        return 0;
    if (++q->i < q->runs[q->run].n)
        return 1;
    q->i = 0;
    while (++q->run < q->nruns)
        if (q->runs[q->run].n)
            return 1;
    return 0;
}

/* Contract: move q forward to record `to` of its stream (the merging thread
 * judged those before it itself); 0 when its stream is over. */
static int hp_skip(struct hpos *q, size_t to)
{
    while (q->p < to) {
        const struct hrun *r = &q->runs[q->run];
        size_t k = to - q->p, left = r->n - q->i;
        if (k > left)
            k = left;
        q->i += k - 1;
        q->p += k - 1;
        q->prev_t = r->ev[q->i].t;
        if (!hp_next(q))
            return 0;
    }
    return 1;
}

/* Contract: may helper hp check more (some worker of its own is less than
 * AHEAD_RECS ahead of the merging thread)? */
static int helper_can(const struct helper *hp)
{
    for (int k = 0; k < hp->nw; k++)
        if (!hp->w[k].done && atomic_load(&hp->x->a.w[hp->w[k].wi].at) + AHEAD_RECS > hp->w[k].p)
            return 1;
    return 0;
}

/* The helper: round its workers, check each one's next records (rec_ok,
 * as pass_run would; a verified log's records are only read, to fault
 * its pages in), publish how far they are good or where the first bad
 * one is, and stop at that one. Where the merging thread has passed it,
 * it jumps to the merging thread. */
static void *helper_main(void *arg)
{
    struct helper *hp = arg;
    struct aheadctl *x = hp->x;
    const struct history *h = hp->h;
    int64_t touched = 0;
    for (;;) {
        int live = 0, did = 0;
        for (int k = 0; k < hp->nw; k++) {
            struct hpos *q = &hp->w[k];
            if (q->done)
                continue;
            live = 1;
            struct ahead_w *aw = &x->a.w[q->wi];
            size_t at = atomic_load(&aw->at);
            if (q->p < at && !hp_skip(q, at)) {
                q->done = 1;
                continue;
            }
            size_t limit = at + AHEAD_RECS, start = q->p;
            int bad = 0;
            while (q->p < limit && q->p - start < AHEAD_BATCH) {
                const struct hrun *run = &q->runs[q->run];
                const struct ev_rec *r = &run->ev[q->i];
                if (run->unverified) {
                    if (!rec_ok(h, r, q->i, q->prev_t)) {
                        bad = 1;
                        break;
                    }
                } else {
                    touched += r->t;
                }
                q->prev_t = r->t;
                if (!hp_next(q)) {
                    q->done = 1;
                    break;
                }
            }
            if (bad) {
                q->done = 1;
                atomic_store(&aw->bad, q->p);
            }
            if (q->p != start || q->done) {
                atomic_store(&aw->ok, q->done && !bad ? q->n : q->p);
                did = 1;
            }
        }
        if (!live || atomic_load(&x->stop))
            break;
        if (!did) { /* every worker far enough ahead: wait for the merging thread */
            pthread_mutex_lock(&x->mu);
            atomic_fetch_add(&x->waiters, 1);
            while (!atomic_load(&x->stop) && !helper_can(hp))
                pthread_cond_wait(&x->cv, &x->mu);
            atomic_fetch_sub(&x->waiters, 1);
            pthread_mutex_unlock(&x->mu);
        }
    }
    volatile int64_t sink = touched;
    (void)sink;
    return NULL;
}

/* Contract: the pass with nh helper threads checking ahead (see above). */
static int pass_ahead(struct history *h, const struct pass_consumer *c, int n, int nh,
                      const int *live, int nlive)
{
    int nw = h->nworkers;
    struct aheadctl x;
    memset(&x, 0, sizeof(x));
    x.a.w = aligned_alloc(64, (size_t)nw * sizeof(*x.a.w));
    if (!x.a.w)
        return pass_run(h, c, n);
    memset(x.a.w, 0, (size_t)nw * sizeof(*x.a.w));
    x.a.okc = xcalloc((size_t)nw, sizeof(*x.a.okc));
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    for (int i = 0; i < nw; i++)
        atomic_store(&x.a.w[i].bad, SIZE_MAX);
    struct helper *hp = xcalloc((size_t)nh, sizeof(*hp));
    for (int j = 0; j < nh; j++) {
        hp[j].h = h;
        hp[j].x = &x;
        hp[j].w = xcalloc((size_t)(nlive / nh + 1), sizeof(*hp[j].w));
    }
    for (int i = 0, k = 0; i < nw; i++) {
        if (!live[i])
            continue;
        struct helper *o = &hp[k++ % nh];
        struct hpos *q = &o->w[o->nw++];
        const struct hist_worker *w = &h->w[i];
        q->wi = i;
        q->n = w->n;
        q->nruns = hist_nruns(w);
        q->runs = xcalloc((size_t)q->nruns, sizeof(*q->runs));
        for (int r = 0; r < q->nruns; r++)
            hist_run(w, r, &q->runs[r].ev, &q->runs[r].n, &q->runs[r].unverified);
        q->prev_t = INT64_MIN;
        while (q->run < q->nruns && !q->runs[q->run].n) /* live: one is not empty */
            q->run++;
    }
    pthread_t *tid = xcalloc((size_t)nh, sizeof(*tid));
    int started = 0;
    while (started < nh && pthread_create(&tid[started], NULL, helper_main, &hp[started]) == 0)
        started++;
    /* a helper that could not start leaves its workers to the merging
     * thread, which judges what no helper did */
    int rc = pass_run_ahead(h, c, n, &x.a);
    atomic_store(&x.stop, 1);
    pthread_mutex_lock(&x.mu);
    pthread_cond_broadcast(&x.cv);
    pthread_mutex_unlock(&x.mu);
    for (int j = 0; j < started; j++)
        pthread_join(tid[j], NULL);
    for (int j = 0; j < nh; j++) {
        for (int k = 0; k < hp[j].nw; k++)
            free(hp[j].w[k].runs);
        free(hp[j].w);
    }
    free(hp);
    free(tid);
    free(x.a.okc);
    free(x.a.w);
    pthread_mutex_destroy(&x.mu);
    pthread_cond_destroy(&x.cv);
    return rc;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

int pass_run_jobs(struct history *h, const struct pass_consumer *c, int n, int jobs)
{
    int nw = h->nworkers;
    if (jobs <= 1 || nw <= 0)
        return pass_run(h, c, n);
    int *live = xcalloc((size_t)nw, sizeof(*live)), nlive = 0;
    /* the workers with records: the helpers' share; a worker read with pread
     * is the merging thread's alone: it checks the records in its buffer,
     * hot in its cache, and a helper reading them through the mapping would
     * only map pages nobody drops (docs/checkers.md "The pass on several
     * cores") */
    for (int i = 0; i < nw; i++) {
        struct wpos tmp;
        memset(&tmp, 0, sizeof(tmp));
        live[i] = h->w[i].n && enter_run(&h->w[i], &tmp, 0) && !reads_fd(&h->w[i]);
        nlive += live[i];
    }
    int nh = imin(imin(jobs > PASS_JOBS_MAX ? PASS_JOBS_MAX : jobs, nlive + 1), HELPERS_MAX + 1) - 1;
    int rc = nh >= 1 ? pass_ahead(h, c, n, nh, live, nlive) : pass_run(h, c, n);
    free(live);
    return rc;
}
