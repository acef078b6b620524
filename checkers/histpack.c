/*
 * histpack.c: event records packed (histpack.h). A record packed is
 *
 *   code      one byte: its header (which of the fields below follow, and
 *             how: HP_*, histpack_put.h; its type and flags) as a code of
 *             the spill's dictionary (struct hist_dict: the headers seen so
 *             far, a code each, up to 255 of them); 255, the header follows whole:
 *             2 bytes of HP_* bits (low byte first), type, flags
 *   t         minus the time of the record before it (0 for a block's
 *             first record), varint; HP_TNEG: the difference is negative
 *             (its magnitude here); a stream in time order never has it
 *   res       varint, when it differs from the record before's (HP_RES; 0
 *             for a block's first record)
 *   fence     HP_FENCE: minus the last fence before it in the block that was
 *             not 0 (0 at a block's start), zigzag varint; HP_FSAME: the same
 *             as that one, no bytes (a hold's store operations repeat its
 *             grant's fence); neither: 0
 *   valid_until minus t, varint, HP_VNEG when negative (HP_VALID; 0: absent)
 *   value     as fence: HP_VALUE (a difference, zigzag varint), HP_XSAME
 *   token     when some byte of it is not 0 (HP_TOKEN): a byte k * 17 + n,
 *             n its length up to its last byte that is not 0 (1..16), k how
 *             many of its first bytes are those of the last token before it
 *             in the block (at most 14 and n), then its bytes k..n-1 (a
 *             worker's tokens share their prefix)
 *   aux       varint, when not 0 (HP_AUX)
 *   seq       varint, when it is not the record's place in the stream
 *   crc       4 bytes, when not 0 (HP_CRC)
 *
 * (varint: 7 bits a byte, low bits first, the top bit set on every byte
 * but the last; zigzag: 0, -1, 1, -2 ... as 0, 1, 2, 3 ...) so that a
 * record reads back byte for byte as it was written. The bench's history
 * comes to 4.8 bytes a record this way (its lines: 84), against 64 for
 * the record itself. Every HIST_PACK_BLOCK records a block starts
 * with nothing carried over from the one before, and its byte offset is
 * kept in memory: a read starts at the block holding its first record.
 */
#include "checkers/histpack.h"
#include "checkers/histpack_put.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

#define PACK_READ 32768 /* bytes read at a time */
/* Bytes a record may be read as, at most, whatever they hold: a code and
 * a whole header (5), 7 varints of up to 10, a token of 1 + 16, a crc of
 * 4 (a packer writes at most 79 of HIST_PACK_MAX_REC's 80: a whole header,
 * t, fence, lease and value in 10 bytes each, res 3, aux and seq 5 each,
 * the token 17, the crc 4). */
#define PACK_MAX_DECODE 96
static inline uint64_t unzig(uint64_t z)
{
    return (z >> 1) ^ ((uint64_t)0 - (z & 1));
}

/* Contract: the varint at s into *v; the byte after it. At most 10 bytes
 * are read (a longer one, which no packer wrote, is cut there). */
static inline const unsigned char *get_v(const unsigned char *s, uint64_t *v)
{
    uint64_t x = *s++;
    if (x < 0x80) {
        *v = x;
        return s;
    }
    x &= 0x7f;
    for (unsigned sh = 7; sh < 70; sh += 7) {
        uint64_t b = *s++;
        x |= (b & 0x7f) << sh;
        if (b < 0x80)
            break;
    }
    *v = x;
    return s;
}

static void dict_init(struct hist_dict *d)
{
    d->n = 0;
    memset(d->scode, 255, sizeof(d->scode));
}

size_t hist_pack_put(struct hist_packer *pk, const struct ev_rec *r, size_t n, unsigned char *out)
{
    size_t b = 0;
    for (size_t j = 0; j < n; j++)
        b += hist_pack_put_rec(pk, &r[j], out + b);
    return b;
}

