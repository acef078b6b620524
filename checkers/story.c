/*
 * story.c: violation stories (see story.h). For one violation it finds
 * each holder's hold in its worker's log (by worker, resource and enter
 * time), collects the records from that grant to its release outcome,
 * adds lease expiries computed from the grant and renewals, the starts
 * and ends of faults that touched the holders, the overlap, and a closing
 * sentence on the class and on what the storage did with the stale
 * holder's writes. Items are sorted by time; the wording is fixed per
 * record type, the facts come from the records.
 */
#include "checkers/story.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "util/xalloc.h"

#define STORY_MAX_ITEMS 40
#define STORY_TEXT_LEN 240
#define STORY_SCAN_BACK 256   /* records searched back from enter for its grant */
#define NO_LEASE INT64_MAX

enum item_kind {
    IK_GRANT, IK_RENEW, IK_LOST, IK_STORE, IK_EXIT, IK_RELEASE, IK_CRASH, IK_LEASE,
    IK_FAULT, IK_OVERLAP, IK_CONCLUSION
};

static const char *const kind_names[] = {
    "grant", "renew", "lost", "store", "exit", "release", "crash", "lease",
    "fault", "overlap", "conclusion"
};

struct item {
    int64_t t;
    int rank;       /* ties at one instant: records, then overlap, then the conclusion */
    int seq;        /* insertion order, the last tie-breaker */
    int kind;
    char text[STORY_TEXT_LEN];
};

struct story {
    struct item *a;
    int n, cap;
};

/* One holder of the violation, located in its log. */
struct sholder {
    int worker;
    int64_t acquired, enter, exit;   /* from the violation (ns) */
    const struct hist_worker *w;     /* NULL when the worker has no log */
    size_t grant_i, enter_i, end_i;  /* record indexes; end_i one past the last */
    int found;
    int64_t lease;                   /* lease end incl. renewals, NO_LEASE without expiry */
    int64_t lease_at_grant;          /* as it stood at the latest grant of the violation's
                                        holders (its valid_until_at_grant_ms; else lease) */
    int at_grant_given;              /* valid_until_at_grant_ms is there: not the latest
                                        grant's holder */
    int has_fence;
    uint64_t fence;
    int crashed, open;
};

__attribute__((format(printf, 5, 6))) static void add(struct story *s, int64_t t, int rank,
                                                    int kind, const char *fmt, ...)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->a = xrealloc(s->a, (size_t)s->cap * sizeof(*s->a));
    }
    struct item *it = &s->a[s->n];
    it->t = t;
    it->rank = rank;
    it->seq = s->n;
    it->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->text, sizeof(it->text), fmt, ap);
    va_end(ap);
    s->n++;
}

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int64_t ms_ns(double ms)
{
    return (int64_t)llround(ms * 1e6);
}

/* "1.204" (seconds, 3 decimals) of a run-relative ns time. */
static void fmt_s(char *buf, size_t n, int64_t t)
{
    snprintf(buf, n, "%.3f", (double)t / 1e9);
}

/* A duration in ms the way people say it: "31 ms", "4.2 ms", "0.35 ms". */
static void fmt_dur(char *buf, size_t n, int64_t d)
{
    double ms = (double)d / 1e6;
    if (ms >= 10 || ms <= -10)
        snprintf(buf, n, "%.0f ms", ms);
    else if (ms >= 1 || ms <= -1)
        snprintf(buf, n, "%.1f ms", ms);
    else
        snprintf(buf, n, "%.2f ms", ms);
}

static const struct hist_worker *find_worker(const struct history *h, int id)
{
    for (int i = 0; i < h->nworkers; i++)
        if (h->w[i].id == id)
            return &h->w[i];
    return NULL;
}

static int64_t rec_lease(const struct ev_rec *r)
{
    return (r->flags & EVF_NO_LEASE) ? NO_LEASE : r->valid_until;
}

/* The stories read records through one reader (history.h struct
 * hist_reader: pread where the log allows, as the timeline does), moved
 * from log to log: a search of a log the pass read with pread then maps
 * nothing. Through the mapping (MADV_RANDOM after the pass), every probe of
 * a search faulted a page in, and the pages were dropped again after each
 * log: a lock-broken story, which searches every worker's log, took 3.3 ms
 * of a check of 10^7 events. Its searches guess by time first
 * (hist_reader_first_at): 2-3 reads a log where halving took 10-20. */
static void reader_on(struct hist_reader *rd, const struct hist_worker *w)
{
    if (rd->w != w) {
        hist_reader_done(rd);
        hist_reader_init(rd, w);
    }
}

/* Contract: record i of w, valid until the next call. */
static const struct ev_rec *srec(struct hist_reader *rd, const struct hist_worker *w, size_t i)
{
    reader_on(rd, w);
    return hist_reader_rec(rd, i);
}

/* Contract: the first record index of w with t >= at (w->n when none). */
static size_t first_at(struct hist_reader *rd, const struct hist_worker *w, int64_t at)
{
    reader_on(rd, w);
    return hist_reader_first_at(rd, at);
}

/* Contract: locate holder x's hold on resource res in its log: the enter
 * record at x->enter (within 1 us: the model keeps ms as doubles), the
 * acquire_ok before it, and the end (exit or crash, then the release
 * outcome). Sets found, lease, fence, crashed, open. */
