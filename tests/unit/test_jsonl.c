/*
 * test_jsonl.c: the streaming JSONL import (checkers/jlparse.c,
 * checkers/histjsonl.c). The flat parser gives the tree parser's record for
 * every field, escapes and numbers, skips unknown keys, and leaves what it
 * is unsure of to the tree parser (whose FILE:LINE messages stay); random
 * histories loaded in memory, spilled, and spilled with sorted runs merged
 * on disk give the same whole result document (result_build; the source
 * path aside) as the same records handed to the checkers
 * directly; an out-of-order worker is sorted; a planted overlap is found;
 * on random lines (test_random_lines) the flat parser, its compact path
 * and its general one, answers exactly as the tree parser does.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/histpack.h"
#include "checkers/jlparse.h"
#include "checkers/jlshape_int.h"
#include "harness/verdict.h"
#include "tests/unit/testing.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char *tmp;

static int write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fwrite(text, 1, n, f);
    return fclose(f);
}

/* A parser of lines of "x.jsonl" into a history of its own. */
struct fix {
    struct history h;
    struct ls_err e;
    struct jl_parser p;
};

static void fix_open(struct fix *f)
{
    memset(f, 0, sizeof(*f));
    jl_parser_init(&f->p, &f->h, "x.jsonl", &f->e);
}

static void fix_close(struct fix *f)
{
    jl_parser_free(&f->p);
    history_free(&f->h);
}

/* Contract: both parsers on line: flat must take it (want_flat) or leave it,
 * and jl_parse_line must give the tree parser's record, worker and
 * resource name. */
static void same(const char *line, int want_flat)
{
    struct fix f1, f2;
    fix_open(&f1);
    fix_open(&f2);
    struct ev_rec a, b;
    int wa = -1, wb = -1;
    memset(&a, 0x5a, sizeof(a));
    int flat = jl_parse_flat(&f1.p, line, strlen(line), &a, &wa);
    CHECKF(flat == want_flat, "flat %d for %s", flat, line);
    if (!flat)
        CHECK(jl_parse_line(&f1.p, line, strlen(line), 1, &a, &wa) == 0);
    int rc = jl_parse_tree(&f2.p, line, strlen(line), 1, &b, &wb);
    CHECKF(rc == 0, "tree refused %s: %s", line, f2.e.msg);
    CHECKF(memcmp(&a, &b, sizeof(a)) == 0 && wa == wb, "records differ for %s", line);
    CHECK_INT(f1.h.nres, f2.h.nres);
    for (int i = 0; i < f1.h.nres && i < f2.h.nres; i++)
        CHECK_STR(f1.h.res_names[i], f2.h.res_names[i]);
    fix_close(&f1);
    fix_close(&f2);
}

/* Contract: line is read by the flat parser's compact path (1) or its
 * general one (0), with the tree parser's record either way. */
static void path(const char *line, int want_compact)
{
    same(line, 1);
    struct fix f;
    fix_open(&f);
    struct ev_rec r;
    int w;
    CHECK(jl_parse_flat(&f.p, line, strlen(line), &r, &w) == 1);
    CHECKF(f.p.compact == (uint64_t)want_compact, "compact %d for %s", (int)f.p.compact, line);
    fix_close(&f);
}

static void test_compact_path(void)
{
    /* separators and colons inside strings, keys too */
    path("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a,b}:c{\",\"x,}\":\"}\"}", 1);
    path("{\"t\":123456789012345678,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 1);
    path("{\"t\":-12345678901234,\"w\":0,\"type\":\"exit\",\"res\":\"a\",\"fence\":7}", 1);
    path("{\"type\":\"crash\",\"w\":7,\"t\":0}", 1); /* 30 bytes; the number last */
    /* every length from 16 to past 256 (the masks' 16-byte blocks and 64-bit words) */
    char line[400];
    for (int pad = 0; pad <= 240; pad++) {
        snprintf(line, sizeof(line), "{\"t\":9,\"w\":1,\"type\":\"exit\",\"res\":\"%.*s\"}", pad,
                 "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr"
                 "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr"
                 "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr");
        path(line, strlen(line) <= 256);
    }
    /* spaces, an escape, a trailing CR: the general path */
    path("{\"t\": 1,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 0);
    path("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\\\"\"}", 0);
    path("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}\r", 0);
}

static void test_flat_fields(void)
{
    /* every type */
    for (int t = 1; t < EV__MAX; t++) {
        char line[256];
        snprintf(line, sizeof(line), "{\"t\":%d,\"w\":3,\"type\":\"%s\",\"res\":\"r1\"}", t * 7,
                 ev_type_name(t));
        same(line, 1);
    }
    /* every field */
    same("{\"t\":5,\"w\":1,\"type\":\"acquire_invoke\",\"res\":\"a\",\"attempt\":4}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"acquire_invoke\",\"res\":\"a\",\"attempt\":null}", 1);
    same("{\"t\":-5,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"a\",\"token\":\"tok\",\"fence\":9,"
         "\"valid_until\":123456789012345678}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"acquire_ok\",\"res\":\"a\",\"valid_until\":null}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"acquire_ok\",\"res\":\"a\"}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"renew_ok\",\"res\":\"a\",\"valid_until\":9,\"auto\":true}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"renew_ok\",\"res\":\"a\",\"auto\":false}", 1);
    same("{\"t\":5,\"w\":1,\"type\":\"acquire_ok\",\"res\":\"a\",\"auto\":\"ignored\"}", 1);
    for (int e = 0; e <= EVE_NO_PRIMARY; e++) {
        char line[256];
        snprintf(line, sizeof(line), "{\"t\":1,\"w\":2,\"type\":\"acquire_fail\",\"res\":\"a\","
                 "\"err\":\"%s\"}", ev_err_name(e));
        same(line, 1);
    }
    same("{\"t\":1,\"w\":2,\"type\":\"release_fail\",\"res\":\"a\",\"err\":\"whatever\"}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"store_write\",\"res\":\"a\",\"fence\":3,\"fenced\":true,"
         "\"accepted\":true,\"failed\":false,\"counter\":-42}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fenced\":null,\"counter\":null}",
         1);
    same("{\"t\":1,\"w\":2,\"type\":\"enter\",\"res\":\"a\",\"counter\":\"ignored off store\"}", 1);
    same("{\"t\":1,\"w\":1000000,\"type\":\"crash\"}", 1);
    same("{\"t\":1,\"w\":4,\"type\":\"crash\",\"res\":null}", 1);
    /* tokens: short, exactly 16, longer (hashed) */
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"token\":\"0123456789abcdef\"}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"token\":\"0123456789abcdefXYZ\"}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"token\":7}", 1); /* not a string */
    /* escapes in strings */
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\","
         "\"token\":\"\\u0041\\u007e\"}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"ex\\u0069t\",\"res\":\"a\"}", 1);
    /* numbers: zero, negatives, 18 digits */
    same("{\"t\":0,\"w\":0,\"type\":\"exit\",\"res\":\"a\",\"fence\":0}", 1);
    same("{\"t\":-999999999999999999,\"w\":0,\"type\":\"exit\",\"res\":\"a\"}", 1);
    /* unknown keys of every scalar kind skipped; spacing anywhere */
    same("  { \"x\" : \"s\\\"q\" , \"t\" : 1 ,\"n\":null,\"b\":true,\"f\":false,\"i\":-3,"
         "\"w\":2 , \"type\":\"exit\", \"res\" : \"a\" , \"zz\":12 }  \r", 1);
    /* non-ASCII bytes kept as they are */
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"caf\xc3\xa9\"}", 1);
}

/* Contract: the flat parser leaves line, and jl_parse_line refuses it with
 * "x.jsonl:1: " then want. */
