/*
 * junit.c: the JUnit XML renderer (junit.xml), in the Jenkins/Surefire
 * shape CI systems read: one testsuite per run, one testcase per
 * expectation and per checker (plus one for an interrupted run and one
 * for an unknown verdict's reasons). A failed expectation carries a story
 * of the class it is about; the mutex testcase one per class present,
 * lock-broken first. With an `expect:` block the
 * expectations decide the verdict alone (docs/result-format.md "Verdict"),
 * so the checker testcases then report their verdict without failing; the
 * XML thus never disagrees with the exit code. tests/junit.xsd is the
 * schema it is checked against. Formatting only: it computes nothing.
 */
#include "model/checkschema.h"
#include "reports/reports.h"
#include "reports/result.h"
#include "reports/rmodel.h"

#include <string.h>

/* Text for XML: escapes markup characters and replaces control
 * characters XML 1.0 cannot carry; attr also escapes quotes and newlines. */
static void put_xml(struct strbuf *sb, const char *s, int attr)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': sb_puts(sb, "&amp;"); break;
        case '<': sb_puts(sb, "&lt;"); break;
        case '>': sb_puts(sb, "&gt;"); break;
        case '"': sb_puts(sb, attr ? "&quot;" : "\""); break;
        case '\n': sb_puts(sb, attr ? "&#10;" : "\n"); break;
        case '\t': sb_puts(sb, attr ? "&#9;" : "\t"); break;
        case '\r': sb_puts(sb, "&#13;"); break;
        default:
            sb_putc(sb, c < 0x20 ? '?' : (char)c);
        }
    }
}

static void put_attr(struct strbuf *sb, const char *name, const char *val)
{
    sb_printf(sb, " %s=\"", name);
    put_xml(sb, val, 1);
    sb_putc(sb, '"');
}

/* A JSON scalar as text: integers exact, others as JSON writes them. */
static void put_scalar(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type == JSON_NULL)
        sb_puts(sb, "null");
    else if (v->type == JSON_STR)
        sb_puts(sb, v->s);
    else
        json_write(sb, v, -1);
}

/* The story of the first violation of class cls that has one, one event
 * per line, appended to sb; 0 when there is none. */
static int class_story(const struct json *r, const char *cls, struct strbuf *sb)
{
    long at = rm_story_of(r, cls);
    if (at >= 0) {
        size_t i = (size_t)at;
        const struct json *v = json_obj_get(r, "violations")->kids[i];
        const struct json *story = json_obj_get(v, "story");
        sb_printf(sb, "story of violation %zu (%s %s):\n", i + 1, json_get_str(v, "resource", "?"),
                  cls);
        for (size_t k = 0; k < story->n; k++) {
            const struct json *it = story->kids[k];
            const char *kind = json_get_str(it, "kind", "");
            if (strcmp(kind, "overlap") && strcmp(kind, "conclusion"))
                sb_printf(sb, "  t=%.3fs %s\n", json_get_num(it, "t_ms", 0) / 1000.0,
                          json_get_str(it, "text", ""));
            else
                sb_printf(sb, "  => %s\n", json_get_str(it, "text", ""));
        }
        return 1;
    }
    return 0;
}

/* One story per class present, lock-broken first, as the summary shows
 * them; returns how many. */
static int all_stories(const struct json *r, struct strbuf *sb)
{
    int n = class_story(r, "lock-broken", sb);
    if (n)
        sb_putc(sb, '\n');
    return n + class_story(r, "stale-holder", sb);
}

/* The story a failed expectation on path carries: one of the class the
 * path is about (lock_broken / stale_holder in it), else the first story
 * (lock-broken first). A path about a class with no story gets none: the
 * other class's story would tell a different failure. */
static void expectation_story(const struct json *r, const char *path, struct strbuf *sb)
{
    if (strstr(path, "lock_broken"))
        class_story(r, "lock-broken", sb);
    else if (strstr(path, "stale_holder"))
        class_story(r, "stale-holder", sb);
    else if (!class_story(r, "lock-broken", sb))
        class_story(r, "stale-holder", sb);
}

struct tcase {
    struct strbuf name, classname, message, type, body, out;
    int failure, error;
};

static void tc_init(struct tcase *t)
{
    memset(t, 0, sizeof(*t));
}

static void tc_free(struct tcase *t)
{
    sb_free(&t->name);
    sb_free(&t->classname);
    sb_free(&t->message);
    sb_free(&t->type);
    sb_free(&t->body);
    sb_free(&t->out);
}

