/*
 * html.c: report.html, one self-contained page (inline CSS, SVG and script,
 * nothing fetched) that reads well on a laptop screen: the verdict
 * banner (with the line saying how the verdict follows), the workload,
 * the expectations, evidence and coverage (when the model has them), the
 * checkers, the incidents, the interactive timeline (html_timeline.c), the
 * charts, the violation stories (lock-broken first) and every listed
 * violation, the fault schedule, the fault windows and
 * phases, and the warnings. The charts are
 * the SVG files gnuplot made (reports/gnuplot.c), inlined with their ids
 * prefixed so several can share one page. It formats the result model and
 * computes nothing (docs/reports.md describes the page).
 */
#include "reports/reports.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/html_timeline.h"
#include "reports/result.h"
#include "reports/rmodel.h"

#define HTML_MAX_FAULTS 200     /* rows of the fault schedule */

static const char CSS[] =
    "*{box-sizing:border-box}"
    "body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "color:#1d1d1f;background:#f4f5f7}"
    "main{max-width:1180px;margin:0 auto;padding:0 20px 40px}"
    "header.banner{padding:18px 24px;color:#fff;border-radius:0 0 10px 10px;margin-bottom:18px}"
    "header.pass{background:#1b7f3b}header.fail{background:#b3261e}header.unknown{background:#8a6d00}"
    ".banner .word{font-size:34px;font-weight:700;letter-spacing:.04em}"
    ".banner .what{font-size:17px;margin-top:2px}"
    ".banner .why{font-size:15px;margin-top:6px;font-weight:600}"
    ".banner code{display:block;margin-top:10px;font-size:12.5px;white-space:pre-wrap;"
    "word-break:break-all;background:rgba(0,0,0,.18);padding:6px 8px;border-radius:6px}"
    "section{background:#fff;border:1px solid #dcdfe4;border-radius:10px;padding:14px 20px;"
    "margin:16px 0}"
    "h2{font-size:19px;margin:4px 0 10px}h3{font-size:16px;margin:14px 0 6px}"
    "table{border-collapse:collapse;width:100%;font-size:14px}"
    "th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef1;vertical-align:top}"
    "th{background:#f7f8fa;font-weight:600}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".kv{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:4px 18px}"
    ".kv div{padding:3px 0;border-bottom:1px dotted #e3e5e8;overflow-wrap:anywhere}.kv b{font-weight:600;color:#555}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:13px;"
    "font-weight:600;color:#fff}"
    ".valid,.ok,.b-pass{background:#1b7f3b}.invalid,.failed,.b-fail{background:#b3261e}"
    ".unknown,.b-unknown{background:#8a6d00}"
    "figure{margin:10px 0 18px}figcaption{font-weight:600;margin-bottom:4px}"
    "figure svg{width:100%;height:auto;display:block;border:1px solid #eceef1;border-radius:6px}"
    ".missing{color:#8a6d00;font-style:italic}"
    "ol.story{margin:4px 0 8px;padding-left:22px}ol.story li{margin:2px 0}"
    "ol.story .t{font-family:ui-monospace,Menlo,Consolas,monospace;color:#555;margin-right:6px}"
    "ol.story li.overlap{color:#b3261e;font-weight:600}"
    "ol.story li.conclusion{font-weight:600;list-style:none;margin-left:-22px;margin-top:6px}"
    ".story-text{font-size:12.5px;color:#555}"
    "ul.warn li{color:#8a6d00}"
    "details pre{font-size:12px;max-height:420px;overflow:auto;background:#f7f8fa;padding:8px}"
    "footer{color:#777;font-size:12.5px;text-align:center;margin-top:20px}";

/* ---- escaping and small helpers ------------------------------------------ */

void html_esc(struct strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sb_puts(sb, "&amp;"); break;
        case '<': sb_puts(sb, "&lt;"); break;
        case '>': sb_puts(sb, "&gt;"); break;
        case '"': sb_puts(sb, "&quot;"); break;
        case '\'': sb_puts(sb, "&#39;"); break;
        default: sb_putc(sb, *s);
        }
    }
}

/* A JSON value as text: integers exact, numbers with at most 3 decimals,
 * strings as is, bools true/false, null and absent as "-". */
static void val(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type == JSON_NULL) {
        sb_puts(sb, "-");
    } else if (v->type == JSON_BOOL) {
        sb_puts(sb, v->i ? "true" : "false");
    } else if (v->type == JSON_NUM) {
        rm_put_num(sb, v);
    } else if (v->type == JSON_STR) {
        html_esc(sb, v->s);
    } else if (v->type == JSON_OBJ) { /* {dist: uniform, min: 20ms} -> "dist uniform, min 20ms" */
        for (size_t i = 0; i < v->n; i++) {
            sb_puts(sb, i ? ", " : "");
            html_esc(sb, v->keys[i]);
            sb_putc(sb, ' ');
            val(sb, v->kids[i]);
        }
        if (!v->n)
            sb_puts(sb, "{}");
    } else {
        sb_putc(sb, '[');
        for (size_t i = 0; i < v->n; i++) {
            sb_puts(sb, i ? ", " : "");
            val(sb, v->kids[i]);
        }
        sb_putc(sb, ']');
    }
}

