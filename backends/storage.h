/*
 * storage.h: the protected resource (docs/checkers.md "fencing / lost updates").
 * Each hold does a read-modify-write of two counters per resource on the
 * storage node: `plain` (no check) and `fenced` (the storage refuses an op
 * whose fence is below the highest fence it has seen for the resource and
 * raises that mark on every accepted op). Worker side: one connection,
 * reads and writes pipelined. Harness side: the final state dump that the
 * fencing checker compares with the accepted writes.
 */
#ifndef LS_STORAGE_H
#define LS_STORAGE_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

struct storage;

/* Connect to the storage node, authenticating with password (NULL or "":
 * none; copied). Caller frees with storage_close. */
int storage_open(struct storage **out, const char *host, int port, const char *password,
                 int64_t timeout_ns, struct ls_err *err);
void storage_close(struct storage *s);

struct store_op {
    int ok;          /* the storage answered (0: error/timeout: outcome unknown) */
    int accepted;    /* fenced: not rejected as stale */
    int64_t value;   /* value read / written */
};

/* Read both counters of res in one round trip. fenced is skipped when
 * has_fence is 0. */
void storage_read(struct storage *s, int res, int has_fence, uint64_t fence,
                  struct store_op *plain, struct store_op *fenced);
/* Write plain = pval and (when do_fenced) fenced = fval under fence. */
void storage_write(struct storage *s, int res, int64_t pval, int do_fenced, uint64_t fence,
                   int64_t fval, struct store_op *plain, struct store_op *fenced);

/* The worker-side table of the above (backends/backend.h struct store_ops):
 * what the Redis-node backends hand their workers. */
struct store_ops;
extern const struct store_ops store_redis;

/* Harness side: write storage.jsonl (one line per resource) from the node. */
int storage_dump(const char *host, int port, const char *password, int nres, int fencing,
                 const char *path, struct ls_err *err);

#endif
