/*
 * mutex_viol.c: the mutex checker's violations and incidents (see
 * checkers/mutex.c and docs/checkers.md "Incidents"): a violation is
 * pending until all its holds have ended (their exits decide its overlap),
 * listed ones with their holders, the others as counts (struct uviol:
 * their counts of holds not ended kept for all at once, util/sufcount.h);
 * an incident until its cause has ended and its violations are resolved.
 */
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "checkers/mutex_int.h"
#include "util/xalloc.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static struct json *holder_json(const struct hold *x)
{
    struct json *o = json_new_obj();
    json_obj_set_int(o, "worker", x->worker);
    json_obj_set(o, "token", json_new_strn(x->token, strnlen(x->token, EVLOG_TOKEN_LEN)));
    json_obj_set(o, "fence", (x->flags & HF_FENCE) ? json_new_int((int64_t)x->fence)
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

/* Contract: a new incident caused by hold c (active, causing none yet),
 * listed when it is among the first max_violations. */
struct incident *mutex_incident_new(struct mutex_st *m, struct hold *c)
{
    struct incident *inc = xcalloc(1, sizeof(*inc));
    m->ninc++;
    if (m->ninc <= m->p->max_violations) {
        inc->obj = json_arr_push(m->incs, json_new_obj());
        json_obj_set_int(inc->obj, "id", m->ninc);
        if (m->h->nfaults > 0)
            inc->faults = xcalloc((size_t)m->h->nfaults, 1);
    }
    inc->cause = c;
    c->refs++;
    c->inc = inc;
    return inc;
}

/* Contract: inc's cause has ended and its last violation is resolved:
 * count it by class, fill its listed entry, let go of its cause, free it. */
static void incident_done(struct mutex_st *m, struct incident *inc)
{
    if (inc->broken)
        m->inc_broken++;
    else
        m->inc_stale++;
    struct json *o = inc->obj;
    if (o) {
        json_obj_set_str(o, "class", inc->broken ? "lock-broken" : "stale-holder");
        json_obj_set_str(o, "resource", check_res_name(m->h, inc->cause->res));
        json_obj_set(o, "cause", holder_json(inc->cause));
        json_obj_set_int(o, "violations", inc->n);
        /* resolved in any order: listed in violations[] order */
        if (inc->nlisted > 1)
            qsort(inc->listed, (size_t)inc->nlisted, sizeof(*inc->listed), cmp_i64);
        struct json *l = json_obj_set(o, "listed", json_new_arr());
        for (int k = 0; k < inc->nlisted; k++)
            json_arr_push(l, json_new_int(inc->listed[k]));
        json_obj_set_num(o, "start_ms", ns_ms(inc->start));
        json_obj_set_num(o, "end_ms", ns_ms(inc->end));
        struct json *fl = json_obj_set(o, "faults", json_new_arr());
        for (int f = 0; inc->faults && f < m->h->nfaults; f++)
            if (inc->faults[f])
                json_arr_push(fl, json_new_int(m->h->faults[f].id));
        json_obj_set(o, "first_violation",
                     inc->nlisted ? json_new_int(inc->listed[0]) : json_new_null());
    }
    inc->cause->inc = NULL;
    mutex_hold_unref(m, inc->cause);
    free(inc->listed);
    free(inc->faults);
    free(inc);
}

/* Contract: a violation of inc whose holds have all ended, lock-broken or
 * not, its overlap [ov_start, ov_end], listed at index (-1: not listed),
 * added to inc; inc is done when it was its last pending violation (its
 * cause, one of the violation's holds, has ended: no more will join). */
static void incident_add(struct mutex_st *m, struct incident *inc, int is_broken,
                         int64_t ov_start, int64_t ov_end, int64_t index)
{
    inc->broken |= is_broken;
    if (ov_end > inc->end)
        inc->end = ov_end;
    if (inc->obj) {
        for (int f = 0; inc->faults && f < m->h->nfaults; f++) {
            const struct fault_window *fw = &m->h->faults[f];
            if (!fw->skipped && fw->start <= ov_end && fw->end >= ov_start)
                inc->faults[f] = 1;
        }
        if (index >= 0) {
            if (inc->nlisted == inc->listed_cap) {
                inc->listed_cap = inc->listed_cap ? 2 * inc->listed_cap : 4;
                inc->listed = xrealloc(inc->listed,
                                       (size_t)inc->listed_cap * sizeof(*inc->listed));
            }
            inc->listed[inc->nlisted++] = index;
        }
    }
    if (--inc->pending == 0)
        incident_done(m, inc);
}

/* Contract: every hold of u has ended (else: the latest exits seen):
 * classify it, add it to its incident, free it. Its overlap ends where
 * resolve's would: the (capacity + 1)-th latest exit of its holds, the
 * least of the capacity + 1 latest kept. */
void mutex_resolve_unlisted(struct mutex_st *m, struct uviol *u)
{
    int is_broken = u->valid >= m->cap;
    if (is_broken)
        m->broken++;
    else
        m->stale++;
    incident_add(m, u->inc, is_broken, u->ov_start, u->has_end ? u->ov_end : u->ov_start, -1);
    free(u);
}

/* Contract: a hold of resource res, serial ser, active until now, has
 * ended at exit: each unlisted pending violation of res made since it
 * entered is one of its (their serials are >= ser: a suffix of r->up);
 * those it leaves with capacity holds not ended have their overlap's end,
 * those it was the last hold of are resolved. */
void mutex_unlisted_heard(struct mutex_st *m, int res, uint64_t ser, int64_t exit)
{
    struct rstate *r = &m->rs[res];
    int lo = 0, hi = r->nup;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->up_ser[mid] < ser)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == r->nup)
        return;
    sufcount_lower(&r->uc, lo);
    int got[64], k;
    while ((k = sufcount_take(&r->uc, 1, got, 64)) > 0)
        for (int j = 0; j < k; j++) {
            r->up[got[j]]->ov_end = exit;
            r->up[got[j]]->has_end = 1;
        }
    while ((k = sufcount_take(&r->uc, 0, got, 64)) > 0)
        for (int j = 0; j < k; j++) {
            struct uviol *u = r->up[got[j]];
            r->up[got[j]] = NULL;
            r->up_gone++;
            mutex_resolve_unlisted(m, u);
        }
    if (r->up_gone > 64 && r->up_gone > r->nup / 2) { /* close the gaps, in order */
        int kept = 0;
        for (int i = 0; i < r->nup; i++)
            if (r->up[i]) {
                r->up_ser[kept] = r->up_ser[i];
                r->up[kept++] = r->up[i];
            }
        r->nup = kept;
        r->up_gone = 0;
        sufcount_close_up(&r->uc); /* the same ones (taken at 0: resolved) */
    }
}

