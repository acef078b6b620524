/*
 * evlog.h: the per-worker binary event log (docs/architecture.md "Event log").
 *
 * File layout: a 128-byte header, then fixed 64-byte records. The writer maps
 * the file (MAP_SHARED) and fills records in memory: no syscall per record,
 * and a SIGKILLed worker's records are still in the page cache, so at most
 * the record being written is lost. Each record carries its sequence number
 * and a checksum over its other 60 bytes; the reader stops at the first
 * record whose checksum or sequence does not match and reports whether the
 * rest of the file is zeros (clean end) or not (torn tail, bytes skipped).
 * The file grows in preallocated chunks (posix_fallocate) so that a full
 * disk is an error at growth time, never a SIGBUS.
 *
 * Times are CLOCK_MONOTONIC ns relative to the run start recorded in the
 * header. This module knows nothing about locks or checkers.
 */
#ifndef LS_EVLOG_H
#define LS_EVLOG_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define EVLOG_MAGIC "LSEVLOG"
#define EVLOG_VERSION 1
#define EVLOG_HEADER_SIZE 128
#define EVLOG_REC_SIZE 64
#define EVLOG_TOKEN_LEN 16
#define EVLOG_RUN_ID_LEN 16 /* bytes; run.json writes them as 32 hex digits */

/* Record types; values are part of the file format (append only). */
#define EV_TYPES(X)                       \
    X(EV_ACQUIRE_INVOKE, 1, "acquire_invoke") \
    X(EV_ACQUIRE_OK, 2, "acquire_ok")         \
    X(EV_ACQUIRE_BUSY, 3, "acquire_busy")     \
    X(EV_ACQUIRE_FAIL, 4, "acquire_fail")     \
    X(EV_ACQUIRE_UNKNOWN, 5, "acquire_unknown") \
    X(EV_ENTER, 6, "enter")                   \
    X(EV_EXIT, 7, "exit")                     \
    X(EV_RENEW_INVOKE, 8, "renew_invoke")     \
    X(EV_RENEW_OK, 9, "renew_ok")             \
    X(EV_RENEW_FAIL, 10, "renew_fail")        \
    X(EV_LOST, 11, "lost")                    \
    X(EV_RELEASE_INVOKE, 12, "release_invoke") \
    X(EV_RELEASE_OK, 13, "release_ok")        \
    X(EV_RELEASE_NOT_OWNER, 14, "release_not_owner") \
    X(EV_RELEASE_FAIL, 15, "release_fail")    \
    X(EV_STORE_READ, 16, "store_read")        \
    X(EV_STORE_WRITE, 17, "store_write")      \
    X(EV_CRASH, 18, "crash")                  \
    X(EV_JOB, 19, "job") /* jobs mode: value = job id, aux = step (model/jobs.h) */

enum ev_type {
#define EV_ENUM(name, val, text) name = val,
    EV_TYPES(EV_ENUM)
#undef EV_ENUM
    EV__MAX
};

/* Record flags. */
#define EVF_FENCE 0x01     /* fence field is meaningful */
#define EVF_ACCEPTED 0x02  /* store op: accepted by the storage */
#define EVF_FENCED 0x04    /* store op on the fenced counter (else plain) */
#define EVF_NO_LEASE 0x08  /* grant/renew without expiry: valid_until is "never" */
#define EVF_FAILED 0x10    /* store op failed (error/timeout): outcome unknown */
#define EVF_AUTO 0x20      /* renew_ok the library reported having made by itself (an adapter's
                            * `renewed` event, docs/protocol.md): no renew_invoke before it */

/* Error kinds for acquire_fail/unknown, release_fail, renew_fail (field aux). */
#define EV_ERRS(X)              \
    X(EVE_NONE, 0, "")          \
    X(EVE_TIMEOUT, 1, "timeout") \
    X(EVE_CONN, 2, "connection") \
    X(EVE_REPLY, 3, "error reply") \
    X(EVE_PROTO, 4, "protocol")  \
    X(EVE_OTHER, 5, "other")     \
    X(EVE_NOT_REPLICATED, 6, "not replicated") \
    X(EVE_NO_PRIMARY, 7, "no primary")

