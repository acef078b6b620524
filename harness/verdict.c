/*
 * verdict.c: builds the result model (docs/result-format.md): runs the
 * checkers over a loaded history, assembles the header around their
 * fragment, evaluates the workload's `expect:` block and derives the
 * overall verdict and exit code. It computes no statistics itself (the
 * checkers do) and formats nothing (reports/ renders the model); the
 * documented result paths an expectation may name are model/resultpath.h.
 */
#include "harness/verdict.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/series.h"
#include "harness/holds.h"
#include "harness/workload.h"
#include "model/resultpath.h"
#include "harness/adapter_stats.h"

#ifndef LS_VERSION
#define LS_VERSION "0.0.0"
#endif

/* ---- expectations ---------------------------------------------------------- */

/* Does got satisfy `got OP value`? got_int/got_i carry an exact integer
 * when the result holds one, so EQ/NE on counts never suffer rounding. */
static int expect_holds(int op, double got, int got_int, int64_t got_i, double value)
{
    int eq;
    if (got_int && value == floor(value) && fabs(value) < 9.0e18) {
        eq = got_i == (int64_t)value;
    } else {
        double scale = fmax(fabs(got), fabs(value));
        eq = got == value || fabs(got - value) <= 1e-9 * scale;
    }
    switch (op) {
    case EXPECT_EQ: return eq;
    case EXPECT_NE: return !eq;
    case EXPECT_LT: return got < value;
    case EXPECT_LE: return got <= value;
    case EXPECT_GT: return got > value;
    case EXPECT_GE: return got >= value;
    default: return 0;
    }
}

/* Does an expectation of w name a coverage.* path (the user gates on
 * coverage explicitly, so the coverage rule stands aside)? */
static int expects_coverage(const struct workload *w)
{
    for (int i = 0; w && i < w->nexpects; i++)
        if (strncmp(w->expects[i].path, "coverage.", 9) == 0 ||
            strcmp(w->expects[i].path, "coverage") == 0)
            return 1;
    return 0;
}

static int is_false(const struct json *v)
{
    return v && v->type == JSON_BOOL && !v->i;
}

/* Contract: why the coverage of result does not support a pass (one line
 * each into reasons); 0 when it does. */
static int coverage_reasons(const struct json *result, struct json *reasons)
{
    int n = 0;
    char line[256];
    const struct json *cov = json_obj_get(result, "coverage");
    if (!cov || cov->type != JSON_OBJ)
        return 0;
    const struct json *cf = json_obj_get(cov, "faults");
    int64_t occ = json_get_int(cf, "occurrences", 0), bit = json_get_int(cf, "bit", 0);
    if (occ > 0 && bit == 0) {
        snprintf(line, sizeof(line),
                 "no fault occurrence bit (%lld: %lld did not, %lld not injected): the faults "
                 "tested nothing; see faults[].bit_reason",
                 (long long)occ, (long long)json_get_int(cf, "not_bit", 0),
                 (long long)json_get_int(cf, "undecided", 0));
        json_arr_push(reasons, json_new_str(line));
        n++;
    }
    if (is_false(json_obj_get(cov, "enough_activity"))) {
        snprintf(line, sizeof(line),
                 "too little activity: %lld grants, below this workload's floor of %lld "
                 "(coverage.grant_floor)",
                 (long long)json_get_int(cov, "grants", 0),
                 (long long)json_get_int(cov, "grant_floor", 0));
        json_arr_push(reasons, json_new_str(line));
        n++;
    }
    return n;
}

/* Contract: the evidence gaps of result as reasons (docs/result-format.md
 * "evidence"); 0 when the evidence is complete or not judged (no
 * "evidence" member: treated as complete). */
static int evidence_reasons(const struct json *result, struct json *reasons)
{
    const struct json *ev = json_obj_get(result, "evidence");
    if (!ev || ev->type != JSON_OBJ || !is_false(json_obj_get(ev, "complete")))
        return 0;
    const struct json *gaps = json_obj_get(ev, "gaps");
    size_t ng = gaps && gaps->type == JSON_ARR ? gaps->n : 0;
    char line[320];
    for (size_t i = 0; i < ng && i < 5; i++) {
        const struct json *g = gaps->kids[i];
        snprintf(line, sizeof(line), "evidence gap: %s", g->type == JSON_STR ? g->s : "?");
        json_arr_push(reasons, json_new_str(line));
    }
    if (ng > 5) {
        snprintf(line, sizeof(line), "evidence: %zu more gaps (evidence.gaps)", ng - 5);
        json_arr_push(reasons, json_new_str(line));
    }
    if (ng == 0)
        json_arr_push(reasons, json_new_str("evidence incomplete (evidence.complete is false)"));
    return 1;
}

