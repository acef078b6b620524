/*
 * histfaults.c: the faults.jsonl reader of the history loader (history.c):
 * each fault's window (start, end, or skipped/failed), its record and what
 * its end line says (bit, requests). A line it cannot understand is a
 * warning and a gap, never an error: faults only annotate violations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/evidence.h"
#include "checkers/histload.h"
#include "util/xalloc.h"

static struct fault_window *fault_find(struct history *h, int id)
{
    for (int i = h->nfaults - 1; i >= 0; i--)
        if (h->faults[i].id == id && !h->faults[i].skipped)
            return &h->faults[i];
    return NULL;
}

/* Contract: one faults.jsonl line. A line that cannot be understood is a
 * warning, never an error: faults only annotate violations. */
static int fault_line(const char *line, size_t len, size_t lineno, void *arg)
{
    struct line_ctx *c = arg;
    struct history *h = c->h;
    struct json *o = NULL;
    char why[256];
    if (json_parse(line, len, &o, why, sizeof(why)) != 0 || o->type != JSON_OBJ) {
        history_warn(h, "%s:%zu: ignored: %s", c->file, lineno,
                     o ? "not a JSON object" : why);
        history_gap(h, "%s:%zu: damaged line: a fault's window may be missing", c->file, lineno);
        json_free(o);
        return 0;
    }
    const char *ev = json_get_str(o, "event", "");
    int id = (int)json_get_int(o, "id", -1);
    int64_t t = json_get_int(o, "t_ns", 0);
    if (strcmp(ev, "end") == 0) {
        struct fault_window *f = fault_find(h, id);
        if (f) {
            f->end = t;
            /* a kind that can tell whether it bit says so at its end
             * (kind command: whether its rule acted on a request) */
            const struct json *bit = json_obj_get(o, "bit");
            if (bit && bit->type == JSON_BOOL && f->record) {
                json_obj_set(f->record, "bit", json_clone(bit));
                json_obj_set_str(f->record, "bit_why", json_get_str(o, "bit_why", ""));
            }
            const struct json *req = json_obj_get(o, "requests");
            if (req && req->type == JSON_OBJ && f->record)
                json_obj_set(f->record, "requests", json_clone(req));
        } else {
            history_warn(h, "%s:%zu: end of fault %d that never started", c->file, lineno, id);
            history_gap(h, "%s:%zu: end of fault %d, whose start is missing", c->file, lineno,
                        id);
        }
        json_free(o);
        return 0;
    }
    /* "failed": the kind could not act (error while starting); like a skip,
     * nothing was injected, but the line is kept for the report */
    int not_injected = strcmp(ev, "skipped") == 0 || strcmp(ev, "failed") == 0;
    if (strcmp(ev, "start") != 0 && !not_injected) {
        history_warn(h, "%s:%zu: ignored: unknown event '%s'", c->file, lineno, ev);
        history_gap(h, "%s:%zu: unknown fault event '%.40s': not understood", c->file, lineno, ev);
        json_free(o);
        return 0;
    }
    h->faults = xrealloc(h->faults, (size_t)(h->nfaults + 1) * sizeof(*h->faults));
    struct fault_window *f = &h->faults[h->nfaults++];
    memset(f, 0, sizeof(*f));
    f->id = id;
    snprintf(f->kind, sizeof(f->kind), "%s", json_get_str(o, "kind", "?"));
    snprintf(f->target, sizeof(f->target), "%s", json_get_str(o, "target", ""));
    f->worker = (int)json_get_int(o, "worker", -1);
    f->node = (int)json_get_int(o, "node", -1);
    f->start = t;
    f->skipped = not_injected;
    f->end = f->skipped ? t : NO_END;
    f->record = o;
    return 0;
}

void hist_load_faults(struct history *h, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/faults.jsonl", dir);
    char *buf;
    size_t len;
    int rc = hist_read_all(path, &buf, &len);
    if (rc) {
        history_warn(h, "faults.jsonl: %s: fault windows not available", hist_read_error(rc));
        history_gap(h, "faults.jsonl: %s: which faults were active is not known", hist_read_error(rc));
        return;
    }
    struct line_ctx c = {h, "faults.jsonl"};
    hist_each_line(buf, len, fault_line, &c);
    free(buf);
    for (int i = 0; i < h->nfaults; i++)
        if (h->faults[i].end == NO_END)
            h->faults[i].end = h->end > h->faults[i].start ? h->end : h->faults[i].start;
}