static void refused(const char *line, const char *want)
{
    struct fix f;
    fix_open(&f);
    struct ev_rec r;
    int w;
    CHECKF(jl_parse_flat(&f.p, line, strlen(line), &r, &w) == 0, "flat took %s", line);
    CHECK(jl_parse_line(&f.p, line, strlen(line), 1, &r, &w) == LS_EINPUT);
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "x.jsonl:1: %s", want);
    CHECKF(strncmp(f.e.msg, prefix, strlen(prefix)) == 0, "'%s' does not start '%s'", f.e.msg,
           prefix);
    fix_close(&f);
}

/* Contract: line is refused as a duplicate key, by the tree parser. */
static void refused_dup(const char *line)
{
    refused(line, "bad JSON");
    struct fix f;
    fix_open(&f);
    struct ev_rec r;
    int w;
    CHECK(jl_parse_line(&f.p, line, strlen(line), 1, &r, &w) == LS_EINPUT);
    CHECKF(strstr(f.e.msg, "duplicate object key") != NULL, "'%s' for %s", f.e.msg, line);
    fix_close(&f);
}

static void test_flat_leaves(void)
{
    /* the flat parser leaves these to the tree parser, which takes them */
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"x\":{\"y\":[1,2]}}", 0);
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"x\":1.5e3}", 0);
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"caf\\u00e9\"}", 0);
    same("{\"\\u0074\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 0);
    same("{\"t\":-0,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 0);
    same("{\"t\":100000000000000000,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"v\":1234567890123456789}",
         0);
    /* ... and these it leaves too, for the tree parser to refuse */
    refused("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"res\":\"b\"}", "bad JSON");
    /* a repeated unknown key is refused like a repeated known one */
    refused_dup("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"x\":1,\"x\":2}");
    refused_dup("{\"x\":1,\"t\":1,\"w\":2,\"type\":\"exit\",\"x\":1,\"res\":\"a\"}");
    /* ... spaced otherwise (the general path once took the spaces after a
     * key for part of it, and read these two as different keys) */
    refused_dup("{\"t\":1,\"w\":2,\"type\":\"enter\",\"res\":\"r\",\"x\" :1,\"x\":2}");
    refused_dup("{\"t\":1,\"w\":2,\"type\":\"enter\",\"res\":\"r\",\"x\":1,\"x\"\t: 2}");
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"x\":1}", 1);
    same("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"x\":1,\"xy\":2,\"y\":3}", 1);
    same("{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,\"g\":1,\"h\":1,\"i\":1,\"t\":1,"
         "\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 0); /* 9 unknown keys: left */
    refused("{\"t\":1234567890123456789,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", "\"t\"");
    refused("{\"t\":1,\"w\":2,\"type\":\"exit\",\"res\":\"a\",\"fence\":1.0}", "\"fence\"");
    refused("{\"t\":1,\"w\":2,\"type\":\"acquire_invoke\",\"res\":\"a\",\"fence\":5000000000}",
            "\"attempt\""); /* the tree parser's rule, kept as it was */
}

/* ---- random lines: the flat parser against the tree parser ---- */

/* Contract: a random integer's text: small, large, at the 18- and 19-digit
 * edges, negative, or a number the flat parser must leave (-0, a leading
 * zero, a fraction, an exponent). */
static void rand_int(struct rng *g, struct strbuf *sb)
{
    static const char *odd[] = {"-0", "01", "00", "1.5", "1e3", "2E2", "-", "1.", "0.0",
                                "123456789012345678", "-123456789012345678",
                                "1234567890123456789", "99999999999999999999", "0", "9",
                                "12345678", "123456789", "1234567890123456", "-12345678"};
    switch (rng_below(g, 12)) {
    case 0: sb_printf(sb, "%d", (int)rng_below(g, 10)); break;
    case 1: sb_printf(sb, "-%lld", (long long)rng_below(g, 100000000000ull)); break;
    case 2: {
        uint64_t x = rng_next(g); /* one draw after the other: the same on every compiler */
        sb_printf(sb, "%lld", (long long)(x >> (rng_below(g, 63) + 1)));
        break;
    }
    case 3: sb_puts(sb, odd[rng_below(g, sizeof(odd) / sizeof(odd[0]))]); break;
    default: sb_printf(sb, "%lld", (long long)rng_below(g, 1000000)); break;
    }
}

/* Contract: a random JSON string: plain, or with separators, escapes,
 * non-ASCII bytes, a control byte, an unterminated end. */
static void rand_str(struct rng *g, struct strbuf *sb, const char *base)
{
    static const char *bits[] = {",", "}", "{", ":", "\\\"", "\\\\", "\\n", "\\u0041",
                                 "\\u00e9", "\\u0000", "\xc3\xa9", " ", "\t", "\\q", "]", "x"};
    sb_putc(sb, '"');
    sb_puts(sb, base);
    int n = rng_below(g, 12) ? 0 : 1 + (int)rng_below(g, 3);
    for (int k = 0; k < n; k++)
        sb_puts(sb, bits[rng_below(g, sizeof(bits) / sizeof(bits[0]))]);
    if (rng_below(g, 200))
        sb_putc(sb, '"');
}

/* Contract: a random value for key k of a line of type ty. */
static void rand_value(struct rng *g, struct strbuf *sb, const char *k, int ty)
{
    unsigned r = (unsigned)rng_below(g, 80);
    if (r == 0) { sb_puts(sb, "null"); return; }
    if (r == 1) { sb_puts(sb, rng_below(g, 2) ? "true" : "false"); return; }
    if (r == 2) { sb_puts(sb, rng_below(g, 2) ? "{\"a\":[1,\"}\",2]}" : "[1,2]"); return; }
    if (r == 3) { rand_int(g, sb); return; }
    if (r == 4) { rand_str(g, sb, "s"); return; }
    if (strcmp(k, "type") == 0) {
        rand_str(g, sb, rng_below(g, 30) ? ev_type_name(ty) : "acquire_oks");
    } else if (strcmp(k, "res") == 0) {
        char b[16];
        snprintf(b, sizeof(b), "r%d", (int)rng_below(g, 40));
        rand_str(g, sb, b);
    } else if (strcmp(k, "token") == 0 || strcmp(k, "err") == 0) {
        char b[40];
        int len = (int)rng_below(g, 22);
        snprintf(b, sizeof(b), "%.*s", len,
                 strcmp(k, "err") == 0 ? ev_err_name((int)rng_below(g, EVE_NO_PRIMARY + 1))
                                       : "0123456789abcdefghijklmnop");
        rand_str(g, sb, b);
    } else if (strcmp(k, "auto") == 0 || strcmp(k, "fenced") == 0 ||
               strcmp(k, "accepted") == 0 || strcmp(k, "failed") == 0) {
        sb_puts(sb, rng_below(g, 2) ? "true" : "false");
    } else if (strcmp(k, "w") == 0) {
        sb_printf(sb, "%d", (int)rng_below(g, rng_below(g, 2) ? 64 : 1100000));
    } else {
        rand_int(g, sb);
    }
}

/* Contract: a random history line: a record's keys (and some unknown ones,
 * sometimes one twice) in a random order, mostly written compact, else
 * with spaces, a trailing CR, a cut or a changed byte. */
static void rand_line(struct rng *g, struct strbuf *sb)
{
    static const char *keys[] = {"t", "w", "type", "res", "token", "fence", "valid_until",
                                 "auto", "attempt", "err", "fenced", "accepted", "failed",
                                 "counter", "x", "xy", "t\\u0000", "", "a,b", "q}"};
    int ty = 1 + (int)rng_below(g, EV__MAX - 1);
    int order[24], n = 0;
    for (int k = 0; k < 4; k++) /* t, w, type, res: mostly there */
        if (rng_below(g, 40))
            order[n++] = k;
    for (int k = 4; k < (int)(sizeof(keys) / sizeof(keys[0])); k++)
        if (rng_below(g, k < 14 ? 3 : 8) == 0)
            order[n++] = k;
    if (n > 0 && rng_below(g, 30) == 0) {
        int again = order[rng_below(g, (uint64_t)n)]; /* a key twice */
        order[n++] = again;
    }
    for (int k = n - 1; k > 0; k--) {
        int j = (int)rng_below(g, (uint64_t)k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    static const char *const spaces[] = {"", " ", "\t", "  "};
    int spaced = rng_below(g, 6) == 0; /* then each key spaced its own way */
    sb_reset(sb);
    if (spaced && rng_below(g, 2))
        sb_putc(sb, ' ');
    sb_putc(sb, '{');
    for (int k = 0; k < n; k++) {
        const char *sp = spaced ? spaces[rng_below(g, 4)] : "";
        sb_printf(sb, "%s\"%s\"%s:%s", k ? "," : "", keys[order[k]], sp,
                  spaced ? spaces[rng_below(g, 4)] : "");
        rand_value(g, sb, keys[order[k]], ty);
        sb_puts(sb, sp);
    }
    sb_putc(sb, '}');
    if (rng_below(g, 30) == 0)
        sb_puts(sb, rng_below(g, 2) ? "\r" : " ");
    if (rng_below(g, 4) == 0) { /* past the compact path's 256 bytes, or around 16, 64, 128 */
        sb->len--;
        sb_puts(sb, ",\"pad\":\"");
        for (int k = (int)rng_below(g, 300); k > 0; k--)
            sb_putc(sb, 'p');
        sb_puts(sb, "\"}");
    }
    if (sb->len && rng_below(g, 25) == 0)
        sb->len = (size_t)rng_below(g, sb->len); /* cut */
    if (sb->len && rng_below(g, 25) == 0) {
        static const char bytes[] = "\",}{:\\ 0-.e\x01\x7f";
        size_t at = (size_t)rng_below(g, sb->len); /* drawn first: the same on every compiler */
        sb->buf[at] = bytes[rng_below(g, sizeof(bytes) - 1)];
    }
}

/* Contract: line i (sb) read by jl_parse_line (f1) and by the tree parser
 * alone (f2): the same record and worker, or the same message; 1 when so. */
static int agree(struct fix *f1, struct fix *f2, const struct strbuf *sb, int i)
{
    struct ev_rec a, b;
    int wa = -1, wb = -1;
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0xa5, sizeof(b));
    int ra = jl_parse_line(&f1->p, sb->buf, sb->len, 1, &a, &wa);
    int rb = jl_parse_tree(&f2->p, sb->buf, sb->len, 1, &b, &wb);
    int ok = ra == rb && (ra ? strcmp(f1->e.msg, f2->e.msg) == 0
                             : memcmp(&a, &b, sizeof(a)) == 0 && wa == wb);
    CHECKF(ok, "line %d differs (%d / %d, '%s' / '%s'): %.*s", i, ra, rb, f1->e.msg, f2->e.msg,
           (int)sb->len, sb->buf);
    return ok;
}

/* Contract: line i (sb) read as the history loader reads it (f3: first by
 * jl_parse_shaped in a buffer of exactly the bytes it may read: the line,
 * its '\n' and the start of another, or now and then cut before the '\n';
 * now and then a line followed by more than a line's limit of bytes,
 * which jl_parse_shaped reads without checking where the buffer ends,
 * its '\n' there or not; then when not taken by jl_parse_line) and by the
 * tree parser alone (f4): the same record and worker, or the same message;
 * 1 when so. */
static int roomy_seen; /* lines agree_open had taken with room past them */

static int agree_open(struct fix *f3, struct fix *f4, const struct strbuf *sb, int i,
                      struct rng *g)
{
    static const char next[] = "{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"a\"}\n";
    int cut = rng_below(g, 8) == 0, far = rng_below(g, 8) == 0;
    size_t avail = far ? sb->len + 1 + JL_MAX_LINE + 2048
                   : cut ? (size_t)rng_below(g, sb->len + 1)
                         : sb->len + 1 + (size_t)rng_below(g, sizeof(next));
    char *buf = xmalloc(avail + 1); /* exactly: a read past avail is ASan's */
    memcpy(buf, sb->buf, avail < sb->len ? avail : sb->len);
    if (far) { /* its '\n' or, cut, a line that goes on: the rest digits */
        buf[sb->len] = cut ? '7' : '\n';
        memset(buf + sb->len + 1, '7', avail - sb->len - 1);
    } else if (avail > sb->len) {
        buf[sb->len] = '\n';
        memcpy(buf + sb->len + 1, next, avail - sb->len - 1);
    }
    struct ev_rec a, b;
    int wa = -1, wb = -1;
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0xa5, sizeof(b));
    uint64_t before = f3->p.shaped;
    size_t n = jl_parse_shaped(&f3->p, buf, avail, &a, &wa);
    free(buf);
    int ra = n ? 0 : jl_parse_line(&f3->p, sb->buf, sb->len, 1, &a, &wa);
    int rb = jl_parse_tree(&f4->p, sb->buf, sb->len, 1, &b, &wb);
    int ok = ra == rb && (ra ? strcmp(f3->e.msg, f4->e.msg) == 0
                             : memcmp(&a, &b, sizeof(a)) == 0 && wa == wb);
    ok &= n == 0 || (n == sb->len && !cut && f3->p.shaped == before + 1);
    roomy_seen += far && n > 0;
    CHECKF(ok, "line %d differs read open (%zu of %zu%s; %d / %d, '%s' / '%s'): %.*s", i, n,
           sb->len, cut ? ", cut" : "", ra, rb, f3->e.msg, f4->e.msg, (int)sb->len, sb->buf);
    ls_err_clear(&f3->e);
    ls_err_clear(&f4->e);
    return ok;
}

static void test_random_lines(void)
{
    struct fix f1, f2; /* jl_parse_line, and the tree parser alone */
    fix_open(&f1);
    fix_open(&f2);
    struct rng g;
    rng_seed(&g, 19, 7);
    struct strbuf sb = STRBUF_INIT;
    int lines = 60000, bad = 0;
    for (int i = 0; i < lines && bad < 5; i++) {
        rand_line(&g, &sb);
        bad += !agree(&f1, &f2, &sb, i);
    }
    CHECK_INT(f1.h.nres, f2.h.nres);
    for (int i = 0; i < f1.h.nres && i < f2.h.nres; i++)
        CHECK_STR(f1.h.res_names[i], f2.h.res_names[i]);
    /* every path was taken: compact, the general flat one, the tree parser */
    const struct jl_parser *p1 = &f1.p;
    CHECKF(p1->compact > (uint64_t)lines / 10, "compact %llu", (unsigned long long)p1->compact);
    CHECKF(p1->flat - p1->compact > (uint64_t)lines / 20, "general %llu",
           (unsigned long long)(p1->flat - p1->compact));
    CHECKF(p1->tree > (uint64_t)lines / 20, "tree %llu", (unsigned long long)p1->tree);
    sb_free(&sb);
    fix_close(&f1);
    fix_close(&f2);
}

/* Contract: line read by a parser that has just read `shape` (so first
 * against its shape) gives the tree parser's record or message; taken by
 * the shape when want_shaped. */
static void after_shape(const char *shape, const char *line, int want_shaped)
{
    struct fix f1, f2;
    fix_open(&f1);
    fix_open(&f2);
    struct ev_rec a, b;
    int wa = -1, wb = -1;
    CHECK(jl_parse_line(&f1.p, shape, strlen(shape), 1, &a, &wa) == 0);
    CHECK(jl_parse_tree(&f2.p, shape, strlen(shape), 1, &b, &wb) == 0); /* its resource first */
    uint64_t before = f1.p.shaped;
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0xa5, sizeof(b));
    int ra = jl_parse_line(&f1.p, line, strlen(line), 2, &a, &wa);
    int rb = jl_parse_tree(&f2.p, line, strlen(line), 2, &b, &wb);
    CHECKF(ra == rb && (ra ? strcmp(f1.e.msg, f2.e.msg) == 0
                           : memcmp(&a, &b, sizeof(a)) == 0 && wa == wb),
           "after %s: %s: %d / %d '%s' / '%s'", shape, line, ra, rb, f1.e.msg, f2.e.msg);
    CHECKF((f1.p.shaped > before) == want_shaped, "after %s: %s: shaped %d", shape, line,
           (int)(f1.p.shaped - before));
    fix_close(&f1);
    fix_close(&f2);
}

