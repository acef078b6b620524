/*
 * text.c: the human summary of a result model (summary.txt, the default
 * stdout of `run` and `check`), its last two lines (how the verdict follows
 * from the expectations and the checkers, then the one greppable verdict
 * line) and fault names for people (shared with html.c). Problems are
 * flagged the locktorture way: "!!!" on a checker that found violations or
 * an interrupted run, "???" on an unknown checker, missing evidence or a
 * sign of starvation; these are findings, and the "verdict" line says how
 * they bear on the verdict. It only formats what the model holds; every
 * number it prints comes from result.json (docs/result-format.md).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/checkschema.h"
#include "reports/reports.h"
#include "reports/result.h"
#include "reports/rmodel.h"

#define TEXT_MAX_VIOLATIONS 5   /* violations listed one line each */
#define TEXT_MAX_WARNINGS 10
#define TEXT_MAX_INCIDENTS 8    /* incidents listed one line each */
#define TEXT_MAX_GAPS 10        /* evidence gaps listed one line each */
#define TEXT_MAX_UNMET 3        /* unmet expectations named in the verdict's reason */
#define TEXT_MAX_KINDS 32       /* distinct fault kinds counted */
#define TEXT_MAX_WINDOWS 12     /* fault windows listed one line each */
#define FAIRNESS_FLAG_RATIO 10.0
#define STALL_FLAG_SHARE 0.25   /* a stall longer than this share of the run */

/* ---- small formatting helpers ---------------------------------------------- */

static const struct json *num_at(const struct json *root, const char *path)
{
    const struct json *v = json_path(root, path);
    return v && (v->type == JSON_NUM || v->type == JSON_BOOL) ? v : NULL;
}

static const char *str_at(const struct json *root, const char *path, const char *dflt)
{
    const struct json *v = json_path(root, path);
    return v && v->type == JSON_STR ? v->s : dflt;
}

/* A double with at most 3 decimals, trailing zeros dropped: 212.4, 0.213, 12. */
static void put_double(struct strbuf *sb, double d)
{
    char buf[64];
    if (fabs(d) >= 1e15) {
        snprintf(buf, sizeof(buf), "%.6g", d);
    } else {
        snprintf(buf, sizeof(buf), "%.3f", d);
        char *dot = strchr(buf, '.');
        if (dot) {
            char *e = buf + strlen(buf) - 1;
            while (e > dot && *e == '0')
                *e-- = '\0';
            if (e == dot)
                *e = '\0';
        }
        if (strcmp(buf, "-0") == 0)
            snprintf(buf, sizeof(buf), "0");
    }
    sb_puts(sb, buf);
}

/* A JSON value as a short token: integers exact, doubles trimmed, bools
 * true/false, strings as is, anything else (missing, null) as "-". */
static void put_val(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type == JSON_NULL) {
        sb_putc(sb, '-');
    } else if (v->type == JSON_BOOL) {
        sb_puts(sb, v->i ? "true" : "false");
    } else if (v->type == JSON_NUM) {
        if (v->is_int)
            sb_printf(sb, "%lld", (long long)v->i);
        else
            put_double(sb, v->d);
    } else if (v->type == JSON_STR) {
        sb_puts(sb, v->s);
    } else {
        sb_putc(sb, '-');
    }
}

static void put_path(struct strbuf *sb, const struct json *root, const char *path)
{
    put_val(sb, json_path(root, path));
}

/* workers.resources for people: "2", or "2 (invoice-42, invoice-43)" when
 * the workload names them (the first 8, then "..."). */
static void put_resources(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type != JSON_ARR) {
        put_val(sb, v);
        return;
    }
    sb_printf(sb, "%zu (", v->n);
    for (size_t i = 0; i < v->n && i < 8; i++) {
        sb_puts(sb, i ? ", " : "");
        put_val(sb, v->kids[i]);
    }
    sb_puts(sb, v->n > 8 ? ", ...)" : ")");
}

/* Number with a unit suffix ("212.4ms"), or "-" when absent/null. */
static void put_unit(struct strbuf *sb, const struct json *v, const char *unit)
{
    put_val(sb, v);
    if (v && v->type == JSON_NUM)
        sb_puts(sb, unit);
}

/* A share in [0,1] as a percentage with one decimal, "-" when absent. */
static void put_pct(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type != JSON_NUM) {
        sb_putc(sb, '-');
        return;
    }
    char buf[32];
    snprintf(buf, sizeof(buf), "%.1f%%", v->d * 100.0);
    sb_puts(sb, buf);
}

/* A string echoed inside the verdict line: whitespace becomes '_' so the
 * line stays one space-separated field list; empty or absent is "-". */
static void put_token(struct strbuf *sb, const char *s)
{
    if (!s || !*s) {
        sb_putc(sb, '-');
        return;
    }
    for (; *s; s++)
        sb_putc(sb, (unsigned char)*s <= ' ' ? '_' : *s);
}

static void pad_to(struct strbuf *sb, size_t line_start, size_t col)
{
    while (sb->len - line_start < col)
        sb_putc(sb, ' ');
}

static int is_true(const struct json *v)
{
    return v && (v->type == JSON_BOOL || v->type == JSON_NUM) && v->i != 0;
}

/* ---- shared pieces ------------------------------------------------------- */

struct kind_count {
    const char *kind;
    long n;
};

/* Injected (not skipped) faults counted by kind in order of first
 * appearance; returns the number of distinct kinds, *skipped the skips. */
static size_t count_faults(const struct json *result, struct kind_count *kc, size_t cap,
                           long *skipped, long *injected)
{
    const struct json *faults = json_obj_get(result, "faults");
    size_t nk = 0;
    *skipped = 0;
    *injected = 0;
    for (size_t i = 0; i < rm_len(faults); i++) {
        const struct json *f = faults->kids[i];
        if (is_true(json_obj_get(f, "skipped"))) {
            (*skipped)++;
            continue;
        }
        (*injected)++;
        const char *kind = json_get_str(f, "kind", "?");
        size_t k;
        for (k = 0; k < nk; k++)
            if (strcmp(kc[k].kind, kind) == 0)
                break;
        if (k == nk) {
            if (nk == cap)
                continue; /* more kinds than exist today; the total still counts */
            kc[nk].kind = kind;
            kc[nk].n = 0;
            nk++;
        }
        kc[k].n++;
    }
    return nk;
}

