/*
 * evlog.c: the per-worker binary event log (see evlog.h for the format).
 *
 * The writer reserves a large MAP_SHARED window over the file and grows the
 * file underneath it in preallocated chunks, so an append is a checksum and
 * a 64-byte copy: no syscall, no lock. The reader maps a log read-only and
 * keeps the longest prefix of records whose checksum and sequence match.
 * Nothing here knows what the records mean.
 */
#include "model/evlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EVLOG_RESERVE ((size_t)1 << 30)     /* address space per writer */
#define EVLOG_CHUNK ((size_t)4 << 20)       /* file growth step */

struct evlog_writer {
    int fd;
    char *path;
    unsigned char *map;     /* EVLOG_RESERVE bytes; header at offset 0 */
    size_t file_size;       /* bytes backed by the file (multiple of EVLOG_CHUNK) */
    uint64_t n;             /* records written */
    uint64_t dropped;       /* records refused after the log stopped growing */
    int stopped;            /* growth failed or reservation full */
    struct ls_err err;      /* first error met */
};

/* ---- names ---- */

const char *ev_type_name(int type)
{
    switch (type) {
#define EV_NAME(name, val, text) case val: return text;
        EV_TYPES(EV_NAME)
#undef EV_NAME
    }
    return "?";
}

int ev_type_from_name(const char *name)
{
#define EV_FROM(ename, val, text) if (strcmp(name, text) == 0) return val;
    EV_TYPES(EV_FROM)
#undef EV_FROM
    return 0;
}

const char *ev_err_name(int e)
{
    switch (e) {
#define EVE_NAME(name, val, text) case val: return text;
        EV_ERRS(EVE_NAME)
#undef EVE_NAME
    }
    return "other";
}

int ev_err_from_name(const char *name)
{
#define EVE_FROM(ename, val, text) if (strcmp(name, text) == 0) return val;
    EV_ERRS(EVE_FROM)
#undef EVE_FROM
    return EVE_OTHER;
}

/* Contract: a 32-bit checksum of bytes 0..59 of r (everything but crc).
 * Multiply-xorshift over seven 64-bit words and the 32-bit tail, two
 * independent lanes so the multiplies overlap. Never returns 0, so a
 * zeroed record (crc field 0) can never validate. */