static void locate(struct hist_reader *rd, struct sholder *x, int res)
{
    const struct hist_worker *w = x->w;
    x->found = 0;
    if (!w || !w->n)
        return;
    size_t e = first_at(rd, w, x->enter - 1000);
    for (; e < w->n && srec(rd, w, e)->t <= x->enter + 1000; e++)
        if (srec(rd, w, e)->type == EV_ENTER && srec(rd, w, e)->res == res)
            break;
    if (e >= w->n || srec(rd, w, e)->type != EV_ENTER || srec(rd, w, e)->res != res)
        return;
    x->found = 1;
    x->enter_i = e;
    x->grant_i = e;
    for (size_t k = e, steps = 0; k-- > 0 && steps < STORY_SCAN_BACK; steps++) {
        const struct ev_rec *r = srec(rd, w, k);
        if (r->res == res && (r->type == EV_EXIT || r->type == EV_CRASH))
            break;
        if (r->type == EV_ACQUIRE_OK && r->res == res) {
            x->grant_i = k;
            break;
        }
    }
    const struct ev_rec *g = srec(rd, w, x->grant_i);
    x->lease = g->type == EV_ACQUIRE_OK ? rec_lease(g) : NO_LEASE;
    x->has_fence = (g->flags & EVF_FENCE) != 0;
    x->fence = g->fence;
    size_t k = e + 1;
    int ended = 0;
    for (; k < w->n; k++) {
        const struct ev_rec *r = srec(rd, w, k);
        if (r->type == EV_CRASH) {
            x->crashed = 1;
            k++;
            break;
        }
        if (ended && r->type == EV_ACQUIRE_INVOKE)
            break; /* the worker moved on: no release outcome was recorded */
        if (r->res != res)
            continue;
        if (r->type == EV_RENEW_OK && x->lease != NO_LEASE && rec_lease(r) > x->lease)
            x->lease = rec_lease(r);
        if (r->type == EV_EXIT)
            ended = 1;
        if (ended && (r->type == EV_RELEASE_OK || r->type == EV_RELEASE_NOT_OWNER ||
                      r->type == EV_RELEASE_FAIL)) {
            k++;
            break;
        }
    }
    x->end_i = k;
    x->open = !ended && !x->crashed;
}

static void grant_text(char *buf, size_t n, const struct sholder *x, const char *res,
                       const struct ev_rec *g)
{
    char vu[32] = "", fence[40] = "no fence";
    if (x->has_fence)
        snprintf(fence, sizeof(fence), "fence %llu", (unsigned long long)x->fence);
    if (g && !(g->flags & EVF_NO_LEASE)) {
        fmt_s(vu, sizeof(vu), g->valid_until);
        snprintf(buf, n, "w%d acquires %s (%s, valid until %ss)", x->worker, res, fence, vu);
    } else {
        snprintf(buf, n, "w%d acquires %s (%s, no expiry)", x->worker, res, fence);
    }
}

/* Items for holder x's own records, from its grant to its release outcome. */
static void holder_items(struct hist_reader *rd, struct story *s, const struct sholder *x,
                         const char *res, int res_i)
{
    const struct hist_worker *w = x->w;
    char buf[STORY_TEXT_LEN], t1[32];
    int wid = x->worker;
    for (size_t k = x->grant_i; k < x->end_i; k++) {
        const struct ev_rec *r = srec(rd, w, k);
        if (r->type != EV_CRASH && r->res != res_i)
            continue; /* another resource's records (a worker holding several) */
        const char *counter = (r->flags & EVF_FENCED) ? "fenced" : "plain";
        switch (r->type) {
        case EV_ACQUIRE_OK:
            grant_text(buf, sizeof(buf), x, res, r);
            add(s, r->t, 0, IK_GRANT, "%s", buf);
            break;
        case EV_RENEW_OK:
            if (r->flags & EVF_NO_LEASE) {
                add(s, r->t, 0, IK_RENEW, "w%d renews %s (no expiry)", wid, res);
            } else {
                fmt_s(t1, sizeof(t1), r->valid_until);
                add(s, r->t, 0, IK_RENEW, "w%d renews %s (valid until %ss)", wid, res, t1);
            }
            break;
        case EV_RENEW_FAIL:
            add(s, r->t, 0, IK_RENEW, "w%d's renewal of %s fails (%s)", wid, res,
                ev_err_name((int)r->aux)[0] ? ev_err_name((int)r->aux) : "refused");
            break;
        case EV_LOST:
            add(s, r->t, 0, IK_LOST, "w%d is told its grant on %s is lost", wid, res);
            break;
        case EV_STORE_READ:
        case EV_STORE_WRITE: {
            const char *op = r->type == EV_STORE_READ ? "read" : "write";
            if (r->flags & EVF_FAILED) {
                add(s, r->t, 0, IK_STORE, "w%d's %s %s fails (outcome unknown)", wid, counter,
                    op);
            } else if (!(r->flags & EVF_ACCEPTED)) {
                add(s, r->t, 0, IK_STORE,
                    "the storage rejects w%d's %s %s (fence %llu: a newer fence was seen)", wid,
                    counter, op, (unsigned long long)r->fence);
            } else if (r->type == EV_STORE_WRITE) {
                add(s, r->t, 0, IK_STORE, "w%d writes %lld to the %s counter", wid,
                    (long long)r->value, counter);
            } else if (r->flags & EVF_FENCED) {
                continue; /* an accepted fenced read only raises the mark: noise */
            } else {
                add(s, r->t, 0, IK_STORE, "w%d reads %lld from the plain counter", wid,
                    (long long)r->value);
            }
            break;
        }
        case EV_EXIT:
            if (x->lease != NO_LEASE && r->t > x->lease) {
                fmt_dur(t1, sizeof(t1), r->t - x->lease);
                add(s, r->t, 0, IK_EXIT, "w%d leaves its critical section, %s past its lease",
                    wid, t1);
            } else {
                add(s, r->t, 0, IK_EXIT, "w%d leaves its critical section", wid);
            }
            break;
        case EV_RELEASE_OK:
            add(s, r->t, 0, IK_RELEASE, "w%d releases %s", wid, res);
            break;
        case EV_RELEASE_NOT_OWNER:
            add(s, r->t, 0, IK_RELEASE, "w%d's release of %s finds the lock no longer its own",
                wid, res);
            break;
        case EV_RELEASE_FAIL:
            add(s, r->t, 0, IK_RELEASE, "w%d's release of %s fails (%s)", wid, res,
                ev_err_name((int)r->aux)[0] ? ev_err_name((int)r->aux) : "error");
            break;
        case EV_CRASH:
            add(s, r->t, 0, IK_CRASH, "w%d is killed while holding %s", wid, res);
            break;
        default:
            break;
        }
    }
    if (x->lease != NO_LEASE && x->lease < x->exit && x->lease >= x->acquired)
        add(s, x->lease, 0, IK_LEASE, "w%d's lease on %s expires", wid, res);
}

