/*
 * sweep.c: the sweep file (docs/sweep.md "The sweep file"): its keys are
 * read by one options table, `set:` and `axes:` turn into --set texts, the
 * axes expand into cells (first axis slowest, repeats fastest) and every
 * cell's workload is loaded once through workload_load with its overrides,
 * so a bad value is reported before anything runs. Running the cells is
 * sweep_run.c; the report is harness/sweep_model.c and reports/sweep.c.
 */
#include "harness/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/options.h"
#include "harness/workload.h"
#include "model/yamltree.h"
#include "reports/reports.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define SWEEP_MAX_CELLS 2000
#define SWEEP_MAX_AXES 8
#define SWEEP_MAX_SETS 64

static const struct opt_def sweep_tab[] = {
    {"sweep", OPT_STRING, offsetof(struct sweep, name), NULL, 0, 0, NULL, NULL,
     "the sweep's name: marks the file as a sweep and names its directory (required)"},
    {"description", OPT_STRING, offsetof(struct sweep, description), "", 0, 0, NULL, NULL,
     "one line on what the sweep asks"},
    {"workload", OPT_STRING, offsetof(struct sweep, workload), NULL, 0, 0, NULL, NULL,
     "the base workload: a path relative to the sweep file, a path, or a bundled name "
     "(required)"},
    {"seed", OPT_U64, offsetof(struct sweep, seed), NULL, 0, 0, NULL, NULL,
     "seed of the first repeat; repeat r runs with seed + r (default: the base workload's)"},
    {"repeats", OPT_INT, offsetof(struct sweep, repeats), "1", 1, 100, NULL, NULL,
     "runs per cell, each with its own seed"},
    {"parallel", OPT_INT, offsetof(struct sweep, parallel), "0", 0, 256, NULL, NULL,
     "cells run at once; 0 = max(1, cores / 2); never more than the cores"},
    {"formats", OPT_STRING, offsetof(struct sweep, formats), "json,text,junit", 0, 0, NULL, NULL,
     "report files of each cell (run --format); json is always added"},
    {"set", OPT_CUSTOM, 0, "{}", 0, 0, NULL, NULL,
     "overrides for every cell: workload key path -> value, as --set"},
    {"axes", OPT_CUSTOM, 0, NULL, 0, 0, NULL, NULL,
     "workload key path -> list of values; every combination is a cell (required)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* ---- values as --set text -------------------------------------------------- */

/* Can s stand unquoted in a YAML flow collection and as a --set value?
 * (Conservative: anything with a YAML indicator is quoted instead.) */
static int plain_ok(const char *s)
{
    if (!*s || strchr("{[\"'!&*|>%@`#-?: ", s[0]) || s[strlen(s) - 1] == ' ')
        return 0;
    return strpbrk(s, ",:{}[]#\"'\n\t") == NULL;
}

static int null_word(const char *s)
{
    return !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* Contract: append node n as one line of YAML flow text (what --set
 * parses back into the same node): plain scalars where safe, JSON-quoted
 * otherwise, {k: v, ...} and [a, ...] for collections. */
static void flow_text(const struct ynode *n, struct strbuf *sb)
{
    if (n->kind == YN_SCALAR) {
        if (ynode_is_null(n))
            sb_putc(sb, '~');
        else if (plain_ok(n->text) && (n->plain || !null_word(n->text)))
            sb_puts(sb, n->text);
        else /* a double-quoted YAML scalar is a JSON string */
            sb_json_str(sb, n->text, n->len);
        return;
    }
    sb_putc(sb, n->kind == YN_MAP ? '{' : '[');
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            sb_puts(sb, ", ");
        if (n->kind == YN_MAP) {
            flow_text(n->keys[i], sb);
            sb_puts(sb, ": ");
        }
        flow_text(n->vals[i], sb);
    }
    sb_putc(sb, n->kind == YN_MAP ? '}' : ']');
}

/* A workload key path as the axis / set key: non-empty, no '=' or spaces. */
static int key_ok(const char *k)
{
    return *k && !strpbrk(k, "= \t\n");
}

/* ---- custom keys: set, axes -------------------------------------------------- */

struct loader {
    struct sweep *s;
};

static int parse_set(struct sweep *s, const struct ynode *v, const char *path, struct ydiag *dg)
{
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping of workload key path -> value, e.g. "
                        "{duration: 4s}, got %s", path, ynode_kind_text(v));
        return -1;
    }
    if (v->n > SWEEP_MAX_SETS) {
        ydiag_at(dg, v, "%s: at most %d overrides", path, SWEEP_MAX_SETS);
        return -1;
    }
    s->sets = xcalloc(v->n + 1, sizeof(*s->sets));
    for (size_t i = 0; i < v->n; i++) {
        if (!key_ok(v->keys[i]->text)) {
            ydiag_at(dg, v->keys[i], "%s: '%s' is not a workload key path", path,
                     v->keys[i]->text);
            return -1;
        }
        struct strbuf sb = STRBUF_INIT;
        sb_printf(&sb, "%s=", v->keys[i]->text);
        flow_text(v->vals[i], &sb);
        s->sets[s->nsets++] = sb_steal(&sb);
    }
    return 0;
}

