/*
 * test_options.c: the options-table machinery (model/options.c) on a
 * table of its own: scalar parsing of every type with ranges, defaults,
 * distributions, the YAML/JSON echo, freeing, and the nearest-name
 * suggestion. The workload tables are tested in test_workload.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/options.h"
#include "model/yamltree.h"
#include "tests/unit/testing.h"
#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

struct sample {
    int64_t n;
    uint64_t seed;
    int64_t d;
    int flag;
    char *s;
    int color;
    double x;
    struct dist hold;
    struct {
        int64_t inner;
        char *label;
    } sub;
};

static const char *const colors[] = {"red", "green", "blue", NULL};

static const struct opt_def sub_tab[] = {
    {"inner", OPT_INT, offsetof(struct sample, sub.inner) - offsetof(struct sample, sub), "7", 0, 9,
     NULL, NULL, "inner"},
    {"label", OPT_STRING, offsetof(struct sample, sub.label) - offsetof(struct sample, sub), "lbl",
     0, 0, NULL, NULL, "label"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def tab[] = {
    {"n", OPT_INT, offsetof(struct sample, n), "3", 1, 10, NULL, NULL, "an int"},
    {"seed", OPT_U64, offsetof(struct sample, seed), "1", 0, 0, NULL, NULL, "a seed"},
    {"d", OPT_DURATION, offsetof(struct sample, d), "250ms", 1e6, 60e9, NULL, NULL, "a duration"},
    {"flag", OPT_BOOL, offsetof(struct sample, flag), "true", 0, 0, NULL, NULL, "a bool"},
    {"s", OPT_STRING, offsetof(struct sample, s), "hello", 0, 0, NULL, NULL, "a string"},
    {"color", OPT_ENUM, offsetof(struct sample, color), "green", 0, 0, colors, NULL, "an enum"},
    {"x", OPT_DOUBLE, offsetof(struct sample, x), "0.25", 0, 1, NULL, NULL, "a double"},
    {"hold", OPT_DIST, offsetof(struct sample, hold), "{dist: uniform, min: 1ms, max: 2ms}", 0,
     60e9, NULL, NULL, "a dist"},
    {"sub", OPT_SECTION, offsetof(struct sample, sub), NULL, 0, 0, NULL, sub_tab, "a section"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def *def(const char *name)
{
    for (const struct opt_def *d = tab; d->name; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

static void test_parse_text(void)
{
    struct sample s;
    char why[256];
    memset(&s, 0, sizeof(s));
    CHECK(opt_parse_text(def("n"), &s, "10", why, sizeof(why)) == 0 && s.n == 10);
    CHECK(opt_parse_text(def("n"), &s, "+4", why, sizeof(why)) < 0); /* one grammar: no "+" */
    CHECK(opt_parse_text(def("n"), &s, "11", why, sizeof(why)) < 0);
    CHECK_STR(why, "11 is out of range 1..10");
    CHECK(opt_parse_text(def("n"), &s, "1.5", why, sizeof(why)) < 0);
    CHECK_STR(why, "expected an integer, got '1.5'");
    CHECK(opt_parse_text(def("n"), &s, "99999999999999999999", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("seed"), &s, "18446744073709551615", why, sizeof(why)) == 0 &&
          s.seed == UINT64_MAX);
    CHECK(opt_parse_text(def("seed"), &s, "18446744073709551616", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("seed"), &s, "-1", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("d"), &s, "1.5s", why, sizeof(why)) == 0 && s.d == 1500000000);
    CHECK(opt_parse_text(def("d"), &s, "2m", why, sizeof(why)) < 0);
    CHECK_STR(why, "2m is out of range 1ms..1m");
    CHECK(opt_parse_text(def("d"), &s, "5", why, sizeof(why)) < 0);
    CHECK(strstr(why, "needs a unit") != NULL);
    CHECK(opt_parse_text(def("flag"), &s, "off", why, sizeof(why)) == 0 && s.flag == 0);
    CHECK(opt_parse_text(def("flag"), &s, "True", why, sizeof(why)) == 0 && s.flag == 1);
    CHECK(opt_parse_text(def("flag"), &s, "1", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("color"), &s, "blue", why, sizeof(why)) == 0 && s.color == 2);
    CHECK(opt_parse_text(def("color"), &s, "bleu", why, sizeof(why)) < 0);
    CHECK_STR(why, "unknown value 'bleu'; did you mean 'blue'? (one of: red, green, blue)");
    CHECK(opt_parse_text(def("x"), &s, "0.5", why, sizeof(why)) == 0 && s.x == 0.5);
    CHECK(opt_parse_text(def("x"), &s, "2", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("x"), &s, "nan", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("x"), &s, "0x1p-2", why, sizeof(why)) < 0);
    CHECK(opt_parse_text(def("s"), &s, "one", why, sizeof(why)) == 0);
    CHECK(opt_parse_text(def("s"), &s, "two", why, sizeof(why)) == 0); /* frees the first */
    CHECK_STR(s.s, "two");
    opt_free(tab, &s);
    CHECK(s.s == NULL);
}

