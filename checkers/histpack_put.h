/*
 * histpack_put.h: a record packed (the format: checkers/histpack.c), for
 * histpack.c and the JSONL loader, which packs each record as it comes
 * (checkers/histjsonl.c). Not for checkers.
 */
#ifndef LS_HISTPACK_PUT_H
#define LS_HISTPACK_PUT_H

#include <stdint.h>
#include <string.h>

#include "checkers/histpack.h"
#include "util/xalloc.h"

/* A record's header: which fields follow, and how (histpack.c). */
enum {
    HP_RES = 1,
    HP_FENCE = 2,
    HP_VALID = 4,
    HP_VALUE = 8,
    HP_TOKEN = 16,
    HP_AUX = 32,
    HP_SEQ = 64,
    HP_CRC = 128,
    HP_TNEG = 256,
    HP_FSAME = 512,
    HP_VNEG = 1024,
    HP_XSAME = 2048,
    HP_ALL = 4095
};

#define HP_DICT_SHIFT 23 /* 32 - log2(HIST_DICT_SLOTS) */
_Static_assert(HIST_DICT_SLOTS == 1 << (32 - HP_DICT_SHIFT), "the dictionary's hash");

/* Contract: d as zigzag (0, -1, 1, -2 ... as 0, 1, 2, 3 ...). */
static inline uint64_t hp_zig(uint64_t d)
{
    return (d << 1) ^ ((uint64_t)0 - (d >> 63));
}

/* Contract: v as a varint at o (1 to 10 bytes); the byte after it. */
static inline unsigned char *hp_put_v(unsigned char *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

/* Contract: how many first bytes a and b (EVLOG_TOKEN_LEN each) share. */
static inline unsigned hp_shared(const char *a, const char *b)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && EVLOG_TOKEN_LEN == 16
    uint64_t a0, a1, b0, b1;
    memcpy(&a0, a, 8);
    memcpy(&a1, a + 8, 8);
    memcpy(&b0, b, 8);
    memcpy(&b1, b + 8, 8);
    if (a0 != b0)
        return (unsigned)__builtin_ctzll(a0 ^ b0) / 8;
    return a1 != b1 ? 8 + (unsigned)__builtin_ctzll(a1 ^ b1) / 8 : 16;
#else
    unsigned n = 0;
    while (n < EVLOG_TOKEN_LEN && a[n] == b[n])
        n++;
    return n;
#endif
}

/* Contract: the code of header key in d (given now when it is new and a
 * code is left); HIST_DICT_CODES for none (d NULL, or every code given).
 * At most 255 of the 512 slots are taken: the probe ends. */
static inline unsigned hp_dict_code(struct hist_dict *d, uint32_t key)
{
    if (!d)
        return HIST_DICT_CODES;
    for (unsigned h = (key * 0x9e3779b1u) >> HP_DICT_SHIFT;; h = (h + 1) & (HIST_DICT_SLOTS - 1)) {
        unsigned c = d->scode[h];
        if (c == 255) {
            if (d->n == HIST_DICT_CODES)
                return HIST_DICT_CODES;
            d->key[d->n] = key;
            d->skey[h] = key;
            d->scode[h] = (unsigned char)d->n;
            return (unsigned)d->n++;
        }
        if (d->skey[h] == key)
            return c;
    }
}

/* Contract: the length of tok up to its last byte that is not 0 (0..16). */
static inline unsigned hp_token_len(const char *tok)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && EVLOG_TOKEN_LEN == 16
    uint64_t a, b;
    memcpy(&a, tok, 8);
    memcpy(&b, tok + 8, 8);
    if (b)
        return 16 - (unsigned)__builtin_clzll(b) / 8;
    return a ? 8 - (unsigned)__builtin_clzll(a) / 8 : 0;
#else
    unsigned n = EVLOG_TOKEN_LEN;
    while (n && !tok[n - 1])
        n--;
    return n;
#endif
}

/* Contract: x packed after the records so far into out (room for
 * HIST_PACK_MAX_REC bytes); returns the bytes written. Inline: the JSONL
 * loader packs each record as it comes, and as a call it took 151
 * instructions a record instead of 131 (the registers a function of this
 * size saves and restores). */
