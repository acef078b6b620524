/*
 * history.c: loading what the checkers read (see history.h): a run
 * directory (binary event logs, faults.jsonl through histfaults.c,
 * storage.jsonl, run.json, workload.yaml); a JSONL event file made
 * elsewhere is read by histjsonl.c. Logs are mapped, never copied; a cleanly closed one is left
 * for the checkers' pass to verify (history.h "unverified"). Optional parts
 * that are missing become warnings; only an unreadable core (no run.json /
 * events, a corrupt log header) is an error. This file
 * judges nothing.
 */
#include "checkers/history.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkers/evidence.h"
#include "checkers/histload.h"
#include "checkers/histmap.h"
#include "checkers/histpack.h"
#include "checkers/series.h"
#include "model/rundir.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_RES 65536

void history_warn(struct history *h, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    h->warnings = xrealloc(h->warnings, (size_t)(h->nwarnings + 1) * sizeof(*h->warnings));
    h->warnings[h->nwarnings++] = xstrdup(tmp);
}

/* Contract: read the whole file at path into a new NUL-terminated buffer
 * (*buf, caller frees). Returns 0 or -errno; -EINVAL when path is not a
 * regular file (a FIFO, a device: never waited on, never read forever). */
int hist_read_all(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        close(fd);
        return -e;
    }
    struct strbuf sb = STRBUF_INIT;
    for (;;) {
        sb_reserve(&sb, 65536);
        ssize_t r = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            sb_free(&sb);
            return -e;
        }
        if (r == 0)
            break;
        sb.len += (size_t)r;
    }
    close(fd);
    *len = sb.len;
    sb_cstr(&sb);
    *buf = sb_steal(&sb);
    return 0;
}

/* strerror for hist_read_all's codes ("not a regular file" for -EINVAL). */
const char *hist_read_error(int rc)
{
    return rc == -EINVAL ? "not a regular file" : strerror(-rc);
}

/* Input the user named that is not there or not a file is bad input (exit
 * 2); a file that exists but cannot be read is the environment's (exit 3). */
int hist_read_code(int rc)
{
    switch (-rc) {
    case ENOENT: case ENOTDIR: case EISDIR: case EINVAL: case ELOOP: case ENAMETOOLONG:
        return LS_EINPUT;
    default:
        return LS_EIO;
    }
}

/* Contract: call fn(line, len, lineno, arg) for each non-blank line of
 * buf[0..n). Stops and returns the first non-zero value fn returns. */
int hist_each_line(const char *buf, size_t n,
                   int (*fn)(const char *line, size_t len, size_t lineno, void *arg), void *arg)
{
    size_t pos = 0, lineno = 0;
    while (pos < n) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - buf) : n;
        lineno++;
        size_t k = pos;
        while (k < end && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r'))
            k++;
        if (k < end) {
            int rc = fn(buf + pos, end - pos, lineno, arg);
            if (rc)
                return rc;
        }
        pos = end + 1;
    }
    return 0;
}

/* ---- resources ---- */

/* Contract: make resources 0..idx exist, naming new ones "r<i>", and keep
 * the storage array (when allocated) the same length. */
static void ensure_res(struct history *h, int idx)
{
    if (idx < h->nres)
        return;
    int n = idx + 1;
    h->res_names = xrealloc(h->res_names, (size_t)n * sizeof(*h->res_names));
    for (int i = h->nres; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "r%d", i);
        h->res_names[i] = xstrdup(name);
    }
    if (h->storage) {
        h->storage = xrealloc(h->storage, (size_t)n * sizeof(*h->storage));
        memset(h->storage + h->nres, 0, (size_t)(n - h->nres) * sizeof(*h->storage));
    }
    h->nres = n;
}

