/*
 * histmap.c: reading the mapped event logs of a history (history.h): a
 * worker's stream across its epochs (hist_rec, hist_run), and keeping the
 * checker's memory flat: which pages of the logs are resident, read ahead
 * and dropped behind the pass (history_drop, history_willneed,
 * history_after_pass). The loader (history.c) maps the logs; this file
 * only reads them.
 */
#include "checkers/histmap.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkers/histpack.h"

/* The kernel maps up to this many bytes around a faulting page of a file
 * mapping at once (fault-around, fault_around_bytes: 64 KiB by default),
 * aligned on the virtual address, so pages just behind a drop point come
 * back when the page after it is first read. */
#define FAULT_AROUND (64 * 1024)

/* Contract: drop the resident pages of map's bytes [from, to) from this
 * process; the mapping stays valid. The page holding `from` goes too (the
 * caller is done with what precedes it), the one holding `to` stays: so
 * consecutive ranges leave no page behind (rounding `from` up kept one
 * page per range, and RSS grew by 100 MB over 10^8 events). The range
 * also reaches FAULT_AROUND back before `from`: what fault-around mapped
 * again behind the previous range's end. A single log's drop points
 * happen to fall on 64 KiB boundaries; an epoch's do not, and without this
 * each kept up to 15 pages per drop point: RSS grew from 29 MB at 10^6
 * events to 57 MB at 3 x 10^7 with 64 epochs per worker. */
void histmap_drop_range(const void *map, size_t from, size_t to)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    from = from > FAULT_AROUND ? (from - FAULT_AROUND) / pg * pg : 0;
    to = to / pg * pg;
    if (map && to > from)
        madvise((char *)(uintptr_t)map + from, to - from, MADV_DONTNEED);
}

/* ---- reading a worker's stream ---- */

/* Contract: the run of w holding stream record i: its index, its first
 * record's stream index in *base. */
static int run_of(const struct hist_worker *w, size_t i, size_t *base)
{
    if (!w->seg) {
        *base = 0;
        return 0;
    }
    int lo = 0, hi = w->nseg; /* the last segment with base <= i */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (w->seg[mid].base <= i)
            lo = mid;
        else
            hi = mid;
    }
    *base = w->seg[lo].base;
    return lo;
}

const struct ev_rec *hist_seg_rec(const struct hist_worker *w, size_t i)
{
    size_t base;
    int k = run_of(w, i, &base);
    return &w->seg[k].ev[i - base];
}

const struct ev_rec *hist_last_rec(const struct hist_worker *w)
{
    if (w->pack)
        return &w->pack->last;
    const struct ev_rec *ev = w->ev;
    const struct evlog_file *f = &w->file;
    size_t n = w->n;
    if (w->seg) {
        const struct hist_seg *sg = &w->seg[w->nseg - 1];
        ev = sg->ev;
        f = &sg->file;
        n = sg->n;
        if (!n) /* an empty last epoch: the record is in an earlier one */
            return hist_seg_rec(w, w->n - 1);
    }
    /* n == f->n: the run is the whole log as loaded (a cut one is not) */
    return f->has_last && ev == f->recs && n == f->n ? &f->last : &ev[n - 1];
}

int hist_nruns(const struct hist_worker *w)
{
    return w->seg ? w->nseg : 1;
}

void hist_run(const struct hist_worker *w, int k, const struct ev_rec **ev, size_t *n,
              int *unverified)
{
    if (w->seg) {
        *ev = w->seg[k].ev;
        *n = w->seg[k].n;
        *unverified = w->seg[k].unverified;
    } else {
        *ev = w->ev;
        *n = w->n;
        *unverified = w->unverified;
    }
}

/* Contract: run k of w when it is read in place from a log's mapping: that
 * log, with the stream index of its first record (*base) and its records
 * in the stream (*n); NULL for owned or borrowed memory. */
static const struct evlog_file *run_log(const struct hist_worker *w, int k, size_t *base,
                                        size_t *n)
{
    const struct evlog_file *f = w->seg ? &w->seg[k].file : &w->file;
    const struct ev_rec *ev = w->seg ? w->seg[k].ev : w->ev;
    *base = w->seg ? w->seg[k].base : 0;
    *n = w->seg ? w->seg[k].n : w->n;
    return f->map && ev == f->recs ? f : NULL;
}

