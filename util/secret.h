/*
 * secret.h: the password of the redis-server nodes of a run
 * (docs/reliability.md "Security"): making a random one, connecting and
 * authenticating with it, wiping it from memory. A password never goes
 * into a message, a log or a file other than the run's 0600 secret files;
 * functions here never print it. Not here: where it comes from (harness/
 * cluster.c: generated, or an environment variable for external clusters).
 */
#ifndef LS_SECRET_H
#define LS_SECRET_H

#include <stddef.h>
#include <sys/time.h>

#include "util/err.h"

#define LS_PASSWORD_MAX 128 /* bytes of a password, terminator included */

struct redisContext;

/* A fresh random password (32 bytes from getrandom, as 64 hex digits) in
 * buf (n >= 65). Returns 0, or LS_EENV with err set. */
int ls_password_new(char *buf, size_t n, struct ls_err *err);

/* n random bytes from getrandom into buf. Returns 0, or LS_EENV with err
 * set (what names the use: "run id"). */
int ls_random_bytes(void *buf, size_t n, const char *what, struct ls_err *err);

/* Whether s is usable as a password: 1..LS_PASSWORD_MAX-1 bytes, no
 * control characters or spaces (it goes into a redis config line). */
int ls_password_ok(const char *s);

/* Zero n bytes at p in a way the compiler keeps. Accepts NULL. */
void ls_wipe(void *p, size_t n);

/* Connect like redisConnectWithTimeout; with a non-empty password, AUTH
 * follows (the timeout bounds it, then the context is blocking without a
 * command timeout again, as hiredis leaves it). A refused AUTH leaves the
 * context with err REDIS_ERR_OTHER and errstr "AUTH: <the node's reply>",
 * so callers that check c->err treat it as a failed connect. Caller frees
 * with redisFree; NULL only when out of memory. */
struct redisContext *ls_redis_connect(const char *host, int port, struct timeval tv,
                                      const char *password);

/* AUTH on an open blocking context (password "" or NULL: nothing). Returns
 * 0, or -1 with c->err and c->errstr set as above. */
int ls_redis_auth(struct redisContext *c, const char *password);

#endif