/* Is worker wid, as one of the holders, inside its hold at t? */
static int in_hold(const struct sholder *hs, int nh, int wid, int64_t t)
{
    for (int i = 0; i < nh; i++)
        if (hs[i].worker == wid && hs[i].enter <= t && t < hs[i].exit)
            return 1;
    return 0;
}

static int is_holder(const struct sholder *hs, int nh, int wid)
{
    for (int i = 0; i < nh; i++)
        if (hs[i].worker == wid)
            return 1;
    return 0;
}

/* What holder x's worker did on res just before its grant, back to from:
 * the end of its previous hold. A release that lands while another holder
 * of the story holds the lock (from its grant: it may not have entered yet
 * on a busy machine) says so: with an unconditional release that is how a
 * lock gets broken. */
static void prior_items(struct hist_reader *rd, struct story *s, const struct sholder *hs,
                        int nh, int xi, int res_i, const char *res, int64_t from)
{
    const struct sholder *x = &hs[xi];
    const struct hist_worker *w = x->w;
    for (size_t k = x->grant_i, steps = 0; k-- > 0 && steps < STORY_SCAN_BACK; steps++) {
        const struct ev_rec *r = srec(rd, w, k);
        if (r->t < from)
            break;
        if (r->type != EV_CRASH && r->res != res_i)
            continue;
        char during[64] = "";
        for (int j = 0; j < nh; j++)
            if (j != xi && hs[j].worker != x->worker && hs[j].acquired <= r->t && r->t < hs[j].exit)
                snprintf(during, sizeof(during), ", while w%d holds it", hs[j].worker);
        switch (r->type) {
        case EV_EXIT:
            add(s, r->t, 0, IK_EXIT, "w%d leaves its previous critical section", x->worker);
            break;
        case EV_RELEASE_OK:
            add(s, r->t, 0, IK_RELEASE, "w%d releases %s (its previous grant)%s", x->worker, res,
                during);
            break;
        case EV_RELEASE_NOT_OWNER:
            add(s, r->t, 0, IK_RELEASE,
                "w%d's release of its previous grant on %s finds the lock no longer its own",
                x->worker, res);
            break;
        case EV_CRASH:
            add(s, r->t, 0, IK_CRASH, "w%d is killed", x->worker);
            break;
        default:
            break;
        }
    }
}

static void fault_items(struct story *s, const struct history *h, const struct sholder *hs,
                        int nh, int64_t from, int64_t to)
{
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        if (f->skipped || f->start > to || f->end < from)
            continue;
        if (f->worker >= 0 && !is_holder(hs, nh, f->worker))
            continue; /* a fault on another worker did not touch this story */
        char who[80];
        if (f->worker >= 0)
            snprintf(who, sizeof(who), "w%d", f->worker);
        else if (f->node >= 0)
            snprintf(who, sizeof(who), "node %d", f->node);
        else
            snprintf(who, sizeof(who), "%s", f->target);
        add(s, f->start, 0, IK_FAULT, "%s %s (fault #%d)", f->kind, who, f->id);
        if (f->end > to)
            continue;
        if (strcmp(f->kind, "pause") == 0 && f->worker >= 0)
            add(s, f->end, 0, IK_FAULT, "%s resumes%s", who,
                in_hold(hs, nh, f->worker, f->end) ? ", still in its hold" : "");
        else
            add(s, f->end, 0, IK_FAULT, "fault #%d ends (%s %s)", f->id, f->kind, who);
    }
}

