/*
 * nemesis.h: the random nemesis (docs/faults.md "Schedule, nemesis and replay"). The workload's
 * nemesis section (kinds, interval, duration range, targets) is loaded and
 * echoed here for the workload loader; before a run it is expanded, from the
 * workload seed alone, into an ordinary list of fault specs (the same
 * struct fault_spec explicit faults use), written to RUN_DIR/nemesis.yaml
 * as a `faults:` list. `lockstorm run --replay RUN_DIR` loads that file
 * instead of drawing, so a recorded schedule replays under any seed. The
 * schedule is replayed, not the victims: `holder` still resolves at run time.
 */
#ifndef LS_NEMESIS_H
#define LS_NEMESIS_H

#include <stdint.h>
#include <stdio.h>

#include "harness/workload.h"
#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

/* rng_seed(seed, NEMESIS_STREAM) draws the schedule; no other draw uses it. */
#define NEMESIS_STREAM 0x6e656d65ULL /* "neme" */
/* File name of the drawn schedule inside a run directory. */
#define NEMESIS_FILE "nemesis.yaml"

struct ynode;
struct ydiag;

/* ---- loader side (harness/workload.c) ---- */

/* Parse the `nemesis:` value v (NULL or null: no nemesis) into w->nemesis,
 * validating kinds, ranges and every target against w (workers, nodes,
 * resources, quiet_tail: parsed before it). where: the key to blame when v
 * is NULL. Returns 0, or -1 after reporting to dg. */
int nemesis_parse(struct workload *w, const struct ynode *v, const struct ynode *where,
                  const char *path, struct ydiag *dg);
/* Free what w->nemesis owns and clear it. */
void nemesis_free(struct nemesis_spec *n);
/* Echo: what follows "nemesis:" in the resolved YAML (" ~\n", or "\n" and
 * lines indented by indent + 2), and the JSON form (null when disabled;
 * caller frees). Loading the echo gives the same nemesis. */
void nemesis_echo_yaml(const struct nemesis_spec *n, int indent, struct strbuf *sb);
struct json *nemesis_echo_json(const struct nemesis_spec *n);
/* Markdown reference section for docs/workload-reference.md. */
void nemesis_reference(struct strbuf *sb);

/* ---- run side ---- */

/* Draw w's nemesis into *out (*n specs, sorted by start; caller frees with
 * nemesis_specs_free). Deterministic: the same workload (seed included)
 * always gives the same list. No nemesis: *out = NULL, *n = 0. Returns 0 or
 * LS_EWORKLOAD (err set) when a drawn fault does not load, which the
 * loader's validation should make impossible. */
int nemesis_expand(const struct workload *w, struct fault_spec **out, int *n, struct ls_err *err);
/* Load a `faults:` list file (RUN_DIR/nemesis.yaml) against w, with the
 * loader's own rules; errors go to errlog as "FILE:LINE:COL: ...". Returns
 * 0 (*out owned by the caller), LS_EIO when unreadable, LS_EWORKLOAD. */
int nemesis_load(const struct workload *w, const char *path, struct fault_spec **out, int *n,
                 FILE *errlog, struct ls_err *err);
/* The specs as a YAML document `faults: [...]` that nemesis_load reads back
 * to the same specs; comment (may be NULL) becomes leading "# " lines. */
void nemesis_to_yaml(const struct fault_spec *fs, int n, const char *comment, struct strbuf *sb);
void nemesis_specs_free(struct fault_spec *fs, int n);

/* What the run uses in place of w's nemesis: with replay_dir, the recorded
 * REPLAY_DIR/nemesis.yaml (required when w has a nemesis; an absent file
 * otherwise means an empty list), else nemesis_expand(w). Nothing is
 * started. Returns 0, LS_EWORKLOAD or LS_EIO with err set (errors of the
 * file also go to errlog). */
int nemesis_plan(const struct workload *w, const char *replay_dir, struct fault_spec **out,
                 int *n, FILE *errlog, struct ls_err *err);

/* Write RUN_DIR/nemesis.yaml when w has a nemesis or specs were replayed
 * (n > 0 or replay_dir): the specs, with a comment saying where they came
 * from. Returns 0 or LS_EIO (err set). */
int nemesis_write(const char *rundir, const struct workload *w, const char *replay_dir,
                  const struct fault_spec *fs, int n, struct ls_err *err);

#endif
