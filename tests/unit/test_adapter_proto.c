/*
 * test_adapter_proto.c: the external adapter protocol (docs/protocol.md):
 * the line splitter (partial, CRLF, huge lines), message parsing (valid,
 * invalid, unknown fields, wrong types), reply checks and outcomes, request
 * writing; the `external` options through the workload loader (argv list,
 * adapter mapping, echo round trip); and the session layer (locks/adapter.c)
 * against the misbehaving fixture tests/fixtures/bad_adapter.py (wrong ids,
 * silence, garbage, an exit), all bounded in time.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/workload.h"
#include "locks/adapter.h"
#include "locks/adapter_proto.h"
#include "locks/external.h"
#include "tests/unit/testing.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

/* ---- lines ---- */

static int next(struct aproto_lines *l, char *out, size_t n)
{
    char *line;
    size_t len;
    int r = aproto_lines_next(l, &line, &len);
    if (r == 1) {
        snprintf(out, n, "%s", line);
        free(line);
    } else {
        snprintf(out, n, "%zu", len);
    }
    return r;
}

static void test_lines(void)
{
    struct aproto_lines l;
    char buf[128];
    aproto_lines_init(&l, 16);
    /* a line split over three feeds, then two in one feed, one with CRLF */
    aproto_lines_feed(&l, "{\"a\"", 4);
    CHECK(next(&l, buf, sizeof(buf)) == 0);
    aproto_lines_feed(&l, ":1", 2);
    CHECK(next(&l, buf, sizeof(buf)) == 0);
    aproto_lines_feed(&l, "}\nxy\r\nz", 7);
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "{\"a\":1}");
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "xy");
    CHECK(next(&l, buf, sizeof(buf)) == 0); /* "z" is partial */
    aproto_lines_feed(&l, "\n\n", 2);
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "z");
    CHECK(next(&l, buf, sizeof(buf)) == 1); /* an empty line is a line */
    CHECK_STR(buf, "");
    /* exactly max bytes is fine */
    aproto_lines_feed(&l, "0123456789abcdef\n", 17);
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "0123456789abcdef");
    /* overlong within one feed: reported once, the next line survives */
    aproto_lines_feed(&l, "0123456789abcdefXYZ\nok\n", 23);
    CHECK(next(&l, buf, sizeof(buf)) == -1);
    CHECK_STR(buf, "19");
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "ok");
    /* overlong over many feeds (a huge line): reported once, as soon as it
     * is too long; its rest is dropped through its '\n' */
    for (int i = 0; i < 100; i++) {
        aproto_lines_feed(&l, "xxxxxxxxxx", 10);
        int r = next(&l, buf, sizeof(buf));
        CHECK(r == (i == 1 ? -1 : 0));
    }
    CHECK(l.len == 0);
    aproto_lines_feed(&l, "tail\n{\"b\":2}\n", 13);
    CHECK(next(&l, buf, sizeof(buf)) == 1);
    CHECK_STR(buf, "{\"b\":2}");
    CHECK(next(&l, buf, sizeof(buf)) == 0);
    aproto_lines_free(&l);
    aproto_lines_free(NULL);
}

/* ---- messages ---- */

static int parse(const char *s, struct amsg *m, char *why)
{
    return aproto_parse(s, strlen(s), m, why, 256);
}