/* "r12" -> 12; -1 for anything else. */
static int res_index_of_name(const struct history *h, const char *name)
{
    for (int i = 0; i < h->nres; i++)
        if (strcmp(h->res_names[i], name) == 0)
            return i;
    if (name[0] != 'r' || name[1] < '0' || name[1] > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(name + 1, &end, 10);
    if (*end || errno || v < 0 || v >= MAX_RES)
        return -1;
    return (int)v;
}

/* ---- storage.jsonl, run.json extras (faults.jsonl: histfaults.c) ---- */

static int storage_line(const char *line, size_t len, size_t lineno, void *arg)
{
    struct line_ctx *c = arg;
    struct history *h = c->h;
    struct json *o = NULL;
    char why[256];
    if (json_parse(line, len, &o, why, sizeof(why)) != 0 || o->type != JSON_OBJ) {
        history_warn(h, "%s:%zu: ignored: %s", c->file, lineno,
                     o ? "not a JSON object" : why);
        history_gap(h, "%s:%zu: damaged line: a resource's final counters are missing", c->file,
                    lineno);
        json_free(o);
        return 0;
    }
    const char *name = json_get_str(o, "res", NULL);
    int idx = name ? res_index_of_name(h, name) : -1;
    const struct json *plain = json_obj_get(o, "plain");
    if (idx < 0 || !plain || plain->type != JSON_NUM) {
        history_warn(h, "%s:%zu: ignored: needs \"res\":\"rN\" and \"plain\"", c->file, lineno);
        history_gap(h, "%s:%zu: damaged line: a resource's final counters are missing", c->file,
                    lineno);
        json_free(o);
        return 0;
    }
    ensure_res(h, idx);
    struct storage_final *s = &h->storage[idx];
    s->present = 1;
    s->plain = json_get_int(o, "plain", 0);
    s->fenced = json_get_int(o, "fenced", -1);      /* -1: counter not kept */
    s->fence_hwm = json_get_int(o, "fence_hwm", -1);
    json_free(o);
    return 0;
}

static void load_storage(struct history *h, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/storage.jsonl", dir);
    char *buf;
    size_t len;
    int rc = hist_read_all(path, &buf, &len);
    if (rc) {
        const struct json *st = json_obj_get(h->run, "storage");
        if (rc != -ENOENT)
            history_warn(h, "storage.jsonl: %s: lost updates not available", hist_read_error(rc));
        /* missing is normal for a run without a storage node */
        if (rc != -ENOENT || (st && st->type == JSON_OBJ))
            history_gap(h, "storage.jsonl: %s, though the run had a storage node: lost updates "
                           "cannot be counted", hist_read_error(rc));
        return;
    }
    h->have_storage = 1;
    h->storage = calloc((size_t)(h->nres ? h->nres : 1), sizeof(*h->storage));
    if (!h->storage) 
        xalloc_die();
    struct line_ctx c = {h, "storage.jsonl"};
    hist_each_line(buf, len, storage_line, &c);
    free(buf);
}

static void load_leftovers(struct history *h)
{
    const struct json *arr = json_obj_get(h->run, "leftover_keys");
    if (!arr || arr->type != JSON_ARR)
        return;
    h->leftover = xmalloc(arr->n * sizeof(*h->leftover));
    for (size_t i = 0; i < arr->n; i++) {
        const struct json *k = arr->kids[i];
        int64_t res = json_get_int(k, "res", -1);
        if (res < 0 || res >= MAX_RES) {
            history_warn(h, "run.json: leftover_keys[%zu]: bad res", i);
            history_gap(h, "run.json: leftover_keys[%zu]: damaged: a key left on a node is not "
                           "known", i);
            continue;
        }
        ensure_res(h, (int)res);
        struct leftover_key *l = &h->leftover[h->nleftover++];
        l->res = (int)res;
        l->node = (int)json_get_int(k, "node", -1);
        l->pttl_ms = json_get_int(k, "pttl_ms", -1);
    }
}

/* ---- event logs ---- */

/* What scanning one log found besides its records. */
/* A process has at most vm.max_map_count mappings (65530 by default). A
 * run directory with more logs than this (a long run whose workers were
 * killed every few hundred ms) has its restarted workers' epochs copied
 * into memory instead of each kept mapped: memory grows with those
 * histories (64 bytes per event, what every restart cost before), and the
 * check still works (100,000 logs: "mmap: Cannot allocate memory" when
 * every epoch stayed mapped). The environment's LS_CHECK_MAX_MAPPED_LOGS
 * overrides it (tests reach the copy path with a handful of logs). */
#define HIST_MAX_MAPPED_LOGS 16384

struct scan_info {
    int defer;          /* in: a closed log may be left for the pass to check */
    int deferred;       /* out: it was (n from the header; the rest unknown) */
    int ordered;        /* record times never go down */
    int max_res;        /* largest resource named (crash records aside), -1 none */
    int *fds_left;      /* in/out: how many more deferred logs may keep their file
                         * open for the pass to pread (hist_fd_budget); NULL none */
};

int hist_fd_budget(const struct rlimit *lim)
{
    const char *mode = getenv("LS_CHECK_READ");
    if (mode && strcmp(mode, "map") == 0)
        return 0;
    struct rlimit rl;
    if (lim)
        rl = *lim;
    else if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY)
        return 4096;
    return rl.rlim_cur / 2 > 4096 ? 4096 : (int)(rl.rlim_cur / 2);
}

