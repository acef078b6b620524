/*
 * fencing.c: the fencing / lost-update checker (DESIGN.md "Checkers",
 * semantics in docs/checkers.md). It counts the accepted increments of the
 * plain and fenced counters in the worker logs, compares them with the
 * final values in storage.jsonl, counts stale ops the storage rejected, and
 * looks for fence regressions among the grants. It never reads the storage
 * itself: storage.jsonl is the harness's dump of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"

struct fgrant {
    int64_t invoke, acquired;
    uint64_t fence;
    int res;
    int worker;
};

struct fres {
    int64_t plain_acc, fenced_acc;       /* accepted writes */
    int64_t plain_failed, fenced_failed; /* writes with unknown outcome */
    int64_t rejected;                    /* fenced ops the storage refused */
    int used;                            /* any store op or grant */
};

static int64_t key_of(const struct fgrant *g, int by_invoke)
{
    return by_invoke ? g->invoke : g->acquired;
}

static int cmp_idx_acquired(const void *a, const void *b, void *ctx)
{
    const struct fgrant *g = ctx;
    int64_t x = g[*(const uint32_t *)a].acquired, y = g[*(const uint32_t *)b].acquired;
    return (x > y) - (x < y);
}

static int cmp_idx_invoke(const void *a, const void *b, void *ctx)
{
    const struct fgrant *g = ctx;
    int64_t x = g[*(const uint32_t *)a].invoke, y = g[*(const uint32_t *)b].invoke;
    return (x > y) - (x < y);
}

/* Contract: a new array (caller frees) of the indices of g[0..n) ordered by
 * acquired (by_invoke 0) or invoke time, stable. g is the concatenation of
 * per-worker runs (run k = g[runs[k] .. runs[k+1])), which a worker's log
 * already orders by both times; a run that is not (a grant with no invoke
 * record) is sorted on its own. Runs merge pairwise: O(n log workers). */
static uint32_t *order_by(const struct fgrant *g, size_t n, const size_t *runs0, size_t nruns,
                          int by_invoke)
{
    uint32_t *src = malloc((n ? n : 1) * sizeof(*src));
    uint32_t *dst = malloc((n ? n : 1) * sizeof(*dst));
    size_t *runs = malloc((nruns + 1) * sizeof(*runs));
    if (!src || !dst || !runs) 
        xalloc_die();
    memcpy(runs, runs0, (nruns + 1) * sizeof(*runs));
    for (size_t i = 0; i < n; i++)
        src[i] = (uint32_t)i;
    for (size_t k = 0; k < nruns; k++)
        for (size_t i = runs[k] + 1; i < runs[k + 1]; i++)
            if (key_of(&g[i - 1], by_invoke) > key_of(&g[i], by_invoke)) {
                qsort_r(src + runs[k], runs[k + 1] - runs[k], sizeof(*src),
                        by_invoke ? cmp_idx_invoke : cmp_idx_acquired, (void *)g);
                break;
            }
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t lo = runs[k], mid = runs[k + 1];
            size_t hi = k + 2 <= nruns ? runs[k + 2] : mid;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = key_of(&g[src[j]], by_invoke) < key_of(&g[src[i]], by_invoke)
                               ? src[j++] : src[i++];
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
    free(runs);
    return src;
}

/* Contract: count fence regressions among the n fenced grants g (per-worker
 * runs, see order_by): grant B regresses when some grant A of the same
 * resource whose reply arrived before B was invoked (A.acquired < B.invoke)
 * has A.fence >= B.fence. Walks B in invoke order while a second cursor
 * folds grants in acquired order into a per-resource running maximum.
 * Lists the first max regressions in out. */
