/*
 * markdown.c: the Markdown summary of a result model (summary.md, and the
 * stdout of `run --md` / `check --md`), for a CI job's step summary
 * ($GITHUB_STEP_SUMMARY) or a pull-request comment: the verdict and how it
 * follows, what it rests on (evidence, coverage), the incidents by class,
 * the expectations table (met, unmet, not measured and why) and the first
 * story of each violation class. It only formats what the model holds;
 * every number comes from result.json (docs/result-format.md).
 */
#include <stdio.h>
#include <string.h>

#include "reports/reports.h"
#include "reports/result.h"
#include "reports/rmodel.h"

#define MD_MAX_INCIDENTS 20 /* incident rows; the rest are counted */
#define MD_MAX_GAPS 10      /* evidence gaps listed */

static int is_true(const struct json *v)
{
    return v && v->type == JSON_BOOL && v->i;
}

/* A value for people: an integer exact, a number with at most 3 decimals,
 * a string as is, "-" for null or absent. */
static void put_val(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type == JSON_NULL) {
        sb_putc(sb, '-');
    } else if (v->type == JSON_STR) {
        sb_append(sb, v->s, v->n);
    } else if (v->type == JSON_BOOL) {
        sb_puts(sb, v->i ? "true" : "false");
    } else if (v->type == JSON_NUM) {
        rm_put_num(sb, v);
    } else {
        json_write(sb, v, -1);
    }
}

void md_cell(struct strbuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        char c = s[i];
        if (c == '\n')
            sb_puts(sb, "<br>");
        else if (c == '\r')
            continue;
        else if (c == '<')
            sb_puts(sb, "&lt;");
        else if (c == '&')
            sb_puts(sb, "&amp;");
        else if (strchr("\\|`*_[]", c))
            sb_printf(sb, "\\%c", c);
        else if ((unsigned char)c < 0x20)
            sb_putc(sb, ' ');
        else
            sb_putc(sb, c);
    }
}

static void cell(struct strbuf *sb, const char *s)
{
    md_cell(sb, s, s ? strlen(s) : 0);
}

/* A value in a table cell: put_val, escaped. */
static void cell_val(struct strbuf *sb, const struct json *v)
{
    struct strbuf t = STRBUF_INIT;
    put_val(&t, v);
    md_cell(sb, t.buf, t.len);
    sb_free(&t);
}

static const char *verdict_word(const struct json *r)
{
    const char *v = json_get_str(r, "verdict", "unknown");
    return !strcmp(v, "pass") ? "PASS" : !strcmp(v, "fail") ? "FAIL" : "UNKNOWN";
}

/* The heading, how the verdict follows, and the verdict line as code. */
static void md_verdict(const struct json *r, struct strbuf *sb)
{
    const struct json *wl = json_obj_get(r, "workload");
    sb_printf(sb, "## lockstorm %s", verdict_word(r));
    if (wl && wl->type == JSON_OBJ) {
        sb_puts(sb, ": ");
        cell(sb, json_get_str(wl, "name", "?"));
        const struct json *impl = json_path(wl, "lock.impl");
        if (impl && impl->type == JSON_STR) {
            sb_puts(sb, " (");
            cell(sb, impl->s);
            sb_putc(sb, ')');
        }
    }
    sb_puts(sb, "\n\n");
    struct strbuf why = STRBUF_INIT;
    render_verdict_why(r, &why);
    sb_puts(sb, "**");
    const char *colon = strchr(sb_cstr(&why), ':');
    size_t head = colon ? (size_t)(colon - why.buf) : 0;
    md_cell(sb, why.buf, head);
    sb_puts(sb, "**");
    md_cell(sb, why.buf + head, why.len - head);
    sb_puts(sb, "\n\n");
    sb_free(&why);
    struct strbuf line = STRBUF_INIT;
    render_verdict_line(r, &line);
    if (line.len && line.buf[line.len - 1] == '\n')
        line.len--;
    sb_puts(sb, "```\n");
    sb_append(sb, line.buf, line.len);
    sb_puts(sb, "\n```\n");
    sb_free(&line);
}