/* Lost-update counts exist only with the storage's final values (a run
 * directory with storage.jsonl); fencing says so with "available". */
static int fencing_available(const struct json *f)
{
    const struct json *a = json_obj_get(f, "available");
    if (a && a->type == JSON_BOOL)
        return a->i != 0;
    return json_obj_get(f, "plain_lost_updates") != NULL;
}

static const char *verdict_word(const struct json *result)
{
    const char *v = json_get_str(result, "verdict", "unknown");
    if (strcmp(v, "pass") == 0)
        return "PASS";
    if (strcmp(v, "fail") == 0)
        return "FAIL";
    return "UNKNOWN";
}

/* ---- the verdict line ---------------------------------------------------- */

/* Contract: appends exactly one line (with its '\n'):
 *   lockstorm: VERDICT workload=NAME lock=IMPL workers=N resources=N
 *   duration=D faults=KIND:N[,KIND:N...]|none seed=N incidents=N
 *   (violations=N stale-holder=N lock-broken=N) plain_lost=N fenced_lost=N
 *   expectations=OK/TOTAL|-
 * every field always present, in this order, "-" for a value the model
 * does not have (docs/result-format.md "Verdict line"). */
void render_verdict_line(const struct json *result, struct strbuf *sb)
{
    const struct json *wl = json_obj_get(result, "workload");
    if (wl && wl->type != JSON_OBJ)
        wl = NULL;

    sb_printf(sb, "lockstorm: %s", verdict_word(result));
    sb_puts(sb, " workload=");
    put_token(sb, wl ? str_at(wl, "name", NULL) : NULL);
    sb_puts(sb, " lock=");
    put_token(sb, wl ? str_at(wl, "lock.impl", NULL) : NULL);

    sb_puts(sb, " workers=");
    if (wl && num_at(wl, "workers.count"))
        put_path(sb, wl, "workers.count");
    else if (json_obj_get(result, "per_worker"))
        sb_printf(sb, "%zu", rm_len(json_obj_get(result, "per_worker")));
    else
        sb_putc(sb, '-');
    sb_puts(sb, " resources="); /* a count, also when the workload names them */
    const struct json *rl = wl ? json_path(wl, "workers.resources") : NULL;
    if (rl && rl->type == JSON_ARR)
        sb_printf(sb, "%zu", rl->n);
    else
        put_val(sb, wl ? num_at(wl, "workers.resources") : NULL);

    /* The planned duration as the workload spells it; without a workload
     * (JSONL history) the span the history covers. */
    sb_puts(sb, " duration=");
    const char *dur = wl ? str_at(wl, "duration", NULL) : NULL;
    if (dur) {
        put_token(sb, dur);
    } else {
        put_unit(sb, num_at(result, "duration_s"), "s");
    }

    struct kind_count kc[TEXT_MAX_KINDS];
    long skipped, injected;
    size_t nk = count_faults(result, kc, TEXT_MAX_KINDS, &skipped, &injected);
    sb_puts(sb, " faults=");
    if (nk == 0)
        sb_puts(sb, "none");
    for (size_t k = 0; k < nk; k++) {
        if (k)
            sb_putc(sb, ',');
        put_token(sb, kc[k].kind);
        sb_printf(sb, ":%ld", kc[k].n);
    }

    sb_puts(sb, " seed=");
    put_val(sb, num_at(result, "seed"));
    sb_puts(sb, " incidents=");
    put_val(sb, num_at(result, "checks.mutex.incidents"));
    sb_puts(sb, " (violations=");
    put_val(sb, num_at(result, "checks.mutex.violations"));
    sb_puts(sb, " stale-holder=");
    put_val(sb, num_at(result, "checks.mutex.by_class.stale_holder"));
    sb_puts(sb, " lock-broken=");
    put_val(sb, num_at(result, "checks.mutex.by_class.lock_broken"));
    const struct json *fencing = json_path(result, "checks.fencing");
    int avail = fencing && fencing_available(fencing);
    sb_puts(sb, ") plain_lost=");
    put_val(sb, avail ? num_at(fencing, "plain_lost_updates") : NULL);
    sb_puts(sb, " fenced_lost=");
    const struct json *offered = avail ? json_obj_get(fencing, "offered") : NULL;
    if (!avail || (offered && offered->type == JSON_BOOL && !offered->i))
        sb_putc(sb, '-');
    else
        put_val(sb, num_at(fencing, "fenced_lost_updates"));

    sb_puts(sb, " expectations=");
    const struct json *ex = json_obj_get(result, "expectations");
    size_t nex = rm_len(ex), nok = 0;
    for (size_t i = 0; i < nex; i++)
        if (is_true(json_obj_get(ex->kids[i], "ok")))
            nok++;
    if (nex)
        sb_printf(sb, "%zu/%zu", nok, nex);
    else
        sb_putc(sb, '-');
    sb_putc(sb, '\n');
}

/* ---- the summary --------------------------------------------------------- */

static void render_header(const struct json *r, struct strbuf *sb)
{
    const struct json *wl = json_obj_get(r, "workload");
    if (wl && wl->type != JSON_OBJ)
        wl = NULL;
    sb_puts(sb, "lockstorm ");
    sb_puts(sb, json_get_str(r, "tool_version", "?"));
    if (wl) {
        sb_puts(sb, ": workload ");
        put_token(sb, str_at(wl, "name", NULL));
        sb_puts(sb, ", lock ");
        put_token(sb, str_at(wl, "lock.impl", NULL));
        sb_puts(sb, ", workers ");
        put_path(sb, wl, "workers.count");
        sb_puts(sb, ", resources ");
        put_resources(sb, json_path(wl, "workers.resources"));
        sb_puts(sb, ", duration ");
        put_path(sb, wl, "duration");
        sb_puts(sb, ", seed ");
        put_val(sb, num_at(r, "seed"));
    } else {
        sb_puts(sb, ": history without a workload");
    }
    sb_putc(sb, '\n');

    sb_puts(sb, "  source ");
    sb_puts(sb, json_get_str(r, "source", "-"));
    const char *st = json_get_str(r, "started_at", NULL);
    const char *en = json_get_str(r, "ended_at", NULL);
    if (st)
        sb_printf(sb, ", started %s", st);
    if (en)
        sb_printf(sb, ", ended %s", en);
    sb_puts(sb, ", ran ");
    put_unit(sb, num_at(r, "duration_s"), "s");
    sb_putc(sb, '\n');
    if (is_true(json_obj_get(r, "interrupted")))
        sb_puts(sb, "  !!! interrupted: the run did not end normally; it cannot pass\n");
}

