/*
 * evidence.c: comparing a run directory's event logs with its run.json
 * (see evidence.h). run.json lists every process each worker id had (its
 * epochs) and how each one ended; every log must be there, name this run
 * and its own worker and epoch in its header, and end the way its process
 * ended: closed after a clean exit, with the harness's crash record after
 * a kill. A torn last record of a process that died is what a death
 * leaves and is no gap; records lost before the end are.
 */
#include "checkers/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* How a listed process ended, as run.json says: what its log must show. */
enum ev_end {
    END_UNKNOWN = 0,    /* not recorded (older run.json), still running, or it failed */
    END_CLEAN,          /* "exited 0": it closed its log */
    END_KILLED,         /* killed by the harness: its log ends with a crash record */
    END_DIED,           /* any other end: a torn last record is expected */
};

struct ev_expect {
    int worker;
    uint32_t epoch;
    int end;            /* enum ev_end */
    int found;          /* a file of this name is in events/ */
};

static struct hist_evidence *ev_of(struct history *h)
{
    if (!h->ev)
        h->ev = xcalloc(1, sizeof(*h->ev));
    return h->ev;
}

void history_gap(struct history *h, const char *fmt, ...)
{
    struct hist_evidence *ev = ev_of(h);
    if (ev->ngaps >= EVIDENCE_MAX_GAPS) {
        ev->more++;
        return;
    }
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    for (char *p = tmp; *p; p++) /* one line, whatever a damaged run.json says */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    ev->gaps = xrealloc(ev->gaps, (size_t)(ev->ngaps + 1) * sizeof(*ev->gaps));
    ev->gaps[ev->ngaps++] = xstrdup(tmp);
}

static int ngaps(const struct hist_evidence *ev)
{
    return ev ? ev->ngaps + ev->more : 0;
}

struct ev_mark evidence_mark(const struct history *h)
{
    return (struct ev_mark){ngaps(h->ev), h->ev ? h->ev->damaged : 0};
}

void evidence_rewind(struct history *h, struct ev_mark m)
{
    struct hist_evidence *ev = h->ev;
    while (ev && ngaps(ev) > m.ngaps) {
        if (ev->more)
            ev->more--;
        else
            free(ev->gaps[--ev->ngaps]);
    }
    if (ev)
        ev->damaged = m.damaged;
}

void evidence_free(struct hist_evidence *ev)
{
    if (!ev)
        return;
    for (int i = 0; i < ev->ngaps; i++)
        free(ev->gaps[i]);
    free(ev->gaps);
    free(ev->exp);
    free(ev);
}

/* ---- run.json ---- */

static int cmp_expect(const void *a, const void *b)
{
    const struct ev_expect *x = a, *y = b;
    if (x->worker != y->worker)
        return (x->worker > y->worker) - (x->worker < y->worker);
    return (x->epoch > y->epoch) - (x->epoch < y->epoch);
}

static struct ev_expect *find_expect(struct hist_evidence *ev, int worker, uint32_t epoch)
{
    struct ev_expect key = {worker, epoch, 0, 0};
    return ev->nexp ? bsearch(&key, ev->exp, ev->nexp, sizeof(*ev->exp), cmp_expect) : NULL;
}

/* Contract: how the process of one run.json epoch entry (or, in a run.json
 * without "epochs", worker entry) ended. */
static int end_of(const struct json *o)
{
    const char *ex = json_get_str(o, "exit", NULL);
    const struct json *k = json_obj_get(o, "killed_by_harness");
    if (!ex || strcmp(ex, "running") == 0)
        return END_UNKNOWN;
    if (k && k->type == JSON_BOOL && k->i)
        return END_KILLED;
    if (strcmp(ex, "exited 0") == 0)
        return END_CLEAN;
    if (strncmp(ex, "exited ", 7) == 0)
        return END_UNKNOWN; /* it failed (start-up, disk full): the run says so */
    return END_DIED;
}

static void add_expect(struct hist_evidence *ev, int worker, int64_t epoch, int end)
{
    ev->exp = xrealloc(ev->exp, (ev->nexp + 1) * sizeof(*ev->exp));
    ev->exp[ev->nexp++] = (struct ev_expect){worker, (uint32_t)epoch, end, 0};
}

/* Contract: the logs run.json's "workers" lists into ev->exp (sorted,
 * duplicates dropped). Returns 0, or -1 with a gap recorded when the list
 * is missing or not what lockstorm writes. */
