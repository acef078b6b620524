/*
 * compare_model.c: `lockstorm compare` (compare_model.h). compare_build
 * reads each run's result.json and computes one row per run and, per fault
 * kind, the sums over that kind's fault windows (or n/a with a reason, for
 * a kind a compare: variant left out); compare_exit_code reads the built
 * document. It reads result.json only, never the event logs. The text
 * tables are reports/compare.c's.
 */
#include "harness/compare_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/stress.h"
#include "util/xalloc.h"
#define MAX_KINDS 32

/* ---- reading ---- */

/* Contract: the parsed result.json of dir (a run directory or the file
 * itself); caller frees. Returns 0 or LS_EINPUT with err set. */
static int load_result(const char *dir, struct json **out, struct ls_err *err)
{
    char path[4096];
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))
        snprintf(path, sizeof(path), "%s", dir);
    else
        snprintf(path, sizeof(path), "%s/result.json", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return ls_err_errno(err, LS_EINPUT, errno, "compare: %s", path);
    struct strbuf sb = STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        sb_append(&sb, buf, n);
    fclose(f);
    char why[128];
    int rc = json_parse(sb.buf ? sb.buf : "", sb.len, out, why, sizeof(why));
    sb_free(&sb);
    if (rc < 0)
        return ls_err_set(err, LS_EINPUT, "compare: %s: not JSON (%s)", path, why);
    if (strcmp(json_get_str(*out, "format", ""), "lockstorm-result") != 0) {
        json_free(*out);
        *out = NULL;
        return ls_err_set(err, LS_EINPUT, "compare: %s: not a lockstorm result.json", path);
    }
    return 0;
}

/* The number at path, or dflt. */
static double num_at(const struct json *root, const char *path, double dflt)
{
    const struct json *v = json_path(root, path);
    return v && v->type == JSON_NUM ? v->d : dflt;
}

/* The base name of dir without trailing slashes (into buf). */
static const char *base_name(const char *dir, char *buf, size_t n)
{
    snprintf(buf, n, "%s", dir);
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/')
        buf[--l] = '\0';
    if (l > 12 && strcmp(buf + l - 12, "/result.json") == 0)
        buf[l -= 12] = '\0';
    const char *s = strrchr(buf, '/');
    return s && s[1] ? s + 1 : buf;
}

/* Per fault kind sums of one run. */
struct kind_sum {
    const char *kind;            /* borrowed from the result */
    int windows;
    double duration_ms, p99_max;
    int64_t attempts, grants, unknown, stale, broken;
    int64_t after_stale, after_broken; /* began after its window, no fault active */
    int have_p99;
};

/* The sums of kind in k[0..*nk), added when new (NULL when k is full). */
static struct kind_sum *kind_slot(struct kind_sum *k, int *nk, const char *kind)
{
    for (int i = 0; i < *nk; i++)
        if (strcmp(k[i].kind, kind) == 0)
            return &k[i];
    if (*nk >= MAX_KINDS)
        return NULL;
    memset(&k[*nk], 0, sizeof(k[*nk]));
    k[*nk].kind = kind;
    return &k[(*nk)++];
}

/* The kind of fault id in result's "faults" array, or NULL. */
static const char *kind_of(const struct json *res, int64_t id)
{
    const struct json *fl = json_obj_get(res, "faults");
    for (size_t i = 0; fl && i < fl->n; i++)
        if (json_get_int(fl->kids[i], "id", -1) == id)
            return json_get_str(fl->kids[i], "kind", NULL);
    return NULL;
}

/* The kind of the fault window (wins) that ended last at or before t_ms,
 * or NULL (none ended by then, or t_ms unknown). */
static const char *after_kind(const struct json *wins, double t_ms)
{
    const char *kind = NULL;
    double best = -1;
    for (size_t i = 0; wins && t_ms >= 0 && i < wins->n; i++) {
        double end = json_get_num(wins->kids[i], "end_ms", -1);
        if (end >= 0 && end <= t_ms && end > best) {
            best = end;
            kind = json_get_str(wins->kids[i], "kind", NULL);
        }
    }
    return kind;
}

/* Contract: the per-kind column groups of run res, appended to o as
 * "by_fault": {kind: {...}}; the kinds seen are added to kinds. */
