/*
 * pass.c: the merged pass over a history (see pass.h). A tournament tree
 * of losers over the workers' heads, keyed by (time, worker index): after
 * the winner's next record replaces its head, one comparison per level
 * (log2 workers: 6 for 64) finds the next winner. Each record goes only
 * to the consumers that asked for its type. With helpers (passpar.c,
 * pass_run_ahead) the same loop takes a deferred record's verdict from
 * them instead of checking it.
 */
#include "checkers/pass.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "checkers/pass_int.h"

static void worker_done(const struct pass_consumer *c, int n, int wi)
{
    for (int k = 0; k < n; k++)
        if (c[k].ops->worker_end)
            c[k].ops->worker_end(c[k].st, wi);
}

size_t recs_first_bad(const struct history *h, const struct ev_rec *r, size_t k, size_t lo)
{
    uint32_t crc[64];
    for (size_t j = 0; j < k; j += 64) {
        size_t m = k - j < 64 ? k - j : 64;
        ev_rec_crcs(r + j, m, crc);
        for (size_t q = 0; q < m; q++) {
            if (!rec_fields_ok(h, &r[j + q], lo + j + q) || r[j + q].crc != crc[q])
                return j + q;
        }
    }
    return k;
}

void wpos_fill(struct wpos *c)
{
    if (c->rr) {
        ring_take(c);
        return;
    }
    size_t k = c->n - c->i;
    if (k > c->bufcap)
        k = c->bufcap;
    size_t got = hist_read_recs(&c->h->w[c->wi], c->fd, c->off, c->i, k, c->buf, &c->pcur);
    if (got < k) {
        /* The file is shorter than it was at load (or unreadable): the
         * mapping would fault (SIGBUS) past its end. An unverified log's
         * missing records read as zeros, which no record is: the pass
         * finds a bad record there and the history is loaded again, the
         * log as it is now. A verified one (a second pass) is read from
         * the mapping as before pread. */
        if (!c->unverified) {
            c->mapped = 1;
            c->fd = -1;
            c->win = c->ev;
            c->wlo = 0;
            c->whi = c->n;
            return;
        }
        memset(c->buf + got, 0, (k - got) * sizeof(*c->buf));
    }
    /* an unverified log's records judged here, the checksums in lanes; the
     * pass then checks the time order alone (as in a helper's chunk) */
    c->vchk = c->unverified;
    if (c->vchk)
        c->vbad = c->i + recs_first_bad(c->h, c->buf, k, c->i);
    c->win = c->buf;
    c->wlo = c->i;
    c->whi = c->i + k;
}

/* Contract: a read buffer for each worker of h that has a log to pread
 * (hist_run_fd) and no read-ahead ring, in pos[]: no larger than its
 * records, all of them in one buffer *big (xbig_alloc: 2 faults instead
 * of 1,024 for 4 MiB; freed with xbig_free). */
static void alloc_bufs(const struct history *h, struct wpos *pos, struct xbig *big)
{
    int nfd = 0;
    for (int i = 0; i < h->nworkers; i++)
        nfd += !pos[i].rr && reads_fd(&h->w[i]);
    if (!nfd)
        return;
    size_t cap = READ_BYTES / sizeof(struct ev_rec) / (size_t)nfd;
    cap = cap < READ_MIN ? READ_MIN : cap > READ_MAX ? READ_MAX : cap;
    cap -= cap > HIST_PACK_BLOCK ? cap % HIST_PACK_BLOCK : 0; /* a packed stream's blocks */
    size_t total = 0;
    for (int i = 0; i < h->nworkers; i++)
        if (!pos[i].rr && reads_fd(&h->w[i])) {
            pos[i].bufcap = h->w[i].n && h->w[i].n < cap ? h->w[i].n : cap;
            total += pos[i].bufcap;
        }
    struct ev_rec *b = xbig_alloc(big, total * sizeof(*b));
    for (int i = 0; i < h->nworkers; i++)
        if (!pos[i].rr && reads_fd(&h->w[i])) {
            pos[i].buf = b;
            b += pos[i].bufcap;
        }
}

