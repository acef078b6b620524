/*
 * compare.c: `lockstorm compare` (compare.h). compare_build reads each
 * run's result.json and computes one row per run and, per fault kind, the
 * sums over that kind's fault windows (or n/a with a reason, for a kind a
 * compare: variant left out); render_compare_text lays the document out as
 * two tables (overall, then one column group per fault kind). It reads
 * result.json only, never the event logs.
 */
#include "reports/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    *out = doc;
    return 0;
}

/* ---- text ---- */

#define MAX_COLS 64
#define GROUP 5              /* columns per fault kind */

struct table {
    int ncols;
    int width[MAX_COLS];
    int left[MAX_COLS];        /* left-aligned column */
    char ***cells;             /* rows x ncols, owned */
    int nrows;
};

/* Append an empty row (cells NULL). */
static void t_row(struct table *t)
{
    t->cells = xrealloc(t->cells, (size_t)(t->nrows + 1) * sizeof(*t->cells));
    t->cells[t->nrows] = xcalloc((size_t)t->ncols, sizeof(char *));
    t->nrows++;
}

/* Set a cell of the last row (copied) and widen its column. */
static void t_set(struct table *t, int col, const char *text)
{
    char **row = t->cells[t->nrows - 1];
    free(row[col]);
    row[col] = xstrdup(text);
    int l = (int)strlen(text);
    if (l > t->width[col])
        t->width[col] = l;
}

/* A number with decimals places ("-" for null); integers as they are when
 * decimals is 0. */
static void t_num(struct table *t, int col, const struct json *v, int decimals)
{
    char buf[64];
    if (!v || v->type != JSON_NUM)
        snprintf(buf, sizeof(buf), "-");
    else if (v->is_int && decimals == 0)
        snprintf(buf, sizeof(buf), "%lld", (long long)v->i);
    else
        snprintf(buf, sizeof(buf), "%.*f", decimals, v->d);
    t_set(t, col, buf);
}

/* Append the rows to sb (columns two blanks apart, no trailing blanks)
 * and free them; the table can be filled again. */
static void t_render(struct table *t, struct strbuf *sb)
{
    for (int r = 0; r < t->nrows; r++) {
        struct strbuf line = STRBUF_INIT;
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r][c] ? t->cells[r][c] : "";
            int pad = t->width[c] - (int)strlen(s);
            if (c)
                sb_puts(&line, "  ");
            if (t->left[c]) {
                sb_puts(&line, s);
                sb_printf(&line, "%*s", pad, "");
            } else {
                sb_printf(&line, "%*s", pad, "");
                sb_puts(&line, s);
            }
        }
        size_t l = line.len; /* no trailing blanks */
        while (l > 0 && line.buf[l - 1] == ' ')
            l--;
        sb_append(sb, line.buf, l);
        sb_putc(sb, '\n');
        sb_free(&line);
    }
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
    t->cells = NULL;
    t->nrows = 0;
}

