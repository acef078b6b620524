/*
 * mutex.c: the mutual-exclusion checker (DESIGN.md "Checkers", semantics
 * in docs/checkers.md). It rebuilds every hold from the worker logs, sweeps
 * them per resource in enter order and reports each entry that finds
 * `capacity` holds already active, classified stale-holder or lock-broken
 * by the leases the earlier holders had at the later grant. It never asks
 * the lock and never invents an overlap from a missing record.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"

#define LEASE_NEVER INT64_MAX

/* Hold flags. */
#define HF_FENCE 0x01    /* the grant carried a fence */
#define HF_CRASH 0x02    /* ended by the worker's crash record */
#define HF_OPEN 0x04     /* no exit and no crash: ended at the log's last record */
#define HF_NO_GRANT 0x08 /* enter without a preceding acquire_ok */

/* One hold; 48 bytes, since a long run has millions of them. */
struct hold {
    int64_t enter, exit;
    int64_t acquired;           /* grant time (= enter without a grant) */
    int64_t lease;              /* L: lease end incl. renewals; LEASE_NEVER = no expiry */
    const struct ev_rec *grant; /* its acquire_ok (token, fence), NULL without */
    int32_t worker;             /* worker id */
    uint16_t res;
    uint16_t flags;
};

struct hold_vec {
    struct hold *a;
    size_t n, cap;
};

/* A grant a worker has and may be holding. */
struct slot {
    struct hold h;
    int entered;
};

static void push_hold(struct hold_vec *v, const struct hold *h)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->a = xrealloc(v->a, v->cap * sizeof(*v->a));
    }
    v->a[v->n++] = *h;
}

