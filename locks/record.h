/*
 * record.h: the `record` lock implementation's options (locks/record.c):
 * record mode, where each worker runs the user's own program, which locks
 * by itself and reports every step (docs/protocol.md, extension `record`).
 * The options begin with external's (command, the mapping handed to the
 * program), so they share external's option hooks.
 */
#ifndef LS_RECORD_H
#define LS_RECORD_H

#include <stdint.h>

#include "locks/external.h"
#include "locks/lock.h"

/* The most resources a record-mode hello lists (checked at load by
 * harness/workload_record.c, and again when a worker starts). */
#define RECORD_MAX_RES 200
#define RECORD_MAX_RES_TEXT "200"

struct record_options {
    struct external_options x; /* first: external_option_hooks fill command and program */
    int64_t hello_timeout;     /* ns */
    int64_t stop_grace;        /* ns: after stop, the wait for the program's `stopped` */
};

extern const struct lock_ops lock_record;

#endif