static inline __attribute__((always_inline)) size_t hist_pack_put_rec(struct hist_packer *pk,
                                                                       const struct ev_rec *x,
                                                                       unsigned char *out)
{
    unsigned char *o = out;
    if (pk->n % HIST_PACK_BLOCK == 0) {
        if (pk->nat == pk->capat) {
            /* 4 at first: with many workers most streams have few blocks */
            pk->capat = pk->capat ? pk->capat * 2 : 4;
            pk->at = xrealloc(pk->at, pk->capat * sizeof(*pk->at));
        }
        pk->at[pk->nat++] = pk->bytes;
        memset(&pk->prev, 0, sizeof(pk->prev));
    }
    struct hist_pack_prev *pv = &pk->prev;
    unsigned m = 0;
    uint64_t dt = (uint64_t)x->t - (uint64_t)pv->t, df = 0, dv = 0, dx = 0;
    if ((int64_t)dt < 0) {
        m |= HP_TNEG;
        dt = 0 - dt;
    }
    if (x->res != pv->res)
        m |= HP_RES;
    if (x->fence) {
        if (x->fence == pv->fence) {
            m |= HP_FSAME;
        } else {
            m |= HP_FENCE;
            df = hp_zig(x->fence - pv->fence);
            pv->fence = x->fence;
        }
    }
    if (x->valid_until) {
        m |= HP_VALID;
        dv = (uint64_t)x->valid_until - (uint64_t)x->t;
        if ((int64_t)dv < 0) {
            m |= HP_VNEG;
            dv = 0 - dv;
        }
    }
    if (x->value) {
        if (x->value == pv->value) {
            m |= HP_XSAME;
        } else {
            m |= HP_VALUE;
            dx = hp_zig((uint64_t)x->value - (uint64_t)pv->value);
            pv->value = x->value;
        }
    }
    unsigned tl = hp_token_len(x->token);
    m |= (tl ? HP_TOKEN : 0) | (x->aux ? HP_AUX : 0) | (x->seq != pk->n ? HP_SEQ : 0) |
         (x->crc ? HP_CRC : 0);
    uint32_t key = m | (uint32_t)x->type << 16 | (uint32_t)x->flags << 24;
    unsigned code = hp_dict_code(pk->dict, key);
    *o++ = (unsigned char)code;
    if (code == HIST_DICT_CODES) {
        o[0] = (unsigned char)m;
        o[1] = (unsigned char)(m >> 8);
        o[2] = x->type;
        o[3] = x->flags;
        o += 4;
    }
    o = hp_put_v(o, dt);
    pv->t = x->t;
    if (m & HP_RES) {
        o = hp_put_v(o, x->res);
        pv->res = x->res;
    }
    if (m & HP_FENCE)
        o = hp_put_v(o, df);
    if (m & HP_VALID)
        o = hp_put_v(o, dv);
    if (m & HP_VALUE)
        o = hp_put_v(o, dx);
    if (tl) {
        unsigned k = hp_shared(x->token, pv->token);
        k = k > 14 ? 14 : k; /* then at most tl: a repeated token of 15 bytes
                              * shares 16, and 15 * 17 + 15 is past a byte */
        k = k > tl ? tl : k;
        *o++ = (unsigned char)(k * 17 + tl);
        char tb[2 * EVLOG_TOKEN_LEN] = {0}; /* 16 bytes copied whatever tl - k is */
        memcpy(tb, x->token, EVLOG_TOKEN_LEN);
        memcpy(o, tb + k, EVLOG_TOKEN_LEN);
        o += tl - k;
        memcpy(pv->token, x->token, sizeof(pv->token));
    }
    if (x->aux)
        o = hp_put_v(o, x->aux);
    if (m & HP_SEQ)
        o = hp_put_v(o, x->seq);
    if (x->crc) {
        memcpy(o, &x->crc, 4);
        o += 4;
    }
    pk->n++;
    pk->bytes += (uint64_t)(o - out);
    return (size_t)(o - out);
}

#endif
