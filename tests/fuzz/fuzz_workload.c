/*
 * fuzz_workload.c: libFuzzer target for the workload loader (YAML text ->
 * tree -> options tables -> cross-field rules). Properties: no crash, leak,
 * hang or sanitizer report on any input; and a workload that loads echoes a
 * resolved YAML (workload_to_yaml) that loads again to the same echo
 * (workload.h: "loading it again gives the same workload"). Built only with
 * -DLS_FUZZ=ON (clang); run by scripts/fuzz.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return -1; /* the loader refuses > 1 MiB anyway; keep runs fast */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct workload *w = NULL;
    struct ls_err err = {0};
    if (workload_load_string("fuzz.yaml", text, NULL, 0, &w, NULL, &err) == 0) {
        struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
        workload_to_yaml(w, &a);
        struct workload *w2 = NULL;
        struct ls_err err2 = {0};
        if (workload_load_string("resolved.yaml", sb_cstr(&a), NULL, 0, &w2, NULL, &err2) != 0)
            __builtin_trap(); /* the resolved echo must load again */
        workload_to_yaml(w2, &b);
        if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
            __builtin_trap(); /* ... to the same workload */
        struct json *j = workload_to_json(w);
        json_free(j);
        workload_free(w2);
        sb_free(&a);
        sb_free(&b);
    }
    workload_free(w);
    free(text);
    return 0;
}