enum ev_err {
#define EVE_ENUM(name, val, text) name = val,
    EV_ERRS(EVE_ENUM)
#undef EVE_ENUM
};

/* One record, exactly 64 bytes, little-endian host layout. */
struct ev_rec {
    int64_t t;             /* ns since run start (CLOCK_MONOTONIC) */
    uint32_t seq;          /* record number in this log, from 0 */
    uint8_t type;          /* enum ev_type */
    uint8_t flags;         /* EVF_* */
    uint16_t res;          /* resource index */
    uint64_t fence;        /* when EVF_FENCE */
    int64_t valid_until;   /* ns since run start; acquire_ok/renew_ok */
    int64_t value;         /* store ops: counter value read/written */
    char token[EVLOG_TOKEN_LEN]; /* grant token, NUL-padded (not terminated when 16 long) */
    uint32_t aux;          /* acquire_invoke: attempt; *_fail/unknown: enum ev_err */
    uint32_t crc;          /* checksum of bytes 0..59 */
};

_Static_assert(sizeof(struct ev_rec) == EVLOG_REC_SIZE, "ev_rec must be 64 bytes");

#define EVLOG_F_CLOSED 0x1  /* header flag: writer closed the log cleanly */

struct evlog_header {
    char magic[8];          /* "LSEVLOG\0" */
    uint32_t version;
    uint32_t header_size;
    uint32_t rec_size;
    uint32_t worker;
    uint32_t epoch;         /* incremented when a worker id is restarted */
    uint32_t clock_mono;    /* clock id of t (CLOCK_MONOTONIC) */
    uint32_t clock_real;    /* clock id of run_start_real_ns (CLOCK_REALTIME) */
    uint32_t flags;         /* EVLOG_F_* */
    int64_t run_start_mono_ns;
    int64_t run_start_real_ns;
    uint64_t count;         /* records written; valid when EVLOG_F_CLOSED */
    uint8_t run_id[EVLOG_RUN_ID_LEN]; /* the run's id (run.json "run_id"); all zeros: none
                                         (logs written before runs had ids) */
    uint8_t pad[EVLOG_HEADER_SIZE - 64 - EVLOG_RUN_ID_LEN];
};

_Static_assert(sizeof(struct evlog_header) == EVLOG_HEADER_SIZE, "header must be 128 bytes");

const char *ev_type_name(int type);       /* "acquire_ok", or "?" */
int ev_type_from_name(const char *name);  /* 0 when unknown */
const char *ev_err_name(int err);
int ev_err_from_name(const char *name);   /* EVE_OTHER for unknown text */
uint32_t ev_rec_crc(const struct ev_rec *r);
/* Contract: crc[j] = ev_rec_crc(&r[j]) for j < n: eight records at once
 * in AVX-512 lanes where the CPU has them (docs/performance.md "Checksums
 * in lanes"), else one by one. */
void ev_rec_crcs(const struct ev_rec *r, size_t n, uint32_t *crc);

/* ---- writer (one per worker process; not thread-safe by itself) ---- */

struct evlog_writer;

/* Create path (must not exist) and map it, its header naming run_id
 * (EVLOG_RUN_ID_LEN bytes, written with the rest of the header so that no
 * log of a run ever lacks it; NULL: no run id). Caller closes with
 * evlog_close. On failure returns a negative code, *out is NULL, err says
 * why. */
/* Contract: *h zeroed and filled with what every log of this format
 * carries (magic, version, sizes, clock ids) and worker, epoch. */
void evlog_header_init(struct evlog_header *h, uint32_t worker, uint32_t epoch);

int evlog_open_run(struct evlog_writer **out, const char *path, uint32_t worker, uint32_t epoch,
                   const uint8_t *run_id, int64_t run_start_mono_ns, int64_t run_start_real_ns,
                   struct ls_err *err);
/* evlog_open_run without a run id (tests, benchmarks, histories made by hand). */
int evlog_open(struct evlog_writer **out, const char *path, uint32_t worker, uint32_t epoch,
               int64_t run_start_mono_ns, int64_t run_start_real_ns, struct ls_err *err);
