/*
 * histpack.h: a worker's stream of event records kept packed in a file of
 * its own (the JSONL loader's spill, checkers/histjsonl.c): each record in
 * a few bytes instead of 64 (docs/checkers.md "JSONL histories", the
 * format in histpack.c), read back as whole records by the pass and the
 * readers of history.h (hist_read_recs, hist_reader), never in place.
 * Not for checkers.
 */
#ifndef LS_HISTPACK_H
#define LS_HISTPACK_H

#include <stddef.h>
#include <stdint.h>

#include "checkers/history.h"
#include "model/evlog.h"

/* Records packed in a block of HIST_PACK_BLOCK (history.h) are read from
 * the block's start: a read from record i decodes up to HIST_PACK_BLOCK -
 * 1 records before it. */
/* Bytes one record takes packed, at most. */
#define HIST_PACK_MAX_REC 80

/* Packing a stream as it comes, a batch of records at a time. */
struct hist_packer {
    uint64_t n;                 /* records packed so far */
    uint64_t bytes;             /* bytes so far */
    int64_t prev_t;             /* the record before's time (0 at a block's start) */
    uint16_t prev_res;
    uint64_t *at;               /* the byte offset of every block's first record (owned) */
    size_t nat, capat;
};

/* A packed stream: what a hist_worker holds (history.h "pack"). */
struct hist_pack {
    int fd;                     /* the file (no name; closed by hist_pack_free) */
    size_t n;                   /* records */
    uint64_t *at;               /* block k's first record at byte at[k]; at[nblocks]: the end
                                   (8 bytes a block: 6 MB of memory at 10^8 records) */
    struct ev_rec last;         /* a copy of the last record (hist_last_rec) */
    const char *source;         /* for a message: the history's file (not owned) */
};

/* Contract: r[0..n) packed after the records so far into out (room for n
 * * HIST_PACK_MAX_REC bytes); returns the bytes written. */
size_t hist_pack_put(struct hist_packer *pk, const struct ev_rec *r, size_t n, unsigned char *out);

/* Contract: the packed stream of fd that pk wrote (pk's index taken: pk
 * is empty after), last its last record; NULL-free, never fails. */
struct hist_pack *hist_pack_take(struct hist_packer *pk, int fd, const struct ev_rec *last,
                                 const char *source);

/* Contract: records [lo, lo + k) of p (lo + k <= p->n) decoded into buf.
 * The file is the loader's own, open and nameless: a read that fails or
 * comes back short or malformed ends the process with exit status 3 and
 * one line naming the history (no verdict rests on records that are not
 * there). */
void hist_pack_read(const struct hist_pack *p, size_t lo, size_t k, struct ev_rec *buf);

/* Contract: p's file closed, p freed (NULL: nothing). */
void hist_pack_free(struct hist_pack *p);

/* Contract: pk's memory freed (when its index was never taken). */
void hist_packer_free(struct hist_packer *pk);

#endif