uint32_t ev_rec_crc(const struct ev_rec *r)
{
    const unsigned char *p = (const unsigned char *)r;
    uint64_t w[8];
    memcpy(w, p, 56);
    uint32_t tail;
    memcpy(&tail, p + 56, 4);
    w[7] = (uint64_t)tail | ((uint64_t)0x5a17 << 32);

    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full;
    for (int i = 0; i < 8; i += 2) {
        a = (a ^ w[i]) * 0xbf58476d1ce4e5b9ull;
        b = (b ^ w[i + 1]) * 0x94d049bb133111ebull;
        a ^= a >> 31;
        b ^= b >> 29;
    }
    uint64_t h = (a ^ (b >> 7) ^ (b << 13)) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    uint32_t c = (uint32_t)(h ^ (h >> 32));
    return c ? c : 0x2545f491u;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdatomic.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <sys/platform/x86.h> /* the CPU's features as glibc found them at start */
#ifdef CPU_FEATURE_ACTIVE /* glibc 2.34 on (2.33 named it otherwise) */
#define LS_GLIBC_CPU 1
#endif
#endif

/* ev_rec_crc on 8 records in the 8 lanes of AVX-512 registers: the 8x8
 * words transposed (lane k: record k), then the same rounds, lane-wise. */
__attribute__((target("avx512f,avx512dq"))) static void crc8_avx512(const struct ev_rec *r,
                                                                    uint32_t *crc)
{
    const char *p = (const char *)r;
    __m512i x[8], t[8], s[4], w[8];
    for (int k = 0; k < 8; k++)
        x[k] = _mm512_loadu_si512((const void *)(p + 64 * k));
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm512_unpacklo_epi64(x[k], x[k + 1]);     /* words 0,2,4,6 of k, k+1 */
        t[k + 1] = _mm512_unpackhi_epi64(x[k], x[k + 1]); /* words 1,3,5,7 */
    }
    for (int odd = 0; odd < 2; odd++) {
        s[0] = _mm512_shuffle_i64x2(t[0 + odd], t[2 + odd], 0x88);
        s[1] = _mm512_shuffle_i64x2(t[0 + odd], t[2 + odd], 0xDD);
        s[2] = _mm512_shuffle_i64x2(t[4 + odd], t[6 + odd], 0x88);
        s[3] = _mm512_shuffle_i64x2(t[4 + odd], t[6 + odd], 0xDD);
        w[0 + odd] = _mm512_shuffle_i64x2(s[0], s[2], 0x88);
        w[4 + odd] = _mm512_shuffle_i64x2(s[0], s[2], 0xDD);
        w[2 + odd] = _mm512_shuffle_i64x2(s[1], s[3], 0x88);
        w[6 + odd] = _mm512_shuffle_i64x2(s[1], s[3], 0xDD);
    }
    /* the last word: the 4 bytes at 56 and the constant, not the stored crc */
    w[7] = _mm512_or_si512(_mm512_and_si512(w[7], _mm512_set1_epi64(0xffffffffll)),
                           _mm512_set1_epi64((long long)((uint64_t)0x5a17 << 32)));
    __m512i a = _mm512_set1_epi64((long long)0x9e3779b97f4a7c15ull);
    __m512i b = _mm512_set1_epi64((long long)0xc2b2ae3d27d4eb4full);
    const __m512i m1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
    const __m512i m2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
    for (int i = 0; i < 8; i += 2) {
        a = _mm512_mullo_epi64(_mm512_xor_si512(a, w[i]), m1);
        b = _mm512_mullo_epi64(_mm512_xor_si512(b, w[i + 1]), m2);
        a = _mm512_xor_si512(a, _mm512_srli_epi64(a, 31));
        b = _mm512_xor_si512(b, _mm512_srli_epi64(b, 29));
    }
    __m512i h = _mm512_xor_si512(
        a, _mm512_xor_si512(_mm512_srli_epi64(b, 7), _mm512_slli_epi64(b, 13)));
    h = _mm512_mullo_epi64(h, _mm512_set1_epi64((long long)0xff51afd7ed558ccdull));
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 33));
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
    _mm256_storeu_si256((__m256i *)(void *)crc, _mm512_cvtepi64_epi32(h));
    for (int k = 0; k < 8; k++)
        crc[k] = crc[k] ? crc[k] : 0x2545f491u;
}

/* Contract: may crc8_avx512 run here (the CPU has the instructions and
 * the kernel saves their registers)? Asked of glibc, which found out at
 * start: __builtin_cpu_supports links libgcc's constructor that asks the
 * CPU again at every start of every lockstorm process, and each CPUID
 * leaves a virtual machine for the hypervisor (7 us on the guest of
 * docs/performance.md: 0.05 ms a start). */
static int have_avx512(void)
{
    static _Atomic int have = -1; /* every thread that finds it unset computes the same */
    int v = atomic_load_explicit(&have, memory_order_relaxed);
    if (v < 0) {
#ifdef LS_GLIBC_CPU
        v = CPU_FEATURE_ACTIVE(AVX512F) && CPU_FEATURE_ACTIVE(AVX512DQ);
#else
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
        atomic_store_explicit(&have, v, memory_order_relaxed);
    }
    return v;
}
#endif

void ev_rec_crcs(const struct ev_rec *r, size_t n, uint32_t *crc)
{
    size_t j = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (n >= 8 && have_avx512())
        for (; j + 8 <= n; j += 8)
            crc8_avx512(r + j, crc + j);
#endif
    for (; j < n; j++)
        crc[j] = ev_rec_crc(&r[j]);
}

static int rec_type_known(uint8_t type)
{
    return type >= 1 && type < EV__MAX;
}

/* ---- writer ---- */

/* Contract: map the pages of a fresh chunk writable in one call, so that
 * appends do not take a page fault every 64 records. Best effort: older
 * kernels without MADV_POPULATE_WRITE fault the pages in on first touch. */
static void prefault(unsigned char *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, len, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)len;
#endif
}

/* Contract: extend the file by one chunk. Returns 0, or -errno with the
 * writer left unchanged. posix_fallocate reserves the blocks now, so a full
 * disk shows up here and never as SIGBUS on a store into the mapping. */
