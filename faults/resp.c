/*
 * resp.c: incremental RESP2 framing of requests and replies (see resp.h).
 * Each parser is a small state machine fed byte ranges in any split; it
 * holds at most a number line and the kept copies, so its memory is bounded
 * whatever the message size. Limits follow Redis's own (networking.c):
 * multibulk counts up to 1024*1024, bulk lengths up to 512 MiB.
 */
#include <string.h>

#include "faults/resp.h"

#define MAX_MULTIBULK (1024 * 1024)
#define MAX_BULK (512LL * 1024 * 1024)

enum req_phase { Q_START, Q_INLINE, Q_COUNT, Q_BULKHDR_TYPE, Q_BULKHDR, Q_BULK };
enum reply_phase { R_TYPE, R_LINE, R_NUM, R_BULK };

void resp_req_reset(struct resp_req *p)
{
    memset(p, 0, sizeof(*p));
}

void resp_reply_reset(struct resp_reply *p)
{
    memset(p, 0, sizeof(*p));
    p->need = 1;
}

/* Keep byte ch of argument idx (0: the name, upper-cased). */
static void keep(struct resp_req *p, int64_t idx, char ch)
{
    if (idx == 0) {
        size_t n = strlen(p->name);
        if (n < RESP_NAME_MAX) {
            p->name[n] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
            p->name[n + 1] = '\0';
        }
        return;
    }
    if (idx > RESP_NARGS_KEPT)
        return;
    int a = (int)idx - 1;
    if (p->arg_len[a] < RESP_ARG_MAX) {
        p->arg[a][p->arg_len[a]++] = ch;
        p->arg[a][p->arg_len[a]] = '\0';
    } else {
        p->arg_cut[a] = 1;
    }
}

/* A *N / $N line: accumulate digits until CRLF. Returns 1 when the line
 * ended (*val set), 0 when more is needed, -1 when it is not a number. */
static int num_byte(char *num, size_t *num_len, char ch, int64_t *val)
{
    if (ch == '\r')
        return 0;
    if (ch == '\n') {
        if (*num_len == 0 || (*num_len == 1 && num[0] == '-'))
            return -1;
        int64_t v = 0;
        int neg = num[0] == '-';
        for (size_t i = (size_t)neg; i < *num_len; i++)
            v = v * 10 + (num[i] - '0');
        *val = neg ? -v : v;
        *num_len = 0;
        return 1;
    }
    int ok = (ch >= '0' && ch <= '9') || (ch == '-' && *num_len == 0);
    if (!ok || *num_len >= 18)
        return -1;
    num[(*num_len)++] = ch;
    return 0;
}

int resp_req_feed(struct resp_req *p, const char *buf, size_t len, size_t *used)
{
    size_t i = 0;
    while (i < len) {
        char ch = buf[i];
        switch (p->phase) {
        case Q_START:
            p->phase = ch == '*' ? Q_COUNT : Q_INLINE;
            if (ch == '*') {
                i++;
                p->bytes++;
            }
            continue;
        case Q_INLINE:
            i++;
            p->bytes++;
            if (ch == '\n') {
                p->argc = p->nargs;
                *used = i;
                return RESP_DONE;
            }
            if (ch == '\r')
                continue;
            if (ch == ' ' || ch == '\t') {
                p->inline_word = 0;
                continue;
            }
            if (!p->inline_word) {
                p->inline_word = 1;
                p->argi = p->nargs++;
            }
            keep(p, p->argi, ch);
            continue;
        case Q_COUNT: {
            int64_t v;
            i++;
            p->bytes++;
            int r = num_byte(p->num, &p->num_len, ch, &v);
            if (r < 0 || (r == 1 && v > MAX_MULTIBULK)) {
                *used = i - 1;
                return RESP_BAD;
            }
            if (r == 0)
                continue;
            if (v <= 0) { /* *0 and *-1: Redis ignores them, no reply */
                p->argc = 0;
                *used = i;
                return RESP_DONE;
            }
            p->nargs = v;
            p->argi = 0;
            p->phase = Q_BULKHDR_TYPE;
            continue;
        }
        case Q_BULKHDR_TYPE:
            if (ch != '$') {
                *used = i;
                return RESP_BAD;
            }
            i++;
            p->bytes++;
            p->phase = Q_BULKHDR;
            continue;
        case Q_BULKHDR: {
            int64_t v;
            i++;
            p->bytes++;
            int r = num_byte(p->num, &p->num_len, ch, &v);
            if (r < 0 || (r == 1 && (v < 0 || v > MAX_BULK))) {
                *used = i - 1;
                return RESP_BAD;
            }
            if (r == 1) {
                p->bulk_left = v + 2;
                p->phase = Q_BULK;
            }
            continue;
        }
        case Q_BULK: {
            size_t take = len - i;
            if ((int64_t)take > p->bulk_left)
                take = (size_t)p->bulk_left;
            int64_t datalen = p->bulk_left; /* data still to come incl. CRLF */
            for (size_t j = 0; j < take; j++, datalen--)
                if (datalen > 2 && p->argi <= RESP_NARGS_KEPT)
                    keep(p, p->argi, buf[i + j]);
            i += take;
            p->bytes += take;
            p->bulk_left -= (int64_t)take;
            if (p->bulk_left > 0)
                continue;
            if (++p->argi == p->nargs) {
                p->argc = p->nargs;
                *used = i;
                return RESP_DONE;
            }
            p->phase = Q_BULKHDR_TYPE;
            continue;
        }
        default:
            *used = i;
            return RESP_BAD;
        }
    }
    *used = len;
    return RESP_MORE;
}