/* The first store op of worker x's hold matching type/fenced at or after t
 * (accepted or not), copied into *keep; NULL when none. */
static const struct ev_rec *store_after(struct hist_reader *rd, const struct sholder *x, int type,
                                        int fenced, int64_t t, struct ev_rec *keep)
{
    if (!x->found)
        return NULL;
    for (size_t k = x->enter_i; k < x->end_i; k++) {
        const struct ev_rec *r = srec(rd, x->w, k);
        if (r->type == type && ((r->flags & EVF_FENCED) != 0) == fenced && r->t >= t) {
            *keep = *r;
            return keep;
        }
    }
    return NULL;
}

/* For a lock-broken violation: the last successful release of res between
 * the earlier holder's grant and the later grant, by any worker (a holder's
 * worker: only the release of its previous grant). That is a stale
 * unconditional release freeing the lock (it may land before the earlier
 * holder enters: a grant, not an enter, is what it frees). Adds it as an
 * item unless prior_items did; returns its worker (or -1) and time. */
static int foreign_release(struct hist_reader *rd, struct story *s, const struct history *h,
                           const struct sholder *hs, int nh, int res_i, const char *res,
                           int64_t *at)
{
    const struct sholder *L = &hs[nh - 1];
    int64_t from = hs[0].acquired;
    for (int i = 1; i < nh - 1; i++)
        if (hs[i].acquired < from)
            from = hs[i].acquired;
    int who = -1;
    struct ev_rec best_rec;
    const struct ev_rec *best = NULL;
    int best_holder = 0;
    for (int wi = 0; wi < h->nworkers; wi++) {
        const struct hist_worker *w = &h->w[wi];
        if (!w->n)
            continue;
        /* a holder's worker counts with the end of its previous grant only */
        int64_t until = L->acquired;
        int holder = 0;
        for (int j = 0; j < nh; j++)
            if (hs[j].worker == w->id) {
                holder = 1;
                if (hs[j].acquired < until)
                    until = hs[j].acquired;
            }
        for (size_t k = first_at(rd, w, from), steps = 0;
             k < w->n && srec(rd, w, k)->t <= until && steps < 4 * STORY_SCAN_BACK;
             k++, steps++) {
            const struct ev_rec *r = srec(rd, w, k);
            if (r->type == EV_RELEASE_OK && r->res == res_i && (!best || r->t > best->t)) {
                best_rec = *r;
                best = &best_rec;
                who = w->id;
                best_holder = holder;
            }
        }
    }
    if (!best)
        return -1;
    *at = best->t;
    if (best_holder)
        return who; /* prior_items narrated it already */
    char during[64] = "";
    for (int j = 0; j < nh - 1; j++)
        if (hs[j].acquired <= best->t && best->t < hs[j].exit)
            snprintf(during, sizeof(during), ", while w%d holds it", hs[j].worker);
    add(s, best->t, 0, IK_RELEASE, "w%d releases %s%s", who, res, during);
    return who;
}