static int64_t fence_regressions(const struct history *h, const struct fgrant *g, size_t n,
                                 const size_t *runs, size_t nruns, int max, struct json *out)
{
    uint32_t *byacq = order_by(g, n, runs, nruns, 0);
    uint32_t *byinv = order_by(g, n, runs, nruns, 1);
    int64_t *best = malloc(65536 * sizeof(*best)); /* per resource: grant with max fence */
    if (!best) 
        xalloc_die();
    for (size_t i = 0; i < n; i++)
        best[g[i].res] = -1;
    int64_t count = 0;
    size_t a = 0;
    for (size_t b = 0; b < n; b++) {
        const struct fgrant *B = &g[byinv[b]];
        for (; a < n && g[byacq[a]].acquired < B->invoke; a++) {
            const struct fgrant *A = &g[byacq[a]];
            if (best[A->res] < 0 || A->fence > g[best[A->res]].fence)
                best[A->res] = byacq[a];
        }
        if (best[B->res] < 0 || g[best[B->res]].fence < B->fence)
            continue;
        const struct fgrant *E = &g[best[B->res]];
        count++;
        if (count <= max) {
            struct json *o = json_arr_push(out, json_new_obj());
            json_obj_set_str(o, "resource", check_res_name(h, B->res));
            json_obj_set_int(o, "worker", B->worker);
            json_obj_set_int(o, "fence", (int64_t)B->fence);
            json_obj_set_num(o, "invoke_ms", ns_ms(B->invoke));
            json_obj_set_num(o, "acquired_ms", ns_ms(B->acquired));
            json_obj_set_int(o, "earlier_worker", E->worker);
            json_obj_set_int(o, "earlier_fence", (int64_t)E->fence);
            json_obj_set_num(o, "earlier_acquired_ms", ns_ms(E->acquired));
        }
    }
    free(best);
    free(byacq);
    free(byinv);
    return count;
}

