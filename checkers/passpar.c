/*
 * passpar.c: the merged pass on several threads (pass.h pass_run_jobs;
 * docs/checkers.md "The pass on several cores"). One thread merges as
 * pass_run does; jobs - 1 helper threads, each with its share of the
 * workers, run ahead of it in their logs: they check the deferred records
 * (checksum, sequence, time order, resource) and fault the logs' pages
 * in, and the merging thread reads each record's verdict instead of
 * checking it. The merging thread calls some consumers itself and hands
 * the calls of the others to a queue that helper 0 works through (below,
 * "consumers fed by a helper"); every consumer sees pass_run's calls in
 * pass_run's order, so the result is the same for every thread count.
 *
 * A log the pass reads with pread (pass_int.h struct wpos) goes through a
 * read-ahead ring instead: RING_SLOTS chunks, which the helper fills in
 * the order the merging thread takes them (the same order for both: every
 * chunk of every run it reads with pread, in turn), reading the records
 * and checking them (recs_first_bad) ahead; the merging thread takes a
 * chunk ready, or reads it itself when no helper has begun it (never
 * waiting for a helper that is behind), and checks only the time order.
 */
#include "checkers/pass.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/histpack.h"
#include "checkers/pass_int.h"
#include "util/xalloc.h"

/* More helpers than this gain nothing: the merging thread is the limit. */
#define HELPERS_MAX 32

/* How far a helper runs ahead of the merging thread in a worker's stream
 * (records), and how many it checks of one worker before the next. */
#define AHEAD_RECS 2048
#define AHEAD_BATCH 256

struct oqueue;