/* The closing sentence: the class, why, and what the storage did. */
static void conclusion(struct hist_reader *rd, struct story *s, const struct sholder *hs, int nh,
                       const char *cls, const char *res, int64_t at, int culprit,
                       int64_t culprit_t)
{
    const struct sholder *L = &hs[nh - 1]; /* the latest grant's holder */
    const struct sholder *E = &hs[0];      /* the earlier holder the sentence is about */
    int broken = strcmp(cls, "lock-broken") == 0;
    for (int i = 0; i < nh - 1; i++) {
        int expired = hs[i].lease_at_grant != NO_LEASE && hs[i].lease_at_grant <= L->acquired;
        if (broken ? !expired : expired) {
            E = &hs[i];
            break;
        }
    }
    char out[STORY_TEXT_LEN * 2], d[32], t1[32];
    size_t o = 0;
    if (!broken) {
        int64_t past = E->exit - E->lease_at_grant;
        fmt_dur(d, sizeof(d), past > 0 ? past : 0);
        if (E->crashed || E->open)
            o += (size_t)snprintf(out + o, sizeof(out) - o,
                                  "stale-holder: w%d was still in its hold %s after its lease "
                                  "expired", E->worker, d);
        else
            o += (size_t)snprintf(out + o, sizeof(out) - o,
                                  "stale-holder: w%d overstayed its lease by %s", E->worker, d);
    } else if (E->lease == NO_LEASE) {
        o += (size_t)snprintf(out + o, sizeof(out) - o,
                              "lock-broken: %s was granted to w%d while w%d held a grant with "
                              "no expiry", res, L->worker, E->worker);
    } else {
        fmt_s(t1, sizeof(t1), E->lease_at_grant);
        o += (size_t)snprintf(out + o, sizeof(out) - o,
                              "lock-broken: %s was granted to w%d while w%d's lease was valid "
                              "until %ss", res, L->worker, E->worker, t1);
    }
    if (!broken && E->lease != E->lease_at_grant && E->lease > L->acquired && E->lease != NO_LEASE) {
        fmt_s(t1, sizeof(t1), L->acquired);
        o += (size_t)snprintf(out + o, sizeof(out) - o,
                              " (its renewals after w%d's grant at %ss do not count)", L->worker,
                              t1);
    }
    if (broken && culprit >= 0) {
        char t2[32];
        fmt_s(t2, sizeof(t2), culprit_t);
        o += (size_t)snprintf(out + o, sizeof(out) - o, "; w%d's release at %ss freed it first",
                              culprit, t2);
    }

    /* What the fenced counter did with E's ops after L's grant. */
    struct ev_rec k1, k2, k3, k4, k5, k6, k7;
    const struct ev_rec *fr = store_after(rd, E, EV_STORE_READ, 1, L->acquired, &k1);
    const struct ev_rec *fw = store_after(rd, E, EV_STORE_WRITE, 1, L->acquired, &k2);
    const char *fenced_part = NULL;
    char fbuf[STORY_TEXT_LEN];
    if (fw && !(fw->flags & (EVF_ACCEPTED | EVF_FAILED))) {
        snprintf(fbuf, sizeof(fbuf), "the fenced counter rejected w%d's write", E->worker);
        fenced_part = fbuf;
    } else if (fr && !(fr->flags & (EVF_ACCEPTED | EVF_FAILED))) {
        snprintf(fbuf, sizeof(fbuf), "the fenced counter rejected w%d's read, so it did not "
                 "write", E->worker);
        fenced_part = fbuf;
    } else if (fw && (fw->flags & EVF_ACCEPTED)) {
        snprintf(fbuf, sizeof(fbuf), "the fenced counter accepted w%d's write (fence %llu)",
                 E->worker, (unsigned long long)fw->fence);
        fenced_part = fbuf;
    } else if (!E->has_fence && store_after(rd, E, EV_STORE_WRITE, 0, L->acquired, &k3)) {
        snprintf(fbuf, sizeof(fbuf), "w%d had no fence, so the storage could not refuse its "
                 "write", E->worker);
        fenced_part = fbuf;
    }
    if (fenced_part)
        o += (size_t)snprintf(out + o, sizeof(out) - o, "; %s", fenced_part);

    /* The plain counter: whose accepted write overwrote whose. */
    const struct ev_rec *ew = store_after(rd, E, EV_STORE_WRITE, 0, E->enter, &k4);
    const struct ev_rec *lw = store_after(rd, L, EV_STORE_WRITE, 0, L->enter, &k5);
    const struct ev_rec *lr = store_after(rd, L, EV_STORE_READ, 0, L->enter, &k6);
    const struct ev_rec *er = store_after(rd, E, EV_STORE_READ, 0, E->enter, &k7);
    if (ew && lw && (ew->flags & EVF_ACCEPTED) && (lw->flags & EVF_ACCEPTED) && o < sizeof(out)) {
        if (ew->t > lw->t && ew->value <= lw->value)
            o += (size_t)snprintf(out + o, sizeof(out) - o,
                                  "; w%d's plain write (%lld) overwrote w%d's (%lld): a lost "
                                  "update", E->worker, (long long)ew->value, L->worker,
                                  (long long)lw->value);
        else if (lw->t > ew->t && lr && lr->t < ew->t && lw->value <= ew->value)
            o += (size_t)snprintf(out + o, sizeof(out) - o,
                                  "; w%d's plain write (%lld) overwrote w%d's (%lld): a lost "
                                  "update", L->worker, (long long)lw->value, E->worker,
                                  (long long)ew->value);
        else if (er && lr && er->t < lr->t && ew->t < lr->t)
            o += (size_t)snprintf(out + o, sizeof(out) - o,
                                  "; w%d wrote the plain counter before w%d read it: no update "
                                  "lost", E->worker, L->worker);
    }
    if (o >= sizeof(out))
        o = sizeof(out) - 1;
    add(s, at, 2, IK_CONCLUSION, "%.*s", (int)(STORY_TEXT_LEN - 1), out);
}

/* Contract: the story of violation v (a member of the model's violations
 * array) as a new JSON array, and its one-line text in *text (owned by the
 * caller's strbuf). */
static struct json *build_story(const struct history *h, const struct json *v, struct strbuf *text)
{
    const char *res = json_get_str(v, "resource", "?");
    int res_i = -1;
    for (int r = 0; r < h->nres; r++)
        if (h->res_names && strcmp(h->res_names[r], res) == 0)
            res_i = r;
    const struct json *holders = json_obj_get(v, "holders");
    int nh = holders && holders->type == JSON_ARR ? (int)holders->n : 0;
    struct sholder *hs = xcalloc((size_t)(nh ? nh : 1), sizeof(*hs));
    struct hist_reader rd;
    hist_reader_init(&rd, NULL);
    int64_t from = INT64_MAX, to = INT64_MIN;
    for (int i = 0; i < nh; i++) {
        const struct json *x = holders->kids[i];
        struct sholder *sh = &hs[i];
        sh->worker = (int)json_get_int(x, "worker", -1);
        sh->acquired = ms_ns(json_get_num(x, "acquired_ms", 0));
        sh->enter = ms_ns(json_get_num(x, "enter_ms", 0));
        sh->exit = ms_ns(json_get_num(x, "exit_ms", 0));
        const struct json *vu = json_obj_get(x, "valid_until_ms");
        sh->lease = vu && vu->type == JSON_NUM ? ms_ns(vu->d) : NO_LEASE;
        const struct json *vg = json_obj_get(x, "valid_until_at_grant_ms");
        sh->lease_at_grant = !vg ? sh->lease : vg->type == JSON_NUM ? ms_ns(vg->d) : NO_LEASE;
        sh->at_grant_given = vg != NULL;
        const struct json *fe = json_obj_get(x, "fence");
        sh->has_fence = fe && fe->type == JSON_NUM;
        sh->fence = sh->has_fence ? (uint64_t)fe->i : 0;
        sh->crashed = json_obj_get(x, "crashed") != NULL;
        sh->open = json_obj_get(x, "unterminated") != NULL;
        sh->w = find_worker(h, sh->worker);
        if (res_i >= 0)
            locate(&rd, sh, res_i);
        if (sh->acquired < from)
            from = sh->acquired;
        int64_t end =
            sh->found && sh->end_i > 0 ? srec(&rd, sh->w, sh->end_i - 1)->t : sh->exit;
        if (end < sh->exit)
            end = sh->exit;
        if (end > to)
            to = end;
    }

