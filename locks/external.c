/*
 * external.c: the `external` lock implementation: each worker's lock calls
 * go to an adapter process speaking docs/protocol.md (a lock library in
 * any language; adapters/ has Node.js and Python ones). The worker still
 * times the hold, writes the event log and touches the protected resource,
 * so results compare with the built-in implementations. Tokens in the event
 * log are the worker's; the adapter's own token for each grant is kept in a
 * small map here and sent back on renew and release.
 *
 * Process model: the worker's first lock instance starts the adapter (a
 * child of the worker, in its process group, so pause and kill faults reach
 * it); a renewal thread's instance (lock_config.primary) shares it. An
 * adapter that exits during the run is restarted by the next acquire or
 * release (its grants are reported lost first). Counters and the adapter's
 * hello go to adapters/worker-NNN[.eE].json for result.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/options.h"
#include "model/yamltree.h"
#include "locks/adapter.h"
#include "locks/external.h"
#include "locks/external_clock.h"
#include "locks/lock.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define RESTART_BACKOFF_NS (1000LL * 1000 * 1000)
#define TOKEN_MAP 8
#define TOLD_MAX 5      /* kinds of protocol error told on stderr per run */
#define TOLD_KIND_LEN 100

/* ---- options ---- */

#define OFF(m) offsetof(struct external_options, m)