/* What the verdict rests on: evidence and coverage, when the model has
 * them; an interrupted run says so. */
static void md_rests_on(const struct json *r, struct strbuf *sb)
{
    const struct json *ev = json_obj_get(r, "evidence");
    const struct json *cv = json_obj_get(r, "coverage");
    int interrupted = is_true(json_obj_get(r, "interrupted"));
    if ((!ev || ev->type != JSON_OBJ) && (!cv || cv->type != JSON_OBJ) && !interrupted)
        return;
    sb_puts(sb, "\n### What the verdict rests on\n\n");
    if (interrupted)
        sb_puts(sb, "- **interrupted**: the run did not end normally; it cannot pass\n");
    if (ev && ev->type == JSON_OBJ) {
        const struct json *logs = json_obj_get(ev, "logs");
        sb_printf(sb, "- evidence: %s, worker logs ",
                  is_true(json_obj_get(ev, "complete")) ? "complete" : "**incomplete**");
        cell_val(sb, json_obj_get(logs, "found"));
        sb_puts(sb, " of ");
        cell_val(sb, json_obj_get(logs, "expected"));
        sb_puts(sb, " (missing ");
        cell_val(sb, json_obj_get(logs, "missing"));
        sb_puts(sb, ", foreign ");
        cell_val(sb, json_obj_get(logs, "foreign"));
        sb_puts(sb, ", damaged ");
        cell_val(sb, json_obj_get(logs, "damaged"));
        sb_puts(sb, ")\n");
        const struct json *gaps = json_obj_get(ev, "gaps");
        for (size_t i = 0; i < rm_len(gaps) && i < MD_MAX_GAPS; i++) {
            sb_puts(sb, "  - gap: ");
            cell_val(sb, gaps->kids[i]);
            sb_putc(sb, '\n');
        }
        if (rm_len(gaps) > MD_MAX_GAPS)
            sb_printf(sb, "  - %zu more gaps in result.json\n", rm_len(gaps) - MD_MAX_GAPS);
    }
    if (cv && cv->type == JSON_OBJ) {
        const struct json *enough = json_obj_get(cv, "enough_activity");
        sb_puts(sb, "- coverage: holds ");
        cell_val(sb, json_obj_get(cv, "holds"));
        sb_puts(sb, ", grants ");
        cell_val(sb, json_obj_get(cv, "grants"));
        sb_puts(sb, ", contended acquires ");
        cell_val(sb, json_obj_get(cv, "contended_acquires"));
        sb_puts(sb, " (floor ");
        cell_val(sb, json_obj_get(cv, "grant_floor"));
        sb_printf(sb, ", enough activity: %s)",
                  !enough || enough->type != JSON_BOOL ? "-" : enough->i ? "yes" : "**no**");
        const struct json *f = json_obj_get(cv, "faults");
        if (f && f->type == JSON_OBJ) {
            sb_puts(sb, "; faults that bit: ");
            cell_val(sb, json_obj_get(f, "bit"));
            sb_puts(sb, " of ");
            cell_val(sb, json_obj_get(f, "occurrences"));
        }
        sb_putc(sb, '\n');
    }
}

static void put_fault_list(struct strbuf *sb, const struct json *r, const struct json *ids)
{
    if (!rm_len(ids)) {
        sb_puts(sb, "none");
        return;
    }
    for (size_t i = 0; i < ids->n; i++) {
        struct strbuf t = STRBUF_INIT;
        report_fault_name(&t, r, ids->kids[i]);
        if (i)
            sb_puts(sb, ", ");
        md_cell(sb, t.buf, t.len);
        sb_free(&t);
    }
}

