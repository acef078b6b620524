/*
 * keyslots.c: positions of an array by a 16-bit key (keyslots.h).
 */
#include "util/keyslots.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void keyslots_init(struct keyslots *ks)
{
    memset(ks, 0, sizeof(*ks));
}

void keyslots_free(struct keyslots *ks)
{
    free(ks->nx);
    free(ks->pv);
    free(ks->key);
    free(ks->tab);
    keyslots_init(ks);
}

/* Contract: the table slot that holds key's first position, or the empty
 * slot where it would go. */
static uint32_t slot_of(const struct keyslots *ks, uint16_t key)
{
    uint32_t mask = (1u << ks->bits) - 1;
    uint32_t i = keyslots_hash(key, ks->bits);
    while (ks->tab[i] >= 0 && ks->key[ks->tab[i]] != key)
        i = (i + 1) & mask;
    return i;
}

/* Contract: a table of 2^bits entries with every list's first position. */
static void rehash(struct keyslots *ks, int bits)
{
    int *old = ks->tab;
    int oldn = old ? 1 << ks->bits : 0;
    ks->bits = bits;
    ks->tab = xmalloc(((size_t)1 << bits) * sizeof(*ks->tab));
    memset(ks->tab, 0xff, ((size_t)1 << bits) * sizeof(*ks->tab));
    for (int i = 0; i < oldn; i++)
        if (old[i] >= 0)
            ks->tab[slot_of(ks, ks->key[old[i]])] = old[i];
    free(old);
}

/* Contract: slot i emptied, the entries after it in its probe run moved
 * back where a lookup still finds them (no tombstones). */
static void tab_remove(struct keyslots *ks, uint32_t i)
{
    uint32_t mask = (1u << ks->bits) - 1;
    ks->tab[i] = -1;
    for (uint32_t j = (i + 1) & mask; ks->tab[j] >= 0; j = (j + 1) & mask) {
        uint32_t home = keyslots_hash(ks->key[ks->tab[j]], ks->bits);
        /* j's entry may move to i when i lies on its probe path: home..j */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            ks->tab[i] = ks->tab[j];
            ks->tab[j] = -1;
            i = j;
        }
    }
}

void keyslots_add(struct keyslots *ks, int pos, uint16_t key)
{
    if (pos >= ks->cap) {
        int cap = ks->cap ? ks->cap : 16;
        while (cap <= pos)
            cap *= 2;
        ks->nx = xrealloc(ks->nx, (size_t)cap * sizeof(*ks->nx));
        ks->pv = xrealloc(ks->pv, (size_t)cap * sizeof(*ks->pv));
        ks->key = xrealloc(ks->key, (size_t)cap * sizeof(*ks->key));
        ks->cap = cap;
    }
    if (!ks->tab || 2 * (ks->keys + 1) > 1 << ks->bits)
        rehash(ks, ks->tab ? ks->bits + 1 : 4);
    ks->key[pos] = key;
    ks->pv[pos] = -1;
    uint32_t i = slot_of(ks, key);
    ks->nx[pos] = ks->tab[i];
    if (ks->tab[i] >= 0)
        ks->pv[ks->tab[i]] = pos;
    else
        ks->keys++;
    ks->tab[i] = pos;
}

/* Contract: pos out of its key's list (its table entry too when it was the
 * list's only element; the next one becomes the first when it was first). */
static void unlink_pos(struct keyslots *ks, int pos)
{
    int nx = ks->nx[pos], pv = ks->pv[pos];
    if (pv >= 0) {
        ks->nx[pv] = nx;
    } else {
        uint32_t i = slot_of(ks, ks->key[pos]);
        if (nx >= 0) {
            ks->tab[i] = nx;
        } else {
            tab_remove(ks, i);
            ks->keys--;
        }
    }
    if (nx >= 0)
        ks->pv[nx] = pv;
}

void keyslots_del(struct keyslots *ks, int pos, int last)
{
    unlink_pos(ks, pos);
    if (last == pos)
        return;
    /* the element at last moves to pos: its neighbours (or its table
     * entry) point there now */
    int nx = ks->nx[last], pv = ks->pv[last];
    ks->key[pos] = ks->key[last];
    ks->nx[pos] = nx;
    ks->pv[pos] = pv;
    if (pv >= 0)
        ks->nx[pv] = pos;
    else
        ks->tab[slot_of(ks, ks->key[pos])] = pos;
    if (nx >= 0)
        ks->pv[nx] = pos;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int keyslots_sorted(const struct keyslots *ks, uint16_t key, int max, int **buf, int *cap)
{
    int n = 0;
    for (int p = keyslots_head(ks, key); p >= 0; p = ks->nx[p]) {
        if (n == max)
            return -1;
        if (n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            *buf = xrealloc(*buf, (size_t)*cap * sizeof(**buf));
        }
        (*buf)[n++] = p;
    }
    if (n > 1)
        qsort(*buf, (size_t)n, sizeof(**buf), by_int);
    return n;
}