static void put_kv(struct strbuf *sb, const struct json *obj, const char *key, const char *label)
{
    sb_printf(sb, " %s=", label ? label : key);
    put_val(sb, json_obj_get(obj, key));
}

static void render_counts(const struct json *r, struct strbuf *sb)
{
    const struct json *c = json_obj_get(r, "counts");
    if (c && c->type == JSON_OBJ) {
        static const char *const line1[] = {"attempts", "grants", "busy", "failed", "unknown",
                                            "lost", "crashes", "expired_grants"};
        static const char *const line2[] = {"releases", "release_not_owner", "release_failed",
                                            "renewals", "renew_failed", "store_ops", "events"};
        sb_puts(sb, "counts     ");
        for (size_t i = 0; i < sizeof(line1) / sizeof(line1[0]); i++)
            put_kv(sb, c, line1[i], NULL);
        sb_puts(sb, "\n           ");
        for (size_t i = 0; i < sizeof(line2) / sizeof(line2[0]); i++)
            put_kv(sb, c, line2[i], NULL);
        sb_putc(sb, '\n');
    }
    const struct json *t = json_obj_get(r, "throughput");
    if (t && t->type == JSON_OBJ) {
        sb_puts(sb, "throughput ");
        put_val(sb, json_obj_get(t, "grants_per_s"));
        sb_puts(sb, " grants/s, ");
        put_val(sb, json_obj_get(t, "attempts_per_s"));
        sb_puts(sb, " attempts/s\n");
    }
}

/* Contract: the external lock's adapter as its handshake named it, e.g.
 * "adapter    redlock 5.0.0-beta.2 caps=ttl,renew processes=4", plus
 * restarts, protocol_errors and expired_grants when not zero; nothing
 * without an adapter section. */
static void render_adapter(const struct json *r, struct strbuf *sb)
{
    const struct json *a = json_obj_get(r, "adapter");
    if (!a || a->type != JSON_OBJ)
        return;
    sb_puts(sb, "adapter    ");
    sb_puts(sb, json_get_str(a, "name", "?"));
    sb_putc(sb, ' ');
    sb_puts(sb, json_get_str(a, "version", "?"));
    sb_puts(sb, " caps=");
    const struct json *caps = json_obj_get(a, "caps");
    for (size_t i = 0; i < rm_len(caps); i++) {
        if (i)
            sb_putc(sb, ',');
        put_val(sb, caps->kids[i]);
    }
    if (!rm_len(caps))
        sb_putc(sb, '-');
    put_kv(sb, a, "processes", NULL);
    static const char *const nonzero[] = {"restarts", "protocol_errors", "expired_grants"};
    for (size_t i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++) {
        const struct json *v = num_at(a, nonzero[i]);
        if (v && v->i != 0)
            put_kv(sb, a, nonzero[i], NULL);
    }
    sb_putc(sb, '\n');
}

static void render_latency(const struct json *r, struct strbuf *sb)
{
    static const char *const ops[] = {"acquire", "acquire_wait", "acquire_failed", "release",
                                      "renew"};
    static const char *const cols[] = {"count", "p50_ms", "p90_ms", "p99_ms", "p999_ms",
                                       "max_ms", "mean_ms"};
    static const char *const heads[] = {"n", "p50", "p90", "p99", "p99.9", "max", "mean"};
    const struct json *lat = json_obj_get(r, "latency");
    if (!lat || lat->type != JSON_OBJ)
        return;
    size_t start = sb->len;
    sb_puts(sb, "latency ms");
    for (size_t c = 0; c < sizeof(heads) / sizeof(heads[0]); c++) {
        pad_to(sb, start, 14 + 10 * (c + 1) - strlen(heads[c]));
        sb_puts(sb, heads[c]);
    }
    sb_putc(sb, '\n');
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        const struct json *q = json_obj_get(lat, ops[o]);
        if (!q || json_get_int(q, "count", 0) <= 0)
            continue; /* nothing measured (e.g. no renewals) */
        start = sb->len;
        sb_printf(sb, "  %s", ops[o]);
        for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
            struct strbuf cell = STRBUF_INIT;
            put_val(&cell, json_obj_get(q, cols[c]));
            pad_to(sb, start, 14 + 10 * (c + 1) - cell.len);
            sb_puts(sb, sb_cstr(&cell));
            sb_free(&cell);
        }
        sb_putc(sb, '\n');
    }
}

/* The start of a checker line: name, verdict and its flag ("!!!" invalid,
 * "???" unknown or a starvation sign given as extra_doubt). Returns where
 * the line starts, for pad_details. */
static size_t put_check_head(struct strbuf *sb, const char *name, const char *verdict,
                             int extra_doubt)
{
    size_t start = sb->len;
    sb_printf(sb, "  %s", name);
    pad_to(sb, start, 12);
    sb_puts(sb, verdict);
    if (strcmp(verdict, "invalid") == 0)
        sb_puts(sb, " !!!");
    else if (strcmp(verdict, "valid") != 0 || extra_doubt)
        sb_puts(sb, " ???");
    return start;
}

/* Align a checker line's details; each detail starts with its own space. */
static void pad_details(struct strbuf *sb, size_t start)
{
    pad_to(sb, start, 23);
}

static void put_note(struct strbuf *sb, const struct json *chk)
{
    const char *note = json_get_str(chk, "reason", json_get_str(chk, "note", NULL));
    if (note)
        sb_printf(sb, " (%s)", note);
}

/* Contract: appends the items of fields (a description's text list) for
 * section c, each as its format says (enum checkfield_fmt). */