/* Pages of a read-only log mapping are dropped behind the reader in steps
 * of this many bytes: the resident part of a log stays this small whatever
 * its length (10^8 events are 6.4 GB of logs; mapping them whole made the
 * checker's RSS grow by 64 bytes per event). The pages stay in the page
 * cache, so touching them again (a story, the timeline) costs a minor fault. */
#define DROP_STEP (256 * 1024)

/* Contract: map the log at path when its writer closed it cleanly, its size
 * matches its count and its last record is valid: its records are then left
 * for the checkers' pass to check (history.h "unverified"), so loading
 * reads none of them; keep_fd: f keeps the file open too (evlog_file
 * has_fd), for the pass to pread. Returns 1 with f set, 0 (f untouched)
 * otherwise. */
static int map_closed(const char *path, struct evlog_file *f, int keep_fd)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    struct evlog_header hdr;
    struct ev_rec last;
    size_t n = 0, size = 0;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             pread(fd, &hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr);
    if (ok) {
        size = (size_t)st.st_size;
        n = (size_t)hdr.count;
        ok = memcmp(hdr.magic, EVLOG_MAGIC, sizeof(EVLOG_MAGIC)) == 0 &&
             hdr.version == EVLOG_VERSION && hdr.header_size == EVLOG_HEADER_SIZE &&
             hdr.rec_size == EVLOG_REC_SIZE && (hdr.flags & EVLOG_F_CLOSED) && n > 0 &&
             hdr.count == (uint64_t)n && size == EVLOG_HEADER_SIZE + n * EVLOG_REC_SIZE &&
             pread(fd, &last, sizeof(last), (off_t)(size - EVLOG_REC_SIZE)) ==
                 (ssize_t)sizeof(last) &&
             last.seq == (uint32_t)(n - 1) && last.type >= 1 && last.type < EV__MAX &&
             last.crc == ev_rec_crc(&last);
    }
    void *map = ok ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED || !keep_fd)
        close(fd);
    if (map == MAP_FAILED)
        return 0;
    memset(f, 0, sizeof(*f));
    if (keep_fd) {
        f->has_fd = 1;
        f->fd = fd;
    }
    f->hdr = hdr;
    f->map = map;
    f->map_len = size;
    f->recs = (const struct ev_rec *)(const void *)((const char *)map + EVLOG_HEADER_SIZE);
    f->n = n;
    f->closed = 1;
    f->has_last = 1;
    f->last = last;
    return 1;
}


/* Contract: evlog_read (model/evlog.h), its verdicts and messages, except
 * that a closed log may be left for the pass to check (si->defer: see
 * map_closed); notes (si) whether the records are in time order and the
 * largest resource they name, and drops the pages it read. Caller unmaps f
 * with evlog_unmap. */
