/*
 * stsort.c: stable_sort (stsort.h): insertion sort of runs of 16, then
 * merges of runs bottom-up between the array and a buffer.
 */
#include "util/stsort.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define RUN 16

/* Contract: a[0..n) sorted by insertion (stable); tmp holds one element. */
static void insertion(char *a, size_t n, size_t size, int (*cmp)(const void *, const void *),
                      char *tmp)
{
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        if (cmp(a + (j - 1) * size, a + j * size) <= 0)
            continue;
        memcpy(tmp, a + i * size, size);
        for (; j > 0 && cmp(a + (j - 1) * size, tmp) > 0; j--)
            memcpy(a + j * size, a + (j - 1) * size, size);
        memcpy(a + j * size, tmp, size);
    }
}

void stable_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2 || size == 0)
        return;
    char one[256];
    char *tmp = size <= sizeof(one) ? one : xmalloc(size);
    char *a = base;
    for (size_t lo = 0; lo < n; lo += RUN)
        insertion(a + lo * size, n - lo < RUN ? n - lo : RUN, size, cmp, tmp);
    if (tmp != one)
        free(tmp);
    if (n <= RUN)
        return;
    char *buf = xmalloc(n * size), *src = a, *dst = buf;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) /* the left run's first on a tie: stable */
                if (cmp(src + j * size, src + i * size) < 0)
                    memcpy(dst + k++ * size, src + j++ * size, size);
                else
                    memcpy(dst + k++ * size, src + i++ * size, size);
            memcpy(dst + k * size, src + i * size, (mid - i) * size);
            k += mid - i;
            memcpy(dst + k * size, src + j * size, (hi - j) * size);
        }
        char *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * size);
    free(buf);
}
