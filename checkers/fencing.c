/*
 * fencing.c: the fencing / lost-update checker (docs/checkers.md "fencing / lost updates",
 * semantics in docs/checkers.md). It counts the accepted increments of the
 * plain and fenced counters in the worker logs, compares them with the
 * final values in storage.jsonl, counts stale ops the storage rejected, and
 * looks for fence regressions among the grants. It never reads the storage
 * itself: storage.jsonl is the harness's dump of it. A consumer of the
 * merged pass (pass.h): counters per resource, and for the regressions the
 * highest fence granted so far per resource, as it stood just before each
 * worker's latest acquire invoke.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"

struct fres {
    int64_t plain_acc, fenced_acc;       /* accepted writes */
    int64_t plain_failed, fenced_failed; /* writes with unknown outcome */
    int64_t rejected;                    /* fenced ops the storage refused */
    int used;                            /* any store op or grant */
};

/* The fenced grant with the highest fence so far (the earliest of equals). */
struct best {
    int has;
    int worker;
    uint64_t fence;
    int64_t acquired;
};

/* Per resource: the best now, and as it was before the grants at stamp. */
struct rbest {
    struct best cur, prev;
    int64_t stamp;
};

struct fworker {
    int64_t last_invoke;        /* INT64_MIN: unknown invoke, never a regression */
    int invoke_res;
    struct best at_invoke;      /* invoke_res's best just before last_invoke */
    uint32_t grants;            /* fenced grants so far (their order in the log) */
};

/* A regression as listed: ordered by (invoke, worker index, grant number). */
struct reg {
    int64_t invoke, acquired;
    int wi;
    uint32_t seq;
    int res, worker;
    uint64_t fence;
    struct best e;
};

struct fencing_st {
    const struct history *h;
    const struct check_params *p;
    struct fres *fr;            /* indexed by the 16-bit resource field */
    struct rbest *rb;
    struct fworker *fw;
    int nres;
    int64_t ng, rejected, nreg;
    struct reg *regs;           /* the first max_violations in invoke order */
    int nregs;
};

static int reg_before(const struct reg *a, const struct reg *b)
{
    if (a->invoke != b->invoke)
        return a->invoke < b->invoke;
    if (a->wi != b->wi)
        return a->wi < b->wi;
    return a->seq < b->seq;
}

static int cmp_reg(const void *a, const void *b)
{
    return reg_before(a, b) ? -1 : reg_before(b, a);
}

/* Contract: resource res's best among the grants acquired strictly before t
 * (t at or after its latest stamp, or the stamp before it). */
static struct best best_before(const struct rbest *b, int64_t t)
{
    return b->stamp == t ? b->prev : b->cur;
}

/* Contract: keep x among the max earliest regressions (a regression is
 * judged at its grant, i.e. in acquired order; they are listed in invoke
 * order). */
static void keep_reg(struct fencing_st *f, const struct reg *x)
{
    int max = f->p->max_violations;
    if (max <= 0)
        return;
    if (f->nregs < max) {
        f->regs[f->nregs++] = *x;
        return;
    }
    int worst = 0;
    for (int i = 1; i < f->nregs; i++)
        if (reg_before(&f->regs[worst], &f->regs[i]))
            worst = i;
    if (reg_before(x, &f->regs[worst]))
        f->regs[worst] = *x;
}

static void fencing_event(void *st, int wi, const struct ev_rec *r)
{
    struct fencing_st *f = st;
    struct fres *x = &f->fr[r->res];
    struct fworker *w = &f->fw[wi];
    if (r->type != EV_CRASH && r->res >= f->nres)
        f->nres = r->res + 1;
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        w->last_invoke = r->t;
        w->invoke_res = r->res;
        w->at_invoke = best_before(&f->rb[r->res], r->t);
        break;
    case EV_ACQUIRE_OK: {
        x->used = 1;
        if (!(r->flags & EVF_FENCE))
            break;
        f->ng++;
        uint32_t seq = w->grants++;
        if (w->last_invoke != INT64_MIN) {
            /* A grant of another resource than its invoke's (lockstorm's
             * workers never make one): that resource's best now is its
             * best at the invoke unless it changed since; only then (a
             * hand-made history) does a grant after the invoke count too. */
            struct best e = w->invoke_res == r->res
                                ? w->at_invoke
                                : best_before(&f->rb[r->res], w->last_invoke);
            if (e.has && e.fence >= r->fence) {
                f->nreg++;
                struct reg g = {w->last_invoke, r->t, wi, seq, r->res, f->h->w[wi].id,
                                r->fence, e};
                keep_reg(f, &g);
            }
        }
        w->last_invoke = INT64_MIN;
        struct rbest *b = &f->rb[r->res];
        if (b->stamp != r->t) {
            b->prev = b->cur;
            b->stamp = r->t;
        }
        if (!b->cur.has || r->fence > b->cur.fence)
            b->cur = (struct best){1, f->h->w[wi].id, r->fence, r->t};
        break;
    }
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
                f->rejected++;
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

static void *fencing_init(const struct history *h, const struct check_params *p, struct json *res)
{
    (void)res;
    struct fencing_st *f = xcalloc_lines(1, sizeof(*f));
    f->h = h;
    f->p = p;
    f->nres = h->nres;
    /* Indexed by the 16-bit resource field: untouched pages cost nothing. */
    f->fr = xcalloc(65536, sizeof(*f->fr));
    /* stamp 0 with prev empty is right even for grants at t = 0: before
     * the first grant of a resource there is no best at any time */
    f->rb = xcalloc(65536, sizeof(*f->rb));
    f->fw = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*f->fw));
    for (int i = 0; i < h->nworkers; i++)
        f->fw[i].last_invoke = INT64_MIN;
    f->regs = xcalloc((size_t)(p->max_violations > 0 ? p->max_violations : 1), sizeof(*f->regs));
    return f;
}