static int scan_log(const char *path, struct evlog_file *f, struct scan_info *si,
                    struct ls_err *err)
{
    si->deferred = 0;
    si->ordered = 1;
    si->max_res = -1;
    if (si->defer && map_closed(path, f, si->fds_left && *si->fds_left > 0)) {
        si->deferred = 1;
        if (f->has_fd)
            --*si->fds_left;
        return 0;
    }
    int rc = evlog_read(path, f, err);
    if (rc || !f->map)
        return rc;
    int64_t prev = INT64_MIN;
    size_t step = DROP_STEP / EVLOG_REC_SIZE;
    for (size_t i = 0; i < f->n; i++) {
        const struct ev_rec *r = &f->recs[i];
        si->ordered &= r->t >= prev;
        prev = r->t;
        if (r->type != EV_CRASH && (int)r->res > si->max_res)
            si->max_res = r->res;
        if ((i + 1) % step == 0)
            histmap_drop_range(f->map, 0, EVLOG_HEADER_SIZE + (i + 1) * EVLOG_REC_SIZE);
    }
    histmap_drop_range(f->map, 0, f->map_len);
    return 0;
}

struct sort_ev {
    const struct ev_rec *r;
    size_t idx;
};

static int cmp_sort_ev(const void *a, const void *b)
{
    const struct sort_ev *x = a, *y = b;
    if (x->r->t != y->r->t)
        return x->r->t < y->r->t ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Contract: unmap w's segments (a restarted worker's epochs) and free them. */
static void free_segs(struct hist_worker *w)
{
    for (int k = 0; k < w->nseg; k++) {
        evlog_unmap(&w->seg[k].file);
        free(w->seg[k].own);
    }
    free(w->seg);
    w->seg = NULL;
    w->nseg = 0;
}

/* Contract: make w's stream time ordered (stable), copying it into
 * w->owned (one array, the segments let go) when a reorder is needed.
 * Every record must be verified. Returns 1 when it had to reorder. */
static int order_worker(struct hist_worker *w)
{
    size_t i = 1;
    while (i < w->n && hist_rec(w, i - 1)->t <= hist_rec(w, i)->t)
        i++;
    if (i >= w->n)
        return 0;
    struct sort_ev *tmp = xmalloc(w->n * sizeof(*tmp));
    for (size_t k = 0; k < w->n; k++) {
        tmp[k].r = hist_rec(w, k);
        tmp[k].idx = k;
    }
    qsort(tmp, w->n, sizeof(*tmp), cmp_sort_ev);
    struct ev_rec *out = xmalloc(w->n * sizeof(*out));
    for (size_t k = 0; k < w->n; k++)
        out[k] = *tmp[k].r;
    free(tmp);
    free(w->owned);
    free_segs(w);
    w->owned = out;
    w->ev = out;
    return 1;
}

struct log_name {
    int id;
    uint32_t epoch;
    char *name;
};

static int cmp_log_name(const void *a, const void *b)
{
    const struct log_name *x = a, *y = b;
    if (x->id != y->id)
        return (x->id > y->id) - (x->id < y->id);
    return (x->epoch > y->epoch) - (x->epoch < y->epoch);
}

/* Contract: read the log of one epoch (events/<ln->name>) into f (caller
 * unmaps) and warn about what it lacks; last: it is the worker's latest
 * epoch. Returns 0 or a negative code with err set. */
static int read_epoch(struct history *h, const char *dir, const struct log_name *ln,
                      int last, struct evlog_file *f, struct scan_info *si, struct ls_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/events/%s", dir, ln->name);
    int rc = scan_log(path, f, si, err);
    if (rc)
        return rc;
    evidence_log(h, ln->name, ln->id, ln->epoch, f, si->deferred);
    char who[48];
    if (ln->epoch)
        snprintf(who, sizeof(who), "worker %d epoch %u", ln->id, ln->epoch);
    else
        snprintf(who, sizeof(who), "worker %d", ln->id);
    if (f->blank) {
        history_warn(h, "%s: event log has no header (the process died while creating it): no "
                        "events", who);
        return 0;
    }
    if ((int)f->hdr.worker != ln->id)
        history_warn(h, "events/%s: header says worker %u", ln->name, f->hdr.worker);
    if (f->hdr.epoch != ln->epoch)
        history_warn(h, "events/%s: header says epoch %u", ln->name, f->hdr.epoch);
    if (f->torn_bytes)
        history_warn(h, "%s: event log has a torn tail (%zu bytes after record %zu skipped)", who,
                     f->torn_bytes, f->n);
    if (!f->closed && last && !(f->n > 0 && f->recs[f->n - 1].type == EV_CRASH))
        /* earlier epochs: see load_worker */
        history_warn(h, "%s: event log incomplete (not closed, no crash record)", who);
    return 0;
}

