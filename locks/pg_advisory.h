/*
 * pg_advisory.h: what the worker needs to know of the pg-advisory lock
 * beyond its ops table: in mode xact the grant is a transaction, and the
 * hold's work (the protected-resource ops on PostgreSQL, backends/pgstore.h)
 * runs inside it, committing or rolling back with the lock.
 */
#ifndef LS_PG_ADVISORY_H
#define LS_PG_ADVISORY_H

#include "locks/pq.h" /* libpq, loaded at the first connection */

struct lock;
extern const struct lock_ops lock_pg_advisory;

/* The connection whose open transaction holds lk's current grant (mode
 * xact, between a granted acquire and its release), else NULL. Borrowed
 * from lk; the caller must not close it. */
PGconn *pg_advisory_txn(struct lock *lk);

#endif
