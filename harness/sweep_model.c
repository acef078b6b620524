/*
 * sweep_model.c: assembles sweep.json (docs/sweep.md "sweep.json") from the
 * sweep's plan and its cells' run directories: per cell the numbers of its
 * result.json plus what checkers/ttl.h measures in its event logs; per
 * series (the cells sharing every axis value but lock.ttl) one point per
 * TTL, the predicted curves P(hold + pause > TTL) from the cell workload's
 * distributions, and the smallest TTL without stale-holder violations;
 * then the recommendation and the price of a longer TTL. It runs nothing
 * and formats nothing (reports/sweep.c renders the model); it lives where
 * the sweep runs because it reads the cells' event logs through checkers/.
 */
#include "harness/sweep_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "checkers/history.h"
#include "checkers/ttl.h"
#include "model/rundir.h"
#include "model/workload.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define CURVE_POINTS 121
#define TTL_AXIS "lock.ttl"

/* What the model keeps of each done cell besides its JSON. */
struct cell_info {
    int ok;                 /* done, measured */
    int series;
    double ttl_ms;
    int have_dists;         /* hold and pauses known (the workload loaded) */
    struct dist hold;
    struct ttl_pause pauses[TTL_MAX_PAUSES];
    int npauses;
    const struct json *m;   /* its "measured" (borrowed from the plan) */
};

/* ---- small helpers ----------------------------------------------------------- */

static struct json *read_json(const char *path)
{
    struct json *doc = NULL;
    char why[128];
    if (json_load_file(path, &doc, why, sizeof(why)) < 0)
        doc = NULL;
    return doc;
}

static double num_at(const struct json *root, const char *path)
{
    const struct json *v = json_path(root, path);
    if (v && v->type == JSON_NUM)
        return v->d;
    if (v && v->type == JSON_BOOL)
        return v->i ? 1 : 0;
    return NAN;
}


static void dur_text(int64_t ns, struct strbuf *sb)
{
    char b[32];
    ls_format_duration(ns, b, sizeof(b));
    sb_puts(sb, b);
}

/* "uniform 20ms..80ms", "fixed 150ms", "exponential mean 40ms, max 200ms" */
static void dist_text(const struct dist *d, struct strbuf *sb)
{
    sb_printf(sb, "%s ", dist_kind_name(d->kind));
    switch (d->kind) {
    case DIST_FIXED:
        dur_text(d->value, sb);
        return;
    case DIST_UNIFORM:
        dur_text(d->min, sb);
        sb_puts(sb, "..");
        dur_text(d->max, sb);
        return;
    case DIST_EXPONENTIAL:
        sb_puts(sb, "mean ");
        dur_text(d->mean, sb);
        break;
    case DIST_LOGNORMAL:
        sb_puts(sb, "median ");
        dur_text(d->value, sb);
        sb_printf(sb, " sigma %g", d->sigma);
        break;
    }
    if (d->max > 0) {
        sb_puts(sb, ", max ");
        dur_text(d->max, sb);
    }
}

static void pauses_text(const struct ttl_pause *p, int n, struct strbuf *sb)
{
    if (n == 0) {
        sb_puts(sb, "none (no pause fault targets a holder)");
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i)
            sb_puts(sb, " + ");
        dist_text(&p[i].d, sb);
        if (n > 1)
            sb_printf(sb, " (weight %.3g)", p[i].weight);
    }
}

/* ---- cells ------------------------------------------------------------------- */

/* Contract: the "measured" object of the done cell in cdir (result.json
 * numbers plus the history measurements); fills ci. NULL when the cell
 * has no readable result.json. */
