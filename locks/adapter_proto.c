/*
 * adapter_proto.c: the adapter protocol's wire format (see adapter_proto.h
 * and docs/protocol.md). Parsing goes through util/json's strict parser;
 * this file only judges the shape of what it returns. Not here: processes,
 * pipes, timeouts (adapter.c) or what a grant means to the worker
 * (external.c).
 */
#include "locks/adapter_proto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/json.h"
#include "util/timeutil.h"

/* ---- line splitting ---- */

void aproto_lines_init(struct aproto_lines *l, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->max = max ? max : APROTO_MAX_LINE;
}

void aproto_lines_free(struct aproto_lines *l)
{
    if (!l)
        return;
    free(l->buf);
    memset(l, 0, sizeof(*l));
}

int aproto_lines_feed(struct aproto_lines *l, const char *p, size_t n)
{
    if (l->skipping) {
        /* inside an overlong line (already reported): drop through its '\n' */
        const char *nl = memchr(p, '\n', n);
        if (!nl) {
            l->skipping += n;
            return 0;
        }
        size_t k = (size_t)(nl - p) + 1;
        l->skipping = 0;
        p += k;
        n -= k;
    }
    if (n == 0)
        return 0;
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n + 1)
            cap *= 2;
        char *b = realloc(l->buf, cap);
        if (!b)
            return LS_ENOMEM;
        l->buf = b;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, p, n);
    l->len += n;
    return 0;
}

int aproto_lines_next(struct aproto_lines *l, char **line, size_t *n)
{
    *line = NULL;
    *n = 0;
    char *nl = l->len ? memchr(l->buf, '\n', l->len) : NULL;
    if (!nl) {
        if (l->len > l->max) { /* no '\n' within max bytes: drop the line */
            *n = l->len;
            l->skipping = l->len;
            l->len = 0;
            return -1;
        }
        return 0;
    }
    size_t k = (size_t)(nl - l->buf);
    if (k > l->max) {
        *n = k;
        memmove(l->buf, nl + 1, l->len - k - 1);
        l->len -= k + 1;
        return -1;
    }
    size_t linelen = k;
    if (linelen > 0 && l->buf[linelen - 1] == '\r')
        linelen--;
    char *out = malloc(linelen + 1);
    if (!out)
        return 0;
    memcpy(out, l->buf, linelen);
    out[linelen] = '\0';
    memmove(l->buf, nl + 1, l->len - k - 1);
    l->len -= k + 1;
    *line = out;
    *n = linelen;
    return 1;
}

/* ---- parsing ---- */

static const char *type_text(const struct json *v)
{
    switch (v->type) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "a boolean";
    case JSON_NUM: return "a number";
    case JSON_STR: return "a string";
    case JSON_ARR: return "a list";
    default: return "an object";
    }
}

/* Field key of o as a bool: absent or null -> *present 0; else must be a
 * boolean. Returns 0 or -1 with why. */
static int get_bool(const struct json *o, const char *what, const char *key, int *present,
                    int *val, char *why, size_t n)
{
    const struct json *v = json_obj_get(o, key);
    *present = 0;
    *val = 0;
    if (!v || v->type == JSON_NULL)
        return 0;
    if (v->type != JSON_BOOL) {
        snprintf(why, n, "%s: '%s' must be true or false, got %s", what, key, type_text(v));
        return -1;
    }
    *present = 1;
    *val = v->i != 0;
    return 0;
}

/* String field: absent/null -> *out NULL; else a string (copied, caller
 * frees). Strings with NUL bytes are refused. */
static int get_str(const struct json *o, const char *what, const char *key, char **out,
                   char *why, size_t n)
{
    const struct json *v = json_obj_get(o, key);
    *out = NULL;
    if (!v || v->type == JSON_NULL)
        return 0;
    if (v->type != JSON_STR || strlen(v->s) != v->n) {
        snprintf(why, n, "%s: '%s' must be a string, got %s", what, key,
                 v->type == JSON_STR ? "a string with a NUL byte" : type_text(v));
        return -1;
    }
    *out = strdup(v->s);
    return *out ? 0 : -1;
}

