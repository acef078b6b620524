/*
 * history.h: what the checkers read. A history is loaded from a run
 * directory (events/worker-NNN.bin plus worker-NNN.eE.bin for each restart
 * of a worker, all epochs of one worker id read as one stream;
 * faults.jsonl, storage.jsonl, run.json, workload.yaml) or from a JSONL
 * event file made elsewhere; the checkers never talk to Redis, so
 * `lockstorm check` on a copied run directory gives the same verdict as the
 * run did.
 *
 * All times are ns since the run start.
 */
#ifndef LS_HISTORY_H
#define LS_HISTORY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/json.h"
#include "model/evlog.h"

struct workload;
struct rundir_meta;
struct series_acc;
struct hist_evidence;
struct hist_pack;
struct hist_pack_cur;

/* What one pass over the history leaves for a later reader: check_run's
 * pass also accumulates the charts' series, which series_build takes. */
struct hist_memo {
    struct series_acc *series;  /* owned until taken; NULL none */
    int verify_all;             /* load: check every record at once, defer nothing */
    int reload_failed;          /* history_reload could not read the logs again: a pass
                                 * cuts a log at its first bad record instead */
    char *refused;              /* the caller's loader refused workload.yaml: why (owned;
                                 * history_load_rundir_refused), kept for a reload */
};

/* One part of a restarted worker's stream: the mapped log of one epoch
 * (events/worker-NNN.eK.bin), or the crash record the loader adds after an
 * epoch that was cut without one. */
struct hist_seg {
    const struct ev_rec *ev;    /* file.recs, or &synth */
    size_t n;
    size_t base;                /* index of ev[0] in the worker's stream */
    int unverified;             /* this epoch's log is checked by the pass (see below) */
    struct evlog_file file;     /* the epoch's mapping; none for a synthetic crash, or
                                 * once copied into own */
    struct ev_rec *own;         /* the epoch's records copied (owned), when a run has
                                 * too many logs to keep each mapped: HIST_MAX_MAPPED_LOGS */
    struct ev_rec synth;        /* the synthetic crash record */
};

/* A worker's records are one stream, time-ordered, read through hist_rec
 * (index 0..n): never by ev[] directly, which is NULL for a worker split in
 * segments. */
struct hist_worker {
    int id;                     /* worker id (file name / "w" field) */
    const struct ev_rec *ev;    /* the records when they lie in one array: the log's
                                 * read-only mapping (its pages are read on demand and
                                 * dropped behind the checkers' pass), or owned (JSONL,
                                 * reordered); NULL when seg is used */
    size_t n;                   /* records in the stream */
    struct hist_seg *seg;       /* a restarted worker: its epochs in order, each kept
                                 * mapped like a single log (not copied: memory stays
                                 * flat however many epochs; copied past
                                 * HIST_MAX_MAPPED_LOGS), with the synthetic crash
                                 * records between them; NULL otherwise */
    int nseg;
    int unverified;             /* a closed log whose records are checked (checksum,
                                 * sequence, time order, resource) by the checkers'
                                 * pass as it reads them, not at load: see
                                 * history_reload (with seg: some segment is) */
    int complete;               /* last epoch's log closed cleanly by its worker, every
                                 * earlier one closed or ended by a crash record */
    size_t torn_bytes;          /* bytes skipped after the last valid record */
    struct evlog_file file;     /* binary source (mapping), if any (single epoch) */
    struct ev_rec *owned;       /* JSONL source, or a reordered stream, if any */
    struct hist_pack *pack;     /* a JSONL stream spilled packed (checkers/histpack.h;
                                 * owned): read with hist_read_recs or a hist_reader, never
                                 * in place (ev is NULL, hist_rec is not for it) */
};

/* hist_rec of a worker split in segments (a binary search over them). */
const struct ev_rec *hist_seg_rec(const struct hist_worker *w, size_t i);

/* Contract: record i (< w->n) of w's stream, wherever it lies; not for a
 * packed stream (w->pack: a hist_reader reads it). */