/* Append r (seq, crc filled in here; t must be set by the caller).
 * Returns 0, or a negative code once the log cannot grow (disk full): later
 * appends are dropped and counted, and evlog_close reports it. */
int evlog_append(struct evlog_writer *w, struct ev_rec *r);
/* Set the run start recorded in the header (the harness fixes time 0 of
 * the run only once every worker is ready, after the log was opened). */
void evlog_set_start(struct evlog_writer *w, int64_t run_start_mono_ns, int64_t run_start_real_ns);
/* Number of records appended so far. */
uint64_t evlog_count(const struct evlog_writer *w);
/* Trim the file to its records, mark the header closed, unmap, free.
 * NULL is accepted. Returns 0 or the first error the writer met. */
int evlog_close(struct evlog_writer *w, struct ls_err *err);

/* Append one record to a log whose writer is dead (the harness inserts a
 * crash record after killing a worker). Validates the existing records and
 * writes after the last good one (dropping a torn tail); a damaged log
 * (evlog_file.damaged) is refused with LS_ECORRUPT and left as it is, so
 * that the append never cuts the damage, and the records after it, away. */
int evlog_append_offline(const char *path, struct ev_rec *r, struct ls_err *err);

/* ---- run ids ---- */

/* Contract: id (EVLOG_RUN_ID_LEN bytes) as 32 lower-case hex digits in
 * out (room for 2 * EVLOG_RUN_ID_LEN + 1). Returns 1, or 0 with out ""
 * when id is all zeros (no run id). */
int evlog_run_id_hex(const uint8_t *id, char *out);
/* Contract: 32 hex digits at hex into id (EVLOG_RUN_ID_LEN bytes). Returns
 * 0, or -1 (id zeroed) when hex is anything else. */
int evlog_run_id_parse(const char *hex, uint8_t *id);

/* ---- file names ---- */

/* Path of a worker's event log in run directory rundir: events/worker-NNN.bin
 * for epoch 0, events/worker-NNN.eE.bin (E decimal) for the process that
 * took the worker id over after a restart (epoch E >= 1). Returns what
 * snprintf returns (>= n: truncated). */
int evlog_path(char *buf, size_t n, const char *rundir, int worker, uint32_t epoch);
/* Parse a log's file name (no directory) made by evlog_path: 0 with *worker
 * and *epoch set, or -1 when name is not a worker event log. */
int evlog_parse_name(const char *name, int *worker, uint32_t *epoch);

/* ---- reader ---- */

struct evlog_file {
    struct evlog_header hdr;
    const struct ev_rec *recs;  /* valid records, in file order; borrowed from the mapping */
    size_t n;
    int closed;                 /* writer closed it cleanly and count matched */
    int blank;                  /* no header yet (0 bytes, or a zero header): its writer died
                                   while creating it; no records, hdr zeroed */
    size_t torn_bytes;          /* non-zero bytes after the last valid record */
    int damaged;                /* records were lost, not just a torn tail: the log was
                                   closed with more records than are valid (or has bytes
                                   after its closed end), or there is data past the one
                                   record slot after the last valid record. A writer that
                                   dies leaves at most the record it was writing torn
                                   (the rest is zeros), so this is damage, never a kill */
    void *map;                  /* private */
    size_t map_len;
    int has_fd;                 /* fd is an open descriptor of the mapped file (owned:
                                   evlog_unmap closes it), kept so that a reader may pread
                                   the records instead of reading the mapping */
    int fd;
    int has_last;               /* last: a copy of recs[n - 1] read with pread (the
                                   checkers' loader: looked at, it faults none of the
                                   mapping in); 0 from evlog_read */
    struct ev_rec last;
};

/* Map path read-only and validate it. Returns 0 (the file is usable; see
 * closed/torn_bytes for completeness, and blank for a log whose writer died
 * before it wrote the header) or a negative code with err set when the
 * header itself is unreadable (LS_ECORRUPT) or path is not a regular file
 * (LS_EINPUT; a FIFO is never waited on). Caller frees with evlog_unmap. */
int evlog_read(const char *path, struct evlog_file *f, struct ls_err *err);
void evlog_unmap(struct evlog_file *f);

#endif