static const struct opt_def ext_tab[] = {
    {"command", OPT_CUSTOM, OFF(command), NULL, 0, 0, NULL, NULL,
     "the adapter's argv, a list run without a shell (PATH lookup for the first item), "
     "e.g. [node, adapters/node/ioredis-handrolled.js]; a relative path to a file next to the "
     "workload file is resolved there first, else it is relative to the directory lockstorm "
     "runs in"},
    {"adapter", OPT_CUSTOM, OFF(adapter), "{}", 0, 0, NULL, NULL,
     "mapping handed to the adapter untouched (hello.options): the library's own settings"},
    {"request_timeout", OPT_DURATION, OFF(request_timeout), "2s", 1e6, 60e9, NULL, NULL,
     "how long the worker waits for a reply; then the outcome is unknown and a later reply "
     "is read and dropped"},
    {"max_restarts", OPT_INT, OFF(max_restarts), "20", 0, 10000, NULL, NULL,
     "restarts of an adapter that exited during the run (per worker); past it every request "
     "fails"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* ynode -> JSON, scalars typed the way YAML reads them (plain true/false,
 * numbers, null words; quoted scalars stay strings). Caller frees. */
static struct json *ynode_json(const struct ynode *v)
{
    if (!v || ynode_is_null(v))
        return json_new_null();
    if (v->kind == YN_MAP) {
        struct json *o = json_new_obj();
        for (size_t i = 0; i < v->n; i++)
            json_obj_set(o, v->keys[i]->text, ynode_json(v->vals[i]));
        return o;
    }
    if (v->kind == YN_SEQ) {
        struct json *a = json_new_arr();
        for (size_t i = 0; i < v->n; i++)
            json_arr_push(a, ynode_json(v->vals[i]));
        return a;
    }
    if (v->plain) {
        const char *t = v->text;
        if (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "TRUE"))
            return json_new_bool(1);
        if (!strcmp(t, "false") || !strcmp(t, "False") || !strcmp(t, "FALSE"))
            return json_new_bool(0);
        struct json *num = NULL;
        char why[8];
        if ((t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) &&
            json_parse(t, strlen(t), &num, why, sizeof(why)) == 0 && num->type == JSON_NUM)
            return num;
        json_free(num);
    }
    return json_new_strn(v->text, v->len);
}

/* Contract: 1 when arg is a relative path naming a regular file in the
 * directory of the workload file (file as the loader names it), with its
 * absolute path in out (PATH_MAX bytes); else 0 and the argument stays as
 * written (relative to the directory lockstorm runs in, or a PATH lookup).
 * The workload's directory wins over the current one (docs/adapters.md).
 * The program (first) must contain a '/' to be looked for: a bare name is
 * a PATH lookup. */
static int resolve_near_workload(const char *file, const char *arg, int program, char *out)
{
    if (!file || !*file || arg[0] == '/' || (program && !strchr(arg, '/')))
        return 0;
    const char *slash = strrchr(file, '/');
    char cand[PATH_MAX];
    int n = slash ? snprintf(cand, sizeof(cand), "%.*s/%s", (int)(slash - file), file, arg)
                  : snprintf(cand, sizeof(cand), "./%s", arg);
    struct stat st;
    if (n < 0 || (size_t)n >= sizeof(cand) || stat(cand, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return realpath(cand, out) != NULL;
}

static int parse_command(struct external_options *o, const struct ynode *v,
                         const struct ynode *where, const char *path, struct ydiag *dg)
{
    if (!v || ynode_is_null(v)) {
        ydiag_at(dg, v ? v : where,
                 "%s: required: the adapter's argv as a list, e.g. [node, "
                 "adapters/node/ioredis-handrolled.js]", path);
        return -1;
    }
    if (v->kind != YN_SEQ) {
        ydiag_at(dg, v, "%s: expected a list of strings (an argv, run without a shell), got %s",
                 path, ynode_kind_text(v));
        return -1;
    }
    if (v->n == 0 || v->n > EXTERNAL_MAX_ARGS) {
        ydiag_at(dg, v, "%s: needs 1 to %d items, got %zu", path, EXTERNAL_MAX_ARGS, v->n);
        return -1;
    }
    size_t len = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *it = v->vals[i];
        if (it->kind != YN_SCALAR || (i == 0 && it->len == 0) || memchr(it->text, 0, it->len)) {
            ydiag_at(dg, it, "%s[%zu]: expected a %sstring, got %s", path, i,
                     i == 0 ? "non-empty " : "", it->kind == YN_SCALAR ? "an empty one"
                                                                      : ynode_kind_text(it));
            return -1;
        }
        char resolved[PATH_MAX];
        const char *text = it->text;
        size_t tlen = it->len;
        if (resolve_near_workload(dg->file, it->text, i == 0, resolved)) {
            text = resolved;
            tlen = strlen(resolved);
        }
        if (len + tlen + 1 > sizeof(o->command)) {
            ydiag_at(dg, it, "%s: longer than %zu bytes in all", path, sizeof(o->command));
            return -1;
        }
        memcpy(o->command + len, text, tlen + 1);
        len += tlen + 1;
    }
    o->argc = (int)v->n;
    return 0;
}

static int parse_adapter(struct external_options *o, const struct ynode *v, const char *path,
                         struct ydiag *dg)
{
    if (v && !ynode_is_null(v) && v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping, got %s", path, ynode_kind_text(v));
        return -1;
    }
    struct json *j = v && v->kind == YN_MAP ? ynode_json(v) : json_new_obj();
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, j, -1);
    json_free(j);
    int rc = 0;
    if (sb.len + 1 > sizeof(o->adapter)) {
        ydiag_at(dg, v, "%s: longer than %zu bytes as JSON", path, sizeof(o->adapter) - 1);
        rc = -1;
    } else {
        memcpy(o->adapter, sb_cstr(&sb), sb.len + 1);
    }
    sb_free(&sb);
    return rc;
}

static int hook_parse(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                      const struct ynode *where, const char *path, struct ydiag *dg)
{
    (void)ctx;
    struct external_options *o = base;
    if (strcmp(d->name, "command") == 0)
        return parse_command(o, v, where, path, dg);
    return parse_adapter(o, v, path, dg);
}

/* The command as a JSON array (caller frees). */
static struct json *command_json(const struct external_options *o)
{
    struct json *a = json_new_arr();
    const char *p = o->command;
    for (int i = 0; i < o->argc; i++) {
        json_arr_push(a, json_new_str(p));
        p += strlen(p) + 1;
    }
    return a;
}

void external_argv(const struct external_options *o, char **argv)
{
    const char *p = o->command;
    for (int i = 0; i < o->argc; i++) {
        argv[i] = (char *)p;
        p += strlen(p) + 1;
    }
    argv[o->argc] = NULL;
}

int external_paths(const struct lock_config *cfg, const char *who, char *stderr_path,
                   char *log_path, char *stats_path, size_t n, struct ls_err *err)
{
    if (!cfg->rundir)
        return 0;
    char dir[2100];
    snprintf(dir, sizeof(dir), "%s/adapters", cfg->rundir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return ls_err_errno(err, LS_EIO, errno, "%s: create %s", who, dir);
    char ep[16] = "";
    if (cfg->epoch)
        snprintf(ep, sizeof(ep), ".e%u", cfg->epoch);
    snprintf(stderr_path, n, "%s/worker-%03d.stderr", dir, cfg->worker);
    snprintf(log_path, n, "%s/worker-%03d.log", dir, cfg->worker);
    snprintf(stats_path, n, "%s/worker-%03d%s.json", dir, cfg->worker, ep);
    return 0;
}

struct json *external_stats_open(const struct adapter *ad, int worker, uint32_t epoch,
                                 unsigned caps, char *const *argv)
{
    struct json *o = json_new_obj();
    json_obj_set_int(o, "worker", worker);
    json_obj_set_int(o, "epoch", epoch);
    json_obj_set_str(o, "name", ad->name);
    json_obj_set_str(o, "version", ad->version);
    json_obj_set_int(o, "protocol", ad->protocol);
    char text[96];
    aproto_caps_text(caps, text, sizeof(text));
    struct json *ca = json_obj_set(o, "caps", json_new_arr());
    for (char *p = text, *c; *p && strcmp(text, "-") != 0; p = c ? c + 1 : p + strlen(p)) {
        c = strchr(p, ',');
        json_arr_push(ca, json_new_strn(p, c ? (size_t)(c - p) : strlen(p)));
    }
    struct json *cmd = json_obj_set(o, "command", json_new_arr());
    for (int i = 0; argv[i]; i++)
        json_arr_push(cmd, json_new_str(argv[i]));
    return o;
}

struct json *external_stats_counters(struct json *o, const struct adapter *ad,
                                     const struct adapter_stats *st, int started,
                                     int64_t restarts, int64_t restart_failures, int64_t exits)
{
    json_obj_set_bool(o, "started", started);
    json_obj_set_int(o, "starts", (int64_t)st->starts);
    json_obj_set_int(o, "restarts", restarts);
    json_obj_set_int(o, "restart_failures", restart_failures);
    json_obj_set_int(o, "exits", exits);
    json_obj_set_int(o, "requests", (int64_t)st->requests);
    json_obj_set_int(o, "timeouts", (int64_t)st->timeouts);
    json_obj_set_int(o, "late_replies", (int64_t)st->late_replies);
    json_obj_set_int(o, "protocol_errors", (int64_t)st->protocol_errors);
    struct json *sm = json_obj_set(o, "protocol_error_samples", json_new_arr());
    for (uint64_t i = 0; i < st->protocol_errors && i < ADAPTER_SAMPLES; i++)
        json_arr_push(sm, json_new_str(ad->samples[i]));
    json_obj_set_int(o, "lost_events", (int64_t)st->lost_events);
    json_obj_set_int(o, "log_events", (int64_t)st->log_events);
    json_obj_set_int(o, "renewed_events", (int64_t)st->renewed_events);
    return sm;
}

void external_stats_close(struct json *o, const char *stderr_path, const char *log_path,
                          const char *stats_path)
{
    /* relative to the run directory, which may be copied elsewhere */
    const char *rel = strstr(stderr_path, "adapters/");
    json_obj_set_str(o, "stderr", rel ? rel : stderr_path);
    rel = strstr(log_path, "adapters/");
    json_obj_set_str(o, "log", rel ? rel : log_path);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, o, -1);
    sb_putc(&sb, '\n');
    json_free(o);
    sb_write_file(&sb, stats_path); /* best effort: the run goes on without it */
    sb_free(&sb);
}

static struct json *hook_json(void *ctx, const struct opt_def *d, const void *base)
{
    (void)ctx;
    const struct external_options *o = base;
    if (strcmp(d->name, "command") == 0)
        return command_json(o);
    struct json *j = NULL;
    char why[64];
    if (json_parse(o->adapter, strlen(o->adapter), &j, why, sizeof(why)) < 0)
        return json_new_obj();
    return j;
}

static void hook_yaml(void *ctx, const struct opt_def *d, const void *base, int indent,
                      struct strbuf *sb)
{
    (void)indent;
    /* JSON flow text is YAML flow text: it loads back to the same values */
    struct json *j = hook_json(ctx, d, base);
    sb_putc(sb, ' ');
    json_write(sb, j, -1);
    sb_putc(sb, '\n');
    json_free(j);
}

static const char *hook_type(void *ctx, const struct opt_def *d)
{
    (void)ctx;
    return strcmp(d->name, "command") == 0 ? "list of strings (argv)" : "mapping";
}

/* Also the `record` lock's (locks/record.c): its options begin with a struct
 * external_options, whose `command` and mapping keys these hooks fill. */
const struct opt_hooks external_option_hooks = {NULL, hook_parse, NULL, hook_yaml, hook_json,
                                                hook_type};

static int ext_validate(const struct lock_config *cfg, char *why, size_t n)
{
    const struct external_options *o = cfg->options;
    if (!o || o->argc < 1) {
        snprintf(why, n, "command: required (the adapter's argv)");
        return -1;
    }
    return 0;
}

/* ---- state ---- */

struct grant_map {
    int used;
    int res;
    char htoken[EVLOG_TOKEN_LEN + 1];  /* the worker's token */
    char *atoken;                      /* the adapter's token (owned) */
    int64_t asked_ns;                  /* CLOCK_MONOTONIC before the acquire was sent */
};

/* One per worker, owned by the first lock instance; the renewal thread's
 * instance borrows it. */
struct ext_shared {
    struct adapter ad;
    pthread_mutex_t mu;                /* the grant map, news and counters below */
    const struct external_options *opt;
    const struct lock_config *cfg;     /* borrowed: the first instance's (keys: lock_key) */
    char *argv[EXTERNAL_MAX_ARGS + 1]; /* into opt->command */
    char stderr_path[2100], log_path[2100], stats_path[2100];
    int worker;
    uint32_t epoch;
    int64_t ttl_ns;
    int started;                       /* the first handshake passed */
    int64_t restarts, restart_failures, expired_grants;
    int64_t stamps_ignored;   /* renewed events whose host_mono_ms was refused */
    int64_t next_restart;              /* CLOCK_MONOTONIC: no restart attempt before */
    char last_error[512];              /* the last failed restart */
    struct grant_map map[TOKEN_MAP];
    int map_next;
    struct lock_news news[TOKEN_MAP];  /* lost news made here (adapter exits) */
    int nnews;
    struct adapter_stats written;      /* counters as last written to stats_path */
    /* protocol errors told on stderr (tell_proto_error): the kinds this
     * worker has already handled, and the run-wide record of those told */
    char told_path[2100];
    char told[TOLD_MAX][TOLD_KIND_LEN];
    int ntold;
    int told_done;                     /* the run's quota is used up */
    struct extclock *clock;            /* client clock faults: the shim's file, probed (owned);
                                        * NULL without them */
};

struct ext {
    struct ext_shared *sh;
    int primary;
};

/* The `res` an adapter gets: the resource's key (lock_key: lock.key_prefix
 * and its name; "lockstorm:r<N>" by default). */
static void res_name(const struct ext_shared *s, int res, char *buf, size_t n)
{
    lock_key(s->cfg, res, 0, buf, n);
}

/* Contract: write adapters/worker-NNN[.eE].json: the hello and every
 * counter (harness/adapter_stats.c sums them into result.json). */
static void write_stats(struct ext_shared *s)
{
    if (!s->stats_path[0])
        return;
    struct adapter_stats st;
    adapter_get_stats(&s->ad, &st);
    struct json *o = external_stats_open(&s->ad, s->worker, s->epoch,
                                         s->ad.caps & ~(unsigned)APROTO_CAP_RECORD, s->argv);
    external_stats_counters(o, &s->ad, &st, s->started, s->restarts, s->restart_failures,
                            (int64_t)st.exits);
    json_obj_set_int(o, "stalls", (int64_t)st.stalls);
    json_obj_set_int(o, "expired_grants", s->expired_grants);
    json_obj_set_int(o, "renewed_stamps_ignored", s->stamps_ignored);
    external_stats_close(o, s->stderr_path, s->log_path, s->stats_path);
    s->written = st;
}

/* Contract: rewrite the stats file when a counter worth seeing changed
 * since the last write (so a worker killed by a fault leaves them). */
static void maybe_write_stats(struct ext_shared *s)
{
    struct adapter_stats st;
    adapter_get_stats(&s->ad, &st);
    if (st.exits != s->written.exits || st.protocol_errors != s->written.protocol_errors ||
        st.timeouts != s->written.timeouts || st.lost_events != s->written.lost_events ||
        st.late_replies != s->written.late_replies || st.starts != s->written.starts ||
        st.stalls != s->written.stalls)
        write_stats(s);
}

static void map_put(struct ext_shared *s, const struct grant *g, const char *atoken,
                    int64_t asked_ns)
{
    pthread_mutex_lock(&s->mu);
    struct grant_map *m = &s->map[s->map_next];
    s->map_next = (s->map_next + 1) % TOKEN_MAP;
    free(m->atoken);
    m->used = 1;
    m->res = g->res;
    snprintf(m->htoken, sizeof(m->htoken), "%s", g->token);
    m->atoken = strdup(atoken);
    m->asked_ns = asked_ns;
    if (!m->atoken)
        m->used = 0;
    pthread_mutex_unlock(&s->mu);
}

/* The adapter's token of the worker's grant g (a copy the caller frees),
 * NULL when unknown; with drop, the entry goes. */
static char *map_get(struct ext_shared *s, const struct grant *g, int drop)
{
    char *t = NULL;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < TOKEN_MAP; i++) {
        struct grant_map *m = &s->map[i];
        if (m->used && m->res == g->res && strcmp(m->htoken, g->token) == 0) {
            t = strdup(m->atoken);
            if (drop) {
                free(m->atoken);
                memset(m, 0, sizeof(*m));
            }
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return t;
}

/* Contract: the adapter is gone: every grant it handed out is lost news
 * for the worker, and the map is emptied. Caller holds s->mu. */
static void grants_lost_locked(struct ext_shared *s)
{
    for (int i = 0; i < TOKEN_MAP; i++) {
        struct grant_map *m = &s->map[i];
        if (!m->used)
            continue;
        if (s->nnews < TOKEN_MAP) {
            struct lock_news *n = &s->news[s->nnews++];
            n->kind = LOCK_NEWS_LOST;
            n->res = m->res;
            memcpy(n->token, m->htoken, sizeof(n->token));
        }
        free(m->atoken);
        memset(m, 0, sizeof(*m));
    }
}

/* The kind of a protocol error: its text with every run of digits folded
 * to one '#' ("reply to unknown id 7" and "... id 8" are one kind), cut to
 * fit out. */
static void proto_kind(const char *what, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = what; *p && k + 1 < n; p++) {
        if (*p >= '0' && *p <= '9') {
            if (k == 0 || out[k - 1] != '#')
                out[k++] = '#';
        } else {
            out[k++] = *p == '\n' ? ' ' : *p;
        }
    }
    out[k] = '\0';
}

/* Contract: is kind already in the run-wide record (the told file, one
 * kind a line, a last line "+" once the quota is used up)? Appends it when
 * there is room. Returns 1 to tell it, 0 when told already, 2 when the
 * quota was just used up (tell that once), 3 when it was used up before.
 * The workers of a run share the file under flock; without one (no run
 * directory, or it cannot be opened) room (this worker has told fewer
 * than TOLD_MAX kinds) decides. */
static int told_record(struct ext_shared *s, const char *kind, int room)
{
    int fd = s->told_path[0] ? open(s->told_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                             : -1;
    if (fd < 0)
        return room ? 1 : 2;
    int rc = 1;
    flock(fd, LOCK_EX);
    char buf[TOLD_MAX * (TOLD_KIND_LEN + 1) + 8];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    int lines = 0;
    for (char *line = buf, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        lines++;
        if (strcmp(line, "+") == 0)
            rc = 3;
        else if (strcmp(line, kind) == 0 && rc != 3)
            rc = 0;
    }
    if (rc == 1 && lines >= TOLD_MAX)
        rc = 2;
    if (rc == 1 || rc == 2) {
        char out[TOLD_KIND_LEN + 2];
        int len = snprintf(out, sizeof(out), "%s\n", rc == 1 ? kind : "+");
        if (write(fd, out, (size_t)len) != len)
            rc = rc == 1 ? 1 : 3; /* tell it anyway; the record is best effort */
    }
    flock(fd, LOCK_UN);
    close(fd);
    return rc;
}

/* Contract (adapter_config.on_proto_error, under the adapter's mutex):
 * one line on the worker's stderr, which is lockstorm's, the first time a
 * kind of protocol error shows up in the run, for at most TOLD_MAX kinds
 * in all workers together, then one line saying the rest are only
 * counted: a chatty adapter cannot flood the terminal, and every error is
 * still counted (adapter.protocol_errors) and the first ones quoted in the
 * session log. */
static void tell_proto_error(void *ctx, const char *what, const char *quoted)
{
    struct ext_shared *s = ctx;
    char kind[TOLD_KIND_LEN];
    proto_kind(what, kind, sizeof(kind));
    if (s->told_done)
        return;
    for (int i = 0; i < s->ntold; i++)
        if (strcmp(s->told[i], kind) == 0)
            return;
    int room = s->ntold < TOLD_MAX; /* else this worker alone saw TOLD_MAX kinds */
    if (room)
        memcpy(s->told[s->ntold++], kind, sizeof(kind));
    int rc = told_record(s, kind, room);
    char line[600];
    int len = 0;
    if (rc == 1)
        len = snprintf(line, sizeof(line),
                       "lockstorm: warning: worker %d: adapter protocol error: %s%s%s%s "
                       "(all counted in result.json adapter.protocol_errors)\n",
                       s->worker, what, quoted[0] ? ": '" : "", quoted, quoted[0] ? "'" : "");
    else if (rc == 2)
        len = snprintf(line, sizeof(line),
                       "lockstorm: warning: worker %d: more kinds of adapter protocol error: "
                       "only counted from now on (adapters/worker-NNN.log quotes the first)\n",
                       s->worker);
    if (rc >= 2)
        s->told_done = 1;
    if (len > 0) /* one write: lines of several workers never interleave */
        (void)!write(STDERR_FILENO, line, (size_t)len < sizeof(line) ? (size_t)len
                                                                       : sizeof(line) - 1);
}

/* Contract: make sure an adapter runs before a request (the primary
 * instance only: a renewal thread never forks). Returns 0, or -1 when it
 * is down and could not (or may not yet) be restarted. */
static int ensure_running(struct ext *e)
{
    struct ext_shared *s = e->sh;
    if (adapter_alive(&s->ad))
        return 0;
    if (!e->primary)
        return -1;
    if (s->restarts >= s->opt->max_restarts || ls_now_ns() < s->next_restart)
        return -1;
    pthread_mutex_lock(&s->mu);
    grants_lost_locked(s); /* its grants died with it; the worker hears of them as news */
    pthread_mutex_unlock(&s->mu);
    s->restarts++;
    struct ls_err err = {0};
    if (adapter_restart(&s->ad, &err) < 0) {
        s->restart_failures++;
        s->next_restart = ls_now_ns() + RESTART_BACKOFF_NS;
        snprintf(s->last_error, sizeof(s->last_error), "%s", err.msg);
        write_stats(s);
        return -1;
    }
    write_stats(s);
    return 0;
}

/* Map an adapter_request result that is not a reply to an outcome. */
static int no_reply_outcome(int rc, int sent, int *err_kind)
{
    switch (rc) {
    case ADAPTER_TIMEOUT:
        *err_kind = EVE_TIMEOUT;
        return LOCK_UNKNOWN;
    case ADAPTER_PROTO:
        *err_kind = EVE_PROTO;
        return LOCK_UNKNOWN;
    default:
        *err_kind = EVE_CONN;
        return sent ? LOCK_UNKNOWN : LOCK_FAIL;
    }
}

/* ---- ops ---- */

static int ext_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    struct ext *e = calloc(1, sizeof(*e));
    if (!e)
        return ls_err_set(err, LS_ENOMEM, "external: out of memory");
    lk->ctx = e;
    if (cfg->primary) {
        struct ext *p = cfg->primary->ctx;
        if (!p || !p->sh)
            return ls_err_set(err, LS_EUSAGE, "external: no adapter to share");
        e->sh = p->sh;
        if (!(e->sh->ad.caps & APROTO_CAP_RENEW))
            return ls_err_set(err, LS_EENV,
                              "adapter %s %s does not offer renew (its caps lack 'renew'); use "
                              "lock.renew: none", e->sh->ad.name, e->sh->ad.version);
        return 0;
    }
    e->primary = 1;
    const struct external_options *o = cfg->options;
    char why[128];
    if (!o || ext_validate(cfg, why, sizeof(why)) < 0)
        return ls_err_set(err, LS_EUSAGE, "external: %s", o ? why : "no options");
    struct ext_shared *s = calloc(1, sizeof(*s));
    if (!s)
        return ls_err_set(err, LS_ENOMEM, "external: out of memory");
    e->sh = s;
    pthread_mutex_init(&s->mu, NULL);
    s->opt = o;
    s->cfg = cfg;
    s->worker = cfg->worker;
    s->epoch = cfg->epoch;
    s->ttl_ns = cfg->ttl_ns;
    external_argv(o, s->argv);
    int prc = external_paths(cfg, "external", s->stderr_path, s->log_path, s->stats_path,
                             sizeof(s->stats_path), err);
    if (prc < 0)
        return prc;
    if (cfg->rundir)
        snprintf(s->told_path, sizeof(s->told_path), "%s/adapters/protocol-errors.told",
                 cfg->rundir);
    struct adapter_config ac = {
        .argv = s->argv,
        .stderr_path = s->stderr_path[0] ? s->stderr_path : NULL,
        .log_path = s->log_path[0] ? s->log_path : NULL,
        .worker = cfg->worker,
        .nodes = cfg->nodes,
        .nnodes = cfg->nnodes,
        .options_json = o->adapter,
        .hello_timeout_ns = ADAPTER_HELLO_TIMEOUT_NS,
        .on_proto_error = tell_proto_error,
        .on_proto_error_ctx = s,
    };
    if (cfg->client_clock) { /* client clock faults reach the adapter through the shim */
        char probes[2100] = "";
        if (cfg->rundir)
            snprintf(probes, sizeof(probes), "%s/adapters/worker-%03d.clock.jsonl", cfg->rundir,
                     cfg->worker);
        int rc = extclock_open(&s->clock, cfg->client_clock, probes, err);
        if (rc < 0)
            return rc;
        ac.env_add = extclock_env(s->clock);
    }
    int rc = adapter_start(&s->ad, &ac, err);
    if (rc < 0) {
        write_stats(s);
        return rc;
    }
    s->started = 1;
    write_stats(s);
    extclock_poll(s->clock, &s->ad); /* the first probe: the clock as the adapter found it */
    return 0;
}

static void ext_destroy(struct lock *lk)
{
    struct ext *e = lk->ctx;
    if (!e)
        return;
    struct ext_shared *s = e->sh;
    if (e->primary && s) {
        adapter_close(&s->ad);
        if (s->started || s->stats_path[0])
            write_stats(s);
        for (int i = 0; i < TOKEN_MAP; i++)
            free(s->map[i].atoken);
        extclock_close(s->clock);
        pthread_mutex_destroy(&s->mu);
        free(s);
    }
    free(e);
    lk->ctx = NULL;
}

static int ext_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    struct ext *e = lk->ctx;
    struct ext_shared *s = e->sh;
    *err_kind = EVE_NONE;
    if (ensure_running(e) < 0) {
        *err_kind = EVE_CONN;
        return LOCK_FAIL;
    }
    extclock_poll(s->clock, &s->ad);
    char res[RES_NAME_MAX];
    res_name(s, g->res, res, sizeof(res));
    struct amsg m;
    int sent = 0;
    char why[300];
    int64_t asked = ls_now_ns();
    int rc = adapter_request(&s->ad, AOP_ACQUIRE, res, NULL, s->ttl_ns, s->opt->request_timeout,
                             &m, &sent, why, sizeof(why));
    int out;
    if (rc != ADAPTER_REPLY) {
        out = no_reply_outcome(rc, sent, err_kind);
    } else {
        out = aproto_outcome(AOP_ACQUIRE, &m, err_kind);
        if (out == LOCK_OK) {
            g->no_lease = !(s->ad.caps & APROTO_CAP_TTL);
            g->validity_ns = m.validity_ns;
            g->has_fence = m.has_fence;
            g->fence = m.fence;
            if (!g->no_lease && m.validity_ns <= 0) {
                pthread_mutex_lock(&s->mu);
                s->expired_grants++;
                pthread_mutex_unlock(&s->mu);
            }
            map_put(s, g, m.token, asked);
        }
        amsg_free(&m);
    }
    maybe_write_stats(s);
    return out;
}