/* Contract: lines of about JL_MAX_LINE bytes (a long resource name) of a
 * shape learned from a short line, read by jl_parse_shaped in a buffer
 * with exactly the room its unchecked reads need past the line's limit
 * (JL_MAX_LINE + 1 + JL_SHAPE_ROOM, jlshape_int.h) and in one a byte
 * short of it (every read checked): the same answer, and no line over the
 * limit taken, its '\n' there or the buffer going on with digits. */
static void test_roomy_edge(void)
{
    static const char *const tails[] = {
        "\",\"fence\":12345678901234,\"valid_until\":123456789012345,\"token\":\"k\"}",
        "\",\"fenced\":false,\"counter\":-9,\"accepted\":true}"};
    static const char *const types[] = {"acquire_ok", "store_read"};
    size_t lim = JL_MAX_LINE + 1, room = JL_SHAPE_ROOM, taken = 0;
    char *line = xmalloc(lim + room + 64);
    for (int k = 0; k < 2; k++)
        for (size_t len = lim - 40; len < lim + 8; len++)
            for (int digits = 0; digits < 2; digits++) {
                char head[96];
                snprintf(head, sizeof(head), "{\"t\":-5,\"w\":3,\"type\":\"%s\",\"res\":\"", types[k]);
                size_t hl = strlen(head), tl = strlen(tails[k]);
                char shortl[256];
                snprintf(shortl, sizeof(shortl), "%sab%s", head, tails[k]);
                memcpy(line, head, hl);
                memset(line + hl, 'a', len - hl - tl);
                memcpy(line + len - tl, tails[k], tl);
                memset(line + len, '7', lim + room + 64 - len);
                if (!digits)
                    line[len] = '\n';
                struct ev_rec r[2];
                int w[2] = {-1, -1};
                size_t n[2];
                for (int c = 0; c < 2; c++) {
                    struct fix f;
                    fix_open(&f);
                    CHECK(jl_parse_line(&f.p, shortl, strlen(shortl), 1, &r[c], &w[c]) == 0);
                    size_t avail = lim + room - (size_t)c; /* c = 1: a byte short */
                    char *buf = xmalloc(avail); /* exactly: a read past it is ASan's */
                    memcpy(buf, line, avail);
                    memset(&r[c], c ? 0xa5 : 0x5a, sizeof(r[c]));
                    n[c] = jl_parse_shaped(&f.p, buf, avail, &r[c], &w[c]);
                    free(buf);
                    fix_close(&f);
                }
                CHECKF(n[0] == n[1] && (!n[0] || (memcmp(&r[0], &r[1], sizeof(r[0])) == 0 &&
                                                  w[0] == w[1])),
                       "%s, %zu bytes%s: %zu with room, %zu without", types[k], len,
                       digits ? ", digits after" : "", n[0], n[1]);
                CHECKF(n[0] == 0 || (n[0] == len && len <= JL_MAX_LINE && !digits),
                       "%s, %zu bytes%s: taken as %zu", types[k], len,
                       digits ? ", digits after" : "", n[0]);
                taken += n[0] != 0;
            }
    CHECKF(taken >= 40, "lines taken by their shape: %zu", taken);
    free(line);
}