static void put_fields(struct strbuf *sb, const struct checkschema *cs,
                       const struct checkfield *fields, const struct json *c)
{
    for (const struct checkfield *f = fields; f->pre || f->path; f++) {
        if (!checkfield_shown(cs, f, c))
            continue;
        if (f->pre)
            sb_puts(sb, f->pre);
        const struct json *v = f->path ? json_path(c, f->path) : NULL;
        switch (f->fmt) {
        case CF_VAL: put_val(sb, v); break;
        case CF_MS: put_unit(sb, v, "ms"); break;
        case CF_PCT: put_pct(sb, v); break;
        case CF_STR: sb_puts(sb, v && v->type == JSON_STR ? v->s : "?"); break;
        case CF_NONE: break;
        }
        if (f->post)
            sb_puts(sb, f->post);
    }
}

/* Contract: the starvation signs of section l (CS_STARVATION: fairness
 * ratio or a starved worker, a stall over STALL_FLAG_SHARE of the run of
 * root, stuck resources), each a "???" line of its own, into why. */
static void starvation_signs(const struct json *root, const struct json *l, struct strbuf *why)
{
    const struct json *ratio = json_path(l, "fairness.ratio");
    int64_t min_g = json_get_int(json_obj_get(l, "fairness"), "min_grants", -1);
    int64_t max_g = json_get_int(json_obj_get(l, "fairness"), "max_grants", -1);
    if (ratio && ratio->type == JSON_NUM && ratio->d > FAIRNESS_FLAG_RATIO) {
        sb_puts(why, "            ??? unfair: fairness ratio ");
        put_val(why, ratio);
        sb_printf(why, " > %g (max/min grants per worker)\n", FAIRNESS_FLAG_RATIO);
    } else if (min_g == 0 && max_g > 0) {
        sb_puts(why, "            ??? starved: a worker got no grant while others did\n");
    }
    /* the longest wait nobody served (results that have it): a long hold
     * inside its lease is no starvation */
    const struct json *stall = json_obj_get(l, "longest_unserved_wait_ms");
    if (!stall)
        stall = json_obj_get(l, "longest_stall_ms");
    const struct json *dur = json_obj_get(root, "duration_s");
    if (stall && stall->type == JSON_NUM && dur && dur->type == JSON_NUM && dur->d > 0 &&
        stall->d > STALL_FLAG_SHARE * dur->d * 1000.0) {
        sb_puts(why, "            ??? long stall: no grant for ");
        put_unit(why, stall, "ms");
        sb_printf(why, " while workers waited%s (over %g%% of the run)\n",
                  json_obj_get(l, "longest_unserved_wait_ms") ? " and no holder had a valid lease"
                                                              : "",
                  STALL_FLAG_SHARE * 100);
    }
    const struct json *stuck = json_obj_get(l, "stuck");
    for (size_t i = 0; i < rm_len(stuck); i++) {
        sb_printf(why, "            ??? stuck %s: %s\n", json_get_str(stuck->kids[i], "res", "?"),
                  json_get_str(stuck->kids[i], "reason", "?"));
    }
    if (!rm_len(stuck) && json_get_int(l, "stuck_resources", 0) > 0)
        sb_puts(why, "            ??? stuck resources at the end of the run\n");
}

/* Contract: one checker's line (and its "???" lines) from its description
 * (model/checkschema.h); a checker without one gets its verdict and note. */
static void render_check(const struct json *root, const char *name, const struct json *c,
                         struct strbuf *sb)
{
    const struct checkschema *cs = checkschema_find(name);
    struct strbuf why = STRBUF_INIT;
    if (cs && (cs->flags & CS_STARVATION))
        starvation_signs(root, c, &why);
    size_t start = put_check_head(sb, name, json_get_str(c, "verdict", "unknown"), why.len > 0);
    if (cs && cs->text) {
        pad_details(sb, start);
        put_fields(sb, cs, cs->text, c);
    }
    put_note(sb, c);
    sb_putc(sb, '\n');
    if (why.len)
        sb_append(sb, why.buf, why.len);
    sb_free(&why);
}

static void render_checks(const struct json *r, struct strbuf *sb)
{
    const struct json *checks = json_obj_get(r, "checks");
    sb_puts(sb, "checkers   overall ");
    sb_puts(sb, json_get_str(r, "verdict_checks", "unknown"));
    /* What these lines are: findings, which decide the verdict only
     * without an expect: block (docs/result-format.md "Verdict"). */
    if (rm_len(json_obj_get(r, "expectations")))
        sb_puts(sb, " (findings: the expect: block decides the verdict)\n");
    else
        sb_puts(sb, " (no expect: block: these findings are the verdict)\n");
    if (!checks || checks->type != JSON_OBJ)
        return;
    for (size_t i = 0; i < checks->n; i++)
        render_check(r, checks->keys[i], checks->kids[i], sb);
}

/* "a->b" of one field over a violation's holders (earlier first); a null
 * (no fence) reads "none" so the arrow stays legible. */
/* " faults=NAME(TARGET),..." for an array of fault ids ("none" when empty). */
static void put_fault_names(struct strbuf *sb, const struct json *r, const struct json *ids)
{
    sb_puts(sb, " faults=");
    if (!rm_len(ids))
        sb_puts(sb, "none");
    for (size_t k = 0; k < rm_len(ids); k++) {
        if (k)
            sb_putc(sb, ',');
        report_fault_name(sb, r, ids->kids[k]);
    }
}

static void put_holders(struct strbuf *sb, const struct json *holders, const char *key)
{
    for (size_t i = 0; i < rm_len(holders); i++) {
        const struct json *v = json_obj_get(holders->kids[i], key);
        if (i)
            sb_puts(sb, "->");
        if (!v || v->type == JSON_NULL)
            sb_puts(sb, "none");
        else
            put_val(sb, v);
    }
    if (!rm_len(holders))
        sb_putc(sb, '-');
}

/* Contract (reports.h): fault id by name, "pause(w1)", "latency(node_0)",
 * "KIND(TARGET)", from result's faults[]; "#ID" when it is not there. */
void report_fault_name(struct strbuf *sb, const struct json *result, const struct json *id)
{
    const struct json *faults = json_obj_get(result, "faults");
    for (size_t i = 0; id && id->type == JSON_NUM && i < rm_len(faults); i++) {
        const struct json *f = faults->kids[i];
        const struct json *fid = json_obj_get(f, "id");
        if (!fid || fid->type != JSON_NUM || fid->i != id->i)
            continue;
        const struct json *w = json_obj_get(f, "worker"), *n = json_obj_get(f, "node");
        sb_puts(sb, json_get_str(f, "kind", "?"));
        if (w && w->type == JSON_NUM)
            sb_printf(sb, "(w%lld)", (long long)w->i);
        else if (n && n->type == JSON_NUM)
            sb_printf(sb, "(node_%lld)", (long long)n->i);
        else
            sb_printf(sb, "(%s)", json_get_str(f, "target", "?"));
        return;
    }
    sb_putc(sb, '#');
    put_val(sb, id);
}