/* Contract: the record packed at s, record idx of its stream, into *r
 * (pv: what the records before it in its block left, updated; d: the
 * spill's dictionary); the byte after it, or NULL when it is malformed (a
 * code not given, a header no packer writes, a token of no byte or that
 * shares more than its length). A record that is not what was written but
 * reads as one is not caught here: the block's next records, or the end
 * of the bytes read, usually give it away (hist_pack_read), but a read
 * that stops inside a block does not look further. Each field is stored into *r once, as it is decoded:
 * a record put together on the stack first and copied cost a
 * store-forwarding stall on every 16 bytes of the copy (half this
 * function's time). */
static inline const unsigned char *get_rec(const unsigned char *s, struct ev_rec *r, size_t idx,
                                           struct hist_pack_prev *pv, const struct hist_dict *d)
{
    unsigned code = s[0];
    uint32_t key;
    if (code < HIST_DICT_CODES) {
        if ((int)code >= d->n)
            return NULL;
        key = d->key[code];
        s++;
    } else { /* a whole header: one a packer writes (a code's header was one) */
        key = (uint32_t)s[1] | (uint32_t)s[2] << 8 | (uint32_t)s[3] << 16 | (uint32_t)s[4] << 24;
        s += 5;
        unsigned w = key & 0xffff;
        if ((w & ~(unsigned)HP_ALL) || (w & (HP_FENCE | HP_FSAME)) == (HP_FENCE | HP_FSAME) ||
            (w & (HP_VALUE | HP_XSAME)) == (HP_VALUE | HP_XSAME) ||
            (w & (HP_VALID | HP_VNEG)) == HP_VNEG)
            return NULL;
    }
    unsigned m = key & 0xffff;
    r->type = (uint8_t)(key >> 16);
    r->flags = (uint8_t)(key >> 24);
    uint64_t v;
    s = get_v(s, &v);
    int64_t t = (int64_t)((uint64_t)pv->t + ((m & HP_TNEG) ? 0 - v : v));
    pv->t = t;
    r->t = t;
    if (m & HP_RES) {
        s = get_v(s, &v);
        pv->res = (uint16_t)v;
    }
    r->res = pv->res;
    if (m & HP_FENCE) {
        s = get_v(s, &v);
        pv->fence += unzig(v);
    }
    r->fence = (m & (HP_FENCE | HP_FSAME)) ? pv->fence : 0;
    v = 0;
    if (m & HP_VALID) {
        s = get_v(s, &v);
        v = (uint64_t)t + ((m & HP_VNEG) ? 0 - v : v);
    }
    r->valid_until = (int64_t)v;
    if (m & HP_VALUE) {
        s = get_v(s, &v);
        pv->value = (int64_t)((uint64_t)pv->value + unzig(v));
    }
    r->value = (m & (HP_VALUE | HP_XSAME)) ? pv->value : 0;
    memset(r->token, 0, sizeof(r->token));
    if (m & HP_TOKEN) {
        unsigned tl = *s % 17, k = *s / 17;
        s++;
        if (k > tl || k > 14 || tl == 0)
            return NULL;
        char tb[2 * EVLOG_TOKEN_LEN]; /* 16 bytes copied whatever tl - k is */
        memcpy(tb, pv->token, EVLOG_TOKEN_LEN);
        memcpy(tb + k, s, EVLOG_TOKEN_LEN);
        memset(tb + tl, 0, EVLOG_TOKEN_LEN);
        s += tl - k;
        memcpy(r->token, tb, EVLOG_TOKEN_LEN);
        memcpy(pv->token, tb, EVLOG_TOKEN_LEN);
    }
    v = 0;
    if (m & HP_AUX)
        s = get_v(s, &v);
    r->aux = (uint32_t)v;
    v = idx;
    if (m & HP_SEQ)
        s = get_v(s, &v);
    r->seq = (uint32_t)v;
    uint32_t crc = 0;
    if (m & HP_CRC) {
        memcpy(&crc, s, 4);
        s += 4;
    }
    r->crc = crc;
    return s;
}

void hist_packer_placed(struct hist_packer *pk, uint64_t n, uint64_t off)
{
    if (n == 0)
        return;
    struct hist_pext *x = pk->next ? &pk->ext[pk->next - 1] : NULL;
    if (!x || x->off + (pk->placed - x->at) != off) { /* not right after the last piece */
        if (pk->next == pk->capext) {
            pk->capext = pk->capext ? pk->capext * 2 : 4;
            pk->ext = xrealloc(pk->ext, pk->capext * sizeof(*pk->ext));
        }
        pk->ext[pk->next++] = (struct hist_pext){pk->placed, off};
    }
    pk->placed += n;
}