static void by_fault(const struct json *res, struct json *o, const char **kinds, int *nkinds)
{
    struct kind_sum k[MAX_KINDS];
    int nk = 0;
    const struct json *wins = json_obj_get(res, "fault_windows");
    for (size_t i = 0; wins && i < wins->n; i++) {
        const struct json *w = wins->kids[i];
        struct kind_sum *s = kind_slot(k, &nk, json_get_str(w, "kind", "?"));
        if (!s)
            continue;
        s->windows++;
        s->duration_ms += json_get_num(w, "duration_ms", 0);
        s->attempts += json_get_int(w, "attempts", 0);
        s->grants += json_get_int(w, "grants", 0);
        s->unknown += json_get_int(w, "unknown", 0);
        const struct json *p = json_obj_get(w, "acquire_p99_ms");
        if (p && p->type == JSON_NUM && (!s->have_p99 || p->d > s->p99_max)) {
            s->p99_max = p->d;
            s->have_p99 = 1;
        }
    }
    /* a violation counts for every kind of fault active during it (once per
     * kind); one with none active is the aftermath of the window that ended
     * last before it began */
    const struct json *vs = json_obj_get(res, "violations");
    for (size_t i = 0; vs && i < vs->n; i++) {
        const struct json *fl = json_obj_get(vs->kids[i], "faults");
        int broken = strcmp(json_get_str(vs->kids[i], "class", ""), "lock-broken") == 0;
        if (!fl || fl->n == 0) {
            const char *kind = after_kind(wins, json_get_num(vs->kids[i], "overlap_start_ms", -1));
            struct kind_sum *s = kind ? kind_slot(k, &nk, kind) : NULL;
            if (s)
                *(broken ? &s->after_broken : &s->after_stale) += 1;
            continue;
        }
        const char *seen[MAX_KINDS];
        int nseen = 0;
        for (size_t j = 0; fl && j < fl->n; j++) {
            const char *kind = fl->kids[j]->type == JSON_NUM ? kind_of(res, fl->kids[j]->i) : NULL;
            int dup = !kind;
            for (int s = 0; s < nseen && !dup; s++)
                dup = strcmp(seen[s], kind) == 0;
            if (dup || nseen >= MAX_KINDS)
                continue;
            seen[nseen++] = kind;
            struct kind_sum *s = kind_slot(k, &nk, kind);
            if (s)
                *(broken ? &s->broken : &s->stale) += 1;
        }
    }
    struct json *bf = json_obj_set(o, "by_fault", json_new_obj());
    for (int i = 0; i < nk; i++) {
        struct json *e = json_obj_set(bf, k[i].kind, json_new_obj());
        json_obj_set_int(e, "windows", k[i].windows);
        json_obj_set_num(e, "duration_ms", k[i].duration_ms);
        json_obj_set_int(e, "attempts", k[i].attempts);
        json_obj_set_int(e, "grants", k[i].grants);
        json_obj_set(e, "grants_per_s", k[i].duration_ms > 0
                                            ? json_new_num((double)k[i].grants * 1000.0 /
                                                           k[i].duration_ms)
                                            : json_new_null());
        json_obj_set(e, "acquire_p99_ms_max",
                     k[i].have_p99 ? json_new_num(k[i].p99_max) : json_new_null());
        json_obj_set_int(e, "unknown", k[i].unknown);
        json_obj_set_int(e, "stale_holder", k[i].stale);
        json_obj_set_int(e, "lock_broken", k[i].broken);
        json_obj_set_int(e, "after_stale_holder", k[i].after_stale);
        json_obj_set_int(e, "after_lock_broken", k[i].after_broken);
        int known = 0;
        for (int j = 0; j < *nkinds && !known; j++)
            known = strcmp(kinds[j], k[i].kind) == 0;
        if (!known && *nkinds < MAX_KINDS)
            kinds[(*nkinds)++] = json_obj_get(o, "by_fault")->keys[i];
    }
}

/* Contract: sets o's "findings" from run res: "violations" when its
 * checkers found some (verdict_checks invalid), "clean" when they found
 * none and the run's verdict is known, else "unknown" with
 * "findings_reason" (the verdict's reasons joined, the interruption, or the
 * undecided checker). A result.json without verdict_checks (hand-made)
 * falls back on its verdict. A comparison words what the checkers found,
 * not pass/fail: whether violations were wanted is each workload's
 * expect: block's business. */
