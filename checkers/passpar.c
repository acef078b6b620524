/*
 * passpar.c: the merged pass on several threads (pass.h pass_run_jobs;
 * docs/checkers.md "The pass on several cores"). One thread merges and
 * feeds every consumer exactly as pass_run does; jobs - 1 helper threads,
 * each with its share of the workers, run ahead of it in their logs: they
 * check the deferred records (checksum, sequence, time order, resource)
 * and fault the logs' pages in, and the merging thread reads each
 * record's verdict instead of checking it. The consumers see the one
 * thread's calls, so the result is the same for every thread count.
 *
 * A log the pass reads with pread (pass_int.h struct wpos) goes through a
 * read-ahead ring instead: RING_SLOTS chunks, which the helper fills in
 * the order the merging thread takes them (the same order for both: every
 * chunk of every run it reads with pread, in turn), reading the records
 * and checking them (rec_ok_untimed) ahead; the merging thread takes a
 * chunk ready, or reads it itself when no helper has begun it (never
 * waiting for a helper that is behind), and checks only the time order.
 */
#include "checkers/pass.h"

#include <pthread.h>
#include <sched.h>
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
    _Atomic uint64_t freed;   /* chunks the merging thread gave back, all rings */
    int ring_wait;            /* the merging thread takes every chunk from the helpers
                               * (tests: pass_test_ring_wait, LS_CHECK_RING_WAIT=1; only
                               * when every helper started) */
    struct xbig chunks;       /* every ring's chunk buffers (xbig_alloc) */
};

/* ---- read-ahead rings (logs read with pread) ---- */

#define RING_SLOTS 4

/* The rings' chunks, all workers together: 4 MiB (256 records a chunk for
 * 64 workers) left the merging thread 0.51 s for 10^7 events, 16 MiB (the
 * one-thread pass's READ_BYTES) 0.58 s and RSS 28 MB instead of 16, 1 MiB
 * 0.78 s (a hand-over every 64 records), 8 MiB 0.55 s: the records a
 * helper reads ahead must still be in a cache the merging thread reaches
 * when it gets to them. */
#define RING_BYTES ((size_t)4 << 20)

/* A slot's word: the number of the chunk it is for (the chunks of a ring
 * are numbered from 0 in the order they are taken) and its state. */
enum { RS_EMPTY = 0, RS_FILLING = 1, RS_READY = 2, RS_MAIN = 3 };
#define RS_WORD(seq, st) (((uint64_t)(seq) << 2) | (uint64_t)(st))

struct rslot {
    _Atomic uint64_t word;    /* RS_EMPTY: free for that chunk; RS_FILLING: a helper reads
                               * it; RS_READY: read; RS_MAIN: the merging thread took it */
    struct ev_rec *buf;       /* ring->cap records */
    int run, checked, shortread;
    size_t lo, k;             /* records [lo, lo + k) of run `run` */
    size_t bad;               /* checked: the first that is not rec_ok_untimed (lo + k: none) */
} __attribute__((aligned(64)));

struct rring {
    struct rslot slot[RING_SLOTS];
    size_t cap;
    const struct history *h;
    struct aheadctl *x;
    _Atomic uint64_t *want;   /* its helper's wake-up: x->freed reaching this */
    uint64_t seq;             /* (the merging thread) the next chunk it takes */
    int held;                 /* (the merging thread) it holds chunk seq - 1 */
};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Contract: read chunk sl (run `run`, at offset off of fd, of n records,
 * from lo on) and, when check, judge its records. The filler owns sl. */
static void chunk_read(const struct history *h, struct rslot *sl, size_t cap, int fd, off_t off,
                       int run, size_t n, size_t lo, int unverified, int check)
{
    size_t k = n - lo < cap ? n - lo : cap;
    size_t got = hist_read_recs(fd, off, lo, k, sl->buf);
    sl->shortread = 0;
    if (got < k) { /* as wpos_fill: zeros for an unverified log (a bad record), else in place */
        if (unverified)
            memset(sl->buf + got, 0, (k - got) * sizeof(*sl->buf));
        else
            sl->shortread = 1;
    }
    sl->run = run;
    sl->lo = lo;
    sl->k = k;
    sl->bad = lo + k;
    sl->checked = check && unverified && !sl->shortread;
    if (sl->checked)
        for (size_t j = 0; j < k; j++)
            if (!rec_ok_untimed(h, &sl->buf[j], lo + j)) {
                sl->bad = lo + j;
                break;
            }
}