static void test_parse_valid(void)
{
    struct amsg m;
    char why[256];
    REQUIRE(parse("{\"id\":1,\"ok\":true,\"token\":\"a1b2\",\"fence\":17,\"validity_ms\":295}", &m, why) == 0);
    CHECK(m.kind == AMSG_REPLY && m.id == 1 && m.ok && !m.busy && !m.unknown);
    CHECK_STR(m.token, "a1b2");
    CHECK(m.has_fence && m.fence == 17);
    CHECK(m.has_validity && m.validity_ns == 295 * LS_NS_PER_MS);
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) == 0);
    int ek;
    CHECK(aproto_outcome(AOP_ACQUIRE, &m, &ek) == LOCK_OK && ek == EVE_NONE);
    amsg_free(&m);

    /* fence null, fractional and negative validity, unknown fields ignored */
    REQUIRE(parse("{\"id\":2,\"ok\":true,\"token\":\"t\",\"fence\":null,\"validity_ms\":-1.5,"
                  "\"extra\":{\"nested\":[1,2]},\"note\":\"hi\"}", &m, why) == 0);
    CHECK(!m.has_fence && m.validity_ns == -1500000);
    amsg_free(&m);

    REQUIRE(parse("{\"id\":3,\"ok\":false,\"busy\":true}", &m, why) == 0);
    CHECK(aproto_outcome(AOP_ACQUIRE, &m, &ek) == LOCK_BUSY);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":4,\"ok\":false,\"error\":\"ECONNRESET\",\"unknown\":true}", &m, why) == 0);
    CHECK(aproto_outcome(AOP_ACQUIRE, &m, &ek) == LOCK_UNKNOWN && ek == EVE_CONN);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":4,\"ok\":false,\"error\":\"Command timed out\",\"unknown\":true}", &m, why) == 0);
    CHECK(aproto_outcome(AOP_RELEASE, &m, &ek) == LOCK_UNKNOWN && ek == EVE_TIMEOUT);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":5,\"ok\":false,\"error\":\"READONLY You can't write\"}", &m, why) == 0);
    CHECK(aproto_outcome(AOP_ACQUIRE, &m, &ek) == LOCK_FAIL && ek == EVE_REPLY);
    CHECK_STR(m.error, "READONLY You can't write");
    amsg_free(&m);
    REQUIRE(parse("{\"id\":6,\"ok\":true,\"released\":false}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_RELEASE, &m, why, sizeof(why)) == 0);
    CHECK(aproto_outcome(AOP_RELEASE, &m, &ek) == LOCK_NOT_OWNER);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":7,\"ok\":true,\"released\":true}", &m, why) == 0);
    CHECK(aproto_outcome(AOP_RELEASE, &m, &ek) == LOCK_OK);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":8,\"ok\":true,\"validity_ms\":300}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_RENEW, &m, why, sizeof(why)) == 0);
    CHECK(aproto_outcome(AOP_RENEW, &m, &ek) == LOCK_OK);
    amsg_free(&m);

    REQUIRE(parse("{\"op\":\"hello\",\"protocol\":1,\"name\":\"redlock\",\"version\":\"5.0.0-beta.2\","
                  "\"caps\":[\"ttl\",\"renew\",\"fencing\",\"auto_renew\",\"teleport\"]}", &m, why) == 0);
    CHECK(m.kind == AMSG_HELLO && m.protocol == 1);
    CHECK_STR(m.name, "redlock");
    CHECK_STR(m.version, "5.0.0-beta.2");
    CHECK(m.caps == (APROTO_CAP_TTL | APROTO_CAP_RENEW | APROTO_CAP_FENCING | APROTO_CAP_AUTO_RENEW));
    CHECK_STR(m.unknown_caps, "teleport");
    char caps[64];
    aproto_caps_text(m.caps, caps, sizeof(caps));
    CHECK_STR(caps, "ttl,renew,fencing,auto_renew");
    aproto_caps_text(0, caps, sizeof(caps));
    CHECK_STR(caps, "-");
    amsg_free(&m);

    REQUIRE(parse("{\"event\":\"lost\",\"res\":\"lockstorm:r0\",\"token\":\"a1b2\"}", &m, why) == 0);
    CHECK(m.kind == AMSG_LOST);
    CHECK_STR(m.res, "lockstorm:r0");
    CHECK_STR(m.token, "a1b2");
    amsg_free(&m);
    REQUIRE(parse("  {\"event\":\"log\",\"msg\":\"extend failed: quorum not reached\"}  ", &m, why) == 0);
    CHECK(m.kind == AMSG_LOG);
    CHECK_STR(m.msg, "extend failed: quorum not reached");
    amsg_free(&m);
}

static void bad(const char *line, const char *want);

/* The revision-2 extensions stall and renewed (docs/protocol.md): the
 * caps, the stall reply's stalled_ms, the renewed event and their errors. */