static void test_defaults_and_echo(void)
{
    struct sample s;
    struct ls_err err;
    memset(&s, 0, sizeof(s));
    ls_err_clear(&err);
    REQUIRE(opt_fill_defaults(tab, &s, &err) == 0);
    CHECK_INT(s.n, 3);
    CHECK_INT(s.seed, 1);
    CHECK_INT(s.d, 250000000);
    CHECK_INT(s.flag, 1);
    CHECK_STR(s.s, "hello");
    CHECK_INT(s.color, 1);
    CHECK(s.x == 0.25);
    CHECK_INT(s.hold.kind, DIST_UNIFORM);
    CHECK_INT(s.hold.min, 1000000);
    CHECK_INT(s.hold.max, 2000000);
    CHECK_INT(s.sub.inner, 7);
    CHECK_STR(s.sub.label, "lbl");

    struct strbuf sb = STRBUF_INIT;
    opt_to_yaml(tab, &s, 2, NULL, &sb);
    CHECK_STR(sb_cstr(&sb), "  n: 3\n  seed: 1\n  d: 250ms\n  flag: true\n  s: hello\n"
                            "  color: green\n  x: 0.25\n  hold: {dist: uniform, min: 1ms, max: 2ms}\n"
                            "  sub:\n    inner: 7\n    label: lbl\n");
    sb_reset(&sb);
    struct json *j = opt_to_json(tab, &s, NULL);
    json_write(&sb, j, -1);
    CHECK_STR(sb_cstr(&sb), "{\"n\":3,\"seed\":1,\"d\":\"250ms\",\"flag\":true,\"s\":\"hello\","
                            "\"color\":\"green\",\"x\":0.25,\"hold\":{\"dist\":\"uniform\",\"min\":\"1ms\","
                            "\"max\":\"2ms\"},\"sub\":{\"inner\":7,\"label\":\"lbl\"}}");
    json_free(j);

    /* strings that YAML would read as something else are quoted */
    free(s.s);
    s.s = strdup("yes");
    sb_reset(&sb);
    opt_format_value(def("s"), &s, &sb);
    CHECK_STR(sb_cstr(&sb), "\"yes\"");
    free(s.s);
    s.s = strdup("a: b");
    sb_reset(&sb);
    opt_format_value(def("s"), &s, &sb);
    CHECK_STR(sb_cstr(&sb), "\"a: b\"");
    sb_free(&sb);
    opt_free(tab, &s);
    CHECK(s.s == NULL && s.sub.label == NULL);
}

static int load(const char *yaml, struct sample *s, char *first, size_t n)
{
    struct ydiag dg;
    struct ls_err err;
    struct ynode *root = NULL;
    ls_err_clear(&err);
    ydiag_init(&dg, "o.yaml", NULL, &err);
    memset(s, 0, sizeof(*s));
    if (ytree_parse(yaml, strlen(yaml), &root, &dg) == 0) {
        struct opt_scope sc = {tab, s};
        opt_load_map(&sc, 1, root, root, "", NULL, &dg);
    }
    ynode_free(root);
    snprintf(first, n, "%s", err.msg);
    return dg.count;
}

static void test_load_map(void)
{
    struct sample s;
    char first[1024];
    CHECK_INT(load("n: 5\nhold: 3ms\nsub: {label: x}\n", &s, first, sizeof(first)), 0);
    CHECK_INT(s.n, 5);
    CHECK_INT(s.hold.kind, DIST_FIXED);
    CHECK_INT(s.hold.value, 3000000);
    CHECK_STR(s.sub.label, "x");
    CHECK_INT(s.sub.inner, 7);
    opt_free(tab, &s);

    CHECK_INT(load("n: 50\ncolour: red\n", &s, first, sizeof(first)), 2);
    CHECK_STR(first, "o.yaml:2:1: unknown key 'colour' at top level; did you mean 'color'?");
    CHECK_INT(s.n, 3); /* the failed value fell back to its default */
    opt_free(tab, &s);

    CHECK_INT(load("sub: {inner: 10}\n", &s, first, sizeof(first)), 1);
    CHECK_STR(first, "o.yaml:1:14: sub.inner: 10 is out of range 0..9");
    opt_free(tab, &s);

    CHECK_INT(load("hold: {dist: exponential, mean: 2ms, max: 1ms}\n", &s, first, sizeof(first)), 1);
    CHECK_STR(first, "o.yaml:1:43: hold.max: the cap must not be below the mean (or 0 for none)");
    opt_free(tab, &s);

    CHECK_INT(load("s:\n", &s, first, sizeof(first)), 0);
    CHECK_STR(s.s, "");
    opt_free(tab, &s);
    CHECK_INT(load("n:\n", &s, first, sizeof(first)), 1);
    CHECK_STR(first, "o.yaml:1:3: n: expected an integer, got nothing");
    opt_free(tab, &s);
}

