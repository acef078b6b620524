/*
 * exedir.h: find what ships beside the lockstorm binary. Bundled workloads,
 * adapters and the clock shim live at fixed places relative to the binary
 * (the build tree, or an install prefix: bin/ next to share/ and lib/), so
 * one lookup serves the build tree and an installed package alike.
 */
#ifndef LS_UTIL_EXEDIR_H
#define LS_UTIL_EXEDIR_H

#include <stddef.h>

/* Contract: tries each of rel[0..nrel) in order, appended to the directory
 * holding the running binary (each starts with '/'); the first that exists
 * as a directory (want_dir) or as a readable file (!want_dir) is resolved
 * with realpath into out (PATH_MAX bytes). Returns 1 when found, 0 when
 * none exists or the binary's path is unknown (out untouched). */
int exe_relative(const char *const *rel, size_t nrel, int want_dir, char *out);

#endif