void render_compare_text(const struct json *cmp, struct strbuf *sb)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    const struct json *kinds = json_obj_get(cmp, "fault_kinds");
    size_t nr = runs ? runs->n : 0, nk = kinds ? kinds->n : 0;
    const struct json *first = nr ? runs->kids[0] : NULL;
    const struct json *same = json_obj_get(cmp, "same_schedule");
    sb_printf(sb, "lockstorm compare: %zu run%s of workload %s", nr, nr == 1 ? "" : "s",
              first ? json_get_str(first, "workload", "?") : "-");
    const struct json *seed = first ? json_obj_get(first, "seed") : NULL;
    if (seed && seed->type == JSON_NUM)
        sb_printf(sb, ", seed %lld", (long long)seed->i);
    sb_puts(sb, same && same->type == JSON_BOOL && same->i
                    ? " (same seed, workers and fault schedule in every run)\n"
                    : "\nwarning: the runs differ in seed, duration, workers or fault schedule; "
                      "the rows are not a like-for-like comparison\n");

    static const char *const head[] = {"run", "lock", "nodes", "checkers", "grants/s", "acq p99 ms",
                                       "stale", "broken", "plain lost", "fenced lost",
                                       "fence regr", "unknown"};
    struct table t;
    memset(&t, 0, sizeof(t));
    t.ncols = (int)(sizeof(head) / sizeof(head[0]));
    t.left[0] = t.left[1] = t.left[3] = 1;
    t_row(&t);
    for (int c = 0; c < t.ncols; c++)
        t_set(&t, c, head[c]);
    for (size_t i = 0; i < nr; i++) {
        const struct json *r = runs->kids[i];
        t_row(&t);
        t_set(&t, 0, json_get_str(r, "label", "?"));
        t_set(&t, 1, json_get_str(r, "lock", "?"));
        t_num(&t, 2, json_obj_get(r, "nodes"), 0);
        const struct json *intr = json_obj_get(r, "interrupted");
        char v[48];
        snprintf(v, sizeof(v), "%s%s", json_get_str(r, "findings", "?"),
                 intr && intr->type == JSON_BOOL && intr->i ? " (interrupted)" : "");
        t_set(&t, 3, v);
        t_num(&t, 4, json_obj_get(r, "grants_per_s"), 1);
        t_num(&t, 5, json_obj_get(r, "acquire_p99_ms"), 2);
        t_num(&t, 6, json_obj_get(r, "stale_holder"), 0);
        t_num(&t, 7, json_obj_get(r, "lock_broken"), 0);
        t_num(&t, 8, json_obj_get(r, "plain_lost_updates"), 0);
        t_num(&t, 9, json_obj_get(r, "fenced_lost_updates"), 0);
        t_num(&t, 10, json_obj_get(r, "fence_regressions"), 0);
        t_num(&t, 11, json_obj_get(r, "unknown"), 0);
    }
    t_render(&t, sb);
    for (size_t i = 0; i < nr; i++) /* why a run could not be judged */
        if (strcmp(json_get_str(runs->kids[i], "findings", ""), "unknown") == 0)
            sb_printf(sb, "unknown: %s: %s\n", json_get_str(runs->kids[i], "label", "?"),
                      json_get_str(runs->kids[i], "findings_reason", "?"));
    if (nk == 0) {
        sb_puts(sb, "\nno fault windows: no per-fault columns\n");
        return;
    }

    /* per fault kind: grants/s, acquire p99 (max over windows), stale/broken, unknown */
    sb_puts(sb, "\nper fault kind (inside its windows: grants/s, acquire p99 ms (max over "
                "windows), violations stale/broken; after: stale/broken begun once it ended, no "
                "fault active; unknown outcomes):\n");
    memset(&t, 0, sizeof(t));
    t.ncols = 1 + GROUP * (int)(nk > 12 ? 12 : nk);
    t.left[0] = 1;
    int groups = (t.ncols - 1) / GROUP;
    t_row(&t);
    t_row(&t);
    t_set(&t, 0, "run");
    for (int g = 0; g < groups; g++) {
        int c = 1 + GROUP * g;
        t.left[c] = 0;
        /* the kind's name heads its group, left-aligned over grants/s */
        t.cells[0][c] = xstrdup(kinds->kids[g]->s);
        static const char *const sub[GROUP] = {"grants/s", "p99", "st/br", "after", "unkn"};
        for (int s = 0; s < GROUP; s++) {
            char **row = t.cells[1];
            row[c + s] = xstrdup(sub[s]);
        }
    }
    for (size_t i = 0; i < nr; i++) {
        const struct json *r = runs->kids[i];
        const struct json *bf = json_obj_get(r, "by_fault");
        t_row(&t);
        t_set(&t, 0, json_get_str(r, "label", "?"));
        for (int g = 0; g < groups; g++) {
            int c = 1 + GROUP * g;
            const struct json *k = json_obj_get(bf, kinds->kids[g]->s);
            const char *na = k ? json_get_str(k, "not_applicable", NULL) : NULL;
            if (!k || na) {
                for (int s = 0; s < GROUP; s++)
                    t_set(&t, c + s, na ? "n/a" : "-");
                continue;
            }
            t_num(&t, c, json_obj_get(k, "grants_per_s"), 1);
            t_num(&t, c + 1, json_obj_get(k, "acquire_p99_ms_max"), 1);
            char sb2[48];
            snprintf(sb2, sizeof(sb2), "%lld/%lld", (long long)json_get_int(k, "stale_holder", 0),
                     (long long)json_get_int(k, "lock_broken", 0));
            t_set(&t, c + 2, sb2);
            snprintf(sb2, sizeof(sb2), "%lld/%lld",
                     (long long)json_get_int(k, "after_stale_holder", 0),
                     (long long)json_get_int(k, "after_lock_broken", 0));
            t_set(&t, c + 3, sb2);
            t_num(&t, c + 4, json_obj_get(k, "unknown"), 0);
        }
    }
    /* widths: the header cells set directly above must count too */
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < t.ncols; c++)
            if (t.cells[r][c]) {
                int l = (int)strlen(t.cells[r][c]);
                /* a kind name may spill over its group's first column */
                if (r == 0 && c > 0)
                    continue;
                if (l > t.width[c])
                    t.width[c] = l;
            }
    /* the kind names are printed over the group, not a column */
    struct strbuf top = STRBUF_INIT;
    sb_printf(&top, "%-*s", t.width[0], "");
    for (int g = 0; g < groups; g++) {
        int c = 1 + GROUP * g, w = 0;
        for (int s = 0; s < GROUP; s++)
            w += t.width[c + s] + 2;
        const char *name = t.cells[0][c];
        sb_printf(&top, "  | %-*s", w - 4 > 0 ? w - 4 : 0, name);
    }
    size_t l = top.len;
    while (l > 0 && top.buf[l - 1] == ' ')
        l--;
    sb_append(sb, top.buf, l);
    sb_putc(sb, '\n');
    sb_free(&top);
    for (int c = 0; c < t.ncols; c++) {
        free(t.cells[0][c]);
        t.cells[0][c] = NULL;
    }
    free(t.cells[0]);
    memmove(&t.cells[0], &t.cells[1], (size_t)(t.nrows - 1) * sizeof(t.cells[0]));
    t.nrows--;
    t_render(&t, sb);
    if (nk > 12)
        sb_printf(sb, "(%zu more fault kinds in compare.json)\n", nk - 12);
    /* why a group is n/a (a compare: variant's skip) */
    for (size_t i = 0; i < nr; i++) {
        const struct json *bf = json_obj_get(runs->kids[i], "by_fault");
        for (size_t k = 0; bf && k < bf->n; k++) {
            const char *na = json_get_str(bf->kids[k], "not_applicable", NULL);
            if (na)
                sb_printf(sb, "n/a: %s, %s: %s\n", json_get_str(runs->kids[i], "label", "?"),
                          bf->keys[k], na);
        }
    }
}

int compare_exit_code(const struct json *cmp)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    for (size_t i = 0; runs && runs->type == JSON_ARR && i < runs->n; i++)
        if (strcmp(json_get_str(runs->kids[i], "findings", "unknown"), "unknown") == 0)
            return 4;
    return 0;
}