static int grow(struct evlog_writer *w)
{
    if (w->file_size + EVLOG_CHUNK > EVLOG_RESERVE)
        return -ENOSPC;
    int rc = posix_fallocate(w->fd, (off_t)w->file_size, (off_t)EVLOG_CHUNK);
    if (rc != 0)
        return -rc;
    prefault(w->map + w->file_size, EVLOG_CHUNK);
    w->file_size += EVLOG_CHUNK;
    return 0;
}

static void writer_free(struct evlog_writer *w)
{
    if (!w)
        return;
    if (w->map && w->map != MAP_FAILED)
        munmap(w->map, EVLOG_RESERVE);
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w);
}

int evlog_open(struct evlog_writer **out, const char *path, uint32_t worker, uint32_t epoch,
               int64_t run_start_mono_ns, int64_t run_start_real_ns, struct ls_err *err)
{
    return evlog_open_run(out, path, worker, epoch, NULL, run_start_mono_ns, run_start_real_ns,
                          err);
}

void evlog_header_init(struct evlog_header *h, uint32_t worker, uint32_t epoch)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, EVLOG_MAGIC, sizeof(EVLOG_MAGIC));
    h->version = EVLOG_VERSION;
    h->header_size = EVLOG_HEADER_SIZE;
    h->rec_size = EVLOG_REC_SIZE;
    h->worker = worker;
    h->epoch = epoch;
    h->clock_mono = (uint32_t)CLOCK_MONOTONIC;
    h->clock_real = (uint32_t)CLOCK_REALTIME;
}

int evlog_open_run(struct evlog_writer **out, const char *path, uint32_t worker, uint32_t epoch,
                   const uint8_t *run_id, int64_t run_start_mono_ns, int64_t run_start_real_ns,
                   struct ls_err *err)
{
    *out = NULL;
    struct evlog_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return ls_err_set(err, LS_ENOMEM, "event log %s: out of memory", path);
    w->fd = -1;
    w->path = strdup(path);
    if (!w->path) {
        free(w);
        return ls_err_set(err, LS_ENOMEM, "event log %s: out of memory", path);
    }
    int rc = 0;
    w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        rc = ls_err_errno(err, LS_EIO, errno, "event log %s: create", path);
        goto fail;
    }
    int g = posix_fallocate(w->fd, 0, (off_t)EVLOG_CHUNK);
    if (g != 0) {
        rc = ls_err_errno(err, LS_EIO, g, "event log %s: preallocate", path);
        goto fail;
    }
    w->file_size = EVLOG_CHUNK;
    w->map = mmap(NULL, EVLOG_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                  w->fd, 0);
    if (w->map == MAP_FAILED) {
        w->map = NULL;
        rc = ls_err_errno(err, LS_EIO, errno, "event log %s: mmap", path);
        goto fail;
    }

    prefault(w->map, EVLOG_CHUNK);

    struct evlog_header hdr;
    evlog_header_init(&hdr, worker, epoch);
    hdr.run_start_mono_ns = run_start_mono_ns;
    hdr.run_start_real_ns = run_start_real_ns;
    if (run_id)
        memcpy(hdr.run_id, run_id, EVLOG_RUN_ID_LEN);
    memcpy(w->map, &hdr, sizeof(hdr));
    *out = w;
    return 0;
fail:
    if (w->fd >= 0)
        unlink(path);
    writer_free(w);
    return rc;
}

/* Contract: the slow path of evlog_append: make room for record w->n or
 * stop the log. Returns 0 when the record fits. */
static int make_room(struct evlog_writer *w)
{
    if (w->stopped)
        return LS_EIO;
    int rc = grow(w);
    if (rc == 0)
        return 0;
    w->stopped = 1;
    if (rc == -ENOSPC && w->file_size + EVLOG_CHUNK > EVLOG_RESERVE)
        ls_err_set(&w->err, LS_EIO, "event log %s: full (%zu bytes reserved)", w->path,
                   (size_t)EVLOG_RESERVE);
    else
        ls_err_errno(&w->err, LS_EIO, -rc, "event log %s: grow past %zu bytes", w->path,
                     w->file_size);
    return LS_EIO;
}