static int fencing_finish(void *st, struct json *res)
{
    struct fencing_st *fs = st;
    const struct history *h = fs->h;
    const struct check_params *p = fs->p;
    const struct fres *fr = fs->fr;
    int nres = fs->nres;
    int64_t ng = fs->ng, rejected = fs->rejected;
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
    int64_t nreg = fs->nreg;
    if (fs->nregs > 1)
        qsort(fs->regs, (size_t)fs->nregs, sizeof(*fs->regs), cmp_reg);
    for (int i = 0; i < fs->nregs; i++) {
        const struct reg *B = &fs->regs[i];
        struct json *o = json_arr_push(regs, json_new_obj());
        json_obj_set_str(o, "resource", check_res_name(h, B->res));
        json_obj_set_int(o, "worker", B->worker);
        json_obj_set_int(o, "fence", (int64_t)B->fence);
        json_obj_set_num(o, "invoke_ms", ns_ms(B->invoke));
        json_obj_set_num(o, "acquired_ms", ns_ms(B->acquired));
        json_obj_set_int(o, "earlier_worker", B->e.worker);
        json_obj_set_int(o, "earlier_fence", (int64_t)B->e.fence);
        json_obj_set_num(o, "earlier_acquired_ms", ns_ms(B->e.acquired));
    }

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
    /* What was not measured is null, never a default 0 (an expectation on
     * it is unmet, "not measured": harness/verdict.c): lost updates without
     * the storage's final values, the fenced numbers without fences. */
    /* nothing written to the storage (workers.store: false, record mode,
     * no grant): no update could be lost, none was measured: null too */
    int wrote = plain_acc + fenced_acc + rejected > 0;
    if (available && !wrote)
        json_obj_set_str(f, "not_measured", "nothing was written to lockstorm's storage "
                                            "(workers.store false, lock.impl record, or no "
                                            "grant): lost updates not measured");
    json_obj_set(f, "plain_lost_updates",
                 available && wrote ? json_new_int(plain_lost) : json_new_null());
    json_obj_set(f, "fenced_lost_updates",
                 available && offered && wrote ? json_new_int(fenced_lost) : json_new_null());
    json_obj_set(f, "stale_ops_rejected",
                 offered || rejected ? json_new_int(rejected) : json_new_null());
    /* regressions are measured whenever grants carry fences (a JSONL
     * history too, where fencing is never "offered": no storage) */
    json_obj_set(f, "fence_regressions", ng > 0 ? json_new_int(nreg) : json_new_null());
    if (!offered)
        json_obj_set_str(f, "not_offered", !p->fencing_requested
                                               ? "lock.fencing is false"
                                           : !h->from_rundir
                                               ? "a JSONL history has no fences to check"
                                               : "no grant carried a fence (the lock offers none, or granted nothing)");
    json_obj_set_int(f, "plain_accepted_writes", plain_acc);
    json_obj_set_int(f, "fenced_accepted_writes", fenced_acc);
    json_obj_set(f, "per_resource", per);
    json_obj_set(f, "regressions", regs);
    if (nreg > p->max_violations)
        check_warn(res, "fencing: %lld fence regressions, the first %d listed", (long long)nreg,
                    p->max_violations);
    free(fs->fr);
    free(fs->rb);
    free(fs->fw);
    free(fs->regs);
    free(fs);
    return verdict;
}

const struct checker_def fencing_checker = {
    {"fencing",
     PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_STORE_READ) |
         PASS_TYPE(EV_STORE_WRITE),
     fencing_event, NULL, NULL, 42},
    fencing_init, fencing_finish, NULL};

int check_fencing(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&fencing_checker, h, p, res);
}
