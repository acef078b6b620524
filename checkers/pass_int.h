/*
 * pass_int.h: what the one-thread pass (pass.c) and the parallel pass
 * (passpar.c) share: the page-drop and prefetch distances, a worker's
 * position in its stream, the merge order and the check of a deferred
 * record. Internal to checkers/pass*.c.
 */
#ifndef LS_PASS_INT_H
#define LS_PASS_INT_H

#include <stdatomic.h>

#include "checkers/histpack.h"
#include "checkers/history.h"
#include "checkers/pass.h"

/* Records between two history_drop calls of one worker read through its
 * mapping: 256 KiB of log, so 64 workers keep ~16 MiB of mapped log
 * resident at most. (A log read with pread (struct wpos) maps nothing.) */
#define DROP_EVERY 4096

/* How far ahead of a worker's cursor to prefetch: 64 workers interleave
 * 64 sequential streams, more than the hardware prefetcher follows. With
 * it the whole check of 10^7 events takes 0.56 s of CPU, without it 0.85 s
 * (4 or 16 ahead: the same as 8). */
#define PREFETCH_AHEAD 8

/* The pass's read buffers (wpos buf, or the read-ahead rings' chunks):
 * this many bytes in all, shared by the workers read with pread, each
 * buffer or chunk between READ_MIN and READ_MAX records. Past READ_BYTES /
 * READ_MIN / 64 workers (16,384) the buffers take READ_MIN records, 1 KB,
 * a worker: 64 records, as before, held 80 MB for 20,000 workers. */
#define READ_BYTES ((size_t)16 << 20)
#define READ_MIN 16
#define READ_MAX 1024

struct rring;

/* One consumer's event function and state: an entry of a pass's dispatch
 * table by record type (pass.c, and the consumers a helper feeds: passpar.c). */
struct target {
    void (*event)(void *st, int wi, const struct ev_rec *r);
    void *st;
};

/* Contract: fill tg[t * n ..] with the consumers of c[0..n) that want record
 * type t, in their order, and ntg[t] with their number, for t in 0..31. */
static inline void targets_fill(const struct pass_consumer *c, int n, struct target *tg, int *ntg)
{
    for (int t = 0; t < 32; t++) {
        ntg[t] = 0;
        for (int k = 0; k < n; k++)
            if (c[k].ops->event && (!c[k].ops->types || (c[k].ops->types & (1u << t))))
                tg[t * n + ntg[t]++] = (struct target){c[k].ops->event, c[k].st};
    }
}

struct cursor {
    int64_t t;          /* time of the head; INT64_MAX once exhausted */
    int wi;
};

/* Where the pass is in one worker's stream: in run `run` (hist_run: the
 * whole log, or one epoch of a restarted worker, or a synthetic crash
 * record between two), at its record i; p counts the stream's records.
 * The run's records [wlo, whi) are at win: the run's own array (in place:
 * owned memory, or a log's mapping), or, for a log the loader kept open
 * (hist_run_fd) when the worker has a buffer, buf, which pread fills a
 * window at a time. Reading the logs with pread instead of through the
 * mapping: docs/performance.md "Reading the logs". */
struct wpos {
    const struct ev_rec *ev;
    size_t n, i;
    int run, unverified;
    size_t p, dropped;
    int64_t prev_t;     /* time of the record before (INT64_MIN at the start) */
    const struct ev_rec *win;
    size_t wlo, whi;
    int fd;             /* the run's log read with pread, or -1: in place */
    off_t off;          /* file offset of the run's record 0 */
    struct ev_rec *buf; /* (owned by the pass) NULL: every run in place */
    size_t bufcap;      /* records */
    struct rring *rr;   /* with helpers: the chunks they read ahead (passpar.c), else NULL */
    int mapped;         /* some run was read through its mapping (in place): its pages
                           are dropped behind the cursor; none was, no drop is needed */
    int vchk;           /* the window [wlo, whi) was checked whole (recs_first_bad): */
    size_t vbad;        /* its first bad record (whi: none); the time order is left to the pass */
    const struct history *h; /* (wpos_fill: the resources a record may name) */
    int wi;             /* its worker: h->w[wi] */
    struct hist_pack_cur pcur; /* a packed stream: where its last read ended */
};

