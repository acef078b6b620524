/*
 * html_timeline.h: the interactive timeline of report.html (html_timeline.c)
 * and the fault names the page's tables share with it. Internal to the
 * HTML renderer (reports/html.c); docs/reports.md "The timeline".
 */
#ifndef LS_REPORTS_HTML_TIMELINE_H
#define LS_REPORTS_HTML_TIMELINE_H

#include "util/json.h"
#include "util/strbuf.h"

/* Contract: fault f (an entry of result "faults") by name, plain text:
 * "pause holder (w2)", "pause w3" (target worker:3), "partition node_0",
 * "KIND TARGET" when it resolved to no worker or node. */
void html_fault_label(struct strbuf *sb, const struct json *f);

/* Contract: fault id of result r by name as html_fault_label, "#ID" when r
 * has no fault of that id. */
void html_fault_name(struct strbuf *sb, const struct json *r, const struct json *id);

/* Contract: the timeline section (id "timeline"): a canvas, its help and key,
 * the data it draws as JSON (<script type="application/json" id="tl-data">:
 * series.holds, faults, violations, incidents of r, columns as arrays) and
 * nothing else; a model without series.holds says the run has no hold table. */
void html_timeline_section(struct strbuf *sb, const struct json *r);

/* Contract: the page's stylesheet additions and script (embedded at build
 * time from reports/assets/), for the end of <head> and of <body>. */
void html_timeline_css(struct strbuf *sb);
void html_timeline_script(struct strbuf *sb);

#endif