int pass_run(struct history *h, const struct pass_consumer *c, int n)
{
    return pass_run_ahead(h, c, n, NULL);
}

/* Contract: is record p of ps's worker wi (the one ps is at now, after
 * record p - 1) damaged? The same judgement the pass makes when it takes
 * the record. */
static int next_bad(struct ahead *a, struct wpos *ps, int wi, size_t p, const struct history *h)
{
    const struct ev_rec *r = wpos_rec(ps);
    return ps->vchk ? (ps->i >= ps->vbad) | (r->t < ps->prev_t)
           : a      ? ahead_bad(a, wi, p, h, r, ps->i, ps->prev_t)
                    : !rec_ok(h, r, ps->i, ps->prev_t);
}

int pass_run_ahead(struct history *h, const struct pass_consumer *c, int n, struct ahead *a)
{
    int rc = 0;
    int nw = h->nworkers;
    int m = 1; /* leaves: a power of two >= workers; the spare ones never win */
    while (m < nw)
        m *= 2;
    /* node[1..m): the loser of each inner match, kept by value (time and
     * worker) so that a replay reads one array, not node -> cursor: that
     * and the table below took the merge and dispatch from ~220 to ~110
     * instructions per record (callgrind, 10^6 events). */
    struct cursor *node = xmalloc((size_t)m * sizeof(*node));
    struct cursor *win = xmalloc((size_t)(2 * m) * sizeof(*win));
    struct wpos *pos = xcalloc((size_t)m, sizeof(*pos));
    /* By record type: the consumers that want it, in their order. A loop
     * over all of them testing each one's mask cost ~45 instructions per
     * record more. */
    struct target *tg = xmalloc((size_t)(32 * (n ? n : 1)) * sizeof(*tg));
    int ntg[32];
    targets_fill(c, n, tg, ntg);
    for (int i = 0; i < m; i++) {
        pos[i].h = h;
        pos[i].wi = i;
    }
    for (int i = 0; a && a->rr && i < nw; i++)
        pos[i].rr = a->rr[i];
    struct xbig big = {0};
    alloc_bufs(h, pos, &big);
    /* the logs could not be read again: a damaged record ends its log, and
     * is looked at as soon as it is its log's next (its first too), so
     * that the log ends at its last good record's place in the merged
     * order (at the damaged record's own time it ended too late: the holds
     * a consumer ends then end at an earlier time than records it was
     * given before; a log damaged at its first record ended at that
     * record's time, and the records of that instant were judged before
     * the others' exits at it came) */
    int cut_early = h->memo && h->memo->reload_failed;
    for (int i = 0; i < m; i++) {
        win[m + i] = (struct cursor){INT64_MAX, i};
        int first = i < nw && h->w[i].n && enter_run(&h->w[i], &pos[i], 0);
        if (first) {
            pos[i].prev_t = INT64_MIN;
            if (cut_early && pos[i].unverified && next_bad(a, &pos[i], i, 0, h)) {
                history_cut(h, i, 0); /* no good record: ended first */
                first = 0;
            }
        }
        if (first) {
            if (pos[i].fd < 0) /* pread maps nothing; the kernel reads ahead for it */
                history_willneed(&h->w[i], 0, 2 * DROP_EVERY);
            win[m + i].t = key_of(wpos_rec(&pos[i])->t);
        } else if (i < nw) {
            worker_done(c, n, i);
        }
    }
    /* Build: winners bottom-up, each inner node keeps the loser. */
    for (int k = m - 1; k >= 1; k--) {
        int a_first = before(&win[2 * k], &win[2 * k + 1]);
        win[k] = win[2 * k + !a_first];
        node[k] = win[2 * k + a_first];
    }
    struct cursor top = win[1];
    free(win);
    while (nw > 0 && top.t != INT64_MAX) {
        int wi = top.wi;
        const struct hist_worker *w = &h->w[wi];
        struct wpos *ps = &pos[wi];
        size_t p = ps->p++;
        const struct ev_rec *r = wpos_rec(ps);
        if (ps->i + PREFETCH_AHEAD < ps->whi)
            __builtin_prefetch(&ps->win[ps->i + PREFETCH_AHEAD - ps->wlo]);
        /* an epoch's first record is checked against the previous epoch's last */
        int bad = ps->unverified &&
                  (ps->vchk ? (ps->i >= ps->vbad) | (r->t < ps->prev_t)
                            : a ? ahead_bad(a, wi, p, h, r, ps->i, ps->prev_t)
                                : !rec_ok(h, r, ps->i, ps->prev_t));
        if (a && !ps->rr && (p % AHEAD_AT_EVERY) == 0) /* a ring says it by its chunks */
            ahead_at(a, wi, p);
        if (bad && !(h->memo && h->memo->reload_failed)) {
            rc = -1; /* the caller reloads with every record checked, and starts over */
            break;
        }
        if (!bad) {
            const struct target *d = &tg[(r->type & 31) * n];
            for (int j = 0, nj = ntg[r->type & 31]; j < nj; j++)
                d[j].event(d[j].st, wi, r);
            /* the offloaded consumers' calls, made by a helper from r where
             * it is: in place, or in a ring's chunk (with the queue, every
             * worker read with pread has a ring, never ps->buf: passpar.c) */
            if (a && a->oqe)
                ahead_push(a, (unsigned)wi, r);
            if (p + 1 - ps->dropped >= DROP_EVERY) {
                if (ps->fd < 0) { /* pread maps nothing; the kernel reads ahead for it */
                    history_drop(w, ps->dropped, p + 1);
                    history_willneed(w, p + 1 + DROP_EVERY, p + 1 + 2 * DROP_EVERY);
                }
                ps->dropped = p + 1;
            }
        }
        /* a bad record that cannot be read again ends its log (the loader
         * cuts a damaged log there too; history_reload warned) */
        if (bad)
            history_cut(h, wi, p);
        ps->prev_t = r->t;
        struct cursor x = {INT64_MAX, wi};
        int more = !bad && p + 1 < w->n && (++ps->i < ps->n || next_run(w, ps, p));
        if (more && cut_early && ps->unverified && next_bad(a, ps, wi, p + 1, h)) {
            history_cut(h, wi, p + 1); /* its next record is damaged: it ends here */
            more = 0;
        }
        if (more) {
            x.t = key_of(wpos_rec(ps)->t);
        } else {
            worker_done(c, n, wi);
            if (ps->mapped) /* pread (every run) maps nothing: no page to drop */
                history_drop(w, ps->dropped, w->n);
        }
        /* Replay the winner's path to the root against the stored losers. */
        for (int k = (m + wi) / 2; k >= 1; k /= 2) {
            struct cursor l = node[k];
            int swap = before(&l, &x);
            node[k] = swap ? x : l;
            x = swap ? l : x;
        }
        top = x;
    }
    for (int k = 0; k < n && rc == 0; k++)
        if (c[k].ops->end)
            c[k].ops->end(c[k].st);
    if (rc == 0) {
        history_mark_verified(h);
        history_after_pass(h);
    }
    free(tg);
    xbig_free(&big);
    free(pos);
    free(node);
    return rc;
}

int checker_run_one(const struct checker_def *d, struct history *h,
                    const struct check_params *p, struct json *res)
{
    struct pass_consumer c = {&d->ops, d->init(h, p, res), 0};
    if (pass_run(h, &c, 1) < 0) { /* a deferred record was bad: load it all checked, again */
        struct json *scratch = json_new_obj();
        d->finish(c.st, scratch);
        json_free(scratch);
        history_reload(h);
        c.st = d->init(h, p, res);
        pass_run(h, &c, 1);
    }
    return d->finish(c.st, res);
}