int hist_run_fd(const struct hist_worker *w, int k, off_t *off)
{
    if (w->pack) { /* its spill may be in memory: no descriptor, read all the same */
        *off = 0;
        return HIST_FD_PACKED;
    }
    size_t base, n;
    const struct evlog_file *f = run_log(w, k, &base, &n);
    if (!f || !f->has_fd)
        return -1;
    *off = (off_t)((const char *)f->recs - (const char *)f->map);
    return f->fd;
}

/* Contract: drop every resident page of f's mapping (its last, partial
 * page too). */
void histmap_drop_log(const struct evlog_file *f)
{
    histmap_drop_range(f->map, 0, f->map_len + (size_t)sysconf(_SC_PAGESIZE) - 1);
}

/* Contract: drop the resident pages of every log h maps. Loading looks at
 * a few records of each log (its first and last ones), and each look maps
 * up to 16 pages around it (fault-around): kept, with one log per epoch of
 * every restarted worker, that was 32 MB at 10^7 events in 1024 logs, 120
 * MB in 4096 (load_worker drops each epoch's as it goes). */
void histmap_drop_logs(const struct history *h)
{
    for (int i = 0; i < h->nworkers; i++)
        for (int k = 0; k < hist_nruns(&h->w[i]); k++) {
            size_t base, n;
            const struct evlog_file *f = run_log(&h->w[i], k, &base, &n);
            if (f)
                histmap_drop_log(f);
        }
}

void history_after_pass(const struct history *h)
{
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        for (int k = 0; k < hist_nruns(w); k++) {
            size_t base, n;
            const struct evlog_file *f = run_log(w, k, &base, &n);
            if (!f)
                continue;
            /* Later readers (stories, the timeline) binary-search: without
             * this, each probe maps 16 pages around it (fault-around), and
             * the stories' searches of 64 workers made RSS grow with the log. */
            madvise(f->map, f->map_len, MADV_RANDOM);
            histmap_drop_log(f);
        }
    }
}

/* Contract: the records [*lo, *hi) of run k of w that the stream's range
 * [from, to) covers, and the log they are read from in place; NULL when
 * they are none or not in a mapped log (owned or borrowed memory). *n: the
 * run's records. */
static const struct evlog_file *run_part(const struct hist_worker *w, int k, size_t from,
                                         size_t to, size_t *lo, size_t *hi, size_t *n)
{
    size_t base;
    const struct evlog_file *f = run_log(w, k, &base, n);
    if (!f || to <= base)
        return NULL;
    *lo = from > base ? from - base : 0;
    *hi = to - base < *n ? to - base : *n;
    return *lo < *hi ? f : NULL;
}

/* Contract: apply `advice` to the pages of the stream's records [from,
 * to) where they lie in mapped logs: MADV_WILLNEED, or MADV_DONTNEED
 * through drop_range (up to a log's end: its last page goes too, one page
 * per epoch would otherwise stay behind). */
static void advise_records(const struct hist_worker *w, size_t from, size_t to, int advice)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (int k = 0; k < hist_nruns(w); k++) {
        size_t lo, hi, n;
        const struct evlog_file *f = run_part(w, k, from, to, &lo, &hi, &n);
        if (!f)
            continue;
        size_t a = EVLOG_HEADER_SIZE + lo * EVLOG_REC_SIZE;
        size_t b = EVLOG_HEADER_SIZE + hi * EVLOG_REC_SIZE;
        if (advice == MADV_DONTNEED)
            histmap_drop_range(f->map, a, hi == n ? f->map_len + pg - 1 : b);
        else
            madvise((char *)f->map + a / pg * pg, b - a / pg * pg, advice);
    }
}

void history_willneed(const struct hist_worker *w, size_t from, size_t to)
{
    advise_records(w, from, to, MADV_WILLNEED);
}

void history_drop(const struct hist_worker *w, size_t from, size_t to)
{
    advise_records(w, from, to, MADV_DONTNEED);
}

/* ---- single records, read with pread where the log allows ---- */

