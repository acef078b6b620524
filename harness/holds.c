/*
 * holds.c: the hold table of the result model (holds.h). Each worker's
 * records are read in order and paired as the timeline pairs them: a grant
 * (acquire_ok), its enter, renewals, a lost notice, its exit, then the
 * release that follows; a crash ends every open hold. It judges nothing:
 * the checkers decide what overlapped, this only lists the holds.
 */
#include "harness/holds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_OPEN 8 /* grants of one worker at once (the timeline's bound) */

enum hold_end { END_EXIT, END_CRASH, END_OPEN };
enum hold_rel { REL_NONE, REL_OK, REL_NOT_OWNER, REL_FAIL };

struct hrow {
    uint64_t seq;               /* its number among all holds (sampling) */
    int64_t grant, enter, exit, lease;
    uint64_t fence;
    int worker, res;
    unsigned renewals;
    uint8_t has_fence, no_lease, entered, end, rel, lost, keep;
};

struct table {
    struct hrow *rows;
    size_t n, cap;
    uint64_t seq, every;
    size_t must;                /* rows kept because a violation names them */
    const double (*keys)[2];    /* violation holders (worker, acquired_ms), sorted */
    size_t nkeys;
};

static int cmp_key(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Is the hold of worker granted at grant (ns) a listed violation's holder? */
static int named(const struct table *t, int worker, int64_t grant)
{
    size_t lo = 0, hi = t->nkeys;
    double ms = (double)grant / 1e6;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const double *k = t->keys[mid];
        if (k[0] < worker || (k[0] == worker && k[1] < ms - 0.0005))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nkeys && t->keys[lo][0] == worker && fabs(t->keys[lo][1] - ms) <= 0.0005;
}

/* Contract: keep every `every`-th row plus the named ones; when the others
 * pass HOLDS_MAX, every doubles and the rows it no longer keeps go (so a
 * sampled table keeps between HOLDS_MAX / 2 and HOLDS_MAX of them). */
static void add_row(struct table *t, struct hrow *r)
{
    r->seq = t->seq++;
    r->keep = named(t, r->worker, r->grant);
    if (!r->keep && r->seq % t->every)
        return;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->rows = xrealloc(t->rows, t->cap * sizeof(*t->rows));
    }
    t->rows[t->n++] = *r;
    t->must += r->keep;
    while (t->n - t->must > (size_t)HOLDS_MAX) {
        t->every *= 2;
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->rows[i].keep || t->rows[i].seq % t->every == 0)
                t->rows[k++] = t->rows[i];
        t->n = k;
    }
}

struct wstate {
    struct hrow g[MAX_OPEN];    /* grants not yet ended */
    int ng;
    struct hrow done[MAX_OPEN]; /* exited, waiting for their release */
    int nd;
    int64_t last;
};

static void flush_done(struct table *t, struct wstate *s, int res)
{
    for (int i = 0; i < s->nd; i++)
        if (res < 0 || s->done[i].res == res) {
            add_row(t, &s->done[i]);
            s->done[i--] = s->done[--s->nd];
        }
}

