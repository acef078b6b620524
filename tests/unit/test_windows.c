/*
 * test_windows.c: the per-fault-window checker (checkers/windows.c) on a
 * hand-built history: which attempts fall in which window and phase, their
 * outcomes and latency, the violations each window saw, skipped faults left
 * out, overlapping windows merged for the phases; plus the text table and
 * the documented result paths. No Redis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "reports/result.h"
#include "model/resultpath.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char *tmp;

static long long ns(double t_ms)
{
    return llround(t_ms * 1e6);
}

static void line(struct strbuf *sb, double t, int w, const char *type, const char *res,
                 const char *extra)
{
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\"", ns(t), w, type);
    if (res)
        sb_printf(sb, ",\"res\":\"%s\"", res);
    if (extra && *extra)
        sb_printf(sb, ",%s", extra);
    sb_puts(sb, "}\n");
}

static void invoke(struct strbuf *sb, double t, int w, const char *res)
{
    line(sb, t, w, "acquire_invoke", res, "\"attempt\":1");
}

static void ok(struct strbuf *sb, double t, int w, const char *res, double valid_until)
{
    char extra[160];
    snprintf(extra, sizeof(extra), "\"token\":\"w%d-%g\",\"fence\":null,\"valid_until\":%lld", w,
             t, ns(valid_until));
    line(sb, t, w, "acquire_ok", res, extra);
}

static void add_fault(struct history *h, int id, const char *kind, double start, double end,
                      int skipped)
{
    h->faults = xrealloc(h->faults, (size_t)(h->nfaults + 1) * sizeof(*h->faults));
    struct fault_window *f = &h->faults[h->nfaults++];
    memset(f, 0, sizeof(*f));
    f->id = id;
    snprintf(f->kind, sizeof(f->kind), "%s", kind);
    snprintf(f->target, sizeof(f->target), "node:0");
    f->worker = -1;
    f->node = 0;
    f->start = ns(start);
    f->end = ns(end);
    f->skipped = skipped;
    f->record = json_new_obj();
}

static int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || v->type != JSON_NUM) {
        fprintf(stderr, "  (no number at %s)\n", path);
        return -999999;
    }
    return v->is_int ? v->i : (int64_t)llround(v->d);
}

static double getd(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_NUM ? v->d : NAN;
}

/*
 * worker 0 (r1 attempts, then a long hold of r0):
 *   10 invoke r0 -> 11 ok (lease to 61), enter 11 .. exit 270   (stale after 61)
 *   100 invoke r1 -> 100.5 busy; 200 invoke r1 -> 400 unknown; 500 invoke r1 -> 501 ok
 * worker 1:
 *   150 invoke r1 -> 150.2 fail; 250 invoke r0 -> 252 ok, enter 253 .. exit 258
 *   255 invoke r1 (no outcome: crash at 260)
 * faults: 0 = [90, 210), 1 skipped at 300, 2 = [240, 300), 3 = [280, 290) inside 2
 * The overlap of the r0 holds, [253, 258], lies in fault 2 only.
 */