static int parse_axes(struct sweep *s, const struct ynode *v, const struct ynode *where,
                      const char *path, struct ydiag *dg)
{
    if (!v || ynode_is_null(v)) {
        ydiag_at(dg, v ? v : where, "%s: a sweep needs axes, e.g. axes: {lock.ttl: [100ms, 200ms, "
                                    "400ms]}", path);
        return -1;
    }
    if (v->kind != YN_MAP || v->n == 0) {
        ydiag_at(dg, v, "%s: expected a mapping of workload key path -> list of values, got %s",
                 path, v->kind == YN_MAP ? "an empty mapping" : ynode_kind_text(v));
        return -1;
    }
    if (v->n > SWEEP_MAX_AXES) {
        ydiag_at(dg, v, "%s: at most %d axes", path, SWEEP_MAX_AXES);
        return -1;
    }
    s->axes = xcalloc(v->n, sizeof(*s->axes));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *k = v->keys[i], *list = v->vals[i];
        if (!key_ok(k->text)) {
            ydiag_at(dg, k, "%s: '%s' is not a workload key path", path, k->text);
            bad = 1;
            continue;
        }
        if (list->kind != YN_SEQ || list->n == 0) {
            ydiag_at(dg, list, "%s.%s: expected a non-empty list of values, e.g. [100ms, 200ms], "
                               "got %s", path, k->text,
                     list->kind == YN_SEQ ? "an empty list" : ynode_kind_text(list));
            bad = 1;
            continue;
        }
        struct sweep_axis *a = &s->axes[s->naxes++];
        a->key = xstrdup(k->text);
        a->full = xcalloc(list->n, sizeof(*a->full));
        a->values = xcalloc(list->n, sizeof(*a->values));
        size_t klen = strlen(k->text);
        for (size_t j = 0; j < list->n; j++) {
            struct strbuf sb = STRBUF_INIT;
            sb_printf(&sb, "%s=", k->text);
            flow_text(list->vals[j], &sb);
            for (int p = 0; p < a->nvalues; p++)
                if (strcmp(a->values[p], sb_cstr(&sb) + klen + 1) == 0) {
                    ydiag_at(dg, list->vals[j], "%s.%s: value '%s' is listed twice", path,
                             k->text, sb_cstr(&sb) + klen + 1);
                    bad = 1;
                }
            a->full[a->nvalues] = sb_steal(&sb);
            a->values[a->nvalues] = a->full[a->nvalues] + klen + 1;
            a->nvalues++;
        }
    }
    return bad ? -1 : 0;
}

static int parse_custom(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                        const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct loader *L = ctx;
    (void)base;
    if (strcmp(d->name, "set") == 0)
        return parse_set(L->s, v, path, dg);
    return parse_axes(L->s, v, where, path, dg);
}

