/*
 * link.c: the link fault kinds, acting on proxy links (faults/proxy.h):
 * `latency` (delay + jitter per chunk), `partition` (blackhole | hold |
 * reset), `bandwidth` (token bucket) and `slicer` (small writes), each on
 * the to-node, from-node or both directions of the links its target names
 * (target links: workers x nodes, isolate, split; or node:N, worker:N,
 * random-worker, all-workers, holder, acquirer: that worker's links to
 * every node). A start counts only once the proxy acknowledged the new
 * rule table; a reset also reports how many open connections it reset.
 * Kind command puts a command rule on its links' requests instead (the
 * proxy parses them: faults/proxy_cmd.c) and reports at its end how many
 * requests matched and what was done to them.
 */
#include <stddef.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "faults/target.h"
#include "faults/proxy.h"
#include "faults/link_target.h"
#include "util/timeutil.h"

#define NS_MS 1e6
#define NS_S 1e9
#define BUSY_WAIT LS_NS_PER_S
#define MAX_LINKS_LISTED 1024

enum direction { DIR_BOTH, DIR_TO_NODE, DIR_FROM_NODE };
static const char *const direction_choices[] = {"both", "to-node", "from-node", NULL};
static const char *const mode_choices[] = {"blackhole", "hold", "reset", NULL};
static const int mode_partition[] = {PROXY_PART_BLACKHOLE, PROXY_PART_HOLD, PROXY_PART_RESET};

#define DIRECTION_ROW(type)                                                                     \
    {"direction", OPT_ENUM, offsetof(type, direction), "both", 0, 0, direction_choices, NULL,   \
     "which way the rule acts on each link: to-node (requests), from-node (replies) or both"}

struct latency_opts {
    int64_t delay, jitter;
    int direction;
};