/* Contract: load the logs names[0..n) (one worker id, epochs ascending) into
 * w: one epoch is used in place (w->file); several become w->seg, each epoch
 * mapped in place like a single log, so a restarted worker is one stream
 * whose epochs follow each other (each after the previous one's crash
 * record, made up when the epoch was cut without one); copy: each epoch
 * is copied into memory and unmapped instead (HIST_MAX_MAPPED_LOGS).
 * si->ordered: the stream is in time order as far as verified records
 * tell. Returns 0 or a negative code with err set. */
static int load_worker(struct history *h, const char *dir, const struct log_name *names, size_t n,
                       int copy, struct hist_worker *w, struct scan_info *si, struct ls_err *err)
{
    int defer = si->defer;
    int nwarn = h->nwarnings;
    struct ev_mark mark = evidence_mark(h);
    si->ordered = 1;
    si->max_res = -1;
    si->deferred = 0;
    w->id = names[0].id;
    for (size_t k = 0; k < n; k++)
        if (names[k].epoch != (uint32_t)k) {
            history_warn(h, "worker %d: event log of epoch %zu missing (found %s)", w->id, k,
                         names[k].name);
            break;
        }
    if (n == 1) {
        si->defer = defer;
        int rc = read_epoch(h, dir, &names[0], 1, &w->file, si, err);
        if (rc)
            return rc;
        w->unverified = si->deferred;
        w->ev = w->file.recs;
        w->n = w->file.n;
        w->complete = w->file.closed;
        w->torn_bytes = w->file.torn_bytes;
        return 0;
    }
    w->seg = xcalloc(2 * n, sizeof(*w->seg)); /* an epoch and a crash record each, at most */
    w->complete = 1;
    int64_t last_t = INT64_MIN; /* of the last record so far (verified, or by map_closed) */
    for (size_t k = 0; k < n; k++) {
        struct hist_seg *sg = &w->seg[w->nseg++];
        struct scan_info ei;
        ei.defer = defer;
        ei.fds_left = copy ? NULL : si->fds_left; /* a copied epoch is unmapped at once */
        int rc = read_epoch(h, dir, &names[k], k + 1 == n, &sg->file, &ei, err);
        if (rc)
            return rc;
        sg->ev = sg->file.recs;
        sg->n = sg->file.n;
        sg->base = w->n;
        sg->unverified = ei.deferred;
        w->unverified |= ei.deferred;
        if (ei.max_res > si->max_res)
            si->max_res = ei.max_res;
        /* a deferred epoch's order (and where it meets the previous one)
         * is checked by the pass: rec_ok */
        if (!ei.deferred)
            si->ordered &= ei.ordered && (!sg->n || sg->ev[0].t >= last_t);
        /* the last record by map_closed's copy when there is one (hist_last_rec) */
        const struct ev_rec *end = !sg->n ? NULL
                                   : sg->file.has_last ? &sg->file.last : &sg->ev[sg->n - 1];
        if (end)
            last_t = end->t;
        int crashed = end && end->type == EV_CRASH;
        int cut = k + 1 < n && !sg->file.closed && !crashed;
        if (k + 1 == n ? !sg->file.closed : cut)
            w->complete = 0;
        w->torn_bytes += sg->file.torn_bytes;
        w->n += sg->n;
        if (copy && sg->n) {
            sg->own = xmalloc(sg->n * sizeof(*sg->own));
            memcpy(sg->own, sg->ev, sg->n * sizeof(*sg->own));
            sg->ev = sg->own;
        }
        if (copy)
            evlog_unmap(&sg->file); /* closed and torn_bytes were read above */
        else
            histmap_drop_log(&sg->file); /* what was looked at: one epoch's pages resident at a time */
        if (cut) {
            /* The process died (the next epoch exists) but its end is not
             * logged: its holds end at its last record, never in the next
             * epoch (cut short, not extended). */
            struct hist_seg *cs = &w->seg[w->nseg++];
            cs->synth.t = w->n ? last_t : 0;
            cs->synth.type = EV_CRASH;
            cs->synth.seq = (uint32_t)sg->n;
            cs->ev = &cs->synth; /* w->seg is never moved */
            cs->n = 1;
            cs->base = w->n++;
            history_warn(h, "worker %d epoch %u: no crash record before the restart; its holds "
                         "end at its last record", w->id, names[k].epoch);
        }
    }
    if (!si->ordered && w->unverified) {
        /* Out of order: sorting needs every record verified. Rare (a
         * damaged history): load this worker again with nothing deferred,
         * without saying the same things twice. */
        while (h->nwarnings > nwarn)
            free(h->warnings[--h->nwarnings]);
        evidence_rewind(h, mark);
        for (int k = 0; k < w->nseg && si->fds_left; k++) /* closed by free_segs: given back */
            *si->fds_left += w->seg[k].file.has_fd;
        free_segs(w);
        memset(w, 0, sizeof(*w));
        si->defer = 0;
        return load_worker(h, dir, names, n, copy, w, si, err);
    }
    return 0;
}

