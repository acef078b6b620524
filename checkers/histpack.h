/*
 * histpack.h: workers' streams of event records kept packed in one file
 * (the JSONL loader's spill, checkers/histjsonl.c): each record in a few
 * bytes instead of 64 (docs/checkers.md "JSONL histories", the format in
 * histpack.c), each stream in pieces of the file as they were written,
 * read back as whole records by the pass and the readers of history.h
 * (hist_read_recs, hist_reader), never in place. Not for checkers.
 */
#ifndef LS_HISTPACK_H
#define LS_HISTPACK_H

#include <stddef.h>
#include <stdint.h>

#include "checkers/history.h"
#include "model/evlog.h"
#include "util/xalloc.h"

/* Records packed in a block of HIST_PACK_BLOCK (history.h) are read from
 * the block's start: a read from record i decodes up to HIST_PACK_BLOCK -
 * 1 records before it. */
/* Bytes one record takes packed, at most. */
#define HIST_PACK_MAX_REC 80

/* What decoding a record needs of the records before it in its block
 * (histpack.c): all 0 at a block's start. */
struct hist_pack_prev {
    int64_t t;                  /* the record before's time */
    uint64_t fence;             /* the last fence that was not 0 */
    int64_t value;              /* the last value that was not 0 */
    uint16_t res;               /* the record before's resource */
    char token[EVLOG_TOKEN_LEN]; /* the last token that was not all 0 */
};

/* The records' headers (which fields follow, type, flags) seen so far,
 * each a code of one byte (histpack.c): shared by the streams of a spill
 * (struct hist_spill), filled as they are packed, read as they are
 * decoded. */
#define HIST_DICT_CODES 255     /* codes 0..254; a record whose header has none: 255 */
#define HIST_DICT_SLOTS 512     /* the table from header to code (a power of two) */
struct hist_dict {
    uint32_t key[HIST_DICT_CODES]; /* code -> header */
    int n;                      /* codes given */
    uint32_t skey[HIST_DICT_SLOTS]; /* header -> code: open addressing */
    unsigned char scode[HIST_DICT_SLOTS]; /* 255: an empty slot */
};

/* The file the streams are written to, shared by them: one file however
 * many workers (a file each cost the kernel an inode each, 1 s of system
 * time for 2,000 workers), closed with the last stream (refs). A small one
 * stays in memory (fd -1), in chunks made as it grows, each one huge page
 * (HIST_SPILL_CHUNK) where the kernel allows: a file's writes, reads and
 * eviction were 8% of a 10^6-event check's CPU. */
#define HIST_SPILL_CHUNK ((size_t)2 << 20)
struct hist_spill {
    int fd;                     /* no name (the loader's own); -1: in memory */
    int refs;
    struct hist_dict dict;      /* the headers of the records packed into it */
    struct xbig *mem;           /* in memory: byte i in mem[i / chunk] (owned) */
    size_t nmem, chunk;
};

/* A piece of a stream: its bytes from at on are at off in the file, up to
 * the next piece's at (the last piece's: up to the stream's end). */
struct hist_pext {
    uint64_t at, off;
};

/* Packing a stream as it comes, a batch of records at a time. */
struct hist_packer {
    struct hist_dict *dict;     /* the dictionary of the spill the stream goes to (set
                                   before the first record; NULL: every header whole) */
    uint64_t n;                 /* records packed so far */
    uint64_t bytes;             /* bytes so far */
    struct hist_pack_prev prev; /* of the record before */
    uint64_t *at;               /* the byte offset of every block's first record (owned) */
    size_t nat, capat;
    uint64_t placed;            /* bytes written to the file so far (hist_packer_placed) */
    struct hist_pext *ext;      /* where they are (owned) */
    size_t next, capext;
};

/* A packed stream: what a hist_worker holds (history.h "pack"). */
struct hist_pack {
    struct hist_spill *file;    /* shared (a reference held: hist_pack_free) */
    size_t n;                   /* records */
    uint64_t *at;               /* block k's first record at byte at[k] of the stream;
                                   at[nblocks]: its end (8 bytes a block: 6 MB of memory
                                   at 10^8 records) */
    struct hist_pext *ext;      /* the stream's pieces in the file, by at */
    size_t next;
    struct ev_rec last;         /* a copy of the last record (hist_last_rec) */
    const char *source;         /* for a message: the history's file (not owned) */
};

/* Contract: r[0..n) packed after the records so far into out (room for n
 * * HIST_PACK_MAX_REC bytes); returns the bytes written. (One record:
 * hist_pack_put_rec, histpack_put.h.) */
size_t hist_pack_put(struct hist_packer *pk, const struct ev_rec *r, size_t n, unsigned char *out);

/* Contract: the next n bytes pk packed (in the order they were) are now at
 * off in its file. */
void hist_packer_placed(struct hist_packer *pk, uint64_t n, uint64_t off);

/* Contract: the packed stream pk wrote to file (every byte placed; pk's
 * index and pieces taken: pk is empty after; a reference to file taken;
 * pk->dict NULL or file's),
 * last its last record (NULL: the caller fills p->last, with
 * hist_pack_read); never fails. */
struct hist_pack *hist_pack_take(struct hist_packer *pk, struct hist_spill *file,
                                 const struct ev_rec *last, const char *source);

/* Contract: a shared file for fd, one reference (the caller's). */
struct hist_spill *hist_spill_new(int fd);

/* Contract: a shared spill kept in memory (empty), that may hold room
 * bytes (room > 0: its chunks are HIST_SPILL_CHUNK bytes, or room's pages
 * when it is smaller), one reference (the caller's); written with
 * hist_spill_put, moved to a file with hist_spill_to_file. */
struct hist_spill *hist_spill_new_mem(size_t room);

/* Contract: b[0, n) written at byte off of f, in memory (its chunks made
 * up to there). */
void hist_spill_put(struct hist_spill *f, uint64_t off, const void *b, size_t n);

/* Contract: f, in memory with its first len bytes written, moved to the
 * file fd (len bytes written there at offset 0; its memory let go). 0, or
 * -errno (f unchanged, fd left to the caller). */
int hist_spill_to_file(struct hist_spill *f, size_t len, int fd);

/* Contract: a reference to f let go; the last closes its file (NULL:
 * nothing). */
void hist_spill_drop(struct hist_spill *f);

/* Where a read of a stream ended (hist_pack_read), so that the next one,
 * from there, goes on decoding instead of starting again at its block's
 * first record (with many workers the pass reads 16 records at a time, a
 * block is 128). Zeroed: at record 0. */
struct hist_pack_cur {
    size_t rec;                 /* the next record */
    uint64_t at;                /* its first byte in the stream */
    struct hist_pack_prev prev; /* what decoding it needs of the records before */
};

/* Contract: records [lo, lo + k) of p (lo + k <= p->n) decoded into buf;
 * with cur (one reader's, of p only; NULL: none), from where it says when
 * it is at lo, and left where this read ended. The file is the loader's
 * own, open and nameless: a read that fails or comes back short or
 * malformed ends the process with exit status 3 and one line naming the
 * history (no verdict rests on records that are not there). */
void hist_pack_read(const struct hist_pack *p, size_t lo, size_t k, struct ev_rec *buf,
                    struct hist_pack_cur *cur);

/* Contract: p freed, its reference to the file let go (NULL: nothing). */
void hist_pack_free(struct hist_pack *p);

/* Contract: pk's memory freed (when its index was never taken). */
void hist_packer_free(struct hist_packer *pk);

#endif
