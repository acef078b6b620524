/*
 * result.c: assembles the result model (docs/result-format.md) around the
 * checkers' fragment, evaluates the workload's `expect:` block and derives
 * the overall verdict and exit code. It also owns the table of documented
 * numeric/bool paths that expectations may name. It computes no statistics
 * itself (the checkers do) and formats nothing (text.c, json.c do).
 */
#include "reports/result.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload.h"
#include "checkers/series.h"
#include "reports/adapter_stats.h"

#ifndef LS_VERSION
#define LS_VERSION "0.0.0"
#endif

/* ---- documented expectation paths ---------------------------------------- */

/* Each row names alternative prefixes and alternative last parts, '|'
 * separated; a path is documented when it is "<prefix>.<field>" for some
 * pair (or "<field>" when the prefix is empty). "#" stands for an array
 * index. Only numeric and boolean members are listed: an expectation
 * compares numbers. Keep in step with docs/result-format.md. */
struct path_row {
    const char *prefixes;
    const char *fields;
};

static const struct path_row path_table[] = {
    {"", "version|seed|duration_s|interrupted"},
    {"evidence", "complete"},
    {"evidence.logs", "expected|found|missing|foreign|damaged"},
    {"counts",
     "attempts|grants|busy|failed|unknown|releases|release_not_owner|release_failed|"
     "renewals|renew_failed|lost|crashes|expired_grants|store_ops|events"},
    {"latency.acquire|latency.acquire_wait|latency.release|latency.renew",
     "count|p50_ms|p90_ms|p99_ms|p999_ms|max_ms|mean_ms"},
    {"throughput", "grants_per_s|attempts_per_s"},
    {"checks.mutex", "valid|violations|near_misses|capacity|holds"},
    {"checks.mutex.by_class", "stale_holder|lock_broken"},
    {"checks.mutex", "incidents"},
    {"checks.mutex.incidents_by_class", "stale_holder|lock_broken"},
    {"checks.fencing",
     "valid|offered|available|plain_lost_updates|fenced_lost_updates|stale_ops_rejected|"
     "fence_regressions|plain_accepted_writes|fenced_accepted_writes"},
    {"checks.fencing.per_resource.#",
     "plain_final|plain_accepted|plain_lost|fenced_final|fenced_accepted|fenced_lost|rejected"},
    {"checks.fencing.regressions.#",
     "worker|fence|invoke_ms|acquired_ms|earlier_worker|earlier_fence|earlier_acquired_ms"},
    {"checks.liveness",
     "valid|longest_stall_ms|crash_to_next_grant_ms|holder_crashes|crashes_without_next_grant|"
     "stuck_resources|busy_share|failed_share|unknown_share"},
    {"checks.liveness.fairness", "min_grants|max_grants|ratio"},
    {"checks.stats", "valid"},
    {"checks.jobs",
     "valid|available|announced|jobs|done|duplicates|extra_effects|missed|claimed_not_done|"
     "effects|refused"},
    {"checks.jobs.steps", "gave_up|skip_done|claimed|effect|refused|aborted|error"},
    {"violations.#", "overlap_start_ms|overlap_ms"},
    {"violations.#.holders.#", "worker|fence|acquired_ms|valid_until_ms|enter_ms|exit_ms"},
    {"faults.#", "id|worker|node|start_ms|end_ms|skipped"},
    {"fault_windows.#",
     "id|start_ms|end_ms|duration_ms|attempts|grants|busy|failed|unknown|violations|"
     "acquire_p50_ms|acquire_p99_ms|grants_per_s"},
    {"phases.no_fault|phases.fault|phases.before_faults|phases.quiet_tail",
     "duration_ms|attempts|grants|busy|failed|unknown|violations|acquire_p50_ms|acquire_p99_ms|"
     "grants_per_s"},
    {"phases.quiet_tail", "start_ms"},
    {"per_worker.#", "worker|attempts|grants|busy|failed|unknown|events|complete|torn_bytes"},
    {"adapter|adapter.per_worker.#",
     "starts|restarts|restart_failures|exits|requests|timeouts|late_replies|protocol_errors|"
     "lost_events|log_events|expired_grants"},
    {"adapter", "protocol|processes"},
    {"adapter.per_worker.#", "worker|epoch|started"},
};

/* Is s[0..n) one of the '|' separated alternatives in alts? */
static int alt_match(const char *alts, const char *s, size_t n)
{
    const char *a = alts;
    for (;;) {
        const char *bar = strchr(a, '|');
        size_t len = bar ? (size_t)(bar - a) : strlen(a);
        if (len == n && memcmp(a, s, n) == 0)
            return 1;
        if (!bar)
            return 0;
        a = bar + 1;
    }
}

/* Rewrite path into out in dotted form with every all-digit segment
 * replaced by "#" ("violations[0].overlap_ms" -> "violations.#.overlap_ms").
 * Returns 0, or -1 for an empty segment, stray bracket or overlong path. */
