/*
 * test_histpack.c: records packed (checkers/histpack.c) read back byte for
 * byte, from any record on, whatever their fields hold, their headers as
 * codes of the spill's dictionary or whole (past its 255 codes, or with
 * none); a spill file that no longer reads back ends the process with
 * status 3 and one line.
 */
#include "checkers/histpack.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"
#include "util/rng.h"
#include "util/xalloc.h"

static char *tmp;

/* Contract: a value of the kinds a field meets: 0, small, near the
 * bounds of its type, anything. */
static uint64_t pick(struct rng *g)
{
    switch (rng_below(g, 6)) {
    case 0: return 0;
    case 1: return rng_below(g, 130);
    case 2: return rng_below(g, 1u << 20);
    case 3: return UINT64_MAX - rng_below(g, 3);
    case 4: return (uint64_t)1 << rng_below(g, 64);
    default: return rng_next(g);
    }
}

/* Contract: a random record; t moves on from *t by a little, goes back,
 * or jumps anywhere. */
static void gen(struct rng *g, struct ev_rec *r, int64_t *t, size_t idx)
{
    memset(r, 0, sizeof(*r));
    switch (rng_below(g, 8)) {
    case 0: *t = (int64_t)pick(g); break;
    case 1: *t = (int64_t)((uint64_t)*t - rng_below(g, 1000000)); break; /* wraps: no UB */
    default: *t = (int64_t)((uint64_t)*t + rng_below(g, 100000)); break;
    }
    r->t = *t;
    r->seq = rng_below(g, 4) ? (uint32_t)idx : (uint32_t)pick(g);
    r->type = (uint8_t)(rng_below(g, 8) ? 1 + rng_below(g, 19) : pick(g));
    r->flags = (uint8_t)rng_next(g);
    r->res = (uint16_t)(rng_below(g, 3) ? rng_below(g, 4) : pick(g));
    if (rng_below(g, 2))
        r->fence = pick(g);
    if (rng_below(g, 2))
        r->valid_until = rng_below(g, 2) ? (int64_t)((uint64_t)r->t + rng_below(g, 2000000) - 1000)
                                         : (int64_t)pick(g);
    if (rng_below(g, 2))
        r->value = (int64_t)pick(g);
    if (rng_below(g, 3) == 0) { /* any length, zero bytes inside and at the end */
        size_t n = rng_below(g, EVLOG_TOKEN_LEN + 1);
        for (size_t k = 0; k < n; k++)
            r->token[k] = rng_below(g, 5) ? (char)(' ' + rng_below(g, 90)) : 0;
    }
    if (rng_below(g, 3) == 0)
        r->aux = (uint32_t)pick(g);
    if (rng_below(g, 4) == 0)
        r->crc = (uint32_t)pick(g);
}

/* How pack_shared packs: with the spill's dictionary (else every header
 * whole); into a spill kept in memory (else a file); the last record left
 * for the caller (hist_pack_take's NULL), then read back as the loader
 * does. */
enum { PK_DICT = 1, PK_MEM = 2, PK_NOLAST = 4 };

/* Contract: streams r[j][0..n[j]) (j < k) packed into one new nameless
 * file in tmp (or memory), in batches of random size taken from a stream
 * at random (so each stream is in pieces, between the others'), as how
 * says (PK_*); their packs in p[0..k) (the file closed with the last). 0,
 * or -1. */