static void tc_write(struct strbuf *sb, struct tcase *t)
{
    sb_puts(sb, "    <testcase");
    put_attr(sb, "name", sb_cstr(&t->name));
    put_attr(sb, "classname", sb_cstr(&t->classname));
    sb_puts(sb, " time=\"0\">\n");
    if (t->failure || t->error) {
        sb_printf(sb, "      <%s", t->failure ? "failure" : "error");
        put_attr(sb, "message", sb_cstr(&t->message));
        put_attr(sb, "type", sb_cstr(&t->type));
        sb_putc(sb, '>');
        put_xml(sb, sb_cstr(&t->body), 0);
        sb_printf(sb, "</%s>\n", t->failure ? "failure" : "error");
    }
    if (t->out.len) {
        sb_puts(sb, "      <system-out>");
        put_xml(sb, sb_cstr(&t->out), 0);
        sb_puts(sb, "</system-out>\n");
    }
    sb_puts(sb, "    </testcase>\n");
}

/* One-line summary of a checker's numbers for its message: its verdict,
 * then the fields its description (model/checkschema.h) gives JUnit, each
 * value the JSON scalar as is, then its reason or note. */
static void check_summary(const char *name, const struct json *c, struct strbuf *sb)
{
    sb_printf(sb, "%s: %s", name, json_get_str(c, "verdict", "unknown"));
    const struct checkschema *cs = checkschema_find(name);
    for (const struct checkfield *f = cs ? cs->junit : NULL; f && (f->pre || f->path); f++) {
        if (!checkfield_shown(cs, f, c))
            continue;
        if (f->pre)
            sb_puts(sb, f->pre);
        if (f->path)
            put_scalar(sb, json_path(c, f->path));
        if (f->post)
            sb_puts(sb, f->post);
    }
    const char *why = json_get_str(c, "reason", json_get_str(c, "note", NULL));
    if (why)
        sb_printf(sb, " (%s)", why);
}

/* Does checker name's test case carry the violation stories (its
 * description has CS_OVERLAPS)? */
static int tells_stories(const char *name)
{
    const struct checkschema *cs = checkschema_find(name);
    return cs && (cs->flags & CS_OVERLAPS);
}

