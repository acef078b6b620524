/*
 * naive.h: what the negative-control locks share. They are wrong on
 * purpose, each in one way; where two are wrong the same way (release by an
 * unconditional DEL) the wrong code exists once, here.
 */
#ifndef LS_LOCKS_NAIVE_H
#define LS_LOCKS_NAIVE_H

#include "locks/lock.h"

/* Contract: release by a plain DEL of the grant's key, whoever holds it now
 * (the stolen-lock bug). lk's ctx is a struct rsingle (redis_conn.h).
 * Returns a LOCK_* outcome; *err_kind set on failure. */
int naive_release_del(struct lock *lk, const struct grant *g, int *err_kind);

#endif