static int ext_renew(struct lock *lk, struct grant *g, int *err_kind)
{
    struct ext *e = lk->ctx;
    struct ext_shared *s = e->sh;
    *err_kind = EVE_NONE;
    if (ensure_running(e) < 0) {
        *err_kind = EVE_CONN;
        return LOCK_FAIL;
    }
    extclock_poll(s->clock, &s->ad);
    char *tok = map_get(s, g, 0);
    if (!tok) { /* the adapter restarted since: the grant died with it */
        *err_kind = EVE_CONN;
        return LOCK_FAIL;
    }
    char res[RES_NAME_MAX];
    res_name(s, g->res, res, sizeof(res));
    struct amsg m;
    int sent = 0;
    char why[300];
    int rc = adapter_request(&s->ad, AOP_RENEW, res, tok, s->ttl_ns, s->opt->request_timeout, &m,
                             &sent, why, sizeof(why));
    free(tok);
    int out;
    if (rc != ADAPTER_REPLY) {
        out = no_reply_outcome(rc, sent, err_kind);
    } else {
        out = aproto_outcome(AOP_RENEW, &m, err_kind);
        if (out == LOCK_OK)
            g->validity_ns = m.validity_ns;
        amsg_free(&m);
    }
    maybe_write_stats(s);
    return out;
}

