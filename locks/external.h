/*
 * external.h: the `external` lock implementation's options (external.c):
 * an adapter process per worker speaking docs/protocol.md. The command
 * and the adapter mapping are stored inline (fixed, documented sizes), so
 * the options struct needs no destructor beyond the options machinery's.
 */
#ifndef LS_EXTERNAL_H
#define LS_EXTERNAL_H

#include <stdint.h>

#include "locks/lock.h"

#define EXTERNAL_MAX_ARGS 64
#define EXTERNAL_COMMAND_MAX 4096   /* bytes of all argv strings, NULs included */
#define EXTERNAL_ADAPTER_MAX 4096   /* bytes of the adapter mapping as compact JSON */
#define RES_NAME_MAX LOCK_KEY_MAX   /* lock_key: "lockstorm:r<N>" by default */

struct external_options {
    char command[EXTERNAL_COMMAND_MAX]; /* argc strings, each NUL-terminated, back to back */
    int argc;
    char adapter[EXTERNAL_ADAPTER_MAX]; /* hello.options: a JSON object text */
    int64_t request_timeout;            /* ns */
    int64_t max_restarts;
};

extern const struct lock_ops lock_external;
/* The option hooks of `command` (an argv list) and of the mapping handed to
 * the adapter (any other OPT_CUSTOM key: it fills `adapter`), for an
 * options struct that begins with struct external_options (locks/record.c). */
extern const struct opt_hooks external_option_hooks;

#endif