int evlog_append(struct evlog_writer *w, struct ev_rec *r)
{
    size_t off = EVLOG_HEADER_SIZE + (size_t)w->n * EVLOG_REC_SIZE;
    if (__builtin_expect(off + EVLOG_REC_SIZE > w->file_size, 0)) {
        if (make_room(w) != 0) {
            w->dropped++;
            return LS_EIO;
        }
    }
    r->seq = (uint32_t)w->n;
    uint32_t crc = ev_rec_crc(r);
    unsigned char *dst = w->map + off;
    memcpy(dst, r, EVLOG_REC_SIZE - sizeof(uint32_t));
    /* The checksum lands after the body: a reader (or a kill) sees either a
     * complete record or one whose checksum does not match. */
    __atomic_store_n((uint32_t *)(void *)(dst + EVLOG_REC_SIZE - sizeof(uint32_t)), crc,
                     __ATOMIC_RELEASE);
    r->crc = crc;
    w->n++;
    return 0;
}

void evlog_set_start(struct evlog_writer *w, int64_t run_start_mono_ns, int64_t run_start_real_ns)
{
    struct evlog_header *h = (struct evlog_header *)(void *)w->map;
    h->run_start_mono_ns = run_start_mono_ns;
    h->run_start_real_ns = run_start_real_ns;
}

uint64_t evlog_count(const struct evlog_writer *w)
{
    return w ? w->n : 0;
}

int evlog_close(struct evlog_writer *w, struct ls_err *err)
{
    if (!w)
        return 0;
    int rc = 0;
    if (w->dropped)
        rc = ls_err_set(err, LS_EIO, "%s; %llu records dropped", w->err.msg,
                        (unsigned long long)w->dropped);
    else if (w->err.code)
        rc = ls_err_set(err, w->err.code, "%s", w->err.msg);
    off_t len = (off_t)(EVLOG_HEADER_SIZE + (size_t)w->n * EVLOG_REC_SIZE);
    if (ftruncate(w->fd, len) != 0 && !rc)
        rc = ls_err_errno(err, LS_EIO, errno, "event log %s: truncate", w->path);
    struct evlog_header *hdr = (struct evlog_header *)(void *)w->map;
    hdr->count = w->n;
    __atomic_store_n(&hdr->flags, hdr->flags | EVLOG_F_CLOSED, __ATOMIC_RELEASE);
    writer_free(w);
    return rc;
}

/* ---- reader ---- */

/* Contract: check the header of a file of size bytes at map. Returns 0 or
 * LS_ECORRUPT with err naming what is wrong. */
static int check_header(const char *path, const struct evlog_header *hdr, size_t size,
                        struct ls_err *err)
{
    if (size < EVLOG_HEADER_SIZE)
        return ls_err_set(err, LS_ECORRUPT,
                          "event log %s: %zu bytes, shorter than its %d-byte header", path,
                          size, EVLOG_HEADER_SIZE);
    if (memcmp(hdr->magic, EVLOG_MAGIC, sizeof(EVLOG_MAGIC)) != 0)
        return ls_err_set(err, LS_ECORRUPT, "event log %s: bad magic (not a lockstorm event log)",
                          path);
    if (hdr->version != EVLOG_VERSION)
        return ls_err_set(err, LS_ECORRUPT, "event log %s: format version %u, this build reads %d",
                          path, hdr->version, EVLOG_VERSION);
    if (hdr->header_size != EVLOG_HEADER_SIZE || hdr->rec_size != EVLOG_REC_SIZE)
        return ls_err_set(err, LS_ECORRUPT,
                          "event log %s: header/record size %u/%u, expected %d/%d", path,
                          hdr->header_size, hdr->rec_size, EVLOG_HEADER_SIZE, EVLOG_REC_SIZE);
    return 0;
}

/* Contract: number of valid records at recs (at most max): the prefix whose
 * checksum, sequence and type are all right. */
static size_t scan_records(const struct ev_rec *recs, size_t max)
{
    size_t i = 0;
    for (; i < max; i++) {
        const struct ev_rec *r = &recs[i];
        if (r->seq != (uint32_t)i || !rec_type_known(r->type) || r->crc != ev_rec_crc(r))
            break;
    }
    return i;
}