static struct json *build(struct history *h)
{
    struct strbuf sb = STRBUF_INIT;
    invoke(&sb, 10, 0, "r0");
    ok(&sb, 11, 0, "r0", 61);
    line(&sb, 11, 0, "enter", "r0", NULL);
    invoke(&sb, 100, 0, "r1");
    line(&sb, 100.5, 0, "acquire_busy", "r1", NULL);
    invoke(&sb, 200, 0, "r1");
    line(&sb, 270, 0, "exit", "r0", NULL);
    line(&sb, 270.1, 0, "release_invoke", "r0", NULL);
    line(&sb, 270.5, 0, "release_not_owner", "r0", NULL);
    line(&sb, 400, 0, "acquire_unknown", "r1", "\"err\":\"timeout\"");
    invoke(&sb, 500, 0, "r1");
    ok(&sb, 501, 0, "r1", 551);
    line(&sb, 501, 0, "enter", "r1", NULL);
    line(&sb, 502, 0, "exit", "r1", NULL);
    line(&sb, 502.1, 0, "release_invoke", "r1", NULL);
    line(&sb, 502.5, 0, "release_ok", "r1", NULL);
    invoke(&sb, 150, 1, "r1");
    line(&sb, 150.2, 1, "acquire_fail", "r1", "\"err\":\"ERR\"");
    invoke(&sb, 250, 1, "r0");
    ok(&sb, 252, 1, "r0", 302);
    line(&sb, 253, 1, "enter", "r0", NULL);
    line(&sb, 258, 1, "exit", "r0", NULL);
    line(&sb, 258.1, 1, "release_invoke", "r0", NULL);
    line(&sb, 258.5, 1, "release_ok", "r0", NULL);
    invoke(&sb, 255, 1, "r1");
    line(&sb, 260, 1, "crash", NULL, NULL);

    char path[4096];
    snprintf(path, sizeof(path), "%s/h.jsonl", tmp);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(sb.buf, f);
    fclose(f);
    sb_free(&sb);
    struct ls_err err = {0, ""};
    if (history_load_jsonl(path, h, &err) != 0) {
        fprintf(stderr, "load: %s\n", err.msg);
        return NULL;
    }
    add_fault(h, 0, "pause", 90, 210, 0);
    add_fault(h, 1, "pause", 300, 300, 1);
    add_fault(h, 2, "latency", 240, 300, 0);
    add_fault(h, 3, "pause", 280, 290, 0);
    struct check_params p;
    check_params_from(h, &p);
    return check_run(h, &p);
}

static void test_windows(void)
{
    struct history h;
    memset(&h, 0, sizeof(h));
    struct json *r = build(&h);
    REQUIRE(r != NULL);
    CHECK_INT(geti(r, "checks.mutex.violations"), 1);
    const struct json *wins = json_obj_get(r, "fault_windows");
    REQUIRE(wins && wins->type == JSON_ARR);
    CHECK_INT(wins->n, 3); /* the skipped one is left out */
    CHECK_INT(geti(r, "fault_windows.0.id"), 0);
    CHECK_INT(geti(r, "fault_windows.0.attempts"), 3);
    CHECK_INT(geti(r, "fault_windows.0.grants"), 0);
    CHECK_INT(geti(r, "fault_windows.0.busy"), 1);
    CHECK_INT(geti(r, "fault_windows.0.failed"), 1);
    CHECK_INT(geti(r, "fault_windows.0.unknown"), 1);
    CHECK_INT(geti(r, "fault_windows.0.violations"), 0);
    /* latencies 0.5, 200, 0.2 ms: the median is 0.5 */
    CHECKF(fabs(getd(r, "fault_windows.0.acquire_p50_ms") - 0.5) < 0.01, "p50 %g",
           getd(r, "fault_windows.0.acquire_p50_ms"));
    CHECKF(fabs(getd(r, "fault_windows.0.acquire_p99_ms") - 200) < 4, "p99 %g",
           getd(r, "fault_windows.0.acquire_p99_ms"));
    CHECKF(fabs(getd(r, "fault_windows.0.duration_ms") - 120) < 1e-6, "duration");
    CHECK_INT(geti(r, "fault_windows.1.id"), 2);
    CHECK_INT(geti(r, "fault_windows.1.attempts"), 2); /* 250 ok, 255 crashed */
    CHECK_INT(geti(r, "fault_windows.1.grants"), 1);
    CHECK_INT(geti(r, "fault_windows.1.violations"), 1);
    CHECK_INT(geti(r, "fault_windows.2.attempts"), 0);
    CHECK(json_path(r, "fault_windows.2.acquire_p50_ms")->type == JSON_NULL);
    CHECK_INT(geti(r, "fault_windows.2.violations"), 0);

    /* phases: fault = [90, 210) + [240, 300) (window 3 merged into 2) */
    CHECKF(fabs(getd(r, "phases.fault.duration_ms") - 180) < 1e-6, "fault duration %g",
           getd(r, "phases.fault.duration_ms"));
    CHECK_INT(geti(r, "phases.fault.attempts"), 5);
    CHECK_INT(geti(r, "phases.fault.grants"), 1);
    CHECK_INT(geti(r, "phases.fault.violations"), 1);
    CHECK_INT(geti(r, "phases.no_fault.attempts"), 2);
    CHECK_INT(geti(r, "phases.no_fault.grants"), 2);
    CHECK_INT(geti(r, "phases.no_fault.violations"), 0);
    CHECK_INT(geti(r, "phases.fault.grants") + geti(r, "phases.no_fault.grants"),
              geti(r, "counts.grants"));
    CHECK_INT(geti(r, "phases.fault.attempts") + geti(r, "phases.no_fault.attempts"),
              geti(r, "counts.attempts"));
    CHECKF(fabs(getd(r, "phases.fault.duration_ms") + getd(r, "phases.no_fault.duration_ms") -
                h.end / 1e6) < 1e-6, "durations add up to the run");
    CHECK_INT(geti(r, "phases.before_faults.attempts"), 1);
    CHECKF(fabs(getd(r, "phases.before_faults.duration_ms") - 90) < 1e-6, "before duration");
    CHECK(json_path(r, "phases.quiet_tail")->type == JSON_NULL); /* no workload */

    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    const char *txt = sb_cstr(&sb);
    CHECKF(strstr(txt, "fault windows: acquire attempts invoked inside each") != NULL, "%s", txt);
    CHECKF(strstr(txt, " 2 latency   node:0             240.0     300.0        2      1") != NULL, "%s", txt);
    CHECKF(strstr(txt, "phase no_fault") != NULL, "%s", txt);
    sb_free(&sb);
    json_free(r);
    history_free(&h);
}