static int pack_shared(struct rng *g, struct ev_rec **r, const size_t *n, int k,
                       struct hist_pack **p, int how)
{
    int fd = how & PK_MEM ? -1 : open(tmp, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && !(how & PK_MEM))
        return -1;
    struct hist_spill *file = how & PK_MEM ? hist_spill_new_mem(1 << 20) : hist_spill_new(fd);
    int dict = how & PK_DICT;
    struct hist_packer pk[4];
    size_t done[4] = {0};
    memset(pk, 0, sizeof(pk));
    for (int j = 0; j < k; j++)
        pk[j].dict = dict ? &file->dict : NULL;
    unsigned char *out = xmalloc(600 * HIST_PACK_MAX_REC);
    uint64_t end = 0;
    int rc = 0;
    for (;;) {
        int j = (int)rng_below(g, (uint64_t)k), left = 0;
        for (int q = 0; q < k; q++)
            left += done[q] < n[q];
        if (!left)
            break;
        while (done[j] == n[j])
            j = (j + 1) % k;
        size_t m = 1 + rng_below(g, 600);
        if (m > n[j] - done[j])
            m = n[j] - done[j];
        size_t nb = hist_pack_put(&pk[j], r[j] + done[j], m, out);
        if (nb > m * HIST_PACK_MAX_REC) {
            rc = -1;
            break;
        }
        if (how & PK_MEM) {
            hist_spill_put(file, end, out, nb);
        } else if (pwrite(fd, out, nb, (off_t)end) != (ssize_t)nb) {
            rc = -1;
            break;
        }
        hist_packer_placed(&pk[j], nb, end);
        end += nb;
        done[j] += m;
    }
    free(out);
    for (int j = 0; j < k; j++) {
        if (rc)
            hist_packer_free(&pk[j]);
        else if (how & PK_NOLAST) {
            p[j] = hist_pack_take(&pk[j], file, NULL, "test.jsonl");
            if (n[j])
                hist_pack_read(p[j], n[j] - 1, 1, &p[j]->last, NULL);
        } else {
            p[j] = hist_pack_take(&pk[j], file, n[j] ? &r[j][n[j] - 1] : NULL, "test.jsonl");
        }
    }
    hist_spill_drop(file);
    return rc;
}

/* Contract: r[0..n) alone in a new file (its bytes where the stream has
 * them: one piece), with a dictionary; its pack, or NULL. */
static struct hist_pack *pack_file(struct rng *g, struct ev_rec *r, size_t n)
{
    struct hist_pack *p = NULL;
    return pack_shared(g, &r, &n, 1, &p, PK_DICT) == 0 ? p : NULL;
}

static void test_round_trip(void)
{
    struct rng g;
    rng_seed(&g, t_env_u64("LS_TEST_SEED", 20261127), 0);
    for (int round = 0; round < 40; round++) {
        int k = round < 4 ? 1 : 1 + (int)rng_below(&g, 3); /* streams sharing a file */
        struct ev_rec *r[3];
        size_t n[3];
        struct hist_pack *p[3];
        for (int j = 0; j < k; j++) {
            n[j] = round < 4 ? (size_t)round : rng_below(&g, 5000);
            r[j] = xmalloc((n[j] ? n[j] : 1) * sizeof(*r[j]));
            int64_t t = (int64_t)rng_below(&g, 1000);
            for (size_t i = 0; i < n[j]; i++)
                gen(&g, &r[j][i], &t, i);
        }
        /* a third with every header whole, a third in memory, half with
         * the last record read back */
        int dict = round % 3 != 2;
        int how = (dict ? PK_DICT : 0) | (round % 3 == 1 ? PK_MEM : 0) |
                  (round % 2 ? PK_NOLAST : 0);
        REQUIRE(pack_shared(&g, r, n, k, p, how) == 0);
        size_t all = 0;
        for (int j = 0; j < k; j++)
            all += n[j];
        /* random types and flags: past 1,000 records every code is given,
         * and the headers that come later are written whole */
        if (dict && all > 1000)
            CHECK_INT(p[0]->file->dict.n, HIST_DICT_CODES);
        for (int j = 0; j < k; j++) {
            CHECK_INT(p[j]->n, n[j]);
            CHECK(p[j]->file == p[0]->file);
            CHECK(n[j] == 0 || memcmp(&p[j]->last, &r[j][n[j] - 1], sizeof(p[j]->last)) == 0);
            struct ev_rec *b = xmalloc((n[j] ? n[j] : 1) * sizeof(*b));
            hist_pack_read(p[j], 0, n[j], b, NULL);
            CHECKF(n[j] == 0 || memcmp(b, r[j], n[j] * sizeof(*b)) == 0,
                   "round %d stream %d of %d: %zu records in %zu pieces", round, j, k, n[j],
                   p[j]->next);
            for (int q = 0; q < 60 && n[j]; q++) { /* from anywhere, any length */
                size_t lo = rng_below(&g, n[j]), m = rng_below(&g, n[j] - lo + 1);
                memset(b, 0xa5, (m ? m : 1) * sizeof(*b));
                hist_pack_read(p[j], lo, m, b, NULL);
                CHECKF(memcmp(b, r[j] + lo, m * sizeof(*b)) == 0,
                       "round %d stream %d: [%zu, %zu) of %zu", round, j, lo, lo + m, n[j]);
            }
            /* with a cursor: on in windows of any size, now and then a jump
             * (the cursor then not where the read starts) */
            struct hist_pack_cur cur;
            memset(&cur, 0, sizeof(cur));
            for (size_t lo = 0; lo < n[j];) {
                size_t m = 1 + rng_below(&g, 200);
                if (m > n[j] - lo)
                    m = n[j] - lo;
                memset(b, 0xa5, m * sizeof(*b));
                hist_pack_read(p[j], lo, m, b, &cur);
                CHECKF(memcmp(b, r[j] + lo, m * sizeof(*b)) == 0 && cur.rec == lo + m,
                       "round %d stream %d, cursor: [%zu, %zu) of %zu", round, j, lo, lo + m,
                       n[j]);
                lo += m;
                if (rng_below(&g, 10) == 0) /* back or on, anywhere */
                    lo = rng_below(&g, n[j]);
            }
            free(b);
        }
        if (k > 1 && n[0] > 1200 && n[1] > 1200) /* pieces, or the test would not be one */
            CHECKF(p[0]->next > 1 && p[1]->next > 1, "pieces %zu, %zu", p[0]->next, p[1]->next);
        for (int j = k - 1; j >= 0; j--) { /* the file open until the last is freed */
            CHECK((how & PK_MEM) || fcntl(p[0]->file->fd, F_GETFD) >= 0);
            hist_pack_free(p[j]);
            free(r[j]);
        }
    }
}

