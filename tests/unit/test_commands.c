/*
 * test_commands.c: the command load measure (docs/checkers.md "commands"):
 * INFO commandstats text parsed (backends/cmdstats.h), the delta of two
 * samples with and without a counter reset (a restarted node, a count that
 * went down), which types are lock work, and the commands checker over a
 * hand-made commands.json (per grant, the check.max_commands_per_grant
 * limit, not measured with its reason, a reset's lower bound). Needs no
 * Redis: the end-to-end runs are tests/e2e/test_command_load.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cmdstats.h"
#include "checkers/check.h"
#include "checkers/history.h"
#include "model/rundir.h"
#include "tests/unit/testing.h"
#include "util/json.h"

static const char INFO_TEXT[] =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "run_id:4440aede9929d4c524dd623ddc790398c7ace0c5\r\n"
    "tcp_port:43769\r\n"
    "\r\n"
    "# Commandstats\r\n"
    "cmdstat_evalsha:calls=8717,usec=74799,usec_per_call=8.58,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_script|load:calls=2,usec=318,usec_per_call=159.00,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_set:calls=2,usec=44,usec_per_call=22.00,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_info:calls=1,usec=148,usec_per_call=148.00,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_broken:usec=1\r\n"              /* no calls= : skipped */
    "cmdstat_neg:calls=-3,usec=1\r\n"        /* not a count: skipped */
    "cmdstat_get:calls=5\r\n"                 /* last field, no comma after it */
    "cmdstat_:calls=9\r\n";                   /* no name: skipped */

static void test_parse(void)
{
    struct json *calls = json_new_obj();
    char id[64];
    int n = cmdstats_parse(INFO_TEXT, strlen(INFO_TEXT), calls, id, sizeof(id));
    CHECK_INT(n, 5);
    CHECK_STR(id, "4440aede9929d4c524dd623ddc790398c7ace0c5");
    CHECK_INT(json_get_int(calls, "evalsha", -1), 8717);
    CHECK_INT(json_get_int(calls, "script|load", -1), 2);
    CHECK_INT(json_get_int(calls, "set", -1), 2);
    CHECK_INT(json_get_int(calls, "info", -1), 1);
    CHECK_INT(json_get_int(calls, "get", -1), 5);
    CHECK(!json_obj_get(calls, "broken"));
    CHECK(!json_obj_get(calls, "neg"));
    json_free(calls);

    /* no run_id line, LF only, a truncated line at the end */
    calls = json_new_obj();
    const char t2[] = "cmdstat_del:calls=4,usec=2\ncmdstat_pttl:calls=7";
    n = cmdstats_parse(t2, strlen(t2), calls, id, sizeof(id));
    CHECK_INT(n, 2);
    CHECK_STR(id, "");
    CHECK_INT(json_get_int(calls, "pttl", -1), 7);
    json_free(calls);
}

/* A sample entry as cmdstats_sample writes it. */
static struct json *sample(const char *run_id, const char *calls_json)
{
    struct json *o = json_new_obj(), *c = NULL;
    char why[64];
    json_obj_set_bool(o, "ok", 1);
    json_obj_set_str(o, "run_id", run_id);
    int rc = json_parse(calls_json, strlen(calls_json), &c, why, sizeof(why));
    CHECKF(rc == 0, "%s: %s", calls_json, why);
    json_obj_set(o, "calls", c ? c : json_new_obj());
    return o;
}

