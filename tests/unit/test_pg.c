/*
 * test_pg.c: what of pg-advisory and cluster.topology postgres needs no
 * server: the advisory-lock key (FNV-1a 64 of the lock name, as
 * docs/locks.md documents it, with published FNV test vectors), and the
 * loader's rules for the topology (harness/workload_pg.c). The server-side
 * behaviour is tests/e2e/test_pg_advisory.sh and stories 14-17.
 */
#include <stdint.h>
#include <string.h>

#include "harness/workload.h"
#include "locks/pg_conn.h"
#include "tests/unit/testing.h"

static void test_key(void)
{
    /* FNV-1a 64 test vectors: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c,
     * "foobar" -> 85944171f73967e8 (as signed 64-bit) */
    CHECK(pgc_key_of_name("") == (int64_t)0xcbf29ce484222325ULL);
    CHECK(pgc_key_of_name("a") == (int64_t)0xaf63dc4c8601ec8cULL);
    CHECK(pgc_key_of_name("foobar") == (int64_t)0x85944171f73967e8ULL);
    CHECK(pgc_key(0) == 7620991015721981209LL); /* docs/locks.md */
    CHECK(pgc_key(0) == pgc_key_of_name("lockstorm:r0"));
    CHECK(pgc_key(1) != pgc_key(0));
}

static void expect(const char *yaml, const char *phrase)
{
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    int rc = workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err);
    if (!phrase) {
        CHECKF(rc == 0, "%s: %s", yaml, err.msg);
    } else {
        CHECKF(rc == LS_EWORKLOAD, "%s: rc %d", yaml, rc);
        CHECKF(strstr(err.msg, phrase) != NULL, "'%s' lacks '%s'", err.msg, phrase);
        CHECKF(strncmp(err.msg, "t.yaml:", 7) == 0, "no position: %s", err.msg);
    }
    workload_free(w);
}

static void test_rules(void)
{
    const char *pg = "cluster: {topology: postgres}\nlock: {impl: pg-advisory}\n";
    expect(pg, NULL);
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory, options: {mode: xact}}\n",
           NULL);
    expect("lock: {impl: pg-advisory}\n", "pg-advisory needs the PostgreSQL server");
    expect("cluster: {topology: postgres}\n", "is a Redis lock");
    expect("cluster: {topology: postgres, nodes: 2}\nlock: {impl: pg-advisory}\n",
           "one server");
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory}\nworkers: {mode: jobs}\n",
           "jobs");
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory}\n"
           "faults: [{kind: kill, target: \"node:0\", at: 1s}]\n",
           "use a link fault");
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory}\n"
           "faults: [{kind: partition, mode: reset, target: holder, at: 1s}]\n",
           NULL);
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory, options: {mode: lock}}\n",
           "session");
    expect("cluster: {topology: postgres}\nlock: {impl: pg-advisory, renew: {every: 100ms}}\n",
           "cannot renew");
}

int main(void)
{
    RUN(test_key);
    RUN(test_rules);
    return t_finish();
}