/* One value of the reply ended: the reply is done when none is left. */
static int value_done(struct resp_reply *p)
{
    p->need--;
    p->phase = R_TYPE;
    return p->need == 0;
}

int resp_reply_feed(struct resp_reply *p, const char *buf, size_t len, size_t *used)
{
    size_t i = 0;
    while (i < len) {
        char ch = buf[i];
        switch (p->phase) {
        case R_TYPE:
            i++;
            p->type = ch;
            if (ch == '+' || ch == '-' || ch == ':') {
                if (ch == '-' && p->need == 1)
                    p->is_error = 1;
                p->phase = R_LINE;
            } else if (ch == '$' || ch == '*') {
                p->phase = R_NUM;
            } else {
                *used = i - 1;
                return RESP_BAD;
            }
            continue;
        case R_LINE:
            i++;
            if (ch == '\n' && value_done(p)) {
                *used = i;
                return RESP_DONE;
            }
            continue;
        case R_NUM: {
            int64_t v;
            i++;
            int r = num_byte(p->num, &p->num_len, ch, &v);
            if (r < 0 || (r == 1 && (v < -1 || v > MAX_BULK))) {
                *used = i - 1;
                return RESP_BAD;
            }
            if (r == 0)
                continue;
            if (p->type == '$' && v >= 0) {
                p->bulk_left = v + 2;
                p->phase = R_BULK;
                continue;
            }
            if (p->type == '*' && v > 0) {
                p->need += v - 1;
                p->phase = R_TYPE;
                continue;
            }
            if (value_done(p)) { /* $-1, *-1, *0 */
                *used = i;
                return RESP_DONE;
            }
            continue;
        }
        case R_BULK: {
            size_t take = len - i;
            if ((int64_t)take > p->bulk_left)
                take = (size_t)p->bulk_left;
            i += take;
            p->bulk_left -= (int64_t)take;
            if (p->bulk_left == 0 && value_done(p)) {
                *used = i;
                return RESP_DONE;
            }
            continue;
        }
        default:
            *used = i;
            return RESP_BAD;
        }
    }
    *used = len;
    return RESP_MORE;
}

static int name_is(const struct resp_req *p, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(p->name, names[i]) == 0)
            return 1;
    return 0;
}

const char *resp_req_first_key(const struct resp_req *p, size_t *len, int *cut)
{
    static const char *const scripts[] = {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL",
                                          "FCALL_RO", NULL};
    static const char *const keyless[] = {"PING", "ECHO", "AUTH", "HELLO", "SELECT", "SCRIPT",
                                          "FUNCTION", "CLIENT", "INFO", "CONFIG", "MULTI", "EXEC",
                                          "DISCARD", "QUIT", "TIME", "DBSIZE", "FLUSHALL",
                                          "FLUSHDB", "COMMAND", "READONLY", "READWRITE", "WAIT",
                                          "ROLE", "SUBSCRIBE", "PSUBSCRIBE", "PUBLISH", NULL};
    int a;
    if (name_is(p, scripts)) {
        if (p->argc < 4 || p->arg_cut[1] || p->arg_len[1] == 0)
            return NULL;
        for (size_t i = 0; i < p->arg_len[1]; i++)
            if (p->arg[1][i] < '0' || p->arg[1][i] > '9')
                return NULL;
        if (p->arg_len[1] == 1 && p->arg[1][0] == '0')
            return NULL;
        a = 2;
    } else if (name_is(p, keyless) || p->argc < 2) {
        return NULL;
    } else {
        a = 0;
    }
    *len = p->arg_len[a];
    *cut = p->arg_cut[a];
    return p->arg[a];
}

/* Match one pattern element (not '*') at *pat against the byte c; *next
 * gets the element's end. 1 on a match. */
static int glob_one(const char *pat, char c, const char **next)
{
    if (*pat == '?') {
        *next = pat + 1;
        return 1;
    }
    if (*pat == '[') {
        const char *q = pat + 1;
        int neg = *q == '^';
        if (neg)
            q++;
        int match = 0;
        while (*q && *q != ']') {
            if (*q == '\\' && q[1]) {
                q++;
                match |= *q == c;
            } else if (q[1] == '-' && q[2] && q[2] != ']') {
                char lo = q[0], hi = q[2];
                if (lo > hi) {
                    char t = lo;
                    lo = hi;
                    hi = t;
                }
                match |= c >= lo && c <= hi;
                q += 2;
            } else {
                match |= *q == c;
            }
            q++;
        }
        *next = *q ? q + 1 : q;
        return neg ? !match : match;
    }
    if (*pat == '\\' && pat[1])
        pat++;
    *next = pat + 1;
    return *pat == c;
}

/* Two pointers, no recursion: on a mismatch after a '*', the star takes one
 * more byte and matching resumes after it. Only the last star is ever
 * retried (an earlier star's choice cannot help once a later star matched),
 * so the work is O(pattern * len) whatever the stars. */
int resp_glob(const char *pat, const char *s, size_t len)
{
    const char *star = NULL; /* pattern just after the last '*' */
    size_t star_at = 0;      /* where in s that star's match ends */
    size_t i = 0;
    while (i < len) {
        const char *next;
        if (*pat == '*') {
            while (*pat == '*')
                pat++;
            if (!*pat)
                return 1;
            star = pat;
            star_at = i;
        } else if (*pat && glob_one(pat, s[i], &next)) {
            pat = next;
            i++;
        } else if (star) {
            pat = star;
            i = ++star_at;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return !*pat;
}