/* Contract: r[0..n) packed (with a dictionary, in a file) reads back
 * byte for byte: whole, in pairs from each record on, and the last record
 * as the loader reads it back; a read ends normally (a malformed record
 * would end the process). */
static void round_trip_fixed(const char *what, struct ev_rec *r, size_t n)
{
    struct rng g;
    rng_seed(&g, 5, 0);
    for (size_t i = 0; i < n; i++)
        r[i].seq = (uint32_t)i;
    struct hist_pack *p = pack_file(&g, r, n);
    REQUIRE(p != NULL);
    struct ev_rec *b = xmalloc(n * sizeof(*b));
    for (size_t lo = 0; lo + 1 < n; lo++) { /* a read that stops early sees what it read */
        hist_pack_read(p, lo, 2, b, NULL);
        CHECKF(memcmp(b, r + lo, 2 * sizeof(*b)) == 0, "%s: records %zu and %zu", what, lo,
               lo + 1);
    }
    hist_pack_read(p, 0, n, b, NULL);
    CHECKF(memcmp(b, r, n * sizeof(*b)) == 0, "%s: all %zu", what, n);
    struct ev_rec last;
    hist_pack_read(p, n - 1, 1, &last, NULL);
    CHECKF(memcmp(&last, &r[n - 1], sizeof(last)) == 0, "%s: the last", what);
    free(b);
    hist_pack_free(p);
}

static void test_fields(void)
{
    /* tokens: each length 1..16 repeated (a repeated token of 15 bytes
     * shares 16 with the last: written as 299 in a byte, it read back as
     * another record's bytes), then one sharing all its bytes with a
     * longer one before, one sharing 15 of 16, one sharing none, and
     * zero bytes inside */
    struct ev_rec r[64];
    size_t n = 0;
    memset(r, 0, sizeof(r));
    for (int len = 1; len <= 16; len++)
        for (int rep = 0; rep < 2; rep++) {
            r[n].t = (int64_t)n;
            memset(r[n].token, 'a' + len % 26, (size_t)len);
            n++;
        }
    static const char *const toks[] = {"abcdefghijklmnop", "abcdefgh", "abcdefghijklmnoq",
                                       "abcdefghijklmnoq", "zzz", "abcdefghijklmno"};
    for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++, n++) {
        r[n].t = (int64_t)n;
        memcpy(r[n].token, toks[i], strlen(toks[i]));
    }
    r[n].t = (int64_t)n;
    memcpy(r[n].token, "ab\0cd\0\0\0\0\0\0\0\0\0\0e", 16);
    n++;
    round_trip_fixed("tokens", r, n);
    /* fences and values back to earlier ones, and at their ends; times and
     * leases 2^63 apart, both ways */
    memset(r, 0, sizeof(r));
    static const uint64_t fences[] = {5, 5, 7, 5, 0, 5, UINT64_MAX, 1, 0, 0, UINT64_MAX, 2};
    static const int64_t values[] = {3, 3, -1, 3, 0, INT64_MIN, INT64_MAX, 0, 3, -3, -3, 1};
    static const int64_t times[] = {0, INT64_MIN, 0, INT64_MAX, INT64_MIN, -1, 1, 0,
                                    INT64_MAX, INT64_MAX, INT64_MIN, 5};
    n = sizeof(fences) / sizeof(fences[0]);
    for (size_t i = 0; i < n; i++) {
        r[i].fence = fences[i];
        r[i].value = values[i];
        r[i].t = times[i];
        r[i].valid_until = i % 3 == 0 ? 0 : i % 3 == 1 ? (int64_t)((uint64_t)times[i] + (1ull << 63))
                                                         : times[i] - 1;
        r[i].type = (uint8_t)(1 + i % 3);
    }
    round_trip_fixed("fences, values, times", r, n);
}