static void test_extensions(void)
{
    struct amsg m;
    char why[256];
    int ek;
    REQUIRE(parse("{\"op\":\"hello\",\"protocol\":1,\"name\":\"n\",\"version\":\"1\","
                  "\"caps\":[\"ttl\",\"auto_renew\",\"stall\",\"renewed\"]}", &m, why) == 0);
    CHECK(m.caps == (APROTO_CAP_TTL | APROTO_CAP_AUTO_RENEW | APROTO_CAP_STALL | APROTO_CAP_RENEWED));
    CHECK_STR(m.unknown_caps, "");
    char caps[64];
    aproto_caps_text(m.caps, caps, sizeof(caps));
    CHECK_STR(caps, "ttl,auto_renew,stall,renewed");
    amsg_free(&m);

    /* the stall reply */
    REQUIRE(parse("{\"id\":8,\"ok\":true,\"stalled_ms\":401.2}", &m, why) == 0);
    CHECK(m.kind == AMSG_REPLY && m.has_stalled && m.stalled_ns == 401200000);
    CHECK(aproto_check_reply(AOP_STALL, &m, why, sizeof(why)) == 0);
    CHECK(aproto_outcome(AOP_STALL, &m, &ek) == LOCK_OK);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":8,\"ok\":true}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_STALL, &m, why, sizeof(why)) < 0 && strstr(why, "'stalled_ms'"));
    amsg_free(&m);
    REQUIRE(parse("{\"id\":8,\"ok\":false,\"error\":\"unknown op 'stall'\"}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_STALL, &m, why, sizeof(why)) == 0);
    CHECK(aproto_outcome(AOP_STALL, &m, &ek) == LOCK_FAIL);
    amsg_free(&m);
    bad("{\"id\":8,\"ok\":true,\"stalled_ms\":\"400\"}", "'stalled_ms' must be");
    bad("{\"id\":8,\"ok\":true,\"stalled_ms\":-3}", "'stalled_ms' must not be negative");

    /* the renewed event: all three fields, validity as a number of ms */
    REQUIRE(parse("{\"event\":\"renewed\",\"res\":\"lockstorm:r0\",\"token\":\"a1b2\","
                  "\"validity_ms\":300,\"extra\":1}", &m, why) == 0);
    CHECK(m.kind == AMSG_RENEWED);
    CHECK_STR(m.res, "lockstorm:r0");
    CHECK_STR(m.token, "a1b2");
    CHECK(m.has_validity && m.validity_ns == 300 * LS_NS_PER_MS);
    CHECK(m.read_ns == 0);
    amsg_free(&m);
    REQUIRE(parse("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":-0.5}",
                  &m, why) == 0);
    CHECK(m.validity_ns == -500000);
    amsg_free(&m);
    bad("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\"}", "needs 'res' and 'token' strings and 'validity_ms'");
    bad("{\"event\":\"renewed\",\"token\":\"t\",\"validity_ms\":3}", "needs 'res'");
    bad("{\"event\":\"renewed\",\"res\":\"r\",\"token\":5,\"validity_ms\":3}", "'token' must be a string");
    bad("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":\"3\"}",
        "'validity_ms' must be");
    /* revision 3: the instant of writing on the host's monotonic clock */
    CHECK(m.written_ns == 0);
    REQUIRE(parse("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":3,"
                  "\"host_mono_ms\":81234567.25}", &m, why) == 0);
    CHECK(m.written_ns == 81234567250000);
    amsg_free(&m);
    REQUIRE(parse("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":3,"
                  "\"host_mono_ms\":null}", &m, why) == 0);
    CHECK(m.written_ns == 0);
    amsg_free(&m);
    bad("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":3,\"host_mono_ms\":\"5\"}",
        "'host_mono_ms' must be a positive number");
    bad("{\"event\":\"renewed\",\"res\":\"r\",\"token\":\"t\",\"validity_ms\":3,\"host_mono_ms\":0}",
        "'host_mono_ms' must be a positive number");
}

static void bad(const char *line, const char *want)
{
    struct amsg m;
    char why[256] = "";
    int r = aproto_parse(line, strlen(line), &m, why, sizeof(why));
    CHECKF(r < 0, "accepted: %s", line);
    CHECKF(strstr(why, want) != NULL, "%s: reason '%s' lacks '%s'", line, why, want);
    CHECK(m.token == NULL && m.error == NULL && m.kind == 0);
}

static void test_parse_invalid(void)
{
    bad("", "not JSON");
    bad("{\"id\":1,\"ok\":tru", "not JSON");
    bad("{\"id\":1,\"ok\":true}{}", "not JSON");
    bad("[1,2]", "expected a JSON object");
    bad("\"hello\"", "expected a JSON object");
    bad("{\"id\":\"1\",\"ok\":true}", "'id' must be an integer");
    bad("{\"id\":1.5,\"ok\":true}", "'id' must be an integer");
    bad("{\"id\":1}", "'ok' must be true or false, got nothing");
    bad("{\"id\":1,\"ok\":\"yes\"}", "'ok' must be true or false, got a string");
    bad("{\"id\":1,\"ok\":false,\"busy\":1}", "'busy' must be true or false");
    bad("{\"id\":1,\"ok\":true,\"token\":42,\"validity_ms\":1}", "'token' must be a string");
    bad("{\"id\":1,\"ok\":true,\"token\":\"a\\u0000b\",\"validity_ms\":1}", "NUL");
    bad("{\"id\":1,\"ok\":true,\"token\":\"t\",\"fence\":\"17\"}", "'fence' must be");
    bad("{\"id\":1,\"ok\":true,\"token\":\"t\",\"fence\":-1}", "'fence' must be");
    bad("{\"id\":1,\"ok\":true,\"token\":\"t\",\"fence\":1.5}", "'fence' must be");
    bad("{\"id\":1,\"ok\":true,\"token\":\"t\",\"validity_ms\":\"295\"}", "'validity_ms' must be");
    bad("{\"id\":1,\"ok\":true,\"token\":\"t\",\"validity_ms\":1e300}", "'validity_ms' must be");
    bad("{\"id\":1,\"ok\":false,\"error\":{\"code\":1}}", "'error' must be a string");
    bad("{\"op\":\"acquire\",\"res\":\"x\"}", "unexpected 'op'");
    bad("{\"op\":\"hello\",\"name\":\"x\",\"version\":\"1\",\"caps\":[]}", "'protocol' must be an integer");
    bad("{\"op\":\"hello\",\"protocol\":1,\"version\":\"1\",\"caps\":[]}", "'name' must be a non-empty");
    bad("{\"op\":\"hello\",\"protocol\":1,\"name\":\"\",\"version\":\"1\",\"caps\":[]}", "an empty string");
    bad("{\"op\":\"hello\",\"protocol\":1,\"name\":\"x\",\"version\":\"1\"}", "'caps' must be a list");
    bad("{\"op\":\"hello\",\"protocol\":1,\"name\":\"x\",\"version\":\"1\",\"caps\":\"ttl\"}", "'caps' must be a list");
    bad("{\"op\":\"hello\",\"protocol\":1,\"name\":\"x\",\"version\":\"1\",\"caps\":[1]}", "item 0");
    bad("{\"event\":\"lost\",\"res\":\"r\"}", "needs 'res' and 'token'");
    bad("{\"event\":\"lost\",\"res\":\"r\",\"token\":7}", "'token' must be a string");
    bad("{\"event\":\"log\"}", "needs a 'msg'");
    bad("{\"event\":\"gc\"}", "unknown event 'gc'");
    bad("{\"event\":3}", "'event' must be a string");
    bad("{\"ok\":true}", "neither 'id', 'op' nor 'event'");

    /* shape checks of a parsed reply against its request */
    struct amsg m;
    char why[256];
    REQUIRE(parse("{\"id\":1,\"ok\":true,\"validity_ms\":3}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) < 0 && strstr(why, "'token'"));
    CHECK(aproto_check_reply(AOP_RENEW, &m, why, sizeof(why)) == 0);
    CHECK(aproto_check_reply(AOP_RELEASE, &m, why, sizeof(why)) < 0 && strstr(why, "'released'"));
    amsg_free(&m);
    REQUIRE(parse("{\"id\":1,\"ok\":true,\"token\":\"t\"}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) < 0 && strstr(why, "validity_ms"));
    amsg_free(&m);
    REQUIRE(parse("{\"id\":1,\"ok\":true,\"token\":\"\",\"validity_ms\":3}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) < 0);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":1,\"ok\":true,\"busy\":true,\"token\":\"t\",\"validity_ms\":3}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) < 0 && strstr(why, "busy"));
    amsg_free(&m);
    REQUIRE(parse("{\"id\":1,\"ok\":false}", &m, why) == 0); /* a bare failure is fine */
    CHECK(aproto_check_reply(AOP_ACQUIRE, &m, why, sizeof(why)) == 0);
    amsg_free(&m);
}

static void test_write(void)
{
    struct strbuf sb = STRBUF_INIT;
    struct lock_node nodes[2] = {{.host = "127.0.0.1", .port = 41001},
                                 {.host = "127.0.0.1", .port = 41002}};
    aproto_write_hello(&sb, 3, nodes, 2, "{\"x\":[1]}");
    CHECK_STR(sb_cstr(&sb), "{\"op\":\"hello\",\"protocol\":1,\"worker\":3,\"nodes\":[\"127.0.0.1:41001\","
                            "\"127.0.0.1:41002\"],\"options\":{\"x\":[1]},"
                            "\"extensions\":[\"clock\",\"stall\",\"renewed\"]}\n");
    sb_reset(&sb);
    aproto_write_request(&sb, 9, AOP_ACQUIRE, "lockstorm:r0", NULL, 300 * LS_NS_PER_MS + 1);
    CHECK_STR(sb_cstr(&sb), "{\"id\":9,\"op\":\"acquire\",\"res\":\"lockstorm:r0\",\"ttl_ms\":301}\n");
    sb_reset(&sb);
    aproto_write_request(&sb, 10, AOP_RELEASE, "lockstorm:r0", "a\"b", -1);
    CHECK_STR(sb_cstr(&sb), "{\"id\":10,\"op\":\"release\",\"res\":\"lockstorm:r0\",\"token\":\"a\\\"b\"}\n");
    sb_reset(&sb);
    aproto_write_stall(&sb, 11, 400);
    CHECK_STR(sb_cstr(&sb), "{\"id\":11,\"op\":\"stall\",\"ms\":400}\n");
    sb_reset(&sb);
    aproto_write_bye(&sb);
    CHECK_STR(sb_cstr(&sb), "{\"op\":\"bye\"}\n");
    sb_free(&sb);
    char q[32];
    CHECK_STR(aproto_quote("a\tb", 3, 10, q, sizeof(q)), "a\\x09b");
    CHECK_STR(aproto_quote("abcdefgh", 8, 4, q, sizeof(q)), "abcd...");
}

/* ---- the `record` extension (revision 4: record mode) ---- */

static int parse_ok(const char *line, struct amsg *m)
{
    char why[256] = "";
    int r = aproto_parse(line, strlen(line), m, why, sizeof(why));
    CHECKF(r == 0, "%s: %s", line, why);
    return r;
}

static void test_record(void)
{
    struct amsg m;
    char caps[96];
    REQUIRE(parse_ok("{\"op\":\"hello\",\"protocol\":1,\"name\":\"mine\",\"version\":\"1\","
                     "\"caps\":[\"ttl\",\"record\"]}", &m) == 0);
    CHECK(m.caps & APROTO_CAP_RECORD);
    aproto_caps_text(m.caps, caps, sizeof(caps));
    CHECK_STR(caps, "ttl,record");
    amsg_free(&m);
    REQUIRE(parse_ok("{\"event\":\"record\",\"what\":\"acquired\",\"res\":\"lockstorm:r1\","
                     "\"token\":\"p1\",\"validity_ms\":495.5,\"fence\":7,\"host_mono_ms\":1000.5}",
                     &m) == 0);
    CHECK(m.kind == AMSG_RECORD && m.rec_what == LREC_ACQUIRED);
    CHECK_STR(m.res, "lockstorm:r1");
    CHECK_STR(m.token, "p1");
    CHECK(m.has_validity && m.validity_ns == 495500000);
    CHECK(m.has_fence && m.fence == 7);
    CHECK(m.written_ns == 1000500000);
    amsg_free(&m);
    REQUIRE(parse_ok("{\"event\":\"record\",\"what\":\"acquire_failed\",\"res\":\"r\","
                     "\"unknown\":true,\"error\":\"Timeout reading\"}", &m) == 0);
    CHECK(m.rec_what == LREC_ACQUIRE_FAILED && m.unknown && m.rec_err_kind == EVE_TIMEOUT);
    amsg_free(&m);
    REQUIRE(parse_ok("{\"event\":\"record\",\"what\":\"release_failed\",\"res\":\"r\"}",
                     &m) == 0);
    CHECK(m.rec_err_kind == EVE_REPLY); /* no `unknown`: definitely not released */
    amsg_free(&m);
    REQUIRE(parse_ok("{\"event\":\"record\",\"what\":\"released\",\"res\":\"r\","
                     "\"released\":false}", &m) == 0);
    CHECK(m.rec_what == LREC_RELEASED && m.has_released && !m.released);
    amsg_free(&m);
    REQUIRE(parse_ok("{\"event\":\"record\",\"what\":\"stopped\"}", &m) == 0);
    CHECK(m.rec_what == LREC_STOPPED && m.res == NULL);
    amsg_free(&m);
    bad("{\"event\":\"record\",\"what\":\"grabbed\",\"res\":\"r\"}", "unknown what 'grabbed'");
    bad("{\"event\":\"record\",\"res\":\"r\"}", "'what' must be a string");
    bad("{\"event\":\"record\",\"what\":\"enter\"}", "needs 'res'");
    bad("{\"event\":\"record\",\"what\":\"released\",\"res\":\"r\"}", "needs 'released'");
    bad("{\"event\":\"record\",\"what\":\"acquired\",\"res\":\"r\",\"fence\":-1}",
        "'fence' must be a non-negative integer");
    bad("{\"event\":\"record\",\"what\":\"enter\",\"res\":\"r\",\"host_mono_ms\":-3}",
        "'host_mono_ms' must be a positive number");
    /* the harness's side: hello with the record object, start and stop */
    struct strbuf sb = STRBUF_INIT;
    struct lock_node nodes[1] = {{.host = "127.0.0.1", .port = 41001}};
    aproto_write_hello_record(&sb, 2, nodes, 1, NULL,
                              "{\"res\":[\"lockstorm:r0\"],\"ttl_ms\":500,\"duration_ms\":5000}");
    CHECK_STR(sb_cstr(&sb), "{\"op\":\"hello\",\"protocol\":1,\"worker\":2,\"nodes\":[\"127.0.0.1:41001\"],"
                            "\"options\":{},\"extensions\":[\"clock\",\"stall\",\"renewed\",\"record\"],"
                            "\"record\":{\"res\":[\"lockstorm:r0\"],\"ttl_ms\":500,\"duration_ms\":5000}}\n");
    sb_reset(&sb);
    aproto_write_record_op(&sb, LOCK_REC_START);
    CHECK_STR(sb_cstr(&sb), "{\"op\":\"start\"}\n");
    sb_reset(&sb);
    aproto_write_record_op(&sb, LOCK_REC_STOP);
    CHECK_STR(sb_cstr(&sb), "{\"op\":\"stop\"}\n");
    sb_free(&sb);
}

/* ---- the `clock` extension ---- */

static void test_clock(void)
{
    struct amsg m;
    char why[256];
    /* the hello's cap */
    REQUIRE(parse("{\"op\":\"hello\",\"protocol\":1,\"name\":\"x\",\"version\":\"1\","
                  "\"caps\":[\"ttl\",\"clock\"]}", &m, why) == 0);
    CHECK(m.caps == (APROTO_CAP_TTL | APROTO_CAP_CLOCK) && m.unknown_caps[0] == '\0');
    char caps[64];
    aproto_caps_text(m.caps, caps, sizeof(caps));
    CHECK_STR(caps, "ttl,clock");
    amsg_free(&m);
    /* a reply: fractional wall_ms, integer mono_ms */
    REQUIRE(parse("{\"id\":7,\"ok\":true,\"wall_ms\":1764140000123.5,\"mono_ms\":81234}", &m,
                  why) == 0);
    CHECK(m.has_wall && m.wall_ms == 1764140000123.5 && m.has_mono && m.mono_ms == 81234.0);
    CHECK(aproto_check_reply(AOP_CLOCK, &m, why, sizeof(why)) == 0);
    CHECK(aproto_clock_plausible(m.wall_ms));
    amsg_free(&m);
    /* mono_ms is optional; wall_ms is not (on ok:true) */
    REQUIRE(parse("{\"id\":8,\"ok\":true,\"wall_ms\":1764140000123}", &m, why) == 0);
    CHECK(m.has_wall && !m.has_mono && aproto_check_reply(AOP_CLOCK, &m, why, sizeof(why)) == 0);
    amsg_free(&m);
    REQUIRE(parse("{\"id\":9,\"ok\":true,\"mono_ms\":5}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_CLOCK, &m, why, sizeof(why)) < 0 && strstr(why, "'wall_ms'"));
    amsg_free(&m);
    REQUIRE(parse("{\"id\":10,\"ok\":false,\"error\":\"unknown op 'clock'\"}", &m, why) == 0);
    CHECK(aproto_check_reply(AOP_CLOCK, &m, why, sizeof(why)) == 0 && !m.has_wall);
    amsg_free(&m);
    /* wrong types, out of range */
    bad("{\"id\":1,\"ok\":true,\"wall_ms\":\"1764140000123\"}", "'wall_ms' must be a number");
    bad("{\"id\":1,\"ok\":true,\"wall_ms\":1e300}", "'wall_ms' must be a number");
    bad("{\"id\":1,\"ok\":true,\"wall_ms\":1764140000123,\"mono_ms\":true}",
        "'mono_ms' must be a number");
    /* seconds or nanoseconds are not plausible wall_ms */
    CHECK(!aproto_clock_plausible(1764140000.1));
    CHECK(!aproto_clock_plausible(1764140000123456789.0));
    CHECK(!aproto_clock_plausible(0));
    CHECK(aproto_clock_plausible(1e12));
    /* the request */
    struct strbuf sb = STRBUF_INIT;
    aproto_write_clock(&sb, 42);
    CHECK_STR(sb_cstr(&sb), "{\"id\":42,\"op\":\"clock\"}\n");
    sb_free(&sb);
}

/* ---- options through the workload loader ---- */

static struct workload *load(const char *opts, struct ls_err *err)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: ext\nduration: 1s\nlock:\n  impl: external\n  ttl: 300ms\n  options: %s\n", opts);
    struct workload *w = NULL;
    memset(err, 0, sizeof(*err));
    workload_load_string("ext.yaml", yaml, NULL, 0, &w, NULL, err);
    return w;
}

static void test_options(void)
{
    struct ls_err err;
    struct workload *w = load("{command: [node, \"a b.js\", --x], adapter: {line: 4, drift: 0.5, "
                              "auto: true, name: \"4\", none: ~, list: [1, two]}, request_timeout: 250ms}",
                              &err);
    REQUIRE(w != NULL);
    const struct external_options *o = w->lock.options;
    CHECK(o->argc == 3);
    CHECK_STR(o->command, "node");
    CHECK_STR(o->command + 5, "a b.js");
    CHECK_STR(o->adapter, "{\"line\":4,\"drift\":0.5,\"auto\":true,\"name\":\"4\",\"none\":null,"
                          "\"list\":[1,\"two\"]}");
    CHECK(o->request_timeout == 250 * LS_NS_PER_MS);
    CHECK(o->max_restarts == 20);
    /* the echo loads back to the same options */
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    struct workload *w2 = NULL;
    CHECKF(workload_load_string("echo.yaml", sb_cstr(&sb), NULL, 0, &w2, NULL, &err) == 0, "%s", err.msg);
    if (w2) {
        const struct external_options *o2 = w2->lock.options;
        CHECK(o2->argc == 3 && memcmp(o->command, o2->command, sizeof(o->command)) == 0);
        CHECK_STR(o2->adapter, o->adapter);
    }
    struct json *j = workload_to_json(w);
    const struct json *cmd = json_path(j, "lock.options.command");
    CHECK(cmd && cmd->type == JSON_ARR && cmd->n == 3);
    CHECK(json_path(j, "lock.options.adapter.line") && json_path(j, "lock.options.adapter.line")->i == 4);
    json_free(j);
    sb_free(&sb);
    workload_free(w2);
    workload_free(w);

    w = load("{adapter: {}}", &err);
    CHECK(w == NULL && strstr(err.msg, "command: required"));
    workload_free(w);
    w = load("{command: \"node x.js\"}", &err);
    CHECK(w == NULL && strstr(err.msg, "expected a list of strings"));
    workload_free(w);
    w = load("{command: []}", &err);
    CHECK(w == NULL && strstr(err.msg, "needs 1 to 64 items"));
    workload_free(w);
    w = load("{command: [node, [x]]}", &err);
    CHECK(w == NULL && strstr(err.msg, "command[1]"));
    workload_free(w);
    w = load("{command: [node], adapter: [1]}", &err);
    CHECK(w == NULL && strstr(err.msg, "expected a mapping"));
    workload_free(w);
    w = load("{command: [node], comand: [x]}", &err);
    CHECK(w == NULL && strstr(err.msg, "command"));
    workload_free(w);
}

/* ---- the session layer against the misbehaving fixture ---- */

/* The fixture is a Python script: its interpreter can take seconds to start
 * on a loaded machine (a version-manager shim in PATH took 2.6 s), so the
 * hello deadline is 2 s only where the test is about that deadline. */
static int fixture(struct adapter *a, const char *mode, struct ls_err *err)
{
    static char path[1024];
    const char *src = getenv("LS_SOURCE_DIR");
    snprintf(path, sizeof(path), "%s/tests/fixtures/bad_adapter.py", src ? src : ".");
    static char *argv[3];
    static char m[32];
    snprintf(m, sizeof(m), "%s", mode);
    argv[0] = path;
    argv[1] = m;
    argv[2] = NULL;
    static const struct lock_node node = {.host = "127.0.0.1", .port = 1};
    struct adapter_config cfg = {.argv = argv, .worker = 0, .nodes = &node, .nnodes = 1,
                                 .hello_timeout_ns = strcmp(mode, "silent") == 0
                                                         ? 2 * LS_NS_PER_S
                                                         : 30 * LS_NS_PER_S};
    memset(err, 0, sizeof(*err));
    return adapter_start(a, &cfg, err);
}

static void test_session(void)
{
    struct adapter a;
    struct ls_err err;
    struct amsg m;
    char why[300];
    int sent;

    /* handshake failures: quick, with a reason */
    CHECK(fixture(&a, "exit-early", &err) == LS_EENV && strstr(err.msg, "exited 1 before its hello"));
    adapter_close(&a);
    int64_t t0 = ls_now_ns();
    CHECK(fixture(&a, "silent", &err) == LS_EENV && strstr(err.msg, "no hello within 2s"));
    CHECK(ls_now_ns() - t0 < 4 * LS_NS_PER_S);
    adapter_close(&a);
    CHECK(fixture(&a, "old-protocol", &err) == LS_EENV && strstr(err.msg, "speaks protocol 2"));
    adapter_close(&a);
    static char *missing[] = {"/nonexistent/adapter", NULL};
    struct adapter_config cfg = {.argv = missing, .nnodes = 0};
    memset(&err, 0, sizeof(err));
    CHECKF(adapter_start(&a, &cfg, &err) == LS_EENV && strstr(err.msg, "cannot run"), "%s", err.msg);
    adapter_close(&a);

    /* a good request/reply round */
    REQUIRE(fixture(&a, "exit-mid-hold", &err) == 0);
    CHECK_STR(a.name, "bad-adapter");
    CHECK(a.caps == (APROTO_CAP_TTL | APROTO_CAP_RENEW));
    CHECK(adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S, &m, &sent,
                          why, sizeof(why)) == ADAPTER_REPLY && m.ok && sent);
    char tok[64];
    snprintf(tok, sizeof(tok), "%s", m.token ? m.token : "");
    amsg_free(&m);
    CHECK(adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S, &m, &sent,
                          why, sizeof(why)) == ADAPTER_REPLY && !m.ok && m.busy);
    amsg_free(&m);
    CHECK(adapter_request(&a, AOP_RELEASE, "r", tok, -1, LS_NS_PER_S, &m, &sent, why, sizeof(why)) ==
              ADAPTER_REPLY && m.ok && m.released);
    amsg_free(&m);
    /* its 3rd grant makes it exit: noticed as an exit event, then requests fail */
    for (int i = 0; i < 2; i++) {
        if (adapter_request(&a, AOP_ACQUIRE, i ? "s" : "t", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S,
                            &m, &sent, why, sizeof(why)) == ADAPTER_REPLY)
            amsg_free(&m);
    }
    struct amsg ev;
    int r = 0;
    int64_t deadline = ls_now_ns() + 3 * LS_NS_PER_S;
    while (r != 2 && ls_now_ns() < deadline)
        r = adapter_wait_event(&a, ls_now_ns() + 200 * LS_NS_PER_MS, &ev);
    CHECK(r == 2);
    CHECK(!adapter_alive(&a));
    CHECK(adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S, &m, &sent,
                          why, sizeof(why)) == ADAPTER_DEAD && !sent);
    /* a restart brings a new process */
    CHECK(adapter_restart(&a, &err) == 0 && adapter_alive(&a) && a.st.starts == 2);
    adapter_close(&a);

    /* wrong ids, garbage, huge lines: protocol errors, outcome unknown */
    const char *modes[] = {"wrong-ids", "garbage", "huge-lines"};
    for (int k = 0; k < 3; k++) {
        REQUIRE(fixture(&a, modes[k], &err) == 0);
        int rc = adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S, &m,
                                 &sent, why, sizeof(why));
        CHECKF(rc == ADAPTER_PROTO && strstr(why, "protocol error"), "%s: rc %d %s", modes[k], rc, why);
        CHECK(a.st.protocol_errors >= 1 && a.samples[0][0]);
        adapter_close(&a);
    }

    /* extensions: renewed events queued with the instant they were read,
     * also while a request waited; a stall longer than the usual timeout */
    REQUIRE(fixture(&a, "extensions", &err) == 0);
    CHECK(a.caps == (APROTO_CAP_TTL | APROTO_CAP_RENEW | APROTO_CAP_STALL | APROTO_CAP_RENEWED));
    int64_t before = ls_now_ns();
    REQUIRE(adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, LS_NS_PER_S, &m,
                            &sent, why, sizeof(why)) == ADAPTER_REPLY && m.ok);
    snprintf(tok, sizeof(tok), "%s", m.token);
    amsg_free(&m);
    r = adapter_wait_event(&a, ls_now_ns() + 2 * LS_NS_PER_S, &ev);
    CHECK(r == 3 && ev.kind == AMSG_RENEWED);
    if (r == 3) {
        CHECK_STR(ev.res, "r");
        CHECK_STR(ev.token, tok);
        CHECK(ev.validity_ns == 250 * LS_NS_PER_MS);
        CHECK(ev.read_ns >= before && ev.read_ns <= ls_now_ns());
        amsg_free(&ev);
    }
    /* the release's renewed event arrives before its reply: kept, told after */
    REQUIRE(adapter_request(&a, AOP_RELEASE, "r", tok, -1, LS_NS_PER_S, &m, &sent, why,
                            sizeof(why)) == ADAPTER_REPLY && m.ok);
    amsg_free(&m);
    int64_t replied = ls_now_ns();
    ls_sleep_ns(20 * LS_NS_PER_MS);
    r = adapter_wait_event(&a, ls_now_ns() + LS_NS_PER_S, &ev);
    CHECK(r == 3);
    if (r == 3) {
        CHECK(ev.read_ns <= replied); /* read during the request, not when told */
        amsg_free(&ev);
    }
    CHECK(a.st.renewed_events == 2 && a.st.protocol_errors == 0);
    t0 = ls_now_ns();
    REQUIRE(adapter_stall(&a, 300, 300 * LS_NS_PER_MS + 200 * LS_NS_PER_MS, &m, &sent, why,
                          sizeof(why)) == ADAPTER_REPLY);
    CHECK(m.ok && m.has_stalled && m.stalled_ns >= 299 * LS_NS_PER_MS);
    CHECK(ls_now_ns() - t0 >= 300 * LS_NS_PER_MS && a.st.stalls == 1);
    amsg_free(&m);
    adapter_close(&a);

    /* silence: a timeout; bye ignored and SIGTERM too: SIGKILL, all bounded */
    REQUIRE(fixture(&a, "never-answers", &err) == 0);
    t0 = ls_now_ns();
    CHECK(adapter_request(&a, AOP_ACQUIRE, "r", NULL, 300 * LS_NS_PER_MS, 200 * LS_NS_PER_MS, &m,
                          &sent, why, sizeof(why)) == ADAPTER_TIMEOUT && sent);
    CHECK(a.st.timeouts == 1);
    adapter_close(&a);
    CHECK(strstr(a.exit_text, "signal 9") != NULL);
    CHECK(ls_now_ns() - t0 < 4 * LS_NS_PER_S);
}

int main(void)
{
    RUN(test_lines);
    RUN(test_parse_valid);
    RUN(test_parse_invalid);
    RUN(test_extensions);
    RUN(test_write);
    RUN(test_record);
    RUN(test_clock);
    RUN(test_options);
    RUN(test_session);
    return t_finish();
}
