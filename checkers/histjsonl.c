/*
 * histjsonl.c: a JSONL history (docs/checkers.md "JSONL histories")
 * streamed into per-worker streams of event records: read in chunks, each
 * line parsed flat (jlparse.h), each worker's records appended to its own
 * stream with its time order checked as they come. Up to a memory bound
 * the streams stay in memory; past it every stream spills, its records
 * packed (histpack.h: 4.8 bytes a record for the bench's), to one file in
 * $TMPDIR that has no name (O_TMPFILE, or unlinked the moment it is made:
 * nothing is left behind however the check ends), each stream in the
 * pieces it was written in. Then the smallest streams are read back into
 * memory (up to a bound); a stream in time order stays packed, the pass
 * and the readers decoding it as they read (memory stays flat); the rest
 * are written out whole, to a file each, and mapped like a run's event
 * log. Only a worker whose records went back in time is sorted: in memory
 * up to a bound, else by sorted runs merged on disk.
 */
#include "checkers/history.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkers/histload.h"
#include "checkers/histmap.h"
#include "checkers/histpack.h"
#include "checkers/histpack_put.h"
#include "checkers/jlparse.h"
#include "checkers/jlshape_int.h"
#include "util/xalloc.h"

#define JL_CHUNK ((size_t)4 << 20)      /* bytes read at a time (> JL_MAX_LINE) */
#define JL_MEM_BOUND ((size_t)32 << 20) /* record bytes held in memory before spilling */
#define JL_SORT_MEM ((size_t)32 << 20)  /* a spilled worker sorted in memory up to this */
#define JL_MAX_WORKER 1000000
#define JL_KEEP_MAX ((size_t)64 << 10)  /* a spilled stream read back into memory up to this */
#define JL_PACK_PIECE 512               /* records unpacked at a time */

/* One worker's stream while loading. */
struct jw {
    int id;
    struct ev_rec *buf;         /* all its records (in memory), or those not yet
                                   packed (before it spilled); owned */
    size_t n, cap;
    uint64_t total;             /* records so far */
    int64_t last_t;
    int ordered;                /* times never went down */
    int packed;                 /* spilled: its stream is packed into the shared spill
                                   file as it comes (through pbuf) */
    int fd;                     /* finishing, written out whole: its file of 64-byte records
                                   after room for a log header (no name), else -1 */
    struct hist_packer pk;      /* packed: where the packing is */
    unsigned char *pbuf;        /* packed: bytes not yet written (owned) */
    size_t pn, pcap;
};

struct jl_load {
    struct history *h;
    const char *path;
    struct ls_err *err;
    struct jl_parser p;
    int *slot_of;               /* worker id -> index in w, -1 none (owned) */
    size_t nslot;
    struct jw *w;               /* owned */
    size_t nw, capw;
    size_t mem;                 /* bytes of record buffers */
    size_t mem_bound, sort_mem;
    int spilling;
    size_t pbuf_size;           /* bytes a spilled worker's pbuf holds (set_pbuf_size) */
    struct hist_spill *spill;   /* the packed streams' file, or memory while they fit (a
                                   reference), NULL before */
    size_t file_size;           /* the history's bytes */
    uint64_t spill_end;         /* its bytes */
    int spill_kept;             /* streams may be left packed: the history may keep the
                                   file open (a descriptor of fds_left taken for it first) */
    struct rlimit nofile;       /* the open-file limit as it was, restored at the end */
    int nofile_raised;
    uint64_t keep_upto;         /* a spilled stream of at most this many records is read
                                   back into memory, while kept_bytes allows */
    size_t kept_bytes, nmapped;
    uint64_t events;
    int fds_left;               /* spill files that may stay open once mapped, for the
                                   pass to pread (hist_fd_budget of the limit as it was) */
};

static size_t env_bytes(const char *name, size_t dflt)
{
    const char *s = getenv(name); /* tests: small bounds to reach the spill and merge paths */
    if (!s || !s[0])
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return *end || v < EVLOG_REC_SIZE ? dflt : (size_t)v;
}

static int io_err(struct jl_load *L, const char *what, int e)
{
    return ls_err_set(L->err, LS_EIO, "%s: %s: %s; set TMPDIR to a directory with room (a "
                      "JSONL history past %zu MB spills its events there, packed: a fraction "
                      "of the file's size)", L->path, what, strerror(e), L->mem_bound >> 20);
}

/* Contract: a new spill file, open read-write and without a name
 * (O_TMPFILE in $TMPDIR, or where the file system has none a
 * lockstorm-history-XXXXXX file unlinked at once) into *fd. 0 or an error
 * code with L->err set. */
