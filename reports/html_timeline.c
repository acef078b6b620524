/*
 * html_timeline.c: the interactive timeline of report.html. Writes the data
 * the page's script draws (series.holds, faults, violations and incidents
 * of the result model, as one compact JSON with columns as arrays) and the
 * script and stylesheet themselves, which are reports/assets/timeline.js and
 * timeline.css embedded at build time (CMakeLists.txt). Formats the model
 * and computes nothing; docs/reports.md "The timeline" describes the page.
 */
#include "reports/html_timeline.h"

#include <stdio.h>
#include <string.h>

#include "reports/reports.h"
#include "reports/rmodel.h"
#include "report_assets.h"

/* ---- fault names ----------------------------------------------------------- */

void html_fault_label(struct strbuf *sb, const struct json *f)
{
    const struct json *w = json_obj_get(f, "worker"), *n = json_obj_get(f, "node");
    const char *target = json_get_str(f, "target", "?");
    char own[48] = "";
    if (w && w->type == JSON_NUM)
        snprintf(own, sizeof(own), "w%lld", (long long)w->i);
    else if (n && n->type == JSON_NUM)
        snprintf(own, sizeof(own), "node_%lld", (long long)n->i);
    sb_puts(sb, json_get_str(f, "kind", "?"));
    sb_putc(sb, ' ');
    char as_written[48];
    snprintf(as_written, sizeof(as_written), "%s:%lld", w && w->type == JSON_NUM ? "worker" : "node",
             (long long)(w && w->type == JSON_NUM ? w->i : n && n->type == JSON_NUM ? n->i : -1));
    if (*own && strcmp(target, as_written) == 0) {
        sb_puts(sb, own); /* worker:3 -> w3, node:0 -> node_0 */
        return;
    }
    sb_puts(sb, target);
    if (*own)
        sb_printf(sb, " (%s)", own);
}

void html_fault_name(struct strbuf *sb, const struct json *r, const struct json *id)
{
    const struct json *fs = json_obj_get(r, "faults");
    for (size_t i = 0; id && id->type == JSON_NUM && i < rm_len(fs); i++) {
        const struct json *fid = json_obj_get(fs->kids[i], "id");
        if (fid && fid->type == JSON_NUM && fid->i == id->i) {
            html_fault_label(sb, fs->kids[i]);
            return;
        }
    }
    sb_printf(sb, "#%lld", (long long)(id && id->type == JSON_NUM ? id->i : -1));
}

/* ---- the data ------------------------------------------------------------------ */

/* A number of the model as JSON: integers exact, others to the microsecond
 * (times are ms), anything else null. */
static void num(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type != JSON_NUM)
        sb_puts(sb, "null");
    else
        rm_put_num(sb, v);
}

static void str(struct strbuf *sb, const char *s)
{
    sb_json_str(sb, s ? s : "", s ? strlen(s) : 0);
}

/* A column of series.holds (a string of comma-separated numbers and
 * nulls) as a JSON array; anything else in it makes the array empty. */
static void column(struct strbuf *sb, const char *key, const struct json *cols,
                   const char *name)
{
    const char *v = json_get_str(cols, name, "");
    sb_printf(sb, "\"%s\":[", key);
    if (strspn(v, "0123456789.,-nul") == strlen(v))
        sb_puts(sb, v);
    sb_putc(sb, ']');
}

/* A list of strings of the model as a JSON array. */
static void strings(struct strbuf *sb, const char *key, const struct json *a)
{
    sb_printf(sb, "\"%s\":[", key);
    for (size_t i = 0; i < rm_len(a); i++) {
        sb_puts(sb, i ? "," : "");
        str(sb, a->kids[i]->type == JSON_STR ? a->kids[i]->s : "?");
    }
    sb_putc(sb, ']');
}

