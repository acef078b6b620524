/*
 * test_keyslots.c: util/keyslots.c against a plain array of keys on random
 * sequences of appends and swap-removes (few keys, many keys, keys that
 * collide in small tables, lists of one key emptied and filled again):
 * after every step each key's list is exactly the positions holding it,
 * linked both ways, sorted on demand, and a key no position holds has none.
 */
#include "util/keyslots.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "util/rng.h"

#define MAXN 3000

/* Contract: 0 when ks agrees with keys[0, n) for every key in probe[]. */
static int agree(const struct keyslots *ks, const uint16_t *keys, int n, const uint16_t *probe,
                 int np)
{
    static unsigned char seen[MAXN];
    for (int q = 0; q < np; q++) {
        uint16_t k = probe[q];
        int want = 0;
        for (int i = 0; i < n; i++)
            want += keys[i] == k;
        memset(seen, 0, (size_t)n);
        int got = 0, prev = -1;
        for (int p = keyslots_head(ks, k); p >= 0; p = ks->nx[p]) {
            if (p >= n || keys[p] != k || seen[p] || ks->pv[p] != prev || got > n)
                return -1;
            seen[p] = 1;
            got++;
            prev = p;
        }
        if (got != want)
            return -1;
        /* in ascending order, or -1 past a bound */
        static int *buf;
        static int cap;
        int ns = keyslots_sorted(ks, k, n + 1, &buf, &cap);
        if (ns != want)
            return -1;
        for (int i = 0, j = 0; i < n; i++)
            if (keys[i] == k && buf[j++] != i)
                return -1;
        if (want > 0 && keyslots_sorted(ks, k, want - 1, &buf, &cap) != -1)
            return -1;
    }
    return 0;
}

static void test_random(void)
{
    struct rng g;
    rng_seed(&g, t_env_u64("LS_TEST_SEED", 23), 0);
    static uint16_t keys[MAXN];
    int bad = 0;
    for (int round = 0; round < 200 && !bad; round++) {
        struct keyslots ks;
        keyslots_init(&ks);
        int nkeys = round % 4 == 0 ? 2 : round % 4 == 1 ? 40 : round % 4 == 2 ? 2000 : 65536;
        int n = 0, steps = 100 + (int)rng_below(&g, 4000);
        for (int st = 0; st < steps && !bad; st++) {
            int op = (int)rng_below(&g, 10);
            if ((op < 5 || n == 0) && n < MAXN) {
                uint16_t k = (uint16_t)rng_below(&g, (uint64_t)nkeys);
                keys[n] = k;
                keyslots_add(&ks, n++, k);
            } else if (op < 9) {
                int pos = (int)rng_below(&g, (uint64_t)n);
                keyslots_del(&ks, pos, n - 1);
                keys[pos] = keys[n - 1];
                n--;
            } else {
                while (n > 0) { /* all of them, from the end (a crash) */
                    keyslots_del(&ks, n - 1, n - 1);
                    n--;
                }
            }
            uint16_t probe[8];
            for (int q = 0; q < 8; q++)
                probe[q] = q < 4 && n ? keys[rng_below(&g, (uint64_t)n)]
                                      : (uint16_t)rng_below(&g, (uint64_t)nkeys);
            if (agree(&ks, keys, n, probe, 8) != 0) {
                bad = 1;
                CHECKF(0, "round %d step %d: the index disagrees with the array", round, st);
            }
        }
        CHECK(bad || ks.keys == 0 || n > 0);
        keyslots_free(&ks);
    }
    CHECK(!bad);
}

/* Every one of 65,536 keys at once, then removed in a shuffled order. */
static void test_all_keys(void)
{
    struct keyslots ks;
    keyslots_init(&ks);
    static uint16_t keys[65536];
    for (int i = 0; i < 65536; i++) {
        keys[i] = (uint16_t)(65535 - i);
        keyslots_add(&ks, i, keys[i]);
    }
    CHECK_INT(ks.keys, 65536);
    int ok = 1;
    for (int i = 0; i < 65536 && ok; i += 97)
        ok = keyslots_head(&ks, keys[i]) == i && ks.nx[i] == -1;
    CHECK(ok);
    struct rng g;
    rng_seed(&g, 5, 0);
    int n = 65536;
    while (n > 0 && ok) {
        int pos = (int)rng_below(&g, (uint64_t)n);
        uint16_t gone = keys[pos];
        keyslots_del(&ks, pos, n - 1);
        keys[pos] = keys[n - 1];
        n--;
        ok = keyslots_head(&ks, gone) == -1 && (n == 0 || pos == n || keyslots_head(&ks, keys[pos]) == pos);
    }
    CHECK(ok);
    CHECK_INT(ks.keys, 0);
    keyslots_free(&ks);
}

int main(void)
{
    RUN(test_random);
    RUN(test_all_keys);
    return t_finish();
}
