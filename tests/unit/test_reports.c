/*
 * test_reports.c: the JUnit, chart and HTML renderers and reports_write_all
 * on a fixed, hand-written result model (tests/unit/golden/report_model.json,
 * so checker changes do not move them). JUnit is compared with golden files
 * (tests/e2e/test_reports.sh validates the same files against
 * tests/junit.xsd with xmllint); the charts' .dat/.gp files and the HTML
 * page are checked for their structure. LS_UPDATE_GOLDEN=1 rewrites the
 * golden files. gnuplot itself is run by the end-to-end test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/checkschema.h"
#include "model/resultpath.h"
#include "reports/reports.h"
#include "reports/rmodel.h"
#include "reports/result.h"
#include "tests/unit/testing.h"

static char *tmp;

static const char *src_dir(void)
{
    const char *src = getenv("LS_SOURCE_DIR");
    return src && *src ? src : LS_SOURCE_DIR;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        sb_append(&sb, buf, n);
    fclose(f);
    if (len)
        *len = sb.len;
    sb_cstr(&sb);
    return sb_steal(&sb);
}

static struct json *model(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/unit/golden/report_model.json", src_dir());
    size_t n = 0;
    char *text = read_all(path, &n);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    struct json *j = NULL;
    char why[128];
    if (json_parse(text, n, &j, why, sizeof(why)) < 0) {
        fprintf(stderr, "%s: %s\n", path, why);
        exit(2);
    }
    free(text);
    return j;
}

/* Compare got with tests/unit/golden/<name>; LS_UPDATE_GOLDEN=1 rewrites it. */
static void check_golden(const char *name, struct strbuf *got)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/unit/golden/%s", src_dir(), name);
    const char *upd = getenv("LS_UPDATE_GOLDEN");
    if (upd && strcmp(upd, "1") == 0) {
        CHECKF(sb_write_file(got, path) == 0, "cannot write %s", path);
        fprintf(stderr, "golden: rewrote %s\n", path);
        return;
    }
    size_t wlen = 0;
    char *want = read_all(path, &wlen);
    CHECKF(want != NULL, "golden file %s missing (create it with LS_UPDATE_GOLDEN=1)", path);
    if (!want)
        return;
    if (wlen != got->len || memcmp(want, sb_cstr(got), wlen) != 0) {
        const char *a = want, *b = sb_cstr(got);
        int line = 1;
        while (*a && *b && *a == *b) {
            if (*a == '\n')
                line++;
            a++;
            b++;
        }
        fprintf(stderr, "--- %s (golden) differs from the rendering at line %d:\n-%.80s\n+%.80s\n"
                        "regenerate with LS_UPDATE_GOLDEN=1 and review git diff tests/unit/golden/\n",
                name, line, a, b);
        CHECKF(0, "%s differs from its golden file", name);
    }
    free(want);
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = hay; p && (p = strstr(p, needle)); p += l)
        n++;
    return n;
}

/* ---- JUnit ------------------------------------------------------------- */

/* With expectations: they decide; a failed one fails and carries the story. */
static void test_junit_expectations(void)
{
    struct json *r = model();
    struct strbuf sb = STRBUF_INIT;
    render_junit(r, &sb);
    const char *x = sb_cstr(&sb);
    CHECK(contains(x, "<testsuites name=\"lockstorm\" tests=\"6\" failures=\"1\" errors=\"0\""));
    CHECK(contains(x, "<testsuite name=\"lockstorm.demo\" tests=\"6\" failures=\"1\""));
    CHECK(contains(x, "timestamp=\"2026-11-22T05:31:22\""));
    CHECK_INT(count(x, "<testcase "), 6);
    CHECK_INT(count(x, "<failure "), 1);
    CHECK(contains(x, "message=\"checks.fencing.fenced_lost_updates: wanted 0, got 2\""));
    CHECK(contains(x, "name=\"expect checks.mutex.by_class.stale_holder &gt; 0\""));
    CHECK(contains(x, "  t=1.310s pause w3 (fault #2)\n"));
    CHECK(contains(x, "  =&gt; stale-holder: w3 overstayed its lease by 338 ms"));
    /* the invalid checkers do not fail: the expect: block decides */
    CHECK(contains(x, "not a failure by itself"));
    check_golden("junit_expect.xml", &sb);
    sb_free(&sb);
    json_free(r);
}

/* Without expectations: invalid checkers fail, unknown ones are errors,
 * an interrupted run is an error. */
static void test_junit_checks(void)
{
    struct json *r = model();
    json_obj_set(r, "expectations", json_new_arr());
    json_obj_set_bool(r, "interrupted", 1);
    json_obj_set_str(json_path(r, "checks.liveness"), "verdict", "unknown");
    json_obj_set_str(json_path(r, "checks.liveness"), "reason", "a hold has no exit");
    struct strbuf sb = STRBUF_INIT;
    render_junit(r, &sb);
    const char *x = sb_cstr(&sb);
    CHECK(contains(x, "tests=\"5\" failures=\"2\" errors=\"2\""));
    CHECK(contains(x, "<failure message=\"mutex: invalid: violations=14 (stale-holder=14 "
                      "lock-broken=0) near_misses=3\" type=\"invalid\">"));
    CHECK(contains(x, "<error message=\"liveness: unknown: longest_stall_ms=520.4 "
                      "crash_to_next_grant_ms=null stuck_resources=0 (a hold has no exit)\" "
                      "type=\"unknown\">"));
    CHECK(contains(x, "type=\"interrupted\""));
    check_golden("junit_checks.xml", &sb);
    sb_free(&sb);
    json_free(r);
}