static void test_delta(void)
{
    struct json *s = sample("A", "{\"set\":10,\"evalsha\":100,\"info\":3}");
    struct json *e = sample("A", "{\"set\":15,\"evalsha\":1100,\"info\":5,\"del\":2}");
    struct json *calls = json_new_obj();
    int reset = -1;
    CHECK_INT(commands_delta(s, e, calls, &reset), 0);
    CHECK_INT(reset, 0);
    CHECK_INT(json_get_int(calls, "set", -1), 5);
    CHECK_INT(json_get_int(calls, "evalsha", -1), 1000);
    CHECK_INT(json_get_int(calls, "info", -1), 2);
    CHECK_INT(json_get_int(calls, "del", -1), 2);
    json_free(calls);
    json_free(e);

    /* restarted: another run_id, counters from zero: the end sample's counts */
    e = sample("B", "{\"set\":3,\"evalsha\":40,\"ping\":1}");
    calls = json_new_obj();
    CHECK_INT(commands_delta(s, e, calls, &reset), 0);
    CHECK_INT(reset, 1);
    CHECK_INT(json_get_int(calls, "set", -1), 3);
    CHECK_INT(json_get_int(calls, "evalsha", -1), 40);
    json_free(calls);
    json_free(e);

    /* the same run_id but a count went down (CONFIG RESETSTAT): a reset too */
    e = sample("A", "{\"set\":12,\"evalsha\":7}");
    calls = json_new_obj();
    CHECK_INT(commands_delta(s, e, calls, &reset), 0);
    CHECK_INT(reset, 1);
    CHECK_INT(json_get_int(calls, "evalsha", -1), 7);
    json_free(calls);
    json_free(e);

    /* a failed sample: no delta */
    e = json_new_obj();
    json_obj_set_bool(e, "ok", 0);
    json_obj_set_str(e, "error", "cannot connect");
    calls = json_new_obj();
    CHECK_INT(commands_delta(s, e, calls, &reset), -1);
    CHECK_INT(commands_delta(s, NULL, calls, &reset), -1);
    json_free(calls);
    json_free(e);
    json_free(s);
}

static void test_types(void)
{
    CHECK(commands_type_is_lock("evalsha"));
    CHECK(commands_type_is_lock("set"));
    CHECK(commands_type_is_lock("script|load"));
    CHECK(commands_type_is_lock("pexpire"));
    CHECK(!commands_type_is_lock("info"));
    CHECK(!commands_type_is_lock("ping"));
    CHECK(!commands_type_is_lock("client|setname"));
    CHECK(!commands_type_is_lock("config|get"));
    CHECK(!commands_type_is_lock("auth"));
    CHECK(commands_type_is_lock("infox")); /* a prefix is not the name */
}

/* Run the commands checker over dir/commands.json = text (NULL: none) with
 * `grants` grants and the workload check: yaml; *res gets the result. */
static const struct json *run_check(const char *dir, const char *text, int64_t grants,
                                    const char *yaml, int *verdict, struct json **res)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/commands.json", dir);
    if (text) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
            fputs(text, f);
            fclose(f);
        }
    } else {
        unlink(path);
    }
    struct ls_err err;
    struct history h;
    memset(&h, 0, sizeof(h));
    if (rundir_meta_parse("t.yaml", yaml, strlen(yaml), &h.meta, &err) != 0)
        fprintf(stderr, "  meta: %s\n", err.msg);
    h.source = (char *)dir;
    h.from_rundir = 1;
    *res = json_new_obj();
    json_obj_set_int(json_obj_set(*res, "counts", json_new_obj()), "grants", grants);
    json_obj_set(*res, "checks", json_new_obj());
    json_obj_set(*res, "warnings", json_new_arr());
    struct check_params p;
    check_params_from(&h, &p);
    *verdict = check_commands(&h, &p, *res);
    rundir_meta_free(h.meta);
    return json_path(*res, "checks.commands");
}

#define DOC(start_calls, end_id, end_calls)                                                  \
    "{\"format\":\"lockstorm-commands\",\"version\":1,\"measured\":true,\"start_ms\":0,"     \
    "\"end_ms\":2000,\"nodes\":[{\"node\":0,\"addr\":\"127.0.0.1:1\",\"start\":{\"ok\":true," \
    "\"run_id\":\"A\",\"calls\":" start_calls "},\"end\":{\"ok\":true,\"run_id\":\"" end_id   \
    "\",\"calls\":" end_calls "}}]}"