static void valp(struct strbuf *sb, const struct json *root, const char *path)
{
    val(sb, json_path(root, path));
}

static int is_true(const struct json *v)
{
    return v && (v->type == JSON_BOOL || v->type == JSON_NUM) && v->i != 0;
}

static void badge(struct strbuf *sb, const char *cls, const char *text)
{
    sb_puts(sb, "<span class=\"badge ");
    html_esc(sb, cls);
    sb_puts(sb, "\">");
    html_esc(sb, text);
    sb_puts(sb, "</span>");
}

static void kv(struct strbuf *sb, const char *label, const struct json *v, const char *unit)
{
    sb_puts(sb, "<div><b>");
    html_esc(sb, label);
    sb_puts(sb, "</b> ");
    val(sb, v);
    if (unit && v && v->type == JSON_NUM)
        html_esc(sb, unit);
    sb_puts(sb, "</div>");
}

/* ---- sections ------------------------------------------------------------ */

static void banner(struct strbuf *sb, const struct json *r)
{
    const char *v = json_get_str(r, "verdict", "unknown");
    const char *cls = strcmp(v, "pass") == 0 ? "pass" : strcmp(v, "fail") == 0 ? "fail"
                                                                              : "unknown";
    const struct json *wl = json_obj_get(r, "workload");
    sb_printf(sb, "<header class=\"banner %s\" id=\"verdict\" data-verdict=\"%s\">", cls, cls);
    sb_printf(sb, "<div class=\"word\">%s</div><div class=\"what\">",
              strcmp(cls, "pass") == 0 ? "PASS" : strcmp(cls, "fail") == 0 ? "FAIL" : "UNKNOWN");
    if (wl && wl->type == JSON_OBJ) {
        sb_puts(sb, "workload <b>");
        valp(sb, wl, "name");
        sb_puts(sb, "</b> &middot; lock <b>");
        valp(sb, wl, "lock.impl");
        sb_puts(sb, "</b> &middot; ");
    } else {
        sb_puts(sb, "history ");
        valp(sb, r, "source");
        sb_puts(sb, " &middot; ");
    }
    if (json_path(r, "checks.mutex.incidents")) {
        sb_puts(sb, "incidents ");
        valp(sb, r, "checks.mutex.incidents");
        sb_puts(sb, " &middot; ");
    }
    sb_puts(sb, "violations ");
    valp(sb, r, "checks.mutex.violations");
    sb_puts(sb, " &middot; checkers ");
    valp(sb, r, "verdict_checks");
    const struct json *ex = json_obj_get(r, "expectations");
    if (rm_len(ex)) {
        size_t ok = 0;
        for (size_t i = 0; i < ex->n; i++)
            ok += is_true(json_obj_get(ex->kids[i], "ok"));
        sb_printf(sb, " &middot; expectations %zu/%zu met", ok, ex->n);
    }
    if (is_true(json_obj_get(r, "interrupted")))
        sb_puts(sb, " &middot; <b>interrupted</b>");
    sb_puts(sb, "</div><div class=\"why\">");
    struct strbuf line = STRBUF_INIT;
    render_verdict_why(r, &line);
    html_esc(sb, sb_cstr(&line));
    sb_reset(&line);
    sb_puts(sb, "</div><code>");
    render_verdict_line(r, &line);
    if (line.len && line.buf[line.len - 1] == '\n')
        line.buf[--line.len] = '\0';
    html_esc(sb, sb_cstr(&line));
    sb_free(&line);
    sb_puts(sb, "</code></header>\n");
}