/* ---- checkers rendered from their descriptions (model/checkschema.h) ---- */

/* The text and JUnit lines of sections the model fixture lacks: fencing
 * without fences offered, fencing without the storage's final values, the
 * jobs checker, and a checker with no description (its verdict and reason
 * only). The expected lines are what the per-checker renderers printed
 * before the descriptions replaced them. */
static void test_checkschema(void)
{
    struct json *r = model();
    json_obj_set(r, "expectations", json_new_arr());
    struct json *checks = json_obj_get(r, "checks");
    struct json *f = json_obj_get(checks, "fencing");
    json_obj_set_str(f, "verdict", "valid");
    json_obj_set_bool(f, "offered", 0);
    json_obj_set_int(f, "plain_accepted_writes", 83);
    struct json *j = json_obj_set(checks, "jobs", json_new_obj());
    json_obj_set_str(j, "verdict", "invalid");
    json_obj_set_str(j, "layers", "lock+fence");
    json_obj_set_int(j, "jobs", 10);
    json_obj_set_int(j, "duplicates", 1);
    json_obj_set_int(j, "extra_effects", 0);
    json_obj_set_int(j, "refused", 2);
    json_obj_set_str(j, "note", "a note");
    struct json *q = json_obj_set(checks, "quorum", json_new_obj());
    json_obj_set_str(q, "verdict", "invalid");
    json_obj_set_int(q, "violations", 4);
    json_obj_set_str(q, "reason", "two leaders");
    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(contains(t, "\n  fencing   valid       fences not offered; plain_lost=9 "
                       "plain_writes=83\n"), "%s", t);
    CHECKF(contains(t, "\n  jobs      invalid !!! layers=lock+fence jobs=10 duplicates=1 "
                       "extra_effects=0 missed=- refused=2 (a note)\n"), "%s", t);
    CHECKF(contains(t, "\n  quorum    invalid !!! (two leaders)\n"), "%s", t);
    CHECKF(contains(t, "found 14 stale-holder overlaps and jobs invalid, quorum invalid ("),
           "%s", t);
    sb_free(&sb);
    render_junit(r, &sb);
    t = sb_cstr(&sb);
    CHECKF(contains(t, "message=\"quorum: invalid (two leaders)\""), "%s", t);
    CHECKF(contains(t, "message=\"jobs: invalid (a note)\""), "%s", t);
    CHECKF(contains(t, "<system-out>fencing: valid: offered=false plain_lost_updates=9 "
                       "fenced_lost_updates=2 stale_ops_rejected=12 fence_regressions=0\n"),
           "%s", t);
    sb_free(&sb);

    /* no final values: only fence regressions, and only with fences offered */
    json_obj_set_bool(f, "offered", 1);
    json_obj_set_bool(f, "available", 0);
    json_obj_set_int(f, "fence_regressions", 3);
    json_obj_set_str(f, "note", "no counters");
    render_text(r, &sb);
    t = sb_cstr(&sb);
    CHECKF(contains(t, "\n  fencing   valid       fence_regressions=3 (no counters)\n"), "%s", t);
    sb_free(&sb);

    /* every checker of the fixture has a description, an unknown name none */
    for (size_t i = 0; i < checks->n; i++)
        CHECKF(checkschema_find(checks->keys[i]) || strcmp(checks->keys[i], "quorum") == 0,
               "no description for checker %s", checks->keys[i]);
    CHECK(checkschema_find("quorum") == NULL);
    CHECK(checkschema_find(NULL) == NULL);
    json_free(r);

    /* Every number a description shows is a documented result path
     * (model/resultpath.h): a misspelt field would print "-" for ever. */
    for (int i = 0; i < ncheckschemas; i++) {
        const struct checkschema *cs = &checkschemas[i];
        const struct checkfield *lists[] = {cs->text, cs->junit};
        for (size_t l = 0; l < 2; l++) {
            for (const struct checkfield *fl = lists[l]; fl && (fl->pre || fl->path); fl++) {
                if (!fl->path || fl->fmt == CF_STR || fl->fmt == CF_NONE)
                    continue;
                char path[256];
                snprintf(path, sizeof(path), "checks.%s.%s", cs->name, fl->path);
                CHECKF(result_path_valid(path), "%s: not a documented result path", path);
            }
        }
    }
}

/* ---- incidents, one story per class, how the verdict follows ----------- */

/* Set key of obj to the JSON text js (a test's own literal). */
static void set_json(struct json *obj, const char *key, const char *js)
{
    struct json *v = NULL;
    char why[128];
    if (json_parse(js, strlen(js), &v, why, sizeof(why)) < 0) {
        fprintf(stderr, "bad test JSON for %s: %s\n", key, why);
        exit(2);
    }
    json_obj_set(obj, key, v);
}

/* The report model with what the mutex, evidence and coverage parts add:
 * two incidents (the lock-broken one second in time), a story for the
 * lock-broken violation, an expectation on lock_broken that fails and
 * one on a value that was not measured. */
