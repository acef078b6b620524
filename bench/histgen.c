/*
 * histgen.c: synthetic histories with planted violations (see histgen.h).
 * Binary logs go through the real writer (model/evlog.c), so the checker
 * reads exactly what a run would leave; the JSONL form is the documented
 * `lockstorm check --history` format (docs/checkers.md "JSONL histories").
 */
#include "bench/histgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/evlog.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define WPR 4                         /* workers per resource */
#define EV_PER_SLOT 12
#define P (2 * LS_NS_PER_MS)          /* slot period */
#define US LS_NS_PER_US
#define TTL (1500 * US)               /* lease of a normal grant: ends before the next grant */
#define MAX_EXPECTED 50

struct plant {
    int64_t t;                        /* overlap start = the next holder's enter */
    int res;
    int broken;
};

struct gen {
    const struct histgen_opts *o;
    int nw;
    struct evlog_writer **w;          /* per worker, or NULL without a run dir */
    uint32_t *epoch;                  /* per worker: its current epoch */
    FILE *jl;
    struct strbuf line;
    int64_t events;
    int failed;
};

static void put_token(char *tok, int worker, int64_t k)
{
    /* "wWWW.KKKKKKKKKKK" like the worker's tokens, 16 bytes, no NUL */
    static const char hex[] = "0123456789abcdef";
    tok[0] = 'w';
    tok[1] = hex[(worker >> 8) & 15];
    tok[2] = hex[(worker >> 4) & 15];
    tok[3] = hex[worker & 15];
    tok[4] = '.';
    for (int i = 0; i < 11; i++)
        tok[15 - i] = hex[(k >> (4 * i)) & 15];
}

static void jl_event(struct gen *g, int worker, const struct ev_rec *r)
{
    struct strbuf *sb = &g->line;
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\",\"res\":\"r%u\"", (long long)r->t, worker,
              ev_type_name(r->type), (unsigned)r->res);
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        sb_printf(sb, ",\"attempt\":%u", r->aux);
        break;
    case EV_ACQUIRE_OK:
        sb_puts(sb, ",\"token\":");
        sb_json_str(sb, r->token, EVLOG_TOKEN_LEN);
        sb_printf(sb, ",\"fence\":%llu,\"valid_until\":%lld", (unsigned long long)r->fence,
                  (long long)r->valid_until);
        break;
    case EV_STORE_READ:
    case EV_STORE_WRITE:
        sb_printf(sb, ",\"fence\":%llu,\"fenced\":%s,\"counter\":%lld,\"accepted\":true",
                  (unsigned long long)r->fence, (r->flags & EVF_FENCED) ? "true" : "false",
                  (long long)r->value);
        break;
    default:
        break;
    }
    sb_puts(sb, "}\n");
    if (sb->len > (1 << 20)) {
        if (fwrite(sb->buf, 1, sb->len, g->jl) != sb->len)
            g->failed = 1;
        sb_reset(sb);
    }
}

static void emit(struct gen *g, int worker, struct ev_rec *r)
{
    g->events++;
    if (g->w && !g->failed && evlog_append(g->w[worker], r) < 0)
        g->failed = 1;
    if (g->jl)
        jl_event(g, worker, r);
}

/* One event of worker w on resource res at t (record fields as given). */
static void ev(struct gen *g, int w, int type, int res, int64_t t, const char *tok,
               uint64_t fence, int64_t valid_until, int64_t value, uint8_t flags, uint32_t aux)
{
    struct ev_rec r;
    memset(&r, 0, sizeof(r));
    r.t = t;
    r.type = (uint8_t)type;
    r.res = (uint16_t)res;
    r.flags = flags;
    r.fence = fence;
    r.valid_until = valid_until;
    r.value = value;
    r.aux = aux;
    if (tok)
        memcpy(r.token, tok, EVLOG_TOKEN_LEN);
    emit(g, w, &r);
}

/* Contract: worker w dies at t (its crash record) and is restarted: its
 * next records go to the log of its next epoch. */
static void restart(struct gen *g, int w, int res, int64_t t)
{
    ev(g, w, EV_CRASH, res, t, NULL, 0, 0, 0, 0, 0);
    uint32_t e = ++g->epoch[w];
    if (!g->w || g->failed)
        return;
    char path[1024];
    struct ls_err err = {0};
    evlog_path(path, sizeof(path), g->o->rundir, w, e);
    if (evlog_close(g->w[w], &err) < 0 ||
        evlog_open(&g->w[w], path, (uint32_t)w, e, 0, 0, &err) < 0) {
        fprintf(stderr, "histgen: %s\n", err.msg);
        g->w[w] = NULL;
        g->failed = 1;
    }
}

static int write_text(const char *dir, const char *name, struct strbuf *sb)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = sb_write_file(sb, path);
    if (rc < 0)
        fprintf(stderr, "histgen: write %s: %s\n", path, strerror(-rc));
    return rc < 0 ? -1 : 0;
}

static int cmp_plant(const void *a, const void *b)
{
    const struct plant *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->res > y->res) - (x->res < y->res);
}