static void workload_section(struct strbuf *sb, const struct json *r)
{
    const struct json *wl = json_obj_get(r, "workload");
    sb_puts(sb, "<section id=\"workload\"><h2>Workload</h2>");
    if (wl && wl->type == JSON_OBJ) {
        const char *desc = json_get_str(wl, "description", "");
        if (*desc) {
            sb_puts(sb, "<p>");
            html_esc(sb, desc);
            sb_puts(sb, "</p>");
        }
    }
    sb_puts(sb, "<div class=\"kv\">");
    static const char *const wpaths[][2] = {
        {"name", "name"}, {"lock", "lock.impl"}, {"ttl", "lock.ttl"},
        {"renew", "lock.renew"}, {"fencing", "lock.fencing"},
        {"topology", "cluster.topology"}, {"nodes", "cluster.nodes"},
        {"workers", "workers.count"}, {"resources", "workers.resources"},
        {"hold", "workers.hold"}, {"think", "workers.think"},
        {"planned duration", "duration"},
    };
    if (wl && wl->type == JSON_OBJ)
        for (size_t i = 0; i < sizeof(wpaths) / sizeof(wpaths[0]); i++)
            kv(sb, wpaths[i][0], json_path(wl, wpaths[i][1]), NULL);
    kv(sb, "seed", json_obj_get(r, "seed"), NULL);
    kv(sb, "ran", json_obj_get(r, "duration_s"), " s");
    kv(sb, "started", json_obj_get(r, "started_at"), NULL);
    kv(sb, "source", json_obj_get(r, "source"), NULL);
    kv(sb, "grants/s", json_path(r, "throughput.grants_per_s"), NULL);
    kv(sb, "attempts/s", json_path(r, "throughput.attempts_per_s"), NULL);
    sb_puts(sb, "</div>");

    const struct json *c = json_obj_get(r, "counts");
    if (c && c->type == JSON_OBJ) {
        sb_puts(sb, "<h3>Counts</h3><div class=\"kv\">");
        for (size_t i = 0; i < c->n; i++)
            kv(sb, c->keys[i], c->kids[i], NULL);
        sb_puts(sb, "</div>");
    }
    const struct json *lat = json_obj_get(r, "latency");
    if (lat && lat->type == JSON_OBJ && lat->n) {
        static const char *const cols[] = {"count", "p50_ms", "p90_ms", "p99_ms", "p999_ms",
                                           "max_ms", "mean_ms"};
        sb_puts(sb, "<h3>Latency (ms)</h3><table><tr><th>operation</th><th>n</th><th>p50</th>"
                    "<th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>");
        for (size_t i = 0; i < lat->n; i++) {
            if (json_get_int(lat->kids[i], "count", 0) <= 0)
                continue;
            sb_puts(sb, "<tr><td>");
            html_esc(sb, lat->keys[i]);
            sb_puts(sb, "</td>");
            for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
                sb_puts(sb, "<td class=\"num\">");
                val(sb, json_obj_get(lat->kids[i], cols[k]));
                sb_puts(sb, "</td>");
            }
            sb_puts(sb, "</tr>");
        }
        sb_puts(sb, "</table>");
    }
    if (wl && wl->type == JSON_OBJ) {
        struct strbuf t = STRBUF_INIT;
        json_write(&t, wl, 2);
        sb_puts(sb, "<details><summary>resolved workload (JSON)</summary><pre>");
        html_esc(sb, sb_cstr(&t));
        sb_puts(sb, "</pre></details>");
        sb_free(&t);
    }
    sb_puts(sb, "</section>\n");
}

/* A list of strings as <li> items (at most max, then how many more). */
static void str_list(struct strbuf *sb, const struct json *a, size_t max)
{
    sb_puts(sb, "<ul>");
    for (size_t i = 0; i < rm_len(a) && i < max; i++) {
        sb_puts(sb, "<li>");
        val(sb, a->kids[i]);
        sb_puts(sb, "</li>");
    }
    if (rm_len(a) > max)
        sb_printf(sb, "<li>%zu more in result.json</li>", rm_len(a) - max);
    sb_puts(sb, "</ul>");
}

/* Contract: what the verdict rests on, when the model says (evidence,
 * coverage, verdict_reasons): whether every log was there and whole, how
 * much the run exercised the lock, how many faults took effect, and why
 * an unknown verdict is unknown. Nothing for a model without them. */