static int spill_open(struct jl_load *L, int *fd)
{
    const char *td = getenv("TMPDIR");
    if (!td || !td[0])
        td = "/tmp";
    *fd = open(td, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (*fd < 0 && errno != EMFILE && errno != ENFILE) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/lockstorm-history-XXXXXX", td);
        *fd = mkostemp(path, O_CLOEXEC);
        if (*fd >= 0)
            unlink(path); /* the fd keeps the data; nothing has a name to be left behind */
    }
    if (*fd >= 0)
        return 0;
    if (errno == EMFILE || errno == ENFILE)
        return ls_err_set(L->err, LS_EIO, "%s: create a spill file: %s (ulimit -n %llu); raise "
                          "the open-file limit", L->path, strerror(errno),
                          (unsigned long long)L->nofile.rlim_max);
    return io_err(L, "create a spill file", errno);
}

static int write_all(int fd, const void *buf, size_t n, off_t at)
{
    const char *p = buf;
    while (n) {
        ssize_t r = at >= 0 ? pwrite(fd, p, n, at) : write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        p += r;
        n -= (size_t)r;
        if (at >= 0)
            at += r;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n, off_t at)
{
    char *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        p += r;
        n -= (size_t)r;
        at += r;
    }
    return 0;
}

static void set_pbuf_size(struct jl_load *L);

/* Contract: the spill, kept in memory until now, moved to a file: the
 * next bytes would pass its room (spill_mem_room); the packing buffers
 * may take half the memory bound from now on. 0 or an error code with
 * L->err set. */
static int spill_to_file(struct jl_load *L)
{
    int fd;
    int rc = spill_open(L, &fd);
    if (rc)
        return rc;
    rc = hist_spill_to_file(L->spill, (size_t)L->spill_end, fd);
    if (rc) {
        close(fd);
        return io_err(L, "write spill file", -rc);
    }
    set_pbuf_size(L);
    return 0;
}

/* Contract: the bytes a spill may keep in memory: three eighths of the
 * memory bound (12 MB by default), the packing buffers taking an eighth
 * meanwhile (set_pbuf_size) where they took half: with 20,000 workers a
 * 200 MB address space holds the check as before. */
static size_t spill_mem_room(const struct jl_load *L)
{
    return L->mem_bound / 8 * 3;
}

/* Contract: w's packed bytes written to the end of the spill (its file,
 * or its memory while they fit: spill_mem_room), a piece of its stream. 0
 * or an error code with L->err set. */
static int write_packed(struct jl_load *L, struct jw *w)
{
    if (w->pn) {
        struct hist_spill *f = L->spill;
        int rc = f->fd < 0 && L->spill_end + w->pn > spill_mem_room(L) ? spill_to_file(L) : 0;
        if (rc)
            return rc;
        if (f->fd < 0)
            hist_spill_put(f, L->spill_end, w->pbuf, w->pn);
        else if ((rc = write_all(f->fd, w->pbuf, w->pn, (off_t)L->spill_end)) != 0)
            return io_err(L, "write spill file", -rc);
        hist_packer_placed(&w->pk, w->pn, L->spill_end);
        L->spill_end += w->pn;
        w->pn = 0;
    }
    return 0;
}

/* Contract: r packed after w's bytes; when they leave no room for it,
 * they are written out first (a piece of its stream) and the buffer (made
 * when there is none) sized to L->pbuf_size. 0 or an error code. */
static inline __attribute__((always_inline)) int put_packed(struct jl_load *L, struct jw *w,
                                                           const struct ev_rec *r)
{
    if (w->pcap - w->pn < HIST_PACK_MAX_REC) {
        int rc = write_packed(L, w);
        if (rc)
            return rc;
        size_t want = L->pbuf_size;
        if (w->pcap != want) {
            L->mem = L->mem - w->pcap + want;
            w->pbuf = xrealloc(w->pbuf, want);
            w->pcap = want;
        }
    }
    w->pn += hist_pack_put_rec(&w->pk, r, w->pbuf + w->pn);
    return 0;
}

/* Contract: w's buffered records packed and written to the spill file
 * (from then on it packs them as they come: add). Returns 0 or an error
 * code with L->err set. */
static int flush(struct jl_load *L, struct jw *w)
{
    if (w->n == 0 && !w->packed)
        return 0;
    w->packed = 1;
    w->pk.dict = &L->spill->dict;
    int rc = 0;
    for (size_t j = 0; j < w->n && !rc; j++)
        rc = put_packed(L, w, &w->buf[j]);
    if (rc || (rc = write_packed(L, w)) != 0)
        return rc;
    L->mem -= w->cap * sizeof(*w->buf);
    free(w->buf);
    w->buf = NULL;
    w->cap = w->n = 0;
    return 0;
}

/* Contract: L->pbuf_size for the workers so far: their buffers together
 * half the memory bound (an eighth while the spill is in memory), each
 * 32 KB at most (the buffers stay in cache)
 * and room for 2 records at least. Not more than that: with 60,000
 * workers buffers of 1 KB passed the bound, and flushing them all every
 * time left pieces of 2 records in the spill file (16 bytes of memory a
 * piece, 8 a record). */
