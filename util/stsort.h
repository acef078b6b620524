/*
 * stsort.h: a stable sort (qsort's is not), in n log n whatever the input:
 * for the checkers' batches of records at one instant, one or two most of
 * the time, and in a history with a coarse clock tens of thousands, where
 * the insertion sort they used took the square of that (4.8 s for 840,000
 * events at one instant).
 */
#ifndef LS_STSORT_H
#define LS_STSORT_H

#include <stddef.h>

/* Contract: base[0..n), elements of size bytes, sorted by cmp (qsort's
 * contract); elements cmp calls equal keep their order. Up to 16 elements
 * by insertion, more by merging runs through a buffer of n elements. */
void stable_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