static const struct opt_def latency_tab[] = {
    {"delay", OPT_DURATION, offsetof(struct latency_opts, delay), "50ms", NS_MS / 1000, 60 * NS_S,
     NULL, NULL,
     "one-way delay added to every chunk in each chosen direction (a round trip through "
     "direction both takes 2 x delay more)"},
    {"jitter", OPT_DURATION, offsetof(struct latency_opts, jitter), "0", 0, 60 * NS_S, NULL, NULL,
     "extra delay per chunk, uniform in 0..jitter; bytes are never reordered"},
    DIRECTION_ROW(struct latency_opts),
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

struct partition_opts {
    int mode;
    int direction;
};

static const struct opt_def partition_tab[] = {
    {"mode", OPT_ENUM, offsetof(struct partition_opts, mode), "blackhole", 0, 0, mode_choices, NULL,
     "blackhole: bytes dropped, connections stay open (clients time out); hold: bytes kept and "
     "delivered at the end (late replies); reset: connections reset, new ones reset until the end"},
    DIRECTION_ROW(struct partition_opts),
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

struct bandwidth_opts {
    int64_t rate;
    int direction;
};

static const struct opt_def bandwidth_tab[] = {
    {"rate", OPT_INT, offsetof(struct bandwidth_opts, rate), "10000", 1, 1e10, NULL, NULL,
     "bytes per second per connection and direction (token bucket, 20 ms burst)"},
    DIRECTION_ROW(struct bandwidth_opts),
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

struct slicer_opts {
    int64_t size, gap;
    int direction;
};

static const struct opt_def slicer_tab[] = {
    {"size", OPT_INT, offsetof(struct slicer_opts, size), "1", 1, 65536, NULL, NULL,
     "at most this many bytes per write"},
    {"gap", OPT_DURATION, offsetof(struct slicer_opts, gap), "0", 0, NS_S, NULL, NULL,
     "pause after each write, so the receiver reads the pieces one by one"},
    DIRECTION_ROW(struct slicer_opts),
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

struct command_opts {
    char *command, *sha, *key, *error;
    int action;
    int64_t delay, limit;
};

static const char *const action_choices[] = {"delay", "drop", "drop-reply", "error", NULL};
static const int action_proxy[] = {PROXY_CMD_DELAY, PROXY_CMD_DROP, PROXY_CMD_DROP_REPLY,
                                   PROXY_CMD_ERROR};
/* what the end line calls the requests acted on, per action */
static const char *const action_done[] = {"delayed", "dropped", "replies_dropped", "answered"};

static const struct opt_def command_tab[] = {
    {"command", OPT_STRING, offsetof(struct command_opts, command), NULL, 0, 0, NULL, NULL,
     "required: the command name requests must have (any case), e.g. DEL, SET, EVALSHA"},
    {"sha", OPT_STRING, offsetof(struct command_opts, sha), "", 0, 0, NULL, NULL,
     "EVALSHA only: a prefix (hex) of the script SHA1 the request runs; empty = any"},
    {"key", OPT_STRING, offsetof(struct command_opts, key), "", 0, 0, NULL, NULL,
     "a glob (* ? [a-z]) the request's first key must match (EVAL/EVALSHA: KEYS[1]); "
     "empty = any"},
    {"action", OPT_ENUM, offsetof(struct command_opts, action), "delay", 0, 0, action_choices,
     NULL,
     "delay: forward it `delay` later (what follows it waits too); drop: never forward it; "
     "drop-reply: forward it, drop the node's reply; error: answer `error` instead of "
     "forwarding it. After a drop the connection is reset at the client's next request"},
    {"delay", OPT_DURATION, offsetof(struct command_opts, delay), "100ms", 0, 60 * NS_S, NULL,
     NULL, "action delay: how much later the request reaches the node"},
    {"error", OPT_STRING, offsetof(struct command_opts, error), "READONLY", 0, 0, NULL, NULL,
     "action error: READONLY, OOM, BUSY or NOSCRIPT (Redis's own message for it), or the text "
     "of the error reply (up to 120 printable characters, e.g. 'ERR no')"},
    {"limit", OPT_INT, offsetof(struct command_opts, limit), "0", 0, 1e9, NULL, NULL,
     "act on at most this many matching requests per occurrence (later ones are counted as "
     "matched, and forwarded); 0 = every one"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* The error words action error knows, with Redis's own messages. */
static const char *const canned_errors[][2] = {
    {"READONLY", "READONLY You can't write against a read only replica."},
    {"OOM", "OOM command not allowed when used memory > 'maxmemory'."},
    {"BUSY", "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSCRIPT."},
    {"NOSCRIPT", "NOSCRIPT No matching script. Please use EVAL."},
};

static const char *command_error_text(const char *e)
{
    for (size_t i = 0; i < sizeof(canned_errors) / sizeof(canned_errors[0]); i++)
        if (strcmp(e, canned_errors[i][0]) == 0)
            return canned_errors[i][1];
    return e;
}

static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

static const char *command_check_keys(const struct fault_spec *fs, char *why, size_t n)
{
    const struct command_opts *o = fs->params;
    if (!o->command || !o->command[0]) {
        snprintf(why, n, "required: the command name to match, e.g. command: DEL");
        return "command";
    }
    size_t len = strlen(o->command);
    int ok = len <= PROXY_CMD_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++) {
        char ch = o->command[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '-' || ch == '|';
    }
    if (!ok) {
        snprintf(why, n, "'%.40s' is not a command name (letters, digits, _ - |; at most %d)",
                 o->command, PROXY_CMD_NAME_MAX);
        return "command";
    }
    len = strlen(o->sha);
    ok = len <= PROXY_CMD_SHA_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (o->sha[i] >= '0' && o->sha[i] <= '9') || (o->sha[i] >= 'a' && o->sha[i] <= 'f') ||
             (o->sha[i] >= 'A' && o->sha[i] <= 'F');
    if (!ok) {
        snprintf(why, n, "'%.48s' is not a SHA1 prefix (up to 40 hex digits)", o->sha);
        return "sha";
    }
    if (len > 0 && strcasecmp(o->command, "EVALSHA") != 0 &&
        strcasecmp(o->command, "EVALSHA_RO") != 0) {
        snprintf(why, n, "only applies with command: EVALSHA (the script SHA is its first "
                         "argument)");
        return "sha";
    }
    if (strlen(o->key) > PROXY_CMD_KEY_MAX || !printable(o->key)) {
        snprintf(why, n, "a key glob of at most %d printable characters", PROXY_CMD_KEY_MAX);
        return "key";
    }
    const char *e = command_error_text(o->error);
    if (!o->error[0] || strlen(e) > PROXY_CMD_REPLY_MAX || !printable(e)) {
        snprintf(why, n, "READONLY, OOM, BUSY, NOSCRIPT or an error text of 1 to %d printable "
                         "characters", PROXY_CMD_REPLY_MAX);
        return "error";
    }
    return NULL;
}

static unsigned dir_bits(int direction)
{
    switch (direction) {
    case DIR_TO_NODE: return PROXY_DIR_BIT(PROXY_TO_NODE);
    case DIR_FROM_NODE: return PROXY_DIR_BIT(PROXY_FROM_NODE);
    default: return PROXY_BOTH;
    }
}

static void mark_worker(uint8_t *sel, int nnodes, int w)
{
    memset(sel + (size_t)w * (size_t)nnodes, 1, (size_t)nnodes);
}

/* target holder / acquirer: a worker holding (inside an acquire of) a lock
 * right now, waiting up to 1 s for one. Returns the worker or -1. */
static int busy_worker(const struct fault_env *env, const struct fault_spec *s, int acquiring,
                       struct json *detail)
{
    int i = fault_wait_busy(env, acquiring, s->resource, ls_now_ns() + BUSY_WAIT);
    if (i < 0)
        return -1;
    int h = fault_busy_with(env, i, acquiring, s->resource, NULL);
    char name[16];
    json_obj_set_str(detail, acquiring ? "acquiring_resource" : "held_resource",
                     fault_res_name(env, h < 0 ? 0 : h, name, sizeof(name)));
    return i;
}

/* The links of fi's target into sel (nworkers * nnodes). Returns how many. */
static int resolve(const struct fault_env *env, struct fault_inst *fi, uint8_t *sel)
{
    const struct fault_spec *s = fi->spec;
    int nw = env->ops->nworkers(env->ctx), nn = env->ops->nnodes(env->ctx);
    memset(sel, 0, (size_t)nw * (size_t)nn);
    int w = -1;
    switch (s->target) {
    case TARGET_LINKS: {
        uint32_t used = 0;
        int n = link_target_resolve(&s->links, nw, nn, env->ops->rng(env->ctx), sel, &used);
        if (s->links.nodes_sel == LINK_NODES_MINORITY || s->links.nodes_sel == LINK_NODES_MAJORITY) {
            struct json *a = json_obj_set(fi->detail, "nodes_drawn", json_new_arr());
            for (int k = 0; k < nn; k++)
                if (used & (1u << k))
                    json_arr_push(a, json_new_int(k));
        }
        return n;
    }
    case TARGET_NODE:
        if (s->target_index < 0 || s->target_index >= nn)
            return 0;
        for (int i = 0; i < nw; i++)
            sel[(size_t)i * (size_t)nn + (size_t)s->target_index] = 1;
        fi->node = s->target_index;
        return nw;
    case TARGET_ALL_WORKERS:
        memset(sel, 1, (size_t)nw * (size_t)nn);
        return nw * nn;
    case TARGET_WORKER:
        w = s->target_index;
        break;
    case TARGET_RANDOM_WORKER:
        w = fault_random_worker(env, LINK_MAX_WORKERS);
        break;
    case TARGET_HOLDER:
    case TARGET_ACQUIRER:
        w = busy_worker(env, s, s->target == TARGET_ACQUIRER, fi->detail);
        break;
    default:
        break;
    }
    if (w < 0 || w >= nw)
        return 0;
    mark_worker(sel, nn, w);
    fi->worker = w;
    return nn;
}

/* Record the links (pairs, capped) and how many; a fault on one worker's
 * or one node's links only names that worker or node (fi->worker/node). */
static void record_links(struct fault_inst *fi, const uint8_t *sel, int nw, int nn, int count)
{
    struct json *a = json_obj_set(fi->detail, "links", json_new_arr());
    int listed = 0, one_w = -1, one_n = -1;
    for (int w = 0; w < nw; w++) {
        for (int n = 0; n < nn; n++) {
            if (!sel[(size_t)w * (size_t)nn + (size_t)n])
                continue;
            one_w = one_w == -1 || one_w == w ? w : -2;
            one_n = one_n == -1 || one_n == n ? n : -2;
            if (listed >= MAX_LINKS_LISTED)
                continue;
            struct json *p = json_arr_push(a, json_new_arr());
            json_arr_push(p, json_new_int(w));
            json_arr_push(p, json_new_int(n));
            listed++;
        }
    }
    if (one_w >= 0)
        fi->worker = one_w;
    if (one_n >= 0)
        fi->node = one_n;
    json_obj_set_int(fi->detail, "links_count", count);
}

/* Per occurrence: its links and their counters at the start, so the end
 * line can say what crossed them during the window. */
struct link_state {
    uint8_t *sel;                  /* nworkers * nnodes, 1 = the fault's link (owned) */
    struct proxy_link_stats at_start;
};

/* Sum of the counters of the links in sel. */
static void sum_stats(const struct fault_env *env, const uint8_t *sel,
                      struct proxy_link_stats *out)
{
    int nn = env->ops->nnodes(env->ctx), nw = env->ops->nworkers(env->ctx);
    memset(out, 0, sizeof(*out));
    for (int w = 0; w < nw; w++) {
        for (int n = 0; n < nn; n++) {
            if (!sel[(size_t)w * (size_t)nn + (size_t)n])
                continue;
            struct proxy_link_stats st;
            env->ops->link_stats(env->ctx, w, n, &st);
            out->accepted += st.accepted;
            out->resets += st.resets;
            out->cmd_oversized += st.cmd_oversized;
            out->cmd_unfollowed += st.cmd_unfollowed;
            out->cmd_lost += st.cmd_lost;
            out->cmd_taken += st.cmd_taken;
            for (int d = 0; d < 2; d++) {
                out->bytes[d] += st.bytes[d];
                out->dropped[d] += st.dropped[d];
                out->writes[d] += st.writes[d];
            }
        }
    }
}

/* Resolve the target, put rule on its links and wait for the proxy's ack. */
static int link_start(const struct fault_env *env, struct fault_inst *fi, unsigned what,
                      const struct proxy_rule *rule, int direction,
                      const struct proxy_cmd_rule *cmd, struct ls_err *err)
{
    const char *kind = fi->spec->ops->name;
    if (!env->ops->has_links(env->ctx))
        return ls_err_set(err, LS_EENV, "%s: this run has no proxy to act on", kind);
    int nw = env->ops->nworkers(env->ctx), nn = env->ops->nnodes(env->ctx);
    uint8_t *sel = malloc((size_t)nw * (size_t)nn);
    if (!sel)
        return ls_err_set(err, LS_ENOMEM, "%s: out of memory", kind);
    int count = resolve(env, fi, sel);
    if (count == 0) {
        free(sel);
        return 1;
    }
    record_links(fi, sel, nw, nn, count);
    struct link_state *ls = calloc(1, sizeof(*ls));
    uint8_t *dirs = malloc((size_t)nw * (size_t)nn);
    if (!ls || !dirs) {
        free(ls);
        free(dirs);
        free(sel);
        return ls_err_set(err, LS_ENOMEM, "%s: out of memory", kind);
    }
    unsigned bits = dir_bits(direction);
    for (size_t i = 0; i < (size_t)nw * (size_t)nn; i++)
        dirs[i] = sel[i] ? (uint8_t)bits : 0;
    ls->sel = sel;
    fi->state = ls;
    struct proxy_ack ack;
    int rc;
    if (cmd && !env->ops->links_cmd_set)
        rc = ls_err_set(err, LS_EENV, "%s: this run's proxy takes no command rules", kind);
    else if (cmd)
        rc = env->ops->links_cmd_set(env->ctx, fi->id, cmd, sel, &ack, err);
    else
        rc = env->ops->links_set(env->ctx, fi->id, what, rule, dirs, &ack, err);
    free(dirs);
    if (rc < 0)
        return rc; /* stop (called by the scheduler) frees the state */
    fi->start_ns = env->ops->now(env->ctx);
    /* counted from the ack on: every write from here on is under the rule */
    sum_stats(env, sel, &ls->at_start);
    json_obj_set_int(fi->detail, "proxy_pid", env->ops->links_pid(env->ctx));
    json_obj_set_str(fi->detail, "direction", direction_choices[direction]);
    json_obj_set_int(fi->detail, "proxy_generation", (int64_t)ack.generation);
    json_obj_set_num(fi->detail, "proxy_ack_ms", (double)ack.waited_ns / 1e6);
    if (cmd || ((what & PROXY_SET_PARTITION) && rule->partition == PROXY_PART_RESET))
        json_obj_set_int(fi->detail, "connections_reset", (int64_t)ack.resets);
    return 0;
}

extern const struct fault_ops fault_command;

/* The end line of a command fault: what its rule met (read after the rule
 * was lifted, so exact), and whether it bit: a rule that acted on no
 * request did not (checkers/coverage.c takes `bit` from here). */
static void command_end(const struct fault_env *env, struct fault_inst *fi, struct json *e,
                        const struct proxy_link_stats *now, const struct proxy_link_stats *a)
{
    const struct command_opts *o = fi->spec->params;
    struct proxy_cmd_stats cs;
    memset(&cs, 0, sizeof(cs));
    if (env->ops->links_cmd_stats)
        env->ops->links_cmd_stats(env->ctx, fi->id, &cs);
    struct json *r = json_obj_set(e, "requests", json_new_obj());
    json_obj_set_int(r, "matched", (int64_t)cs.matched);
    json_obj_set_int(r, action_done[o->action], (int64_t)cs.acted);
    json_obj_set_int(r, "oversized", (int64_t)(now->cmd_oversized - a->cmd_oversized));
    json_obj_set_int(r, "connections_unfollowed",
                     (int64_t)(now->cmd_unfollowed - a->cmd_unfollowed));
    json_obj_set_int(r, "connections_lost", (int64_t)(now->cmd_lost - a->cmd_lost));
    json_obj_set_bool(e, "bit", cs.acted > 0);
    char why[160];
    if (cs.acted > 0)
        snprintf(why, sizeof(why), "%llu %s request%s matched, %llu %s",
                 (unsigned long long)cs.matched, o->command, cs.matched == 1 ? "" : "s",
                 (unsigned long long)cs.acted, action_done[o->action]);
    else
        snprintf(why, sizeof(why), "no %s request %s its rule during the window", o->command,
                 cs.matched ? "was acted on by (past its limit)" : "matched");
    json_obj_set_str(e, "bit_why", why);
}

/* Lift the fault's rules (acknowledged) and put on the end line what
 * crossed its links during the window: bytes forwarded and dropped, writes,
 * connections accepted and reset, per direction. */
static int link_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    struct link_state *ls = fi->state;
    struct proxy_link_stats now;
    int links = env->ops->has_links(env->ctx);
    if (ls && links)
        sum_stats(env, ls->sel, &now); /* before the rule is lifted */
    int rc = links ? env->ops->links_clear(env->ctx, fi->id, err) : 0;
    if (ls && links) {
        const struct proxy_link_stats *a = &ls->at_start;
        json_free(fi->end_detail);
        struct json *e = fi->end_detail = json_new_obj();
        static const char *const dn[2] = {"to_node", "from_node"};
        char key[32];
        for (int d = 0; d < 2; d++) {
            snprintf(key, sizeof(key), "bytes_%s", dn[d]);
            json_obj_set_int(e, key, (int64_t)(now.bytes[d] - a->bytes[d]));
            snprintf(key, sizeof(key), "writes_%s", dn[d]);
            json_obj_set_int(e, key, (int64_t)(now.writes[d] - a->writes[d]));
            snprintf(key, sizeof(key), "dropped_%s", dn[d]);
            json_obj_set_int(e, key, (int64_t)(now.dropped[d] - a->dropped[d]));
        }
        json_obj_set_int(e, "connections_accepted", (int64_t)(now.accepted - a->accepted));
        json_obj_set_int(e, "connections_reset", (int64_t)(now.resets - a->resets));
        if (fi->spec->ops == &fault_command)
            command_end(env, fi, e, &now, a);
    }
    if (ls) {
        free(ls->sel);
        free(ls);
        fi->state = NULL;
    }
    return rc;
}

static int latency_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct latency_opts *o = fi->spec->params;
    struct proxy_rule rule = {.delay_ns = o->delay, .jitter_ns = o->jitter};
    return link_start(env, fi, PROXY_SET_LATENCY, &rule, o->direction, NULL, err);
}

static int partition_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct partition_opts *o = fi->spec->params;
    struct proxy_rule rule = {.partition = mode_partition[o->mode]};
    return link_start(env, fi, PROXY_SET_PARTITION, &rule, o->direction, NULL, err);
}

static int bandwidth_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct bandwidth_opts *o = fi->spec->params;
    struct proxy_rule rule = {.rate = o->rate};
    return link_start(env, fi, PROXY_SET_RATE, &rule, o->direction, NULL, err);
}

static int slicer_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct slicer_opts *o = fi->spec->params;
    struct proxy_rule rule = {.slice = o->size, .gap_ns = o->gap};
    return link_start(env, fi, PROXY_SET_SLICE, &rule, o->direction, NULL, err);
}

/* A nemesis draw (or any spec) whose keys would not load: refused at load. */
static int command_validate(const struct workload *w, const struct fault_spec *fs, char *why,
                            size_t n)
{
    (void)w;
    char reason[200];
    const char *key = command_check_keys(fs, reason, sizeof(reason));
    if (!key)
        return 0;
    snprintf(why, n, "command.%s: %s", key, reason);
    return -1;
}

static int command_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct command_opts *o = fi->spec->params;
    char why[160];
    if (command_check_keys(fi->spec, why, sizeof(why)))
        return ls_err_set(err, LS_EUSAGE, "command: %s", why);
    struct proxy_cmd_rule rule;
    memset(&rule, 0, sizeof(rule));
    for (size_t i = 0; o->command[i] && i < PROXY_CMD_NAME_MAX; i++)
        rule.command[i] = (char)toupper((unsigned char)o->command[i]);
    for (size_t i = 0; o->sha[i] && i < PROXY_CMD_SHA_MAX; i++)
        rule.sha[i] = (char)tolower((unsigned char)o->sha[i]);
    snprintf(rule.key, sizeof(rule.key), "%s", o->key);
    snprintf(rule.reply, sizeof(rule.reply), "%s", command_error_text(o->error));
    rule.action = action_proxy[o->action];
    rule.delay_ns = o->delay;
    rule.limit = o->limit;
    int rc = link_start(env, fi, 0, NULL, DIR_TO_NODE, &rule, err);
    if (rc == 0) {
        json_obj_set_str(fi->detail, "command", rule.command);
        json_obj_set_str(fi->detail, "action", action_choices[o->action]);
        if (rule.sha[0])
            json_obj_set_str(fi->detail, "sha", rule.sha);
        if (rule.key[0])
            json_obj_set_str(fi->detail, "key", rule.key);
        if (rule.action == PROXY_CMD_DELAY)
            json_obj_set_num(fi->detail, "delay_ms", (double)o->delay / NS_MS);
        if (rule.action == PROXY_CMD_ERROR)
            json_obj_set_str(fi->detail, "error", rule.reply);
        if (o->limit > 0)
            json_obj_set_int(fi->detail, "limit", o->limit);
    }
    return rc;
}