static void test_size(void)
{
    /* what the bench's lines come to: a grant with its token in 26 bytes
     * (the first of a block), the store ops of its hold after it 5 and 4
     * bytes (their fence the grant's, their value a step from the last), 3
     * when the value is the same; the worker's next grant in 11, its token
     * sharing 14 bytes with the last (3 bytes for its 16); the same records
     * with every header whole take 4 bytes more each */
    struct ev_rec r[5];
    memset(r, 0, sizeof(r));
    r[0].t = 1000000;
    r[0].type = 2;
    r[0].fence = 4000;
    r[0].valid_until = 2500000;
    memcpy(r[0].token, "w000.00000000012", 16);
    r[1].t = 1010000;
    r[1].seq = 1;
    r[1].type = 16;
    r[1].flags = 7;
    r[1].fence = 4000;
    r[1].value = 3999;
    r[2] = r[1];
    r[2].seq = 2;
    r[2].t = 1020000;
    r[3] = r[2];
    r[3].seq = 3;
    r[3].t = 1030000;
    r[3].value = 4000;
    r[4] = r[0];
    r[4].seq = 4;
    r[4].t = 1100000;
    r[4].fence = 4002;
    r[4].valid_until = 2600000;
    memcpy(r[4].token, "w000.00000000013", 16);
    for (int whole = 0; whole < 2; whole++) {
        struct hist_spill *f = hist_spill_new_mem(1 << 20);
        struct hist_packer pk;
        memset(&pk, 0, sizeof(pk));
        pk.dict = whole ? NULL : &f->dict;
        unsigned char out[5 * HIST_PACK_MAX_REC];
        size_t n[5];
        for (int i = 0; i < 5; i++)
            n[i] = hist_pack_put(&pk, r + i, 1, out);
        size_t w = whole ? 4 : 0;
        CHECKF(n[0] == 26 + w && n[1] == 5 + w && n[2] == 3 + w && n[3] == 4 + w && n[4] == 11 + w,
               "whole %d: grant %zu bytes, store ops %zu %zu %zu, next grant %zu", whole, n[0],
               n[1], n[2], n[3], n[4]);
        hist_packer_free(&pk);
        hist_spill_drop(f);
    }
}

/* Contract: the stack below the caller's frame left full of 0xff bytes
 * (what a read buffer there starts with, unless it is cleared). */
static __attribute__((noinline)) void smear_stack(void)
{
    volatile unsigned char junk[96 * 1024];
    for (size_t k = 0; k < sizeof(junk); k++)
        junk[k] = 0xff;
}

/* Contract: the exit status of a child that reads records [lo, lo + k)
 * of p into buf (its stack smeared first when smear), its stderr dropped. */
static int read_status(const struct hist_pack *p, size_t lo, size_t k, struct ev_rec *buf,
                       int smear)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0)
            dup2(dn, 2);
        if (smear)
            smear_stack();
        hist_pack_read(p, lo, k, buf, NULL);
        _exit(0);
    }
    int st = 0;
    return waitpid(pid, &st, 0) == pid ? st : -1;
}