    struct story s = {NULL, 0, 0};
    for (int i = 0; i < nh; i++) {
        if (hs[i].found) {
            holder_items(&rd, &s, &hs[i], res, res_i);
            prior_items(&rd, &s, hs, nh, i, res_i, res, from);
        } else {
            /* No log to read: narrate what the violation itself records. */
            char buf[STORY_TEXT_LEN];
            grant_text(buf, sizeof(buf), &hs[i], res, NULL);
            if (hs[i].lease != NO_LEASE) {
                char t1[32];
                fmt_s(t1, sizeof(t1), hs[i].lease);
                snprintf(buf, sizeof(buf), "w%d acquires %s (valid until %ss)", hs[i].worker,
                         res, t1);
            }
            add(&s, hs[i].acquired, 0, IK_GRANT, "%s", buf);
            add(&s, hs[i].exit, 0, IK_EXIT, "w%d leaves its critical section", hs[i].worker);
        }
    }
    if (nh > 0)
        fault_items(&s, h, hs, nh, from, to);
    int64_t ov_start = ms_ns(json_get_num(v, "overlap_start_ms", 0));
    int64_t ov_len = ms_ns(json_get_num(v, "overlap_ms", 0));
    char a[32], b[32], d[32];
    fmt_s(a, sizeof(a), ov_start);
    fmt_s(b, sizeof(b), ov_start + ov_len);
    fmt_dur(d, sizeof(d), ov_len);
    add(&s, ov_start, 1, IK_OVERLAP, "overlap on %s %s–%ss (%s)", res, a, b, d);
    /* The conclusion closes the story: stamped at its last event. */
    int64_t last = ov_start + ov_len;
    for (int i = 0; i < s.n; i++)
        if (s.a[i].t > last)
            last = s.a[i].t;
    if (nh >= 2) {
        /* The conclusion is about the latest grant (the checker's class is
         * decided there: docs/checkers.md "Classification"): the entering
         * holder's, unless a holder in its hold was granted after it. That
         * holder goes last, where the conclusion and foreign_release look. */
        int li = nh - 1;
        for (int i = 0; i < nh - 1; i++)
            if (!hs[i].at_grant_given)
                li = i; /* the one holder the checker gave no lease at the latest grant */
        if (li != nh - 1) {
            struct sholder t = hs[li];
            hs[li] = hs[nh - 1];
            hs[nh - 1] = t;
        }
        const char *cls = json_get_str(v, "class", "?");
        int64_t ct = 0;
        int culprit = -1;
        if (strcmp(cls, "lock-broken") == 0 && res_i >= 0)
            culprit = foreign_release(&rd, &s, h, hs, nh, res_i, res, &ct);
        conclusion(&rd, &s, hs, nh, cls, res, last, culprit, ct);
    }

    qsort(s.a, (size_t)s.n, sizeof(*s.a), cmp_item);
    /* Keep the story readable: drop the middle of an overlong one, never
     * the overlap or the conclusion. */
    struct json *arr = json_new_arr();
    int dropped = 0;
    for (int i = 0; i < s.n; i++) {
        const struct item *it = &s.a[i];
        int keep = it->kind == IK_OVERLAP || it->kind == IK_CONCLUSION ||
                   (int)arr->n < STORY_MAX_ITEMS - 2;
        if (!keep) {
            dropped++;
            continue;
        }
        struct json *o = json_arr_push(arr, json_new_obj());
        json_obj_set_num(o, "t_ms", ns_ms(it->t));
        json_obj_set_str(o, "kind", kind_names[it->kind]);
        json_obj_set_str(o, "text", it->text);
        if (text->len)
            sb_puts(text, " · ");
        if (it->kind == IK_OVERLAP || it->kind == IK_CONCLUSION) {
            sb_puts(text, it->text);
        } else {
            char ts[32];
            fmt_s(ts, sizeof(ts), it->t);
            sb_printf(text, "t=%ss %s", ts, it->text);
        }
    }
    if (dropped)
        sb_printf(text, " (%d more events in the logs)", dropped);
    hist_reader_done(&rd); /* the pages it read in place, if any */
    free(s.a);
    free(hs);
    return arr;
}