static struct json *measure_cell(const char *cdir, struct cell_info *ci, struct json *model,
                                 const char *name)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/result.json", cdir);
    struct json *res = read_json(path);
    if (!res) {
        check_warn(model, "cell %s: no readable result.json", name);
        return NULL;
    }
    struct json *m = json_new_obj();
    json_obj_set_str(m, "verdict", json_get_str(res, "verdict", "unknown"));
    double ttl = NAN;
    static const char *const nums[][2] = {
        {"grants", "counts.grants"},
        {"violations", "checks.mutex.violations"},
        {"stale_holder", "checks.mutex.by_class.stale_holder"},
        {"lock_broken", "checks.mutex.by_class.lock_broken"},
        {"plain_lost_updates", "checks.fencing.plain_lost_updates"},
        {"fenced_lost_updates", "checks.fencing.fenced_lost_updates"},
        {"fencing_offered", "checks.fencing.offered"},
        {"holder_crashes", "checks.liveness.holder_crashes"},
        {"crash_to_next_grant_ms", "checks.liveness.crash_to_next_grant_ms"},
        {"crashes_without_next_grant", "checks.liveness.crashes_without_next_grant"},
        {"longest_stall_ms", "checks.liveness.longest_stall_ms"},
    };
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        const struct json *v = json_path(res, nums[i][1]);
        json_obj_set(m, nums[i][0], v && (v->type == JSON_NUM || v->type == JSON_BOOL)
                                        ? json_clone(v) : json_new_null());
    }

    struct history h;
    memset(&h, 0, sizeof(h));
    struct ls_err err = {0};
    if (history_load_rundir(cdir, &h, &err) == 0 && h.meta) {
        const struct workload *w = &h.meta->w;
        ttl = (double)w->lock.ttl / 1e6;
        ci->have_dists = 1;
        ci->hold = w->workers.hold;
        ci->npauses = ttl_pauses_of(h.meta, ci->pauses, TTL_MAX_PAUSES);
        struct ttl_measure tm;
        ttl_measure_history(&h, &tm);
        json_obj_set_int(m, "pauses", tm.pauses);
        json_obj_set_int(m, "paused_holds", tm.paused_holds);
        json_obj_set_int(m, "overstayed", tm.overstayed);
        json_obj_set_int(m, "stale_caused", tm.stale_caused);
        json_obj_set_int(m, "holds", tm.holds);
        json_obj_set(m, "hold_p50_ms", tm.hold_p50_ms >= 0 ? json_new_num(tm.hold_p50_ms)
                                                           : json_new_null());
        json_obj_set(m, "hold_p99_ms", tm.hold_p99_ms >= 0 ? json_new_num(tm.hold_p99_ms)
                                                           : json_new_null());
        json_obj_set(m, "hold_max_ms", tm.hold_max_ms >= 0 ? json_new_num(tm.hold_max_ms)
                                                           : json_new_null());
        json_obj_set(m, "pause_mean_ms", tm.pause_mean_ms >= 0 ? json_new_num(tm.pause_mean_ms)
                                                               : json_new_null());
        json_obj_set(m, "pause_max_ms", tm.pause_max_ms >= 0 ? json_new_num(tm.pause_max_ms)
                                                             : json_new_null());
        struct strbuf t = STRBUF_INIT;
        dist_text(&ci->hold, &t);
        json_obj_set_str(m, "hold", sb_cstr(&t));
        sb_reset(&t);
        pauses_text(ci->pauses, ci->npauses, &t);
        json_obj_set_str(m, "pause", sb_cstr(&t));
        sb_free(&t);
        double tns = (double)w->lock.ttl;
        json_obj_set(m, "predicted_p", ci->npauses
                         ? json_new_num(ttl_mix_exceed(&ci->hold, ci->pauses, ci->npauses, tns, 0))
                         : json_new_null());
        json_obj_set(m, "predicted_p_harness",
                     ci->npauses ? json_new_num(ttl_mix_exceed(&ci->hold, ci->pauses,
                                                               ci->npauses, tns, 1))
                                 : json_new_null());
        json_obj_set_bool(m, "renewal", w->lock.renew_every > 0);
    } else {
        check_warn(model, "cell %s: event logs not loaded (%s): no pause measurements", name,
             err.msg[0] ? err.msg : "no workload");
        const struct json *t = json_path(res, "workload.lock.ttl");
        int64_t ns;
        if (t && t->type == JSON_STR && ls_parse_duration(t->s, &ns, NULL) == 0)
            ttl = (double)ns / 1e6;
    }
    history_free(&h);
    json_free(res);
    json_obj_set(m, "ttl_ms", json_new_num(ttl));
    ci->ttl_ms = ttl;
    ci->ok = ttl == ttl;
    if (!ci->ok)
        check_warn(model, "cell %s: its TTL is unknown; left out of the series", name);
    return m;
}