static void set_findings(const struct json *res, struct json *o)
{
    const char *v = json_get_str(res, "verdict", "unknown");
    const char *vc = json_get_str(res, "verdict_checks", NULL);
    if (!vc)
        vc = strcmp(v, "fail") == 0 ? "invalid" : strcmp(v, "pass") == 0 ? "valid" : "unknown";
    if (strcmp(vc, "invalid") == 0) {
        json_obj_set_str(o, "findings", "violations");
        json_obj_set(o, "findings_reason", json_new_null());
        return;
    }
    if (strcmp(vc, "valid") == 0 && strcmp(v, "unknown") != 0) {
        json_obj_set_str(o, "findings", "clean");
        json_obj_set(o, "findings_reason", json_new_null());
        return;
    }
    struct strbuf why = STRBUF_INIT;
    const struct json *reasons = json_obj_get(res, "verdict_reasons");
    for (size_t i = 0; reasons && reasons->type == JSON_ARR && i < reasons->n; i++)
        if (reasons->kids[i]->type == JSON_STR)
            sb_printf(&why, "%s%s", why.len ? "; " : "", reasons->kids[i]->s);
    const struct json *intr = json_obj_get(res, "interrupted");
    if (!why.len && intr && intr->type == JSON_BOOL && intr->i)
        sb_puts(&why, "the run was interrupted before its planned end");
    const struct json *checks = json_obj_get(res, "checks");
    for (size_t i = 0; !why.len && checks && checks->type == JSON_OBJ && i < checks->n; i++) {
        const char *cv = json_get_str(checks->kids[i], "verdict", "valid");
        if (strcmp(cv, "valid") != 0 && strcmp(cv, "invalid") != 0)
            sb_printf(&why, "%s: %s", checks->keys[i],
                      json_get_str(checks->kids[i], "reason",
                                   json_get_str(checks->kids[i], "note", "could not decide")));
    }
    if (!why.len)
        sb_puts(&why, "the checkers could not decide");
    json_obj_set_str(o, "findings", "unknown");
    json_obj_set_str(o, "findings_reason", sb_cstr(&why));
    sb_free(&why);
}

/* Contract: the row of run res (label borrowed) as a new object. */
static struct json *run_row(const struct json *res, const char *label, const char *dir)
{
    struct json *o = json_new_obj();
    json_obj_set_str(o, "label", label);
    json_obj_set_str(o, "dir", dir);
    const struct json *w = json_obj_get(res, "workload");
    json_obj_set_str(o, "workload", json_get_str(w, "name", "?"));
    json_obj_set_str(o, "lock", json_get_str(json_obj_get(w, "lock"), "impl", "?"));
    const struct json *cl = json_obj_get(w, "cluster");
    json_obj_set_str(o, "topology", json_get_str(cl, "topology", "?"));
    json_obj_set_int(o, "nodes", json_get_int(cl, "nodes", 0));
    const struct json *seed = json_obj_get(res, "seed");
    json_obj_set(o, "seed", seed ? json_clone(seed) : json_new_null());
    json_obj_set_str(o, "verdict", json_get_str(res, "verdict", "?"));
    set_findings(res, o);
    const struct json *intr = json_obj_get(res, "interrupted");
    json_obj_set_bool(o, "interrupted", intr && intr->type == JSON_BOOL && intr->i);
    json_obj_set_num(o, "duration_s", json_get_num(res, "duration_s", 0));
    json_obj_set_num(o, "grants_per_s", num_at(res, "throughput.grants_per_s", 0));
    const struct json *p99 = json_path(res, "latency.acquire.p99_ms");
    json_obj_set(o, "acquire_p99_ms", p99 && p99->type == JSON_NUM ? json_new_num(p99->d)
                                                                   : json_new_null());
    json_obj_set_int(o, "grants", (int64_t)num_at(res, "counts.grants", 0));
    json_obj_set_int(o, "attempts", (int64_t)num_at(res, "counts.attempts", 0));
    json_obj_set_int(o, "violations", (int64_t)num_at(res, "checks.mutex.violations", 0));
    json_obj_set_int(o, "stale_holder", (int64_t)num_at(res, "checks.mutex.by_class.stale_holder", 0));
    json_obj_set_int(o, "lock_broken", (int64_t)num_at(res, "checks.mutex.by_class.lock_broken", 0));
    const struct json *off = json_path(res, "checks.fencing.offered");
    int offered = off && off->type == JSON_BOOL && off->i;
    json_obj_set_bool(o, "fencing_offered", offered);
    json_obj_set_int(o, "plain_lost_updates",
                     (int64_t)num_at(res, "checks.fencing.plain_lost_updates", 0));
    json_obj_set(o, "fenced_lost_updates",
                 offered ? json_new_int((int64_t)num_at(res, "checks.fencing.fenced_lost_updates", 0))
                         : json_new_null());
    json_obj_set(o, "fence_regressions",
                 offered ? json_new_int((int64_t)num_at(res, "checks.fencing.fence_regressions", 0))
                         : json_new_null());
    json_obj_set_int(o, "unknown", (int64_t)num_at(res, "counts.unknown", 0));
    /* the other checkers' counts above 0 (the count classes of
     * harness/stress_class.c but mutex's by_class, which by_fault
     * attributes): not attributable to a fault window */
    struct json *cls = stress_classes_of(res);
    struct json *other = json_obj_set(o, "other_findings", json_new_obj());
    for (size_t i = 0; i < cls->n; i++)
        if (stress_class_path(cls->keys[i]) && strcmp(cls->keys[i], "stale_holder") != 0 &&
            strcmp(cls->keys[i], "lock_broken") != 0)
            json_obj_set_int(other, cls->keys[i], cls->kids[i]->i);
    json_free(cls);
    return o;
}