static void notify(struct aheadctl *x);

/* Contract: (the merging thread) give chunk s of rr back; wake its helper
 * when it waits for as many chunks given back as this one makes. (The
 * seq_cst fetch_add orders the slot's store before the test of waiters,
 * against the helper's increment of waiters before it tests the slots.) */
static void ring_release(struct rring *rr, uint64_t s)
{
    atomic_store_explicit(&rr->slot[s % RING_SLOTS].word, RS_WORD(s + RING_SLOTS, RS_EMPTY),
                          memory_order_release);
    uint64_t f = atomic_fetch_add(&rr->x->freed, 1) + 1;
    if (atomic_load(&rr->x->waiters) && f >= atomic_load(rr->want))
        notify(rr->x);
}

static _Atomic int ring_wait_helpers;

void pass_test_ring_wait(int on)
{
    atomic_store(&ring_wait_helpers, on);
}

/* Contract: (the merging thread) take chunk s of rr: ready, or read now. */
static struct rslot *ring_get(struct rring *rr, uint64_t s, const struct wpos *c, int read)
{
    struct rslot *sl = &rr->slot[s % RING_SLOTS];
    uint64_t w = RS_WORD(s, RS_EMPTY);
    if (!rr->x->ring_wait && atomic_compare_exchange_strong(&sl->word, &w, RS_WORD(s, RS_MAIN))) {
        if (read)
            chunk_read(rr->h, sl, rr->cap, c->fd, c->off, c->run, c->n, c->i, c->unverified, 0);
        return sl;
    }
    /* a helper may be asleep until more chunks are given back than this
     * ring can give before this one (always so when the merging thread
     * only waits: pass_test_ring_wait): wake it once */
    if (atomic_load_explicit(&sl->word, memory_order_acquire) != RS_WORD(s, RS_READY))
        notify(rr->x);
    for (unsigned spins = 0; atomic_load_explicit(&sl->word, memory_order_acquire) !=
                             RS_WORD(s, RS_READY); spins++) {
        if (spins < 256)
            cpu_relax();
        else
            sched_yield(); /* the helper is reading it; a shared CPU may need it back */
    }
    return sl;
}

void ring_take(struct wpos *c)
{
    struct rring *rr = c->rr;
    if (rr->held)
        ring_release(rr, rr->seq - 1);
    uint64_t s = rr->seq++;
    struct rslot *sl = ring_get(rr, s, c, 1);
    rr->held = 1;
    if (sl->run != c->run || sl->lo != c->i) /* never: both take the chunks in one order */
        chunk_read(rr->h, sl, rr->cap, c->fd, c->off, c->run, c->n, c->i, c->unverified, 0);
    if (sl->shortread) {
        /* a verified log shorter than at load: the rest of the run in place,
         * as wpos_fill; its chunks still to come are passed over */
        size_t after = (c->n - c->i + rr->cap - 1) / rr->cap - 1;
        for (size_t j = 0; j < after; j++) {
            ring_release(rr, rr->seq - 1);
            ring_get(rr, rr->seq++, c, 0);
        }
        c->fd = -1;
        c->mapped = 1; /* its pages are dropped behind the cursor again */
        c->vchk = 0;
        c->win = c->ev;
        c->wlo = 0;
        c->whi = c->n;
        return;
    }
    c->win = sl->buf;
    c->wlo = sl->lo;
    c->whi = sl->lo + sl->k;
    c->vchk = sl->checked;
    c->vbad = sl->bad;
}

/* One of a helper's workers: the runs of its stream as they were at the
 * start (copied: the merging thread may cut the worker's log while the
 * helper is elsewhere in it), and where the helper is. */
struct hrun {
    const struct ev_rec *ev;
    size_t n;
    int unverified;
    int fd;                   /* hist_run_fd: read with pread (-1: in place) */
    off_t off;
};

struct hpos {
    int wi;
    struct hrun *runs;        /* (owned) */
    int nruns, run;
    size_t i, p, n;           /* record i of run `run`, record p of the stream of n */
    int64_t prev_t;           /* time of the record before p */
    int done;
};

/* One of a helper's workers read with pread: its runs, and the next chunk
 * to read ahead (chunk seq: records [lo, ...) of run `run`). */
struct hring {
    struct rring *rr;
    struct hrun *runs;        /* (owned) */
    int nruns, run;
    size_t lo;
    uint64_t seq;
    int done;
};