/* The series key of a cell: its axis values but lock.ttl, "k=v, k=v". */
static void series_key(const struct json *cell, struct strbuf *sb)
{
    const struct json *ax = json_obj_get(cell, "axes");
    for (size_t i = 0; ax && ax->type == JSON_OBJ && i < ax->n; i++) {
        if (strcmp(ax->keys[i], TTL_AXIS) == 0)
            continue;
        sb_printf(sb, "%s%s=%s", sb->len ? ", " : "", ax->keys[i],
                  ax->kids[i]->type == JSON_STR ? ax->kids[i]->s : "?");
    }
}

/* ---- series -------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double nz(double v)
{
    return v == v ? v : 0;
}

/* Contract: one point per distinct TTL of the series' measured cells. */
static struct json *series_points(const struct cell_info *ci, int nc, int series,
                                  int *nttl_out, double *ttls)
{
    int nt = 0;
    for (int i = 0; i < nc; i++) {
        if (!ci[i].ok || ci[i].series != series)
            continue;
        int seen = 0;
        for (int k = 0; k < nt; k++)
            seen |= ttls[k] == ci[i].ttl_ms;
        if (!seen)
            ttls[nt++] = ci[i].ttl_ms;
    }
    qsort(ttls, (size_t)nt, sizeof(*ttls), cmp_double);
    *nttl_out = nt;
    struct json *pts = json_new_arr();
    for (int k = 0; k < nt; k++) {
        double runs = 0, pauses = 0, paused = 0, over = 0, caused = 0, stale = 0, broken = 0;
        double viol = 0, grants = 0, plain = 0, fenced = 0, crashes = 0, csum = 0, cmax = NAN;
        double cn = 0, stale_runs = 0, pred = NAN, predh = NAN;
        int fenced_known = 0;
        for (int i = 0; i < nc; i++) {
            if (!ci[i].ok || ci[i].series != series || ci[i].ttl_ms != ttls[k])
                continue;
            const struct json *m = ci[i].m;
            runs++;
            pauses += nz(num_at(m, "pauses"));
            paused += nz(num_at(m, "paused_holds"));
            over += nz(num_at(m, "overstayed"));
            caused += nz(num_at(m, "stale_caused"));
            double st = nz(num_at(m, "stale_holder"));
            stale += st;
            stale_runs += st > 0;
            broken += nz(num_at(m, "lock_broken"));
            viol += nz(num_at(m, "violations"));
            grants += nz(num_at(m, "grants"));
            plain += nz(num_at(m, "plain_lost_updates"));
            double f = num_at(m, "fenced_lost_updates");
            if (f == f && num_at(m, "fencing_offered") == 1) {
                fenced += f;
                fenced_known = 1;
            }
            crashes += nz(num_at(m, "holder_crashes"));
            double c = num_at(m, "crash_to_next_grant_ms");
            if (c == c) {
                csum += c;
                cn++;
                cmax = cmax == cmax && cmax > c ? cmax : c;
            }
            if (pred != pred) {
                pred = num_at(m, "predicted_p");
                predh = num_at(m, "predicted_p_harness");
            }
        }
        struct json *p = json_arr_push(pts, json_new_obj());
        json_obj_set_num(p, "ttl_ms", ttls[k]);
        json_obj_set_int(p, "runs", (int64_t)runs);
        json_obj_set_int(p, "pauses", (int64_t)pauses);
        json_obj_set_int(p, "paused_holds", (int64_t)paused);
        json_obj_set_int(p, "overstayed", (int64_t)over);
        json_obj_set_int(p, "stale_caused", (int64_t)caused);
        json_obj_set_num(p, "overstay_share", paused > 0 ? over / paused : NAN);
        json_obj_set_num(p, "stale_share", paused > 0 ? caused / paused : NAN);
        json_obj_set_num(p, "predicted_p", pred);
        json_obj_set_num(p, "predicted_p_harness", predh);
        json_obj_set_int(p, "violations", (int64_t)viol);
        json_obj_set_int(p, "stale_holder", (int64_t)stale);
        json_obj_set_int(p, "lock_broken", (int64_t)broken);
        json_obj_set_int(p, "runs_with_stale_holder", (int64_t)stale_runs);
        json_obj_set_num(p, "stale_holder_per_pause", pauses > 0 ? stale / pauses : NAN);
        json_obj_set_num(p, "lock_broken_per_pause", pauses > 0 ? broken / pauses : NAN);
        json_obj_set_num(p, "stale_holder_per_1k_grants", grants > 0 ? stale * 1000 / grants
                                                                     : NAN);
        json_obj_set_num(p, "lock_broken_per_1k_grants", grants > 0 ? broken * 1000 / grants
                                                                    : NAN);
        json_obj_set_int(p, "grants", (int64_t)grants);
        json_obj_set_int(p, "plain_lost_updates", (int64_t)plain);
        json_obj_set(p, "fenced_lost_updates", fenced_known ? json_new_int((int64_t)fenced)
                                                            : json_new_null());
        json_obj_set_num(p, "plain_lost_updates_per_run", runs > 0 ? plain / runs : NAN);
        json_obj_set_num(p, "fenced_lost_updates_per_run",
                         fenced_known && runs > 0 ? fenced / runs : NAN);
        json_obj_set_int(p, "holder_crashes", (int64_t)crashes);
        json_obj_set_int(p, "crash_samples", (int64_t)cn);
        json_obj_set_num(p, "crash_to_next_grant_ms", cn > 0 ? csum / cn : NAN);
        json_obj_set_num(p, "crash_to_next_grant_max_ms", cmax);
    }
    return pts;
}