static void test_unreadable(void)
{
    /* the file cut short under the pack: the read ends the process (3) */
    struct rng g;
    rng_seed(&g, 11, 0);
    size_t n = 1000;
    struct ev_rec *r = xmalloc(n * sizeof(*r));
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        gen(&g, &r[i], &t, i);
    struct hist_pack *p = pack_file(&g, r, n);
    REQUIRE(p != NULL);
    REQUIRE(ftruncate(p->file->fd, (off_t)(p->at[(n - 1) / HIST_PACK_BLOCK] + 1)) == 0);
    struct ev_rec b[8];
    int st = read_status(p, n - 8, 8, b, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
    /* what is still there reads back */
    hist_pack_read(p, 0, 8, b, NULL);
    CHECK(memcmp(b, r, sizeof(b)) == 0);
    hist_pack_free(p);
    /* bytes no packer wrote (a whole header that says every field but the
     * token follows, then every byte 0xff: each varint runs to its limit;
     * the next header has bits no packer sets), the last at a read's end:
     * the read ends the process (3), never reads outside what it read
     * (AddressSanitizer would say) */
    p = pack_file(&g, r, n);
    REQUIRE(p != NULL);
    size_t from = (size_t)p->at[(n - 1) / HIST_PACK_BLOCK];
    unsigned char junk[4096];
    memset(junk, 0xff, sizeof(junk));
    junk[1] = 0xef; /* 0x0fef: no token (its byte 0xff shares more than its length) */
    junk[2] = 0x0f;
    REQUIRE(pwrite(p->file->fd, junk, (size_t)p->at[(n - 1) / HIST_PACK_BLOCK + 1] - from,
                   (off_t)from) > 0);
    st = read_status(p, n - 8, 8, b, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "malformed: status %d", st);
    hist_pack_free(p);
    free(r);
    /* 16382 records of 2 bytes, then one whose whole header says every
     * field follows and begins 4 bytes before the end of a whole read (32
     * KB): decoded past the bytes read, it meets zeros, never the end of
     * the buffer */
    n = 16384;
    r = xcalloc(n, sizeof(*r));
    for (size_t i = 0; i < n; i++) {
        r[i].t = (int64_t)(i % 64); /* a difference of 1, or -63: one byte */
        r[i].type = EV_ENTER;
        r[i].seq = (uint32_t)i;
    }
    p = pack_file(&g, r, n);
    REQUIRE(p != NULL);
    CHECK_INT(p->at[n / HIST_PACK_BLOCK], 2 * n);
    static const unsigned char last[4] = {0xff, 0xff, 0x0f, 0x01};
    REQUIRE(pwrite(p->file->fd, last, 4, (off_t)(2 * n - 4)) == 4);
    st = read_status(p, 0, n, r, 1);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "at a read's end: status %d", st);
    hist_pack_free(p);
    /* a code the dictionary never gave (2 given), and a token that shares
     * more bytes than it has: malformed, the process ends (3) */
    p = pack_file(&g, r, 300);
    REQUIRE(p != NULL);
    CHECK_INT(p->file->dict.n, 2);
    static const unsigned char code[1] = {200};
    REQUIRE(pwrite(p->file->fd, code, 1, 20) == 1);
    st = read_status(p, 0, 300, r, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "a code not given: status %d", st);
    hist_pack_free(p);
    /* a whole header no packer writes: a fence both given and the same */
    p = pack_file(&g, r, 300);
    REQUIRE(p != NULL);
    static const unsigned char both[4] = {255, 2, 2, 1}; /* bits 0x0202, type 1 */
    REQUIRE(pwrite(p->file->fd, both, 4, 20) == 4); /* record 10 */
    st = read_status(p, 0, 11, r, 0); /* up to it: nothing after it gives it away */
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "fence given and same: status %d", st);
    hist_pack_free(p);
    memset(r, 0, 2 * sizeof(*r));
    r[1].seq = 1;
    memcpy(r[1].token, "ab", 2); /* code, t, token byte, "ab" */
    p = pack_file(&g, r, 2);
    REQUIRE(p != NULL);
    struct ev_rec two[2];
    hist_pack_read(p, 0, 2, two, NULL);
    CHECK(memcmp(two, r, sizeof(two)) == 0);
    static const unsigned char tok[1] = {3 * 17 + 2}; /* 3 shared of 2 */
    REQUIRE(pwrite(p->file->fd, tok, 1, 4) == 1);
    st = read_status(p, 0, 2, two, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "a token's shared bytes: status %d", st);
    hist_pack_free(p);
    free(r);
}

int main(void)
{
    tmp = t_tmpdir();
    if (!tmp)
        return 1;
    RUN(test_round_trip);
    RUN(test_fields);
    RUN(test_size);
    RUN(test_unreadable);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