static void copy_name(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s);
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static int parse_hello(const struct json *o, struct amsg *m, char *why, size_t n)
{
    const struct json *v = json_obj_get(o, "protocol");
    if (!v || v->type != JSON_NUM || !v->is_int) {
        snprintf(why, n, "hello: 'protocol' must be an integer, got %s",
                 v ? type_text(v) : "nothing");
        return -1;
    }
    m->protocol = v->i < 0 || v->i > 1000000 ? -1 : (int)v->i;
    const char *keys[] = {"name", "version"};
    char *dst[] = {m->name, m->version};
    for (int k = 0; k < 2; k++) {
        v = json_obj_get(o, keys[k]);
        if (!v || v->type != JSON_STR || !v->n) {
            snprintf(why, n, "hello: '%s' must be a non-empty string, got %s", keys[k],
                     v ? (v->type == JSON_STR ? "an empty string" : type_text(v)) : "nothing");
            return -1;
        }
        copy_name(dst[k], APROTO_NAME_MAX, v->s);
    }
    v = json_obj_get(o, "caps");
    if (!v || v->type != JSON_ARR) {
        snprintf(why, n, "hello: 'caps' must be a list of strings, got %s",
                 v ? type_text(v) : "nothing");
        return -1;
    }
    static const struct {
        const char *name;
        unsigned bit;
    } known[] = {{"ttl", APROTO_CAP_TTL},
                 {"renew", APROTO_CAP_RENEW},
                 {"fencing", APROTO_CAP_FENCING},
                 {"auto_renew", APROTO_CAP_AUTO_RENEW},
                 {"stall", APROTO_CAP_STALL},
                 {"renewed", APROTO_CAP_RENEWED},
                 {"record", APROTO_CAP_RECORD},
                 {"clock", APROTO_CAP_CLOCK}};
    size_t ulen = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct json *c = v->kids[i];
        if (c->type != JSON_STR) {
            snprintf(why, n, "hello: 'caps' must be a list of strings, item %zu is %s", i,
                     type_text(c));
            return -1;
        }
        size_t k;
        for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            if (strcmp(c->s, known[k].name) == 0)
                break;
        if (k < sizeof(known) / sizeof(known[0])) {
            m->caps |= known[k].bit;
        } else if (ulen + c->n + 2 < sizeof(m->unknown_caps)) {
            ulen += (size_t)snprintf(m->unknown_caps + ulen, sizeof(m->unknown_caps) - ulen,
                                     "%s%s", ulen ? "," : "", c->s);
        }
    }
    return 0;
}

/* Contract: the `clock` reply's fields of o (wall_ms, mono_ms: numbers,
 * absent or null allowed here; aproto_check_reply wants wall_ms on an
 * ok:true reply to clock). Returns 0 or -1 with why. */
static int parse_clock_fields(const struct json *o, struct amsg *m, const char *what, char *why,
                              size_t n)
{
    static const char *const keys[] = {"wall_ms", "mono_ms"};
    int *has[] = {&m->has_wall, &m->has_mono};
    double *val[] = {&m->wall_ms, &m->mono_ms};
    for (int k = 0; k < 2; k++) {
        const struct json *v = json_obj_get(o, keys[k]);
        if (!v || v->type == JSON_NULL)
            continue;
        if (v->type != JSON_NUM || v->d != v->d || v->d > 1e16 || v->d < -1e16) {
            snprintf(why, n, "%s: '%s' must be a number of milliseconds, got %s", what, keys[k],
                     v->type == JSON_NUM ? "a number out of range" : type_text(v));
            return -1;
        }
        *has[k] = 1;
        *val[k] = v->is_int ? (double)v->i : v->d;
    }
    return 0;
}

/* Contract: field `fence` of o (a reply or a record event, named by what):
 * absent or null -> m->has_fence stays 0; else a non-negative integer in
 * m->fence. Returns 0 or -1 with why. */
