/*
 * pass.c: the merged pass over a history (see pass.h). A tournament tree
 * of losers over the workers' heads, keyed by (time, worker index): after
 * the winner's next record replaces its head, one comparison per level
 * (log2 workers: 6 for 64) finds the next winner. Each record goes only
 * to the consumers that asked for its type.
 */
#include "checkers/pass.h"

#include <stdlib.h>

#include "util/xalloc.h"

/* Records between two history_drop calls of one worker: 256 KiB of log, so
 * 64 workers keep ~16 MiB of mapped log resident at most. (Reading the
 * logs with pread into buffers instead of through the mapping cost 25%
 * more CPU: a second copy of every byte.) */
#define DROP_EVERY 4096

/* How far ahead of a worker's cursor to prefetch: 64 workers interleave
 * 64 sequential streams, more than the hardware prefetcher follows. With
 * it the whole check of 10^7 events takes 0.56 s of CPU, without it 0.85 s
 * (4 or 16 ahead: the same as 8). */
#define PREFETCH_AHEAD 8

struct cursor {
    int64_t t;          /* time of the head; INT64_MAX once exhausted */
    int wi;
};

/* (time, worker index) order, written without short-circuits so that the
 * tree replay below compiles to selects; on 10^7 events neither this nor
 * the tree itself measured differently from a binary heap with branches. */
static int before(const struct cursor *a, const struct cursor *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->wi < b->wi));
}

static void worker_done(const struct pass_consumer *c, int n, int wi)
{
    for (int k = 0; k < n; k++)
        if (c[k].ops->worker_end)
            c[k].ops->worker_end(c[k].st, wi);
}

/* Contract: is record r, number p of an unverified log whose previous
 * record is at prev_t, what the loader would have accepted in place
 * (history.h "unverified")? */
static int rec_ok(const struct history *h, const struct ev_rec *r, size_t p, int64_t prev_t)
{
    return r->seq == (uint32_t)p && r->type >= 1 && r->type < EV__MAX && r->t >= prev_t &&
           (r->type == EV_CRASH || r->res < h->nres) && r->crc == ev_rec_crc(r);
}

/* The merge key of a record's time. INT64_MAX marks an exhausted log, so a
 * record (of a damaged, still unverified log) claiming that time is keyed
 * just below it: it is still delivered, and rec_ok then rejects it, instead
 * of silently ending its log and every log sorting after it. */
static inline int64_t key_of(int64_t t)
{
    return t == INT64_MAX ? INT64_MAX - 1 : t;
}

int pass_run(const struct history *h, const struct pass_consumer *c, int n)
{
    int rc = 0;
    int nw = h->nworkers;
    int m = 1; /* leaves: a power of two >= workers; the spare ones never win */
    while (m < nw)
        m *= 2;
    struct cursor *cur = xmalloc((size_t)m * sizeof(*cur));
    int *loser = xmalloc((size_t)m * sizeof(*loser)); /* loser[1..m): inner nodes */
    size_t *pos = xcalloc((size_t)m, sizeof(*pos));
    size_t *dropped = xcalloc((size_t)m, sizeof(*dropped));
    uint32_t *mask = xmalloc((size_t)(n ? n : 1) * sizeof(*mask));
    for (int k = 0; k < n; k++)
        mask[k] = c[k].ops->types ? c[k].ops->types : UINT32_MAX;
    for (int i = 0; i < m; i++) {
        cur[i] = (struct cursor){INT64_MAX, i};
        if (i < nw && h->w[i].n) {
            history_willneed(&h->w[i], 0, 2 * DROP_EVERY);
            cur[i].t = key_of(h->w[i].ev[0].t);
        }
        else if (i < nw)
            worker_done(c, n, i);
    }
    /* Build: winners bottom-up, each inner node keeps the loser. */
    int *win = xmalloc((size_t)(2 * m) * sizeof(*win));
    for (int i = 0; i < m; i++)
        win[m + i] = i;
    for (int k = m - 1; k >= 1; k--) {
        int a = win[2 * k], b = win[2 * k + 1];
        int a_first = before(&cur[a], &cur[b]);
        win[k] = a_first ? a : b;
        loser[k] = a_first ? b : a;
    }
    int top = win[1];
    free(win);
    while (nw > 0 && cur[top].t != INT64_MAX) {
        int wi = top;
        const struct hist_worker *w = &h->w[wi];
        size_t p = pos[wi]++;
        const struct ev_rec *r = &w->ev[p];
        if (p + PREFETCH_AHEAD < w->n)
            __builtin_prefetch(&w->ev[p + PREFETCH_AHEAD]);
        int bad = w->unverified && !rec_ok(h, r, p, p ? w->ev[p - 1].t : INT64_MIN);
        if (bad && !(h->memo && h->memo->reload_failed)) {
            rc = -1; /* the caller reloads with every record checked, and starts over */
            break;
        }
        if (!bad) {
            uint32_t bit = 1u << (r->type & 31);
            for (int k = 0; k < n; k++)
                if (mask[k] & bit)
                    c[k].ops->event(c[k].st, wi, r);
            if (p + 1 - dropped[wi] >= DROP_EVERY) {
                history_drop(w, dropped[wi], p + 1);
                dropped[wi] = p + 1;
                history_willneed(w, p + 1 + DROP_EVERY, p + 1 + 2 * DROP_EVERY);
            }
        }
        /* a bad record that cannot be read again ends its log (the loader
         * cuts a damaged log there too; history_reload warned) */
        if (bad)
            history_cut(h, wi, p);
        if (!bad && p + 1 < w->n) {
            cur[wi].t = key_of(w->ev[p + 1].t);
        } else {
            cur[wi].t = INT64_MAX;
            worker_done(c, n, wi);
            history_drop(w, dropped[wi], w->n);
        }
        /* Replay the winner's path to the root against the stored losers. */
        int x = wi;
        for (int k = (m + wi) / 2; k >= 1; k /= 2) {
            int l = loser[k];
            int swap = before(&cur[l], &cur[x]);
            loser[k] = swap ? x : l;
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
    free(mask);
    free(dropped);
    free(pos);
    free(loser);
    free(cur);
    return rc;
}

int checker_run_one(const struct checker_def *d, const struct history *h,
                    const struct check_params *p, struct json *res)
{
    struct pass_consumer c = {&d->ops, d->init(h, p, res)};
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
