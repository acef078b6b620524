/*
 * workload_int.h: what the parts of the workload loader share, and nothing
 * else includes: the loader state, the time units of the options tables,
 * and the entry points of the split-out parts (harness/workload_faults.c:
 * the faults[] list; harness/workload_expect.c: the expect: block). The
 * public interface stays harness/workload.h.
 */
#ifndef LS_WORKLOAD_INT_H
#define LS_WORKLOAD_INT_H

#include "model/options.h"
#include "harness/workload.h"
#include "model/yamltree.h"
#include "util/json.h"
#include "util/strbuf.h"

#define NS_MS 1e6
#define NS_S 1e9
#define NS_MIN 60e9
#define NS_H 3600e9

/* The state of one load: the workload being filled, the YAML root (after
 * the --set overrides), and the faults[] entries left out of this load
 * (drop[i] != 0: entry i is not parsed; a compare variant's n/a faults). */
struct loader {
    struct workload *w;
    const struct ynode *root;
    const unsigned char *drop;
    size_t ndrop;
    const char *context;          /* the compare variant loaded (for its errors), or NULL */
};

/* An options table with no keys. */
static inline int wl_table_empty(const struct opt_def *tab)
{
    return !tab || !tab->name;
}

/* ---- workload_faults.c ---- */
/* The faults: key (a list of fault mappings) into L->w->faults. Returns 0
 * or -1 (errors reported to dg). */
int wl_parse_faults(struct loader *L, const struct ynode *v, const char *path, struct ydiag *dg);
void wl_clear_faults(struct workload *w);
/* Cross-field rules of quiet_tail once everything is loaded. */
void wl_check_quiet_tail(struct loader *L, struct ydiag *dg);
void wl_check_fault_budget(struct loader *L, struct ydiag *dg);
/* The faults list as JSON (caller frees). */
struct json *wl_faults_json(const struct workload *w);
/* The "faults" section of docs/workload-reference.md. */
void wl_faults_reference(struct strbuf *sb);

/* ---- workload_expect.c ---- */
/* The expect: key into L->w->expects. Returns 0 or -1 (errors reported). */
int wl_parse_expect(struct loader *L, const struct ynode *v, const char *path, struct ydiag *dg);
void wl_clear_expects(struct workload *w);
/* Echo: what follows "expect:" (" {}\n" or the entries, indented), JSON. */
void wl_expects_yaml(const struct workload *w, int indent, struct strbuf *sb);
struct json *wl_expects_json(const struct workload *w);
/* The "expect" section of docs/workload-reference.md. */
void wl_expect_reference(struct strbuf *sb);

#endif
