/*
 * json.c: the JSON renderer: result.json and `--json` on stdout. The
 * document is the result model itself, pretty-printed with two-space
 * indentation and ending in a newline; member order is the model's
 * (format and verdict first). Nothing is added or computed here.
 */
#include "reports/result.h"

/* Contract: appends result as pretty JSON (indent 2) plus '\n' to sb. */
void render_json(const struct json *result, struct strbuf *sb)
{
    json_write(sb, result, 2);
    sb_putc(sb, '\n');
}