static void test_shape_edges(void)
{
    const char *sr = "{\"t\":5,\"w\":1,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
                     "\"fenced\":true,\"counter\":7,\"accepted\":false}";
    after_shape(sr, "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"bb\",\"fence\":30,"
                    "\"fenced\":false,\"counter\":-70,\"accepted\":true}", 1);
    after_shape(sr, "{\"t\":6,\"w\":2,\"type\":\"store_write\",\"res\":\"bb\",\"fence\":30,"
                    "\"fenced\":false,\"counter\":-70,\"accepted\":true}", 1);
    static const char *const bad[] = {
        /* values: not of the shape's kind, not whole, out of range */
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":trux,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":tru,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":fals}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":null,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":falsX,\"counter\":7,\"accepted\":false}",
        "{\"t\":,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":-,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7.5,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7e2,\"accepted\":false}",
        "{\"t\":06,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":-0,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":1234567890123456789,\"w\":2,\"type\":\"store_read\",\"res\":\"a\","
        "\"fence\":3,\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":1000001,\"type\":\"store_read\",\"res\":\"a\",\"fence\":-3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\\\"b\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\x01\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"stor_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        /* the text between: a key changed, spaced, the end not the line's */
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fencE\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\" :false}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false} ",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false}}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"accepted\":false,\"x\":1}",
        "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"a\",\"fence\":3,"
        "\"fenced\":true,\"counter\":7,\"counter\":8}",
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
        after_shape(sr, bad[k], 0);
    /* long lines (past the compact path's 256 bytes), numbers of 15 to 19
     * digits: read by the shape, or left, as the tree parser reads them */
    char longres[400], line[600];
    memset(longres, 'r', 300);
    longres[300] = '\0';
    snprintf(line, sizeof(line), "{\"t\":6,\"w\":2,\"type\":\"store_read\",\"res\":\"%s\","
             "\"fence\":3,\"fenced\":true,\"counter\":7,\"accepted\":false}", longres);
    after_shape(sr, line, 1);
    static const char *const nums[] = {"123456789012345", "1234567890123456",
                                       "123456789012345678", "-123456789012345678",
                                       "1234567890123456789", "0", "-1"};
    for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
        snprintf(line, sizeof(line), "{\"t\":%s,\"w\":2,\"type\":\"store_read\",\"res\":\"a\","
                 "\"fence\":3,\"fenced\":true,\"counter\":%s,\"accepted\":false}", nums[k],
                 nums[k]);
        after_shape(sr, line, strlen(nums[k]) <= 18 + (nums[k][0] == '-'));
    }
    /* a type whose last shape parts from this one's before the type: not taken over */
    const char *typed_first = "{\"type\":\"exit\",\"t\":1,\"w\":1,\"res\":\"a\"}";
    after_shape(typed_first, "{\"t\":6,\"w\":2,\"type\":\"exit\",\"res\":\"a\"}", 0);
    /* the shape a type had last takes over after the type, when the text
     * before it is the same; when it is not, it does not */
    struct fix f1, f2;
    fix_open(&f1);
    fix_open(&f2);
    static const char *const seq[][2] = {
        {"{\"t\":1,\"w\":1,\"type\":\"exit\",\"res\":\"a\",\"token\":\"k\"}", "0"},
        {"{\"t\":2,\"w\":1,\"type\":\"enter\",\"res\":\"a\"}", "0"},
        /* enter's shape first, exit's after the type */
        {"{\"t\":3,\"w\":1,\"type\":\"exit\",\"res\":\"a\",\"token\":\"k2\"}", "1"},
        {"{\"t\":4,\"w\":1,\"type\":\"enter\",\"res\":\"b\"}", "1"},
        /* exit's shape had more keys: this exit is not of it, nor of enter's */
        {"{\"t\":5,\"w\":1,\"type\":\"exit\",\"res\":\"a\"}", "0"},
        {"{\"w\":1,\"t\":6,\"type\":\"enter\",\"res\":\"a\"}", "0"},
        /* the text before the type differs from exit's last shape: not taken over */
        {"{\"w\":1,\"t\":7,\"type\":\"exit\",\"res\":\"a\",\"token\":\"k\"}", "0"},
    };
    for (size_t k = 0; k < sizeof(seq) / sizeof(seq[0]); k++) {
        struct ev_rec a, b;
        int wa = -1, wb = -1;
        uint64_t before = f1.p.shaped;
        const char *l = seq[k][0];
        CHECK(jl_parse_line(&f1.p, l, strlen(l), 1, &a, &wa) == 0);
        CHECK(jl_parse_tree(&f2.p, l, strlen(l), 1, &b, &wb) == 0);
        CHECKF(memcmp(&a, &b, sizeof(a)) == 0 && wa == wb, "%s", l);
        CHECKF((int)(f1.p.shaped - before) == seq[k][1][0] - '0', "%s: shaped %d", l,
               (int)(f1.p.shaped - before));
    }
    fix_close(&f1);
    fix_close(&f2);
}