/* Contract: one record r of worker `worker` through its state s. */
static void step(struct table *t, struct wstate *s, int worker, const struct ev_rec *r)
{
    int i;
    s->last = r->t;
    switch (r->type) {
    case EV_ACQUIRE_OK:
        flush_done(t, s, r->res); /* a release never came */
        if (s->ng < MAX_OPEN) {
            struct hrow *g = &s->g[s->ng++];
            memset(g, 0, sizeof(*g));
            g->worker = worker;
            g->res = r->res;
            g->grant = r->t;
            g->no_lease = (r->flags & EVF_NO_LEASE) != 0;
            g->lease = r->valid_until;
            g->has_fence = (r->flags & EVF_FENCE) != 0;
            g->fence = r->fence;
        }
        break;
    case EV_ENTER:
        for (i = s->ng - 1; i >= 0; i--)
            if (s->g[i].res == r->res && !s->g[i].entered)
                break;
        if (i < 0 && s->ng < MAX_OPEN) { /* an enter without a grant (a foreign history) */
            i = s->ng++;
            memset(&s->g[i], 0, sizeof(s->g[i]));
            s->g[i] = (struct hrow){.worker = worker, .res = r->res, .grant = r->t,
                                    .no_lease = 1};
        }
        if (i >= 0) {
            s->g[i].entered = 1;
            s->g[i].enter = r->t;
        }
        break;
    case EV_RENEW_OK:
        for (i = 0; i < s->ng; i++)
            if (s->g[i].res == r->res) {
                s->g[i].renewals++;
                if (!s->g[i].no_lease && r->valid_until > s->g[i].lease)
                    s->g[i].lease = r->valid_until;
            }
        break;
    case EV_LOST:
        for (i = 0; i < s->ng; i++)
            if (s->g[i].res == r->res)
                s->g[i].lost = 1;
        break;
    case EV_EXIT:
        for (i = 0; i < s->ng; i++)
            if (s->g[i].entered && s->g[i].res == r->res) {
                s->g[i].exit = r->t;
                s->g[i].end = END_EXIT;
                if (s->nd == MAX_OPEN)
                    flush_done(t, s, -1);
                s->done[s->nd++] = s->g[i];
                s->g[i] = s->g[--s->ng];
                break;
            }
        break;
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
        for (i = 0; i < s->nd; i++)
            if (s->done[i].res == r->res) {
                s->done[i].rel = r->type == EV_RELEASE_OK ? REL_OK
                               : r->type == EV_RELEASE_NOT_OWNER ? REL_NOT_OWNER : REL_FAIL;
                add_row(t, &s->done[i]);
                s->done[i] = s->done[--s->nd];
                return;
            }
        for (i = 0; i < s->ng; i++) /* a grant released before anyone entered it: no hold */
            if (s->g[i].res == r->res && !s->g[i].entered) {
                s->g[i] = s->g[--s->ng];
                break;
            }
        break;
    case EV_CRASH:
        flush_done(t, s, -1);
        for (i = 0; i < s->ng; i++)
            if (s->g[i].entered) {
                s->g[i].exit = r->t;
                s->g[i].end = END_CRASH;
                add_row(t, &s->g[i]);
            }
        s->ng = 0;
        break;
    default:
        break;
    }
}

static void worker_end(struct table *t, struct wstate *s)
{
    flush_done(t, s, -1);
    for (int i = 0; i < s->ng; i++)
        if (s->g[i].entered) {
            s->g[i].exit = s->last;
            s->g[i].end = END_OPEN;
            add_row(t, &s->g[i]);
        }
    s->ng = 0;
}

/* v in decimal (no printf: a table of 10^5 holds formats a million numbers). */
static void put_u(struct strbuf *sb, unsigned long long v)
{
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sb_reserve(sb, (size_t)n);
    while (n)
        sb->buf[sb->len++] = buf[--n];
    sb->buf[sb->len] = '\0';
}

/* ns as ms rounded to the microsecond, trailing zeros dropped: 1234.5 */
static void put_ms(struct strbuf *sb, int64_t ns)
{
    long long us = llround((double)ns / 1e3);
    if (us < 0) {
        sb_putc(sb, '-');
        us = -us;
    }
    put_u(sb, (unsigned long long)(us / 1000));
    int frac = (int)(us % 1000);
    if (!frac)
        return;
    char d[4] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10),
                 0};
    int k = 3;
    while (d[k - 1] == '0')
        k--;
    sb_putc(sb, '.');
    sb_append(sb, d, (size_t)k);
}

static int cmp_row(const void *a, const void *b)
{
    const struct hrow *x = a, *y = b;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    return x->enter < y->enter ? -1 : x->enter > y->enter;
}