static int get_fence(const struct json *o, const char *what, struct amsg *m, char *why, size_t n)
{
    const struct json *v = json_obj_get(o, "fence");
    if (v && v->type != JSON_NULL) {
        if (v->type != JSON_NUM || !v->is_int || v->i < 0) {
            snprintf(why, n, "%s: 'fence' must be a non-negative integer or null, got %s", what,
                     v->type == JSON_NUM ? "a negative or fractional number" : type_text(v));
            return -1;
        }
        m->has_fence = 1;
        m->fence = (uint64_t)v->i;
    }
    return 0;
}

static int parse_reply(const struct json *o, struct amsg *m, char *why, size_t n)
{
    const struct json *v = json_obj_get(o, "id");
    if (v->type != JSON_NUM || !v->is_int) {
        snprintf(why, n, "reply: 'id' must be an integer, got %s", type_text(v));
        return -1;
    }
    m->id = v->i;
    v = json_obj_get(o, "ok");
    if (!v || v->type != JSON_BOOL) {
        snprintf(why, n, "reply %lld: 'ok' must be true or false, got %s", (long long)m->id,
                 v ? type_text(v) : "nothing");
        return -1;
    }
    m->ok = v->i != 0;
    char what[48];
    snprintf(what, sizeof(what), "reply %lld", (long long)m->id);
    int present;
    if (get_bool(o, what, "busy", &present, &m->busy, why, n) < 0 ||
        get_bool(o, what, "unknown", &present, &m->unknown, why, n) < 0 ||
        get_bool(o, what, "released", &m->has_released, &m->released, why, n) < 0 ||
        get_str(o, what, "token", &m->token, why, n) < 0 ||
        get_str(o, what, "error", &m->error, why, n) < 0 ||
        get_fence(o, what, m, why, n) < 0)
        return -1;
    v = json_obj_get(o, "validity_ms");
    if (v && v->type != JSON_NULL) {
        if (v->type != JSON_NUM || v->d != v->d || v->d > 1e9 || v->d < -1e9) {
            snprintf(why, n, "%s: 'validity_ms' must be a number of milliseconds, got %s", what,
                     v->type == JSON_NUM ? "a number out of range" : type_text(v));
            return -1;
        }
        m->has_validity = 1;
        m->validity_ns = v->is_int ? v->i * LS_NS_PER_MS : (int64_t)(v->d * 1e6);
    }
    return parse_clock_fields(o, m, what, why, n);
}

/* ---- extensions: stall and renewed (docs/protocol.md, revision 2) ---- */

/* Contract: field key of o as milliseconds (a finite number within 1e9):
 * absent or null -> *present 0; else *ns set. Returns 0 or -1 with why. */
static int get_ms(const struct json *o, const char *what, const char *key, int *present,
                  int64_t *ns, char *why, size_t n)
{
    const struct json *v = json_obj_get(o, key);
    *present = 0;
    *ns = 0;
    if (!v || v->type == JSON_NULL)
        return 0;
    if (v->type != JSON_NUM || v->d != v->d || v->d > 1e9 || v->d < -1e9) {
        snprintf(why, n, "%s: '%s' must be a number of milliseconds, got %s", what, key,
                 v->type == JSON_NUM ? "a number out of range" : type_text(v));
        return -1;
    }
    *present = 1;
    *ns = v->is_int ? v->i * LS_NS_PER_MS : (int64_t)(v->d * 1e6);
    return 0;
}

/* Contract: a reply's stall field (stalled_ms) into m. 0 or -1 with why. */
static int parse_stall_reply(const struct json *o, struct amsg *m, char *why, size_t n)
{
    char what[48];
    snprintf(what, sizeof(what), "reply %lld", (long long)m->id);
    if (get_ms(o, what, "stalled_ms", &m->has_stalled, &m->stalled_ns, why, n) < 0)
        return -1;
    if (m->has_stalled && m->stalled_ns < 0) {
        snprintf(why, n, "%s: 'stalled_ms' must not be negative", what);
        return -1;
    }
    return 0;
}

/* Contract: {"event":"renewed","res":R,"token":T,"validity_ms":V} into m
 * (AMSG_RENEWED): all three required; `host_mono_ms` (revision 3), the
 * host's CLOCK_MONOTONIC when the line was written, optional: a positive
 * number of milliseconds. 0 or -1 with why. */