static void evidence_section(struct strbuf *sb, const struct json *r)
{
    const struct json *ev = json_obj_get(r, "evidence");
    const struct json *cv = json_obj_get(r, "coverage");
    const struct json *why = json_obj_get(r, "verdict_reasons");
    if ((!ev || ev->type != JSON_OBJ) && (!cv || cv->type != JSON_OBJ) && !rm_len(why))
        return;
    sb_puts(sb, "<section id=\"evidence\"><h2>Evidence and coverage</h2>");
    if (rm_len(why)) {
        sb_puts(sb, "<p>The verdict is unknown because:</p>");
        str_list(sb, why, 20);
    }
    if (ev && ev->type == JSON_OBJ) {
        int ok = is_true(json_obj_get(ev, "complete"));
        sb_puts(sb, "<div class=\"kv\"><div><b>evidence</b> ");
        badge(sb, ok ? "valid" : "unknown", ok ? "complete" : "incomplete");
        sb_puts(sb, "</div>");
        kv(sb, "logs found", json_path(ev, "logs.found"), NULL);
        kv(sb, "expected", json_path(ev, "logs.expected"), NULL);
        kv(sb, "missing", json_path(ev, "logs.missing"), NULL);
        kv(sb, "foreign", json_path(ev, "logs.foreign"), NULL);
        kv(sb, "damaged", json_path(ev, "logs.damaged"), NULL);
        kv(sb, "run id", json_obj_get(ev, "run_id"), NULL);
        kv(sb, "run state", json_obj_get(ev, "run_state"), NULL);
        sb_puts(sb, "</div>");
        if (rm_len(json_obj_get(ev, "gaps")))
            str_list(sb, json_obj_get(ev, "gaps"), 50);
    }
    if (cv && cv->type == JSON_OBJ) {
        sb_puts(sb, "<div class=\"kv\">");
        kv(sb, "holds", json_obj_get(cv, "holds"), NULL);
        kv(sb, "grants", json_obj_get(cv, "grants"), NULL);
        kv(sb, "contended acquires", json_obj_get(cv, "contended_acquires"), NULL);
        kv(sb, "grant floor", json_obj_get(cv, "grant_floor"), NULL);
        kv(sb, "enough activity", json_obj_get(cv, "enough_activity"), NULL);
        kv(sb, "fault occurrences", json_path(cv, "faults.occurrences"), NULL);
        kv(sb, "took effect (bit)", json_path(cv, "faults.bit"), NULL);
        kv(sb, "did not", json_path(cv, "faults.not_bit"), NULL);
        kv(sb, "undecided", json_path(cv, "faults.undecided"), NULL);
        kv(sb, "late", json_path(cv, "faults.late"), NULL);
        sb_puts(sb, "</div>");
    }
    sb_puts(sb, "</section>\n");
}

