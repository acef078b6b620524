/*
 * fuzz_adapter.c: libFuzzer target for the external adapter protocol
 * reader (locks/adapter_proto.h): what an adapter process writes on its
 * stdout, fed to the line splitter in pieces whose sizes the input's first
 * byte picks, each complete line parsed as a message. Properties: no crash,
 * leak or sanitizer report; a refused line says why in one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "locks/adapter_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256 * 1024)
        return -1;
    size_t step = (size_t)data[0] % 17 + 1;
    data++;
    size--;
    struct aproto_lines l;
    aproto_lines_init(&l, 4096); /* small, so overlong lines are reached */
    for (size_t off = 0; off < size; off += step) {
        size_t n = size - off < step ? size - off : step;
        if (aproto_lines_feed(&l, (const char *)data + off, n) != 0)
            break;
        for (;;) {
            char *line = NULL;
            size_t len = 0;
            int r = aproto_lines_next(&l, &line, &len);
            if (r == 0)
                break;
            if (r < 0)
                continue; /* an overlong line, dropped and reported */
            struct amsg m;
            char why[256] = "";
            if (aproto_parse(line, len, &m, why, sizeof(why)) == 0)
                amsg_free(&m);
            else if (!why[0] || strchr(why, '\n'))
                __builtin_trap();
            free(line);
        }
    }
    aproto_lines_free(&l);
    return 0;
}
