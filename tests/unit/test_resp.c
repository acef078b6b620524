/*
 * test_resp.c: the proxy's incremental RESP2 framing (faults/resp.h):
 * inline and multibulk requests, every split of a request across reads
 * (byte by byte included), pipelined requests in one read, requests larger
 * than what is kept (arguments truncated, framing intact), garbage, and
 * replies of every RESP2 type (nested arrays, nulls) split the same ways;
 * RESP3 types are refused. Also the first-key rule and the glob.
 */
#include <string.h>

#include "faults/resp.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

/* Feed s in pieces of `step` bytes (0: all at once); count the requests
 * that end, keep the last one in *last. Returns the count, or -1 on
 * RESP_BAD, -2 when bytes were left inside an unfinished request. */
static int feed_reqs(const char *s, size_t len, size_t step, struct resp_req *last)
{
    struct resp_req p;
    resp_req_reset(&p);
    int done = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t n = step && len - pos > step ? step : len - pos;
        size_t off = 0;
        while (off < n) {
            size_t used = 0;
            int rc = resp_req_feed(&p, s + pos + off, n - off, &used);
            if (rc == RESP_BAD)
                return -1;
            off += used;
            if (rc == RESP_DONE) {
                done++;
                *last = p;
                resp_req_reset(&p);
            }
        }
        pos += n;
    }
    return p.bytes ? -2 : done;
}

static int feed_replies(const char *s, size_t len, size_t step, int *errors)
{
    struct resp_reply p;
    resp_reply_reset(&p);
    int done = 0;
    size_t pos = 0;
    *errors = 0;
    int mid = 0;
    while (pos < len) {
        size_t n = step && len - pos > step ? step : len - pos;
        size_t off = 0;
        while (off < n) {
            size_t used = 0;
            int rc = resp_reply_feed(&p, s + pos + off, n - off, &used);
            if (rc == RESP_BAD)
                return -1;
            off += used;
            mid = 1;
            if (rc == RESP_DONE) {
                done++;
                *errors += p.is_error;
                resp_reply_reset(&p);
                mid = 0;
            }
        }
        pos += n;
    }
    return mid ? -2 : done;
}

static void test_multibulk(void)
{
    const char *s = "*5\r\n$3\r\nset\r\n$5\r\nlock1\r\n$3\r\ntok\r\n$2\r\nPX\r\n$3\r\n500\r\n";
    for (size_t step = 0; step <= strlen(s); step++) {
        struct resp_req r;
        CHECK_INT(feed_reqs(s, strlen(s), step, &r), 1);
        CHECK_STR(r.name, "SET");
        CHECK_STR(r.arg[0], "lock1");
        CHECK_STR(r.arg[1], "tok");
        CHECK_STR(r.arg[2], "PX");
        CHECK_INT(r.argc, 5);
        CHECK_INT(r.bytes, strlen(s));
    }
}

static void test_inline(void)
{
    const char *s = "del  lock1\r\n";
    for (size_t step = 0; step <= strlen(s); step++) {
        struct resp_req r;
        CHECK_INT(feed_reqs(s, strlen(s), step, &r), 1);
        CHECK_STR(r.name, "DEL");
        CHECK_STR(r.arg[0], "lock1");
        CHECK_INT(r.argc, 2);
    }
    struct resp_req r;
    CHECK_INT(feed_reqs("PING\n", 5, 0, &r), 1); /* LF alone ends it too */
    CHECK_STR(r.name, "PING");
    CHECK_INT(feed_reqs("\r\n", 2, 0, &r), 1);  /* empty: Redis sends no reply */
    CHECK_INT(r.argc, 0);
    CHECK_INT(feed_reqs("*0\r\n", 4, 0, &r), 1);
    CHECK_INT(r.argc, 0);
}