static void check_entry(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                        const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct loader *L = ctx;
    struct sweep *s = L->s;
    (void)base;
    if (strcmp(d->name, "sweep") == 0) {
        if (!s->name)
            ydiag_at(dg, where, "a sweep file needs 'sweep: NAME' (it marks the file as a sweep)");
        else if (!workload_valid_name(s->name))
            ydiag_at(dg, v, "sweep: '%s' is not a valid name; use 1-64 characters from A-Z a-z "
                            "0-9 . _ - not starting with '.'", s->name);
    } else if (strcmp(d->name, "workload") == 0) {
        if (!s->workload || !*s->workload)
            ydiag_at(dg, v ? v : where, "a sweep file needs 'workload: BASE' (a workload file or a "
                                        "bundled name)");
    } else if (strcmp(d->name, "seed") == 0) {
        s->seed_given = v != NULL;
    } else if (strcmp(d->name, "formats") == 0) {
        unsigned f;
        char why[160];
        if (reports_parse_formats(s->formats, &f, why, sizeof(why)) < 0)
            ydiag_at(dg, v, "%s: %s", path, why);
    }
}

/* ---- loading ------------------------------------------------------------------ */

static int read_file(const char *path, char **buf, size_t *len, struct ydiag *dg)
{
    /* O_NONBLOCK: a FIFO nobody writes to must not hang the open (it reads
     * as empty); reads block again once it is open (docs/reliability.md) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        ydiag_file(dg, LS_EIO, "cannot read: %s", strerror(errno));
        return LS_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        ydiag_file(dg, LS_EIO, "cannot read: %s", strerror(EISDIR));
        return LS_EIO;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    *buf = xcalloc(1, YAML_MAX_FILE + 2);
    *len = 0;
    for (;;) {
        ssize_t r = read(fd, *buf + *len, YAML_MAX_FILE + 1 - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            ydiag_file(dg, LS_EIO, "cannot read: %s", strerror(e));
            return LS_EIO;
        }
        if (r == 0)
            break;
        *len += (size_t)r;
        if (*len > YAML_MAX_FILE) {
            close(fd);
            ydiag_file(dg, LS_EWORKLOAD, "file is too large (over %d bytes)", YAML_MAX_FILE);
            return LS_EWORKLOAD;
        }
    }
    close(fd);
    return 0;
}

/* The base workload: relative to the sweep file's directory, as given, or
 * a bundled name (resolve). Returns a malloc'd path. */
static char *resolve_base(const char *file, const char *wl, sweep_resolver resolve)
{
    char buf[PATH_MAX + 64];
    struct stat st;
    if (wl[0] != '/') {
        const char *slash = strrchr(file, '/');
        if (slash) {
            snprintf(buf, sizeof(buf), "%.*s/%s", (int)(slash - file), file, wl);
            if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
                char real[PATH_MAX];
                return xstrdup(realpath(buf, real) ? real : buf);
            }
        }
    }
    if (stat(wl, &st) == 0 && S_ISREG(st.st_mode)) {
        char real[PATH_MAX];
        return xstrdup(realpath(wl, real) ? real : wl);
    }
    const char *p = resolve ? resolve(wl, buf, sizeof(buf)) : wl;
    char real[PATH_MAX];
    if (stat(p, &st) == 0 && realpath(p, real))
        return xstrdup(real);
    return xstrdup(p); /* the loader reports it missing */
}

/* Directory-name text of a value: A-Z a-z 0-9 . _ kept, runs of anything
 * else one '-'. */