static void expectations_section(struct strbuf *sb, const struct json *r)
{
    const struct json *ex = json_obj_get(r, "expectations");
    sb_puts(sb, "<section id=\"expectations\"><h2>Expectations</h2>");
    if (!rm_len(ex)) {
        sb_puts(sb, "<p>No <code>expect:</code> block: the checkers decide the verdict.</p>"
                    "</section>\n");
        return;
    }
    sb_puts(sb, "<table><tr><th>path</th><th>wanted</th><th>got</th><th></th></tr>");
    for (size_t i = 0; i < ex->n; i++) {
        const struct json *e = ex->kids[i];
        int ok = is_true(json_obj_get(e, "ok"));
        sb_puts(sb, "<tr><td><code>");
        valp(sb, e, "path");
        sb_puts(sb, "</code></td><td>");
        valp(sb, e, "want");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, e, "got");
        sb_puts(sb, "</td><td>");
        badge(sb, ok ? "ok" : "failed", ok ? "met" : "FAILED");
        const char *why = json_get_str(e, "why", NULL);
        if (why && !ok) {
            sb_putc(sb, ' ');
            html_esc(sb, why);
        }
        sb_puts(sb, "</td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

static void checks_section(struct strbuf *sb, const struct json *r)
{
    const struct json *checks = json_obj_get(r, "checks");
    sb_puts(sb, "<section id=\"checks\"><h2>Checkers</h2><table><tr><th>checker</th>"
                "<th>verdict</th><th>results</th></tr>");
    for (size_t i = 0; checks && checks->type == JSON_OBJ && i < checks->n; i++) {
        const struct json *c = checks->kids[i];
        const char *v = json_get_str(c, "verdict", "unknown");
        sb_puts(sb, "<tr><td><b>");
        html_esc(sb, checks->keys[i]);
        sb_puts(sb, "</b></td><td>");
        badge(sb, strcmp(v, "valid") == 0 ? "valid" : strcmp(v, "invalid") == 0 ? "invalid"
                                                                                 : "unknown", v);
        sb_puts(sb, "</td><td>");
        int first = 1;
        for (size_t k = 0; c && c->type == JSON_OBJ && k < c->n; k++) {
            const struct json *x = c->kids[k];
            const char *key = c->keys[k];
            if (!strcmp(key, "verdict") || !strcmp(key, "valid"))
                continue;
            if (x->type == JSON_OBJ) { /* one level down: by_class, fairness */
                for (size_t j = 0; j < x->n; j++) {
                    if (x->kids[j]->type == JSON_OBJ || x->kids[j]->type == JSON_ARR)
                        continue;
                    sb_puts(sb, first ? "" : " &middot; ");
                    first = 0;
                    html_esc(sb, key);
                    sb_putc(sb, '.');
                    html_esc(sb, x->keys[j]);
                    sb_puts(sb, " <b>");
                    val(sb, x->kids[j]);
                    sb_puts(sb, "</b>");
                }
                continue;
            }
            if (x->type == JSON_ARR)
                continue;
            sb_puts(sb, first ? "" : " &middot; ");
            first = 0;
            html_esc(sb, key);
            sb_puts(sb, " <b>");
            val(sb, x);
            sb_puts(sb, "</b>");
        }
        sb_puts(sb, "</td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

/* Append an SVG file's content, from "<svg" on, with every id (and every
 * reference to one) prefixed by "name-" so several charts share a page. */
static int inline_svg(struct strbuf *sb, const char *dir, const char *name, const char *title)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.svg", dir, name);
    struct strbuf raw = STRBUF_INIT;
    if (sb_read_file(&raw, path) < 0) {
        sb_free(&raw);
        return 0;
    }
    const char *s = strstr(sb_cstr(&raw), "<svg");
    if (!s || !strstr(s, "</svg>")) {
        sb_free(&raw);
        return 0;
    }
    static const char *const refs[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    while (*s) {
        size_t k, len = 0;
        for (k = 0; k < sizeof(refs) / sizeof(refs[0]); k++) {
            len = strlen(refs[k]);
            if (strncmp(s, refs[k], len) == 0 && (k > 1 || s == sb_cstr(&raw) ||
                                                  s[-1] == ' ' || s[-1] == '\t' || s[-1] == '\n'))
                break;
        }
        if (k < sizeof(refs) / sizeof(refs[0])) {
            sb_append(sb, s, len);
            sb_printf(sb, "%s-", name);
            s += len;
            continue;
        }
        if (strncmp(s, "<title>Gnuplot</title>", 22) == 0) {
            sb_puts(sb, "<title>");
            html_esc(sb, title);
            sb_puts(sb, "</title>");
            s += 22;
            continue;
        }
        if (strncmp(s, "</svg>", 6) == 0) {
            sb_puts(sb, "</svg>");
            break;
        }
        sb_putc(sb, *s++);
    }
    sb_free(&raw);
    return 1;
}

static void charts_section(struct strbuf *sb, const char *dir, const char *chart_note)
{
    sb_puts(sb, "<section id=\"charts\"><h2>Charts</h2>");
    if (chart_note) {
        sb_puts(sb, "<p class=\"missing\" id=\"charts-note\">");
        html_esc(sb, chart_note);
        sb_puts(sb, "</p>");
    }
    for (int i = 0; i < report_ncharts; i++) {
        const struct chart_info *c = &report_charts[i];
        sb_printf(sb, "<figure id=\"chart-%s\"><figcaption>", c->name);
        html_esc(sb, c->title);
        sb_puts(sb, "</figcaption>");
        if (!dir || !inline_svg(sb, dir, c->name, c->title)) {
            sb_puts(sb, "<p class=\"missing\">not drawn");
            if (chart_note) {
                sb_puts(sb, ": ");
                html_esc(sb, chart_note);
            }
            sb_printf(sb, " (data in %s.dat, script %s.gp)</p>", c->name, c->name);
        }
        sb_puts(sb, "</figure>\n");
    }
    sb_puts(sb, "</section>\n");
}

/* Fault ids by name ("pause holder (w1), latency node_0"), "none" for none. */
static void fault_names(struct strbuf *sb, const struct json *r, const struct json *ids)
{
    struct strbuf t = STRBUF_INIT;
    for (size_t i = 0; i < rm_len(ids); i++) {
        if (i)
            sb_puts(&t, ", ");
        html_fault_name(&t, r, ids->kids[i]);
    }
    html_esc(sb, rm_len(ids) ? sb_cstr(&t) : "none");
    sb_free(&t);
}

static void holders_cell(struct strbuf *sb, const struct json *v, const char *key)
{
    const struct json *hl = json_obj_get(v, "holders");
    for (size_t i = 0; i < rm_len(hl); i++) {
        if (i)
            sb_puts(sb, " &rarr; ");
        const struct json *x = json_obj_get(hl->kids[i], key);
        if (!x || x->type == JSON_NULL)
            sb_puts(sb, "none");
        else
            val(sb, x);
    }
}

/* The violation that tells incident inc's story: its first_violation when
 * that one has a story, else the first of its listed ones that has; -1. */
static long incident_story(const struct json *vs, const struct json *inc)
{
    const struct json *fv = json_obj_get(inc, "first_violation");
    const struct json *listed = json_obj_get(inc, "listed");
    for (size_t j = 0; j <= rm_len(listed); j++) {
        const struct json *ix = j == 0 ? fv : listed->kids[j - 1];
        if (ix && ix->type == JSON_NUM && ix->i >= 0 && (size_t)ix->i < rm_len(vs) &&
            rm_len(json_obj_get(vs->kids[ix->i], "story")))
            return (long)ix->i;
    }
    return -1;
}

/* Contract: the incidents table (the mutex checker's grouping of the
 * violations one cause made): id, class, resource, the causing hold's
 * worker, overlaps, span, faults by name and a link to the first story.
 * Nothing when the model has no incidents. */
static void incidents_section(struct strbuf *sb, const struct json *r)
{
    const struct json *incs = json_obj_get(r, "incidents");
    const struct json *vs = json_obj_get(r, "violations");
    if (!incs || incs->type != JSON_ARR)
        return;
    const struct json *m = json_path(r, "checks.mutex");
    sb_puts(sb, "<section id=\"incidents\"><h2>Incidents</h2>");
    if (!incs->n) {
        sb_puts(sb, "<p>No incident: no mutual-exclusion violation.</p></section>\n");
        return;
    }
    sb_puts(sb, "<p>");
    valp(sb, m, "incidents");
    sb_puts(sb, " incidents (stale-holder ");
    valp(sb, m, "incidents_by_class.stale_holder");
    sb_puts(sb, ", lock-broken ");
    valp(sb, m, "incidents_by_class.lock_broken");
    sb_puts(sb, ") group ");
    valp(sb, m, "violations");
    sb_puts(sb, " violations: an incident is one cause (one hold) and every overlap it made."
                " Click a row to see it on the timeline."
                "</p><table class=\"paged\"><tr><th>#</th><th>class</th><th>resource</th><th>cause</th>"
                "<th>overlaps</th><th>start (ms)</th><th>end (ms)</th><th>faults</th>"
                "<th>story</th></tr>");
    for (size_t i = 0; i < incs->n; i++) {
        const struct json *inc = incs->kids[i];
        const struct json *cause = json_obj_get(inc, "cause");
        const char *cls = json_get_str(inc, "class", "?");
        sb_printf(sb, "<tr data-row data-incident=\"%lld\"><td class=\"num\">",
                  (long long)json_get_int(inc, "id", (int64_t)i + 1));
        valp(sb, inc, "id");
        sb_puts(sb, "</td><td>");
        badge(sb, strcmp(cls, "lock-broken") == 0 ? "invalid" : "unknown", cls);
        sb_puts(sb, "</td><td>");
        valp(sb, inc, "resource");
        sb_puts(sb, "</td><td>w");
        valp(sb, cause, "worker");
        if (is_true(json_obj_get(cause, "crashed")))
            sb_puts(sb, " (killed)");
        sb_puts(sb, ", fence ");
        valp(sb, cause, "fence");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, inc, "violations");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, inc, "start_ms");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, inc, "end_ms");
        sb_puts(sb, "</td><td>");
        fault_names(sb, r, json_obj_get(inc, "faults"));
        sb_puts(sb, "</td><td>");
        long k = incident_story(vs, inc);
        if (k >= 0)
            sb_printf(sb, "<a href=\"#story-%ld\">violation %ld</a>", k + 1, k + 1);
        else
            sb_puts(sb, "-");
        sb_puts(sb, "</td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

/* One story as an article (id story-N, N = i + 1). */
static void story_article(struct strbuf *sb, const struct json *v, size_t i)
{
    const struct json *story = json_obj_get(v, "story");
    sb_printf(sb, "<article class=\"story\" id=\"story-%zu\"><h3>Violation %zu: ", i + 1,
              i + 1);
    valp(sb, v, "resource");
    sb_putc(sb, ' ');
    valp(sb, v, "class");
    sb_puts(sb, ", overlap ");
    valp(sb, v, "overlap_ms");
    sb_puts(sb, " ms at ");
    valp(sb, v, "overlap_start_ms");
    sb_printf(sb, " ms</h3><ol class=\"story\" data-story=\"%zu\">", i);
    for (size_t k = 0; k < story->n; k++) {
        const struct json *it = story->kids[k];
        const char *kind = json_get_str(it, "kind", "");
        sb_puts(sb, "<li class=\"");
        html_esc(sb, kind);
        sb_putc(sb, '"');
        const struct json *t = json_obj_get(it, "t_ms");
        if (t && t->type == JSON_NUM) { /* the page's script links the line to the timeline */
            sb_puts(sb, " data-t=\"");
            val(sb, t);
            sb_putc(sb, '"');
        }
        sb_putc(sb, '>');
        if (strcmp(kind, "overlap") && strcmp(kind, "conclusion"))
            sb_printf(sb, "<span class=\"t\">t=%.3fs</span>",
                      json_get_num(it, "t_ms", 0) / 1000.0);
        valp(sb, it, "text");
        sb_puts(sb, "</li>");
    }
    sb_puts(sb, "</ol></article>\n");
}

static void stories_section(struct strbuf *sb, const struct json *r)
{
    const struct json *vs = json_obj_get(r, "violations");
    int64_t total = json_get_int(json_path(r, "checks.mutex"), "violations", (int64_t)rm_len(vs));
    sb_puts(sb, "<section id=\"stories\"><h2>Violations</h2>");
    if (!rm_len(vs)) {
        sb_puts(sb, "<p>No mutual-exclusion violation.</p></section>\n");
        return;
    }
    sb_printf(sb, "<p>%lld in total; the first %zu are listed in result.json.</p>",
              (long long)total, rm_len(vs));
    /* the lock's own failures (lock-broken) first, then the others */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < vs->n; i++) {
            const struct json *v = vs->kids[i];
            int broken = strcmp(json_get_str(v, "class", ""), "lock-broken") == 0;
            if (rm_len(json_obj_get(v, "story")) && broken == (pass == 0))
                story_article(sb, v, i);
        }
    sb_printf(sb, "<h3>Listed violations</h3><p>All %zu listed in result.json (20 a page); click "
                  "a row to see it on the timeline.</p><table class=\"paged\" id=\"violations\">"
                  "<tr><th>#</th><th>resource</th><th>class</th>", vs->n);
    sb_puts(sb, "<th>start (ms)</th><th>overlap (ms)</th><th>workers</th><th>fences</th>"
                "<th>faults</th></tr>");
    for (size_t i = 0; i < vs->n; i++) {
        const struct json *v = vs->kids[i];
        sb_printf(sb, "<tr data-row data-violation=\"%zu\"><td class=\"num\">%zu</td><td>", i,
                  i + 1);
        valp(sb, v, "resource");
        sb_puts(sb, "</td><td>");
        valp(sb, v, "class");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, v, "overlap_start_ms");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, v, "overlap_ms");
        sb_puts(sb, "</td><td>");
        holders_cell(sb, v, "worker");
        sb_puts(sb, "</td><td>");
        holders_cell(sb, v, "fence");
        sb_puts(sb, "</td><td>");
        fault_names(sb, r, json_obj_get(v, "faults"));
        sb_puts(sb, "</td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

static void faults_section(struct strbuf *sb, const struct json *r)
{
    const struct json *fs = json_obj_get(r, "faults");
    sb_puts(sb, "<section id=\"faults\"><h2>Fault schedule</h2>");
    if (!rm_len(fs)) {
        sb_puts(sb, "<p>No fault was injected.</p></section>\n");
        return;
    }
    sb_puts(sb, "<table><tr><th>id</th><th>kind</th><th>target</th><th>worker</th><th>node</th>"
                "<th>start (ms)</th><th>end (ms)</th><th>state</th><th>parameters</th></tr>");
    for (size_t i = 0; i < fs->n && i < HTML_MAX_FAULTS; i++) {
        const struct json *f = fs->kids[i];
        sb_puts(sb, "<tr><td class=\"num\">");
        valp(sb, f, "id");
        sb_puts(sb, "</td><td>");
        valp(sb, f, "kind");
        sb_puts(sb, "</td><td>");
        valp(sb, f, "target");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, f, "worker");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, f, "node");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, f, "start_ms");
        sb_puts(sb, "</td><td class=\"num\">");
        valp(sb, f, "end_ms");
        sb_puts(sb, "</td><td>");
        if (is_true(json_obj_get(f, "skipped"))) {
            sb_puts(sb, "skipped");
            if (json_obj_get(f, "reason")) {
                sb_puts(sb, ": ");
                valp(sb, f, "reason");
            }
        } else {
            sb_puts(sb, "injected");
        }
        sb_puts(sb, "</td><td><code>");
        valp(sb, f, "params");
        sb_puts(sb, "</code></td></tr>");
    }
    if (fs->n > HTML_MAX_FAULTS)
        sb_printf(sb, "<tr><td colspan=\"9\">... %zu more in result.json</td></tr>",
                  fs->n - HTML_MAX_FAULTS);
    sb_puts(sb, "</table></section>\n");
}

/* One row of the windows table: the numbers of a fault window or phase. */
static void window_row(struct strbuf *sb, const struct json *o, const char *label,
                       const char *what)
{
    static const char *const cols[] = {"duration_ms", "attempts", "grants", "grants_per_s",
                                       "busy", "unknown", "failed", "violations",
                                       "acquire_p50_ms", "acquire_p99_ms"};
    sb_puts(sb, "<tr><td>");
    html_esc(sb, label);
    sb_puts(sb, "</td><td>");
    html_esc(sb, what);
    sb_puts(sb, "</td>");
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
        sb_puts(sb, "<td class=\"num\">");
        val(sb, json_obj_get(o, cols[k]));
        sb_puts(sb, "</td>");
    }
    sb_puts(sb, "</tr>");
}

/* result.json "phases" and "fault_windows": the run with and without faults
 * side by side, then each injected occurrence. */
static void windows_section(struct strbuf *sb, const struct json *r)
{
    static const char *const phases[][2] = {
        {"before_faults", "before the first fault"}, {"fault", "some fault active"},
        {"no_fault", "no fault active"}, {"quiet_tail", "fault-free tail"}};
    const struct json *ph = json_obj_get(r, "phases");
    const struct json *wins = json_obj_get(r, "fault_windows");
    sb_puts(sb, "<section id=\"windows\"><h2>Fault windows and phases</h2>");
    if (!(ph && ph->type == JSON_OBJ && ph->n) && !rm_len(wins)) {
        sb_puts(sb, "<p>No phase or fault window in the result.</p></section>\n");
        return;
    }
    sb_puts(sb, "<table><tr><th>window</th><th>what</th><th>duration (ms)</th><th>attempts</th>"
                "<th>grants</th><th>grants/s</th><th>busy</th><th>unknown</th><th>failed</th>"
                "<th>violations</th><th>acquire p50 (ms)</th><th>p99 (ms)</th></tr>");
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        const struct json *o = json_obj_get(ph, phases[i][0]);
        if (o && o->type == JSON_OBJ)
            window_row(sb, o, phases[i][0], phases[i][1]);
    }
    for (size_t i = 0; i < rm_len(wins) && i < HTML_MAX_FAULTS; i++) {
        const struct json *w = wins->kids[i];
        char label[48];
        struct strbuf what = STRBUF_INIT;
        snprintf(label, sizeof(label), "fault #%lld", (long long)json_get_int(w, "id", -1));
        sb_printf(&what, "%s %s, %.0f-%.0f ms", json_get_str(w, "kind", "?"),
                  json_get_str(w, "target", "?"), json_get_num(w, "start_ms", 0),
                  json_get_num(w, "end_ms", 0));
        window_row(sb, w, label, sb_cstr(&what));
        sb_free(&what);
    }
    if (rm_len(wins) > HTML_MAX_FAULTS)
        sb_printf(sb, "<tr><td colspan=\"12\">... %zu more in result.json</td></tr>",
                  wins->n - HTML_MAX_FAULTS);
    sb_puts(sb, "</table></section>\n");
}

