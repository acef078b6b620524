/*
 * commands.c: the command load checker ("checks.commands"; docs/checkers.md
 * "commands"). It reads commands.json, the two samples of every Redis lock
 * node's INFO commandstats the harness took when the load phase started
 * and when it ended (backends/cmdstats.h), and reports per node and per
 * command type the calls in between, the lock's commands per grant and per
 * second, and judges check.max_commands_per_grant when the workload sets
 * it: a library that hammers Redis (an extension loop running back to
 * back) fails it. Connection and server administration (INFO, PING, AUTH,
 * CLIENT, ...: what the harness, the proxy and sentinels send too) is
 * counted apart and never in the per-grant figure. It never talks to Redis.
 */
#include "checkers/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "util/json.h"
#include "util/xalloc.h"

/* Command types that are connection or server administration, not lock
 * work: the harness's own samples and checks, the proxy's AUTH, replicas'
 * and sentinels' traffic, a client library's connection set-up. */
static const char *const other_types[] = {
    "info", "ping", "auth", "hello", "client", "select", "command", "config", "role",
    "replicaof", "slaveof", "replconf", "psync", "sync", "publish", "subscribe", "psubscribe",
    "unsubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "cluster", "debug", "quit",
    "reset", "readonly", "readwrite", "echo", "time", "dbsize", "memory", "latency", "slowlog",
    "monitor", "acl", "lastsave", "save", "bgsave", "bgrewriteaof", "failover", "shutdown",
    "sentinel", NULL,
};

int commands_type_is_lock(const char *type)
{
    size_t n = strcspn(type, "|");
    for (int i = 0; other_types[i]; i++)
        if (strlen(other_types[i]) == n && memcmp(other_types[i], type, n) == 0)
            return 0;
    return 1;
}

int commands_delta(const struct json *start, const struct json *end, struct json *calls,
                   int *reset)
{
    *reset = 0;
    const struct json *so = json_obj_get(start, "ok"), *eo = json_obj_get(end, "ok");
    if (!so || so->type != JSON_BOOL || !so->i || !eo || eo->type != JSON_BOOL || !eo->i)
        return -1;
    const struct json *sc = json_obj_get(start, "calls"), *ec = json_obj_get(end, "calls");
    if (!sc || sc->type != JSON_OBJ || !ec || ec->type != JSON_OBJ)
        return -1;
    const char *sid = json_get_str(start, "run_id", ""), *eid = json_get_str(end, "run_id", "");
    if (strcmp(sid, eid) != 0)
        *reset = 1; /* another process since the first sample: counters from zero */
    for (size_t i = 0; !*reset && i < ec->n; i++) {
        int64_t e = ec->kids[i]->type == JSON_NUM ? ec->kids[i]->i : 0;
        if (e < json_get_int(sc, ec->keys[i], 0))
            *reset = 1; /* went down: CONFIG RESETSTAT or a restart under one id */
    }
    for (size_t i = 0; !*reset && i < sc->n; i++)
        if (!json_obj_get(ec, sc->keys[i]) && json_get_int(sc, sc->keys[i], 0) > 0)
            *reset = 1;
    for (size_t i = 0; i < ec->n; i++) {
        int64_t e = ec->kids[i]->type == JSON_NUM ? ec->kids[i]->i : 0;
        int64_t d = *reset ? e : e - json_get_int(sc, ec->keys[i], 0);
        if (d > 0)
            json_obj_set_int(calls, ec->keys[i], d);
    }
    return 0;
}

/* Sorted by count, largest first, then by name (a stable, readable order). */
static int by_count(const void *a, const void *b, const struct json *o)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int64_t x = o->kids[i]->i, y = o->kids[j]->i;
    if (x != y)
        return x < y ? 1 : -1;
    return strcmp(o->keys[i], o->keys[j]);
}