/* Contract: run.json, workload.yaml, storage.jsonl, faults.jsonl of a run
 * that ended at end_ns; slots[r] grants and lost[r] planted lost updates of
 * resource r; epoch[w] worker w's last epoch (run.json lists its logs). */
static int write_meta(const struct histgen_opts *o, int nw, int64_t end_ns, const int64_t *slots,
                      const int64_t *lost, const uint32_t *epoch)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = 0;
    sb_printf(&sb, "{\"format\":\"lockstorm-run\",\"version\":1,\"tool_version\":\"bench\","
              "\"state\":\"finished\",\"start_real_ns\":0,\"start_mono_ns\":0,"
              "\"started_at\":\"1970-01-01T00:00:00Z\",\"ended_at\":\"1970-01-01T00:00:00Z\","
              "\"end_ns\":%lld,\"duration_ns\":%lld,\"interrupted\":false,\"signal\":null,"
              "\"workers\":[", (long long)end_ns, (long long)end_ns);
    for (int w = 0; w < nw; w++)
        sb_printf(&sb, "%s{\"worker\":%d,\"pid\":0,\"epoch\":%u,\"exit\":\"exited 0\"}",
                  w ? "," : "", w, epoch[w]);
    sb_puts(&sb, "],\"nodes\":[],\"proxy\":null,\"storage\":null,\"leftover_keys\":[]}\n");
    rc |= write_text(o->rundir, "run.json", &sb);
    sb_reset(&sb);
    int64_t secs = end_ns / LS_NS_PER_S + 1;
    sb_printf(&sb, "name: synthetic\nseed: 1\nduration: %llds\n"
              "lock: {impl: redis-single, ttl: 2ms, fencing: true}\n"
              "workers: {count: %d, resources: %d}\ncheck: {near_miss: 0, stories: 3}\n",
              (long long)secs, nw, o->resources);
    rc |= write_text(o->rundir, "workload.yaml", &sb);
    sb_reset(&sb);
    for (int r = 0; r < o->resources; r++)
        sb_printf(&sb, "{\"res\":\"r%d\",\"plain\":%lld,\"fenced\":%lld,\"fence_hwm\":%lld}\n", r,
                  (long long)(slots[r] - lost[r]), (long long)slots[r], (long long)slots[r]);
    rc |= write_text(o->rundir, "storage.jsonl", &sb);
    sb_reset(&sb);
    rc |= write_text(o->rundir, "faults.jsonl", &sb);
    sb_free(&sb);
    return rc;
}