int check_fencing(const struct history *h, const struct check_params *p, struct json *res)
{
    /* Indexed by the 16-bit resource field: untouched pages cost nothing. */
    struct fres *fr = calloc(65536, sizeof(*fr));
    size_t *runs = malloc(((size_t)h->nworkers + 1) * sizeof(*runs));
    int nres = h->nres;
    if (!fr || !runs) 
        xalloc_die();
    struct fgrant *g = NULL;
    size_t ng = 0, gcap = 0;
    int64_t rejected = 0;

    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        int64_t last_invoke = INT64_MIN; /* unknown invoke: never a regression */
        runs[i] = ng;
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = &w->ev[k];
            struct fres *x = &fr[r->res];
            if (r->type != EV_CRASH && r->res >= nres)
                nres = r->res + 1;
            switch (r->type) {
            case EV_ACQUIRE_INVOKE:
                last_invoke = r->t;
                break;
            case EV_ACQUIRE_OK:
                x->used = 1;
                if (!(r->flags & EVF_FENCE))
                    break;
                if (ng == gcap) {
                    gcap = gcap ? gcap * 2 : 256;
                    g = xrealloc(g, gcap * sizeof(*g));
                }
                g[ng++] = (struct fgrant){last_invoke, r->t, r->fence, r->res, w->id};
                last_invoke = INT64_MIN;
                break;
            case EV_STORE_READ:
            case EV_STORE_WRITE: {
                x->used = 1;
                int fenced = (r->flags & EVF_FENCED) != 0;
                if (r->flags & EVF_FAILED) {
                    if (r->type == EV_STORE_WRITE)
                        *(fenced ? &x->fenced_failed : &x->plain_failed) += 1;
                    break;
                }
                if (!(r->flags & EVF_ACCEPTED)) {
                    if (fenced) {
                        x->rejected++;
                        rejected++;
                    }
                    break;
                }
                if (r->type == EV_STORE_WRITE)
                    *(fenced ? &x->fenced_acc : &x->plain_acc) += 1;
                break;
            }
            default:
                break;
            }
        }
    }

    struct json *f = json_obj_child(json_obj_child(res, "checks"), "fencing");
    int available = h->have_storage;
    /* A JSONL history has no storage to show what fencing would have saved. */
    int offered = h->from_rundir && p->fencing_requested && ng > 0;
    int unknown = 0;
    int64_t plain_lost = 0, fenced_lost = 0, plain_acc = 0, fenced_acc = 0;
    struct json *per = json_new_arr();
    for (int r = 0; r < nres; r++) {
        const struct fres *x = &fr[r];
        const struct storage_final *s = available && r < h->nres ? &h->storage[r] : NULL;
        plain_acc += x->plain_acc;
        fenced_acc += x->fenced_acc;
        if (!available || (!x->used && !(s && s->present)))
            continue;
        struct json *o = json_arr_push(per, json_new_obj());
        json_obj_set_str(o, "res", check_res_name(h, r));
        if (!s || !s->present) {
            if (x->plain_acc || x->fenced_acc) {
                unknown = 1;
                check_warn(res, "fencing: %s: no final state in storage.jsonl, lost updates "
                            "unknown", check_res_name(h, r));
            }
            json_obj_set(o, "plain_final", json_new_null());
            json_obj_set_int(o, "plain_accepted", x->plain_acc);
            json_obj_set(o, "plain_lost", json_new_null());
            json_obj_set(o, "fenced_final", json_new_null());
            json_obj_set_int(o, "fenced_accepted", x->fenced_acc);
            json_obj_set(o, "fenced_lost", json_new_null());
            json_obj_set_int(o, "rejected", x->rejected);
            continue;
        }
        int64_t pl = x->plain_acc - s->plain;
        if (pl < 0) {
            check_warn(res, "fencing: %s: plain counter %lld is above its %lld accepted writes "
                        "(%lld writes with unknown outcome); lost updates counted as 0",
                        check_res_name(h, r), (long long)s->plain, (long long)x->plain_acc,
                        (long long)x->plain_failed);
            pl = 0;
        }
        plain_lost += pl;
        json_obj_set_int(o, "plain_final", s->plain);
        json_obj_set_int(o, "plain_accepted", x->plain_acc);
        json_obj_set_int(o, "plain_lost", pl);
        if (s->fenced < 0) {
            if (offered && x->fenced_acc) {
                unknown = 1;
                check_warn(res, "fencing: %s: storage.jsonl has no fenced counter, fenced lost "
                            "updates unknown", check_res_name(h, r));
            }
            json_obj_set(o, "fenced_final", json_new_null());
            json_obj_set_int(o, "fenced_accepted", x->fenced_acc);
            json_obj_set(o, "fenced_lost", json_new_null());
        } else {
            int64_t fl = x->fenced_acc - s->fenced;
            if (fl < 0) {
                check_warn(res, "fencing: %s: fenced counter %lld is above its %lld accepted "
                            "writes (%lld writes with unknown outcome); lost updates counted "
                            "as 0", check_res_name(h, r), (long long)s->fenced,
                            (long long)x->fenced_acc, (long long)x->fenced_failed);
                fl = 0;
            }
            if (offered)
                fenced_lost += fl;
            json_obj_set_int(o, "fenced_final", s->fenced);
            json_obj_set_int(o, "fenced_accepted", x->fenced_acc);
            json_obj_set_int(o, "fenced_lost", fl);
        }
        json_obj_set_int(o, "rejected", x->rejected);
    }

    struct json *regs = json_new_arr();
    runs[h->nworkers] = ng;
    int64_t nreg = fence_regressions(h, g, ng, runs, (size_t)h->nworkers, p->max_violations, regs);

    int verdict;
    if (!available) {
        if (h->from_rundir) {
            verdict = (offered && nreg > 0) ? VERDICT_INVALID : VERDICT_UNKNOWN;
        } else {
            verdict = VERDICT_VALID; /* not offered, and no plain counter to lose */
        }
    } else if (offered) {
        verdict = (fenced_lost > 0 || nreg > 0) ? VERDICT_INVALID
                  : unknown                     ? VERDICT_UNKNOWN
                                                : VERDICT_VALID;
    } else {
        verdict = plain_lost > 0 ? VERDICT_INVALID : unknown ? VERDICT_UNKNOWN : VERDICT_VALID;
    }

    json_obj_set_str(f, "verdict", verdict_name(verdict));
    json_obj_set_bool(f, "valid", verdict == VERDICT_VALID);
    json_obj_set_bool(f, "offered", offered);
    json_obj_set_bool(f, "available", available);
    if (!available)
        json_obj_set_str(f, "note", h->from_rundir
                                        ? "not available: storage.jsonl missing from the run "
                                          "directory"
                                        : "not available: lost updates need a run directory "
                                          "(storage.jsonl)");
    json_obj_set_int(f, "plain_lost_updates", plain_lost);
    json_obj_set_int(f, "fenced_lost_updates", fenced_lost);
    json_obj_set_int(f, "stale_ops_rejected", rejected);
    json_obj_set_int(f, "fence_regressions", nreg);
    json_obj_set_int(f, "plain_accepted_writes", plain_acc);
    json_obj_set_int(f, "fenced_accepted_writes", fenced_acc);
    json_obj_set(f, "per_resource", per);
    json_obj_set(f, "regressions", regs);
    if (nreg > p->max_violations)
        check_warn(res, "fencing: %lld fence regressions, the first %d listed", (long long)nreg,
                    p->max_violations);
    free(runs);
    free(g);
    free(fr);
    return verdict;
}