struct helper {
    struct history *h;
    struct aheadctl *x;
    int nw;
    struct hpos *w;           /* its workers (owned) */
    int nr;
    struct hring *r;          /* its workers read with pread (owned) */
    _Atomic uint64_t want;    /* waiting: wake when aheadctl.freed reaches this */
};

/* Contract: move q to run k's first chunk, or the next run read with
 * pread that has records; done when there is none. */
static void hr_enter(struct hring *q, int k)
{
    for (; k < q->nruns; k++)
        if (q->runs[k].fd >= 0 && q->runs[k].n) {
            q->run = k;
            q->lo = 0;
            return;
        }
    q->done = 1;
}

static void hr_next(struct hring *q)
{
    q->seq++;
    q->lo += q->rr->cap;
    if (q->lo >= q->runs[q->run].n)
        hr_enter(q, q->run + 1);
}

/* Contract: read ahead the next chunk of q when its slot is free; passes
 * over the chunks the merging thread took itself. 1 when it read one, 0
 * when the slot is still in use (or q is done). */
static int hr_fill(const struct history *h, struct hring *q)
{
    while (!q->done) {
        struct rslot *sl = &q->rr->slot[q->seq % RING_SLOTS];
        uint64_t w = atomic_load_explicit(&sl->word, memory_order_acquire);
        if ((w >> 2) < q->seq)
            return 0; /* the merging thread still holds the chunk before */
        if (w == RS_WORD(q->seq, RS_EMPTY) &&
            atomic_compare_exchange_strong(&sl->word, &w, RS_WORD(q->seq, RS_FILLING))) {
            const struct hrun *r = &q->runs[q->run];
            chunk_read(h, sl, q->rr->cap, r->fd, r->off, q->run, r->n, q->lo, r->unverified, 1);
            atomic_store_explicit(&sl->word, RS_WORD(q->seq, RS_READY), memory_order_release);
            hr_next(q);
            return 1;
        }
        hr_next(q); /* taken by the merging thread, or passed */
    }
    return 0;
}

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
 * AHEAD_RECS ahead of the merging thread, or has a free chunk to read)? */
static int helper_can(const struct helper *hp)
{
    for (int k = 0; k < hp->nr; k++) {
        const struct hring *q = &hp->r[k];
        if (!q->done && (atomic_load(&q->rr->slot[q->seq % RING_SLOTS].word) >> 2) >= q->seq)
            return 1;
    }
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
    /* wait for this many chunks given back before reading on: a wake-up
     * per chunk cost more than the reading it allowed */
    uint64_t batch = hp->nr / 4 + 1;
    for (;;) {
        int live = 0, did = 0;
        for (int k = 0; k < hp->nr; k++) {
            struct hring *q = &hp->r[k];
            if (q->done)
                continue;
            live = 1;
            did |= hr_fill(h, q);
        }
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
            uint64_t want = atomic_load(&x->freed) + batch;
            atomic_store(&hp->want, want);
            while (!atomic_load(&x->stop) && !helper_can(hp) && atomic_load(&x->freed) < want)
                pthread_cond_wait(&x->cv, &x->mu);
            atomic_fetch_sub(&x->waiters, 1);
            pthread_mutex_unlock(&x->mu);
        }
    }
    volatile int64_t sink = touched;
    (void)sink;
    return NULL;
}

/* Contract: the pass with nh helper threads checking ahead (see above);
 * live[i]: 1 a worker a helper checks ahead in place, 2 one read with
 * pread whose chunks a helper reads ahead, 0 neither. */