size_t hist_read_recs(const struct hist_worker *w, int fd, off_t off, size_t lo, size_t k,
                      struct ev_rec *buf, struct hist_pack_cur *cur)
{
    if (w->pack) {
        hist_pack_read(w->pack, lo, k, buf, cur);
        return k;
    }
    size_t want = k * sizeof(*buf), got = 0;
    off_t at = off + (off_t)(lo * sizeof(*buf));
    while (got < want) {
        ssize_t r = pread(fd, (char *)buf + got, want - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got / sizeof(*buf);
}

void hist_reader_init(struct hist_reader *r, const struct hist_worker *w)
{
    r->w = w;
    r->lo = r->hi = 0;
    r->mapped = 0;
}

const struct ev_rec *hist_reader_rec(struct hist_reader *r, size_t i)
{
    if (i >= r->lo && i < r->hi)
        return &r->buf[i - r->lo];
    const struct hist_worker *w = r->w;
    size_t base, n;
    const struct ev_rec *ev;
    int unverified;
    int k = run_of(w, i, &base);
    hist_run(w, k, &ev, &n, &unverified);
    off_t off;
    int fd = hist_run_fd(w, k, &off);
    if (fd >= 0) {
        /* forward from i; or, just before the block held (a scan going
         * back), the block that ends at i, within the run */
        size_t j = i - base;
        if (w->pack) /* its block: decoded from its start anyway */
            j -= j % HIST_PACK_BLOCK;
        else if (r->hi > r->lo && i < r->lo && r->lo - i <= HIST_READER_BLOCK)
            j = j >= HIST_READER_BLOCK - 1 ? j - (HIST_READER_BLOCK - 1) : 0;
        size_t want = n - j < HIST_READER_BLOCK ? n - j : HIST_READER_BLOCK;
        if (hist_read_recs(w, fd, off, j, want, r->buf, NULL) == want) {
            r->lo = base + j;
            r->hi = base + j + want;
            return &r->buf[i - r->lo];
        }
    }
    r->mapped = 1; /* in place (also when the file no longer reads back) */
    return &ev[i - base];
}

size_t hist_reader_first_at(struct hist_reader *r, int64_t at)
{
    const struct hist_worker *w = r->w;
    size_t lo = 0, hi = w->n; /* the answer is in [lo, hi] */
    if (hi == 0 || hist_last_rec(w)->t < at)
        return hi;
    /* the times known just outside [lo, hi): tlo of record lo - 1 (below
     * at), thi of record hi (at or above); none yet for lo = 0 */
    int64_t thi = hist_last_rec(w)->t, tlo = 0;
    int have_lo = 0, guess = 1, blocks = 0; /* blocks: the last read took a block */
    hi = w->n - 1; /* the last record is at or above at */
    for (int first = 1; lo < hi; first = 0) {
        /* the first read at the start: its block, or the time there to guess from */
        size_t mid = first ? lo : lo + (hi - lo) / 2;
        if (!first && guess && have_lo && thi > tlo) { /* where at falls between them */
            /* unsigned differences (exact: tlo < at <= thi): f in [0, 1] even
             * where the doubles of tlo and thi are one (0 / 0 made a NaN) */
            double f = (double)((uint64_t)at - (uint64_t)tlo) /
                       (double)((uint64_t)thi - (uint64_t)tlo);
            mid = lo + (size_t)(f * (double)(hi - lo));
        }
        if (!first) {
            if (blocks) /* a read takes the block from mid on: mid in its middle (a
                           stream read in place reads one record: mid as it is) */
                mid = mid - lo > HIST_READER_BLOCK / 2 ? mid - HIST_READER_BLOCK / 2 : lo;
            mid = mid >= hi ? hi - 1 : mid;
            guess = !guess; /* a guess, then a halving: at worst twice the halvings */
        }
        const struct ev_rec *x = hist_reader_rec(r, mid);
        blocks = mid >= r->lo && mid < r->hi && r->hi - r->lo > 1;
        if (blocks) { /* a block read: all of it */
            size_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
            if (r->buf[b - 1 - r->lo].t < at) {
                lo = b;
                tlo = r->buf[b - 1 - r->lo].t;
                have_lo = 1;
            } else if (r->buf[a - r->lo].t >= at) {
                hi = a;
                thi = r->buf[a - r->lo].t;
            } else { /* in the block: record a below at, b - 1 at or above */
                size_t l = a + 1, h = b - 1;
                while (l < h) {
                    size_t m = l + (h - l) / 2;
                    if (r->buf[m - r->lo].t < at)
                        l = m + 1;
                    else
                        h = m;
                }
                return l;
            }
        } else if (x->t < at) {
            lo = mid + 1;
            tlo = x->t;
            have_lo = 1;
        } else {
            hi = mid;
            thi = x->t;
        }
    }
    return lo;
}

void hist_reader_done(struct hist_reader *r)
{
    if (r->mapped)
        history_drop(r->w, 0, r->w->n);
}
