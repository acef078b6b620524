/*
 * keyslots.h: which positions of an array hold elements of a given 16-bit
 * key (a resource), for arrays that grow at their end and lose an element
 * by moving their last one into its place. A worker's open grants are
 * such arrays (checkers/mutex.c, the timeline's pairing in
 * checkers/series.c), each record of the worker searching them for its
 * resource: with thousands of resources held at once by one worker (a
 * foreign history's batch job, locks never released) every search walked
 * them all, the square of their number in all (40,000: 0.85 s, 65,536 held
 * and 10^6 records: hours). With the index a search reads the positions
 * of its key only: a list per key, linked through per-position arrays, its
 * first position found by hashing the key.
 *
 * The positions of a list are in no order: a caller that wants the first
 * or the last position of a key satisfying something reads the whole list
 * (one element, or a few: the grants of one resource one worker holds at
 * once).
 */
#ifndef LS_KEYSLOTS_H
#define LS_KEYSLOTS_H

#include <stdint.h>

struct keyslots {
    int *nx, *pv;               /* per position: the next / previous position of its key,
                                   -1 none */
    uint16_t *key;              /* per position */
    int cap;                    /* positions the three arrays have room for */
    int *tab;                   /* 2^bits entries: the first position of a key's list, -1
                                   empty (linear probing) */
    int bits, keys;             /* keys with a list */
};

/* Contract: an empty index (zeroed memory is one too). */
void keyslots_init(struct keyslots *ks);
void keyslots_free(struct keyslots *ks);

/* Contract: position pos (one not in the index) now holds an element of
 * key. */
void keyslots_add(struct keyslots *ks, int pos, uint16_t key);

/* Contract: the element at pos leaves; the one at last (the array's last
 * position, >= pos) moves to pos when last != pos. */
void keyslots_del(struct keyslots *ks, int pos, int last);

/* The slot of key in a table of 2^bits (1..31) entries. */
static inline uint32_t keyslots_hash(uint16_t key, int bits)
{
    return ((uint32_t)key * 0x9e3779b1u) >> (32 - bits);
}

/* Contract: a position of key's list, -1 when no element has key; the
 * others follow through ks->nx. */
static inline int keyslots_head(const struct keyslots *ks, uint16_t key)
{
    if (!ks->tab)
        return -1;
    uint32_t mask = (1u << ks->bits) - 1;
    for (uint32_t i = keyslots_hash(key, ks->bits);; i = (i + 1) & mask) {
        int p = ks->tab[i];
        if (p < 0 || ks->key[p] == key)
            return p;
    }
}

/* Contract: the positions of key's list in ascending order into *buf
 * (grown as needed; *cap its room); their number, or -1 when they are more
 * than max (sorting them would cost more than the caller's walk over its
 * array, which meets them in that order). */
int keyslots_sorted(const struct keyslots *ks, uint16_t key, int max, int **buf, int *cap);

#endif