static struct json *incidents_model(void)
{
    struct json *r = model();
    struct json *v1 = json_arr_get(json_obj_get(r, "violations"), 1);
    set_json(v1, "story",
             "[{\"t_ms\":2559,\"kind\":\"grant\",\"text\":\"w4 acquires r1 (no fence)\"},"
             "{\"t_ms\":2560,\"kind\":\"overlap\",\"text\":\"overlap on r1 2.560–2.600s (40 ms)\"},"
             "{\"t_ms\":2600,\"kind\":\"conclusion\",\"text\":\"lock-broken: r1 was granted to "
             "w4 while w1 held a grant with no expiry\"}]");
    struct json *m = json_path(r, "checks.mutex");
    set_json(m, "by_class", "{\"stale_holder\":13,\"lock_broken\":1}");
    json_obj_set_int(m, "incidents", 2);
    set_json(m, "incidents_by_class", "{\"stale_holder\":1,\"lock_broken\":1}");
    set_json(r, "incidents",
             "[{\"id\":1,\"class\":\"stale-holder\",\"resource\":\"r0\",\"cause\":{\"worker\":3,"
             "\"token\":\"w3\",\"fence\":41,\"acquired_ms\":1204,\"valid_until_ms\":1504,"
             "\"enter_ms\":1204.1,\"exit_ms\":1842},\"violations\":13,\"listed\":[0],"
             "\"start_ms\":1511.1,\"end_ms\":1900,\"faults\":[2],\"first_violation\":0},"
             "{\"id\":2,\"class\":\"lock-broken\",\"resource\":\"r1\",\"cause\":{\"worker\":1,"
             "\"token\":\"a1\",\"fence\":null,\"acquired_ms\":2200,\"valid_until_ms\":null,"
             "\"enter_ms\":2201,\"exit_ms\":2600,\"crashed\":true},\"violations\":1,"
             "\"listed\":[1],\"start_ms\":2560,\"end_ms\":2600,\"faults\":[],"
             "\"first_violation\":1}]");
    set_json(r, "expectations",
             "[{\"path\":\"checks.mutex.by_class.stale_holder\",\"want\":\"> 0\",\"got\":13,"
             "\"ok\":true},"
             "{\"path\":\"checks.mutex.by_class.lock_broken\",\"want\":\"0\",\"got\":1,"
             "\"ok\":false},"
             "{\"path\":\"checks.fencing.fenced_lost_updates\",\"want\":\"0\",\"got\":null,"
             "\"ok\":false,\"why\":\"not measured: fencing not offered\"}]");
    return r;
}

/* The text between the testcase named name and its end ("" when none). */
static char *testcase_of(const char *x, const char *name)
{
    const char *a = strstr(x, name);
    const char *b = a ? strstr(a, "</testcase>") : NULL;
    struct strbuf sb = STRBUF_INIT;
    if (a && b)
        sb_append(&sb, a, (size_t)(b - a));
    sb_cstr(&sb);
    return sb_steal(&sb);
}