/* Contract: every hold of v has ended: classify it, fill its listed entry,
 * add it to its incident (done with it when it was the last), let go of
 * its holds and free v. */
void mutex_resolve(struct mutex_st *m, struct pviol *v)
{
    const struct hold *H = v->hs[v->n - 1];
    if ((size_t)v->n > m->exits_cap) {
        m->exits_cap = (size_t)v->n + 16;
        m->exits = xrealloc(m->exits, m->exits_cap * sizeof(*m->exits));
    }
    for (int k = 0; k < v->n; k++)
        m->exits[k] = v->hs[k]->exit;
    qsort(m->exits, (size_t)v->n, sizeof(*m->exits), cmp_i64);
    int64_t ov_start = H->enter, ov_end = m->exits[v->n - m->cap - 1];
    int is_broken = v->valid >= m->cap;
    if (is_broken)
        m->broken++;
    else
        m->stale++;
    if (v->obj) {
        struct json *o = v->obj;
        json_obj_set_str(o, "resource", check_res_name(m->h, H->res));
        json_obj_set_str(o, "class", is_broken ? "lock-broken" : "stale-holder");
        json_obj_set_num(o, "overlap_start_ms", ns_ms(ov_start));
        json_obj_set_num(o, "overlap_ms", ns_ms(ov_end - ov_start));
        struct json *hl = json_obj_set(o, "holders", json_new_arr());
        for (int k = 0; k < v->n; k++) {
            struct json *x = json_arr_push(hl, holder_json(v->hs[k]));
            if (k != v->latest) /* the lease the class was decided by */
                json_obj_set(x, "valid_until_at_grant_ms",
                             v->lag[k] == LEASE_NEVER ? json_new_null()
                                                      : json_new_num(ns_ms(v->lag[k])));
        }
        struct json *fl = json_obj_set(o, "faults", json_new_arr());
        for (int f = 0; f < m->h->nfaults; f++) {
            const struct fault_window *fw = &m->h->faults[f];
            if (!fw->skipped && fw->start <= ov_end && fw->end >= ov_start)
                json_arr_push(fl, json_new_int(fw->id));
        }
    }
    incident_add(m, v->inc, is_broken, ov_start, ov_end, v->obj ? v->index : -1);
    for (int k = 0; k < v->n; k++) {
        v->hs[k]->pending--;
        mutex_hold_unref(m, v->hs[k]);
    }
    free(v->lag);
    free(v);
}

void mutex_push_pending(struct mutex_st *m, struct pviol *v)
{
    if (m->npend == m->pend_cap) {
        m->pend_cap = m->pend_cap ? m->pend_cap * 2 : 16;
        m->pend = xrealloc(m->pend, (size_t)m->pend_cap * sizeof(*m->pend));
    }
    v->at = m->npend;
    m->pend[m->npend++] = v;
    for (int k = 0; k < v->n; k++) { /* each undone hold hears of it when it ends */
        struct hold *x = v->hs[k];
        if (x->done)
            continue;
        if (x->npv == x->pvcap) {
            x->pvcap = x->pvcap ? 2 * x->pvcap : 4;
            x->pv = xrealloc(x->pv, (size_t)x->pvcap * sizeof(*x->pv));
        }
        x->pv[x->npv++] = v;
    }
}