static inline const struct ev_rec *hist_rec(const struct hist_worker *w, size_t i)
{
    return w->seg ? hist_seg_rec(w, i) : &w->ev[i];
}

/* Contract: hist_rec(w, w->n - 1) (w->n > 0), read without touching the
 * log's mapping when the loader kept a copy of it (evlog_file has_last):
 * a look at a log the pass reads with pread faults up to 16 of its pages
 * in, and dropping them again costs a TLB flush. */
const struct ev_rec *hist_last_rec(const struct hist_worker *w);

/* Contract: the stream as runs of consecutive records: hist_nruns(w) of
 * them, run k being the *n records at *ev (those of an unverified log when
 * *unverified). A worker in one array is one run. */
int hist_nruns(const struct hist_worker *w);
void hist_run(const struct hist_worker *w, int k, const struct ev_rec **ev, size_t *n,
              int *unverified);
/* Contract: a descriptor run k of w may be read from with pread (its log's,
 * kept open by the loader: evlog_file has_fd; or a packed stream's file),
 * the file offset of the run's first record in *off; -1 when the run is
 * not a log read in place or its log keeps no descriptor (it is read
 * through the mapping then). A packed stream always reads this way: for it
 * HIST_FD_PACKED, not a descriptor (its spill may be in memory), which
 * only hist_read_recs and a hist_reader take. */
int hist_run_fd(const struct hist_worker *w, int k, off_t *off);
#define HIST_FD_PACKED INT_MAX

/* A packed stream (w->pack) is decoded from the start of a block of this
 * many records: reads that start at a multiple of it decode nothing twice. */
#define HIST_PACK_BLOCK 128

/* Contract: read records [lo, lo + k) of w's run whose record 0 is at
 * offset off of fd (hist_run_fd) into buf; the count read (short: end of
 * file or an error). A packed stream's are decoded (hist_pack_read, with
 * cur, a cursor of that reader's or NULL: never short; a failed read ends
 * the process). */
size_t hist_read_recs(const struct hist_worker *w, int fd, off_t off, size_t lo, size_t k,
                      struct ev_rec *buf, struct hist_pack_cur *cur);

/* Records of one worker's stream looked up one at a time (a search, a
 * window: the timeline, the stories): a log the loader keeps open is read
 * with pread, HIST_READER_BLOCK records at a time (those from the record
 * asked for on, or, for a scan going back, those up to it; a packed
 * stream's block that holds it), the others in place. A log the pass
 * read with pread then has none of its pages mapped in: the timeline's
 * lookups used to fault pages of every log in and drop them again, one TLB
 * flush per log, as much CPU as the whole pass at 10^5 events. */
#define HIST_READER_BLOCK HIST_PACK_BLOCK
struct hist_reader {
    const struct hist_worker *w;
    size_t lo, hi;              /* buf holds the stream's records [lo, hi) */
    int mapped;                 /* some record was read in place */
    struct ev_rec buf[HIST_READER_BLOCK];
};
void hist_reader_init(struct hist_reader *r, const struct hist_worker *w);
/* Contract: record i (< w->n) of the stream, valid until the next call. */
const struct ev_rec *hist_reader_rec(struct hist_reader *r, size_t i);
/* Contract: the first record of the reader's stream with t >= at (w->n
 * when none), the stream's times in order. The first read at the stream's
 * start, then a guess by time between the times known so far and a
 * halving, in turn, each read taking in the whole block it reads (with the
 * place asked for in its middle): 2 reads a search of the bench's logs,
 * where halving alone took 11-14. */
size_t hist_reader_first_at(struct hist_reader *r, int64_t at);
/* Contract: drop the pages the reader read in place (history_drop), if any. */
void hist_reader_done(struct hist_reader *r);

struct fault_window {
    int id;
    char kind[32];
    char target[64];            /* "holder", "worker:3", "node:0", ... */
    int worker;                 /* resolved worker or -1 */
    int node;                   /* resolved node or -1 */
    int64_t start, end;         /* end = run end when never recorded */
    int skipped;                /* nothing to act on (e.g. no holder) */
    struct json *record;        /* the start line as written (owned) */
};