static int read_workers(struct history *h, struct hist_evidence *ev)
{
    const struct json *ws = json_obj_get(h->run, "workers");
    if (!ws || ws->type != JSON_ARR) {
        history_gap(h, "run.json: no \"workers\" list: the event logs cannot be matched with "
                       "the processes that wrote them");
        return -1;
    }
    for (size_t i = 0; i < ws->n; i++) {
        const struct json *e = ws->kids[i];
        int64_t id = json_get_int(e, "worker", -1);
        if (e->type != JSON_OBJ || id < 0 || id > 1000000) {
            history_gap(h, "run.json: workers[%zu]: no worker id: its logs cannot be matched", i);
            return -1;
        }
        const struct json *eps = json_obj_get(e, "epochs");
        if (eps && eps->type == JSON_ARR && eps->n > 0) {
            for (size_t k = 0; k < eps->n; k++) {
                int64_t ep = json_get_int(eps->kids[k], "epoch", -1);
                if (ep < 0 || ep > UINT32_MAX) {
                    history_gap(h, "run.json: worker %d epochs[%zu]: no epoch number: its log "
                                   "cannot be matched", (int)id, k);
                    return -1;
                }
                int end = end_of(eps->kids[k]);
                const struct json *made = json_obj_get(eps->kids[k], "log_made");
                if (made && made->type == JSON_BOOL && !made->i && end != END_CLEAN)
                    continue; /* it died before it created its log: none to expect */
                add_expect(ev, (int)id, ep, end);
            }
        } else { /* written before run.json listed epochs: 0 .. the last one */
            int64_t last = json_get_int(e, "epoch", 0);
            if (last < 0 || last > 1000000)
                last = 0;
            for (int64_t ep = 0; ep <= last; ep++)
                add_expect(ev, (int)id, ep, ep == last ? end_of(e) : END_UNKNOWN);
        }
    }
    if (ev->nexp > 1)
        qsort(ev->exp, ev->nexp, sizeof(*ev->exp), cmp_expect);
    size_t o = 0;
    for (size_t i = 0; i < ev->nexp; i++)
        if (o == 0 || cmp_expect(&ev->exp[o - 1], &ev->exp[i]) != 0)
            ev->exp[o++] = ev->exp[i];
    ev->nexp = o;
    ev->expected = (int)o;
    return 0;
}

void evidence_begin(struct history *h)
{
    struct hist_evidence *ev = ev_of(h);
    ev->compared = 1;
    const char *state = json_get_str(h->run, "state", NULL);
    snprintf(ev->run_state, sizeof(ev->run_state), "%s", state ? state : "");
    if (!state) {
        history_gap(h, "run.json: no \"state\": whether the run finished is not recorded");
    } else if (strcmp(state, "failed") == 0) {
        const char *why = json_get_str(h->run, "error", NULL);
        history_gap(h, "run.json: the run failed: %s", why ? why : "(no error recorded)");
    } else if (strcmp(state, "running") == 0) {
        history_gap(h, "run.json: state \"running\": the harness did not finish the run (it was "
                       "killed, or is still at work); what it did not record is missing");
    } else if (strcmp(state, "finished") != 0 && strcmp(state, "interrupted") != 0) {
        history_gap(h, "run.json: unknown state '%.40s'", state);
    }
    const struct json *id = json_obj_get(h->run, "run_id");
    if (id && id->type == JSON_STR && id->s[0]) {
        if (evlog_run_id_parse(id->s, ev->run_id_raw) == 0)
            evlog_run_id_hex(ev->run_id_raw, ev->run_id);
        else
            history_gap(h, "run.json: run_id '%.40s' is not 32 hex digits: its logs cannot be "
                           "told from another run's", id->s);
    } else if (id && id->type != JSON_STR && id->type != JSON_NULL) {
        history_gap(h, "run.json: run_id is not a string: its logs cannot be told from another "
                       "run's");
    }
    ev->listed = read_workers(h, ev) == 0;
}

/* ---- the logs ---- */