static void holds_json(struct strbuf *sb, const struct json *hs)
{
    static const char *const cols[][2] = {
        {"w", "worker"}, {"r", "res"}, {"g", "grant_ms"}, {"e", "enter_ms"}, {"x", "exit_ms"},
        {"l", "valid_until_ms"}, {"f", "fence"}, {"end", "end"}, {"rel", "release"},
        {"rn", "renewals"}, {"lost", "lost"}};
    const struct json *c = json_obj_get(hs, "columns");
    sb_puts(sb, "\"holds\":{");
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        sb_puts(sb, i ? "," : "");
        column(sb, cols[i][0], c, cols[i][1]);
    }
    sb_puts(sb, "},");
    strings(sb, "res", json_obj_get(hs, "resources"));
    sb_putc(sb, ',');
    strings(sb, "ends", json_obj_get(hs, "ends"));
    sb_putc(sb, ',');
    strings(sb, "releases", json_obj_get(hs, "releases"));
    sb_puts(sb, ",\"sampled\":{\"total\":");
    num(sb, json_obj_get(hs, "total"));
    sb_puts(sb, ",\"kept\":");
    num(sb, json_obj_get(hs, "kept"));
    sb_puts(sb, ",\"every\":");
    num(sb, json_obj_get(hs, "sampled_every"));
    sb_putc(sb, '}');
}

/* A hold of the model (violations[i].holders[j], incidents[i].cause). */
static void hold_ref(struct strbuf *sb, const struct json *h)
{
    sb_puts(sb, "{\"w\":");
    num(sb, json_obj_get(h, "worker"));
    sb_puts(sb, ",\"g\":");
    num(sb, json_obj_get(h, "acquired_ms"));
    sb_puts(sb, ",\"e\":");
    num(sb, json_obj_get(h, "enter_ms"));
    sb_puts(sb, ",\"x\":");
    num(sb, json_obj_get(h, "exit_ms"));
    sb_puts(sb, ",\"f\":");
    num(sb, json_obj_get(h, "fence"));
    sb_putc(sb, '}');
}

static void faults_json(struct strbuf *sb, const struct json *r)
{
    const struct json *fs = json_obj_get(r, "faults");
    sb_puts(sb, "\"faults\":[");
    for (size_t i = 0; i < rm_len(fs); i++) {
        const struct json *f = fs->kids[i];
        struct strbuf name = STRBUF_INIT;
        html_fault_label(&name, f);
        sb_puts(sb, i ? ",{\"id\":" : "{\"id\":");
        num(sb, json_obj_get(f, "id"));
        sb_puts(sb, ",\"name\":");
        str(sb, sb_cstr(&name));
        sb_free(&name);
        sb_puts(sb, ",\"worker\":");
        num(sb, json_obj_get(f, "worker"));
        sb_puts(sb, ",\"node\":");
        num(sb, json_obj_get(f, "node"));
        sb_puts(sb, ",\"s\":");
        num(sb, json_obj_get(f, "start_ms"));
        sb_puts(sb, ",\"e\":");
        num(sb, json_obj_get(f, "end_ms"));
        const struct json *sk = json_obj_get(f, "skipped");
        sb_printf(sb, ",\"skipped\":%s}", sk && sk->type == JSON_BOOL && sk->i ? "true" : "false");
    }
    sb_putc(sb, ']');
}

static void violations_json(struct strbuf *sb, const struct json *r)
{
    const struct json *vs = json_obj_get(r, "violations");
    sb_puts(sb, "\"violations\":[");
    for (size_t i = 0; i < rm_len(vs); i++) {
        const struct json *v = vs->kids[i], *hl = json_obj_get(v, "holders");
        sb_puts(sb, i ? ",{\"cls\":" : "{\"cls\":");
        str(sb, json_get_str(v, "class", "?"));
        sb_puts(sb, ",\"s\":");
        num(sb, json_obj_get(v, "overlap_start_ms"));
        sb_puts(sb, ",\"d\":");
        num(sb, json_obj_get(v, "overlap_ms"));
        sb_puts(sb, ",\"h\":[");
        for (size_t j = 0; j < rm_len(hl); j++) {
            sb_puts(sb, j ? "," : "");
            hold_ref(sb, hl->kids[j]);
        }
        sb_puts(sb, "]}");
    }
    sb_puts(sb, "],\"incidents\":[");
    const struct json *incs = json_obj_get(r, "incidents");
    for (size_t i = 0; i < rm_len(incs); i++) {
        const struct json *inc = incs->kids[i], *listed = json_obj_get(inc, "listed");
        sb_puts(sb, i ? ",{\"id\":" : "{\"id\":");
        num(sb, json_obj_get(inc, "id"));
        sb_puts(sb, ",\"s\":");
        num(sb, json_obj_get(inc, "start_ms"));
        sb_puts(sb, ",\"e\":");
        num(sb, json_obj_get(inc, "end_ms"));
        sb_puts(sb, ",\"cause\":");
        hold_ref(sb, json_obj_get(inc, "cause"));
        sb_puts(sb, ",\"listed\":[");
        for (size_t j = 0; j < rm_len(listed); j++) {
            sb_puts(sb, j ? "," : "");
            num(sb, listed->kids[j]);
        }
        sb_puts(sb, "]}");
    }
    sb_putc(sb, ']');
}