static int all_zero(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        if (v)
            return 0;
    }
    for (; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Contract: are bytes [from, size) of the file behind fd and base all
 * zero? Reads only the file's data extents (SEEK_DATA / SEEK_HOLE): a hole
 * reads as zeros without being read, so a sparse 10 GB tail costs nothing. */
static int rest_is_zero(int fd, const unsigned char *base, size_t from, size_t size)
{
    off_t off = (off_t)from;
    while ((size_t)off < size) {
        off_t data = lseek(fd, off, SEEK_DATA);
        if (data < 0)
            return errno == ENXIO ? 1 : all_zero(base + off, size - (size_t)off);
        if ((size_t)data >= size)
            return 1;
        off_t hole = lseek(fd, data, SEEK_HOLE);
        if (hole < 0 || (size_t)hole > size)
            hole = (off_t)size;
        if (!all_zero(base + data, (size_t)(hole - data)))
            return 0;
        off = hole;
    }
    return 1;
}

int evlog_read(const char *path, struct evlog_file *f, struct ls_err *err)
{
    memset(f, 0, sizeof(*f));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return ls_err_errno(err, LS_EIO, errno, "event log %s: open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = ls_err_errno(err, LS_EIO, errno, "event log %s: stat", path);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ls_err_set(err, LS_EINPUT, "event log %s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) { /* created, not yet preallocated: the writer died at once */
        close(fd);
        f->blank = 1;
        return 0;
    }
    if (size < EVLOG_HEADER_SIZE) {
        close(fd);
        return check_header(path, NULL, size, err);
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    if (map == MAP_FAILED) {
        close(fd);
        return ls_err_errno(err, LS_EIO, saved, "event log %s: mmap", path);
    }
    const unsigned char *base = map;
    memcpy(&f->hdr, base, sizeof(f->hdr));
    if (all_zero(base, EVLOG_HEADER_SIZE)) {
        /* preallocated, header not written yet: the writer died creating it
         * (its records cannot exist: they are written after the header) */
        close(fd);
        munmap(map, size);
        memset(f, 0, sizeof(*f));
        f->blank = 1;
        return 0;
    }
    int rc = check_header(path, &f->hdr, size, err);
    if (rc) {
        close(fd);
        munmap(map, size);
        memset(f, 0, sizeof(*f));
        return rc;
    }
    f->map = map;
    f->map_len = size;
    f->recs = (const struct ev_rec *)(const void *)(base + EVLOG_HEADER_SIZE);
    size_t max = (size - EVLOG_HEADER_SIZE) / EVLOG_REC_SIZE;
    int closed_flag = (f->hdr.flags & EVLOG_F_CLOSED) != 0;
    /* A closed log ends exactly at its count (evlog_close truncates it):
     * what lies past the count is damage, known from the size alone (a
     * sparse 10 GB tail is not read); an open one has at most one torn
     * record, then the preallocated zeros (holes are not read either). */
    if (closed_flag && f->hdr.count < max)
        max = (size_t)f->hdr.count;
    f->n = scan_records(f->recs, max);
    size_t end = EVLOG_HEADER_SIZE + f->n * EVLOG_REC_SIZE;
    size_t expect = closed_flag && f->hdr.count <= (size - EVLOG_HEADER_SIZE) / EVLOG_REC_SIZE
                        ? EVLOG_HEADER_SIZE + (size_t)f->hdr.count * EVLOG_REC_SIZE
                        : size;
    if (end < size && (closed_flag ? end < expect || size > expect
                                   : !rest_is_zero(fd, base, end, size)))
        f->torn_bytes = size - end;
    f->closed = closed_flag && f->hdr.count == (uint64_t)f->n && size == expect;
    size_t slot = end + EVLOG_REC_SIZE;
    f->damaged = (closed_flag && (f->hdr.count != (uint64_t)f->n || f->torn_bytes)) ||
                 (!closed_flag && slot < size && !rest_is_zero(fd, base, slot, size));
    close(fd);
    return 0;
}

void evlog_unmap(struct evlog_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->map_len);
    if (f->has_fd)
        close(f->fd);
    memset(f, 0, sizeof(*f));
}

/* ---- offline append ---- */

int evlog_append_offline(const char *path, struct ev_rec *r, struct ls_err *err)
{
    struct evlog_file f;
    int rc = evlog_read(path, &f, err);
    if (rc)
        return rc;
    if (f.blank)
        return ls_err_set(err, LS_ECORRUPT, "event log %s: no header (its writer died creating "
                          "it): nothing to append to", path);
    if (f.damaged) {
        rc = ls_err_set(err, LS_ECORRUPT, "event log %s: damaged after record %zu: not appending "
                        "(the damage is left for the checker to report)", path, f.n);
        evlog_unmap(&f);
        return rc;
    }
    size_t n = f.n;
    int was_closed = f.closed;
    struct evlog_header hdr = f.hdr;
    evlog_unmap(&f);

    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return ls_err_errno(err, LS_EIO, errno, "event log %s: open for append", path);
    r->seq = (uint32_t)n;
    r->crc = ev_rec_crc(r);
    off_t off = (off_t)(EVLOG_HEADER_SIZE + n * EVLOG_REC_SIZE);
    ssize_t wr = pwrite(fd, r, EVLOG_REC_SIZE, off);
    if (wr != EVLOG_REC_SIZE) {
        rc = ls_err_errno(err, LS_EIO, wr < 0 ? errno : ENOSPC, "event log %s: append", path);
        close(fd);
        return rc;
    }
    /* Whatever followed the last valid record (a torn record, preallocated
     * zeros, or records after a damaged one) must not read as records after
     * the one just appended: the log now ends with it. */
    if (ftruncate(fd, off + EVLOG_REC_SIZE) != 0) {
        rc = ls_err_errno(err, LS_EIO, errno, "event log %s: truncate after append", path);
        close(fd);
        return rc;
    }
    if (was_closed) {
        /* Keep a cleanly closed log closed: its count now includes r. */
        hdr.count = (uint64_t)n + 1;
        if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
            rc = ls_err_errno(err, LS_EIO, errno, "event log %s: update header", path);
    }
    close(fd);
    return rc;
}

/* ---- run ids ---- */

int evlog_run_id_hex(const uint8_t *id, char *out)
{
    static const char hex[] = "0123456789abcdef";
    if (all_zero(id, EVLOG_RUN_ID_LEN)) {
        out[0] = '\0';
        return 0;
    }
    for (int i = 0; i < EVLOG_RUN_ID_LEN; i++) {
        out[2 * i] = hex[id[i] >> 4];
        out[2 * i + 1] = hex[id[i] & 15];
    }
    out[2 * EVLOG_RUN_ID_LEN] = '\0';
    return 1;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int evlog_run_id_parse(const char *hex, uint8_t *id)
{
    memset(id, 0, EVLOG_RUN_ID_LEN);
    if (!hex || strlen(hex) != 2 * EVLOG_RUN_ID_LEN)
        return -1;
    uint8_t tmp[EVLOG_RUN_ID_LEN];
    for (int i = 0; i < EVLOG_RUN_ID_LEN; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        tmp[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(id, tmp, EVLOG_RUN_ID_LEN);
    return 0;
}

/* ---- file names ---- */

int evlog_path(char *buf, size_t n, const char *rundir, int worker, uint32_t epoch)
{
    if (epoch == 0)
        return snprintf(buf, n, "%s/events/worker-%03d.bin", rundir, worker);
    return snprintf(buf, n, "%s/events/worker-%03d.e%u.bin", rundir, worker, epoch);
}

/* Contract: a decimal number of 1..7 digits at *s (no sign), stored in *v,
 * *s advanced past it. Returns 0 or -1. */
static int name_number(const char **s, long *v)
{
    const char *p = *s;
    long x = 0;
    int nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 8) {
        x = x * 10 + (*p - '0');
        p++;
        nd++;
    }
    if (nd == 0 || nd > 7)
        return -1;
    *v = x;
    *s = p;
    return 0;
}

int evlog_parse_name(const char *name, int *worker, uint32_t *epoch)
{
    long w, e = 0;
    const char *p = name;
    if (strncmp(p, "worker-", 7) != 0)
        return -1;
    p += 7;
    if (name_number(&p, &w) < 0 || w > 1000000)
        return -1;
    if (p[0] == '.' && p[1] == 'e') {
        p += 2;
        /* epoch 0 is always the plain name; no leading zeros */
        if (*p == '0' || name_number(&p, &e) < 0)
            return -1;
    }
    if (strcmp(p, ".bin") != 0)
        return -1;
    *worker = (int)w;
    *epoch = (uint32_t)e;
    return 0;
}