static void render_violations(const struct json *r, struct strbuf *sb)
{
    const struct json *vs = json_obj_get(r, "violations");
    size_t listed = rm_len(vs);
    int64_t total = json_get_int(json_path(r, "checks.mutex"), "violations", (int64_t)listed);
    if (total <= 0 && listed == 0)
        return;
    size_t show = listed < TEXT_MAX_VIOLATIONS ? listed : TEXT_MAX_VIOLATIONS;
    sb_printf(sb, "violations %lld total, first %zu:\n", (long long)total, show);
    for (size_t i = 0; i < show; i++) {
        const struct json *v = vs->kids[i];
        const struct json *holders = json_obj_get(v, "holders");
        sb_puts(sb, "  ");
        sb_puts(sb, json_get_str(v, "resource", "?"));
        sb_putc(sb, ' ');
        sb_puts(sb, json_get_str(v, "class", "?"));
        sb_puts(sb, " at=");
        put_unit(sb, json_obj_get(v, "overlap_start_ms"), "ms");
        sb_puts(sb, " overlap=");
        put_unit(sb, json_obj_get(v, "overlap_ms"), "ms");
        sb_puts(sb, " workers=");
        put_holders(sb, holders, "worker");
        sb_puts(sb, " fences=");
        put_holders(sb, holders, "fence");
        put_fault_names(sb, r, json_obj_get(v, "faults"));
        sb_putc(sb, '\n');
    }
    if ((int64_t)show < total && (int64_t)listed >= total)
        sb_printf(sb, "  ... %lld more in result.json\n", (long long)(total - (int64_t)show));
    else if ((int64_t)show < total)
        sb_printf(sb, "  ... %lld more (result.json lists the first %zu in full)\n",
                  (long long)(total - (int64_t)show), listed);
}

/* One story per class present, lock-broken first (the first violation of
 * the class that has one: checkers/story.h chooses which get a story), one
 * event per line. */
static void render_stories(const struct json *r, struct strbuf *sb)
{
    static const char *const classes[] = {"lock-broken", "stale-holder"};
    const struct json *vs = json_obj_get(r, "violations");
    for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
        long at = rm_story_of(r, classes[c]);
        if (at < 0)
            continue;
        size_t i = (size_t)at;
        const struct json *story = json_obj_get(vs->kids[i], "story");
        sb_printf(sb, "story of violation %zu (%s %s", i + 1,
                  json_get_str(vs->kids[i], "resource", "?"), classes[c]);
        int64_t inc = rm_incident_of(r, i);
        if (inc >= 0)
            sb_printf(sb, ", incident #%lld", (long long)inc);
        sb_puts(sb, "):\n");
        for (size_t k = 0; k < story->n; k++) {
            const struct json *it = story->kids[k];
            const char *kind = json_get_str(it, "kind", "");
            sb_puts(sb, "  ");
            if (strcmp(kind, "overlap") && strcmp(kind, "conclusion")) {
                char ts[32];
                snprintf(ts, sizeof(ts), "t=%.3fs ", json_get_num(it, "t_ms", 0) / 1000.0);
                sb_puts(sb, ts);
            } else {
                sb_puts(sb, "=> ");
            }
            sb_puts(sb, json_get_str(it, "text", ""));
            sb_putc(sb, '\n');
        }
    }
}

/* The story of the first anomaly of each class that has one
 * (checks.mutex.anomalies: renewed-after-loss, lost-with-lease-left,
 * expired), told like a violation's; nothing when there is none. */
static void render_anomaly_stories(const struct json *r, struct strbuf *sb)
{
    const struct json *an = json_path(r, "checks.mutex.anomalies");
    for (size_t i = 0; i < rm_len(an); i++) {
        const struct json *a = an->kids[i], *story = json_obj_get(a, "story");
        if (!rm_len(story))
            continue;
        sb_printf(sb, "story of %s (%s, w%lld at %.3fs):\n", json_get_str(a, "class", "?"),
                  json_get_str(a, "resource", "?"), (long long)json_get_int(a, "worker", -1),
                  json_get_num(a, "t_ms", 0) / 1000.0);
        for (size_t k = 0; k < story->n; k++) {
            const struct json *it = story->kids[k];
            if (strcmp(json_get_str(it, "kind", ""), "conclusion") == 0)
                sb_puts(sb, "  => ");
            else
                sb_printf(sb, "  t=%.3fs ", json_get_num(it, "t_ms", 0) / 1000.0);
            sb_puts(sb, json_get_str(it, "text", ""));
            sb_putc(sb, '\n');
        }
    }
}

static void render_faults(const struct json *r, struct strbuf *sb)
{
    struct kind_count kc[TEXT_MAX_KINDS];
    long skipped, injected;
    size_t nk = count_faults(r, kc, TEXT_MAX_KINDS, &skipped, &injected);
    sb_puts(sb, "faults     ");
    if (injected == 0 && skipped == 0) {
        sb_puts(sb, "none\n");
        return;
    }
    sb_printf(sb, "%ld injected", injected);
    if (nk) {
        sb_puts(sb, " (");
        for (size_t k = 0; k < nk; k++)
            sb_printf(sb, "%s%s=%ld", k ? " " : "", kc[k].kind, kc[k].n);
        sb_putc(sb, ')');
    }
    sb_printf(sb, ", %ld skipped (nothing to act on)\n", skipped);
}

/* One value of a window or phase row into a column of width w: integers
 * exact, numbers with decimals digits, anything else "-". */
static void put_col(struct strbuf *sb, const struct json *o, const char *key, int w, int decimals)
{
    const struct json *v = json_obj_get(o, key);
    if (v && v->type == JSON_NUM && v->is_int && decimals == 0)
        sb_printf(sb, " %*lld", w, (long long)v->i);
    else if (v && v->type == JSON_NUM)
        sb_printf(sb, " %*.*f", w, decimals, v->d);
    else
        sb_printf(sb, " %*s", w, "-");
}