static void set_pbuf_size(struct jl_load *L)
{
    /* a spill in memory takes three quarters of their half of the bound
     * (spill_mem_room: copying a piece into memory costs the same whatever
     * its size; a file's writes are better large) */
    int in_memory = L->spill && L->spill->fd < 0;
    size_t per = L->mem_bound / (in_memory ? 8 : 2) / (L->nw ? L->nw : 1);
    L->pbuf_size = per < 2 * HIST_PACK_MAX_REC ? 2 * HIST_PACK_MAX_REC
                   : per > 32768                ? 32768
                                                : per;
}

/* Contract: w's buffered records written out (flush) and its buffers let
 * go; made again, small, at its next record. 0 or an error code. */
static int flush_out(struct jl_load *L, struct jw *w)
{
    int rc = flush(L, w);
    if (rc)
        return rc;
    L->mem -= w->cap * sizeof(*w->buf) + w->pcap;
    free(w->buf);
    free(w->pbuf);
    w->buf = NULL;
    w->pbuf = NULL;
    w->cap = w->pcap = 0;
    return 0;
}

/* Contract: every buffer written out and let go: so many workers that
 * even their smallest buffers pass the memory bound (each is made again,
 * small, at its worker's next record). 0 or an error code. */
static int flush_all(struct jl_load *L)
{
    for (size_t i = 0; i < L->nw; i++) {
        int rc = flush_out(L, &L->w[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Contract: from now on every stream goes to the spill. The soft
 * open-file limit is raised to the hard one until the load ends: the
 * streams written out whole at the end each keep a file open for the pass
 * while they may (fds_left). */
static int start_spill(struct jl_load *L)
{
    if (getrlimit(RLIMIT_NOFILE, &L->nofile) == 0 && L->nofile.rlim_cur < L->nofile.rlim_max) {
        struct rlimit up = {L->nofile.rlim_max, L->nofile.rlim_max};
        L->nofile_raised = setrlimit(RLIMIT_NOFILE, &up) == 0;
    }
    /* in memory when the file is at most 8 times its room (lines of a
     * few fields pack to a ninth or less: 84 bytes a line, 4.8 a record);
     * moved to a file as soon as its bytes would pass the room */
    if (L->file_size / 8 <= spill_mem_room(L)) {
        L->spill = hist_spill_new_mem(spill_mem_room(L));
    } else {
        int fd;
        int rc = spill_open(L, &fd);
        if (rc)
            return rc;
        L->spill = hist_spill_new(fd);
    }
    L->spilling = 1;
    set_pbuf_size(L);
    for (size_t i = 0; i < L->nw; i++) {
        int rc = flush(L, &L->w[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Contract: get_worker for a worker not seen before (its slot made). */
static struct jw *new_worker(struct jl_load *L, int id)
{
    if ((size_t)id >= L->nslot) {
        size_t n = L->nslot ? L->nslot : 64;
        while (n <= (size_t)id)
            n *= 2;
        L->slot_of = xrealloc(L->slot_of, n * sizeof(*L->slot_of));
        for (size_t i = L->nslot; i < n; i++)
            L->slot_of[i] = -1;
        L->nslot = n;
    }
    if (L->slot_of[id] < 0) {
        if (L->nw == L->capw) {
            L->capw = L->capw ? L->capw * 2 : 16;
            L->w = xrealloc(L->w, L->capw * sizeof(*L->w));
        }
        struct jw *w = &L->w[L->nw];
        memset(w, 0, sizeof(*w));
        w->id = id;
        w->ordered = 1;
        w->last_t = INT64_MIN;
        w->fd = -1;
        L->slot_of[id] = (int)L->nw++;
        if (L->spilling) { /* packed from its first record */
            set_pbuf_size(L);
            w->packed = 1;
            w->pk.dict = &L->spill->dict;
        }
    }
    return &L->w[L->slot_of[id]];
}

/* Contract: worker id's stream, made when new. */
static inline struct jw *get_worker(struct jl_load *L, int id)
{
    if ((size_t)id < L->nslot && L->slot_of[id] >= 0)
        return &L->w[L->slot_of[id]];
    return new_worker(L, id);
}

/* Contract: append r to worker id's stream. 0 or an error code. Inline in
 * the line loop: as a call, 1-2% of a JSONL check's CPU. */
static inline __attribute__((always_inline)) int add(struct jl_load *L, int id, struct ev_rec *r,
                                                     size_t lineno)
{
    struct jw *w = get_worker(L, id);
    if (w->total >= UINT32_MAX)
        return ls_err_set(L->err, LS_EINPUT, "%s:%zu: worker %d has more than %u events; split "
                          "the history", L->path, lineno, id, UINT32_MAX - 1);
    r->seq = (uint32_t)w->total++; /* file order, the tie-break when sorting */
    w->ordered &= r->t >= w->last_t;
    w->last_t = r->t;
    if (r->t > L->h->end)
        L->h->end = r->t;
    L->events++;
    if (w->packed) { /* spilling: packed as it comes */
        int rc = put_packed(L, w, r);
        return rc ? rc : L->mem > L->mem_bound ? flush_all(L) : 0;
    }
    if (w->n == w->cap) { /* not spilling yet: in memory */
        size_t cap = w->cap ? w->cap * 2 : 16;
        L->mem += (cap - w->cap) * sizeof(*w->buf);
        w->buf = xrealloc(w->buf, cap * sizeof(*w->buf));
        w->cap = cap;
    }
    w->buf[w->n++] = *r;
    return L->mem > L->mem_bound ? start_spill(L) : 0;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct ev_rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A run of sorted records being merged: a window of it in buf. */
struct mrun {
    off_t at, end;              /* file offsets: next unread, end of the run */
    struct ev_rec *buf;
    size_t pos, n;
};

static int mrun_fill(int fd, struct mrun *m, size_t cap)
{
    size_t left = (size_t)(m->end - m->at) / sizeof(struct ev_rec);
    m->n = left < cap ? left : cap;
    m->pos = 0;
    if (m->n == 0)
        return 0;
    int rc = read_all(fd, m->buf, m->n * sizeof(struct ev_rec), m->at);
    m->at += (off_t)(m->n * sizeof(struct ev_rec));
    return rc;
}

static int heap_less(const struct mrun *r, int a, int b)
{
    return cmp_rec(&r[a].buf[r[a].pos], &r[b].buf[r[b].pos]) < 0;
}

static void heap_down(int *heap, int n, int i, const struct mrun *r)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && heap_less(r, heap[l], heap[m]))
            m = l;
        if (l + 1 < n && heap_less(r, heap[l + 1], heap[m]))
            m = l + 1;
        if (m == i)
            return;
        int t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

/* Contract: sort the n records of w's spill file (after its header) by
 * (t, seq) and number them again, in memory when they fit L->sort_mem, else
 * as sorted runs of that size merged into a new spill file that replaces
 * it (w->fd). Memory stays within about L->sort_mem. 0 or an error code. */
static int sort_file(struct jl_load *L, struct jw *w, size_t n)
{
    size_t bytes = n * sizeof(struct ev_rec);
    int fd = w->fd;
    int rc = 0;
    if (bytes <= L->sort_mem) {
        struct ev_rec *a = xmalloc(bytes);
        rc = read_all(fd, a, bytes, EVLOG_HEADER_SIZE);
        if (!rc) {
            qsort(a, n, sizeof(*a), cmp_rec);
            for (size_t i = 0; i < n; i++)
                a[i].seq = (uint32_t)i;
            rc = write_all(fd, a, bytes, EVLOG_HEADER_SIZE);
        }
        free(a);
        return rc ? io_err(L, "sort spill file", -rc) : 0;
    }
    size_t C = L->sort_mem / sizeof(struct ev_rec);
    int k = (int)((n + C - 1) / C);
    struct ev_rec *a = xmalloc(C * sizeof(*a));
    for (int j = 0; j < k && !rc; j++) { /* sorted runs, in place */
        size_t m = n - (size_t)j * C < C ? n - (size_t)j * C : C;
        off_t at = EVLOG_HEADER_SIZE + (off_t)((size_t)j * C * sizeof(*a));
        rc = read_all(fd, a, m * sizeof(*a), at);
        if (!rc) {
            qsort(a, m, sizeof(*a), cmp_rec);
            rc = write_all(fd, a, m * sizeof(*a), at);
        }
    }
    free(a);
    if (rc)
        return io_err(L, "sort spill file", -rc);
    int ofd;
    int orc = spill_open(L, &ofd);
    if (orc)
        return orc;
    size_t B = C / 2 / (size_t)k; /* the runs' windows and the output: L->sort_mem */
    if (B < 16)
        B = 16;
    size_t OB = C / 2 < 16 ? 16 : C / 2;
    struct mrun *r = xcalloc((size_t)k, sizeof(*r));
    int *heap = xmalloc((size_t)k * sizeof(*heap));
    struct ev_rec *ob = xmalloc(OB * sizeof(*ob));
    int nh = 0;
    for (int j = 0; j < k && !rc; j++) {
        size_t m = n - (size_t)j * C < C ? n - (size_t)j * C : C;
        r[j].at = EVLOG_HEADER_SIZE + (off_t)((size_t)j * C * sizeof(struct ev_rec));
        r[j].end = r[j].at + (off_t)(m * sizeof(struct ev_rec));
        r[j].buf = xmalloc(B * sizeof(struct ev_rec));
        rc = mrun_fill(fd, &r[j], B);
        heap[nh++] = j;
    }
    for (int i = nh / 2 - 1; i >= 0 && !rc; i--)
        heap_down(heap, nh, i, r);
    char zero[EVLOG_HEADER_SIZE] = {0};
    if (!rc)
        rc = write_all(ofd, zero, sizeof(zero), -1);
    size_t done = 0, no = 0;
    while (nh > 0 && !rc) {
        struct mrun *m = &r[heap[0]];
        ob[no] = m->buf[m->pos++];
        ob[no].seq = (uint32_t)done++;
        if (++no == OB) {
            rc = write_all(ofd, ob, no * sizeof(*ob), -1);
            no = 0;
        }
        if (m->pos == m->n && !rc)
            rc = mrun_fill(fd, m, B);
        if (m->n == 0)
            heap[0] = heap[--nh];
        heap_down(heap, nh, 0, r);
    }
    if (!rc && no)
        rc = write_all(ofd, ob, no * sizeof(*ob), -1);
    for (int j = 0; j < k; j++)
        free(r[j].buf);
    free(r);
    free(heap);
    free(ob);
    close(rc ? ofd : fd); /* the merged file replaces the runs, or is let go */
    if (!rc)
        w->fd = ofd;
    return rc ? io_err(L, "merge spill file", -rc) : 0;
}

/* Contract: the message for a spill file that could not be mapped (e):
 * near the kernel's limit on mappings, say so, with the number of workers. */
static int map_err(struct jl_load *L, int e)
{
    long limit = 0;
    FILE *f = e == ENOMEM ? fopen("/proc/sys/vm/max_map_count", "r") : NULL;
    if (f) {
        if (fscanf(f, "%ld", &limit) != 1)
            limit = 0;
        fclose(f);
    }
    if (limit > 0 && L->nmapped + 1024 >= (size_t)limit)
        return ls_err_set(L->err, LS_EIO, "%s: map spill file: %s: %zu of its %zu workers are "
                          "mapped, one mapping each, at the kernel's limit of %ld mappings "
                          "(vm.max_map_count); raise it (sysctl -w vm.max_map_count=...) or "
                          "split the history by worker", L->path, strerror(e), L->nmapped + 1,
                          L->nw, limit);
    return io_err(L, "map spill file", e);
}

/* Contract: w's packed stream (p, freed here) as 64-byte
 * records: into memory for hw (a small stream kept; sorted when w's went
 * back in time), or, hw NULL, into a new spill file (w->fd, after room for
 * a log header) for the mapped path to sort and map. 0 or an error code. */
static int unpack(struct jl_load *L, struct jw *w, struct hist_pack *p, struct hist_worker *hw)
{
    size_t n = p->n;
    if (hw) {
        struct ev_rec *a = xmalloc((n ? n : 1) * sizeof(*a));
        hist_pack_read(p, 0, n, a, NULL);
        hist_pack_free(p);
        if (!w->ordered) {
            qsort(a, n, sizeof(*a), cmp_rec);
            for (size_t i = 0; i < n; i++)
                a[i].seq = (uint32_t)i;
        }
        L->kept_bytes += n * sizeof(*a);
        hw->owned = a;
        hw->ev = a;
        hw->n = n;
        return 0;
    }
    int rc = spill_open(L, &w->fd);
    if (rc) {
        hist_pack_free(p);
        return rc;
    }
    char zero[EVLOG_HEADER_SIZE] = {0};
    rc = write_all(w->fd, zero, sizeof(zero), -1);
    struct ev_rec *a = xmalloc(JL_PACK_PIECE * sizeof(*a));
    for (size_t i = 0; i < n && !rc; i += JL_PACK_PIECE) {
        size_t m = n - i < JL_PACK_PIECE ? n - i : JL_PACK_PIECE;
        hist_pack_read(p, i, m, a, NULL); /* whole blocks */
        rc = write_all(w->fd, a, m * sizeof(*a), -1);
    }
    free(a);
    hist_pack_free(p);
    return rc ? io_err(L, "write spill file", -rc) : 0;
}

/* Contract: worker w's stream into hw: its records in memory; or, spilled,
 * read back into memory when it is among the small ones (L->keep_upto);
 * or, in time order, left packed (in the spill file, which the history
 * then shares); else written out whole to a file of its own, sorted, and
 * mapped read-only. 0 or an error code. */
static int finish_worker(struct jl_load *L, struct jw *w, struct hist_worker *hw)
{
    hw->id = w->id;
    hw->complete = 1;
    if (!w->packed) {
        if (!w->ordered) {
            qsort(w->buf, w->n, sizeof(*w->buf), cmp_rec);
            for (size_t i = 0; i < w->n; i++)
                w->buf[i].seq = (uint32_t)i;
        }
        hw->owned = w->buf;
        hw->ev = w->buf;
        hw->n = w->n;
        w->buf = NULL;
        return 0;
    }
    /* its buffers let go now (with 100,000 workers they would hold 3
     * times the memory bound until every worker is done) */
    int rc = flush_out(L, w);
    if (rc)
        return rc;
    size_t n = (size_t)w->total;
    size_t bytes = n * EVLOG_REC_SIZE;
    int keep = w->total <= L->keep_upto && L->kept_bytes + bytes <= L->mem_bound / 2;
    /* its last record read back once (hist_last_rec's copy), not kept
     * as each one came: a 64-byte copy a record */
    struct hist_pack *p = hist_pack_take(&w->pk, L->spill, NULL, L->path);
    hist_pack_read(p, n - 1, 1, &p->last, NULL);
    if (w->ordered && !keep && L->spill_kept) { /* the pass reads it packed */
        hw->pack = p;
        hw->n = n;
        return 0;
    }
    /* kept, or not in time order (the sort reads 64-byte records), or no
     * descriptor for the pass to read with (LS_CHECK_READ=map): written out
     * whole */
    rc = unpack(L, w, p, keep ? hw : NULL);
    if (rc || keep)
        return rc;
    if (!w->ordered && (rc = sort_file(L, w, n)) != 0)
        return rc;
    struct evlog_header hdr;
    evlog_header_init(&hdr, (uint32_t)w->id, 0);
    hdr.flags = EVLOG_F_CLOSED;
    hdr.count = n;
    rc = write_all(w->fd, &hdr, sizeof(hdr), 0);
    if (rc)
        return io_err(L, "write spill file", -rc);
    size_t len = EVLOG_HEADER_SIZE + bytes;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, w->fd, 0);
    if (map == MAP_FAILED)
        return map_err(L, errno);
    L->nmapped++;
    if (L->fds_left > 0) { /* the history owns it now (evlog_unmap closes it) */
        L->fds_left--;
        hw->file.has_fd = 1;
        hw->file.fd = w->fd;
    } else {
        close(w->fd); /* the mapping keeps the data */
    }
    w->fd = -1;
    hw->file.hdr = hdr;
    hw->file.map = map;
    hw->file.map_len = len;
    hw->file.recs = (const struct ev_rec *)(const void *)((const char *)map + EVLOG_HEADER_SIZE);
    hw->file.n = n;
    hw->file.closed = 1;
    hw->ev = hw->file.recs;
    hw->n = n;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Contract: L->keep_upto set so that the spilled streams of at most that
 * many records (64 KB each at most), smallest first, fit half the memory
 * bound when read back: every one of them is one mapping
 * (vm.max_map_count) fewer; a big stream is mapped, its pages dropped
 * behind the pass. */
static void choose_kept(struct jl_load *L)
{
    uint64_t *tot = xmalloc((L->nw ? L->nw : 1) * sizeof(*tot));
    size_t k = 0;
    for (size_t i = 0; i < L->nw; i++)
        if (L->w[i].packed)
            tot[k++] = L->w[i].total;
    qsort(tot, k, sizeof(*tot), cmp_u64);
    size_t sum = 0;
    L->keep_upto = 0;
    for (size_t i = 0; i < k; i++) {
        sum += (size_t)tot[i] * EVLOG_REC_SIZE;
        if (sum > L->mem_bound / 2 || (size_t)tot[i] * EVLOG_REC_SIZE > JL_KEEP_MAX)
            break;
        L->keep_upto = tot[i];
    }
    free(tot);
}

/* Contract: 1 when line[0..len) is blank (spaces, tabs, CRs). */
static int blank(const char *line, size_t len)
{
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
        k++;
    return k == len;
}

/* Contract: one line (lineno) into its worker's stream; blank lines skipped. */
static int one_line(struct jl_load *L, const char *line, size_t len, size_t lineno)
{
    if (blank(line, len))
        return 0;
    struct ev_rec r;
    int w;
    int rc = jl_parse_line(&L->p, line, len, lineno, &r, &w);
    return rc ? rc : add(L, w, &r, lineno);
}

/* Contract: the end of a line longer than the chunk: len bytes in all,
 * the last tail of them at buf (within the chunk). Blank, it is skipped
 * like any blank line; else refused by its length, never read. */
static int long_line(struct jl_load *L, int was_blank, const char *tail, size_t tail_len,
                     size_t len, size_t lineno)
{
    if (was_blank && blank(tail, tail_len))
        return 0;
    return jl_line_too_long(&L->p, len, lineno);
}

/* Where reading the lines is, between one buffer of them and the next. */
struct jl_pos {
    size_t start;               /* the next line's first byte in the buffer */
    size_t lineno;              /* lines so far */
    size_t skipping;            /* bytes of an over-long line so far, 0 none */
    int skip_blank;             /* ... all of them blank so far */
};

/* Contract: the lines of buf[ps->start, have) through one_line (the
 * shaped ones straight from the buffer), up to the last whole one; with
 * eof, the rest too (a last line without its newline). An over-long line
 * (skipping) ends here, measured, never read. 0 or an error code. */
static int lines_in(struct jl_load *L, const char *buf, size_t have, int eof, struct jl_pos *ps)
{
    int rc = 0;
    size_t start = ps->start;
    const char *nl;
    for (;;) {
        if (!ps->skipping) { /* a line of the last one's shape: its end comes with it */
            struct ev_rec rec;
            int w;
            size_t n;
            while (!rc && (n = jl_parse_shaped(&L->p, buf + start, have - start, &rec, &w))) {
                rc = add(L, w, &rec, ++ps->lineno);
                start += n + 1;
            }
        }
        if (rc || (nl = memchr(buf + start, '\n', have - start)) == NULL)
            break;
        size_t end = (size_t)(nl - buf);
        ps->lineno++;
        rc = ps->skipping ? long_line(L, ps->skip_blank, buf + start, end - start,
                                      ps->skipping + end - start, ps->lineno)
                          : one_line(L, buf + start, end - start, ps->lineno);
        ps->skipping = 0;
        start = end + 1;
    }
    ps->start = start;
    if (rc || !eof)
        return rc;
    if (start < have) {
        ps->lineno++;
        return ps->skipping ? long_line(L, ps->skip_blank, buf + start, have - start,
                                        ps->skipping + have - start, ps->lineno)
                            : one_line(L, buf + start, have - start, ps->lineno);
    }
    if (ps->skipping) {
        ps->lineno++;
        return long_line(L, ps->skip_blank, buf, 0, ps->skipping, ps->lineno);
    }
    return 0;
}

/* Contract: the bytes buf[ps->start, have), all of one line that goes on
 * past JL_CHUNK of them, counted into ps->skipping (not kept); start moves
 * past them. */
static void skip_long(const char *buf, size_t have, struct jl_pos *ps)
{
    ps->skip_blank = (ps->skipping == 0 || ps->skip_blank) &&
                     blank(buf + ps->start, have - ps->start);
    ps->skipping += have - ps->start;
    ps->start = have;
}

/* Contract: every line of fd through one_line, read JL_CHUNK at a time. A
 * line longer than the chunk is measured, not kept (long_line). */
static int read_lines(struct jl_load *L, int fd)
{
    char *buf = xmalloc(JL_CHUNK);
    struct jl_pos ps = {0};
    size_t have = 0;
    int rc = 0, eof = 0;
    while (!rc && !eof) {
        ssize_t r = read(fd, buf + have, JL_CHUNK - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = ls_err_set(L->err, LS_EIO, "%s: read: %s", L->path, strerror(errno));
            break;
        }
        eof = r == 0;
        have += (size_t)r;
        rc = lines_in(L, buf, have, eof, &ps);
        if (rc || eof)
            break;
        memmove(buf, buf + ps.start, have - ps.start);
        have -= ps.start;
        ps.start = 0;
        if (have == JL_CHUNK) { /* no end in sight: too long to parse, count it */
            skip_long(buf, have, &ps);
            have = 0;
            ps.start = 0;
        }
    }
    free(buf);
    return rc;
}

/* A file cut short while it is read where it is mapped: its pages past
 * the new end fault (SIGBUS). The thread reading it jumps back to
 * map_lines, which ends the load with an error; any other SIGBUS is
 * handled as it was before this handler (the previous handler, or the
 * default: the process ends). Installed once, never removed (several
 * loads may map at once, each thread its own range). */
static _Thread_local sigjmp_buf *bus_jmp;
static _Thread_local const char *bus_lo, *bus_hi;
static struct sigaction bus_old;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    const char *a = si->si_addr;
    if (bus_jmp && a >= bus_lo && a < bus_hi)
        siglongjmp(*bus_jmp, 1);
    if ((bus_old.sa_flags & SA_SIGINFO) && bus_old.sa_sigaction) {
        bus_old.sa_sigaction(sig, si, uc);
    } else if (!(bus_old.sa_flags & SA_SIGINFO) && bus_old.sa_handler != SIG_DFL &&
               bus_old.sa_handler != SIG_IGN) {
        bus_old.sa_handler(sig);
    } else { /* the fault comes again on return, met as it was before */
        sigaction(SIGBUS, &bus_old, NULL);
    }
}

static void bus_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &bus_old);
}

void (*jl_mapped_hook)(int fd); /* tests: called once the file is mapped */

/* Contract: every line of fd (a regular file of size bytes) through
 * one_line, read where the file is mapped: no copy of it into a buffer
 * (the kernel's copying was 2.8% of the CPU a 10^8-event history took). The
 * mapping is read JL_CHUNK at a time, its pages let go behind (memory
 * stays flat). A file that cannot be mapped is read (read_lines); one cut
 * short while it is read is an error (LS_EIO), not a crash. */
static int map_lines(struct jl_load *L, int fd, size_t size)
{
    const char *how = getenv("LS_JSONL_READ"); /* tests: "read", the way of a file not mapped */
    char *map = size && !(how && !strcmp(how, "read"))
                    ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED)
        return read_lines(L, fd);
    madvise(map, size, MADV_SEQUENTIAL);
    pthread_once(&bus_once, bus_install);
    sigjmp_buf jb;
    if (sigsetjmp(jb, 1)) {
        bus_jmp = NULL;
        munmap(map, size);
        return ls_err_set(L->err, LS_EIO, "%s: the file got shorter while it was read (it was "
                          "%zu bytes); check a history once nothing writes to it", L->path, size);
    }
    bus_lo = map;
    bus_hi = map + size;
    bus_jmp = &jb;
    if (jl_mapped_hook)
        jl_mapped_hook(fd);
    struct jl_pos ps = {0};
    size_t base = 0, have = 0, drop = 0, page = (size_t)sysconf(_SC_PAGESIZE);
    int rc = 0;
    while (!rc && have < size) {
        have = size - have > JL_CHUNK ? have + JL_CHUNK : size;
        rc = lines_in(L, map + base, have - base, have == size, &ps);
        if (rc || have == size)
            break;
        if (have - base - ps.start >= JL_CHUNK) /* no end in sight: too long to parse */
            skip_long(map + base, have - base, &ps);
        base += ps.start;
        ps.start = 0;
        size_t upto = base / page * page; /* every page before the next line is read */
        if (upto - drop >= JL_CHUNK) {
            madvise(map + drop, upto - drop, MADV_DONTNEED);
            drop = upto;
        }
    }
    bus_jmp = NULL;
    munmap(map, size);
    return rc;
}

static void cleanup(struct jl_load *L)
{
    for (size_t i = 0; i < L->nw; i++) {
        struct jw *w = &L->w[i];
        if (w->fd >= 0)
            close(w->fd); /* the file has no name: closed, it is gone */
        free(w->buf);
        free(w->pbuf);
        hist_packer_free(&w->pk);
    }
    hist_spill_drop(L->spill); /* the packed streams keep theirs */
    free(L->w);
    free(L->slot_of);
    if (L->nofile_raised)
        setrlimit(RLIMIT_NOFILE, &L->nofile);
    jl_parser_free(&L->p);
}

int history_load_jsonl(const char *path, struct history *h, struct ls_err *err)
{
    memset(h, 0, sizeof(*h));
    h->source = xstrdup(path);
    h->memo = xcalloc(1, sizeof(*h->memo));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    int rc = fd < 0 ? -errno : 0;
    if (!rc && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
        rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
    if (rc) {
        if (fd >= 0)
            close(fd);
        return ls_err_set(err, hist_read_code(rc), "%s: cannot read: %s; give a JSONL history "
                          "file", path, hist_read_error(rc));
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    struct jl_load L;
    memset(&L, 0, sizeof(L));
    L.h = h;
    L.path = path;
    L.err = err;
    L.mem_bound = env_bytes("LS_JSONL_MEM_BOUND", JL_MEM_BOUND);
    L.file_size = (size_t)st.st_size;
    L.sort_mem = env_bytes("LS_JSONL_SORT_MEM", JL_SORT_MEM);
    jl_parser_init(&L.p, h, path, err);
    /* A file whose records will not fit spills from the start: its record
     * buffers stay small and warm instead of growing (and faulting in new
     * pages) up to the bound first. A record is 64 bytes, a line rarely less. */
    if ((size_t)st.st_size > L.mem_bound)
        rc = start_spill(&L);
    if (!rc)
        rc = map_lines(&L, fd, (size_t)st.st_size);
    close(fd);
    if (rc == 0 && L.events == 0)
        rc = ls_err_set(err, LS_EINPUT, "%s: no events (the file is empty or blank); a history "
                        "is one JSON event object per line", path);
    if (rc == 0) {
        choose_kept(&L);
        L.fds_left = hist_fd_budget(L.nofile_raised ? &L.nofile : NULL);
        if (L.spill && L.fds_left > 0) { /* one descriptor for every stream left packed */
            L.fds_left--;
            L.spill_kept = 1;
        }
        h->w = xcalloc(L.nw ? L.nw : 1, sizeof(*h->w));
        h->nworkers = (int)L.nw;
        for (size_t id = 0, k = 0; id < L.nslot && !rc; id++) /* in worker id order */
            if (L.slot_of[id] >= 0)
                rc = finish_worker(&L, &L.w[L.slot_of[id]], &h->w[k++]);
    }
    cleanup(&L);
    if (rc == 0)
        histmap_drop_logs(h);
    return rc;
}