static void warnings_section(struct strbuf *sb, const struct json *r)
{
    const struct json *w = json_obj_get(r, "warnings");
    sb_puts(sb, "<section id=\"warnings\"><h2>Warnings</h2>");
    if (!rm_len(w)) {
        sb_puts(sb, "<p>None.</p></section>\n");
        return;
    }
    sb_puts(sb, "<ul class=\"warn\">");
    for (size_t i = 0; i < w->n; i++) {
        sb_puts(sb, "<li>");
        val(sb, w->kids[i]);
        sb_puts(sb, "</li>");
    }
    sb_puts(sb, "</ul></section>\n");
}

/* For other pages (reports/sweep.c): see reports.h. */
int html_inline_svg(struct strbuf *sb, const char *dir, const char *name, const char *title)
{
    return inline_svg(sb, dir, name, title);
}

/* Contract: appends report.html for result to sb; see reports.h. */
void render_html(const struct json *result, const char *dir, const char *chart_note,
                 struct strbuf *sb)
{
    const struct json *wl = json_obj_get(result, "workload");
    sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>lockstorm ");
    sb_puts(sb, strcmp(json_get_str(result, "verdict", "unknown"), "pass") == 0   ? "PASS"
                : strcmp(json_get_str(result, "verdict", "unknown"), "fail") == 0 ? "FAIL"
                                                                                  : "UNKNOWN");
    if (wl && wl->type == JSON_OBJ) {
        sb_puts(sb, ": ");
        valp(sb, wl, "name");
    }
    sb_printf(sb, "</title><style>%s", CSS);
    html_timeline_css(sb);
    sb_puts(sb, "</style></head>\n<body>\n");
    banner(sb, result);
    sb_puts(sb, "<main>\n");
    workload_section(sb, result);
    expectations_section(sb, result);
    evidence_section(sb, result);
    checks_section(sb, result);
    incidents_section(sb, result);
    html_timeline_section(sb, result);
    charts_section(sb, dir, chart_note);
    stories_section(sb, result);
    faults_section(sb, result);
    windows_section(sb, result);
    warnings_section(sb, result);
    sb_puts(sb, "<footer>lockstorm ");
    valp(sb, result, "tool_version");
    sb_puts(sb, " &middot; rendered from result.json (format ");
    valp(sb, result, "format");
    sb_puts(sb, " version ");
    valp(sb, result, "version");
    sb_puts(sb, ") &middot; docs/reports.md explains each part</footer>\n</main>\n");
    html_timeline_script(sb);
    sb_puts(sb, "</body></html>\n");
}