static void label_part(const char *v, struct strbuf *sb)
{
    int dash = 0;
    for (; *v; v++) {
        char c = *v;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '_') {
            if (dash && sb->len && sb->buf[sb->len - 1] != '_')
                sb_putc(sb, '-');
            sb_putc(sb, c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
}

static void expand(struct sweep *s)
{
    int64_t n = s->repeats;
    for (int a = 0; a < s->naxes; a++)
        n *= s->axes[a].nvalues;
    s->ncells = (int)n;
    s->cells = xcalloc((size_t)n, sizeof(*s->cells));
    for (int i = 0; i < s->ncells; i++) {
        struct sweep_cell *c = &s->cells[i];
        c->index = i;
        c->repeat = (int)(i % s->repeats);
        c->seed = s->seed + (uint64_t)c->repeat;
        c->vi = xcalloc((size_t)s->naxes + 1, sizeof(*c->vi));
        int64_t rest = i / s->repeats;
        for (int a = s->naxes - 1; a >= 0; a--) {
            c->vi[a] = (int)(rest % s->axes[a].nvalues);
            rest /= s->axes[a].nvalues;
        }
        struct strbuf lab = STRBUF_INIT;
        for (int a = 0; a < s->naxes; a++) {
            if (a)
                sb_putc(&lab, '_');
            label_part(s->axes[a].values[c->vi[a]], &lab);
        }
        snprintf(c->name, sizeof(c->name), "%03d-%.100s-r%d", i, sb_cstr(&lab), c->repeat);
        sb_free(&lab);
        c->exit_code = -1;
    }
}

int sweep_cell_sets(const struct sweep *s, const struct sweep_cell *c, const char **sets,
                    int max, char *seedbuf, size_t seedlen)
{
    int n = 0;
    for (int i = 0; i < s->nsets && n < max; i++)
        sets[n++] = s->sets[i];
    for (int a = 0; a < s->naxes && n < max; a++)
        sets[n++] = s->axes[a].full[c->vi[a]];
    snprintf(seedbuf, seedlen, "seed=%llu", (unsigned long long)c->seed);
    if (n < max)
        sets[n++] = seedbuf;
    return n;
}

/* Load every cell's workload; the first cell that does not load is
 * reported in full (its errors name the --set that caused them). Without
 * a `seed:`, the repeats start from the base workload's own seed. */
static int validate_cells(struct sweep *s, FILE *errlog, struct ls_err *err)
{
    const char *sets[SWEEP_MAX_SETS + SWEEP_MAX_AXES + 2];
    char seedbuf[64];
    if (!s->seed_given) {
        struct workload *w = NULL;
        struct ls_err e = {0};
        int rc = workload_load(s->base, (const char *const *)s->sets, s->nsets, &w, errlog, &e);
        if (rc < 0)
            return ls_err_set(err, rc, "%s: base workload: %s", s->file, e.msg);
        s->seed = w->seed;
        workload_free(w);
        for (int k = 0; k < s->ncells; k++)
            s->cells[k].seed = s->seed + (uint64_t)s->cells[k].repeat;
    }
    int bad = 0;
    for (int i = 0; i < s->ncells; i++) {
        struct sweep_cell *c = &s->cells[i];
        int n = sweep_cell_sets(s, c, sets, (int)(sizeof(sets) / sizeof(sets[0])), seedbuf,
                                sizeof(seedbuf));
        struct workload *w = NULL;
        struct ls_err e = {0};
        int rc = workload_load(s->base, sets, n, &w, bad ? NULL : errlog, &e);
        if (rc < 0) {
            if (!bad)
                ls_err_set(err, rc, "%s: cell %s: %s", s->file, c->name, e.msg);
            bad++;
            continue;
        }
        c->planned_ns = w->duration;
        workload_free(w);
    }
    if (bad && errlog)
        fprintf(errlog, "lockstorm: %s: %d of %d cells do not load (the first is shown)\n",
                s->file, bad, s->ncells);
    return bad ? (err->code ? err->code : LS_EWORKLOAD) : 0;
}

int sweep_load(const char *path, sweep_resolver resolve, struct sweep **out, FILE *errlog,
               struct ls_err *err)
{
    struct ydiag dg;
    struct ynode *root = NULL;
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    ydiag_init(&dg, path, errlog, err);
    struct sweep *s = xcalloc(1, sizeof(*s));
    s->file = xstrdup(path);
    int rc = read_file(path, &buf, &len, &dg);
    if (rc < 0)
        goto done;
    if (ytree_parse(buf, len, &root, &dg) != 0)
        goto done;
    if (!root || root->kind != YN_MAP) {
        ydiag_pos(&dg, 1, 1, "expected a mapping of sweep keys (sweep, workload, axes, ...)");
        goto done;
    }
    struct loader L = {s};
    struct opt_hooks h = {&L, parse_custom, check_entry, NULL, NULL, NULL};
    struct opt_scope sc = {sweep_tab, s};
    opt_load_map(&sc, 1, root, root, "", &h, &dg);
    if (dg.count)
        goto done;
    int64_t n = s->repeats;
    for (int a = 0; a < s->naxes; a++)
        n *= s->axes[a].nvalues;
    if (n > SWEEP_MAX_CELLS) {
        ydiag_at(&dg, ymap_get(root, "axes"), "axes: %lld cells (values multiplied, times "
                 "repeats); at most %d", (long long)n, SWEEP_MAX_CELLS);
        goto done;
    }
    if (!strstr(s->formats, "json") && !strstr(s->formats, "all")) {
        struct strbuf f = STRBUF_INIT;
        sb_printf(&f, "json,%s", s->formats);
        free(s->formats);
        s->formats = sb_steal(&f);
    }
    s->base = resolve_base(path, s->workload, resolve);
    expand(s);
done:
    ynode_free(root);
    free(buf);
    ydiag_finish(&dg);
    if (dg.count) {
        sweep_free(s);
        return dg.first_code ? dg.first_code : LS_EWORKLOAD;
    }
    rc = validate_cells(s, errlog, err);
    if (rc < 0) {
        sweep_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void sweep_free(struct sweep *s)
{
    if (!s)
        return;
    for (int a = 0; a < s->naxes; a++) {
        struct sweep_axis *ax = &s->axes[a];
        for (int j = 0; j < ax->nvalues; j++)
            free(ax->full[j]);
        free(ax->full);
        free(ax->values);
        free(ax->key);
    }
    free(s->axes);
    for (int i = 0; i < s->nsets; i++)
        free(s->sets[i]);
    free(s->sets);
    for (int i = 0; i < s->ncells; i++)
        free(s->cells[i].vi);
    free(s->cells);
    opt_free(sweep_tab, s);
    free(s->file);
    free(s->base);
    free(s);
}

int sweep_parallelism(int want, int ncells)
{
    int cores = 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        cores = CPU_COUNT(&set);
    else if (sysconf(_SC_NPROCESSORS_ONLN) > 0)
        cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int n = want > 0 ? (want < cores ? want : cores) : (cores / 2 > 1 ? cores / 2 : 1);
    if (ncells > 0 && n > ncells)
        n = ncells;
    return n;
}

int sweep_text_is_sweep(const char *text, size_t len, char *desc, size_t desclen)
{
    struct ydiag dg;
    ydiag_init(&dg, "<text>", NULL, NULL);
    struct ynode *root = NULL;
    int yes = 0;
    if (ytree_parse(text, len, &root, &dg) == 0 && root && root->kind == YN_MAP &&
        ymap_get(root, "sweep")) {
        yes = 1;
        const struct ynode *d = ymap_get(root, "description");
        if (desc && desclen)
            snprintf(desc, desclen, "%s", d && d->kind == YN_SCALAR ? d->text : "");
    }
    ynode_free(root);
    return yes;
}

int sweep_file_is_sweep(const char *path, char *desc, size_t desclen)
{
    struct ydiag dg;
    ydiag_init(&dg, path, NULL, NULL);
    char *buf = NULL;
    size_t len = 0;
    int yes = read_file(path, &buf, &len, &dg) == 0 && sweep_text_is_sweep(buf, len, desc, desclen);
    free(buf);
    return yes;
}