struct hist_spill *hist_spill_new(int fd)
{
    struct hist_spill *f = xcalloc(1, sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    dict_init(&f->dict);
    return f;
}

struct hist_spill *hist_spill_new_mem(size_t room)
{
    struct hist_spill *f = xcalloc(1, sizeof(*f));
    f->fd = -1;
    f->refs = 1;
    dict_init(&f->dict);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    f->chunk = room < HIST_SPILL_CHUNK ? (room + pg - 1) / pg * pg : HIST_SPILL_CHUNK;
    return f;
}

void hist_spill_put(struct hist_spill *f, uint64_t off, const void *b, size_t n)
{
    size_t need = (size_t)((off + n + f->chunk - 1) / f->chunk);
    if (need > f->nmem) {
        f->mem = xrealloc(f->mem, need * sizeof(*f->mem));
        for (; f->nmem < need; f->nmem++)
            xbig_alloc(&f->mem[f->nmem], f->chunk);
    }
    const char *p = b;
    while (n) {
        size_t in = (size_t)(off % f->chunk), k = f->chunk - in;
        k = k < n ? k : n;
        memcpy((char *)f->mem[off / f->chunk].map + in, p, k);
        p += k;
        off += k;
        n -= k;
    }
}

/* Contract: f's memory let go (its chunks). */
static void spill_mem_free(struct hist_spill *f)
{
    for (size_t i = 0; i < f->nmem; i++)
        xbig_free(&f->mem[i]);
    free(f->mem);
    f->mem = NULL;
    f->nmem = 0;
}

int hist_spill_to_file(struct hist_spill *f, size_t len, int fd)
{
    for (size_t done = 0; done < len;) {
        size_t in = done % f->chunk, k = f->chunk - in;
        k = k < len - done ? k : len - done;
        ssize_t r = pwrite(fd, (const char *)f->mem[done / f->chunk].map + in, k, (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        done += (size_t)r;
    }
    spill_mem_free(f);
    f->fd = fd;
    return 0;
}

void hist_spill_drop(struct hist_spill *f)
{
    if (f && --f->refs == 0) {
        if (f->fd >= 0)
            close(f->fd);
        spill_mem_free(f);
        free(f);
    }
}

struct hist_pack *hist_pack_take(struct hist_packer *pk, struct hist_spill *file,
                                 const struct ev_rec *last, const char *source)
{
    if (pk->placed != pk->bytes || (pk->dict && pk->dict != &file->dict)) /* a caller's mistake */
        abort();
    struct hist_pack *p = xcalloc(1, sizeof(*p));
    if (pk->nat == pk->capat) {
        pk->capat = pk->capat + 1;
        pk->at = xrealloc(pk->at, pk->capat * sizeof(*pk->at));
    }
    pk->at[pk->nat++] = pk->bytes; /* the end: block nblocks */
    pk->at = xrealloc(pk->at, pk->nat * sizeof(*pk->at)); /* 8 bytes a block, no more */
    p->file = file;
    file->refs++;
    p->n = (size_t)pk->n;
    p->at = pk->at;
    p->ext = pk->ext;
    p->next = pk->next;
    if (last)
        p->last = *last;
    p->source = source;
    memset(pk, 0, sizeof(*pk));
    return p;
}

/* Contract: the process ended (status 3) for a spill file that no longer
 * reads back as it was written. Called where the records are needed, a
 * helper thread of the pass included: nothing can stand in for them, and
 * the check writes its files only at the end, so an --out directory may
 * lack them or hold a previous check's. */
static void pack_die(const struct hist_pack *p, int e)
{
    fprintf(stderr, "lockstorm: error: %s: read spill file: %s; the records of this history "
            "cannot be read back (check the disk under $TMPDIR)\n",
            p->source ? p->source : "history", e ? strerror(e) : "short or malformed");
    exit(3);
}

/* Contract: up to want bytes of p's stream from byte at (below its end)
 * read into b, no further than the end of the piece of the file that
 * holds at (*x: a piece at or before it, moved on to that piece); pread's
 * answer (copied from memory for a spill kept there). */
static ssize_t pack_pread(const struct hist_pack *p, unsigned char *b, size_t want, uint64_t at,
                          size_t *x)
{
    size_t k = *x;
    while (k + 1 < p->next && p->ext[k + 1].at <= at)
        k++;
    *x = k;
    uint64_t end = k + 1 < p->next ? p->ext[k + 1].at : p->at[(p->n + HIST_PACK_BLOCK - 1) /
                                                               HIST_PACK_BLOCK];
    if (want > end - at)
        want = (size_t)(end - at);
    uint64_t off = p->ext[k].off + (at - p->ext[k].at);
    const struct hist_spill *f = p->file;
    if (f->fd >= 0)
        return pread(f->fd, b, want, (off_t)off);
    if (off / f->chunk >= f->nmem) /* never written there */
        return 0;
    size_t in = (size_t)(off % f->chunk); /* up to its chunk's end: the next read goes on */
    if (want > f->chunk - in)
        want = f->chunk - in;
    memcpy(b, (const char *)f->mem[off / f->chunk].map + in, want);
    return (ssize_t)want;
}

/* Contract: the piece of p's stream that holds byte at. */
static size_t piece_of(const struct hist_pack *p, uint64_t at)
{
    size_t lo = 0, hi = p->next; /* the last piece with ext.at <= at is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ext[mid].at <= at)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void hist_pack_read(const struct hist_pack *p, size_t lo, size_t k, struct ev_rec *buf,
                    struct hist_pack_cur *cur)
{
    if (k == 0)
        return;
    if (lo > p->n || k > p->n - lo) /* a caller's mistake, never the disk's */
        abort();
    /* room for the most a record can be read as past the bytes read, kept
     * zero: a malformed record never reads outside the array or a byte not
     * read (and is caught after) */
    unsigned char b[PACK_READ + PACK_MAX_DECODE];
    size_t i = lo / HIST_PACK_BLOCK * HIST_PACK_BLOCK, stop = lo + k;
    uint64_t at = p->at[lo / HIST_PACK_BLOCK];
    uint64_t end = p->at[(stop + HIST_PACK_BLOCK - 1) / HIST_PACK_BLOCK];
    struct hist_pack_prev pv;
    memset(&pv, 0, sizeof(pv));
    if (cur && cur->rec == lo && lo != i && cur->at > at &&
        cur->at < p->at[lo / HIST_PACK_BLOCK + 1]) { /* where the last read ended: on from there */
        i = lo;
        at = cur->at;
        pv = cur->prev;
    }
    const struct hist_dict *d = &p->file->dict;
    size_t have = 0, pos = 0, x = piece_of(p, at);
    struct ev_rec skip;
    if (p->next == 0)
        pack_die(p, 0);
    while (i < stop) {
        if (have - pos < HIST_PACK_MAX_REC && at < end) {
            memmove(b, b + pos, have - pos);
            have -= pos;
            pos = 0;
            size_t want = PACK_READ - have;
            if (want > end - at)
                want = (size_t)(end - at);
            ssize_t r = pack_pread(p, b + have, want, at, &x);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                pack_die(p, r < 0 ? errno : 0);
            have += (size_t)r;
            at += (uint64_t)r;
            memset(b + have, 0, PACK_MAX_DECODE);
            continue;
        }
        if (pos >= have)
            pack_die(p, 0);
        if (i % HIST_PACK_BLOCK == 0)
            memset(&pv, 0, sizeof(pv));
        const unsigned char *e = get_rec(b + pos, i >= lo ? &buf[i - lo] : &skip, i, &pv, d);
        if (!e || (pos = (size_t)(e - b)) > have)
            pack_die(p, 0);
        i++;
    }
    if (cur) {
        cur->rec = stop;
        cur->at = at - (have - pos);
        cur->prev = pv;
    }
}

void hist_pack_free(struct hist_pack *p)
{
    if (!p)
        return;
    hist_spill_drop(p->file);
    free(p->at);
    free(p->ext);
    free(p);
}

void hist_packer_free(struct hist_packer *pk)
{
    free(pk->at);
    free(pk->ext);
    memset(pk, 0, sizeof(*pk));
}