/* P(hold + pause > TTL) <= 1% from this TTL on (bisection; monotone). */
static double ttl_for_one_percent(const struct cell_info *c)
{
    double lo = 0, hi = 1e6; /* ns */
    while (ttl_mix_exceed(&c->hold, c->pauses, c->npauses, hi, 0) > 0.01 && hi < 1e13)
        hi *= 2;
    for (int i = 0; i < 60 && hi - lo > 1e4; i++) {
        double mid = (lo + hi) / 2;
        if (ttl_mix_exceed(&c->hold, c->pauses, c->npauses, mid, 0) > 0.01)
            lo = mid;
        else
            hi = mid;
    }
    return hi / 1e6;
}

/* Contract: fills series s (key, label) from the cells; returns the
 * measured smallest safe TTL (NAN when none) through *safe. */
static struct json *build_series(const struct cell_info *ci, int nc, int idx, const char *key,
                                 const struct json *cells, double *safe, double *pred_bound)
{
    struct json *s = json_new_obj();
    json_obj_set_int(s, "index", idx);
    json_obj_set_str(s, "label", *key ? key : "all cells");
    const struct cell_info *first = NULL;
    struct json *axes = json_obj_set(s, "axes", json_new_obj());
    int axes_done = 0;
    for (int i = 0; i < nc; i++) {
        if (ci[i].series != idx)
            continue;
        const struct json *ax = json_obj_get(json_arr_get(cells, (size_t)i), "axes");
        for (size_t k = 0; !axes_done && ax && ax->type == JSON_OBJ && k < ax->n; k++)
            if (strcmp(ax->keys[k], TTL_AXIS) != 0)
                json_obj_set(axes, ax->keys[k], json_clone(ax->kids[k]));
        axes_done = 1;
        if (ci[i].ok && ci[i].have_dists && !first)
            first = &ci[i];
    }
    double *ttls = xcalloc((size_t)nc + 1, sizeof(*ttls));
    int nt = 0;
    struct json *pts = series_points(ci, nc, idx, &nt, ttls);
    *safe = NAN;
    for (int k = nt - 1; k >= 0; k--) {
        const struct json *p = json_arr_get(pts, (size_t)k);
        if (json_get_int(p, "stale_holder", 1) != 0 || json_get_int(p, "runs", 0) == 0)
            break;
        *safe = ttls[k];
    }
    json_obj_set_num(s, "smallest_safe_ttl_ms", *safe);
    *pred_bound = NAN;
    double hold_max = NAN, pause_max = NAN, hold_p99 = NAN;
    for (int i = 0; i < nc; i++) {
        if (!ci[i].ok || ci[i].series != idx)
            continue;
        double v = num_at(ci[i].m, "hold_max_ms");
        if (v == v && !(hold_max >= v))
            hold_max = v;
        v = num_at(ci[i].m, "hold_p99_ms");
        if (v == v && !(hold_p99 >= v))
            hold_p99 = v;
        v = num_at(ci[i].m, "pause_max_ms");
        if (v == v && !(pause_max >= v))
            pause_max = v;
    }
    json_obj_set_num(s, "measured_hold_p99_ms", hold_p99);
    json_obj_set_num(s, "measured_hold_max_ms", hold_max);
    json_obj_set_num(s, "measured_pause_max_ms", pause_max);
    if (first) {
        struct strbuf t = STRBUF_INIT;
        dist_text(&first->hold, &t);
        json_obj_set_str(s, "hold", sb_cstr(&t));
        sb_reset(&t);
        pauses_text(first->pauses, first->npauses, &t);
        json_obj_set_str(s, "pause", sb_cstr(&t));
        sb_free(&t);
    }
    if (first && first->npauses > 0) {
        int64_t bound = -1;
        for (int i = 0; i < first->npauses; i++) {
            int64_t b = ttl_safe_bound(&first->hold, &first->pauses[i].d);
            if (b < 0) {
                bound = -1;
                break;
            }
            if (b > bound)
                bound = b;
        }
        *pred_bound = bound >= 0 ? (double)bound / 1e6 : NAN;
        json_obj_set_num(s, "predicted_safe_ttl_ms", *pred_bound);
        json_obj_set_num(s, "predicted_ttl_p1pct_ms", ttl_for_one_percent(first));
        /* the curves, on a grid over the swept TTLs and the bound */
        double top = nt ? ttls[nt - 1] * 1.25 : 1000;
        if (*pred_bound == *pred_bound && *pred_bound * 1.1 > top && *pred_bound < 4 * top)
            top = *pred_bound * 1.1;
        struct json *curve = json_obj_set(s, "predicted_curve", json_new_obj());
        struct json *cols = json_obj_set(curve, "columns", json_new_arr());
        json_arr_push(cols, json_new_str("ttl_ms"));
        json_arr_push(cols, json_new_str("p"));
        json_arr_push(cols, json_new_str("p_harness"));
        struct json *rows = json_obj_set(curve, "rows", json_new_arr());
        for (int g = 0; g < CURVE_POINTS; g++) {
            double t = top * g / (CURVE_POINTS - 1);
            struct json *r = json_arr_push(rows, json_new_arr());
            json_arr_push(r, json_new_num(t));
            json_arr_push(r, json_new_num(ttl_mix_exceed(&first->hold, first->pauses,
                                                         first->npauses, t * 1e6, 0)));
            json_arr_push(r, json_new_num(ttl_mix_exceed(&first->hold, first->pauses,
                                                         first->npauses, t * 1e6, 1)));
        }
    } else {
        json_obj_set(s, "predicted_safe_ttl_ms", json_new_null());
        json_obj_set(s, "predicted_ttl_p1pct_ms", json_new_null());
        json_obj_set(s, "predicted_curve", json_new_null());
    }
    json_obj_set(s, "points", pts);
    free(ttls);
    return s;
}