/* Contract: load every worker log of dir/events into h; *max_res: the
 * largest resource their records name (-1 none). */
static int load_events(struct history *h, const char *dir, int *max_res, struct ls_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/events", dir);
    DIR *d = opendir(path);
    if (!d)
        return ls_err_errno(err, LS_EIO, errno, "%s: open", path);
    struct log_name *names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        int id;
        uint32_t epoch;
        if (evlog_parse_name(de->d_name, &id, &epoch) < 0) {
            history_warn(h, "events/%s: not a worker event log, ignored", de->d_name);
            continue;
        }
        if (!evidence_admit(h, dir, de->d_name, id, epoch))
            continue; /* foreign: a gap says so */
        names = xrealloc(names, (n + 1) * sizeof(*names));
        names[n].id = id;
        names[n].epoch = epoch;
        names[n].name = xstrdup(de->d_name);
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_log_name);
    int rc = 0;
    size_t max_mapped = HIST_MAX_MAPPED_LOGS;
    const char *mm = getenv("LS_CHECK_MAX_MAPPED_LOGS"); /* tests: the copy path, small */
    if (mm && mm[0])
        max_mapped = strtoul(mm, NULL, 10);
    h->w = calloc(n ? n : 1, sizeof(*h->w));
    if (!h->w)
        xalloc_die();
    int fds_left = hist_fd_budget(NULL);
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i + 1;
        while (j < n && names[j].id == names[i].id) {
            if (names[j].epoch == names[j - 1].epoch) {
                rc = ls_err_set(err, LS_ECORRUPT, "%s: two event logs for worker %d epoch %u "
                                "(%s, %s)", path, names[j].id, names[j].epoch, names[j - 1].name,
                                names[j].name);
                break;
            }
            j++;
        }
        if (rc)
            break;
        struct hist_worker *w = &h->w[h->nworkers++];
        struct scan_info si;
        si.defer = !h->memo->verify_all;
        si.fds_left = n > max_mapped ? NULL : &fds_left;
        rc = load_worker(h, dir, names + i, j - i, n > max_mapped, w, &si, err);
        if (rc)
            break;
        if (si.max_res > *max_res)
            *max_res = si.max_res;
        if (!si.ordered && order_worker(w))
            history_warn(h, "worker %d: events out of time order, sorted", w->id);
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i].name);
    free(names);
    return rc;
}

/* ---- run directory ---- */