static int ext_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    struct ext *e = lk->ctx;
    struct ext_shared *s = e->sh;
    *err_kind = EVE_NONE;
    extclock_poll(s->clock, &s->ad);
    char *tok = map_get(s, g, 1);
    if (!tok || !adapter_alive(&s->ad)) {
        /* the adapter that granted it is gone (and the grant with it):
         * nothing to send; a new adapter knows nothing of it */
        free(tok);
        *err_kind = EVE_CONN;
        return LOCK_FAIL; /* the next acquire restarts the adapter */
    }
    char res[RES_NAME_MAX];
    res_name(s, g->res, res, sizeof(res));
    struct amsg m;
    int sent = 0;
    char why[300];
    int rc = adapter_request(&s->ad, AOP_RELEASE, res, tok, -1, s->opt->request_timeout, &m,
                             &sent, why, sizeof(why));
    free(tok);
    int out;
    if (rc != ADAPTER_REPLY) {
        out = no_reply_outcome(rc, sent, err_kind);
    } else {
        out = aproto_outcome(AOP_RELEASE, &m, err_kind);
        amsg_free(&m);
    }
    maybe_write_stats(s);
    return out;
}

/* Contract: event ev (`lost` or `renewed`) as news of the worker's grant it
 * names: kind, resource and the harness's token; a renewal adds its
 * validity and the instant it counts from: when the adapter wrote it
 * (host_mono_ms) if that lies between the grant's acquire being sent and
 * the line being read, else (absent, or not this host's CLOCK_MONOTONIC:
 * counted) when it was read. Returns 1, or 0 when the grant is not (or no
 * longer) in the map (one already released: ignored). */