/* ---- recommendation and price ------------------------------------------------- */

static void recommend(struct json *model, const struct json *series)
{
    struct json *r = json_obj_set(model, "recommendation", json_new_obj());
    double worst = NAN, pred = NAN;
    int unsafe = 0, none = 1, unbounded = 0;
    struct strbuf missing = STRBUF_INIT, unmeasured = STRBUF_INIT;
    int64_t broken = 0, fenced = 0;
    int fenced_known = 0;
    for (size_t i = 0; series && i < series->n; i++) {
        const struct json *s = series->kids[i];
        const struct json *pts = json_obj_get(s, "points");
        if (!pts || pts->type != JSON_ARR || !pts->n) {
            sb_printf(&unmeasured, "%s%s", unmeasured.len ? "; " : "",
                      json_get_str(s, "label", "?"));
            continue;
        }
        none = 0;
        for (size_t k = 0; k < pts->n; k++) {
            broken += json_get_int(pts->kids[k], "lock_broken", 0);
            const struct json *f = json_obj_get(pts->kids[k], "fenced_lost_updates");
            if (f && f->type == JSON_NUM) {
                fenced += f->i;
                fenced_known = 1;
            }
        }
        double safe = num_at(s, "smallest_safe_ttl_ms");
        if (safe != safe) {
            unsafe = 1;
            sb_printf(&missing, "%s%s", missing.len ? "; " : "", json_get_str(s, "label", "?"));
        } else if (!(worst >= safe)) {
            worst = safe;
        }
        double b = num_at(s, "predicted_safe_ttl_ms");
        if (b != b && json_obj_get(s, "predicted_curve") &&
            json_obj_get(s, "predicted_curve")->type != JSON_NULL)
            unbounded = 1;
        else if (b == b && !(pred >= b))
            pred = b;
    }
    struct strbuf t = STRBUF_INIT;
    char a[32], b[32];
    const struct json *intr = json_obj_get(model, "interrupted");
    if (intr && intr->type == JSON_BOOL && intr->i)
        sb_puts(&t, "interrupted, so from the cells that finished only: ");
    if (none) {
        sb_puts(&t, "no cell finished: nothing to recommend");
        json_obj_set(r, "ttl_ms", json_new_null());
    } else if (unmeasured.len) {
        sb_printf(&t, "no cell finished for: %s; nothing to recommend", sb_cstr(&unmeasured));
        json_obj_set(r, "ttl_ms", json_new_null());
    } else if (unsafe) {
        sb_printf(&t, "no swept TTL was free of stale-holder violations for: %s; sweep longer "
                      "TTLs", sb_cstr(&missing));
        json_obj_set(r, "ttl_ms", json_new_null());
    } else {
        ls_format_duration((int64_t)(worst * 1e6), a, sizeof(a));
        sb_printf(&t, "smallest swept TTL with zero stale-holder violations in every series and "
                      "repeat, and at every longer swept TTL: %s", a);
        json_obj_set_num(r, "ttl_ms", worst);
    }
    if (pred == pred && !unbounded) {
        ls_format_duration((int64_t)(pred * 1e6), b, sizeof(b));
        sb_printf(&t, "; predicted: P(hold + pause > TTL) = 0 from %s (longest hold + longest "
                      "pause)", b);
    } else if (unbounded) {
        sb_puts(&t, "; predicted: an unbounded hold or pause distribution never gives P = 0 "
                    "(see predicted_ttl_p1pct_ms per series)");
    }
    json_obj_set_num(r, "predicted_ttl_ms", unbounded ? NAN : pred);
    json_obj_set_int(r, "lock_broken", broken);
    json_obj_set(r, "fenced_lost_updates", fenced_known ? json_new_int(fenced) : json_new_null());
    if (broken > 0)
        sb_printf(&t, ". %lld lock-broken violations: the lock itself granted twice; no TTL "
                      "fixes that", (long long)broken);
    if (fenced_known)
        sb_printf(&t, ". Fenced lost updates: %lld%s", (long long)fenced,
                  fenced == 0 ? " (fencing kept the data right at every TTL)" : "");
    json_obj_set_str(r, "text", sb_cstr(&t));
    sb_free(&t);
    sb_free(&missing);
    sb_free(&unmeasured);
}

