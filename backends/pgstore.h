/*
 * pgstore.h: the protected resource of `cluster.topology: postgres`, as a
 * table in the same database as the advisory locks (reference article 05:
 * "it composes naturally with the actual database work you're doing,
 * because it lives in the same transaction"). Same two counters and the
 * same fencing rule as the Redis storage node (backends/storage.h), same
 * storage.jsonl for the checkers. A worker's op runs on its own
 * connection (autocommit: lock mode session), or inside the transaction
 * that holds the grant (mode xact), so that it commits or rolls back with
 * the lock. The storage connection goes to the server directly, never
 * through the fault proxy.
 */
#ifndef LS_PGSTORE_H
#define LS_PGSTORE_H

#include "locks/pq.h" /* libpq, loaded at the first connection */
#include <stdint.h>

#include "backends/storage.h"
#include "util/err.h"

struct pgstore;

/* Connect (worker side). Caller frees with pgstore_close. */
int pgstore_open(struct pgstore **out, const char *host, int port, int64_t timeout_ns,
                 struct ls_err *err);
void pgstore_close(struct pgstore *s);

/* As storage_read / storage_write; txn, when not NULL, is the connection
 * whose open transaction holds the grant (borrowed: never closed here);
 * otherwise s's own connection is used. */
void pgstore_read(struct pgstore *s, PGconn *txn, int res, int has_fence, uint64_t fence,
                  struct store_op *plain, struct store_op *fenced);
void pgstore_write(struct pgstore *s, PGconn *txn, int res, int64_t pval, int do_fenced,
                   uint64_t fence, int64_t fval, struct store_op *plain, struct store_op *fenced);

/* The worker-side table of the above (backends/backend.h struct store_ops):
 * password ignored (the server trusts loopback); the grant's transaction is
 * taken from the pg-advisory lock instance (locks/pg_advisory.h). */
struct store_ops;
extern const struct store_ops store_pg;

/* Harness side: create the table with nres rows (all zero). */
int pgstore_setup(const char *host, int port, int nres, struct ls_err *err);
/* Harness side: storage.jsonl from the table, in storage_dump's format. */
int pgstore_dump(const char *host, int port, int nres, int fencing, const char *path,
                 struct ls_err *err);

#endif
