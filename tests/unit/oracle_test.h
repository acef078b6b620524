/*
 * oracle_test.h: what the checkers' random-history oracle tests
 * (test_mutex_oracle.c, test_liveness_oracle.c) share: their generated
 * per-worker logs, appended to and handed to the checkers as the JSONL
 * loader would.
 */
#ifndef LS_ORACLE_TEST_H
#define LS_ORACLE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/history.h"

/* Contract: a record appended to a worker's log *ev of *n records (room
 * for *cap, grown): zeroed, then t, its place in the log (seq), type and
 * resource set; the caller fills the rest. */
static inline struct ev_rec *oracle_append(struct ev_rec **ev, size_t *n, size_t *cap, int64_t t,
                                           int type, int res)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 128;
        *ev = realloc(*ev, *cap * sizeof(**ev));
        if (!*ev)
            abort();
    }
    struct ev_rec *r = &(*ev)[*n];
    memset(r, 0, sizeof(*r));
    r->t = t;
    r->seq = (uint32_t)(*n)++;
    r->type = (uint8_t)type;
    r->res = (uint16_t)res;
    return r;
}

/* Contract: h as the JSONL loader builds it from nw workers' logs ev[w]
 * of nev[w] records (workers in id order, each log in its own order; nres
 * resources r0.. by number), pointing at those records: h owns none of
 * them (history_free frees the rest). */
static inline void oracle_history(struct ev_rec *const *ev, const size_t *nev, int nw, int nres,
                                  struct history *h)
{
    memset(h, 0, sizeof(*h));
    h->source = strdup("generated");
    h->w = calloc((size_t)(nw ? nw : 1), sizeof(*h->w));
    h->res_names = calloc((size_t)(nres ? nres : 1), sizeof(*h->res_names));
    if (!h->source || !h->w || !h->res_names)
        abort();
    for (int w = 0; w < nw; w++) {
        if (!nev[w])
            continue;
        struct hist_worker *x = &h->w[h->nworkers++];
        x->id = w;
        x->ev = ev[w];
        x->n = nev[w];
        x->complete = 1;
        if (x->ev[x->n - 1].t > h->end)
            h->end = x->ev[x->n - 1].t;
    }
    for (; h->nres < nres; h->nres++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", h->nres);
        if (!(h->res_names[h->nres] = strdup(name)))
            abort();
    }
}

#endif