static void put_window_numbers(struct strbuf *sb, const struct json *o)
{
    static const char *const counts[] = {"attempts", "grants", "busy", "failed", "unknown",
                                         "violations"};
    static const int widths[] = {8, 6, 6, 5, 5, 4};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        put_col(sb, o, counts[i], widths[i], 0);
    put_col(sb, o, "acquire_p50_ms", 8, 2);
    put_col(sb, o, "acquire_p99_ms", 8, 2);
    sb_putc(sb, '\n');
}

/* The fault_windows table: one line per injected occurrence (the first
 * TEXT_MAX_WINDOWS), then one per phase. Only when there was a fault. */
static void render_windows(const struct json *r, struct strbuf *sb)
{
    const struct json *wins = json_obj_get(r, "fault_windows");
    const struct json *ph = json_obj_get(r, "phases");
    size_t n = rm_len(wins);
    if (!n)
        return;
    sb_puts(sb, "fault windows: acquire attempts invoked inside each (times in ms)\n");
    sb_printf(sb, "  %4s %-9s %-14s %9s %9s %8s %6s %6s %5s %5s %4s %8s %8s\n", "id", "kind",
              "target", "start", "end", "attempts", "grants", "busy", "fail", "unkn", "viol",
              "p50", "p99");
    for (size_t i = 0; i < n && i < TEXT_MAX_WINDOWS; i++) {
        const struct json *o = wins->kids[i];
        sb_puts(sb, " ");
        put_col(sb, o, "id", 4, 0);
        sb_printf(sb, " %-9.9s %-14.14s", json_get_str(o, "kind", "?"),
                  json_get_str(o, "target", "?"));
        put_col(sb, o, "start_ms", 9, 1);
        put_col(sb, o, "end_ms", 9, 1);
        put_window_numbers(sb, o);
    }
    if (n > TEXT_MAX_WINDOWS)
        sb_printf(sb, "  ... %zu more in result.json\n", n - TEXT_MAX_WINDOWS);
    static const char *const phases[] = {"fault", "no_fault", "before_faults", "quiet_tail"};
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        const struct json *o = json_obj_get(ph, phases[i]);
        if (!o || o->type != JSON_OBJ)
            continue;
        const struct json *d = json_obj_get(o, "duration_ms");
        sb_printf(sb, "  phase %-23s %16.1f ms", phases[i], d && d->type == JSON_NUM ? d->d : 0.0);
        put_window_numbers(sb, o);
    }
}

static void render_expectations(const struct json *r, struct strbuf *sb)
{
    const struct json *ex = json_obj_get(r, "expectations");
    size_t n = rm_len(ex), wpath = 4, wwant = 4, nok = 0;
    if (!n)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t lp = strlen(json_get_str(ex->kids[i], "path", ""));
        size_t lw = strlen(json_get_str(ex->kids[i], "want", ""));
        wpath = lp > wpath ? lp : wpath;
        wwant = lw > wwant ? lw : wwant;
        if (is_true(json_obj_get(ex->kids[i], "ok")))
            nok++;
    }
    sb_printf(sb, "expectations %zu of %zu met\n", nok, n);
    for (size_t i = 0; i < n; i++) {
        const struct json *e = ex->kids[i];
        size_t start = sb->len;
        sb_puts(sb, "  ");
        sb_puts(sb, json_get_str(e, "path", ""));
        pad_to(sb, start, 2 + wpath + 2);
        sb_puts(sb, json_get_str(e, "want", ""));
        pad_to(sb, start, 2 + wpath + 2 + wwant + 2);
        sb_puts(sb, "got ");
        size_t gstart = sb->len;
        put_val(sb, json_obj_get(e, "got"));
        pad_to(sb, gstart, 10);
        sb_puts(sb, is_true(json_obj_get(e, "ok")) ? " ok" : " FAILED");
        const char *why = json_get_str(e, "why", NULL);
        if (why && !is_true(json_obj_get(e, "ok")))
            sb_printf(sb, " (%s)", why);
        sb_putc(sb, '\n');
    }
}

static void render_warnings(const struct json *r, struct strbuf *sb)
{
    const struct json *w = json_obj_get(r, "warnings");
    size_t n = rm_len(w);
    if (!n)
        return;
    sb_printf(sb, "warnings   %zu\n", n);
    for (size_t i = 0; i < n && i < TEXT_MAX_WARNINGS; i++) {
        sb_puts(sb, "  - ");
        put_val(sb, w->kids[i]);
        sb_putc(sb, '\n');
    }
    if (n > TEXT_MAX_WARNINGS)
        sb_printf(sb, "  ... %zu more in result.json\n", n - TEXT_MAX_WARNINGS);
}

/* ---- evidence, coverage, incidents, the verdict's reason ------------------ */

static const char *yes_no(const struct json *v)
{
    return !v || v->type != JSON_BOOL ? "-" : v->i ? "yes" : "no";
}

/* Contract: "evidence" (docs/result-format.md): whether every log the run
 * listed was found whole, and one line per gap; nothing when the model has
 * no evidence section. */
static void render_evidence(const struct json *r, struct strbuf *sb)
{
    const struct json *ev = json_obj_get(r, "evidence");
    if (!ev || ev->type != JSON_OBJ)
        return;
    const struct json *complete = json_obj_get(ev, "complete");
    int ok = complete && complete->type == JSON_BOOL && complete->i;
    const struct json *logs = json_obj_get(ev, "logs");
    sb_printf(sb, "evidence   %s", ok ? "complete" : "incomplete ???");
    sb_puts(sb, " logs=");
    put_path(sb, logs, "found");
    sb_putc(sb, '/');
    put_path(sb, logs, "expected");
    static const char *const parts[] = {"missing", "foreign", "damaged"};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        sb_printf(sb, " %s=", parts[i]);
        put_path(sb, logs, parts[i]);
    }
    sb_puts(sb, " run_id=");
    put_token(sb, str_at(ev, "run_id", NULL));
    sb_puts(sb, " run_state=");
    put_token(sb, str_at(ev, "run_state", NULL));
    sb_putc(sb, '\n');
    const struct json *gaps = json_obj_get(ev, "gaps");
    for (size_t i = 0; i < rm_len(gaps) && i < TEXT_MAX_GAPS; i++) {
        sb_puts(sb, "  ??? ");
        put_val(sb, gaps->kids[i]);
        sb_putc(sb, '\n');
    }
    if (rm_len(gaps) > TEXT_MAX_GAPS)
        sb_printf(sb, "  ... %zu more in result.json\n", rm_len(gaps) - TEXT_MAX_GAPS);
}