struct price_row {
    double ttl, sum, max;
    int64_t n;
};

static int cmp_price(const void *a, const void *b)
{
    const struct price_row *x = a, *y = b;
    return x->ttl < y->ttl ? -1 : x->ttl > y->ttl;
}

/* Contract: "price": per swept TTL over every series, the mean and the
 * longest time from a holder's crash to the next grant of its resource. */
static void price(struct json *model, const struct json *series)
{
    struct json *p = json_obj_set(model, "price", json_new_obj());
    struct price_row rows[512];
    int nt = 0;
    for (size_t i = 0; series && i < series->n; i++) {
        const struct json *pts = json_obj_get(series->kids[i], "points");
        for (size_t k = 0; pts && pts->type == JSON_ARR && k < pts->n; k++) {
            const struct json *pt = pts->kids[k];
            int64_t c = json_get_int(pt, "crash_samples", 0);
            if (c <= 0)
                continue;
            double t = num_at(pt, "ttl_ms");
            int j;
            for (j = 0; j < nt && rows[j].ttl != t; j++)
                ;
            if (j == nt) {
                if (nt == 512)
                    continue;
                rows[nt++] = (struct price_row){t, 0, 0, 0};
            }
            rows[j].sum += num_at(pt, "crash_to_next_grant_ms") * (double)c;
            rows[j].n += c;
            double mx = num_at(pt, "crash_to_next_grant_max_ms");
            if (mx > rows[j].max)
                rows[j].max = mx;
        }
    }
    qsort(rows, (size_t)nt, sizeof(rows[0]), cmp_price);
    json_obj_set_bool(p, "measured", nt > 0);
    json_obj_set_str(p, "what", "time from a holder's crash to the next grant of its resource "
                                "(checks.liveness.crash_to_next_grant_ms of each run), per TTL "
                                "over every series");
    if (nt == 0)
        json_obj_set_str(p, "note", "not measured: no cell had a holder crash (the sweep has no "
                                    "kill fault with target holder; add one under set: or as an "
                                    "axis, see docs/sweep.md)");
    struct json *by = json_obj_set(p, "points", json_new_arr());
    for (int j = 0; j < nt; j++) {
        struct json *o = json_arr_push(by, json_new_obj());
        json_obj_set_num(o, "ttl_ms", rows[j].ttl);
        json_obj_set_num(o, "crash_to_next_grant_ms", rows[j].sum / (double)rows[j].n);
        json_obj_set_num(o, "crash_to_next_grant_max_ms", rows[j].max);
        json_obj_set_int(o, "samples", rows[j].n);
    }
}