static int normalize_path(const char *path, char *out, size_t outlen)
{
    size_t o = 0;
    const char *p = path;
    if (!*p)
        return -1;
    while (*p) {
        const char *seg = p;
        size_t n;
        int bracket = 0;
        if (*p == '[') {
            bracket = 1;
            seg = ++p;
            while (*p && *p != ']')
                p++;
            if (*p != ']')
                return -1;
            n = (size_t)(p - seg);
            p++;
        } else {
            while (*p && *p != '.' && *p != '[' && *p != ']')
                p++;
            if (*p == ']')
                return -1;
            n = (size_t)(p - seg);
        }
        if (n == 0)
            return -1;
        int digits = 1;
        for (size_t i = 0; i < n; i++)
            if (seg[i] < '0' || seg[i] > '9')
                digits = 0;
        if (bracket && !digits)
            return -1;
        if (*p == '.') {
            p++;
            if (!*p)
                return -1; /* trailing dot */
        }
        size_t need = (o ? 1 : 0) + (digits ? 1 : n);
        if (o + need + 1 > outlen)
            return -1;
        if (o)
            out[o++] = '.';
        if (digits) {
            out[o++] = '#';
        } else {
            memcpy(out + o, seg, n);
            o += n;
        }
    }
    out[o] = '\0';
    return 0;
}

/* Contract: 1 when path names a documented numeric or boolean member of
 * result.json (path_table; indexes as ".N" or "[N]"), else 0. Used by the
 * workload loader to refuse an expectation on an unknown path. */
int result_path_valid(const char *path)
{
    char norm[512];
    if (!path || normalize_path(path, norm, sizeof(norm)) < 0)
        return 0;
    size_t len = strlen(norm);
    for (size_t r = 0; r < sizeof(path_table) / sizeof(path_table[0]); r++) {
        const struct path_row *row = &path_table[r];
        if (!row->prefixes[0]) {
            if (alt_match(row->fields, norm, len))
                return 1;
            continue;
        }
        const char *dot = strrchr(norm, '.');
        if (!dot)
            continue;
        if (alt_match(row->prefixes, norm, (size_t)(dot - norm)) &&
            alt_match(row->fields, dot + 1, len - (size_t)(dot - norm) - 1))
            return 1;
    }
    return 0;
}

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

/* "verdict" from the rule of docs/result-format.md: expectations decide
 * alone when there are any; otherwise verdict_checks does; an interrupted
 * run never passes. */
static void set_verdict(struct json *result, int nexpects, int nfailed)
{
    const char *v;
    if (nexpects > 0) {
        v = nfailed ? "fail" : "pass";
    } else {
        const char *vc = json_get_str(result, "verdict_checks", "unknown");
        if (strcmp(vc, "valid") == 0)
            v = "pass";
        else if (strcmp(vc, "invalid") == 0)
            v = "fail";
        else
            v = "unknown";
    }
    const struct json *intr = json_obj_get(result, "interrupted");
    if (intr && intr->type == JSON_BOOL && intr->i && strcmp(v, "pass") == 0)
        v = "unknown";
    json_obj_set_str(result, "verdict", v);
}

/* Contract: replaces result's "expectations" with one entry per w->expects
 * ({path, want, got, ok}; got is the number found at path, a bool as 1/0,
 * null when the path is missing or not a number, and then ok is false) and
 * re-derives "verdict" from them (so the two never disagree). w may be NULL
 * (no expectations). Returns the number of failed expectations. */
int result_eval_expectations(struct json *result, const struct workload *w)
{
    struct json *arr = json_new_arr();
    int n = w ? w->nexpects : 0, failed = 0;
    for (int i = 0; i < n; i++) {
        const struct expect_spec *e = &w->expects[i];
        const struct json *v = json_path(result, e->path);
        struct json *got = NULL;
        int ok = 0;
        if (v && v->type == JSON_NUM) {
            got = json_clone(v);
            ok = expect_holds(e->op, v->d, v->is_int, v->i, e->value);
        } else if (v && v->type == JSON_BOOL) {
            got = json_new_int(v->i ? 1 : 0);
            ok = expect_holds(e->op, v->i ? 1.0 : 0.0, 1, v->i ? 1 : 0, e->value);
        } else {
            got = json_new_null();
        }
        struct json *ent = json_arr_push(arr, json_new_obj());
        json_obj_set_str(ent, "path", e->path);
        json_obj_set_str(ent, "want", e->want ? e->want : "");
        json_obj_set(ent, "got", got);
        json_obj_set_bool(ent, "ok", ok);
        if (!ok)
            failed++;
    }
    json_obj_set(result, "expectations", arr);
    set_verdict(result, n, failed);
    return failed;
}

/* Contract: 0 for verdict "pass", 1 for "fail", 4 for "unknown" or a
 * missing/odd verdict (DESIGN.md "Command line"). */
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
struct json *result_build(const struct history *h, const struct check_params *p)
{
    struct json *res = json_new_obj();
    json_obj_set_str(res, "format", RESULT_FORMAT);
    json_obj_set_int(res, "version", RESULT_VERSION);
    json_obj_set_str(res, "tool_version", LS_VERSION);
    json_obj_set(res, "seed", seed_json(h->workload));
    json_obj_set_str(res, "verdict", "unknown"); /* placeholder: keeps it near the top */
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
    json_obj_set(res, "workload", h->workload ? workload_to_json(h->workload) : json_new_null());

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
    result_eval_expectations(res, h->workload);
    /* Last, being the bulkiest: the charts' data (bounded in size). */
    json_obj_set(res, "series", series_build(h, res));
    return res;
}