/* The incidents by class, then a table, lock-broken ones first. */
static void md_incidents(const struct json *r, struct strbuf *sb)
{
    const struct json *incs = json_obj_get(r, "incidents");
    const struct json *m = json_path(r, "checks.mutex");
    if (!incs || incs->type != JSON_ARR)
        return;
    int64_t total = json_get_int(m, "incidents", (int64_t)incs->n);
    sb_printf(sb, "\n### Incidents: %lld", (long long)total);
    if (total <= 0) {
        sb_puts(sb, "\n\nNo violation.\n");
        return;
    }
    sb_puts(sb, " (lock-broken ");
    cell_val(sb, json_path(m, "incidents_by_class.lock_broken"));
    sb_puts(sb, ", stale-holder ");
    cell_val(sb, json_path(m, "incidents_by_class.stale_holder"));
    sb_puts(sb, "), grouping ");
    cell_val(sb, json_obj_get(m, "violations"));
    sb_puts(sb, " violations\n\n| # | class | resource | cause | overlaps | span (ms) | faults |\n"
                "|---|---|---|---|---|---|---|\n");
    static const char *const classes[] = {"lock-broken", "stale-holder"};
    size_t shown = 0;
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < incs->n && shown < MD_MAX_INCIDENTS; i++) {
            const struct json *inc = incs->kids[i];
            if (strcmp(json_get_str(inc, "class", ""), classes[c]) != 0)
                continue;
            shown++;
            const struct json *cause = json_obj_get(inc, "cause");
            const struct json *cw = json_obj_get(cause, "worker");
            sb_puts(sb, "| ");
            cell_val(sb, json_obj_get(inc, "id"));
            sb_printf(sb, " | %s | ", classes[c]);
            cell(sb, json_get_str(inc, "resource", "?"));
            sb_puts(sb, " | ");
            if (cw && cw->type == JSON_NUM)
                sb_printf(sb, "w%lld", (long long)cw->i);
            else
                sb_putc(sb, '-');
            if (is_true(json_obj_get(cause, "crashed")))
                sb_puts(sb, " (killed)");
            sb_puts(sb, " | ");
            cell_val(sb, json_obj_get(inc, "violations"));
            sb_puts(sb, " | ");
            cell_val(sb, json_obj_get(inc, "start_ms"));
            sb_puts(sb, "–");
            cell_val(sb, json_obj_get(inc, "end_ms"));
            sb_puts(sb, " | ");
            put_fault_list(sb, r, json_obj_get(inc, "faults"));
            sb_puts(sb, " |\n");
        }
    }
    if ((int64_t)shown < total)
        sb_printf(sb, "\n%lld more in result.json.\n", (long long)(total - (int64_t)shown));
}

/* The expectations table: path, op, expected, got, state (met, unmet, or
 * not measured with its why). want is split at its leading operator; a
 * bare value means ==. */
static void md_expectations(const struct json *r, struct strbuf *sb)
{
    const struct json *ex = json_obj_get(r, "expectations");
    size_t n = rm_len(ex), nok = 0;
    if (!n)
        return;
    for (size_t i = 0; i < n; i++)
        nok += is_true(json_obj_get(ex->kids[i], "ok"));
    sb_printf(sb, "\n### Expectations: %zu of %zu met\n\n"
                  "| path | op | expected | got | state |\n|---|---|---|---|---|\n", nok, n);
    static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (size_t i = 0; i < n; i++) {
        const struct json *e = ex->kids[i];
        const char *want = json_get_str(e, "want", "");
        const char *op = "==";
        while (*want == ' ')
            want++;
        for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
            if (strncmp(want, ops[k], strlen(ops[k])) == 0) {
                op = ops[k];
                want += strlen(ops[k]);
                break;
            }
        while (*want == ' ')
            want++;
        sb_puts(sb, "| ");
        cell(sb, json_get_str(e, "path", ""));
        sb_puts(sb, " | ");
        cell(sb, op);
        sb_puts(sb, " | ");
        cell(sb, want);
        sb_puts(sb, " | ");
        cell_val(sb, json_obj_get(e, "got"));
        sb_puts(sb, " | ");
        const char *why = json_get_str(e, "why", NULL);
        if (is_true(json_obj_get(e, "ok"))) {
            sb_puts(sb, "met");
        } else if (why) {
            const char *pre = "not measured: ";
            if (strncmp(why, pre, strlen(pre)) == 0)
                why += strlen(pre);
            sb_puts(sb, "**not measured**: ");
            cell(sb, why);
        } else {
            sb_puts(sb, "**unmet**");
        }
        sb_puts(sb, " |\n");
    }
}

