/*
 * json.c: the JSON renderer: result.json and `--json` on stdout. The
 * document is the result model itself, pretty-printed with two-space
 * indentation and ending in a newline; member order is the model's
 * (format and verdict first). An array of scalars (a fault id list, one
 * row of a chart series) stays on one line, so the series tables read as
 * tables. Nothing is added or computed here.
 */
#include "reports/result.h"

#include <string.h>

static int is_scalar(const struct json *v)
{
    return v->type != JSON_ARR && v->type != JSON_OBJ;
}

static int scalar_array(const struct json *v)
{
    if (v->type != JSON_ARR)
        return 0;
    for (size_t i = 0; i < v->n; i++)
        if (!is_scalar(v->kids[i]))
            return 0;
    return 1;
}

static void indent_to(struct strbuf *sb, int level)
{
    sb_putc(sb, '\n');
    for (int i = 0; i < 2 * level; i++)
        sb_putc(sb, ' ');
}

static void write_pretty(struct strbuf *sb, const struct json *v, int level)
{
    if (is_scalar(v)) {
        json_write(sb, v, -1);
        return;
    }
    int obj = v->type == JSON_OBJ;
    if (v->n == 0) {
        sb_puts(sb, obj ? "{}" : "[]");
        return;
    }
    if (scalar_array(v)) {
        sb_putc(sb, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sb_puts(sb, ", ");
            json_write(sb, v->kids[i], -1);
        }
        sb_putc(sb, ']');
        return;
    }
    sb_putc(sb, obj ? '{' : '[');
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            sb_putc(sb, ',');
        indent_to(sb, level + 1);
        if (obj) {
            sb_json_str(sb, v->keys[i], strlen(v->keys[i]));
            sb_puts(sb, ": ");
        }
        write_pretty(sb, v->kids[i], level + 1);
    }
    indent_to(sb, level);
    sb_putc(sb, obj ? '}' : ']');
}

/* Contract: appends result as pretty JSON (indent 2, scalar arrays on one
 * line) plus '\n' to sb. */
void render_json(const struct json *result, struct strbuf *sb)
{
    write_pretty(sb, result, 0);
    sb_putc(sb, '\n');
}