static int pass_ahead(struct history *h, const struct pass_consumer *c, int n, int nh,
                      const int *live, int nlive)
{
    int nw = h->nworkers, nring = 0;
    for (int i = 0; i < nw; i++)
        nring += live[i] == 2;
    struct aheadctl x;
    memset(&x, 0, sizeof(x));
    x.a.w = aligned_alloc(64, (size_t)nw * sizeof(*x.a.w));
    if (!x.a.w)
        return pass_run(h, c, n);
    memset(x.a.w, 0, (size_t)nw * sizeof(*x.a.w));
    x.a.okc = xcalloc((size_t)nw, sizeof(*x.a.okc));
    x.a.rr = xcalloc((size_t)nw, sizeof(*x.a.rr));
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    for (int i = 0; i < nw; i++)
        atomic_store(&x.a.w[i].bad, SIZE_MAX);
    size_t cap = nring ? RING_BYTES / sizeof(struct ev_rec) / ((size_t)nring * RING_SLOTS) : 0;
    cap = cap < READ_MIN ? READ_MIN : cap > READ_MAX ? READ_MAX : cap;
    /* a chunk holds no more than its log's records; all in one buffer */
    size_t total = 0;
    for (int i = 0; i < nw; i++)
        if (live[i] == 2)
            total += RING_SLOTS * (h->w[i].n < cap ? h->w[i].n : cap);
    struct ev_rec *chunk = nring ? xbig_alloc(&x.chunks, total * sizeof(*chunk)) : NULL;
    struct helper *hp = xcalloc((size_t)nh, sizeof(*hp));
    for (int j = 0; j < nh; j++) {
        hp[j].h = h;
        hp[j].x = &x;
        hp[j].w = xcalloc((size_t)(nlive / nh + 1), sizeof(*hp[j].w));
        hp[j].r = xcalloc((size_t)(nlive / nh + 1), sizeof(*hp[j].r));
    }
    for (int i = 0, k = 0; i < nw; i++) {
        if (!live[i])
            continue;
        struct helper *o = &hp[k++ % nh];
        const struct hist_worker *w = &h->w[i];
        int nruns = hist_nruns(w);
        struct hrun *runs = xcalloc((size_t)nruns, sizeof(*runs));
        for (int r = 0; r < nruns; r++) {
            hist_run(w, r, &runs[r].ev, &runs[r].n, &runs[r].unverified);
            runs[r].fd = hist_run_fd(w, r, &runs[r].off);
        }
        if (live[i] == 2) {
            struct rring *rr = aligned_alloc(64, sizeof(*rr));
            if (!rr)
                xalloc_die();
            memset(rr, 0, sizeof(*rr));
            rr->cap = w->n < cap ? w->n : cap; /* live: w->n > 0 */
            rr->h = h;
            rr->x = &x;
            rr->want = &o->want;
            for (int j = 0; j < RING_SLOTS; j++) {
                atomic_store(&rr->slot[j].word, RS_WORD(j, RS_EMPTY));
                rr->slot[j].buf = chunk;
                chunk += rr->cap;
            }
            x.a.rr[i] = rr;
            struct hring *q = &o->r[o->nr++];
            q->rr = rr;
            q->runs = runs;
            q->nruns = nruns;
            hr_enter(q, 0);
            continue;
        }
        struct hpos *q = &o->w[o->nw++];
        q->wi = i;
        q->n = w->n;
        q->nruns = nruns;
        q->runs = runs;
        q->prev_t = INT64_MIN;
        while (q->run < q->nruns && !q->runs[q->run].n) /* live: one is not empty */
            q->run++;
    }
    pthread_t *tid = xcalloc((size_t)nh, sizeof(*tid));
    int started = 0;
    while (started < nh && pthread_create(&tid[started], NULL, helper_main, &hp[started]) == 0)
        started++;
    /* a helper that could not start leaves its workers to the merging
     * thread, which judges what no helper did and reads the chunks no
     * helper read (so it never waits for the helpers then) */
    const char *rw = getenv("LS_CHECK_RING_WAIT");
    x.ring_wait = started == nh && (atomic_load(&ring_wait_helpers) || (rw && strcmp(rw, "1") == 0));
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
        for (int k = 0; k < hp[j].nr; k++)
            free(hp[j].r[k].runs);
        free(hp[j].w);
        free(hp[j].r);
    }
    for (int i = 0; i < nw; i++)
        free(x.a.rr[i]);
    xbig_free(&x.chunks);
    free(hp);
    free(tid);
    free(x.a.rr);
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
    /* the workers with records: the helpers' share, read ahead in chunks
     * when the pass reads them with pread, else checked ahead in place
     * (docs/checkers.md "The pass on several cores") */
    for (int i = 0; i < nw; i++) {
        struct wpos tmp;
        memset(&tmp, 0, sizeof(tmp));
        live[i] = h->w[i].n && enter_run(&h->w[i], &tmp, 0) ? 1 + reads_fd(&h->w[i]) : 0;
        nlive += live[i] != 0;
    }
    int nh = imin(imin(jobs > PASS_JOBS_MAX ? PASS_JOBS_MAX : jobs, nlive + 1), HELPERS_MAX + 1) - 1;
    int rc = nh >= 1 ? pass_ahead(h, c, n, nh, live, nlive) : pass_run(h, c, n);
    free(live);
    return rc;
}
