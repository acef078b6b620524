/*
 * story.h: violation stories. For the first few violations the mutex
 * checker listed, a narrated, time-ordered account built from the holders'
 * event logs and the fault windows (faults.jsonl): grants, renewals, store
 * ops accepted or rejected, exits, releases, lease expiries, faults that
 * touched the holders, the overlap, and what it means. Nothing is
 * hand-written: every sentence is filled from records. Not a checker (it
 * judges nothing); it annotates the violations the mutex checker found.
 */
#ifndef LS_STORY_H
#define LS_STORY_H

#include "checkers/check.h"
#include "checkers/history.h"
#include "util/json.h"

/* Contract: for p->max_stories entries of res's "violations" array, sets
 * "story" (array of {t_ms, kind, text}, time ordered) and "story_text" (one
 * line, items joined by " · "). The entries are the first ones, except that
 * when a class (stale-holder, lock-broken) is listed but has no story among
 * them, its first violation takes the last slot (with at least 2 slots).
 * Reads h only; a holder whose hold cannot be found in its log gets a story
 * from the violation's own fields. Does nothing without violations. */
void check_stories(const struct history *h, const struct check_params *p, struct json *res);

#endif
