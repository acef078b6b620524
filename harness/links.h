/*
 * links.h: the link target of link faults (faults/link.c): the fault keys
 * workers / nodes / isolate / split that name which (worker, node) proxy
 * links a fault acts on. Loading (an options table of OPT_CUSTOM rows plus
 * the hooks that parse them, ranges checked against the workload being
 * loaded), cross-key rules and the resolved-workload echo. The short name
 * used in faults.jsonl and the resolution to concrete links at fault start
 * are run-time work: faults/link_target.h.
 */
#ifndef LS_LINKS_H
#define LS_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/options.h"
#include "harness/workload.h"
#include "util/json.h"

struct ynode;
struct ydiag;
struct strbuf;

/* The rows of the link keys (each OPT_CUSTOM, base = struct link_target). */
extern const struct opt_def link_target_tab[];

/* Fill h for opt_load_map over link_target_tab: w is the workload being
 * loaded (borrowed for the call); worker and node numbers are checked
 * against its workers.count and cluster.nodes, so those must be loaded. */
void link_target_hooks(struct opt_hooks *h, const struct workload *w);

/* Cross-key rules of one fault mapping item: isolate and split exclude the
 * other link keys; link keys need target links. Returns 0 or -1 (reported). */
int link_target_check(int target, const struct ynode *item, const char *path, struct ydiag *dg);

/* Echo: the link keys as YAML lines indented by indent, or into obj. Only
 * the keys that describe the target are written (isolate alone, split
 * alone, or workers and nodes), so the echo loads back to the same target. */
void link_target_yaml(const struct link_target *lt, int indent, struct strbuf *sb);
void link_target_json(const struct link_target *lt, struct json *obj);

/* At run time (the short name, resolution to links): faults/link_target.h. */

#endif