/* Lines of a few shapes (the same known keys in the same order, written
 * compact), their values random (rand_value: now and then of the wrong
 * kind, out of range, with an escape), now and then cut, spaced or with a
 * byte changed: most are read by a shape seen before (tok_shape), and
 * every one gives the tree parser's record or message. */
static void test_shaped_lines(void)
{
    static const char *keys[] = {"t", "w", "type", "res", "token", "fence", "valid_until",
                                 "auto", "attempt", "err", "fenced", "accepted", "failed",
                                 "counter"};
    struct rng g;
    rng_seed(&g, t_env_u64("LS_TEST_SEED", 27), 11);
    struct fix f1, f2, f3, f4; /* f3, f4: the same lines read open (agree_open) */
    fix_open(&f1);
    fix_open(&f2);
    fix_open(&f3);
    fix_open(&f4);
    struct rng g2; /* agree_open's draws: the lines are those of g alone */
    rng_seed(&g2, 5, 3);
    struct strbuf sb = STRBUF_INIT;
    int order[40][14], n[40], types[40];
    for (int s = 0; s < 40; s++) { /* t, w, type first in most; the rest any order */
        int k0 = rng_below(&g, 4) ? 3 : 0, m = 0;
        for (int k = 0; k < k0; k++)
            order[s][m++] = k;
        for (int k = k0; k < 14; k++)
            if (k < 4 || rng_below(&g, 3) == 0)
                order[s][m++] = k;
        for (int k = m - 1; k > k0; k--) {
            int j = k0 + (int)rng_below(&g, (uint64_t)(k - k0) + 1), t = order[s][k];
            order[s][k] = order[s][j];
            order[s][j] = t;
        }
        n[s] = m;
        types[s] = 1 + (int)rng_below(&g, EV__MAX - 1);
    }
    int lines = 60000, bad = 0, s = 0;
    for (int i = 0; i < lines && bad < 5; i++) {
        unsigned pick = (unsigned)rng_below(&g, 3); /* the same shape, the next, any */
        s = pick == 0 ? s : pick == 1 ? (s + 1) % 40 : (int)rng_below(&g, 40);
        int ty = rng_below(&g, 4) ? types[s] : 1 + (int)rng_below(&g, EV__MAX - 1);
        sb_reset(&sb);
        sb_putc(&sb, '{');
        for (int k = 0; k < n[s]; k++) {
            sb_printf(&sb, "%s\"%s\":", k ? "," : "", keys[order[s][k]]);
            int key = order[s][k];
            if (rng_below(&g, 12) == 0) /* anything */
                rand_value(&g, &sb, keys[key], ty);
            else if (key == 2)
                sb_printf(&sb, "\"%s\"", ev_type_name(ty));
            else if (key == 3 || key == 4)
                sb_printf(&sb, "\"%c%d\"", key == 3 ? 'r' : 'k', (int)rng_below(&g, 30));
            else if (key == 9)
                sb_printf(&sb, "\"%s\"", ev_err_name((int)rng_below(&g, EVE_NO_PRIMARY + 1)));
            else if (key == 7 || (key >= 10 && key <= 12))
                sb_puts(&sb, rng_below(&g, 2) ? "true" : "false");
            else
                sb_printf(&sb, "%lld", key == 1 ? (long long)rng_below(&g, 64)
                                                : (long long)rng_below(&g, 1ull << rng_below(&g, 60)));
        }
        sb_putc(&sb, '}');
        if (rng_below(&g, 40) == 0)
            sb.len = (size_t)rng_below(&g, sb.len); /* cut */
        if (rng_below(&g, 40) == 0)
            sb_puts(&sb, rng_below(&g, 2) ? " " : rng_below(&g, 2) ? "}" : "\r");
        if (sb.len && rng_below(&g, 40) == 0) {
            static const char bytes[] = "\",}{:\\ 0-.e\x01\x7f";
            size_t at = (size_t)rng_below(&g, sb.len);
            sb.buf[at] = bytes[rng_below(&g, sizeof(bytes) - 1)];
        }
        bad += !agree(&f1, &f2, &sb, i);
        ls_err_clear(&f1.e);
        ls_err_clear(&f2.e);
        bad += !agree_open(&f3, &f4, &sb, i, &g2);
    }
    CHECK_INT(f1.h.nres, f2.h.nres);
    for (int i = 0; i < f1.h.nres && i < f2.h.nres; i++)
        CHECK_STR(f1.h.res_names[i], f2.h.res_names[i]);
    CHECKF(f1.p.shaped > (uint64_t)lines / 6 && f1.p.compact - f1.p.shaped > (uint64_t)lines / 6,
           "shaped %llu, compact %llu", (unsigned long long)f1.p.shaped,
           (unsigned long long)f1.p.compact);
    /* read open, about as many lines by a shape as one line at a time;
     * some of them with room past them (the reads that do not check) */
    CHECKF(f3.p.shaped > f1.p.shaped * 3 / 4, "shaped open %llu, closed %llu",
           (unsigned long long)f3.p.shaped, (unsigned long long)f1.p.shaped);
    CHECKF(roomy_seen > lines / 100, "taken with room past them: %d", roomy_seen);
    CHECK_INT(f3.h.nres, f4.h.nres);
    fix_close(&f3);
    fix_close(&f4);
    sb_free(&sb);
    fix_close(&f1);
    fix_close(&f2);
}

/* Contract: the load of text fails with a message starting "FILE:want". */
static void load_fails(const char *text, const char *want)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/bad.jsonl", tmp);
    REQUIRE(write_file(path, text, strlen(text)) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    CHECK(history_load_jsonl(path, &h, &err) == LS_EINPUT);
    char prefix[4200];
    snprintf(prefix, sizeof(prefix), "%s:%s", path, want);
    CHECKF(strncmp(err.msg, prefix, strlen(prefix)) == 0, "'%s' does not start '%s'", err.msg,
           prefix);
    CHECK(strchr(err.msg, '\n') == NULL);
    history_free(&h);
}