/* Contract: a copy of calls ordered by count (largest first). */
static struct json *ordered(const struct json *calls)
{
    struct json *out = json_new_obj();
    size_t n = calls->n;
    size_t *idx = xcalloc(n + 1, sizeof(*idx));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: a few dozen types */
        for (size_t k = i; k > 0 && by_count(&idx[k - 1], &idx[k], calls) > 0; k--) {
            size_t t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        json_obj_set_int(out, calls->keys[idx[i]], calls->kids[idx[i]]->i);
    free(idx);
    return out;
}

static void set_ratio(struct json *o, const char *key, double num, double den)
{
    if (den > 0 && isfinite(num / den))
        json_obj_set_num(o, key, round(num / den * 1000.0) / 1000.0);
    else
        json_obj_set(o, key, json_new_null());
}

/* The section when nothing could be measured: why in note. */
static int unmeasured(struct json *o, const struct check_params *p, const char *why)
{
    int v = p->max_commands_per_grant > 0 ? VERDICT_UNKNOWN : VERDICT_VALID;
    json_obj_set_bool(o, "valid", v == VERDICT_VALID);
    json_obj_set_str(o, "verdict", verdict_name(v));
    json_obj_set_bool(o, "measured", 0);
    json_obj_set(o, "per_grant", json_new_null());
    if (p->max_commands_per_grant > 0)
        json_obj_set_num(o, "max_per_grant", p->max_commands_per_grant);
    json_obj_set_str(o, "note", why);
    return v;
}

int check_commands(struct history *h, const struct check_params *p, struct json *res)
{
    char path[4096], why[512];
    struct json *doc = NULL;
    int loaded = -1;
    if (h->from_rundir && h->source) {
        snprintf(path, sizeof(path), "%s/commands.json", h->source);
        char e[160];
        loaded = json_load_file(path, &doc, e, sizeof(e));
        if (loaded == -2)
            check_warn(res, "commands.json: not JSON (%s)", e);
    }
    if (loaded != 0 && p->max_commands_per_grant <= 0)
        return VERDICT_VALID; /* nothing recorded, nothing asked: no section */
    struct json *checks = (struct json *)json_obj_get(res, "checks");
    struct json *o = json_obj_set(checks, "commands", json_new_obj());
    if (loaded != 0) {
        int v = unmeasured(o, p, !h->from_rundir ? "no run directory"
                                 : loaded == -1 ? "commands.json missing (a run of a lockstorm "
                                                  "that did not sample the nodes)"
                                                : "commands.json is not JSON");
        json_free(doc);
        return v;
    }
    const struct json *measured = json_obj_get(doc, "measured");
    if (!measured || measured->type != JSON_BOOL || !measured->i) {
        int v = unmeasured(o, p, json_get_str(doc, "why", "not measured"));
        json_free(doc);
        return v;
    }

    const struct json *nodes = json_obj_get(doc, "nodes");
    double window_s = (json_get_num(doc, "end_ms", 0) - json_get_num(doc, "start_ms", 0)) / 1e3;
    int64_t grants = json_get_int(json_obj_get(res, "counts"), "grants", 0);
    struct json *by_type = json_new_obj(), *per_node = json_new_arr();
    int64_t lock_total = 0, other_total = 0;
    double busiest = 0;
    int nodes_ok = 0, nodes_reset = 0;
    why[0] = '\0';
    for (size_t i = 0; nodes && nodes->type == JSON_ARR && i < nodes->n; i++) {
        const struct json *nd = nodes->kids[i];
        struct json *calls = json_new_obj();
        int reset = 0;
        int rc = commands_delta(json_obj_get(nd, "start"), json_obj_get(nd, "end"), calls, &reset);
        struct json *pn = json_arr_push(per_node, json_new_obj());
        json_obj_set_int(pn, "node", json_get_int(nd, "node", (int64_t)i));
        json_obj_set_str(pn, "addr", json_get_str(nd, "addr", "?"));
        json_obj_set_bool(pn, "measured", rc == 0);
        if (rc < 0) {
            const char *err = json_get_str(json_obj_get(nd, "end"), "error",
                                           json_get_str(json_obj_get(nd, "start"), "error",
                                                        "no sample"));
            if (!why[0])
                snprintf(why, sizeof(why), "node %zu not sampled: %s", i, err);
            json_obj_set_str(pn, "error", err);
            json_free(calls);
            continue;
        }
        nodes_ok++;
        nodes_reset += reset;
        if (reset && !why[0])
            snprintf(why, sizeof(why), "node %zu restarted during the run (its counters started "
                     "again): its commands are counted since then only, a lower bound", i);
        int64_t lk = 0, other = 0;
        for (size_t k = 0; k < calls->n; k++) {
            int64_t c = calls->kids[k]->i;
            if (commands_type_is_lock(calls->keys[k]))
                lk += c;
            else
                other += c;
            json_obj_set_int(by_type, calls->keys[k], json_get_int(by_type, calls->keys[k], 0) + c);
        }
        lock_total += lk;
        other_total += other;
        json_obj_set_bool(pn, "reset", reset);
        json_obj_set_int(pn, "lock_commands", lk);
        json_obj_set_int(pn, "other_commands", other);
        set_ratio(pn, reset ? "per_grant_at_least" : "per_grant", (double)lk, (double)grants);
        set_ratio(pn, "per_s", (double)lk, window_s);
        if (window_s > 0 && (double)lk / window_s > busiest)
            busiest = (double)lk / window_s;
        json_obj_set(pn, "calls", ordered(calls));
        json_free(calls);
    }
    int nnodes = nodes && nodes->type == JSON_ARR ? (int)nodes->n : 0;
    if (nnodes == 0)
        snprintf(why, sizeof(why), "no lock node sampled");

    int complete = nnodes > 0 && nodes_ok == nnodes;
    int exact = complete && nodes_reset == 0;
    int v = VERDICT_VALID;
    double lim = p->max_commands_per_grant;
    double ratio = grants > 0 ? (double)lock_total / (double)grants : NAN;
    if (grants == 0 && !why[0])
        snprintf(why, sizeof(why), "no grant in the run: commands per grant undefined");
    if (lim > 0) {
        if (grants > 0 && nodes_ok > 0 && ratio > lim)
            v = VERDICT_INVALID; /* a lower bound over the limit is over it too */
        else if (!exact || grants == 0)
            v = VERDICT_UNKNOWN;
    }
    json_obj_set_bool(o, "valid", v == VERDICT_VALID);
    json_obj_set_str(o, "verdict", verdict_name(v));
    json_obj_set_bool(o, "measured", exact);
    if (exact)
        set_ratio(o, "per_grant", (double)lock_total, (double)grants);
    else
        json_obj_set(o, "per_grant", json_new_null());
    if (!exact && nodes_ok > 0 && grants > 0)
        set_ratio(o, "per_grant_at_least", (double)lock_total, (double)grants);
    if (lim > 0)
        json_obj_set_num(o, "max_per_grant", lim);
    json_obj_set_int(o, "grants", grants);
    json_obj_set_int(o, "lock_commands", lock_total);
    json_obj_set_int(o, "other_commands", other_total);
    json_obj_set_int(o, "nodes", nnodes);
    json_obj_set_num(o, "window_s", round(window_s * 1000.0) / 1000.0);
    set_ratio(o, "per_s", (double)lock_total, window_s);
    json_obj_set_num(o, "busiest_node_per_s", round(busiest * 1000.0) / 1000.0);
    if (why[0])
        json_obj_set_str(o, "note", why);
    json_obj_set(o, "by_type", ordered(by_type));
    json_free(by_type);
    json_obj_set(o, "per_node", per_node);
    json_free(doc);
    return v;
}