/* Index of the first violation of class cls in viol, or -1. */
static long first_of_class(const struct json *viol, const char *cls)
{
    for (size_t i = 0; i < viol->n; i++)
        if (strcmp(json_get_str(viol->kids[i], "class", ""), cls) == 0)
            return (long)i;
    return -1;
}

/* An incident's first_violation as an index into viol, or -1 (null,
 * missing or out of range). */
static long incident_first(const struct json *inc, const struct json *viol)
{
    const struct json *fv = json_obj_get(inc, "first_violation");
    if (!fv || fv->type != JSON_NUM || fv->i < 0 || (size_t)fv->i >= viol->n)
        return -1;
    return (long)fv->i;
}

/* The violation that tells class cls's story: the first violation of the
 * first incident of that class when it is itself of the class, else the
 * first violation of the class; -1 when the class is not listed. */
static long class_story(const struct json *viol, const struct json *incs, const char *cls)
{
    for (size_t i = 0; incs && incs->type == JSON_ARR && i < incs->n; i++) {
        const struct json *inc = incs->kids[i];
        if (strcmp(json_get_str(inc, "class", ""), cls) != 0)
            continue;
        long k = incident_first(inc, viol);
        if (k >= 0 && strcmp(json_get_str(viol->kids[k], "class", ""), cls) == 0)
            return k;
        break;
    }
    return first_of_class(viol, cls);
}

/* Add violation k to the picks (once) while there is room. */
static void pick_one(char *pick, size_t *npicked, size_t max, long k)
{
    if (k < 0 || pick[k] || *npicked >= max)
        return;
    pick[k] = 1;
    (*npicked)++;
}

#define ANOMALY_RENEWALS 4 /* renewals told before the anomaly: the last ones */

/* Contract: the story of anomaly a (an entry of checks.mutex.anomalies)
 * into s: its worker's grant, its last renewals and renewal failures up to
 * the anomaly, the lease's end, the other holder's grant (renewed after
 * loss), the faults on the worker, the anomaly and a conclusion. */
static void anomaly_items(struct story *s, const struct history *h, const struct json *a)
{
    const char *res = json_get_str(a, "resource", "?"), *cls = json_get_str(a, "class", "?");
    int res_i = -1;
    for (int r = 0; r < h->nres; r++)
        if (h->res_names && strcmp(h->res_names[r], res) == 0)
            res_i = r;
    int wid = (int)json_get_int(a, "worker", -1);
    int64_t t = ms_ns(json_get_num(a, "t_ms", 0)), acq = ms_ns(json_get_num(a, "acquired_ms", 0));
    int ral = strcmp(cls, "renewed-after-loss") == 0;
    const struct json *le = json_obj_get(a, ral ? "lease_ran_out_ms" : "valid_until_ms");
    int64_t lease = le && le->type == JSON_NUM ? ms_ns(le->d) : NO_LEASE;
    char t1[32], t2[32], d[32];
    struct sholder x = {0};
    x.worker = wid;
    x.w = find_worker(h, wid);
    x.enter = acq;
    x.exit = t + 1;
    if (x.w && res_i >= 0) {
        struct hist_reader rd;
        hist_reader_init(&rd, NULL);
        size_t k0 = first_at(&rd, x.w, acq - 1000), k1 = first_at(&rd, x.w, t + 1000);
        size_t nren = 0;
        for (size_t k = k0; k < k1; k++) {
            const struct ev_rec *r = srec(&rd, x.w, k);
            nren += r->type == EV_RENEW_OK && r->res == res_i;
        }
        for (size_t k = k0, seen = 0; k < k1; k++) {
            const struct ev_rec *r = srec(&rd, x.w, k);
            if (r->res != res_i)
                continue;
            if (r->type == EV_ACQUIRE_OK && r->t <= acq + 1000) {
                x.has_fence = (r->flags & EVF_FENCE) != 0;
                x.fence = r->fence;
                char buf[STORY_TEXT_LEN];
                grant_text(buf, sizeof(buf), &x, res, r);
                add(s, r->t, 0, IK_GRANT, "%s", buf);
            } else if (r->type == EV_RENEW_OK && ++seen + ANOMALY_RENEWALS > nren) {
                if (r->flags & EVF_NO_LEASE) {
                    add(s, r->t, 0, IK_RENEW, "w%d renews %s (no expiry)", wid, res);
                } else {
                    fmt_s(t1, sizeof(t1), r->valid_until);
                    add(s, r->t, 0, IK_RENEW, "w%d%s renews %s (valid until %ss)", wid,
                        (r->flags & EVF_AUTO) ? "'s library" : "", res, t1);
                }
            } else if (r->type == EV_RENEW_FAIL) {
                add(s, r->t, 0, IK_RENEW, "w%d's renewal of %s fails (%s)", wid, res,
                    ev_err_name((int)r->aux)[0] ? ev_err_name((int)r->aux) : "refused");
            } else if (r->type == EV_LOST && r->t >= t - 1000) {
                add(s, r->t, 0, IK_LOST, "w%d is told its grant on %s is lost", wid, res);
            }
        }
        if (nren > ANOMALY_RENEWALS)
            add(s, acq, 0, IK_RENEW, "(%zu earlier renewals of w%d not told)",
                nren - ANOMALY_RENEWALS, wid);
        hist_reader_done(&rd);
    }
    if (lease != NO_LEASE && lease >= acq)
        add(s, lease, 0, IK_LEASE, "w%d's lease on %s %s", wid, res,
            ral ? "runs out (as it stood)" : "runs out");
    const struct json *o = json_obj_get(a, "other");
    int other = o ? (int)json_get_int(o, "worker", -1) : -1;
    int64_t oacq = o ? ms_ns(json_get_num(o, "acquired_ms", 0)) : 0;
    if (other >= 0)
        add(s, oacq, 0, IK_GRANT, "w%d acquires %s", other, res);
    fault_items(s, h, &x, 1, acq, t);
    fmt_s(t1, sizeof(t1), t);
    if (ral) {
        fmt_s(t2, sizeof(t2), oacq);
        add(s, t, 2, IK_CONCLUSION,
            "renewed-after-loss: w%d's renewal at %ss succeeded, though its lease had run out "
            "before w%d was granted %s at %ss and w%d still held it: the renewal does not check "
            "the token, or the service lost the successor's key", wid, t1, other, res, t2, other);
    } else if (strcmp(cls, "lost-with-lease-left") == 0) { /* never a grant without expiry */
        fmt_dur(d, sizeof(d), lease - t);
        fmt_s(t2, sizeof(t2), lease);
        add(s, t, 2, IK_CONCLUSION, "lost-with-lease-left: w%d's grant on %s was given up "
            "at %ss with %s of its lease left (valid until %ss): the library let go of a "
            "lock that had not run out", wid, res, t1, d, t2);
    } else {
        fmt_dur(d, sizeof(d), lease != NO_LEASE ? t - lease : 0);
        add(s, t, 2, IK_CONCLUSION, "expired: w%d's grant on %s was lost at %ss, %s after its "
            "lease ran out", wid, res, t1, d);
    }
}