/* Contract: does c read its fd runs with pread (its own buffer, or the
 * helpers' read-ahead)? */
static inline int wpos_preads(const struct wpos *c)
{
    return c->buf != NULL || c->rr != NULL;
}

/* Contract: move c to the first record of the next non-empty run of w at
 * or after run k; 0 when there is none. */
static inline int enter_run(const struct hist_worker *w, struct wpos *c, int k)
{
    for (; k < hist_nruns(w); k++) {
        hist_run(w, k, &c->ev, &c->n, &c->unverified);
        c->run = k;
        c->i = 0;
        c->fd = wpos_preads(c) ? hist_run_fd(w, k, &c->off) : -1;
        c->win = c->fd >= 0 ? c->buf : c->ev;
        c->vchk = 0;
        c->wlo = 0;
        c->whi = c->fd >= 0 ? 0 : c->n;
        c->mapped |= c->fd < 0 && c->n;
        if (c->n)
            return 1;
    }
    return 0;
}

/* Contract: does the pass read some run of w with pread (hist_run_fd)? */
static inline int reads_fd(const struct hist_worker *w)
{
    off_t off;
    for (int k = 0; k < hist_nruns(w); k++)
        if (hist_run_fd(w, k, &off) >= 0)
            return 1;
    return 0;
}

/* Contract: fill c's buffer from its log with the records from i on (as
 * many as fit); on a read error or a short read, read the run in place
 * from i on. With c->rr, take the next chunk the helpers read ahead
 * instead (ring_take). pass.c. */
void wpos_fill(struct wpos *c);

/* Contract: (the merging thread) give up the chunk c holds and take the
 * next one of c->rr, records [i, ...) of c's run: read ahead by a helper
 * (waiting for one that is reading it), or read now when no helper has
 * begun it. passpar.c. */
void ring_take(struct wpos *c);


/* Contract: record i of c's run (i < n). */
static inline const struct ev_rec *wpos_rec(struct wpos *c)
{
    if (c->i >= c->whi)
        wpos_fill(c);
    return &c->win[c->i - c->wlo];
}

/* Contract: move c past the end of its run (the stream's record p was its
 * last) to the next non-empty one, as enter_run; the finished run's pages
 * are dropped now (with many small epochs, dropping only every DROP_EVERY
 * records left a resident page or more behind per epoch: 46 MB against
 * 17 MB before segments, on 10^5 events in 8,320 logs). */
static inline int next_run(const struct hist_worker *w, struct wpos *c, size_t p)
{
    if (c->mapped)
        history_drop(w, c->dropped, p + 1);
    c->dropped = p + 1;
    return enter_run(w, c, c->run + 1);
}

/* (time, worker index) order, written without short-circuits. GCC 12
 * compiles the tree replay's selects on it to branches, and they are the
 * faster choice: most comparisons go the way they went before, and a
 * branch lets the next level start before the compare is done (the same
 * selects as masks made the binary check 17-20% slower: docs/performance.md
 * section 3, "Calls a record makes"). On 10^7 events neither this nor the
 * tree itself measured differently from a binary heap with branches. */
static inline int before(const struct cursor *a, const struct cursor *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->wi < b->wi));
}

/* Contract: are record r's number (p), type and resource what the loader
 * accepts (rec_ok but for the time order and the checksum)? */
static inline int rec_fields_ok(const struct history *h, const struct ev_rec *r, size_t p)
{
    return r->seq == (uint32_t)p && r->type >= 1 && r->type < EV__MAX &&
           (r->type == EV_CRASH || r->res < h->nres);
}

/* Contract: is record r, number p of an unverified log whose previous
 * record is at prev_t, what the loader would have accepted in place
 * (history.h "unverified")? (Record by record, in the merge loop: a log
 * read in place. A buffer or chunk read with pread is judged whole, its
 * checksums in lanes: recs_first_bad below; checked one by one in the
 * merge loop, lanes gained nothing, docs/performance.md "Checksums in
 * lanes".) */
static inline int rec_ok(const struct history *h, const struct ev_rec *r, size_t p,
                         int64_t prev_t)
{
    return rec_fields_ok(h, r, p) && r->t >= prev_t && r->crc == ev_rec_crc(r);
}

