/*
 * fuzz_history.c: libFuzzer target for the JSONL history reader
 * (`lockstorm check --history`) and everything after it: the four checkers,
 * the result model and its text and JSON renderers, over whatever history
 * parses. Properties: no crash, leak, hang or sanitizer report (signed
 * overflow included: UBSan traps); a refused input has one line of error.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/history.h"
#include "reports/reports.h"
#include "reports/result.h"
#include "harness/verdict.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4200];

/* scripts/fuzz.sh points TMPDIR into the build directory */
static const char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t && strlen(t) < 4000 ? t : "/tmp";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return -1;
    if (!path[0])
        snprintf(path, sizeof(path), "%s/lsfuzz-history-%d.jsonl", tmpdir(), (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    struct history h;
    struct ls_err err = {0};
    if (history_load_jsonl(path, &h, &err) != 0) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap(); /* one line saying why */
        history_free(&h);
        return 0;
    }
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = result_build(&h, NULL, &p);
    struct strbuf sb = STRBUF_INIT;
    render_text(res, &sb);
    render_json(res, &sb);
    sb_free(&sb);
    json_free(res);
    history_free(&h);
    return 0;
}
