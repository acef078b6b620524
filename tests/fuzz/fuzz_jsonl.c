/*
 * fuzz_jsonl.c: libFuzzer target for the JSONL line parsers
 * (checkers/jlparse.c), differential: every line of the input goes through
 * the flat parser as the history loader calls it (jl_parse_shaped on the
 * rest of the input, which reads a line of the last line's shape up to its
 * '\n'; else jl_parse_line: the flat parser, its compact path or its
 * general one, else the tree parser) and through the tree parser alone,
 * each with its own parser state kept across the lines. Property: both
 * answer the same, the same record, worker and interned resource names, or
 * the same message; a line jl_parse_shaped takes ends where its '\n' is; no
 * crash or sanitizer report (the parsers read whole 16-byte blocks: ASan
 * sees any read past a line's end, or past the input's for
 * jl_parse_shaped, each copied to a buffer of its own length).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/jlparse.h"
#include "checkers/jlshape_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return -1;
    struct history h1, h2;
    memset(&h1, 0, sizeof(h1));
    memset(&h2, 0, sizeof(h2));
    struct ls_err e1 = {0, ""}, e2 = {0, ""};
    struct jl_parser p1, p2;
    jl_parser_init(&p1, &h1, "f.jsonl", &e1);
    jl_parser_init(&p2, &h2, "f.jsonl", &e2);
    char *all = malloc(size ? size : 1); /* exactly the input */
    if (!all)
        abort();
    memcpy(all, data, size);
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = (size_t)((nl ? nl : end) - s);
        char *line = malloc(len ? len : 1); /* exactly the line: a read past it is seen */
        if (!line)
            abort();
        memcpy(line, s, len);
        struct ev_rec a, b;
        int wa = -1, wb = -1;
        memset(&a, 0x5a, sizeof(a));
        memset(&b, 0xa5, sizeof(b));
        size_t n = jl_parse_shaped(&p1, all + (s - (const char *)data), (size_t)(end - s), &a,
                                   &wa);
        if (n && n != len)
            __builtin_trap(); /* a line taken that does not end at its '\n' */
        int ra = n ? 0 : jl_parse_line(&p1, line, len, 1, &a, &wa);
        int rb = jl_parse_tree(&p2, line, len, 1, &b, &wb);
        free(line);
        if (ra != rb || (ra && strcmp(e1.msg, e2.msg) != 0) ||
            (!ra && (memcmp(&a, &b, sizeof(a)) != 0 || wa != wb)))
            __builtin_trap(); /* the flat parser answered otherwise than the tree parser */
        s = nl ? nl + 1 : end;
    }
    if (h1.nres != h2.nres)
        __builtin_trap();
    for (int i = 0; i < h1.nres; i++)
        if (strcmp(h1.res_names[i], h2.res_names[i]) != 0)
            __builtin_trap();
    free(all);
    jl_parser_free(&p1);
    jl_parser_free(&p2);
    history_free(&h1);
    history_free(&h2);
    return 0;
}