static int parse_renewed(const struct json *o, struct amsg *m, char *why, size_t n)
{
    m->kind = AMSG_RENEWED;
    if (get_str(o, "renewed event", "res", &m->res, why, n) < 0 ||
        get_str(o, "renewed event", "token", &m->token, why, n) < 0 ||
        get_ms(o, "renewed event", "validity_ms", &m->has_validity, &m->validity_ns, why, n) < 0)
        return -1;
    if (!m->res || !m->token || !m->has_validity) {
        snprintf(why, n, "renewed event: needs 'res' and 'token' strings and 'validity_ms'");
        return -1;
    }
    const struct json *v = json_obj_get(o, "host_mono_ms");
    if (v && v->type != JSON_NULL) {
        /* 1e12 ms is 31 years of uptime: anything beyond is not this clock */
        if (v->type != JSON_NUM || v->d != v->d || v->d <= 0 || v->d > 1e12) {
            snprintf(why, n, "renewed event: 'host_mono_ms' must be a positive number of "
                             "milliseconds (the host's CLOCK_MONOTONIC), got %s",
                     v->type == JSON_NUM ? "a number out of range" : type_text(v));
            return -1;
        }
        m->written_ns = v->is_int ? v->i * LS_NS_PER_MS : (int64_t)(v->d * 1e6);
    }
    return 0;
}

/* Contract: the optional `host_mono_ms` of o (revision 3) into
 * m->written_ns; what names the event for why. 0 or -1 with why. */
static int get_host_mono(const struct json *o, const char *what, struct amsg *m, char *why,
                         size_t n)
{
    const struct json *v = json_obj_get(o, "host_mono_ms");
    if (!v || v->type == JSON_NULL)
        return 0;
    /* 1e12 ms is 31 years of uptime: anything beyond is not this clock */
    if (v->type != JSON_NUM || v->d != v->d || v->d <= 0 || v->d > 1e12) {
        snprintf(why, n, "%s: 'host_mono_ms' must be a positive number of milliseconds (the "
                         "host's CLOCK_MONOTONIC), got %s", what,
                 v->type == JSON_NUM ? "a number out of range" : type_text(v));
        return -1;
    }
    m->written_ns = v->is_int ? v->i * LS_NS_PER_MS : (int64_t)(v->d * 1e6);
    return 0;
}

/* Does the error text say "timeout"? (ETIMEDOUT, "Command timed out", ...) */
static int says_timeout(const char *e);

/* Contract: {"event":"record","what":W,...} (extension `record`, revision
 * 4) into m (AMSG_RECORD): `what` one of the names below; `res` a string
 * for every what but `stopped`; `released` a boolean on `released`;
 * token, validity_ms, fence, unknown, error and host_mono_ms optional and
 * typed. 0 or -1 with why. */