static void test_pipelined(void)
{
    const char *s = "*2\r\n$3\r\nGET\r\n$1\r\na\r\nPING\r\n*3\r\n$7\r\nEVALSHA\r\n$4\r\nabcd\r\n$1\r\n0\r\n"
                    "*2\r\n$3\r\nDEL\r\n$1\r\nb\r\n";
    for (size_t step = 0; step <= strlen(s); step += 3) {
        struct resp_req r;
        CHECK_INT(feed_reqs(s, strlen(s), step, &r), 4);
        CHECK_STR(r.name, "DEL");
        CHECK_STR(r.arg[0], "b");
    }
    /* the parser stops at each request's end, so the caller can act on it */
    struct resp_req p;
    resp_req_reset(&p);
    size_t used = 0;
    CHECK_INT(resp_req_feed(&p, s, strlen(s), &used), RESP_DONE);
    CHECK_INT(used, 20);
    CHECK_STR(p.name, "GET");
}

static void test_oversized(void)
{
    /* a 100 kB value: kept truncated, framing exact */
    static char big[100100];
    size_t vlen = 100000;
    int h = snprintf(big, sizeof(big), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", vlen);
    memset(big + h, 'x', vlen);
    memcpy(big + h + vlen, "\r\n*1\r\n$4\r\nPING\r\n", 16);
    size_t len = (size_t)h + vlen + 16;
    struct resp_req r;
    CHECK_INT(feed_reqs(big, len, 4096, &r), 2);
    CHECK_STR(r.name, "PING");
    struct resp_req p;
    resp_req_reset(&p);
    size_t used = 0;
    CHECK_INT(resp_req_feed(&p, big, len, &used), RESP_DONE);
    CHECK_INT(used, (size_t)h + vlen + 2);
    CHECK_INT(p.arg_len[1], RESP_ARG_MAX);
    CHECK_INT(p.arg_cut[1], 1);
    /* a long name is truncated, not overflowed */
    char name[200];
    memset(name, 'a', sizeof(name));
    char req[300];
    int n = snprintf(req, sizeof(req), "*1\r\n$200\r\n%.200s\r\n", name);
    CHECK_INT(feed_reqs(req, (size_t)n, 7, &r), 1);
    CHECK_INT(strlen(r.name), RESP_NAME_MAX);
}

static void test_garbage(void)
{
    struct resp_req r;
    CHECK_INT(feed_reqs("*2\r\nfoo\r\n", 9, 0, &r), -1);        /* not a $ header */
    CHECK_INT(feed_reqs("*x\r\n", 4, 0, &r), -1);               /* count not a number */
    CHECK_INT(feed_reqs("*1\r\n$-5\r\nab\r\n", 13, 0, &r), -1); /* negative bulk */
    CHECK_INT(feed_reqs("*99999999999\r\n", 14, 0, &r), -1);    /* too many arguments */
    CHECK_INT(feed_reqs("*1\r\n$3\r\nGE", 10, 0, &r), -2);      /* unfinished */
    /* where it broke */
    struct resp_req p;
    resp_req_reset(&p);
    size_t used = 0;
    CHECK_INT(resp_req_feed(&p, "*1\r\n%3\r\n", 8, &used), RESP_BAD);
    CHECK_INT(used, 4);
    int e;
    CHECK_INT(feed_replies("%1\r\n+a\r\n+b\r\n", 12, 0, &e), -1); /* RESP3 map */
    CHECK_INT(feed_replies("_\r\n", 3, 0, &e), -1);               /* RESP3 null */
    CHECK_INT(feed_replies("$x\r\n", 4, 0, &e), -1);
}

static void test_replies(void)
{
    const char *s = "+OK\r\n-READONLY You can't write\r\n:1\r\n$-1\r\n$5\r\nhello\r\n*-1\r\n*0\r\n"
                    "*3\r\n:1\r\n*2\r\n$1\r\na\r\n-ERR x\r\n$0\r\n\r\n";
    for (size_t step = 0; step <= strlen(s); step++) {
        int e;
        CHECK_INT(feed_replies(s, strlen(s), step, &e), 8);
        CHECK_INT(e, 1); /* an error inside an array does not make the reply an error */
    }
    struct resp_reply p;
    resp_reply_reset(&p);
    size_t used = 0;
    CHECK_INT(resp_reply_feed(&p, "$5\r\nhel", 7, &used), RESP_MORE);
    CHECK_INT(used, 7);
    CHECK_INT(resp_reply_feed(&p, "lo\r\n+OK\r\n", 9, &used), RESP_DONE);
    CHECK_INT(used, 4);
}

static void test_first_key(void)
{
    struct resp_req r;
    size_t len;
    int cut;
    const char *s = "*6\r\n$7\r\nEVALSHA\r\n$4\r\nabcd\r\n$1\r\n1\r\n$4\r\nlk:1\r\n$1\r\nt\r\n$1\r\nx\r\n";
    CHECK_INT(feed_reqs(s, strlen(s), 0, &r), 1);
    const char *k = resp_req_first_key(&r, &len, &cut);
    CHECK(k && len == 4 && memcmp(k, "lk:1", 4) == 0);
    CHECK_INT(feed_reqs("evalsha abcd 0\r\n", 16, 0, &r), 1);
    CHECK(resp_req_first_key(&r, &len, &cut) == NULL);
    CHECK_INT(feed_reqs("DEL lk:2\r\n", 10, 0, &r), 1);
    k = resp_req_first_key(&r, &len, &cut);
    CHECK(k && len == 4 && memcmp(k, "lk:2", 4) == 0);
    CHECK_INT(feed_reqs("PING x\r\n", 8, 0, &r), 1);
    CHECK(resp_req_first_key(&r, &len, &cut) == NULL);
}

static void test_glob(void)
{
    CHECK(resp_glob("lockstorm:*", "lockstorm:r0", 12));
    CHECK(!resp_glob("lockstorm:*", "other:r0", 8));
    CHECK(resp_glob("*:r[0-2]", "lockstorm:r1", 12));
    CHECK(!resp_glob("*:r[0-2]", "lockstorm:r3", 12));
    CHECK(resp_glob("r?", "r7", 2));
    CHECK(!resp_glob("r?", "r", 1));
    CHECK(resp_glob("a\\*", "a*", 2));
    CHECK(resp_glob("[^x]y", "zy", 2));
    CHECK(resp_glob("*", "", 0));
    CHECK(resp_glob("*a*b", "xaxxb", 5));
    CHECK(!resp_glob("*a*b", "xaxxbc", 6));
    CHECK(resp_glob("a*[0-9]?", "abc7z", 5));
    CHECK(!resp_glob("a*[0-9]?", "abc7", 4));
    CHECK(resp_glob("**x", "yx", 2));
    CHECK(!resp_glob("x*", "", 0));
}

/* Stars against a key that almost matches: a backtracking match takes
 * about a second with four stars, minutes with six (exponential in the
 * stars); the proxy is one thread. Two four-star matches of a 128-byte
 * key well under 100 ms; the six-star one only once that holds. */
static void test_glob_stars(void)
{
    char key[128];
    memset(key, 'a', sizeof key);
    int64_t t0 = ls_now_ns();
    CHECK(!resp_glob("*a*a*a*a*b", key, sizeof key));
    CHECK(!resp_glob("*a*a*a*a*b", key, sizeof key));
    int64_t ms = (ls_now_ns() - t0) / 1000000;
    CHECK(ms < 100);
    if (ms >= 100)
        return;
    CHECK(!resp_glob("*a*a*a*a*a*a*b", key, sizeof key));
    key[sizeof key - 1] = 'b';
    CHECK(resp_glob("*a*a*a*a*a*a*b", key, sizeof key));
    CHECK(ls_now_ns() - t0 < 100 * 1000000LL);
}

int main(void)
{
    RUN(test_multibulk);
    RUN(test_inline);
    RUN(test_pipelined);
    RUN(test_oversized);
    RUN(test_garbage);
    RUN(test_replies);
    RUN(test_first_key);
    RUN(test_glob);
    RUN(test_glob_stars);
    return t_finish();
}