struct aheadctl {
    struct ahead a;           /* first: ahead_at finds the rest from it */
    struct oqueue *oq;        /* consumers fed by helper 0, or NULL (below) */
    int main_drains;          /* (tests) helper 0 makes no call unless it needs a slot */
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

/* The rings' chunks, all workers together (more past 512 workers, when a
 * chunk is RING_MIN records: up to READ_BYTES). Session 10 (the merging
 * thread then made every consumer call): 4 MiB (256 records a chunk for
 * 64 workers) left it 0.51 s for 10^7 events, 16 MiB 0.58 s, 1 MiB 0.78
 * s (a hand-over every 64 records), 8 MiB 0.55 s. Session 21, with the
 * calls split: the helper spent more of its time in pread's kernel copy
 * and calls (39,715 of them at 4 MiB, 10,403 at 16 MiB, as many as one
 * thread's) than anywhere else, and 8 MiB (512 records a chunk for 64
 * workers) took the check on two threads from 0.235 to 0.226 s (16 MiB
 * 0.230) and its CPU from 455 to 441 ms, for 4 MB more RSS:
 * docs/performance.md "Which consumers, measured again". */
#define RING_BYTES ((size_t)8 << 20)
#define RING_MIN 64 /* records a chunk, at least (fewer: pass_run_jobs) */

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
    size_t bad;               /* checked: the first recs_first_bad finds (lo + k: none) */
    _Atomic size_t rel;       /* with offloaded consumers: the queue's length when the chunk
                               * was given back; refilled once they are past it */
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

/* Contract: read chunk sl (run `run` of w, at offset off of fd, of n
 * records, from lo on) and, when check, judge its records. The filler owns
 * sl. A packed stream is decoded on from where cur (the filler's own, or
 * NULL) says the last chunk it read ended, when that is lo: a chunk need
 * not begin a block (with more than 256 workers a chunk is 64-127 records,
 * a block 128), and decoding a block again from its start to lo cost as
 * much as the chunk. */
static void chunk_read(const struct history *h, const struct hist_worker *w, struct rslot *sl,
                       size_t cap, int fd, off_t off, int run, size_t n, size_t lo, int unverified,
                       int check, struct hist_pack_cur *cur)
{
    size_t k = n - lo < cap ? n - lo : cap;
    size_t got = hist_read_recs(w, fd, off, lo, k, sl->buf, cur);
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
        sl->bad = lo + recs_first_bad(h, sl->buf, k, lo);
}

static void notify(struct aheadctl *x);

/* One of a helper's workers: the runs of its stream as they were at the
 * start (copied: the merging thread may cut the worker's log while the
 * helper is elsewhere in it), and where the helper is. */
struct hrun {
    const struct hist_worker *w;
    const struct ev_rec *ev;
    size_t n;
    int unverified;
    int fd;                   /* hist_run_fd: read with pread (-1: in place) */
    off_t off;
};

/* Contract: copy the runs of w (hrun above); *nruns their number. */
static struct hrun *runs_copy(const struct hist_worker *w, int *nruns)
{
    *nruns = hist_nruns(w);
    struct hrun *runs = xcalloc((size_t)*nruns + 1, sizeof(*runs));
    for (int r = 0; r < *nruns; r++) {
        runs[r].w = w;
        hist_run(w, r, &runs[r].ev, &runs[r].n, &runs[r].unverified);
        runs[r].fd = hist_run_fd(w, r, &runs[r].off);
    }
    return runs;
}

/* ---- consumers fed by a helper (offloaded) ----
 *
 * The merging thread feeds some units of consumers (pass.h pass_consumer)
 * not itself but through a queue: in the merged order, it pushes the
 * worker and the address of each record it delivers (where it read it: in
 * place, or in a ring's chunk) and each end of a worker, and helper 0
 * makes those consumers' calls in that order, reading each record where
 * the entry says (prefetched OQ_AHEAD entries before). Those consumers see
 * the same calls as on one thread, from another thread; a unit stays
 * whole, so nothing they share crosses threads. A chunk stays in its slot
 * until helper 0 is past it: a slot given back is refilled (by anyone)
 * only once the queue's head has passed the length it had when the slot
 * was given back (rslot.rel). (A chunk read short is given back before
 * any of its records is pushed: the merging thread reads them in place,
 * and pushes those addresses.) docs/checkers.md "The pass on several
 * cores". */

#define OQ_PUB 64             /* the merging thread publishes its tail this often (entries) */
#define OQ_WAKE 2048          /* and wakes helper 0 (asleep) once this many are waiting */
#define OQ_BATCH 1024         /* a drainer makes the calls of at most this many at a time */
#define OQ_STEAL 8192         /* the merging thread makes calls itself past this many waiting */
#define OQ_AHEAD 16            /* entries: how far ahead the drainer prefetches records */

struct oqueue {
    _Atomic size_t tail;      /* (the merging thread) entries [0, tail) are published */
    char pad0[64 - sizeof(size_t)];
    _Atomic size_t head;      /* entries [0, head) are done */
    _Atomic int tok;          /* 1: a thread makes the calls (the drainer); 0: none does */
    size_t hh;                /* (the drainer's) the next entry to make the calls of */
    char pad1[64 - 2 * sizeof(size_t) - sizeof(int)];
    size_t seen, woke;        /* the merging thread's: head seen, tail when it woke helper 0 */
    char pad2[64 - 2 * sizeof(size_t)];
    uint16_t *e;              /* OQ_CAP entries: a worker index, | OQ_END */
    const struct ev_rec **r;  /* OQ_CAP: the entry's record (NULL with OQ_END) */
    const struct pass_consumer *c; /* the offloaded consumers, in their order */
    int n;
    struct target *tg;        /* their dispatch table (pass_int.h targets_fill) */
    int ntg[32];
    struct aheadctl *x;
    struct pass_ops ops;      /* the merging thread's consumer that pushes */
} __attribute__((aligned(64))); /* (aligned_alloc: a size that is a multiple of 64) */

static void cpu_relax(void);

/* Contract: (the merging thread) publish the entries pushed; the tail. */
static size_t oq_publish(struct oqueue *q)
{
    size_t t = q->x->a.oqt;
    atomic_store(&q->tail, t); /* seq_cst: before the test of waiters (notify) */
    if (t - q->woke >= OQ_WAKE && atomic_load(&q->x->waiters)) {
        q->woke = t;
        notify(q->x);
    }
    return t;
}

static int oq_try_drain(struct oqueue *q, size_t most);

/* Contract: (the merging thread) until the calls of the entries before
 * `to` (published) are made: it makes them itself when helper 0 is not
 * making any (so it never waits for a helper that is behind or asleep),
 * else waits for the batch helper 0 is at. */
static void oq_wait(struct oqueue *q, size_t to)
{
    if (q->seen >= to)
        return;
    size_t hd = atomic_load_explicit(&q->head, memory_order_acquire);
    for (unsigned spins = 0; hd < to; spins++) {
        if (oq_try_drain(q, to - hd))
            spins = 0;
        else if (spins < 256)
            cpu_relax();
        else
            sched_yield();
        hd = atomic_load_explicit(&q->head, memory_order_acquire);
    }
    q->seen = hd;
}

/* Contract: (the merging thread) the next publication, or room to wait for. */
static void oq_limit(struct ahead *a, const struct oqueue *q)
{
    size_t pub = (a->oqt | (OQ_PUB - 1)) + 1, room = q->seen + OQ_CAP;
    a->oqlim = pub < room ? pub : room;
}

void ahead_push_slow(struct ahead *a)
{
    struct oqueue *q = ((struct aheadctl *)a)->oq;
    oq_publish(q);
    q->seen = atomic_load_explicit(&q->head, memory_order_acquire);
    /* helper 0 behind by more than OQ_STEAL: a batch of its calls made
     * here, so that neither thread waits for the other (the split of the
     * work between them follows what each one has time for) */
    if (a->oqt - q->seen >= OQ_STEAL && oq_try_drain(q, OQ_BATCH))
        q->seen = atomic_load_explicit(&q->head, memory_order_acquire);
    if (a->oqt - q->seen >= OQ_CAP)
        oq_wait(q, a->oqt - OQ_CAP + 1);
    oq_limit(a, q);
}

static void oq_worker_end(void *st, int wi)
{
    struct oqueue *q = st;
    ahead_push(&q->x->a, (unsigned)wi | OQ_END, NULL);
}

/* At the pass's end: every entry done, then the offloaded consumers' ends,
 * in their order (helper 0 makes no call after this). */
static void oq_end(void *st)
{
    struct oqueue *q = st;
    oq_wait(q, oq_publish(q));
    for (int k = 0; k < q->n; k++)
        if (q->c[k].ops->end)
            q->c[k].ops->end(q->c[k].st);
}

/* Contract: (the drainer) make the calls of up to `most` published
 * entries; 1 when it made some. Each entry's record is prefetched OQ_AHEAD
 * entries before its calls (the records of published entries stay where
 * they are until head passes them). */
static int oq_drain(struct oqueue *q, size_t most)
{
    size_t tl = atomic_load_explicit(&q->tail, memory_order_acquire);
    size_t end = tl - q->hh > most ? q->hh + most : tl;
    if (end == q->hh)
        return 0;
    for (size_t k = q->hh; k < end && k < q->hh + OQ_AHEAD; k++)
        __builtin_prefetch(q->r[k & (OQ_CAP - 1)]); /* NULL (an end): no fault */
    for (size_t i = q->hh; i < end; i++) {
        if (i + OQ_AHEAD < end)
            __builtin_prefetch(q->r[(i + OQ_AHEAD) & (OQ_CAP - 1)]);
        const struct ev_rec *r = q->r[i & (OQ_CAP - 1)];
        int wi = (int)(q->e[i & (OQ_CAP - 1)] & OQ_WMAX);
        if (r) {
            unsigned ty = r->type & 31;
            const struct target *d = &q->tg[ty * q->n];
            for (int j = 0, nj = q->ntg[ty]; j < nj; j++)
                d[j].event(d[j].st, wi, r);
        } else {
            for (int j = 0; j < q->n; j++)
                if (q->c[j].ops->worker_end)
                    q->c[j].ops->worker_end(q->c[j].st, wi);
        }
    }
    q->hh = end;
    atomic_store_explicit(&q->head, end, memory_order_release);
    return 1;
}

/* Contract: (either thread) become the drainer, unless the other thread is,
 * and make the calls of up to `most` published entries; 1 when it made
 * some. The token's acquire and release order one drainer's calls before
 * the next one's: the consumers see one sequence of calls, from whichever
 * thread makes them. */
static int oq_try_drain(struct oqueue *q, size_t most)
{
    int z = 0;
    if (atomic_load_explicit(&q->tok, memory_order_relaxed) ||
        !atomic_compare_exchange_strong_explicit(&q->tok, &z, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    int did = oq_drain(q, most);
    atomic_store_explicit(&q->tok, 0, memory_order_release);
    return did;
}

/* Contract: may a slot given back at queue length rel be refilled? */
static int oq_past(const struct aheadctl *x, size_t rel)
{
    return !x->oq || atomic_load_explicit(&x->oq->head, memory_order_acquire) >= rel;
}

/* Contract: (the merging thread) give chunk s of rr back; wake its helper
 * when it waits for as many chunks given back as this one makes. (The
 * seq_cst fetch_add orders the slot's store before the test of waiters,
 * against the helper's increment of waiters before it tests the slots.) */
static void ring_release(struct rring *rr, uint64_t s)
{
    struct rslot *sl = &rr->slot[s % RING_SLOTS];
    if (rr->x->oq) /* its records are all pushed: they are before the tail */
        atomic_store_explicit(&sl->rel, oq_publish(rr->x->oq), memory_order_relaxed);
    atomic_store_explicit(&sl->word, RS_WORD(s + RING_SLOTS, RS_EMPTY), memory_order_release);
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
        if (read && rr->x->oq)
            oq_wait(rr->x->oq, atomic_load_explicit(&sl->rel, memory_order_relaxed));
        if (read)
            chunk_read(rr->h, &rr->h->w[c->wi], sl, rr->cap, c->fd, c->off, c->run, c->n, c->i,
                       c->unverified, 0, NULL);
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
    /* never: both take the chunks in one order (and none of its records is
     * pushed yet, so no drainer reads the slot) */
    if (sl->run != c->run || sl->lo != c->i)
        chunk_read(rr->h, &rr->h->w[c->wi], sl, rr->cap, c->fd, c->off, c->run, c->n, c->i,
                   c->unverified, 0, NULL);
    if (sl->shortread) {
        /* a verified log shorter than at load: the rest of the run in place,
         * as wpos_fill; its chunks still to come are passed over. None of
         * this chunk's records was pushed: the queue's entries name the
         * records in place, never this slot. */
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

/* One of a helper's workers: where the helper is (struct hpos, hring),
 * in the runs of its stream (struct hrun, above). */
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
    struct hist_pack_cur pcur; /* a packed stream: where its last chunk this helper read
                                  ended (chunk_read) */
};

struct helper {
    struct history *h;
    struct aheadctl *x;
    int nw;
    struct hpos *w;           /* its workers (owned) */
    int nr;
    struct hring *r;          /* its workers read with pread (owned) */
    _Atomic uint64_t want;    /* waiting: wake when aheadctl.freed reaches this */
    struct oqueue *oq;        /* the queue of offloaded consumers it feeds, or NULL */
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

/* Contract: until slot sl, given back empty, may be refilled: the calls of
 * the offloaded consumers that may still read its records made (by this
 * helper, which takes them over, or by the thread making them; they are
 * published: the merging thread gave the slot back). */
static void slot_past(const struct helper *hp, const struct rslot *sl)
{
    size_t rel = atomic_load_explicit(&sl->rel, memory_order_relaxed);
    struct oqueue *oq = hp->x->oq;
    for (unsigned spins = 0; !oq_past(hp->x, rel); spins++) {
        size_t hd = atomic_load_explicit(&oq->head, memory_order_acquire);
        if (hd < rel && oq_try_drain(oq, rel - hd))
            spins = 0;
        else if (spins < 256)
            cpu_relax();
        else
            sched_yield(); /* the drainer may need this CPU back */
    }
}

/* Contract: read ahead the next chunk of q when its slot is free; passes
 * over the chunks the merging thread took itself. 1 when it read one, 0
 * when the slot is still in use (or q is done). */
static int hr_fill(struct helper *hp, struct hring *q)
{
    const struct history *h = hp->h;
    while (!q->done) {
        struct rslot *sl = &q->rr->slot[q->seq % RING_SLOTS];
        uint64_t w = atomic_load_explicit(&sl->word, memory_order_acquire);
        if ((w >> 2) < q->seq)
            return 0; /* the merging thread still holds the chunk before */
        if (w == RS_WORD(q->seq, RS_EMPTY))
            slot_past(hp, sl); /* offloaded consumers may still read its records */
        if (w == RS_WORD(q->seq, RS_EMPTY) &&
            atomic_compare_exchange_strong(&sl->word, &w, RS_WORD(q->seq, RS_FILLING))) {
            const struct hrun *r = &q->runs[q->run];
            chunk_read(h, r->w, sl, q->rr->cap, r->fd, r->off, q->run, r->n, q->lo,
                       r->unverified, 1, &q->pcur);
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
    const struct oqueue *oq = hp->oq;
    if (oq && !hp->x->main_drains) {
        size_t hd = atomic_load(&oq->head); /* first: the tail is never behind it */
        if (atomic_load(&oq->tail) - hd >= OQ_WAKE)
            return 1;
    }
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
    uint64_t touched = 0; /* wraps: only read, never used */
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
            did |= hr_fill(hp, q);
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
                    touched += (uint64_t)r->t;
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
        if (hp->oq && !x->main_drains) { /* it runs until the merging thread stops it */
            live = 1;
            did |= oq_try_drain(hp->oq, OQ_BATCH);
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
    volatile uint64_t sink = touched;
    (void)sink;
    return NULL;
}

/* The share of the consumers' cost (pass_ops.cost) the merging thread
 * keeps, at most, in percent: its heaviest units that fit (below). The
 * merging thread also merges and pushes, the helper also reads and checks
 * the logs, so the consumers cannot split in half: a third of their cost
 * on the merging thread balanced the two best on the bench's history.
 * The pick before (the fault windows and coverage, 16%) left the merging
 * thread in sched_yield, waiting for helper 0, in 4.5% of the samples;
 * the three cheapest (26%) and splits of 39-47% were slower:
 * docs/performance.md "Which consumers, measured again". */
#define OFFLOAD_KEEP 33

/* Contract: is name among the comma-separated names of list? */
static int name_in(const char *list, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += l)
        if ((p == list || p[-1] == ',') && (p[l] == ',' || !p[l]))
            return 1;
    return 0;
}

/* Contract: the units of c[0..n) to feed from helper 0: 1 in off[k] for
 * each consumer of those; their number. A unit (pass_consumer.unit; 0: the
 * consumer alone) goes whole. The merging thread keeps units up to
 * OFFLOAD_KEEP percent of the cost of all, the heaviest that fits first
 * (of the splits measured, one heavy unit kept was faster than several
 * light ones of the same cost), and every consumer of unknown cost (0).
 * LS_CHECK_OFFLOAD (tests): a comma-separated list of consumer names
 * instead, "all", or "none"; after "main:", the merging
 * thread makes the calls but for those helper 0 needs made to refill a
 * slot (*main_drains), so that a test sees that side at work too. */
static int offload_pick(const struct pass_consumer *c, int n, int *off, int *main_drains)
{
    const char *e = getenv("LS_CHECK_OFFLOAD");
    *main_drains = e && strncmp(e, "main:", 5) == 0;
    if (*main_drains)
        e += 5;
    uint64_t total = 0; /* costs are per mille: no sum or product here wraps */
    int *unit = xcalloc((size_t)n + 1, sizeof(*unit)); /* consumer k's unit, as an index */
    uint64_t *cost = xcalloc((size_t)n + 1, sizeof(*cost)); /* by unit index: its cost, or 0 */
    for (int k = 0; k < n; k++) {
        unit[k] = k;
        for (int j = 0; j < k && c[k].unit; j++)
            if (c[j].unit == c[k].unit) {
                unit[k] = unit[j];
                break;
            }
        off[k] = 0;
    }
    for (int k = 0; k < n; k++) {
        unsigned w = c[k].ops->cost;
        if (!w || cost[unit[k]] == UINT64_MAX)
            cost[unit[k]] = UINT64_MAX; /* unknown: kept */
        else
            cost[unit[k]] += w;
    }
    for (int k = 0; k < n; k++)
        if (unit[k] == k && cost[k] != UINT64_MAX)
            total += cost[k];
    if (e && *e) {
        for (int k = 0; k < n; k++)
            off[k] = strcmp(e, "all") == 0 || name_in(e, c[k].ops->name);
        for (int k = 0; k < n; k++) /* a unit goes whole */
            off[k] = off[unit[k]] |= off[k];
        for (int k = 0; k < n; k++)
            off[k] = off[unit[k]];
    } else {
        for (int k = 0; k < n; k++)
            off[k] = cost[unit[k]] != UINT64_MAX;
        /* keep the heaviest unit that fits the share, in turn */
        for (uint64_t kept = 0;;) {
            int best = -1;
            for (int k = 0; k < n; k++)
                if (unit[k] == k && off[k] &&
                    (kept + cost[k]) * 100 <= total * OFFLOAD_KEEP &&
                    (best < 0 || cost[k] > cost[best]))
                    best = k;
            if (best < 0)
                break;
            kept += cost[best];
            for (int k = 0; k < n; k++)
                if (unit[k] == best)
                    off[k] = 0;
        }
    }
    free(cost);
    free(unit);
    int m = 0;
    for (int k = 0; k < n; k++)
        m += off[k];
    return m;
}

int pass_test_offload_pick(const struct pass_consumer *c, int n, int *off)
{
    int main_drains;
    return offload_pick(c, n, off, &main_drains);
}

/* Contract: the queue feeding the units offload_pick chose from helper 0,
 * cm[0..n - its consumers + 1) the merging thread's consumers (the queue's
 * in the first offloaded one's place); NULL (cm untouched) when none is. */
static struct oqueue *offload_new(const struct history *h, const struct pass_consumer *c, int n,
                                  struct pass_consumer *cm, struct aheadctl *x)
{
    int *off = xcalloc((size_t)n + 1, sizeof(*off));
    int m = offload_pick(c, n, off, &x->main_drains);
    if (!m || h->nworkers > (int)OQ_WMAX + 1) { /* an entry holds a worker up to OQ_WMAX */
        free(off);
        return NULL;
    }
    struct oqueue *q = aligned_alloc(64, sizeof(*q));
    if (!q)
        xalloc_die();
    memset(q, 0, sizeof(*q));
    q->x = x;
    q->e = xmalloc(OQ_CAP * sizeof(*q->e));
    q->r = xmalloc(OQ_CAP * sizeof(*q->r));
    struct pass_consumer *cb = xcalloc((size_t)m, sizeof(*cb));
    /* no event: the pass pushes every record itself (ahead_push) */
    q->ops = (struct pass_ops){"offload", 0, NULL, oq_worker_end, oq_end, 0};
    for (int k = 0, j = 0, b = 0; k < n; k++) {
        if (!off[k])
            cm[j++] = c[k];
        else {
            if (!b)
                cm[j++] = (struct pass_consumer){&q->ops, q, 0};
            cb[b++] = c[k];
        }
    }
    q->c = cb;
    q->n = m;
    q->tg = xmalloc((size_t)(32 * m) * sizeof(*q->tg));
    targets_fill(cb, m, q->tg, q->ntg);
    free(off);
    return q;
}

static void offload_free(struct oqueue *q)
{
    if (!q)
        return;
    free((void *)q->c);
    free(q->tg);
    free(q->e);
    free(q->r);
    free(q);
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
    cap = cap < RING_MIN ? RING_MIN : cap > READ_MAX ? READ_MAX : cap;
    cap -= cap > HIST_PACK_BLOCK ? cap % HIST_PACK_BLOCK : 0; /* a packed stream's blocks */
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
        int nruns;
        struct hrun *runs = runs_copy(w, &nruns);
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
    /* the consumers helper 0 feeds, and the merging thread's own with the
     * queue in the first one's place */
    struct pass_consumer *cm = xcalloc((size_t)n + 1, sizeof(*cm));
    struct oqueue *oq = offload_new(h, c, n, cm, &x);
    x.oq = oq;
    hp[0].oq = oq;
    pthread_t *tid = xcalloc((size_t)nh, sizeof(*tid));
    int started = 0;
    while (started < nh && pthread_create(&tid[started], NULL, helper_main, &hp[started]) == 0)
        started++;
    if (!started) /* no thread reads x.oq: the merging thread feeds every consumer */
        x.oq = NULL;
    if (x.oq) {
        x.a.oqe = oq->e;
        x.a.oqr = oq->r;
        oq_limit(&x.a, oq);
    }
    /* a helper that could not start leaves its workers to the merging
     * thread, which judges what no helper did and reads the chunks no
     * helper read (so it never waits for the helpers then) */
    const char *rw = getenv("LS_CHECK_RING_WAIT");
    x.ring_wait = started == nh && (atomic_load(&ring_wait_helpers) || (rw && strcmp(rw, "1") == 0));
    int rc = x.oq ? pass_run_ahead(h, cm, n - oq->n + 1, &x.a) : pass_run_ahead(h, c, n, &x.a);
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
    offload_free(oq);
    free(cm);
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
    int nring = 0;
    for (int i = 0; i < nw; i++) {
        struct wpos tmp;
        memset(&tmp, 0, sizeof(tmp));
        live[i] = h->w[i].n && enter_run(&h->w[i], &tmp, 0) ? 1 + reads_fd(&h->w[i]) : 0;
        nlive += live[i] != 0;
        nring += live[i] == 2;
    }
    int nh = imin(imin(jobs > PASS_JOBS_MAX ? PASS_JOBS_MAX : jobs, nlive + 1), HELPERS_MAX + 1) - 1;
    /* so many workers read with pread that their rings, RING_SLOTS chunks
     * of at least RING_MIN records each, would pass READ_BYTES: one thread
     * (20,000 workers: 215 MB of rings, and twice one thread's time spent
     * handing over chunks of a few records) */
    if ((size_t)nring * RING_SLOTS * RING_MIN * sizeof(struct ev_rec) > READ_BYTES)
        nh = 0;
    int rc = nh >= 1 ? pass_ahead(h, c, n, nh, live, nlive) : pass_run(h, c, n);
    free(live);
    return rc;
}
