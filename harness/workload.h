/*
 * workload.h: the workload loader. A workload (model/workload.h) is loaded
 * from YAML by the options tables in workload.c, with --set overrides
 * applied before validation, every default filled in, and every error
 * reported as "FILE:LINE:COL: what is wrong".
 */
#ifndef LS_WORKLOAD_H
#define LS_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"
#include "model/options.h"
#include "model/workload.h"

/* Contract: 1 when s can name a workload, a compare variant or a sweep (it
 * becomes a directory name): 1-64 of A-Z a-z 0-9 . _ -, no leading dot. */
int workload_valid_name(const char *s);

/* workers.resources: at most this many (a count or a list of names). */
#define WL_RES_MAX 4096
#define WL_RES_MAX_TEXT "4096"
/* Contract: cfg's key fields (key_prefix, res_names, nres) from w, borrowed
 * from w: what every lock implementation names its keys with (lock_key). */
struct lock_config;
void workload_lock_keys(const struct workload *w, struct lock_config *cfg);

/* Load and validate a workload file. sets[] are "key.path=value" overrides
 * applied on top of the file before validation. On success *out is a new
 * workload (workload_free). On failure returns LS_EWORKLOAD (or LS_EINPUT /
 * LS_EIO for an unreadable file), *out is NULL, err->msg holds the first
 * error as "FILE:LINE:COL: what is wrong", and every further error line has
 * been written to errlog when errlog is not NULL. */
int workload_load(const char *path, const char *const *sets, int nsets,
                  struct workload **out, FILE *errlog, struct ls_err *err);
/* workload_load for one variant of a compare: block (harness/matrix.c),
 * from base's text (never re-read from its file) with sets applied:
 * the faults[] entries i with drop[i] != 0 (i < ndrop) are left out, not
 * parsed; context (or NULL) ends a fault kind's validate error, e.g. the
 * way to map the fault out of the variant. */
int workload_load_variant(const struct workload *base, const char *const *sets, int nsets,
                          const unsigned char *drop, size_t ndrop, const char *context,
                          struct workload **out, FILE *errlog, struct ls_err *err);
/* The two halves of workload_load, for a caller that looks at the text
 * before loading it (`run` refuses a sweep file): read path once (bounded;
 * a FIFO nobody writes to reads as empty; errors as workload_load's) into
 * *text (caller frees; len bytes, NUL-terminated), then load that text as
 * the file path. A pipe (/dev/stdin) is never read twice. */
int workload_read(const char *path, char **text, size_t *len, FILE *errlog, struct ls_err *err);
int workload_load_text(const char *path, const char *text, size_t len, const char *const *sets,
                       int nsets, struct workload **out, FILE *errlog, struct ls_err *err);
/* Same from a string (tests); name is used in messages. */
int workload_load_string(const char *name, const char *yaml, const char *const *sets, int nsets,
                         struct workload **out, FILE *errlog, struct ls_err *err);
void workload_free(struct workload *w);

/* The fully resolved workload (every default filled in) as a JSON tree
 * (caller frees) and as YAML text appended to sb (written to the run
 * directory as workload.yaml; loading it again gives the same workload). */
struct json *workload_to_json(const struct workload *w);
void workload_to_yaml(const struct workload *w, struct strbuf *sb);

/* Markdown reference of every section, key, type, default, range and help,
 * generated from the options tables (docs/workload-reference.md). */
void workload_write_reference(struct strbuf *sb);

/* For harness/nemesis.c: one faults[] item (a mapping node) parsed and
 * validated against w exactly as the loader does (it only reads w); errors
 * go to dg under path. Returns 0 or -1; either way free fs with
 * workload_fault_free. */
struct ydiag;
/* How many occurrences fs starts in w's run (starts at at + k * every
 * before the quiet tail, at most count), and all explicit faults' together:
 * the schedule's bound (faults/fault.h FAULT_MAX_OCCURRENCES) counts them. */
int64_t workload_fault_occurrences(const struct workload *w, const struct fault_spec *fs);
int64_t workload_explicit_occurrences(const struct workload *w);
int workload_parse_fault(const struct workload *w, const struct ynode *item, struct fault_spec *fs,
                         const char *path, struct ydiag *dg);
void workload_fault_free(struct fault_spec *fs);
/* 1 when fault kind ops aimed at target (enum fault_target) needs process
 * control of the lock nodes (pause, kill, stop or stall a node; anything
 * not aimed at a worker), which a backend without BACKEND_CAP_NODE_CONTROL
 * (topology external) does not have. Kinds flagged FAULT_PROXY_ONLY (the
 * link faults) act in the harness's proxy and are always available. */
int workload_fault_needs_control(const struct fault_ops *ops, int target);
/* The YAML echo of a faults list: one "- key: value" item per spec, items
 * indented by indent spaces. */
void workload_faults_to_yaml(const struct fault_spec *fs, int n, int indent, struct strbuf *sb);

#endif