static void test_malformed(void)
{
    const char *ok = "{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n";
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "%s\r\n \t\n%s{\"t\":2,\"w\":0,\"type\":\"exit\"", ok, ok);
    load_fails(sb.buf, "5: bad JSON"); /* no newline at the end, blank lines counted */
    load_fails("{\"t\":\"1\",\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n", "1: \"t\" missing");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":5}\n", "1: \"res\" must be a string");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"a\",\"valid_until\":true}\n",
               "1: \"valid_until\"");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"renew_ok\",\"res\":\"a\",\"auto\":1}\n", "1: \"auto\"");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"a\",\"attempt\":-1}\n",
               "1: \"attempt\"");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"store_read\",\"res\":\"a\",\"counter\":\"x\"}\n",
               "1: \"counter\"");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"a\",\"fence\":-2}\n", "1: \"fence\"");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"a\"} x\n", "1: bad JSON");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"a\\x\"}\n", "1: bad JSON");
    load_fails("{\"t\":1,\"w\":0,\"type\":\"enter\",\"res\":\"a\",}\n", "1: bad JSON");
    /* a line past the limit, longer than a read chunk: measured, not parsed */
    size_t big = (size_t)5 << 20;
    char *huge = xmalloc(big + 64);
    memcpy(huge, ok, strlen(ok));
    memset(huge + strlen(ok), ' ', big);
    memcpy(huge + strlen(ok) + big, "x\n", 3);
    load_fails(huge, "2: line is 5242881 bytes");
    free(huge);
    sb_free(&sb);
}

/* ---- equivalence on random histories ---- */

struct gen_ev {
    struct ev_rec r;
    int w;
};

/* Contract: a random history of nw workers on nr resources (holds that
 * sometimes overlap: violations of both classes), each worker's events in
 * time order, into *ev (caller frees); the count. */
static size_t gen(uint64_t seed, int nw, int nr, int per_worker, struct gen_ev **ev)
{
    struct rng rng;
    rng_seed(&rng, seed, 1);
    size_t n = 0, cap = (size_t)nw * (size_t)per_worker * 8;
    *ev = xmalloc(cap * sizeof(**ev));
    for (int w = 0; w < nw; w++) {
        int64_t t = (int64_t)rng_below(&rng, 1000);
        for (int k = 0; k < per_worker; k++) {
            int res = (int)rng_below(&rng, (uint64_t)nr);
            char tok[EVLOG_TOKEN_LEN] = {0};
            snprintf(tok, sizeof(tok), "w%d.%d", w, k);
            int64_t hold = 100 + (int64_t)rng_below(&rng, 3000);
            int types[] = {EV_ACQUIRE_INVOKE, EV_ACQUIRE_OK, EV_ENTER, EV_STORE_WRITE, EV_EXIT,
                           EV_RELEASE_INVOKE, EV_RELEASE_OK};
            int busy = rng_below(&rng, 4) == 0;
            for (int j = 0; j < 7 && !(busy && j > 1); j++) {
                struct gen_ev *e = &(*ev)[n++];
                memset(e, 0, sizeof(*e));
                e->w = w;
                e->r.t = t;
                e->r.res = (uint16_t)res;
                e->r.type = (uint8_t)(busy && j == 1 ? EV_ACQUIRE_BUSY : types[j]);
                memcpy(e->r.token, tok, sizeof(tok));
                if (j == 0)
                    e->r.aux = 1;
                if (e->r.type == EV_ACQUIRE_OK) {
                    e->r.flags = EVF_FENCE;
                    e->r.fence = (uint64_t)k + 1;
                    e->r.valid_until = t + (int64_t)rng_below(&rng, 4000);
                }
                if (e->r.type == EV_STORE_WRITE) {
                    e->r.flags = EVF_ACCEPTED;
                    e->r.value = k;
                }
                t += j == 2 ? hold : 1 + (int64_t)rng_below(&rng, 50);
            }
            t += (int64_t)rng_below(&rng, 500);
        }
    }
    return n;
}

static void jl_write(struct strbuf *sb, const struct gen_ev *e)
{
    const struct ev_rec *r = &e->r;
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\",\"res\":\"res-%u\"", (long long)r->t, e->w,
              ev_type_name(r->type), (unsigned)r->res);
    sb_puts(sb, ",\"token\":");
    sb_json_str(sb, r->token, strnlen(r->token, EVLOG_TOKEN_LEN));
    if (r->type == EV_ACQUIRE_INVOKE)
        sb_printf(sb, ",\"attempt\":%u", r->aux);
    if (r->flags & EVF_FENCE)
        sb_printf(sb, ",\"fence\":%llu", (unsigned long long)r->fence);
    if (r->type == EV_ACQUIRE_OK)
        sb_printf(sb, ",\"valid_until\":%lld", (long long)r->valid_until);
    if (r->type == EV_STORE_WRITE)
        sb_printf(sb, ",\"accepted\":true,\"counter\":%lld", (long long)r->value);
    sb_puts(sb, "}\n");
}

/* Contract: the whole result document (result_build) as text, but for
 * the history's source (a path, or "by hand"). Caller frees. */
static char *answer(struct history *h)
{
    struct check_params p;
    check_params_from(h, &p);
    free(h->source);
    h->source = xstrdup("(source)");
    struct json *res = result_build(h, NULL, &p);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, res, 1);
    json_free(res);
    return sb_steal(&sb);
}

/* Contract: the history made by hand from ev (workers in id order, each
 * stream as generated, resources named in order of first appearance in
 * the file order given by ord). */
static void by_hand(struct history *h, const struct gen_ev *ev, size_t n, int nw, int nr,
                    const size_t *ord)
{
    memset(h, 0, sizeof(*h));
    h->source = xstrdup("by hand");
    int *idx = xmalloc((size_t)nr * sizeof(int));
    for (int r = 0; r < nr; r++)
        idx[r] = -1;
    h->res_names = xcalloc((size_t)nr, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        int r = ev[ord[i]].r.res;
        if (idx[r] < 0) {
            char name[32];
            snprintf(name, sizeof(name), "res-%d", r);
            idx[r] = h->nres;
            h->res_names[h->nres++] = xstrdup(name);
        }
    }
    h->w = xcalloc((size_t)nw, sizeof(*h->w));
    for (size_t i = 0; i < n; i++) {
        const struct gen_ev *e = &ev[i];
        struct hist_worker *w = &h->w[e->w];
        if (w->n % 64 == 0)
            w->owned = xrealloc(w->owned, (w->n + 64) * sizeof(*w->owned));
        w->owned[w->n] = e->r;
        w->owned[w->n].res = (uint16_t)idx[e->r.res];
        w->owned[w->n].seq = (uint32_t)w->n;
        w->n++;
        if (e->r.t > h->end)
            h->end = e->r.t;
    }
    for (int i = 0; i < nw; i++) {
        h->w[i].id = i;
        h->w[i].ev = h->w[i].owned;
        h->w[i].complete = 1;
    }
    h->nworkers = nw;
    free(idx);
}