static void test_text_incidents(void)
{
    struct json *r = incidents_model();
    struct strbuf sb = STRBUF_INIT;
    render_text(r, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(contains(t, "incidents  2 (stale-holder=1 lock-broken=1) grouping violations=14, "
                       "lock-broken first:\n"
                       "  #2 r1 lock-broken cause=w1(killed) overlaps=1 at=2560..2600ms "
                       "faults=none\n"
                       "  #1 r0 stale-holder cause=w3 overlaps=13 at=1511.1..1900ms "
                       "faults=pause(w3)\n"), "%s", t);
    const char *lb = strstr(t, "story of violation 2 (r1 lock-broken, incident #2):\n");
    const char *sh = strstr(t, "story of violation 1 (r0 stale-holder, incident #1):\n");
    CHECK(lb != NULL && sh != NULL && lb < sh);
    CHECK(contains(t, "faults=pause(w3)\n  r1 lock-broken"));
    CHECK(contains(t, "got -          FAILED (not measured: fencing not offered)\n"));
    CHECK(contains(t, "checkers   overall invalid (findings: the expect: block decides the "
                      "verdict)\n"));
    CHECKF(contains(t, "\nverdict    FAIL: 2 of 3 expectations unmet "
                       "(checks.mutex.by_class.lock_broken: wanted 0, got 1; "
                       "checks.fencing.fenced_lost_updates: wanted 0, got -, not measured: "
                       "fencing not offered)\nlockstorm: FAIL "), "%s", t);
    CHECK(contains(t, " seed=7 incidents=2 (violations=14 stale-holder=13 lock-broken=1) "
                      "plain_lost=9 "));
    CHECK(!contains(t, "evidence   ")); /* no evidence section in the model: no line */
    CHECK(!contains(t, "coverage   "));

    /* all met: the findings were allowed, and the line says so */
    set_json(r, "expectations", "[{\"path\":\"checks.mutex.violations\",\"want\":\"> 0\","
                                "\"got\":14,\"ok\":true}]");
    json_obj_set_str(r, "verdict", "pass");
    struct strbuf line = STRBUF_INIT;
    render_verdict_why(r, &line);
    CHECK_STR(sb_cstr(&line), "PASS: 1 of 1 expectation met; the checkers found 1 lock-broken "
                              "and 13 stale-holder overlaps in 2 incidents and fencing invalid, "
                              "as expected");
    set_json(r, "expectations", "[{\"path\":\"counts.grants\",\"want\":\"> 0\",\"got\":602,"
                                "\"ok\":true}]");
    sb_reset(&line);
    render_verdict_why(r, &line);
    CHECK(contains(sb_cstr(&line), "in 2 incidents and fencing invalid, which no expectation is about"));
    /* met, and the checkers could not decide: no "as expected" about that */
    json_obj_set_str(r, "verdict_checks", "unknown");
    struct json *saved = json_clone(json_obj_get(r, "checks"));
    set_json(r, "checks", "{\"mutex\":{\"verdict\":\"unknown\",\"violations\":0,"
                          "\"reason\":\"a hold has no exit\"}}");
    sb_reset(&line);
    render_verdict_why(r, &line);
    CHECK_STR(sb_cstr(&line), "PASS: 1 of 1 expectation met; the checkers could not decide "
                              "(mutex: a hold has no exit)");
    json_obj_set(r, "checks", saved);
    json_obj_set_str(r, "verdict_checks", "invalid");
    /* no expect: block: the checkers' verdict, and it says so */
    json_obj_set(r, "expectations", json_new_arr());
    json_obj_set_str(r, "verdict", "fail");
    sb_reset(&line);
    render_verdict_why(r, &line);
    CHECK_STR(sb_cstr(&line), "FAIL: the checkers found 1 lock-broken and 13 stale-holder "
                              "overlaps in 2 incidents and fencing invalid (the verdict is the "
                              "checkers': no expect: block)");
    /* unknown: the reasons, joined */
    json_obj_set_str(r, "verdict", "unknown");
    set_json(r, "verdict_reasons", "[\"evidence: worker-003.bin is missing\","
                                   "\"no fault took effect (0 of 6 bit)\"]");
    sb_reset(&line);
    render_verdict_why(r, &line);
    CHECK_STR(sb_cstr(&line), "UNKNOWN: evidence: worker-003.bin is missing; no fault took "
                              "effect (0 of 6 bit)");
    /* evidence and coverage, when the model has them */
    set_json(r, "evidence", "{\"complete\":false,\"gaps\":[\"worker-003.bin: missing (run.json "
                            "lists it)\"],\"run_id\":\"r-1\",\"run_state\":\"finished\","
                            "\"logs\":{\"expected\":6,\"found\":5,\"missing\":1,\"foreign\":0,"
                            "\"damaged\":0}}");
    set_json(r, "coverage", "{\"holds\":602,\"grants\":602,\"contended_acquires\":300,"
                            "\"grant_floor\":50,\"enough_activity\":true,\"faults\":"
                            "{\"occurrences\":6,\"bit\":5,\"not_bit\":1,\"undecided\":0,"
                            "\"late\":0,\"max_late_ms\":0}}");
    sb_reset(&sb);
    render_text(r, &sb);
    t = sb_cstr(&sb);
    CHECKF(contains(t, "\nevidence   incomplete ??? logs=5/6 missing=1 foreign=0 damaged=0 "
                       "run_id=r-1 run_state=finished\n"
                       "  ??? worker-003.bin: missing (run.json lists it)\n"), "%s", t);
    CHECKF(contains(t, "\ncoverage   holds=602 grants=602 contended=300 grant_floor=50 "
                       "enough_activity=yes; faults that bit: 5 of 6 not_bit=1 undecided=0 "
                       "late=0\n"), "%s", t);
    CHECK(contains(t, "\nverdict    UNKNOWN: evidence: worker-003.bin is missing; "));
    sb_free(&line);
    sb_free(&sb);
    json_free(r);
}

/* JUnit: a failed expectation carries a story of the class it is about;
 * an unknown verdict's reasons are an error. */
static void test_junit_incidents(void)
{
    struct json *r = incidents_model();
    struct strbuf sb = STRBUF_INIT;
    render_junit(r, &sb);
    const char *x = sb_cstr(&sb);
    char *lb = testcase_of(x, "name=\"expect checks.mutex.by_class.lock_broken 0\"");
    CHECKF(contains(lb, "<failure message=\"checks.mutex.by_class.lock_broken: wanted 0, got 1\""),
           "%s", lb);
    CHECK(contains(lb, "story of violation 2 (r1 lock-broken):"));
    CHECK(contains(lb, "=&gt; lock-broken: r1 was granted to w4"));
    CHECK(!contains(lb, "stale-holder"));
    free(lb);
    char *fl = testcase_of(x, "name=\"expect checks.fencing.fenced_lost_updates 0\"");
    CHECK(contains(fl, "message=\"checks.fencing.fenced_lost_updates: wanted 0, got null "
                       "(not measured: fencing not offered)\""));
    CHECK(contains(fl, "story of violation 2 (r1 lock-broken):")); /* the first story */
    free(fl);
    char *mx = testcase_of(x, "name=\"check mutex\"");
    CHECK(contains(mx, "incidents=2 (stale-holder=1 lock-broken=1)"));
    const char *a = strstr(mx, "(r1 lock-broken)"), *b = strstr(mx, "(r0 stale-holder)");
    CHECK(a && b && a < b); /* one story per class, lock-broken first */
    free(mx);
    CHECK(contains(x, "<system-out>FAIL: 2 of 3 expectations unmet ("));
    CHECK(!contains(x, "verdict decided"));

    json_obj_set_str(r, "verdict", "unknown");
    set_json(r, "verdict_reasons", "[\"evidence: worker-003.bin is missing\","
                                   "\"too little activity: 12 grants (floor 50)\"]");
    sb_reset(&sb);
    render_junit(r, &sb);
    x = sb_cstr(&sb);
    CHECK(contains(x, "tests=\"8\" failures=\"2\" errors=\"1\""));
    CHECK(contains(x, "<error message=\"the verdict is unknown: evidence: worker-003.bin is "
                      "missing; too little activity: 12 grants (floor 50)\" type=\"unknown\">"));
    check_golden("junit_incidents.xml", &sb);
    sb_free(&sb);
    json_free(r);
}

/* HTML: the incidents table leads the findings, the lock-broken story
 * comes first, faults by name. */
static void test_html_incidents(void)
{
    struct json *r = incidents_model();
    struct strbuf sb = STRBUF_INIT;
    render_html(r, tmp, "charts skipped: test", &sb);
    const char *h = sb_cstr(&sb);
    const char *chk = strstr(h, "<section id=\"checks\">");
    const char *inc = strstr(h, "<section id=\"incidents\">");
    const char *cha = strstr(h, "<section id=\"charts\">");
    CHECK(chk && inc && cha && chk < inc && inc < cha);
    CHECK(contains(h, "<a href=\"#story-2\">violation 2</a>"));
    CHECK(contains(h, "<td>w1 (killed), fence -</td>"));
    CHECK(contains(h, "<td>pause holder (w3)</td>")); /* kind, target, who it hit */
    CHECK(contains(h, "<tr data-row data-incident=\"2\">"));
    const char *s2 = strstr(h, "id=\"story-2\""), *s1 = strstr(h, "id=\"story-1\"");
    CHECK(s1 && s2 && s2 < s1);
    CHECK(contains(h, "<div class=\"why\">FAIL: 2 of 3 expectations unmet ("));
    CHECK(contains(h, "incidents 2 &middot; violations 14"));
    CHECK(contains(h, "FAILED</span> not measured: fencing not offered</td>"));
    CHECK(!contains(h, "<section id=\"evidence\">")); /* the model has none */
    /* evidence, coverage and an unknown verdict's reasons, when there */
    json_obj_set_str(r, "verdict", "unknown");
    set_json(r, "verdict_reasons", "[\"evidence: worker-003.bin is missing\"]");
    set_json(r, "evidence", "{\"complete\":false,\"gaps\":[\"worker-003.bin: missing\"],"
                            "\"run_id\":\"r-1\",\"run_state\":\"finished\",\"logs\":"
                            "{\"expected\":6,\"found\":5,\"missing\":1,\"foreign\":0,"
                            "\"damaged\":0}}");
    set_json(r, "coverage", "{\"holds\":602,\"grants\":602,\"faults\":{\"occurrences\":6,"
                            "\"bit\":5}}");
    sb_reset(&sb);
    render_html(r, tmp, "charts skipped: test", &sb);
    h = sb_cstr(&sb);
    const char *ex = strstr(h, "<section id=\"expectations\">");
    const char *ev = strstr(h, "<section id=\"evidence\">");
    chk = strstr(h, "<section id=\"checks\">");
    CHECK(ex && ev && chk && ex < ev && ev < chk);
    CHECK(contains(h, "<li>evidence: worker-003.bin is missing</li>"));
    CHECK(contains(h, "<span class=\"badge unknown\">incomplete</span>"));
    CHECK(contains(h, "<li>worker-003.bin: missing</li>"));
    CHECK(contains(h, "<div><b>took effect (bit)</b> 5</div>"));
    CHECK(contains(h, "<div class=\"why\">UNKNOWN: evidence: worker-003.bin is missing</div>"));
    sb_free(&sb);
    json_free(r);
}

/* ---- formats ------------------------------------------------------------- */

static void test_formats(void)
{
    unsigned f = 0;
    char why[160];
    CHECK(reports_parse_formats("text,json", &f, why, sizeof(why)) == 0);
    CHECK_INT(f, REPORT_TEXT | REPORT_JSON);
    CHECK(reports_parse_formats("all", &f, why, sizeof(why)) == 0 && f == REPORT_ALL);
    CHECK(reports_parse_formats("junit,html", &f, why, sizeof(why)) == 0);
    CHECK_INT(f, REPORT_JUNIT | REPORT_HTML);
    CHECK(reports_parse_formats("text,pdf", &f, why, sizeof(why)) < 0);
    CHECK(contains(why, "unknown format 'pdf'"));
    CHECK(reports_parse_formats("", &f, why, sizeof(why)) < 0);
    CHECK(reports_parse_formats("text,", &f, why, sizeof(why)) < 0);
    CHECK(reports_parse_formats("md", &f, why, sizeof(why)) == 0 && f == REPORT_MD);
    CHECK(reports_parse_formats("junit,markdown", &f, why, sizeof(why)) == 0);
    CHECK_INT(f, REPORT_JUNIT | REPORT_MD);
    CHECK(reports_parse_formats("all", &f, why, sizeof(why)) == 0 && (f & REPORT_MD));
}

/* ---- charts and HTML without gnuplot ------------------------------------ */

static int file_size(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? (int)st.st_size : -1;
}

static char *file_text(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return read_all(path, NULL);
}

/* gnuplot missing: the .dat/.gp files, style.gp and faults.gp are still
 * written, the note says so, and the HTML shows it in place of charts. */
static void test_charts_without_gnuplot(void)
{
    struct json *r = model();
    setenv("LS_GNUPLOT", "/nonexistent/gnuplot", 1);
    struct strbuf written = STRBUF_INIT;
    struct ls_err err = {0, ""};
    FILE *notes = tmpfile();
    REQUIRE(notes != NULL);
    CHECK(reports_write_all(tmp, r, REPORT_HTML, notes, &written, &err) == 0);
    unsetenv("LS_GNUPLOT");
    rewind(notes);
    char line[256] = "";
    CHECK(fgets(line, sizeof(line), notes) != NULL);
    CHECK_STR(line, "lockstorm: charts skipped: gnuplot not found\n");
    CHECK(fgets(line, sizeof(line), notes) == NULL); /* one line */
    fclose(notes);
    CHECK(contains(sb_cstr(&written), "timeline.dat timeline.gp"));
    CHECK(contains(sb_cstr(&written), "report.html"));
    CHECK(!contains(sb_cstr(&written), "result.json")); /* only what was asked */
    CHECK_INT(file_size(tmp, "result.json"), -1);
    static const char *const names[] = {"timeline", "latency", "rate", "fencing"};
    for (size_t i = 0; i < 4; i++) {
        char dat[64], gp[64];
        snprintf(dat, sizeof(dat), "%s.dat", names[i]);
        snprintf(gp, sizeof(gp), "%s.gp", names[i]);
        CHECKF(file_size(tmp, dat) > 0, "%s", dat);
        char *g = file_text(tmp, gp);
        CHECKF(g && contains(g, "load 'style.gp'") && contains(g, "load 'faults.gp'"),
               "%s loads the shared style and the fault windows", gp);
        char out[80];
        snprintf(out, sizeof(out), "set output '%s.svg'", names[i]);
        CHECK(contains(g, out));
        free(g);
    }
    char *style = file_text(tmp, "style.gp");
    CHECK(contains(style, "ls_terminal(w, h)"));
    free(style);
    /* faults.gp shades the injected fault (seconds) and skips the skipped one */
    char *fg = file_text(tmp, "faults.gp");
    CHECK(contains(fg, "set object 100 rect from 1.31, graph 0 to 1.81, graph 1"));
    CHECK(!contains(fg, "set object 101"));
    CHECK(contains(fg, "ls_nfaults = 1"));
    free(fg);
    /* .dat: header comment naming the columns, rows as the model has them */
    char *rate = file_text(tmp, "rate.dat");
    CHECK(contains(rate, "# columns: t_ms grants_per_s busy_per_s unknown_per_s failed_per_s\n"));
    CHECK(contains(rate, "\n100 70 40 10 0\n"));
    free(rate);
    char *fen = file_text(tmp, "fencing.dat");
    CHECK(contains(fen, "\n300 2 NaN 1\n")); /* null -> NaN */
    free(fen);
    char *tl = file_text(tmp, "timeline.dat");
    CHECK(contains(tl, "\n1 110 150 NaN crash\n"));
    CHECK(contains(tl, "\n0 110 150 stale-holder\n"));
    CHECK_INT(count(tl, "\n\n\n"), 3); /* four index blocks */
    free(tl);
    char *tg = file_text(tmp, "timeline.gp");
    CHECK(contains(tg, "set ytics font ',10' ('r0 w3' 0, 'r0 w5' 1)"));
    free(tg);

    char *html = file_text(tmp, "report.html");
    CHECK(contains(html, "charts skipped: gnuplot not found"));
    CHECK_INT(count(html, "<p class=\"missing\">not drawn"), 4);
    free(html);
    sb_free(&written);
    json_free(r);
}

/* The HTML page: banner, sections, inlined SVG with prefixed ids, stories,
 * escaping, no network reference. */
static void test_html(void)
{
    struct json *r = model();
    /* a chart as gnuplot writes one: prolog, defs with ids, uses */
    static const char svg[] =
        "<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
        "<svg \n viewBox=\"0 0 960 340\"\n xmlns=\"http://www.w3.org/2000/svg\"\n"
        " xmlns:xlink=\"http://www.w3.org/1999/xlink\"\n>\n<title>Gnuplot</title>\n"
        "<g id=\"gnuplot_canvas\"><defs><circle id='gpDot' r='0.5'/></defs>"
        "<use xlink:href='#gpDot' x='1' y='2'/><path fill=\"url(#gpPat1)\" d='M0,0'/></g>\n"
        "</svg>\n";
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, svg);
    char path[4096];
    for (int i = 0; i < report_ncharts; i++) {
        snprintf(path, sizeof(path), "%s/%s.svg", tmp, report_charts[i].name);
        REQUIRE(sb_write_file(&sb, path) == 0);
    }
    sb_reset(&sb);
    render_html(r, tmp, NULL, &sb);
    const char *h = sb_cstr(&sb);
    CHECK(strncmp(h, "<!DOCTYPE html>\n", 16) == 0);
    CHECK(contains(h, "<header class=\"banner fail\" id=\"verdict\" data-verdict=\"fail\">"));
    CHECK(contains(h, "<div class=\"word\">FAIL</div>"));
    CHECK(contains(h, "lockstorm: FAIL workload=demo lock=redis-single"));
    static const char *const sections[] = {"workload", "expectations", "checks", "charts",
                                           "stories", "faults", "warnings"};
    const char *prev = h;
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        char id[64];
        snprintf(id, sizeof(id), "<section id=\"%s\">", sections[i]);
        const char *at = strstr(h, id);
        CHECKF(at != NULL && at > prev, "section %s present, in order", sections[i]);
        if (at)
            prev = at;
    }
    for (int i = 0; i < report_ncharts; i++) {
        char want[128];
        snprintf(want, sizeof(want), "<figure id=\"chart-%s\">", report_charts[i].name);
        CHECK(contains(h, want));
        snprintf(want, sizeof(want), "<circle id='%s-gpDot'", report_charts[i].name);
        CHECK(contains(h, want));
        snprintf(want, sizeof(want), "xlink:href='#%s-gpDot'", report_charts[i].name);
        CHECK(contains(h, want));
        snprintf(want, sizeof(want), "url(#%s-gpPat1)", report_charts[i].name);
        CHECK(contains(h, want));
    }
    CHECK_INT(count(h, "<svg"), 4);
    CHECK(!contains(h, "<?xml"));
    CHECK(!contains(h, "<title>Gnuplot</title>"));
    /* the story, one item per line, overlap and conclusion marked */
    CHECK(contains(h, "<li class=\"fault\" data-t=\"1310\"><span class=\"t\">t=1.310s</span>pause w3 "
                      "(fault #2)</li>"));
    CHECK(contains(h, "<li class=\"overlap\" data-t=\"1511.1\">overlap on r0 1.511–1.561s (50 ms)</li>"));
    CHECK(contains(h, "<li class=\"conclusion\" data-t=\"1843\">stale-holder: w3 overstayed its lease "
                      "by 338 ms;"));
    CHECK_INT(count(h, "<article class=\"story\""), 1); /* violation 2 has no story */
    /* escaping, expectations, fault schedule */
    CHECK(contains(h, "paused holders &lt;past&gt; their TTL &amp; fencing"));
    CHECK(contains(h, "64 torn bytes &lt;after&gt; the last record &amp; more"));
    CHECK(contains(h, "<span class=\"badge failed\">FAILED</span>"));
    CHECK(contains(h, "<td>skipped: no holder</td>"));
    CHECK(contains(h, "dist uniform, min 20ms, max 80ms"));
    /* self-contained */
    CHECK(!contains(h, "http://") || count(h, "http://") == count(h, "http://www.w3.org/"));
    CHECK(!contains(h, "https://"));
    /* one inline script (the timeline's), nothing loaded */
    CHECK_INT(count(h, "<script"), 1);
    CHECK(!contains(h, "<script src"));
    CHECK(!contains(h, "<link"));
    /* a model without series.holds: the timeline says so */
    CHECK(contains(h, "<section id=\"timeline\"><h2>Timeline</h2><p class=\"missing\">"));
    sb_free(&sb);
    json_free(r);
}