static void test_no_faults(void)
{
    struct history h;
    memset(&h, 0, sizeof(h));
    struct json *r = build(&h);
    REQUIRE(r != NULL);
    json_free(r);
    for (int i = 0; i < h.nfaults; i++)
        json_free(h.faults[i].record);
    h.nfaults = 0;
    struct check_params p;
    check_params_from(&h, &p);
    r = check_run(&h, &p);
    CHECK_INT(json_obj_get(r, "fault_windows")->n, 0);
    CHECK_INT(geti(r, "phases.fault.attempts"), 0);
    CHECK_INT(geti(r, "phases.no_fault.attempts"), geti(r, "counts.attempts"));
    CHECK_INT(geti(r, "phases.before_faults.attempts"), geti(r, "counts.attempts"));
    CHECK_INT(geti(r, "phases.no_fault.violations"), 1);
    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    CHECK(strstr(sb_cstr(&sb), "fault windows") == NULL); /* no table without faults */
    sb_free(&sb);
    json_free(r);
    history_free(&h);
}

static void test_paths(void)
{
    static const char *const good[] = {
        "fault_windows.0.grants",       "fault_windows[3].acquire_p99_ms",
        "fault_windows.1.violations",   "fault_windows.0.unknown",
        "phases.no_fault.acquire_p50_ms", "phases.fault.grants",
        "phases.before_faults.attempts", "phases.quiet_tail.start_ms",
        "phases.quiet_tail.grants_per_s",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECKF(result_path_valid(good[i]), "%s should be valid", good[i]);
    static const char *const bad[] = {"fault_windows.grants", "phases.fault.start_ms",
                                      "phases.during.grants", "fault_windows.0.kind"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECKF(!result_path_valid(bad[i]), "%s should be refused", bad[i]);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_windows);
    RUN(test_no_faults);
    RUN(test_paths);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