static int parse_record(const struct json *o, struct amsg *m, char *why, size_t n)
{
    static const char *const names[] = {NULL, "acquire", "acquired", "busy", "acquire_failed",
                                        "enter", "exit", "release", "released",
                                        "release_failed", "stopped"};
    m->kind = AMSG_RECORD;
    const struct json *v = json_obj_get(o, "what");
    if (!v || v->type != JSON_STR) {
        snprintf(why, n, "record event: 'what' must be a string, got %s",
                 v ? type_text(v) : "nothing");
        return -1;
    }
    for (int k = LREC_ACQUIRE; k <= LREC_STOPPED; k++)
        if (strcmp(v->s, names[k]) == 0)
            m->rec_what = k;
    if (!m->rec_what) {
        char q[48];
        snprintf(why, n, "record event: unknown what '%s' (acquire, acquired, busy, "
                         "acquire_failed, enter, exit, release, released, release_failed, "
                         "stopped)", aproto_quote(v->s, v->n, 32, q, sizeof(q)));
        return -1;
    }
    char what[64];
    snprintf(what, sizeof(what), "record event '%s'", names[m->rec_what]);
    int present;
    if (get_str(o, what, "res", &m->res, why, n) < 0 ||
        get_str(o, what, "token", &m->token, why, n) < 0 ||
        get_str(o, what, "error", &m->error, why, n) < 0 ||
        get_bool(o, what, "released", &m->has_released, &m->released, why, n) < 0 ||
        get_bool(o, what, "unknown", &present, &m->unknown, why, n) < 0 ||
        get_ms(o, what, "validity_ms", &m->has_validity, &m->validity_ns, why, n) < 0 ||
        get_host_mono(o, what, m, why, n) < 0 ||
        get_fence(o, what, m, why, n) < 0)
        return -1;
    if (m->rec_what != LREC_STOPPED && !m->res) {
        snprintf(why, n, "%s: needs 'res', the resource's name from the hello", what);
        return -1;
    }
    if (m->rec_what == LREC_RELEASED && !m->has_released) {
        snprintf(why, n, "%s: needs 'released' (true, or false when the lock was no longer "
                         "the program's)", what);
        return -1;
    }
    m->rec_err_kind = EVE_NONE;
    if (m->rec_what == LREC_ACQUIRE_FAILED || m->rec_what == LREC_RELEASE_FAILED)
        m->rec_err_kind = !m->unknown ? EVE_REPLY : says_timeout(m->error) ? EVE_TIMEOUT
                                                                           : EVE_CONN;
    return 0;
}