/* The timeline: the data the page's script draws (series.holds as columns,
 * faults by name, every listed violation and incident), JSON that cannot
 * close its <script>, and every listed violation in the (paged) table. */
static void test_html_timeline(void)
{
    struct json *r = incidents_model();
    struct json *vs = json_obj_get(r, "violations");
    for (int i = 0; i < 28; i++) /* 30 listed: more than one page of 20 */
        json_arr_push(vs, json_clone(vs->kids[0]));
    set_json(json_obj_get(r, "series"), "holds",
             "{\"total\":3,\"kept\":3,\"sampled_every\":1,\"resources\":[\"r0\",\"r</script>1\"],"
             "\"ends\":[\"exit\",\"crash\",\"open\"],"
             "\"releases\":[\"none\",\"ok\",\"not_owner\",\"failed\"],"
             "\"columns\":{\"worker\":\"1,3,4\",\"res\":\"1,0,0\",\"grant_ms\":\"2200,1204,1510\","
             "\"enter_ms\":\"2201,1204.1,1511.1\",\"exit_ms\":\"2600,1842.25,1600\","
             "\"valid_until_ms\":\"null,1504,1810\",\"fence\":\"null,41,42\",\"end\":\"1,0,0\","
             "\"release\":\"0,2,1\",\"renewals\":\"0,2,0\",\"lost\":\"0,1,0\"}}");
    struct strbuf sb = STRBUF_INIT;
    render_html(r, tmp, "charts skipped: test", &sb);
    const char *h = sb_cstr(&sb);
    const char *inc = strstr(h, "<section id=\"incidents\">");
    const char *tl = strstr(h, "<section id=\"timeline\">");
    const char *cha = strstr(h, "<section id=\"charts\">");
    CHECK(inc && tl && cha && inc < tl && tl < cha);
    CHECK(contains(h, "<div class=\"tl\" id=\"tl\"><canvas></canvas>"));
    CHECK_INT(count(h, "<tr data-row data-violation="), 30); /* all, not the first 20 */
    CHECK(contains(h, "<table class=\"paged\" id=\"violations\">"));
    CHECK(contains(h, "<ol class=\"story\" data-story=\"1\">"));
    CHECK(!contains(h, "r</script>1")); /* the name cannot end the data's element */
    const char *a = strstr(h, "<script type=\"application/json\" id=\"tl-data\">");
    const char *b = a ? strstr(a, "</script>") : NULL;
    REQUIRE(a && b);
    a += strlen("<script type=\"application/json\" id=\"tl-data\">");
    struct json *d = NULL;
    char why[128];
    REQUIRE(json_parse(a, (size_t)(b - a), &d, why, sizeof(why)) == 0);
    CHECK_INT(rm_len(json_path(d, "holds.w")), 3);
    CHECK_INT(json_arr_get(json_path(d, "holds.f"), 1)->i, 41);
    CHECK(json_arr_get(json_path(d, "holds.l"), 0)->type == JSON_NULL);
    CHECK_INT(json_arr_get(json_path(d, "holds.end"), 0)->i, 1);    /* crash */
    CHECK_INT(json_arr_get(json_path(d, "holds.rel"), 1)->i, 2);    /* not_owner */
    CHECK_INT(json_arr_get(json_path(d, "holds.lost"), 1)->i, 1);
    CHECK(json_arr_get(json_path(d, "holds.x"), 1)->d == 1842.25);
    CHECK(strcmp(json_arr_get(json_obj_get(d, "res"), 1)->s, "r</script>1") == 0);
    CHECK(strcmp(json_get_str(json_arr_get(json_obj_get(d, "faults"), 0), "name", ""),
                 "pause holder (w3)") == 0);
    CHECK_INT(rm_len(json_obj_get(d, "violations")), 30);
    CHECK_INT(json_get_int(json_path(d, "violations.0.h.1"), "w", -1),
              json_get_int(json_path(r, "violations.0.holders.1"), "worker", -2));
    CHECK_INT(json_get_int(json_path(d, "incidents.1.cause"), "w", -1), 1);
    CHECK_INT(json_arr_get(json_path(d, "incidents.1.listed"), 0)->i, 1);
    CHECK(strcmp(json_arr_get(json_obj_get(d, "releases"), 2)->s, "not_owner") == 0);
    json_free(d);
    /* a column that is not numbers is left out, not copied into the script */
    set_json(json_path(r, "series.holds.columns"), "fence", "\"1,</script><i>zz\"");
    sb_reset(&sb);
    render_html(r, tmp, "charts skipped: test", &sb);
    CHECK(contains(sb_cstr(&sb), "\"f\":[]"));
    CHECK(!contains(sb_cstr(&sb), "<i>zz"));
    sb_free(&sb);
    json_free(r);
}