#define LINK_TARGETS                                                                        \
    ((1u << TARGET_LINKS) | (1u << TARGET_NODE) | (1u << TARGET_WORKER) |                   \
     (1u << TARGET_RANDOM_WORKER) | (1u << TARGET_ALL_WORKERS) | (1u << TARGET_HOLDER) |    \
     (1u << TARGET_ACQUIRER))

const struct fault_ops fault_latency = {
    .version = FAULT_OPS_VERSION,
    .name = "latency",
    .help = "delay every chunk on the target links by delay + U[0, jitter] (through the proxy; "
            "order kept)",
    .targets = LINK_TARGETS,
    .options = latency_tab,
    .options_size = sizeof(struct latency_opts),
    .start = latency_start,
    .stop = link_stop,
    .flags = FAULT_PROXY_ONLY,
};

const struct fault_ops fault_partition = {
    .version = FAULT_OPS_VERSION,
    .name = "partition",
    .help = "cut the target links: blackhole (drop, clients time out), hold (deliver late), or "
            "reset (RST, refuse)",
    .targets = LINK_TARGETS,
    .options = partition_tab,
    .options_size = sizeof(struct partition_opts),
    .start = partition_start,
    .stop = link_stop,
    .flags = FAULT_PROXY_ONLY,
};

const struct fault_ops fault_bandwidth = {
    .version = FAULT_OPS_VERSION,
    .name = "bandwidth",
    .help = "limit the target links to rate bytes/s per connection and direction",
    .targets = LINK_TARGETS,
    .options = bandwidth_tab,
    .options_size = sizeof(struct bandwidth_opts),
    .start = bandwidth_start,
    .stop = link_stop,
    .flags = FAULT_PROXY_ONLY,
};

const struct fault_ops fault_slicer = {
    .version = FAULT_OPS_VERSION,
    .name = "slicer",
    .help = "split what crosses the target links into writes of at most size bytes (parser "
            "robustness)",
    .targets = LINK_TARGETS,
    .options = slicer_tab,
    .options_size = sizeof(struct slicer_opts),
    .start = slicer_start,
    .stop = link_stop,
    .flags = FAULT_PROXY_ONLY,
};

const struct fault_ops fault_command = {
    .version = FAULT_OPS_VERSION,
    .name = "command",
    .help = "act on the requests of one Redis command on the target links: delay them, drop "
            "them, drop their replies, or answer an error (the proxy parses RESP2 while it "
            "is in force)",
    .targets = LINK_TARGETS,
    .options = command_tab,
    .options_size = sizeof(struct command_opts),
    .start = command_start,
    .stop = link_stop,
    .flags = FAULT_PROXY_ONLY,
    .check_keys = command_check_keys,
    .validate = command_validate,
};