/* Is kind one of the n/a kinds of na[0..nna)? */
static int na_kind(const struct compare_na *na, int nna, const char *kind)
{
    for (int i = 0; i < nna; i++)
        if (na[i].kind && kind && strcmp(na[i].kind, kind) == 0)
            return 1;
    return 0;
}

/* The parts of a run that must be equal for a fair comparison, as one
 * string (caller frees); faults of an n/a kind (na) are left out, since
 * some variants do not run them by design. */
static char *schedule_key(const struct json *res, const struct compare_na *na, int nna)
{
    struct strbuf sb = STRBUF_INIT;
    const struct json *w = json_obj_get(res, "workload");
    const struct json *faults = json_obj_get(w, "faults");
    struct json *kept = json_new_arr();
    for (size_t i = 0; faults && faults->type == JSON_ARR && i < faults->n; i++)
        if (!na_kind(na, nna, json_get_str(faults->kids[i], "kind", NULL)))
            json_arr_push(kept, json_clone(faults->kids[i]));
    const struct json *parts[] = {json_obj_get(res, "seed"), json_obj_get(w, "duration"), kept,
                                  json_obj_get(w, "nemesis"), json_obj_get(w, "workers")};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        if (parts[i])
            json_write(&sb, parts[i], -1);
        sb_putc(&sb, '|');
    }
    json_free(kept);
    return sb_steal(&sb);
}

/* Contract: mark row's by_fault.{kind} not applicable (reason) and make
 * sure kind has a column group (kinds[] borrows the row's key). */
static void mark_na(struct json *row, const char *kind, const char *reason, const char **kinds,
                    int *nkinds)
{
    struct json *bf = json_obj_get(row, "by_fault");
    if (!bf)
        bf = json_obj_set(row, "by_fault", json_new_obj());
    struct json *e = json_obj_set(bf, kind, json_new_obj());
    json_obj_set_str(e, "not_applicable", reason ? reason : "");
    for (int j = 0; j < *nkinds; j++)
        if (strcmp(kinds[j], kind) == 0)
            return;
    if (*nkinds < MAX_KINDS) {
        for (size_t k = 0; k < bf->n; k++)
            if (strcmp(bf->keys[k], kind) == 0)
                kinds[(*nkinds)++] = bf->keys[k];
    }
}

/* ---- conclusions ---- */