static int event_news(struct ext_shared *s, const struct amsg *ev, int kind,
                      struct lock_news *news)
{
    int found = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < TOKEN_MAP && !found; i++) {
        struct grant_map *m = &s->map[i];
        char res[RES_NAME_MAX];
        res_name(s, m->res, res, sizeof(res));
        if (m->used && strcmp(m->atoken, ev->token) == 0 && strcmp(res, ev->res) == 0) {
            memset(news, 0, sizeof(*news));
            news->kind = kind;
            news->res = m->res;
            memcpy(news->token, m->htoken, sizeof(news->token));
            if (kind == LOCK_NEWS_RENEWED) {
                news->validity_ns = ev->validity_ns;
                news->at_ns = ev->read_ns;
                if (ev->written_ns >= m->asked_ns && ev->written_ns <= ev->read_ns)
                    news->at_ns = ev->written_ns;
                else if (ev->written_ns)
                    s->stamps_ignored++;
            }
            found = 1;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* The stall extension: the adapter blocks its event loop for ns. The
 * request waits the stall plus request_timeout, so a stall longer than the
 * request timeout is not a timeout (docs/protocol.md). */
static int ext_stall(struct lock *lk, int64_t ns, int64_t *stalled_ns, char *why, size_t n)
{
    struct ext *e = lk->ctx;
    struct ext_shared *s = e->sh;
    *stalled_ns = 0;
    if (!adapter_alive(&s->ad)) {
        snprintf(why, n, "the adapter is not running");
        return LOCK_STALL_FAILED;
    }
    if (!(s->ad.caps & APROTO_CAP_STALL)) {
        snprintf(why, n, "adapter %s %s lacks the stall extension (its caps)", s->ad.name,
                 s->ad.version);
        return LOCK_STALL_UNSUPPORTED;
    }
    int64_t ms = (ns + LS_NS_PER_MS - 1) / LS_NS_PER_MS;
    struct amsg m;
    int sent = 0;
    char w[300];
    int rc = adapter_stall(&s->ad, ms, ns + s->opt->request_timeout, &m, &sent, w, sizeof(w));
    int out = LOCK_STALL_FAILED;
    if (rc != ADAPTER_REPLY) {
        snprintf(why, n, "%s", w);
    } else if (!m.ok) {
        snprintf(why, n, "the adapter answered: %s", m.error ? m.error : "ok:false");
    } else {
        *stalled_ns = m.stalled_ns;
        out = LOCK_STALLED;
    }
    if (rc == ADAPTER_REPLY)
        amsg_free(&m);
    maybe_write_stats(s);
    return out;
}

static int ext_wait_news(struct lock *lk, int64_t until_ns, struct lock_news *news)
{
    struct ext *e = lk->ctx;
    struct ext_shared *s = e->sh;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        if (s->nnews > 0) {
            *news = s->news[0];
            memmove(s->news, s->news + 1, (size_t)(s->nnews - 1) * sizeof(s->news[0]));
            s->nnews--;
            pthread_mutex_unlock(&s->mu);
            return 1;
        }
        pthread_mutex_unlock(&s->mu);
        struct amsg ev;
        /* under client clock faults the wait is cut in slices, the clock
         * file looked at between them (a fault starting during a hold) */
        int64_t slice = until_ns;
        if (s->clock && slice > ls_now_ns() + EXTCLOCK_POLL_NS)
            slice = ls_now_ns() + EXTCLOCK_POLL_NS;
        int r = adapter_wait_event(&s->ad, slice, &ev);
        if (r == 0 && slice < until_ns && ls_now_ns() >= slice) {
            extclock_poll(s->clock, &s->ad);
            continue;
        }
        if (r == 0)
            return 0;
        if (r == 2) { /* the adapter exited: its grants are lost */
            pthread_mutex_lock(&s->mu);
            grants_lost_locked(s);
            pthread_mutex_unlock(&s->mu);
            maybe_write_stats(s);
            continue;
        }
        /* r == 3: a `renewed` event, else a `lost` one */
        int found = event_news(s, &ev, r == 3 ? LOCK_NEWS_RENEWED : LOCK_NEWS_LOST, news);
        amsg_free(&ev);
        if (r != 3)
            maybe_write_stats(s);
        if (found)
            return 1;
    }
}

const struct lock_ops lock_external = {
    .version = LOCK_OPS_VERSION,
    .name = "external",
    .model = "an adapter process per worker speaking docs/protocol.md: a lock library in "
             "any language (adapters/: Node.js ioredis, redlock, redis-semaphore, "
             "redlock-universal, redis-lock, node-redis-warlock; redis-py)",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEW | LOCK_CAP_FENCING,
    .options = ext_tab,
    .options_size = sizeof(struct external_options),
    .init = ext_init,
    .destroy = ext_destroy,
    .acquire = ext_acquire,
    .renew = ext_renew,
    .release = ext_release,
    .validate = ext_validate,
    .option_hooks = &external_option_hooks,
    .wait_news = ext_wait_news,
    .stall = ext_stall,
};
