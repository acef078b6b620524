/*
 * reports.c: writes the selected report files of one result into a run
 * directory (see reports.h): result.json, summary.txt, summary.md,
 * junit.xml, the charts and report.html. The one place that knows which renderer makes
 * which file and in what order; the CLI and harness/run.c call it. It
 * renders nothing itself.
 */
#include "reports/reports.h"

#include <string.h>

#include "reports/result.h"

static const struct {
    const char *name;
    unsigned bit;
} format_names[] = {
    {"text", REPORT_TEXT}, {"json", REPORT_JSON}, {"junit", REPORT_JUNIT},
    {"charts", REPORT_CHARTS}, {"html", REPORT_HTML}, {"md", REPORT_MD},
    {"markdown", REPORT_MD}, {"all", REPORT_ALL},
};

int reports_parse_formats(const char *list, unsigned *out, char *why, size_t whylen)
{
    *out = 0;
    const char *p = list ? list : "";
    if (!*p) {
        snprintf(why, whylen, "empty format list (choose from text, json, junit, charts, "
                              "html, md, all)");
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) {
            snprintf(why, whylen, "empty item in '%s'", list);
            return -1;
        }
        size_t i;
        for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
            if (strlen(format_names[i].name) == len && strncmp(format_names[i].name, p, len) == 0)
                break;
        if (i == sizeof(format_names) / sizeof(format_names[0])) {
            snprintf(why, whylen, "unknown format '%.*s' (choose from text, json, junit, "
                                  "charts, html, md, all)", (int)len, p);
            return -1;
        }
        *out |= format_names[i].bit;
        if (!comma)
            break;
        p = comma + 1;
        if (!*p) {
            snprintf(why, whylen, "empty item in '%s'", list);
            return -1;
        }
    }
    return 0;
}

static int write_one(const char *dir, const char *name, const struct strbuf *sb,
                     struct strbuf *written, struct ls_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = sb_write_file(sb, path);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    if (written)
        sb_printf(written, "%s%s", written->len ? " " : "", name);
    return 0;
}

int reports_write_all(const char *dir, const struct json *result, unsigned formats, FILE *notes,
                      struct strbuf *written, struct ls_err *err)
{
    if (formats == 0)
        formats = REPORT_ALL;
    if (formats & REPORT_HTML)
        formats |= REPORT_CHARTS; /* the page embeds them */
    struct strbuf sb = STRBUF_INIT, note = STRBUF_INIT;
    int rc = 0;
    if (formats & REPORT_JSON) {
        render_json(result, &sb);
        rc = write_one(dir, "result.json", &sb, written, err);
        sb_reset(&sb);
    }
    if (rc == 0 && (formats & REPORT_TEXT)) {
        render_text(result, &sb);
        rc = write_one(dir, "summary.txt", &sb, written, err);
        sb_reset(&sb);
    }
    if (rc == 0 && (formats & REPORT_MD)) {
        render_markdown(result, &sb);
        rc = write_one(dir, "summary.md", &sb, written, err);
        sb_reset(&sb);
    }
    if (rc == 0 && (formats & REPORT_JUNIT)) {
        render_junit(result, &sb);
        rc = write_one(dir, "junit.xml", &sb, written, err);
        sb_reset(&sb);
    }
    if (rc == 0 && (formats & REPORT_CHARTS)) {
        int made = render_charts(dir, result, &note, err);
        if (made < 0)
            rc = made;
        for (int i = 0; rc == 0 && i < report_ncharts && written; i++)
            sb_printf(written, " %s.dat %s.gp", report_charts[i].name, report_charts[i].name);
        if (made > 0 && written)
            sb_printf(written, " (%d of %d charts as .svg)", made, report_ncharts);
    }
    if (rc == 0 && (formats & REPORT_HTML)) {
        render_html(result, dir, note.len ? sb_cstr(&note) : NULL, &sb);
        rc = write_one(dir, "report.html", &sb, written, err);
        sb_reset(&sb);
    }
    if (note.len && notes)
        fprintf(notes, "lockstorm: %s\n", sb_cstr(&note));
    sb_free(&sb);
    sb_free(&note);
    return rc;
}