int histgen(const struct histgen_opts *o, struct histgen_result *out)
{
    memset(out, 0, sizeof(*out));
    int R = o->resources > 0 ? o->resources : 16;
    int nw = WPR * R;
    int64_t per_res = o->events / EV_PER_SLOT / R;
    if (per_res < 8)
        per_res = 8;
    int64_t every = o->violate_every > 4 ? o->violate_every : 1000;
    struct gen g;
    memset(&g, 0, sizeof(g));
    g.o = o;
    g.nw = nw;
    g.epoch = xcalloc((size_t)nw, sizeof(*g.epoch));
    /* a worker's own slots per epoch (it holds every WPR-th slot) */
    int64_t per_epoch = o->epochs > 1 ? (per_res / WPR + o->epochs - 1) / o->epochs : 0;
    int rc = -1;
    int64_t *slots = xcalloc((size_t)R, sizeof(*slots));
    int64_t *lost = xcalloc((size_t)R, sizeof(*lost));
    struct plant *pl = NULL;
    size_t npl = 0, plcap = 0;

    if (o->rundir) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/events", o->rundir);
        if ((mkdir(o->rundir, 0755) < 0 && errno != EEXIST) ||
            (mkdir(path, 0755) < 0 && errno != EEXIST)) {
            fprintf(stderr, "histgen: mkdir %s: %s\n", path, strerror(errno));
            goto out;
        }
        g.w = xcalloc((size_t)nw, sizeof(*g.w));
        for (int w = 0; w < nw; w++) {
            struct ls_err err = {0};
            evlog_path(path, sizeof(path), o->rundir, w, 0);
            if (evlog_open(&g.w[w], path, (uint32_t)w, 0, 0, 0, &err) < 0) {
                fprintf(stderr, "histgen: %s\n", err.msg);
                goto out;
            }
        }
    }
    if (o->jsonl) {
        g.jl = fopen(o->jsonl, "we");
        if (!g.jl) {
            fprintf(stderr, "histgen: create %s: %s\n", o->jsonl, strerror(errno));
            goto out;
        }
    }

    int64_t end = 0;
    /* resource by resource: each worker serves one resource, so its own
     * events come out in time order */
    for (int r = 0; r < R; r++) {
        int64_t phase = (int64_t)r * (P / R);
        for (int64_t k = 0; k < per_res; k++) {
            int64_t s = phase + k * P;
            int w = r + R * (int)(k % WPR);
            int nextw = r + R * (int)((k + 1) % WPR);
            if (per_epoch && k >= WPR && (k / WPR) % per_epoch == 0)
                restart(&g, w, r, s - 1); /* after all its earlier records */
            char tok[EVLOG_TOKEN_LEN];
            put_token(tok, w, k);
            uint64_t fence = (uint64_t)k + 1;
            /* plant at k = every-2, 2*every-2, ... but never in the last slot */
            int planted = (k + 2) % every == 0 && k + 1 < per_res;
            int broken = planted && ((k + 2) / every) % 2 == 0;
            int64_t valid = s + (broken ? 2 * P : TTL);
            int64_t exit_t = planted ? s + P + 1000 * US : s + 1200 * US;
            ev(&g, w, EV_ACQUIRE_INVOKE, r, s, tok, 0, 0, 0, 0, 1);
            ev(&g, w, EV_ACQUIRE_OK, r, s + 50 * US, tok, fence, valid, 0, EVF_FENCE, 0);
            ev(&g, w, EV_ENTER, r, s + 60 * US, tok, fence, 0, 0, EVF_FENCE, 0);
            ev(&g, w, EV_STORE_READ, r, s + 70 * US, tok, fence, 0, k, EVF_FENCE | EVF_ACCEPTED, 0);
            ev(&g, w, EV_STORE_READ, r, s + 80 * US, tok, fence, 0, k,
               EVF_FENCE | EVF_ACCEPTED | EVF_FENCED, 0);
            ev(&g, w, EV_STORE_WRITE, r, exit_t - 200 * US, tok, fence, 0, k + 1,
               EVF_FENCE | EVF_ACCEPTED, 0);
            ev(&g, w, EV_STORE_WRITE, r, exit_t - 190 * US, tok, fence, 0, k + 1,
               EVF_FENCE | EVF_ACCEPTED | EVF_FENCED, 0);
            ev(&g, w, EV_EXIT, r, exit_t, tok, fence, 0, 0, EVF_FENCE, 0);
            ev(&g, w, EV_RELEASE_INVOKE, r, exit_t + 10 * US, tok, fence, 0, 0, EVF_FENCE, 0);
            ev(&g, w, EV_RELEASE_OK, r, exit_t + 60 * US, tok, fence, 0, 0, EVF_FENCE, 0);
            /* the next holder finds the lock busy once */
            char ntok[EVLOG_TOKEN_LEN];
            put_token(ntok, nextw, k + 1);
            ev(&g, nextw, EV_ACQUIRE_INVOKE, r, s + 1000 * US, ntok, 0, 0, 0, 0, 1);
            ev(&g, nextw, EV_ACQUIRE_BUSY, r, s + 1040 * US, ntok, 0, 0, 0, 0, 0);
            if (exit_t + 60 * US > end)
                end = exit_t + 60 * US;
            slots[r]++;
            if (planted) {
                lost[r]++;
                if (broken)
                    out->broken++;
                else
                    out->stale++;
                if (npl == plcap) {
                    plcap = plcap ? plcap * 2 : 256;
                    pl = xrealloc(pl, plcap * sizeof(*pl));
                }
                pl[npl++] = (struct plant){s + P + 60 * US, r, broken};
            }
        }
    }
    if (g.failed) {
        fprintf(stderr, "histgen: writing the history failed (disk full?)\n");
        goto out;
    }
    if (g.jl && g.line.len && fwrite(g.line.buf, 1, g.line.len, g.jl) != g.line.len) {
        fprintf(stderr, "histgen: write %s failed\n", o->jsonl);
        goto out;
    }
    if (o->rundir && write_meta(o, nw, end, slots, lost, g.epoch) < 0)
        goto out;
    qsort(pl, npl, sizeof(*pl), cmp_plant);
    out->expected = json_new_arr();
    for (size_t i = 0; i < npl && i < MAX_EXPECTED; i++) {
        struct json *e = json_arr_push(out->expected, json_new_obj());
        char name[16];
        snprintf(name, sizeof(name), "r%d", pl[i].res);
        json_obj_set_str(e, "resource", name);
        json_obj_set_str(e, "class", pl[i].broken ? "lock-broken" : "stale-holder");
        json_obj_set_int(e, "overlap_start_ns", pl[i].t);
    }
    out->slots = 0;
    for (int r = 0; r < R; r++)
        out->slots += slots[r];
    out->plain_lost = out->stale + out->broken;
    out->events = g.events;
    out->logs = 0;
    for (int w = 0; w < nw; w++)
        out->logs += (int64_t)g.epoch[w] + 1;
    rc = 0;
out:
    for (int w = 0; g.w && w < nw; w++) {
        struct ls_err err = {0};
        if (g.w[w] && evlog_close(g.w[w], &err) < 0 && rc == 0) {
            fprintf(stderr, "histgen: %s\n", err.msg);
            rc = -1;
        }
    }
    free(g.w);
    free(g.epoch);
    if (g.jl && fclose(g.jl) != 0 && rc == 0) {
        fprintf(stderr, "histgen: close %s failed\n", o->jsonl);
        rc = -1;
    }
    sb_free(&g.line);
    free(pl);
    free(slots);
    free(lost);
    return rc;
}