/* A story as a fenced block: its lines are plain text, one line each, as
 * in summary.txt (a newline inside a line would let it close the fence). */
static void md_story_block(const struct json *story, struct strbuf *sb)
{
    sb_puts(sb, "```text\n");
    for (size_t k = 0; k < story->n; k++) {
        const struct json *it = story->kids[k];
        const char *kind = json_get_str(it, "kind", "");
        if (strcmp(kind, "overlap") && strcmp(kind, "conclusion"))
            sb_printf(sb, "t=%.3fs ", json_get_num(it, "t_ms", 0) / 1000.0);
        else
            sb_puts(sb, "=> ");
        for (const char *p = json_get_str(it, "text", ""); *p; p++)
            sb_putc(sb, *p == '\n' ? ' ' : *p);
        sb_putc(sb, '\n');
    }
    sb_puts(sb, "```\n");
}

/* The first story of each violation class present, lock-broken first, as
 * a fenced block. */
static void md_stories(const struct json *r, struct strbuf *sb)
{
    static const char *const classes[] = {"lock-broken", "stale-holder"};
    const struct json *vs = json_obj_get(r, "violations");
    for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
        long at = rm_story_of(r, classes[c]);
        if (at < 0)
            continue;
        size_t i = (size_t)at;
        const struct json *story = json_obj_get(vs->kids[i], "story");
        sb_printf(sb, "\n### Story of violation %zu (", i + 1);
        cell(sb, json_get_str(vs->kids[i], "resource", "?"));
        sb_printf(sb, " %s", classes[c]);
        int64_t inc = rm_incident_of(r, i);
        if (inc >= 0)
            sb_printf(sb, ", incident #%lld", (long long)inc);
        sb_puts(sb, ")\n\n");
        md_story_block(story, sb);
    }
}

/* The story of each mutex anomaly that has one (checks.mutex.anomalies:
 * renewed-after-loss, lost-with-lease-left, expired: the first of each
 * class), as summary.txt tells them. */
static void md_anomaly_stories(const struct json *r, struct strbuf *sb)
{
    const struct json *an = json_path(r, "checks.mutex.anomalies");
    for (size_t i = 0; i < rm_len(an); i++) {
        const struct json *a = an->kids[i], *story = json_obj_get(a, "story");
        if (!rm_len(story))
            continue;
        sb_puts(sb, "\n### Story of ");
        cell(sb, json_get_str(a, "class", "?"));
        sb_puts(sb, " (");
        cell(sb, json_get_str(a, "resource", "?"));
        sb_printf(sb, ", w%lld at %.3fs)\n\n", (long long)json_get_int(a, "worker", -1),
                  json_get_num(a, "t_ms", 0) / 1000.0);
        md_story_block(story, sb);
    }
}

/* Contract: appends the Markdown summary of result to sb: a heading with
 * the verdict, how it follows, the verdict line (as code), what it rests
 * on, the incidents, the expectations table, the first story of each
 * violation class and of each mutex anomaly. Reads result only; table cells go through md_cell. */
void render_markdown(const struct json *result, struct strbuf *sb)
{
    md_verdict(result, sb);
    md_rests_on(result, sb);
    md_incidents(result, sb);
    md_expectations(result, sb);
    md_stories(result, sb);
    md_anomaly_stories(result, sb);
}
