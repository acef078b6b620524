/*
 * sufcount.h: counters kept in the order they were made, each with two
 * levels, lowered one at a time over a suffix (every counter made since a
 * given one), and taken as each reaches zero at a level: in log n per
 * lowering and per counter taken, whatever their number. The mutex
 * checker's violations past the listed ones count down their holds this
 * way (checkers/mutex.c "unlisted"): a hold that ends is one of every
 * such violation made since it entered, and a walk over them for every
 * end took the square of their number when holds never end (2,000
 * workers entering 40 times each without an exit: 1.3 s, 60,000: hours).
 */
#ifndef LS_SUFCOUNT_H
#define LS_SUFCOUNT_H

#include <stdint.h>

struct sufcount {
    int n, cap;                 /* counters made (and not closed up), leaves (a power of two) */
    int32_t *mn[2];             /* per node, per level: the least value below it not taken
                                   (INT32_MAX: none) */
    int32_t *lz;                /* per node: what its children have still to be lowered by */
};

/* Contract: an empty set (zeroed memory is one too). */
void sufcount_init(struct sufcount *c);
void sufcount_free(struct sufcount *c);

/* Contract: a new counter, the last, with values a (level 0) and b (level
 * 1), each above 0; returns its index (n before). */
int sufcount_push(struct sufcount *c, int32_t a, int32_t b);

/* Contract: every counter from index from on lowered by 1 at both levels. */
void sufcount_lower(struct sufcount *c, int from);

/* Contract: the indexes of the counters whose value at level lv is 0 or
 * less and were not taken at that level yet, up to max of them into out
 * (in index order), each then taken at lv; returns how many. */
int sufcount_take(struct sufcount *c, int lv, int *out, int max);

/* Contract: the counters taken at level 0 removed, the others kept in
 * their order with their values (indexes change: as the caller's array
 * closes up the same entries). */
void sufcount_close_up(struct sufcount *c);

#endif