/* The sum of row r's other_findings (counts no fault window is charged with). */
static int64_t other_total(const struct json *r)
{
    const struct json *o = json_obj_get(r, "other_findings");
    int64_t n = 0;
    for (size_t i = 0; o && o->type == JSON_OBJ && i < o->n; i++)
        if (o->kids[i]->type == JSON_NUM)
            n += o->kids[i]->i;
    return n;
}

/* Contract: what row r shows under fault kind (or, kind NULL, over the
 * whole run), into phr: "unknown", "n/a", "not injected", "clean", or the
 * counts ("lock-broken 2, stale-holder 1 (1 after the window)"). Only
 * counts the document holds; a run whose checkers could not decide is
 * "unknown" whatever its counts. Under a kind only the mutex classes are
 * attributed: other checkers' findings make it "no mutex violations" (or
 * the mutex counts) followed by "other checkers: N findings (see the
 * run)", never "clean"; the whole run names every count. */
static void row_phrase(const struct json *r, const char *kind, struct strbuf *phr)
{
    if (strcmp(json_get_str(r, "findings", "unknown"), "unknown") == 0) {
        sb_puts(phr, "unknown");
        return;
    }
    int64_t st, br, after = 0;
    if (kind) {
        const struct json *k = json_obj_get(json_obj_get(r, "by_fault"), kind);
        if (k && json_get_str(k, "not_applicable", NULL)) {
            sb_puts(phr, "n/a");
            return;
        }
        if (!k || json_get_int(k, "windows", 0) == 0) {
            sb_puts(phr, "not injected");
            return;
        }
        int64_t ast = json_get_int(k, "after_stale_holder", 0);
        int64_t abr = json_get_int(k, "after_lock_broken", 0);
        st = json_get_int(k, "stale_holder", 0) + ast;
        br = json_get_int(k, "lock_broken", 0) + abr;
        after = ast + abr;
    } else {
        st = json_get_int(r, "stale_holder", 0);
        br = json_get_int(r, "lock_broken", 0);
    }
    if (br > 0)
        sb_printf(phr, "lock-broken %lld", (long long)br);
    if (st > 0)
        sb_printf(phr, "%sstale-holder %lld", phr->len ? ", " : "", (long long)st);
    if (after > 0)
        sb_printf(phr, " (%lld after the window)", (long long)after);
    int violations = strcmp(json_get_str(r, "findings", ""), "violations") == 0;
    if (kind) {
        int64_t other = other_total(r);
        /* the checkers found violations that no count of the row shows */
        int unexplained = !other && violations && json_get_int(r, "stale_holder", 0) == 0 &&
                          json_get_int(r, "lock_broken", 0) == 0;
        if ((other || unexplained) && !phr->len)
            sb_puts(phr, "no mutex violations");
        if (other)
            sb_printf(phr, ", other checkers: %lld finding%s (see the run)", (long long)other,
                      other == 1 ? "" : "s");
        else if (unexplained)
            sb_puts(phr, ", another checker found violations (see the run)");
    } else {
        const struct json *o = json_obj_get(r, "other_findings");
        for (size_t i = 0; o && o->type == JSON_OBJ && i < o->n; i++) {
            if (o->kids[i]->type != JSON_NUM || o->kids[i]->i <= 0)
                continue;
            sb_puts(phr, phr->len ? ", " : "");
            for (const char *c = o->keys[i]; *c; c++)
                sb_putc(phr, *c == '_' ? ' ' : *c);
            sb_printf(phr, " %lld", (long long)o->kids[i]->i);
        }
        if (!phr->len && violations)
            sb_puts(phr, "violations of another checker (see its result.json)");
    }
    if (!phr->len)
        sb_puts(phr, "clean");
}

/* Contract: one conclusion line: "PREFIX: a, b clean; c lock-broken 2"
 * (runs with the same phrase share it, in the order they first appear). */