/* s into sb with every '<' as \u003c: JSON inside <script> can then never
 * close the element (a '<' only ever occurs inside a JSON string here). */
static void put_script_safe(struct strbuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<')
            sb_puts(sb, "\\u003c");
        else
            sb_putc(sb, s[i]);
    }
}

void html_timeline_section(struct strbuf *sb, const struct json *r)
{
    const struct json *hs = json_path(r, "series.holds");
    sb_puts(sb, "<section id=\"timeline\"><h2>Timeline</h2>");
    if (!hs || hs->type != JSON_OBJ) {
        sb_puts(sb, "<p class=\"missing\">No hold table in this result (series.holds): "
                    "re-render it with <code>lockstorm report RUN_DIR</code>.</p></section>\n");
        return;
    }
    int64_t total = json_get_int(hs, "total", 0), kept = json_get_int(hs, "kept", 0);
    int64_t every = json_get_int(hs, "sampled_every", 1);
    sb_printf(sb, "<p class=\"tl-help\">One row per worker (and per node a fault hit). "
                  "<b>Wheel</b> zooms, <b>drag</b> pans, <b>double-click</b> shows the whole run; "
                  "hover a hold for its worker, resource, fence, lease, times and outcome; click a "
                  "violation, an incident or a story line below to zoom to it. %lld holds",
              (long long)total);
    if (every > 1)
        sb_printf(sb, ", <b>sampled</b>: 1 hold in %lld is drawn (%lld), plus every hold of a "
                      "listed violation", (long long)every, (long long)kept);
    sb_puts(sb, "; where a row has more holds in view than pixels, it shows how busy each pixel "
                "is instead.</p><p class=\"tl-help tl-key\"><span style=\"background:#2b6cb0\">"
                "</span>hold within its lease<span style=\"background:#e07b00\"></span>past its "
                "lease<span style=\"background:rgba(240,190,0,.6)\"></span>fault on that worker or "
                "node<span style=\"background:rgba(240,200,0,.25)\"></span>fault on every worker"
                "<span style=\"background:#b3261e\"></span>stale-holder overlap"
                "<span style=\"background:#7b1fa2\"></span>lock-broken overlap</p>"
                "<div class=\"tl\" id=\"tl\"><canvas></canvas><div class=\"tl-tip\"></div></div>\n"
                "<script type=\"application/json\" id=\"tl-data\">");
    struct strbuf d = STRBUF_INIT;
    sb_puts(&d, "{\"end_s\":");
    num(&d, json_path(r, "duration_s"));
    sb_puts(&d, ",\"workers\":[");
    int64_t nw = json_get_int(json_path(r, "workload.workers"), "count", 0);
    for (int64_t i = 0; i < nw && i < 4096; i++)
        sb_printf(&d, i ? ",%lld" : "%lld", (long long)i);
    sb_puts(&d, "],");
    holds_json(&d, hs);
    sb_putc(&d, ',');
    faults_json(&d, r);
    sb_putc(&d, ',');
    violations_json(&d, r);
    sb_puts(&d, "}");
    put_script_safe(sb, d.buf, d.len);
    sb_free(&d);
    sb_puts(sb, "</script></section>\n");
}

void html_timeline_css(struct strbuf *sb)
{
    sb_puts(sb, (const char *)ls_asset_timeline_css);
}

void html_timeline_script(struct strbuf *sb)
{
    sb_puts(sb, "<script>");
    sb_puts(sb, (const char *)ls_asset_timeline_js);
    sb_puts(sb, "</script>\n");
}