/* Contract: appends junit.xml for result to sb (UTF-8, ends in '\n'). */
void render_junit(const struct json *result, struct strbuf *sb)
{
    const struct json *wl = json_obj_get(result, "workload");
    const char *wname = wl && wl->type == JSON_OBJ ? json_get_str(wl, "name", "run") : "history";
    struct strbuf suite = STRBUF_INIT, cases = STRBUF_INIT, story = STRBUF_INIT;
    sb_printf(&suite, "lockstorm.%s", wname);
    all_stories(result, &story);
    const struct json *ex = json_obj_get(result, "expectations");
    int have_expect = rm_len(ex) > 0;
    int tests = 0, failures = 0, errors = 0;

    for (size_t i = 0; i < rm_len(ex); i++) {
        const struct json *e = ex->kids[i];
        struct tcase t;
        tc_init(&t);
        sb_printf(&t.name, "expect %s %s", json_get_str(e, "path", "?"),
                  json_get_str(e, "want", "?"));
        sb_printf(&t.classname, "%s.expectations", sb_cstr(&suite));
        sb_puts(&t.out, "got ");
        put_scalar(&t.out, json_obj_get(e, "got"));
        const struct json *ok = json_obj_get(e, "ok");
        if (!(ok && ok->type == JSON_BOOL && ok->i)) {
            t.failure = 1;
            sb_printf(&t.message, "%s: wanted %s, got ", json_get_str(e, "path", "?"),
                      json_get_str(e, "want", "?"));
            put_scalar(&t.message, json_obj_get(e, "got"));
            const char *why = json_get_str(e, "why", NULL);
            if (why)
                sb_printf(&t.message, " (%s)", why);
            sb_puts(&t.type, "expectation");
            sb_printf(&t.body, "%s\n", sb_cstr(&t.message));
            struct strbuf es = STRBUF_INIT;
            expectation_story(result, json_get_str(e, "path", ""), &es);
            if (es.len)
                sb_printf(&t.body, "\n%s", sb_cstr(&es));
            sb_free(&es);
            failures++;
        }
        tc_write(&cases, &t);
        tc_free(&t);
        tests++;
    }

    const struct json *checks = json_obj_get(result, "checks");
    for (size_t i = 0; checks && checks->type == JSON_OBJ && i < checks->n; i++) {
        const char *name = checks->keys[i];
        const struct json *c = checks->kids[i];
        const char *verdict = json_get_str(c, "verdict", "unknown");
        struct tcase t;
        tc_init(&t);
        sb_printf(&t.name, "check %s", name);
        sb_printf(&t.classname, "%s.checks", sb_cstr(&suite));
        check_summary(name, c, &t.out);
        sb_putc(&t.out, '\n');
        if (strcmp(verdict, "valid") != 0 && have_expect) {
            sb_puts(&t.out, "not a failure by itself: this workload's expect: block decides "
                            "the verdict\n");
        } else if (strcmp(verdict, "invalid") == 0) {
            t.failure = 1;
            failures++;
        } else if (strcmp(verdict, "valid") != 0) {
            t.error = 1;
            errors++;
        }
        if (t.failure || t.error) {
            check_summary(name, c, &t.message);
            sb_puts(&t.type, verdict);
            sb_printf(&t.body, "%s\n", sb_cstr(&t.message));
            if (story.len && tells_stories(name))
                sb_printf(&t.body, "\n%s", sb_cstr(&story));
        }
        if (story.len && tells_stories(name))
            sb_puts(&t.out, sb_cstr(&story));
        tc_write(&cases, &t);
        tc_free(&t);
        tests++;
    }

    const struct json *intr = json_obj_get(result, "interrupted");
    if (intr && intr->type == JSON_BOOL && intr->i) {
        struct tcase t;
        tc_init(&t);
        sb_puts(&t.name, "run completed");
        sb_printf(&t.classname, "%s.run", sb_cstr(&suite));
        t.error = 1;
        sb_puts(&t.message, "the run was interrupted before its planned end; it cannot pass");
        sb_puts(&t.type, "interrupted");
        sb_printf(&t.body, "%s\n", sb_cstr(&t.message));
        tc_write(&cases, &t);
        tc_free(&t);
        tests++;
        errors++;
    }

    /* An unknown verdict's reasons (evidence gaps, no fault took effect,
     * too little activity, ...): one error, so the XML says what the exit
     * code 4 says even when every expectation was met. */
    const struct json *reasons = json_obj_get(result, "verdict_reasons");
    if (rm_len(reasons) && strcmp(json_get_str(result, "verdict", ""), "unknown") == 0) {
        struct tcase t;
        tc_init(&t);
        sb_puts(&t.name, "verdict decided");
        sb_printf(&t.classname, "%s.run", sb_cstr(&suite));
        t.error = 1;
        sb_puts(&t.message, "the verdict is unknown: ");
        for (size_t i = 0; i < reasons->n; i++) {
            if (i)
                sb_puts(&t.message, "; ");
            put_scalar(&t.message, reasons->kids[i]);
            put_scalar(&t.body, reasons->kids[i]);
            sb_putc(&t.body, '\n');
        }
        sb_puts(&t.type, "unknown");
        tc_write(&cases, &t);
        tc_free(&t);
        tests++;
        errors++;
    }

    char time_s[32];
    snprintf(time_s, sizeof(time_s), "%.3f", json_get_num(result, "duration_s", 0));
    struct strbuf vline = STRBUF_INIT;
    render_verdict_why(result, &vline); /* how the verdict follows, then the verdict line */
    sb_putc(&vline, '\n');
    render_verdict_line(result, &vline);

    sb_puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sb_puts(sb, "<testsuites");
    put_attr(sb, "name", "lockstorm");
    sb_printf(sb, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%s\">\n",
              tests, failures, errors, time_s);
    sb_puts(sb, "  <testsuite");
    put_attr(sb, "name", sb_cstr(&suite));
    sb_printf(sb, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%s\"", tests,
              failures, errors, time_s);
    /* xs:dateTime without a zone, as Jenkins' schema wants; it is UTC
     * (the "timezone" property says so). */
    const char *st = json_get_str(result, "started_at", NULL);
    if (st && strlen(st) >= 19) {
        char ts[20];
        memcpy(ts, st, 19);
        ts[19] = '\0';
        put_attr(sb, "timestamp", ts);
    }
    sb_puts(sb, ">\n    <properties>\n");
    static const char *const props[][2] = {
        {"verdict", "verdict"}, {"verdict_checks", "verdict_checks"}, {"seed", "seed"},
        {"tool_version", "tool_version"}, {"source", "source"}, {"started_at", "started_at"},
        {"lock", "workload.lock.impl"}, {"duration", "workload.duration"},
    };
    for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
        const struct json *v = json_path(result, props[i][1]);
        if (!v)
            continue;
        struct strbuf val = STRBUF_INIT;
        put_scalar(&val, v);
        sb_puts(sb, "      <property");
        put_attr(sb, "name", props[i][0]);
        put_attr(sb, "value", sb_cstr(&val));
        sb_puts(sb, "/>\n");
        sb_free(&val);
    }
    sb_puts(sb, "      <property name=\"timezone\" value=\"UTC\"/>\n");
    sb_puts(sb, "    </properties>\n");
    sb_append(sb, cases.buf ? cases.buf : "", cases.len);
    sb_puts(sb, "    <system-out>");
    put_xml(sb, sb_cstr(&vline), 0);
    sb_puts(sb, "</system-out>\n  </testsuite>\n</testsuites>\n");
    sb_free(&vline);
    sb_free(&suite);
    sb_free(&cases);
    sb_free(&story);
}