static char *conclusion_line(const struct json *runs, const char *kind, const char *prefix)
{
    size_t n = runs ? runs->n : 0;
    char **phr = xcalloc(n ? n : 1, sizeof(*phr));
    for (size_t i = 0; i < n; i++) {
        struct strbuf p = STRBUF_INIT;
        row_phrase(runs->kids[i], kind, &p);
        phr[i] = sb_steal(&p);
    }
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "%s:", prefix);
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(phr[i], phr[j]) == 0;
        if (seen)
            continue;
        sb_puts(&sb, i ? "; " : " ");
        for (size_t j = i, first = 1; j < n; j++)
            if (strcmp(phr[i], phr[j]) == 0) {
                sb_printf(&sb, "%s%s", first ? "" : ", ",
                          json_get_str(runs->kids[j], "label", "?"));
                first = 0;
            }
        sb_printf(&sb, " %s", phr[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(phr[i]);
    free(phr);
    return sb_steal(&sb);
}

/* Contract: doc's "conclusions": one {"fault": kind, "text"} per fault
 * kind, then {"fault": null, "text": "whole run: ..."}; words made from the
 * counts of doc's rows only (docs/compare.md "Conclusion"). */
static void add_conclusions(struct json *doc)
{
    const struct json *runs = json_obj_get(doc, "runs");
    const struct json *kinds = json_obj_get(doc, "fault_kinds");
    struct json *out = json_new_arr();
    for (size_t i = 0; kinds && i < kinds->n; i++) {
        char prefix[160];
        snprintf(prefix, sizeof(prefix), "under %s", kinds->kids[i]->s);
        char *text = conclusion_line(runs, kinds->kids[i]->s, prefix);
        struct json *c = json_arr_push(out, json_new_obj());
        json_obj_set_str(c, "fault", kinds->kids[i]->s);
        json_obj_set_str(c, "text", text);
        free(text);
    }
    char *text = conclusion_line(runs, NULL, "whole run");
    struct json *c = json_arr_push(out, json_new_obj());
    json_obj_set(c, "fault", json_new_null());
    json_obj_set_str(c, "text", text);
    free(text);
    json_obj_set(doc, "conclusions", out);
}

int compare_build(const char *const *dirs, int n, const char *const *labels, struct json **out,
                  struct ls_err *err)
{
    return compare_build_na(dirs, n, labels, NULL, 0, out, err);
}

int compare_build_na(const char *const *dirs, int n, const char *const *labels,
                     const struct compare_na *na, int nna, struct json **out,
                     struct ls_err *err)
{
    *out = NULL;
    if (n < 1)
        return ls_err_set(err, LS_EUSAGE, "compare: no run directories given");
    struct json *doc = json_new_obj();
    json_obj_set_str(doc, "format", COMPARE_FORMAT);
    json_obj_set_int(doc, "version", COMPARE_VERSION);
    json_obj_set_str(doc, "tool_version", LS_VERSION);
    struct json *runs = json_obj_set(doc, "runs", json_new_arr());
    const char *kinds[MAX_KINDS];
    int nkinds = 0;
    char *first_key = NULL;
    int same = 1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        struct json *res = NULL;
        rc = load_result(dirs[i], &res, err);
        if (rc < 0)
            break;
        char b[4096];
        const char *label = labels && labels[i] ? labels[i] : base_name(dirs[i], b, sizeof(b));
        struct json *row = json_arr_push(runs, run_row(res, label, dirs[i]));
        by_fault(res, row, kinds, &nkinds);
        for (int k = 0; k < nna; k++)
            if (na[k].row == i && na[k].kind)
                mark_na(row, na[k].kind, na[k].reason, kinds, &nkinds);
        char *key = schedule_key(res, na, nna);
        if (!first_key)
            first_key = key;
        else {
            same &= strcmp(first_key, key) == 0;
            free(key);
        }
        json_free(res);
    }
    free(first_key);
    if (rc < 0) {
        json_free(doc);
        return rc;
    }
    /* kinds in order of first appearance; copied before doc changes further */
    struct json *ka = json_new_arr();
    for (int i = 0; i < nkinds; i++)
        json_arr_push(ka, json_new_str(kinds[i]));
    json_obj_set(doc, "fault_kinds", ka);
    json_obj_set_bool(doc, "same_schedule", same);
    add_conclusions(doc);
    *out = doc;
    return 0;
}

/* ---- text ---- */

int compare_exit_code(const struct json *cmp)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    for (size_t i = 0; runs && runs->type == JSON_ARR && i < runs->n; i++)
        if (strcmp(json_get_str(runs->kids[i], "findings", "unknown"), "unknown") == 0)
            return 4;
    return 0;
}