/* The JSON renderer keeps scalar arrays (series rows) on one line. */
static void test_json_rows(void)
{
    struct json *r = model();
    struct strbuf sb = STRBUF_INIT;
    render_json(r, &sb);
    CHECK(contains(sb_cstr(&sb), "\n        [100, 70, 40, 10, 0],\n"));
    CHECK(contains(sb_cstr(&sb), "\"faults\": [2],"));
    struct json *back = NULL;
    char why[128];
    REQUIRE(json_parse(sb.buf, sb.len, &back, why, sizeof(why)) == 0);
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    json_write(&a, r, -1);
    json_write(&b, back, -1);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    sb_free(&a);
    sb_free(&b);
    json_free(back);
    sb_free(&sb);
    json_free(r);
}

/* ---- the Markdown summary ----------------------------------------------- */

static void test_markdown_cells(void)
{
    struct strbuf sb = STRBUF_INIT;
    const char in[] = "a|b\nc\r\\d <e> & f_g*h`i`";
    md_cell(&sb, in, strlen(in));
    CHECK_STR(sb_cstr(&sb), "a\\|b<br>c\\\\d &lt;e> &amp; f\\_g\\*h\\`i\\`");
    sb_free(&sb);
}

static void test_markdown(void)
{
    struct json *r = incidents_model();
    /* a table cell's text with a pipe and a newline: escaped, the row whole */
    struct json *ex = json_arr_get(json_obj_get(r, "expectations"), 2);
    json_obj_set_str(ex, "why", "not measured: fencing | not\noffered");
    struct json *inc = json_arr_get(json_obj_get(r, "incidents"), 1);
    json_obj_set_str(inc, "resource", "r|1\nx");
    struct strbuf sb = STRBUF_INIT;
    render_markdown(r, &sb);
    const char *t = sb_cstr(&sb);
    CHECKF(contains(t, "## lockstorm FAIL: "), "%s", t);
    CHECK(contains(t, "**FAIL**: 2 of 3 expectations unmet ("));
    CHECK(contains(t, "```\nlockstorm: FAIL workload="));
    CHECK(contains(t, " expectations=1/3\n```\n"));
    CHECKF(contains(t, "### Incidents: 2 (lock-broken 1, stale-holder 1), grouping 14 "
                       "violations\n\n| # | class | resource | cause | overlaps | span (ms) | "
                       "faults |\n|---|---|---|---|---|---|---|\n"
                       "| 2 | lock-broken | r\\|1<br>x | w1 (killed) | 1 | 2560–2600 | none |\n"
                       "| 1 | stale-holder | r0 | w3 | 13 | 1511.1–1900 | pause(w3) |\n"),
           "%s", t);
    CHECKF(contains(t, "### Expectations: 1 of 3 met\n\n| path | op | expected | got | state |\n"
                       "|---|---|---|---|---|\n"
                       "| checks.mutex.by\\_class.stale\\_holder | > | 0 | 13 | met |\n"
                       "| checks.mutex.by\\_class.lock\\_broken | == | 0 | 1 | **unmet** |\n"
                       "| checks.fencing.fenced\\_lost\\_updates | == | 0 | - | "
                       "**not measured**: fencing \\| not<br>offered |\n"), "%s", t);
    /* every table row has as many unescaped pipes as its header */
    for (const char *line = t; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line), pipes = 0;
        for (size_t i = 0; i < n; i++)
            pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
        if (n && line[0] == '|')
            CHECKF(pipes == 6 || pipes == 8, "%.*s", (int)n, line);
        line += n + (nl != NULL);
    }
    const char *lb = strstr(t, "### Story of violation 2 (r1 lock-broken, incident #2)\n\n```text\n"
                               "t=2.559s w4 acquires r1 (no fence)\n=> overlap on r1");
    CHECKF(lb != NULL, "%s", t);
    CHECK(contains(t, "=> lock-broken: r1 was granted to w4 while w1 held a grant with no "
                      "expiry\n```\n"));
    json_free(r);
    sb_free(&sb);

    /* the file: --format md writes summary.md and only it */
    r = model();
    struct strbuf written = STRBUF_INIT;
    struct ls_err err = {0, ""};
    CHECK(reports_write_all(tmp, r, REPORT_MD, NULL, &written, &err) == 0);
    CHECK_STR(sb_cstr(&written), "summary.md");
    char *md = file_text(tmp, "summary.md");
    CHECK(md && contains(md, "## lockstorm FAIL"));
    free(md);
    sb_free(&written);
    json_free(r);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_junit_expectations);
    RUN(test_junit_checks);
    RUN(test_checkschema);
    RUN(test_formats);
    RUN(test_charts_without_gnuplot);
    RUN(test_html);
    RUN(test_json_rows);
    RUN(test_text_incidents);
    RUN(test_junit_incidents);
    RUN(test_html_incidents);
    RUN(test_html_timeline);
    RUN(test_markdown_cells);
    RUN(test_markdown);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
