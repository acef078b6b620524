/*
 * secret.c: random per-run passwords, AUTH on hiredis connections, wiping
 * (see secret.h). The password is passed to hiredis as a separate argument
 * (redisCommand's %s), never formatted into a message.
 */
#include "util/secret.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int ls_random_bytes(void *buf, size_t n, const char *what, struct ls_err *err)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(p + got, n - got, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return ls_err_errno(err, LS_EENV, errno, "%s: getrandom", what);
        }
        got += (size_t)k;
    }
    return 0;
}

int ls_password_new(char *buf, size_t n, struct ls_err *err)
{
    unsigned char raw[32];
    static const char hex[] = "0123456789abcdef";
    if (n < 2 * sizeof(raw) + 1)
        return ls_err_set(err, LS_EENV, "password: buffer too small");
    int rc = ls_random_bytes(raw, sizeof(raw), "password", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof(raw); i++) {
        buf[2 * i] = hex[raw[i] >> 4];
        buf[2 * i + 1] = hex[raw[i] & 15];
    }
    buf[2 * sizeof(raw)] = '\0';
    ls_wipe(raw, sizeof(raw));
    return 0;
}

int ls_password_ok(const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= LS_PASSWORD_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || s[i] == '"' || s[i] == '\\')
            return 0;
    return 1;
}

void ls_wipe(void *p, size_t n)
{
    if (p)
        explicit_bzero(p, n);
}

int ls_redis_auth(struct redisContext *c, const char *password)
{
    if (!password || !password[0])
        return 0;
    redisReply *r = redisCommand(c, "AUTH %s", password);
    if (!r)
        return -1; /* hiredis set err/errstr */
    int ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (!ok) {
        c->err = REDIS_ERR_OTHER;
        snprintf(c->errstr, sizeof(c->errstr), "AUTH: %s",
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    }
    freeReplyObject(r);
    return ok ? 0 : -1;
}

struct redisContext *ls_redis_connect(const char *host, int port, struct timeval tv,
                                      const char *password)
{
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (!c || c->err || !password || !password[0])
        return c;
    if (redisSetTimeout(c, tv) != REDIS_OK)
        return c;
    if (ls_redis_auth(c, password) == 0)
        redisSetTimeout(c, (struct timeval){0, 0});
    return c;
}
