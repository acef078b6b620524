/*
 * cmdstats.c: INFO commandstats of the lock nodes, parsed and sampled, and
 * the commands.json document (see cmdstats.h). Sampling is bounded: one
 * connection per node with a timeout; a node that does not answer (killed
 * by a fault, an external node that refuses INFO) gives an entry with its
 * error, never a wait.
 */
#include "backends/cmdstats.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/timeutil.h"

/* Contract: the value of "calls=" in the fields after a cmdstat name
 * (p[0..n) = "calls=12,usec=...") into *out. Returns 0, or -1 when absent
 * or not a decimal count. */
static int calls_field(const char *p, size_t n, int64_t *out)
{
    const char *key = "calls=";
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl <= n; i++) {
        if ((i == 0 || p[i - 1] == ',') && memcmp(p + i, key, kl) == 0) {
            int64_t v = 0;
            size_t j = i + kl, start = j;
            while (j < n && p[j] >= '0' && p[j] <= '9') {
                if (v > (INT64_MAX - 9) / 10)
                    return -1;
                v = v * 10 + (p[j] - '0');
                j++;
            }
            if (j == start || (j < n && p[j] != ','))
                return -1;
            *out = v;
            return 0;
        }
    }
    return -1;
}

int cmdstats_parse(const char *text, size_t len, struct json *calls, char *run_id, size_t n)
{
    int found = 0;
    if (run_id && n)
        run_id[0] = '\0';
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        size_t l = e - i;
        if (l && text[i + l - 1] == '\r')
            l--;
        const char *line = text + i;
        static const char pre[] = "cmdstat_";
        if (l > sizeof(pre) - 1 && memcmp(line, pre, sizeof(pre) - 1) == 0) {
            const char *name = line + sizeof(pre) - 1;
            const char *colon = memchr(name, ':', l - (sizeof(pre) - 1));
            int64_t v;
            if (colon && colon > name && (size_t)(colon - name) < 128 &&
                calls_field(colon + 1, (size_t)(line + l - colon - 1), &v) == 0) {
                char key[128];
                memcpy(key, name, (size_t)(colon - name));
                key[colon - name] = '\0';
                json_obj_set_int(calls, key, v);
                found++;
            }
        } else if (run_id && n > 1 && l > 7 && memcmp(line, "run_id:", 7) == 0) {
            size_t vl = l - 7 < n - 1 ? l - 7 : n - 1;
            memcpy(run_id, line + 7, vl);
            run_id[vl] = '\0';
        }
        i = e + 1;
    }
    return found;
}

/* Contract: one node's sample (see cmdstats_sample). */
static struct json *sample_node(const struct node_proc *np, int64_t timeout_ns)
{
    struct json *o = json_new_obj();
    struct timeval tv = {(time_t)(timeout_ns / LS_NS_PER_S),
                         (suseconds_t)(timeout_ns % LS_NS_PER_S / 1000)};
    redisContext *c = np->port > 0 ? node_connect(np, tv) : NULL;
    const char *err = NULL;
    char why[256];
    if (!c || c->err) {
        snprintf(why, sizeof(why), "cannot connect to %s:%d: %s", np->host, np->port,
                 c ? c->errstr : "no address (node not running)");
        err = why;
    }
    char run_id[64] = "";
    struct json *calls = json_new_obj();
    for (int k = 0; !err && k < 2; k++) {
        redisSetTimeout(c, tv);
        redisReply *rep = redisCommand(c, k == 0 ? "INFO server" : "INFO commandstats");
        if (!rep || rep->type != REDIS_REPLY_STRING) {
            snprintf(why, sizeof(why), "INFO %s on %s:%d: %s", k == 0 ? "server" : "commandstats",
                     np->host, np->port,
                     !rep ? c->errstr : rep->type == REDIS_REPLY_ERROR ? rep->str : "not text");
            err = why;
        } else if (k == 0) {
            cmdstats_parse(rep->str, rep->len, calls, run_id, sizeof(run_id));
        } else {
            cmdstats_parse(rep->str, rep->len, calls, NULL, 0);
        }
        if (rep)
            freeReplyObject(rep);
    }
    if (c)
        redisFree(c);
    json_obj_set_bool(o, "ok", err == NULL);
    if (err) {
        json_obj_set_str(o, "error", err);
        json_free(calls);
    } else {
        json_obj_set_str(o, "run_id", run_id);
        json_obj_set(o, "calls", calls);
    }
    return o;
}

struct json *cmdstats_sample(const struct cluster *c, int64_t timeout_ns)
{
    struct json *arr = json_new_arr();
    for (int i = 0; c && i < c->nnodes; i++)
        json_arr_push(arr, sample_node(&c->nodes[i], timeout_ns));
    return arr;
}

struct json *cmdstats_document(const struct cluster *c, struct json *start, struct json *end,
                               double t_start_ms, double t_end_ms, const char *why)
{
    struct json *d = json_new_obj();
    json_obj_set_str(d, "format", CMDSTATS_FORMAT);
    json_obj_set_int(d, "version", CMDSTATS_VERSION);
    json_obj_set_bool(d, "measured", why == NULL);
    if (why) {
        json_obj_set_str(d, "why", why);
        json_free(start);
        json_free(end);
        return d;
    }
    json_obj_set_num(d, "start_ms", t_start_ms);
    json_obj_set_num(d, "end_ms", t_end_ms);
    struct json *nodes = json_obj_set(d, "nodes", json_new_arr());
    for (int i = 0; c && i < c->nnodes; i++) {
        struct json *n = json_arr_push(nodes, json_new_obj());
        char addr[96];
        snprintf(addr, sizeof(addr), "%s:%d", c->nodes[i].host, c->nodes[i].port);
        json_obj_set_int(n, "node", i);
        json_obj_set_str(n, "addr", addr);
        const struct json *s = json_arr_get(start, (size_t)i), *e = json_arr_get(end, (size_t)i);
        json_obj_set(n, "start", s ? json_clone(s) : json_new_null());
        json_obj_set(n, "end", e ? json_clone(e) : json_new_null());
    }
    json_free(start);
    json_free(end);
    return d;
}