/* Contract: "coverage": how much the run exercised the lock (holds, grants,
 * contended acquires against the floor) and how many fault occurrences
 * took effect ("bit"); flagged "???" when the activity was too little or
 * no fault bit. Nothing when the model has no coverage section. */
static void render_coverage(const struct json *r, struct strbuf *sb)
{
    const struct json *cv = json_obj_get(r, "coverage");
    if (!cv || cv->type != JSON_OBJ)
        return;
    const struct json *f = json_obj_get(cv, "faults");
    const struct json *enough = json_obj_get(cv, "enough_activity");
    int64_t occ = json_get_int(f, "occurrences", 0), bit = json_get_int(f, "bit", 0);
    int doubt = (enough && enough->type == JSON_BOOL && !enough->i) || (occ > 0 && bit == 0);
    sb_printf(sb, "coverage   %s", doubt ? "??? " : "");
    sb_puts(sb, "holds=");
    put_path(sb, cv, "holds");
    put_kv(sb, cv, "grants", NULL);
    put_kv(sb, cv, "contended_acquires", "contended");
    put_kv(sb, cv, "grant_floor", NULL);
    sb_printf(sb, " enough_activity=%s", yes_no(enough));
    if (f && f->type == JSON_OBJ) {
        sb_puts(sb, "; faults that bit: ");
        put_path(sb, f, "bit");
        sb_puts(sb, " of ");
        put_path(sb, f, "occurrences");
        put_kv(sb, f, "not_bit", NULL);
        put_kv(sb, f, "undecided", NULL);
        put_kv(sb, f, "late", NULL);
    }
    sb_putc(sb, '\n');
}

/* Contract: "incidents" (the mutex checker groups the violations one
 * cause made): the count by class, then one line each, lock-broken ones
 * first, each with its resource, the worker whose hold caused it, its
 * overlaps, its span and its faults by name. Nothing without incidents. */
static void render_incidents(const struct json *r, struct strbuf *sb)
{
    const struct json *incs = json_obj_get(r, "incidents");
    const struct json *m = json_path(r, "checks.mutex");
    if (!incs || incs->type != JSON_ARR)
        return;
    int64_t total = json_get_int(m, "incidents", (int64_t)incs->n);
    if (total <= 0)
        return;
    sb_printf(sb, "incidents  %lld (stale-holder=", (long long)total);
    put_path(sb, m, "incidents_by_class.stale_holder");
    sb_puts(sb, " lock-broken=");
    put_path(sb, m, "incidents_by_class.lock_broken");
    sb_puts(sb, ") grouping violations=");
    put_path(sb, m, "violations");
    sb_puts(sb, ", lock-broken first:\n");
    static const char *const classes[] = {"lock-broken", "stale-holder"};
    size_t shown = 0;
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < incs->n && shown < TEXT_MAX_INCIDENTS; i++) {
            const struct json *inc = incs->kids[i];
            if (strcmp(json_get_str(inc, "class", ""), classes[c]) != 0)
                continue;
            shown++;
            const struct json *cause = json_obj_get(inc, "cause");
            sb_puts(sb, "  #");
            put_val(sb, json_obj_get(inc, "id"));
            sb_printf(sb, " %s %s cause=", json_get_str(inc, "resource", "?"), classes[c]);
            const struct json *cw = json_obj_get(cause, "worker");
            if (cw && cw->type == JSON_NUM)
                sb_printf(sb, "w%lld", (long long)cw->i);
            else
                sb_putc(sb, '-');
            if (is_true(json_obj_get(cause, "crashed")))
                sb_puts(sb, "(killed)");
            sb_puts(sb, " overlaps=");
            put_val(sb, json_obj_get(inc, "violations"));
            sb_puts(sb, " at=");
            put_val(sb, json_obj_get(inc, "start_ms"));
            sb_puts(sb, "..");
            put_unit(sb, json_obj_get(inc, "end_ms"), "ms");
            put_fault_names(sb, r, json_obj_get(inc, "faults"));
            sb_putc(sb, '\n');
        }
    }
    if ((int64_t)shown < total)
        sb_printf(sb, "  ... %lld more in result.json\n", (long long)(total - (int64_t)shown));
}

/* "N lock-broken and M stale-holder overlaps in K incidents" (the parts
 * that are there, and "and R renewals after loss"), or nothing when mutex
 * found neither; returns 1 when it wrote something. */
static int put_overlaps(struct strbuf *sb, const struct json *r)
{
    const struct json *m = json_path(r, "checks.mutex");
    int64_t v = json_get_int(m, "violations", 0);
    int64_t ral = json_get_int(m, "renewed_after_loss", 0);
    if (v <= 0 && ral > 0) {
        sb_printf(sb, "%lld renewal%s after loss", (long long)ral, ral == 1 ? "" : "s");
        return 1;
    }
    if (v <= 0)
        return 0;
    int64_t lb = json_get_int(json_obj_get(m, "by_class"), "lock_broken", 0);
    int64_t sh = json_get_int(json_obj_get(m, "by_class"), "stale_holder", 0);
    if (lb > 0 && sh > 0)
        sb_printf(sb, "%lld lock-broken and %lld stale-holder overlaps", (long long)lb,
                  (long long)sh);
    else if (lb > 0 || sh > 0)
        sb_printf(sb, "%lld %s overlap%s", (long long)v, lb > 0 ? "lock-broken" : "stale-holder",
                  v == 1 ? "" : "s");
    else
        sb_printf(sb, "%lld overlap%s", (long long)v, v == 1 ? "" : "s");
    const struct json *ni = num_at(r, "checks.mutex.incidents");
    if (ni)
        sb_printf(sb, " in %lld incident%s", (long long)ni->i, ni->i == 1 ? "" : "s");
    if (ral > 0)
        sb_printf(sb, " and %lld renewal%s after loss", (long long)ral, ral == 1 ? "" : "s");
    return 1;
}