static void test_equivalence(void)
{
    /* in memory; spilled to a file from the start; sorted on disk; the
     * spill kept in memory ("half": a bound of half the file's size, so
     * the file spills from the start and, at most 8 times half the bound,
     * into memory; test_spill_moves has one moved to a file) */
    const char *modes[][2] = {{"", ""}, {"4096", ""}, {"4096", "2048"}, {"half", ""}};
    int spill_ways[3] = {0}; /* kept in memory, moved to a file, a file from the start */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        int nw = 3 + (int)seed, nr = 2 + (int)seed % 3;
        struct gen_ev *ev;
        /* seed 5: a file of more than one 4 MiB read (the loader's chunk),
         * lines across the reads' ends */
        size_t n = gen(seed, nw, nr, seed == 5 ? 2500 : 60, &ev);
        /* the file: workers interleaved at random; worker 1's stream reversed
         * in the file (out of order, to be sorted) */
        struct rng rng;
        rng_seed(&rng, seed * 77, 1);
        size_t *ord = xmalloc(n * sizeof(*ord));
        for (size_t i = 0; i < n; i++)
            ord[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)rng_below(&rng, i + 1), t = ord[i];
            ord[i] = ord[j];
            ord[j] = t;
        }
        /* each worker's own events keep their order except worker 1's */
        size_t *pos = xcalloc((size_t)nw, sizeof(*pos));
        size_t *start = xcalloc((size_t)nw + 1, sizeof(*start));
        for (size_t i = 0; i < n; i++)
            start[ev[i].w + 1]++;
        for (int w = 0; w < nw; w++)
            start[w + 1] += start[w];
        for (size_t i = 0; i < n; i++) {
            int w = ev[ord[i]].w;
            size_t len = start[w + 1] - start[w];
            ord[i] = w == 1 ? start[w + 1] - 1 - pos[w]++ : start[w] + pos[w]++;
            (void)len;
        }
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < n; i++)
            jl_write(&sb, &ev[ord[i]]);
        char path[4096];
        snprintf(path, sizeof(path), "%s/eq.jsonl", tmp);
        REQUIRE(write_file(path, sb.buf, sb.len) == 0);
        if (seed == 5)
            CHECKF(sb.len > (size_t)8 << 20, "%zu bytes", sb.len); /* two ends */
        struct history ref;
        by_hand(&ref, ev, n, nw, nr, ord);
        char *want = answer(&ref);
        for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
            char half[32];
            snprintf(half, sizeof(half), "%zu", sb.len / 2);
            setenv("LS_JSONL_MEM_BOUND", strcmp(modes[m][0], "half") ? modes[m][0] : half, 1);
            setenv("LS_JSONL_SORT_MEM", modes[m][1], 1);
            struct history h;
            struct ls_err err = {0, ""};
            REQUIRE(history_load_jsonl(path, &h, &err) == 0);
            CHECK_INT(h.nworkers, nw);
            int spilled = 0, packed = 0, shared = 1;
            const struct hist_spill *file = NULL;
            for (int i = 0; i < h.nworkers; i++) {
                spilled += h.w[i].file.map != NULL || h.w[i].pack != NULL;
                packed += h.w[i].pack != NULL;
                if (h.w[i].pack) { /* one file for all */
                    shared &= !file || h.w[i].pack->file == file;
                    file = h.w[i].pack->file;
                }
                struct hist_reader rd;
                hist_reader_init(&rd, &h.w[i]);
                for (size_t k = 0; k < h.w[i].n; k++)
                    CHECK_INT(hist_reader_rec(&rd, k)->seq, k);
                hist_reader_done(&rd);
            }
            /* spilled: every stream a file, those in time order (all but
             * worker 1's) read packed */
            if (m == 3) { /* a larger bound: small streams are read back (choose_kept) */
                CHECKF(packed >= 1 && packed == spilled - (h.w[1].file.map != NULL),
                       "seed %llu: %d packed, %d spilled", (unsigned long long)seed, packed,
                       spilled);
            } else {
                CHECK_INT(spilled, modes[m][0][0] ? nw : 0);
                CHECK_INT(packed, modes[m][0][0] ? nw - 1 : 0);
            }
            CHECK(shared && (!file || file->refs == packed));
            if (file) {
                size_t room = strtoul(getenv("LS_JSONL_MEM_BOUND"), NULL, 10) / 8 * 3;
                spill_ways[file->fd < 0 ? 0 : sb.len / 8 <= room ? 1 : 2]++;
                CHECKF((file->fd < 0) == (m == 3), "seed %llu mode %zu: spill fd %d",
                       (unsigned long long)seed, m, file->fd);
            }
            char *got = answer(&h);
            CHECKF(strcmp(got, want) == 0, "seed %llu mode %zu:\nwant %.600s\ngot  %.600s",
                   (unsigned long long)seed, m, want, got);
            free(got);
            history_free(&h);
        }
        unsetenv("LS_JSONL_MEM_BOUND");
        unsetenv("LS_JSONL_SORT_MEM");
        free(want);
        history_free(&ref);
        sb_free(&sb);
        free(ord);
        free(pos);
        free(start);
        free(ev);
    }
    CHECKF(spill_ways[0] == 5 && spill_ways[1] == 0 && spill_ways[2] == 10,
           "spills kept in memory %d, moved to a file %d, files from the start %d",
           spill_ways[0], spill_ways[1], spill_ways[2]);
    /* the spill directory is gone */
    CHECK(access(tmp, F_OK) == 0);
}

static void test_sorted_and_found(void)
{
    /* worker 7 written backwards, worker 2 holding r0 across worker 7's
     * hold: one overlap, found once the streams are sorted, in memory and
     * merged on disk */
    const char *text =
        "{\"t\":900,\"w\":7,\"type\":\"release_ok\",\"res\":\"r0\",\"token\":\"b\"}\n"
        "{\"t\":800,\"w\":7,\"type\":\"exit\",\"res\":\"r0\",\"token\":\"b\"}\n"
        "{\"t\":0,\"w\":2,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"a\",\"fence\":1,"
        "\"valid_until\":100}\n"
        "{\"t\":10,\"w\":2,\"type\":\"enter\",\"res\":\"r0\",\"token\":\"a\"}\n"
        "{\"t\":600,\"w\":7,\"type\":\"enter\",\"res\":\"r0\",\"token\":\"b\"}\n"
        "{\"t\":500,\"w\":7,\"type\":\"acquire_ok\",\"res\":\"r0\",\"token\":\"b\",\"fence\":2,"
        "\"valid_until\":5000}\n"
        "{\"t\":700,\"w\":2,\"type\":\"exit\",\"res\":\"r0\",\"token\":\"a\"}\n"
        "{\"t\":500,\"w\":7,\"type\":\"acquire_invoke\",\"res\":\"r0\",\"attempt\":1}\n";
    char path[4096];
    snprintf(path, sizeof(path), "%s/order.jsonl", tmp);
    REQUIRE(write_file(path, text, strlen(text)) == 0);
    const char *bounds[][2] = {{"", ""}, {"64", "128"}};
    for (size_t m = 0; m < 2; m++) {
        setenv("LS_JSONL_MEM_BOUND", bounds[m][0], 1);
        setenv("LS_JSONL_SORT_MEM", bounds[m][1], 1);
        struct history h;
        struct ls_err err = {0, ""};
        REQUIRE(history_load_jsonl(path, &h, &err) == 0);
        REQUIRE(h.nworkers == 2 && h.w[1].id == 7 && h.w[1].n == 5);
        const struct ev_rec *e = h.w[1].ev;
        /* equal times keep the file's order: acquire_ok was written first */
        CHECK(e[0].type == EV_ACQUIRE_OK && e[1].type == EV_ACQUIRE_INVOKE);
        CHECK(e[2].t == 600 && e[3].t == 800 && e[4].t == 900);
        struct check_params p;
        check_params_from(&h, &p);
        struct json *res = check_run(&h, &p);
        const struct json *v = json_path(res, "checks.mutex.violations");
        CHECKF(v && v->i == 1, "mode %zu: violations %lld", m, v ? (long long)v->i : -1);
        json_free(res);
        history_free(&h);
    }
    unsetenv("LS_JSONL_MEM_BOUND");
    unsetenv("LS_JSONL_SORT_MEM");
}