/* Contract: history_load_rundir; verify_all: check every record now;
 * refused: history_load_rundir_refused's why, or NULL. */
static int load_rundir(const char *dir, struct history *h, int verify_all, const char *refused,
                       struct ls_err *err)
{
    memset(h, 0, sizeof(*h));
    h->source = xstrdup(dir);
    h->from_rundir = 1;
    h->memo = xcalloc(1, sizeof(*h->memo));
    h->memo->verify_all = verify_all;
    h->memo->refused = refused ? xstrdup(refused) : NULL;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof(path), "%s/events", dir);
    int have_events = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof(path), "%s/run.json", dir);
    char *buf = NULL;
    size_t len = 0;
    int rc = have_events ? hist_read_all(path, &buf, &len) : -ENOENT;
    if (rc == -ENOENT)
        return ls_err_set(err, LS_EINPUT,
                          "%s: not a lockstorm run directory (no %s), or a run that never "
                          "started its workers; give a directory `lockstorm run` wrote", dir,
                          have_events ? "run.json" : "events/");
    if (rc)
        return ls_err_set(err, hist_read_code(rc), "%s: cannot read: %s", path, hist_read_error(rc));
    char why[256];
    if (json_parse(buf, len, &h->run, why, sizeof(why)) != 0 || h->run->type != JSON_OBJ) {
        free(buf);
        return ls_err_set(err, LS_ECORRUPT, "%s: %s; this is not a run.json lockstorm wrote", path,
                          h->run ? "not a JSON object" : why);
    }
    free(buf);
    const char *fmt = json_get_str(h->run, "format", "lockstorm-run");
    if (strcmp(fmt, "lockstorm-run") != 0)
        return ls_err_set(err, LS_ECORRUPT, "%s: format '%.60s', not a lockstorm run; give a "
                          "directory `lockstorm run` wrote", path, fmt);
    const struct json *intr = json_obj_get(h->run, "interrupted");
    h->interrupted = intr && intr->type == JSON_BOOL && intr->i;
    evidence_begin(h); /* the state, run id and logs run.json records */
    /* The harness writes state "running" before the workers start and its
     * final state at the end: "running" left behind means it died (SIGKILL,
     * OOM, power) or is still at work. What was recorded is checked; the
     * run cannot pass (interrupted) and what needs the end is unknown. */
    const struct json *inc = json_obj_get(h->run, "incidents"); /* harness/incident.h */
    for (size_t i = 0; inc && inc->type == JSON_ARR && i < inc->n; i++)
        if (inc->kids[i]->type == JSON_STR)
            history_warn(h, "incident: %s", inc->kids[i]->s);
    if (strcmp(json_get_str(h->run, "state", "finished"), "running") == 0) {
        h->incomplete = 1;
        h->interrupted = 1;
        history_warn(h, "the run is incomplete: its harness did not finish it (run.json still "
                        "says running: killed, or still in progress); the verdict covers what "
                        "was recorded");
    }

    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    if (stat(path, &st) == 0) { /* what the checkers read of it: model/rundir.h */
        struct ls_err werr = {0, ""};
        if (refused)
            snprintf(werr.msg, sizeof(werr.msg), "%s", refused);
        if (refused || rundir_meta_read(path, &h->meta, &werr) != 0) {
            h->meta = NULL;
            history_warn(h, "workload.yaml: %s (checking with defaults)", werr.msg);
            history_gap(h, "workload.yaml: unreadable: checked with default parameters "
                           "(capacity, TTL) instead of the run's");
        }
    } else {
        history_warn(h, "workload.yaml missing (checking with defaults)");
        history_gap(h, "workload.yaml: missing: checked with default parameters (capacity, TTL) "
                       "instead of the run's");
    }
    if (h->meta && h->meta->w.workers.resources > 0)
        ensure_res(h, (int)(h->meta->w.workers.resources < MAX_RES
                                ? h->meta->w.workers.resources - 1 : MAX_RES - 1));

    int max_res = -1;
    rc = load_events(h, dir, &max_res, err);
    if (rc)
        return rc;
    evidence_end(h);
    int64_t max_t = 0;
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        if (w->n && hist_last_rec(w)->t > max_t)
            max_t = hist_last_rec(w)->t;
    }
    if (max_res >= h->nres) {
        if (h->meta)
            history_warn(h, "events name resource %d but the workload has %d", max_res, h->nres);
        ensure_res(h, max_res);
    }
    int64_t end_ns = json_get_int(h->run, "end_ns", 0);
    h->end = end_ns > max_t ? end_ns : max_t;
    histmap_drop_logs(h);

    load_leftovers(h);
    load_storage(h, dir);
    hist_load_faults(h, dir);
    return 0;
}