static void test_nearest(void)
{
    const char *names[] = {"workers", "lock", "cluster", "duration", "wait_replicas"};
    CHECK_INT(opt_edit_distance("worker", "workers"), 1);
    CHECK_INT(opt_edit_distance("lokc", "lock"), 1);
    CHECK_INT(opt_edit_distance("", "abc"), 3);
    CHECK_STR(opt_nearest("worker", names, 5), "workers");
    CHECK_STR(opt_nearest("lokc", names, 5), "lock");
    CHECK_STR(opt_nearest("durtaion", names, 5), "duration");
    CHECK_STR(opt_nearest("wait", names, 5), "wait_replicas");
    CHECK(opt_nearest("zzzzzz", names, 5) == NULL);
    CHECK(opt_nearest("x", names, 5) == NULL);
    char q[64];
    CHECK_STR(opt_quote("a\nb", q, sizeof(q)), "a?b");
    CHECK_STR(opt_quote("0123456789012345678901234567890123456789XYZ", q, sizeof(q)),
              "0123456789012345678901234567890123456789...");
}

static void test_reference(void)
{
    struct strbuf sb = STRBUF_INIT;
    opt_reference(tab, "t.", 1, 1, NULL, &sb);
    const char *s = sb_cstr(&sb);
    CHECK(strncmp(s, "| key | type | default | range / choices | description |\n|---|", 60) == 0);
    CHECK(strstr(s, "| `t.n` | integer | `3` | 1..10 | an int |\n") != NULL);
    CHECK(strstr(s, "| `t.d` | duration | `250ms` | 1ms..1m | a duration |\n") != NULL);
    CHECK(strstr(s, "| `t.color` | choice | `green` | red, green, blue | an enum |\n") != NULL);
    CHECK(strstr(s, "| `t.sub.inner` | integer | `7` | 0..9 | inner |\n") != NULL);
    sb_free(&sb);
}

/* The one grammar of numbers and durations (util/timeutil.h): what it
 * takes, and each form strtod would take that it refuses. */
static void test_number_grammar(void)
{
    static const struct {
        const char *s;
        int flags;
        size_t len;
        double v;
    } num[] = {
        {"2", 0, 1, 2},          {"-1", 0, 2, -1},         {"0.5", 0, 3, 0.5},
        {"1e6", 0, 3, 1e6},      {"2.5E-3", 0, 6, 2.5e-3}, {"1e", 0, 1, 1},
        {"1e+", 0, 1, 1},        {"3ms", 0, 1, 3},         {"-1", LS_NUM_NO_SIGN, 0, 0},
        {"1e3", LS_NUM_NO_EXP, 1, 1},
        {"+1", 0, 0, 0},         {".5", 0, 0, 0},          {"1.", 0, 0, 0},
        {"inf", 0, 0, 0},        {"-inf", 0, 0, 0},        {"nan", 0, 0, 0},
        {" 1", 0, 0, 0},         {"", 0, 0, 0},            {"-", 0, 0, 0},
        {"0x10", 0, 1, 0},       {"1e999", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++) {
        double v = -42;
        size_t len = ls_scan_number(num[i].s, num[i].flags, &v);
        CHECKF(len == num[i].len, "'%s': scanned %zu, want %zu", num[i].s, len, num[i].len);
        if (len && num[i].len)
            CHECKF(v == num[i].v, "'%s': %g, want %g", num[i].s, v, num[i].v);
    }
    static const char *const bad_dur[] = {"1e1s", "-0ms", "-5s", "+1s", ".5s", "1.s", "inf",
                                          "nan", "0x10ms", "5", "5xs", "1 s", ""};
    for (size_t i = 0; i < sizeof(bad_dur) / sizeof(bad_dur[0]); i++) {
        int64_t ns;
        const char *why = NULL;
        CHECKF(ls_parse_duration(bad_dur[i], &ns, &why) < 0, "'%s' taken", bad_dur[i]);
        CHECKF(why && why[0], "'%s': no reason", bad_dur[i]);
    }
    int64_t ns = -1;
    CHECK(ls_parse_duration("1.5s", &ns, NULL) == 0 && ns == 1500 * LS_NS_PER_MS);
    CHECK(ls_parse_duration("0", &ns, NULL) == 0 && ns == 0);
    CHECK(ls_parse_duration("250us", &ns, NULL) == 0 && ns == 250 * LS_NS_PER_US);
}

int main(void)
{
    RUN(test_number_grammar);
    RUN(test_parse_text);
    RUN(test_defaults_and_echo);
    RUN(test_load_map);
    RUN(test_nearest);
    RUN(test_reference);
    return t_finish();
}