/* ---- the model ------------------------------------------------------------------ */

void sweep_model_build(const char *dir, struct json *plan)
{
    static const char *const added[] = {"series", "recommendation", "price", "warnings"};
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        json_obj_set(plan, added[i], json_new_null());
    json_obj_set(plan, "warnings", json_new_arr());
    struct json *cells = json_obj_get(plan, "cells");
    int nc = cells && cells->type == JSON_ARR ? (int)cells->n : 0;
    struct cell_info *ci = xcalloc((size_t)nc + 1, sizeof(*ci));
    char **keys = xcalloc((size_t)nc + 1, sizeof(*keys));
    int nkeys = 0;
    for (int i = 0; i < nc; i++) {
        struct json *c = cells->kids[i];
        struct strbuf key = STRBUF_INIT;
        series_key(c, &key);
        int s;
        for (s = 0; s < nkeys; s++)
            if (strcmp(keys[s], sb_cstr(&key)) == 0)
                break;
        if (s == nkeys)
            keys[nkeys++] = xstrdup(sb_cstr(&key));
        sb_free(&key);
        ci[i].series = s;
        json_obj_set(c, "series", json_new_int(s));
        json_obj_set(c, "measured", json_new_null());
        if (strcmp(json_get_str(c, "state", ""), "done") != 0)
            continue;
        char cdir[4200];
        snprintf(cdir, sizeof(cdir), "%s/%s", dir, json_get_str(c, "dir", "?"));
        struct json *m = measure_cell(cdir, &ci[i], plan, json_get_str(c, "name", "?"));
        if (m)
            ci[i].m = json_obj_set(c, "measured", m);
        else
            ci[i].ok = 0;
    }
    struct json *series = json_obj_set(plan, "series", json_new_arr());
    for (int s = 0; s < nkeys; s++) {
        double safe, bound;
        json_arr_push(series, build_series(ci, nc, s, keys[s], cells, &safe, &bound));
    }
    recommend(plan, series);
    price(plan, series);
    double load = num_at(plan, "load_max"), cores = num_at(plan, "cores");
    if (load == load && cores == cores && load > cores)
        check_warn(plan, "the machine was busy: load average up to %.1f on %.0f cores while the "
                         "cells ran; pauses and holds may have stretched beyond the workload's "
                         "(compare the measured hold and pause maxima with the distributions)",
                   load, cores);
    for (int i = 0; i < nc; i++)
        if (ci[i].ok && num_at(ci[i].m, "renewal") == 1) {
            check_warn(plan, "lease renewal is on: the prediction assumes a lease that is not "
                             "extended, so it overstates the risk");
            break;
        }
    for (int s = 0; s < nkeys; s++)
        free(keys[s]);
    free(keys);
    free(ci);
}
