/*
 * adapter_stats.h: the `adapter` section of result.json, built from the
 * files the external lock writes into a run directory
 * (adapters/worker-NNN[.eE].json, locks/external.c): what the adapter said
 * in its hello and every counter summed over workers and epochs. Not here:
 * the adapter process or protocol (locks/adapter.c).
 */
#ifndef LS_ADAPTER_STATS_H
#define LS_ADAPTER_STATS_H

#include "util/json.h"

/* The section for run directory dir (caller frees), or NULL when the run
 * used no adapter (no adapters/worker-NNN.json files). Unreadable files are listed in its
 * "warnings". */
struct json *adapter_stats_load(const char *dir);

#endif