static int64_t lease_of(const struct ev_rec *r)
{
    return (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until;
}

struct extract_stats {
    size_t no_grant;    /* enters without acquire_ok */
    size_t stray_exit;  /* exits without enter */
    size_t open;        /* holds without exit or crash */
};

/* Contract: append worker w's holds to v (time ordered within w). slots is
 * scratch the caller owns and frees (*slots, *cap). */
static void extract_worker(const struct hist_worker *w, struct hold_vec *v, struct slot **slots,
                           size_t *cap, struct extract_stats *st)
{
    size_t ns = 0;
    for (size_t i = 0; i < w->n; i++) {
        const struct ev_rec *r = &w->ev[i];
        int res = r->res;
        size_t k;
        switch (r->type) {
        case EV_ACQUIRE_OK:
            for (k = 0; k < ns; k++)
                if ((*slots)[k].h.res == res && !(*slots)[k].entered)
                    break;
            if (k == ns) {
                if (ns == *cap) {
                    *cap = *cap ? *cap * 2 : 4;
                    *slots = xrealloc(*slots, *cap * sizeof(**slots));
                }
                ns++;
            }
            {
                struct slot *s = &(*slots)[k];
                memset(s, 0, sizeof(*s));
                s->h.acquired = r->t;
                s->h.lease = lease_of(r);
                s->h.grant = r;
                s->h.worker = w->id;
                s->h.res = (uint16_t)res;
                s->h.flags = (r->flags & EVF_FENCE) ? HF_FENCE : 0;
            }
            break;
        case EV_ENTER:
            for (k = ns; k-- > 0;)
                if ((*slots)[k].h.res == res && !(*slots)[k].entered)
                    break;
            if (k == (size_t)-1) {
                if (ns == *cap) {
                    *cap = *cap ? *cap * 2 : 4;
                    *slots = xrealloc(*slots, *cap * sizeof(**slots));
                }
                k = ns++;
                struct slot *s = &(*slots)[k];
                memset(s, 0, sizeof(*s));
                s->h.acquired = r->t;
                s->h.lease = LEASE_NEVER;
                s->h.worker = w->id;
                s->h.res = (uint16_t)res;
                s->h.flags = HF_NO_GRANT;
                st->no_grant++;
            }
            (*slots)[k].entered = 1;
            (*slots)[k].h.enter = r->t;
            break;
        case EV_RENEW_OK:
            for (k = 0; k < ns; k++) {
                struct hold *hh = &(*slots)[k].h;
                if (hh->res == res && hh->lease != LEASE_NEVER) {
                    int64_t l = lease_of(r);
                    if (l > hh->lease)
                        hh->lease = l;
                }
            }
            break;
        case EV_EXIT:
            for (k = 0; k < ns; k++)
                if ((*slots)[k].h.res == res && (*slots)[k].entered)
                    break;
            if (k == ns) {
                st->stray_exit++;
                break;
            }
            (*slots)[k].h.exit = r->t;
            push_hold(v, &(*slots)[k].h);
            (*slots)[k] = (*slots)[--ns];
            break;
        case EV_RELEASE_OK:
        case EV_RELEASE_NOT_OWNER:
        case EV_RELEASE_FAIL:
        case EV_LOST:
            /* A grant that ends before anyone entered it is no hold. */
            for (k = 0; k < ns; k++)
                if ((*slots)[k].h.res == res && !(*slots)[k].entered) {
                    (*slots)[k] = (*slots)[--ns];
                    break;
                }
            break;
        case EV_CRASH:
            for (k = 0; k < ns; k++) {
                if (!(*slots)[k].entered)
                    continue;
                (*slots)[k].h.exit = r->t;
                (*slots)[k].h.flags |= HF_CRASH;
                push_hold(v, &(*slots)[k].h);
            }
            ns = 0;
            break;
        default:
            break;
        }
    }
    /* Never invent overlap: an unterminated hold ends at the last record. */
    int64_t last = w->n ? w->ev[w->n - 1].t : 0;
    for (size_t k = 0; k < ns; k++) {
        if (!(*slots)[k].entered)
            continue;
        (*slots)[k].h.exit = last;
        (*slots)[k].h.flags |= HF_OPEN;
        push_hold(v, &(*slots)[k].h);
        st->open++;
    }
}

static int cmp_hold(const void *a, const void *b)
{
    const struct hold *x = a, *y = b;
    if (x->enter != y->enter)
        return x->enter < y->enter ? -1 : 1;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    return (x->worker > y->worker) - (x->worker < y->worker);
}

/* Contract: a new array (caller frees) of the indices of a[0..n) in
 * cmp_hold order. a is the concatenation of per-worker runs, run k being
 * a[runs[k] .. runs[k+1]); each run is sorted here if it is not already
 * (it is, unless a worker held several resources at once). Runs are then
 * merged pairwise bottom-up: O(n log workers), sequential access, stable,
 * and ties keep worker order because runs are in worker order. */
static uint32_t *merge_runs(struct hold *a, size_t n, size_t *runs, size_t nruns)
{
    uint32_t *src = malloc((n ? n : 1) * sizeof(*src));
    uint32_t *dst = malloc((n ? n : 1) * sizeof(*dst));
    if (!src || !dst) 
        xalloc_die();
    for (size_t k = 0; k < nruns; k++) {
        size_t len = runs[k + 1] - runs[k];
        if (len == 0)
            continue; /* also keeps a NULL a (no holds at all) out of pointer arithmetic */
        struct hold *r = a + runs[k];
        for (size_t i = 1; i < len; i++)
            if (cmp_hold(&r[i - 1], &r[i]) > 0) {
                qsort(r, len, sizeof(*r), cmp_hold);
                break;
            }
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (uint32_t)i;
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t lo = runs[k], mid = runs[k + 1];
            size_t hi = k + 2 <= nruns ? runs[k + 2] : mid;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = cmp_hold(&a[src[j]], &a[src[i]]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
            runs[out++] = lo;
        }
        runs[out] = n;
        nruns = out;
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    free(dst);
    return src;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct rstate {
    int *active;         /* indices of holds with exit > current enter, enter order */
    int n, cap;
    int64_t last_exit;   /* latest exit of a finished hold; INT64_MIN none */
};

static struct json *holder_json(const struct hold *x)
{
    struct json *o = json_new_obj();
    json_obj_set_int(o, "worker", x->worker);
    const char *tok = x->grant ? x->grant->token : "";
    json_obj_set(o, "token", json_new_strn(tok, strnlen(tok, EVLOG_TOKEN_LEN)));
    json_obj_set(o, "fence", (x->flags & HF_FENCE) ? json_new_int((int64_t)x->grant->fence)
                                                   : json_new_null());
    json_obj_set_num(o, "acquired_ms", ns_ms(x->acquired));
    json_obj_set(o, "valid_until_ms",
                 x->lease == LEASE_NEVER ? json_new_null() : json_new_num(ns_ms(x->lease)));
    json_obj_set_num(o, "enter_ms", ns_ms(x->enter));
    json_obj_set_num(o, "exit_ms", ns_ms(x->exit));
    if (x->flags & HF_CRASH)
        json_obj_set_bool(o, "crashed", 1);
    if (x->flags & HF_OPEN)
        json_obj_set_bool(o, "unterminated", 1);
    return o;
}

int check_mutex(const struct history *h, const struct check_params *p, struct json *res)
{
    struct hold_vec v = {NULL, 0, 0};
    struct slot *slots = NULL;
    size_t scap = 0;
    struct extract_stats st = {0, 0, 0};
    size_t *runs = malloc(((size_t)h->nworkers + 1) * sizeof(*runs));
    if (!runs) 
        xalloc_die();
    for (int i = 0; i < h->nworkers; i++) {
        runs[i] = v.n;
        extract_worker(&h->w[i], &v, &slots, &scap, &st);
    }
    runs[h->nworkers] = v.n;
    free(slots);
    uint32_t *order = merge_runs(v.a, v.n, runs, (size_t)h->nworkers);
    free(runs);

    int cap = p->capacity > 0 ? p->capacity : 1;
    int nres = h->nres;
    for (size_t i = 0; i < v.n; i++)
        if (v.a[i].res >= nres)
            nres = v.a[i].res + 1;
    struct rstate *rs = calloc((size_t)(nres ? nres : 1), sizeof(*rs));
    if (!rs) 
        xalloc_die();
    for (int r = 0; r < nres; r++)
        rs[r].last_exit = INT64_MIN;

    struct json *viol = json_obj_get(res, "violations");
    if (!viol)
        viol = json_obj_set(res, "violations", json_new_arr());
    int64_t nviol = 0, near = 0, stale = 0, broken = 0;
    int64_t *exits = NULL;
    size_t exits_cap = 0;

    for (size_t oi = 0; oi < v.n; oi++) {
        size_t i = order[oi];
        const struct hold *H = &v.a[i];
        struct rstate *r = &rs[H->res];
        int kept = 0; /* drop holds that exited by H's enter (touching is fine) */
        for (int k = 0; k < r->n; k++) {
            const struct hold *A = &v.a[r->active[k]];
            if (A->exit <= H->enter) {
                if (A->exit > r->last_exit)
                    r->last_exit = A->exit;
            } else {
                r->active[kept++] = r->active[k];
            }
        }
        r->n = kept;
        if (r->n >= cap) {
            nviol++;
            int valid_at_grant = 0;
            if ((size_t)r->n + 1 > exits_cap) {
                exits_cap = (size_t)r->n + 16;
                exits = xrealloc(exits, exits_cap * sizeof(*exits));
            }
            for (int k = 0; k < r->n; k++) {
                const struct hold *A = &v.a[r->active[k]];
                exits[k] = A->exit;
                if (A->lease > H->acquired)
                    valid_at_grant++;
            }
            exits[r->n] = H->exit;
            int total = r->n + 1;
            qsort(exits, (size_t)total, sizeof(*exits), cmp_i64);
            int64_t ov_start = H->enter, ov_end = exits[total - cap - 1];
            int is_broken = valid_at_grant >= cap;
            if (is_broken)
                broken++;
            else
                stale++;
            if (nviol <= p->max_violations) {
                struct json *o = json_arr_push(viol, json_new_obj());
                json_obj_set_str(o, "resource", h->res_names && H->res < h->nres
                                                    ? h->res_names[H->res] : "?");
                json_obj_set_str(o, "class", is_broken ? "lock-broken" : "stale-holder");
                json_obj_set_num(o, "overlap_start_ms", ns_ms(ov_start));
                json_obj_set_num(o, "overlap_ms", ns_ms(ov_end - ov_start));
                struct json *hl = json_obj_set(o, "holders", json_new_arr());
                for (int k = 0; k < r->n; k++)
                    json_arr_push(hl, holder_json(&v.a[r->active[k]]));
                json_arr_push(hl, holder_json(H));
                struct json *fl = json_obj_set(o, "faults", json_new_arr());
                for (int f = 0; f < h->nfaults; f++) {
                    const struct fault_window *fw = &h->faults[f];
                    if (!fw->skipped && fw->start <= ov_end && fw->end >= ov_start)
                        json_arr_push(fl, json_new_int(fw->id));
                }
            }
        } else if (r->last_exit != INT64_MIN && H->enter - r->last_exit <= p->near_miss) {
            near++;
        }
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 4;
            r->active = xrealloc(r->active, (size_t)r->cap * sizeof(int));
        }
        r->active[r->n++] = (int)i;
    }

    int verdict = nviol > 0 ? VERDICT_INVALID : st.open > 0 ? VERDICT_UNKNOWN : VERDICT_VALID;
    struct json *m = json_obj_child(json_obj_child(res, "checks"), "mutex");
    json_obj_set_str(m, "verdict", verdict_name(verdict));
    json_obj_set_bool(m, "valid", verdict == VERDICT_VALID);
    json_obj_set_int(m, "violations", nviol);
    json_obj_set_int(m, "near_misses", near);
    struct json *bc = json_obj_set(m, "by_class", json_new_obj());
    json_obj_set_int(bc, "stale_holder", stale);
    json_obj_set_int(bc, "lock_broken", broken);
    json_obj_set_int(m, "capacity", cap);
    json_obj_set_int(m, "holds", (int64_t)v.n);
    if (verdict == VERDICT_UNKNOWN)
        json_obj_set_str(m, "reason", "a hold has no exit and no crash record");
    if (st.open)
        check_warn(res, "mutex: %zu hold(s) without exit or crash record, ended at their "
                    "worker's last record", st.open);
    if (st.no_grant)
        check_warn(res, "mutex: %zu enter(s) without a preceding acquire_ok (treated as "
                    "holds without a lease)", st.no_grant);
    if (st.stray_exit)
        check_warn(res, "mutex: %zu exit(s) without a matching enter, ignored", st.stray_exit);
    if (nviol > p->max_violations)
        check_warn(res, "mutex: %lld violations, the first %d listed", (long long)nviol,
                    p->max_violations);

    for (int r = 0; r < nres; r++)
        free(rs[r].active);
    free(rs);
    free(exits);
    free(order);
    free(v.a);
    return verdict;
}
