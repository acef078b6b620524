/*
 * adapter_test.c: `lockstorm adapter-test -- COMMAND [ARGS...]`, the
 * conformance check of an adapter against docs/protocol.md on a scratch
 * cluster: redis-server nodes in a temporary directory, reached through the
 * fault proxy (so a slow or cut link can be made), the adapter started
 * exactly as the external lock starts it (locks/adapter.c). One PASS/FAIL
 * line per check, a closing "N passed, N failed" line; exit 0 when all
 * pass, 1 when any fails, 2 for usage, 3 when the cluster cannot start.
 * Not here: the lock that runs adapters in workloads (locks/external.c).
 */
#include "harness/adapter_test.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faults/proxy.h"
#include "backends/cluster.h"
#include "harness/workload.h"
#include "locks/adapter.h"
#include "util/json.h"
#include "util/proc.h"
#include "util/timeutil.h"
#include "util/secret.h"

#define REQ_TIMEOUT (2 * LS_NS_PER_S)
#define RES_LEN 64

struct at {
    struct adapter ad;
    struct proxy *px;
    int nnodes;
    int passed, failed;
    int verbose;
    int64_t t0;
    unsigned caps;
    uint64_t proto_allowed; /* protocol errors caused on purpose (the garbage check) */
};

__attribute__((format(printf, 4, 5))) static int report(struct at *t, int ok, const char *name,
                                                        const char *fmt, ...)
{
    char detail[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    printf("%s %-28s %s\n", ok ? "PASS" : "FAIL", name, detail);
    fflush(stdout);
    if (ok)
        t->passed++;
    else
        t->failed++;
    return ok;
}

static void skip(const char *name, const char *why)
{
    printf("SKIP %-28s %s\n", name, why);
    fflush(stdout);
}

/* One request; returns the adapter_rc; *m filled on ADAPTER_REPLY. */
static int req(struct at *t, int op, const char *res, const char *token, int64_t ttl_ms,
               struct amsg *m, char *why, size_t n)
{
    return adapter_request(&t->ad, op, res, token, ttl_ms < 0 ? -1 : ttl_ms * LS_NS_PER_MS,
                           REQ_TIMEOUT, m, NULL, why, n);
}

/* Text of a reply for messages. */
static const char *reply_text(int rc, const struct amsg *m, const char *why, char *buf, size_t n)
{
    if (rc != ADAPTER_REPLY) {
        snprintf(buf, n, "no usable reply: %s", why);
        return buf;
    }
    snprintf(buf, n, "{ok:%s%s%s%s%s%s%s%s}", m->ok ? "true" : "false", m->busy ? ", busy" : "",
             m->unknown ? ", unknown" : "", m->has_released ? (m->released ? ", released" : ", released:false") : "",
             m->token ? ", token" : "", m->error ? ", error: " : "", m->error ? m->error : "",
             m->has_validity ? "" : "");
    return buf;
}

/* Acquire res; returns a malloc'd token or NULL (detail in buf). */
static char *grant(struct at *t, const char *res, int64_t ttl_ms, int64_t *validity_ms, char *buf,
                   size_t n)
{
    struct amsg m;
    char why[300];
    int rc = req(t, AOP_ACQUIRE, res, NULL, ttl_ms, &m, why, sizeof(why));
    if (rc == ADAPTER_REPLY && m.ok) {
        char *tok = strdup(m.token);
        if (validity_ms)
            *validity_ms = m.validity_ns / LS_NS_PER_MS;
        amsg_free(&m);
        return tok;
    }
    reply_text(rc, &m, why, buf, n);
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    return NULL;
}

/* Release; returns 1 released, 0 released:false, -1 anything else. */
static int release(struct at *t, const char *res, const char *tok, char *buf, size_t n)
{
    struct amsg m;
    char why[300];
    int rc = req(t, AOP_RELEASE, res, tok, -1, &m, why, sizeof(why));
    reply_text(rc, &m, why, buf, n);
    int r = -1;
    if (rc == ADAPTER_REPLY && m.ok)
        r = m.released ? 1 : 0;
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    return r;
}

/* Acquire expecting busy; returns 1 when busy:true came back. */
static int expect_busy(struct at *t, const char *res, char *buf, size_t n)
{
    struct amsg m;
    char why[300];
    int rc = req(t, AOP_ACQUIRE, res, NULL, 2000, &m, why, sizeof(why));
    reply_text(rc, &m, why, buf, n);
    int busy = rc == ADAPTER_REPLY && !m.ok && m.busy;
    if (rc == ADAPTER_REPLY && m.ok) { /* granted twice: give it back */
        char b2[200];
        release(t, res, m.token, b2, sizeof(b2));
    }
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    return busy;
}

/* Put (or clear, rule NULL) a rule on every link of the adapter. */
static int link_rule(struct at *t, int id, unsigned what, const struct proxy_rule *rule)
{
    struct ls_err err = {0};
    uint8_t dirs[PROXY_MAX_NODES];
    for (int i = 0; i < t->nnodes; i++)
        dirs[i] = PROXY_BOTH;
    int rc = rule ? proxy_fault_set(t->px, id, what, rule, dirs, NULL, &err)
                  : proxy_fault_clear(t->px, id, &err);
    if (rc < 0)
        fprintf(stderr, "lockstorm: adapter-test: proxy: %s\n", err.msg);
    return rc;
}

/* ---- the checks ---- */

static void check_grant_busy_release(struct at *t)
{
    char buf[400];
    const char *res = "lockstorm:at:grant";
    int64_t validity = 0;
    char *tok = grant(t, res, 2000, &validity, buf, sizeof(buf));
    if (!tok) {
        report(t, 0, "grant", "acquire of a free resource: %s", buf);
        skip("busy while held", "no grant");
        skip("release", "no grant");
        return;
    }
    report(t, validity > 0 && validity <= 2000, "grant", "token '%.24s', validity_ms %lld (ttl 2000)",
           tok, (long long)validity);
    report(t, expect_busy(t, res, buf, sizeof(buf)), "busy while held",
           "second acquire answered %s", buf);
    int r = release(t, res, tok, buf, sizeof(buf));
    free(tok);
    char buf2[400] = "";
    char *again = r == 1 ? grant(t, res, 2000, NULL, buf2, sizeof(buf2)) : NULL;
    report(t, r == 1 && again, "release", "released:true expected, got %s%s%s", buf,
           r == 1 && !again ? "; but the resource is not free afterwards: " : "", buf2);
    if (again)
        release(t, res, again, buf, sizeof(buf));
    free(again);
}

static void check_stale_release(struct at *t)
{
    if (t->caps & APROTO_CAP_AUTO_RENEW) {
        skip("release by a stale token", "auto_renew: grants do not expire while held (turn "
                                         "the adapter's auto-renewal off to run it)");
        return;
    }
    char buf[400];
    const char *res = "lockstorm:at:stale";
    char *a = grant(t, res, 200, NULL, buf, sizeof(buf));
    if (!a) {
        report(t, 0, "release by a stale token", "first acquire: %s", buf);
        return;
    }
    ls_sleep_ns(450 * LS_NS_PER_MS); /* past a's ttl */
    char *b = grant(t, res, 5000, NULL, buf, sizeof(buf));
    if (!b) {
        report(t, 0, "release by a stale token", "acquire after the first grant expired: %s", buf);
        release(t, res, a, buf, sizeof(buf));
        free(a);
        return;
    }
    int r = release(t, res, a, buf, sizeof(buf));
    char busy[300];
    int still = expect_busy(t, res, busy, sizeof(busy));
    report(t, r == 0 && still, "release by a stale token",
           "expired grant's release: %s (released:false expected)%s%s", buf,
           still ? "" : "; the newer grant was freed by it: ", still ? "" : busy);
    release(t, res, b, buf, sizeof(buf));
    free(a);
    free(b);
}

static void check_renew(struct at *t)
{
    if (!(t->caps & APROTO_CAP_RENEW)) {
        skip("renew", "the adapter does not offer renew");
        skip("renew after expiry", "the adapter does not offer renew");
        return;
    }
    char buf[400];
    const char *res = "lockstorm:at:renew";
    char *tok = grant(t, res, 400, NULL, buf, sizeof(buf));
    if (!tok) {
        report(t, 0, "renew", "acquire: %s", buf);
    } else {
        struct amsg m;
        char why[300];
        int rc = req(t, AOP_RENEW, res, tok, 3000, &m, why, sizeof(why));
        reply_text(rc, &m, why, buf, sizeof(buf));
        int ok = rc == ADAPTER_REPLY && m.ok && m.validity_ns > 0;
        if (rc == ADAPTER_REPLY)
            amsg_free(&m);
        ls_sleep_ns(700 * LS_NS_PER_MS); /* past the first ttl */
        char busy[300];
        int still = ok && expect_busy(t, res, busy, sizeof(busy));
        report(t, ok && still, "renew", "renew to 3000ms answered %s%s%s", buf,
               ok && !still ? "; but the lock expired at its first ttl: " : "", ok && !still ? busy : "");
        release(t, res, tok, buf, sizeof(buf));
        free(tok);
    }
    if (t->caps & APROTO_CAP_AUTO_RENEW) {
        skip("renew after expiry", "auto_renew: grants do not expire while held");
        return;
    }
    res = "lockstorm:at:renew-late";
    tok = grant(t, res, 200, NULL, buf, sizeof(buf));
    if (!tok) {
        report(t, 0, "renew after expiry", "acquire: %s", buf);
        return;
    }
    ls_sleep_ns(450 * LS_NS_PER_MS);
    struct amsg m;
    char why[300];
    int rc = req(t, AOP_RENEW, res, tok, 2000, &m, why, sizeof(why));
    reply_text(rc, &m, why, buf, sizeof(buf));
    int refused = rc == ADAPTER_REPLY && !m.ok;
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    report(t, refused, "renew after expiry", "renew of an expired grant answered %s (ok:false expected)",
           buf);
    release(t, res, tok, buf, sizeof(buf));
    free(tok);
}

/* The classic extend bug: A's lease ran out and B holds the lock when A
 * renews with its stale token. A correct adapter refuses (ok:false) and
 * leaves B's lease alone: the lock stays B's and ends at B's own ttl. One
 * whose renew is an unconditional PEXPIRE finds the key (B's) and answers
 * ok:true: A believes it holds the lock while B does, and B's lease now
 * ends at A's ttl. Only adapters that offer renew; not with auto_renew
 * (grants do not expire while held). */
static void check_stale_renew(struct at *t)
{
    const char *name = "renew by a stale token";
    if (!(t->caps & APROTO_CAP_RENEW)) {
        skip(name, "the adapter does not offer renew");
        return;
    }
    if (t->caps & APROTO_CAP_AUTO_RENEW) {
        skip(name, "auto_renew: grants do not expire while held (turn the adapter's "
                   "auto-renewal off to run it)");
        return;
    }
    enum { A_TTL = 200, B_TTL = 1000, STALE_TTL = 30000, SLACK = 400 };
    char buf[400];
    const char *res = "lockstorm:at:stale-renew";
    char *a = grant(t, res, A_TTL, NULL, buf, sizeof(buf));
    if (!a) {
        report(t, 0, name, "first acquire: %s", buf);
        return;
    }
    ls_sleep_ns((A_TTL + 250) * LS_NS_PER_MS); /* past a's ttl */
    int64_t b_at = ls_now_ns();
    char *b = grant(t, res, B_TTL, NULL, buf, sizeof(buf));
    if (!b) {
        report(t, 0, name, "acquire after the first grant expired: %s", buf);
        release(t, res, a, buf, sizeof(buf));
        free(a);
        return;
    }
    struct amsg m;
    char why[300], renew[400], busy[300], after[400] = "";
    int rc = req(t, AOP_RENEW, res, a, STALE_TTL, &m, why, sizeof(why));
    reply_text(rc, &m, why, renew, sizeof(renew));
    int refused = rc == ADAPTER_REPLY && !m.ok;
    int accepted = rc == ADAPTER_REPLY && m.ok;
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    int still_b = expect_busy(t, res, busy, sizeof(busy)); /* the lock is still b's */
    /* b's lease must end at b's own ttl, not at the stale renew's */
    int64_t left = b_at + (B_TTL + SLACK) * LS_NS_PER_MS - ls_now_ns();
    if (left > 0)
        ls_sleep_ns(left);
    char *c = grant(t, res, 2000, NULL, after, sizeof(after));
    if (accepted)
        report(t, 0, name, "renew with an expired grant's token while another client held the "
               "lock answered %s: the renew does not check the token (an unconditional "
               "PEXPIRE?): the old holder believes it holds the lock, and the new holder's "
               "lease %s", renew, c ? "ended at its ttl all the same"
                                   : "was extended to the stale renew's ttl");
    else
        report(t, refused && still_b && c, name,
               "stale renew answered %s (ok:false expected)%s%s%s%s", renew,
               still_b ? "" : "; the newer grant was no longer held after it: ",
               still_b ? "" : busy,
               c ? "" : "; the newer grant's lease did not end at its ttl (extended by the stale "
                        "renew?): ", c ? "" : after);
    if (c)
        release(t, res, c, buf, sizeof(buf));
    else
        release(t, res, b, buf, sizeof(buf));
    free(a);
    free(b);
    free(c);
}

/* Extension `stall` (adapters that list it): a grant held, a 400 ms stall
 * answered ok with stalled_ms near 400 and no sooner, and the adapter
 * answers the next request (the release) as before. */
static void check_stall(struct at *t)
{
    const char *name = "stall (extension)";
    if (!(t->caps & APROTO_CAP_STALL)) {
        skip(name, "the adapter does not list 'stall' in its caps");
        return;
    }
    char buf[400], why[300];
    const char *res = "lockstorm:at:stall";
    char *tok = grant(t, res, 2000, NULL, buf, sizeof(buf));
    if (!tok) {
        report(t, 0, name, "the grant before the stall: %s", buf);
        return;
    }
    struct amsg m;
    int64_t t0 = ls_now_ns();
    int rc = adapter_stall(&t->ad, 400, 400 * LS_NS_PER_MS + REQ_TIMEOUT, &m, NULL, why,
                           sizeof(why));
    double took = (double)(ls_now_ns() - t0) / 1e6;
    double stalled = rc == ADAPTER_REPLY && m.ok ? (double)m.stalled_ns / 1e6 : -1;
    reply_text(rc, &m, why, buf, sizeof(buf));
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    int ok = stalled >= 395 && stalled <= took + 1 && took >= 395 && took < 400 + 1000;
    int rel = release(t, res, tok, buf + strlen(buf), sizeof(buf) - strlen(buf));
    free(tok);
    if (!ok)
        report(t, 0, name, "{\"op\":\"stall\",\"ms\":400} answered %s after %.0fms (stalled_ms "
                           "400 or a little more expected, answered after it)", buf, took);
    else
        report(t, rel == 1, name, "stalled_ms %.1f, answered after %.0fms; the release after it "
                                  "%s", stalled, took, rel == 1 ? "released" : "failed");
}

/* Extension `renewed` (adapters that list it with auto_renew): a grant
 * held for 3 TTLs is renewed by the library, each renewal reported as a
 * `renewed` event naming the grant with a validity in (0, ttl]. */
static void check_renewed(struct at *t)
{
    const char *name = "renewed (extension)";
    if (!(t->caps & APROTO_CAP_RENEWED) || !(t->caps & APROTO_CAP_AUTO_RENEW)) {
        skip(name, "the adapter does not list both 'renewed' and 'auto_renew' in its caps");
        return;
    }
    char buf[400];
    const char *res = "lockstorm:at:renewed";
    const int64_t ttl = 300;
    char *tok = grant(t, res, ttl, NULL, buf, sizeof(buf));
    if (!tok) {
        report(t, 0, name, "the grant: %s", buf);
        return;
    }
    int n = 0, bad = 0;
    double last = 0;
    int64_t until = ls_now_ns() + 3 * ttl * LS_NS_PER_MS;
    for (int k = 0; k < 1000 && ls_now_ns() < until; k++) {
        struct amsg ev;
        int r = adapter_wait_event(&t->ad, until, &ev);
        if (r == 3) {
            if (strcmp(ev.res, res) == 0 && strcmp(ev.token, tok) == 0) {
                n++;
                last = (double)ev.validity_ns / 1e6;
                bad |= ev.validity_ns <= 0 || ev.validity_ns > ttl * LS_NS_PER_MS;
            }
            amsg_free(&ev);
        } else if (r == 1) {
            amsg_free(&ev);
        } else if (r == 2) {
            break;
        }
    }
    int rel = release(t, res, tok, buf, sizeof(buf));
    free(tok);
    report(t, n >= 1 && !bad && rel == 1, name,
           "%d renewed event%s in %lldms of a %lldms grant%s%.1fms%s; release %s", n,
           n == 1 ? "" : "s", (long long)(3 * ttl), (long long)ttl,
           n ? ", last validity " : "", n ? last : 0.0, bad ? " (out of (0, ttl])" : "",
           rel == 1 ? "released" : buf);
}

static void check_unknown_op(struct at *t)
{
    struct amsg m;
    char why[300], buf[400];
    int rc = adapter_request_members(&t->ad, "\"op\":\"frobnicate\",\"res\":\"lockstorm:at:x\"", 0,
                                     REQ_TIMEOUT, &m, NULL, why, sizeof(why));
    reply_text(rc, &m, why, buf, sizeof(buf));
    int ok = rc == ADAPTER_REPLY && !m.ok && m.error;
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    report(t, ok, "unknown op", "{\"op\":\"frobnicate\"} answered %s (ok:false with an error expected)",
           buf);
}

/* The `clock` extension, when the adapter claims it: a reply with a
 * plausible wall_ms (milliseconds since the epoch) within 5 s of the
 * harness's clock (no clock fault runs here: the runtime's clock is the
 * true one). */
static void check_clock(struct at *t)
{
    if (!(t->caps & APROTO_CAP_CLOCK)) {
        skip("clock extension", "the adapter does not list 'clock' in its caps");
        return;
    }
    struct adapter_clock ck;
    char why[300];
    int rc = adapter_clock(&t->ad, REQ_TIMEOUT, &ck, why, sizeof(why));
    if (rc != ADAPTER_REPLY) {
        report(t, 0, "clock extension", "{\"op\":\"clock\"}: %s", why);
        return;
    }
    double mid = (double)(ck.real_before + ck.real_after) / 2e6;
    double off = ck.wall_ms - mid;
    report(t, off > -5000 && off < 5000, "clock extension",
           "wall_ms %.1f, %.1f ms from the harness's clock%s", ck.wall_ms, off,
           ck.has_mono ? ", with mono_ms" : "");
}

static void check_garbage(struct at *t)
{
    struct adapter_stats before, after;
    adapter_get_stats(&t->ad, &before);
    const char junk[] = "this is not JSON {\"id\":\n";
    int w = adapter_send_raw(&t->ad, junk, sizeof(junk) - 1);
    char buf[400];
    const char *res = "lockstorm:at:garbage";
    char *tok = w == 0 ? grant(t, res, 2000, NULL, buf, sizeof(buf)) : NULL;
    adapter_get_stats(&t->ad, &after);
    t->proto_allowed += after.protocol_errors - before.protocol_errors;
    report(t, tok && adapter_alive(&t->ad), "garbage line",
           tok ? "ignored; the next request was answered" : "the next request after it: %s",
           tok ? "" : (w ? "the adapter is gone" : buf));
    if (tok)
        release(t, res, tok, buf, sizeof(buf));
    free(tok);
}

/* A reply slower than the harness's timeout: the harness gives up, the
 * late reply must still come (the adapter's own command timeout) and is
 * dropped, and the next request gets its own reply. */
static void check_slow(struct at *t)
{
    struct proxy_rule slow = {.delay_ns = 1500 * LS_NS_PER_MS};
    if (link_rule(t, 1, PROXY_SET_LATENCY, &slow) < 0) {
        report(t, 0, "slow reply beyond timeout", "could not slow the link down");
        return;
    }
    struct adapter_stats before, after;
    adapter_get_stats(&t->ad, &before);
    struct amsg m;
    char why[300];
    int rc = adapter_request(&t->ad, AOP_ACQUIRE, "lockstorm:at:slow", NULL, 5000 * LS_NS_PER_MS,
                             300 * LS_NS_PER_MS, &m, NULL, why, sizeof(why));
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    link_rule(t, 1, 0, NULL);
    /* the late reply: the adapter must answer at all (bounded wait) */
    int64_t deadline = ls_now_ns() + 8 * LS_NS_PER_S;
    do {
        struct amsg ev;
        if (adapter_wait_event(&t->ad, ls_now_ns() + 100 * LS_NS_PER_MS, &ev) == 1)
            amsg_free(&ev);
        adapter_get_stats(&t->ad, &after);
    } while (after.late_replies == before.late_replies && ls_now_ns() < deadline);
    /* the next request gets its own reply (bytes still queued on the slow
     * link may hold a grant back a little: a few tries) */
    char buf[400] = "";
    char *tok = NULL;
    int answered = 0;
    for (int k = 0; k < 6 && !tok; k++) {
        if (k)
            ls_sleep_ns(500 * LS_NS_PER_MS);
        struct amsg r;
        char w2[300];
        int rc2 = req(t, AOP_ACQUIRE, "lockstorm:at:after-slow", NULL, 2000, &r, w2, sizeof(w2));
        reply_text(rc2, &r, w2, buf, sizeof(buf));
        answered |= rc2 == ADAPTER_REPLY;
        if (rc2 == ADAPTER_REPLY && r.ok)
            tok = strdup(r.token);
        if (rc2 == ADAPTER_REPLY)
            amsg_free(&r);
    }
    int late = after.late_replies > before.late_replies;
    report(t, rc == ADAPTER_TIMEOUT && late && answered, "slow reply beyond timeout",
           "%s; late reply %s; next requests %s",
           rc == ADAPTER_TIMEOUT ? "timed out at 300ms as it should"
                                 : "answered within 300ms through a 1.5s link (?)",
           late ? "read and dropped" : "never came within 8s (no command timeout?)",
           tok ? "answered, granted" : answered ? "answered, not granted within 3s" : buf);
    if (tok)
        release(t, "lockstorm:at:after-slow", tok, buf, sizeof(buf));
    free(tok);
    /* the slow acquire may have been granted: let it expire unseen */
}

/* Under a blackhole partition the adapter must still answer (its library
 * needs a command timeout), or a workload's partition hangs it forever. */
static void check_blackhole(struct at *t)
{
    struct proxy_rule cut = {.partition = PROXY_PART_BLACKHOLE};
    if (link_rule(t, 2, PROXY_SET_PARTITION, &cut) < 0) {
        report(t, 0, "answers under a partition", "could not cut the link");
        return;
    }
    struct amsg m;
    char why[300], buf[400];
    int64_t t0 = ls_now_ns();
    int rc = adapter_request(&t->ad, AOP_ACQUIRE, "lockstorm:at:cut", NULL, 2000 * LS_NS_PER_MS,
                             10 * LS_NS_PER_S, &m, NULL, why, sizeof(why));
    double took = (double)(ls_now_ns() - t0) / 1e9;
    reply_text(rc, &m, why, buf, sizeof(buf));
    int ok = rc == ADAPTER_REPLY && !m.ok;
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    link_rule(t, 2, 0, NULL);
    report(t, ok, "answers under a partition", "acquire through a blackholed link answered %s after %.1fs",
           buf, took);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: lockstorm adapter-test [--nodes N] [--options JSON] [--keep] -- COMMAND "
                    "[ARGS...]\n"
                    "  checks an adapter against docs/protocol.md on a scratch cluster\n");
    return 2;
}

