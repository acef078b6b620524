/*
 * test_stsort.c: stable_sort (util/stsort.c) against a plain stable
 * reference (insertion of each element after every one not greater) on
 * random arrays: every length around the run size and its doublings,
 * keys with many ties, elements of several sizes; and a large array of
 * few keys, sorted in n log n (the insertion sort it replaced took
 * minutes on this one).
 */
#include "util/stsort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "util/rng.h"
#include "util/xalloc.h"

struct el {
    uint32_t key, idx; /* idx: its place before the sort */
    char pad[24];
};

static int by_key(const void *a, const void *b)
{
    const struct el *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static int by_byte(const void *a, const void *b)
{
    return (*(const unsigned char *)a > *(const unsigned char *)b) -
           (*(const unsigned char *)a < *(const unsigned char *)b);
}

/* Contract: the reference: a[0..n) stably sorted by key into out. */
static void reference(const struct el *a, size_t n, struct el *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = m;
        while (j > 0 && out[j - 1].key > a[i].key)
            j--;
        memmove(out + j + 1, out + j, (m - j) * sizeof(*out));
        out[j] = a[i];
        m++;
    }
}

static void test_random(void)
{
    struct rng g;
    rng_seed(&g, t_env_u64("LS_TEST_SEED", 16), 0);
    size_t lens[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4097};
    int bad = 0;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]) && bad < 5; li++)
        for (int round = 0; round < 20 && bad < 5; round++) {
            size_t n = lens[li];
            uint32_t keys = 1 + (uint32_t)rng_below(&g, round % 2 ? 4 : 1000); /* ties, or few */
            struct el *a = xmalloc((n ? n : 1) * sizeof(*a));
            struct el *want = xmalloc((n ? n : 1) * sizeof(*a));
            for (size_t i = 0; i < n; i++) {
                memset(&a[i], 0, sizeof(a[i]));
                a[i].key = (uint32_t)rng_below(&g, keys);
                a[i].idx = (uint32_t)i;
            }
            reference(a, n, want);
            stable_sort(a, n, sizeof(*a), by_key);
            int ok = n == 0 || memcmp(a, want, n * sizeof(*a)) == 0;
            CHECKF(ok, "n %zu keys %u round %d", n, keys, round);
            bad += !ok;
            free(a);
            free(want);
        }
    /* one-byte elements (no tie is visible: the sort is checked by order) */
    unsigned char b[300];
    for (size_t i = 0; i < sizeof(b); i++)
        b[i] = (unsigned char)rng_below(&g, 256);
    stable_sort(b, sizeof(b), 1, by_byte);
    int sorted = 1;
    for (size_t i = 1; i < sizeof(b); i++)
        sorted &= b[i - 1] <= b[i];
    CHECK(sorted);
}

static void test_large(void)
{
    /* 400,000 elements of 3 keys, in the worst order for an insertion
     * sort (keys descending): stable, and done (n log n: milliseconds) */
    size_t n = 400000;
    struct el *a = xcalloc(n, sizeof(*a));
    for (size_t i = 0; i < n; i++) {
        a[i].key = (uint32_t)(2 - i * 3 / n);
        a[i].idx = (uint32_t)i;
    }
    stable_sort(a, n, sizeof(*a), by_key);
    int ok = 1;
    for (size_t i = 1; i < n; i++)
        ok &= a[i - 1].key < a[i].key || (a[i - 1].key == a[i].key && a[i - 1].idx < a[i].idx);
    CHECK(ok);
    free(a);
}

int main(void)
{
    RUN(test_random);
    RUN(test_large);
    return t_finish();
}
