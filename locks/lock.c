/*
 * lock.c: the registry of lock implementations (a static const array,
 * locktorture style) and the open/close wrappers around their ops. Not
 * here: any implementation; each lives in its own file under locks/.
 */
#include "locks/lock.h"

#include <string.h>

#include "util/timeutil.h"

extern const struct lock_ops lock_redis_single;
extern const struct lock_ops lock_redlock;
extern const struct lock_ops lock_naive_del;
extern const struct lock_ops lock_naive_setnx_expire;
extern const struct lock_ops lock_naive_get_set;
extern const struct lock_ops lock_naive_no_ttl;
extern const struct lock_ops lock_busted;
extern const struct lock_ops lock_external;
extern const struct lock_ops lock_record;
extern const struct lock_ops lock_pg_advisory;

/* Correct implementations first, then the negative controls. */
static const struct lock_ops *const registry[] = {
    &lock_redis_single,
    &lock_redlock,
    &lock_external,
    &lock_record,
    &lock_pg_advisory,
    &lock_naive_del,
    &lock_naive_setnx_expire,
    &lock_naive_get_set,
    &lock_naive_no_ttl,
    &lock_busted,
    NULL,
};

const struct lock_ops *lock_find(const char *name)
{
    if (!name)
        return NULL;
    for (const struct lock_ops *const *p = registry; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

const struct lock_ops *const *lock_all(void)
{
    return registry;
}

/* Append s to buf (size n, length *len), truncating; keeps it terminated. */
static void put(char *buf, size_t n, size_t *len, const char *s)
{
    size_t l = strlen(s);
    if (*len + 1 >= n)
        return;
    if (l > n - 1 - *len)
        l = n - 1 - *len;
    memcpy(buf + *len, s, l);
    *len += l;
    buf[*len] = '\0';
}

void lock_names(char *buf, size_t n)
{
    size_t len = 0;
    if (!buf || n == 0)
        return;
    buf[0] = '\0';
    for (const struct lock_ops *const *p = registry; *p; p++) {
        if (p != registry)
            put(buf, n, &len, ", ");
        put(buf, n, &len, (*p)->name);
    }
}

/* "ttl,renew,fencing" (or "-") for caps, truncated to n. */
static void caps_text(unsigned caps, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {LOCK_CAP_TTL, "ttl"},
        {LOCK_CAP_RENEW, "renew"},
        {LOCK_CAP_FENCING, "fencing"},
        {LOCK_CAP_QUORUM, "quorum"},
        {LOCK_CAP_REPLICATED, "replicated"},
        {LOCK_CAP_NEGATIVE, "negative control"},
    };
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(caps & names[i].bit))
            continue;
        if (len)
            put(buf, n, &len, ",");
        put(buf, n, &len, names[i].name);
    }
    if (!len)
        put(buf, n, &len, "-");
}

/* One indented option line: name, type, default, range, help. */
static void print_option(FILE *out, const struct opt_def *d)
{
    char range[96] = "";
    if (d->type == OPT_DURATION && (d->min != 0 || d->max != 0)) {
        char lo[32], hi[32];
        ls_format_duration((int64_t)d->min, lo, sizeof(lo));
        ls_format_duration((int64_t)d->max, hi, sizeof(hi));
        snprintf(range, sizeof(range), " (%s..%s)", lo, hi);
    } else if (d->type == OPT_INT && (d->min != 0 || d->max != 0)) {
        snprintf(range, sizeof(range), " (%.0f..%.0f)", d->min, d->max);
    } else if (d->type == OPT_DOUBLE && (d->min != 0 || d->max != 0)) {
        snprintf(range, sizeof(range), " (%g..%g)", d->min, d->max);
    } else if (d->type == OPT_ENUM && d->choices) {
        size_t len = 0;
        put(range, sizeof(range), &len, " (");
        for (const char *const *c = d->choices; *c; c++) {
            if (c != d->choices)
                put(range, sizeof(range), &len, "|");
            put(range, sizeof(range), &len, *c);
        }
        put(range, sizeof(range), &len, ")");
    }
    fprintf(out, "    %-12s %-10s default %s%s: %s\n", d->name, opt_type_name(d->type),
            d->def ? d->def : "(required)", range, d->help ? d->help : "");
}

void lock_print_list(FILE *out)
{
    for (const struct lock_ops *const *p = registry; *p; p++) {
        const struct lock_ops *o = *p;
        char caps[96];
        caps_text(o->caps, caps, sizeof(caps));
        fprintf(out, "%-20s %-29s %s\n", o->name, caps, o->model);
        for (const struct opt_def *d = o->options; d && d->name; d++)
            print_option(out, d);
    }
}

int lock_open(struct lock *lk, const struct lock_ops *ops, const struct lock_config *cfg,
              struct ls_err *err)
{
    lk->ops = ops;
    lk->cfg = cfg;
    lk->ctx = NULL;
    if (!ops)
        return ls_err_set(err, LS_EUSAGE, "lock: no implementation given");
    if (ops->version != LOCK_OPS_VERSION)
        return ls_err_set(err, LS_EUSAGE, "lock %s: ops version %d, expected %d", ops->name,
                          ops->version, LOCK_OPS_VERSION);
    if (!cfg)
        return ls_err_set(err, LS_EUSAGE, "lock %s: no configuration", ops->name);
    return ops->init(lk, cfg, err);
}

void lock_close(struct lock *lk)
{
    if (!lk || !lk->ops)
        return;
    if (lk->ops->destroy && lk->ops->version == LOCK_OPS_VERSION)
        lk->ops->destroy(lk);
    lk->ctx = NULL;
    lk->ops = NULL;
}

/* Append s (len bytes) at buf + *at, within n - 1 bytes. */
static void key_put(char *buf, size_t n, size_t *at, const char *s, size_t len)
{
    if (*at + len > n - 1)
        len = n - 1 - *at;
    memcpy(buf + *at, s, len);
    *at += len;
}

size_t lock_key(const struct lock_config *cfg, int res, int fence, char *buf, size_t n)
{
    const char *prefix = cfg && cfg->key_prefix ? cfg->key_prefix : LOCK_KEY_PREFIX;
    size_t at = 0; /* no printf: this runs for every command */
    if (n == 0)
        return 0;
    key_put(buf, n, &at, prefix, strlen(prefix));
    if (fence)
        key_put(buf, n, &at, "fence:", 6);
    if (cfg && cfg->res_names && res >= 0 && res < cfg->nres) {
        key_put(buf, n, &at, cfg->res_names[res], strlen(cfg->res_names[res]));
    } else {
        char d[24];
        size_t k = sizeof(d);
        unsigned v = (unsigned)(res < 0 ? 0 : res);
        do
            d[--k] = (char)('0' + v % 10);
        while ((v /= 10) > 0 && k > 1);
        d[--k] = 'r';
        key_put(buf, n, &at, d + k, sizeof(d) - k);
    }
    buf[at] = '\0';
    return at;
}