struct storage_final {
    int present;                /* storage.jsonl has this resource */
    int64_t plain;
    int64_t fenced, fence_hwm;  /* -1 when the run kept no fenced counter (fencing off) */
};

struct leftover_key {           /* lock keys still on a node after the run */
    int res;
    int node;
    int64_t pttl_ms;            /* -1: no expiry */
};

struct history {
    char *source;               /* run dir or JSONL path */
    int from_rundir;
    struct rundir_meta *meta;   /* what the checkers read of workload.yaml (model/rundir.h;
                                 * owned), NULL for JSONL or when unreadable */
    struct json *run;           /* run.json (owned) or NULL */
    int interrupted;            /* the run did not end normally */
    int incomplete;             /* run.json still says "running": the harness died
                                 * (or is still at work); implies interrupted */
    int64_t end;                /* run end (ns since start) */

    int nworkers;
    struct hist_worker *w;

    int nres;
    char **res_names;           /* "r0", ... (JSONL: names as found) */

    int nfaults;
    struct fault_window *faults;

    int have_storage;
    struct storage_final *storage;  /* nres entries */

    int nleftover;
    struct leftover_key *leftover;

    struct hist_memo *memo;     /* made by the loaders (owned); NULL in a hand-made history */
    struct hist_evidence *ev;   /* what the record lacks (checkers/evidence.h); owned, NULL
                                 * when nothing was compared or found missing */

    /* Diagnostics met while loading (torn tails, unknown lines ...). One line
     * each; they make the verdict unknown where completeness matters. */
    int nwarnings;
    char **warnings;
};

int history_load_rundir(const char *dir, struct history *h, struct ls_err *err);
/* Contract: history_load_rundir when the caller's own reading of
 * workload.yaml (the harness's full loader) refused it, why saying how:
 * the run is checked with default parameters, with the warning
 * "workload.yaml: WHY (checking with defaults)" and an evidence gap, as for
 * a workload.yaml this loader cannot read. */
int history_load_rundir_refused(const char *dir, const char *why, struct history *h,
                                struct ls_err *err);
int history_load_jsonl(const char *path, struct history *h, struct ls_err *err);
void history_free(struct history *h);
void history_warn(struct history *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A log closed cleanly whose size matches its count and whose last record
 * is valid is not read at load: the checkers' pass checks each record as it
 * reads it (one read of the logs instead of two). When that finds a bad
 * record (corruption, never a crash: a crash leaves the log unclosed), a
 * record out of time order or naming an unknown resource, the history is
 * loaded again with every record checked first, exactly as if nothing had
 * been deferred, and the pass starts over. history_reload does that
 * reload (0, or the load's error code with the old history kept and
 * marked verified); history_verify makes sure no worker is unverified (a
 * reload when one is) for readers other than the pass. */
int history_reload(struct history *h);
void history_verify(struct history *h);
/* After a pass that checked every record: nothing is unverified any more. */
void history_mark_verified(struct history *h);
/* Worker wi's log ends before record n (a damaged record that could not be
 * read again: memo.reload_failed); the log counts as incomplete. Through
 * a history a loader made (memo set); a hand-made one is left alone. */
void history_cut(struct history *h, int wi, size_t n);

/* Drop the resident pages of w's records [from, to) from this process (a
 * mapped log only; the records stay readable, the page cache keeps them).
 * The checkers' pass calls it behind its cursors so that RSS stays flat
 * whatever the history's length. */
void history_drop(const struct hist_worker *w, size_t from, size_t to);

/* Start reading w's records [from, to) into the page cache in the
 * background (a mapped log only), so that the pass does not wait for the
 * disk when a log is not cached. */
void history_willneed(const struct hist_worker *w, size_t from, size_t to);

/* After the pass: the logs will be read at random places only (stories,
 * the timeline): map single pages on demand, none resident now. */
void history_after_pass(const struct history *h);

/* `lockstorm log export`: every event as one JSONL line (docs/checkers.md "JSONL histories"),
 * merged across workers in time order. */
void history_export_jsonl(struct history *h, FILE *out);

#endif