/* Contract: see holds.h. */
struct json *holds_build(const struct history *h, const struct json *result)
{
    struct table t = {.every = 1};
    const struct json *vs = json_obj_get(result, "violations");
    size_t nk = 0, capk = 0;
    double (*keys)[2] = NULL;
    for (size_t i = 0; vs && vs->type == JSON_ARR && i < vs->n; i++) {
        const struct json *hl = json_obj_get(vs->kids[i], "holders");
        for (size_t j = 0; hl && hl->type == JSON_ARR && j < hl->n; j++) {
            if (nk == capk) {
                capk = capk ? capk * 2 : 64;
                keys = xrealloc(keys, capk * sizeof(*keys));
            }
            keys[nk][0] = (double)json_get_int(hl->kids[j], "worker", -1);
            keys[nk][1] = json_get_num(hl->kids[j], "acquired_ms", -1);
            nk++;
        }
    }
    if (nk)
        qsort(keys, nk, sizeof(*keys), cmp_key);
    t.keys = (const double (*)[2])keys;
    t.nkeys = nk;
    for (int wi = 0; wi < h->nworkers; wi++) {
        const struct hist_worker *w = &h->w[wi];
        struct wstate s;
        memset(&s, 0, sizeof(s));
        if (w->pack) { /* a packed stream: read back, never in place */
            struct hist_reader rd;
            hist_reader_init(&rd, w);
            for (size_t i = 0; i < w->n; i++)
                step(&t, &s, w->id, hist_reader_rec(&rd, i));
            hist_reader_done(&rd);
        }
        for (int k = 0; !w->pack && k < hist_nruns(w); k++) {
            const struct ev_rec *ev;
            size_t n;
            int unverified;
            hist_run(w, k, &ev, &n, &unverified);
            for (size_t i = 0; i < n; i++)
                step(&t, &s, w->id, &ev[i]);
        }
        worker_end(&t, &s);
        history_drop(w, 0, w->n);
    }
    free(keys);
    if (t.n) /* no rows: t.rows is NULL, which qsort may not be given */
        qsort(t.rows, t.n, sizeof(*t.rows), cmp_row);

    struct json *o = json_new_obj();
    json_obj_set_int(o, "total", (int64_t)t.seq);
    json_obj_set_int(o, "kept", (int64_t)t.n);
    json_obj_set_int(o, "sampled_every", (int64_t)t.every);
    struct json *rn = json_obj_set(o, "resources", json_new_arr());
    for (int i = 0; i < h->nres; i++)
        json_arr_push(rn, json_new_str(h->res_names[i] ? h->res_names[i] : "?"));
    static const char *const ends[] = {"exit", "crash", "open"};
    static const char *const rels[] = {"none", "ok", "not_owner", "failed"};
    struct json *e = json_obj_set(o, "ends", json_new_arr());
    for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
        json_arr_push(e, json_new_str(ends[i]));
    e = json_obj_set(o, "releases", json_new_arr());
    for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++)
        json_arr_push(e, json_new_str(rels[i]));
    /* Each column one string of comma-separated numbers ("null" for none):
     * a hold costs a few dozen bytes of the model, not a dozen JSON nodes. */
    enum { C_WORKER, C_RES, C_GRANT, C_ENTER, C_EXIT, C_LEASE, C_FENCE, C_END, C_REL, C_RENEW,
           C_LOST, NCOL };
    static const char *const cols[NCOL] = {"worker", "res", "grant_ms", "enter_ms", "exit_ms",
                                           "valid_until_ms", "fence", "end", "release",
                                           "renewals", "lost"};
    struct strbuf sb[NCOL];
    for (int c = 0; c < NCOL; c++)
        sb_init(&sb[c]);
    for (size_t i = 0; i < t.n; i++) {
        const struct hrow *x = &t.rows[i];
        if (i)
            for (int c = 0; c < NCOL; c++)
                sb_putc(&sb[c], ',');
        put_u(&sb[C_WORKER], (unsigned)x->worker);
        put_u(&sb[C_RES], (unsigned)x->res);
        put_ms(&sb[C_GRANT], x->grant);
        put_ms(&sb[C_ENTER], x->enter);
        put_ms(&sb[C_EXIT], x->exit);
        if (x->no_lease)
            sb_puts(&sb[C_LEASE], "null");
        else
            put_ms(&sb[C_LEASE], x->lease);
        if (x->has_fence)
            put_u(&sb[C_FENCE], x->fence);
        else
            sb_puts(&sb[C_FENCE], "null");
        sb_putc(&sb[C_END], (char)('0' + x->end));
        sb_putc(&sb[C_REL], (char)('0' + x->rel));
        put_u(&sb[C_RENEW], x->renewals);
        sb_putc(&sb[C_LOST], x->lost ? '1' : '0');
    }
    struct json *d = json_obj_set(o, "columns", json_new_obj());
    for (int c = 0; c < NCOL; c++) {
        json_obj_set_str(d, cols[c], sb_cstr(&sb[c]));
        sb_free(&sb[c]);
    }
    free(t.rows);
    return o;
}
