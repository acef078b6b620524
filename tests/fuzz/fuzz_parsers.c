/*
 * fuzz_parsers.c: libFuzzer target for the number and duration parsers
 * every workload value and --set goes through: ls_parse_duration and the
 * options machinery's opt_parse_text for integers, unsigned seeds, doubles
 * and durations (ranges included). The first byte picks the parser, the
 * rest is the text. Properties: no crash or sanitizer report; a refusal
 * says why; a duration that parses formats (ls_format_duration) to text
 * that parses back to the same value.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/options.h"
#include "util/timeutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct vals {
    int64_t i;
    uint64_t u;
    double d;
    int64_t dur;
};

static const struct opt_def defs[] = {
    {"i", OPT_INT, offsetof(struct vals, i), NULL, -5, 1000000000, NULL, NULL, ""},
    {"u", OPT_U64, offsetof(struct vals, u), NULL, 0, 0, NULL, NULL, ""},
    {"d", OPT_DOUBLE, offsetof(struct vals, d), NULL, 0, 10, NULL, NULL, ""},
    {"dur", OPT_DURATION, offsetof(struct vals, dur), NULL, 0, 86400e9, NULL, NULL, ""},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return -1;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    unsigned pick = data[0] % 5;
    if (pick == 4) {
        int64_t ns = 0, back = 0;
        const char *why = NULL;
        if (ls_parse_duration(text, &ns, &why) == 0) {
            if (ns < 0)
                __builtin_trap();
            char buf[64];
            ls_format_duration(ns, buf, sizeof(buf));
            if (ls_parse_duration(buf, &back, &why) != 0 || back != ns)
                __builtin_trap(); /* the echo of a duration reads back exactly */
        } else if (!why || !*why) {
            __builtin_trap();
        }
    } else {
        struct vals v;
        memset(&v, 0, sizeof(v));
        char why[256] = "";
        if (opt_parse_text(&defs[pick], &v, text, why, sizeof(why)) != 0 && !why[0])
            __builtin_trap();
    }
    free(text);
    return 0;
}