/* Contract: one reason per checker whose verdict is unknown. */
static void checker_reasons(const struct json *result, struct json *reasons)
{
    const struct json *checks = json_obj_get(result, "checks");
    char line[320];
    for (size_t i = 0; checks && checks->type == JSON_OBJ && i < checks->n; i++) {
        const struct json *c = checks->kids[i];
        if (strcmp(json_get_str(c, "verdict", ""), "unknown") != 0)
            continue;
        const char *note = json_get_str(c, "note", NULL);
        snprintf(line, sizeof(line), "the %s checker could not decide%s%s", checks->keys[i],
                 note ? ": " : "", note ? note : "");
        json_arr_push(reasons, json_new_str(line));
    }
}

/* "verdict" and "verdict_reasons" from the rule of docs/result-format.md
 * "Verdict": expectations decide when there are any, otherwise
 * verdict_checks does; then incomplete evidence makes any verdict unknown,
 * and an interrupted run, faults none of which bit or activity below the
 * floor make a pass unknown (the last two not when an expectation names a
 * coverage.* path). verdict_reasons says why whenever it is unknown. */
static void set_verdict(struct json *result, const struct workload *w, int nexpects, int nfailed)
{
    const char *v;
    struct json *reasons = json_new_arr();
    if (nexpects > 0) {
        v = nfailed ? "fail" : "pass";
    } else {
        const char *vc = json_get_str(result, "verdict_checks", "unknown");
        if (strcmp(vc, "valid") == 0) {
            v = "pass";
        } else if (strcmp(vc, "invalid") == 0) {
            v = "fail";
        } else {
            v = "unknown";
            checker_reasons(result, reasons);
        }
    }
    if (evidence_reasons(result, reasons))
        v = "unknown";
    const struct json *intr = json_obj_get(result, "interrupted");
    if (intr && intr->type == JSON_BOOL && intr->i && strcmp(v, "fail") != 0) {
        json_arr_push(reasons, json_new_str("the run was interrupted before its planned end"));
        v = "unknown";
    }
    if (strcmp(v, "pass") == 0 && !expects_coverage(w) && coverage_reasons(result, reasons))
        v = "unknown";
    if (strcmp(v, "unknown") == 0 && reasons->n == 0)
        json_arr_push(reasons, json_new_str(
                                   nexpects ? "unknown" : "the checkers could not decide"));
    if (strcmp(v, "unknown") != 0) { /* reasons only explain an unknown */
        json_free(reasons);
        reasons = json_new_arr();
    }
    json_obj_set_str(result, "verdict", v);
    json_obj_set(result, "verdict_reasons", reasons);
}

/* Contract: why the value at path was not measured (into why, "not
 * measured: ..."), or 0 when it was (a number or bool is there, from a
 * checker that decided). The value at path is v (NULL: missing). */
static int not_measured(const struct json *result, const char *path, const struct json *v,
                        char *why, size_t n)
{
    /* under checks.<name>: a checker that could not decide measured nothing */
    if (strncmp(path, "checks.", 7) == 0) {
        const char *name = path + 7, *dot = strchr(name, '.');
        char cname[64];
        size_t len = dot ? (size_t)(dot - name) : strlen(name);
        if (len < sizeof(cname)) {
            memcpy(cname, name, len);
            cname[len] = '\0';
            const struct json *checks = json_obj_get(result, "checks");
            const struct json *c = json_obj_get(checks, cname);
            const char *field = dot ? dot + 1 : "";
            int meta = strcmp(field, "available") == 0 || strcmp(field, "offered") == 0;
            if (!c) {
                snprintf(why, n, "not measured: no %s checker in this result (not a run of "
                         "that kind)", cname);
                return 1;
            }
            if (!meta && strcmp(json_get_str(c, "verdict", ""), "unknown") == 0) {
                const char *note = json_get_str(c, "note", NULL);
                snprintf(why, n, "not measured: the %s checker could not decide%s%s", cname,
                         note ? ": " : "", note ? note : "");
                return 1;
            }
            if (!v || v->type == JSON_NULL) {
                const char *no = json_get_str(c, "not_offered", NULL);
                const char *note = json_get_str(c, "note", NULL);
                if (strcmp(cname, "fencing") == 0 && no)
                    snprintf(why, n, "not measured: fencing not offered (%s)", no);
                else if (note)
                    snprintf(why, n, "not measured: %s", note);
                else
                    snprintf(why, n, "not measured: %s has no value in this run", path);
                return 1;
            }
            return 0;
        }
    }
    if (v && (v->type == JSON_NUM || v->type == JSON_BOOL))
        return 0;
    if (!v)
        snprintf(why, n, "not measured: %s is absent for this lock, topology or run", path);
    else
        snprintf(why, n, "not measured: %s is null (nothing of the kind happened)", path);
    return 1;
}

/* Contract: replaces result's "expectations" with one entry per w->expects
 * ({path, want, got, ok, and why when not measured}; got is the number
 * found at path, a bool as 1/0, null when the path was not measured (see
 * not_measured: missing, null, or under a checker that could not decide),
 * and then ok is false) and re-derives "verdict" and "verdict_reasons" from
 * them (so they never disagree). w may be NULL (no expectations). Returns
 * the number of failed expectations. */