/* Contract: the first j < k for which r[j], record lo + j of its run, is
 * not what rec_ok accepts but for the time order (a helper reading ahead
 * does not know the record before a chunk; the pass checks the order);
 * k when there is none. The checksums are made eight at a time where the
 * CPU allows (ev_rec_crcs). pass.c. */
size_t recs_first_bad(const struct history *h, const struct ev_rec *r, size_t k, size_t lo);

/* The merge key of a record's time. INT64_MAX marks an exhausted log, so a
 * record (of a damaged, still unverified log) claiming that time is keyed
 * just below it: it is still delivered, and rec_ok then rejects it, instead
 * of silently ending its log and every log sorting after it. */
static inline int64_t key_of(int64_t t)
{
    return t == INT64_MAX ? INT64_MAX - 1 : t;
}

/* The look-ahead of the parallel pass (passpar.c): helper threads check
 * the deferred records of their workers and fault their pages in ahead of
 * the one merging thread, which then reads each record's verdict instead
 * of checking it. Per worker, on its own cache line: */
struct ahead_w {
    _Atomic size_t ok;        /* records [0, ok) of the stream checked good */
    _Atomic size_t bad;       /* its first bad record (SIZE_MAX: none found) */
    _Atomic size_t at;        /* the merging thread's position, to bound the look-ahead */
    char pad[64 - 3 * sizeof(size_t)];
};

struct ahead {
    struct ahead_w *w;        /* by worker (aligned, owned by passpar.c) */
    size_t *okc;              /* by worker: the merging thread's copy of ok */
    struct rring **rr;        /* by worker: its read-ahead ring, or NULL (owned by passpar.c) */
    /* The queue of the consumers a helper feeds (passpar.c "consumers fed
     * by a helper"), or oqe NULL: the merging thread pushes the worker and
     * the record of every record it delivers, entry oqt; at oqlim it
     * publishes (and waits for room). */
    uint16_t *oqe;
    const struct ev_rec **oqr;
    size_t oqt, oqlim;
};

/* The offload queue's entries (a power of two); an entry is a worker
 * index (at most OQ_WMAX) and the record delivered (where the merging
 * thread read it: in place, or in a ring's chunk), or the worker | OQ_END
 * at the end of its stream (no record). */
#define OQ_CAP 16384
#define OQ_END 0x8000u
#define OQ_WMAX 0x7fffu

/* Contract: (the merging thread) publish a's queue, and wait for room in it. */
void ahead_push_slow(struct ahead *a);

/* Contract: (the merging thread) push entry en (a worker, | OQ_END) and
 * its record r (NULL with OQ_END). */
static inline void ahead_push(struct ahead *a, unsigned en, const struct ev_rec *r)
{
    size_t k = a->oqt & (OQ_CAP - 1);
    a->oqe[k] = (uint16_t)en;
    a->oqr[k] = r;
    if (++a->oqt == a->oqlim)
        ahead_push_slow(a);
}

/* Contract: (the merging thread) is record r, number p of worker wi's
 * stream and i of its run, bad? The helper's verdict when it has one,
 * else rec_ok (never waits for the helper). passpar.c. */
int ahead_judge(struct ahead *a, int wi, size_t p, const struct history *h,
                const struct ev_rec *r, size_t i, int64_t prev_t);
/* Contract: (the merging thread) it is at record p of worker wi. */
void ahead_at(struct ahead *a, int wi, size_t p);

/* How often the merging thread says where it is, in records of a worker. */
#define AHEAD_AT_EVERY 512

/* Contract: ahead_judge, with the good records the helper already
 * published answered at once. */
static inline int ahead_bad(struct ahead *a, int wi, size_t p, const struct history *h,
                            const struct ev_rec *r, size_t i, int64_t prev_t)
{
    return p < a->okc[wi] ? 0 : ahead_judge(a, wi, p, h, r, i, prev_t);
}

/* Contract: pass_run, the deferred records judged by a's helpers when a
 * is not NULL (pass.c). */
int pass_run_ahead(struct history *h, const struct pass_consumer *c, int n, struct ahead *a);

#endif