int adapter_test_main(int argc, char **argv)
{
    int nnodes = 1, keep = 0, i;
    const char *options = "{}";
    for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > PROXY_MAX_NODES)
                return usage();
            nnodes = (int)v;
        } else if (!strcmp(argv[i], "--options") && i + 1 < argc) {
            options = argv[++i];
        } else if (!strcmp(argv[i], "--keep")) {
            keep = 1;
        } else {
            return usage();
        }
    }
    if (i >= argc - 1)
        return usage();
    char *const *cmd = argv + i + 1;
    struct json *oj = NULL;
    char why[128];
    if (json_parse(options, strlen(options), &oj, why, sizeof(why)) < 0 || oj->type != JSON_OBJ) {
        json_free(oj);
        fprintf(stderr, "lockstorm: adapter-test: --options must be a JSON object\n");
        return 2;
    }
    json_free(oj);

    char dir[4096]; /* under $TMPDIR, as the spills of check --history */
    const char *td = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/lockstorm-adapter-test-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "lockstorm: adapter-test: mkdtemp: %s\n", strerror(errno));
        return 3;
    }
    /* Contained like a run (docs/reliability.md "Nothing escapes the
     * run"): every process started here inherits LOCKSTORM_RUN=<a fresh
     * id> and this process is their child subreaper, so a process the
     * adapter leaves behind (in a group or session of its own) is found
     * and killed by pid at the end, and reported. */
    struct proc_contain box;
    char tagid[33];
    unsigned char idb[16];
    int contained = ls_random_bytes(idb, sizeof(idb), "adapter-test id", NULL) == 0;
    if (contained) {
        for (int b = 0; b < 16; b++)
            snprintf(tagid + 2 * b, 3, "%02x", idb[b]);
        proc_contain_begin(&box, tagid);
    }
    int adapter_ran = 0;
    struct at t;
    memset(&t, 0, sizeof(t));
    t.nnodes = nnodes;
    struct cluster cl;
    memset(&cl, 0, sizeof(cl));
    struct ls_err err = {0};
    int code = 0;
    /* the scratch nodes are protected like a run's (docs/reliability.md
     * "Security"); the adapter never needs the password: the proxy
     * authenticates its connections */
    char pw[LS_PASSWORD_MAX];
    int rc = ls_password_new(pw, sizeof(pw), &err);
    if (rc == 0)
        rc = cluster_start(&cl, dir, nnodes, PERSIST_NONE, 0, pw, NULL, NULL, &err);
    ls_wipe(pw, sizeof(pw));
    if (rc < 0) {
        fprintf(stderr, "lockstorm: adapter-test: %s\n", err.msg);
        code = 3;
        goto out;
    }
    struct lock_node nodes[PROXY_MAX_NODES];
    memset(nodes, 0, sizeof(nodes));
    for (int n = 0; n < nnodes; n++) {
        snprintf(nodes[n].host, sizeof(nodes[n].host), "%s", cl.nodes[n].host);
        nodes[n].port = cl.nodes[n].port;
        memcpy(nodes[n].password, cl.nodes[n].password, sizeof(nodes[n].password));
    }
    char plog[600];
    snprintf(plog, sizeof(plog), "%s/proxy.log", dir);
    struct proxy_config pc = {.nworkers = 1, .nnodes = nnodes, .nodes = nodes, .log_path = plog,
                              .seed = 1};
    rc = proxy_start(&pc, &t.px, &err);
    ls_wipe(nodes, sizeof(nodes)); /* the proxy process has its copy */
    if (rc < 0) {
        fprintf(stderr, "lockstorm: adapter-test: %s\n", err.msg);
        code = 3;
        goto out;
    }
    char errp[600], logp[600];
    snprintf(errp, sizeof(errp), "%s/adapter.stderr", dir);
    snprintf(logp, sizeof(logp), "%s/adapter.log", dir);
    struct adapter_config ac = {.argv = cmd, .stderr_path = errp, .log_path = logp, .worker = 0,
                                .nodes = proxy_worker_nodes(t.px, 0), .nnodes = nnodes,
                                .options_json = options, .own_group = 1};
    printf("adapter-test: %s on %d node%s (scratch directory %s)\n", cmd[0], nnodes,
           nnodes == 1 ? "" : "s", dir);
    int64_t t0 = ls_now_ns();
    if (adapter_start(&t.ad, &ac, &err) < 0) {
        report(&t, 0, "handshake", "%s", err.msg);
        adapter_close(&t.ad);
        goto summary;
    }
    adapter_ran = 1;
    t.caps = t.ad.caps;
    char caps[64];
    aproto_caps_text(t.caps, caps, sizeof(caps));
    report(&t, 1, "handshake", "%s %s, caps %s, in %.2fs", t.ad.name, t.ad.version, caps,
           (double)(ls_now_ns() - t0) / 1e9);
    check_grant_busy_release(&t);
    check_stale_release(&t);
    check_renew(&t);
    check_stale_renew(&t);
    check_stall(&t);
    check_renewed(&t);
    check_unknown_op(&t);
    check_clock(&t);
    check_garbage(&t);
    check_slow(&t);
    check_blackhole(&t);
    struct adapter_stats st;
    adapter_get_stats(&t.ad, &st);
    uint64_t extra = st.protocol_errors - t.proto_allowed;
    report(&t, extra == 0, "no protocol errors", "%llu protocol errors%s%s",
           (unsigned long long)extra, extra ? ", first: " : "", extra ? t.ad.samples[0] : "");
    int64_t b0 = ls_now_ns();
    adapter_close(&t.ad);
    double took = (double)(ls_now_ns() - b0) / 1e9;
    report(&t, strncmp(t.ad.exit_text, "exited", 6) == 0 && took < 1.5, "bye",
           "%s %.2fs after bye", t.ad.exit_text, took);
summary:
    proxy_stop(t.px);
    t.px = NULL;
    cluster_stop(&cl);
    if (contained) {
        /* what is still tagged now outlived the adapter's bye and its group */
        int left = proc_contain_sweep(&box, 2 * LS_NS_PER_S);
        if (adapter_ran && left)
            report(&t, 0, "nothing left behind",
                   "%d process%s the adapter started outlived it (left its process group or "
                   "session); killed by pid", left, left == 1 ? "" : "es");
        else if (adapter_ran)
            report(&t, 1, "nothing left behind", "no process the adapter started outlived it");
    }
    printf("adapter-test: %d passed, %d failed\n", t.passed, t.failed);
    if (t.failed) {
        printf("adapter-test: the adapter's stderr: %s, its session log: %s\n", errp, logp);
        keep = 1;
        code = 1;
    }
out:
    proxy_stop(t.px);
    cluster_stop(&cl);
    if (contained) {
        proc_contain_sweep(&box, 2 * LS_NS_PER_S);
        proc_contain_end(&box);
    }
    if (!keep)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return code;
}
