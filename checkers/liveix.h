/*
 * liveix.h: a list of grants in time order (a resource's live grants in
 * the mutex checker, checkers/mutex.c rstate.live: appended as they are
 * made, some gone later, closed up now and then) by position: each one's
 * grant instant, and whether it was still live at an instant, counted
 * over a range of positions in log n (a Fenwick tree). A renewal after
 * loss counts the live grants made while the renewer's lease had run out
 * (docs/checkers.md "Renewed after loss"): with the instants in order,
 * those of one stretch of the lease are a range of positions, found by
 * binary search, where a walk over the whole list for every renewal took
 * the square of the grants when they were never released (100,000 grants:
 * 1.6 s).
 *
 * A grant gone at `end` is live at any instant up to end and not after:
 * it is counted out at the first question asked at a later instant. The
 * instants given (grants, questions) must not go back in time: when one
 * does, the index says so (bad) and its answers no longer hold.
 */
#ifndef LS_LIVEIX_H
#define LS_LIVEIX_H

#include <stdint.h>

struct liveix_gone {
    int pos;
    int64_t end;
};

struct liveix {
    int64_t *at;                /* per position: its grant instant */
    int32_t *fw;                /* a Fenwick tree over positions, 1-based: 1 live, 0 gone */
    int n, cap;
    struct liveix_gone *pend;   /* gone, still counted as live (their end not yet passed) */
    int npend, pend_cap;
    int64_t pend_min;           /* the earliest end of pend */
    int64_t last_t;             /* the latest instant asked about */
    int bad;                    /* an instant went back in time */
};

/* Contract: a new index, empty (liveix_free frees it; NULL: nothing). */
struct liveix *liveix_new(void);
void liveix_free(struct liveix *ix);

/* Contract: ix empty again (no position, nothing gone, no instant asked). */
void liveix_clear(struct liveix *ix);

/* Contract: a new last position, a grant made at instant at, live. */
void liveix_push(struct liveix *ix, int64_t at);

/* Contract: position pos gone at instant end (live up to end). */
void liveix_gone(struct liveix *ix, int pos, int64_t end);

/* Contract: the answers below are for instant t from here on; 0 (and bad
 * set) when t is before an instant asked about earlier. */
int liveix_at(struct liveix *ix, int64_t t);

/* Contract: the first position granted at or after t (lower) / after t
 * (upper); n none. */
int liveix_lower(const struct liveix *ix, int64_t t);
int liveix_upper(const struct liveix *ix, int64_t t);

/* Contract: the positions in [lo, hi) live at the instant of liveix_at. */
int liveix_count(const struct liveix *ix, int lo, int hi);

/* Contract: the first position at or after lo live at the instant of
 * liveix_at; n none. */
int liveix_next(const struct liveix *ix, int lo);

#endif