static void test_checker(void)
{
    char dir[] = "/tmp/lstestcmds-XXXXXX";
    REQUIRE(mkdtemp(dir));
    struct json *res;
    int v;
    const char *limit = "check: {max_commands_per_grant: 50}\n";
    const char *hammer = DOC("{\"info\":2}", "A", "{\"info\":4,\"set\":4,\"evalsha\":20000,"
                                                  "\"ping\":1}");

    /* no limit: measured, valid whatever the figure */
    const struct json *c = run_check(dir, hammer, 4, "seed: 1\n", &v, &res);
    CHECK_INT(v, VERDICT_VALID);
    REQUIRE(c);
    CHECK(json_get_num(c, "per_grant", -1) == 5001.0);
    CHECK_INT(json_get_int(c, "lock_commands", -1), 20004);
    CHECK_INT(json_get_int(c, "other_commands", -1), 3); /* info 2 + ping 1: apart */
    CHECK(json_get_num(c, "per_s", -1) == 10002.0);
    CHECK_INT(json_get_int(json_path(c, "by_type"), "evalsha", -1), 20000);
    CHECK_STR(json_get_str(json_path(c, "per_node.0"), "addr", "?"), "127.0.0.1:1");
    json_free(res);

    /* over the limit: invalid */
    c = run_check(dir, hammer, 4, limit, &v, &res);
    CHECK_INT(v, VERDICT_INVALID);
    CHECK(json_get_num(c, "max_per_grant", -1) == 50.0);
    json_free(res);

    /* under it: valid */
    c = run_check(dir, DOC("{}", "A", "{\"set\":40,\"evalsha\":80}"), 10, limit, &v, &res);
    CHECK_INT(v, VERDICT_VALID);
    CHECK(json_get_num(c, "per_grant", -1) == 12.0);
    json_free(res);

    /* restarted node: no exact figure; a lower bound under the limit: unknown */
    c = run_check(dir, DOC("{\"set\":5}", "B", "{\"set\":40}"), 10, limit, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    CHECK(json_get_num(c, "per_grant_at_least", -1) == 4.0);
    CHECK(json_obj_get(c, "per_grant")->type == JSON_NULL);
    CHECK(strstr(json_get_str(c, "note", ""), "restarted") != NULL);
    json_free(res);
    /* ... a lower bound over it: invalid all the same */
    c = run_check(dir, DOC("{\"set\":5}", "B", "{\"evalsha\":9000}"), 10, limit, &v, &res);
    CHECK_INT(v, VERDICT_INVALID);
    json_free(res);

    /* not Redis: not measured, with the reason; unknown only under a limit */
    const char *pg = "{\"format\":\"lockstorm-commands\",\"version\":1,\"measured\":false,"
                     "\"why\":\"the lock nodes are not Redis servers (cluster.topology "
                     "postgres)\"}";
    c = run_check(dir, pg, 10, "seed: 1\n", &v, &res);
    CHECK_INT(v, VERDICT_VALID);
    CHECK(json_obj_get(c, "per_grant")->type == JSON_NULL);
    CHECK(strstr(json_get_str(c, "note", ""), "not Redis") != NULL);
    json_free(res);
    c = run_check(dir, pg, 10, limit, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    json_free(res);

    /* no commands.json: no section without a limit, unknown with one */
    c = run_check(dir, NULL, 10, "seed: 1\n", &v, &res);
    CHECK_INT(v, VERDICT_VALID);
    CHECK(c == NULL);
    json_free(res);
    c = run_check(dir, NULL, 10, limit, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    CHECK(strstr(json_get_str(c, "note", ""), "commands.json missing") != NULL);
    json_free(res);

    /* no grant: per grant undefined */
    c = run_check(dir, hammer, 0, limit, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    CHECK(json_obj_get(c, "per_grant")->type == JSON_NULL);
    json_free(res);
    char path[256];
    snprintf(path, sizeof(path), "%s/commands.json", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    RUN(test_parse);
    RUN(test_delta);
    RUN(test_types);
    RUN(test_checker);
    return t_finish();
}