static void test_kept_small(void)
{
    /* spilled (past a 24 KB bound): the 20 small streams are read back into
     * memory (2,560 bytes, within half the bound), the big one stays
     * packed; in a spill kept in memory when the file is at most 8 times
     * its room, 3/8 of the bound (worker 0 with 600 records: 29 KB of file, no
     * descriptor open; the spill's 3 KB and the packing buffers within
     * half the bound), else in the spill file, open for the pass to read
     * (5,000 records: 228 KB; owned by the history: gone with it); no
     * other file stays open, none has a name; with LS_CHECK_READ=map (no
     * descriptor for the pass) the big one is written out whole and
     * mapped, and none stays open */
    for (int n0 = 600; n0 <= 5000; n0 += 4400) {
        struct strbuf sb = STRBUF_INIT;
        for (int i = 0; i < n0; i++)
            sb_printf(&sb, "{\"t\":%d,\"w\":0,\"type\":\"%s\",\"res\":\"r0\"}\n", i,
                      i % 2 ? "exit" : "enter");
        for (int w = 1; w <= 20; w++)
            sb_printf(&sb, "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r1\"}\n"
                      "{\"t\":%d,\"w\":%d,\"type\":\"exit\",\"res\":\"r1\"}\n",
                      n0 + 1000 + w, w, n0 + 1000 + w, w);
        char path[4096];
        snprintf(path, sizeof(path), "%s/kept.jsonl", tmp);
        REQUIRE(write_file(path, sb.buf, sb.len) == 0);
        int in_memory = sb.len / 8 <= 24576 / 8 * 3; /* its room: 3/8 of the bound */
        CHECKF(in_memory == (n0 == 600) && sb.len > 24576, "%zu bytes", sb.len);
        sb_free(&sb);
        setenv("LS_JSONL_MEM_BOUND", "24576", 1);
        int fds = t_open_fds();
        struct history h;
        struct ls_err err = {0, ""};
        REQUIRE(history_load_jsonl(path, &h, &err) == 0);
        CHECK_INT(t_open_fds(), fds + !in_memory);
        REQUIRE(h.nworkers == 21);
        CHECKF(h.w[0].pack != NULL && h.w[0].file.map == NULL && h.w[0].n == (size_t)n0,
               "worker 0 packed %p n %zu", (void *)h.w[0].pack, h.w[0].n);
        REQUIRE(h.w[0].pack != NULL);
        CHECK_INT(h.w[0].pack->file->fd < 0, in_memory);
        struct hist_reader rd;
        hist_reader_init(&rd, &h.w[0]);
        for (size_t k = 0; k < (size_t)n0; k++) {
            const struct ev_rec *r = hist_reader_rec(&rd, k);
            CHECKF(r->t == (int64_t)k && r->type == (k % 2 ? EV_EXIT : EV_ENTER) && r->seq == k,
                   "record %zu: t %lld type %d seq %u", k, (long long)r->t, r->type, r->seq);
        }
        hist_reader_done(&rd);
        CHECK(hist_last_rec(&h.w[0])->t == n0 - 1);
        int kept = 0;
        for (int i = 1; i <= 20; i++)
            kept += h.w[i].file.map == NULL && h.w[i].owned != NULL && h.w[i].n == 2 &&
                    h.w[i].ev[1].type == EV_EXIT;
        CHECK_INT(kept, 20);
        history_free(&h);
        CHECK_INT(t_open_fds(), fds);
        setenv("LS_CHECK_READ", "map", 1);
        REQUIRE(history_load_jsonl(path, &h, &err) == 0);
        CHECK_INT(t_open_fds(), fds);
        CHECK(h.w[0].file.map != NULL && !h.w[0].file.has_fd && h.w[0].pack == NULL);
        CHECK(h.w[0].n == (size_t)n0 && h.w[0].ev[n0 - 1].t == n0 - 1 &&
              h.w[0].ev[n0 - 1].seq == (uint32_t)(n0 - 1));
        history_free(&h);
        unsetenv("LS_CHECK_READ");
        unsetenv("LS_JSONL_MEM_BOUND");
    }
}

static void test_spill_moves(void)
{
    /* a spill begun in memory (the file is at most 8 times its room, 3/8
     * of the bound) whose packed bytes pass that room: lines of large,
     * random numbers pack to about a sixth of their length, not a ninth.
     * 200,000 lines (22 MB): with a bound of a third of the file the room
     * is 2.8 MB, so the spill fills one 2 MiB chunk, goes on in a second
     * and moves to a file partway (the bytes packed before included);
     * with a bound of 90% of the file it stays in memory, in two chunks.
     * Either way the check's answer is the one of the history loaded in
     * memory (no spill) */
    struct strbuf sb = STRBUF_INIT;
    struct rng r;
    rng_seed(&r, 2026, 11);
    int64_t t[2] = {0};
    for (int i = 0; i < 200000; i++) {
        int w = (int)rng_below(&r, 2);
        t[w] += 1 + (int64_t)rng_below(&r, 1000000000000LL);
        sb_printf(&sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\",\"res\":\"r%d\",\"fence\":%llu,"
                  "\"valid_until\":%llu}\n", (long long)t[w], w,
                  i % 3 == 0 ? "acquire_ok" : i % 3 == 1 ? "enter" : "exit", (int)rng_below(&r, 3),
                  (unsigned long long)rng_below(&r, 100000000000000000ULL),
                  (unsigned long long)rng_below(&r, 100000000000000000ULL));
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/moves.jsonl", tmp);
    REQUIRE(write_file(path, sb.buf, sb.len) == 0);
    struct history h;
    struct ls_err err = {0, ""};
    int lrc = history_load_jsonl(path, &h, &err);
    CHECKF(lrc == 0, "%s", err.msg);
    REQUIRE(lrc == 0);
    REQUIRE(h.w[0].pack == NULL && h.w[1].pack == NULL); /* 12.8 MB of records: no spill */
    char *want = answer(&h);
    history_free(&h);
    for (int kept = 0; kept <= 1; kept++) {
        size_t bound = kept ? sb.len / 10 * 9 : sb.len / 3 + 64;
        REQUIRE(sb.len > bound && sb.len / 8 <= bound / 8 * 3); /* spilled, in memory first */
        char text[32];
        snprintf(text, sizeof(text), "%zu", bound);
        setenv("LS_JSONL_MEM_BOUND", text, 1);
        REQUIRE(history_load_jsonl(path, &h, &err) == 0);
        REQUIRE(h.nworkers == 2 && h.w[0].pack && h.w[1].pack);
        const struct hist_spill *f = h.w[0].pack->file;
        CHECK(h.w[1].pack->file == f);
        if (kept)
            CHECKF(f->fd < 0 && f->nmem == 2 && f->chunk == HIST_SPILL_CHUNK,
                   "bound %zu: fd %d, %zu chunks", bound, f->fd, f->nmem);
        else /* moved: its memory let go */
            CHECKF(f->fd >= 0 && f->nmem == 0, "bound %zu: fd %d, %zu chunks", bound, f->fd,
                   f->nmem);
        char *got = answer(&h);
        CHECKF(strcmp(got, want) == 0, "bound %zu:\nwant %.600s\ngot  %.600s", bound, want, got);
        free(got);
        history_free(&h);
    }
    unsetenv("LS_JSONL_MEM_BOUND");
    free(want);
    sb_free(&sb);
}

int main(void)
{
    char tmpl[] = "/tmp/ls-test-jsonl-XXXXXX";
    tmp = mkdtemp(tmpl);
    if (!tmp)
        return 1;
    setenv("TMPDIR", tmp, 1); /* spill directories go here, and must be gone after */
    RUN(test_flat_fields);
    RUN(test_compact_path);
    RUN(test_flat_leaves);
    RUN(test_random_lines);
    RUN(test_shaped_lines);
    RUN(test_shape_edges);
    RUN(test_roomy_edge);
    RUN(test_malformed);
    RUN(test_equivalence);
    RUN(test_sorted_and_found);
    RUN(test_kept_small);
    RUN(test_spill_moves);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "ls -A %s | grep -c lockstorm-history", tmp);
    FILE *f = popen(cmd, "r");
    int left = -1;
    if (f && fscanf(f, "%d", &left) != 1)
        left = -1;
    if (f)
        pclose(f);
    t_current = "no spill directory left";
    CHECK_INT(left, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return t_finish();
}