/* Contract: a story for the first listed anomaly of each class in
 * checks.mutex.anomalies ("story", "story_text" as for violations). */
static void anomaly_stories(const struct history *h, struct json *res)
{
    struct json *an = json_path(res, "checks.mutex.anomalies");
    static const char *const classes[] = {"renewed-after-loss", "lost-with-lease-left",
                                          "expired"};
    for (size_t c = 0; an && an->type == JSON_ARR && c < 3; c++) {
        struct json *a = NULL;
        for (size_t i = 0; i < an->n && !a; i++)
            if (strcmp(json_get_str(an->kids[i], "class", ""), classes[c]) == 0)
                a = an->kids[i];
        if (!a)
            continue;
        struct story s = {NULL, 0, 0};
        anomaly_items(&s, h, a);
        qsort(s.a, (size_t)s.n, sizeof(*s.a), cmp_item);
        struct json *arr = json_new_arr();
        struct strbuf text = STRBUF_INIT;
        for (int i = 0; i < s.n && i < STORY_MAX_ITEMS; i++) {
            const struct item *it = &s.a[i];
            struct json *o = json_arr_push(arr, json_new_obj());
            json_obj_set_num(o, "t_ms", ns_ms(it->t));
            json_obj_set_str(o, "kind", kind_names[it->kind]);
            json_obj_set_str(o, "text", it->text);
            if (text.len)
                sb_puts(&text, " · ");
            if (it->kind == IK_CONCLUSION) {
                sb_puts(&text, it->text);
            } else {
                char ts[32];
                fmt_s(ts, sizeof(ts), it->t);
                sb_printf(&text, "t=%ss %s", ts, it->text);
            }
        }
        json_obj_set(a, "story", arr);
        json_obj_set_str(a, "story_text", sb_cstr(&text));
        sb_free(&text);
        free(s.a);
    }
}

void check_stories(const struct history *h, const struct check_params *p, struct json *res)
{
    if (p->max_stories > 0)
        anomaly_stories(h, res);
    struct json *viol = json_obj_get(res, "violations");
    if (!viol || viol->type != JSON_ARR || !viol->n || p->max_stories <= 0)
        return;
    const struct json *incs = json_obj_get(res, "incidents");
    size_t max = (size_t)p->max_stories, npicked = 0;
    char *pick = xcalloc(viol->n, 1);
    /* One story per class present, the lock's own failure first; then the
     * incidents in order, each told by its first violation; then the
     * violations in order, while check.stories allows. */
    static const char *const classes[] = {"lock-broken", "stale-holder"};
    for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++)
        pick_one(pick, &npicked, max, class_story(viol, incs, classes[c]));
    for (size_t i = 0; incs && incs->type == JSON_ARR && i < incs->n; i++)
        pick_one(pick, &npicked, max, incident_first(incs->kids[i], viol));
    for (size_t i = 0; i < viol->n; i++)
        pick_one(pick, &npicked, max, (long)i);
    for (size_t i = 0; i < viol->n; i++) {
        if (!pick[i])
            continue;
        struct json *v = viol->kids[i];
        struct strbuf text = STRBUF_INIT;
        struct json *story = build_story(h, v, &text);
        json_obj_set(v, "story", story);
        json_obj_set_str(v, "story_text", sb_cstr(&text));
        sb_free(&text);
    }
    free(pick);
}
