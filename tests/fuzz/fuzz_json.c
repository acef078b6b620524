/*
 * fuzz_json.c: libFuzzer target for util/json (the parser every JSONL line,
 * run.json and result.json goes through, and the writer). Properties: no
 * crash, leak or sanitizer report; a document that parses is written
 * compact, and that text parses again and is written identically (the
 * writer's output is always valid JSON and a fixed point).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return -1;
    struct json *v = NULL;
    char why[128];
    if (json_parse((const char *)data, size, &v, why, sizeof(why)) != 0)
        return 0;
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    json_write(&a, v, -1);
    struct json *v2 = NULL;
    if (json_parse(a.buf ? a.buf : "", a.len, &v2, why, sizeof(why)) != 0)
        __builtin_trap(); /* what we write must parse */
    json_write(&b, v2, -1);
    if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
        __builtin_trap(); /* and write back the same */
    struct strbuf c = STRBUF_INIT;
    json_write(&c, v, 2);
    struct json *v3 = json_clone(v);
    json_free(v3);
    sb_free(&a);
    sb_free(&b);
    sb_free(&c);
    json_free(v);
    json_free(v2);
    return 0;
}