int history_load_rundir(const char *dir, struct history *h, struct ls_err *err)
{
    return load_rundir(dir, h, 0, NULL, err);
}

int history_load_rundir_refused(const char *dir, const char *why, struct history *h,
                                struct ls_err *err)
{
    return load_rundir(dir, h, 0, why ? why : "refused", err);
}

int history_reload(struct history *h)
{
    if (!h->memo || !h->from_rundir || !h->source)
        return 0;
    struct history fresh;
    struct ls_err err = {0, ""};
    int rc = load_rundir(h->source, &fresh, 1, h->memo->refused, &err);
    if (rc) { /* the directory changed under us: go on with what was read */
        history_free(&fresh);
        h->memo->reload_failed = 1;
        history_warn(h, "event logs: reading them again failed (%s); each log is checked up to "
                        "its first damaged record", err.msg);
        return rc;
    }
    /* Keep the meta and run.json objects (read from the same files):
     * callers may hold pointers to them across a check. */
    struct rundir_meta *meta = fresh.meta;
    struct json *run = fresh.run;
    fresh.meta = h->meta;
    fresh.run = h->run;
    h->meta = meta;
    h->run = run;
    history_free(h);
    *h = fresh;
    return 0;
}

void history_verify(struct history *h)
{
    for (int i = 0; i < h->nworkers; i++)
        if (h->w[i].unverified) {
            history_reload(h);
            return;
        }
}

void history_cut(struct history *h, int wi, size_t n)
{
    if (h->memo && wi >= 0 && wi < h->nworkers && n < h->w[wi].n) {
        struct hist_worker *w = &h->w[wi];
        evidence_cut(h, wi, n);
        w->n = n;
        w->complete = 0;
        if (w->pack && n > 0) /* hist_last_rec's copy */
            hist_pack_read(w->pack, n - 1, 1, &w->pack->last, NULL);
        for (int k = 0; k < w->nseg; k++) { /* those past n keep their mapping, no records */
            struct hist_seg *sg = &w->seg[k];
            size_t room = sg->base < n ? n - sg->base : 0;
            if (sg->n > room)
                sg->n = room;
        }
    }
}

void history_mark_verified(struct history *h)
{
    for (int i = 0; h->memo && i < h->nworkers; i++) {
        h->w[i].unverified = 0;
        for (int k = 0; k < h->w[i].nseg; k++)
            h->w[i].seg[k].unverified = 0;
    }
}

void history_free(struct history *h)
{
    if (!h)
        return;
    free(h->source);
    rundir_meta_free(h->meta);
    json_free(h->run);
    evidence_free(h->ev);
    for (int i = 0; i < h->nworkers; i++) {
        evlog_unmap(&h->w[i].file);
        free_segs(&h->w[i]);
        free(h->w[i].owned);
        hist_pack_free(h->w[i].pack);
    }
    free(h->w);
    for (int i = 0; i < h->nres; i++)
        free(h->res_names[i]);
    free(h->res_names);
    for (int i = 0; i < h->nfaults; i++)
        json_free(h->faults[i].record);
    free(h->faults);
    free(h->storage);
    free(h->leftover);
    for (int i = 0; i < h->nwarnings; i++)
        free(h->warnings[i]);
    free(h->warnings);
    if (h->memo) {
        series_acc_free(h->memo->series);
        free(h->memo->refused);
    }
    free(h->memo);
    memset(h, 0, sizeof(*h));
}