int result_eval_expectations(struct json *result, const struct workload *w)
{
    struct json *arr = json_new_arr();
    int n = w ? w->nexpects : 0, failed = 0;
    for (int i = 0; i < n; i++) {
        const struct expect_spec *e = &w->expects[i];
        const struct json *v = json_path(result, e->path);
        struct json *got = NULL;
        int ok = 0;
        char why[320];
        int unmeasured = not_measured(result, e->path, v, why, sizeof(why));
        if (unmeasured) {
            got = json_new_null();
        } else if (v->type == JSON_NUM) {
            got = json_clone(v);
            ok = expect_holds(e->op, v->d, v->is_int, v->i, e->value);
        } else {
            got = json_new_int(v->i ? 1 : 0);
            ok = expect_holds(e->op, v->i ? 1.0 : 0.0, 1, v->i ? 1 : 0, e->value);
        }
        struct json *ent = json_arr_push(arr, json_new_obj());
        json_obj_set_str(ent, "path", e->path);
        json_obj_set_str(ent, "want", e->want ? e->want : "");
        json_obj_set(ent, "got", got);
        json_obj_set_bool(ent, "ok", ok);
        if (unmeasured)
            json_obj_set_str(ent, "why", why);
        if (!ok)
            failed++;
    }
    json_obj_set(result, "expectations", arr);
    set_verdict(result, w, n, failed);
    return failed;
}

/* Contract: 0 for verdict "pass", 1 for "fail", 4 for "unknown" or a
 * missing/odd verdict (docs/result-format.md "Verdict"). */
int result_exit_code(const struct json *result)
{
    const char *v = json_get_str(result, "verdict", "unknown");
    if (strcmp(v, "pass") == 0)
        return 0;
    if (strcmp(v, "fail") == 0)
        return 1;
    return 4;
}

/* ---- assembly -------------------------------------------------------------- */

static struct json *seed_json(const struct workload *w)
{
    if (!w)
        return json_new_null();
    if (w->seed <= (uint64_t)INT64_MAX)
        return json_new_int((int64_t)w->seed);
    return json_new_num((double)w->seed);
}

/* Contract: runs check_run(h, p) and returns the whole result document
 * (caller frees with json_free): the header (format, version,
 * tool_version, seed, verdict, source, started_at/ended_at when h has a
 * run.json, duration_s, interrupted, workload or null), then the checker
 * fragment's members in their order, then expectations; finally the
 * expectations are evaluated and the verdict set. Never NULL: a checker
 * fragment that could not be built leaves verdict_checks "unknown". */
struct json *result_build(struct history *h, const struct workload *w,
                          const struct check_params *p)
{
    struct json *res = json_new_obj();
    json_obj_set_str(res, "format", RESULT_FORMAT);
    json_obj_set_int(res, "version", RESULT_VERSION);
    json_obj_set_str(res, "tool_version", LS_VERSION);
    json_obj_set(res, "seed", seed_json(w));
    json_obj_set_str(res, "verdict", "unknown"); /* placeholder: keeps it near the top */
    json_obj_set(res, "verdict_reasons", json_new_arr());
    json_obj_set_str(res, "source", h->source ? h->source : "");
    if (h->run) {
        const char *s = json_get_str(h->run, "started_at", NULL);
        if (s)
            json_obj_set_str(res, "started_at", s);
        s = json_get_str(h->run, "ended_at", NULL);
        if (s)
            json_obj_set_str(res, "ended_at", s);
    }
    json_obj_set_num(res, "duration_s", (double)h->end / 1e9);
    json_obj_set_bool(res, "interrupted", h->interrupted);
    json_obj_set(res, "workload", w ? workload_to_json(w) : json_new_null());

    struct json *frag = check_run(h, p);
    if (frag && frag->type == JSON_OBJ) {
        /* Move the members: the fragment keeps its keys, we take the values. */
        for (size_t i = 0; i < frag->n; i++) {
            json_obj_set(res, frag->keys[i], frag->kids[i]);
            frag->kids[i] = NULL;
        }
    } else {
        json_obj_set_str(res, "verdict_checks", "unknown");
        struct json *warn = json_obj_set(res, "warnings", json_new_arr());
        json_arr_push(warn, json_new_str("checkers produced no result"));
    }
    json_free(frag);
    if (!json_obj_get(res, "verdict_checks"))
        json_obj_set_str(res, "verdict_checks", "unknown");

    if (h->from_rundir && h->source) { /* lock.impl external: the adapters' counters */
        struct json *ad = adapter_stats_load(h->source);
        if (ad)
            json_obj_set(res, "adapter", ad);
    }
    json_obj_set(res, "expectations", json_new_arr());
    result_eval_expectations(res, w);
    /* Last, being the bulkiest: the charts' data (bounded in size). */
    json_obj_set(res, "series", series_build(h, res));
    return res;
}

/* Contract: see verdict.h. */
void result_add_holds(struct json *res, const struct history *h)
{
    struct json *series = json_obj_get(res, "series");
    if (series && series->type == JSON_OBJ)
        json_obj_set(series, "holds", holds_build(h, res));
}
