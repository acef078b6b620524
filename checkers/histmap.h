/*
 * histmap.h: history.c's side of checkers/histmap.c (not for checkers):
 * dropping the resident pages of mapped logs while loading them.
 */
#ifndef LS_HISTMAP_H
#define LS_HISTMAP_H

#include <stddef.h>

#include "checkers/history.h"

/* Contract: drop the resident pages of map's bytes [from, to) from this
 * process (see histmap.c). */
void histmap_drop_range(const void *map, size_t from, size_t to);

/* Contract: drop every resident page of f's mapping. */
void histmap_drop_log(const struct evlog_file *f);

/* Contract: drop the resident pages of every log h maps. */
void histmap_drop_logs(const struct history *h);

#endif