int evidence_admit(struct history *h, const char *dir, const char *name, int id, uint32_t epoch)
{
    struct hist_evidence *ev = ev_of(h);
    ev->found++;
    struct ev_expect *x = ev->listed ? find_expect(ev, id, epoch) : NULL;
    if (x)
        x->found = 1;
    /* The header, read alone: anything unreadable is left to the loader,
     * which refuses it or reports it. */
    char path[4096];
    snprintf(path, sizeof(path), "%s/events/%s", dir, name);
    struct evlog_header hdr;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    int have = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
               pread(fd, &hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
               memcmp(hdr.magic, EVLOG_MAGIC, sizeof(EVLOG_MAGIC)) == 0;
    if (fd >= 0)
        close(fd);
    if (have) {
        char hid[2 * EVLOG_RUN_ID_LEN + 1];
        evlog_run_id_hex(hdr.run_id, hid);
        const char *why = NULL;
        char text[160];
        if ((int)hdr.worker != id || hdr.epoch != epoch) {
            snprintf(text, sizeof(text), "its header says worker %u epoch %u", hdr.worker,
                     hdr.epoch);
            why = text;
        } else if (memcmp(hdr.run_id, ev->run_id_raw, EVLOG_RUN_ID_LEN) != 0) {
            snprintf(text, sizeof(text), "run id %s, this run's is %s", hid[0] ? hid : "none",
                     ev->run_id[0] ? ev->run_id : "none");
            why = text;
        } else if (ev->listed && !x) {
            why = "run.json lists no such worker epoch";
        }
        if (why) {
            ev->foreign++;
            history_gap(h, "events/%s: a log of another run (%s): not checked", name, why);
            return 0;
        }
    } else if (ev->listed && !x) {
        ev->foreign++;
        history_gap(h, "events/%s: run.json lists no worker %d epoch %u: not checked", name, id,
                    epoch);
        return 0;
    }
    return 1;
}

void evidence_log(struct history *h, const char *name, int id, uint32_t epoch,
                  const struct evlog_file *f, int deferred)
{
    struct hist_evidence *ev = ev_of(h);
    struct ev_expect *x = ev->listed ? find_expect(ev, id, epoch) : NULL;
    int end = x ? x->end : END_UNKNOWN;
    if (f->blank) {
        /* a process that died creating its log wrote nothing; one that
         * exited cleanly must have written its header */
        if (end == END_CLEAN) {
            ev->damaged++;
            history_gap(h, "events/%s: no header, though worker %d's process exited cleanly: "
                           "its events are lost", name, id);
        }
        return;
    }
    if (f->damaged) {
        char extra[96] = "";
        if (f->hdr.flags & EVLOG_F_CLOSED)
            snprintf(extra, sizeof(extra), "; its writer closed it after %llu records",
                     (unsigned long long)f->hdr.count);
        ev->damaged++;
        history_gap(h, "events/%s: damaged after record %zu (%zu bytes after it cannot be "
                       "read%s): the records after it are lost", name, f->n, f->torn_bytes,
                    extra);
        return;
    }
    if (deferred || f->closed)
        return;
    int crashed = f->n > 0 && f->recs[f->n - 1].type == EV_CRASH;
    if (end == END_CLEAN) {
        ev->damaged++;
        history_gap(h, "events/%s: cut short after record %zu: not closed, though worker %d's "
                       "process exited cleanly", name, f->n, id);
    } else if (end == END_KILLED && !crashed) {
        ev->damaged++;
        history_gap(h, "events/%s: cut short after record %zu: no crash record, though the "
                       "harness killed worker %d there", name, f->n, id);
    }
}

void evidence_end(struct history *h)
{
    struct hist_evidence *ev = ev_of(h);
    if (ev->found == 0) {
        ev->missing = ev->expected;
        history_gap(h, "events/: no event logs (run.json lists %d): nothing was recorded to "
                       "check", ev->expected);
        return;
    }
    for (size_t i = 0; i < ev->nexp; i++) {
        const struct ev_expect *x = &ev->exp[i];
        if (x->found)
            continue;
        ev->missing++;
        char name[64];
        evlog_path(name, sizeof(name), "", x->worker, x->epoch);
        history_gap(h, "%s: missing (worker %d epoch %u, listed in run.json): its events are "
                       "not checked", name + 1, x->worker, x->epoch);
    }
}

void evidence_cut(struct history *h, int wi, size_t n)
{
    struct hist_evidence *ev = ev_of(h);
    ev->damaged++;
    history_gap(h, "worker %d: event log damaged at record %zu and not readable again: the "
                   "records after it are lost", h->w[wi].id, n);
}

/* ---- the result ---- */

int evidence_complete(const struct history *h)
{
    return ngaps(h->ev) == 0;
}

struct json *evidence_json(const struct history *h)
{
    const struct hist_evidence *ev = h->ev;
    int compared = ev && ev->compared;
    struct json *o = json_new_obj();
    json_obj_set_bool(o, "complete", evidence_complete(h));
    struct json *gaps = json_obj_set(o, "gaps", json_new_arr());
    for (int i = 0; ev && i < ev->ngaps; i++)
        json_arr_push(gaps, json_new_str(ev->gaps[i]));
    if (ev && ev->more) {
        char line[128];
        snprintf(line, sizeof(line), "... and %d more gaps (counted in logs)", ev->more);
        json_arr_push(gaps, json_new_str(line));
    }
    json_obj_set(o, "run_id", compared && ev->run_id[0] ? json_new_str(ev->run_id)
                                                        : json_new_null());
    json_obj_set(o, "run_state", compared && ev->run_state[0] ? json_new_str(ev->run_state)
                                                              : json_new_null());
    struct json *logs = json_obj_set(o, "logs", json_new_obj());
    if (compared)
        json_obj_set_int(logs, "expected", ev->expected);
    else
        json_obj_set(logs, "expected", json_new_null());
    json_obj_set_int(logs, "found", compared ? ev->found : h->nworkers);
    json_obj_set_int(logs, "missing", ev ? ev->missing : 0);
    json_obj_set_int(logs, "foreign", ev ? ev->foreign : 0);
    json_obj_set_int(logs, "damaged", ev ? ev->damaged : 0);
    return o;
}