/* What the checkers found, as a clause: "the checkers found 2 lock-broken
 * overlaps in 1 incident and fencing invalid", "... found no violation",
 * "... could not decide (mutex: why)". */
static void put_findings(struct strbuf *sb, const struct json *r)
{
    const struct json *checks = json_obj_get(r, "checks");
    struct strbuf other = STRBUF_INIT, undecided = STRBUF_INIT;
    for (size_t i = 0; checks && checks->type == JSON_OBJ && i < checks->n; i++) {
        const char *v = json_get_str(checks->kids[i], "verdict", "unknown");
        const char *why = json_get_str(checks->kids[i], "reason",
                                       json_get_str(checks->kids[i], "note", NULL));
        const struct checkschema *cs = checkschema_find(checks->keys[i]);
        if (strcmp(v, "invalid") == 0 && !(cs && (cs->flags & CS_OVERLAPS)))
            sb_printf(&other, "%s%s invalid", other.len ? ", " : "", checks->keys[i]);
        else if (strcmp(v, "valid") != 0 && strcmp(v, "invalid") != 0)
            sb_printf(&undecided, "%s%s%s%s%s", undecided.len ? "; " : "", checks->keys[i],
                      why ? ": " : "", why ? why : "", why ? "" : " undecided");
    }
    struct strbuf found = STRBUF_INIT;
    put_overlaps(&found, r);
    if (other.len)
        sb_printf(&found, "%s%s", found.len ? " and " : "", sb_cstr(&other));
    if (found.len)
        sb_printf(sb, "the checkers found %s", sb_cstr(&found));
    else if (undecided.len)
        sb_printf(sb, "the checkers could not decide (%s)", sb_cstr(&undecided));
    else
        sb_puts(sb, "the checkers found no violation");
    sb_free(&found);
    sb_free(&other);
    sb_free(&undecided);
}

/* Contract: the one line that says how the verdict follows from the
 * expectations and the checkers (docs/result-format.md "Verdict"):
 *   verdict    PASS: 5 of 5 expectations met; the checkers found 43
 *              stale-holder overlaps in 6 incidents, as expected
 *   verdict    FAIL: 1 of 5 expectations unmet (PATH: wanted W, got G)
 *   verdict    UNKNOWN: REASON; REASON
 *   verdict    FAIL: the checkers found 2 lock-broken overlaps (the
 *              verdict is the checkers': no expect: block)
 * (each one line, without the "verdict    " label and the newline, which
 * the summary adds; also in junit.xml and the HTML banner). Reads the
 * model only. */
void render_verdict_why(const struct json *r, struct strbuf *sb)
{
    const char *verdict = json_get_str(r, "verdict", "unknown");
    const struct json *ex = json_obj_get(r, "expectations");
    size_t nex = rm_len(ex), nok = 0;
    int about_checks = 0;
    for (size_t i = 0; i < nex; i++) {
        if (is_true(json_obj_get(ex->kids[i], "ok")))
            nok++;
        if (strncmp(json_get_str(ex->kids[i], "path", ""), "checks.", 7) == 0)
            about_checks = 1;
    }
    sb_printf(sb, "%s: ", verdict_word(r));
    if (strcmp(verdict, "pass") != 0 && strcmp(verdict, "fail") != 0) {
        const struct json *reasons = json_obj_get(r, "verdict_reasons");
        for (size_t i = 0; i < rm_len(reasons); i++) {
            if (i)
                sb_puts(sb, "; ");
            put_val(sb, reasons->kids[i]);
        }
        if (rm_len(reasons) == 0) { /* a model from before verdict_reasons */
            if (is_true(json_obj_get(r, "interrupted")))
                sb_puts(sb, "the run was interrupted before its planned end");
            else if (nex == 0)
                put_findings(sb, r);
            else
                sb_puts(sb, "no reason recorded");
        }
    } else if (nex > 0 && nok < nex) {
        sb_printf(sb, "%zu of %zu expectation%s unmet (", nex - nok, nex, nex == 1 ? "" : "s");
        size_t named = 0;
        for (size_t i = 0; i < nex && named < TEXT_MAX_UNMET; i++) {
            const struct json *e = ex->kids[i];
            if (is_true(json_obj_get(e, "ok")))
                continue;
            sb_printf(sb, "%s%s: wanted %s, got ", named ? "; " : "", json_get_str(e, "path", "?"),
                      json_get_str(e, "want", "?"));
            put_val(sb, json_obj_get(e, "got"));
            const char *why = json_get_str(e, "why", NULL);
            if (why)
                sb_printf(sb, ", %s", why);
            named++;
        }
        if (nex - nok > named)
            sb_printf(sb, "; %zu more", nex - nok - named);
        sb_putc(sb, ')');
    } else if (nex > 0) {
        sb_printf(sb, "%zu of %zu expectation%s met; ", nok, nex, nex == 1 ? "" : "s");
        put_findings(sb, r);
        if (strcmp(json_get_str(r, "verdict_checks", ""), "invalid") == 0)
            sb_puts(sb, about_checks ? ", as expected" : ", which no expectation is about");
    } else {
        put_findings(sb, r);
        sb_puts(sb, " (the verdict is the checkers': no expect: block)");
    }
}

/* Contract: appends the human summary of result to sb: header, counts and
 * throughput, evidence and coverage (when the model has them), latency
 * quantiles, one line per checker (flagged "!!!" / "???"; findings, not
 * verdicts), the incidents, the first violations, one story per class,
 * one per anomaly class (renewed after loss, losses), the faults, the expectations, the warnings, the one line saying how the
 * verdict follows, and last the verdict line. Reads result only. */
void render_text(const struct json *result, struct strbuf *sb)
{
    render_header(result, sb);
    render_evidence(result, sb);
    render_counts(result, sb);
    render_coverage(result, sb);
    render_adapter(result, sb);
    render_latency(result, sb);
    render_checks(result, sb);
    render_incidents(result, sb);
    render_violations(result, sb);
    render_stories(result, sb);
    render_anomaly_stories(result, sb);
    render_faults(result, sb);
    render_windows(result, sb);
    render_expectations(result, sb);
    render_warnings(result, sb);
    sb_puts(sb, "verdict    ");
    render_verdict_why(result, sb);
    sb_putc(sb, '\n');
    render_verdict_line(result, sb);
}
