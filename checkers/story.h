/*
 * story.h: violation stories. For a few violations the mutex checker
 * listed (one per class first, then one per incident), a narrated,
 * time-ordered account built from the holders' event logs and the fault
 * windows (faults.jsonl): grants, renewals, store ops accepted or rejected,
 * exits, releases, lease expiries, faults that touched the holders, the
 * overlap, and what it means. Nothing is hand-written: every sentence is
 * filled from records. Not a checker (it judges nothing); it annotates the
 * violations the mutex checker found.
 */
#ifndef LS_STORY_H
#define LS_STORY_H

#include "checkers/check.h"
#include "checkers/history.h"
#include "util/json.h"

/* Contract: for at most p->max_stories entries of res's "violations"
 * array, sets "story" (array of {t_ms, kind, text}, time ordered) and
 * "story_text" (one line, items joined by " · "). Which entries, in order
 * of preference: one per class listed, lock-broken first (the first
 * violation of the first incident of that class when it is of the class,
 * else the class's first violation); then each incident's first_violation
 * in incident order (when res has "incidents"); then the violations in
 * order. Reads h only; a holder whose hold cannot be found in its log gets
 * a story from the violation's own fields. Does nothing without
 * violations. */
/* Also, for the first listed anomaly of each class in
 * checks.mutex.anomalies (renewed-after-loss, lost-with-lease-left,
 * expired), its story the same way: the worker's grant, its last renewals,
 * the lease's end, the other holder's grant, the faults on the worker, the
 * anomaly and what it means. */
void check_stories(const struct history *h, const struct check_params *p, struct json *res);

#endif
