/*
 * rmodel.h: reading the result model (reports/result.h) the way several
 * renderers need it: array lengths, which violation tells the story of a
 * class, which incident lists a violation. Lookups in a JSON tree only;
 * nothing here computes a figure (that is harness/verdict.c's).
 */
#ifndef LS_REPORTS_RMODEL_H
#define LS_REPORTS_RMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

/* The number of items of v when it is an array, else 0. */
size_t rm_len(const struct json *v);
/* The index in result r's "violations" of the first violation of class cls
 * ("lock-broken", "stale-holder") that carries a story, or -1. */
long rm_story_of(const struct json *r, const char *cls);
/* The id of the incident of result r that lists violation i (its first or
 * a listed one), or -1 (no incidents, or none lists it). */
int64_t rm_incident_of(const struct json *r, size_t i);
/* Append number v as the renderers show one: an integer as it is, else
 * with at most 3 decimals and no trailing zeros ("12.5", "0.125", "3"). */
struct strbuf;
void rm_put_num(struct strbuf *sb, const struct json *v);

#endif