int aproto_parse(const char *line, size_t n, struct amsg *m, char *why, size_t whylen)
{
    memset(m, 0, sizeof(*m));
    struct json *o = NULL;
    char jwhy[128];
    if (json_parse(line, n, &o, jwhy, sizeof(jwhy)) < 0) {
        snprintf(why, whylen, "not JSON (%s)", jwhy);
        return -1;
    }
    int rc = -1;
    if (o->type != JSON_OBJ) {
        snprintf(why, whylen, "expected a JSON object, got %s", type_text(o));
        goto out;
    }
    const struct json *id = json_obj_get(o, "id");
    const struct json *op = json_obj_get(o, "op");
    const struct json *ev = json_obj_get(o, "event");
    if (id) {
        m->kind = AMSG_REPLY;
        rc = parse_reply(o, m, why, whylen);
        if (rc == 0)
            rc = parse_stall_reply(o, m, why, whylen);
    } else if (op) {
        if (op->type != JSON_STR || strcmp(op->s, "hello") != 0) {
            snprintf(why, whylen, "unexpected 'op' from an adapter (only hello is)");
            goto out;
        }
        m->kind = AMSG_HELLO;
        rc = parse_hello(o, m, why, whylen);
    } else if (ev) {
        if (ev->type != JSON_STR) {
            snprintf(why, whylen, "'event' must be a string, got %s", type_text(ev));
            goto out;
        }
        if (strcmp(ev->s, "lost") == 0) {
            m->kind = AMSG_LOST;
            rc = get_str(o, "lost event", "res", &m->res, why, whylen);
            if (rc == 0)
                rc = get_str(o, "lost event", "token", &m->token, why, whylen);
            if (rc == 0 && (!m->res || !m->token)) {
                snprintf(why, whylen, "lost event: needs 'res' and 'token' strings");
                rc = -1;
            }
        } else if (strcmp(ev->s, "renewed") == 0) {
            rc = parse_renewed(o, m, why, whylen);
        } else if (strcmp(ev->s, "record") == 0) {
            rc = parse_record(o, m, why, whylen);
        } else if (strcmp(ev->s, "log") == 0) {
            m->kind = AMSG_LOG;
            rc = get_str(o, "log event", "msg", &m->msg, why, whylen);
            if (rc == 0 && !m->msg) {
                snprintf(why, whylen, "log event: needs a 'msg' string");
                rc = -1;
            }
        } else {
            char q[48];
            snprintf(why, whylen, "unknown event '%s'",
                     aproto_quote(ev->s, ev->n, 32, q, sizeof(q)));
        }
    } else {
        snprintf(why, whylen, "a line with neither 'id', 'op' nor 'event'");
    }
out:
    json_free(o);
    if (rc < 0) {
        amsg_free(m);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void amsg_free(struct amsg *m)
{
    if (!m)
        return;
    free(m->token);
    free(m->error);
    free(m->res);
    free(m->msg);
    m->token = m->error = m->res = m->msg = NULL;
}

int aproto_check_reply(int op, const struct amsg *m, char *why, size_t whylen)
{
    if (m->kind != AMSG_REPLY) {
        snprintf(why, whylen, "expected a reply");
        return -1;
    }
    if (m->ok && (m->busy || m->unknown)) {
        snprintf(why, whylen, "reply %lld: ok:true with %s:true", (long long)m->id,
                 m->busy ? "busy" : "unknown");
        return -1;
    }
    if (!m->ok)
        return 0;
    switch (op) {
    case AOP_ACQUIRE:
        if (!m->token || !m->token[0]) {
            snprintf(why, whylen, "reply %lld to acquire: ok:true needs a non-empty 'token'",
                     (long long)m->id);
            return -1;
        }
        /* fall through */
    case AOP_RENEW:
        if (!m->has_validity) {
            snprintf(why, whylen, "reply %lld to %s: ok:true needs 'validity_ms'",
                     (long long)m->id, op == AOP_ACQUIRE ? "acquire" : "renew");
            return -1;
        }
        return 0;
    case AOP_RELEASE:
        if (!m->has_released) {
            snprintf(why, whylen, "reply %lld to release: ok:true needs 'released'",
                     (long long)m->id);
            return -1;
        }
        return 0;
    case AOP_STALL:
        if (!m->has_stalled) {
            snprintf(why, whylen, "reply %lld to stall: ok:true needs 'stalled_ms'",
                     (long long)m->id);
            return -1;
        }
        return 0;
    case AOP_CLOCK:
        if (!m->has_wall) {
            snprintf(why, whylen, "reply %lld to clock: ok:true needs 'wall_ms'",
                     (long long)m->id);
            return -1;
        }
        return 0;
    default:
        return 0;
    }
}

static int says_timeout(const char *e)
{
    if (!e)
        return 0;
    for (const char *p = e; *p; p++)
        if (strncasecmp(p, "timeout", 7) == 0 || strncasecmp(p, "timed out", 9) == 0 ||
            strncasecmp(p, "etimedout", 9) == 0)
            return 1;
    return 0;
}

int aproto_outcome(int op, const struct amsg *m, int *err_kind)
{
    *err_kind = EVE_NONE;
    if (m->ok) {
        if (op == AOP_RELEASE && !m->released)
            return LOCK_NOT_OWNER;
        return LOCK_OK;
    }
    if (op == AOP_ACQUIRE && m->busy)
        return LOCK_BUSY;
    if (m->unknown) {
        *err_kind = says_timeout(m->error) ? EVE_TIMEOUT : EVE_CONN;
        return LOCK_UNKNOWN;
    }
    *err_kind = EVE_REPLY;
    return LOCK_FAIL;
}

void aproto_caps_text(unsigned caps, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s%s%s%s", caps & APROTO_CAP_TTL ? ",ttl" : "",
             caps & APROTO_CAP_RENEW ? ",renew" : "", caps & APROTO_CAP_FENCING ? ",fencing" : "",
             caps & APROTO_CAP_AUTO_RENEW ? ",auto_renew" : "",
             caps & APROTO_CAP_CLOCK ? ",clock" : "", caps & APROTO_CAP_STALL ? ",stall" : "",
             caps & APROTO_CAP_RENEWED ? ",renewed" : "",
             caps & APROTO_CAP_RECORD ? ",record" : "");
    if (buf[0] == ',')
        memmove(buf, buf + 1, strlen(buf));
    else if (n > 1)
        snprintf(buf, n, "-");
}

/* ---- writing ---- */

/* The extensions this harness uses (docs/protocol.md "Extensions"),
 * listed in its hello. */
static const char *const aproto_extensions[] = {"clock", "stall", "renewed"};

void aproto_write_hello(struct strbuf *sb, int worker, const struct lock_node *nodes, int nnodes,
                        const char *options_json)
{
    aproto_write_hello_record(sb, worker, nodes, nnodes, options_json, NULL);
}

void aproto_write_hello_record(struct strbuf *sb, int worker, const struct lock_node *nodes,
                               int nnodes, const char *options_json, const char *record_json)
{
    sb_printf(sb, "{\"op\":\"hello\",\"protocol\":%d,\"worker\":%d,\"nodes\":[", APROTO_VERSION,
              worker);
    for (int i = 0; i < nnodes; i++) {
        char addr[96];
        int k = snprintf(addr, sizeof(addr), "%s:%d", nodes[i].host, nodes[i].port);
        if (i)
            sb_putc(sb, ',');
        sb_json_str(sb, addr, (size_t)k);
    }
    sb_puts(sb, "],\"options\":");
    sb_puts(sb, options_json && options_json[0] ? options_json : "{}");
    sb_puts(sb, ",\"extensions\":[");
    for (size_t i = 0; i < sizeof(aproto_extensions) / sizeof(aproto_extensions[0]); i++)
        sb_printf(sb, "%s\"%s\"", i ? "," : "", aproto_extensions[i]);
    if (record_json) {
        sb_puts(sb, ",\"record\"],\"record\":");
        sb_puts(sb, record_json);
        sb_puts(sb, "}\n");
        return;
    }
    sb_puts(sb, "]}\n");
}

void aproto_write_record_op(struct strbuf *sb, int ctl)
{
    sb_puts(sb, ctl == LOCK_REC_START ? "{\"op\":\"start\"}\n" : "{\"op\":\"stop\"}\n");
}

void aproto_write_request(struct strbuf *sb, int64_t id, int op, const char *res,
                          const char *token, int64_t ttl_ns)
{
    static const char *const names[] = {"", "acquire", "renew", "release"};
    sb_printf(sb, "{\"id\":%lld,\"op\":\"%s\",\"res\":", (long long)id,
              op >= AOP_ACQUIRE && op <= AOP_RELEASE ? names[op] : "?");
    sb_json_str(sb, res, strlen(res));
    if (token) {
        sb_puts(sb, ",\"token\":");
        sb_json_str(sb, token, strlen(token));
    }
    if (ttl_ns >= 0) {
        int64_t ms = (ttl_ns + LS_NS_PER_MS - 1) / LS_NS_PER_MS; /* never round a ttl to 0 */
        sb_printf(sb, ",\"ttl_ms\":%lld", (long long)ms);
    }
    sb_puts(sb, "}\n");
}

void aproto_write_stall(struct strbuf *sb, int64_t id, int64_t ms)
{
    sb_printf(sb, "{\"id\":%lld,\"op\":\"stall\",\"ms\":%lld}\n", (long long)id, (long long)ms);
}

void aproto_write_bye(struct strbuf *sb)
{
    sb_puts(sb, "{\"op\":\"bye\"}\n");
}

/* ---- the `clock` extension ---- */

void aproto_write_clock(struct strbuf *sb, int64_t id)
{
    sb_printf(sb, "{\"id\":%lld,\"op\":\"clock\"}\n", (long long)id);
}

int aproto_clock_plausible(double wall_ms)
{
    return wall_ms >= 1e12 && wall_ms < 1e13;
}

const char *aproto_quote(const char *line, size_t n, size_t max, char *buf, size_t buflen)
{
    size_t o = 0;
    if (buflen == 0)
        return buf;
    for (size_t i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)line[i];
        char tmp[8];
        int k;
        if (c < 0x20 || c >= 0x7f || c == '\\') {
            k = c == '\\' ? snprintf(tmp, sizeof(tmp), "\\\\") : snprintf(tmp, sizeof(tmp), "\\x%02x", c);
        } else {
            tmp[0] = (char)c;
            tmp[1] = '\0';
            k = 1;
        }
        if (o + (size_t)k + 4 >= buflen)
            break;
        memcpy(buf + o, tmp, (size_t)k);
        o += (size_t)k;
    }
    if (n > max && o + 4 < buflen) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}
